-- Which join link a player session was made from, so that ending the link ends its sessions.
-- NULL: an organiser's session, or one made before this migration (organisers can end those one by one).
ALTER TABLE web_sessions ADD COLUMN join_hash TEXT;
CREATE INDEX web_sessions_join_hash ON web_sessions(join_hash);
