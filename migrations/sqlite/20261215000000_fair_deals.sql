-- Fair deals (SQLite): a match's seeds, fixed before its first deal.

-- JSON {"version", "server_seed", "commitment", "client_seeds"} of a fair
-- match, written with `seed` when the match starts (docs/fairness.md);
-- NULL for matches dealt from `seed` alone.
ALTER TABLE tables ADD COLUMN fair TEXT;
