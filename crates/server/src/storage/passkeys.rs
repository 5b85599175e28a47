//! The passkey store: each account's passkeys (the public part of a
//! WebAuthn credential, its signature counter, its name) and the ceremonies
//! under way (the relying party's state between a challenge and its
//! answer), on the account store's database. A ceremony is kept on the
//! server, never in a cookie, so that it can be finished on any node of a
//! cluster, and it is taken once: reading it deletes it.

use uuid::Uuid;

use super::StorageError;
use super::accounts::{AccountStore, ms, unms, uuid_of};
use super::sql::Pool;

/// A passkey as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PasskeyRow {
    /// The credential id, hex.
    pub id: String,
    /// The account it signs in.
    pub account: Uuid,
    /// Its name, chosen by the player ("Phone").
    pub name: String,
    /// The credential as the relying party keeps it (JSON: the public key
    /// and the signature counter; nothing secret).
    pub credential: String,
    /// Added, Unix ms.
    pub created_at_ms: u64,
    /// Last used to sign in, Unix ms.
    pub last_used_at_ms: Option<u64>,
}

/// What a ceremony is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CeremonyKind {
    /// Adding a passkey to a signed-in account.
    Register,
    /// Signing in with a passkey.
    SignIn,
}

impl CeremonyKind {
    fn as_str(self) -> &'static str {
        match self {
            CeremonyKind::Register => "passkey_register",
            CeremonyKind::SignIn => "passkey_sign_in",
        }
    }
}

/// A ceremony under way.
#[derive(Clone)]
pub struct Ceremony {
    /// What it is for.
    pub kind: CeremonyKind,
    /// The account (registration only).
    pub account: Option<Uuid>,
    /// The relying party's state (JSON).
    pub state: String,
}

impl std::fmt::Debug for Ceremony {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ceremony")
            .field("kind", &self.kind)
            .field("account", &self.account)
            .finish_non_exhaustive()
    }
}

/// The passkey store (cheap to clone): a narrow handle on the account
/// store's database.
#[derive(Debug, Clone)]
pub struct PasskeyStore {
    db: AccountStore,
}

type PasskeyTuple = (String, String, String, String, i64, Option<i64>);

fn passkey_of(row: PasskeyTuple) -> Result<PasskeyRow, StorageError> {
    let (id, account, name, credential, created_at, last_used_at) = row;
    Ok(PasskeyRow {
        id,
        account: uuid_of("account", &account)?,
        name,
        credential,
        created_at_ms: unms(created_at),
        last_used_at_ms: last_used_at.map(unms),
    })
}

const PASSKEY_COLUMNS: &str = "id, account_id, name, credential, created_at, last_used_at";

impl AccountStore {
    /// The passkey store on the same database.
    pub fn passkeys(&self) -> PasskeyStore {
        PasskeyStore { db: self.clone() }
    }
}

impl PasskeyStore {
    /// Keeps a ceremony until `expires_at_ms`.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn begin(&self, id: Uuid, ceremony: &Ceremony, expires_at_ms: u64) -> Result<(), StorageError> {
        self.db
            .run("keeping a ceremony", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::begin(&p, id, ceremony, expires_at_ms).await,
                    Pool::Postgres(p) => pg::begin(&p, id, ceremony, expires_at_ms).await,
                }
            })
            .await
    }

    /// Takes a ceremony of `kind` that has not expired (and, when
    /// `account` is given, that account's): it is deleted, so a second
    /// answer to the same challenge finds nothing.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn take(
        &self,
        id: Uuid,
        kind: CeremonyKind,
        account: Option<Uuid>,
        now_ms: u64,
    ) -> Result<Option<Ceremony>, StorageError> {
        let row = self
            .db
            .run("taking a ceremony", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::take(&p, id, kind, account, now_ms).await,
                    Pool::Postgres(p) => pg::take(&p, id, kind, account, now_ms).await,
                }
            })
            .await?;
        row.map(|(account, state)| {
            let account = account.map(|a| uuid_of("account", &a)).transpose()?;
            Ok(Ceremony { kind, account, state })
        })
        .transpose()
    }

    /// Adds a passkey. `Ok(false)` when its credential id is stored
    /// already (for this account or another): nothing is added.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn add(&self, row: &PasskeyRow) -> Result<bool, StorageError> {
        self.db
            .run("adding a passkey", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::add(&p, row).await,
                    Pool::Postgres(p) => pg::add(&p, row).await,
                }
            })
            .await
    }

    /// The passkey of a credential id.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn get(&self, id: &str) -> Result<Option<PasskeyRow>, StorageError> {
        let row = self
            .db
            .run("reading a passkey", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::get(&p, id).await,
                    Pool::Postgres(p) => pg::get(&p, id).await,
                }
            })
            .await?;
        row.map(passkey_of).transpose()
    }

    /// An account's passkeys, the first added first.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn of_account(&self, account: Uuid) -> Result<Vec<PasskeyRow>, StorageError> {
        let rows = self
            .db
            .run("reading passkeys", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::of_account(&p, account).await,
                    Pool::Postgres(p) => pg::of_account(&p, account).await,
                }
            })
            .await?;
        rows.into_iter().map(passkey_of).collect()
    }

    /// Records a sign-in with a passkey: its credential (the new counter)
    /// and when.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn used(&self, id: &str, credential: &str, now_ms: u64) -> Result<(), StorageError> {
        self.db
            .run("recording a passkey's use", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::used(&p, id, credential, now_ms).await,
                    Pool::Postgres(p) => pg::used(&p, id, credential, now_ms).await,
                }
            })
            .await
    }

    /// Removes an account's passkey; `Ok(false)`: it has none of that id.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn remove(&self, account: Uuid, id: &str) -> Result<bool, StorageError> {
        self.db
            .run("removing a passkey", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::remove(&p, account, id).await,
                    Pool::Postgres(p) => pg::remove(&p, account, id).await,
                }
            })
            .await
    }

    /// Forgets the ceremonies that ran out.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn sweep(&self, now_ms: u64) -> Result<(), StorageError> {
        self.db
            .run("forgetting old ceremonies", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::sweep(&p, now_ms).await,
                    Pool::Postgres(p) => pg::sweep(&p, now_ms).await,
                }
            })
            .await
    }
}

/// The same SQL for both databases (`$n` placeholders work in both).
macro_rules! backend {
    ($module:ident, $pool:ty) => {
        mod $module {
            use super::*;

            pub(super) async fn begin(
                pool: &$pool,
                id: Uuid,
                c: &Ceremony,
                expires_at_ms: u64,
            ) -> Result<(), sqlx::Error> {
                sqlx::query(
                    "INSERT INTO ceremonies (id, kind, account_id, state, expires_at) VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(id.to_string())
                .bind(c.kind.as_str())
                .bind(c.account.map(|a| a.to_string()))
                .bind(&c.state)
                .bind(ms(expires_at_ms))
                .execute(pool)
                .await
                .map(drop)
            }

            pub(super) async fn take(
                pool: &$pool,
                id: Uuid,
                kind: CeremonyKind,
                account: Option<Uuid>,
                now_ms: u64,
            ) -> Result<Option<(Option<String>, String)>, sqlx::Error> {
                let sql = if account.is_some() {
                    "DELETE FROM ceremonies WHERE id = $1 AND kind = $2 AND expires_at > $3 AND account_id = $4 \
                     RETURNING account_id, state"
                } else {
                    "DELETE FROM ceremonies WHERE id = $1 AND kind = $2 AND expires_at > $3 \
                     RETURNING account_id, state"
                };
                let query = sqlx::query_as(sql).bind(id.to_string()).bind(kind.as_str()).bind(ms(now_ms));
                match account {
                    Some(a) => query.bind(a.to_string()).fetch_optional(pool).await,
                    None => query.fetch_optional(pool).await,
                }
            }

            pub(super) async fn add(pool: &$pool, r: &PasskeyRow) -> Result<bool, sqlx::Error> {
                let done = sqlx::query(
                    "INSERT INTO passkeys (id, account_id, name, credential, created_at) \
                     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING",
                )
                .bind(&r.id)
                .bind(r.account.to_string())
                .bind(&r.name)
                .bind(&r.credential)
                .bind(ms(r.created_at_ms))
                .execute(pool)
                .await?;
                Ok(done.rows_affected() == 1)
            }

            pub(super) async fn get(pool: &$pool, id: &str) -> Result<Option<PasskeyTuple>, sqlx::Error> {
                sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {PASSKEY_COLUMNS} FROM passkeys WHERE id = $1")))
                    .bind(id)
                    .fetch_optional(pool)
                    .await
            }

            pub(super) async fn of_account(pool: &$pool, account: Uuid) -> Result<Vec<PasskeyTuple>, sqlx::Error> {
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {PASSKEY_COLUMNS} FROM passkeys WHERE account_id = $1 ORDER BY created_at, id"
                )))
                .bind(account.to_string())
                .fetch_all(pool)
                .await
            }

            pub(super) async fn used(
                pool: &$pool,
                id: &str,
                credential: &str,
                now_ms: u64,
            ) -> Result<(), sqlx::Error> {
                sqlx::query("UPDATE passkeys SET credential = $1, last_used_at = $2 WHERE id = $3")
                    .bind(credential)
                    .bind(ms(now_ms))
                    .bind(id)
                    .execute(pool)
                    .await
                    .map(drop)
            }

            pub(super) async fn remove(pool: &$pool, account: Uuid, id: &str) -> Result<bool, sqlx::Error> {
                let done = sqlx::query("DELETE FROM passkeys WHERE account_id = $1 AND id = $2")
                    .bind(account.to_string())
                    .bind(id)
                    .execute(pool)
                    .await?;
                Ok(done.rows_affected() == 1)
            }

            pub(super) async fn sweep(pool: &$pool, now_ms: u64) -> Result<(), sqlx::Error> {
                sqlx::query("DELETE FROM ceremonies WHERE expires_at <= $1")
                    .bind(ms(now_ms))
                    .execute(pool)
                    .await
                    .map(drop)
            }
        }
    };
}

backend!(sqlite, sqlx::sqlite::SqlitePool);
backend!(pg, sqlx::postgres::PgPool);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{AccountStore, NewGuest};

    async fn account(store: &AccountStore, n: u8) -> Uuid {
        let id = Uuid::new_v4();
        let (name, skeleton, device) = (format!("P{n}"), format!("p{n}"), format!("device-{n}"));
        let new = NewGuest { id, name: &name, skeleton: &skeleton, device_hash: &device, now_ms: 1 };
        store.create_guest(&new).await.unwrap();
        id
    }

    #[tokio::test]
    async fn a_ceremony_is_taken_once_by_its_kind_and_account_before_it_runs_out() {
        let store = AccountStore::memory();
        let (ann, bo) = (account(&store, 1).await, account(&store, 2).await);
        let passkeys = store.passkeys();
        let ceremony = |account| Ceremony { kind: CeremonyKind::Register, account, state: "{}".into() };
        let id = Uuid::new_v4();
        passkeys.begin(id, &ceremony(Some(ann)), 1_000).await.unwrap();
        // Not another account's, not as the other kind.
        assert!(passkeys.take(id, CeremonyKind::Register, Some(bo), 500).await.unwrap().is_none());
        assert!(passkeys.take(id, CeremonyKind::SignIn, None, 500).await.unwrap().is_none());
        // Its own, once.
        let taken = passkeys.take(id, CeremonyKind::Register, Some(ann), 500).await.unwrap().unwrap();
        assert_eq!((taken.account, taken.state.as_str()), (Some(ann), "{}"));
        assert!(passkeys.take(id, CeremonyKind::Register, Some(ann), 500).await.unwrap().is_none());
        // Run out: gone, even unused.
        let late = Uuid::new_v4();
        passkeys.begin(late, &ceremony(Some(ann)), 1_000).await.unwrap();
        assert!(passkeys.take(late, CeremonyKind::Register, Some(ann), 1_000).await.unwrap().is_none());
        passkeys.sweep(2_000).await.unwrap();
        assert!(passkeys.take(late, CeremonyKind::Register, Some(ann), 0).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_credential_belongs_to_one_account() {
        let store = AccountStore::memory();
        let (ann, bo) = (account(&store, 1).await, account(&store, 2).await);
        let passkeys = store.passkeys();
        let row = |account| PasskeyRow {
            id: "c0ffee".into(),
            account,
            name: "Phone".into(),
            credential: "{}".into(),
            created_at_ms: 5,
            last_used_at_ms: None,
        };
        assert!(passkeys.add(&row(ann)).await.unwrap());
        assert!(!passkeys.add(&row(bo)).await.unwrap(), "another account cannot add it");
        assert!(!passkeys.add(&row(ann)).await.unwrap(), "nor the same one twice");
        assert_eq!(passkeys.get("c0ffee").await.unwrap().unwrap().account, ann);
        assert!(passkeys.of_account(bo).await.unwrap().is_empty());
        // Removed only by its account.
        assert!(!passkeys.remove(bo, "c0ffee").await.unwrap());
        assert!(passkeys.remove(ann, "c0ffee").await.unwrap());
        assert!(passkeys.get("c0ffee").await.unwrap().is_none());
    }
}
