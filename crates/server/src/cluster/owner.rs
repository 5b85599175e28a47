//! The owner's side: requests from other nodes for the tables this node
//! owns. A connection relayed by another node attaches like a local one,
//! with an outbox of its own whose frames a forwarder publishes to the
//! relaying node; the table cannot tell the difference, so redaction and
//! every rule stay the table's.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::StreamExt;
use tokio::sync::{mpsc, oneshot};
use tracing::{debug, warn};
use uuid::Uuid;

use super::Cluster;
use super::wire::{self, FrameKind, Reply, Request};
use crate::hosting::Hosting;
use crate::table::{Attach, ConnId, TableCommand, TableHandle};

/// A connection of another node attached to a table here.
#[derive(Debug, Clone)]
pub(super) struct RemoteConn {
    table: TableHandle,
    /// Its id at the table (ids of this node).
    local: ConnId,
    /// Set when the connection attached again: its old forwarder then ends
    /// without a word.
    replaced: Arc<AtomicBool>,
}

/// Answers other nodes: requests on this node's subject, and the lobby.
///
/// # Errors
/// When NATS refuses a subscription.
pub(super) async fn serve(hosting: &Arc<Hosting>, cluster: &Arc<Cluster>) -> anyhow::Result<()> {
    let mut requests = cluster.nats.subscribe(cluster.subjects.requests(&cluster.node)).await?;
    let mut lobby = cluster.nats.subscribe(cluster.subjects.lobby()).await?;
    let (s, c) = (Arc::clone(hosting), Arc::clone(cluster));
    tokio::spawn(async move {
        while let Some(msg) = requests.next().await {
            let request: Request = match wire::decode(&msg.payload) {
                Ok(r) => r,
                Err(e) => {
                    warn!(error = %e, "a request from another node was not read");
                    continue;
                }
            };
            // A connection's actions and detach go to its table in the order
            // they came (a full queue: in a task, so nothing else waits);
            // requests that need an answer each get a task of their own.
            if let Request::Act { .. } | Request::Detach { .. } = request {
                forward(&c, request);
                continue;
            }
            let (s, c) = (Arc::clone(&s), Arc::clone(&c));
            tokio::spawn(async move {
                if let Some(reply) = handle(&s, &c, request).await
                    && let Some(to) = msg.reply
                    && let Err(e) = c.nats.publish(to, wire::encode(&reply).into()).await
                {
                    debug!(error = %e, "could not answer another node");
                }
            });
        }
    });
    let (s, c) = (Arc::clone(hosting), Arc::clone(cluster));
    tokio::spawn(async move {
        while let Some(msg) = lobby.next().await {
            let Some(to) = msg.reply else { continue };
            if *msg.payload == *c.node.as_bytes() {
                continue;
            }
            let reply = Reply::Lobby { tables: s.summaries() };
            let _ = c.nats.publish(to, wire::encode(&reply).into()).await;
        }
    });
    Ok(())
}

/// Hands a relayed connection's action or detach to its table.
fn forward(cluster: &Arc<Cluster>, request: Request) {
    let (table, cmd) = match request {
        Request::Act { table, origin, conn, req, act, resent } => {
            let found = cluster.remote.get(&(origin.clone(), conn)).map(|r| r.clone());
            match found {
                Some(r) if r.table.id() == table => {
                    (r.table, TableCommand::Act { conn: r.local, req, act, resent })
                }
                // Not attached here (the table stopped to move, or this
                // node restarted): the relay must attach it again.
                _ => {
                    let c = Arc::clone(cluster);
                    let epoch = cluster.epoch_of(table).unwrap_or(0);
                    tokio::spawn(async move { moved(&c, &origin, conn, epoch).await });
                    return;
                }
            }
        }
        Request::Detach { table, origin, conn } => match cluster.remote.remove(&(origin, conn)) {
            Some((_, r)) if r.table.id() == table => {
                r.replaced.store(true, Ordering::Relaxed);
                (r.table, TableCommand::Detach { conn: r.local })
            }
            _ => return,
        },
        _ => return,
    };
    if let Err(cmd) = table.try_send_or_return(cmd) {
        tokio::spawn(async move {
            let _ = table.send(cmd).await;
        });
    }
}

async fn handle(hosting: &Hosting, cluster: &Arc<Cluster>, request: Request) -> Option<Reply> {
    match request {
        Request::Attach { table, origin, conn, how, req, quiet } => {
            Some(attach(hosting, cluster, table, origin, conn, how, req, quiet).await)
        }
        Request::Act { .. } | Request::Detach { .. } => {
            forward(cluster, request);
            None
        }
        Request::Status { table } => Some(match hosting.get(&table) {
            Some(h) if !h.stopped() && cluster.still_holds(table).await.unwrap_or(false) => {
                match h.status().await {
                    Ok(mut status) => {
                        status.owner = cluster.owner_of(table);
                        Reply::Status { status: Box::new(status) }
                    }
                    Err(_) => Reply::NotHere,
                }
            }
            _ => Reply::NotHere,
        }),
        Request::Order { table, order } => Some(match hosting.get(&table) {
            Some(h) if h.runs() && cluster.still_holds(table).await.unwrap_or(false) => {
                match h.send(TableCommand::Order(order)).await {
                    Ok(()) => Reply::Done,
                    Err(_) => Reply::NotHere,
                }
            }
            _ => Reply::NotHere,
        }),
        Request::Create { name, options, owner_account } => {
            Some(match hosting.create(name, options, owner_account).await {
                Ok((table, owner_token)) => Reply::Created { table, owner_token },
                Err(e) => Reply::Error { code: e.code, message: e.message.clone() },
            })
        }
    }
}

/// Tells `origin` that its connection `conn` is not attached here: it must
/// attach again wherever the table runs now.
async fn moved(cluster: &Cluster, origin: &str, conn: ConnId, epoch: u64) {
    let msg = wire::frame_message(FrameKind::Moved, conn, epoch, None);
    let _ = cluster.nats.publish(cluster.subjects.frames(origin), msg.into()).await;
}

#[allow(clippy::too_many_arguments)]
async fn attach(
    hosting: &Hosting,
    cluster: &Arc<Cluster>,
    table: Uuid,
    origin: String,
    conn: ConnId,
    how: Attach,
    req: Option<u32>,
    quiet: bool,
) -> Reply {
    let (Some(handle), Some(epoch)) = (hosting.get(&table), cluster.epoch_of(table)) else {
        return Reply::NotHere;
    };
    if handle.stopped() || handle.is_closed() || !cluster.still_holds(table).await.unwrap_or(false) {
        return Reply::NotHere;
    }
    // The same connection attached again (its relay thought the table had
    // moved): the old attachment goes first.
    if let Some((_, old)) = cluster.remote.remove(&(origin.clone(), conn)) {
        old.replaced.store(true, Ordering::Relaxed);
        let _ = old.table.send(TableCommand::Detach { conn: old.local }).await;
    }
    let local = hosting.next_conn_id();
    let (outbox, mut frames) = mpsc::channel(hosting.outbox_frames());
    let (tx, rx) = oneshot::channel();
    let cmd = TableCommand::Attach { conn: local, outbox, how, req, quiet, reply: tx };
    if handle.send(cmd).await.is_err() {
        return Reply::NotHere;
    }
    let Ok(answer) = rx.await else { return Reply::NotHere };
    let Some(attached) = answer else {
        let mut refused = Vec::new();
        while let Ok(f) = frames.try_recv() {
            refused.push(f.text.to_string());
        }
        return Reply::Refused { frames: refused };
    };
    let replaced = Arc::new(AtomicBool::new(false));
    let entry = RemoteConn { table: handle.clone(), local, replaced: Arc::clone(&replaced) };
    if let Some(old) = cluster.remote.insert((origin.clone(), conn), entry) {
        // Two attachments of one connection crossed: the older goes.
        old.replaced.store(true, Ordering::Relaxed);
        let _ = old.table.send(TableCommand::Detach { conn: old.local }).await;
    }
    // The forwarder: the table's frames for the connection, in order, to
    // the relaying node; when the table lets go, that node is told.
    let c = Arc::clone(cluster);
    let subject = cluster.subjects.frames(&origin);
    cluster.forwarders.fetch_add(1, Ordering::Relaxed);
    tokio::spawn(async move {
        while let Some(frame) = frames.recv().await {
            let msg = wire::frame_message(FrameKind::Frame, conn, epoch, Some(&frame));
            if let Err(e) = c.nats.publish(subject.clone(), msg.into()).await {
                debug!(error = %e, "could not forward a frame");
            }
        }
        c.remote.remove_if(&(origin.clone(), conn), |_, r| r.local == local);
        // Unless the connection attached again (that attachment speaks for
        // it now), its relay hears why the frames stopped: a table stopped
        // here (a lost lease, a drain) runs on elsewhere; a table whose task
        // ended is closed for good.
        if !replaced.load(Ordering::Relaxed) {
            let kind = if handle.stopped() {
                FrameKind::Moved
            } else if handle.is_closed() {
                FrameKind::Closed
            } else {
                FrameKind::Released
            };
            let msg = wire::frame_message(kind, conn, epoch, None);
            let _ = c.nats.publish(c.subjects.frames(&origin), msg.into()).await;
        }
        c.forwarders.fetch_sub(1, Ordering::Relaxed);
    });
    Reply::Attached { role: attached.role, again: attached.again, epoch, account: attached.account }
}

/// Detaches the connections of processes that are no longer live (a node
/// that died, or stopped without saying goodbye for each connection): their
/// seats must not look present. Each is also told, in case its process is
/// alive after all (a heartbeat late under load): its relay then attaches
/// it again.
pub(super) async fn forget_dead_origins(cluster: &Cluster, live: &std::collections::HashSet<String>) {
    let dead: Vec<(String, ConnId)> =
        cluster.remote.iter().map(|r| r.key().clone()).filter(|(origin, _)| !live.contains(origin)).collect();
    for key in dead {
        if let Some((_, r)) = cluster.remote.remove(&key) {
            r.replaced.store(true, Ordering::Relaxed);
            debug!(origin = %key.0, "detaching a connection of a process that is gone");
            let _ = r.table.send(TableCommand::Detach { conn: r.local }).await;
            moved(cluster, &key.0, key.1, cluster.epoch_of(r.table.id()).unwrap_or(0)).await;
        }
    }
}
