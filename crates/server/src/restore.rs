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
        let (stored, restored_state) = table;
        let id = stored.table.id;
        let epoch = next_epoch(state, id, stored.epoch).await;
        start(state, stored, restored_state, epoch, None).await;
        restored += 1;
    }
    if restored + skipped > 0 {
        info!(restored, skipped, "restored unfinished matches");
    }
    (restored, skipped)
}

/// Rebuilds one table this node has just claimed under `epoch` (cluster
/// mode) and starts it.
///
/// # Errors
/// When its record cannot be read or replayed.
pub async fn restore_claimed(
    state: &AppState,
    table: uuid::Uuid,
    epoch: u64,
    cluster: &crate::cluster::Cluster,
) -> Result<(), crate::storage::StorageError> {
    let stored = state.journal.get(table).await?.ok_or_else(|| crate::storage::StorageError::Corrupt {
        table: table.to_string(),
        reason: "claimed, but not in the log".into(),
    })?;
    let restored = crate::record::restore(&stored)?;
    start(state, stored, restored, epoch, Some(cluster)).await;
    Ok(())
}

/// Starts a table rebuilt from its record, numbering its views from
/// `epoch << 32`; in cluster mode its writes are fenced with `epoch`.
async fn start(
    state: &AppState,
    stored: crate::storage::StoredTable,
    (mut restored_state, owner): (table::Restored, crate::token::TokenHash),
    epoch: u64,
    cluster: Option<&crate::cluster::Cluster>,
) {
    let id = stored.table.id;
    restored_state.epoch = epoch;
    let mut init = state.table_init(
        id,
        stored.table.name.clone(),
        stored.table.options,
        owner,
        stored.table.created_at_ms,
    );
    if let Some(c) = cluster {
        (init.journal, init.shutdown) = c.own(&state.journal, &state.shutdown, epoch);
    }
    // Heal summaries a crash may have cut off: hand results derive from
    // the log.
    if let Some(m) = &restored_state.game {
        for result in m.results().iter().skip(stored.hands.len()) {
            if let Err(e) = init.journal.hand(id, result).await {
                warn!(table_id = %id, error = %e, "could not store a replayed hand result");
            }
        }
        if let (Some(end), None) = (m.result(), stored.result) {
            let _ = init.journal.finish(id, end).await;
        }
    }
    let moves = stored.actions.len();
    let handle = table::spawn(init, Some(restored_state), &state.tracker);
    if let Some(c) = cluster {
        c.owns(epoch, handle.clone());
    }
    state.insert_table(handle);
    info!(table_id = %id, moves, epoch, "table restored");
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
