//! Sessions in a cluster: any node accepts a session made on another (no
//! sticky sessions), a passkey ceremony begun on one node is finished (once)
//! on another, and a session signed out on one node closes its WebSockets
//! on every node within seconds.

use std::time::Duration;

use serde_json::{Value, json};
use spades_protocol::{ClientMessage, ServerMessage, TableOptions};

use super::{Env, Node, http};
use crate::helpers::Client;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_session_works_on_every_node_and_a_sign_out_closes_its_sockets_everywhere() {
    let Some(env) = Env::new().await else { return };
    let (n1, n2) = (Node::start(&env, "n1").await, Node::start(&env, "n2").await);
    let http = http();
    let url = |node: &Node, path: &str| format!("http://{}{path}", node.addr);
    let signed: Value = http
        .post(url(&n1, "/api/v1/accounts/guest"))
        .json(&json!({"device_secret": "cluster-device-secret-0000000000000000", "name": "Ann", "session": "bearer"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = signed["token"].as_str().unwrap().to_owned();
    // Made on n1, used on n2: the same account and session.
    let me: Value =
        http.get(url(&n2, "/api/v1/me")).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
    assert_eq!(me["account"]["id"], signed["account"]["id"]);
    assert_eq!(me["session"]["id"], signed["session"]["id"]);
    // A rename on n2 is the name on n1, and its name is taken on n1.
    let renamed = http
        .patch(url(&n2, "/api/v1/me"))
        .bearer_auth(&token)
        .json(&json!({"name": "Annie"}))
        .send()
        .await
        .unwrap();
    assert_eq!(renamed.status(), 200);
    let me: Value =
        http.get(url(&n1, "/api/v1/me")).bearer_auth(&token).send().await.unwrap().json().await.unwrap();
    assert_eq!(me["account"]["name"], json!("Annie"));
    let taken = http
        .post(url(&n1, "/api/v1/accounts/guest"))
        .json(&json!({"device_secret": "cluster-device-secret-1111111111111111", "name": "ANNIE"}))
        .send()
        .await
        .unwrap();
    assert_eq!(taken.status(), 409);

    // A passkey ceremony begun on n1 is found on n2 (the answer is then
    // checked, and refused: it is no credential), and used once there, it
    // is gone on n1 too.
    let begun: Value = http
        .post(url(&n1, "/api/v1/me/passkeys/options"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(begun["ceremony"].is_string(), "{begun}");
    let fake = json!({
        "ceremony": begun["ceremony"], "name": "Phone",
        "credential": {"id": "AAAA", "rawId": "AAAA", "type": "public-key",
            "response": {"attestationObject": "AAAA", "clientDataJSON": "AAAA"}}
    });
    let answer =
        |node: &Node| http.post(url(node, "/api/v1/me/passkeys")).bearer_auth(&token).json(&fake).send();
    let on_n2: Value = answer(&n2).await.unwrap().json().await.unwrap();
    assert_eq!(on_n2["message"], json!("the passkey could not be verified: try again"), "{on_n2}");
    let on_n1: Value = answer(&n1).await.unwrap().json().await.unwrap();
    assert_eq!(
        on_n1["message"],
        json!("this passkey request is unknown, was used or ran out: add the passkey again"),
        "{on_n1}"
    );

    // Sockets of the session on both nodes, watching a table; a socket
    // without a session beside them.
    let table: spades_protocol::CreatedTable = http
        .post(url(&n1, "/api/v1/tables"))
        .json(&spades_protocol::CreateTable { name: None, options: TableOptions::default() })
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let bearer = format!("Bearer {token}");
    let mut on_n1 = Client::connect_with(n1.addr, &[("authorization", &bearer)]).await;
    let mut on_n2 = Client::connect_with(n2.addr, &[("authorization", &bearer)]).await;
    let mut anonymous = Client::connect(n2.addr).await;
    for c in [&mut on_n1, &mut on_n2, &mut anonymous] {
        let watching = c
            .request(ClientMessage::Watch {
                table: table.table,
                protocol: Some(spades_protocol::PROTOCOL_VERSION),
            })
            .await;
        assert!(matches!(watching, ServerMessage::Watching { .. }), "{watching:?}");
    }
    // Seated by the account through n1, back at the seat through n2 (the
    // table's owner is one of them: the other relays) with no token.
    let mut seat_n1 = Client::connect_with(n1.addr, &[("authorization", &bearer)]).await;
    let joined = seat_n1
        .request(ClientMessage::Join {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table: table.table,
            name: None,
            seat: None,
            invite: None,
        })
        .await;
    let ServerMessage::Joined { seat, .. } = joined else { panic!("{joined:?}") };
    let mut seat_n2 = Client::connect_with(n2.addr, &[("authorization", &bearer)]).await;
    let resumed = seat_n2
        .request(ClientMessage::Resume {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table: table.table,
            token: None,
        })
        .await;
    assert!(matches!(resumed, ServerMessage::Resumed { seat: s, .. } if s == seat), "{resumed:?}");
    // Signed out on n1: the socket on n2 closes within seconds too.
    let out = http.delete(url(&n1, "/api/v1/me/sessions")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(out.status(), 204);
    for (name, c) in [("n1", &mut on_n1), ("n2", &mut on_n2), ("n1", &mut seat_n1), ("n2", &mut seat_n2)] {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !c.ended && tokio::time::Instant::now() < deadline {
            c.try_recv(Duration::from_millis(500)).await;
        }
        assert_eq!(c.closed.as_ref().map(|c| c.0), Some(4005), "the socket on {name}: {:?}", c.closed);
    }
    assert!(matches!(anonymous.request(ClientMessage::Ping).await, ServerMessage::Pong { .. }));
    let me = http.get(url(&n2, "/api/v1/me")).bearer_auth(&token).send().await.unwrap();
    assert_eq!(me.status(), 401);
    drop((n1, n2));
    env.drop_db().await;
}
