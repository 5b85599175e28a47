//! A move is for one turn: a bid or card carries the `seq` of the frame it
//! was chosen from, and is refused `stale` when a bid or card was applied at
//! the table after that frame, by anyone, a timeout included.

use spades_engine::Seat;
use spades_protocol::{ActionSource, ClientMessage, ErrorCode, SeatStatus, ServerMessage, TableOptions};

use crate::helpers::*;

fn tempo(ms: u64) -> spades_server::Config {
    let mut config = test_config();
    config.tables.test_tempo_ms = ms;
    config
}

/// The move with its `seq` set.
fn chosen_at(action: spades_engine::Action, seq: u64) -> ClientMessage {
    match action_message(action) {
        ClientMessage::Bid { bid, .. } => ClientMessage::Bid { bid, seq: Some(seq) },
        ClientMessage::Play { card, .. } => ClientMessage::Play { card, seq: Some(seq) },
        other => other,
    }
}

/// The reported case: a move chosen during a stall arrives after the table
/// played for the player on time, on the player's next turn. It is refused
/// with what happened, and nothing is applied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_chosen_before_a_timeout_is_refused_on_the_next_turn() {
    let server = spawn_server(tempo(300)).await;
    let created = server.create_table(TableOptions::default()).await;
    let mut north = server.client().await;
    north.join(created.table, "North", Some(Seat::North)).await;
    north.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    north.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
    // North's turn comes; the player chooses, but the move is held up.
    let on_turn = north.view_until(|v| v.game.as_ref().is_some_and(|g| g.turn == Some(Seat::North))).await;
    let chosen_seq = north.seq;
    let chosen = simple_move(&on_turn).unwrap();
    // The clock runs out and the table plays for North ...
    let timed_out = north
        .view_until(|v| {
            v.last_action.is_some_and(|a| a.seat == Seat::North && a.source == ActionSource::Timeout)
        })
        .await;
    let played = timed_out.last_action.unwrap().action;
    // ... and North is on turn again when the held move arrives.
    north.view_until(|v| v.game.as_ref().is_some_and(|g| g.turn == Some(Seat::North))).await;
    let before = north.seq;
    let reply = north.request(chosen_at(chosen, chosen_seq)).await;
    let ServerMessage::Error { code, message, .. } = reply else {
        panic!("the stale move was taken: {reply:?}")
    };
    assert_eq!(code, ErrorCode::Stale);
    let said = match played {
        spades_engine::Action::Bid(0) => "bid nil".to_owned(),
        spades_engine::Action::Bid(b) => format!("bid {b}"),
        spades_engine::Action::Play(_) => "played ".to_owned(),
    };
    assert!(message.starts_with(&format!("the table {said}")), "{message}");
    assert!(message.ends_with("for you when your time ran out"), "{message}");
    // Nothing was applied: the next move North makes is on the table's
    // clock again (or the player's), never the stale one.
    let next = north
        .next_view_until(|v| v.last_action.is_some_and(|a| a.seat == Seat::North))
        .await
        .last_action
        .unwrap();
    assert_eq!(next.source, ActionSource::Timeout, "seq {before}: {next:?}");
    server.stop().await;
}

/// Frames that are not moves (a partner's presence, chat) never make a move
/// stale; a move without `seq` is taken as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presence_and_chat_frames_leave_a_move_current() {
    let server = spawn_server(tempo(20_000)).await;
    let created = server.create_table(TableOptions::default()).await;
    let mut north = server.client().await;
    north.join(created.table, "North", Some(Seat::North)).await;
    let mut east = server.client().await;
    east.join(created.table, "East", Some(Seat::East)).await;
    north.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    north.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
    let mut moves = 0;
    while moves < 2 {
        // East plays whenever on turn, moves without seq (as old clients).
        let v = east.view.clone();
        if let Some(v) = v
            && v.game.as_ref().is_some_and(|g| g.turn == Some(Seat::East))
        {
            let r = east.request(action_message(simple_move(&v).unwrap())).await;
            assert!(matches!(r, ServerMessage::Ack { .. }), "{r:?}");
            // The ack comes before the frame of the move: wait for it, or
            // East's view still says it is East's turn.
            east.view_until(|v| v.game.as_ref().is_none_or(|g| g.turn != Some(Seat::East))).await;
        }
        let Some(v) = north.view.clone() else {
            north.recv().await;
            continue;
        };
        if v.game.as_ref().is_some_and(|g| g.turn == Some(Seat::North)) {
            let chosen_seq = north.seq;
            let chosen = simple_move(&v).unwrap();
            if moves == 1 {
                // Something that is not a move happens before the move
                // arrives: chat, and East's connection dropping.
                north.request(ClientMessage::Chat { text: "one moment".into() }).await;
                drop(east);
                east = server.client().await;
                north.view_until(|v| v.seats[1].status == SeatStatus::Away).await;
                assert!(north.seq > chosen_seq, "the drop was a frame");
                let r = east
                    .request(ClientMessage::Watch {
                        protocol: Some(spades_protocol::PROTOCOL_VERSION),
                        table: created.table,
                    })
                    .await;
                assert!(matches!(r, ServerMessage::Watching { .. }));
            }
            let r = north.request(chosen_at(chosen, chosen_seq)).await;
            assert!(matches!(r, ServerMessage::Ack { .. }), "move {moves}: {r:?}");
            moves += 1;
            // The frame of the move follows its ack.
            north.view_until(|v| v.last_action.is_some_and(|a| a.seat == Seat::North)).await;
            continue;
        }
        tokio::select! {
            _ = north.recv() => {}
            _ = east.recv() => {}
        }
    }
    server.stop().await;
}

/// A seq that is not a whole number is a bad message naming the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_seq_is_refused_with_its_field() {
    let server = spawn_server(test_config()).await;
    let created = server.create_table(TableOptions::default()).await;
    let mut north = server.client().await;
    north.join(created.table, "North", Some(Seat::North)).await;
    for bad in [r#""12""#, "-1", "1.5", "null"] {
        north.send_raw(&format!(r#"{{"type":"bid","bid":3,"seq":{bad},"req":9}}"#)).await;
        match north.reply_to(9).await {
            ServerMessage::Error { code: ErrorCode::BadMessage, message, .. } => {
                assert!(message.starts_with("\"seq\" must be"), "{bad}: {message}");
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
    server.stop().await;
}
