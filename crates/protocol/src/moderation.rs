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

/// `POST /api/v1/admin/accounts/{account}/sanctions`: a new sanction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSanction {
    /// What it stops.
    pub kind: SanctionKind,
    /// Why, in words the player is shown (1 to 500 characters).
    #[schema(min_length = 1, max_length = 500)]
    pub reason: String,
    /// When it ends by itself (Unix ms, in the future): needed for a
    /// suspension, refused for a ban, optional for a mute (absent: until
    /// lifted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<u64>,
}

/// `POST /api/v1/admin/sanctions/{sanction}/lift`: why a sanction is
/// lifted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LiftSanction {
    /// Why (1 to 500 characters).
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
    /// Why (1 to 500 characters).
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
}

impl AuditAction {
    /// Every action.
    pub const ALL: [AuditAction; 6] = [
        AuditAction::GrantOperator,
        AuditAction::RevokeOperator,
        AuditAction::Suspend,
        AuditAction::Ban,
        AuditAction::Mute,
        AuditAction::Lift,
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
