//! Fair deals against the real server: library clients commit to seeds of
//! their own after seeing the server's commitment and reveal them once the
//! start closes the commitments; the match is dealt from them, the record
//! passes `spades_client::verify` and the `spades-verify` command, tampered
//! records fail both, no seat can change its contribution once another is
//! shown, a withheld seed deals without it, and a restart changes no deal.

use std::path::{Path, PathBuf};
use std::process::Command;

use spades_bots::Strength;
use spades_client::protocol::{CreateTable, MatchRecord, TableOptions, TablePhase, Tempo};
use spades_client::verify::{Expect, verify};
use spades_client::{Client, Connection, ErrorCode, ServerMessage, TableView};
use spades_engine::{ClientSeed, MatchEnd, Rules, Seat, ServerSeed};

use crate::helpers::*;

fn five_hands() -> CreateTable {
    CreateTable {
        name: Some("Fair".into()),
        options: TableOptions {
            rules: Rules { match_end: MatchEnd::Hands(5), ..Rules::default() },
            tempo: Tempo::Normal,
            ..TableOptions::default()
        },
    }
}

/// Plays one seat with the rule bot until the match is over, starting from
/// `latest`, the latest view already read (if any).
async fn play_out(mut conn: Connection, mut latest: Option<TableView>) -> TableView {
    let mut n = 0u64;
    loop {
        let view = match latest.take() {
            Some(v) => v,
            None => match conn.recv().await.expect("the connection stays up") {
                ServerMessage::View { view, .. } => *view,
                _ => continue,
            },
        };
        if view.phase == TablePhase::Finished {
            return view;
        }
        let Some(game) = view.game.as_ref() else { continue };
        if game.turn.is_some() && game.turn == view.you {
            n += 1;
            conn.act(spades_bots::choose(Strength::Rule, game, n)).await.expect("legal moves");
        }
    }
}

/// The first view after `phase` is reached.
async fn view_in(conn: &mut Connection, phase: TablePhase) -> TableView {
    loop {
        if let ServerMessage::View { view, .. } = conn.recv().await.unwrap()
            && view.phase == phase
        {
            return *view;
        }
    }
}

/// Runs `spades-verify` on `args`; returns (exit code, stdout).
fn run_verify(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_spades-verify")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
}

fn write_record(dir: &Path, name: &str, record: &MatchRecord) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec(record).unwrap()).unwrap();
    path
}

fn temp_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spades-{what}-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_seeds_deal_the_match_and_the_record_verifies() {
    let server = spawn_server(test_config()).await;
    let client = Client::new(&server.url()).unwrap();
    let created = client.create_table(&five_hands()).await.unwrap();
    let table = created.table;

    let mut north = client.connect().await.unwrap();
    north.join(table, "Ann", Some(Seat::North)).await.unwrap();
    let mut south = client.connect().await.unwrap();
    south.join(table, "Bo", Some(Seat::South)).await.unwrap();
    let (seen, north_seed) = north.contributed().expect("the library sends a seed by default");
    let (seen_south, south_seed) = south.contributed().unwrap();
    assert_eq!(seen, seen_south, "one commitment for the whole lobby");
    assert_ne!(north_seed, south_seed);

    // The REST status shows the commitments, never a seed before the start.
    let status = client.table(table).await.unwrap();
    let fair = status.fair.expect("a fair table");
    assert_eq!(fair.commitment, seen);
    assert!(!fair.fixed && fair.server_seed.is_none());
    assert_eq!(fair.client_seeds, [None; 4], "no seed is shown before the start");
    let id = *table.as_bytes();
    let (cn, cs) = (north_seed.commitment(id, Seat::North), south_seed.commitment(id, Seat::South));
    assert_eq!(fair.client_commitments, [Some(cn), None, Some(cs), None]);

    // A spectator's seed counts for nothing and is refused.
    let mut spectator = client.connect().await.unwrap();
    spectator.watch(table).await.unwrap();
    let err =
        spectator.request(spades_client::ClientMessage::Seed { seed: ClientSeed::from_bytes([1; 32]) }).await;
    assert_eq!(err.unwrap_err().refusal(), Some(ErrorCode::NotSeated));
    // A malformed seed is a bad message naming the field.
    spectator.send_text(r#"{"type":"seed","seed":"12","req":99}"#).await.unwrap();
    loop {
        if let ServerMessage::Error { req: Some(99), code, message } = spectator.recv().await.unwrap() {
            assert_eq!(code, ErrorCode::BadMessage);
            assert!(message.contains("\"seed\" must be 64 hexadecimal digits"), "{message}");
            break;
        }
    }

    north.add_bots(&created.owner_token).await.unwrap();
    north.start(&created.owner_token).await.unwrap();
    // Both reveal when their views ask; the deal follows the last reveal.
    let (first, first_south) =
        tokio::join!(view_in(&mut north, TablePhase::Bidding), view_in(&mut south, TablePhase::Bidding));
    let fixed = first.fair.clone().expect("the first view carries the seeds");
    assert!(fixed.fixed && fixed.server_seed.is_none());
    assert_eq!(fixed.commitment, seen);
    assert_eq!(fixed.client_seeds, [Some(north_seed), None, Some(south_seed), None]);
    // Seeds are fixed now.
    let late =
        north.request(spades_client::ClientMessage::Seed { seed: ClientSeed::from_bytes([2; 32]) }).await;
    assert_eq!(late.unwrap_err().refusal(), Some(ErrorCode::AlreadyStarted));

    let players =
        [tokio::spawn(play_out(north, Some(first))), tokio::spawn(play_out(south, Some(first_south)))];
    for p in players {
        within("the match to end", p).await.unwrap();
    }

    let record = client.match_record(table).await.unwrap();
    let revealed = record.fair.as_ref().and_then(|f| f.server_seed).expect("revealed once over");
    assert_eq!(revealed.commitment(), seen, "the revealed seed is the one committed to");
    let good = verify(
        &record,
        &Expect { commitment: Some(seen), client_seed: Some(north_seed), seat: Some(Seat::North) },
    );
    assert!(good.passed(), "{good:#?}");
    assert!(good.checks.iter().filter(|c| c.name.starts_with("hand ")).count() >= 5);

    // Tampered records fail: the server seed altered after the commit, or
    // any one player's seed changed (every deal then differs).
    let mut bad_server = record.clone();
    bad_server.fair.as_mut().unwrap().server_seed = Some(ServerSeed::from_bytes([0; 32]));
    let report = verify(&bad_server, &Expect::default());
    assert!(!report.passed());
    assert!(report.checks.iter().any(|c| c.name == "commitment" && !c.passed));
    let mut bad_client = record.clone();
    bad_client.fair.as_mut().unwrap().client_seeds[2] = Some(ClientSeed::from_bytes([3; 32]));
    let report = verify(&bad_client, &Expect::default());
    let hands_failed = report.checks.iter().filter(|c| c.name.starts_with("hand ") && !c.passed).count();
    assert_eq!(hands_failed, record.hands.len(), "{report:#?}");

    // The command agrees, from files and from the server's URL.
    let dir = temp_dir("verify");
    let good_file = write_record(&dir, "good.json", &record);
    let (code, out) = run_verify(&[
        "--commitment",
        &seen.to_hex(),
        "--client-seed",
        &north_seed.to_hex(),
        "--seat",
        "north",
        good_file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("All ") && out.contains("checks passed"), "{out}");
    let url = format!("{}/api/v1/matches/{table}", server.url());
    let (code, out) = run_verify(&["--json", &url]);
    assert_eq!(code, 0, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["passed"], true);
    assert_eq!(json, serde_json::to_value(verify(&record, &Expect::default())).unwrap());
    for (name, bad) in [("server.json", &bad_server), ("client.json", &bad_client)] {
        let path = write_record(&dir, name, bad);
        let (code, out) = run_verify(&[path.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}: {out}");
        assert!(out.contains("FAIL") && out.contains("not proven fair"), "{out}");
    }
    let (code, _) = run_verify(&[dir.join("missing.json").to_str().unwrap()]);
    assert_eq!(code, 2);
    let _ = std::fs::remove_dir_all(&dir);
    server.stop().await;
}

/// Restarting the server changes no deal: the restored match has the same
/// seeds, the same cards in hand, and its record verifies. A table restored
/// in the lobby draws a new server seed, and the library sends a new seed
/// for it when it resumes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_changes_no_deal() {
    let data = temp_dir("fair-restart");
    let config = || {
        let mut c = test_config();
        c.storage.in_memory = false;
        c.storage.data_dir = data.clone();
        c
    };
    let server = spawn_server(config()).await;
    let client = Client::new(&server.url()).unwrap();
    let started = client.create_table(&five_hands()).await.unwrap();
    let lobby = client.create_table(&five_hands()).await.unwrap();

    let mut north = client.connect().await.unwrap();
    let joined = north.join(started.table, "Ann", Some(Seat::North)).await.unwrap();
    let (_, seed) = north.contributed().unwrap();
    north.add_bots(&started.owner_token).await.unwrap();
    north.start(&started.owner_token).await.unwrap();
    let before = view_in(&mut north, TablePhase::Bidding).await;
    let hand_before = before.game.as_ref().and_then(|g| g.hand).unwrap();

    let mut waiting = client.connect().await.unwrap();
    let waiting_seat = waiting.join(lobby.table, "Cy", Some(Seat::East)).await.unwrap();
    let (lobby_commitment, _) = waiting.contributed().unwrap();
    drop((north, waiting));
    server.stop().await;

    let server = spawn_server(config()).await;
    let client = Client::new(&server.url()).unwrap();
    let mut north = client.connect().await.unwrap();
    north.resume(started.table, &joined.token).await.unwrap();
    assert!(north.contributed().is_none(), "no seed is sent once the match has started");
    let after = loop {
        if let ServerMessage::View { view, .. } = north.recv().await.unwrap() {
            break *view;
        }
    };
    assert_eq!(after.fair, before.fair, "the same commitment and seeds");
    assert_eq!(after.game.as_ref().and_then(|g| g.hand), Some(hand_before), "the same cards");
    assert!(after.fair.as_ref().is_some_and(|f| f.fixed && f.server_seed.is_none()));

    let mut waiting = client.connect().await.unwrap();
    waiting.resume(lobby.table, &waiting_seat.token).await.unwrap();
    let (new_commitment, new_seed) = waiting.contributed().expect("a new seed for the new commitment");
    assert_ne!(new_commitment, lobby_commitment, "a restored lobby draws a new server seed");
    let status = client.table(lobby.table).await.unwrap();
    let fair = status.fair.unwrap();
    assert_eq!(fair.client_commitments[1], Some(new_seed.commitment(*lobby.table.as_bytes(), Seat::East)));
    assert_eq!(fair.client_seeds, [None; 4]);

    within("the match to end", play_out(north, Some(after))).await;
    let record = client.match_record(started.table).await.unwrap();
    let report =
        verify(&record, &Expect { client_seed: Some(seed), seat: Some(Seat::North), ..Expect::default() });
    assert!(report.passed(), "{report:#?}");
    server.stop().await;
    let _ = std::fs::remove_dir_all(&data);
}

/// A seat's contribution cannot change once another is shown: the start
/// closes the commitments, a reveal must match its seat's commitment, and a
/// seat that committed and never revealed is dealt without a seed (its one
/// choice: to withhold), which the record shows and the verifier says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contributions_are_fixed_before_any_seed_is_shown() {
    let mut config = test_config();
    config.tables.reveal_ms = 1500;
    let server = spawn_server(config).await;
    let client = Client::new(&server.url()).unwrap();
    let created = client.create_table(&five_hands()).await.unwrap();
    let table = created.table;
    let id = *table.as_bytes();
    // North: the library (commits, reveals when asked).
    let mut north = client.connect().await.unwrap();
    north.join(table, "Ann", Some(Seat::North)).await.unwrap();
    let (_, north_seed) = north.contributed().unwrap();
    // South: a hand-made client that would like to choose last.
    let opts = spades_client::ConnectOptions { contribute_seed: false, ..Default::default() };
    let mut south = Connection::connect_with(&spades_client::Endpoint::parse(&server.url()).unwrap(), &opts)
        .await
        .unwrap();
    south.join(table, "Bo", Some(Seat::South)).await.unwrap();
    let honest = ClientSeed::from_bytes([5; 32]);
    let commit = |c| spades_client::ClientMessage::CommitSeed { commitment: c };
    // A commitment for another seat is just a commitment this seat cannot
    // open; South commits for its own.
    south.request(commit(honest.commitment(id, Seat::South))).await.unwrap();
    // Spectators commit nothing.
    let mut spectator = client.connect().await.unwrap();
    spectator.watch(table).await.unwrap();
    let refused = spectator.request(commit(honest.commitment(id, Seat::East))).await;
    assert_eq!(refused.unwrap_err().refusal(), Some(ErrorCode::NotSeated));

    north.add_bots(&created.owner_token).await.unwrap();
    north.start(&created.owner_token).await.unwrap();
    // North reveals; South now sees North's seed, and can change nothing.
    let shown = loop {
        if let ServerMessage::View { view, .. } = north.recv().await.unwrap()
            && view.fair.as_ref().is_some_and(|f| f.client_seeds[0].is_some())
        {
            break view;
        }
    };
    let fair = shown.fair.clone().unwrap();
    assert!(fair.reveal_by.is_some() && !fair.fixed, "the seats reveal");
    assert_eq!(fair.client_seeds[0], Some(north_seed));
    let late = south.request(commit(ClientSeed::from_bytes([6; 32]).commitment(id, Seat::South))).await;
    assert_eq!(late.unwrap_err().refusal(), Some(ErrorCode::AlreadyStarted), "commitments are closed");
    let other =
        south.request(spades_client::ClientMessage::Seed { seed: ClientSeed::from_bytes([6; 32]) }).await;
    assert_eq!(other.unwrap_err().refusal(), Some(ErrorCode::SeedMismatch), "only the committed seed");
    // Nobody can take a seat or leave meanwhile.
    let mut late_joiner = client.connect().await.unwrap();
    let refused = late_joiner.join(table, "Cy", None).await;
    assert_eq!(refused.unwrap_err().refusal(), Some(ErrorCode::AlreadyStarted));
    // South withholds: after the window the match is dealt without it.
    let first = view_in(&mut north, TablePhase::Bidding).await;
    let fixed = first.fair.clone().unwrap();
    assert!(fixed.fixed);
    assert_eq!(fixed.client_seeds, [Some(north_seed), None, None, None]);
    assert_eq!(
        fixed.client_commitments[2],
        Some(honest.commitment(id, Seat::South)),
        "the withheld commitment stays"
    );

    // Played out: the record verifies, and says who withheld.
    let players = [tokio::spawn(play_out(north, Some(first))), tokio::spawn(play_out(south, None))];
    for p in players {
        within("the match to end", p).await.unwrap();
    }
    let record = client.match_record(table).await.unwrap();
    let report = verify(
        &record,
        &Expect { client_seed: Some(north_seed), seat: Some(Seat::North), ..Expect::default() },
    );
    assert!(report.passed(), "{report:#?}");
    let seats = report.checks.iter().find(|c| c.name == "seat seeds").unwrap();
    assert!(seats.detail.contains("South committed and did not reveal"), "{}", seats.detail);
    server.stop().await;
}
