-- Passkeys (WebAuthn credentials) of accounts, and the ceremonies under way.

-- The public part of each credential, as the relying party keeps it (the
-- public key and the signature counter, JSON): nothing here signs anybody in.
CREATE TABLE passkeys (
    -- the credential id, hex
    id           TEXT PRIMARY KEY,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    -- the name the player gave it ("Phone")
    name         TEXT NOT NULL,
    credential   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT
);
CREATE INDEX passkeys_account ON passkeys (account_id);

-- A ceremony between its challenge and the answer: kept on the server so
-- that any node may finish it, deleted when taken (used once) or when it
-- runs out.
CREATE TABLE ceremonies (
    id          TEXT PRIMARY KEY,
    -- 'passkey_register' or 'passkey_sign_in'
    kind        TEXT NOT NULL,
    -- registration: the signed-in account
    account_id  TEXT REFERENCES accounts (id),
    state       TEXT NOT NULL,
    expires_at  BIGINT NOT NULL
);
CREATE INDEX ceremonies_expires ON ceremonies (expires_at);
