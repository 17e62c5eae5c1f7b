-- The club roster: each player once per club. Matches and season results reference roster ids, so a
-- rename keeps every result (the event logs keep the names typed at the table, unchanged).

CREATE TABLE players (
    id          TEXT PRIMARY KEY,
    club_id     TEXT NOT NULL REFERENCES clubs(id),
    name        TEXT NOT NULL,
    short_name  TEXT NOT NULL DEFAULT '',     -- empty: the first word of the name
    colour      TEXT NOT NULL DEFAULT '',     -- preferred colour #rrggbb, or empty
    created_at  TEXT NOT NULL,
    UNIQUE (club_id, name)
);

-- The roster player of each seat of an app match (seat = index in matches.players), and the place
-- the player finished in (derived from the event log when the match ends, NULL while in play).
CREATE TABLE match_players (
    match_id   TEXT NOT NULL REFERENCES matches(id),
    seat       INTEGER NOT NULL,
    player_id  TEXT NOT NULL REFERENCES players(id),
    place      INTEGER,
    PRIMARY KEY (match_id, seat)
) WITHOUT ROWID;
CREATE INDEX match_players_player ON match_players(player_id);

-- Season results point at the roster too (the name column keeps the name as it was recorded).
ALTER TABLE season_results ADD COLUMN player_id TEXT REFERENCES players(id);
CREATE INDEX season_results_player ON season_results(player_id);

-- "This is me" links: a personal join link per roster player, only its SHA-256 stored.
CREATE TABLE player_links (
    token_hash  TEXT PRIMARY KEY,
    player_id   TEXT NOT NULL REFERENCES players(id),
    created_at  TEXT NOT NULL,
    revoked     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX player_links_player ON player_links(player_id);

-- Every merge of two roster entries (the same person typed twice): who, when, from, into.
CREATE TABLE player_merges (
    id          INTEGER PRIMARY KEY,
    club_id     TEXT NOT NULL,
    from_id     TEXT NOT NULL,
    from_name   TEXT NOT NULL,
    into_id     TEXT NOT NULL,
    into_name   TEXT NOT NULL,
    by          TEXT NOT NULL,
    at          TEXT NOT NULL,
    results     INTEGER NOT NULL              -- how many match seats and season results moved
);

-- Matches the migration could not put on a roster (no club to tell which), for the organiser to
-- assign to a club (companion players pending / assign).
CREATE TABLE roster_pending (
    match_id  TEXT PRIMARY KEY REFERENCES matches(id),
    reason    TEXT NOT NULL
);

-- Existing data onto the roster. A match's club: the season it was recorded in, else the season or
-- club its options name, else the only club when there is exactly one (names matched exactly).
CREATE TEMP TABLE _match_club AS
SELECT m.id AS match_id, m.players AS players,
    COALESCE(
        (SELECT s.club_id FROM season_matches sm JOIN seasons s ON s.id = sm.season_id WHERE sm.match_id = m.id),
        (SELECT s.club_id FROM seasons s WHERE s.id = json_extract(m.options, '$.season')),
        (SELECT c.id FROM clubs c WHERE c.id = json_extract(m.options, '$.club')),
        (SELECT c.id FROM clubs c WHERE c.name = json_extract(m.options, '$.club') COLLATE NOCASE),
        CASE WHEN json_extract(m.options, '$.season') IS NULL AND json_extract(m.options, '$.club') IS NULL
             AND (SELECT COUNT(*) FROM clubs) = 1 THEN (SELECT id FROM clubs) END
    ) AS club_id
FROM matches m
WHERE json_valid(m.players);

INSERT INTO players (id, club_id, name, created_at)
SELECT lower(hex(randomblob(6))), club_id, name, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
FROM (
    SELECT mc.club_id AS club_id, je.value AS name
    FROM _match_club mc, json_each(mc.players) je
    WHERE mc.club_id IS NOT NULL AND je.type = 'text'
    UNION
    SELECT s.club_id, r.player FROM season_results r JOIN seasons s ON s.id = r.season_id
);

INSERT OR IGNORE INTO match_players (match_id, seat, player_id, place)
SELECT mc.match_id, je.key, p.id,
    (SELECT r.place FROM season_matches sm JOIN season_results r ON r.season_id = sm.season_id AND r.match = sm.id
     WHERE sm.match_id = mc.match_id AND r.player = je.value)
FROM _match_club mc, json_each(mc.players) je JOIN players p ON p.club_id = mc.club_id AND p.name = je.value
WHERE mc.club_id IS NOT NULL;

UPDATE season_results SET player_id = (
    SELECT p.id FROM players p JOIN seasons s ON s.club_id = p.club_id
    WHERE s.id = season_results.season_id AND p.name = season_results.player);

INSERT INTO roster_pending (match_id, reason)
SELECT m.id, CASE
    WHEN NOT json_valid(m.players) THEN 'unreadable players'
    WHEN (SELECT COUNT(*) FROM clubs) = 0 THEN 'no club yet'
    WHEN json_extract(m.options, '$.season') IS NOT NULL OR json_extract(m.options, '$.club') IS NOT NULL
        THEN 'its club or season does not exist'
    ELSE 'several clubs' END
FROM matches m LEFT JOIN _match_club mc ON mc.match_id = m.id
WHERE mc.club_id IS NULL;

DROP TABLE _match_club;
