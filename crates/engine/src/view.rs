//! Redacted views: what one seat, or a spectator, may see.

use arrayvec::ArrayVec;
use serde::{Deserialize, Serialize};

use crate::card::CardSet;
use crate::game::{Match, Phase};
use crate::hand::{Legal, Trick};
use crate::rules::Rules;
use crate::scoring::{HandResult, MatchResult};
use crate::seat::{BySeat, ByTeam, Seat};

/// What one seat (or a spectator) may see of a match: its own hand and
/// public information only.
///
/// A seat's view holds that seat's cards and nothing of the other hands
/// beyond how many cards each has left; a spectator's view holds no hand.
/// Every card other than the viewer's own that appears here has been played
/// face up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SeatView {
    /// The seat this view is for; `None` for a spectator.
    pub viewer: Option<Seat>,
    /// The table's rules.
    pub rules: Rules,
    /// Bidding, playing or over.
    pub phase: Phase,
    /// The current hand (1-based).
    pub hand_number: u16,
    /// Who dealt the current hand.
    pub dealer: Seat,
    /// The seat on turn, if any.
    pub turn: Option<Seat>,
    /// The viewer's own cards; `None` for a spectator.
    pub hand: Option<CardSet>,
    /// How many cards each seat still holds.
    #[cfg_attr(feature = "schema", schema(value_type = [u8; 4]))]
    pub cards_left: BySeat<u8>,
    /// Bids made so far this hand (0 = nil).
    #[cfg_attr(feature = "schema", schema(value_type = [Option<u8>; 4]))]
    pub bids: BySeat<Option<u8>>,
    /// Tricks taken this hand by each seat.
    #[cfg_attr(feature = "schema", schema(value_type = [u8; 4]))]
    pub tricks_won: BySeat<u8>,
    /// The trick being played (possibly empty).
    pub trick: Trick,
    /// The most recently completed trick of this hand (`None` before the
    /// first trick is taken; when the match is over, the last trick).
    pub last_trick: Option<Trick>,
    /// Every completed trick of this hand, in order.
    #[cfg_attr(feature = "schema", schema(value_type = Vec<Trick>))]
    pub tricks: ArrayVec<Trick, 13>,
    /// Every card played this hand (all face up).
    pub played: CardSet,
    /// True once a spade has been played this hand.
    pub spades_broken: bool,
    /// Team scores.
    #[cfg_attr(feature = "schema", schema(value_type = [i32; 2]))]
    pub scores: ByTeam<i32>,
    /// Team bag counts.
    #[cfg_attr(feature = "schema", schema(value_type = [u8; 2]))]
    pub bags: ByTeam<u8>,
    /// The viewer's legal moves when it is on turn, otherwise
    /// [`Legal::None`].
    pub legal: Legal,
    /// The result of the previous hand, if any.
    pub last_hand: Option<HandResult>,
    /// How the match ended, once it has.
    pub result: Option<MatchResult>,
}

impl Match {
    /// What `viewer` may see: its own hand and public information only.
    /// `None` is a spectator, who sees no hand at all.
    ///
    /// This is the only way the state of a match should leave the engine for
    /// a client.
    pub fn view(&self, viewer: Option<Seat>) -> SeatView {
        SeatView::of(self, viewer)
    }
}

impl SeatView {
    fn of(m: &Match, viewer: Option<Seat>) -> SeatView {
        let hand = m.hand();
        let turn = m.turn();
        let legal = if turn.is_some() && turn == viewer { m.legal_moves() } else { Legal::None };
        SeatView {
            viewer,
            rules: *m.rules(),
            phase: m.phase(),
            hand_number: m.hand_number(),
            dealer: hand.dealer(),
            turn,
            hand: viewer.map(|s| hand.cards(s)),
            cards_left: BySeat::new_with(|s| hand.cards(s).len() as u8),
            bids: *hand.bids(),
            tricks_won: *hand.tricks_won(),
            trick: *hand.trick(),
            last_trick: m.last_trick(),
            tricks: hand.tricks().iter().copied().collect(),
            played: hand.played(),
            spades_broken: hand.spades_broken(),
            scores: m.scores(),
            bags: m.bags(),
            legal,
            last_hand: m.results().last().cloned(),
            result: m.result().copied(),
        }
    }
}
