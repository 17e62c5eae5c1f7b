-- Who wrote an event, from a phone: JSON {"role", "seat"?, "for"?} (the writer's role, the seat its phone held
-- at the match, and the seat the event acts for when that is another one: docs/rulings.md, "Playing for
-- another seat"). NULL for what the box wrote itself (the CLI, the GPIO panel, the clock runner, an import of
-- a log without it) and for every event stored before this column: an old log reads as it always did.
ALTER TABLE events ADD COLUMN writer TEXT;
