//! Reports: a player reports a chat message or a player from the table,
//! with a reason from a short list and their own words; operators work
//! through the queue and resolve each report with what they did.
//!
//! A report keeps its context, copied when it is made: the messages
//! around the one reported (or the table's last ones), and the table's
//! public status (the hand as anybody could see it, never a card). So it
//! still says what happened when the chat has been forgotten or the table
//! is gone. The account reported is the server's, never the reporter's
//! word: the writer of the message as kept, or the account in the seat.
//!
//! A reporter files one open report per message or seat (a repeat answers
//! the first), and at most `moderation.reports_per_hour` in an hour.
//! Resolving is an operator's action, written with its audit entry.

use spades_engine::Seat;
use spades_protocol::{
    AccountRef, ChatLine, ErrorCode, NewReport, Report, ReportContext, ReportReceipt, Resolution, SeatKind,
};
use tracing::info;
use uuid::Uuid;

use crate::accounts::SignedIn;
use crate::directory::Directory;
use crate::error::AppError;
use crate::moderation::{Moderation, REASON_MAX, by_operator, chat_line, reason_of};
use crate::storage::{ChatStore, Filed, Journal, ModerationStore, ReportRow, ReportStore, Resolving};
use crate::time::now_ms;

/// The messages kept with a report on either side of the one reported.
const AROUND: u64 = 10;

/// The messages kept with a report of a player: the table's last ones.
const LAST: usize = 20;

fn storage(e: &crate::storage::StorageError) -> AppError {
    AppError::store_failed("reports", e)
}

/// A report's text as given: at most [`REASON_MAX`] characters, no control
/// character but the line break (the OpenAPI document's pattern says the
/// same); kept trimmed, and may be empty.
fn text_of(raw: &str) -> Result<String, AppError> {
    if raw.chars().count() > REASON_MAX || raw.chars().any(|c| c.is_control() && c != '\n') {
        return Err(AppError::new(
            ErrorCode::InvalidOptions,
            format!("a report's text is at most {REASON_MAX} characters, without control characters"),
        ));
    }
    Ok(raw.trim().to_owned())
}

/// What is reported: a message, or a seat's player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The chat message of this number.
    Message(u64),
    /// The player in this seat.
    Seat(Seat),
}

/// The service (one per server).
#[derive(Debug)]
pub struct Reports {
    store: ReportStore,
    moderation_store: ModerationStore,
    chat: ChatStore,
    moderation: std::sync::Arc<Moderation>,
    tables: Directory,
    journal: Journal,
    per_hour: u32,
}

impl Reports {
    /// The service on `journal`'s account store; tables' status read
    /// through `tables`; `per_hour` reports an account may make in an hour
    /// (0: no limit).
    pub fn new(
        journal: Journal,
        tables: Directory,
        moderation: std::sync::Arc<Moderation>,
        per_hour: u32,
    ) -> Reports {
        let accounts = journal.accounts();
        Reports {
            store: accounts.reports(),
            moderation_store: accounts.moderation(),
            chat: accounts.chat(),
            moderation,
            tables,
            journal,
            per_hour,
        }
    }

    /// Files `who`'s report of `target` at `table`. `true` with a new one;
    /// `false`: the reporter's open report of the same target, unchanged.
    ///
    /// # Errors
    /// `suspended`, `banned` (the reporter may not play), `invalid_options`
    /// (a text that does not fit), `not_found`, `table_not_found`, 409
    /// `invalid_options` (oneself, a bot), 429 `rate_limited`, storage.
    pub async fn file(
        &self,
        who: &SignedIn,
        table: Uuid,
        target: Target,
        new: &NewReport,
    ) -> Result<(ReportReceipt, bool), AppError> {
        let text = text_of(&new.text)?;
        self.moderation.may_play(who.account.id).await?;
        let (seat, account, name, chat) = match target {
            Target::Message(id) => {
                let mut around = self
                    .chat
                    .at_table(table, Some(id.saturating_add(AROUND + 1)), 2 * AROUND as usize + 1)
                    .await
                    .map_err(|e| storage(&e))?;
                // At most AROUND before it, however few came after.
                around.retain(|m| m.id.saturating_add(AROUND) >= id);
                let Some(said) = around.iter().find(|m| m.id == id) else {
                    return Err(AppError::new(
                        ErrorCode::NotFound,
                        "no message with this number is kept at this table",
                    ));
                };
                (said.seat, said.account, said.name.clone(), around)
            }
            Target::Seat(seat) => {
                let stored = self.journal.get(table).await.map_err(|e| storage(&e))?;
                let Some(stored) = stored else {
                    return Err(AppError::new(ErrorCode::TableNotFound, "no such table"));
                };
                let Some(occupant) = stored.seats[seat].clone() else {
                    return Err(AppError::new(ErrorCode::NotFound, "nobody sits in this seat"));
                };
                if occupant.kind == SeatKind::Bot {
                    return Err(AppError::conflict("a bot plays by the server's rules: report a person"));
                }
                let last = self.chat.at_table(table, None, LAST).await.map_err(|e| storage(&e))?;
                (Some(seat), occupant.account, occupant.name, last)
            }
        };
        if account == Some(who.account.id) {
            return Err(AppError::conflict("you cannot report yourself"));
        }
        // The hand as anybody may see it now; none while the table is gone
        // or moving between nodes.
        let status = self.tables.status(table).await.ok();
        let mut chat: Vec<ChatLine> = chat.into_iter().map(chat_line).collect();
        chat.reverse();
        let now = now_ms();
        let row = ReportRow {
            id: 0,
            made_at_ms: now,
            reporter: (who.account.id, who.account.name.clone()),
            table,
            message: match target {
                Target::Message(id) => Some(id),
                Target::Seat(_) => None,
            },
            seat,
            account,
            name,
            reason: new.reason,
            text,
            context: ReportContext { chat, table: status.map(Box::new) },
            resolved: None,
        };
        let max = if self.per_hour == 0 { u64::MAX } else { u64::from(self.per_hour) };
        let filed =
            self.store.file(&row, now.saturating_sub(3_600_000), max).await.map_err(|e| storage(&e))?;
        let (row, new) = match filed {
            Filed::New(row) => (row, true),
            Filed::Again(row) => (row, false),
            Filed::TooMany => {
                return Err(AppError::new(
                    ErrorCode::RateLimited,
                    format!("at most {} reports an hour: an operator reads every one", self.per_hour),
                ));
            }
        };
        if new {
            info!(report = row.id, reporter = %who.account.id, %table, reason = row.reason.as_str(), "report made");
        }
        Ok((ReportReceipt { id: row.id, made_at: row.made_at_ms, reason: row.reason }, new))
    }

    /// The queue, the newest first: at most `limit` reports numbered below
    /// `before`, the open ones only or every one.
    ///
    /// # Errors
    /// Storage.
    pub async fn queue(
        &self,
        open_only: bool,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Report>, AppError> {
        let rows = self.store.list(open_only, before, limit).await.map_err(|e| storage(&e))?;
        Ok(rows.into_iter().map(report).collect())
    }

    /// The reports about `account`, the newest first.
    ///
    /// # Errors
    /// Storage.
    pub async fn about(&self, account: Uuid, limit: usize) -> Result<Vec<Report>, AppError> {
        let rows = self.store.about(account, limit).await.map_err(|e| storage(&e))?;
        Ok(rows.into_iter().map(report).collect())
    }

    /// Resolves the open report `id`, by the operator `by`, saying what was
    /// done and why.
    ///
    /// # Errors
    /// `invalid_options` (a bad reason; a report resolved already: 409),
    /// `not_found`, storage.
    pub async fn resolve(&self, by: &SignedIn, id: u64, reason: &str) -> Result<Report, AppError> {
        let reason = reason_of(reason)?;
        let actor = by_operator(by, &reason, now_ms());
        match self.moderation_store.resolve_report(id, actor).await.map_err(|e| storage(&e))? {
            Resolving::Done(row) => {
                info!(operator = %by.account.id, report = id, "report resolved");
                Ok(report(row))
            }
            Resolving::Already(_) => Err(AppError::conflict("this report was resolved already")),
            Resolving::Missing => Err(AppError::new(ErrorCode::NotFound, "no report has this number")),
        }
    }
}

/// A stored report as operators see it.
fn report(row: ReportRow) -> Report {
    let refer = |(id, name): (Uuid, String)| AccountRef { id, name };
    Report {
        id: row.id,
        made_at: row.made_at_ms,
        reporter: refer(row.reporter),
        table: row.table,
        message: row.message,
        seat: row.seat,
        account: row.account,
        name: row.name,
        reason: row.reason,
        text: row.text,
        context: row.context,
        resolved: row.resolved.map(|r| Resolution { at: r.at_ms, by: refer(r.by), reason: r.reason }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_may_be_empty_or_say_more_lines_but_holds_no_control_character() {
        assert_eq!(text_of("").unwrap(), "");
        assert_eq!(text_of("  he said\nit twice ").unwrap(), "he said\nit twice");
        assert!(text_of("tab\there").is_err());
        assert!(text_of(&"x".repeat(REASON_MAX + 1)).is_err());
        assert_eq!(text_of(&"é".repeat(REASON_MAX)).unwrap().chars().count(), REASON_MAX);
    }
}
