//! The event log in SQLite (the default, one file under the data directory)
//! or PostgreSQL, through sqlx.
//!
//! Every write goes through one writer task, on connections of its own (so
//! that reads, however many or slow, never starve it), that commits
//! whatever has queued up since its last commit in a single transaction
//! (group commit): under load, many tables' actions share one fsync. A
//! write's caller is answered once its transaction has committed (so a
//! table never shows a move that is not durable), or with an error after
//! the write timeout, whichever comes first. When a batch fails, each of its writes is
//! retried in a transaction of its own and each caller gets its own answer:
//! one bad write fails nobody else's.

use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use spades_engine::{Action, BySeat, Card, HandResult, MatchResult, Seat};
use spades_protocol::{ActionSource, MatchSummary, RecordSeat, SeatKind, TableOptions};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use tokio::sync::{mpsc, oneshot};
use tracing::{info, warn};
use uuid::Uuid;

use super::{
    ActionRecord, FairRecord, Fence, SeatRecord, StorageError, StoreOptions, StoredTable, TableRecord,
    db_location, scrub,
};

/// Most writes committed in one transaction.
const MAX_BATCH: usize = 1024;

/// One write to the log.
#[derive(Debug, Clone)]
pub(super) enum WriteOp {
    Table(TableRecord),
    Seats(Uuid, BySeat<Option<SeatRecord>>),
    Start { table: Uuid, seed: u64, fair: Option<FairRecord>, at: u64 },
    Action(Uuid, ActionRecord),
    Hand(Uuid, HandResult),
    Finish { table: Uuid, result: MatchResult, at: u64 },
    Close { table: Uuid, at: u64 },
    Epoch(Uuid),
    Chat(super::ChatRow),
}

impl WriteOp {
    /// The table written to.
    pub(super) fn table(&self) -> Uuid {
        match self {
            WriteOp::Table(t) => t.id,
            WriteOp::Chat(c) => c.table,
            WriteOp::Seats(t, _)
            | WriteOp::Action(t, _)
            | WriteOp::Hand(t, _)
            | WriteOp::Epoch(t)
            | WriteOp::Start { table: t, .. }
            | WriteOp::Finish { table: t, .. }
            | WriteOp::Close { table: t, .. } => *t,
        }
    }
}

/// A write's answer: the new epoch for [`WriteOp::Epoch`], else 0.
type WriteResult = Result<u64, StorageError>;

/// A write and, in cluster mode, the fence it must pass.
type Write<'a> = (&'a WriteOp, Option<&'a Fence>);

#[derive(Debug)]
struct WriteReq {
    op: WriteOp,
    fence: Option<Fence>,
    done: oneshot::Sender<WriteResult>,
}

/// Which database.
#[derive(Debug, Clone)]
pub(super) enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Longest the readiness ping waits for the database.
const PING_TIMEOUT: Duration = Duration::from_millis(1500);

/// The SQL event log.
pub struct SqlStore {
    /// Reads (and the test helper); the writer has a pool of its own.
    pool: Pool,
    writer: mpsc::Sender<WriteReq>,
    write_timeout: Duration,
    read_timeout: Duration,
    /// The database for messages: `scheme://host:port/db` or the SQLite
    /// file, never a password.
    location: String,
}

impl std::fmt::Debug for SqlStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlStore")
            .field("kind", &self.kind())
            .field("location", &self.location)
            .field("write_timeout", &self.write_timeout)
            .field("read_timeout", &self.read_timeout)
            .finish_non_exhaustive()
    }
}

fn db_err(e: sqlx::Error) -> StorageError {
    StorageError::Database(e.to_string())
}

/// A failure of `what` (`reading`, `writing`) on the database at
/// `location`, which it names.
fn failed(what: &str, location: &str, e: &sqlx::Error) -> StorageError {
    StorageError::Database(format!("{what} {location}: {e}{}", tls_hint(e)))
}

/// A hint for TLS failures, which sqlx words tersely (a refused
/// certificate arrives as an I/O error naming it).
fn tls_hint(e: &sqlx::Error) -> &'static str {
    let tls = match e {
        sqlx::Error::Tls(_) => true,
        sqlx::Error::Io(io) => {
            let text = io.to_string().to_lowercase();
            ["certificate", "tls", "handshake"].iter().any(|w| text.contains(w))
        }
        _ => false,
    };
    if tls {
        " (TLS: check sslmode, that sslrootcert names the CA that signed the server's certificate, \
         and that the certificate is valid for the host name in the URL)"
    } else {
        ""
    }
}

/// True for failures of the connection or the database as a whole (the
/// same for every write), as opposed to one write's own fault (a
/// constraint it breaks, a value the database refuses).
/// True for PostgreSQL's "transaction rollback" class (deadlock detected,
/// serialization failure): the same transaction may simply run again.
fn is_rolled_back(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.code().is_some_and(|c| c == "40P01" || c == "40001"))
}

fn is_transient(pool: &Pool, e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(d) => {
            let code = d.code().unwrap_or_default();
            match pool {
                // BUSY, LOCKED, IOERR, FULL, CANTOPEN, PROTOCOL (extended
                // codes keep the primary code in the low byte).
                Pool::Sqlite(_) => {
                    code.parse::<u32>().is_ok_and(|n| matches!(n & 0xff, 5 | 6 | 10 | 13 | 14 | 15))
                }
                // SQLSTATE classes: connection exception, insufficient
                // resources, operator intervention, system error,
                // transaction rollback (serialization, deadlock).
                Pool::Postgres(_) => ["08", "53", "57", "58", "40"].iter().any(|c| code.starts_with(c)),
            }
        }
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::BeginFailed => true,
        _ => false,
    }
}

impl SqlStore {
    /// Opens (creating if needed) the database with the default
    /// [`StoreOptions`], runs the migrations and starts the writer.
    ///
    /// `url` empty: the SQLite file `spades.db` in `data_dir`.
    ///
    /// # Errors
    /// When the database cannot be opened or migrated.
    pub async fn open(url: &str, data_dir: &Path) -> Result<SqlStore, StorageError> {
        SqlStore::open_with(url, data_dir, StoreOptions::default()).await
    }

    /// [`SqlStore::open`] with explicit options. Error messages name the
    /// database by [`db_location`] only: never a password.
    ///
    /// # Errors
    /// When the database cannot be opened or migrated.
    pub async fn open_with(
        url: &str,
        data_dir: &Path,
        options: StoreOptions,
    ) -> Result<SqlStore, StorageError> {
        let location =
            if url.is_empty() { data_dir.join("spades.db").display().to_string() } else { db_location(url) };
        let named = |what: &str, e: &dyn std::fmt::Display| {
            StorageError::Database(scrub(&format!("{what} {location}: {e}"), url))
        };
        let connect_failed = |e: sqlx::Error| {
            StorageError::Database(scrub(&format!("connecting to {location}: {e}{}", tls_hint(&e)), url))
        };
        let (pool, write_pool) = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let idle = options.idle_in_transaction.map(|d| d.as_millis().max(1));
            let pool_options = move |max, extra: &'static str| {
                PgPoolOptions::new()
                    .max_connections(max)
                    .acquire_timeout(options.acquire_timeout)
                    .after_connect(move |conn, _| {
                        Box::pin(async move {
                            if let Some(ms) = idle {
                                let set = format!("SET idle_in_transaction_session_timeout = {ms}");
                                sqlx::raw_sql(sqlx::AssertSqlSafe(set)).execute(&mut *conn).await?;
                            }
                            if !extra.is_empty() {
                                sqlx::raw_sql(extra).execute(&mut *conn).await?;
                            }
                            Ok(())
                        })
                    })
            };
            let pool = pool_options(8, "").connect(url).await.map_err(connect_failed)?;
            sqlx::migrate!("../../migrations/postgres")
                .run(&pool)
                .await
                .map_err(|e| named("migrating", &e))?;
            // The writer's statements all find their rows by key. Its
            // prepared statements keep the plan chosen on first use, and a
            // plan chosen while `tables` was small scanned the whole table
            // for every move once it had grown: no sequential scans here.
            let write_pool =
                pool_options(2, "SET enable_seqscan = off").connect(url).await.map_err(connect_failed)?;
            (Pool::Postgres(pool), Pool::Postgres(write_pool))
        } else {
            let connect_options = if url.is_empty() {
                std::fs::create_dir_all(data_dir).map_err(|e| {
                    StorageError::Database(format!("creating the data directory {}: {e}", data_dir.display()))
                })?;
                keep_private(data_dir)?;
                SqliteConnectOptions::new().filename(data_dir.join("spades.db"))
            } else {
                SqliteConnectOptions::from_str(url).map_err(|e| named("opening", &e))?
            };
            let connect_options = connect_options
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .foreign_keys(true);
            let pool = SqlitePoolOptions::new()
                .max_connections(4)
                .acquire_timeout(options.acquire_timeout)
                .connect_with(connect_options.clone().busy_timeout(Duration::from_secs(10)))
                .await
                .map_err(|e| named("opening", &e))?;
            sqlx::migrate!("../../migrations/sqlite").run(&pool).await.map_err(|e| named("migrating", &e))?;
            // One writer connection: SQLite takes one writer at a time.
            let write_pool = SqlitePoolOptions::new()
                .max_connections(1)
                .acquire_timeout(options.acquire_timeout)
                .connect_with(connect_options.busy_timeout(options.acquire_timeout))
                .await
                .map_err(|e| named("opening", &e))?;
            (Pool::Sqlite(pool), Pool::Sqlite(write_pool))
        };
        let (writer, rx) = mpsc::channel(4 * MAX_BATCH);
        tokio::spawn(write_loop(write_pool, rx, location.clone(), options.commit_interval));
        Ok(SqlStore {
            pool,
            writer,
            write_timeout: options.write_timeout,
            read_timeout: options.read_timeout,
            location,
        })
    }

    /// The lease store on the same PostgreSQL database (cluster mode); none
    /// for SQLite.
    pub fn leases(&self) -> Option<super::Leases> {
        match &self.pool {
            Pool::Postgres(p) => Some(super::Leases::new(p.clone(), self.read_timeout)),
            Pool::Sqlite(_) => None,
        }
    }

    /// The account store on the same database.
    pub(super) fn accounts(&self) -> super::AccountStore {
        super::AccountStore::sql(self.pool.clone(), self.read_timeout)
    }

    /// `sqlite` or `postgres`.
    pub fn kind(&self) -> &'static str {
        match self.pool {
            Pool::Sqlite(_) => "sqlite",
            Pool::Postgres(_) => "postgres",
        }
    }

    /// Queues a write and waits for its answer, at most the write timeout.
    pub(super) async fn write(&self, op: WriteOp, fence: Option<Fence>) -> WriteResult {
        let (done, rx) = oneshot::channel();
        let answer = async {
            self.writer.send(WriteReq { op, fence, done }).await.map_err(|_| StorageError::Stopped)?;
            rx.await.map_err(|_| StorageError::Stopped)?
        };
        match tokio::time::timeout(self.write_timeout, answer).await {
            Ok(result) => result,
            Err(_) => {
                metrics::counter!("spades_storage_write_timeouts_total").increment(1);
                Err(StorageError::Database(format!(
                    "writing {}: the event log write timed out after {} ms",
                    self.location,
                    self.write_timeout.as_millis()
                )))
            }
        }
    }

    /// True when the database answers `SELECT 1` within the read timeout
    /// (at most 1.5 s).
    pub(super) async fn ping(&self) -> bool {
        let ping = async {
            match &self.pool {
                Pool::Sqlite(p) => sqlx::query("SELECT 1").execute(p).await.is_ok(),
                Pool::Postgres(p) => sqlx::query("SELECT 1").execute(p).await.is_ok(),
            }
        };
        tokio::time::timeout(self.read_timeout.min(PING_TIMEOUT), ping).await.unwrap_or(false)
    }

    /// Runs one read query, at most the read timeout; a failure names the
    /// database.
    async fn read<T>(&self, query: impl Future<Output = Result<T, sqlx::Error>>) -> Result<T, StorageError> {
        match tokio::time::timeout(self.read_timeout, query).await {
            Ok(result) => result.map_err(|e| failed("reading", &self.location, &e)),
            Err(_) => {
                metrics::counter!("spades_storage_read_timeouts_total").increment(1);
                Err(StorageError::Database(format!(
                    "reading {}: no answer within {} ms",
                    self.location,
                    self.read_timeout.as_millis()
                )))
            }
        }
    }

    /// Unfinished, unclosed tables, oldest first.
    pub(super) async fn unfinished(&self) -> Result<Vec<Result<StoredTable, StorageError>>, StorageError> {
        let rows = self
            .read(async {
                match &self.pool {
                    Pool::Sqlite(p) => sqlite::table_rows(p, Filter::Open).await,
                    Pool::Postgres(p) => postgres::table_rows(p, Filter::Open).await,
                }
            })
            .await?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            out.push(self.assemble(row).await);
        }
        Ok(out)
    }

    pub(super) async fn get(&self, table: Uuid) -> Result<Option<StoredTable>, StorageError> {
        let rows = self
            .read(async {
                match &self.pool {
                    Pool::Sqlite(p) => sqlite::table_rows(p, Filter::One(table.to_string())).await,
                    Pool::Postgres(p) => postgres::table_rows(p, Filter::One(table.to_string())).await,
                }
            })
            .await?;
        match rows.into_iter().next() {
            Some(row) => self.assemble(row).await.map(Some),
            None => Ok(None),
        }
    }

    pub(super) async fn recent(&self, limit: usize) -> Result<Vec<StoredTable>, StorageError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .read(async {
                match &self.pool {
                    Pool::Sqlite(p) => sqlite::table_rows(p, Filter::Recent(limit)).await,
                    Pool::Postgres(p) => postgres::table_rows(p, Filter::Recent(limit)).await,
                }
            })
            .await?;
        let mut out = Vec::new();
        for row in rows {
            match self.assemble(row).await {
                Ok(t) => out.push(t),
                Err(e) => warn!(error = %e, "skipping an unreadable match in the recent list"),
            }
        }
        Ok(out)
    }

    /// The match list from the summary columns and the seats, one query.
    pub(super) async fn summaries(&self, page: &super::MatchPage) -> Result<Vec<MatchSummary>, StorageError> {
        let rows = self
            .read(async {
                match &self.pool {
                    Pool::Sqlite(p) => sqlite::summary_rows(p, page).await,
                    Pool::Postgres(p) => postgres::summary_rows(p, page).await,
                }
            })
            .await?;
        let mut out: Vec<MatchSummary> = Vec::new();
        for row in rows {
            let (
                id,
                name,
                created_at,
                result,
                hands_played,
                score_ns,
                score_ew,
                closed_at,
                seat,
                seat_name,
                kind,
                left,
                players,
                account,
            ) = row;
            let t = id.as_str();
            let fresh = out.last().is_none_or(|s: &MatchSummary| s.table.to_string() != id);
            if fresh {
                let table = Uuid::parse_str(t).map_err(|_| corrupt(t, "the id is not a UUID"))?;
                let result: Option<MatchResult> = match result {
                    Some(json) => Some(
                        serde_json::from_str(&json)
                            .map_err(|e| corrupt(t, format!("unreadable result: {e}")))?,
                    ),
                    None => None,
                };
                let score =
                    |n: i64| i32::try_from(n).map_err(|_| corrupt(t, format!("score out of range: {n}")));
                out.push(MatchSummary {
                    table,
                    name,
                    created_at: u64::try_from(created_at)
                        .map_err(|_| corrupt(t, "negative creation time"))?,
                    seats: Vec::new(),
                    finished: result.is_some(),
                    hands_played: usize::try_from(hands_played)
                        .map_err(|_| corrupt(t, "negative hand count"))?,
                    scores: [score(score_ns)?, score(score_ew)?],
                    abandoned: closed_at.is_some() && result.is_none(),
                    result,
                });
            }
            if let (Some(seat), Some(seat_name), Some(kind), Some(left), Some(summary)) =
                (seat, seat_name, kind, left, out.last_mut())
            {
                let players = match players {
                    Some(json) => serde_json::from_str(&json)
                        .map_err(|e| corrupt(t, format!("unreadable players: {e}")))?,
                    None => Vec::new(),
                };
                let account = match account {
                    Some(a) => {
                        Some(Uuid::parse_str(&a).map_err(|_| corrupt(t, "a seat's account is not a UUID"))?)
                    }
                    None => None,
                };
                summary.seats.push(RecordSeat {
                    seat: seat_of(t, seat)?,
                    name: seat_name,
                    kind: seat_kind(t, &kind)?,
                    account,
                    left: left != 0,
                    players,
                });
            }
        }
        Ok(out)
    }

    async fn assemble(&self, row: TableRow) -> Result<StoredTable, StorageError> {
        let (seats, actions, hands) = self
            .read(async {
                match &self.pool {
                    Pool::Sqlite(p) => sqlite::children(p, &row.id).await,
                    Pool::Postgres(p) => postgres::children(p, &row.id).await,
                }
            })
            .await?;
        decode(row, seats, actions, hands)
    }
}

/// Runs one batch of writes in one transaction.
async fn run_batch(pool: &Pool, ops: &[Write<'_>]) -> Result<Vec<WriteResult>, sqlx::Error> {
    match pool {
        Pool::Sqlite(p) => sqlite::write_batch(p, ops).await,
        Pool::Postgres(p) => postgres::write_batch(p, ops).await,
    }
}

/// Commits queued writes in batches until every sender is gone. A batch
/// that fails for one write's fault is retried write by write, each in its
/// own transaction, so that only the bad write fails; a failure of the
/// database itself fails the whole batch at once (every write would fail
/// the same way). A commit starts at most once per `interval`: a write that
/// arrives sooner waits for the rest of it, with whatever else arrives.
async fn write_loop(pool: Pool, mut rx: mpsc::Receiver<WriteReq>, location: String, interval: Duration) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut last: Option<Instant> = None;
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        if let Some(last) = last
            && last.elapsed() < interval
        {
            tokio::time::sleep_until((last + interval).into()).await;
            while batch.len() < MAX_BATCH
                && let Ok(req) = rx.try_recv()
            {
                batch.push(req);
            }
        }
        let started = Instant::now();
        last = Some(started);
        let ops: Vec<Write<'_>> = batch.iter().map(|r| (&r.op, r.fence.as_ref())).collect();
        // A deadlock or serialization failure (PostgreSQL chose this
        // transaction to abort, e.g. against a lease renewal) is tried
        // again at once, a few times: nothing of it was written.
        let mut outcome = run_batch(&pool, &ops).await;
        for _ in 0..3 {
            match &outcome {
                Err(e) if is_rolled_back(e) => {
                    metrics::counter!("spades_storage_batch_retries_total").increment(1);
                    outcome = run_batch(&pool, &ops).await;
                }
                _ => break,
            }
        }
        let results = match outcome {
            Ok(results) => results,
            Err(e) if ops.len() > 1 && !is_transient(&pool, &e) => {
                warn!(error = %e, writes = ops.len(), "a batch of writes failed; retrying each alone");
                metrics::counter!("spades_storage_batch_retries_total").increment(1);
                let mut results = Vec::with_capacity(ops.len());
                let mut down: Option<String> = None;
                for op in &ops {
                    if let Some(message) = &down {
                        results.push(Err(StorageError::Database(message.clone())));
                        continue;
                    }
                    results.push(match run_batch(&pool, &[*op]).await {
                        Ok(mut r) => r.pop().unwrap_or(Ok(0)),
                        Err(e) => {
                            if is_transient(&pool, &e) {
                                down = Some(format!("writing {location}: {e}"));
                            }
                            warn!(error = %e, table = %op.0.table(), %location, "a write failed");
                            Err(failed("writing", &location, &e))
                        }
                    });
                }
                results
            }
            Err(e) => {
                warn!(error = %e, writes = ops.len(), %location, "a batch of writes failed");
                let message = format!("writing {location}: {e}");
                ops.iter().map(|_| Err(StorageError::Database(message.clone()))).collect()
            }
        };
        metrics::histogram!("spades_storage_commit_seconds").record(started.elapsed().as_secs_f64());
        metrics::histogram!("spades_storage_batch_size").record(batch.len() as f64);
        for (req, result) in batch.drain(..).zip(results) {
            let _ = req.done.send(result);
        }
    }
    info!("event log writer stopped");
}

/// Which tables to read.
#[derive(Debug, Clone)]
enum Filter {
    Open,
    One(String),
    Recent(i64),
}

/// A `tables` row as stored.
#[derive(Debug, Clone)]
struct TableRow {
    id: String,
    name: String,
    options: String,
    owner_hash: String,
    created_at: i64,
    seed: Option<i64>,
    result: Option<String>,
    epoch: i64,
    fair: Option<String>,
    closed: bool,
    owner_account: Option<String>,
}

/// seat, name, kind, token_hash, has_left, autopilot, timeouts, grace_expired, players
type SeatRow = (i64, String, String, Option<String>, i64, i64, i64, i64, Option<String>, Option<String>);
/// idx, seat, kind, value, source, at, seq
type ActionRow = (i64, i64, String, String, String, i64, i64);
type HandRow = (i64, String);
/// A table's summary columns joined with one of its seats (none: NULLs).
type SummaryRow = (
    String,
    String,
    i64,
    Option<String>,
    i64,
    i64,
    i64,
    Option<i64>,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
);

fn corrupt(table: &str, reason: impl Into<String>) -> StorageError {
    StorageError::Corrupt { table: table.to_owned(), reason: reason.into() }
}

fn seat_of(table: &str, n: i64) -> Result<Seat, StorageError> {
    u8::try_from(n)
        .ok()
        .and_then(Seat::from_index)
        .ok_or_else(|| corrupt(table, format!("bad seat number {n}")))
}

fn seat_kind(table: &str, kind: &str) -> Result<SeatKind, StorageError> {
    match kind {
        "human" => Ok(SeatKind::Human),
        "bot" => Ok(SeatKind::Bot),
        other => Err(corrupt(table, format!("unknown seat kind {other:?}"))),
    }
}

fn kind_column(kind: SeatKind) -> &'static str {
    match kind {
        SeatKind::Human => "human",
        SeatKind::Bot => "bot",
    }
}

/// Checks and converts stored rows; anything unexpected is a
/// [`StorageError::Corrupt`] naming the table and the problem.
fn decode(
    row: TableRow,
    seats: Vec<SeatRow>,
    actions: Vec<ActionRow>,
    hands: Vec<HandRow>,
) -> Result<StoredTable, StorageError> {
    let t = row.id.as_str();
    let id = Uuid::parse_str(t).map_err(|_| corrupt(t, "the id is not a UUID"))?;
    let options: TableOptions =
        serde_json::from_str(&row.options).map_err(|e| corrupt(t, format!("unreadable options: {e}")))?;
    let created_at_ms = u64::try_from(row.created_at).map_err(|_| corrupt(t, "negative creation time"))?;
    let epoch = u64::try_from(row.epoch).map_err(|_| corrupt(t, "negative epoch"))?;
    let mut seat_records = BySeat([None, None, None, None]);
    for (n, name, kind, token_hash, left, autopilot, timeouts, grace_expired, players, account) in seats {
        let seat = seat_of(t, n)?;
        let kind = seat_kind(t, &kind)?;
        let timeouts = u8::try_from(timeouts)
            .map_err(|_| corrupt(t, format!("{seat}: bad timeout count {timeouts}")))?;
        let players = match players {
            Some(json) => serde_json::from_str(&json)
                .map_err(|e| corrupt(t, format!("{seat}: unreadable players: {e}")))?,
            None => Vec::new(),
        };
        let account = match account {
            Some(a) => Some(
                Uuid::parse_str(&a).map_err(|_| corrupt(t, format!("{seat}: the account is not a UUID")))?,
            ),
            None => None,
        };
        seat_records[seat] = Some(SeatRecord {
            name,
            kind,
            token_hash,
            account,
            left: left != 0,
            autopilot: autopilot != 0,
            timeouts,
            grace_expired: grace_expired != 0,
            players,
        });
    }
    let mut records = Vec::with_capacity(actions.len());
    for (i, (idx, seat, kind, value, source, at, seq)) in actions.into_iter().enumerate() {
        if usize::try_from(idx).ok() != Some(i) {
            return Err(corrupt(t, format!("the action log has a gap at position {i} (found {idx})")));
        }
        let action = action_of(&kind, &value)
            .ok_or_else(|| corrupt(t, format!("action {i}: bad action {kind:?} {value:?}")))?;
        let source = match source.as_str() {
            "player" => ActionSource::Player,
            "timeout" => ActionSource::Timeout,
            "autopilot" => ActionSource::Autopilot,
            "bot" => ActionSource::Bot,
            other => return Err(corrupt(t, format!("action {i}: unknown source {other:?}"))),
        };
        records.push(ActionRecord {
            index: i,
            seat: seat_of(t, seat)?,
            action,
            source,
            at_ms: u64::try_from(at).unwrap_or(0),
            seq: u64::try_from(seq).unwrap_or(0),
        });
    }
    let mut hand_results = Vec::with_capacity(hands.len());
    for (n, json) in hands {
        let h: HandResult = serde_json::from_str(&json)
            .map_err(|e| corrupt(t, format!("hand {n}: unreadable result: {e}")))?;
        hand_results.push(h);
    }
    let result = match row.result {
        Some(json) => {
            Some(serde_json::from_str(&json).map_err(|e| corrupt(t, format!("unreadable result: {e}")))?)
        }
        None => None,
    };
    let fair = match row.fair {
        Some(json) => Some(
            serde_json::from_str(&json)
                .map_err(|e| corrupt(t, format!("unreadable fair-deal seeds: {e}")))?,
        ),
        None => None,
    };
    let owner_account = match row.owner_account {
        Some(a) => Some(Uuid::parse_str(&a).map_err(|_| corrupt(t, "the owner's account is not a UUID"))?),
        None => None,
    };
    Ok(StoredTable {
        table: TableRecord {
            id,
            name: row.name,
            options,
            owner_hash: row.owner_hash,
            owner_account,
            created_at_ms,
        },
        seats: seat_records,
        seed: row.seed.map(|s| s as u64),
        fair,
        actions: records,
        hands: hand_results,
        result,
        epoch,
        closed: row.closed,
    })
}

/// The stored action of `kind` (`bid`/`play`) and `value`, if well formed.
fn action_of(kind: &str, value: &str) -> Option<Action> {
    match kind {
        "bid" => value.parse().ok().map(Action::Bid),
        "play" => value.parse::<Card>().ok().map(Action::Play),
        _ => None,
    }
}

/// The stored `seq` of an action: NULL when not known.
fn seq_column(a: &ActionRecord) -> Option<i64> {
    (a.seq > 0).then(|| i64::try_from(a.seq).unwrap_or(i64::MAX))
}

/// The condition that keeps a started match in the match lists: unless it
/// was abandoned (closed unfinished), a person made a move in it.
const LISTED: &str = "(closed_at IS NULL OR result IS NOT NULL \
                      OR EXISTS (SELECT 1 FROM actions a WHERE a.table_id = tables.id AND a.source = 'player'))";

fn action_columns(a: &ActionRecord) -> (&'static str, String, &'static str) {
    let (kind, value) = match a.action {
        Action::Bid(b) => ("bid", b.to_string()),
        Action::Play(c) => ("play", c.to_string()),
    };
    let source = match a.source {
        ActionSource::Player => "player",
        ActionSource::Timeout => "timeout",
        ActionSource::Autopilot => "autopilot",
        ActionSource::Bot => "bot",
    };
    (kind, value, source)
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The same SQL for both databases (`$n` placeholders work in both).
macro_rules! backend {
    ($module:ident, $pool:ty, $own:path, $fences:path, $insert_actions:path, $insert_chat:path) => {
        mod $module {
            use super::*;

            /// Writes `ops` in one transaction: `Err` when the transaction
            /// failed (nothing of it is written), else each write's own
            /// answer (a conflicting action or a missing table fails only
            /// that write; the others commit).
            pub(super) async fn write_batch(
                pool: &$pool,
                writes: &[Write<'_>],
            ) -> Result<Vec<WriteResult>, sqlx::Error> {
                // Regrouped by kind: new tables first (the others refer to
                // them), then the rest in order, then every action in one
                // multi-row insert, then hands. Every statement may be
                // repeated without changing the outcome, so a write retried
                // after a lost answer (or a timeout) is harmless even when
                // the first attempt is in the same batch.
                let ops: Vec<&WriteOp> = writes.iter().map(|(op, _)| *op).collect();
                let mut results: Vec<WriteResult> = ops.iter().map(|_| Ok(0)).collect();
                let mut tx = pool.begin().await?;
                let mut actions = Vec::new();
                let mut hands = Vec::new();
                for (op, fence) in writes.iter().filter(|(op, _)| matches!(op, WriteOp::Table(_))) {
                    if let WriteOp::Table(t) = op {
                        sqlx::query(
                            "INSERT INTO tables (id, name, options, owner_hash, created_at, owner_account) \
                             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
                        )
                        .bind(t.id.to_string())
                        .bind(&t.name)
                        .bind(json(&t.options))
                        .bind(&t.owner_hash)
                        .bind(t.created_at_ms as i64)
                        .bind(t.owner_account.map(|a| a.to_string()))
                        .execute(&mut *tx)
                        .await?;
                        if let Some(fence) = fence {
                            $own(&mut *tx, &t.id.to_string(), fence).await?;
                        }
                    }
                }
                // Fenced writes whose lease is lost are refused; the lease
                // rows stay share-locked until the commit, so no claim can
                // slip in between the check and the write.
                let passed = $fences(&mut *tx, writes).await?;
                for (i, op) in ops.iter().enumerate() {
                    if !passed[i] {
                        results[i] = Err(StorageError::Fenced { table: op.table() });
                        continue;
                    }
                    match op {
                        WriteOp::Table(_) => {}
                        WriteOp::Action(table, a) => actions.push((i, table, a)),
                        WriteOp::Hand(table, h) => hands.push((table, h)),
                        WriteOp::Seats(table, seats) => {
                            let id = table.to_string();
                            sqlx::query("DELETE FROM seats WHERE table_id = $1").bind(&id).execute(&mut *tx).await?;
                            for (seat, s) in seats.iter() {
                                let Some(s) = s else { continue };
                                sqlx::query(
                                    "INSERT INTO seats (table_id, seat, name, kind, token_hash, has_left, \
                                     autopilot, timeouts, grace_expired, players, account_id) \
                                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                                )
                                .bind(&id)
                                .bind(i64::from(seat.index()))
                                .bind(&s.name)
                                .bind(kind_column(s.kind))
                                .bind(&s.token_hash)
                                .bind(i64::from(s.left))
                                .bind(i64::from(s.autopilot))
                                .bind(i64::from(s.timeouts))
                                .bind(i64::from(s.grace_expired))
                                .bind((!s.players.is_empty()).then(|| json(&s.players)))
                                .bind(s.account.map(|a| a.to_string()))
                                .execute(&mut *tx)
                                .await?;
                            }
                        }
                        WriteOp::Start { table, seed, fair, at } => {
                            sqlx::query("UPDATE tables SET seed = $2, started_at = $3, fair = $4 WHERE id = $1")
                                .bind(table.to_string())
                                .bind(*seed as i64)
                                .bind(*at as i64)
                                .bind(fair.as_ref().map(json))
                                .execute(&mut *tx)
                                .await?;
                        }
                        WriteOp::Finish { table, result, at } => {
                            // The first finish time stays.
                            sqlx::query(
                                "UPDATE tables SET finished_at = coalesce(finished_at, $2), result = $3 WHERE id = $1",
                            )
                            .bind(table.to_string())
                            .bind(*at as i64)
                            .bind(json(result))
                            .execute(&mut *tx)
                            .await?;
                        }
                        WriteOp::Chat(message) => $insert_chat(&mut *tx, message).await?,
                        WriteOp::Close { table, at } => {
                            sqlx::query("UPDATE tables SET closed_at = coalesce(closed_at, $2) WHERE id = $1")
                                .bind(table.to_string())
                                .bind(*at as i64)
                                .execute(&mut *tx)
                                .await?;
                        }
                        WriteOp::Epoch(table) => {
                            let epoch: Option<(i64,)> =
                                sqlx::query_as("UPDATE tables SET epoch = epoch + 1 WHERE id = $1 RETURNING epoch")
                                    .bind(table.to_string())
                                    .fetch_optional(&mut *tx)
                                    .await?;
                            results[i] = match epoch {
                                Some((n,)) => u64::try_from(n)
                                    .map_err(|_| corrupt(&table.to_string(), "negative epoch")),
                                None => Err(corrupt(&table.to_string(), "no such table in the log")),
                            };
                        }
                    }
                }
                if !actions.is_empty() {
                    let rows: Vec<(&Uuid, &ActionRecord)> = actions.iter().map(|(_, t, a)| (*t, *a)).collect();
                    let inserted = $insert_actions(&mut *tx, &rows).await?;
                    if inserted < actions.len() as u64 {
                        // Some were stored already: a retry (the same seat
                        // and action: success) or a fork (a conflict).
                        for (i, table, a) in &actions {
                            let stored: Option<(i64, String, String)> = sqlx::query_as(
                                "SELECT seat, kind, value FROM actions WHERE table_id = $1 AND idx = $2",
                            )
                            .bind(table.to_string())
                            .bind(a.index as i64)
                            .fetch_optional(&mut *tx)
                            .await?;
                            let same = stored.is_some_and(|(seat, kind, value)| {
                                seat == i64::from(a.seat.index()) && action_of(&kind, &value) == Some(a.action)
                            });
                            if !same {
                                results[*i] = Err(StorageError::Conflict { table: **table, index: a.index });
                            }
                        }
                    }
                }
                for (table, h) in hands {
                    let id = table.to_string();
                    let number = i64::from(h.hand_number);
                    sqlx::query(
                        "INSERT INTO hands (table_id, hand_number, result) VALUES ($1, $2, $3) \
                         ON CONFLICT (table_id, hand_number) DO NOTHING",
                    )
                    .bind(&id)
                    .bind(number)
                    .bind(json(h))
                    .execute(&mut *tx)
                    .await?;
                    // The summary columns: the count, and the scores after
                    // the latest hand stored.
                    let scores = h.scores().0;
                    sqlx::query(
                        "UPDATE tables SET \
                         hands_played = (SELECT count(*) FROM hands WHERE table_id = $1), \
                         score_ns = CASE WHEN EXISTS (SELECT 1 FROM hands WHERE table_id = $1 AND hand_number > $2) \
                                    THEN score_ns ELSE $3 END, \
                         score_ew = CASE WHEN EXISTS (SELECT 1 FROM hands WHERE table_id = $1 AND hand_number > $2) \
                                    THEN score_ew ELSE $4 END \
                         WHERE id = $1",
                    )
                    .bind(&id)
                    .bind(number)
                    .bind(i64::from(scores[0]))
                    .bind(i64::from(scores[1]))
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await?;
                Ok(results)
            }

            pub(super) async fn table_rows(pool: &$pool, filter: Filter) -> Result<Vec<TableRow>, sqlx::Error> {
                type Row = (
                    String,
                    String,
                    String,
                    String,
                    i64,
                    Option<i64>,
                    Option<String>,
                    i64,
                    Option<String>,
                    Option<i64>,
                    Option<String>,
                );
                const COLUMNS: &str = "SELECT id, name, options, owner_hash, created_at, seed, result, epoch, fair, \
                                       closed_at, owner_account FROM tables";
                let rows: Vec<Row> = match filter {
                    Filter::Open => {
                        sqlx::query_as(sqlx::AssertSqlSafe(format!(
                            "{COLUMNS} WHERE finished_at IS NULL AND closed_at IS NULL ORDER BY created_at, id"
                        )))
                        .fetch_all(pool)
                        .await?
                    }
                    Filter::One(id) => {
                        sqlx::query_as(sqlx::AssertSqlSafe(format!("{COLUMNS} WHERE id = $1")))
                            .bind(id)
                            .fetch_all(pool)
                            .await?
                    }
                    Filter::Recent(limit) => {
                        sqlx::query_as(sqlx::AssertSqlSafe(format!(
                            "{COLUMNS} WHERE seed IS NOT NULL AND {LISTED} ORDER BY created_at DESC, id DESC LIMIT $1"
                        )))
                        .bind(limit)
                        .fetch_all(pool)
                        .await?
                    }
                };
                Ok(rows
                    .into_iter()
                    .map(
                        |(id, name, options, owner_hash, created_at, seed, result, epoch, fair, closed_at, owner_account)| {
                            TableRow {
                                id,
                                name,
                                options,
                                owner_hash,
                                created_at,
                                seed,
                                result,
                                epoch,
                                fair,
                                closed: closed_at.is_some(),
                                owner_account,
                            }
                        },
                    )
                    .collect())
            }

            /// The newest `limit` started tables with their seats, one row
            /// per seat (a table without seats: one row of NULL seat
            /// columns), newest table first, seats in order.
            pub(super) async fn summary_rows(
                pool: &$pool,
                page: &super::super::MatchPage,
            ) -> Result<Vec<SummaryRow>, sqlx::Error> {
                let finished = match page.finished {
                    None => "",
                    Some(true) => " AND result IS NOT NULL",
                    Some(false) => " AND result IS NULL",
                };
                // After the `before` match in the list's order; nothing
                // when it is not stored (the comparisons are NULL).
                let before = if page.before.is_some() {
                    " AND (created_at < (SELECT created_at FROM tables WHERE id = $2) \
                      OR (created_at = (SELECT created_at FROM tables WHERE id = $2) AND id < $2))"
                } else {
                    ""
                };
                // A player's own matches: a seat held by the account. Its
                // placeholder follows the ones in use ($1, maybe $2).
                let account = match page.account {
                    Some(_) => {
                        let n = if page.before.is_some() { 3 } else { 2 };
                        format!(" AND id IN (SELECT table_id FROM seats WHERE account_id = ${n})")
                    }
                    None => String::new(),
                };
                let query = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT t.id, t.name, t.created_at, t.result, t.hands_played, t.score_ns, t.score_ew, \
                            t.closed_at, s.seat, s.name, s.kind, s.has_left, s.players, s.account_id \
                     FROM (SELECT id, name, created_at, result, hands_played, score_ns, score_ew, closed_at \
                           FROM tables \
                           WHERE seed IS NOT NULL AND {LISTED}{finished}{before}{account} \
                           ORDER BY created_at DESC, id DESC LIMIT $1) t \
                     LEFT JOIN seats s ON s.table_id = t.id \
                     ORDER BY t.created_at DESC, t.id DESC, s.seat"
                )))
                .bind(i64::try_from(page.limit).unwrap_or(i64::MAX));
                let query = match page.before {
                    Some(id) => query.bind(id.to_string()),
                    None => query,
                };
                match page.account {
                    Some(account) => query.bind(account.to_string()).fetch_all(pool).await,
                    None => query.fetch_all(pool).await,
                }
            }

            pub(super) async fn children(
                pool: &$pool,
                id: &str,
            ) -> Result<(Vec<SeatRow>, Vec<ActionRow>, Vec<HandRow>), sqlx::Error> {
                let seats = sqlx::query_as(
                    "SELECT seat, name, kind, token_hash, has_left, autopilot, timeouts, grace_expired, players, \
                     account_id FROM seats WHERE table_id = $1 ORDER BY seat",
                )
                .bind(id)
                .fetch_all(pool)
                .await?;
                let actions = sqlx::query_as(
                    "SELECT idx, seat, kind, value, source, at, coalesce(seq, 0) FROM actions \
                     WHERE table_id = $1 ORDER BY idx",
                )
                .bind(id)
                .fetch_all(pool)
                .await?;
                let hands =
                    sqlx::query_as("SELECT hand_number, result FROM hands WHERE table_id = $1 ORDER BY hand_number")
                        .bind(id)
                        .fetch_all(pool)
                        .await?;
                Ok((seats, actions, hands))
            }
        }
    };
}

/// The data directory holds a running match's secret server seed and
/// every seat's token hash: it is made readable by this user only (0700),
/// and so are the database file and the WAL and shared-memory files SQLite
/// makes beside it (0600; SQLite gives those the database file's mode), the
/// database file being created so before SQLite opens it.
fn keep_private(dir: &Path) -> Result<(), StorageError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let fail = |what: &Path, e: std::io::Error| {
            StorageError::Database(format!("making {} private: {e}", what.display()))
        };
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(|e| fail(dir, e))?;
        let db = dir.join("spades.db");
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&db)
            .map_err(|e| fail(&db, e))?;
        for name in ["spades.db", "spades.db-wal", "spades.db-shm"] {
            let path = dir.join(name);
            if path.exists() {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                    .map_err(|e| fail(&path, e))?;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// SQLite has no cluster mode: nothing to own.
async fn sqlite_own(_: &mut sqlx::SqliteConnection, _: &str, _: &Fence) -> Result<(), sqlx::Error> {
    Ok(())
}

/// SQLite has no cluster mode: every write passes.
async fn sqlite_fences(
    _: &mut sqlx::SqliteConnection,
    writes: &[Write<'_>],
) -> Result<Vec<bool>, sqlx::Error> {
    Ok(vec![true; writes.len()])
}

/// Inserts actions in one multi-row statement (a repeat of a stored one is
/// skipped); returns how many were new.
async fn sqlite_insert_actions(
    tx: &mut sqlx::SqliteConnection,
    rows: &[(&Uuid, &ActionRecord)],
) -> Result<u64, sqlx::Error> {
    let mut q = sqlx::QueryBuilder::<sqlx::Sqlite>::new(
        "INSERT INTO actions (table_id, idx, seat, kind, value, source, at, seq) ",
    );
    q.push_values(rows, |mut row, (table, a)| {
        let (kind, value, source) = action_columns(a);
        row.push_bind(table.to_string())
            .push_bind(a.index as i64)
            .push_bind(i64::from(a.seat.index()))
            .push_bind(kind)
            .push_bind(value)
            .push_bind(source)
            .push_bind(a.at_ms as i64)
            .push_bind(seq_column(a));
    });
    q.push(" ON CONFLICT (table_id, idx) DO NOTHING");
    Ok(q.build().execute(tx).await?.rows_affected())
}

/// As [`sqlite_insert_actions`], with one array per column: the statement's
/// text is the same for any number of rows, so it is prepared once per
/// connection (a `VALUES` list per batch size filled the statement cache
/// with a plan for each size and pushed the others out).
async fn pg_insert_actions(
    tx: &mut sqlx::PgConnection,
    rows: &[(&Uuid, &ActionRecord)],
) -> Result<u64, sqlx::Error> {
    let mut tables = Vec::with_capacity(rows.len());
    let mut idx = Vec::with_capacity(rows.len());
    let mut seats = Vec::with_capacity(rows.len());
    let mut kinds = Vec::with_capacity(rows.len());
    let mut values = Vec::with_capacity(rows.len());
    let mut sources = Vec::with_capacity(rows.len());
    let mut at = Vec::with_capacity(rows.len());
    let mut seqs = Vec::with_capacity(rows.len());
    for (table, a) in rows {
        let (kind, value, source) = action_columns(a);
        tables.push(table.to_string());
        idx.push(a.index as i64);
        seats.push(i64::from(a.seat.index()));
        kinds.push(kind);
        values.push(value);
        sources.push(source);
        at.push(a.at_ms as i64);
        seqs.push(seq_column(a));
    }
    Ok(sqlx::query(
        "INSERT INTO actions (table_id, idx, seat, kind, value, source, at, seq) \
         SELECT * FROM unnest($1::TEXT[], $2::BIGINT[], $3::BIGINT[], $4::TEXT[], $5::TEXT[], $6::TEXT[], $7::BIGINT[], \
                              $8::BIGINT[]) \
         ON CONFLICT (table_id, idx) DO NOTHING",
    )
    .bind(&tables)
    .bind(&idx)
    .bind(&seats)
    .bind(&kinds)
    .bind(&values)
    .bind(&sources)
    .bind(&at)
    .bind(&seqs)
    .execute(tx)
    .await?
    .rows_affected())
}

/// A new table belongs to the node that created it, with a fresh lease.
async fn pg_own(tx: &mut sqlx::PgConnection, id: &str, fence: &Fence) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE tables SET owner_node = $2, epoch = $3, lease_until = spades_now_ms() + $4 \
         WHERE id = $1 AND (owner_node IS NULL OR owner_node = $2) AND epoch <= $3",
    )
    .bind(id)
    .bind(&*fence.node)
    .bind(fence.epoch as i64)
    .bind(fence.lease_ms as i64)
    .execute(tx)
    .await
    .map(drop)
}

/// Which writes may go ahead: every unfenced one, and each fenced one whose
/// table's lease row still names its node and epoch and has not expired. The
/// rows read are locked `FOR SHARE` until the transaction ends, so a claim
/// by another node (an `UPDATE` of the row) waits for this commit, and
/// this batch's check waits for a claim that came first (and then fails).
async fn pg_fences(tx: &mut sqlx::PgConnection, writes: &[Write<'_>]) -> Result<Vec<bool>, sqlx::Error> {
    let mut ids: Vec<String> =
        writes.iter().filter_map(|(op, f)| f.map(|_| op.table().to_string())).collect();
    if ids.is_empty() {
        return Ok(vec![true; writes.len()]);
    }
    ids.sort_unstable();
    ids.dedup();
    let rows: Vec<(String, Option<String>, i64, bool)> = sqlx::query_as(
        // One index lookup per id (the writer plans no sequential scan):
        // every batch of moves pays for this check.
        "SELECT t.id, t.owner_node, t.epoch, coalesce(t.lease_until > spades_now_ms(), false) \
         FROM unnest($1::TEXT[]) AS w(id) JOIN tables t ON t.id = w.id ORDER BY t.id FOR SHARE OF t",
    )
    .bind(&ids)
    .fetch_all(&mut *tx)
    .await?;
    Ok(writes
        .iter()
        .map(|(op, fence)| {
            let Some(fence) = fence else { return true };
            let id = op.table().to_string();
            rows.iter().any(|(row, owner, epoch, live)| {
                *row == id && owner.as_deref() == Some(&*fence.node) && *epoch == fence.epoch as i64 && *live
            })
        })
        .collect())
}

backend!(sqlite, SqlitePool, sqlite_own, sqlite_fences, sqlite_insert_actions, sqlite_insert_chat);
backend!(postgres, PgPool, pg_own, pg_fences, pg_insert_actions, pg_insert_chat);

/// Keeps a chat message; a repeat (a retried write) is ignored. Written
/// with the table's moves, and by a journal kept in memory (`chat.rs`).
macro_rules! insert_chat {
    ($name:ident, $conn:ty) => {
        pub(super) async fn $name(conn: &mut $conn, row: &super::ChatRow) -> Result<(), sqlx::Error> {
            let ms = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
            sqlx::query(
                "INSERT INTO chat_messages (table_id, id, account_id, seat, name, text, at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (table_id, id) DO NOTHING",
            )
            .bind(row.table.to_string())
            .bind(ms(row.id))
            .bind(row.account.map(|a| a.to_string()))
            .bind(row.seat.map(|s| i64::from(s.index())))
            .bind(&row.name)
            .bind(&row.text)
            .bind(ms(row.at_ms))
            .execute(conn)
            .await
            .map(drop)
        }
    };
}

insert_chat!(sqlite_insert_chat, sqlx::SqliteConnection);
insert_chat!(pg_insert_chat, sqlx::PgConnection);

/// Test helper: raw access to the pool, to plant corrupt rows.
#[doc(hidden)]
pub async fn execute_raw(store: &SqlStore, sql: &str) -> Result<(), StorageError> {
    let q = || sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()));
    match &store.pool {
        Pool::Sqlite(p) => q().execute(p).await.map(|_| ()).map_err(db_err),
        Pool::Postgres(p) => q().execute(p).await.map(|_| ()).map_err(db_err),
    }
}
