//! One table: a tokio task that owns the match and everything about its
//! seats, clocks and connections. The rest of the server holds a cheap
//! [`TableHandle`] and talks to the task through its channel; no lock is ever
//! held around game state.
//!
//! The path of one move, socket to broadcast:
//! 1. `ws.rs` reads the frame and sends [`TableCommand::Act`] to the table;
//! 2. [`Table::handle`] (here) dispatches it to `seats.rs` (who may act);
//! 3. `moves.rs` checks it with the engine, writes it to the event log
//!    (write-ahead), applies it, and re-arms the turn (`clock.rs`: the turn
//!    clock, or the bot timer of `bots.rs`);
//! 4. `fanout.rs` renders each seat's redacted view once and pushes it into
//!    every connection's bounded outbox, and publishes the lobby summary and
//!    the REST status snapshot.
//!
//! A connection whose outbox is full is dropped (it can resume), so a slow
//! client never stalls the table. Decisions the table makes for a seat (a bot,
//! the autopilot, a timeout) never go through the command queue, so a full
//! queue can never lose one. A failed write is retried with backoff; the
//! table resumes by itself when storage comes back.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use spades_engine::{Action, BySeat, Card, ClientSeed, Commitment, Match, Seat};
use spades_protocol::{ErrorCode, TableOptions, TableStatus};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};
use uuid::Uuid;

use crate::record::Restored;
use crate::storage::{Journal, TableRecord};
use crate::time::now_ms;
use crate::token::TokenHash;
use spades_bots::Strength;

mod arrange;
mod bots;
mod chat;
mod clock;
mod delta;
mod fair;
mod fanout;
mod handle;
mod moves;
mod outbox;
mod rematch;
mod seats;
mod stale;

use bots::PendingDecision;
use clock::TurnClock;
use fanout::Conn;
pub(crate) use fanout::empty_status;
pub use handle::{TableClosed, TableHandle};
use moves::Retry;
pub use outbox::{Frame, Order, Outbox};
pub use rematch::RematchPlan;
use seats::Occupant;

/// Identifies one WebSocket connection.
pub type ConnId = u64;

/// How a connection attaches to a table; as it is, its form on the
/// cluster's wire (a relay attaches its connections to the table's owner).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Attach {
    /// Take a seat.
    Join {
        /// Display name (already validated).
        name: String,
        /// The seat wanted.
        seat: Option<Seat>,
        /// The owner's invitation to a seat whose player left.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        invite: Option<String>,
        /// The signed-in player's account: it holds no other seat here and
        /// may come back by [`Attach::Reclaim`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        account: Option<Uuid>,
    },
    /// Come back to a seat.
    Resume {
        /// The seat token.
        token: String,
        /// The connection's account, when it is signed in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        account: Option<Uuid>,
    },
    /// Come back to the seat the signed-in player's account holds.
    Reclaim {
        /// The account.
        account: Uuid,
    },
    /// Watch.
    Watch {
        /// The connection's account, when it is signed in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        account: Option<Uuid>,
    },
}

impl Attach {
    /// The signed-in account of the connection attaching, if any: the
    /// table's owner acts without the owner token when it is the owner's.
    pub fn account(&self) -> Option<Uuid> {
        match self {
            Attach::Join { account, .. } | Attach::Resume { account, .. } | Attach::Watch { account } => {
                *account
            }
            Attach::Reclaim { account } => Some(*account),
        }
    }
}

impl std::fmt::Debug for Attach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The invitation is a secret: only whether there is one.
            Attach::Join { name, seat, invite, account } => f
                .debug_struct("Join")
                .field("name", name)
                .field("seat", seat)
                .field("invited", &invite.is_some())
                .field("account", account)
                .finish(),
            Attach::Reclaim { account } => f.debug_struct("Reclaim").field("account", account).finish(),
            // The token is a secret: never printed.
            Attach::Resume { account, .. } => {
                f.debug_struct("Resume").field("account", account).finish_non_exhaustive()
            }
            Attach::Watch { account } => f.debug_struct("Watch").field("account", account).finish(),
        }
    }
}

/// What a connection is at its table (on the cluster's wire too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "seat", rename_all = "snake_case")]
pub enum Role {
    /// Plays this seat.
    Seat(Seat),
    /// Watches.
    Spectator,
    /// Left this seat on purpose: watches, cannot act.
    Left(Seat),
}

impl Role {
    fn seat(self) -> Option<Seat> {
        match self {
            Role::Seat(s) | Role::Left(s) => Some(s),
            Role::Spectator => None,
        }
    }
}

/// A connection the table took: its role, and how to attach it again (to
/// the table's next owner, in cluster mode) without asking its client.
#[derive(Debug, Clone)]
pub struct Attached {
    /// What the connection is at the table.
    pub role: Role,
    /// `Resume` with the seat's token, or `Watch`.
    pub again: Attach,
    /// The account that holds the seat (a signed-in player's), whoever
    /// attached to it: a connection resuming it with the seat's token, and
    /// no session of that account, is held to the account's sanctions too.
    pub account: Option<Uuid>,
}

/// What a connection attached to a table asks of it: the table's part of a
/// client message (`ws.rs` makes it from the [`ClientMessage`]), and, as it
/// is, its form on the cluster's wire (a relay sends it to the table's
/// owner). [`Table::act`] says where each goes.
///
/// [`ClientMessage`]: spades_protocol::ClientMessage
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Act {
    /// Bid, chosen from the frame of this `seq` (if the client said).
    Bid {
        /// The bid.
        bid: u8,
        /// The frame it was chosen from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
    },
    /// Play a card, chosen from the frame of this `seq` (if the client said).
    Play {
        /// The card.
        card: Card,
        /// The frame it was chosen from.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u64>,
    },
    /// Take the seat back from autopilot or the bot.
    TakeOver,
    /// Leave for good.
    Leave,
    /// The client is closing on purpose.
    Closing,
    /// Send this connection a snapshot.
    Sync,
    /// Owner: start.
    Start {
        /// The owner token; `None`: the connection's account must be the
        /// owner's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner_token: Option<String>,
    },
    /// Owner: fill empty seats with bots.
    AddBots {
        /// The owner token; `None`: the connection's account must be the
        /// owner's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner_token: Option<String>,
    },
    /// Owner, in the lobby: empty a bot's seat.
    RemoveBot {
        /// The owner token; `None`: the connection's account must be the
        /// owner's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner_token: Option<String>,
        /// The bot's seat.
        seat: Seat,
    },
    /// Owner, in the lobby: swap two seats' occupants.
    MoveSeat {
        /// The owner token; `None`: the connection's account must be the
        /// owner's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner_token: Option<String>,
        /// One seat.
        from: Seat,
        /// The other.
        to: Seat,
    },
    /// Owner, in a match: invite a person to the seat of a player who left.
    Invite {
        /// The owner token; `None`: the connection's account must be the
        /// owner's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        owner_token: Option<String>,
        /// The seat.
        seat: Seat,
    },
    /// A player's seed for the fair deals (in the clear before the start,
    /// or revealed against its commitment after it).
    Seed {
        /// The seed.
        seed: ClientSeed,
    },
    /// A player's commitment to its seed, before the start.
    CommitSeed {
        /// The commitment.
        commitment: Commitment,
    },
    /// Say something (already checked and rate-limited by the connection).
    Chat {
        /// The text.
        text: String,
    },
    /// After the match: ready for a rematch, or no longer.
    Rematch {
        /// Ready or not.
        ready: bool,
    },
}

/// Owner tokens and seeds are secrets, and chat is the players' own: never
/// printed.
impl std::fmt::Debug for Act {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Act::Bid { bid, seq } => f.debug_struct("Bid").field("bid", bid).field("seq", seq).finish(),
            Act::Play { card, seq } => f.debug_struct("Play").field("card", card).field("seq", seq).finish(),
            Act::TakeOver => f.write_str("TakeOver"),
            Act::Leave => f.write_str("Leave"),
            Act::Closing => f.write_str("Closing"),
            Act::Sync => f.write_str("Sync"),
            Act::Chat { text } => f.debug_struct("Chat").field("chars", &text.chars().count()).finish(),
            Act::Rematch { ready } => f.debug_struct("Rematch").field("ready", ready).finish(),
            Act::Start { .. } => f.debug_struct("Start").finish_non_exhaustive(),
            Act::AddBots { .. } => f.debug_struct("AddBots").finish_non_exhaustive(),
            Act::RemoveBot { seat, .. } => {
                f.debug_struct("RemoveBot").field("seat", seat).finish_non_exhaustive()
            }
            Act::MoveSeat { from, to, .. } => {
                f.debug_struct("MoveSeat").field("from", from).field("to", to).finish_non_exhaustive()
            }
            Act::Invite { seat, .. } => f.debug_struct("Invite").field("seat", seat).finish_non_exhaustive(),
            Act::Seed { .. } => f.debug_struct("Seed").finish_non_exhaustive(),
            Act::CommitSeed { commitment } => {
                f.debug_struct("CommitSeed").field("commitment", commitment).finish()
            }
        }
    }
}

/// An owner token a command carries. `Debug` hides it.
pub struct OwnerToken(pub String);

impl std::fmt::Debug for OwnerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OwnerToken(<secret>)")
    }
}

/// A message to a table's task.
#[derive(Debug)]
pub enum TableCommand {
    /// Attach a connection. The task sends the reply frames (`joined`, …, or
    /// an error) and the first view through `outbox`; `reply` tells the
    /// connection whether it is now attached.
    Attach {
        /// The connection.
        conn: ConnId,
        /// Its outbox.
        outbox: Outbox,
        /// How.
        how: Attach,
        /// The request id to echo.
        req: Option<u32>,
        /// Send no `joined`/`resumed`/`watching` frame, only the view: the
        /// connection is being moved to this table's new owner.
        quiet: bool,
        /// The role on success.
        reply: oneshot::Sender<Option<Attached>>,
    },
    /// A connection went away.
    Detach {
        /// The connection.
        conn: ConnId,
    },
    /// An action from an attached connection; the reply goes to its outbox.
    Act {
        /// The connection.
        conn: ConnId,
        /// The request id to echo.
        req: Option<u32>,
        /// The action.
        act: Act,
        /// Sent again by a relay after the table changed hands: a move the
        /// old owner stored but never answered is acknowledged, not refused.
        resent: bool,
    },
    /// The owner asks for a rematch: the table replies with the new
    /// table's plan, or refuses the connection and replies `None`.
    PlanRematch {
        /// The connection.
        conn: ConnId,
        /// The request id to echo.
        req: Option<u32>,
        /// The owner token; `None`: the connection's account must be the
        /// owner's.
        owner_token: Option<OwnerToken>,
        /// The plan, when accepted.
        reply: oneshot::Sender<Option<RematchPlan>>,
    },
    /// An operator's order (`Directory::order`, wherever the table runs).
    Order(OperatorOrder),
    /// The rematch's table was created, or why not.
    RematchStarted {
        /// The connection that asked.
        conn: ConnId,
        /// Its request id.
        req: Option<u32>,
        /// The new table, or the refusal.
        next: Result<Uuid, (ErrorCode, String)>,
    },
}

/// What an operator orders a table to do (sent to the node that runs it,
/// over the cluster's wire too).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "order", rename_all = "snake_case")]
pub enum OperatorOrder {
    /// A chat message was removed (in the store already): drop it and tell
    /// everybody.
    RemoveChat {
        /// The message's id at the table.
        id: u64,
    },
    /// Close the table: tell everybody why, and end it; it is not restored.
    Close {
        /// Why, as the operator said it.
        reason: String,
    },
}

/// Settings shared by every table.
#[derive(Debug, Clone)]
pub struct TableSettings {
    /// Delay before a bot or the autopilot acts.
    pub bot_delay: Duration,
    /// Seat held after a dropped connection.
    pub grace: Duration,
    /// Seat held after a client said it was closing.
    pub closing_grace: Duration,
    /// Timeouts in a row that start the autopilot.
    pub autopilot_after: u8,
    /// How long an unused table is kept.
    pub idle: Duration,
    /// Test override of every turn clock.
    pub test_tempo: Option<Duration>,
    /// The bot that plays for absent players and bot seats.
    pub strength: Strength,
    /// Most connections attached to one seat at once.
    pub seat_connections: u16,
    /// Bot searches that may run at once on the whole server; when none is
    /// free the rule bot answers instead.
    pub search_slots: Arc<tokio::sync::Semaphore>,
    /// How long the seats have to reveal their seeds after the start.
    pub reveal: Duration,
}

/// The default number of concurrent bot searches: the number of cores.
pub fn default_search_slots() -> usize {
    std::thread::available_parallelism().map_or(2, std::num::NonZero::get)
}

impl Default for TableSettings {
    fn default() -> TableSettings {
        TableSettings {
            bot_delay: Duration::from_millis(700),
            grace: Duration::from_secs(60),
            closing_grace: Duration::from_secs(10),
            autopilot_after: 3,
            idle: Duration::from_secs(30 * 60),
            test_tempo: None,
            strength: Strength::default(),
            seat_connections: 4,
            search_slots: Arc::new(tokio::sync::Semaphore::new(default_search_slots())),
            reveal: Duration::from_secs(5),
        }
    }
}

/// Who owns a table: the holder of the owner token, and the account that
/// created the table signed in (if it did). `Debug` shows no hash.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Ownership {
    /// The owner token's hash.
    pub token: TokenHash,
    /// The account that created the table.
    pub account: Option<Uuid>,
}

impl std::fmt::Debug for Ownership {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ownership").field("account", &self.account).finish_non_exhaustive()
    }
}

impl Ownership {
    /// True for the owner: the owner token when one is given, else a
    /// connection signed in as the owning account.
    pub fn admits(&self, token: Option<&str>, account: Option<Uuid>) -> bool {
        match token {
            Some(token) => self.token.matches(token),
            None => self.account.is_some() && self.account == account,
        }
    }
}

/// Everything needed to start a table's task.
pub struct TableInit {
    /// Id.
    pub id: Uuid,
    /// Name.
    pub name: String,
    /// Options.
    pub options: TableOptions,
    /// The owner.
    pub owner: Ownership,
    /// Creation time (Unix ms).
    pub created_at: u64,
    /// Shared settings.
    pub settings: Arc<TableSettings>,
    /// The event log.
    pub journal: Journal,
    /// Cancelled when the table must stop: on server shutdown, and in
    /// cluster mode also when this node lost or gave up the table's lease.
    pub shutdown: CancellationToken,
    /// Called once when the task ends.
    pub on_exit: Box<dyn FnOnce(Uuid) + Send>,
}

impl std::fmt::Debug for TableInit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableInit").field("id", &self.id).field("name", &self.name).finish_non_exhaustive()
    }
}

/// Starts a new table's task (or a restored one) and returns its handle.
pub fn spawn(
    init: TableInit,
    restored: Option<Restored>,
    tracker: &tokio_util::task::TaskTracker,
) -> TableHandle {
    let (tx, rx) = mpsc::channel(256);
    let (status_tx, status_rx) = watch::channel(empty_status(init.id));
    let stop = init.shutdown.clone();
    let mut table = Table {
        id: init.id,
        name: init.name,
        options: init.options,
        created_at: init.created_at,
        owner: init.owner,
        seats: BySeat([None, None, None, None]),
        game: None,
        fair: fair::Lobby::draw(),
        seq: 0,
        conns: Vec::new(),
        dropped: Vec::new(),
        clock: None,
        last_action: None,
        latest: None,
        sent: None,
        anchor: std::cell::Cell::new((Instant::now(), now_ms())),
        bot_due: None,
        bot_pending: None,
        retry: None,
        chat_log: chat::ChatLog::new(0),
        turns: stale::Turns::default(),
        invites: BySeat([None; 4]),
        commitments: BySeat([None; 4]),
        rematch: rematch::RematchState::default(),
        hands_stored: 0,
        idle_since: Some(Instant::now()),
        deserted_since: None,
        settings: init.settings,
        journal: init.journal,
        closed_by_operator: false,
        rx,
        status: status_tx,
        shutdown: init.shutdown,
    };
    if let Some(r) = restored {
        let now = Instant::now();
        table.seq = r.epoch << 32;
        table.chat_log = chat::ChatLog::new(table.seq);
        table.turns = stale::Turns::restored(&r.recent, table.seq);
        table.commitments = BySeat(r.commitments);
        table.seats = r.seats.map(|_, s| s.as_ref().map(|s| Occupant::restored(s, now, &table.settings)));
        table.hands_stored = r.game.as_ref().map_or(0, |m| m.results().len());
        if r.game.is_some() {
            // The match's seeds are in the log; no lobby seed is needed.
            table.fair = None;
        }
        table.game = r.game;
        table.arm_turn(now);
    }
    table.publish(Instant::now());
    let handle = TableHandle::new(init.id, tx, status_rx, stop);
    let on_exit = init.on_exit;
    tracker.spawn(async move {
        let id = table.id;
        table.run().await;
        // The registry forgets the table before its connections see their
        // outboxes close: a client told the table closed finds it gone.
        let conns = std::mem::take(&mut table.conns);
        // Dropped first, so that the handle reads closed in `on_exit`.
        drop(table);
        on_exit(id);
        drop(conns);
    });
    handle
}

/// The table's task state.
struct Table {
    id: Uuid,
    name: String,
    options: TableOptions,
    created_at: u64,
    owner: Ownership,
    seats: BySeat<Option<Occupant>>,
    game: Option<Match>,
    /// Before the match: the committed server seed and the players' seeds.
    fair: Option<fair::Lobby>,
    /// Sequence number of the last view sent.
    seq: u64,
    conns: Vec<Conn>,
    /// Connections found slow or gone while fanning out, detached right
    /// after (never from inside a broadcast).
    dropped: Vec<ConnId>,
    clock: Option<TurnClock>,
    last_action: Option<spades_protocol::LastAction>,
    /// The last move made, with who chose it, even when the view no longer
    /// shows it (the move that ended a hand).
    latest: Option<spades_protocol::LastAction>,
    /// What the last frame showed: the next change frame is made against it.
    sent: Option<delta::Sent>,
    /// A tokio instant and its Unix time (ms), for the times in frames.
    anchor: std::cell::Cell<(Instant, u64)>,
    /// When the table plays the auto-played seat on turn: (turn, when).
    bot_due: Option<(usize, Instant)>,
    /// A decision being computed off the task.
    bot_pending: Option<PendingDecision>,
    /// Storage work that failed and is retried with backoff.
    retry: Option<Retry>,
    /// The last chat messages (memory only).
    chat_log: chat::ChatLog,
    /// The latest moves and the frames that showed them: which moves are
    /// stale.
    turns: stale::Turns,
    /// Open invitations to the seats of players who left.
    invites: arrange::Invites,
    /// Once the match is dealt: each seat's commitment to its seed.
    commitments: BySeat<Option<Commitment>>,
    /// Readiness for a rematch, once the match is over.
    rematch: rematch::RematchState,
    /// Hand results written to the log so far.
    hands_stored: usize,
    idle_since: Option<Instant>,
    /// Since when nobody is at the running match any more (it ends then:
    /// `clock.rs`).
    deserted_since: Option<Instant>,
    settings: Arc<TableSettings>,
    journal: Journal,
    /// An operator closed the table: the task ends after this command.
    closed_by_operator: bool,
    rx: mpsc::Receiver<TableCommand>,
    /// The public status (and so the lobby summary), for REST and the lobby:
    /// read without going through the command queue.
    status: watch::Sender<TableStatus>,
    shutdown: CancellationToken,
}

impl Table {
    #[tracing::instrument(name = "table", skip(self), fields(table_id = %self.id))]
    async fn run(&mut self) {
        debug!("table task started");
        // The shutdown signal and the timer are made once and the timer
        // moved when the next wake changes, rather than made anew (and
        // registered and dropped) for every command.
        let shutdown = self.shutdown.clone().cancelled_owned();
        tokio::pin!(shutdown);
        let timer = tokio::time::sleep_until(Instant::now());
        tokio::pin!(timer);
        let mut armed: Option<Instant> = None;
        loop {
            let wake = self.next_wake();
            if let Some(at) = wake
                && armed != Some(at)
            {
                timer.as_mut().reset(at);
                armed = Some(at);
            }
            tokio::select! {
                biased;
                () = &mut shutdown => break,
                decision = bots::decision(&mut self.bot_pending) => self.on_decision(decision).await,
                cmd = self.rx.recv() => match cmd {
                    Some(cmd) => {
                        self.handle(cmd).await;
                        if self.closed_by_operator {
                            if let Err(e) = self.journal.close(self.id).await {
                                warn!(error = %e, "could not record the table's closing");
                            }
                            break;
                        }
                    }
                    None => break,
                },
                () = &mut timer, if wake.is_some() => {
                    armed = None;
                    if self.on_wake().await {
                        // Closed for idleness: not to be restored.
                        if let Err(e) = self.journal.close(self.id).await {
                            warn!(error = %e, "could not record the table's closing");
                        }
                        break;
                    }
                }
            }
        }
        // Connections see their outboxes close and end with a close frame
        // once the task has ended and the registry has forgotten the table.
        debug!("table task ended");
    }

    async fn handle(&mut self, cmd: TableCommand) {
        let now = Instant::now();
        match cmd {
            TableCommand::Attach { conn, outbox, how, req, quiet, reply } => {
                let attached = self.attach(conn, outbox, how, req, quiet, now).await;
                let _ = reply.send(attached);
            }
            TableCommand::Detach { conn } => self.detach(conn, now),
            TableCommand::Act { conn, req, act, resent } => self.act(conn, req, (act, resent), now).await,
            TableCommand::PlanRematch { conn, req, owner_token, reply } => {
                let _ = reply.send(self.plan_rematch(conn, req, owner_token.as_ref().map(|t| t.0.as_str())));
            }
            TableCommand::RematchStarted { conn, req, next } => self.rematch_started(conn, req, next, now),
            TableCommand::Order(OperatorOrder::RemoveChat { id }) => self.remove_chat(id),
            TableCommand::Order(OperatorOrder::Close { reason }) => self.close_by_operator(&reason),
        }
        self.settle_dropped(now);
    }

    /// Where each act of an attached connection goes: a seat's own moves to
    /// `seats.rs` (bids and cards on to `moves.rs`), the owner's lobby
    /// actions to `arrange.rs`, seeds to `fair.rs`, chat to `chat.rs`,
    /// readiness to `rematch.rs`, a snapshot to `fanout.rs`.
    async fn act(&mut self, conn: ConnId, req: Option<u32>, (act, resent): (Act, bool), now: Instant) {
        let Some(role) = self.conns.iter().find(|c| c.id == conn).map(|c| c.role) else { return };
        match act {
            Act::Bid { bid, seq } => {
                self.seat_move(conn, req, role, (Action::Bid(bid), seq, resent), now).await
            }
            Act::Play { card, seq } => {
                self.seat_move(conn, req, role, (Action::Play(card), seq, resent), now).await;
            }
            Act::TakeOver => self.take_over(conn, req, role, now).await,
            Act::Leave => self.leave(conn, req, role, now).await,
            Act::Closing => self.closing(conn, req),
            Act::Sync => self.sync(conn, req, now),
            Act::Start { owner_token } => self.start_match(conn, req, owner_token.as_deref(), now).await,
            Act::AddBots { owner_token } => self.add_bots(conn, req, owner_token.as_deref(), now).await,
            Act::RemoveBot { owner_token, seat } => {
                self.remove_bot(conn, req, owner_token.as_deref(), seat, now).await;
            }
            Act::MoveSeat { owner_token, from, to } => {
                self.move_seat(conn, req, owner_token.as_deref(), (from, to), now).await;
            }
            Act::Invite { owner_token, seat } => self.invite(conn, req, owner_token.as_deref(), seat),
            Act::Seed { seed } => self.contribute(conn, req, role, fair::Offer::Seed(seed), now).await,
            Act::CommitSeed { commitment } => {
                self.contribute(conn, req, role, fair::Offer::Commitment(commitment), now).await;
            }
            Act::Chat { text } => self.chat(conn, req, role, text),
            Act::Rematch { ready } => self.rematch_ready(conn, req, role, ready, now),
        }
    }
}

/// The record of a new table, for storage.
pub fn table_record(init: &TableInit) -> TableRecord {
    TableRecord {
        id: init.id,
        name: init.name.clone(),
        options: init.options,
        owner_hash: init.owner.token.to_hex(),
        owner_account: init.owner.account,
        created_at_ms: init.created_at,
    }
}

#[cfg(test)]
mod tests;
