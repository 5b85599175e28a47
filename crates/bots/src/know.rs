//! What one seat knows: its own cards and the public record of the hand.
//!
//! Everything here is derived from a [`SeatView`] (or, inside a simulation,
//! from the same public facts tracked move by move), so a bot can take over
//! a seat at any point of a hand and never sees a hidden card.

use spades_engine::{Card, CardSet, Rules, Seat, SeatView, SpadesLead, Suit, Team, Trick};

/// Bit of `suit` in a void mask.
#[inline]
pub(crate) const fn suit_bit(suit: Suit) -> u8 {
    1 << suit.index()
}

/// The cards of `card`'s suit ranked above it.
#[inline]
pub(crate) const fn above(card: Card) -> CardSet {
    let idx = card.index() as u32;
    let suit_top = (idx / 13) * 13 + 13; // one past the suit's ace
    // Bits idx+1 .. suit_top.
    let upto = if suit_top >= 64 { u64::MAX } else { (1u64 << suit_top) - 1 };
    CardSet::from_bits(upto & !((1u64 << (idx + 1)) - 1))
}

/// The cards of `card`'s suit ranked below it.
#[inline]
pub(crate) const fn below(card: Card) -> CardSet {
    let idx = card.index() as u32;
    let suit_base = (idx / 13) * 13;
    CardSet::from_bits(((1u64 << idx) - 1) & !((1u64 << suit_base) - 1))
}

/// True when `card` beats `best`, the card currently winning a trick.
#[inline]
pub(crate) fn beats(card: Card, best: Card) -> bool {
    (card.suit() == best.suit() && card > best) || (card.is_spade() && !best.is_spade())
}

/// The cards of `set` that would beat `best`.
#[inline]
pub(crate) fn winners(set: CardSet, best: Card) -> CardSet {
    let same = set.and(above(best));
    if best.is_spade() { same } else { same.or(set.of_suit(Suit::Spades)) }
}

/// Records what one played card tells everyone: a seat that does not follow
/// the led suit is void in it; a spade led before spades are broken (where
/// that is refused while other suits are held) shows a hand of only spades.
#[inline]
pub(crate) fn observe(
    voids: &mut [u8; 4],
    rules: &Rules,
    seat: Seat,
    card: Card,
    led: Option<Suit>,
    spades_broken: bool,
) {
    let s = usize::from(seat.index());
    match led {
        Some(led) if card.suit() != led => voids[s] |= suit_bit(led),
        Some(_) => {}
        None => {
            if card.is_spade() && !spades_broken && rules.spades_lead == SpadesLead::AfterBroken {
                voids[s] |= 0b0111;
            }
        }
    }
}

/// The public facts of a hand plus one seat's own cards.
#[derive(Debug, Clone)]
pub(crate) struct Knowledge {
    /// The seat this knowledge belongs to.
    pub me: Seat,
    /// Its cards.
    pub hand: CardSet,
    /// Every card played this hand (including the current trick).
    pub played: CardSet,
    /// The cards each seat has played this hand.
    pub played_by: [CardSet; 4],
    /// Suits each seat has shown out of (bit per suit).
    pub voids: [u8; 4],
    /// Cards each seat still holds.
    pub cards_left: [u8; 4],
}

impl Knowledge {
    /// Derives the knowledge of the viewer of `view`; `None` for a spectator.
    pub(crate) fn from_view(view: &SeatView) -> Option<Knowledge> {
        let me = view.viewer?;
        let hand = view.hand?;
        let mut voids = [0u8; 4];
        let mut played_by = [CardSet::EMPTY; 4];
        let mut broken = false;
        let tricks = view.tricks.iter().chain(std::iter::once(&view.trick));
        for trick in tricks {
            let mut led = None;
            for (seat, card) in trick.plays() {
                observe(&mut voids, &view.rules, seat, card, led, broken);
                played_by[usize::from(seat.index())].insert(card);
                if led.is_none() {
                    led = Some(card.suit());
                }
                broken |= card.is_spade();
            }
        }
        Some(Knowledge { me, hand, played: view.played, played_by, voids, cards_left: view.cards_left.0 })
    }

    /// The cards held by the other three seats.
    pub(crate) fn unknown(&self) -> CardSet {
        CardSet::FULL.minus(self.played).minus(self.hand)
    }
}

/// Everything the rule policy looks at to choose a card: one seat's hand and
/// the public state. Built from a view, or from a simulated hand (where the
/// other seats' cards are never read).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlayCtx {
    /// The seat to play.
    pub me: Seat,
    /// Its cards.
    pub hand: CardSet,
    /// Its legal cards (never empty when built by the callers).
    pub legal: CardSet,
    /// The trick in progress.
    pub trick: Trick,
    /// Every card played this hand (including the current trick).
    pub played: CardSet,
    /// Suits each seat has shown out of.
    pub voids: [u8; 4],
    /// The four bids (0 = nil).
    pub bids: [u8; 4],
    /// Tricks taken by each seat.
    pub won: [u8; 4],
    /// The table's rules.
    pub rules: Rules,
}

impl PlayCtx {
    /// True when `seat` has shown out of `suit`.
    #[inline]
    pub(crate) fn void(&self, seat: Seat, suit: Suit) -> bool {
        self.voids[usize::from(seat.index())] & suit_bit(suit) != 0
    }

    /// Cards the other three seats may hold.
    #[inline]
    pub(crate) fn unknown(&self) -> CardSet {
        CardSet::FULL.minus(self.played).minus(self.hand)
    }

    /// True while `seat` bid nil and has not taken a trick.
    #[inline]
    pub(crate) fn nil_alive(&self, seat: Seat) -> bool {
        let s = usize::from(seat.index());
        self.bids[s] == 0 && self.won[s] == 0
    }

    /// Tricks still to be completed (including the current one).
    #[inline]
    pub(crate) fn tricks_left(&self) -> u8 {
        13u8.saturating_sub(self.won.iter().sum())
    }

    /// Tricks `team` still needs for its contract (0 once made).
    #[inline]
    pub(crate) fn need(&self, team: Team) -> u8 {
        need(&self.rules, team, &self.bids, &self.won)
    }
}

/// Tricks `team` still needs for its contract (0 once made).
#[inline]
pub(crate) fn need(rules: &Rules, team: Team, bids: &[u8; 4], won: &[u8; 4]) -> u8 {
    let mut contract = 0u8;
    let mut counted = 0u8;
    for seat in team.seats() {
        let s = usize::from(seat.index());
        if bids[s] > 0 {
            contract += bids[s];
            counted += won[s];
        } else if rules.failed_nil == spades_engine::FailedNil::CountForPartner {
            counted += won[s];
        }
    }
    contract.saturating_sub(counted)
}

/// The rule policy's context for the viewer of `view`, when it is to play.
pub(crate) fn ctx_from_view(view: &SeatView, k: &Knowledge, legal: CardSet) -> PlayCtx {
    PlayCtx {
        me: k.me,
        hand: k.hand,
        legal,
        trick: view.trick,
        played: view.played,
        voids: k.voids,
        bids: view.bids.0.map(|b| b.unwrap_or(1)),
        won: view.tricks_won.0,
        rules: view.rules,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(s: &str) -> Card {
        s.parse().unwrap()
    }

    #[test]
    fn above_and_below_stay_in_suit() {
        assert_eq!(above(c("QH")).to_string(), "KH AH");
        assert_eq!(above(c("AS")), CardSet::EMPTY);
        assert_eq!(above(c("JS")).to_string(), "QS KS AS");
        assert_eq!(below(c("4D")).to_string(), "2D 3D");
        assert_eq!(below(c("2C")), CardSet::EMPTY);
        assert_eq!(above(c("2C")).len(), 12);
        assert_eq!(below(c("AS")).len(), 12);
    }

    #[test]
    fn winners_respect_trumps() {
        let hand: CardSet = "2H KH 3S 9C".parse().unwrap();
        assert_eq!(winners(hand, c("QH")).to_string(), "KH 3S");
        assert_eq!(winners(hand, c("4S")), CardSet::EMPTY);
        assert!(beats(c("2S"), c("AH")));
        assert!(!beats(c("AD"), c("2H")));
    }
}
