//! Fan-out: rendering each connection's redacted view, queueing frames into
//! the connections' bounded outboxes, and publishing the lobby summary and
//! REST status.
//!
//! The table never waits for a connection: a frame that does not fit in an
//! outbox marks the connection to be dropped (it can resume), and dropped
//! connections are detached after the fan-out, in a loop, never by
//! recursing into another broadcast.

use spades_engine::{Match, Phase, Seat};
use spades_protocol::{
    Clock, ErrorCode, PlayedForYou, SeatInfo, SeatStatus, ServerMessage, TableOptions, TablePhase,
    TableStatus, TableSummary, TableView,
};
use tokio::sync::mpsc::error::TrySendError;
use tokio::time::Instant;
use tracing::{debug, warn};
use uuid::Uuid;

use super::delta::{Progress, Sent};
use super::{ConnId, Frame, Order, Outbox, Role, Table};

/// A connection attached to the table.
#[derive(Debug)]
pub(super) struct Conn {
    pub(super) id: ConnId,
    pub(super) role: Role,
    pub(super) outbox: Outbox,
    pub(super) closing: bool,
    /// The connection has no view yet (it just attached, asked for one, or
    /// its role changed): its next frame is a snapshot.
    pub(super) fresh: bool,
    /// The signed-in account of the connection, if any.
    pub(super) account: Option<Uuid>,
}

/// The status of a table that has published nothing yet.
pub(crate) fn empty_status(id: Uuid) -> TableStatus {
    TableStatus {
        summary: TableSummary {
            table: id,
            name: String::new(),
            phase: TablePhase::Lobby,
            options: TableOptions::default(),
            seats: Seat::ALL.map(SeatInfo::empty),
            open_seats: 4,
            spectators: 0,
            hand_number: 0,
            scores: [0, 0],
            created_at: 0,
        },
        turn: None,
        dealer: None,
        bids: [None; 4],
        tricks_won: [0; 4],
        bags: [0, 0],
        clock: None,
        hands: Vec::new(),
        result: None,
        seed: None,
        fair: None,
        owner: None,
    }
}

impl Table {
    /// Queues `frame` for every connection (as [`Table::queue`]).
    pub(super) fn queue_all(&mut self, frame: &Frame) {
        for i in 0..self.conns.len() {
            let conn = self.conns[i].id;
            self.queue(conn, i, frame.clone());
        }
    }

    /// Queues `frame` for `conn`; a full or closed outbox marks the
    /// connection to be dropped.
    pub(super) fn queue(&mut self, conn: ConnId, outbox_index: usize, frame: Frame) {
        match self.conns[outbox_index].outbox.try_send(frame) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                warn!(conn, "connection too slow: dropped");
                self.dropped.push(conn);
            }
            Err(TrySendError::Closed(_)) => {
                debug!(conn, "connection gone");
                self.dropped.push(conn);
            }
        }
    }

    pub(super) fn send_to(&mut self, conn: ConnId, msg: &ServerMessage) {
        let Some(i) = self.conns.iter().position(|c| c.id == conn) else { return };
        match Frame::of(msg) {
            Ok(frame) => self.queue(conn, i, frame),
            Err(e) => warn!(error = %e, "could not serialise a reply"),
        }
    }

    pub(super) fn error_to(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        code: ErrorCode,
        message: impl Into<String>,
    ) {
        crate::metrics::error(code);
        let message = message.into();
        tracing::debug!(conn, ?req, ?code, %message, seq = self.seq, "refused");
        self.send_to(conn, &ServerMessage::Error { req, code, message });
    }

    /// Refuses an attach: the connection is not in the table's list yet.
    pub(super) fn refuse(outbox: &Outbox, req: Option<u32>, code: ErrorCode, message: &str) {
        crate::metrics::error(code);
        if let Ok(frame) = Frame::of(&ServerMessage::Error { req, code, message: message.into() }) {
            let _ = outbox.try_send(frame);
        }
    }

    /// Detaches every connection found slow or gone, until none is left:
    /// each round's broadcast may find more, and each round removes at least
    /// one connection, so this ends.
    pub(super) fn settle_dropped(&mut self, now: Instant) {
        while !self.dropped.is_empty() {
            let mut changed = false;
            for conn in std::mem::take(&mut self.dropped) {
                changed |= self.remove_conn(conn, now);
            }
            if changed {
                self.arm_turn(now);
                self.broadcast(now);
            } else {
                self.publish(now);
            }
        }
    }

    pub(super) fn phase(&self) -> TablePhase {
        match self.game.as_ref().map(Match::phase) {
            None => TablePhase::Lobby,
            Some(Phase::Bidding) => TablePhase::Bidding,
            Some(Phase::Playing) => TablePhase::Playing,
            Some(Phase::MatchOver) => TablePhase::Finished,
        }
    }

    fn seat_infos(&self) -> [SeatInfo; 4] {
        Seat::ALL.map(|seat| match &self.seats[seat] {
            None => SeatInfo::empty(seat),
            Some(o) => SeatInfo {
                seat,
                name: Some(o.name.clone()),
                kind: Some(o.kind),
                status: o.status(),
                away_until: o.away_until.filter(|_| o.conns == 0).map(|t| self.wall_ms(t)),
                timeouts: o.timeouts,
            },
        })
    }

    fn wire_clock(&self) -> Option<Clock> {
        self.clock.map(|c| Clock {
            seat: c.seat,
            kind: c.kind,
            deadline: self.wall_ms(c.deadline),
            duration_ms: c.duration.as_millis() as u64,
        })
    }

    fn render(&self, role: Role, seats: &[SeatInfo; 4], clock: Option<Clock>, now_ms: u64) -> Option<Frame> {
        let viewer = match role {
            Role::Seat(s) => Some(s),
            Role::Spectator | Role::Left(_) => None,
        };
        let view = TableView {
            table: self.id,
            name: self.name.clone(),
            phase: self.phase(),
            options: self.options,
            you: role.seat(),
            seats: seats.clone(),
            game: self.game.as_ref().map(|m| m.view(viewer)),
            clock,
            last_action: self.last_action,
            server_time: now_ms,
            autopilot_after: self.settings.autopilot_after,
            grace_ms: Some(u64::try_from(self.settings.grace.as_millis()).unwrap_or(u64::MAX)),
            fair: self.fairness(),
            rematch: self.rematch_view(),
            played_for_you: viewer.map(|s| self.played_for(s)).unwrap_or_default(),
        };
        match Frame::of(&ServerMessage::View { seq: self.seq, view: Box::new(view) }) {
            Ok(frame) => Some(frame),
            Err(e) => {
                warn!(error = %e, "could not serialise a view");
                None
            }
        }
    }

    /// Sends every connection its own view of the table's new state.
    pub(super) fn broadcast(&mut self, now: Instant) {
        self.broadcast_with(now, None);
    }

    /// [`Table::broadcast`], with the acknowledgement of the move that caused
    /// it queued just before the frame of the connection that sent the move,
    /// so that the connection's task finds both and writes them together.
    ///
    /// Each connection gets a change frame (docs/protocol.md), or a snapshot
    /// when it has no view yet or the change cannot be said as one. Every
    /// frame is serialised once per audience: the common change once, a
    /// seat's own part (its legal moves, a new hand) spliced onto it.
    pub(super) fn broadcast_with(&mut self, now: Instant, ack: Option<(ConnId, Option<u32>)>) {
        self.seq += 1;
        let now_ms = self.anchored_now(now);
        let seats = self.seat_infos();
        let clock = self.wire_clock();
        let sent = self.sent_state(&seats, clock);
        let mut delta =
            self.sent.as_ref().and_then(|old| old.delta(&sent, self.game.as_ref(), self.latest, now_ms));
        let key = |role: Role| match role {
            Role::Seat(s) => usize::from(s.index()),
            Role::Spectator | Role::Left(_) => 4,
        };
        // One frame per seat and one for all spectators, all made before
        // the first is queued.
        let mut snapshots: [Option<Frame>; 5] = Default::default();
        let mut changes: [Option<Frame>; 5] = Default::default();
        let common = delta.as_mut().and_then(|d| {
            let msg =
                ServerMessage::Change { seq: self.seq, change: Box::new(std::mem::take(&mut d.change)) };
            serde_json::to_string(&msg).map_err(|e| warn!(error = %e, "could not serialise a change")).ok()
        });
        for c in &self.conns {
            let k = key(c.role);
            match (&delta, &common) {
                (Some(d), Some(common)) if !c.fresh => {
                    if changes[k].is_none() {
                        let part = match c.role {
                            Role::Seat(s) => d.seat_part(s, self.game.as_ref()),
                            Role::Spectator | Role::Left(_) => None,
                        };
                        let text = match part.map(|p| serde_json::to_string(&p)) {
                            Some(Ok(part)) => splice(common, &part),
                            _ => common.clone(),
                        };
                        changes[k] = Some(Frame::new(text, Order::Change(self.seq)));
                    }
                }
                _ => {
                    if snapshots[k].is_none() {
                        snapshots[k] = self.render(c.role, &seats, clock, now_ms);
                    }
                }
            }
        }
        let ack = ack
            .and_then(|(conn, req)| Frame::of(&ServerMessage::Ack { req }).ok().map(|frame| (conn, frame)));
        // The REST status and lobby line first: a client that reads the
        // status after its frame must not find the table as it was before.
        self.publish_at(seats, clock);
        for i in 0..self.conns.len() {
            let (id, role) = (self.conns[i].id, self.conns[i].role);
            if let Some((conn, text)) = &ack
                && *conn == id
            {
                let before = self.dropped.len();
                self.queue(id, i, text.clone());
                if self.dropped.len() > before {
                    continue;
                }
            }
            let k = key(role);
            let frame = if self.conns[i].fresh || changes[k].is_none() { &snapshots[k] } else { &changes[k] };
            if let Some(frame) = frame.clone() {
                self.conns[i].fresh = false;
                self.queue(id, i, frame);
            }
        }
        self.sent = Some(sent);
    }

    /// What a frame made now shows, to compare with the next.
    fn sent_state(&self, seats: &[SeatInfo; 4], clock: Option<Clock>) -> Sent {
        Sent {
            seats: seats.clone(),
            clock,
            phase: self.phase(),
            fair: self.fairness(),
            rematch: self.rematch_view(),
            last_action: self.last_action,
            game: self.game.as_ref().map(Progress::of),
            played_for_you: Seat::ALL.map(|s| self.played_for(s)),
        }
    }

    /// The moves the table made for `seat`'s person, for its own view.
    fn played_for(&self, seat: Seat) -> Vec<PlayedForYou> {
        self.seats[seat].as_ref().map(|o| o.played_for_you.clone()).unwrap_or_default()
    }

    /// The connection asked for a snapshot: an `ack`, then the view.
    pub(super) fn sync(&mut self, conn: ConnId, req: Option<u32>, now: Instant) {
        self.send_to(conn, &ServerMessage::Ack { req });
        self.send_view_to(conn, now);
    }

    /// Sends `conn` a snapshot. When the table changed since the last
    /// frame, everybody gets that change first (a connection that just
    /// attached gets its snapshot then), so that the next change applies to
    /// what every connection holds.
    pub(super) fn send_view_to(&mut self, conn: ConnId, now: Instant) {
        let now_ms = self.anchored_now(now);
        let seats = self.seat_infos();
        let clock = self.wire_clock();
        if self.sent.as_ref() != Some(&self.sent_state(&seats, clock)) {
            let fresh = self.conns.iter().any(|c| c.id == conn && c.fresh);
            self.broadcast(now);
            if fresh {
                return;
            }
        }
        let Some(i) = self.conns.iter().position(|c| c.id == conn) else { return };
        if let Some(frame) = self.render(self.conns[i].role, &seats, clock, now_ms) {
            self.conns[i].fresh = false;
            self.queue(conn, i, frame);
        }
    }

    /// The Unix time (ms) now, on the table's timeline: a tokio instant and
    /// its Unix time fixed while the wall clock agrees with them (to a
    /// quarter second), so that a deadline reads the same in every frame and
    /// `deadline - server_time` is the time left.
    fn anchored_now(&self, now: Instant) -> u64 {
        let real = crate::time::now_ms();
        let (anchor, anchor_ms) = self.anchor.get();
        let ms = to_ms(now, anchor, anchor_ms);
        if ms.abs_diff(real) > 250 {
            self.anchor.set((now, real));
            return real;
        }
        ms
    }

    /// The Unix time (ms) of a tokio instant on the table's timeline.
    pub(super) fn wall_ms(&self, at: Instant) -> u64 {
        let (anchor, anchor_ms) = self.anchor.get();
        to_ms(at, anchor, anchor_ms)
    }

    /// Publishes the lobby summary and the REST status.
    pub(super) fn publish(&self, now: Instant) {
        self.anchored_now(now);
        self.publish_at(self.seat_infos(), self.wire_clock());
    }

    fn publish_at(&self, seats: [SeatInfo; 4], clock: Option<Clock>) {
        let m = self.game.as_ref();
        let hand = m.map(Match::hand);
        let summary = TableSummary {
            table: self.id,
            name: self.name.clone(),
            phase: self.phase(),
            options: self.options,
            open_seats: seats.iter().filter(|s| s.status == SeatStatus::Empty).count() as u8,
            seats,
            spectators: self.conns.iter().filter(|c| c.role == Role::Spectator).count() as u32,
            hand_number: m.map_or(0, Match::hand_number),
            scores: m.map_or([0, 0], |m| m.scores().0),
            created_at: self.created_at,
        };
        self.status.send_modify(|status| {
            // The hand results only grow: copy just the new ones.
            let results = m.map_or(&[][..], |m| m.results());
            if status.hands.len() > results.len() || status.hands.first() != results.first() {
                status.hands.clear();
            }
            let have = status.hands.len();
            status.hands.extend_from_slice(&results[have..]);
            status.summary = summary;
            status.turn = m.and_then(Match::turn);
            status.dealer = hand.map(|h| h.dealer());
            status.bids = hand.map_or([None; 4], |h| h.bids().0);
            status.tricks_won = hand.map_or([0; 4], |h| h.tricks_won().0);
            status.bags = m.map_or([0, 0], |m| m.bags().0);
            status.clock = clock;
            status.result = m.and_then(|m| m.result().copied());
            // The seed only once the match is over.
            status.seed = m.filter(|m| m.result().is_some()).map(Match::seed);
            status.fair = self.fairness();
        });
    }
}

/// A change frame with a seat's own fields added: `{"type":"change",…}` and
/// `{"legal":…}` make `{"type":"change",…,"legal":…}`.
fn splice(common: &str, part: &str) -> String {
    let (Some(head), Some(tail)) = (common.strip_suffix('}'), part.strip_prefix('{')) else {
        return common.to_owned();
    };
    if tail == "}" {
        return common.to_owned();
    }
    let mut frame = String::with_capacity(head.len() + tail.len() + 1);
    frame.push_str(head);
    frame.push(',');
    frame.push_str(tail);
    frame
}

/// The Unix time (ms) of a tokio instant, given one instant's Unix time.
fn to_ms(at: Instant, anchor: Instant, anchor_ms: u64) -> u64 {
    if at >= anchor {
        anchor_ms + (at - anchor).as_millis() as u64
    } else {
        anchor_ms.saturating_sub((anchor - at).as_millis() as u64)
    }
}
