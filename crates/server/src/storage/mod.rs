//! The event log: every table, seat change and accepted action, written
//! before anybody sees its effect, and read back at start-up to resume every
//! unfinished match.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use spades_engine::{Action, BySeat, HandResult, MatchResult, Seat};
use spades_protocol::{ActionSource, SeatKind, TableOptions};
use uuid::Uuid;

mod memory;
mod sql;

pub use memory::MemoryStore;
use sql::WriteOp;
pub use sql::{SqlStore, execute_raw};

/// A new table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableRecord {
    /// Id.
    pub id: Uuid,
    /// Name.
    pub name: String,
    /// Options.
    pub options: TableOptions,
    /// SHA-256 of the owner token, hex.
    pub owner_hash: String,
    /// Creation time, Unix ms.
    pub created_at_ms: u64,
}

/// One seat's occupant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatRecord {
    /// Display name.
    pub name: String,
    /// Person or bot.
    pub kind: SeatKind,
    /// SHA-256 of the seat token, hex (people only).
    pub token_hash: Option<String>,
    /// Left on purpose.
    pub left: bool,
    /// The autopilot plays the seat.
    #[serde(default)]
    pub autopilot: bool,
    /// Timeouts in a row.
    #[serde(default)]
    pub timeouts: u8,
    /// The grace ran out: a bot plays until the player returns.
    #[serde(default)]
    pub grace_expired: bool,
}

/// One accepted action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionRecord {
    /// Position in the match's move list (0-based).
    pub index: usize,
    /// Who acted.
    pub seat: Seat,
    /// The bid or card.
    pub action: Action,
    /// Who chose it.
    pub source: ActionSource,
    /// When, Unix ms.
    pub at_ms: u64,
}

/// Everything stored about one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTable {
    /// The table.
    pub table: TableRecord,
    /// Its seats.
    pub seats: BySeat<Option<SeatRecord>>,
    /// The match seed, once started.
    pub seed: Option<u64>,
    /// Every accepted action, in order.
    pub actions: Vec<ActionRecord>,
    /// Finished hands.
    pub hands: Vec<HandResult>,
    /// The result, once over.
    pub result: Option<MatchResult>,
}

/// A storage failure.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The database refused or failed.
    #[error("database error: {0}")]
    Database(String),
    /// A stored row could not be read.
    #[error("corrupt record for table {table}: {reason}")]
    Corrupt {
        /// The table.
        table: String,
        /// What is wrong.
        reason: String,
    },
    /// The log writer has stopped.
    #[error("the event log writer has stopped")]
    Stopped,
    /// A different action is already stored at this index: the table must
    /// reload from the log.
    #[error("table {table}: a different action is stored at index {index}")]
    Conflict {
        /// The table.
        table: Uuid,
        /// The index.
        index: usize,
    },
}

impl StorageError {
    /// True for [`StorageError::Conflict`].
    pub fn is_conflict(&self) -> bool {
        matches!(self, StorageError::Conflict { .. })
    }
}

/// The event log, shared by every table (cheap to clone).
#[derive(Debug, Clone)]
pub struct Journal {
    backend: Arc<Backend>,
}

#[derive(Debug)]
enum Backend {
    Memory(MemoryStore),
    Sql(SqlStore),
}

impl Journal {
    /// A log kept in memory only (tests and benchmarks).
    pub fn memory() -> Journal {
        Journal { backend: Arc::new(Backend::Memory(MemoryStore::default())) }
    }

    /// The SQLite or PostgreSQL log named by `url` (empty: SQLite in
    /// `data_dir`), migrated and ready.
    ///
    /// # Errors
    /// When the database cannot be opened or migrated.
    pub async fn open(url: &str, data_dir: &std::path::Path) -> Result<Journal, StorageError> {
        Ok(Journal { backend: Arc::new(Backend::Sql(SqlStore::open(url, data_dir).await?)) })
    }

    /// The SQL store behind this journal, if any (tests).
    pub fn sql(&self) -> Option<&SqlStore> {
        match &*self.backend {
            Backend::Sql(s) => Some(s),
            Backend::Memory(_) => None,
        }
    }

    /// A short name for logs and health checks.
    pub fn kind(&self) -> &'static str {
        match &*self.backend {
            Backend::Memory(_) => "memory",
            Backend::Sql(s) => s.kind(),
        }
    }

    /// Records a new table.
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn create_table(&self, table: &TableRecord) -> Result<(), StorageError> {
        match &*self.backend {
            Backend::Memory(m) => m.create_table(table),
            Backend::Sql(q) => q.write(WriteOp::Table(table.clone())).await,
        }
    }

    /// Records the seats after a change.
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn seats(&self, table: Uuid, seats: &BySeat<Option<SeatRecord>>) -> Result<(), StorageError> {
        match &*self.backend {
            Backend::Memory(m) => m.seats(table, seats),
            Backend::Sql(q) => q.write(WriteOp::Seats(table, seats.clone())).await,
        }
    }

    /// Records the start of the match with its seed.
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn start(&self, table: Uuid, seed: u64) -> Result<(), StorageError> {
        match &*self.backend {
            Backend::Memory(m) => m.start(table, seed),
            Backend::Sql(q) => q.write(WriteOp::Start { table, seed, at: crate::table::now_ms() }).await,
        }
    }

    /// Appends an accepted action; returns once it is durable.
    ///
    /// # Errors
    /// When the log cannot be written: the action must then be refused.
    pub async fn append(&self, table: Uuid, action: ActionRecord) -> Result<(), StorageError> {
        match &*self.backend {
            Backend::Memory(m) => m.append(table, action),
            Backend::Sql(q) => q.write(WriteOp::Action(table, action)).await,
        }
    }

    /// Records a finished hand.
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn hand(&self, table: Uuid, result: &HandResult) -> Result<(), StorageError> {
        match &*self.backend {
            Backend::Memory(m) => m.hand(table, result),
            Backend::Sql(q) => q.write(WriteOp::Hand(table, result.clone())).await,
        }
    }

    /// Records the end of the match.
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn finish(&self, table: Uuid, result: &MatchResult) -> Result<(), StorageError> {
        match &*self.backend {
            Backend::Memory(m) => m.finish(table, result),
            Backend::Sql(q) => {
                q.write(WriteOp::Finish { table, result: *result, at: crate::table::now_ms() }).await
            }
        }
    }

    /// Every stored table whose match is not finished, oldest first; rows
    /// that cannot be read are returned as errors beside the good ones.
    ///
    /// # Errors
    /// When the database cannot be read at all.
    pub async fn unfinished(&self) -> Result<Vec<Result<StoredTable, StorageError>>, StorageError> {
        match &*self.backend {
            Backend::Memory(m) => Ok(m.unfinished().into_iter().map(Ok).collect()),
            Backend::Sql(q) => q.unfinished().await,
        }
    }

    /// One table's full record.
    ///
    /// # Errors
    /// When the database cannot be read or the record is corrupt.
    pub async fn get(&self, table: Uuid) -> Result<Option<StoredTable>, StorageError> {
        match &*self.backend {
            Backend::Memory(m) => Ok(m.get(table)),
            Backend::Sql(q) => q.get(table).await,
        }
    }

    /// The most recently created tables that have a match, newest first.
    ///
    /// # Errors
    /// When the database cannot be read.
    pub async fn recent(&self, limit: usize) -> Result<Vec<StoredTable>, StorageError> {
        match &*self.backend {
            Backend::Memory(m) => Ok(m.recent(limit)),
            Backend::Sql(q) => q.recent(limit).await,
        }
    }

    /// Marks an unused table closed: it is not restored after a restart.
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn close(&self, table: Uuid) -> Result<(), StorageError> {
        match &*self.backend {
            Backend::Memory(m) => m.close(table),
            Backend::Sql(q) => q.write(WriteOp::Close { table, at: crate::table::now_ms() }).await,
        }
    }

    /// True when the store answers (readiness).
    pub async fn ping(&self) -> bool {
        match &*self.backend {
            Backend::Memory(_) => true,
            Backend::Sql(q) => q.ping().await,
        }
    }
}
