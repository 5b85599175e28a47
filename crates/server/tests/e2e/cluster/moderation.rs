//! Moderation in a cluster: the first operator made on the command line
//! against the shared PostgreSQL store, and a ban made through one node
//! closing the player's sockets on every node within seconds; while it
//! holds, no node seats the account. A chat message removed through one
//! node goes from the sockets of its table on every node; a table closed
//! through one node tells them why and ends.

use std::time::Duration;

use serde_json::{Value, json};
use spades_protocol::{ClientMessage, ErrorCode, PROTOCOL_VERSION, ServerMessage, TableOptions};

use super::{Env, Node, http};
use crate::helpers::{Client, code_of};

/// Two nodes; Ann signed in through n1 and seated at a table n1 runs;
/// Olive signed in through n2 and made an operator on the command line.
struct Scene {
    n1: Node,
    n2: Node,
    http: reqwest::Client,
    /// Ann's sign-in answer (account and bearer token).
    ann: Value,
    olive_token: String,
    table: uuid::Uuid,
    /// Ann's seat, through n1.
    seat: Client,
}

impl Scene {
    async fn new(env: &Env) -> Scene {
        let (n1, n2) = (Node::start(env, "n1").await, Node::start(env, "n2").await);
        let http = http();
        let sign_in = |node: &Node, n: u32, name: &str| {
            http.post(format!("http://{}/api/v1/accounts/guest", node.addr))
                .json(&json!({"device_secret": format!("moderation-device-secret-{n:016}"), "name": name, "session": "bearer"}))
                .send()
        };
        let ann: Value = sign_in(&n1, 1, "Ann").await.unwrap().json().await.unwrap();
        let olive: Value = sign_in(&n2, 2, "Olive").await.unwrap().json().await.unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_spades-server"))
            .args(["admin", "grant", "Olive"])
            .env("SPADES_STORAGE__DATABASE_URL", &env.url)
            .env("SPADES_STORAGE__DATA_DIR", env.data.join("admin"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let table: spades_protocol::CreatedTable = http
            .post(format!("http://{}/api/v1/tables", n1.addr))
            .json(&spades_protocol::CreateTable { name: None, options: TableOptions::default() })
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let mut seat = Client::connect_with(n1.addr, &[("authorization", &Scene::bearer_of(&ann))]).await;
        let joined = seat
            .request(ClientMessage::Join {
                protocol: Some(PROTOCOL_VERSION),
                table: table.table,
                name: None,
                seat: None,
                invite: None,
            })
            .await;
        assert!(matches!(joined, ServerMessage::Joined { .. }), "{joined:?}");
        let olive_token = olive["token"].as_str().unwrap().to_owned();
        Scene { n1, n2, http, ann, olive_token, table: table.table, seat }
    }

    fn bearer_of(signed: &Value) -> String {
        format!("Bearer {}", signed["token"].as_str().unwrap())
    }

    fn url(node: &Node, path: &str) -> String {
        format!("http://{}{path}", node.addr)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_ban_made_through_one_node_closes_the_players_sockets_on_every_node() {
    let Some(env) = Env::new().await else { return };
    let Scene { n1, n2, http, ann, olive_token, table, mut seat } = Scene::new(&env).await;
    // Ann watches her table through n2 too.
    let bearer = Scene::bearer_of(&ann);
    let mut watching = Client::connect_with(n2.addr, &[("authorization", &bearer)]).await;
    let watched = watching.request(ClientMessage::Watch { protocol: Some(PROTOCOL_VERSION), table }).await;
    assert!(matches!(watched, ServerMessage::Watching { .. }), "{watched:?}");

    // Banned through n2: both sockets are told and closed within seconds.
    let ban = http
        .post(Scene::url(
            &n2,
            &format!("/api/v1/admin/accounts/{}/sanctions", ann["account"]["id"].as_str().unwrap()),
        ))
        .bearer_auth(&olive_token)
        .json(&json!({"kind": "ban", "reason": "cheating"}))
        .send()
        .await
        .unwrap();
    assert_eq!(ban.status(), 201);
    for (name, c) in [("n1", &mut seat), ("n2", &mut watching)] {
        let mut told = None;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !c.ended && tokio::time::Instant::now() < deadline {
            if let Some(msg) = c.try_recv(Duration::from_millis(500)).await
                && let Some(code) = code_of(&msg)
            {
                told = Some(code);
            }
        }
        assert_eq!(told, Some(ErrorCode::Banned), "the socket on {name}");
        assert_eq!(c.closed.as_ref().map(|c| c.0), Some(4006), "the socket on {name}: {:?}", c.closed);
    }
    // No node seats the account while the ban holds.
    for node in [&n1, &n2] {
        let mut again = Client::connect_with(node.addr, &[("authorization", &bearer)]).await;
        let resumed = again
            .request(ClientMessage::Resume { protocol: Some(PROTOCOL_VERSION), table, token: None })
            .await;
        assert_eq!(code_of(&resumed), Some(ErrorCode::Banned), "{resumed:?}");
    }
    drop((n1, n2));
    env.drop_db().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_chat_message_removed_through_another_node_goes_from_every_socket_at_the_table() {
    let Some(env) = Env::new().await else { return };
    let Scene { n1, n2, http, olive_token, table, mut seat, .. } = Scene::new(&env).await;
    // A spectator watches Ann's table through n2.
    let mut watching = Client::connect(n2.addr).await;
    let watched = watching.request(ClientMessage::Watch { protocol: Some(PROTOCOL_VERSION), table }).await;
    assert!(matches!(watched, ServerMessage::Watching { .. }), "{watched:?}");
    let said = seat.request(ClientMessage::Chat { text: "rude words".into() }).await;
    assert!(code_of(&said).is_none(), "{said:?}");

    // Kept in the shared store, read and removed through n2.
    let chat_path = format!("/api/v1/admin/tables/{table}/chat");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let id = loop {
        let lines: Value = http
            .get(Scene::url(&n2, &chat_path))
            .bearer_auth(&olive_token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if let Some(id) = lines[0]["id"].as_u64() {
            assert_eq!(lines[0]["text"], json!("rude words"));
            break id;
        }
        assert!(tokio::time::Instant::now() < deadline, "the message was not kept: {lines}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let removed = http
        .post(Scene::url(&n2, &format!("{chat_path}/{id}/remove")))
        .bearer_auth(&olive_token)
        .json(&json!({"reason": "insults"}))
        .send()
        .await
        .unwrap();
    assert_eq!(removed.status(), 200);
    for (name, c) in [("n1", &mut seat), ("n2", &mut watching)] {
        let mut told = false;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !told && tokio::time::Instant::now() < deadline {
            told = matches!(c.try_recv(Duration::from_millis(200)).await, Some(ServerMessage::ChatRemoved { id: r }) if r == id);
        }
        assert!(told, "the socket on {name} was not told");
    }
    drop((n1, n2));
    env.drop_db().await;
}

#[tokio::test]
async fn a_table_closed_through_another_node_tells_every_socket_why_and_ends() {
    let Some(env) = Env::new().await else { return };
    let Scene { n1, n2, http, olive_token, table, mut seat, .. } = Scene::new(&env).await;
    // A spectator watches Ann's table through n2.
    let mut watching = Client::connect(n2.addr).await;
    let watched = watching.request(ClientMessage::Watch { protocol: Some(PROTOCOL_VERSION), table }).await;
    assert!(matches!(watched, ServerMessage::Watching { .. }), "{watched:?}");

    // Closed through n2; n1 runs it.
    let closed = http
        .post(Scene::url(&n2, &format!("/api/v1/admin/tables/{table}/close")))
        .bearer_auth(&olive_token)
        .json(&json!({"reason": "players abuse each other"}))
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status(), 200);
    let entry: Value = closed.json().await.unwrap();
    assert_eq!(
        (entry["action"].as_str(), entry["table"].as_str()),
        (Some("close_table"), Some(table.to_string().as_str()))
    );
    for (name, c) in [("n1", &mut seat), ("n2", &mut watching)] {
        let mut told = None;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !c.ended && tokio::time::Instant::now() < deadline {
            if let Some(ServerMessage::Error { code: ErrorCode::TableClosed, message, .. }) =
                c.try_recv(Duration::from_millis(200)).await
            {
                told = Some(message);
            }
        }
        assert_eq!(
            told.as_deref(),
            Some("an operator closed this table: players abuse each other"),
            "{name}"
        );
        assert_eq!(c.closed.as_ref().map(|c| c.0), Some(4003), "{name}");
    }
    // Gone from both nodes; closing it again finds nothing.
    for node in [&n1, &n2] {
        let status = http.get(Scene::url(node, &format!("/api/v1/tables/{table}"))).send().await.unwrap();
        assert_eq!(status.status(), 404);
    }
    let again = http
        .post(Scene::url(&n1, &format!("/api/v1/admin/tables/{table}/close")))
        .bearer_auth(&olive_token)
        .json(&json!({"reason": "again"}))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 404);
    drop((n1, n2));
    env.drop_db().await;
}
