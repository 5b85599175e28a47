//! Time at a table: the turn clock, the bot timer, grace periods, storage
//! retries and idleness, all folded into one wake-up time for the task.

use std::time::Duration;

use spades_engine::{Match, Phase, Seat};
use spades_protocol::{ActionSource, ClockKind};
use tokio::time::Instant;
use tracing::info;

use super::Table;
use super::seats::Occupant;

/// The clock of the seat on turn.
#[derive(Debug, Clone, Copy)]
pub(super) struct TurnClock {
    pub(super) seat: Seat,
    /// Number of moves when the turn began: identifies the turn.
    pub(super) turn: usize,
    pub(super) kind: ClockKind,
    pub(super) deadline: Instant,
    pub(super) duration: Duration,
}

impl Table {
    pub(super) fn next_wake(&self) -> Option<Instant> {
        let mut wake: Option<Instant> = None;
        let mut consider = |t: Option<Instant>| {
            if let Some(t) = t {
                wake = Some(wake.map_or(t, |w| w.min(t)));
            }
        };
        consider(self.clock.map(|c| c.deadline));
        consider(self.bot_due.map(|(_, t)| t));
        consider(self.retry.as_ref().and_then(super::moves::Retry::due));
        for occ in self.seats.0.iter().flatten() {
            if occ.conns == 0 {
                consider(occ.away_until);
            }
        }
        consider(self.idle_since.map(|t| t + self.settings.idle));
        consider(self.abandon_at());
        consider(self.fair.as_ref().and_then(|l| l.reveal).map(|r| r.by));
        wake
    }

    /// When a match nobody is at any more ends: at once when every person
    /// left it on purpose, else after the idle time (someone may come back).
    fn abandon_at(&self) -> Option<Instant> {
        let since = self.deserted_since?;
        Some(if self.everyone_left() { since } else { since + self.settings.idle })
    }

    /// Handles whatever timers are due. Returns true when the table should
    /// close (idle).
    pub(super) async fn on_wake(&mut self) -> bool {
        let now = Instant::now();
        if let Some(since) = self.idle_since
            && now >= since + self.settings.idle
            && self.conns.is_empty()
            && self.game.as_ref().is_none_or(|m| m.phase() == Phase::MatchOver)
        {
            info!("closing idle table");
            return true;
        }
        if self.abandon_at().is_some_and(|t| t <= now) && self.nobody_home() {
            info!("nobody is at the match any more: it ends unfinished");
            return true;
        }
        if self.retry.as_ref().and_then(super::moves::Retry::due).is_some_and(|t| t <= now) {
            self.run_retry(now).await;
        }
        if self.fair.as_ref().and_then(|l| l.reveal).is_some_and(|r| r.by <= now) {
            self.close_reveals(now).await;
        }
        if self.expire_graces(now).await {
            self.arm_turn(now);
            self.broadcast(now);
        }
        // The turn clock.
        if let Some(clock) = self.clock
            && clock.deadline <= now
        {
            self.clock = None;
            info!(seat = %clock.seat, "turn timed out");
            self.table_move(clock.seat, clock.turn, ActionSource::Timeout).await;
        }
        // A bot or the autopilot.
        if let Some((turn, at)) = self.bot_due
            && at <= now
        {
            self.bot_due = None;
            if let Some(seat) = self.game.as_ref().and_then(Match::turn) {
                let source = match self.seats[seat].as_ref() {
                    Some(o) if o.autopiloted() => ActionSource::Autopilot,
                    _ => ActionSource::Bot,
                };
                self.table_move(seat, turn, source).await;
            }
        }
        self.settle_dropped(now);
        false
    }

    /// Sets the clock and the bot timer for the seat on turn.
    pub(super) fn arm_turn(&mut self, now: Instant) {
        // Nobody is at the match any more: the bots do not play it on alone.
        if self.nobody_home() {
            self.deserted_since.get_or_insert(now);
            self.clock = None;
            self.bot_due = None;
            return;
        }
        self.deserted_since = None;
        let Some(m) = self.game.as_ref() else {
            self.clock = None;
            self.bot_due = None;
            return;
        };
        let Some(seat) = m.turn() else {
            self.clock = None;
            self.bot_due = None;
            return;
        };
        let turn = m.moves().len();
        let auto = self.seats[seat].as_ref().is_none_or(Occupant::auto_played);
        if auto {
            self.clock = None;
            let due = self.bot_due.filter(|(t, _)| *t == turn);
            self.bot_due = Some(due.unwrap_or((turn, now + self.settings.bot_delay)));
            return;
        }
        self.bot_due = None;
        if self.clock.is_some_and(|c| c.turn == turn && c.seat == seat) {
            return;
        }
        let kind = if m.phase() == Phase::Bidding { ClockKind::Bid } else { ClockKind::Card };
        let duration = self.settings.test_tempo.unwrap_or_else(|| {
            Duration::from_millis(match kind {
                ClockKind::Bid => self.options.tempo.bid_ms(),
                ClockKind::Card => self.options.tempo.card_ms(),
            })
        });
        self.clock = Some(TurnClock { seat, turn, kind, deadline: now + duration, duration });
    }
}
