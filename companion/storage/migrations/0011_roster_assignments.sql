-- The audit of the roster migration's leftovers put on the roster by hand (companion players assign, the
-- roster page): one line per name placed, who, when, the name as recorded and the roster entry it went to.
-- A line names an app match's seat (match_id, seat) or a season result (season_id, season_match).
CREATE TABLE roster_assignments (
    id            INTEGER PRIMARY KEY,
    club_id       TEXT NOT NULL,
    match_id      TEXT,
    seat          INTEGER,
    season_id     TEXT,
    season_match  TEXT,
    name          TEXT NOT NULL,
    player_id     TEXT NOT NULL,
    player_name   TEXT NOT NULL,
    created       INTEGER NOT NULL DEFAULT 0,   -- 1: a new roster entry was made for the name
    by            TEXT NOT NULL,
    at            TEXT NOT NULL
);
CREATE INDEX roster_assignments_club ON roster_assignments(club_id);
