//! Moves: a player's, or one the table makes for a seat, checked by the
//! engine, written to the event log before anybody sees it, then applied.
//!
//! Storage failures never stall a table. A player's move that cannot be
//! written is refused with `storage_unavailable` (nothing changed); a move the
//! table makes, and every other write, is retried with backoff until storage
//! answers again. Writes are idempotent, so a write reported failed that in
//! fact committed is harmless; when the log holds a different move at the
//! same place, the table reloads itself from the log.

use std::time::Duration;

use spades_engine::{Action, Seat};
use spades_protocol::{ActionSource, ErrorCode, LastAction, PlayedForYou, ServerMessage};
use tokio::time::Instant;
use tracing::{debug, info, warn};

use super::{ConnId, Table};
use crate::storage::ActionRecord;

/// The longest wait between two retries of a failed write.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Storage work to do again.
#[derive(Debug, Clone, Copy)]
pub(super) enum Pending {
    /// The seats.
    Seats,
    /// Hand results not yet written.
    Hands,
    /// The match result.
    Finish,
    /// A move the table made (bot, autopilot, timeout) for this turn.
    Move { seat: Seat, turn: usize, action: Action, source: ActionSource },
    /// Memory may disagree with the log: read the table back.
    Reload,
}

/// Failed storage work and when to try it again.
#[derive(Debug, Default)]
pub(super) struct Retry {
    seats: bool,
    hands: bool,
    finish: bool,
    table_move: Option<(Seat, usize, Action, ActionSource)>,
    reload: bool,
    attempt: u32,
    due: Option<Instant>,
}

impl Retry {
    pub(super) fn due(&self) -> Option<Instant> {
        self.due
    }

    /// The move waiting to be written for `turn`, if any.
    pub(super) fn holds_move(&self, turn: usize) -> bool {
        self.table_move.is_some_and(|(_, t, _, _)| t == turn)
    }
}

/// The wait before retry number `attempt` (0-based): 100 ms doubling up to
/// [`MAX_BACKOFF`].
fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(100u64.saturating_mul(1 << attempt.min(16))).min(MAX_BACKOFF)
}

/// Why a move was not applied.
#[derive(Debug)]
pub(super) enum NotApplied {
    /// The engine refused it (the state had moved on).
    Illegal,
    /// The log could not be written.
    Storage,
    /// The log holds a different move at this place: the table reloaded.
    Conflict,
    /// The table's lease is another node's (cluster mode): it stops here,
    /// and the move is for its next owner to answer.
    Lost,
}

impl Table {
    /// Schedules `work` to be retried with backoff.
    pub(super) fn retry_later(&mut self, work: Pending) {
        let r = self.retry.get_or_insert_with(Retry::default);
        match work {
            Pending::Seats => r.seats = true,
            Pending::Hands => r.hands = true,
            Pending::Finish => r.finish = true,
            Pending::Move { seat, turn, action, source } => r.table_move = Some((seat, turn, action, source)),
            Pending::Reload => r.reload = true,
        }
        if r.due.is_none() {
            r.due = Some(Instant::now() + backoff(r.attempt));
        }
    }

    /// True while memory is known to be behind the log.
    fn must_reload(&self) -> bool {
        self.retry.as_ref().is_some_and(|r| r.reload)
    }

    /// Tries the failed storage work again; what still fails waits longer.
    pub(super) async fn run_retry(&mut self, now: Instant) {
        let Some(mut r) = self.retry.take() else { return };
        metrics::counter!("spades_storage_retries_total").increment(1);
        let mut failed = false;
        if r.reload {
            r.reload = false;
            if !self.reload(now).await {
                r.reload = true;
                failed = true;
            }
        }
        if !failed && r.seats {
            match self.write_seats().await {
                Ok(()) => r.seats = false,
                Err(_) => failed = true,
            }
        }
        if !failed && r.hands {
            r.hands = false;
            failed = !self.store_hands().await;
            r.hands |= failed;
        }
        if !failed && r.finish {
            r.finish = false;
            failed = !self.store_finish().await;
            r.finish |= failed;
        }
        if !failed && let Some((seat, turn, action, source)) = r.table_move.take() {
            let current =
                self.game.as_ref().is_some_and(|m| m.moves().len() == turn && m.turn() == Some(seat));
            if current {
                match self.commit(seat, action, source, now, None).await {
                    Ok(()) | Err(NotApplied::Illegal | NotApplied::Conflict | NotApplied::Lost) => {}
                    Err(NotApplied::Storage) => {
                        r.table_move = Some((seat, turn, action, source));
                        failed = true;
                    }
                }
            }
        }
        // `commit` may have scheduled more work meanwhile: merge it.
        if let Some(more) = self.retry.take() {
            r.seats |= more.seats;
            r.hands |= more.hands;
            r.finish |= more.finish;
            r.reload |= more.reload;
            r.table_move = r.table_move.or(more.table_move);
        }
        let left = r.seats || r.hands || r.finish || r.reload || r.table_move.is_some();
        if !left {
            if r.attempt > 0 {
                info!(attempts = r.attempt + 1, "storage answers again: the table goes on");
            }
            self.arm_turn(now);
            return;
        }
        r.attempt = if failed { r.attempt.saturating_add(1) } else { 0 };
        r.due = Some(now + backoff(r.attempt));
        debug!(attempt = r.attempt, "storage work retried later");
        self.retry = Some(r);
    }

    pub(super) async fn player_action(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        seat: Seat,
        (action, seq, resent): (Action, Option<u64>, bool),
        now: Instant,
    ) {
        // A relay sent the move again after the table changed hands, and the
        // old owner had stored it without answering: it was made, so it is
        // acknowledged (the old owner's answer, if it ever comes, is of an
        // older epoch and dropped).
        let made = |t: &Table| {
            resent
                && t.turns
                    .last_of(seat)
                    .is_some_and(|a| a.action == action && a.source == ActionSource::Player)
        };
        if self.must_reload() {
            return self.error_to(
                conn,
                req,
                ErrorCode::StorageUnavailable,
                "the table cannot reach its storage: try again in a moment",
            );
        }
        // At most twice: once more after a reload from the log.
        for _ in 0..2 {
            // A move for a turn that is gone (also after a reload).
            if let Some(why) = seq.and_then(|seq| self.turns.stale(seq, seat)) {
                if made(self) {
                    return self.send_to(conn, &ServerMessage::Ack { req });
                }
                return self.error_to(conn, req, ErrorCode::Stale, why);
            }
            let Some(m) = self.game.as_ref() else {
                return self.error_to(conn, req, ErrorCode::NotStarted, "the match has not started yet");
            };
            if let Err(e) = m.check(seat, action) {
                if made(self) {
                    return self.send_to(conn, &ServerMessage::Ack { req });
                }
                let code = ErrorCode::from_engine(&e);
                return self.error_to(conn, req, code, e.to_string());
            }
            match self.commit(seat, action, ActionSource::Player, now, Some((conn, req))).await {
                Ok(()) => return,
                Err(NotApplied::Conflict) => continue,
                Err(NotApplied::Illegal) => {
                    return self.error_to(conn, req, ErrorCode::Internal, "the move could not be applied");
                }
                Err(NotApplied::Storage) => {
                    return self.error_to(
                        conn,
                        req,
                        ErrorCode::StorageUnavailable,
                        "the move could not be stored: try again in a moment",
                    );
                }
                // No answer: a relayed move goes to the table's next owner,
                // which answers it; a connection here is closed (1012) as
                // the table stops, and its client looks at the table anew.
                Err(NotApplied::Lost) => return,
            }
        }
        self.error_to(conn, req, ErrorCode::StorageUnavailable, "the move could not be stored: try again")
    }

    /// Writes an action to the log, applies it, acknowledges it to the
    /// connection that made it (`ack`) and tells everybody.
    pub(super) async fn commit(
        &mut self,
        seat: Seat,
        action: Action,
        source: ActionSource,
        now: Instant,
        ack: Option<(ConnId, Option<u32>)>,
    ) -> Result<(), NotApplied> {
        let started = std::time::Instant::now();
        let Some(m) = self.game.as_ref() else { return Err(NotApplied::Illegal) };
        if let Err(e) = m.check(seat, action) {
            warn!(%seat, ?action, error = %e, "refused a table move");
            return Err(NotApplied::Illegal);
        }
        // The frame that will show the move (`broadcast_with` below).
        let seq = self.seq + 1;
        let record =
            ActionRecord { index: m.moves().len(), seat, action, source, at_ms: crate::time::now_ms(), seq };
        // Write-ahead: nobody sees the move before it is in the log.
        if let Err(e) = self.journal.append(self.id, record).await {
            if e.is_conflict() {
                warn!(index = record.index, "the log holds another move here: reloading the table");
                if !self.reload(now).await {
                    self.retry_later(Pending::Reload);
                }
                return Err(NotApplied::Conflict);
            }
            if e.is_fenced() {
                warn!("the table's lease is another node's: the move is left to it");
                return Err(NotApplied::Lost);
            }
            warn!(error = %e, "could not store an action");
            return Err(NotApplied::Storage);
        }
        let Some(m) = self.game.as_mut() else { return Err(NotApplied::Illegal) };
        debug!(%seat, ?action, ?source, index = record.index, conn = ?ack.map(|a| a.0), "move stored");
        let hand_before = m.hand_number();
        if m.apply(seat, action).is_err() {
            return Err(NotApplied::Illegal);
        }
        crate::metrics::action(action, source);
        let autopilot_after = self.settings.autopilot_after;
        let mut seats_changed = false;
        if let Some(o) = self.seats[seat].as_mut() {
            match source {
                ActionSource::Player => seats_changed = o.played(),
                ActionSource::Timeout => {
                    seats_changed = true;
                    if o.timed_out(autopilot_after) {
                        info!(%seat, timeouts = o.timeouts, "autopilot on");
                    }
                }
                ActionSource::Autopilot | ActionSource::Bot => {}
            }
            if source != ActionSource::Player {
                o.played_for(PlayedForYou { hand_number: hand_before, action, source, seq });
            }
        }
        // The move that ends a hand belongs to it: once the next hand is
        // dealt its card may be in somebody's new hand, so it is not shown.
        let same_hand =
            self.game.as_ref().is_some_and(|m| m.hand_number() == hand_before && m.result().is_none());
        self.latest = Some(LastAction { seat, action, source });
        self.last_action = same_hand.then_some(self.latest).flatten();
        if self.game.as_ref().is_some_and(|m| m.hand_number() != hand_before) {
            // A new hand: the moves the table made in the last one are
            // over (its last card may be in somebody's new hand).
            for o in self.seats.0.iter_mut().flatten() {
                o.played_for_you.clear();
            }
        }
        // The move is durable and applied: everybody sees it now; the
        // bookkeeping writes below can be retried.
        self.arm_turn(now);
        self.broadcast_with(now, ack);
        self.turns.made(seq, LastAction { seat, action, source });
        crate::metrics::action_latency(started.elapsed());
        if seats_changed {
            self.seats_changed().await;
        }
        let (hands, over) =
            self.game.as_ref().map_or((0, false), |m| (m.results().len(), m.result().is_some()));
        if hands > self.hands_stored && !self.store_hands().await {
            self.retry_later(Pending::Hands);
        }
        if over {
            info!("match over");
            if !self.store_finish().await {
                self.retry_later(Pending::Finish);
            }
            if self.conns.is_empty() {
                self.idle_since = Some(now);
            }
        }
        Ok(())
    }

    /// Writes the hand results not yet in the log; false on failure.
    async fn store_hands(&mut self) -> bool {
        let Some(m) = self.game.as_ref() else { return true };
        let results = m.results()[self.hands_stored.min(m.results().len())..].to_vec();
        for result in results {
            if let Err(e) = self.journal.hand(self.id, &result).await {
                warn!(hand = result.hand_number, error = %e, "could not store a hand result");
                return false;
            }
            self.hands_stored += 1;
        }
        true
    }

    /// Writes the match result; false on failure.
    async fn store_finish(&mut self) -> bool {
        let Some(end) = self.game.as_ref().and_then(|m| m.result().copied()) else { return true };
        match self.journal.finish(self.id, &end).await {
            Ok(()) => true,
            Err(e) => {
                warn!(error = %e, "could not store the match result");
                false
            }
        }
    }

    /// Replaces the match in memory with the one the log holds; false when
    /// the log cannot be read.
    pub(super) async fn reload(&mut self, now: Instant) -> bool {
        let stored = match self.journal.get(self.id).await {
            Ok(Some(stored)) => stored,
            Ok(None) => {
                warn!("the table is missing from the log");
                return false;
            }
            Err(e) => {
                warn!(error = %e, "could not read the table back from the log");
                return false;
            }
        };
        let game = match crate::record::replay(&stored) {
            Ok(game) => game,
            Err(e) => {
                warn!(error = %e, "the table's log does not replay");
                return false;
            }
        };
        info!(moves = game.as_ref().map_or(0, |m| m.moves().len()), "table reloaded from the log");
        self.hands_stored = stored.hands.len().min(game.as_ref().map_or(0, |m| m.results().len()));
        // What the table made for each seat, as the log has it.
        let mut played = crate::record::played_for_seats(&stored, game.as_ref());
        self.game = game;
        for seat in Seat::ALL {
            if let Some(o) = self.seats[seat].as_mut() {
                o.played_for_you = std::mem::take(&mut played[seat]);
            }
        }
        // Another owner's moves: every frame this table sent before is stale.
        self.turns = super::stale::Turns::restored(&stored.actions, self.seq + 1);
        self.last_action = None;
        self.clock = None;
        self.bot_due = None;
        self.bot_pending = None;
        if self.game.as_ref().is_some_and(|m| m.results().len() > self.hands_stored) {
            self.retry_later(Pending::Hands);
        }
        self.arm_turn(now);
        self.broadcast(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        assert_eq!(backoff(0), Duration::from_millis(100));
        assert_eq!(backoff(1), Duration::from_millis(200));
        assert_eq!(backoff(3), Duration::from_millis(800));
        assert_eq!(backoff(10), MAX_BACKOFF);
        assert_eq!(backoff(u32::MAX), MAX_BACKOFF);
    }
}
