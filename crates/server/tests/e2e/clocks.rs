//! Clocks, absence and leaving over real WebSockets, with short test tempos
//! (`tables.test_tempo_ms`) and a one-second grace.

use spades_engine::{MatchEnd, Rules, Seat};
use spades_protocol::{ActionSource, ClientMessage, SeatStatus, ServerMessage, TableOptions, TablePhase};

use crate::helpers::*;

fn quick_config() -> spades_server::Config {
    let mut config = test_config();
    config.tables.test_tempo_ms = 300;
    config.tables.grace_secs = 1;
    config.tables.closing_grace_secs = 1;
    config
}

/// East drops mid-hand and never comes back: the seat is held for the grace,
/// then a bot plays it, and the hand is finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_who_never_returns_is_replaced_by_a_bot_that_finishes_the_hand() {
    let server = spawn_server(quick_config()).await;
    let created = server.create_table(TableOptions::default()).await;
    let table = created.table;
    let mut north = server.client().await;
    north.join(table, "North", Some(Seat::North)).await;
    let mut east = server.client().await;
    east.join(table, "East", Some(Seat::East)).await;
    north.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    north.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
    // East plays its bid, then vanishes without a word.
    let v = east.view_until(|v| v.game.as_ref().is_some_and(|g| g.turn == Some(Seat::East))).await;
    east.request(action_message(simple_move(&v).unwrap())).await;
    drop(east);

    let away = north.view_until(|v| v.seats[1].status == SeatStatus::Away).await;
    assert!(away.seats[1].away_until.is_some());
    let bot = north.view_until(|v| v.seats[1].status == SeatStatus::Bot).await;
    assert_eq!(bot.seats[1].kind, Some(spades_protocol::SeatKind::Human));
    // North keeps playing; East's cards come from the table.
    north.play_until(|v| v.game.as_ref().is_some_and(|g| g.hand_number > 1)).await;
    let east_sources: Vec<ActionSource> = north
        .views
        .values()
        .filter_map(|v| v.last_action)
        .filter(|a| a.seat == Seat::East && matches!(a.action, spades_engine::Action::Play(_)))
        .map(|a| a.source)
        .collect();
    assert!(!east_sources.is_empty());
    assert!(east_sources.iter().all(|s| matches!(s, ActionSource::Bot | ActionSource::Timeout)));
    assert!(east_sources.contains(&ActionSource::Bot));
    server.stop().await;
}

/// South leaves on purpose; North finishes the match with South's bot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leavers_partner_finishes_the_match_with_the_bot() {
    let server = spawn_server(quick_config()).await;
    let rules = Rules { match_end: MatchEnd::Hands(5), ..Rules::default() };
    let created = server.create_table(TableOptions { rules, ..TableOptions::default() }).await;
    let table = created.table;
    let mut north = server.client().await;
    north.join(table, "North", Some(Seat::North)).await;
    let mut south = server.client().await;
    let (_, south_token) = south.join(table, "South", Some(Seat::South)).await;
    north.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    north.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
    south.view_until(|v| v.phase == TablePhase::Bidding).await;
    assert!(matches!(south.request(ClientMessage::Leave).await, ServerMessage::Ack { .. }));
    drop(south);
    north.view_until(|v| v.seats[2].status == SeatStatus::Left).await;
    // The token can come back only to watch.
    let mut ghost = server.client().await;
    assert!(matches!(
        ghost
            .request(ClientMessage::Resume {
                protocol: Some(spades_protocol::PROTOCOL_VERSION),
                table,
                token: Some(south_token)
            })
            .await,
        ServerMessage::Resumed { seat: Seat::South, .. }
    ));
    let gv = ghost.view_until(|_| true).await;
    assert!(gv.game.as_ref().unwrap().hand.is_none());
    let refused = ghost.request(ClientMessage::Bid { bid: 4, seq: None }).await;
    assert!(matches!(refused, ServerMessage::Error { code: spades_protocol::ErrorCode::SeatLeft, .. }));
    drop(ghost);

    let end = north.play_until(|v| v.phase == TablePhase::Finished).await;
    let result = end.game.as_ref().unwrap().result.unwrap();
    assert!(result.hands_played >= 5);
    assert_eq!(end.seats[2].status, SeatStatus::Left);
    let status = server.status(table).await;
    assert_eq!(status.summary.phase, TablePhase::Finished);
    server.stop().await;
}

/// Clocks run out over the wire too: with nobody acting, the table plays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timed_out_turns_are_played_and_marked() {
    let server = spawn_server(quick_config()).await;
    let created = server.create_table(TableOptions::default()).await;
    let mut north = server.client().await;
    north.join(created.table, "North", Some(Seat::North)).await;
    north.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    north.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
    let clocked = north.view_until(|v| v.clock.is_some_and(|c| c.seat == Seat::North)).await;
    let clock = clocked.clock.unwrap();
    assert_eq!(clock.duration_ms, 300);
    assert!(clock.deadline > clocked.server_time && clock.deadline <= clocked.server_time + 300);
    let v = north
        .view_until(|v| {
            v.last_action.is_some_and(|a| a.seat == Seat::North && a.source == ActionSource::Timeout)
        })
        .await;
    assert_eq!(v.seats[0].timeouts, 1);
    // Three in a row: autopilot. Then take over.
    let v = north.view_until(|v| v.seats[0].status == SeatStatus::Autopilot).await;
    assert_eq!(v.seats[0].timeouts, 3);
    assert!(matches!(north.request(ClientMessage::TakeOver).await, ServerMessage::Ack { .. }));
    north.view_until(|v| v.seats[0].status == SeatStatus::Present).await;
    server.stop().await;
}

/// On shutdown every connection gets a close frame ("going away").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_sends_close_frames() {
    let server = spawn_server(test_config()).await;
    let created = server.create_table(TableOptions::default()).await;
    let mut c = server.client().await;
    c.join(created.table, "Ann", None).await;
    c.view_until(|_| true).await;
    let mut idle = server.client().await;
    server.shutdown.cancel();
    for client in [&mut c, &mut idle] {
        while client.try_recv(WAIT).await.is_some() {}
        assert_eq!(client.closed.as_ref().map(|(code, _)| *code), Some(1001));
    }
    let _ = tokio::time::timeout(WAIT, server.task).await;
}

/// A connection that never answers pings is dropped and its seat goes away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_are_dropped() {
    let mut config = test_config();
    config.limits.ping_interval_secs = 1;
    let server = spawn_server(config).await;
    let created = server.create_table(TableOptions::default()).await;
    let mut watcher = server.client().await;
    watcher
        .request(ClientMessage::Watch {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table: created.table,
        })
        .await;
    // A raw client that joins and then never reads (so never answers pings).
    let mut mute = server.client().await;
    mute.join(created.table, "Mute", Some(Seat::West)).await;
    let start = std::time::Instant::now();
    // The watcher keeps reading (and so answers pings) until West is away.
    let v = watcher.view_until(|v| v.seats[3].status == SeatStatus::Away).await;
    assert!(start.elapsed() >= std::time::Duration::from_secs(2), "dropped too early");
    assert!(v.seats[3].away_until.is_some());
    drop(mute);
    server.stop().await;
}
