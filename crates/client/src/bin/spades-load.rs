//! `spades-load`: bot client and load generator for the Spades server.
//!
//! ```sh
//! # 200 tables, moves as fast as possible, 30 s measured
//! spades-load run --url http://127.0.0.1:8080 --tables 200 --think-ms 0 --duration 30
//! # raise the table count at a human pace until p99 passes 50 ms
//! spades-load capacity --steps 1000,2000,3000 --think-ms 1000 --hold 60 --server-pid $PID
//! # memory per idle table and per idle connection
//! spades-load memory --tables 5000 --connections 10000 --server-pid $PID
//! # seat three rule bots at a table a person created
//! spades-load bot --table 67e55044-10b1-426f-9247-bb680e5fe0c8 --seats 3 --think-ms 800
//! ```
//!
//! Every command prints a human-readable table (or JSON with `--json`);
//! `--json-out FILE` also writes the JSON to a file. The load generator only
//! talks to loopback addresses unless `--allow-remote` is given.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde::Serialize;
use spades_client::load::{self, CapacityConfig, LoadConfig, Mode};
use spades_client::protocol::Tempo;
use spades_client::{Client, Endpoint, Tls};
use spades_engine::{MatchEnd, Rules};
use uuid::Uuid;

/// Bot client and load generator for the Spades table server.
#[derive(Debug, Parser)]
#[command(name = "spades-load", version)]
struct Cli {
    /// Runtime threads (1: a single-threaded runtime, which wakes fewer
    /// threads and so leaves more of a small machine to the server).
    #[arg(long, global = true, default_value_t = 1)]
    threads: usize,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Hold T tables of four bot connections for a while and report.
    Run(RunArgs),
    /// Raise T step by step until p99 latency passes a limit or anything
    /// fails; report the largest T held.
    Capacity(CapacityArgs),
    /// Server memory per idle table and per idle connection.
    Memory(MemoryArgs),
    /// Seat rule bots at an existing table and play until the match ends.
    Bot(BotArgs),
    /// Put the JSON reports of a benchmark run side by side with the
    /// targets (a Markdown table).
    Summary(SummaryArgs),
    /// What signing in costs, side by side in one run: actions/s of the
    /// same tables with anonymous and with signed-in seats, and REST
    /// requests/s of a read without a session and of `GET /api/v1/me`
    /// with one, in alternating rounds (medians).
    Accounts(AccountsArgs),
    /// Put the lean-frames comparison's rounds (an older server against
    /// this one, `scripts/bench.sh` scenario `lean`) side by side with the
    /// targets (a Markdown table).
    Lean(LeanArgs),
}

#[derive(Debug, Args)]
struct AccountsArgs {
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    load: LoadArgs,
    /// Rounds (each: anonymous seats, signed-in seats, then the REST pair).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Seconds measured per table phase.
    #[arg(long, default_value_t = 15.0)]
    duration: f64,
    /// Seconds of warm-up per table phase.
    #[arg(long, default_value_t = 3.0)]
    warmup: f64,
    /// Seconds per REST phase.
    #[arg(long, default_value_t = 5.0)]
    rest_seconds: f64,
    /// REST requests in flight at once.
    #[arg(long, default_value_t = 16)]
    concurrency: usize,
}

#[derive(Debug, Args)]
struct LeanArgs {
    /// The directory of the reports (`lean-base-think0-1.json`, …).
    #[arg(long)]
    dir: PathBuf,
    /// How many rounds.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
}

#[derive(Debug, Args)]
struct SummaryArgs {
    /// The capacity report (JSON).
    #[arg(long)]
    capacity: Option<PathBuf>,
    /// The throughput report.
    #[arg(long)]
    throughput: Option<PathBuf>,
    /// The echo report.
    #[arg(long)]
    echo: Option<PathBuf>,
    /// The memory report.
    #[arg(long)]
    memory: Option<PathBuf>,
    /// Write everything, with the verdicts, to this JSON file.
    #[arg(long)]
    json_out: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct Common {
    /// The server (`http://host:port` or `https://host`; `ws://host:port/ws`
    /// for echo).
    #[arg(long, default_value = "http://127.0.0.1:8080", env = "SPADES_URL")]
    url: String,
    /// The server's process id, to report its resident memory and CPU.
    #[arg(long)]
    server_pid: Option<u32>,
    /// Also report the CPU use over the window of every process of this
    /// name (as `ps -o comm` shows it; repeatable): e.g. `postgres` and
    /// `nats-server` beside a cluster.
    #[arg(long)]
    cpu_of: Vec<String>,
    /// Connect from this many loopback addresses (127.0.0.2, …); 0 = the
    /// system's choice. Default: one per 8,000 connections, when there are
    /// more than 8,000.
    #[arg(long)]
    sources: Option<usize>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the JSON report to this file.
    #[arg(long)]
    json_out: Option<PathBuf>,
    /// Allow a server that is not on a loopback address.
    #[arg(long)]
    allow_remote: bool,
    /// Also trust the certificates in this PEM file for an `https://`
    /// server (a private CA or a self-signed certificate).
    #[arg(long, env = "SPADES_CA_FILE")]
    ca_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ModeArg {
    /// The Spades server.
    Game,
    /// `spades-echo`.
    Echo,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum TempoArg {
    Relaxed,
    Normal,
    Fast,
}

#[derive(Debug, Args)]
struct LoadArgs {
    /// Tables (four connections each).
    #[arg(long, short = 't', default_value_t = 10)]
    tables: usize,
    /// Think time before each move, ms (0: as fast as possible).
    #[arg(long, default_value_t = 0)]
    think_ms: u64,
    /// Vary each think time by up to this fraction either way.
    #[arg(long, default_value_t = 0.1)]
    think_jitter: f64,
    /// New tables per second while ramping up.
    #[arg(long, default_value_t = 250.0)]
    ramp: f64,
    /// Game (the Spades server) or echo (`spades-echo`).
    #[arg(long, value_enum, default_value = "game")]
    mode: ModeArg,
    /// Seats connect to these servers instead of `--url`, comma-separated
    /// (the nodes of a cluster): each table's four seats are spread over
    /// them; tables are still created through `--url`.
    #[arg(long, value_delimiter = ',')]
    seat_urls: Vec<String>,
    /// Matches of this many hands (5, 9 or 11) instead of to 500 points.
    #[arg(long)]
    hands: Option<u16>,
    /// The tables' tempo.
    #[arg(long, value_enum, default_value = "normal")]
    tempo: TempoArg,
    /// Do not replace a finished table with a new one.
    #[arg(long)]
    no_restart: bool,
    /// WebSocket read buffer per connection, bytes.
    #[arg(long, default_value_t = 4096)]
    read_buffer: usize,
    /// Append every acknowledged move to this file, one per line: table,
    /// seat (0 north to 3 west), hand number, `bid` or `play`, and the bid
    /// or card as the event log stores it, tab-separated (to check against
    /// the log that none was lost).
    #[arg(long)]
    acks_out: Option<PathBuf>,
    /// A seat whose connection is lost connects again (to the next of
    /// `--seat-urls`) and resumes with its token, as a real client does;
    /// without it a lost connection fails its table.
    #[arg(long)]
    reconnect: bool,
    /// Every seat signs in as a guest account first (a session per seat,
    /// kept across the tables of its slot) and plays as that account:
    /// joins with no name, resumes with no token.
    #[arg(long)]
    signed_in: bool,
}

#[derive(Debug, Args)]
struct RunArgs {
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    load: LoadArgs,
    /// Seconds after ramping up before measuring.
    #[arg(long, default_value_t = 3.0)]
    warmup: f64,
    /// Seconds measured.
    #[arg(long, default_value_t = 20.0)]
    duration: f64,
}

#[derive(Debug, Args)]
struct CapacityArgs {
    #[command(flatten)]
    common: Common,
    #[command(flatten)]
    load: LoadArgs,
    /// Table counts to try, increasing, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "500,1000,2000,3000,4000,4990")]
    steps: Vec<usize>,
    /// Seconds each step is held and measured.
    #[arg(long, default_value_t = 60.0)]
    hold: f64,
    /// Seconds between reaching a step and measuring it.
    #[arg(long, default_value_t = 10.0)]
    settle: f64,
    /// A step holds while p99 latency is at most this many ms.
    #[arg(long, default_value_t = 50.0)]
    p99_ms: f64,
}

#[derive(Debug, Args)]
struct MemoryArgs {
    #[command(flatten)]
    common: Common,
    /// Idle tables to create.
    #[arg(long, default_value_t = 5000)]
    tables: usize,
    /// Idle connections to open (spectators spread over the tables).
    #[arg(long, default_value_t = 10000)]
    connections: usize,
}

#[derive(Debug, Args)]
struct BotArgs {
    #[command(flatten)]
    common: Common,
    /// The table.
    #[arg(long)]
    table: Uuid,
    /// How many seats to take.
    #[arg(long, default_value_t = 3)]
    seats: usize,
    /// Think time before each move, ms.
    #[arg(long, default_value_t = 800)]
    think_ms: u64,
    /// The owner token: start the match once the bots are seated.
    #[arg(long)]
    owner_token: Option<String>,
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let runtime = if cli.threads <= 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()?
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(cli.threads).enable_all().build()?
    };
    runtime.block_on(async {
        match cli.command {
            Cmd::Run(a) => run(a).await,
            Cmd::Capacity(a) => capacity(a).await,
            Cmd::Memory(a) => memory(a).await,
            Cmd::Bot(a) => bot(a).await,
            Cmd::Summary(a) => summary(a),
            Cmd::Accounts(a) => accounts(a).await,
            Cmd::Lean(a) => {
                print!("{}", load::lean::report(&a.dir, a.rounds)?);
                Ok(())
            }
        }
    })
}

fn endpoint(c: &Common) -> anyhow::Result<Endpoint> {
    let e = Endpoint::parse(&c.url)?;
    if !e.is_loopback() && !c.allow_remote {
        bail!("{} is not a loopback address: pass --allow-remote to load another machine", e.host);
    }
    Ok(e)
}

/// The certificates to trust: Mozilla's roots, and `--ca-file`'s.
fn tls(c: &Common) -> anyhow::Result<Tls> {
    Ok(match &c.ca_file {
        Some(path) => Tls::with_pem_file(path)?,
        None => Tls::default(),
    })
}

fn sources(c: &Common, connections: usize) -> Vec<IpAddr> {
    let n = c.sources.unwrap_or(if connections > 8000 { connections.div_ceil(8000) } else { 0 });
    load::loopback_sources(n)
}

fn config(c: &Common, l: &LoadArgs, max_tables: usize) -> anyhow::Result<LoadConfig> {
    let mut cfg = LoadConfig::new(endpoint(c)?);
    cfg.tls = tls(c)?;
    cfg.mode = match l.mode {
        ModeArg::Game => Mode::Game,
        ModeArg::Echo => Mode::Echo,
    };
    cfg.tables = l.tables;
    for url in &l.seat_urls {
        let e = Endpoint::parse(url)?;
        if !e.is_loopback() && !c.allow_remote {
            bail!("{} is not a loopback address: pass --allow-remote to load another machine", e.host);
        }
        cfg.seat_endpoints.push(e);
    }
    cfg.think = Duration::from_millis(l.think_ms);
    cfg.think_jitter = l.think_jitter;
    cfg.ramp_per_sec = l.ramp;
    cfg.sources = sources(c, max_tables * 4);
    cfg.rules =
        Rules { match_end: l.hands.map_or(Rules::default().match_end, MatchEnd::Hands), ..Rules::default() };
    cfg.rules.check().map_err(|e| anyhow::anyhow!("--hands: {e}"))?;
    cfg.tempo = match l.tempo {
        TempoArg::Relaxed => Tempo::Relaxed,
        TempoArg::Normal => Tempo::Normal,
        TempoArg::Fast => Tempo::Fast,
    };
    cfg.restart = !l.no_restart;
    cfg.server_pid = c.server_pid;
    cfg.cpu_of.clone_from(&c.cpu_of);
    cfg.read_buffer = l.read_buffer;
    if let Some(path) = &l.acks_out {
        load::AckLog::open(path).with_context(|| format!("--acks-out {}", path.display()))?;
    }
    cfg.acks_out.clone_from(&l.acks_out);
    cfg.reconnect = l.reconnect;
    cfg.signed_in = l.signed_in;
    Ok(cfg)
}

fn emit<T: Serialize>(c: &Common, value: &T, table: impl FnOnce() -> String) -> anyhow::Result<()> {
    let json = serde_json::to_string_pretty(value)?;
    if let Some(path) = &c.json_out {
        std::fs::write(path, &json).with_context(|| format!("writing {}", path.display()))?;
    }
    if c.json {
        println!("{json}");
    } else {
        print!("{}", table());
    }
    Ok(())
}

async fn run(a: RunArgs) -> anyhow::Result<()> {
    let mut cfg = config(&a.common, &a.load, a.load.tables)?;
    cfg.warmup = Duration::from_secs_f64(a.warmup);
    cfg.duration = Duration::from_secs_f64(a.duration);
    eprintln!(
        "spades-load: {} tables ({} connections) against {}, think {} ms, measuring {:.0} s",
        cfg.tables,
        cfg.tables * 4,
        cfg.endpoint.ws,
        a.load.think_ms,
        a.duration
    );
    let report = load::run(&cfg).await?;
    emit(&a.common, &report, || report.to_table())?;
    if !report.clean() {
        std::process::exit(1);
    }
    Ok(())
}

/// One round's figures of `spades-load accounts`.
#[derive(Debug, Default, Serialize)]
struct AccountsRound {
    anonymous_actions_per_s: f64,
    signed_in_actions_per_s: f64,
    anonymous_p99_ms: f64,
    signed_in_p99_ms: f64,
    rest_anonymous_per_s: f64,
    rest_signed_in_per_s: f64,
}

/// Requests/s of `get` (a URL and maybe a bearer token) answered 200, with
/// `concurrency` in flight, for `seconds`.
async fn rest_rate(
    http: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
    concurrency: usize,
    seconds: f64,
) -> anyhow::Result<f64> {
    let until = tokio::time::Instant::now() + Duration::from_secs_f64(seconds);
    let mut workers = Vec::new();
    for _ in 0..concurrency {
        let (http, url, bearer) = (http.clone(), url.to_owned(), bearer.map(str::to_owned));
        workers.push(tokio::spawn(async move {
            let (mut ok, mut bad) = (0u64, 0u64);
            while tokio::time::Instant::now() < until {
                let mut req = http.get(&url);
                if let Some(b) = &bearer {
                    req = req.bearer_auth(b);
                }
                match req.send().await {
                    Ok(r) if r.status() == 200 => {
                        let _ = r.bytes().await;
                        ok += 1;
                    }
                    _ => bad += 1,
                }
            }
            (ok, bad)
        }));
    }
    let (mut ok, mut bad) = (0, 0);
    for w in workers {
        let (o, b) = w.await?;
        ok += o;
        bad += b;
    }
    if bad > 0 {
        bail!("{bad} requests to {url} failed (raise the server's limits.requests_per_minute_per_ip)");
    }
    Ok(ok as f64 / seconds)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

async fn accounts(a: AccountsArgs) -> anyhow::Result<()> {
    let mut cfg = config(&a.common, &a.load, a.load.tables)?;
    cfg.warmup = Duration::from_secs_f64(a.warmup);
    cfg.duration = Duration::from_secs_f64(a.duration);
    let client = Client::with_endpoint(cfg.endpoint.clone()).with_tls(cfg.tls.clone());
    let http = cfg.tls.http_client();
    // One table to read, one account to read as.
    let table = client.create_table(&spades_client::protocol::CreateTable::default()).await?.table;
    let device = spades_client::account::DeviceSecret::random()?;
    let (_, session) = client.sign_in_guest(&device, None).await?;
    let status = format!("{}/api/v1/tables/{table}", cfg.endpoint.http);
    let me = format!("{}/api/v1/me", cfg.endpoint.http);
    let mut rounds = Vec::new();
    for round in 1..=a.rounds {
        let mut r = AccountsRound::default();
        // Each round starts with the other kind: neither gains from going
        // first or second.
        let order = if round % 2 == 1 { [false, true] } else { [true, false] };
        for signed_in in order {
            cfg.signed_in = signed_in;
            let report = load::run(&cfg).await?;
            if !report.clean() {
                bail!(
                    "round {round} ({}) had errors:\n{}",
                    if signed_in { "signed in" } else { "anonymous" },
                    report.to_table()
                );
            }
            if signed_in {
                (r.signed_in_actions_per_s, r.signed_in_p99_ms) =
                    (report.actions_per_s, report.latency_ms.p99);
            } else {
                (r.anonymous_actions_per_s, r.anonymous_p99_ms) =
                    (report.actions_per_s, report.latency_ms.p99);
            }
        }
        r.rest_anonymous_per_s = rest_rate(&http, &status, None, a.concurrency, a.rest_seconds).await?;
        r.rest_signed_in_per_s =
            rest_rate(&http, &me, Some(&session.0), a.concurrency, a.rest_seconds).await?;
        eprintln!("spades-load accounts: round {round}: {r:?}");
        rounds.push(r);
    }
    let m = |f: fn(&AccountsRound) -> f64| median(rounds.iter().map(f).collect());
    let (anon, signed) = (m(|r| r.anonymous_actions_per_s), m(|r| r.signed_in_actions_per_s));
    let (rest_anon, rest_signed) = (m(|r| r.rest_anonymous_per_s), m(|r| r.rest_signed_in_per_s));
    let table = format!(
        "| {} tables, think {} ms, medians of {} rounds | anonymous | signed in | signed in / anonymous |\n\
         |---|---|---|---|\n\
         | accepted actions/s | {anon:.0} | {signed:.0} | {:.3} |\n\
         | action latency p99, ms | {:.1} | {:.1} | |\n\
         | REST requests/s ({} in flight): `GET /api/v1/tables/{{id}}` without a session, `GET /api/v1/me` with one | {rest_anon:.0} | {rest_signed:.0} | {:.3} |\n",
        cfg.tables,
        a.load.think_ms,
        a.rounds,
        signed / anon.max(1e-9),
        m(|r| r.anonymous_p99_ms),
        m(|r| r.signed_in_p99_ms),
        a.concurrency,
        rest_signed / rest_anon.max(1e-9),
    );
    emit(&a.common, &rounds, || table.clone())
}

async fn capacity(a: CapacityArgs) -> anyhow::Result<()> {
    let max = a.steps.iter().copied().max().unwrap_or(0);
    let cfg = config(&a.common, &a.load, max)?;
    let cap = CapacityConfig {
        steps: a.steps.clone(),
        hold: Duration::from_secs_f64(a.hold),
        settle: Duration::from_secs_f64(a.settle),
        p99_limit_ms: a.p99_ms,
    };
    eprintln!(
        "spades-load capacity: steps {:?}, think {} ms, hold {:.0} s, p99 limit {} ms",
        cap.steps, a.load.think_ms, a.hold, a.p99_ms
    );
    let report = load::capacity(&cfg, &cap, |step| {
        let r = &step.report;
        eprintln!(
            "  {} tables: {:.0} actions/s, p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms, \
             failures {}, server RSS {:.0} MiB, CPU server {:.0}% / load {:.0}% -> {}",
            r.tables,
            r.actions_per_s,
            r.latency_ms.p50,
            r.latency_ms.p99,
            r.latency_ms.p999,
            r.latency_ms.max,
            r.errors + r.disconnects + r.setup_failures,
            r.server_rss_kib.unwrap_or(0) as f64 / 1024.0,
            r.server_cpu_pct.unwrap_or(0.0),
            r.client_cpu_pct.unwrap_or(0.0),
            if step.held { "held" } else { "NOT held" }
        );
        for (reason, n) in &r.failure_reasons {
            eprintln!("    {n} × {reason}");
        }
    })
    .await?;
    emit(&a.common, &report, || report.to_table())
}

async fn memory(a: MemoryArgs) -> anyhow::Result<()> {
    let e = endpoint(&a.common)?;
    let pid = a.common.server_pid.context("--server-pid is needed to read the server's memory")?;
    let report = load::memory(&e, pid, a.tables, a.connections, &sources(&a.common, a.connections)).await?;
    emit(&a.common, &report, || report.to_table())
}

async fn bot(a: BotArgs) -> anyhow::Result<()> {
    let client = Client::with_endpoint(endpoint(&a.common)?).with_tls(tls(&a.common)?);
    let think = Duration::from_millis(a.think_ms);
    let moves = load::bots(&client, a.table, a.seats, think, a.owner_token.as_deref()).await?;
    eprintln!("the match is over: the bots made {moves} moves");
    Ok(())
}

fn read<T: serde::de::DeserializeOwned>(path: Option<&PathBuf>) -> anyhow::Result<Option<T>> {
    let Some(path) = path else { return Ok(None) };
    if !path.exists() {
        eprintln!("spades-load summary: {} is missing (scenario skipped or failed)", path.display());
        return Ok(None);
    }
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(Some(serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?))
}

fn summary(a: SummaryArgs) -> anyhow::Result<()> {
    let bench = load::summary::Bench {
        capacity: read(a.capacity.as_ref())?,
        throughput: read(a.throughput.as_ref())?,
        echo: read(a.echo.as_ref())?,
        memory: read(a.memory.as_ref())?,
    };
    print!("{}", bench.to_markdown());
    if let Some(path) = &a.json_out {
        let json = serde_json::json!({ "rows": bench.rows(), "reports": bench });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
