//! Change frames: what changed in a table since the previous frame, and how
//! a client applies it to the view it holds (`docs/protocol.md`, "Change
//! frames").

use serde::{Deserialize, Deserializer, Serialize};
use spades_engine::{Action, CardSet, HandResult, Legal, MatchResult, Phase, Seat, Team, Trick};
use utoipa::ToSchema;

use crate::{Clock, ClockKind, Fairness, LastAction, PlayedForYou, Rematch, SeatInfo, TablePhase, TableView};

/// What changed since the frame before (`seq - 1`). Every field but
/// `server_time` is absent when it did not change. Only the fields that can
/// be cleared (`turn`, `clock`, `fair`, `rematch`) may be `null`, which
/// clears them; the server never sends `null` for the others (a client
/// reading one takes it as absent).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct Change {
    /// The server's time when the change was made (Unix time, ms).
    pub server_time: u64,
    /// A bid or a card was played.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub action: Option<LastAction>,
    /// The card completed the trick, won by this seat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub trick_won: Option<Seat>,
    /// The hand ended: its scoring.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub hand_scored: Option<HandResult>,
    /// The next hand was dealt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub deal: Option<Deal>,
    /// With `deal`, for a seat only: its new cards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub hand: Option<CardSet>,
    /// The table's phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub phase: Option<TablePhase>,
    /// The seat on turn (`null`: nobody).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    #[schema(value_type = Option<Seat>)]
    pub turn: Option<Option<Seat>>,
    /// This connection's legal moves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub legal: Option<Legal>,
    /// How the match ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub result: Option<MatchResult>,
    /// The seats that changed, each a whole entry.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seats: Vec<SeatInfo>,
    /// The turn clock (`null`: none).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    #[schema(value_type = Option<ClockChange>)]
    pub clock: Option<Option<ClockChange>>,
    /// The fair-deal information.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    #[schema(value_type = Option<Fairness>)]
    pub fair: Option<Option<Fairness>>,
    /// Who is ready for a rematch (`null`: no rematch).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    #[schema(value_type = Option<Rematch>)]
    pub rematch: Option<Option<Rematch>>,
    /// For a seat only: the moves the table made for it, the whole list
    /// (`[]`: none any more, the view then has no `played_for_you`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub played_for_you: Option<Vec<PlayedForYou>>,
}

/// A turn clock in a change frame: like [`Clock`], with `kind` and
/// `duration_ms` left out when they are the same as the clock the view
/// holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ClockChange {
    /// The seat on turn.
    pub seat: Seat,
    /// When the turn runs out (Unix time, ms).
    pub deadline: u64,
    /// Bid or card; absent: the held clock's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ClockKind>,
    /// The turn's whole time; absent: the held clock's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

impl ClockChange {
    /// The change from the clock `before` to `now`.
    #[must_use]
    pub fn between(before: Option<Clock>, now: Clock) -> ClockChange {
        ClockChange {
            seat: now.seat,
            deadline: now.deadline,
            kind: (before.map(|c| c.kind) != Some(now.kind)).then_some(now.kind),
            duration_ms: (before.map(|c| c.duration_ms) != Some(now.duration_ms)).then_some(now.duration_ms),
        }
    }
}

/// The next hand's number and dealer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Deal {
    /// The new hand's number (1-based).
    pub hand_number: u16,
    /// Who dealt it.
    pub dealer: Seat,
}

/// A field that is present: `null` is `Some(None)`, absence (through
/// `default`) is `None`.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// Why a change could not be applied: the client must ask for a snapshot
/// (`sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApplyError {
    /// The change speaks of a game the view does not have.
    NoGame,
    /// A card the view cannot take (a fifth card in a trick, a repeat).
    BadCard,
    /// A trick won that is not complete, or a fourteenth trick.
    BadTrick,
    /// A clock without its kind or duration where the view holds none.
    BadClock,
}

impl std::fmt::Display for ApplyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ApplyError::NoGame => "a change for a game the view does not have",
            ApplyError::BadCard => "a card the view cannot take",
            ApplyError::BadTrick => "a trick the view cannot complete",
            ApplyError::BadClock => "a clock the view cannot complete",
        })
    }
}

impl std::error::Error for ApplyError {}

impl Change {
    /// True when nothing but the time changed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Change { server_time: self.server_time, ..Change::default() }
    }
}

impl TableView {
    /// Applies `change` (the frame after this view) as `docs/protocol.md`
    /// says. On an error the view may be half changed: take a snapshot.
    ///
    /// # Errors
    /// When the change does not fit this view.
    pub fn apply(&mut self, change: &Change) -> Result<(), ApplyError> {
        self.server_time = change.server_time;
        let you = self.you;
        if let Some(action) = change.action {
            self.last_action = Some(action);
            let game = self.game.as_mut().ok_or(ApplyError::NoGame)?;
            match action.action {
                Action::Bid(b) => game.bids[action.seat] = Some(b),
                Action::Play(card) => {
                    let mut cards: Vec<_> = game.trick.cards().to_vec();
                    cards.push(card);
                    game.trick = Trick::from_cards(game.trick.leader(), &cards).ok_or(ApplyError::BadCard)?;
                    game.played.insert(card);
                    let left = &mut game.cards_left[action.seat];
                    *left = left.checked_sub(1).ok_or(ApplyError::BadCard)?;
                    if you == Some(action.seat)
                        && let Some(hand) = game.hand.as_mut()
                    {
                        hand.remove(card);
                    }
                    if card.is_spade() {
                        game.spades_broken = true;
                    }
                }
            }
        }
        if let Some(winner) = change.trick_won {
            let game = self.game.as_mut().ok_or(ApplyError::NoGame)?;
            let trick = game.trick;
            if trick.winner() != Some(winner) {
                return Err(ApplyError::BadTrick);
            }
            game.tricks.try_push(trick).map_err(|_| ApplyError::BadTrick)?;
            game.last_trick = Some(trick);
            game.tricks_won[winner] += 1;
            game.trick = Trick::new(winner);
        }
        if let Some(scored) = &change.hand_scored {
            let game = self.game.as_mut().ok_or(ApplyError::NoGame)?;
            for t in Team::ALL {
                game.scores[t] = scored.teams[t].score;
                game.bags[t] = scored.teams[t].bag_count;
            }
            game.last_hand = Some(scored.clone());
            self.last_action = None;
        }
        if let Some(deal) = change.deal {
            let game = self.game.as_mut().ok_or(ApplyError::NoGame)?;
            game.hand_number = deal.hand_number;
            game.dealer = deal.dealer;
            game.hand = if you.is_some() { change.hand } else { None };
            game.cards_left = spades_engine::BySeat([13; 4]);
            game.bids = spades_engine::BySeat([None; 4]);
            game.tricks_won = spades_engine::BySeat([0; 4]);
            game.trick = Trick::new(deal.dealer.next());
            game.last_trick = None;
            game.tricks.clear();
            game.played = CardSet::EMPTY;
            game.spades_broken = false;
            self.last_action = None;
        }
        if let Some(phase) = change.phase {
            self.phase = phase;
            if let Some(game) = self.game.as_mut() {
                game.phase = match phase {
                    TablePhase::Lobby | TablePhase::Bidding => Phase::Bidding,
                    TablePhase::Playing => Phase::Playing,
                    TablePhase::Finished => Phase::MatchOver,
                };
            }
        }
        if let Some(turn) = change.turn {
            self.game.as_mut().ok_or(ApplyError::NoGame)?.turn = turn;
        }
        if let Some(legal) = change.legal {
            self.game.as_mut().ok_or(ApplyError::NoGame)?.legal = legal;
        }
        if let Some(result) = change.result {
            self.game.as_mut().ok_or(ApplyError::NoGame)?.result = Some(result);
            self.last_action = None;
        }
        for info in &change.seats {
            self.seats[usize::from(info.seat.index())] = info.clone();
        }
        if let Some(clock) = change.clock {
            self.clock = match clock {
                None => None,
                Some(c) => {
                    let held = self.clock;
                    Some(Clock {
                        seat: c.seat,
                        deadline: c.deadline,
                        kind: c.kind.or(held.map(|h| h.kind)).ok_or(ApplyError::BadClock)?,
                        duration_ms: c
                            .duration_ms
                            .or(held.map(|h| h.duration_ms))
                            .ok_or(ApplyError::BadClock)?,
                    })
                }
            };
        }
        if let Some(fair) = &change.fair {
            self.fair = fair.clone();
        }
        if let Some(rematch) = change.rematch {
            self.rematch = rematch;
        }
        if let Some(played) = &change.played_for_you {
            self.played_for_you.clone_from(played);
        }
        Ok(())
    }
}
