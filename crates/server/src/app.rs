//! Wiring, and nothing else: the router with its layers ([`router`]), and
//! [`serve`], which opens the event log, joins the cluster when configured,
//! builds the shared state, restores or claims tables, serves, and on
//! shutdown waits for the tables and connections to finish. No module
//! imports this one.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use spades_protocol::ErrorCode;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::ServiceBuilder;
use tower_http::compression::CompressionLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use tracing::{Instrument, info, warn};

use crate::cluster::{self, Cluster};
use crate::config::Config;
use crate::error::AppError;
use crate::headers::{Defences, defences};
use crate::state::{AppState, Shared};
use crate::storage::{Journal, StoreOptions};
use crate::{admin, openapi, people, rest, web, ws};

/// Opens the event log the configuration names.
///
/// # Errors
/// When the database cannot be opened or migrated.
pub async fn open_journal(config: &Config) -> anyhow::Result<Journal> {
    if config.storage.in_memory {
        warn!("storage.in_memory is set: nothing will survive a restart");
        return Ok(Journal::memory());
    }
    let options = StoreOptions {
        commit_interval: Duration::from_millis(config.storage.commit_interval_ms),
        // A node paused inside a transaction must not keep its row locks
        // (and the claims of its tables by others, which skip locked rows)
        // past half a lease.
        idle_in_transaction: config
            .cluster
            .enabled()
            .then(|| Duration::from_millis((config.cluster.lease_ms / 2).max(500))),
        ..StoreOptions::default()
    };
    let journal = Journal::open_with(&config.storage.database_url, &config.storage.data_dir, options)
        .await
        .context("opening the event log")?;
    info!(store = journal.kind(), "event log ready");
    Ok(journal)
}

/// The HTTP routes, with request ids, tracing, the browser's defences
/// (`headers.rs`) and (when origins are configured) CORS.
pub fn router(state: AppState) -> Router {
    let cors = cors_layer(&state.config.server.allowed_origins);
    let request_id = HeaderName::from_static("x-request-id");
    let trace = TraceLayer::new_for_http().make_span_with(|req: &axum::http::Request<_>| {
        let id = req.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("");
        tracing::info_span!("request", request_id = %id, method = %req.method(), path = %req.uri().path())
    });
    // The whole API router sits inside both middlewares, so the limits
    // and the JSON error bodies cover unknown paths and methods too.
    // JSON answers are gzipped for clients that take it (the lobby's list
    // is ten times smaller on the wire).
    let api = ServiceBuilder::new()
        .layer(CompressionLayer::new())
        .layer(middleware::from_fn(rest::json_errors))
        .layer(middleware::from_fn_with_state(Arc::clone(&state), rest_guard))
        .service(
            rest::routes()
                .merge(people::routes())
                .merge(admin::routes())
                .route("/openapi.json", get(openapi::json))
                .with_state(Arc::clone(&state)),
        );
    // With a separate metrics address, /metrics is served there only.
    let metrics = state.config.server.metrics_bind.is_none();
    let browser = Arc::new(Defences::new(&state.config));
    Router::new()
        .route("/ws", get(ws::upgrade))
        .nest_service("/api/v1", api)
        .route("/healthz", get(rest::healthz))
        .route("/readyz", get(rest::readyz))
        .route("/", get(web::index))
        .route("/v/{version}/{*path}", get(web::versioned))
        .route("/{*path}", get(web::asset))
        .merge(if metrics { metrics_router(Arc::clone(&state)) } else { Router::new() })
        .with_state(state)
        .layer(
            ServiceBuilder::new()
                .layer(SetRequestIdLayer::new(request_id.clone(), MakeRequestUuid))
                .layer(trace)
                .layer(PropagateRequestIdLayer::new(request_id))
                .layer(middleware::from_fn_with_state(browser, defences))
                .option_layer(cors),
        )
}

/// `GET /metrics` alone.
fn metrics_router<S>(state: AppState) -> Router<S> {
    Router::new().route("/metrics", get(rest::metrics)).with_state(state)
}

/// Every `/api/v1` request: the per-address rate limit (429 with
/// `Retry-After`), a permit of the global concurrency limit (503
/// `capacity` at once when none is free: excess load is shed, not queued)
/// and the request timeout (503).
///
/// The handler runs in its own task holding the permit: a timed-out
/// request is answered at once but its handler still finishes (a table
/// whose first write was slow is still created and registered, so memory
/// and the log agree), and its permit is only freed then.
async fn rest_guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if let Some(ConnectInfo(peer)) = req.extensions().get::<ConnectInfo<SocketAddr>>().copied() {
        let client = state.client_ip(peer.ip(), req.headers());
        if let Err(wait) = state.limits.allow_request(client) {
            crate::metrics::rate_limited("requests");
            return AppError::rate_limited("too many requests from your address: slow down", wait)
                .into_response();
        }
    }
    let Ok(permit) = Arc::clone(&state.requests).try_acquire_owned() else {
        crate::metrics::request_shed("capacity");
        return AppError::new(
            ErrorCode::Capacity,
            "the server is answering as many requests as it can: try again",
        )
        .retry_after(Duration::from_secs(1))
        .into_response();
    };
    let handler = tokio::spawn(
        async move {
            let _permit = permit;
            next.run(req).await
        }
        .instrument(tracing::Span::current()),
    );
    let timeout = Duration::from_secs(state.config.limits.request_timeout_secs);
    match tokio::time::timeout(timeout, handler).await {
        Ok(Ok(response)) => response,
        Ok(Err(e)) => {
            warn!(error = %e, "a request handler failed");
            AppError::internal("the request failed").into_response()
        }
        Err(_) => {
            crate::metrics::request_shed("timeout");
            AppError::internal("the request took too long: try again")
                .with_status(StatusCode::SERVICE_UNAVAILABLE)
                .retry_after(Duration::from_secs(1))
                .into_response()
        }
    }
}

/// CORS for the listed origins; none (the default) sends no CORS headers,
/// so browsers only allow same-origin pages.
fn cors_layer(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST, Method::PATCH, Method::DELETE])
            .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION]),
    )
}

/// Serves on `listener` until `shutdown` is cancelled, then lets tables and
/// connections finish (connections get a close frame) within the configured
/// grace.
///
/// # Errors
/// When the server cannot run.
pub async fn serve(listener: TcpListener, config: Config, shutdown: CancellationToken) -> anyhow::Result<()> {
    let journal = open_journal(&config).await?;
    serve_with(listener, config, journal, shutdown).await
}

/// [`serve`] on an event log opened by the caller (tests inject faults
/// with a journal whose storage fails on demand).
///
/// # Errors
/// When the server cannot run.
pub async fn serve_with(
    listener: TcpListener,
    config: Config,
    journal: Journal,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    crate::metrics::install();
    let cluster = if config.cluster.enabled() { Some(Cluster::join(&config, &journal).await?) } else { None };
    let state = Shared::new(config, journal, shutdown.clone(), cluster).map_err(anyhow::Error::msg)?;
    // A single server restores every unfinished table; a node of a cluster
    // claims its share through its lease loop instead.
    let leases = match &state.cluster {
        Some(c) => {
            cluster::serve_sessions(c, &state.accounts).await?;
            cluster::serve_bars(c, &state.moderation).await?;
            Some(cluster::start(&state.hosting, c).await?)
        }
        None => {
            state.hosting.restore_all().await;
            None
        }
    };
    // Rate-limit bookkeeping stays small: forget quiet addresses; and
    // expired sessions, names no longer kept and chat older than
    // `moderation.chat_days` go (names stored under an older look-alike
    // rule are first made again).
    let housekeeping = Arc::clone(&state);
    tokio::spawn(async move {
        housekeeping.accounts.rekey_names().await;
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        loop {
            tokio::select! {
                () = housekeeping.shutdown.cancelled() => break,
                _ = tick.tick() => {
                    housekeeping.limits.forget_idle();
                    housekeeping.accounts.sweep().await;
                    housekeeping.passkeys.sweep().await;
                    housekeeping.moderation.forget_old_chat(housekeeping.config.moderation.chat_days).await;
                }
            }
        }
    });
    // OpenID providers are discovered before the first request; one that
    // cannot be reached is unavailable (its button says so) and tried
    // again every `oidc.retry_secs`.
    let unavailable = state.oidc.discover().await;
    if unavailable > 0 {
        warn!(unavailable, retry_secs = state.config.oidc.retry_secs, "OpenID providers unavailable for now");
    }
    tokio::spawn(Arc::clone(&state.oidc).keep_discovering(state.shutdown.clone()));
    let app = router(Arc::clone(&state)).into_make_service_with_connect_info::<SocketAddr>();
    let addr = listener.local_addr().context("listener address")?;
    info!(%addr, "listening");
    // Views are small frames written as soon as they exist: Nagle's
    // algorithm would hold them back for the peer's delayed ACK.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
    });
    let metrics = match state.config.server.metrics_bind {
        Some(bind) => {
            let listener = TcpListener::bind(bind)
                .await
                .with_context(|| format!("binding server.metrics_bind {bind}"))?;
            info!(addr = %bind, "serving /metrics");
            let app = metrics_router(Arc::clone(&state));
            let until = shutdown.clone().cancelled_owned();
            Some(tokio::spawn(async move { axum::serve(listener, app).with_graceful_shutdown(until).await }))
        }
        None => None,
    };
    axum::serve(listener, app).with_graceful_shutdown(shutdown.clone().cancelled_owned()).await?;
    if let Some(metrics) = metrics
        && let Ok(Err(e)) = metrics.await
    {
        warn!(error = %e, "the metrics listener failed");
    }
    if let Some(leases) = leases
        && tokio::time::timeout(Duration::from_secs(10), leases).await.is_err()
    {
        warn!("the tables were not handed over in time: their leases will run out");
    }
    state.tracker.close();
    let grace = Duration::from_secs(state.config.server.shutdown_grace_secs);
    if tokio::time::timeout(grace, state.tracker.wait()).await.is_err() {
        warn!("some tables or connections did not finish in time");
    }
    info!("stopped");
    Ok(())
}
