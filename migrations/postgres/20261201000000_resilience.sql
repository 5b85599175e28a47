-- Resilience (PostgreSQL): a restart counter per table, the absence state of
-- each seat, and summary columns so the match list needs no replay.

-- Bumped each time the table is restored; view sequence numbers of a
-- restored table start at epoch << 32.
ALTER TABLE tables ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0;
-- Finished hands and each team's score after the last one, written in the
-- same transaction as each row of `hands`.
ALTER TABLE tables ADD COLUMN hands_played BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tables ADD COLUMN score_ns BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tables ADD COLUMN score_ew BIGINT NOT NULL DEFAULT 0;

-- 1 once timeouts have put the seat on autopilot
ALTER TABLE seats ADD COLUMN autopilot BIGINT NOT NULL DEFAULT 0;
-- the seat's count of turns lost to the clock
ALTER TABLE seats ADD COLUMN timeouts BIGINT NOT NULL DEFAULT 0;
-- 1 once an absent player's grace period has run out
ALTER TABLE seats ADD COLUMN grace_expired BIGINT NOT NULL DEFAULT 0;

UPDATE tables SET
    hands_played = (SELECT count(*) FROM hands h WHERE h.table_id = tables.id),
    score_ns = coalesce((SELECT (h.result::jsonb -> 'teams' -> 0 ->> 'score')::bigint FROM hands h
                         WHERE h.table_id = tables.id ORDER BY h.hand_number DESC LIMIT 1), 0),
    score_ew = coalesce((SELECT (h.result::jsonb -> 'teams' -> 1 ->> 'score')::bigint FROM hands h
                         WHERE h.table_id = tables.id ORDER BY h.hand_number DESC LIMIT 1), 0);

-- The match list: started tables, newest first.
CREATE INDEX tables_recent ON tables (created_at DESC, id DESC) WHERE seed IS NOT NULL;
