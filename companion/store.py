"""SQLite storage: one file, WAL, ``synchronous=FULL`` on every connection, one write path.

Reads use a connection per thread; every write goes through :meth:`Store.write`,
which holds the process-wide writer lock and an IMMEDIATE transaction, so there is
exactly one writer. A write that returned has been committed with a full fsync:
it survives a crash or a power cut.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import uuid
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import sqlite_utils

from companion.errors import ConflictError, InputError, NotFoundError
from companion.timeutil import WallClock

PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=FULL",
    "PRAGMA foreign_keys=ON",
    "PRAGMA busy_timeout=10000",
    # A 1 MB page cache per connection (the default is 2 MB) for a 512 MB Pi: plenty for reading one
    # match's events; the OS page cache holds the file anyway.
    "PRAGMA cache_size=-1024",
)


def migrations() -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` for every ``NNNN_name.sql`` in companion/migrations, in order."""
    out = []
    for entry in resources.files("companion.migrations").iterdir():
        m = re.fullmatch(r"(\d{4})_(\w+)\.sql", entry.name)
        if m:
            out.append((int(m.group(1)), m.group(2), entry.read_text(encoding="utf-8")))
    out.sort()
    versions = [v for v, _, _ in out]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"two migrations share a version: {versions}")
    return out


def connect(path: str | Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=10, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    for pragma in PRAGMAS:
        conn.execute(pragma)
    return conn


def new_id() -> str:
    return uuid.uuid4().hex


class Store:
    READERS = 4  # read connections shared by all threads

    def __init__(self, path: str | Path, clock=None):
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.clock = clock or WallClock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._next_reader = 0
        self._write_lock = threading.RLock()
        self._writer = connect(self.path)
        self._all = [self._writer]
        self.migrate()

    # -- connections -------------------------------------------------------
    def conn(self) -> sqlite3.Connection:
        """A read connection for this thread: one of a small shared pool (``READERS``), so 48 server
        threads don't hold 48 page caches. SQLite is built serialized here (``sqlite3.threadsafety ==
        3``): a connection may be used by several threads; reads are single autocommit statements."""
        c = getattr(self._local, "conn", None)
        if c is None:
            with self._write_lock:
                if sqlite3.threadsafety != 3 or len(self._readers) < self.READERS:  # not serialized: one each
                    self._readers.append(connect(self.path))
                    self._all.append(self._readers[-1])
                    c = self._readers[-1]
                else:
                    c = self._readers[self._next_reader % len(self._readers)]
                    self._next_reader += 1
            self._local.conn = c
        return c

    def db(self) -> sqlite_utils.Database:
        return sqlite_utils.Database(self.conn())

    @contextmanager
    def write(self):
        """The one write path: writer lock + BEGIN IMMEDIATE ... COMMIT (or ROLLBACK)."""
        with self._write_lock:
            c = self._writer
            c.execute("BEGIN IMMEDIATE")
            try:
                yield c
            except BaseException:
                c.execute("ROLLBACK")
                raise
            else:
                c.execute("COMMIT")

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with self._write_lock:
            for c in self._all:
                try:
                    c.close()
                except sqlite3.Error:
                    pass
            self._all = []

    # -- schema ------------------------------------------------------------
    def schema_version(self) -> int:
        return self._writer.execute("PRAGMA user_version").fetchone()[0]

    def migrate(self) -> int:
        with self._write_lock:
            current = self.schema_version()
            for version, _name, sql in migrations():
                if version <= current:
                    continue
                c = self._writer
                c.execute("BEGIN IMMEDIATE")
                try:
                    for statement in _split_sql(sql):
                        c.execute(statement)
                    c.execute(f"PRAGMA user_version={version}")
                    c.execute("COMMIT")
                except BaseException:
                    c.execute("ROLLBACK")
                    raise
                current = version
            return current

    # -- settings ----------------------------------------------------------
    def get_setting(self, key: str, default=None):
        row = self.conn().execute("SELECT value FROM settings WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_setting(self, key: str, value) -> None:
        with self.write() as c:
            c.execute(
                "INSERT INTO settings(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                (key, json.dumps(value)),
            )

    # -- matches -----------------------------------------------------------
    def create_match(self, game: str, players: list[str], options: dict | None = None,
                     match_id: str | None = None, created_at: str | None = None) -> dict:
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
                raise ConflictError(f"a match with id {match['id']} exists already", "id")
            c.execute(
                "INSERT INTO matches(id, game, players, options, created_at, status) VALUES (?,?,?,?,?,?)",
                (match["id"], game, json.dumps(match["players"]), json.dumps(match["options"]),
                 match["created_at"], "open"),
            )
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

    def get_match(self, match_id: str) -> dict:
        row = self.conn().execute("SELECT * FROM matches WHERE id=?", (match_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no match {match_id}", "match_id")
        return self._match_row(row)

    def list_matches(self, status: str | None = None, limit: int = 100) -> list[dict]:
        sql = "SELECT * FROM matches"
        args: tuple = ()
        if status:
            sql += " WHERE status=?"
            args = (status,)
        sql += " ORDER BY created_at DESC, id LIMIT ?"
        return [self._match_row(r) for r in self.conn().execute(sql, args + (limit,))]

    def set_status(self, match_id: str, status: str) -> None:
        with self.write() as c:
            c.execute("UPDATE matches SET status=? WHERE id=?", (status, match_id))

    @staticmethod
    def _event_row(row) -> dict:
        return {"seq": row["seq"], "id": row["id"], "type": row["type"],
                "data": json.loads(row["data"]), "at": row["at"]}

    def events(self, match_id: str, after_seq: int = 0) -> list[dict]:
        rows = self.conn().execute(
            "SELECT seq, id, type, data, at FROM events WHERE match_id=? AND seq>? ORDER BY seq",
            (match_id, after_seq),
        )
        return [self._event_row(r) for r in rows]

    def last_seq(self, match_id: str, conn=None) -> int:
        c = conn or self.conn()
        return c.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE match_id=?", (match_id,)).fetchone()[0]

    def append(self, match_id: str, type: str, data: dict | None = None, *,
               expected_seq: int | None = None, at: str | None = None, check=None) -> dict:
        """Append one event. ``expected_seq`` is the last seq the writer saw: on a mismatch
        the write is refused (ConflictError). ``check(event, last_seq)`` may refuse it by
        raising; it runs inside the write transaction, so nothing can come between."""
        with self.write() as c:
            if not c.execute("SELECT 1 FROM matches WHERE id=?", (match_id,)).fetchone():
                raise NotFoundError(f"no match {match_id}", "match_id")
            last = self.last_seq(match_id, c)
            if expected_seq is not None and expected_seq != last:
                raise ConflictError(
                    f"stale write: the match is at seq {last}, the write expected {expected_seq}", "expected_seq")
            event = {"seq": last + 1, "id": new_id(), "type": type, "data": data or {},
                     "at": at or self.clock.now_iso()}
            if check is not None:
                check(event, last)
            c.execute(
                "INSERT INTO events(match_id, seq, id, type, data, at) VALUES (?,?,?,?,?,?)",
                (match_id, event["seq"], event["id"], type, json.dumps(event["data"]), event["at"]),
            )
        return event

    # -- export / import ---------------------------------------------------
    def export_match(self, match_id: str) -> dict:
        m = self.get_match(match_id)
        doc = {"id": m["id"], "game": m["game"], "players": m["players"], "created_at": m["created_at"]}
        if m["options"]:
            doc["options"] = m["options"]
        doc["events"] = [{"seq": e["seq"], "at": e["at"], "type": e["type"], "data": e["data"]}
                         for e in self.events(match_id)]
        return doc

    def import_match(self, doc: dict, status: str = "open") -> str:
        """Insert a whole exported match in one transaction. The caller validates the document."""
        seqs = [e["seq"] for e in doc["events"]]
        if seqs != list(range(1, len(seqs) + 1)):
            raise InputError("event seqs must count 1, 2, 3 ... without gaps", "$.events")
        with self.write() as c:
            if c.execute("SELECT 1 FROM matches WHERE id=?", (doc["id"],)).fetchone():
                raise ConflictError(f"a match with id {doc['id']} exists already", "$.id")
            c.execute(
                "INSERT INTO matches(id, game, players, options, created_at, status) VALUES (?,?,?,?,?,?)",
                (doc["id"], doc["game"], json.dumps(doc["players"]), json.dumps(doc.get("options", {})),
                 doc["created_at"], status),
            )
            c.executemany(
                "INSERT INTO events(match_id, seq, id, type, data, at) VALUES (?,?,?,?,?,?)",
                [(doc["id"], e["seq"], new_id(), e["type"], json.dumps(e.get("data", {})), e["at"])
                 for e in doc["events"]],
            )
        return doc["id"]

    # -- backup --------------------------------------------------------------
    def backup(self, dest: str | Path) -> Path:
        """A consistent copy of the live database (SQLite online backup API)."""
        dest = Path(dest)
        if dest.is_dir():
            dest = dest / f"companion-{self.clock.now().strftime('%Y%m%dT%H%M%SZ')}.db"
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".part")
        if tmp.exists():
            tmp.unlink()
        target = sqlite3.connect(str(tmp))
        try:
            with self._write_lock:
                self._writer.backup(target)
            target.execute("PRAGMA journal_mode=DELETE")
            target.commit()
        finally:
            target.close()
        tmp.replace(dest)
        return dest


def _split_sql(sql: str) -> list[str]:
    """Split a migration file into statements (no triggers with inner semicolons here)."""
    lines = [ln for ln in sql.splitlines() if not ln.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
