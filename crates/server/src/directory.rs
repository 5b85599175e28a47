//! Where a table runs: on this node, or (in cluster mode) on another. The
//! transports find, list and create tables here and never need to know
//! whether the server is one node or many.

use std::sync::Arc;

use spades_protocol::{ErrorCode, TableOptions, TableStatus, TableSummary};
use uuid::Uuid;

use crate::cluster::Cluster;
use crate::error::AppError;
use crate::hosting::Hosting;
use crate::table::{OperatorOrder, TableCommand, TableHandle};

/// Every table of the server, wherever it runs.
#[derive(Debug, Clone)]
pub struct Directory {
    hosting: Arc<Hosting>,
    cluster: Option<Arc<Cluster>>,
}

impl Directory {
    /// The tables of `hosting`, and in cluster mode those of the other
    /// nodes too.
    pub fn new(hosting: Arc<Hosting>, cluster: Option<Arc<Cluster>>) -> Directory {
        Directory { hosting, cluster }
    }

    /// The table's handle for a connection: the table itself when it is
    /// here, else a relay to its owner; `None` when no node has it.
    pub async fn lookup(&self, table: Uuid) -> Option<TableHandle> {
        if let Some(h) = self.hosting.get(&table)
            && !h.is_closed()
            && !h.stopped()
            && self.still_here(table).await
        {
            return Some(h);
        }
        self.cluster.as_ref()?.relay_for(&self.hosting, table).await
    }

    /// True unless, in cluster mode, this node may have lost the table's
    /// lease while it was away (paused, cut off) and has: then it answers
    /// for the table from its current owner, never from memory.
    async fn still_here(&self, table: Uuid) -> bool {
        match &self.cluster {
            None => true,
            Some(c) => c.still_holds(table).await.unwrap_or(false),
        }
    }

    /// A table's public status, from wherever it runs.
    ///
    /// # Errors
    /// `table_not_found`, or 503 while the table moves between nodes.
    pub async fn status(&self, table: Uuid) -> Result<TableStatus, AppError> {
        if let Some(h) = self.hosting.get(&table)
            && !h.stopped()
            && self.still_here(table).await
            && let Ok(mut status) = h.status().await
        {
            status.owner = self.cluster.as_ref().and_then(|c| c.owner_of(table));
            return Ok(status);
        }
        match &self.cluster {
            Some(cluster) => cluster.status(&self.hosting, table).await,
            None => Err(AppError::new(ErrorCode::TableNotFound, "no such table")),
        }
    }

    /// An operator's order to `table` (a chat message removed in the
    /// store, the table closed): the table, wherever it runs, carries it
    /// out. True when a running table took it.
    pub async fn order(&self, table: Uuid, order: OperatorOrder) -> bool {
        if let Some(h) = self.hosting.get(&table)
            && h.runs()
            && self.still_here(table).await
        {
            return h.send(TableCommand::Order(order)).await.is_ok();
        }
        match &self.cluster {
            Some(cluster) => cluster.order(table, order).await,
            None => false,
        }
    }

    /// Every table's lobby line: this node's, and every other node's answer
    /// within a short wait.
    pub async fn lobby(&self) -> Vec<TableSummary> {
        let mut tables = self.hosting.summaries();
        let Some(cluster) = &self.cluster else { return tables };
        tables.extend(cluster.others_lobby().await);
        // A table moving between nodes may be listed twice for a moment.
        tables.sort_by_key(|t| t.table);
        tables.dedup_by_key(|t| t.table);
        tables
    }

    /// Creates a table: here, unless this node holds more than its share of
    /// the cluster's tables; then on the least loaded node.
    ///
    /// # Errors
    /// As [`Hosting::create`].
    pub async fn create(
        &self,
        name: String,
        options: TableOptions,
        owner_account: Option<Uuid>,
    ) -> Result<(Uuid, String), AppError> {
        if let Some(cluster) = &self.cluster
            && let Some(created) = cluster.place(&name, options, owner_account).await
        {
            return Ok(created);
        }
        self.hosting.create(name, options, owner_account).await
    }
}
