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
//! | `spades_disconnects_total` | counter | `reason` (closed, too_slow, silent, unattached, shutdown, table_closed, table_moved, released, signed_out, protocol, error) |
//! | `spades_connections_opened_total` | counter | |
//! | `spades_tables_created_total` | counter | |
//! | `spades_tables_claimed_total` | counter | tables this node took over in cluster mode (failover, drain) |
//! | `spades_tables_placed_elsewhere_total` | counter | tables created through this node on another, which held fewer (cluster mode) |
//! | `spades_relayed_tables` | gauge | tables owned by another node that connections here are relayed to (cluster mode) |
//! | `spades_owned_tables` | gauge | unfinished tables this node holds a live lease on (cluster mode) |
//! | `spades_unowned_tables` | gauge | unfinished tables of the whole cluster without a live owner for longer than a lease (cluster mode; alert when above 0) |
//! | `spades_rate_limited_total` | counter | `what` (tables, accounts, sign_ins, account_sign_ins, connections, open_connections, requests, messages) |
//! | `spades_requests_shed_total` | counter | `reason` (capacity, timeout): REST requests answered 503 |
//! | `spades_storage_write_timeouts_total` | counter | |
//! | `spades_storage_batch_retries_total` | counter | |
//! | `spades_storage_retries_total` | counter | |
//! | `spades_bot_search_fallbacks_total` | counter | |
//! | `spades_build_info` | gauge | `version`: always 1 |
//! | `process_cpu_seconds_total`, `process_open_fds`, `process_max_fds`, `process_resident_memory_bytes`, `process_virtual_memory_bytes`, `process_virtual_memory_max_bytes`, `process_start_time_seconds`, `process_threads` | counter, gauges | the usual process metrics, read at each scrape |
//!
//! Every metric has a `# HELP` line, and every counter is exported from
//! start-up, at 0, for each of its label values (so rates and alerts work
//! before the first event).

use std::sync::OnceLock;
use std::time::Duration;

use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
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
            let handle = builder.ok()?.install_recorder().ok()?;
            describe();
            register_counters();
            metrics::gauge!("spades_build_info", "version" => env!("CARGO_PKG_VERSION")).set(1.0);
            Some(handle)
        })
        .as_ref()
}

/// The process metrics collector (`process_*`).
fn process() -> &'static metrics_process::Collector {
    static PROCESS: OnceLock<metrics_process::Collector> = OnceLock::new();
    PROCESS.get_or_init(metrics_process::Collector::default)
}

/// Action kinds and sources, as labelled.
const ACTION_KINDS: [&str; 2] = ["bid", "play"];
const ACTION_SOURCES: [&str; 4] = ["player", "timeout", "autopilot", "bot"];
/// `spades_disconnects_total` reasons (those of `ws::Flow::reason`).
pub const DISCONNECT_REASONS: [&str; 11] = [
    "closed",
    "too_slow",
    "silent",
    "unattached",
    "shutdown",
    "table_closed",
    "table_moved",
    "released",
    "signed_out",
    "protocol",
    "error",
];
/// `spades_rate_limited_total` kinds.
pub const RATE_LIMITED: [&str; 8] = [
    "tables",
    "accounts",
    "sign_ins",
    "account_sign_ins",
    "connections",
    "open_connections",
    "requests",
    "messages",
];
/// `spades_requests_shed_total` reasons.
pub const SHED_REASONS: [&str; 2] = ["capacity", "timeout"];
/// Counters without labels.
const PLAIN_COUNTERS: [&str; 8] = [
    "spades_connections_opened_total",
    "spades_tables_created_total",
    "spades_tables_claimed_total",
    "spades_tables_placed_elsewhere_total",
    "spades_storage_write_timeouts_total",
    "spades_storage_batch_retries_total",
    "spades_storage_retries_total",
    "spades_bot_search_fallbacks_total",
];

/// `# HELP` text for every metric the server exports.
fn describe() {
    describe_gauge!("spades_tables", Unit::Count, "Tables hosted, by phase.");
    describe_gauge!("spades_connections", Unit::Count, "WebSocket connections open.");
    describe_gauge!("spades_resident_memory_bytes", Unit::Bytes, "Resident memory of the server process.");
    describe_gauge!("spades_build_info", "Always 1; the version label names the running build.");
    describe_counter!("spades_actions_total", Unit::Count, "Bids and plays accepted, by kind and source.");
    describe_histogram!(
        "spades_action_seconds",
        Unit::Seconds,
        "Time from a move arriving at its table to every view queued, storage included."
    );
    describe_histogram!(
        "spades_storage_commit_seconds",
        Unit::Seconds,
        "Duration of one group commit of the event log."
    );
    describe_histogram!(
        "spades_storage_batch_size",
        Unit::Count,
        "Writes per group commit of the event log."
    );
    describe_counter!(
        "spades_errors_total",
        Unit::Count,
        "Refusals sent to clients, by protocol error code."
    );
    describe_counter!("spades_disconnects_total", Unit::Count, "WebSocket connections ended, by reason.");
    describe_counter!("spades_connections_opened_total", Unit::Count, "WebSocket connections accepted.");
    describe_counter!("spades_tables_created_total", Unit::Count, "Tables created.");
    describe_counter!(
        "spades_tables_claimed_total",
        Unit::Count,
        "Tables this node took over from another node (cluster mode)."
    );
    describe_counter!(
        "spades_tables_placed_elsewhere_total",
        Unit::Count,
        "Tables created through this node on another node that held fewer (cluster mode)."
    );
    describe_gauge!(
        "spades_relayed_tables",
        Unit::Count,
        "Tables owned by another node that connections here are relayed to (cluster mode)."
    );
    describe_gauge!(
        "spades_owned_tables",
        Unit::Count,
        "Unfinished tables this node holds a live lease on (cluster mode)."
    );
    describe_gauge!(
        "spades_unowned_tables",
        Unit::Count,
        "Unfinished tables of the cluster without a live owner for longer than a lease (cluster mode)."
    );
    describe_counter!(
        "spades_rate_limited_total",
        Unit::Count,
        "Requests refused by a per-address or per-connection limit, by limit."
    );
    describe_counter!(
        "spades_requests_shed_total",
        Unit::Count,
        "REST requests answered 503 without being handled, by reason."
    );
    describe_counter!(
        "spades_storage_write_timeouts_total",
        Unit::Count,
        "Event-log writes that did not finish within their timeout."
    );
    describe_counter!(
        "spades_storage_batch_retries_total",
        Unit::Count,
        "Group commits of the event log retried after a failure."
    );
    describe_counter!(
        "spades_storage_retries_total",
        Unit::Count,
        "Moves whose event-log write a table retried."
    );
    describe_counter!(
        "spades_bot_search_fallbacks_total",
        Unit::Count,
        "Bot decisions made by the rule bot because every search slot was busy."
    );
    process().describe();
}

/// Every counter, at 0, for each of its label values.
fn register_counters() {
    for kind in ACTION_KINDS {
        for source in ACTION_SOURCES {
            metrics::counter!("spades_actions_total", "kind" => kind, "source" => source).increment(0);
        }
    }
    for code in ErrorCode::ALL {
        metrics::counter!("spades_errors_total", "code" => code.as_str()).increment(0);
    }
    for reason in DISCONNECT_REASONS {
        metrics::counter!("spades_disconnects_total", "reason" => reason).increment(0);
    }
    for what in RATE_LIMITED {
        metrics::counter!("spades_rate_limited_total", "what" => what).increment(0);
    }
    for reason in SHED_REASONS {
        metrics::counter!("spades_requests_shed_total", "reason" => reason).increment(0);
    }
    for name in PLAIN_COUNTERS {
        metrics::counter!(name).increment(0);
    }
}

/// An accepted action.
pub fn action(action: Action, source: ActionSource) {
    let kind = match action {
        Action::Bid(_) => ACTION_KINDS[0],
        Action::Play(_) => ACTION_KINDS[1],
    };
    let source = match source {
        ActionSource::Player => ACTION_SOURCES[0],
        ActionSource::Timeout => ACTION_SOURCES[1],
        ActionSource::Autopilot => ACTION_SOURCES[2],
        ActionSource::Bot => ACTION_SOURCES[3],
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

/// A table claimed from another node (cluster mode).
pub fn table_claimed() {
    metrics::counter!("spades_tables_claimed_total").increment(1);
}

/// A table created through this node on another one (cluster mode).
pub fn table_placed_elsewhere() {
    metrics::counter!("spades_tables_placed_elsewhere_total").increment(1);
}

/// How many tables owned elsewhere this node relays to (cluster mode).
pub fn relayed_tables(n: usize) {
    metrics::gauge!("spades_relayed_tables").set(n as f64);
}

/// The leases of one census (cluster mode): tables this node holds, and
/// the cluster's tables without a live owner for longer than a lease.
pub fn lease_census(owned: u64, unowned: u64) {
    metrics::gauge!("spades_owned_tables").set(owned as f64);
    metrics::gauge!("spades_unowned_tables").set(unowned as f64);
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
    process().collect();
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

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::Config;

    /// What a Prometheus text exposition says: each family's `# TYPE`,
    /// whether it has `# HELP`, and each sample's value by its full
    /// series (`name{labels}`).
    #[derive(Debug, Default)]
    struct Scrape {
        types: BTreeMap<String, String>,
        helped: BTreeSet<String>,
        samples: BTreeMap<String, f64>,
    }

    impl Scrape {
        fn parse(text: &str) -> Scrape {
            let mut scrape = Scrape::default();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                if let Some(rest) = line.strip_prefix("# HELP ") {
                    let (name, help) = rest.split_once(' ').expect("HELP has a text");
                    assert!(!help.trim().is_empty(), "empty HELP for {name}");
                    scrape.helped.insert(name.to_owned());
                } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                    let (name, kind) = rest.split_once(' ').expect("TYPE has a kind");
                    scrape.types.insert(name.to_owned(), kind.to_owned());
                } else {
                    assert!(!line.starts_with('#'), "unexpected comment: {line}");
                    let (series, value) = line.rsplit_once(' ').expect("a sample has a value");
                    let value: f64 = value.parse().unwrap_or_else(|_| panic!("bad value in {line}"));
                    scrape.samples.insert(series.to_owned(), value);
                }
            }
            scrape
        }

        /// The family a series belongs to (a histogram's `_bucket`,
        /// `_sum` and `_count` series belong to the histogram).
        fn family(&self, series: &str) -> String {
            let name = series.split('{').next().unwrap();
            for suffix in ["_bucket", "_sum", "_count"] {
                if let Some(base) = name.strip_suffix(suffix)
                    && self.types.get(base).is_some_and(|t| t == "histogram" || t == "summary")
                {
                    return base.to_owned();
                }
            }
            name.to_owned()
        }

        fn value(&self, series: &str) -> Option<f64> {
            self.samples.get(series).copied()
        }
    }

    fn free_port() -> std::net::SocketAddr {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    }

    #[tokio::test]
    async fn metrics_on_their_own_address_have_help_types_zero_counters_and_process_metrics() {
        let mut config = Config::default();
        config.storage.in_memory = true;
        let metrics_addr = free_port();
        config.server.metrics_bind = Some(metrics_addr);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let server = tokio::spawn(crate::serve(listener, config, shutdown.clone()));
        let http = reqwest::Client::new();

        // The first scrape, before any traffic.
        let mut text = None;
        for _ in 0..100 {
            if let Ok(resp) = http.get(format!("http://{metrics_addr}/metrics")).send().await {
                assert_eq!(resp.status(), 200);
                text = Some(resp.text().await.unwrap());
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let text = text.expect("the metrics address answers");
        let scrape = Scrape::parse(&text);

        // Every sample's family has a TYPE and a HELP.
        assert!(!scrape.samples.is_empty());
        for series in scrape.samples.keys() {
            let family = scrape.family(series);
            assert!(scrape.types.contains_key(&family), "no TYPE for {family}");
            assert!(scrape.helped.contains(&family), "no HELP for {family}");
        }
        for family in scrape.types.keys() {
            assert!(scrape.helped.contains(family), "no HELP for {family}");
        }

        // Every counter, with each of its label values, is there from the start.
        let mut counters: Vec<String> = PLAIN_COUNTERS.iter().map(|c| (*c).to_owned()).collect();
        for kind in ACTION_KINDS {
            for source in ACTION_SOURCES {
                counters.push(format!("spades_actions_total{{kind=\"{kind}\",source=\"{source}\"}}"));
            }
        }
        counters
            .extend(ErrorCode::ALL.iter().map(|c| format!("spades_errors_total{{code=\"{}\"}}", c.as_str())));
        counters
            .extend(DISCONNECT_REASONS.iter().map(|r| format!("spades_disconnects_total{{reason=\"{r}\"}}")));
        counters.extend(RATE_LIMITED.iter().map(|w| format!("spades_rate_limited_total{{what=\"{w}\"}}")));
        counters.extend(SHED_REASONS.iter().map(|r| format!("spades_requests_shed_total{{reason=\"{r}\"}}")));
        for series in &counters {
            assert!(scrape.value(series).is_some_and(|v| v >= 0.0), "{series} missing in\n{text}");
            assert_eq!(scrape.types[&scrape.family(series)], "counter", "{series}");
        }

        // The gauges, the build and the process.
        assert_eq!(
            scrape.value(&format!("spades_build_info{{version=\"{}\"}}", env!("CARGO_PKG_VERSION"))),
            Some(1.0)
        );
        assert_eq!(scrape.types["spades_build_info"], "gauge");
        assert!(scrape.value("spades_connections").is_some());
        for phase in ["lobby", "bidding", "playing", "finished"] {
            assert!(scrape.value(&format!("spades_tables{{phase=\"{phase}\"}}")).is_some(), "{phase}");
        }
        if cfg!(target_os = "linux") {
            assert_eq!(scrape.types["process_cpu_seconds_total"], "counter");
            // metrics-process counts CPU time in whole seconds.
            assert!(scrape.value("process_cpu_seconds_total").is_some(), "{text}");
            assert!(scrape.value("process_open_fds").is_some_and(|v| v >= 3.0));
            assert!(scrape.value("process_resident_memory_bytes").is_some_and(|v| v > 1e6));
            assert!(scrape.value("process_threads").is_some_and(|v| v >= 1.0));
        }

        // The main address serves the rest, but not /metrics.
        assert_eq!(http.get(format!("http://{addr}/healthz")).send().await.unwrap().status(), 200);
        assert_eq!(http.get(format!("http://{addr}/metrics")).send().await.unwrap().status(), 404);

        // A table created on the main address counts on the metrics address.
        let resp = http.post(format!("http://{addr}/api/v1/tables")).send().await.unwrap();
        assert_eq!(resp.status(), 201);
        let after =
            http.get(format!("http://{metrics_addr}/metrics")).send().await.unwrap().text().await.unwrap();
        let after = Scrape::parse(&after);
        let before = scrape.value("spades_tables_created_total").unwrap();
        assert!(after.value("spades_tables_created_total").unwrap() >= before + 1.0);

        shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(10), server).await.unwrap().unwrap().unwrap();
        // Both listeners are closed after shutdown.
        assert!(
            std::net::TcpStream::connect(metrics_addr).is_err(),
            "the metrics listener outlived the server"
        );
    }

    #[test]
    fn install_registers_every_counter_once_for_the_whole_process() {
        let first = install().expect("the Prometheus recorder installs") as *const PrometheusHandle;
        let second = install().unwrap() as *const PrometheusHandle;
        assert_eq!(first, second);
        let text = install().unwrap().render();
        assert!(text.contains("spades_bot_search_fallbacks_total"), "{text}");
        assert!(text.contains("# HELP spades_bot_search_fallbacks_total"), "{text}");
    }

    async fn start(config: Config) -> (std::net::SocketAddr, CancellationToken) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        tokio::spawn(crate::serve(listener, config, shutdown.clone()));
        (addr, shutdown)
    }

    fn rate_limited_count(what: &str) -> f64 {
        let text = install().unwrap().render();
        Scrape::parse(&text).value(&format!("spades_rate_limited_total{{what=\"{what}\"}}")).unwrap()
    }

    /// A refused WebSocket upgrade's status and `Retry-After`.
    async fn refused_upgrade(addr: std::net::SocketAddr) -> (u16, Option<String>) {
        match tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => (
                resp.status().as_u16(),
                resp.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned()),
            ),
            Ok(_) => panic!("the upgrade was accepted"),
            Err(e) => panic!("{e}"),
        }
    }

    fn whole_seconds(retry: Option<&str>) -> bool {
        retry.is_some_and(|r| r.parse::<u64>().is_ok_and(|s| s >= 1))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_429_carries_retry_after_and_is_counted() {
        let http = reqwest::Client::new();
        let mut config = Config::default();
        config.storage.in_memory = true;
        config.limits.requests_per_minute_per_ip = 0;
        config.limits.connections_per_ip = 0;
        config.limits.tables_per_minute_per_ip = 1;
        config.limits.connections_per_minute_per_ip = 1;
        let (addr, stop_a) = start(config).await;
        let url = format!("http://{addr}/api/v1/tables");
        let mut ok = None;
        for _ in 0..100 {
            if let Ok(resp) = http.post(&url).send().await {
                ok = Some(resp.status());
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(ok.map(|s| s.as_u16()), Some(201));

        // Tables per minute.
        let before = rate_limited_count("tables");
        let resp = http.post(&url).send().await.unwrap();
        assert_eq!(resp.status(), 429);
        let retry = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
        assert!(whole_seconds(retry.as_deref()), "tables: {retry:?}");
        assert!(rate_limited_count("tables") > before);

        // Connections per minute.
        let _first = tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await.unwrap();
        let before = rate_limited_count("connections");
        let (status, retry) = refused_upgrade(addr).await;
        assert_eq!(status, 429);
        assert!(whole_seconds(retry.as_deref()), "connections: {retry:?}");
        assert!(rate_limited_count("connections") > before);
        stop_a.cancel();

        let mut config = Config::default();
        config.storage.in_memory = true;
        config.limits.requests_per_minute_per_ip = 1;
        config.limits.connections_per_ip = 1;
        config.limits.connections_per_minute_per_ip = 0;
        let (addr, stop_b) = start(config).await;
        let mut ok = None;
        for _ in 0..100 {
            if let Ok(resp) = http.get(format!("http://{addr}/api/v1/tables")).send().await {
                ok = Some(resp.status());
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(ok.map(|s| s.as_u16()), Some(200));

        // REST requests per minute.
        let before = rate_limited_count("requests");
        let resp = http.get(format!("http://{addr}/api/v1/tables")).send().await.unwrap();
        assert_eq!(resp.status(), 429);
        let retry = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
        assert!(whole_seconds(retry.as_deref()), "requests: {retry:?}");
        assert!(rate_limited_count("requests") > before);

        // Connections open at once.
        let _held = tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await.unwrap();
        let before = rate_limited_count("open_connections");
        let (status, retry) = refused_upgrade(addr).await;
        assert_eq!(status, 429);
        assert!(whole_seconds(retry.as_deref()), "open connections: {retry:?}");
        assert!(rate_limited_count("open_connections") > before);
        stop_b.cancel();
    }
}
