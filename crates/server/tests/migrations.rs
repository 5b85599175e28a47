//! Migrations are forward-only and keep the data: each migration is
//! applied in order, on SQLite and (when `TEST_DATABASE_URL` names a
//! PostgreSQL server) on PostgreSQL, with a table written in the shape of
//! the schema so far before the next one is applied; the journal then
//! opens the database (applying the rest) and reads every table back.
//! Without `TEST_DATABASE_URL` the PostgreSQL test says so and passes,
//! except under CI (`CI` set), where it fails.

use std::path::{Path, PathBuf};

use spades_engine::{Action, HandResult, Legal, Match, MatchEnd, Rules, Seat};
use spades_protocol::{ActionSource, TableOptions};
use spades_server::storage::{ActionRecord, Journal};
use spades_server::text::{NAME_SKELETON_RULE, name_skeleton};
use sqlx::migrate::Migrator;
use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use uuid::Uuid;

mod services;

fn migrations(db: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations").join(db);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    files
}

fn version(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().split('_').next().unwrap().to_owned()
}

/// The migration policy, checked: forward-only (no down migrations), one
/// version sequence shared by both databases, versions in order.
#[test]
fn migrations_are_forward_only_and_the_same_for_both_databases() {
    let sqlite = migrations("sqlite");
    let postgres = migrations("postgres");
    assert!(!sqlite.is_empty());
    for f in sqlite.iter().chain(&postgres) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        assert!(!name.contains(".down.") && !name.contains(".up."), "forward-only: {name}");
        assert!(version(f).len() == 14 && version(f).bytes().all(|b| b.is_ascii_digit()), "{name}");
    }
    let names = |v: &[PathBuf]| v.iter().map(|p| p.file_name().unwrap().to_owned()).collect::<Vec<_>>();
    assert_eq!(names(&sqlite), names(&postgres), "every migration exists for both databases");
}

/// A database of either kind, for raw statements.
enum Db {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

impl Db {
    async fn exec(&self, sql: &str) {
        let q = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()));
        match self {
            Db::Sqlite(p) => q.execute(p).await.map(drop),
            Db::Postgres(p) => q.execute(p).await.map(drop),
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Applies the first `n` migrations (the same files, so the journal's
    /// own migrator later sees them as applied).
    async fn migrate_to(&self, kind: &str, n: usize) {
        let staged = std::env::temp_dir().join(format!("spades-migrations-{}", Uuid::new_v4().simple()));
        std::fs::create_dir_all(&staged).unwrap();
        for f in &migrations(kind)[..n] {
            std::fs::copy(f, staged.join(f.file_name().unwrap())).unwrap();
        }
        let migrator = Migrator::new(staged.as_path()).await.unwrap();
        match self {
            Db::Sqlite(p) => migrator.run(p).await,
            Db::Postgres(p) => migrator.run(p).await,
        }
        .unwrap_or_else(|e| panic!("migrating to {n}: {e}"));
        std::fs::remove_dir_all(&staged).unwrap();
    }
}

/// A SQL string literal.
fn lit(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// One match's first hand, played by the engine.
struct Played {
    seed: u64,
    rules: Rules,
    actions: Vec<ActionRecord>,
    hand: HandResult,
}

/// One hand of bots; from migration 6 on each action carries the `seq` of
/// its frame.
fn play_one_hand(seed: u64, stage: usize) -> Played {
    let rules = Rules { match_end: MatchEnd::Hands(3), ..Rules::default() };
    let mut m = Match::new(rules, seed);
    let mut actions = Vec::new();
    while m.results().is_empty() {
        let seat = m.turn().expect("someone's turn");
        let action = match m.legal_moves() {
            Legal::Bid { .. } => Action::Bid(3),
            Legal::Play { cards } => Action::Play(cards.first().unwrap()),
            Legal::None => unreachable!("the hand is not over"),
        };
        actions.push(ActionRecord {
            index: actions.len(),
            seat,
            action,
            source: ActionSource::Bot,
            at_ms: 5000 + actions.len() as u64,
            seq: if stage >= 6 { 100 + actions.len() as u64 } else { 0 },
        });
        m.apply(seat, action).unwrap();
    }
    Played { seed, rules, actions, hand: m.results()[0].clone() }
}

/// The players of a seat handed over (migration 6 on).
const PLAYERS: &str =
    r#"[{"name":"Ann","kind":"human","from_hand":1},{"name":"Bot","kind":"bot","from_hand":2}]"#;

/// The stored fair-deal seeds of table `id` (migration 4 on), as stored
/// before seats committed to their seeds (no `client_commitments`).
fn fair_json(id: Uuid) -> String {
    let seeds = spades_engine::FairSeeds::new(
        *id.as_bytes(),
        spades_engine::ServerSeed::from_bytes([0x33; 32]),
        spades_engine::BySeat([Some(spades_engine::ClientSeed::from_bytes([0x44; 32])), None, None, None]),
    );
    let record = spades_server::storage::FairRecord::of(&seeds, spades_engine::BySeat([None; 4]));
    let mut value = serde_json::to_value(record).unwrap();
    value.as_object_mut().unwrap().remove("client_commitments");
    value.to_string()
}

/// Writes table `id`, with one hand played, in the shape of the schema
/// after migration number `stage` (1-based).
async fn insert_shaped(db: &Db, stage: usize, id: Uuid, p: &Played) {
    let options = serde_json::to_string(&TableOptions { rules: p.rules, ..Default::default() }).unwrap();
    let id_lit = lit(&id.to_string());
    let created = 1_000 + stage as i64;
    let seed = p.seed as i64;
    let hand = serde_json::to_string(&p.hand).unwrap();
    let scores = p.hand.scores().0;
    match stage {
        1 => {
            db.exec(&format!(
                "INSERT INTO tables (id, name, options, owner_hash, created_at, seed, started_at) \
                 VALUES ({id_lit}, 'v{stage}', {}, {}, {created}, {seed}, {created})",
                lit(&options),
                lit(&"ab".repeat(32))
            ))
            .await;
            for seat in Seat::ALL {
                db.exec(&format!(
                    "INSERT INTO seats (table_id, seat, name, kind, token_hash, has_left) \
                     VALUES ({id_lit}, {}, {}, 'bot', NULL, 0)",
                    seat.index(),
                    lit(seat.name())
                ))
                .await;
            }
        }
        2..=16 => {
            // Migration 3 adds the cluster's lease columns (empty for a
            // single server); from migration 4 on, a fair match's seeds
            // (JSON). Migration 5 changes an index and a storage parameter
            // only: rows keep migration 4's shape. Migration 6 adds each
            // action's `seq` (below) and a seat's players (JSON, East here).
            // Migration 7 adds accounts beside the tables (below);
            // migration 8 the account of a seat (East's here) and of the
            // table's owner. Migration 14 adds the chat kept (below).
            let (fair_column, fair_value) = if stage >= 4 {
                (", fair", format!(", {}", lit(&fair_json(id))))
            } else {
                ("", String::new())
            };
            let (fair_column, fair_value) = if stage >= 8 {
                (format!("{fair_column}, owner_account"), format!("{fair_value}, {id_lit}"))
            } else {
                (fair_column.to_owned(), fair_value)
            };
            db.exec(&format!(
                "INSERT INTO tables (id, name, options, owner_hash, created_at, seed, started_at, epoch, \
                 hands_played, score_ns, score_ew{fair_column}) \
                 VALUES ({id_lit}, 'v{stage}', {}, {}, {created}, {seed}, {created}, 2, 1, {}, {}{fair_value})",
                lit(&options),
                lit(&"ab".repeat(32)),
                scores[0],
                scores[1]
            ))
            .await;
            for seat in Seat::ALL {
                let east = i64::from(seat == Seat::East);
                let (players_column, players) = if stage >= 6 {
                    let value = if seat == Seat::East { lit(PLAYERS) } else { "NULL".to_owned() };
                    (", players", format!(", {value}"))
                } else {
                    ("", String::new())
                };
                let (account_column, account) = if stage >= 8 {
                    let value = if seat == Seat::East { id_lit.clone() } else { "NULL".to_owned() };
                    (", account_id", format!(", {value}"))
                } else {
                    ("", String::new())
                };
                db.exec(&format!(
                    "INSERT INTO seats (table_id, seat, name, kind, token_hash, has_left, autopilot, \
                     timeouts, grace_expired{players_column}{account_column}) \
                     VALUES ({id_lit}, {}, {}, 'bot', NULL, 0, {east}, {}, {east}{players}{account})",
                    seat.index(),
                    lit(seat.name()),
                    2 * east
                ))
                .await;
            }
        }
        n => panic!(
            "migration {n} is new: add rows shaped like its schema here, so that the data written \
             before it is checked to survive the later ones"
        ),
    }
    if stage >= 7 {
        // An account (its id the table's), its name, device and session.
        let created = 1_000 + stage as i64;
        db.exec(&format!(
            "INSERT INTO accounts (id, name, kind, created_at) VALUES ({id_lit}, {}, 'guest', {created})",
            lit(&format!("Player v{stage}"))
        ))
        .await;
        // From stage 9 on, the row says which rule made its skeleton: rows
        // of the older rule are made again at start-up (checked below).
        let (rule_column, rule) = if stage >= 9 { (", rule", ", 2") } else { ("", "") };
        db.exec(&format!(
            "INSERT INTO account_names (skeleton, account_id, name{rule_column}) VALUES ({}, {id_lit}, {}{rule})",
            lit(&format!("skeleton v{stage}")),
            lit(&format!("Player v{stage}"))
        ))
        .await;
        db.exec(&format!(
            "INSERT INTO devices (secret_hash, account_id, created_at) VALUES ({}, {id_lit}, {created})",
            lit(&format!("device-{id}"))
        ))
        .await;
        if stage >= 10 {
            // A passkey, its time in milliseconds as every time is.
            db.exec(&format!(
                "INSERT INTO passkeys (id, account_id, name, credential, created_at, last_used_at) \
                 VALUES ({}, {id_lit}, 'Phone', '{{}}', 1790000000000, 1790000000001)",
                lit(&format!("passkey-{id}"))
            ))
            .await;
        }
        if stage >= 12 {
            // An OpenID identity, found by issuer and subject.
            db.exec(&format!(
                "INSERT INTO oidc_identities (id, issuer, subject, account_id, provider, label, created_at, \
                 last_used_at) VALUES ({id_lit}, 'https://id.example', {}, {id_lit}, 'club', 'ann', \
                 1790000000000, 1790000000004)",
                lit(&format!("subject-{id}"))
            ))
            .await;
        }
        if stage >= 11 {
            // A password: its argon2id hash, times in milliseconds.
            db.exec(&format!(
                "INSERT INTO passwords (account_id, hash, created_at, changed_at, last_used_at) \
                 VALUES ({id_lit}, '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA', 1790000000000, \
                 1790000000002, 1790000000003)"
            ))
            .await;
        }
        if stage >= 13 {
            // An operator, a suspension that holds and its audit entry.
            db.exec(&format!(
                "INSERT INTO operators (account_id, granted_at, granted_by) VALUES ({id_lit}, 1790000000000, NULL)"
            ))
            .await;
            db.exec(&format!(
                "INSERT INTO sanctions (id, account_id, kind, reason, until_at, made_at, made_by) \
                 VALUES ({id_lit}, {id_lit}, 'suspend', 'abuse', {}, 1790000000000, {id_lit})",
                i64::MAX
            ))
            .await;
            db.exec(&format!(
                "INSERT INTO audit_log (at, operator_id, operator_name, action, account_id, account_name, \
                 sanction_id, reason, until_at) VALUES (1790000000000, {id_lit}, 'Olive', 'suspend', {id_lit}, \
                 'Ann', {id_lit}, 'abuse', {})",
                i64::MAX
            ))
            .await;
        }
        if stage >= 14 {
            // A chat message at the table, removed, and its audit entry.
            db.exec(&format!(
                "INSERT INTO chat_messages (table_id, id, account_id, seat, name, text, at, removed_at) \
                 VALUES ({id_lit}, 7, {id_lit}, 1, 'Ann', 'rude words', 1790000000000, 1790000000001)"
            ))
            .await;
            db.exec(&format!(
                "INSERT INTO audit_log (at, operator_id, operator_name, action, account_id, account_name, \
                 reason, table_id, message_id) VALUES (1790000000001, {id_lit}, 'Olive', 'remove_chat', \
                 {id_lit}, 'Ann', 'insults', {id_lit}, 7)"
            ))
            .await;
        }
        if stage >= 15 {
            // A report of the message, resolved, and its audit entry.
            let context = r#"{"chat": [{"table": "00000000-0000-0000-0000-000000000000", "id": 7, "seat": "east", "name": "Ann", "text": "rude words", "at": 1790000000000}]}"#;
            db.exec(&format!(
                "INSERT INTO reports (made_at, reporter_id, reporter_name, table_id, message_id, seat, account_id, \
                 name, reason, text, context, resolved_at, resolved_by, resolved_name, resolution) \
                 VALUES (1790000000002, {id_lit}, 'Bea', {id_lit}, 7, 1, {id_lit}, 'Ann', 'abusive_chat', \
                 'insults', {}, 1790000000003, {id_lit}, 'Olive', 'removed')",
                lit(context)
            ))
            .await;
            db.exec(&format!(
                "INSERT INTO audit_log (at, operator_id, operator_name, action, account_id, account_name, \
                 reason, report_id) VALUES (1790000000003, {id_lit}, 'Olive', 'resolve_report', {id_lit}, 'Ann', \
                 'removed', 1)"
            ))
            .await;
        }
        if stage >= 16 {
            // The account blocks its own chat (the store refuses it; the
            // table takes any two accounts).
            db.exec(&format!(
                "INSERT INTO chat_blocks (account_id, blocked_id, at) VALUES ({id_lit}, {id_lit}, 1790000000005)"
            ))
            .await;
        }
        db.exec(&format!(
            "INSERT INTO sessions (id, token_hash, account_id, client, address, created_at, last_used_at, \
             expires_at) VALUES ({id_lit}, {}, {id_lit}, 'test', '127.0.0.1', {created}, {created}, {})",
            lit(&format!("session-{id}")),
            i64::MAX
        ))
        .await;
    }
    for a in &p.actions {
        let (kind, value) = match a.action {
            Action::Bid(b) => ("bid", b.to_string()),
            Action::Play(c) => ("play", c.to_string()),
        };
        let (seq_column, seq) =
            if stage >= 6 { (", seq", format!(", {}", a.seq)) } else { ("", String::new()) };
        db.exec(&format!(
            "INSERT INTO actions (table_id, idx, seat, kind, value, source, at{seq_column}) \
             VALUES ({id_lit}, {}, {}, '{kind}', {}, 'bot', {}{seq})",
            a.index,
            a.seat.index(),
            lit(&value),
            a.at_ms
        ))
        .await;
    }
    db.exec(&format!(
        "INSERT INTO hands (table_id, hand_number, result) VALUES ({id_lit}, {}, {})",
        p.hand.hand_number,
        lit(&hand)
    ))
    .await;
}

/// Applies each migration in turn with data written between them, then
/// opens the journal at `url` and reads everything back.
async fn every_stage_survives(kind: &str, db: Db, url: &str, data_dir: &Path) {
    let count = migrations(kind).len();
    let mut written = Vec::new();
    for stage in 1..=count {
        db.migrate_to(kind, stage).await;
        let id = Uuid::new_v4();
        let played = play_one_hand(40 + stage as u64, stage);
        insert_shaped(&db, stage, id, &played).await;
        written.push((stage, id, played));
    }
    match db {
        Db::Sqlite(p) => p.close().await,
        Db::Postgres(p) => p.close().await,
    }
    let journal = Journal::open(url, data_dir).await.unwrap();
    let summaries = journal.recent_summaries(20).await.unwrap();
    assert_eq!(summaries.len(), count, "{kind}");
    let unfinished = journal.unfinished().await.unwrap();
    assert_eq!(unfinished.len(), count, "{kind}: every match is resumed");
    for (stage, id, p) in &written {
        let stored =
            journal.get(*id).await.unwrap().unwrap_or_else(|| panic!("{kind}: table of stage {stage}"));
        assert_eq!(stored.table.name, format!("v{stage}"));
        assert_eq!(stored.table.options.rules, p.rules);
        assert_eq!(stored.seed, Some(p.seed));
        assert_eq!(stored.actions, p.actions, "{kind} stage {stage}");
        assert_eq!(stored.hands, vec![p.hand.clone()]);
        let east = stored.seats[Seat::East].as_ref().unwrap();
        // Columns added later take their defaults for older rows.
        assert_eq!(east.autopilot, *stage >= 2, "{kind} stage {stage}");
        assert_eq!(east.timeouts, if *stage >= 2 { 2 } else { 0 });
        assert_eq!(stored.epoch, if *stage >= 2 { 2 } else { 0 });
        assert_eq!(east.account, (*stage >= 8).then_some(*id), "{kind} stage {stage}");
        assert_eq!(stored.table.owner_account, (*stage >= 8).then_some(*id), "{kind} stage {stage}");
        let players = serde_json::to_string(&east.players).unwrap();
        assert_eq!(players, if *stage >= 6 { PLAYERS } else { "[]" }, "{kind} stage {stage}");
        // Read back, older seeds have no commitments; the rest is as stored.
        let fair = stored.fair.as_ref().map(|f| {
            assert_eq!(f.client_commitments, [None; 4], "{kind} stage {stage}");
            let mut value = serde_json::to_value(f).unwrap();
            value.as_object_mut().unwrap().remove("client_commitments");
            value.to_string()
        });
        assert_eq!(fair, (*stage >= 4).then(|| fair_json(*id)), "{kind} stage {stage}");
        // Accounts keep their name, device and session.
        if *stage >= 7 {
            let accounts = journal.accounts();
            let account = accounts.device_account(&format!("device-{id}")).await.unwrap().unwrap();
            assert_eq!((account.id, account.name), (*id, format!("Player v{stage}")), "{kind}");
            let (session, _) = accounts.session(&format!("session-{id}")).await.unwrap().unwrap();
            assert_eq!(session.account, *id, "{kind}");
            let holder = accounts.name_holder(&format!("skeleton v{stage}"), 0).await.unwrap().unwrap();
            assert_eq!(holder.account, *id, "{kind}");
        }
        if *stage >= 10 {
            let passkey = journal.accounts().passkeys().get(&format!("passkey-{id}")).await.unwrap().unwrap();
            assert_eq!((passkey.account, passkey.name.as_str()), (*id, "Phone"), "{kind}");
            assert_eq!(
                (passkey.created_at_ms, passkey.last_used_at_ms),
                (1_790_000_000_000, Some(1_790_000_000_001))
            );
        }
        if *stage >= 11 {
            let password = journal.accounts().passwords().get(*id).await.unwrap().unwrap();
            assert!(password.hash.starts_with("$argon2id$"), "{kind}");
            assert_eq!(
                (password.created_at_ms, password.changed_at_ms, password.last_used_at_ms),
                (1_790_000_000_000, 1_790_000_000_002, Some(1_790_000_000_003)),
                "{kind}"
            );
        }
        if *stage >= 12 {
            let oidc = journal.accounts().oidc();
            let identity = oidc.get("https://id.example", &format!("subject-{id}")).await.unwrap().unwrap();
            assert_eq!((identity.account, identity.provider.as_str()), (*id, "club"), "{kind}");
            assert_eq!(identity.last_used_at_ms, Some(1_790_000_000_004), "{kind}");
        }
        if *stage >= 13 {
            let moderation = journal.accounts().moderation();
            assert!(moderation.is_operator(*id).await.unwrap(), "{kind}");
            let held = moderation.sanctions(*id, Some(1_800_000_000_000)).await.unwrap();
            assert_eq!(held.len(), 1, "{kind}");
            assert_eq!((held[0].reason.as_str(), held[0].made_by), ("abuse", Some(*id)), "{kind}");
            let log = moderation.audit(None, 10).await.unwrap();
            let made = log.iter().find(|e| e.sanction == Some(*id)).unwrap();
            assert_eq!(made.operator, Some((*id, "Olive".to_owned())), "{kind}");
        }
        if *stage >= 14 {
            let chat = journal.accounts().chat().at_table(*id, None, 10).await.unwrap();
            assert_eq!(chat.len(), 1, "{kind}");
            assert_eq!(
                (chat[0].id, chat[0].seat, chat[0].account),
                (7, Some(Seat::East), Some(*id)),
                "{kind}"
            );
            assert_eq!(chat[0].removed_at_ms, Some(1_790_000_000_001), "{kind}");
            let log = journal.accounts().moderation().audit(None, 10).await.unwrap();
            let removal = log.iter().find(|e| e.message.is_some() && e.table == Some(*id)).unwrap();
            assert_eq!((removal.message, removal.reason.as_str()), (Some(7), "insults"), "{kind}");
        }
        if *stage >= 15 {
            let about = journal.accounts().reports().about(*id, 10).await.unwrap();
            assert_eq!(about.len(), 1, "{kind}");
            let r = &about[0];
            assert_eq!(
                (r.message, r.seat, r.reason.as_str()),
                (Some(7), Some(Seat::East), "abusive_chat"),
                "{kind}"
            );
            assert_eq!((r.context.chat.len(), r.context.table.is_none()), (1, true), "{kind}");
            assert_eq!(r.resolved.as_ref().map(|x| x.reason.as_str()), Some("removed"), "{kind}");
            let log = journal.accounts().moderation().audit(None, 100).await.unwrap();
            assert!(log.iter().any(|e| e.report == Some(1) && e.reason == "removed"), "{kind}");
        }
        if *stage >= 16 {
            let blocks = journal.accounts().blocks().list(*id).await.unwrap();
            assert_eq!(blocks.len(), 1, "{kind}");
            assert_eq!((blocks[0].blocked, blocks[0].at_ms), (*id, 1_790_000_000_005), "{kind}");
        }
        // The summary columns are filled in for rows written before them.
        let s = summaries.iter().find(|s| s.table == *id).unwrap();
        assert_eq!(s.hands_played, 1, "{kind} stage {stage}");
        assert_eq!(s.scores, p.hand.scores().0, "{kind} stage {stage}");
        assert_eq!(s.seats.len(), 4);
        // And the match goes on: the next action is accepted.
        let m = {
            let mut m = Match::new(p.rules, p.seed);
            for a in &p.actions {
                m.apply(a.seat, a.action).unwrap();
            }
            m
        };
        let seat = m.turn().unwrap();
        let next = ActionRecord {
            index: p.actions.len(),
            seat,
            action: Action::Bid(3),
            source: ActionSource::Player,
            at_ms: 9_999,
            seq: 500,
        };
        journal.append(*id, next).await.unwrap();
        assert_eq!(journal.get(*id).await.unwrap().unwrap().actions.len(), p.actions.len() + 1);
    }
    // Name skeletons of an older rule are made again (once), under the
    // current one; rows of the current rule are left as they are.
    let accounts = journal.accounts();
    let rekeyed = accounts.rekey_names(NAME_SKELETON_RULE, &name_skeleton).await.unwrap();
    let older = written.iter().filter(|(stage, ..)| (7..9).contains(stage)).count();
    assert_eq!(rekeyed, (older, 0), "{kind}: rows re-keyed, and conflicts");
    assert_eq!(
        accounts.rekey_names(NAME_SKELETON_RULE, &name_skeleton).await.unwrap(),
        (0, 0),
        "{kind}: once"
    );
    for (stage, id, _) in written.iter().filter(|(stage, ..)| *stage >= 7) {
        let name = format!("Player v{stage}");
        let (found, stale) = if *stage < 9 {
            (name_skeleton(&name), format!("skeleton v{stage}"))
        } else {
            (format!("skeleton v{stage}"), name_skeleton(&name))
        };
        let holder = accounts.name_holder(&found, 0).await.unwrap();
        assert_eq!(holder.map(|h| h.account), Some(*id), "{kind} stage {stage}: {found:?}");
        assert!(accounts.name_holder(&stale, 0).await.unwrap().is_none(), "{kind} stage {stage}: {stale:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_migration_keeps_the_data_written_before_it_sqlite() {
    let dir = std::env::temp_dir().join(format!("spades-migrate-{}", Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let options = SqliteConnectOptions::new().filename(dir.join("spades.db")).create_if_missing(true);
    let pool = SqlitePoolOptions::new().max_connections(1).connect_with(options).await.unwrap();
    every_stage_survives("sqlite", Db::Sqlite(pool), "", &dir).await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_migration_keeps_the_data_written_before_it_postgres() {
    let Some(base) = services::postgres() else { return };
    let db = services::TestDatabase::create(&base, "spades_migrate").await;
    let pool = PgPoolOptions::new().max_connections(2).connect(&db.url).await.unwrap();
    every_stage_survives("postgres", Db::Postgres(pool), &db.url, &std::env::temp_dir()).await;
    db.remove().await.unwrap();
}
