//! The REST boundary: the checks a state-changing route needs, as
//! extractors it names in its signature. Each refuses with an [`AppError`],
//! so every refusal is the documented `{"code","message"}` body.
//!
//! - [`BrowserOrigin<A>`]: a page of an origin that is neither this
//!   server's nor allowed may not do `A` (403).
//! - [`JsonBody<T, G>`]: the body, read under the route's size limit (413),
//!   of `Content-Type: application/json` unless empty (415), then the
//!   extractor `G` (say a [`PerAddress`] rate), then parsed into `T` (400).
//!   `G` runs only for a body that could be read, so an unreadable or
//!   mistyped body costs no rate, and an address over its rate is refused
//!   before its JSON is judged.
//! - [`PerAddress<L>`]: the client address's rate `L` (429 with
//!   `Retry-After`), counted in the `rate_limited` metric.
//! - [`cleaned_name`]: a display name from a body, cleaned or refused.
//! - [`Signed`]: the request's session (`Authorization: Bearer`, else the
//!   `spades_session` cookie), found and renewed, else 401.
//!
//! A route that creates something declares, in this order,
//! `BrowserOrigin<…>` and `JsonBody<Its, PerAddress<ItsLimit>>`; a new limit
//! is one [`AddressLimit`] impl, a new body one [`JsonRequest`] impl, a new
//! refused action one [`Action`] impl.

use std::marker::PhantomData;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Query, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use serde::de::DeserializeOwned;
use spades_protocol::{
    AddPasskey, CloseTable, CreateTable, ErrorCode, GuestSignIn, LiftSanction, NewReport, NewSanction,
    NewSession, OperatorChange, PasskeySignIn, PasswordSignIn, RemoveChat, RenameAccount, ResolveReport,
    SetPassword,
};

use crate::accounts::SignedIn;
use crate::admission::{Limits, origin_allowed};
use crate::error::AppError;
use crate::state::AppState;
use crate::text::clean_name;

/// The largest request body read, in bytes (larger ones are answered 413).
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// What a page of a refused origin may not do.
pub trait Action: Send + Sync + 'static {
    /// The end of the refusal "pages of this origin may not …".
    const REFUSED: &'static str;
}

/// Creating a table.
#[derive(Debug)]
pub struct TableCreation;

impl Action for TableCreation {
    const REFUSED: &'static str = "create tables";
}

/// Opening a WebSocket connection.
#[derive(Debug)]
pub struct Connecting;

impl Action for Connecting {
    const REFUSED: &'static str = "connect";
}

/// Signing in (and making a guest account).
#[derive(Debug)]
pub struct SigningIn;

impl Action for SigningIn {
    const REFUSED: &'static str = "sign in";
}

/// Changing an account or its sessions (a rename, signing out).
#[derive(Debug)]
pub struct AccountChange;

impl Action for AccountChange {
    const REFUSED: &'static str = "change accounts";
}

/// Reporting a chat message or a player.
#[derive(Debug)]
pub struct Reporting;

impl Action for Reporting {
    const REFUSED: &'static str = "report players";
}

/// The request is not from a browser page of a refused origin: same-origin
/// pages and clients without an `Origin` header always pass, other origins
/// only when listed in `server.allowed_origins` ([`origin_allowed`]).
/// Refused: 403, `bad_message`, "pages of this origin may not `A`".
#[derive(Debug)]
pub struct BrowserOrigin<A>(PhantomData<A>);

impl<A: Action> FromRequestParts<AppState> for BrowserOrigin<A> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        if origin_allowed(&parts.headers, &state.config.server.allowed_origins) {
            Ok(BrowserOrigin(PhantomData))
        } else {
            Err(AppError::new(ErrorCode::BadMessage, format!("pages of this origin may not {}", A::REFUSED))
                .with_status(StatusCode::FORBIDDEN))
        }
    }
}

/// One of the per-address rate limits of [`Limits`].
pub trait AddressLimit: Send + Sync + 'static {
    /// The limit's label in the `rate_limited` metric.
    const METRIC: &'static str;
    /// The reason given with the 429.
    const REFUSAL: &'static str;

    /// Whether `ip` may go on now; else how long to wait.
    ///
    /// # Errors
    /// The wait, when the address is over its limit.
    fn check(limits: &Limits, ip: IpAddr) -> Result<(), Duration>;
}

/// Tables created per minute (`limits.tables_per_minute_per_ip`).
#[derive(Debug)]
pub struct NewTables;

impl AddressLimit for NewTables {
    const METRIC: &'static str = "tables";
    const REFUSAL: &'static str = "too many new tables from your address: wait a minute";

    fn check(limits: &Limits, ip: IpAddr) -> Result<(), Duration> {
        limits.allow_table(ip)
    }
}

/// Sign-in attempts with a passkey from the address
/// (`limits.sign_ins_per_minute_per_ip`).
#[derive(Debug)]
pub struct SignIns;

impl AddressLimit for SignIns {
    const METRIC: &'static str = "sign_ins";
    const REFUSAL: &'static str = "too many sign-in attempts from your address: wait a minute";

    fn check(limits: &Limits, ip: IpAddr) -> Result<(), Duration> {
        limits.allow_sign_in(ip)
    }
}

/// The client's address (behind trusted proxies, [`AppState::client_ip`])
/// is within its rate `L`; the request counts against it. Refused: 429,
/// `rate_limited`, with `Retry-After`.
#[derive(Debug)]
pub struct PerAddress<L> {
    /// The client address counted.
    pub client: IpAddr,
    limit: PhantomData<L>,
}

impl<L: AddressLimit> FromRequestParts<AppState> for PerAddress<L> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        // Always there when served by `app.rs`; missing only in a wiring
        // mistake, answered as axum would (500).
        let ConnectInfo(peer) = ConnectInfo::<SocketAddr>::from_request_parts(parts, state)
            .await
            .map_err(|_| AppError::internal("the request failed"))?;
        let client = state.client_ip(peer.ip(), &parts.headers);
        if let Err(wait) = L::check(&state.limits, client) {
            crate::metrics::rate_limited(L::METRIC);
            return Err(AppError::rate_limited(L::REFUSAL, wait));
        }
        Ok(PerAddress { client, limit: PhantomData })
    }
}

/// A request body [`JsonBody`] reads, and the words its refusals use.
pub trait JsonRequest: DeserializeOwned + Send {
    /// What the body describes: "table".
    const NOUN: &'static str;
    /// With its article: "a table".
    const A_NOUN: &'static str;
    /// An example body, for the refusal of one that is not an object.
    const EXAMPLE: &'static str;
    /// Top-level fields that hold an object of another standard, read by
    /// its own parser, where arrays are allowed (a WebAuthn credential).
    const FOREIGN: &'static [&'static str] = &[];

    /// The value of an empty body (only white space), which needs no
    /// content type; `None`: an empty body is parsed like any other (and
    /// refused as not JSON).
    fn empty() -> Option<Self> {
        None
    }
}

impl JsonRequest for CreateTable {
    const NOUN: &'static str = "table";
    const A_NOUN: &'static str = "a table";
    const EXAMPLE: &'static str = "{\"name\": \"Friday\"}";

    fn empty() -> Option<Self> {
        Some(CreateTable::default())
    }
}

impl JsonRequest for GuestSignIn {
    const NOUN: &'static str = "sign-in";
    const A_NOUN: &'static str = "a sign-in";
    const EXAMPLE: &'static str = "{\"device_secret\": \"<32 to 128 characters>\", \"name\": \"Ann\"}";
}

impl JsonRequest for AddPasskey {
    const NOUN: &'static str = "passkey";
    const A_NOUN: &'static str = "a passkey";
    const EXAMPLE: &'static str = "{\"ceremony\": \"<id>\", \"name\": \"Phone\", \"credential\": {}}";
    const FOREIGN: &'static [&'static str] = &["credential"];
}

impl JsonRequest for PasskeySignIn {
    const NOUN: &'static str = "passkey sign-in";
    const A_NOUN: &'static str = "a passkey sign-in";
    const EXAMPLE: &'static str = "{\"ceremony\": \"<id>\", \"credential\": {}}";
    const FOREIGN: &'static [&'static str] = &["credential"];
}

impl JsonRequest for NewSession {
    const NOUN: &'static str = "session";
    const A_NOUN: &'static str = "a session";
    const EXAMPLE: &'static str = "{\"client\": \"Terminal on my laptop\"}";

    fn empty() -> Option<Self> {
        Some(NewSession::default())
    }
}

impl JsonRequest for SetPassword {
    const NOUN: &'static str = "password";
    const A_NOUN: &'static str = "a password";
    const EXAMPLE: &'static str =
        "{\"password\": \"<8 to 128 characters>\", \"current_password\": \"<when changing>\"}";
}

impl JsonRequest for PasswordSignIn {
    const NOUN: &'static str = "password sign-in";
    const A_NOUN: &'static str = "a password sign-in";
    const EXAMPLE: &'static str = "{\"name\": \"Ann\", \"password\": \"<the password>\"}";
}

impl JsonRequest for RenameAccount {
    const NOUN: &'static str = "rename";
    const A_NOUN: &'static str = "a rename";
    const EXAMPLE: &'static str = "{\"name\": \"Ann\"}";
}

impl JsonRequest for NewSanction {
    const NOUN: &'static str = "sanction";
    const A_NOUN: &'static str = "a sanction";
    const EXAMPLE: &'static str =
        "{\"kind\": \"suspend\", \"reason\": \"abuse in chat\", \"seconds\": 86400}";
}

impl JsonRequest for LiftSanction {
    const NOUN: &'static str = "lifting";
    const A_NOUN: &'static str = "a lifting";
    const EXAMPLE: &'static str = "{\"reason\": \"appeal accepted\"}";
}

impl JsonRequest for RemoveChat {
    const NOUN: &'static str = "removal";
    const A_NOUN: &'static str = "a removal";
    const EXAMPLE: &'static str = "{\"reason\": \"insults another player\"}";
}

impl JsonRequest for CloseTable {
    const NOUN: &'static str = "closing";
    const A_NOUN: &'static str = "a closing";
    const EXAMPLE: &'static str = "{\"reason\": \"the players abuse each other\"}";
}

impl JsonRequest for ResolveReport {
    const NOUN: &'static str = "resolution";
    const A_NOUN: &'static str = "a resolution";
    const EXAMPLE: &'static str = "{\"reason\": \"muted for a day\"}";
}

impl JsonRequest for NewReport {
    const NOUN: &'static str = "report";
    const A_NOUN: &'static str = "a report";
    const EXAMPLE: &'static str = "{\"reason\": \"abusive_chat\", \"text\": \"insults my partner\"}";
}

impl JsonRequest for OperatorChange {
    const NOUN: &'static str = "operator change";
    const A_NOUN: &'static str = "an operator change";
    const EXAMPLE: &'static str = "{\"operator\": true, \"reason\": \"runs the Tuesday club\"}";
}

/// The name of the session cookie.
pub const SESSION_COOKIE: &str = "spades_session";

/// The session token a request presents.
#[derive(PartialEq, Eq)]
pub enum Presented {
    /// None.
    Nothing,
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// The `spades_session` cookie.
    Cookie(String),
    /// An `Authorization` header of another form.
    Malformed,
}

impl std::fmt::Debug for Presented {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Presented::Nothing => "Nothing",
            Presented::Bearer(_) => "Bearer(<secret>)",
            Presented::Cookie(_) => "Cookie(<secret>)",
            Presented::Malformed => "Malformed",
        })
    }
}

/// The session token of a request: `Authorization: Bearer` first (native
/// clients), else the `spades_session` cookie (browsers).
pub fn presented_session(headers: &HeaderMap) -> Presented {
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        let token = value.to_str().ok().and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim().to_owned())
        });
        return token.map_or(Presented::Malformed, Presented::Bearer);
    }
    cookie(headers, SESSION_COOKIE).map_or(Presented::Nothing, |value| Presented::Cookie(value.to_owned()))
}

/// The value of cookie `name` in a request (quotes taken off), unless
/// absent or empty.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, v)| *k == name && !v.is_empty())
        .map(|(_, v)| v.trim_matches('"'))
}

/// The request's signed-in account and session ([`presented_session`],
/// found and renewed by [`crate::accounts::Accounts::authenticate`]).
/// Refused: 401, `unauthorized`.
#[derive(Debug)]
pub struct Signed(pub SignedIn);

impl FromRequestParts<AppState> for Signed {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        signed(state, &parts.headers).await.map(Signed)
    }
}

/// The signed-in account and session of a request with `headers` (what
/// [`Signed`] extracts).
///
/// # Errors
/// 401 `unauthorized`: no session, a malformed header, a session that
/// ended; storage.
pub async fn signed(state: &AppState, headers: &HeaderMap) -> Result<SignedIn, AppError> {
    session_of(state, presented_session(headers)).await
}

/// The account and session of what a request `presented`, or 401.
async fn session_of(state: &AppState, presented: Presented) -> Result<SignedIn, AppError> {
    match presented {
        Presented::Bearer(token) | Presented::Cookie(token) => state.accounts.authenticate(&token).await,
        Presented::Nothing => Err(AppError::new(
            ErrorCode::Unauthorized,
            "sign in first: this needs a session (POST /api/v1/accounts/guest)",
        )),
        Presented::Malformed => Err(AppError::new(
            ErrorCode::Unauthorized,
            "the Authorization header must be \"Bearer\" and a session token",
        )),
    }
}

/// The request of an operator: from no other site, signed in, and the
/// account an operator. Refused: 403 `bad_message` for a request another
/// site's page made (an `Origin` other than this server's own, whatever
/// `server.allowed_origins` says, or a `Sec-Fetch-Site` other than
/// `same-origin` or `none`), 401 `unauthorized` without a session, 403
/// `not_operator` for an account that is not an operator, 403 `suspended`
/// or `banned` for an operator who is. Read from the
/// store at every request, so a revoked role counts at once.
#[derive(Debug)]
pub struct Operator(pub SignedIn);

impl FromRequestParts<AppState> for Operator {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        let fetched_here = parts
            .headers
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .is_none_or(|site| site == "same-origin" || site == "none");
        if !fetched_here || !origin_allowed(&parts.headers, &[]) {
            return Err(AppError::new(
                ErrorCode::BadMessage,
                "operator routes answer only this server's own pages and clients that are not browsers",
            )
            .with_status(StatusCode::FORBIDDEN));
        }
        let who = signed(state, &parts.headers).await?;
        if !state.moderation.is_operator(who.account.id).await? {
            return Err(AppError::new(ErrorCode::NotOperator, "this is for the server's operators only"));
        }
        // A suspended or banned operator may do nothing as one (not even
        // lift their own sanction); read strictly: a store that cannot
        // answer refuses.
        if let Some(sanction) = state.moderation.standing(who.account.id).await?.barred {
            return Err(crate::moderation::refusal(&sanction));
        }
        Ok(Operator(who))
    }
}

/// The signed-in account of a request that may come with or without a
/// session: a bearer token must be a live session (a native client asked
/// for it); a cookie that is not is a browser's old one, and the request
/// goes on without a session.
///
/// # Errors
/// 401 `unauthorized` for a bearer token of no live session or a
/// malformed `Authorization` header; storage.
pub async fn signed_if_any(state: &AppState, headers: &HeaderMap) -> Result<Option<SignedIn>, AppError> {
    match presented_session(headers) {
        Presented::Nothing => Ok(None),
        Presented::Cookie(token) => Ok(state.accounts.authenticate(&token).await.ok()),
        presented => session_of(state, presented).await.map(Some),
    }
}

/// A JSON body `T`, read and checked in this order:
///
/// 1. read under the route's `DefaultBodyLimit`: over it 413, unreadable
///    400 (`bad_message`);
/// 2. unless empty, `Content-Type: application/json`, else 415
///    (`bad_message`);
/// 3. the extractor `G` (`()`: none), whose refusal is answered as is, and
///    whose value is kept;
/// 4. parsed: a JSON object holding no array anywhere, read as `T`, else
///    400 (`invalid_options`) saying where and why in plain words.
#[derive(Debug)]
pub struct JsonBody<T, G = ()>(pub T, pub G);

impl<T, G, S> FromRequest<S> for JsonBody<T, G>
where
    T: JsonRequest,
    G: FromRequestParts<S>,
    AppError: From<G::Rejection>,
    S: Send + Sync,
{
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, AppError> {
        let (mut parts, body) = req.into_parts();
        // The route's body limit travels in the extensions.
        let mut read = Request::new(body);
        *read.extensions_mut() = parts.extensions.clone();
        let body = Bytes::from_request(read, state).await.map_err(|e| {
            let message = if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
                format!("{} is described in at most {MAX_BODY_BYTES} bytes", T::A_NOUN)
            } else {
                "the request body could not be read".to_owned()
            };
            AppError::new(ErrorCode::BadMessage, message).with_status(e.status())
        })?;
        let empty = body.iter().all(u8::is_ascii_whitespace);
        if !empty && !is_json(&parts.headers) {
            return Err(AppError::new(
                ErrorCode::BadMessage,
                format!("send the {} as Content-Type: application/json", T::NOUN),
            )
            .with_status(StatusCode::UNSUPPORTED_MEDIA_TYPE));
        }
        let gate = G::from_request_parts(&mut parts, state).await?;
        let value = match empty.then(T::empty).flatten() {
            Some(value) => value,
            None => parse(&body)?,
        };
        Ok(JsonBody(value, gate))
    }
}

/// `body` as a `T`: an object, without arrays, of `T`'s fields.
fn parse<T: JsonRequest>(body: &[u8]) -> Result<T, AppError> {
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|_| {
        AppError::new(ErrorCode::InvalidOptions, format!("invalid {}: the body is not JSON", T::NOUN))
    })?;
    // serde would read a struct from an array too (`[]`, `{"options": []}`):
    // no part of a request body is an array, but a foreign object's.
    let ours_has_array = value
        .as_object()
        .is_none_or(|fields| fields.iter().any(|(k, v)| !T::FOREIGN.contains(&k.as_str()) && has_array(v)));
    if ours_has_array {
        return Err(AppError::new(
            ErrorCode::InvalidOptions,
            format!("{} is described by a JSON object such as {}, without arrays", T::A_NOUN, T::EXAMPLE),
        ));
    }
    serde_path_to_error::deserialize(&value).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." { String::new() } else { format!(" at {at}") };
        AppError::new(
            ErrorCode::InvalidOptions,
            format!("invalid {}{at}: {}", T::NOUN, plain_serde(&e.inner().to_string())),
        )
    })
}

/// A display name from a body, cleaned by [`clean_name`] (trimmed, 1 to
/// `max` characters, nothing invisible); refused with `invalid_name` (400)
/// and "`what` must be 1 to `max` characters, …".
///
/// # Errors
/// The refusal, when the name is empty, too long or hides characters.
pub fn cleaned_name(raw: &str, max: usize, what: &str) -> Result<String, AppError> {
    clean_name(raw, max).ok_or_else(|| {
        AppError::new(
            ErrorCode::InvalidName,
            format!("{what} must be 1 to {max} characters, without control or invisible characters"),
        )
    })
}

/// A serde error in plain words: no Rust type names, no "invalid type"
/// phrasing, quotes instead of backticks.
fn plain_serde(message: &str) -> String {
    let quoted = message.replace('`', "\"");
    if let Some(rest) = quoted.strip_prefix("unknown variant ") {
        let rest = rest
            .replace(", expected one of ", ": it must be one of ")
            .replace(", expected ", ": it must be ");
        return format!("unknown value {rest}");
    }
    if let Some(rest) = quoted.strip_prefix("unknown field ") {
        let rest = rest
            .replace(", expected one of ", ": the fields are ")
            .replace(", expected ", ": the fields are ");
        return format!("unknown field {rest}");
    }
    if let Some(field) = quoted.strip_prefix("missing field ") {
        return format!("{field} is missing");
    }
    if let Some(rest) =
        quoted.strip_prefix("invalid type: ").or_else(|| quoted.strip_prefix("invalid value: "))
    {
        let got = rest.split(", expected").next().unwrap_or(rest);
        return format!("a value of the wrong kind ({got})");
    }
    quoted
}

/// True when `value` holds an array anywhere.
fn has_array(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Array(_) => true,
        serde_json::Value::Object(fields) => fields.values().any(has_array),
        _ => false,
    }
}

/// True when the `Content-Type` is `application/json` (any parameters, any
/// case).
pub fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// A query string as read, or why it could not be.
pub type RawQuery = Result<Query<Vec<(String, String)>>, axum::extract::rejection::QueryRejection>;

/// An id in a path: a UUID, else 404 `not_found` ("no `what` has this id").
///
/// # Errors
/// The 404.
pub fn id_of(raw: &str, what: &str) -> Result<uuid::Uuid, AppError> {
    uuid::Uuid::parse_str(raw)
        .map_err(|_| AppError::new(ErrorCode::NotFound, format!("no {what} has this id")))
}

/// A table's id in a path: a UUID, else 404 `table_not_found`.
///
/// # Errors
/// The 404.
pub fn table_id(raw: &str) -> Result<uuid::Uuid, AppError> {
    uuid::Uuid::parse_str(raw).map_err(|_| AppError::new(ErrorCode::TableNotFound, "no such table"))
}

/// A key of the store as text: a whole number from 0 to 2^63 - 1 (signed
/// 64-bit keys).
pub fn key_of(text: &str) -> Option<u64> {
    text.parse::<i64>().ok().and_then(|n| u64::try_from(n).ok())
}

/// A refused query string: 400, `bad_message`.
pub fn bad_query(message: impl Into<String>) -> AppError {
    AppError::new(ErrorCode::BadMessage, message)
}

/// The query's pairs, each of a `known` name and given once.
pub fn query_pairs(query: RawQuery, known: &[&str]) -> Result<Vec<(String, String)>, AppError> {
    let Query(pairs) =
        query.map_err(|_| bad_query("the query string could not be read: it must be URL-encoded UTF-8"))?;
    for (i, (name, _)) in pairs.iter().enumerate() {
        let shown: String = name.chars().take(32).filter(|c| !c.is_control()).collect();
        if !known.contains(&name.as_str()) {
            return Err(bad_query(format!(
                "unknown parameter \"{shown}\": the parameters are {}",
                known.join(", ")
            )));
        }
        if pairs[..i].iter().any(|(earlier, _)| earlier == name) {
            return Err(bad_query(format!("the parameter \"{shown}\" is given twice")));
        }
    }
    Ok(pairs)
}

/// The parameter `name`'s `true` or `false`.
pub fn bool_of(name: &str, value: &str) -> Result<bool, AppError> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(bad_query(format!("{name} must be true or false"))),
    }
}

/// A `limit` of 1..=`max`.
pub fn limit_of(value: &str, max: usize) -> Result<usize, AppError> {
    value
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=max).contains(n))
        .ok_or_else(|| bad_query(format!("limit must be a whole number from 1 to {max}")))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use axum::Router;
    use axum::body::Body;
    use axum::extract::DefaultBodyLimit;
    use axum::http::HeaderName;
    use axum::response::IntoResponse;
    use axum::routing::post;
    use tokio_util::sync::CancellationToken;
    use tower::ServiceExt;

    use super::*;
    use crate::config::Config;
    use crate::state::Shared;
    use crate::storage::Journal;

    fn state(config: Config) -> AppState {
        Shared::new(config, Journal::memory(), CancellationToken::new(), None).unwrap()
    }

    /// A request from 198.51.100.7 with `headers` and `body`.
    fn request(headers: &[(&str, &str)], body: &str) -> Request {
        let mut req = Request::post("/api/v1/tables").header(header::HOST, "cards.example");
        for (name, value) in headers {
            req = req.header(*name, *value);
        }
        let mut req = req.body(Body::from(body.to_owned())).unwrap();
        req.extensions_mut().insert(ConnectInfo(SocketAddr::from(([198, 51, 100, 7], 4000))));
        req
    }

    const JSON: (&str, &str) = ("content-type", "application/json");

    fn refusal(e: &AppError) -> (ErrorCode, &str, StatusCode) {
        (e.code, e.message.as_str(), e.status())
    }

    async fn origin<A: Action>(state: &AppState, origin: Option<&str>) -> Result<(), AppError> {
        let headers: Vec<(&str, &str)> = origin.iter().map(|o| ("origin", *o)).collect();
        let (mut parts, _) = request(&headers, "").into_parts();
        BrowserOrigin::<A>::from_request_parts(&mut parts, state).await.map(|_| ())
    }

    #[tokio::test]
    async fn browser_origin_refuses_other_sites_pages() {
        let mut config = Config::default();
        config.server.allowed_origins = vec!["https://friends.example".into()];
        let state = state(config);
        assert!(origin::<TableCreation>(&state, None).await.is_ok(), "no Origin: not a browser page");
        assert!(origin::<TableCreation>(&state, Some("http://cards.example")).await.is_ok(), "same origin");
        assert!(origin::<TableCreation>(&state, Some("https://friends.example")).await.is_ok(), "allowed");
        let e = origin::<TableCreation>(&state, Some("https://evil.example")).await.unwrap_err();
        assert_eq!(
            refusal(&e),
            (ErrorCode::BadMessage, "pages of this origin may not create tables", StatusCode::FORBIDDEN)
        );
        let e = origin::<Connecting>(&state, Some("https://evil.example")).await.unwrap_err();
        assert_eq!(
            refusal(&e),
            (ErrorCode::BadMessage, "pages of this origin may not connect", StatusCode::FORBIDDEN)
        );
    }

    #[tokio::test]
    async fn per_address_counts_each_client_against_its_limit() {
        let mut config = Config::default();
        config.limits.tables_per_minute_per_ip = 2;
        let state = state(config);
        let check = |headers: &[(&str, &str)]| {
            let (mut parts, _) = request(headers, "").into_parts();
            let state = Arc::clone(&state);
            async move { PerAddress::<NewTables>::from_request_parts(&mut parts, &state).await }
        };
        let first = check(&[]).await.unwrap();
        assert_eq!(first.client, IpAddr::from([198, 51, 100, 7]));
        // The peer is no trusted proxy: what it forwards does not count.
        assert!(check(&[("x-forwarded-for", "203.0.113.1")]).await.is_ok());
        let e = check(&[]).await.unwrap_err();
        assert_eq!(
            refusal(&e),
            (
                ErrorCode::RateLimited,
                "too many new tables from your address: wait a minute",
                StatusCode::TOO_MANY_REQUESTS
            )
        );
        assert!(e.into_response().headers().contains_key(header::RETRY_AFTER));
        // Without the peer's address (a wiring mistake): 500, as axum answers.
        let (mut parts, _) = Request::new(Body::empty()).into_parts();
        let e = PerAddress::<NewTables>::from_request_parts(&mut parts, &state).await.unwrap_err();
        assert_eq!(e.status(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    type Body1 = JsonBody<CreateTable, PerAddress<NewTables>>;

    async fn body(state: &AppState, headers: &[(&str, &str)], text: &str) -> Result<CreateTable, AppError> {
        Body1::from_request(request(headers, text), state).await.map(|JsonBody(value, _)| value)
    }

    #[tokio::test]
    async fn json_bodies_are_typed_objects_read_after_the_rate() {
        let mut config = Config::default();
        config.limits.tables_per_minute_per_ip = 3;
        let state = state(config);
        let named = body(&state, &[JSON], r#"{"name": " Friday "}"#).await.unwrap();
        assert_eq!(named.name.as_deref(), Some(" Friday "));
        assert_eq!(body(&state, &[], " \n").await.unwrap(), CreateTable::default(), "empty: no type needed");
        // Refused before the rate: no content type; costs nothing.
        for _ in 0..3 {
            let e = body(&state, &[], "{}").await.unwrap_err();
            assert_eq!(
                refusal(&e),
                (
                    ErrorCode::BadMessage,
                    "send the table as Content-Type: application/json",
                    StatusCode::UNSUPPORTED_MEDIA_TYPE
                )
            );
        }
        let e = body(&state, &[("content-type", "text/plain")], "{}").await.unwrap_err();
        assert_eq!(e.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        // Judged after the rate: bad JSON costs one.
        let e = body(&state, &[JSON], "{").await.unwrap_err();
        assert_eq!(
            refusal(&e),
            (ErrorCode::InvalidOptions, "invalid table: the body is not JSON", StatusCode::BAD_REQUEST)
        );
        // Over the rate: refused before the JSON is judged.
        let e = body(&state, &[JSON], "{").await.unwrap_err();
        assert_eq!(e.code, ErrorCode::RateLimited);
    }

    #[tokio::test]
    async fn json_bodies_refuse_arrays_and_unknown_fields_in_plain_words() {
        let state = state(Config::default());
        for array in ["[]", r#"{"options": []}"#, r#"{"options": {"rules": {"target": [1]}}}"#, "7"] {
            let e = body(&state, &[JSON], array).await.unwrap_err();
            assert_eq!(
                refusal(&e),
                (
                    ErrorCode::InvalidOptions,
                    "a table is described by a JSON object such as {\"name\": \"Friday\"}, without arrays",
                    StatusCode::BAD_REQUEST
                ),
                "{array}"
            );
        }
        let e = body(&state, &[JSON], r#"{"colour": "red"}"#).await.unwrap_err();
        assert_eq!(
            e.message,
            "invalid table at colour: unknown field \"colour\": the fields are \"name\" or \"options\""
        );
        let e = body(&state, &[JSON], r#"{"name": 7}"#).await.unwrap_err();
        assert_eq!(e.message, "invalid table at name: a value of the wrong kind (integer \"7\")");
    }

    #[tokio::test]
    async fn json_bodies_are_read_under_the_routes_limit() {
        async fn echo(JsonBody(req, ()): JsonBody<CreateTable>) -> String {
            req.name.unwrap_or_default()
        }
        let app = Router::new().route("/", post(echo)).layer(DefaultBodyLimit::max(64));
        let send = |text: String| {
            let req = Request::post("/").header("content-type", "application/json").body(Body::from(text));
            app.clone().oneshot(req.unwrap())
        };
        let ok = send(r#"{"name": "Friday"}"#.to_owned()).await.unwrap();
        assert_eq!(ok.status(), StatusCode::OK);
        let big = send(format!(r#"{{"name": "{}"}}"#, "x".repeat(100))).await.unwrap();
        assert_eq!(big.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let bytes = axum::body::to_bytes(big.into_body(), 1024).await.unwrap();
        let e: spades_protocol::ApiError = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(e.code, ErrorCode::BadMessage);
        assert_eq!(e.message, format!("a table is described in at most {MAX_BODY_BYTES} bytes"));
    }

    #[test]
    fn names_are_cleaned_or_refused() {
        assert_eq!(cleaned_name("  Friday ", 40, "the table name").unwrap(), "Friday");
        for bad in ["", "  ", "a\u{202E}b", &"x".repeat(41)] {
            let e = cleaned_name(bad, 40, "the table name").unwrap_err();
            assert_eq!(
                refusal(&e),
                (
                    ErrorCode::InvalidName,
                    "the table name must be 1 to 40 characters, without control or invisible characters",
                    StatusCode::BAD_REQUEST
                )
            );
        }
    }

    #[test]
    fn sessions_are_read_from_the_bearer_then_the_cookie() {
        let with = |pairs: &[(&str, &str)]| {
            let mut h = HeaderMap::new();
            for (name, value) in pairs {
                h.append(HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
            }
            presented_session(&h)
        };
        assert_eq!(with(&[]), Presented::Nothing);
        assert_eq!(with(&[("authorization", "Bearer abc")]), Presented::Bearer("abc".into()));
        assert_eq!(with(&[("authorization", "bearer  abc ")]), Presented::Bearer("abc".into()));
        assert_eq!(with(&[("authorization", "Basic abc")]), Presented::Malformed);
        assert_eq!(with(&[("authorization", "Bearer")]), Presented::Malformed);
        assert_eq!(with(&[("cookie", "a=1; spades_session=xyz; b=2")]), Presented::Cookie("xyz".into()));
        assert_eq!(with(&[("cookie", "a=1"), ("cookie", "spades_session=q")]), Presented::Cookie("q".into()));
        assert_eq!(with(&[("cookie", "spades_session=; x=1")]), Presented::Nothing);
        assert_eq!(
            with(&[("cookie", "spades_session=c"), ("authorization", "Bearer b")]),
            Presented::Bearer("b".into()),
            "the bearer first"
        );
        assert!(!format!("{:?}", Presented::Bearer("topsecret".into())).contains("topsecret"));
    }

    #[test]
    fn serde_errors_become_plain_words() {
        let cases = [
            (
                "unknown variant `glacial`, expected one of `relaxed`, `normal`, `fast`",
                "unknown value \"glacial\": it must be one of \"relaxed\", \"normal\", \"fast\"",
            ),
            (
                "unknown field `speed`, expected `rules` or `tempo`",
                "unknown field \"speed\": the fields are \"rules\" or \"tempo\"",
            ),
            ("missing field `target`", "\"target\" is missing"),
            ("invalid type: integer `75`, expected a string", "a value of the wrong kind (integer \"75\")"),
            ("invalid value: integer `-1`, expected u16", "a value of the wrong kind (integer \"-1\")"),
        ];
        for (serde, plain) in cases {
            assert_eq!(plain_serde(serde), plain);
        }
        for (serde, _) in cases {
            let p = plain_serde(serde);
            assert!(!p.contains("u16") && !p.contains("invalid") && !p.contains('`'), "{p}");
        }
    }

    #[test]
    fn only_json_bodies_are_json() {
        let with = |ct: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONTENT_TYPE, ct.parse().unwrap());
            is_json(&h)
        };
        assert!(with("application/json"));
        assert!(with("Application/JSON; charset=utf-8"));
        assert!(!with("text/plain"));
        assert!(!with("application/x-www-form-urlencoded"));
        assert!(!with("application/jsonx"));
        assert!(!is_json(&HeaderMap::new()));
    }
}
