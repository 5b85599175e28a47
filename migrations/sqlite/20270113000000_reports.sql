-- Players' reports of a chat message or of a player, with the context
-- copied when they were made (the messages around, the table's public
-- status), and how an operator dealt with each. No foreign keys: a report
-- keeps the names as they were. Times are Unix milliseconds.
CREATE TABLE reports (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    made_at        INTEGER NOT NULL,
    reporter_id    TEXT NOT NULL,
    reporter_name  TEXT NOT NULL,
    table_id       TEXT NOT NULL,
    -- the chat message reported (its number at the table); NULL: a player
    message_id     INTEGER,
    -- 0 north, 1 east, 2 south, 3 west; NULL: a spectator's message
    seat           INTEGER,
    -- the account reported; NULL: a player without one
    account_id     TEXT,
    -- the name the player reported had at the table
    name           TEXT NOT NULL,
    -- 'abusive_chat', 'spam', 'cheating', 'unsportsmanlike',
    -- 'offensive_name' or 'other'
    reason         TEXT NOT NULL,
    text           TEXT NOT NULL,
    -- JSON ReportContext
    context        TEXT NOT NULL,
    resolved_at    INTEGER,
    resolved_by    TEXT,
    resolved_name  TEXT,
    resolution     TEXT
);
CREATE INDEX reports_open ON reports (resolved_at, id);
CREATE INDEX reports_account ON reports (account_id, id);
CREATE INDEX reports_reporter ON reports (reporter_id, made_at);
-- One open report a target and reporter: the same message, or the same
-- player in the same seat (another player there later is another target).
CREATE UNIQUE INDEX reports_one_open ON reports (reporter_id, table_id, COALESCE(message_id, -1),
    COALESCE(seat, -1), COALESCE(account_id, ''), name) WHERE resolved_at IS NULL;

-- The report an operator action dealt with.
ALTER TABLE audit_log ADD COLUMN report_id INTEGER;
