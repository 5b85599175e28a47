//! The application: shared state, the router, and `serve`.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use dashmap::DashMap;
use spades_protocol::{ErrorCode, TableOptions, TableSummary};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceBuilder;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;
use tracing::{Instrument, info, warn};
use uuid::Uuid;

use crate::config::{Cidr, Config, LimitsConfig};
use crate::error::AppError;
use crate::storage::{Journal, StoreOptions};
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

type Keyed = governor::DefaultKeyedRateLimiter<IpAddr>;

/// Per-address limits: tables created, connections opened and REST
/// requests per minute, and connections open at once. Every limit is keyed
/// by [`client_key`] of the client address.
pub struct Limits {
    tables: Option<Keyed>,
    connections: Option<Keyed>,
    requests: Option<Keyed>,
    /// Open connections by client key.
    open: DashMap<IpAddr, usize>,
    /// Most open connections per client key (0: no cap).
    open_cap: usize,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits").field("open_cap", &self.open_cap).finish_non_exhaustive()
    }
}

/// The key of every per-address limit: an IPv4 address itself, an IPv6
/// address its /64 (one subscriber's block), an IPv4-mapped IPv6 address
/// its IPv4 address.
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !(u128::from(u64::MAX)))),
    }
}

/// The client's address: the TCP peer, unless the peer is a trusted proxy;
/// then the right-most `X-Forwarded-For` entry that is not itself a trusted
/// proxy (the left-most one when all are). A missing or unreadable header
/// leaves the peer.
pub fn client_addr(peer: IpAddr, headers: &HeaderMap, trusted: &[Cidr]) -> IpAddr {
    let peer = peer.to_canonical();
    let is_trusted = |ip: IpAddr| trusted.iter().any(|t| t.contains(ip));
    if !is_trusted(peer) {
        return peer;
    }
    let mut entries = Vec::new();
    for value in headers.get_all(X_FORWARDED_FOR) {
        let Ok(text) = value.to_str() else { return peer };
        entries.extend(text.split(',').map(str::trim));
    }
    // From the right: each proxy appends the address it saw, so entries
    // to the left of the first untrusted one are the client's own claims.
    let mut leftmost = None;
    for entry in entries.iter().rev() {
        let Some(ip) = forwarded_ip(entry) else { return peer };
        if !is_trusted(ip) {
            return ip;
        }
        leftmost = Some(ip);
    }
    leftmost.unwrap_or(peer)
}

const X_FORWARDED_FOR: &str = "x-forwarded-for";

/// One `X-Forwarded-For` entry: an address, maybe with a port.
fn forwarded_ip(entry: &str) -> Option<IpAddr> {
    let ip = entry.parse::<IpAddr>().ok().or_else(|| entry.parse::<SocketAddr>().ok().map(|s| s.ip()))?;
    Some(ip.to_canonical())
}

/// How long to wait before a limited address may try again.
fn wait_of(not_until: &governor::NotUntil<governor::clock::QuantaInstant>) -> Duration {
    not_until.wait_time_from(governor::clock::Clock::now(&governor::clock::DefaultClock::default()))
}

impl Limits {
    /// The limits of `config` (each 0: none).
    pub fn new(config: &LimitsConfig) -> Limits {
        let limiter =
            |n: u32| NonZeroU32::new(n).map(|n| governor::RateLimiter::keyed(governor::Quota::per_minute(n)));
        Limits {
            tables: limiter(config.tables_per_minute_per_ip),
            connections: limiter(config.connections_per_minute_per_ip),
            requests: limiter(config.requests_per_minute_per_ip),
            open: DashMap::new(),
            open_cap: config.connections_per_ip,
        }
    }

    fn check(limiter: Option<&Keyed>, ip: IpAddr) -> Result<(), Duration> {
        match limiter {
            None => Ok(()),
            Some(l) => l.check_key(&client_key(ip)).map_err(|n| wait_of(&n)),
        }
    }

    /// Whether `ip` may create a table now; else how long to wait.
    ///
    /// # Errors
    /// The wait, when the address is over its limit.
    pub fn allow_table(&self, ip: IpAddr) -> Result<(), Duration> {
        Limits::check(self.tables.as_ref(), ip)
    }

    /// Whether `ip` may open a connection now; else how long to wait.
    ///
    /// # Errors
    /// The wait, when the address is over its limit.
    pub fn allow_connection(&self, ip: IpAddr) -> Result<(), Duration> {
        Limits::check(self.connections.as_ref(), ip)
    }

    /// Whether `ip` may make a REST request now; else how long to wait.
    ///
    /// # Errors
    /// The wait, when the address is over its limit.
    pub fn allow_request(&self, ip: IpAddr) -> Result<(), Duration> {
        Limits::check(self.requests.as_ref(), ip)
    }

    /// Counts a connection from `ip` as open; false (and nothing counted)
    /// when the address already holds as many as it may. Every `true` must
    /// be matched by one [`Limits::close_connection`].
    pub fn open_connection(&self, ip: IpAddr) -> bool {
        if self.open_cap == 0 {
            return true;
        }
        let mut open = self.open.entry(client_key(ip)).or_insert(0);
        if *open >= self.open_cap {
            return false;
        }
        *open += 1;
        true
    }

    /// A connection from `ip` counted by [`Limits::open_connection`] ended.
    pub fn close_connection(&self, ip: IpAddr) {
        if self.open_cap == 0 {
            return;
        }
        if let dashmap::Entry::Occupied(mut e) = self.open.entry(client_key(ip)) {
            *e.get_mut() = e.get().saturating_sub(1);
            if *e.get() == 0 {
                e.remove();
            }
        }
    }

    /// Connections open from `ip`'s client key (counted only under a cap).
    pub fn open_from(&self, ip: IpAddr) -> usize {
        self.open.get(&client_key(ip)).map_or(0, |n| *n)
    }

    /// Forgets addresses that have not been seen for a while.
    pub fn forget_idle(&self) {
        for l in self.tables.iter().chain(self.connections.iter()).chain(self.requests.iter()) {
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
    /// Per-address limits.
    pub limits: Limits,
    /// Reverse proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<Cidr>,
    /// Permits for REST requests in progress.
    pub requests: Arc<Semaphore>,
    /// This node's part of the cluster; `None` for a single server.
    pub cluster: Option<Arc<crate::cluster::Cluster>>,
    next_conn: AtomicU64,
}

/// A cheap handle on [`Shared`].
pub type AppState = Arc<Shared>;

impl Shared {
    /// A new connection id.
    pub fn next_conn_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// The client address of a request from TCP peer `peer` (see
    /// [`client_addr`]).
    pub fn client_ip(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        client_addr(peer, headers, &self.trusted_proxies)
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
        let mut init = self.table_init(id, name, options, owner, now_ms());
        if let Some(c) = &self.cluster {
            // This node owns the new table from its first write on.
            (init.journal, init.shutdown) = c.own(&self.journal, &self.shutdown, 0);
        }
        init.journal.create_table(&table::table_record(&init)).await.map_err(|e| {
            warn!(error = %e, "could not store a new table");
            AppError::internal("storage is unavailable")
        })?;
        let handle = table::spawn(init, None, &self.tracker);
        if let Some(c) = &self.cluster {
            c.owns(0, handle.clone());
        }
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
                // Only the ended task's handle: in cluster mode the table
                // may be running here again already, under a new lease.
                if let Some(r) = registry.upgrade() {
                    r.tables.remove_if(&id, |_, h| h.is_closed());
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
        seat_connections: config.limits.connections_per_seat,
        search_slots: Arc::new(Semaphore::new(if t.bot_searches == 0 {
            table::default_search_slots()
        } else {
            t.bot_searches
        })),
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
    let options = StoreOptions {
        commit_interval: Duration::from_millis(config.storage.commit_interval_ms),
        ..StoreOptions::default()
    };
    let journal = Journal::open_with(&config.storage.database_url, &config.storage.data_dir, options)
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
    // The whole API router sits inside both middlewares, so the limits
    // and the JSON error bodies cover unknown paths and methods too.
    let api = ServiceBuilder::new()
        .layer(middleware::from_fn(rest::json_errors))
        .layer(middleware::from_fn_with_state(Arc::clone(&state), rest_guard))
        .service(rest::routes().with_state(Arc::clone(&state)));
    // With a separate metrics address, /metrics is served there only.
    let metrics = state.config.server.metrics_bind.is_none();
    Router::new()
        .route("/ws", get(ws::upgrade))
        .nest_service("/api/v1", api)
        .route("/healthz", get(rest::healthz))
        .route("/readyz", get(rest::readyz))
        .route("/", get(web::index))
        .route("/{*path}", get(web::asset))
        .merge(if metrics { metrics_router(Arc::clone(&state)) } else { Router::new() })
        .with_state(state)
        .layer(
            ServiceBuilder::new()
                .layer(SetRequestIdLayer::new(request_id.clone(), MakeRequestUuid))
                .layer(trace)
                .layer(PropagateRequestIdLayer::new(request_id))
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
            .allow_methods([Method::GET, Method::POST])
            .allow_headers([header::CONTENT_TYPE]),
    )
}

/// Builds the shared state from a configuration and a journal.
pub fn state(config: Config, journal: Journal, shutdown: CancellationToken) -> AppState {
    state_in(config, journal, shutdown, None)
}

/// [`state`] for one node of a cluster (or none).
fn state_in(
    config: Config,
    journal: Journal,
    shutdown: CancellationToken,
    cluster: Option<Arc<crate::cluster::Cluster>>,
) -> AppState {
    let settings = Arc::new(table_settings(&config));
    let limits = Limits::new(&config.limits);
    let trusted_proxies = config.trusted_proxies();
    let requests = Arc::new(Semaphore::new(config.limits.max_concurrent_requests));
    Arc::new(Shared {
        config,
        registry: Arc::new(Registry::default()),
        journal,
        settings,
        shutdown,
        tracker: TaskTracker::new(),
        connections: AtomicUsize::new(0),
        limits,
        trusted_proxies,
        requests,
        cluster,
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
    let cluster = if config.cluster.enabled() {
        Some(crate::cluster::Cluster::join(&config, &journal).await?)
    } else {
        None
    };
    let state = state_in(config, journal, shutdown.clone(), cluster);
    // A single server restores every unfinished table; a node of a cluster
    // claims its share through its lease loop instead.
    let leases = if state.cluster.is_some() {
        Some(crate::cluster::start(&state).await?)
    } else {
        crate::restore::restore_tables(&state).await;
        None
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn ipv6_addresses_are_keyed_by_their_64() {
        assert_eq!(client_key(ip("203.0.113.9")), ip("203.0.113.9"));
        assert_eq!(client_key(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd")), ip("2001:db8:1:2::"));
        assert_eq!(client_key(ip("2001:db8:1:2::1")), client_key(ip("2001:db8:1:2:ffff::7")));
        assert_ne!(client_key(ip("2001:db8:1:2::1")), client_key(ip("2001:db8:1:3::1")));
        assert_eq!(client_key(ip("::ffff:198.51.100.4")), ip("198.51.100.4"));
    }

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(X_FORWARDED_FOR, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn the_client_address_comes_from_trusted_proxies_only() {
        let trusted: Vec<Cidr> =
            ["127.0.0.1", "10.0.0.0/8", "::1"].iter().map(|t| t.parse().unwrap()).collect();
        let h = forwarded(&["198.51.100.7"]);
        // An untrusted peer's header is ignored.
        assert_eq!(client_addr(ip("203.0.113.1"), &h, &trusted), ip("203.0.113.1"));
        // No proxies configured: the peer, whatever the header says.
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &[]), ip("127.0.0.1"));
        // A trusted peer: the header's client.
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("198.51.100.7"));
        assert_eq!(client_addr(ip("::1"), &h, &trusted), ip("198.51.100.7"));
        assert_eq!(client_addr(ip("::ffff:10.1.1.1"), &h, &trusted), ip("198.51.100.7"));
        // The right-most entry that is not a trusted proxy; what the client
        // put on the left is not believed.
        let h = forwarded(&["6.6.6.6, 198.51.100.7, 10.0.0.5"]);
        assert_eq!(client_addr(ip("10.0.0.1"), &h, &trusted), ip("198.51.100.7"));
        let h = forwarded(&["6.6.6.6", "198.51.100.7", "10.0.0.5"]);
        assert_eq!(client_addr(ip("10.0.0.1"), &h, &trusted), ip("198.51.100.7"));
        // Garbage left of the client's entry is never reached.
        let h = forwarded(&["garbage, 198.51.100.7"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("198.51.100.7"));
        // Ports and IPv6 entries.
        let h = forwarded(&["198.51.100.7:4711"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("198.51.100.7"));
        let h = forwarded(&["[2001:db8::5]:443"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("2001:db8::5"));
        let h = forwarded(&["2001:db8::5"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("2001:db8::5"));
        // Every entry a trusted proxy: the left-most.
        let h = forwarded(&["10.9.9.9, 10.0.0.5"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("10.9.9.9"));
        // Missing or bad header: the peer.
        assert_eq!(client_addr(ip("127.0.0.1"), &HeaderMap::new(), &trusted), ip("127.0.0.1"));
        let h = forwarded(&["not-an-address"]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("127.0.0.1"));
        let h = forwarded(&["198.51.100.7, "]);
        assert_eq!(client_addr(ip("127.0.0.1"), &h, &trusted), ip("127.0.0.1"));
    }

    #[test]
    fn open_connections_are_capped_per_client_key() {
        let config = LimitsConfig { connections_per_ip: 2, ..LimitsConfig::default() };
        let limits = Limits::new(&config);
        let a = ip("2001:db8:1:2::1");
        let b = ip("2001:db8:1:2::2");
        assert!(limits.open_connection(a));
        assert!(limits.open_connection(b));
        assert!(!limits.open_connection(a), "the same /64");
        assert!(limits.open_connection(ip("2001:db8:1:3::1")), "another /64");
        assert_eq!(limits.open_from(a), 2);
        limits.close_connection(b);
        assert!(limits.open_connection(a));
        limits.close_connection(a);
        limits.close_connection(a);
        assert_eq!(limits.open_from(a), 0);
        assert!(limits.open.get(&client_key(a)).is_none(), "empty entries are removed");
        let unlimited = Limits::new(&LimitsConfig { connections_per_ip: 0, ..LimitsConfig::default() });
        for _ in 0..100 {
            assert!(unlimited.open_connection(a));
        }
    }

    #[test]
    fn rate_limits_say_how_long_to_wait() {
        let config = LimitsConfig { requests_per_minute_per_ip: 2, ..LimitsConfig::default() };
        let limits = Limits::new(&config);
        let a = ip("2001:db8:1:2::1");
        assert!(limits.allow_request(a).is_ok());
        assert!(limits.allow_request(ip("2001:db8:1:2::9")).is_ok());
        let wait = limits.allow_request(a).unwrap_err();
        assert!(wait > Duration::from_secs(20) && wait <= Duration::from_secs(30), "{wait:?}");
        assert!(limits.allow_request(ip("192.0.2.1")).is_ok());
    }

    #[test]
    fn table_settings_follow_the_configuration() {
        let mut config = Config::default();
        config.limits.connections_per_seat = 2;
        config.tables.bot_searches = 3;
        let s = table_settings(&config);
        assert_eq!(s.seat_connections, 2);
        assert_eq!(s.search_slots.available_permits(), 3);
        config.tables.bot_searches = 0;
        assert_eq!(table_settings(&config).search_slots.available_permits(), table::default_search_slots());
    }
}
