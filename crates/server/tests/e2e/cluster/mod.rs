//! Cluster mode with the real binary: three nodes on loopback sharing one
//! PostgreSQL database (made for the test, dropped after) and NATS. Needs
//! `TEST_DATABASE_URL` and `TEST_NATS_URL` (`.ci/run` sets both); without
//! them the tests say so and pass, except under CI (`CI` set), where they
//! fail.
//!
//! Every player is a driver that plays simple legal moves, counts what was
//! acknowledged, and, like a real client, reconnects to the next node and
//! resumes with its token whenever its connection ends.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use spades_engine::{Action, MatchEnd, Rules, Seat};
use spades_protocol::{
    ClientFrame, ClientMessage, MatchRecord, ServerMessage, TableOptions, TablePhase, TableView,
};
use tokio_tungstenite::tungstenite::Message;
use uuid::Uuid;

use crate::helpers::{Client, assert_no_leaks, free_addr, metric, metrics_text, simple_move};

/// Owners killed, paused or drained while nodes hold finished matches and relay connections.
mod failover;
/// A ban made through one node closes the player's sockets on every node.
mod moderation;
/// Every connection of a moved table hears the new owner without sending `sync`.
mod moved;
/// A node cut off from PostgreSQL and NATS hands its tables over and rejoins (needs root).
mod partition;
/// A session made on one node works on another; a sign-out closes its sockets on every node.
mod sessions;

/// An HTTP client whose requests give up after 20 s (a test must fail, not
/// hang, when a node does not answer).
fn http() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap()
}

/// A database and a NATS subject prefix of the test's own.
struct Env {
    db: crate::services::TestDatabase,
    url: String,
    nats: String,
    prefix: String,
    data: PathBuf,
    /// Settings every node of the test gets beside the usual ones.
    extra: Vec<(&'static str, &'static str)>,
    /// This test's turn (see [`ONE_AT_A_TIME`]).
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

/// One cluster test at a time: three node processes each, and failover
/// deadlines of a few seconds, are more than two shared cores can keep for
/// five tests at once.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

impl Env {
    async fn new() -> Option<Env> {
        let base = crate::services::postgres()?;
        let nats = crate::services::nats()?;
        let turn = ONE_AT_A_TIME.lock().await;
        let id = Uuid::new_v4().simple().to_string();
        let db = crate::services::TestDatabase::create(&base, "spades_cluster").await;
        let data = std::env::temp_dir().join(format!("spades-cluster-{id}"));
        Some(Env {
            url: db.url.clone(),
            db,
            nats,
            prefix: format!("t{}", &id[..12]),
            data,
            extra: Vec::new(),
            _turn: turn,
        })
    }

    async fn drop_db(self) {
        let _ = self.db.remove().await;
        let _ = std::fs::remove_dir_all(&self.data);
    }
}

struct Node {
    id: String,
    addr: SocketAddr,
    child: Option<Child>,
}

impl Node {
    fn spawn(env: &Env, id: &str, addr: SocketAddr) -> Child {
        Node::command(env, id, addr, None).spawn().unwrap()
    }

    /// The node's command: the binary with the test's settings, run in the
    /// network namespace `netns` when given.
    fn command(env: &Env, id: &str, addr: SocketAddr, netns: Option<&str>) -> Command {
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/default.toml");
        // Another build of the server (a release build) when given.
        let bin = std::env::var("SPADES_TEST_SERVER_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_spades-server").to_owned());
        let mut cmd = match netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, &bin]);
                c
            }
            None => Command::new(&bin),
        };
        cmd.arg("--config")
            .arg(config)
            .env("SPADES_SERVER__BIND", addr.to_string())
            .env("SPADES_SERVER__SHUTDOWN_GRACE_SECS", "3")
            .env("SPADES_STORAGE__DATA_DIR", env.data.join(id))
            .env("SPADES_STORAGE__DATABASE_URL", &env.url)
            .env("SPADES_CLUSTER__NATS_URL", &env.nats)
            .env("SPADES_CLUSTER__NODE_ID", id)
            .env("SPADES_CLUSTER__LEASE_MS", "2000")
            .env("SPADES_CLUSTER__SUBJECT_PREFIX", &env.prefix)
            .env("SPADES_TABLES__BOT", "rule")
            .env("SPADES_TABLES__BOT_DELAY_MS", "10")
            .env("SPADES_LIMITS__REQUESTS_PER_MINUTE_PER_IP", "0")
            .env("SPADES_LIMITS__CONNECTIONS_PER_MINUTE_PER_IP", "0")
            .env("SPADES_LIMITS__CONNECTIONS_PER_IP", "0")
            // The drivers move the moment their turn comes, faster than
            // any person: a seat of a quick match passed the per-connection
            // message limit (100 in 10 s) and was told to slow down.
            .env("SPADES_LIMITS__MESSAGES_PER_10S", "1000000")
            .envs(env.extra.iter().copied())
            .env("RUST_LOG", std::env::var("SPADES_TEST_NODE_LOG").unwrap_or_else(|_| "warn".into()))
            .stdout(if std::env::var_os("SPADES_TEST_NODE_LOG").is_some() {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .stderr(Stdio::inherit());
        cmd
    }

    async fn start(env: &Env, id: &str) -> Node {
        let addr = free_addr();
        let mut node = Node { id: id.into(), addr, child: Some(Node::spawn(env, id, addr)) };
        node.wait_ready().await;
        node
    }

    async fn restart(&mut self, env: &Env) {
        self.child = Some(Node::spawn(env, &self.id, self.addr));
        self.wait_ready().await;
    }

    async fn wait_ready(&mut self) {
        let http = http();
        for _ in 0..400 {
            if let Ok(r) = http.get(format!("http://{}/readyz", self.addr)).send().await
                && r.status() == 200
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.kill();
        panic!("node {} did not become ready", self.id);
    }

    fn pid(&self) -> String {
        self.child.as_ref().unwrap().id().to_string()
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill").arg(format!("-{sig}")).arg(self.pid()).status().unwrap().success();
        assert!(ok, "kill -{sig} {}", self.id);
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM, and waits for the process to exit.
    async fn drain(&mut self) {
        self.signal("TERM");
        let mut child = self.child.take().unwrap();
        for _ in 0..400 {
            if child.try_wait().unwrap().is_some() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = child.kill();
        panic!("node {} did not stop after SIGTERM", self.id);
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn three_nodes(env: &Env) -> Vec<Node> {
    let mut nodes = Vec::new();
    for id in ["n1", "n2", "n3"] {
        nodes.push(Node::start(env, id).await);
    }
    nodes
}

/// What a driver saw.
#[derive(Debug, Default)]
struct Outcome {
    /// Acknowledged actions: (hand number, action).
    acked: Vec<(u16, Action)>,
    /// Error frames received.
    errors: Vec<String>,
    /// Connections that ended under the driver.
    reconnects: usize,
    /// Close codes seen.
    closes: Vec<u16>,
    /// The last view.
    last: Option<TableView>,
}

/// Plays `seat` at `table` until the match is over or `deadline`, starting
/// on `addrs[first]` and moving to the next address whenever the connection
/// ends (or cannot be opened).
async fn drive(
    addrs: Vec<SocketAddr>,
    first: usize,
    table: Uuid,
    token: String,
    deadline: Instant,
) -> Outcome {
    let mut out = Outcome::default();
    let mut at = first;
    let mut req = 0u32;
    let mut sent: HashMap<u32, (u16, Action)> = HashMap::new();
    let trace = std::env::var_os("SPADES_TEST_NODE_LOG").is_some();
    'connections: while Instant::now() < deadline {
        let addr = addrs[at % addrs.len()];
        if trace {
            eprintln!("driver {token:.6}: connecting to {addr}");
        }
        let Ok(Ok((mut ws, _))) = tokio::time::timeout(
            Duration::from_secs(2),
            tokio_tungstenite::connect_async(format!("ws://{addr}/ws")),
        )
        .await
        else {
            at += 1;
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        req += 1;
        let resume = ClientFrame {
            req: Some(req),
            msg: ClientMessage::Resume {
                protocol: Some(spades_protocol::PROTOCOL_VERSION),
                table,
                token: Some(token.clone()),
            },
        };
        let resumed = tokio::time::timeout(
            Duration::from_secs(5),
            ws.send(Message::text(serde_json::to_string(&resume).unwrap())),
        )
        .await;
        if !matches!(resumed, Ok(Ok(()))) {
            at += 1;
            continue;
        }
        // The turn last acted on: (hand, moves made). A turn is played
        // once per connection: a move sent while the table changes hands
        // is carried to the new owner, and answered from there.
        let mut acted_on: Option<(u16, usize)> = None;
        // The view this connection holds, kept from its change frames.
        let mut kept: Option<(u64, TableView)> = None;
        let mut syncing = false;
        loop {
            if Instant::now() > deadline {
                return out;
            }
            let frame = tokio::time::timeout(Duration::from_secs(15), ws.next()).await;
            let text = match frame {
                Ok(Some(Ok(Message::Text(t)))) => t.to_string(),
                Ok(Some(Ok(Message::Close(c)))) => {
                    out.closes.push(c.map_or(1005, |c| c.code.into()));
                    out.reconnects += 1;
                    at += 1;
                    continue 'connections;
                }
                Ok(Some(Ok(_))) => continue,
                Ok(Some(Err(_)) | None) | Err(_) => {
                    out.reconnects += 1;
                    at += 1;
                    continue 'connections;
                }
            };
            if trace {
                eprintln!("driver {token:.6} via {addr}: {}", &text[..text.len().min(60)]);
            }
            let mut msg = serde_json::from_str::<ServerMessage>(&text).unwrap();
            match &msg {
                ServerMessage::View { seq, .. } if kept.as_ref().is_some_and(|(last, _)| *seq < *last) => {
                    continue;
                }
                ServerMessage::View { seq, view } => {
                    syncing = false;
                    kept = Some((*seq, (**view).clone()));
                }
                // A frame of an earlier owner that arrives late is dropped
                // (its `seq` is not above the view's); a gap is an error,
                // and the snapshot `sync` asks for puts the view right.
                ServerMessage::Change { seq, .. }
                    if syncing || kept.as_ref().is_some_and(|(last, _)| *seq <= *last) =>
                {
                    continue;
                }
                ServerMessage::Change { seq, change } => {
                    let applied = match kept.as_mut() {
                        Some((last, v)) if *seq == *last + 1 => {
                            *last = *seq;
                            v.apply(change).is_ok().then(|| v.clone())
                        }
                        _ => None,
                    };
                    match applied {
                        Some(v) => msg = ServerMessage::View { seq: *seq, view: Box::new(v) },
                        None => {
                            out.errors.push(format!("a change frame that does not follow the view: {text}"));
                            kept = None;
                            syncing = true;
                            let sync = ClientFrame { req: None, msg: ClientMessage::Sync };
                            let text = serde_json::to_string(&sync).unwrap();
                            let _ =
                                tokio::time::timeout(Duration::from_secs(5), ws.send(Message::text(text)))
                                    .await;
                            continue;
                        }
                    }
                }
                _ => {}
            }
            match msg {
                ServerMessage::View { view, .. } => {
                    if view.phase == TablePhase::Finished {
                        out.last = Some(*view);
                        return out;
                    }
                    let Some(g) = view.game.as_ref() else { continue };
                    let made = g.tricks.len() * 4
                        + g.trick.plays().count()
                        + g.bids.iter().filter(|(_, b)| b.is_some()).count();
                    let turn = (g.hand_number, made);
                    if g.turn.is_some()
                        && g.turn == view.you
                        && acted_on != Some(turn)
                        && let Some(action) = simple_move(&view)
                    {
                        acted_on = Some(turn);
                        req += 1;
                        sent.insert(req, (g.hand_number, action));
                        let msg = match action {
                            Action::Bid(bid) => ClientMessage::Bid { bid, seq: None },
                            Action::Play(card) => ClientMessage::Play { card, seq: None },
                        };
                        let frame = ClientFrame { req: Some(req), msg };
                        let text = serde_json::to_string(&frame).unwrap();
                        let _ =
                            tokio::time::timeout(Duration::from_secs(5), ws.send(Message::text(text))).await;
                    }
                    out.last = Some(*view);
                }
                ServerMessage::Ack { req: Some(r) } => {
                    if let Some(a) = sent.remove(&r) {
                        out.acked.push(a);
                    } else {
                        out.errors.push(format!("an ack for req {r}, which was not pending"));
                    }
                }
                ServerMessage::Error { message, req, .. } => {
                    let last =
                        out.last.as_ref().and_then(|v| v.game.as_ref()).map(|g| (g.hand_number, g.turn));
                    let pending = req.is_some_and(|r| sent.contains_key(&r));
                    out.errors.push(format!(
                        "{message} (req {req:?} pending {pending}, acted on {acted_on:?}, last view {last:?})"
                    ));
                }
                _ => {}
            }
        }
    }
    out
}

/// A table created on `nodes[0]` with four people: each joins on the node
/// given, then the owner starts the match. Returns the table and tokens.
async fn four_people(nodes: &[&Node], hands: u16) -> (Uuid, Vec<(Seat, String, usize)>) {
    let http = http();
    let rules = Rules { match_end: MatchEnd::Hands(hands), ..Rules::default() };
    let resp = http
        .post(format!("http://{}/api/v1/tables", nodes[0].addr))
        .json(&spades_protocol::CreateTable {
            name: None,
            options: TableOptions { rules, ..TableOptions::default() },
        })
        .send()
        .await
        .unwrap();
    let text = resp.text().await.unwrap();
    let created: spades_protocol::CreatedTable =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("create: {e}: {text}"));
    let mut people = Vec::new();
    let mut clients = Vec::new();
    for (i, seat) in Seat::ALL.into_iter().enumerate() {
        let at = i % nodes.len();
        let mut c = Client::connect(nodes[at].addr).await;
        let (_, token) = c.join(created.table, seat.name(), Some(seat)).await;
        people.push((seat, token, at));
        clients.push(c);
    }
    let reply = clients[0].request(ClientMessage::Start { owner_token: Some(created.owner_token) }).await;
    assert!(matches!(reply, ServerMessage::Ack { .. }), "start: {reply:?}");
    (created.table, people)
}

/// `GET url`, read as JSON.
async fn get_json<T: serde::de::DeserializeOwned>(url: String) -> T {
    http().get(url).send().await.unwrap().json().await.unwrap()
}

async fn record(addr: SocketAddr, table: Uuid) -> MatchRecord {
    get_json(format!("http://{addr}/api/v1/matches/{table}")).await
}

/// Every acknowledged action is in the record, in the hand it was made in.
fn assert_acked_in_record(seat: Seat, out: &Outcome, rec: &MatchRecord) {
    for (hand, action) in &out.acked {
        let h = rec.hands.iter().find(|h| h.result.hand_number == *hand).expect("hand in the record");
        let found = match action {
            Action::Bid(b) => h.result.bids[seat] == *b,
            Action::Play(c) => h.plays.iter().any(|p| p.seat == seat && p.card == *c),
        };
        assert!(found, "{seat} had {action:?} acknowledged in hand {hand}, but the record lacks it");
    }
}

/// The record replays through the engine to the same result, from the
/// revealed seeds (which match their commitment).
fn assert_replays(rec: &MatchRecord) {
    let fair = rec.fair.as_ref().expect("a fair match");
    let seeds = fair.seeds(rec.table).expect("the server seed is revealed and matches its commitment");
    let mut moves = Vec::new();
    for h in &rec.hands {
        let first = h.result.dealer.next();
        for i in 0..4 {
            let seat = first.offset(i);
            moves.push(spades_engine::Move { seat, action: Action::Bid(h.result.bids[seat]) });
        }
        moves.extend(
            h.plays.iter().map(|p| spades_engine::Move { seat: p.seat, action: Action::Play(p.card) }),
        );
    }
    let m = spades_engine::Match::replay_fair(rec.options.rules, seeds, moves).unwrap();
    assert_eq!(m.result().copied(), rec.result, "the record replays to its result");
}

/// The node that owns `table` now, by its lease row.
/// A connection of its own to the test's database, tried again when it
/// does not come within 5 s (a connection attempt that hung once held a
/// whole CI run).
async fn test_db(env: &Env) -> sqlx::PgPool {
    for _ in 0..6 {
        let connect = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(5))
            .connect(&env.url);
        if let Ok(Ok(pool)) = tokio::time::timeout(Duration::from_secs(5), connect).await {
            return pool;
        }
    }
    panic!("the test database did not answer within 30 s");
}

/// One value about `table` (bound as `$1`) from the test's database, or
/// `None` when no row matches.
async fn db_value<T>(env: &Env, sql: &'static str, table: Uuid) -> Option<T>
where
    T: for<'r> sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres> + Send + Unpin,
{
    let pool = test_db(env).await;
    let query = sqlx::query_scalar(sql).bind(table.to_string()).fetch_optional(&pool);
    let value = tokio::time::timeout(Duration::from_secs(10), query)
        .await
        .unwrap_or_else(|_| panic!("no answer within 10 s to {sql}"))
        .unwrap();
    pool.close().await;
    value
}

async fn owner_of(env: &Env, table: Uuid) -> Option<String> {
    db_value::<Option<String>>(
        env,
        "SELECT owner_node FROM tables WHERE id = $1 AND lease_until > spades_now_ms()",
        table,
    )
    .await
    .flatten()
}

async fn match_over(env: &Env, table: Uuid) -> bool {
    db_value(env, "SELECT finished_at IS NOT NULL FROM tables WHERE id = $1", table).await.unwrap_or(false)
}

async fn actions_stored(env: &Env, table: Uuid) -> i64 {
    db_value(env, "SELECT count(*) FROM actions WHERE table_id = $1", table).await.unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_match_spread_over_three_nodes_plays_to_the_end_without_leaks() {
    let Some(env) = Env::new().await else { return };
    let nodes = three_nodes(&env).await;
    let refs: Vec<&Node> = nodes.iter().collect();
    let (table, people) = four_people(&refs, 5).await;
    // Each person plays from the node they joined on; a spectator watches
    // from the third node.
    let mut spectator = Client::connect(nodes[2].addr).await;
    let watching = spectator
        .request(ClientMessage::Watch { protocol: Some(spades_protocol::PROTOCOL_VERSION), table })
        .await;
    assert!(matches!(watching, ServerMessage::Watching { .. }), "{watching:?}");
    let mut players = Vec::new();
    for (seat, token, at) in people.iter().cloned() {
        let addrs = [nodes[at].addr];
        let deadline = Instant::now() + Duration::from_secs(120);
        players.push((
            seat,
            tokio::spawn(async move {
                // A client of the helper kind, to check every frame for leaks.
                let mut c = Client::connect(addrs[0]).await;
                let r = c
                    .request(ClientMessage::Resume {
                        protocol: Some(spades_protocol::PROTOCOL_VERSION),
                        table,
                        token: Some(token),
                    })
                    .await;
                assert!(matches!(r, ServerMessage::Resumed { .. }), "{r:?}");
                let v = c.play_until(|v| v.phase == TablePhase::Finished || Instant::now() > deadline).await;
                (c, v)
            }),
        ));
    }
    let mut clients = Vec::new();
    for (seat, p) in players {
        let (c, v) = p.await.unwrap();
        assert_eq!(v.phase, TablePhase::Finished, "{seat} saw the match end");
        assert!(c.closed.is_none(), "{seat}'s connection stayed open");
        clients.push(c);
    }
    spectator.view_until(|v| v.phase == TablePhase::Finished).await;
    let refs: Vec<&Client> = clients.iter().collect();
    assert_no_leaks(&refs, &[&spectator]);
    // The same record from every node, and it replays.
    let rec = record(nodes[0].addr, table).await;
    assert!(rec.finished);
    assert_eq!(rec.hands.len(), 5);
    for n in &nodes[1..] {
        assert_eq!(record(n.addr, table).await, rec);
    }
    assert_replays(&rec);
    // Every node answers the table's status and lists it.
    for n in &nodes {
        let status: spades_protocol::TableStatus =
            get_json(format!("http://{}/api/v1/tables/{table}", n.addr)).await;
        assert_eq!(status.summary.table, table);
        let list: Vec<spades_protocol::TableSummary> =
            get_json(format!("http://{}/api/v1/tables", n.addr)).await;
        assert!(list.iter().any(|t| t.table == table), "node {} lists the table", n.id);
    }
    drop(nodes);
    env.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killing_the_owner_moves_the_table_and_loses_no_acknowledged_action() {
    let Some(env) = Env::new().await else { return };
    let mut nodes = three_nodes(&env).await;
    // Created on n1, which owns it; the people sit on n2 and n3.
    let refs: Vec<&Node> = vec![&nodes[0], &nodes[1], &nodes[2]];
    let (table, people) = four_people(&refs, 5).await;
    assert_eq!(owner_of(&env, table).await.as_deref(), Some("n1"));
    let survivors = vec![nodes[1].addr, nodes[2].addr];
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut drivers = Vec::new();
    for (i, (seat, token, _)) in people.iter().cloned().enumerate() {
        let addrs = survivors.clone();
        drivers.push((seat, tokio::spawn(drive(addrs, i, table, token, deadline))));
    }
    // Mid-hand: some cards down.
    while actions_stored(&env, table).await < 12 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let killed = Instant::now();
    nodes[0].kill();
    let before = actions_stored(&env, table).await;
    loop {
        let owner = owner_of(&env, table).await;
        if owner.as_deref().is_some_and(|o| o != "n1") && actions_stored(&env, table).await > before {
            break;
        }
        assert!(killed.elapsed() < Duration::from_secs(10), "the table did not move within 10 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let moved_in = killed.elapsed();
    let mut outcomes = Vec::new();
    for (seat, d) in drivers {
        let out = d.await.unwrap();
        assert_eq!(out.last.as_ref().map(|v| v.phase), Some(TablePhase::Finished), "{seat}: {out:?}");
        assert_eq!(out.reconnects, 0, "{seat} kept its connection to a surviving node: {:?}", out.closes);
        // A move the dead owner stored but never answered is acknowledged
        // by the new owner when the relay sends it again.
        assert!(out.errors.is_empty(), "{seat}: {:?}", out.errors);
        outcomes.push((seat, out));
    }
    let rec = record(nodes[1].addr, table).await;
    for (seat, out) in &outcomes {
        assert_acked_in_record(*seat, out, &rec);
    }
    assert_replays(&rec);
    eprintln!("the table moved {moved_in:?} after the kill");
    drop(nodes);
    env.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_paused_owner_writes_nothing_after_another_node_took_over() {
    let Some(env) = Env::new().await else { return };
    let nodes = three_nodes(&env).await;
    let refs: Vec<&Node> = vec![&nodes[0], &nodes[1], &nodes[2]];
    let (table, people) = four_people(&refs, 5).await;
    let survivors = vec![nodes[1].addr, nodes[2].addr];
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut drivers = Vec::new();
    for (i, (seat, token, _)) in people.iter().cloned().enumerate() {
        drivers.push((seat, tokio::spawn(drive(survivors.clone(), i, table, token, deadline))));
    }
    while actions_stored(&env, table).await < 8 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    nodes[0].signal("STOP");
    let paused = Instant::now();
    while owner_of(&env, table).await.as_deref().is_none_or(|o| o == "n1") {
        assert!(paused.elapsed() < Duration::from_secs(10), "nobody took the paused node's table");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let the new owner play on, then wake the old one up mid-play.
    tokio::time::sleep(Duration::from_millis(500)).await;
    nodes[0].signal("CONT");
    let mut outcomes = Vec::new();
    for (seat, d) in drivers {
        let out = d.await.unwrap();
        assert_eq!(out.last.as_ref().map(|v| v.phase), Some(TablePhase::Finished), "{seat}: {out:?}");
        // A move sent to the paused owner is answered by the new one, not
        // refused by the old one when it wakes.
        assert!(out.errors.is_empty(), "{seat}: {:?}", out.errors);
        outcomes.push((seat, out));
    }
    // No fork: the log is one line of play that replays, holds every
    // acknowledged action, and the woken node no longer runs the table.
    let rec = record(nodes[2].addr, table).await;
    assert_replays(&rec);
    for (seat, out) in &outcomes {
        assert_acked_in_record(*seat, out, &rec);
    }
    let metrics = metrics_text(&http(), nodes[0].addr).await;
    let hosted = metric(&metrics, "spades_tables", &[]).unwrap_or(0.0);
    assert_eq!(hosted, 0.0, "the woken node stopped the table:\n{metrics}");
    drop(nodes);
    env.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn draining_and_restarting_every_node_in_turn_is_invisible_to_players() {
    let Some(env) = Env::new().await else { return };
    let mut nodes = three_nodes(&env).await;
    let refs: Vec<&Node> = vec![&nodes[0], &nodes[1], &nodes[2]];
    // Nine hands: long enough for three drains and restarts mid-play.
    let (table, people) = four_people(&refs, 9).await;
    let addrs: Vec<SocketAddr> = nodes.iter().map(|n| n.addr).collect();
    let deadline = Instant::now() + Duration::from_secs(150);
    let mut drivers = Vec::new();
    for (i, (seat, token, _)) in people.iter().cloned().enumerate() {
        drivers.push((seat, tokio::spawn(drive(addrs.clone(), i, table, token, deadline))));
    }
    // A rolling restart: each node in turn is drained (SIGTERM) and started
    // again, while the match goes on.
    let mut last = actions_stored(&env, table).await;
    for node in nodes.iter_mut() {
        // Six more moves, unless the match is over first (then the node is
        // drained after it: nothing to wait for).
        while actions_stored(&env, table).await < last + 6 && !match_over(&env, table).await {
            assert!(Instant::now() < deadline, "the match stopped moving: {} moves", last);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        node.drain().await;
        node.restart(&env).await;
        last = actions_stored(&env, table).await;
    }
    let mut outcomes = Vec::new();
    for (seat, d) in drivers {
        let out = d.await.unwrap();
        assert_eq!(out.last.as_ref().map(|v| v.phase), Some(TablePhase::Finished), "{seat}: {out:?}");
        assert!(out.errors.is_empty(), "{seat} saw no error: {:?}", out.errors);
        assert!(out.closes.iter().all(|c| [1001, 1012].contains(c)), "{seat}: {:?}", out.closes);
        outcomes.push((seat, out));
    }
    let rec = record(nodes[0].addr, table).await;
    assert_replays(&rec);
    for (seat, out) in &outcomes {
        assert_acked_in_record(*seat, out, &rec);
    }
    drop(nodes);
    env.drop_db().await;
}

/// How a node process that must not start ended, within 15 s (`why` when
/// it does not end).
async fn exit_of(child: &mut Child, why: &str) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "{why}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_node_with_a_node_id_in_use_is_refused() {
    let Some(env) = Env::new().await else { return };
    let first = Node::start(&env, "same").await;
    let addr = free_addr();
    let mut child = Node::spawn(&env, "same", addr);
    let status = exit_of(&mut child, "the second node did not give up").await;
    assert!(!status.success(), "the second process with node id \"same\" is refused");
    drop(first);
    env.drop_db().await;
}

/// A cluster runs one wire version: a node refuses to join one whose
/// running node answers in another version (here version 1's lobby
/// answer, the one message every version answers), and says why; with that
/// node gone it joins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_refuses_to_join_a_cluster_of_another_wire_version() {
    let Some(env) = Env::new().await else { return };
    // A node of this version makes the schema, and goes.
    Node::start(&env, "first").await.drain().await;
    let db = test_db(&env).await;
    sqlx::query(
        "INSERT INTO nodes (id, incarnation, address, heartbeat_at) VALUES ('old', 'x', '127.0.0.1:9', spades_now_ms())",
    )
    .execute(&db)
    .await
    .unwrap();
    let nats = async_nats::connect(env.nats.as_str()).await.unwrap();
    let mut lobby = nats.subscribe(format!("{}.lobby", env.prefix)).await.unwrap();
    let answering = nats.clone();
    let old = tokio::spawn(async move {
        while let Some(msg) = lobby.next().await {
            if let Some(to) = msg.reply {
                let answer = r#"{"v":1,"msg":{"type":"lobby","tables":[]}}"#;
                answering.publish(to, answer.into()).await.unwrap();
            }
        }
    });
    nats.flush().await.unwrap();
    let mut child = Node::command(&env, "new", free_addr(), None).stderr(Stdio::piped()).spawn().unwrap();
    let status = exit_of(&mut child, "the node joined a cluster of another version").await;
    let mut said = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut said).unwrap();
    assert!(!status.success());
    assert!(said.contains("speaks cluster wire version 1"), "{said}");
    let registered: Option<String> =
        sqlx::query_scalar("SELECT id FROM nodes WHERE id = 'new'").fetch_optional(&db).await.unwrap();
    assert_eq!(registered, None, "a refused node takes no node id");
    // The old version's node gone, the node joins.
    old.abort();
    sqlx::query("DELETE FROM nodes WHERE id = 'old'").execute(&db).await.unwrap();
    drop(Node::start(&env, "new").await);
    db.close().await;
    env.drop_db().await;
}

/// A node takes back the tables of its earlier process before it serves
/// anything: the tables it creates the moment it answers stay at the epoch
/// they were created with (claimed again, each would run twice on the node,
/// the first copy fenced out of every write, and a seat taken on it lost).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tables_created_the_moment_a_node_answers_are_not_claimed_again() {
    let Some(env) = Env::new().await else { return };
    let addr = free_addr();
    let mut node = Node { id: "n1".into(), addr, child: Some(Node::spawn(&env, "n1", addr)) };
    let http = http();
    let body = spades_protocol::CreateTable { name: None, options: TableOptions::default() };
    let mut created = Vec::new();
    let started = Instant::now();
    // As fast as it answers, from its first answer on, for a second.
    while created.is_empty() || started.elapsed() < Duration::from_secs(1) {
        assert!(started.elapsed() < Duration::from_secs(20), "the node never created a table");
        let sent = http.post(format!("http://{addr}/api/v1/tables")).json(&body).send().await;
        if let Ok(resp) = sent
            && resp.status() == 201
        {
            let c: spades_protocol::CreatedTable = resp.json().await.unwrap();
            created.push(c.table);
        } else {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
    node.wait_ready().await;
    // Two lease rounds later (a quarter lease each).
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let pool = test_db(&env).await;
    for table in &created {
        let (owner, epoch): (Option<String>, i64) =
            sqlx::query_as("SELECT owner_node, epoch FROM tables WHERE id = $1")
                .bind(table.to_string())
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!((owner.as_deref(), epoch), (Some("n1"), 0), "table {table} was claimed again");
    }
    pool.close().await;
    drop(node);
    env.drop_db().await;
}
