//! What every REST request and WebSocket connection may use: the services
//! (this node's tables, every table wherever it runs, the records), the
//! per-address limits, and the counters the transports keep. Built once by
//! `app.rs`; the cluster never sees it.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use axum::http::HeaderMap;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::accounts::Accounts;
use crate::admission::{Limits, client_addr};
use crate::blocks::Blocks;
use crate::cluster::Cluster;
use crate::config::{Cidr, Config};
use crate::directory::Directory;
use crate::hosting::Hosting;
use crate::identities::Identities;
use crate::moderation::Moderation;
use crate::oidc::Oidc;
use crate::passkeys::{Passkeys, relying_party};
use crate::passwords::Passwords;
use crate::reports::Reports;
use crate::storage::Journal;

/// State shared by every request and connection.
#[derive(Debug)]
pub struct Shared {
    /// The configuration.
    pub config: Config,
    /// The tables this node hosts.
    pub hosting: Arc<Hosting>,
    /// Every table, wherever it runs.
    pub tables: Directory,
    /// The event log (match records, readiness).
    pub journal: Journal,
    /// Accounts and sessions.
    pub accounts: Arc<Accounts>,
    /// Passkeys: the relying party and the accounts' credentials.
    pub passkeys: Arc<Passkeys>,
    /// Passwords (when `accounts.passwords` is on).
    pub passwords: Arc<Passwords>,
    /// OpenID Connect providers and the identities they sign in.
    pub oidc: Arc<Oidc>,
    /// Every way into an account, listed and removed together.
    pub identities: Identities,
    /// Operators, sanctions and the audit log.
    pub moderation: Arc<Moderation>,
    /// Players' reports and the operators' queue.
    pub reports: Reports,
    /// The players each account blocks in chat.
    pub blocks: Blocks,
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
    /// This node's part of the cluster (readiness: NATS); `None` for a
    /// single server.
    pub cluster: Option<Arc<Cluster>>,
}

/// A cheap handle on [`Shared`].
pub type AppState = Arc<Shared>;

impl Shared {
    /// The state of a server with `config`, writing to `journal`, for one
    /// node of a cluster (or none).
    ///
    /// # Errors
    /// No passkey relying party can be made of `server.public_url`.
    pub fn new(
        config: Config,
        journal: Journal,
        shutdown: CancellationToken,
        cluster: Option<Arc<Cluster>>,
    ) -> Result<AppState, String> {
        let tracker = TaskTracker::new();
        let leasing = cluster.clone().map(|c| c as Arc<dyn crate::hosting::Leasing>);
        let hosting =
            Arc::new(Hosting::new(&config, journal.clone(), shutdown.clone(), tracker.clone(), leasing));
        let tables = Directory::new(Arc::clone(&hosting), cluster.clone());
        let limits = Limits::new(&config.limits);
        let trusted_proxies = config.trusted_proxies();
        let requests = Arc::new(Semaphore::new(config.limits.max_concurrent_requests));
        let accounts = Arc::new(Accounts::new(journal.accounts(), config.accounts.clone()));
        let passkeys = Arc::new(Passkeys::new(
            relying_party(&config.server)?,
            journal.accounts().passkeys(),
            journal.accounts().ceremonies(),
            Arc::clone(&accounts),
        ));
        let passwords = Arc::new(Passwords::new(
            config.accounts.passwords,
            journal.accounts().passwords(),
            Arc::clone(&accounts),
        ));
        let oidc = Arc::new(Oidc::new(
            &config.oidc,
            &config.server.public_url,
            journal.accounts().oidc(),
            journal.accounts().ceremonies(),
            Arc::clone(&accounts),
        )?);
        let identities = Identities::new(
            Arc::clone(&accounts),
            Arc::clone(&passkeys),
            Arc::clone(&passwords),
            Arc::clone(&oidc),
        );
        let moderation = Arc::new(Moderation::new(journal.accounts().moderation(), Arc::clone(&accounts)));
        let blocks = Blocks::new(journal.accounts().blocks(), Arc::clone(&accounts));
        let reports = Reports::new(
            journal.clone(),
            tables.clone(),
            Arc::clone(&moderation),
            config.moderation.reports_per_hour,
        );
        Ok(Arc::new(Shared {
            config,
            hosting,
            tables,
            journal,
            accounts,
            passkeys,
            passwords,
            oidc,
            identities,
            moderation,
            reports,
            blocks,
            shutdown,
            tracker,
            connections: AtomicUsize::new(0),
            limits,
            trusted_proxies,
            requests,
            cluster,
        }))
    }

    /// The client address of a request from TCP peer `peer` (see
    /// [`client_addr`]).
    pub fn client_ip(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        client_addr(peer, headers, &self.trusted_proxies)
    }
}
