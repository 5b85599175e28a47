//! Seats: who sits where, connections attaching and leaving, absence
//! (grace, autopilot, leaving) and the owner's lobby actions.

use std::sync::Arc;

use spades_engine::{Action, Seat};
use spades_protocol::{ErrorCode, SeatKind, SeatPlayer, SeatStatus, ServerMessage};
use tokio::time::Instant;
use tracing::{info, warn};

use super::fanout::Conn;
use super::{Act, Attach, Attached, ConnId, Outbox, Role, Table, TableSettings};
use crate::record::RestoredSeat;
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
    /// Who played the seat, once it changed hands during the match.
    pub(super) players: Vec<SeatPlayer>,
}

impl Occupant {
    pub(super) fn human(name: String, token: TokenHash) -> Occupant {
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
            players: Vec::new(),
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
            players: s.players.clone(),
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
            players: self.players.clone(),
        }
    }
}

impl Table {
    /// True when a running match has seats of people but no person at it
    /// any more: each left it on purpose, or is away past the grace with no
    /// connection. (A match of bots alone, watched, plays on.)
    pub(super) fn nobody_home(&self) -> bool {
        if self.game.as_ref().is_none_or(|m| m.result().is_some()) {
            return false;
        }
        let mut people = self.seats.0.iter().flatten().filter(|o| o.kind == SeatKind::Human).peekable();
        people.peek().is_some() && people.all(|o| o.left || (o.grace_expired && o.conns == 0))
    }

    /// True when every person at a running match left it on purpose.
    pub(super) fn everyone_left(&self) -> bool {
        let mut people = self.seats.0.iter().flatten().filter(|o| o.kind == SeatKind::Human).peekable();
        people.peek().is_some() && people.all(|o| o.left)
    }

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
            Attach::Join { name, seat, invite } => {
                let place = match self.place_for(seat, invite.as_deref()) {
                    Ok(place) => place,
                    Err((code, message)) => {
                        Table::refuse(&outbox, req, code, &message);
                        return None;
                    }
                };
                let seat = place.seat();
                let Ok((token, hash)) = new_token() else {
                    Table::refuse(&outbox, req, ErrorCode::Internal, "could not make a seat token");
                    return None;
                };
                let joiner = self.joiner(place, name, hash);
                let before = self.seats[seat].replace(joiner);
                // The seat is durable before its token is handed out: a
                // restart can always restore what a player was given.
                if let Err(e) = self.write_seats().await {
                    warn!(%seat, error = %e, "could not store a new seat: refused");
                    self.seats[seat] = before;
                    Table::refuse(
                        &outbox,
                        req,
                        ErrorCode::StorageUnavailable,
                        "the seat could not be stored: try again in a moment",
                    );
                    return None;
                }
                self.placed(place);
                info!(%seat, ?place, "seat taken");
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

    pub(super) async fn act(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        (act, resent): (Act, bool),
        now: Instant,
    ) {
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
                self.start(conn, req, now).await;
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
                self.broadcast_with(now, Some((conn, req)));
            }
            Act::RemoveBot { owner_token, seat } => self.remove_bot(conn, req, &owner_token, seat, now).await,
            Act::MoveSeat { owner_token, from, to } => {
                self.move_seat(conn, req, &owner_token, (from, to), now).await;
            }
            Act::Invite { owner_token, seat } => self.invite(conn, req, &owner_token, seat),
            Act::Chat(text) => self.chat(conn, req, role, text),
            Act::Rematch(ready) => self.rematch_ready(conn, req, role, ready, now),
            Act::Closing => {
                if let Some(c) = self.conns.iter_mut().find(|c| c.id == conn) {
                    c.closing = true;
                }
                self.send_to(conn, &ServerMessage::Ack { req });
            }
            Act::Seed(seed) => self.contribute(conn, req, role, super::fair::Offer::Seed(seed), now).await,
            Act::CommitSeed(c) => {
                self.contribute(conn, req, role, super::fair::Offer::Commitment(c), now).await
            }
            Act::Sync => {
                self.send_to(conn, &ServerMessage::Ack { req });
                self.send_view_to(conn, now);
            }
            Act::Bid(..) | Act::Play(..) | Act::TakeOver | Act::Leave => {
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
                self.seat_act(conn, req, seat, (act, resent), now).await;
            }
        }
    }

    /// Owner actions need the owner token and a match not yet started;
    /// refuses (and returns false) otherwise.
    pub(super) fn owner_in_lobby(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        owner_token: &str,
        what: &str,
    ) -> bool {
        if !self.owner.matches(owner_token) {
            self.error_to(conn, req, ErrorCode::InvalidToken, format!("only the table's owner can {what}"));
            return false;
        }
        if self.game.is_some() {
            self.error_to(conn, req, ErrorCode::AlreadyStarted, "the match has already started");
            return false;
        }
        if self.revealing() {
            self.error_to(
                conn,
                req,
                ErrorCode::AlreadyStarted,
                "the match is starting: the seats reveal their seeds",
            );
            return false;
        }
        true
    }

    async fn seat_act(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        seat: Seat,
        (act, resent): (Act, bool),
        now: Instant,
    ) {
        match act {
            Act::Leave => {
                if self.revealing() {
                    return self.error_to(
                        conn,
                        req,
                        ErrorCode::AlreadyStarted,
                        "the match is starting: leave once it has begun",
                    );
                }
                if self.game.is_none() {
                    info!(%seat, "player left the lobby: seat freed");
                    self.seats[seat] = None;
                    for c in self.conns.iter_mut().filter(|c| c.role == Role::Seat(seat)) {
                        c.role = Role::Spectator;
                        c.fresh = true;
                    }
                } else {
                    info!(%seat, "player left the match: a bot plays the seat for good");
                    self.note_bot_takes(seat);
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
                self.arm_turn(now);
                self.broadcast_with(now, Some((conn, req)));
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
                // A fresh turn clock for the player, if on turn.
                self.clock = None;
                self.arm_turn(now);
                self.broadcast_with(now, Some((conn, req)));
            }
            Act::Bid(b, seq) => self.player_action(conn, req, seat, (Action::Bid(b), seq, resent), now).await,
            Act::Play(c, seq) => {
                self.player_action(conn, req, seat, (Action::Play(c), seq, resent), now).await
            }
            Act::Closing
            | Act::Sync
            | Act::Start { .. }
            | Act::AddBots { .. }
            | Act::RemoveBot { .. }
            | Act::MoveSeat { .. }
            | Act::Invite { .. }
            | Act::Seed(_)
            | Act::CommitSeed(_)
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
