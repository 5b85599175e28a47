//! One table: a tokio task that owns the match and everything about its
//! seats, clocks and connections. The rest of the server holds a cheap
//! [`TableHandle`] and talks to the task through its channel; no lock is ever
//! held around game state.
//!
//! Data flow of one move: a connection sends [`TableCommand::Act`]; the task
//! checks it with the engine, writes it to the event log (write-ahead),
//! applies it, re-arms the turn clock, and pushes each connection its own
//! redacted view through that connection's bounded outbox. A connection
//! whose outbox is full is dropped (it can resume), so a slow client never
//! stalls the table.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::ws::Utf8Bytes;
use spades_engine::{Action, BySeat, Card, Match, Phase, Seat};
use spades_protocol::{
    ActionSource, Clock, ClockKind, ErrorCode, LastAction, SeatInfo, SeatKind, SeatStatus, ServerMessage,
    TableOptions, TablePhase, TableStatus, TableSummary, TableView,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};
use uuid::Uuid;

use crate::storage::{ActionRecord, Journal, SeatRecord, TableRecord};
use crate::token::{TokenHash, new_seed, new_token};
use spades_bots::Strength;

/// Identifies one WebSocket connection.
pub type ConnId = u64;

/// A connection's bounded queue of outgoing frames.
pub type Outbox = mpsc::Sender<Utf8Bytes>;

/// How a connection attaches to a table.
#[derive(Debug, Clone)]
pub enum Attach {
    /// Take a seat.
    Join {
        /// Display name (already validated).
        name: String,
        /// The seat wanted.
        seat: Option<Seat>,
    },
    /// Come back to a seat.
    Resume {
        /// The seat token.
        token: String,
    },
    /// Watch.
    Watch,
}

/// What a connection is at its table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// An action from a connection.
#[derive(Debug, Clone)]
pub enum Act {
    /// Bid.
    Bid(u8),
    /// Play a card.
    Play(Card),
    /// Take the seat back from autopilot or the bot.
    TakeOver,
    /// Leave for good.
    Leave,
    /// The client is closing on purpose.
    Closing,
    /// Owner: start.
    Start {
        /// The owner token.
        owner_token: String,
    },
    /// Owner: fill empty seats with bots.
    AddBots {
        /// The owner token.
        owner_token: String,
    },
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
        /// The role on success.
        reply: oneshot::Sender<Option<Role>>,
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
    },
    /// The public status, for REST.
    Status {
        /// Where to send it.
        reply: oneshot::Sender<TableStatus>,
    },
    /// A bot's decision, computed off the table's task.
    BotDecision {
        /// The turn it was computed for (number of moves so far).
        turn: usize,
        /// The seat.
        seat: Seat,
        /// The move.
        action: Action,
        /// Why the table played it.
        source: ActionSource,
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
        }
    }
}

/// The handle the rest of the server holds: cheap to clone.
#[derive(Debug, Clone)]
pub struct TableHandle {
    id: Uuid,
    tx: mpsc::Sender<TableCommand>,
    summary: watch::Receiver<TableSummary>,
}

/// The table's task has ended.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the table is closed")]
pub struct TableClosed;

impl TableHandle {
    /// The table's id.
    pub fn id(&self) -> Uuid {
        self.id
    }

    /// True once the table's task has ended.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// The latest lobby summary (never waits for the task).
    pub fn summary(&self) -> TableSummary {
        self.summary.borrow().clone()
    }

    /// Sends a command, waiting for room in the table's queue.
    ///
    /// # Errors
    /// [`TableClosed`] when the task has ended.
    pub async fn send(&self, cmd: TableCommand) -> Result<(), TableClosed> {
        self.tx.send(cmd).await.map_err(|_| TableClosed)
    }

    /// Sends a command without waiting (for paths that must not block).
    pub fn try_send(&self, cmd: TableCommand) -> bool {
        self.tx.try_send(cmd).is_ok()
    }

    /// Asks for the public status.
    ///
    /// # Errors
    /// [`TableClosed`] when the task has ended.
    pub async fn status(&self) -> Result<TableStatus, TableClosed> {
        let (reply, rx) = oneshot::channel();
        self.send(TableCommand::Status { reply }).await?;
        rx.await.map_err(|_| TableClosed)
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
    /// Owner token hash.
    pub owner: TokenHash,
    /// Creation time (Unix ms).
    pub created_at: u64,
    /// Shared settings.
    pub settings: Arc<TableSettings>,
    /// The event log.
    pub journal: Journal,
    /// Cancelled on server shutdown.
    pub shutdown: CancellationToken,
    /// Called once when the task ends.
    pub on_exit: Box<dyn FnOnce(Uuid) + Send>,
}

impl std::fmt::Debug for TableInit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableInit").field("id", &self.id).field("name", &self.name).finish_non_exhaustive()
    }
}

/// A seat restored from storage.
#[derive(Debug, Clone)]
pub struct RestoredSeat {
    /// Display name.
    pub name: String,
    /// Person or bot.
    pub kind: SeatKind,
    /// Token hash (people).
    pub token: Option<TokenHash>,
    /// Left on purpose.
    pub left: bool,
}

/// A table restored from storage: its seats and the match rebuilt by
/// replaying its log.
#[derive(Debug)]
pub struct Restored {
    /// The seats.
    pub seats: BySeat<Option<RestoredSeat>>,
    /// The match, if it had started.
    pub game: Option<Match>,
}

/// Starts a new table's task (or a restored one) and returns its handle.
pub fn spawn(
    init: TableInit,
    restored: Option<Restored>,
    tracker: &tokio_util::task::TaskTracker,
) -> TableHandle {
    let (tx, rx) = mpsc::channel(256);
    let mut table = Table {
        id: init.id,
        name: init.name,
        options: init.options,
        created_at: init.created_at,
        owner: init.owner,
        seats: BySeat([None, None, None, None]),
        game: None,
        seq: 0,
        conns: Vec::new(),
        clock: None,
        last_action: None,
        bot_due: None,
        bot_pending: None,
        idle_since: Some(Instant::now()),
        settings: init.settings,
        journal: init.journal,
        rx,
        self_tx: tx.downgrade(),
        summary: watch::channel(empty_summary(init.id)).0,
        shutdown: init.shutdown,
    };
    if let Some(r) = restored {
        table.seats = r.seats.map(|_, s| {
            s.as_ref().map(|s| Occupant {
                name: s.name.clone(),
                kind: s.kind,
                token: s.token,
                conns: 0,
                // Restored people start away with a full grace period.
                away_until: (s.kind == SeatKind::Human && !s.left)
                    .then(|| Instant::now() + table.settings.grace),
                closing: false,
                grace_expired: false,
                autopilot: false,
                left: s.left,
                timeouts: 0,
            })
        });
        table.game = r.game;
        table.arm_turn(Instant::now());
    }
    let (summary_tx, summary_rx) = watch::channel(table.summary());
    table.summary = summary_tx;
    let handle = TableHandle { id: init.id, tx, summary: summary_rx };
    let on_exit = init.on_exit;
    tracker.spawn(async move {
        let id = table.id;
        table.run().await;
        on_exit(id);
    });
    handle
}

fn empty_summary(id: Uuid) -> TableSummary {
    TableSummary {
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
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The Unix time (ms) of a tokio instant, relative to now.
fn to_ms(at: Instant, now: Instant, now_ms: u64) -> u64 {
    if at >= now {
        now_ms + (at - now).as_millis() as u64
    } else {
        now_ms.saturating_sub((now - at).as_millis() as u64)
    }
}

#[derive(Debug)]
struct Occupant {
    name: String,
    kind: SeatKind,
    token: Option<TokenHash>,
    /// Connections attached to the seat.
    conns: u16,
    /// While away: when the grace ends.
    away_until: Option<Instant>,
    /// The last connection said it was closing on purpose.
    closing: bool,
    /// The grace ran out: a bot plays until the player comes back.
    grace_expired: bool,
    autopilot: bool,
    left: bool,
    timeouts: u8,
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

    fn status(&self) -> SeatStatus {
        match self.kind {
            SeatKind::Bot => SeatStatus::Bot,
            SeatKind::Human if self.left => SeatStatus::Left,
            SeatKind::Human if self.grace_expired => SeatStatus::Bot,
            SeatKind::Human if self.autopilot => SeatStatus::Autopilot,
            SeatKind::Human if self.conns == 0 => SeatStatus::Away,
            SeatKind::Human => SeatStatus::Present,
        }
    }

    /// True when the table plays this seat by itself.
    fn auto_played(&self) -> bool {
        matches!(self.status(), SeatStatus::Bot | SeatStatus::Left | SeatStatus::Autopilot)
    }
}

#[derive(Debug)]
struct Conn {
    id: ConnId,
    role: Role,
    outbox: Outbox,
    closing: bool,
}

#[derive(Debug, Clone, Copy)]
struct TurnClock {
    seat: Seat,
    /// Number of moves when the turn began: identifies the turn.
    turn: usize,
    kind: ClockKind,
    deadline: Instant,
    duration: Duration,
}

struct Table {
    id: Uuid,
    name: String,
    options: TableOptions,
    created_at: u64,
    owner: TokenHash,
    seats: BySeat<Option<Occupant>>,
    game: Option<Match>,
    seq: u64,
    conns: Vec<Conn>,
    clock: Option<TurnClock>,
    last_action: Option<LastAction>,
    /// When the table plays the auto-played seat on turn: (turn, when).
    bot_due: Option<(usize, Instant)>,
    /// A decision being computed off the task, for this turn.
    bot_pending: Option<usize>,
    idle_since: Option<Instant>,
    settings: Arc<TableSettings>,
    journal: Journal,
    rx: mpsc::Receiver<TableCommand>,
    self_tx: mpsc::WeakSender<TableCommand>,
    summary: watch::Sender<TableSummary>,
    shutdown: CancellationToken,
}

impl Table {
    #[tracing::instrument(name = "table", skip(self), fields(table_id = %self.id))]
    async fn run(&mut self) {
        debug!("table task started");
        loop {
            let wake = self.next_wake();
            tokio::select! {
                biased;
                () = self.shutdown.cancelled() => break,
                cmd = self.rx.recv() => match cmd {
                    Some(cmd) => self.handle(cmd).await,
                    None => break,
                },
                () = sleep_until_opt(wake) => {
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
        // Connections see their outboxes close and end with a close frame.
        self.conns.clear();
        debug!("table task ended");
    }

    fn next_wake(&self) -> Option<Instant> {
        let mut wake: Option<Instant> = None;
        let mut consider = |t: Option<Instant>| {
            if let Some(t) = t {
                wake = Some(wake.map_or(t, |w| w.min(t)));
            }
        };
        consider(self.clock.map(|c| c.deadline));
        consider(self.bot_due.map(|(_, t)| t));
        for occ in self.seats.0.iter().flatten() {
            if occ.conns == 0 {
                consider(occ.away_until);
            }
        }
        consider(self.idle_since.map(|t| t + self.settings.idle));
        wake
    }

    /// Handles whatever timers are due. Returns true when the table should
    /// close (idle).
    async fn on_wake(&mut self) -> bool {
        let now = Instant::now();
        if let Some(since) = self.idle_since
            && now >= since + self.settings.idle
            && self.conns.is_empty()
            && self.game.as_ref().is_none_or(|m| m.phase() == Phase::MatchOver)
        {
            info!("closing idle table");
            return true;
        }
        // Grace periods.
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
                self.journal_seats().await;
            } else if let Some(o) = self.seats[seat].as_mut() {
                info!(%seat, "grace ran out: a bot plays the seat");
                o.away_until = None;
                o.grace_expired = true;
            }
        }
        if changed {
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
                let source = match self.seats[seat].as_ref().map(Occupant::status) {
                    Some(SeatStatus::Autopilot) => ActionSource::Autopilot,
                    _ => ActionSource::Bot,
                };
                self.table_move(seat, turn, source).await;
            }
        }
        false
    }

    /// Plays for `seat` on `turn`: on a timeout, for the autopilot or a bot.
    async fn table_move(&mut self, seat: Seat, turn: usize, source: ActionSource) {
        let Some(m) = self.game.as_ref() else { return };
        if m.turn() != Some(seat) || m.moves().len() != turn || self.bot_pending == Some(turn) {
            return;
        }
        let view = m.view(Some(seat));
        let seed = m.seed() ^ (turn as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let strength = self.settings.strength;
        if strength == Strength::Search {
            // Search runs on the blocking pool; its answer comes back as a
            // command and is dropped if the turn has moved on.
            let Some(tx) = self.self_tx.upgrade() else { return };
            self.bot_pending = Some(turn);
            tokio::task::spawn_blocking(move || {
                let action = spades_bots::choose(strength, &view, seed);
                let _ = tx.try_send(TableCommand::BotDecision { turn, seat, action, source });
            });
        } else {
            let action = spades_bots::choose(strength, &view, seed);
            self.commit(seat, action, source, Instant::now(), None).await;
        }
    }

    async fn handle(&mut self, cmd: TableCommand) {
        let now = Instant::now();
        match cmd {
            TableCommand::Attach { conn, outbox, how, req, reply } => {
                let role = self.attach(conn, outbox, how, req, now).await;
                let _ = reply.send(role);
            }
            TableCommand::Detach { conn } => self.detach(conn, now),
            TableCommand::Act { conn, req, act } => self.act(conn, req, act, now).await,
            TableCommand::Status { reply } => {
                let _ = reply.send(self.status(now));
            }
            TableCommand::BotDecision { turn, seat, action, source } => {
                if self.bot_pending == Some(turn) {
                    self.bot_pending = None;
                }
                let current =
                    self.game.as_ref().is_some_and(|m| m.moves().len() == turn && m.turn() == Some(seat));
                if current {
                    self.commit(seat, action, source, now, None).await;
                }
            }
        }
    }

    fn send_to(&mut self, conn: ConnId, msg: &ServerMessage) {
        let Some(c) = self.conns.iter().find(|c| c.id == conn) else { return };
        match serde_json::to_string(msg) {
            Ok(text) => {
                if c.outbox.try_send(Utf8Bytes::from(text)).is_err() {
                    self.drop_slow(conn, Instant::now());
                }
            }
            Err(e) => warn!(error = %e, "could not serialise a reply"),
        }
    }

    fn error_to(&mut self, conn: ConnId, req: Option<u32>, code: ErrorCode, message: impl Into<String>) {
        crate::metrics::error(code);
        self.send_to(conn, &ServerMessage::Error { req, code, message: message.into() });
    }

    fn refuse(outbox: &Outbox, req: Option<u32>, code: ErrorCode, message: &str) {
        crate::metrics::error(code);
        if let Ok(text) = serde_json::to_string(&ServerMessage::Error { req, code, message: message.into() })
        {
            let _ = outbox.try_send(Utf8Bytes::from(text));
        }
    }

    async fn attach(
        &mut self,
        conn: ConnId,
        outbox: Outbox,
        how: Attach,
        req: Option<u32>,
        now: Instant,
    ) -> Option<Role> {
        let (role, reply) = match how {
            Attach::Watch => (Role::Spectator, ServerMessage::Watching { req, table: self.id }),
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
                info!(%seat, "seat taken");
                self.seats[seat] = Some(Occupant::human(name, hash));
                self.journal_seats().await;
                (Role::Seat(seat), ServerMessage::Joined { req, table: self.id, seat, token })
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
                info!(%seat, left, "seat resumed");
                (
                    if left { Role::Left(seat) } else { Role::Seat(seat) },
                    ServerMessage::Resumed { req, table: self.id, seat },
                )
            }
        };
        if let Role::Seat(seat) = role
            && let Some(o) = self.seats[seat].as_mut()
        {
            o.conns += 1;
            o.away_until = None;
            o.closing = false;
            // Coming back after the grace takes the seat back from the bot.
            o.grace_expired = false;
        }
        self.conns.push(Conn { id: conn, role, outbox, closing: false });
        self.idle_since = None;
        self.send_to(conn, &reply);
        if matches!(role, Role::Spectator | Role::Left(_)) {
            // Nothing changed for anybody else: just this connection's view.
            self.send_view_to(conn, now);
            self.publish_summary(now);
        } else {
            self.arm_turn(now);
            self.broadcast(now);
        }
        Some(role)
    }

    fn detach(&mut self, conn: ConnId, now: Instant) {
        let Some(pos) = self.conns.iter().position(|c| c.id == conn) else { return };
        let c = self.conns.swap_remove(pos);
        self.after_detach(c, now);
    }

    fn after_detach(&mut self, c: Conn, now: Instant) {
        if self.conns.is_empty() {
            self.idle_since = Some(now);
        }
        let Role::Seat(seat) = c.role else {
            self.publish_summary(now);
            return;
        };
        let settings = Arc::clone(&self.settings);
        if let Some(o) = self.seats[seat].as_mut() {
            o.conns = o.conns.saturating_sub(1);
            o.closing |= c.closing;
            if o.conns == 0 && o.kind == SeatKind::Human && !o.left {
                let grace = if o.closing { settings.closing_grace } else { settings.grace };
                o.away_until = Some(now + grace);
                info!(%seat, grace_secs = grace.as_secs_f32(), "player disconnected");
            }
        }
        self.arm_turn(now);
        self.broadcast(now);
    }

    /// Removes a connection whose outbox is full; it can resume.
    fn drop_slow(&mut self, conn: ConnId, now: Instant) {
        if let Some(pos) = self.conns.iter().position(|c| c.id == conn) {
            warn!(conn, "connection too slow: dropped");
            let c = self.conns.swap_remove(pos);
            self.after_detach(c, now);
        }
    }

    async fn act(&mut self, conn: ConnId, req: Option<u32>, act: Act, now: Instant) {
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
                let Ok(seed) = new_seed() else {
                    return self.error_to(conn, req, ErrorCode::Internal, "could not draw a seed");
                };
                if let Err(e) = self.journal.start(self.id, seed).await {
                    warn!(error = %e, "could not store the start of the match");
                    return self.error_to(conn, req, ErrorCode::Internal, "storage is unavailable");
                }
                info!(seed, "match started");
                self.game = Some(Match::new(self.options.rules, seed));
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
                for seat in Seat::ALL {
                    if self.seats[seat].is_none() {
                        self.seats[seat] = Some(Occupant::bot(format!("{seat} bot")));
                    }
                }
                self.journal_seats().await;
                self.send_to(conn, &ServerMessage::Ack { req });
                self.broadcast(now);
            }
            Act::Closing => {
                if let Some(c) = self.conns.iter_mut().find(|c| c.id == conn) {
                    c.closing = true;
                }
                self.send_to(conn, &ServerMessage::Ack { req });
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
                    self.journal_seats().await;
                    for c in self.conns.iter_mut().filter(|c| c.role == Role::Seat(seat)) {
                        c.role = Role::Spectator;
                    }
                } else {
                    info!(%seat, "player left the match: a bot plays the seat for good");
                    if let Some(o) = self.seats[seat].as_mut() {
                        o.left = true;
                        o.conns = 0;
                        o.away_until = None;
                    }
                    self.journal_seats().await;
                    for c in self.conns.iter_mut().filter(|c| c.role == Role::Seat(seat)) {
                        c.role = Role::Left(seat);
                    }
                }
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
                self.send_to(conn, &ServerMessage::Ack { req });
                // A fresh turn clock for the player, if on turn.
                self.clock = None;
                self.arm_turn(now);
                self.broadcast(now);
            }
            Act::Bid(b) => self.player_action(conn, req, seat, Action::Bid(b), now).await,
            Act::Play(c) => self.player_action(conn, req, seat, Action::Play(c), now).await,
            Act::Closing | Act::Start { .. } | Act::AddBots { .. } => {}
        }
    }

    async fn player_action(
        &mut self,
        conn: ConnId,
        req: Option<u32>,
        seat: Seat,
        action: Action,
        now: Instant,
    ) {
        let Some(m) = self.game.as_ref() else {
            return self.error_to(conn, req, ErrorCode::NotStarted, "the match has not started yet");
        };
        if let Err(e) = m.check(seat, action) {
            let code = ErrorCode::from_engine(&e);
            return self.error_to(conn, req, code, e.to_string());
        }
        if !self.commit(seat, action, ActionSource::Player, now, Some((conn, req))).await {
            self.error_to(conn, req, ErrorCode::Internal, "the move could not be stored: try again");
        }
    }

    /// Writes an action to the log, applies it, acknowledges it to the
    /// connection that made it (`ack`) and tells everybody. Returns false when
    /// the action was not stored (and so not applied).
    async fn commit(
        &mut self,
        seat: Seat,
        action: Action,
        source: ActionSource,
        now: Instant,
        ack: Option<(ConnId, Option<u32>)>,
    ) -> bool {
        let started = std::time::Instant::now();
        let Some(m) = self.game.as_ref() else { return false };
        if let Err(e) = m.check(seat, action) {
            warn!(%seat, ?action, error = %e, "refused a table move");
            return false;
        }
        let record = ActionRecord { index: m.moves().len(), seat, action, source, at_ms: now_ms() };
        // Write-ahead: nobody sees the move before it is in the log.
        if let Err(e) = self.journal.append(self.id, record).await {
            warn!(error = %e, "could not store an action: refused");
            return false;
        }
        let Some(m) = self.game.as_mut() else { return false };
        let hand_before = m.hand_number();
        if m.apply(seat, action).is_err() {
            return false;
        }
        crate::metrics::action(action, source);
        if let Some(o) = self.seats[seat].as_mut() {
            match source {
                ActionSource::Player => {
                    o.timeouts = 0;
                    o.autopilot = false;
                }
                ActionSource::Timeout => {
                    o.timeouts = o.timeouts.saturating_add(1);
                    if o.timeouts >= self.settings.autopilot_after && !o.autopilot {
                        info!(%seat, timeouts = o.timeouts, "autopilot on");
                        o.autopilot = true;
                    }
                }
                ActionSource::Autopilot | ActionSource::Bot => {}
            }
        }
        // The move that ends a hand belongs to it: once the next hand is
        // dealt its card may be in somebody's new hand, so it is not shown.
        let same_hand =
            self.game.as_ref().is_some_and(|m| m.hand_number() == hand_before && m.result().is_none());
        self.last_action = same_hand.then_some(LastAction { seat, action, source });
        let (finished_hand, over) = {
            let m = self.game.as_ref();
            let finished = m
                .filter(|m| m.results().len() >= usize::from(hand_before))
                .and_then(|m| m.results().last().cloned());
            (finished, m.and_then(|m| m.result().copied()))
        };
        if let Some(result) = finished_hand {
            debug!(hand = result.hand_number, "hand scored");
            if let Err(e) = self.journal.hand(self.id, &result).await {
                warn!(error = %e, "could not store a hand result");
            }
        }
        if let Some(end) = over {
            info!(?end, "match over");
            if let Err(e) = self.journal.finish(self.id, &end).await {
                warn!(error = %e, "could not store the match result");
            }
            if self.conns.is_empty() {
                self.idle_since = Some(now);
            }
        }
        self.arm_turn(now);
        self.broadcast_with(now, ack);
        crate::metrics::action_latency(started.elapsed());
        true
    }

    /// Sets the clock and the bot timer for the seat on turn.
    fn arm_turn(&mut self, now: Instant) {
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

    fn phase(&self) -> TablePhase {
        match self.game.as_ref().map(Match::phase) {
            None => TablePhase::Lobby,
            Some(Phase::Bidding) => TablePhase::Bidding,
            Some(Phase::Playing) => TablePhase::Playing,
            Some(Phase::MatchOver) => TablePhase::Finished,
        }
    }

    fn seat_infos(&self, now: Instant, now_ms: u64) -> [SeatInfo; 4] {
        Seat::ALL.map(|seat| match &self.seats[seat] {
            None => SeatInfo::empty(seat),
            Some(o) => SeatInfo {
                seat,
                name: Some(o.name.clone()),
                kind: Some(o.kind),
                status: o.status(),
                away_until: o.away_until.filter(|_| o.conns == 0).map(|t| to_ms(t, now, now_ms)),
                timeouts: o.timeouts,
            },
        })
    }

    fn wire_clock(&self, now: Instant, now_ms: u64) -> Option<Clock> {
        self.clock.map(|c| Clock {
            seat: c.seat,
            kind: c.kind,
            deadline: to_ms(c.deadline, now, now_ms),
            duration_ms: c.duration.as_millis() as u64,
        })
    }

    fn render(
        &self,
        role: Role,
        seats: &[SeatInfo; 4],
        clock: Option<Clock>,
        now_ms: u64,
    ) -> Option<Utf8Bytes> {
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
        };
        match serde_json::to_string(&ServerMessage::View { seq: self.seq, view: Box::new(view) }) {
            Ok(s) => Some(Utf8Bytes::from(s)),
            Err(e) => {
                warn!(error = %e, "could not serialise a view");
                None
            }
        }
    }

    /// Sends every connection its own view of the table's new state.
    fn broadcast(&mut self, now: Instant) {
        self.broadcast_with(now, None);
    }

    /// [`Table::broadcast`], with the acknowledgement of the move that caused
    /// it queued just before the view of the connection that sent the move,
    /// so that the connection's task finds both and writes them together.
    fn broadcast_with(&mut self, now: Instant, ack: Option<(ConnId, Option<u32>)>) {
        self.seq += 1;
        let now_ms = now_ms();
        let seats = self.seat_infos(now, now_ms);
        let clock = self.wire_clock(now, now_ms);
        let key = |role: Role| match role {
            Role::Seat(s) => usize::from(s.index()),
            Role::Spectator | Role::Left(_) => 4,
        };
        // One rendering per seat and one for all spectators, all made before
        // the first frame is queued.
        let mut cache: [Option<Utf8Bytes>; 5] = Default::default();
        for c in &self.conns {
            if cache[key(c.role)].is_none() {
                cache[key(c.role)] = self.render(c.role, &seats, clock, now_ms);
            }
        }
        let ack = ack.and_then(|(conn, req)| {
            serde_json::to_string(&ServerMessage::Ack { req }).ok().map(|t| (conn, Utf8Bytes::from(t)))
        });
        let mut slow = Vec::new();
        for c in &self.conns {
            if let Some((conn, text)) = &ack
                && *conn == c.id
                && c.outbox.try_send(text.clone()).is_err()
            {
                slow.push(c.id);
                continue;
            }
            if let Some(frame) = &cache[key(c.role)]
                && c.outbox.try_send(frame.clone()).is_err()
            {
                slow.push(c.id);
            }
        }
        for id in slow {
            self.drop_slow(id, now);
        }
        self.publish_summary(now);
    }

    fn send_view_to(&mut self, conn: ConnId, now: Instant) {
        let now_ms = now_ms();
        let seats = self.seat_infos(now, now_ms);
        let clock = self.wire_clock(now, now_ms);
        let Some(c) = self.conns.iter().find(|c| c.id == conn) else { return };
        if let Some(frame) = self.render(c.role, &seats, clock, now_ms)
            && c.outbox.try_send(frame).is_err()
        {
            self.drop_slow(conn, now);
        }
    }

    fn summary_at(&self, now: Instant, now_ms: u64) -> TableSummary {
        let seats = self.seat_infos(now, now_ms);
        let m = self.game.as_ref();
        TableSummary {
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
        }
    }

    fn summary(&self) -> TableSummary {
        self.summary_at(Instant::now(), now_ms())
    }

    fn publish_summary(&self, now: Instant) {
        self.summary.send_replace(self.summary_at(now, now_ms()));
    }

    fn status(&self, now: Instant) -> TableStatus {
        let now_ms = now_ms();
        let m = self.game.as_ref();
        let hand = m.map(Match::hand);
        TableStatus {
            summary: self.summary_at(now, now_ms),
            turn: m.and_then(Match::turn),
            dealer: hand.map(|h| h.dealer()),
            bids: hand.map_or([None; 4], |h| h.bids().0),
            tricks_won: hand.map_or([0; 4], |h| h.tricks_won().0),
            bags: m.map_or([0, 0], |m| m.bags().0),
            clock: self.wire_clock(now, now_ms),
            hands: m.map_or_else(Vec::new, |m| m.results().to_vec()),
            result: m.and_then(|m| m.result().copied()),
            seed: m.filter(|m| m.result().is_some()).map(Match::seed),
        }
    }

    async fn journal_seats(&mut self) {
        let seats = self.seats.map(|_, o| {
            o.as_ref().map(|o| SeatRecord {
                name: o.name.clone(),
                kind: o.kind,
                token_hash: o.token.map(TokenHash::to_hex),
                left: o.left,
            })
        });
        if let Err(e) = self.journal.seats(self.id, &seats).await {
            warn!(error = %e, "could not store the seats");
        }
    }
}

/// Sleeps until `at`, or forever when `None`.
async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The record of a new table, for storage.
pub fn table_record(init: &TableInit) -> TableRecord {
    TableRecord {
        id: init.id,
        name: init.name.clone(),
        options: init.options,
        owner_hash: init.owner.to_hex(),
        created_at_ms: init.created_at,
    }
}

#[cfg(test)]
mod tests;
