//! The tables this node hosts: creating them, restoring them from the
//! event log ([`restore`]), starting rematches ([`rematch`]), and finding
//! them by id ([`Registry`]).
//!
//! In cluster mode every table here runs under a lease: the cluster gives
//! [`Hosting`] a [`Leasing`] that fences each table's writes with its epoch
//! and learns of each table started, so this module knows nothing of nodes,
//! NATS or placement.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use spades_protocol::{ErrorCode, TableOptions, TableSummary};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::{info, warn};
use uuid::Uuid;

use crate::config::Config;
use crate::error::AppError;
use crate::storage::Journal;
use crate::table::{self, ConnId, Ownership, TableHandle, TableInit, TableSettings};
use crate::time::now_ms;
use crate::token::new_token;

mod registry;
mod rematch;
mod restore;

pub use registry::Registry;

/// How the tables of a node of a cluster run under their leases:
/// implemented by the cluster, which renews the leases and stops a table
/// whose lease it lost.
pub trait Leasing: Send + Sync + std::fmt::Debug {
    /// The journal a table run under `epoch` writes through (every write
    /// fenced by the epoch) and the token that stops it, made from the
    /// server's own.
    fn fence(
        &self,
        journal: &Journal,
        shutdown: &CancellationToken,
        epoch: u64,
    ) -> (Journal, CancellationToken);

    /// A table was started here under `epoch`.
    fn started(&self, epoch: u64, handle: TableHandle);
}

/// This node's tables and what it takes to start one.
#[derive(Debug)]
pub struct Hosting {
    registry: Arc<Registry>,
    /// The event log.
    journal: Journal,
    /// Settings for every table.
    settings: Arc<TableSettings>,
    /// Cancelled when the server shuts down.
    shutdown: CancellationToken,
    /// Tracks table and connection tasks, to wait for them on shutdown.
    tracker: TaskTracker,
    /// Most tables hosted at once.
    max_tables: usize,
    /// Frames a connection's outbox holds.
    outbox_frames: usize,
    /// In cluster mode: the leases tables run under.
    leasing: Option<Arc<dyn Leasing>>,
    next_conn: AtomicU64,
}

impl Hosting {
    /// No tables yet; tables will be started with `journal` and the
    /// settings of `config`, and tracked by `tracker`.
    pub fn new(
        config: &Config,
        journal: Journal,
        shutdown: CancellationToken,
        tracker: TaskTracker,
        leasing: Option<Arc<dyn Leasing>>,
    ) -> Hosting {
        Hosting {
            registry: Arc::new(Registry::default()),
            journal,
            settings: Arc::new(table_settings(config)),
            shutdown,
            tracker,
            max_tables: config.limits.max_tables,
            outbox_frames: config.limits.outbox_frames,
            leasing,
            next_conn: AtomicU64::new(1),
        }
    }

    /// The table's handle, if it is hosted here.
    pub fn get(&self, id: &Uuid) -> Option<TableHandle> {
        self.registry.get(id)
    }

    /// Every table's lobby summary.
    pub fn summaries(&self) -> Vec<TableSummary> {
        self.registry.summaries()
    }

    /// Number of tables hosted.
    pub fn len(&self) -> usize {
        self.registry.len()
    }

    /// True when no table is hosted.
    pub fn is_empty(&self) -> bool {
        self.registry.is_empty()
    }

    /// A new connection id: unique among every connection attached to a
    /// table here, local or relayed from another node.
    pub fn next_conn_id(&self) -> ConnId {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// Frames a connection's outbox holds.
    pub fn outbox_frames(&self) -> usize {
        self.outbox_frames
    }

    /// Cancelled when the server shuts down.
    pub fn shutdown(&self) -> &CancellationToken {
        &self.shutdown
    }

    /// The tracker of table and connection tasks.
    pub fn tracker(&self) -> &TaskTracker {
        &self.tracker
    }

    /// Creates a table and starts its task.
    ///
    /// # Errors
    /// Capacity reached, or the log or random source failed.
    pub async fn create(
        &self,
        name: String,
        options: TableOptions,
        owner_account: Option<Uuid>,
    ) -> Result<(Uuid, String), AppError> {
        self.check_capacity()?;
        let (owner_token, token) = new_token().map_err(|_| AppError::internal("no randomness"))?;
        let id = Uuid::new_v4();
        let owner = Ownership { token, account: owner_account };
        let init = self.table_init(id, name, options, owner, now_ms(), 0);
        init.journal.create_table(&table::table_record(&init)).await.map_err(|e| {
            warn!(error = %e, "could not store a new table");
            AppError::internal("storage is unavailable")
        })?;
        self.start(init, None, 0);
        crate::metrics::table_created();
        info!(table_id = %id, "table created");
        Ok((id, owner_token))
    }

    /// Refuses a new table when as many are hosted as may be.
    fn check_capacity(&self) -> Result<(), AppError> {
        if self.registry.len() >= self.max_tables {
            return Err(AppError::new(ErrorCode::Capacity, "the server hosts as many tables as it can"));
        }
        Ok(())
    }

    /// The initial state of a table's task, run under `epoch` (fenced by it
    /// in cluster mode).
    fn table_init(
        &self,
        id: Uuid,
        name: String,
        options: TableOptions,
        owner: Ownership,
        created_at: u64,
        epoch: u64,
    ) -> TableInit {
        let registry = Arc::downgrade(&self.registry);
        let (journal, shutdown) = match &self.leasing {
            Some(leasing) => leasing.fence(&self.journal, &self.shutdown, epoch),
            None => (self.journal.clone(), self.shutdown.clone()),
        };
        TableInit {
            id,
            name,
            options,
            owner,
            created_at,
            settings: Arc::clone(&self.settings),
            journal,
            shutdown,
            on_exit: Box::new(move |id| {
                if let Some(r) = registry.upgrade() {
                    r.forget_ended(&id);
                }
            }),
        }
    }

    /// Starts a table's task under `epoch` and registers it.
    fn start(&self, init: TableInit, restored: Option<crate::record::Restored>, epoch: u64) -> TableHandle {
        let handle = table::spawn(init, restored, &self.tracker);
        if let Some(leasing) = &self.leasing {
            leasing.started(epoch, handle.clone());
        }
        self.registry.insert(handle.clone());
        handle
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
        reveal: Duration::from_millis(t.reveal_ms),
        search_slots: Arc::new(Semaphore::new(if t.bot_searches == 0 {
            table::default_search_slots()
        } else {
            t.bot_searches
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
