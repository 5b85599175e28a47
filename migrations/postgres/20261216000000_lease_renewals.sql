-- Lease renewals rewrite `lease_until` of every table a node owns every
-- quarter lease. With `lease_until` in an index each renewal was a full
-- update (a new entry in every index of `tables`); without it, and with room
-- left on each page, it is a heap-only update that touches no index. The
-- claim and the drain find a node's tables through `owner_node` alone.
DROP INDEX tables_leases;
CREATE INDEX tables_owner ON tables (owner_node) WHERE finished_at IS NULL AND closed_at IS NULL;
ALTER TABLE tables SET (fillfactor = 60);
