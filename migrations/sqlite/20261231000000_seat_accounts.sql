-- Seats by account (SQLite): the account that sat at a seat,
-- when its player was signed in (NULL for bots, for people who were not,
-- and for seats stored before). A player's own matches are found by it.
ALTER TABLE seats ADD COLUMN account_id TEXT;
CREATE INDEX seats_account ON seats (account_id);
