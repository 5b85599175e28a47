//! The password store: each account's password (when the operator has
//! switched passwords on), kept as an argon2id hash in the PHC string
//! format, on the account store's database. One password an account.

use uuid::Uuid;

use super::StorageError;
use super::accounts::{AccountStore, ms, unms, uuid_of};
use super::sql::Pool;

/// A password as stored. `Debug` never shows the hash.
#[derive(Clone, PartialEq, Eq)]
pub struct PasswordRow {
    /// The account it signs in.
    pub account: Uuid,
    /// The argon2id hash, as a PHC string (the salt and the parameters
    /// with it).
    pub hash: String,
    /// First set, Unix ms.
    pub created_at_ms: u64,
    /// Last set, Unix ms.
    pub changed_at_ms: u64,
    /// Last used to sign in, Unix ms.
    pub last_used_at_ms: Option<u64>,
}

impl std::fmt::Debug for PasswordRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordRow")
            .field("account", &self.account)
            .field("created_at_ms", &self.created_at_ms)
            .field("changed_at_ms", &self.changed_at_ms)
            .field("last_used_at_ms", &self.last_used_at_ms)
            .finish_non_exhaustive()
    }
}

/// The password store (cheap to clone): a narrow handle on the account
/// store's database.
#[derive(Debug, Clone)]
pub struct PasswordStore {
    db: AccountStore,
}

type PasswordTuple = (String, String, i64, i64, Option<i64>);

fn password_of(row: PasswordTuple) -> Result<PasswordRow, StorageError> {
    let (account, hash, created_at, changed_at, last_used_at) = row;
    Ok(PasswordRow {
        account: uuid_of("account", &account)?,
        hash,
        created_at_ms: unms(created_at),
        changed_at_ms: unms(changed_at),
        last_used_at_ms: last_used_at.map(unms),
    })
}

impl AccountStore {
    /// The password store on the same database.
    pub fn passwords(&self) -> PasswordStore {
        PasswordStore { db: self.clone() }
    }
}

impl PasswordStore {
    /// The account's password, if it has one.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn get(&self, account: Uuid) -> Result<Option<PasswordRow>, StorageError> {
        let row = self
            .db
            .run("reading a password", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::get(&p, account).await,
                    Pool::Postgres(p) => pg::get(&p, account).await,
                }
            })
            .await?;
        row.map(password_of).transpose()
    }

    /// Sets the account's password to `hash` at `now_ms`: the first, or
    /// one that replaces it. `Ok(true)` when it replaced one.
    ///
    /// # Errors
    /// When the database fails (an account that does not exist, too).
    pub async fn set(&self, account: Uuid, hash: &str, now_ms: u64) -> Result<bool, StorageError> {
        self.db
            .run("setting a password", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::set(&p, account, hash, now_ms).await,
                    Pool::Postgres(p) => pg::set(&p, account, hash, now_ms).await,
                }
            })
            .await
    }

    /// Records a sign-in with the account's password.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn used(&self, account: Uuid, now_ms: u64) -> Result<(), StorageError> {
        self.db
            .run("recording a password's use", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::used(&p, account, now_ms).await,
                    Pool::Postgres(p) => pg::used(&p, account, now_ms).await,
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

            pub(super) async fn get(pool: &$pool, account: Uuid) -> Result<Option<PasswordTuple>, sqlx::Error> {
                sqlx::query_as(
                    "SELECT account_id, hash, created_at, changed_at, last_used_at FROM passwords \
                     WHERE account_id = $1",
                )
                .bind(account.to_string())
                .fetch_optional(pool)
                .await
            }

            pub(super) async fn set(
                pool: &$pool,
                account: Uuid,
                hash: &str,
                now_ms: u64,
            ) -> Result<bool, sqlx::Error> {
                // One statement, so that two changes at once leave one of
                // them whole; `changed_at` tells a replaced password
                // (changed after it was made) from a new one.
                let (created_at, changed_at): (i64, i64) = sqlx::query_as(
                    "INSERT INTO passwords (account_id, hash, created_at, changed_at) VALUES ($1, $2, $3, $3) \
                     ON CONFLICT (account_id) DO UPDATE SET hash = excluded.hash, \
                     changed_at = CASE WHEN excluded.changed_at > passwords.created_at \
                       THEN excluded.changed_at ELSE passwords.created_at + 1 END \
                     RETURNING created_at, changed_at",
                )
                .bind(account.to_string())
                .bind(hash)
                .bind(ms(now_ms))
                .fetch_one(pool)
                .await?;
                Ok(changed_at != created_at)
            }

            pub(super) async fn used(pool: &$pool, account: Uuid, now_ms: u64) -> Result<(), sqlx::Error> {
                sqlx::query("UPDATE passwords SET last_used_at = $1 WHERE account_id = $2")
                    .bind(ms(now_ms))
                    .bind(account.to_string())
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
    async fn a_password_is_set_replaced_used_and_removed() {
        let store = AccountStore::memory();
        let (ann, bo) = (store.test_guest(1).await, store.test_guest(2).await);
        let passwords = store.passwords();
        assert!(passwords.get(ann).await.unwrap().is_none());
        assert!(!passwords.set(ann, "$argon2id$first", 10).await.unwrap(), "a first password replaces none");
        let first = passwords.get(ann).await.unwrap().unwrap();
        assert_eq!(
            (first.hash.as_str(), first.created_at_ms, first.changed_at_ms),
            ("$argon2id$first", 10, 10)
        );
        // Replaced, even within the same millisecond.
        assert!(passwords.set(ann, "$argon2id$second", 10).await.unwrap());
        let second = passwords.get(ann).await.unwrap().unwrap();
        assert_eq!((second.hash.as_str(), second.created_at_ms), ("$argon2id$second", 10));
        assert!(second.changed_at_ms > second.created_at_ms);
        passwords.used(ann, 20).await.unwrap();
        assert_eq!(passwords.get(ann).await.unwrap().unwrap().last_used_at_ms, Some(20));
        // Another account's is its own.
        assert!(passwords.get(bo).await.unwrap().is_none());
        assert_eq!(store.remove_way(bo, Way::Password, true).await.unwrap(), Removal::Missing);
        assert_eq!(store.remove_way(ann, Way::Password, true).await.unwrap(), Removal::Done);
        assert!(passwords.get(ann).await.unwrap().is_none());
        assert!(!format!("{second:?}").contains("argon2id"), "Debug shows no hash");
    }

    #[tokio::test]
    async fn an_unknown_account_has_no_password_to_set() {
        let store = AccountStore::memory();
        assert!(store.passwords().set(Uuid::new_v4(), "$argon2id$x", 1).await.is_err());
    }
}
