//! Moves the table makes for a seat: a bot's, the autopilot's, or a
//! timeout's.
//!
//! The rule bot answers at once, on the table's task. A search runs on the
//! blocking pool, at most `search_slots` at a time on the whole server (the
//! rule bot answers when none is free); its answer comes back through a
//! one-shot channel that the table's task waits on beside its command
//! queue, so no number of queued commands can lose it.

use spades_bots::Strength;
use spades_engine::{Action, Seat};
use spades_protocol::ActionSource;
use tokio::sync::oneshot;
use tokio::time::Instant;
use tracing::warn;

use super::Table;
use super::moves::{NotApplied, Pending};

/// A search under way for one turn.
#[derive(Debug)]
pub(super) struct PendingDecision {
    turn: usize,
    seat: Seat,
    source: ActionSource,
    rx: oneshot::Receiver<Action>,
}

/// A finished search: its turn, seat, source and move (`None` when the
/// search died).
pub(super) type Decision = (usize, Seat, ActionSource, Option<Action>);

/// Waits for the pending search, forever when there is none.
pub(super) async fn decision(pending: &mut Option<PendingDecision>) -> Decision {
    match pending {
        Some(p) => {
            let action = (&mut p.rx).await.ok();
            let decision = (p.turn, p.seat, p.source, action);
            *pending = None;
            decision
        }
        None => std::future::pending().await,
    }
}

impl Table {
    /// Plays for `seat` on `turn`: on a timeout, for the autopilot or a bot.
    pub(super) async fn table_move(&mut self, seat: Seat, turn: usize, source: ActionSource) {
        let Some(m) = self.game.as_ref() else { return };
        if m.turn() != Some(seat) || m.moves().len() != turn {
            return;
        }
        if self.bot_pending.as_ref().is_some_and(|p| p.turn == turn)
            || self.retry.as_ref().is_some_and(|r| r.holds_move(turn))
        {
            // Already decided or being decided.
            return;
        }
        let view = m.view(Some(seat));
        let seed = m.seed() ^ (turn as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let strength = self.settings.strength;
        if strength == Strength::Search {
            match std::sync::Arc::clone(&self.settings.search_slots).try_acquire_owned() {
                Ok(permit) => {
                    let (tx, rx) = oneshot::channel();
                    self.bot_pending = Some(PendingDecision { turn, seat, source, rx });
                    tokio::task::spawn_blocking(move || {
                        let _permit = permit;
                        let _ = tx.send(spades_bots::choose(strength, &view, seed));
                    });
                    return;
                }
                Err(_) => {
                    // Every search slot is busy: the rule bot answers now
                    // rather than make the table wait.
                    metrics::counter!("spades_bot_search_fallbacks_total").increment(1);
                }
            }
        }
        let action = spades_bots::choose(Strength::Rule, &view, seed);
        self.decided(seat, turn, action, source, Instant::now()).await;
    }

    /// A search finished.
    pub(super) async fn on_decision(&mut self, (turn, seat, source, action): Decision) {
        let now = Instant::now();
        let current = self.game.as_ref().is_some_and(|m| m.moves().len() == turn && m.turn() == Some(seat));
        // A person took the seat while the bot thought (came back, or was
        // invited): the move is theirs to make, unless their clock ran out.
        let taken = source != ActionSource::Timeout
            && self.seats[seat].as_ref().is_some_and(|o| !super::seats::Occupant::auto_played(o));
        if !current || taken {
            if taken {
                self.arm_turn(now);
            }
            return;
        }
        let action = match action {
            Some(a) => a,
            None => {
                warn!(%seat, "a bot search failed: the rule bot plays");
                let Some(m) = self.game.as_ref() else { return };
                spades_bots::choose(Strength::Rule, &m.view(Some(seat)), m.seed() ^ turn as u64)
            }
        };
        self.decided(seat, turn, action, source, now).await;
        self.settle_dropped(now);
    }

    /// Commits a move the table chose; a failed write is retried until it
    /// is stored, so the decision is never lost.
    async fn decided(&mut self, seat: Seat, turn: usize, action: Action, source: ActionSource, now: Instant) {
        if let Err(NotApplied::Storage) = self.commit(seat, action, source, now, None).await {
            self.retry_later(Pending::Move { seat, turn, action, source });
        }
    }
}
