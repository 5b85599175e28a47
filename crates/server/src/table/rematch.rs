//! After the match: who is ready for another one, and the owner's rematch.
//!
//! A rematch is a new match, under a new table id so that this match's
//! record stays as it is, with the same name, options and seats (the same
//! seat and owner tokens work there; players who left are replaced by
//! bots). The table only checks and describes it ([`RematchPlan`]); the
//! connection that asked creates the new table (`hosting/rematch.rs`) and tells
//! this table, which then points every view at it (`rematch.next_table`).
//! Who is ready is kept in memory only.

use spades_engine::{BySeat, Seat};
use spades_protocol::{ErrorCode, Rematch, SeatKind, TableOptions, TablePhase};
use tokio::time::Instant;
use tracing::info;
use uuid::Uuid;

use super::seats::Occupant;
use super::{ConnId, Role, Table};
use crate::storage::SeatRecord;
use crate::token::TokenHash;

/// What the table knows of a rematch.
#[derive(Debug, Default)]
pub(super) struct RematchState {
    /// Players who said they are ready.
    ready: [bool; 4],
    /// A rematch is being created.
    starting: bool,
    /// The rematch's table, once created.
    next: Option<Uuid>,
}

/// The new match's table: the same name, options, owner and seats.
pub struct RematchPlan {
    /// The table's name.
    pub name: String,
    /// Its options.
    pub options: TableOptions,
    /// The owner (token and account), as the finished table's.
    pub owner: super::Ownership,
    /// The seats, as they start the new match.
    pub seats: BySeat<Option<SeatRecord>>,
}

impl std::fmt::Debug for RematchPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Token hashes are not printed.
        f.debug_struct("RematchPlan").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Table {
    /// Seats whose readiness matters: a person still playing the seat.
    fn waits_for(&self, seat: Seat) -> bool {
        self.seats[seat].as_ref().is_some_and(|o| o.kind == SeatKind::Human && !o.left)
    }

    /// The rematch part of the view, once the match is over.
    pub(super) fn rematch_view(&self) -> Option<Rematch> {
        (self.phase() == TablePhase::Finished).then(|| Rematch {
            ready: Seat::ALL.map(|s| !self.waits_for(s) || self.rematch.ready[usize::from(s.index())]),
            next_table: self.rematch.next,
        })
    }

    /// Refuses (and returns false) unless the match is over and no rematch
    /// has begun.
    fn rematch_open(&mut self, conn: ConnId, req: Option<u32>) -> bool {
        if self.phase() != TablePhase::Finished {
            self.error_to(conn, req, ErrorCode::MatchNotOver, "the match is not over yet");
            return false;
        }
        if self.rematch.next.is_some() || self.rematch.starting {
            self.error_to(conn, req, ErrorCode::AlreadyStarted, "the rematch has already started");
            return false;
        }
        true
    }

    /// A player is ready for a rematch, or no longer.
    pub(super) fn rematch_ready(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        role: Role,
        ready: bool,
        now: Instant,
    ) {
        let Role::Seat(seat) = role else {
            return self.error_to(
                conn,
                req,
                ErrorCode::NotSeated,
                "only the players can be ready for a rematch",
            );
        };
        if !self.rematch_open(conn, req) {
            return;
        }
        self.rematch.ready[usize::from(seat.index())] = ready;
        self.broadcast_with(now, Some((conn, req)));
    }

    /// The owner asks for a rematch: the plan of the new table, or `None`
    /// after refusing `conn`.
    pub(super) fn plan_rematch(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        owner_token: Option<&str>,
    ) -> Option<RematchPlan> {
        if !self.is_owner(conn, owner_token) {
            self.error_to(conn, req, ErrorCode::InvalidToken, "only the table's owner can start a rematch");
            return None;
        }
        if !self.rematch_open(conn, req) {
            return None;
        }
        // The owner asking from a seat is ready.
        if let Some(Role::Seat(seat)) = self.conns.iter().find(|c| c.id == conn).map(|c| c.role) {
            self.rematch.ready[usize::from(seat.index())] = true;
        }
        let waiting: Vec<String> = Seat::ALL
            .into_iter()
            .filter(|&s| self.waits_for(s) && !self.rematch.ready[usize::from(s.index())])
            .filter_map(|s| self.seats[s].as_ref().filter(|o| o.conns > 0).map(|o| o.name.clone()))
            .collect();
        if !waiting.is_empty() {
            let message = format!("waiting for {} to be ready", waiting.join(", "));
            self.error_to(conn, req, ErrorCode::PlayersNotReady, message);
            return None;
        }
        self.rematch.starting = true;
        let seats = self.seats.map(|seat, o| {
            o.as_ref().map(|o| {
                if o.kind == SeatKind::Bot || o.left {
                    SeatRecord {
                        name: Occupant::bot_name(seat),
                        kind: SeatKind::Bot,
                        token_hash: None,
                        account: None,
                        left: false,
                        autopilot: false,
                        timeouts: 0,
                        grace_expired: false,
                        players: Vec::new(),
                    }
                } else {
                    SeatRecord {
                        name: o.name.clone(),
                        kind: SeatKind::Human,
                        token_hash: o.token.map(TokenHash::to_hex),
                        account: o.account,
                        left: false,
                        autopilot: false,
                        timeouts: 0,
                        grace_expired: o.grace_expired,
                        players: Vec::new(),
                    }
                }
            })
        });
        Some(RematchPlan { name: self.name.clone(), options: self.options, owner: self.owner, seats })
    }

    /// The rematch's table was created (or could not be): every view now
    /// points at it.
    pub(super) fn rematch_started(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        next: Result<Uuid, (ErrorCode, String)>,
        now: Instant,
    ) {
        self.rematch.starting = false;
        match next {
            Ok(id) => {
                info!(next_table = %id, "rematch started");
                self.rematch.next = Some(id);
                self.broadcast_with(now, Some((conn, req)));
            }
            Err((code, message)) => self.error_to(conn, req, code, message),
        }
    }
}
