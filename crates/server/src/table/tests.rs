//! Table-task tests with tokio's clock paused: turn clocks, timeouts,
//! autopilot, grace periods, bots, leaving, and slow connections. No test
//! waits in real time.

use std::sync::Arc;
use std::time::Duration;

use spades_engine::{Action, Legal, MatchEnd, Rules, Seat};
use spades_protocol::{
    ActionSource, ErrorCode, SeatStatus, ServerMessage, TableOptions, TablePhase, TableStatus, TableView,
    Tempo,
};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, sleep};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use uuid::Uuid;

use super::*;
use crate::record::RestoredSeat;
use crate::storage::{Journal, TableRecord};
use crate::token::TokenHash;
use crate::token::new_token;
use spades_engine::{BySeat, Match};
use spades_protocol::SeatKind;

struct Harness {
    handle: TableHandle,
    owner: String,
    journal: Journal,
    _shutdown: CancellationToken,
}

/// Bots act at once; the rule bot decides inline, so paused time never
/// races a decision on the blocking pool.
fn settings() -> TableSettings {
    TableSettings { bot_delay: Duration::ZERO, strength: Strength::Rule, ..TableSettings::default() }
}

async fn table_with(options: TableOptions, settings: TableSettings) -> Harness {
    table_on(Journal::memory(), options, settings).await
}

async fn table_on(journal: Journal, options: TableOptions, settings: TableSettings) -> Harness {
    spawn_table(journal, options, settings, None).await
}

/// Starts a table's task on `journal` (new, or `restored`).
async fn spawn_table(
    journal: Journal,
    options: TableOptions,
    settings: TableSettings,
    restored: Option<Restored>,
) -> Harness {
    let (owner, hash) = new_token().unwrap();
    let id = Uuid::new_v4();
    journal
        .create_table(&TableRecord {
            id,
            name: "t".into(),
            options,
            owner_hash: hash.to_hex(),
            owner_account: None,
            created_at_ms: 0,
        })
        .await
        .unwrap();
    let shutdown = CancellationToken::new();
    let init = TableInit {
        id,
        name: "Test".into(),
        options,
        owner: Ownership { token: hash, account: None },
        created_at: 0,
        settings: Arc::new(settings),
        journal: journal.clone(),
        shutdown: shutdown.clone(),
        on_exit: Box::new(|_| {}),
    };
    let handle = spawn(init, restored, &TaskTracker::new());
    Harness { handle, owner, journal, _shutdown: shutdown }
}

/// A connection without a socket: its outbox is read directly.
struct Fake {
    id: ConnId,
    tx: Outbox,
    rx: mpsc::Receiver<Frame>,
    view: Option<TableView>,
    /// The `seq` of the last frame applied.
    seq: u64,
    /// Every frame received, raw, with the view after it.
    frames: Vec<(String, TableView)>,
    record: bool,
    /// A snapshot asked for with `sync` is to be compared with the view.
    checking: bool,
    /// Change frames applied.
    changes: usize,
    token: Option<String>,
    errors: Vec<ErrorCode>,
    chats: Vec<(Option<Seat>, String, String)>,
}

static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Fake {
    fn new(capacity: usize) -> Fake {
        let (tx, rx) = mpsc::channel(capacity);
        Fake {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            tx,
            rx,
            view: None,
            seq: 0,
            frames: Vec::new(),
            record: false,
            checking: false,
            changes: 0,
            token: None,
            errors: Vec::new(),
            chats: Vec::new(),
        }
    }

    async fn attach(&mut self, h: &Harness, how: Attach) -> Option<Role> {
        let (reply, rx) = oneshot::channel();
        let cmd = TableCommand::Attach {
            conn: self.id,
            outbox: self.tx.clone(),
            how,
            req: None,
            quiet: false,
            reply,
        };
        h.handle.send(cmd).await.unwrap();
        let role = rx.await.unwrap().map(|a| a.role);
        self.drain();
        role
    }

    async fn join(h: &Harness, seat: Seat) -> Fake {
        let mut f = Fake::new(4096);
        let role = f
            .attach(
                h,
                Attach::Join { name: seat.name().into(), seat: Some(seat), invite: None, account: None },
            )
            .await;
        assert_eq!(role, Some(Role::Seat(seat)));
        f
    }

    async fn act(&mut self, h: &Harness, act: Act) {
        h.handle.send(TableCommand::Act { conn: self.id, req: None, act, resent: false }).await.unwrap();
        settle().await;
        self.drain();
    }

    async fn detach(&mut self, h: &Harness) {
        h.handle.send(TableCommand::Detach { conn: self.id }).await.unwrap();
        settle().await;
    }

    /// Reads everything queued; keeps the latest view, applying change
    /// frames to it (a gap in `seq` fails the test).
    fn drain(&mut self) {
        while let Ok(Frame { text: frame, order }) = self.rx.try_recv() {
            let msg = serde_json::from_str::<ServerMessage>(frame.as_str()).unwrap();
            // What the connection knows of the frame without reading it.
            assert_eq!(order, Order::of(&msg), "{}", frame.as_str());
            let is_view = matches!(msg, ServerMessage::View { .. } | ServerMessage::Change { .. });
            match msg {
                ServerMessage::View { view, seq } => {
                    assert!(seq >= self.seq, "a snapshot older than the view: {seq} < {}", self.seq);
                    if self.checking {
                        let mut kept = self.view.clone().expect("a view before the snapshot");
                        kept.server_time = view.server_time;
                        assert_eq!(seq, self.seq, "the snapshot's seq");
                        assert_eq!(
                            kept, *view,
                            "the view built from changes differs from the snapshot at {seq}"
                        );
                        self.checking = false;
                    }
                    self.seq = seq;
                    self.view = Some(*view);
                }
                ServerMessage::Change { seq, change } => {
                    assert_eq!(seq, self.seq + 1, "a gap before {}", frame.as_str());
                    self.seq = seq;
                    self.changes += 1;
                    let view = self.view.as_mut().expect("a change before any snapshot");
                    view.apply(&change).unwrap_or_else(|e| panic!("{e}: {}", frame.as_str()));
                }
                ServerMessage::Joined { token, .. } => self.token = Some(token),
                ServerMessage::Error { code, .. } => self.errors.push(code),
                ServerMessage::Chat { from, name, text, .. } => self.chats.push((from, name, text)),
                _ => {}
            }
            if is_view && self.record {
                self.frames.push((frame.to_string(), self.view.clone().unwrap()));
            }
        }
    }

    fn view(&mut self) -> TableView {
        self.drain();
        self.view.clone().expect("a view")
    }
}

/// Lets the table task run whatever is ready.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

async fn status(h: &Harness) -> TableStatus {
    h.handle.status().await.unwrap()
}

/// Four people at a started table.
async fn started(options: TableOptions, settings: TableSettings) -> (Harness, Vec<Fake>) {
    started_on(Journal::memory(), options, settings).await
}

/// [`started`], on `journal`.
async fn started_on(
    journal: Journal,
    options: TableOptions,
    settings: TableSettings,
) -> (Harness, Vec<Fake>) {
    let h = table_on(journal, options, settings).await;
    let mut seats = Vec::new();
    for s in Seat::ALL {
        seats.push(Fake::join(&h, s).await);
    }
    let owner = h.owner.clone();
    seats[0].act(&h, Act::Start { owner_token: Some(owner) }).await;
    (h, seats)
}

fn turn_of(v: &TableView) -> Seat {
    v.game.as_ref().and_then(|g| g.turn).expect("a seat on turn")
}

fn legal_action(v: &TableView) -> Action {
    match v.game.as_ref().unwrap().legal {
        Legal::Bid { .. } => Action::Bid(3),
        Legal::Play { cards } => Action::Play(cards.first().unwrap()),
        Legal::None => panic!("nothing legal"),
    }
}

fn act_of(a: Action) -> Act {
    match a {
        Action::Bid(b) => Act::Bid { bid: b, seq: None },
        Action::Play(c) => Act::Play { card: c, seq: None },
    }
}

#[tokio::test(start_paused = true)]
async fn bid_and_card_timeouts_follow_each_tempo() {
    for tempo in [Tempo::Relaxed, Tempo::Normal, Tempo::Fast] {
        let (h, mut seats) =
            started(TableOptions { rules: Rules::default(), tempo, ..TableOptions::default() }, settings())
                .await;
        let v = seats[0].view();
        let first = turn_of(&v);
        let clock = v.clock.unwrap();
        assert_eq!(clock.seat, first);
        assert_eq!(clock.duration_ms, tempo.bid_ms());
        assert_eq!(clock.deadline - v.server_time, tempo.bid_ms());
        // Just before the deadline nothing happens; just after, the table bids.
        sleep(Duration::from_millis(tempo.bid_ms() - 5)).await;
        assert_eq!(status(&h).await.bids, [None; 4]);
        sleep(Duration::from_millis(10)).await;
        settle().await;
        let s = status(&h).await;
        assert!(s.bids[usize::from(first.index())].is_some(), "{tempo:?}: timed-out bid");
        let v = seats[0].view();
        let last = v.last_action.unwrap();
        assert_eq!((last.seat, last.source), (first, ActionSource::Timeout));
        assert_eq!(v.seats[usize::from(first.index())].timeouts, 1);
        // The next seat bids itself; the others' clocks run out too.
        for _ in 0..3 {
            let v = seats[0].view();
            let t = turn_of(&v);
            let a = legal_action(&seats[usize::from(t.index())].view());
            seats[usize::from(t.index())].act(&h, act_of(a)).await;
        }
        let v = seats[0].view();
        assert_eq!(v.phase, TablePhase::Playing);
        let clock = v.clock.unwrap();
        assert_eq!(clock.duration_ms, tempo.card_ms(), "{tempo:?}: card clock");
        let leader = turn_of(&v);
        sleep(Duration::from_millis(tempo.card_ms() + 5)).await;
        settle().await;
        let v = seats[0].view();
        assert_eq!(v.game.as_ref().unwrap().trick.cards().len(), 1, "{tempo:?}: timed-out card");
        let last = v.last_action.unwrap();
        assert_eq!((last.seat, last.source), (leader, ActionSource::Timeout));
        assert!(matches!(last.action, Action::Play(_)));
    }
}

#[tokio::test(start_paused = true)]
async fn three_timeouts_start_the_autopilot_until_take_over() {
    let (h, mut seats) = started(TableOptions::default(), settings()).await;
    let v = seats[0].view();
    let slow = turn_of(&v);
    let i = usize::from(slow.index());
    // Everybody else acts at once; `slow` never does.
    let mut guard = 0;
    while seats[0].view().seats[i].status != SeatStatus::Autopilot {
        guard += 1;
        assert!(guard < 500, "autopilot never started");
        let v = seats[0].view();
        let t = turn_of(&v);
        if t == slow {
            let before = v.seats[i].timeouts;
            sleep(Duration::from_millis(40_001)).await;
            settle().await;
            let after = seats[0].view().seats[i].timeouts;
            assert!(after == before + 1 || seats[0].view().seats[i].status == SeatStatus::Autopilot);
        } else {
            let a = legal_action(&seats[usize::from(t.index())].view());
            seats[usize::from(t.index())].act(&h, act_of(a)).await;
        }
    }
    assert_eq!(seats[0].view().seats[i].timeouts, 3);
    // On autopilot the table plays the seat at once, with no clock.
    let mut autopilot_moves = 0;
    for _ in 0..200 {
        let v = seats[0].view();
        if let Some(last) = v.last_action
            && last.seat == slow
            && last.source == ActionSource::Autopilot
        {
            autopilot_moves += 1;
            break;
        }
        let t = turn_of(&v);
        assert!(t != slow || v.clock.is_none(), "no clock while on autopilot");
        if t != slow {
            let a = legal_action(&seats[usize::from(t.index())].view());
            seats[usize::from(t.index())].act(&h, act_of(a)).await;
        } else {
            settle().await;
        }
    }
    assert_eq!(autopilot_moves, 1);
    // Take over: back to the player, the count cleared.
    seats[i].act(&h, Act::TakeOver).await;
    let v = seats[0].view();
    assert_eq!(v.seats[i].status, SeatStatus::Present);
    assert_eq!(v.seats[i].timeouts, 0);
    // Taking over twice is refused.
    seats[i].act(&h, Act::TakeOver).await;
    assert_eq!(seats[i].errors.last(), Some(&ErrorCode::NotOnAutopilot));
}

#[tokio::test(start_paused = true)]
async fn playing_yourself_ends_the_autopilot() {
    let s = TableSettings { autopilot_after: 1, bot_delay: Duration::from_secs(5), ..settings() };
    let (h, mut seats) = started(TableOptions::default(), s).await;
    let first = turn_of(&seats[0].view());
    let i = usize::from(first.index());
    sleep(Duration::from_millis(40_001)).await;
    settle().await;
    assert_eq!(seats[0].view().seats[i].status, SeatStatus::Autopilot);
    // Go round to `first` again (the others bid), then it bids itself before
    // the autopilot's delay.
    for _ in 0..3 {
        let t = turn_of(&seats[0].view());
        if t == first {
            break;
        }
        let a = legal_action(&seats[usize::from(t.index())].view());
        seats[usize::from(t.index())].act(&h, act_of(a)).await;
    }
    let v = seats[0].view();
    if turn_of(&v) == first {
        let a = legal_action(&seats[i].view());
        seats[i].act(&h, act_of(a)).await;
        assert_eq!(seats[0].view().seats[i].status, SeatStatus::Present);
    }
}

#[tokio::test(start_paused = true)]
async fn a_dropped_seat_is_held_for_the_grace_then_a_bot_plays_it() {
    for (closing, grace) in [(false, 60u64), (true, 10u64)] {
        let (h, mut seats) = started(
            TableOptions { rules: Rules::default(), tempo: Tempo::Relaxed, ..TableOptions::default() },
            settings(),
        )
        .await;
        let first = turn_of(&seats[0].view());
        // The seat that bids last drops out.
        let gone = first.offset(3);
        let g = usize::from(gone.index());
        // Watch from a seat that stays connected.
        let o = (g + 1) % 4;
        if closing {
            seats[g].act(&h, Act::Closing).await;
        }
        seats[g].detach(&h).await;
        let v = seats[o].view();
        assert_eq!(v.seats[g].status, SeatStatus::Away);
        let until = v.seats[g].away_until.unwrap();
        assert_eq!(until - v.server_time, grace * 1000);
        // Still held just before the grace ends.
        sleep(Duration::from_millis(grace * 1000 - 10)).await;
        settle().await;
        assert_eq!(seats[o].view().seats[g].status, SeatStatus::Away);
        sleep(Duration::from_millis(20)).await;
        settle().await;
        assert_eq!(seats[o].view().seats[g].status, SeatStatus::Bot, "grace {grace} s");
        // The others bid; when the turn comes, the bot bids for `gone`.
        for _ in 0..3 {
            let t = turn_of(&seats[o].view());
            assert_ne!(t, gone);
            let a = legal_action(&seats[usize::from(t.index())].view());
            seats[usize::from(t.index())].act(&h, act_of(a)).await;
        }
        settle().await;
        let v = seats[o].view();
        let last = v.last_action.unwrap();
        assert_eq!((last.seat, last.source), (gone, ActionSource::Bot));
        // The player comes back with the token and has the seat again.
        let token = seats[g].token.clone().unwrap();
        let mut back = Fake::new(4096);
        assert_eq!(back.attach(&h, Attach::Resume { token, account: None }).await, Some(Role::Seat(gone)));
        assert_eq!(seats[o].view().seats[g].status, SeatStatus::Present);
        assert!(back.view().game.unwrap().hand.is_some());
    }
}

#[tokio::test(start_paused = true)]
async fn the_clock_keeps_running_while_away() {
    let (h, mut seats) = started(TableOptions::default(), settings()).await;
    let first = turn_of(&seats[0].view());
    let f = usize::from(first.index());
    seats[f].detach(&h).await;
    sleep(Duration::from_millis(40_001)).await;
    settle().await;
    let v = seats[(f + 1) % 4].view();
    let last = v.last_action.unwrap();
    assert_eq!((last.seat, last.source), (first, ActionSource::Timeout));
    assert_eq!(v.seats[f].status, SeatStatus::Away);
}

#[tokio::test(start_paused = true)]
async fn leaving_is_permanent_and_a_bot_plays_on() {
    let (h, mut seats) = started(TableOptions::default(), settings()).await;
    let token = seats[2].token.clone().unwrap();
    seats[2].act(&h, Act::Leave).await;
    assert_eq!(seats[0].view().seats[2].status, SeatStatus::Left);
    // The token can still watch, but not act.
    let mut again = Fake::new(4096);
    assert_eq!(
        again.attach(&h, Attach::Resume { token, account: None }).await,
        Some(Role::Left(Seat::South))
    );
    let v = again.view();
    assert_eq!(v.you, Some(Seat::South));
    assert!(v.game.as_ref().unwrap().hand.is_none(), "a leaver sees no hand");
    again.act(&h, Act::Bid { bid: 3, seq: None }).await;
    assert_eq!(again.errors.last(), Some(&ErrorCode::SeatLeft));
    again.act(&h, Act::TakeOver).await;
    assert_eq!(again.errors.last(), Some(&ErrorCode::SeatLeft));
    // The bot bids for South when its turn comes.
    for _ in 0..4 {
        let v = seats[0].view();
        let t = turn_of(&v);
        if t == Seat::South {
            settle().await;
            continue;
        }
        let a = legal_action(&seats[usize::from(t.index())].view());
        seats[usize::from(t.index())].act(&h, act_of(a)).await;
    }
    let s = status(&h).await;
    assert!(s.bids[2].is_some(), "the bot bid for the leaver");
    assert_eq!(s.summary.seats[2].status, SeatStatus::Left);
}

#[tokio::test(start_paused = true)]
async fn a_match_where_every_turn_times_out_still_ends() {
    let s = TableSettings { autopilot_after: u8::MAX, ..settings() };
    let rules = Rules { match_end: MatchEnd::Hands(5), ..Rules::default() };
    let (h, mut seats) =
        started(TableOptions { rules, tempo: Tempo::Fast, ..TableOptions::default() }, s).await;
    let start = Instant::now();
    loop {
        sleep(Duration::from_secs(25)).await;
        settle().await;
        let st = status(&h).await;
        if st.summary.phase == TablePhase::Finished {
            assert!(st.result.is_some());
            assert!(st.hands.len() >= 5);
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60 * 60 * 24), "never ended");
    }
    let v = seats[0].view();
    assert!(v.seats.iter().all(|s| s.timeouts > 0));
    assert!(v.clock.is_none());
    // Every stored action was a timeout.
    let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
    assert!(stored.actions.len() >= 5 * 56);
    assert!(stored.actions.iter().all(|a| a.source == ActionSource::Timeout));
}

#[tokio::test(start_paused = true)]
async fn a_connection_that_falls_behind_is_dropped_and_can_resume() {
    let h = table_with(TableOptions::default(), settings()).await;
    let mut fast = Fake::join(&h, Seat::North).await;
    // A slow connection whose outbox holds two frames and is never read.
    let mut slow = Fake::new(2);
    let role = slow
        .attach(&h, Attach::Join { name: "Slow".into(), seat: Some(Seat::East), invite: None, account: None })
        .await;
    assert_eq!(role, Some(Role::Seat(Seat::East)));
    let token = slow.token.clone().unwrap();
    // Changes at the table overflow its outbox: the table drops it rather
    // than wait.
    for _ in 0..4 {
        let mut watcher = Fake::new(8);
        watcher
            .attach(
                &h,
                Attach::Join { name: "W".into(), seat: Some(Seat::South), invite: None, account: None },
            )
            .await;
        watcher.act(&h, Act::Leave).await;
    }
    settle().await;
    let v = fast.view();
    assert_eq!(v.seats[1].status, SeatStatus::Away, "the slow connection was dropped");
    // Its outbox is closed once drained.
    while slow.rx.try_recv().is_ok() {}
    assert!(slow.rx.is_closed() || slow.rx.try_recv().is_err());
    let mut back = Fake::new(4096);
    assert_eq!(back.attach(&h, Attach::Resume { token, account: None }).await, Some(Role::Seat(Seat::East)));
    assert_eq!(fast.view().seats[1].status, SeatStatus::Present);
}

/// A table restored from `restored`, its log already holding the seats.
async fn restored_table(settings: TableSettings, restored: Restored) -> Harness {
    spawn_table(Journal::memory(), TableOptions::default(), settings, Some(restored)).await
}

/// Seats as a restart finds them: four people with the given tokens.
fn people(tokens: &[TokenHash; 4]) -> BySeat<Option<RestoredSeat>> {
    BySeat::new_with(|s| {
        Some(RestoredSeat {
            name: s.name().into(),
            kind: SeatKind::Human,
            token: Some(tokens[usize::from(s.index())]),
            account: None,
            left: false,
            autopilot: false,
            timeouts: 0,
            grace_expired: false,
            players: Vec::new(),
            played_for_you: Vec::new(),
        })
    })
}

#[tokio::test(start_paused = true)]
async fn restored_tables_keep_counting_views_upwards() {
    let tokens: Vec<(String, TokenHash)> = (0..4).map(|_| new_token().unwrap()).collect();
    let hashes = [tokens[0].1, tokens[1].1, tokens[2].1, tokens[3].1];
    let game = Match::new(Rules::default(), 7);
    let h = restored_table(
        settings(),
        Restored {
            seats: people(&hashes),
            game: Some(game),
            epoch: 3,
            recent: Vec::new(),
            commitments: [None; 4],
        },
    )
    .await;
    let f = Fake::new(64);
    let (reply, rx) = oneshot::channel();
    let how = Attach::Resume { token: tokens[0].0.clone(), account: None };
    h.handle
        .send(TableCommand::Attach { conn: f.id, outbox: f.tx.clone(), how, req: None, quiet: false, reply })
        .await
        .unwrap();
    assert_eq!(rx.await.unwrap().map(|a| a.role), Some(Role::Seat(Seat::North)));
    let mut f = f;
    let mut seqs = Vec::new();
    while let Ok(Frame { text: frame, .. }) = f.rx.try_recv() {
        if let ServerMessage::View { seq, .. } = serde_json::from_str(frame.as_str()).unwrap() {
            seqs.push(seq);
        }
    }
    // Above anything the table can have sent before its restarts.
    assert!(!seqs.is_empty());
    assert!(seqs.iter().all(|&s| s > 3 << 32), "{seqs:?}");
}

#[tokio::test(start_paused = true)]
async fn absence_state_survives_a_restart() {
    let tokens: Vec<(String, TokenHash)> = (0..4).map(|_| new_token().unwrap()).collect();
    let hashes = [tokens[0].1, tokens[1].1, tokens[2].1, tokens[3].1];
    let mut seats = people(&hashes);
    // East was on autopilot after three timeouts; South's grace had run out.
    if let Some(s) = seats[Seat::East].as_mut() {
        s.autopilot = true;
        s.timeouts = 3;
    }
    if let Some(s) = seats[Seat::South].as_mut() {
        s.grace_expired = true;
    }
    let h = restored_table(
        settings(),
        Restored {
            seats,
            game: Some(Match::new(Rules::default(), 11)),
            epoch: 1,
            recent: Vec::new(),
            commitments: [None; 4],
        },
    )
    .await;
    let mut north = Fake::new(4096);
    north.attach(&h, Attach::Resume { token: tokens[0].0.clone(), account: None }).await;
    let v = north.view();
    assert_eq!(v.seats[0].status, SeatStatus::Present);
    // Gone, so away while a grace runs, though the autopilot plays it.
    assert_eq!(v.seats[1].status, SeatStatus::Away);
    assert_eq!(v.seats[1].timeouts, 3);
    assert!(v.seats[1].away_until.is_some());
    // The grace had run out: the bot goes on, no fresh grace.
    assert_eq!(v.seats[2].status, SeatStatus::Bot);
    assert!(v.seats[2].away_until.is_none());
    assert_eq!(v.seats[3].status, SeatStatus::Away);
    // The stored seats say so too, for the next restart.
    let st = status(&h).await;
    assert_eq!(st.summary.seats[1].status, SeatStatus::Away);
    // East comes back: the seat is East's again without a take over.
    let mut east = Fake::new(4096);
    east.attach(&h, Attach::Resume { token: tokens[1].0.clone(), account: None }).await;
    let v = north.view();
    assert_eq!(v.seats[1].status, SeatStatus::Present);
    assert_eq!(v.seats[1].timeouts, 0);
    let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
    let east_record = stored.seats[Seat::East].clone().unwrap();
    assert!(!east_record.autopilot && east_record.timeouts == 0);
}

#[tokio::test(start_paused = true)]
async fn timeouts_and_autopilot_are_written_with_the_seats() {
    let s = TableSettings { autopilot_after: 2, ..settings() };
    let (h, mut seats) = started(TableOptions::default(), s).await;
    let first = turn_of(&seats[0].view());
    let i = usize::from(first.index());
    sleep(Duration::from_millis(40_001)).await;
    settle().await;
    let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
    assert_eq!(stored.seats[first].as_ref().unwrap().timeouts, 1);
    // Round to `first` again, which times out a second time: autopilot.
    for _ in 0..3 {
        let t = turn_of(&seats[0].view());
        let a = legal_action(&seats[usize::from(t.index())].view());
        seats[usize::from(t.index())].act(&h, act_of(a)).await;
    }
    assert_eq!(turn_of(&seats[0].view()), first);
    sleep(Duration::from_millis(40_001)).await;
    settle().await;
    assert_eq!(seats[0].view().seats[i].status, SeatStatus::Autopilot);
    let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
    let rec = stored.seats[first].clone().unwrap();
    assert!(rec.autopilot);
    assert_eq!(rec.timeouts, 2);
}

#[tokio::test(start_paused = true)]
async fn an_away_seat_on_autopilot_reads_away_and_its_player_returns_without_take_over() {
    let s = TableSettings { autopilot_after: 1, bot_delay: Duration::from_secs(5), ..settings() };
    let (h, mut seats) = started(TableOptions::default(), s).await;
    let first = turn_of(&seats[0].view());
    let i = usize::from(first.index());
    let o = (i + 1) % 4;
    let token = seats[i].token.clone().unwrap();
    seats[i].detach(&h).await;
    sleep(Duration::from_millis(40_001)).await;
    settle().await;
    let v = seats[o].view();
    // Timed out while away: the autopilot is on, but the seat reads away.
    assert_eq!(v.seats[i].timeouts, 1);
    assert_eq!(v.seats[i].status, SeatStatus::Away);
    let mut back = Fake::new(4096);
    assert_eq!(back.attach(&h, Attach::Resume { token, account: None }).await, Some(Role::Seat(first)));
    let v = seats[o].view();
    assert_eq!(v.seats[i].status, SeatStatus::Present);
    assert_eq!(v.seats[i].timeouts, 0);
    back.act(&h, Act::TakeOver).await;
    assert_eq!(back.errors.last(), Some(&ErrorCode::NotOnAutopilot), "nothing to take over");
}

#[tokio::test(start_paused = true)]
async fn a_seat_takes_only_so_many_connections() {
    let s = TableSettings { seat_connections: 2, ..settings() };
    let h = table_with(TableOptions::default(), s).await;
    let first = Fake::join(&h, Seat::North).await;
    let token = first.token.clone().unwrap();
    let mut second = Fake::new(64);
    assert_eq!(
        second.attach(&h, Attach::Resume { token: token.clone(), account: None }).await,
        Some(Role::Seat(Seat::North))
    );
    let mut third = Fake::new(64);
    assert_eq!(third.attach(&h, Attach::Resume { token: token.clone(), account: None }).await, None);
    assert_eq!(third.errors, vec![ErrorCode::Capacity]);
    // One goes: there is room again.
    second.detach(&h).await;
    let mut fourth = Fake::new(64);
    assert_eq!(
        fourth.attach(&h, Attach::Resume { token, account: None }).await,
        Some(Role::Seat(Seat::North))
    );
}

#[tokio::test(start_paused = true)]
async fn slow_connections_are_all_dropped_after_one_fan_out() {
    let h = table_with(TableOptions::default(), settings()).await;
    let mut north = Fake::join(&h, Seat::North).await;
    // Fifty spectators whose outboxes hold one frame and are never read.
    let mut slow = Vec::new();
    for _ in 0..50 {
        let mut f = Fake::new(2);
        assert_eq!(f.attach(&h, Attach::Watch { account: None }).await, Some(Role::Spectator));
        slow.push(f);
    }
    assert_eq!(status(&h).await.summary.spectators, 50);
    // Three changes overflow all of them at once.
    let mut east = Fake::join(&h, Seat::East).await;
    east.act(&h, Act::Leave).await;
    Fake::join(&h, Seat::West).await;
    settle().await;
    // East, who left the lobby, watches on: the only spectator left.
    assert_eq!(status(&h).await.summary.spectators, 1, "every slow spectator was dropped");
    // The table goes on for the others.
    Fake::join(&h, Seat::South).await;
    assert_eq!(north.view().seats[2].status, SeatStatus::Present);
    // The table let go of every slow outbox.
    for f in slow {
        let Fake { tx, mut rx, .. } = f;
        drop(tx);
        while rx.try_recv().is_ok() {}
        assert!(rx.is_closed());
    }
}

#[tokio::test(start_paused = true)]
async fn with_every_search_slot_busy_the_rule_bot_plays() {
    let s = TableSettings {
        strength: Strength::Search,
        search_slots: Arc::new(tokio::sync::Semaphore::new(0)),
        ..settings()
    };
    let h = table_with(TableOptions::default(), s).await;
    let mut owner = Fake::join(&h, Seat::North).await;
    owner.act(&h, Act::AddBots { owner_token: Some(h.owner.clone()) }).await;
    owner.act(&h, Act::Leave).await;
    // North left in the lobby: fill again and start with four bots.
    owner.act(&h, Act::AddBots { owner_token: Some(h.owner.clone()) }).await;
    owner.act(&h, Act::Start { owner_token: Some(h.owner.clone()) }).await;
    for _ in 0..10 {
        sleep(Duration::from_millis(10)).await;
        settle().await;
    }
    // No search could run, yet the bots have bid and played.
    let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
    assert!(stored.actions.len() > 8, "only {} moves", stored.actions.len());
}

#[tokio::test]
async fn search_decisions_are_not_lost_while_the_queue_is_full() {
    let s = TableSettings { strength: Strength::Search, bot_delay: Duration::ZERO, ..settings() };
    let h = table_with(TableOptions::default(), s).await;
    let mut owner = Fake::new(1 << 16);
    owner.attach(&h, Attach::Watch { account: None }).await;
    let mut bots = Fake::join(&h, Seat::North).await;
    bots.act(&h, Act::AddBots { owner_token: Some(h.owner.clone()) }).await;
    bots.act(&h, Act::Leave).await;
    bots.act(&h, Act::AddBots { owner_token: Some(h.owner.clone()) }).await;
    bots.act(&h, Act::Start { owner_token: Some(h.owner.clone()) }).await;
    // Keep the table's queue full for a while with commands that do
    // nothing (detaching a connection that does not exist).
    let until = Instant::now() + Duration::from_millis(1500);
    while Instant::now() < until {
        while h.handle.try_send(TableCommand::Detach { conn: u64::MAX }) {}
        tokio::task::yield_now().await;
    }
    let moves = |h: &Harness| {
        let journal = h.journal.clone();
        let id = h.handle.id();
        async move { journal.get(id).await.unwrap().unwrap().actions.len() }
    };
    let before = moves(&h).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while moves(&h).await < before + 4 {
        assert!(Instant::now() < deadline, "the bots stopped at {before} moves");
        sleep(Duration::from_millis(20)).await;
    }
}

#[test]
fn secrets_are_not_in_debug_strings() {
    let token = "5ecret-5eat-t0ken";
    let printed = [
        format!("{:?}", Attach::Resume { token: token.into(), account: None }),
        format!("{:?}", Act::Start { owner_token: Some(token.into()) }),
        format!("{:?}", Act::AddBots { owner_token: Some(token.into()) }),
        format!(
            "{:?}",
            TableCommand::PlanRematch {
                conn: 1,
                req: None,
                owner_token: Some(OwnerToken(token.into())),
                reply: oneshot::channel().0
            }
        ),
    ];
    for p in printed {
        assert!(!p.contains(token), "{p}");
    }
    let restored = Restored {
        seats: BySeat([None, None, None, None]),
        game: Some(Match::new(Rules::default(), 0xDEAD_BEEF)),
        epoch: 1,
        recent: Vec::new(),
        commitments: [None; 4],
    };
    let p = format!("{restored:?}");
    assert!(!p.contains(&0xDEAD_BEEF_u64.to_string()) && !p.contains("deadbeef"), "{p}");
}

/// A log writer into a shared buffer.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn the_seed_is_not_logged_while_the_match_runs() {
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    // With a single subscriber registered, tracing decides whether a log
    // line is wanted by asking the subscriber of the thread that reaches it
    // first, and remembers the answer for every thread: another test's
    // thread, with none, would answer "nobody listens" for this one. A
    // second registered subscriber makes tracing ask them all.
    let _second = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
    let _guard = tracing::subscriber::set_default(subscriber);
    let (h, mut seats) = started(TableOptions::default(), settings()).await;
    for _ in 0..8 {
        let t = turn_of(&seats[0].view());
        let a = legal_action(&seats[usize::from(t.index())].view());
        seats[usize::from(t.index())].act(&h, act_of(a)).await;
    }
    let seed = h.journal.get(h.handle.id()).await.unwrap().unwrap().seed.unwrap();
    let text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(text.contains("match started"), "the log was captured: {text}");
    for form in [seed.to_string(), format!("{seed:x}"), (seed as i64).to_string()] {
        assert!(!text.contains(&form), "the seed {form} is in the log");
    }
}

mod lean;

// --- Failing storage -------------------------------------------------------

use crate::storage::{Faults, Op};

/// A started table with four bots on a journal that fails on demand, and a
/// spectator.
async fn bots_on_faulty_storage(settings: TableSettings) -> (Harness, Faults, Fake) {
    let (journal, faults) = Journal::memory().with_faults();
    let h = table_on(journal, TableOptions::default(), settings).await;
    let mut owner = Fake::join(&h, Seat::North).await;
    owner.act(&h, Act::AddBots { owner_token: Some(h.owner.clone()) }).await;
    owner.act(&h, Act::Leave).await;
    owner.act(&h, Act::AddBots { owner_token: Some(h.owner.clone()) }).await;
    owner.act(&h, Act::Start { owner_token: Some(h.owner.clone()) }).await;
    (h, faults, owner)
}

/// Moves in the log.
async fn logged(h: &Harness) -> Vec<(Seat, Action)> {
    let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
    stored.actions.iter().map(|a| (a.seat, a.action)).collect()
}

/// The table in memory (its public status) is the log replayed: same hand,
/// same bids, same tricks, same seat on turn.
async fn assert_log_matches_memory(h: &Harness) {
    let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
    for (i, a) in stored.actions.iter().enumerate() {
        assert_eq!(a.index, i, "the log has no gap");
    }
    let m = crate::record::replay(&stored).unwrap().expect("a started match");
    let st = status(h).await;
    assert_eq!(st.summary.hand_number, m.hand_number());
    assert_eq!(st.turn, m.turn());
    assert_eq!(st.bids, m.hand().bids().0);
    assert_eq!(st.tricks_won, m.hand().tricks_won().0);
    assert_eq!(st.hands.len(), m.results().len());
}

async fn run_for(d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until {
        sleep(Duration::from_millis(50)).await;
        settle().await;
    }
}

#[tokio::test(start_paused = true)]
async fn the_bots_wait_out_failing_storage_and_go_on_by_themselves() {
    let (h, faults, _watch) =
        bots_on_faulty_storage(TableSettings { bot_delay: Duration::from_millis(100), ..settings() }).await;
    run_for(Duration::from_secs(1)).await;
    // Every write fails for ten seconds.
    for op in [Op::Action, Op::Seats, Op::Hand, Op::Finish] {
        faults.fail_for(Some(op), Duration::from_secs(10));
    }
    let before = logged(&h).await.len();
    run_for(Duration::from_secs(9)).await;
    assert_eq!(logged(&h).await.len(), before, "nothing is written while storage is down");
    assert!(faults.injected() > 3, "the table kept retrying");
    // Storage is back: the table goes on with nobody's help.
    run_for(Duration::from_secs(8)).await;
    assert!(logged(&h).await.len() > before + 8, "the table resumed");
    assert_log_matches_memory(&h).await;
}

#[tokio::test(start_paused = true)]
async fn each_kind_of_write_that_fails_once_or_after_committing_is_retried() {
    for op in [Op::Action, Op::Seats, Op::Hand] {
        for after_commit in [false, true] {
            let (h, faults, _watch) = bots_on_faulty_storage(settings()).await;
            // Timeouts and autopilot write seats; bots write actions and hands.
            for _ in 0..5 {
                if after_commit {
                    faults.fail_after_commit(op);
                } else {
                    faults.fail_once(op);
                }
                run_for(Duration::from_millis(400)).await;
            }
            run_for(Duration::from_secs(30)).await;
            let st = status(&h).await;
            assert!(st.summary.hand_number >= 2 || st.result.is_some(), "{op:?}: the match went on");
            assert_log_matches_memory(&h).await;
            let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
            let m = crate::record::replay(&stored).unwrap().unwrap();
            // Every scored hand reached the log.
            run_for(Duration::from_secs(6)).await;
            let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
            assert!(
                stored.hands.len() + 1 >= m.results().len(),
                "{op:?} after_commit={after_commit}: hands stored"
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_player_move_that_cannot_be_stored_is_refused_and_changes_nothing() {
    let (journal, faults) = Journal::memory().with_faults();
    let (h, mut seats) = started_on(journal, TableOptions::default(), settings()).await;
    let v = seats[0].view();
    let t = usize::from(turn_of(&v).index());
    let a = legal_action(&seats[t].view());
    faults.fail_once(Op::Action);
    seats[t].act(&h, act_of(a)).await;
    assert_eq!(seats[t].errors.last(), Some(&ErrorCode::StorageUnavailable));
    assert!(logged(&h).await.is_empty());
    assert_eq!(turn_of(&seats[0].view()), turn_of(&v), "nothing changed");
    // Storage answers again: the same move goes through.
    seats[t].act(&h, act_of(a)).await;
    assert_eq!(logged(&h).await, vec![(turn_of(&v), a)]);
    assert_log_matches_memory(&h).await;
}

#[tokio::test(start_paused = true)]
async fn a_move_reported_failed_that_was_stored_is_not_lost_nor_forked() {
    let (journal, faults) = Journal::memory().with_faults();
    let (h, mut seats) = started_on(journal, TableOptions::default(), settings()).await;
    let first = turn_of(&seats[0].view());
    let t = usize::from(first.index());
    let a = legal_action(&seats[t].view());
    // The write commits but is reported failed: the player is told to try
    // again, and memory does not have the move.
    faults.fail_after_commit(Op::Action);
    seats[t].act(&h, act_of(a)).await;
    assert_eq!(seats[t].errors.last(), Some(&ErrorCode::StorageUnavailable));
    assert_eq!(logged(&h).await, vec![(first, a)]);
    // The player does not try again; the clock runs out and the table bids
    // for the seat (perhaps something else): the log already holds the
    // player's move there, so the table takes that one instead of forking
    // the log.
    sleep(Duration::from_millis(40_001)).await;
    run_for(Duration::from_secs(1)).await;
    let log = logged(&h).await;
    assert_eq!(log[0], (first, a), "the stored move stands");
    assert_ne!(turn_of(&seats[0].view()), first, "the table moved past it");
    assert_log_matches_memory(&h).await;
    let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
    assert_eq!(stored.actions[0].source, ActionSource::Player);
}

#[tokio::test(start_paused = true)]
async fn a_seat_is_stored_before_its_token_is_given() {
    let (journal, faults) = Journal::memory().with_faults();
    let h = table_on(journal, TableOptions::default(), settings()).await;
    faults.fail_once(Op::Seats);
    let mut f = Fake::new(64);
    assert_eq!(
        f.attach(
            &h,
            Attach::Join { name: "Ann".into(), seat: Some(Seat::North), invite: None, account: None }
        )
        .await,
        None
    );
    assert_eq!(f.errors, vec![ErrorCode::StorageUnavailable]);
    assert!(f.token.is_none(), "no token for a seat that is not stored");
    assert_eq!(status(&h).await.summary.open_seats, 4);
    // Once stored, the token restores the seat.
    let mut g = Fake::new(64);
    assert_eq!(
        g.attach(
            &h,
            Attach::Join { name: "Ann".into(), seat: Some(Seat::North), invite: None, account: None }
        )
        .await,
        Some(Role::Seat(Seat::North))
    );
    let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
    let hash = stored.seats[Seat::North].as_ref().unwrap().token_hash.clone().unwrap();
    assert!(TokenHash::from_hex(&hash).unwrap().matches(g.token.as_ref().unwrap()));
    // A start that cannot be stored is refused too.
    g.act(&h, Act::AddBots { owner_token: Some(h.owner.clone()) }).await;
    faults.fail_once(Op::Start);
    g.act(&h, Act::Start { owner_token: Some(h.owner.clone()) }).await;
    assert_eq!(g.errors.last(), Some(&ErrorCode::StorageUnavailable));
    assert_eq!(status(&h).await.summary.phase, TablePhase::Lobby);
}

#[tokio::test(start_paused = true)]
async fn chat_reaches_everybody_spectators_only_read_by_default_and_not_in_the_match_record() {
    let (h, mut seats) = started(TableOptions::default(), settings()).await;
    let mut watcher = Fake::new(64);
    assert_eq!(watcher.attach(&h, Attach::Watch { account: None }).await, Some(Role::Spectator));
    seats[0].act(&h, Act::Chat { text: "<b>Nice nil!</b>".into() }).await;
    settle().await;
    let said = (Some(Seat::North), "North".to_owned(), "<b>Nice nil!</b>".to_owned());
    for f in seats.iter_mut().chain(std::iter::once(&mut watcher)) {
        f.drain();
        assert_eq!(f.chats, vec![said.clone()]);
    }
    // A spectator only reads here.
    watcher.act(&h, Act::Chat { text: "hello".into() }).await;
    assert_eq!(watcher.errors, vec![ErrorCode::ChatNotAllowed]);
    seats[1].drain();
    assert_eq!(seats[1].chats.len(), 1, "the refused message went nowhere");
    // A connection attaching later reads what was said.
    let mut late = Fake::new(64);
    late.attach(&h, Attach::Watch { account: None }).await;
    assert_eq!(late.chats, vec![said]);
    // The match's record knows nothing of it.
    let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
    let record = serde_json::to_string(&crate::record::record(&stored).unwrap()).unwrap();
    assert!(!record.contains("Nice nil"), "{record}");
}

#[tokio::test(start_paused = true)]
async fn spectators_write_where_the_table_lets_them() {
    let h = table_with(TableOptions { spectator_chat: true, ..TableOptions::default() }, settings()).await;
    let mut north = Fake::join(&h, Seat::North).await;
    let mut watcher = Fake::new(64);
    watcher.attach(&h, Attach::Watch { account: None }).await;
    watcher.act(&h, Act::Chat { text: "Good game".into() }).await;
    north.drain();
    assert_eq!(north.chats, vec![(None, "Spectator".to_owned(), "Good game".to_owned())]);
    assert!(watcher.errors.is_empty());
}

async fn plan(h: &Harness, conn: ConnId, owner_token: &str) -> Option<RematchPlan> {
    let (reply, rx) = oneshot::channel();
    h.handle
        .send(TableCommand::PlanRematch {
            conn,
            req: None,
            owner_token: Some(OwnerToken(owner_token.into())),
            reply,
        })
        .await
        .unwrap();
    rx.await.unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_rematch_waits_for_the_present_players_and_points_everybody_at_the_new_table() {
    let rules = Rules { match_end: MatchEnd::Hands(5), ..Rules::default() };
    let (h, mut seats) =
        started(TableOptions { rules, tempo: Tempo::Fast, ..TableOptions::default() }, settings()).await;
    let mut watcher = Fake::new(4096);
    watcher.attach(&h, Attach::Watch { account: None }).await;
    // Too early.
    assert!(plan(&h, watcher.id, &h.owner).await.is_none());
    watcher.drain();
    assert_eq!(watcher.errors, vec![ErrorCode::MatchNotOver]);
    seats[1].act(&h, Act::Rematch { ready: true }).await;
    assert_eq!(seats[1].errors, vec![ErrorCode::MatchNotOver]);
    // East, South and West leave; North stays and lets the clock play.
    for f in &mut seats[1..] {
        f.act(&h, Act::Leave).await;
    }
    let start = Instant::now();
    while status(&h).await.summary.phase != TablePhase::Finished {
        sleep(Duration::from_secs(20)).await;
        settle().await;
        assert!(start.elapsed() < Duration::from_secs(60 * 60 * 24), "never ended");
    }
    let v = seats[0].view();
    let r = v.rematch.expect("the rematch part once the match is over");
    assert_eq!(r.ready, [false, true, true, true], "the seats that left are bots, and bots are ready");
    assert_eq!(r.next_table, None);
    // Not the owner; the owner while North is not ready; a spectator being ready.
    assert!(plan(&h, watcher.id, "not the owner token").await.is_none());
    assert!(plan(&h, watcher.id, &h.owner).await.is_none());
    watcher.act(&h, Act::Rematch { ready: true }).await;
    assert_eq!(
        watcher.errors,
        vec![
            ErrorCode::MatchNotOver,
            ErrorCode::InvalidToken,
            ErrorCode::PlayersNotReady,
            ErrorCode::NotSeated
        ]
    );
    // North is ready: everybody sees it.
    seats[0].act(&h, Act::Rematch { ready: true }).await;
    assert_eq!(watcher.view().rematch.unwrap().ready, [true; 4]);
    let p = plan(&h, watcher.id, &h.owner).await.expect("a plan");
    assert_eq!(p.name, "Test");
    assert_eq!(p.options.rules.match_end, MatchEnd::Hands(5));
    let north = p.seats[Seat::North].as_ref().unwrap();
    assert_eq!((north.kind, north.left, north.timeouts, north.autopilot), (SeatKind::Human, false, 0, false));
    let token = seats[0].token.clone().unwrap();
    assert!(
        TokenHash::from_hex(north.token_hash.as_deref().unwrap()).unwrap().matches(&token),
        "the same seat token"
    );
    for s in [Seat::East, Seat::South, Seat::West] {
        let b = p.seats[s].as_ref().unwrap();
        assert_eq!((b.kind, b.token_hash.as_deref(), b.left), (SeatKind::Bot, None, false), "{s}");
    }
    // While it is being created, a second one is refused.
    assert!(plan(&h, watcher.id, &h.owner).await.is_none());
    let next = Uuid::new_v4();
    h.handle
        .send(TableCommand::RematchStarted { conn: watcher.id, req: None, next: Ok(next) })
        .await
        .unwrap();
    settle().await;
    assert_eq!(seats[0].view().rematch.unwrap().next_table, Some(next));
    assert_eq!(watcher.view().rematch.unwrap().next_table, Some(next));
    seats[0].act(&h, Act::Rematch { ready: false }).await;
    assert_eq!(seats[0].errors, vec![ErrorCode::AlreadyStarted]);
    // The finished match's record is as it was.
    let stored = h.journal.get(h.handle.id()).await.unwrap().unwrap();
    assert!(stored.result.is_some());
    assert!(stored.hands.len() >= 5);
}
