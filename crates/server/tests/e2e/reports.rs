//! Players' reports over the documented REST API: a chat message and a
//! player reported from the table, each with its context (the messages
//! around, the table's public status); the refusals (oneself, a bot, an
//! empty seat, other sites, too many); the operators' queue, its
//! resolution with an audit entry, and an account's dossier. A player's
//! chat blocks, kept with the account.

use serde_json::{Value, json};
use spades_protocol::{ClientMessage, ErrorCode};

use crate::accounts::{bearer, guest, refused, secret, send};
use crate::helpers::*;
use crate::moderation::{get, heard, kept, operator, post, seated, server_with};

/// The seat named `name` at `table`, from its public status.
async fn seat_of(server: &TestServer, table: uuid::Uuid, name: &str) -> String {
    let status = send(server.http.get(server.url(&format!("/api/v1/tables/{table}")))).await;
    let seats = status.body["seats"].as_array().unwrap();
    let seat = seats.iter().find(|s| s["name"] == json!(name)).unwrap_or_else(|| panic!("{}", status.body));
    seat["seat"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_player_reports_a_message_and_a_player_with_their_context_and_an_operator_resolves_it() {
    let (server, dir) = server_with(|c| c.moderation.reports_per_hour = 3).await;
    let olive = operator(&server, &dir).await;
    let (ann, ann_id) = bearer(&server, 1, "Ann").await;
    let (bo, bo_id) = bearer(&server, 2, "Bo").await;

    // Ann's table: Ann and Bo seated, bots in the other seats, started.
    let made = send(server.http.post(server.url("/api/v1/tables")).bearer_auth(&ann).json(&json!({}))).await;
    let table: uuid::Uuid = made.body["table"].as_str().unwrap().parse().unwrap();
    let mut ann_seat = seated(&server, &ann, table).await;
    let mut bo_seat = seated(&server, &bo, table).await;
    for msg in [ClientMessage::AddBots { owner_token: None }, ClientMessage::Start { owner_token: None }] {
        let done = ann_seat.request(msg).await;
        assert!(code_of(&done).is_none(), "{done:?}");
    }
    for text in ["good luck", "you are all idiots", "gg"] {
        let said = ann_seat.request(ClientMessage::Chat { text: text.to_owned() }).await;
        assert!(code_of(&said).is_none(), "{said:?}");
        heard(&mut bo_seat, text).await;
    }
    let lines = kept(&server, &olive, table, 3).await;
    let rude = lines[1]["id"].as_u64().unwrap();

    // Bo reports the message: a receipt; a repeat answers the same report.
    let report_message = format!("/api/v1/tables/{table}/chat/{rude}/report");
    let why = json!({"reason": "abusive_chat", "text": "  insults everyone\nat the table "});
    let first = post(&server, &bo, &report_message, why.clone()).await;
    assert_eq!(first.status, 201, "{}", first.body);
    assert_eq!(first.body["reason"], json!("abusive_chat"));
    let again = post(&server, &bo, &report_message, json!({"reason": "spam"})).await;
    assert_eq!((again.status, &again.body["id"]), (200, &first.body["id"]), "{}", again.body);

    // Refused: one's own message, a reason off the list, a control
    // character, a message not kept, no session, another site.
    refused(&post(&server, &ann, &report_message, why.clone()).await, 409, ErrorCode::InvalidOptions);
    for bad in [json!({"reason": "ugly"}), json!({"reason": "spam", "text": "a\u{7}b"}), json!({"text": "x"})]
    {
        refused(&post(&server, &bo, &report_message, bad).await, 400, ErrorCode::InvalidOptions);
    }
    let unknown = format!("/api/v1/tables/{table}/chat/999/report");
    refused(&post(&server, &bo, &unknown, why.clone()).await, 404, ErrorCode::NotFound);
    let not_a_table = "/api/v1/tables/nope/chat/1/report";
    refused(&post(&server, &bo, not_a_table, why.clone()).await, 404, ErrorCode::TableNotFound);
    let anonymous = send(server.http.post(server.url(&report_message)).json(&why)).await;
    refused(&anonymous, 401, ErrorCode::Unauthorized);
    let elsewhere = send(
        server
            .http
            .post(server.url(&report_message))
            .bearer_auth(&bo)
            .header("origin", "http://other.example")
            .json(&why),
    )
    .await;
    refused(&elsewhere, 403, ErrorCode::BadMessage);

    // Bo reports Ann as a player; not himself, not a bot, not an empty seat.
    let ann_at = seat_of(&server, table, "Ann").await;
    let bo_at = seat_of(&server, table, "Bo").await;
    let report_ann = format!("/api/v1/tables/{table}/seats/{ann_at}/report");
    let second = post(&server, &bo, &report_ann, json!({"reason": "unsportsmanlike"})).await;
    assert_eq!(second.status, 201, "{}", second.body);
    let own = format!("/api/v1/tables/{table}/seats/{bo_at}/report");
    refused(&post(&server, &bo, &own, why.clone()).await, 409, ErrorCode::InvalidOptions);
    let status = send(server.http.get(server.url(&format!("/api/v1/tables/{table}")))).await;
    let bot = status.body["seats"].as_array().unwrap().iter().find(|s| s["kind"] == json!("bot")).unwrap();
    let bot_seat = format!("/api/v1/tables/{table}/seats/{}/report", bot["seat"].as_str().unwrap());
    refused(&post(&server, &bo, &bot_seat, why.clone()).await, 409, ErrorCode::InvalidOptions);
    let empty = send(server.http.post(server.url("/api/v1/tables")).bearer_auth(&bo).json(&json!({}))).await;
    let empty_seat = format!("/api/v1/tables/{}/seats/north/report", empty.body["table"].as_str().unwrap());
    refused(&post(&server, &bo, &empty_seat, why.clone()).await, 404, ErrorCode::NotFound);
    let capital = format!("/api/v1/tables/{table}/seats/North/report");
    refused(&post(&server, &bo, &capital, why.clone()).await, 404, ErrorCode::NotFound);

    // A third report is taken; a fourth in the hour is one too many.
    let gg = lines[0]["id"].as_u64().unwrap();
    let third = post(&server, &bo, &format!("/api/v1/tables/{table}/chat/{gg}/report"), why.clone()).await;
    assert_eq!(third.status, 201, "{}", third.body);
    let luck = lines[2]["id"].as_u64().unwrap();
    let fourth = post(&server, &bo, &format!("/api/v1/tables/{table}/chat/{luck}/report"), why.clone()).await;
    refused(&fourth, 429, ErrorCode::RateLimited);

    // The queue is the operators' alone.
    refused(&get(&server, &bo, "/api/v1/admin/reports").await, 403, ErrorCode::NotOperator);
    let queue = get(&server, &olive, "/api/v1/admin/reports").await;
    assert_eq!(queue.status, 200, "{}", queue.body);
    let queue = queue.body.as_array().unwrap().clone();
    assert_eq!(queue.len(), 3, "the newest first: {queue:?}");
    let message_report = &queue[2];
    assert_eq!(message_report["id"], first.body["id"]);
    assert_eq!(
        (message_report["reporter"]["id"].as_str(), message_report["account"].as_str()),
        (Some(bo_id.as_str()), Some(ann_id.as_str())),
        "the account is the writer's as kept, never the reporter's word"
    );
    assert_eq!(
        (
            message_report["message"].as_u64(),
            message_report["seat"].as_str(),
            message_report["name"].as_str()
        ),
        (Some(rude), Some(ann_at.as_str()), Some("Ann"))
    );
    assert_eq!(message_report["text"], json!("insults everyone\nat the table"));
    // Its context: the messages around, oldest first; the table as anybody
    // could see it, never a card.
    let context = &message_report["context"];
    let texts: Vec<&str> =
        context["chat"].as_array().unwrap().iter().map(|l| l["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["good luck", "you are all idiots", "gg"]);
    assert_eq!(context["table"]["table"], json!(table.to_string()));
    let names: Vec<&Value> =
        context["table"]["seats"].as_array().unwrap().iter().map(|s| &s["name"]).collect();
    assert!(names.contains(&&json!("Ann")) && names.contains(&&json!("Bo")), "{names:?}");
    assert!(!context.to_string().contains("\"hand\""), "no hand of cards: {context}");
    let player_report = &queue[1];
    assert_eq!(
        (player_report["seat"].as_str(), player_report["account"].as_str(), player_report.get("message")),
        (Some(ann_at.as_str()), Some(ann_id.as_str()), None)
    );
    assert_eq!(player_report["context"]["chat"].as_array().unwrap().len(), 3);

    // Ann's dossier holds the three reports about her; Bo's none.
    let dossier = get(&server, &olive, &format!("/api/v1/admin/accounts/{ann_id}")).await;
    assert_eq!(dossier.body["reports"].as_array().unwrap().len(), 3, "{}", dossier.body["reports"]);
    let none = get(&server, &olive, &format!("/api/v1/admin/accounts/{bo_id}")).await;
    assert_eq!(none.body["reports"], json!([]));

    // Resolved once, with a reason; the queue shrinks, the audit log says so.
    let id = first.body["id"].as_u64().unwrap();
    let resolve = format!("/api/v1/admin/reports/{id}/resolve");
    refused(&post(&server, &olive, &resolve, json!({"reason": ""})).await, 400, ErrorCode::InvalidOptions);
    refused(&post(&server, &bo, &resolve, json!({"reason": "x"})).await, 403, ErrorCode::NotOperator);
    let done = post(&server, &olive, &resolve, json!({"reason": "message removed, muted a day"})).await;
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(
        (done.body["resolved"]["by"]["name"].as_str(), done.body["resolved"]["reason"].as_str()),
        (Some("Olive"), Some("message removed, muted a day"))
    );
    refused(
        &post(&server, &olive, &resolve, json!({"reason": "again"})).await,
        409,
        ErrorCode::InvalidOptions,
    );
    let missing = "/api/v1/admin/reports/999/resolve";
    refused(&post(&server, &olive, missing, json!({"reason": "x"})).await, 404, ErrorCode::NotFound);
    let open = get(&server, &olive, "/api/v1/admin/reports?state=open").await;
    assert_eq!(open.body.as_array().unwrap().len(), 2);
    let all = get(&server, &olive, "/api/v1/admin/reports?state=all&limit=2").await;
    assert_eq!(all.body.as_array().unwrap().len(), 2, "limited");
    let last = all.body[1]["id"].as_u64().unwrap();
    let rest = get(&server, &olive, &format!("/api/v1/admin/reports?state=all&before={last}")).await;
    assert_eq!(rest.body.as_array().unwrap().len(), 1, "paged by number");
    assert_eq!(rest.body[0]["resolved"]["reason"], json!("message removed, muted a day"));
    refused(&get(&server, &olive, "/api/v1/admin/reports?state=closed").await, 400, ErrorCode::BadMessage);
    let audit = get(&server, &olive, "/api/v1/admin/audit").await;
    assert_eq!(
        (audit.body[0]["action"].as_str(), audit.body[0]["report"].as_u64()),
        (Some("resolve_report"), Some(id))
    );
    assert_eq!(audit.body[0]["account"]["id"], json!(ann_id));

    // Resolved, the message may be reported again (a new report).
    let anew = post(&server, &olive, &report_message, json!({"reason": "abusive_chat"})).await;
    assert_eq!(anew.status, 201, "{}", anew.body);
    assert_ne!(anew.body["id"], first.body["id"]);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_player_blocks_another_players_chat_for_every_device_of_theirs() {
    let (server, dir) = server_with(|_| {}).await;
    let (ann, ann_id) = bearer(&server, 1, "Ann").await;
    let (bo, bo_id) = bearer(&server, 2, "Bo").await;
    let made = send(server.http.post(server.url("/api/v1/tables")).bearer_auth(&ann).json(&json!({}))).await;
    let table: uuid::Uuid = made.body["table"].as_str().unwrap().parse().unwrap();
    let mut ann_seat = seated(&server, &ann, table).await;
    let mut bo_seat = seated(&server, &bo, table).await;
    // Each message names its writer's account: what a client hides by.
    let said = ann_seat.request(ClientMessage::Chat { text: "hello".into() }).await;
    assert!(code_of(&said).is_none(), "{said:?}");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut writer = None;
    while writer.is_none() && tokio::time::Instant::now() < deadline {
        if let Some(spades_protocol::ServerMessage::Chat { account, .. }) =
            bo_seat.try_recv(std::time::Duration::from_millis(200)).await
        {
            writer = account;
        }
    }
    assert_eq!(writer.map(|a| a.to_string()), Some(ann_id.clone()));

    let blocks = "/api/v1/me/blocks";
    assert_eq!(get(&server, &bo, blocks).await.body, json!([]));
    let put = |token: String, path: String| {
        let req = server.http.put(server.url(&path)).bearer_auth(token);
        send(req)
    };
    let block_ann = format!("{blocks}/{ann_id}");
    let made = put(bo.clone(), block_ann.clone()).await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(
        (made.body["account"].as_str(), made.body["name"].as_str()),
        (Some(ann_id.as_str()), Some("Ann"))
    );
    assert_eq!(put(bo.clone(), block_ann.clone()).await.status, 200, "blocked already");
    refused(&put(bo.clone(), format!("{blocks}/{bo_id}")).await, 409, ErrorCode::InvalidOptions);
    refused(&put(bo.clone(), format!("{blocks}/{}", uuid::Uuid::new_v4())).await, 404, ErrorCode::NotFound);
    refused(&put(bo.clone(), format!("{blocks}/nope")).await, 404, ErrorCode::NotFound);
    refused(&send(server.http.put(server.url(&block_ann))).await, 401, ErrorCode::Unauthorized);
    let elsewhere = send(
        server.http.put(server.url(&block_ann)).bearer_auth(&bo).header("origin", "http://other.example"),
    )
    .await;
    refused(&elsewhere, 403, ErrorCode::BadMessage);

    // Kept with the account: another session of Bo's reads it; Ann's list
    // is her own.
    let again = guest(&server, json!({"device_secret": secret(2), "session": "bearer"})).await;
    assert_eq!((again.status, again.body["account"]["id"].as_str()), (200, Some(bo_id.as_str())));
    let bo_again = again.body["token"].as_str().unwrap().to_owned();
    assert_ne!(bo_again, bo);
    let listed = get(&server, &bo_again, blocks).await;
    assert_eq!(listed.body.as_array().unwrap().len(), 1, "{}", listed.body);
    assert_eq!(listed.body[0]["account"], json!(ann_id));
    assert_eq!(get(&server, &ann, blocks).await.body, json!([]));
    let export = get(&server, &bo, "/api/v1/me/export").await;
    assert_eq!(export.body["blocks"][0]["account"], json!(ann_id), "the export holds it");

    // Unblocked once.
    let gone = send(server.http.delete(server.url(&block_ann)).bearer_auth(&bo)).await;
    assert_eq!(gone.status, 204);
    refused(
        &send(server.http.delete(server.url(&block_ann)).bearer_auth(&bo)).await,
        404,
        ErrorCode::NotFound,
    );
    assert_eq!(get(&server, &bo_again, blocks).await.body, json!([]));
    server.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
