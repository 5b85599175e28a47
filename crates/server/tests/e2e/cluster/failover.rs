//! Failover in the state production nodes are in: every node holds finished
//! matches besides the unfinished ones, connections are relayed, and an owner
//! may be killed, paused or drained. Each test speaks to the nodes as clients
//! and operators do (WebSocket, REST, `/metrics`); the test's database is read
//! only to learn which node to stop.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use spades_engine::{MatchEnd, Rules, Seat};
use spades_protocol::{
    ClientMessage, CreateTable, CreatedTable, ServerMessage, TableOptions, TablePhase, TableStatus,
};
use uuid::Uuid;

use super::{Env, get_json, http, owner_of, three_nodes};
use crate::helpers::{Client, action_message, metric, metrics_text, simple_move};

/// The lease of the test nodes, ms (`Node::spawn`).
const LEASE_MS: u64 = 2000;

/// How long a table of a node that died, stopped or drained may go without
/// an owner that takes moves: a lease and five seconds.
const FAILOVER: Duration = Duration::from_millis(LEASE_MS + 5000);

/// Nodes whose turn clocks and graces outlast the test: a table only moves
/// when a person moves.
pub(super) async fn env_with_long_clocks() -> Option<Env> {
    let mut env = Env::new().await?;
    env.extra = vec![("SPADES_TABLES__TEST_TEMPO_MS", "600000"), ("SPADES_TABLES__GRACE_SECS", "600")];
    Some(env)
}

async fn create(addr: SocketAddr, options: TableOptions) -> CreatedTable {
    let resp = http()
        .post(format!("http://{addr}/api/v1/tables"))
        .json(&CreateTable { name: None, options })
        .send()
        .await
        .unwrap();
    let text = resp.text().await.unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("create: {e}: {text}"))
}

/// A match of four bots, created through `addr`, played to its end.
async fn finished_match(addr: SocketAddr) -> Uuid {
    let rules = Rules { match_end: MatchEnd::Hands(5), ..Rules::default() };
    let created = create(addr, TableOptions { rules, ..TableOptions::default() }).await;
    let mut owner = Client::connect(addr).await;
    let r = owner
        .request(ClientMessage::Watch {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table: created.table,
        })
        .await;
    assert!(matches!(r, ServerMessage::Watching { .. }), "{r:?}");
    owner.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    owner.request(ClientMessage::Start { owner_token: Some(created.owner_token) }).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while owner.view.as_ref().is_none_or(|v| v.phase != TablePhase::Finished) {
        assert!(Instant::now() < deadline, "a bots' match did not finish");
        owner.try_recv(Duration::from_secs(1)).await;
    }
    created.table
}

/// A match of four people, created through `addr`, started and left
/// idle (nobody is on the clock long enough to lose a turn); the seat
/// tokens.
pub(super) async fn idle_match(addr: SocketAddr) -> (Uuid, Vec<String>) {
    started_match(addr, TableOptions::default()).await
}

/// A match of four people with `options`, created through `addr` and
/// started; the seat tokens.
pub(super) async fn started_match(addr: SocketAddr, options: TableOptions) -> (Uuid, Vec<String>) {
    let created = create(addr, options).await;
    let mut tokens = Vec::new();
    let mut first = None;
    for seat in Seat::ALL {
        let mut c = Client::connect(addr).await;
        tokens.push(c.join(created.table, seat.name(), Some(seat)).await.1);
        first.get_or_insert(c);
    }
    let mut c = first.unwrap();
    let r = c.request(ClientMessage::Start { owner_token: Some(created.owner_token) }).await;
    assert!(matches!(r, ServerMessage::Ack { .. }), "start: {r:?}");
    (created.table, tokens)
}

/// Through `addr`, the seat on turn at `table` plays a move and has it
/// acknowledged; false when that cannot be done now.
pub(super) async fn a_move_is_taken(addr: SocketAddr, table: Uuid, tokens: &[String]) -> bool {
    let Ok(resp) = http().get(format!("http://{addr}/api/v1/tables/{table}")).send().await else {
        return false;
    };
    if resp.status() != 200 {
        return false;
    }
    let Ok(status) = resp.json::<TableStatus>().await else { return false };
    let Some(turn) = status.turn else { return false };
    let mut c = Client::connect(addr).await;
    let resume = ClientMessage::Resume {
        protocol: Some(spades_protocol::PROTOCOL_VERSION),
        table,
        token: Some(tokens[usize::from(turn.index())].clone()),
    };
    if !matches!(c.request(resume).await, ServerMessage::Resumed { .. }) {
        return false;
    }
    let Some(view) =
        tokio::time::timeout(Duration::from_secs(3), c.view_until(|v| v.game.is_some())).await.ok()
    else {
        return false;
    };
    let Some(action) = simple_move(&view) else { return false };
    matches!(
        tokio::time::timeout(Duration::from_secs(3), c.request(action_message(action))).await,
        Ok(ServerMessage::Ack { .. })
    )
}

/// The unfinished tables of `tables` that `node` holds a live lease on.
async fn owned_by(env: &Env, node: &str, tables: &[(Uuid, Vec<String>)]) -> Vec<(Uuid, Vec<String>)> {
    let mut out = Vec::new();
    for (t, tokens) in tables {
        if owner_of(env, *t).await.as_deref() == Some(node) {
            out.push((*t, tokens.clone()));
        }
    }
    out
}

/// Every table of `victims` takes a move through `via` within [`FAILOVER`]
/// of `since`; returns how long the slowest took.
async fn all_take_moves(
    via: SocketAddr,
    victims: &[(Uuid, Vec<String>)],
    since: Instant,
    what: &str,
) -> Duration {
    let mut slowest = Duration::ZERO;
    for (table, tokens) in victims {
        loop {
            if a_move_is_taken(via, *table, tokens).await {
                slowest = slowest.max(since.elapsed());
                break;
            }
            assert!(since.elapsed() < FAILOVER, "{what}: table {table} took no move within {FAILOVER:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    slowest
}

/// The reported failure: once every node held finished matches, survivors
/// claimed nothing (their claim budget counted the finished matches' tasks).
/// Now a killed, a stopped and a drained owner's tables all take moves again
/// within a lease and five seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_stopped_or_drained_owners_tables_move_though_every_node_holds_finished_matches() {
    let Some(env) = env_with_long_clocks().await else { return };
    let mut nodes = three_nodes(&env).await;
    // Finished matches on every node, then unfinished ones on every node.
    for n in &nodes {
        for _ in 0..2 {
            finished_match(n.addr).await;
        }
    }
    let mut tables = Vec::new();
    for n in &nodes {
        tables.push(idle_match(n.addr).await);
    }

    // kill -9 of the first node.
    let victims = owned_by(&env, "n1", &tables).await;
    assert!(!victims.is_empty(), "n1 owns a table");
    nodes[0].kill();
    let killed = Instant::now();
    let took = all_take_moves(nodes[1].addr, &victims, killed, "kill -9").await;
    eprintln!("kill -9: {} tables took moves after {took:?}", victims.len());
    nodes[0].restart(&env).await;

    // SIGSTOP of the second, until another node has its tables.
    tables.push(idle_match(nodes[1].addr).await);
    let victims = owned_by(&env, "n2", &tables).await;
    assert!(!victims.is_empty(), "n2 owns a table");
    nodes[1].signal("STOP");
    let stopped = Instant::now();
    let took = all_take_moves(nodes[2].addr, &victims, stopped, "SIGSTOP").await;
    eprintln!("SIGSTOP: {} tables took moves after {took:?}", victims.len());
    nodes[1].signal("CONT");

    // SIGTERM of the third: a drain hands its tables over at once.
    tables.push(idle_match(nodes[2].addr).await);
    let victims = owned_by(&env, "n3", &tables).await;
    assert!(!victims.is_empty(), "n3 owns a table");
    let drained = Instant::now();
    nodes[2].drain().await;
    let took = all_take_moves(nodes[0].addr, &victims, drained, "SIGTERM").await;
    eprintln!("SIGTERM: {} tables took moves after {took:?}", victims.len());

    // No table is left without an owner, and the nodes say so.
    let deadline = Instant::now() + FAILOVER;
    loop {
        let metrics = metrics_text(&http(), nodes[0].addr).await;
        let unowned = metric(&metrics, "spades_unowned_tables", &[]);
        if unowned == Some(0.0) {
            break;
        }
        assert!(Instant::now() < deadline, "tables without an owner: {unowned:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(nodes);
    env.drop_db().await;
}

/// Connections relayed through the node that claims a dead owner's table
/// all see the table go on (the relay moved only the connection that came
/// back through it and left the others attached to the dead owner); no
/// connection ever gets a frame that takes its `seq` back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_relayed_connection_follows_a_dead_owners_table() {
    let Some(env) = env_with_long_clocks().await else { return };
    let mut nodes = three_nodes(&env).await;
    for n in &nodes {
        finished_match(n.addr).await;
    }
    let (table, tokens) = idle_match(nodes[0].addr).await;
    assert_eq!(owner_of(&env, table).await.as_deref(), Some("n1"));
    // Ten watchers on each survivor, relayed to n1; the seats come back
    // through the survivors after the kill, as players' clients do.
    let mut watchers = Vec::new();
    for n in &nodes[1..] {
        for _ in 0..10 {
            let mut w = Client::connect(n.addr).await;
            let r = w
                .request(ClientMessage::Watch { protocol: Some(spades_protocol::PROTOCOL_VERSION), table })
                .await;
            assert!(matches!(r, ServerMessage::Watching { .. }), "{r:?}");
            w.view_until(|_| true).await;
            watchers.push(w);
        }
    }
    let before = watchers[0].seq;
    nodes[0].kill();
    let killed = Instant::now();
    // At once, as players' clients do, a seat comes back through each
    // survivor while the table has no owner: through the relay there.
    let mut returning = Vec::new();
    for (i, n) in nodes[1..].iter().enumerate() {
        let mut c = Client::connect(n.addr).await;
        let token = tokens[i].clone();
        c.send(ClientMessage::Resume {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table,
            token: Some(token),
        })
        .await;
        returning.push(c);
    }
    for (i, c) in returning.iter_mut().enumerate() {
        let back = tokio::time::timeout(FAILOVER, c.view_until(|v| v.game.is_some())).await;
        assert!(back.is_ok(), "seat {i} did not come back");
    }
    let took = all_take_moves(nodes[1].addr, &[(table, tokens.clone())], killed, "kill -9").await;
    eprintln!("the table took a move {took:?} after the kill");
    // Every watcher sees a frame of the new owner (its epoch is above the
    // old one's) and answers a sync; `Client` fails on any frame that takes
    // its seq back or leaves a gap.
    let new_epoch = ((before >> 32) + 1) << 32;
    for (i, w) in watchers.iter_mut().enumerate() {
        let deadline = killed + FAILOVER + Duration::from_secs(2);
        while w.seq < new_epoch {
            assert!(
                Instant::now() < deadline,
                "watcher {i} was left behind at seq {} (before: {before})",
                w.seq
            );
            w.try_recv(Duration::from_millis(200)).await;
        }
        let req = w.send(ClientMessage::Sync).await;
        let answer = tokio::time::timeout(Duration::from_secs(5), w.reply_to(req)).await;
        assert!(matches!(answer, Ok(ServerMessage::Ack { .. })), "watcher {i}: sync unanswered: {answer:?}");
    }
    drop(nodes);
    env.drop_db().await;
}

/// A paused owner that wakes up after another node took its table answers
/// reads of it as the new owner does, and attaches a watcher there: never
/// the table as it was before the pause.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_woken_owner_answers_for_a_lost_table_from_its_new_owner() {
    let Some(env) = env_with_long_clocks().await else { return };
    let nodes = three_nodes(&env).await;
    finished_match(nodes[0].addr).await;
    let (table, tokens) = idle_match(nodes[0].addr).await;
    assert_eq!(owner_of(&env, table).await.as_deref(), Some("n1"));
    nodes[0].signal("STOP");
    let stopped = Instant::now();
    all_take_moves(nodes[1].addr, &[(table, tokens.clone())], stopped, "SIGSTOP").await;
    // A second move, so the table is well past what n1 last saw.
    all_take_moves(nodes[1].addr, &[(table, tokens.clone())], Instant::now(), "a move").await;
    let now: TableStatus = get_json(format!("http://{}/api/v1/tables/{table}", nodes[1].addr)).await;
    let owner = now.owner.clone().expect("the status names the owner");
    assert_ne!(owner.node, "n1");
    nodes[0].signal("CONT");
    // The first read through the woken node, at once.
    let woken: TableStatus = get_json(format!("http://{}/api/v1/tables/{table}", nodes[0].addr)).await;
    assert_eq!(woken.owner, Some(owner.clone()), "the woken node answered for a table it lost");
    assert_eq!((woken.bids, woken.turn), (now.bids, now.turn), "the woken node answered with an old table");
    // A watcher through the woken node gets the table as it is.
    let mut w = Client::connect(nodes[0].addr).await;
    let r = tokio::time::timeout(
        Duration::from_secs(5),
        w.request(ClientMessage::Watch { protocol: Some(spades_protocol::PROTOCOL_VERSION), table }),
    )
    .await;
    assert!(matches!(r, Ok(ServerMessage::Watching { .. })), "{r:?}");
    let v = tokio::time::timeout(Duration::from_secs(5), w.view_until(|_| true)).await.expect("a view");
    assert_eq!(v.game.as_ref().map(|g| g.bids.0), Some(now.bids), "the watcher saw an old table");
    assert!(w.seq >= owner.epoch << 32, "a frame of the new owner's epoch: {}", w.seq);
    drop(nodes);
    env.drop_db().await;
}

/// A drain passes every answer back before its tables move: an owner
/// drained again and again, mid-play, with every player relayed through
/// another node, never has a move acknowledged and then refused (the next
/// owner got the move again before the old owner's answer came through).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn draining_the_owner_again_and_again_refuses_no_acknowledged_move() {
    let Some(env) = Env::new().await else { return };
    let mut nodes = three_nodes(&env).await;
    let refs: Vec<&super::Node> = vec![&nodes[0], &nodes[1], &nodes[2]];
    let (table, people) = super::four_people(&refs, 9).await;
    let addrs: Vec<SocketAddr> = nodes.iter().map(|n| n.addr).collect();
    let deadline = Instant::now() + Duration::from_secs(150);
    let mut drivers = Vec::new();
    for (i, (seat, token, _)) in people.iter().cloned().enumerate() {
        // Every driver starts on a node that is not the first owner.
        drivers.push((seat, tokio::spawn(super::drive(addrs.clone(), 1 + i % 2, table, token, deadline))));
    }
    for round in 0..4 {
        let last = super::actions_stored(&env, table).await;
        while super::actions_stored(&env, table).await < last + 5 && !super::match_over(&env, table).await {
            assert!(Instant::now() < deadline, "the match stopped moving in round {round}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if super::match_over(&env, table).await {
            break;
        }
        let Some(owner) = owner_of(&env, table).await else { continue };
        let node = nodes.iter_mut().find(|n| n.id == owner).unwrap();
        node.drain().await;
        node.restart(&env).await;
    }
    let mut outcomes = Vec::new();
    for (seat, d) in drivers {
        let out = d.await.unwrap();
        assert_eq!(out.last.as_ref().map(|v| v.phase), Some(TablePhase::Finished), "{seat}: {out:?}");
        assert!(out.errors.is_empty(), "{seat}: {:?}", out.errors);
        outcomes.push((seat, out));
    }
    let rec = super::record(nodes[0].addr, table).await;
    for (seat, out) in &outcomes {
        super::assert_acked_in_record(*seat, out, &rec);
    }
    drop(nodes);
    env.drop_db().await;
}
