//! The in-memory event log (tests and benchmarks; nothing survives a
//! restart).

use std::collections::HashMap;
use std::sync::Mutex;

use spades_engine::{BySeat, HandResult, MatchResult};
use uuid::Uuid;

use super::{ActionRecord, SeatRecord, StorageError, StoredTable, TableRecord};

/// Tables by id. A `std` mutex: it is never held across an `.await`.
#[derive(Debug, Default)]
pub struct MemoryStore {
    tables: Mutex<HashMap<Uuid, StoredTable>>,
}

impl MemoryStore {
    fn with<T>(&self, table: Uuid, f: impl FnOnce(&mut StoredTable) -> T) -> Result<T, StorageError> {
        let mut tables = self.tables.lock().map_err(|_| StorageError::Stopped)?;
        let t = tables.get_mut(&table).ok_or_else(|| StorageError::Corrupt {
            table: table.to_string(),
            reason: "no such table in the log".into(),
        })?;
        Ok(f(t))
    }

    pub(super) fn create_table(&self, table: &TableRecord) -> Result<(), StorageError> {
        let mut tables = self.tables.lock().map_err(|_| StorageError::Stopped)?;
        tables.insert(
            table.id,
            StoredTable {
                table: table.clone(),
                seats: BySeat([None, None, None, None]),
                seed: None,
                actions: Vec::new(),
                hands: Vec::new(),
                result: None,
            },
        );
        Ok(())
    }

    pub(super) fn seats(&self, table: Uuid, seats: &BySeat<Option<SeatRecord>>) -> Result<(), StorageError> {
        self.with(table, |t| t.seats = seats.clone())
    }

    pub(super) fn start(&self, table: Uuid, seed: u64) -> Result<(), StorageError> {
        self.with(table, |t| t.seed = Some(seed))
    }

    pub(super) fn append(&self, table: Uuid, action: ActionRecord) -> Result<(), StorageError> {
        self.with(table, |t| t.actions.push(action))
    }

    pub(super) fn hand(&self, table: Uuid, result: &HandResult) -> Result<(), StorageError> {
        self.with(table, |t| t.hands.push(result.clone()))
    }

    pub(super) fn finish(&self, table: Uuid, result: &MatchResult) -> Result<(), StorageError> {
        self.with(table, |t| t.result = Some(*result))
    }

    pub(super) fn close(&self, table: Uuid) -> Result<(), StorageError> {
        let mut tables = self.tables.lock().map_err(|_| StorageError::Stopped)?;
        tables.remove(&table);
        Ok(())
    }

    pub(super) fn unfinished(&self) -> Vec<StoredTable> {
        let Ok(tables) = self.tables.lock() else { return Vec::new() };
        let mut v: Vec<StoredTable> = tables.values().filter(|t| t.result.is_none()).cloned().collect();
        v.sort_by_key(|t| t.table.created_at_ms);
        v
    }

    pub(super) fn get(&self, table: Uuid) -> Option<StoredTable> {
        self.tables.lock().ok()?.get(&table).cloned()
    }

    pub(super) fn recent(&self, limit: usize) -> Vec<StoredTable> {
        let Ok(tables) = self.tables.lock() else { return Vec::new() };
        let mut v: Vec<StoredTable> = tables.values().filter(|t| t.seed.is_some()).cloned().collect();
        v.sort_by_key(|t| std::cmp::Reverse(t.table.created_at_ms));
        v.truncate(limit);
        v
    }
}
