//! The reports store: players' reports of a chat message or of a player,
//! each with the context copied when it was made, on the account store's
//! database. A report is written once and never changed but for its
//! resolution, an operator's action written with its audit entry
//! (`storage/moderation.rs`).

use spades_engine::Seat;
use spades_protocol::{ReportContext, ReportReason};
use uuid::Uuid;

use super::StorageError;
use super::accounts::{AccountStore, ms, unms, uuid_of};
use super::sql::Pool;

/// A report as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportRow {
    /// Its number (later reports have larger ones; 0 before it is stored).
    pub id: u64,
    /// Made, Unix ms.
    pub made_at_ms: u64,
    /// Who made it, with the name they had then.
    pub reporter: (Uuid, String),
    /// The table.
    pub table: Uuid,
    /// The chat message reported; `None`: a player.
    pub message: Option<u64>,
    /// The seat reported (or of the message's writer); `None`: a spectator.
    pub seat: Option<Seat>,
    /// The account reported; `None`: a player without one.
    pub account: Option<Uuid>,
    /// The reported player's name at the table.
    pub name: String,
    /// Why.
    pub reason: ReportReason,
    /// The reporter's words.
    pub text: String,
    /// The table when it was made.
    pub context: ReportContext,
    /// How an operator dealt with it.
    pub resolved: Option<Resolved>,
}

/// A report's resolution as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// When, Unix ms.
    pub at_ms: u64,
    /// The operator and their name then.
    pub by: (Uuid, String),
    /// What they did and why.
    pub reason: String,
}

/// What filing a report did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filed {
    /// Stored (with its number).
    New(ReportRow),
    /// The reporter's open report of the same message or seat at the same
    /// table: nothing written.
    Again(ReportRow),
    /// The reporter made `max` reports since the time given: nothing
    /// written.
    TooMany,
}

/// What resolving a report found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolving {
    /// Resolved (the row after).
    Done(ReportRow),
    /// It had been resolved already: nothing changed.
    Already(ReportRow),
    /// No such report.
    Missing,
}

pub(super) type ReportTuple = (
    i64,
    i64,
    String,
    String,
    String,
    Option<i64>,
    Option<i64>,
    Option<String>,
    String,
    String,
    String,
    String,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<String>,
);

pub(super) const REPORT_COLUMNS: &str = "id, made_at, reporter_id, reporter_name, table_id, message_id, seat, \
     account_id, name, reason, text, context, resolved_at, resolved_by, resolved_name, resolution";

fn bad(what: impl std::fmt::Display) -> StorageError {
    StorageError::Database(format!("a stored report has {what}"))
}

/// A stored context as read: one that no longer reads (a status written
/// by another version) is logged and read as empty, so that the report,
/// and the queue it is in, still show.
fn context_of(id: i64, stored: &str) -> ReportContext {
    serde_json::from_str(stored).unwrap_or_else(|e| {
        tracing::warn!(report = id, error = %e, "a stored report's context does not read: shown without it");
        ReportContext { chat: Vec::new(), table: None }
    })
}

pub(super) fn report_of(row: ReportTuple) -> Result<ReportRow, StorageError> {
    let (
        id,
        made_at,
        reporter_id,
        reporter_name,
        table,
        message,
        seat,
        account,
        name,
        reason,
        text,
        context,
        resolved_at,
        resolved_by,
        resolved_name,
        resolution,
    ) = row;
    let seat = match seat {
        None => None,
        Some(n) => Some(
            u8::try_from(n).ok().and_then(Seat::from_index).ok_or_else(|| bad(format_args!("seat {n}")))?,
        ),
    };
    let resolved = match (resolved_at, resolved_by) {
        (Some(at), Some(by)) => Some(Resolved {
            at_ms: unms(at),
            by: (uuid_of("operator", &by)?, resolved_name.unwrap_or_default()),
            reason: resolution.unwrap_or_default(),
        }),
        _ => None,
    };
    Ok(ReportRow {
        id: unms(id),
        made_at_ms: unms(made_at),
        reporter: (uuid_of("account", &reporter_id)?, reporter_name),
        table: uuid_of("table", &table)?,
        message: message.map(unms),
        seat,
        account: account.map(|a| uuid_of("account", &a)).transpose()?,
        name,
        reason: ReportReason::parse(&reason)
            .ok_or_else(|| bad(format_args!("an unknown reason: {reason:?}")))?,
        text,
        context: context_of(id, &context),
        resolved,
    })
}

/// The reports store (cheap to clone): a narrow handle on the account
/// store's database.
#[derive(Debug, Clone)]
pub struct ReportStore {
    db: AccountStore,
}

impl AccountStore {
    /// The reports store on the same database.
    pub fn reports(&self) -> ReportStore {
        ReportStore { db: self.clone() }
    }
}

impl ReportStore {
    /// Files `report` (its `id` ignored): unless the reporter has an open
    /// report of the same target at the table (the same message; the same
    /// player in the same seat), then that one, or made `max` reports since
    /// `since_ms`.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn file(&self, report: &ReportRow, since_ms: u64, max: u64) -> Result<Filed, StorageError> {
        let context = serde_json::to_string(&report.context)
            .map_err(|e| StorageError::Database(format!("writing a report's context: {e}")))?;
        let context = context.as_str();
        let found = self
            .db
            .run("filing a report", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::file(&p, report, context, ms(since_ms), ms(max)).await,
                    Pool::Postgres(p) => pg::file(&p, report, context, ms(since_ms), ms(max)).await,
                }
            })
            .await?;
        Ok(match found {
            (_, None) => Filed::TooMany,
            (true, Some(row)) => Filed::New(report_of(row)?),
            (false, Some(row)) => Filed::Again(report_of(row)?),
        })
    }

    /// Reports, the newest first: at most `limit` numbered below `before`
    /// (all: `None`), the open ones only or every one.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn list(
        &self,
        open_only: bool,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<ReportRow>, StorageError> {
        let before = before.map_or(i64::MAX, ms);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .db
            .run("reading reports", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::list(&p, open_only, before, limit).await,
                    Pool::Postgres(p) => pg::list(&p, open_only, before, limit).await,
                }
            })
            .await?;
        rows.into_iter().map(report_of).collect()
    }

    /// The reports about `account`, the newest first: at most `limit`.
    ///
    /// # Errors
    /// When the database fails.
    pub async fn about(&self, account: Uuid, limit: usize) -> Result<Vec<ReportRow>, StorageError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .db
            .run("reading an account's reports", |pool| async move {
                match pool {
                    Pool::Sqlite(p) => sqlite::about(&p, account, limit).await,
                    Pool::Postgres(p) => pg::about(&p, account, limit).await,
                }
            })
            .await?;
        rows.into_iter().map(report_of).collect()
    }
}

/// The same SQL for both databases (`$n` placeholders work in both).
/// `$serial`: the statement, if any, that makes one reporter's reports
/// wait for each other (SQLite has one writer at a time already).
macro_rules! backend {
    ($module:ident, $pool:ty, $serial:expr) => {
        mod $module {
            use super::*;

            /// `(true, the row)`: filed; `(false, the row)`: the open one
            /// of the same target; `(_, None)`: too many. One statement
            /// files it (a unique index holds one open report a target and
            /// reporter), the first of its transaction on SQLite (so that
            /// another writer never makes it fail), after a lock of the
            /// reporter's on PostgreSQL (so that their reports made at once
            /// count each other).
            pub(super) async fn file(
                pool: &$pool,
                r: &ReportRow,
                context: &str,
                since: i64,
                max: i64,
            ) -> Result<(bool, Option<ReportTuple>), sqlx::Error> {
                let reporter = r.reporter.0.to_string();
                let mut tx = pool.begin().await?;
                let serial: Option<&str> = $serial;
                if let Some(serial) = serial {
                    sqlx::query(serial).bind(&reporter).execute(&mut *tx).await?;
                }
                let filed: Option<ReportTuple> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "INSERT INTO reports (made_at, reporter_id, reporter_name, table_id, message_id, seat, \
                     account_id, name, reason, text, context) \
                     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 \
                     WHERE (SELECT COUNT(*) FROM reports WHERE reporter_id = $2 AND made_at >= $12) < $13 \
                     ON CONFLICT DO NOTHING RETURNING {REPORT_COLUMNS}"
                )))
                .bind(ms(r.made_at_ms))
                .bind(&reporter)
                .bind(&r.reporter.1)
                .bind(r.table.to_string())
                .bind(r.message.map(ms))
                .bind(r.seat.map(|s| i64::from(s.index())))
                .bind(r.account.map(|a| a.to_string()))
                .bind(&r.name)
                .bind(r.reason.as_str())
                .bind(&r.text)
                .bind(context)
                .bind(since)
                .bind(max)
                .fetch_optional(&mut *tx)
                .await?;
                if filed.is_some() {
                    tx.commit().await?;
                    return Ok((true, filed));
                }
                // Nothing written: the open report of the same target, or
                // (none) too many.
                let same: Option<ReportTuple> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {REPORT_COLUMNS} FROM reports WHERE reporter_id = $1 AND table_id = $2 \
                     AND resolved_at IS NULL AND COALESCE(message_id, -1) = $3 AND COALESCE(seat, -1) = $4 \
                     AND COALESCE(account_id, '') = $5 AND name = $6 ORDER BY id LIMIT 1"
                )))
                .bind(&reporter)
                .bind(r.table.to_string())
                .bind(r.message.map_or(-1, ms))
                .bind(r.seat.map_or(-1, |s| i64::from(s.index())))
                .bind(r.account.map(|a| a.to_string()).unwrap_or_default())
                .bind(&r.name)
                .fetch_optional(&mut *tx)
                .await?;
                tx.commit().await?;
                Ok((false, same))
            }

            pub(super) async fn list(
                pool: &$pool,
                open_only: bool,
                before: i64,
                limit: i64,
            ) -> Result<Vec<ReportTuple>, sqlx::Error> {
                let open = if open_only { " AND resolved_at IS NULL" } else { "" };
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {REPORT_COLUMNS} FROM reports WHERE id < $1{open} ORDER BY id DESC LIMIT $2"
                )))
                .bind(before)
                .bind(limit)
                .fetch_all(pool)
                .await
            }

            pub(super) async fn about(
                pool: &$pool,
                account: Uuid,
                limit: i64,
            ) -> Result<Vec<ReportTuple>, sqlx::Error> {
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "SELECT {REPORT_COLUMNS} FROM reports WHERE account_id = $1 ORDER BY id DESC LIMIT $2"
                )))
                .bind(account.to_string())
                .bind(limit)
                .fetch_all(pool)
                .await
            }
        }
    };
}

backend!(sqlite, sqlx::sqlite::SqlitePool, None);
backend!(pg, sqlx::postgres::PgPool, Some("SELECT pg_advisory_xact_lock(hashtextextended($1, 7))"));

#[cfg(test)]
mod tests {
    use super::*;

    fn report(reporter: Uuid, table: Uuid, message: Option<u64>, at: u64) -> ReportRow {
        ReportRow {
            id: 0,
            made_at_ms: at,
            reporter: (reporter, "P1".into()),
            table,
            message,
            seat: Some(Seat::East),
            account: None,
            name: "Rude".into(),
            reason: ReportReason::AbusiveChat,
            text: "insults\nagain".into(),
            context: ReportContext { chat: Vec::new(), table: None },
            resolved: None,
        }
    }

    #[tokio::test]
    async fn a_report_is_filed_once_a_target_and_a_reporter_files_at_most_so_many() {
        let store = AccountStore::memory();
        let ann = store.test_guest(1).await;
        let reports = store.reports();
        let table = Uuid::new_v4();
        let Filed::New(first) = reports.file(&report(ann, table, Some(3), 10), 0, 3).await.unwrap() else {
            panic!("filed")
        };
        assert_eq!((first.id > 0, first.text.as_str()), (true, "insults\nagain"));
        let again = reports.file(&report(ann, table, Some(3), 11), 0, 3).await.unwrap();
        assert_eq!(again, Filed::Again(first.clone()), "the same message: the open report");
        let Filed::New(seat) = reports.file(&report(ann, table, None, 12), 0, 3).await.unwrap() else {
            panic!("a seat is another target")
        };
        let Filed::New(other) = reports.file(&report(ann, Uuid::new_v4(), Some(3), 13), 0, 3).await.unwrap()
        else {
            panic!("another table")
        };
        let more = reports.file(&report(ann, Uuid::new_v4(), None, 14), 0, 3).await.unwrap();
        assert_eq!(more, Filed::TooMany);
        // Another player in the same seat is another target (over the
        // limit here: nothing is written, and it is not the first one's).
        let next = ReportRow { name: "Next".into(), ..report(ann, table, None, 14) };
        assert_eq!(reports.file(&next, 0, 3).await.unwrap(), Filed::TooMany);
        assert!(matches!(
            reports.file(&report(ann, Uuid::new_v4(), None, 14), 11, 3).await.unwrap(),
            Filed::New(_)
        ));
        let ids = |rows: Vec<ReportRow>| rows.into_iter().map(|r| r.id).collect::<Vec<_>>();
        let all = reports.list(true, None, 10).await.unwrap();
        assert_eq!(all.len(), 4);
        assert_eq!(ids(reports.list(true, Some(other.id), 10).await.unwrap()), [seat.id, first.id], "paged");
        assert_eq!(all.last(), Some(&first), "read back as written");

        // An operator resolves it once, with its audit entry.
        let m = store.moderation();
        let by = super::super::Actor { operator: Some((ann, "Olive")), now_ms: 20, reason: "muted a day" };
        let Resolving::Done(done) = m.resolve_report(first.id, by).await.unwrap() else { panic!("resolved") };
        let resolved = done.resolved.clone().unwrap();
        assert_eq!(
            (resolved.at_ms, resolved.by, resolved.reason.as_str()),
            (20, (ann, "Olive".into()), "muted a day")
        );
        assert!(matches!(m.resolve_report(first.id, by).await.unwrap(), Resolving::Already(_)));
        assert_eq!(m.resolve_report(999, by).await.unwrap(), Resolving::Missing);
        assert_eq!(reports.list(true, None, 10).await.unwrap().len(), 3, "the queue holds the open ones");
        assert_eq!(reports.list(false, None, 10).await.unwrap().last(), Some(&done), "every one");
        let log = m.audit(None, 10).await.unwrap();
        assert_eq!(log.len(), 1, "one entry: the second attempt changed nothing");
        assert_eq!(
            (log[0].action, log[0].report),
            (spades_protocol::AuditAction::ResolveReport, Some(first.id))
        );
        // A context that no longer reads (another version's status): the
        // report shows without it, and so does the queue.
        store
            .run("spoiling a context", |pool| async move {
                let Pool::Sqlite(p) = pool else { unreachable!() };
                sqlx::query("UPDATE reports SET context = '{\"chat\": 5}' WHERE id = $1")
                    .bind(ms(seat.id))
                    .execute(&p)
                    .await
            })
            .await
            .unwrap();
        let queue = reports.list(true, None, 10).await.unwrap();
        let spoiled = queue.iter().find(|r| r.id == seat.id).unwrap();
        assert_eq!(spoiled.context, ReportContext { chat: Vec::new(), table: None });
        // A new report of the same message once the first is resolved.
        assert!(matches!(
            reports.file(&report(ann, table, Some(3), 30), 25, 3).await.unwrap(),
            Filed::New(_)
        ));
    }
}
