//! The benchmark's figures against its targets (`spades-load summary`).

use serde::{Deserialize, Serialize};

use super::{CapacityReport, MemoryReport, Report};

/// The benchmark's targets.
pub mod target {
    /// Tables held at a human pace with p99 ≤ 50 ms and no errors.
    pub const CAPACITY_TABLES: usize = 5_000;
    /// Capacity: the p99 limit, ms.
    pub const CAPACITY_P99_MS: f64 = 50.0;
    /// Accepted actions per second with 200 tables at think time 0.
    pub const THROUGHPUT_ACTIONS: f64 = 10_000.0;
    /// Throughput: the p99 limit, ms.
    pub const THROUGHPUT_P99_MS: f64 = 20.0;
    /// Server memory per idle connection, bytes.
    pub const BYTES_PER_CONNECTION: f64 = 16.0 * 1024.0;
    /// Server memory per idle table, bytes.
    pub const BYTES_PER_TABLE: f64 = 64.0 * 1024.0;
}

/// Every scenario's report (any may be missing).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Bench {
    /// The capacity search.
    pub capacity: Option<CapacityReport>,
    /// The throughput run.
    pub throughput: Option<Report>,
    /// The echo server under the same load.
    pub echo: Option<Report>,
    /// The memory measurement.
    pub memory: Option<MemoryReport>,
}

/// One line of the summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// What is measured.
    pub what: String,
    /// The measured figure.
    pub measured: String,
    /// The target.
    pub target: String,
    /// Met, not met, or no target.
    pub verdict: String,
}

fn verdict(met: bool) -> String {
    if met { "met".into() } else { "not met".into() }
}

fn thousands(n: f64) -> String {
    let s = format!("{:.0}", n.max(0.0));
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Bench {
    /// The figures against the targets.
    pub fn rows(&self) -> Vec<Row> {
        let mut rows = Vec::new();
        if let Some(c) = &self.capacity {
            let held = c.steps.iter().rev().find(|s| s.held && s.report.tables == c.largest_held);
            let next = c.steps.iter().find(|s| !s.held);
            let mut measured = match held {
                Some(s) => format!(
                    "{} tables ({} connections) held {:.0} s: p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, {:.0} actions/s, 0 errors",
                    thousands(c.largest_held as f64),
                    thousands(c.largest_held as f64 * 4.0),
                    c.hold_s,
                    s.report.latency_ms.p50,
                    s.report.latency_ms.p99,
                    s.report.latency_ms.p999,
                    s.report.actions_per_s
                ),
                None => "no step held".to_owned(),
            };
            if let Some(n) = next {
                measured.push_str(&format!(
                    "; {} tables not held (p99 {:.2} ms, {} failures)",
                    thousands(n.report.tables as f64),
                    n.report.latency_ms.p99,
                    n.report.errors + n.report.disconnects + n.report.setup_failures
                ));
            }
            let capped = c.all_held && c.largest_held < target::CAPACITY_TABLES;
            if let (true, Some(limit)) = (capped, c.open_files_limit) {
                measured.push_str(&format!(
                    "; every step held: the last is the most this machine's limit of {} open files per \
                     process allows (the server and the load generator each hold one socket per connection)",
                    thousands(limit as f64)
                ));
            }
            let met = c.largest_held >= target::CAPACITY_TABLES;
            rows.push(Row {
                what: format!("1. capacity (think {} ms, held {:.0} s)", c.think_ms, c.hold_s),
                measured,
                target: format!(
                    "≥ {} tables ({} connections), p99 ≤ {} ms, no errors",
                    thousands(target::CAPACITY_TABLES as f64),
                    thousands(target::CAPACITY_TABLES as f64 * 4.0),
                    target::CAPACITY_P99_MS
                ),
                verdict: if !met && capped { "not met (open-file limit)".into() } else { verdict(met) },
            });
        }
        if let Some(t) = &self.throughput {
            let met = t.actions_per_s >= target::THROUGHPUT_ACTIONS
                && t.latency_ms.p99 <= target::THROUGHPUT_P99_MS
                && t.clean();
            rows.push(Row {
                what: format!("2. throughput ({} tables, think {} ms)", t.tables, t.think_ms),
                measured: format!(
                    "{} accepted actions/s; p50 {:.2} ms, p99 {:.2} ms, p99.9 {:.2} ms, max {:.2} ms; {} errors",
                    thousands(t.actions_per_s),
                    t.latency_ms.p50,
                    t.latency_ms.p99,
                    t.latency_ms.p999,
                    t.latency_ms.max,
                    t.errors + t.disconnects + t.setup_failures
                ),
                target: format!(
                    "≥ {} actions/s, p99 ≤ {} ms",
                    thousands(target::THROUGHPUT_ACTIONS),
                    target::THROUGHPUT_P99_MS
                ),
                verdict: verdict(met),
            });
        }
        if let Some(m) = &self.memory {
            rows.push(Row {
                what: format!(
                    "3. memory per idle connection ({} spectators)",
                    thousands(m.connections as f64)
                ),
                measured: format!("{:.1} KiB", m.bytes_per_connection / 1024.0),
                target: "≤ 16 KiB".into(),
                verdict: verdict(m.bytes_per_connection <= target::BYTES_PER_CONNECTION),
            });
            rows.push(Row {
                what: format!("3. memory per idle table ({} lobby tables)", thousands(m.tables as f64)),
                measured: format!("{:.1} KiB", m.bytes_per_table / 1024.0),
                target: "≤ 64 KiB".into(),
                verdict: verdict(m.bytes_per_table <= target::BYTES_PER_TABLE),
            });
        }
        if let Some(e) = &self.echo {
            let mut measured = format!(
                "echo: {} round trips/s, {} frames/s, p50 {:.2} ms, p99 {:.2} ms",
                thousands(e.actions_per_s),
                thousands(e.frames_per_s),
                e.latency_ms.p50,
                e.latency_ms.p99
            );
            if let Some(t) = &self.throughput
                && e.frames_per_s > 0.0
                && e.actions_per_s > 0.0
            {
                measured.push_str(&format!(
                    "; the server's {} frames/s are {:.0}% of it (its moves/s {:.0}% of the echo's round trips/s)",
                    thousands(t.frames_per_s),
                    t.frames_per_s / e.frames_per_s * 100.0,
                    t.actions_per_s / e.actions_per_s * 100.0
                ));
            }
            rows.push(Row {
                what: format!("4. raw ceiling (tokio-tungstenite echo, {} tables' worth)", e.tables),
                measured,
                target: "(reference)".into(),
                verdict: "—".into(),
            });
        }
        rows
    }

    /// The rows as a Markdown table.
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("| scenario | measured | target | verdict |\n|---|---|---|---|\n");
        for r in self.rows() {
            out.push_str(&format!("| {} | {} | {} | {} |\n", r.what, r.measured, r.target, r.verdict));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0.0), "0");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(12_345.4), "12,345");
        assert_eq!(thousands(1_234_567.0), "1,234,567");
    }

    #[test]
    fn memory_rows_judge_the_targets() {
        let bench = Bench {
            memory: Some(MemoryReport {
                baseline_kib: 10_000,
                tables: 1000,
                with_tables_kib: 40_000,
                bytes_per_table: 30.0 * 1024.0,
                connections: 2000,
                with_connections_kib: 80_000,
                bytes_per_connection: 20.0 * 1024.0,
            }),
            ..Bench::default()
        };
        let rows = bench.rows();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].verdict, "not met");
        assert_eq!(rows[1].verdict, "met");
        assert!(bench.to_markdown().contains("| 20.0 KiB | ≤ 16 KiB | not met |"));
    }
}
