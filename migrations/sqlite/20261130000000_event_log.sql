-- The event log of the Spades table server (SQLite).
-- Every accepted action is a row of `actions`, written before any client
-- sees its effect; a match is rebuilt by replaying them through the engine.

CREATE TABLE tables (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    -- JSON: {"rules": {...}, "tempo": "..."}
    options     TEXT NOT NULL,
    -- SHA-256 of the owner token, hex
    owner_hash  TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    -- the match seed (u64 stored as its i64 bit pattern), once started
    seed        INTEGER,
    started_at  INTEGER,
    finished_at INTEGER,
    -- JSON MatchResult, once finished
    result      TEXT,
    -- set when an unused table is closed: it is not restored
    closed_at   INTEGER
);

CREATE INDEX tables_open ON tables (finished_at, closed_at);
CREATE INDEX tables_created ON tables (created_at);

CREATE TABLE seats (
    table_id    TEXT NOT NULL REFERENCES tables (id),
    -- 0 north, 1 east, 2 south, 3 west
    seat        INTEGER NOT NULL,
    name        TEXT NOT NULL,
    -- 'human' or 'bot'
    kind        TEXT NOT NULL,
    -- SHA-256 of the seat token, hex (people only)
    token_hash  TEXT,
    -- 1 when the player left the match on purpose
    has_left    INTEGER NOT NULL,
    PRIMARY KEY (table_id, seat)
);

CREATE TABLE actions (
    table_id    TEXT NOT NULL REFERENCES tables (id),
    -- position in the match's move list, from 0
    idx         INTEGER NOT NULL,
    seat        INTEGER NOT NULL,
    -- 'bid' or 'play'
    kind        TEXT NOT NULL,
    -- the bid ("3") or the card ("QH")
    value       TEXT NOT NULL,
    -- 'player', 'timeout', 'autopilot' or 'bot'
    source      TEXT NOT NULL,
    at          INTEGER NOT NULL,
    PRIMARY KEY (table_id, idx)
);

CREATE TABLE hands (
    table_id    TEXT NOT NULL REFERENCES tables (id),
    hand_number INTEGER NOT NULL,
    -- JSON HandResult: bids, tricks, nils and each team's scoring
    result      TEXT NOT NULL,
    PRIMARY KEY (table_id, hand_number)
);
