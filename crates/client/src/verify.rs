//! Checks a finished match's record against its fair-deal commitment: the
//! logic behind `spades-verify`, and the same checks, by the same names, as
//! the web client's "Verify the deals" (`web/js/verify.js`). The scheme is
//! described in `docs/fairness.md`.
//!
//! ```
//! use spades_client::verify::{Expect, verify};
//! # fn demo(record: &spades_client::protocol::MatchRecord) {
//! let report = verify(record, &Expect::default());
//! for check in &report.checks {
//!     println!("{} {}: {}", if check.passed { "PASS" } else { "FAIL" }, check.name, check.detail);
//! }
//! assert!(report.passed());
//! # }
//! ```

use serde::Serialize;
use spades_engine::{BySeat, CardSet, ClientSeed, Commitment, FAIR_VERSION, FairSeeds, Seat};
use spades_protocol::MatchRecord;

/// What the verifier should also hold the record to: what this client saw
/// and sent, if it played.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Expect {
    /// The commitment shown before this client sent its seed.
    pub commitment: Option<Commitment>,
    /// The seed this client sent.
    pub client_seed: Option<ClientSeed>,
}

/// One check and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// A short stable name: `fair`, `revealed`, `commitment`,
    /// `your commitment`, `your seed`, `first dealer`, `hand N`.
    pub name: String,
    /// True when it passed.
    pub passed: bool,
    /// What was checked, in plain words.
    pub detail: String,
}

/// Every check made on one record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// True when every check passed (and there was something to check).
    pub passed: bool,
    /// The checks, in order.
    pub checks: Vec<Check>,
}

impl Report {
    /// True when every check passed.
    pub fn passed(&self) -> bool {
        self.passed
    }
}

fn check(checks: &mut Vec<Check>, name: impl Into<String>, passed: bool, detail: impl Into<String>) {
    checks.push(Check { name: name.into(), passed, detail: detail.into() });
}

/// Recomputes the commitment and every finished hand's deal from the
/// record's seeds and compares them with what was played.
pub fn verify(record: &MatchRecord, expect: &Expect) -> Report {
    let mut checks = Vec::new();
    let done = |checks: Vec<Check>| Report { passed: checks.iter().all(|c| c.passed), checks };
    let Some(fair) = record.fair.as_ref().filter(|f| f.version == FAIR_VERSION) else {
        check(&mut checks, "fair", false, "the record has no fair-deal seeds of version 1");
        return done(checks);
    };
    check(&mut checks, "fair", true, format!("fair-deal version {FAIR_VERSION}"));
    let Some(server) = fair.server_seed else {
        check(&mut checks, "revealed", false, "the server seed is revealed only once the match is over");
        return done(checks);
    };
    check(&mut checks, "revealed", true, "the server seed is revealed");
    let computed = server.commitment();
    check(
        &mut checks,
        "commitment",
        computed == fair.commitment,
        if computed == fair.commitment {
            format!("SHA-256 of the server seed is the published commitment {}", fair.commitment)
        } else {
            format!(
                "SHA-256 of the server seed is {computed}, not the published commitment {}",
                fair.commitment
            )
        },
    );
    if let Some(seen) = expect.commitment {
        let ok = seen == fair.commitment;
        check(
            &mut checks,
            "your commitment",
            ok,
            if ok {
                "the commitment is the one shown before your seed was sent".to_owned()
            } else {
                format!("you were shown the commitment {seen}, the record has {}", fair.commitment)
            },
        );
    }
    if let Some(mine) = expect.client_seed {
        let at = Seat::ALL.into_iter().find(|s| fair.client_seeds[usize::from(s.index())] == Some(mine));
        check(
            &mut checks,
            "your seed",
            at.is_some(),
            match at {
                Some(seat) => format!("your seed is {seat}'s"),
                None => "your seed is not among the players' seeds".to_owned(),
            },
        );
    }
    let seeds = FairSeeds::new(*record.table.as_bytes(), server, BySeat(fair.client_seeds));
    let first = seeds.first_dealer();
    if let Some(h) = record.hands.first() {
        check(
            &mut checks,
            "first dealer",
            h.result.dealer == first,
            format!("the seeds make {first} the first dealer; the record says {}", h.result.dealer),
        );
    }
    for (i, h) in record.hands.iter().enumerate() {
        let n = h.result.hand_number;
        let name = format!("hand {n}");
        let dealer = first.offset((i % 4) as u8);
        if usize::from(n) != i + 1 || h.result.dealer != dealer {
            check(&mut checks, name, false, format!("hand {n} should be hand {} dealt by {dealer}", i + 1));
            continue;
        }
        let dealt = seeds.deal(n, dealer);
        let mut played = BySeat([CardSet::EMPTY; 4]);
        for p in &h.plays {
            played[p.seat].insert(p.card);
        }
        let wrong: Vec<Seat> = Seat::ALL.into_iter().filter(|&s| played[s] != dealt[s]).collect();
        check(
            &mut checks,
            name,
            wrong.is_empty() && h.plays.len() == 52,
            if wrong.is_empty() && h.plays.len() == 52 {
                format!("every seat played exactly the 13 cards the seeds dealt it (dealer {dealer})")
            } else {
                let seats: Vec<&str> = wrong.iter().map(|s| s.name()).collect();
                format!("the cards played differ from the seeds' deal for {}", seats.join(", "))
            },
        );
    }
    done(checks)
}

#[cfg(test)]
mod tests {
    use spades_engine::{Action, Legal, Match, MatchEnd, Rules, ServerSeed};
    use spades_protocol::{ActionSource, Fairness, HandRecord, PlayRecord, TableOptions};
    use uuid::Uuid;

    use super::*;

    /// A finished fair match's record, built by playing it out.
    fn record(client: u8) -> MatchRecord {
        let table = Uuid::from_u128(0x67e5_5044_10b1_426f_9247_bb68_0e5f_e0c8);
        let clients = BySeat([
            Some(ClientSeed::from_bytes([client; 32])),
            None,
            Some(ClientSeed::from_bytes([9; 32])),
            None,
        ]);
        let seeds = FairSeeds::new(*table.as_bytes(), ServerSeed::from_bytes([4; 32]), clients);
        let rules = Rules { match_end: MatchEnd::Hands(5), ..Rules::default() };
        let mut m = Match::fair(rules, seeds.clone());
        let mut hands = Vec::new();
        let mut plays = Vec::new();
        while let Some(seat) = m.turn() {
            let action = match m.legal_moves() {
                Legal::Bid { .. } => Action::Bid(3),
                Legal::Play { cards } => Action::Play(cards.first().unwrap()),
                Legal::None => unreachable!(),
            };
            let before = m.results().len();
            m.apply(seat, action).unwrap();
            if let Action::Play(card) = action {
                plays.push(PlayRecord { seat, card, source: ActionSource::Player, at: 0 });
            }
            if m.results().len() > before {
                hands.push(HandRecord {
                    result: m.results().last().unwrap().clone(),
                    bid_sources: [ActionSource::Player; 4],
                    plays: std::mem::take(&mut plays),
                });
            }
        }
        MatchRecord {
            table,
            name: "t".into(),
            options: TableOptions { rules, ..TableOptions::default() },
            seats: Vec::new(),
            created_at: 0,
            finished: true,
            hands,
            current_hand: None,
            result: m.result().copied(),
            scores: m.scores().0,
            actions: m.moves().len(),
            seed: Some(m.seed()),
            fair: Some(Fairness {
                version: 1,
                commitment: seeds.commitment(),
                client_seeds: seeds.client_seeds().0,
                fixed: true,
                server_seed: Some(*seeds.server_seed()),
            }),
        }
    }

    #[test]
    fn a_good_record_passes_every_check() {
        let r = record(1);
        let mine = ClientSeed::from_bytes([1; 32]);
        let commitment = r.fair.as_ref().unwrap().commitment;
        let report = verify(&r, &Expect { commitment: Some(commitment), client_seed: Some(mine) });
        assert!(report.passed(), "{report:#?}");
        let names: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names[..6],
            ["fair", "revealed", "commitment", "your commitment", "your seed", "first dealer"]
        );
        assert_eq!(names.len(), 6 + r.hands.len());
    }

    #[test]
    fn an_altered_server_seed_fails() {
        let mut r = record(1);
        r.fair.as_mut().unwrap().server_seed = Some(ServerSeed::from_bytes([5; 32]));
        let report = verify(&r, &Expect::default());
        assert!(!report.passed());
        let failed: Vec<&str> = report.checks.iter().filter(|c| !c.passed).map(|c| c.name.as_str()).collect();
        assert!(failed.contains(&"commitment"), "{failed:?}");
        assert!(failed.iter().filter(|n| n.starts_with("hand ")).count() >= 4, "{failed:?}");
    }

    #[test]
    fn an_altered_client_seed_or_commitment_fails() {
        // The deals were made with another seed than the record names.
        let mut r = record(1);
        r.fair.as_mut().unwrap().client_seeds[0] = Some(ClientSeed::from_bytes([2; 32]));
        let report =
            verify(&r, &Expect { client_seed: Some(ClientSeed::from_bytes([1; 32])), ..Expect::default() });
        let failed: Vec<&str> = report.checks.iter().filter(|c| !c.passed).map(|c| c.name.as_str()).collect();
        assert!(failed.contains(&"your seed"), "{failed:?}");
        assert_eq!(failed.iter().filter(|n| n.starts_with("hand ")).count(), r.hands.len(), "{failed:?}");
        // A commitment other than the one the player saw.
        let r = record(1);
        let seen = ServerSeed::from_bytes([6; 32]).commitment();
        let report = verify(&r, &Expect { commitment: Some(seen), ..Expect::default() });
        let failed: Vec<&str> = report.checks.iter().filter(|c| !c.passed).map(|c| c.name.as_str()).collect();
        assert_eq!(failed, ["your commitment"]);
    }

    #[test]
    fn a_swapped_card_fails_its_hand() {
        let mut r = record(1);
        let plays = &mut r.hands[2].plays;
        let (a, b) = (plays[0], plays[1]);
        plays[0].card = b.card;
        plays[1].card = a.card;
        let report = verify(&r, &Expect::default());
        let failed: Vec<&str> = report.checks.iter().filter(|c| !c.passed).map(|c| c.name.as_str()).collect();
        assert_eq!(failed, ["hand 3"]);
    }

    #[test]
    fn unfinished_or_old_records_say_why() {
        let mut r = record(1);
        r.fair.as_mut().unwrap().server_seed = None;
        let report = verify(&r, &Expect::default());
        assert!(!report.passed());
        assert_eq!(report.checks.last().unwrap().name, "revealed");
        r.fair = None;
        let report = verify(&r, &Expect::default());
        assert_eq!(report.checks.len(), 1);
        assert!(!report.passed());
    }
}
