//! Playing with friends: a person may take a bot's seat in the lobby, the
//! owner takes bots out and moves seats, and during the match hands the
//! seat of a player who left to a person it invites.

use spades_engine::{MatchEnd, Rules, Seat};
use spades_protocol::{
    ClientMessage, ErrorCode, SeatKind, SeatStatus, ServerMessage, TableOptions, TablePhase,
};

use crate::helpers::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_friend_takes_a_bots_seat_in_the_lobby_unless_the_table_says_no() {
    let server = spawn_server(test_config()).await;
    let created = server.create_table(TableOptions::default()).await;
    let (table, owner) = (created.table, created.owner_token);
    let mut ann = server.client().await;
    ann.join(table, "Ann", Some(Seat::North)).await;
    assert!(matches!(
        ann.request(ClientMessage::AddBots { owner_token: Some(owner.clone()) }).await,
        ServerMessage::Ack { .. }
    ));
    // Every seat is taken, but by bots: the friend sits in the first.
    let mut bo = server.client().await;
    let (seat, _) = bo.join(table, "Bo", None).await;
    assert_eq!(seat, Seat::East);
    // Or in the bot's seat they name.
    let mut cy = server.client().await;
    let (seat, _) = cy.join(table, "Cy", Some(Seat::West)).await;
    assert_eq!(seat, Seat::West);
    let v = ann.view_until(|v| v.seats[3].name.as_deref() == Some("Cy")).await;
    assert_eq!(v.seats[1].kind, Some(SeatKind::Human));
    assert_eq!(v.seats[2].kind, Some(SeatKind::Bot));
    // A person's seat is not free for the taking.
    let mut dee = server.client().await;
    assert_eq!(
        code_of(&dee.request(join_message(table, "Dee", Some(Seat::North), None)).await),
        Some(ErrorCode::SeatTaken)
    );

    // A table whose owner keeps bots' seats closed.
    let closed = server.create_table(TableOptions { bot_seats_open: false, ..TableOptions::default() }).await;
    let mut eve = server.client().await;
    eve.join(closed.table, "Eve", Some(Seat::North)).await;
    eve.request(ClientMessage::AddBots { owner_token: Some(closed.owner_token.clone()) }).await;
    let mut fay = server.client().await;
    assert_eq!(
        code_of(&fay.request(join_message(closed.table, "Fay", None, None)).await),
        Some(ErrorCode::TableFull)
    );
    let mut gus = server.client().await;
    assert_eq!(
        code_of(&gus.request(join_message(closed.table, "Gus", Some(Seat::East), None)).await),
        Some(ErrorCode::SeatTaken)
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_takes_bots_out_and_moves_seats_before_the_start() {
    let server = spawn_server(test_config()).await;
    let created = server.create_table(TableOptions::default()).await;
    let (table, owner) = (created.table, created.owner_token);
    let mut ann = server.client().await;
    let (_, ann_token) = ann.join(table, "Ann", Some(Seat::North)).await;
    ann.request(ClientMessage::AddBots { owner_token: Some(owner.clone()) }).await;
    // Not the owner; not a bot; the right way.
    let mut bo = server.client().await;
    bo.request(ClientMessage::Watch { protocol: Some(spades_protocol::PROTOCOL_VERSION), table }).await;
    let r = bo.request(ClientMessage::RemoveBot { owner_token: Some("nope".into()), seat: Seat::East }).await;
    assert_eq!(code_of(&r), Some(ErrorCode::InvalidToken));
    let r =
        ann.request(ClientMessage::RemoveBot { owner_token: Some(owner.clone()), seat: Seat::North }).await;
    assert_eq!(code_of(&r), Some(ErrorCode::SeatNotBot));
    let r =
        ann.request(ClientMessage::RemoveBot { owner_token: Some(owner.clone()), seat: Seat::East }).await;
    assert!(matches!(r, ServerMessage::Ack { .. }), "{r:?}");
    let v = ann.view_until(|v| v.seats[1].status == SeatStatus::Empty).await;
    assert_eq!(v.seats[2].kind, Some(SeatKind::Bot));
    // Ann moves to South (the bot goes North); her connection is told.
    let r = ann
        .request(ClientMessage::MoveSeat {
            owner_token: Some(owner.clone()),
            from: Seat::North,
            to: Seat::South,
        })
        .await;
    assert!(matches!(r, ServerMessage::Ack { .. }), "{r:?}");
    let v = ann.view_until(|v| v.you == Some(Seat::South)).await;
    assert_eq!(v.seats[2].name.as_deref(), Some("Ann"));
    assert_eq!(v.seats[0].kind, Some(SeatKind::Bot));
    assert_eq!(v.seats[0].name.as_deref(), Some("North bot"), "a bot is named for the seat it plays");
    let r = ann
        .request(ClientMessage::MoveSeat {
            owner_token: Some(owner.clone()),
            from: Seat::West,
            to: Seat::West,
        })
        .await;
    assert_eq!(code_of(&r), Some(ErrorCode::BadMessage));
    // Her token still works, at her new seat.
    drop(ann);
    let mut again = server.client().await;
    let r = again
        .request(ClientMessage::Resume {
            protocol: Some(spades_protocol::PROTOCOL_VERSION),
            table,
            token: Some(ann_token),
        })
        .await;
    assert!(matches!(r, ServerMessage::Resumed { seat: Seat::South, .. }), "{r:?}");
    // A friend takes the empty seat; once started, nothing moves.
    let mut cy = server.client().await;
    assert_eq!(cy.join(table, "Cy", None).await.0, Seat::East);
    again.request(ClientMessage::Start { owner_token: Some(owner.clone()) }).await;
    again.view_until(|v| v.phase == TablePhase::Bidding).await;
    let r =
        again.request(ClientMessage::RemoveBot { owner_token: Some(owner.clone()), seat: Seat::North }).await;
    assert_eq!(code_of(&r), Some(ErrorCode::AlreadyStarted));
    let r = again
        .request(ClientMessage::MoveSeat { owner_token: Some(owner), from: Seat::North, to: Seat::East })
        .await;
    assert_eq!(code_of(&r), Some(ErrorCode::AlreadyStarted));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invited_friend_plays_on_the_seat_of_a_player_who_left() {
    let server = spawn_server(test_config()).await;
    let rules = Rules { match_end: MatchEnd::Hands(5), ..Rules::default() };
    let created = server.create_table(TableOptions { rules, ..TableOptions::default() }).await;
    let (table, owner) = (created.table, created.owner_token);
    let mut ann = server.client().await;
    ann.join(table, "Ann", Some(Seat::North)).await;
    let mut bo = server.client().await;
    bo.join(table, "Bo", Some(Seat::South)).await;
    ann.request(ClientMessage::AddBots { owner_token: Some(owner.clone()) }).await;
    ann.request(ClientMessage::Start { owner_token: Some(owner.clone()) }).await;
    // Before anybody left: nothing to hand over.
    let r = ann.request(ClientMessage::Invite { owner_token: Some(owner.clone()), seat: Seat::South }).await;
    assert_eq!(code_of(&r), Some(ErrorCode::SeatTaken));
    bo.view_until(|v| v.phase == TablePhase::Bidding).await;
    assert!(matches!(bo.request(ClientMessage::Leave).await, ServerMessage::Ack { .. }));
    drop(bo);
    ann.view_until(|v| v.seats[2].status == SeatStatus::Left).await;
    // Only the owner invites.
    let r = ann.request(ClientMessage::Invite { owner_token: Some("nope".into()), seat: Seat::South }).await;
    assert_eq!(code_of(&r), Some(ErrorCode::InvalidToken));
    let ServerMessage::Invited { seat, code, .. } =
        ann.request(ClientMessage::Invite { owner_token: Some(owner.clone()), seat: Seat::South }).await
    else {
        panic!("no invitation");
    };
    assert_eq!((seat, code.len()), (Seat::South, 64));
    // A wrong code, or the code for another seat, seats nobody.
    let mut eve = server.client().await;
    let r = eve.request(join_message(table, "Eve", Some(Seat::South), Some("0".repeat(64)))).await;
    assert_eq!(code_of(&r), Some(ErrorCode::InvalidToken));
    let r = eve.request(join_message(table, "Eve", Some(Seat::East), Some(code.clone()))).await;
    assert_eq!(code_of(&r), Some(ErrorCode::InvalidToken));
    // Without a code the match is closed to joiners, as before.
    let r = eve.request(join_message(table, "Eve", None, None)).await;
    assert_eq!(code_of(&r), Some(ErrorCode::AlreadyStarted));
    // The friend takes the seat with its cards and plays on.
    let mut dee = server.client().await;
    let r = dee.request(join_message(table, "Dee", None, Some(code.clone()))).await;
    let ServerMessage::Joined { seat: Seat::South, token, .. } = r else { panic!("{r:?}") };
    assert_eq!(token.len(), 64);
    let v = dee.view_until(|v| v.game.is_some()).await;
    assert_eq!(v.you, Some(Seat::South));
    assert!(
        v.game.as_ref().unwrap().hand.is_some_and(|h| !h.is_empty()),
        "the seat's cards are the friend's"
    );
    let seen = ann.view_until(|v| v.seats[2].name.as_deref() == Some("Dee")).await;
    assert_eq!(seen.seats[2].status, SeatStatus::Present);
    // The code is spent.
    let mut fay = server.client().await;
    assert_eq!(
        code_of(&fay.request(join_message(table, "Fay", None, Some(code))).await),
        Some(ErrorCode::InvalidToken)
    );
    // Both play the match out; the record says who played which hands.
    let (a, d) = tokio::join!(
        ann.play_until(|v| v.phase == TablePhase::Finished),
        dee.play_until(|v| v.phase == TablePhase::Finished)
    );
    assert_eq!((a.phase, d.phase), (TablePhase::Finished, TablePhase::Finished));
    let rec = server.record(table).await;
    let south = rec.seats.iter().find(|s| s.seat == Seat::South).unwrap();
    assert_eq!(south.name, "Dee");
    let who: Vec<(&str, SeatKind, u16)> =
        south.players.iter().map(|p| (p.name.as_str(), p.kind, p.from_hand)).collect();
    assert_eq!(who, vec![("Bo", SeatKind::Human, 1), ("Bot", SeatKind::Bot, 1), ("Dee", SeatKind::Human, 1)]);
    assert!(rec.seats.iter().filter(|s| s.seat != Seat::South).all(|s| s.players.is_empty()));
    server.stop().await;
}
