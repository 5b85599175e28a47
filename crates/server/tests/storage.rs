//! Storage tests. Each runs against SQLite (a fresh file) and, when
//! `TEST_DATABASE_URL` names a PostgreSQL server (e.g.
//! `postgres://postgres@127.0.0.1:5432/test`), against PostgreSQL too, in a
//! database of its own that is dropped afterwards. Without it they run on
//! SQLite alone and say so, except under CI (`CI` set), where they fail.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use spades_engine::{Action, BySeat, Legal, Match, MatchEnd, Move, Rules, Seat};
use spades_protocol::{ActionSource, SeatKind, TableOptions};
use spades_server::storage::{
    ActionRecord, Faults, Journal, MatchPage, Op, SeatRecord, StorageError, StoreOptions, TableRecord,
    db_location, execute_raw,
};
use sqlx::Connection;
use uuid::Uuid;

mod services;

/// A database for one test, removed on `cleanup`.
struct TestDb {
    url: String,
    dir: PathBuf,
    pg: Option<services::TestDatabase>,
}

impl TestDb {
    fn sqlite() -> TestDb {
        let dir = std::env::temp_dir().join(format!("spades-storage-{}", Uuid::new_v4().simple()));
        TestDb { url: String::new(), dir, pg: None }
    }

    async fn postgres() -> Option<TestDb> {
        let pg = services::TestDatabase::create(&services::postgres()?, "spades_test").await;
        Some(TestDb { url: pg.url.clone(), dir: std::env::temp_dir(), pg: Some(pg) })
    }

    async fn all() -> Vec<TestDb> {
        let mut dbs = vec![TestDb::sqlite()];
        if let Some(pg) = TestDb::postgres().await {
            dbs.push(pg);
        }
        dbs
    }

    async fn open(&self) -> Journal {
        Journal::open(&self.url, &self.dir).await.unwrap()
    }

    async fn open_with(&self, options: StoreOptions) -> Journal {
        Journal::open_with(&self.url, &self.dir, options).await.unwrap()
    }

    /// Another connection holding the database's write lock until
    /// [`Lock::release`].
    async fn lock(&self) -> Lock {
        if self.pg.is_some() {
            let mut c = sqlx::PgConnection::connect(&self.url).await.unwrap();
            sqlx::raw_sql("BEGIN; LOCK TABLE tables, seats, actions, hands IN EXCLUSIVE MODE")
                .execute(&mut c)
                .await
                .unwrap();
            Lock::Postgres(c)
        } else {
            let options = sqlx::sqlite::SqliteConnectOptions::new().filename(self.dir.join("spades.db"));
            let mut c = sqlx::SqliteConnection::connect_with(&options).await.unwrap();
            sqlx::raw_sql("BEGIN IMMEDIATE").execute(&mut c).await.unwrap();
            Lock::Sqlite(c)
        }
    }

    async fn cleanup(self) {
        match self.pg {
            Some(pg) => pg.remove().await.unwrap(),
            None => {
                let _ = std::fs::remove_dir_all(&self.dir);
            }
        }
    }
}

enum Lock {
    Sqlite(sqlx::SqliteConnection),
    Postgres(sqlx::PgConnection),
}

impl Lock {
    async fn release(self) {
        match self {
            Lock::Sqlite(mut c) => {
                sqlx::raw_sql("ROLLBACK").execute(&mut c).await.unwrap();
                c.close().await.unwrap();
            }
            Lock::Postgres(mut c) => {
                sqlx::raw_sql("ROLLBACK").execute(&mut c).await.unwrap();
                c.close().await.unwrap();
            }
        }
    }
}

fn table_record(id: Uuid, created: u64) -> TableRecord {
    TableRecord {
        id,
        name: format!("t{created}"),
        options: TableOptions {
            rules: Rules { match_end: MatchEnd::Hands(5), ..Rules::default() },
            ..Default::default()
        },
        owner_hash: "ab".repeat(32),
        owner_account: Some(Uuid::from_u128(created.into())),
        created_at_ms: created,
    }
}

fn seats() -> BySeat<Option<SeatRecord>> {
    BySeat::new_with(|s| {
        Some(SeatRecord {
            name: s.name().into(),
            kind: if s == Seat::North { SeatKind::Human } else { SeatKind::Bot },
            token_hash: (s == Seat::North).then(|| "cd".repeat(32)),
            account: (s == Seat::North).then(|| Uuid::from_u128(7)),
            left: false,
            autopilot: false,
            timeouts: 0,
            grace_expired: false,
            players: Vec::new(),
        })
    })
}

/// Plays `n` legal moves of a match and stores them.
async fn play(journal: &Journal, id: Uuid, rules: Rules, seed: u64, n: usize) -> Match {
    play_on(journal, id, Match::new(rules, seed), n).await
}

/// Plays up to `n` more legal moves of `m`, storing each move, each hand's
/// result and the end.
async fn play_on(journal: &Journal, id: Uuid, mut m: Match, n: usize) -> Match {
    for _ in 0..n {
        let Some(seat) = m.turn() else { break };
        let i = m.moves().len();
        let action = match m.legal_moves() {
            Legal::Bid { .. } => Action::Bid(2),
            Legal::Play { cards } => Action::Play(cards.first().unwrap()),
            Legal::None => break,
        };
        let source = if i.is_multiple_of(3) { ActionSource::Player } else { ActionSource::Bot };
        journal
            .append(
                id,
                ActionRecord { index: i, seat, action, source, at_ms: 1000 + i as u64, seq: 10 + i as u64 },
            )
            .await
            .unwrap();
        let before = m.results().len();
        m.apply(seat, action).unwrap();
        if m.results().len() > before {
            journal.hand(id, m.results().last().unwrap()).await.unwrap();
        }
        if let Some(end) = m.result() {
            journal.finish(id, end).await.unwrap();
        }
    }
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_is_stored_and_read_back_exactly() {
    for db in TestDb::all().await {
        let journal = db.open().await;
        let id = Uuid::new_v4();
        let rec = table_record(id, 10);
        journal.create_table(&rec).await.unwrap();
        journal.seats(id, &seats()).await.unwrap();
        journal.start(id, u64::MAX - 7).await.unwrap();
        let m = play(&journal, id, rec.options.rules, u64::MAX - 7, 150).await;
        let stored = journal.get(id).await.unwrap().unwrap();
        assert_eq!(stored.table, rec, "{}", journal.kind());
        assert_eq!(stored.seats, seats());
        assert_eq!(stored.seed, Some(u64::MAX - 7), "u64 seeds survive the i64 column");
        assert_eq!(stored.actions.len(), 150);
        let moves: Vec<Move> =
            stored.actions.iter().map(|a| Move { seat: a.seat, action: a.action }).collect();
        assert_eq!(moves, m.moves());
        assert_eq!(stored.actions[3].source, ActionSource::Player);
        assert_eq!(stored.actions[4].source, ActionSource::Bot);
        assert_eq!(stored.hands, m.results());
        assert_eq!(stored.result, None);
        // Unfinished until finished; listed among recent matches.
        let open: Vec<Uuid> =
            journal.unfinished().await.unwrap().into_iter().map(|t| t.unwrap().table.id).collect();
        assert_eq!(open, vec![id]);
        assert_eq!(journal.recent(10).await.unwrap().len(), 1);
        // Finish it: no longer restored.
        let m = play_on(&journal, id, m, usize::MAX).await;
        assert!(m.result().is_some());
        assert!(journal.unfinished().await.unwrap().is_empty());
        let stored = journal.get(id).await.unwrap().unwrap();
        assert_eq!(stored.result, m.result().copied());
        assert_eq!(stored.hands.len(), m.results().len());
        assert!(journal.ping().await);
        drop(journal);
        db.cleanup().await;
    }
}

/// A fair match's seeds are stored with its start and read back exactly; the
/// match replays from them, and its record reveals the server seed only once
/// the match is over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fair_seeds_are_stored_and_replay_the_match() {
    use spades_engine::{ClientSeed, FairSeeds, ServerSeed};
    use spades_server::storage::FairRecord;
    for db in TestDb::all().await {
        let journal = db.open().await;
        let id = Uuid::new_v4();
        let rec = table_record(id, 11);
        journal.create_table(&rec).await.unwrap();
        journal.seats(id, &seats()).await.unwrap();
        let clients = BySeat([Some(ClientSeed::from_bytes([0xc1; 32])), None, None, None]);
        let seeds = FairSeeds::new(*id.as_bytes(), ServerSeed::from_bytes([0x5e; 32]), clients);
        // East committed to a seed it never revealed.
        let withheld = ClientSeed::from_bytes([0xe5; 32]).commitment(*id.as_bytes(), Seat::East);
        let commitments = BySeat([None, Some(withheld), None, None]);
        journal.start_fair(id, &seeds, commitments).await.unwrap();
        let m = play_on(&journal, id, Match::fair(rec.options.rules, seeds.clone()), 60).await;
        let stored = journal.get(id).await.unwrap().unwrap();
        assert_eq!(stored.fair, Some(FairRecord::of(&seeds, commitments)), "{}", journal.kind());
        let north = ClientSeed::from_bytes([0xc1; 32]).commitment(*id.as_bytes(), Seat::North);
        assert_eq!(
            stored.fair.as_ref().unwrap().client_commitments,
            [Some(north), Some(withheld), None, None]
        );
        assert_eq!(stored.seed, Some(seeds.bot_seed()));
        assert_eq!(spades_server::record::replay(&stored).unwrap(), Some(m.clone()));
        let record = spades_server::record::record(&stored).unwrap();
        let fair = record.fair.unwrap();
        assert_eq!((fair.commitment, fair.client_seeds), (seeds.commitment(), clients.0));
        assert_eq!(fair.server_seed, None, "secret until the match is over");
        let m = play_on(&journal, id, m, usize::MAX).await;
        assert!(m.result().is_some());
        let record = spades_server::record::record(&journal.get(id).await.unwrap().unwrap()).unwrap();
        assert_eq!(record.fair.unwrap().server_seed, Some(*seeds.server_seed()));
        drop(journal);
        db.cleanup().await;
    }
}

/// Many tables write at once: group commit keeps every write, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_tables_lose_nothing() {
    for db in TestDb::all().await {
        let journal = Arc::new(db.open().await);
        let mut tasks = Vec::new();
        for t in 0..40u64 {
            let journal = Arc::clone(&journal);
            tasks.push(tokio::spawn(async move {
                let id = Uuid::new_v4();
                let rec = table_record(id, t);
                journal.create_table(&rec).await.unwrap();
                journal.seats(id, &seats()).await.unwrap();
                journal.start(id, t).await.unwrap();
                let m = play(&journal, id, rec.options.rules, t, 60).await;
                (id, m)
            }));
        }
        for task in tasks {
            let (id, m) = task.await.unwrap();
            let stored = journal.get(id).await.unwrap().unwrap();
            let moves: Vec<Move> =
                stored.actions.iter().map(|a| Move { seat: a.seat, action: a.action }).collect();
            assert_eq!(moves, m.moves(), "{}", journal.kind());
        }
        assert_eq!(journal.unfinished().await.unwrap().len(), 40);
        drop(journal);
        db.cleanup().await;
    }
}

/// Corrupt or foreign rows are reported by name and do not stop the other
/// tables from loading.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_rows_are_reported_and_the_rest_load() {
    for db in TestDb::all().await {
        let journal = db.open().await;
        let mut ids = Vec::new();
        for n in 0..5u64 {
            let id = Uuid::new_v4();
            let rec = table_record(id, n);
            journal.create_table(&rec).await.unwrap();
            journal.seats(id, &seats()).await.unwrap();
            journal.start(id, n).await.unwrap();
            play(&journal, id, rec.options.rules, n, 20).await;
            ids.push(id);
        }
        let sql = journal.sql().unwrap();
        // 1: an unknown action kind; 2: a gap in the log; 3: a move the
        // rules refuse; 4: unreadable options. 0 stays good.
        execute_raw(
            sql,
            &format!("UPDATE actions SET kind = 'double' WHERE table_id = '{}' AND idx = 5", ids[1]),
        )
        .await
        .unwrap();
        execute_raw(sql, &format!("DELETE FROM actions WHERE table_id = '{}' AND idx = 7", ids[2]))
            .await
            .unwrap();
        // (the card of move 12 becomes the card played at move 4: well
        // formed, but no longer in that hand)
        execute_raw(
            sql,
            &format!(
                "UPDATE actions SET value = (SELECT a.value FROM actions a WHERE a.table_id = '{0}' AND a.idx = 4) \
                 WHERE table_id = '{0}' AND idx = 12",
                ids[3]
            ),
        )
        .await
        .unwrap();
        execute_raw(sql, &format!("UPDATE tables SET options = '{{\"colour\":1}}' WHERE id = '{}'", ids[4]))
            .await
            .unwrap();
        let entries = journal.unfinished().await.unwrap();
        assert_eq!(entries.len(), 5);
        let errors: Vec<String> =
            entries.iter().filter_map(|e| e.as_ref().err().map(ToString::to_string)).collect();
        assert!(errors.iter().any(|e| e.contains(&ids[1].to_string()) && e.contains("double")), "{errors:?}");
        assert!(errors.iter().any(|e| e.contains(&ids[2].to_string()) && e.contains("gap")), "{errors:?}");
        assert!(
            errors.iter().any(|e| e.contains(&ids[4].to_string()) && e.contains("options")),
            "{errors:?}"
        );
        // Table 3 reads, but its log does not replay.
        let good: Vec<_> = entries.into_iter().filter_map(Result::ok).collect();
        assert_eq!(good.len(), 2);
        let replay_err =
            good.iter().find(|t| t.table.id == ids[3]).map(spades_server::record::restore).unwrap();
        match replay_err {
            Err(StorageError::Corrupt { reason, .. }) => {
                assert!(reason.contains("does not replay"), "{reason}")
            }
            other => panic!("expected a corrupt record, got {other:?}"),
        }
        // The server loads the good table and skips the four others.
        let shutdown = tokio_util::sync::CancellationToken::new();
        let hosting = spades_server::hosting::Hosting::new(
            &spades_server::Config::default(),
            journal.clone(),
            shutdown.clone(),
            tokio_util::task::TaskTracker::new(),
            None,
        );
        let (restored, skipped) = hosting.restore_all().await;
        assert_eq!((restored, skipped), (1, 4));
        assert!(hosting.get(&ids[0]).is_some());
        shutdown.cancel();
        drop(hosting);
        drop(journal);
        db.cleanup().await;
    }
}

/// Creates a table with seats and a started match.
async fn started(journal: &Journal, created: u64, seed: u64) -> (Uuid, TableRecord) {
    let id = Uuid::new_v4();
    let rec = table_record(id, created);
    journal.create_table(&rec).await.unwrap();
    journal.seats(id, &seats()).await.unwrap();
    journal.start(id, seed).await.unwrap();
    (id, rec)
}

fn first_action(rules: Rules, seed: u64) -> (Seat, Action, Action) {
    let m = Match::new(rules, seed);
    (m.turn().unwrap(), Action::Bid(3), Action::Bid(4))
}

async fn idempotent_writes(journal: &Journal) {
    let kind = journal.kind();
    let (id, rec) = started(journal, 1, 9).await;
    // Every write may be repeated.
    journal.create_table(&rec).await.unwrap();
    journal.seats(id, &seats()).await.unwrap();
    journal.start(id, 9).await.unwrap();
    let (seat, bid, other) = first_action(rec.options.rules, 9);
    let first = ActionRecord { index: 0, seat, action: bid, source: ActionSource::Player, at_ms: 5, seq: 0 };
    journal.append(id, first).await.unwrap();
    // The same seat and action again, from another source and time: success.
    journal.append(id, ActionRecord { source: ActionSource::Timeout, at_ms: 99, ..first }).await.unwrap();
    journal.append(id, first).await.unwrap();
    let stored = journal.get(id).await.unwrap().unwrap();
    assert_eq!(stored.actions, vec![first], "{kind}: one row, as first written");
    // A different action, or another seat, at that index: a conflict.
    for clash in [ActionRecord { action: other, ..first }, ActionRecord { seat: seat.next(), ..first }] {
        let e = journal.append(id, clash).await.unwrap_err();
        assert!(e.is_conflict(), "{kind}: {e}");
        assert!(matches!(e, StorageError::Conflict { table, index: 0 } if table == id), "{kind}: {e:?}");
    }
    assert!(!StorageError::Database("x".into()).is_conflict());
    assert_eq!(journal.get(id).await.unwrap().unwrap().actions, vec![first], "{kind}: the log is unchanged");
    // Hands, finish and close repeated: no duplicate, no error.
    let mut m = Match::new(rec.options.rules, 9);
    m.apply(first.seat, first.action).unwrap();
    let m = play_on(journal, id, m, usize::MAX).await;
    let end = *m.result().unwrap();
    for h in m.results() {
        journal.hand(id, h).await.unwrap();
    }
    journal.finish(id, &end).await.unwrap();
    let stored = journal.get(id).await.unwrap().unwrap();
    assert_eq!(stored.hands, m.results(), "{kind}: each hand once");
    assert_eq!(stored.result, Some(end));
    let summary = journal.recent_summaries(1).await.unwrap();
    assert_eq!(summary[0].hands_played, m.results().len(), "{kind}: repeated hands are counted once");
    journal.close(id).await.unwrap();
    journal.close(id).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_are_idempotent_and_a_different_action_is_a_conflict() {
    idempotent_writes(&Journal::memory()).await;
    for db in TestDb::all().await {
        let journal = db.open().await;
        idempotent_writes(&journal).await;
        drop(journal);
        db.cleanup().await;
    }
}

/// One batch holding a write that fails (an action for a table that does
/// not exist: a foreign key error), a conflicting action and good writes
/// for other tables: only the two bad ones fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_write_fails_alone_in_its_batch() {
    for db in TestDb::all().await {
        let journal =
            db.open_with(StoreOptions { write_timeout: Duration::from_secs(20), ..Default::default() }).await;
        let kind = journal.kind();
        let rules = table_record(Uuid::nil(), 0).options.rules;
        let mut tables = Vec::new();
        for n in 0..8u64 {
            tables.push(started(&journal, n, n).await.0);
        }
        let t0 = tables[0];
        // Table 0 has its first move stored: the conflicting write will
        // put another action there.
        let (seat0, bid0, other0) = first_action(rules, 0);
        let first = ActionRecord {
            index: 0,
            seat: seat0,
            action: bid0,
            source: ActionSource::Player,
            at_ms: 1,
            seq: 0,
        };
        journal.append(tables[0], first).await.unwrap();
        // Hold the write lock so that everything queues up behind the
        // first write and is committed as one batch.
        let lock = db.lock().await;
        let blocker = {
            let journal = journal.clone();
            let (id, seat) = (tables[7], first_action(rules, 7).0);
            tokio::spawn(async move {
                journal
                    .append(
                        id,
                        ActionRecord {
                            index: 0,
                            seat,
                            action: Action::Bid(1),
                            source: ActionSource::Bot,
                            at_ms: 1,
                            seq: 0,
                        },
                    )
                    .await
            })
        };
        tokio::time::sleep(Duration::from_millis(150)).await;
        let mut tasks = Vec::new();
        let poisoned = Uuid::new_v4();
        let seat = first_action(rules, 1).0;
        let bad = ActionRecord {
            index: 0,
            seat,
            action: Action::Bid(2),
            source: ActionSource::Player,
            at_ms: 2,
            seq: 0,
        };
        tasks.push((
            poisoned,
            tokio::spawn({
                let journal = journal.clone();
                async move { journal.append(poisoned, bad).await }
            }),
        ));
        tasks.push((
            tables[0],
            tokio::spawn({
                let journal = journal.clone();
                async move { journal.append(t0, ActionRecord { action: other0, ..first }).await }
            }),
        ));
        for &id in &tables[1..7] {
            let n = tables.iter().position(|t| *t == id).unwrap() as u64;
            let seat = first_action(rules, n).0;
            let journal = journal.clone();
            tasks.push((
                id,
                tokio::spawn(async move {
                    journal
                        .append(
                            id,
                            ActionRecord {
                                index: 0,
                                seat,
                                action: Action::Bid(2),
                                source: ActionSource::Bot,
                                at_ms: 3,
                                seq: 0,
                            },
                        )
                        .await
                }),
            ));
        }
        let epoch_task = tokio::spawn({
            let journal = journal.clone();
            let id = tables[3];
            async move { journal.bump_epoch(id).await }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        lock.release().await;
        blocker.await.unwrap().unwrap();
        for (id, task) in tasks {
            let result = task.await.unwrap();
            if id == poisoned {
                assert!(matches!(result, Err(StorageError::Database(_))), "{kind}: {result:?}");
            } else if id == tables[0] {
                assert!(matches!(result, Err(StorageError::Conflict { index: 0, .. })), "{kind}: {result:?}");
            } else {
                result.unwrap_or_else(|e| panic!("{kind}: a good write failed with the bad ones: {e}"));
                assert_eq!(journal.get(id).await.unwrap().unwrap().actions.len(), 1, "{kind}");
            }
        }
        assert_eq!(epoch_task.await.unwrap().unwrap(), 1, "{kind}");
        assert_eq!(journal.get(tables[0]).await.unwrap().unwrap().actions, vec![first], "{kind}");
        assert!(journal.get(poisoned).await.unwrap().is_none());
        drop(journal);
        db.cleanup().await;
    }
}

/// A write's caller is answered within the write timeout while another
/// connection holds the database locked; the write commits once the lock
/// is gone, and retrying it is harmless.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_database_answers_within_the_write_timeout() {
    for db in TestDb::all().await {
        let timeout = Duration::from_millis(400);
        let journal = db.open_with(StoreOptions { write_timeout: timeout, ..Default::default() }).await;
        let kind = journal.kind();
        let (id, rec) = started(&journal, 1, 4).await;
        let (seat, bid, _) = first_action(rec.options.rules, 4);
        let action =
            ActionRecord { index: 0, seat, action: bid, source: ActionSource::Player, at_ms: 1, seq: 0 };
        let lock = db.lock().await;
        let began = Instant::now();
        let e = journal.append(id, action).await.unwrap_err();
        let took = began.elapsed();
        assert!(matches!(&e, StorageError::Database(m) if m.contains("timed out")), "{kind}: {e}");
        assert!(
            took >= timeout && took < timeout + Duration::from_millis(600),
            "{kind}: answered after {took:?}"
        );
        // Reads are on other connections: the list still answers.
        assert_eq!(journal.recent_summaries(5).await.unwrap().len(), 1, "{kind}");
        lock.release().await;
        // The retry succeeds (the first attempt may have committed by now).
        journal.append(id, action).await.unwrap();
        assert_eq!(journal.get(id).await.unwrap().unwrap().actions, vec![action], "{kind}");
        drop(journal);
        db.cleanup().await;
    }
}

async fn epochs(journal: &Journal) {
    let kind = journal.kind();
    let (id, _) = started(journal, 1, 1).await;
    assert_eq!(journal.get(id).await.unwrap().unwrap().epoch, 0, "{kind}");
    assert_eq!(journal.bump_epoch(id).await.unwrap(), 1, "{kind}");
    assert_eq!(journal.bump_epoch(id).await.unwrap(), 2, "{kind}");
    assert_eq!(journal.get(id).await.unwrap().unwrap().epoch, 2, "{kind}");
    assert!(journal.bump_epoch(Uuid::new_v4()).await.is_err(), "{kind}: no such table");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_epoch_grows_and_survives_a_reopen() {
    epochs(&Journal::memory()).await;
    for db in TestDb::all().await {
        let journal = db.open().await;
        epochs(&journal).await;
        let id = journal.unfinished().await.unwrap()[0].as_ref().unwrap().table.id;
        drop(journal);
        let journal = db.open().await;
        let kind = journal.kind();
        let stored = journal.unfinished().await.unwrap().remove(0).unwrap();
        assert_eq!(stored.epoch, 2, "{kind}: the epoch is durable");
        assert_eq!(journal.bump_epoch(id).await.unwrap(), 3, "{kind}");
        drop(journal);
        db.cleanup().await;
    }
}

fn absent_seats() -> BySeat<Option<SeatRecord>> {
    let mut s = seats();
    let north = s[Seat::North].as_mut().unwrap();
    north.autopilot = true;
    north.timeouts = 3;
    north.grace_expired = true;
    let east = s[Seat::East].as_mut().unwrap();
    east.timeouts = 255;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seat_absence_state_round_trips() {
    let memory = Journal::memory();
    let (id, _) = started(&memory, 1, 1).await;
    memory.seats(id, &absent_seats()).await.unwrap();
    assert_eq!(memory.get(id).await.unwrap().unwrap().seats, absent_seats());
    for db in TestDb::all().await {
        let journal = db.open().await;
        let (id, _) = started(&journal, 1, 1).await;
        journal.seats(id, &absent_seats()).await.unwrap();
        assert_eq!(journal.get(id).await.unwrap().unwrap().seats, absent_seats(), "{}", journal.kind());
        drop(journal);
        let journal = db.open().await;
        assert_eq!(
            journal.get(id).await.unwrap().unwrap().seats,
            absent_seats(),
            "{} reopened",
            journal.kind()
        );
        // And back to present.
        journal.seats(id, &seats()).await.unwrap();
        assert_eq!(journal.get(id).await.unwrap().unwrap().seats, seats());
        drop(journal);
        db.cleanup().await;
    }
    // Records written before these fields existed still read.
    let old: SeatRecord =
        serde_json::from_str(r#"{"name":"a","kind":"bot","token_hash":null,"left":false}"#).unwrap();
    assert!(!old.autopilot && old.timeouts == 0 && !old.grace_expired);
}

/// Several matches: finished, running at different points, started without
/// a move, with a seat left and with no seats at all, and one never
/// started (not listed).
async fn some_matches(journal: &Journal) -> Vec<Uuid> {
    let rules = table_record(Uuid::nil(), 0).options.rules;
    let mut ids = Vec::new();
    for (n, moves) in [(0u64, usize::MAX), (1, 130), (2, 0), (3, 7), (4, 60)] {
        let (id, _) = started(journal, 100 + n, n).await;
        let m = play(journal, id, rules, n, moves).await;
        assert_eq!(m.result().is_some(), moves == usize::MAX);
        ids.push(id);
    }
    let mut left = seats();
    left[Seat::West].as_mut().unwrap().left = true;
    journal.seats(ids[3], &left).await.unwrap();
    // Started with no seats stored (an old record): listed with none.
    let bare = Uuid::new_v4();
    journal.create_table(&table_record(bare, 50)).await.unwrap();
    journal.start(bare, 1).await.unwrap();
    // Never started: not listed.
    journal.create_table(&table_record(Uuid::new_v4(), 200)).await.unwrap();
    ids.push(bare);
    ids
}

async fn summaries_match_replay(journal: &Journal) {
    let kind = journal.kind();
    some_matches(journal).await;
    for limit in [1, 3, 6, 20] {
        let replayed: Vec<_> =
            journal.recent(limit).await.unwrap().iter().map(spades_server::record::summary).collect();
        let listed = journal.recent_summaries(limit).await.unwrap();
        assert_eq!(listed, replayed, "{kind}, limit {limit}");
        assert_eq!(listed.len(), limit.min(6), "{kind}");
    }
    let all = journal.recent_summaries(20).await.unwrap();
    assert!(all[4].finished && all[4].result.is_some() && all[4].hands_played >= 5, "{kind}: {:?}", all[4]);
    assert!(all[3].hands_played >= 2 && all[3].scores != [0, 0], "{kind}: {:?}", all[3]);
    assert!(all[1].seats[3].left, "{kind}");
    assert!(all[5].seats.is_empty(), "{kind}");
    summaries_page(journal, &all).await;
}

/// The match list a page at a time, and only the finished matches or only
/// the others: `all` is the whole list of [`some_matches`].
async fn summaries_page(journal: &Journal, all: &[spades_protocol::MatchSummary]) {
    let kind = journal.kind();
    let page = |limit, finished, before| MatchPage { limit, finished, before, account: None };
    let first = journal.summaries(&page(4, None, None)).await.unwrap();
    let rest = journal.summaries(&page(4, None, Some(first[3].table))).await.unwrap();
    assert_eq!([first, rest].concat(), all, "{kind}: two pages are the whole list");
    let over = journal.summaries(&page(20, Some(true), None)).await.unwrap();
    assert_eq!(over, vec![all[4].clone()], "{kind}: only the finished match");
    let others = journal.summaries(&page(20, Some(false), None)).await.unwrap();
    assert_eq!(others, [&all[..4], &all[5..]].concat(), "{kind}: every other");
    // Finished ones beyond a page of unfinished ones are still found.
    let newer = journal.summaries(&page(1, Some(true), Some(all[0].table))).await.unwrap();
    assert_eq!(newer, vec![all[4].clone()], "{kind}");
    assert!(journal.summaries(&page(20, None, Some(all[5].table))).await.unwrap().is_empty(), "{kind}");
    let unknown = page(20, None, Some(Uuid::new_v4()));
    assert!(journal.summaries(&unknown).await.unwrap().is_empty(), "{kind}: after no match, nothing");
    // Two matches begun in the same millisecond: paged by id, both once.
    let (a, _) = started(journal, 30, 7).await;
    let (b, _) = started(journal, 30, 8).await;
    let (high, low) = if a > b { (a, b) } else { (b, a) };
    let tail = journal.summaries(&page(1, None, Some(all[5].table))).await.unwrap();
    assert_eq!(tail.iter().map(|m| m.table).collect::<Vec<_>>(), [high], "{kind}");
    let last = journal.summaries(&page(1, None, Some(high))).await.unwrap();
    assert_eq!(last.iter().map(|m| m.table).collect::<Vec<_>>(), [low], "{kind}");
    assert!(journal.summaries(&page(1, None, Some(low))).await.unwrap().is_empty(), "{kind}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recent_summaries_equal_the_replayed_summaries() {
    summaries_match_replay(&Journal::memory()).await;
    for db in TestDb::all().await {
        let journal = db.open().await;
        summaries_match_replay(&journal).await;
        // The migration's backfill computes the same summary columns
        // from the stored hands.
        let sql = journal.sql().unwrap();
        execute_raw(sql, "UPDATE tables SET hands_played = 0, score_ns = 0, score_ew = 0").await.unwrap();
        assert_ne!(
            journal.recent_summaries(20).await.unwrap(),
            journal.recent(20).await.unwrap().iter().map(spades_server::record::summary).collect::<Vec<_>>()
        );
        let migration = if journal.kind() == "sqlite" {
            include_str!("../../../migrations/sqlite/20261201000000_resilience.sql")
        } else {
            include_str!("../../../migrations/postgres/20261201000000_resilience.sql")
        };
        let start = migration.find("UPDATE tables SET").unwrap();
        let end = start + migration[start..].find(';').unwrap();
        execute_raw(sql, &migration[start..=end]).await.unwrap();
        let replayed: Vec<_> =
            journal.recent(20).await.unwrap().iter().map(spades_server::record::summary).collect();
        assert_eq!(journal.recent_summaries(20).await.unwrap(), replayed, "{} backfilled", journal.kind());
        drop(journal);
        db.cleanup().await;
    }
}

/// Calls the operation of kind `op` once; `Ok` when it succeeded.
async fn call(journal: &Journal, op: Op, id: Uuid) -> Result<(), StorageError> {
    let rules = table_record(Uuid::nil(), 0).options.rules;
    match op {
        Op::Table => journal.create_table(&table_record(id, 1)).await,
        Op::Seats => journal.seats(id, &absent_seats()).await,
        Op::Start => journal.start(id, 77).await,
        Op::Action => {
            let m = Match::new(rules, 77);
            let seat = m.turn().unwrap();
            journal
                .append(
                    id,
                    ActionRecord {
                        index: 0,
                        seat,
                        action: Action::Bid(3),
                        source: ActionSource::Player,
                        at_ms: 1,
                        seq: 0,
                    },
                )
                .await
        }
        Op::Hand => {
            let mut m = Match::new(rules, 77);
            while m.results().is_empty() {
                let seat = m.turn().unwrap();
                let action = match m.legal_moves() {
                    Legal::Bid { .. } => Action::Bid(3),
                    Legal::Play { cards } => Action::Play(cards.first().unwrap()),
                    Legal::None => unreachable!(),
                };
                m.apply(seat, action).unwrap();
            }
            journal.hand(id, &m.results()[0]).await
        }
        Op::Finish => {
            let end = spades_engine::MatchResult {
                outcome: spades_engine::Outcome::Draw,
                reason: spades_engine::EndReason::HandCap,
                scores: spades_engine::ByTeam([0, 0]),
                hands_played: 99,
            };
            journal.finish(id, &end).await
        }
        Op::Close => journal.close(id).await,
        Op::Epoch => journal.bump_epoch(id).await.map(drop),
        Op::Chat => journal.chat(said(id, 1)).await,
        Op::Read => journal.get(id).await.map(drop),
    }
}

/// Whether the effect of `op` (see [`call`]) is in the log.
async fn written(plain: &Journal, op: Op, id: Uuid) -> bool {
    let Some(t) = plain.get(id).await.unwrap() else { return op == Op::Close };
    match op {
        Op::Table | Op::Read => true,
        Op::Seats => t.seats == absent_seats(),
        Op::Start => t.seed == Some(77),
        Op::Action => t.actions.len() == 1,
        Op::Hand => t.hands.len() == 1,
        Op::Finish => t.result.is_some(),
        Op::Close => plain.unfinished().await.unwrap().iter().all(|u| u.as_ref().unwrap().table.id != id),
        Op::Epoch => t.epoch == 1,
        Op::Chat => plain.accounts().chat().at_table(id, None, 10).await.unwrap() == [said(id, 1)],
    }
}

/// Chat message `n` said at `table`.
fn said(table: Uuid, n: u64) -> spades_server::storage::ChatRow {
    spades_server::storage::ChatRow {
        table,
        id: n,
        account: None,
        seat: Some(Seat::North),
        name: "Ann".into(),
        text: format!("message {n}"),
        at_ms: 1_000 + n,
        removed_at_ms: None,
    }
}

const OPS: [Op; 10] = [
    Op::Table,
    Op::Seats,
    Op::Start,
    Op::Action,
    Op::Hand,
    Op::Finish,
    Op::Close,
    Op::Epoch,
    Op::Chat,
    Op::Read,
];

async fn faults_do_what_they_say(plain: Journal) {
    let kind = plain.kind();
    let (journal, faults): (Journal, Faults) = plain.clone().with_faults();
    let injected = |e: &StorageError| matches!(e, StorageError::Database(m) if m == "injected failure");
    for (n, op) in OPS.into_iter().enumerate() {
        // Once: that operation fails and writes nothing; the next succeeds.
        let id = Uuid::new_v4();
        if op != Op::Table {
            plain.create_table(&table_record(id, n as u64)).await.unwrap();
        }
        faults.fail_once(op);
        // Other kinds are not affected.
        let other = if op == Op::Read { Op::Epoch } else { Op::Read };
        if op != Op::Table {
            call(&journal, other, id).await.unwrap();
        }
        let e = call(&journal, op, id).await.unwrap_err();
        assert!(injected(&e), "{kind} {op:?}: {e}");
        if op == Op::Read {
            // The epoch was bumped above by the unaffected operation.
            assert_eq!(plain.get(id).await.unwrap().unwrap().epoch, 1);
        } else {
            assert!(!written(&plain, op, id).await, "{kind} {op:?}: written");
        }
        call(&journal, op, id).await.unwrap_or_else(|e| panic!("{kind} {op:?} after the failure: {e}"));
        assert!(written(&plain, op, id).await, "{kind} {op:?}: not written after the failure");

        // After commit: reported failed, yet written.
        let id = Uuid::new_v4();
        if op != Op::Table {
            plain.create_table(&table_record(id, n as u64)).await.unwrap();
        }
        faults.fail_after_commit(op);
        let e = call(&journal, op, id).await.unwrap_err();
        assert!(injected(&e), "{kind} {op:?}: {e}");
        assert!(written(&plain, op, id).await, "{kind} {op:?}: the row is there although the call failed");
        if op != Op::Epoch && op != Op::Read {
            // Repeating it is harmless.
            call(&journal, op, id).await.unwrap();
            assert!(written(&plain, op, id).await, "{kind} {op:?}");
        }
    }
    assert_eq!(faults.injected(), 2 * OPS.len() as u64, "{kind}");

    // For a duration, one kind: it fails until the time is up, others work.
    let (id, _) = started(&plain, 500, 77).await;
    faults.fail_for(Some(Op::Action), Duration::from_millis(300));
    assert!(injected(&call(&journal, Op::Action, id).await.unwrap_err()));
    assert!(injected(&call(&journal, Op::Action, id).await.unwrap_err()));
    call(&journal, Op::Seats, id).await.unwrap();
    assert!(journal.ping().await, "{kind}: one kind failing leaves the store up");
    tokio::time::sleep(Duration::from_millis(350)).await;
    call(&journal, Op::Action, id).await.unwrap();
    assert!(written(&plain, Op::Action, id).await);

    // For a duration, everything: reads too, and ping reports down.
    faults.fail_for(None, Duration::from_millis(300));
    assert!(!journal.ping().await, "{kind}");
    for op in [Op::Read, Op::Start, Op::Epoch] {
        assert!(injected(&call(&journal, op, id).await.unwrap_err()), "{kind} {op:?}");
    }
    assert_eq!(plain.get(id).await.unwrap().unwrap().epoch, 0, "{kind}: nothing written");
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert!(journal.ping().await, "{kind}");
    call(&journal, Op::Read, id).await.unwrap();

    // Clear cancels whatever is pending.
    let before = faults.injected();
    faults.fail_once(Op::Read);
    faults.fail_after_commit(Op::Seats);
    faults.fail_for(None, Duration::from_secs(60));
    faults.clear();
    assert!(journal.ping().await);
    call(&journal, Op::Read, id).await.unwrap();
    call(&journal, Op::Seats, id).await.unwrap();
    assert_eq!(faults.injected(), before, "{kind}");
    // The plain journal never sees the faults.
    faults.fail_for(None, Duration::from_secs(60));
    assert!(plain.ping().await);
    plain.get(id).await.unwrap();
    // Clones share them.
    assert!(!journal.clone().ping().await);
    faults.clear();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_faults_once_for_a_while_and_after_commit() {
    faults_do_what_they_say(Journal::memory()).await;
    for db in TestDb::all().await {
        faults_do_what_they_say(db.open().await).await;
        db.cleanup().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn database_errors_never_show_a_password() {
    assert_eq!(
        db_location("postgres://spades:hunter2@db.example:5432/spades?sslmode=require"),
        "postgres://db.example:5432/spades"
    );
    assert_eq!(db_location("postgresql://db:5432/x"), "postgresql://db:5432/x");
    assert_eq!(
        db_location("sqlite:///var/lib/spades/spades.db?mode=rwc"),
        "sqlite:///var/lib/spades/spades.db"
    );
    assert_eq!(db_location("sqlite:spades.db"), "sqlite:spades.db");
    let options = StoreOptions { acquire_timeout: Duration::from_millis(300), ..Default::default() };
    let url = "postgres://spades:hunter2@127.0.0.1:1/spades";
    let e = Journal::open_with(url, &std::env::temp_dir(), options).await.unwrap_err();
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(shown.contains("127.0.0.1:1/spades"), "{shown}");
}

/// Reads that hang (here: waiting on a lock of `hands`, which every full
/// read touches) and outnumber the read connections do not hold up the
/// writer: it has connections of its own. PostgreSQL only (SQLite readers
/// never wait on locks).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hanging_reads_do_not_starve_writes() {
    let Some(db) = TestDb::postgres().await else { return };
    let journal = db.open().await;
    let (id, rec) = started(&journal, 1, 4).await;
    let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::raw_sql("BEGIN; LOCK TABLE hands IN ACCESS EXCLUSIVE MODE").execute(&mut c).await.unwrap();
    let reads: Vec<_> = (0..20)
        .map(|_| {
            let journal = journal.clone();
            tokio::spawn(async move { journal.get(id).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(reads.iter().all(|r| !r.is_finished()), "the reads wait on the lock");
    let (seat, bid, _) = first_action(rec.options.rules, 4);
    let action = ActionRecord { index: 0, seat, action: bid, source: ActionSource::Player, at_ms: 1, seq: 0 };
    let began = Instant::now();
    tokio::time::timeout(Duration::from_secs(2), journal.append(id, action))
        .await
        .expect("the write is answered while every read connection is busy")
        .unwrap();
    assert!(began.elapsed() < Duration::from_secs(2));
    sqlx::raw_sql("ROLLBACK").execute(&mut c).await.unwrap();
    c.close().await.unwrap();
    for r in reads {
        // (those that waited for a connection longer than the acquire
        // timeout fail; the others read the table)
        if let Ok(t) = r.await.unwrap() {
            assert!(t.is_some());
        }
    }
    assert_eq!(journal.get(id).await.unwrap().unwrap().actions, vec![action]);
    drop(journal);
    db.cleanup().await;
}

/// A database that cannot be reached or opened fails within the acquire
/// timeout, and the error names what failed: the host and port, the file,
/// the directory; never a password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_databases_fail_fast_and_say_where() {
    let options = StoreOptions { acquire_timeout: Duration::from_secs(1), ..Default::default() };
    // PostgreSQL where nothing listens.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("postgres://spades:s3cret-pw@127.0.0.1:{port}/spades");
    let began = Instant::now();
    let e = Journal::open_with(&url, &std::env::temp_dir(), options).await.unwrap_err().to_string();
    assert!(began.elapsed() < Duration::from_secs(3), "took {:?}", began.elapsed());
    assert!(e.contains(&format!("connecting to postgres://127.0.0.1:{port}/spades")), "{e}");
    assert!(!e.contains("s3cret-pw"), "{e}");

    // A SQLite file in a directory that does not exist.
    let missing = std::env::temp_dir().join(format!("spades-missing-{}", Uuid::new_v4().simple()));
    let file = missing.join("deeper").join("spades.db");
    let began = Instant::now();
    let e = Journal::open_with(&format!("sqlite://{}", file.display()), &std::env::temp_dir(), options)
        .await
        .unwrap_err()
        .to_string();
    assert!(began.elapsed() < Duration::from_secs(3), "took {:?}", began.elapsed());
    assert!(e.contains(&file.display().to_string()), "names the file: {e}");
    assert!(!missing.exists());

    // A data directory that cannot be made (a file is in the way).
    let blocker = std::env::temp_dir().join(format!("spades-blocker-{}", Uuid::new_v4().simple()));
    std::fs::write(&blocker, b"not a directory").unwrap();
    let e = Journal::open_with("", &blocker.join("data"), options).await.unwrap_err().to_string();
    assert!(e.contains(&blocker.join("data").display().to_string()), "names the directory: {e}");
    std::fs::remove_file(&blocker).unwrap();
}

/// A read that hangs (on a lock that every full read touches) fails after
/// the read timeout, naming the database, instead of waiting for the
/// lock; the readiness ping does not wait on it. PostgreSQL only (SQLite
/// readers never wait on locks).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_read_fails_after_the_read_timeout() {
    let Some(db) = TestDb::postgres().await else { return };
    let options = StoreOptions { read_timeout: Duration::from_millis(500), ..Default::default() };
    let journal = db.open_with(options).await;
    let (id, _) = started(&journal, 1, 4).await;
    let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::raw_sql("BEGIN; LOCK TABLE hands IN ACCESS EXCLUSIVE MODE").execute(&mut c).await.unwrap();
    let began = Instant::now();
    let e = tokio::time::timeout(Duration::from_secs(5), journal.get(id))
        .await
        .expect("the read gives up by itself")
        .unwrap_err()
        .to_string();
    let took = began.elapsed();
    assert!(took >= Duration::from_millis(450) && took < Duration::from_secs(2), "{took:?}");
    assert!(e.contains("no answer within 500 ms"), "{e}");
    assert!(e.contains(&db_location(&db.url)), "names the database: {e}");
    // The tables restored at start-up: the one that cannot be read is an
    // error beside the others, in time.
    let began = Instant::now();
    let rows = journal.unfinished().await.unwrap();
    assert!(began.elapsed() < Duration::from_secs(2));
    let e = rows.iter().find_map(|r| r.as_ref().err()).expect("the locked table fails").to_string();
    assert!(e.contains("no answer within 500 ms"), "{e}");
    assert!(journal.ping().await, "the ping touches no table");
    sqlx::raw_sql("ROLLBACK").execute(&mut c).await.unwrap();
    c.close().await.unwrap();
    assert!(journal.get(id).await.unwrap().is_some());
    drop(journal);
    db.cleanup().await;
}

/// Under load the writer commits at most once per `commit_interval`, each
/// commit taking every write queued meanwhile; a write after a quiet spell
/// is not held back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_are_paced_by_the_commit_interval() {
    for db in TestDb::all().await {
        let interval = Duration::from_millis(1500);
        let journal = Arc::new(
            db.open_with(StoreOptions { commit_interval: interval, ..StoreOptions::default() }).await,
        );
        let kind = journal.kind();
        // A write after a quiet spell commits at once; returns when it began.
        let quiet_write = async |created| {
            let began = Instant::now();
            journal.create_table(&table_record(Uuid::new_v4(), created)).await.unwrap();
            let waited = began.elapsed();
            assert!(waited < interval / 2, "{kind}: a write after a quiet spell waited {waited:?}");
            began
        };
        let started = quiet_write(1).await;
        // A burst right behind it waits for the rest of the interval, and
        // then every write of it commits.
        let burst: Vec<_> = (0..40u64)
            .map(|t| {
                let journal = Arc::clone(&journal);
                tokio::spawn(async move {
                    let id = Uuid::new_v4();
                    journal.create_table(&table_record(id, t)).await.map(|()| id)
                })
            })
            .collect();
        let mut ids = Vec::new();
        for task in burst {
            ids.push(task.await.unwrap().unwrap());
        }
        assert!(started.elapsed() >= interval, "{kind}: the burst committed after {:?}", started.elapsed());
        for id in ids {
            assert!(journal.get(id).await.unwrap().is_some(), "{kind}: {id} was not stored");
        }
        // Quiet again: at once.
        tokio::time::sleep(interval * 2).await;
        quiet_write(99).await;
        drop(journal);
        db.cleanup().await;
    }
}

/// The SQLite files hold a running match's server seed and the seats'
/// token hashes: the data directory is this user's only (0700), and so are
/// the database and its WAL and shared-memory files (0600), also when the
/// directory was there before with looser modes.
#[cfg(unix)]
#[tokio::test]
async fn the_sqlite_files_are_private_to_the_server_user() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("spades-private-{}", Uuid::new_v4().simple()));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    for existing in [false, true] {
        if existing {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::set_permissions(dir.join("spades.db"), std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let journal = Journal::open("", &dir).await.unwrap();
        let id = Uuid::new_v4();
        journal.create_table(&table_record(id, 1)).await.unwrap();
        assert_eq!(mode(&dir), 0o700, "the data directory");
        for name in ["spades.db", "spades.db-wal", "spades.db-shm"] {
            let path = dir.join(name);
            assert!(path.exists(), "{name}");
            assert_eq!(mode(&path), 0o600, "{name}");
        }
        drop(journal);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

async fn passwords_kept(store: &spades_server::storage::AccountStore, account: Uuid) -> bool {
    store.passwords().get(account).await.unwrap().is_some()
}

/// Accounts on each database: a guest with its name and device, names
/// taken (and taken at once by racing requests: one wins), a rename that
/// keeps the old name, sessions found, renewed, listed and deleted,
/// expired ones swept, a password; everything still there after a reopen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_names_and_sessions_round_trip() {
    use spades_server::storage::{Created, NewGuest, Rename, Renamed, SessionRow, SessionsOf};
    for db in TestDb::all().await {
        let journal = db.open().await;
        let store = journal.accounts();
        let ann = Uuid::new_v4();
        let guest =
            |id, name, skeleton, device| NewGuest { id, name, skeleton, device_hash: device, now_ms: 1_000 };
        assert_eq!(store.create_guest(&guest(ann, "Ann", "ann", "d1")).await.unwrap(), Created::Made);
        assert_eq!(store.device_account("d1").await.unwrap().unwrap().name, "Ann");
        assert_eq!(store.device_account("nope").await.unwrap(), None);
        match store.create_guest(&guest(Uuid::new_v4(), "ANN", "ann", "d2")).await.unwrap() {
            Created::NameTaken(holder) => {
                assert_eq!((holder.account, holder.name.as_str(), holder.kept_until_ms), (ann, "Ann", None));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(store.device_account("d2").await.unwrap(), None, "a refused account leaves nothing");
        assert_eq!(
            store.create_guest(&guest(Uuid::new_v4(), "Zed", "zed", "d1")).await.unwrap(),
            Created::DeviceKnown
        );
        assert_eq!(store.name_holder("zed", 1_000).await.unwrap(), None, "rolled back with the device");
        // Eight requests race for one name: exactly one account has it.
        let racers: Vec<_> = (0..8)
            .map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    let device = format!("race{i}");
                    let new = NewGuest {
                        id: Uuid::new_v4(),
                        name: "Bo",
                        skeleton: "bo",
                        device_hash: &device,
                        now_ms: 1_000,
                    };
                    store.create_guest(&new).await.unwrap()
                })
            })
            .collect();
        let mut made = 0;
        for r in racers {
            match r.await.unwrap() {
                Created::Made => made += 1,
                Created::NameTaken(h) => assert_eq!(h.name, "Bo"),
                Created::DeviceKnown => panic!("each racer has its own device"),
            }
        }
        assert_eq!(made, 1, "{}", journal.kind());

        // A rename keeps the old name for Ann until 5_000.
        let rename = |name, skeleton, old, now_ms| Rename {
            account: ann,
            name,
            skeleton,
            old_skeleton: old,
            now_ms,
            not_since_ms: now_ms - 500,
            keep_until_ms: 5_000,
        };
        match store.rename(&rename("Annie", "annie", "ann", 2_000)).await.unwrap() {
            Renamed::Done(a) => assert_eq!((a.name.as_str(), a.renamed_at_ms), ("Annie", Some(2_000))),
            other => panic!("{other:?}"),
        }
        assert_eq!(store.rename(&rename("Anna", "anna", "annie", 2_100)).await.unwrap(), Renamed::TooSoon);
        let kept = store.name_holder("ann", 3_000).await.unwrap().unwrap();
        assert_eq!((kept.account, kept.kept_until_ms), (ann, Some(5_000)));
        assert_eq!(store.name_holder("ann", 5_000).await.unwrap(), None, "no longer kept");
        let other = Uuid::new_v4();
        assert_eq!(store.create_guest(&guest(other, "Cy", "cy", "d3")).await.unwrap(), Created::Made);
        let taken = Rename { account: other, old_skeleton: "cy", ..rename("ann", "ann", "", 3_000) };
        assert!(matches!(store.rename(&taken).await.unwrap(), Renamed::NameTaken(_)));
        let later = Rename { account: other, old_skeleton: "cy", ..rename("ann", "ann", "", 6_000) };
        assert!(matches!(store.rename(&later).await.unwrap(), Renamed::Done(_)), "free once no longer kept");

        // Sessions.
        let session = |id, expires_at_ms| SessionRow {
            id,
            account: ann,
            client: "test".into(),
            address: "127.0.0.1".into(),
            created_at_ms: 1_000,
            last_used_at_ms: 1_000,
            expires_at_ms,
        };
        let (s1, s2) = (Uuid::new_v4(), Uuid::new_v4());
        store.insert_session(&session(s1, 10_000), "h1").await.unwrap();
        store.insert_session(&session(s2, 3_000), "h2").await.unwrap();
        let (found, account) = store.session("h1").await.unwrap().unwrap();
        assert_eq!((found.id, account.name.as_str()), (s1, "Annie"));
        store.touch(s1, 4_000, 20_000).await.unwrap();
        assert_eq!(store.session("h1").await.unwrap().unwrap().0.expires_at_ms, 20_000);
        let listed: Vec<Uuid> = store.sessions(ann, 3_500).await.unwrap().iter().map(|s| s.id).collect();
        assert_eq!(listed, vec![s1], "the expired one is not listed");
        store.sweep(3_500).await.unwrap();
        assert_eq!(store.session("h2").await.unwrap(), None, "swept");
        assert_eq!(store.delete_sessions(other, SessionsOf::One(s1)).await.unwrap(), Vec::<Uuid>::new());
        // A password, set, replaced and used, on this database too.
        let passwords = store.passwords();
        assert!(!passwords.set(ann, "$argon2id$one", 1_000).await.unwrap());
        assert!(passwords.set(ann, "$argon2id$two", 1_500).await.unwrap());
        passwords.used(ann, 1_600).await.unwrap();
        let kept = passwords.get(ann).await.unwrap().unwrap();
        assert_eq!(
            (kept.hash.as_str(), kept.created_at_ms, kept.changed_at_ms, kept.last_used_at_ms),
            ("$argon2id$two", 1_000, 1_500, Some(1_600))
        );
        assert_eq!(store.devices(ann).await.unwrap(), vec![1_000], "{}", journal.kind());
        // An OpenID identity: one account's, found by issuer and subject.
        let identity = |account| spades_server::storage::OidcIdentityRow {
            id: Uuid::new_v4(),
            issuer: "https://id.example".into(),
            subject: "sub-1".into(),
            account,
            provider: "club".into(),
            label: "ann".into(),
            created_at_ms: 1_000,
            last_used_at_ms: None,
        };
        let oidc = store.oidc();
        assert_eq!(oidc.link(&identity(ann)).await.unwrap(), spades_server::storage::Linked::Done);
        assert!(
            matches!(oidc.link(&identity(other)).await.unwrap(), spades_server::storage::Linked::Known(k) if k.account == ann)
        );
        let member = Uuid::new_v4();
        let new = spades_server::storage::NewMember {
            id: member,
            name: "Member",
            skeleton: "member",
            now_ms: 1_000,
        };
        let mut theirs = identity(member);
        theirs.subject = "sub-2".into();
        assert_eq!(oidc.create_account(&new, &theirs).await.unwrap(), spades_server::storage::Member::Made);
        assert_eq!(store.account(member).await.unwrap().unwrap().name, "Member", "{}", journal.kind());
        drop((store, journal));
        // Reopened: all of it is still there.
        let journal = db.open().await;
        let store = journal.accounts();
        assert_eq!(store.device_account("d1").await.unwrap().unwrap().name, "Annie");
        assert!(passwords_kept(&store, ann).await, "the password survives a reopening");
        let s3 = Uuid::new_v4();
        store.insert_session(&session(s3, 30_000), "h3").await.unwrap();
        assert_eq!(store.delete_sessions(ann, SessionsOf::AllBut(s3)).await.unwrap(), vec![s1]);
        assert_eq!(store.delete_sessions(ann, SessionsOf::All).await.unwrap(), vec![s3]);
        assert_eq!(store.session("h1").await.unwrap(), None);
        drop((store, journal));
        db.cleanup().await;
    }
}

/// Moderation on each database: an operator granted with its audit entry,
/// accounts found by a part of their name (wildcards are letters) or their
/// skeleton, a sanction that holds until its time, lifted once, and the
/// audit log paged by number; everything still there after a reopen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operators_sanctions_and_the_audit_log_round_trip() {
    use spades_protocol::{AuditAction, SanctionKind};
    use spades_server::storage::{Actor, Created, Lift, NewGuest, SanctionRow};
    for db in TestDb::all().await {
        let journal = db.open().await;
        let store = journal.accounts();
        let mut ids = Vec::new();
        for (n, name) in ["Ann Smith", "Bo", "Annie"].iter().enumerate() {
            let id = Uuid::new_v4();
            let skeleton = name.to_lowercase();
            let device = format!("device-{n}");
            let new = NewGuest { id, name, skeleton: &skeleton, device_hash: &device, now_ms: 1_000 };
            assert_eq!(store.create_guest(&new).await.unwrap(), Created::Made);
            ids.push(id);
        }
        let m = store.moderation();
        let ann = store.account(ids[0]).await.unwrap().unwrap();
        let cli = |reason| Actor { operator: None, now_ms: 2_000, reason };
        assert!(m.set_operator(&ann, true, cli("first")).await.unwrap());
        assert!(m.is_operator(ann.id).await.unwrap() && !m.is_operator(ids[1]).await.unwrap());
        let names = |rows: Vec<spades_server::storage::AccountRow>| {
            rows.into_iter().map(|a| a.name).collect::<Vec<_>>()
        };
        assert_eq!(names(m.find("none", "ann", 10).await.unwrap()), ["Ann Smith", "Annie"]);
        assert_eq!(names(m.find("bo", "zzz", 10).await.unwrap()), ["Bo"]);
        assert!(m.find("none", "_", 10).await.unwrap().is_empty(), "`_` is a letter, not a wildcard");
        let by = Actor { operator: Some((ann.id, "Ann Smith")), now_ms: 3_000, reason: "spam" };
        let mute = SanctionRow {
            id: Uuid::new_v4(),
            account: ids[1],
            kind: SanctionKind::Mute,
            reason: "spam".into(),
            until_ms: Some(10_000),
            made_at_ms: 3_000,
            made_by: Some(ann.id),
            lifted_at_ms: None,
            lifted_by: None,
            lift_reason: None,
        };
        m.add_sanction(&mute, "Bo", by).await.unwrap();
        assert_eq!(m.sanctions(ids[1], Some(9_999)).await.unwrap(), vec![mute.clone()]);
        assert!(m.sanctions(ids[1], Some(10_000)).await.unwrap().is_empty(), "ran out");
        let lift = Actor { now_ms: 4_000, reason: "sorry", ..by };
        assert!(matches!(m.lift(mute.id, lift).await.unwrap(), Lift::Done(_)));
        assert!(matches!(m.lift(mute.id, lift).await.unwrap(), Lift::Ended(_)));
        drop((m, store, journal));
        let journal = db.open().await;
        let m = journal.accounts().moderation();
        assert!(m.is_operator(ann.id).await.unwrap());
        let log = m.audit(None, 10).await.unwrap();
        let actions: Vec<AuditAction> = log.iter().map(|e| e.action).collect();
        assert_eq!(actions, [AuditAction::Lift, AuditAction::Mute, AuditAction::GrantOperator]);
        assert_eq!(log[0].account, Some((ids[1], "Bo".to_owned())));
        assert_eq!(m.audit(Some(log[1].id), 10).await.unwrap(), log[2..].to_vec());
        let history = m.sanctions(ids[1], None).await.unwrap();
        assert_eq!((history[0].lifted_at_ms, history[0].lifted_by), (Some(4_000), Some(ann.id)));
        drop((m, journal));
        db.cleanup().await;
    }
}

/// Two ways into an account removed at once (its password and its only
/// OpenID identity, as two requests racing, on one node or two): the
/// removals are counted one after the other, so exactly one goes and the
/// account keeps a way in. On each database, many times over.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_removals_at_once_never_leave_an_account_without_a_way_in() {
    use spades_server::storage::{Removal, Way};
    for db in TestDb::all().await {
        let journal = db.open().await;
        let kind = journal.kind();
        let store = journal.accounts();
        for n in 0..20 {
            let (id, identity) = store.test_member(n).await.unwrap();
            store.passwords().set(id, "$argon2id$x", 2).await.unwrap();
            // On PostgreSQL, both removals are first held at their deletes
            // (another transaction holds the two rows), then let go at
            // once: without the account's lock both would count the
            // other's row as still there.
            let holder = match &db.pg {
                Some(_) => {
                    let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
                    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                        "BEGIN; SELECT 1 FROM passwords WHERE account_id = '{id}' FOR UPDATE; \
                         SELECT 1 FROM oidc_identities WHERE account_id = '{id}' FOR UPDATE"
                    )))
                    .execute(&mut c)
                    .await
                    .unwrap();
                    Some(c)
                }
                None => None,
            };
            let (a, b) = (store.clone(), store.clone());
            let password = tokio::spawn(async move { a.remove_way(id, Way::Password, true).await.unwrap() });
            let unlink =
                tokio::spawn(async move { b.remove_way(id, Way::Oidc(identity), true).await.unwrap() });
            if let Some(mut c) = holder {
                let mut watcher = sqlx::PgConnection::connect(&db.url).await.unwrap();
                let deadline = Instant::now() + Duration::from_secs(5);
                loop {
                    let (waiting,): (i64,) = sqlx::query_as(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                         AND wait_event_type = 'Lock'",
                    )
                    .fetch_one(&mut watcher)
                    .await
                    .unwrap();
                    if waiting >= 2 || Instant::now() > deadline {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                sqlx::raw_sql("ROLLBACK").execute(&mut c).await.unwrap();
            }
            let mut outcomes = [password.await.unwrap(), unlink.await.unwrap()];
            outcomes.sort_by_key(|o| *o != Removal::Done);
            assert_eq!(outcomes, [Removal::Done, Removal::Last], "{kind}, round {n}");
            let left = usize::from(store.passwords().get(id).await.unwrap().is_some())
                + store.oidc().of_account(id).await.unwrap().len();
            assert_eq!(left, 1, "{kind}, round {n}");
        }
        drop((store, journal));
        db.cleanup().await;
    }
}

/// Reports filed at once, on SQLite's file (a pool of connections, the
/// journal's writer among them) and PostgreSQL: one open report a target
/// and reporter, never more than the limit, and no refusal for a database
/// another connection writes to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_filed_at_once_are_one_a_target_and_within_the_limit() {
    use spades_protocol::{ReportContext, ReportReason};
    use spades_server::storage::{Filed, ReportRow};
    for db in TestDb::all().await {
        let journal = db.open().await;
        let reports = journal.accounts().reports();
        let (reporter, table) = (Uuid::new_v4(), Uuid::new_v4());
        let row = |message: Option<u64>, name: &str| ReportRow {
            id: 0,
            made_at_ms: 1_000,
            reporter: (reporter, "Bea".into()),
            table,
            message,
            seat: Some(Seat::East),
            account: None,
            name: name.into(),
            reason: ReportReason::Spam,
            text: String::new(),
            context: ReportContext { chat: Vec::new(), table: None },
            resolved: None,
        };
        let file_all = |rows: Vec<ReportRow>, max: u64| {
            let reports = reports.clone();
            async move {
                let mut set = tokio::task::JoinSet::new();
                for r in rows {
                    let reports = reports.clone();
                    set.spawn(async move { reports.file(&r, 0, max).await.unwrap() });
                }
                let mut filed = Vec::new();
                while let Some(f) = set.join_next().await {
                    filed.push(f.unwrap());
                }
                filed
            }
        };
        // The table's moves are written meanwhile (another writer).
        let rec = table_record(table, 10);
        journal.create_table(&rec).await.unwrap();
        let moves = play(&journal, table, rec.options.rules, 7, 40);
        let (same, _) = tokio::join!(file_all(vec![row(Some(1), "Rude"); 8], 100), moves);
        let new: Vec<_> = same.iter().filter(|f| matches!(f, Filed::New(_))).collect();
        assert_eq!(new.len(), 1, "{}: {same:?}", journal.kind());
        let Filed::New(first) = new[0] else { unreachable!() };
        assert!(
            same.iter().all(|f| matches!(f, Filed::New(_)) || *f == Filed::Again(first.clone())),
            "{same:?}"
        );
        // Six others at once, three at most: two more.
        let others = file_all((2..8).map(|m| row(Some(m), "Rude")).collect(), 3).await;
        let counts = (
            others.iter().filter(|f| matches!(f, Filed::New(_))).count(),
            others.iter().filter(|f| **f == Filed::TooMany).count(),
        );
        assert_eq!(counts, (2, 4), "{}: {others:?}", journal.kind());
        assert_eq!(reports.list(true, None, 100).await.unwrap().len(), 3);
        drop(journal);
        db.cleanup().await;
    }
}
