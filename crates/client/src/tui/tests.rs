//! The state machine, without terminal or network.

use std::time::Duration;

use spades_engine::{Action, Match, Rules, Seat};
use spades_protocol::{
    Clock, ClockKind, CreatedTable, ErrorCode, SeatInfo, SeatKind, SeatStatus, TableOptions, TablePhase,
    TableSummary, TableView,
};
use uuid::Uuid;

use super::*;

const TABLE: Uuid = Uuid::from_u128(7);

fn seats(status: SeatStatus) -> [SeatInfo; 4] {
    Seat::ALL.map(|seat| SeatInfo {
        seat,
        name: Some(seat.name().to_owned()),
        kind: Some(SeatKind::Human),
        status,
        away_until: None,
        timeouts: 0,
    })
}

fn view_of(m: Option<&Match>, you: Seat, server_time: u64) -> TableView {
    let game = m.map(|m| m.view(Some(you)));
    let phase = match game.as_ref().map(|g| g.phase) {
        None => TablePhase::Lobby,
        Some(spades_engine::Phase::Bidding) => TablePhase::Bidding,
        Some(spades_engine::Phase::Playing) => TablePhase::Playing,
        Some(spades_engine::Phase::MatchOver) => TablePhase::Finished,
    };
    let clock = game.as_ref().and_then(|g| g.turn).map(|seat| Clock {
        seat,
        kind: if phase == TablePhase::Bidding { ClockKind::Bid } else { ClockKind::Card },
        deadline: server_time + 30_000,
        duration_ms: 30_000,
    });
    TableView {
        grace_ms: Some(60_000),
        table: TABLE,
        name: "Practice".into(),
        phase,
        options: TableOptions::default(),
        you: Some(you),
        seats: seats(SeatStatus::Present),
        game,
        clock,
        last_action: None,
        server_time,
        autopilot_after: 3,
        fair: None,
        rematch: None,
        played_for_you: Vec::new(),
    }
}

fn summary(name: &str, id: u128) -> TableSummary {
    TableSummary {
        table: Uuid::from_u128(id),
        name: name.into(),
        phase: TablePhase::Lobby,
        options: TableOptions::default(),
        seats: seats(SeatStatus::Empty),
        open_seats: 4,
        spectators: 0,
        hand_number: 0,
        scores: [0, 0],
        created_at: 0,
    }
}

fn text(app: &App) -> String {
    plain(&app.lines()).join("\n")
}

fn key(app: &mut App, k: Key) -> Vec<Effect> {
    let now = app.now_ms;
    app.update(now, Input::Key(k))
}

fn typed(app: &mut App, s: &str) -> Vec<Effect> {
    let mut fx = Vec::new();
    for c in s.chars() {
        fx.extend(key(app, Key::Char(c)));
    }
    fx.extend(key(app, Key::Enter));
    fx
}

/// An app seated at `TABLE` as `seat` (owner when `owner`).
fn seated(seat: Seat, owner: bool) -> App {
    let mut app = App::new("http://127.0.0.1:8080", "Ann");
    app.update(
        0,
        Input::Attached(Ok(Attached {
            table: TABLE,
            seat: Some(seat),
            owner_token: owner.then(|| "owner-secret".to_owned()),
        })),
    );
    app
}

fn show(app: &mut App, now: u64, view: TableView) {
    app.update(now, Input::Session(Event::View { seq: 1, view: Box::new(view) }));
}

#[test]
fn the_lobby_lists_refreshes_creates_and_joins() {
    let mut app = App::new("http://127.0.0.1:8080", "Ann");
    assert_eq!(app.update(0, Input::Tick), vec![Effect::ListTables]);
    assert!(app.update(100, Input::Tick).is_empty(), "one list request at a time");
    app.update(200, Input::Tables(Ok(vec![summary("Friday night", 1), summary("Practice", 2)])));
    let screen = text(&app);
    assert!(screen.contains("> Friday night"), "{screen}");
    assert!(screen.contains("Practice"));
    assert!(app.update(3000, Input::Tick).is_empty());
    assert_eq!(app.update(5200, Input::Tick), vec![Effect::ListTables], "refreshes every 5 s");

    key(&mut app, Key::Down);
    assert!(text(&app).contains("> Practice"));
    assert_eq!(
        key(&mut app, Key::Enter),
        vec![Effect::Join { table: Uuid::from_u128(2), seat: None, owner_token: None }]
    );
    assert_eq!(key(&mut app, Key::Char('w')), vec![Effect::Watch { table: Uuid::from_u128(2) }]);

    key(&mut app, Key::Char('c'));
    assert!(text(&app).contains("New table name"));
    assert!(typed(&mut app, "Late game").is_empty(), "the options come next");
    assert!(text(&app).contains("New table: Late game"), "{}", text(&app));
    assert_eq!(
        key(&mut app, Key::Enter),
        vec![Effect::CreateTable { name: "Late game".into(), options: TableOptions::default() }]
    );
    let created = CreatedTable { table: TABLE, owner_token: "owner-secret".into() };
    assert_eq!(
        app.update(6000, Input::Created(Ok(created))),
        vec![Effect::Join { table: TABLE, seat: None, owner_token: Some("owner-secret".into()) }]
    );
    app.update(6100, Input::Attached(Err("the table is full (table_full)".into())));
    assert!(text(&app).contains("could not sit down: the table is full"));
    assert_eq!(key(&mut app, Key::Char('q')), vec![Effect::Quit]);
}

#[test]
fn the_owner_adds_bots_and_starts() {
    let mut app = seated(Seat::North, true);
    show(&mut app, 10, view_of(None, Seat::North, 1_000));
    assert!(text(&app).contains("You own the table"));
    assert_eq!(
        key(&mut app, Key::Char('b')),
        vec![Effect::Send(Command::AddBots { owner_token: "owner-secret".into() })]
    );
    assert_eq!(
        typed(&mut app, "/start"),
        vec![Effect::Send(Command::Start { owner_token: "owner-secret".into() })]
    );

    let mut guest = seated(Seat::East, false);
    show(&mut guest, 10, view_of(None, Seat::East, 1_000));
    assert!(key(&mut guest, Key::Char('s')).is_empty());
    assert!(text(&guest).contains("only the table's owner can start"), "{}", text(&guest));
}

#[test]
fn bids_are_typed_and_bad_ones_explained() {
    let m = Match::new(Rules::default(), 11);
    let me = m.turn().unwrap();
    let mut app = seated(me, false);
    show(&mut app, 1_000, view_of(Some(&m), me, 50_000));
    let screen = text(&app);
    assert!(screen.contains("Your bid (0–13, 0 = nil)"), "{screen}");
    // The clock: 30 s at the view, 7 s later 23 s are left.
    app.update(8_000, Input::Tick);
    assert!(text(&app).contains("0:23 left"), "{}", text(&app));

    assert_eq!(typed(&mut app, "4"), vec![Effect::Send(Command::Bid(4))]);
    assert!(typed(&mut app, "5").is_empty(), "one move at a time");
    assert!(text(&app).contains("waiting for the server's answer"));
    app.update(
        8_500,
        Input::Session(Event::Refused {
            req: Some(1),
            code: ErrorCode::NotYourTurn,
            message: "not your turn (it is East's turn)".into(),
        }),
    );
    assert!(text(&app).contains("! not your turn (it is East's turn)"));
    assert_eq!(typed(&mut app, "nil"), vec![Effect::Send(Command::Bid(0))]);
    show(&mut app, 8_600, view_of(Some(&m), me, 50_000));
    assert!(typed(&mut app, "four").is_empty());
    assert!(text(&app).contains("\"four\" is not a bid"), "{}", text(&app));
    // The server's refusal is shown as it is.
    app.update(
        9_000,
        Input::Session(Event::Refused {
            req: Some(3),
            code: ErrorCode::BidOutOfRange,
            message: "bid must be from 0 to 13 (got 14)".into(),
        }),
    );
    assert!(text(&app).contains("! bid must be from 0 to 13 (got 14)"));
    app.update(9_100, Input::Session(Event::Ack { req: 4 }));
    assert!(!text(&app).contains("got 14"), "an accepted move clears the refusal");
}

#[test]
fn cards_are_chosen_with_arrows_or_typed() {
    let mut m = Match::new(Rules::default(), 12);
    for _ in 0..4 {
        let s = m.turn().unwrap();
        m.apply(s, Action::Bid(3)).unwrap();
    }
    let me = m.turn().unwrap();
    let mut app = seated(me, false);
    show(&mut app, 0, view_of(Some(&m), me, 1));
    let hand: Vec<_> = m.view(Some(me)).hand.unwrap().into_iter().collect();
    let Legal::Play { cards } = m.legal_moves() else { panic!("not playing") };
    let first_legal = hand.iter().position(|c| cards.contains(*c)).unwrap();
    assert_eq!(app.table().unwrap().cursor, first_legal);
    assert!(text(&app).contains(&format!("[{}]", render::card_text(hand[first_legal]))));
    assert_eq!(key(&mut app, Key::Enter), vec![Effect::Send(Command::Play(hand[first_legal]))]);
    show(&mut app, 1, view_of(Some(&m), me, 1));
    key(&mut app, Key::Right);
    let next = (first_legal + 1).min(hand.len() - 1);
    assert_eq!(key(&mut app, Key::Enter), vec![Effect::Send(Command::Play(hand[next]))]);
    show(&mut app, 2, view_of(Some(&m), me, 1));
    assert_eq!(
        typed(&mut app, &hand[0].to_string().to_lowercase()),
        vec![Effect::Send(Command::Play(hand[0]))]
    );
    show(&mut app, 3, view_of(Some(&m), me, 1));
    assert!(typed(&mut app, "ZZ").is_empty());
    assert!(text(&app).contains("\"ZZ\" is not a card"));
    app.update(
        5,
        Input::Session(Event::Refused {
            req: Some(9),
            code: ErrorCode::MustFollowSuit,
            message: "you must follow the led suit (hearts)".into(),
        }),
    );
    assert!(text(&app).contains("you must follow the led suit (hearts)"));
}

#[test]
fn a_dropped_connection_is_shown_and_recovered() {
    let m = Match::new(Rules::default(), 13);
    let mut app = seated(Seat::South, false);
    show(&mut app, 0, view_of(Some(&m), Seat::South, 1));
    assert!(text(&app).contains("connected"));
    app.update(
        100,
        Input::Session(Event::Disconnected {
            reason: "connection closed: the connection ended".into(),
            attempt: 2,
            retry_in: Duration::from_millis(2_000),
        }),
    );
    let screen = text(&app);
    assert!(screen.contains("reconnecting in 0:02 (attempt 2)"), "{screen}");
    assert_eq!(
        key(&mut app, Key::Enter).len() + typed(&mut app, "3").len(),
        1,
        "commands are still handed to the session, which reports them unsent"
    );
    app.update(200, Input::Session(Event::Unsent { req: 5, reason: "reconnecting".into() }));
    assert!(text(&app).contains("not sent"));
    app.update(2_300, Input::Session(Event::Reconnected { attempts: 2 }));
    show(&mut app, 2_310, view_of(Some(&m), Seat::South, 3_000));
    let screen = text(&app);
    assert!(screen.contains("your seat is back"), "{screen}");
    assert!(!screen.contains("reconnecting"));
}

#[test]
fn leaving_a_match_needs_two_escapes() {
    let m = Match::new(Rules::default(), 14);
    let mut app = seated(Seat::West, false);
    show(&mut app, 0, view_of(Some(&m), Seat::West, 1));
    assert!(key(&mut app, Key::Esc).is_empty());
    assert!(text(&app).contains("press Esc again"));
    assert_eq!(key(&mut app, Key::Esc), vec![Effect::CloseSession, Effect::ListTables]);
    assert!(matches!(app.screen, Screen::Lobby(_)));
}

#[test]
fn the_end_of_the_match_is_announced() {
    let rules = Rules { match_end: spades_engine::MatchEnd::Hands(5), ..Rules::default() };
    let mut m = Match::new(rules, 15);
    while let Some(s) = m.turn() {
        let v = m.view(Some(s));
        let a = match v.legal {
            Legal::Bid { .. } => Action::Bid(3),
            Legal::Play { cards } => Action::Play(cards.first().unwrap()),
            Legal::None => unreachable!(),
        };
        m.apply(s, a).unwrap();
    }
    let mut app = seated(Seat::North, false);
    show(&mut app, 0, view_of(Some(&m), Seat::North, 1));
    let screen = text(&app);
    assert!(screen.contains("Match over"), "{screen}");
    assert!(screen.contains("after 5 hands"));
    assert_eq!(key(&mut app, Key::Enter), vec![Effect::CloseSession, Effect::ListTables]);
}

#[test]
fn a_timeout_and_the_autopilot_are_told() {
    use spades_protocol::{ActionSource, LastAction};
    let m = Match::new(Rules::default(), 9);
    let you = m.turn().unwrap();
    let before = view_of(Some(&m), you, 1_000);
    let mut after = before.clone();
    after.last_action = Some(LastAction { seat: you, action: Action::Bid(2), source: ActionSource::Timeout });
    after.seats[usize::from(you.index())].timeouts = 1;
    assert_eq!(
        timeout_news(Some(&before), &after).as_deref(),
        Some("time ran out: the table bid 2 for you (1 of 3 before autopilot)")
    );
    // Said once: the same last action in the next view is not news.
    assert_eq!(timeout_news(Some(&after), &after), None);
    // Another seat's timeout is not this player's news.
    let mut other = before.clone();
    other.last_action =
        Some(LastAction { seat: you.next(), action: Action::Bid(2), source: ActionSource::Timeout });
    assert_eq!(timeout_news(Some(&before), &other), None);
    // The autopilot coming on says why.
    let mut auto = after.clone();
    auto.seats[usize::from(you.index())].status = SeatStatus::Autopilot;
    auto.seats[usize::from(you.index())].timeouts = 3;
    assert_eq!(
        timeout_news(Some(&after), &auto).as_deref(),
        Some("autopilot is on after 3 timeouts in a row: /takeover to play again")
    );
}

#[test]
fn back_from_a_lost_connection_the_moves_the_table_made_are_told() {
    use spades_protocol::{ActionSource, PlayedForYou};
    let m = Match::new(Rules::default(), 9);
    let you = m.turn().unwrap();
    let mut app = seated(you, false);
    let before = view_of(Some(&m), you, 1_000);
    app.update(1_000, Input::Session(Event::View { seq: 10, view: Box::new(before.clone()) }));
    app.update(
        2_000,
        Input::Session(Event::Disconnected {
            reason: "gone".into(),
            attempt: 1,
            retry_in: Duration::from_secs(1),
        }),
    );
    app.update(9_000, Input::Session(Event::Reconnected { attempts: 2 }));
    let mut back = before.clone();
    let made = |seq, action| PlayedForYou { hand_number: 1, action, source: ActionSource::Timeout, seq };
    // The first move was seen before the connection went; the others not.
    back.played_for_you = vec![
        made(10, Action::Bid(4)),
        made(12, Action::Bid(2)),
        made(15, Action::Play("8D".parse().unwrap())),
    ];
    app.update(9_100, Input::Session(Event::View { seq: 16, view: Box::new(back.clone()) }));
    assert!(
        text(&app).contains("while you were away the table bid 2 and played 8D for you"),
        "{}",
        text(&app)
    );
    // Said once: the views that follow are not news.
    assert_eq!(away_news(&back, 16), None);
}

#[test]
fn options_are_chosen_when_creating_a_table() {
    let mut app = App::new("http://127.0.0.1:8080", "Ann");
    key(&mut app, Key::Char('c'));
    assert!(typed(&mut app, "Options").is_empty());
    let screen = text(&app);
    for want in ["match end", "first to 500", "nil", "±100", "bag penalty", "tempo", "normal", "spectators"]
    {
        assert!(screen.contains(want), "{want}: {screen}");
    }
    for c in ['m', 'n', 'n', 'p', 'x', 't', 'c', 'l', 'f'] {
        assert!(key(&mut app, Key::Char(c)).is_empty());
    }
    let screen = text(&app);
    assert!(
        screen.contains("first to 300") && screen.contains("off (bids 1-13)") && screen.contains("fast"),
        "{screen}"
    );
    let fx = key(&mut app, Key::Enter);
    let [Effect::CreateTable { name, options }] = fx.as_slice() else { panic!("{fx:?}") };
    assert_eq!(name, "Options");
    let r = &options.rules;
    assert_eq!(r.match_end, spades_engine::MatchEnd::Target(300));
    assert_eq!(r.nil, spades_engine::NilRule::Off);
    assert_eq!(r.bag_penalty, spades_engine::BagPenalty::FiveForFifty);
    assert_eq!(r.spades_lead, spades_engine::SpadesLead::AnyTime);
    assert_eq!(r.failed_nil, spades_engine::FailedNil::CountForPartner);
    assert!(r.mercy && options.spectator_chat);
    assert_eq!(options.tempo, spades_protocol::Tempo::Fast);
    // Esc gives up on the new table.
    key(&mut app, Key::Char('c'));
    typed(&mut app, "Never");
    assert!(key(&mut app, Key::Esc).is_empty());
    assert!(!text(&app).contains("New table"));
}

#[test]
fn the_dealer_is_marked() {
    let m = Match::new(Rules::default(), 21);
    let me = m.turn().unwrap();
    let dealer = m.hand().dealer();
    let mut app = seated(me, false);
    show(&mut app, 0, view_of(Some(&m), me, 1));
    let screen = text(&app);
    let row = |s: Seat| {
        screen
            .lines()
            .find(|l| l.chars().skip(2).collect::<String>().starts_with(s.name()))
            .unwrap()
            .to_owned()
    };
    assert!(row(dealer).contains(&format!("{:<6} D ", dealer.name())), "{}", row(dealer));
    for s in Seat::ALL.into_iter().filter(|&s| s != dealer) {
        assert!(!row(s).contains(" D "), "{}", row(s));
    }
}

#[test]
fn the_hand_end_breakdown_shows_bags_nils_and_penalties() {
    use spades_engine::{BySeat, ByTeam, HandResult};
    // North–South bid 3 + 3 and take 9: three bags on top of 8, a penalty.
    // East bids nil and takes nothing; West bids 4 and takes 4.
    let result = HandResult::score(
        &Rules::default(),
        4,
        Seat::West,
        BySeat([3, 0, 3, 4]),
        BySeat([5, 0, 4, 4]),
        ByTeam([(100, 8), (50, 2)]),
    );
    let m = Match::new(Rules::default(), 22);
    let me = m.turn().unwrap();
    let mut view = view_of(Some(&m), me, 1);
    view.game.as_mut().unwrap().last_hand = Some(result);
    let mut app = seated(me, false);
    show(&mut app, 0, view);
    let screen = text(&app);
    assert!(screen.contains("Hand 4 scored"), "{screen}");
    let line = |team: &str| screen.lines().find(|l| l.trim_start().starts_with(team)).unwrap().to_owned();
    assert_eq!(
        line("North-South").trim(),
        "North-South bid 6 took 9 made +60, bags 3 +3, bag penalty -100 = -37 → 63 (1 bags)"
    );
    assert_eq!(
        line("East-West").trim(),
        "East-West   bid 4 took 4 made +40, bags 0 0, nil +100 = +140 → 190 (2 bags)"
    );
}

#[test]
fn suits_are_symbols_and_red_suits_are_red() {
    let m = Match::new(Rules::default(), 23);
    let me = m.turn().unwrap();
    let mut app = seated(me, false);
    show(&mut app, 0, view_of(Some(&m), me, 1));
    let hand: Vec<Card> = m.view(Some(me)).hand.unwrap().into_iter().collect();
    let lines = app.lines();
    let spans: Vec<_> = lines.iter().flat_map(|l| l.spans.iter()).collect();
    for card in hand {
        let shown = render::card_text(card);
        assert!(shown.ends_with(['♠', '♥', '♦', '♣']) && !shown.contains('T'), "{shown}");
        let span =
            spans.iter().find(|s| s.content.trim() == shown).unwrap_or_else(|| panic!("{shown} not shown"));
        let red = span.style.fg == Some(ratatui::style::Color::Red);
        assert_eq!(
            red,
            matches!(card.suit(), spades_engine::Suit::Hearts | spades_engine::Suit::Diamonds),
            "{shown}"
        );
    }
    assert_eq!(render::card_text("TD".parse().unwrap()), "10♦");
}

#[test]
fn an_old_error_is_cleared_by_the_next_action() {
    let m = Match::new(Rules::default(), 24);
    let me = m.turn().unwrap();
    let mut app = seated(me, false);
    show(&mut app, 0, view_of(Some(&m), me, 1));
    assert!(typed(&mut app, "four").is_empty());
    assert!(text(&app).contains("\"four\" is not a bid"));
    // The next move goes out and the old error goes away at once, before
    // the server has answered.
    assert_eq!(typed(&mut app, "4"), vec![Effect::Send(Command::Bid(4))]);
    assert!(!text(&app).contains("is not a bid"), "{}", text(&app));
    // A refusal from the server is cleared by the next move too.
    app.update(
        10,
        Input::Session(Event::Refused {
            req: Some(1),
            code: ErrorCode::NotYourTurn,
            message: "not your turn".into(),
        }),
    );
    show(&mut app, 11, view_of(Some(&m), me, 1));
    assert!(text(&app).contains("! not your turn"));
    assert_eq!(typed(&mut app, "5"), vec![Effect::Send(Command::Bid(5))]);
    assert!(!text(&app).contains("not your turn"));
}

#[test]
fn the_lobby_fits_80_columns() {
    let mut app = App::new("https://a-rather-long-host-name.cards.example.org:8443", "Bartholomew the Third");
    let mut long = summary("A table with a very long name indeed, forty", 1);
    long.seats = Seat::ALL.map(|seat| SeatInfo {
        seat,
        name: Some(format!("{} Maximilian-Alexander", seat.name())),
        kind: Some(SeatKind::Human),
        status: SeatStatus::Present,
        away_until: None,
        timeouts: 0,
    });
    long.scores = [-1234, 5678];
    long.hand_number = 99;
    app.update(0, Input::Tables(Ok(vec![long, summary("Short", 2)])));
    for help in [false, true] {
        app.help = help;
        for line in plain(&app.lines()) {
            assert!(line.chars().count() <= 80, "{} columns: {line}", line.chars().count());
        }
    }
    let screen = text(&app);
    assert!(screen.contains("North Maximilian"), "the players are still shown: {screen}");
    // The options step too.
    key(&mut app, Key::Char('c'));
    typed(&mut app, &"x".repeat(40));
    for line in plain(&app.lines()) {
        assert!(line.chars().count() <= 80, "{} columns: {line}", line.chars().count());
    }
}

#[test]
fn the_highlight_never_rests_on_a_card_that_cannot_be_played() {
    // The leader of the first trick, holding spades it may not lead yet.
    let (m, me) = (0..100)
        .find_map(|seed| {
            let mut m = Match::new(Rules::default(), seed);
            for _ in 0..4 {
                let s = m.turn().unwrap();
                m.apply(s, Action::Bid(3)).unwrap();
            }
            let me = m.turn().unwrap();
            let hand = m.view(Some(me)).hand.unwrap();
            let spades = hand.into_iter().filter(|c| c.is_spade()).count();
            (spades > 0 && spades < hand.len() as usize).then_some((m, me))
        })
        .unwrap();
    let hand: Vec<_> = m.view(Some(me)).hand.unwrap().into_iter().collect();
    let Legal::Play { cards: legal } = m.legal_moves() else { panic!("not playing") };
    let mut app = seated(me, false);
    show(&mut app, 0, view_of(Some(&m), me, 1));
    // The hand changed under the highlight (a card played, a trick won with
    // the lead to follow): it now rests on a spade ...
    let spade = hand.iter().position(|c| c.is_spade()).unwrap();
    if let Screen::Table(t) = &mut app.screen {
        t.cursor = spade;
    }
    // ... and the next view of the same turn moves it to a card that may be
    // played, so Enter is never a refused move.
    show(&mut app, 1, view_of(Some(&m), me, 2));
    let cursor = app.table().unwrap().cursor;
    assert!(legal.contains(hand[cursor]), "the highlight is on {}", hand[cursor]);
    assert_eq!(key(&mut app, Key::Enter), vec![Effect::Send(Command::Play(hand[cursor]))]);
}

#[test]
fn a_stale_move_is_explained_and_the_next_can_be_made() {
    let m = Match::new(Rules::default(), 5);
    let me = m.turn().unwrap();
    let mut app = seated(me, false);
    show(&mut app, 0, view_of(Some(&m), me, 1));
    assert!(!typed(&mut app, "3").is_empty());
    assert!(app.table().unwrap().awaiting);
    app.update(
        10,
        Input::Session(Event::Refused {
            req: Some(2),
            code: ErrorCode::Stale,
            message: "the table bid 2 for you when your time ran out".into(),
        }),
    );
    assert!(text(&app).contains("! the table bid 2 for you when your time ran out"), "{}", text(&app));
    assert!(!app.table().unwrap().awaiting, "the player may choose again");
}

#[test]
fn a_friend_sits_straight_down_with_join() {
    let mut app = App::new("http://127.0.0.1:8080", "Bo");
    let fx = app.sit_at(TABLE);
    assert_eq!(fx, vec![Effect::Join { table: TABLE, seat: None, owner_token: None }]);
    assert!(text(&app).contains("taking a seat"));
}
