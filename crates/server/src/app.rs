//! The application: shared state, the router, and `serve`.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::http::{HeaderName, HeaderValue, Method, header};
use axum::routing::get;
use axum::serve::ListenerExt;
use dashmap::DashMap;
use spades_protocol::{ErrorCode, TableOptions, TableSummary};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceBuilder;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use tracing::{info, warn};
use uuid::Uuid;

use crate::config::Config;
use crate::error::AppError;
use crate::storage::Journal;
use crate::table::{self, TableHandle, TableInit, TableSettings, now_ms};
use crate::token::{TokenHash, new_token};
use crate::{rest, web, ws};

/// The tables this server hosts, by id.
#[derive(Debug, Default)]
pub struct Registry {
    tables: DashMap<Uuid, TableHandle>,
}

impl Registry {
    /// The table's handle.
    pub fn get(&self, id: &Uuid) -> Option<TableHandle> {
        self.tables.get(id).map(|h| h.value().clone())
    }

    /// Every table's lobby summary.
    pub fn summaries(&self) -> Vec<TableSummary> {
        self.tables.iter().map(|h| h.value().summary()).collect()
    }

    /// Number of tables.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// True when no table is hosted.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

/// Per-IP rate limits on creating tables and opening connections.
pub struct Limits {
    tables: Option<governor::DefaultKeyedRateLimiter<IpAddr>>,
    connections: Option<governor::DefaultKeyedRateLimiter<IpAddr>>,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits").finish_non_exhaustive()
    }
}

impl Limits {
    /// Limits of `tables` and `connections` per minute per IP (0: none).
    pub fn new(tables: u32, connections: u32) -> Limits {
        let limiter = |n: u32| {
            std::num::NonZeroU32::new(n).map(|n| governor::RateLimiter::keyed(governor::Quota::per_minute(n)))
        };
        Limits { tables: limiter(tables), connections: limiter(connections) }
    }

    /// True when `ip` may create a table now.
    pub fn allow_table(&self, ip: IpAddr) -> bool {
        self.tables.as_ref().is_none_or(|l| l.check_key(&ip).is_ok())
    }

    /// True when `ip` may open a connection now.
    pub fn allow_connection(&self, ip: IpAddr) -> bool {
        self.connections.as_ref().is_none_or(|l| l.check_key(&ip).is_ok())
    }

    /// Forgets addresses that have not been seen for a while.
    pub fn forget_idle(&self) {
        for l in self.tables.iter().chain(self.connections.iter()) {
            l.retain_recent();
            l.shrink_to_fit();
        }
    }
}

/// State shared by every request and connection.
#[derive(Debug)]
pub struct Shared {
    /// The configuration.
    pub config: Config,
    /// The tables.
    pub registry: Arc<Registry>,
    /// The event log.
    pub journal: Journal,
    /// Settings for every table.
    pub settings: Arc<TableSettings>,
    /// Cancelled when the server shuts down.
    pub shutdown: CancellationToken,
    /// Tracks table and connection tasks, to wait for them on shutdown.
    pub tracker: TaskTracker,
    /// Open WebSocket connections.
    pub connections: AtomicUsize,
    /// Per-IP rate limits.
    pub limits: Limits,
    next_conn: AtomicU64,
}

/// A cheap handle on [`Shared`].
pub type AppState = Arc<Shared>;

impl Shared {
    /// A new connection id.
    pub fn next_conn_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// Creates a table and starts its task.
    ///
    /// # Errors
    /// Capacity reached, or the log or random source failed.
    pub async fn create_table(
        &self,
        name: String,
        options: TableOptions,
    ) -> Result<(Uuid, String), AppError> {
        if self.registry.len() >= self.config.limits.max_tables {
            return Err(AppError::new(ErrorCode::Capacity, "the server hosts as many tables as it can"));
        }
        let (owner_token, owner) = new_token().map_err(|_| AppError::internal("no randomness"))?;
        let id = Uuid::new_v4();
        let init = self.table_init(id, name, options, owner, now_ms());
        self.journal.create_table(&table::table_record(&init)).await.map_err(|e| {
            warn!(error = %e, "could not store a new table");
            AppError::internal("storage is unavailable")
        })?;
        let handle = table::spawn(init, None, &self.tracker);
        self.registry.tables.insert(id, handle);
        crate::metrics::table_created();
        info!(table_id = %id, "table created");
        Ok((id, owner_token))
    }

    /// The initial state of a table's task.
    pub fn table_init(
        &self,
        id: Uuid,
        name: String,
        options: TableOptions,
        owner: TokenHash,
        created_at: u64,
    ) -> TableInit {
        let registry = Arc::downgrade(&self.registry);
        TableInit {
            id,
            name,
            options,
            owner,
            created_at,
            settings: Arc::clone(&self.settings),
            journal: self.journal.clone(),
            shutdown: self.shutdown.clone(),
            on_exit: Box::new(move |id| {
                if let Some(r) = registry.upgrade() {
                    r.tables.remove(&id);
                }
            }),
        }
    }

    /// Registers a restored table's handle.
    pub fn insert_table(&self, handle: TableHandle) {
        self.registry.tables.insert(handle.id(), handle);
    }
}

/// Table settings from the configuration.
pub fn table_settings(config: &Config) -> TableSettings {
    let t = &config.tables;
    TableSettings {
        bot_delay: Duration::from_millis(t.bot_delay_ms),
        grace: Duration::from_secs(t.grace_secs),
        closing_grace: Duration::from_secs(t.closing_grace_secs),
        autopilot_after: t.autopilot_after,
        idle: Duration::from_secs(t.idle_minutes * 60),
        test_tempo: (t.test_tempo_ms > 0).then(|| Duration::from_millis(t.test_tempo_ms)),
        strength: t.bot,
        ..TableSettings::default()
    }
}

/// Opens the event log the configuration names.
///
/// # Errors
/// When the database cannot be opened or migrated.
pub async fn open_journal(config: &Config) -> anyhow::Result<Journal> {
    if config.storage.in_memory {
        warn!("storage.in_memory is set: nothing will survive a restart");
        return Ok(Journal::memory());
    }
    let journal = Journal::open(&config.storage.database_url, &config.storage.data_dir)
        .await
        .context("opening the event log")?;
    info!(store = journal.kind(), "event log ready");
    Ok(journal)
}

/// The HTTP routes, with request ids, tracing and (when origins are
/// configured) CORS.
pub fn router(state: AppState) -> Router {
    let cors = cors_layer(&state.config.server.allowed_origins);
    let request_id = HeaderName::from_static("x-request-id");
    let trace = TraceLayer::new_for_http().make_span_with(|req: &axum::http::Request<_>| {
        let id = req.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("");
        tracing::info_span!("request", request_id = %id, method = %req.method(), path = %req.uri().path())
    });
    Router::new()
        .route("/ws", get(ws::upgrade))
        .nest("/api/v1", rest::routes())
        .route("/healthz", get(rest::healthz))
        .route("/readyz", get(rest::readyz))
        .route("/metrics", get(rest::metrics))
        .route("/", get(web::index))
        .route("/{*path}", get(web::asset))
        .with_state(state)
        .layer(
            ServiceBuilder::new()
                .layer(SetRequestIdLayer::new(request_id.clone(), MakeRequestUuid))
                .layer(trace)
                .layer(PropagateRequestIdLayer::new(request_id))
                .option_layer(cors),
        )
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
            .allow_methods([Method::GET, Method::POST])
            .allow_headers([header::CONTENT_TYPE]),
    )
}

/// Builds the shared state from a configuration and a journal.
pub fn state(config: Config, journal: Journal, shutdown: CancellationToken) -> AppState {
    let settings = Arc::new(table_settings(&config));
    let config_limits = (config.limits.tables_per_minute_per_ip, config.limits.connections_per_minute_per_ip);
    Arc::new(Shared {
        config,
        registry: Arc::new(Registry::default()),
        journal,
        settings,
        shutdown,
        tracker: TaskTracker::new(),
        connections: AtomicUsize::new(0),
        limits: Limits::new(config_limits.0, config_limits.1),
        next_conn: AtomicU64::new(1),
    })
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
    let state = state(config, journal, shutdown.clone());
    crate::restore::restore_tables(&state).await;
    // Rate-limit bookkeeping stays small: forget quiet addresses.
    let housekeeping = Arc::clone(&state);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        loop {
            tokio::select! {
                () = housekeeping.shutdown.cancelled() => break,
                _ = tick.tick() => housekeeping.limits.forget_idle(),
            }
        }
    });
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
    axum::serve(listener, app).with_graceful_shutdown(shutdown.clone().cancelled_owned()).await?;
    state.tracker.close();
    let grace = Duration::from_secs(state.config.server.shutdown_grace_secs);
    if tokio::time::timeout(grace, state.tracker.wait()).await.is_err() {
        warn!("some tables or connections did not finish in time");
    }
    info!("stopped");
    Ok(())
}
