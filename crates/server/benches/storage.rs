//! Accepted actions per second through the server's table tasks with the
//! event log in memory, in SQLite and (when `BENCH_DATABASE_URL` or
//! `TEST_DATABASE_URL` names one) in PostgreSQL, measured in the same run.
//!
//! `cargo bench -p spades-server --bench storage [-- --tables 200 --secs 10]`
//!
//! Every table has four rule bots that act at once, so each table plays as
//! fast as its moves can be checked, logged (write-ahead, group commit) and
//! broadcast. The figure is the number of actions in the log at the end.

use std::time::{Duration, Instant};

use spades_protocol::TableOptions;
use spades_server::Config;
use spades_server::state::Shared;
use spades_server::storage::Journal;
use spades_server::table::{Attach, TableCommand};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

struct Args {
    tables: usize,
    secs: u64,
}

fn args() -> Args {
    let mut a = Args { tables: 200, secs: 10 };
    let argv: Vec<String> = std::env::args().collect();
    for w in argv.windows(2) {
        match w[0].as_str() {
            "--tables" => a.tables = w[1].parse().unwrap_or(a.tables),
            "--secs" => a.secs = w[1].parse().unwrap_or(a.secs),
            _ => {}
        }
    }
    a
}

async fn run(name: &str, journal: Journal, args: &Args) -> f64 {
    let mut config = Config::default();
    config.tables.bot_delay_ms = 0;
    config.tables.bot = spades_bots::Strength::Rule;
    let shutdown = CancellationToken::new();
    let s = Shared::new(config, journal.clone(), shutdown.clone(), None).expect("the bench's state");
    let mut ids = Vec::new();
    let (tx, _rx) = mpsc::channel(1024);
    for _ in 0..args.tables {
        let (id, owner) = s.hosting.create("bench".into(), TableOptions::default(), None).await.unwrap();
        let handle = s.hosting.get(&id).unwrap();
        // A spectator connection issues the owner commands.
        let conn = s.hosting.next_conn_id();
        let (reply, rx) = oneshot::channel();
        handle
            .send(TableCommand::Attach {
                conn,
                outbox: tx.clone(),
                how: Attach::Watch { account: None },
                req: None,
                quiet: false,
                reply,
            })
            .await
            .unwrap();
        rx.await.unwrap();
        let act = |act| TableCommand::Act { conn, req: None, act, resent: false };
        handle
            .send(act(spades_server::table::Act::AddBots { owner_token: Some(owner.clone()) }))
            .await
            .unwrap();
        handle.send(act(spades_server::table::Act::Start { owner_token: Some(owner) })).await.unwrap();
        handle.send(TableCommand::Detach { conn }).await.unwrap();
        ids.push(id);
    }
    let start = Instant::now();
    tokio::time::sleep(Duration::from_secs(args.secs)).await;
    shutdown.cancel();
    s.tracker.close();
    s.tracker.wait().await;
    let elapsed = start.elapsed().as_secs_f64();
    let mut actions = 0usize;
    for id in &ids {
        actions += journal.get(*id).await.unwrap().map_or(0, |t| t.actions.len());
    }
    drop::<std::sync::Arc<Shared>>(s);
    let rate = actions as f64 / elapsed;
    println!("{name:<10} {:>9} actions in {elapsed:>5.1} s = {rate:>9.0} actions/s", actions);
    rate
}

fn main() {
    let args = args();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        println!("{} tables of four rule bots acting at once, {} s per store", args.tables, args.secs);
        let memory = run("memory", Journal::memory(), &args).await;
        let dir = std::env::temp_dir().join(format!("spades-bench-{}", std::process::id()));
        let sqlite = run("sqlite", Journal::open("", &dir).await.unwrap(), &args).await;
        let _ = std::fs::remove_dir_all(&dir);
        println!("sqlite / memory = {:.0}%", 100.0 * sqlite / memory);
        let url = std::env::var("BENCH_DATABASE_URL").or_else(|_| std::env::var("TEST_DATABASE_URL")).ok();
        match url.filter(|u| !u.is_empty()) {
            Some(url) => {
                let name = format!("spades_bench_{}", std::process::id());
                let admin =
                    sqlx::postgres::PgPoolOptions::new().max_connections(1).connect(&url).await.unwrap();
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                    .execute(&admin)
                    .await
                    .unwrap();
                let db = format!("{}/{name}", &url[..url.rfind('/').unwrap()]);
                let pg = run("postgres", Journal::open(&db, &dir).await.unwrap(), &args).await;
                println!("postgres / memory = {:.0}%", 100.0 * pg / memory);
                sqlx::raw_sql(sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")))
                    .execute(&admin)
                    .await
                    .unwrap();
            }
            None => println!("postgres   not measured (set BENCH_DATABASE_URL or TEST_DATABASE_URL)"),
        }
    });
}
