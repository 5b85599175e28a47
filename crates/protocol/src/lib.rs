//! The messages between the Spades table server and its clients.
//!
//! Everything is JSON. Over the WebSocket (`/ws`), each direction has one
//! tagged enum: [`ClientFrame`] (a [`ClientMessage`] with an optional request
//! id) from client to server, and [`ServerMessage`] from server to client;
//! the tag is the `"type"` field. The REST API (`/api/v1/...`) uses the
//! request and response types at the end of this module. The protocol is
//! described for implementers in `docs/protocol.md`.
//!
//! ```
//! use spades_protocol::{ClientFrame, ClientMessage};
//!
//! let frame: ClientFrame = serde_json::from_str(r#"{"type":"bid","bid":4,"req":7}"#).unwrap();
//! assert_eq!(frame.req, Some(7));
//! assert_eq!(frame.msg, ClientMessage::Bid { bid: 4, seq: None });
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use serde::{Deserialize, Serialize};
use spades_engine::{
    Action, Card, ClientSeed, Commitment, HandResult, MatchResult, Rules, Seat, SeatView, ServerSeed,
};
use utoipa::ToSchema;
use uuid::Uuid;

mod accounts;
mod change;
mod moderation;
mod read;

pub use accounts::{
    Account, AccountExport, AccountKind, AddPasskey, GuestSignIn, Identity, IdentityKind, IssuedSession, Me,
    NameSuggestion, NewSession, OidcProvider, OwnSanction, PasskeyInfo, PasskeyOptions, PasskeySignIn,
    PasswordSet, PasswordSignIn, RenameAccount, SessionDelivery, SessionInfo, SetPassword, SignInMethods,
    SignedIn,
};
pub use change::{ApplyError, Change, ClockChange, Deal};
pub use moderation::{
    AccountDossier, AccountRef, AuditAction, AuditEntry, ChatBlock, ChatLine, CloseTable, LiftSanction,
    Lifted, ModeratedAccount, NewReport, NewSanction, OperatorChange, RemoveChat, Report, ReportContext,
    ReportReason, ReportReceipt, Resolution, ResolveReport, Restriction, SANCTION_SECONDS_MAX, Sanction,
    SanctionKind,
};
pub use read::{Field, Refusal};
pub use spades_engine;
pub use uuid;

/// The protocol version spoken by this crate. The server announces it in
/// [`ServerMessage::Hello`]; it changes only when a change would break
/// existing clients.
pub const PROTOCOL_VERSION: u32 = 2;

/// The largest text frame the server reads, in bytes.
pub const MAX_FRAME_BYTES: usize = 4096;

/// How fast a table plays: the time allowed per card and per bid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tempo {
    /// 60 s per card, 75 s per bid.
    Relaxed,
    /// 30 s per card, 40 s per bid.
    #[default]
    Normal,
    /// 15 s per card, 25 s per bid.
    Fast,
}

impl Tempo {
    /// Milliseconds allowed to play a card.
    pub const fn card_ms(self) -> u64 {
        match self {
            Tempo::Relaxed => 60_000,
            Tempo::Normal => 30_000,
            Tempo::Fast => 15_000,
        }
    }

    /// Milliseconds allowed to bid.
    pub const fn bid_ms(self) -> u64 {
        match self {
            Tempo::Relaxed => 75_000,
            Tempo::Normal => 40_000,
            Tempo::Fast => 25_000,
        }
    }
}

/// Everything the owner chooses when creating a table (SPEC §3). Fixed once
/// the match starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TableOptions {
    /// The rules of the match (every field optional; defaults per SPEC §3).
    #[serde(default)]
    pub rules: Rules,
    /// The clock (default normal).
    #[serde(default)]
    pub tempo: Tempo,
    /// Spectators may write in the table's chat (default: they only read it).
    #[serde(default)]
    pub spectator_chat: bool,
    /// In the lobby, a person who joins may take a seat a bot holds (default
    /// true): friends can still sit after the owner filled the seats with
    /// bots.
    #[serde(default = "default_true")]
    pub bot_seats_open: bool,
}

impl Default for TableOptions {
    fn default() -> TableOptions {
        TableOptions {
            rules: Rules::default(),
            tempo: Tempo::default(),
            spectator_chat: false,
            bot_seats_open: true,
        }
    }
}

/// The longest chat message, in characters.
pub const MAX_CHAT_CHARS: usize = 200;

/// Where a table stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TablePhase {
    /// Seats are being taken; the owner has not started the match.
    Lobby,
    /// A hand is being bid.
    Bidding,
    /// A hand is being played.
    Playing,
    /// The match is over.
    Finished,
}

/// Who sits in a seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeatKind {
    /// A person, holding the seat token.
    Human,
    /// A computer player added by the owner.
    Bot,
}

/// The state of a seat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SeatStatus {
    /// Nobody has taken the seat.
    Empty,
    /// The player is connected and playing.
    Present,
    /// The player's connection dropped; the seat is held until `away_until`.
    Away,
    /// The player timed out three turns in a row; the table plays for them
    /// until they take over (or act themselves).
    Autopilot,
    /// A bot plays the seat: a bot seat, or a player whose grace ran out (who
    /// may come back with the seat token).
    Bot,
    /// The player left on purpose; a bot plays the seat for the rest of the
    /// match.
    Left,
}

/// One seat as everybody sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SeatInfo {
    /// Which seat.
    pub seat: Seat,
    /// The player's (or bot's) display name; `None` while empty.
    pub name: Option<String>,
    /// Person or bot; `None` while empty.
    pub kind: Option<SeatKind>,
    /// The seat's status.
    pub status: SeatStatus,
    /// While `away`: when the grace ends (Unix time, milliseconds).
    pub away_until: Option<u64>,
    /// Consecutive turns lost on time.
    pub timeouts: u8,
}

impl SeatInfo {
    /// An empty seat.
    #[must_use]
    pub const fn empty(seat: Seat) -> SeatInfo {
        SeatInfo { seat, name: None, kind: None, status: SeatStatus::Empty, away_until: None, timeouts: 0 }
    }
}

/// Which kind of turn the clock is timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClockKind {
    /// A bid.
    Bid,
    /// A card.
    Card,
}

/// The turn clock of the seat on turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Clock {
    /// The seat on turn.
    pub seat: Seat,
    /// Bid or card.
    pub kind: ClockKind,
    /// When the turn runs out (Unix time, milliseconds). Compare with the
    /// view's `server_time` to draw the clock regardless of the client's own
    /// clock.
    pub deadline: u64,
    /// The full length of this turn in milliseconds.
    pub duration_ms: u64,
}

/// Who made an accepted action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActionSource {
    /// The player, by hand.
    Player,
    /// The table, because the player's clock ran out.
    Timeout,
    /// The table, because the seat is on autopilot.
    Autopilot,
    /// A bot playing the seat.
    Bot,
}

/// The most recent accepted action, and who made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct LastAction {
    /// The seat that acted.
    pub seat: Seat,
    /// The bid or card (`{"bid": 3}` or `{"play": "AS"}`).
    pub action: Action,
    /// Who chose it.
    pub source: ActionSource,
}

/// A move the table made for a seat (its clock ran out, the autopilot, or
/// the bot while its player was away), kept for that seat's own view until
/// its player makes a move of their own or the next hand is dealt
/// (`docs/protocol.md`, "Played for you").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PlayedForYou {
    /// The hand it was made in (1-based).
    pub hand_number: u16,
    /// The bid or card (`{"bid": 3}` or `{"play": "8D"}`).
    pub action: Action,
    /// Who chose it: `timeout`, `autopilot` or `bot` (never `player`).
    pub source: ActionSource,
    /// The `seq` of the frame that showed it: a client that had applied
    /// that frame saw it happen (0: not known, for moves stored before
    /// moves carried their `seq`).
    pub seq: u64,
}

/// What one connection sees of a table, complete: the snapshot sent in a
/// `view` frame when the connection attaches, after `sync`, and whenever
/// the server prefers it to a change frame. Change frames
/// ([`Change`]) carry what changed in between.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TableView {
    /// The table's id.
    pub table: Uuid,
    /// The table's name.
    pub name: String,
    /// Lobby, bidding, playing or finished.
    pub phase: TablePhase,
    /// The table's options.
    pub options: TableOptions,
    /// The seat this connection plays, `None` for a spectator.
    pub you: Option<Seat>,
    /// The four seats, North first.
    pub seats: [SeatInfo; 4],
    /// The game as this connection may see it (its own hand only; none for a
    /// spectator); `None` before the match starts.
    pub game: Option<SeatView>,
    /// The turn clock, while a seat is on turn.
    pub clock: Option<Clock>,
    /// The last accepted action of the current hand (`None` after the move
    /// that ended a hand: its card may be in a new hand now).
    pub last_action: Option<LastAction>,
    /// The server's time when the view was made (Unix time, milliseconds).
    pub server_time: u64,
    /// Timeouts in a row after which the autopilot plays a seat (the
    /// server's `tables.autopilot_after`), so a client can say "1 of 3".
    #[serde(default = "default_autopilot_after")]
    pub autopilot_after: u8,
    /// How long a seat is held after its connection drops, in milliseconds
    /// (the server's `tables.grace_secs`), so a client whose connection is
    /// down can say how long its seat is held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_ms: Option<u64>,
    /// The fair-deal commitment and seeds (`docs/fairness.md`); `None` for
    /// a match dealt before fair deals.
    #[serde(default)]
    pub fair: Option<Fairness>,
    /// Once the match is over: who is ready for a rematch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rematch: Option<Rematch>,
    /// A seat's own view only: the moves the table made for this seat in
    /// the hand being played since its player's last own move, oldest
    /// first; absent when there are none. A client that comes back after a
    /// lost connection tells its player those it had not seen (`seq` above
    /// the last frame it applied).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub played_for_you: Vec<PlayedForYou>,
}

/// What anybody may know of a match's fair deals (`docs/fairness.md`): the
/// commitment to the server's secret seed, the players' seeds, and, once the
/// match is over, the server seed itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Fairness {
    /// The version of the scheme (1).
    pub version: u8,
    /// SHA-256 of the server seed, published before any player's seed is
    /// taken. In the lobby it is the seed the match will start with, unless
    /// the table is restored (then a new seed is drawn and the players send
    /// new seeds).
    pub commitment: Commitment,
    /// Each seat's seed, North first (`None`: the seat gave none, e.g. a
    /// bot). In the lobby no seed is shown before the owner starts the
    /// match; while the seats reveal them (`reveal_by`), those revealed so
    /// far; once fixed, the seeds every deal comes from.
    pub client_seeds: [Option<ClientSeed>; 4],
    /// Each seat's commitment to its seed, North first: `SHA-256("spades-seed/v1"
    /// ‖ table id ‖ seat index ‖ seed)` (docs/fairness.md), sent before any
    /// seed is shown. A seed counts only if it matches its seat's
    /// commitment.
    #[serde(default)]
    pub client_commitments: [Option<Commitment>; 4],
    /// While the seats reveal their seeds after the owner's start: when the
    /// reveals close (Unix time, ms). The match is dealt then, or as soon
    /// as every committed seat has revealed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reveal_by: Option<u64>,
    /// True once the match has started: the seeds above are the ones every
    /// deal comes from.
    pub fixed: bool,
    /// The server seed, once the match is over.
    pub server_seed: Option<ServerSeed>,
}

impl Fairness {
    /// The seeds every deal of the match at `table` came from, once the
    /// server seed is revealed and matches the commitment; `None` before
    /// (or when it does not match: see `spades-verify` for the reasons).
    #[must_use]
    pub fn seeds(&self, table: Uuid) -> Option<spades_engine::FairSeeds> {
        let server = self.server_seed.filter(|s| s.commitment() == self.commitment)?;
        Some(spades_engine::FairSeeds::new(
            *table.as_bytes(),
            server,
            spades_engine::BySeat(self.client_seeds),
        ))
    }
}

/// A rematch after the match: who is ready, and the new match once the
/// owner started it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct Rematch {
    /// Per seat, North first: the seat's player is ready for another match
    /// (bots are always ready).
    pub ready: [bool; 4],
    /// The table of the new match, once the owner started it: the same
    /// name, options and seats, with new deals. Every seat token of this
    /// table works there (`resume`); a client simply goes there.
    pub next_table: Option<Uuid>,
}

fn default_autopilot_after() -> u8 {
    3
}

/// A message from a client, with its optional request id.
///
/// `req` is any number the client chooses; the server echoes it in the
/// reply ([`ServerMessage::Ack`], [`ServerMessage::Error`], …) so the client
/// can match replies to requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ClientFrame {
    /// The client's request id, echoed in the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub req: Option<u32>,
    /// The message.
    #[serde(flatten)]
    pub msg: ClientMessage,
}

/// What a client can ask. A connection first attaches to one table with
/// `join`, `resume` or `watch`; the other messages act on that table.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage {
    /// Take a seat (the first empty one when `seat` is absent). The reply
    /// [`ServerMessage::Joined`] carries the seat token: keep it to resume.
    /// A connection opened with a session sits as its account (under the
    /// account's name); an account holds at most one seat at a table.
    Join {
        /// The protocol the client speaks: [`PROTOCOL_VERSION`]. Any other
        /// value, or none, is refused with `unsupported_protocol`.
        #[serde(default)]
        protocol: Option<u32>,
        /// The table.
        table: Uuid,
        /// Display name, 1 to 24 characters: needed without a session;
        /// with one, the account's name is used and this is ignored.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// The seat wanted, if any.
        #[serde(default)]
        seat: Option<Seat>,
        /// The invitation the table's owner made for this seat (its player
        /// left during the match): take it over with this code.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        invite: Option<String>,
    },
    /// Come back to a seat with its token (after a reload or a dropped
    /// connection), or, on a connection opened with a session, without
    /// one: to the seat the account holds at the table.
    Resume {
        /// The protocol the client speaks: [`PROTOCOL_VERSION`].
        #[serde(default)]
        protocol: Option<u32>,
        /// The table.
        table: Uuid,
        /// The seat token from [`ServerMessage::Joined`]; absent: the seat
        /// of the connection's account.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
    },
    /// Watch as a spectator: no hand, no actions.
    Watch {
        /// The protocol the client speaks: [`PROTOCOL_VERSION`].
        #[serde(default)]
        protocol: Option<u32>,
        /// The table.
        table: Uuid,
    },
    /// Ask for a snapshot: the reply is an `ack`, then a
    /// [`ServerMessage::View`] of the table as it is now (after a gap in
    /// `seq`, or whenever the client is unsure of its view).
    Sync,
    /// Owner only: start the match (every seat must be taken).
    Start {
        /// The owner token from table creation; absent: the connection's
        /// account, when it created the table signed in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner_token: Option<String>,
    },
    /// Owner only: put a bot in every empty seat.
    AddBots {
        /// The owner token from table creation; absent: the connection's
        /// account, when it created the table signed in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner_token: Option<String>,
    },
    /// Owner only, in the lobby: take the bot out of a seat (the seat
    /// becomes empty).
    RemoveBot {
        /// The owner token from table creation; absent: the connection's
        /// account, when it created the table signed in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner_token: Option<String>,
        /// The bot's seat.
        seat: Seat,
    },
    /// Owner only, in the lobby: swap the occupants of two seats (either
    /// may be empty). A moved player keeps their seat token.
    MoveSeat {
        /// The owner token from table creation; absent: the connection's
        /// account, when it created the table signed in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner_token: Option<String>,
        /// One seat.
        from: Seat,
        /// The other.
        to: Seat,
    },
    /// Owner only, during the match: invite a person to the seat of a
    /// player who left (a bot plays it). The reply
    /// [`ServerMessage::Invited`] carries the code the person joins with.
    Invite {
        /// The owner token from table creation; absent: the connection's
        /// account, when it created the table signed in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner_token: Option<String>,
        /// The seat whose player left.
        seat: Seat,
    },
    /// Bid (0 is nil).
    Bid {
        /// The bid.
        bid: u8,
        /// The `seq` of the latest frame the client had applied when the
        /// player chose: refused with `stale` when a bid or card was
        /// applied at the table in a later frame.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
    },
    /// Play a card.
    Play {
        /// The card, e.g. `"QH"`.
        card: Card,
        /// As for [`ClientMessage::Bid`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
    },
    /// Take the seat back from autopilot (or from the bot after the grace ran
    /// out).
    TakeOver,
    /// Leave the match for good: a bot plays the seat from now on and the
    /// token can only watch.
    Leave,
    /// The client is closing on purpose (page unload, app quit): the seat is
    /// held for the short grace instead of the long one.
    Closing,
    /// A seated player's own seed for the fair deals (32 random bytes as 64
    /// hex digits), sent after seeing the lobby's commitment; accepted until
    /// the match starts, the latest one counts.
    Seed {
        /// The seed.
        seed: ClientSeed,
    },
    /// A seated player's commitment to its seed for the fair deals, in the
    /// lobby, before the owner starts: `SHA-256("spades-seed/v1" ‖ table id
    /// ‖ seat index ‖ seed)`. The seed itself is sent (`seed`) once the
    /// start closes the commitments; the latest commitment counts.
    CommitSeed {
        /// The commitment, 64 hex digits.
        commitment: Commitment,
    },
    /// Keep-alive from clients that cannot send WebSocket pings (browsers).
    Ping,
    /// Say something at the table (a seat, or a spectator where the table
    /// lets spectators write). Everybody at the table receives
    /// [`ServerMessage::Chat`]. The message is kept for moderation and the
    /// writer's export (docs/moderation.md).
    Chat {
        /// 1 to [`MAX_CHAT_CHARS`] characters, without control or
        /// invisible characters.
        text: String,
    },
    /// After the match: the seat's player is ready for a rematch (or, with
    /// `ready: false`, no longer).
    Rematch {
        /// Ready (default) or not.
        #[serde(default = "default_true")]
        ready: bool,
    },
    /// Owner only, after the match: start another match with the same
    /// seats and options and new deals. Every present player must be ready.
    StartRematch {
        /// The owner token from table creation; absent: the connection's
        /// account, when it created the table signed in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner_token: Option<String>,
    },
}

fn default_true() -> bool {
    true
}

/// A refusal's stable machine code. The message beside it is for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorCode {
    /// Not JSON, not an object, an unknown `type`, or a missing or
    /// malformed field.
    BadMessage,
    /// A frame over [`MAX_FRAME_BYTES`].
    FrameTooLarge,
    /// Too many messages too fast.
    RateLimited,
    /// The connection must `join`, `resume` or `watch` first.
    NotAttached,
    /// The connection is already attached to a table.
    AlreadyAttached,
    /// No such table.
    TableNotFound,
    /// The table has no empty seat.
    TableFull,
    /// The seat asked for is taken.
    SeatTaken,
    /// The display name is empty, too long, or has control characters or
    /// invisible ones that could make it pass for another.
    InvalidName,
    /// The seat or owner token is wrong or missing.
    InvalidToken,
    /// Spectators cannot act.
    NotSeated,
    /// The seat was left; its token can only watch.
    SeatLeft,
    /// The match has not started yet.
    NotStarted,
    /// The match has already started.
    AlreadyStarted,
    /// The match cannot start while a seat is empty.
    SeatsEmpty,
    /// Take over: the seat is not on autopilot or played by a bot.
    NotOnAutopilot,
    /// The table options are not valid.
    InvalidOptions,
    /// The server refuses more tables or connections.
    Capacity,
    /// The server is shutting down.
    ShuttingDown,
    /// The table stopped.
    TableClosed,
    /// The event log cannot be written or read right now: nothing changed;
    /// try again shortly (the table resumes by itself when storage is back).
    StorageUnavailable,
    /// Something went wrong on the server.
    Internal,
    /// Engine: the match is over.
    MatchOver,
    /// Engine: another seat is on turn.
    NotYourTurn,
    /// Engine: a bid during the play.
    BiddingOver,
    /// Engine: a card before bidding is over.
    BiddingNotOver,
    /// Engine: a bid outside the table's range.
    BidOutOfRange,
    /// Engine: nil is switched off at this table.
    NilNotAllowed,
    /// Engine: the card is not in the player's hand.
    CardNotInHand,
    /// Engine: the player must follow the led suit.
    MustFollowSuit,
    /// Engine: spades are not broken yet.
    SpadesNotBroken,
    /// REST: no such path under `/api/v1` (404).
    NotFound,
    /// REST: the path exists but not with this method (405, with `Allow`).
    MethodNotAllowed,
    /// Chat: an empty message, one over [`MAX_CHAT_CHARS`] characters, or
    /// one with control or invisible characters.
    InvalidChat,
    /// Chat: too many messages too fast.
    ChatRateLimited,
    /// Chat: spectators only read this table's chat.
    ChatNotAllowed,
    /// Rematch: the match is not over yet.
    MatchNotOver,
    /// Rematch: a present player is not ready yet.
    PlayersNotReady,
    /// An attach without the protocol version this server speaks.
    UnsupportedProtocol,
    /// A bid or card chosen from a view the table has moved on from: a
    /// bid or card was applied after the frame the move names (`seq`).
    Stale,
    /// `remove_bot` for a seat no bot holds.
    SeatNotBot,
    /// A revealed seed that does not match its seat's commitment, or a
    /// seed sent while the seats reveal by a seat that committed none.
    SeedMismatch,
    /// REST: no session, or one that expired or was signed out (401).
    Unauthorized,
    /// REST: the display name is another player's, looks like one, or is
    /// kept for the player who gave it up (409).
    NameTaken,
    /// `join`: the account already holds a seat at this table (`resume`
    /// it).
    AlreadySeated,
    /// REST: a new password too short or too long, or the account's name
    /// (400).
    InvalidPassword,
    /// REST: the account's current password, asked to change it, is not
    /// that (403).
    WrongPassword,
    /// REST: removing this way of signing in would leave the account none
    /// (409).
    LastSignIn,
    /// REST: the OpenID provider cannot be reached now (503); the server
    /// tries again by itself.
    ProviderUnavailable,
    /// The signed-in account is suspended until a time (the message says
    /// until when and why): it may not create a table, sit, chat or watch
    /// signed in (403 over REST).
    Suspended,
    /// The signed-in account is banned (the message says why): as
    /// `suspended`, with no end (403 over REST).
    Banned,
    /// Chat: the signed-in account is muted (the message says until when
    /// and why).
    Muted,
    /// REST: the route is for operators only, and this account is not one
    /// (403).
    NotOperator,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 53] = [
        ErrorCode::BadMessage,
        ErrorCode::FrameTooLarge,
        ErrorCode::RateLimited,
        ErrorCode::NotAttached,
        ErrorCode::AlreadyAttached,
        ErrorCode::TableNotFound,
        ErrorCode::TableFull,
        ErrorCode::SeatTaken,
        ErrorCode::InvalidName,
        ErrorCode::InvalidToken,
        ErrorCode::NotSeated,
        ErrorCode::SeatLeft,
        ErrorCode::NotStarted,
        ErrorCode::AlreadyStarted,
        ErrorCode::SeatsEmpty,
        ErrorCode::NotOnAutopilot,
        ErrorCode::InvalidOptions,
        ErrorCode::Capacity,
        ErrorCode::ShuttingDown,
        ErrorCode::TableClosed,
        ErrorCode::StorageUnavailable,
        ErrorCode::Internal,
        ErrorCode::MatchOver,
        ErrorCode::NotYourTurn,
        ErrorCode::BiddingOver,
        ErrorCode::BiddingNotOver,
        ErrorCode::BidOutOfRange,
        ErrorCode::NilNotAllowed,
        ErrorCode::CardNotInHand,
        ErrorCode::MustFollowSuit,
        ErrorCode::SpadesNotBroken,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::InvalidChat,
        ErrorCode::ChatRateLimited,
        ErrorCode::ChatNotAllowed,
        ErrorCode::MatchNotOver,
        ErrorCode::PlayersNotReady,
        ErrorCode::UnsupportedProtocol,
        ErrorCode::Stale,
        ErrorCode::SeatNotBot,
        ErrorCode::SeedMismatch,
        ErrorCode::Unauthorized,
        ErrorCode::NameTaken,
        ErrorCode::AlreadySeated,
        ErrorCode::InvalidPassword,
        ErrorCode::WrongPassword,
        ErrorCode::LastSignIn,
        ErrorCode::ProviderUnavailable,
        ErrorCode::Suspended,
        ErrorCode::Banned,
        ErrorCode::Muted,
        ErrorCode::NotOperator,
    ];

    /// The code as it appears on the wire, e.g. `"must_follow_suit"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadMessage => "bad_message",
            ErrorCode::FrameTooLarge => "frame_too_large",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::NotAttached => "not_attached",
            ErrorCode::AlreadyAttached => "already_attached",
            ErrorCode::TableNotFound => "table_not_found",
            ErrorCode::TableFull => "table_full",
            ErrorCode::SeatTaken => "seat_taken",
            ErrorCode::InvalidName => "invalid_name",
            ErrorCode::InvalidToken => "invalid_token",
            ErrorCode::NotSeated => "not_seated",
            ErrorCode::SeatLeft => "seat_left",
            ErrorCode::NotStarted => "not_started",
            ErrorCode::AlreadyStarted => "already_started",
            ErrorCode::SeatsEmpty => "seats_empty",
            ErrorCode::NotOnAutopilot => "not_on_autopilot",
            ErrorCode::InvalidOptions => "invalid_options",
            ErrorCode::Capacity => "capacity",
            ErrorCode::ShuttingDown => "shutting_down",
            ErrorCode::TableClosed => "table_closed",
            ErrorCode::StorageUnavailable => "storage_unavailable",
            ErrorCode::Internal => "internal",
            ErrorCode::MatchOver => "match_over",
            ErrorCode::NotYourTurn => "not_your_turn",
            ErrorCode::BiddingOver => "bidding_over",
            ErrorCode::BiddingNotOver => "bidding_not_over",
            ErrorCode::BidOutOfRange => "bid_out_of_range",
            ErrorCode::NilNotAllowed => "nil_not_allowed",
            ErrorCode::CardNotInHand => "card_not_in_hand",
            ErrorCode::MustFollowSuit => "must_follow_suit",
            ErrorCode::SpadesNotBroken => "spades_not_broken",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::InvalidChat => "invalid_chat",
            ErrorCode::ChatRateLimited => "chat_rate_limited",
            ErrorCode::ChatNotAllowed => "chat_not_allowed",
            ErrorCode::MatchNotOver => "match_not_over",
            ErrorCode::PlayersNotReady => "players_not_ready",
            ErrorCode::UnsupportedProtocol => "unsupported_protocol",
            ErrorCode::Stale => "stale",
            ErrorCode::SeatNotBot => "seat_not_bot",
            ErrorCode::SeedMismatch => "seed_mismatch",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::NameTaken => "name_taken",
            ErrorCode::AlreadySeated => "already_seated",
            ErrorCode::InvalidPassword => "invalid_password",
            ErrorCode::WrongPassword => "wrong_password",
            ErrorCode::LastSignIn => "last_sign_in",
            ErrorCode::ProviderUnavailable => "provider_unavailable",
            ErrorCode::Suspended => "suspended",
            ErrorCode::Banned => "banned",
            ErrorCode::Muted => "muted",
            ErrorCode::NotOperator => "not_operator",
        }
    }

    /// The code for an engine refusal.
    pub fn from_engine(err: &spades_engine::ActionError) -> ErrorCode {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == err.code()).unwrap_or(ErrorCode::Internal)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the server sends.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ServerMessage {
    /// The first frame on every connection.
    Hello {
        /// [`PROTOCOL_VERSION`].
        protocol: u32,
        /// The server's name and version.
        server: String,
        /// The server's time (Unix time, milliseconds).
        server_time: u64,
    },
    /// A seat was taken. Keep the token: it is the only way back to the seat.
    Joined {
        /// The request id of the `join`.
        req: Option<u32>,
        /// The table.
        table: Uuid,
        /// The seat taken.
        seat: Seat,
        /// The secret seat token.
        token: String,
    },
    /// A seat was resumed with its token.
    Resumed {
        /// The request id of the `resume`.
        req: Option<u32>,
        /// The table.
        table: Uuid,
        /// The seat.
        seat: Seat,
    },
    /// The owner's invitation to a seat whose player left: give the code
    /// to the person who is to play it (`join` with `invite`).
    Invited {
        /// The request id of the `invite`.
        req: Option<u32>,
        /// The seat.
        seat: Seat,
        /// The secret code, good for one person until the match ends.
        code: String,
    },
    /// Watching as a spectator.
    Watching {
        /// The request id of the `watch`.
        req: Option<u32>,
        /// The table.
        table: Uuid,
    },
    /// A request was accepted. For a bid or a card, the change frame that
    /// shows it follows (after a `sync`, the snapshot).
    Ack {
        /// The request id.
        req: Option<u32>,
    },
    /// A request was refused; nothing changed.
    Error {
        /// The request id, when the frame could be read.
        req: Option<u32>,
        /// Stable machine code.
        code: ErrorCode,
        /// A plain-English reason to show the player.
        message: String,
    },
    /// A snapshot: the table as this connection sees it, complete. Sent
    /// when the connection attaches, after `sync`, and whenever the server
    /// prefers it to a change. `seq` grows by one with every change of the
    /// table.
    View {
        /// The table's change counter.
        seq: u64,
        /// The view.
        view: Box<TableView>,
    },
    /// What changed since the frame of `seq - 1`; apply it with
    /// [`TableView::apply`]. A gap in `seq` means a frame was missed: send
    /// `sync`.
    Change {
        /// The table's change counter.
        seq: u64,
        /// What changed.
        #[serde(flatten)]
        change: Box<Change>,
    },
    /// Reply to [`ClientMessage::Ping`].
    Pong {
        /// The request id.
        req: Option<u32>,
    },
    /// Somebody said something at the table. Show `text` as text, never
    /// as markup.
    Chat {
        /// The message's number at the table: it grows with every message,
        /// across restarts too, so a client keeps each message once.
        #[serde(default)]
        id: u64,
        /// The seat that wrote, `None` for a spectator.
        from: Option<Seat>,
        /// The writer's name ("Spectator" for a spectator).
        name: String,
        /// The message.
        text: String,
        /// When the table received it (Unix time, milliseconds).
        at: u64,
        /// The writer's account, when signed in: a client hides the
        /// messages of the accounts its player blocks (`/api/v1/me/blocks`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        account: Option<Uuid>,
    },
    /// An operator removed the chat message `id`: stop showing it (a
    /// client may say in its place that a moderator removed it). A
    /// connection that attaches later never receives it.
    ChatRemoved {
        /// The `id` of the [`ServerMessage::Chat`] removed.
        id: u64,
    },
}

impl ServerMessage {
    /// The request id this message answers: `None` for views, `hello`, and
    /// replies to frames that carried no id.
    #[must_use]
    pub fn req(&self) -> Option<u32> {
        match self {
            ServerMessage::Joined { req, .. }
            | ServerMessage::Resumed { req, .. }
            | ServerMessage::Watching { req, .. }
            | ServerMessage::Invited { req, .. }
            | ServerMessage::Ack { req }
            | ServerMessage::Pong { req }
            | ServerMessage::Error { req, .. } => *req,
            ServerMessage::Hello { .. }
            | ServerMessage::View { .. }
            | ServerMessage::Change { .. }
            | ServerMessage::Chat { .. }
            | ServerMessage::ChatRemoved { .. } => None,
        }
    }
}

/// `POST /api/v1/tables`: create a table.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTable {
    /// A name shown in the lobby (default "Table"), 1 to 40 characters
    /// after trimming, without control or invisible characters.
    #[serde(default)]
    pub name: Option<String>,
    /// The table's options (defaults per SPEC §3).
    #[serde(default)]
    pub options: TableOptions,
}

/// The reply to [`CreateTable`].
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct CreatedTable {
    /// The new table's id.
    pub table: Uuid,
    /// The owner's secret token: needed to start the match and add bots.
    pub owner_token: String,
}

/// A table in the lobby list (`GET /api/v1/tables`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TableSummary {
    /// The table's id.
    pub table: Uuid,
    /// Its name.
    pub name: String,
    /// Where it stands.
    pub phase: TablePhase,
    /// Its options.
    pub options: TableOptions,
    /// The four seats.
    pub seats: [SeatInfo; 4],
    /// How many seats are empty.
    pub open_seats: u8,
    /// Connected spectators.
    pub spectators: u32,
    /// The current hand (0 before the match starts).
    pub hand_number: u16,
    /// Team scores, North–South first.
    pub scores: [i32; 2],
    /// When the table was created (Unix time, milliseconds).
    pub created_at: u64,
}

/// One table's public status (`GET /api/v1/tables/{id}`): never a card of
/// anybody's hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TableStatus {
    /// The lobby summary.
    #[serde(flatten)]
    pub summary: TableSummary,
    /// The seat on turn.
    pub turn: Option<Seat>,
    /// The current dealer.
    pub dealer: Option<Seat>,
    /// This hand's bids so far.
    pub bids: [Option<u8>; 4],
    /// Tricks taken this hand.
    pub tricks_won: [u8; 4],
    /// Team bag counts.
    pub bags: [u8; 2],
    /// The turn clock.
    pub clock: Option<Clock>,
    /// Every finished hand.
    pub hands: Vec<HandResult>,
    /// How the match ended.
    pub result: Option<MatchResult>,
    /// The match's seed, revealed once the match is over, so anyone can
    /// replay the deals and check them (of a fair match: the bots' seed,
    /// which deals nothing; the deals come from `fair`). A 64-bit number
    /// written as a decimal string (it does not fit a JSON number a
    /// JavaScript client reads exactly); a number is read too.
    #[serde(default, with = "decimal")]
    #[schema(value_type = Option<String>, pattern = "^[0-9]{1,20}$")]
    pub seed: Option<u64>,
    /// The fair-deal commitment and seeds; `None` before a match dealt the
    /// old way.
    #[serde(default)]
    pub fair: Option<Fairness>,
    /// Cluster mode: the node that runs the table and its lease's epoch
    /// (absent on a single server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<TableOwner>,
}

/// Which node of a cluster runs a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct TableOwner {
    /// The node's id (`cluster.node_id`).
    pub node: String,
    /// The epoch of its lease: it grows each time the table changes hands.
    pub epoch: u64,
}

/// A seat in a match record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct RecordSeat {
    /// Which seat.
    pub seat: Seat,
    /// Display name.
    pub name: String,
    /// Person or bot.
    pub kind: SeatKind,
    /// The account that sat there, when the player was signed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Uuid>,
    /// The player left the match on purpose.
    pub left: bool,
    /// Who played the seat, in order, once it changed hands during the
    /// match (its player left and a bot took it; a person the owner invited
    /// took it from the bot): each with the first hand they played. Empty
    /// when one player (or one bot) had the seat all along.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub players: Vec<SeatPlayer>,
}

/// Who played a seat from a hand on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SeatPlayer {
    /// The display name ("Bot" for the table's bot).
    pub name: String,
    /// Person or bot.
    pub kind: SeatKind,
    /// The first hand they played (1-based: the hand in progress when they
    /// took the seat).
    pub from_hand: u16,
}

/// One card played, in a match record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PlayRecord {
    /// Who played.
    pub seat: Seat,
    /// The card.
    pub card: Card,
    /// Who chose it.
    pub source: ActionSource,
    /// When (Unix time, milliseconds).
    pub at: u64,
}

/// One finished hand in a match record: its scoring and every card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct HandRecord {
    /// Bids, tricks, nils and each team's scoring.
    #[serde(flatten)]
    pub result: HandResult,
    /// Who chose each seat's bid.
    pub bid_sources: [ActionSource; 4],
    /// The 52 cards in play order (tricks of four from each leader).
    pub plays: Vec<PlayRecord>,
}

/// The hand being played, in a running match's record: public parts only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct HandInProgress {
    /// Its number.
    pub hand_number: u16,
    /// Bids made so far.
    pub bids: [Option<u8>; 4],
    /// Tricks taken so far.
    pub tricks_won: [u8; 4],
}

/// A match's record (`GET /api/v1/matches/{id}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct MatchRecord {
    /// The table's id.
    pub table: Uuid,
    /// Its name.
    pub name: String,
    /// Its options.
    pub options: TableOptions,
    /// Who sat where.
    pub seats: Vec<RecordSeat>,
    /// When the table was created (Unix time, milliseconds).
    pub created_at: u64,
    /// True once the match is over.
    pub finished: bool,
    /// Every finished hand, with its cards.
    pub hands: Vec<HandRecord>,
    /// The hand being played (running matches).
    pub current_hand: Option<HandInProgress>,
    /// How it ended.
    pub result: Option<MatchResult>,
    /// Team scores so far.
    pub scores: [i32; 2],
    /// Accepted actions so far.
    pub actions: usize,
    /// The seed, once the match is over (replay the deals to check them; of
    /// a fair match: the bots' seed, which deals nothing), as a decimal
    /// string (see [`TableStatus::seed`]).
    #[serde(default, with = "decimal")]
    #[schema(value_type = Option<String>, pattern = "^[0-9]{1,20}$")]
    pub seed: Option<u64>,
    /// A fair match's commitment and seeds, with the server seed once the
    /// match is over: `spades-verify` and the web client's "Verify the
    /// deals" recompute every deal from them.
    #[serde(default)]
    pub fair: Option<Fairness>,
    /// The match ended unfinished: nobody was at the table any more.
    #[serde(default)]
    pub abandoned: bool,
}

/// A match in the recent list (`GET /api/v1/matches`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct MatchSummary {
    /// The table's id.
    pub table: Uuid,
    /// Its name.
    pub name: String,
    /// When the table was created (Unix time, milliseconds).
    pub created_at: u64,
    /// Who sat where.
    pub seats: Vec<RecordSeat>,
    /// True once the match is over.
    pub finished: bool,
    /// Finished hands.
    pub hands_played: usize,
    /// Team scores.
    pub scores: [i32; 2],
    /// How it ended.
    pub result: Option<MatchResult>,
    /// The match ended unfinished: nobody was at the table any more.
    #[serde(default)]
    pub abandoned: bool,
}

/// A 64-bit number as a decimal string; read from a string or a number.
mod decimal {
    use serde::{Deserialize, Deserializer, Serializer};

    #[allow(clippy::ref_option)]
    pub(super) fn serialize<S: Serializer>(value: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(n) => s.serialize_str(&n.to_string()),
            None => s.serialize_none(),
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        Number(u64),
        Text(String),
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        match Option::<Either>::deserialize(d)? {
            None => Ok(None),
            Some(Either::Number(n)) => Ok(Some(n)),
            Some(Either::Text(t)) => t.parse().map(Some).map_err(serde::de::Error::custom),
        }
    }
}

/// The JSON body of every REST error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ApiError {
    /// Stable machine code.
    pub code: ErrorCode,
    /// A plain-English reason.
    pub message: String,
}

/// The JSON fields that hold secrets: never shown by `Debug`.
const SECRET_FIELDS: [&str; 3] = ["token", "owner_token", "invite"];

/// Writes `value` as its JSON form with every secret field replaced by
/// `"***"`: messages that carry tokens are printed this way, so a token
/// never reaches a log or a panic message.
fn debug_redacted<T: Serialize>(name: &str, value: &T, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    let mut json = serde_json::to_value(value).map_err(|_| std::fmt::Error)?;
    if let serde_json::Value::Object(map) = &mut json {
        // An invitation's code is a secret; an error's code is not.
        let invited = map.get("type").and_then(serde_json::Value::as_str) == Some("invited");
        for key in SECRET_FIELDS.iter().copied().chain(invited.then_some("code")) {
            if let Some(v) = map.get_mut(key) {
                *v = serde_json::Value::String("***".into());
            }
        }
    }
    write!(f, "{name}({json})")
}

impl std::fmt::Debug for ClientMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        debug_redacted("ClientMessage", self, f)
    }
}

impl std::fmt::Debug for ServerMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        debug_redacted("ServerMessage", self, f)
    }
}

impl std::fmt::Debug for CreatedTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        debug_redacted("CreatedTable", self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_messages_round_trip_with_fixed_strings() {
        let cases = [
            (
                r#"{"req":1,"type":"join","protocol":2,"table":"67e55044-10b1-426f-9247-bb680e5fe0c8","name":"Ann","seat":"north"}"#,
                ClientMessage::Join {
                    protocol: Some(PROTOCOL_VERSION),
                    table: "67e55044-10b1-426f-9247-bb680e5fe0c8".parse().unwrap(),
                    name: Some("Ann".into()),
                    seat: Some(Seat::North),
                    invite: None,
                },
            ),
            (
                r#"{"req":2,"type":"play","card":"QH"}"#,
                ClientMessage::Play { card: "QH".parse().unwrap(), seq: None },
            ),
            (
                r#"{"req":5,"type":"bid","bid":0,"seq":4294967301}"#,
                ClientMessage::Bid { bid: 0, seq: Some(4_294_967_301) },
            ),
            (
                r#"{"type":"move_seat","owner_token":"x","from":"north","to":"east"}"#,
                ClientMessage::MoveSeat { owner_token: Some("x".into()), from: Seat::North, to: Seat::East },
            ),
            (r#"{"req":3,"type":"take_over"}"#, ClientMessage::TakeOver),
            (
                r#"{"req":4,"type":"add_bots","owner_token":"x"}"#,
                ClientMessage::AddBots { owner_token: Some("x".into()) },
            ),
        ];
        for (json, msg) in cases {
            let frame: ClientFrame = serde_json::from_str(json).unwrap();
            assert_eq!(frame.msg, msg);
            let back: ClientFrame = serde_json::from_str(&serde_json::to_string(&frame).unwrap()).unwrap();
            assert_eq!(back, frame);
        }
        let no_req: ClientFrame = serde_json::from_str(r#"{"type":"leave"}"#).unwrap();
        assert_eq!(no_req, ClientFrame { req: None, msg: ClientMessage::Leave });
    }

    #[test]
    fn chat_and_rematch_have_stable_forms() {
        let chat = ServerMessage::Chat {
            id: 4_294_967_297,
            from: Some(Seat::North),
            name: "Ann".into(),
            text: "<b>gg</b>".into(),
            at: 5,
            account: None,
        };
        assert_eq!(
            serde_json::to_string(&chat).unwrap(),
            r#"{"type":"chat","id":4294967297,"from":"north","name":"Ann","text":"<b>gg</b>","at":5}"#
        );
        let removed = ServerMessage::ChatRemoved { id: 4_294_967_297 };
        assert_eq!(serde_json::to_string(&removed).unwrap(), r#"{"type":"chat_removed","id":4294967297}"#);
        let r = Rematch { ready: [true, false, true, true], next_table: None };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"ready":[true,false,true,true],"next_table":null}"#
        );
        let ready: ClientFrame = serde_json::from_str(r#"{"type":"rematch"}"#).unwrap();
        assert_eq!(ready.msg, ClientMessage::Rematch { ready: true });
        // Stored options without the chat switch still read (spectators only read).
        let old: TableOptions = serde_json::from_str(r#"{"rules":{},"tempo":"fast"}"#).unwrap();
        assert!(!old.spectator_chat);
        // ... and let people take bots' seats in the lobby, as new tables do.
        assert!(old.bot_seats_open && TableOptions::default().bot_seats_open);
        let secret = "0123456789abcdef";
        let p = format!("{:?}", ClientMessage::StartRematch { owner_token: Some(secret.into()) });
        assert!(!p.contains(secret), "{p}");
    }

    #[test]
    fn bad_client_frames_are_refused() {
        for bad in [
            "",
            "null",
            "[]",
            r#"{"type":"fly"}"#,
            r#"{"type":"play","card":"ZZ"}"#,
            r#"{"type":"bid","bid":300}"#,
            r#"{"type":"bid"}"#,
            r#"{"bid":3}"#,
        ] {
            assert!(serde_json::from_str::<ClientFrame>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn server_messages_have_stable_forms() {
        let err = ServerMessage::Error {
            req: Some(9),
            code: ErrorCode::MustFollowSuit,
            message: "you must follow the led suit (hearts)".into(),
        };
        assert_eq!(
            serde_json::to_string(&err).unwrap(),
            r#"{"type":"error","req":9,"code":"must_follow_suit","message":"you must follow the led suit (hearts)"}"#
        );
        assert_eq!(
            serde_json::to_string(&ServerMessage::Ack { req: None }).unwrap(),
            r#"{"type":"ack","req":null}"#
        );
    }

    #[test]
    fn error_codes_match_their_wire_names_and_the_engine() {
        for code in ErrorCode::ALL {
            assert_eq!(serde_json::to_string(&code).unwrap(), format!("\"{}\"", code.as_str()));
        }
        for code in spades_engine::ActionError::CODES {
            assert!(ErrorCode::ALL.iter().any(|c| c.as_str() == code), "{code} missing");
        }
        let e = spades_engine::ActionError::SpadesNotBroken { card: "AS".parse().unwrap() };
        assert_eq!(ErrorCode::from_engine(&e), ErrorCode::SpadesNotBroken);
    }

    #[test]
    fn create_table_refuses_unknown_options() {
        let ok: CreateTable =
            serde_json::from_str(r#"{"name":"Fri","options":{"rules":{"nil":"off"},"tempo":"fast"}}"#)
                .unwrap();
        assert_eq!(ok.options.tempo, Tempo::Fast);
        assert!(serde_json::from_str::<CreateTable>(r#"{"options":{"speed":"fast"}}"#).is_err());
        assert!(serde_json::from_str::<CreateTable>(r#"{"colour":"red"}"#).is_err());
        assert_eq!(serde_json::from_str::<CreateTable>("{}").unwrap(), CreateTable::default());
    }

    #[test]
    fn tempos_follow_the_spec() {
        assert_eq!((Tempo::Relaxed.card_ms(), Tempo::Relaxed.bid_ms()), (60_000, 75_000));
        assert_eq!((Tempo::Normal.card_ms(), Tempo::Normal.bid_ms()), (30_000, 40_000));
        assert_eq!((Tempo::Fast.card_ms(), Tempo::Fast.bid_ms()), (15_000, 25_000));
    }

    #[test]
    fn tokens_never_show_in_debug() {
        let secret = "0123456789abcdef0123456789abcdef";
        let printed = [
            format!(
                "{:?}",
                ClientMessage::Resume {
                    protocol: Some(PROTOCOL_VERSION),
                    table: Uuid::nil(),
                    token: Some(secret.into())
                }
            ),
            format!("{:?}", ClientMessage::Start { owner_token: Some(secret.into()) }),
            format!(
                "{:?}",
                ClientFrame {
                    req: Some(1),
                    msg: ClientMessage::AddBots { owner_token: Some(secret.into()) }
                }
            ),
            format!(
                "{:?}",
                ServerMessage::Joined {
                    req: None,
                    table: Uuid::nil(),
                    seat: Seat::North,
                    token: secret.into()
                }
            ),
            format!("{:?}", CreatedTable { table: Uuid::nil(), owner_token: secret.into() }),
            format!("{:?}", ServerMessage::Invited { req: None, seat: Seat::West, code: secret.into() }),
            format!(
                "{:?}",
                ClientMessage::Join {
                    protocol: Some(PROTOCOL_VERSION),
                    table: Uuid::nil(),
                    name: Some("Dee".into()),
                    seat: None,
                    invite: Some(secret.into()),
                }
            ),
        ];
        for p in printed {
            assert!(!p.contains(secret), "{p}");
            assert!(p.contains("***"), "{p}");
        }
        // Everything else still shows.
        let p = format!("{:?}", ClientMessage::Bid { bid: 4, seq: None });
        assert!(p.contains("\"bid\"") && p.contains('4'), "{p}");
    }
}
