-- Moderation: operators, the sanctions they put on accounts, and the audit
-- log of every operator action. Times are Unix milliseconds.

-- Accounts that hold the operator role. granted_by NULL: the server's
-- command line (`spades-server admin grant`).
CREATE TABLE operators (
    account_id  TEXT PRIMARY KEY REFERENCES accounts (id),
    granted_at  INTEGER NOT NULL,
    granted_by  TEXT REFERENCES accounts (id)
);

-- Suspensions, bans and mutes: kept after they end or are lifted (the
-- account's history). A sanction holds while lifted_at is NULL and
-- until_at is NULL or later than now.
CREATE TABLE sanctions (
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    -- 'suspend', 'ban' or 'mute'
    kind         TEXT NOT NULL,
    reason       TEXT NOT NULL,
    until_at     INTEGER,
    made_at      INTEGER NOT NULL,
    made_by      TEXT REFERENCES accounts (id),
    lifted_at    INTEGER,
    lifted_by    TEXT REFERENCES accounts (id),
    lift_reason  TEXT
);
CREATE INDEX sanctions_account ON sanctions (account_id, made_at);

-- Every operator action, written in the transaction of the action, with
-- the names as they were then. Nothing updates or deletes these rows.
CREATE TABLE audit_log (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    at            INTEGER NOT NULL,
    operator_id   TEXT,
    operator_name TEXT,
    -- 'grant_operator', 'revoke_operator', 'suspend', 'ban', 'mute', 'lift'
    action        TEXT NOT NULL,
    account_id    TEXT,
    account_name  TEXT,
    sanction_id   TEXT,
    reason        TEXT NOT NULL,
    until_at      INTEGER
);
