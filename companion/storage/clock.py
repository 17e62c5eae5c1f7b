"""Match clock checkpoints (migration 0004): one row per match, the running time of its clock at most
every 30 s, and the "power was lost" flag recovery sets. Not events: the log stays the record of what
happened at the table; a checkpoint only says "the clock was still running here"."""

from __future__ import annotations

import json


class ClockRows:
    def write_checkpoints(self, rows: list[tuple]) -> None:
        """``rows``: ``(match_id, at, seq, elapsed_seconds, remaining_seconds)``, one transaction."""
        with self.write() as c:
            c.executemany(
                "INSERT INTO clock_checkpoints(match_id, at, seq, elapsed_seconds, remaining_seconds) "
                "VALUES (?,?,?,?,?) ON CONFLICT(match_id) DO UPDATE SET at=excluded.at, seq=excluded.seq, "
                "elapsed_seconds=excluded.elapsed_seconds, remaining_seconds=excluded.remaining_seconds",
                rows)

    def set_power_lost(self, match_id: str, at: str, seq: int, elapsed: float, remaining: float,
                       flag: dict) -> None:
        with self.write() as c:
            c.execute(
                "INSERT INTO clock_checkpoints(match_id, at, seq, elapsed_seconds, remaining_seconds, power_lost) "
                "VALUES (?,?,?,?,?,?) ON CONFLICT(match_id) DO UPDATE SET at=excluded.at, seq=excluded.seq, "
                "elapsed_seconds=excluded.elapsed_seconds, remaining_seconds=excluded.remaining_seconds, "
                "power_lost=excluded.power_lost",
                (match_id, at, seq, elapsed, remaining, json.dumps(flag)))

    def clear_power_lost(self, match_id: str) -> None:
        with self.write() as c:
            c.execute("UPDATE clock_checkpoints SET power_lost=NULL WHERE match_id=?", (match_id,))

    def checkpoints(self) -> dict[str, dict]:
        rows = self.conn().execute(
            "SELECT match_id, at, seq, elapsed_seconds, remaining_seconds, power_lost FROM clock_checkpoints")
        return {r["match_id"]: {"at": r["at"], "seq": r["seq"], "elapsed_seconds": r["elapsed_seconds"],
                                "remaining_seconds": r["remaining_seconds"],
                                "power_lost": json.loads(r["power_lost"]) if r["power_lost"] else None}
                for r in rows}
