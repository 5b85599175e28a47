//! Passwords over the documented REST API, with `accounts.passwords` on: a
//! guest sets one and signs in by name anywhere; wrong passwords and
//! unknown names get the same answer; a change needs the current password
//! and signs the other sessions out (their WebSockets closed); removal;
//! the limits per address and per account; and all of it refused when the
//! operator has not switched passwords on.

use std::time::Duration;

use serde_json::json;
use spades_protocol::ErrorCode;

use crate::accounts::{Answer, guest, refused, secret, send};
use crate::helpers::*;

const SECRET: &str = "correct horse battery";

fn config() -> spades_server::Config {
    let mut config = test_config();
    config.accounts.passwords = true;
    config
}

async fn set(server: &TestServer, auth: (&str, &str), body: serde_json::Value) -> Answer {
    send(server.http.put(server.url("/api/v1/me/password")).header(auth.0, auth.1).json(&body)).await
}

async fn sign_in(server: &TestServer, name: &str, password: &str) -> Answer {
    let body = json!({"name": name, "password": password, "session": "bearer"});
    send(server.http.post(server.url("/api/v1/passwords/sign-in")).json(&body)).await
}

/// A new guest named `name`, signed in with a cookie: its `Cookie` value and id.
async fn cookie_guest(server: &TestServer, n: u32, name: &str) -> (String, String) {
    let a = guest(server, json!({"device_secret": secret(n), "name": name})).await;
    assert_eq!(a.status, 201, "{}", a.body);
    (a.cookie.unwrap(), a.body["account"]["id"].as_str().unwrap().to_owned())
}

#[tokio::test]
async fn a_guest_sets_a_password_and_signs_in_by_name_anywhere() {
    let server = spawn_server(config()).await;
    let methods = send(server.http.get(server.url("/api/v1/sign-in/methods"))).await;
    assert_eq!(methods.body, json!({"passkeys": true, "passwords": true, "providers": []}));
    let (cookie, id) = cookie_guest(&server, 1, "Ann Smith").await;
    let me = ("cookie", cookie.as_str());

    // Refused: too short, too long, the account's name.
    for (password, why) in [
        ("short", "8 to 128 characters"),
        (&"p".repeat(129)[..], "8 to 128 characters"),
        ("ann smith", "your name"),
    ] {
        let a = set(&server, me, json!({"password": password})).await;
        assert!(refused(&a, 400, ErrorCode::InvalidPassword).contains(why), "{}", a.body);
    }
    let a = set(&server, me, json!({"password": SECRET})).await;
    assert_eq!((a.status, &a.body), (200, &json!({"changed": false, "signed_out": 0})));
    assert_eq!(a.headers["cache-control"], "no-store");

    // Another device: the name in any case, or a look-alike, and the password.
    for name in ["Ann Smith", "ann smith", " ANN SMITH "] {
        let signed = sign_in(&server, name, SECRET).await;
        assert_eq!(signed.status, 200, "{name}: {}", signed.body);
        assert_eq!(signed.body["account"]["id"], json!(id));
        assert_eq!(signed.body["created"], json!(false));
        let token = signed.body["token"].as_str().unwrap();
        let mine = send(server.http.get(server.url("/api/v1/me")).bearer_auth(token)).await;
        assert_eq!(mine.body["account"]["name"], json!("Ann Smith"));
    }
    // With a cookie, as a browser signs in.
    let browser = send(
        server
            .http
            .post(server.url("/api/v1/passwords/sign-in"))
            .json(&json!({"name": "Ann Smith", "password": SECRET})),
    )
    .await;
    assert_eq!(browser.status, 200, "{}", browser.body);
    assert!(browser.body.get("token").is_none());
    assert!(browser.set_cookie.contains("HttpOnly"), "{}", browser.set_cookie);

    // A wrong password, a name nobody holds and an account without a
    // password all get the same answer.
    cookie_guest(&server, 2, "Bo").await;
    let mut messages = Vec::new();
    for (name, password) in [("Ann Smith", "wrong horse battery"), ("Nobody", SECRET), ("Bo", SECRET)] {
        let a = sign_in(&server, name, password).await;
        messages.push(refused(&a, 401, ErrorCode::Unauthorized));
        assert!(a.cookie.is_none());
    }
    assert!(messages.iter().all(|m| m == &messages[0]), "{messages:?}");

    // The ways in: the device, then the password, last used just now.
    let ways = send(server.http.get(server.url("/api/v1/me/identities")).header(me.0, me.1)).await;
    assert_eq!(ways.status, 200, "{}", ways.body);
    let kinds: Vec<&str> =
        ways.body.as_array().unwrap().iter().map(|w| w["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["device", "password"]);
    assert!(ways.body[1]["last_used_at"].as_u64().is_some(), "{}", ways.body);
    server.stop().await;
}

#[tokio::test]
async fn a_change_needs_the_current_password_and_signs_the_other_sessions_out() {
    let mut cfg = config();
    cfg.limits.sign_ins_per_minute_per_account = 0;
    let server = spawn_server(cfg).await;
    let (cookie, _) = cookie_guest(&server, 3, "Cy").await;
    assert_eq!(set(&server, ("cookie", &cookie), json!({"password": SECRET})).await.status, 200);
    // Two more sessions: the device again (bearer, with a WebSocket), and
    // a password sign-in, from which the change is made.
    let device = guest(&server, json!({"device_secret": secret(3), "session": "bearer"})).await;
    let device = device.body["token"].as_str().unwrap().to_owned();
    let mut device_ws =
        Client::connect_with(server.addr, &[("authorization", &format!("Bearer {device}"))]).await;
    let here = sign_in(&server, "Cy", SECRET).await;
    let here = here.body["token"].as_str().unwrap().to_owned();
    let auth = format!("Bearer {here}");
    let me = ("authorization", auth.as_str());

    let without = set(&server, me, json!({"password": "a new password"})).await;
    assert!(refused(&without, 403, ErrorCode::WrongPassword).contains("current_password"));
    let wrong =
        set(&server, me, json!({"password": "a new password", "current_password": "not it at all"})).await;
    refused(&wrong, 403, ErrorCode::WrongPassword);
    // Nothing changed meanwhile: every session is still there.
    assert_eq!(send(server.http.get(server.url("/api/v1/me")).bearer_auth(&device)).await.status, 200);

    let changed = set(&server, me, json!({"password": "a new password", "current_password": SECRET})).await;
    assert_eq!((changed.status, &changed.body), (200, &json!({"changed": true, "signed_out": 2})));
    // The other two are signed out, the device's socket closed; this one stays.
    for other in [
        server.http.get(server.url("/api/v1/me")).header("cookie", &cookie),
        server.http.get(server.url("/api/v1/me")).bearer_auth(&device),
    ] {
        refused(&send(other).await, 401, ErrorCode::Unauthorized);
    }
    assert_eq!(device_ws.try_recv(Duration::from_secs(5)).await, None);
    assert_eq!(device_ws.closed.as_ref().map(|c| c.0), Some(4005), "{:?}", device_ws.closed);
    assert_eq!(send(server.http.get(server.url("/api/v1/me")).bearer_auth(&here)).await.status, 200);
    refused(&sign_in(&server, "Cy", SECRET).await, 401, ErrorCode::Unauthorized);
    assert_eq!(sign_in(&server, "Cy", "a new password").await.status, 200);

    // Removed: the name and a password sign nobody in any more; the device
    // secret still does.
    let removed = send(server.http.delete(server.url("/api/v1/me/password")).bearer_auth(&here)).await;
    assert_eq!(removed.status, 204, "{}", removed.body);
    let again = send(server.http.delete(server.url("/api/v1/me/password")).bearer_auth(&here)).await;
    refused(&again, 404, ErrorCode::NotFound);
    refused(&sign_in(&server, "Cy", "a new password").await, 401, ErrorCode::Unauthorized);
    assert_eq!(guest(&server, json!({"device_secret": secret(3)})).await.status, 200);
    // A first password again needs no current one, and signs nobody out.
    let first = set(&server, me, json!({"password": SECRET})).await;
    assert_eq!(first.body, json!({"changed": false, "signed_out": 0}));
    server.stop().await;
}

#[tokio::test]
async fn password_sign_ins_are_limited_per_address_and_per_account() {
    let mut cfg = config();
    cfg.limits.sign_ins_per_minute_per_ip = 6;
    cfg.limits.sign_ins_per_minute_per_account = 2;
    let server = spawn_server(cfg).await;
    let (cookie, _) = cookie_guest(&server, 4, "Dee").await;
    assert_eq!(set(&server, ("cookie", &cookie), json!({"password": SECRET})).await.status, 200);
    // Two tries for Dee, then no more this minute, not even the right
    // password; a name nobody holds is counted the same way.
    for name in ["Dee", "Ghost"] {
        for _ in 0..2 {
            refused(&sign_in(&server, name, "wrong password").await, 401, ErrorCode::Unauthorized);
        }
        let limited = sign_in(&server, name, SECRET).await;
        assert_eq!(
            refused(&limited, 429, ErrorCode::RateLimited),
            "too many sign-in attempts for this account: wait a minute"
        );
        assert!(limited.headers.contains_key("retry-after"));
    }
    // The address's own limit: its seventh try this minute.
    let from_here = sign_in(&server, "Someone Else", SECRET).await;
    assert_eq!(
        refused(&from_here, 429, ErrorCode::RateLimited),
        "too many sign-in attempts from your address: wait a minute"
    );
    // Wrong current passwords count against the account too.
    let mut cfg = config();
    cfg.limits.sign_ins_per_minute_per_account = 2;
    let server2 = spawn_server(cfg).await;
    let (cookie, _) = cookie_guest(&server2, 5, "Eve").await;
    let me = ("cookie", cookie.as_str());
    assert_eq!(set(&server2, me, json!({"password": SECRET})).await.status, 200);
    for _ in 0..2 {
        let a =
            set(&server2, me, json!({"password": "a new password", "current_password": "guessing"})).await;
        refused(&a, 403, ErrorCode::WrongPassword);
    }
    let a = set(&server2, me, json!({"password": "a new password", "current_password": SECRET})).await;
    refused(&a, 429, ErrorCode::RateLimited);
    server.stop().await;
    server2.stop().await;
}

#[tokio::test]
async fn passwords_are_off_unless_the_operator_switches_them_on() {
    let server = spawn_server(test_config()).await;
    let methods = send(server.http.get(server.url("/api/v1/sign-in/methods"))).await;
    assert_eq!(methods.body, json!({"passkeys": true, "passwords": false, "providers": []}));
    let (cookie, _) = cookie_guest(&server, 6, "Flo").await;
    let a = set(&server, ("cookie", &cookie), json!({"password": SECRET})).await;
    assert!(refused(&a, 404, ErrorCode::NotFound).contains("not switched on"));
    refused(&sign_in(&server, "Flo", SECRET).await, 404, ErrorCode::NotFound);
    let ways = send(server.http.get(server.url("/api/v1/me/identities")).header("cookie", &cookie)).await;
    assert_eq!(ways.body.as_array().unwrap().len(), 1, "the device only: {}", ways.body);
    server.stop().await;
}
