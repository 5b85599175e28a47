//! One hand: the bidding round and the thirteen tricks.

use arrayvec::ArrayVec;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::card::{Card, CardSet, Suit};
use crate::error::ActionError;
use crate::rules::{NilRule, Rules, SpadesLead};
use crate::scoring::MatchResult;
use crate::seat::{BySeat, Seat};

/// What a seat does on its turn.
///
/// Serialised as `{"bid": 3}` or `{"play": "AS"}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Bid this many tricks (0 is nil).
    Bid(u8),
    /// Play this card.
    Play(Card),
}

/// An action together with the seat that made it: one entry of a match's
/// log. Serialised as `{"seat": "north", "bid": 3}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Move {
    /// Who acted.
    pub seat: Seat,
    /// What they did.
    #[serde(flatten)]
    pub action: Action,
}

/// The cards played to one trick, in play order from its leader.
#[derive(Clone, Copy)]
pub struct Trick {
    leader: Seat,
    len: u8,
    /// Position (0..len) of the card currently winning the trick.
    win: u8,
    cards: [Card; 4],
}

const NO_CARD: Card = match Card::from_index(0) {
    Some(c) => c,
    None => unreachable!(),
};

impl Trick {
    /// An empty trick led by `leader`.
    pub const fn new(leader: Seat) -> Trick {
        Trick { leader, len: 0, win: 0, cards: [NO_CARD; 4] }
    }

    /// The seat that led (or will lead) this trick.
    pub const fn leader(&self) -> Seat {
        self.leader
    }

    /// The cards played so far, in play order.
    pub fn cards(&self) -> &[Card] {
        &self.cards[..usize::from(self.len)]
    }

    /// Number of cards played so far.
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// True before the lead.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True once all four have played.
    pub const fn is_complete(&self) -> bool {
        self.len == 4
    }

    /// The suit of the lead, once led.
    pub fn led_suit(&self) -> Option<Suit> {
        self.cards().first().map(|c| c.suit())
    }

    /// The seat whose turn it is in this trick (the leader when empty).
    pub const fn next_seat(&self) -> Seat {
        self.leader.offset(self.len)
    }

    /// `(seat, card)` pairs in play order.
    pub fn plays(&self) -> impl Iterator<Item = (Seat, Card)> + '_ {
        self.cards().iter().enumerate().map(|(i, &c)| (self.leader.offset(i as u8), c))
    }

    /// The card `seat` played to this trick, if any.
    pub fn card_of(&self, seat: Seat) -> Option<Card> {
        let pos = (seat.index() + 4 - self.leader.index()) % 4;
        self.cards().get(usize::from(pos)).copied()
    }

    /// The seat currently winning the trick (the winner once complete):
    /// the highest spade, else the highest card of the led suit.
    pub fn winning_seat(&self) -> Option<Seat> {
        if self.len == 0 { None } else { Some(self.leader.offset(self.win)) }
    }

    /// The winner of a complete trick, `None` while it is still being played.
    pub fn winner(&self) -> Option<Seat> {
        if self.is_complete() { self.winning_seat() } else { None }
    }

    /// A trick led by `leader` with these cards in play order; `None` when
    /// there are more than four or a card repeats.
    pub fn from_cards(leader: Seat, cards: &[Card]) -> Option<Trick> {
        if cards.len() > 4 {
            return None;
        }
        let mut trick = Trick::new(leader);
        for (i, &c) in cards.iter().enumerate() {
            if cards[..i].contains(&c) {
                return None;
            }
            trick.push(c);
        }
        Some(trick)
    }

    /// Adds the next card (no rule checks; used by the hand).
    fn push(&mut self, card: Card) {
        let pos = self.len;
        if let Some(slot) = self.cards.get_mut(usize::from(pos)) {
            *slot = card;
            self.len += 1;
            if pos > 0 {
                let best = self.cards[usize::from(self.win & 3)];
                // Same suit: the higher index is the higher rank. Otherwise
                // only a spade on a non-spade wins.
                let beats =
                    (card.suit() == best.suit()) & (card > best) | (card.is_spade() & !best.is_spade());
                self.win = if beats { pos } else { self.win };
            }
        }
    }
}

impl PartialEq for Trick {
    fn eq(&self, other: &Trick) -> bool {
        self.leader == other.leader && self.cards() == other.cards()
    }
}

impl Eq for Trick {}

impl std::hash::Hash for Trick {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.leader.hash(state);
        self.cards().hash(state);
    }
}

impl std::fmt::Debug for Trick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trick").field("leader", &self.leader).field("cards", &self.cards()).finish()
    }
}

#[derive(Serialize, Deserialize)]
struct TrickRepr {
    leader: Seat,
    cards: ArrayVec<Card, 4>,
    #[serde(default, skip_deserializing)]
    winner: Option<Seat>,
}

impl Serialize for Trick {
    /// `{"leader": "north", "cards": ["2C", …], "winner": "east"}`; the
    /// winner is `null` until the trick is complete.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        TrickRepr {
            leader: self.leader,
            cards: self.cards().iter().copied().collect(),
            winner: self.winner(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Trick {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Trick, D::Error> {
        let repr = TrickRepr::deserialize(deserializer)?;
        let mut trick = Trick::new(repr.leader);
        let mut seen = CardSet::EMPTY;
        for card in repr.cards {
            if seen.contains(card) {
                return Err(serde::de::Error::custom(format!("card {card} played twice in a trick")));
            }
            seen.insert(card);
            trick.push(card);
        }
        Ok(trick)
    }
}

/// The legal moves of the seat on turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Legal {
    /// Nobody is on turn (the match is over).
    None,
    /// Any bid from `min` to `max` (0 is nil).
    Bid {
        /// Lowest bid (0, or 1 with nil off).
        min: u8,
        /// Highest bid (13).
        max: u8,
    },
    /// Any of these cards.
    Play {
        /// The playable cards.
        cards: CardSet,
    },
}

impl Legal {
    /// True when `action` is among these moves.
    pub fn allows(&self, action: Action) -> bool {
        match (*self, action) {
            (Legal::Bid { min, max }, Action::Bid(b)) => (min..=max).contains(&b),
            (Legal::Play { cards }, Action::Play(c)) => cards.contains(c),
            _ => false,
        }
    }

    /// Number of distinct legal actions.
    pub fn count(&self) -> u32 {
        match *self {
            Legal::None => 0,
            Legal::Bid { min, max } => u32::from(max - min) + 1,
            Legal::Play { cards } => cards.len(),
        }
    }
}

/// Something that happened as the result of an accepted action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "event")]
pub enum Event {
    /// A seat bid.
    Bid {
        /// Who bid.
        seat: Seat,
        /// The bid (0 = nil).
        bid: u8,
    },
    /// The fourth bid is in; `leader` leads the first trick.
    BiddingComplete {
        /// Who leads.
        leader: Seat,
    },
    /// A seat played a card.
    Played {
        /// Who played.
        seat: Seat,
        /// The card.
        card: Card,
    },
    /// The first spade of the hand was played.
    SpadesBroken,
    /// A trick was completed.
    TrickWon {
        /// Who took it (and leads next).
        winner: Seat,
        /// The four cards.
        trick: Trick,
    },
    /// The thirteenth trick was taken and the hand scored; the result is
    /// [`crate::Match::results`]`().last()`.
    HandScored {
        /// The number of the hand that was scored.
        hand_number: u16,
    },
    /// A new hand was dealt.
    HandDealt {
        /// Its number (1-based).
        hand_number: u16,
        /// Its dealer.
        dealer: Seat,
    },
    /// The match ended.
    MatchOver(MatchResult),
}

/// The events of one accepted action, in order (never more than seven).
pub type Events = ArrayVec<Event, 8>;

/// Where a hand stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandPhase {
    /// Waiting for bids.
    Bidding,
    /// Tricks are being played.
    Playing,
    /// All thirteen tricks are taken.
    Finished,
}

/// The state of one hand: the four hands of cards, the bids and the tricks.
///
/// A `Hand` knows every seat's cards; it never leaves the engine except
/// through [`crate::SeatView`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hand {
    rules: Rules,
    dealer: Seat,
    phase: HandPhase,
    turn: Seat,
    hands: BySeat<CardSet>,
    bids: BySeat<Option<u8>>,
    trick: Trick,
    tricks: ArrayVec<Trick, 13>,
    tricks_won: BySeat<u8>,
    played: CardSet,
    spades_broken: bool,
}

/// Why a hand could not be built from the given cards.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HandSetupError {
    /// The cards do not make a consistent deal.
    #[error("the cards are not a consistent deal: {0}")]
    Cards(String),
}

impl Hand {
    /// A hand about to be bid: `hands` are the four hands of 13 cards, and the
    /// seat left of `dealer` bids first and leads the first trick.
    ///
    /// # Errors
    /// When the hands are not four disjoint sets of 13 cards.
    pub fn new(rules: Rules, dealer: Seat, hands: BySeat<CardSet>) -> Result<Hand, HandSetupError> {
        let mut all = CardSet::EMPTY;
        for (seat, h) in hands.iter() {
            if h.len() != 13 {
                return Err(HandSetupError::Cards(format!("{seat} holds {} cards, not 13", h.len())));
            }
            if !all.and(*h).is_empty() {
                return Err(HandSetupError::Cards(format!("{} dealt twice", all.and(*h))));
            }
            all = all.or(*h);
        }
        Ok(Hand::dealt(rules, dealer, hands))
    }

    /// Builds a hand from a deal known to be valid (from [`crate::deal`]).
    pub(crate) fn dealt(rules: Rules, dealer: Seat, hands: BySeat<CardSet>) -> Hand {
        let first = dealer.next();
        Hand {
            rules,
            dealer,
            phase: HandPhase::Bidding,
            turn: first,
            hands,
            bids: BySeat([None; 4]),
            trick: Trick::new(first),
            tricks: ArrayVec::new(),
            tricks_won: BySeat([0; 4]),
            played: CardSet::EMPTY,
            spades_broken: false,
        }
    }

    /// Rebuilds the position a seat sees, with a guess for the other seats'
    /// cards: the starting point of a determinised search. `hidden` must give
    /// every other seat exactly the number of cards the view says it holds,
    /// none of them seen; the viewer's entry is ignored.
    ///
    /// # Errors
    /// When the view has no viewer or the guess does not fit it.
    pub fn from_view(view: &crate::SeatView, hidden: BySeat<CardSet>) -> Result<Hand, HandSetupError> {
        let (Some(me), Some(my_hand)) = (view.viewer, view.hand) else {
            return Err(HandSetupError::Cards("a spectator's view has no hand to complete".into()));
        };
        let mut hands = hidden;
        hands[me] = my_hand;
        let mut all = view.played;
        for seat in Seat::ALL {
            let h = hands[seat];
            if h.len() != u32::from(view.cards_left[seat]) {
                return Err(HandSetupError::Cards(format!(
                    "{seat} should hold {} cards, the guess gives {}",
                    view.cards_left[seat],
                    h.len()
                )));
            }
            if !all.and(h).is_empty() {
                return Err(HandSetupError::Cards(format!("{} placed twice", all.and(h))));
            }
            all = all.or(h);
        }
        if all != CardSet::FULL {
            return Err(HandSetupError::Cards("the guess leaves cards unplaced".into()));
        }
        let phase = match view.phase {
            crate::Phase::Bidding => HandPhase::Bidding,
            crate::Phase::Playing => HandPhase::Playing,
            crate::Phase::MatchOver => HandPhase::Finished,
        };
        Ok(Hand {
            rules: view.rules,
            dealer: view.dealer,
            phase,
            turn: view.turn.unwrap_or(view.trick.next_seat()),
            hands,
            bids: view.bids,
            trick: view.trick,
            tricks: view.tricks.clone(),
            tricks_won: view.tricks_won,
            played: view.played,
            spades_broken: view.spades_broken,
        })
    }

    /// The table's rules.
    pub const fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Who dealt this hand.
    pub const fn dealer(&self) -> Seat {
        self.dealer
    }

    /// Bidding, playing or finished.
    pub const fn phase(&self) -> HandPhase {
        self.phase
    }

    /// The seat on turn, `None` once the hand is finished.
    pub fn turn(&self) -> Option<Seat> {
        (self.phase != HandPhase::Finished).then_some(self.turn)
    }

    /// The cards `seat` still holds. Hidden information: only for trusted
    /// code (a view, a search over a guessed deal).
    pub fn cards(&self, seat: Seat) -> CardSet {
        self.hands[seat]
    }

    /// The bids so far.
    pub const fn bids(&self) -> &BySeat<Option<u8>> {
        &self.bids
    }

    /// The trick being played (empty between tricks).
    pub const fn trick(&self) -> &Trick {
        &self.trick
    }

    /// The completed tricks of this hand, in order.
    pub fn tricks(&self) -> &[Trick] {
        &self.tricks
    }

    /// Tricks taken by each seat.
    pub const fn tricks_won(&self) -> &BySeat<u8> {
        &self.tricks_won
    }

    /// Every card played this hand, including the current trick.
    pub const fn played(&self) -> CardSet {
        self.played
    }

    /// True once a spade has been played this hand.
    pub const fn spades_broken(&self) -> bool {
        self.spades_broken
    }

    /// The final bids (0 = nil) once bidding is over.
    pub fn final_bids(&self) -> Option<BySeat<u8>> {
        let b = self.bids.0;
        Some(BySeat([b[0]?, b[1]?, b[2]?, b[3]?]))
    }

    /// The legal moves of the seat on turn.
    #[inline]
    pub fn legal(&self) -> Legal {
        match self.phase {
            HandPhase::Bidding => Legal::Bid { min: self.rules.min_bid(), max: 13 },
            HandPhase::Playing => Legal::Play { cards: self.legal_cards() },
            HandPhase::Finished => Legal::None,
        }
    }

    /// The cards the seat on turn may play (empty unless playing).
    pub fn legal_cards(&self) -> CardSet {
        if self.phase != HandPhase::Playing {
            return CardSet::EMPTY;
        }
        legal_cards(&self.rules, self.hands[self.turn], self.trick.led_suit(), self.spades_broken)
    }

    /// Checks an action without changing anything.
    ///
    /// # Errors
    /// The reason the action would be refused.
    #[inline]
    pub fn check(&self, seat: Seat, action: Action) -> Result<(), ActionError> {
        match self.phase {
            HandPhase::Finished => return Err(ActionError::MatchOver),
            HandPhase::Bidding if matches!(action, Action::Play(_)) => {
                return Err(ActionError::BiddingNotOver);
            }
            HandPhase::Playing if matches!(action, Action::Bid(_)) => {
                return Err(ActionError::BiddingOver);
            }
            _ => {}
        }
        if seat != self.turn {
            return Err(ActionError::NotYourTurn { turn: self.turn });
        }
        match action {
            Action::Bid(bid) => {
                let min = self.rules.min_bid();
                if bid > 13 {
                    Err(ActionError::BidOutOfRange { bid, min })
                } else if bid == 0 && self.rules.nil == NilRule::Off {
                    Err(ActionError::NilNotAllowed)
                } else {
                    Ok(())
                }
            }
            Action::Play(card) => {
                let hand = self.hands[seat];
                let legal = legal_cards(&self.rules, hand, self.trick.led_suit(), self.spades_broken);
                if legal.contains(card) { Ok(()) } else { Err(self.why_not(hand, card)) }
            }
        }
    }

    /// Why `card` is not playable from `hand` now (the slow path of
    /// [`Hand::check`]).
    #[cold]
    fn why_not(&self, hand: CardSet, card: Card) -> ActionError {
        if !hand.contains(card) {
            return ActionError::CardNotInHand { card };
        }
        match self.trick.led_suit() {
            Some(led) => ActionError::MustFollowSuit { led, card },
            None => ActionError::SpadesNotBroken { card },
        }
    }

    /// Checks and applies an action, appending what happened to `events`.
    ///
    /// # Errors
    /// The reason the action was refused; the hand is then unchanged.
    pub fn apply(&mut self, seat: Seat, action: Action, events: &mut Events) -> Result<(), ActionError> {
        self.check(seat, action)?;
        match action {
            Action::Bid(bid) => self.bid(seat, bid, events),
            Action::Play(card) => self.play(seat, card, events),
        }
        Ok(())
    }

    fn bid(&mut self, seat: Seat, bid: u8, events: &mut Events) {
        self.bids[seat] = Some(bid);
        push(events, Event::Bid { seat, bid });
        self.turn = seat.next();
        if self.bids.0.iter().all(Option::is_some) {
            self.phase = HandPhase::Playing;
            self.turn = self.dealer.next();
            self.trick = Trick::new(self.turn);
            push(events, Event::BiddingComplete { leader: self.turn });
        }
    }

    fn play(&mut self, seat: Seat, card: Card, events: &mut Events) {
        self.hands[seat].remove(card);
        self.played.insert(card);
        self.trick.push(card);
        push(events, Event::Played { seat, card });
        if card.is_spade() && !self.spades_broken {
            self.spades_broken = true;
            push(events, Event::SpadesBroken);
        }
        match self.trick.winner() {
            None => self.turn = seat.next(),
            Some(winner) => {
                self.tricks_won[winner] += 1;
                let trick = self.trick;
                self.tricks.push(trick);
                push(events, Event::TrickWon { winner, trick });
                self.trick = Trick::new(winner);
                self.turn = winner;
                if self.tricks.is_full() {
                    self.phase = HandPhase::Finished;
                }
            }
        }
    }
}

/// The cards a player holding `hand` may play: to a trick whose led suit is
/// `led` (or as the leader when `None`), with spades broken or not.
#[inline]
pub fn legal_cards(rules: &Rules, hand: CardSet, led: Option<Suit>, spades_broken: bool) -> CardSet {
    match led {
        Some(led) => {
            let follow = hand.of_suit(led);
            if follow.is_empty() { hand } else { follow }
        }
        None => {
            if spades_broken || rules.spades_lead == SpadesLead::AnyTime {
                hand
            } else {
                let others = hand.minus(CardSet::SPADES);
                if others.is_empty() { hand } else { others }
            }
        }
    }
}

fn push(events: &mut Events, event: Event) {
    // At most: Played, SpadesBroken, TrickWon, HandScored, MatchOver or
    // HandDealt; the buffer holds eight.
    let _ = events.try_push(event);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cards(s: &str) -> CardSet {
        s.parse().unwrap()
    }

    fn card(s: &str) -> Card {
        s.parse().unwrap()
    }

    /// A deal where North has all clubs, East all diamonds, South all hearts,
    /// West all spades.
    fn suited_deal() -> BySeat<CardSet> {
        BySeat::new_with(|s| CardSet::suit(Suit::ALL[usize::from(s.index())]))
    }

    fn bid_all(hand: &mut Hand, bids: [u8; 4]) {
        let mut ev = Events::new();
        let first = hand.dealer().next();
        for i in 0..4u8 {
            let seat = first.offset(i);
            hand.apply(seat, Action::Bid(bids[usize::from(seat.index())]), &mut ev).unwrap();
        }
    }

    #[test]
    fn trick_winner_rules() {
        let mut t = Trick::new(Seat::East);
        for c in ["9H", "QH", "2S", "7H"] {
            t.push(card(c));
        }
        assert_eq!(t.winner(), Some(Seat::West));
        let mut t = Trick::new(Seat::North);
        for c in ["2D", "AC", "AH", "KC"] {
            t.push(card(c));
        }
        assert_eq!(t.winner(), Some(Seat::North));
        assert_eq!(t.card_of(Seat::South), Some(card("AH")));
        assert_eq!(t.card_of(Seat::West), Some(card("KC")));
    }

    #[test]
    fn new_refuses_bad_deals() {
        let mut deal = suited_deal();
        assert!(Hand::new(Rules::default(), Seat::North, deal).is_ok());
        deal[Seat::North].remove(card("2C"));
        assert!(Hand::new(Rules::default(), Seat::North, deal).is_err());
        deal[Seat::North].insert(card("2D"));
        assert!(Hand::new(Rules::default(), Seat::North, deal).is_err());
    }

    #[test]
    fn bidding_order_and_errors() {
        let mut hand = Hand::new(Rules::default(), Seat::West, suited_deal()).unwrap();
        let mut ev = Events::new();
        assert_eq!(hand.turn(), Some(Seat::North));
        assert_eq!(
            hand.apply(Seat::East, Action::Bid(3), &mut ev),
            Err(ActionError::NotYourTurn { turn: Seat::North })
        );
        assert_eq!(
            hand.apply(Seat::North, Action::Bid(14), &mut ev),
            Err(ActionError::BidOutOfRange { bid: 14, min: 0 })
        );
        assert_eq!(
            hand.apply(Seat::North, Action::Play(card("2C")), &mut ev),
            Err(ActionError::BiddingNotOver)
        );
        assert!(ev.is_empty());
        let before = hand.clone();
        hand.apply(Seat::North, Action::Bid(2), &mut ev).unwrap();
        assert_ne!(hand, before);
        assert_eq!(hand.turn(), Some(Seat::East));
        hand.apply(Seat::East, Action::Bid(0), &mut ev).unwrap();
        hand.apply(Seat::South, Action::Bid(13), &mut ev).unwrap();
        hand.apply(Seat::West, Action::Bid(4), &mut ev).unwrap();
        assert_eq!(hand.phase(), HandPhase::Playing);
        assert_eq!(hand.turn(), Some(Seat::North));
        assert_eq!(ev.last(), Some(&Event::BiddingComplete { leader: Seat::North }));
        assert_eq!(hand.apply(Seat::North, Action::Bid(3), &mut ev), Err(ActionError::BiddingOver));
    }

    #[test]
    fn nil_off_refuses_zero() {
        let rules = Rules { nil: NilRule::Off, ..Rules::default() };
        let mut hand = Hand::new(rules, Seat::North, suited_deal()).unwrap();
        let mut ev = Events::new();
        assert_eq!(hand.legal(), Legal::Bid { min: 1, max: 13 });
        assert_eq!(hand.apply(Seat::East, Action::Bid(0), &mut ev), Err(ActionError::NilNotAllowed));
        assert_eq!(
            hand.apply(Seat::East, Action::Bid(14), &mut ev),
            Err(ActionError::BidOutOfRange { bid: 14, min: 1 })
        );
        assert_eq!(
            ActionError::BidOutOfRange { bid: 14, min: 1 }.to_string(),
            "bid must be from 1 to 13 (got 14)"
        );
        hand.apply(Seat::East, Action::Bid(1), &mut ev).unwrap();
    }

    #[test]
    fn follow_suit_and_breaking_spades() {
        // North: clubs + AS; East: diamonds; South: hearts; West: spades but AS + 2C.
        let mut deal = suited_deal();
        deal[Seat::North].remove(card("2C"));
        deal[Seat::North].insert(card("AS"));
        deal[Seat::West].remove(card("AS"));
        deal[Seat::West].insert(card("2C"));
        let mut hand = Hand::new(Rules::default(), Seat::West, deal).unwrap();
        bid_all(&mut hand, [3, 3, 3, 3]);
        let mut ev = Events::new();
        // North may not lead the ace of spades: spades are not broken.
        assert_eq!(
            hand.apply(Seat::North, Action::Play(card("AS")), &mut ev),
            Err(ActionError::SpadesNotBroken { card: card("AS") })
        );
        assert_eq!(
            ActionError::SpadesNotBroken { card: card("AS") }.to_string(),
            "spades are not broken yet"
        );
        assert!(!hand.legal_cards().contains(card("AS")));
        assert_eq!(
            hand.apply(Seat::North, Action::Play(card("2D")), &mut ev),
            Err(ActionError::CardNotInHand { card: card("2D") })
        );
        hand.apply(Seat::North, Action::Play(card("3C")), &mut ev).unwrap();
        // East is void in clubs: anything goes.
        assert_eq!(hand.legal_cards(), hand.cards(Seat::East));
        hand.apply(Seat::East, Action::Play(card("2D")), &mut ev).unwrap();
        hand.apply(Seat::South, Action::Play(card("2H")), &mut ev).unwrap();
        // West holds the 2C and must follow.
        assert_eq!(hand.legal_cards(), cards("2C"));
        let err = hand.apply(Seat::West, Action::Play(card("KS")), &mut ev).unwrap_err();
        assert_eq!(err, ActionError::MustFollowSuit { led: Suit::Clubs, card: card("KS") });
        assert_eq!(err.to_string(), "you must follow the led suit (clubs)");
        assert_eq!(err.code(), "must_follow_suit");
        hand.apply(Seat::West, Action::Play(card("2C")), &mut ev).unwrap();
        assert_eq!(hand.tricks_won()[Seat::North], 1);
        assert!(!hand.spades_broken());
        // North leads again; a club, East cuts? East has no spades. Lead 4C,
        // West (all spades now) trumps and breaks spades.
        ev.clear();
        hand.apply(Seat::North, Action::Play(card("4C")), &mut ev).unwrap();
        hand.apply(Seat::East, Action::Play(card("3D")), &mut ev).unwrap();
        hand.apply(Seat::South, Action::Play(card("3H")), &mut ev).unwrap();
        hand.apply(Seat::West, Action::Play(card("2S")), &mut ev).unwrap();
        assert!(hand.spades_broken());
        assert!(ev.contains(&Event::SpadesBroken));
        assert_eq!(hand.turn(), Some(Seat::West));
        assert_eq!(hand.tricks_won()[Seat::West], 1);
        // West holds only spades and leads one; North now may lead spades too.
        assert_eq!(hand.legal_cards(), hand.cards(Seat::West));
    }

    #[test]
    fn all_spades_hand_may_lead_spades_and_that_breaks_them() {
        let mut hand = Hand::new(Rules::default(), Seat::South, suited_deal()).unwrap();
        bid_all(&mut hand, [1, 1, 1, 1]);
        assert_eq!(hand.turn(), Some(Seat::West));
        assert_eq!(hand.legal_cards().len(), 13);
        let mut ev = Events::new();
        hand.apply(Seat::West, Action::Play(card("2S")), &mut ev).unwrap();
        assert!(hand.spades_broken());
    }

    #[test]
    fn spades_any_time_option() {
        let rules = Rules { spades_lead: SpadesLead::AnyTime, ..Rules::default() };
        let mut deal = suited_deal();
        deal[Seat::North].remove(card("2C"));
        deal[Seat::North].insert(card("AS"));
        deal[Seat::West].remove(card("AS"));
        deal[Seat::West].insert(card("2C"));
        let mut hand = Hand::new(rules, Seat::West, deal).unwrap();
        bid_all(&mut hand, [3, 3, 3, 3]);
        assert!(hand.legal_cards().contains(card("AS")));
        let mut ev = Events::new();
        hand.apply(Seat::North, Action::Play(card("AS")), &mut ev).unwrap();
    }

    #[test]
    fn a_whole_hand_finishes_after_thirteen_tricks() {
        let mut hand = Hand::new(Rules::default(), Seat::North, suited_deal()).unwrap();
        bid_all(&mut hand, [0, 0, 0, 13]);
        let mut ev = Events::new();
        while let Some(seat) = hand.turn() {
            let c = hand.legal_cards().first().unwrap();
            hand.apply(seat, Action::Play(c), &mut ev).unwrap();
        }
        assert_eq!(hand.phase(), HandPhase::Finished);
        assert_eq!(hand.tricks().len(), 13);
        assert_eq!(hand.played(), CardSet::FULL);
        assert_eq!(hand.tricks_won().0.iter().sum::<u8>(), 13);
        assert_eq!(hand.tricks_won()[Seat::West], 13);
        assert_eq!(hand.legal(), Legal::None);
        assert_eq!(hand.check(Seat::North, Action::Bid(1)), Err(ActionError::MatchOver));
    }

    #[test]
    fn serde_forms() {
        assert_eq!(serde_json::to_string(&Action::Bid(3)).unwrap(), r#"{"bid":3}"#);
        let m = Move { seat: Seat::North, action: Action::Play(card("AS")) };
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(json, r#"{"seat":"north","play":"AS"}"#);
        assert_eq!(serde_json::from_str::<Move>(&json).unwrap(), m);
        let mut t = Trick::new(Seat::East);
        t.push(card("9H"));
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, r#"{"leader":"east","cards":["9H"],"winner":null}"#);
        assert_eq!(serde_json::from_str::<Trick>(&json).unwrap(), t);
        assert!(serde_json::from_str::<Trick>(r#"{"leader":"east","cards":["9H","9H"]}"#).is_err());
        assert!(
            serde_json::from_str::<Trick>(r#"{"leader":"east","cards":["2H","3H","4H","5H","6H"]}"#).is_err()
        );
        let legal = Legal::Play { cards: cards("AS 2C") };
        assert_eq!(serde_json::to_string(&legal).unwrap(), r#"{"kind":"play","cards":["2C","AS"]}"#);
    }
}
