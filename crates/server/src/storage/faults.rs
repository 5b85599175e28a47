//! Failures injected on demand, to test how the server lives with a failing
//! event log. Applied by [`super::Journal`] around every operation, the same
//! way for every backend.

use std::sync::{Arc, Mutex};
use std::time::Duration;

// tokio's clock: windows follow paused time in tests.
use tokio::time::Instant;

use super::StorageError;

/// A kind of event log operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// [`super::Journal::create_table`].
    Table,
    /// [`super::Journal::seats`].
    Seats,
    /// [`super::Journal::start`].
    Start,
    /// [`super::Journal::append`].
    Action,
    /// [`super::Journal::hand`].
    Hand,
    /// [`super::Journal::finish`].
    Finish,
    /// [`super::Journal::close`].
    Close,
    /// [`super::Journal::bump_epoch`].
    Epoch,
    /// [`super::Journal::chat`].
    Chat,
    /// Every read: `get`, `unfinished`, `recent`, `recent_summaries`.
    Read,
}

#[derive(Debug, Default)]
struct State {
    /// Each entry: the next operation of that kind fails, unwritten.
    once: Vec<Op>,
    /// Each entry: the next operation of that kind is written, then
    /// reported failed.
    after_commit: Vec<Op>,
    /// Operations of that kind (`None`: all) fail until the instant.
    windows: Vec<(Option<Op>, Instant)>,
    injected: u64,
}

/// The switchboard of injected failures (cheap to clone: every clone
/// controls the same journal). An injected failure is
/// `StorageError::Database("injected failure")`.
#[doc(hidden)]
#[derive(Debug, Clone, Default)]
pub struct Faults {
    state: Arc<Mutex<State>>,
}

fn injected() -> StorageError {
    StorageError::Database("injected failure".into())
}

impl Faults {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the state invalid.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The next operation of kind `op` fails and writes nothing.
    pub fn fail_once(&self, op: Op) {
        self.state().once.push(op);
    }

    /// Every operation (`None`) or every one of kind `op` fails, writing
    /// nothing, for `d` from now.
    pub fn fail_for(&self, op: Option<Op>, d: Duration) {
        self.state().windows.push((op, Instant::now() + d));
    }

    /// The next operation of kind `op` is written, then reported failed.
    pub fn fail_after_commit(&self, op: Op) {
        self.state().after_commit.push(op);
    }

    /// Cancels every pending and running failure.
    pub fn clear(&self) {
        let mut s = self.state();
        s.once.clear();
        s.after_commit.clear();
        s.windows.clear();
    }

    /// Failures injected so far.
    pub fn injected(&self) -> u64 {
        self.state().injected
    }

    /// True while a `fail_for(None, ..)` runs.
    pub(super) fn all_failing(&self) -> bool {
        let now = Instant::now();
        self.state().windows.iter().any(|(op, until)| op.is_none() && *until > now)
    }

    /// Before an operation: the failure due now, if any.
    pub(super) fn before(&self, op: Op) -> Result<(), StorageError> {
        let mut s = self.state();
        let now = Instant::now();
        s.windows.retain(|(_, until)| *until > now);
        let window = s.windows.iter().any(|(o, _)| o.is_none_or(|o| o == op));
        let once = if window { None } else { s.once.iter().position(|o| *o == op) };
        if let Some(i) = once {
            s.once.remove(i);
        }
        if window || once.is_some() {
            s.injected += 1;
            return Err(injected());
        }
        Ok(())
    }

    /// After an operation that succeeded: the failure to report instead, if
    /// one is due.
    pub(super) fn after(&self, op: Op) -> Result<(), StorageError> {
        let mut s = self.state();
        if let Some(i) = s.after_commit.iter().position(|o| *o == op) {
            s.after_commit.remove(i);
            s.injected += 1;
            return Err(injected());
        }
        Ok(())
    }
}
