//! The REST messages of accounts and sessions (`/api/v1/accounts/…`,
//! `/api/v1/me…`, `/api/v1/names/…`). Every player is an account: a guest
//! first, made from a random device secret the client keeps.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// `POST /api/v1/accounts/guest`: a device's secret exchanged for a
/// session of its account, made on first use. `Debug` never shows the
/// secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GuestSignIn {
    /// The device's secret: 32 to 128 characters of `A-Z a-z 0-9 - _`,
    /// made at random by the client (32 random bytes, base64url) and kept
    /// (a browser's localStorage, a file of mode 0600). The server keeps
    /// only its SHA-256.
    #[schema(min_length = 32, max_length = 128, pattern = "^[A-Za-z0-9_-]{32,128}$")]
    pub device_secret: String,
    /// The display name of a new account (1 to 24 characters, unique on
    /// the server); absent: a generated one. A malformed name is refused
    /// (`invalid_name`) in any case; a well-formed one is ignored when the
    /// device already has an account (so a retried request is harmless):
    /// rename with `PATCH /api/v1/me`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Where the session's token goes: `cookie` (an HttpOnly cookie,
    /// nothing in the body; browsers) or `bearer` (in the body as `token`,
    /// sent back as `Authorization: Bearer`; native clients).
    #[serde(default)]
    pub session: SessionDelivery,
}

impl std::fmt::Debug for GuestSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuestSignIn")
            .field("device_secret", &"<secret>")
            .field("name", &self.name)
            .field("session", &self.session)
            .finish()
    }
}

/// Where a new session's token goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionDelivery {
    /// A `spades_session` cookie: HttpOnly, SameSite=Lax, Secure behind a
    /// TLS proxy; the body holds no token.
    #[default]
    Cookie,
    /// The body's `token`, for `Authorization: Bearer`.
    Bearer,
}

/// What kind of account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AccountKind {
    /// Made from a device secret: it lives as long as a device keeps it
    /// (or a passkey, a password or an identity it was given).
    Guest,
    /// Made by its first sign-in with an OpenID Connect identity: it has
    /// no device secret.
    Member,
}

/// An account as its owner sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Account {
    /// Its id.
    pub id: Uuid,
    /// The display name.
    pub name: String,
    /// What kind.
    pub kind: AccountKind,
    /// Made, Unix ms.
    pub created_at: u64,
    /// The earliest time of the next rename, Unix ms; absent: now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rename_after: Option<u64>,
}

/// One session of an account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SessionInfo {
    /// Its id (not its token).
    pub id: Uuid,
    /// The client that signed in (its `User-Agent`, at most 120
    /// characters).
    pub client: String,
    /// The address it signed in from.
    pub address: String,
    /// Made, Unix ms.
    pub created_at: u64,
    /// Last used, Unix ms (kept to the minute).
    pub last_used_at: u64,
    /// Ends then unless used before (every use renews it), Unix ms.
    pub expires_at: u64,
    /// The session of this request.
    pub current: bool,
}

/// The answer of `POST /api/v1/accounts/guest`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SignedIn {
    /// The account.
    pub account: Account,
    /// The new session.
    pub session: SessionInfo,
    /// The session's token (64 hex digits), only when asked for as
    /// `bearer`; shown once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// True when this request made the account.
    pub created: bool,
}

impl std::fmt::Debug for SignedIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignedIn")
            .field("account", &self.account)
            .field("session", &self.session)
            .field("token", &self.token.as_ref().map(|_| "<secret>"))
            .field("created", &self.created)
            .finish()
    }
}

/// `GET /api/v1/me`: the signed-in account and this session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Me {
    /// The account.
    pub account: Account,
    /// This request's session.
    pub session: SessionInfo,
    /// Whether the account is an operator (the operator page at `/admin`
    /// is theirs).
    #[serde(default)]
    pub operator: bool,
    /// The sanctions that hold the account now (a suspension, a ban, a
    /// mute), with the reason the operator gave.
    #[serde(default)]
    pub restrictions: Vec<crate::Restriction>,
}

/// `PATCH /api/v1/me`: a new display name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameAccount {
    /// The new name (1 to 24 characters, unique on the server).
    pub name: String,
}

/// `POST /api/v1/me/sessions`: a new session of the signed-in account for
/// another client (a terminal, another machine), its token shown once.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSession {
    /// What the session is for, shown as its client in the list of
    /// sessions ("Terminal on my laptop"): 1 to 40 characters; absent:
    /// "Token made in a browser".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

/// The answer of `POST /api/v1/me/sessions`: the session and its token.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct IssuedSession {
    /// The new session.
    pub session: SessionInfo,
    /// Its token (64 hex digits), for `Authorization: Bearer`; shown once,
    /// never again.
    pub token: String,
}

impl std::fmt::Debug for IssuedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedSession").field("session", &self.session).field("token", &"<secret>").finish()
    }
}

/// The start of a passkey ceremony (`POST /api/v1/me/passkeys/options`,
/// `POST /api/v1/passkeys/options`): its id, to send back with the answer,
/// and the WebAuthn options for the browser.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct PasskeyOptions {
    /// The ceremony: valid for a few minutes, once.
    pub ceremony: Uuid,
    /// `{"publicKey": …}`: the options of `navigator.credentials.create()`
    /// (adding a passkey) or `navigator.credentials.get()` (signing in),
    /// binary fields in base64url (`PublicKeyCredential.parseCreationOptionsFromJSON`
    /// and `parseRequestOptionsFromJSON` take `publicKey` as it is).
    #[schema(value_type = Object)]
    pub options: serde_json::Value,
}

/// `POST /api/v1/me/passkeys`: the browser's answer to the ceremony, and
/// the passkey's name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddPasskey {
    /// The ceremony's id, from the options.
    pub ceremony: Uuid,
    /// What to call the passkey ("Phone"): 1 to 40 characters.
    pub name: String,
    /// The new credential as `PublicKeyCredential.toJSON()` gives it.
    #[schema(value_type = Object)]
    pub credential: serde_json::Value,
}

/// `POST /api/v1/passkeys/sign-in`: the browser's answer to the ceremony.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasskeySignIn {
    /// The ceremony's id, from the options.
    pub ceremony: Uuid,
    /// The assertion as `PublicKeyCredential.toJSON()` gives it.
    #[schema(value_type = Object)]
    pub credential: serde_json::Value,
    /// Where the session's token goes (default: the cookie).
    #[serde(default)]
    pub session: SessionDelivery,
}

/// A passkey of the signed-in account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PasskeyInfo {
    /// Its id (the credential id, hex).
    pub id: String,
    /// Its name.
    pub name: String,
    /// Added, Unix ms.
    pub created_at: u64,
    /// Last used to sign in, Unix ms; absent: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<u64>,
}

/// `PUT /api/v1/me/password`: a password for the signed-in account (when
/// the server has passwords switched on). `Debug` never shows them.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPassword {
    /// The new password: 8 to 128 characters, anything but the account's
    /// name (compared after NFKC, as typed on any keyboard).
    #[schema(min_length = 8, max_length = 128)]
    pub password: String,
    /// The account's password now: needed to change one, absent when the
    /// account has none yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_password: Option<String>,
}

impl std::fmt::Debug for SetPassword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SetPassword")
            .field("password", &"<secret>")
            .field("current_password", &self.current_password.as_ref().map(|_| "<secret>"))
            .finish()
    }
}

/// The answer of `PUT /api/v1/me/password`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct PasswordSet {
    /// True when the account had a password, which this one replaced.
    pub changed: bool,
    /// How many of the account's other sessions a change signed out
    /// (none when a first password was set).
    pub signed_out: u32,
}

/// `POST /api/v1/passwords/sign-in`: an account's name and password.
/// `Debug` never shows the password.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordSignIn {
    /// The account's display name (compared as names are: case and
    /// look-alikes do not matter).
    #[schema(max_length = 64)]
    pub name: String,
    /// Its password.
    #[schema(max_length = 128)]
    pub password: String,
    /// Where the session's token goes (default: the cookie).
    #[serde(default)]
    pub session: SessionDelivery,
}

impl std::fmt::Debug for PasswordSignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PasswordSignIn")
            .field("name", &self.name)
            .field("password", &"<secret>")
            .field("session", &self.session)
            .finish()
    }
}

/// `GET /api/v1/sign-in/methods`: how a player may sign in on this server,
/// besides a guest's device secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SignInMethods {
    /// Passkeys (always on).
    pub passkeys: bool,
    /// A name and a password (`accounts.passwords`).
    pub passwords: bool,
    /// The OpenID Connect providers (`oidc.providers`), in the order of
    /// their ids.
    #[serde(default)]
    pub providers: Vec<OidcProvider>,
}

/// An OpenID Connect provider players may sign in with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct OidcProvider {
    /// Its id: signing in starts at `GET /api/v1/oidc/<id>/start`.
    pub id: String,
    /// The words of its button ("Sign in with the Club").
    pub label: String,
    /// False while the server cannot reach it (it tries again every
    /// `oidc.retry_secs`): signing in with it is refused meanwhile.
    pub available: bool,
}

/// What kind of way into an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum IdentityKind {
    /// A device secret: the guest account's key, kept by the browser or
    /// program that made the account (or signed in with it).
    Device,
    /// The account's password.
    Password,
    /// A passkey.
    Passkey,
    /// An identity at an OpenID Connect provider (its issuer and subject).
    Oidc,
}

/// One way into the signed-in account (`GET /api/v1/me/identities`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct Identity {
    /// What kind.
    pub kind: IdentityKind,
    /// Its id where it can be removed by it (a passkey's id, an OpenID
    /// identity's); absent for a device and the password (there is one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What the player sees: the passkey's name, "Password", "Device
    /// secret", the provider's label and the name it gave.
    pub label: String,
    /// Added, Unix ms.
    pub created_at: u64,
    /// Last used to sign in, Unix ms; absent: never, or not kept (a
    /// device's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<u64>,
    /// An OpenID identity's provider (its id in `oidc.providers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
}

/// `GET /api/v1/names/suggestion`: a generated name nobody holds now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct NameSuggestion {
    /// The name.
    pub name: String,
}

/// A sanction on the player's own account, as their data export gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct OwnSanction {
    /// What it stops.
    pub kind: crate::SanctionKind,
    /// The reason the operator gave.
    pub reason: String,
    /// Made, Unix ms.
    pub made_at: u64,
    /// When it ended or ends by itself, Unix ms; absent: when lifted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<u64>,
    /// When an operator lifted it, Unix ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifted_at: Option<u64>,
}

/// `GET /api/v1/me/export`: everything the server keeps about the
/// signed-in account, without a secret (no device secret, session token,
/// password hash, passkey key or provider token is kept in a readable form,
/// and none is here).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct AccountExport {
    /// When the export was made, Unix ms.
    pub exported_at: u64,
    /// The account.
    pub account: Account,
    /// Whether it is an operator.
    pub operator: bool,
    /// Every way into it: devices, the password, passkeys, OpenID
    /// identities (when added and last used; never the secret).
    pub identities: Vec<Identity>,
    /// Its sessions that have not ended (client, address, times).
    pub sessions: Vec<SessionInfo>,
    /// Every match in which it held a seat (at most the 10,000 newest),
    /// the newest first; each match's whole record is at
    /// `GET /api/v1/matches/{table}`.
    pub matches: Vec<crate::MatchSummary>,
    /// The sanctions operators put on it, lifted and ended ones too.
    pub sanctions: Vec<OwnSanction>,
    /// What it said at the tables and is still kept (docs/moderation.md:
    /// `moderation.chat_days`; at most the 10,000 newest messages), the
    /// newest first.
    #[serde(default)]
    pub chat: Vec<crate::ChatLine>,
    /// The players whose chat it blocks.
    #[serde(default)]
    pub blocks: Vec<crate::ChatBlock>,
}
