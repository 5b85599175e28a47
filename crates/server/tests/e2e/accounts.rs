//! Guest accounts and sessions over the documented REST API: a device
//! secret exchanged for a session (cookie or bearer), unique names, renames,
//! sessions listed and signed out (their WebSockets closed), expiry, the
//! cross-site and per-address refusals.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::{Value, json};
use spades_protocol::ErrorCode;

use crate::helpers::*;

/// A device secret: `n` made into 43 base64url-like characters.
pub(crate) fn secret(n: u32) -> String {
    format!("{n:08}-{}", "Qw_e".repeat(9))
}

/// What a sign-in answered: status, body, the cookie's `name=value` (if
/// set) and the whole `Set-Cookie`.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Value,
    pub(crate) cookie: Option<String>,
    pub(crate) set_cookie: String,
    pub(crate) headers: HeaderMap,
}

pub(crate) async fn send(req: reqwest::RequestBuilder) -> Answer {
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let set_cookie = headers.get("set-cookie").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    let cookie = set_cookie.split(';').next().filter(|c| c.starts_with("spades_session=")).map(str::to_owned);
    let text = resp.text().await.unwrap();
    let body = if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap() };
    Answer { status, body, cookie, set_cookie, headers }
}

pub(crate) async fn guest(server: &TestServer, body: Value) -> Answer {
    send(server.http.post(server.url("/api/v1/accounts/guest")).json(&body)).await
}

/// A bearer session of a new account named `name`: (token, account id).
pub(crate) async fn bearer(server: &TestServer, n: u32, name: &str) -> (String, String) {
    let a = guest(server, json!({"device_secret": secret(n), "name": name, "session": "bearer"})).await;
    assert_eq!(a.status, 201, "{}", a.body);
    (a.body["token"].as_str().unwrap().to_owned(), a.body["account"]["id"].as_str().unwrap().to_owned())
}

pub(crate) fn refused(a: &Answer, status: u16, code: ErrorCode) -> String {
    assert_eq!(a.status, status, "{}", a.body);
    assert_eq!(a.body["code"], json!(code.as_str()), "{}", a.body);
    a.body["message"].as_str().unwrap().to_owned()
}

fn config() -> spades_server::Config {
    let mut config = test_config();
    config.accounts.rename_interval_secs = 0;
    config
}

#[tokio::test]
async fn a_first_visit_makes_a_guest_and_the_device_signs_in_again() {
    let server = spawn_server(config()).await;
    let suggestion = send(server.http.get(server.url("/api/v1/names/suggestion"))).await;
    assert_eq!(suggestion.status, 200);
    let offered = suggestion.body["name"].as_str().unwrap().to_owned();
    assert_eq!(offered.split(' ').count(), 3, "{offered}");

    // A browser: the session in an HttpOnly, SameSite=Lax cookie, no token
    // in the body.
    let first = send(
        server
            .http
            .post(server.url("/api/v1/accounts/guest"))
            .header("user-agent", "Firefox test")
            .json(&json!({"device_secret": secret(1), "name": offered})),
    )
    .await;
    assert_eq!(first.status, 201, "{}", first.body);
    assert_eq!(first.body["created"], json!(true));
    assert_eq!(first.body["account"]["name"], json!(offered));
    assert_eq!(first.body["account"]["kind"], json!("guest"));
    assert!(first.body.get("token").is_none(), "a cookie session puts no token in the body");
    for part in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=2592000"] {
        assert!(first.set_cookie.contains(part), "{part} missing: {}", first.set_cookie);
    }
    assert!(!first.set_cookie.contains("Secure"), "plain HTTP from no trusted proxy");
    assert_eq!(first.headers["cache-control"], "no-store");
    let cookie = first.cookie.clone().unwrap();
    let me = send(server.http.get(server.url("/api/v1/me")).header("cookie", &cookie)).await;
    assert_eq!(me.status, 200, "{}", me.body);
    assert_eq!(me.body["account"]["id"], first.body["account"]["id"]);
    assert_eq!(me.body["session"]["client"], json!("Firefox test"));
    assert_eq!(me.body["session"]["address"], json!("127.0.0.1"));
    assert_eq!(me.body["session"]["current"], json!(true));

    // The same device again (a reload, a retried request): the same
    // account, a new session; the name sent is ignored.
    let again =
        guest(&server, json!({"device_secret": secret(1), "name": "Someone Else", "session": "bearer"}))
            .await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body["created"], json!(false));
    assert_eq!(again.body["account"], first.body["account"]);
    assert_ne!(again.body["session"]["id"], first.body["session"]["id"]);
    assert!(again.cookie.is_none(), "a bearer session sets no cookie");
    let token = again.body["token"].as_str().unwrap();
    assert_eq!(token.len(), 64);
    let me = send(server.http.get(server.url("/api/v1/me")).bearer_auth(token)).await;
    assert_eq!(me.body["session"]["id"], again.body["session"]["id"]);
    // A malformed name is refused even for a device that has an account
    // (the request is checked before the device is looked up).
    let malformed = guest(&server, json!({"device_secret": secret(1), "name": "0\u{2004}\n\u{2007}*"})).await;
    refused(&malformed, 400, ErrorCode::InvalidName);

    // No session, a made-up one, a malformed header: 401 with the header.
    let none = send(server.http.get(server.url("/api/v1/me"))).await;
    assert!(refused(&none, 401, ErrorCode::Unauthorized).contains("sign in first"));
    assert_eq!(none.headers["www-authenticate"], "Bearer");
    let made_up = send(server.http.get(server.url("/api/v1/me")).bearer_auth("ab".repeat(32))).await;
    refused(&made_up, 401, ErrorCode::Unauthorized);
    let basic = send(server.http.get(server.url("/api/v1/me")).header("authorization", "Basic eDp5")).await;
    refused(&basic, 401, ErrorCode::Unauthorized);
    // A secret of the wrong form.
    let short = guest(&server, json!({"device_secret": "short"})).await;
    refused(&short, 400, ErrorCode::BadMessage);
    // A name left out: a generated one.
    let generated = guest(&server, json!({"device_secret": secret(2)})).await;
    assert_eq!(generated.status, 201);
    assert_eq!(generated.body["account"]["name"].as_str().unwrap().split(' ').count(), 3);
    server.stop().await;
}

#[tokio::test]
async fn names_are_unique_after_case_folding_and_confusables() {
    let server = spawn_server(config()).await;
    bearer(&server, 1, "Ann").await;
    bearer(&server, 3, "Marlo").await;
    let cases = [
        ("ann", "\u{201c}ann\u{201d} is taken: choose another name"),
        ("  ANN ", "\u{201c}ANN\u{201d} is taken: choose another name"),
        ("Ａｎｎ", "\u{201c}Ａｎｎ\u{201d} is taken: choose another name"),
        (
            "\u{0410}nn",
            "\u{201c}\u{0410}nn\u{201d} looks like \u{201c}Ann\u{201d}, which is taken: choose another name",
        ),
        // A Cyrillic capital Em: like an M only as a capital.
        (
            "\u{041c}arlo",
            "\u{201c}\u{041c}arlo\u{201d} looks like \u{201c}Marlo\u{201d}, which is taken: choose another name",
        ),
        ("MARLO", "\u{201c}MARLO\u{201d} is taken: choose another name"),
    ];
    for (n, (name, says)) in (10..).zip(cases) {
        let a = guest(&server, json!({"device_secret": secret(n), "name": name})).await;
        assert_eq!(refused(&a, 409, ErrorCode::NameTaken), says);
        assert!(a.cookie.is_none());
    }
    for bad in ["A\u{202E}nn", "", &"x".repeat(25), "a\u{7}b"] {
        let a = guest(&server, json!({"device_secret": secret(20), "name": bad})).await;
        refused(&a, 400, ErrorCode::InvalidName);
    }
    // Nothing was made for the refused device: it may still take a name.
    let a = guest(&server, json!({"device_secret": secret(20), "name": "Anne"})).await;
    assert_eq!(a.status, 201, "{}", a.body);
    // Renames are held to the same rule.
    let (bo, _) = bearer(&server, 2, "Bo").await;
    let r = send(server.http.patch(server.url("/api/v1/me")).bearer_auth(&bo).json(&json!({"name": "anne"})))
        .await;
    refused(&r, 409, ErrorCode::NameTaken);
    server.stop().await;
}

#[tokio::test]
async fn renames_wait_their_interval_and_keep_the_old_name() {
    let mut config = config();
    config.accounts.rename_interval_secs = 3600;
    let server = spawn_server(config).await;
    let (ann, _) = bearer(&server, 1, "Ann").await;
    let (bo, _) = bearer(&server, 2, "Bo").await;
    let rename = |token: &str, name: &str| {
        send(server.http.patch(server.url("/api/v1/me")).bearer_auth(token).json(&json!({"name": name})))
    };
    let r = rename(&ann, "Annie").await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["name"], json!("Annie"));
    assert!(r.body["rename_after"].as_u64().unwrap() > 0);
    // Too soon: 429 with Retry-After.
    let again = rename(&ann, "Anna").await;
    assert_eq!(
        refused(&again, 429, ErrorCode::RateLimited),
        "a name may be changed once every 1 hour: try again in 1 hour"
    );
    let wait: u64 = again.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((3500..=3600).contains(&wait), "{wait}");
    // The old name is kept for Ann: nobody else may take it.
    let taken = rename(&bo, "ann").await;
    assert!(refused(&taken, 409, ErrorCode::NameTaken).contains("kept for them for 30 more days"));
    let new = guest(&server, json!({"device_secret": secret(3), "name": "Ann"})).await;
    refused(&new, 409, ErrorCode::NameTaken);
    // The name in use now is Annie.
    let me = send(server.http.get(server.url("/api/v1/me")).bearer_auth(&ann)).await;
    assert_eq!(me.body["account"]["name"], json!("Annie"));
    server.stop().await;
}

#[tokio::test]
async fn sessions_are_listed_and_signed_out_closing_their_sockets() {
    let server = spawn_server(config()).await;
    let first = send(
        server
            .http
            .post(server.url("/api/v1/accounts/guest"))
            .header("user-agent", "Laptop browser")
            .json(&json!({"device_secret": secret(1), "name": "Ann"})),
    )
    .await;
    let cookie = first.cookie.clone().unwrap();
    let phone = guest(&server, json!({"device_secret": secret(1), "session": "bearer"})).await;
    let token = phone.body["token"].as_str().unwrap().to_owned();
    let phone_id = phone.body["session"]["id"].clone();

    let list = send(server.http.get(server.url("/api/v1/me/sessions")).header("cookie", &cookie)).await;
    assert_eq!(list.status, 200);
    let list = list.body.as_array().unwrap().clone();
    assert_eq!(list.len(), 2);
    let mine = list.iter().find(|s| s["current"] == json!(true)).unwrap();
    assert_eq!(mine["client"], json!("Laptop browser"));
    assert!(list.iter().any(|s| s["id"] == phone_id && s["current"] == json!(false)));

    // A socket of each session, and one without a session.
    let mut phone_ws =
        Client::connect_with(server.addr, &[("authorization", &format!("Bearer {token}"))]).await;
    let mut laptop_ws = Client::connect_with(server.addr, &[("cookie", &cookie)]).await;
    let mut anonymous = Client::connect(server.addr).await;

    // Signing the phone out from the laptop closes the phone's socket.
    let out = send(
        server
            .http
            .delete(server.url(&format!("/api/v1/me/sessions/{}", phone_id.as_str().unwrap())))
            .header("cookie", &cookie),
    )
    .await;
    assert_eq!(out.status, 204);
    assert!(out.set_cookie.is_empty(), "another session's sign-out keeps this cookie");
    assert_eq!(phone_ws.try_recv(Duration::from_secs(5)).await, None);
    assert_eq!(phone_ws.closed.as_ref().map(|c| c.0), Some(4005), "{:?}", phone_ws.closed);
    let me = send(server.http.get(server.url("/api/v1/me")).bearer_auth(&token)).await;
    refused(&me, 401, ErrorCode::Unauthorized);
    // A session is not another account's to sign out.
    let (bo, _) = bearer(&server, 2, "Bo").await;
    let mine_id = mine["id"].as_str().unwrap();
    let other =
        send(server.http.delete(server.url(&format!("/api/v1/me/sessions/{mine_id}"))).bearer_auth(&bo))
            .await;
    refused(&other, 404, ErrorCode::NotFound);
    // Signing out everywhere: the cookie is cleared, its socket closed;
    // the socket without a session stays.
    let all = send(server.http.delete(server.url("/api/v1/me/sessions")).header("cookie", &cookie)).await;
    assert_eq!(all.status, 204);
    assert!(
        all.set_cookie.starts_with("spades_session=;") && all.set_cookie.contains("Max-Age=0"),
        "{}",
        all.set_cookie
    );
    assert_eq!(laptop_ws.try_recv(Duration::from_secs(5)).await, None);
    assert_eq!(laptop_ws.closed.as_ref().map(|c| c.0), Some(4005));
    let me = send(server.http.get(server.url("/api/v1/me")).header("cookie", &cookie)).await;
    refused(&me, 401, ErrorCode::Unauthorized);
    assert!(matches!(
        anonymous.request(spades_protocol::ClientMessage::Ping).await,
        spades_protocol::ServerMessage::Pong { .. }
    ));
    // Signing out this session by `current`.
    let again = guest(&server, json!({"device_secret": secret(1), "session": "bearer"})).await;
    let t = again.body["token"].as_str().unwrap();
    let out = send(server.http.delete(server.url("/api/v1/me/sessions/current")).bearer_auth(t)).await;
    assert_eq!(out.status, 204);
    refused(
        &send(server.http.get(server.url("/api/v1/me")).bearer_auth(t)).await,
        401,
        ErrorCode::Unauthorized,
    );
    // A stale cookie on the socket: connected without a session; a bad
    // bearer token: refused.
    let mut stale = Client::connect_with(server.addr, &[("cookie", &cookie)]).await;
    assert!(matches!(
        stale.request(spades_protocol::ClientMessage::Ping).await,
        spades_protocol::ServerMessage::Pong { .. }
    ));
    let bad = tokio_tungstenite::connect_async({
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut req = format!("ws://{}/ws", server.addr).into_client_request().unwrap();
        req.headers_mut().insert("authorization", format!("Bearer {token}").parse().unwrap());
        req
    })
    .await;
    match bad {
        Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => assert_eq!(resp.status(), 401),
        other => panic!("a revoked bearer token was let in: {:?}", other.map(|_| ())),
    }
    server.stop().await;
}

#[tokio::test]
async fn an_expired_session_is_refused_and_its_socket_closed() {
    let mut config = config();
    config.accounts.session_secs = 2;
    let server = spawn_server(config).await;
    let (token, _) = bearer(&server, 1, "Ann").await;
    let mut ws = Client::connect_with(server.addr, &[("authorization", &format!("Bearer {token}"))]).await;
    let table = server.create_table(spades_protocol::TableOptions::default()).await;
    let watching = ws
        .request(spades_protocol::ClientMessage::Watch {
            table: table.table,
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
        })
        .await;
    assert!(matches!(watching, spades_protocol::ServerMessage::Watching { .. }), "{watching:?}");
    // Closed when the session runs out, with no request made.
    while ws.try_recv(Duration::from_secs(5)).await.is_some() {}
    assert_eq!(ws.closed.as_ref().map(|c| c.0), Some(4005), "{:?}", ws.closed);
    let me = send(server.http.get(server.url("/api/v1/me")).bearer_auth(&token)).await;
    refused(&me, 401, ErrorCode::Unauthorized);
    server.stop().await;
}

#[tokio::test]
async fn a_cross_site_page_cannot_use_the_cookie() {
    let server = spawn_server(config()).await;
    let first = guest(&server, json!({"device_secret": secret(1), "name": "Ann"})).await;
    let cookie = first.cookie.unwrap();
    let from = |origin: &'static str, req: reqwest::RequestBuilder| {
        send(req.header("cookie", cookie.clone()).header("origin", HeaderValue::from_static(origin)))
    };
    let own = format!("http://{}", server.addr);
    let evil = "https://evil.example";
    let rename =
        from(evil, server.http.patch(server.url("/api/v1/me")).json(&json!({"name": "Mallory"}))).await;
    assert_eq!(refused(&rename, 403, ErrorCode::BadMessage), "pages of this origin may not change accounts");
    let out = from(evil, server.http.delete(server.url("/api/v1/me/sessions"))).await;
    refused(&out, 403, ErrorCode::BadMessage);
    let sign_in = send(
        server
            .http
            .post(server.url("/api/v1/accounts/guest"))
            .header("origin", evil)
            .json(&json!({"device_secret": secret(2), "name": "Eve"})),
    )
    .await;
    assert_eq!(refused(&sign_in, 403, ErrorCode::BadMessage), "pages of this origin may not sign in");
    // Nothing changed; the server's own page may.
    let me = send(server.http.get(server.url("/api/v1/me")).header("cookie", &cookie)).await;
    assert_eq!(me.body["account"]["name"], json!("Ann"));
    let ok = send(
        server
            .http
            .patch(server.url("/api/v1/me"))
            .header("cookie", &cookie)
            .header("origin", &own)
            .json(&json!({"name": "Annie"})),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    server.stop().await;
}

#[tokio::test]
async fn new_accounts_are_limited_per_address() {
    let mut config = config();
    config.limits.accounts_per_hour_per_ip = 2;
    let server = spawn_server(config).await;
    for n in 1..=2 {
        assert_eq!(guest(&server, json!({"device_secret": secret(n)})).await.status, 201);
    }
    let third = guest(&server, json!({"device_secret": secret(3), "name": "Cy"})).await;
    assert!(refused(&third, 429, ErrorCode::RateLimited).contains("too many new accounts"));
    assert!(third.headers.contains_key("retry-after"));
    // A device that has an account still signs in.
    assert_eq!(guest(&server, json!({"device_secret": secret(1)})).await.status, 200);
    assert_eq!(server.metric("spades_rate_limited_total", &["what=\"accounts\""]).await, 1.0);
    server.stop().await;
}

/// The real binary logging everything (`RUST_LOG=trace`) through sign-ins
/// by cookie and bearer, their use on REST and the WebSocket, a rename and
/// sign-outs: neither a device secret nor a session token appears in its
/// output.
#[tokio::test]
async fn a_signed_in_page_makes_a_token_for_a_terminal_which_is_listed_and_signed_out() {
    let server = spawn_server(config()).await;
    let page = guest(&server, json!({"device_secret": secret(1), "name": "Ann"})).await;
    let cookie = page.cookie.unwrap();
    let own = format!("http://{}", server.addr);
    let make = |body: Option<Value>, origin: &str| {
        let req = server
            .http
            .post(server.url("/api/v1/me/sessions"))
            .header("cookie", &cookie)
            .header("origin", origin);
        send(match body {
            Some(b) => req.json(&b),
            None => req,
        })
    };
    let made = make(Some(json!({"client": "Terminal on my laptop"})), &own).await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert!(made.cookie.is_none(), "the page's own session stays");
    assert_eq!(made.headers["cache-control"], "no-store");
    let token = made.body["token"].as_str().unwrap().to_owned();
    assert!(token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()), "{token}");
    assert_eq!(made.body["session"]["client"], json!("Terminal on my laptop"));
    assert_eq!(made.body["session"]["current"], json!(false));
    // The terminal is the same account, on a session of its own.
    let me = send(server.http.get(server.url("/api/v1/me")).bearer_auth(&token)).await;
    assert_eq!(me.status, 200);
    assert_eq!(me.body["account"]["id"], page.body["account"]["id"]);
    assert_eq!(me.body["session"]["id"], made.body["session"]["id"]);
    // An empty body: the default label. Listed beside the page's own.
    let plain = make(None, &own).await;
    assert_eq!(plain.status, 201, "{}", plain.body);
    assert_eq!(plain.body["session"]["client"], json!("Token made in a browser"));
    let list = send(server.http.get(server.url("/api/v1/me/sessions")).header("cookie", &cookie)).await;
    let clients: Vec<&str> =
        list.body.as_array().unwrap().iter().map(|s| s["client"].as_str().unwrap()).collect();
    assert_eq!(clients.len(), 3, "{clients:?}");
    assert!(clients.contains(&"Terminal on my laptop") && clients.contains(&"Token made in a browser"));
    // Refusals: a bad label, no session, another site's page.
    for bad in ["", "a\u{7}b", &"x".repeat(41), "A\u{202E}nn"] {
        let r = make(Some(json!({"client": bad})), &own).await;
        assert_eq!(
            refused(&r, 400, ErrorCode::InvalidName),
            "the label must be 1 to 40 characters, without control or invisible characters"
        );
    }
    let anonymous = send(server.http.post(server.url("/api/v1/me/sessions")).json(&json!({}))).await;
    refused(&anonymous, 401, ErrorCode::Unauthorized);
    let evil = make(Some(json!({})), "https://evil.example").await;
    refused(&evil, 403, ErrorCode::BadMessage);
    // Signed out from the page: the terminal's token is refused.
    let id = made.body["session"]["id"].as_str().unwrap();
    let out = send(
        server
            .http
            .delete(server.url(&format!("/api/v1/me/sessions/{id}")))
            .header("cookie", &cookie)
            .header("origin", &own),
    )
    .await;
    assert_eq!(out.status, 204);
    let gone = send(server.http.get(server.url("/api/v1/me")).bearer_auth(&token)).await;
    refused(&gone, 401, ErrorCode::Unauthorized);
    server.stop().await;
}

#[tokio::test]
async fn no_session_token_device_secret_or_password_reaches_the_log() {
    use std::process::{Command, Stdio};
    let addr = free_addr();
    let log = std::env::temp_dir().join(format!("spades-secrets-{}.log", uuid::Uuid::new_v4().simple()));
    let out = std::fs::File::create(&log).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_spades-server"))
        .env("SPADES_SERVER__BIND", addr.to_string())
        .env("SPADES_STORAGE__IN_MEMORY", "true")
        .env("SPADES_ACCOUNTS__PASSWORDS", "true")
        .env("RUST_LOG", "trace")
        .stdout(Stdio::from(out.try_clone().unwrap()))
        .stderr(Stdio::from(out))
        .spawn()
        .unwrap();
    let http = reqwest::Client::new();
    let url = |path: &str| format!("http://{addr}{path}");
    assert!(ready(&http, &format!("http://{addr}")).await, "the server did not start");
    let (browser, native) = (secret(77), secret(78));
    let a = send(
        http.post(url("/api/v1/accounts/guest")).json(&json!({"device_secret": browser, "name": "Ann"})),
    )
    .await;
    assert_eq!(a.status, 201);
    let cookie = a.cookie.unwrap();
    let b = send(
        http.post(url("/api/v1/accounts/guest")).json(&json!({"device_secret": native, "session": "bearer"})),
    )
    .await;
    let token = b.body["token"].as_str().unwrap().to_owned();
    // A token made from the page for a terminal.
    let issued = send(http.post(url("/api/v1/me/sessions")).header("cookie", &cookie).json(&json!({}))).await;
    assert_eq!(issued.status, 201, "{}", issued.body);
    let issued = issued.body["token"].as_str().unwrap().to_owned();
    assert_eq!(send(http.get(url("/api/v1/me")).bearer_auth(&issued)).await.status, 200);
    // Passkey ceremonies: their challenges stay out of the log.
    let adding = send(http.post(url("/api/v1/me/passkeys/options")).header("cookie", &cookie)).await;
    assert_eq!(adding.status, 200, "{}", adding.body);
    let signing = send(http.post(url("/api/v1/passkeys/options"))).await;
    assert_eq!(signing.status, 200, "{}", signing.body);
    let challenges: Vec<String> = [&adding, &signing]
        .iter()
        .map(|a| a.body["options"]["publicKey"]["challenge"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(send(http.get(url("/api/v1/me")).header("cookie", &cookie)).await.status, 200);
    assert_eq!(send(http.get(url("/api/v1/me")).bearer_auth(&token)).await.status, 200);
    // Passwords: set, changed, signed in with, and wrong.
    let (first, second) = ("Pa55word-first-xyzzy", "Pa55word-second-plugh");
    let set = |body: Value| http.put(url("/api/v1/me/password")).header("cookie", &cookie).json(&body);
    assert_eq!(send(set(json!({"password": first}))).await.status, 200);
    assert_eq!(
        send(set(json!({"password": second, "current_password": "Wrong-guess-42"}))).await.status,
        403
    );
    assert_eq!(send(set(json!({"password": second, "current_password": first}))).await.status, 200);
    let by_password = |password: &str| {
        http.post(url("/api/v1/passwords/sign-in"))
            .json(&json!({"name": "Ann", "password": password, "session": "bearer"}))
    };
    assert_eq!(send(by_password(second)).await.status, 200);
    assert_eq!(send(by_password("Wrong-guess-43")).await.status, 401);
    let passwords: Vec<String> =
        [first, second, "Wrong-guess-42", "Wrong-guess-43"].iter().map(|p| (*p).to_owned()).collect();
    let r = send(http.patch(url("/api/v1/me")).bearer_auth(&token).json(&json!({"name": "Bo"}))).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let mut ws = Client::connect_with(addr, &[("authorization", &format!("Bearer {token}"))]).await;
    assert!(matches!(
        ws.request(spades_protocol::ClientMessage::Ping).await,
        spades_protocol::ServerMessage::Pong { .. }
    ));
    assert_eq!(send(http.delete(url("/api/v1/me/sessions")).bearer_auth(&token)).await.status, 204);
    while ws.try_recv(Duration::from_secs(5)).await.is_some() {}
    assert_eq!(
        send(http.delete(url("/api/v1/me/sessions/current")).header("cookie", &cookie)).await.status,
        204
    );
    // A refused token and secret are not logged either.
    assert_eq!(send(http.get(url("/api/v1/me")).bearer_auth(&token)).await.status, 401);
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    assert!(text.contains("guest account made"), "the log was written at all");
    let cookie_value = cookie.trim_start_matches("spades_session=");
    for (what, secret) in
        [("device secret", &browser), ("device secret", &native), ("token", &token), ("token", &issued)]
            .into_iter()
            .chain(challenges.iter().map(|c| ("passkey challenge", c)))
            .chain(passwords.iter().map(|p| ("password", p)))
    {
        assert!(!text.contains(secret.as_str()), "a {what} is in the log");
    }
    assert!(!text.contains(cookie_value), "the cookie's token is in the log");
}

/// A `join` or `resume` frame with the protocol version.
pub(crate) fn join(table: uuid::Uuid, name: Option<&str>) -> spades_protocol::ClientMessage {
    spades_protocol::ClientMessage::Join {
        protocol: Some(spades_protocol::PROTOCOL_VERSION),
        table,
        name: name.map(str::to_owned),
        seat: None,
        invite: None,
    }
}

pub(crate) fn resume(table: uuid::Uuid, token: Option<&str>) -> spades_protocol::ClientMessage {
    spades_protocol::ClientMessage::Resume {
        protocol: Some(spades_protocol::PROTOCOL_VERSION),
        table,
        token: token.map(str::to_owned),
    }
}

fn refusal(msg: &spades_protocol::ServerMessage) -> (ErrorCode, String) {
    match msg {
        spades_protocol::ServerMessage::Error { code, message, .. } => (*code, message.clone()),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_signed_in_player_sits_as_the_account_and_comes_back_without_a_token() {
    use spades_protocol::{ClientMessage, ServerMessage};
    let server = spawn_server(config()).await;
    let (token, account) = bearer(&server, 1, "Ann").await;
    let bearer_header = format!("Bearer {token}");
    let with_session = [("authorization", bearer_header.as_str())];
    let table = server.create_table(spades_protocol::TableOptions::default()).await;

    // Joined as the account, under its name whatever the frame says.
    let mut first = Client::connect_with(server.addr, &with_session).await;
    let joined = first.request(join(table.table, Some("Mallory"))).await;
    let ServerMessage::Joined { seat, .. } = joined else { panic!("{joined:?}") };
    let view = first.view_until(|v| v.seats.iter().any(|s| s.name.as_deref() == Some("Ann"))).await;
    assert!(!view.seats.iter().any(|s| s.name.as_deref() == Some("Mallory")));
    // Another tab of the account: back at the seat with no token.
    let mut second = Client::connect_with(server.addr, &with_session).await;
    let resumed = second.request(resume(table.table, None)).await;
    assert!(matches!(resumed, ServerMessage::Resumed { seat: s, .. } if s == seat), "{resumed:?}");
    // One seat per account.
    let mut third = Client::connect_with(server.addr, &with_session).await;
    let (code, message) = refusal(&third.request(join(table.table, None)).await);
    assert_eq!(code, ErrorCode::AlreadySeated);
    assert_eq!(message, format!("you already sit at {seat} at this table: resume that seat"));
    // Another account has no seat to come back to.
    let (other, _) = bearer(&server, 2, "Bo").await;
    let mut bo = Client::connect_with(server.addr, &[("authorization", &format!("Bearer {other}"))]).await;
    let (code, message) = refusal(&bo.request(resume(table.table, None)).await);
    assert_eq!(
        (code, message.as_str()),
        (ErrorCode::InvalidToken, "your account holds no seat at this table: join it")
    );
    // Without a session: a name to join, a token to resume.
    let mut anonymous = server.client().await;
    let (code, message) = refusal(&anonymous.request(join(table.table, None)).await);
    assert_eq!(
        (code, message.as_str()),
        (ErrorCode::InvalidName, "a name is needed to join without signing in")
    );
    let (code, _) = refusal(&anonymous.request(resume(table.table, None)).await);
    assert_eq!(code, ErrorCode::InvalidToken);

    // The match's record names the account; the account's own list has it.
    let owner = table.owner_token.clone();
    assert!(matches!(
        first.request(ClientMessage::AddBots { owner_token: Some(owner.clone()) }).await,
        ServerMessage::Ack { .. }
    ));
    assert!(matches!(
        first.request(ClientMessage::Start { owner_token: Some(owner) }).await,
        ServerMessage::Ack { .. }
    ));
    let record = server.record(table.table).await;
    let mine = record.seats.iter().find(|s| s.seat == seat).unwrap();
    assert_eq!((mine.name.as_str(), mine.account.map(|a| a.to_string())), ("Ann", Some(account.clone())));
    assert!(record.seats.iter().filter(|s| s.seat != seat).all(|s| s.account.is_none()));
    let list = |token: &str| {
        send(server.http.get(server.url("/api/v1/matches?mine=true")).bearer_auth(token.to_owned()))
    };
    let ann_list = list(&token).await;
    assert_eq!(ann_list.status, 200);
    assert_eq!(ann_list.headers["cache-control"], "private, no-cache");
    let tables: Vec<&Value> = ann_list.body.as_array().unwrap().iter().map(|m| &m["table"]).collect();
    assert_eq!(tables, vec![&json!(table.table)]);
    assert_eq!(list(&other).await.body, json!([]), "Bo sat nowhere");
    let anonymous_list = send(server.http.get(server.url("/api/v1/matches?mine=true"))).await;
    refused(&anonymous_list, 401, ErrorCode::Unauthorized);
    server.stop().await;
}

#[tokio::test]
async fn a_seat_held_by_an_account_survives_a_restart() {
    use spades_protocol::ServerMessage;
    let dir = std::env::temp_dir().join(format!("spades-seat-accounts-{}", uuid::Uuid::new_v4().simple()));
    let mut config = config();
    config.storage.in_memory = false;
    config.storage.data_dir = dir.clone();
    let server = spawn_server(config.clone()).await;
    let (token, _) = bearer(&server, 1, "Ann").await;
    let table = server.create_table(spades_protocol::TableOptions::default()).await;
    let bearer_header = format!("Bearer {token}");
    let mut c = Client::connect_with(server.addr, &[("authorization", &bearer_header)]).await;
    let ServerMessage::Joined { seat, .. } = c.request(join(table.table, None)).await else { panic!() };
    drop(c);
    server.stop().await;
    let server = spawn_server(config).await;
    let mut back = Client::connect_with(server.addr, &[("authorization", &bearer_header)]).await;
    let resumed = back.request(resume(table.table, None)).await;
    assert!(matches!(resumed, ServerMessage::Resumed { seat: s, .. } if s == seat), "{resumed:?}");
    server.stop().await;
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn the_account_that_creates_a_table_owns_it_without_the_token() {
    use spades_protocol::{ClientMessage, CreatedTable, ServerMessage, TableOptions};
    let server = spawn_server(config()).await;
    let (ann, _) = bearer(&server, 1, "Ann").await;
    let (bo, _) = bearer(&server, 2, "Bo").await;
    let created: CreatedTable = server
        .http
        .post(server.url("/api/v1/tables"))
        .bearer_auth(&ann)
        .json(&spades_protocol::CreateTable { name: None, options: TableOptions::default() })
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ann_header = format!("Bearer {ann}");
    let bo_header = format!("Bearer {bo}");
    // Another signed-in player is not the owner.
    let mut bo_ws = Client::connect_with(server.addr, &[("authorization", &bo_header)]).await;
    assert!(matches!(bo_ws.request(join(created.table, None)).await, ServerMessage::Joined { .. }));
    let (code, message) = refusal(&bo_ws.request(ClientMessage::AddBots { owner_token: None }).await);
    assert_eq!((code, message.as_str()), (ErrorCode::InvalidToken, "only the table's owner can add bots"));
    // Ann, watching (not even seated), arranges and starts it by account.
    let mut ann_ws = Client::connect_with(server.addr, &[("authorization", &ann_header)]).await;
    let watching = ann_ws
        .request(ClientMessage::Watch {
            table: created.table,
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
        })
        .await;
    assert!(matches!(watching, ServerMessage::Watching { .. }), "{watching:?}");
    assert!(matches!(
        ann_ws.request(ClientMessage::AddBots { owner_token: None }).await,
        ServerMessage::Ack { .. }
    ));
    assert!(matches!(
        ann_ws.request(ClientMessage::Start { owner_token: None }).await,
        ServerMessage::Ack { .. }
    ));
    ann_ws.view_until(|v| v.game.is_some()).await;
    // The owner token still works, for clients that keep it.
    let mut keeper = server.client().await;
    let watching = keeper
        .request(ClientMessage::Watch {
            table: created.table,
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
        })
        .await;
    assert!(matches!(watching, ServerMessage::Watching { .. }));
    let (code, _) = refusal(
        &keeper.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await,
    );
    assert_eq!(code, ErrorCode::AlreadyStarted, "the token is the owner's: refused only as started");
    // A table made without a session has no owning account.
    let plain = server.create_table(TableOptions::default()).await;
    let mut ann_again = Client::connect_with(server.addr, &[("authorization", &ann_header)]).await;
    ann_again
        .request(ClientMessage::Watch {
            table: plain.table,
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
        })
        .await;
    let (code, _) = refusal(&ann_again.request(ClientMessage::AddBots { owner_token: None }).await);
    assert_eq!(code, ErrorCode::InvalidToken);
    // A bearer token of no session is refused at creation; a stale cookie
    // is not (the table is made without an owning account).
    let bad = send(server.http.post(server.url("/api/v1/tables")).bearer_auth("ab".repeat(32))).await;
    refused(&bad, 401, ErrorCode::Unauthorized);
    let stale = send(
        server
            .http
            .post(server.url("/api/v1/tables"))
            .header("cookie", format!("spades_session={}", "ab".repeat(32))),
    )
    .await;
    assert_eq!(stale.status, 201);
    server.stop().await;
}

#[tokio::test]
async fn passkey_ceremonies_refuse_what_they_did_not_ask_for() {
    let server = spawn_server(config()).await;
    let (ann, _) = bearer(&server, 1, "Ann").await;
    let (bo, _) = bearer(&server, 2, "Bo").await;
    let post = |path: &str, token: Option<&str>, body: Value| {
        let req = server.http.post(server.url(path)).json(&body);
        send(match token {
            Some(t) => req.bearer_auth(t),
            None => req,
        })
    };
    // Adding a passkey: the options ask for a discoverable credential of
    // this account, on this server's relying party (localhost).
    let start = post("/api/v1/me/passkeys/options", Some(&ann), json!({})).await;
    assert_eq!(start.status, 200, "{}", start.body);
    let options = &start.body["options"]["publicKey"];
    assert_eq!(options["rp"]["id"], json!("localhost"));
    assert_eq!(options["user"]["name"], json!("Ann"));
    assert_eq!(options["authenticatorSelection"]["residentKey"], json!("required"));
    assert_eq!(options["authenticatorSelection"]["userVerification"], json!("required"));
    let ceremony = start.body["ceremony"].as_str().unwrap().to_owned();
    let fake = json!({
        "id": "AAAA", "rawId": "AAAA", "type": "public-key",
        "response": {"attestationObject": "AAAA", "clientDataJSON": "AAAA"}
    });
    let add = |token: &str, ceremony: &Value, credential: &Value| {
        post(
            "/api/v1/me/passkeys",
            Some(token),
            json!({"ceremony": ceremony, "name": "Phone", "credential": credential}),
        )
    };
    // Another account cannot answer Ann's ceremony (nor use it up).
    let other = add(&bo, &json!(ceremony), &fake).await;
    let gone = "this passkey request is unknown, was used or ran out: add the passkey again";
    assert_eq!(refused(&other, 404, ErrorCode::NotFound), gone);
    // An answer that is no WebAuthn credential: refused, and the ceremony used up.
    let junk = add(&ann, &json!(ceremony), &json!({"id": 1})).await;
    assert_eq!(
        refused(&junk, 400, ErrorCode::BadMessage),
        "the passkey's answer is not a WebAuthn credential"
    );
    let again = add(&ann, &json!(ceremony), &fake).await;
    assert_eq!(refused(&again, 404, ErrorCode::NotFound), gone);
    let made_up = add(&ann, &json!(uuid::Uuid::new_v4()), &fake).await;
    assert_eq!(refused(&made_up, 404, ErrorCode::NotFound), gone);
    // An answer to a fresh ceremony that does not verify.
    let fresh = post("/api/v1/me/passkeys/options", Some(&ann), json!({})).await;
    let bad = add(&ann, &fresh.body["ceremony"], &fake).await;
    assert_eq!(refused(&bad, 400, ErrorCode::BadMessage), "the passkey could not be verified: try again");
    let list = send(server.http.get(server.url("/api/v1/me/passkeys")).bearer_auth(&ann)).await;
    assert_eq!(list.body, json!([]), "nothing was added");
    let none = post("/api/v1/me/passkeys/options", None, json!({})).await;
    refused(&none, 401, ErrorCode::Unauthorized);
    // Signing in: every failure says the same, whether or not the passkey exists.
    let sign = post("/api/v1/passkeys/options", None, json!({})).await;
    assert_eq!(sign.status, 200, "{}", sign.body);
    assert_eq!(sign.body["options"]["publicKey"]["allowCredentials"], json!([]));
    let assertion = json!({
        "id": "AAAA", "rawId": "AAAA", "type": "public-key",
        "response": {"authenticatorData": "AAAA", "clientDataJSON": "AAAA", "signature": "AAAA", "userHandle": "AAAA"}
    });
    let said = |a: &Answer| refused(a, 401, ErrorCode::Unauthorized);
    let unknown = post(
        "/api/v1/passkeys/sign-in",
        None,
        json!({"ceremony": sign.body["ceremony"], "credential": assertion}),
    )
    .await;
    let message = said(&unknown);
    assert_eq!(message, "that passkey could not sign you in: try again, or use another");
    let replayed = post(
        "/api/v1/passkeys/sign-in",
        None,
        json!({"ceremony": sign.body["ceremony"], "credential": assertion}),
    )
    .await;
    assert_eq!(said(&replayed), message);
    let made_up = post(
        "/api/v1/passkeys/sign-in",
        None,
        json!({"ceremony": uuid::Uuid::new_v4(), "credential": assertion}),
    )
    .await;
    assert_eq!(said(&made_up), message);
    let fresh = post("/api/v1/passkeys/options", None, json!({})).await;
    let junk = post(
        "/api/v1/passkeys/sign-in",
        None,
        json!({"ceremony": fresh.body["ceremony"], "credential": {"id": 1}}),
    )
    .await;
    assert_eq!(said(&junk), message);
    assert!(unknown.cookie.is_none());
    // Another site's page may not begin either ceremony.
    let evil = send(
        server.http.post(server.url("/api/v1/passkeys/options")).header("origin", "https://evil.example"),
    )
    .await;
    refused(&evil, 403, ErrorCode::BadMessage);
    let missing = send(server.http.delete(server.url("/api/v1/me/passkeys/abcd")).bearer_auth(&ann)).await;
    refused(&missing, 404, ErrorCode::NotFound);
    server.stop().await;
}

/// A passkey sign-in whose assertion names the user handle `handle` (base64url).
async fn sign_in_as(server: &TestServer, handle: &str) -> Answer {
    let begun = send(server.http.post(server.url("/api/v1/passkeys/options"))).await;
    let assertion = json!({
        "id": "AAAA", "rawId": "AAAA", "type": "public-key",
        "response": {"authenticatorData": "AAAA", "clientDataJSON": "AAAA", "signature": "AAAA", "userHandle": handle}
    });
    let body = json!({"ceremony": begun.body["ceremony"], "credential": assertion});
    send(server.http.post(server.url("/api/v1/passkeys/sign-in")).json(&body)).await
}

#[tokio::test]
async fn passkey_sign_ins_are_limited_per_address_and_per_account() {
    let mut cfg = config();
    cfg.limits.sign_ins_per_minute_per_ip = 4;
    cfg.limits.sign_ins_per_minute_per_account = 2;
    let server = spawn_server(cfg).await;
    // A user handle of 16 bytes names an account (none has it): two tries
    // for it, then it is limited, whoever tries; the answer says nothing
    // of whether it exists.
    const ACCOUNT: &str = "AAECAwQFBgcICQoLDA0ODw";
    for _ in 0..2 {
        refused(&sign_in_as(&server, ACCOUNT).await, 401, ErrorCode::Unauthorized);
    }
    let limited = sign_in_as(&server, ACCOUNT).await;
    assert_eq!(
        refused(&limited, 429, ErrorCode::RateLimited),
        "too many sign-in attempts for this account: wait a minute"
    );
    assert!(limited.headers.contains_key("retry-after"));
    // The address's own limit: its fourth try this minute, then no more.
    refused(&sign_in_as(&server, "AQ").await, 401, ErrorCode::Unauthorized);
    let from_here = sign_in_as(&server, "AQ").await;
    assert_eq!(
        refused(&from_here, 429, ErrorCode::RateLimited),
        "too many sign-in attempts from your address: wait a minute"
    );
    server.stop().await;
}
