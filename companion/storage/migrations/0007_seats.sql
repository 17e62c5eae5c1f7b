-- Seats: which phone (browser session) sits as which player of a match. A phone holds at most one seat
-- per match; a seat is "taken" while a live player session holds it, and only an organiser gives a
-- taken seat to another phone (move) or to a second one (share). A row whose session ended counts for
-- nothing (the rows are purged on the way).
CREATE TABLE seats (
    match_id  TEXT NOT NULL,
    player    TEXT NOT NULL,
    sid_hash  TEXT NOT NULL,              -- web_sessions.sid_hash of the phone
    bound_at  TEXT NOT NULL,
    PRIMARY KEY (match_id, sid_hash)
);
CREATE INDEX seats_match_player ON seats(match_id, player);
CREATE INDEX seats_session ON seats(sid_hash);

-- The seats chosen before this migration (kept in each session's data) become rows.
INSERT OR IGNORE INTO seats(match_id, player, sid_hash, bound_at)
SELECT j.key, j.value, s.sid_hash, s.created_at
FROM web_sessions s, json_each(s.data, '$.seats') j
WHERE json_valid(s.data) AND json_type(s.data, '$.seats') = 'object' AND j.type = 'text';

-- A phone that joined by a table's QR code: its player rights are limited to this match (NULL: a
-- club-wide session).
ALTER TABLE web_sessions ADD COLUMN match_id TEXT;
