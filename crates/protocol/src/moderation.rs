//! The REST messages of moderation (`/api/v1/admin/…`): operators, the
//! sanctions they put on accounts (a suspension, a ban, a mute), and the
//! audit log of what every operator did and why.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::AccountKind;

/// What a sanction stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SanctionKind {
    /// Until a time: the account cannot create a table, sit, chat or
    /// watch while signed in; its open connections are closed.
    Suspend,
    /// As a suspension, with no end (until lifted).
    Ban,
    /// The account's chat is refused (until a time, or lifted); it plays
    /// on.
    Mute,
}

impl SanctionKind {
    /// The kind as stored and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            SanctionKind::Suspend => "suspend",
            SanctionKind::Ban => "ban",
            SanctionKind::Mute => "mute",
        }
    }

    /// The kind of a stored word.
    pub fn parse(s: &str) -> Option<SanctionKind> {
        [SanctionKind::Suspend, SanctionKind::Ban, SanctionKind::Mute].into_iter().find(|k| k.as_str() == s)
    }
}

/// An account named, as an operator sees it in a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AccountRef {
    /// The account's id.
    pub id: Uuid,
    /// Its display name (now, or when the audit entry was written).
    pub name: String,
}

/// A sanction's lifting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Lifted {
    /// When (Unix ms).
    pub at: u64,
    /// The operator who lifted it; absent: the server's command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<AccountRef>,
    /// Why.
    pub reason: String,
}

/// A sanction on an account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Sanction {
    /// Its id.
    pub id: Uuid,
    /// The account.
    pub account: Uuid,
    /// What it stops.
    pub kind: SanctionKind,
    /// Why: shown to the player.
    pub reason: String,
    /// When it ends by itself (Unix ms); absent: when lifted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<u64>,
    /// When it was made (Unix ms).
    pub made_at: u64,
    /// The operator who made it; absent: the server's command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made_by: Option<AccountRef>,
    /// When and why it was lifted, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifted: Option<Lifted>,
    /// Whether it holds now (not lifted, not run out).
    pub active: bool,
}

/// The longest a suspension or mute may be set to last, in seconds (ten
/// years): a longer one is a ban.
pub const SANCTION_SECONDS_MAX: u64 = 3650 * 86_400;

/// `POST /api/v1/admin/accounts/{account}/sanctions`: a new sanction, by
/// its `kind`. A reason is 1 to 500 characters, at least one of them
/// visible, with no control character but the line break.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum NewSanction {
    /// No tables, seats, watching signed in or chat for `seconds` from now.
    Suspend {
        /// Why, in words the player is shown.
        #[schema(min_length = 1, max_length = 500)]
        reason: String,
        /// How long, in seconds from now (1 to ten years).
        #[schema(minimum = 1, maximum = 315_360_000)]
        #[serde(deserialize_with = "whole::one")]
        seconds: u64,
    },
    /// As a suspension, until lifted.
    Ban {
        /// Why, in words the player is shown.
        #[schema(min_length = 1, max_length = 500)]
        reason: String,
    },
    /// No chat: for `seconds` from now, or until lifted.
    Mute {
        /// Why, in words the player is shown.
        #[schema(min_length = 1, max_length = 500)]
        reason: String,
        /// How long, in seconds from now (1 to ten years); absent: until
        /// lifted.
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "whole::maybe")]
        #[schema(minimum = 1, maximum = 315_360_000)]
        seconds: Option<u64>,
    },
}

impl NewSanction {
    /// What it stops.
    pub fn kind(&self) -> SanctionKind {
        match self {
            NewSanction::Suspend { .. } => SanctionKind::Suspend,
            NewSanction::Ban { .. } => SanctionKind::Ban,
            NewSanction::Mute { .. } => SanctionKind::Mute,
        }
    }

    /// Why.
    pub fn reason(&self) -> &str {
        match self {
            NewSanction::Suspend { reason, .. }
            | NewSanction::Ban { reason }
            | NewSanction::Mute { reason, .. } => reason,
        }
    }

    /// How long, in seconds; `None`: until lifted.
    pub fn seconds(&self) -> Option<u64> {
        match self {
            NewSanction::Suspend { seconds, .. } => Some(*seconds),
            NewSanction::Ban { .. } => None,
            NewSanction::Mute { seconds, .. } => *seconds,
        }
    }
}

/// `POST /api/v1/admin/sanctions/{sanction}/lift`: why a sanction is
/// lifted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LiftSanction {
    /// Why (1 to 500 characters, as for a sanction).
    #[schema(min_length = 1, max_length = 500)]
    pub reason: String,
}

/// `PUT /api/v1/admin/accounts/{account}/operator`: grant or revoke the
/// operator role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OperatorChange {
    /// `true`: the account becomes an operator; `false`: it stops being one.
    pub operator: bool,
    /// Why (1 to 500 characters, as for a sanction).
    #[schema(min_length = 1, max_length = 500)]
    pub reason: String,
}

/// An account as an operator finds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ModeratedAccount {
    /// Its id.
    pub id: Uuid,
    /// Its display name.
    pub name: String,
    /// Guest or member.
    pub kind: AccountKind,
    /// Made (Unix ms).
    pub created_at: u64,
    /// Whether it is an operator.
    pub operator: bool,
    /// The sanctions that hold now.
    pub active: Vec<Sanction>,
}

/// `GET /api/v1/admin/accounts/{account}`: one account, its sanctions
/// (every one, the newest first) and its recent matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AccountDossier {
    /// The account.
    pub account: ModeratedAccount,
    /// Every sanction it has had, the newest first.
    pub sanctions: Vec<Sanction>,
    /// Its sessions that have not expired.
    pub sessions: usize,
    /// Its most recent matches (at most 20), the newest first.
    pub matches: Vec<crate::MatchSummary>,
    /// What it said at the tables most recently (at most 100 messages,
    /// removed ones too), the newest first.
    #[serde(default)]
    pub chat: Vec<ChatLine>,
    /// The reports made about it (at most 50), the newest first, with
    /// their context.
    #[serde(default)]
    pub reports: Vec<Report>,
}

/// What an audit entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    /// The account became an operator.
    GrantOperator,
    /// The account stopped being an operator.
    RevokeOperator,
    /// A suspension was made.
    Suspend,
    /// A ban was made.
    Ban,
    /// A mute was made.
    Mute,
    /// A sanction was lifted.
    Lift,
    /// A chat message was removed.
    RemoveChat,
    /// A player's report was dealt with.
    ResolveReport,
    /// A table was closed.
    CloseTable,
}

impl AuditAction {
    /// Every action.
    pub const ALL: [AuditAction; 9] = [
        AuditAction::GrantOperator,
        AuditAction::RevokeOperator,
        AuditAction::Suspend,
        AuditAction::Ban,
        AuditAction::Mute,
        AuditAction::Lift,
        AuditAction::RemoveChat,
        AuditAction::ResolveReport,
        AuditAction::CloseTable,
    ];

    /// The action as stored and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditAction::GrantOperator => "grant_operator",
            AuditAction::RevokeOperator => "revoke_operator",
            AuditAction::Suspend => "suspend",
            AuditAction::Ban => "ban",
            AuditAction::Mute => "mute",
            AuditAction::Lift => "lift",
            AuditAction::RemoveChat => "remove_chat",
            AuditAction::ResolveReport => "resolve_report",
            AuditAction::CloseTable => "close_table",
        }
    }

    /// The action of a stored word.
    pub fn parse(s: &str) -> Option<AuditAction> {
        AuditAction::ALL.into_iter().find(|a| a.as_str() == s)
    }

    /// The action that makes a sanction of `kind`.
    pub fn of(kind: SanctionKind) -> AuditAction {
        match kind {
            SanctionKind::Suspend => AuditAction::Suspend,
            SanctionKind::Ban => AuditAction::Ban,
            SanctionKind::Mute => AuditAction::Mute,
        }
    }
}

/// One entry of the audit log: who did what to whom, when and why.
/// Written with the action, in the same transaction; never changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AuditEntry {
    /// Its number: later entries have larger ones.
    pub id: u64,
    /// When (Unix ms).
    pub at: u64,
    /// The operator (with the name they had then); absent: the server's
    /// command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<AccountRef>,
    /// What was done.
    pub action: AuditAction,
    /// To whom (with the name they had then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<AccountRef>,
    /// The sanction made or lifted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sanction: Option<Uuid>,
    /// Why.
    pub reason: String,
    /// Until when the sanction made holds (Unix ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<u64>,
    /// The table closed, or of the message removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<Uuid>,
    /// The message removed (its `id` at the table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<u64>,
    /// The report dealt with (its `id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<u64>,
}

/// A chat message as it was stored: what an operator sees of an account or
/// a table, and what a player's export holds of what they wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ChatLine {
    /// The table it was said at.
    pub table: Uuid,
    /// Its number at the table (the `id` of the `chat` frame).
    pub id: u64,
    /// The writer's account; absent: a player without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Uuid>,
    /// The writer's seat; absent: a spectator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<crate::Seat>,
    /// The writer's name at the table ("Spectator" for a spectator).
    pub name: String,
    /// The message.
    pub text: String,
    /// When the table received it (Unix ms).
    pub at: u64,
    /// When an operator removed it (Unix ms); absent: it stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed_at: Option<u64>,
}

/// `POST /api/v1/admin/tables/{table}/chat/{message}/remove`: why a
/// message is removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveChat {
    /// Why (1 to 500 characters, as for a sanction); in the audit log,
    /// not shown at the table.
    #[schema(min_length = 1, max_length = 500)]
    pub reason: String,
}

/// Why a player reports another: the short list the table offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReportReason {
    /// Insults, harassment, hate in chat.
    AbusiveChat,
    /// The same thing said over and over, advertising.
    Spam,
    /// Playing with help the others do not have (sharing cards with a
    /// partner, another program).
    Cheating,
    /// Stalling, leaving matches, throwing hands on purpose.
    Unsportsmanlike,
    /// A name that insults or pretends to be somebody.
    OffensiveName,
    /// Something else (the text says what).
    Other,
}

impl ReportReason {
    /// Every reason, in the order the table lists them.
    pub const ALL: [ReportReason; 6] = [
        ReportReason::AbusiveChat,
        ReportReason::Spam,
        ReportReason::Cheating,
        ReportReason::Unsportsmanlike,
        ReportReason::OffensiveName,
        ReportReason::Other,
    ];

    /// The reason as stored and on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ReportReason::AbusiveChat => "abusive_chat",
            ReportReason::Spam => "spam",
            ReportReason::Cheating => "cheating",
            ReportReason::Unsportsmanlike => "unsportsmanlike",
            ReportReason::OffensiveName => "offensive_name",
            ReportReason::Other => "other",
        }
    }

    /// The reason of a stored word.
    pub fn parse(s: &str) -> Option<ReportReason> {
        ReportReason::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// `POST /api/v1/tables/{id}/chat/{message}/report` and
/// `POST /api/v1/tables/{id}/seats/{seat}/report`: why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewReport {
    /// Why, from the short list.
    pub reason: ReportReason,
    /// What happened, in the reporter's words: 0 to 500 characters, no
    /// control character but the line break (kept trimmed).
    #[serde(default)]
    #[schema(max_length = 500)]
    pub text: String,
}

/// What the table looked like when a report was made, copied then: what
/// was said around it and the hand as anybody could see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReportContext {
    /// The messages around the one reported (up to 10 before and 10
    /// after), or the table's last 20 for a report of a player; oldest
    /// first.
    pub chat: Vec<ChatLine>,
    /// The table's public status then (never a card of anybody's hand);
    /// absent when the table no longer ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<Box<crate::TableStatus>>,
}

/// How an operator dealt with a report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Resolution {
    /// When (Unix ms).
    pub at: u64,
    /// The operator.
    pub by: AccountRef,
    /// What they did and why.
    pub reason: String,
}

/// A player's report of a chat message or of a player, as operators see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Report {
    /// Its number: later reports have larger ones.
    pub id: u64,
    /// When it was made (Unix ms).
    pub made_at: u64,
    /// Who made it (with the name they had then).
    pub reporter: AccountRef,
    /// The table.
    pub table: Uuid,
    /// The chat message reported (its `id` at the table); absent: a
    /// player was reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<u64>,
    /// The seat of the player reported, or of the message's writer;
    /// absent: a spectator's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seat: Option<crate::Seat>,
    /// The account reported; absent: a player without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<Uuid>,
    /// The name the reported player had at the table.
    pub name: String,
    /// Why.
    pub reason: ReportReason,
    /// What happened, in the reporter's words (may be empty).
    pub text: String,
    /// The table when the report was made.
    pub context: ReportContext,
    /// How an operator dealt with it; absent: still open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<Resolution>,
}

/// `POST /api/v1/admin/tables/{table}/close`: why a table is closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseTable {
    /// Why (1 to 500 characters, as for a sanction); the table's players
    /// and spectators are shown it.
    #[schema(min_length = 1, max_length = 500)]
    pub reason: String,
}

/// What a player is told of the report they made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReportReceipt {
    /// The report's number.
    pub id: u64,
    /// When it was made (Unix ms).
    pub made_at: u64,
    /// Why.
    pub reason: ReportReason,
}

/// `POST /api/v1/admin/reports/{report}/resolve`: what was done and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveReport {
    /// What was done and why (1 to 500 characters, as for a sanction).
    #[schema(min_length = 1, max_length = 500)]
    pub reason: String,
}

/// A player whose chat the signed-in account does not want to read
/// (`/api/v1/me/blocks`): its clients hide the `chat` frames that carry
/// this `account`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ChatBlock {
    /// The account blocked.
    pub account: Uuid,
    /// Its display name now.
    pub name: String,
    /// When it was blocked (Unix ms).
    pub at: u64,
}

/// What stops the signed-in player now, as `GET /api/v1/me` tells them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Restriction {
    /// What it stops.
    pub kind: SanctionKind,
    /// Why.
    pub reason: String,
    /// When it ends by itself (Unix ms); absent: when lifted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<u64>,
}

/// A whole number of JSON, written as an integer or as a number with no
/// fraction (`60`, `60.0`, `6e1`), as JSON Schema's `integer` allows.
mod whole {
    use serde::{Deserialize, Deserializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Number {
        Int(u64),
        Float(f64),
    }

    fn of<E: serde::de::Error>(n: Number) -> Result<u64, E> {
        match n {
            Number::Int(n) => Ok(n),
            // Exact: a whole float below 2^53 is its integer.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Number::Float(f) if f.fract() == 0.0 && (0.0..9.0e15).contains(&f) => Ok(f as u64),
            Number::Float(_) => Err(E::custom("expected a whole number of seconds")),
        }
    }

    pub(super) fn one<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        of(Number::deserialize(d)?)
    }

    /// Absent or `null`: `None`.
    pub(super) fn maybe<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        Option::<Number>::deserialize(d)?.map(of).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sanction_reads_whole_numbers_in_any_form_and_nothing_else() {
        for seconds in ["60", "60.0", "6e1"] {
            let body = format!(r#"{{"kind": "suspend", "reason": "x", "seconds": {seconds}}}"#);
            let read: NewSanction = serde_json::from_str(&body).unwrap();
            assert_eq!(read.seconds(), Some(60), "{body}");
        }
        for bad in [
            r#"{"kind": "suspend", "reason": "x", "seconds": 1.5}"#,
            r#"{"kind": "suspend", "reason": "x", "seconds": -1}"#,
            r#"{"kind": "suspend", "reason": "x"}"#,
            r#"{"kind": "ban", "reason": "x", "seconds": 60}"#,
            r#"{"kind": "mute", "reason": "x", "extra": 1}"#,
        ] {
            assert!(serde_json::from_str::<NewSanction>(bad).is_err(), "{bad}");
        }
        for body in
            [r#"{"kind": "mute", "reason": "x"}"#, r#"{"kind": "mute", "reason": "x", "seconds": null}"#]
        {
            let mute: NewSanction = serde_json::from_str(body).unwrap();
            assert_eq!((mute.kind(), mute.seconds()), (SanctionKind::Mute, None));
        }
    }
}
