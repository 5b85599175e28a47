//! REST: create and list tables, one table's status, health.

use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use spades_protocol::{
    ApiError, CreateTable, CreatedTable, ErrorCode, MatchRecord, MatchSummary, TablePhase, TableStatus,
    TableSummary,
};
use uuid::Uuid;

use crate::boundary::{
    BrowserOrigin, JsonBody, MAX_BODY_BYTES, NewTables, PerAddress, RawQuery, TableCreation, bad_query,
    bool_of, cleaned_name, is_json, limit_of, query_pairs,
};
use crate::error::AppError;
use crate::state::AppState;
use crate::storage::MatchPage;
use crate::validators::{etag_of, not_modified};

/// The `/api/v1` routes (`app.rs` adds the OpenAPI document's). Served wrapped in [`json_errors`], so that every
/// error they answer, including those axum makes itself (an unknown path, a
/// method the path does not take, an unreadable body), is a JSON
/// [`ApiError`].
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/tables", get(list_tables).post(create_table))
        .route("/tables/{id}", get(table_status))
        .route("/matches", get(list_matches))
        .route("/matches/{id}", get(match_record))
        .fallback(unknown_path)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// Any path under `/api/v1` that is not one of [`routes`].
async fn unknown_path() -> AppError {
    AppError::new(ErrorCode::NotFound, "no such path: the API is described at /api/v1/openapi.json")
}

/// Turns an error response that is not JSON (axum's own 405, 413, 415,
/// 400…) into the documented `{"code","message"}` body, keeping its status
/// and its `Allow` and `Retry-After` headers. It must wrap the whole
/// `/api/v1` router (not be a layer of its routes), so that it sees the
/// fallback's 404 and the `Allow` header of a 405.
pub async fn json_errors(req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let response = next.run(req).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(response.headers()) {
        return response;
    }
    let (code, message) = match status {
        StatusCode::NOT_FOUND => {
            (ErrorCode::NotFound, "no such path: the API is described at /api/v1/openapi.json".to_owned())
        }
        StatusCode::METHOD_NOT_ALLOWED => {
            let allow = response.headers().get(header::ALLOW).and_then(|v| v.to_str().ok()).unwrap_or("");
            let method: String = method.as_str().chars().take(16).collect();
            (ErrorCode::MethodNotAllowed, format!("this path does not take {method}; it takes {allow}"))
        }
        StatusCode::PAYLOAD_TOO_LARGE => {
            (ErrorCode::BadMessage, format!("request bodies are limited to {MAX_BODY_BYTES} bytes"))
        }
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            (ErrorCode::BadMessage, "send the body as Content-Type: application/json".to_owned())
        }
        s if s.is_client_error() => (ErrorCode::BadMessage, "the request could not be read".to_owned()),
        _ => (ErrorCode::Internal, "the request failed".to_owned()),
    };
    let mut out = AppError::new(code, message).with_status(status).into_response();
    for name in [header::ALLOW, header::RETRY_AFTER] {
        if let Some(value) = response.headers().get(&name) {
            out.headers_mut().insert(name, value.clone());
        }
    }
    out
}

/// Create a table.
#[utoipa::path(
    post,
    path = "/api/v1/tables",
    tag = "tables",
    request_body(content = CreateTable, description = "Name and options; every field is optional"),
    responses(
        (status = 201, description = "The table and its owner token", body = CreatedTable),
        (status = 400, description = "Invalid options or name", body = ApiError),
        (status = 401, description = "A bearer token of no live session, or a malformed `Authorization` header (`unauthorized`); a stale session cookie is ignored", body = ApiError),
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`), or the signed-in account is suspended (`suspended`) or banned (`banned`); the message says until when and why", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
        (status = 429, description = "Too many new tables or requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "The server hosts as many tables as it can, or is too busy (`capacity`, `internal`, `storage_unavailable`)", body = ApiError),
    )
)]
async fn create_table(
    State(state): State<AppState>,
    headers: HeaderMap,
    _: BrowserOrigin<TableCreation>,
    JsonBody(req, _): JsonBody<CreateTable, PerAddress<NewTables>>,
) -> Result<(StatusCode, Json<CreatedTable>), AppError> {
    // A signed-in creator owns the table by account too.
    let owner = crate::boundary::signed_if_any(&state, &headers).await?.map(|s| s.account.id);
    if let Some(owner) = owner {
        state.moderation.may_play(owner).await?;
    }
    req.options.rules.check().map_err(|e| AppError::new(ErrorCode::InvalidOptions, e.to_string()))?;
    let name = match req.name.as_deref() {
        None => "Table".to_owned(),
        Some(raw) => cleaned_name(raw, 40, "the table name")?,
    };
    let (table, owner_token) = state.tables.create(name, req.options, owner).await?;
    Ok((StatusCode::CREATED, Json(CreatedTable { table, owner_token })))
}

/// Filters for the table list.
#[derive(Debug, Default, PartialEq, Eq, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Only tables in this phase.
    phase: Option<TablePhase>,
    /// Only tables with (true) or without (false) an empty seat.
    open: Option<bool>,
    /// At most this many, newest first (1 to 1000, default 100).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<usize>,
}

/// The most tables one list holds.
const MAX_TABLES_LISTED: usize = 1000;

/// The most matches one list holds.
const MAX_MATCHES_LISTED: usize = 200;

impl ListQuery {
    fn parse(query: RawQuery) -> Result<ListQuery, AppError> {
        let mut q = ListQuery::default();
        for (name, value) in query_pairs(query, &["phase", "open", "limit"])? {
            match name.as_str() {
                "phase" => {
                    let phase = serde_json::from_value(serde_json::Value::String(value))
                        .map_err(|_| bad_query("phase must be one of lobby, bidding, playing, finished"))?;
                    q.phase = Some(phase);
                }
                "open" => {
                    q.open = Some(bool_of("open", &value)?);
                }
                _ => q.limit = Some(limit_of(&value, MAX_TABLES_LISTED)?),
            }
        }
        Ok(q)
    }
}

/// A JSON answer with a strong `ETag` and `Cache-Control: no-cache`: a
/// client that sends the tag back in `If-None-Match` gets `304` and no body
/// while nothing changed (a browser's cache does so by itself).
fn cached_json<T: serde::Serialize>(request: &HeaderMap, value: &T) -> Response {
    let Ok(body) = serde_json::to_vec(value) else {
        return AppError::internal("the answer could not be made").into_response();
    };
    let etag = etag_of(&body);
    let mut resp = if not_modified(request, &etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, "application/json")], body).into_response()
    };
    let headers = resp.headers_mut();
    if let Ok(v) = header::HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, v);
    }
    headers.insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-cache"));
    resp
}

/// List tables, newest first.
#[utoipa::path(
    get,
    path = "/api/v1/tables",
    tag = "tables",
    params(ListQuery),
    responses(
        (status = 200, description = "The tables, with an `ETag`", body = Vec<TableSummary>),
        (status = 304, description = "Unchanged since the `ETag` sent in `If-None-Match`: no body"),
        (status = 400, description = "A bad, unknown or repeated parameter (`bad_message`)", body = ApiError),
    )
)]
async fn list_tables(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: RawQuery,
) -> Result<Response, AppError> {
    let q = ListQuery::parse(query)?;
    let mut tables: Vec<TableSummary> = state
        .tables
        .lobby()
        .await
        .into_iter()
        .filter(|t| q.phase.is_none_or(|p| p == t.phase))
        .filter(|t| q.open.is_none_or(|open| open == (t.open_seats > 0)))
        .collect();
    tables.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.table.cmp(&b.table)));
    tables.truncate(q.limit.unwrap_or(100));
    Ok(cached_json(&headers, &tables))
}

/// One table's public status: never a card of anybody's hand.
#[utoipa::path(
    get,
    path = "/api/v1/tables/{id}",
    tag = "tables",
    params(("id" = String, Path, description = "The table's id")),
    responses(
        (status = 200, description = "The table", body = TableStatus),
        (status = 404, description = "No such table", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Too many requests at once (`capacity`) or the request took too long (`internal`)", body = ApiError),
    )
)]
async fn table_status(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<TableStatus>, AppError> {
    Ok(Json(state.tables.status(crate::boundary::table_id(&id)?).await?))
}

/// `GET /healthz`: the process is up.
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, description = "Up", body = String)))]
pub async fn healthz() -> &'static str {
    "ok"
}

/// `GET /metrics`: Prometheus text format.
#[utoipa::path(
    get,
    path = "/metrics",
    tag = "operations",
    responses((status = 200, description = "Metrics in the Prometheus text format", body = String, content_type = "text/plain"))
)]
pub async fn metrics(State(state): State<AppState>) -> Response {
    let Some(handle) = crate::metrics::install() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "metrics are not available").into_response();
    };
    let phases: Vec<TablePhase> = state.hosting.summaries().iter().map(|t| t.phase).collect();
    crate::metrics::gauges(&phases, state.connections.load(std::sync::atomic::Ordering::Relaxed));
    handle.run_upkeep();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], handle.render()).into_response()
}

/// `GET /readyz`: the event log answers, and in cluster mode NATS is
/// connected (503 otherwise).
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    responses(
        (status = 200, description = "Ready", body = String),
        (status = 503, description = "The database does not answer, or (cluster mode) NATS is not connected", body = String),
    )
)]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, &'static str) {
    // Within 2 s even when the database hangs or cannot be reached.
    let ping = tokio::time::timeout(std::time::Duration::from_millis(1800), state.journal.ping());
    if !ping.await.unwrap_or(false) {
        (StatusCode::SERVICE_UNAVAILABLE, "storage unavailable")
    } else if state.cluster.as_ref().is_some_and(|c| !c.nats_connected()) {
        (StatusCode::SERVICE_UNAVAILABLE, "NATS unavailable")
    } else {
        (StatusCode::OK, "ready")
    }
}

/// Filters for the match list.
#[derive(Debug, Default, PartialEq, Eq, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct MatchQuery {
    /// At most this many, newest first (1 to 200, default 20).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<usize>,
    /// `true`: only matches that are over (with a `result`); `false`: only
    /// those that are not (in play, or ended unfinished).
    finished: Option<bool>,
    /// The next page: the matches listed after this table (the last of the
    /// page before): created before it, or in the same millisecond with a
    /// smaller id. The `Link` header of a full page names the next. An id
    /// that is no table's gives an empty page.
    #[param(value_type = Option<String>, format = Uuid)]
    before: Option<Uuid>,
    /// `true`: only the matches in which the signed-in account held a seat
    /// (needs a session: `401 unauthorized` without one).
    mine: Option<bool>,
}

impl MatchQuery {
    fn parse(query: RawQuery) -> Result<MatchQuery, AppError> {
        let mut q = MatchQuery::default();
        for (name, value) in query_pairs(query, &["limit", "finished", "before", "mine"])? {
            match name.as_str() {
                "finished" => {
                    q.finished = Some(bool_of("finished", &value)?);
                }
                "mine" => {
                    q.mine = Some(bool_of("mine", &value)?);
                }
                "before" => {
                    q.before = Some(
                        Uuid::parse_str(&value)
                            .map_err(|_| bad_query("before must be a table id (a UUID)"))?,
                    );
                }
                _ => q.limit = Some(limit_of(&value, MAX_MATCHES_LISTED)?),
            }
        }
        Ok(q)
    }

    /// The query of the page after `last`, the last match of a full page.
    fn next(&self, limit: usize, last: Uuid) -> String {
        let finished = self.finished.map_or(String::new(), |f| format!("&finished={f}"));
        let mine = if self.mine == Some(true) { "&mine=true" } else { "" };
        format!("/api/v1/matches?limit={limit}{finished}{mine}&before={last}")
    }
}

/// Recent matches from the event log, newest first, a page at a time.
#[utoipa::path(
    get,
    path = "/api/v1/matches",
    tag = "matches",
    params(MatchQuery),
    responses(
        (status = 200, description = "Recent matches, with an `ETag`", body = Vec<MatchSummary>,
         headers(("Link" = String, description = "On a full page, the next one: `</api/v1/matches?limit=…&before=<the last table>>; rel=\"next\"` (with `finished` and `mine` when asked)"))),
        (status = 304, description = "Unchanged since the `ETag` sent in `If-None-Match`: no body"),
        (status = 400, description = "A bad, unknown or repeated parameter (`bad_message`)", body = ApiError),
        (status = 401, description = "`mine=true` without a session, or with one that expired or was signed out (`unauthorized`)", body = ApiError),
    )
)]
async fn list_matches(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: RawQuery,
) -> Result<Response, AppError> {
    let q = MatchQuery::parse(query)?;
    let limit = q.limit.unwrap_or(20);
    let account = match q.mine {
        Some(true) => Some(crate::boundary::signed(&state, &headers).await?.account.id),
        _ => None,
    };
    let page = MatchPage { limit, finished: q.finished, before: q.before, account };
    let summaries = state.journal.summaries(&page).await.map_err(|e| {
        tracing::warn!(error = %e, "could not list matches");
        AppError::new(ErrorCode::StorageUnavailable, "the match list cannot be read right now")
    })?;
    let mut response = cached_json(&headers, &summaries);
    if account.is_some() {
        // One player's list: no shared cache keeps it.
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, header::HeaderValue::from_static("private, no-cache"));
    }
    if summaries.len() == limit
        && let Some(last) = summaries.last()
        && let Ok(link) =
            header::HeaderValue::from_str(&format!("<{}>; rel=\"next\"", q.next(limit, last.table)))
    {
        response.headers_mut().insert(header::LINK, link);
    }
    Ok(response)
}

/// A match's record: every finished hand's bids, tricks, scores and cards;
/// of a running hand only the bids and tricks; the seed once the match is
/// over.
#[utoipa::path(
    get,
    path = "/api/v1/matches/{id}",
    tag = "matches",
    params(("id" = String, Path, description = "The table's id")),
    responses(
        (status = 200, description = "The record", body = MatchRecord),
        (status = 404, description = "No such match", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 500, description = "The stored record is damaged (`internal`)", body = ApiError),
        (status = 503, description = "Too many requests at once (`capacity`), the request took too long (`internal`), or the database cannot be read right now (`storage_unavailable`)", body = ApiError),
    )
)]
async fn match_record(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<MatchRecord>, AppError> {
    let not_found = || AppError::new(ErrorCode::TableNotFound, "no such match");
    let id: Uuid = id.parse().map_err(|_| not_found())?;
    let stored = state.journal.get(id).await.map_err(|e| {
        tracing::warn!(error = %e, "could not read a match");
        match e {
            crate::storage::StorageError::Corrupt { .. } => AppError::internal("the match record is damaged"),
            _ => AppError::new(ErrorCode::StorageUnavailable, "the match record cannot be read right now"),
        }
    })?;
    let stored = stored.ok_or_else(not_found)?;
    let record = crate::record::record(&stored).map_err(|e| {
        tracing::warn!(error = %e, "corrupt match record");
        AppError::internal("the match record is damaged")
    })?;
    Ok(Json(record))
}

#[cfg(test)]
mod tests {
    use axum::extract::Query;

    use super::*;

    fn pairs(list: &[(&str, &str)]) -> RawQuery {
        Ok(Query(list.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()))
    }

    #[test]
    fn queries_are_checked_with_plain_reasons() {
        let q = ListQuery::parse(pairs(&[("phase", "lobby"), ("open", "true"), ("limit", "1000")])).unwrap();
        assert_eq!(q, ListQuery { phase: Some(TablePhase::Lobby), open: Some(true), limit: Some(1000) });
        assert_eq!(ListQuery::parse(pairs(&[])).unwrap(), ListQuery::default());
        for (bad, reason) in [
            (vec![("limit", "0")], "limit must be a whole number from 1 to 1000"),
            (vec![("limit", "1001")], "limit must be a whole number from 1 to 1000"),
            (vec![("limit", "-1")], "limit must be a whole number from 1 to 1000"),
            (vec![("limit", "99999999999999999999999")], "limit must be a whole number from 1 to 1000"),
            (vec![("phase", "nowhere")], "phase must be one of lobby, bidding, playing, finished"),
            (vec![("open", "yes")], "open must be true or false"),
            (vec![("colour", "red")], "unknown parameter \"colour\": the parameters are phase, open, limit"),
            (vec![("open", "true"), ("open", "false")], "the parameter \"open\" is given twice"),
        ] {
            let e = ListQuery::parse(pairs(&bad)).unwrap_err();
            assert_eq!(
                (e.code, e.message.as_str(), e.status()),
                (ErrorCode::BadMessage, reason, StatusCode::BAD_REQUEST)
            );
        }
        assert_eq!(MatchQuery::parse(pairs(&[("limit", "200")])).unwrap().limit, Some(200));
        let e = MatchQuery::parse(pairs(&[("limit", "201")])).unwrap_err();
        assert_eq!(e.message, "limit must be a whole number from 1 to 200");
        assert!(MatchQuery::parse(pairs(&[("phase", "lobby")])).is_err());
    }
}
