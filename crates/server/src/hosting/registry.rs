//! The tables this node hosts, by id.

use dashmap::DashMap;
use spades_protocol::TableSummary;
use uuid::Uuid;

use crate::table::TableHandle;

/// The tables this node hosts, by id.
#[derive(Debug, Default)]
pub struct Registry {
    tables: DashMap<Uuid, TableHandle>,
}

impl Registry {
    /// The table's handle.
    pub fn get(&self, id: &Uuid) -> Option<TableHandle> {
        self.tables.get(id).map(|h| h.value().clone())
    }

    /// Every table's lobby summary.
    pub fn summaries(&self) -> Vec<TableSummary> {
        self.tables.iter().map(|h| h.value().summary()).collect()
    }

    /// Number of tables.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// True when no table is hosted.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// Registers a started table's handle.
    pub(super) fn insert(&self, handle: TableHandle) {
        self.tables.insert(handle.id(), handle);
    }

    /// Forgets the table `id` once its task has ended (only that task's
    /// handle: in cluster mode the table may be running here again already,
    /// under a new lease).
    pub(super) fn forget_ended(&self, id: &Uuid) {
        self.tables.remove_if(id, |_, h| h.is_closed());
    }
}
