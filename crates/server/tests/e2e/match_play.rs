use spades_engine::{Action, Match, MatchEnd, Rules, Seat};
use spades_protocol::{
    ActionSource, ClientMessage, SeatStatus, ServerMessage, TableOptions, TablePhase, Tempo,
};

use crate::helpers::*;

/// Four clients create a table, sit, start and play a whole match with legal
/// moves chosen from their own views; a spectator watches. Every frame is
/// checked for leaks, and the final scores equal the engine's replay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_clients_play_a_whole_match_that_replays_exactly() {
    let server = spawn_server(test_config()).await;
    let rules = Rules { match_end: MatchEnd::Hands(5), ..Rules::default() };
    let created =
        server.create_table(TableOptions { rules, tempo: Tempo::Normal, ..TableOptions::default() }).await;
    let table = created.table;

    let mut players = Vec::new();
    for seat in Seat::ALL {
        let mut c = server.client().await;
        let (got, token) = c.join(table, seat.name(), Some(seat)).await;
        assert_eq!(got, seat);
        assert_eq!(token.len(), 64);
        players.push(c);
    }
    let mut spectator = server.client().await;
    assert!(matches!(
        spectator
            .request(ClientMessage::Watch { protocol: Some(spades_protocol::PROTOCOL_VERSION), table })
            .await,
        ServerMessage::Watching { .. }
    ));
    let first = spectator.view_until(|_| true).await;
    assert_eq!(first.phase, TablePhase::Lobby);
    assert!(first.seats.iter().all(|s| s.status == SeatStatus::Present));

    let start =
        players[0].request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
    assert!(matches!(start, ServerMessage::Ack { .. }), "{start:?}");
    players[0].next_view_until(|v| v.phase == TablePhase::Bidding).await;

    let mut moves = Vec::new();
    let mut target = 0u64;
    loop {
        // Bring every client (and the spectator) up to the latest change.
        target = target.max(players.iter().map(|p| p.seq).max().unwrap_or(0));
        for c in players.iter_mut().chain(std::iter::once(&mut spectator)) {
            while c.seq < target {
                c.recv().await;
            }
        }
        let view = players[0].view.clone().unwrap();
        if view.phase == TablePhase::Finished {
            break;
        }
        let turn = view.game.as_ref().and_then(|g| g.turn).expect("someone is on turn");
        let p = &mut players[usize::from(turn.index())];
        let action = simple_move(p.view.as_ref().unwrap()).expect("the seat on turn has legal moves");
        let reply = p.request(action_message(action)).await;
        assert!(matches!(reply, ServerMessage::Ack { .. }), "{reply:?}");
        moves.push(spades_engine::Move { seat: turn, action });
        target += 1;
        assert!(moves.len() < 2000, "the match does not end");
    }

    // Views say who made each move (the last one of a hand is not shown).
    let v = players[0].views.values().find(|v| v.last_action.is_some()).unwrap();
    assert_eq!(v.last_action.unwrap().source, ActionSource::Player);
    assert!(players[0].view.as_ref().unwrap().last_action.is_none());

    let status = server.status(table).await;
    assert_eq!(status.summary.phase, TablePhase::Finished);
    assert!(status.seed.is_some(), "the seed is revealed once the match is over");
    let fair = status.fair.clone().expect("a fair match");
    assert!(fair.fixed);
    let seeds = fair.seeds(table).expect("the server seed is revealed and matches its commitment");
    let replay = Match::replay_fair(rules, seeds, moves.iter().copied()).unwrap();
    assert_eq!(replay.result().copied(), status.result);
    assert_eq!(replay.results(), status.hands.as_slice());
    assert_eq!(replay.scores().0, status.summary.scores);
    assert!(status.hands.len() >= 5);

    let refs: Vec<&Client> = players.iter().collect();
    assert_no_leaks(&refs, &[&spectator]);
    assert!(spectator.views.len() > 100);
    server.stop().await;
}

/// A dropped client resumes with its token and at once receives the current
/// view, with the same hand; meanwhile the others saw it away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_client_resumes_its_seat_with_its_token() {
    let server = spawn_server(test_config()).await;
    let created = server.create_table(TableOptions::default()).await;
    let table = created.table;
    let mut north = server.client().await;
    let (_, token) = north.join(table, "North", Some(Seat::North)).await;
    north.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    north.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
    // Play until North has a hand in progress (bots act at once).
    let before = north.view_until(|v| v.game.as_ref().is_some_and(|g| g.turn == Some(Seat::North))).await;
    let hand_before = before.game.as_ref().unwrap().hand.unwrap();
    if let Some(action) = simple_move(&before) {
        north.request(action_message(action)).await;
    }
    let seen = north.view_until(|v| v.game.as_ref().is_some_and(|g| g.turn == Some(Seat::North))).await;
    let hand_now = seen.game.as_ref().unwrap().hand.unwrap();
    assert!(hand_now.is_subset(hand_before) || hand_now.len() == 13);
    drop(north);

    // A spectator sees North away, with a grace deadline.
    let mut watcher = server.client().await;
    watcher.request(ClientMessage::Watch { protocol: Some(spades_protocol::PROTOCOL_VERSION), table }).await;
    let away = watcher.view_until(|v| v.seats[0].status == SeatStatus::Away).await;
    assert!(away.seats[0].away_until.unwrap() > away.server_time);

    let mut back = server.client().await;
    let reply = back
        .request(ClientMessage::Resume {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table,
            token: Some(token.clone()),
        })
        .await;
    assert!(matches!(reply, ServerMessage::Resumed { seat: Seat::North, .. }), "{reply:?}");
    let view = back.view_until(|_| true).await;
    assert_eq!(view.you, Some(Seat::North));
    assert_eq!(view.game.as_ref().unwrap().hand, Some(hand_now));
    assert_eq!(view.seats[0].status, SeatStatus::Present);
    let present = watcher.view_until(|v| v.seats[0].status == SeatStatus::Present).await;
    assert_eq!(present.seats[0].away_until, None);

    // A second connection with the same token plays the same seat.
    let mut twin = server.client().await;
    twin.request(ClientMessage::Resume {
        protocol: Some(spades_protocol::PROTOCOL_VERSION),
        table,
        token: Some(token),
    })
    .await;
    let v = twin.view_until(|_| true).await;
    assert_eq!(v.game.as_ref().unwrap().hand, Some(hand_now));
    let _ = Action::Bid(0);
    server.stop().await;
}

/// The owner fills three seats with bots; the human plays a whole hand
/// against them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_fill_seats_and_play_a_hand() {
    let server = spawn_server(test_config()).await;
    let created = server.create_table(TableOptions::default()).await;
    let mut me = server.client().await;
    me.join(created.table, "Me", None).await;
    assert!(matches!(
        me.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await,
        ServerMessage::Error { code: spades_protocol::ErrorCode::SeatsEmpty, .. }
    ));
    me.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    let v = me.view_until(|v| v.seats.iter().all(|s| s.status != SeatStatus::Empty)).await;
    assert_eq!(v.seats.iter().filter(|s| s.status == SeatStatus::Bot).count(), 3);
    me.request(ClientMessage::Start { owner_token: Some(created.owner_token) }).await;
    let v = me.play_until(|v| v.game.as_ref().is_some_and(|g| g.hand_number > 1)).await;
    let last = v.game.as_ref().unwrap().last_hand.as_ref().unwrap();
    assert_eq!(last.tricks.0.iter().map(|&t| u32::from(t)).sum::<u32>(), 13);
    assert_eq!(last.hand_number, 1);
    server.stop().await;
}
