-- Players as people: accounts, their names, devices and sessions (SQLite).
-- Times are Unix milliseconds. Secrets are never stored: a device secret
-- and a session token are kept as the hex SHA-256 of what the client holds.

-- Every player: a guest first (made from a device secret).
CREATE TABLE accounts (
    id          TEXT PRIMARY KEY,
    -- the display name, as the player typed it
    name        TEXT NOT NULL,
    -- 'guest'
    kind        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    -- the last rename, if any (renames are rate-limited)
    renamed_at  INTEGER
);

-- Names in use, and names kept for the account that gave them up: one row
-- per confusable skeleton (UTS 39, of the NFKC case-folded name), so that
-- no two accounts hold names that look alike.
CREATE TABLE account_names (
    skeleton    TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    name        TEXT NOT NULL,
    -- NULL while the account uses the name; after a rename, until when
    -- nobody else may take it
    kept_until  INTEGER
);
CREATE INDEX account_names_account ON account_names (account_id);

-- The devices of an account: SHA-256 of each device secret, hex.
CREATE TABLE devices (
    secret_hash TEXT PRIMARY KEY,
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    created_at  INTEGER NOT NULL
);
CREATE INDEX devices_account ON devices (account_id);

-- Sessions: SHA-256 of the token, hex; what the player sees in their
-- list (client, address, times); gone once revoked or expired.
CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,
    token_hash   TEXT NOT NULL UNIQUE,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    client       TEXT NOT NULL,
    address      TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
);
CREATE INDEX sessions_account ON sessions (account_id);
CREATE INDEX sessions_expires ON sessions (expires_at);
