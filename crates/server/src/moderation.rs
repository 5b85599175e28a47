//! Moderation: operators and the sanctions they put on accounts.
//!
//! An operator (made first by the server's command line, `spades-server
//! admin grant NAME`, then by other operators) suspends an account until a
//! time, bans it, or mutes it in chat, with a reason the player is shown,
//! and lifts any of these; every such action is written with its audit
//! entry ([`ModerationStore`]). What a sanction stops is checked where the
//! player acts, read from the store: at a table's creation and at every
//! attach (suspended and banned accounts), at every chat message (muted
//! ones too). A suspension or ban also closes the account's open
//! connections, on this node at once and, announced over NATS
//! ([`Announce`]), on every other node. A suspension ends by itself at its
//! time: nothing has to run for it, the next check finds it over.
//!
//! What is said at the tables is kept ([`ChatStore`], written by each
//! table's journal) for `moderation.chat_days`: operators read an account's
//! or a table's chat and remove a message (the table, wherever it runs,
//! then drops it for everyone: `chat_removed`); a player's export holds
//! what they wrote.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use dashmap::DashMap;
use spades_protocol::{
    AccountRef, AuditEntry, ChatLine, ErrorCode, Lifted, ModeratedAccount, NewSanction, OwnSanction,
    Restriction, SANCTION_SECONDS_MAX, Sanction, SanctionKind,
};
use tokio_util::sync::CancellationToken;
use tracing::info;
use uuid::Uuid;

use crate::accounts::{Accounts, SignedIn};
use crate::error::AppError;
use crate::storage::{
    AccountRow, Actor, AuditRow, ChatRemoval, ChatRow, ChatStore, Lift, ModerationStore, OperatorRow,
    SanctionRow,
};
use crate::text::name_skeleton;
use crate::time::{now_ms, utc_minute};

/// The longest reason, in characters.
pub const REASON_MAX: usize = 500;

/// The most accounts one search answers.
pub const FOUND_MAX: usize = 50;

fn storage(e: &crate::storage::StorageError) -> AppError {
    AppError::store_failed("moderation", e)
}

/// Tells the other nodes of a cluster that accounts were suspended or
/// banned, so that they close their connections of them
/// ([`Moderation::bar`] there). The cluster implements it.
pub trait Announce: Send + Sync + std::fmt::Debug {
    /// `accounts` may no longer play.
    fn accounts_barred(&self, accounts: &[Uuid]);
}

/// What holds an account now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Standing {
    /// A ban, else the suspension that runs longest.
    pub barred: Option<SanctionRow>,
    /// The mute that runs longest.
    pub muted: Option<SanctionRow>,
}

impl Standing {
    fn of(active: Vec<SanctionRow>) -> Standing {
        let longest = |a: &SanctionRow| (a.kind == SanctionKind::Ban, a.until_ms.is_none(), a.until_ms);
        let mut standing = Standing::default();
        for s in active {
            let slot = if s.kind == SanctionKind::Mute { &mut standing.muted } else { &mut standing.barred };
            if slot.as_ref().is_none_or(|held| longest(&s) > longest(held)) {
                *slot = Some(s);
            }
        }
        standing
    }
}

/// The refusal of what `sanction` stops, in words the player is shown:
/// `suspended`, `banned` or `muted`, with until when and why.
pub fn refusal(sanction: &SanctionRow) -> AppError {
    let until = sanction.until_ms.map(|t| format!(" until {}", utc_minute(t))).unwrap_or_default();
    let (code, said) = match sanction.kind {
        SanctionKind::Suspend => (ErrorCode::Suspended, format!("your account is suspended{until}")),
        SanctionKind::Ban => (ErrorCode::Banned, "your account is banned from this server".to_owned()),
        SanctionKind::Mute => (ErrorCode::Muted, format!("you are muted in chat{until}")),
    };
    AppError::new(code, format!("{said}: {}", sanction.reason))
}

/// The service (one per server).
#[derive(Debug)]
pub struct Moderation {
    store: ModerationStore,
    chat: ChatStore,
    accounts: Arc<Accounts>,
    /// The open connections that play as each account (signed in as it,
    /// or in a seat it holds), by account id: each connection's token,
    /// cancelled when the account is suspended or banned.
    live: DashMap<Uuid, Vec<(u64, CancellationToken)>>,
    /// The next watch's number.
    watches: AtomicU64,
    announce: OnceLock<Arc<dyn Announce>>,
}

/// A connection's hold on an account it plays as: the connection's token
/// is cancelled when the account is suspended or banned, here or on
/// another node. Dropped, it lets go of that account only.
#[derive(Debug)]
pub struct AccountWatch {
    moderation: Arc<Moderation>,
    account: Uuid,
    id: u64,
}

impl AccountWatch {
    /// The account watched.
    pub fn account(&self) -> Uuid {
        self.account
    }
}

impl Drop for AccountWatch {
    fn drop(&mut self) {
        self.moderation.live.remove_if_mut(&self.account, |_, held| {
            held.retain(|(id, _)| *id != self.id);
            held.is_empty()
        });
    }
}

/// A reason as given: 1 to [`REASON_MAX`] characters, one of them at
/// least not white space, no control character but the line break (the
/// OpenAPI document's pattern says the same); kept trimmed.
pub(crate) fn reason_of(raw: &str) -> Result<String, AppError> {
    let fits = (1..=REASON_MAX).contains(&raw.chars().count())
        && raw.chars().all(|c| !c.is_control() || c == '\n')
        && raw.chars().any(|c| !c.is_whitespace());
    if !fits {
        return Err(AppError::new(
            ErrorCode::InvalidOptions,
            format!("a reason is 1 to {REASON_MAX} characters, not all blank, without control characters"),
        ));
    }
    Ok(raw.trim().to_owned())
}

/// The operator `by` acting at `now_ms` for `reason`, as the audit log
/// names them.
pub(crate) fn by_operator<'a>(by: &'a SignedIn, reason: &'a str, now_ms: u64) -> Actor<'a> {
    Actor { operator: Some((by.account.id, &by.account.name)), now_ms, reason }
}

fn reference((id, name): &(Uuid, String)) -> AccountRef {
    AccountRef { id: *id, name: name.clone() }
}

impl Moderation {
    /// The service on `store`, finding accounts through `accounts`.
    pub fn new(store: ModerationStore, accounts: Arc<Accounts>) -> Moderation {
        Moderation {
            chat: store.chat(),
            store,
            accounts,
            live: DashMap::new(),
            watches: AtomicU64::new(0),
            announce: OnceLock::new(),
        }
    }

    /// Cluster mode: suspensions and bans made here are announced to the
    /// other nodes through `announce` (set once).
    pub fn announce_with(&self, announce: Arc<dyn Announce>) {
        let _ = self.announce.set(announce);
    }

    /// A connection's hold on `account`: `barred` (the connection's own
    /// token) is cancelled when the account is suspended or banned (see
    /// [`AccountWatch`]).
    pub fn watch(self: &Arc<Self>, account: Uuid, barred: &CancellationToken) -> AccountWatch {
        let id = self.watches.fetch_add(1, Ordering::Relaxed);
        self.live.entry(account).or_default().push((id, barred.clone()));
        AccountWatch { moderation: Arc::clone(self), account, id }
    }

    /// Closes this node's connections of `account` (suspended or banned).
    pub fn bar(&self, account: Uuid) {
        if let Some((_, held)) = self.live.remove(&account) {
            held.iter().for_each(|(_, barred)| barred.cancel());
        }
    }

    /// What holds `account` now.
    ///
    /// # Errors
    /// Storage.
    pub async fn standing(&self, account: Uuid) -> Result<Standing, AppError> {
        let active = self.store.sanctions(account, Some(now_ms())).await.map_err(|e| storage(&e))?;
        Ok(Standing::of(active))
    }

    /// What holds `account` now, for a check at the moment it acts: a
    /// store that cannot be read holds nothing (the failure is logged), so
    /// that an outage never stops play; the connections of an account
    /// sanctioned meanwhile are closed all the same when it is announced.
    async fn standing_or_none(&self, account: Uuid) -> Standing {
        self.standing(account).await.unwrap_or_default()
    }

    /// Refused (`suspended`, `banned`) when `account` may not play now:
    /// creating a table, sitting, watching signed in.
    ///
    /// # Errors
    /// The refusal.
    pub async fn may_play(&self, account: Uuid) -> Result<(), AppError> {
        match self.standing_or_none(account).await.barred {
            Some(sanction) => Err(refusal(&sanction)),
            None => Ok(()),
        }
    }

    /// Refused (`suspended`, `banned`, `muted`) when `account` may not chat now.
    ///
    /// # Errors
    /// The refusal.
    pub async fn may_chat(&self, account: Uuid) -> Result<(), AppError> {
        let standing = self.standing_or_none(account).await;
        match standing.barred.or(standing.muted) {
            Some(sanction) => Err(refusal(&sanction)),
            None => Ok(()),
        }
    }

    /// Whether `account` is an operator.
    ///
    /// # Errors
    /// Storage.
    pub async fn is_operator(&self, account: Uuid) -> Result<bool, AppError> {
        self.store.is_operator(account).await.map_err(|e| storage(&e))
    }

    /// What holds the signed-in player, as they are told it.
    ///
    /// # Errors
    /// Storage.
    pub async fn restrictions(&self, account: Uuid) -> Result<Vec<Restriction>, AppError> {
        let active = self.store.sanctions(account, Some(now_ms())).await.map_err(|e| storage(&e))?;
        Ok(active
            .into_iter()
            .map(|s| Restriction { kind: s.kind, reason: s.reason, until: s.until_ms })
            .collect())
    }

    /// Every sanction on `account`, as its player's data export gives it
    /// (no operator named).
    ///
    /// # Errors
    /// Storage.
    pub async fn own_sanctions(&self, account: Uuid) -> Result<Vec<OwnSanction>, AppError> {
        let all = self.store.sanctions(account, None).await.map_err(|e| storage(&e))?;
        Ok(all
            .into_iter()
            .map(|s| OwnSanction {
                kind: s.kind,
                reason: s.reason,
                made_at: s.made_at_ms,
                until: s.until_ms,
                lifted_at: s.lifted_at_ms,
            })
            .collect())
    }

    /// A sanction as an operator sees it (the operators' names read now).
    async fn sanction_view(&self, s: SanctionRow, now: u64) -> Result<Sanction, AppError> {
        let active = s.active(now);
        let name = async |id: Option<Uuid>| -> Result<Option<AccountRef>, AppError> {
            let Some(id) = id else { return Ok(None) };
            let name = self.accounts.account(id).await?.map_or_else(String::new, |a| a.name);
            Ok(Some(AccountRef { id, name }))
        };
        let made_by = name(s.made_by).await?;
        let lifted = match s.lifted_at_ms {
            Some(at) => {
                Some(Lifted { at, by: name(s.lifted_by).await?, reason: s.lift_reason.unwrap_or_default() })
            }
            None => None,
        };
        Ok(Sanction {
            id: s.id,
            account: s.account,
            kind: s.kind,
            reason: s.reason,
            until: s.until_ms,
            made_at: s.made_at_ms,
            made_by,
            lifted,
            active,
        })
    }

    /// An account as an operator finds it.
    ///
    /// # Errors
    /// Storage.
    pub async fn moderated(&self, a: AccountRow) -> Result<ModeratedAccount, AppError> {
        let now = now_ms();
        let mut active = Vec::new();
        for s in self.store.sanctions(a.id, Some(now)).await.map_err(|e| storage(&e))? {
            active.push(self.sanction_view(s, now).await?);
        }
        self.view(a, active).await
    }

    /// An account as an operator finds it, with every sanction it has had
    /// (the newest first), the ones that hold taken from the same read.
    ///
    /// # Errors
    /// Storage.
    pub async fn with_history(&self, a: AccountRow) -> Result<(ModeratedAccount, Vec<Sanction>), AppError> {
        let history = self.history(a.id).await?;
        let active = history.iter().filter(|s| s.active).cloned().collect();
        Ok((self.view(a, active).await?, history))
    }

    /// `a` with the sanctions that hold it.
    async fn view(&self, a: AccountRow, active: Vec<Sanction>) -> Result<ModeratedAccount, AppError> {
        let operator = self.is_operator(a.id).await?;
        Ok(ModeratedAccount {
            id: a.id,
            name: a.name,
            kind: a.kind,
            created_at: a.created_at_ms,
            operator,
            active,
        })
    }

    /// Every sanction of `account`, the newest first.
    ///
    /// # Errors
    /// Storage.
    async fn history(&self, account: Uuid) -> Result<Vec<Sanction>, AppError> {
        let now = now_ms();
        let mut all = Vec::new();
        for s in self.store.sanctions(account, None).await.map_err(|e| storage(&e))? {
            all.push(self.sanction_view(s, now).await?);
        }
        Ok(all)
    }

    /// Accounts whose name holds `query` (case aside) or looks like it,
    /// or the account of that id.
    ///
    /// # Errors
    /// Storage.
    pub async fn find(&self, query: &str) -> Result<Vec<AccountRow>, AppError> {
        // White space at either end is not part of what is looked for; a
        // blank query finds nobody.
        let query = query.trim();
        if query.is_empty() {
            return Ok(Vec::new());
        }
        if let Ok(id) = Uuid::parse_str(query) {
            return Ok(self.accounts.account(id).await?.into_iter().collect());
        }
        self.store
            .find(&name_skeleton(query), &query.to_lowercase(), FOUND_MAX)
            .await
            .map_err(|e| storage(&e))
    }

    /// The account of `id`, or 404.
    ///
    /// # Errors
    /// `not_found`, storage.
    pub async fn account(&self, id: Uuid) -> Result<AccountRow, AppError> {
        self.accounts
            .account(id)
            .await?
            .ok_or_else(|| AppError::new(ErrorCode::NotFound, "no account has this id"))
    }

    /// Puts a sanction on `target`, made by the operator `by`; a suspension
    /// or ban closes the account's connections on every node.
    ///
    /// # Errors
    /// `invalid_options` (a reason or time that does not fit the kind),
    /// storage.
    pub async fn sanction(
        &self,
        by: &SignedIn,
        target: &AccountRow,
        new: &NewSanction,
    ) -> Result<Sanction, AppError> {
        let reason = reason_of(new.reason())?;
        let now = now_ms();
        let until = match new.seconds() {
            Some(secs) if (1..=SANCTION_SECONDS_MAX).contains(&secs) => Some(now.saturating_add(secs * 1000)),
            Some(_) => {
                return Err(AppError::new(
                    ErrorCode::InvalidOptions,
                    "`seconds` must be from 1 to ten years (315360000): for longer, ban",
                ));
            }
            None => None,
        };
        let row = SanctionRow {
            id: Uuid::new_v4(),
            account: target.id,
            kind: new.kind(),
            reason: reason.clone(),
            until_ms: until,
            made_at_ms: now,
            made_by: Some(by.account.id),
            lifted_at_ms: None,
            lifted_by: None,
            lift_reason: None,
        };
        let actor = by_operator(by, &reason, now);
        self.store.add_sanction(&row, &target.name, actor).await.map_err(|e| storage(&e))?;
        info!(operator = %by.account.id, account = %target.id, kind = new.kind().as_str(), "sanction made");
        if new.kind() != SanctionKind::Mute {
            self.bar(target.id);
            if let Some(announce) = self.announce.get() {
                announce.accounts_barred(&[target.id]);
            }
        }
        self.sanction_view(row, now).await
    }

    /// Lifts a sanction that holds.
    ///
    /// # Errors
    /// `not_found`, `invalid_options` (a bad reason, or a sanction that no
    /// longer holds: 409), storage.
    pub async fn lift(&self, by: &SignedIn, id: Uuid, reason: &str) -> Result<Sanction, AppError> {
        let reason = reason_of(reason)?;
        let now = now_ms();
        let actor = by_operator(by, &reason, now);
        match self.store.lift(id, actor).await.map_err(|e| storage(&e))? {
            Lift::Done(row) => {
                info!(operator = %by.account.id, sanction = %id, "sanction lifted");
                self.sanction_view(row, now).await
            }
            Lift::Ended(_) => {
                Err(AppError::conflict("this sanction no longer holds: it was lifted or ran out"))
            }
            Lift::Missing => Err(AppError::new(ErrorCode::NotFound, "no sanction has this id")),
        }
    }

    /// Removes the chat message `id` of `table` from the archive, with its
    /// audit entry. The caller then tells the table, wherever it runs.
    ///
    /// # Errors
    /// `invalid_options` (a bad reason; a message already removed: 409),
    /// `not_found`, storage.
    pub async fn remove_chat(
        &self,
        by: &SignedIn,
        table: Uuid,
        id: u64,
        reason: &str,
    ) -> Result<ChatLine, AppError> {
        let reason = reason_of(reason)?;
        let actor = by_operator(by, &reason, now_ms());
        match self.store.remove_chat(table, id, actor).await.map_err(|e| storage(&e))? {
            ChatRemoval::Done(row) => {
                info!(operator = %by.account.id, %table, message = id, "chat message removed");
                Ok(chat_line(row))
            }
            ChatRemoval::Already(_) => Err(AppError::conflict("this message was already removed")),
            ChatRemoval::Missing => {
                Err(AppError::new(ErrorCode::NotFound, "no message with this number is kept at this table"))
            }
        }
    }

    /// Writes the audit entry of closing `table`, running somewhere; the
    /// caller then tells the table. Returns the entry.
    ///
    /// # Errors
    /// `invalid_options` (a bad reason), storage.
    pub async fn close_table(
        &self,
        by: &SignedIn,
        table: Uuid,
        reason: &str,
    ) -> Result<AuditEntry, AppError> {
        let reason = reason_of(reason)?;
        let actor = by_operator(by, &reason, now_ms());
        let row = self.store.close_table(table, actor).await.map_err(|e| storage(&e))?;
        info!(operator = %by.account.id, %table, "table closed");
        Ok(audit_entry(row))
    }

    /// What `account` said most recently, the newest first.
    ///
    /// # Errors
    /// Storage.
    pub async fn account_chat(&self, account: Uuid, limit: usize) -> Result<Vec<ChatLine>, AppError> {
        let rows = self.chat.by_account(account, limit).await.map_err(|e| storage(&e))?;
        Ok(rows.into_iter().map(chat_line).collect())
    }

    /// What was said at `table`, the newest first: at most `limit`
    /// messages numbered below `before`.
    ///
    /// # Errors
    /// Storage.
    pub async fn table_chat(
        &self,
        table: Uuid,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<ChatLine>, AppError> {
        let rows = self.chat.at_table(table, before, limit).await.map_err(|e| storage(&e))?;
        Ok(rows.into_iter().map(chat_line).collect())
    }

    /// Forgets the chat older than `days` days.
    pub async fn forget_old_chat(&self, days: u32) {
        let before = now_ms().saturating_sub(u64::from(days) * 86_400_000);
        match self.chat.sweep(before).await {
            Ok(0) => {}
            Ok(n) => info!(messages = n, days, "old chat forgotten"),
            Err(e) => tracing::warn!(error = %e, "old chat could not be forgotten"),
        }
    }

    /// Grants or revokes the operator role of `target`. An operator may not
    /// revoke their own (the command line can).
    ///
    /// # Errors
    /// `invalid_options` (a bad reason; revoking one's own role: 409),
    /// storage.
    pub async fn set_operator(
        &self,
        by: &SignedIn,
        target: &AccountRow,
        grant: bool,
        reason: &str,
    ) -> Result<bool, AppError> {
        let reason = reason_of(reason)?;
        if !grant && target.id == by.account.id {
            return Err(AppError::conflict(
                "an operator may not revoke their own role: ask another operator, or use `spades-server admin revoke`",
            ));
        }
        let actor = by_operator(by, &reason, now_ms());
        let changed = self.store.set_operator(target, grant, actor).await.map_err(|e| storage(&e))?;
        if changed {
            info!(operator = %by.account.id, account = %target.id, grant, "operator role changed");
        }
        Ok(changed)
    }

    /// Every operator.
    ///
    /// # Errors
    /// Storage.
    pub async fn operators(&self) -> Result<Vec<OperatorRow>, AppError> {
        self.store.operators().await.map_err(|e| storage(&e))
    }

    /// The audit log, the newest first.
    ///
    /// # Errors
    /// Storage.
    pub async fn audit(&self, before: Option<u64>, limit: usize) -> Result<Vec<AuditEntry>, AppError> {
        let rows = self.store.audit(before, limit).await.map_err(|e| storage(&e))?;
        Ok(rows.into_iter().map(audit_entry).collect())
    }
}

fn audit_entry(row: AuditRow) -> AuditEntry {
    AuditEntry {
        id: row.id,
        at: row.at_ms,
        operator: row.operator.as_ref().map(reference),
        action: row.action,
        account: row.account.as_ref().map(reference),
        sanction: row.sanction,
        reason: row.reason,
        until: row.until_ms,
        table: row.table,
        message: row.message,
        report: row.report,
    }
}

/// A stored chat message as the API shows it.
pub(crate) fn chat_line(row: ChatRow) -> ChatLine {
    ChatLine {
        table: row.table,
        id: row.id,
        account: row.account,
        seat: row.seat,
        name: row.name,
        text: row.text,
        at: row.at_ms,
        removed_at: row.removed_at_ms,
    }
}

/// `spades-server admin grant|revoke NAME`, run on the server's machine
/// against its store: grants or revokes the operator role of the account
/// that goes by `name`, written to the audit log as done by the command
/// line. Returns what to print.
///
/// # Errors
/// What went wrong, in words for the terminal.
pub async fn command_line(
    accounts: &Accounts,
    store: &ModerationStore,
    grant: bool,
    name: &str,
    reason: &str,
) -> Result<String, String> {
    let (account, _) = accounts.named(name).await.map_err(|e| e.message)?;
    let Some(account) = account else {
        return Err(format!(
            "no account goes by {name:?}: sign in once on the server's page (a guest is enough), then run this again"
        ));
    };
    let reason = reason_of(reason).map_err(|e| e.message)?;
    let actor = Actor { operator: None, now_ms: now_ms(), reason: &reason };
    let changed = store.set_operator(&account, grant, actor).await.map_err(|e| e.to_string())?;
    Ok(match (grant, changed) {
        (true, true) => format!("{} ({}) is an operator now", account.name, account.id),
        (true, false) => format!("{} ({}) was already an operator", account.name, account.id),
        (false, true) => format!("{} ({}) is no longer an operator", account.name, account.id),
        (false, false) => format!("{} ({}) was not an operator", account.name, account.id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: SanctionKind, until_ms: Option<u64>) -> SanctionRow {
        SanctionRow {
            id: Uuid::new_v4(),
            account: Uuid::nil(),
            kind,
            reason: "why".into(),
            until_ms,
            made_at_ms: 0,
            made_by: None,
            lifted_at_ms: None,
            lifted_by: None,
            lift_reason: None,
        }
    }

    #[test]
    fn a_ban_outweighs_a_suspension_and_the_longest_of_each_kind_is_told() {
        let short = row(SanctionKind::Suspend, Some(10));
        let long = row(SanctionKind::Suspend, Some(20));
        let ban = row(SanctionKind::Ban, None);
        let mute = row(SanctionKind::Mute, Some(5));
        let forever = row(SanctionKind::Mute, None);
        let s = Standing::of(vec![short.clone(), long.clone(), mute.clone()]);
        assert_eq!((s.barred, s.muted), (Some(long.clone()), Some(mute)));
        let s = Standing::of(vec![long, ban.clone(), short, forever.clone()]);
        assert_eq!((s.barred, s.muted), (Some(ban), Some(forever)));
    }

    #[test]
    fn refusals_say_until_when_and_why() {
        let e = refusal(&row(SanctionKind::Suspend, Some(1_796_753_159_000)));
        assert_eq!(e.code, ErrorCode::Suspended);
        assert_eq!(e.message, "your account is suspended until 2026-12-08 18:05 UTC: why");
        assert_eq!(
            refusal(&row(SanctionKind::Ban, None)).message,
            "your account is banned from this server: why"
        );
        assert_eq!(refusal(&row(SanctionKind::Mute, None)).message, "you are muted in chat: why");
        assert!(reason_of("  ").is_err());
        assert!(reason_of(&"x".repeat(REASON_MAX + 1)).is_err());
        assert_eq!(reason_of(" spam\nagain ").unwrap(), "spam\nagain");
    }
}
