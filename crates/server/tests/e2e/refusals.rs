use spades_engine::{Card, CardSet, Legal, Seat, Suit};
use spades_protocol::{ClientMessage, ErrorCode, ServerMessage, TableOptions, TablePhase, TableView};

use crate::helpers::*;

/// Garbage, oversized and out-of-place frames each get a typed error, and
/// the connection stays usable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_frames_get_typed_errors_and_the_connection_stays_usable() {
    let server = spawn_server(test_config()).await;
    let mut c = server.client().await;
    for (frame, code) in [
        ("not json", ErrorCode::BadMessage),
        ("[1,2,3]", ErrorCode::BadMessage),
        (r#"{"type":"fly"}"#, ErrorCode::BadMessage),
        (r#"{"type":"play","card":"ZZ"}"#, ErrorCode::BadMessage),
        (r#"{"type":"bid","bid":3}"#, ErrorCode::NotAttached),
    ] {
        c.send_raw(frame).await;
        assert_eq!(code_of(&c.recv().await), Some(code), "{frame}");
    }
    let big = format!(r#"{{"type":"ping","pad":"{}"}}"#, "x".repeat(5000));
    c.send_raw(&big).await;
    assert_eq!(code_of(&c.recv().await), Some(ErrorCode::FrameTooLarge));
    let unknown = uuid::Uuid::new_v4();
    assert_eq!(
        code_of(
            &c.request(ClientMessage::Watch {
                protocol: Some(spades_protocol::PROTOCOL_VERSION),
                table: unknown
            })
            .await
        ),
        Some(ErrorCode::TableNotFound)
    );
    assert!(matches!(c.request(ClientMessage::Ping).await, ServerMessage::Pong { .. }));
    server.stop().await;
}

/// Seat tokens act only for their own seat; spectators cannot act; wrong
/// tokens are refused; an illegal card gets its reason and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nobody_acts_out_of_place_and_illegal_cards_change_nothing() {
    let server = spawn_server(test_config()).await;
    let created = server.create_table(TableOptions::default()).await;
    let table = created.table;
    let mut seats = Vec::new();
    let mut tokens = Vec::new();
    for seat in Seat::ALL {
        let mut c = server.client().await;
        let (_, token) = c.join(table, seat.name(), Some(seat)).await;
        seats.push(c);
        tokens.push(token);
    }
    // Joining a taken seat, or a full table.
    let mut late = server.client().await;
    let r = late.request(join_message(table, "Late", Some(Seat::North), None)).await;
    assert_eq!(code_of(&r), Some(ErrorCode::SeatTaken));
    let r = late.request(join_message(table, "Late", None, None)).await;
    assert_eq!(code_of(&r), Some(ErrorCode::TableFull));
    let r = late.request(join_message(table, " ", None, None)).await;
    assert_eq!(code_of(&r), Some(ErrorCode::InvalidName));
    // Only the owner starts.
    let r = seats[1].request(ClientMessage::Start { owner_token: Some(tokens[1].clone()) }).await;
    assert_eq!(code_of(&r), Some(ErrorCode::InvalidToken));
    let r = seats[0].request(ClientMessage::Bid { bid: 3, seq: None }).await;
    assert_eq!(code_of(&r), Some(ErrorCode::NotStarted));
    seats[0].request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
    let r = seats[0].request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
    assert_eq!(code_of(&r), Some(ErrorCode::AlreadyStarted));

    // A wrong token is refused; a right one gives exactly its own seat.
    let mut other = server.client().await;
    let r = other
        .request(ClientMessage::Resume {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table,
            token: Some("0".repeat(64)),
        })
        .await;
    assert_eq!(code_of(&r), Some(ErrorCode::InvalidToken));
    let r = other
        .request(ClientMessage::Resume {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table,
            token: Some(tokens[2].clone()),
        })
        .await;
    assert!(matches!(r, ServerMessage::Resumed { seat: Seat::South, .. }));

    // A spectator cannot act.
    let mut spectator = server.client().await;
    spectator
        .request(ClientMessage::Watch { protocol: Some(spades_protocol::PROTOCOL_VERSION), table })
        .await;
    let r = spectator.request(ClientMessage::Bid { bid: 3, seq: None }).await;
    assert_eq!(code_of(&r), Some(ErrorCode::NotSeated));

    // Whoever is not on turn is refused, with the seat on turn named.
    let v = seats[0].view_until(|v| v.game.is_some()).await;
    let turn = v.game.as_ref().unwrap().turn.unwrap();
    let wrong = turn.next();
    let r = seats[usize::from(wrong.index())].request(ClientMessage::Bid { bid: 3, seq: None }).await;
    assert_eq!(code_of(&r), Some(ErrorCode::NotYourTurn));
    if let ServerMessage::Error { message, .. } = r {
        assert!(message.starts_with("not your turn"), "{message}");
    }

    // Bid round: everybody bids 3, then the leader tries a spade before
    // spades are broken, or a card it does not hold.
    for i in 0..4 {
        let s = turn.offset(i);
        let r = seats[usize::from(s.index())].request(ClientMessage::Bid { bid: 3, seq: None }).await;
        assert!(matches!(r, ServerMessage::Ack { .. }), "{r:?}");
    }
    let leader = &mut seats[usize::from(turn.index())];
    let v =
        leader.view_until(|v| v.phase == TablePhase::Playing && v.game.as_ref().unwrap().turn == v.you).await;
    let seq_before = leader.seq;
    let status_before = server.status(table).await;
    let hand = v.game.as_ref().unwrap().hand.unwrap();
    let Legal::Play { cards: legal } = v.game.as_ref().unwrap().legal else { panic!("no legal cards") };
    let illegal: Option<Card> = hand.minus(legal).first();
    let not_mine: Card = CardSet::FULL.minus(hand).first().unwrap();
    let r = leader.request(ClientMessage::Play { card: not_mine, seq: None }).await;
    assert_eq!(code_of(&r), Some(ErrorCode::CardNotInHand));
    if let Some(card) = illegal {
        assert_eq!(card.suit(), Suit::Spades);
        let r = leader.request(ClientMessage::Play { card, seq: None }).await;
        assert_eq!(code_of(&r), Some(ErrorCode::SpadesNotBroken));
        if let ServerMessage::Error { message, .. } = r {
            assert_eq!(message, "spades are not broken yet");
        }
    }
    // Nothing changed: no new view, same status.
    assert!(leader.try_recv(std::time::Duration::from_millis(200)).await.is_none());
    assert_eq!(leader.seq, seq_before);
    let status_after = server.status(table).await;
    assert_eq!(status_after.turn, status_before.turn);
    assert_eq!(status_after.tricks_won, status_before.tricks_won);

    // Lead a legal card; the next seat that holds the led suit must follow.
    let lead = legal.first().unwrap();
    leader.request(ClientMessage::Play { card: lead, seq: None }).await;
    let next = turn.next();
    let follower = &mut seats[usize::from(next.index())];
    let v = follower.view_until(|v| v.game.as_ref().unwrap().turn == v.you).await;
    let hand = v.game.as_ref().unwrap().hand.unwrap();
    if !hand.of_suit(lead.suit()).is_empty()
        && let Some(off) = hand.minus(CardSet::suit(lead.suit())).first()
    {
        let r = follower.request(ClientMessage::Play { card: off, seq: None }).await;
        assert_eq!(code_of(&r), Some(ErrorCode::MustFollowSuit));
        if let ServerMessage::Error { message, .. } = r {
            assert_eq!(message, format!("you must follow the led suit ({})", lead.suit()));
        }
    }
    server.stop().await;
}

/// A client of protocol 1 (no `protocol` in its attach) or of another
/// version is refused with a message naming the version needed, and takes
/// no seat; `sync` answers with an `ack` and a snapshot equal to the view
/// the change frames built.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_clients_are_told_the_version_and_sync_gives_a_snapshot() {
    let server = spawn_server(test_config()).await;
    let created = server.create_table(TableOptions::default()).await;
    let table = created.table;
    let mut old = server.client().await;
    for frame in [
        format!(r#"{{"req":1,"type":"join","table":"{table}","name":"Old"}}"#),
        format!(r#"{{"req":1,"type":"watch","protocol":1,"table":"{table}"}}"#),
        format!(r#"{{"req":1,"type":"resume","protocol":3,"table":"{table}","token":"x"}}"#),
    ] {
        old.send_raw(&frame).await;
        match old.reply_to(1).await {
            ServerMessage::Error { code: ErrorCode::UnsupportedProtocol, message, .. } => {
                assert!(message.contains("protocol 2"), "{message}");
            }
            other => panic!("{frame}: {other:?}"),
        }
    }
    // Any other number (or null) is a version this server does not speak;
    // 2.0 is 2; a string is a malformed field.
    for (protocol, code) in [
        ("-2", ErrorCode::UnsupportedProtocol),
        ("1099511627776", ErrorCode::UnsupportedProtocol),
        ("2.5", ErrorCode::UnsupportedProtocol),
        ("null", ErrorCode::UnsupportedProtocol),
        ("\"2\"", ErrorCode::BadMessage),
    ] {
        old.send_raw(&format!(r#"{{"req":1,"type":"watch","protocol":{protocol},"table":"{table}"}}"#)).await;
        match old.reply_to(1).await {
            ServerMessage::Error { code: got, .. } => assert_eq!(got, code, "protocol {protocol}"),
            other => panic!("protocol {protocol}: {other:?}"),
        }
    }
    assert_eq!(server.status(table).await.summary.open_seats, 4, "the old client took no seat");
    let mut float = server.client().await;
    float.send_raw(&format!(r#"{{"req":1,"type":"watch","protocol":2.0,"table":"{table}"}}"#)).await;
    assert!(matches!(float.reply_to(1).await, ServerMessage::Watching { .. }), "2.0 is 2");

    let mut ann = server.client().await;
    ann.join(table, "Ann", Some(Seat::North)).await;
    let mut bob = server.client().await;
    bob.join(table, "Bob", Some(Seat::East)).await;
    // Ann's view now comes from a change frame (Bob sat down).
    let built = ann.view_until(|v| v.seats[1].name.as_deref() == Some("Bob")).await;
    assert!(ann.raw.iter().any(|f| f.starts_with(r#"{"type":"change","#)), "no change frame came");
    let req = ann.send(ClientMessage::Sync).await;
    let reply = ann.reply_to(req).await;
    assert!(matches!(reply, ServerMessage::Ack { .. }), "{reply:?}");
    let snapshot = loop {
        let raw = ann.raw.len();
        let msg = ann.recv().await;
        if let ServerMessage::View { view, .. } = msg
            && ann.raw[raw].starts_with(r#"{"type":"view","#)
        {
            break *view;
        }
    };
    assert_eq!(TableView { server_time: 0, ..snapshot }, TableView { server_time: 0, ..built });
    server.stop().await;
}
