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
        let (stored, (restored_state, owner)) = table;
        let id = stored.table.id;
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
