//! Away from the table: a client that heartbeats is seen gone within
//! seconds of going silent, a match nobody is at any more ends instead of
//! playing itself out, and chat messages carry ids a client keeps once.

use std::time::{Duration, Instant};

use spades_engine::Seat;
use spades_protocol::{
    ActionSource, ClientMessage, MatchSummary, PlayedForYou, SeatStatus, ServerMessage, TableOptions,
    TablePhase,
};

use crate::helpers::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heartbeating_client_that_goes_silent_is_dropped_and_shown_away_in_seconds() {
    let mut config = test_config();
    config.limits.heartbeat_silence_secs = 1;
    let server = spawn_server(config).await;
    let created = server.create_table(TableOptions::default()).await;
    let mut north = server.client().await;
    north.join(created.table, "North", Some(Seat::North)).await;
    let mut east = server.client().await;
    east.join(created.table, "East", Some(Seat::East)).await;
    // Two pings set the client's pace (0.2 s here: the floor of 1 s holds).
    assert!(matches!(east.request(ClientMessage::Ping).await, ServerMessage::Pong { .. }));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(matches!(east.request(ClientMessage::Ping).await, ServerMessage::Pong { .. }));
    // East's network stalls: it sends nothing more (it still reads).
    let stalled = Instant::now();
    while east.try_recv(Duration::from_secs(3)).await.is_some() {}
    assert_eq!(east.closed.as_ref().map(|c| c.0), Some(4002), "{:?}", east.closed);
    assert!(stalled.elapsed() < Duration::from_millis(2500), "dropped after {:?}", stalled.elapsed());
    let v = north.view_until(|v| v.seats[1].status == SeatStatus::Away).await;
    assert!(v.seats[1].away_until.is_some());
    // A client that never sent a ping is held to the WebSocket pings only;
    // one that pings slowly, to three of its own intervals.
    let mut slow = server.client().await;
    slow.request(ClientMessage::Watch {
        protocol: Some(spades_protocol::PROTOCOL_VERSION),
        table: created.table,
    })
    .await;
    slow.request(ClientMessage::Ping).await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    slow.request(ClientMessage::Ping).await;
    let mut quiet = server.client().await;
    quiet
        .request(ClientMessage::Watch {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table: created.table,
        })
        .await;
    let until = Instant::now() + Duration::from_secs(2);
    while quiet.try_recv(until.saturating_duration_since(Instant::now())).await.is_some() {}
    assert!(!quiet.ended, "{:?}", quiet.closed);
    assert!(slow.try_recv(Duration::from_millis(10)).await.is_none() && !slow.ended, "{:?}", slow.closed);
    // Every snapshot says how long a dropped seat is held.
    assert_eq!(north.view.as_ref().unwrap().grace_ms, Some(60_000));
    server.stop().await;
}

async fn matches(server: &TestServer) -> Vec<MatchSummary> {
    server.http.get(server.url("/api/v1/matches")).send().await.unwrap().json().await.unwrap()
}

/// "Play now" left on purpose: the match ends instead of being played out
/// by bots. Listed as abandoned when the player made a move; not listed at
/// all when nobody ever did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_its_only_player_left_ends_at_once() {
    let server = spawn_server(test_config()).await;
    let mut tables = Vec::new();
    for played in [true, false] {
        let created = server.create_table(TableOptions::default()).await;
        let mut ann = server.client().await;
        ann.join(created.table, "Ann", Some(Seat::North)).await;
        ann.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
        ann.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
        if played {
            let v = ann.view_until(|v| v.game.as_ref().is_some_and(|g| g.turn == Some(Seat::North))).await;
            let r = ann.request(action_message(simple_move(&v).unwrap())).await;
            assert!(matches!(r, ServerMessage::Ack { .. }), "{r:?}");
        } else {
            ann.view_until(|v| v.phase == TablePhase::Bidding).await;
        }
        assert!(matches!(ann.request(ClientMessage::Leave).await, ServerMessage::Ack { .. }));
        // The table closes: the leaver, watching, is told.
        while ann.try_recv(WAIT).await.is_some() {}
        assert_eq!(ann.closed.as_ref().map(|c| c.0), Some(4003), "{:?}", ann.closed);
        let status =
            server.http.get(server.url(&format!("/api/v1/tables/{}", created.table))).send().await.unwrap();
        assert_eq!(status.status(), 404);
        let rec = server.record(created.table).await;
        assert!(rec.abandoned && !rec.finished && rec.result.is_none(), "{rec:?}");
        tables.push((created.table, played, rec.actions));
    }
    let listed = matches(&server).await;
    let (played, never) = (tables[0].0, tables[1].0);
    let line = listed.iter().find(|m| m.table == played).expect("a match the player played in is listed");
    assert!(line.abandoned && !line.finished);
    assert!(listed.iter().all(|m| m.table != never), "a match nobody played in is not listed");
    server.stop().await;
}

/// The only player drops and the grace runs out: the bots stop and wait
/// for a person; the player comes back and the match goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_do_not_play_a_match_alone_and_wait_for_its_player() {
    let mut config = test_config();
    config.tables.grace_secs = 1;
    config.tables.closing_grace_secs = 1;
    let server = spawn_server(config).await;
    let created = server.create_table(TableOptions::default()).await;
    let mut ann = server.client().await;
    let (_, token) = ann.join(created.table, "Ann", Some(Seat::North)).await;
    ann.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    ann.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
    ann.view_until(|v| v.phase == TablePhase::Bidding).await;
    drop(ann);
    // Away, then the grace runs out: the seat would be the bot's.
    let deadline = Instant::now() + WAIT;
    loop {
        let s = server.status(created.table).await;
        if s.summary.seats[0].status == SeatStatus::Bot {
            break;
        }
        assert!(Instant::now() < deadline, "the grace never ran out");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let before = server.status(created.table).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = server.status(created.table).await;
    assert_eq!(
        (before.bids, before.tricks_won, before.summary.hand_number),
        (after.bids, after.tricks_won, after.summary.hand_number),
        "nothing was played with nobody at the table"
    );
    // Ann comes back: her seat is hers again and the match goes on.
    let mut back = server.client().await;
    let r = back
        .request(ClientMessage::Resume {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table: created.table,
            token: Some(token),
        })
        .await;
    assert!(matches!(r, ServerMessage::Resumed { .. }), "{r:?}");
    let v = back.play_until(|v| v.game.as_ref().is_some_and(|g| g.tricks.len() >= 2)).await;
    assert_eq!(v.seats[0].status, SeatStatus::Present);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_messages_carry_ids_that_a_new_attach_repeats() {
    let server = spawn_server(test_config()).await;
    let created = server.create_table(TableOptions::default()).await;
    let mut ann = server.client().await;
    let (_, token) = ann.join(created.table, "Ann", Some(Seat::North)).await;
    let mut ids = Vec::new();
    for text in ["hi", "ready?", "gl"] {
        ann.request(ClientMessage::Chat { text: text.into() }).await;
        loop {
            if let ServerMessage::Chat { id, text: t, .. } = ann.recv().await {
                assert_eq!(t, text);
                ids.push(id);
                break;
            }
        }
    }
    assert!(ids.windows(2).all(|w| w[1] == w[0] + 1), "{ids:?}");
    // Coming back: the same messages with the same ids.
    drop(ann);
    let mut again = server.client().await;
    again
        .request(ClientMessage::Resume {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table: created.table,
            token: Some(token),
        })
        .await;
    let mut seen = Vec::new();
    while seen.len() < 3 {
        if let ServerMessage::Chat { id, .. } = again.recv().await {
            seen.push(id);
        }
    }
    assert_eq!(seen, ids);
    server.stop().await;
}

/// The moves a connection saw made, from its change frames: `(seq, move)`.
fn moves_seen(c: &Client) -> Vec<(u64, spades_protocol::LastAction)> {
    c.raw
        .iter()
        .filter_map(|text| match serde_json::from_str::<ServerMessage>(text) {
            Ok(ServerMessage::Change { seq, change }) => change.action.map(|a| (seq, a)),
            _ => None,
        })
        .collect()
}

/// North's connection goes away after a bid of its own; its clock runs out
/// and the table plays its cards. Back on the seat, its snapshot lists
/// exactly the moves the table made for it since its bid (with the frames
/// that showed them), no other seat's view ever holds them, and once North
/// plays a card of its own the list is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_back_from_a_lost_connection_is_told_what_the_table_played_for_them() {
    let mut config = test_config();
    config.tables.test_tempo_ms = 300;
    config.tables.grace_secs = 30;
    let server = spawn_server(config).await;
    let created = server.create_table(TableOptions::default()).await;
    let table = created.table;
    let mut north = server.client().await;
    let (_, token) = north.join(table, "North", Some(Seat::North)).await;
    let mut south = server.client().await;
    south.join(table, "South", Some(Seat::South)).await;
    let mut watcher = server.client().await;
    watcher.request(ClientMessage::Watch { protocol: Some(spades_protocol::PROTOCOL_VERSION), table }).await;
    north.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    north.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
    // North bids by itself, then its connection goes away.
    let v = north.view_until(|v| v.game.as_ref().is_some_and(|g| g.turn == Some(Seat::North))).await;
    let own = simple_move(&v).unwrap();
    assert!(matches!(own, spades_engine::Action::Bid(_)));
    assert!(matches!(north.request(action_message(own)).await, ServerMessage::Ack { .. }));
    assert!(v.played_for_you.is_empty(), "{:?}", v.played_for_you);
    drop(north);
    // The table plays two of North's cards for it.
    let for_north = |c: &Client| -> Vec<(u64, spades_protocol::LastAction)> {
        moves_seen(c).into_iter().filter(|(_, a)| a.seat == Seat::North).collect()
    };
    while for_north(&watcher).iter().filter(|(_, a)| a.source != ActionSource::Player).count() < 2 {
        watcher.recv().await;
    }
    // North comes back.
    let mut back = server.client().await;
    let r = back
        .request(ClientMessage::Resume {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table,
            token: Some(token),
        })
        .await;
    assert!(matches!(r, ServerMessage::Resumed { .. }), "{r:?}");
    let snapshot = back.view_until(|_| true).await;
    let seq = back.seq;
    let game = snapshot.game.as_ref().unwrap();
    assert_eq!(game.hand_number, 1, "the test keeps to the first hand");
    while watcher.seq < seq {
        watcher.recv().await;
    }
    let expected: Vec<PlayedForYou> = for_north(&watcher)
        .into_iter()
        .filter(|(s, _)| *s <= seq)
        .skip_while(|(_, a)| a.source == ActionSource::Player)
        .map(|(s, a)| PlayedForYou { hand_number: 1, action: a.action, source: a.source, seq: s })
        .collect();
    assert!(expected.len() >= 2, "{expected:?}");
    assert!(expected.iter().all(|p| matches!(p.action, spades_engine::Action::Play(_))), "{expected:?}");
    assert!(expected.iter().all(|p| p.source != ActionSource::Player), "{expected:?}");
    assert_eq!(snapshot.played_for_you, expected, "the resumed snapshot lists what the table played");
    // None of those cards is in North's hand any more.
    for p in &expected {
        if let spades_engine::Action::Play(card) = p.action {
            assert!(!game.hand.unwrap().contains(card));
        }
    }
    // North plays a card of its own: the list is gone.
    let after = back
        .play_until(|v| {
            v.game.as_ref().is_some_and(|g| g.hand_number > 1)
                || v.last_action.is_some_and(|a| a.seat == Seat::North && a.source == ActionSource::Player)
        })
        .await;
    assert_eq!(after.game.as_ref().unwrap().hand_number, 1, "North played within the hand");
    assert!(after.played_for_you.is_empty(), "{:?}", after.played_for_you);
    // A snapshot says the same as the change frames did.
    back.request(ClientMessage::Sync).await;
    let synced = back.view_until(|_| true).await;
    assert!(synced.played_for_you.is_empty(), "{:?}", synced.played_for_you);
    // Nobody else ever saw North's list: the spectator has none, and every
    // entry in South's own view is a move the table made for South.
    while south.try_recv(Duration::from_millis(50)).await.is_some() {}
    while watcher.seq < south.seq {
        watcher.recv().await;
    }
    assert!(watcher.views.values().all(|v| v.played_for_you.is_empty()));
    let made: std::collections::HashMap<u64, spades_protocol::LastAction> =
        moves_seen(&watcher).into_iter().collect();
    assert!(south.views.values().any(|v| !v.played_for_you.is_empty()), "South's own list");
    for v in south.views.values() {
        for p in &v.played_for_you {
            assert_eq!(made.get(&p.seq).map(|a| a.seat), Some(Seat::South), "South's view holds {p:?}");
        }
    }
    server.stop().await;
}
