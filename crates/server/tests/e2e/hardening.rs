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
    let owner_token = created.owner_token.clone();
    assert!(matches!(owner.request(ClientMessage::AddBots { owner_token }).await, ServerMessage::Ack { .. }));
    // The owner gives the seat up in the lobby and a bot takes it.
    assert!(matches!(owner.request(ClientMessage::Leave).await, ServerMessage::Ack { .. }));
    let owner_token = created.owner_token.clone();
    assert!(matches!(owner.request(ClientMessage::AddBots { owner_token }).await, ServerMessage::Ack { .. }));
    let owner_token = created.owner_token.clone();
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
