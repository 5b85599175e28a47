//! Metrics through the `metrics` facade, exported in Prometheus format at
//! `/metrics`.
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `spades_tables` | gauge | `phase` (lobby, bidding, playing, finished) |
//! | `spades_connections` | gauge | |
//! | `spades_resident_memory_bytes` | gauge | |
//! | `spades_actions_total` | counter | `kind` (bid, play), `source` (player, timeout, autopilot, bot) |
//! | `spades_action_seconds` | histogram | time from a move arriving at its table to every view queued, storage included |
//! | `spades_storage_commit_seconds` | histogram | one group commit of the event log |
//! | `spades_storage_batch_size` | histogram | writes per group commit |
//! | `spades_errors_total` | counter | `code` (the protocol's error codes) |
//! | `spades_disconnects_total` | counter | `reason` (closed, too_slow, silent, unattached, shutdown, table_closed, protocol, error) |
//! | `spades_connections_opened_total` | counter | |
//! | `spades_tables_created_total` | counter | |
//! | `spades_rate_limited_total` | counter | `what` (tables, connections, open_connections, requests, messages) |
//! | `spades_requests_shed_total` | counter | `reason` (capacity, timeout): REST requests answered 503 |

use std::sync::OnceLock;
use std::time::Duration;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use spades_engine::Action;
use spades_protocol::{ActionSource, ErrorCode, TablePhase};

static HANDLE: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Latency buckets, in seconds: 100 µs to 2.5 s.
const SECONDS: [f64; 14] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5];

/// Installs the Prometheus recorder once per process and returns its handle
/// (`None` if another recorder was installed first).
pub fn install() -> Option<&'static PrometheusHandle> {
    HANDLE
        .get_or_init(|| {
            let builder = PrometheusBuilder::new().set_buckets(&SECONDS).ok()?.set_buckets_for_metric(
                metrics_exporter_prometheus::Matcher::Full("spades_storage_batch_size".into()),
                &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0],
            );
            builder.ok()?.install_recorder().ok()
        })
        .as_ref()
}

/// An accepted action.
pub fn action(action: Action, source: ActionSource) {
    let kind = match action {
        Action::Bid(_) => "bid",
        Action::Play(_) => "play",
    };
    let source = match source {
        ActionSource::Player => "player",
        ActionSource::Timeout => "timeout",
        ActionSource::Autopilot => "autopilot",
        ActionSource::Bot => "bot",
    };
    metrics::counter!("spades_actions_total", "kind" => kind, "source" => source).increment(1);
}

/// Time from a move arriving at its table to every view queued.
pub fn action_latency(elapsed: Duration) {
    metrics::histogram!("spades_action_seconds").record(elapsed.as_secs_f64());
}

/// A refusal sent to a client.
pub fn error(code: ErrorCode) {
    metrics::counter!("spades_errors_total", "code" => code.as_str()).increment(1);
}

/// A connection ended.
pub fn disconnect(reason: &'static str) {
    metrics::counter!("spades_disconnects_total", "reason" => reason).increment(1);
}

/// A connection opened.
pub fn connection_opened() {
    metrics::counter!("spades_connections_opened_total").increment(1);
}

/// A table was created.
pub fn table_created() {
    metrics::counter!("spades_tables_created_total").increment(1);
}

/// A request refused by a rate limit.
pub fn rate_limited(what: &'static str) {
    metrics::counter!("spades_rate_limited_total", "what" => what).increment(1);
}

/// Sets the gauges read at scrape time.
pub fn gauges(phases: &[TablePhase], connections: usize) {
    for (phase, name) in [
        (TablePhase::Lobby, "lobby"),
        (TablePhase::Bidding, "bidding"),
        (TablePhase::Playing, "playing"),
        (TablePhase::Finished, "finished"),
    ] {
        let n = phases.iter().filter(|p| **p == phase).count();
        metrics::gauge!("spades_tables", "phase" => name).set(n as f64);
    }
    metrics::gauge!("spades_connections").set(connections as f64);
    if let Some(rss) = resident_bytes() {
        metrics::gauge!("spades_resident_memory_bytes").set(rss as f64);
    }
}

/// This process's resident memory, from `/proc/self/status` (Linux).
pub fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// A REST request answered 503 without being handled: `capacity` (the
/// concurrency limit) or `timeout`.
pub fn request_shed(reason: &'static str) {
    metrics::counter!("spades_requests_shed_total", "reason" => reason).increment(1);
}
