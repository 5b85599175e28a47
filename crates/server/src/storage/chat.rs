//! The chat archive: what was said at the tables, kept for moderation (an
//! operator's look at an account or a table) and for the writer's export,
//! for `moderation.chat_days` days. A SQL journal writes each message
//! through its writer, fenced like the table's moves (`storage/sql.rs`,
//! whose statement this store's [`ChatStore::insert`] uses too, for a
//! journal kept in memory). This store reads the messages and
//! forgets old ones; removing one is an operator's action, with its audit
//! entry (`storage/moderation.rs`).

use spades_engine::Seat;
use uuid::Uuid;

use super::StorageError;
use super::accounts::{AccountStore, ms, unms, uuid_of};
use super::sql::Pool;

/// A chat message as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatRow {
    /// The table.
    pub table: Uuid,
    /// Its number at the table.
    pub id: u64,
    /// The writer's account; `None`: a player without one.
    pub account: Option<Uuid>,
    /// The writer's seat; `None`: a spectator.
    pub seat: Option<Seat>,
    /// The writer's name at the table.
    pub name: String,
    /// The message.
    pub text: String,
    /// Received, Unix ms.
    pub at_ms: u64,
    /// Removed by an operator, Unix ms.
    pub removed_at_ms: Option<u64>,
}

pub(super) type ChatTuple = (String, i64, Option<String>, Option<i64>, String, String, i64, Option<i64>);

pub(super) const CHAT_COLUMNS: &str = "table_id, id, account_id, seat, name, text, at, removed_at";

pub(super) fn chat_of(row: ChatTuple) -> Result<ChatRow, StorageError> {
    let (table, id, account, seat, name, text, at, removed_at) = row;
    let seat = match seat {
        None => None,
        Some(n) => Some(u8::try_from(n).ok().and_then(Seat::from_index).ok_or_else(|| {
            StorageError::Database(format!("a stored chat message has a seat out of range: {n}"))
        })?),
    };
    Ok(ChatRow {
        table: uuid_of("table", &table)?,
        id: unms(id),
        account: account.map(|a| uuid_of("account", &a)).transpose()?,
        seat,
        name,
        text,
        at_ms: unms(at),
        removed_at_ms: removed_at.map(unms),
    })
}

/// The chat archive (cheap to clone): a narrow handle on the account
/// store's database.
#[derive(Debug, Clone)]
pub struct ChatStore {
    db: AccountStore,
}

impl AccountStore {
    /// The chat archive on the same database.
    pub fn chat(&self) -> ChatStore {
        ChatStore { db: self.clone() }
    }
}

impl ChatStore {
    /// Keeps a message (a journal kept in memory; a repeat is ignored).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn insert(&self, row: &ChatRow) -> Result<(), StorageError> {
        self.db
            .run("keeping a chat message", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => super::sql::sqlite_insert_chat(&mut *p.acquire().await?, row).await,
                    Pool::Postgres(p) => super::sql::pg_insert_chat(&mut *p.acquire().await?, row).await,
                }
            })
            .await
    }

    /// What `account` said, the newest first: at most `limit` messages.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn by_account(&self, account: Uuid, limit: usize) -> Result<Vec<ChatRow>, StorageError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .db
            .run("reading an account's chat", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::by_account(&p, account, limit).await,
                    Pool::Postgres(p) => pg::by_account(&p, account, limit).await,
                }
            })
            .await?;
        rows.into_iter().map(chat_of).collect()
    }

    /// What was said at `table`, the newest first: at most `limit` messages
    /// numbered below `before` (all: `None`).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn at_table(
        &self,
        table: Uuid,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<ChatRow>, StorageError> {
        let before = before.map_or(i64::MAX, ms);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .db
            .run("reading a table's chat", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::at_table(&p, table, before, limit).await,
                    Pool::Postgres(p) => pg::at_table(&p, table, before, limit).await,
                }
            })
            .await?;
        rows.into_iter().map(chat_of).collect()
    }

    /// Forgets the messages received before `before_ms`; returns how many.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn sweep(&self, before_ms: u64) -> Result<u64, StorageError> {
        self.db
            .run("forgetting old chat", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::sweep(&p, ms(before_ms)).await,
                    Pool::Postgres(p) => pg::sweep(&p, ms(before_ms)).await,
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

            pub(super) async fn by_account(
                pool: &$pool,
                account: Uuid,
                limit: i64,
            ) -> Result<Vec<ChatTuple>, sqlx::Error> {
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {CHAT_COLUMNS} FROM chat_messages WHERE account_id = $1 \
                     ORDER BY at DESC, table_id, id DESC LIMIT $2"
                )))
                .bind(account.to_string())
                .bind(limit)
                .fetch_all(pool)
                .await
            }

            pub(super) async fn at_table(
                pool: &$pool,
                table: Uuid,
                before: i64,
                limit: i64,
            ) -> Result<Vec<ChatTuple>, sqlx::Error> {
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {CHAT_COLUMNS} FROM chat_messages WHERE table_id = $1 AND id < $2 \
                     ORDER BY id DESC LIMIT $3"
                )))
                .bind(table.to_string())
                .bind(before)
                .bind(limit)
                .fetch_all(pool)
                .await
            }

            pub(super) async fn sweep(pool: &$pool, before: i64) -> Result<u64, sqlx::Error> {
                let done =
                    sqlx::query("DELETE FROM chat_messages WHERE at < $1").bind(before).execute(pool).await?;
                Ok(done.rows_affected())
            }
        }
    };
}

backend!(sqlite, sqlx::sqlite::SqlitePool);
backend!(pg, sqlx::postgres::PgPool);

#[cfg(test)]
mod tests {
    use super::*;

    fn said(table: Uuid, id: u64, account: Option<Uuid>, at_ms: u64) -> ChatRow {
        ChatRow {
            table,
            id,
            account,
            seat: account.map(|_| Seat::East),
            name: if account.is_some() { "P1".into() } else { "Spectator".into() },
            text: format!("message {id}"),
            at_ms,
            removed_at_ms: None,
        }
    }

    #[tokio::test]
    async fn messages_are_read_by_account_and_by_table_and_forgotten_when_old() {
        let store = AccountStore::memory();
        let ann = store.test_guest(1).await;
        let chat = store.chat();
        let (t1, t2) = (Uuid::new_v4(), Uuid::new_v4());
        let rows = [said(t1, 1, Some(ann), 10), said(t1, 2, None, 20), said(t2, 1, Some(ann), 30)];
        for row in &rows {
            chat.insert(row).await.unwrap();
        }
        chat.insert(&ChatRow { text: "a retry".into(), ..rows[0].clone() }).await.unwrap();
        assert_eq!(chat.by_account(ann, 10).await.unwrap(), vec![rows[2].clone(), rows[0].clone()]);
        assert_eq!(chat.by_account(ann, 1).await.unwrap(), vec![rows[2].clone()], "limited");
        assert_eq!(chat.at_table(t1, None, 10).await.unwrap(), vec![rows[1].clone(), rows[0].clone()]);
        assert_eq!(chat.at_table(t1, Some(2), 10).await.unwrap(), vec![rows[0].clone()], "paged by number");
        assert_eq!(chat.sweep(20).await.unwrap(), 1);
        assert_eq!(chat.at_table(t1, None, 10).await.unwrap(), vec![rows[1].clone()]);
    }
}
