//! Plays random hands as fast as it can and prints how many per second:
//! `cargo run --release -p spades-engine --example hands -- 1000000`.

use std::time::Instant;

use spades_engine::{Action, ByTeam, Events, Hand, HandResult, Legal, Rules, Seat, deal};

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let rules = Rules::default();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut pick = |n: u32| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (((x >> 32) * u64::from(n)) >> 32) as u32
    };
    let start = Instant::now();
    let mut points = 0i64;
    for seed in 0..n {
        // The dealer rotates; drawing it from the seed is once per match, not per hand.
        let dealer = Seat::ALL[(seed % 4) as usize];
        let Ok(mut hand) = Hand::new(rules, dealer, deal(seed, 1, dealer)) else { unreachable!() };
        let mut events = Events::new();
        while let Some(seat) = hand.turn() {
            let action = match hand.legal() {
                Legal::Bid { .. } => Action::Bid(1 + pick(5) as u8),
                Legal::Play { cards } => {
                    Action::Play(cards.nth(pick(cards.len())).unwrap_or_else(|| unreachable!()))
                }
                Legal::None => break,
            };
            events.clear();
            if let Err(e) = hand.apply(seat, action, &mut events) {
                panic!("{e}");
            }
        }
        let bids = hand.final_bids().unwrap_or_default();
        let r = HandResult::score(&rules, 1, dealer, bids, *hand.tricks_won(), ByTeam([(0, 0), (0, 0)]));
        points += i64::from(r.teams.0[0].hand_points);
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{n} random hands in {secs:.3} s: {:.0} hands/s, {:.3} µs per hand (checksum {points})",
        n as f64 / secs,
        secs * 1e6 / n as f64
    );
}
