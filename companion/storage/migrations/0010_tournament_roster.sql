-- A tournament's registered player may be a club roster player: their roster id beside the name (NULL for a
-- name not on the roster). A round's matches put those seats on the roster (the player's page lists them).
ALTER TABLE tournament_players ADD COLUMN player_id TEXT;
