//! One WebSocket connection to the server, without reconnection.

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use spades_engine::{Action, Card, ClientSeed, Commitment, Seat};
use spades_protocol::{ClientFrame, ClientMessage, PROTOCOL_VERSION, ServerMessage, TablePhase};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::{Connector, MaybeTlsStream, WebSocketStream};
use url::Url;
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::keeper::{Kept, ViewKeeper};
use crate::tls::Tls;

/// Where a server is: its REST base and its WebSocket address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `http://host:port` or `https://host:port`, with the path the
    /// server is served under (if any), without a trailing slash.
    pub http: String,
    /// `ws://host:port/ws` or `wss://host:port/ws`.
    pub ws: String,
    /// The host name or address.
    pub host: String,
    /// The port.
    pub port: u16,
    /// True for `https://` and `wss://`: connections use TLS.
    pub tls: bool,
}

impl Endpoint {
    /// Reads `http://host:port`, `https://host`, `ws://host:port/ws`,
    /// `wss://host/ws` or a bare `host:port` (plain HTTP). The port
    /// defaults to the scheme's (80, 443). An `http(s)` path is the prefix
    /// the server is served under (`https://cards.example/spades` has its
    /// socket at `wss://cards.example/spades/ws`); a `ws(s)` path is the
    /// socket's own.
    ///
    /// # Errors
    /// [`Error::Url`] when the address cannot be read.
    pub fn parse(url: &str) -> Result<Endpoint> {
        let bad = |why: &str| Error::Url { url: url.to_owned(), why: why.to_owned() };
        let trimmed = url.trim();
        let full = if trimmed.contains("://") { trimmed.to_owned() } else { format!("http://{trimmed}") };
        let parsed = Url::parse(&full).map_err(|e| bad(&e.to_string()))?;
        let (tls, websocket) = match parsed.scheme() {
            "http" => (false, false),
            "https" => (true, false),
            "ws" => (false, true),
            "wss" => (true, true),
            _ => return Err(bad("expected http://, https://, ws:// or wss://")),
        };
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(bad("credentials in the address are not supported"));
        }
        let host = match parsed.host() {
            Some(url::Host::Domain(d)) if !d.is_empty() => d.to_owned(),
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            _ => return Err(bad("no host")),
        };
        let default_port = if tls { 443 } else { 80 };
        let port = parsed.port().unwrap_or(default_port);
        let shown = if host.contains(':') { format!("[{host}]") } else { host.clone() };
        let authority = if port == default_port { shown } else { format!("{shown}:{port}") };
        let path = parsed.path().trim_end_matches('/');
        let (base, socket) = if websocket && !path.is_empty() {
            (path.strip_suffix("/ws").unwrap_or(""), path.to_owned())
        } else {
            (path, format!("{path}/ws"))
        };
        let (http, ws) = if tls { ("https", "wss") } else { ("http", "ws") };
        Ok(Endpoint {
            http: format!("{http}://{authority}{base}"),
            ws: format!("{ws}://{authority}{socket}"),
            host,
            port,
            tls,
        })
    }

    /// True when the host is a loopback address (or `localhost`).
    pub fn is_loopback(&self) -> bool {
        self.host == "localhost" || self.host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

/// How to open a connection.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Bind the socket to this local address before connecting (e.g. one of
    /// several loopback addresses, to open more connections than one source
    /// address has ports).
    pub source: Option<IpAddr>,
    /// Time allowed for TCP, the handshake and the server's `hello`.
    pub connect_timeout: Duration,
    /// Time [`Connection::request`] waits for a reply.
    pub request_timeout: Duration,
    /// The WebSocket read buffer in bytes (tungstenite's default is 128 KiB;
    /// views are a few KiB, so a small buffer saves memory when a program
    /// holds thousands of connections).
    pub read_buffer: usize,
    /// The certificates trusted for `wss://` servers.
    pub tls: Tls,
    /// After taking or resuming a seat in the lobby, send a fresh random
    /// seed of this client's own for the fair deals (`docs/fairness.md`).
    pub contribute_seed: bool,
    /// A session, sent as `Authorization: Bearer` on the upgrade: the
    /// connection then plays as the session's account.
    pub session: Option<crate::account::SessionToken>,
}

impl Default for ConnectOptions {
    fn default() -> ConnectOptions {
        ConnectOptions {
            source: None,
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(10),
            read_buffer: 16 * 1024,
            tls: Tls::default(),
            contribute_seed: true,
            session: None,
        }
    }
}

/// The reply to a `join`: the seat taken and its secret token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Joined {
    /// The table.
    pub table: Uuid,
    /// The seat taken.
    pub seat: Seat,
    /// The seat token: the only way back to the seat after a drop.
    pub token: String,
}

/// One WebSocket connection, after the server's `hello`.
///
/// Requests get a fresh request id each; [`Connection::request`] and the
/// helpers built on it (`join`, `bid`, …) wait for the matching reply and
/// turn a refusal into [`Error::Refused`]. Frames that arrive meanwhile
/// (views) are kept, in order, for [`Connection::recv`].
///
/// A connection does not reconnect; [`crate::Session`] does.
#[derive(Debug)]
pub struct Connection {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_req: u32,
    pending: VecDeque<Utf8Bytes>,
    server: String,
    server_time: u64,
    request_timeout: Duration,
    last_heard: tokio::time::Instant,
    contribute_seed: bool,
    /// The last seed this connection sent, with the commitment it saw.
    contributed: Option<(Commitment, ClientSeed)>,
    /// The view, kept up to date from the change frames.
    keeper: ViewKeeper,
    /// The request id of a `sync` sent after a gap, whose `ack` is ours.
    sync_req: Option<u32>,
    /// A seed committed to and not yet revealed: the table and seat it is
    /// for; revealed when a view asks for it.
    unrevealed: Option<(Uuid, Seat, ClientSeed)>,
    /// The request id of a reveal, whose answer is ours.
    reveal_req: Option<u32>,
}

impl Connection {
    /// Connects to `url` (`http://host:port`, `ws://host:port/ws` or
    /// `host:port`) and reads the server's `hello`.
    ///
    /// # Errors
    /// A bad address, a failed connection or handshake, or a server speaking
    /// another protocol version.
    pub async fn connect(url: &str) -> Result<Connection> {
        Connection::connect_with(&Endpoint::parse(url)?, &ConnectOptions::default()).await
    }

    /// Connects with explicit options.
    ///
    /// # Errors
    /// As [`Connection::connect`].
    pub async fn connect_with(endpoint: &Endpoint, opts: &ConnectOptions) -> Result<Connection> {
        let fail = |why: String| Error::Connect { url: endpoint.ws.clone(), why };
        let connect = async {
            let stream = tcp_connect(endpoint, opts.source).await.map_err(|e| fail(e.to_string()))?;
            let config = WebSocketConfig::default()
                .read_buffer_size(opts.read_buffer)
                .write_buffer_size(0)
                .max_message_size(Some(4 << 20))
                .max_frame_size(Some(4 << 20));
            let connector =
                if endpoint.tls { Connector::Rustls(opts.tls.client_config()) } else { Connector::Plain };
            let mut request = endpoint.ws.as_str().into_client_request().map_err(|e| fail(e.to_string()))?;
            if let Some(session) = &opts.session {
                let value = format!("Bearer {}", session.0)
                    .parse()
                    .map_err(|_| fail("a malformed session token".into()))?;
                request.headers_mut().insert("authorization", value);
            }
            let (ws, _) = tokio_tungstenite::client_async_tls_with_config(
                request,
                stream,
                Some(config),
                Some(connector),
            )
            .await
            .map_err(|e| fail(e.to_string()))?;
            let mut conn = Connection {
                ws,
                next_req: 1,
                pending: VecDeque::new(),
                server: String::new(),
                server_time: 0,
                request_timeout: opts.request_timeout,
                last_heard: tokio::time::Instant::now(),
                contribute_seed: opts.contribute_seed,
                contributed: None,
                keeper: ViewKeeper::new(),
                sync_req: None,
                unrevealed: None,
                reveal_req: None,
            };
            match conn.recv().await? {
                ServerMessage::Hello { protocol, server, server_time } => {
                    // A server of protocol 1 sends only whole views, which
                    // this client reads as well (it never needs `sync` there).
                    if !(1..=PROTOCOL_VERSION).contains(&protocol) {
                        return Err(Error::Version { got: protocol, expected: PROTOCOL_VERSION });
                    }
                    conn.server = server;
                    conn.server_time = server_time;
                }
                other => return Err(Error::Protocol(format!("expected hello, got {other:?}"))),
            }
            Ok(conn)
        };
        tokio::time::timeout(opts.connect_timeout, connect).await.map_err(|_| Error::Timeout("connecting"))?
    }

    /// The server's name and version, from its `hello`.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The server's clock (Unix ms) when it said `hello`.
    pub fn server_time(&self) -> u64 {
        self.server_time
    }

    /// The local address of the socket.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        match self.ws.get_ref() {
            MaybeTlsStream::Plain(tcp) => tcp.local_addr().ok(),
            MaybeTlsStream::Rustls(tls) => tls.get_ref().0.local_addr().ok(),
            _ => None,
        }
    }

    /// A fresh request id.
    pub fn next_req(&mut self) -> u32 {
        let req = self.next_req;
        self.next_req = self.next_req.wrapping_add(1).max(1);
        req
    }

    /// Sends a message with a fresh request id and returns the id (without
    /// waiting for the reply).
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection is gone.
    pub async fn send(&mut self, mut msg: ClientMessage) -> Result<u32> {
        // A move is for the turn of the view it was chosen from: the seq of
        // the last frame applied goes with it (refused `stale` if the table
        // moved on meanwhile).
        if let ClientMessage::Bid { seq, .. } | ClientMessage::Play { seq, .. } = &mut msg
            && seq.is_none()
        {
            *seq = self.keeper.view().map(|(s, _)| s);
        }
        let req = self.next_req();
        self.send_frame(&ClientFrame { req: Some(req), msg }).await?;
        Ok(req)
    }

    /// Sends a frame as it is.
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection is gone.
    pub async fn send_frame(&mut self, frame: &ClientFrame) -> Result<()> {
        let text = serde_json::to_string(frame).map_err(|e| Error::Protocol(e.to_string()))?;
        self.send_text(text).await
    }

    /// Sends a raw text frame.
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection is gone.
    pub async fn send_text(&mut self, text: impl Into<Utf8Bytes>) -> Result<()> {
        self.ws.send(Message::Text(text.into())).await.map_err(closed)
    }

    /// The next text frame from the server, raw (the server only sends
    /// text). Keep-alive pings are answered on the way.
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection ends, with the server's close
    /// code if it sent one.
    pub async fn recv_text(&mut self) -> Result<Utf8Bytes> {
        if let Some(text) = self.pending.pop_front() {
            return Ok(text);
        }
        self.read_socket().await
    }

    async fn read_socket(&mut self) -> Result<Utf8Bytes> {
        loop {
            let next = self.ws.next().await;
            self.last_heard = tokio::time::Instant::now();
            match next {
                Some(Ok(Message::Text(text))) => return Ok(text),
                Some(Ok(Message::Binary(_))) => {
                    return Err(Error::Protocol("a binary frame".into()));
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                Some(Ok(Message::Close(frame))) => {
                    let (code, reason) = match frame {
                        Some(f) => (Some(u16::from(f.code)), f.reason.as_str().to_owned()),
                        None => (None, "closed without a reason".to_owned()),
                    };
                    return Err(Error::Closed { code, reason });
                }
                Some(Err(e)) => return Err(closed(e)),
                None => return Err(Error::Closed { code: None, reason: "the connection ended".into() }),
            }
        }
    }

    /// When a frame of any kind (pings and pongs included) last arrived.
    pub fn last_heard(&self) -> tokio::time::Instant {
        self.last_heard
    }

    /// Sends a WebSocket ping (the server answers with a pong frame, which
    /// counts for [`Connection::last_heard`]).
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection is gone.
    pub async fn send_ping(&mut self) -> Result<()> {
        self.ws.send(Message::Ping(Default::default())).await.map_err(closed)
    }

    /// The next message from the server.
    ///
    /// # Errors
    /// [`Error::Closed`] when the connection ends; [`Error::Protocol`] for
    /// a frame the protocol does not describe.
    ///
    /// Change frames are applied to the view this connection holds and come
    /// out as complete views ([`ServerMessage::View`] with the change's
    /// `seq`); after a gap the connection sends `sync` itself and goes on
    /// with the snapshot that answers.
    pub async fn recv(&mut self) -> Result<ServerMessage> {
        loop {
            let text = self.recv_text().await?;
            match self.keeper.receive(parse(&text)?) {
                Kept::View(seq, view) => {
                    self.reveal_if_asked(&view).await?;
                    return Ok(ServerMessage::View { seq, view });
                }
                Kept::Other(ServerMessage::Ack { req: Some(r) }) if self.sync_req == Some(r) => {
                    self.sync_req = None;
                }
                // The answer to a reveal this connection made by itself.
                Kept::Other(
                    ServerMessage::Ack { req: Some(r) } | ServerMessage::Error { req: Some(r), .. },
                ) if self.reveal_req == Some(r) => {
                    self.reveal_req = None;
                }
                Kept::Other(msg) => return Ok(msg),
                Kept::Nothing => {}
                Kept::Gap => {
                    self.sync_req = Some(self.send(ClientMessage::Sync).await?);
                    self.keeper.syncing();
                }
            }
        }
    }

    /// The view this connection holds (the last one [`Connection::recv`]
    /// returned), with its `seq`.
    pub fn view(&self) -> Option<(u64, &spades_protocol::TableView)> {
        self.keeper.view()
    }

    /// Sends `msg` and waits for its reply (`joined`, `resumed`, `watching`,
    /// `ack` or `pong`); frames that arrive meanwhile are kept for
    /// [`Connection::recv`].
    ///
    /// # Errors
    /// [`Error::Refused`] when the server refuses, [`Error::Timeout`] when no
    /// reply comes within the request timeout, [`Error::Closed`].
    pub async fn request(&mut self, msg: ClientMessage) -> Result<ServerMessage> {
        let req = self.send(msg).await?;
        let wait = self.request_timeout;
        tokio::time::timeout(wait, self.reply_to(req))
            .await
            .map_err(|_| Error::Timeout("waiting for a reply"))?
    }

    async fn reply_to(&mut self, req: u32) -> Result<ServerMessage> {
        loop {
            let text = self.read_socket().await?;
            let msg = parse(&text)?;
            if msg.req() == Some(req) {
                return match msg {
                    ServerMessage::Error { code, message, .. } => Err(Error::Refused { code, message }),
                    other => Ok(other),
                };
            }
            self.pending.push_back(text);
        }
    }

    /// Takes a seat (the first empty one when `seat` is `None`).
    ///
    /// # Errors
    /// [`Error::Refused`] (`table_full`, `seat_taken`, …) or a connection
    /// error.
    pub async fn join(&mut self, table: Uuid, name: &str, seat: Option<Seat>) -> Result<Joined> {
        self.join_named(table, Some(name.to_owned()), seat).await
    }

    /// `join` with `name` (none: the account's, on a connection with a
    /// session), then this client's seed when it contributes one.
    async fn join_named(&mut self, table: Uuid, name: Option<String>, seat: Option<Seat>) -> Result<Joined> {
        let join = ClientMessage::Join { protocol: Some(PROTOCOL_VERSION), table, name, seat, invite: None };
        let joined = match self.request(join).await? {
            ServerMessage::Joined { table, seat, token, .. } => Joined { table, seat, token },
            other => return Err(Error::Protocol(format!("expected joined, got {other:?}"))),
        };
        if self.contribute_seed {
            self.contribute_after_attach().await?;
        }
        Ok(joined)
    }

    /// Takes a seat as the connection's account (a connection opened with
    /// a session: [`ConnectOptions::session`]), under the account's name.
    ///
    /// # Errors
    /// [`Error::Refused`] (`already_seated`, `table_full`, …) or a
    /// connection error.
    pub async fn join_as_account(&mut self, table: Uuid, seat: Option<Seat>) -> Result<Joined> {
        self.join_named(table, None, seat).await
    }

    /// Comes back to the seat the connection's account holds at `table`
    /// (no seat token needed); returns the seat.
    ///
    /// # Errors
    /// [`Error::Refused`] (`invalid_token` when the account holds no seat
    /// there) or a connection error.
    pub async fn resume_as_account(&mut self, table: Uuid) -> Result<Seat> {
        match self
            .request(ClientMessage::Resume { protocol: Some(PROTOCOL_VERSION), table, token: None })
            .await?
        {
            ServerMessage::Resumed { seat, .. } => Ok(seat),
            other => Err(Error::Protocol(format!("expected resumed, got {other:?}"))),
        }
    }

    /// Comes back to a seat with its token; returns the seat.
    ///
    /// # Errors
    /// [`Error::Refused`] (`invalid_token`, `table_not_found`, …) or a
    /// connection error.
    pub async fn resume(&mut self, table: Uuid, token: &str) -> Result<Seat> {
        let seat = match self
            .request(ClientMessage::Resume {
                protocol: Some(PROTOCOL_VERSION),
                table,
                token: Some(token.to_owned()),
            })
            .await?
        {
            ServerMessage::Resumed { seat, .. } => seat,
            other => return Err(Error::Protocol(format!("expected resumed, got {other:?}"))),
        };
        if self.contribute_seed {
            self.contribute_after_attach().await?;
        }
        Ok(seat)
    }

    /// Commits to a fresh random seed for the fair deals of `table`, at
    /// `seat`, to be counted if the match starts with the server's
    /// commitment `seen` (the one in the view this client last saw), and
    /// waits for the `ack`. The seed itself is sent only once the owner's
    /// start closes the commitments: [`Connection::recv`] reveals it when a
    /// view asks (`fair.reveal_by`). Nobody sees it before every
    /// commitment is fixed (docs/fairness.md).
    ///
    /// # Errors
    /// [`Error::Refused`] (`already_started`: the seeds are fixed;
    /// `not_seated`), a failing random source ([`Error::Protocol`]) or a
    /// connection error.
    pub async fn commit_seed(&mut self, table: Uuid, seat: Seat, seen: Commitment) -> Result<ClientSeed> {
        let seed = fresh_seed()?;
        let commitment = seed.commitment(*table.as_bytes(), seat);
        self.request(ClientMessage::CommitSeed { commitment }).await?;
        self.unrevealed = Some((table, seat, seed));
        self.contributed = Some((seen, seed));
        Ok(seed)
    }

    /// Sends a fresh random seed in the clear (before the start; the server
    /// keeps it secret until then and counts it as committed). Weaker than
    /// [`Connection::commit_seed`]: the server itself sees it before the
    /// other seats commit. For clients that cannot reveal later.
    ///
    /// # Errors
    /// As [`Connection::commit_seed`].
    pub async fn send_seed(&mut self, seen: Commitment) -> Result<ClientSeed> {
        let seed = fresh_seed()?;
        self.request(ClientMessage::Seed { seed }).await?;
        self.contributed = Some((seen, seed));
        Ok(seed)
    }

    /// Reveals the committed seed when `view` asks for it: the seats reveal
    /// (`fair.reveal_by`), this seat's commitment is ours and its seed is
    /// not shown yet. Sent without waiting; the answer is ours.
    async fn reveal_if_asked(&mut self, view: &spades_protocol::TableView) -> Result<()> {
        let Some((table, seat, seed)) = self.unrevealed else { return Ok(()) };
        let Some(fair) = view.fair.as_ref().filter(|f| f.reveal_by.is_some()) else { return Ok(()) };
        let i = usize::from(seat.index());
        let ours = view.table == table
            && view.you == Some(seat)
            && fair.client_commitments[i] == Some(seed.commitment(*table.as_bytes(), seat));
        if ours && fair.client_seeds[i].is_none() && self.reveal_req.is_none() {
            self.reveal_req = Some(self.send(ClientMessage::Seed { seed }).await?);
            self.unrevealed = None;
        }
        Ok(())
    }

    /// The last seed this connection sent and the commitment it had seen
    /// then: give both to `spades-verify` (`--commitment`, `--client-seed`)
    /// to check that the match was dealt with them.
    pub fn contributed(&self) -> Option<(Commitment, ClientSeed)> {
        self.contributed
    }

    /// After `joined`/`resumed` the table sends its view at once: in the
    /// lobby, with the commitment to the server seed, this sends a seed of
    /// our own. The view stays queued for [`Connection::recv`]. A refusal
    /// (the match started meanwhile) is no error: the match is then dealt
    /// with the seeds that were in.
    async fn contribute_after_attach(&mut self) -> Result<()> {
        let wait = self.request_timeout;
        let view = tokio::time::timeout(wait, async {
            loop {
                let text = self.read_socket().await?;
                let msg = parse(&text)?;
                self.pending.push_back(text);
                if let ServerMessage::View { view, .. } = msg {
                    return Ok::<_, Error>(view);
                }
            }
        })
        .await
        .map_err(|_| Error::Timeout("waiting for the first view"))??;
        let Some(fair) = view.fair.as_ref().filter(|f| !f.fixed && view.phase == TablePhase::Lobby) else {
            return Ok(());
        };
        let Some(seat) = view.you else { return Ok(()) };
        match self.commit_seed(view.table, seat, fair.commitment).await {
            Ok(_) | Err(Error::Refused { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Watches a table as a spectator.
    ///
    /// # Errors
    /// [`Error::Refused`] or a connection error.
    pub async fn watch(&mut self, table: Uuid) -> Result<()> {
        self.request(ClientMessage::Watch { protocol: Some(PROTOCOL_VERSION), table }).await.map(drop)
    }

    /// Owner: starts the match.
    ///
    /// # Errors
    /// [`Error::Refused`] (`seats_empty`, `invalid_token`, …) or a connection
    /// error.
    pub async fn start(&mut self, owner_token: &str) -> Result<()> {
        self.request(ClientMessage::Start { owner_token: Some(owner_token.to_owned()) }).await.map(drop)
    }

    /// Owner: a bot in every empty seat.
    ///
    /// # Errors
    /// [`Error::Refused`] or a connection error.
    pub async fn add_bots(&mut self, owner_token: &str) -> Result<()> {
        self.request(ClientMessage::AddBots { owner_token: Some(owner_token.to_owned()) }).await.map(drop)
    }

    /// Bids or plays and waits for the `ack` (the new view follows).
    ///
    /// # Errors
    /// [`Error::Refused`] with the reason (`must_follow_suit`, …) or a
    /// connection error.
    pub async fn act(&mut self, action: Action) -> Result<()> {
        self.request(action_message(action)).await.map(drop)
    }

    /// Bids (0 is nil).
    ///
    /// # Errors
    /// As [`Connection::act`].
    pub async fn bid(&mut self, bid: u8) -> Result<()> {
        self.act(Action::Bid(bid)).await
    }

    /// Plays a card.
    ///
    /// # Errors
    /// As [`Connection::act`].
    pub async fn play(&mut self, card: Card) -> Result<()> {
        self.act(Action::Play(card)).await
    }

    /// Says the client is closing on purpose (the seat is held for the short
    /// grace), then closes the connection.
    ///
    /// # Errors
    /// Never fails for a connection that is already gone.
    pub async fn close(mut self) -> Result<()> {
        let _ = self.send(ClientMessage::Closing).await;
        self.close_now().await;
        Ok(())
    }

    /// Sends a close frame and waits briefly for the server's.
    pub(crate) async fn close_now(&mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            let _ = self.ws.close(None).await;
            while let Some(Ok(_)) = self.ws.next().await {}
        })
        .await;
    }
}

/// The message for a bid or a card.
pub fn action_message(action: Action) -> ClientMessage {
    match action {
        Action::Bid(bid) => ClientMessage::Bid { bid, seq: None },
        Action::Play(card) => ClientMessage::Play { card, seq: None },
    }
}

/// 32 fresh random bytes from the operating system.
fn fresh_seed() -> Result<ClientSeed> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Error::Protocol(format!("no random source: {e}")))?;
    Ok(ClientSeed::from_bytes(bytes))
}

fn parse(text: &str) -> Result<ServerMessage> {
    serde_json::from_str(text).map_err(|e| Error::Protocol(format!("{e}: {text}")))
}

fn closed(e: tokio_tungstenite::tungstenite::Error) -> Error {
    Error::Closed { code: None, reason: e.to_string() }
}

/// Opens a TCP connection to the endpoint, from `source` if given, with
/// Nagle's algorithm off (every frame is a whole message).
pub(crate) async fn tcp_connect(endpoint: &Endpoint, source: Option<IpAddr>) -> std::io::Result<TcpStream> {
    let mut last = None;
    for addr in tokio::net::lookup_host((endpoint.host.as_str(), endpoint.port)).await? {
        let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
        if let Some(src) = source.filter(|s| s.is_ipv4() == addr.is_ipv4()) {
            socket.set_reuseaddr(true)?;
            socket.bind(SocketAddr::new(src, 0))?;
        }
        match socket.connect(addr).await {
            Ok(stream) => {
                stream.set_nodelay(true)?;
                return Ok(stream);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("the host has no address")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints() {
        let e = Endpoint::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(e.http, "http://127.0.0.1:8080");
        assert_eq!(e.ws, "ws://127.0.0.1:8080/ws");
        assert!(e.is_loopback() && !e.tls);
        let e = Endpoint::parse("ws://localhost:9000/ws").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("localhost", 9000));
        assert_eq!(e.http, "http://localhost:9000");
        let e = Endpoint::parse("cards.example:81/").unwrap();
        assert_eq!(e.ws, "ws://cards.example:81/ws");
        assert!(!e.is_loopback());
        let e = Endpoint::parse("http://[::1]:8080").unwrap();
        assert_eq!(e.host, "::1");
        assert_eq!(e.ws, "ws://[::1]:8080/ws");
        assert!(e.is_loopback());
        let e = Endpoint::parse("http://cards.example").unwrap();
        assert_eq!(
            (e.port, e.http.as_str(), e.ws.as_str()),
            (80, "http://cards.example", "ws://cards.example/ws")
        );
        assert!(Endpoint::parse("ftp://x").is_err());
        assert!(Endpoint::parse("http://host:port").is_err());
        assert!(Endpoint::parse("http://").is_err());
        assert!(Endpoint::parse("http://ann:secret@cards.example").is_err());
    }

    #[test]
    fn tls_endpoints() {
        let e = Endpoint::parse("https://cards.example").unwrap();
        assert!(e.tls);
        assert_eq!((e.host.as_str(), e.port), ("cards.example", 443));
        assert_eq!((e.http.as_str(), e.ws.as_str()), ("https://cards.example", "wss://cards.example/ws"));
        let e = Endpoint::parse("wss://cards.example:8443/ws").unwrap();
        assert!(e.tls);
        assert_eq!(
            (e.http.as_str(), e.ws.as_str()),
            ("https://cards.example:8443", "wss://cards.example:8443/ws")
        );
        // A server under a path prefix, behind a proxy.
        let e = Endpoint::parse("HTTPS://Cards.Example/spades/").unwrap();
        assert_eq!(
            (e.http.as_str(), e.ws.as_str()),
            ("https://cards.example/spades", "wss://cards.example/spades/ws")
        );
        let e = Endpoint::parse("wss://cards.example/spades/ws").unwrap();
        assert_eq!(e.http, "https://cards.example/spades");
        let e = Endpoint::parse("wss://[::1]:9443").unwrap();
        assert_eq!((e.host.as_str(), e.ws.as_str()), ("::1", "wss://[::1]:9443/ws"));
        // An explicit default port is the same address.
        assert_eq!(
            Endpoint::parse("https://cards.example:443").unwrap(),
            Endpoint::parse("https://cards.example").unwrap()
        );
    }
}
