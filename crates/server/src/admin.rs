//! The `/api/v1/admin` routes: the operators' API. Every route takes the
//! [`Operator`] extractor (same site, signed in, an operator: checked on
//! every request) and every change names its reason; the rules and the
//! audit log are `moderation.rs`'s.

use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use spades_protocol::{
    AccountDossier, ApiError, AuditEntry, ChatLine, CloseTable, ErrorCode, LiftSanction, ModeratedAccount,
    NewSanction, OperatorChange, RemoveChat, Report, ResolveReport, Sanction,
};

use crate::boundary::{
    JsonBody, MAX_BODY_BYTES, Operator, RawQuery, bad_query, id_of, key_of, limit_of, query_pairs, table_id,
};
use crate::error::AppError;
use crate::state::AppState;
use crate::storage::MatchPage;
use crate::table::OperatorOrder;

/// The most audit entries one page holds.
const AUDIT_PAGE_MAX: usize = 200;

/// The most chat messages one page of a table's chat holds.
const CHAT_PAGE_MAX: usize = 200;

/// The most recent matches an account's dossier lists.
const DOSSIER_MATCHES: usize = 20;

/// The most recent chat messages an account's dossier lists.
const DOSSIER_CHAT: usize = 100;

/// The most reports one page of the queue holds.
const REPORTS_PAGE_MAX: usize = 100;

/// The most recent reports about an account its dossier lists.
const DOSSIER_REPORTS: usize = 50;

/// The routes, merged into `rest::routes` by `app.rs`.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/admin/accounts", get(find_accounts))
        .route("/admin/accounts/{account}", get(dossier))
        .route("/admin/accounts/{account}/sanctions", post(add_sanction))
        .route("/admin/accounts/{account}/operator", put(set_operator))
        .route("/admin/sanctions/{sanction}/lift", post(lift_sanction))
        .route("/admin/operators", get(operators))
        .route("/admin/audit", get(audit))
        .route("/admin/tables/{table}/chat", get(table_chat))
        .route("/admin/tables/{table}/chat/{message}/remove", post(remove_chat))
        .route("/admin/tables/{table}/close", post(close_table))
        .route("/admin/reports", get(reports))
        .route("/admin/reports/{report}/resolve", post(resolve_report))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// Operator answers are never cached.
fn no_store(mut response: Response) -> Response {
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Accounts found by name: the name holds the text (case aside), or looks
/// like it; or the account of an id.
#[utoipa::path(
    get,
    path = "/api/v1/admin/accounts",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(("q" = String, Query, min_length = 1, max_length = 100, description = "A part of a name (case aside), a whole name (look-alikes found too), or an account's id: 1 to 100 characters")),
    responses(
        (status = 200, description = "At most 50 accounts, by name, each with whether it is an operator and the sanctions that hold it", body = Vec<ModeratedAccount>),
        (status = 400, description = "No `q`, one of more than 100 characters, or another parameter (`bad_message`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "Not an operator (`not_operator`), an operator who is suspended or banned (`suspended`, `banned`), or a request another site's page made (`bad_message`)", body = ApiError),
    )
)]
pub async fn find_accounts(
    State(state): State<AppState>,
    _: Operator,
    query: RawQuery,
) -> Result<Response, AppError> {
    let pairs = query_pairs(query, &["q"])?;
    let q = pairs.into_iter().next().map(|(_, v)| v).unwrap_or_default();
    if !(1..=100).contains(&q.chars().count()) {
        return Err(bad_query("q must be 1 to 100 characters: a part of a name, or an account's id"));
    }
    let mut found = Vec::new();
    for account in state.moderation.find(&q).await? {
        found.push(state.moderation.moderated(account).await?);
    }
    Ok(no_store(Json(found).into_response()))
}

/// One account: whether it is an operator, every sanction it has had,
/// its sessions, its recent matches, what it said recently and the
/// reports about it.
#[utoipa::path(
    get,
    path = "/api/v1/admin/accounts/{account}",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(("account" = String, Path, description = "The account's id")),
    responses(
        (status = 200, description = "The account's dossier", body = AccountDossier),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "Not an operator (`not_operator`), an operator who is suspended or banned (`suspended`, `banned`), or a request another site's page made (`bad_message`)", body = ApiError),
        (status = 404, description = "No account has this id (`not_found`)", body = ApiError),
    )
)]
pub async fn dossier(
    State(state): State<AppState>,
    Path(account): Path<String>,
    _: Operator,
) -> Result<Response, AppError> {
    let account = state.moderation.account(id_of(&account, "account")?).await?;
    let id = account.id;
    let (account, sanctions) = state.moderation.with_history(account).await?;
    let sessions = state.accounts.sessions_of(id).await?.len();
    let page = MatchPage { limit: DOSSIER_MATCHES, finished: None, before: None, account: Some(id) };
    let matches = state.journal.summaries(&page).await.map_err(|e| AppError::store_failed("matches", &e))?;
    let chat = state.moderation.account_chat(id, DOSSIER_CHAT).await?;
    let reports = state.reports.about(id, DOSSIER_REPORTS).await?;
    Ok(no_store(
        Json(AccountDossier { account, sanctions, sessions, matches, chat, reports }).into_response(),
    ))
}

/// Suspends an account until a time, bans it, or mutes it in chat, with a
/// reason the player is shown. A suspension or ban closes the account's
/// WebSockets on every node (an `error` frame, then close code 4006).
#[utoipa::path(
    post,
    path = "/api/v1/admin/accounts/{account}/sanctions",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(("account" = String, Path, description = "The account's id")),
    request_body(content = NewSanction, description = "What, why and until when"),
    responses(
        (status = 201, description = "The sanction, written to the audit log", body = Sanction),
        (status = 400, description = "A reason that is blank, too long or holds control characters, or `seconds` out of range (`invalid_options`); a body that is not a sanction (`invalid_options`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "Not an operator (`not_operator`), an operator who is suspended or banned (`suspended`, `banned`), or a request another site's page made (`bad_message`)", body = ApiError),
        (status = 404, description = "No account has this id (`not_found`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
    )
)]
pub async fn add_sanction(
    State(state): State<AppState>,
    Path(account): Path<String>,
    Operator(by): Operator,
    JsonBody(req, ()): JsonBody<NewSanction>,
) -> Result<Response, AppError> {
    let target = state.moderation.account(id_of(&account, "account")?).await?;
    let sanction = state.moderation.sanction(&by, &target, &req).await?;
    Ok(no_store((StatusCode::CREATED, Json(sanction)).into_response()))
}

/// Lifts a sanction that still holds, with a reason.
#[utoipa::path(
    post,
    path = "/api/v1/admin/sanctions/{sanction}/lift",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(("sanction" = String, Path, description = "The sanction's id")),
    request_body(content = LiftSanction, description = "Why"),
    responses(
        (status = 200, description = "Lifted, written to the audit log", body = Sanction),
        (status = 400, description = "A reason that is blank, too long or holds control characters (`invalid_options`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "Not an operator (`not_operator`), an operator who is suspended or banned (`suspended`, `banned`), or a request another site's page made (`bad_message`)", body = ApiError),
        (status = 404, description = "No sanction has this id (`not_found`)", body = ApiError),
        (status = 409, description = "The sanction was lifted already or ran out (`invalid_options`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
    )
)]
pub async fn lift_sanction(
    State(state): State<AppState>,
    Path(sanction): Path<String>,
    Operator(by): Operator,
    JsonBody(req, ()): JsonBody<LiftSanction>,
) -> Result<Response, AppError> {
    let sanction = state.moderation.lift(&by, id_of(&sanction, "sanction")?, &req.reason).await?;
    Ok(no_store(Json(sanction).into_response()))
}

/// Grants or revokes an account's operator role, with a reason. An
/// operator may not revoke their own.
#[utoipa::path(
    put,
    path = "/api/v1/admin/accounts/{account}/operator",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(("account" = String, Path, description = "The account's id")),
    request_body(content = OperatorChange, description = "Operator or not, and why"),
    responses(
        (status = 200, description = "The account after (written to the audit log when it changed)", body = ModeratedAccount),
        (status = 400, description = "A reason that is blank, too long or holds control characters (`invalid_options`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "Not an operator (`not_operator`), an operator who is suspended or banned (`suspended`, `banned`), or a request another site's page made (`bad_message`)", body = ApiError),
        (status = 404, description = "No account has this id (`not_found`)", body = ApiError),
        (status = 409, description = "An operator revoking their own role (`invalid_options`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
    )
)]
pub async fn set_operator(
    State(state): State<AppState>,
    Path(account): Path<String>,
    Operator(by): Operator,
    JsonBody(req, ()): JsonBody<OperatorChange>,
) -> Result<Response, AppError> {
    let target = state.moderation.account(id_of(&account, "account")?).await?;
    state.moderation.set_operator(&by, &target, req.operator, &req.reason).await?;
    Ok(no_store(Json(state.moderation.moderated(target).await?).into_response()))
}

/// The server's operators, the first granted first.
#[utoipa::path(
    get,
    path = "/api/v1/admin/operators",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    responses(
        (status = 200, description = "The operators", body = Vec<ModeratedAccount>),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "Not an operator (`not_operator`), an operator who is suspended or banned (`suspended`, `banned`), or a request another site's page made (`bad_message`)", body = ApiError),
    )
)]
pub async fn operators(State(state): State<AppState>, _: Operator) -> Result<Response, AppError> {
    let mut list = Vec::new();
    for op in state.moderation.operators().await? {
        list.push(state.moderation.moderated(op.account).await?);
    }
    Ok(no_store(Json(list).into_response()))
}

/// The audit log, the newest first: every operator action, who, when and
/// why. Nothing in the API changes or removes an entry.
#[utoipa::path(
    get,
    path = "/api/v1/admin/audit",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(
        ("before" = Option<u64>, Query, minimum = 0, maximum = 9_223_372_036_854_775_807_u64, description = "Only entries numbered below this (the `id` of the last entry of the page before)"),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 200, description = "At most this many (1 to 200, default 50)"),
    ),
    responses(
        (status = 200, description = "The entries, the newest first", body = Vec<AuditEntry>),
        (status = 400, description = "A `before` or `limit` that is not a number in range, or another parameter (`bad_message`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "Not an operator (`not_operator`), an operator who is suspended or banned (`suspended`, `banned`), or a request another site's page made (`bad_message`)", body = ApiError),
    )
)]
pub async fn audit(
    State(state): State<AppState>,
    _: Operator,
    query: RawQuery,
) -> Result<Response, AppError> {
    let (before, limit) = page_of(query, AUDIT_PAGE_MAX)?;
    Ok(no_store(Json(state.moderation.audit(before, limit).await?).into_response()))
}

/// A page's `before` (a key: see [`key_of`]) and `limit`
/// (1 to `max`, default 50).
fn page_of(query: RawQuery, max: usize) -> Result<Page, AppError> {
    page_and(query, max, &[]).map(|(page, _)| page)
}

/// A page's `before` and `limit`.
type Page = (Option<u64>, usize);

/// As [`page_of`], with the other parameters named in `also`, as given.
fn page_and(query: RawQuery, max: usize, also: &[&str]) -> Result<(Page, Vec<(String, String)>), AppError> {
    let (mut before, mut limit, mut others) = (None, 50, Vec::new());
    let known: Vec<&str> = ["before", "limit"].into_iter().chain(also.iter().copied()).collect();
    for (name, value) in query_pairs(query, &known)? {
        match name.as_str() {
            "before" => {
                let n = key_of(&value).ok_or_else(|| {
                    bad_query("before must be the number of the last item of the page before")
                })?;
                before = Some(n);
            }
            "limit" => limit = limit_of(&value, max)?,
            _ => others.push((name, value)),
        }
    }
    Ok(((before, limit), others))
}

/// What was said at a table and is still kept, the newest first, removed
/// messages too.
#[utoipa::path(
    get,
    path = "/api/v1/admin/tables/{table}/chat",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(
        ("table" = String, Path, description = "The table's id"),
        ("before" = Option<u64>, Query, minimum = 0, maximum = 9_223_372_036_854_775_807_u64, description = "Only messages numbered below this (the `id` of the last message of the page before)"),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 200, description = "At most this many (1 to 200, default 50)"),
    ),
    responses(
        (status = 200, description = "The messages, the newest first (none for a table nobody wrote at, or whose chat was forgotten)", body = Vec<ChatLine>),
        (status = 400, description = "A `before` or `limit` that is not a number in range, or another parameter (`bad_message`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "Not an operator (`not_operator`), an operator who is suspended or banned (`suspended`, `banned`), or a request another site's page made (`bad_message`)", body = ApiError),
        (status = 404, description = "A table id that is not a UUID (`not_found`)", body = ApiError),
    )
)]
pub async fn table_chat(
    State(state): State<AppState>,
    Path(table): Path<String>,
    _: Operator,
    query: RawQuery,
) -> Result<Response, AppError> {
    let table = id_of(&table, "table")?;
    let (before, limit) = page_of(query, CHAT_PAGE_MAX)?;
    Ok(no_store(Json(state.moderation.table_chat(table, before, limit).await?).into_response()))
}

/// Removes a chat message, with a reason (in the audit log): it is kept,
/// marked removed, for the record; the table, if it runs, drops it at once
/// for everyone (a `chat_removed` frame) and never sends it again.
#[utoipa::path(
    post,
    path = "/api/v1/admin/tables/{table}/chat/{message}/remove",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(
        ("table" = String, Path, description = "The table's id"),
        ("message" = u64, Path, minimum = 0, maximum = 9_223_372_036_854_775_807_u64, description = "The message's `id` at the table"),
    ),
    request_body(content = RemoveChat, description = "Why"),
    responses(
        (status = 200, description = "Removed, written to the audit log: the message after", body = ChatLine),
        (status = 400, description = "A reason that is blank, too long or holds control characters (`invalid_options`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "Not an operator (`not_operator`), an operator who is suspended or banned (`suspended`, `banned`), or a request another site's page made (`bad_message`)", body = ApiError),
        (status = 404, description = "No such message is kept at this table (`not_found`)", body = ApiError),
        (status = 409, description = "The message was removed already (`invalid_options`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
    )
)]
pub async fn remove_chat(
    State(state): State<AppState>,
    Path((table, message)): Path<(String, String)>,
    Operator(by): Operator,
    JsonBody(req, ()): JsonBody<RemoveChat>,
) -> Result<Response, AppError> {
    let table = id_of(&table, "table")?;
    let missing = || AppError::new(ErrorCode::NotFound, "no message with this number is kept at this table");
    let id = key_of(&message).ok_or_else(missing)?;
    let line = state.moderation.remove_chat(&by, table, id, &req.reason).await?;
    state.tables.order(table, OperatorOrder::RemoveChat { id }).await;
    Ok(no_store(Json(line).into_response()))
}

/// The reports players made, the newest first, each with its context:
/// the open ones (the queue), or every one.
#[utoipa::path(
    get,
    path = "/api/v1/admin/reports",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(
        ("state" = Option<String>, Query, pattern = "^(open|all)$", description = "`open` (the default): the reports no operator resolved yet; `all`: every one"),
        ("before" = Option<u64>, Query, minimum = 0, maximum = 9_223_372_036_854_775_807_u64, description = "Only reports numbered below this (the `id` of the last report of the page before)"),
        ("limit" = Option<usize>, Query, minimum = 1, maximum = 100, description = "At most this many (1 to 100, default 50)"),
    ),
    responses(
        (status = 200, description = "The reports, the newest first", body = Vec<Report>),
        (status = 400, description = "A `state` other than `open` or `all`, a `before` or `limit` that is not a number in range, or another parameter (`bad_message`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "Not an operator (`not_operator`), an operator who is suspended or banned (`suspended`, `banned`), or a request another site's page made (`bad_message`)", body = ApiError),
    )
)]
pub async fn reports(
    State(state): State<AppState>,
    _: Operator,
    query: RawQuery,
) -> Result<Response, AppError> {
    let ((before, limit), state_of) = page_and(query, REPORTS_PAGE_MAX, &["state"])?;
    let open_only = match state_of.first().map(|(_, v)| v.as_str()) {
        None | Some("open") => true,
        Some("all") => false,
        Some(_) => return Err(bad_query("state must be open or all")),
    };
    Ok(no_store(Json(state.reports.queue(open_only, before, limit).await?).into_response()))
}

/// Resolves a report: what was done about it and why (a sanction is made
/// on its own route; this closes the report), in the audit log.
#[utoipa::path(
    post,
    path = "/api/v1/admin/reports/{report}/resolve",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(("report" = u64, Path, minimum = 0, maximum = 9_223_372_036_854_775_807_u64, description = "The report's `id`")),
    request_body(content = ResolveReport, description = "What was done and why"),
    responses(
        (status = 200, description = "Resolved, written to the audit log: the report after", body = Report),
        (status = 400, description = "A reason that is blank, too long or holds control characters (`invalid_options`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "Not an operator (`not_operator`), an operator who is suspended or banned (`suspended`, `banned`), or a request another site's page made (`bad_message`)", body = ApiError),
        (status = 404, description = "No report has this number (`not_found`)", body = ApiError),
        (status = 409, description = "The report was resolved already (`invalid_options`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
    )
)]
pub async fn resolve_report(
    State(state): State<AppState>,
    Path(report): Path<String>,
    Operator(by): Operator,
    JsonBody(req, ()): JsonBody<ResolveReport>,
) -> Result<Response, AppError> {
    let id =
        key_of(&report).ok_or_else(|| AppError::new(ErrorCode::NotFound, "no report has this number"))?;
    Ok(no_store(Json(state.reports.resolve(&by, id, &req.reason).await?).into_response()))
}

/// Closes a table, with a reason its players and spectators are shown:
/// wherever it runs, every connection gets a `table_closed` error saying
/// why, then close code 4003; a match under way ends there (its record
/// says abandoned) and the table is not restored.
#[utoipa::path(
    post,
    path = "/api/v1/admin/tables/{table}/close",
    tag = "moderation",
    security(("session_cookie" = []), ("bearer" = [])),
    params(("table" = String, Path, description = "The table's id")),
    request_body(content = CloseTable, description = "Why"),
    responses(
        (status = 200, description = "Closed: the audit log's entry", body = AuditEntry),
        (status = 400, description = "A reason that is blank, too long or holds control characters (`invalid_options`)", body = ApiError),
        (status = 401, description = "No session, or one that expired or was signed out (`unauthorized`)", body = ApiError),
        (status = 403, description = "Not an operator (`not_operator`), an operator who is suspended or banned (`suspended`, `banned`), or a request another site's page made (`bad_message`)", body = ApiError),
        (status = 404, description = "No table of this id runs (`table_not_found`)", body = ApiError),
        (status = 413, description = "A body over 16 KiB (`bad_message`)", body = ApiError),
        (status = 415, description = "A body that is not `Content-Type: application/json` (`bad_message`)", body = ApiError),
    )
)]
pub async fn close_table(
    State(state): State<AppState>,
    Path(table): Path<String>,
    Operator(by): Operator,
    JsonBody(req, ()): JsonBody<CloseTable>,
) -> Result<Response, AppError> {
    let table = table_id(&table)?;
    // It runs somewhere (else 404; 503 while it moves between nodes).
    state.tables.status(table).await?;
    let entry = state.moderation.close_table(&by, table, &req.reason).await?;
    // A table that ended meanwhile has nothing left to close.
    state.tables.order(table, OperatorOrder::Close { reason: entry.reason.clone() }).await;
    Ok(no_store(Json(entry).into_response()))
}
