-- Moderation: operators, the sanctions they put on accounts, and the audit
-- log of every operator action. Times are Unix milliseconds.

-- Accounts that hold the operator role. granted_by NULL: the server's
-- command line (`spades-server admin grant`).
CREATE TABLE operators (
    account_id  TEXT PRIMARY KEY REFERENCES accounts (id),
    granted_at  BIGINT NOT NULL,
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
    until_at     BIGINT,
    made_at      BIGINT NOT NULL,
    made_by      TEXT REFERENCES accounts (id),
    lifted_at    BIGINT,
    lifted_by    TEXT REFERENCES accounts (id),
    lift_reason  TEXT
);
CREATE INDEX sanctions_account ON sanctions (account_id, made_at);

-- Every operator action, written in the transaction of the action, with
-- the names as they were then. Nothing updates or deletes these rows.
CREATE TABLE audit_log (
    id            BIGSERIAL PRIMARY KEY,
    at            BIGINT NOT NULL,
    operator_id   TEXT,
    operator_name TEXT,
    -- 'grant_operator', 'revoke_operator', 'suspend', 'ban', 'mute', 'lift'
    action        TEXT NOT NULL,
    account_id    TEXT,
    account_name  TEXT,
    sanction_id   TEXT,
    reason        TEXT NOT NULL,
    until_at      BIGINT
);
