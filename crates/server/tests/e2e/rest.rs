use serde_json::json;
use spades_protocol::{ApiError, ErrorCode, TablePhase, TableSummary};

use crate::helpers::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_tables_are_refused_with_clear_errors() {
    let server = spawn_server(test_config()).await;
    let post = |body: String| {
        let http = server.http.clone();
        let url = server.url("/api/v1/tables");
        async move { http.post(url).header("content-type", "application/json").body(body).send().await.unwrap() }
    };
    for (body, code, needle) in [
        (
            json!({"options": {"rules": {"match_end": {"target": 450}}}}).to_string(),
            ErrorCode::InvalidOptions,
            "450",
        ),
        (
            json!({"options": {"rules": {"match_end": {"hands": 7}}}}).to_string(),
            ErrorCode::InvalidOptions,
            "5, 9 or 11",
        ),
        (json!({"options": {"tempo": "glacial"}}).to_string(), ErrorCode::InvalidOptions, "glacial"),
        (json!({"options": {"speed": "fast"}}).to_string(), ErrorCode::InvalidOptions, "speed"),
        (json!({"options": {"rules": {"nil": 75}}}).to_string(), ErrorCode::InvalidOptions, "nil"),
        ("{not json".to_owned(), ErrorCode::InvalidOptions, "invalid table"),
        (json!({"name": ""}).to_string(), ErrorCode::InvalidName, "name"),
    ] {
        let resp = post(body.clone()).await;
        assert_eq!(resp.status(), 400, "{body}");
        let err: ApiError = resp.json().await.unwrap();
        assert_eq!(err.code, code, "{body}");
        assert!(err.message.contains(needle), "{body}: {}", err.message);
    }
    // An empty body is a table with every default.
    let resp = post(String::new()).await;
    assert_eq!(resp.status(), 201);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_and_status_reflect_the_tables() {
    let server = spawn_server(test_config()).await;
    let a = server.create_table(Default::default()).await;
    let b = server.create_table(Default::default()).await;
    let mut c = server.client().await;
    c.join(a.table, "Ann", None).await;
    c.request(spades_protocol::ClientMessage::AddBots { owner_token: a.owner_token.clone() }).await;
    c.request(spades_protocol::ClientMessage::Start { owner_token: a.owner_token.clone() }).await;
    c.view_until(|v| v.phase != TablePhase::Lobby).await;

    let get = |path: &str| {
        let http = server.http.clone();
        let url = server.url(path);
        async move { http.get(url).send().await.unwrap() }
    };
    let all: Vec<TableSummary> = get("/api/v1/tables").await.json().await.unwrap();
    assert_eq!(all.len(), 2);
    let open: Vec<TableSummary> = get("/api/v1/tables?open=true").await.json().await.unwrap();
    assert_eq!(open.iter().map(|t| t.table).collect::<Vec<_>>(), vec![b.table]);
    let lobby: Vec<TableSummary> = get("/api/v1/tables?phase=lobby").await.json().await.unwrap();
    assert_eq!(lobby.len(), 1);
    assert_eq!(get("/api/v1/tables?phase=nowhere").await.status(), 400);

    let status = server.status(a.table).await;
    assert_ne!(status.summary.phase, TablePhase::Lobby);
    assert_eq!(status.summary.seats[0].name.as_deref(), Some("Ann"));
    assert!(status.turn.is_some());
    assert!(status.clock.is_some() || status.turn != Some(spades_engine::Seat::North));
    assert_eq!(status.seed, None, "the seed stays secret until the end");
    let text = get(&format!("/api/v1/tables/{}", a.table)).await.text().await.unwrap();
    for card in c.hand() {
        assert!(!text.contains(&format!("\"{card}\"")), "status shows {card}");
    }
    assert_eq!(get(&format!("/api/v1/tables/{}", uuid::Uuid::new_v4())).await.status(), 404);
    assert_eq!(get("/api/v1/tables/not-a-uuid").await.status(), 404);
    assert_eq!(get("/healthz").await.text().await.unwrap(), "ok");
    server.stop().await;
}
