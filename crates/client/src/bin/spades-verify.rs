//! `spades-verify`: checks that a finished match was dealt fairly, from its
//! record (a file, standard input, or the server's URL of the record).
//!
//! ```text
//! spades-verify [--json] [--commitment HEX] [--client-seed HEX --seat SEAT] [--ca-file PEM] SOURCE
//! ```
//!
//! `SOURCE` is a JSON match record (`GET /api/v1/matches/{id}`) in a file,
//! `-` for standard input, or that URL itself
//! (`http://host:8080/api/v1/matches/{id}`). The command recomputes the
//! commitment from the revealed server seed and every finished hand's deal
//! from the seeds, and says what passed. `--commitment`, `--client-seed`
//! and `--seat` also check the record against what a player saw and sent,
//! and where it sat. Exit status: 0 when every check passed, 1 when one failed, 2 when
//! the record could not be read.

use std::io::Read;
use std::process::ExitCode;

use spades_client::protocol::MatchRecord;
use spades_client::verify::{Expect, verify};
use spades_client::{Client, Tls};

const USAGE: &str =
    "usage: spades-verify [--json] [--commitment HEX] [--client-seed HEX --seat SEAT] [--ca-file PEM] SOURCE
  SOURCE       a match record (JSON) in a file, - for standard input, or its URL
               (http://host:8080/api/v1/matches/ID)
  --json       print the report as JSON
  --commitment the commitment you were shown before sending your seed
  --client-seed the seed you sent
  --seat       the seat you played (north, east, south, west): your seed must be its
  --ca-file    trust this PEM certificate authority for https (or SPADES_CA_FILE)";

#[derive(Debug, Default)]
struct Args {
    json: bool,
    expect: Expect,
    ca_file: Option<String>,
    source: Option<String>,
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut args = Args { ca_file: std::env::var("SPADES_CA_FILE").ok(), ..Args::default() };
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "--json" => args.json = true,
            "--commitment" => {
                let v = value("--commitment")?;
                args.expect.commitment = Some(v.parse().map_err(|e| format!("--commitment: {e}"))?);
            }
            "--client-seed" => {
                let v = value("--client-seed")?;
                args.expect.client_seed = Some(v.parse().map_err(|e| format!("--client-seed: {e}"))?);
            }
            "--seat" => {
                let v = value("--seat")?;
                args.expect.seat = Some(v.parse().map_err(|e| format!("--seat: {e}"))?);
            }
            "--ca-file" => args.ca_file = Some(value("--ca-file")?),
            "-h" | "--help" => return Err(String::new()),
            s if s.starts_with("--") => return Err(format!("unknown option {s}")),
            s => {
                if args.source.replace(s.to_owned()).is_some() {
                    return Err("give one SOURCE".into());
                }
            }
        }
    }
    if args.source.is_none() {
        return Err("SOURCE is missing".into());
    }
    Ok(args)
}

async fn load(source: &str, ca_file: Option<&str>) -> Result<MatchRecord, String> {
    if source.starts_with("http://") || source.starts_with("https://") {
        let (base, id) = source
            .split_once("/api/v1/matches/")
            .ok_or("a URL must be a match record's: http://host:port/api/v1/matches/ID")?;
        let id = id.trim_end_matches('/').parse().map_err(|_| format!("{id:?} is not a match id"))?;
        let mut client = Client::new(base).map_err(|e| e.to_string())?;
        if let Some(path) = ca_file {
            client = client.with_tls(Tls::with_pem_file(path.as_ref()).map_err(|e| e.to_string())?);
        }
        return client.match_record(id).await.map_err(|e| format!("could not fetch the record: {e}"));
    }
    let text = if source == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map_err(|e| format!("could not read standard input: {e}"))?;
        s
    } else {
        std::fs::read_to_string(source).map_err(|e| format!("could not read {source}: {e}"))?
    };
    serde_json::from_str(&text).map_err(|e| format!("not a match record: {e}"))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("spades-verify: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let source = args.source.as_deref().unwrap_or_default();
    let record = match load(source, args.ca_file.as_deref()).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("spades-verify: {e}");
            return ExitCode::from(2);
        }
    };
    let report = verify(&record, &args.expect);
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("spades-verify: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        println!("match {} ({})", record.table, record.name);
        for c in &report.checks {
            println!("{} {}: {}", if c.passed { "PASS" } else { "FAIL" }, c.name, c.detail);
        }
        let failed = report.checks.iter().filter(|c| !c.passed).count();
        if failed == 0 {
            println!(
                "All {} checks passed: every deal came from the committed server seed and the players' seeds.",
                report.checks.len()
            );
        } else {
            println!("{failed} of {} checks FAILED: these deals are not proven fair.", report.checks.len());
        }
    }
    if report.passed() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args, String> {
        parse_args(list.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn arguments_are_read_and_refused_plainly() {
        let a = args(&["--json", "--client-seed", &"ab".repeat(32), "record.json"]).unwrap();
        assert!(a.json);
        assert_eq!(a.source.as_deref(), Some("record.json"));
        assert!(a.expect.client_seed.is_some() && a.expect.commitment.is_none());
        assert!(args(&[]).unwrap_err().contains("SOURCE"));
        assert!(args(&["a", "b"]).unwrap_err().contains("one SOURCE"));
        assert!(args(&["--commitment", "12", "a"]).unwrap_err().contains("64 hexadecimal"));
        assert!(args(&["--frobnicate", "a"]).unwrap_err().contains("unknown option"));
        assert!(args(&["a", "--commitment"]).unwrap_err().contains("needs a value"));
    }
}
