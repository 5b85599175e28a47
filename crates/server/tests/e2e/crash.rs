//! Crash recovery with the real binary: play part of several matches, kill
//! the process with SIGKILL mid-hand, start it again on the same database,
//! resume every seat with its token, finish the matches, and check that
//! nothing any client saw was lost and that each match equals the engine's
//! replay of its stored log.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use spades_engine::{Action, Match, MatchEnd, Move, Rules, Seat};
use spades_protocol::{ClientMessage, MatchRecord, ServerMessage, TableOptions, TablePhase, TableView};
use uuid::Uuid;

use crate::helpers::*;

struct Server {
    child: Child,
    addr: SocketAddr,
}

async fn start(data: &Path, database_url: &str, addr: SocketAddr) -> Server {
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../config/default.toml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_spades-server"))
        .arg("--config")
        .arg(config)
        .env("SPADES_SERVER__BIND", addr.to_string())
        .env("SPADES_STORAGE__DATA_DIR", data)
        .env("SPADES_STORAGE__DATABASE_URL", database_url)
        .env("SPADES_TABLES__BOT", "rule")
        .env("SPADES_TABLES__BOT_DELAY_MS", "20")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let http = reqwest::Client::new();
    for _ in 0..200 {
        if let Ok(r) = http.get(format!("http://{addr}/readyz")).send().await
            && r.status() == 200
        {
            return Server { child, addr };
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the server did not become ready");
}

/// The moves of the current hand that a view shows: the bids in bidding
/// order, then every card in play order.
fn hand_moves(view: &TableView) -> Option<(u16, Vec<Move>)> {
    let g = view.game.as_ref()?;
    let first = g.dealer.next();
    let mut moves = Vec::new();
    for i in 0..4 {
        let seat = first.offset(i);
        if let Some(bid) = g.bids[seat] {
            moves.push(Move { seat, action: Action::Bid(bid) });
        }
    }
    for trick in g.tricks.iter().chain(std::iter::once(&g.trick)) {
        moves.extend(trick.plays().map(|(seat, card)| Move { seat, action: Action::Play(card) }));
    }
    Some((g.hand_number, moves))
}

/// The full move list of a finished match from its record.
fn record_moves(record: &MatchRecord) -> Vec<Vec<Move>> {
    record
        .hands
        .iter()
        .map(|h| {
            let first = h.result.dealer.next();
            let mut moves: Vec<Move> = (0..4)
                .map(|i| first.offset(i))
                .map(|seat| Move { seat, action: Action::Bid(h.result.bids[seat]) })
                .collect();
            moves.extend(h.plays.iter().map(|p| Move { seat: p.seat, action: Action::Play(p.card) }));
            moves
        })
        .collect()
}

struct Table {
    id: Uuid,
    /// (seat, token, client) for the people.
    people: Vec<(Seat, String, Client)>,
}

async fn crash_and_recover(database_url: &str) {
    let data = std::env::temp_dir().join(format!("spades-crash-{}", Uuid::new_v4().simple()));
    let addr = free_addr();
    let server = start(&data, database_url, addr).await;
    let http = reqwest::Client::new();
    let rules = Rules { match_end: MatchEnd::Hands(5), ..Rules::default() };
    let options = TableOptions { rules, ..TableOptions::default() };

    // Three tables: four people; one person and three bots; two and two.
    let mut tables = Vec::new();
    for humans in [4usize, 1, 2] {
        let created: spades_protocol::CreatedTable = http
            .post(format!("http://{addr}/api/v1/tables"))
            .json(&spades_protocol::CreateTable { name: None, options })
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let mut people = Vec::new();
        for seat in Seat::ALL.into_iter().take(humans) {
            let mut c = Client::connect(addr).await;
            let (_, token) = c.join(created.table, seat.name(), Some(seat)).await;
            people.push((seat, token, c));
        }
        let owner = &mut people[0].2;
        owner.request(ClientMessage::AddBots { owner_token: Some(created.owner_token.clone()) }).await;
        owner.request(ClientMessage::Start { owner_token: Some(created.owner_token.clone()) }).await;
        tables.push(Table { id: created.table, people });
    }

    // Play about one and a half hands everywhere (bots keep playing on their
    // own), then kill the server with SIGKILL while moves are in flight.
    for round in 0..90 {
        for t in tables.iter_mut() {
            for (seat, _, c) in t.people.iter_mut() {
                while let Some(msg) = c.try_recv(Duration::from_millis(2)).await {
                    let _ = msg;
                }
                if let Some(v) = c.view.clone()
                    && v.game.as_ref().is_some_and(|g| g.turn == Some(*seat))
                    && let Some(a) = simple_move(&v)
                {
                    c.send(action_message(a)).await;
                }
            }
        }
        if round == 89 {
            break;
        }
    }
    eprintln!("crash test: killing the server");
    let mut server = server;
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    // Read whatever the clients had already been sent.
    for t in tables.iter_mut() {
        for (_, _, c) in t.people.iter_mut() {
            while c.try_recv(Duration::from_millis(20)).await.is_some() {}
        }
    }
    let seen: Vec<Vec<TableView>> = tables
        .iter()
        .map(|t| t.people.iter().flat_map(|(_, _, c)| c.views.values().cloned()).collect())
        .collect();
    assert!(seen.iter().all(|views| views.iter().any(|v| v.game.is_some())), "every match had started");

    eprintln!("crash test: restarting");
    // Restart on the same database; everybody resumes with the token.
    let server = start(&data, database_url, addr).await;
    for t in tables.iter_mut() {
        for (seat, token, c) in t.people.iter_mut() {
            let seen_seq = c.seq;
            *c = Client::connect(server.addr).await;
            let r = c
                .request(ClientMessage::Resume {
                    protocol: Some(spades_protocol::PROTOCOL_VERSION),
                    table: t.id,
                    token: Some(token.clone()),
                })
                .await;
            assert!(matches!(r, ServerMessage::Resumed { seat: s, .. } if s == *seat), "{r:?}");
            let v = c.view_until(|_| true).await;
            // View numbers keep growing across the restart, so a client that
            // drops views older than its last one keeps up.
            assert!(c.seq > seen_seq, "seq {} after the restart, {seen_seq} before", c.seq);
            assert_eq!(v.you, Some(*seat));
            // A fresh, full clock for the seat on turn: the downtime cost
            // nothing (it started when the table was restored, moments ago).
            if let Some(clock) = v.clock {
                assert!(clock.deadline - v.server_time > clock.duration_ms - 2000, "{clock:?}");
            }
        }
    }

    eprintln!("crash test: finishing the matches");
    // Finish every match. A client the server dropped (too slow) comes back
    // with its token, as a real one would.
    let deadline = std::time::Instant::now() + Duration::from_secs(240);
    for t in tables.iter_mut() {
        loop {
            assert!(std::time::Instant::now() < deadline, "the matches did not finish");
            let mut done = false;
            for (seat, token, c) in t.people.iter_mut() {
                while c.try_recv(Duration::from_millis(2)).await.is_some() {}
                if c.ended {
                    *c = Client::connect(server.addr).await;
                    c.request(ClientMessage::Resume {
                        protocol: Some(spades_protocol::PROTOCOL_VERSION),
                        table: t.id,
                        token: Some(token.clone()),
                    })
                    .await;
                }
                let Some(v) = c.view.clone() else { continue };
                if v.phase == TablePhase::Finished {
                    done = true;
                } else if v.game.as_ref().is_some_and(|g| g.turn == Some(*seat))
                    && let Some(a) = simple_move(&v)
                {
                    c.send(action_message(a)).await;
                    c.try_recv(Duration::from_millis(50)).await;
                }
            }
            if done {
                break;
            }
        }
    }

    eprintln!("crash test: checking");
    // Every match equals the replay of its stored log, and every move any
    // client saw before the crash is in that log.
    for (t, views) in tables.iter().zip(&seen) {
        let record: MatchRecord = http
            .get(format!("http://{addr}/api/v1/matches/{}", t.id))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert!(record.finished);
        let hands = record_moves(&record);
        let all: Vec<Move> = hands.iter().flatten().copied().collect();
        assert_eq!(all.len(), record.actions);
        let seeds =
            record.fair.as_ref().and_then(|f| f.seeds(t.id)).expect("a fair match, its seed revealed");
        let replay = Match::replay_fair(rules, seeds, all).unwrap();
        assert_eq!(replay.result().copied(), record.result);
        assert_eq!(replay.scores().0, record.scores);
        let replayed_hands: Vec<_> = replay.results().to_vec();
        assert_eq!(replayed_hands, record.hands.iter().map(|h| h.result.clone()).collect::<Vec<_>>());
        for v in views {
            let Some((hand, moves)) = hand_moves(v) else { continue };
            let stored = &hands[usize::from(hand) - 1];
            assert!(stored.starts_with(&moves), "a move seen before the crash is missing from the log");
        }
    }
    let mut server = server;
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let _ = std::fs::remove_dir_all(&data);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_resumes_every_match_without_losing_a_move_sqlite() {
    crash_and_recover("").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_resumes_every_match_without_losing_a_move_postgres() {
    let Some(base) = crate::services::postgres() else { return };
    let db = crate::services::TestDatabase::create(&base, "spades_crash").await;
    crash_and_recover(&db.url).await;
    db.remove().await.unwrap();
}
