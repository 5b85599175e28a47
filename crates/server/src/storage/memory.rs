//! The in-memory event log (tests and benchmarks; nothing survives a
//! restart). It answers like the SQL log: every write is idempotent.

use std::collections::HashMap;
use std::sync::Mutex;

use spades_protocol::MatchSummary;
use uuid::Uuid;

use super::sql::WriteOp;
use super::{StorageError, StoredTable, summary_of};

/// Tables by id. A `std` mutex: it is never held across an `.await`.
#[derive(Debug)]
pub struct MemoryStore {
    tables: Mutex<HashMap<Uuid, StoredTable>>,
    /// The accounts, kept in memory beside the log.
    pub(super) accounts: super::AccountStore,
}

impl Default for MemoryStore {
    fn default() -> MemoryStore {
        MemoryStore { tables: Mutex::default(), accounts: super::AccountStore::memory() }
    }
}

fn missing(table: Uuid) -> StorageError {
    StorageError::Corrupt { table: table.to_string(), reason: "no such table in the log".into() }
}

impl MemoryStore {
    /// Applies one write; returns the new epoch for an epoch bump, else 0.
    pub(super) fn write(&self, op: &WriteOp) -> Result<u64, StorageError> {
        let mut tables = self.tables.lock().map_err(|_| StorageError::Stopped)?;
        if let WriteOp::Table(t) = op {
            tables.entry(t.id).or_insert_with(|| StoredTable {
                table: t.clone(),
                seats: spades_engine::BySeat([None, None, None, None]),
                seed: None,
                fair: None,
                actions: Vec::new(),
                hands: Vec::new(),
                result: None,
                epoch: 0,
                closed: false,
            });
            return Ok(0);
        }
        let id = op.table();
        let t = tables.get_mut(&id).ok_or_else(|| missing(id))?;
        match op {
            // Kept in the account store (see `Journal::chat`).
            WriteOp::Table(_) | WriteOp::Chat(_) => {}
            WriteOp::Close { .. } => t.closed = true,
            WriteOp::Seats(_, seats) => t.seats = seats.clone(),
            WriteOp::Start { seed, fair, .. } => {
                t.seed = Some(*seed);
                t.fair.clone_from(fair);
            }
            WriteOp::Action(_, a) => match t.actions.get(a.index) {
                Some(stored) if stored.seat == a.seat && stored.action == a.action => {}
                None if a.index == t.actions.len() => t.actions.push(*a),
                _ => return Err(StorageError::Conflict { table: id, index: a.index }),
            },
            WriteOp::Hand(_, h) => {
                if !t.hands.iter().any(|s| s.hand_number == h.hand_number) {
                    t.hands.push(h.clone());
                    t.hands.sort_by_key(|s| s.hand_number);
                }
            }
            WriteOp::Finish { result, .. } => t.result = Some(*result),
            WriteOp::Epoch(_) => {
                t.epoch += 1;
                return Ok(t.epoch);
            }
        }
        Ok(0)
    }

    pub(super) fn unfinished(&self) -> Vec<StoredTable> {
        let Ok(tables) = self.tables.lock() else { return Vec::new() };
        let mut v: Vec<StoredTable> =
            tables.values().filter(|t| t.result.is_none() && !t.closed).cloned().collect();
        v.sort_by_key(|t| (t.table.created_at_ms, t.table.id));
        v
    }

    pub(super) fn get(&self, table: Uuid) -> Option<StoredTable> {
        self.tables.lock().ok()?.get(&table).cloned()
    }

    pub(super) fn recent(&self, limit: usize) -> Vec<StoredTable> {
        let Ok(tables) = self.tables.lock() else { return Vec::new() };
        let mut v: Vec<StoredTable> = tables.values().filter(|t| listed(t)).cloned().collect();
        v.sort_by_key(|t| std::cmp::Reverse((t.table.created_at_ms, t.table.id)));
        v.truncate(limit);
        v
    }

    pub(super) fn summaries(&self, page: &super::MatchPage) -> Vec<MatchSummary> {
        let Ok(tables) = self.tables.lock() else { return Vec::new() };
        let after = page.before.and_then(|id| tables.get(&id)).map(|t| (t.table.created_at_ms, t.table.id));
        let mut v: Vec<&StoredTable> = tables
            .values()
            .filter(|t| listed(t))
            .filter(|t| page.admits(t.table.created_at_ms, t.table.id, t.result.is_some(), after))
            .filter(|t| page.account.is_none_or(|a| t.seats.0.iter().flatten().any(|s| s.account == Some(a))))
            .collect();
        v.sort_by_key(|t| std::cmp::Reverse((t.table.created_at_ms, t.table.id)));
        v.into_iter().take(page.limit).map(summary_of).collect()
    }
}

/// In the match lists: started, and unless abandoned, a person made a move.
fn listed(t: &StoredTable) -> bool {
    t.seed.is_some() && (!t.abandoned() || t.has_player_move())
}
