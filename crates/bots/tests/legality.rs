//! Bots only ever make legal moves, under every table option, including
//! when they take over a seat in the middle of a hand; and they never panic
//! on views they were not meant to act on.

use spades_bots::{Budget, Strength, choose, decide, decide_with};
use spades_engine::{
    Action, BagPenalty, FailedNil, Legal, Match, MatchEnd, NilRule, Rules, Seat, SpadesLead,
};

/// A few rule sets covering every option the bots care about.
fn rule_sets() -> Vec<Rules> {
    let d = Rules::default();
    vec![
        d,
        Rules { nil: NilRule::Off, ..d },
        Rules { nil: NilRule::Fifty, failed_nil: FailedNil::CountForPartner, ..d },
        Rules { spades_lead: SpadesLead::AnyTime, bag_penalty: BagPenalty::FiveForFifty, ..d },
        Rules { bag_penalty: BagPenalty::Off, mercy: true, match_end: MatchEnd::Hands(5), ..d },
    ]
}

/// Plays hands of `m` with the strength chosen per (seat, ply) until
/// `hands` hands are finished or the match ends. Panics on an illegal move.
fn play(m: &mut Match, hands: usize, pick: impl Fn(Seat, usize) -> Strength, budget: &Budget, seed: u64) {
    let mut ply = 0usize;
    while let Some(seat) = m.turn() {
        if m.results().len() >= hands {
            break;
        }
        let view = m.view(Some(seat));
        let strength = pick(seat, ply);
        let action = decide_with(strength, budget, &view, seed ^ ply as u64)
            .unwrap_or_else(|| panic!("{strength} had no move for {seat}"));
        assert!(view.legal.allows(action), "{strength} chose {action:?}, not in {:?}", view.legal);
        if let Err(e) = m.apply(seat, action) {
            panic!("{strength} at {seat} made an illegal move {action:?}: {e}");
        }
        ply += 1;
    }
}

#[test]
fn random_and_rule_bots_are_always_legal_over_thousands_of_hands() {
    let budget = Budget::DEFAULT.iterations_only();
    let mut hands = 0;
    for (r, rules) in rule_sets().into_iter().enumerate() {
        for seed in 0..30u64 {
            let mut m = Match::new(rules, seed * 31 + r as u64);
            // Mixed tables: the strength depends on the seat and changes
            // every few plies (takeovers in the middle of a hand).
            let pick = |seat: Seat, ply: usize| {
                if (usize::from(seat.index()) + ply / 7).is_multiple_of(3) {
                    Strength::Random
                } else {
                    Strength::Rule
                }
            };
            play(&mut m, 25, pick, &budget, seed);
            hands += m.results().len();
        }
    }
    assert!(hands >= 2000, "only {hands} hands played");
}

#[test]
fn search_bot_is_always_legal() {
    // A small, clock-free budget keeps this quick in a debug build.
    let budget = Budget { play_worlds: 3, bid_worlds: 2, time_limit: None, ..Budget::DEFAULT };
    let mut hands = 0;
    for (r, rules) in rule_sets().into_iter().enumerate() {
        for seed in 0..2u64 {
            let mut m = Match::new(rules, 1000 + seed * 7 + r as u64);
            let pick = |seat: Seat, ply: usize| {
                if (usize::from(seat.index()) + ply / 5).is_multiple_of(2) {
                    Strength::Search
                } else {
                    Strength::Rule
                }
            };
            play(&mut m, 2, pick, &budget, seed);
            hands += m.results().len();
        }
    }
    assert!(hands >= 20);
}

#[test]
fn default_budget_search_takes_over_mid_hand() {
    // Random play up to a point, then the default search bot takes every
    // seat: it needs nothing but the view.
    let mut m = Match::new(Rules::default(), 77);
    let mut ply = 0;
    while let Some(seat) = m.turn() {
        if !m.results().is_empty() {
            break;
        }
        let strength = if ply < 23 { Strength::Random } else { Strength::Search };
        let action = choose(strength, &m.view(Some(seat)), ply);
        m.apply(seat, action).expect("legal move");
        ply += 1;
    }
    assert_eq!(m.results().len(), 1);
}

#[test]
fn odd_views_get_a_legal_move_or_none() {
    let mut m = Match::new(Rules::default(), 5);
    // Bid, then play two cards.
    for _ in 0..6 {
        let seat = m.turn().unwrap();
        let action = choose(Strength::Rule, &m.view(Some(seat)), 0);
        m.apply(seat, action).unwrap();
    }
    let seat = m.turn().unwrap();
    let good = m.view(Some(seat));
    for strength in Strength::ALL {
        // A view whose counts do not add up (a bug upstream): still legal.
        let mut bad = good.clone();
        bad.cards_left.0 = [13, 13, 13, 13];
        let a = decide(strength, &bad, 1).unwrap();
        assert!(good.legal.allows(a), "{strength}: {a:?}");
        // No hand at all but a legal set: falls back to a legal card.
        let mut blind = good.clone();
        blind.hand = None;
        let a = decide(strength, &blind, 1).unwrap();
        assert!(good.legal.allows(a), "{strength}: {a:?}");
        // Spectator and idle seats: no move.
        assert_eq!(decide(strength, &m.view(None), 1), None);
        assert_eq!(decide(strength, &m.view(Some(seat.next())), 1), None);
    }
    // With nil off, no bot bids nil.
    let rules = Rules { nil: NilRule::Off, ..Rules::default() };
    for seed in 0..50 {
        let m = Match::new(rules, seed);
        let view = m.view(m.turn());
        assert_eq!(view.legal, Legal::Bid { min: 1, max: 13 });
        for strength in Strength::ALL {
            let budget = Budget { play_worlds: 4, bid_worlds: 4, time_limit: None, ..Budget::DEFAULT };
            let a = decide_with(strength, &budget, &view, seed).unwrap();
            assert_ne!(a, Action::Bid(0));
        }
    }
}
