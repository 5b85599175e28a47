//! The account store: accounts, their names (in use and kept after a
//! rename), devices and sessions, in the event log's database (SQLite or
//! PostgreSQL, the same SQL for both), or in an in-memory SQLite database
//! when the log is kept in memory. Secrets never reach it: devices and
//! sessions are found by the SHA-256 of what the client holds.
//!
//! Every write that must be all or nothing is one transaction whose first
//! statement writes (so SQLite takes its write lock at once, waiting its
//! busy timeout, rather than failing to upgrade a read lock), and every
//! uniqueness (a name's skeleton, a device, a session token) is a key the
//! database enforces, so two nodes racing for one name cannot both win.

use std::str::FromStr;
use std::time::Duration;

use spades_protocol::AccountKind;
use sqlx::postgres::PgPool;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePool, SqlitePoolOptions};
use tokio::sync::OnceCell;
use uuid::Uuid;

use super::StorageError;
use super::sql::Pool;
use crate::text::NAME_SKELETON_RULE;

/// An account as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountRow {
    /// Its id.
    pub id: Uuid,
    /// The display name.
    pub name: String,
    /// Made, Unix ms.
    pub created_at_ms: u64,
    /// The last rename, Unix ms.
    pub renamed_at_ms: Option<u64>,
    /// What kind: made from a device secret, or by a provider's sign-in.
    pub kind: AccountKind,
}

/// A session as stored (the token's hash stays in the store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// Its id (public: it names the session in the player's list).
    pub id: Uuid,
    /// The account.
    pub account: Uuid,
    /// The client that made it (its `User-Agent`, shortened).
    pub client: String,
    /// The client's address when it was made.
    pub address: String,
    /// Made, Unix ms.
    pub created_at_ms: u64,
    /// Last used, Unix ms (updated at most once a minute).
    pub last_used_at_ms: u64,
    /// It ends then unless used before, Unix ms.
    pub expires_at_ms: u64,
}

/// Who holds a name (or keeps it after a rename).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NameHolder {
    /// The account.
    pub account: Uuid,
    /// The name as it holds it.
    pub name: String,
    /// Kept for the account until then (it renamed); `None`: in use.
    pub kept_until_ms: Option<u64>,
}

/// What making a guest account found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    /// Made.
    Made,
    /// The name is another account's (or kept for it): nothing made.
    NameTaken(NameHolder),
    /// The device already has an account (a retry, or a race with
    /// another request of the same device): nothing made.
    DeviceKnown,
}

/// What a rename found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Renamed {
    /// Renamed.
    Done(AccountRow),
    /// The name is another account's (or kept for it): nothing changed.
    NameTaken(NameHolder),
    /// The account renamed after `since`: nothing changed.
    TooSoon,
    /// No such account.
    Missing,
}

/// A new guest account.
#[derive(Debug, Clone)]
pub struct NewGuest<'a> {
    /// Its id.
    pub id: Uuid,
    /// Its display name.
    pub name: &'a str,
    /// The name's skeleton.
    pub skeleton: &'a str,
    /// SHA-256 of the device secret, hex.
    pub device_hash: &'a str,
    /// Now, Unix ms.
    pub now_ms: u64,
}

/// A rename.
#[derive(Debug, Clone)]
pub struct Rename<'a> {
    /// The account.
    pub account: Uuid,
    /// The new name.
    pub name: &'a str,
    /// Its skeleton.
    pub skeleton: &'a str,
    /// The skeleton of the name it had.
    pub old_skeleton: &'a str,
    /// Now, Unix ms.
    pub now_ms: u64,
    /// Refused when the account renamed after this (Unix ms).
    pub not_since_ms: u64,
    /// The old name is kept for the account until then (Unix ms).
    pub keep_until_ms: u64,
}

/// Which of an account's sessions [`AccountStore::delete_sessions`] ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionsOf {
    /// That one.
    One(Uuid),
    /// Every one.
    All,
    /// Every one but that (the request's own).
    AllBut(Uuid),
}

/// The account store (cheap to clone).
#[derive(Debug, Clone)]
pub struct AccountStore {
    backend: Backend,
    timeout: Duration,
}

#[derive(Debug, Clone)]
enum Backend {
    Sql(Pool),
    /// An in-memory SQLite database, made and migrated on first use.
    Memory(std::sync::Arc<OnceCell<SqlitePool>>),
}

fn db_err(what: &str, e: &sqlx::Error) -> StorageError {
    StorageError::Database(format!("{what}: {e}"))
}

/// Unix ms as stored (`i64`), saturating.
pub(super) fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A stored time, never negative.
pub(super) fn unms(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

pub(super) fn uuid_of(what: &str, s: &str) -> Result<Uuid, StorageError> {
    Uuid::parse_str(s).map_err(|_| StorageError::Database(format!("a stored {what} id is not a UUID: {s:?}")))
}

pub(super) type AccountTuple = (String, String, i64, Option<i64>, String);
type SessionTuple = (String, String, String, String, i64, i64, i64);
type HolderTuple = (String, String, Option<i64>);

pub(super) fn account_of(row: AccountTuple) -> Result<AccountRow, StorageError> {
    let (id, name, created_at, renamed_at, kind) = row;
    Ok(AccountRow {
        kind: if kind == "member" { AccountKind::Member } else { AccountKind::Guest },
        id: uuid_of("account", &id)?,
        name,
        created_at_ms: unms(created_at),
        renamed_at_ms: renamed_at.map(unms),
    })
}

fn session_of(row: SessionTuple) -> Result<SessionRow, StorageError> {
    let (id, account, client, address, created_at, last_used_at, expires_at) = row;
    Ok(SessionRow {
        id: uuid_of("session", &id)?,
        account: uuid_of("account", &account)?,
        client,
        address,
        created_at_ms: unms(created_at),
        last_used_at_ms: unms(last_used_at),
        expires_at_ms: unms(expires_at),
    })
}

fn holder_of(row: HolderTuple) -> Result<NameHolder, StorageError> {
    let (account, name, kept_until) = row;
    Ok(NameHolder { account: uuid_of("account", &account)?, name, kept_until_ms: kept_until.map(unms) })
}

pub(super) const ACCOUNT_COLUMNS: &str = "id, name, created_at, renamed_at, kind";
const SESSION_COLUMNS: &str =
    "s.id, s.account_id, s.client, s.address, s.created_at, s.last_used_at, s.expires_at";

impl AccountStore {
    /// The store on the event log's database.
    pub(super) fn sql(pool: Pool, timeout: Duration) -> AccountStore {
        AccountStore { backend: Backend::Sql(pool), timeout }
    }

    /// A store kept in memory (an in-memory SQLite database; nothing
    /// survives a restart).
    pub fn memory() -> AccountStore {
        AccountStore {
            backend: Backend::Memory(std::sync::Arc::new(OnceCell::new())),
            timeout: Duration::from_secs(2),
        }
    }

    async fn pool(&self) -> Result<Pool, StorageError> {
        match &self.backend {
            Backend::Sql(pool) => Ok(pool.clone()),
            Backend::Memory(cell) => {
                let pool = cell
                    .get_or_try_init(|| async {
                        let options = SqliteConnectOptions::from_str("sqlite::memory:")
                            .map_err(|e| db_err("opening the account store", &e))?
                            .foreign_keys(true);
                        // One connection, never closed: each connection to
                        // `:memory:` is a database of its own.
                        let pool = SqlitePoolOptions::new()
                            .max_connections(1)
                            .min_connections(1)
                            .idle_timeout(None)
                            .max_lifetime(None)
                            .connect_with(options)
                            .await
                            .map_err(|e| db_err("opening the account store", &e))?;
                        sqlx::migrate!("../../migrations/sqlite").run(&pool).await.map_err(|e| {
                            StorageError::Database(format!("migrating the account store: {e}"))
                        })?;
                        Ok::<_, StorageError>(pool)
                    })
                    .await?;
                Ok(Pool::Sqlite(pool.clone()))
            }
        }
    }

    /// Runs one operation within the store's timeout.
    pub(super) async fn run<T, F, Fut>(&self, what: &str, op: F) -> Result<T, StorageError>
    where
        F: FnOnce(Pool) -> Fut,
        Fut: Future<Output = Result<T, sqlx::Error>>,
    {
        let pool = self.pool().await?;
        match tokio::time::timeout(self.timeout, op(pool)).await {
            Ok(result) => result.map_err(|e| db_err(what, &e)),
            Err(_) => Err(StorageError::Database(format!(
                "{what}: no answer within {} ms",
                self.timeout.as_millis()
            ))),
        }
    }

    /// The account of a device.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn device_account(&self, device_hash: &str) -> Result<Option<AccountRow>, StorageError> {
        let row = self
            .run("reading a device", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::device_account(&p, device_hash).await,
                    Pool::Postgres(p) => pg::device_account(&p, device_hash).await,
                }
            })
            .await?;
        row.map(account_of).transpose()
    }

    /// One account.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn account(&self, id: Uuid) -> Result<Option<AccountRow>, StorageError> {
        let row = self
            .run("reading an account", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::account(&p, id).await,
                    Pool::Postgres(p) => pg::account(&p, id).await,
                }
            })
            .await?;
        row.map(account_of).transpose()
    }

    /// Who holds the name of `skeleton` (in use, or kept until after
    /// `now_ms`).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn name_holder(&self, skeleton: &str, now_ms: u64) -> Result<Option<NameHolder>, StorageError> {
        let row = self
            .run("reading a name", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::name_holder(&p, skeleton, now_ms).await,
                    Pool::Postgres(p) => pg::name_holder(&p, skeleton, now_ms).await,
                }
            })
            .await?;
        row.map(holder_of).transpose()
    }

    /// Makes a guest account with its name and device, all or nothing.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn create_guest(&self, new: &NewGuest<'_>) -> Result<Created, StorageError> {
        let made = self
            .run("making an account", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::create_guest(&p, new).await,
                    Pool::Postgres(p) => pg::create_guest(&p, new).await,
                }
            })
            .await?;
        match made {
            Step::Done(()) => Ok(Created::Made),
            Step::DeviceKnown => Ok(Created::DeviceKnown),
            Step::NameTaken => Ok(self
                .name_holder(new.skeleton, new.now_ms)
                .await?
                .map_or(Created::DeviceKnown, Created::NameTaken)),
            Step::TooSoon | Step::Missing => Err(StorageError::Database("making an account failed".into())),
        }
    }

    /// Renames an account, keeping its old name for it, all or nothing.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn rename(&self, rename: &Rename<'_>) -> Result<Renamed, StorageError> {
        let step = self
            .run("renaming an account", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::rename(&p, rename).await,
                    Pool::Postgres(p) => pg::rename(&p, rename).await,
                }
            })
            .await?;
        match step {
            Step::Done(()) => match self.account(rename.account).await? {
                Some(account) => Ok(Renamed::Done(account)),
                None => Ok(Renamed::Missing),
            },
            Step::TooSoon => Ok(Renamed::TooSoon),
            Step::Missing | Step::DeviceKnown => Ok(Renamed::Missing),
            Step::NameTaken => match self.name_holder(rename.skeleton, rename.now_ms).await? {
                Some(holder) => Ok(Renamed::NameTaken(holder)),
                // Freed between the two reads: the player may try again.
                None => Err(StorageError::Database("the name changed hands: try again".into())),
            },
        }
    }

    /// Makes again the skeletons of the names stored under a rule older
    /// than `rule`, with `skeleton` (the current rule). Answers how many
    /// rows took a new skeleton and how many could not, their new skeleton
    /// being another row's already (two names an older rule told apart,
    /// which now look alike: both are kept, the later one under its old
    /// skeleton). Safe to run on several nodes at once: each row moves
    /// once.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn rekey_names(
        &self,
        rule: i64,
        skeleton: &(dyn Fn(&str) -> String + Sync),
    ) -> Result<(usize, usize), StorageError> {
        let rows = self
            .run("reading names of an older rule", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::names_of_rule_before(&p, rule).await,
                    Pool::Postgres(p) => pg::names_of_rule_before(&p, rule).await,
                }
            })
            .await?;
        let (mut moved, mut clashed) = (0, 0);
        for (old, name) in rows {
            let new = skeleton(&name);
            let (old, new) = (old.as_str(), new.as_str());
            let done = self
                .run("re-keying a name", |pool| async move {
                    match pool {
                        Pool::Sqlite(p) => sqlite::rekey_name(&p, old, new, rule).await,
                        Pool::Postgres(p) => pg::rekey_name(&p, old, new, rule).await,
                    }
                })
                .await?;
            if old == new {
                continue;
            }
            if done {
                moved += 1;
            } else {
                clashed += 1;
            }
        }
        Ok((moved, clashed))
    }

    /// Stores a new session.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn insert_session(&self, session: &SessionRow, token_hash: &str) -> Result<(), StorageError> {
        self.run("making a session", |pool| async move {
            match pool {
                Pool::Sqlite(p) => sqlite::insert_session(&p, session, token_hash).await,
                Pool::Postgres(p) => pg::insert_session(&p, session, token_hash).await,
            }
        })
        .await
    }

    /// The session of a token's hash, with its account (expired or not).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn session(&self, token_hash: &str) -> Result<Option<(SessionRow, AccountRow)>, StorageError> {
        let row = self
            .run("reading a session", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::session(&p, token_hash).await,
                    Pool::Postgres(p) => pg::session(&p, token_hash).await,
                }
            })
            .await?;
        match row {
            None => Ok(None),
            Some((s, a)) => Ok(Some((session_of(s)?, account_of(a)?))),
        }
    }

    /// Records a use of a session and moves its expiry.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn touch(&self, id: Uuid, now_ms: u64, expires_at_ms: u64) -> Result<(), StorageError> {
        self.run("renewing a session", |pool| async move {
            match pool {
                Pool::Sqlite(p) => sqlite::touch(&p, id, now_ms, expires_at_ms).await,
                Pool::Postgres(p) => pg::touch(&p, id, now_ms, expires_at_ms).await,
            }
        })
        .await
    }

    /// An account's sessions that have not expired, newest use first.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn sessions(&self, account: Uuid, now_ms: u64) -> Result<Vec<SessionRow>, StorageError> {
        let rows = self
            .run("listing sessions", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::sessions(&p, account, now_ms).await,
                    Pool::Postgres(p) => pg::sessions(&p, account, now_ms).await,
                }
            })
            .await?;
        rows.into_iter().map(session_of).collect()
    }

    /// Deletes the account's sessions that `which` names. Returns the ids
    /// deleted.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn delete_sessions(&self, account: Uuid, which: SessionsOf) -> Result<Vec<Uuid>, StorageError> {
        let ids = self
            .run("signing out", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::delete_sessions(&p, account, which).await,
                    Pool::Postgres(p) => pg::delete_sessions(&p, account, which).await,
                }
            })
            .await?;
        ids.iter().map(|id| uuid_of("session", id)).collect()
    }

    /// When each device of the account was added (Unix ms), the first
    /// first. (Their secrets' hashes stay in the store.)
    ///
    /// # Errors
    /// When the database fails.
    pub async fn devices(&self, account: Uuid) -> Result<Vec<u64>, StorageError> {
        let rows = self
            .run("reading devices", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::devices(&p, account).await,
                    Pool::Postgres(p) => pg::devices(&p, account).await,
                }
            })
            .await?;
        Ok(rows.into_iter().map(|(at,)| unms(at)).collect())
    }

    /// Forgets expired sessions and names no longer kept.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn sweep(&self, now_ms: u64) -> Result<(), StorageError> {
        self.run("forgetting expired sessions", |pool| async move {
            match pool {
                Pool::Sqlite(p) => sqlite::sweep(&p, now_ms).await,
                Pool::Postgres(p) => pg::sweep(&p, now_ms).await,
            }
        })
        .await
    }
}

/// How a transaction ended.
#[derive(Debug)]
enum Step<T> {
    Done(T),
    NameTaken,
    DeviceKnown,
    TooSoon,
    Missing,
}

#[cfg(test)]
impl AccountStore {
    /// A guest account named `P<n>` (its device `device-<n>`), for the
    /// tests of the stores on this database.
    pub(crate) async fn test_guest(&self, n: u8) -> Uuid {
        let id = Uuid::new_v4();
        let (name, skeleton, device) = (format!("P{n}"), format!("p{n}"), format!("device-{n}"));
        let new = NewGuest { id, name: &name, skeleton: &skeleton, device_hash: &device, now_ms: 1 };
        assert_eq!(self.create_guest(&new).await.unwrap(), Created::Made);
        id
    }
}

/// The same SQL for both databases (`$n` placeholders work in both).
macro_rules! backend {
    ($module:ident, $pool:ty, $conn:ty) => {
        pub(super) mod $module {
            use super::*;

            /// In a transaction: frees the name of `skeleton` if it is no
            /// longer kept, then makes the account `id` of `kind` and gives
            /// it the name. `false`: the name is taken (roll back).
            pub(in crate::storage) async fn insert_named(
                conn: &mut $conn,
                id: &str,
                name: &str,
                skeleton: &str,
                kind: &str,
                now_ms: u64,
            ) -> Result<bool, sqlx::Error> {
                sqlx::query(
                    "DELETE FROM account_names WHERE skeleton = $1 AND kept_until IS NOT NULL AND kept_until <= $2",
                )
                .bind(skeleton)
                .bind(ms(now_ms))
                .execute(&mut *conn)
                .await?;
                sqlx::query("INSERT INTO accounts (id, name, kind, created_at) VALUES ($1, $2, $3, $4)")
                    .bind(id)
                    .bind(name)
                    .bind(kind)
                    .bind(ms(now_ms))
                    .execute(&mut *conn)
                    .await?;
                let named = sqlx::query(
                    "INSERT INTO account_names (skeleton, account_id, name, rule) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (skeleton) DO NOTHING",
                )
                .bind(skeleton)
                .bind(id)
                .bind(name)
                .bind(NAME_SKELETON_RULE)
                .execute(&mut *conn)
                .await?;
                Ok(named.rows_affected() == 1)
            }

            pub(super) async fn device_account(
                pool: &$pool,
                hash: &str,
            ) -> Result<Option<AccountTuple>, sqlx::Error> {
                sqlx::query_as(
                    "SELECT a.id, a.name, a.created_at, a.renamed_at, a.kind FROM devices d \
                     JOIN accounts a ON a.id = d.account_id WHERE d.secret_hash = $1",
                )
                .bind(hash)
                .fetch_optional(pool)
                .await
            }

            pub(super) async fn account(pool: &$pool, id: Uuid) -> Result<Option<AccountTuple>, sqlx::Error> {
                sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = $1")))
                    .bind(id.to_string())
                    .fetch_optional(pool)
                    .await
            }

            pub(super) async fn name_holder(
                pool: &$pool,
                skeleton: &str,
                now_ms: u64,
            ) -> Result<Option<HolderTuple>, sqlx::Error> {
                sqlx::query_as(
                    "SELECT account_id, name, kept_until FROM account_names \
                     WHERE skeleton = $1 AND (kept_until IS NULL OR kept_until > $2)",
                )
                .bind(skeleton)
                .bind(ms(now_ms))
                .fetch_optional(pool)
                .await
            }

            pub(super) async fn create_guest(pool: &$pool, new: &NewGuest<'_>) -> Result<Step<()>, sqlx::Error> {
                let mut tx = pool.begin().await?;
                let id = new.id.to_string();
                if !insert_named(&mut tx, &id, new.name, new.skeleton, "guest", new.now_ms).await? {
                    tx.rollback().await?;
                    return Ok(Step::NameTaken);
                }
                let device = sqlx::query(
                    "INSERT INTO devices (secret_hash, account_id, created_at) VALUES ($1, $2, $3) \
                     ON CONFLICT (secret_hash) DO NOTHING",
                )
                .bind(new.device_hash)
                .bind(&id)
                .bind(ms(new.now_ms))
                .execute(&mut *tx)
                .await?;
                if device.rows_affected() == 0 {
                    tx.rollback().await?;
                    return Ok(Step::DeviceKnown);
                }
                tx.commit().await?;
                Ok(Step::Done(()))
            }

            pub(super) async fn rename(pool: &$pool, r: &Rename<'_>) -> Result<Step<()>, sqlx::Error> {
                let id = r.account.to_string();
                let mut tx = pool.begin().await?;
                // The rate, checked by the write that takes the lock.
                let renamed = sqlx::query(
                    "UPDATE accounts SET name = $1, renamed_at = $2 \
                     WHERE id = $3 AND (renamed_at IS NULL OR renamed_at <= $4)",
                )
                .bind(r.name)
                .bind(ms(r.now_ms))
                .bind(&id)
                .bind(ms(r.not_since_ms))
                .execute(&mut *tx)
                .await?;
                if renamed.rows_affected() == 0 {
                    tx.rollback().await?;
                    let exists: Option<(String,)> = sqlx::query_as("SELECT id FROM accounts WHERE id = $1")
                        .bind(&id)
                        .fetch_optional(pool)
                        .await?;
                    return Ok(if exists.is_some() { Step::TooSoon } else { Step::Missing });
                }
                if r.skeleton == r.old_skeleton {
                    // The same name, written differently ("ann" to "Ann").
                    sqlx::query("UPDATE account_names SET name = $1 WHERE skeleton = $2 AND account_id = $3")
                        .bind(r.name)
                        .bind(r.skeleton)
                        .bind(&id)
                        .execute(&mut *tx)
                        .await?;
                    tx.commit().await?;
                    return Ok(Step::Done(()));
                }
                // A name no longer kept is free, and one kept for this
                // account is its own to take back.
                sqlx::query(
                    "DELETE FROM account_names WHERE skeleton = $1 AND kept_until IS NOT NULL \
                     AND (kept_until <= $2 OR account_id = $3)",
                )
                .bind(r.skeleton)
                .bind(ms(r.now_ms))
                .bind(&id)
                .execute(&mut *tx)
                .await?;
                let named = sqlx::query(
                    "INSERT INTO account_names (skeleton, account_id, name, rule) VALUES ($1, $2, $3, $4) \
                     ON CONFLICT (skeleton) DO NOTHING",
                )
                .bind(r.skeleton)
                .bind(&id)
                .bind(r.name)
                .bind(NAME_SKELETON_RULE)
                .execute(&mut *tx)
                .await?;
                if named.rows_affected() == 0 {
                    tx.rollback().await?;
                    return Ok(Step::NameTaken);
                }
                // The name given up: the account's one row in use but the
                // new one (found by the account, not by a skeleton made
                // again, which an older look-alike rule may have made
                // differently).
                sqlx::query(
                    "UPDATE account_names SET kept_until = $1 \
                     WHERE account_id = $2 AND kept_until IS NULL AND skeleton <> $3",
                )
                .bind(ms(r.keep_until_ms))
                .bind(&id)
                .bind(r.skeleton)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok(Step::Done(()))
            }

            pub(super) async fn insert_session(
                pool: &$pool,
                s: &SessionRow,
                token_hash: &str,
            ) -> Result<(), sqlx::Error> {
                sqlx::query(
                    "INSERT INTO sessions (id, token_hash, account_id, client, address, created_at, \
                     last_used_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                )
                .bind(s.id.to_string())
                .bind(token_hash)
                .bind(s.account.to_string())
                .bind(&s.client)
                .bind(&s.address)
                .bind(ms(s.created_at_ms))
                .bind(ms(s.last_used_at_ms))
                .bind(ms(s.expires_at_ms))
                .execute(pool)
                .await
                .map(drop)
            }

            pub(super) async fn session(
                pool: &$pool,
                token_hash: &str,
            ) -> Result<Option<(SessionTuple, AccountTuple)>, sqlx::Error> {
                type Row = (String, String, String, String, i64, i64, i64, String, String, i64, Option<i64>, String);
                let row: Option<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {SESSION_COLUMNS}, a.id, a.name, a.created_at, a.renamed_at, a.kind FROM sessions s \
                     JOIN accounts a ON a.id = s.account_id WHERE s.token_hash = $1"
                )))
                .bind(token_hash)
                .fetch_optional(pool)
                .await?;
                Ok(row.map(|(id, account, client, address, created, used, expires, aid, name, acreated, renamed, kind)| {
                    (
                        (id, account, client, address, created, used, expires),
                        (aid, name, acreated, renamed, kind),
                    )
                }))
            }

            pub(super) async fn touch(
                pool: &$pool,
                id: Uuid,
                now_ms: u64,
                expires_at_ms: u64,
            ) -> Result<(), sqlx::Error> {
                sqlx::query("UPDATE sessions SET last_used_at = $1, expires_at = $2 WHERE id = $3")
                    .bind(ms(now_ms))
                    .bind(ms(expires_at_ms))
                    .bind(id.to_string())
                    .execute(pool)
                    .await
                    .map(drop)
            }

            pub(super) async fn sessions(
                pool: &$pool,
                account: Uuid,
                now_ms: u64,
            ) -> Result<Vec<SessionTuple>, sqlx::Error> {
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.account_id = $1 AND s.expires_at > $2 \
                     ORDER BY s.last_used_at DESC, s.id"
                )))
                .bind(account.to_string())
                .bind(ms(now_ms))
                .fetch_all(pool)
                .await
            }

            pub(super) async fn delete_sessions(
                pool: &$pool,
                account: Uuid,
                which: SessionsOf,
            ) -> Result<Vec<String>, sqlx::Error> {
                let (sql, id) = match which {
                    SessionsOf::One(id) => {
                        ("DELETE FROM sessions WHERE account_id = $1 AND id = $2 RETURNING id", Some(id))
                    }
                    SessionsOf::AllBut(id) => {
                        ("DELETE FROM sessions WHERE account_id = $1 AND id <> $2 RETURNING id", Some(id))
                    }
                    SessionsOf::All => ("DELETE FROM sessions WHERE account_id = $1 RETURNING id", None),
                };
                let mut q = sqlx::query_as(sql).bind(account.to_string());
                if let Some(id) = id {
                    q = q.bind(id.to_string());
                }
                let rows: Vec<(String,)> = q.fetch_all(pool).await?;
                Ok(rows.into_iter().map(|(id,)| id).collect())
            }

            pub(super) async fn devices(pool: &$pool, account: Uuid) -> Result<Vec<(i64,)>, sqlx::Error> {
                sqlx::query_as("SELECT created_at FROM devices WHERE account_id = $1 ORDER BY created_at")
                    .bind(account.to_string())
                    .fetch_all(pool)
                    .await
            }

            pub(super) async fn names_of_rule_before(
                pool: &$pool,
                rule: i64,
            ) -> Result<Vec<(String, String)>, sqlx::Error> {
                sqlx::query_as("SELECT skeleton, name FROM account_names WHERE rule < $1")
                    .bind(rule)
                    .fetch_all(pool)
                    .await
            }

            /// Gives a row its skeleton under `rule`: `Ok(false)` when
            /// another row holds that skeleton already (the row then only
            /// says it was seen under `rule`).
            pub(super) async fn rekey_name(
                pool: &$pool,
                old: &str,
                new: &str,
                rule: i64,
            ) -> Result<bool, sqlx::Error> {
                let moved = sqlx::query(
                    "UPDATE account_names SET skeleton = $1, rule = $2 WHERE skeleton = $3 AND rule < $2 \
                     AND NOT EXISTS (SELECT 1 FROM account_names o WHERE o.skeleton = $1 AND o.skeleton <> $3)",
                )
                .bind(new)
                .bind(rule)
                .bind(old)
                .execute(pool)
                .await?;
                if moved.rows_affected() > 0 {
                    return Ok(true);
                }
                let seen = sqlx::query("UPDATE account_names SET rule = $1 WHERE skeleton = $2 AND rule < $1")
                    .bind(rule)
                    .bind(old)
                    .execute(pool)
                    .await?;
                Ok(seen.rows_affected() == 0)
            }

            pub(super) async fn sweep(pool: &$pool, now_ms: u64) -> Result<(), sqlx::Error> {
                sqlx::query("DELETE FROM sessions WHERE expires_at <= $1").bind(ms(now_ms)).execute(pool).await?;
                sqlx::query("DELETE FROM account_names WHERE kept_until IS NOT NULL AND kept_until <= $1")
                    .bind(ms(now_ms))
                    .execute(pool)
                    .await
                    .map(drop)
            }
        }
    };
}

backend!(sqlite, SqlitePool, sqlx::SqliteConnection);
backend!(pg, PgPool, sqlx::PgConnection);
