//! Duplicate tournaments between the Spades bots.
//!
//! ```sh
//! cargo run --release -p spades-bots --bin tournament -- --all
//! cargo run --release -p spades-bots --bin tournament -- --pairing search-vs-rule --deals 2000
//! ```
//!
//! See the crate README for the format and the measured results.

use std::time::Duration;

use clap::Parser;
use spades_bots::Budget;
use spades_bots::tournament::{Config, Contestant, Report, run};

/// Duplicate tournaments between the Spades bots (random, rule, search).
///
/// Every deal is played twice with the partnerships swapped (the cards are
/// rotated one seat, the bots stay put), under the project's default rules.
/// Deal seeds are first-seed..first-seed+deals-1; match seeds
/// game-seed..game-seed+games-1. Everything printed goes to stdout; progress
/// to stderr.
#[derive(Debug, Parser)]
#[command(name = "tournament", version)]
struct Args {
    /// A pairing "A-vs-B", where A and B are random, rule, search,
    /// search:WORLDS or search:WORLDS:ENDGAME. May be repeated.
    #[arg(long = "pairing", value_name = "A-vs-B")]
    pairings: Vec<String>,
    /// Run the standard pairings: rule-vs-random, search-vs-random,
    /// search-vs-rule, rule-vs-rule and search-vs-search.
    #[arg(long)]
    all: bool,
    /// Duplicate deals per pairing (each played twice).
    #[arg(long, default_value_t = 2000)]
    deals: u32,
    /// Seed of the first deal.
    #[arg(long, default_value_t = 1)]
    first_seed: u64,
    /// Paired 500-point matches per pairing (each played twice).
    #[arg(long, default_value_t = 200)]
    games: u32,
    /// Seed of the first match.
    #[arg(long, default_value_t = 1_000_001)]
    game_seed: u64,
    /// Worker threads (default: all cores). Each decision runs on one thread.
    #[arg(long)]
    threads: Option<usize>,
    /// Search time limit per decision in milliseconds. The default 0 plays
    /// on the iteration caps alone, so results are reproducible and do not
    /// depend on the machine's load; use 30 for the server's default.
    #[arg(long, default_value_t = 0)]
    time_ms: u64,
    /// Write the reports as JSON to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<std::path::PathBuf>,
    /// List every deal and match seed.
    #[arg(long)]
    print_seeds: bool,
    /// No progress lines on stderr.
    #[arg(long, short)]
    quiet: bool,
}

fn parse_pairing(s: &str, time: Option<Duration>) -> Result<(Contestant, Contestant), String> {
    let (a, b) =
        s.split_once("-vs-").ok_or_else(|| format!("a pairing looks like search-vs-rule, not {s:?}"))?;
    let mut a: Contestant = a.parse()?;
    let mut b: Contestant = b.parse()?;
    for c in [&mut a, &mut b] {
        c.budget = Budget { time_limit: time, ..c.budget };
    }
    Ok((a, b))
}

fn main() {
    let args = Args::parse();
    if let Err(e) = real_main(&args) {
        eprintln!("tournament: {e}");
        std::process::exit(1);
    }
}

fn real_main(args: &Args) -> Result<(), String> {
    let time = (args.time_ms > 0).then(|| Duration::from_millis(args.time_ms));
    let mut names = args.pairings.clone();
    if args.all {
        for p in ["rule-vs-random", "search-vs-random", "search-vs-rule", "rule-vs-rule", "search-vs-search"]
        {
            names.push(p.to_string());
        }
    }
    if names.is_empty() {
        names.push("search-vs-rule".to_string());
    }
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    println!("Spades bot tournament (duplicate), rules: engine Rules::default()");
    println!(
        "  (500 points, nil +-100, 10 bags cost 100, failed-nil tricks count only as bags, spades must be broken)"
    );
    println!(
        "deal seeds: {}..={} ({} deals, each played twice: as dealt, then rotated one seat)",
        args.first_seed,
        args.first_seed + u64::from(args.deals.max(1)) - 1,
        args.deals
    );
    println!(
        "match seeds: {}..={} ({} pairs of 500-point matches)",
        args.game_seed,
        args.game_seed + u64::from(args.games.max(1)) - 1,
        args.games
    );
    let b = Budget::DEFAULT;
    println!(
        "search budget: {} deals per card, {} per bid, time limit {}; {} worker thread(s)",
        b.play_worlds,
        b.bid_worlds,
        time.map_or("none".to_string(), |t| format!("{} ms", t.as_millis())),
        threads
    );
    if args.print_seeds {
        let deals: Vec<String> =
            (0..u64::from(args.deals)).map(|k| (args.first_seed + k).to_string()).collect();
        println!("deal seeds: {}", deals.join(" "));
        let games: Vec<String> =
            (0..u64::from(args.games)).map(|k| (args.game_seed + k).to_string()).collect();
        println!("match seeds: {}", games.join(" "));
    }
    println!();
    let mut reports: Vec<Report> = Vec::new();
    for name in &names {
        let (a, b) = parse_pairing(name, time)?;
        let cfg = Config {
            first_seed: args.first_seed,
            game_seed: args.game_seed,
            threads,
            progress: !args.quiet,
            ..Config::new(a, b, args.deals, args.games)
        };
        let report = run(&cfg)?;
        println!("{}", report.to_text());
        reports.push(report);
    }
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&reports).map_err(|e| e.to_string())?;
        std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("JSON written to {}", path.display());
    }
    Ok(())
}
