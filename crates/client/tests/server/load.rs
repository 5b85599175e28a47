//! A short load run against the real server.

use std::time::Duration;

use spades_client::Endpoint;
use spades_client::load::{self, LoadConfig, Mode};
use spades_engine::{MatchEnd, Rules};

use crate::helpers::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_load_run_has_no_errors_and_every_table_finishes_a_hand() {
    let server = spawn_server(test_config()).await;
    let mut cfg = LoadConfig::new(Endpoint::parse(&server.url()).unwrap());
    cfg.tables = 3;
    cfg.think = Duration::ZERO;
    cfg.warmup = Duration::from_millis(200);
    cfg.duration = Duration::from_secs(3);
    cfg.rules = Rules { match_end: MatchEnd::Hands(5), ..Rules::default() };
    // Connect from two loopback addresses, as big runs do.
    cfg.sources = load::loopback_sources(2);
    cfg.server_pid = Some(std::process::id());
    let mut report = load::run(&cfg).await.unwrap();
    // Every table slot keeps playing until it finishes a hand (slow debug
    // builds on a busy machine may need more than the measured window).
    for _ in 0..10 {
        if report.tables_without_a_finished_hand == 0 {
            break;
        }
        report = load::run(&cfg).await.unwrap();
    }
    println!("{}", report.to_table());
    assert_eq!(report.mode, Mode::Game);
    assert_eq!((report.tables, report.connections), (3, 12));
    assert!(report.clean(), "{}", report.to_table());
    assert_eq!(report.tables_without_a_finished_hand, 0, "{}", report.to_table());
    assert!(report.hands >= 3);
    assert!(report.actions > 0 && report.latency_ms.samples > 0);
    assert!(report.latency_ms.p50 <= report.latency_ms.p99 && report.latency_ms.p99 <= report.latency_ms.max);
    assert!(report.frames_in_per_s > report.frames_out_per_s, "four views and an ack per move");
    assert!(report.server_rss_kib.is_some_and(|k| k > 0));
    let json = serde_json::to_value(&report).unwrap();
    assert!(json["latency_ms"]["p999"].is_number());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_is_measured_per_table_and_per_connection() {
    let server = spawn_server(test_config()).await;
    let endpoint = Endpoint::parse(&server.url()).unwrap();
    let report = load::memory(&endpoint, std::process::id(), 20, 40, &[]).await.unwrap();
    assert_eq!((report.tables, report.connections), (20, 40));
    assert!(report.baseline_kib > 0 && report.with_connections_kib > 0);
    assert!(report.to_table().contains("per connection"));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bot_client_plays_a_whole_match() {
    use spades_client::Client;
    use spades_client::protocol::{CreateTable, TableOptions, TablePhase};

    let server = spawn_server(test_config()).await;
    let client = Client::new(&server.url()).unwrap();
    let options = TableOptions {
        rules: Rules { match_end: MatchEnd::Hands(5), ..Rules::default() },
        ..TableOptions::default()
    };
    let created = client.create_table(&CreateTable { name: None, options }).await.unwrap();
    let moves = within(
        "the bots' match",
        load::bots(&client, created.table, 4, Duration::ZERO, Some(&created.owner_token)),
    )
    .await
    .unwrap();
    let status = client.table(created.table).await.unwrap();
    assert_eq!(status.summary.phase, TablePhase::Finished);
    assert_eq!(moves, 56 * status.hands.len() as u64);
    server.stop().await;
}

/// The same run with every seat signed in as a guest account: the seats
/// join with no name and play as their accounts, without errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_in_load_run_plays_as_accounts() {
    let server = spawn_server(test_config()).await;
    let mut cfg = LoadConfig::new(Endpoint::parse(&server.url()).unwrap());
    cfg.tables = 2;
    cfg.warmup = Duration::from_millis(200);
    cfg.duration = Duration::from_secs(2);
    cfg.rules = Rules { match_end: MatchEnd::Hands(5), ..Rules::default() };
    cfg.signed_in = true;
    let report = load::run(&cfg).await.unwrap();
    assert_eq!((report.tables, report.connections), (2, 8));
    assert!(report.clean(), "{}", report.to_table());
    assert!(report.actions > 0, "{}", report.to_table());
    // Every seat was an account: the lobby names them by their generated
    // names, never "bot north".
    let tables = spades_client::Client::new(&server.url())
        .unwrap()
        .tables(spades_client::TableQuery::default())
        .await
        .unwrap();
    assert!(!tables.is_empty());
    for t in &tables {
        for s in &t.seats {
            let name = s.name.as_deref().unwrap_or("");
            assert!(!name.starts_with("bot "), "{name}");
        }
    }
    server.stop().await;
}
