//! The rules of partnership Spades: pure, deterministic and fast.
//!
//! No async, no I/O, no clock and no randomness except the seeded, portable
//! generator every deal comes from. Cards are bytes, hands are 52-bit sets.
//!
//! A [`Match`] is built from [`Rules`] and a 64-bit seed. The seat on turn
//! makes an [`Action`] (a bid or a card); [`Match::apply`] either changes the
//! state and returns the [`Event`]s that happened, or refuses with an
//! [`ActionError`] carrying a stable code and a plain-English reason, and
//! leaves the state untouched. [`Match::view`] gives the redacted
//! [`SeatView`] of one seat (or of a spectator): the only way the state should
//! leave the engine for a client.
//!
//! ```
//! use spades_engine::{Action, Legal, Match, Rules};
//!
//! let mut m = Match::new(Rules::default(), 2024);
//! // Bidding: each seat in turn, starting left of the dealer.
//! for _ in 0..4 {
//!     let seat = m.turn().unwrap();
//!     m.apply(seat, Action::Bid(3)).unwrap();
//! }
//! // Play one trick with the lowest legal card.
//! for _ in 0..4 {
//!     let seat = m.turn().unwrap();
//!     let Legal::Play { cards } = m.legal_moves() else { unreachable!() };
//!     m.apply(seat, Action::Play(cards.first().unwrap())).unwrap();
//! }
//! assert_eq!(m.view(None).tricks.len(), 1);
//!
//! // A refused move says why and changes nothing.
//! let wrong = m.turn().unwrap().next();
//! let err = m.apply(wrong, Action::Bid(3)).unwrap_err();
//! assert_eq!(err.code(), "bidding_over");
//!
//! // The seed and the accepted moves rebuild the match exactly.
//! let again = Match::replay(*m.rules(), m.seed(), m.moves().iter().copied()).unwrap();
//! assert_eq!(again, m);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod card;
mod deal;
mod error;
mod fair;
mod game;
mod hand;
mod rules;
#[cfg(feature = "schema")]
mod schema;
mod scoring;
mod seat;
mod view;

pub use card::{Card, CardSet, CardSetIter, ParseCardError, ParseNameError, Rank, Suit};
pub use deal::{deal, first_dealer};
pub use error::ActionError;
pub use fair::{ClientSeed, Commitment, FAIR_VERSION, FairSeeds, ParseSeedError, ServerSeed, hmac_sha256};
pub use game::{Match, Phase, ReplayError};
pub use hand::{Action, Event, Events, Hand, HandPhase, HandSetupError, Legal, Move, Trick, legal_cards};
pub use rules::{
    BagPenalty, FailedNil, HAND_CAP, HANDS_CHOICES, MERCY_FLOOR, MatchEnd, NilRule, Rules, RulesError,
    SpadesLead, TARGET_CHOICES,
};
pub use scoring::{
    EndReason, HandResult, MatchResult, NilResult, Outcome, PlayerLine, TeamHandScore, match_end, score_team,
};
pub use seat::{BySeat, ByTeam, ParseSeatError, Seat, Team};
pub use view::SeatView;

#[cfg(test)]
mod proptests;
