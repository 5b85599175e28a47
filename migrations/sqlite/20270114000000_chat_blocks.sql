-- Players whose chat an account does not want to read (kept with the
-- account, on every device): the clients hide their messages. Times are
-- Unix milliseconds.
CREATE TABLE chat_blocks (
    account_id  TEXT NOT NULL REFERENCES accounts (id),
    blocked_id  TEXT NOT NULL REFERENCES accounts (id),
    at          INTEGER NOT NULL,
    PRIMARY KEY (account_id, blocked_id)
);
