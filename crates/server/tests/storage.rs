//! Storage tests. Each runs against SQLite (a fresh file) and, when
//! `TEST_DATABASE_URL` names a PostgreSQL server (e.g.
//! `postgres://postgres@127.0.0.1:5432/test`), against PostgreSQL too, in a
//! database of its own that is dropped afterwards.

use std::path::PathBuf;
use std::sync::Arc;

use spades_engine::{Action, BySeat, Legal, Match, MatchEnd, Move, Rules, Seat};
use spades_protocol::{ActionSource, SeatKind, TableOptions};
use spades_server::storage::{ActionRecord, Journal, SeatRecord, StorageError, TableRecord, execute_raw};
use sqlx::postgres::PgPoolOptions;
use uuid::Uuid;

/// A database for one test, removed on `cleanup`.
struct TestDb {
    url: String,
    dir: PathBuf,
    pg_admin: Option<(String, String)>,
}

impl TestDb {
    fn sqlite() -> TestDb {
        let dir = std::env::temp_dir().join(format!("spades-storage-{}", Uuid::new_v4().simple()));
        TestDb { url: String::new(), dir, pg_admin: None }
    }

    async fn postgres() -> Option<TestDb> {
        let base = std::env::var("TEST_DATABASE_URL").ok().filter(|u| !u.is_empty())?;
        let name = format!("spades_test_{}", Uuid::new_v4().simple());
        let admin =
            PgPoolOptions::new().max_connections(1).connect(&base).await.expect("TEST_DATABASE_URL connects");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}"))).execute(&admin).await.unwrap();
        admin.close().await;
        let url = match base.rfind('/') {
            Some(i) => format!("{}/{name}", &base[..i]),
            None => panic!("TEST_DATABASE_URL needs a database path"),
        };
        Some(TestDb { url, dir: std::env::temp_dir(), pg_admin: Some((base, name)) })
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

    async fn cleanup(self) {
        match self.pg_admin {
            Some((base, name)) => {
                let admin = PgPoolOptions::new().max_connections(1).connect(&base).await.unwrap();
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
                    .execute(&admin)
                    .await
                    .unwrap();
            }
            None => {
                let _ = std::fs::remove_dir_all(&self.dir);
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
        created_at_ms: created,
    }
}

fn seats() -> BySeat<Option<SeatRecord>> {
    BySeat::new_with(|s| {
        Some(SeatRecord {
            name: s.name().into(),
            kind: if s == Seat::North { SeatKind::Human } else { SeatKind::Bot },
            token_hash: (s == Seat::North).then(|| "cd".repeat(32)),
            left: false,
            autopilot: false,
            timeouts: 0,
            grace_expired: false,
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
        let source = if i % 3 == 0 { ActionSource::Player } else { ActionSource::Bot };
        journal
            .append(id, ActionRecord { index: i, seat, action, source, at_ms: 1000 + i as u64 })
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
        let state = spades_server::app::state(
            spades_server::Config::default(),
            journal.clone(),
            tokio_util::sync::CancellationToken::new(),
        );
        let (restored, skipped) = spades_server::restore::restore_tables(&state).await;
        assert_eq!((restored, skipped), (1, 4));
        assert!(state.registry.get(&ids[0]).is_some());
        state.shutdown.cancel();
        drop(state);
        drop(journal);
        db.cleanup().await;
    }
}
