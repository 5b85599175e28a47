-- Passwords of accounts (when the operator switches them on): one per
-- account, kept as an argon2id hash in the PHC string format (the salt and
-- the parameters with it); nothing here is the password.
CREATE TABLE passwords (
    account_id   TEXT PRIMARY KEY REFERENCES accounts (id),
    hash         TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    changed_at   BIGINT NOT NULL,
    last_used_at BIGINT
);
