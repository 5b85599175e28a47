-- Identities at OpenID Connect providers, each linked to one account: found
-- by the issuer (exactly as the provider publishes it) and the subject the
-- provider gives, never by an e-mail address.
CREATE TABLE oidc_identities (
    id           TEXT PRIMARY KEY,
    issuer       TEXT NOT NULL,
    subject      TEXT NOT NULL,
    account_id   TEXT NOT NULL REFERENCES accounts (id),
    -- the provider's id in the configuration when it was linked
    provider     TEXT NOT NULL,
    -- what the player recognises it by: the name the provider gave
    label        TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    last_used_at INTEGER,
    UNIQUE (issuer, subject)
);
CREATE INDEX oidc_identities_account ON oidc_identities (account_id);
