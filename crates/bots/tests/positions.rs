//! Play and bidding behaviour on real positions: positions are collected
//! from seeded rule-bot matches, then each bot is asked what it would do.

use spades_bots::{Budget, Strength, decide_with};
use spades_engine::{Action, Card, CardSet, Legal, Match, Rules, Seat, SeatView, Suit};

/// A small clock-free search budget (fast enough for a debug build).
const SMALL: Budget = Budget { play_worlds: 24, bid_worlds: 24, time_limit: None, endgame: 0 };

/// Views of the seat on turn, from rule-bot matches, that satisfy `keep`.
fn positions(count: usize, keep: impl Fn(&SeatView) -> bool) -> Vec<SeatView> {
    let mut out = Vec::new();
    for seed in 0..2000u64 {
        let mut m = Match::new(Rules::default(), seed);
        while let Some(seat) = m.turn() {
            if m.results().len() >= 2 {
                break;
            }
            let view = m.view(Some(seat));
            if keep(&view) {
                out.push(view.clone());
                if out.len() == count {
                    return out;
                }
            }
            let action = decide_with(Strength::Rule, &SMALL, &view, seed).unwrap();
            m.apply(seat, action).unwrap();
        }
    }
    out
}

fn winning(view: &SeatView) -> Option<(Seat, Card)> {
    let seat = view.trick.winning_seat()?;
    Some((seat, view.trick.card_of(seat)?))
}

fn beats(card: Card, best: Card) -> bool {
    (card.suit() == best.suit() && card > best) || (card.is_spade() && !best.is_spade())
}

fn legal_cards(view: &SeatView) -> CardSet {
    match view.legal {
        Legal::Play { cards } => cards,
        _ => CardSet::EMPTY,
    }
}

/// True when the seat holds both a legal card that beats `best` and one
/// that does not.
fn real_choice(view: &SeatView, best: Card) -> bool {
    let legal = legal_cards(view);
    legal.iter().any(|c| beats(c, best)) && legal.iter().any(|c| !beats(c, best))
}

fn share(views: &[SeatView], strength: Strength, good: impl Fn(&SeatView, Card) -> bool) -> f64 {
    let hits = views
        .iter()
        .enumerate()
        .filter(|(i, v)| match decide_with(strength, &SMALL, v, *i as u64) {
            Some(Action::Play(c)) => good(v, c),
            _ => false,
        })
        .count();
    hits as f64 / views.len() as f64
}

#[test]
fn both_bots_overtake_a_partner_whose_nil_is_winning_the_trick() {
    // Partner bid nil, has not taken a trick, and its card is winning the
    // trick; we hold a card that beats it.
    let views = positions(30, |v| {
        let (Some(me), Some((w, best))) = (v.viewer, winning(v)) else { return false };
        let p = me.partner();
        v.bids[p] == Some(0) && v.tricks_won[p] == 0 && w == p && real_choice(v, best)
    });
    assert!(views.len() >= 20, "only {} positions", views.len());
    let overtakes = |v: &SeatView, c: Card| winning(v).is_some_and(|(_, best)| beats(c, best));
    for strength in [Strength::Rule, Strength::Search] {
        let s = share(&views, strength, overtakes);
        assert!(s >= 0.9, "{strength} overtook partner's nil in only {:.0}%", 100.0 * s);
    }
}

#[test]
fn both_bots_duck_a_bag_when_every_contract_is_made() {
    // Both contracts made, no live nil, an opponent winning, we play last
    // and can play under: taking the trick is a pure bag.
    let views = positions(30, |v| {
        let (Some(me), Some((w, best))) = (v.viewer, winning(v)) else { return false };
        let bids: Vec<u8> = v.bids.0.iter().map(|b| b.unwrap_or(1)).collect();
        let made = |team: [Seat; 2]| {
            let contract: u8 = team.iter().map(|&s| bids[usize::from(s.index())]).sum();
            let taken: u8 =
                team.iter().filter(|&&s| bids[usize::from(s.index())] > 0).map(|&s| v.tricks_won[s]).sum();
            taken >= contract
        };
        let no_nil = Seat::ALL.iter().all(|&s| bids[usize::from(s.index())] > 0);
        v.trick.len() == 3
            && w.team() != me.team()
            && no_nil
            && made(me.team().seats())
            && made(me.team().other().seats())
            && real_choice(v, best)
    });
    assert!(views.len() >= 20, "only {} positions", views.len());
    let ducks = |v: &SeatView, c: Card| winning(v).is_some_and(|(_, best)| !beats(c, best));
    for strength in [Strength::Rule, Strength::Search] {
        let s = share(&views, strength, ducks);
        assert!(s >= 0.95, "{strength} ducked only {:.0}%", 100.0 * s);
    }
}

#[test]
fn nobody_leads_a_spade_before_spades_are_broken() {
    let views = positions(40, |v| {
        v.trick.is_empty()
            && !v.spades_broken
            && v.hand.is_some_and(|h| h.len() < 13 && !h.minus(CardSet::SPADES).is_empty())
    });
    assert!(views.len() >= 30);
    for strength in [Strength::Rule, Strength::Search] {
        assert_eq!(share(&views, strength, |_, c| c.suit() != Suit::Spades), 1.0, "{strength}");
    }
}

#[test]
fn no_nil_with_the_ace_of_spades_or_beside_a_partners_nil() {
    let ace = Card::new(spades_engine::Rank::Ace, Suit::Spades);
    let views = positions(40, |v| {
        let Some(me) = v.viewer else { return false };
        matches!(v.legal, Legal::Bid { .. })
            && (v.hand.is_some_and(|h| h.contains(ace)) || v.bids[me.partner()] == Some(0))
    });
    assert!(views.len() >= 30);
    for strength in [Strength::Rule, Strength::Search] {
        for (i, v) in views.iter().enumerate() {
            assert_ne!(decide_with(strength, &SMALL, v, i as u64), Some(Action::Bid(0)), "{strength}");
        }
    }
}

#[test]
fn search_bids_track_the_hand() {
    // Across many first bids, stronger hands (more aces and spades) bid more.
    let views = positions(60, |v| v.bids.0.iter().all(Option::is_none));
    let mut strong = Vec::new();
    let mut weak = Vec::new();
    for (i, v) in views.iter().enumerate() {
        let Some(h) = v.hand else { continue };
        let aces = h.iter().filter(|c| c.rank() == spades_engine::Rank::Ace).count();
        let spades = h.of_suit(Suit::Spades).len();
        let Some(Action::Bid(b)) = decide_with(Strength::Search, &SMALL, v, i as u64) else { continue };
        if aces >= 2 && spades >= 4 {
            strong.push(f64::from(b));
        } else if aces == 0 && spades <= 3 {
            weak.push(f64::from(b));
        }
    }
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len().max(1) as f64;
    assert!(!strong.is_empty() && !weak.is_empty());
    assert!(mean(&strong) > mean(&weak) + 1.5, "strong {strong:?} weak {weak:?}");
}
