-- Tables and seats by account (PostgreSQL).
-- The account that sat at a seat, when its player was signed in (NULL for
-- bots, for people who were not, and for seats stored before): it comes
-- back to the seat with no token, and a player's own matches are found by
-- it.
ALTER TABLE seats ADD COLUMN account_id TEXT;
CREATE INDEX seats_account ON seats (account_id);
-- The account that created the table signed in: it acts as the owner
-- without the owner token (NULL: only the token owns the table).
ALTER TABLE tables ADD COLUMN owner_account TEXT;
