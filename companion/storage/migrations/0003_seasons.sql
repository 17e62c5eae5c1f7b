-- The fan club's championship: clubs, their seasons (one per club, game and year) and the results.
-- settings: JSON {"points"?: {"<players>": [..]}, "threshold"?: 0.3, "bonus"?: {"objective", "eliminated"}};
-- a season's settings override its club's, which override the defaults (companion/season.py).
CREATE TABLE clubs (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE COLLATE NOCASE,
    settings    TEXT NOT NULL DEFAULT '{}',
    created_at  TEXT NOT NULL
);

CREATE TABLE seasons (
    id          TEXT PRIMARY KEY,
    club_id     TEXT NOT NULL REFERENCES clubs(id),
    game        TEXT NOT NULL,
    year        INTEGER NOT NULL,
    name        TEXT NOT NULL,
    settings    TEXT NOT NULL DEFAULT '{}',
    created_at  TEXT NOT NULL,
    UNIQUE (club_id, game, year)
);

-- One row per match of a season: fed by a finished app match (source 'app', match_id set) or entered
-- by the organiser for a match played without the app (source 'manual', match_id NULL).
CREATE TABLE season_matches (
    season_id   TEXT NOT NULL REFERENCES seasons(id),
    id          TEXT NOT NULL,               -- the match's id within the season (the app match id for 'app')
    date        TEXT NOT NULL,               -- YYYY-MM-DD or a UTC ISO date-time
    source      TEXT NOT NULL,               -- app | manual
    match_id    TEXT UNIQUE REFERENCES matches(id),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (season_id, id)
) WITHOUT ROWID;

CREATE TABLE season_results (
    season_id   TEXT NOT NULL,
    match       TEXT NOT NULL,
    player      TEXT NOT NULL,
    place       INTEGER NOT NULL,
    objective   INTEGER NOT NULL DEFAULT 0,
    eliminated  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (season_id, match, player),
    FOREIGN KEY (season_id, match) REFERENCES season_matches(season_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
