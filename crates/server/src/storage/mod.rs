//! The event log: every table, seat change and accepted action, written
//! before anybody sees its effect, and read back at start-up to resume every
//! unfinished match.
//!
//! Every write is idempotent (a retry after a lost answer is safe), a
//! write's caller is answered within [`StoreOptions::write_timeout`] even
//! when the database hangs, and one failing write never fails another
//! table's.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use spades_engine::{
    Action, BySeat, ClientSeed, Commitment, FairSeeds, HandResult, MatchResult, Seat, ServerSeed,
};
use spades_protocol::{ActionSource, MatchSummary, RecordSeat, SeatKind, SeatPlayer, TableOptions};
use uuid::Uuid;

mod accounts;
mod blocks;
mod ceremonies;
mod chat;
mod faults;
mod lease;
mod memory;
mod moderation;
mod oidc;
mod passkeys;
mod passwords;
mod reports;
mod sql;
mod ways;

pub use accounts::{
    AccountRow, AccountStore, Created, NameHolder, NewGuest, Rename, Renamed, SessionRow, SessionsOf,
};
pub use blocks::{BlockRow, BlockStore, Blocked};
pub use ceremonies::{Ceremony, CeremonyKind, CeremonyStore};
pub use chat::{ChatRow, ChatStore};
pub use faults::{Faults, Op};
pub use lease::{Claimed, Leases, NodeRow, Owner, Registered, TableCounts};
pub use memory::MemoryStore;
pub use moderation::{
    Actor, AuditRow, Lift, ModerationStore, OperatorRow, Removal as ChatRemoval, SanctionRow,
};
pub use oidc::{Linked, Member, NewMember, OidcIdentityRow, OidcStore};
pub use passkeys::{PasskeyRow, PasskeyStore};
pub use passwords::{PasswordRow, PasswordStore};
pub use reports::{Filed, ReportRow, ReportStore, Resolved, Resolving};
use sql::WriteOp;
pub use sql::{SqlStore, execute_raw};
pub use ways::{Removal, Way};

/// The fencing token of a table's owner in cluster mode: every write of the
/// table checks, in its own transaction, that the table's lease row still
/// names this node with this epoch (and has not expired), so a node that
/// lost its lease (paused, cut off, slow) can write nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// The owning node's id.
    pub node: Arc<str>,
    /// The lease's epoch.
    pub epoch: u64,
    /// The lease a new table starts with, in ms.
    pub lease_ms: u64,
}

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
    /// The account that created the table signed in: it acts as the owner
    /// without the token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_account: Option<Uuid>,
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
    /// The account of a signed-in player.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Uuid>,
    /// Left on purpose.
    pub left: bool,
    /// Timeouts have put the seat on autopilot.
    #[serde(default)]
    pub autopilot: bool,
    /// Turns the seat has lost to the clock.
    #[serde(default)]
    pub timeouts: u8,
    /// The absent player's grace period has run out.
    #[serde(default)]
    pub grace_expired: bool,
    /// The people who played the seat before and since a hand-over, with
    /// the first hand of each (empty when one player, or a bot, had it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub players: Vec<SeatPlayer>,
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
    /// The `seq` of the frame that showed it (0: not known, for actions
    /// stored before moves carried their turn's `seq`).
    #[serde(default)]
    pub seq: u64,
}

/// A fair match's seeds as the log keeps them (`tables.fair`, JSON), fixed
/// before the first deal. `Debug` never shows the server seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FairRecord {
    /// The scheme's version.
    pub version: u8,
    /// The server's seed.
    pub server_seed: ServerSeed,
    /// Its SHA-256, as published.
    pub commitment: Commitment,
    /// Each seat's seed, North first.
    pub client_seeds: [Option<ClientSeed>; 4],
    /// Each seat's commitment to its seed (a seat may have committed and
    /// never revealed); absent in records stored before commitments.
    #[serde(default)]
    pub client_commitments: [Option<Commitment>; 4],
}

impl FairRecord {
    /// The record of `seeds`, with each seat's commitment: those given, and
    /// for a seed without one, the seed's own.
    pub fn of(seeds: &FairSeeds, commitments: BySeat<Option<Commitment>>) -> FairRecord {
        let table = *seeds.table();
        FairRecord {
            version: spades_engine::FAIR_VERSION,
            server_seed: *seeds.server_seed(),
            commitment: seeds.commitment(),
            client_seeds: seeds.client_seeds().0,
            client_commitments: BySeat::new_with(|seat| {
                commitments[seat].or_else(|| seeds.client_seeds()[seat].map(|s| s.commitment(table, seat)))
            })
            .0,
        }
    }

    /// The seeds of the match at `table`, after checking the record: the
    /// version is known and the commitment is the server seed's.
    ///
    /// # Errors
    /// What is wrong with the record.
    pub fn seeds(&self, table: Uuid) -> Result<FairSeeds, String> {
        if self.version != spades_engine::FAIR_VERSION {
            return Err(format!("unknown fair-deal version {}", self.version));
        }
        if self.server_seed.commitment() != self.commitment {
            return Err("the stored commitment is not the server seed's".into());
        }
        Ok(FairSeeds::new(*table.as_bytes(), self.server_seed, BySeat(self.client_seeds)))
    }
}

/// Everything stored about one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredTable {
    /// The table.
    pub table: TableRecord,
    /// Its seats.
    pub seats: BySeat<Option<SeatRecord>>,
    /// The match seed, once started (of a fair match: the bots' seed).
    pub seed: Option<u64>,
    /// A fair match's seeds, once started.
    pub fair: Option<FairRecord>,
    /// Every accepted action, in order.
    pub actions: Vec<ActionRecord>,
    /// Finished hands.
    pub hands: Vec<HandResult>,
    /// The result, once over.
    pub result: Option<MatchResult>,
    /// How many times the table has been restored ([`Journal::bump_epoch`]).
    pub epoch: u64,
    /// The table was closed ([`Journal::close`]): unused, or a match nobody
    /// was at any more. A closed table is not restored.
    pub closed: bool,
}

impl StoredTable {
    /// A started match that was closed before it ended: nobody was at the
    /// table any more.
    pub fn abandoned(&self) -> bool {
        self.closed && self.result.is_none() && self.seed.is_some()
    }

    /// True when a person, not the table, chose one of its moves.
    pub fn has_player_move(&self) -> bool {
        self.actions.iter().any(|a| a.source == ActionSource::Player)
    }
}

/// Which lines of the match list, newest first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MatchPage {
    /// At most this many.
    pub limit: usize,
    /// Only matches that are over (`Some(true)`), or only those that are
    /// not (`Some(false)`: in play, or ended unfinished).
    pub finished: Option<bool>,
    /// Only those listed after this match (the last of the page before):
    /// created earlier, or at the same time with a smaller id. A match
    /// that is not stored has nothing after it.
    pub before: Option<Uuid>,
    /// Only matches in which this account held a seat.
    pub account: Option<Uuid>,
}

impl MatchPage {
    /// Whether a match created at `created_at` with id `id`, over or not,
    /// is on this page (the limit aside); `after` is the `before` match's
    /// creation time and id, when it is stored.
    fn admits(&self, created_at: u64, id: Uuid, finished: bool, after: Option<(u64, Uuid)>) -> bool {
        self.finished.is_none_or(|f| f == finished)
            && match self.before {
                None => true,
                Some(_) => after.is_some_and(|before| (created_at, id) < before),
            }
    }
}

/// A storage failure.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// The database refused, failed or did not answer in time.
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
    /// A different action is already stored at this index: the table must
    /// reload from the log.
    #[error(
        "a different action is already stored at index {index} of table {table}: the table must reload from the log"
    )]
    Conflict {
        /// The table.
        table: Uuid,
        /// The position in its move list.
        index: usize,
    },
    /// The table's lease is no longer this node's (cluster mode): nothing
    /// was written, and the table must stop at once.
    #[error("table {table} is no longer owned by this node: nothing written")]
    Fenced {
        /// The table.
        table: Uuid,
    },
    /// The log writer has stopped.
    #[error("the event log writer has stopped")]
    Stopped,
}

impl StorageError {
    /// True for [`StorageError::Conflict`]: retrying cannot help, the table
    /// must reload from the log.
    pub fn is_conflict(&self) -> bool {
        matches!(self, StorageError::Conflict { .. })
    }

    /// True for [`StorageError::Fenced`]: the table is another node's now.
    pub fn is_fenced(&self) -> bool {
        matches!(self, StorageError::Fenced { .. })
    }
}

/// How a SQL log behaves under trouble.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreOptions {
    /// A write's caller is answered within this, committed or not (the
    /// write may still commit later; writes are idempotent, so a retry is
    /// safe).
    pub write_timeout: Duration,
    /// Longest wait for a pooled connection (PostgreSQL) or for a lock held
    /// by another connection (SQLite) before an operation fails.
    pub acquire_timeout: Duration,
    /// Longest one read query (the REST match list and record, the tables
    /// restored at start-up) may take before it fails: the REST answer is
    /// then 503 at once rather than after the database's own timeouts.
    /// The readiness ping waits at most this, and never over 1.5 s.
    pub read_timeout: Duration,
    /// The writer commits at most once per this interval while writes keep
    /// coming, each commit taking all that queued meanwhile; a write after a
    /// quiet spell commits at once. Zero: commit as soon as the last commit
    /// is done.
    pub commit_interval: Duration,
    /// PostgreSQL: the server ends a session of this process that sits in
    /// an open transaction longer than this (`idle_in_transaction_session_timeout`),
    /// so a process paused mid-transaction (SIGSTOP, a frozen VM) does not
    /// hold its row locks, and with them its tables, from the other nodes
    /// of a cluster. `None`: the database's own setting.
    pub idle_in_transaction: Option<Duration>,
}

impl Default for StoreOptions {
    fn default() -> StoreOptions {
        StoreOptions {
            write_timeout: Duration::from_secs(5),
            acquire_timeout: Duration::from_secs(3),
            read_timeout: Duration::from_secs(2),
            commit_interval: Duration::ZERO,
            idle_in_transaction: None,
        }
    }
}

/// The event log, shared by every table (cheap to clone).
#[derive(Debug, Clone)]
pub struct Journal {
    backend: Arc<Backend>,
    faults: Option<Faults>,
    /// Cluster mode: this table's fencing token, and what to cancel when a
    /// write finds the lease lost.
    fence: Option<(Fence, tokio_util::sync::CancellationToken)>,
}

#[derive(Debug)]
enum Backend {
    Memory(MemoryStore),
    Sql(SqlStore),
}

impl Journal {
    fn with_backend(backend: Backend) -> Journal {
        Journal { backend: Arc::new(backend), faults: None, fence: None }
    }

    /// This journal for one table owned under `fence` (cluster mode): every
    /// write carries the fence, and the first write refused for it cancels
    /// `lost` (the table's task stops on it).
    pub fn fenced(&self, fence: Fence, lost: tokio_util::sync::CancellationToken) -> Journal {
        Journal {
            backend: Arc::clone(&self.backend),
            faults: self.faults.clone(),
            fence: Some((fence, lost)),
        }
    }

    /// The lease store of a PostgreSQL journal (cluster mode).
    pub fn leases(&self) -> Option<Leases> {
        self.sql().and_then(SqlStore::leases)
    }

    /// The account store on the same database (for a log kept in memory,
    /// one kept in memory with it). Every call answers the same store.
    pub fn accounts(&self) -> AccountStore {
        match &*self.backend {
            Backend::Memory(m) => m.accounts.clone(),
            Backend::Sql(s) => s.accounts(),
        }
    }

    /// A log kept in memory only (tests and benchmarks).
    pub fn memory() -> Journal {
        Journal::with_backend(Backend::Memory(MemoryStore::default()))
    }

    /// The SQLite or PostgreSQL log named by `url` (empty: SQLite in
    /// `data_dir`), migrated and ready, with the default [`StoreOptions`].
    ///
    /// # Errors
    /// When the database cannot be opened or migrated.
    pub async fn open(url: &str, data_dir: &std::path::Path) -> Result<Journal, StorageError> {
        Journal::open_with(url, data_dir, StoreOptions::default()).await
    }

    /// [`Journal::open`] with explicit options.
    ///
    /// # Errors
    /// When the database cannot be opened or migrated.
    pub async fn open_with(
        url: &str,
        data_dir: &std::path::Path,
        options: StoreOptions,
    ) -> Result<Journal, StorageError> {
        Ok(Journal::with_backend(Backend::Sql(SqlStore::open_with(url, data_dir, options).await?)))
    }

    /// This journal with failures injected on demand (tests): the returned
    /// [`Faults`] controls it and every clone of it.
    #[doc(hidden)]
    pub fn with_faults(self) -> (Journal, Faults) {
        let faults = Faults::default();
        (Journal { backend: self.backend, faults: Some(faults.clone()), fence: self.fence }, faults)
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

    /// Runs `work` unless a fault is due for `op`; reports an injected
    /// failure after it when one is due "after commit".
    async fn guarded<T>(
        &self,
        op: Op,
        work: impl Future<Output = Result<T, StorageError>>,
    ) -> Result<T, StorageError> {
        if let Some(f) = &self.faults {
            f.before(op)?;
        }
        let result = work.await;
        if let Some(f) = &self.faults
            && result.is_ok()
        {
            f.after(op)?;
        }
        result
    }

    async fn write(&self, op: Op, w: WriteOp) -> Result<u64, StorageError> {
        let fence = self.fence.as_ref().map(|(f, _)| f.clone());
        let result = self
            .guarded(op, async {
                match &*self.backend {
                    Backend::Memory(m) => m.write(&w),
                    Backend::Sql(q) => q.write(w, fence).await,
                }
            })
            .await;
        if let (Err(e), Some((_, lost))) = (&result, &self.fence)
            && e.is_fenced()
        {
            lost.cancel();
        }
        result
    }

    /// Records a new table; a table already stored with this id is
    /// success (a retry after a lost answer).
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn create_table(&self, table: &TableRecord) -> Result<(), StorageError> {
        self.write(Op::Table, WriteOp::Table(table.clone())).await.map(drop)
    }

    /// Records the seats after a change (replacing the stored ones).
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn seats(&self, table: Uuid, seats: &BySeat<Option<SeatRecord>>) -> Result<(), StorageError> {
        self.write(Op::Seats, WriteOp::Seats(table, seats.clone())).await.map(drop)
    }

    /// Records the start of the match with its seed.
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn start(&self, table: Uuid, seed: u64) -> Result<(), StorageError> {
        self.write(Op::Start, WriteOp::Start { table, seed, fair: None, at: crate::time::now_ms() })
            .await
            .map(drop)
    }

    /// Records the start of a fair match with its seeds (and the bots' seed
    /// drawn from them).
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn start_fair(
        &self,
        table: Uuid,
        seeds: &FairSeeds,
        commitments: BySeat<Option<Commitment>>,
    ) -> Result<(), StorageError> {
        let fair = Some(FairRecord::of(seeds, commitments));
        let op = WriteOp::Start { table, seed: seeds.bot_seed(), fair, at: crate::time::now_ms() };
        self.write(Op::Start, op).await.map(drop)
    }

    /// Appends an accepted action; returns once it is durable. The same
    /// seat and action already stored at this index is success, whatever
    /// its source and time (a retry).
    ///
    /// # Errors
    /// [`StorageError::Conflict`] when a different action is stored at this
    /// index (the table must reload from the log); any other error when the
    /// log cannot be written: the action must then be refused or retried.
    pub async fn append(&self, table: Uuid, action: ActionRecord) -> Result<(), StorageError> {
        self.write(Op::Action, WriteOp::Action(table, action)).await.map(drop)
    }

    /// Records a finished hand (again: no change) and the table's summary
    /// columns.
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn hand(&self, table: Uuid, result: &HandResult) -> Result<(), StorageError> {
        self.write(Op::Hand, WriteOp::Hand(table, result.clone())).await.map(drop)
    }

    /// Records the end of the match.
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn finish(&self, table: Uuid, result: &MatchResult) -> Result<(), StorageError> {
        self.write(Op::Finish, WriteOp::Finish { table, result: *result, at: crate::time::now_ms() })
            .await
            .map(drop)
    }

    /// Marks an unused table closed: it is not restored after a restart.
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn close(&self, table: Uuid) -> Result<(), StorageError> {
        self.write(Op::Close, WriteOp::Close { table, at: crate::time::now_ms() }).await.map(drop)
    }

    /// Keeps a chat message said at its table (a repeat is ignored). A SQL
    /// log writes it with the table's moves, under the same fence; a log
    /// kept in memory keeps it in its account store.
    ///
    /// # Errors
    /// When the log cannot be written.
    pub async fn chat(&self, message: ChatRow) -> Result<(), StorageError> {
        if let Backend::Memory(m) = &*self.backend {
            return self.guarded(Op::Chat, m.accounts.chat().insert(&message)).await;
        }
        self.write(Op::Chat, WriteOp::Chat(message)).await.map(drop)
    }

    /// Durably increments the table's epoch and returns the new value (1
    /// on the first call).
    ///
    /// # Errors
    /// When the log cannot be written or has no such table.
    pub async fn bump_epoch(&self, table: Uuid) -> Result<u64, StorageError> {
        self.write(Op::Epoch, WriteOp::Epoch(table)).await
    }

    /// Every stored table whose match is not finished, oldest first; rows
    /// that cannot be read are returned as errors beside the good ones.
    ///
    /// # Errors
    /// When the database cannot be read at all.
    pub async fn unfinished(&self) -> Result<Vec<Result<StoredTable, StorageError>>, StorageError> {
        self.guarded(Op::Read, async {
            match &*self.backend {
                Backend::Memory(m) => Ok(m.unfinished().into_iter().map(Ok).collect()),
                Backend::Sql(q) => q.unfinished().await,
            }
        })
        .await
    }

    /// One table's full record.
    ///
    /// # Errors
    /// When the database cannot be read or the record is corrupt.
    pub async fn get(&self, table: Uuid) -> Result<Option<StoredTable>, StorageError> {
        self.guarded(Op::Read, async {
            match &*self.backend {
                Backend::Memory(m) => Ok(m.get(table)),
                Backend::Sql(q) => q.get(table).await,
            }
        })
        .await
    }

    /// The most recently created tables that have a match, newest first.
    ///
    /// # Errors
    /// When the database cannot be read.
    pub async fn recent(&self, limit: usize) -> Result<Vec<StoredTable>, StorageError> {
        self.guarded(Op::Read, async {
            match &*self.backend {
                Backend::Memory(m) => Ok(m.recent(limit)),
                Backend::Sql(q) => q.recent(limit).await,
            }
        })
        .await
    }

    /// The lines of the recent-matches list, newest first: what
    /// `record::summary` gives for [`Journal::recent`], read from
    /// the summary columns in one query, without replaying any log.
    ///
    /// # Errors
    /// When the database cannot be read or a row is corrupt.
    pub async fn recent_summaries(&self, limit: usize) -> Result<Vec<MatchSummary>, StorageError> {
        self.summaries(&MatchPage { limit, ..MatchPage::default() }).await
    }

    /// One page of the match list ([`MatchPage`]), newest first.
    ///
    /// # Errors
    /// When the database cannot be read or a row is corrupt.
    pub async fn summaries(&self, page: &MatchPage) -> Result<Vec<MatchSummary>, StorageError> {
        self.guarded(Op::Read, async {
            match &*self.backend {
                Backend::Memory(m) => Ok(m.summaries(page)),
                Backend::Sql(q) => q.summaries(page).await,
            }
        })
        .await
    }

    /// True when the store answers (readiness); false while every operation
    /// is made to fail ([`Faults::fail_for`] with `None`).
    pub async fn ping(&self) -> bool {
        if self.faults.as_ref().is_some_and(Faults::all_failing) {
            return false;
        }
        match &*self.backend {
            Backend::Memory(_) => true,
            Backend::Sql(q) => q.ping().await,
        }
    }
}

/// The public line of a seat in match lists and records.
fn record_seat(seat: Seat, s: &SeatRecord) -> RecordSeat {
    RecordSeat {
        seat,
        name: s.name.clone(),
        kind: s.kind,
        account: s.account,
        left: s.left,
        players: s.players.clone(),
    }
}

/// A summary from stored rows alone: the counts and scores of the stored
/// hands (each team's score after the last one) and the stored result.
fn summary_of(stored: &StoredTable) -> MatchSummary {
    MatchSummary {
        table: stored.table.id,
        name: stored.table.name.clone(),
        created_at: stored.table.created_at_ms,
        seats: Seat::ALL
            .into_iter()
            .filter_map(|seat| stored.seats[seat].as_ref().map(|s| record_seat(seat, s)))
            .collect(),
        finished: stored.result.is_some(),
        hands_played: stored.hands.len(),
        scores: stored.hands.last().map_or([0, 0], |h| h.scores().0),
        result: stored.result,
        abandoned: stored.abandoned(),
    }
}

/// `url` without user, password or query: `scheme://host:port/db`, or the
/// file path of a SQLite URL: where the database is, for error messages.
/// (The configuration's `Debug` masks only the password instead:
/// [`crate::config::redact_url`].)
pub fn db_location(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        // `sqlite:path` or a bare path: no credentials, drop any query.
        return url.split('?').next().unwrap_or_default().to_owned();
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    format!("{scheme}://{host}{path}")
}

/// `message` with every trace of `url`'s credentials replaced.
fn scrub(message: &str, url: &str) -> String {
    if url.is_empty() {
        return message.to_owned();
    }
    let mut out = message.replace(url, &db_location(url));
    if let Some((_, rest)) = url.split_once("://")
        && let Some((userinfo, _)) = rest.split('/').next().unwrap_or_default().rsplit_once('@')
        && let Some((_, password)) = userinfo.split_once(':')
        && !password.is_empty()
    {
        out = out.replace(password, "***");
    }
    out
}
