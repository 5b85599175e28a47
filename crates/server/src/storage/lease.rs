//! Cluster mode's ownership records in PostgreSQL: a lease per unfinished
//! table (owner node, epoch, expiry) and a heartbeat row per node. Every
//! time comes from the database's clock (`spades_now_ms()`), never a node's.
//!
//! A claim bumps the table's epoch in the same conditional `UPDATE` that
//! takes it, so at most one node holds each epoch; the owner's writes carry
//! the epoch and are refused once it changed ([`super::Fence`]).

use std::time::Duration;

use sqlx::postgres::PgPool;
use uuid::Uuid;

use super::StorageError;

/// The lease store (cheap to clone).
#[derive(Debug, Clone)]
pub struct Leases {
    pool: PgPool,
    timeout: Duration,
}

/// A table a node now owns: its id and the lease's epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claimed {
    /// The table.
    pub table: Uuid,
    /// The new epoch.
    pub epoch: u64,
}

/// The cluster's unfinished tables, counted at one instant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableCounts {
    /// Each node's tables held by a live lease.
    pub owned: Vec<(String, u64)>,
    /// Every unfinished table, owned or not.
    pub total: u64,
    /// Tables nobody holds a live lease on: never owned, handed over, or
    /// of a node whose lease ran out. Some node must claim them.
    pub claimable: u64,
    /// Of those, the ones without a live owner for longer than a lease.
    pub unowned_long: u64,
}

/// Who owns a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// The owning node, if any.
    pub node: Option<String>,
    /// The lease's epoch.
    pub epoch: u64,
    /// The lease has not expired.
    pub live: bool,
    /// Nobody will run the table again: it was closed, or its match is
    /// over and no live lease holds it (a finished match is never claimed).
    pub done: bool,
}

/// One node as its heartbeat row says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRow {
    /// Its id.
    pub id: String,
    /// The process now using the id.
    pub incarnation: String,
    /// Where it listens (for operators).
    pub address: String,
    /// Tables it owns.
    pub tables: u64,
    /// It is shutting down: no new tables go to it.
    pub draining: bool,
    /// Milliseconds since its last heartbeat.
    pub silent_ms: u64,
}

/// What registering a node found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registered {
    /// The id was free (or its last process stopped cleanly).
    Fresh,
    /// The id's previous process stopped beating `silent_ms` ago.
    Replaced {
        /// How long the old process has been silent.
        silent_ms: u64,
    },
}

fn db(e: sqlx::Error) -> StorageError {
    StorageError::Database(format!("lease store: {e}"))
}

fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

fn parse_id(text: &str) -> Result<Uuid, StorageError> {
    text.parse()
        .map_err(|_| StorageError::Corrupt { table: text.to_owned(), reason: "not a table id".into() })
}

impl Leases {
    pub(super) fn new(pool: PgPool, timeout: Duration) -> Leases {
        Leases { pool, timeout }
    }

    async fn timed<T>(&self, q: impl Future<Output = Result<T, sqlx::Error>>) -> Result<T, StorageError> {
        match tokio::time::timeout(self.timeout, q).await {
            Ok(r) => r.map_err(db),
            Err(_) => Err(StorageError::Database(format!(
                "lease store: no answer within {} ms",
                self.timeout.as_millis()
            ))),
        }
    }

    /// The heartbeat row of `node`: (incarnation, ms since its heartbeat,
    /// draining), if any.
    pub async fn node_row(&self, node: &str) -> Result<Option<(String, u64, bool)>, StorageError> {
        let row: Option<(String, i64, i64)> = self
            .timed(
                sqlx::query_as(
                    "SELECT incarnation, spades_now_ms() - heartbeat_at, draining FROM nodes WHERE id = $1",
                )
                .bind(node)
                .fetch_optional(&self.pool),
            )
            .await?;
        Ok(row.map(|(inc, silent, draining)| (inc, to_u64(silent), draining != 0)))
    }

    /// Takes the id `node` for the process `incarnation`, unless another
    /// process that used it beat within `stale_ms` (then `None`).
    pub async fn register(
        &self,
        node: &str,
        incarnation: &str,
        address: &str,
        stale_ms: u64,
    ) -> Result<Option<Registered>, StorageError> {
        let before = self.node_row(node).await?;
        let row: Option<(i64,)> = self
            .timed(
                sqlx::query_as(
                    "INSERT INTO nodes (id, incarnation, address, heartbeat_at, draining, tables) \
                     VALUES ($1, $2, $3, spades_now_ms(), 0, 0) \
                     ON CONFLICT (id) DO UPDATE SET incarnation = $2, address = $3, \
                         heartbeat_at = spades_now_ms(), draining = 0, tables = 0 \
                     WHERE nodes.incarnation = $2 OR nodes.heartbeat_at < spades_now_ms() - $4 \
                     RETURNING 1::BIGINT",
                )
                .bind(node)
                .bind(incarnation)
                .bind(address)
                .bind(stale_ms as i64)
                .fetch_optional(&self.pool),
            )
            .await?;
        Ok(row.map(|_| match before {
            Some((_, silent_ms, _)) => Registered::Replaced { silent_ms },
            None => Registered::Fresh,
        }))
    }

    /// Beats for `node`: false when another process has taken the id.
    pub async fn heartbeat(
        &self,
        node: &str,
        incarnation: &str,
        tables: usize,
        draining: bool,
    ) -> Result<bool, StorageError> {
        let n = self
            .timed(
                sqlx::query(
                    "UPDATE nodes SET heartbeat_at = spades_now_ms(), tables = $3, draining = $4 \
                     WHERE id = $1 AND incarnation = $2",
                )
                .bind(node)
                .bind(incarnation)
                .bind(tables as i64)
                .bind(i64::from(draining))
                .execute(&self.pool),
            )
            .await?
            .rows_affected();
        Ok(n == 1)
    }

    /// Removes the node's row after a clean stop.
    pub async fn deregister(&self, node: &str, incarnation: &str) -> Result<(), StorageError> {
        self.timed(
            sqlx::query("DELETE FROM nodes WHERE id = $1 AND incarnation = $2")
                .bind(node)
                .bind(incarnation)
                .execute(&self.pool),
        )
        .await
        .map(drop)
    }

    /// Every node that beat within `live_ms`.
    pub async fn nodes(&self, live_ms: u64) -> Result<Vec<NodeRow>, StorageError> {
        let rows: Vec<(String, String, String, i64, i64, i64)> = self
            .timed(
                sqlx::query_as(
                    "SELECT id, incarnation, address, tables, draining, spades_now_ms() - heartbeat_at FROM nodes \
                     WHERE heartbeat_at >= spades_now_ms() - $1 ORDER BY id",
                )
                .bind(live_ms as i64)
                .fetch_all(&self.pool),
            )
            .await?;
        Ok(rows
            .into_iter()
            .map(|(id, incarnation, address, tables, draining, silent)| NodeRow {
                id,
                incarnation,
                address,
                tables: to_u64(tables),
                draining: draining != 0,
                silent_ms: to_u64(silent),
            })
            .collect())
    }

    /// Extends the leases `node` holds on `tables` (id and epoch) by
    /// `lease_ms`, in one statement; returns those still held (a table
    /// missing from the answer is lost: stop it at once).
    pub async fn renew(
        &self,
        node: &str,
        tables: &[(Uuid, u64)],
        lease_ms: u64,
    ) -> Result<Vec<Uuid>, StorageError> {
        if tables.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = tables.iter().map(|(id, _)| id.to_string()).collect();
        let epochs: Vec<i64> = tables.iter().map(|(_, e)| *e as i64).collect();
        let rows: Vec<(String,)> = self
            .timed(
                // The rows are locked in id order, as the writer's fence
                // check locks them, so a renewal and a write never wait
                // for each other in a circle.
                sqlx::query_as(
                    "WITH l AS (SELECT t.id FROM tables t \
                         JOIN unnest($1::TEXT[], $2::BIGINT[]) AS w(id, epoch) ON t.id = w.id \
                         WHERE t.epoch = w.epoch AND t.owner_node = $3 \
                         ORDER BY t.id FOR NO KEY UPDATE OF t) \
                     UPDATE tables t SET lease_until = spades_now_ms() + $4 FROM l \
                     WHERE t.id = l.id RETURNING t.id",
                )
                .bind(&ids)
                .bind(&epochs)
                .bind(node)
                .bind(lease_ms as i64)
                .fetch_all(&self.pool),
            )
            .await?;
        rows.iter().map(|(id,)| parse_id(id)).collect()
    }

    /// Claims up to `limit` unfinished tables that nobody holds: unowned,
    /// with an expired lease, or (`mine_too`, at start-up) owned by an
    /// earlier process of this node id. Each claim bumps the epoch; tables
    /// another node is claiming at the same moment are skipped.
    pub async fn claim(
        &self,
        node: &str,
        limit: usize,
        lease_ms: u64,
        mine_too: bool,
    ) -> Result<Vec<Claimed>, StorageError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let rows: Vec<(String, i64)> = self
            .timed(
                sqlx::query_as(
                    "UPDATE tables SET owner_node = $1, epoch = epoch + 1, lease_until = spades_now_ms() + $3 \
                     WHERE id IN (SELECT id FROM tables \
                         WHERE finished_at IS NULL AND closed_at IS NULL \
                         AND (owner_node IS NULL OR lease_until IS NULL OR lease_until < spades_now_ms() \
                              OR ($4 AND owner_node = $1)) \
                         ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED) \
                     RETURNING id, epoch",
                )
                .bind(node)
                .bind(limit as i64)
                .bind(lease_ms as i64)
                .bind(mine_too)
                .fetch_all(&self.pool),
            )
            .await?;
        rows.iter().map(|(id, epoch)| Ok(Claimed { table: parse_id(id)?, epoch: to_u64(*epoch) })).collect()
    }

    /// Gives up every lease `node` holds (the end of a drain: a table
    /// claimed while the drain began is handed over too).
    pub async fn release_all(&self, node: &str) -> Result<u64, StorageError> {
        Ok(self
            .timed(
                sqlx::query(
                    "UPDATE tables SET owner_node = NULL, lease_until = spades_now_ms() \
                     WHERE owner_node = $1 AND finished_at IS NULL AND closed_at IS NULL",
                )
                .bind(node)
                .execute(&self.pool),
            )
            .await?
            .rows_affected())
    }

    /// Who owns each of `tables` (tables not stored are left out).
    pub async fn owners(&self, tables: &[Uuid]) -> Result<Vec<(Uuid, Owner)>, StorageError> {
        if tables.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = tables.iter().map(Uuid::to_string).collect();
        let rows: Vec<(String, Option<String>, i64, bool, bool)> = self
            .timed(
                sqlx::query_as(
                    "SELECT id, owner_node, epoch, coalesce(lease_until >= spades_now_ms(), false), \
                            closed_at IS NOT NULL OR (finished_at IS NOT NULL AND \
                                NOT coalesce(lease_until >= spades_now_ms(), false)) \
                     FROM tables WHERE id = ANY($1)",
                )
                .bind(&ids)
                .fetch_all(&self.pool),
            )
            .await?;
        rows.into_iter()
            .map(|(id, node, epoch, live, done)| {
                Ok((parse_id(&id)?, Owner { node, epoch: to_u64(epoch), live, done }))
            })
            .collect()
    }

    /// The unfinished, unclosed tables of the whole cluster, counted at one
    /// instant (the heartbeat rows' counts are each as old as their node's
    /// last beat), with `lease_ms` the cluster's lease.
    pub async fn table_counts(&self, lease_ms: u64) -> Result<TableCounts, StorageError> {
        let rows: Vec<(Option<String>, i64, i64, i64)> = self
            .timed(
                sqlx::query_as(
                    "SELECT owner_node, count(*), \
                            count(*) FILTER (WHERE owner_node IS NULL OR lease_until IS NULL \
                                             OR lease_until < spades_now_ms()), \
                            count(*) FILTER (WHERE coalesce(lease_until, 0) < spades_now_ms() - $1) \
                     FROM tables WHERE finished_at IS NULL AND closed_at IS NULL GROUP BY owner_node",
                )
                .bind(lease_ms as i64)
                .fetch_all(&self.pool),
            )
            .await?;
        let mut counts = TableCounts::default();
        for (node, n, claimable, unowned) in rows {
            counts.total += to_u64(n);
            counts.claimable += to_u64(claimable);
            counts.unowned_long += to_u64(unowned);
            if let Some(node) = node {
                // Held by a live lease: the node's own tables.
                counts.owned.push((node, to_u64(n) - to_u64(claimable)));
            }
        }
        Ok(counts)
    }
}
