-- Cluster mode (PostgreSQL): which node owns each unfinished table and until
-- when, and the nodes themselves. A single server leaves these empty.

-- The owning node's id, and the end of its lease (Unix ms, the database's
-- clock). Every write of the owner checks, in its transaction and under a
-- share lock of this row, that owner_node and epoch are still its own.
ALTER TABLE tables ADD COLUMN owner_node TEXT;
ALTER TABLE tables ADD COLUMN lease_until BIGINT;
CREATE INDEX tables_leases ON tables (owner_node, lease_until)
    WHERE finished_at IS NULL AND closed_at IS NULL;

-- One row per node id: the process now using it (incarnation), where it
-- listens, its last heartbeat (Unix ms, the database's clock), whether it is
-- draining, and how many tables it owns.
CREATE TABLE nodes (
    id           TEXT PRIMARY KEY,
    incarnation  TEXT NOT NULL,
    address      TEXT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    draining     BIGINT NOT NULL DEFAULT 0,
    tables       BIGINT NOT NULL DEFAULT 0
);

-- The database's clock in Unix ms: leases never depend on the nodes' clocks.
CREATE FUNCTION spades_now_ms() RETURNS BIGINT
    AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT $$
    LANGUAGE SQL VOLATILE;
