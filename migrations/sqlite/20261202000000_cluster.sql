-- Cluster mode runs on PostgreSQL only; SQLite gets the same columns and
-- table so that both schemas stay alike. A single server leaves them empty.

ALTER TABLE tables ADD COLUMN owner_node TEXT;
ALTER TABLE tables ADD COLUMN lease_until BIGINT;

CREATE TABLE nodes (
    id           TEXT PRIMARY KEY,
    incarnation  TEXT NOT NULL,
    address      TEXT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    draining     BIGINT NOT NULL DEFAULT 0,
    tables       BIGINT NOT NULL DEFAULT 0
);
