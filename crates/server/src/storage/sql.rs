//! The event log in SQLite (the default, one file under the data directory)
//! or PostgreSQL, through sqlx.
//!
//! Every write goes through one writer task that commits whatever has
//! queued up since its last commit in a single transaction (group commit):
//! under load, many tables' actions share one fsync. A write's caller is
//! answered only after its transaction has committed, so a table never shows
//! a move that is not durable.

use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use spades_engine::{Action, BySeat, Card, HandResult, MatchResult, Seat};
use spades_protocol::{ActionSource, SeatKind, TableOptions};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use tokio::sync::{mpsc, oneshot};
use tracing::{info, warn};
use uuid::Uuid;

use super::{ActionRecord, SeatRecord, StorageError, StoredTable, TableRecord};

/// Most writes committed in one transaction.
const MAX_BATCH: usize = 1024;

/// One write to the log.
#[derive(Debug, Clone)]
pub(super) enum WriteOp {
    Table(TableRecord),
    Seats(Uuid, BySeat<Option<SeatRecord>>),
    Start { table: Uuid, seed: u64, at: u64 },
    Action(Uuid, ActionRecord),
    Hand(Uuid, HandResult),
    Finish { table: Uuid, result: MatchResult, at: u64 },
    Close { table: Uuid, at: u64 },
}

#[derive(Debug)]
struct WriteReq {
    op: WriteOp,
    done: oneshot::Sender<Result<(), StorageError>>,
}

/// Which database.
#[derive(Debug, Clone)]
pub(super) enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// The SQL event log.
#[derive(Debug)]
pub struct SqlStore {
    pool: Pool,
    writer: mpsc::Sender<WriteReq>,
}

fn db_err(e: sqlx::Error) -> StorageError {
    StorageError::Database(e.to_string())
}

impl SqlStore {
    /// Opens (creating if needed) the database, runs the migrations and
    /// starts the writer.
    ///
    /// `url` empty: the SQLite file `spades.db` in `data_dir`.
    ///
    /// # Errors
    /// When the database cannot be opened or migrated.
    pub async fn open(url: &str, data_dir: &Path) -> Result<SqlStore, StorageError> {
        let pool = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = PgPoolOptions::new()
                .max_connections(8)
                .acquire_timeout(Duration::from_secs(10))
                .connect(url)
                .await
                .map_err(db_err)?;
            sqlx::migrate!("../../migrations/postgres")
                .run(&pool)
                .await
                .map_err(|e| StorageError::Database(format!("migrating PostgreSQL: {e}")))?;
            Pool::Postgres(pool)
        } else {
            let options = if url.is_empty() {
                std::fs::create_dir_all(data_dir).map_err(|e| {
                    StorageError::Database(format!("creating the data directory {}: {e}", data_dir.display()))
                })?;
                SqliteConnectOptions::new().filename(data_dir.join("spades.db"))
            } else {
                SqliteConnectOptions::from_str(url).map_err(db_err)?
            };
            let options = options
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full)
                .busy_timeout(Duration::from_secs(10))
                .foreign_keys(true);
            let pool =
                SqlitePoolOptions::new().max_connections(4).connect_with(options).await.map_err(db_err)?;
            sqlx::migrate!("../../migrations/sqlite")
                .run(&pool)
                .await
                .map_err(|e| StorageError::Database(format!("migrating SQLite: {e}")))?;
            Pool::Sqlite(pool)
        };
        let (writer, rx) = mpsc::channel(4 * MAX_BATCH);
        tokio::spawn(write_loop(pool.clone(), rx));
        Ok(SqlStore { pool, writer })
    }

    /// `sqlite` or `postgres`.
    pub fn kind(&self) -> &'static str {
        match self.pool {
            Pool::Sqlite(_) => "sqlite",
            Pool::Postgres(_) => "postgres",
        }
    }

    pub(super) async fn write(&self, op: WriteOp) -> Result<(), StorageError> {
        let (done, rx) = oneshot::channel();
        self.writer.send(WriteReq { op, done }).await.map_err(|_| StorageError::Stopped)?;
        rx.await.map_err(|_| StorageError::Stopped)?
    }

    pub(super) async fn ping(&self) -> bool {
        match &self.pool {
            Pool::Sqlite(p) => sqlx::query("SELECT 1").execute(p).await.is_ok(),
            Pool::Postgres(p) => sqlx::query("SELECT 1").execute(p).await.is_ok(),
        }
    }

    /// Unfinished, unclosed tables, oldest first.
    pub(super) async fn unfinished(&self) -> Result<Vec<Result<StoredTable, StorageError>>, StorageError> {
        let rows = match &self.pool {
            Pool::Sqlite(p) => sqlite::table_rows(p, Filter::Open).await,
            Pool::Postgres(p) => postgres::table_rows(p, Filter::Open).await,
        }
        .map_err(db_err)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            out.push(self.assemble(row).await);
        }
        Ok(out)
    }

    pub(super) async fn get(&self, table: Uuid) -> Result<Option<StoredTable>, StorageError> {
        let rows = match &self.pool {
            Pool::Sqlite(p) => sqlite::table_rows(p, Filter::One(table.to_string())).await,
            Pool::Postgres(p) => postgres::table_rows(p, Filter::One(table.to_string())).await,
        }
        .map_err(db_err)?;
        match rows.into_iter().next() {
            Some(row) => self.assemble(row).await.map(Some),
            None => Ok(None),
        }
    }

    pub(super) async fn recent(&self, limit: usize) -> Result<Vec<StoredTable>, StorageError> {
        let rows = match &self.pool {
            Pool::Sqlite(p) => sqlite::table_rows(p, Filter::Recent(limit as i64)).await,
            Pool::Postgres(p) => postgres::table_rows(p, Filter::Recent(limit as i64)).await,
        }
        .map_err(db_err)?;
        let mut out = Vec::new();
        for row in rows {
            match self.assemble(row).await {
                Ok(t) => out.push(t),
                Err(e) => warn!(error = %e, "skipping an unreadable match in the recent list"),
            }
        }
        Ok(out)
    }

    async fn assemble(&self, row: TableRow) -> Result<StoredTable, StorageError> {
        let (seats, actions, hands) = match &self.pool {
            Pool::Sqlite(p) => sqlite::children(p, &row.id).await,
            Pool::Postgres(p) => postgres::children(p, &row.id).await,
        }
        .map_err(db_err)?;
        decode(row, seats, actions, hands)
    }
}

/// Commits queued writes in batches until every sender is gone.
async fn write_loop(pool: Pool, mut rx: mpsc::Receiver<WriteReq>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let started = Instant::now();
        let ops: Vec<&WriteOp> = batch.iter().map(|r| &r.op).collect();
        let result = match &pool {
            Pool::Sqlite(p) => sqlite::write_batch(p, &ops).await,
            Pool::Postgres(p) => postgres::write_batch(p, &ops).await,
        };
        metrics::histogram!("spades_storage_commit_seconds").record(started.elapsed().as_secs_f64());
        metrics::histogram!("spades_storage_batch_size").record(batch.len() as f64);
        match result {
            Ok(()) => {
                for req in batch.drain(..) {
                    let _ = req.done.send(Ok(()));
                }
            }
            Err(e) => {
                warn!(error = %e, writes = batch.len(), "a batch of writes failed");
                let message = e.to_string();
                for req in batch.drain(..) {
                    let _ = req.done.send(Err(StorageError::Database(message.clone())));
                }
            }
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
}

type SeatRow = (i64, String, String, Option<String>, i64);
type ActionRow = (i64, i64, String, String, String, i64);
type HandRow = (i64, String);

fn corrupt(table: &str, reason: impl Into<String>) -> StorageError {
    StorageError::Corrupt { table: table.to_owned(), reason: reason.into() }
}

fn seat_of(table: &str, n: i64) -> Result<Seat, StorageError> {
    u8::try_from(n)
        .ok()
        .and_then(Seat::from_index)
        .ok_or_else(|| corrupt(table, format!("bad seat number {n}")))
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
    let mut seat_records = BySeat([None, None, None, None]);
    for (n, name, kind, token_hash, left) in seats {
        let seat = seat_of(t, n)?;
        let kind = match kind.as_str() {
            "human" => SeatKind::Human,
            "bot" => SeatKind::Bot,
            other => return Err(corrupt(t, format!("unknown seat kind {other:?}"))),
        };
        seat_records[seat] = Some(SeatRecord {
            name,
            kind,
            token_hash,
            left: left != 0,
            autopilot: false,
            timeouts: 0,
            grace_expired: false,
        });
    }
    let mut records = Vec::with_capacity(actions.len());
    for (i, (idx, seat, kind, value, source, at)) in actions.into_iter().enumerate() {
        if usize::try_from(idx).ok() != Some(i) {
            return Err(corrupt(t, format!("the action log has a gap at position {i} (found {idx})")));
        }
        let action = match kind.as_str() {
            "bid" => {
                Action::Bid(value.parse().map_err(|_| corrupt(t, format!("action {i}: bad bid {value:?}")))?)
            }
            "play" => Action::Play(
                value.parse::<Card>().map_err(|_| corrupt(t, format!("action {i}: bad card {value:?}")))?,
            ),
            other => return Err(corrupt(t, format!("action {i}: unknown action kind {other:?}"))),
        };
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
    Ok(StoredTable {
        table: TableRecord { id, name: row.name, options, owner_hash: row.owner_hash, created_at_ms },
        seats: seat_records,
        seed: row.seed.map(|s| s as u64),
        actions: records,
        hands: hand_results,
        result,
    })
}

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
    ($module:ident, $pool:ty, $db:ty) => {
        mod $module {
            use super::*;

            pub(super) async fn write_batch(pool: &$pool, ops: &[&WriteOp]) -> Result<(), sqlx::Error> {
                // A table never has two writes in flight (its task awaits
                // each), so a batch holds at most one write per table and
                // may be regrouped by kind: new tables first (the others
                // refer to them), then every action in one multi-row insert.
                let mut tx = pool.begin().await?;
                let mut actions = Vec::new();
                let mut hands = Vec::new();
                for op in ops.iter().filter(|op| matches!(op, WriteOp::Table(_))) {
                    if let WriteOp::Table(t) = op {
                        sqlx::query(
                            "INSERT INTO tables (id, name, options, owner_hash, created_at) VALUES ($1, $2, $3, $4, $5)",
                        )
                        .bind(t.id.to_string())
                        .bind(&t.name)
                        .bind(json(&t.options))
                        .bind(&t.owner_hash)
                        .bind(t.created_at_ms as i64)
                        .execute(&mut *tx)
                        .await?;
                    }
                }
                for op in ops {
                    match op {
                        WriteOp::Table(_) => {}
                        WriteOp::Action(table, a) => actions.push((table, a)),
                        WriteOp::Hand(table, h) => hands.push((table, h)),
                        WriteOp::Seats(table, seats) => {
                            let id = table.to_string();
                            sqlx::query("DELETE FROM seats WHERE table_id = $1").bind(&id).execute(&mut *tx).await?;
                            for (seat, s) in seats.iter() {
                                let Some(s) = s else { continue };
                                let kind = match s.kind {
                                    SeatKind::Human => "human",
                                    SeatKind::Bot => "bot",
                                };
                                sqlx::query(
                                    "INSERT INTO seats (table_id, seat, name, kind, token_hash, has_left) \
                                     VALUES ($1, $2, $3, $4, $5, $6)",
                                )
                                .bind(&id)
                                .bind(i64::from(seat.index()))
                                .bind(&s.name)
                                .bind(kind)
                                .bind(&s.token_hash)
                                .bind(i64::from(s.left))
                                .execute(&mut *tx)
                                .await?;
                            }
                        }
                        WriteOp::Start { table, seed, at } => {
                            sqlx::query("UPDATE tables SET seed = $2, started_at = $3 WHERE id = $1")
                                .bind(table.to_string())
                                .bind(*seed as i64)
                                .bind(*at as i64)
                                .execute(&mut *tx)
                                .await?;
                        }
                        WriteOp::Finish { table, result, at } => {
                            sqlx::query("UPDATE tables SET finished_at = $2, result = $3 WHERE id = $1")
                                .bind(table.to_string())
                                .bind(*at as i64)
                                .bind(json(result))
                                .execute(&mut *tx)
                                .await?;
                        }
                        WriteOp::Close { table, at } => {
                            sqlx::query("UPDATE tables SET closed_at = $2 WHERE id = $1")
                                .bind(table.to_string())
                                .bind(*at as i64)
                                .execute(&mut *tx)
                                .await?;
                        }
                    }
                }
                if !actions.is_empty() {
                    let mut q = sqlx::QueryBuilder::<$db>::new(
                        "INSERT INTO actions (table_id, idx, seat, kind, value, source, at) ",
                    );
                    q.push_values(actions, |mut row, (table, a)| {
                        let (kind, value, source) = action_columns(a);
                        row.push_bind(table.to_string())
                            .push_bind(a.index as i64)
                            .push_bind(i64::from(a.seat.index()))
                            .push_bind(kind)
                            .push_bind(value)
                            .push_bind(source)
                            .push_bind(a.at_ms as i64);
                    });
                    q.build().execute(&mut *tx).await?;
                }
                for (table, h) in hands {
                    sqlx::query(
                        "INSERT INTO hands (table_id, hand_number, result) VALUES ($1, $2, $3) \
                         ON CONFLICT (table_id, hand_number) DO NOTHING",
                    )
                    .bind(table.to_string())
                    .bind(i64::from(h.hand_number))
                    .bind(json(h))
                    .execute(&mut *tx)
                    .await?;
                }
                tx.commit().await
            }

            pub(super) async fn table_rows(pool: &$pool, filter: Filter) -> Result<Vec<TableRow>, sqlx::Error> {
                type Row = (String, String, String, String, i64, Option<i64>, Option<String>);
                const COLUMNS: &str = "SELECT id, name, options, owner_hash, created_at, seed, result FROM tables";
                let rows: Vec<Row> = match filter {
                    Filter::Open => {
                        sqlx::query_as(sqlx::AssertSqlSafe(format!(
                            "{COLUMNS} WHERE finished_at IS NULL AND closed_at IS NULL ORDER BY created_at"
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
                            "{COLUMNS} WHERE seed IS NOT NULL ORDER BY created_at DESC LIMIT $1"
                        )))
                        .bind(limit)
                        .fetch_all(pool)
                        .await?
                    }
                };
                Ok(rows
                    .into_iter()
                    .map(|(id, name, options, owner_hash, created_at, seed, result)| TableRow {
                        id,
                        name,
                        options,
                        owner_hash,
                        created_at,
                        seed,
                        result,
                    })
                    .collect())
            }

            pub(super) async fn children(
                pool: &$pool,
                id: &str,
            ) -> Result<(Vec<SeatRow>, Vec<ActionRow>, Vec<HandRow>), sqlx::Error> {
                let seats = sqlx::query_as(
                    "SELECT seat, name, kind, token_hash, has_left FROM seats WHERE table_id = $1 ORDER BY seat",
                )
                .bind(id)
                .fetch_all(pool)
                .await?;
                let actions = sqlx::query_as(
                    "SELECT idx, seat, kind, value, source, at FROM actions WHERE table_id = $1 ORDER BY idx",
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

backend!(sqlite, SqlitePool, sqlx::Sqlite);
backend!(postgres, PgPool, sqlx::Postgres);

/// Test helper: raw access to the pool, to plant corrupt rows.
#[doc(hidden)]
pub async fn execute_raw(store: &SqlStore, sql: &str) -> Result<(), StorageError> {
    let q = || sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()));
    match &store.pool {
        Pool::Sqlite(p) => q().execute(p).await.map(|_| ()).map_err(db_err),
        Pool::Postgres(p) => q().execute(p).await.map(|_| ()).map_err(db_err),
    }
}
