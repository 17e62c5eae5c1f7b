-- A tournament day: its settings and registered players (by name; a later roster may reference them),
-- and each round's seating (tables of player names, table 1 first) and, once started, its matches.
CREATE TABLE tournaments (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    date          TEXT NOT NULL,
    game          TEXT NOT NULL,
    table_size    INTEGER NOT NULL,
    rounds        INTEGER NOT NULL,
    clock_minutes INTEGER,
    created_at    TEXT NOT NULL
);
CREATE TABLE tournament_players (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    player        TEXT NOT NULL,
    PRIMARY KEY (tournament_id, player)
);
CREATE TABLE tournament_rounds (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id) ON DELETE CASCADE,
    round         INTEGER NOT NULL,
    tables        TEXT NOT NULL,          -- JSON [[player, ...], ...]
    match_ids     TEXT,                   -- JSON [match id per table] once the round started
    started_at    TEXT,
    PRIMARY KEY (tournament_id, round)
);
