//! Runs every rules and scoring vector through the engine.
//!
//! `data/spades_vectors.json` is the shared oracle, copied unchanged;
//! `data/project_vectors.json` adds the project's own cases (nil switched
//! off, the 5-bag penalty, nil ±50).

use serde_json::Value;
use spades_engine::{
    Action, BagPenalty, BySeat, ByTeam, Card, CardSet, FailedNil, Hand, HandResult, Match, MatchEnd, NilRule,
    Outcome, PlayerLine, Rules, Seat, SpadesLead, Team, Trick, legal_cards, match_end, score_team,
};

fn rules(o: &Value) -> Rules {
    let nil = match &o["nil_value"] {
        Value::Number(n) if n.as_i64() == Some(100) => NilRule::Hundred,
        Value::Number(n) if n.as_i64() == Some(50) => NilRule::Fifty,
        Value::String(s) if s == "off" => NilRule::Off,
        other => panic!("unsupported nil_value {other}"),
    };
    let bag_penalty = match o["bag_penalty"].as_str() {
        Some("10_for_100") => BagPenalty::TenForHundred,
        Some("5_for_50") => BagPenalty::FiveForFifty,
        Some("off") => BagPenalty::Off,
        other => panic!("unsupported bag_penalty {other:?}"),
    };
    let failed_nil = match o["failed_nil_tricks_count_for_partner"].as_bool() {
        Some(true) => FailedNil::CountForPartner,
        _ => FailedNil::BagsOnly,
    };
    let spades_lead = match o["spades_lead"].as_str() {
        Some("any_time") => SpadesLead::AnyTime,
        Some("after_broken") | None => SpadesLead::AfterBroken,
        other => panic!("unsupported spades_lead {other:?}"),
    };
    let match_end = match (&o["target"], &o["fixed_hands"]) {
        (Value::Number(t), Value::Null) => MatchEnd::Target(t.as_i64().unwrap() as i32),
        (Value::Null, Value::Number(h)) => MatchEnd::Hands(h.as_u64().unwrap() as u16),
        (Value::Null, Value::Null) => MatchEnd::Target(500),
        other => panic!("unsupported match end {other:?}"),
    };
    let mercy = match &o["mercy"] {
        Value::Null => false,
        Value::Number(n) if n.as_i64() == Some(-200) => true,
        other => panic!("unsupported mercy {other}"),
    };
    Rules { match_end, nil, bag_penalty, failed_nil, spades_lead, mercy }
}

fn card(v: &Value) -> Card {
    v.as_str().unwrap().parse().unwrap()
}

fn cards(v: &Value) -> Vec<Card> {
    v.as_array().unwrap().iter().map(card).collect()
}

fn set(v: &Value) -> CardSet {
    cards(v).into_iter().collect()
}

fn seat(v: &Value) -> Seat {
    Seat::from_index(v.as_u64().unwrap() as u8).unwrap()
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn check_hand_score(v: &Value) {
    let rules = rules(&v["options"]);
    for team in v["teams"].as_array().unwrap() {
        let players: Vec<PlayerLine> = team["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let bid = int(&p["bid"]) as u8;
                assert_eq!(p["nil"].as_bool().unwrap(), bid == 0, "nil flag is bid 0");
                PlayerLine { bid, tricks: int(&p["tricks"]) as u8 }
            })
            .collect();
        let s = score_team(
            &rules,
            [players[0], players[1]],
            int(&team["start_score"]) as i32,
            int(&team["start_bags"]) as u8,
        );
        let e = &team["expected"];
        assert_eq!(i64::from(s.hand_points), int(&e["hand_points"]), "hand_points");
        assert_eq!(i64::from(s.score), int(&e["new_score"]), "new_score");
        if !e["new_bags"].is_null() {
            assert_eq!(i64::from(s.bag_count), int(&e["new_bags"]), "new_bags");
        }
        if let Some(b) = team.get("breakdown") {
            assert_eq!(i64::from(s.contract), int(&b["contract"]), "contract");
            assert_eq!(i64::from(s.contract_points), int(&b["contract_points"]), "contract_points");
            assert_eq!(i64::from(s.bags), int(&b["bags_this_hand"]), "bags_this_hand");
            assert_eq!(i64::from(s.bag_points), int(&b["bag_points"]), "bag_points");
            assert_eq!(i64::from(s.nil_points), int(&b["nil_points"]), "nil_points");
            assert_eq!(i64::from(s.bag_penalty), int(&b["bag_penalty_points"]), "bag_penalty_points");
        }
    }
}

fn check_legal_plays(v: &Value) {
    let rules = rules(&v["options"]);
    let input = &v["input"];
    let hand = set(&input["hand"]);
    let trick = cards(&input["trick_so_far"]);
    let led = input["led_suit"].as_str().map(|s| {
        let suit = spades_engine::Suit::from_letter(s.chars().next().unwrap()).unwrap();
        assert_eq!(trick.first().map(|c| c.suit()), Some(suit), "led_suit agrees with the trick");
        suit
    });
    let broken = input["spades_broken"].as_bool().unwrap();
    let got = legal_cards(&rules, hand, led, broken);
    assert_eq!(got, set(&v["expected"]["legal"]));
}

fn check_trick_winner(v: &Value) {
    let input = &v["input"];
    let leader = input.get("leader_seat").map_or(Seat::North, seat);
    let trick = Trick::from_cards(leader, &cards(&input["cards_in_play_order"])).unwrap();
    let winner = trick.winner().unwrap();
    let pos = (winner.index() + 4 - leader.index()) % 4;
    assert_eq!(i64::from(pos), int(&v["expected"]["winner_position"]));
    if let Some(w) = v["expected"].get("winner_seat") {
        assert_eq!(winner, seat(w));
    }
}

/// Deals a hand in which the four given cards can be played, in order from
/// `leader`, as the first trick: a seat that does not follow is made void in
/// the led suit, and a leader of an unbroken spade holds only spades.
fn deal_for_trick(rules: &Rules, leader: Seat, trick: &[Card]) -> BySeat<CardSet> {
    let led = trick[0].suit();
    let mut hands = BySeat([CardSet::EMPTY; 4]);
    let mut forbidden = BySeat([CardSet::EMPTY; 4]);
    for (i, &c) in trick.iter().enumerate() {
        let s = leader.offset(i as u8);
        hands[s].insert(c);
        if i == 0 && c.is_spade() && rules.spades_lead == SpadesLead::AfterBroken {
            forbidden[s] = CardSet::FULL.minus(CardSet::SPADES);
        } else if i > 0 && c.suit() != led {
            forbidden[s] = CardSet::suit(led);
        }
    }
    let used: CardSet = trick.iter().copied().collect();
    // Most constrained seats first.
    let mut order = Seat::ALL;
    order.sort_by_key(|&s| std::cmp::Reverse(forbidden[s].len()));
    let mut rest = CardSet::FULL.minus(used);
    for s in order {
        let allowed = rest.minus(forbidden[s]);
        for c in allowed.iter().take(13 - hands[s].len() as usize) {
            hands[s].insert(c);
            rest.remove(c);
        }
        assert_eq!(hands[s].len(), 13, "cannot build a deal for this trick");
    }
    hands
}

fn check_spades_broken(v: &Value) {
    let rules = rules(&v["options"]);
    let input = &v["input"];
    assert!(!input["spades_broken_before"].as_bool().unwrap(), "only a first trick is supported");
    let trick = cards(&input["trick"]);
    let leader = Seat::North;
    let mut hand = Hand::new(rules, leader.offset(3), deal_for_trick(&rules, leader, &trick)).unwrap();
    let mut events = spades_engine::Events::new();
    for s in Seat::ALL {
        hand.apply(s, Action::Bid(1), &mut events).unwrap();
    }
    for (i, &c) in trick.iter().enumerate() {
        hand.apply(leader.offset(i as u8), Action::Play(c), &mut events).unwrap();
    }
    assert_eq!(hand.spades_broken(), v["expected"]["spades_broken_after"].as_bool().unwrap());
}

fn check_match_end(v: &Value) {
    let rules = rules(&v["options"]);
    let input = &v["input"];
    let scores: Vec<i32> =
        input["scores_after_hand"].as_array().unwrap().iter().map(|s| int(s) as i32).collect();
    let end = match_end(&rules, ByTeam([scores[0], scores[1]]), int(&input["hands_played"]) as u16);
    let e = &v["expected"];
    assert_eq!(end.is_some(), e["game_over"].as_bool().unwrap(), "game_over");
    let winner = end.and_then(|r| match r.outcome {
        Outcome::Win(t) => Some(i64::from(t.index())),
        Outcome::Draw => None,
    });
    assert_eq!(winner, e["winner_team"].as_i64(), "winner_team");
}

fn check_full_hand(v: &Value) {
    let rules = rules(&v["options"]);
    let input = &v["input"];
    let first_leader = seat(&input["first_leader_seat"]);
    let dealer = first_leader.offset(3);
    let hands = BySeat::new_with(|s| set(&input["hands"][s.index().to_string()]));
    let mut hand = Hand::new(rules, dealer, hands).unwrap();
    let mut events = spades_engine::Events::new();
    let bids: Vec<u8> = input["bids_by_seat"].as_array().unwrap().iter().map(|b| int(b) as u8).collect();
    let nil_seats: Vec<Seat> = input["nil_seats"].as_array().unwrap().iter().map(seat).collect();
    for i in 0..4 {
        let s = first_leader.offset(i);
        assert_eq!(nil_seats.contains(&s), bids[usize::from(s.index())] == 0);
        hand.apply(s, Action::Bid(bids[usize::from(s.index())]), &mut events).unwrap();
    }
    let mut winners = Vec::new();
    let all_legal = v["expected"]["all_plays_legal"].as_bool().unwrap();
    for trick in input["tricks_in_play_order"].as_array().unwrap() {
        let leader = hand.turn().unwrap();
        for (i, c) in cards(trick).into_iter().enumerate() {
            let r = hand.apply(leader.offset(i as u8), Action::Play(c), &mut events);
            assert_eq!(r.is_ok(), all_legal, "play {c} by {}: {r:?}", leader.offset(i as u8));
        }
        winners.push(i64::from(hand.tricks().last().unwrap().winner().unwrap().index()));
    }
    let e = &v["expected"];
    let expected_winners: Vec<i64> = e["trick_winner_seats"].as_array().unwrap().iter().map(int).collect();
    assert_eq!(winners, expected_winners, "trick winners");
    let per_seat: Vec<i64> = e["tricks_per_seat"].as_array().unwrap().iter().map(int).collect();
    assert_eq!(hand.tricks_won().0.iter().map(|&t| i64::from(t)).collect::<Vec<_>>(), per_seat);
    let start = ByTeam::new_with(|t: Team| {
        let s = &input["start"][usize::from(t.index())];
        (int(&s["score"]) as i32, int(&s["bags"]) as u8)
    });
    let result = HandResult::score(&rules, 1, dealer, hand.final_bids().unwrap(), *hand.tricks_won(), start);
    for t in Team::ALL {
        let want = &e["teams"][usize::from(t.index())];
        let got = &result.teams[t];
        assert_eq!(i64::from(got.hand_points), int(&want["hand_points"]), "{t} hand_points");
        assert_eq!(i64::from(got.score), int(&want["new_score"]), "{t} new_score");
        assert_eq!(i64::from(got.bag_count), int(&want["new_bags"]), "{t} new_bags");
    }
}

fn check_bid(v: &Value) {
    let rules = rules(&v["options"]);
    let mut m = Match::new(rules, 1);
    let before = m.clone();
    let seat = m.turn().unwrap();
    let r = m.apply(seat, Action::Bid(int(&v["input"]["bid"]) as u8));
    let e = &v["expected"];
    assert_eq!(r.is_ok(), e["accepted"].as_bool().unwrap());
    if let Err(err) = r {
        assert_eq!(Some(err.code()), e["code"].as_str());
        assert_eq!(m, before, "a refused bid changes nothing");
    }
}

fn run(file: &str) -> usize {
    let doc: Value = serde_json::from_str(file).unwrap();
    let vectors = doc["vectors"].as_array().unwrap();
    assert_eq!(vectors.len() as i64, int(&doc["count"]), "count matches");
    let mut failures = Vec::new();
    for v in vectors {
        let id = v["id"].as_str().unwrap().to_owned();
        let kind = v["kind"].as_str().unwrap();
        let outcome = std::panic::catch_unwind(|| match kind {
            "hand_score" => check_hand_score(v),
            "legal_plays" => check_legal_plays(v),
            "trick_winner" => check_trick_winner(v),
            "spades_broken_transition" => check_spades_broken(v),
            "match_end" => check_match_end(v),
            "full_hand" => check_full_hand(v),
            "bid" => check_bid(v),
            other => panic!("unknown vector kind {other}"),
        });
        if outcome.is_err() {
            failures.push(id);
        }
    }
    assert!(failures.is_empty(), "failed vectors: {failures:?}");
    vectors.len()
}

#[test]
fn shared_oracle_vectors_all_pass() {
    let n = run(include_str!("data/spades_vectors.json"));
    assert_eq!(n, 64);
}

#[test]
fn project_vectors_all_pass() {
    let n = run(include_str!("data/project_vectors.json"));
    assert!(n >= 10);
}
