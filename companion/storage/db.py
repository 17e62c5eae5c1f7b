"""The database file: connections, the one write path, migrations, settings, backups.

SQLite, one file, WAL and ``synchronous=FULL`` on every connection. Reads use a small pool of
connections shared by all threads; every write goes through :meth:`Database.write`, which holds
the process-wide writer lock and an IMMEDIATE transaction, so there is exactly one writer. A write
that returned has been committed with a full fsync: it survives a crash or a power cut.
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


def is_disk_full(exc: BaseException) -> bool:
    """SQLite's "database or disk is full" (SQLITE_FULL), or the OS's ENOSPC."""
    import errno

    if isinstance(exc, sqlite3.OperationalError):
        return "full" in str(exc).lower()
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC


class Database:
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
        self._depth = 0  # nesting of write() on the thread holding the writer lock
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

    @contextmanager
    def write(self):
        """The one write path: writer lock + BEGIN IMMEDIATE ... COMMIT (or ROLLBACK). A write opened
        inside another on the same thread is a savepoint of the outer transaction: derived rows written
        with the event that causes them commit, or roll back, together with it."""
        with self._write_lock:
            c = self._writer
            if self._depth:  # nested: a savepoint of the outer transaction
                name = f"w{self._depth}"
                c.execute(f"SAVEPOINT {name}")
                self._depth += 1
                try:
                    yield c
                except BaseException:
                    c.execute(f"ROLLBACK TO {name}")
                    c.execute(f"RELEASE {name}")
                    raise
                else:
                    c.execute(f"RELEASE {name}")
                finally:
                    self._depth -= 1
                return
            c.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield c
            except BaseException:
                self._depth = 0
                c.execute("ROLLBACK")
                raise
            else:
                self._depth = 0
                c.execute("COMMIT")

    def __enter__(self):
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

    def ping(self) -> bool:
        """The database answers a query (the watchdog's health check)."""
        return self.conn().execute("SELECT 1").fetchone() is not None

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

    def delete_setting(self, key: str) -> None:
        with self.write() as c:
            c.execute("DELETE FROM settings WHERE key=?", (key,))

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
