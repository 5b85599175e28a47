//! Seats: who sits where, connections attaching and leaving, absence
//! (grace, autopilot, leaving) and the owner's lobby actions.

use std::sync::Arc;

use spades_engine::{Action, Seat};
use spades_protocol::{ErrorCode, PlayedForYou, SeatKind, SeatPlayer, SeatStatus, ServerMessage};
use tokio::time::Instant;
use tracing::{info, warn};
use uuid::Uuid;

use super::fanout::Conn;
use super::{Attach, Attached, ConnId, Outbox, Role, Table, TableSettings};
use crate::record::RestoredSeat;
use crate::storage::SeatRecord;
use crate::token::{TokenHash, new_token};

/// A seat's occupant.
#[derive(Debug)]
pub(super) struct Occupant {
    pub(super) name: String,
    pub(super) kind: SeatKind,
    pub(super) token: Option<TokenHash>,
    /// The account of a signed-in player: it may come back to the seat
    /// with no token, and holds no other seat here.
    pub(super) account: Option<Uuid>,
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
    /// The moves the table made for the person at this seat in this hand
    /// since their last own move, oldest first: the seat's own view lists
    /// them.
    pub(super) played_for_you: Vec<PlayedForYou>,
}

impl Occupant {
    pub(super) fn human(name: String, token: TokenHash, account: Option<Uuid>) -> Occupant {
        Occupant {
            name,
            kind: SeatKind::Human,
            token: Some(token),
            account,
            conns: 0,
            away_until: None,
            closing: false,
            grace_expired: false,
            autopilot: false,
            left: false,
            timeouts: 0,
            players: Vec::new(),
            played_for_you: Vec::new(),
        }
    }

    /// The bot of `seat`, named for it.
    pub(super) fn bot(seat: Seat) -> Occupant {
        let name = Occupant::bot_name(seat);
        Occupant { kind: SeatKind::Bot, token: None, ..Occupant::human(name, TokenHash([0; 32]), None) }
    }

    /// A bot is named for the seat it plays.
    pub(super) fn bot_name(seat: Seat) -> String {
        format!("{seat} bot")
    }

    /// A seat as stored: people start away, with a full grace unless it had
    /// already run out (then the bot goes on playing until they return).
    pub(super) fn restored(s: &RestoredSeat, now: Instant, settings: &TableSettings) -> Occupant {
        let person = s.kind == SeatKind::Human && !s.left;
        Occupant {
            name: s.name.clone(),
            kind: s.kind,
            token: s.token,
            account: s.account,
            conns: 0,
            away_until: (person && !s.grace_expired).then(|| now + settings.grace),
            closing: false,
            grace_expired: person && s.grace_expired,
            autopilot: s.autopilot,
            left: s.left,
            timeouts: s.timeouts,
            players: s.players.clone(),
            played_for_you: s.played_for_you.clone(),
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

    /// True when the table plays this person's seat for them because of
    /// their timeouts (not because they are gone or left).
    pub(super) fn autopiloted(&self) -> bool {
        self.kind == SeatKind::Human && self.autopilot && !self.left && !self.grace_expired
    }

    /// A connection attached to the seat. True when the player came back
    /// to a seat the bot or the autopilot was playing, or one with
    /// timeouts: it is theirs again without taking over.
    pub(super) fn attached(&mut self) -> bool {
        let returned = self.conns == 0 && (self.grace_expired || self.autopilot || self.timeouts > 0);
        if returned {
            self.clear_absence();
        }
        self.conns += 1;
        self.away_until = None;
        self.closing = false;
        returned
    }

    /// A connection of the seat went away (`closing`: it said it was
    /// closing on purpose). When it was the last of a person still playing,
    /// the grace starts: its length.
    pub(super) fn detached(
        &mut self,
        closing: bool,
        now: Instant,
        settings: &TableSettings,
    ) -> Option<std::time::Duration> {
        self.conns = self.conns.saturating_sub(1);
        self.closing |= closing;
        if self.conns > 0 || self.kind != SeatKind::Human || self.left || self.grace_expired {
            return None;
        }
        let grace = if self.closing { settings.closing_grace } else { settings.grace };
        self.away_until = Some(now + grace);
        Some(grace)
    }

    /// True when the player is away and the grace has run out by `now`.
    pub(super) fn grace_over(&self, now: Instant) -> bool {
        self.conns == 0 && self.away_until.is_some_and(|t| t <= now)
    }

    /// The grace ran out during the match: a bot plays until the player
    /// comes back.
    pub(super) fn hand_to_bot(&mut self) {
        self.away_until = None;
        self.grace_expired = true;
    }

    /// The player left the match for good.
    pub(super) fn leave(&mut self) {
        self.left = true;
        self.conns = 0;
        self.away_until = None;
        self.played_for_you.clear();
    }

    /// The player takes the seat back from the autopilot or the bot; false
    /// when neither was playing it.
    pub(super) fn take_over(&mut self) -> bool {
        let taken = self.autopilot || self.grace_expired;
        if taken {
            self.clear_absence();
            self.played_for_you.clear();
        }
        taken
    }

    /// The player made a move of their own. True when that changed the
    /// seat (it had timeouts, or was on autopilot). The moves the table
    /// made for them are behind them now.
    pub(super) fn played(&mut self) -> bool {
        let changed = self.timeouts > 0 || self.autopilot;
        self.timeouts = 0;
        self.autopilot = false;
        self.played_for_you.clear();
        changed
    }

    /// The table made a move for this seat: kept for its person's view (a
    /// bot's seat, or one whose player left, keeps nothing).
    pub(super) fn played_for(&mut self, made: PlayedForYou) {
        if self.kind != SeatKind::Human || self.left {
            return;
        }
        self.played_for_you.push(made);
    }

    /// The turn timed out: one more timeout in a row. True when that turned
    /// the autopilot on.
    pub(super) fn timed_out(&mut self, autopilot_after: u8) -> bool {
        self.timeouts = self.timeouts.saturating_add(1);
        let on = self.timeouts >= autopilot_after && !self.autopilot;
        self.autopilot |= on;
        on
    }

    /// The match starts: no timeouts yet.
    pub(super) fn match_starts(&mut self) {
        self.timeouts = 0;
    }

    /// Timeouts, the autopilot and an expired grace are forgotten.
    fn clear_absence(&mut self) {
        self.grace_expired = false;
        self.autopilot = false;
        self.timeouts = 0;
    }

    fn record(&self) -> SeatRecord {
        SeatRecord {
            name: self.name.clone(),
            kind: self.kind,
            token_hash: self.token.map(TokenHash::to_hex),
            account: self.account,
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

    /// The seat `account` holds at this table and has not left.
    pub(super) fn seat_of_account(&self, account: Uuid) -> Option<Seat> {
        Seat::ALL
            .into_iter()
            .find(|&s| self.seats[s].as_ref().is_some_and(|o| o.account == Some(account) && !o.left))
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
        let account = how.account();
        let (role, reply, again) = match how {
            Attach::Watch { account } => {
                (Role::Spectator, ServerMessage::Watching { req, table: self.id }, Attach::Watch { account })
            }
            Attach::Join { name, seat, invite, account } => {
                if let Some(held) = account.and_then(|a| self.seat_of_account(a)) {
                    let message = format!("you already sit at {held} at this table: resume that seat");
                    Table::refuse(&outbox, req, ErrorCode::AlreadySeated, &message);
                    return None;
                }
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
                let joiner = self.joiner(place, name, hash, account);
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
                let again = Attach::Resume { token: token.clone(), account };
                (Role::Seat(seat), ServerMessage::Joined { req, table: self.id, seat, token }, again)
            }
            Attach::Resume { .. } | Attach::Reclaim { .. } => {
                let found = match &how {
                    Attach::Resume { token, .. } => Seat::ALL.into_iter().find(|&s| {
                        self.seats[s].as_ref().and_then(|o| o.token).is_some_and(|h| h.matches(token))
                    }),
                    Attach::Reclaim { account } => self.seat_of_account(*account).or_else(|| {
                        // A seat the account left: it may still watch it.
                        Seat::ALL
                            .into_iter()
                            .find(|&s| self.seats[s].as_ref().is_some_and(|o| o.account == Some(*account)))
                    }),
                    Attach::Join { .. } | Attach::Watch { .. } => None,
                };
                let Some(seat) = found else {
                    let message = if matches!(how, Attach::Reclaim { .. }) {
                        "your account holds no seat at this table: join it"
                    } else {
                        "that seat token is not valid at this table"
                    };
                    Table::refuse(&outbox, req, ErrorCode::InvalidToken, message);
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
                    how,
                )
            }
        };
        // A player coming back gets the seat back from the bot or the
        // autopilot without having to take over.
        let returned = match role {
            Role::Seat(seat) => self.seats[seat].as_mut().is_some_and(Occupant::attached),
            Role::Spectator | Role::Left(_) => false,
        };
        if returned {
            self.seats_changed().await;
        }
        self.conns.push(Conn { id: conn, role, outbox, closing: false, fresh: true, account });
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
        let account = match role {
            Role::Seat(seat) | Role::Left(seat) => self.seats[seat].as_ref().and_then(|o| o.account),
            Role::Spectator => None,
        };
        Some(Attached { role, again, account })
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
        if let Some(grace) = self.seats[seat].as_mut().and_then(|o| o.detached(c.closing, now, &settings)) {
            info!(%seat, grace_secs = grace.as_secs_f32(), "player disconnected");
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
            if !self.seats[seat].as_ref().is_some_and(|o| o.grace_over(now)) {
                continue;
            }
            changed = true;
            if in_lobby {
                info!(%seat, "grace ran out in the lobby: seat freed");
                self.seats[seat] = None;
            } else if let Some(o) = self.seats[seat].as_mut() {
                info!(%seat, "grace ran out: a bot plays the seat");
                o.hand_to_bot();
            }
        }
        if changed {
            self.seats_changed().await;
        }
        changed
    }

    /// The seat `role` plays, for one of its own moves; refuses (and
    /// returns `None`) a spectator and a player who left.
    fn acting_seat(&mut self, conn: ConnId, req: Option<u32>, role: Role) -> Option<Seat> {
        match role {
            Role::Seat(s) => Some(s),
            Role::Spectator => {
                self.error_to(conn, req, ErrorCode::NotSeated, "spectators cannot act");
                None
            }
            Role::Left(_) => {
                self.error_to(conn, req, ErrorCode::SeatLeft, "you left this match: you can only watch");
                None
            }
        }
    }

    /// A bid or a card of the seat `role` plays.
    pub(super) async fn seat_move(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        role: Role,
        chosen: (Action, Option<u64>, bool),
        now: Instant,
    ) {
        if let Some(seat) = self.acting_seat(conn, req, role) {
            self.player_action(conn, req, seat, chosen, now).await;
        }
    }

    /// The player leaves: in the lobby the seat is freed, in the match a bot
    /// plays it for good.
    pub(super) async fn leave(&mut self, conn: ConnId, req: Option<u32>, role: Role, now: Instant) {
        let Some(seat) = self.acting_seat(conn, req, role) else { return };
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
                o.leave();
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

    /// The player takes the seat back from the autopilot or the bot.
    pub(super) async fn take_over(&mut self, conn: ConnId, req: Option<u32>, role: Role, now: Instant) {
        let Some(seat) = self.acting_seat(conn, req, role) else { return };
        if !self.seats[seat].as_mut().is_some_and(Occupant::take_over) {
            return self.error_to(conn, req, ErrorCode::NotOnAutopilot, "your seat is not on autopilot");
        }
        info!(%seat, "player took over");
        self.seats_changed().await;
        // A fresh turn clock for the player, if on turn.
        self.clock = None;
        self.arm_turn(now);
        self.broadcast_with(now, Some((conn, req)));
    }

    /// The client is closing on purpose: when this was the seat's last
    /// connection, the seat is held for the short grace.
    pub(super) fn closing(&mut self, conn: ConnId, req: Option<u32>) {
        if let Some(c) = self.conns.iter_mut().find(|c| c.id == conn) {
            c.closing = true;
        }
        self.send_to(conn, &ServerMessage::Ack { req });
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn person() -> Occupant {
        Occupant::human("Ann".into(), TokenHash([7; 32]), None)
    }

    fn settings() -> TableSettings {
        TableSettings {
            grace: Duration::from_secs(60),
            closing_grace: Duration::from_secs(10),
            ..TableSettings::default()
        }
    }

    #[test]
    fn the_last_connection_going_starts_the_grace_and_a_new_one_ends_it() {
        let (now, settings) = (Instant::now(), settings());
        let mut o = person();
        assert!(!o.attached(), "a first connection returns from nothing");
        assert!(!o.attached());
        assert_eq!(o.detached(false, now, &settings), None, "another connection is left");
        assert_eq!(o.status(), SeatStatus::Present);
        assert_eq!(o.detached(false, now, &settings), Some(settings.grace));
        assert_eq!(o.status(), SeatStatus::Away);
        assert!(!o.grace_over(now + Duration::from_secs(59)));
        assert!(o.grace_over(now + Duration::from_secs(60)));
        assert!(!o.attached());
        assert_eq!((o.away_until, o.status()), (None, SeatStatus::Present));
        assert!(!o.grace_over(now + Duration::from_secs(600)), "present: no grace runs");
    }

    #[test]
    fn a_client_that_said_it_was_closing_gets_the_short_grace() {
        let (now, settings) = (Instant::now(), settings());
        let mut o = person();
        o.attached();
        assert_eq!(o.detached(true, now, &settings), Some(settings.closing_grace));
        // Coming back forgets it.
        o.attached();
        assert!(!o.closing);
        assert_eq!(o.detached(false, now, &settings), Some(settings.grace));
    }

    #[test]
    fn nobody_waits_for_a_bot_or_a_player_who_left() {
        let (now, settings) = (Instant::now(), settings());
        let mut bot = Occupant::bot(Seat::North);
        bot.attached();
        assert_eq!(bot.detached(false, now, &settings), None);
        let mut o = person();
        o.attached();
        o.leave();
        assert_eq!((o.left, o.conns, o.status()), (true, 0, SeatStatus::Left));
        assert!(o.auto_played());
        assert_eq!(o.detached(false, now, &settings), None, "no grace for a seat left for good");
    }

    #[test]
    fn a_grace_run_out_hands_the_seat_to_the_bot_until_the_player_returns() {
        let (now, settings) = (Instant::now(), settings());
        let mut o = person();
        o.attached();
        o.detached(false, now, &settings);
        o.hand_to_bot();
        assert_eq!((o.status(), o.away_until), (SeatStatus::Bot, None));
        assert!(o.auto_played() && !o.autopiloted());
        assert_eq!(o.detached(false, now, &settings), None, "the bot plays: no second grace");
        assert!(o.attached(), "the player is back");
        assert_eq!(o.status(), SeatStatus::Present);
        assert!(!o.auto_played());
    }

    #[test]
    fn timeouts_turn_the_autopilot_on_and_the_players_own_move_turns_it_off() {
        let mut o = person();
        o.attached();
        assert!(!o.timed_out(3) && !o.timed_out(3));
        assert!(o.timed_out(3), "the third timeout in a row");
        assert!(!o.timed_out(3), "already on");
        assert_eq!(o.status(), SeatStatus::Autopilot);
        assert!(o.autopiloted() && o.auto_played());
        assert!(o.played(), "the player's own move changes the seat");
        assert_eq!((o.autopilot, o.timeouts), (false, 0));
        assert!(!o.played(), "and the next one does not");
        o.timed_out(3);
        o.match_starts();
        assert_eq!(o.timeouts, 0);
    }

    #[test]
    fn taking_over_needs_a_seat_played_for_the_player() {
        let mut o = person();
        o.attached();
        assert!(!o.take_over(), "nothing to take back");
        for _ in 0..3 {
            o.timed_out(3);
        }
        assert!(o.take_over());
        assert_eq!((o.autopilot, o.timeouts, o.status()), (false, 0, SeatStatus::Present));
        o.hand_to_bot();
        assert!(o.take_over());
        assert!(!o.grace_expired);
    }

    #[test]
    fn a_player_reconnecting_to_a_seat_with_timeouts_has_it_back() {
        let (now, settings) = (Instant::now(), settings());
        let mut o = person();
        o.attached();
        o.timed_out(3);
        o.detached(false, now, &settings);
        assert!(o.attached(), "timeouts are forgotten on return");
        assert_eq!(o.timeouts, 0);
        assert!(!o.attached(), "a second connection returns from nothing");
    }
}
