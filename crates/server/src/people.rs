//! The `/api/v1` routes of accounts and sessions: a guest account and
//! session from a device secret, a generated name, the signed-in account
//! (`/me`), a rename, the account's sessions, a session made for another
//! client (its token shown once), and signing them out. The
//! rules are `accounts.rs`'s; these handlers read the request and write
//! the cookie.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post, put};
use axum::{Json, Router};
use spades_engine::Seat;
use spades_protocol::{
    Account, AccountExport, AddPasskey, ApiError, ChatBlock, ErrorCode, GuestSignIn, Identity, IssuedSession,
    Me, NameSuggestion, NewReport, NewSession, PasskeyInfo, PasskeyOptions, PasskeySignIn, PasswordSet,
    PasswordSignIn, RenameAccount, ReportReceipt, SessionDelivery, SessionInfo, SetPassword, SignInMethods,
    SignedIn,
};
use uuid::Uuid;

use crate::accounts::{Accounts, DeviceSecret, Requester, SESSION_LABEL_MAX, SessionToken};
use crate::admission::over_tls;
pub use crate::boundary::SESSION_COOKIE;
use crate::boundary::{
    AccountChange, BrowserOrigin, JsonBody, MAX_BODY_BYTES, PerAddress, Reporting, SignIns, Signed,
    SigningIn, cleaned_name, cookie, id_of, key_of, table_id,
};
use crate::error::AppError;
use crate::passkeys::PASSKEY_NAME_MAX;
use crate::reports::Target;
use crate::state::AppState;
use crate::storage::MatchPage;

/// The routes, merged into `rest::routes` by `app.rs`.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/accounts/guest", post(guest))
        .route("/names/suggestion", get(suggest_name))
        .route("/me", get(me).patch(rename))
        .route("/me/sessions", get(sessions).post(issue_session).delete(sign_out_everywhere))
        .route("/me/sessions/{session}", delete(sign_out))
        .route("/me/passkeys/options", post(passkey_options))
        .route("/me/passkeys", get(passkeys).post(add_passkey))
        .route("/me/passkeys/{passkey}", delete(remove_passkey))
        .route("/passkeys/options", post(sign_in_options))
        .route("/passkeys/sign-in", post(passkey_sign_in))
        .route("/me/password", put(set_password).delete(remove_password))
        .route("/me/identities", get(identities))
        .route("/me/export", get(export))
        .route("/passwords/sign-in", post(password_sign_in))
        .route("/sign-in/methods", get(sign_in_methods))
        .route("/oidc/{provider}/start", get(oidc_start))
        .route("/oidc/{provider}/callback", get(oidc_callback))
        .route("/me/oidc/{identity}", delete(unlink_oidc))
        .route("/me/blocks", get(blocks))
        .route("/me/blocks/{account}", put(block).delete(unblock))
        .route("/tables/{id}/chat/{message}/report", post(report_message))
        .route("/tables/{id}/seats/{seat}/report", post(report_seat))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// The `Set-Cookie` of a session: HttpOnly, SameSite=Lax, for the whole
/// site, as long as the session lasts unused; Secure when the request came
/// over TLS through a trusted proxy. An empty token with no age clears it.
fn session_cookie(token: &str, max_age_secs: u64, secure: bool) -> HeaderValue {
    set_cookie(SESSION_COOKIE, token, "/", max_age_secs, secure)
}

/// A `Set-Cookie` of this server's: HttpOnly, SameSite=Lax, Secure when
/// `secure`. Names and values are ours (hex, a UUID): always a valid header.
fn set_cookie(name: &str, value: &str, path: &str, max_age_secs: u64, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    let cookie =
        format!("{name}={value}; Path={path}; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}{secure}");
    HeaderValue::from_str(&cookie).unwrap_or_else(|_| HeaderValue::from_static("spades_session=; Max-Age=0"))
}

fn secure(state: &AppState, peer: SocketAddr, headers: &HeaderMap) -> bool {
    over_tls(peer.ip(), headers, &state.trusted_proxies)
}

/// Answers that hold a session or its token are never cached.
fn no_store(mut response: Response) -> Response {
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A device's secret exchanged for a session of its account, made on first use.
#[utoipa::path(
    post,
    path = "/api/v1/accounts/guest",
    tag = "accounts",
    request_body(content = GuestSignIn, description = "The device's secret, and the name of a new account"),
    responses(
        (status = 200, description = "Signed in to the device's account (a new session); with `session: cookie` the `spades_session` cookie is set", body = SignedIn),
        (status = 201, description = "The account was made and signed in (a new session); with `session: cookie` the `spades_session` cookie is set", body = SignedIn),
        (status = 400, description = "A malformed secret (`bad_message`), an invalid name (`invalid_name`) or body (`invalid_options`)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 409, description = "The name is taken, looks like a name in use, or is kept for the player who gave it up (`name_taken`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
        (status = 429, description = "Too many new accounts or requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Accounts cannot be read or written right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn guest(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    _: BrowserOrigin<SigningIn>,
    JsonBody(req, ()): JsonBody<GuestSignIn>,
) -> Result<Response, AppError> {
    let secret = DeviceSecret::new(req.device_secret)?;
    let client = state.client_ip(peer.ip(), &headers);
    let who = Requester::new(headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()), client);
    let (signed, token, created) = state
        .accounts
        .guest(&secret, req.name.as_deref(), &who, || state.limits.allow_account(client))
        .await?;
    Ok(signed_in(&state, peer, &headers, &signed, &token, req.session, created))
}

/// The answer of a sign-in: the account and its new session (`201` when
/// the account was made), the token in the body or in the cookie.
fn signed_in(
    state: &AppState,
    peer: SocketAddr,
    headers: &HeaderMap,
    signed: &crate::accounts::SignedIn,
    token: &SessionToken,
    delivery: SessionDelivery,
    created: bool,
) -> Response {
    let body = SignedIn {
        account: state.accounts.account_view(&signed.account),
        session: Accounts::session_view(&signed.session, signed.session.id),
        token: (delivery == SessionDelivery::Bearer).then(|| token.0.clone()),
        created,
    };
    let status = if created { StatusCode::CREATED } else { StatusCode::OK };
    let mut response = (status, Json(body)).into_response();
    if delivery == SessionDelivery::Cookie {
        let cookie =
            session_cookie(&token.0, state.config.accounts.session_secs, secure(state, peer, headers));
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    no_store(response)
}

/// A generated display name that nobody holds now, to offer a first visitor.
#[utoipa::path(
    get,
    path = "/api/v1/names/suggestion",
    tag = "accounts",
    responses(
        (status = 200, description = "A free name (free now: taking it may still be refused if someone else is faster)", body = NameSuggestion),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Accounts cannot be read right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn suggest_name(State(state): State<AppState>) -> Result<Response, AppError> {
    let name = state.accounts.suggest_name().await?;
    Ok(no_store(Json(NameSuggestion { name }).into_response()))
}

/// The signed-in account and this request's session.
#[utoipa::path(
    get,
    path = "/api/v1/me",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "The account, this session, whether the account is an operator and what sanctions hold it now", body = Me),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Accounts cannot be read right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn me(State(state): State<AppState>, Signed(who): Signed) -> Result<Response, AppError> {
    let body = Me {
        account: state.accounts.account_view(&who.account),
        session: Accounts::session_view(&who.session, who.session.id),
        operator: state.moderation.is_operator(who.account.id).await?,
        restrictions: state.moderation.restrictions(who.account.id).await?,
    };
    Ok(no_store(Json(body).into_response()))
}

/// A new display name for the signed-in account.
#[utoipa::path(
    patch,
    path = "/api/v1/me",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    request_body(content = RenameAccount, description = "The new name"),
    responses(
        (status = 200, description = "Renamed; the old name is kept for this account for `accounts.name_kept_secs`", body = Account),
        (status = 400, description = "An invalid name (`invalid_name`) or body (`invalid_options`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 409, description = "The name is taken, looks like a name in use, or is kept for the player who gave it up (`name_taken`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
        (status = 429, description = "A rename sooner than `accounts.rename_interval_secs` after the last, or too many requests (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Accounts cannot be written right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn rename(
    State(state): State<AppState>,
    _: BrowserOrigin<AccountChange>,
    Signed(who): Signed,
    JsonBody(req, ()): JsonBody<RenameAccount>,
) -> Result<Response, AppError> {
    let account = state.accounts.rename(&who, &req.name).await?;
    Ok(no_store(Json(state.accounts.account_view(&account)).into_response()))
}

/// The signed-in account's sessions that have not expired, the last used first.
#[utoipa::path(
    get,
    path = "/api/v1/me/sessions",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "The sessions; `current` marks this request's", body = Vec<SessionInfo>),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Accounts cannot be read right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn sessions(State(state): State<AppState>, Signed(who): Signed) -> Result<Response, AppError> {
    let list: Vec<SessionInfo> = state
        .accounts
        .sessions(&who)
        .await?
        .iter()
        .map(|s| Accounts::session_view(s, who.session.id))
        .collect();
    Ok(no_store(Json(list).into_response()))
}

/// A new session of the signed-in account for another client (a terminal,
/// another machine), its token answered once: how a player moves the
/// account to a client that cannot sign in as this device does.
#[utoipa::path(
    post,
    path = "/api/v1/me/sessions",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    request_body(content = NewSession, description = "What the session is for (its label in the list); an empty body: the default label"),
    responses(
        (status = 201, description = "The session and its token (shown once); it is listed, and signed out, like any other", body = IssuedSession),
        (status = 400, description = "A label that is empty, too long or hides characters (`invalid_name`), or a bad body (`invalid_options`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Accounts cannot be written right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn issue_session(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    _: BrowserOrigin<AccountChange>,
    Signed(who): Signed,
    JsonBody(req, ()): JsonBody<NewSession>,
) -> Result<Response, AppError> {
    let address = state.client_ip(peer.ip(), &headers);
    let label =
        req.client.as_deref().map(|raw| cleaned_name(raw, SESSION_LABEL_MAX, "the label")).transpose()?;
    let (session, token) = state.accounts.issue_session(&who, label, address).await?;
    let body =
        IssuedSession { session: Accounts::session_view(&session, who.session.id), token: token.0.clone() };
    Ok(no_store((StatusCode::CREATED, Json(body)).into_response()))
}

/// Signs out every session of the account, this one too, and closes their WebSockets (code 4005).
#[utoipa::path(
    delete,
    path = "/api/v1/me/sessions",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    responses(
        (status = 204, description = "Signed out everywhere; the `spades_session` cookie is cleared"),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Accounts cannot be written right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn sign_out_everywhere(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    _: BrowserOrigin<AccountChange>,
    Signed(who): Signed,
) -> Result<Response, AppError> {
    state.accounts.sign_out(&who, None).await?;
    Ok(signed_out(&state, peer, &headers))
}

/// 204, clearing the cookie.
fn signed_out(state: &AppState, peer: SocketAddr, headers: &HeaderMap) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    response.headers_mut().insert(header::SET_COOKIE, session_cookie("", 0, secure(state, peer, headers)));
    no_store(response)
}

/// Signs out one session of the account (`current`: this one) and closes its WebSockets (code 4005).
#[utoipa::path(
    delete,
    path = "/api/v1/me/sessions/{session}",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    params(("session" = String, Path, description = "The session's id, or `current` for this request's")),
    responses(
        (status = 204, description = "Signed out; when it was this request's session, the `spades_session` cookie is cleared"),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 404, description = "No session of this account has this id (`not_found`)", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Accounts cannot be written right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn sign_out(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(session): Path<String>,
    _: BrowserOrigin<AccountChange>,
    Signed(who): Signed,
) -> Result<Response, AppError> {
    let not_found = || AppError::new(ErrorCode::NotFound, "no session of yours has this id");
    let id = if session == "current" {
        who.session.id
    } else {
        session.parse::<Uuid>().map_err(|_| not_found())?
    };
    if state.accounts.sign_out(&who, Some(id)).await?.is_empty() {
        return Err(not_found());
    }
    if id == who.session.id {
        return Ok(signed_out(&state, peer, &headers));
    }
    Ok(no_store(StatusCode::NO_CONTENT.into_response()))
}

fn options_json(ceremony: Uuid, options: serde_json::Value) -> Response {
    no_store(Json(PasskeyOptions { ceremony, options }).into_response())
}

/// Begins adding a passkey to the signed-in account ("Keep this account").
#[utoipa::path(
    post,
    path = "/api/v1/me/passkeys/options",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "The ceremony and the options of `navigator.credentials.create()` (a discoverable credential; the account's passkeys excluded)", body = PasskeyOptions),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Passkeys cannot be written right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn passkey_options(
    State(state): State<AppState>,
    _: BrowserOrigin<AccountChange>,
    Signed(who): Signed,
) -> Result<Response, AppError> {
    let (ceremony, options) = state.passkeys.start_registration(&who).await?;
    Ok(options_json(ceremony, options))
}

/// Finishes adding a passkey to the signed-in account.
#[utoipa::path(
    post,
    path = "/api/v1/me/passkeys",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    request_body(content = AddPasskey, description = "The ceremony, the passkey's name and the browser's new credential"),
    responses(
        (status = 201, description = "The passkey is the account's", body = PasskeyInfo),
        (status = 400, description = "A credential that is not one, does not verify or is added already (`bad_message`), a bad name (`invalid_name`) or body (`invalid_options`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 404, description = "The ceremony is unknown, was used, ran out or is another account's (`not_found`): begin again", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Passkeys cannot be written right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn add_passkey(
    State(state): State<AppState>,
    _: BrowserOrigin<AccountChange>,
    Signed(who): Signed,
    JsonBody(req, ()): JsonBody<AddPasskey>,
) -> Result<Response, AppError> {
    let name = cleaned_name(&req.name, PASSKEY_NAME_MAX, "a passkey's name")?;
    let added = state.passkeys.finish_registration(&who, req.ceremony, name, req.credential).await?;
    Ok(no_store((StatusCode::CREATED, Json(added)).into_response()))
}

/// The signed-in account's passkeys, the first added first.
#[utoipa::path(
    get,
    path = "/api/v1/me/passkeys",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "The passkeys", body = Vec<PasskeyInfo>),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Passkeys cannot be read right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn passkeys(State(state): State<AppState>, Signed(who): Signed) -> Result<Response, AppError> {
    Ok(no_store(Json(state.passkeys.list(&who).await?).into_response()))
}

/// Removes a passkey of the signed-in account.
#[utoipa::path(
    delete,
    path = "/api/v1/me/passkeys/{passkey}",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    params(("passkey" = String, Path, description = "The passkey's id")),
    responses(
        (status = 204, description = "Removed: it signs nobody in any more"),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 404, description = "No passkey of this account has this id (`not_found`)", body = ApiError),
        (status = 409, description = "It is the account's only way left to sign in (`last_sign_in`): add another first", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Passkeys cannot be written right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn remove_passkey(
    State(state): State<AppState>,
    Path(passkey): Path<String>,
    _: BrowserOrigin<AccountChange>,
    Signed(who): Signed,
) -> Result<Response, AppError> {
    if !state.identities.remove_passkey(&who, &passkey).await? {
        return Err(AppError::new(ErrorCode::NotFound, "no passkey of yours has this id"));
    }
    Ok(no_store(StatusCode::NO_CONTENT.into_response()))
}

/// Begins signing in with a passkey (no name asked: the authenticator
/// offers the passkeys it holds for this site).
#[utoipa::path(
    post,
    path = "/api/v1/passkeys/options",
    tag = "accounts",
    responses(
        (status = 200, description = "The ceremony and the options of `navigator.credentials.get()`", body = PasskeyOptions),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Passkeys cannot be written right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn sign_in_options(
    State(state): State<AppState>,
    _: BrowserOrigin<SigningIn>,
) -> Result<Response, AppError> {
    let (ceremony, options) = state.passkeys.start_sign_in().await?;
    Ok(options_json(ceremony, options))
}

/// Finishes signing in with a passkey: a new session of its account.
#[utoipa::path(
    post,
    path = "/api/v1/passkeys/sign-in",
    tag = "accounts",
    request_body(content = PasskeySignIn, description = "The ceremony and the browser's assertion"),
    responses(
        (status = 200, description = "Signed in to the passkey's account (a new session); with `session: cookie` the `spades_session` cookie is set", body = SignedIn),
        (status = 400, description = "A body of the wrong shape (`invalid_options`)", body = ApiError),
        (status = 401, description = "The passkey did not sign anybody in (`unauthorized`): the same answer whatever went wrong (the ceremony, the assertion, the passkey)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
        (status = 429, description = "Too many sign-in attempts from this address (`limits.sign_ins_per_minute_per_ip`) or for the account the passkey names (`limits.sign_ins_per_minute_per_account`), or too many requests (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Passkeys cannot be read right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn passkey_sign_in(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    _: BrowserOrigin<SigningIn>,
    JsonBody(req, limited): JsonBody<PasskeySignIn, PerAddress<SignIns>>,
) -> Result<Response, AppError> {
    let who = Requester::new(headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()), limited.client);
    let may_try = |account| state.limits.allow_account_sign_in(account);
    let (signed, token) = state.passkeys.finish_sign_in(req.ceremony, req.credential, &who, may_try).await?;
    Ok(signed_in(&state, peer, &headers, &signed, &token, req.session, false))
}

/// How a player may sign in on this server, besides a guest's device secret.
#[utoipa::path(
    get,
    path = "/api/v1/sign-in/methods",
    tag = "accounts",
    responses(
        (status = 200, description = "The ways of signing in this server offers", body = SignInMethods),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "The server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn sign_in_methods(State(state): State<AppState>) -> Response {
    Json(SignInMethods {
        passkeys: true,
        passwords: state.passwords.enabled(),
        providers: state.oidc.providers(),
    })
    .into_response()
}

/// Every way into the signed-in account: its devices, its password, its passkeys.
#[utoipa::path(
    get,
    path = "/api/v1/me/identities",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "The ways in: devices, then the password (when passwords are on), then passkeys, each kind the first added first", body = Vec<Identity>),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Accounts cannot be read right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn identities(State(state): State<AppState>, Signed(who): Signed) -> Result<Response, AppError> {
    Ok(no_store(Json(state.identities.list(&who).await?).into_response()))
}

/// The most matches one export lists (pages of the match list, read in turn).
const EXPORT_MATCHES_MAX: usize = 10_000;

/// The most chat messages an export holds (the newest).
const EXPORT_CHAT_MAX: usize = 10_000;

/// Everything the server keeps about the signed-in account, as one JSON
/// file: the account, its ways in, sessions, matches, sanctions and what
/// it said at the tables, never a secret.
#[utoipa::path(
    get,
    path = "/api/v1/me/export",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "The account's data, as a download (`Content-Disposition: attachment`); at most its 10,000 newest matches and 10,000 newest chat messages", body = AccountExport),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Accounts or matches cannot be read right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn export(State(state): State<AppState>, Signed(who): Signed) -> Result<Response, AppError> {
    let id = who.account.id;
    let sessions = state.accounts.sessions(&who).await?;
    let mut matches: Vec<spades_protocol::MatchSummary> = Vec::new();
    loop {
        let page = MatchPage {
            limit: 200,
            finished: None,
            before: matches.last().map(|m| m.table),
            account: Some(id),
        };
        let more = state.journal.summaries(&page).await.map_err(|e| AppError::store_failed("matches", &e))?;
        let done = more.len() < page.limit;
        matches.extend(more);
        if done || matches.len() >= EXPORT_MATCHES_MAX {
            break;
        }
    }
    let body = AccountExport {
        exported_at: crate::time::now_ms(),
        account: state.accounts.account_view(&who.account),
        operator: state.moderation.is_operator(id).await?,
        identities: state.identities.list(&who).await?,
        sessions: sessions.iter().map(|s| Accounts::session_view(s, who.session.id)).collect(),
        matches,
        sanctions: state.moderation.own_sanctions(id).await?,
        chat: state.moderation.account_chat(id, EXPORT_CHAT_MAX).await?,
        blocks: state.blocks.list(&who).await?,
    };
    let mut response = Json(body).into_response();
    let file = format!("attachment; filename=\"spades-account-{id}.json\"");
    if let Ok(value) = HeaderValue::from_str(&file) {
        response.headers_mut().insert(header::CONTENT_DISPOSITION, value);
    }
    Ok(no_store(response))
}

/// Sets or changes the signed-in account's password (when passwords are on).
#[utoipa::path(
    put,
    path = "/api/v1/me/password",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    request_body(content = SetPassword, description = "The new password, and the current one when the account has one"),
    responses(
        (status = 200, description = "Set; a change (`changed`) signed out every other session of the account and closed their WebSockets (code 4005)", body = PasswordSet),
        (status = 400, description = "A password too short, too long or the account's name (`invalid_password`), or a bad body (`invalid_options`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "The current password is missing or wrong (`wrong_password`), or a browser page of a refused origin (`bad_message`)", body = ApiError),
        (status = 404, description = "Passwords are not switched on on this server (`not_found`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
        (status = 429, description = "Too many wrong current passwords for this account (`limits.sign_ins_per_minute_per_account`), or too many requests (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Passwords cannot be written right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn set_password(
    State(state): State<AppState>,
    _: BrowserOrigin<AccountChange>,
    Signed(who): Signed,
    JsonBody(req, ()): JsonBody<SetPassword>,
) -> Result<Response, AppError> {
    let may_try = |account| state.limits.allow_account_sign_in(account);
    let set = state.passwords.set(&who, &req.password, req.current_password.as_deref(), may_try).await?;
    Ok(no_store(Json(set).into_response()))
}

/// Removes the signed-in account's password.
#[utoipa::path(
    delete,
    path = "/api/v1/me/password",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    responses(
        (status = 204, description = "Removed: the name and a password sign nobody in to this account any more"),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 404, description = "The account has no password, or passwords are not switched on (`not_found`)", body = ApiError),
        (status = 409, description = "It is the account's only way left to sign in (`last_sign_in`): add another first", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Passwords cannot be written right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn remove_password(
    State(state): State<AppState>,
    _: BrowserOrigin<AccountChange>,
    Signed(who): Signed,
) -> Result<Response, AppError> {
    if !state.identities.remove_password(&who).await? {
        return Err(AppError::new(ErrorCode::NotFound, "this account has no password"));
    }
    Ok(no_store(StatusCode::NO_CONTENT.into_response()))
}

/// Signs in with an account's name and password: a new session of the account.
#[utoipa::path(
    post,
    path = "/api/v1/passwords/sign-in",
    tag = "accounts",
    request_body(content = PasswordSignIn, description = "The account's name and password"),
    responses(
        (status = 200, description = "Signed in to the account (a new session); with `session: cookie` the `spades_session` cookie is set", body = SignedIn),
        (status = 400, description = "A body of the wrong shape (`invalid_options`)", body = ApiError),
        (status = 401, description = "The name and password signed nobody in (`unauthorized`): the same answer, after the same work, for an unknown name, an account without a password and a wrong password", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 404, description = "Passwords are not switched on on this server (`not_found`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
        (status = 429, description = "Too many sign-in attempts from this address (`limits.sign_ins_per_minute_per_ip`) or for the name (`limits.sign_ins_per_minute_per_account`), or too many requests (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Passwords cannot be read right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn password_sign_in(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    _: BrowserOrigin<SigningIn>,
    JsonBody(req, limited): JsonBody<PasswordSignIn, PerAddress<SignIns>>,
) -> Result<Response, AppError> {
    let who = Requester::new(headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()), limited.client);
    let may_try = |account| state.limits.allow_account_sign_in(account);
    let (signed, token) = state.passwords.sign_in(&req.name, &req.password, &who, may_try).await?;
    Ok(signed_in(&state, peer, &headers, &signed, &token, req.session, false))
}

/// The cookie that binds an OpenID flow to the browser that began it.
pub const OIDC_COOKIE: &str = "spades_oidc";

/// The flow cookie: set for the provider's round trip, or cleared.
fn oidc_cookie(flow: Option<Uuid>, secure: bool) -> HeaderValue {
    match flow {
        Some(flow) => {
            set_cookie(OIDC_COOKIE, &flow.to_string(), "/api/v1/oidc", crate::oidc::FLOW_SECS, secure)
        }
        None => set_cookie(OIDC_COOKIE, "", "/api/v1/oidc", 0, secure),
    }
}

/// A `303 See Other` to `location`.
fn see_other(location: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, v);
    }
    no_store(response)
}

/// Back to the account page, saying why the flow ended there.
fn back_refused(refusal: crate::oidc::Refusal) -> Response {
    see_other(&format!("/?oidc_error={}#/me", refusal.as_str()))
}

/// `GET /api/v1/oidc/{provider}/start`: `link=true` links the identity to
/// the signed-in account instead of signing in.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OidcStart {
    /// Link the identity to the signed-in account (true) rather than sign
    /// in with it (false, the default).
    #[serde(default)]
    pub link: bool,
}

/// Begins signing in with an OpenID provider (a browser navigates here).
#[utoipa::path(
    get,
    path = "/api/v1/oidc/{provider}/start",
    tag = "accounts",
    params(("provider" = String, Path, description = "The provider's id (`GET /api/v1/sign-in/methods`)"), OidcStart),
    responses(
        (status = 303, description = "To the provider's sign-in (`Location`), the `spades_oidc` cookie set for the round trip; or, refused, back to `/?oidc_error=<why>#/me`: `unavailable` (the provider cannot be reached now; the server tries again by itself), `signed_out` (`link` without a session), `cross_site` (`link` asked by a page of another site: `Sec-Fetch-Site`), `storage`; an unknown provider is `expired`"),
        (status = 400, description = "A query that is not `link=true` or `link=false` (`bad_message`)", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
    )
)]
pub async fn oidc_start(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(provider): Path<String>,
    Query(query): Query<OidcStart>,
) -> Response {
    use crate::oidc::Refusal;
    let link = if query.link {
        // A link ties an identity to the account for good: only this
        // site's own pages may ask for one (browsers say where a
        // navigation came from).
        let from = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
        if from.is_some_and(|f| f != "same-origin" && f != "none") {
            return back_refused(Refusal::CrossSite);
        }
        match crate::boundary::signed_if_any(&state, &headers).await {
            Ok(Some(who)) => Some(who),
            Ok(None) => return back_refused(Refusal::SignedOut),
            Err(_) => return back_refused(Refusal::Storage),
        }
    } else {
        None
    };
    match state.oidc.start(&provider, link.as_ref()).await {
        Ok((url, flow)) => {
            let mut response = see_other(&url);
            response
                .headers_mut()
                .insert(header::SET_COOKIE, oidc_cookie(Some(flow), secure(&state, peer, &headers)));
            response
        }
        Err(e) => back_refused(match e.code {
            ErrorCode::ProviderUnavailable => Refusal::Unavailable,
            ErrorCode::NotFound => Refusal::Expired,
            _ => Refusal::Storage,
        }),
    }
}

/// What a provider sends back: `state` and `code`, or `error`.
#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct OidcCallback {
    /// The flow's `state`, as the server sent it.
    pub state: Option<String>,
    /// The authorization code (used once).
    pub code: Option<String>,
    /// The provider's refusal (`access_denied`).
    pub error: Option<String>,
    /// The issuer that answered (RFC 9207); when given, it must be the
    /// provider's, exactly.
    pub iss: Option<String>,
}

impl std::fmt::Debug for OidcCallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcCallback").field("error", &self.error).finish_non_exhaustive()
    }
}

/// Where an OpenID provider sends the browser back.
#[utoipa::path(
    get,
    path = "/api/v1/oidc/{provider}/callback",
    tag = "accounts",
    params(("provider" = String, Path, description = "The provider's id"), OidcCallback),
    responses(
        (status = 303, description = "Back to the account page (`Location`), the `spades_oidc` cookie cleared: `/?oidc=signed_in#/me` or `/?oidc=created#/me` (a new account) with the `spades_session` cookie set, `/?oidc=linked#/me`; or `/?oidc_error=<why>#/me`: `expired` (no flow of this browser, one used or run out, a wrong `state`), `denied` (the provider said no), `failed` (the code, or the ID token's signature, issuer, audience or nonce, did not check; an `iss` that is not the provider's), `taken` (the identity is another account's: nothing is merged), `signed_out` (a link whose browser is no longer signed in to the account that began it), `unavailable`, `storage`"),
        (status = 400, description = "A query that cannot be read (a parameter twice: `bad_message`)", body = ApiError),
        (status = 429, description = "Too many sign-in attempts from this address (`limits.sign_ins_per_minute_per_ip`), or too many requests (`rate_limited`; see `Retry-After`)", body = ApiError),
    )
)]
pub async fn oidc_callback(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Path(provider): Path<String>,
    Query(query): Query<OidcCallback>,
    limited: PerAddress<SignIns>,
) -> Response {
    use crate::oidc::Finished;
    let secure = secure(&state, peer, &headers);
    let flow = cookie(&headers, OIDC_COOKIE).and_then(|v| v.parse::<Uuid>().ok());
    let who = Requester::new(headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()), limited.client);
    let signed = crate::boundary::signed_if_any(&state, &headers).await.ok().flatten().map(|s| s.account.id);
    let finished = state
        .oidc
        .finish(
            &provider,
            flow,
            crate::oidc::Answer { state: query.state, code: query.code, error: query.error, iss: query.iss },
            signed,
            &who,
        )
        .await;
    let mut response = match finished {
        Ok(Finished::SignedIn { token, created }) => {
            let mut response = see_other(if created { "/?oidc=created#/me" } else { "/?oidc=signed_in#/me" });
            let cookie = session_cookie(&token.0, state.config.accounts.session_secs, secure);
            response.headers_mut().append(header::SET_COOKIE, cookie);
            response
        }
        Ok(Finished::Linked) => see_other("/?oidc=linked#/me"),
        Err(refusal) => back_refused(refusal),
    };
    response.headers_mut().append(header::SET_COOKIE, oidc_cookie(None, secure));
    response
}

/// Unlinks an OpenID identity from the signed-in account.
#[utoipa::path(
    delete,
    path = "/api/v1/me/oidc/{identity}",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    params(("identity" = String, Path, description = "The identity's id (`GET /api/v1/me/identities`)")),
    responses(
        (status = 204, description = "Unlinked: it signs nobody in to this account any more (signing in with it again makes a new account)"),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 404, description = "No identity of this account has this id (`not_found`)", body = ApiError),
        (status = 409, description = "It is the account's only way left to sign in (`last_sign_in`): add another first", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Identities cannot be written right now (`storage_unavailable`), or the server is too busy (`capacity`, `internal`)", body = ApiError),
    )
)]
pub async fn unlink_oidc(
    State(state): State<AppState>,
    Path(identity): Path<String>,
    _: BrowserOrigin<AccountChange>,
    Signed(who): Signed,
) -> Result<Response, AppError> {
    let not_found = || AppError::new(ErrorCode::NotFound, "no identity of yours has this id");
    let id = identity.parse::<Uuid>().map_err(|_| not_found())?;
    if !state.identities.remove_oidc(&who, id).await? {
        return Err(not_found());
    }
    Ok(no_store(StatusCode::NO_CONTENT.into_response()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_cookies_are_http_only_and_lax() {
        assert_eq!(
            session_cookie("ab12", 60, false),
            "spades_session=ab12; Path=/; HttpOnly; SameSite=Lax; Max-Age=60"
        );
        assert_eq!(
            session_cookie("", 0, true),
            "spades_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure"
        );
        let flow = Uuid::nil();
        assert_eq!(
            oidc_cookie(Some(flow), false),
            format!("spades_oidc={flow}; Path=/api/v1/oidc; HttpOnly; SameSite=Lax; Max-Age=600").as_str()
        );
        assert_eq!(
            oidc_cookie(None, true),
            "spades_oidc=; Path=/api/v1/oidc; HttpOnly; SameSite=Lax; Max-Age=0; Secure"
        );
    }
}

/// `body`, 201 when it was made now, 200 when it stood already (a report
/// of the same target, a block).
fn made<T: serde::Serialize>((body, new): (T, bool)) -> Response {
    let status = if new { StatusCode::CREATED } else { StatusCode::OK };
    no_store((status, Json(body)).into_response())
}

/// Reports a chat message said at a table: the writer's account, the
/// messages around it and the table's public status are kept with the
/// report for the operators.
#[utoipa::path(
    post,
    path = "/api/v1/tables/{id}/chat/{message}/report",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(
        ("id" = String, Path, description = "The table's id"),
        ("message" = u64, Path, minimum = 0, maximum = 9_223_372_036_854_775_807_u64, description = "The message's `id` (of its `chat` frame)"),
    ),
    request_body(content = NewReport, description = "Why"),
    responses(
        (status = 201, description = "Reported", body = ReportReceipt),
        (status = 200, description = "The signed-in account's open report of this message, made before (nothing new)", body = ReportReceipt),
        (status = 400, description = "A text too long or with control characters, or a body that is not a report (`invalid_options`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A suspended or banned account (`suspended`, `banned`), or a browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 404, description = "No such message is kept at this table (`not_found`; also for a table id that is not a UUID: `table_not_found`)", body = ApiError),
        (status = 409, description = "The message is the signed-in account's own (`invalid_options`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
        (status = 429, description = "More than `moderation.reports_per_hour` reports in an hour, or too many requests (`rate_limited`)", body = ApiError),
    )
)]
pub async fn report_message(
    State(state): State<AppState>,
    Path((table, message)): Path<(String, String)>,
    _: BrowserOrigin<Reporting>,
    Signed(who): Signed,
    JsonBody(req, ()): JsonBody<NewReport>,
) -> Result<Response, AppError> {
    let table = table_id(&table)?;
    let message = key_of(&message).ok_or_else(|| {
        AppError::new(ErrorCode::NotFound, "no message with this number is kept at this table")
    })?;
    Ok(made(state.reports.file(&who, table, Target::Message(message), &req).await?))
}

/// Reports the player in a seat of a table: their account, the table's
/// last messages and its public status are kept with the report for the
/// operators.
#[utoipa::path(
    post,
    path = "/api/v1/tables/{id}/seats/{seat}/report",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(
        ("id" = String, Path, description = "The table's id"),
        ("seat" = Seat, Path, description = "The seat of the player reported"),
    ),
    request_body(content = NewReport, description = "Why"),
    responses(
        (status = 201, description = "Reported", body = ReportReceipt),
        (status = 200, description = "The signed-in account's open report of this seat's player, made before (nothing new)", body = ReportReceipt),
        (status = 400, description = "A text too long or with control characters, or a body that is not a report (`invalid_options`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A suspended or banned account (`suspended`, `banned`), or a browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 404, description = "No such table (`table_not_found`), or nobody in this seat (`not_found`)", body = ApiError),
        (status = 409, description = "The seat is the signed-in account's own, or a bot's (`invalid_options`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
        (status = 429, description = "More than `moderation.reports_per_hour` reports in an hour, or too many requests (`rate_limited`)", body = ApiError),
    )
)]
pub async fn report_seat(
    State(state): State<AppState>,
    Path((table, seat)): Path<(String, String)>,
    _: BrowserOrigin<Reporting>,
    Signed(who): Signed,
    JsonBody(req, ()): JsonBody<NewReport>,
) -> Result<Response, AppError> {
    let table = table_id(&table)?;
    let seat = Seat::ALL
        .into_iter()
        .find(|s| s.name().to_ascii_lowercase() == seat)
        .ok_or_else(|| AppError::new(ErrorCode::NotFound, "a seat is north, east, south or west"))?;
    Ok(made(state.reports.file(&who, table, Target::Seat(seat), &req).await?))
}

/// The players whose chat the signed-in account blocks, the latest first.
#[utoipa::path(
    get,
    path = "/api/v1/me/blocks",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "The accounts blocked, each with its name now", body = Vec<ChatBlock>),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
    )
)]
pub async fn blocks(State(state): State<AppState>, Signed(who): Signed) -> Result<Response, AppError> {
    Ok(no_store(Json(state.blocks.list(&who).await?).into_response()))
}

/// Blocks a player's chat for the signed-in account, on every device and
/// at every table: its clients hide the `chat` frames of that account. The
/// player is not told.
#[utoipa::path(
    put,
    path = "/api/v1/me/blocks/{account}",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    params(("account" = String, Path, description = "The id of the account to block (a `chat` frame's `account`)")),
    responses(
        (status = 201, description = "Blocked", body = ChatBlock),
        (status = 200, description = "It was blocked already", body = ChatBlock),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 404, description = "No account has this id (`not_found`)", body = ApiError),
        (status = 409, description = "The signed-in account itself, or 500 blocked already (`invalid_options`)", body = ApiError),
    )
)]
pub async fn block(
    State(state): State<AppState>,
    Path(account): Path<String>,
    _: BrowserOrigin<AccountChange>,
    Signed(who): Signed,
) -> Result<Response, AppError> {
    Ok(made(state.blocks.block(&who, id_of(&account, "account")?).await?))
}

/// Unblocks a player's chat.
#[utoipa::path(
    delete,
    path = "/api/v1/me/blocks/{account}",
    tag = "accounts",
    security(("session_cookie" = []), ("bearer" = [])),
    params(("account" = String, Path, description = "The id of the account blocked")),
    responses(
        (status = 204, description = "Unblocked"),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 404, description = "The account is not blocked (`not_found`)", body = ApiError),
    )
)]
pub async fn unblock(
    State(state): State<AppState>,
    Path(account): Path<String>,
    _: BrowserOrigin<AccountChange>,
    Signed(who): Signed,
) -> Result<Response, AppError> {
    state.blocks.unblock(&who, id_of(&account, "account")?).await?;
    Ok(no_store(StatusCode::NO_CONTENT.into_response()))
}
