//! Seats: who sits where, connections attaching and leaving, absence
//! (grace, autopilot, leaving) and the owner's lobby actions.

use std::sync::Arc;

use spades_engine::{Action, Match, Seat};
use spades_protocol::{ErrorCode, SeatKind, SeatStatus, ServerMessage};
use tokio::time::Instant;
use tracing::{info, warn};

use super::fanout::Conn;
use super::{Act, Attach, Attached, ConnId, Outbox, RestoredSeat, Role, Table, TableSettings};
use crate::storage::SeatRecord;
use crate::token::{TokenHash, new_token};

/// A seat's occupant.
#[derive(Debug)]
pub(super) struct Occupant {
    pub(super) name: String,
    pub(super) kind: SeatKind,
    pub(super) token: Option<TokenHash>,
    /// Connections attached to the seat.
    pub(super) conns: u16,
    /// While away: when the grace ends.
    pub(super) away_until: Option<Instant>,
    /// The last connection said it was closing on purpose.
    pub(super) closing: bool,
    /// The grace ran out: a bot plays until the player comes back.
    pub(super) grace_expired: bool,
    pub(super) autopilot: bool,
    pub(super) left: bool,
    pub(super) timeouts: u8,
}

impl Occupant {
    fn human(name: String, token: TokenHash) -> Occupant {
        Occupant {
            name,
            kind: SeatKind::Human,
            token: Some(token),
            conns: 0,
            away_until: None,
            closing: false,
            grace_expired: false,
            autopilot: false,
            left: false,
            timeouts: 0,
        }
    }

    fn bot(name: String) -> Occupant {
        Occupant { kind: SeatKind::Bot, token: None, ..Occupant::human(name, TokenHash([0; 32])) }
    }

    /// A seat as stored: people start away, with a full grace unless it had
    /// already run out (then the bot goes on playing until they return).
    pub(super) fn restored(s: &RestoredSeat, now: Instant, settings: &TableSettings) -> Occupant {
        let person = s.kind == SeatKind::Human && !s.left;
        Occupant {
            name: s.name.clone(),
            kind: s.kind,
            token: s.token,
            conns: 0,
            away_until: (person && !s.grace_expired).then(|| now + settings.grace),
            closing: false,
            grace_expired: person && s.grace_expired,
            autopilot: s.autopilot,
            left: s.left,
            timeouts: s.timeouts,
        }
    }

    pub(super) fn status(&self) -> SeatStatus {
        match self.kind {
            SeatKind::Bot => SeatStatus::Bot,
            SeatKind::Human if self.left => SeatStatus::Left,
            SeatKind::Human if self.grace_expired => SeatStatus::Bot,
            // Gone but within the grace: away, even if timeouts have put the
            // autopilot on meanwhile.
            SeatKind::Human if self.conns == 0 => SeatStatus::Away,
            SeatKind::Human if self.autopilot => SeatStatus::Autopilot,
            SeatKind::Human => SeatStatus::Present,
        }
    }

    /// True when the table plays this seat by itself.
    pub(super) fn auto_played(&self) -> bool {
        self.kind == SeatKind::Bot || self.left || self.grace_expired || self.autopilot
    }

    fn record(&self) -> SeatRecord {
        SeatRecord {
            name: self.name.clone(),
            kind: self.kind,
            token_hash: self.token.map(TokenHash::to_hex),
            left: self.left,
            autopilot: self.autopilot,
            timeouts: self.timeouts,
            grace_expired: self.grace_expired,
        }
    }
}

impl Table {
    pub(super) async fn attach(
        &mut self,
        conn: ConnId,
        outbox: Outbox,
        how: Attach,
        req: Option<u32>,
        quiet: bool,
        now: Instant,
    ) -> Option<Attached> {
        let (role, reply, again) = match how {
            Attach::Watch => {
                (Role::Spectator, ServerMessage::Watching { req, table: self.id }, Attach::Watch)
            }
            Attach::Join { name, seat } => {
                if self.game.is_some() {
                    Table::refuse(
                        &outbox,
                        req,
                        ErrorCode::AlreadyStarted,
                        "the match has started: you can watch",
                    );
                    return None;
                }
                let seat = match seat {
                    Some(s) if self.seats[s].is_some() => {
                        Table::refuse(&outbox, req, ErrorCode::SeatTaken, &format!("{s} is taken"));
                        return None;
                    }
                    Some(s) => s,
                    None => match Seat::ALL.into_iter().find(|&s| self.seats[s].is_none()) {
                        Some(s) => s,
                        None => {
                            Table::refuse(
                                &outbox,
                                req,
                                ErrorCode::TableFull,
                                "every seat is taken: you can watch",
                            );
                            return None;
                        }
                    },
                };
                let Ok((token, hash)) = new_token() else {
                    Table::refuse(&outbox, req, ErrorCode::Internal, "could not make a seat token");
                    return None;
                };
                self.seats[seat] = Some(Occupant::human(name, hash));
                // The seat is durable before its token is handed out: a
                // restart can always restore what a player was given.
                if let Err(e) = self.write_seats().await {
                    warn!(%seat, error = %e, "could not store a new seat: refused");
                    self.seats[seat] = None;
                    Table::refuse(
                        &outbox,
                        req,
                        ErrorCode::StorageUnavailable,
                        "the seat could not be stored: try again in a moment",
                    );
                    return None;
                }
                info!(%seat, "seat taken");
                let again = Attach::Resume { token: token.clone() };
                (Role::Seat(seat), ServerMessage::Joined { req, table: self.id, seat, token }, again)
            }
            Attach::Resume { token } => {
                let found = Seat::ALL.into_iter().find(|&s| {
                    self.seats[s].as_ref().and_then(|o| o.token).is_some_and(|h| h.matches(&token))
                });
                let Some(seat) = found else {
                    Table::refuse(
                        &outbox,
                        req,
                        ErrorCode::InvalidToken,
                        "that seat token is not valid at this table",
                    );
                    return None;
                };
                let left = self.seats[seat].as_ref().is_some_and(|o| o.left);
                if !left
                    && self.seats[seat].as_ref().is_some_and(|o| o.conns >= self.settings.seat_connections)
                {
                    let message = format!(
                        "this seat already has {} connections: close one first",
                        self.settings.seat_connections
                    );
                    Table::refuse(&outbox, req, ErrorCode::Capacity, &message);
                    return None;
                }
                info!(%seat, left, "seat resumed");
                (
                    if left { Role::Left(seat) } else { Role::Seat(seat) },
                    ServerMessage::Resumed { req, table: self.id, seat },
                    Attach::Resume { token },
                )
            }
        };
        let mut returned = false;
        if let Role::Seat(seat) = role
            && let Some(o) = self.seats[seat].as_mut()
        {
            if o.conns == 0 && (o.grace_expired || o.autopilot || o.timeouts > 0) {
                // A player coming back gets the seat back from the bot or the
                // autopilot without having to take over.
                o.grace_expired = false;
                o.autopilot = false;
                o.timeouts = 0;
                returned = true;
            }
            o.conns += 1;
            o.away_until = None;
            o.closing = false;
        }
        if returned {
            self.seats_changed().await;
        }
        self.conns.push(Conn { id: conn, role, outbox, closing: false, fresh: true });
        self.idle_since = None;
        if !quiet {
            self.send_to(conn, &reply);
            self.send_chat_log(conn);
        }
        if matches!(role, Role::Spectator | Role::Left(_)) {
            // Nothing changed for anybody else: just this connection's view.
            self.send_view_to(conn, now);
            self.publish(now);
        } else {
            if returned {
                // A fresh clock for the player if the seat is on turn.
                self.clock = None;
            }
            self.arm_turn(now);
            self.broadcast(now);
        }
        Some(Attached { role, again })
    }

    pub(super) fn detach(&mut self, conn: ConnId, now: Instant) {
        if self.remove_conn(conn, now) {
            self.arm_turn(now);
            self.broadcast(now);
        } else {
            self.publish(now);
        }
    }

    /// Forgets a connection; true when a seat's presence changed (the table
    /// must re-arm the turn and tell everybody). Never broadcasts itself.
    pub(super) fn remove_conn(&mut self, conn: ConnId, now: Instant) -> bool {
        let Some(pos) = self.conns.iter().position(|c| c.id == conn) else { return false };
        let c = self.conns.swap_remove(pos);
        if self.conns.is_empty() {
            self.idle_since = Some(now);
        }
        let Role::Seat(seat) = c.role else { return false };
        let settings = Arc::clone(&self.settings);
        if let Some(o) = self.seats[seat].as_mut() {
            o.conns = o.conns.saturating_sub(1);
            o.closing |= c.closing;
            if o.conns == 0 && o.kind == SeatKind::Human && !o.left && !o.grace_expired {
                let grace = if o.closing { settings.closing_grace } else { settings.grace };
                o.away_until = Some(now + grace);
                info!(%seat, grace_secs = grace.as_secs_f32(), "player disconnected");
            }
        }
        true
    }

    /// Grace periods that have run out: in the lobby the seat is freed; in a
    /// match a bot plays it until the player comes back. True when a seat
    /// changed.
    pub(super) async fn expire_graces(&mut self, now: Instant) -> bool {
        let mut changed = false;
        let in_lobby = self.game.is_none();
        for seat in Seat::ALL {
            let expired = self.seats[seat]
                .as_ref()
                .is_some_and(|o| o.conns == 0 && o.away_until.is_some_and(|t| t <= now));
            if !expired {
                continue;
            }
            changed = true;
            if in_lobby {
                info!(%seat, "grace ran out in the lobby: seat freed");
                self.seats[seat] = None;
            } else if let Some(o) = self.seats[seat].as_mut() {
                info!(%seat, "grace ran out: a bot plays the seat");
                o.away_until = None;
                o.grace_expired = true;
            }
        }
        if changed {
            self.seats_changed().await;
        }
        changed
    }

    pub(super) async fn act(&mut self, conn: ConnId, req: Option<u32>, act: Act, now: Instant) {
        let Some(role) = self.conns.iter().find(|c| c.id == conn).map(|c| c.role) else { return };
        match act {
            Act::Start { owner_token } => {
                if !self.owner_in_lobby(conn, req, &owner_token, "start the match") {
                    return;
                }
                if self.seats.0.iter().any(Option::is_none) {
                    return self.error_to(
                        conn,
                        req,
                        ErrorCode::SeatsEmpty,
                        "every seat must be taken (add bots to fill them)",
                    );
                }
                let Some(seeds) = self.fix_seeds() else {
                    return self.error_to(conn, req, ErrorCode::Internal, "could not draw a seed");
                };
                // The seats and seeds the match starts with must be in the
                // log, or a restart could not restore it.
                let stored = match self.write_seats().await {
                    Ok(()) => self.journal.start_fair(self.id, &seeds).await,
                    Err(e) => Err(e),
                };
                if let Err(e) = stored {
                    warn!(error = %e, "could not store the start of the match");
                    return self.error_to(
                        conn,
                        req,
                        ErrorCode::StorageUnavailable,
                        "the start could not be stored: try again in a moment",
                    );
                }
                // The seed stays secret until the match is over: not logged.
                info!("match started");
                self.game = Some(Match::fair(self.options.rules, seeds));
                self.fair = None;
                self.hands_stored = 0;
                for o in self.seats.0.iter_mut().flatten() {
                    o.timeouts = 0;
                }
                self.send_to(conn, &ServerMessage::Ack { req });
                self.arm_turn(now);
                self.broadcast(now);
            }
            Act::AddBots { owner_token } => {
                if !self.owner_in_lobby(conn, req, &owner_token, "add bots") {
                    return;
                }
                let mut added = Vec::new();
                for seat in Seat::ALL {
                    if self.seats[seat].is_none() {
                        self.seats[seat] = Some(Occupant::bot(format!("{seat} bot")));
                        added.push(seat);
                    }
                }
                if let Err(e) = self.write_seats().await {
                    warn!(error = %e, "could not store the bots' seats: refused");
                    for seat in added {
                        self.seats[seat] = None;
                    }
                    return self.error_to(
                        conn,
                        req,
                        ErrorCode::StorageUnavailable,
                        "the seats could not be stored: try again in a moment",
                    );
                }
                self.send_to(conn, &ServerMessage::Ack { req });
                self.broadcast(now);
            }
            Act::Chat(text) => self.chat(conn, req, role, text),
            Act::Rematch(ready) => self.rematch_ready(conn, req, role, ready, now),
            Act::Closing => {
                if let Some(c) = self.conns.iter_mut().find(|c| c.id == conn) {
                    c.closing = true;
                }
                self.send_to(conn, &ServerMessage::Ack { req });
            }
            Act::Seed(seed) => self.contribute(conn, req, role, seed, now),
            Act::Sync => {
                self.send_to(conn, &ServerMessage::Ack { req });
                self.send_view_to(conn, now);
            }
            Act::Bid(_) | Act::Play(_) | Act::TakeOver | Act::Leave => {
                let seat = match role {
                    Role::Seat(s) => s,
                    Role::Spectator => {
                        return self.error_to(conn, req, ErrorCode::NotSeated, "spectators cannot act");
                    }
                    Role::Left(_) => {
                        return self.error_to(
                            conn,
                            req,
                            ErrorCode::SeatLeft,
                            "you left this match: you can only watch",
                        );
                    }
                };
                self.seat_act(conn, req, seat, act, now).await;
            }
        }
    }

    /// Owner actions need the owner token and a match not yet started;
    /// refuses (and returns false) otherwise.
    fn owner_in_lobby(&mut self, conn: ConnId, req: Option<u32>, owner_token: &str, what: &str) -> bool {
        if !self.owner.matches(owner_token) {
            self.error_to(conn, req, ErrorCode::InvalidToken, format!("only the table's owner can {what}"));
            return false;
        }
        if self.game.is_some() {
            self.error_to(conn, req, ErrorCode::AlreadyStarted, "the match has already started");
            return false;
        }
        true
    }

    async fn seat_act(&mut self, conn: ConnId, req: Option<u32>, seat: Seat, act: Act, now: Instant) {
        match act {
            Act::Leave => {
                if self.game.is_none() {
                    info!(%seat, "player left the lobby: seat freed");
                    self.seats[seat] = None;
                    for c in self.conns.iter_mut().filter(|c| c.role == Role::Seat(seat)) {
                        c.role = Role::Spectator;
                        c.fresh = true;
                    }
                } else {
                    info!(%seat, "player left the match: a bot plays the seat for good");
                    if let Some(o) = self.seats[seat].as_mut() {
                        o.left = true;
                        o.conns = 0;
                        o.away_until = None;
                    }
                    for c in self.conns.iter_mut().filter(|c| c.role == Role::Seat(seat)) {
                        c.role = Role::Left(seat);
                        c.fresh = true;
                    }
                }
                self.seats_changed().await;
                self.send_to(conn, &ServerMessage::Ack { req });
                self.arm_turn(now);
                self.broadcast(now);
            }
            Act::TakeOver => {
                let taken = match self.seats[seat].as_mut() {
                    Some(o) if o.autopilot || o.grace_expired => {
                        o.autopilot = false;
                        o.grace_expired = false;
                        o.timeouts = 0;
                        true
                    }
                    _ => false,
                };
                if !taken {
                    return self.error_to(
                        conn,
                        req,
                        ErrorCode::NotOnAutopilot,
                        "your seat is not on autopilot",
                    );
                }
                info!(%seat, "player took over");
                self.seats_changed().await;
                self.send_to(conn, &ServerMessage::Ack { req });
                // A fresh turn clock for the player, if on turn.
                self.clock = None;
                self.arm_turn(now);
                self.broadcast(now);
            }
            Act::Bid(b) => self.player_action(conn, req, seat, Action::Bid(b), now).await,
            Act::Play(c) => self.player_action(conn, req, seat, Action::Play(c), now).await,
            Act::Closing
            | Act::Sync
            | Act::Start { .. }
            | Act::AddBots { .. }
            | Act::Seed(_)
            | Act::Chat(_)
            | Act::Rematch(_) => {}
        }
    }

    /// Writes the seats now.
    ///
    /// # Errors
    /// When the log cannot be written.
    pub(super) async fn write_seats(&mut self) -> Result<(), crate::storage::StorageError> {
        let seats = self.seats.map(|_, o| o.as_ref().map(Occupant::record));
        self.journal.seats(self.id, &seats).await
    }

    /// Records a change of the seats (absence, leaving); a failed write is
    /// retried in the background until it succeeds.
    pub(super) async fn seats_changed(&mut self) {
        if let Err(e) = self.write_seats().await {
            warn!(error = %e, "could not store the seats: retrying");
            self.retry_later(super::moves::Pending::Seats);
        }
    }
}
