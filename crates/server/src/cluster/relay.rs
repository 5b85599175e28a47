//! The relay: how a connection on this node plays at a table owned by
//! another. One relay task per such table speaks the table's command
//! protocol to the connections here (so `ws.rs` cannot tell it from a
//! table) and forwards their commands to the owner over NATS. The owner's
//! frames for each connection arrive on this node's frames subject and go
//! straight into the connection's outbox ([`serve_frames`]).
//!
//! When the table moves (a drain, a dead or paused owner), the relay
//! attaches every connection to the new owner again with the seat token it
//! was given, asking for no `joined`/`resumed` frame: the client sees a
//! pause, then a view with a higher `seq`. If the new owner is this node, the
//! connections attach to the local table and the relay forwards their
//! commands to it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use spades_protocol::{ErrorCode, ServerMessage};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};
use uuid::Uuid;

use super::Cluster;
use super::wire::{self, FrameKind, Reply, Request};
use crate::hosting::Hosting;
use crate::storage::Owner;
use crate::table::{Act, Attach, Attached, ConnId, Frame, Order, Outbox, TableCommand, TableHandle};

/// How long a relay waits for a table without a live owner to get one.
const MOVE_WAIT: Duration = Duration::from_secs(20);

/// How long a relay waits for the answers of a table's old owner before it
/// sends the moves still unanswered to the new one.
const SETTLE_WAIT: Duration = Duration::from_millis(500);

/// What the rest of the node holds on a relay.
#[derive(Debug, Clone)]
pub(super) struct RelayRef {
    handle: TableHandle,
    events: mpsc::UnboundedSender<Event>,
}

impl RelayRef {
    /// Tells the relay who owns its table now.
    pub(super) fn owner(&self, owner: Owner) {
        let _ = self.events.send(Event::Owner(owner));
    }
}

/// Where a relayed connection's frames go.
#[derive(Debug)]
pub(super) struct Link {
    outbox: Outbox,
    /// Frames of older owners (lower epochs) are dropped.
    epoch: u64,
    events: mpsc::UnboundedSender<Event>,
    /// The connection's actions sent to a remote owner and not answered yet.
    pending: Pending,
}

/// Actions forwarded to a remote owner and not yet answered (`ack` or
/// `error` with their request id): when the table moves they are sent to
/// the new owner, so a move made while the table changes hands is neither
/// lost nor answered with an error.
type Pending = Arc<std::sync::Mutex<Vec<(u32, Act)>>>;

/// Something the relay must act on besides its connections' commands.
#[derive(Debug)]
pub(super) enum Event {
    /// The lease row, read by the lease loop.
    Owner(Owner),
    /// The owner's table let go of a connection.
    Released(ConnId),
    /// The owner's table ended (closed for good): every connection goes.
    Closed(ConnId),
    /// The owner's table (under this epoch) stopped to move.
    Moved {
        /// The connection whose frames ended.
        conn: ConnId,
        /// The old owner's epoch.
        epoch: u64,
    },
    /// A connection here did not keep up with its frames.
    TooSlow(ConnId),
    /// A connection attached to a new owner: the others may be behind.
    Behind,
}

/// Where the relay sends commands.
#[derive(Debug, Clone)]
enum Target {
    /// Another node, under this epoch.
    Remote { node: String, epoch: u64 },
    /// The table moved here.
    Local(TableHandle),
}

/// A connection the relay carries.
struct Carried {
    outbox: Outbox,
    again: Attach,
    pending: Pending,
    /// The owner the connection is attached to: when the relay's target
    /// changes (for this connection or another one), every connection not
    /// attached to the new target is moved there too.
    at: Option<Mark>,
}

/// Which owner a target is: a node and its epoch (`None`: this node).
type Mark = (Option<String>, u64);

/// The relay for `table`, started if needed; `None` when no node has the
/// table (unknown, finished or closed).
pub(super) async fn relay_for(
    hosting: &Arc<Hosting>,
    cluster: &Arc<Cluster>,
    table: Uuid,
) -> Option<TableHandle> {
    if let Some(r) = cluster.relays.get(&table)
        && !r.handle.is_closed()
    {
        return Some(r.handle.clone());
    }
    let owners = cluster.leases.owners(&[table]).await.ok()?;
    let (_, owner) = owners.into_iter().next()?;
    if owner.done {
        return None;
    }
    // Two connections may race here: the first relay wins, and the task
    // starts only for the relay that went in.
    let relay_ref = match cluster.relays.entry(table) {
        dashmap::Entry::Occupied(e) if !e.get().handle.is_closed() => return Some(e.get().handle.clone()),
        entry => {
            let (tx, rx) = mpsc::channel(256);
            let (events_tx, events) = mpsc::unbounded_channel();
            let stop = CancellationToken::new();
            let (_status_tx, status) = watch::channel(crate::table::empty_status(table));
            let handle = TableHandle::new(table, tx, status, stop.clone());
            let relay_ref = RelayRef { handle, events: events_tx.clone() };
            entry.insert(relay_ref.clone());
            let relay = Relay {
                table,
                hosting: Arc::clone(hosting),
                cluster: Arc::clone(cluster),
                rx,
                events,
                events_tx,
                target: None,
                conns: HashMap::new(),
                held: Vec::new(),
                noticed: HashSet::new(),
                stop,
                table_closed: false,
                idle_since: Some(Instant::now()),
            };
            hosting.tracker().spawn(relay.run());
            relay_ref
        }
    };
    Some(relay_ref.handle)
}

struct Relay {
    table: Uuid,
    hosting: Arc<Hosting>,
    cluster: Arc<Cluster>,
    rx: mpsc::Receiver<TableCommand>,
    events: mpsc::UnboundedReceiver<Event>,
    events_tx: mpsc::UnboundedSender<Event>,
    target: Option<Target>,
    conns: HashMap<ConnId, Carried>,
    /// Commands of carried connections that came while the table had no
    /// owner to take them (it stopped here, or was between owners): sent to
    /// the next owner once the connections are attached there.
    held: Vec<(ConnId, Option<u32>, Act, bool)>,
    /// Connections whose old owner said it stopped, before the move that
    /// notice started: their answers are not waited for.
    noticed: HashSet<ConnId>,
    stop: CancellationToken,
    /// The owner's table closed for good: the relay's handle then reads
    /// closed, never stopped (stopped says "moved: attach again").
    table_closed: bool,
    idle_since: Option<Instant>,
}

impl Relay {
    async fn run(mut self) {
        debug!(table_id = %self.table, "relay started");
        let shutdown = self.hosting.shutdown().clone();
        loop {
            let idle_end = self.idle_since.map(|t| t + Duration::from_secs(5));
            tokio::select! {
                () = shutdown.cancelled() => break,
                cmd = self.rx.recv() => match cmd {
                    Some(cmd) => self.command(cmd).await,
                    None => break,
                },
                Some(event) = self.events.recv() => self.event(event).await,
                () = sleep_until_opt(idle_end) => break,
            }
            self.idle_since =
                if self.conns.is_empty() { self.idle_since.or(Some(Instant::now())) } else { None };
        }
        if !self.table_closed {
            self.stop.cancel();
        }
        self.cluster.relays.remove_if(&self.table, |_, r| r.events.same_channel(&self.events_tx));
        for (conn, _) in self.conns.drain() {
            self.cluster.links.remove(&conn);
        }
        debug!(table_id = %self.table, "relay ended");
    }

    /// The table is over and closed: every connection goes, its link
    /// with it (the frames reader holds its outbox too), once the handle
    /// reads closed, so that each is told the table closed (4003).
    fn closed(&mut self) {
        self.table_closed = true;
        self.rx.close();
        for (conn, _) in self.conns.drain() {
            self.cluster.links.remove(&conn);
        }
    }

    async fn command(&mut self, cmd: TableCommand) {
        match cmd {
            TableCommand::Attach { conn, outbox, how, req, quiet, reply } => {
                let pending = Pending::default();
                let attached = self.attach(conn, &outbox, how, req, quiet, &pending).await;
                if let Some(a) = &attached {
                    let at = self.mark();
                    self.conns.insert(conn, Carried { outbox, again: a.again.clone(), pending, at });
                }
                let ok = attached.is_some();
                let _ = reply.send(attached);
                // Attaching this one may have found the table with a new
                // owner: the others follow it there.
                if ok && self.behind() {
                    let _ = self.events_tx.send(Event::Behind);
                }
            }
            // A connection not attached where the relay sends now (it is
            // being moved there) would not be heard: its command waits.
            TableCommand::Act { conn, req, act, resent } if self.unattached(conn) => {
                self.hold(conn, req, act, resent);
            }
            TableCommand::Act { conn, req, act, resent } => match &self.target {
                Some(Target::Local(h)) if h.runs() => {
                    let held = act.clone();
                    if h.send(TableCommand::Act { conn, req, act, resent }).await.is_err() {
                        self.hold(conn, req, held, resent);
                    }
                }
                Some(Target::Remote { node, .. }) => {
                    if let (Some(r), Some(c)) = (req, self.conns.get(&conn))
                        && let Ok(mut p) = c.pending.lock()
                    {
                        p.push((r, act.clone()));
                    }
                    let msg = Request::Act {
                        table: self.table,
                        origin: self.cluster.origin.clone(),
                        conn,
                        req,
                        act,
                        resent,
                    };
                    self.publish(node, &msg).await;
                }
                // The table stopped here, or has no owner yet: the command
                // waits for the next owner, which answers it.
                Some(Target::Local(_)) | None => self.hold(conn, req, act, resent),
            },
            TableCommand::Detach { conn } => {
                self.conns.remove(&conn);
                self.cluster.links.remove(&conn);
                self.detach_at_target(conn).await;
            }
            // A rematch is planned and created on the node that owns the
            // table; through a relay only when the table moved here.
            TableCommand::PlanRematch { conn, req, owner_token, reply } => match &self.target {
                Some(Target::Local(h)) => {
                    let _ = h.send(TableCommand::PlanRematch { conn, req, owner_token, reply }).await;
                }
                _ => {
                    if let Some(c) = self.conns.get(&conn) {
                        let _ = c.outbox.try_send(rematch_elsewhere(req));
                    }
                    let _ = reply.send(None);
                }
            },
            TableCommand::RematchStarted { conn, req, next } => {
                if let Some(Target::Local(h)) = &self.target {
                    let _ = h.send(TableCommand::RematchStarted { conn, req, next }).await;
                }
            }
            // Sent to the table's owner (`Directory::order`), never
            // through a relay.
            TableCommand::Order(_) => {}
        }
    }

    /// True when `conn` is carried here but not attached to the owner the
    /// relay sends to now.
    /// Asked for every command: compares with the target in place rather
    /// than making its [`Mark`].
    fn unattached(&self, conn: ConnId) -> bool {
        let Some(c) = self.conns.get(&conn) else { return false };
        match (&self.target, &c.at) {
            (Some(Target::Remote { node, epoch }), Some((Some(n), e))) => n != node || e != epoch,
            (Some(Target::Remote { .. }), _) => true,
            (Some(Target::Local(h)), at) if h.runs() => {
                self.cluster.epoch_of(self.table).is_some_and(|e| *at != Some((None, e)))
            }
            _ => false,
        }
    }

    /// Takes a notice that `conn` is not attached to the owner of epoch
    /// `from`: true (and the connection marked unattached) unless it is
    /// attached to a later owner already.
    fn lost_at(&mut self, conn: ConnId, from: u64) -> bool {
        match self.conns.get_mut(&conn) {
            Some(c) if c.at.as_ref().is_none_or(|(_, epoch)| *epoch <= from) => {
                c.at = None;
                true
            }
            _ => false,
        }
    }

    /// Keeps a carried connection's command for the table's next owner and
    /// has the relay look for it.
    /// (`resent`: it may have reached an earlier owner already.)
    fn hold(&mut self, conn: ConnId, req: Option<u32>, act: Act, resent: bool) {
        if self.conns.contains_key(&conn) {
            self.held.push((conn, req, act, resent));
            let _ = self.events_tx.send(Event::Behind);
        }
    }

    /// Sends the held commands of the connections still carried to where
    /// the table runs now (each once: held again if it moved meanwhile).
    async fn send_held(&mut self) {
        for (conn, req, act, resent) in std::mem::take(&mut self.held) {
            if self.conns.contains_key(&conn) {
                self.command(TableCommand::Act { conn, req, act, resent }).await;
            }
        }
    }

    async fn detach_at_target(&self, conn: ConnId) {
        match &self.target {
            // A full queue must not hold the relay (and its other
            // connections) waiting.
            Some(Target::Local(h)) if !h.try_send(TableCommand::Detach { conn }) => {
                let h = h.clone();
                tokio::spawn(async move {
                    let _ = h.send(TableCommand::Detach { conn }).await;
                });
            }
            Some(Target::Local(_)) => {}
            Some(Target::Remote { node, .. }) => {
                let msg = Request::Detach { table: self.table, origin: self.cluster.origin.clone(), conn };
                self.publish(node, &msg).await;
            }
            None => {}
        }
    }

    async fn publish(&self, node: &str, msg: &Request) {
        let payload = wire::encode(msg);
        if let Err(e) = self.cluster.nats.publish(self.cluster.subjects.requests(node), payload.into()).await
        {
            warn!(error = %e, node, "could not send to a table's owner");
        }
    }

    async fn event(&mut self, event: Event) {
        match event {
            Event::Owner(owner) => {
                if owner.done {
                    // The table is over and closed: let its connections go.
                    self.closed();
                    return;
                }
                if self.target_is(&owner) && !self.behind() {
                    return;
                }
                self.move_all().await;
            }
            Event::Closed(conn) => {
                if self.conns.contains_key(&conn) {
                    // Over and closed: its connections go, told the table
                    // closed (this relay's handle reads closed).
                    debug!(table_id = %self.table, "the owner's table closed");
                    self.closed();
                }
            }
            Event::Released(conn) => {
                if !self.conns.contains_key(&conn) {
                    return;
                }
                let owner =
                    self.cluster.leases.owners(&[self.table]).await.ok().and_then(|o| o.into_iter().next());
                match owner {
                    Some((_, owner)) if self.target_is(&owner) => {
                        // The owner let go of it for good (slow, left, closed).
                        debug!(table_id = %self.table, conn, "the owner let go of a relayed connection");
                        self.conns.remove(&conn);
                        self.cluster.links.remove(&conn);
                    }
                    _ => self.move_all().await,
                }
            }
            Event::Moved { conn, epoch: from } => {
                // The table stopped there (every connection's forwarder says
                // so: move once), or the owner does not have this
                // connection (it let go of a process it thought gone, or
                // never got the attach): the connection attaches again,
                // even to the same owner. A notice from an owner older than
                // the connection's is stale.
                let current = match &self.target {
                    Some(Target::Remote { epoch, .. }) => Some(*epoch),
                    Some(Target::Local(h)) if h.runs() => self.cluster.epoch_of(self.table),
                    _ => None,
                };
                let lost = self.lost_at(conn, from);
                let moved = current.is_none_or(|e| e <= from);
                if !self.conns.is_empty() && (moved || lost) {
                    if moved {
                        self.target = None;
                    }
                    self.noticed.insert(conn);
                    self.move_all().await;
                }
            }
            Event::Behind => {
                if self.behind() {
                    self.move_all().await;
                } else {
                    self.send_held().await;
                }
            }
            Event::TooSlow(conn) => {
                debug!(table_id = %self.table, conn, "a relayed connection was too slow");
                self.conns.remove(&conn);
                self.cluster.links.remove(&conn);
                self.detach_at_target(conn).await;
            }
        }
    }

    /// The owner the relay sends to now.
    fn mark(&self) -> Option<Mark> {
        match &self.target {
            Some(Target::Remote { node, epoch }) => Some((Some(node.clone()), *epoch)),
            Some(Target::Local(h)) if h.runs() => Some((None, self.cluster.epoch_of(self.table)?)),
            _ => None,
        }
    }

    /// True when a carried connection is not attached to the relay's target.
    fn behind(&self) -> bool {
        let now = self.mark();
        !self.conns.is_empty() && (now.is_none() || self.conns.values().any(|c| c.at != now))
    }

    /// True when the relay's target is `owner`'s live lease.
    fn target_is(&self, owner: &Owner) -> bool {
        match &self.target {
            Some(Target::Remote { node, epoch }) => {
                owner.live && owner.node.as_deref() == Some(node.as_str()) && owner.epoch == *epoch
            }
            Some(Target::Local(h)) => h.runs(),
            None => false,
        }
    }

    /// Attaches every carried connection to the table's current owner.
    async fn move_all(&mut self) {
        self.settle_answers().await;
        let Some(target) = self.resolve(MOVE_WAIT).await else {
            warn!(table_id = %self.table, "the table has no owner: its relayed connections are let go");
            self.target = None;
            self.held.clear();
            for (conn, _) in self.conns.drain() {
                self.cluster.links.remove(&conn);
            }
            return;
        };
        self.target = Some(target);
        let now = self.mark();
        // Every connection not attached to the owner found: all of them when
        // the table moved, the ones left behind when another one found it.
        let conns: Vec<(ConnId, Outbox, Attach, Pending)> = self
            .conns
            .iter()
            .filter(|(_, c)| c.at.is_none() || c.at != now)
            .map(|(id, c)| (*id, c.outbox.clone(), c.again.clone(), Arc::clone(&c.pending)))
            .collect();
        info!(table_id = %self.table, connections = conns.len(), "the table moved: attaching again");
        for (conn, outbox, again, pending) in conns {
            if self.attach(conn, &outbox, again, None, true, &pending).await.is_some() {
                let at = self.mark();
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.at = at;
                }
                // What the old owner never answered goes to the new one.
                let unanswered = pending.lock().map(|p| p.clone()).unwrap_or_default();
                for (req, act) in unanswered {
                    let cmd = TableCommand::Act { conn, req: Some(req), act, resent: true };
                    self.command(cmd).await;
                    if let Ok(mut p) = pending.lock() {
                        // `command` recorded it again if it went remote.
                        if let Some(i) = p.iter().position(|(r, _)| *r == req) {
                            p.remove(i);
                        }
                    }
                }
            } else {
                warn!(table_id = %self.table, conn, "a relayed connection could not attach to the table's new owner");
                self.conns.remove(&conn);
                self.cluster.links.remove(&conn);
            }
        }
        // What came while the table had no owner goes to it now.
        self.send_held().await;
        // The owner changed again while the connections attached: the ones
        // left behind follow.
        if self.behind() {
            let _ = self.events_tx.send(Event::Behind);
        }
    }

    /// Before moves that were never answered go to the table's next owner,
    /// the old owner's last frames get a moment to arrive. An owner that
    /// hands its tables over (a drain) sends every answer before its notice
    /// that the table moved, but the lease row that says so can be read
    /// here first; a move it answered must not be sent again (the next owner
    /// would refuse it as made already). A dead owner sends nothing: the
    /// wait ends after [`SETTLE_WAIT`].
    async fn settle_answers(&mut self) {
        let waiting = |r: &Relay, noticed: &HashSet<ConnId>| {
            r.conns
                .iter()
                .any(|(id, c)| !noticed.contains(id) && c.pending.lock().is_ok_and(|p| !p.is_empty()))
        };
        // The notice that started the move counts too.
        let mut noticed = std::mem::take(&mut self.noticed);
        if !waiting(self, &noticed) {
            return;
        }
        let deadline = Instant::now() + SETTLE_WAIT;
        let mut later = Vec::new();
        while waiting(self, &noticed) {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Ok(Some(Event::Moved { conn, epoch })) => {
                    self.lost_at(conn, epoch);
                    noticed.insert(conn);
                }
                Ok(Some(event)) => {
                    if let Event::Released(conn) | Event::Closed(conn) = event {
                        noticed.insert(conn);
                    }
                    later.push(event);
                }
                Ok(None) | Err(_) => break,
            }
        }
        for event in later {
            let _ = self.events_tx.send(event);
        }
    }

    /// The table's owner now, waiting up to `wait` for one while the table
    /// moves; `None` when nobody has it by then (or it is over).
    async fn resolve(&self, wait: Duration) -> Option<Target> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(h) = self.hosting.get(&self.table)
                && h.runs()
            {
                return Some(Target::Local(h));
            }
            if let Ok(owners) = self.cluster.leases.owners(&[self.table]).await {
                let (_, owner) = owners.into_iter().next()?;
                if owner.done {
                    return None;
                }
                if let Some(node) = owner.node.filter(|_| owner.live)
                    && node != *self.cluster.node
                {
                    return Some(Target::Remote { node, epoch: owner.epoch });
                }
            }
            if Instant::now() >= deadline || self.hosting.shutdown().is_cancelled() {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Attaches one connection wherever the table is, trying again while
    /// it moves.
    async fn attach(
        &mut self,
        conn: ConnId,
        outbox: &Outbox,
        how: Attach,
        req: Option<u32>,
        quiet: bool,
        pending: &Pending,
    ) -> Option<Attached> {
        let deadline = Instant::now() + MOVE_WAIT;
        while Instant::now() < deadline && !self.hosting.shutdown().is_cancelled() {
            let target = match self.target.clone().filter(|t| !matches!(t, Target::Local(h) if !h.runs())) {
                Some(t) => t,
                None => {
                    let t = self.resolve(deadline.saturating_duration_since(Instant::now())).await?;
                    self.target = Some(t.clone());
                    t
                }
            };
            match target {
                Target::Local(h) => {
                    // Frames of a remote owner the connection had are no
                    // longer its own: the table here writes to it now.
                    self.cluster.links.remove(&conn);
                    let (tx, rx) = oneshot::channel();
                    let cmd = TableCommand::Attach {
                        conn,
                        outbox: outbox.clone(),
                        how: how.clone(),
                        req,
                        quiet,
                        reply: tx,
                    };
                    if h.send(cmd).await.is_ok()
                        && let Ok(attached) = rx.await
                    {
                        return attached;
                    }
                }
                Target::Remote { node, epoch } => {
                    self.cluster.links.insert(
                        conn,
                        Link {
                            outbox: outbox.clone(),
                            epoch,
                            events: self.events_tx.clone(),
                            pending: Arc::clone(pending),
                        },
                    );
                    let msg = Request::Attach {
                        table: self.table,
                        origin: self.cluster.origin.clone(),
                        conn,
                        how: how.clone(),
                        req,
                        quiet,
                    };
                    match self.cluster.request_within(&node, &msg, self.cluster.attach_wait()).await {
                        Ok(Reply::Attached { role, again, epoch, account }) => {
                            if let Some(mut l) = self.cluster.links.get_mut(&conn) {
                                l.epoch = l.epoch.max(epoch);
                            }
                            self.target = Some(Target::Remote { node, epoch });
                            return Some(Attached { role, again, account });
                        }
                        Ok(Reply::Refused { frames }) => {
                            self.cluster.links.remove(&conn);
                            for f in frames {
                                let _ = outbox.try_send(Frame::new(f, Order::Other));
                            }
                            return None;
                        }
                        Ok(_) | Err(_) => {
                            self.cluster.links.remove(&conn);
                        }
                    }
                }
            }
            // Not there (any more): look again.
            self.target = None;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let _ = outbox.try_send(moving_error(req));
        None
    }
}

/// Clears the pending action an `ack` or `error` frame answered.
fn answered(pending: &Pending, req: u32) {
    if let Ok(mut p) = pending.lock() {
        p.retain(|(r, _)| *r != req);
    }
}

/// The refusal of a rematch asked through a node that does not own the
/// table.
fn rematch_elsewhere(req: Option<u32>) -> Frame {
    let msg = ServerMessage::Error {
        req,
        code: ErrorCode::Capacity,
        message:
            "this server cannot start the rematch of a table another server runs: reconnect and try again"
                .into(),
    };
    Frame::of(&msg).unwrap_or_else(|_| Frame::new("", Order::Other))
}

/// The refusal while a table is between owners.
fn moving_error(req: Option<u32>) -> Frame {
    let msg = ServerMessage::Error {
        req,
        code: ErrorCode::StorageUnavailable,
        message: "the table is moving to another server: try again in a moment".into(),
    };
    Frame::of(&msg).unwrap_or_else(|_| Frame::new("", Order::Other))
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Delivers the frames other nodes send for this node's relayed
/// connections, straight into their outboxes.
///
/// # Errors
/// When NATS refuses the subscription.
pub(super) async fn serve_frames(cluster: &Arc<Cluster>) -> anyhow::Result<()> {
    let mut frames = cluster.nats.subscribe(cluster.subjects.frames(&cluster.origin)).await?;
    let cluster = Arc::clone(cluster);
    tokio::spawn(async move {
        while let Some(msg) = frames.next().await {
            let (wire::FrameHeader { kind, conn, epoch, order }, at) =
                match wire::read_frame_message(&msg.payload) {
                    Ok(h) => h,
                    Err(e) => {
                        warn!(error = %e, "a frame message from another node was not read");
                        continue;
                    }
                };
            let Some(link) = cluster.links.get(&conn) else { continue };
            if epoch < link.epoch {
                continue;
            }
            match kind {
                FrameKind::Released => {
                    let _ = link.events.send(Event::Released(conn));
                }
                FrameKind::Moved => {
                    let _ = link.events.send(Event::Moved { conn, epoch });
                }
                FrameKind::Closed => {
                    let _ = link.events.send(Event::Closed(conn));
                }
                FrameKind::Frame => {
                    let Ok(text) = axum::extract::ws::Utf8Bytes::try_from(msg.payload.slice(at..)) else {
                        continue;
                    };
                    let frame = Frame::new(text, order);
                    if let Order::Answer(req) = order {
                        answered(&link.pending, req);
                    }
                    if let Err(mpsc::error::TrySendError::Full(_)) = link.outbox.try_send(frame) {
                        let _ = link.events.send(Event::TooSlow(conn));
                    }
                }
            }
        }
    });
    Ok(())
}
