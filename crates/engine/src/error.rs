//! Why a bid or a card was refused.

use crate::card::{Card, Suit};
use crate::seat::Seat;

/// A refused action. The state is unchanged when this is returned.
///
/// Each variant has a stable machine code ([`ActionError::code`]) and a
/// plain-English reason (its `Display`), meant to be shown to the player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ActionError {
    /// The match has ended.
    #[error("the match is over")]
    MatchOver,
    /// Another seat is on turn.
    #[error("not your turn (it is {turn}'s turn)")]
    NotYourTurn {
        /// The seat that is on turn.
        turn: Seat,
    },
    /// A bid during the play of the cards.
    #[error("bidding is over")]
    BiddingOver,
    /// A card before all four seats have bid.
    #[error("bidding is not over yet: the play starts once all four seats have bid")]
    BiddingNotOver,
    /// A bid outside the table's range.
    #[error("bid must be from {min} to 13 (got {bid})")]
    BidOutOfRange {
        /// The refused bid.
        bid: u8,
        /// The lowest bid allowed at this table.
        min: u8,
    },
    /// A nil bid at a table with nil switched off.
    #[error("nil is switched off at this table: bid from 1 to 13")]
    NilNotAllowed,
    /// The card is not in the player's hand.
    #[error("that card is not in your hand ({card})")]
    CardNotInHand {
        /// The refused card.
        card: Card,
    },
    /// The player holds the led suit and played another.
    #[error("you must follow the led suit ({led})")]
    MustFollowSuit {
        /// The suit that was led.
        led: Suit,
        /// The refused card.
        card: Card,
    },
    /// A spade lead before spades are broken, from a hand with other suits.
    #[error("spades are not broken yet")]
    SpadesNotBroken {
        /// The refused card.
        card: Card,
    },
}

impl ActionError {
    /// Every stable code, for documentation and tests.
    pub const CODES: [&'static str; 9] = [
        "match_over",
        "not_your_turn",
        "bidding_over",
        "bidding_not_over",
        "bid_out_of_range",
        "nil_not_allowed",
        "card_not_in_hand",
        "must_follow_suit",
        "spades_not_broken",
    ];

    /// The stable machine code, e.g. `"must_follow_suit"`.
    pub const fn code(&self) -> &'static str {
        match self {
            ActionError::MatchOver => "match_over",
            ActionError::NotYourTurn { .. } => "not_your_turn",
            ActionError::BiddingOver => "bidding_over",
            ActionError::BiddingNotOver => "bidding_not_over",
            ActionError::BidOutOfRange { .. } => "bid_out_of_range",
            ActionError::NilNotAllowed => "nil_not_allowed",
            ActionError::CardNotInHand { .. } => "card_not_in_hand",
            ActionError::MustFollowSuit { .. } => "must_follow_suit",
            ActionError::SpadesNotBroken { .. } => "spades_not_broken",
        }
    }
}
