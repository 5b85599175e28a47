//! Plays one seeded match with random legal moves and prints every hand's
//! score: `cargo run -p spades-engine --example demo -- [seed]`.

use spades_engine::{Action, Legal, Match, Outcome, Rules, Seat, Team};

fn main() {
    let seed: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2024);
    let mut m = Match::new(Rules::default(), seed);
    let mut x = seed | 1;
    let mut pick = |n: u32| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (((x >> 32) * u64::from(n)) >> 32) as u32
    };
    println!("match seed {seed}, rules: first to 500, nil ±100, 10 bags cost 100");
    let first = m.view(Some(Seat::North));
    println!("hand 1, dealer {}; North holds {}", first.dealer, first.hand.unwrap_or_default());
    let mut shown = 0;
    while let Some(seat) = m.turn() {
        let action = match m.legal_moves() {
            Legal::Bid { min, .. } => Action::Bid((1 + pick(4) as u8).max(min)),
            Legal::Play { cards } => {
                Action::Play(cards.nth(pick(cards.len())).unwrap_or_else(|| unreachable!()))
            }
            Legal::None => break,
        };
        if let Err(e) = m.apply(seat, action) {
            panic!("a legal move was refused: {e}");
        }
        for r in &m.results()[shown..] {
            let t = |team: Team| {
                let s = &r.teams[team];
                format!(
                    "{team}: bid {:>2} took {:>2} {:>+5} (bags {:>2}, total {:>4})",
                    s.contract, s.counted_tricks, s.hand_points, s.bag_count, s.score
                )
            };
            println!(
                "hand {:>2}  bids {:?}  {}  |  {}",
                r.hand_number,
                r.bids.0,
                t(Team::NorthSouth),
                t(Team::EastWest)
            );
        }
        shown = m.results().len();
    }
    if let Some(end) = m.result() {
        match end.outcome {
            Outcome::Win(team) => {
                println!("{team} win {:?} after {} hands ({:?})", end.scores.0, end.hands_played, end.reason)
            }
            Outcome::Draw => println!("draw at {:?} after {} hands", end.scores.0, end.hands_played),
        }
    }
    println!("{} moves; replaying them rebuilds the same match: {}", m.moves().len(), {
        let again = Match::replay(*m.rules(), seed, m.moves().iter().copied());
        again.map(|a| a == m).unwrap_or(false)
    });
}
