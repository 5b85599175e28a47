//! The library against the real server: a whole match by four library
//! clients, refusals, and a session that reconnects and resumes its seat.

use std::time::Duration;

use spades_bots::Strength;
use spades_client::protocol::{CreateTable, SeatStatus, TableOptions, TablePhase, Tempo};
use spades_client::{
    Attach, Backoff, Client, Command, Connection, ErrorCode, Event, ServerMessage, SessionOptions,
    TableQuery, TableView,
};
use spades_engine::{Action, Legal, MatchEnd, Rules, Seat};

use crate::helpers::*;

fn five_hands() -> TableOptions {
    TableOptions {
        rules: Rules { match_end: MatchEnd::Hands(5), ..Rules::default() },
        tempo: Tempo::Normal,
        ..TableOptions::default()
    }
}

/// Plays one seat with the rule bot until the match is over; returns the
/// last view and the number of moves made.
async fn play_seat(mut conn: Connection) -> (TableView, u32) {
    let mut moves = 0;
    loop {
        let msg = conn.recv().await.expect("the connection stays up");
        let ServerMessage::View { view, .. } = msg else { continue };
        if view.phase == TablePhase::Finished {
            return (*view, moves);
        }
        let Some(game) = view.game.as_ref() else { continue };
        if game.turn.is_some() && game.turn == view.you {
            let action = spades_bots::choose(Strength::Rule, game, u64::from(moves));
            conn.act(action).await.expect("the rule bot's moves are legal");
            moves += 1;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_library_clients_play_a_whole_match() {
    let server = spawn_server(test_config()).await;
    let client = Client::new(&server.url()).unwrap();
    let created = client
        .create_table(&CreateTable { name: Some("Library".into()), options: five_hands() })
        .await
        .unwrap();
    let listed =
        client.tables(TableQuery { phase: Some(TablePhase::Lobby), ..Default::default() }).await.unwrap();
    assert!(listed.iter().any(|t| t.table == created.table && t.open_seats == 4));

    let mut conns = Vec::new();
    for seat in Seat::ALL {
        let mut c = client.connect().await.unwrap();
        assert!(c.server().starts_with("spades-server/"));
        let joined = c.join(created.table, seat.name(), Some(seat)).await.unwrap();
        assert_eq!((joined.table, joined.seat), (created.table, seat));
        assert!(!joined.token.is_empty());
        conns.push(c);
    }
    // Refusals come back typed, with the server's explanation.
    let mut extra = client.connect().await.unwrap();
    let err = extra.join(created.table, "Late", None).await.unwrap_err();
    assert_eq!(err.refusal(), Some(ErrorCode::TableFull), "{err}");
    let err = conns[1].start("not the owner token").await.unwrap_err();
    assert_eq!(err.refusal(), Some(ErrorCode::InvalidToken), "{err}");

    conns[0].start(&created.owner_token).await.unwrap();
    let players: Vec<_> = conns.into_iter().map(|c| tokio::spawn(play_seat(c))).collect();
    let mut total = 0;
    let mut finals = Vec::new();
    for p in players {
        let (view, moves) = within("the match to end", p).await.unwrap();
        total += moves;
        finals.push(view);
    }
    let result = finals[0].game.as_ref().and_then(|g| g.result).expect("a result");
    assert!(result.hands_played >= 5);
    assert!(finals.iter().all(|v| v.game.as_ref().and_then(|g| g.result) == Some(result)));
    // Four bids and 52 cards a hand, all made by the library clients.
    assert_eq!(total, 56 * u32::from(result.hands_played));

    let status = client.table(created.table).await.unwrap();
    assert_eq!(status.summary.phase, TablePhase::Finished);
    assert_eq!(status.result, Some(result));
    assert!(status.seed.is_some());
    let missing = client.table(uuid::Uuid::nil()).await.unwrap_err();
    assert_eq!(missing.refusal(), Some(ErrorCode::TableNotFound));
    server.stop().await;
}

/// Waits for the next view, skipping other events; panics on an end.
async fn next_view(session: &mut spades_client::Session) -> TableView {
    loop {
        match within("a view", session.next_event()).await {
            Some(Event::View { view, .. }) => return *view,
            Some(Event::Ended { reason }) => panic!("the session ended: {reason}"),
            Some(_) => {}
            None => panic!("no more events"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_reconnects_and_resumes_its_seat() {
    let server = spawn_server(test_config()).await;
    let proxy = Proxy::start(server.addr).await;
    let client = Client::new(&server.url()).unwrap();
    let created = client.create_table(&CreateTable { name: None, options: five_hands() }).await.unwrap();

    // The session goes through the proxy, which can cut it.
    let through_proxy = Client::new(&proxy.url()).unwrap();
    let opts = SessionOptions {
        backoff: Backoff { initial: Duration::from_millis(50), ..Backoff::default() },
        ..SessionOptions::default()
    };
    let attach = Attach::Join { table: created.table, name: "Ann".into(), seat: Some(Seat::North) };
    let mut session = through_proxy.session(attach, opts).await.unwrap();
    assert_eq!(session.seat(), Some(Seat::North));
    assert!(session.token().is_some());
    session.send(Command::AddBots { owner_token: created.owner_token.clone() }).unwrap();
    session.send(Command::Start { owner_token: created.owner_token.clone() }).unwrap();

    // Play until it is North's turn in the play (a bid has been made).
    let before = loop {
        let v = next_view(&mut session).await;
        let Some(g) = v.game.as_ref() else { continue };
        if g.turn != Some(Seat::North) {
            continue;
        }
        if matches!(g.legal, Legal::Play { .. }) {
            break v;
        }
        session.send(Command::from(spades_bots::choose(Strength::Rule, g, 1))).unwrap();
    };

    assert_eq!(proxy.cut_all(), 1);
    let mut saw = (false, false);
    let after = loop {
        match within("reconnection", session.next_event()).await.expect("events") {
            Event::Disconnected { attempt, .. } => {
                assert_eq!(attempt, 1);
                saw.0 = true;
            }
            Event::Reconnected { attempts } => {
                assert_eq!(attempts, 1);
                saw.1 = true;
            }
            Event::View { view, .. } if saw.1 => break *view,
            Event::Ended { reason } => panic!("ended: {reason}"),
            _ => {}
        }
    };
    assert!(saw.0 && saw.1);
    // The same seat, the same hand, the same cards, still on turn.
    let (g0, g1) = (before.game.as_ref().unwrap(), after.game.as_ref().unwrap());
    assert_eq!(after.you, Some(Seat::North));
    assert_eq!(g1.hand_number, g0.hand_number);
    assert_eq!(g1.hand, g0.hand);
    assert_eq!(g1.turn, Some(Seat::North));
    assert_eq!(after.seats[0].status, SeatStatus::Present);

    // And the seat plays on.
    let card = match g1.legal {
        Legal::Play { cards } => cards.first().unwrap(),
        other => panic!("expected to play, got {other:?}"),
    };
    let req = session.send(Command::Play(card)).unwrap();
    loop {
        match within("the ack", session.next_event()).await.expect("events") {
            Event::Ack { req: r } if r == req => break,
            Event::Refused { message, .. } => panic!("refused: {message}"),
            _ => {}
        }
    }
    let v = next_view(&mut session).await;
    assert!(
        v.game.as_ref().unwrap().played.contains(card)
            || v.game.as_ref().unwrap().hand_number > g1.hand_number
    );
    session.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_resume_ends_the_session() {
    let server = spawn_server(test_config()).await;
    let client = Client::new(&server.url()).unwrap();
    let created = client.create_table(&CreateTable::default()).await.unwrap();
    let attach = Attach::Resume { table: created.table, token: "0".repeat(64) };
    let err = client.session(attach, SessionOptions::default()).await.unwrap_err();
    assert_eq!(err.refusal(), Some(ErrorCode::InvalidToken), "{err}");
    assert!(err.is_permanent());
    // Watching works, and a spectator's commands are refused with a reason.
    let mut watcher =
        client.session(Attach::Watch { table: created.table }, SessionOptions::default()).await.unwrap();
    assert_eq!(watcher.seat(), None);
    let view = next_view(&mut watcher).await;
    assert_eq!(view.you, None);
    let req = watcher.send(Action::Bid(3).into()).unwrap();
    loop {
        match within("the refusal", watcher.next_event()).await.expect("events") {
            Event::Refused { req: Some(r), code, message } if r == req => {
                assert!(matches!(code, ErrorCode::NotSeated | ErrorCode::NotStarted), "{code}: {message}");
                break;
            }
            _ => {}
        }
    }
    watcher.close().await;
    server.stop().await;
}

/// A native client signs in as a guest with a device secret kept in a
/// file, creates a table as its account, sits as the account, and comes
/// back to the seat on a new connection with no seat token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_in_library_client_plays_as_its_account() {
    use spades_client::account::DeviceSecret;
    let server = spawn_server(test_config()).await;
    let dir = std::env::temp_dir().join(format!("spades-client-device-{}", uuid::Uuid::new_v4().simple()));
    let device = DeviceSecret::load_or_create(&dir.join("device")).unwrap();
    let anonymous = Client::new(&server.url()).unwrap();
    let (signed, session) = anonymous.sign_in_guest(&device, Some("Ann")).await.unwrap();
    assert!(signed.created);
    assert_eq!(signed.account.name, "Ann");
    // The same file signs the same account in again.
    let again = DeviceSecret::load_or_create(&dir.join("device")).unwrap();
    let (second, _) = anonymous.sign_in_guest(&again, None).await.unwrap();
    assert_eq!((second.created, second.account.id), (false, signed.account.id));
    let client = anonymous.clone().with_session(session);
    let created = client.create_table(&CreateTable { name: None, options: five_hands() }).await.unwrap();
    let mut conn = client.connect().await.unwrap();
    let joined = conn.join_as_account(created.table, None).await.unwrap();
    // Owner by account: bots and the start need no owner token.
    conn.request(spades_client::ClientMessage::AddBots { owner_token: None }).await.unwrap();
    drop(conn);
    let mut back = client.connect().await.unwrap();
    assert_eq!(back.resume_as_account(created.table).await.unwrap(), joined.seat);
    let record = client.match_record(created.table).await.unwrap();
    let seat = record.seats.iter().find(|s| s.seat == joined.seat).unwrap();
    assert_eq!((seat.name.as_str(), seat.account), ("Ann", Some(signed.account.id)));
    // A connection without the session cannot do either.
    let mut stranger = anonymous.connect().await.unwrap();
    let e = stranger.resume_as_account(created.table).await.unwrap_err();
    assert_eq!(e.refusal(), Some(ErrorCode::InvalidToken));
    let _ = std::fs::remove_dir_all(dir);
    server.stop().await;
}
