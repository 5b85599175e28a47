//! The moderation store: operators, sanctions (suspensions, bans, mutes)
//! and the audit log, on the account store's database. Every change an
//! operator makes is written with its audit entry in one transaction, so
//! there is never an action without its entry, nor an entry without its
//! action; nothing here updates or deletes an audit entry.

use spades_protocol::{AuditAction, SanctionKind};
use uuid::Uuid;

use super::StorageError;
use super::accounts::{
    ACCOUNT_COLUMNS, AccountRow, AccountStore, AccountTuple, account_of, ms, unms, uuid_of,
};
use super::chat::{CHAT_COLUMNS, ChatRow, ChatTuple, chat_of};
use super::reports::{REPORT_COLUMNS, ReportTuple, Resolving, report_of};
use super::sql::Pool;

/// A sanction as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SanctionRow {
    /// Its id.
    pub id: Uuid,
    /// The account it holds.
    pub account: Uuid,
    /// What it stops.
    pub kind: SanctionKind,
    /// Why (shown to the player).
    pub reason: String,
    /// When it ends by itself, Unix ms; `None`: when lifted.
    pub until_ms: Option<u64>,
    /// Made, Unix ms.
    pub made_at_ms: u64,
    /// The operator who made it; `None`: the command line.
    pub made_by: Option<Uuid>,
    /// Lifted, Unix ms.
    pub lifted_at_ms: Option<u64>,
    /// The operator who lifted it.
    pub lifted_by: Option<Uuid>,
    /// Why it was lifted.
    pub lift_reason: Option<String>,
}

impl SanctionRow {
    /// Whether it holds at `now_ms`: not lifted, not run out.
    pub fn active(&self, now_ms: u64) -> bool {
        self.lifted_at_ms.is_none() && self.until_ms.is_none_or(|until| until > now_ms)
    }
}

/// Who did something: an operator's account (its id and name then), or the
/// server's command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Actor<'a> {
    /// The operator; `None`: the command line.
    pub operator: Option<(Uuid, &'a str)>,
    /// When, Unix ms.
    pub now_ms: u64,
    /// Why.
    pub reason: &'a str,
}

/// What an audit entry is about, besides its action.
#[derive(Debug, Clone, Copy, Default)]
struct About<'a> {
    /// To whom, and their name then.
    account: Option<(Uuid, &'a str)>,
    /// The sanction made or lifted.
    sanction: Option<Uuid>,
    /// Until when the sanction made holds.
    until_ms: Option<u64>,
    /// The table closed, or of the message removed.
    table: Option<Uuid>,
    /// The chat message removed (its number at the table).
    message: Option<u64>,
    /// The report dealt with.
    report: Option<u64>,
}

/// One audit entry as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRow {
    /// Its number (later entries have larger ones).
    pub id: u64,
    /// When, Unix ms.
    pub at_ms: u64,
    /// The operator and their name then; `None`: the command line.
    pub operator: Option<(Uuid, String)>,
    /// What was done.
    pub action: AuditAction,
    /// To whom, and their name then.
    pub account: Option<(Uuid, String)>,
    /// The sanction made or lifted.
    pub sanction: Option<Uuid>,
    /// Why.
    pub reason: String,
    /// Until when the sanction made holds.
    pub until_ms: Option<u64>,
    /// The table closed, or of the message removed.
    pub table: Option<Uuid>,
    /// The chat message removed (its number at the table).
    pub message: Option<u64>,
    /// The report dealt with.
    pub report: Option<u64>,
}

/// What removing a chat message found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    /// Removed (the row after).
    Done(ChatRow),
    /// It had already been removed: nothing changed.
    Already(ChatRow),
    /// No such message (never kept, or forgotten).
    Missing,
}

/// What lifting a sanction found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lift {
    /// Lifted (the row after).
    Done(SanctionRow),
    /// It had already been lifted or had run out: nothing changed.
    Ended(SanctionRow),
    /// No such sanction.
    Missing,
}

/// An operator, with when the role was granted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorRow {
    /// The account.
    pub account: AccountRow,
    /// Granted, Unix ms.
    pub granted_at_ms: u64,
}

/// The moderation store (cheap to clone): a narrow handle on the account
/// store's database.
#[derive(Debug, Clone)]
pub struct ModerationStore {
    db: AccountStore,
}

impl AccountStore {
    /// The moderation store on the same database.
    pub fn moderation(&self) -> ModerationStore {
        ModerationStore { db: self.clone() }
    }
}

impl ModerationStore {
    /// The chat archive on the same database.
    pub fn chat(&self) -> super::ChatStore {
        self.db.chat()
    }
}

type SanctionTuple = (
    String,
    String,
    String,
    String,
    Option<i64>,
    i64,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<String>,
);
type AuditTuple = (
    i64,
    i64,
    Option<String>,
    Option<String>,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
    Option<i64>,
    Option<String>,
    Option<i64>,
    Option<i64>,
);

const SANCTION_COLUMNS: &str =
    "id, account_id, kind, reason, until_at, made_at, made_by, lifted_at, lifted_by, lift_reason";
const AUDIT_COLUMNS: &str = "id, at, operator_id, operator_name, action, account_id, account_name, \
     sanction_id, reason, until_at, table_id, message_id, report_id";

fn opt_uuid(what: &str, s: Option<String>) -> Result<Option<Uuid>, StorageError> {
    s.map(|s| uuid_of(what, &s)).transpose()
}

fn sanction_of(row: SanctionTuple) -> Result<SanctionRow, StorageError> {
    let (id, account, kind, reason, until, made_at, made_by, lifted_at, lifted_by, lift_reason) = row;
    Ok(SanctionRow {
        id: uuid_of("sanction", &id)?,
        account: uuid_of("account", &account)?,
        kind: SanctionKind::parse(&kind).ok_or_else(|| {
            StorageError::Database(format!("a stored sanction has an unknown kind: {kind:?}"))
        })?,
        reason,
        until_ms: until.map(unms),
        made_at_ms: unms(made_at),
        made_by: opt_uuid("operator", made_by)?,
        lifted_at_ms: lifted_at.map(unms),
        lifted_by: opt_uuid("operator", lifted_by)?,
        lift_reason,
    })
}

fn named(
    what: &str,
    id: Option<String>,
    name: Option<String>,
) -> Result<Option<(Uuid, String)>, StorageError> {
    match id {
        Some(id) => Ok(Some((uuid_of(what, &id)?, name.unwrap_or_default()))),
        None => Ok(None),
    }
}

fn audit_of(row: AuditTuple) -> Result<AuditRow, StorageError> {
    let (
        id,
        at,
        operator_id,
        operator_name,
        action,
        account_id,
        account_name,
        sanction,
        reason,
        until,
        table,
        message,
        report,
    ) = row;
    Ok(AuditRow {
        id: unms(id),
        at_ms: unms(at),
        operator: named("operator", operator_id, operator_name)?,
        action: AuditAction::parse(&action).ok_or_else(|| {
            StorageError::Database(format!("a stored audit entry has an unknown action: {action:?}"))
        })?,
        account: named("account", account_id, account_name)?,
        sanction: opt_uuid("sanction", sanction)?,
        reason,
        until_ms: until.map(unms),
        table: opt_uuid("table", table)?,
        message: message.map(unms),
        report: report.map(unms),
    })
}

/// A `LIKE` pattern that finds `text` anywhere, its wildcards escaped.
fn contains_pattern(text: &str) -> String {
    let mut p = String::with_capacity(text.len() + 2);
    p.push('%');
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

impl ModerationStore {
    /// Whether the account is an operator.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn is_operator(&self, account: Uuid) -> Result<bool, StorageError> {
        self.db
            .run("reading the operators", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::is_operator(&p, account).await,
                    Pool::Postgres(p) => pg::is_operator(&p, account).await,
                }
            })
            .await
    }

    /// Every operator, the first granted first.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn operators(&self) -> Result<Vec<OperatorRow>, StorageError> {
        let rows = self
            .db
            .run("listing the operators", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::operators(&p).await,
                    Pool::Postgres(p) => pg::operators(&p).await,
                }
            })
            .await?;
        rows.into_iter()
            .map(|(account, granted_at)| {
                Ok(OperatorRow { account: account_of(account)?, granted_at_ms: unms(granted_at) })
            })
            .collect()
    }

    /// Grants (`grant`) or revokes the operator role of `target`, with its
    /// audit entry. `Ok(false)`: it already was (or was not) one, nothing
    /// written.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn set_operator(
        &self,
        target: &AccountRow,
        grant: bool,
        by: Actor<'_>,
    ) -> Result<bool, StorageError> {
        self.db
            .run("changing an operator", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::set_operator(&p, target, grant, by).await,
                    Pool::Postgres(p) => pg::set_operator(&p, target, grant, by).await,
                }
            })
            .await
    }

    /// Puts `sanction` on its account (named `name`), with its audit entry.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn add_sanction(
        &self,
        sanction: &SanctionRow,
        name: &str,
        by: Actor<'_>,
    ) -> Result<(), StorageError> {
        self.db
            .run("making a sanction", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::add_sanction(&p, sanction, name, by).await,
                    Pool::Postgres(p) => pg::add_sanction(&p, sanction, name, by).await,
                }
            })
            .await
    }

    /// Lifts the sanction `id` if it holds, with its audit entry.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn lift(&self, id: Uuid, by: Actor<'_>) -> Result<Lift, StorageError> {
        let (lifted, row) = self
            .db
            .run("lifting a sanction", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::lift(&p, id, by).await,
                    Pool::Postgres(p) => pg::lift(&p, id, by).await,
                }
            })
            .await?;
        match row.map(sanction_of).transpose()? {
            None => Ok(Lift::Missing),
            Some(row) if lifted => Ok(Lift::Done(row)),
            Some(row) => Ok(Lift::Ended(row)),
        }
    }

    /// One sanction.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn sanction(&self, id: Uuid) -> Result<Option<SanctionRow>, StorageError> {
        let row = self
            .db
            .run("reading a sanction", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::sanction(&p, id).await,
                    Pool::Postgres(p) => pg::sanction(&p, id).await,
                }
            })
            .await?;
        row.map(sanction_of).transpose()
    }

    /// The account's sanctions, the newest first: every one (`active_at`
    /// `None`), or those that hold at a time.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn sanctions(
        &self,
        account: Uuid,
        active_at: Option<u64>,
    ) -> Result<Vec<SanctionRow>, StorageError> {
        let rows = self
            .db
            .run("reading sanctions", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::sanctions(&p, account, active_at).await,
                    Pool::Postgres(p) => pg::sanctions(&p, account, active_at).await,
                }
            })
            .await?;
        rows.into_iter().map(sanction_of).collect()
    }

    /// Accounts found by name: holding the name of `skeleton`, or with
    /// `text` (lower case) in their name; at most `limit`, by name.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn find(
        &self,
        skeleton: &str,
        text: &str,
        limit: usize,
    ) -> Result<Vec<AccountRow>, StorageError> {
        let pattern = contains_pattern(text);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .db
            .run("finding accounts", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::find(&p, skeleton, &pattern, limit).await,
                    Pool::Postgres(p) => pg::find(&p, skeleton, &pattern, limit).await,
                }
            })
            .await?;
        rows.into_iter().map(account_of).collect()
    }

    /// Removes the chat message `id` of `table` if it stands, with its
    /// audit entry (the writer's account, when it had one, as the entry's
    /// account).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn remove_chat(&self, table: Uuid, id: u64, by: Actor<'_>) -> Result<Removal, StorageError> {
        let (removed, row) = self
            .db
            .run("removing a chat message", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::remove_chat(&p, table, id, by).await,
                    Pool::Postgres(p) => pg::remove_chat(&p, table, id, by).await,
                }
            })
            .await?;
        Ok(match row.map(chat_of).transpose()? {
            None => Removal::Missing,
            Some(row) if removed => Removal::Done(row),
            Some(row) => Removal::Already(row),
        })
    }

    /// Resolves the report `id` if it is open, by an operator, with its
    /// audit entry (the account reported, when it had one, as the entry's
    /// account).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn resolve_report(&self, id: u64, by: Actor<'_>) -> Result<Resolving, StorageError> {
        let (resolved, row) = self
            .db
            .run("resolving a report", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::resolve_report(&p, id, by).await,
                    Pool::Postgres(p) => pg::resolve_report(&p, id, by).await,
                }
            })
            .await?;
        Ok(match row.map(report_of).transpose()? {
            None => Resolving::Missing,
            Some(row) if resolved => Resolving::Done(row),
            Some(row) => Resolving::Already(row),
        })
    }

    /// Writes the audit entry of closing `table` (the table itself is told
    /// by the caller); returns it.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn close_table(&self, table: Uuid, by: Actor<'_>) -> Result<AuditRow, StorageError> {
        let row = self
            .db
            .run("closing a table", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::close_table(&p, table, by).await,
                    Pool::Postgres(p) => pg::close_table(&p, table, by).await,
                }
            })
            .await?;
        audit_of(row)
    }

    /// The audit log, the newest first: at most `limit` entries numbered
    /// below `before` (all: `None`).
    ///
    /// # Errors
    /// When the database fails.
    pub async fn audit(&self, before: Option<u64>, limit: usize) -> Result<Vec<AuditRow>, StorageError> {
        let before = before.map_or(i64::MAX, ms);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .db
            .run("reading the audit log", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::audit(&p, before, limit).await,
                    Pool::Postgres(p) => pg::audit(&p, before, limit).await,
                }
            })
            .await?;
        rows.into_iter().map(audit_of).collect()
    }
}

/// The same SQL for both databases (`$n` placeholders work in both).
macro_rules! backend {
    ($module:ident, $pool:ty, $conn:ty) => {
        mod $module {
            use super::*;

            /// The audit entry of an action, in the action's transaction: its
            /// number.
            async fn audit_entry(
                conn: &mut $conn,
                by: Actor<'_>,
                action: AuditAction,
                about: About<'_>,
            ) -> Result<i64, sqlx::Error> {
                sqlx::query_as::<_, (i64,)>(
                    "INSERT INTO audit_log (at, operator_id, operator_name, action, account_id, account_name, \
                     sanction_id, reason, until_at, table_id, message_id, report_id) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id",
                )
                .bind(ms(by.now_ms))
                .bind(by.operator.map(|(id, _)| id.to_string()))
                .bind(by.operator.map(|(_, name)| name.to_owned()))
                .bind(action.as_str())
                .bind(about.account.map(|(id, _)| id.to_string()))
                .bind(about.account.map(|(_, name)| name.to_owned()))
                .bind(about.sanction.map(|s| s.to_string()))
                .bind(by.reason)
                .bind(about.until_ms.map(ms))
                .bind(about.table.map(|t| t.to_string()))
                .bind(about.message.map(ms))
                .bind(about.report.map(ms))
                .fetch_one(&mut *conn)
                .await
                .map(|(id,)| id)
            }

            /// The account of a stored id, with the name it has now, for
            /// an audit entry (none for no id, or one that is not a UUID).
            async fn named_now(
                conn: &mut $conn,
                account: Option<String>,
            ) -> Result<Option<(Uuid, String)>, sqlx::Error> {
                let Some(id) = account.and_then(|a| Uuid::parse_str(&a).ok()) else { return Ok(None) };
                let name: Option<(String,)> = sqlx::query_as("SELECT name FROM accounts WHERE id = $1")
                    .bind(id.to_string())
                    .fetch_optional(&mut *conn)
                    .await?;
                Ok(Some((id, name.map(|(n,)| n).unwrap_or_default())))
            }

            pub(super) async fn is_operator(pool: &$pool, account: Uuid) -> Result<bool, sqlx::Error> {
                let row: Option<(String,)> = sqlx::query_as("SELECT account_id FROM operators WHERE account_id = $1")
                    .bind(account.to_string())
                    .fetch_optional(pool)
                    .await?;
                Ok(row.is_some())
            }

            pub(super) async fn operators(pool: &$pool) -> Result<Vec<(AccountTuple, i64)>, sqlx::Error> {
                let rows: Vec<(String, String, i64, Option<i64>, String, i64)> = sqlx::query_as(
                    "SELECT a.id, a.name, a.created_at, a.renamed_at, a.kind, o.granted_at \
                     FROM operators o JOIN accounts a ON a.id = o.account_id ORDER BY o.granted_at, a.id",
                )
                .fetch_all(pool)
                .await?;
                Ok(rows.into_iter().map(|(id, name, c, r, k, g)| ((id, name, c, r, k), g)).collect())
            }

            pub(super) async fn set_operator(
                pool: &$pool,
                target: &AccountRow,
                grant: bool,
                by: Actor<'_>,
            ) -> Result<bool, sqlx::Error> {
                let mut tx = pool.begin().await?;
                let id = target.id.to_string();
                let changed = if grant {
                    sqlx::query(
                        "INSERT INTO operators (account_id, granted_at, granted_by) VALUES ($1, $2, $3) \
                         ON CONFLICT (account_id) DO NOTHING",
                    )
                    .bind(&id)
                    .bind(ms(by.now_ms))
                    .bind(by.operator.map(|(o, _)| o.to_string()))
                    .execute(&mut *tx)
                    .await?
                } else {
                    sqlx::query("DELETE FROM operators WHERE account_id = $1").bind(&id).execute(&mut *tx).await?
                }
                .rows_affected()
                    == 1;
                if !changed {
                    tx.rollback().await?;
                    return Ok(false);
                }
                let action = if grant { AuditAction::GrantOperator } else { AuditAction::RevokeOperator };
                let about = About { account: Some((target.id, &target.name)), ..About::default() };
                audit_entry(&mut tx, by, action, about).await?;
                tx.commit().await?;
                Ok(true)
            }

            pub(super) async fn add_sanction(
                pool: &$pool,
                s: &SanctionRow,
                name: &str,
                by: Actor<'_>,
            ) -> Result<(), sqlx::Error> {
                let mut tx = pool.begin().await?;
                sqlx::query(
                    "INSERT INTO sanctions (id, account_id, kind, reason, until_at, made_at, made_by) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(s.id.to_string())
                .bind(s.account.to_string())
                .bind(s.kind.as_str())
                .bind(&s.reason)
                .bind(s.until_ms.map(ms))
                .bind(ms(s.made_at_ms))
                .bind(s.made_by.map(|o| o.to_string()))
                .execute(&mut *tx)
                .await?;
                let action = AuditAction::of(s.kind);
                let about = About {
                    account: Some((s.account, name)),
                    sanction: Some(s.id),
                    until_ms: s.until_ms,
                    ..About::default()
                };
                audit_entry(&mut tx, by, action, about).await?;
                tx.commit().await
            }

            pub(super) async fn lift(
                pool: &$pool,
                id: Uuid,
                by: Actor<'_>,
            ) -> Result<(bool, Option<SanctionTuple>), sqlx::Error> {
                let mut tx = pool.begin().await?;
                let lifted = sqlx::query(
                    "UPDATE sanctions SET lifted_at = $1, lifted_by = $2, lift_reason = $3 \
                     WHERE id = $4 AND lifted_at IS NULL AND (until_at IS NULL OR until_at > $1)",
                )
                .bind(ms(by.now_ms))
                .bind(by.operator.map(|(o, _)| o.to_string()))
                .bind(by.reason)
                .bind(id.to_string())
                .execute(&mut *tx)
                .await?
                .rows_affected()
                    == 1;
                let row: Option<SanctionTuple> =
                    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {SANCTION_COLUMNS} FROM sanctions WHERE id = $1")))
                        .bind(id.to_string())
                        .fetch_optional(&mut *tx)
                        .await?;
                if !lifted {
                    tx.rollback().await?;
                    return Ok((false, row));
                }
                let account = named_now(&mut tx, row.as_ref().map(|r| r.1.clone())).await?;
                let account = account.as_ref().map(|(a, name)| (*a, name.as_str()));
                let about = About { account, sanction: Some(id), ..About::default() };
                audit_entry(&mut tx, by, AuditAction::Lift, about).await?;
                tx.commit().await?;
                Ok((true, row))
            }

            pub(super) async fn remove_chat(
                pool: &$pool,
                table: Uuid,
                id: u64,
                by: Actor<'_>,
            ) -> Result<(bool, Option<ChatTuple>), sqlx::Error> {
                let mut tx = pool.begin().await?;
                let removed = sqlx::query(
                    "UPDATE chat_messages SET removed_at = $1 WHERE table_id = $2 AND id = $3 AND removed_at IS NULL",
                )
                .bind(ms(by.now_ms))
                .bind(table.to_string())
                .bind(ms(id))
                .execute(&mut *tx)
                .await?
                .rows_affected()
                    == 1;
                let row: Option<ChatTuple> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {CHAT_COLUMNS} FROM chat_messages WHERE table_id = $1 AND id = $2"
                )))
                .bind(table.to_string())
                .bind(ms(id))
                .fetch_optional(&mut *tx)
                .await?;
                if !removed {
                    tx.rollback().await?;
                    return Ok((false, row));
                }
                // The writer as the entry's account, under the name they
                // have now (their name at the table is in the message).
                let account = named_now(&mut tx, row.as_ref().and_then(|r| r.2.clone())).await?;
                let account = account.as_ref().map(|(a, name)| (*a, name.as_str()));
                let about = About { account, table: Some(table), message: Some(id), ..About::default() };
                audit_entry(&mut tx, by, AuditAction::RemoveChat, about).await?;
                tx.commit().await?;
                Ok((true, row))
            }

            pub(super) async fn close_table(
                pool: &$pool,
                table: Uuid,
                by: Actor<'_>,
            ) -> Result<AuditTuple, sqlx::Error> {
                let mut conn = pool.acquire().await?;
                let about = About { table: Some(table), ..About::default() };
                let id = audit_entry(&mut conn, by, AuditAction::CloseTable, about).await?;
                sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {AUDIT_COLUMNS} FROM audit_log WHERE id = $1")))
                    .bind(id)
                    .fetch_one(&mut *conn)
                    .await
            }

            pub(super) async fn resolve_report(
                pool: &$pool,
                id: u64,
                by: Actor<'_>,
            ) -> Result<(bool, Option<ReportTuple>), sqlx::Error> {
                let mut tx = pool.begin().await?;
                let resolved = sqlx::query(
                    "UPDATE reports SET resolved_at = $1, resolved_by = $2, resolved_name = $3, resolution = $4 \
                     WHERE id = $5 AND resolved_at IS NULL",
                )
                .bind(ms(by.now_ms))
                .bind(by.operator.map(|(o, _)| o.to_string()))
                .bind(by.operator.map(|(_, name)| name.to_owned()))
                .bind(by.reason)
                .bind(ms(id))
                .execute(&mut *tx)
                .await?
                .rows_affected()
                    == 1;
                let row: Option<ReportTuple> =
                    sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {REPORT_COLUMNS} FROM reports WHERE id = $1")))
                        .bind(ms(id))
                        .fetch_optional(&mut *tx)
                        .await?;
                if !resolved {
                    tx.rollback().await?;
                    return Ok((false, row));
                }
                let account = named_now(&mut tx, row.as_ref().and_then(|r| r.7.clone())).await?;
                let account = account.as_ref().map(|(a, name)| (*a, name.as_str()));
                let about = About { account, report: Some(id), ..About::default() };
                audit_entry(&mut tx, by, AuditAction::ResolveReport, about).await?;
                tx.commit().await?;
                Ok((true, row))
            }

            pub(super) async fn sanction(pool: &$pool, id: Uuid) -> Result<Option<SanctionTuple>, sqlx::Error> {
                sqlx::query_as(sqlx::AssertSqlSafe(format!("SELECT {SANCTION_COLUMNS} FROM sanctions WHERE id = $1")))
                    .bind(id.to_string())
                    .fetch_optional(pool)
                    .await
            }

            pub(super) async fn sanctions(
                pool: &$pool,
                account: Uuid,
                active_at: Option<u64>,
            ) -> Result<Vec<SanctionTuple>, sqlx::Error> {
                match active_at {
                    None => sqlx::query_as(sqlx::AssertSqlSafe(format!(
                        "SELECT {SANCTION_COLUMNS} FROM sanctions WHERE account_id = $1 \
                         ORDER BY made_at DESC, id DESC"
                    )))
                    .bind(account.to_string())
                    .fetch_all(pool)
                    .await,
                    Some(now) => sqlx::query_as(sqlx::AssertSqlSafe(format!(
                        "SELECT {SANCTION_COLUMNS} FROM sanctions WHERE account_id = $1 AND lifted_at IS NULL \
                         AND (until_at IS NULL OR until_at > $2) ORDER BY made_at DESC, id DESC"
                    )))
                    .bind(account.to_string())
                    .bind(ms(now))
                    .fetch_all(pool)
                    .await,
                }
            }

            pub(super) async fn find(
                pool: &$pool,
                skeleton: &str,
                pattern: &str,
                limit: i64,
            ) -> Result<Vec<AccountTuple>, sqlx::Error> {
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id IN \
                     (SELECT account_id FROM account_names WHERE skeleton = $1 AND kept_until IS NULL) \
                     OR lower(name) LIKE $2 ESCAPE '\\' ORDER BY name, id LIMIT $3"
                )))
                .bind(skeleton)
                .bind(pattern)
                .bind(limit)
                .fetch_all(pool)
                .await
            }

            pub(super) async fn audit(pool: &$pool, before: i64, limit: i64) -> Result<Vec<AuditTuple>, sqlx::Error> {
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {AUDIT_COLUMNS} FROM audit_log WHERE id < $1 ORDER BY id DESC LIMIT $2"
                )))
                .bind(before)
                .bind(limit)
                .fetch_all(pool)
                .await
            }
        }
    };
}

backend!(sqlite, sqlx::sqlite::SqlitePool, sqlx::SqliteConnection);
backend!(pg, sqlx::postgres::PgPool, sqlx::PgConnection);

#[cfg(test)]
mod tests {
    use super::*;

    fn actor(reason: &str, now_ms: u64) -> Actor<'_> {
        Actor { operator: None, now_ms, reason }
    }

    #[tokio::test]
    async fn operators_are_granted_and_revoked_with_their_audit_entries() {
        let store = AccountStore::memory();
        let ann = store.account(store.test_guest(1).await).await.unwrap().unwrap();
        let m = store.moderation();
        assert!(!m.is_operator(ann.id).await.unwrap());
        assert!(m.set_operator(&ann, true, actor("first operator", 10)).await.unwrap());
        assert!(
            !m.set_operator(&ann, true, actor("again", 11)).await.unwrap(),
            "already one: nothing written"
        );
        assert!(m.is_operator(ann.id).await.unwrap());
        assert_eq!(m.operators().await.unwrap().len(), 1);
        let by = Actor { operator: Some((ann.id, "P1")), now_ms: 12, reason: "stepping down" };
        assert!(m.set_operator(&ann, false, by).await.unwrap());
        assert!(!m.is_operator(ann.id).await.unwrap());
        let log = m.audit(None, 10).await.unwrap();
        assert_eq!(log.len(), 2, "one entry a change");
        assert_eq!(log[0].action, AuditAction::RevokeOperator);
        assert_eq!(log[0].operator, Some((ann.id, "P1".to_owned())));
        assert_eq!(log[1].action, AuditAction::GrantOperator);
        assert_eq!((log[1].operator.as_ref(), log[1].reason.as_str()), (None, "first operator"));
        assert_eq!(m.audit(Some(log[0].id), 10).await.unwrap(), log[1..].to_vec(), "paged by number");
    }

    #[tokio::test]
    async fn a_sanction_holds_until_its_time_or_its_lifting() {
        let store = AccountStore::memory();
        let ann = store.account(store.test_guest(1).await).await.unwrap().unwrap();
        let m = store.moderation();
        let suspension = SanctionRow {
            id: Uuid::new_v4(),
            account: ann.id,
            kind: SanctionKind::Suspend,
            reason: "abuse in chat".into(),
            until_ms: Some(100),
            made_at_ms: 10,
            made_by: None,
            lifted_at_ms: None,
            lifted_by: None,
            lift_reason: None,
        };
        m.add_sanction(&suspension, &ann.name, actor("abuse in chat", 10)).await.unwrap();
        let mute = SanctionRow {
            id: Uuid::new_v4(),
            kind: SanctionKind::Mute,
            until_ms: None,
            made_at_ms: 20,
            ..suspension.clone()
        };
        m.add_sanction(&mute, &ann.name, actor("spam", 20)).await.unwrap();
        assert_eq!(m.sanctions(ann.id, Some(50)).await.unwrap(), vec![mute.clone(), suspension.clone()]);
        assert_eq!(m.sanctions(ann.id, Some(100)).await.unwrap(), vec![mute.clone()], "ran out by itself");
        // A sanction that ran out is not lifted again.
        assert!(matches!(m.lift(suspension.id, actor("late", 200)).await.unwrap(), Lift::Ended(_)));
        let Lift::Done(lifted) = m.lift(mute.id, actor("apologised", 210)).await.unwrap() else { panic!() };
        assert_eq!((lifted.lifted_at_ms, lifted.lift_reason.as_deref()), (Some(210), Some("apologised")));
        assert!(!lifted.active(211));
        assert!(matches!(m.lift(mute.id, actor("twice", 220)).await.unwrap(), Lift::Ended(_)));
        assert_eq!(m.lift(Uuid::new_v4(), actor("none", 230)).await.unwrap(), Lift::Missing);
        assert!(m.sanctions(ann.id, Some(300)).await.unwrap().is_empty());
        assert_eq!(m.sanctions(ann.id, None).await.unwrap().len(), 2, "the history stays");
        let actions: Vec<_> = m.audit(None, 10).await.unwrap().iter().map(|e| e.action).collect();
        assert_eq!(actions, [AuditAction::Lift, AuditAction::Mute, AuditAction::Suspend]);
    }

    #[tokio::test]
    async fn accounts_are_found_by_a_part_of_their_name_or_its_look_alike() {
        let store = AccountStore::memory();
        store.test_guest(1).await;
        store.test_guest(12).await;
        store.test_guest(3).await;
        let m = store.moderation();
        let names = |rows: Vec<AccountRow>| rows.into_iter().map(|a| a.name).collect::<Vec<_>>();
        assert_eq!(names(m.find("none", "p1", 10).await.unwrap()), ["P1", "P12"]);
        assert_eq!(names(m.find("p3", "zzz", 10).await.unwrap()), ["P3"], "by skeleton");
        assert_eq!(names(m.find("none", "p", 1).await.unwrap()), ["P1"], "limited");
        assert!(m.find("none", "%", 10).await.unwrap().is_empty(), "wildcards are letters");
    }
}
