//! `spades-soak`: a bounded churn run against a real `spades-server`.
//!
//! ```sh
//! spades-soak --server-bin target/release/spades-server --secs 180
//! ```
//!
//! The driver starts the server itself (SQLite event log in a fresh data
//! directory, fast test clocks, rule bots), then for `--secs` seconds:
//! creates tables and plays their matches to the end (some all bots, some
//! with one to four library clients that play legal moves), drops and
//! resumes client connections, attaches spectators that come and go, runs
//! short REST floods, and kills and restarts the server on the same port and
//! data directory (SIGKILL, and SIGTERM every other time). After `--secs` it
//! stops creating tables and lets the running matches finish (bounded by
//! `--wind-down`).
//!
//! Invariants (any failure makes the exit status non-zero):
//! - no acknowledged action lost: every bid and card the server acknowledged
//!   is in the match record (`GET /api/v1/matches/{id}`) at its place;
//! - no stall: no started table's status stays unchanged for longer than the
//!   clock of the seat on turn (or the bot delay) plus a slack, counted from
//!   the later of its last change and the server's last start;
//! - `seq` never goes back on a seat's connection across reconnects and
//!   restarts (docs/protocol.md);
//! - no spectator view holds a hand;
//! - open files of the server stay within its warm-up count plus the live
//!   connections plus a margin, and come back down once the connections are
//!   closed; RSS of the last server process stays within 1.5 x its warm-up
//!   figure plus 32 MiB.
//!
//! Figures go to stdout as a table and as JSON to `--json-out` (default
//! `target/soak/soak.json`). All traffic stays on 127.0.0.1.

use std::collections::{BTreeMap, HashMap};
use std::fs::OpenOptions;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use serde::Serialize;
use spades_client::protocol::{
    ActionSource, ClientMessage, CreateTable, MatchRecord, SeatStatus, TableOptions, TablePhase, TableStatus,
    Tempo,
};
use spades_client::rng::SplitMix;
use spades_client::{Client, Connection, Endpoint, Error, ServerMessage, TableView, action_message};
use spades_engine::{Action, Legal, MatchEnd, Rules, Seat};
use uuid::Uuid;

/// A bounded churn run against a real spades-server that this program
/// starts, kills and restarts.
#[derive(Debug, Clone, Parser)]
#[command(name = "spades-soak", version)]
struct Cli {
    /// The server binary.
    #[arg(long, default_value = "target/release/spades-server")]
    server_bin: PathBuf,
    /// Port on 127.0.0.1 the server listens on (the same after every restart).
    #[arg(long, default_value_t = 18_500)]
    port: u16,
    /// Seconds of churn (new tables are created until then).
    #[arg(long, env = "SOAK_SECS", default_value_t = 180)]
    secs: u64,
    /// Seconds after the churn for running matches to finish.
    #[arg(long, default_value_t = 60)]
    wind_down: u64,
    /// Tables in play at once.
    #[arg(long, default_value_t = 10)]
    tables: usize,
    /// Server kills and restarts over the run (0: as many as one per 30 s,
    /// at least 2). Every second one is a SIGTERM, the others SIGKILL.
    #[arg(long, default_value_t = 0)]
    kills: usize,
    /// Requests kept in flight during a REST flood.
    #[arg(long, default_value_t = 2000)]
    flood_inflight: usize,
    /// Seconds each REST flood lasts.
    #[arg(long, default_value_t = 3)]
    flood_secs: u64,
    /// Every turn clock of the server, in milliseconds.
    #[arg(long, default_value_t = 1500)]
    tempo_ms: u64,
    /// The server's bot delay, in milliseconds.
    #[arg(long, default_value_t = 30)]
    bot_delay_ms: u64,
    /// Seconds a table may be idle beyond its clock (or bot delay).
    #[arg(long, default_value_t = 5)]
    slack_secs: u64,
    /// Chance per move that a client drops its connection and resumes.
    #[arg(long, default_value_t = 0.01)]
    drop_chance: f64,
    /// Where the report, the server's log and its data directory go.
    #[arg(long, default_value = "target/soak")]
    out: PathBuf,
    /// The JSON report (default OUT/soak.json).
    #[arg(long)]
    json_out: Option<PathBuf>,
    /// Seed of the driver's choices.
    #[arg(long)]
    seed: Option<u64>,
    /// Development aid: check the acknowledged actions against a record
    /// with one card changed, to see the "actions lost" check fail.
    #[arg(long, hide = true)]
    corrupt_record: bool,
}

// ---------------------------------------------------------------------------
// Shared state

#[derive(Debug, Default)]
struct Counters {
    tables_created: AtomicU64,
    tables_started: AtomicU64,
    tables_finished: AtomicU64,
    setups_abandoned: AtomicU64,
    matches_verified: AtomicU64,
    actions_acked: AtomicU64,
    actions_checked: AtomicU64,
    actions_unchecked: AtomicU64,
    actions_lost: AtomicU64,
    refusals: AtomicU64,
    drops: AtomicU64,
    connections_lost: AtomicU64,
    reconnects: AtomicU64,
    resumes: AtomicU64,
    take_overs: AtomicU64,
    seq_regressions: AtomicU64,
    spectators: AtomicU64,
    spectator_views: AtomicU64,
    spectator_leaks: AtomicU64,
    flood_requests: AtomicU64,
}

/// An action the server acknowledged, and where it must be in the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Acked {
    hand: u16,
    seat: Seat,
    action: Action,
    /// For a card: its position among the hand's plays (0..52).
    index: usize,
}

#[derive(Debug)]
struct Track {
    clients: usize,
    started: bool,
    finished: bool,
    acked: Vec<Acked>,
    sig: String,
    last_change: Instant,
    stalled: bool,
    seq_reported: bool,
    /// The last status seen, for the report.
    seen: String,
}

#[derive(Debug, Clone, Serialize)]
struct Stall {
    table: Uuid,
    at_s: f64,
    idle_ms: u64,
    allowed_ms: u64,
    phase: TablePhase,
    turn: Option<Seat>,
    hand: u16,
}

#[derive(Debug, Clone, Serialize)]
struct Sample {
    at_s: f64,
    label: String,
    pid: u32,
    rss_kib: u64,
    open_files: usize,
    live_connections: usize,
}

#[derive(Debug, Clone, Serialize)]
struct Kill {
    at_s: f64,
    signal: &'static str,
    /// From the signal to the old process's exit.
    exit_ms: u64,
    /// From the signal to the new process answering /healthz.
    downtime_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
struct Flood {
    at_s: f64,
    secs: f64,
    inflight: usize,
    requests: u64,
    statuses: BTreeMap<String, u64>,
}

#[derive(Debug)]
struct Shared {
    cli: Cli,
    endpoint: Endpoint,
    rest: Client,
    t0: Instant,
    /// No new tables after this.
    stop_new: Instant,
    /// Everything stops by this.
    hard_end: Instant,
    n: Counters,
    tables: Mutex<HashMap<Uuid, Track>>,
    server_up: AtomicBool,
    /// When the server last answered /healthz after a (re)start.
    up_since: Mutex<Instant>,
    live_ws: AtomicUsize,
    failures: Mutex<Vec<String>>,
    stalls: Mutex<Vec<Stall>>,
    max_idle_ms: AtomicU64,
    next_seed: AtomicU64,
}

impl Shared {
    fn at_s(&self) -> f64 {
        self.t0.elapsed().as_secs_f64()
    }

    fn fail(&self, what: String) {
        eprintln!("[{:7.1}s] FAIL {what}", self.at_s());
        if let Ok(mut f) = self.failures.lock()
            && f.len() < 200
        {
            f.push(what);
        }
    }

    fn rng(&self) -> SplitMix {
        SplitMix::new(self.next_seed.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed))
    }

    fn with_table<R>(&self, id: Uuid, f: impl FnOnce(&mut Track) -> R) -> Option<R> {
        self.tables.lock().ok()?.get_mut(&id).map(f)
    }

    fn live_tables(&self) -> Vec<Uuid> {
        self.tables
            .lock()
            .map(|t| t.iter().filter(|(_, x)| x.started && !x.finished).map(|(id, _)| *id).collect())
            .unwrap_or_default()
    }

    fn up(&self) -> bool {
        self.server_up.load(Ordering::Acquire)
    }
}

/// Counts a WebSocket connection as live while it exists.
#[derive(Debug)]
struct Live<'a>(&'a AtomicUsize);

impl<'a> Live<'a> {
    fn new(n: &'a AtomicUsize) -> Live<'a> {
        n.fetch_add(1, Ordering::Relaxed);
        Live(n)
    }
}

impl Drop for Live<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------------------
// The server process

#[derive(Debug)]
struct Server {
    child: Child,
    data_dir: PathBuf,
    log: PathBuf,
}

impl Server {
    fn spawn(cli: &Cli, data_dir: &PathBuf, log: &PathBuf) -> anyhow::Result<Child> {
        let out = OpenOptions::new().create(true).append(true).open(log).context("opening the server log")?;
        let err = out.try_clone()?;
        let mut cmd = Command::new(&cli.server_bin);
        // The server refuses SPADES_* variables that are not settings.
        for (k, _) in std::env::vars() {
            if k.starts_with("SPADES_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("SPADES_SERVER__BIND", format!("127.0.0.1:{}", cli.port))
            .env("SPADES_SERVER__SHUTDOWN_GRACE_SECS", "3")
            .env("SPADES_STORAGE__IN_MEMORY", "false")
            .env("SPADES_STORAGE__DATA_DIR", data_dir)
            .env("SPADES_TABLES__BOT", "rule")
            .env("SPADES_TABLES__BOT_DELAY_MS", cli.bot_delay_ms.to_string())
            .env("SPADES_TABLES__TEST_TEMPO_MS", cli.tempo_ms.to_string())
            .env("SPADES_LIMITS__MAX_TABLES", "1000000")
            .env("SPADES_LIMITS__MAX_CONNECTIONS", "1000000")
            .env("SPADES_LIMITS__MESSAGES_PER_10S", "1000000")
            .env("SPADES_LIMITS__TABLES_PER_MINUTE_PER_IP", "0")
            .env("SPADES_LIMITS__CONNECTIONS_PER_MINUTE_PER_IP", "0")
            // Every client of the soak is on 127.0.0.1: no per-address caps.
            // The floods still meet the REST concurrency limit.
            .env("SPADES_LIMITS__CONNECTIONS_PER_IP", "0")
            .env("SPADES_LIMITS__REQUESTS_PER_MINUTE_PER_IP", "0")
            .env("SPADES_LOG__FILTER", "warn")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        cmd.spawn().with_context(|| format!("starting {}", cli.server_bin.display()))
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` and waits for the process to end (SIGKILL after 15 s).
    async fn stop(&mut self, signal: &str) -> anyhow::Result<()> {
        if signal == "SIGKILL" {
            let _ = self.child.kill();
        } else {
            let status = Command::new("kill")
                .arg(format!("-{}", signal.trim_start_matches("SIG")))
                .arg(self.pid().to_string())
                .status()?;
            if !status.success() {
                bail!("kill -{signal} {} failed", self.pid());
            }
        }
        let until = Instant::now() + Duration::from_secs(15);
        loop {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            if Instant::now() > until {
                let _ = self.child.kill();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

async fn wait_healthy(sh: &Shared, child: &mut Child) -> anyhow::Result<()> {
    let url = format!("{}/healthz", sh.endpoint.http);
    let http = reqwest::Client::builder().timeout(Duration::from_secs(2)).build()?;
    let until = Instant::now() + Duration::from_secs(60);
    while Instant::now() < until {
        if let Some(status) = child.try_wait()? {
            bail!("the server exited during start-up ({status})");
        }
        if http.get(&url).send().await.is_ok_and(|r| r.status().is_success()) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("the server did not answer {url} within 60 s")
}

fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count()).unwrap_or(0)
}

fn sample(sh: &Shared, pid: u32, label: &str) -> Sample {
    Sample {
        at_s: sh.at_s(),
        label: label.to_owned(),
        pid,
        rss_kib: spades_client::load::rss_kib(pid).unwrap_or(0),
        open_files: open_files(pid),
        live_connections: sh.live_ws.load(Ordering::Relaxed),
    }
}

// ---------------------------------------------------------------------------
// Players

/// Where an action taken on `view` goes in the match record.
fn place_of(view: &TableView, seat: Seat, action: Action) -> Option<Acked> {
    let g = view.game.as_ref()?;
    let completed: usize = g.tricks_won.0.iter().map(|&t| usize::from(t)).sum();
    Some(Acked { hand: g.hand_number, seat, action, index: 4 * completed + g.trick.cards().len() })
}

/// A legal move for the viewer, chosen at random; `None` when not on turn.
fn choose(view: &TableView, rng: &mut SplitMix) -> Option<Action> {
    let g = view.game.as_ref()?;
    match g.legal {
        Legal::Bid { min, max } => {
            // Modest bids, like people make, and now and then a nil.
            let b = if min == 0 && rng.next_u64().is_multiple_of(20) {
                0
            } else {
                min.max(1) + (rng.next_u64() % 4) as u8
            };
            Some(Action::Bid(b.clamp(min, max)))
        }
        Legal::Play { cards } if !cards.is_empty() => {
            cards.nth((rng.next_u64() % u64::from(cards.len())) as u32).map(Action::Play)
        }
        _ => None,
    }
}

enum Outcome {
    /// The match is over (or the table is gone).
    Done,
    /// The client dropped the connection on purpose.
    Dropped,
    /// The connection failed.
    Lost,
}

/// Plays one seat on one connection until the match ends or it drops.
async fn drive_seat(
    sh: &Shared,
    table: Uuid,
    seat: Seat,
    conn: &mut Connection,
    last_seq: &mut u64,
    rng: &mut SplitMix,
) -> Outcome {
    let mut latest: Option<TableView> = None;
    // The request in flight: its id and the action.
    let mut pending: Option<(u32, Action)> = None;
    let mut took_over_at: Option<u64> = None;
    loop {
        if Instant::now() > sh.hard_end {
            return Outcome::Done;
        }
        // Act only on a view newer than the last reply: a view that came
        // before the ack of a move still shows the seat on turn.
        let mut fresh = false;
        let msg = match tokio::time::timeout(Duration::from_secs(20), conn.recv()).await {
            Ok(Ok(m)) => m,
            Ok(Err(Error::Closed { code: Some(4003), .. })) => return Outcome::Done,
            Ok(Err(_)) | Err(_) => return Outcome::Lost,
        };
        match msg {
            ServerMessage::View { seq, view } => {
                if seq < *last_seq {
                    // Counted every time; in the failures once per table.
                    sh.n.seq_regressions.fetch_add(1, Ordering::Relaxed);
                    if sh
                        .with_table(table, |t| !std::mem::replace(&mut t.seq_reported, true))
                        .unwrap_or(false)
                    {
                        sh.fail(format!(
                            "table {table} {seat:?}: view seq went back from {} to {seq}",
                            *last_seq
                        ));
                    }
                }
                *last_seq = seq;
                let finished = view.phase == TablePhase::Finished;
                latest = Some(*view);
                fresh = true;
                if finished {
                    return Outcome::Done;
                }
            }
            ServerMessage::Ack { req } if pending.is_some_and(|(r, _)| Some(r) == req) => {
                let (_, action) = pending.take().unwrap_or((0, Action::Bid(0)));
                sh.n.actions_acked.fetch_add(1, Ordering::Relaxed);
                // The server applied the action to the table as the last
                // view before the ack showed it.
                if let Some(place) = latest.as_ref().and_then(|v| place_of(v, seat, action)) {
                    sh.with_table(table, |t| t.acked.push(place));
                }
                if rng.unit() < sh.cli.drop_chance {
                    return Outcome::Dropped;
                }
            }
            ServerMessage::Error { req, .. } if pending.is_some_and(|(r, _)| Some(r) == req) => {
                pending = None;
                sh.n.refusals.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
        if pending.is_some() || !fresh {
            continue;
        }
        let Some(view) = latest.as_ref() else { continue };
        let me = &view.seats[Seat::ALL.iter().position(|&s| s == seat).unwrap_or(0)];
        if me.status == SeatStatus::Autopilot {
            // Back from a drop that cost three turns: play the seat again.
            if took_over_at != Some(*last_seq) {
                took_over_at = Some(*last_seq);
                if conn.send(ClientMessage::TakeOver).await.is_err() {
                    return Outcome::Lost;
                }
                sh.n.take_overs.fetch_add(1, Ordering::Relaxed);
            }
            continue;
        }
        if let Some(action) = choose(view, rng) {
            match conn.send(action_message(action)).await {
                Ok(req) => pending = Some((req, action)),
                Err(_) => return Outcome::Lost,
            }
        }
    }
}

/// Connects and resumes the seat, with backoff, until the hard end.
async fn reconnect(sh: &Shared, table: Uuid, token: &str) -> Option<Connection> {
    let mut wait = Duration::from_millis(100);
    while Instant::now() < sh.hard_end {
        if let Ok(mut conn) = sh.rest.connect().await {
            match conn.resume(table, token).await {
                Ok(_) => {
                    sh.n.resumes.fetch_add(1, Ordering::Relaxed);
                    return Some(conn);
                }
                Err(e) if e.is_permanent() => return None,
                Err(_) => {}
            }
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_secs(2));
    }
    None
}

/// One seat from its join to the end of the match, across drops and restarts.
async fn play_seat(sh: Arc<Shared>, table: Uuid, seat: Seat, token: String, conn: Connection) {
    let mut rng = sh.rng();
    let mut last_seq = 0;
    let mut conn = Some(conn);
    loop {
        let Some(mut c) = conn.take() else { break };
        let live = Live::new(&sh.live_ws);
        let outcome = drive_seat(&sh, table, seat, &mut c, &mut last_seq, &mut rng).await;
        match outcome {
            Outcome::Done => {
                let _ = c.close().await;
                drop(live);
                break;
            }
            Outcome::Dropped => {
                sh.n.drops.fetch_add(1, Ordering::Relaxed);
                // Half the time a clean close (short grace), else just gone.
                if rng.unit() < 0.5 {
                    let _ = c.close().await;
                } else {
                    drop(c);
                }
                drop(live);
                tokio::time::sleep(Duration::from_millis(50 + rng.next_u64() % 1500)).await;
            }
            Outcome::Lost => {
                sh.n.connections_lost.fetch_add(1, Ordering::Relaxed);
                drop(c);
                drop(live);
            }
        }
        conn = reconnect(&sh, table, &token).await;
        if conn.is_some() {
            sh.n.reconnects.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Creates a table with `clients` library clients (the rest bots), starts
/// it and plays it to the end.
async fn run_table(sh: Arc<Shared>, clients: usize, rng: &mut SplitMix) -> anyhow::Result<()> {
    // Short matches, so that those still running when the churn ends finish
    // within the wind-down.
    let ends = [MatchEnd::Hands(5), MatchEnd::Hands(5), MatchEnd::Target(200)];
    let rules = Rules { match_end: ends[(rng.next_u64() % 3) as usize], ..Rules::default() };
    let tempo = [Tempo::Fast, Tempo::Normal][(rng.next_u64() % 2) as usize];
    let req = CreateTable {
        name: Some(format!("soak {clients}p")),
        options: TableOptions { rules, tempo, ..TableOptions::default() },
    };
    let created = sh.rest.create_table(&req).await?;
    let id = created.table;
    sh.n.tables_created.fetch_add(1, Ordering::Relaxed);
    sh.tables.lock().map_err(|_| anyhow::anyhow!("poisoned"))?.insert(
        id,
        Track {
            clients,
            started: false,
            finished: false,
            acked: Vec::new(),
            sig: String::new(),
            last_change: Instant::now(),
            stalled: false,
            seq_reported: false,
            seen: String::new(),
        },
    );
    let setup = async {
        let mut seats = Vec::new();
        for &seat in Seat::ALL.iter().take(clients) {
            let mut conn = sh.rest.connect().await?;
            let joined = conn.join(id, &format!("p-{seat:?}"), Some(seat)).await?;
            seats.push((seat, joined.token, conn));
        }
        let mut owner = sh.rest.connect().await?;
        owner.watch(id).await?;
        owner.add_bots(&created.owner_token).await?;
        owner.start(&created.owner_token).await?;
        let _ = owner.close().await;
        anyhow::Ok(seats)
    };
    let seats = match setup.await {
        Ok(s) => s,
        Err(e) => {
            // A kill during set-up: the table stays in its lobby.
            sh.n.setups_abandoned.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut t) = sh.tables.lock() {
                t.remove(&id);
            }
            return Err(e);
        }
    };
    sh.n.tables_started.fetch_add(1, Ordering::Relaxed);
    sh.with_table(id, |t| {
        t.started = true;
        t.last_change = Instant::now();
    });
    let players: Vec<_> = seats
        .into_iter()
        .map(|(seat, token, conn)| tokio::spawn(play_seat(sh.clone(), id, seat, token, conn)))
        .collect();
    for p in players {
        let _ = p.await;
    }
    // All bots, or the clients are done: wait for the poller to see the end.
    while Instant::now() < sh.hard_end && sh.with_table(id, |t| !t.finished).unwrap_or(false) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

/// One table slot: tables one after another until the churn ends.
async fn slot(sh: Arc<Shared>, index: usize) {
    let mut rng = sh.rng();
    let mut round = index;
    while Instant::now() < sh.stop_new {
        if !sh.up() {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        // 0 to 4 library clients, in turn across slots and rounds.
        let clients = round % 5;
        round += 1;
        if let Err(e) = run_table(sh.clone(), clients, &mut rng).await {
            tracing_like(&sh, &format!("slot {index}: {e:#}"));
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
}

fn tracing_like(sh: &Shared, what: &str) {
    if std::env::var_os("SOAK_VERBOSE").is_some() {
        eprintln!("[{:7.1}s] {what}", sh.at_s());
    }
}

// ---------------------------------------------------------------------------
// Spectators

async fn spectators(sh: Arc<Shared>) {
    let mut rng = sh.rng();
    let active = Arc::new(AtomicUsize::new(0));
    while Instant::now() < sh.stop_new {
        tokio::time::sleep(Duration::from_millis(500 + rng.next_u64() % 1500)).await;
        let live = sh.live_tables();
        if !sh.up() || live.is_empty() || active.load(Ordering::Relaxed) >= 3 {
            continue;
        }
        let table = live[(rng.next_u64() % live.len() as u64) as usize];
        let stay = Duration::from_millis(1000 + rng.next_u64() % 3000);
        let abrupt = rng.unit() < 0.5;
        let (sh, active) = (sh.clone(), active.clone());
        active.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            watch_once(&sh, table, stay, abrupt).await;
            active.fetch_sub(1, Ordering::Relaxed);
        });
    }
}

async fn watch_once(sh: &Shared, table: Uuid, stay: Duration, abrupt: bool) {
    let Ok(mut conn) = sh.rest.connect().await else { return };
    let _live = Live::new(&sh.live_ws);
    if conn.watch(table).await.is_err() {
        return;
    }
    sh.n.spectators.fetch_add(1, Ordering::Relaxed);
    let until = tokio::time::Instant::now() + stay;
    while let Ok(Ok(msg)) = tokio::time::timeout_at(until, conn.recv()).await {
        if let ServerMessage::View { view, .. } = msg {
            sh.n.spectator_views.fetch_add(1, Ordering::Relaxed);
            if view.you.is_some() || view.game.as_ref().is_some_and(|g| g.hand.is_some()) {
                sh.n.spectator_leaks.fetch_add(1, Ordering::Relaxed);
                sh.fail(format!("table {table}: a spectator's view holds a seat or a hand"));
            }
        }
    }
    if !abrupt {
        let _ = conn.close().await;
    }
}

// ---------------------------------------------------------------------------
// The stall check

/// Everything in a status that changes with every action.
fn signature(s: &TableStatus) -> String {
    format!(
        "{:?}|{}|{}|{:?}|{:?}|{:?}|{:?}",
        s.summary.phase,
        s.summary.hand_number,
        s.hands.len(),
        s.bids,
        s.tricks_won,
        s.turn,
        s.result.is_some()
    )
}

async fn poll_tables(sh: Arc<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    while Instant::now() < sh.hard_end {
        tick.tick().await;
        if !sh.up() {
            continue;
        }
        let ids = sh.live_tables();
        let polls = ids.iter().map(|&id| {
            let sh = &sh;
            async move { (id, tokio::time::timeout(Duration::from_secs(3), sh.rest.table(id)).await) }
        });
        let results = futures_util::future::join_all(polls).await;
        let up_since = sh.up_since.lock().map(|u| *u).unwrap_or_else(|_| Instant::now());
        let now = Instant::now();
        for (id, res) in results {
            let status = match res {
                Ok(Ok(status)) => status,
                Ok(Err(Error::Api { status: 404, .. })) => {
                    // A finished table may close before a poll sees it
                    // finished; its record says whether it did.
                    vanished(&sh, id).await;
                    continue;
                }
                _ => continue,
            };
            if !sh.up() {
                break;
            }
            let sig = signature(&status);
            let finished = status.summary.phase == TablePhase::Finished;
            let seen = format!(
                "{:?}, hand {}, scores {:?}, {:?} on turn",
                status.summary.phase, status.summary.hand_number, status.summary.scores, status.turn
            );
            let allowed =
                Duration::from_millis(status.clock.as_ref().map_or(sh.cli.bot_delay_ms, |c| c.duration_ms))
                    + Duration::from_secs(sh.cli.slack_secs);
            let mut stall = None;
            let mut done = false;
            sh.with_table(id, |t| {
                t.seen = seen;
                if t.sig != sig {
                    t.sig = sig;
                    t.last_change = now;
                }
                let idle = now.duration_since(t.last_change.max(up_since));
                sh.max_idle_ms.fetch_max(idle.as_millis() as u64, Ordering::Relaxed);
                if !finished && idle > allowed && !t.stalled {
                    t.stalled = true;
                    stall = Some(Stall {
                        table: id,
                        at_s: sh.at_s(),
                        idle_ms: idle.as_millis() as u64,
                        allowed_ms: allowed.as_millis() as u64,
                        phase: status.summary.phase,
                        turn: status.turn,
                        hand: status.summary.hand_number,
                    });
                }
                if finished && !t.finished {
                    t.finished = true;
                    done = true;
                }
            });
            if let Some(s) = stall {
                sh.fail(format!(
                    "stall: table {} idle {} ms (allowed {} ms), {:?}, hand {}, {:?} on turn",
                    s.table, s.idle_ms, s.allowed_ms, s.phase, s.hand, s.turn
                ));
                if let Ok(mut v) = sh.stalls.lock() {
                    v.push(s);
                }
            }
            if done {
                sh.n.tables_finished.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

/// A table's status answered 404: finished (by its record) or gone while
/// running (a failure).
async fn vanished(sh: &Shared, id: Uuid) {
    if !sh.up() {
        return;
    }
    let url = format!("{}/api/v1/matches/{id}", sh.endpoint.http);
    let finished = match reqwest::Client::new().get(&url).timeout(Duration::from_secs(5)).send().await {
        Ok(r) if r.status().is_success() => r.json::<MatchRecord>().await.ok().map(|m| m.finished),
        Ok(r) if r.status() == reqwest::StatusCode::NOT_FOUND => None,
        // Not sure: look again at the next poll.
        _ => return,
    };
    let newly = sh
        .with_table(id, |t| {
            if t.finished {
                return false;
            }
            t.finished = true;
            true
        })
        .unwrap_or(false);
    if !newly {
        return;
    }
    if finished == Some(true) {
        sh.n.tables_finished.fetch_add(1, Ordering::Relaxed);
    } else {
        sh.fail(format!(
            "table {id} disappeared while its match was running (record finished: {finished:?})"
        ));
    }
}

// ---------------------------------------------------------------------------
// The record check

/// Checks the acknowledged actions of one table against its record.
/// Returns (checked, unchecked, lost descriptions).
fn check_record(record: &MatchRecord, acked: &[Acked]) -> (u64, u64, Vec<String>) {
    let (mut checked, mut unchecked, mut lost) = (0, 0, Vec::new());
    for a in acked {
        let h = usize::from(a.hand);
        let si = Seat::ALL.iter().position(|&s| s == a.seat).unwrap_or(0);
        let finished_hand = h >= 1 && h <= record.hands.len();
        match a.action {
            Action::Bid(b) => {
                let got = if finished_hand {
                    let hr = &record.hands[h - 1];
                    Some((Some(hr.result.bids[a.seat]), Some(hr.bid_sources[si])))
                } else {
                    record
                        .current_hand
                        .as_ref()
                        .filter(|c| c.hand_number == a.hand)
                        .map(|c| (c.bids[si], None))
                };
                match got {
                    Some((bid, source)) => {
                        checked += 1;
                        if bid != Some(b) || source.is_some_and(|s| s != ActionSource::Player) {
                            lost.push(format!(
                                "hand {} {:?} bid {b}: the record has {bid:?} from {source:?}",
                                a.hand, a.seat
                            ));
                        }
                    }
                    None if record.finished => {
                        checked += 1;
                        lost.push(format!(
                            "hand {} {:?} bid {b}: the record has no such hand",
                            a.hand, a.seat
                        ));
                    }
                    None => unchecked += 1,
                }
            }
            Action::Play(card) => {
                if finished_hand {
                    checked += 1;
                    let p = record.hands[h - 1].plays.get(a.index);
                    if !p.is_some_and(|p| {
                        p.seat == a.seat && p.card == card && p.source == ActionSource::Player
                    }) {
                        lost.push(format!(
                            "hand {} {:?} card {card} (play {}): the record has {:?}",
                            a.hand,
                            a.seat,
                            a.index + 1,
                            p.map(|p| (p.seat, p.card, p.source))
                        ));
                    }
                } else if record.finished {
                    checked += 1;
                    lost.push(format!(
                        "hand {} {:?} card {card}: the record has no such hand",
                        a.hand, a.seat
                    ));
                } else {
                    // A running hand's cards are not public yet.
                    unchecked += 1;
                }
            }
        }
    }
    (checked, unchecked, lost)
}

/// Checks every started table's record; returns the matches completed by
/// the number of library clients at the table (0 to 4).
async fn verify_all(sh: &Shared) -> [u64; 5] {
    let tables: Vec<(Uuid, Vec<Acked>, bool, usize)> = sh
        .tables
        .lock()
        .map(|t| {
            t.iter()
                .filter(|(_, x)| x.started)
                .map(|(id, x)| (*id, x.acked.clone(), x.finished, x.clients))
                .collect()
        })
        .unwrap_or_default();
    let mut by_clients = [0u64; 5];
    let http = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap_or_default();
    for (id, acked, finished, clients) in tables {
        let url = format!("{}/api/v1/matches/{id}", sh.endpoint.http);
        let mut record = None;
        for _ in 0..5 {
            match http.get(&url).send().await {
                Ok(r) if r.status().is_success() => {
                    record = r.json::<MatchRecord>().await.ok();
                    break;
                }
                _ => tokio::time::sleep(Duration::from_millis(500)).await,
            }
        }
        let Some(mut record) = record else {
            sh.fail(format!("table {id}: no match record ({} acknowledged actions)", acked.len()));
            sh.n.actions_lost.fetch_add(acked.len() as u64, Ordering::Relaxed);
            continue;
        };
        if sh.cli.corrupt_record
            && let Some(p) = record
                .hands
                .iter_mut()
                .flat_map(|h| h.plays.iter_mut())
                .find(|p| p.source == ActionSource::Player)
        {
            p.source = ActionSource::Timeout;
        }
        if finished && !record.finished {
            sh.fail(format!("table {id}: finished, but its record says it is not"));
        }
        let (checked, unchecked, lost) = check_record(&record, &acked);
        sh.n.actions_checked.fetch_add(checked, Ordering::Relaxed);
        sh.n.actions_unchecked.fetch_add(unchecked, Ordering::Relaxed);
        sh.n.actions_lost.fetch_add(lost.len() as u64, Ordering::Relaxed);
        if record.finished {
            sh.n.matches_verified.fetch_add(1, Ordering::Relaxed);
            if let Some(n) = by_clients.get_mut(clients) {
                *n += 1;
            }
        }
        for l in lost.iter().take(5) {
            sh.fail(format!("table {id}: acknowledged action lost: {l}"));
        }
    }
    by_clients
}

// ---------------------------------------------------------------------------
// REST floods

async fn flood(sh: &Shared) -> Flood {
    let started = Instant::now();
    let inflight = sh.cli.flood_inflight.min(
        spades_client::load::open_files_limit().map_or(1000, |l| (l as usize).saturating_sub(600).max(50)),
    );
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(inflight)
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap_or_default();
    let ids = sh.live_tables();
    let until = Instant::now() + Duration::from_secs(sh.cli.flood_secs);
    let statuses: Arc<Mutex<BTreeMap<String, u64>>> = Arc::default();
    let requests = Arc::new(AtomicU64::new(0));
    let mut workers = Vec::with_capacity(inflight);
    for w in 0..inflight {
        let (http, ids, statuses, requests) = (http.clone(), ids.clone(), statuses.clone(), requests.clone());
        let base = sh.endpoint.http.clone();
        workers.push(tokio::spawn(async move {
            let mut i = w;
            // Bounded: a few seconds, and at most 10 000 requests a worker.
            while Instant::now() < until && i < w + 10_000 {
                let url = if i % 2 == 0 || ids.is_empty() {
                    format!("{base}/api/v1/tables")
                } else {
                    format!("{base}/api/v1/tables/{}", ids[i % ids.len()])
                };
                i += 1;
                let key = match http.get(url).send().await {
                    Ok(r) => {
                        let code = r.status().as_u16().to_string();
                        let _ = r.bytes().await;
                        code
                    }
                    Err(e) if e.is_timeout() => "timeout".to_owned(),
                    Err(_) => "error".to_owned(),
                };
                requests.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut s) = statuses.lock() {
                    *s.entry(key).or_default() += 1;
                }
            }
        }));
    }
    for w in workers {
        let _ = w.await;
    }
    drop(http);
    let requests = requests.load(Ordering::Relaxed);
    sh.n.flood_requests.fetch_add(requests, Ordering::Relaxed);
    let statuses = statuses.lock().map(|s| s.clone()).unwrap_or_default();
    Flood { at_s: sh.at_s(), secs: started.elapsed().as_secs_f64(), inflight, requests, statuses }
}

// ---------------------------------------------------------------------------
// The run

#[derive(Debug, Serialize)]
struct Report {
    date: String,
    ok: bool,
    failures: Vec<String>,
    duration_s: f64,
    churn_s: u64,
    tempo_ms: u64,
    bot_delay_ms: u64,
    slack_s: u64,
    kills_sigkill: usize,
    kills_sigterm: usize,
    restarts: usize,
    kills: Vec<Kill>,
    tables_created: u64,
    tables_started: u64,
    tables_finished: u64,
    setups_abandoned: u64,
    matches_completed: u64,
    /// Matches completed at tables with 0, 1, 2, 3 and 4 library clients.
    completed_by_clients: [u64; 5],
    actions_acknowledged: u64,
    actions_checked: u64,
    actions_unchecked: u64,
    actions_lost: u64,
    refusals: u64,
    drops: u64,
    connections_lost: u64,
    reconnects: u64,
    resumes: u64,
    take_overs: u64,
    seq_regressions: u64,
    spectators: u64,
    spectator_views: u64,
    spectator_leaks: u64,
    flood_requests: u64,
    floods: Vec<Flood>,
    stalls: Vec<Stall>,
    max_idle_ms: u64,
    rss_kib_first: u64,
    rss_kib_last: u64,
    rss_kib_max: u64,
    open_files_first: usize,
    open_files_last: usize,
    open_files_max: usize,
    samples: Vec<Sample>,
}

impl Report {
    fn to_table(&self) -> String {
        let mut s = String::new();
        let mut row = |k: &str, v: String| s.push_str(&format!("| {k} | {v} |\n"));
        row(
            "result",
            if self.ok { "ok".into() } else { format!("FAILED ({} failures)", self.failures.len()) },
        );
        row("duration", format!("{:.0} s ({} s of churn)", self.duration_s, self.churn_s));
        row(
            "turn clock / bot delay / slack",
            format!("{} ms / {} ms / {} s", self.tempo_ms, self.bot_delay_ms, self.slack_s),
        );
        row("kills (SIGKILL / SIGTERM)", format!("{} / {}", self.kills_sigkill, self.kills_sigterm));
        row("restarts", self.restarts.to_string());
        let down: Vec<String> =
            self.kills.iter().map(|k| format!("{} {} ms", k.signal, k.downtime_ms)).collect();
        row("downtime per restart", down.join(", "));
        row(
            "tables created / started / finished",
            format!("{} / {} / {}", self.tables_created, self.tables_started, self.tables_finished),
        );
        row("set-ups cut by a kill", self.setups_abandoned.to_string());
        row("matches completed (record checked)", self.matches_completed.to_string());
        row("by library clients at the table (0/1/2/3/4)", format!("{:?}", self.completed_by_clients));
        row("actions acknowledged", self.actions_acknowledged.to_string());
        row(
            "actions checked / not checkable",
            format!("{} / {}", self.actions_checked, self.actions_unchecked),
        );
        row("actions lost", self.actions_lost.to_string());
        row("refusals", self.refusals.to_string());
        row("drops on purpose / connections lost", format!("{} / {}", self.drops, self.connections_lost));
        row("reconnects (resumed)", format!("{} ({})", self.reconnects, self.resumes));
        row("take overs after autopilot", self.take_overs.to_string());
        row("seq regressions", self.seq_regressions.to_string());
        row(
            "spectators (views, leaks)",
            format!("{} ({}, {})", self.spectators, self.spectator_views, self.spectator_leaks),
        );
        for f in &self.floods {
            let st: Vec<String> = f.statuses.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            row(
                &format!("REST flood at {:.0} s", f.at_s),
                format!(
                    "{} requests in {:.1} s, {} in flight ({})",
                    f.requests,
                    f.secs,
                    f.inflight,
                    st.join(", ")
                ),
            );
        }
        row("stalls", self.stalls.len().to_string());
        row("max idle seen", format!("{} ms", self.max_idle_ms));
        row(
            "RSS first / last / max",
            format!("{} / {} / {} KiB", self.rss_kib_first, self.rss_kib_last, self.rss_kib_max),
        );
        row(
            "open files first / last / max",
            format!("{} / {} / {}", self.open_files_first, self.open_files_last, self.open_files_max),
        );
        let mut out = String::from("| figure | value |\n|---|---|\n");
        out.push_str(&s);
        for f in &self.failures {
            out.push_str(&format!("\nFAIL {f}"));
        }
        out
    }
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let report = rt.block_on(run(cli.clone()))?;
    rt.shutdown_timeout(Duration::from_secs(2));
    let json = serde_json::to_string_pretty(&report)?;
    let path = cli.json_out.unwrap_or_else(|| cli.out.join("soak.json"));
    std::fs::write(&path, &json).with_context(|| format!("writing {}", path.display()))?;
    println!("{}", report.to_table());
    println!("\nJSON: {}", path.display());
    if !report.ok {
        std::process::exit(1);
    }
    Ok(())
}

async fn run(cli: Cli) -> anyhow::Result<Report> {
    std::fs::create_dir_all(&cli.out)?;
    let data_dir = cli.out.join("data");
    let _ = std::fs::remove_dir_all(&data_dir);
    std::fs::create_dir_all(&data_dir)?;
    let log = cli.out.join("server.log");
    let _ = std::fs::remove_file(&log);
    let endpoint = Endpoint::parse(&format!("http://127.0.0.1:{}", cli.port))?;
    let http =
        reqwest::Client::builder().pool_max_idle_per_host(8).timeout(Duration::from_secs(10)).build()?;
    let rest = Client::with_endpoint(endpoint.clone()).with_http(http);
    let t0 = Instant::now();
    let kills = if cli.kills == 0 { (cli.secs as usize / 30).max(2) } else { cli.kills };
    let seed = cli.seed.unwrap_or_else(|| SplitMix::from_time().next_u64());
    let sh = Arc::new(Shared {
        endpoint,
        rest,
        t0,
        stop_new: t0 + Duration::from_secs(cli.secs),
        hard_end: t0 + Duration::from_secs(cli.secs + cli.wind_down),
        n: Counters::default(),
        tables: Mutex::new(HashMap::new()),
        server_up: AtomicBool::new(false),
        up_since: Mutex::new(t0),
        live_ws: AtomicUsize::new(0),
        failures: Mutex::new(Vec::new()),
        stalls: Mutex::new(Vec::new()),
        max_idle_ms: AtomicU64::new(0),
        next_seed: AtomicU64::new(seed),
        cli,
    });
    eprintln!(
        "soak: {} s of churn, {} tables at once, {kills} kills, seed {seed}, server {} on port {}",
        sh.cli.secs,
        sh.cli.tables,
        sh.cli.server_bin.display(),
        sh.cli.port
    );

    let mut server = Server { child: Server::spawn(&sh.cli, &data_dir, &log)?, data_dir, log };
    wait_healthy(&sh, &mut server.child).await.with_context(|| format!("see {}", server.log.display()))?;
    let mut samples = vec![sample(&sh, server.pid(), "start")];
    // The fd count of a fresh, idle server: what every check is against.
    let base_fds = samples[0].open_files;
    *sh.up_since.lock().map_err(|_| anyhow::anyhow!("poisoned"))? = Instant::now();
    sh.server_up.store(true, Ordering::Release);

    let mut tasks = Vec::new();
    for i in 0..sh.cli.tables {
        tasks.push(tokio::spawn(slot(sh.clone(), i)));
    }
    let spectator_task = tokio::spawn(spectators(sh.clone()));
    let poller = tokio::spawn(poll_tables(sh.clone()));

    let phase = Duration::from_secs(sh.cli.secs) / (kills as u32 + 1);
    let mut kill_log = Vec::new();
    let mut floods = Vec::new();
    let margin = 64;
    let check_fds = |sh: &Shared, s: &Sample, base: usize| {
        if s.open_files > base + s.live_connections + margin {
            sh.fail(format!(
                "open files {} at {:.0} s ({}) > warm-up {} + {} live connections + {margin}",
                s.open_files, s.at_s, s.label, base, s.live_connections
            ));
        }
    };
    let mut process_base = (base_fds, samples[0].rss_kib);
    for p in 0..=kills {
        let phase_end = t0 + phase * (p as u32 + 1);
        if p % 2 == 1 || kills == 0 {
            tokio::time::sleep_until((t0 + phase * p as u32 + phase * 2 / 5).into()).await;
            eprintln!(
                "[{:7.1}s] REST flood: {} in flight for {} s",
                sh.at_s(),
                sh.cli.flood_inflight,
                sh.cli.flood_secs
            );
            let f = flood(&sh).await;
            eprintln!("[{:7.1}s] flood done: {} requests {:?}", sh.at_s(), f.requests, f.statuses);
            floods.push(f);
        }
        tokio::time::sleep_until(phase_end.into()).await;
        let s = sample(&sh, server.pid(), &format!("end of phase {}", p + 1));
        check_fds(&sh, &s, process_base.0);
        samples.push(s);
        if p == kills {
            break;
        }
        let signal = if p % 2 == 1 { "SIGTERM" } else { "SIGKILL" };
        eprintln!("[{:7.1}s] {signal} the server (pid {})", sh.at_s(), server.pid());
        let at = Instant::now();
        sh.server_up.store(false, Ordering::Release);
        server.stop(signal).await?;
        let exit_ms = at.elapsed().as_millis() as u64;
        server.child = Server::spawn(&sh.cli, &server.data_dir, &server.log)?;
        wait_healthy(&sh, &mut server.child)
            .await
            .with_context(|| format!("restart; see {}", server.log.display()))?;
        *sh.up_since.lock().map_err(|_| anyhow::anyhow!("poisoned"))? = Instant::now();
        sh.server_up.store(true, Ordering::Release);
        let downtime_ms = at.elapsed().as_millis() as u64;
        eprintln!("[{:7.1}s] restarted (pid {}) after {downtime_ms} ms", sh.at_s(), server.pid());
        kill_log.push(Kill { at_s: sh.at_s(), signal, exit_ms, downtime_ms });
        tokio::time::sleep(Duration::from_secs(2)).await;
        let s = sample(&sh, server.pid(), &format!("warm-up after restart {}", kill_log.len()));
        process_base = (base_fds.max(s.open_files.saturating_sub(s.live_connections)), s.rss_kib);
        check_fds(&sh, &s, base_fds);
        samples.push(s);
    }

    eprintln!("[{:7.1}s] churn over: letting the running matches finish", sh.at_s());
    for t in tasks {
        let _ = t.await;
    }
    let _ = spectator_task.await;
    // The poller sees the last tables finish; stop it once they have.
    while Instant::now() < sh.hard_end && !sh.live_tables().is_empty() {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    poller.abort();
    let _ = poller.await;
    for id in sh.live_tables() {
        let seen = sh.with_table(id, |t| t.seen.clone()).unwrap_or_default();
        sh.fail(format!("table {id} did not finish within the wind-down (last seen: {seen})"));
    }
    let completed_by_clients = verify_all(&sh).await;

    // Every connection is closed: the server's files come back down.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let last = sample(&sh, server.pid(), "end, connections closed");
    if last.open_files > process_base.0 + last.live_connections + 16 {
        sh.fail(format!(
            "open files {} at the end with {} live connections, {} after this process's warm-up",
            last.open_files, last.live_connections, process_base.0
        ));
    }
    let rss_limit = process_base.1 * 3 / 2 + 32 * 1024;
    if last.rss_kib > rss_limit {
        sh.fail(format!(
            "RSS {} KiB at the end > 1.5 x {} KiB (this process's warm-up) + 32 MiB",
            last.rss_kib, process_base.1
        ));
    }
    samples.push(last);
    server.stop("SIGTERM").await?;

    let n = &sh.n;
    let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
    let failures = sh.failures.lock().map(|f| f.clone()).unwrap_or_default();
    let stalls = sh.stalls.lock().map(|s| s.clone()).unwrap_or_default();
    let rss: Vec<u64> = samples.iter().map(|s| s.rss_kib).collect();
    let fds: Vec<usize> = samples.iter().map(|s| s.open_files).collect();
    Ok(Report {
        date: chrono_like_now(),
        ok: failures.is_empty(),
        failures,
        duration_s: t0.elapsed().as_secs_f64(),
        churn_s: sh.cli.secs,
        tempo_ms: sh.cli.tempo_ms,
        bot_delay_ms: sh.cli.bot_delay_ms,
        slack_s: sh.cli.slack_secs,
        kills_sigkill: kill_log.iter().filter(|k| k.signal == "SIGKILL").count(),
        kills_sigterm: kill_log.iter().filter(|k| k.signal == "SIGTERM").count(),
        restarts: kill_log.len(),
        kills: kill_log,
        tables_created: get(&n.tables_created),
        tables_started: get(&n.tables_started),
        tables_finished: get(&n.tables_finished),
        setups_abandoned: get(&n.setups_abandoned),
        matches_completed: get(&n.matches_verified),
        completed_by_clients,
        actions_acknowledged: get(&n.actions_acked),
        actions_checked: get(&n.actions_checked),
        actions_unchecked: get(&n.actions_unchecked),
        actions_lost: get(&n.actions_lost),
        refusals: get(&n.refusals),
        drops: get(&n.drops),
        connections_lost: get(&n.connections_lost),
        reconnects: get(&n.reconnects),
        resumes: get(&n.resumes),
        take_overs: get(&n.take_overs),
        seq_regressions: get(&n.seq_regressions),
        spectators: get(&n.spectators),
        spectator_views: get(&n.spectator_views),
        spectator_leaks: get(&n.spectator_leaks),
        flood_requests: get(&n.flood_requests),
        floods,
        stalls,
        max_idle_ms: sh.max_idle_ms.load(Ordering::Relaxed),
        rss_kib_first: rss.first().copied().unwrap_or(0),
        rss_kib_last: rss.last().copied().unwrap_or(0),
        rss_kib_max: rss.iter().copied().max().unwrap_or(0),
        open_files_first: fds.first().copied().unwrap_or(0),
        open_files_last: fds.last().copied().unwrap_or(0),
        open_files_max: fds.iter().copied().max().unwrap_or(0),
        samples,
    })
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
fn chrono_like_now() -> String {
    utc(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs()))
}

/// Unix time in seconds as `YYYY-MM-DDTHH:MM:SSZ`, without a date crate.
fn utc(secs: u64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use spades_client::protocol::{HandRecord, PlayRecord};
    use spades_engine::{Card, HandResult};

    fn card(s: &str) -> Card {
        s.parse().expect("a card")
    }

    fn record(finished: bool) -> MatchRecord {
        let plays = vec![
            PlayRecord { seat: Seat::North, card: card("2C"), source: ActionSource::Player, at: 0 },
            PlayRecord { seat: Seat::East, card: card("3C"), source: ActionSource::Bot, at: 0 },
        ];
        let result: HandResult = serde_json::from_value(serde_json::json!({
            "hand_number": 1, "dealer": "west", "bids": [3, 2, 1, 4], "tricks": [3, 2, 1, 7],
            "nils": [null, null, null, null],
            "teams": [
                {"contract": 4, "counted_tricks": 4, "made": true, "contract_points": 40, "bags": 0, "bag_points": 0,
                 "nil_points": 0, "bag_penalty": 0, "hand_points": 40, "score": 40, "bag_count": 0},
                {"contract": 6, "counted_tricks": 9, "made": true, "contract_points": 60, "bags": 3, "bag_points": 3,
                 "nil_points": 0, "bag_penalty": 0, "hand_points": 63, "score": 63, "bag_count": 3}
            ]
        }))
        .expect("a hand result");
        MatchRecord {
            abandoned: false,
            table: Uuid::nil(),
            name: "t".into(),
            options: TableOptions::default(),
            seats: Vec::new(),
            created_at: 0,
            finished,
            hands: vec![HandRecord {
                result,
                bid_sources: [ActionSource::Player, ActionSource::Bot, ActionSource::Bot, ActionSource::Bot],
                plays,
            }],
            current_hand: None,
            result: None,
            scores: [40, 63],
            actions: 6,
            seed: None,
            fair: None,
        }
    }

    #[test]
    fn acknowledged_actions_in_the_record_pass() {
        let acked = [
            Acked { hand: 1, seat: Seat::North, action: Action::Bid(3), index: 0 },
            Acked { hand: 1, seat: Seat::North, action: Action::Play(card("2C")), index: 0 },
        ];
        let (checked, unchecked, lost) = check_record(&record(true), &acked);
        assert_eq!((checked, unchecked), (2, 0));
        assert!(lost.is_empty(), "{lost:?}");
    }

    #[test]
    fn a_missing_moved_or_reattributed_action_is_lost() {
        // Another bid than the one acknowledged.
        let (_, _, lost) = check_record(
            &record(true),
            &[Acked { hand: 1, seat: Seat::North, action: Action::Bid(4), index: 0 }],
        );
        assert_eq!(lost.len(), 1);
        // The right card at another place.
        let (_, _, lost) = check_record(
            &record(true),
            &[Acked { hand: 1, seat: Seat::North, action: Action::Play(card("2C")), index: 1 }],
        );
        assert_eq!(lost.len(), 1);
        // A card the record says a bot chose.
        let (_, _, lost) = check_record(
            &record(true),
            &[Acked { hand: 1, seat: Seat::East, action: Action::Play(card("3C")), index: 1 }],
        );
        assert_eq!(lost.len(), 1);
        // A bid the record says was not the player's.
        let (_, _, lost) = check_record(
            &record(true),
            &[Acked { hand: 1, seat: Seat::East, action: Action::Bid(2), index: 0 }],
        );
        assert_eq!(lost.len(), 1);
        // A hand the finished record does not have.
        let (_, _, lost) = check_record(
            &record(true),
            &[Acked { hand: 2, seat: Seat::North, action: Action::Bid(2), index: 0 }],
        );
        assert_eq!(lost.len(), 1);
    }

    #[test]
    fn a_running_hands_cards_are_not_checkable() {
        let acked = [Acked { hand: 2, seat: Seat::North, action: Action::Play(card("AS")), index: 0 }];
        let (checked, unchecked, lost) = check_record(&record(false), &acked);
        assert_eq!((checked, unchecked, lost.len()), (0, 1, 0));
    }

    #[test]
    fn dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_764_495_012), "2025-11-30T09:30:12Z");
    }
}
