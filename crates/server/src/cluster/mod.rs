//! Cluster mode: several nodes on one PostgreSQL and one NATS.
//!
//! - **Ownership** ([`leases`]): each unfinished table has at most one
//!   owner, through a lease row with an epoch in PostgreSQL; the owner's
//!   writes carry the epoch ([`crate::storage::Fence`]) and are refused once
//!   another node claimed the table, which stops the table at once.
//! - **Routing** ([`relay`], [`owner`]): any node accepts any connection. A
//!   connection to a table owned elsewhere is relayed: its commands go to
//!   the owner over NATS, the owner's frames for it come back the same way.
//!   When the table moves, the relay attaches its connections to the new
//!   owner with their seat tokens; the clients see a pause.
//! - **REST** answers the same on every node: status from the owner, the
//!   lobby from every node, new tables placed on the least loaded node when
//!   this one holds more than its share ([`crate::directory`] asks here
//!   for what is not on this node).
//!
//! The cluster runs this node's tables through [`Hosting`], the narrow
//! handle it is given (create, restore, look up), and implements
//! [`Leasing`] for it: hosting fences each table's writes through it and
//! tells it of every table started. A single server has none of this.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use dashmap::DashMap;
use spades_protocol::{ErrorCode, TableOptions, TableOwner, TableStatus, TableSummary};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};
use uuid::Uuid;

use crate::accounts::{Accounts, Announce};
use crate::config::Config;
use crate::error::AppError;
use crate::hosting::{Hosting, Leasing};
use crate::moderation::Moderation;
use crate::storage::{Fence, Journal, Leases, NodeRow, Registered, TableCounts};
use crate::table::TableHandle;

mod leases;
mod owner;
mod relay;
pub mod wire;

use wire::{Reply, Request, Subjects};

/// How long a request to another node may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);

/// How long the lobby waits for the other nodes' answers.
const LOBBY_WAIT: Duration = Duration::from_millis(400);

/// What one round of the lease loop read of the cluster.
#[derive(Debug, Default)]
struct Census {
    /// The live nodes, each with the tables it owned at one instant.
    nodes: Vec<NodeRow>,
    /// The cluster's unfinished tables (`None`: not counted this round).
    counts: Option<TableCounts>,
}

/// A table this node owns.
#[derive(Debug, Clone)]
struct Owned {
    epoch: u64,
    handle: TableHandle,
}

/// This node's part of the cluster (shared by every request).
#[derive(Debug)]
pub struct Cluster {
    /// This node's id.
    node: Arc<str>,
    /// This process (a node id is used by one process at a time).
    incarnation: String,
    /// Where other nodes send this process's relayed frames:
    /// `<node>.<incarnation>`, so that nothing meant for an earlier process
    /// of this node id (whose connection ids repeat) ever reaches this one.
    origin: String,
    nats: async_nats::Client,
    leases: Leases,
    subjects: Subjects,
    lease_ms: u64,
    /// Tables this node owns, with their epochs.
    owned: DashMap<Uuid, Owned>,
    /// Relays to tables owned elsewhere, by table.
    relays: DashMap<Uuid, relay::RelayRef>,
    /// Relayed connections by their id here: where their frames go.
    links: DashMap<u64, relay::Link>,
    /// Connections of other nodes attached to tables here.
    remote: DashMap<(String, u64), owner::RemoteConn>,
    /// The live nodes and the cluster's tables as of the last round of the
    /// lease loop: how many nodes share the tables, and where new tables go
    /// ([`placement`]).
    census: std::sync::Mutex<Census>,
    /// SIGTERM: this node is handing its tables over.
    draining: AtomicBool,
    /// Wakes the claim loop (another node handed tables over).
    claim_now: tokio::sync::Notify,
    /// Forwarders still sending frames to relaying nodes (a drain waits
    /// for them, so that every answer is out before the tables move).
    forwarders: AtomicUsize,
    /// A round of claims is under way.
    claiming: AtomicBool,
    /// When this node last renewed its leases (Unix ms): a node paused
    /// for longer than half a lease may have lost them, and checks before
    /// it answers for a table from memory ([`Cluster::still_holds`]).
    renewed_at: AtomicU64,
}

impl Cluster {
    /// Connects to NATS and takes this node's id in the nodes table.
    ///
    /// # Errors
    /// A database that is not PostgreSQL, an unreachable NATS, or a node id
    /// in use by a running node.
    pub async fn join(config: &Config, journal: &Journal) -> anyhow::Result<Arc<Cluster>> {
        let c = &config.cluster;
        let Some(leases) = journal.leases() else {
            anyhow::bail!("cluster mode needs PostgreSQL storage (storage.database_url = postgres://…)");
        };
        let node: Arc<str> = config.node_id().into();
        let incarnation = Uuid::new_v4().simple().to_string();
        let nats = async_nats::ConnectOptions::new()
            .name(format!("spades-server {node}"))
            .connection_timeout(Duration::from_secs(5))
            .request_timeout(Some(REQUEST_TIMEOUT))
            .subscription_capacity(65_536)
            .client_capacity(65_536)
            .connect(c.nats_url.as_str())
            .await
            .map_err(|e| {
                anyhow::anyhow!("cluster.nats_url {}: {e}", crate::config::redact_url(&c.nats_url))
            })?;
        let subjects = Subjects::new(&c.subject_prefix);
        refuse_other_wire_versions(&nats, &subjects, &leases, &node, c.lease_ms).await?;
        let address =
            if c.advertise.is_empty() { config.server.bind.to_string() } else { c.advertise.clone() };
        // A node id is one process's at a time: a live node beats every
        // quarter lease, so an id still refused after a lease and a second
        // belongs to a running node; a killed node's id frees up by then.
        let started = std::time::Instant::now();
        let wait = Duration::from_millis(c.lease_ms + 1000);
        loop {
            match leases.register(&node, &incarnation, &address, c.lease_ms).await? {
                Some(Registered::Fresh) => break,
                Some(Registered::Replaced { silent_ms }) => {
                    info!(node = %node, silent_ms, "took over the node id of a stopped process");
                    break;
                }
                None if started.elapsed() < wait => tokio::time::sleep(Duration::from_millis(250)).await,
                None => {
                    let silent = leases.node_row(&node).await?.map_or(0, |(_, s, _)| s);
                    anyhow::bail!(
                        "cluster.node_id {node:?} is in use by a running node (its last heartbeat was {silent} ms \
                         ago): give every node its own node_id"
                    );
                }
            }
        }
        info!(node = %node, "joined the cluster");
        Ok(Arc::new(Cluster {
            origin: format!("{node}.{incarnation}"),
            node,
            incarnation,
            nats,
            leases,
            subjects,
            lease_ms: c.lease_ms,
            owned: DashMap::new(),
            relays: DashMap::new(),
            links: DashMap::new(),
            remote: DashMap::new(),
            census: std::sync::Mutex::new(Census::default()),
            draining: AtomicBool::new(false),
            claim_now: tokio::sync::Notify::new(),
            forwarders: AtomicUsize::new(0),
            claiming: AtomicBool::new(false),
            renewed_at: AtomicU64::new(crate::time::now_ms()),
        }))
    }

    /// True while the connection to NATS is up (readiness).
    pub fn nats_connected(&self) -> bool {
        self.nats.connection_state() == async_nats::connection::State::Connected
    }

    /// Forgets a table whose task ended.
    pub fn disowned(&self, table: Uuid) {
        self.owned.remove(&table);
    }

    fn epoch_of(&self, table: Uuid) -> Option<u64> {
        self.owned.get(&table).map(|o| o.epoch)
    }

    /// The leases were renewed now.
    fn renewed(&self) {
        self.renewed_at.store(crate::time::now_ms(), Ordering::Relaxed);
    }

    /// True while the leases were renewed within half a lease: what this
    /// node runs is surely still its own.
    fn leases_fresh(&self) -> bool {
        crate::time::now_ms().saturating_sub(self.renewed_at.load(Ordering::Relaxed)) < self.lease_ms / 2
    }

    /// Whether this node still holds `table`'s lease, so that it may answer
    /// for it from memory. Asked of the database only when the leases were
    /// not renewed lately (the process was paused, or the database slow);
    /// a table found lost is stopped at once, before the lease loop would.
    ///
    /// # Errors
    /// When the database cannot say.
    pub async fn still_holds(&self, table: Uuid) -> Result<bool, crate::storage::StorageError> {
        let Some(epoch) = self.epoch_of(table) else { return Ok(false) };
        if self.leases_fresh() {
            return Ok(true);
        }
        let owner = self.leases.owners(&[table]).await?.into_iter().next().map(|(_, o)| o);
        let held =
            owner.is_some_and(|o| o.live && o.epoch == epoch && o.node.as_deref() == Some(&*self.node));
        if !held {
            warn!(table_id = %table, "the table's lease was lost while this node was away: it stops here");
            if let Some((_, o)) = self.owned.remove(&table) {
                o.handle.stop();
            }
        }
        Ok(held)
    }

    /// Another node (or this one) runs a table it claimed: the relay of
    /// that table here, if any, moves its connections there now.
    fn table_claimed(&self, notice: &wire::Claimed) {
        if let Some(r) = self.relays.get(&notice.table) {
            r.owner(crate::storage::Owner {
                node: Some(notice.node.clone()),
                epoch: notice.epoch,
                live: true,
                done: false,
            });
        }
    }

    /// This node's id and its lease's epoch of `table`, if it owns it.
    pub fn owner_of(&self, table: Uuid) -> Option<TableOwner> {
        Some(TableOwner { node: self.node.to_string(), epoch: self.epoch_of(table)? })
    }

    async fn request(&self, node: &str, req: &Request) -> Result<Reply, String> {
        self.request_within(node, req, REQUEST_TIMEOUT).await
    }

    /// How long a relay waits for an owner to answer an attach: half a
    /// lease (from half a second to [`REQUEST_TIMEOUT`]). An owner that
    /// was paused still holds its subscription and never answers; the
    /// relay asks again, of whoever owns the table by then, instead of
    /// holding every connection it carries for the whole timeout.
    fn attach_wait(&self) -> Duration {
        Duration::from_millis(self.lease_ms / 2).clamp(Duration::from_millis(500), REQUEST_TIMEOUT)
    }

    async fn request_within(&self, node: &str, req: &Request, wait: Duration) -> Result<Reply, String> {
        let payload = wire::encode(req);
        let msg = tokio::time::timeout(wait, self.nats.request(self.subjects.requests(node), payload.into()))
            .await
            .map_err(|_| format!("node {node} did not answer"))?
            .map_err(|e| format!("node {node}: {e}"))?;
        wire::decode(&msg.payload).map_err(|e| e.to_string())
    }
}

impl Leasing for Cluster {
    /// The fenced journal and stop token of a table this node owns under
    /// `epoch`; it is counted as owned until its task ends.
    fn fence(
        &self,
        journal: &Journal,
        shutdown: &CancellationToken,
        epoch: u64,
    ) -> (Journal, CancellationToken) {
        let stop = shutdown.child_token();
        let fence = Fence { node: Arc::clone(&self.node), epoch, lease_ms: self.lease_ms };
        (journal.fenced(fence, stop.clone()), stop)
    }

    /// Records a started table as owned.
    fn started(&self, epoch: u64, handle: TableHandle) {
        self.owned.insert(handle.id(), Owned { epoch, handle });
    }
}

/// Starts the node's loops: requests from other nodes, frames for relayed
/// connections, the lobby, and leases (heartbeat, renewal, claims, drain).
/// The returned task ends once the node has handed its tables over after
/// the server's shutdown.
///
/// # Errors
/// When NATS refuses the subscriptions.
pub async fn start(
    hosting: &Arc<Hosting>,
    cluster: &Arc<Cluster>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    owner::serve(hosting, cluster).await?;
    relay::serve_frames(cluster).await?;
    Ok(leases::start(Arc::clone(hosting), Arc::clone(cluster)).await)
}

/// Closes this node's connections of sessions signed out on any node:
/// listens for [`Announce`]ments (this node's own too, which find nothing
/// left to close).
///
/// # Errors
/// When NATS refuses the subscription.
pub async fn serve_sessions(cluster: &Arc<Cluster>, accounts: &Arc<Accounts>) -> anyhow::Result<()> {
    use futures_util::StreamExt;
    let mut ended = cluster.nats.subscribe(cluster.subjects.sessions_ended()).await?;
    accounts.announce_with(Arc::clone(cluster) as Arc<dyn Announce>);
    let accounts = Arc::clone(accounts);
    tokio::spawn(async move {
        while let Some(msg) = ended.next().await {
            match wire::decode::<wire::SessionsEnded>(&msg.payload) {
                Ok(notice) => notice.sessions.iter().for_each(|s| accounts.end(*s)),
                Err(e) => warn!(error = %e, "a sign-out notice from another node was not read"),
            }
        }
    });
    Ok(())
}

/// Closes this node's connections of accounts suspended or banned on any
/// node: listens for [`crate::moderation::Announce`]ments.
///
/// # Errors
/// When NATS refuses the subscription.
pub async fn serve_bars(cluster: &Arc<Cluster>, moderation: &Arc<Moderation>) -> anyhow::Result<()> {
    use futures_util::StreamExt;
    let mut barred = cluster.nats.subscribe(cluster.subjects.accounts_barred()).await?;
    moderation.announce_with(Arc::clone(cluster) as Arc<dyn crate::moderation::Announce>);
    let moderation = Arc::clone(moderation);
    tokio::spawn(async move {
        while let Some(msg) = barred.next().await {
            match wire::decode::<wire::AccountsBarred>(&msg.payload) {
                Ok(notice) => notice.accounts.iter().for_each(|a| moderation.bar(*a)),
                Err(e) => warn!(error = %e, "a suspension notice from another node was not read"),
            }
        }
    });
    Ok(())
}

impl crate::moderation::Announce for Cluster {
    fn accounts_barred(&self, accounts: &[Uuid]) {
        let payload = wire::encode(wire::AccountsBarred { accounts: accounts.to_vec() });
        let (nats, subject) = (self.nats.clone(), self.subjects.accounts_barred());
        tokio::spawn(async move {
            if let Err(e) = nats.publish(subject, payload.into()).await {
                warn!(error = %e, "a suspension could not be announced to the other nodes");
            }
        });
    }
}

impl Announce for Cluster {
    fn sessions_ended(&self, sessions: &[Uuid]) {
        let payload = wire::encode(wire::SessionsEnded { sessions: sessions.to_vec() });
        let (nats, subject) = (self.nats.clone(), self.subjects.sessions_ended());
        tokio::spawn(async move {
            if let Err(e) = nats.publish(subject, payload.into()).await {
                warn!(error = %e, "a sign-out could not be announced to the other nodes");
            }
        });
    }
}

impl Cluster {
    /// A relay to `table`, owned by another node; `None` when no node has
    /// it (unknown, finished or closed).
    pub async fn relay_for(self: &Arc<Self>, hosting: &Arc<Hosting>, table: Uuid) -> Option<TableHandle> {
        relay::relay_for(hosting, self, table).await
    }

    /// Gives the node that owns `table` an operator's order. True when a
    /// running table took it; false when the table runs nowhere or did not
    /// answer (a removed message is in the store all the same, and a
    /// connection that attaches later is sent only what the table keeps).
    pub async fn order(&self, table: Uuid, order: crate::table::OperatorOrder) -> bool {
        let owners = match self.leases.owners(&[table]).await {
            Ok(owners) => owners,
            Err(e) => {
                warn!(error = %e, "could not read a table's owner");
                return false;
            }
        };
        let Some((_, owner)) = owners.into_iter().next() else { return false };
        let Some(node) = owner.node.filter(|_| owner.live && !owner.done) else { return false };
        matches!(self.request(&node, &Request::Order { table, order }).await, Ok(Reply::Done))
    }

    /// The public status of a table this node does not run, from its owner.
    ///
    /// # Errors
    /// `table_not_found`, or 503 while the table moves between nodes.
    pub async fn status(&self, hosting: &Hosting, table: Uuid) -> Result<TableStatus, AppError> {
        let not_found = || AppError::new(ErrorCode::TableNotFound, "no such table");
        for attempt in 0..3 {
            let owners = self.leases.owners(&[table]).await.map_err(|e| {
                warn!(error = %e, "could not read a table's owner");
                AppError::new(ErrorCode::StorageUnavailable, "storage is unavailable")
                    .with_status(axum::http::StatusCode::SERVICE_UNAVAILABLE)
            })?;
            let Some((_, owner)) = owners.into_iter().next() else { return Err(not_found()) };
            if owner.done {
                return Err(not_found());
            }
            if let Some(node) = owner.node.filter(|_| owner.live)
                && node != *self.node
                && let Ok(Reply::Status { status }) = self.request(&node, &Request::Status { table }).await
            {
                return Ok(*status);
            }
            if let Some(h) = hosting.get(&table)
                && !h.stopped()
                && self.still_holds(table).await.unwrap_or(false)
                && let Ok(mut status) = h.status().await
            {
                status.owner = self.owner_of(table);
                return Ok(status);
            }
            tokio::time::sleep(Duration::from_millis(150 << attempt)).await;
        }
        Err(AppError::new(ErrorCode::Internal, "the table is moving to another server: try again")
            .with_status(axum::http::StatusCode::SERVICE_UNAVAILABLE)
            .retry_after(Duration::from_secs(1)))
    }

    /// The lobby lines of the other nodes' tables: every answer within a
    /// short wait.
    pub async fn others_lobby(&self) -> Vec<TableSummary> {
        let mut tables = Vec::new();
        let others = self.live_nodes().saturating_sub(1);
        if others == 0 {
            return tables;
        }
        let inbox = self.nats.new_inbox();
        let Ok(mut answers) = self.nats.subscribe(inbox.clone()).await else { return tables };
        // The question names the asking node, which does not answer itself.
        let question = self.node.as_bytes().to_vec();
        if self.nats.publish_with_reply(self.subjects.lobby(), inbox, question.into()).await.is_err() {
            return tables;
        }
        let deadline = tokio::time::Instant::now() + LOBBY_WAIT;
        let mut heard = 0;
        while heard < others {
            use futures_util::StreamExt;
            let Ok(Some(msg)) = tokio::time::timeout_at(deadline, answers.next()).await else { break };
            if let Ok(Reply::Lobby { tables: theirs }) = wire::decode(&msg.payload) {
                heard += 1;
                tables.extend(theirs);
            }
        }
        tables
    }

    /// Creates a table on the least loaded node when this one holds more
    /// than its share of the cluster's tables; `None` when it should be
    /// created here (or the chosen node could not take it).
    pub async fn place(
        &self,
        name: &str,
        options: TableOptions,
        owner_account: Option<Uuid>,
    ) -> Option<(Uuid, String)> {
        let node = self.placement()?;
        let create = Request::Create { name: name.to_owned(), options, owner_account };
        match self.request(&node, &create).await {
            Ok(Reply::Created { table, owner_token }) => {
                crate::metrics::table_placed_elsewhere();
                self.placed_on(&node);
                return Some((table, owner_token));
            }
            Ok(Reply::Error { code: ErrorCode::Capacity, message }) => {
                warn!(node = %node, message, "the chosen node is full: creating here");
            }
            Ok(_) | Err(_) => warn!(node = %node, "could not place a table on another node: creating here"),
        }
        None
    }
}

/// A cluster runs one wire version: before it takes its node id, a node
/// asks the running nodes the lobby question (every version answers it)
/// and refuses to join when an answer is of another version, rather than
/// join nodes that would refuse every request of its own.
///
/// # Errors
/// When a running node speaks another wire version, or the nodes cannot be
/// read or asked.
async fn refuse_other_wire_versions(
    nats: &async_nats::Client,
    subjects: &Subjects,
    leases: &Leases,
    node: &str,
    lease_ms: u64,
) -> anyhow::Result<()> {
    use futures_util::StreamExt;
    let others = leases.nodes(lease_ms).await?.into_iter().filter(|n| n.id != node).count();
    if others == 0 {
        return Ok(());
    }
    let inbox = nats.new_inbox();
    let mut answers = nats.subscribe(inbox.clone()).await?;
    nats.publish_with_reply(subjects.lobby(), inbox, node.as_bytes().to_vec().into()).await?;
    let deadline = tokio::time::Instant::now() + LOBBY_WAIT;
    for _ in 0..others {
        let Ok(Some(msg)) = tokio::time::timeout_at(deadline, answers.next()).await else { break };
        if let Err(wire::WireError::Version(theirs)) = wire::decode::<Reply>(&msg.payload) {
            anyhow::bail!(
                "a running node of this cluster speaks cluster wire version {theirs}, this one {}: a cluster \
                 runs one wire version, so stop the nodes of the other version first (docs/cluster.md)",
                wire::WIRE_VERSION
            );
        }
    }
    Ok(())
}

impl Cluster {
    /// Counts a table just placed on another node in this round's counts:
    /// the next goes to whichever node is then least loaded, and this node
    /// keeps new tables again once the others have grown enough (the tables
    /// it creates itself are not counted until the next round, like every
    /// other node's).
    fn placed_on(&self, node: &str) {
        if let Ok(mut census) = self.census.lock()
            && let Some(n) = census.nodes.iter_mut().find(|n| n.id == node)
        {
            n.tables += 1;
        }
    }

    /// The node new tables should go to instead of this one, if any.
    fn placement(&self) -> Option<String> {
        let census = self.census.lock().ok()?;
        placement(&self.node, &census.nodes, self.draining.load(Ordering::Relaxed))
    }

    /// Live nodes as of the last round (at least 1).
    fn live_nodes(&self) -> usize {
        self.census.lock().map_or(1, |c| c.nodes.len().max(1))
    }

    /// How many tables to claim this round (`None`: not counted): up to
    /// this node's share of the cluster's tables (plus one) beyond those it
    /// holds, and never fewer than its part of the tables nobody holds a
    /// live lease on, so a dead or drained node's tables always find owners
    /// in one round whatever the survivors already hold.
    fn claim_budget(&self) -> Option<usize> {
        let census = self.census.lock().ok()?;
        usize::try_from(claim_budget(&self.node, &census.nodes, census.counts.as_ref()?)).ok()
    }

    /// Keeps what this round read: the live nodes and, when they could be
    /// counted, the tables each owns at one instant and the cluster's total
    /// (comparing this node's live count with the others' heartbeat counts,
    /// up to a quarter lease old, sent tables away from a node that was only
    /// ahead of their last beats).
    fn saw(&self, mut nodes: Vec<NodeRow>, counts: Option<TableCounts>) {
        if let Some(c) = &counts {
            for n in &mut nodes {
                n.tables = c.owned.iter().find(|(id, _)| *id == n.id).map_or(0, |(_, t)| *t);
            }
            let mine = c.owned.iter().find(|(id, _)| *id == *self.node).map_or(0, |(_, t)| *t);
            crate::metrics::lease_census(mine, c.unowned_long);
        }
        if let Ok(mut census) = self.census.lock() {
            *census = Census { nodes, counts };
        }
    }
}

/// How many tables `me` claims in a round (see [`Cluster::claim_budget`]).
fn claim_budget(me: &str, nodes: &[NodeRow], counts: &TableCounts) -> u64 {
    let open = nodes.iter().filter(|n| !n.draining).count().max(1) as u64;
    let mine = nodes.iter().find(|n| *n.id == *me).map_or(0, |n| n.tables);
    let fair = (counts.total.div_ceil(open) + 1).saturating_sub(mine);
    let orphans = counts.claimable.div_ceil(open);
    fair.max(orphans)
}

/// The node a new table should go to when it is not `me`: `me` holds more
/// than its share (the cluster's tables over its live, non-draining nodes,
/// plus a quarter and one) or is draining, and another such node holds
/// fewer. The counts are as of the last round, up to a quarter lease ago:
/// the quarter keeps nodes that grow about evenly (behind a round-robin
/// balancer) from sending tables back and forth.
fn placement(me: &str, nodes: &[NodeRow], draining: bool) -> Option<String> {
    let open: Vec<&NodeRow> = nodes.iter().filter(|n| !n.draining).collect();
    let least = open.iter().filter(|n| *n.id != *me).min_by_key(|n| n.tables).map(|n| n.id.clone());
    if draining {
        return least;
    }
    if open.len() < 2 {
        return None;
    }
    let total: u64 = open.iter().map(|n| n.tables).sum::<u64>() + 1;
    let share = total.div_ceil(open.len() as u64);
    let mine = open.iter().find(|n| *n.id == *me).map_or(0, |n| n.tables);
    if mine <= share + share / 4 + 1 {
        return None;
    }
    least.filter(|id| open.iter().any(|n| n.id == *id && n.tables < mine))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, tables: u64, draining: bool) -> NodeRow {
        NodeRow {
            id: id.into(),
            incarnation: "i".into(),
            address: "a".into(),
            tables,
            draining,
            silent_ms: 0,
        }
    }

    #[test]
    fn a_node_within_its_share_keeps_new_tables() {
        let nodes = [row("a", 1000, false), row("b", 900, false), row("c", 950, false)];
        assert_eq!(placement("a", &nodes, false), None);
        assert_eq!(placement("b", &nodes, false), None);
    }

    #[test]
    fn a_node_over_its_share_sends_new_tables_to_the_least_loaded() {
        let nodes = [row("a", 3000, false), row("b", 3000, false), row("c", 0, false)];
        assert_eq!(placement("a", &nodes, false).as_deref(), Some("c"));
        assert_eq!(placement("c", &nodes, false), None);
        // A draining node is neither counted nor chosen.
        let nodes = [row("a", 4000, false), row("b", 0, true), row("c", 2000, false)];
        assert_eq!(placement("a", &nodes, false).as_deref(), Some("c"));
    }

    #[test]
    fn a_draining_node_places_everything_elsewhere() {
        let nodes = [row("a", 10, true), row("b", 30, false), row("c", 20, false)];
        assert_eq!(placement("a", &nodes, true).as_deref(), Some("c"));
        assert_eq!(placement("a", &[row("a", 10, true)], true), None);
    }

    fn counts(total: u64, claimable: u64) -> TableCounts {
        TableCounts { total, claimable, ..TableCounts::default() }
    }

    #[test]
    fn a_dead_nodes_tables_are_always_claimed_whatever_the_survivors_hold() {
        // Survivors with only finished matches (which own nothing) take the
        // dead node's two tables between them.
        let nodes = [row("a", 0, false), row("b", 0, false)];
        assert!(claim_budget("a", &nodes, &counts(2, 2)) >= 1);
        assert!(claim_budget("a", &nodes, &counts(2, 2)) + claim_budget("b", &nodes, &counts(2, 2)) >= 2);
        // A survivor far over its share still takes its part of the orphans.
        let nodes = [row("a", 9, false), row("b", 0, false)];
        assert_eq!(claim_budget("a", &nodes, &counts(10, 1)), 1);
        // Balanced survivors: a share each, every orphan covered.
        let nodes = [row("a", 10, false), row("b", 10, false)];
        let (a, b) = (claim_budget("a", &nodes, &counts(30, 10)), claim_budget("b", &nodes, &counts(30, 10)));
        assert!(a + b >= 10 && a <= 10, "{a} {b}");
        // Nothing unowned and at its share: nothing to take.
        assert_eq!(claim_budget("a", &nodes, &counts(20, 0)), 1, "the share plus one");
        // A draining node is not counted among those who share.
        let nodes = [row("a", 0, false), row("b", 0, true)];
        assert_eq!(claim_budget("a", &nodes, &counts(6, 6)), 7);
    }

    #[test]
    fn a_lone_node_keeps_everything() {
        assert_eq!(placement("a", &[row("a", 5000, false)], false), None);
    }
}
