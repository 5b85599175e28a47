//! OpenID Connect: players sign in with an identity they already have (a
//! community's provider, a Google or GitLab login, a Keycloak), through the
//! authorization code flow with PKCE, `state` and `nonce` (the `openidconnect`
//! crate). Each configured provider is discovered at start-up and, when it
//! cannot be reached, marked unavailable and tried again every
//! `oidc.retry_secs`. The flow's secrets stay on the server, in the
//! ceremony store, bound to the browser by a cookie, and are taken once, so
//! the callback may land on any node. An identity is found by its issuer
//! (exactly as the provider publishes it) and subject, never by e-mail; its
//! first sign-in makes an account, or is linked to the signed-in one, and
//! an identity another account holds is never merged. docs/accounts.md,
//! "OpenID Connect".

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use openidconnect::core::{CoreClient, CoreGenderClaim, CoreProviderMetadata, CoreResponseType};
use openidconnect::reqwest;
use openidconnect::{
    AuthenticationFlow, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EmptyAdditionalClaims,
    IssuerUrl, Nonce, OAuth2TokenResponse, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope,
    TokenResponse,
};
use serde::{Deserialize, Serialize};
use spades_protocol::{ErrorCode, OidcProvider};
use subtle::ConstantTimeEq;
use tracing::{info, warn};
use uuid::Uuid;

use crate::accounts::{Accounts, Requester, SessionToken, SignedIn};
use crate::config::{OidcConfig, OidcProviderConfig};
use crate::error::AppError;
use crate::storage::{
    Ceremony, CeremonyKind, CeremonyStore, Linked, Member, NewMember, OidcIdentityRow, OidcStore,
};
use crate::time::now_ms;

/// How long a flow waits for the player to come back from the provider.
pub const FLOW_SECS: u64 = 600;

/// How long a discovery or a token request may take.
const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);

fn storage(e: &crate::storage::StorageError) -> AppError {
    AppError::store_failed("identities", e)
}

/// Why a flow ended without signing anybody in, as the page is told (a
/// word in the address it comes back to, never the provider's text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No flow of this browser, one that ran out or was used, or a `state`
    /// that is not the flow's.
    Expired,
    /// The player (or the provider) said no.
    Denied,
    /// The provider's answer could not be checked (the code, the token,
    /// its signature, issuer, audience or nonce).
    Failed,
    /// The identity is another account's: nothing was merged.
    Taken,
    /// The provider cannot be reached now.
    Unavailable,
    /// Linking needs a signed-in account: none, or no longer the one that
    /// began the flow.
    SignedOut,
    /// Linking was begun by a page of another site.
    CrossSite,
    /// The store failed.
    Storage,
}

impl Refusal {
    /// The word in the address (`/?oidc_error=<word>#/me`).
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Expired => "expired",
            Refusal::Denied => "denied",
            Refusal::Failed => "failed",
            Refusal::Taken => "taken",
            Refusal::Unavailable => "unavailable",
            Refusal::SignedOut => "signed_out",
            Refusal::CrossSite => "cross_site",
            Refusal::Storage => "storage",
        }
    }
}

/// What a finished flow did.
#[derive(Debug)]
pub enum Finished {
    /// A new session of the identity's account, its token for the cookie
    /// (`created`: the account was made by this sign-in).
    SignedIn {
        /// The session's token.
        token: SessionToken,
        /// Whether this sign-in made the account.
        created: bool,
    },
    /// The identity is now the signed-in account's (or was already).
    Linked,
}

/// What a provider sent the browser back with (the callback's query).
/// `Debug` never shows the code or the state.
pub struct Answer {
    /// The flow's `state`, as the server sent it.
    pub state: Option<String>,
    /// The authorization code.
    pub code: Option<String>,
    /// The provider's refusal (`access_denied`).
    pub error: Option<String>,
    /// The issuer that answered (RFC 9207), when the provider says.
    pub iss: Option<String>,
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Answer").field("error", &self.error).field("iss", &self.iss).finish_non_exhaustive()
    }
}

/// What the server keeps of a flow, in the ceremony store.
#[derive(Serialize, Deserialize)]
struct Flow {
    provider: String,
    state: String,
    nonce: String,
    verifier: String,
}

/// One configured provider and, once discovered, its metadata.
struct Provider {
    id: String,
    label: String,
    config: OidcProviderConfig,
    metadata: RwLock<Option<CoreProviderMetadata>>,
}

/// The providers, the identities and the flows under way.
pub struct Oidc {
    providers: BTreeMap<String, Provider>,
    store: OidcStore,
    ceremonies: CeremonyStore,
    accounts: Arc<Accounts>,
    http: reqwest::Client,
    public_url: String,
    retry: Duration,
}

impl std::fmt::Debug for Oidc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Oidc")
            .field("providers", &self.providers.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Oidc {
    /// The providers of `config`, their identities kept in `store` and
    /// flows in `ceremonies`, sending players back to `public_url`. None is
    /// discovered yet ([`Oidc::discover`]).
    ///
    /// # Errors
    /// No HTTP client could be made.
    pub fn new(
        config: &OidcConfig,
        public_url: &str,
        store: OidcStore,
        ceremonies: CeremonyStore,
        accounts: Arc<Accounts>,
    ) -> Result<Oidc, String> {
        let http = reqwest::ClientBuilder::new()
            // Following redirects would let a provider's answer point the
            // server anywhere.
            .redirect(reqwest::redirect::Policy::none())
            .timeout(PROVIDER_TIMEOUT)
            .build()
            .map_err(|e| format!("oidc: no HTTP client: {e}"))?;
        let providers = config
            .providers
            .iter()
            .map(|(id, p)| {
                let label = if p.label.is_empty() { format!("Sign in with {id}") } else { p.label.clone() };
                let provider =
                    Provider { id: id.clone(), label, config: p.clone(), metadata: RwLock::new(None) };
                (id.clone(), provider)
            })
            .collect();
        Ok(Oidc {
            providers,
            store,
            ceremonies,
            accounts,
            http,
            public_url: public_url.trim_end_matches('/').to_owned(),
            retry: Duration::from_secs(config.retry_secs),
        })
    }

    /// The providers, for the sign-in buttons.
    pub fn providers(&self) -> Vec<OidcProvider> {
        self.providers
            .values()
            .map(|p| OidcProvider {
                id: p.id.clone(),
                label: p.label.clone(),
                available: p.metadata.read().is_ok_and(|m| m.is_some()),
            })
            .collect()
    }

    /// Discovers every provider not discovered yet; returns how many are
    /// still unavailable. A provider whose document names another issuer
    /// than the one configured (a trailing slash counts) stays unavailable.
    pub async fn discover(&self) -> usize {
        let mut unavailable = 0;
        for p in self.providers.values() {
            if p.metadata.read().is_ok_and(|m| m.is_some()) {
                continue;
            }
            let issuer = match IssuerUrl::new(p.config.issuer.clone()) {
                Ok(issuer) => issuer,
                Err(e) => {
                    warn!(provider = %p.id, error = %e, "an OpenID provider's issuer is not a URL");
                    unavailable += 1;
                    continue;
                }
            };
            match CoreProviderMetadata::discover_async(issuer, &self.http).await {
                Ok(metadata) => {
                    info!(provider = %p.id, issuer = %p.config.issuer, "OpenID provider discovered");
                    if let Ok(mut slot) = p.metadata.write() {
                        *slot = Some(metadata);
                    }
                }
                Err(e) => {
                    warn!(
                        provider = %p.id,
                        issuer = %p.config.issuer,
                        error = %e,
                        retry_secs = self.retry.as_secs(),
                        "an OpenID provider could not be discovered: it is unavailable until it can"
                    );
                    unavailable += 1;
                }
            }
        }
        unavailable
    }

    /// Tries the unavailable providers again every `oidc.retry_secs`,
    /// until `stop`.
    pub async fn keep_discovering(self: Arc<Self>, stop: tokio_util::sync::CancellationToken) {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(self.retry) => {}
            }
            self.discover().await;
        }
    }

    fn client(
        &self,
        p: &Provider,
    ) -> Result<
        CoreClient<
            openidconnect::EndpointSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointNotSet,
            openidconnect::EndpointMaybeSet,
            openidconnect::EndpointMaybeSet,
        >,
        Refusal,
    > {
        let metadata = p.metadata.read().ok().and_then(|m| m.clone()).ok_or(Refusal::Unavailable)?;
        let secret =
            (!p.config.client_secret.is_empty()).then(|| ClientSecret::new(p.config.client_secret.clone()));
        let redirect = RedirectUrl::new(self.redirect_uri(&p.id)).map_err(|_| Refusal::Failed)?;
        Ok(CoreClient::from_provider_metadata(metadata, ClientId::new(p.config.client_id.clone()), secret)
            .set_redirect_uri(redirect))
    }

    /// Where provider `id` sends the player back.
    pub fn redirect_uri(&self, id: &str) -> String {
        format!("{}/api/v1/oidc/{id}/callback", self.public_url)
    }

    /// Begins signing in with provider `id` (or, for `link`, linking an
    /// identity to that signed-in account): the provider's address to send
    /// the browser to, and the flow's id for the browser's cookie.
    ///
    /// # Errors
    /// `not_found` for an unknown provider; `provider_unavailable` (503)
    /// while it cannot be reached; storage.
    pub async fn start(&self, id: &str, link: Option<&SignedIn>) -> Result<(String, Uuid), AppError> {
        let p = self
            .providers
            .get(id)
            .ok_or_else(|| AppError::new(ErrorCode::NotFound, "no OpenID provider has this id"))?;
        let client = self.client(p).map_err(|_| {
            AppError::new(
                ErrorCode::ProviderUnavailable,
                format!("{} cannot be reached right now: try again in a minute", p.label),
            )
            .retry_after(self.retry)
        })?;
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let (url, state, nonce) = client
            .authorize_url(
                AuthenticationFlow::<CoreResponseType>::AuthorizationCode,
                CsrfToken::new_random,
                Nonce::new_random,
            )
            .add_scope(Scope::new("profile".into()))
            .set_pkce_challenge(challenge)
            .url();
        let flow = Flow {
            provider: p.id.clone(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
        };
        let state =
            serde_json::to_string(&flow).map_err(|_| AppError::internal("the sign-in could not begin"))?;
        let flow_id = Uuid::new_v4();
        let ceremony = Ceremony { kind: CeremonyKind::Oidc, account: link.map(|w| w.account.id), state };
        let expires = now_ms().saturating_add(FLOW_SECS * 1000);
        self.ceremonies.begin(flow_id, &ceremony, expires).await.map_err(|e| storage(&e))?;
        Ok((url.to_string(), flow_id))
    }

    /// Finishes a flow that came back from provider `id` to the browser
    /// whose cookie names `flow`, with the provider's `answer`; `signed` is
    /// the account of the browser's session now, if any (a link goes on
    /// only while it is the one that began it). The flow is taken first:
    /// used once, whatever follows. An answer that names its issuer (RFC
    /// 9207) must name the provider's, exactly.
    ///
    /// # Errors
    /// The [`Refusal`], which the page is told.
    pub async fn finish(
        &self,
        id: &str,
        flow: Option<Uuid>,
        answer: Answer,
        signed: Option<Uuid>,
        who: &Requester,
    ) -> Result<Finished, Refusal> {
        let Answer { state, code, error, iss } = answer;
        let taken = match flow {
            Some(flow) => self
                .ceremonies
                .take(flow, CeremonyKind::Oidc, None, now_ms())
                .await
                .map_err(|e| {
                    warn!(error = %e, "an OpenID flow could not be read");
                    Refusal::Storage
                })?
                .ok_or(Refusal::Expired)?,
            None => return Err(Refusal::Expired),
        };
        let kept: Flow = serde_json::from_str(&taken.state).map_err(|_| Refusal::Expired)?;
        let state_ok = state.is_some_and(|s| bool::from(s.as_bytes().ct_eq(kept.state.as_bytes())));
        if kept.provider != id || !state_ok {
            info!(provider = %id, "an OpenID answer was refused: not this browser's flow");
            return Err(Refusal::Expired);
        }
        if taken.account.is_some() && taken.account != signed {
            info!(provider = %id, "an OpenID link was refused: its session ended");
            return Err(Refusal::SignedOut);
        }
        if let Some(error) = error {
            info!(provider = %id, error = %error.chars().take(40).collect::<String>(), "the OpenID provider said no");
            return Err(Refusal::Denied);
        }
        let p = self.providers.get(id).ok_or(Refusal::Expired)?;
        if iss.as_ref().is_some_and(|iss| *iss != p.config.issuer) {
            info!(provider = %id, "an OpenID answer named another issuer");
            return Err(Refusal::Failed);
        }
        let client = self.client(p)?;
        let code = code.ok_or(Refusal::Failed)?;
        let exchange = client
            .exchange_code(AuthorizationCode::new(code))
            .map_err(|_| Refusal::Failed)?
            .set_pkce_verifier(PkceCodeVerifier::new(kept.verifier));
        let tokens = exchange.request_async(&self.http).await.map_err(|e| {
            // The error names what failed, not the code or any token.
            let what = match &e {
                openidconnect::RequestTokenError::ServerResponse(r) => r.error().to_string(),
                openidconnect::RequestTokenError::Request(_) => "the request failed".into(),
                openidconnect::RequestTokenError::Parse(..) => "an answer that is no token response".into(),
                openidconnect::RequestTokenError::Other(_) => "another failure".into(),
            };
            info!(provider = %id, refused = %what, "an OpenID code could not be exchanged");
            Refusal::Failed
        })?;
        let id_token = tokens.id_token().ok_or(Refusal::Failed)?;
        let claims = id_token.claims(&client.id_token_verifier(), &Nonce::new(kept.nonce)).map_err(|e| {
            info!(provider = %id, error = %e, "an OpenID ID token was refused");
            Refusal::Failed
        })?;
        let issuer = claims.issuer().as_str().to_owned();
        let subject = claims.subject().as_str().to_owned();
        let mut wanted = claims
            .preferred_username()
            .map(|u| u.as_str().to_owned())
            .or_else(|| claims.name().and_then(|n| n.get(None)).map(|n| n.as_str().to_owned()));
        if wanted.is_none() {
            // Providers that keep the ID token short give the name at
            // their user info endpoint (best effort: else a generated one).
            let asked = client.user_info(tokens.access_token().clone(), Some(claims.subject().clone()));
            if let Ok(request) = asked {
                match request.request_async::<EmptyAdditionalClaims, _, CoreGenderClaim>(&self.http).await {
                    Ok(info) => {
                        wanted = info
                            .preferred_username()
                            .map(|u| u.as_str().to_owned())
                            .or_else(|| info.name().and_then(|n| n.get(None)).map(|n| n.as_str().to_owned()));
                    }
                    Err(e) => {
                        info!(provider = %id, error = %e, "an OpenID provider's user info was not read")
                    }
                }
            }
        }
        let now = now_ms();
        let row = |account: Uuid| OidcIdentityRow {
            id: Uuid::new_v4(),
            issuer: issuer.clone(),
            subject: subject.clone(),
            account,
            provider: id.to_owned(),
            label: wanted.clone().unwrap_or_else(|| subject.chars().take(40).collect()),
            created_at_ms: now,
            last_used_at_ms: Some(now),
        };
        let store_failed = |e: crate::storage::StorageError| {
            warn!(error = %e, "the identity store failed");
            Refusal::Storage
        };
        if let Some(account) = taken.account {
            // Linking to the account that began the flow.
            return match self.store.link(&row(account)).await.map_err(store_failed)? {
                Linked::Done => {
                    info!(account = %account, provider = %id, "OpenID identity linked");
                    Ok(Finished::Linked)
                }
                Linked::Known(known) if known.account == account => Ok(Finished::Linked),
                Linked::Known(_) => {
                    info!(account = %account, provider = %id, "an OpenID identity of another account was not linked");
                    Err(Refusal::Taken)
                }
            };
        }
        let known = self.store.get(&issuer, &subject).await.map_err(store_failed)?;
        let (account, created) = match known {
            Some(known) => {
                if let Err(e) = self.store.used(known.id, now).await {
                    warn!(error = %e, "an identity's use could not be recorded");
                }
                (known.account, false)
            }
            None => self.make_account(&row, wanted.as_deref()).await?,
        };
        let account =
            self.accounts.account(account).await.map_err(|_| Refusal::Storage)?.ok_or(Refusal::Failed)?;
        let (signed, token) = self.accounts.new_session(account, who).await.map_err(|_| Refusal::Storage)?;
        info!(account = %signed.account.id, provider = %id, created, "signed in with OpenID");
        Ok(Finished::SignedIn { token, created })
    }

    /// Makes an account for an identity seen for the first time, named as
    /// the provider names the person when that name is free.
    async fn make_account(
        &self,
        row: &impl Fn(Uuid) -> OidcIdentityRow,
        wanted: Option<&str>,
    ) -> Result<(Uuid, bool), Refusal> {
        let mut wanted = wanted;
        for _ in 0..3 {
            let (name, skeleton) = self.accounts.offered_name(wanted).await.map_err(|_| Refusal::Storage)?;
            let id = Uuid::new_v4();
            let new = NewMember { id, name: &name, skeleton: &skeleton, now_ms: now_ms() };
            match self.store.create_account(&new, &row(id)).await {
                Ok(Member::Made) => {
                    info!(account = %id, "account made by an OpenID sign-in");
                    return Ok((id, true));
                }
                // Taken meanwhile: a generated name next.
                Ok(Member::NameTaken) => wanted = None,
                Ok(Member::Known(known)) => return Ok((known.account, false)),
                Err(e) => {
                    warn!(error = %e, "an account could not be made");
                    return Err(Refusal::Storage);
                }
            }
        }
        Err(Refusal::Storage)
    }

    /// The signed-in account's identities.
    ///
    /// # Errors
    /// Storage.
    pub async fn of(&self, account: Uuid) -> Result<Vec<OidcIdentityRow>, AppError> {
        self.store.of_account(account).await.map_err(|e| storage(&e))
    }

    /// The label of provider `id`, for the list of ways in.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.providers.get(id).map(|p| p.label.as_str())
    }
}
