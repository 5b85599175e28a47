//! Property tests over thousands of seeded random matches.

use proptest::prelude::*;
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

use crate::{
    Action, BagPenalty, Card, CardSet, Event, FailedNil, HAND_CAP, Legal, Match, MatchEnd, NilRule, Rules,
    Seat, SeatView, SpadesLead,
};

fn rules_strategy() -> impl Strategy<Value = Rules> {
    (
        prop_oneof![
            Just(MatchEnd::Target(200)),
            Just(MatchEnd::Target(250)),
            Just(MatchEnd::Target(300)),
            Just(MatchEnd::Target(500)),
            Just(MatchEnd::Hands(5)),
            Just(MatchEnd::Hands(9)),
            Just(MatchEnd::Hands(11)),
        ],
        prop_oneof![Just(NilRule::Hundred), Just(NilRule::Fifty), Just(NilRule::Off)],
        prop_oneof![Just(BagPenalty::TenForHundred), Just(BagPenalty::FiveForFifty), Just(BagPenalty::Off)],
        prop_oneof![Just(FailedNil::BagsOnly), Just(FailedNil::CountForPartner)],
        prop_oneof![Just(SpadesLead::AfterBroken), Just(SpadesLead::AnyTime)],
        any::<bool>(),
    )
        .prop_map(|(match_end, nil, bag_penalty, failed_nil, spades_lead, mercy)| Rules {
            match_end,
            nil,
            bag_penalty,
            failed_nil,
            spades_lead,
            mercy,
        })
}

/// Any action at all, legal or not: a bid 0..=15 or any of the 52 cards.
fn random_action(rng: &mut ChaCha8Rng) -> Action {
    let x = rng.next_u32() % 68;
    if x < 16 {
        Action::Bid(x as u8)
    } else {
        Action::Play(
            Card::from_index((x - 16) as u8).unwrap_or(Card::from_index(0).unwrap_or_else(|| unreachable!())),
        )
    }
}

/// A legal action chosen at random, with bids kept realistic (mostly 1..=4,
/// sometimes nil) so that matches reach their end.
fn random_legal(m: &Match, rng: &mut ChaCha8Rng) -> Action {
    match m.legal_moves() {
        Legal::Bid { min, max } => {
            let r = rng.next_u32() % 10;
            let bid = if r == 0 { 0 } else { 1 + (r % 4) as u8 };
            Action::Bid(bid.clamp(min, max))
        }
        Legal::Play { cards } => {
            let n = cards.len();
            Action::Play(cards.nth(rng.next_u32() % n).unwrap_or_else(|| unreachable!()))
        }
        Legal::None => unreachable!("nobody on turn"),
    }
}

/// Every card a view mentions.
fn cards_in_view(v: &SeatView) -> CardSet {
    let mut all = v.hand.unwrap_or_default().or(v.played);
    let trick_cards = |t: &crate::Trick| t.cards().iter().copied().collect::<CardSet>();
    all = all.or(trick_cards(&v.trick));
    if let Some(t) = &v.last_trick {
        all = all.or(trick_cards(t));
    }
    for t in &v.tricks {
        all = all.or(trick_cards(t));
    }
    if let Legal::Play { cards } = v.legal {
        all = all.or(cards);
    }
    all
}

fn check_invariants(m: &Match) {
    let hand = m.hand();
    // 52 cards conserved: the four hands and the played cards partition the deck.
    let mut seen = hand.played();
    for s in Seat::ALL {
        let h = hand.cards(s);
        assert!(seen.and(h).is_empty(), "a card is in two places");
        seen = seen.or(h);
    }
    assert_eq!(seen, CardSet::FULL, "cards lost");
    // No view carries a card of another seat's hand.
    for viewer in [None, Some(Seat::North), Some(Seat::East), Some(Seat::South), Some(Seat::West)] {
        let v = m.view(viewer);
        let mentioned = cards_in_view(&v);
        for s in Seat::ALL {
            if Some(s) != viewer {
                assert!(mentioned.and(hand.cards(s)).is_empty(), "{viewer:?} sees a card of {s}");
            }
        }
        match viewer {
            Some(me) => assert_eq!(v.hand, Some(hand.cards(me))),
            None => assert_eq!(v.hand, None),
        }
    }
}

fn play_random_match(rules: Rules, seed: u64, check_every_step: bool) -> Match {
    let mut m = Match::new(rules, seed);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut steps = 0u32;
    while let Some(turn) = m.turn() {
        // An arbitrary action by an arbitrary seat is accepted exactly when
        // it is the seat on turn and the action is among the legal moves.
        let seat = Seat::ALL[(rng.next_u32() % 4) as usize];
        let action = random_action(&mut rng);
        let expected_ok = seat == turn && m.legal_moves().allows(action);
        let before = (m.hand().clone(), m.scores(), m.bags(), m.moves().len(), m.results().len());
        match m.apply(seat, action) {
            Ok(_) => assert!(expected_ok, "{seat} {action:?} accepted but not legal"),
            Err(e) => {
                assert!(!expected_ok, "{seat} {action:?} is legal but refused: {e}");
                let after = (m.hand().clone(), m.scores(), m.bags(), m.moves().len(), m.results().len());
                assert!(after == before, "a refused action changed the state");
            }
        }
        // Then a legal move by the seat on turn.
        if let Some(turn) = m.turn() {
            let action = random_legal(&m, &mut rng);
            assert!(m.is_legal(turn, action));
            let events = m.apply(turn, action).unwrap_or_else(|e| panic!("legal move refused: {e}"));
            assert!(!events.is_empty());
            if events.iter().any(|e| matches!(e, Event::HandScored { .. })) {
                let last = m.results().last().unwrap_or_else(|| unreachable!());
                assert_eq!(last.tricks.0.iter().map(|&t| u32::from(t)).sum::<u32>(), 13);
            }
        }
        steps += 1;
        if check_every_step || steps.is_multiple_of(7) {
            check_invariants(&m);
        }
    }
    m
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Random matches under random options: nothing panics, cards are
    /// conserved, every match ends, acceptance matches `legal_moves`, views
    /// never leak, and replaying the log rebuilds the same match.
    #[test]
    fn random_matches_keep_every_invariant(rules in rules_strategy(), seed in any::<u64>()) {
        let m = play_random_match(rules, seed, false);
        let result = m.result().copied().unwrap_or_else(|| unreachable!());
        prop_assert!(result.hands_played <= HAND_CAP);
        prop_assert_eq!(usize::from(result.hands_played), m.results().len());
        prop_assert_eq!(result.scores, m.scores());
        let replayed = Match::replay(rules, seed, m.moves().iter().copied()).unwrap_or_else(|e| panic!("{e}"));
        prop_assert_eq!(&replayed, &m);
        let json = serde_json::to_string(&m).unwrap_or_default();
        let back: Match = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}"));
        prop_assert_eq!(&back, &m);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The same, checking every invariant after every single action.
    #[test]
    fn invariants_hold_after_every_action(rules in rules_strategy(), seed in any::<u64>()) {
        play_random_match(rules, seed, true);
    }
}

/// Serialised views (what clients receive) name no card of another hand.
#[test]
fn serialised_views_name_no_hidden_card() {
    let mut m = Match::new(Rules::default(), 77);
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    while let Some(turn) = m.turn() {
        for viewer in [None, Some(Seat::North), Some(Seat::East), Some(Seat::South), Some(Seat::West)] {
            let json = serde_json::to_string(&m.view(viewer)).unwrap_or_default();
            for s in Seat::ALL {
                if Some(s) == viewer {
                    continue;
                }
                for c in m.hand().cards(s) {
                    assert!(!json.contains(&format!("\"{c}\"")), "{viewer:?} view names {c} of {s}");
                }
            }
        }
        let action = random_legal(&m, &mut rng);
        m.apply(turn, action).unwrap_or_else(|e| panic!("{e}"));
    }
}
