//! Change frames against snapshots: over random matches under every rule
//! set, with timeouts, drops, returns and a player leaving, every seat and a
//! spectator apply each change frame to the view they hold, and after every
//! step ask for a snapshot (`sync`), which must equal that view exactly.

use spades_engine::{BagPenalty, FailedNil, NilRule, SpadesLead};
use spades_protocol::TablePhase;

use super::*;

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

impl Fake {
    /// Asks for a snapshot and checks it against the view this connection
    /// built from change frames.
    async fn check(&mut self, h: &Harness, what: &str) {
        self.drain();
        self.checking = true;
        h.handle
            .send(TableCommand::Act { conn: self.id, req: None, act: Act::Sync, resent: false })
            .await
            .unwrap();
        settle().await;
        self.drain();
        assert!(!self.checking, "{what}: no snapshot came back");
    }
}

fn random_legal(v: &TableView, rng: &mut Rng) -> Action {
    match v.game.as_ref().unwrap().legal {
        Legal::Bid { min, max } => Action::Bid(min + rng.below(u64::from(max - min + 1).min(6)) as u8),
        Legal::Play { cards } => {
            let all: Vec<_> = cards.iter().collect();
            Action::Play(all[rng.below(all.len() as u64) as usize])
        }
        Legal::None => panic!("nothing legal"),
    }
}

/// Plays one match at random; returns the number of change frames checked.
async fn random_match(rules: Rules, seed: u64, record: bool) -> (usize, Vec<Fake>) {
    let options = TableOptions { rules, ..TableOptions::default() };
    let (h, mut fakes) = started(options, settings()).await;
    let mut spectator = Fake::new(4096);
    spectator.attach(&h, Attach::Watch { account: None }).await;
    fakes.push(spectator);
    for f in &mut fakes {
        f.record = record;
        // A recording starts with a snapshot.
        f.check(&h, "start").await;
    }
    let mut rng = Rng(seed);
    let mut left = false;
    for step in 0..6000 {
        let v = fakes[4].view();
        if v.phase == TablePhase::Finished {
            break;
        }
        let what = format!("seed {seed} step {step}");
        let turn = v.game.as_ref().and_then(|g| g.turn);
        let roll = rng.below(100);
        match (roll, turn) {
            // The clock runs out.
            (0..=3, Some(_)) if v.clock.is_some() => {
                let c = v.clock.unwrap();
                sleep(Duration::from_millis(c.deadline - v.server_time + 10)).await;
                settle().await;
            }
            // A seat drops and comes back.
            (4..=6, _) => {
                let i = rng.below(4) as usize;
                fakes[i].detach(&h).await;
                let token = fakes[i].token.clone().unwrap();
                fakes[i].attach(&h, Attach::Resume { token, account: None }).await;
            }
            // A seat drops and stays away for a while.
            (7, _) => {
                let i = rng.below(4) as usize;
                fakes[i].detach(&h).await;
                sleep(Duration::from_secs(20)).await;
                settle().await;
                let token = fakes[i].token.clone().unwrap();
                fakes[i].attach(&h, Attach::Resume { token, account: None }).await;
            }
            // A player leaves for good (once, never North).
            (8, _) if !left && seed.is_multiple_of(3) => {
                left = true;
                let i = 1 + rng.below(3) as usize;
                fakes[i].act(&h, Act::Leave).await;
            }
            (_, Some(t)) => {
                let i = usize::from(t.index());
                let seat = &v.seats[i];
                if seat.status == SeatStatus::Autopilot {
                    fakes[i].act(&h, Act::TakeOver).await;
                } else if seat.status == SeatStatus::Present {
                    let a = random_legal(&fakes[i].view(), &mut rng);
                    fakes[i].act(&h, act_of(a)).await;
                } else {
                    // A bot or the autopilot plays it.
                    sleep(Duration::from_secs(3)).await;
                    settle().await;
                }
            }
            (_, None) => {
                sleep(Duration::from_secs(1)).await;
                settle().await;
            }
        }
        // A recording keeps to the frames a client gets without asking.
        if !record {
            for f in &mut fakes {
                f.check(&h, &what).await;
            }
        }
    }
    for f in &mut fakes {
        f.check(&h, "the end").await;
    }
    assert_eq!(fakes[4].view().phase, TablePhase::Finished, "seed {seed}: the match did not end");
    let changes = fakes.iter().map(|f| f.changes).sum();
    (changes, fakes)
}

fn every_rule_set() -> Vec<Rules> {
    let mut all = Vec::new();
    for nil in [NilRule::Hundred, NilRule::Fifty, NilRule::Off] {
        for bag_penalty in [BagPenalty::TenForHundred, BagPenalty::FiveForFifty, BagPenalty::Off] {
            for failed_nil in [FailedNil::BagsOnly, FailedNil::CountForPartner] {
                for spades_lead in [SpadesLead::AfterBroken, SpadesLead::AnyTime] {
                    all.push(Rules {
                        match_end: MatchEnd::Hands(2),
                        nil,
                        bag_penalty,
                        failed_nil,
                        spades_lead,
                        mercy: all.len() % 2 == 0,
                    });
                }
            }
        }
    }
    all
}

#[tokio::test(start_paused = true)]
async fn change_frames_rebuild_every_snapshot_under_every_rule_set() {
    let mut checked = 0;
    for (i, rules) in every_rule_set().into_iter().enumerate() {
        let (changes, _) = random_match(rules, 1000 + i as u64, false).await;
        checked += changes;
    }
    // A match to a target score, long enough for bags and several hands.
    let rules = Rules { match_end: MatchEnd::Target(200), ..Rules::default() };
    for seed in [3, 4] {
        checked += random_match(rules, seed, false).await.0;
    }
    assert!(checked > 10_000, "only {checked} change frames were checked");
}

/// Frames as a seat and a spectator receive them, with the view after
/// each, for the web client's test of the same rules
/// (`tests/browser/lean.test.mjs`).
#[tokio::test(start_paused = true)]
async fn frames_for_the_web_client_test() {
    let rules = Rules { match_end: MatchEnd::Hands(2), ..Rules::default() };
    let (changes, fakes) = random_match(rules, 3, true).await;
    assert!(changes > 100);
    let audiences = ["north", "east", "south", "west", "spectator"];
    let sequences: Vec<serde_json::Value> = fakes
        .iter()
        .zip(audiences)
        .filter(|(_, a)| matches!(*a, "north" | "spectator"))
        .map(|(f, audience)| {
            let frames: Vec<serde_json::Value> =
                f.frames.iter().map(|(raw, _)| serde_json::from_str(raw).unwrap()).collect();
            let snapshots: Vec<&TableView> = f.frames.iter().map(|(_, v)| v).collect();
            serde_json::json!({ "audience": audience, "frames": frames, "snapshots": snapshots })
        })
        .collect();
    // Every frame a seat received holds no card of another seat's hand at
    // that `seq` (each seat's own views say what it held).
    let seq_of = |raw: &str| match serde_json::from_str::<ServerMessage>(raw).unwrap() {
        ServerMessage::View { seq, .. } | ServerMessage::Change { seq, .. } => seq,
        _ => unreachable!("only views and changes are recorded"),
    };
    let mut hands = std::collections::HashMap::new();
    for (i, f) in fakes[..4].iter().enumerate() {
        for (raw, view) in &f.frames {
            if let Some(hand) = view.game.as_ref().and_then(|g| g.hand) {
                hands.insert((seq_of(raw), i), hand);
            }
        }
    }
    let mut checked = 0;
    for (i, f) in fakes[..4].iter().enumerate() {
        for (raw, _) in f.frames.iter().filter(|(raw, _)| raw.starts_with(r#"{"type":"change","#)) {
            let seq = seq_of(raw);
            for j in (0..4).filter(|&j| j != i) {
                let Some(other) = hands.get(&(seq, j)) else { continue };
                for card in *other {
                    assert!(
                        !raw.contains(&format!("\"{card}\"")),
                        "seat {i} saw {card} of seat {j} at {seq}: {raw}"
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "only {checked} frames were checked for other seats' cards");
    // Written where the web client's test looks (`target/`, as cargo runs
    // before the browser suite), fresh from this server at every run.
    let dir = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || concat!(env!("CARGO_MANIFEST_DIR"), "/../../target").into(),
        std::path::PathBuf::from,
    );
    std::fs::create_dir_all(&dir).unwrap();
    let text = serde_json::to_string(&serde_json::json!({ "sequences": sequences })).unwrap();
    std::fs::write(dir.join("lean-frames.json"), text).unwrap();
}
