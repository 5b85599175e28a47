//! Connections and REST requests a stranger cannot use to exhaust the
//! server: attach and write timeouts, per-address caps and rate limits,
//! close codes, trusted proxies, and what `POST /api/v1/tables` accepts.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use spades_protocol::{ApiError, ClientMessage, ErrorCode, ServerMessage, TableOptions, TablePhase};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::helpers::*;

/// A WebSocket upgrade that must be refused: its status, `Retry-After`
/// and JSON body.
async fn refused_upgrade(
    request: tokio_tungstenite::tungstenite::handshake::client::Request,
) -> (u16, Option<String>, ApiError) {
    match tokio_tungstenite::connect_async(request).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
            let retry = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
            let body = resp.body().as_deref().expect("a JSON body");
            (resp.status().as_u16(), retry, serde_json::from_slice(body).expect("the JSON error shape"))
        }
        Ok(_) => panic!("the upgrade was accepted"),
        Err(e) => panic!("expected an HTTP refusal, got {e}"),
    }
}

fn ws_request(
    addr: SocketAddr,
    forwarded_for: Option<&str>,
) -> tokio_tungstenite::tungstenite::handshake::client::Request {
    let mut req = format!("ws://{addr}/ws").into_client_request().unwrap();
    if let Some(f) = forwarded_for {
        req.headers_mut().insert("x-forwarded-for", f.parse().unwrap());
    }
    req
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_attaches_is_closed_after_the_timeout() {
    let mut config = test_config();
    config.limits.attach_timeout_secs = 1;
    let server = spawn_server(config).await;
    let created = server.create_table(TableOptions::default()).await;
    let started = tokio::time::Instant::now();
    let mut idle = server.client().await;
    // Pings and refused attaches do not count as attaching.
    assert!(matches!(idle.request(ClientMessage::Ping).await, ServerMessage::Pong { .. }));
    let unknown = uuid::Uuid::new_v4();
    let r = idle
        .request(ClientMessage::Watch { protocol: Some(spades_protocol::PROTOCOL_VERSION), table: unknown })
        .await;
    assert_eq!(code_of(&r), Some(ErrorCode::TableNotFound));
    let mut watcher = server.client().await;
    watcher
        .request(ClientMessage::Watch {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table: created.table,
        })
        .await;

    assert!(idle.try_recv(WAIT).await.is_none());
    assert_eq!(idle.closed, Some((4004, "attach to a table within 1 s".to_owned())));
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(900) && waited < Duration::from_secs(5), "{waited:?}");
    // The attached connection stays open past the timeout.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(matches!(watcher.request(ClientMessage::Ping).await, ServerMessage::Pong { .. }));
    assert!(watcher.closed.is_none());
    server.stop().await;
}

/// A spectator whose socket is never read, at a bots-only table that keeps
/// changing: its writes stall, its outbox fills, the table lets go of it
/// (too slow) without waiting, and plays on to the end of the match.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_is_dropped_and_the_table_keeps_moving() {
    let mut config = test_config();
    config.limits.outbox_frames = 4;
    config.limits.write_timeout_secs = 1;
    config.limits.messages_per_10s = 1_000_000;
    let server = spawn_server(config).await;
    let before = server.metric("spades_disconnects_total", &["reason=\"too_slow\""]).await;
    let created = server.create_table(TableOptions::default()).await;
    let table = created.table;

    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(server.addr).await.unwrap();
    let (mut slow, _) =
        tokio_tungstenite::client_async(format!("ws://{}/ws", server.addr), stream).await.unwrap();
    slow.next().await.unwrap().unwrap(); // hello
    let watch = serde_json::json!({"type": "watch", "protocol": 2, "table": table, "req": 1}).to_string();
    slow.send(Message::text(watch)).await.unwrap();
    let reply = slow.next().await.unwrap().unwrap();
    assert!(reply.to_text().unwrap().contains("\"watching\""), "{reply}");
    // From here on `slow` is never read. A whole match is about a megabyte
    // of views, which loopback's socket buffers (several megabytes) would
    // swallow; so it also asks for replies it never reads (each unknown
    // message type is named in its error), filling them quickly.
    let (mut sink, mut slow) = slow.split();
    let flood = tokio::spawn(async move {
        let junk = serde_json::json!({"type": "x".repeat(4000)}).to_string();
        for _ in 0..2000 {
            let sent =
                tokio::time::timeout(Duration::from_secs(2), sink.send(Message::text(junk.clone()))).await;
            if !matches!(sent, Ok(Ok(()))) {
                break;
            }
        }
        sink
    });

    let mut reader = server.client().await;
    reader.request(ClientMessage::Watch { protocol: Some(spades_protocol::PROTOCOL_VERSION), table }).await;
    reader.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    assert!(matches!(
        reader.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await,
        ServerMessage::Ack { .. }
    ));
    let finished = tokio::time::timeout(
        Duration::from_secs(120),
        reader.view_until(|v| v.phase == TablePhase::Finished),
    )
    .await
    .expect("the table stopped moving");
    assert_eq!(finished.phase, TablePhase::Finished);
    let views = reader.views.len();

    // The slow spectator is gone from the table, and its socket was cut
    // off: what it can still read ends well before the match did.
    let gone = tokio::time::timeout(WAIT, async {
        while server.status(table).await.summary.spectators != 1 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(gone.is_ok(), "the slow spectator is still at the table");
    let mut slow_views = 0;
    let drained = tokio::time::timeout(WAIT, async {
        while let Some(Ok(msg)) = slow.next().await {
            if msg.is_text() && msg.to_text().unwrap().contains("\"view\"") {
                slow_views += 1;
            }
        }
    })
    .await;
    assert!(drained.is_ok(), "the server did not close the slow connection");
    assert!(slow_views < views, "the slow spectator got {slow_views} views of {views}: it was never dropped");
    let _ = flood.await;
    // Counted as too slow (the count is the process's, read until it moves).
    let counted = tokio::time::timeout(WAIT, async {
        while server.metric("spades_disconnects_total", &["reason=\"too_slow\""]).await <= before {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    if counted.is_err() {
        let text = server.metrics().await;
        let reasons: Vec<&str> = text.lines().filter(|l| l.starts_with("spades_disconnects_total")).collect();
        panic!("not counted as too_slow (from {before}); the disconnects: {reasons:?}");
    }
    server.stop().await;
}

/// A client that sends but never reads: once the socket buffers are full
/// the server's writes stall, and after the write timeout the connection
/// is dropped (counted as too slow) instead of holding its task forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_does_not_complete_drops_the_connection() {
    let mut config = test_config();
    config.limits.write_timeout_secs = 1;
    config.limits.messages_per_10s = 1_000_000;
    let server = spawn_server(config).await;
    let before = server.metric("spades_disconnects_total", &["reason=\"too_slow\""]).await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let stream = socket.connect(server.addr).await.unwrap();
    let (ws, _) = tokio_tungstenite::client_async(format!("ws://{}/ws", server.addr), stream).await.unwrap();
    let (mut sink, mut stream) = ws.split();
    stream.next().await.unwrap().unwrap(); // hello
    // Each unknown message type is named in its error: big replies.
    let junk = serde_json::json!({"type": "x".repeat(4000)}).to_string();
    sink.send(Message::text(junk.clone())).await.unwrap();
    let reply = stream.next().await.unwrap().unwrap();
    assert!(reply.len() > 4000, "{} bytes", reply.len());
    // Now ask for far more than the socket buffers hold, reading nothing.
    let flood = tokio::spawn(async move {
        for _ in 0..4000 {
            let sent =
                tokio::time::timeout(Duration::from_secs(2), sink.send(Message::text(junk.clone()))).await;
            if !matches!(sent, Ok(Ok(()))) {
                break;
            }
        }
        sink
    });
    let counted = tokio::time::timeout(WAIT, async {
        while server.metric("spades_disconnects_total", &["reason=\"too_slow\""]).await <= before {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(counted.is_ok(), "the stalled connection was never dropped");
    // Reading now finds the end of the stream: the server closed it (had it
    // not, reading would unblock its writes and the stream would go on).
    let ended = tokio::time::timeout(WAIT, async { while let Some(Ok(_)) = stream.next().await {} }).await;
    assert!(ended.is_ok(), "the connection is still open");
    let _ = flood.await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_address_connection_cap_answers_429_at_n_plus_one() {
    let mut config = test_config();
    config.limits.connections_per_ip = 3;
    let server = spawn_server(config).await;
    let a = server.client().await;
    let _b = server.client().await;
    let _c = server.client().await;
    let (status, retry, err) = refused_upgrade(ws_request(server.addr, None)).await;
    assert_eq!(status, 429);
    assert_eq!(err.code, ErrorCode::RateLimited);
    assert!(retry.is_some_and(|r| r.parse::<u64>().is_ok_and(|s| s >= 1)), "Retry-After");
    // Closing one frees its place.
    drop(a);
    let reopened = tokio::time::timeout(WAIT, async {
        loop {
            if tokio_tungstenite::connect_async(ws_request(server.addr, None)).await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(reopened.is_ok(), "a closed connection kept its place");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_and_oversized_frames_count_against_the_message_rate() {
    let mut config = test_config();
    config.limits.messages_per_10s = 5;
    let server = spawn_server(config).await;
    let mut c = server.client().await;
    for _ in 0..3 {
        c.ws_send(Message::binary(vec![1u8, 2, 3])).await;
        assert_eq!(code_of(&c.recv().await), Some(ErrorCode::BadMessage));
    }
    let big = format!(r#"{{"type":"ping","pad":"{}"}}"#, "x".repeat(5000));
    for _ in 0..2 {
        c.send_raw(&big).await;
        assert_eq!(code_of(&c.recv().await), Some(ErrorCode::FrameTooLarge));
    }
    // Five frames so far: the sixth, however harmless, is over the rate.
    assert_eq!(code_of(&c.request(ClientMessage::Ping).await), Some(ErrorCode::RateLimited));
    c.ws_send(Message::binary(vec![0u8])).await;
    assert_eq!(code_of(&c.recv().await), Some(ErrorCode::RateLimited));
    c.send_raw(&big).await;
    assert_eq!(code_of(&c.recv().await), Some(ErrorCode::RateLimited));
    server.stop().await;
}

/// A WebSocket spoken by hand over TCP, to break the protocol on purpose.
struct RawSocket {
    tcp: TcpStream,
}

impl RawSocket {
    async fn connect(addr: SocketAddr) -> RawSocket {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        let request = format!(
            "GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut byte = [0u8; 1];
            tcp.read_exact(&mut byte).await.unwrap();
            head.push(byte[0]);
        }
        assert!(head.starts_with(b"HTTP/1.1 101"), "{}", String::from_utf8_lossy(&head));
        let mut raw = RawSocket { tcp };
        let (opcode, payload) = raw.frame().await.expect("hello");
        assert_eq!(opcode, 1);
        assert!(String::from_utf8_lossy(&payload).contains("\"hello\""));
        raw
    }

    /// The next frame from the server: opcode and payload (server frames
    /// are not masked); `None` once the stream ends.
    async fn frame(&mut self) -> Option<(u8, Vec<u8>)> {
        let mut head = [0u8; 2];
        self.tcp.read_exact(&mut head).await.ok()?;
        let len = match head[1] & 0x7f {
            126 => u64::from(self.tcp.read_u16().await.ok()?),
            127 => self.tcp.read_u64().await.ok()?,
            n => u64::from(n),
        };
        let mut payload = vec![0u8; usize::try_from(len).unwrap()];
        self.tcp.read_exact(&mut payload).await.ok()?;
        Some((head[0] & 0x0f, payload))
    }

    /// The close frame's code, skipping other frames.
    async fn close_code(&mut self) -> Option<u16> {
        let found = tokio::time::timeout(WAIT, async {
            while let Some((opcode, payload)) = self.frame().await {
                if opcode == 8 {
                    return payload.get(..2).map(|c| u16::from_be_bytes([c[0], c[1]]));
                }
            }
            None
        });
        found.await.expect("no close frame in time")
    }

    /// A client frame with `payload`, masked with `mask` (or not masked,
    /// which the protocol forbids).
    async fn send(&mut self, first: u8, payload: &[u8], mask: Option<[u8; 4]>) {
        let len = u8::try_from(payload.len()).unwrap();
        assert!(len < 126);
        let mut frame = vec![first];
        match mask {
            Some(m) => {
                frame.push(0x80 | len);
                frame.extend_from_slice(&m);
                frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ m[i % 4]));
            }
            None => {
                frame.push(len);
                frame.extend_from_slice(payload);
            }
        }
        self.tcp.write_all(&frame).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_violations_close_with_1002_and_bad_utf8_with_1007() {
    let server = spawn_server(test_config()).await;
    let errors_before = server.metric("spades_disconnects_total", &["reason=\"error\""]).await;
    // An unmasked client frame breaks the protocol.
    let mut raw = RawSocket::connect(server.addr).await;
    raw.send(0x81, br#"{"type":"ping"}"#, None).await;
    assert_eq!(raw.close_code().await, Some(1002));
    // Reserved bits set.
    let mut raw = RawSocket::connect(server.addr).await;
    raw.send(0xf1, b"x", Some([1, 2, 3, 4])).await;
    assert_eq!(raw.close_code().await, Some(1002));
    // A text frame that is not UTF-8.
    let mut raw = RawSocket::connect(server.addr).await;
    raw.send(0x81, &[0xff, 0xfe, 0xfd], Some([9, 8, 7, 6])).await;
    assert_eq!(raw.close_code().await, Some(1007));
    // A well-formed frame still works on a fresh connection.
    let mut raw = RawSocket::connect(server.addr).await;
    raw.send(0x81, br#"{"type":"ping","req":7}"#, Some([5, 6, 7, 8])).await;
    let (opcode, payload) = raw.frame().await.unwrap();
    assert_eq!(opcode, 1);
    assert!(String::from_utf8_lossy(&payload).contains("\"pong\""));
    // A peer that just goes away (no close handshake) is an ordinary
    // disconnect, not an error.
    drop(raw);
    let c = server.client().await;
    drop(c);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let protocol = server.metric("spades_disconnects_total", &["reason=\"protocol\""]).await;
    assert!(protocol >= 3.0, "{protocol}");
    let errors_after = server.metric("spades_disconnects_total", &["reason=\"error\""]).await;
    assert!((errors_after - errors_before).abs() < f64::EPSILON, "{errors_before} → {errors_after}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_every_connection_with_1001() {
    let mut config = test_config();
    config.tables.bot_delay_ms = 50;
    let server = spawn_server(config).await;
    let created = server.create_table(TableOptions::default()).await;
    let table = created.table;
    let mut player = server.client().await;
    player.join(table, "Ann", None).await;
    player.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    player.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
    let mut spectator = server.client().await;
    spectator
        .request(ClientMessage::Watch { protocol: Some(spades_protocol::PROTOCOL_VERSION), table })
        .await;
    spectator.view_until(|v| v.phase != TablePhase::Lobby).await;
    let mut lobby = server.client().await;
    server.shutdown.cancel();
    for c in [&mut player, &mut spectator, &mut lobby] {
        let ended = tokio::time::timeout(WAIT, async { while c.try_recv(WAIT).await.is_some() {} }).await;
        assert!(ended.is_ok(), "still open after the shutdown");
        assert_eq!(c.closed.as_ref().map(|(code, _)| *code), Some(1001), "{:?}", c.closed);
    }
    let _ = tokio::time::timeout(WAIT, server.task).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rest_rate_limit_answers_429_with_retry_after() {
    let mut config = test_config();
    config.limits.requests_per_minute_per_ip = 5;
    let server = spawn_server(config).await;
    for _ in 0..5 {
        assert_eq!(server.http.get(server.url("/api/v1/tables")).send().await.unwrap().status(), 200);
    }
    let resp = server.http.get(server.url("/api/v1/tables")).send().await.unwrap();
    assert_eq!(resp.status(), 429);
    let retry: u64 = resp.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=12).contains(&retry), "{retry}");
    let err: ApiError = resp.json().await.unwrap();
    assert_eq!(err.code, ErrorCode::RateLimited);
    // Every /api/v1 request counts; health checks do not.
    let resp = server.http.get(server.url(&format!("/api/v1/tables/{}", uuid::Uuid::new_v4()))).send().await;
    assert_eq!(resp.unwrap().status(), 429);
    for _ in 0..20 {
        assert_eq!(server.http.get(server.url("/healthz")).send().await.unwrap().status(), 200);
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creating_a_table_needs_a_json_body_and_an_allowed_origin() {
    let server = spawn_server(test_config()).await;
    let url = server.url("/api/v1/tables");
    let body = r#"{"name":"Plain"}"#;
    for content_type in [Some("text/plain"), Some("application/x-www-form-urlencoded"), None] {
        let mut req = server.http.post(&url).body(body);
        if let Some(ct) = content_type {
            req = req.header("content-type", ct);
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 415, "{content_type:?}");
        let err: ApiError = resp.json().await.unwrap();
        assert_eq!(err.code, ErrorCode::BadMessage);
        assert!(err.message.contains("application/json"), "{}", err.message);
    }
    let json = |req: reqwest::RequestBuilder| {
        req.header("content-type", "application/json; charset=utf-8").body(body)
    };
    assert_eq!(json(server.http.post(&url)).send().await.unwrap().status(), 201);
    // A body over the limit is refused before it is read whole.
    let resp =
        json(server.http.post(&url)).body(format!(r#"{{"name":"{}"}}"#, "x".repeat(20_000))).send().await;
    let resp = resp.unwrap();
    assert_eq!(resp.status(), 413);
    let err: ApiError = resp.json().await.unwrap();
    assert_eq!(err.code, ErrorCode::BadMessage);
    // An empty body needs no content type.
    assert_eq!(server.http.post(&url).send().await.unwrap().status(), 201);

    // A page of another site may not create tables; this server's own may.
    let resp = json(server.http.post(&url)).header("origin", "https://evil.example").send().await.unwrap();
    assert_eq!(resp.status(), 403);
    let err: ApiError = resp.json().await.unwrap();
    assert!(err.message.contains("origin"), "{}", err.message);
    let same = format!("http://{}", server.addr);
    assert_eq!(json(server.http.post(&url)).header("origin", same).send().await.unwrap().status(), 201);
    let tables: Vec<spades_protocol::TableSummary> =
        server.http.get(server.url("/api/v1/tables")).send().await.unwrap().json().await.unwrap();
    assert_eq!(tables.len(), 3, "only the accepted requests made tables");
    server.stop().await;

    let mut config = test_config();
    config.server.allowed_origins = vec!["https://friends.example".into()];
    let server = spawn_server(config).await;
    let url = server.url("/api/v1/tables");
    let resp = json(server.http.post(&url)).header("origin", "https://friends.example").send().await.unwrap();
    assert_eq!(resp.status(), 201);
    let resp = json(server.http.post(&url)).header("origin", "https://evil.example").send().await.unwrap();
    assert_eq!(resp.status(), 403);
    server.stop().await;
}

/// `X-Forwarded-For` names the client for every per-address limit, but
/// only when the TCP peer is a trusted proxy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_addresses_count_only_behind_a_trusted_proxy() {
    let limited = |trusted: Vec<String>| {
        let mut config = test_config();
        config.server.trusted_proxies = trusted;
        config.limits.requests_per_minute_per_ip = 3;
        config.limits.connections_per_ip = 1;
        config
    };
    let get = |server: &TestServer, client: &str| {
        let req = server.http.get(server.url("/api/v1/tables")).header("x-forwarded-for", client);
        async move { req.send().await.unwrap().status().as_u16() }
    };

    // Behind a trusted proxy (the test's own address), each forwarded
    // client has its own budget.
    let server = spawn_server(limited(vec!["127.0.0.1".into()])).await;
    for _ in 0..3 {
        assert_eq!(get(&server, "198.51.100.1").await, 200);
    }
    assert_eq!(get(&server, "198.51.100.1").await, 429);
    assert_eq!(get(&server, "198.51.100.2").await, 200, "another client behind the proxy");
    // The right-most untrusted entry counts, not what the client claims.
    assert_eq!(get(&server, "198.51.100.2, 198.51.100.1").await, 429);
    let (_first, _) =
        tokio_tungstenite::connect_async(ws_request(server.addr, Some("198.51.100.1"))).await.unwrap();
    let (_second, _) =
        tokio_tungstenite::connect_async(ws_request(server.addr, Some("198.51.100.2"))).await.unwrap();
    let (status, _, _) = refused_upgrade(ws_request(server.addr, Some("198.51.100.1"))).await;
    assert_eq!(status, 429, "one connection per forwarded client");
    server.stop().await;

    // Without trusted proxies the header is ignored: the peer is the client.
    let server = spawn_server(limited(Vec::new())).await;
    for client in ["198.51.100.1", "198.51.100.2", "198.51.100.3"] {
        assert_eq!(get(&server, client).await, 200);
    }
    assert_eq!(get(&server, "198.51.100.4").await, 429);
    let (_first, _) =
        tokio_tungstenite::connect_async(ws_request(server.addr, Some("198.51.100.1"))).await.unwrap();
    let (status, _, _) = refused_upgrade(ws_request(server.addr, Some("198.51.100.2"))).await;
    assert_eq!(status, 429);
    server.stop().await;
}

/// A REST request that cannot finish (its table's first write waits on a
/// database another connection has locked) is answered 503 after the
/// request timeout; while it holds the only request slot, other API
/// requests are shed at once with 503 `capacity`, and health checks and
/// WebSocket upgrades are not affected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_requests_time_out_and_excess_requests_are_shed() {
    use sqlx::Connection;

    let data = std::env::temp_dir().join(format!("spades-shed-{}", uuid::Uuid::new_v4().simple()));
    let mut config = test_config();
    config.storage.in_memory = false;
    config.storage.data_dir = data.clone();
    config.limits.request_timeout_secs = 1;
    config.limits.max_concurrent_requests = 1;
    let server = spawn_server(config).await;
    let ready = tokio::time::timeout(WAIT, async {
        loop {
            if let Ok(r) = server.http.get(server.url("/readyz")).send().await
                && r.status() == 200
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    ready.await.expect("the server did not get ready");
    let mut lock = sqlx::SqliteConnection::connect(&format!("sqlite://{}", data.join("spades.db").display()))
        .await
        .unwrap();
    sqlx::raw_sql("BEGIN EXCLUSIVE").execute(&mut lock).await.unwrap();

    let started = tokio::time::Instant::now();
    let post = tokio::spawn(server.http.post(server.url("/api/v1/tables")).send());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let shed = server.http.get(server.url("/api/v1/tables")).send().await.unwrap();
    assert_eq!(shed.status(), 503);
    assert!(shed.headers().get("retry-after").is_some());
    let err: ApiError = shed.json().await.unwrap();
    assert_eq!(err.code, ErrorCode::Capacity);
    assert_eq!(server.http.get(server.url("/healthz")).send().await.unwrap().status(), 200);
    let mut c = server.client().await;
    assert!(matches!(c.request(ClientMessage::Ping).await, ServerMessage::Pong { .. }));

    let timed_out = post.await.unwrap().unwrap();
    let waited = started.elapsed();
    assert_eq!(timed_out.status(), 503);
    let err: ApiError = timed_out.json().await.unwrap();
    assert_eq!(err.code, ErrorCode::Internal);
    assert!(waited >= Duration::from_millis(900) && waited < Duration::from_secs(5), "{waited:?}");

    // Once the database is free the timed-out request's handler finishes:
    // its table exists (memory and log agree) and its slot is free again.
    sqlx::raw_sql("ROLLBACK").execute(&mut lock).await.unwrap();
    drop(lock);
    let tables = tokio::time::timeout(WAIT, async {
        loop {
            let resp = server.http.get(server.url("/api/v1/tables")).send().await.unwrap();
            if resp.status() == 200 {
                let tables: Vec<spades_protocol::TableSummary> = resp.json().await.unwrap();
                if !tables.is_empty() {
                    return tables;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    assert_eq!(tables.await.expect("the slot was never freed").len(), 1);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&data);
}
