//! Restoring tables: every unfinished match is rebuilt from the event log
//! and its table started again (at start-up, or in cluster mode when this
//! node claims a table).

use tracing::{error, info, warn};
use uuid::Uuid;

use super::Hosting;
use crate::record::Restored;
use crate::storage::{StorageError, StoredTable};
use crate::table::Ownership;
use crate::token::TokenHash;

impl Hosting {
    /// Rebuilds every unfinished match from the log and starts its table.
    /// A record that cannot be read or replayed is reported and skipped; the
    /// others load. Returns (restored, skipped).
    pub async fn restore_all(&self) -> (usize, usize) {
        let stored = match self.journal.unfinished().await {
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
            let epoch = self.next_epoch(id, stored.epoch).await;
            self.resume(stored, restored_state, epoch).await;
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
    pub async fn restore_claimed(&self, table: Uuid, epoch: u64) -> Result<(), StorageError> {
        let stored = self.journal.get(table).await?.ok_or_else(|| StorageError::Corrupt {
            table: table.to_string(),
            reason: "claimed, but not in the log".into(),
        })?;
        let restored = crate::record::restore(&stored)?;
        self.resume(stored, restored, epoch).await;
        Ok(())
    }

    /// Starts a table rebuilt from its record, numbering its views from
    /// `epoch << 32`; in cluster mode its writes are fenced with `epoch`.
    async fn resume(
        &self,
        stored: StoredTable,
        (mut restored_state, owner): (Restored, TokenHash),
        epoch: u64,
    ) {
        let id = stored.table.id;
        restored_state.epoch = epoch;
        let owner = Ownership { token: owner, account: stored.table.owner_account };
        let init = self.table_init(
            id,
            stored.table.name.clone(),
            stored.table.options,
            owner,
            stored.table.created_at_ms,
            epoch,
        );
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
        self.start(init, Some(restored_state), epoch);
        info!(table_id = %id, moves, epoch, "table restored");
    }

    /// Durably counts one more restore of the table and returns the count: a
    /// restored table numbers its views from `epoch << 32`, above every view it
    /// sent before. When the log cannot be written even after a few tries, the
    /// stored epoch plus one still keeps the numbers growing for this run.
    async fn next_epoch(&self, id: Uuid, stored: u64) -> u64 {
        for attempt in 0..3u32 {
            match self.journal.bump_epoch(id).await {
                Ok(epoch) => return epoch,
                Err(e) => {
                    warn!(table_id = %id, error = %e, attempt, "could not store the table's restore count");
                    tokio::time::sleep(std::time::Duration::from_millis(100 << attempt)).await;
                }
            }
        }
        stored + 1
    }
}
