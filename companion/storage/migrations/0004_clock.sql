-- Match clock checkpoints (companion/clockrunner.py): one row per match, overwritten at most every 30 s
-- while its clock runs, so a power cut loses at most that much running time. Not events: the event log
-- stays the record of what happened at the table; this row only says "the clock was still running here".
CREATE TABLE clock_checkpoints (
    match_id           TEXT PRIMARY KEY REFERENCES matches(id),
    at                 TEXT NOT NULL,       -- server time of the checkpoint (ISO-8601 UTC)
    seq                INTEGER NOT NULL,    -- the match's last event seq at that time
    elapsed_seconds    REAL NOT NULL,
    remaining_seconds  REAL NOT NULL,
    power_lost         TEXT                 -- JSON flag set by recovery, cleared on clock.resume / dismiss
) WITHOUT ROWID;
