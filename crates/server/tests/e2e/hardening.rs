//! Storms: floods of REST reads, failing storage and restarts must never
//! freeze a table, fork its log or lose an acknowledged move.

use std::time::{Duration, Instant};

use spades_protocol::{ClientMessage, ServerMessage, TableOptions, TablePhase};
use uuid::Uuid;

use crate::helpers::*;

/// Starts a table with four bots; returns it and a spectator watching it.
async fn bots_table(server: &TestServer) -> (Uuid, Client) {
    let created = server.create_table(TableOptions::default()).await;
    let table = created.table;
    let mut owner = server.client().await;
    owner.join(table, "Owner", None).await;
    let owner_token = Some(created.owner_token.clone());
    assert!(matches!(
        owner.request(ClientMessage::AddBots { owner_token: owner_token.clone() }).await,
        ServerMessage::Ack { .. }
    ));
    // The owner gives the seat up in the lobby and a bot takes it.
    assert!(matches!(owner.request(ClientMessage::Leave).await, ServerMessage::Ack { .. }));
    let owner_token = Some(created.owner_token.clone());
    assert!(matches!(
        owner.request(ClientMessage::AddBots { owner_token: owner_token.clone() }).await,
        ServerMessage::Ack { .. }
    ));
    let owner_token = Some(created.owner_token.clone());
    assert!(matches!(owner.request(ClientMessage::Start { owner_token }).await, ServerMessage::Ack { .. }));
    (table, owner)
}

/// Moves seen so far at the table: bids, tricks and hands.
fn progress(v: &spades_protocol::TableView) -> usize {
    v.game.as_ref().map_or(0, |g| {
        let left: usize = g.cards_left.0.iter().map(|&n| usize::from(n)).sum();
        usize::from(g.hand_number) * 1000 + g.bids.0.iter().flatten().count() + (52 - left)
    })
}

/// The flood of issue 12: a bots-only table with search bots, thousands of
/// status reads in flight at once. The table must keep moving during and
/// after the flood.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rest_flood_never_freezes_the_bots() {
    let mut config = test_config();
    config.tables.bot = spades_bots::Strength::Search;
    config.tables.bot_delay_ms = 100;
    // One address floods: the per-address rate limit would answer most of
    // it with 429 before it reached the table.
    config.limits.requests_per_minute_per_ip = 0;
    let server = spawn_server(config).await;
    let (table, mut watcher) = bots_table(&server).await;
    watcher.view_until(|v| v.phase == TablePhase::Bidding).await;
    let url = server.url(&format!("/api/v1/tables/{table}"));
    let http = reqwest::Client::builder().pool_max_idle_per_host(512).build().unwrap();
    let flood_until = Instant::now() + Duration::from_secs(3);
    let mut tasks = Vec::new();
    for _ in 0..2000 {
        let (http, url) = (http.clone(), url.clone());
        tasks.push(tokio::spawn(async move {
            let mut answered = 0u32;
            while Instant::now() < flood_until {
                if let Ok(r) = http.get(&url).send().await
                    && r.status().is_success()
                {
                    answered += 1;
                }
            }
            answered
        }));
    }
    let mut answered = 0;
    for t in tasks {
        answered += t.await.unwrap();
    }
    assert!(answered > 100, "the flood was served ({answered} answers)");
    // The table moved on: at least a few more moves within a few bot delays.
    let before = watcher.view.as_ref().map_or(0, progress);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let now = watcher.view.as_ref().map_or(0, progress);
        if now >= before + 4 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the bots stopped at {before}");
        watcher.try_recv(Duration::from_millis(500)).await;
    }
    // And the status read during the flood is the table's, not a stale one.
    let status = server.status(table).await;
    assert!(status.summary.phase != TablePhase::Lobby);
    server.stop().await;
}

/// The real server on SQLite whose writes fail on demand.
async fn faulty_server() -> (TestServer, spades_server::storage::Faults, std::path::PathBuf) {
    let data = std::env::temp_dir().join(format!("spades-faults-{}", Uuid::new_v4().simple()));
    let journal = spades_server::storage::Journal::open("", &data).await.unwrap();
    let (journal, faults) = journal.with_faults();
    let mut config = test_config();
    config.storage.in_memory = false;
    config.tables.bot_delay_ms = 50;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let task = tokio::spawn(spades_server::serve_with(listener, config, journal, shutdown.clone()));
    (TestServer { addr, shutdown, task, http: reqwest::Client::new() }, faults, data)
}

/// While SQLite refuses every action write, a player's move is refused with
/// `storage_unavailable` and nothing changes; when it answers again the
/// table goes on by itself, and the log matches what everybody was shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moves_are_refused_while_storage_is_down_and_the_table_resumes_by_itself() {
    use spades_server::storage::Op;
    let (server, faults, data) = faulty_server().await;
    let created = server.create_table(TableOptions::default()).await;
    let table = created.table;
    let mut ann = server.client().await;
    let (seat, _) = ann.join(table, "Ann", None).await;
    let owner_token = Some(created.owner_token.clone());
    ann.request(ClientMessage::AddBots { owner_token: owner_token.clone() }).await;
    let owner_token = Some(created.owner_token.clone());
    ann.request(ClientMessage::Start { owner_token }).await;
    // Wait for Ann's turn.
    let v = ann.view_until(|v| v.game.as_ref().is_some_and(|g| g.turn == Some(seat))).await;
    let action = simple_move(&v).unwrap();
    faults.fail_for(Some(Op::Action), Duration::from_secs(2));
    let reply = ann.request(action_message(action)).await;
    match reply {
        ServerMessage::Error { code, .. } => assert_eq!(code, spades_protocol::ErrorCode::StorageUnavailable),
        other => panic!("expected storage_unavailable, got {other:?}"),
    }
    // Nothing changed: still Ann's turn.
    let status = server.status(table).await;
    assert_eq!(status.turn, Some(seat));
    tokio::time::sleep(Duration::from_millis(2100)).await;
    // Storage is back: the same move is accepted and the bots play on.
    let reply = ann.request(action_message(action)).await;
    assert!(matches!(reply, ServerMessage::Ack { .. }), "{reply:?}");
    // Round to Ann again: the table waits for her, so it stands still.
    let v = ann.next_view_until(|v| v.game.as_ref().is_some_and(|g| g.turn == Some(seat))).await;
    // The log holds exactly the moves Ann has seen.
    let record = server.record(table).await;
    let game = v.game.as_ref().unwrap();
    let bids = game.bids.0.iter().flatten().count();
    let played = 52 - game.cards_left.0.iter().map(|&n| usize::from(n)).sum::<usize>();
    assert_eq!(record.actions, bids + played, "log and memory agree");
    assert!(faults.injected() >= 1);
    server.stop().await;
    let _ = std::fs::remove_dir_all(&data);
}
