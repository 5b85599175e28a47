//! A moved table reaches every connection it has without being asked: the
//! owner of most tables is killed (or paused) again and again while its
//! tables are played, with connections of every table (seats and watchers)
//! on every node. Each connection that outlives the kill, and each one that
//! comes back at once through another node, must get a frame of the new
//! owner's epoch within a lease and two seconds without sending `sync`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use spades_engine::{MatchEnd, Rules};
use spades_protocol::{ClientMessage, ServerMessage, TableOptions};
use tokio::sync::watch;
use uuid::Uuid;

use super::{Node, owner_of, three_nodes};
use crate::helpers::{Client, action_message, simple_move};

/// The lease of the test nodes, ms (`Node::spawn`).
const LEASE_MS: u64 = 2000;

/// How long a connection of a moved table may wait for the new owner's
/// first frame: a lease and two seconds from the kill.
const HEARD: Duration = Duration::from_millis(LEASE_MS + 2000);

/// The longest a round waits: for a paused node's tables to be taken over,
/// for its connections to follow them or be closed once it wakes, and for
/// a connection's task to be stopped.
const WATCHED: Duration = Duration::from_secs(12);

/// How long a player thinks before a move: the tables keep moving through
/// the test without running out of hands.
const THINK: Duration = Duration::from_millis(300);

/// Rounds of the test (`SPADES_TEST_MOVED_ROUNDS` for more): every fourth
/// pauses the owner instead of killing it, every fourth (the second of each
/// four) restarts the killed node at once.
fn rounds() -> usize {
    std::env::var("SPADES_TEST_MOVED_ROUNDS").ok().and_then(|r| r.parse().ok()).unwrap_or(20)
}

fn trace() -> bool {
    std::env::var_os("SPADES_TEST_MOVED_TRACE").is_some()
}

/// One connection the test keeps to a table.
struct Conn {
    table: usize,
    /// The node it goes back to at the start of each round.
    home: usize,
    node: usize,
    /// The seat's token, or `None` for a watcher.
    token: Option<String>,
    client: Option<Client>,
}

impl Conn {
    fn what(&self) -> String {
        let role = if self.token.is_some() { "seat" } else { "watcher" };
        format!("table {} {role} via n{}", self.table, self.node + 1)
    }
}

/// What one connection saw of a round.
struct Heard {
    /// From the kill to its first frame of an epoch above the one it had
    /// then (`None`: none before the round ended).
    after: Option<Duration>,
    /// The answer to the `sync` it sent during the move, if it sent one.
    answer: Option<ServerMessage>,
}

/// A match of four people created through `addr` and started, long enough
/// to be played through the test; its tokens.
async fn long_match(addr: SocketAddr) -> (Uuid, Vec<String>) {
    let rules = Rules { match_end: MatchEnd::Hands(11), ..Rules::default() };
    super::failover::started_match(addr, TableOptions { rules, ..TableOptions::default() }).await
}

/// Connects through `addr` and asks to attach, reading nothing.
async fn attach_now(addr: SocketAddr, table: Uuid, token: Option<&str>) -> Client {
    let mut c = Client::connect(addr).await;
    let protocol = Some(spades_protocol::PROTOCOL_VERSION);
    c.send(match token {
        Some(t) => ClientMessage::Resume { protocol, table, token: Some(t.to_owned()) },
        None => ClientMessage::Watch { protocol, table },
    })
    .await;
    c
}

/// Attaches through `addr` and reads until the first view.
async fn attach(addr: SocketAddr, table: Uuid, token: Option<&str>) -> Client {
    let mut c = attach_now(addr, table, token).await;
    let v = tokio::time::timeout(Duration::from_secs(10), c.view_until(|_| true)).await;
    assert!(v.is_ok(), "no view after attaching to {table} through {addr}: {:?}", c.raw.last());
    c
}

/// A connection's life through one round, as a client's: it reads every
/// frame, plays its seat's turn (after [`THINK`]) and, once the kill comes
/// (`kill` holds its time), notes when the first frame of a newer epoch
/// arrives. A watcher told to (`sync`) sends `sync` right after the kill and
/// waits for its answer too. Ends at `stop`, or after [`WATCHED`].
async fn live(
    mut client: Client,
    mut kill: watch::Receiver<Option<Instant>>,
    stop: Arc<tokio::sync::Notify>,
    sync: bool,
    seen_kill: Option<(Instant, u64)>,
) -> (Client, Heard) {
    let mut at_kill = seen_kill;
    let mut heard = Heard { after: None, answer: None };
    let mut sync_req = None;
    let mut acted: Option<u64> = None;
    let mut move_at: Option<tokio::time::Instant> = None;
    let stopped = stop.notified();
    tokio::pin!(stopped);
    loop {
        if let Some((since, _)) = at_kill
            && since.elapsed() > WATCHED
        {
            break;
        }
        let killed = *kill.borrow_and_update();
        if at_kill.is_none()
            && let Some(since) = killed
        {
            at_kill = Some((since, client.seq >> 32));
            if sync && !client.ended {
                sync_req = client.send_if_open(ClientMessage::Sync).await;
            }
        }
        // A seat plays when its own view says it is on turn, once per view.
        let turn = client.view.as_ref().and_then(|v| {
            let g = v.game.as_ref()?;
            (g.turn.is_some() && g.turn == v.you).then(|| simple_move(v)).flatten()
        });
        let due = turn.is_some() && acted != Some(client.seq) && !client.ended;
        if !due {
            move_at = None;
        } else if move_at.is_none() {
            move_at = Some(tokio::time::Instant::now() + THINK);
        }
        let think = tokio::time::sleep_until(move_at.unwrap_or_else(tokio::time::Instant::now));
        tokio::select! {
            () = &mut stopped => break,
            _ = kill.changed(), if at_kill.is_none() => continue,
            () = think, if due => {
                acted = Some(client.seq);
                move_at = None;
                client.send_if_open(action_message(turn.unwrap())).await;
                continue;
            }
            got = client.try_recv(Duration::from_millis(100)) => {
                let Some(msg) = got else {
                    if client.ended {
                        // Wait out the round: nothing more will come.
                        tokio::select! {
                            () = &mut stopped => {}
                            () = tokio::time::sleep(WATCHED) => {}
                        }
                        break;
                    }
                    continue;
                };
                if sync_req.is_some() && msg.req() == sync_req {
                    heard.answer = Some(msg);
                }
                if let Some((since, epoch)) = at_kill
                    && heard.after.is_none()
                    && client.seq >> 32 > epoch
                {
                    heard.after = Some(since.elapsed());
                }
            }
        }
    }
    (client, heard)
}

/// The reported race: after a kill of the owner, all the connections of one
/// of its tables (relayed ones and those on the new owner itself) heard
/// nothing of the new owner until they sent `sync`. Each round kills the
/// node that owns most tables while every table is played (every fourth
/// round pauses it until the others took its tables, and its watchers
/// elsewhere ask with `sync` meanwhile, which must be answered); every
/// connection on the other nodes, and every one that comes back at once
/// through another node, must get a frame of the new epoch within a lease
/// and two seconds without asking.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_connection_of_a_moved_table_hears_the_new_owner_without_asking() {
    let Some(env) = super::Env::new().await else { return };
    let mut nodes: Vec<Node> = three_nodes(&env).await;
    // Two tables created through each node, each with a watcher on every
    // node and its seats spread over the nodes.
    let mut tables = Vec::new();
    for n in 0..6 {
        tables.push(long_match(nodes[n % 3].addr).await);
    }
    let mut conns = Vec::new();
    for (t, (_, tokens)) in tables.iter().enumerate() {
        for node in 0..3 {
            conns.push(Conn { table: t, home: node, node, token: None, client: None });
        }
        for (i, token) in tokens.iter().enumerate() {
            let home = (i + t) % 3;
            conns.push(Conn { table: t, home, node: home, token: Some(token.clone()), client: None });
        }
    }
    let (mut silent, mut watched, mut unanswered, mut asked) = (0, 0, 0, 0);
    let mut times = Vec::new();
    let rounds = rounds();
    for round in 0..rounds {
        // Every connection attached at home (again, after its node came
        // back, or it came back elsewhere).
        for c in &mut conns {
            if c.node != c.home {
                c.client = None;
                c.node = c.home;
            }
            if c.client.as_ref().is_none_or(|cl| cl.ended) {
                let (table, _) = &tables[c.table];
                c.client = Some(attach(nodes[c.node].addr, *table, c.token.as_deref()).await);
            }
        }
        // The node owning most tables goes.
        let mut owners = Vec::new();
        for (table, _) in &tables {
            owners.push(owner_of(&env, *table).await);
        }
        let victim = (0..3)
            .max_by_key(|n| owners.iter().filter(|o| o.as_deref() == Some(nodes[*n].id.as_str())).count())
            .unwrap();
        let moved: Vec<usize> =
            (0..tables.len()).filter(|t| owners[*t].as_deref() == Some(nodes[victim].id.as_str())).collect();
        assert!(!moved.is_empty(), "round {round}: n{} owns a table", victim + 1);
        let pause = round % 4 == 3;
        let instant = round % 4 == 1;
        // Every connection plays (or watches) for a moment, then the owner
        // goes while moves are on their way.
        let (kill_tx, kill_rx) = watch::channel(None);
        let stop = Arc::new(tokio::sync::Notify::new());
        let epochs: Vec<u64> = conns.iter().map(|c| c.client.as_ref().map_or(0, |cl| cl.seq >> 32)).collect();
        let mut tasks = Vec::new();
        for (i, c) in conns.iter_mut().enumerate() {
            let sync = pause && c.token.is_none() && c.node != victim && moved.contains(&c.table);
            let task =
                tokio::spawn(live(c.client.take().unwrap(), kill_rx.clone(), Arc::clone(&stop), sync, None));
            tasks.push((i, sync, task));
        }
        tokio::time::sleep(Duration::from_millis(1000)).await;
        if pause {
            nodes[victim].signal("STOP");
        } else {
            nodes[victim].kill();
        }
        let since = Instant::now();
        kill_tx.send_replace(Some(since));
        if instant {
            nodes[victim].restart(&env).await;
        }
        // Those of the killed node come back at once through another.
        let mut returning = Vec::new();
        if !pause {
            for (i, c) in conns.iter_mut().enumerate() {
                if c.node != victim {
                    continue;
                }
                c.node = (victim + 1 + i % 2) % 3;
                if moved.contains(&c.table) {
                    let (addr, id, token) = (nodes[c.node].addr, tables[c.table].0, c.token.clone());
                    let (kill_rx, stop) = (kill_rx.clone(), Arc::clone(&stop));
                    returning.push((
                        i,
                        tokio::spawn(async move {
                            let client = attach_now(addr, id, token.as_deref()).await;
                            // Its epoch at the kill: the one its old
                            // connection had (any frame of the new owner
                            // is above it).
                            live(client, kill_rx, stop, false, Some((since, 0))).await
                        }),
                    ));
                }
            }
        }
        // Every connection of a moved table on a live node, and every one
        // that came back, has until a lease and 2.5 s after the kill.
        let mut results = Vec::new();
        for (i, sync, task) in tasks {
            let c = &conns[i];
            let measured = moved.contains(&c.table) && c.node != victim && c.home != victim;
            results.push((i, sync, measured, task));
        }
        for (i, task) in returning {
            results.push((i, false, true, task));
        }
        tokio::time::sleep((HEARD + Duration::from_millis(500)).saturating_sub(since.elapsed())).await;
        if pause {
            // Woken only once every table it had runs elsewhere.
            for t in &moved {
                while owner_of(&env, tables[*t].0).await.as_deref() == Some(nodes[victim].id.as_str()) {
                    assert!(since.elapsed() < WATCHED, "round {round}: table {t} was not taken over");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        stop.notify_waiters();
        let mut outcomes = Vec::new();
        for (i, sync, measured, task) in results {
            let (client, heard) = task.await.unwrap();
            outcomes.push((i, sync, measured, client, heard));
        }
        if trace() {
            eprintln!(
                "round {round}: n{} {} ({} tables)",
                victim + 1,
                if pause {
                    "paused"
                } else if instant {
                    "killed and restarted at once"
                } else {
                    "killed"
                },
                moved.len()
            );
        }
        for (i, sync, measured, client, heard) in outcomes {
            let what = conns[i].what();
            conns[i].client = Some(client);
            if !measured {
                continue;
            }
            if sync {
                asked += 1;
                if !matches!(heard.answer, Some(ServerMessage::Ack { .. })) {
                    unanswered += 1;
                    eprintln!(
                        "round {round}: {what}: the sync sent during the move was answered {:?}",
                        heard.answer
                    );
                }
            }
            watched += 1;
            match heard.after {
                Some(t) if t <= HEARD => times.push(t),
                after => {
                    silent += 1;
                    times.extend(after);
                    let closed = conns[i].client.as_ref().and_then(|c| c.closed.clone());
                    eprintln!(
                        "round {round}: {what}: first frame of the new epoch after {after:?} (closed: {closed:?})"
                    );
                }
            }
        }
        if pause {
            nodes[victim].signal("CONT");
            // The woken node's own connections to the tables it lost follow
            // them or are told to reconnect (close 1012): never left silent.
            for (i, c) in conns.iter_mut().enumerate() {
                if c.node != victim || !moved.contains(&c.table) {
                    continue;
                }
                let what = c.what();
                let client = c.client.as_mut().unwrap();
                let woke = Instant::now();
                while !client.ended && client.seq >> 32 <= epochs[i] && woke.elapsed() < WATCHED {
                    client.try_recv(Duration::from_millis(100)).await;
                }
                if !client.ended && client.seq >> 32 <= epochs[i] {
                    silent += 1;
                    eprintln!(
                        "round {round}: {what}: neither followed its table nor was closed after the pause"
                    );
                }
            }
        } else if !instant {
            nodes[victim].restart(&env).await;
        }
    }
    times.sort();
    let pick =
        |q: f64| times.get(((times.len() as f64 - 1.0) * q).round() as usize).copied().unwrap_or_default();
    eprintln!(
        "silent connections: {silent} of {watched} over {rounds} rounds; syncs unanswered: {unanswered} of \
         {asked}; kill to the first frame of the new epoch: p50 {:.2} s, p99 {:.2} s, max {:.2} s",
        pick(0.5).as_secs_f64(),
        pick(0.99).as_secs_f64(),
        times.last().copied().unwrap_or_default().as_secs_f64()
    );
    assert_eq!(silent, 0, "connections that heard nothing of the new owner within {HEARD:?}");
    assert_eq!(unanswered, 0, "syncs sent during the move and not answered");
    drop(nodes);
    env.drop_db().await;
}

/// A node that relays connections and is paused for longer than two leases
/// is taken for gone by the table's owner, which lets its connections go
/// and tells it so once it wakes. The relay attaches them again (to the
/// same owner, whose epoch has not changed): they hear the table's next
/// move without asking, and a `sync` sent as the node wakes is answered.
/// (The relay took the owner's notice for a stale one and left them
/// attached nowhere, for good.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_relaying_node_paused_past_two_leases_gets_its_connections_back() {
    let Some(env) = super::failover::env_with_long_clocks().await else { return };
    let nodes: Vec<Node> = three_nodes(&env).await;
    let (table, tokens) = super::failover::idle_match(nodes[0].addr).await;
    assert_eq!(owner_of(&env, table).await.as_deref(), Some("n1"));
    // Watchers relayed through n2; one asks with `sync` as n2 wakes.
    let mut quiet = attach(nodes[1].addr, table, None).await;
    let mut asking = attach(nodes[1].addr, table, None).await;
    nodes[1].signal("STOP");
    // Two leases and two of n1's rounds.
    tokio::time::sleep(Duration::from_millis(2 * LEASE_MS + 1500)).await;
    nodes[1].signal("CONT");
    let req = asking.send(ClientMessage::Sync).await;
    let answer = tokio::time::timeout(Duration::from_secs(5), asking.reply_to(req)).await;
    assert!(matches!(answer, Ok(ServerMessage::Ack { .. })), "the sync after the pause: {answer:?}");
    // A move at the table reaches both, without asking.
    tokio::time::sleep(Duration::from_millis(LEASE_MS)).await;
    let before = quiet.seq.max(asking.seq);
    let moved = Instant::now();
    while !super::failover::a_move_is_taken(nodes[0].addr, table, &tokens).await {
        assert!(moved.elapsed() < Duration::from_secs(10), "the table took no move");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for (name, w) in [("quiet", &mut quiet), ("asking", &mut asking)] {
        let heard = tokio::time::timeout(Duration::from_secs(5), async {
            while w.seq <= before {
                if w.try_recv(Duration::from_secs(1)).await.is_none() && w.ended {
                    break;
                }
            }
        })
        .await;
        assert!(
            heard.is_ok() && w.seq > before,
            "the {name} watcher did not hear the move (closed: {:?})",
            w.closed
        );
    }
    drop(nodes);
    env.drop_db().await;
}
