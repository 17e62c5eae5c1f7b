-- A tournament day changes between rounds: a registered player may withdraw (never seated again, their results
-- kept: withdrawn_at set; registering the same name again brings them back), and a round whose numbers don't
-- fit the game's tables has players sitting it out (tournament_rounds.sitting_out: JSON [player, ...]).
ALTER TABLE tournament_players ADD COLUMN withdrawn_at TEXT;
ALTER TABLE tournament_rounds ADD COLUMN sitting_out TEXT;
