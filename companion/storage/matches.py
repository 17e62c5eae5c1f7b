"""Matches, their event log and what the pages keep beside a match (table label, colours).

Tables ``matches``, ``events`` (migration 0001) and ``match_meta`` (0002). ``matches.status`` is
derived from the log (``open``/``ended``): :meth:`MatchRows.append` writes it in the event's own
transaction through the ``derive`` callback, and ``companion db rebuild`` recomputes it.
"""

from __future__ import annotations

import json

from companion.base.errors import ConflictError, InputError, NotFoundError
from companion.base.jsonio import plain
from companion.storage.db import new_id


class MatchRows:
    # -- matches -----------------------------------------------------------
    def create_match(self, game: str, players: list[str], options: dict | None = None,
                     match_id: str | None = None, created_at: str | None = None,
                     label: str = "", colours: dict | None = None) -> dict:
        match = {
            "id": match_id or new_id(),
            "game": game,
            "players": list(players),
            "options": dict(options or {}),
            "created_at": created_at or self.clock.now_iso(),
            "status": "open",
        }
        with self.write() as c:
            if c.execute("SELECT 1 FROM matches WHERE id=?", (match["id"],)).fetchone():
                raise ConflictError("a match with id {id} exists already", "id", id=match['id'])
            c.execute(
                "INSERT INTO matches(id, game, players, options, created_at, status) VALUES (?,?,?,?,?,?)",
                (match["id"], game, json.dumps(match["players"]), json.dumps(match["options"]),
                 match["created_at"], "open"),
            )
            if label or colours:
                self.set_meta(match["id"], label, colours or {})
        return match

    @staticmethod
    def _match_row(row) -> dict:
        return {
            "id": row["id"],
            "game": row["game"],
            "players": json.loads(row["players"]),
            "options": json.loads(row["options"]),
            "created_at": row["created_at"],
            "status": row["status"],
        }

    @staticmethod
    def _kept_match(row) -> tuple | None:
        # what the row cache keeps of a match: its columns, the players read once (their names, immutable)
        if row is None:
            return None
        return (row["id"], row["game"], tuple(json.loads(row["players"])), row["options"], row["created_at"],
                row["status"])

    def _match_kept(self, match_id: str) -> tuple:
        kept = self.cached("match", match_id, lambda c: self._kept_match(
            c.execute("SELECT * FROM matches WHERE id=?", (match_id,)).fetchone()))
        if kept is None:
            raise NotFoundError("no match {match_id}", "match_id", match_id=match_id)
        return kept

    def get_match(self, match_id: str) -> dict:
        """The match (a new dict each time: the caller may change it)."""
        mid, game, players, options, created_at, status = self._match_kept(match_id)
        return {"id": mid, "game": game, "players": list(players),
                "options": {} if options == "{}" else json.loads(options), "created_at": created_at,
                "status": status}

    def match_status(self, match_id: str) -> str:
        """The match's status (``open``/``ended``), from its kept row."""
        return self._match_kept(match_id)[5]

    def list_matches(self, status: str | None = None, limit: int = 100) -> list[dict]:
        sql = "SELECT * FROM matches"
        args: tuple = ()
        if status:
            sql += " WHERE status=?"
            args = (status,)
        sql += " ORDER BY created_at DESC, id LIMIT ?"
        return [self._match_row(r) for r in self.conn().execute(sql, args + (limit,))]

    def all_match_ids(self) -> list[str]:
        return [r[0] for r in self.conn().execute("SELECT id FROM matches ORDER BY created_at, id")]

    def set_status(self, match_id: str, status: str) -> None:
        with self.write() as c:
            self.forget("match", match_id)
            c.execute("UPDATE matches SET status=? WHERE id=?", (status, match_id))

    def set_options(self, match_id: str, options: dict) -> None:
        """Replace a match's options: the service's choices kept beside the log (which season it feeds),
        never what its fold reads (the game's options are fixed at creation)."""
        with self.write() as c:
            self.forget("match", match_id)
            if c.execute("UPDATE matches SET options=? WHERE id=?", (json.dumps(options), match_id)).rowcount == 0:
                raise NotFoundError("no match {match_id}", "match_id", match_id=match_id)

    def clock_starts(self, include: str | None = None) -> list[dict]:
        """Open matches (and ``include``, when given, whatever its status) with the instant of their
        latest ``clock.start`` (None before the first): what the GPIO panel chooses from."""
        rows = self.conn().execute(
            "SELECT m.id, m.game, m.options, m.status, m.created_at, "
            "(SELECT MAX(e.at) FROM events e WHERE e.match_id = m.id AND e.type = 'clock.start') AS started "
            "FROM matches m WHERE m.status = 'open' OR m.id = ?", (include or "",)).fetchall()
        return [{"id": r["id"], "game": r["game"], "options": json.loads(r["options"] or "{}"),
                 "status": r["status"], "created_at": r["created_at"], "started": r["started"]} for r in rows]

    # -- meta: table label and colours ---------------------------------------------
    def meta(self, match_id: str) -> dict:
        # (kept when the match has no such row too: no statement for a match without a label either)
        label, colours = self.cached("meta", match_id, lambda c: tuple(c.execute(
            "SELECT label, colours FROM match_meta WHERE match_id=?", (match_id,)).fetchone() or ("", "{}")))
        return {"label": label, "colours": {} if colours == "{}" else json.loads(colours)}

    def set_meta(self, match_id: str, label: str, colours: dict) -> None:
        with self.write() as c:
            self.forget("meta", match_id)
            c.execute("INSERT INTO match_meta(match_id, label, colours) VALUES (?,?,?) "
                      "ON CONFLICT(match_id) DO UPDATE SET label=excluded.label, colours=excluded.colours",
                      (match_id, label, json.dumps(colours)))

    def labels(self) -> dict[str, str]:
        """Every match's table label (matches without one are left out)."""
        rows = self.conn().execute("SELECT match_id, label FROM match_meta WHERE label != ''")
        return {r["match_id"]: r["label"] for r in rows}

    # -- events ----------------------------------------------------------------------
    @staticmethod
    def _event_row(row) -> dict:
        event = {"seq": row["seq"], "id": row["id"], "type": row["type"],
                 "data": json.loads(row["data"]), "at": row["at"]}
        if row["writer"] is not None:  # (from a phone: who wrote it; docs/rulings.md#playing-for-another-seat)
            event["by"] = json.loads(row["writer"])
        return event

    def events(self, match_id: str, after_seq: int = 0, before_seq: int | None = None) -> list[dict]:
        sql = "SELECT seq, id, type, data, at, writer FROM events WHERE match_id=? AND seq>?"
        args: tuple = (match_id, after_seq)
        if before_seq is not None:
            sql += " AND seq<?"
            args += (before_seq,)
        rows = self.conn().execute(sql + " ORDER BY seq", args)
        return [self._event_row(r) for r in rows]

    def last_seq(self, match_id: str, conn=None) -> int:
        c = conn or self.conn()
        return c.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE match_id=?", (match_id,)).fetchone()[0]

    def last_event_at(self) -> str | None:
        """The latest instant stamped on any event (a wall clock that booted wrong never goes before it)."""
        row = self.conn().execute("SELECT MAX(at) FROM events").fetchone()
        return row[0] if row and row[0] else None

    def append(self, match_id: str, type: str, data: dict | None = None, *,
               expected_seq: int | None = None, at: str | None = None, check=None, savepoint: bool = True,
               folded: bool = False, writer=None) -> dict:
        """Append one event. ``expected_seq`` is the last seq the writer saw: on a mismatch
        the write is refused (ConflictError). ``check(event, last_seq)`` may refuse it by
        raising, and may return a callable ``derive()`` that writes the rows derived from the
        event (match status, season results); both run inside the write transaction, so nothing
        can come between and the derived rows commit (or roll back) with the event. ``savepoint=False``:
        inside a write that every failure of this one ends (``Database.write``). ``folded``: the caller
        keeps its own copy of the match up to date with the event (the match service); without it, the
        event counts as a commit the copies kept of the log have not seen (``outside_commits``). ``writer``: who
        wrote it from a phone (``{"role", "seat"?, "for"?}``, kept as the event's ``by``), or a callable
        ``writer(event) -> dict | None`` called after ``check``; None: the box itself."""
        if not savepoint and self.in_write():  # (the match service's writes: no context of its own)
            return self._append_in(self._writer, match_id, type, data, expected_seq, at, check, folded, writer)
        with self.write(savepoint=savepoint) as c:
            return self._append_in(c, match_id, type, data, expected_seq, at, check, folded, writer)

    def _append_in(self, c, match_id, type, data, expected_seq, at, check, folded, writer=None) -> dict:
        self._match_kept(match_id)  # (a NotFoundError; the row is most often known: no statement)
        # the match's last seq: kept from this process's last append to it (dropped with every kept row
        # when another connection commits: Database._outside_check at this transaction's BEGIN)
        last = self.cached("last_seq", match_id, lambda c: (self.last_seq(match_id, c),))[0]
        if expected_seq is not None and expected_seq != last:
            raise ConflictError(
                "stale write: the match is at seq {last}, the write expected {expected_seq}", "expected_seq", last=last, expected_seq=expected_seq)
        event = {"seq": last + 1, "id": new_id(), "type": type, "data": data or {},
                 "at": at or self.clock.now_iso()}
        derive = check(event, last) if check is not None else None
        by = writer(event) if callable(writer) else writer
        if by:
            event["by"] = by
        c.execute(
            "INSERT INTO events(match_id, seq, id, type, data, at, writer) VALUES (?,?,?,?,?,?,?)",
            (match_id, event["seq"], event["id"], type, plain(event["data"]), event["at"],
             plain(by) if by else None),
        )
        if derive is not None:
            derive()
        self.forget("last_seq", match_id)  # (until the COMMIT: the groups' next part reads it again)
        self.on_commit(lambda: self.keep("last_seq", match_id, (event["seq"],)))
        if not folded:
            self.on_commit(self.unseen_commit)
        return event

    # -- export / import ---------------------------------------------------
    def export_match(self, match_id: str) -> dict:
        m = self.get_match(match_id)
        doc = {"id": m["id"], "game": m["game"], "players": m["players"], "created_at": m["created_at"]}
        if m["options"]:
            doc["options"] = m["options"]
        doc["events"] = [{"seq": e["seq"], "at": e["at"], "type": e["type"], "data": e["data"],
                          **({"by": e["by"]} if "by" in e else {})} for e in self.events(match_id)]
        return doc

    def import_match(self, doc: dict, status: str = "open", derive=None) -> str:
        """Insert a whole exported match in one transaction. The caller validates the document;
        ``derive()``, when given, writes the derived rows in the same transaction."""
        seqs = [e["seq"] for e in doc["events"]]
        if seqs != list(range(1, len(seqs) + 1)):
            raise InputError("event seqs must count 1, 2, 3 ... without gaps", "$.events")
        with self.write() as c:
            if c.execute("SELECT 1 FROM matches WHERE id=?", (doc["id"],)).fetchone():
                raise ConflictError("a match with id {id} exists already", "$.id", id=doc['id'])
            c.execute(
                "INSERT INTO matches(id, game, players, options, created_at, status) VALUES (?,?,?,?,?,?)",
                (doc["id"], doc["game"], json.dumps(doc["players"]), json.dumps(doc.get("options", {})),
                 doc["created_at"], status),
            )
            c.executemany(
                "INSERT INTO events(match_id, seq, id, type, data, at, writer) VALUES (?,?,?,?,?,?,?)",
                [(doc["id"], e["seq"], new_id(), e["type"], json.dumps(e.get("data", {})), e["at"],
                  json.dumps(e["by"]) if e.get("by") else None) for e in doc["events"]],
            )
            if derive is not None:
                derive()
        return doc["id"]
