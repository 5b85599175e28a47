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
    c.request(spades_protocol::ClientMessage::AddBots { owner_token: Some(a.owner_token.clone()) }).await;
    c.request(spades_protocol::ClientMessage::Start { owner_token: Some(a.owner_token.clone()) }).await;
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

/// The lobby's list answers with an `ETag`: while nothing changes a client
/// that sends it back gets `304` and no body; the JSON is gzipped for a
/// client that takes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_table_list_is_revalidated_and_compressed() {
    let server = spawn_server(test_config()).await;
    for _ in 0..12 {
        server.create_table(spades_protocol::TableOptions::default()).await;
    }
    // reqwest sends no Accept-Encoding and decodes nothing here: raw bytes.
    let url = server.url("/api/v1/tables");
    let first = server.http.get(&url).send().await.unwrap();
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["cache-control"], "no-cache");
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    let plain = first.bytes().await.unwrap();
    let again = server.http.get(&url).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"].to_str().unwrap(), etag);
    assert!(again.bytes().await.unwrap().is_empty());
    // A change: a new tag and the new list.
    server.create_table(spades_protocol::TableOptions::default()).await;
    let changed = server.http.get(&url).header("if-none-match", &etag).send().await.unwrap();
    assert_eq!(changed.status(), 200);
    assert_ne!(changed.headers()["etag"].to_str().unwrap(), etag);
    let zipped = server.http.get(&url).header("accept-encoding", "gzip").send().await.unwrap();
    assert_eq!(zipped.headers()["content-encoding"], "gzip");
    let z = zipped.bytes().await.unwrap();
    assert!(z.len() * 4 < plain.len(), "{} gzipped of {}", z.len(), plain.len());
    server.stop().await;
}

/// The page names its files under a versioned prefix, kept for a year and
/// gzipped for browsers that take it; the page itself is revalidated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_client_is_served_under_a_versioned_prefix() {
    let server = spawn_server(test_config()).await;
    let page = server.http.get(server.url("/")).send().await.unwrap();
    assert_eq!(page.headers()["cache-control"], "no-cache");
    let html = page.text().await.unwrap();
    let start = html.find("src=\"/v/").expect("the script under /v/") + "src=\"".len();
    let script = &html[start..start + html[start..].find('"').unwrap()];
    assert!(script.ends_with("/js/app.js"), "{script}");
    let version = script.trim_start_matches("/v/").split('/').next().unwrap().to_owned();
    assert!(html.contains(&format!("href=\"/v/{version}/style.css\"")), "{html}");
    let js = server.http.get(server.url(script)).send().await.unwrap();
    assert_eq!(js.status(), 200);
    assert_eq!(js.headers()["cache-control"], "public, max-age=31536000, immutable");
    // A module it imports, relative to it, is under the same prefix.
    let lobby = server.http.get(server.url(&format!("/v/{version}/js/lobby.js"))).send().await.unwrap();
    assert_eq!(lobby.headers()["cache-control"], "public, max-age=31536000, immutable");
    assert_eq!(
        js.text().await.unwrap(),
        server.http.get(server.url("/js/app.js")).send().await.unwrap().text().await.unwrap()
    );
    // Compressed for a browser that takes gzip, with the gzip form's own tag,
    // and still kept for good; the page preloads the lobby's modules under
    // the same prefix.
    let zipped = server
        .http
        .get(server.url(&format!("/v/{version}/js/lobby.js")))
        .header("accept-encoding", "gzip, deflate, br")
        .send()
        .await
        .unwrap();
    assert_eq!(zipped.headers()["content-encoding"], "gzip");
    assert_eq!(zipped.headers()["vary"], "accept-encoding");
    assert_eq!(zipped.headers()["cache-control"], "public, max-age=31536000, immutable");
    let plain_tag = lobby.headers()["etag"].to_str().unwrap().to_owned();
    let zipped_tag = zipped.headers()["etag"].to_str().unwrap().to_owned();
    assert_eq!(zipped_tag, format!("{}-gzip\"", plain_tag.trim_end_matches('"')));
    let z = zipped.bytes().await.unwrap();
    let raw = lobby.bytes().await.unwrap();
    assert!(z.len() * 2 < raw.len(), "{} gzipped of {}", z.len(), raw.len());
    let revalidated = server
        .http
        .get(server.url(&format!("/v/{version}/js/lobby.js")))
        .header("accept-encoding", "gzip")
        .header("if-none-match", &zipped_tag)
        .send()
        .await
        .unwrap();
    assert_eq!(revalidated.status(), 304);
    assert!(
        html.contains(&format!("<link rel=\"modulepreload\" href=\"/v/{version}/js/lobby.js\">")),
        "{html}"
    );
    // Another build's prefix gets today's file, not to be kept.
    let old = server.http.get(server.url("/v/000000000000/js/app.js")).send().await.unwrap();
    assert_eq!((old.status().as_u16(), old.headers()["cache-control"].to_str().unwrap()), (200, "no-cache"));
    let missing = server.http.get(server.url(&format!("/v/{version}/js/nope.js"))).send().await.unwrap();
    assert_eq!(missing.status(), 404);
    server.stop().await;
}

/// Finished matches are found however many newer matches are still in
/// play, a page at a time, the next page named in `Link` (the lobby's
/// recent matches ask for them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_matches_are_listed_past_newer_ones_a_page_at_a_time() {
    use spades_engine::{MatchEnd, Rules, Seat};
    use spades_protocol::{ClientMessage, MatchSummary, TableOptions};

    let server = spawn_server(test_config()).await;
    let short = TableOptions {
        rules: Rules { match_end: MatchEnd::Hands(5), ..Rules::default() },
        ..TableOptions::default()
    };
    // Three matches played to the end, then four newer ones in play.
    let mut done = Vec::new();
    let mut playing = Vec::new();
    for n in 0..7 {
        let created = server.create_table(short).await;
        let mut ann = server.client().await;
        ann.join(created.table, "Ann", Some(Seat::North)).await;
        ann.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
        ann.request(ClientMessage::Start { owner_token: Some(created.owner_token) }).await;
        if n < 3 {
            ann.play_until(|v| v.phase == TablePhase::Finished).await;
            done.push(created.table);
        } else {
            ann.view_until(|v| v.phase == TablePhase::Bidding).await;
            playing.push((created.table, ann));
        }
    }
    let get = |query: String| {
        let request = server.http.get(server.url(&query));
        async move {
            let resp = request.send().await.unwrap();
            assert_eq!(resp.status(), 200, "{query}");
            let link = resp.headers().get("link").map(|l| l.to_str().unwrap().to_owned());
            let ids: Vec<_> =
                resp.json::<Vec<MatchSummary>>().await.unwrap().iter().map(|m| m.table).collect();
            (link, ids)
        }
    };
    let newest: Vec<_> = playing.iter().rev().map(|(t, _)| *t).collect();
    assert_eq!(get("/api/v1/matches?limit=4".into()).await.1, newest, "the newest page is all in play");
    let (link, first) = get("/api/v1/matches?limit=2&finished=true".into()).await;
    assert_eq!(first, [done[2], done[1]]);
    let link = link.expect("a full page names the next");
    assert_eq!(link, format!("</api/v1/matches?limit=2&finished=true&before={}>; rel=\"next\"", done[1]));
    let next = link.trim_start_matches('<').split('>').next().unwrap().to_owned();
    let (link, second) = get(next).await;
    assert_eq!(second, [done[0]]);
    assert_eq!(link, None, "a page that is not full is the last");
    assert_eq!(get("/api/v1/matches?finished=false".into()).await.1, newest);
    let (_, after) = get(format!("/api/v1/matches?before={}", newest[1])).await;
    assert_eq!(after, [newest[2], newest[3], done[2], done[1], done[0]]);
    drop(playing);
    server.stop().await;
}
