//! The lean-frames comparison (`scripts/bench.sh`, scenario `lean`): an
//! older server and this one in alternating rounds, side by side, with the
//! echo ceiling of each round.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;

use super::{CapacityReport, Report};

/// The targets of the comparison.
pub mod target {
    /// Mean bytes of a change frame per connection.
    pub const BYTES_PER_CHANGE: f64 = 250.0;
    /// Accepted actions per second at think 0, new over old.
    pub const ACTIONS_RATIO: f64 = 1.5;
    /// Frames per second as a share of the echo ceiling.
    pub const ECHO_SHARE: f64 = 0.60;
    /// Server CPU per action, new over old (halved).
    pub const CPU_RATIO: f64 = 0.5;
}

/// One round's figures.
#[derive(Debug, Clone)]
struct Round {
    base: Report,
    new: Report,
    base_slow: Option<Report>,
    new_slow: Option<Report>,
    echo: Option<Report>,
}

fn read<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("reading {}", path.display()))
}

fn step(path: &Path) -> Option<Report> {
    read::<CapacityReport>(path).ok()?.steps.into_iter().next().map(|s| s.report)
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(v[(v.len() - 1) / 2])
}

fn show(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"))
}

/// The Markdown comparison of the rounds in `dir`.
///
/// # Errors
/// When a round's think-0 reports are missing or unreadable.
pub fn report(dir: &Path, rounds: usize) -> anyhow::Result<String> {
    let mut all = Vec::new();
    for r in 1..=rounds {
        let file = |name: &str| dir.join(format!("lean-{name}-{r}.json"));
        all.push(Round {
            base: read(&file("base-think0"))?,
            new: read(&file("new-think0"))?,
            base_slow: step(&file("base-think1000")),
            new_slow: step(&file("new-think1000")),
            echo: read(&file("echo")).ok(),
        });
    }
    let cpu = |r: &Report| r.server_cpu_us_per_action;
    let share = |r: &Round, x: &Report| r.echo.as_ref().map(|e| x.frames_per_s / e.frames_per_s);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| round | actions/s old → new (×) | bytes per change old → new | CPU µs/action think 0 old → new | CPU µs/action 1 s think old → new | p99 ms think 0 old → new | frames/s share of echo old → new | errors old / new |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    for (i, r) in all.iter().enumerate() {
        let slow = |x: &Option<Report>| x.as_ref().and_then(cpu);
        let errors = |x: &Report, s: &Option<Report>| {
            x.errors + x.disconnects + x.setup_failures + s.as_ref().map_or(0, |s| s.errors + s.disconnects)
        };
        let _ = writeln!(
            out,
            "| {} | {:.0} → {:.0} ({:.2}×) | {:.0} → {:.0} | {} → {} | {} → {} | {:.1} → {:.1} | {} → {} | {} / {} |",
            i + 1,
            r.base.actions_per_s,
            r.new.actions_per_s,
            r.new.actions_per_s / r.base.actions_per_s,
            r.base.bytes_per_update,
            r.new.bytes_per_update,
            show(cpu(&r.base), 1),
            show(cpu(&r.new), 1),
            show(slow(&r.base_slow), 1),
            show(slow(&r.new_slow), 1),
            r.base.latency_ms.p99,
            r.new.latency_ms.p99,
            show(share(r, &r.base).map(|s| s * 100.0), 0).to_owned() + "%",
            show(share(r, &r.new).map(|s| s * 100.0), 0).to_owned() + "%",
            errors(&r.base, &r.base_slow),
            errors(&r.new, &r.new_slow),
        );
    }
    let m = |f: &dyn Fn(&Round) -> Option<f64>| median(all.iter().filter_map(f).collect());
    let actions_ratio = m(&|r| Some(r.new.actions_per_s / r.base.actions_per_s));
    let bytes = m(&|r| Some(r.new.bytes_per_update));
    let bytes_old = m(&|r| Some(r.base.bytes_per_update));
    let echo_share = m(&|r| share(r, &r.new));
    let cpu0 = m(&|r| Some(cpu(&r.new)? / cpu(&r.base)?));
    let cpu0_new = m(&|r| cpu(&r.new));
    let cpu1 = m(&|r| Some(r.new_slow.as_ref().and_then(cpu)? / r.base_slow.as_ref().and_then(cpu)?));
    let cpu1_new = m(&|r| r.new_slow.as_ref().and_then(cpu));
    let verdict = |ok: Option<bool>| match ok {
        Some(true) => "met",
        Some(false) => "not met",
        None => "not measured",
    };
    let _ = writeln!(out, "\nMedians over {rounds} rounds:\n");
    let _ = writeln!(out, "| figure | measured | target | verdict |");
    let _ = writeln!(out, "|---|---|---|---|");
    let _ = writeln!(
        out,
        "| bytes per change per connection | {} B (old: whole views, {} B) | mean ≤ {:.0} B | {} |",
        show(bytes, 0),
        show(bytes_old, 0),
        target::BYTES_PER_CHANGE,
        verdict(bytes.map(|b| b <= target::BYTES_PER_CHANGE))
    );
    let _ = writeln!(
        out,
        "| accepted actions/s at think 0, new / old | {}× | ≥ {}× | {} |",
        show(actions_ratio, 2),
        target::ACTIONS_RATIO,
        verdict(actions_ratio.map(|r| r >= target::ACTIONS_RATIO))
    );
    let _ = writeln!(
        out,
        "| frames/s as a share of the echo ceiling | {}% | ≥ {:.0}% | {} |",
        show(echo_share.map(|s| s * 100.0), 0),
        target::ECHO_SHARE * 100.0,
        verdict(echo_share.map(|s| s >= target::ECHO_SHARE))
    );
    let _ = writeln!(
        out,
        "| server CPU per action at think 0, new / old | {} ({} µs) | ≤ {} | {} |",
        show(cpu0, 2),
        show(cpu0_new, 1),
        target::CPU_RATIO,
        verdict(cpu0.map(|r| r <= target::CPU_RATIO))
    );
    let _ = writeln!(
        out,
        "| server CPU per action at 1 s think, new / old | {} ({} µs) | ≤ {} | {} |",
        show(cpu1, 2),
        show(cpu1_new, 1),
        target::CPU_RATIO,
        verdict(cpu1.map(|r| r <= target::CPU_RATIO))
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_take_the_middle_and_skip_what_is_missing() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0]), Some(1.0));
        assert_eq!(median(vec![f64::NAN]), None);
        assert_eq!(show(None, 1), "-");
    }
}
