//! Engine benchmarks: a full random hand, and `legal_moves` alone.
//!
//! Run with `cargo bench -p spades-engine`. Figures are in the crate README.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use spades_engine::{Action, ByTeam, Events, Hand, HandResult, Legal, Match, MatchEnd, Rules, Seat, deal};

/// A tiny xorshift for choosing moves, so the benchmark measures the engine
/// and not the move picker.
struct Pick(u64);

impl Pick {
    fn next(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (((self.0 >> 32) * u64::from(n)) >> 32) as u32
    }
}

/// Deal, four bids, 52 random legal plays and scoring, on the `Hand` type.
fn random_hand(seed: u64, pick: &mut Pick) -> HandResult {
    let rules = Rules::default();
    // The dealer rotates; drawing it from the seed is once per match, not per hand.
    let dealer = Seat::ALL[(seed % 4) as usize];
    let mut hand = match Hand::new(rules, dealer, deal(seed, 1, dealer)) {
        Ok(h) => h,
        Err(e) => panic!("{e}"),
    };
    let mut events = Events::new();
    while let Some(seat) = hand.turn() {
        let action = match hand.legal() {
            Legal::Bid { .. } => Action::Bid(1 + pick.next(5) as u8),
            Legal::Play { cards } => {
                Action::Play(cards.nth(pick.next(cards.len())).unwrap_or_else(|| unreachable!()))
            }
            Legal::None => break,
        };
        events.clear();
        if let Err(e) = hand.apply(seat, action, &mut events) {
            panic!("{e}");
        }
    }
    let bids = hand.final_bids().unwrap_or_default();
    HandResult::score(&rules, 1, dealer, bids, *hand.tricks_won(), ByTeam([(0, 0), (0, 0)]))
}

/// The same through the `Match` API (a one-hand match), with the move log.
fn random_match_hand(seed: u64, pick: &mut Pick) -> Match {
    let rules = Rules { match_end: MatchEnd::Hands(1), ..Rules::default() };
    let mut m = Match::new(rules, seed);
    while let Some(seat) = m.turn() {
        let action = match m.legal_moves() {
            Legal::Bid { .. } => Action::Bid(1 + pick.next(5) as u8),
            Legal::Play { cards } => {
                Action::Play(cards.nth(pick.next(cards.len())).unwrap_or_else(|| unreachable!()))
            }
            Legal::None => break,
        };
        if let Err(e) = m.apply(seat, action) {
            panic!("{e}");
        }
    }
    m
}

fn benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    group.throughput(Throughput::Elements(1));
    let mut seed = 0u64;
    let mut pick = Pick(0x9E37_79B9_7F4A_7C15);
    group.bench_function("full_hand", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            black_box(random_hand(black_box(seed), &mut pick))
        })
    });
    group.bench_function("full_hand_via_match", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            black_box(random_match_hand(black_box(seed), &mut pick))
        })
    });
    group.bench_function("deal", |b| {
        b.iter(|| {
            seed = seed.wrapping_add(1);
            black_box(deal(black_box(seed), 1, Seat::North))
        })
    });
    // legal_moves alone, over positions sampled from random hands.
    let positions: Vec<Match> = (0..64u64)
        .map(|s| {
            let mut m = Match::new(Rules::default(), s);
            let mut p = Pick(s + 1);
            for _ in 0..(4 + s % 40) {
                let Some(seat) = m.turn() else { break };
                let action = match m.legal_moves() {
                    Legal::Bid { .. } => Action::Bid(3),
                    Legal::Play { cards } => {
                        Action::Play(cards.nth(p.next(cards.len())).unwrap_or_else(|| unreachable!()))
                    }
                    Legal::None => break,
                };
                let _ = m.apply(seat, action);
            }
            m
        })
        .collect();
    let mut i = 0usize;
    group.bench_function("legal_moves", |b| {
        b.iter(|| {
            i = (i + 1) % positions.len();
            black_box(black_box(&positions[i]).legal_moves())
        })
    });
    group.finish();
}

criterion_group!(engine, benches);
criterion_main!(engine);
