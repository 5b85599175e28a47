//! A short duplicate tournament in the test suite: the rule bot must beat
//! random play by a wide margin, a bot against itself must net exactly zero
//! (the deals are rotated, so any dependence on the physical seat would
//! show), and the search bot must beat the rule bot even on a tiny budget.

use spades_bots::tournament::{Config, Contestant, run};
use spades_bots::{Budget, Strength};

fn contestant(strength: Strength, worlds: u32) -> Contestant {
    Contestant {
        strength,
        budget: Budget { play_worlds: worlds, bid_worlds: worlds, time_limit: None, ..Budget::DEFAULT },
    }
}

#[test]
fn rule_bot_beats_random_play_by_a_wide_margin() {
    let cfg = Config {
        threads: 2,
        ..Config::new(contestant(Strength::Rule, 1), contestant(Strength::Random, 1), 300, 4)
    };
    let r = run(&cfg).unwrap();
    assert!(
        r.margin.lo > 30.0,
        "rule vs random: {:+.1} [{:+.1}, {:+.1}]",
        r.margin.mean,
        r.margin.lo,
        r.margin.hi
    );
    assert!(r.margin_raw.lo > 30.0, "{:?}", r.margin_raw);
    assert_eq!((r.a_wins, r.b_wins), (8, 0), "the rule bot wins every match");
    // Sanity of the bookkeeping.
    assert_eq!(r.side_a.team_hands, 600);
    assert!(r.side_a.set_pct() < 10.0 && r.side_b.set_pct() > 25.0);
    assert_eq!(r.side_a.opponent_nils, 0, "random play never bids nil");
}

#[test]
fn a_bot_against_itself_nets_exactly_zero() {
    let cfg = Config::new(contestant(Strength::Rule, 1), contestant(Strength::Rule, 1), 200, 2);
    let r = run(&cfg).unwrap();
    assert_eq!(r.margin.mean, 0.0);
    assert_eq!(r.margin.sd, 0.0);
    assert_eq!((r.a_wins, r.b_wins), (2, 2));
    let s = contestant(Strength::Search, 2);
    let r = run(&Config::new(s, s, 4, 0)).unwrap();
    assert_eq!((r.margin.mean, r.margin.sd), (0.0, 0.0));
}

#[test]
fn search_bot_beats_the_rule_bot() {
    let cfg = Config {
        threads: 2,
        ..Config::new(contestant(Strength::Search, 20), contestant(Strength::Rule, 1), 30, 0)
    };
    let r = run(&cfg).unwrap();
    assert!(
        r.margin.mean > 10.0,
        "search vs rule: {:+.1} [{:+.1}, {:+.1}]",
        r.margin.mean,
        r.margin.lo,
        r.margin.hi
    );
}
