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
    /// The seat this client played: its seed must be that seat's.
    pub seat: Option<Seat>,
}

/// One check and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// A short stable name: `fair`, `revealed`, `commitment`,
    /// `your commitment`, `your seed`, `seat seeds`, `bots`, `complete`,
    /// `first dealer`, `hand N`.
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
        let (passed, detail) = match expect.seat {
            None => {
                (false, "say which seat you played (--seat): a seed counts only at its own seat".to_owned())
            }
            Some(seat) => {
                let at = fair.client_seeds[usize::from(seat.index())];
                if at == Some(mine) {
                    (true, format!("your seed is {seat}'s, your seat's"))
                } else {
                    let other = Seat::ALL
                        .into_iter()
                        .find(|s| fair.client_seeds[usize::from(s.index())] == Some(mine));
                    match other {
                        Some(o) => (false, format!("your seed is at {o}, not at your seat {seat}")),
                        None => (false, format!("{seat}, your seat, does not have the seed you sent")),
                    }
                }
            }
        };
        check(&mut checks, "your seed", passed, detail);
    }
    // Every seed is its own seat's: it matches that seat's commitment, made
    // before any seed was shown. A commitment without a seed was withheld.
    let table_id = *record.table.as_bytes();
    let mut wrong = Vec::new();
    let mut withheld = Vec::new();
    for seat in Seat::ALL {
        let i = usize::from(seat.index());
        match (fair.client_seeds[i], fair.client_commitments[i]) {
            (Some(seed), Some(c)) if seed.commitment(table_id, seat) == c => {}
            (Some(_), _) => wrong.push(seat.name()),
            (None, Some(_)) => withheld.push(seat.name()),
            (None, None) => {}
        }
    }
    check(
        &mut checks,
        "seat seeds",
        wrong.is_empty(),
        if wrong.is_empty() {
            let mut d =
                "every seed matches the commitment its own seat made before any seed was shown".to_owned();
            if !withheld.is_empty() {
                d.push_str(&format!(
                    " ({} committed and did not reveal: dealt without a seed)",
                    withheld.join(", ")
                ));
            }
            d
        } else {
            format!("the seeds of {} do not match their seats' commitments", wrong.join(", "))
        },
    );
    // Bots send no seed: a seed at a bot's seat came from the server.
    let bots: Vec<&str> = record
        .seats
        .iter()
        .filter(|s| s.kind == spades_protocol::SeatKind::Bot)
        .filter(|s| {
            let i = usize::from(s.seat.index());
            fair.client_seeds[i].is_some() || fair.client_commitments[i].is_some()
        })
        .map(|s| s.seat.name())
        .collect();
    check(
        &mut checks,
        "bots",
        bots.is_empty(),
        if bots.is_empty() {
            "no bot's seat has a seed".to_owned()
        } else {
            format!(
                "a bot's seat has a seed, which only the server could have put there: {}",
                bots.join(", ")
            )
        },
    );
    // The record holds every hand: 1 to the last one played, and its
    // scores are the last hand's.
    let played = if record.finished {
        record.result.as_ref().map_or(0, |r| usize::from(r.hands_played))
    } else {
        record
            .current_hand
            .as_ref()
            .map_or(record.hands.len(), |h| usize::from(h.hand_number.saturating_sub(1)))
    };
    let numbers_ok = record.hands.iter().enumerate().all(|(i, h)| usize::from(h.result.hand_number) == i + 1);
    let scores_ok = record.hands.last().map_or([0, 0], |h| h.result.scores().0) == record.scores
        && record.result.as_ref().is_none_or(|r| r.scores.0 == record.scores);
    let complete =
        record.hands.len() == played && numbers_ok && scores_ok && (played > 0 || !record.finished);
    check(
        &mut checks,
        "complete",
        complete,
        if complete {
            format!("the record holds every hand, 1 to {played}, and its scores are the last hand's")
        } else if !numbers_ok {
            "the record's hands are not numbered 1, 2, 3 … in order".to_owned()
        } else if !scores_ok {
            "the record's scores are not those of its last hand".to_owned()
        } else {
            format!("the record holds {} hands of the {played} played", record.hands.len())
        },
    );
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
    use spades_protocol::{
        ActionSource, Fairness, HandRecord, PlayRecord, RecordSeat, SeatKind, TableOptions,
    };
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
        let (m, hands) = play_out(rules, seeds.clone());
        MatchRecord {
            abandoned: false,
            table,
            name: "t".into(),
            options: TableOptions { rules, ..TableOptions::default() },
            seats: Seat::ALL
                .into_iter()
                .map(|seat| RecordSeat {
                    seat,
                    name: seat.name().into(),
                    kind: if matches!(seat, Seat::North | Seat::South) {
                        SeatKind::Human
                    } else {
                        SeatKind::Bot
                    },
                    account: None,
                    left: false,
                    players: Vec::new(),
                })
                .collect(),
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
                client_commitments: BySeat::new_with(|s| {
                    seeds.client_seeds()[s].map(|c| c.commitment(*table.as_bytes(), s))
                })
                .0,
                fixed: true,
                server_seed: Some(*seeds.server_seed()),
                reveal_by: None,
            }),
        }
    }

    /// A fair match under `seeds` played to its end (bid 3, lowest legal
    /// card), with its hands as the record holds them.
    fn play_out(rules: Rules, seeds: FairSeeds) -> (Match, Vec<HandRecord>) {
        let mut m = Match::fair(rules, seeds);
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
        (m, hands)
    }

    fn failed(report: &Report) -> Vec<&str> {
        report.checks.iter().filter(|c| !c.passed).map(|c| c.name.as_str()).collect()
    }

    /// The same match re-made with `clients` as its seeds (a self-consistent
    /// record, as a dishonest server could make one).
    fn remade(clients: BySeat<Option<ClientSeed>>) -> MatchRecord {
        let mut r = record(1);
        let table = r.table;
        let seeds = FairSeeds::new(*table.as_bytes(), ServerSeed::from_bytes([4; 32]), clients);
        let rules = r.options.rules;
        let (m, hands) = play_out(rules, seeds.clone());
        r.hands = hands;
        r.result = m.result().copied();
        r.scores = m.scores().0;
        let fair = r.fair.as_mut().unwrap();
        fair.client_seeds = clients.0;
        fair.client_commitments =
            BySeat::new_with(|s| clients[s].map(|c| c.commitment(*table.as_bytes(), s))).0;
        r
    }

    #[test]
    fn a_record_missing_hands_is_refused() {
        let mut r = record(1);
        r.hands.pop();
        assert!(failed(&verify(&r, &Expect::default())).contains(&"complete"));
        let mut r = record(1);
        r.hands.clear();
        let report = verify(&r, &Expect::default());
        assert!(!report.passed(), "every hand deleted: {report:#?}");
        assert!(failed(&report).contains(&"complete"));
    }

    #[test]
    fn a_seed_at_a_bots_seat_is_refused() {
        // The server kept its seed, put a seed of its choice at East (a bot)
        // and re-made the plays: self-consistent, but East sends no seed.
        let r = remade(BySeat([
            Some(ClientSeed::from_bytes([1; 32])),
            Some(ClientSeed::from_bytes([0xee; 32])),
            Some(ClientSeed::from_bytes([9; 32])),
            None,
        ]));
        let expect = Expect {
            commitment: Some(r.fair.as_ref().unwrap().commitment),
            client_seed: Some(ClientSeed::from_bytes([1; 32])),
            seat: Some(Seat::North),
        };
        assert_eq!(failed(&verify(&r, &expect)), ["bots"]);
    }

    #[test]
    fn a_players_seed_must_be_at_its_own_seat() {
        // North's seed moved to West, and North's slot chosen freely.
        let north = ClientSeed::from_bytes([1; 32]);
        let mut r = remade(BySeat([
            Some(ClientSeed::from_bytes([0x77; 32])),
            None,
            Some(ClientSeed::from_bytes([9; 32])),
            Some(north),
        ]));
        r.seats[3].kind = SeatKind::Human;
        let expect = Expect { client_seed: Some(north), seat: Some(Seat::North), ..Expect::default() };
        let report = verify(&r, &expect);
        assert_eq!(failed(&report), ["your seed"]);
        let detail = &report.checks.iter().find(|c| c.name == "your seed").unwrap().detail;
        assert!(detail.contains("West") && detail.contains("North"), "{detail}");
        // Without the seat the seed cannot be placed: not a pass.
        let report = verify(&r, &Expect { client_seed: Some(north), ..Expect::default() });
        assert_eq!(failed(&report), ["your seed"]);
        // A seed that is not its seat's commitment's.
        let mut r = record(1);
        r.fair.as_mut().unwrap().client_commitments.swap(0, 2);
        assert!(failed(&verify(&r, &Expect::default())).contains(&"seat seeds"));
    }

    #[test]
    fn a_good_record_passes_every_check() {
        let r = record(1);
        let mine = ClientSeed::from_bytes([1; 32]);
        let commitment = r.fair.as_ref().unwrap().commitment;
        let report = verify(
            &r,
            &Expect { commitment: Some(commitment), client_seed: Some(mine), seat: Some(Seat::North) },
        );
        assert!(report.passed(), "{report:#?}");
        let names: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names[..9],
            [
                "fair",
                "revealed",
                "commitment",
                "your commitment",
                "your seed",
                "seat seeds",
                "bots",
                "complete",
                "first dealer"
            ]
        );
        assert_eq!(names.len(), 9 + r.hands.len());
        // A seat that committed and did not reveal is said, not failed.
        let mut r = record(1);
        r.fair.as_mut().unwrap().client_commitments[1] =
            Some(ClientSeed::from_bytes([3; 32]).commitment(*r.table.as_bytes(), Seat::East));
        r.seats[1].kind = SeatKind::Human;
        let report = verify(&r, &Expect::default());
        assert!(report.passed(), "{report:#?}");
        assert!(report.checks.iter().any(|c| c.name == "seat seeds" && c.detail.contains("East committed")));
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
        let report = verify(
            &r,
            &Expect {
                client_seed: Some(ClientSeed::from_bytes([1; 32])),
                seat: Some(Seat::North),
                ..Expect::default()
            },
        );
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
