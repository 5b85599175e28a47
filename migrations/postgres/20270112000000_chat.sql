-- What was said at the tables, kept for moderation (an operator's look at
-- an account or a table, reports) and for the writer's own export, for
-- `moderation.chat_days` days. No foreign keys: a message is written with
-- the table's moves and must never make their transaction fail. Times are
-- Unix milliseconds.
CREATE TABLE chat_messages (
    table_id    TEXT NOT NULL,
    -- the message's number at its table (the `id` of the `chat` frame)
    id          BIGINT NOT NULL,
    -- the writer's account; NULL: a player without one
    account_id  TEXT,
    -- 0 north, 1 east, 2 south, 3 west; NULL: a spectator
    seat        BIGINT,
    name        TEXT NOT NULL,
    text        TEXT NOT NULL,
    at          BIGINT NOT NULL,
    -- removed by an operator (the audit log says who and why)
    removed_at  BIGINT,
    PRIMARY KEY (table_id, id)
);
CREATE INDEX chat_messages_account ON chat_messages (account_id, at);
CREATE INDEX chat_messages_at ON chat_messages (at);

-- The table and message an operator action was about (removing a message).
ALTER TABLE audit_log ADD COLUMN table_id TEXT;
ALTER TABLE audit_log ADD COLUMN message_id BIGINT;
