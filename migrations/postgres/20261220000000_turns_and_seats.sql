-- Moves for one turn, and seats handed over (PostgreSQL).

-- The `seq` of the frame that showed the action: a move a client chose
-- from an older frame is refused as stale, also after a restart or a move
-- to another node. NULL for actions stored before.
ALTER TABLE actions ADD COLUMN seq BIGINT;
-- JSON [{"name", "from_hand"}]: who played the seat, once a person the
-- owner invited took over the seat of a player who left; NULL otherwise.
ALTER TABLE seats ADD COLUMN players TEXT;
