//! Accounts and sessions: a guest account made from a device secret, its
//! display name (unique on the server, compared as [`name_skeleton`]s), its
//! sessions (32 random bytes the client holds, kept as a hash, renewed on
//! use), and the open connections of each session, closed when it is
//! signed out or runs out.
//!
//! The store is [`AccountStore`]; this service holds the rules (names,
//! renames, expiry) and the registry of live sessions (`watch`, `end`).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use dashmap::DashMap;
use spades_protocol::{Account, AccountKind, ErrorCode, SessionInfo};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};
use uuid::Uuid;

use crate::config::AccountsConfig;
use crate::error::AppError;
use crate::storage::{
    AccountRow, AccountStore, Created, NameHolder, NewGuest, Removal, Rename, Renamed, SessionRow,
    SessionsOf, Way,
};
use crate::text::{NAME_SKELETON_RULE, PLAYER_NAME_MAX, clean_name, name_key, name_skeleton};
use crate::time::now_ms;
use crate::token::{TokenHash, new_token};

/// A session's use is written at most this often (its last use and expiry).
const TOUCH_EVERY_MS: u64 = 60_000;

/// The longest `User-Agent` kept with a session, in characters.
const CLIENT_MAX: usize = 120;

/// The longest label of a session made for another client.
pub const SESSION_LABEL_MAX: usize = 40;

/// A request's signed-in account and session, found once per request or
/// connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// The account.
    pub account: AccountRow,
    /// The session.
    pub session: SessionRow,
}

/// A new session's token, shown to its client once. `Debug` hides it.
pub struct SessionToken(pub String);

impl std::fmt::Debug for SessionToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionToken(<secret>)")
    }
}

/// Who asks for a session: the client's `User-Agent` and address.
#[derive(Debug, Clone)]
pub struct Requester {
    /// The `User-Agent` (shortened to [`CLIENT_MAX`] characters, control
    /// characters dropped).
    pub client: String,
    /// The client's address.
    pub address: IpAddr,
}

impl Requester {
    /// `user_agent` made fit to keep and show.
    pub fn new(user_agent: Option<&str>, address: IpAddr) -> Requester {
        let client: String =
            user_agent.unwrap_or("").chars().filter(|c| !c.is_control()).take(CLIENT_MAX).collect();
        let client = client.trim();
        Requester { client: if client.is_empty() { "unknown".into() } else { client.into() }, address }
    }
}

/// A device secret as sent: checked for its form, then only hashed.
/// `Debug` hides it.
pub struct DeviceSecret(String);

impl std::fmt::Debug for DeviceSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeviceSecret(<secret>)")
    }
}

impl DeviceSecret {
    /// A secret of 32 to 128 characters of `A-Z a-z 0-9 - _`.
    ///
    /// # Errors
    /// `bad_message` (400) for any other.
    pub fn new(raw: String) -> Result<DeviceSecret, AppError> {
        let ok = (32..=128).contains(&raw.len())
            && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if ok {
            Ok(DeviceSecret(raw))
        } else {
            Err(AppError::new(
                ErrorCode::BadMessage,
                "device_secret must be 32 to 128 characters of A-Z, a-z, 0-9, - and _ (say 32 random bytes in base64url)",
            ))
        }
    }

    fn hash(&self) -> String {
        TokenHash::of(&self.0).to_hex()
    }
}

/// Tells the other nodes of a cluster that sessions ended, so that they
/// close their connections of them ([`Accounts::end`] there). The cluster
/// implements it; a single server has none.
pub trait Announce: Send + Sync + std::fmt::Debug {
    /// `sessions` were signed out.
    fn sessions_ended(&self, sessions: &[Uuid]);
}

/// The service (one per server).
#[derive(Debug)]
pub struct Accounts {
    store: AccountStore,
    config: AccountsConfig,
    /// The open connections of each session, by session id: cancelled when
    /// the session ends.
    live: DashMap<Uuid, Live>,
    /// The other nodes, in cluster mode.
    announce: std::sync::OnceLock<Arc<dyn Announce>>,
}

#[derive(Debug)]
struct Live {
    ended: CancellationToken,
    watchers: usize,
}

/// A connection's hold on its session: [`SessionWatch::ended`] is
/// cancelled when the session is signed out (or, [`Accounts::end`], ended
/// elsewhere) or runs out. One token for the connection to wait on, so a
/// frame costs it no more than the shutdown signal does.
#[derive(Debug)]
pub struct SessionWatch {
    accounts: Arc<Accounts>,
    session: Uuid,
    ended: CancellationToken,
    /// Cancels `ended` when the session runs out; stopped with the watch.
    expiry: tokio::task::AbortHandle,
}

impl SessionWatch {
    /// Cancelled when the session ends.
    pub fn ended(&self) -> &CancellationToken {
        &self.ended
    }
}

impl Drop for SessionWatch {
    fn drop(&mut self) {
        self.expiry.abort();
        self.accounts.live.remove_if_mut(&self.session, |_, live| {
            live.watchers -= 1;
            live.watchers == 0
        });
    }
}

fn storage(e: &crate::storage::StorageError) -> AppError {
    AppError::store_failed("accounts", e)
}

fn unauthorized(message: &str) -> AppError {
    AppError::new(ErrorCode::Unauthorized, message)
}

/// Whole days from `now_ms` to `until_ms`, rounded up (at least 1).
fn days_until(until_ms: u64, now_ms: u64) -> u64 {
    until_ms.saturating_sub(now_ms).div_ceil(86_400_000).max(1)
}

/// A duration in plain words: "5 hours", "1 minute".
fn plain_wait(ms: u64) -> String {
    let (seconds, minutes, hours) = (ms.div_ceil(1000).max(1), ms.div_ceil(60_000), ms.div_ceil(3_600_000));
    let (n, unit) = if seconds < 60 {
        (seconds, "second")
    } else if minutes < 60 {
        (minutes, "minute")
    } else if hours < 48 {
        (hours, "hour")
    } else {
        (ms.div_ceil(86_400_000), "day")
    };
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

impl Accounts {
    /// The service on `store`.
    pub fn new(store: AccountStore, config: AccountsConfig) -> Accounts {
        Accounts { store, config, live: DashMap::new(), announce: std::sync::OnceLock::new() }
    }

    /// Cluster mode: sessions signed out here are announced to the other
    /// nodes through `announce` (set once).
    pub fn announce_with(&self, announce: Arc<dyn Announce>) {
        let _ = self.announce.set(announce);
    }

    fn ttl_ms(&self) -> u64 {
        self.config.session_secs.saturating_mul(1000)
    }

    /// The account as its owner sees it.
    pub fn account_view(&self, a: &AccountRow) -> Account {
        let interval = self.config.rename_interval_secs.saturating_mul(1000);
        let rename_after = a.renamed_at_ms.map(|t| t.saturating_add(interval)).filter(|&t| t > now_ms());
        Account { id: a.id, name: a.name.clone(), kind: a.kind, created_at: a.created_at_ms, rename_after }
    }

    /// A session as its owner sees it.
    pub fn session_view(s: &SessionRow, current: Uuid) -> SessionInfo {
        SessionInfo {
            id: s.id,
            client: s.client.clone(),
            address: s.address.clone(),
            created_at: s.created_at_ms,
            last_used_at: s.last_used_at_ms,
            expires_at: s.expires_at_ms,
            current: s.id == current,
        }
    }

    /// A display name cleaned, or refused (`invalid_name`), with its
    /// skeleton.
    fn checked_name(raw: &str) -> Result<(String, String), AppError> {
        let name = clean_name(raw, PLAYER_NAME_MAX).ok_or_else(|| {
            AppError::new(
                ErrorCode::InvalidName,
                format!(
                    "a name must be 1 to {PLAYER_NAME_MAX} characters, without control or invisible characters"
                ),
            )
        })?;
        let skeleton = name_skeleton(&name);
        if skeleton.is_empty() {
            return Err(AppError::new(ErrorCode::InvalidName, "a name needs at least one visible character"));
        }
        Ok((name, skeleton))
    }

    /// The refusal of `wanted` because of `holder`, in plain words.
    fn taken(wanted: &str, holder: &NameHolder) -> AppError {
        let message = if let Some(until) = holder.kept_until_ms {
            let days = days_until(until, now_ms());
            let s = if days == 1 { "" } else { "s" };
            if name_key(wanted) == name_key(&holder.name) {
                format!(
                    "\u{201c}{wanted}\u{201d} was another player's name until recently: it is kept for them for {days} more day{s}"
                )
            } else {
                format!(
                    "\u{201c}{wanted}\u{201d} looks like \u{201c}{}\u{201d}, another player's name until recently: it is kept for them for {days} more day{s}",
                    holder.name
                )
            }
        } else if name_key(wanted) == name_key(&holder.name) {
            format!("\u{201c}{wanted}\u{201d} is taken: choose another name")
        } else {
            format!(
                "\u{201c}{wanted}\u{201d} looks like \u{201c}{}\u{201d}, which is taken: choose another name",
                holder.name
            )
        };
        AppError::new(ErrorCode::NameTaken, message)
    }

    /// Signs a device in: its account's new session, the account made on
    /// first use (named `name`, or a generated name) when `may_create`
    /// allows. Returns the session, its token and whether the account is
    /// new.
    ///
    /// # Errors
    /// A refused name (`invalid_name`, `name_taken`), the address's account
    /// limit (`rate_limited`), or storage.
    pub async fn guest(
        &self,
        secret: &DeviceSecret,
        name: Option<&str>,
        who: &Requester,
        may_create: impl FnOnce() -> Result<(), Duration>,
    ) -> Result<(SignedIn, SessionToken, bool), AppError> {
        // A malformed name is refused whether or not the device has an
        // account: the request is checked before anything is read.
        let chosen = name.map(Self::checked_name).transpose()?;
        let device = secret.hash();
        let mut created = false;
        let account = match self.store.device_account(&device).await.map_err(|e| storage(&e))? {
            Some(account) => account,
            None => {
                if let Err(wait) = may_create() {
                    crate::metrics::rate_limited("accounts");
                    return Err(AppError::rate_limited(
                        "too many new accounts from your address: wait an hour, or sign in with a device that has one",
                        wait,
                    ));
                }
                let (name, skeleton) = match chosen {
                    Some(chosen) => chosen,
                    None => {
                        let name = self.suggest_name().await?;
                        let skeleton = name_skeleton(&name);
                        (name, skeleton)
                    }
                };
                let (id, now) = (Uuid::new_v4(), now_ms());
                let new =
                    NewGuest { id, name: &name, skeleton: &skeleton, device_hash: &device, now_ms: now };
                match self.store.create_guest(&new).await.map_err(|e| storage(&e))? {
                    Created::Made => {
                        created = true;
                        info!(account = %id, "guest account made");
                        AccountRow {
                            id,
                            name,
                            created_at_ms: now,
                            renamed_at_ms: None,
                            kind: AccountKind::Guest,
                        }
                    }
                    Created::NameTaken(holder) => return Err(Self::taken(&name, &holder)),
                    // Another request of this device made it meanwhile.
                    Created::DeviceKnown => self
                        .store
                        .device_account(&device)
                        .await
                        .map_err(|e| storage(&e))?
                        .ok_or_else(|| AppError::internal("the account could not be read back"))?,
                }
            }
        };
        let (signed_in, token) = self.new_session(account, who).await?;
        Ok((signed_in, token, created))
    }

    /// A new session of the signed-in account for another client (a
    /// terminal): labelled `client` (cleaned at the boundary; `None`: the
    /// default label) in the list of sessions, made from `address`. Its
    /// token is answered once.
    ///
    /// # Errors
    /// Storage.
    pub async fn issue_session(
        &self,
        who: &SignedIn,
        client: Option<String>,
        address: IpAddr,
    ) -> Result<(SessionRow, SessionToken), AppError> {
        let client = client.unwrap_or_else(|| "Token made in a browser".to_owned());
        let (signed_in, token) =
            self.new_session(who.account.clone(), &Requester { client, address }).await?;
        info!(account = %who.account.id, session = %signed_in.session.id, "session token made for another client");
        Ok((signed_in.session, token))
    }

    /// One account, by id.
    ///
    /// # Errors
    /// Storage.
    pub async fn account(&self, id: Uuid) -> Result<Option<AccountRow>, AppError> {
        self.store.account(id).await.map_err(|e| storage(&e))
    }

    /// A new session of `account` for the client `who`, and its token.
    ///
    /// # Errors
    /// Storage.
    pub async fn new_session(
        &self,
        account: AccountRow,
        who: &Requester,
    ) -> Result<(SignedIn, SessionToken), AppError> {
        let (token, hash) = new_token().map_err(|_| AppError::internal("no random token could be made"))?;
        let now = now_ms();
        let session = SessionRow {
            id: Uuid::new_v4(),
            account: account.id,
            client: who.client.clone(),
            address: who.address.to_string(),
            created_at_ms: now,
            last_used_at_ms: now,
            expires_at_ms: now.saturating_add(self.ttl_ms()),
        };
        self.store.insert_session(&session, &hash.to_hex()).await.map_err(|e| storage(&e))?;
        Ok((SignedIn { account, session }, SessionToken(token)))
    }

    /// The session of `token` (64 hex digits), renewed: its last use and
    /// expiry move on, written at most once a minute.
    ///
    /// # Errors
    /// `unauthorized` (401) for a token of no session, or of one that has
    /// expired; storage.
    pub async fn authenticate(&self, token: &str) -> Result<SignedIn, AppError> {
        let well_formed = token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit());
        if !well_formed {
            return Err(unauthorized("the session token is not one this server made: sign in again"));
        }
        let hash = TokenHash::of(&token.to_ascii_lowercase()).to_hex();
        let Some((mut session, account)) = self.store.session(&hash).await.map_err(|e| storage(&e))? else {
            return Err(unauthorized("this session was signed out or has expired: sign in again"));
        };
        let now = now_ms();
        if session.expires_at_ms <= now {
            return Err(unauthorized("this session was signed out or has expired: sign in again"));
        }
        if now.saturating_sub(session.last_used_at_ms) >= TOUCH_EVERY_MS {
            let expires = now.saturating_add(self.ttl_ms());
            // A failed renewal does not refuse the request: the session
            // is valid, its expiry moves on at its next use.
            match self.store.touch(session.id, now, expires).await {
                Ok(()) => {
                    session.last_used_at_ms = now;
                    session.expires_at_ms = expires;
                }
                Err(e) => warn!(error = %e, "a session's use could not be recorded"),
            }
        }
        Ok(SignedIn { account, session })
    }

    /// Renames the signed-in account.
    ///
    /// # Errors
    /// A refused name (`invalid_name`, `name_taken`), a rename too soon
    /// after the last (`rate_limited`), storage.
    pub async fn rename(&self, who: &SignedIn, raw: &str) -> Result<AccountRow, AppError> {
        let (name, skeleton) = Self::checked_name(raw)?;
        let now = now_ms();
        let interval = self.config.rename_interval_secs.saturating_mul(1000);
        let too_soon = |renamed_at: u64| {
            let wait = renamed_at.saturating_add(interval).saturating_sub(now);
            AppError::rate_limited(
                format!(
                    "a name may be changed once every {}: try again in {}",
                    plain_wait(interval),
                    plain_wait(wait)
                ),
                Duration::from_millis(wait),
            )
        };
        if let Some(at) = who.account.renamed_at_ms
            && now < at.saturating_add(interval)
        {
            return Err(too_soon(at));
        }
        let rename = Rename {
            account: who.account.id,
            name: &name,
            skeleton: &skeleton,
            old_skeleton: &name_skeleton(&who.account.name),
            now_ms: now,
            not_since_ms: now.saturating_sub(interval),
            keep_until_ms: now.saturating_add(self.config.name_kept_secs.saturating_mul(1000)),
        };
        match self.store.rename(&rename).await.map_err(|e| storage(&e))? {
            Renamed::Done(account) => Ok(account),
            Renamed::NameTaken(holder) => Err(Self::taken(&name, &holder)),
            Renamed::TooSoon => Err(too_soon(now)),
            Renamed::Missing => Err(unauthorized("this account no longer exists")),
        }
    }

    /// The account's sessions that have not expired.
    ///
    /// # Errors
    /// Storage.
    pub async fn sessions(&self, who: &SignedIn) -> Result<Vec<SessionRow>, AppError> {
        self.sessions_of(who.account.id).await
    }

    /// The sessions of any account that have not expired (an operator's
    /// view).
    ///
    /// # Errors
    /// Storage.
    pub async fn sessions_of(&self, account: Uuid) -> Result<Vec<SessionRow>, AppError> {
        self.store.sessions(account, now_ms()).await.map_err(|e| storage(&e))
    }

    /// Signs out one of the account's sessions (`Some`), or all (`None`),
    /// and closes their connections on this node and (announced) on every
    /// other node of a cluster. Returns the sessions ended.
    ///
    /// # Errors
    /// Storage.
    pub async fn sign_out(&self, who: &SignedIn, only: Option<Uuid>) -> Result<Vec<Uuid>, AppError> {
        self.end_sessions(who.account.id, only.map_or(SessionsOf::All, SessionsOf::One)).await
    }

    /// Signs out every session of the account but the request's own (as
    /// [`Accounts::sign_out`] does): after a password change.
    ///
    /// # Errors
    /// Storage.
    pub async fn sign_out_others(&self, who: &SignedIn) -> Result<Vec<Uuid>, AppError> {
        self.end_sessions(who.account.id, SessionsOf::AllBut(who.session.id)).await
    }

    async fn end_sessions(&self, account: Uuid, which: SessionsOf) -> Result<Vec<Uuid>, AppError> {
        let ended = self.store.delete_sessions(account, which).await.map_err(|e| storage(&e))?;
        for id in &ended {
            self.end(*id);
        }
        if let Some(announce) = self.announce.get()
            && !ended.is_empty()
        {
            announce.sessions_ended(&ended);
        }
        Ok(ended)
    }

    /// Removes `way` from `account` unless it is the last way in (the
    /// password counts when `passwords` are on), decided in the removal's
    /// transaction.
    ///
    /// # Errors
    /// Storage.
    pub async fn remove_way(
        &self,
        account: Uuid,
        way: Way<'_>,
        passwords: bool,
    ) -> Result<Removal, AppError> {
        self.store.remove_way(account, way, passwords).await.map_err(|e| storage(&e))
    }

    /// When each of the account's devices was added (Unix ms).
    ///
    /// # Errors
    /// Storage.
    pub async fn devices(&self, account: Uuid) -> Result<Vec<u64>, AppError> {
        self.store.devices(account).await.map_err(|e| storage(&e))
    }

    /// A display name for an account a provider makes: `wanted` (the
    /// name the provider gave) when it is a valid name nobody holds, else
    /// a generated one; with its skeleton.
    ///
    /// # Errors
    /// Storage.
    pub async fn offered_name(&self, wanted: Option<&str>) -> Result<(String, String), AppError> {
        if let Some((name, skeleton)) = wanted.and_then(|w| Self::checked_name(w).ok())
            && self.store.name_holder(&skeleton, now_ms()).await.map_err(|e| storage(&e))?.is_none()
        {
            return Ok((name, skeleton));
        }
        let name = self.suggest_name().await?;
        let skeleton = name_skeleton(&name);
        Ok((name, skeleton))
    }

    /// The account that goes by `name` now (compared as names are: case
    /// and look-alikes aside), and the name's skeleton. A name given up
    /// and kept is nobody's here.
    ///
    /// # Errors
    /// Storage.
    pub async fn named(&self, name: &str) -> Result<(Option<AccountRow>, String), AppError> {
        let skeleton = name_skeleton(name.trim());
        if skeleton.is_empty() {
            return Ok((None, skeleton));
        }
        let holder = self.store.name_holder(&skeleton, now_ms()).await.map_err(|e| storage(&e))?;
        let Some(holder) = holder.filter(|h| h.kept_until_ms.is_none()) else {
            return Ok((None, skeleton));
        };
        Ok((self.account(holder.account).await?, skeleton))
    }

    /// Closes the connections of a session that ended.
    pub fn end(&self, session: Uuid) {
        if let Some((_, live)) = self.live.remove(&session) {
            live.ended.cancel();
        }
    }

    /// A connection's hold on its session, which runs out at
    /// `expires_at_ms` (see [`SessionWatch`]).
    pub fn watch(self: &Arc<Self>, session: Uuid, expires_at_ms: u64) -> SessionWatch {
        let mut live =
            self.live.entry(session).or_insert_with(|| Live { ended: CancellationToken::new(), watchers: 0 });
        live.watchers += 1;
        let ended = live.ended.child_token();
        drop(live);
        let left = Duration::from_millis(expires_at_ms.saturating_sub(now_ms()));
        let runs_out = ended.clone();
        let expiry = tokio::spawn(async move {
            tokio::time::sleep(left).await;
            runs_out.cancel();
        })
        .abort_handle();
        SessionWatch { accounts: Arc::clone(self), session, ended, expiry }
    }

    /// A generated name nobody holds now: "Brave Otter 27".
    ///
    /// # Errors
    /// Storage, or no free name found in a few tries.
    pub async fn suggest_name(&self) -> Result<String, AppError> {
        for _ in 0..8 {
            let name = generated_name().map_err(|_| AppError::internal("no random name could be made"))?;
            let free =
                self.store.name_holder(&name_skeleton(&name), now_ms()).await.map_err(|e| storage(&e))?;
            if free.is_none() {
                return Ok(name);
            }
        }
        Err(AppError::internal("no free name was found: try again"))
    }

    /// Makes the stored name skeletons of an older rule again under the
    /// current one ([`NAME_SKELETON_RULE`]); run once at start-up, before
    /// the first sweep. Failing, the rows stay for the next start.
    pub async fn rekey_names(&self) {
        match self.store.rekey_names(NAME_SKELETON_RULE, &name_skeleton).await {
            Ok((0, 0)) => {}
            Ok((moved, clashed)) => {
                info!(moved, clashed, "names re-keyed under the current look-alike rule");
                if clashed > 0 {
                    warn!(clashed, "names that now look like another account's keep their older key");
                }
            }
            Err(e) => warn!(error = %e, "names of an older look-alike rule could not be re-keyed"),
        }
    }

    /// Forgets expired sessions and names no longer kept.
    pub async fn sweep(&self) {
        if let Err(e) = self.store.sweep(now_ms()).await {
            warn!(error = %e, "expired sessions could not be forgotten");
        }
    }
}

const ADJECTIVES: [&str; 32] = [
    "Brave", "Bright", "Calm", "Clever", "Swift", "Merry", "Lucky", "Bold", "Quiet", "Jolly", "Keen",
    "Witty", "Gentle", "Sunny", "Nimble", "Proud", "Eager", "Happy", "Steady", "Daring", "Plucky", "Wise",
    "Cheery", "Lively", "Noble", "Quick", "Sly", "Snappy", "Spry", "Zesty", "Breezy", "Dapper",
];

const ANIMALS: [&str; 32] = [
    "Otter", "Heron", "Badger", "Falcon", "Fox", "Hare", "Lynx", "Owl", "Panda", "Raven", "Seal", "Tiger",
    "Wren", "Yak", "Bison", "Crane", "Dingo", "Eagle", "Gecko", "Ibis", "Koala", "Lemur", "Moose", "Newt",
    "Orca", "Puffin", "Quail", "Robin", "Stoat", "Tapir", "Walrus", "Zebra",
];

/// "Adjective Animal NN", at random (32 × 32 × 90 names).
fn generated_name() -> Result<String, getrandom::Error> {
    let mut b = [0u8; 3];
    getrandom::fill(&mut b)?;
    let adjective = ADJECTIVES[usize::from(b[0]) % ADJECTIVES.len()];
    let animal = ANIMALS[usize::from(b[1]) % ANIMALS.len()];
    Ok(format!("{adjective} {animal} {}", 10 + u16::from(b[2]) % 90))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Arc<Accounts> {
        let config = AccountsConfig { rename_interval_secs: 0, ..AccountsConfig::default() };
        Arc::new(Accounts::new(AccountStore::memory(), config))
    }

    fn secret(n: u8) -> DeviceSecret {
        DeviceSecret::new(format!("{n:02}{}", "a".repeat(40))).unwrap()
    }

    fn me() -> Requester {
        Requester::new(Some("test\u{7} client"), IpAddr::from([127, 0, 0, 1]))
    }

    #[test]
    fn secrets_never_show_in_debug() {
        let s = DeviceSecret::new("Zq".repeat(20)).unwrap();
        assert!(!format!("{s:?}").contains("ZqZq"));
        let t = SessionToken("f00d".repeat(16));
        assert!(!format!("{t:?}").contains("f00d"));
        for bad in ["short", &"a".repeat(129), &format!("{}!", "a".repeat(40))] {
            assert_eq!(DeviceSecret::new(bad.to_owned()).unwrap_err().code, ErrorCode::BadMessage);
        }
        assert_eq!(me().client, "test client");
        assert_eq!(Requester::new(None, IpAddr::from([127, 0, 0, 1])).client, "unknown");
    }

    #[tokio::test]
    async fn a_device_keeps_its_account_and_names_are_unique() {
        let accounts = store();
        let (ann, token, created) =
            accounts.guest(&secret(1), Some(" Ann "), &me(), || Ok(())).await.unwrap();
        assert!(created);
        assert_eq!(ann.account.name, "Ann");
        // The same device again: the same account, a new session; the name
        // sent is ignored and the limit not asked.
        let (again, token2, created) =
            accounts.guest(&secret(1), Some("Other"), &me(), || Err(Duration::from_secs(9))).await.unwrap();
        assert!(!created);
        assert_eq!(again.account.id, ann.account.id);
        assert_ne!(again.session.id, ann.session.id);
        assert_ne!(token.0, token2.0);
        assert_eq!(accounts.authenticate(&token.0).await.unwrap().account.id, ann.account.id);
        assert_eq!(accounts.authenticate(&token.0.to_uppercase()).await.unwrap().session.id, ann.session.id);
        for (name, says) in [
            ("ann", "\u{201c}ann\u{201d} is taken: choose another name"),
            (
                "\u{0410}nn",
                "\u{201c}\u{0410}nn\u{201d} looks like \u{201c}Ann\u{201d}, which is taken: choose another name",
            ),
        ] {
            let e = accounts.guest(&secret(2), Some(name), &me(), || Ok(())).await.unwrap_err();
            assert_eq!((e.code, e.message.as_str()), (ErrorCode::NameTaken, says));
        }
        // Over the address's limit: refused before anything is made.
        let e =
            accounts.guest(&secret(2), Some("Bo"), &me(), || Err(Duration::from_secs(60))).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::RateLimited);
        let (bo, _, _) = accounts.guest(&secret(2), None, &me(), || Ok(())).await.unwrap();
        assert_ne!(bo.account.name, "Ann");
        assert!(bo.account.name.split(' ').count() == 3, "{}", bo.account.name);
    }

    #[tokio::test]
    async fn a_rename_keeps_the_old_name_for_its_account() {
        let accounts = store();
        let (ann, _, _) = accounts.guest(&secret(1), Some("Ann"), &me(), || Ok(())).await.unwrap();
        let (bo, _, _) = accounts.guest(&secret(2), Some("Bo"), &me(), || Ok(())).await.unwrap();
        let renamed = accounts.rename(&ann, "Annie").await.unwrap();
        assert_eq!(renamed.name, "Annie");
        let e = accounts.rename(&bo, "ANN").await.unwrap_err();
        assert_eq!(e.code, ErrorCode::NameTaken);
        assert!(e.message.contains("kept for them for 30 more days"), "{}", e.message);
        // Its old owner may take it back; then "Annie" is kept for it.
        let ann = SignedIn { account: renamed, session: ann.session };
        let back = accounts.rename(&ann, "ann").await.unwrap();
        assert_eq!(back.name, "ann");
        let e = accounts.rename(&bo, "Annie").await.unwrap_err();
        assert_eq!(e.code, ErrorCode::NameTaken);
        // A change of case only keeps nothing.
        let ann = SignedIn { account: back, session: ann.session };
        assert_eq!(accounts.rename(&ann, "Ann").await.unwrap().name, "Ann");
        let e = accounts.rename(&bo, "  ").await.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidName);
    }

    #[tokio::test]
    async fn renames_wait_their_interval() {
        let config = AccountsConfig { rename_interval_secs: 3600, ..AccountsConfig::default() };
        let accounts = Arc::new(Accounts::new(AccountStore::memory(), config));
        let (ann, _, _) = accounts.guest(&secret(1), Some("Ann"), &me(), || Ok(())).await.unwrap();
        let renamed = accounts.rename(&ann, "Annie").await.unwrap();
        let ann = SignedIn { account: renamed, session: ann.session };
        let e = accounts.rename(&ann, "Anna").await.unwrap_err();
        assert_eq!(e.code, ErrorCode::RateLimited);
        assert_eq!(e.message, "a name may be changed once every 1 hour: try again in 1 hour");
        assert!(accounts.account_view(&ann.account).rename_after.is_some());
        // The stale row (as a second tab would hold it) is refused by the
        // store's own check.
        let stale = SignedIn { account: AccountRow { renamed_at_ms: None, ..ann.account.clone() }, ..ann };
        assert_eq!(accounts.rename(&stale, "Anna").await.unwrap_err().code, ErrorCode::RateLimited);
    }

    #[tokio::test]
    async fn signing_out_ends_sessions_and_their_connections() {
        let accounts = store();
        let (ann, token, _) = accounts.guest(&secret(1), Some("Ann"), &me(), || Ok(())).await.unwrap();
        let (other, token2, _) = accounts.guest(&secret(1), None, &me(), || Ok(())).await.unwrap();
        assert_eq!(accounts.sessions(&ann).await.unwrap().len(), 2);
        let watch = accounts.watch(ann.session.id, ann.session.expires_at_ms);
        let watch2 = accounts.watch(other.session.id, other.session.expires_at_ms);
        assert_eq!(accounts.sign_out(&ann, Some(ann.session.id)).await.unwrap(), vec![ann.session.id]);
        tokio::time::timeout(Duration::from_secs(1), watch.ended().cancelled()).await.unwrap();
        assert_eq!(accounts.authenticate(&token.0).await.unwrap_err().code, ErrorCode::Unauthorized);
        assert!(accounts.authenticate(&token2.0).await.is_ok());
        // Another account's session is not this one's to end.
        let (bo, _, _) = accounts.guest(&secret(2), Some("Bo"), &me(), || Ok(())).await.unwrap();
        assert!(accounts.sign_out(&bo, Some(other.session.id)).await.unwrap().is_empty());
        assert_eq!(accounts.sign_out(&other, None).await.unwrap(), vec![other.session.id]);
        tokio::time::timeout(Duration::from_secs(1), watch2.ended().cancelled()).await.unwrap();
        // A session that runs out ends its watch by itself.
        let brief = accounts.watch(Uuid::new_v4(), now_ms() + 50);
        tokio::time::timeout(Duration::from_secs(1), brief.ended().cancelled()).await.unwrap();
        drop(brief);
        drop((watch, watch2));
        assert!(accounts.live.is_empty());
        assert_eq!(accounts.authenticate("xyz").await.unwrap_err().code, ErrorCode::Unauthorized);
    }

    #[test]
    fn waits_in_plain_words() {
        assert_eq!(plain_wait(500), "1 second");
        assert_eq!(plain_wait(90_000), "2 minutes");
        assert_eq!(plain_wait(3_599_000), "1 hour");
        assert_eq!(plain_wait(86_400_000), "24 hours");
        assert_eq!(plain_wait(30 * 86_400_000), "30 days");
        assert_eq!(days_until(1, 0), 1);
    }
}
