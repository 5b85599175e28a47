//! A whole match: hands dealt from a seed, scores, bags and the end.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use std::sync::Arc;

use crate::deal::{deal, first_dealer};
use crate::error::ActionError;
use crate::fair::FairSeeds;
use crate::hand::{Action, Event, Events, Hand, HandPhase, Legal, Move, Trick};
use crate::rules::Rules;
use crate::scoring::{HandResult, MatchResult, match_end};
use crate::seat::{ByTeam, Seat};

/// Where a match stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The seats are bidding the current hand.
    Bidding,
    /// The current hand's tricks are being played.
    Playing,
    /// The match has ended.
    MatchOver,
}

/// A match of partnership Spades, from its options and a 64-bit seed.
///
/// Everything is deterministic: the same rules, seed and accepted moves give
/// the same match. The serde form is exactly that (`{"rules", "seed",
/// "moves"}`), and deserialising replays the moves through the engine, so a
/// stored match can never come back in a state the rules could not reach.
#[derive(Clone, PartialEq, Eq)]
pub struct Match {
    rules: Rules,
    seed: u64,
    hand_number: u16,
    hand: Hand,
    scores: ByTeam<i32>,
    bags: ByTeam<u8>,
    results: Vec<HandResult>,
    result: Option<MatchResult>,
    last_trick: Option<Trick>,
    moves: Vec<Move>,
    first_dealer: Seat,
    /// A fair match's seeds: every deal comes from them instead of `seed`.
    fair: Option<Arc<FairSeeds>>,
}

/// Shows where the match stands, never the seed or a hand: a `Debug`
/// string can end up in a log while the match is played.
impl std::fmt::Debug for Match {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Match")
            .field("rules", &self.rules)
            .field("hand_number", &self.hand_number)
            .field("phase", &self.phase())
            .field("scores", &self.scores)
            .field("bags", &self.bags)
            .field("moves", &self.moves.len())
            .field("result", &self.result)
            .field("fair", &self.fair.is_some())
            .finish_non_exhaustive()
    }
}

/// A move of a replayed log was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("move {index} ({seat} {action:?}) was refused: {error}")]
pub struct ReplayError {
    /// Position of the refused move in the log (0-based).
    pub index: usize,
    /// The seat of the refused move.
    pub seat: Seat,
    /// The refused action.
    pub action: Action,
    /// Why it was refused.
    pub error: ActionError,
}

impl Match {
    /// A new match: the first dealer is drawn from the seed and the first
    /// hand is dealt, ready for the first bid.
    pub fn new(rules: Rules, seed: u64) -> Match {
        Match::with_first_dealer(rules, seed, first_dealer(seed))
    }

    /// A new match whose first dealer is `dealer` instead of the one drawn
    /// from the seed. Every hand is dealt by [`deal`] from the seed, the hand
    /// number and its dealer, so the cards turn with the dealer: the match
    /// from `first_dealer(seed).offset(k)` is the match from `seed` with every
    /// deal turned `k` seats to the left. Duplicate play uses this to swap the
    /// partnerships' cards.
    pub fn with_first_dealer(rules: Rules, seed: u64, dealer: Seat) -> Match {
        Match {
            rules,
            seed,
            hand_number: 1,
            hand: Hand::dealt(rules, dealer, deal(seed, 1, dealer)),
            scores: ByTeam([0, 0]),
            bags: ByTeam([0, 0]),
            results: Vec::new(),
            result: None,
            last_trick: None,
            // One hand's worth of moves; a whole match takes a few doublings.
            moves: Vec::with_capacity(64),
            first_dealer: dealer,
            fair: None,
        }
    }

    /// A new fair match: the first dealer and every deal come from `seeds`
    /// (see [`FairSeeds`]); [`Match::seed`] is then the bots' seed drawn
    /// from them, which never changes a card.
    pub fn fair(rules: Rules, seeds: FairSeeds) -> Match {
        let dealer = seeds.first_dealer();
        let mut m = Match::with_first_dealer(rules, seeds.bot_seed(), dealer);
        m.hand = Hand::dealt(rules, dealer, seeds.deal(1, dealer));
        m.fair = Some(Arc::new(seeds));
        m
    }

    /// Rebuilds a fair match from its options, seeds and accepted moves.
    ///
    /// # Errors
    /// The first move the rules refuse.
    pub fn replay_fair(
        rules: Rules,
        seeds: FairSeeds,
        moves: impl IntoIterator<Item = Move>,
    ) -> Result<Match, ReplayError> {
        Match::fair(rules, seeds).replayed(moves)
    }

    /// A fair match's seeds (`None` for a match dealt from its seed alone).
    pub fn fair_seeds(&self) -> Option<&FairSeeds> {
        self.fair.as_deref()
    }

    /// The deal of hand `hand_number` with `dealer` dealing.
    fn deal_of(&self, hand_number: u16, dealer: Seat) -> crate::seat::BySeat<crate::card::CardSet> {
        match &self.fair {
            Some(f) => f.deal(hand_number, dealer),
            None => deal(self.seed, hand_number, dealer),
        }
    }

    /// Rebuilds a match from its options, seed and accepted moves.
    ///
    /// # Errors
    /// The first move the rules refuse.
    pub fn replay(
        rules: Rules,
        seed: u64,
        moves: impl IntoIterator<Item = Move>,
    ) -> Result<Match, ReplayError> {
        Match::new(rules, seed).replayed(moves)
    }

    /// Applies a log of moves to this match, stopping at the first refused
    /// one.
    fn replayed(mut self, moves: impl IntoIterator<Item = Move>) -> Result<Match, ReplayError> {
        for (index, mv) in moves.into_iter().enumerate() {
            self.apply(mv.seat, mv.action).map_err(|error| ReplayError {
                index,
                seat: mv.seat,
                action: mv.action,
                error,
            })?;
        }
        Ok(self)
    }

    /// The dealer of the first hand.
    pub const fn first_dealer(&self) -> Seat {
        self.first_dealer
    }

    /// The table's rules.
    pub const fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The seed every deal comes from (of a fair match: the bots' seed,
    /// which deals nothing; see [`Match::fair_seeds`]).
    pub const fn seed(&self) -> u64 {
        self.seed
    }

    /// Bidding, playing or over.
    pub fn phase(&self) -> Phase {
        if self.result.is_some() {
            return Phase::MatchOver;
        }
        match self.hand.phase() {
            HandPhase::Bidding => Phase::Bidding,
            _ => Phase::Playing,
        }
    }

    /// The current hand's number (1-based); after the end, the last hand's.
    pub const fn hand_number(&self) -> u16 {
        self.hand_number
    }

    /// The current hand (hidden information: trusted code only).
    pub const fn hand(&self) -> &Hand {
        &self.hand
    }

    /// The seat on turn, `None` once the match is over.
    pub fn turn(&self) -> Option<Seat> {
        if self.result.is_some() { None } else { self.hand.turn() }
    }

    /// Each team's score.
    pub const fn scores(&self) -> ByTeam<i32> {
        self.scores
    }

    /// Each team's bag count.
    pub const fn bags(&self) -> ByTeam<u8> {
        self.bags
    }

    /// The finished hands, in order.
    pub fn results(&self) -> &[HandResult] {
        &self.results
    }

    /// How the match ended, once it has.
    pub const fn result(&self) -> Option<&MatchResult> {
        self.result.as_ref()
    }

    /// The most recently completed trick of the current hand. A new deal
    /// clears it: a view never names a card from an earlier hand, since those
    /// cards are in play again.
    pub const fn last_trick(&self) -> Option<Trick> {
        self.last_trick
    }

    /// Every accepted move, in order: with the rules and the seed, all that is
    /// needed to rebuild the match.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The legal moves of the seat on turn.
    pub fn legal_moves(&self) -> Legal {
        if self.result.is_some() { Legal::None } else { self.hand.legal() }
    }

    /// True when `seat` may make `action` now.
    pub fn is_legal(&self, seat: Seat, action: Action) -> bool {
        self.check(seat, action).is_ok()
    }

    /// Checks an action without changing anything.
    ///
    /// # Errors
    /// The reason the action would be refused.
    pub fn check(&self, seat: Seat, action: Action) -> Result<(), ActionError> {
        if self.result.is_some() {
            return Err(ActionError::MatchOver);
        }
        self.hand.check(seat, action)
    }

    /// Applies an action by `seat` and returns what happened.
    ///
    /// # Errors
    /// The reason the action was refused; the match is then unchanged.
    pub fn apply(&mut self, seat: Seat, action: Action) -> Result<Events, ActionError> {
        if self.result.is_some() {
            return Err(ActionError::MatchOver);
        }
        let mut events = Events::new();
        self.hand.apply(seat, action, &mut events)?;
        self.moves.push(Move { seat, action });
        if let Some(Event::TrickWon { trick, .. }) =
            events.iter().find(|e| matches!(e, Event::TrickWon { .. }))
        {
            self.last_trick = Some(*trick);
        }
        if self.hand.phase() == HandPhase::Finished {
            self.finish_hand(&mut events);
        }
        Ok(events)
    }

    fn finish_hand(&mut self, events: &mut Events) {
        let bids = self.hand.final_bids().unwrap_or_default();
        let start = ByTeam::new_with(|t| (self.scores[t], self.bags[t]));
        let result = HandResult::score(
            &self.rules,
            self.hand_number,
            self.hand.dealer(),
            bids,
            *self.hand.tricks_won(),
            start,
        );
        self.scores = result.scores();
        self.bags = ByTeam::new_with(|t| result.teams[t].bag_count);
        let _ = events.try_push(Event::HandScored { hand_number: self.hand_number });
        self.results.push(result);
        if let Some(end) = match_end(&self.rules, self.scores, self.hand_number) {
            self.result = Some(end);
            let _ = events.try_push(Event::MatchOver(end));
        } else {
            self.hand_number += 1;
            let dealer = self.hand.dealer().next();
            self.hand = Hand::dealt(self.rules, dealer, self.deal_of(self.hand_number, dealer));
            self.last_trick = None;
            let _ = events.try_push(Event::HandDealt { hand_number: self.hand_number, dealer });
        }
    }
}

#[derive(Serialize, Deserialize)]
struct MatchLog {
    rules: Rules,
    seed: u64,
    /// Only when it is not the one drawn from the seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    first_dealer: Option<Seat>,
    /// A fair match's seeds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fair: Option<FairLog>,
    moves: Vec<Move>,
}

#[derive(Serialize, Deserialize)]
struct FairLog {
    table: [u8; 16],
    server_seed: crate::fair::ServerSeed,
    client_seeds: [Option<crate::fair::ClientSeed>; 4],
}

impl Serialize for Match {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        MatchLog {
            rules: self.rules,
            seed: self.seed,
            first_dealer: (self.fair.is_none() && self.first_dealer != first_dealer(self.seed))
                .then_some(self.first_dealer),
            fair: self.fair.as_ref().map(|f| FairLog {
                table: *f.table(),
                server_seed: *f.server_seed(),
                client_seeds: f.client_seeds().0,
            }),
            moves: self.moves.clone(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Match {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Match, D::Error> {
        let log = MatchLog::deserialize(deserializer)?;
        if let Some(f) = log.fair {
            let seeds = FairSeeds::new(f.table, f.server_seed, crate::seat::BySeat(f.client_seeds));
            return Match::replay_fair(log.rules, seeds, log.moves).map_err(serde::de::Error::custom);
        }
        let dealer = log.first_dealer.unwrap_or_else(|| first_dealer(log.seed));
        Match::with_first_dealer(log.rules, log.seed, dealer)
            .replayed(log.moves)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn debug_shows_neither_the_seed_nor_a_hand() {
        let seed = 0x0123_4567_89AB_CDEF_u64;
        let m = Match::new(Rules::default(), seed);
        let printed = format!("{m:?}");
        assert!(!printed.contains(&seed.to_string()) && !printed.contains("123456789"), "{printed}");
        for card in m.hand().cards(m.hand().dealer()) {
            assert!(!printed.contains(&format!("{card:?}")), "{printed}");
        }
        assert!(printed.contains("hand_number"), "{printed}");
    }

    use super::*;
    use crate::rules::MatchEnd;
    use crate::scoring::EndReason;

    /// Plays the lowest legal move until the match ends.
    fn play_out(m: &mut Match) {
        while let Some(seat) = m.turn() {
            let action = match m.legal_moves() {
                Legal::Bid { min, .. } => Action::Bid(min.max(3)),
                Legal::Play { cards } => Action::Play(cards.first().unwrap()),
                Legal::None => unreachable!(),
            };
            m.apply(seat, action).unwrap();
        }
    }

    #[test]
    fn dealer_rotates_left_and_left_of_dealer_starts() {
        let mut m = Match::new(Rules { match_end: MatchEnd::Hands(5), ..Rules::default() }, 7);
        let first = m.hand().dealer();
        assert_eq!(first, first_dealer(7));
        assert_eq!(m.turn(), Some(first.next()));
        let mut dealers = vec![first];
        while m.result().is_none() {
            let seat = m.turn().unwrap();
            let action = match m.legal_moves() {
                Legal::Bid { .. } => Action::Bid(3),
                Legal::Play { cards } => Action::Play(cards.first().unwrap()),
                Legal::None => unreachable!(),
            };
            let events = m.apply(seat, action).unwrap();
            for e in &events {
                if let Event::HandDealt { dealer, .. } = e {
                    dealers.push(*dealer);
                    assert_eq!(m.turn(), Some(dealer.next()));
                }
            }
        }
        for pair in dealers.windows(2) {
            assert_eq!(pair[1], pair[0].next());
        }
        assert!(m.results().len() >= 5);
        assert_eq!(m.result().unwrap().reason, EndReason::Hands);
    }

    #[test]
    fn refused_actions_change_nothing() {
        let mut m = Match::new(Rules::default(), 3);
        let before = m.clone();
        let wrong = m.turn().unwrap().next();
        assert!(m.apply(wrong, Action::Bid(3)).is_err());
        assert!(m.apply(m.turn().unwrap(), Action::Bid(40)).is_err());
        assert_eq!(m, before);
    }

    #[test]
    fn a_match_ends_and_then_refuses_everything() {
        let mut m = Match::new(Rules::default(), 11);
        play_out(&mut m);
        let end = *m.result().unwrap();
        assert_eq!(m.phase(), Phase::MatchOver);
        assert_eq!(m.legal_moves(), Legal::None);
        assert_eq!(m.apply(Seat::North, Action::Bid(1)), Err(ActionError::MatchOver));
        assert_eq!(end.scores, m.scores());
        assert_eq!(usize::from(end.hands_played), m.results().len());
    }

    #[test]
    fn serde_is_the_log_and_replays() {
        let mut m = Match::new(Rules::default(), 99);
        for _ in 0..30 {
            let seat = m.turn().unwrap();
            let action = match m.legal_moves() {
                Legal::Bid { .. } => Action::Bid(2),
                Legal::Play { cards } => Action::Play(cards.last().unwrap()),
                Legal::None => unreachable!(),
            };
            m.apply(seat, action).unwrap();
        }
        let json = serde_json::to_string(&m).unwrap();
        assert!(json.starts_with(r#"{"rules":"#));
        let back: Match = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m);
        // A log with an illegal move is refused with its position.
        let mut log: serde_json::Value = serde_json::from_str(&json).unwrap();
        log["moves"][5] = serde_json::json!({"seat": "north", "bid": 1});
        let err = serde_json::from_value::<Match>(log).unwrap_err().to_string();
        assert!(err.contains("move 5"), "{err}");
    }

    #[test]
    fn another_first_dealer_turns_every_deal_with_it() {
        let seed = 5;
        let plain = Match::new(Rules::default(), seed);
        assert_eq!(plain.first_dealer(), first_dealer(seed));
        assert_eq!(Match::with_first_dealer(Rules::default(), seed, first_dealer(seed)), plain);
        let turned = Match::with_first_dealer(Rules::default(), seed, first_dealer(seed).offset(1));
        assert_eq!(turned.hand().dealer(), plain.hand().dealer().next());
        for s in Seat::ALL {
            assert_eq!(
                turned.hand().cards(s.next()),
                plain.hand().cards(s),
                "{s}'s cards move one seat left"
            );
        }
    }

    #[test]
    fn serde_keeps_a_first_dealer_other_than_the_seeds() {
        let seed = 8;
        let mut m = Match::with_first_dealer(Rules::default(), seed, first_dealer(seed).offset(2));
        for _ in 0..9 {
            let seat = m.turn().unwrap();
            let action = match m.legal_moves() {
                Legal::Bid { .. } => Action::Bid(3),
                Legal::Play { cards } => Action::Play(cards.first().unwrap()),
                Legal::None => unreachable!(),
            };
            m.apply(seat, action).unwrap();
        }
        let json = serde_json::to_string(&m).unwrap();
        assert!(json.contains(r#""first_dealer":"#), "{json}");
        let back: Match = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m);
        // The seed's own dealer is left out, as in logs written before.
        let plain = serde_json::to_string(&Match::new(Rules::default(), seed)).unwrap();
        assert!(!plain.contains("first_dealer"), "{plain}");
    }

    fn fair_seeds(client: u8) -> FairSeeds {
        use crate::fair::{ClientSeed, ServerSeed};
        FairSeeds::new(
            [3; 16],
            ServerSeed::from_bytes([5; 32]),
            crate::seat::BySeat([Some(ClientSeed::from_bytes([client; 32])), None, None, None]),
        )
    }

    #[test]
    fn a_fair_match_deals_from_its_seeds_and_replays() {
        let seeds = fair_seeds(1);
        let mut m = Match::fair(Rules { match_end: MatchEnd::Hands(5), ..Rules::default() }, seeds.clone());
        assert_eq!(m.first_dealer(), seeds.first_dealer());
        let mut dealt = vec![(1, m.hand().dealer(), Seat::ALL.map(|s| m.hand().cards(s)))];
        while m.result().is_none() {
            let seat = m.turn().unwrap();
            let action = match m.legal_moves() {
                Legal::Bid { .. } => Action::Bid(3),
                Legal::Play { cards } => Action::Play(cards.first().unwrap()),
                Legal::None => unreachable!(),
            };
            for e in &m.apply(seat, action).unwrap() {
                if let Event::HandDealt { hand_number, dealer } = e {
                    dealt.push((*hand_number, *dealer, Seat::ALL.map(|s| m.hand().cards(s))));
                }
            }
        }
        assert!(dealt.len() >= 5);
        for (n, dealer, hands) in dealt {
            assert_eq!(seeds.deal(n, dealer).0, hands, "hand {n}");
        }
        let again = Match::replay_fair(*m.rules(), seeds, m.moves().iter().copied()).unwrap();
        assert_eq!(again, m);
        // The serde form keeps the seeds and replays.
        let json = serde_json::to_string(&m).unwrap();
        let back: Match = serde_json::from_str(&json).unwrap();
        assert_eq!(back, m);
        assert!(back.fair_seeds().is_some());
        // Another player's seed: other cards, so the old log no longer fits.
        let other = Match::fair(*m.rules(), fair_seeds(2));
        assert_ne!(
            other.hand().cards(Seat::North),
            Match::fair(*m.rules(), fair_seeds(1)).hand().cards(Seat::North)
        );
    }

    #[test]
    fn debug_of_a_fair_match_shows_no_seed() {
        let m = Match::fair(Rules::default(), fair_seeds(1));
        let printed = format!("{m:?}");
        assert!(!printed.contains(&"05".repeat(32)) && !printed.contains("[5, 5"), "{printed}");
        assert!(printed.contains("fair: true"), "{printed}");
    }
}
