//! One WebSocket connection: reads client frames, routes them to its table,
//! and writes what the table queues in its outbox.
//!
//! A single task per connection `select!`s over the socket, the outbox, a
//! keep-alive timer and the shutdown signal. The table never waits for this
//! task: it `try_send`s into the bounded outbox and drops the connection
//! when the outbox is full.

use std::borrow::Cow;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use futures_util::SinkExt;
use spades_protocol::{ClientFrame, ClientMessage, ErrorCode, PROTOCOL_VERSION, ServerMessage};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tracing::{Instrument, debug, info_span};

use crate::boundary::{BrowserOrigin, Connecting};
use crate::error::AppError;
use crate::state::AppState;
use crate::table::{Act, Attach, ConnId, Role, TableCommand, TableHandle};
use crate::text::clean_name;
use crate::time::now_ms;

/// Close code: the connection could not keep up with its table.
pub const CLOSE_TOO_SLOW: u16 = 4001;
/// Close code: the connection stopped answering keep-alive pings.
pub const CLOSE_SILENT: u16 = 4002;
/// Close code: the server is shutting down (standard "going away").
pub const CLOSE_GOING_AWAY: u16 = 1001;
/// Close code: the table closed.
pub const CLOSE_TABLE_CLOSED: u16 = 4003;
/// Close code: the connection did not join, resume or watch a table within
/// `limits.attach_timeout_secs`.
pub const CLOSE_UNATTACHED: u16 = 4004;
/// Close code: the table let go of the connection for a reason of its own
/// (standard "normal closure").
pub const CLOSE_NORMAL: u16 = 1000;
/// Close code: the client broke the WebSocket protocol.
pub const CLOSE_PROTOCOL_ERROR: u16 = 1002;
/// Close code: a text message that is not UTF-8.
pub const CLOSE_INVALID_DATA: u16 = 1007;
/// Close code: a message over the hard size limit.
pub const CLOSE_TOO_BIG: u16 = 1009;
/// Close code: something failed on the server.
pub const CLOSE_INTERNAL: u16 = 1011;
/// The table moved to another node of the cluster (this node lost or handed
/// over its lease): reconnect, to any node, and resume with the seat token.
pub const CLOSE_TABLE_MOVED: u16 = 1012;

/// Messages larger than this are not even read (the connection closes with
/// 1009); between `max_frame_bytes` and this, the client gets a
/// `frame_too_large` error and the connection stays usable.
const HARD_MESSAGE_LIMIT: usize = 64 * 1024;

/// Frames queued together (an acknowledgement and the view it caused, say)
/// are encoded into the socket's write buffer up to this size and written
/// with one system call; [`Connection::write_batch`] flushes before the
/// task waits.
const WRITE_BUFFER: usize = 16 * 1024;

/// The most frames taken from the outbox for one write.
const WRITE_BATCH: usize = 16;

/// The longest wait for the close frame to go out.
const CLOSE_WRITE_LIMIT: Duration = Duration::from_secs(2);

/// Seconds a client over its open-connection cap is asked to wait.
const OPEN_CAP_RETRY: Duration = Duration::from_secs(5);

/// How often a join, resume or watch is asked again of a table that
/// stopped (it moved to another node) before it could answer.
const ATTACH_TRIES: u32 = 5;

/// The pause before asking again: the table's next place is looked up anew.
const ATTACH_RETRY: Duration = Duration::from_millis(200);

/// `GET /ws`: upgrades to a WebSocket.
pub async fn upgrade(
    ws: WebSocketUpgrade,
    State(state): State<AppState>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    _: BrowserOrigin<Connecting>,
    headers: HeaderMap,
) -> Response {
    if state.shutdown.is_cancelled() {
        return AppError::new(ErrorCode::ShuttingDown, "the server is shutting down").into_response();
    }
    let client = state.client_ip(addr.ip(), &headers);
    if let Err(wait) = state.limits.allow_connection(client) {
        crate::metrics::rate_limited("connections");
        return AppError::rate_limited("too many new connections from your address: wait a minute", wait)
            .into_response();
    }
    if !state.limits.open_connection(client) {
        crate::metrics::rate_limited("open_connections");
        return AppError::rate_limited(
            "your address has as many connections open as it may: close one first",
            OPEN_CAP_RETRY,
        )
        .into_response();
    }
    let open = state.connections.fetch_add(1, Ordering::AcqRel);
    // From here the guard undoes both counts, whatever happens.
    let guard = ConnectionGuard { state: state.clone(), client };
    if open >= state.config.limits.max_connections {
        return AppError::new(ErrorCode::Capacity, "the server has as many connections as it can take")
            .into_response();
    }
    let id = state.hosting.next_conn_id();
    crate::metrics::connection_opened();
    ws.read_buffer_size(4096)
        .write_buffer_size(WRITE_BUFFER)
        .max_write_buffer_size(256 * 1024)
        .max_message_size(HARD_MESSAGE_LIMIT)
        .max_frame_size(HARD_MESSAGE_LIMIT)
        .on_upgrade(move |socket| {
            let span = info_span!(
                "conn",
                conn_id = id,
                %addr,
                %client,
                table_id = tracing::field::Empty,
                seat = tracing::field::Empty
            );
            let tracker = state.tracker.clone();
            tracker.track_future(
                async move {
                    let _guard = guard;
                    Connection::new(id, state).run(socket).await;
                }
                .instrument(span),
            )
        })
}

/// Undoes a connection's counts (global and per address) when it ends or
/// its upgrade fails.
struct ConnectionGuard {
    state: AppState,
    client: IpAddr,
}

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.state.connections.fetch_sub(1, Ordering::AcqRel);
        self.state.limits.close_connection(self.client);
    }
}

struct Connection {
    id: ConnId,
    state: AppState,
    /// The outbox's sending side, kept until a table accepts it.
    outbox: mpsc::Sender<Utf8Bytes>,
    inbox: mpsc::Receiver<Utf8Bytes>,
    table: Option<(TableHandle, Role)>,
    /// Message-rate window: start and count.
    window: (Instant, u32),
    /// Once the table has let go of the outbox: whether it was full then
    /// (the connection was too slow) or not (it let go for another reason).
    released_full: Option<bool>,
    /// How long one write may take.
    write_timeout: Duration,
    /// This connection's chat rate.
    chat: crate::chat::ChatLimiter,
    /// The client sends `ping` frames: silence for three of its own ping
    /// intervals (at least `limits.heartbeat_silence_secs`) closes the
    /// connection.
    heartbeats: bool,
    /// When its last `ping` came, and the gap before it.
    pinged: Option<(Instant, Duration)>,
    /// The `seq` of the last view or change frame written.
    last_seq: u64,
}

/// How the connection goes on, or why it ends.
enum Flow {
    Continue,
    /// The peer closed, reset or went away: nothing more to send.
    Gone,
    /// A write did not complete within the write timeout: the peer does
    /// not read. Dropped without a close frame (it could not be written).
    Stuck,
    /// Close with this code and reason.
    Close(u16, Cow<'static, str>),
}

impl Flow {
    fn close(code: u16, reason: &'static str) -> Flow {
        Flow::Close(code, Cow::Borrowed(reason))
    }

    fn going_away() -> Flow {
        Flow::close(CLOSE_GOING_AWAY, "server shutting down")
    }

    /// The `spades_disconnects_total` reason.
    fn reason(&self) -> &'static str {
        match self {
            Flow::Continue | Flow::Gone => "closed",
            Flow::Stuck | Flow::Close(CLOSE_TOO_SLOW, _) => "too_slow",
            Flow::Close(CLOSE_SILENT, _) => "silent",
            Flow::Close(CLOSE_UNATTACHED, _) => "unattached",
            Flow::Close(CLOSE_GOING_AWAY, _) => "shutdown",
            Flow::Close(CLOSE_TABLE_CLOSED, _) => "table_closed",
            Flow::Close(CLOSE_TABLE_MOVED, _) => "table_moved",
            Flow::Close(CLOSE_NORMAL, _) => "released",
            Flow::Close(CLOSE_PROTOCOL_ERROR | CLOSE_INVALID_DATA | CLOSE_TOO_BIG, _) => "protocol",
            Flow::Close(..) => "error",
        }
    }
}

/// What a read error means: a peer that went away (TCP reset, end of
/// stream, no closing handshake) is an ordinary disconnect; a broken
/// protocol, bad UTF-8 or an oversized message get their close codes.
fn read_error_flow(e: &axum::Error) -> Flow {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.downcast_ref::<std::io::Error>().is_some() {
            return Flow::Gone;
        }
        source = err.source();
    }
    // axum hides tungstenite's error type; its messages are stable.
    let text = e.to_string();
    if text.contains("Connection reset without closing handshake")
        || text.starts_with("Connection closed normally")
        || text.starts_with("Trying to work with closed connection")
    {
        Flow::Gone
    } else if text.starts_with("WebSocket protocol error") {
        Flow::close(CLOSE_PROTOCOL_ERROR, "protocol error")
    } else if text.starts_with("UTF-8 encoding error") {
        Flow::close(CLOSE_INVALID_DATA, "text frames must be UTF-8")
    } else if text.starts_with("Space limit exceeded") {
        Flow::close(CLOSE_TOO_BIG, "message too big")
    } else {
        Flow::close(CLOSE_INTERNAL, "read error")
    }
}

/// Right after a frame was taken from `inbox`: `None` while the table
/// still holds the outbox, else whether it was full when the table let go.
fn released_full(inbox: &mpsc::Receiver<Utf8Bytes>) -> Option<bool> {
    inbox.is_closed().then(|| inbox.len() + 1 >= inbox.max_capacity())
}

/// `write` within `limit`: [`Flow::Gone`] when it fails, [`Flow::Stuck`]
/// when it does not complete in time.
async fn timed(limit: Duration, write: impl Future<Output = Result<(), axum::Error>>) -> Result<(), Flow> {
    match tokio::time::timeout(limit, write).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => {
            debug!(error = %e, "write failed");
            Err(Flow::Gone)
        }
        Err(_) => Err(Flow::Stuck),
    }
}

fn flow_of(result: Result<(), Flow>) -> Flow {
    result.err().unwrap_or(Flow::Continue)
}

impl Connection {
    fn new(id: ConnId, state: AppState) -> Connection {
        let (outbox, inbox) = mpsc::channel(state.config.limits.outbox_frames);
        let write_timeout = Duration::from_secs(state.config.limits.write_timeout_secs);
        Connection {
            id,
            state,
            outbox,
            inbox,
            table: None,
            window: (Instant::now(), 0),
            released_full: None,
            write_timeout,
            chat: crate::chat::ChatLimiter::default(),
            heartbeats: false,
            pinged: None,
            last_seq: 0,
        }
    }

    async fn run(mut self, mut socket: WebSocket) {
        debug!("connected");
        let flow = self.serve(&mut socket).await;
        let reason = flow.reason();
        crate::metrics::disconnect(reason);
        match &flow {
            Flow::Stuck => debug!("writes did not complete in time: dropped"),
            Flow::Close(code, why) => {
                debug!(code, reason = %why, "closing");
                let close =
                    Message::Close(Some(CloseFrame { code: *code, reason: Utf8Bytes::from(why.as_ref()) }));
                let limit = self.write_timeout.min(CLOSE_WRITE_LIMIT);
                let _ = tokio::time::timeout(limit, socket.send(close)).await;
            }
            Flow::Continue | Flow::Gone => {}
        }
        if let Some((table, _)) = self.table.take()
            && !table.try_send(TableCommand::Detach { conn: self.id })
        {
            // The table's queue is full: detach without holding up the close.
            tokio::spawn(async move {
                let _ = table.send(TableCommand::Detach { conn: self.id }).await;
            });
        }
        debug!(reason, "disconnected");
    }

    /// The connection's life, until the reason it ends.
    async fn serve(&mut self, socket: &mut WebSocket) -> Flow {
        let hello = ServerMessage::Hello {
            protocol: PROTOCOL_VERSION,
            server: concat!("spades-server/", env!("CARGO_PKG_VERSION")).into(),
            server_time: now_ms(),
        };
        if let Flow::Gone | Flow::Stuck = self.reply(socket, &hello).await {
            return Flow::Gone;
        }
        let limits = &self.state.config.limits;
        let interval = Duration::from_secs(limits.ping_interval_secs);
        let attach_secs = limits.attach_timeout_secs;
        let mut ping = tokio::time::interval_at(Instant::now() + interval, interval);
        let attach_by = tokio::time::sleep(Duration::from_secs(attach_secs));
        tokio::pin!(attach_by);
        let mut last_heard = Instant::now();
        // Once the client sends `ping` frames it is held to them: silence
        // then means a stalled network, seen in seconds.
        let silence = Duration::from_secs(limits.heartbeat_silence_secs);
        let heartbeat = tokio::time::sleep(silence);
        tokio::pin!(heartbeat);
        let mut heartbeat_from = None;
        // Made once: a new one per frame would join and leave the shutdown
        // token's waiter list (a lock every connection shares) each time.
        let shutdown = self.state.shutdown.clone().cancelled_owned();
        tokio::pin!(shutdown);
        loop {
            let flow = tokio::select! {
                () = &mut shutdown => Flow::going_away(),
                () = &mut attach_by, if self.table.is_none() => {
                    Flow::Close(CLOSE_UNATTACHED, Cow::Owned(format!("attach to a table within {attach_secs} s")))
                }
                frame = self.inbox.recv(), if self.table.is_some() => match frame {
                    Some(frame) => {
                        self.note_release();
                        flow_of(timed(self.write_timeout, self.write_batch(socket, frame)).await)
                    }
                    None => self.released(),
                },
                () = &mut heartbeat, if self.heartbeats && !silence.is_zero() => {
                    Flow::close(CLOSE_SILENT, "no frame since the last heartbeat")
                }
                msg = socket.recv() => {
                    last_heard = Instant::now();
                    match msg {
                        Some(Ok(Message::Text(text))) => {
                            let allowed = self.within_rate();
                            self.on_text(socket, text.as_str(), allowed).await
                        }
                        Some(Ok(Message::Binary(_))) => {
                            let err = if self.within_rate() {
                                error(None, ErrorCode::BadMessage, "binary frames are not part of the protocol: send JSON text")
                            } else {
                                crate::metrics::rate_limited("messages");
                                error(None, ErrorCode::RateLimited, "too many messages: slow down")
                            };
                            self.reply(socket, &err).await
                        }
                        // Pings count too (tungstenite answers them).
                        Some(Ok(Message::Ping(_))) => {
                            if !self.within_rate() {
                                crate::metrics::rate_limited("messages");
                            }
                            Flow::Continue
                        }
                        Some(Ok(Message::Pong(_))) => Flow::Continue,
                        Some(Ok(Message::Close(_))) | None => Flow::Gone,
                        Some(Err(e)) => {
                            debug!(error = %e, "read error");
                            read_error_flow(&e)
                        }
                    }
                }
                _ = ping.tick() => {
                    if last_heard.elapsed() > interval * 3 {
                        Flow::close(CLOSE_SILENT, "no answer to pings")
                    } else {
                        flow_of(timed(self.write_timeout, socket.send(Message::Ping(axum::body::Bytes::new()))).await)
                    }
                }
            };
            if !matches!(flow, Flow::Continue) {
                return flow;
            }
            if self.heartbeats && heartbeat_from != Some(last_heard) {
                heartbeat_from = Some(last_heard);
                heartbeat.as_mut().reset(last_heard + self.heartbeat_limit(silence));
            }
        }
    }

    /// How long a heartbeating client may be silent: three of its own ping
    /// intervals, at least `least`, at most a minute.
    fn heartbeat_limit(&self, least: Duration) -> Duration {
        let gap = self.pinged.map_or(Duration::ZERO, |(_, gap)| gap);
        (gap * 3).clamp(least, Duration::from_secs(60).max(least))
    }

    /// Notes, the first time the table is seen to have let go of the
    /// outbox, whether the outbox was full then. Called after every frame
    /// taken from it: the table only adds frames while it holds the outbox,
    /// so the frames still queued at that first sight (plus the one just
    /// taken) are those it held when it let go.
    fn note_release(&mut self) {
        if self.released_full.is_none() {
            self.released_full = released_full(&self.inbox);
        }
    }

    /// The table let go of the outbox and every frame in it was written:
    /// why, and how to close.
    fn released(&self) -> Flow {
        if self.state.shutdown.is_cancelled() {
            Flow::going_away()
        } else if self.table.as_ref().is_some_and(|(t, _)| t.stopped()) {
            // Told to stop (its lease lost or handed over): the table goes on
            // elsewhere. Checked before the task has quite ended, too.
            Flow::close(CLOSE_TABLE_MOVED, "the table moved to another server: reconnect and resume")
        } else if self.table.as_ref().is_some_and(|(t, _)| t.is_closed()) {
            Flow::close(CLOSE_TABLE_CLOSED, "the table closed")
        } else if self.released_full == Some(true) {
            Flow::close(CLOSE_TOO_SLOW, "too slow: resume with your seat token")
        } else {
            Flow::close(CLOSE_NORMAL, "the table let go of this connection")
        }
    }

    /// Writes `first` and whatever else is already waiting in the outbox
    /// (up to [`WRITE_BATCH`] frames) with as few system calls as the write
    /// buffer allows, then flushes.
    async fn write_batch(&mut self, socket: &mut WebSocket, first: Utf8Bytes) -> Result<(), axum::Error> {
        if self.in_order(&first) {
            socket.feed(Message::Text(first)).await?;
        }
        for _ in 1..WRITE_BATCH {
            match self.inbox.try_recv() {
                Ok(frame) => {
                    self.note_release();
                    if self.in_order(&frame) {
                        socket.feed(Message::Text(frame)).await?;
                    }
                }
                Err(_) => break,
            }
        }
        socket.flush().await
    }

    /// True unless `frame` would take the connection's `seq` back: a change
    /// not above the last frame's `seq`, or a snapshot below it (a frame of
    /// an owner the table has moved on from, arriving late). `seq` never
    /// goes back on a connection, whatever reaches its outbox.
    fn in_order(&mut self, frame: &str) -> bool {
        let Some((snapshot, seq)) = frame_seq(frame) else { return true };
        let fresh = if snapshot { seq >= self.last_seq } else { seq > self.last_seq };
        if fresh {
            self.last_seq = seq;
        } else {
            debug!(seq, last = self.last_seq, "dropped a frame of an earlier owner");
        }
        fresh
    }

    /// Sends one message within the write timeout.
    async fn reply(&self, socket: &mut WebSocket, msg: &ServerMessage) -> Flow {
        let text = match serde_json::to_string(msg) {
            Ok(text) => text,
            Err(_) => return Flow::close(CLOSE_INTERNAL, "could not encode a message"),
        };
        flow_of(timed(self.write_timeout, socket.send(Message::Text(Utf8Bytes::from(text)))).await)
    }

    /// Counts a frame against the per-connection rate; true when allowed.
    fn within_rate(&mut self) -> bool {
        let now = Instant::now();
        if now.duration_since(self.window.0) >= Duration::from_secs(10) {
            self.window = (now, 0);
        }
        self.window.1 = self.window.1.saturating_add(1);
        self.window.1 <= self.state.config.limits.messages_per_10s
    }

    /// `cmd` to the table, unless the server shuts down first: `None` when
    /// it was sent, else how to close.
    async fn to_table(&self, table: &TableHandle, cmd: TableCommand) -> Option<Flow> {
        let shutdown = self.state.shutdown.clone();
        tokio::select! {
            sent = table.send(cmd) => match sent {
                Ok(()) => None,
                Err(_) if shutdown.is_cancelled() => Some(Flow::going_away()),
                Err(_) => Some(Flow::close(CLOSE_TABLE_CLOSED, "the table closed")),
            },
            () = shutdown.cancelled() => Some(Flow::going_away()),
        }
    }

    /// A text frame; `allowed` is whether it was within the message rate
    /// (every frame counts, oversized and unreadable ones too).
    async fn on_text(&mut self, socket: &mut WebSocket, text: &str, allowed: bool) -> Flow {
        let max = self.state.config.limits.max_frame_bytes;
        if text.len() > max {
            if !allowed {
                crate::metrics::rate_limited("messages");
                return self
                    .reply(socket, &error(None, ErrorCode::RateLimited, "too many messages: slow down"))
                    .await;
            }
            let message = format!("frames are limited to {max} bytes");
            return self.reply(socket, &error(None, ErrorCode::FrameTooLarge, &message)).await;
        }
        // Every refusal echoes the request id when it can be read.
        let frame = read_frame(text);
        if !allowed {
            crate::metrics::rate_limited("messages");
            let req = frame.as_ref().map_or_else(|r| r.req, |f| f.req);
            return self
                .reply(socket, &error(req, ErrorCode::RateLimited, "too many messages: slow down"))
                .await;
        }
        let frame = match frame {
            Ok(f) => f,
            Err(refusal) => {
                let Refusal { req, mut code, mut message } = refusal;
                if code == ErrorCode::BidOutOfRange && self.table.is_none() {
                    code = ErrorCode::NotAttached;
                    message = "join, resume or watch a table first".to_owned();
                }
                return self.reply(socket, &error(req, code, &message)).await;
            }
        };
        let req = frame.req;
        let act = match frame.msg {
            ClientMessage::Ping => {
                // From its second ping on, the client's own pace is known.
                let now = Instant::now();
                if let Some((at, _)) = self.pinged {
                    self.heartbeats = true;
                    self.pinged = Some((now, now.duration_since(at)));
                } else {
                    self.pinged = Some((now, Duration::ZERO));
                }
                return self.reply(socket, &ServerMessage::Pong { req }).await;
            }
            ClientMessage::Join { protocol, .. }
            | ClientMessage::Resume { protocol, .. }
            | ClientMessage::Watch { protocol, .. }
                if protocol != Some(PROTOCOL_VERSION) =>
            {
                let message = format!(
                    "this server speaks protocol {PROTOCOL_VERSION}: send \"protocol\":{PROTOCOL_VERSION} \
                     with join, resume or watch (see docs/protocol.md)"
                );
                return self.reply(socket, &error(req, ErrorCode::UnsupportedProtocol, &message)).await;
            }
            ClientMessage::Join { table, name, seat, invite, .. } => {
                let Some(name) = clean_name(&name, 24) else {
                    let err = error(
                        req,
                        ErrorCode::InvalidName,
                        "names are 1 to 24 characters, without control or invisible characters",
                    );
                    return self.reply(socket, &err).await;
                };
                return self.attach(socket, req, table, Attach::Join { name, seat, invite }).await;
            }
            ClientMessage::Resume { table, token, .. } => {
                return self.attach(socket, req, table, Attach::Resume { token }).await;
            }
            ClientMessage::Watch { table, .. } => {
                return self.attach(socket, req, table, Attach::Watch).await;
            }
            ClientMessage::Start { owner_token } => Act::Start { owner_token },
            ClientMessage::AddBots { owner_token } => Act::AddBots { owner_token },
            ClientMessage::RemoveBot { owner_token, seat } => Act::RemoveBot { owner_token, seat },
            ClientMessage::MoveSeat { owner_token, from, to } => Act::MoveSeat { owner_token, from, to },
            ClientMessage::Invite { owner_token, seat } => Act::Invite { owner_token, seat },
            ClientMessage::Bid { bid, seq } => Act::Bid(bid, seq),
            ClientMessage::Play { card, seq } => Act::Play(card, seq),
            ClientMessage::TakeOver => Act::TakeOver,
            ClientMessage::Leave => Act::Leave,
            ClientMessage::Seed { seed } => Act::Seed(seed),
            ClientMessage::CommitSeed { commitment } => Act::CommitSeed(commitment),
            ClientMessage::Sync => Act::Sync,
            // Before attaching there is no seat to hold: nothing to do.
            ClientMessage::Closing if self.table.is_none() => {
                return self.reply(socket, &ServerMessage::Ack { req }).await;
            }
            ClientMessage::Closing => Act::Closing,
            ClientMessage::Chat { text } => match self.chat.admit(&text, Instant::now()) {
                Ok(text) => Act::Chat(text),
                Err(r) => return self.reply(socket, &error(req, r.code, &r.message)).await,
            },
            ClientMessage::Rematch { ready } => Act::Rematch(ready),
            ClientMessage::StartRematch { owner_token } => {
                let Some((table, _)) = self.table.clone() else {
                    let err = error(req, ErrorCode::NotAttached, "join, resume or watch a table first");
                    return self.reply(socket, &err).await;
                };
                self.state.hosting.start_rematch(&table, self.id, req, owner_token).await;
                return Flow::Continue;
            }
        };
        let Some((table, _)) = &self.table else {
            let err = error(req, ErrorCode::NotAttached, "join, resume or watch a table first");
            return self.reply(socket, &err).await;
        };
        let table = table.clone();
        if matches!(act, Act::Chat(_)) {
            // Chat never waits for room in the table's queue.
            if !table.try_send(TableCommand::Act { conn: self.id, req, act, resent: false }) {
                let err = error(req, ErrorCode::Capacity, "the table is busy: the message was not sent");
                return self.reply(socket, &err).await;
            }
            return Flow::Continue;
        }
        self.to_table(&table, TableCommand::Act { conn: self.id, req, act, resent: false })
            .await
            .unwrap_or(Flow::Continue)
    }

    async fn attach(
        &mut self,
        socket: &mut WebSocket,
        req: Option<u32>,
        table: uuid::Uuid,
        how: Attach,
    ) -> Flow {
        if self.table.is_some() {
            let err =
                error(req, ErrorCode::AlreadyAttached, "this connection is already at a table: open another");
            return self.reply(socket, &err).await;
        }
        // A table (or relay) that stops with the request in its queue drops
        // it unanswered: it is asked again where the table runs now.
        let mut tries = 0;
        let (handle, answer) = loop {
            tries += 1;
            let Some(handle) = self.state.tables.lookup(table).await else {
                return self.reply(socket, &error(req, ErrorCode::TableNotFound, "no such table")).await;
            };
            let (tx, rx) = oneshot::channel();
            let cmd = TableCommand::Attach {
                conn: self.id,
                outbox: self.outbox.clone(),
                how: how.clone(),
                req,
                quiet: false,
                reply: tx,
            };
            match self.to_table(&handle, cmd).await {
                None => {}
                Some(Flow::Close(CLOSE_TABLE_CLOSED, _)) if handle.stopped() && tries < ATTACH_TRIES => {
                    tokio::time::sleep(ATTACH_RETRY).await;
                    continue;
                }
                Some(Flow::Close(CLOSE_TABLE_CLOSED, _)) => {
                    return self.reply(socket, &error(req, ErrorCode::TableNotFound, "no such table")).await;
                }
                Some(flow) => return flow,
            }
            let shutdown = self.state.shutdown.clone();
            let answer = tokio::select! {
                answer = rx => answer,
                () = shutdown.cancelled() => return Flow::going_away(),
            };
            if answer.is_err() && !self.state.shutdown.is_cancelled() && tries < ATTACH_TRIES {
                tokio::time::sleep(ATTACH_RETRY).await;
                continue;
            }
            break (handle, answer);
        };
        match answer {
            Ok(Some(attached)) => {
                let role = attached.role;
                let span = tracing::Span::current();
                span.record("table_id", tracing::field::display(table));
                if let Some(seat) = match role {
                    Role::Seat(s) | Role::Left(s) => Some(s),
                    Role::Spectator => None,
                } {
                    span.record("seat", tracing::field::display(seat));
                }
                self.table = Some((handle, role));
                // From now on only the table holds the sending side, so a
                // closed outbox means the table let go of this connection.
                let (dead, _) = mpsc::channel(1);
                self.outbox = dead;
            }
            Err(_) if self.state.shutdown.is_cancelled() => return Flow::going_away(),
            // Refused: the table queued the error frame in the outbox;
            // deliver it now, since the outbox is only read once attached.
            Ok(None) | Err(_) => {
                while let Ok(frame) = self.inbox.try_recv() {
                    if let Err(flow) = timed(self.write_timeout, socket.send(Message::Text(frame))).await {
                        return flow;
                    }
                }
            }
        }
        Flow::Continue
    }
}

/// Whether a server frame is a snapshot (`view`) or a change, and its
/// `seq`; `None` for every other frame. The frames are the server's own, so
/// the fixed start that serde writes is enough.
fn frame_seq(frame: &str) -> Option<(bool, u64)> {
    let (snapshot, rest) = if let Some(rest) = frame.strip_prefix(r#"{"type":"view","seq":"#) {
        (true, rest)
    } else {
        (false, frame.strip_prefix(r#"{"type":"change","seq":"#)?)
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    Some((snapshot, rest[..digits].parse().ok()?))
}

/// Why a text frame is not a [`ClientFrame`]: its request id when that
/// could be read, a code and a plain-English reason.
#[derive(Debug, PartialEq, Eq)]
struct Refusal {
    req: Option<u32>,
    code: ErrorCode,
    message: String,
}

/// The highest bid.
const MAX_BID: i64 = 13;

/// A field of a message: its name, whether it is required, and what it
/// must be.
type Field = (&'static str, bool, &'static str);

/// Each message type with its fields: name, whether it is required, and
/// what it must be (for the refusal).
const MESSAGE_FIELDS: &[(&str, &[Field])] = &[
    (
        "join",
        &[
            ("protocol", false, PROTOCOL),
            ("table", true, TABLE_ID),
            ("name", true, TEXT),
            ("seat", false, SEAT),
            ("invite", false, TEXT),
        ],
    ),
    ("resume", &[("protocol", false, PROTOCOL), ("table", true, TABLE_ID), ("token", true, TEXT)]),
    ("watch", &[("protocol", false, PROTOCOL), ("table", true, TABLE_ID)]),
    ("sync", &[]),
    ("start", &[("owner_token", true, TEXT)]),
    ("add_bots", &[("owner_token", true, TEXT)]),
    ("remove_bot", &[("owner_token", true, TEXT), ("seat", true, SEAT)]),
    ("move_seat", &[("owner_token", true, TEXT), ("from", true, SEAT), ("to", true, SEAT)]),
    ("invite", &[("owner_token", true, TEXT), ("seat", true, SEAT)]),
    ("bid", &[("bid", true, "a whole number from 0 to 13"), ("seq", false, SEQ)]),
    (
        "play",
        &[
            (
                "card",
                true,
                "a card such as \"QH\" or \"TS\": a rank 2-9, T, J, Q, K or A, then a suit C, D, H or S",
            ),
            ("seq", false, SEQ),
        ],
    ),
    ("seed", &[("seed", true, "64 hexadecimal digits (32 random bytes)")]),
    ("commit_seed", &[("commitment", true, "64 hexadecimal digits (a SHA-256)")]),
    ("take_over", &[]),
    ("leave", &[]),
    ("closing", &[]),
    ("ping", &[]),
    ("chat", &[("text", true, TEXT)]),
    ("rematch", &[("ready", false, "true or false")]),
    ("start_rematch", &[("owner_token", true, TEXT)]),
];
const PROTOCOL: &str = "the protocol version, a whole number (this server speaks 2)";
const TABLE_ID: &str = "a table id (a UUID such as \"67e55044-10b1-426f-9247-bb680e5fe0c8\")";
const TEXT: &str = "a string";
const SEQ: &str = "the seq of the frame the move was chosen from, a whole number";
const SEAT: &str = "one of \"north\", \"east\", \"south\" or \"west\"";

/// A client's text quoted back in a refusal, without control characters
/// (the frame limit bounds its length).
fn quoted(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// Reads a client frame. The request id is read from the raw JSON first,
/// so a refusal echoes it even when the rest of the frame is wrong; a bid
/// number outside 0..=13, however large, negative or written (`1e9`), is
/// `bid_out_of_range`; every other problem is `bad_message` with a plain
/// sentence naming the field and what it must be.
fn read_frame(text: &str) -> Result<ClientFrame, Refusal> {
    use serde::Deserialize;
    use serde_json::Value;

    let bad = |req: Option<u32>, message: String| Refusal { req, code: ErrorCode::BadMessage, message };
    let mut value: Value = serde_json::from_str(text).map_err(|_| {
        bad(None, "this is not JSON: a message is a JSON object such as {\"type\":\"ping\"}".to_owned())
    })?;
    // A whole bid written as a float (`1e1`, `3.0`) is that bid.
    if let Some(bid) = value.get_mut("bid")
        && let Some(f) = bid.as_f64().filter(|f| bid.is_f64() && f.fract() == 0.0 && (0.0..=13.0).contains(f))
    {
        // In range and whole, so the conversion is exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let whole = f as u64;
        *bid = Value::from(whole);
    }
    // `protocol` is a number: 2 (or 2.0) is the one spoken; any other
    // number is a version this server does not speak (`unsupported_protocol`,
    // as for none), not a malformed frame.
    if let Some(protocol) = value.get_mut("protocol")
        && let Some(n) = protocol.as_f64()
    {
        *protocol = Value::from(if n == f64::from(PROTOCOL_VERSION) { PROTOCOL_VERSION } else { 0 });
    }
    let Value::Object(fields) = &value else {
        return Err(bad(
            None,
            "a message is a JSON object with a \"type\", such as {\"type\":\"ping\"}".to_owned(),
        ));
    };
    let req = match fields.get("req") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
            Some(n) => Some(n),
            None => {
                return Err(bad(None, format!("\"req\" must be a whole number from 0 to {}", u32::MAX)));
            }
        },
    };
    let types = || MESSAGE_FIELDS.iter().map(|(t, _)| *t).collect::<Vec<_>>().join(", ");
    let kind = match fields.get("type") {
        None => return Err(bad(req, format!("the message has no \"type\": it is one of {}", types()))),
        Some(Value::String(kind)) => kind.as_str(),
        Some(_) => return Err(bad(req, format!("\"type\" must be a string, one of {}", types()))),
    };
    let Some((kind, expected)) = MESSAGE_FIELDS.iter().find(|(t, _)| *t == kind) else {
        return Err(bad(req, format!("unknown message type \"{}\": it is one of {}", quoted(kind), types())));
    };
    if *kind == "bid"
        && let Some(Value::Number(n)) = fields.get("bid")
        && let Some(out) = bid_out_of_range(n)
    {
        return Err(Refusal { req, code: ErrorCode::BidOutOfRange, message: out });
    }
    for (field, required, what) in *expected {
        let ok = match fields.get(*field) {
            None => !required,
            Some(v) => match *field {
                "table" => uuid::Uuid::deserialize(v).is_ok(),
                "seat" | "from" | "to" if *required => spades_engine::Seat::deserialize(v).is_ok(),
                "seat" => Option::<spades_engine::Seat>::deserialize(v).is_ok(),
                "seq" => u64::deserialize(v).is_ok(),
                "bid" => u8::deserialize(v).is_ok(),
                "card" => spades_engine::Card::deserialize(v).is_ok(),
                "seed" => spades_engine::ClientSeed::deserialize(v).is_ok(),
                "commitment" => spades_engine::Commitment::deserialize(v).is_ok(),
                "ready" => v.is_boolean(),
                "protocol" => Option::<u32>::deserialize(v).is_ok(),
                _ => v.is_string(),
            },
        };
        if !ok {
            let message = if fields.contains_key(*field) {
                format!("\"{field}\" must be {what}")
            } else {
                format!("\"{field}\" is missing: {kind} needs a \"{field}\", {what}")
            };
            return Err(bad(req, message));
        }
    }
    ClientFrame::deserialize(&value).map_err(|_| bad(req, "the message could not be read".to_owned()))
}

/// The refusal of a bid number outside 0..=13; `None` for a bid in range
/// and for a number that is not whole (that is `bad_message`).
fn bid_out_of_range(n: &serde_json::Number) -> Option<String> {
    let shown = if let Some(i) = n.as_i64() {
        if (0..=MAX_BID).contains(&i) {
            return None;
        }
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        let f = n.as_f64()?;
        if f.fract() != 0.0 {
            return None;
        }
        if (0.0..=13.0).contains(&f) {
            return None;
        }
        if f.abs() < 1e15 { format!("{f:.0}") } else { format!("{f:e}") }
    };
    Some(format!("bid must be from 0 to 13 (got {shown})"))
}

fn error(req: Option<u32>, code: ErrorCode, message: &str) -> ServerMessage {
    crate::metrics::error(code);
    ServerMessage::Error { req, code, message: message.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> Refusal {
        match read_frame(text) {
            Ok(frame) => panic!("{text} was read as {frame:?}"),
            Err(r) => r,
        }
    }

    /// Words of Rust and serde that must never reach a client.
    fn assert_plain(message: &str) {
        for word in [
            "u8",
            "u32",
            "i64",
            "usize",
            "struct",
            "enum",
            "ClientFrame",
            "ClientMessage",
            "invalid type",
            "invalid value",
            "variant",
            "line 1",
            "column",
        ] {
            assert!(!message.contains(word), "{message:?} says {word:?}");
        }
    }

    #[test]
    fn good_frames_are_read() {
        let f = read_frame(r#"{"type":"bid","bid":13,"req":4}"#).unwrap();
        assert_eq!(f, ClientFrame { req: Some(4), msg: ClientMessage::Bid { bid: 13, seq: None } });
        let f = read_frame(r#"{"type":"closing"}"#).unwrap();
        assert_eq!(f, ClientFrame { req: None, msg: ClientMessage::Closing });
        let t = "67e55044-10b1-426f-9247-bb680e5fe0c8";
        let f = read_frame(&format!(r#"{{"type":"join","table":"{t}","name":"Ann","seat":"west","req":1}}"#))
            .unwrap();
        assert!(matches!(f.msg, ClientMessage::Join { seat: Some(spades_engine::Seat::West), .. }));
        let f = read_frame(&format!(r#"{{"type":"join","table":"{t}","name":"Ann","seat":null}}"#)).unwrap();
        assert!(matches!(f.msg, ClientMessage::Join { seat: None, .. }));
    }

    #[test]
    fn chat_and_rematch_frames_are_read() {
        let f = read_frame(r#"{"type":"chat","text":"Nice nil!","req":2}"#).unwrap();
        assert_eq!(f, ClientFrame { req: Some(2), msg: ClientMessage::Chat { text: "Nice nil!".into() } });
        let f = read_frame(r#"{"type":"rematch"}"#).unwrap();
        assert_eq!(f.msg, ClientMessage::Rematch { ready: true });
        let f = read_frame(r#"{"type":"rematch","ready":false}"#).unwrap();
        assert_eq!(f.msg, ClientMessage::Rematch { ready: false });
        let f = read_frame(r#"{"type":"start_rematch","owner_token":"x"}"#).unwrap();
        assert_eq!(f.msg, ClientMessage::StartRematch { owner_token: "x".into() });
        for (text, starts) in [
            (r#"{"type":"chat","req":5}"#, "\"text\" is missing"),
            (r#"{"type":"chat","text":7,"req":5}"#, "\"text\" must be a string"),
            (r#"{"type":"rematch","ready":"yes","req":5}"#, "\"ready\" must be true or false"),
            (r#"{"type":"start_rematch","req":5}"#, "\"owner_token\" is missing"),
        ] {
            let r = refused(text);
            assert_eq!((r.req, r.code), (Some(5), ErrorCode::BadMessage), "{text}");
            assert!(r.message.starts_with(starts), "{text}: {}", r.message);
        }
    }

    #[test]
    fn refusals_echo_req_whenever_it_can_be_read() {
        for text in [
            r#"{"req":7}"#,
            r#"{"req":7,"type":5}"#,
            r#"{"req":7,"type":"fly"}"#,
            r#"{"req":7,"type":"play","card":"ZZ"}"#,
            r#"{"req":7,"type":"play"}"#,
            r#"{"req":7,"type":"join","table":"nope","name":"Ann"}"#,
            r#"{"req":7,"type":"join","table":"67e55044-10b1-426f-9247-bb680e5fe0c8","name":3}"#,
            r#"{"req":7,"type":"join","table":"67e55044-10b1-426f-9247-bb680e5fe0c8","name":"A","seat":"up"}"#,
            r#"{"req":7,"type":"bid","bid":"three"}"#,
            r#"{"req":7,"type":"bid","bid":2.5}"#,
            r#"{"req":7,"type":"start","owner_token":[]}"#,
        ] {
            let r = refused(text);
            assert_eq!((r.req, r.code), (Some(7), ErrorCode::BadMessage), "{text}: {r:?}");
            assert_plain(&r.message);
        }
        // No readable req: not JSON, not an object, or a req that is not a u32.
        for text in [
            "nope",
            "[1]",
            "null",
            r#"{"type":"ping","req":-1}"#,
            r#"{"type":"ping","req":"7"}"#,
            r#"{"type":"ping","req":4294967296}"#,
        ] {
            let r = refused(text);
            assert_eq!((r.req, r.code), (None, ErrorCode::BadMessage), "{text}");
            assert_plain(&r.message);
        }
    }

    #[test]
    fn refusals_say_what_is_wrong_in_plain_words() {
        assert_eq!(
            refused(r#"{"type":"fly"}"#).message.split(':').next(),
            Some("unknown message type \"fly\"")
        );
        assert!(refused(r#"{"type":"play"}"#).message.starts_with("\"card\" is missing"));
        assert!(refused(r#"{"type":"play","card":"ZZ"}"#).message.starts_with("\"card\" must be a card"));
        assert!(refused(r#"{"type":"watch","table":1}"#).message.starts_with("\"table\" must be a table id"));
        assert!(refused(r#"{"type":"ping","req":-1}"#).message.starts_with("\"req\" must be a whole number"));
        assert!(refused(r#"{}"#).message.starts_with("the message has no \"type\""));
        assert!(refused(r#"{"type":"fl\u0007y"}"#).message.starts_with("unknown message type \"fly\""));
    }

    #[test]
    fn bids_outside_the_range_of_any_size_are_out_of_range() {
        for (bid, shown) in [
            ("14", "14"),
            ("255", "255"),
            ("256", "256"),
            ("1000", "1000"),
            ("-1", "-1"),
            ("1e9", "1000000000"),
            ("18446744073709551616", "1.8446744073709552e19"),
            ("-1e300", "-1e300"),
            ("13.0e1", "130"),
        ] {
            let r = refused(&format!(r#"{{"type":"bid","bid":{bid},"req":3}}"#));
            assert_eq!((r.req, r.code), (Some(3), ErrorCode::BidOutOfRange), "{bid}");
            assert_eq!(r.message, format!("bid must be from 0 to 13 (got {shown})"), "{bid}");
        }
        for bid in ["0", "13", "1e1", "0.0"] {
            let f = read_frame(&format!(r#"{{"type":"bid","bid":{bid}}}"#));
            assert!(f.is_ok(), "{bid}: {f:?}");
        }
    }

    #[derive(Debug)]
    struct Said(&'static str);

    impl std::fmt::Display for Said {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Said {}

    fn code_of(e: axum::Error) -> Option<u16> {
        match read_error_flow(&e) {
            Flow::Close(code, _) => Some(code),
            Flow::Gone => None,
            Flow::Continue | Flow::Stuck => Some(0),
        }
    }

    #[test]
    fn read_errors_map_to_close_codes() {
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer");
        assert_eq!(code_of(axum::Error::new(reset)), None, "a reset is an ordinary disconnect");
        let gone = "WebSocket protocol error: Connection reset without closing handshake";
        assert_eq!(code_of(axum::Error::new(Said(gone))), None);
        let masked = "WebSocket protocol error: Received an unmasked frame from client";
        assert_eq!(code_of(axum::Error::new(Said(masked))), Some(CLOSE_PROTOCOL_ERROR));
        assert_eq!(code_of(axum::Error::new(Said("UTF-8 encoding error: bad"))), Some(CLOSE_INVALID_DATA));
        let big = "Space limit exceeded: Message too long: 70000 > 65536";
        assert_eq!(code_of(axum::Error::new(Said(big))), Some(CLOSE_TOO_BIG));
        assert_eq!(code_of(axum::Error::new(Said("something else"))), Some(CLOSE_INTERNAL));
        assert_eq!(Flow::Stuck.reason(), "too_slow");
        assert_eq!(Flow::Gone.reason(), "closed");
        assert_eq!(Flow::close(CLOSE_PROTOCOL_ERROR, "x").reason(), "protocol");
    }

    #[test]
    fn frames_are_read_for_their_seq() {
        assert_eq!(frame_seq(r#"{"type":"view","seq":4294967297,"view":{}}"#), Some((true, 4_294_967_297)));
        assert_eq!(frame_seq(r#"{"type":"change","seq":12,"server_time":1}"#), Some((false, 12)));
        assert_eq!(frame_seq(r#"{"type":"ack","req":1}"#), None);
        assert_eq!(frame_seq(r#"{"type":"chat","id":3}"#), None);
    }

    #[test]
    fn only_a_full_outbox_counts_as_too_slow() {
        // The table let go of a full outbox.
        let (tx, mut rx) = mpsc::channel(4);
        for _ in 0..4 {
            tx.try_send(Utf8Bytes::from_static("v")).unwrap();
        }
        assert!(tx.try_send(Utf8Bytes::from_static("v")).is_err());
        assert_eq!(released_full(&rx), None, "still held");
        drop(tx);
        rx.try_recv().unwrap();
        assert_eq!(released_full(&rx), Some(true));
        // The table let go of an outbox with room to spare.
        let (tx, mut rx) = mpsc::channel(4);
        tx.try_send(Utf8Bytes::from_static("v")).unwrap();
        tx.try_send(Utf8Bytes::from_static("v")).unwrap();
        rx.try_recv().unwrap();
        assert_eq!(released_full(&rx), None);
        drop(tx);
        rx.try_recv().unwrap();
        assert_eq!(released_full(&rx), Some(false));
    }
}
