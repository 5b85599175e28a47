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
use spades_protocol::{ClientFrame, ClientMessage, ErrorCode, PROTOCOL_VERSION, Refusal, ServerMessage};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tracing::{Instrument, debug, info_span};

use crate::accounts::SignedIn;
use crate::boundary::{BrowserOrigin, Connecting, signed_if_any};
use crate::error::AppError;
use crate::state::AppState;
use crate::table::{Act, Attach, ConnId, Frame, Role, TableCommand, TableHandle};
use crate::text::{PLAYER_NAME_MAX, clean_name};
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
/// Close code: the connection's session was signed out or expired.
pub const CLOSE_SIGNED_OUT: u16 = 4005;
/// Close code: the connection's account was suspended or banned (an
/// `error` frame, `suspended` or `banned`, says until when and why just
/// before).
pub const CLOSE_BARRED: u16 = 4006;
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
    // The session, looked up once for the connection's life.
    let signed = match signed_if_any(&state, &headers).await {
        Ok(signed) => signed,
        Err(e) => return e.into_response(),
    };
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
                    Connection::new(id, state, signed).run(socket).await;
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
    outbox: mpsc::Sender<Frame>,
    inbox: mpsc::Receiver<Frame>,
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
    /// The account and session the connection was opened with, looked up
    /// once at the upgrade.
    signed: Option<SignedIn>,
    /// Cancelled when an account the connection plays as is suspended or
    /// banned.
    barred: tokio_util::sync::CancellationToken,
    /// The hold on the account whose seat the connection resumed with the
    /// seat's token, when it is not the one signed in.
    seat: Option<crate::moderation::AccountWatch>,
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
            Flow::Close(CLOSE_SIGNED_OUT, _) => "signed_out",
            Flow::Close(CLOSE_BARRED, _) => "barred",
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
fn released_full(inbox: &mpsc::Receiver<Frame>) -> Option<bool> {
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
    fn new(id: ConnId, state: AppState, signed: Option<SignedIn>) -> Connection {
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
            signed,
            barred: tokio_util::sync::CancellationToken::new(),
            seat: None,
        }
    }

    /// What the table is asked: a connection opened with a session sits
    /// as its account (under its name) and resumes its seat without a
    /// token; one without needs a name to join and a token to resume.
    fn attach_of(&self, req: Option<u32>, ask: Ask) -> Result<Attach, ServerMessage> {
        match (ask, &self.signed) {
            (Ask::Watch, signed) => Ok(Attach::Watch { account: signed.as_ref().map(|s| s.account.id) }),
            (Ask::Resume { token: Some(token) }, signed) => {
                Ok(Attach::Resume { token, account: signed.as_ref().map(|s| s.account.id) })
            }
            (Ask::Resume { token: None }, Some(signed)) => Ok(Attach::Reclaim { account: signed.account.id }),
            (Ask::Resume { token: None }, None) => Err(error(
                req,
                ErrorCode::InvalidToken,
                "resume needs the seat token, or a connection opened with a session of the seat's account",
            )),
            (Ask::Join { seat, invite, .. }, Some(signed)) => Ok(Attach::Join {
                name: signed.account.name.clone(),
                seat,
                invite,
                account: Some(signed.account.id),
            }),
            (Ask::Join { name, seat, invite }, None) => {
                match name.as_deref().and_then(|n| clean_name(n, PLAYER_NAME_MAX)) {
                    Some(name) => Ok(Attach::Join { name, seat, invite, account: None }),
                    None => Err(error(
                        req,
                        ErrorCode::InvalidName,
                        if name.is_some() {
                            "names are 1 to 24 characters, without control or invisible characters"
                        } else {
                            "a name is needed to join without signing in"
                        },
                    )),
                }
            }
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
        // Signed out or run out: the connection closes.
        let watch =
            self.signed.as_ref().map(|s| self.state.accounts.watch(s.session.id, s.session.expires_at_ms));
        let session_ended = async {
            match &watch {
                Some(watch) => watch.ended().cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(session_ended);
        // Suspended or banned (the account signed in, or the one whose seat
        // the connection resumed): the connection is told why and closes.
        let _account = self.signed.as_ref().map(|s| self.state.moderation.watch(s.account.id, &self.barred));
        let barred = self.barred.clone().cancelled_owned();
        tokio::pin!(barred);
        loop {
            let flow = tokio::select! {
                () = &mut shutdown => Flow::going_away(),
                () = &mut session_ended => Flow::close(CLOSE_SIGNED_OUT, "signed out: the session ended"),
                () = &mut barred => self.barred(socket).await,
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

    /// The account was suspended or banned: an `error` frame says until
    /// when and why, then the connection closes.
    async fn barred(&self, socket: &mut WebSocket) -> Flow {
        let said = match self.may_play().await {
            Err(refusal) => refusal,
            // Lifted at once, or unreadable: closed all the same, and a
            // new connection finds out.
            Ok(()) => AppError::new(
                ErrorCode::Suspended,
                "your account was suspended: connect again to see whether it still is",
            ),
        };
        if let Flow::Gone | Flow::Stuck = self.reply(socket, &error(None, said.code, &said.message)).await {
            return Flow::Gone;
        }
        let why = if said.code == ErrorCode::Banned { "account banned" } else { "account suspended" };
        Flow::close(CLOSE_BARRED, why)
    }

    /// The accounts this connection plays as: the one signed in, and the
    /// one whose seat it resumed with the seat's token.
    fn accounts(&self) -> impl Iterator<Item = uuid::Uuid> {
        self.signed
            .as_ref()
            .map(|s| s.account.id)
            .into_iter()
            .chain(self.seat.as_ref().map(crate::moderation::AccountWatch::account))
    }

    /// Refused (`suspended`, `banned`) when an account this connection
    /// plays as may not play now.
    async fn may_play(&self) -> Result<(), AppError> {
        for account in self.accounts() {
            self.state.moderation.may_play(account).await?;
        }
        Ok(())
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
    async fn write_batch(&mut self, socket: &mut WebSocket, first: Frame) -> Result<(), axum::Error> {
        if self.in_order(&first) {
            socket.feed(Message::Text(first.text)).await?;
        }
        for _ in 1..WRITE_BATCH {
            match self.inbox.try_recv() {
                Ok(frame) => {
                    self.note_release();
                    if self.in_order(&frame) {
                        socket.feed(Message::Text(frame.text)).await?;
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
    fn in_order(&mut self, frame: &Frame) -> bool {
        let fresh = frame.order.follows(&mut self.last_seq);
        if !fresh {
            debug!(order = ?frame.order, last = self.last_seq, "dropped a frame of an earlier owner");
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
        let frame = ClientFrame::read(text);
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
        let act = match Route::of(frame.msg) {
            Route::Ping => {
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
            Route::Attach { protocol, .. } if protocol != Some(PROTOCOL_VERSION) => {
                let message = format!(
                    "this server speaks protocol {PROTOCOL_VERSION}: send \"protocol\":{PROTOCOL_VERSION} \
                     with join, resume or watch (see docs/protocol.md)"
                );
                return self.reply(socket, &error(req, ErrorCode::UnsupportedProtocol, &message)).await;
            }
            Route::Attach { table, ask, .. } => match self.attach_of(req, ask) {
                Ok(how) => return self.attach(socket, req, table, how).await,
                Err(err) => return self.reply(socket, &err).await,
            },
            // Before attaching there is no seat to hold: nothing to do.
            Route::Table(Act::Closing) if self.table.is_none() => {
                return self.reply(socket, &ServerMessage::Ack { req }).await;
            }
            Route::Table(Act::Chat { text }) => match self.chat.admit(&text, Instant::now()) {
                Ok(text) => {
                    // Muted, suspended or banned: read from the store at
                    // every message, so a mute holds at once on every node.
                    for account in self.accounts() {
                        if let Err(e) = self.state.moderation.may_chat(account).await {
                            return self.reply(socket, &error(req, e.code, &e.message)).await;
                        }
                    }
                    Act::Chat { text }
                }
                Err(r) => return self.reply(socket, &error(req, r.code, &r.message)).await,
            },
            Route::Table(act) => act,
            Route::StartRematch { owner_token } => {
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
        if matches!(act, Act::Chat { .. }) {
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
        // A suspended or banned account may not sit or watch signed in.
        if let Err(e) = self.may_play().await {
            return self.reply(socket, &error(req, e.code, &e.message)).await;
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
                // A seat an account holds, resumed with its token by a
                // connection that is not signed in as that account: held to
                // that account's sanctions too (checked now, and closed
                // when it is suspended or banned).
                if let Some(account) = attached.account
                    && self.signed.as_ref().is_none_or(|s| s.account.id != account)
                {
                    self.seat = Some(self.state.moderation.watch(account, &self.barred));
                    if self.state.moderation.may_play(account).await.is_err() {
                        self.barred.cancel();
                    }
                }
            }
            Err(_) if self.state.shutdown.is_cancelled() => return Flow::going_away(),
            // Refused: the table queued the error frame in the outbox;
            // deliver it now, since the outbox is only read once attached.
            Ok(None) | Err(_) => {
                while let Ok(frame) = self.inbox.try_recv() {
                    if let Err(flow) = timed(self.write_timeout, socket.send(Message::Text(frame.text))).await
                    {
                        return flow;
                    }
                }
            }
        }
        Flow::Continue
    }
}

/// Where a client message goes: the one place a [`ClientMessage`] is taken
/// apart. A new message is a new arm here (the compiler asks for it) and,
/// when the table acts on it, a new [`Act`] (its cluster form too). No
/// `Debug`: it holds owner tokens.
enum Route {
    /// Answered by the connection: `pong`.
    Ping,
    /// Attach the connection to a table.
    Attach {
        /// The protocol the client says it speaks.
        protocol: Option<u32>,
        /// The table.
        table: uuid::Uuid,
        /// How the client asks (made an [`Attach`] with the connection's
        /// session by [`Connection::attach_of`]).
        ask: Ask,
    },
    /// For the table the connection is attached to.
    Table(Act),
    /// The owner starts a rematch: a new table (`hosting`).
    StartRematch {
        /// The owner token; `None`: the connection's account.
        owner_token: Option<String>,
    },
}

/// How a client asks to attach, before the connection's session is
/// considered. `Debug` hides the secrets.
enum Ask {
    Join { name: Option<String>, seat: Option<spades_engine::Seat>, invite: Option<String> },
    Resume { token: Option<String> },
    Watch,
}

impl std::fmt::Debug for Ask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ask::Join { name, seat, invite } => f
                .debug_struct("Join")
                .field("name", name)
                .field("seat", seat)
                .field("invited", &invite.is_some())
                .finish(),
            Ask::Resume { token } => f.debug_struct("Resume").field("token", &token.is_some()).finish(),
            Ask::Watch => f.write_str("Watch"),
        }
    }
}

impl Route {
    fn of(msg: ClientMessage) -> Route {
        match msg {
            ClientMessage::Ping => Route::Ping,
            ClientMessage::Join { protocol, table, name, seat, invite } => {
                Route::Attach { protocol, table, ask: Ask::Join { name, seat, invite } }
            }
            ClientMessage::Resume { protocol, table, token } => {
                Route::Attach { protocol, table, ask: Ask::Resume { token } }
            }
            ClientMessage::Watch { protocol, table } => Route::Attach { protocol, table, ask: Ask::Watch },
            ClientMessage::StartRematch { owner_token } => Route::StartRematch { owner_token },
            ClientMessage::Sync => Route::Table(Act::Sync),
            ClientMessage::Start { owner_token } => Route::Table(Act::Start { owner_token }),
            ClientMessage::AddBots { owner_token } => Route::Table(Act::AddBots { owner_token }),
            ClientMessage::RemoveBot { owner_token, seat } => {
                Route::Table(Act::RemoveBot { owner_token, seat })
            }
            ClientMessage::MoveSeat { owner_token, from, to } => {
                Route::Table(Act::MoveSeat { owner_token, from, to })
            }
            ClientMessage::Invite { owner_token, seat } => Route::Table(Act::Invite { owner_token, seat }),
            ClientMessage::Bid { bid, seq } => Route::Table(Act::Bid { bid, seq }),
            ClientMessage::Play { card, seq } => Route::Table(Act::Play { card, seq }),
            ClientMessage::TakeOver => Route::Table(Act::TakeOver),
            ClientMessage::Leave => Route::Table(Act::Leave),
            ClientMessage::Closing => Route::Table(Act::Closing),
            ClientMessage::Seed { seed } => Route::Table(Act::Seed { seed }),
            ClientMessage::CommitSeed { commitment } => Route::Table(Act::CommitSeed { commitment }),
            ClientMessage::Chat { text } => Route::Table(Act::Chat { text }),
            ClientMessage::Rematch { ready } => Route::Table(Act::Rematch { ready }),
        }
    }
}

fn error(req: Option<u32>, code: ErrorCode, message: &str) -> ServerMessage {
    crate::metrics::error(code);
    ServerMessage::Error { req, code, message: message.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Every message type goes somewhere, and what goes to a table keeps
    /// its form on the cluster's wire (a relay sends it to the owner).
    #[test]
    fn every_client_message_has_a_route_and_acts_survive_the_wire() {
        let examples = ClientMessage::examples();
        assert_eq!(examples.len(), ClientMessage::FIELDS.len());
        let mut tables = 0;
        for msg in examples {
            let shown = format!("{msg:?}");
            match Route::of(msg.clone()) {
                Route::Table(act) => {
                    tables += 1;
                    let json = serde_json::to_string(&act).unwrap();
                    assert!(serde_json::from_str::<Act>(&json).unwrap() == act, "{shown}");
                    assert!(!format!("{act:?}").contains("secret"), "{act:?} prints a token");
                }
                Route::Attach { protocol, ask, .. } => {
                    assert_eq!(protocol, Some(PROTOCOL_VERSION), "{shown}");
                    assert!(!format!("{ask:?}").contains("secret"), "{ask:?} prints a token");
                }
                Route::Ping | Route::StartRematch { .. } => {}
            }
        }
        assert_eq!(tables, 15, "the table's acts");
    }

    fn frame() -> Frame {
        Frame::new("v", crate::table::Order::Other)
    }

    #[test]
    fn only_a_full_outbox_counts_as_too_slow() {
        // The table let go of a full outbox.
        let (tx, mut rx) = mpsc::channel(4);
        for _ in 0..4 {
            tx.try_send(frame()).unwrap();
        }
        assert!(tx.try_send(frame()).is_err());
        assert_eq!(released_full(&rx), None, "still held");
        drop(tx);
        rx.try_recv().unwrap();
        assert_eq!(released_full(&rx), Some(true));
        // The table let go of an outbox with room to spare.
        let (tx, mut rx) = mpsc::channel(4);
        tx.try_send(frame()).unwrap();
        tx.try_send(frame()).unwrap();
        rx.try_recv().unwrap();
        assert_eq!(released_full(&rx), None);
        drop(tx);
        rx.try_recv().unwrap();
        assert_eq!(released_full(&rx), Some(false));
    }
}
