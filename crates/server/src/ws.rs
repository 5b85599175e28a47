//! One WebSocket connection: reads client frames, routes them to its table,
//! and writes what the table queues in its outbox.
//!
//! A single task per connection `select!`s over the socket, the outbox, a
//! keep-alive timer and the shutdown signal. The table never waits for this
//! task: it `try_send`s into the bounded outbox and drops the connection
//! when the outbox is full.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::SinkExt;
use spades_protocol::{ClientFrame, ClientMessage, ErrorCode, PROTOCOL_VERSION, ServerMessage};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tracing::{Instrument, debug, info_span};

use crate::app::AppState;
use crate::error::AppError;
use crate::rest::clean_name;
use crate::table::{Act, Attach, ConnId, Role, TableCommand, TableHandle, now_ms};

/// Close code: the connection could not keep up with its table.
pub const CLOSE_TOO_SLOW: u16 = 4001;
/// Close code: the connection stopped answering keep-alive pings.
pub const CLOSE_SILENT: u16 = 4002;
/// Close code: the server is shutting down (standard "going away").
pub const CLOSE_GOING_AWAY: u16 = 1001;
/// Close code: the table closed.
pub const CLOSE_TABLE_CLOSED: u16 = 4003;

/// Messages larger than this are not even read (the connection closes with
/// 1009); between `max_frame_bytes` and this, the client gets a
/// `frame_too_large` error and the connection stays usable.
const HARD_MESSAGE_LIMIT: usize = 64 * 1024;

/// Frames queued together (an acknowledgement and the view it caused, say)
/// are encoded into the socket's write buffer up to this size and written
/// with one system call; [`write_batch`] flushes before the task waits.
const WRITE_BUFFER: usize = 16 * 1024;

/// The most frames taken from the outbox for one write.
const WRITE_BATCH: usize = 16;

/// `GET /ws`: upgrades to a WebSocket.
pub async fn upgrade(
    ws: WebSocketUpgrade,
    State(state): State<AppState>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
) -> Response {
    if !origin_allowed(&headers, &state.config.server.allowed_origins) {
        return (StatusCode::FORBIDDEN, "origin not allowed").into_response();
    }
    if state.shutdown.is_cancelled() {
        return AppError::new(ErrorCode::ShuttingDown, "the server is shutting down").into_response();
    }
    if !state.limits.allow_connection(addr.ip()) {
        crate::metrics::rate_limited("connections");
        return AppError::new(
            ErrorCode::RateLimited,
            "too many connections from your address: wait a minute",
        )
        .into_response();
    }
    let open = state.connections.fetch_add(1, Ordering::AcqRel);
    if open >= state.config.limits.max_connections {
        state.connections.fetch_sub(1, Ordering::AcqRel);
        return AppError::new(ErrorCode::Capacity, "the server has as many connections as it can take")
            .into_response();
    }
    let guard = ConnectionGuard(state.clone());
    let id = state.next_conn_id();
    crate::metrics::connection_opened();
    ws.read_buffer_size(4096)
        .write_buffer_size(WRITE_BUFFER)
        .max_write_buffer_size(256 * 1024)
        .max_message_size(HARD_MESSAGE_LIMIT)
        .max_frame_size(HARD_MESSAGE_LIMIT)
        .on_upgrade(move |socket| {
            let span = info_span!("conn", conn_id = id, %addr, table_id = tracing::field::Empty, seat = tracing::field::Empty);
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

/// Decrements the connection count when a connection ends (or its upgrade
/// fails).
struct ConnectionGuard(AppState);

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Same-origin pages and clients without an `Origin` header are always
/// allowed; other origins only when listed.
fn origin_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) else { return true };
    if allowed.iter().any(|a| a == origin || a == "*") {
        return true;
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
    let bare = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")).unwrap_or(origin);
    !host.is_empty() && bare == host
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
}

enum Flow {
    Continue,
    Close(u16, &'static str),
}

impl Connection {
    fn new(id: ConnId, state: AppState) -> Connection {
        let (outbox, inbox) = mpsc::channel(state.config.limits.outbox_frames);
        Connection { id, state, outbox, inbox, table: None, window: (Instant::now(), 0) }
    }

    async fn run(mut self, mut socket: WebSocket) {
        debug!("connected");
        let hello = ServerMessage::Hello {
            protocol: PROTOCOL_VERSION,
            server: concat!("spades-server/", env!("CARGO_PKG_VERSION")).into(),
            server_time: now_ms(),
        };
        if send(&mut socket, &hello).await.is_err() {
            return;
        }
        let interval = Duration::from_secs(self.state.config.limits.ping_interval_secs);
        let mut ping = tokio::time::interval_at(Instant::now() + interval, interval);
        let mut last_heard = Instant::now();
        let shutdown = self.state.shutdown.clone();
        let flow = loop {
            tokio::select! {
                () = shutdown.cancelled() => break Flow::Close(CLOSE_GOING_AWAY, "server shutting down"),
                frame = self.inbox.recv(), if self.table.is_some() => match frame {
                    Some(frame) => {
                        if write_batch(&mut socket, frame, &mut self.inbox).await.is_err() {
                            break Flow::Continue;
                        }
                    }
                    // The table dropped this connection: too slow, or closed.
                    None => break if self.state.shutdown.is_cancelled() {
                        Flow::Close(CLOSE_GOING_AWAY, "server shutting down")
                    } else if self.table.as_ref().is_some_and(|(t, _)| t.is_closed()) {
                        Flow::Close(CLOSE_TABLE_CLOSED, "the table closed")
                    } else {
                        Flow::Close(CLOSE_TOO_SLOW, "too slow: resume with your seat token")
                    },
                },
                msg = socket.recv() => {
                    last_heard = Instant::now();
                    match msg {
                        Some(Ok(Message::Text(text))) => {
                            if let Flow::Close(code, why) = self.on_text(&mut socket, text.as_str()).await {
                                break Flow::Close(code, why);
                            }
                        }
                        Some(Ok(Message::Binary(_))) => {
                            let err = error(None, ErrorCode::BadMessage, "binary frames are not part of the protocol: send JSON text");
                            if send(&mut socket, &err).await.is_err() {
                                break Flow::Continue;
                            }
                        }
                        Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                        Some(Ok(Message::Close(_))) | None => break Flow::Continue,
                        Some(Err(e)) => {
                            debug!(error = %e, "read error");
                            break Flow::Close(1009, "message too big");
                        }
                    }
                }
                _ = ping.tick() => {
                    if last_heard.elapsed() > interval * 3 {
                        break Flow::Close(CLOSE_SILENT, "no answer to pings");
                    }
                    if socket.send(Message::Ping(axum::body::Bytes::new())).await.is_err() {
                        break Flow::Continue;
                    }
                }
            }
        };
        crate::metrics::disconnect(match flow {
            Flow::Continue => "closed",
            Flow::Close(CLOSE_TOO_SLOW, _) => "too_slow",
            Flow::Close(CLOSE_SILENT, _) => "silent",
            Flow::Close(CLOSE_GOING_AWAY, _) => "shutdown",
            Flow::Close(CLOSE_TABLE_CLOSED, _) => "table_closed",
            Flow::Close(..) => "error",
        });
        if let Flow::Close(code, reason) = flow {
            let close = Message::Close(Some(CloseFrame { code, reason: Utf8Bytes::from_static(reason) }));
            let _ = tokio::time::timeout(Duration::from_secs(2), socket.send(close)).await;
        }
        if let Some((table, _)) = self.table.take()
            && !table.try_send(TableCommand::Detach { conn: self.id })
        {
            // The table's queue is full: detach without holding up the close.
            tokio::spawn(async move {
                let _ = table.send(TableCommand::Detach { conn: self.id }).await;
            });
        }
        debug!("disconnected");
    }

    /// Counts a message against the per-connection rate; true when allowed.
    fn within_rate(&mut self) -> bool {
        let now = Instant::now();
        if now.duration_since(self.window.0) >= Duration::from_secs(10) {
            self.window = (now, 0);
        }
        self.window.1 += 1;
        self.window.1 <= self.state.config.limits.messages_per_10s
    }

    async fn on_text(&mut self, socket: &mut WebSocket, text: &str) -> Flow {
        if text.len() > self.state.config.limits.max_frame_bytes {
            let message = format!("frames are limited to {} bytes", self.state.config.limits.max_frame_bytes);
            return reply(socket, &error(None, ErrorCode::FrameTooLarge, &message)).await;
        }
        // Every frame counts against the rate, readable or not; the refusal
        // echoes the request id when there is one.
        let allowed = self.within_rate();
        let frame: Result<ClientFrame, _> = serde_json::from_str(text);
        if !allowed {
            crate::metrics::rate_limited("messages");
            let req = frame.as_ref().ok().and_then(|f| f.req);
            return reply(socket, &error(req, ErrorCode::RateLimited, "too many messages: slow down")).await;
        }
        let frame = match frame {
            Ok(f) => f,
            Err(e) => {
                return reply(
                    socket,
                    &error(None, ErrorCode::BadMessage, &format!("unreadable message: {e}")),
                )
                .await;
            }
        };
        let req = frame.req;
        let act = match frame.msg {
            ClientMessage::Ping => return reply(socket, &ServerMessage::Pong { req }).await,
            ClientMessage::Join { table, name, seat } => {
                let Some(name) = clean_name(&name, 24) else {
                    let err = error(
                        req,
                        ErrorCode::InvalidName,
                        "names are 1 to 24 characters, without control characters",
                    );
                    return reply(socket, &err).await;
                };
                return self.attach(socket, req, table, Attach::Join { name, seat }).await;
            }
            ClientMessage::Resume { table, token } => {
                return self.attach(socket, req, table, Attach::Resume { token }).await;
            }
            ClientMessage::Watch { table } => return self.attach(socket, req, table, Attach::Watch).await,
            ClientMessage::Start { owner_token } => Act::Start { owner_token },
            ClientMessage::AddBots { owner_token } => Act::AddBots { owner_token },
            ClientMessage::Bid { bid } => Act::Bid(bid),
            ClientMessage::Play { card } => Act::Play(card),
            ClientMessage::TakeOver => Act::TakeOver,
            ClientMessage::Leave => Act::Leave,
            ClientMessage::Closing => Act::Closing,
        };
        let Some((table, _)) = &self.table else {
            let err = error(req, ErrorCode::NotAttached, "join, resume or watch a table first");
            return reply(socket, &err).await;
        };
        if table.send(TableCommand::Act { conn: self.id, req, act }).await.is_err() {
            return Flow::Close(CLOSE_TABLE_CLOSED, "the table closed");
        }
        Flow::Continue
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
            return reply(socket, &err).await;
        }
        let Some(handle) = self.state.registry.get(&table) else {
            return reply(socket, &error(req, ErrorCode::TableNotFound, "no such table")).await;
        };
        let (tx, rx) = oneshot::channel();
        let cmd = TableCommand::Attach { conn: self.id, outbox: self.outbox.clone(), how, req, reply: tx };
        if handle.send(cmd).await.is_err() {
            return reply(socket, &error(req, ErrorCode::TableNotFound, "no such table")).await;
        }
        match rx.await {
            Ok(Some(role)) => {
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
            // Refused: the table queued the error frame in the outbox;
            // deliver it now, since the outbox is only read once attached.
            Ok(None) | Err(_) => {
                while let Ok(frame) = self.inbox.try_recv() {
                    if socket.send(Message::Text(frame)).await.is_err() {
                        return Flow::Continue;
                    }
                }
            }
        }
        Flow::Continue
    }
}

fn error(req: Option<u32>, code: ErrorCode, message: &str) -> ServerMessage {
    crate::metrics::error(code);
    ServerMessage::Error { req, code, message: message.into() }
}

/// Writes `first` and whatever else is already waiting in the outbox (up to
/// [`WRITE_BATCH`] frames) with as few system calls as the write buffer
/// allows, then flushes.
async fn write_batch(
    socket: &mut WebSocket,
    first: Utf8Bytes,
    inbox: &mut mpsc::Receiver<Utf8Bytes>,
) -> Result<(), axum::Error> {
    socket.feed(Message::Text(first)).await?;
    for _ in 1..WRITE_BATCH {
        match inbox.try_recv() {
            Ok(frame) => socket.feed(Message::Text(frame)).await?,
            Err(_) => break,
        }
    }
    socket.flush().await
}

async fn send(socket: &mut WebSocket, msg: &ServerMessage) -> Result<(), axum::Error> {
    let text = serde_json::to_string(msg).map_err(axum::Error::new)?;
    socket.send(Message::Text(Utf8Bytes::from(text))).await
}

async fn reply(socket: &mut WebSocket, msg: &ServerMessage) -> Flow {
    match send(socket, msg).await {
        Ok(()) => Flow::Continue,
        Err(_) => Flow::Close(1011, "write failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(origin: Option<&str>, host: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, host.parse().unwrap());
        if let Some(o) = origin {
            h.insert(header::ORIGIN, o.parse().unwrap());
        }
        h
    }

    #[test]
    fn origins() {
        assert!(origin_allowed(&headers(None, "cards.example:8080"), &[]));
        assert!(origin_allowed(&headers(Some("http://cards.example:8080"), "cards.example:8080"), &[]));
        assert!(!origin_allowed(&headers(Some("https://evil.example"), "cards.example:8080"), &[]));
        let allowed = vec!["https://friends.example".to_owned()];
        assert!(origin_allowed(&headers(Some("https://friends.example"), "cards.example"), &allowed));
        assert!(!origin_allowed(&headers(Some("https://evil.example"), "cards.example"), &allowed));
    }
}
