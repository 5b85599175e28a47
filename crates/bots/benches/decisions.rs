//! Decision-time benchmarks: the rule bot and the search bot on positions
//! from seeded matches (a bid, an early card, a mid-hand card).
//!
//! Run with `cargo bench -p spades-bots`. The tournament binary reports the
//! full distribution (p50/p99/max) over thousands of real decisions.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use spades_bots::{Budget, Strength, choose, decide_with};
use spades_engine::{Match, Rules, SeatView};

/// Views of the seat on turn: at the first bid, at the first card, and
/// after `cards` cards, in a match played by the rule bot.
fn positions(seed: u64) -> Vec<(&'static str, SeatView)> {
    let mut m = Match::new(Rules::default(), seed);
    let mut out = Vec::new();
    let mut plies = 0;
    while let Some(seat) = m.turn() {
        let view = m.view(Some(seat));
        match plies {
            0 => out.push(("bid", view.clone())),
            4 => out.push(("card_1", view.clone())),
            24 => out.push(("card_21", view.clone())),
            _ => {}
        }
        if plies > 24 {
            break;
        }
        let action = choose(Strength::Rule, &view, 0);
        m.apply(seat, action).expect("legal");
        plies += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let views = positions(11);
    let budget = Budget::DEFAULT.iterations_only();
    for (name, view) in &views {
        c.bench_function(&format!("rule_{name}"), |b| {
            b.iter(|| decide_with(Strength::Rule, &budget, black_box(view), 1))
        });
    }
    let mut group = c.benchmark_group("search");
    group.sample_size(10);
    for (name, view) in &views {
        group.bench_function(format!("search_{name}"), |b| {
            b.iter(|| decide_with(Strength::Search, &budget, black_box(view), 1))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
