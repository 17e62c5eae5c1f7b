-- Matches and their append-only event logs.
CREATE TABLE matches (
    id          TEXT PRIMARY KEY,
    game        TEXT NOT NULL,
    players     TEXT NOT NULL,            -- JSON list of names in seat order
    options     TEXT NOT NULL DEFAULT '{}',
    created_at  TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'open'   -- open | ended
);

CREATE TABLE events (
    match_id  TEXT NOT NULL REFERENCES matches(id),
    seq       INTEGER NOT NULL,          -- 1, 2, 3 ... per match, no gaps
    id        TEXT NOT NULL UNIQUE,
    type      TEXT NOT NULL,
    data      TEXT NOT NULL DEFAULT '{}',
    at        TEXT NOT NULL,
    PRIMARY KEY (match_id, seq)
) WITHOUT ROWID;

-- Club settings and other small key/value state.
CREATE TABLE settings (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
