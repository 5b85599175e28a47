//! The passkey store: each account's passkeys (the public part of a
//! WebAuthn credential, its signature counter, its name), on the account
//! store's database. The ceremonies that add and use them are kept by
//! `ceremonies.rs`.

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
}

/// The same SQL for both databases (`$n` placeholders work in both).
macro_rules! backend {
    ($module:ident, $pool:ty) => {
        mod $module {
            use super::*;

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
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {PASSKEY_COLUMNS} FROM passkeys WHERE id = $1"
                )))
                .bind(id)
                .fetch_optional(pool)
                .await
            }

            pub(super) async fn of_account(
                pool: &$pool,
                account: Uuid,
            ) -> Result<Vec<PasskeyTuple>, sqlx::Error> {
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
        }
    };
}

backend!(sqlite, sqlx::sqlite::SqlitePool);
backend!(pg, sqlx::postgres::PgPool);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::{AccountStore, Removal, Way};

    #[tokio::test]
    async fn a_credential_belongs_to_one_account() {
        let store = AccountStore::memory();
        let (ann, bo) = (store.test_guest(1).await, store.test_guest(2).await);
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
        assert_eq!(store.remove_way(bo, Way::Passkey("c0ffee"), true).await.unwrap(), Removal::Missing);
        assert_eq!(store.remove_way(ann, Way::Passkey("c0ffee"), true).await.unwrap(), Removal::Done);
        assert!(passkeys.get("c0ffee").await.unwrap().is_none());
    }
}
