//! The bot client and load generator behind `spades-load`.
//!
//! A run holds T tables. For each, the owner creates the table over REST,
//! four WebSocket connections join the four seats, and the owner starts the
//! match. Each connection, on a view where its seat is on turn, waits the
//! think time and sends the rule bot's move; the latency of a move is the
//! time from sending it to the first view that follows on that connection.
//! When a match ends, the table's connections close and a new table takes
//! its place (unless `restart` is off).
//!
//! [`Mode::Echo`] drives a plain WebSocket echo server (`spades-echo`) the
//! same way, to measure what tokio-tungstenite alone does on the machine:
//! four connections per "table", one frame of an action's size in flight
//! per table, passed round the four connections like the turn.
//!
//! Everything is measured in one process with [`Stats`]; [`run`],
//! [`capacity`] and [`memory`] are the three scenarios of the benchmark
//! (`scripts/bench.sh`, `docs/benchmarks.md`).

pub mod lean;
pub mod stats;
pub mod summary;

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use spades_bots::Strength;
use spades_engine::{Action, Card, Rules, Seat, SeatView};
use spades_protocol::{
    ClientFrame, ClientMessage, CreateTable, ErrorCode, ServerMessage, TableOptions, TablePhase, TableView,
    Tempo,
};
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Utf8Bytes;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

pub use stats::{Latency, Snapshot, Stats};

use crate::conn::{ConnectOptions, Connection, Endpoint, action_message};
use crate::peek::{self, Kind};
use crate::rest::Client;
use crate::rng::SplitMix;
use crate::tls::Tls;
use crate::{Attach, Command, Event, SessionOptions};

/// What the load generator talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// The Spades server: real tables, real moves.
    Game,
    /// A WebSocket echo server: frames of an action's size, echoed.
    Echo,
}

/// A load run's settings.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// The server.
    pub endpoint: Endpoint,
    /// Game or echo.
    pub mode: Mode,
    /// Tables held at once (four connections each).
    pub tables: usize,
    /// Think time before each move (zero: as fast as possible).
    pub think: Duration,
    /// Each think time varies by up to this fraction either way (0 to 1),
    /// so tables do not move in lockstep.
    pub think_jitter: f64,
    /// New tables opened per second while ramping up.
    pub ramp_per_sec: f64,
    /// Time after the ramp before measuring.
    pub warmup: Duration,
    /// The measured time.
    pub duration: Duration,
    /// Local addresses to spread connections over (empty: the system
    /// chooses).
    pub sources: Vec<IpAddr>,
    /// The rules of each table.
    pub rules: Rules,
    /// The tempo of each table.
    pub tempo: Tempo,
    /// Replace a finished table with a new one.
    pub restart: bool,
    /// The server's process id, to read its resident memory and CPU time.
    pub server_pid: Option<u32>,
    /// Process names whose CPU use over the window is reported (each
    /// figure is the sum over the processes of that name).
    pub cpu_of: Vec<String>,
    /// WebSocket read buffer of each connection, in bytes.
    pub read_buffer: usize,
    /// The certificates trusted for an `https://` server.
    pub tls: Tls,
    /// Where the seats connect, when not to `endpoint` (the nodes of a
    /// cluster): seat `i` of table slot `k` connects to entry `(k + i) % n`,
    /// so every table's seats are spread over the nodes. Tables are still
    /// created through `endpoint`.
    pub seat_endpoints: Vec<Endpoint>,
    /// Where every acknowledged move is written (see [`AckLog`]).
    pub acks_out: Option<std::path::PathBuf>,
    /// A seat whose connection is lost reconnects (to the next of the seat
    /// endpoints) and resumes with its token, as a real client does, for up
    /// to [`RESUME_WITHIN`]; off, a lost connection fails its table.
    pub reconnect: bool,
    /// Each seat signs in as a guest account (one per table slot and seat,
    /// kept across the slot's tables) and plays as it: `join` without a
    /// name, `resume` without a token (`docs/accounts.md`).
    pub signed_in: bool,
}

/// How long a seat with `reconnect` on keeps trying to resume.
pub const RESUME_WITHIN: Duration = Duration::from_secs(60);

impl LoadConfig {
    /// Defaults for `endpoint`: one table, no think time.
    pub fn new(endpoint: Endpoint) -> LoadConfig {
        LoadConfig {
            endpoint,
            mode: Mode::Game,
            tables: 1,
            think: Duration::ZERO,
            think_jitter: 0.0,
            ramp_per_sec: 200.0,
            warmup: Duration::from_secs(2),
            duration: Duration::from_secs(10),
            sources: Vec::new(),
            rules: Rules::default(),
            tempo: Tempo::Normal,
            restart: true,
            server_pid: None,
            cpu_of: Vec::new(),
            read_buffer: 4096,
            tls: Tls::default(),
            seat_endpoints: Vec::new(),
            acks_out: None,
            reconnect: false,
            signed_in: false,
        }
    }
}

/// `count` loopback addresses to connect from: 127.0.0.2, 127.0.0.3, …
pub fn loopback_sources(count: usize) -> Vec<IpAddr> {
    (0..count.min(250)).map(|i| IpAddr::from([127, 0, 0, 2 + i as u8])).collect()
}

struct Shared {
    cfg: LoadConfig,
    stats: Stats,
    client: Client,
    stop: CancellationToken,
    next_source: AtomicUsize,
    /// Table slots whose first table has been set up.
    ready: AtomicUsize,
    /// Hands finished per table slot (a slot keeps its count across the
    /// tables that replace each other in it).
    hands_by_slot: Mutex<Vec<u64>>,
    acks: Option<AckLog>,
    /// With `signed_in`: each table slot's seats' sessions.
    sessions: Mutex<std::collections::HashMap<(usize, Seat), crate::account::SessionToken>>,
    /// Tells this run's device secrets from an earlier run's.
    run: u64,
}

/// The acknowledged moves of a run, one line each: table, seat index, hand
/// number, kind and value, tab-separated, as the event log stores them
/// (`scripts/bench-cluster.sh` checks each against the log).
pub struct AckLog(Mutex<std::io::BufWriter<std::fs::File>>);

impl std::fmt::Debug for AckLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AckLog")
    }
}

impl AckLog {
    /// A log appending to `path`.
    ///
    /// # Errors
    /// When the file cannot be opened.
    pub fn open(path: &std::path::Path) -> std::io::Result<AckLog> {
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        Ok(AckLog(Mutex::new(std::io::BufWriter::new(file))))
    }

    fn write(&self, table: Uuid, seat: Seat, hand: u16, action: Action) {
        use std::io::Write;
        let (kind, value) = match action {
            Action::Bid(b) => ("bid", b.to_string()),
            Action::Play(c) => ("play", c.to_string()),
        };
        if let Ok(mut w) = self.0.lock() {
            let _ = writeln!(w, "{table}\t{}\t{hand}\t{kind}\t{value}", seat.index());
        }
    }

    fn flush(&self) {
        use std::io::Write;
        if let Ok(mut w) = self.0.lock() {
            let _ = w.flush();
        }
    }
}

impl Shared {
    fn connect_options(&self) -> ConnectOptions {
        let source = if self.cfg.sources.is_empty() {
            None
        } else {
            let i = self.next_source.fetch_add(1, Ordering::Relaxed);
            Some(self.cfg.sources[i % self.cfg.sources.len()])
        };
        ConnectOptions {
            source,
            read_buffer: self.cfg.read_buffer,
            connect_timeout: Duration::from_secs(20),
            request_timeout: Duration::from_secs(20),
            tls: self.cfg.tls.clone(),
            // The seats read raw frames and never reveal a committed seed:
            // each start would wait out the reveal window. They deal with
            // the server's seed alone, as bots' seats do.
            contribute_seed: false,
            session: None,
        }
    }

    /// The connection options of seat `seat` of slot `slot`: with
    /// `signed_in`, its account's session (signed in on first use).
    async fn seat_options(&self, slot: usize, seat: Seat) -> crate::Result<ConnectOptions> {
        let mut opts = self.connect_options();
        if self.cfg.signed_in {
            let known = self.sessions.lock().ok().and_then(|s| s.get(&(slot, seat)).cloned());
            let session = match known {
                Some(session) => session,
                None => {
                    let device = crate::account::DeviceSecret(format!(
                        "load-{:016x}-{slot:08}-{}-device-secret",
                        self.run,
                        seat.index()
                    ));
                    let (_, session) = self.client.sign_in_guest(&device, None).await?;
                    if let Ok(mut s) = self.sessions.lock() {
                        s.insert((slot, seat), session.clone());
                    }
                    session
                }
            };
            opts.session = Some(session);
        }
        Ok(opts)
    }

    fn think(&self, rng: &mut SplitMix) -> Duration {
        if self.cfg.think.is_zero() {
            return Duration::ZERO;
        }
        let j = self.cfg.think_jitter.clamp(0.0, 1.0);
        self.cfg.think.mul_f64(1.0 + j * (2.0 * rng.unit() - 1.0))
    }

    fn hand_done(&self, slot: usize) {
        self.stats.hands.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut h) = self.hands_by_slot.lock()
            && let Some(n) = h.get_mut(slot)
        {
            *n += 1;
        }
    }
}

/// A running load: table slots that can grow.
#[derive(Debug)]
pub struct Runner {
    shared: Arc<Shared>,
    slots: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").field("tables", &self.cfg.tables).finish_non_exhaustive()
    }
}

impl Runner {
    /// A runner with no tables yet.
    pub fn new(cfg: LoadConfig) -> Runner {
        let http = cfg
            .tls
            .http_builder()
            .pool_max_idle_per_host(32)
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap_or_default();
        let client = Client::with_endpoint(cfg.endpoint.clone()).with_http(http);
        let cfg_acks = cfg.acks_out.as_deref().and_then(|path| match AckLog::open(path) {
            Ok(log) => Some(log),
            Err(e) => {
                eprintln!("spades-load: cannot write {}: {e}", path.display());
                None
            }
        });
        let shared = Arc::new(Shared {
            cfg,
            stats: Stats::default(),
            client,
            stop: CancellationToken::new(),
            next_source: AtomicUsize::new(0),
            ready: AtomicUsize::new(0),
            hands_by_slot: Mutex::new(Vec::new()),
            acks: cfg_acks,
            sessions: Mutex::new(std::collections::HashMap::new()),
            run: SplitMix::new(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64),
            )
            .next_u64(),
        });
        Runner { shared, slots: Vec::new() }
    }

    /// The live counters.
    pub fn stats(&self) -> &Stats {
        &self.shared.stats
    }

    /// Table slots opened.
    pub fn tables(&self) -> usize {
        self.slots.len()
    }

    /// Table slots whose first table has been set up (a slot then keeps
    /// replacing finished tables).
    pub fn ready(&self) -> usize {
        self.shared.ready.load(Ordering::Relaxed)
    }

    /// Table slots in which no hand has finished yet.
    pub fn slots_without_a_hand(&self) -> usize {
        self.shared.hands_by_slot.lock().map(|h| h.iter().filter(|n| **n == 0).count()).unwrap_or(0)
    }

    /// Opens table slots up to `tables`, at the configured ramp rate.
    pub async fn grow_to(&mut self, tables: usize) {
        let per = Duration::from_secs_f64(1.0 / self.shared.cfg.ramp_per_sec.max(0.1));
        let mut tick = tokio::time::interval(per);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        while self.slots.len() < tables {
            tick.tick().await;
            let slot = self.slots.len();
            if let Ok(mut h) = self.shared.hands_by_slot.lock() {
                h.push(0);
            }
            let shared = Arc::clone(&self.shared);
            self.slots.push(tokio::spawn(table_slot(shared, slot)));
        }
    }

    /// Waits until every slot's first table is set up (or `timeout`); true
    /// when they all are.
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        let until = Instant::now() + timeout;
        while self.ready() < self.slots.len() {
            if Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }

    /// Stops every table and waits for the connections to close.
    pub async fn stop(self) {
        self.shared.stop.cancel();
        let all = futures_util::future::join_all(self.slots);
        let _ = tokio::time::timeout(Duration::from_secs(20), all).await;
        if let Some(acks) = &self.shared.acks {
            acks.flush();
        }
    }
}

async fn table_slot(shared: Arc<Shared>, slot: usize) {
    let mut rng = SplitMix::from_time();
    let mut ready = false;
    while !shared.stop.is_cancelled() {
        let outcome = match shared.cfg.mode {
            Mode::Game => play_table(&shared, slot, &mut rng, &mut ready).await,
            Mode::Echo => echo_table(&shared, &mut rng, &mut ready).await,
        };
        match outcome {
            Outcome::Finished if shared.cfg.restart => {}
            Outcome::Finished | Outcome::Stopped => break,
            Outcome::Failed => {
                // Try again with a new table after a pause.
                tokio::select! {
                    () = shared.stop.cancelled() => break,
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        }
    }
}

/// Counts a slot as ready the first time one of its tables is set up.
fn mark_ready(shared: &Shared, ready: &mut bool) {
    if !*ready {
        *ready = true;
        shared.ready.fetch_add(1, Ordering::Relaxed);
    }
}

enum Outcome {
    Finished,
    Stopped,
    Failed,
}

/// Connects and takes a seat (of the table in `slot`).
/// The endpoint seat `seat` of table slot `slot` connects to, on its
/// `attempt`th connection (the next node each time).
fn seat_endpoint(shared: &Shared, slot: usize, seat: Seat, attempt: usize) -> &Endpoint {
    let spread = &shared.cfg.seat_endpoints;
    if spread.is_empty() {
        &shared.cfg.endpoint
    } else {
        &spread[(slot + usize::from(seat.index()) + attempt) % spread.len()]
    }
}

/// Takes the seat: the connection and the seat's token. With `reconnect`
/// on, a node that does not answer is passed over for the next, and a join
/// refused with `storage_unavailable` (the table is moving to another
/// node: "try again in a moment") is tried again, as a real client does.
async fn sit(shared: &Shared, slot: usize, table: Uuid, seat: Seat) -> crate::Result<(Connection, String)> {
    let tries = if shared.cfg.reconnect { shared.cfg.seat_endpoints.len().max(1) + 4 } else { 1 };
    let mut attempt = 0;
    loop {
        let endpoint = seat_endpoint(shared, slot, seat, attempt);
        attempt += 1;
        let tried = async {
            let opts = shared.seat_options(slot, seat).await?;
            let mut conn = Connection::connect_with(endpoint, &opts).await?;
            let joined = if shared.cfg.signed_in {
                conn.join_as_account(table, Some(seat)).await?
            } else {
                conn.join(table, &format!("bot {}", seat.name()), Some(seat)).await?
            };
            Ok::<_, crate::Error>((conn, joined.token))
        };
        match tried.await {
            Ok(sat) => return Ok(sat),
            Err(e)
                if attempt < tries && matches!(e.refusal(), None | Some(ErrorCode::StorageUnavailable)) =>
            {
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

/// A new connection to the next node, resumed with the seat's token; tries
/// until it works, the run stops, or [`RESUME_WITHIN`] has passed.
async fn resume_seat(
    shared: &Shared,
    (slot, seat, table, token): (usize, Seat, Uuid, &str),
    stop: &CancellationToken,
) -> Option<Connection> {
    let until = Instant::now() + RESUME_WITHIN;
    let mut attempt = 1;
    while Instant::now() < until && !stop.is_cancelled() {
        let endpoint = seat_endpoint(shared, slot, seat, attempt);
        attempt += 1;
        let tried = async {
            let opts = shared.seat_options(slot, seat).await?;
            let mut conn = Connection::connect_with(endpoint, &opts).await?;
            if shared.cfg.signed_in {
                conn.resume_as_account(table).await?;
            } else {
                conn.resume(table, token).await?;
            }
            Ok::<_, crate::Error>(conn)
        };
        if let Ok(conn) = tried.await {
            return Some(conn);
        }
        tokio::select! {
            () = stop.cancelled() => return None,
            () = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
    }
    None
}

async fn play_table(shared: &Arc<Shared>, slot: usize, rng: &mut SplitMix, ready: &mut bool) -> Outcome {
    let stats = &shared.stats;
    let create = CreateTable {
        name: Some(format!("load {slot}")),
        options: TableOptions { rules: shared.cfg.rules, tempo: shared.cfg.tempo, ..TableOptions::default() },
    };
    let created = tokio::select! {
        () = shared.stop.cancelled() => return Outcome::Stopped,
        c = shared.client.create_table(&create) => c,
    };
    let created = match created {
        Ok(c) => c,
        Err(e) => {
            let reason = e.refusal().map_or("create_table".to_owned(), |c| format!("create_table: {c}"));
            stats.failure(&stats.setup_failures, &reason, || format!("creating a table: {e}"));
            return Outcome::Failed;
        }
    };
    let table = created.table;
    let seats = tokio::select! {
        () = shared.stop.cancelled() => return Outcome::Stopped,
        s = futures_util::future::join_all(Seat::ALL.map(|s| sit(shared, slot, table, s))) => s,
    };
    let mut conns = Vec::with_capacity(4);
    for (seat, c) in Seat::ALL.into_iter().zip(seats) {
        match c {
            Ok(c) => conns.push(c),
            Err(e) => {
                let reason = e.refusal().map_or("join".to_owned(), |c| format!("join: {c}"));
                stats.failure(&stats.setup_failures, &reason, || format!("{seat} joining {table}: {e}"));
                return Outcome::Failed;
            }
        }
    }
    if let Err(e) = conns[0].0.start(&created.owner_token).await {
        stats.failure(&stats.setup_failures, "start", || format!("starting {table}: {e}"));
        return Outcome::Failed;
    }
    mark_ready(shared, ready);
    let table_stop = shared.stop.child_token();
    // One task per seat: a wake-up polls only the connection that is ready.
    let seats: Vec<_> = conns
        .into_iter()
        .zip(Seat::ALL)
        .map(|((mut conn, token), seat)| {
            let shared = Arc::clone(shared);
            let stop = table_stop.clone();
            let seed = rng.next_u64();
            tokio::spawn(async move {
                let end = seat_loop(&shared, (slot, table, &token), &mut conn, seat, &stop, seed).await;
                (end, conn)
            })
        })
        .collect();
    let mut ends = Vec::with_capacity(4);
    let mut conns = Vec::with_capacity(4);
    for r in futures_util::future::join_all(seats).await {
        match r {
            Ok((end, conn)) => {
                ends.push(end);
                conns.push(conn);
            }
            Err(_) => ends.push(SeatEnd::Failed),
        }
    }
    let outcome = if ends.contains(&SeatEnd::Failed) {
        Outcome::Failed
    } else if ends.contains(&SeatEnd::Finished) {
        stats.matches.fetch_add(1, Ordering::Relaxed);
        Outcome::Finished
    } else {
        Outcome::Stopped
    };
    if !matches!(outcome, Outcome::Stopped) {
        // Close politely; the next table uses new connections.
        futures_util::future::join_all(conns.into_iter().map(Connection::close)).await;
    }
    outcome
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SeatEnd {
    Finished,
    Stopped,
    Failed,
}

/// Plays one seat until the match ends, the run stops, or something fails
/// (which stops the table's other seats too).
async fn seat_loop(
    shared: &Shared,
    (slot, table, token): (usize, Uuid, &str),
    conn: &mut Connection,
    seat: Seat,
    stop: &CancellationToken,
    seed: u64,
) -> SeatEnd {
    let stats = &shared.stats;
    let mut rng = SplitMix::new(seed);
    let mut in_flight: Option<Instant> = None;
    // The move in flight (request id, hand number, move), for the ack log.
    let mut sent: Vec<Sent> = Vec::new();
    let mut hand = 0u16;
    let mut retries = 0u32;
    // The last snapshot, raw (read only when needed: from a server that
    // sends whole views, most are for seats not on turn), and the view kept
    // up to date from change frames once one comes.
    let mut last_view: Option<Utf8Bytes> = None;
    let mut kept: Option<(u64, TableView)> = None;
    let mut sync_req: Option<u32> = None;
    loop {
        let text = tokio::select! {
            () = stop.cancelled() => return SeatEnd::Stopped,
            t = conn.recv_text() => t,
        };
        let text = match text {
            Ok(t) => t,
            Err(e) => {
                if stop.is_cancelled() {
                    return SeatEnd::Stopped;
                }
                if shared.cfg.reconnect
                    && let Some(new) = resume_seat(shared, (slot, seat, table, token), stop).await
                {
                    // A move in flight and not acknowledged is played again
                    // when the seat's turn is offered again.
                    *conn = new;
                    stats.resumed.fetch_add(1, Ordering::Relaxed);
                    (in_flight, last_view, kept, sync_req) = (None, None, None, None);
                    sent.clear();
                    continue;
                }
                let reason = match &e {
                    crate::Error::Closed { code: Some(c), .. } => format!("closed {c}"),
                    _ => "connection lost".to_owned(),
                };
                stats.failure(&stats.disconnects, &reason, || format!("{seat}: {e}"));
                stop.cancel();
                return SeatEnd::Failed;
            }
        };
        stats.frame_in(text.len());
        if peek::is_ack(&text) {
            if sync_req.is_some_and(|r| text.starts_with(&format!(r#"{{"type":"ack","req":{r}}}"#))) {
                sync_req = None;
            } else {
                stats.accepted.fetch_add(1, Ordering::Relaxed);
                note_ack(shared, table, seat, &mut sent, &text);
            }
            continue;
        }
        let view = if let Some(v) = peek::quick_view(&text) {
            // A snapshot: read by its keys (cheap).
            stats.update_in(text.len());
            last_view = Some(text.clone());
            kept = None;
            v
        } else if peek::is_change(&text) {
            stats.update_in(text.len());
            if sync_req.is_some() {
                continue;
            }
            if kept.is_none()
                && let Some(raw) = &last_view
                && let Ok(ServerMessage::View { seq, view }) = serde_json::from_str(raw)
            {
                kept = Some((seq, *view));
            }
            let applied = match (serde_json::from_str::<ServerMessage>(&text), kept.as_mut()) {
                (Ok(ServerMessage::Change { seq, change }), Some((last, v))) if seq == *last + 1 => {
                    *last = seq;
                    v.apply(&change).is_ok()
                }
                _ => false,
            };
            if !applied {
                stats.failure(&stats.errors, "seq gap", || format!("{seat}: {}", text.as_str()));
                (kept, last_view) = (None, None);
                let req = conn.next_req();
                sync_req = Some(req);
                if conn.send_frame(&ClientFrame { req: Some(req), msg: ClientMessage::Sync }).await.is_err() {
                    stop.cancel();
                    return SeatEnd::Failed;
                }
                continue;
            }
            match kept.as_ref() {
                Some((_, v)) => peek::QuickView::of(v),
                None => continue,
            }
        } else {
            match peek::peek(&text) {
                Ok(p) if p.kind == Kind::View => match p.view {
                    Some(v) => {
                        stats.update_in(text.len());
                        last_view = Some(text.clone());
                        kept = None;
                        peek::QuickView::from(v)
                    }
                    None => continue,
                },
                Ok(p) if p.kind == Kind::Ack => {
                    stats.accepted.fetch_add(1, Ordering::Relaxed);
                    note_ack(shared, table, seat, &mut sent, &text);
                    continue;
                }
                Ok(p) if p.kind == Kind::Error => {
                    sent.retain(|s| Some(s.req) != p.req);
                    let code = p.code.as_deref().unwrap_or("error").to_owned();
                    stats.failure(&stats.errors, &code, || format!("{seat}: {}", text.as_str()));
                    in_flight = None;
                    retries += 1;
                    if retries > 3 {
                        stop.cancel();
                        return SeatEnd::Failed;
                    }
                    // Decide again from the latest view, if the seat is on
                    // turn there (a frame may have come since the move went:
                    // a table that moved plays a move its old owner never
                    // answered, so the seat's next one finds the turn gone).
                    if let Some(game) = current_game(&kept, last_view.as_deref())
                        && game.turn == Some(seat)
                        && let Err(end) =
                            act(shared, conn, seat, game, &mut rng, (&mut in_flight, &mut sent), stop).await
                    {
                        return end;
                    }
                    continue;
                }
                Ok(_) => continue,
                Err(e) => {
                    stats.failure(&stats.errors, "unreadable", || format!("{seat}: {e}: {}", text.as_str()));
                    continue;
                }
            }
        };
        if let Some(sent) = in_flight.take() {
            stats.latency(sent.elapsed());
        }
        if seat == Seat::North {
            let now = view.hand_number.unwrap_or(0);
            if hand > 0 && now > hand {
                shared.hand_done(slot);
            }
            hand = now;
        }
        if view.finished {
            if seat == Seat::North {
                shared.hand_done(slot);
            }
            return SeatEnd::Finished;
        }
        if view.turn != Some(seat) {
            continue;
        }
        // A move still unanswered (a table that moved plays it on its new
        // owner): its answer comes first, unless it is long overdue.
        if sent.last().is_some_and(|s| s.at.elapsed() < ANSWER_WAIT) {
            continue;
        }
        retries = 0;
        let Some(game) = current_game(&kept, last_view.as_deref()) else {
            stats.failure(&stats.errors, "unreadable", || format!("{seat}: no game in the view"));
            continue;
        };
        if let Err(end) = act(shared, conn, seat, game, &mut rng, (&mut in_flight, &mut sent), stop).await {
            return end;
        }
    }
}

/// The game as the seat last saw it: from the kept view, or read from the
/// last snapshot.
fn current_game(kept: &Option<(u64, TableView)>, raw: Option<&str>) -> Option<SeatView> {
    match kept {
        Some((_, v)) => v.game.clone(),
        None => peek::game(raw?).ok(),
    }
}

/// Thinks, then sends the rule bot's move for a view where the seat is on
/// turn. `Err` ends the seat.
async fn act(
    shared: &Shared,
    conn: &mut Connection,
    seat: Seat,
    game: SeatView,
    rng: &mut SplitMix,
    (in_flight, sent): (&mut Option<Instant>, &mut Vec<Sent>),
    stop: &CancellationToken,
) -> Result<(), SeatEnd> {
    let stats = &shared.stats;
    let think = shared.think(rng);
    if !think.is_zero() {
        tokio::select! {
            () = stop.cancelled() => return Err(SeatEnd::Stopped),
            () = tokio::time::sleep(think) => {}
        }
    }
    let action = spades_bots::choose(Strength::Rule, &game, rng.next_u64());
    let req = conn.next_req();
    let Ok(text) = serde_json::to_string(&ClientFrame { req: Some(req), msg: action_message(action) }) else {
        return Ok(());
    };
    let len = text.len();
    *in_flight = Some(Instant::now());
    if sent.len() >= 8 {
        sent.remove(0);
    }
    sent.push(Sent { req, hand: game.hand_number, action, at: Instant::now() });
    stats.sent.fetch_add(1, Ordering::Relaxed);
    if let Err(e) = conn.send_text(text).await {
        if stop.is_cancelled() {
            return Err(SeatEnd::Stopped);
        }
        if shared.cfg.reconnect {
            // The next read fails too, and the seat resumes there.
            *in_flight = None;
            sent.clear();
            return Ok(());
        }
        stats.failure(&stats.disconnects, "send failed", || format!("{seat}: {e}"));
        stop.cancel();
        return Err(SeatEnd::Failed);
    }
    stats.frame_out(len);
    Ok(())
}

/// A move sent and not yet answered (a seat keeps the last few: a table
/// that moved may still answer an older one).
#[derive(Debug, Clone, Copy)]
struct Sent {
    req: u32,
    hand: u16,
    action: Action,
    at: Instant,
}

/// The request id of an `ack` frame: `{"type":"ack","req":N}`.
fn ack_req(text: &str) -> Option<u32> {
    let rest = text.strip_prefix(r#"{"type":"ack","req":"#)?;
    rest.split(['}', ',']).next()?.parse().ok()
}

/// The move an ack answers is answered (and written to the ack log, if
/// there is one).
fn note_ack(shared: &Shared, table: Uuid, seat: Seat, sent: &mut Vec<Sent>, text: &str) {
    let Some(req) = ack_req(text) else { return };
    if let Some(i) = sent.iter().position(|s| s.req == req) {
        let s = sent.remove(i);
        if let Some(log) = &shared.acks {
            log.write(table, seat, s.hand, s.action);
        }
    }
}

/// How long a seat waits for the answer to its last move before it acts
/// again on a view that offers it the turn.
const ANSWER_WAIT: Duration = Duration::from_secs(10);

/// A frame the size of a real move: `{"req":N,"type":"play","card":"QH","seq":4294967296}`.
pub fn action_sized_frame(req: u32) -> String {
    let card: Card = "QH".parse().unwrap_or_else(|_| unreachable!("a valid card"));
    let seq = Some(1 << 32);
    serde_json::to_string(&ClientFrame { req: Some(req), msg: ClientMessage::Play { card, seq } })
        .unwrap_or_default()
}

async fn echo_table(shared: &Shared, rng: &mut SplitMix, ready: &mut bool) -> Outcome {
    let stats = &shared.stats;
    let connect = |_| async move {
        let opts = shared.connect_options();
        Connection::connect_with(&shared.cfg.endpoint, &opts).await
    };
    let opened = tokio::select! {
        () = shared.stop.cancelled() => return Outcome::Stopped,
        c = futures_util::future::join_all((0..4).map(connect)) => c,
    };
    let mut conns = Vec::with_capacity(4);
    for c in opened {
        match c {
            Ok(c) => conns.push(c),
            Err(e) => {
                stats.failure(&stats.setup_failures, "connect", || format!("echo: {e}"));
                return Outcome::Failed;
            }
        }
    }
    mark_ready(shared, ready);
    let mut turn = 0usize;
    let mut req = 1u32;
    loop {
        let think = shared.think(rng);
        if !think.is_zero() {
            tokio::select! {
                () = shared.stop.cancelled() => break Outcome::Stopped,
                () = tokio::time::sleep(think) => {}
            }
        }
        let conn = &mut conns[turn];
        let text = action_sized_frame(req);
        req = req.wrapping_add(1);
        let len = text.len();
        let sent = Instant::now();
        stats.sent.fetch_add(1, Ordering::Relaxed);
        if conn.send_text(text).await.is_err() {
            stats.failure(&stats.disconnects, "send failed", || "echo: send failed".into());
            break Outcome::Failed;
        }
        stats.frame_out(len);
        let echoed = tokio::select! {
            () = shared.stop.cancelled() => break Outcome::Stopped,
            r = conn.recv_text() => r,
        };
        match echoed {
            Ok(t) => {
                stats.latency(sent.elapsed());
                stats.frame_in(t.len());
                stats.accepted.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => {
                stats.failure(&stats.disconnects, "connection lost", || format!("echo: {e}"));
                break Outcome::Failed;
            }
        }
        turn = (turn + 1) % 4;
    }
}

/// This process's soft limit on open files (`/proc/self/limits`).
pub fn open_files_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Resident memory of a process in KiB (`VmRSS` in `/proc/<pid>/status`).
pub fn rss_kib(pid: u32) -> Option<u64> {
    status_kib(&format!("/proc/{pid}/status"))
}

/// This process's resident memory in KiB.
pub fn own_rss_kib() -> Option<u64> {
    status_kib("/proc/self/status")
}

fn status_kib(path: &str) -> Option<u64> {
    let status = std::fs::read_to_string(path).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time (user + system) a process has used, from `/proc/<pid>/stat`.
pub fn cpu_time(pid: Option<u32>) -> Option<Duration> {
    let path = pid.map_or_else(|| "/proc/self/stat".to_owned(), |p| format!("/proc/{p}/stat"));
    let stat = std::fs::read_to_string(path).ok()?;
    // Fields after the command name (which may hold spaces), from field 3.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    // USER_HZ is 100 on every Linux this runs on.
    Some(Duration::from_millis((utime + stime) * 10))
}

/// CPU use of the server and of this process over a window.
#[derive(Debug, Clone, Copy)]
struct CpuMark {
    at: Instant,
    server: Option<Duration>,
    own: Option<Duration>,
}

impl CpuMark {
    fn now(server_pid: Option<u32>) -> CpuMark {
        CpuMark {
            at: Instant::now(),
            server: server_pid.and_then(|p| cpu_time(Some(p))),
            own: cpu_time(None),
        }
    }

    /// Percent of one core used by (server, this process) since `self`.
    fn since(&self, server_pid: Option<u32>) -> (Option<f64>, Option<f64>) {
        let later = CpuMark::now(server_pid);
        let wall = later.at.duration_since(self.at).as_secs_f64().max(1e-9);
        let pct = |a: Option<Duration>, b: Option<Duration>| match (a, b) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a).as_secs_f64() / wall * 100.0),
            _ => None,
        };
        (pct(self.server, later.server), pct(self.own, later.own))
    }
}

/// The figures of one load run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    /// Game or echo.
    pub mode: Mode,
    /// Tables held.
    pub tables: usize,
    /// WebSocket connections (four per table).
    pub connections: usize,
    /// Think time before each move, in ms.
    pub think_ms: u64,
    /// The measured window, in seconds.
    pub seconds: f64,
    /// Moves accepted (game) or frames echoed (echo) in the window.
    pub actions: u64,
    /// Of those, per second.
    pub actions_per_s: f64,
    /// Frames received per second.
    pub frames_in_per_s: f64,
    /// Frames sent per second.
    pub frames_out_per_s: f64,
    /// Frames both ways per second.
    pub frames_per_s: f64,
    /// Bytes received per second.
    pub bytes_in_per_s: f64,
    /// The mean size in bytes of a frame telling a connection of a change
    /// (a change frame, or a whole view from a server that sends only
    /// those).
    #[serde(default)]
    pub bytes_per_update: f64,
    /// The server's CPU time per accepted action, in microseconds.
    #[serde(default)]
    pub server_cpu_us_per_action: Option<f64>,
    /// From sending a move to the next view (echo: to the echo), in ms.
    pub latency_ms: Latency,
    /// Refusals and unreadable frames over the whole run (ramp included).
    pub errors: u64,
    /// Connections lost over the whole run.
    pub disconnects: u64,
    /// Connections lost and resumed on a new one (`reconnect` on).
    #[serde(default)]
    pub resumed: u64,
    /// Tables that could not be created, joined or started.
    pub setup_failures: u64,
    /// Failures by reason.
    pub failure_reasons: std::collections::BTreeMap<String, u64>,
    /// The first few failures.
    pub failure_samples: Vec<String>,
    /// Hands finished over the whole run.
    pub hands: u64,
    /// Matches finished over the whole run.
    pub matches: u64,
    /// Table slots in which no hand finished.
    pub tables_without_a_finished_hand: usize,
    /// The server's resident memory at the end, in KiB.
    pub server_rss_kib: Option<u64>,
    /// Its peak during the window, in KiB.
    pub server_rss_peak_kib: Option<u64>,
    /// The server's CPU use in the window, in percent of one core.
    pub server_cpu_pct: Option<f64>,
    /// The load generator's own CPU use, in percent of one core.
    pub client_cpu_pct: Option<f64>,
    /// The load generator's resident memory, in KiB.
    pub client_rss_kib: Option<u64>,
    /// The CPU use in the window of each group of `cpu_of`, in percent of
    /// one core.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub cpu_pct_of: std::collections::BTreeMap<String, f64>,
}

impl Report {
    /// No errors, disconnects or failed set-ups.
    pub fn clean(&self) -> bool {
        self.errors + self.disconnects + self.setup_failures == 0
    }

    /// The report as a human-readable table.
    pub fn to_table(&self) -> String {
        let mut out = String::new();
        let mut row = |k: &str, v: String| out.push_str(&format!("  {k:<24}{v}\n"));
        row("mode", format!("{:?}", self.mode).to_lowercase());
        row("tables", self.tables.to_string());
        row("connections", self.connections.to_string());
        row("think time", format!("{} ms", self.think_ms));
        row("measured", format!("{:.1} s", self.seconds));
        let what = if self.mode == Mode::Echo { "round trips/s" } else { "actions/s (accepted)" };
        row(what, format!("{:.0}", self.actions_per_s));
        row(
            "frames/s",
            format!(
                "{:.0} ({:.0} in, {:.0} out)",
                self.frames_per_s, self.frames_in_per_s, self.frames_out_per_s
            ),
        );
        if self.mode == Mode::Game {
            row("bytes per change", format!("{:.0} (mean, per connection)", self.bytes_per_update));
        }
        if let Some(us) = self.server_cpu_us_per_action {
            row("server CPU per action", format!("{us:.1} µs"));
        }
        let l = &self.latency_ms;
        row(
            "latency ms",
            format!("p50 {:.2}  p99 {:.2}  p99.9 {:.2}  max {:.2}", l.p50, l.p99, l.p999, l.max),
        );
        row("errors", self.errors.to_string());
        row("disconnects", self.disconnects.to_string());
        if self.resumed > 0 {
            row("resumed after a loss", self.resumed.to_string());
        }
        row("set-up failures", self.setup_failures.to_string());
        if self.mode == Mode::Game {
            row("hands / matches", format!("{} / {}", self.hands, self.matches));
        }
        if let Some(rss) = self.server_rss_kib {
            let peak = self.server_rss_peak_kib.unwrap_or(rss);
            row(
                "server RSS",
                format!("{:.1} MiB (peak {:.1} MiB)", rss as f64 / 1024.0, peak as f64 / 1024.0),
            );
        }
        if let Some(c) = self.server_cpu_pct {
            row("server CPU", format!("{c:.0}% of a core"));
        }
        if let Some(c) = self.client_cpu_pct {
            row("load generator CPU", format!("{c:.0}% of a core"));
        }
        for (name, c) in &self.cpu_pct_of {
            row(&format!("{name} CPU"), format!("{c:.0}% of a core"));
        }
        for (reason, n) in &self.failure_reasons {
            row("  failures", format!("{n} × {reason}"));
        }
        for s in &self.failure_samples {
            row("  e.g.", s.clone());
        }
        out
    }
}

/// Samples the server's resident memory every second until `until`;
/// returns the peak.
async fn sample_rss(pid: Option<u32>, until: Instant) -> Option<u64> {
    let mut peak = pid.and_then(rss_kib);
    while Instant::now() < until {
        let left = until.saturating_duration_since(Instant::now());
        tokio::time::sleep(left.min(Duration::from_secs(1))).await;
        if let Some(r) = pid.and_then(rss_kib) {
            peak = Some(peak.map_or(r, |p| p.max(r)));
        }
    }
    peak
}

/// Measures the running load for `hold`: the counters since the last
/// [`Stats::take`] count as the ramp (failures only), the window's as the
/// figures.
async fn measure(cfg: &LoadConfig, runner: &Runner, hold: Duration) -> Report {
    let before = runner.stats().take();
    let cpu = CpuMark::now(cfg.server_pid);
    let others = group_cpu_times(&cfg.cpu_of);
    let started = Instant::now();
    let peak = sample_rss(cfg.server_pid, started + hold).await;
    let window = runner.stats().take();
    let seconds = started.elapsed().as_secs_f64();
    let (server_cpu, client_cpu) = cpu.since(cfg.server_pid);
    let cpu_pct_of = cfg
        .cpu_of
        .iter()
        .zip(others)
        .map(|(name, before)| {
            // The processes that ran through the whole window.
            let used: Duration =
                before.into_iter().filter_map(|(pid, b)| Some(cpu_time(Some(pid))?.saturating_sub(b))).sum();
            (name.clone(), used.as_secs_f64() / seconds * 100.0)
        })
        .collect();
    let tables = runner.tables();
    let per_s = |n: u64| n as f64 / seconds.max(1e-9);
    let mut all = before;
    let latency_ms = window.latency_ms();
    let (actions, fin, fout, bin) = (window.accepted, window.frames_in, window.frames_out, window.bytes_in);
    let bytes_per_update = window.update_bytes as f64 / (window.updates.max(1)) as f64;
    all.merge(window);
    Report {
        mode: cfg.mode,
        tables,
        connections: tables * 4,
        think_ms: cfg.think.as_millis() as u64,
        seconds,
        actions,
        actions_per_s: per_s(actions),
        frames_in_per_s: per_s(fin),
        frames_out_per_s: per_s(fout),
        frames_per_s: per_s(fin + fout),
        bytes_in_per_s: per_s(bin),
        bytes_per_update,
        server_cpu_us_per_action: server_cpu
            .filter(|_| actions > 0)
            .map(|pct| pct / 100.0 * seconds * 1e6 / actions as f64),
        latency_ms,
        errors: all.errors,
        disconnects: all.disconnects,
        resumed: all.resumed,
        setup_failures: all.setup_failures,
        failure_reasons: all.reasons,
        failure_samples: all.samples,
        hands: all.hands,
        matches: all.matches,
        tables_without_a_finished_hand: runner.slots_without_a_hand(),
        server_rss_kib: cfg.server_pid.and_then(rss_kib),
        server_rss_peak_kib: peak,
        server_cpu_pct: server_cpu,
        client_cpu_pct: client_cpu,
        client_rss_kib: own_rss_kib(),
        cpu_pct_of,
    }
}

/// For each name, the processes of that name and the CPU time each has
/// used so far.
fn group_cpu_times(names: &[String]) -> Vec<Vec<(u32, Duration)>> {
    let mut by_name = vec![Vec::new(); names.len()];
    let Ok(dir) = std::fs::read_dir("/proc") else { return by_name };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let Ok(comm) = std::fs::read_to_string(entry.path().join("comm")) else { continue };
        if let Some(i) = names.iter().position(|n| n == comm.trim_end())
            && let Some(t) = cpu_time(Some(pid))
        {
            by_name[i].push((pid, t));
        }
    }
    by_name
}

/// Runs `cfg.tables` tables: ramps up, warms up, measures for
/// `cfg.duration`, stops.
///
/// # Errors
/// When the tables could not be set up within a minute.
pub async fn run(cfg: &LoadConfig) -> anyhow::Result<Report> {
    let mut runner = Runner::new(cfg.clone());
    runner.grow_to(cfg.tables).await;
    if !runner.wait_ready(Duration::from_secs(60)).await {
        let snap = runner.stats().take();
        runner.stop().await;
        bail!(
            "only some tables could be set up; failures: {:?}; e.g. {:?}",
            snap.reasons,
            snap.samples.first()
        );
    }
    tokio::time::sleep(cfg.warmup).await;
    let rep = measure(cfg, &runner, cfg.duration).await;
    runner.stop().await;
    Ok(rep)
}

/// The capacity search's settings.
#[derive(Debug, Clone)]
pub struct CapacityConfig {
    /// Table counts to try, in increasing order.
    pub steps: Vec<usize>,
    /// Time to hold each step while measuring.
    pub hold: Duration,
    /// Time between reaching a step and measuring it.
    pub settle: Duration,
    /// A step holds when its p99 latency is at most this (ms) and nothing
    /// failed.
    pub p99_limit_ms: f64,
}

/// One step of the capacity search.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StepReport {
    /// The step's figures over its hold.
    #[serde(flatten)]
    pub report: Report,
    /// p99 within the limit and no failures.
    pub held: bool,
}

/// The capacity search's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapacityReport {
    /// Think time, ms.
    pub think_ms: u64,
    /// Hold per step, s.
    pub hold_s: f64,
    /// The p99 limit, ms.
    pub p99_limit_ms: f64,
    /// The largest table count held (0 if none).
    pub largest_held: usize,
    /// Every step held (the search ended at its last step, not at a limit).
    #[serde(default)]
    pub all_held: bool,
    /// This process's limit on open files (each connection is one, in the
    /// load generator and in the server alike).
    #[serde(default)]
    pub open_files_limit: Option<u64>,
    /// Every step tried.
    pub steps: Vec<StepReport>,
}

impl CapacityReport {
    /// The steps as a human-readable table.
    pub fn to_table(&self) -> String {
        let mut out = format!(
            "  {:>7} {:>7} {:>9} {:>8} {:>8} {:>8} {:>8} {:>7} {:>9} {:>6}\n",
            "tables",
            "conns",
            "actions/s",
            "p50 ms",
            "p99 ms",
            "p99.9",
            "max ms",
            "errors",
            "RSS MiB",
            "held"
        );
        for s in &self.steps {
            let r = &s.report;
            let l = &r.latency_ms;
            out.push_str(&format!(
                "  {:>7} {:>7} {:>9.0} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>7} {:>9.1} {:>6}\n",
                r.tables,
                r.connections,
                r.actions_per_s,
                l.p50,
                l.p99,
                l.p999,
                l.max,
                r.errors + r.disconnects + r.setup_failures,
                r.server_rss_kib.unwrap_or(0) as f64 / 1024.0,
                if s.held { "yes" } else { "no" }
            ));
        }
        out.push_str(&format!(
            "  largest held: {} tables ({} connections) for {:.0} s at p99 <= {} ms\n",
            self.largest_held,
            self.largest_held * 4,
            self.hold_s,
            self.p99_limit_ms
        ));
        out
    }
}

/// Raises the table count step by step, holding each step for
/// `cap.hold`, until a step's p99 passes the limit or anything fails.
/// `progress` sees each step as it finishes.
///
/// # Errors
/// Never, today; the signature leaves room for set-up errors.
pub async fn capacity(
    cfg: &LoadConfig,
    cap: &CapacityConfig,
    mut progress: impl FnMut(&StepReport),
) -> anyhow::Result<CapacityReport> {
    let mut runner = Runner::new(cfg.clone());
    let mut steps = Vec::new();
    let mut largest = 0;
    for &tables in &cap.steps {
        let _ = runner.stats().take();
        runner.grow_to(tables).await;
        let ready = runner.wait_ready(Duration::from_secs(120)).await;
        tokio::time::sleep(cap.settle).await;
        let rep = measure(cfg, &runner, cap.hold).await;
        let held =
            ready && rep.clean() && rep.latency_ms.p99 <= cap.p99_limit_ms && rep.latency_ms.samples > 0;
        let step = StepReport { report: rep, held };
        progress(&step);
        steps.push(step);
        if !held {
            break;
        }
        largest = tables;
    }
    runner.stop().await;
    Ok(CapacityReport {
        think_ms: cfg.think.as_millis() as u64,
        hold_s: cap.hold.as_secs_f64(),
        p99_limit_ms: cap.p99_limit_ms,
        largest_held: largest,
        all_held: steps.iter().all(|s| s.held),
        open_files_limit: open_files_limit(),
        steps,
    })
}

/// The memory measurement's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryReport {
    /// The server's resident memory before, KiB.
    pub baseline_kib: u64,
    /// Idle tables created (lobby, nobody connected).
    pub tables: usize,
    /// Resident memory with the tables, KiB.
    pub with_tables_kib: u64,
    /// (with tables − baseline) / tables, bytes.
    pub bytes_per_table: f64,
    /// Idle connections opened (spectators spread over the tables).
    pub connections: usize,
    /// Resident memory with the connections too, KiB.
    pub with_connections_kib: u64,
    /// (with connections − with tables) / connections, bytes.
    pub bytes_per_connection: f64,
}

impl MemoryReport {
    /// The figures as a human-readable table.
    pub fn to_table(&self) -> String {
        let mib = |k: u64| k as f64 / 1024.0;
        format!(
            "  {:<28}{:.1} MiB\n  {:<28}{:.1} MiB\n  {:<28}{:.1} KiB\n  {:<28}{:.1} MiB\n  {:<28}{:.1} KiB\n",
            "baseline RSS",
            mib(self.baseline_kib),
            format!("with {} idle tables", self.tables),
            mib(self.with_tables_kib),
            "per table",
            self.bytes_per_table / 1024.0,
            format!("with {} idle connections", self.connections),
            mib(self.with_connections_kib),
            "per connection",
            self.bytes_per_connection / 1024.0,
        )
    }
}

/// Measures the server's memory per idle table and per idle connection:
/// resident memory before, after creating `tables` lobby tables, and after
/// opening `connections` spectator connections spread over them.
///
/// # Errors
/// Without a readable server pid, or when tables or connections fail.
pub async fn memory(
    endpoint: &Endpoint,
    server_pid: u32,
    tables: usize,
    connections: usize,
    sources: &[IpAddr],
) -> anyhow::Result<MemoryReport> {
    let settle = Duration::from_secs(3);
    let rss = || rss_kib(server_pid).context("reading the server's VmRSS (is --server-pid right?)");
    tokio::time::sleep(settle).await;
    let baseline = rss()?;
    let client = Client::with_endpoint(endpoint.clone());
    let created: Vec<_> = futures_util::stream::iter(0..tables)
        .map(|i| {
            let client = client.clone();
            async move {
                client
                    .create_table(&CreateTable { name: Some(format!("idle {i}")), ..Default::default() })
                    .await
            }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let ids = created.into_iter().collect::<Result<Vec<_>, _>>().context("creating tables")?;
    let ids: Vec<Uuid> = ids.into_iter().map(|c| c.table).collect();
    tokio::time::sleep(settle).await;
    let with_tables = rss()?;
    let next = AtomicUsize::new(0);
    let opened: Vec<_> = futures_util::stream::iter(0..connections)
        .map(|i| {
            let table = ids[i % ids.len().max(1)];
            let source =
                (!sources.is_empty()).then(|| sources[next.fetch_add(1, Ordering::Relaxed) % sources.len()]);
            let opts = ConnectOptions { source, read_buffer: 4096, ..ConnectOptions::default() };
            async move {
                let mut c = Connection::connect_with(endpoint, &opts).await?;
                c.watch(table).await?;
                // Keep reading (and answering pings) while the measurement
                // runs.
                Ok::<_, crate::Error>(tokio::spawn(async move { while c.recv_text().await.is_ok() {} }))
            }
        })
        .buffer_unordered(64)
        .collect()
        .await;
    let readers = opened.into_iter().collect::<Result<Vec<_>, _>>().context("opening connections")?;
    tokio::time::sleep(settle).await;
    let with_conns = rss()?;
    for r in &readers {
        r.abort();
    }
    let per = |a: u64, b: u64, n: usize| (b as f64 - a as f64) * 1024.0 / n.max(1) as f64;
    Ok(MemoryReport {
        baseline_kib: baseline,
        tables,
        with_tables_kib: with_tables,
        bytes_per_table: per(baseline, with_tables, tables),
        connections,
        with_connections_kib: with_conns,
        bytes_per_connection: per(with_tables, with_conns, connections),
    })
}

/// Seats rule bots at an existing table: `seats` sessions join empty seats
/// and play (each waiting `think` before a move) until the match ends.
/// Sessions reconnect and resume on dropped connections. Returns the number
/// of moves made. With the owner token, the match is started once the
/// bots are seated.
///
/// # Errors
/// When a seat cannot be taken or the match cannot be started.
pub async fn bots(
    client: &Client,
    table: Uuid,
    seats: usize,
    think: Duration,
    owner_token: Option<&str>,
) -> anyhow::Result<u64> {
    let mut sessions = Vec::new();
    for i in 0..seats {
        let attach = Attach::Join { table, name: format!("Rule bot {}", i + 1), seat: None };
        sessions.push(client.session(attach, SessionOptions::default()).await.context("taking a seat")?);
    }
    if let Some(owner_token) = owner_token {
        let mut conn = client.connect().await?;
        conn.watch(table).await?;
        conn.start(owner_token).await.context("starting the match")?;
    }
    let mut tasks = Vec::new();
    for mut session in sessions {
        tasks.push(tokio::spawn(async move {
            let mut moves = 0u64;
            let mut acted = 0u64;
            while let Some(event) = session.next_event().await {
                match event {
                    Event::View { seq, view } => {
                        if view.phase == TablePhase::Finished {
                            break;
                        }
                        let Some(game) = view.game.as_ref() else { continue };
                        if view.you.is_none() || game.turn != view.you || seq <= acted {
                            continue;
                        }
                        acted = seq;
                        tokio::time::sleep(think).await;
                        let action: Action = spades_bots::choose(Strength::Rule, game, seq);
                        if session.send(Command::from(action)).is_ok() {
                            moves += 1;
                        }
                    }
                    Event::Ended { .. } => break,
                    _ => {}
                }
            }
            session.close().await;
            moves
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap_or(0);
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ack_is_matched_to_its_move_by_its_request_id() {
        let ack = serde_json::to_string(&ServerMessage::Ack { req: Some(417) }).unwrap();
        assert_eq!(ack_req(&ack), Some(417));
        assert_eq!(ack_req(r#"{"type":"ack","req":9,"extra":1}"#), Some(9));
        assert_eq!(ack_req(r#"{"type":"ack"}"#), None);
        assert_eq!(ack_req(r#"{"type":"error","req":3,"code":"not_your_turn"}"#), None);
    }
}
