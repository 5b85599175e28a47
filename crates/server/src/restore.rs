//! Start-up: every unfinished match is rebuilt from the event log and its
//! table started again.

use tracing::{error, info, warn};

use crate::app::AppState;
use crate::table;

/// Rebuilds every unfinished match from the log and starts its table.
/// A record that cannot be read or replayed is reported and skipped; the
/// others load. Returns (restored, skipped).
pub async fn restore_tables(state: &AppState) -> (usize, usize) {
    let stored = match state.journal.unfinished().await {
        Ok(s) => s,
        Err(e) => {
            error!(error = %e, "could not read unfinished matches: none restored");
            return (0, 0);
        }
    };
    let (mut restored, mut skipped) = (0, 0);
    for entry in stored {
        let table = match entry.and_then(|t| crate::record::restore(&t).map(|r| (t, r))) {
            Ok(t) => t,
            Err(e) => {
                error!(error = %e, "a stored table could not be restored and was skipped");
                skipped += 1;
                continue;
            }
        };
        let (stored, (mut restored_state, owner)) = table;
        let id = stored.table.id;
        restored_state.epoch = next_epoch(state, id, stored.epoch).await;
        // Heal summaries a crash may have cut off: hand results derive from
        // the log.
        if let Some(m) = &restored_state.game {
            for result in m.results().iter().skip(stored.hands.len()) {
                if let Err(e) = state.journal.hand(id, result).await {
                    warn!(table_id = %id, error = %e, "could not store a replayed hand result");
                }
            }
            if let (Some(end), None) = (m.result(), stored.result) {
                let _ = state.journal.finish(id, end).await;
            }
        }
        let init = state.table_init(
            id,
            stored.table.name.clone(),
            stored.table.options,
            owner,
            stored.table.created_at_ms,
        );
        let moves = stored.actions.len();
        let handle = table::spawn(init, Some(restored_state), &state.tracker);
        state.insert_table(handle);
        info!(table_id = %id, moves, "table restored");
        restored += 1;
    }
    if restored + skipped > 0 {
        info!(restored, skipped, "restored unfinished matches");
    }
    (restored, skipped)
}

/// Durably counts one more restore of the table and returns the count: a
/// restored table numbers its views from `epoch << 32`, above every view it
/// sent before. When the log cannot be written even after a few tries, the
/// stored epoch plus one still keeps the numbers growing for this run.
async fn next_epoch(state: &AppState, id: uuid::Uuid, stored: u64) -> u64 {
    for attempt in 0..3u32 {
        match state.journal.bump_epoch(id).await {
            Ok(epoch) => return epoch,
            Err(e) => {
                warn!(table_id = %id, error = %e, attempt, "could not store the table's restore count");
                tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
            }
        }
    }
    stored + 1
}
