//! The node's lease loop, every quarter lease: beat, renew the leases of
//! the tables here (one statement), stop any table whose lease was lost,
//! tell relays who owns their tables, and claim tables nobody holds, up to
//! this node's share. On shutdown: drain (stop the tables, hand their
//! leases over at once, tell the other nodes to claim them).

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tracing::{error, info, warn};
use uuid::Uuid;

use super::Cluster;
use crate::hosting::Hosting;

/// Most tables claimed in one round.
const CLAIM_BATCH: usize = 256;

/// Claimed tables restored at the same time (the store's read pool holds
/// eight connections).
const RESTORES_AT_ONCE: usize = 8;

/// How long a drain waits for its tables' tasks to end.
const DRAIN_WAIT: Duration = Duration::from_secs(5);

/// Runs the first round (the tables an earlier process of this node id
/// held come back first), then starts the loop. Called before the node
/// serves anything: a table this process creates must not be taken for one
/// of that earlier process's and claimed a second time.
pub(super) async fn start(hosting: Arc<Hosting>, cluster: Arc<Cluster>) -> tokio::task::JoinHandle<()> {
    if let Ok(mut moved) = cluster.nats.subscribe(cluster.subjects.moved()).await {
        let c = Arc::clone(&cluster);
        tokio::spawn(async move {
            while moved.next().await.is_some() {
                c.claim_now.notify_one();
            }
        });
    }
    if let Ok(mut claimed) = cluster.nats.subscribe(cluster.subjects.claimed()).await {
        let c = Arc::clone(&cluster);
        tokio::spawn(async move {
            while let Some(msg) = claimed.next().await {
                match super::wire::decode::<super::wire::Claimed>(&msg.payload) {
                    Ok(notice) => c.table_claimed(&notice),
                    Err(e) => warn!(error = %e, "a claim notice from another node was not read"),
                }
            }
        });
    }
    let mut last_renewed = Instant::now();
    if !hosting.shutdown().is_cancelled() {
        round(&hosting, &cluster, &mut last_renewed, true).await;
    }
    tokio::spawn(run(hosting, cluster, last_renewed))
}

async fn run(hosting: Arc<Hosting>, cluster: Arc<Cluster>, mut last_renewed: Instant) {
    let tick = Duration::from_millis(cluster.lease_ms / 4);
    loop {
        tokio::select! {
            () = hosting.shutdown().cancelled() => break,
            () = tokio::time::sleep(tick) => {}
            () = cluster.claim_now.notified() => {}
        }
        if hosting.shutdown().is_cancelled() {
            break;
        }
        round(&hosting, &cluster, &mut last_renewed, false).await;
    }
    drain(&cluster).await;
}

/// One round of the loop.
async fn round(hosting: &Arc<Hosting>, cluster: &Arc<Cluster>, last_renewed: &mut Instant, first: bool) {
    let lease = Duration::from_millis(cluster.lease_ms);
    // Tables whose task ended are no longer owned.
    cluster.owned.retain(|_, o| !o.handle.is_closed());
    match cluster.leases.heartbeat(&cluster.node, &cluster.incarnation, cluster.owned.len(), false).await {
        Ok(true) => {}
        Ok(false) => {
            error!(node = %cluster.node, "another process took this node's id: stopping every table here");
            stop_all(cluster);
            return;
        }
        Err(e) => warn!(error = %e, "heartbeat failed"),
    }
    let held: Vec<(Uuid, u64)> = cluster.owned.iter().map(|o| (*o.key(), o.epoch)).collect();
    match cluster.leases.renew(&cluster.node, &held, cluster.lease_ms).await {
        Ok(kept) => {
            *last_renewed = Instant::now();
            cluster.renewed();
            let kept: HashSet<Uuid> = kept.into_iter().collect();
            for (id, _) in held.iter().filter(|(id, _)| !kept.contains(id)) {
                warn!(table_id = %id, "lease lost to another node: the table stops here");
                if let Some((_, o)) = cluster.owned.remove(id) {
                    o.handle.stop();
                }
            }
        }
        Err(e) => {
            warn!(error = %e, "could not renew the leases");
            if last_renewed.elapsed() >= lease {
                // The leases have run out: another node may hold them now,
                // and writes here are refused anyway.
                warn!("the leases ran out unrenewed: stopping every table here");
                stop_all(cluster);
            }
        }
    }
    match cluster.leases.nodes(cluster.lease_ms).await {
        Ok(nodes) => {
            // Placement and claims compare counts of one instant.
            let counts = cluster
                .leases
                .table_counts(cluster.lease_ms)
                .await
                .inspect_err(|e| warn!(error = %e, "could not count the cluster's tables"))
                .ok();
            cluster.saw(nodes, counts);
        }
        Err(e) => warn!(error = %e, "could not read the nodes"),
    }
    // A process silent for two leases is gone: its relayed connections
    // here are let go.
    match cluster.leases.nodes(2 * cluster.lease_ms).await {
        Ok(nodes) => {
            let live: HashSet<String> = nodes.iter().map(|n| format!("{}.{}", n.id, n.incarnation)).collect();
            super::owner::forget_dead_origins(cluster, &live).await;
        }
        Err(e) => warn!(error = %e, "could not read the nodes"),
    }
    tell_relays(cluster).await;
    // Claims restore tables (reads and replays): in a task of their own, so
    // that the heartbeat and the renewals keep their pace meanwhile.
    if !cluster.claiming.swap(true, Ordering::AcqRel) {
        let (h, c) = (Arc::clone(hosting), Arc::clone(cluster));
        let claims = tokio::spawn(async move {
            claim(&h, &c, first).await;
            c.claiming.store(false, Ordering::Release);
        });
        if first {
            // At start-up the node's own earlier tables come back first.
            let _ = claims.await;
        }
    }
}

fn stop_all(cluster: &Cluster) {
    for o in cluster.owned.iter() {
        o.handle.stop();
    }
    cluster.owned.clear();
}

/// Every relay learns who owns its table now (one query for all).
async fn tell_relays(cluster: &Cluster) {
    let ids: Vec<Uuid> = cluster.relays.iter().map(|r| *r.key()).collect();
    crate::metrics::relayed_tables(ids.len());
    if ids.is_empty() {
        return;
    }
    match cluster.leases.owners(&ids).await {
        Ok(owners) => {
            for (id, owner) in owners {
                if let Some(r) = cluster.relays.get(&id) {
                    r.owner(owner);
                }
            }
        }
        Err(e) => warn!(error = %e, "could not read the owners of relayed tables"),
    }
}

/// Claims tables nobody holds, up to this node's share of the cluster's
/// tables (plus one), and starts them. At start-up, the tables an earlier
/// process of this node id held are taken back first.
async fn claim(hosting: &Hosting, cluster: &Arc<Cluster>, first: bool) {
    if cluster.draining.load(Ordering::Relaxed) {
        return;
    }
    let limit = if first {
        CLAIM_BATCH
    } else {
        // Counted in this round, before the claims began. (Not the tasks
        // this node runs: those of finished matches stay until they close
        // and own nothing to claim against.)
        let Some(budget) = cluster.claim_budget() else { return };
        budget.min(CLAIM_BATCH)
    };
    let claimed = match cluster.leases.claim(&cluster.node, limit, cluster.lease_ms, first).await {
        Ok(c) => c,
        Err(e) => {
            warn!(error = %e, "could not claim tables");
            return;
        }
    };
    // Several at once: a restore mostly waits for its reads, and the
    // tables of a dead node should all run again within a lease or two.
    futures_util::stream::iter(claimed)
        .for_each_concurrent(RESTORES_AT_ONCE, |c| async move {
            if let Err(e) = hosting.restore_claimed(c.table, c.epoch).await {
                // Left claimed and unrenewed: its lease runs out and another
                // node tries; each attempt is logged.
                error!(table_id = %c.table, error = %e, "a claimed table could not be restored");
            } else {
                info!(table_id = %c.table, epoch = c.epoch, "claimed a table");
                crate::metrics::table_claimed();
                // Every node's relay of the table (this one's too) attaches
                // its connections here now.
                let notice =
                    super::wire::Claimed { node: cluster.node.to_string(), table: c.table, epoch: c.epoch };
                if let Err(e) = cluster
                    .nats
                    .publish(cluster.subjects.claimed(), super::wire::encode(&notice).into())
                    .await
                {
                    warn!(error = %e, "could not announce a claimed table");
                }
            }
        })
        .await;
}

/// Hands every table here over: stop them (each finishes the command in
/// hand), give their leases up at once, and tell the other nodes.
async fn drain(cluster: &Arc<Cluster>) {
    cluster.draining.store(true, Ordering::Relaxed);
    let _ = cluster.leases.heartbeat(&cluster.node, &cluster.incarnation, cluster.owned.len(), true).await;
    let tables: Vec<(Uuid, crate::table::TableHandle)> =
        cluster.owned.iter().map(|o| (*o.key(), o.handle.clone())).collect();
    for (_, h) in &tables {
        h.stop();
    }
    let deadline = Instant::now() + DRAIN_WAIT;
    while tables.iter().any(|(_, h)| !h.is_closed()) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Every frame of the stopped tables (the last acks among them) is sent
    // to the relaying nodes before the tables move: what a relay hears
    // answered is not sent again to the new owner.
    while cluster.forwarders.load(Ordering::Relaxed) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let _ = cluster.nats.flush().await;
    // A round of claims that began before the drain ends first; what it
    // took is handed over with the rest.
    while cluster.claiming.load(Ordering::Acquire) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    match cluster.leases.release_all(&cluster.node).await {
        Ok(n) => info!(tables = n, "handed the tables over"),
        Err(e) => warn!(error = %e, "could not hand the tables over: their leases will run out"),
    }
    let _ = cluster.nats.publish(cluster.subjects.moved(), cluster.node.as_bytes().to_vec().into()).await;
    let _ = cluster.nats.flush().await;
    cluster.owned.clear();
    let _ = cluster.leases.deregister(&cluster.node, &cluster.incarnation).await;
}
