//! The application: shared state, the router, and `serve`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::routing::get;
use dashmap::DashMap;
use spades_protocol::{ErrorCode, TableOptions, TableSummary};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{error, info, warn};
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

/// Rebuilds every unfinished match from the log and starts its table.
/// A record that cannot be read or replayed is reported and skipped; the
/// others load. Returns (restored, skipped).
pub async fn restore_tables(state: &AppState) -> (usize, usize) {
    let stored = match state.journal.unfinished().await {
        Ok(s) => s,
        Err(e) => {
            error!(error = %e, "could not read unfinished matches: none restored");
            return (0, 0);
        }
    };
    let (mut restored, mut skipped) = (0, 0);
    for entry in stored {
        let table = match entry.and_then(|t| crate::record::restore(&t).map(|r| (t, r))) {
            Ok(t) => t,
            Err(e) => {
                error!(error = %e, "a stored table could not be restored and was skipped");
                skipped += 1;
                continue;
            }
        };
        let (stored, (restored_state, owner)) = table;
        let id = stored.table.id;
        // Heal summaries a crash may have cut off: hand results derive from
        // the log.
        if let Some(m) = &restored_state.game {
            for result in m.results().iter().skip(stored.hands.len()) {
                if let Err(e) = state.journal.hand(id, result).await {
                    warn!(table_id = %id, error = %e, "could not store a replayed hand result");
                }
            }
            if let (Some(end), None) = (m.result(), stored.result) {
                let _ = state.journal.finish(id, end).await;
            }
        }
        let init = state.table_init(
            id,
            stored.table.name.clone(),
            stored.table.options,
            owner,
            stored.table.created_at_ms,
        );
        let moves = stored.actions.len();
        let handle = table::spawn(init, Some(restored_state), &state.tracker);
        state.insert_table(handle);
        info!(table_id = %id, moves, "table restored");
        restored += 1;
    }
    if restored + skipped > 0 {
        info!(restored, skipped, "restored unfinished matches");
    }
    (restored, skipped)
}

/// The HTTP routes.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/ws", get(ws::upgrade))
        .nest("/api/v1", rest::routes())
        .route("/healthz", get(rest::healthz))
        .route("/readyz", get(rest::readyz))
        .route("/", get(web::index))
        .route("/{*path}", get(web::asset))
        .with_state(state)
}

/// Builds the shared state from a configuration and a journal.
pub fn state(config: Config, journal: Journal, shutdown: CancellationToken) -> AppState {
    let settings = Arc::new(table_settings(&config));
    Arc::new(Shared {
        config,
        registry: Arc::new(Registry::default()),
        journal,
        settings,
        shutdown,
        tracker: TaskTracker::new(),
        connections: AtomicUsize::new(0),
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
    let state = state(config, journal, shutdown.clone());
    restore_tables(&state).await;
    let app = router(Arc::clone(&state)).into_make_service_with_connect_info::<SocketAddr>();
    let addr = listener.local_addr().context("listener address")?;
    info!(%addr, "listening");
    axum::serve(listener, app).with_graceful_shutdown(shutdown.clone().cancelled_owned()).await?;
    state.tracker.close();
    let grace = Duration::from_secs(state.config.server.shutdown_grace_secs);
    if tokio::time::timeout(grace, state.tracker.wait()).await.is_err() {
        warn!("some tables or connections did not finish in time");
    }
    info!("stopped");
    Ok(())
}
