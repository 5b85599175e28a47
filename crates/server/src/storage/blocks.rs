//! The chat blocks store: the players whose chat an account does not want
//! to read, kept with the account (every device of it reads the same
//! list), on the account store's database.

use uuid::Uuid;

use super::StorageError;
use super::accounts::{AccountStore, ms, unms, uuid_of};
use super::sql::Pool;

/// A block as stored, with the blocked account's name now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockRow {
    /// The account blocked.
    pub blocked: Uuid,
    /// Its display name now.
    pub name: String,
    /// Blocked, Unix ms.
    pub at_ms: u64,
}

/// What blocking did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocked {
    /// Blocked now.
    New,
    /// It was already: nothing changed.
    Already,
    /// The account blocks `max` already: nothing written.
    TooMany,
}

/// The chat blocks store (cheap to clone): a narrow handle on the account
/// store's database.
#[derive(Debug, Clone)]
pub struct BlockStore {
    db: AccountStore,
}

impl AccountStore {
    /// The chat blocks store on the same database.
    pub fn blocks(&self) -> BlockStore {
        BlockStore { db: self.clone() }
    }
}

impl BlockStore {
    /// The accounts `account` blocks, the latest blocked first.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn list(&self, account: Uuid) -> Result<Vec<BlockRow>, StorageError> {
        let rows = self
            .db
            .run("reading chat blocks", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::list(&p, account).await,
                    Pool::Postgres(p) => pg::list(&p, account).await,
                }
            })
            .await?;
        rows.into_iter()
            .map(|(blocked, name, at)| {
                Ok(BlockRow { blocked: uuid_of("account", &blocked)?, name, at_ms: unms(at) })
            })
            .collect()
    }

    /// `account` blocks `blocked` (an account that exists), unless it
    /// blocks `max` accounts already.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn add(
        &self,
        account: Uuid,
        blocked: Uuid,
        at_ms: u64,
        max: u64,
    ) -> Result<Blocked, StorageError> {
        let (written, already) = self
            .db
            .run("blocking a player's chat", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::add(&p, account, blocked, ms(at_ms), ms(max)).await,
                    Pool::Postgres(p) => pg::add(&p, account, blocked, ms(at_ms), ms(max)).await,
                }
            })
            .await?;
        Ok(match (written, already) {
            (true, _) => Blocked::New,
            (false, true) => Blocked::Already,
            (false, false) => Blocked::TooMany,
        })
    }

    /// `account` no longer blocks `blocked`; false when it did not.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn remove(&self, account: Uuid, blocked: Uuid) -> Result<bool, StorageError> {
        self.db
            .run("unblocking a player's chat", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::remove(&p, account, blocked).await,
                    Pool::Postgres(p) => pg::remove(&p, account, blocked).await,
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

            pub(super) async fn list(pool: &$pool, account: Uuid) -> Result<Vec<(String, String, i64)>, sqlx::Error> {
                sqlx::query_as(
                    "SELECT b.blocked_id, a.name, b.at FROM chat_blocks b JOIN accounts a ON a.id = b.blocked_id \
                     WHERE b.account_id = $1 ORDER BY b.at DESC, b.blocked_id",
                )
                .bind(account.to_string())
                .fetch_all(pool)
                .await
            }

            /// (written, it was there already). One statement: the count
            /// and the insert are never apart.
            pub(super) async fn add(
                pool: &$pool,
                account: Uuid,
                blocked: Uuid,
                at: i64,
                max: i64,
            ) -> Result<(bool, bool), sqlx::Error> {
                let written = sqlx::query(
                    "INSERT INTO chat_blocks (account_id, blocked_id, at) SELECT $1, $2, $3 \
                     WHERE (SELECT COUNT(*) FROM chat_blocks WHERE account_id = $1) < $4 \
                     ON CONFLICT DO NOTHING",
                )
                .bind(account.to_string())
                .bind(blocked.to_string())
                .bind(at)
                .bind(max)
                .execute(pool)
                .await?
                .rows_affected()
                    == 1;
                if written {
                    return Ok((true, false));
                }
                let there: Option<(String,)> =
                    sqlx::query_as("SELECT blocked_id FROM chat_blocks WHERE account_id = $1 AND blocked_id = $2")
                        .bind(account.to_string())
                        .bind(blocked.to_string())
                        .fetch_optional(pool)
                        .await?;
                Ok((false, there.is_some()))
            }

            pub(super) async fn remove(pool: &$pool, account: Uuid, blocked: Uuid) -> Result<bool, sqlx::Error> {
                let done = sqlx::query("DELETE FROM chat_blocks WHERE account_id = $1 AND blocked_id = $2")
                    .bind(account.to_string())
                    .bind(blocked.to_string())
                    .execute(pool)
                    .await?;
                Ok(done.rows_affected() == 1)
            }
        }
    };
}

backend!(sqlite, sqlx::sqlite::SqlitePool);
backend!(pg, sqlx::postgres::PgPool);

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_account_blocks_others_once_each_up_to_a_limit_and_unblocks_them() {
        let store = AccountStore::memory();
        let (ann, bo, cy) = (store.test_guest(1).await, store.test_guest(2).await, store.test_guest(3).await);
        let blocks = store.blocks();
        assert_eq!(blocks.add(ann, bo, 10, 1).await.unwrap(), Blocked::New);
        assert_eq!(blocks.add(ann, bo, 11, 1).await.unwrap(), Blocked::Already);
        assert_eq!(blocks.add(ann, cy, 12, 1).await.unwrap(), Blocked::TooMany);
        assert_eq!(blocks.add(ann, cy, 12, 2).await.unwrap(), Blocked::New);
        let names: Vec<_> = blocks.list(ann).await.unwrap().into_iter().map(|b| (b.name, b.at_ms)).collect();
        assert_eq!(names, [("P3".to_owned(), 12), ("P2".to_owned(), 10)], "the latest first, named now");
        assert!(blocks.list(bo).await.unwrap().is_empty(), "one account's list only");
        assert!(blocks.remove(ann, bo).await.unwrap());
        assert!(!blocks.remove(ann, bo).await.unwrap());
        assert_eq!(blocks.list(ann).await.unwrap().len(), 1);
    }
}
