//! Passkeys: a signed-in account keeps itself with WebAuthn credentials
//! (discoverable, so that signing in needs no name), and a passkey signs
//! its account in on any browser. The relying party is `webauthn-rs`; its
//! id and origin come from `server.public_url` (`localhost`, any port,
//! when it is not set). A ceremony's state stays on the server, in the
//! store (`storage::PasskeyStore`), for a few minutes and is used once, so
//! a ceremony begun on one node of a cluster finishes on another.
//! docs/accounts.md, "Passkeys".

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use spades_protocol::{ErrorCode, PasskeyInfo};
use tracing::{info, warn};
use url::Url;
use uuid::Uuid;
use webauthn_rs::prelude::{
    DiscoverableAuthentication, Passkey, PasskeyRegistration, PublicKeyCredential,
    RegisterPublicKeyCredential, Webauthn, WebauthnBuilder,
};

use crate::accounts::{Accounts, Requester, SessionToken, SignedIn};
use crate::config::ServerConfig;
use crate::error::AppError;
use crate::storage::{Ceremony, CeremonyKind, CeremonyStore, PasskeyRow, PasskeyStore};
use crate::time::now_ms;

/// How long a ceremony waits for its answer.
pub const CEREMONY_SECS: u64 = 300;

/// The longest name of a passkey.
pub const PASSKEY_NAME_MAX: usize = 40;

/// What any failed sign-in says: nothing about whether an account or a
/// passkey exists.
const SIGN_IN_REFUSED: &str = "that passkey could not sign you in: try again, or use another";

fn storage(e: &crate::storage::StorageError) -> AppError {
    AppError::store_failed("passkeys", e)
}

fn refused(message: impl Into<String>) -> AppError {
    AppError::new(ErrorCode::BadMessage, message)
}

/// The relying party of `server`: its id and origin from `public_url`, or
/// `localhost` on any port.
///
/// # Errors
/// A `public_url` that is not an `http(s)` URL of a domain name (a passkey
/// belongs to a domain, never to an IP address).
pub fn relying_party(server: &ServerConfig) -> Result<Webauthn, String> {
    let (id, origin, any_port) = if server.public_url.is_empty() {
        let origin = Url::parse("http://localhost").map_err(|e| e.to_string())?;
        ("localhost".to_owned(), origin, true)
    } else {
        let url = Url::parse(&server.public_url)
            .map_err(|e| format!("server.public_url {:?} is not a URL: {e}", server.public_url))?;
        let host = match url.host() {
            Some(url::Host::Domain(d)) if matches!(url.scheme(), "http" | "https") => d.to_owned(),
            _ => {
                return Err(format!(
                    "server.public_url {:?} must be http(s)://<a domain name>[:port] (passkeys belong to a \
                     domain, not an IP address)",
                    server.public_url
                ));
            }
        };
        (host, url, false)
    };
    WebauthnBuilder::new(&id, &origin)
        .map_err(|e| format!("server.public_url: no relying party for {origin}: {e}"))?
        .rp_name("Spades")
        .allow_any_port(any_port)
        .timeout(Duration::from_secs(CEREMONY_SECS))
        .build()
        .map_err(|e| format!("server.public_url: no relying party for {origin}: {e}"))
}

/// A passkey as its owner sees it.
fn info(r: &PasskeyRow) -> PasskeyInfo {
    PasskeyInfo {
        id: r.id.clone(),
        name: r.name.clone(),
        created_at: r.created_at_ms,
        last_used_at: r.last_used_at_ms,
    }
}

/// Passkeys: the relying party, the store, and the accounts they sign in.
pub struct Passkeys {
    rp: Webauthn,
    store: PasskeyStore,
    ceremonies: CeremonyStore,
    accounts: Arc<Accounts>,
}

impl std::fmt::Debug for Passkeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Passkeys").finish_non_exhaustive()
    }
}

fn to_json<T: serde::Serialize>(what: &str, v: &T) -> Result<String, AppError> {
    serde_json::to_string(v).map_err(|e| {
        warn!(error = %e, "{what} could not be written");
        AppError::internal("a passkey could not be written")
    })
}

fn to_value<T: serde::Serialize>(v: &T) -> Result<Value, AppError> {
    serde_json::to_value(v).map_err(|e| {
        warn!(error = %e, "passkey options could not be written");
        AppError::internal("a passkey could not be asked for")
    })
}

fn from_json<T: serde::de::DeserializeOwned>(what: &str, s: &str) -> Result<T, AppError> {
    serde_json::from_str(s).map_err(|e| {
        warn!(error = %e, "a stored {what} could not be read");
        AppError::internal("a stored passkey could not be read")
    })
}

fn unasked(e: &webauthn_rs::prelude::WebauthnError) -> AppError {
    warn!(error = %e, "a passkey ceremony could not begin");
    AppError::internal("a passkey could not be asked for")
}

/// A credential id as stored and shown: hex.
fn credential_id(raw: &[u8]) -> String {
    hex::encode(raw)
}

impl Passkeys {
    /// Passkeys of `accounts`, kept in `store`, for the relying party `rp`;
    /// their ceremonies kept in `ceremonies`.
    pub fn new(
        rp: Webauthn,
        store: PasskeyStore,
        ceremonies: CeremonyStore,
        accounts: Arc<Accounts>,
    ) -> Passkeys {
        Passkeys { rp, store, ceremonies, accounts }
    }

    async fn begin(
        &self,
        kind: CeremonyKind,
        account: Option<Uuid>,
        state: String,
    ) -> Result<Uuid, AppError> {
        let id = Uuid::new_v4();
        let expires = now_ms().saturating_add(CEREMONY_SECS * 1000);
        self.ceremonies
            .begin(id, &Ceremony { kind, account, state }, expires)
            .await
            .map_err(|e| storage(&e))?;
        Ok(id)
    }

    /// Begins adding a passkey to the signed-in account: the ceremony's id
    /// and the options for `navigator.credentials.create()`. The passkeys it
    /// has already are excluded; the credential must be discoverable.
    ///
    /// # Errors
    /// Storage.
    pub async fn start_registration(&self, who: &SignedIn) -> Result<(Uuid, Value), AppError> {
        let held = self.store.of_account(who.account.id).await.map_err(|e| storage(&e))?;
        let exclude = held
            .iter()
            .filter_map(|p| from_json::<Passkey>("passkey", &p.credential).ok())
            .map(|p| p.cred_id().clone())
            .collect::<Vec<_>>();
        let (options, state) = self
            .rp
            .start_passkey_registration(who.account.id, &who.account.name, &who.account.name, Some(exclude))
            .map_err(|e| unasked(&e))?;
        // Signing in names nobody: the credential must be one the
        // authenticator finds by itself.
        let mut options = to_value(&options)?;
        if let Some(selection) = options.pointer_mut("/publicKey/authenticatorSelection") {
            selection["residentKey"] = json!("required");
            selection["requireResidentKey"] = json!(true);
        }
        let id = self
            .begin(CeremonyKind::PasskeyRegister, Some(who.account.id), to_json("a ceremony", &state)?)
            .await?;
        Ok((id, options))
    }

    /// Finishes adding a passkey named `name` (cleaned at the boundary) to
    /// the signed-in account, with `credential` as the browser's
    /// `PublicKeyCredential.toJSON()` gave it. The ceremony is taken first
    /// (used once, whatever follows).
    ///
    /// # Errors
    /// `not_found` for a ceremony that is unknown, ran out, was used or is
    /// another account's; `bad_message` for an answer that is no WebAuthn
    /// credential or does not verify, or a passkey added already; storage.
    pub async fn finish_registration(
        &self,
        who: &SignedIn,
        ceremony: Uuid,
        name: String,
        credential: Value,
    ) -> Result<PasskeyInfo, AppError> {
        let now = now_ms();
        let taken = self
            .ceremonies
            .take(ceremony, CeremonyKind::PasskeyRegister, Some(who.account.id), now)
            .await
            .map_err(|e| storage(&e))?;
        let Some(taken) = taken else {
            return Err(AppError::new(
                ErrorCode::NotFound,
                "this passkey request is unknown, was used or ran out: add the passkey again",
            ));
        };
        let state: PasskeyRegistration = from_json("ceremony", &taken.state)?;
        let credential: RegisterPublicKeyCredential = serde_json::from_value(credential)
            .map_err(|_| refused("the passkey's answer is not a WebAuthn credential"))?;
        let passkey = self.rp.finish_passkey_registration(&credential, &state).map_err(|e| {
            info!(account = %who.account.id, error = %e, "a passkey was refused");
            refused("the passkey could not be verified: try again")
        })?;
        let row = PasskeyRow {
            id: credential_id(passkey.cred_id().as_ref()),
            account: who.account.id,
            name,
            credential: to_json("a passkey", &passkey)?,
            created_at_ms: now,
            last_used_at_ms: None,
        };
        if !self.store.add(&row).await.map_err(|e| storage(&e))? {
            return Err(refused("this passkey is added already"));
        }
        info!(account = %who.account.id, "passkey added");
        Ok(info(&row))
    }

    /// The signed-in account's passkeys, the first added first.
    ///
    /// # Errors
    /// Storage.
    pub async fn list(&self, who: &SignedIn) -> Result<Vec<PasskeyInfo>, AppError> {
        let rows = self.store.of_account(who.account.id).await.map_err(|e| storage(&e))?;
        Ok(rows.iter().map(info).collect())
    }

    /// Begins signing in with a passkey: the ceremony's id and the options
    /// for `navigator.credentials.get()` (no credential named: the
    /// authenticator offers the passkeys it holds for this site).
    ///
    /// # Errors
    /// Storage.
    pub async fn start_sign_in(&self) -> Result<(Uuid, Value), AppError> {
        let (mut options, state) = self.rp.start_discoverable_authentication().map_err(|e| unasked(&e))?;
        // A button asks, not the name field's autofill.
        options.mediation = None;
        let options = to_value(&options)?;
        let id = self.begin(CeremonyKind::PasskeySignIn, None, to_json("a ceremony", &state)?).await?;
        Ok((id, options))
    }

    /// Finishes signing in with `credential` (the browser's assertion as
    /// `toJSON()` gave it): a new session of the passkey's account.
    ///
    /// # Errors
    /// `unauthorized` (401), the same for every failure (an unknown or
    /// used ceremony, an answer that is no assertion, an unknown passkey,
    /// one that does not verify); `rate_limited` when `may_try` refuses
    /// the account the passkey names (asked before anything is looked up,
    /// so it tells nothing about the account); storage.
    pub async fn finish_sign_in(
        &self,
        ceremony: Uuid,
        credential: Value,
        who: &Requester,
        may_try: impl FnOnce(Uuid) -> Result<(), Duration>,
    ) -> Result<(SignedIn, SessionToken), AppError> {
        let no = || AppError::new(ErrorCode::Unauthorized, SIGN_IN_REFUSED);
        let now = now_ms();
        let taken = self
            .ceremonies
            .take(ceremony, CeremonyKind::PasskeySignIn, None, now)
            .await
            .map_err(|e| storage(&e))?;
        let Some(taken) = taken else {
            return Err(no());
        };
        let state: DiscoverableAuthentication = from_json("ceremony", &taken.state)?;
        let credential: PublicKeyCredential = serde_json::from_value(credential).map_err(|_| no())?;
        let (user, raw_id) = self.rp.identify_discoverable_authentication(&credential).map_err(|_| no())?;
        if let Err(wait) = may_try(user) {
            crate::metrics::rate_limited("account_sign_ins");
            return Err(AppError::rate_limited(
                "too many sign-in attempts for this account: wait a minute",
                wait,
            ));
        }
        let id = credential_id(raw_id);
        let Some(row) = self.store.get(&id).await.map_err(|e| storage(&e))?.filter(|r| r.account == user)
        else {
            return Err(no());
        };
        let mut passkey: Passkey = from_json("passkey", &row.credential)?;
        let result =
            self.rp.finish_discoverable_authentication_v2(&credential, state, &passkey).map_err(|e| {
                info!(account = %row.account, error = %e, "a passkey sign-in was refused");
                no()
            })?;
        passkey.update_credential(&result);
        self.store.used(&row.id, &to_json("a passkey", &passkey)?, now).await.map_err(|e| storage(&e))?;
        let account = self.accounts.account(row.account).await?.ok_or_else(no)?;
        let signed = self.accounts.new_session(account, who).await?;
        info!(account = %row.account, "signed in with a passkey");
        Ok(signed)
    }

    /// Forgets the ceremonies that ran out.
    pub async fn sweep(&self) {
        if let Err(e) = self.ceremonies.sweep(now_ms()).await {
            warn!(error = %e, "old passkey ceremonies could not be forgotten");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_relying_party_is_the_public_url_or_localhost() {
        let mut server = ServerConfig::default();
        let local = relying_party(&server).unwrap();
        assert_eq!(local.get_allowed_origins()[0].as_str(), "http://localhost/");
        server.public_url = "https://cards.example.org".into();
        let public = relying_party(&server).unwrap();
        assert_eq!(public.get_allowed_origins()[0].as_str(), "https://cards.example.org/");
        server.public_url = "https://10.0.0.1".into();
        assert!(relying_party(&server).unwrap_err().contains("domain"));
    }
}
