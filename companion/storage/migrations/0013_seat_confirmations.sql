-- Who confirmed that a phone is the player whose seat it holds: an organiser (giving or confirming the
-- seat) or another phone seated at the same table. A confirmed seat's owner may reset a secret recorded
-- before the phone sat (docs/rulings.md, "Seats"). A row counts only while the phone still holds that
-- seat and both sessions live (the rows of ended sessions are purged with the seats').
CREATE TABLE seat_confirmations (
    match_id  TEXT NOT NULL,
    sid_hash  TEXT NOT NULL,               -- the phone confirmed (web_sessions.sid_hash)
    player    TEXT NOT NULL,               -- the seat it was confirmed in
    by_hash   TEXT NOT NULL,               -- the session that confirmed it
    by_role   TEXT NOT NULL,               -- 'organiser' or 'player'
    at        TEXT NOT NULL,
    PRIMARY KEY (match_id, sid_hash, player, by_hash)
);
CREATE INDEX seat_confirmations_by ON seat_confirmations(by_hash);
