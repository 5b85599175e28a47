//! The handle the rest of the server holds on a table's task.

use spades_protocol::{TableStatus, TableSummary};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use super::TableCommand;

/// The handle the rest of the server holds: cheap to clone.
#[derive(Debug, Clone)]
pub struct TableHandle {
    id: Uuid,
    tx: mpsc::Sender<TableCommand>,
    status: watch::Receiver<TableStatus>,
    stop: CancellationToken,
}

/// The table's task has ended.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the table is closed")]
pub struct TableClosed;

impl TableHandle {
    /// A handle on the task reading `tx`'s commands (a table's, or a relay
    /// to a table owned by another node), whose status `status` publishes,
    /// and that ends when `stop` is cancelled.
    pub(crate) fn new(
        id: Uuid,
        tx: mpsc::Sender<TableCommand>,
        status: watch::Receiver<TableStatus>,
        stop: CancellationToken,
    ) -> Self {
        TableHandle { id, tx, status, stop }
    }

    /// True once the table was told to stop (server shutdown, or in cluster
    /// mode a lost or handed-over lease): its connections may attach again
    /// wherever it runs next.
    pub fn stopped(&self) -> bool {
        self.stop.is_cancelled()
    }

    /// True while the table takes commands: neither told to stop nor ended.
    pub fn runs(&self) -> bool {
        !self.stopped() && !self.is_closed()
    }

    /// Stops the table's task (it finishes the command in hand first).
    pub fn stop(&self) {
        self.stop.cancel();
    }

    /// The table's id.
    pub fn id(&self) -> Uuid {
        self.id
    }

    /// True once the table's task has ended.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// The latest lobby summary (never waits for the task).
    pub fn summary(&self) -> TableSummary {
        self.status.borrow().summary.clone()
    }

    /// Sends a command, waiting for room in the table's queue.
    ///
    /// # Errors
    /// [`TableClosed`] when the task has ended.
    pub async fn send(&self, cmd: TableCommand) -> Result<(), TableClosed> {
        self.tx.send(cmd).await.map_err(|_| TableClosed)
    }

    /// Sends a command without waiting (for paths that must not block).
    pub fn try_send(&self, cmd: TableCommand) -> bool {
        self.tx.try_send(cmd).is_ok()
    }

    /// Sends a command without waiting; a full queue hands it back (a
    /// closed table drops it).
    ///
    /// # Errors
    /// The command, when the queue is full.
    pub fn try_send_or_return(&self, cmd: TableCommand) -> Result<(), TableCommand> {
        match self.tx.try_send(cmd) {
            Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => Ok(()),
            Err(mpsc::error::TrySendError::Full(cmd)) => Err(cmd),
        }
    }

    /// The public status, as the table last published it: never goes
    /// through the table's queue, so no number of readers can hold the table
    /// up or fill its queue.
    ///
    /// # Errors
    /// [`TableClosed`] when the task has ended.
    pub async fn status(&self) -> Result<TableStatus, TableClosed> {
        if self.is_closed() {
            return Err(TableClosed);
        }
        Ok(self.status.borrow().clone())
    }
}
