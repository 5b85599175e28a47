//! The edges a client author hits: every REST error is a JSON
//! `{"code","message"}`, WebSocket refusals echo `req` and speak plain
//! English, bids out of range of any size, `closing` anywhere, and names
//! that cannot spoof.

use serde_json::{Value, json};
use spades_protocol::{ClientMessage, ErrorCode, ServerMessage, TableOptions};

use crate::helpers::*;

/// The documented error shape: JSON, exactly `code` and `message`.
async fn api_error(resp: reqwest::Response) -> (u16, ErrorCode, String) {
    let status = resp.status().as_u16();
    let ct = resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    assert!(ct.starts_with("application/json"), "{status}: content type {ct:?}");
    let body: Value = resp.json().await.unwrap();
    let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["code", "message"], "{body}");
    let code: ErrorCode = serde_json::from_value(body["code"].clone()).unwrap();
    (status, code, body["message"].as_str().unwrap().to_owned())
}

/// Words of Rust and serde that a client must never see.
fn assert_plain(message: &str) {
    for word in [
        "u8",
        "u32",
        "usize",
        "struct",
        "enum ",
        "ClientFrame",
        "invalid type",
        "invalid value",
        "variant",
        "column",
    ] {
        assert!(!message.contains(word), "{message:?} says {word:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_api_paths_are_json_404s() {
    let server = spawn_server(test_config()).await;
    for path in ["/api/v1/nope", "/api/v1", "/api/v1/", "/api/v1/tables/x/y", "/api/v1/matches/1/2/3"] {
        let resp = server.http.get(server.url(path)).send().await.unwrap();
        let (status, code, message) = api_error(resp).await;
        assert_eq!((status, code), (404, ErrorCode::NotFound), "{path}");
        assert!(message.contains("/api/v1/openapi.json"), "{message}");
    }
    let resp = server.http.post(server.url("/api/v1/nope")).send().await.unwrap();
    assert_eq!(api_error(resp).await.1, ErrorCode::NotFound);
    // An unknown table is still table_not_found.
    let resp = server.http.get(server.url(&format!("/api/v1/tables/{}", uuid::Uuid::new_v4()))).send().await;
    assert_eq!(api_error(resp.unwrap()).await.1, ErrorCode::TableNotFound);
    // Outside the API the web client's 404 stays.
    let resp = server.http.get(server.url("/no-such-page.html")).send().await.unwrap();
    assert_eq!(resp.status(), 404);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_methods_are_json_405s_with_allow() {
    let server = spawn_server(test_config()).await;
    let id = server.create_table(TableOptions::default()).await.table;
    for (method, path, allowed) in [
        (reqwest::Method::DELETE, "/api/v1/tables".to_owned(), vec!["GET", "POST"]),
        (reqwest::Method::PUT, format!("/api/v1/tables/{id}"), vec!["GET"]),
        (reqwest::Method::POST, "/api/v1/matches".to_owned(), vec!["GET"]),
        (reqwest::Method::PATCH, "/api/v1/openapi.json".to_owned(), vec!["GET"]),
    ] {
        let resp = server.http.request(method.clone(), server.url(&path)).send().await.unwrap();
        let allow = resp.headers().get("allow").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
        for m in &allowed {
            assert!(allow.contains(m), "{method} {path}: Allow {allow:?}");
        }
        assert!(!allow.contains(method.as_str()), "{method} {path}: Allow {allow:?}");
        let (status, code, message) = api_error(resp).await;
        assert_eq!((status, code), (405, ErrorCode::MethodNotAllowed), "{method} {path}");
        assert!(message.contains(method.as_str()) && message.contains("GET"), "{message}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_too_large_or_not_json_are_json_413_and_415() {
    let server = spawn_server(test_config()).await;
    let url = server.url("/api/v1/tables");
    let big = json!({"name": "x".repeat(20_000)}).to_string();
    let resp =
        server.http.post(&url).header("content-type", "application/json").body(big).send().await.unwrap();
    let (status, code, message) = api_error(resp).await;
    assert_eq!((status, code), (413, ErrorCode::BadMessage));
    assert!(message.contains("16384"), "{message}");
    for ct in [Some("text/plain"), Some("application/x-www-form-urlencoded"), None] {
        let mut req = server.http.post(&url).body(r#"{"name":"T"}"#);
        if let Some(ct) = ct {
            req = req.header("content-type", ct);
        }
        let (status, code, message) = api_error(req.send().await.unwrap()).await;
        assert_eq!((status, code), (415, ErrorCode::BadMessage), "{ct:?}");
        assert!(message.contains("application/json"), "{message}");
    }
    // A table is an object: serde alone would read a struct from an array.
    for body in
        ["[]", r#"["T", {}]"#, "null", "7", r#""T""#, r#"{"options": []}"#, r#"{"options": {"rules": []}}"#]
    {
        let resp = server.http.post(&url).header("content-type", "application/json").body(body).send().await;
        let (status, code, message) = api_error(resp.unwrap()).await;
        assert_eq!((status, code), (400, ErrorCode::InvalidOptions), "{body}");
        assert!(message.contains("JSON object"), "{body}: {message}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_query_strings_are_json_400s_in_plain_words() {
    let server = spawn_server(test_config()).await;
    server.create_table(TableOptions::default()).await;
    for (query, needle) in [
        ("/api/v1/tables?limit=abc", "limit must be a whole number from 1 to 1000"),
        ("/api/v1/tables?limit=0", "from 1 to 1000"),
        ("/api/v1/tables?limit=1001", "from 1 to 1000"),
        ("/api/v1/tables?limit=18446744073709551616", "from 1 to 1000"),
        ("/api/v1/tables?phase=nowhere", "phase must be one of lobby"),
        ("/api/v1/tables?open=maybe", "open must be true or false"),
        ("/api/v1/tables?colour=red", "unknown parameter \"colour\""),
        ("/api/v1/tables?open=true&open=false", "given twice"),
        ("/api/v1/matches?limit=201", "from 1 to 200"),
        ("/api/v1/matches?limit=-1", "from 1 to 200"),
        ("/api/v1/matches?phase=lobby", "unknown parameter \"phase\""),
        ("/api/v1/matches?finished=yes", "finished must be true or false"),
        ("/api/v1/matches?before=7", "before must be a table id"),
    ] {
        let (status, code, message) =
            api_error(server.http.get(server.url(query)).send().await.unwrap()).await;
        assert_eq!((status, code), (400, ErrorCode::BadMessage), "{query}");
        assert!(message.contains(needle), "{query}: {message}");
        assert_plain(&message);
    }
    // The edges of the ranges are good.
    for query in
        ["/api/v1/tables?limit=1", "/api/v1/tables?limit=1000&open=true", "/api/v1/matches?limit=200"]
    {
        assert_eq!(server.http.get(server.url(query)).send().await.unwrap().status(), 200, "{query}");
    }
    let one: Vec<Value> =
        server.http.get(server.url("/api/v1/tables?limit=1")).send().await.unwrap().json().await.unwrap();
    assert_eq!(one.len(), 1);
    server.stop().await;
}

fn error_of(msg: &ServerMessage) -> (Option<u32>, ErrorCode, String) {
    match msg {
        ServerMessage::Error { req, code, message } => (*req, *code, message.clone()),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_message_echoes_req_and_speaks_plain_english() {
    let server = spawn_server(test_config()).await;
    let table = server.create_table(TableOptions::default()).await.table;
    let mut c = server.client().await;
    for (i, frame) in [
        r#"{"req":REQ,"type":"fly"}"#,
        r#"{"req":REQ}"#,
        r#"{"req":REQ,"type":7}"#,
        r#"{"req":REQ,"type":"play","card":"ZZ"}"#,
        r#"{"req":REQ,"type":"play","card":12}"#,
        r#"{"req":REQ,"type":"bid"}"#,
        r#"{"req":REQ,"type":"bid","bid":"four"}"#,
        r#"{"req":REQ,"type":"watch","table":"not-a-uuid"}"#,
        r#"{"req":REQ,"type":"join","table":"TABLE","name":5}"#,
        r#"{"req":REQ,"type":"join","table":"TABLE","name":"Ann","seat":"middle"}"#,
        r#"{"req":REQ,"type":"resume","table":"TABLE","token":5}"#,
    ]
    .into_iter()
    .enumerate()
    {
        let req = 100 + u32::try_from(i).unwrap();
        let frame = frame.replace("REQ", &req.to_string()).replace("TABLE", &table.to_string());
        c.send_raw(&frame).await;
        let (echoed, code, message) = error_of(&c.recv().await);
        assert_eq!((echoed, code), (Some(req), ErrorCode::BadMessage), "{frame}: {message}");
        assert_plain(&message);
    }
    // Without a readable req there is nothing to echo.
    for frame in ["not json", "[1]", r#"{"type":"ping","req":-3}"#, r#"{"type":"ping","req":"9"}"#] {
        c.send_raw(frame).await;
        let (echoed, code, message) = error_of(&c.recv().await);
        assert_eq!((echoed, code), (None, ErrorCode::BadMessage), "{frame}");
        assert_plain(&message);
    }
    // The connection is still fine.
    assert!(matches!(c.request(ClientMessage::Ping).await, ServerMessage::Pong { .. }));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bids_out_of_range_of_any_size_are_bid_out_of_range() {
    let server = spawn_server(test_config()).await;
    let created = server.create_table(TableOptions::default()).await;
    let mut c = server.client().await;
    // Before attaching, the answer is not_attached whatever the number.
    c.send_raw(r#"{"type":"bid","bid":1000,"req":1}"#).await;
    assert_eq!(error_of(&c.recv().await).1, ErrorCode::NotAttached);
    c.join(created.table, "Ann", None).await;
    let r = c.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    assert!(matches!(r, ServerMessage::Ack { .. }), "{r:?}");
    let r = c.request(ClientMessage::Start { owner_token: Some(created.owner_token) }).await;
    assert!(matches!(r, ServerMessage::Ack { .. }), "{r:?}");
    for (i, bid) in
        ["14", "255", "256", "1000", "-1", "1e9", "99999999999999999999", "-1e300"].into_iter().enumerate()
    {
        let req = 50 + u32::try_from(i).unwrap();
        c.send_raw(&format!(r#"{{"type":"bid","bid":{bid},"req":{req}}}"#)).await;
        let (echoed, code, message) = error_of(&c.reply_to(req).await);
        assert_eq!((echoed, code), (Some(req), ErrorCode::BidOutOfRange), "{bid}: {message}");
        assert!(message.starts_with("bid must be from 0 to 13 (got "), "{bid}: {message}");
        assert_plain(&message);
    }
    // A bid that is not a whole number is malformed, not out of range.
    c.send_raw(r#"{"type":"bid","bid":2.5,"req":90}"#).await;
    assert_eq!(error_of(&c.reply_to(90).await).1, ErrorCode::BadMessage);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_is_acknowledged_on_any_connection() {
    let server = spawn_server(test_config()).await;
    let table = server.create_table(TableOptions::default()).await.table;
    // Not attached yet: acknowledged, and the connection can still join.
    let mut c = server.client().await;
    let r = c.request(ClientMessage::Closing).await;
    assert!(matches!(r, ServerMessage::Ack { req: Some(1) }), "{r:?}");
    c.join(table, "Ann", None).await;
    assert!(matches!(c.request(ClientMessage::Closing).await, ServerMessage::Ack { .. }));
    // A spectator too.
    let mut w = server.client().await;
    assert!(matches!(
        w.request(ClientMessage::Watch { protocol: Some(spades_protocol::PROTOCOL_VERSION), table }).await,
        ServerMessage::Watching { .. }
    ));
    assert!(matches!(w.request(ClientMessage::Closing).await, ServerMessage::Ack { .. }));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_that_could_spoof_are_refused() {
    let server = spawn_server(test_config()).await;
    let table = server.create_table(TableOptions::default()).await.table;
    let mut c = server.client().await;
    for name in ["\u{202E}nnA", "An\u{200B}n", "Ann\u{2066}", "\u{FEFF}Ann", "A\u{061C}nn", "Ann\u{200F}"] {
        let r = c.request(join_message(table, name, None, None)).await;
        let (_, code, message) = error_of(&r);
        assert_eq!(code, ErrorCode::InvalidName, "{name:?}");
        assert!(message.contains("invisible"), "{message}");
    }
    let (_, _) = c.join(table, "مريم", None).await;
    for name in ["Tab\u{202D}le", "\u{2060}Table"] {
        let resp =
            server.http.post(server.url("/api/v1/tables")).json(&json!({"name": name})).send().await.unwrap();
        let (status, code, _) = api_error(resp).await;
        assert_eq!((status, code), (400, ErrorCode::InvalidName), "{name:?}");
    }
    server.stop().await;
}
