//! REST: create and list tables, one table's status, health.

use std::net::SocketAddr;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use spades_protocol::{
    ApiError, CreateTable, CreatedTable, ErrorCode, MatchRecord, MatchSummary, TablePhase, TableStatus,
    TableSummary,
};
use uuid::Uuid;

use crate::app::AppState;
use crate::error::AppError;

/// The largest request body read, in bytes (larger ones are answered 413).
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// The `/api/v1` routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/tables", get(list_tables).post(create_table))
        .route("/tables/{id}", get(table_status))
        .route("/matches", get(list_matches))
        .route("/matches/{id}", get(match_record))
        .route("/openapi.json", get(openapi_json))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

async fn openapi_json() -> Response {
    match crate::openapi::document().to_json() {
        Ok(json) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, "no OpenAPI document").into_response(),
    }
}

/// Checks a display name: trimmed, 1..=`max` characters, no control
/// characters.
pub fn clean_name(raw: &str, max: usize) -> Option<String> {
    let name = raw.trim();
    let ok = !name.is_empty() && name.chars().count() <= max && !name.chars().any(char::is_control);
    ok.then(|| name.to_owned())
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
        (status = 403, description = "A browser page of an origin that is neither this server's nor allowed (`bad_message`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
        (status = 429, description = "Too many new tables or requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "The server hosts as many tables as it can, or is too busy (`capacity`, `internal`, `storage_unavailable`)", body = ApiError),
    )
)]
async fn create_table(
    State(state): State<AppState>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<CreatedTable>), AppError> {
    if !crate::ws::origin_allowed(&headers, &state.config.server.allowed_origins) {
        return Err(AppError::new(ErrorCode::BadMessage, "pages of this origin may not create tables")
            .with_status(StatusCode::FORBIDDEN));
    }
    let body = body.map_err(|e| {
        let message = if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            format!("a table is described in at most {MAX_BODY_BYTES} bytes")
        } else {
            "the request body could not be read".to_owned()
        };
        AppError::new(ErrorCode::BadMessage, message).with_status(e.status())
    })?;
    let empty = body.iter().all(u8::is_ascii_whitespace);
    if !empty && !is_json(&headers) {
        return Err(AppError::new(ErrorCode::BadMessage, "send the table as Content-Type: application/json")
            .with_status(StatusCode::UNSUPPORTED_MEDIA_TYPE));
    }
    if let Err(wait) = state.limits.allow_table(state.client_ip(addr.ip(), &headers)) {
        crate::metrics::rate_limited("tables");
        return Err(AppError::rate_limited("too many new tables from your address: wait a minute", wait));
    }
    let req: CreateTable = if empty {
        CreateTable::default()
    } else {
        let de = &mut serde_json::Deserializer::from_slice(&body);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let at = e.path().to_string();
            let at = if at == "." { String::new() } else { format!(" at {at}") };
            AppError::new(ErrorCode::InvalidOptions, format!("invalid table{at}: {}", e.inner()))
        })?
    };
    req.options.rules.check().map_err(|e| AppError::new(ErrorCode::InvalidOptions, e.to_string()))?;
    let name = match req.name.as_deref() {
        None => "Table".to_owned(),
        Some(raw) => clean_name(raw, 40).ok_or_else(|| {
            AppError::new(
                ErrorCode::InvalidName,
                "the table name must be 1 to 40 characters, without control characters",
            )
        })?,
    };
    let (table, owner_token) = state.create_table(name, req.options).await?;
    Ok((StatusCode::CREATED, Json(CreatedTable { table, owner_token })))
}

/// True when the request's `Content-Type` is `application/json` (any
/// parameters, any case).
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// Filters for the table list.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// Only tables in this phase.
    phase: Option<TablePhase>,
    /// Only tables with (true) or without (false) an empty seat.
    open: Option<bool>,
    /// At most this many (default 100, newest first).
    limit: Option<usize>,
}

/// List tables, newest first.
#[utoipa::path(
    get,
    path = "/api/v1/tables",
    tag = "tables",
    params(ListQuery),
    responses(
        (status = 200, description = "The tables", body = Vec<TableSummary>),
        (status = 400, description = "A bad filter", body = ApiError),
        (status = 429, description = "Too many requests from this address (`rate_limited`; see `Retry-After`)", body = ApiError),
        (status = 503, description = "Too many requests at once (`capacity`) or the request took too long (`internal`)", body = ApiError),
    )
)]
async fn list_tables(
    State(state): State<AppState>,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<TableSummary>>, AppError> {
    let Query(q) = query.map_err(|e| AppError::new(ErrorCode::BadMessage, e.body_text()))?;
    let mut tables: Vec<TableSummary> = state
        .registry
        .summaries()
        .into_iter()
        .filter(|t| q.phase.is_none_or(|p| p == t.phase))
        .filter(|t| q.open.is_none_or(|open| open == (t.open_seats > 0)))
        .collect();
    tables.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.table.cmp(&b.table)));
    tables.truncate(q.limit.unwrap_or(100).min(1000));
    Ok(Json(tables))
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
    let not_found = || AppError::new(ErrorCode::TableNotFound, "no such table");
    let id: Uuid = id.parse().map_err(|_| not_found())?;
    let handle = state.registry.get(&id).ok_or_else(not_found)?;
    let status = handle.status().await.map_err(|_| not_found())?;
    Ok(Json(status))
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
    let phases: Vec<TablePhase> = state.registry.summaries().iter().map(|t| t.phase).collect();
    crate::metrics::gauges(&phases, state.connections.load(std::sync::atomic::Ordering::Relaxed));
    handle.run_upkeep();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], handle.render()).into_response()
}

/// `GET /readyz`: the event log answers (503 otherwise).
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "operations",
    responses(
        (status = 200, description = "Ready", body = String),
        (status = 503, description = "The database does not answer", body = String),
    )
)]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, &'static str) {
    // Within 2 s even when the database hangs or cannot be reached.
    let ping = tokio::time::timeout(std::time::Duration::from_millis(1800), state.journal.ping());
    if ping.await.unwrap_or(false) {
        (StatusCode::OK, "ready")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "storage unavailable")
    }
}

/// Filters for the match list.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
struct MatchQuery {
    /// At most this many (default 20, at most 200), newest first.
    limit: Option<usize>,
}

/// Recent matches from the event log, newest first.
#[utoipa::path(
    get,
    path = "/api/v1/matches",
    tag = "matches",
    params(MatchQuery),
    responses((status = 200, description = "Recent matches", body = Vec<MatchSummary>))
)]
async fn list_matches(
    State(state): State<AppState>,
    query: Result<Query<MatchQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Vec<MatchSummary>>, AppError> {
    let Query(q) = query.map_err(|e| AppError::new(ErrorCode::BadMessage, e.body_text()))?;
    let limit = q.limit.unwrap_or(20).clamp(1, 200);
    let summaries = state.journal.recent_summaries(limit).await.map_err(|e| {
        tracing::warn!(error = %e, "could not list matches");
        AppError::new(ErrorCode::StorageUnavailable, "the match list cannot be read right now")
    })?;
    Ok(Json(summaries))
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
        (status = 503, description = "Too many requests at once (`capacity`) or the request took too long (`internal`)", body = ApiError),
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
        AppError::internal("the match record could not be read")
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
    use super::*;

    #[test]
    fn names_are_cleaned() {
        assert_eq!(clean_name("  Ann ", 24), Some("Ann".into()));
        assert_eq!(clean_name("", 24), None);
        assert_eq!(clean_name("   ", 24), None);
        assert_eq!(clean_name("a\u{7}b", 24), None);
        assert_eq!(clean_name(&"x".repeat(25), 24), None);
        assert_eq!(clean_name(&"é".repeat(24), 24), Some("é".repeat(24)));
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
