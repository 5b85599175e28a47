//! Starts the real server on port 0 and speaks to it over real WebSockets
//! and HTTP.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use spades_engine::{Action, CardSet, Legal, Seat};
use spades_protocol::{
    ClientFrame, ClientMessage, CreateTable, CreatedTable, ErrorCode, ServerMessage, TableOptions,
    TableStatus, TableView,
};
use spades_server::Config;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

/// How long any single wait may take before a test fails.
pub const WAIT: Duration = Duration::from_secs(10);

pub struct TestServer {
    pub addr: SocketAddr,
    pub shutdown: CancellationToken,
    pub task: JoinHandle<anyhow::Result<()>>,
    pub http: reqwest::Client,
}

/// The default test configuration: rule bots that act at once.
pub fn test_config() -> Config {
    let mut config = Config::default();
    config.tables.bot_delay_ms = 0;
    config.tables.bot = spades_bots::Strength::Rule;
    config.storage.in_memory = true;
    config
}

/// Whether the server at `base` (`http://host:port`) answers `/readyz`
/// with 200 within ten seconds.
pub async fn ready(http: &reqwest::Client, base: &str) -> bool {
    for _ in 0..200 {
        if http.get(format!("{base}/readyz")).send().await.is_ok_and(|r| r.status() == 200) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

pub async fn spawn_server(config: Config) -> TestServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(spades_server::serve(listener, config, shutdown.clone()));
    TestServer { addr, shutdown, task, http: reqwest::Client::new() }
}

impl TestServer {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub async fn create_table(&self, options: TableOptions) -> CreatedTable {
        let body = CreateTable { name: Some("Test table".into()), options };
        let resp = self.http.post(self.url("/api/v1/tables")).json(&body).send().await.unwrap();
        assert_eq!(resp.status(), 201);
        resp.json().await.unwrap()
    }

    /// The match record of `table` (`GET /api/v1/matches/{table}`).
    pub async fn record(&self, table: Uuid) -> spades_protocol::MatchRecord {
        let resp = self.http.get(self.url(&format!("/api/v1/matches/{table}"))).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        resp.json().await.unwrap()
    }

    pub async fn status(&self, table: Uuid) -> TableStatus {
        let resp = self.http.get(self.url(&format!("/api/v1/tables/{table}"))).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        resp.json().await.unwrap()
    }

    pub async fn client(&self) -> Client {
        Client::connect(self.addr).await
    }

    /// The server's `/metrics` text.
    pub async fn metrics(&self) -> String {
        metrics_text(&self.http, self.addr).await
    }

    /// A metric's value from `/metrics` (0 when absent); see [`metric`].
    pub async fn metric(&self, name: &str, labels: &[&str]) -> f64 {
        metric(&self.metrics().await, name, labels).unwrap_or(0.0)
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        let _ = tokio::time::timeout(WAIT, self.task).await;
    }
}

/// One WebSocket client that records every frame it receives.
pub struct Client {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_req: u32,
    /// Every text frame received, raw.
    pub raw: Vec<String>,
    /// The latest view.
    pub view: Option<TableView>,
    pub seq: u64,
    /// Views by sequence number (for leak checks).
    pub views: HashMap<u64, TableView>,
    pub closed: Option<(u16, String)>,
    /// The stream has ended (closed by either side).
    pub ended: bool,
}

impl Client {
    pub async fn connect(addr: SocketAddr) -> Client {
        Client::connect_with(addr, &[]).await
    }

    /// [`Client::connect`] with these headers on the upgrade request (a
    /// session's cookie or bearer token, an `Origin`).
    pub async fn connect_with(addr: SocketAddr, headers: &[(&str, &str)]) -> Client {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut req = format!("ws://{addr}/ws").into_client_request().unwrap();
        for (name, value) in headers {
            req.headers_mut().append(
                tokio_tungstenite::tungstenite::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        let (ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
        let mut c = Client {
            ws,
            next_req: 1,
            raw: Vec::new(),
            view: None,
            seq: 0,
            views: HashMap::new(),
            closed: None,
            ended: false,
        };
        match c.recv().await {
            ServerMessage::Hello { protocol, .. } => assert_eq!(protocol, spades_protocol::PROTOCOL_VERSION),
            other => panic!("expected hello, got {other:?}"),
        }
        c
    }

    /// Sends a raw text frame.
    pub async fn send_raw(&mut self, text: &str) {
        self.ws.send(Message::text(text)).await.unwrap();
    }

    /// Sends a message with a fresh request id, and returns the id.
    pub async fn send(&mut self, msg: ClientMessage) -> u32 {
        self.send_if_open(msg).await.expect("the connection is open")
    }

    /// Sends a message with a fresh request id, as [`Client::send`]; on a
    /// connection that can no longer be written to, marks it ended and
    /// returns `None`.
    pub async fn send_if_open(&mut self, msg: ClientMessage) -> Option<u32> {
        let req = self.next_req;
        self.next_req += 1;
        let text = serde_json::to_string(&ClientFrame { req: Some(req), msg }).unwrap();
        if self.ws.send(Message::text(text)).await.is_err() {
            self.ended = true;
            return None;
        }
        Some(req)
    }

    /// The next server message (views are recorded as they pass).
    pub async fn recv(&mut self) -> ServerMessage {
        self.try_recv(WAIT)
            .await
            .unwrap_or_else(|| panic!("no frame within {WAIT:?} (closed: {:?})", self.closed))
    }

    /// The next message within `wait`, or `None` (timeout or closed).
    pub async fn try_recv(&mut self, wait: Duration) -> Option<ServerMessage> {
        loop {
            if self.ended {
                return None;
            }
            let frame = match tokio::time::timeout(wait, self.ws.next()).await {
                Err(_) => return None,
                Ok(None) => {
                    self.ended = true;
                    return None;
                }
                Ok(Some(f)) => f,
            };
            match frame {
                Ok(Message::Text(text)) => {
                    let mut msg: ServerMessage = serde_json::from_str(text.as_str()).unwrap_or_else(|e| {
                        panic!("server sent a frame the protocol does not describe: {e}: {text}")
                    });
                    self.raw.push(text.as_str().to_owned());
                    // A change frame comes out as the view it makes.
                    if let ServerMessage::Change { seq, change } = &msg {
                        assert_eq!(*seq, self.seq + 1, "a change frame after a gap: {text}");
                        let mut view = self.view.clone().expect("a change frame before any snapshot");
                        view.apply(change).unwrap_or_else(|e| panic!("{e}: {text}"));
                        msg = ServerMessage::View { seq: *seq, view: Box::new(view) };
                    }
                    if let ServerMessage::View { seq, view } = &msg {
                        assert!(*seq > self.seq || self.seq == 0 || *seq == self.seq, "views go forward");
                        self.seq = *seq;
                        self.views.insert(*seq, (**view).clone());
                        self.view = Some((**view).clone());
                    }
                    return Some(msg);
                }
                Ok(Message::Close(frame)) => {
                    self.closed = frame.map(|f| (u16::from(f.code), f.reason.as_str().to_owned()));
                    self.ended = true;
                    return None;
                }
                Ok(_) => continue,
                Err(_) => {
                    self.ended = true;
                    return None;
                }
            }
        }
    }

    /// Reads until the reply to `req` (anything but a view).
    pub async fn reply_to(&mut self, req: u32) -> ServerMessage {
        loop {
            let msg = self.recv().await;
            if msg.req() == Some(req) {
                return msg;
            }
        }
    }

    /// Sends and waits for the reply.
    pub async fn request(&mut self, msg: ClientMessage) -> ServerMessage {
        let req = self.send(msg).await;
        self.reply_to(req).await
    }

    /// Plays simple legal moves whenever this connection's seat is on turn,
    /// from the latest view, until `stop` holds for a view.
    pub async fn play_until(&mut self, mut stop: impl FnMut(&TableView) -> bool) -> TableView {
        loop {
            if let Some(v) = self.view.clone() {
                if stop(&v) {
                    return v;
                }
                let my_turn = v.game.as_ref().is_some_and(|g| g.turn.is_some() && g.turn == v.you);
                if my_turn && let Some(action) = simple_move(&v) {
                    let seq = self.seq;
                    if matches!(self.request(action_message(action)).await, ServerMessage::Ack { .. }) {
                        while self.seq <= seq {
                            self.recv().await;
                        }
                        continue;
                    }
                }
            }
            self.recv().await;
        }
    }

    /// Reads until a view newer than the latest one satisfies `f`.
    pub async fn next_view_until(&mut self, mut f: impl FnMut(&TableView) -> bool) -> TableView {
        loop {
            if let ServerMessage::View { view, .. } = self.recv().await
                && f(&view)
            {
                return *view;
            }
        }
    }

    /// Reads until a view satisfies `f` (the latest one counts).
    pub async fn view_until(&mut self, mut f: impl FnMut(&TableView) -> bool) -> TableView {
        if let Some(v) = &self.view
            && f(v)
        {
            return v.clone();
        }
        loop {
            if let ServerMessage::View { view, .. } = self.recv().await
                && f(&view)
            {
                return *view;
            }
        }
    }

    /// Takes a seat and returns (seat, token).
    pub async fn join(&mut self, table: Uuid, name: &str, seat: Option<Seat>) -> (Seat, String) {
        match self.request(join_message(table, name, seat, None)).await {
            ServerMessage::Joined { seat, token, .. } => (seat, token),
            other => panic!("join refused: {other:?}"),
        }
    }

    /// The latest view's own hand.
    pub fn hand(&self) -> CardSet {
        self.view.as_ref().and_then(|v| v.game.as_ref()).and_then(|g| g.hand).unwrap_or_default()
    }
}

/// A simple, deterministic legal move for a view: bid 2 (or nil-free min),
/// play the lowest legal card.
pub fn simple_move(view: &TableView) -> Option<Action> {
    let game = view.game.as_ref()?;
    match game.legal {
        Legal::Bid { min, max } => Some(Action::Bid(2u8.clamp(min, max))),
        Legal::Play { cards } => cards.first().map(Action::Play),
        Legal::None => None,
    }
}

/// A `join` of this protocol version.
pub fn join_message(table: Uuid, name: &str, seat: Option<Seat>, invite: Option<String>) -> ClientMessage {
    ClientMessage::Join {
        protocol: Some(spades_protocol::PROTOCOL_VERSION),
        table,
        name: Some(name.into()),
        seat,
        invite,
    }
}

/// The code of an error message; `None` for any other message.
pub fn code_of(msg: &ServerMessage) -> Option<ErrorCode> {
    match msg {
        ServerMessage::Error { code, .. } => Some(*code),
        _ => None,
    }
}

/// A loopback address with a free port (free a moment ago), for a server
/// process to bind.
pub fn free_addr() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap()
}

/// The `/metrics` text of the server at `addr`.
pub async fn metrics_text(http: &reqwest::Client, addr: SocketAddr) -> String {
    http.get(format!("http://{addr}/metrics")).send().await.unwrap().text().await.unwrap()
}

/// A metric's value in Prometheus text: the sum of the samples of exactly
/// `name` whose labels contain every one of `labels` (such as
/// `reason="too_slow"`; none for every sample); `None` when there is no such
/// sample.
pub fn metric(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
    let mut sum = None;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name) else { continue };
        let (label_set, value) = if let Some(rest) = rest.strip_prefix('{') {
            let Some(end) = rest.rfind('}') else { continue };
            (&rest[..end], &rest[end + 1..])
        } else if rest.starts_with(' ') {
            ("", rest)
        } else {
            continue;
        };
        if !labels.iter().all(|l| label_set.contains(l)) {
            continue;
        }
        // The value, then an optional timestamp.
        if let Some(v) = value.split_whitespace().next().and_then(|v| v.parse::<f64>().ok()) {
            *sum.get_or_insert(0.0) += v;
        }
    }
    sum
}

pub fn action_message(action: Action) -> ClientMessage {
    match action {
        Action::Bid(bid) => ClientMessage::Bid { bid, seq: None },
        Action::Play(card) => ClientMessage::Play { card, seq: None },
    }
}

/// Checks that no frame a seat received names a card that another seat held
/// at that moment, using the four seats' own views of each sequence number.
pub fn assert_no_leaks(players: &[&Client], spectators: &[&Client]) {
    let mut hands: HashMap<(u64, Seat), CardSet> = HashMap::new();
    for p in players {
        for (seq, v) in &p.views {
            if let (Some(you), Some(game)) = (v.you, v.game.as_ref())
                && let Some(h) = game.hand
            {
                hands.insert((*seq, you), h);
            }
        }
    }
    let check = |c: &Client, me: Option<Seat>| {
        for text in &c.raw {
            let seq = match serde_json::from_str::<ServerMessage>(text) {
                Ok(ServerMessage::View { seq, .. } | ServerMessage::Change { seq, .. }) => seq,
                _ => continue,
            };
            for other in Seat::ALL {
                if Some(other) == me {
                    continue;
                }
                if let Some(h) = hands.get(&(seq, other)) {
                    for card in *h {
                        assert!(
                            !text.contains(&format!("\"{card}\"")),
                            "{me:?} saw {card} held by {other} at seq {seq}"
                        );
                    }
                }
            }
        }
    };
    for p in players {
        let me = p.views.values().find_map(|v| v.you);
        check(p, me);
    }
    for s in spectators {
        check(s, None);
        for v in s.views.values() {
            assert!(v.game.as_ref().is_none_or(|g| g.hand.is_none()), "a spectator got a hand");
        }
    }
}

impl Client {
    /// Sends any WebSocket message (binary frames, say).
    pub async fn ws_send(&mut self, msg: Message) {
        self.ws.send(msg).await.unwrap();
    }
}
