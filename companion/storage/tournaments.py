"""Tournaments: settings, registered players, each round's seating and matches (migration 0009).

A registered player's club roster id (migration 0010) sits beside the name when known; a player who withdrew
and the players sitting a round out are migration 0012's.

Results are not stored here: a round's matches are ordinary matches, and the standings are computed from
their logs (``companion/web/tournaments.py`` folds them through the match service)."""

from __future__ import annotations

import json

from companion.base.errors import ConflictError, NotFoundError
from companion.storage.db import new_id


def _row(row) -> dict:
    return {"id": row["id"], "name": row["name"], "date": row["date"], "game": row["game"],
            "table_size": row["table_size"], "rounds": row["rounds"], "clock_minutes": row["clock_minutes"],
            "created_at": row["created_at"]}


def create(store, name: str, date: str, game: str, table_size: int, rounds: int,
           clock_minutes: int | None, players: list[str], player_ids: list[str | None] | None = None) -> dict:
    """A new tournament with its players (names; ``player_ids``: each one's club roster id, or None)."""
    tid = new_id()
    player_ids = player_ids or [None] * len(players)
    with store.write() as c:
        c.execute("INSERT INTO tournaments(id, name, date, game, table_size, rounds, clock_minutes, created_at) "
                  "VALUES (?,?,?,?,?,?,?,?)",
                  (tid, name, date, game, table_size, rounds, clock_minutes, store.clock.now_iso()))
        for i, (p, pid) in enumerate(zip(players, player_ids)):
            c.execute("INSERT INTO tournament_players(tournament_id, position, player, player_id) VALUES (?,?,?,?)",
                      (tid, i, p, pid))
    return get(store, tid)


def get(store, tid: str) -> dict:
    conn = store.conn()
    row = conn.execute("SELECT * FROM tournaments WHERE id=?", (tid,)).fetchone()
    if row is None:
        raise NotFoundError("no tournament {tid}", "tournament_id", tid=tid)
    out = _row(row)
    registered = conn.execute("SELECT player, player_id, withdrawn_at FROM tournament_players WHERE tournament_id=? "
                              "ORDER BY position", (tid,)).fetchall()
    out["players"] = [r["player"] for r in registered]
    out["player_ids"] = [r["player_id"] for r in registered]  # the roster id of each, or None
    out["withdrawn"] = [r["player"] for r in registered if r["withdrawn_at"] is not None]
    out["round_list"] = [{"round": r["round"], "tables": json.loads(r["tables"]),
                          "match_ids": json.loads(r["match_ids"]) if r["match_ids"] else None,
                          "started_at": r["started_at"],
                          "sitting_out": json.loads(r["sitting_out"]) if r["sitting_out"] else []}
                         for r in conn.execute("SELECT * FROM tournament_rounds WHERE tournament_id=? ORDER BY round",
                                               (tid,))]
    return out


def list_all(store) -> list[dict]:
    rows = store.conn().execute("SELECT * FROM tournaments ORDER BY date DESC, created_at DESC").fetchall()
    return [_row(r) for r in rows]


def add_player(store, tid: str, player: str, player_id: str | None = None) -> None:
    """Register ``player`` (a name), with their club roster id when known."""
    with store.write() as c:
        if c.execute("SELECT 1 FROM tournament_players WHERE tournament_id=? AND player=?", (tid, player)).fetchone():
            raise ConflictError("{player!r} is registered already", "$.player", player=player)
        n = c.execute("SELECT COALESCE(MAX(position), -1) + 1 FROM tournament_players WHERE tournament_id=?",
                      (tid,)).fetchone()[0]
        if player_id and c.execute("SELECT 1 FROM tournament_players WHERE tournament_id=? AND player_id=?",
                                   (tid, player_id)).fetchone():
            raise ConflictError("{player!r} is registered already (under another name)", "$.player_id", player=player)
        c.execute("INSERT INTO tournament_players(tournament_id, position, player, player_id) VALUES (?,?,?,?)",
                  (tid, n, player, player_id))


def withdraw_player(store, tid: str, player: str, back: bool = False) -> None:
    """``player`` withdraws (never seated again; their results stay), or comes back (``back``)."""
    with store.write() as c:
        n = c.execute("UPDATE tournament_players SET withdrawn_at=? WHERE tournament_id=? AND player=?",
                      (None if back else store.clock.now_iso(), tid, player)).rowcount
        if not n:
            raise NotFoundError("{player!r} is not registered", "player", player=player)


def drop_round(store, tid: str, number: int) -> None:
    """Forget the seating of round ``number``, not started (the players changed: it is seated again)."""
    with store.write() as c:
        c.execute("DELETE FROM tournament_rounds WHERE tournament_id=? AND round=? AND started_at IS NULL", (tid, number))


def remove_player(store, tid: str, player: str) -> None:
    with store.write() as c:
        if not c.execute("DELETE FROM tournament_players WHERE tournament_id=? AND player=?", (tid, player)).rowcount:
            raise NotFoundError("{player!r} is not registered", "player", player=player)


def put_round(store, tid: str, number: int, tables: list[list[str]], sitting_out: list[str] | None = None) -> None:
    """The seating of round ``number`` (new, or replacing one not started), with the players sitting it out
    (None: those of the seating it replaces)."""
    with store.write() as c:
        row = c.execute("SELECT started_at FROM tournament_rounds WHERE tournament_id=? AND round=?",
                        (tid, number)).fetchone()
        if row is not None and row["started_at"] is not None:
            raise ConflictError("round {number} has started: its seats are fixed", "$.round", number=number)
        out = None if sitting_out is None else json.dumps(sitting_out)
        c.execute("INSERT INTO tournament_rounds(tournament_id, round, tables, sitting_out) VALUES (?,?,?,?) "
                  "ON CONFLICT(tournament_id, round) DO UPDATE SET tables=excluded.tables, "
                  "sitting_out=COALESCE(excluded.sitting_out, tournament_rounds.sitting_out)",
                  (tid, number, json.dumps(tables), out))


def start_round(store, tid: str, number: int, match_ids: list[str]) -> None:
    with store.write() as c:
        n = c.execute("UPDATE tournament_rounds SET match_ids=?, started_at=? WHERE tournament_id=? AND round=? "
                      "AND started_at IS NULL", (json.dumps(match_ids), store.clock.now_iso(), tid, number)).rowcount
        if not n:
            raise ConflictError("round {number} has started already", "$.round", number=number)
