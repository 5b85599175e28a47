//! Moderation over the documented REST API and WebSocket protocol: the
//! first operator made by `spades-server admin grant` (the real binary, on
//! the server's SQLite store), every operator route refused to others and
//! to other sites, suspensions that close the player's socket and end by
//! themselves, mutes, bans and their lifting, and the audit log.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use spades_protocol::{ClientMessage, ErrorCode, PROTOCOL_VERSION, ServerMessage, TableOptions};

use crate::accounts::{Answer, bearer, join, refused, resume, secret, send};
use crate::helpers::*;

/// A server on a SQLite store of its own (so that the command line can
/// reach it), and the store's directory.
async fn server() -> (TestServer, PathBuf) {
    server_with(|_| {}).await
}

/// As [`server`], its configuration changed by `change` first.
pub(crate) async fn server_with(change: impl FnOnce(&mut spades_server::Config)) -> (TestServer, PathBuf) {
    let dir = std::env::temp_dir().join(format!("spades-moderation-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut config = test_config();
    config.storage.in_memory = false;
    config.storage.data_dir = dir.clone();
    // A site the server lets in elsewhere: the operator routes refuse it
    // all the same.
    config.server.allowed_origins = vec!["http://evil.example".into()];
    change(&mut config);
    let server = spawn_server(config).await;
    assert!(ready(&server.http, &format!("http://{}", server.addr)).await, "the server did not start");
    (server, dir)
}

/// `spades-server admin ARGS` on the store in `dir`: exit status and output.
fn admin(dir: &PathBuf, args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_spades-server"))
        .current_dir(dir)
        .arg("admin")
        .args(args)
        .env("SPADES_STORAGE__DATA_DIR", dir)
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// The first operator, Olive, made on the command line: her token.
pub(crate) async fn operator(server: &TestServer, dir: &PathBuf) -> String {
    let (token, _) = bearer(server, 900, "Olive").await;
    let (ok, said) = admin(dir, &["grant", "olive"]);
    assert!(ok && said.contains("Olive") && said.contains("is an operator now"), "{said}");
    token
}

pub(crate) async fn get(server: &TestServer, token: &str, path: &str) -> Answer {
    send(server.http.get(server.url(path)).bearer_auth(token)).await
}

pub(crate) async fn post(server: &TestServer, token: &str, path: &str, body: Value) -> Answer {
    send(server.http.post(server.url(path)).bearer_auth(token).json(&body)).await
}

async fn put(server: &TestServer, token: &str, path: &str, body: Value) -> Answer {
    send(server.http.put(server.url(path)).bearer_auth(token).json(&body)).await
}

fn in_ms(ms: u64) -> u64 {
    spades_server::time::now_ms() + ms
}

/// A socket of the session `token`, seated at `table`.
pub(crate) async fn seated(server: &TestServer, token: &str, table: uuid::Uuid) -> Client {
    let mut c = Client::connect_with(server.addr, &[("authorization", &format!("Bearer {token}"))]).await;
    let joined = c.request(join(table, None)).await;
    assert!(matches!(joined, ServerMessage::Joined { .. } | ServerMessage::Resumed { .. }), "{joined:?}");
    c
}

/// A socket of the session `token`, watching `table`.
pub(crate) async fn watching(server: &TestServer, token: &str, table: uuid::Uuid) -> Client {
    let mut c = Client::connect_with(server.addr, &[("authorization", &format!("Bearer {token}"))]).await;
    let watched = c.request(ClientMessage::Watch { protocol: Some(PROTOCOL_VERSION), table }).await;
    assert!(matches!(watched, ServerMessage::Watching { .. }), "{watched:?}");
    c
}

/// A table the session `token` creates, fills with bots and starts: its
/// id, and the seated socket.
async fn own_match(server: &TestServer, token: &str) -> (uuid::Uuid, Client) {
    let made = send(server.http.post(server.url("/api/v1/tables")).bearer_auth(token).json(&json!({}))).await;
    let created: spades_protocol::CreatedTable = serde_json::from_value(made.body).unwrap();
    let mut seat = seated(server, token, created.table).await;
    for msg in [ClientMessage::AddBots { owner_token: None }, ClientMessage::Start { owner_token: None }] {
        let done = seat.request(msg).await;
        assert!(code_of(&done).is_none(), "{done:?}");
    }
    (created.table, seat)
}

/// Reads `c` until it closes (within five seconds): the error frames it
/// was sent on the way, and its close code.
async fn until_closed(c: &mut Client) -> (Vec<(ErrorCode, String)>, Option<u16>) {
    let mut errors = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !c.ended && tokio::time::Instant::now() < deadline {
        if let Some(ServerMessage::Error { code, message, .. }) = c.try_recv(Duration::from_millis(500)).await
        {
            errors.push((code, message));
        }
    }
    (errors, c.closed.as_ref().map(|c| c.0))
}

#[tokio::test]
async fn the_first_operator_is_made_on_the_command_line_and_operator_routes_refuse_everyone_else() {
    let (server, dir) = server().await;
    let (bo, bo_id) = bearer(&server, 1, "Bo").await;
    let (olive, olive_id) = bearer(&server, 2, "Olive").await;
    let (ok, said) = admin(&dir, &["list"]);
    assert!(ok && said.contains("no operators yet"), "{said}");
    // Before the command, Olive is nobody special.
    refused(&get(&server, &olive, "/api/v1/admin/accounts?q=bo").await, 403, ErrorCode::NotOperator);
    let (ok, said) = admin(&dir, &["grant", "Nobody"]);
    assert!(!ok && said.contains("no account goes by"), "{said}");
    let (ok, said) = admin(&dir, &["grant", "OLIVE", "--reason", "runs the club"]);
    assert!(ok && said.contains("is an operator now"), "{said}");
    let (ok, said) = admin(&dir, &["grant", "olive"]);
    assert!(ok && said.contains("was already an operator"), "{said}");
    let me = get(&server, &olive, "/api/v1/me").await;
    assert_eq!((me.body["operator"].clone(), me.body["restrictions"].clone()), (json!(true), json!([])));
    assert_eq!(get(&server, &bo, "/api/v1/me").await.body["operator"], json!(false));

    // Every operator route: 401 without a session, 403 for a player, 403
    // for a request another site's page made, even with the operator's
    // session.
    let sanction = json!({"kind": "mute", "reason": "spam"});
    let routes: Vec<(&str, String, Option<Value>)> = vec![
        ("GET", "/api/v1/admin/accounts?q=bo".into(), None),
        ("GET", format!("/api/v1/admin/accounts/{bo_id}"), None),
        ("POST", format!("/api/v1/admin/accounts/{bo_id}/sanctions"), Some(sanction.clone())),
        ("POST", format!("/api/v1/admin/sanctions/{bo_id}/lift"), Some(json!({"reason": "x"}))),
        ("GET", "/api/v1/admin/operators".into(), None),
        ("GET", "/api/v1/admin/audit".into(), None),
        ("GET", format!("/api/v1/admin/tables/{bo_id}/chat"), None),
        ("POST", format!("/api/v1/admin/tables/{bo_id}/chat/1/remove"), Some(json!({"reason": "x"}))),
        // Last: it makes Bo an operator.
        (
            "PUT",
            format!("/api/v1/admin/accounts/{bo_id}/operator"),
            Some(json!({"operator": true, "reason": "x"})),
        ),
    ];
    for (method, path, body) in &routes {
        let req = |auth: Option<&str>, headers: &[(&str, &str)]| {
            let mut r = server.http.request(method.parse().unwrap(), server.url(path));
            if let Some(token) = auth {
                r = r.bearer_auth(token);
            }
            for (k, v) in headers {
                r = r.header(*k, *v);
            }
            if let Some(body) = body {
                r = r.json(body);
            }
            r
        };
        refused(&send(req(None, &[])).await, 401, ErrorCode::Unauthorized);
        refused(&send(req(Some(&bo), &[])).await, 403, ErrorCode::NotOperator);
        let allowed_elsewhere = send(req(Some(&olive), &[("origin", "http://evil.example")])).await;
        let said = refused(&allowed_elsewhere, 403, ErrorCode::BadMessage);
        assert!(said.contains("operator routes"), "{method} {path}: {said}");
        let cross = send(req(Some(&olive), &[("sec-fetch-site", "cross-site")])).await;
        refused(&cross, 403, ErrorCode::BadMessage);
        // The same request of the operator's own page goes through.
        let own = send(req(Some(&olive), &[("sec-fetch-site", "same-origin")])).await;
        assert!(own.status < 400 || own.status == 404, "{method} {path}: {} {}", own.status, own.body);
    }
    // Nothing was changed by the refused requests: one mute, made by the
    // operator's own request above.
    let dossier = get(&server, &olive, &format!("/api/v1/admin/accounts/{bo_id}")).await;
    assert_eq!(dossier.status, 200, "{}", dossier.body);
    assert_eq!(dossier.body["sanctions"].as_array().unwrap().len(), 1, "{}", dossier.body);
    assert_eq!(dossier.body["account"]["operator"], json!(true), "made an operator by the PUT");

    // Found by a part of the name, by the whole name in another case, by id.
    let found = get(&server, &olive, "/api/v1/admin/accounts?q=LIV").await;
    assert_eq!(found.body.as_array().unwrap().len(), 1, "{}", found.body);
    assert_eq!(found.body[0]["id"], json!(olive_id));
    let found = get(&server, &olive, &format!("/api/v1/admin/accounts?q={bo_id}")).await;
    assert_eq!(found.body[0]["name"], json!("Bo"));
    // White space at either end is not looked for; a blank query finds nobody.
    let found = get(&server, &olive, "/api/v1/admin/accounts?q=%20liv%20").await;
    assert_eq!(found.body[0]["id"], json!(olive_id), "{}", found.body);
    bearer(&server, 3, "Big Al").await;
    let found = get(&server, &olive, "/api/v1/admin/accounts?q=%20").await;
    assert_eq!((found.status, found.body.clone()), (200, json!([])));
    refused(&get(&server, &olive, "/api/v1/admin/accounts?q=").await, 400, ErrorCode::BadMessage);
    refused(&get(&server, &olive, "/api/v1/admin/accounts?name=bo").await, 400, ErrorCode::BadMessage);

    // Operators grant and revoke; nobody revokes their own role.
    let own = put(
        &server,
        &bo,
        &format!("/api/v1/admin/accounts/{olive_id}/operator"),
        json!({"operator": false, "reason": "Olive stepped down"}),
    )
    .await;
    assert_eq!((own.status, &own.body["operator"]), (200, &json!(false)), "{}", own.body);
    refused(&get(&server, &olive, "/api/v1/admin/operators").await, 403, ErrorCode::NotOperator);
    let self_revoke = put(
        &server,
        &bo,
        &format!("/api/v1/admin/accounts/{bo_id}/operator"),
        json!({"operator": false, "reason": "tired"}),
    )
    .await;
    refused(&self_revoke, 409, ErrorCode::InvalidOptions);
    let operators = get(&server, &bo, "/api/v1/admin/operators").await;
    let names: Vec<&str> =
        operators.body.as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Bo"]);
    let (ok, said) = admin(&dir, &["list"]);
    assert!(ok && said.contains("Bo (") && !said.contains("Olive"), "{said}");

    // The audit log: every change, who (the command line has no operator),
    // what, to whom and why, the newest first; refused requests left none.
    let log = get(&server, &bo, "/api/v1/admin/audit").await;
    let entries = log.body.as_array().unwrap();
    let summary: Vec<(Option<&str>, &str, &str, &str)> = entries
        .iter()
        .map(|e| {
            (
                e["operator"]["name"].as_str(),
                e["action"].as_str().unwrap(),
                e["account"]["name"].as_str().unwrap(),
                e["reason"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (Some("Bo"), "revoke_operator", "Olive", "Olive stepped down"),
            (Some("Olive"), "grant_operator", "Bo", "x"),
            (Some("Olive"), "mute", "Bo", "spam"),
            (None, "grant_operator", "Olive", "runs the club"),
        ]
    );
    let page = get(&server, &bo, &format!("/api/v1/admin/audit?limit=2&before={}", entries[1]["id"])).await;
    assert_eq!(page.body.as_array().unwrap().len(), 2);
    assert_eq!(page.body[0]["action"], json!("mute"));
    refused(&get(&server, &bo, "/api/v1/admin/audit?limit=0").await, 400, ErrorCode::BadMessage);
    // Nothing in the API edits the log.
    let edit = send(server.http.delete(server.url("/api/v1/admin/audit")).bearer_auth(&bo)).await;
    assert_eq!(edit.status, 405);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_suspension_closes_the_players_socket_refuses_play_and_ends_by_itself() {
    let (server, dir) = server().await;
    let olive = operator(&server, &dir).await;
    let (ann, ann_id) = bearer(&server, 1, "Ann").await;
    // Ann's own table, with bots, started: a match in her record.
    let (table, mut seat) = own_match(&server, &ann).await;
    let mut anonymous = Client::connect(server.addr).await;
    assert!(matches!(
        anonymous.request(ClientMessage::Watch { protocol: Some(PROTOCOL_VERSION), table }).await,
        ServerMessage::Watching { .. }
    ));

    // Refusals of a malformed sanction change nothing.
    let path = format!("/api/v1/admin/accounts/{ann_id}/sanctions");
    for (body, why) in [
        (json!({"kind": "suspend", "reason": "abuse"}), "seconds"),
        (json!({"kind": "ban", "reason": "abuse", "seconds": 60}), "seconds"),
        (json!({"kind": "suspend", "reason": "abuse", "seconds": 0}), "from 1 to ten years"),
        (json!({"kind": "suspend", "reason": "abuse", "seconds": 400_000_000}), "from 1 to ten years"),
        (json!({"kind": "suspend", "reason": " \n ", "seconds": 60}), "a reason is"),
        (json!({"kind": "mute", "reason": "bell\u{7}", "seconds": 60}), "a reason is"),
        (json!({"kind": "expel", "reason": "abuse"}), "kind"),
    ] {
        let said = refused(&post(&server, &olive, &path, body).await, 400, ErrorCode::InvalidOptions);
        assert!(said.contains(why), "{said}");
    }
    let nobody = post(
        &server,
        &olive,
        &format!("/api/v1/admin/accounts/{}/sanctions", uuid::Uuid::new_v4()),
        json!({"kind": "mute", "reason": "x"}),
    )
    .await;
    refused(&nobody, 404, ErrorCode::NotFound);
    assert_eq!(get(&server, &ann, "/api/v1/me").await.body["restrictions"], json!([]));

    // Suspended for four seconds: the seated socket is told why and closed.
    let earliest = in_ms(4_000);
    let made =
        post(&server, &olive, &path, json!({"kind": "suspend", "reason": " abuse in chat ", "seconds": 4}))
            .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let until = made.body["until"].as_u64().unwrap();
    assert!((earliest..earliest + 2_000).contains(&until), "{until} for {earliest}");
    assert_eq!(made.body["reason"], json!("abuse in chat"), "kept trimmed");
    assert_eq!(
        (made.body["active"].clone(), made.body["made_by"]["name"].clone()),
        (json!(true), json!("Olive"))
    );
    let (errors, code) = until_closed(&mut seat).await;
    assert_eq!(code, Some(4006), "{errors:?}");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, ErrorCode::Suspended);
    assert!(
        errors[0].1.contains("suspended until") && errors[0].1.ends_with(": abuse in chat"),
        "{}",
        errors[0].1
    );
    // The anonymous watcher stays.
    assert!(matches!(anonymous.request(ClientMessage::Ping).await, ServerMessage::Pong { .. }));

    // While it holds: no seat, no watching signed in, no new table.
    let mut again = Client::connect_with(server.addr, &[("authorization", &format!("Bearer {ann}"))]).await;
    for msg in [resume(table, None), ClientMessage::Watch { protocol: Some(PROTOCOL_VERSION), table }] {
        match again.request(msg).await {
            ServerMessage::Error { code, message, .. } => {
                assert_eq!(code, ErrorCode::Suspended);
                assert!(message.contains("abuse in chat"), "{message}");
            }
            other => panic!("a suspended account attached: {other:?}"),
        }
    }
    let create =
        send(server.http.post(server.url("/api/v1/tables")).bearer_auth(&ann).json(&json!({}))).await;
    assert!(refused(&create, 403, ErrorCode::Suspended).contains("abuse in chat"));
    let me = get(&server, &ann, "/api/v1/me").await;
    assert_eq!(
        me.body["restrictions"],
        json!([{"kind": "suspend", "reason": "abuse in chat", "until": until}])
    );
    let found = get(&server, &olive, "/api/v1/admin/accounts?q=ann").await;
    assert_eq!(found.body[0]["active"][0]["kind"], json!("suspend"), "{}", found.body);
    let dossier = get(&server, &olive, &format!("/api/v1/admin/accounts/{ann_id}")).await;
    assert_eq!(dossier.body["matches"][0]["table"], json!(table), "{}", dossier.body);
    assert_eq!(dossier.body["sessions"], json!(1));

    // It ends by itself: back at the seat, and a new table.
    let wait = until.saturating_sub(spades_server::time::now_ms()) + 200;
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let back = again.request(resume(table, None)).await;
    assert!(matches!(back, ServerMessage::Resumed { .. }), "{back:?}");
    let create =
        send(server.http.post(server.url("/api/v1/tables")).bearer_auth(&ann).json(&json!({}))).await;
    assert_eq!(create.status, 201, "{}", create.body);
    assert_eq!(get(&server, &ann, "/api/v1/me").await.body["restrictions"], json!([]));
    let dossier = get(&server, &olive, &format!("/api/v1/admin/accounts/{ann_id}")).await;
    assert_eq!(dossier.body["sanctions"][0]["active"], json!(false), "the history keeps it");
    // A sanction that ran out is not lifted.
    let id = made.body["id"].as_str().unwrap();
    let late =
        post(&server, &olive, &format!("/api/v1/admin/sanctions/{id}/lift"), json!({"reason": "late"})).await;
    refused(&late, 409, ErrorCode::InvalidOptions);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_mute_refuses_chat_and_a_ban_holds_until_it_is_lifted() {
    let (server, dir) = server().await;
    let olive = operator(&server, &dir).await;
    let (ann, ann_id) = bearer(&server, 1, "Ann").await;
    let table = server.create_table(TableOptions::default()).await.table;
    let mut seat = seated(&server, &ann, table).await;
    let path = format!("/api/v1/admin/accounts/{ann_id}/sanctions");
    let chat = |text: &str| ClientMessage::Chat { text: text.to_owned() };
    let chatted = |msg: &ServerMessage| !matches!(msg, ServerMessage::Error { .. });

    // Muted: chat refused with the reason, play goes on.
    let mute = post(&server, &olive, &path, json!({"kind": "mute", "reason": "spam"})).await;
    assert_eq!(mute.status, 201, "{}", mute.body);
    match seat.request(chat("hello")).await {
        ServerMessage::Error { code, message, .. } => {
            assert_eq!(code, ErrorCode::Muted);
            assert_eq!(message, "you are muted in chat: spam");
        }
        other => panic!("a muted player chatted: {other:?}"),
    }
    assert!(matches!(seat.request(ClientMessage::Ping).await, ServerMessage::Pong { .. }), "still connected");
    let id = mute.body["id"].as_str().unwrap().to_owned();
    let lifted =
        post(&server, &olive, &format!("/api/v1/admin/sanctions/{id}/lift"), json!({"reason": "apologised"}))
            .await;
    assert_eq!(lifted.status, 200, "{}", lifted.body);
    assert_eq!(
        (lifted.body["active"].clone(), lifted.body["lifted"]["reason"].clone()),
        (json!(false), json!("apologised"))
    );
    let said = seat.request(chat("sorry")).await;
    assert!(chatted(&said), "{said:?}");
    refused(
        &post(&server, &olive, &format!("/api/v1/admin/sanctions/{id}/lift"), json!({"reason": "again"}))
            .await,
        409,
        ErrorCode::InvalidOptions,
    );

    // Banned: closed, and refused until lifted.
    let ban = post(&server, &olive, &path, json!({"kind": "ban", "reason": "cheating"})).await;
    assert_eq!(ban.status, 201, "{}", ban.body);
    assert!(ban.body.get("until").is_none());
    let (errors, code) = until_closed(&mut seat).await;
    assert_eq!(code, Some(4006));
    assert_eq!(errors, [(ErrorCode::Banned, "your account is banned from this server: cheating".to_owned())]);
    let mut again = Client::connect_with(server.addr, &[("authorization", &format!("Bearer {ann}"))]).await;
    let resume = resume(table, None);
    assert_eq!(code_of(&again.request(resume.clone()).await), Some(ErrorCode::Banned));
    let id = ban.body["id"].as_str().unwrap().to_owned();
    let lifted = post(
        &server,
        &olive,
        &format!("/api/v1/admin/sanctions/{id}/lift"),
        json!({"reason": "appeal upheld"}),
    )
    .await;
    assert_eq!(lifted.status, 200, "{}", lifted.body);
    assert!(matches!(again.request(resume).await, ServerMessage::Resumed { .. }));
    let actions: Vec<String> = get(&server, &olive, "/api/v1/admin/audit")
        .await
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(actions, ["lift", "ban", "lift", "mute", "grant_operator"]);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads `c` until a chat frame with `text` (within five seconds): its id.
pub(crate) async fn heard(c: &mut Client, text: &str) -> u64 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while tokio::time::Instant::now() < deadline {
        if let Some(ServerMessage::Chat { id, text: said, .. }) = c.try_recv(Duration::from_millis(200)).await
            && said == text
        {
            return id;
        }
    }
    panic!("{text:?} was not heard");
}

/// Reads `c` for `wait`: the ids of the chat frames and of the removals.
async fn chat_frames(c: &mut Client, wait: Duration) -> (Vec<u64>, Vec<u64>) {
    let (mut said, mut removed) = (Vec::new(), Vec::new());
    let deadline = tokio::time::Instant::now() + wait;
    while tokio::time::Instant::now() < deadline {
        match c.try_recv(Duration::from_millis(100)).await {
            Some(ServerMessage::Chat { id, .. }) => said.push(id),
            Some(ServerMessage::ChatRemoved { id }) => removed.push(id),
            _ => {}
        }
    }
    (said, removed)
}

/// The chat kept of `table`, as an operator reads it, until it holds `n`
/// messages (written off the table's task: within a few seconds).
pub(crate) async fn kept(server: &TestServer, olive: &str, table: uuid::Uuid, n: usize) -> Vec<Value> {
    let path = format!("/api/v1/admin/tables/{table}/chat");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let page = get(server, olive, &path).await;
        assert_eq!(page.status, 200, "{}", page.body);
        let lines = page.body.as_array().unwrap().clone();
        if lines.len() >= n || tokio::time::Instant::now() > deadline {
            assert_eq!(lines.len(), n, "{}", page.body);
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn chat_is_kept_and_an_operator_removes_a_message_for_everyone_at_the_table() {
    let (server, dir) = server().await;
    let olive = operator(&server, &dir).await;
    let (ann, ann_id) = bearer(&server, 1, "Ann").await;
    let (bo, bo_id) = bearer(&server, 2, "Bo").await;
    let (table, mut ann_seat) = own_match(&server, &ann).await;
    let mut watcher = watching(&server, &bo, table).await;
    let chat = |text: &str| ClientMessage::Chat { text: text.to_owned() };
    for text in ["good luck", "you are all idiots", "gg"] {
        let said = ann_seat.request(chat(text)).await;
        assert!(code_of(&said).is_none(), "{said:?}");
        heard(&mut watcher, text).await;
    }

    // Kept, the newest first, with the writer's account and seat.
    let lines = kept(&server, &olive, table, 3).await;
    let texts: Vec<&str> = lines.iter().map(|l| l["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["gg", "you are all idiots", "good luck"]);
    assert_eq!(
        (lines[1]["account"].as_str(), lines[1]["name"].as_str()),
        (Some(ann_id.as_str()), Some("Ann"))
    );
    assert!(lines[1]["seat"].is_string() && lines[1].get("removed_at").is_none(), "{}", lines[1]);
    let rude = lines[1]["id"].as_u64().unwrap();
    let page =
        get(&server, &olive, &format!("/api/v1/admin/tables/{table}/chat?before={rude}&limit=5")).await;
    assert_eq!(page.body.as_array().unwrap().len(), 1, "paged by number: {}", page.body);
    let dossier = get(&server, &olive, &format!("/api/v1/admin/accounts/{ann_id}")).await;
    assert_eq!(dossier.body["chat"].as_array().unwrap().len(), 3, "{}", dossier.body);
    let none = get(&server, &olive, &format!("/api/v1/admin/accounts/{bo_id}")).await;
    assert_eq!(none.body["chat"], json!([]));

    // Removed: everybody at the table is told, at once; the record says so.
    let remove = format!("/api/v1/admin/tables/{table}/chat/{rude}/remove");
    refused(&post(&server, &olive, &remove, json!({"reason": " "})).await, 400, ErrorCode::InvalidOptions);
    let done = post(&server, &olive, &remove, json!({"reason": "insults"})).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(done.body["text"], json!("you are all idiots"));
    assert!(done.body["removed_at"].as_u64().is_some(), "{}", done.body);
    for c in [&mut ann_seat, &mut watcher] {
        let (_, removed) = chat_frames(c, Duration::from_millis(500)).await;
        assert_eq!(removed, [rude]);
    }
    refused(
        &post(&server, &olive, &remove, json!({"reason": "again"})).await,
        409,
        ErrorCode::InvalidOptions,
    );
    let unknown = format!("/api/v1/admin/tables/{table}/chat/999/remove");
    refused(&post(&server, &olive, &unknown, json!({"reason": "x"})).await, 404, ErrorCode::NotFound);
    let bad = format!("/api/v1/admin/tables/{table}/chat/-1/remove");
    refused(&post(&server, &olive, &bad, json!({"reason": "x"})).await, 404, ErrorCode::NotFound);

    // A connection that comes later is not sent the removed message.
    let mut late = watching(&server, &bo, table).await;
    let (said, removed) = chat_frames(&mut late, Duration::from_millis(500)).await;
    assert_eq!((said.len(), said.contains(&rude), removed.len()), (2, false, 0), "{said:?}");

    // The audit log names the message; the writer's export holds it, marked.
    let audit = get(&server, &olive, "/api/v1/admin/audit").await;
    let entry = &audit.body[0];
    assert_eq!(
        (entry["action"].as_str(), entry["table"].as_str(), entry["message"].as_u64()),
        (Some("remove_chat"), Some(table.to_string().as_str()), Some(rude))
    );
    assert_eq!(
        (entry["account"]["id"].as_str(), entry["reason"].as_str()),
        (Some(ann_id.as_str()), Some("insults"))
    );
    let export = get(&server, &ann, "/api/v1/me/export").await;
    let mine = export.body["chat"].as_array().unwrap();
    assert_eq!(mine.len(), 3, "{}", export.body["chat"]);
    assert!(mine.iter().any(|l| l["id"].as_u64() == Some(rude) && l["removed_at"].is_u64()));
    assert_eq!(get(&server, &bo, "/api/v1/me/export").await.body["chat"], json!([]));
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_player_takes_their_data_as_json_without_a_secret() {
    let (server, dir) = server().await;
    let olive = operator(&server, &dir).await;
    let (ann, ann_id) = bearer(&server, 1, "Ann").await;
    let (table, _seat) = own_match(&server, &ann).await;
    let mute = post(
        &server,
        &olive,
        &format!("/api/v1/admin/accounts/{ann_id}/sanctions"),
        json!({"kind": "mute", "reason": "spam"}),
    )
    .await;
    let lift = format!("/api/v1/admin/sanctions/{}/lift", mute.body["id"].as_str().unwrap());
    assert_eq!(post(&server, &olive, &lift, json!({"reason": "sorry"})).await.status, 200);

    refused(&send(server.http.get(server.url("/api/v1/me/export"))).await, 401, ErrorCode::Unauthorized);
    let resp = server.http.get(server.url("/api/v1/me/export")).bearer_auth(&ann).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-disposition"],
        format!("attachment; filename=\"spades-account-{ann_id}.json\"").as_str()
    );
    assert_eq!(resp.headers()["cache-control"], "no-store");
    let text = resp.text().await.unwrap();
    for secret in [ann.as_str(), secret(1).as_str()] {
        assert!(!text.contains(secret), "a secret is in the export");
    }
    let data: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        (data["account"]["id"].as_str(), data["account"]["name"].as_str()),
        (Some(ann_id.as_str()), Some("Ann"))
    );
    assert_eq!(data["operator"], json!(false));
    assert_eq!(data["identities"].as_array().unwrap().len(), 1, "{}", data["identities"]);
    assert_eq!(data["identities"][0]["kind"], json!("device"));
    assert_eq!(data["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(data["sessions"][0]["current"], json!(true));
    assert_eq!(data["matches"][0]["table"], json!(table), "{}", data["matches"]);
    let sanction = &data["sanctions"][0];
    assert_eq!((sanction["kind"].as_str(), sanction["reason"].as_str()), (Some("mute"), Some("spam")));
    assert!(sanction["lifted_at"].as_u64().is_some() && sanction.get("made_by").is_none(), "{sanction}");
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_seat_resumed_with_its_token_and_no_session_is_held_to_the_accounts_sanctions() {
    let (server, dir) = server().await;
    let olive = operator(&server, &dir).await;
    let (ann, ann_id) = bearer(&server, 1, "Ann").await;
    let table = server.create_table(TableOptions::default()).await.table;
    let mut signed = Client::connect_with(server.addr, &[("authorization", &format!("Bearer {ann}"))]).await;
    let joined = signed.request(join(table, None)).await;
    let ServerMessage::Joined { token, .. } = joined else { panic!("{joined:?}") };
    let resume = resume(table, Some(&token));
    // The seat's token on a connection with no session: Ann's seat, so
    // Ann's mute holds there too.
    let mut tokened = Client::connect(server.addr).await;
    assert!(matches!(tokened.request(resume.clone()).await, ServerMessage::Resumed { .. }));
    let path = format!("/api/v1/admin/accounts/{ann_id}/sanctions");
    assert_eq!(post(&server, &olive, &path, json!({"kind": "mute", "reason": "spam"})).await.status, 201);
    let said = tokened.request(ClientMessage::Chat { text: "hi".into() }).await;
    assert_eq!(code_of(&said), Some(ErrorCode::Muted), "{said:?}");
    // Banned: both connections close, and the token resumes nothing.
    assert_eq!(post(&server, &olive, &path, json!({"kind": "ban", "reason": "cheating"})).await.status, 201);
    for c in [&mut signed, &mut tokened] {
        let (errors, code) = until_closed(c).await;
        assert_eq!(code, Some(4006), "{errors:?}");
        assert_eq!(errors.first().map(|e| e.0), Some(ErrorCode::Banned));
    }
    let mut again = Client::connect(server.addr).await;
    again.send(resume).await;
    let (errors, code) = until_closed(&mut again).await;
    assert_eq!((errors.first().map(|e| e.0), code), (Some(ErrorCode::Banned), Some(4006)), "{errors:?}");
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_banned_operator_can_do_nothing_as_one() {
    let (server, dir) = server().await;
    let olive = operator(&server, &dir).await;
    let (bo, bo_id) = bearer(&server, 1, "Bo").await;
    let (ok, said) = admin(&dir, &["grant", "Bo"]);
    assert!(ok, "{said}");
    assert_eq!(get(&server, &bo, "/api/v1/admin/operators").await.status, 200);
    let path = format!("/api/v1/admin/accounts/{bo_id}/sanctions");
    let ban = post(&server, &olive, &path, json!({"kind": "ban", "reason": "abused the role"})).await;
    assert_eq!(ban.status, 201);
    let said = refused(&get(&server, &bo, "/api/v1/admin/operators").await, 403, ErrorCode::Banned);
    assert!(said.ends_with("abused the role"), "{said}");
    // Not even their own ban can they lift.
    let lift = format!("/api/v1/admin/sanctions/{}/lift", ban.body["id"].as_str().unwrap());
    refused(&post(&server, &bo, &lift, json!({"reason": "mine"})).await, 403, ErrorCode::Banned);
    assert_eq!(post(&server, &olive, &lift, json!({"reason": "appeal"})).await.status, 200);
    assert_eq!(get(&server, &bo, "/api/v1/admin/operators").await.status, 200);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn an_operator_closes_a_table_and_everyone_at_it_is_told_why() {
    let (server, dir) = server().await;
    let olive = operator(&server, &dir).await;
    let (ann, _) = bearer(&server, 1, "Ann").await;
    let (bo, _) = bearer(&server, 2, "Bo").await;
    let (table, mut ann_seat) = own_match(&server, &ann).await;
    let mut watcher = watching(&server, &bo, table).await;
    let close = format!("/api/v1/admin/tables/{table}/close");

    // Operators only, with a reason, a table that runs.
    refused(&post(&server, &ann, &close, json!({"reason": "mine"})).await, 403, ErrorCode::NotOperator);
    refused(&post(&server, &olive, &close, json!({"reason": "\t"})).await, 400, ErrorCode::InvalidOptions);
    let unknown = format!("/api/v1/admin/tables/{}/close", uuid::Uuid::new_v4());
    refused(&post(&server, &olive, &unknown, json!({"reason": "x"})).await, 404, ErrorCode::TableNotFound);
    refused(
        &post(&server, &olive, "/api/v1/admin/tables/nope/close", json!({"reason": "x"})).await,
        404,
        ErrorCode::TableNotFound,
    );

    let closed = post(&server, &olive, &close, json!({"reason": " players abuse each other "})).await;
    assert_eq!(closed.status, 200, "{}", closed.body);
    assert_eq!(
        (closed.body["action"].as_str(), closed.body["table"].as_str(), closed.body["reason"].as_str()),
        (Some("close_table"), Some(table.to_string().as_str()), Some("players abuse each other"))
    );
    // Everybody at it is told why, then the socket closes (4003).
    for c in [&mut ann_seat, &mut watcher] {
        let (errors, code) = until_closed(c).await;
        assert_eq!(
            errors,
            [(ErrorCode::TableClosed, "an operator closed this table: players abuse each other".to_owned())]
        );
        assert_eq!(code, Some(4003));
    }
    // Gone, and not to come back; the record is kept, the match abandoned.
    let status = send(server.http.get(server.url(&format!("/api/v1/tables/{table}")))).await;
    assert_eq!(status.status, 404, "{}", status.body);
    refused(&post(&server, &olive, &close, json!({"reason": "again"})).await, 404, ErrorCode::TableNotFound);
    let record = send(server.http.get(server.url(&format!("/api/v1/matches/{table}")))).await;
    assert_eq!(record.status, 200, "{}", record.body);
    let mut back = Client::connect_with(server.addr, &[("authorization", &format!("Bearer {ann}"))]).await;
    let resumed = back.request(resume(table, None)).await;
    assert_eq!(code_of(&resumed), Some(ErrorCode::TableNotFound), "{resumed:?}");
    let audit = get(&server, &olive, "/api/v1/admin/audit").await;
    assert_eq!(
        (audit.body[0]["action"].as_str(), audit.body[0]["table"].as_str()),
        (Some("close_table"), Some(table.to_string().as_str()))
    );
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
