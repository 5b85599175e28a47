//! Arranging the seats with friends: in the lobby the owner takes a bot
//! out of a seat or moves seats, and a person who joins may take a bot's
//! seat (the table's `bot_seats_open`); during the match the owner invites
//! a person to the seat of a player who left, who then plays it on with its
//! score and cards.
//!
//! Invitations are kept in memory only: a restart forgets them (the owner
//! invites again).

use spades_engine::{BySeat, Seat};
use spades_protocol::{ErrorCode, SeatKind, SeatPlayer, ServerMessage};
use tokio::time::Instant;
use tracing::{info, warn};

use super::seats::Occupant;
use super::{ConnId, Role, Table};
use crate::token::{TokenHash, new_token};

/// The open invitation of each seat, as the hash of its code.
pub(super) type Invites = BySeat<Option<TokenHash>>;

/// Where a `join` sits, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Place {
    /// An empty seat.
    Empty(Seat),
    /// A seat a bot holds in the lobby: the bot goes.
    Bot(Seat),
    /// During the match, the seat of a player who left, by invitation.
    Invited(Seat),
}

impl Place {
    pub(super) fn seat(self) -> Seat {
        match self {
            Place::Empty(s) | Place::Bot(s) | Place::Invited(s) => s,
        }
    }
}

/// The name the history gives the table's bot.
const BOT: &str = "Bot";

impl Table {
    /// The seat a `join` for `seat` (or any) takes, or why none.
    pub(super) fn place_for(
        &self,
        seat: Option<Seat>,
        invite: Option<&str>,
    ) -> Result<Place, (ErrorCode, String)> {
        if self.revealing() {
            return Err((ErrorCode::AlreadyStarted, "the match is starting: you can watch".to_owned()));
        }
        if self.game.is_some() {
            let Some(code) = invite else {
                return Err((ErrorCode::AlreadyStarted, "the match has started: you can watch".to_owned()));
            };
            let invited = Seat::ALL
                .into_iter()
                .find(|&s| self.invites[s].is_some_and(|h| h.matches(code)) && seat.is_none_or(|w| w == s));
            return match invited {
                Some(s) if self.seats[s].as_ref().is_some_and(|o| o.left) => Ok(Place::Invited(s)),
                _ => Err((ErrorCode::InvalidToken, "that invitation is not valid at this table".to_owned())),
            };
        }
        let bots_yield = self.options.bot_seats_open;
        let is_bot = |s: Seat| self.seats[s].as_ref().is_some_and(|o| o.kind == SeatKind::Bot);
        match seat {
            Some(s) if self.seats[s].is_none() => Ok(Place::Empty(s)),
            Some(s) if bots_yield && is_bot(s) => Ok(Place::Bot(s)),
            Some(s) => Err((ErrorCode::SeatTaken, format!("{s} is taken"))),
            None => {
                if let Some(s) = Seat::ALL.into_iter().find(|&s| self.seats[s].is_none()) {
                    Ok(Place::Empty(s))
                } else if let Some(s) = Seat::ALL.into_iter().find(|&s| bots_yield && is_bot(s)) {
                    Ok(Place::Bot(s))
                } else {
                    Err((ErrorCode::TableFull, "every seat is taken: you can watch".to_owned()))
                }
            }
        }
    }

    /// A join took `place`: an invitation is used once.
    pub(super) fn placed(&mut self, place: Place) {
        if let Place::Invited(seat) = place {
            self.invites[seat] = None;
        }
    }

    /// The occupant a `join` puts at `place`: `name` (of `account`, when
    /// signed in), holding `token`; a person invited to a left seat takes
    /// its history on.
    pub(super) fn joiner(
        &self,
        place: Place,
        name: String,
        token: TokenHash,
        account: Option<uuid::Uuid>,
    ) -> Occupant {
        let mut o = Occupant::human(name, token, account);
        if let Place::Invited(seat) = place {
            let hand = self.game.as_ref().map_or(1, spades_engine::Match::hand_number);
            o.players = self.seats[seat].as_ref().map(|old| old.players.clone()).unwrap_or_default();
            o.players.push(SeatPlayer { name: o.name.clone(), kind: SeatKind::Human, from_hand: hand });
        }
        o
    }

    /// A player leaves the match for good: the seat's history says a bot
    /// plays it from this hand on.
    pub(super) fn note_bot_takes(&mut self, seat: Seat) {
        let hand = self.game.as_ref().map_or(1, spades_engine::Match::hand_number);
        if let Some(o) = self.seats[seat].as_mut() {
            if o.players.is_empty() {
                o.players.push(SeatPlayer { name: o.name.clone(), kind: SeatKind::Human, from_hand: 1 });
            }
            o.players.push(SeatPlayer { name: BOT.to_owned(), kind: SeatKind::Bot, from_hand: hand });
        }
    }

    /// True for the table's owner: the owner token when one is given, else
    /// a connection signed in as the account that created the table.
    pub(super) fn is_owner(&self, conn: ConnId, owner_token: Option<&str>) -> bool {
        let account = self.conns.iter().find(|c| c.id == conn).and_then(|c| c.account);
        self.owner.admits(owner_token, account)
    }

    /// Owner actions need the owner token and a match not yet started;
    /// refuses (and returns false) otherwise.
    pub(super) fn owner_in_lobby(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        owner_token: Option<&str>,
        what: &str,
    ) -> bool {
        if !self.is_owner(conn, owner_token) {
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

    /// Owner, in the lobby: the match starts (its seeds are revealed
    /// first, `fair.rs`) once every seat is taken.
    pub(super) async fn start_match(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        owner_token: Option<&str>,
        now: Instant,
    ) {
        if !self.owner_in_lobby(conn, req, owner_token, "start the match") {
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

    /// Owner, in the lobby: a bot in every empty seat.
    pub(super) async fn add_bots(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        owner_token: Option<&str>,
        now: Instant,
    ) {
        if !self.owner_in_lobby(conn, req, owner_token, "add bots") {
            return;
        }
        let mut added = Vec::new();
        for seat in Seat::ALL {
            if self.seats[seat].is_none() {
                self.seats[seat] = Some(Occupant::bot(seat));
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

    /// Owner, in the lobby: the bot at `seat` goes and the seat is empty.
    pub(super) async fn remove_bot(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        owner_token: Option<&str>,
        seat: Seat,
        now: Instant,
    ) {
        if !self.owner_in_lobby(conn, req, owner_token, "take a bot out") {
            return;
        }
        if !self.seats[seat].as_ref().is_some_and(|o| o.kind == SeatKind::Bot) {
            return self.error_to(conn, req, ErrorCode::SeatNotBot, format!("no bot sits at {seat}"));
        }
        let bot = self.seats[seat].take();
        if let Err(e) = self.write_seats().await {
            warn!(%seat, error = %e, "could not store a seat without its bot: refused");
            self.seats[seat] = bot;
            return self.storage_refusal(conn, req);
        }
        info!(%seat, "bot removed");
        self.broadcast_with(now, Some((conn, req)));
    }

    /// Owner, in the lobby: the occupants of `from` and `to` swap seats; a
    /// moved player keeps their token, seed and connections.
    pub(super) async fn move_seat(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        owner_token: Option<&str>,
        (from, to): (Seat, Seat),
        now: Instant,
    ) {
        if !self.owner_in_lobby(conn, req, owner_token, "move seats") {
            return;
        }
        if from == to {
            return self.error_to(conn, req, ErrorCode::BadMessage, "\"from\" and \"to\" are the same seat");
        }
        self.swap(from, to);
        if let Err(e) = self.write_seats().await {
            warn!(error = %e, "could not store moved seats: refused");
            self.swap(from, to);
            return self.storage_refusal(conn, req);
        }
        info!(%from, %to, "seats moved");
        self.broadcast_with(now, Some((conn, req)));
    }

    /// Swaps two seats' occupants, seeds and connections (each moved
    /// connection gets a snapshot: its `you` changed).
    fn swap(&mut self, a: Seat, b: Seat) {
        self.seats.0.swap(usize::from(a.index()), usize::from(b.index()));
        // A bot is named for the seat it plays, wherever it moves.
        for seat in [a, b] {
            if let Some(o) = self.seats[seat].as_mut().filter(|o| o.kind == SeatKind::Bot) {
                o.name = Occupant::bot_name(seat);
            }
        }
        if let Some(lobby) = self.fair.as_mut() {
            lobby.swap(a, b);
        }
        for c in &mut self.conns {
            let moved = match c.role {
                Role::Seat(s) if s == a => Some(b),
                Role::Seat(s) if s == b => Some(a),
                _ => None,
            };
            if let Some(s) = moved {
                c.role = Role::Seat(s);
                c.fresh = true;
            }
        }
    }

    /// Owner, during the match: a code for a person to take the seat of the
    /// player who left it (`join` with `invite`). A new invitation replaces
    /// the seat's last one.
    pub(super) fn invite(&mut self, conn: ConnId, req: Option<u32>, owner_token: Option<&str>, seat: Seat) {
        if !self.is_owner(conn, owner_token) {
            return self.error_to(conn, req, ErrorCode::InvalidToken, "only the table's owner can invite");
        }
        let Some(m) = self.game.as_ref() else {
            return self.error_to(
                conn,
                req,
                ErrorCode::NotStarted,
                "before the match anyone can join an empty seat",
            );
        };
        if m.result().is_some() {
            return self.error_to(conn, req, ErrorCode::MatchOver, "the match is over");
        }
        if !self.seats[seat].as_ref().is_some_and(|o| o.left) {
            return self.error_to(
                conn,
                req,
                ErrorCode::SeatTaken,
                format!(
                    "{seat}'s player has not left: only the seat of a player who left can be handed over"
                ),
            );
        }
        let Ok((code, hash)) = new_token() else {
            return self.error_to(conn, req, ErrorCode::Internal, "could not make an invitation");
        };
        self.invites[seat] = Some(hash);
        info!(%seat, "invitation made");
        self.send_to(conn, &ServerMessage::Invited { req, seat, code });
    }

    fn storage_refusal(&mut self, conn: ConnId, req: Option<u32>) {
        self.error_to(
            conn,
            req,
            ErrorCode::StorageUnavailable,
            "the seats could not be stored: try again in a moment",
        );
    }
}
