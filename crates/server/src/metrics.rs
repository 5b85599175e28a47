//! Counters and histograms, through the `metrics` facade; the Prometheus
//! exporter installed at start-up serves them at `/metrics`.

use std::time::Duration;

use spades_engine::Action;
use spades_protocol::ActionSource;

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

/// Time from an accepted action to every view queued.
pub fn broadcast(elapsed: Duration) {
    metrics::histogram!("spades_broadcast_seconds").record(elapsed.as_secs_f64());
}
