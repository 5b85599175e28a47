//! Operations: metrics, health, readiness, rate limits, origins and CORS,
//! request ids.

use spades_engine::Seat;
use spades_protocol::{ApiError, ClientMessage, ErrorCode, TableOptions};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::helpers::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_move_when_a_hand_is_played() {
    let server = spawn_server(test_config()).await;
    let get = |path: &'static str| {
        let (http, url) = (server.http.clone(), server.url(path));
        async move { http.get(url).send().await.unwrap() }
    };
    assert_eq!(get("/healthz").await.text().await.unwrap(), "ok");
    let ready = get("/readyz").await;
    assert_eq!(ready.status(), 200);
    let before = get("/metrics").await.text().await.unwrap();

    let created = server.create_table(TableOptions::default()).await;
    let mut me = server.client().await;
    me.join(created.table, "Me", Some(Seat::North)).await;
    me.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    me.request(ClientMessage::Start { owner_token: Some(created.owner_token) }).await;
    // A refused request, then a whole hand.
    me.request(ClientMessage::TakeOver).await;
    me.play_until(|v| v.game.as_ref().is_some_and(|g| g.hand_number > 1)).await;
    let resp = get("/metrics").await;
    assert_eq!(resp.headers()["content-type"], "text/plain; version=0.0.4");
    let after = resp.text().await.unwrap();
    let moved = |name: &str, labels: &[&str]| {
        metric(&after, name, labels).unwrap_or(0.0) > metric(&before, name, labels).unwrap_or(0.0)
    };
    assert!(moved("spades_actions_total", &["kind=\"play\"", "source=\"player\""]), "{after}");
    assert!(moved("spades_actions_total", &["kind=\"play\"", "source=\"bot\""]));
    assert!(moved("spades_actions_total", &["kind=\"bid\""]));
    assert!(moved("spades_action_seconds_count", &[]));
    assert!(moved("spades_errors_total", &["code=\"not_on_autopilot\""]));
    assert!(moved("spades_tables_created_total", &[]));
    assert!(
        metric(&after, "spades_tables", &["phase=\"bidding\""]).unwrap_or(0.0)
            + metric(&after, "spades_tables", &["phase=\"playing\""]).unwrap_or(0.0)
            >= 1.0
    );
    assert!(metric(&after, "spades_connections", &[]).unwrap_or(0.0) >= 1.0);
    assert!(metric(&after, "spades_resident_memory_bytes", &[]).unwrap_or(0.0) > 1e6);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_answer_429_with_a_typed_error() {
    let mut config = test_config();
    config.limits.tables_per_minute_per_ip = 2;
    config.limits.connections_per_minute_per_ip = 3;
    config.limits.messages_per_10s = 5;
    let server = spawn_server(config).await;
    server.create_table(TableOptions::default()).await;
    server.create_table(TableOptions::default()).await;
    let resp = server.http.post(server.url("/api/v1/tables")).send().await.unwrap();
    assert_eq!(resp.status(), 429);
    let err: ApiError = resp.json().await.unwrap();
    assert_eq!(err.code, ErrorCode::RateLimited);

    // Three connections a minute: the fourth upgrade is refused.
    let mut c = server.client().await;
    let _c2 = server.client().await;
    let _c3 = server.client().await;
    let refused = tokio_tungstenite::connect_async(format!("ws://{}/ws", server.addr)).await;
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => assert_eq!(resp.status(), 429),
        other => panic!("expected a 429, got {other:?}"),
    }
    // Five messages per ten seconds: the sixth is refused, typed.
    let mut codes = Vec::new();
    for _ in 0..6 {
        if let spades_protocol::ServerMessage::Error { code, .. } = c.request(ClientMessage::Ping).await {
            codes.push(code);
        }
    }
    assert_eq!(codes, vec![ErrorCode::RateLimited]);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn origins_cors_and_request_ids() {
    let server = spawn_server(test_config()).await;
    // Cross-site pages may not open WebSockets by default.
    let mut req = format!("ws://{}/ws", server.addr).into_client_request().unwrap();
    req.headers_mut().insert("origin", "https://evil.example".parse().unwrap());
    match tokio_tungstenite::connect_async(req).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => assert_eq!(resp.status(), 403),
        other => panic!("expected a 403, got {other:?}"),
    }
    // Same-origin pages may.
    let mut req = format!("ws://{}/ws", server.addr).into_client_request().unwrap();
    req.headers_mut().insert("origin", format!("http://{}", server.addr).parse().unwrap());
    assert!(tokio_tungstenite::connect_async(req).await.is_ok());
    // No CORS headers by default; every response carries a request id.
    let resp = server
        .http
        .get(server.url("/api/v1/tables"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert!(resp.headers().get("access-control-allow-origin").is_none());
    assert!(resp.headers().get("x-request-id").is_some_and(|v| v.len() >= 32));
    server.stop().await;

    let mut config = test_config();
    config.server.allowed_origins = vec!["https://friends.example".into()];
    let server = spawn_server(config).await;
    let resp = server
        .http
        .get(server.url("/api/v1/tables"))
        .header("origin", "https://friends.example")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["access-control-allow-origin"], "https://friends.example");
    let mut req = format!("ws://{}/ws", server.addr).into_client_request().unwrap();
    req.headers_mut().insert("origin", "https://friends.example".parse().unwrap());
    assert!(tokio_tungstenite::connect_async(req).await.is_ok());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_and_connection_caps_refuse_clearly() {
    let mut config = test_config();
    config.limits.max_tables = 1;
    config.limits.max_connections = 1;
    let server = spawn_server(config).await;
    server.create_table(TableOptions::default()).await;
    let resp = server.http.post(server.url("/api/v1/tables")).send().await.unwrap();
    assert_eq!(resp.status(), 503);
    let err: ApiError = resp.json().await.unwrap();
    assert_eq!(err.code, ErrorCode::Capacity);
    let mut first = server.client().await;
    match tokio_tungstenite::connect_async(format!("ws://{}/ws", server.addr)).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => assert_eq!(resp.status(), 503),
        other => panic!("expected a 503, got {other:?}"),
    }
    // The first connection is unaffected, and its slot frees when it goes.
    assert!(matches!(first.request(ClientMessage::Ping).await, spades_protocol::ServerMessage::Pong { .. }));
    drop(first);
    let mut again = None;
    for _ in 0..50 {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        if let Ok((ws, _)) = tokio_tungstenite::connect_async(format!("ws://{}/ws", server.addr)).await {
            again = Some(ws);
            break;
        }
    }
    assert!(again.is_some(), "the freed slot was not reusable");
    server.stop().await;
}
