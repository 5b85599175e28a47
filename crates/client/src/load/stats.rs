//! Counters and the latency histogram shared by every connection of a run.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Live counters, updated by every connection; [`Stats::take`] reads and
/// resets them for one measurement window.
#[derive(Debug)]
pub struct Stats {
    /// Actions (or echo frames) sent.
    pub sent: AtomicU64,
    /// Actions accepted (`ack`), or echo frames returned.
    pub accepted: AtomicU64,
    /// Frames received.
    pub frames_in: AtomicU64,
    /// Frames sent.
    pub frames_out: AtomicU64,
    /// Bytes received (payloads).
    pub bytes_in: AtomicU64,
    /// Bytes sent (payloads).
    pub bytes_out: AtomicU64,
    /// Frames that tell a connection of a change (a `change`, or a `view`
    /// where the server sends whole views).
    pub updates: AtomicU64,
    /// Their bytes.
    pub update_bytes: AtomicU64,
    /// Refusals (`error` frames) and other failures of a request.
    pub errors: AtomicU64,
    /// Connections lost while the run was going.
    pub disconnects: AtomicU64,
    /// Connections lost and resumed on a new connection (with reconnecting
    /// on: not failures).
    pub resumed: AtomicU64,
    /// Tables that could not be created or whose seats could not be taken.
    pub setup_failures: AtomicU64,
    /// Hands played to the end.
    pub hands: AtomicU64,
    /// Matches played to the end.
    pub matches: AtomicU64,
    latency: Mutex<Histogram<u64>>,
    reasons: Mutex<BTreeMap<String, u64>>,
    samples: Mutex<Vec<String>>,
}

/// The slowest latency the histogram holds: 60 s.
const MAX_LATENCY_US: u64 = 60_000_000;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, 3).expect("valid histogram bounds")
}

impl Default for Stats {
    fn default() -> Stats {
        Stats {
            sent: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            frames_in: AtomicU64::new(0),
            frames_out: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            updates: AtomicU64::new(0),
            update_bytes: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            disconnects: AtomicU64::new(0),
            resumed: AtomicU64::new(0),
            setup_failures: AtomicU64::new(0),
            hands: AtomicU64::new(0),
            matches: AtomicU64::new(0),
            latency: Mutex::new(histogram()),
            reasons: Mutex::new(BTreeMap::new()),
            samples: Mutex::new(Vec::new()),
        }
    }
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl Stats {
    /// A frame received.
    pub fn frame_in(&self, bytes: usize) {
        bump(&self.frames_in);
        self.bytes_in.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// A frame that told of a change (counted in [`Stats::frame_in`] too).
    pub fn update_in(&self, bytes: usize) {
        bump(&self.updates);
        self.update_bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// A frame sent.
    pub fn frame_out(&self, bytes: usize) {
        bump(&self.frames_out);
        self.bytes_out.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// A latency sample.
    pub fn latency(&self, d: Duration) {
        let us = (d.as_micros() as u64).clamp(1, MAX_LATENCY_US);
        if let Ok(mut h) = self.latency.lock() {
            h.saturating_record(us);
        }
    }

    /// A failure, counted under `counter` and tallied by `reason`; the first
    /// few details are kept to print.
    pub fn failure(&self, counter: &AtomicU64, reason: &str, detail: impl FnOnce() -> String) {
        bump(counter);
        if let Ok(mut r) = self.reasons.lock() {
            *r.entry(reason.to_owned()).or_default() += 1;
        }
        if let Ok(mut s) = self.samples.lock()
            && s.len() < 10
        {
            s.push(detail());
        }
    }

    /// Reads and resets every counter.
    pub fn take(&self) -> Snapshot {
        let t = |c: &AtomicU64| c.swap(0, Ordering::Relaxed);
        let latency = self.latency.lock().map(|mut h| std::mem::replace(&mut *h, histogram())).ok();
        Snapshot {
            sent: t(&self.sent),
            accepted: t(&self.accepted),
            frames_in: t(&self.frames_in),
            frames_out: t(&self.frames_out),
            bytes_in: t(&self.bytes_in),
            bytes_out: t(&self.bytes_out),
            updates: t(&self.updates),
            update_bytes: t(&self.update_bytes),
            errors: t(&self.errors),
            disconnects: t(&self.disconnects),
            resumed: t(&self.resumed),
            setup_failures: t(&self.setup_failures),
            hands: t(&self.hands),
            matches: t(&self.matches),
            latency: latency.unwrap_or_else(histogram),
            reasons: self.reasons.lock().map(|mut r| std::mem::take(&mut *r)).unwrap_or_default(),
            samples: self.samples.lock().map(|mut s| std::mem::take(&mut *s)).unwrap_or_default(),
        }
    }
}

/// The counters of one window.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Actions sent.
    pub sent: u64,
    /// Actions accepted.
    pub accepted: u64,
    /// Frames received.
    pub frames_in: u64,
    /// Frames sent.
    pub frames_out: u64,
    /// Bytes received.
    pub bytes_in: u64,
    /// Bytes sent.
    pub bytes_out: u64,
    /// Frames that told of a change.
    pub updates: u64,
    /// Their bytes.
    pub update_bytes: u64,
    /// Refusals and request failures.
    pub errors: u64,
    /// Connections lost.
    pub disconnects: u64,
    /// Connections lost and resumed.
    pub resumed: u64,
    /// Tables that could not be set up.
    pub setup_failures: u64,
    /// Hands finished.
    pub hands: u64,
    /// Matches finished.
    pub matches: u64,
    /// Latency in microseconds.
    pub latency: Histogram<u64>,
    /// Failures by reason (error code, close code, …).
    pub reasons: BTreeMap<String, u64>,
    /// The first few failures, described.
    pub samples: Vec<String>,
}

impl Snapshot {
    /// Adds another window's counters (latency included).
    pub fn merge(&mut self, other: Snapshot) {
        self.sent += other.sent;
        self.accepted += other.accepted;
        self.frames_in += other.frames_in;
        self.frames_out += other.frames_out;
        self.bytes_in += other.bytes_in;
        self.bytes_out += other.bytes_out;
        self.updates += other.updates;
        self.update_bytes += other.update_bytes;
        self.errors += other.errors;
        self.disconnects += other.disconnects;
        self.resumed += other.resumed;
        self.setup_failures += other.setup_failures;
        self.hands += other.hands;
        self.matches += other.matches;
        let _ = self.latency.add(&other.latency);
        for (k, v) in other.reasons {
            *self.reasons.entry(k).or_default() += v;
        }
        for s in other.samples {
            if self.samples.len() < 10 {
                self.samples.push(s);
            }
        }
    }

    /// Every kind of failure: refusals, lost connections, failed set-ups.
    pub fn failures(&self) -> u64 {
        self.errors + self.disconnects + self.setup_failures
    }

    /// The latency percentiles.
    pub fn latency_ms(&self) -> Latency {
        let h = &self.latency;
        let ms = |us: u64| us as f64 / 1000.0;
        if h.is_empty() {
            return Latency::default();
        }
        Latency {
            samples: h.len(),
            mean: h.mean() / 1000.0,
            p50: ms(h.value_at_quantile(0.50)),
            p90: ms(h.value_at_quantile(0.90)),
            p99: ms(h.value_at_quantile(0.99)),
            p999: ms(h.value_at_quantile(0.999)),
            max: ms(h.max()),
        }
    }
}

/// Latency percentiles in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// How many samples.
    pub samples: u64,
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// The slowest.
    pub max: f64,
}
