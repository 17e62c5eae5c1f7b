"""The database file: connections, the one write path, migrations, settings, backups.

SQLite, one file, WAL and ``synchronous=FULL`` on every connection. Reads use a small pool of
connections shared by all threads; every write goes through :meth:`Database.write`, which holds
the process-wide writer lock and an IMMEDIATE transaction, so there is exactly one writer. A write
that returned has been committed with a full fsync: it survives a crash or a power cut. Writes that
queue for the writer lock meanwhile are committed together (group commit: one fsync for all of them;
each still returns only after that COMMIT), see :meth:`Database.write`.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sqlite3
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

from companion.base.timeutil import WallClock
from companion.base.jsonio import read_status_file, write_status_file

log = logging.getLogger(__name__)

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
    """``(version, name, sql)`` for every ``NNNN_name.sql`` in companion/storage/migrations, in order."""
    # the folder beside this file, as the wheel installs it (os.path: importlib.resources imports zipfile and
    # its readers, a tenth of a second of a Pi's start, to list one folder)
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "migrations")
    out = []
    for name in os.listdir(folder):
        m = re.fullmatch(r"(\d{4})_(\w+)\.sql", name)
        if m:
            with open(os.path.join(folder, name), encoding="utf-8") as fh:
                out.append((int(m.group(1)), m.group(2), fh.read()))
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


class _Batch:
    """The writes committed together by one COMMIT (group commit)."""

    def __init__(self):
        self.writes = 0
        self.hooks: list = []
        self.error = None
        self.finished = False
        # what the writers that left the transaction open to the others wait on (made only then: most
        # transactions are committed by their only writer, which has nothing to wait for)
        self.done: threading.Event | None = None


class _OneLook:
    """``Database.one_look()``'s context (a class: a request enters one, and a generator's context costs
    several times as much)."""

    __slots__ = ("_local", "_outer")

    def __init__(self, local):
        self._local = local
        self._outer = False

    def __enter__(self):
        if getattr(self._local, "looked", None) is not None:
            self._outer = True  # nested: the outer one's look
        else:
            self._local.looked = False

    def __exit__(self, *exc) -> None:
        if not self._outer:
            self._local.looked = None


def _again(error: BaseException) -> BaseException:
    """The group's COMMIT error for one more of its writers (a fresh exception of the same kind: each
    thread raises its own)."""
    try:
        return type(error)(*error.args)
    except Exception:
        return sqlite3.OperationalError(str(error))


def new_id() -> str:
    """A random id: ``uuid.uuid4().hex``'s 32 hex digits, version and variant bits included (without making
    a UUID object: an event's id is made for every write)."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    return b.hex()


def is_disk_full(exc: BaseException) -> bool:
    """SQLite's "database or disk is full" (SQLITE_FULL), or the OS's ENOSPC."""
    import errno

    if isinstance(exc, sqlite3.OperationalError):
        return "full" in str(exc).lower()
    return isinstance(exc, OSError) and exc.errno == errno.ENOSPC


class Database:
    READERS = 4  # read connections shared by all threads
    MAX_GROUP = 4  # writes committed together at most (each waits for the others' parts before its COMMIT)
    MAX_ROWS = 4096  # cached rows (matches, their labels, tokens, settings) before the cache starts afresh
    # kept rows of sessions, seats and their confirmations: written by many paths (joins, seats, the roster's
    # links, sign-outs), so every write forgets them but those that say they change none (``keeps_sessions``)
    SESSION_KINDS = frozenset({"session", "seats", "confirm"})

    def __init__(self, path: str | Path, clock=None):
        """Open (or create) the database. A data folder that cannot be made or used, or a database file
        that is empty (0 bytes), not a file, unreadable or not SQLite, is refused with an InputError
        naming the path (the CLI's exit 2): it is a configuration mistake, never a fresh install."""
        from companion.base.errors import InputError

        self.path = Path(path)
        if str(path) != ":memory:":
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError("cannot use the data folder {parent}: {value}",
                                 "--data-dir", parent=self.path.parent, value=exc.strerror or exc) from None
            try:
                if self.path.exists() or self.path.is_symlink():
                    check_database_file(self.path)
            except OSError as exc:  # e.g. a data folder that may be entered but not read
                raise InputError("cannot use the database {path}: {value}",
                                 "--data-dir", path=self.path, value=exc.strerror or exc) from None
        self.clock = clock or WallClock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._next_reader = 0
        self._write_lock = threading.RLock()
        self._pool_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self._waiting = 0  # threads waiting for the writer lock to begin a write
        self._owner = None  # the thread inside write()
        self._depth = 0  # nesting of write() on the thread holding the writer lock
        self._batch = None  # the open transaction of a group commit
        self._part_hooks: list = []
        self._all = []
        self._rows: dict = {}  # committed rows read often (row cache: cached())
        self._session_keys: set = set()  # the kept rows of SESSION_KINDS (every write but a few forgets them)
        self._data_version = None  # the writer connection's PRAGMA data_version at its last reading
        self._outside = 0  # other connections' commits seen (each look that found one counts it)
        # a group's transaction is open and looked at its BEGIN, its COMMIT not yet sent: no other connection
        # can commit meanwhile, so a look then is exact without a statement (read without the writer lock)
        self._exact = False
        self._look = None  # the writer connection's cursor of the looks (``_outside_check``)
        try:
            self._writer = connect(self.path)
            self._all.append(self._writer)
            self.migrate()
        except (sqlite3.DatabaseError, OSError) as exc:
            self.close()
            if is_disk_full(exc):
                raise
            raise InputError("cannot open the database {path}: {exc}", "--data-dir", path=self.path, exc=exc) from None

    # -- connections -------------------------------------------------------
    def conn(self) -> sqlite3.Connection:
        """A read connection for this thread: one of a small shared pool (``READERS``), so 48 server
        threads don't hold 48 page caches. SQLite is built serialized here (``sqlite3.threadsafety ==
        3``): a connection may be used by several threads; reads are single autocommit statements.
        Inside a write, the writer's own connection: a read there sees the open transaction (what this
        write and the writes grouped with it have written, see :meth:`write`)."""
        if self._owner == threading.get_ident():
            return self._writer
        c = getattr(self._local, "conn", None)
        if c is None:
            with self._pool_lock:
                if sqlite3.threadsafety != 3 or len(self._readers) < self.READERS:  # not serialized: one each
                    self._readers.append(connect(self.path))
                    self._all.append(self._readers[-1])
                    c = self._readers[-1]
                else:
                    c = self._readers[self._next_reader % len(self._readers)]
                    self._next_reader += 1
            self._local.conn = c
        return c

    def in_write(self) -> bool:
        """Whether this thread is inside :meth:`write`."""
        return self._owner == threading.get_ident()

    @contextmanager
    def write(self, group: bool = False, savepoint: bool = True, keeps_sessions: bool = False):
        """The one write path: writer lock + BEGIN IMMEDIATE ... COMMIT. A write opened inside another on
        the same thread is a savepoint of the outer transaction: derived rows written with the event that
        causes them commit, or roll back, together with it.

        **Group commit.** Each outermost write is a savepoint of the transaction that is open (or a new
        one): when it fails, only its own part is rolled back. When it ends and other writers are waiting
        for the writer lock, a ``group=True`` write leaves the transaction open to them and waits; the
        last one, which finds nobody waiting (or the group at ``MAX_GROUP`` writes), commits the whole
        group with one fsync (so does any write without ``group``). Every write returns only after the COMMIT holding its rows has returned: an
        acknowledged write is durable as before, and a failed COMMIT fails every write of its group. Still
        one writer at a time: the parts run one after another under the writer lock, on one connection.
        ``group=True`` promises that the caller holds no lock while it waits (a lock another writer may
        need inside its write would deadlock).

        ``savepoint=False``, for a nested write whose every failure ends the write it is nested in (its caller
        lets the exception through): it joins the outer write with no savepoint of its own (two statements
        fewer): its rows and its commit hooks are the outer write's, committed or rolled back with them.
        Outermost, it is an ordinary write.

        ``keeps_sessions``: the write changes no row of a session, a seat or a seat's confirmation (a match's
        event); any other write forgets every kept row of those (``SESSION_KINDS``) as it begins."""
        me = threading.get_ident()
        if self._owner == me and not savepoint:  # nested, within the outer write's savepoint
            if not keeps_sessions:
                self.forget_sessions()
            yield self._writer
            return
        if self._owner == me:  # nested: a savepoint of the outer transaction
            if not keeps_sessions:
                self.forget_sessions()
            with self._write_lock:
                c = self._writer
                name = f"w{self._depth}"
                c.execute(f"SAVEPOINT {name}")
                self._depth += 1
                mark = len(self._part_hooks)
                try:
                    yield c
                except BaseException:
                    c.execute(f"ROLLBACK TO {name}")
                    c.execute(f"RELEASE {name}")
                    self._drop_hooks(self._part_hooks[mark:])
                    del self._part_hooks[mark:]
                    raise
                else:
                    c.execute(f"RELEASE {name}")
                finally:
                    self._depth -= 1
            return
        with self._count_lock:
            self._waiting += 1
        self._write_lock.acquire()
        with self._count_lock:
            self._waiting -= 1
        batch = None
        try:
            c = self._writer
            batch = self._join_batch(c)
            self._owner, self._depth, self._part_hooks = me, 1, []
            if not keeps_sessions:
                self.forget_sessions()
            # the first part of its transaction needs no savepoint: should it fail, nothing else is in the
            # transaction to keep (the writers waiting join it only after this part), so it is rolled back
            alone = batch.writes == 0
            if not alone:
                c.execute("SAVEPOINT part")
            try:
                yield c
            except BaseException:
                self._owner, self._depth = None, 0
                hooks, self._part_hooks = self._part_hooks, []
                try:
                    if not c.in_transaction:
                        pass
                    elif alone:
                        c.execute("ROLLBACK")
                    else:
                        c.execute("ROLLBACK TO part")
                        c.execute("RELEASE part")
                finally:
                    self._drop_hooks(hooks)
                    try:  # the others' parts: left to a waiting writer, or committed now (alone: ended)
                        self._end_part(c, batch, group=not alone)
                    except sqlite3.Error:  # their writers get the COMMIT's error; this one its own
                        pass
                raise
            self._owner, self._depth = None, 0
            hooks, self._part_hooks = self._part_hooks, []
            if not alone:
                c.execute("RELEASE part")
            batch.hooks.extend(hooks)
            batch.writes += 1
            self._end_part(c, batch, group)
        finally:
            self._owner = None
            self._write_lock.release()
        if not batch.finished:  # (left open to the writers waiting: one of them commits it)
            batch.done.wait()
        if batch.error is not None:
            raise _again(batch.error)

    # -- rows read often: kept until they change -------------------------------------------------------
    def _outside_check(self, c) -> None:
        """Under the writer lock, on the writer's connection: forget every cached row if another connection
        (another process: a CLI command, a restore) committed since the last look. SQLite's ``PRAGMA
        data_version`` on a connection changes exactly when another connection committed; this process's
        own writes go through the writer's connection and drop what they change themselves (``forget``)."""
        look = self._look
        if look is None or c is not self._writer:
            look = c.cursor()
            look.row_factory = None  # (a tuple: no Row made for one number)
            if c is self._writer:
                self._look = look  # (always under the writer lock: one cursor for every look)
        version = look.execute("PRAGMA data_version").fetchall()[0][0]  # (all: the statement ends, holds nothing)
        if version != self._data_version:
            self._rows.clear()
            self._session_keys.clear()
            self._data_version = version
            self._outside += 1
        if getattr(self._local, "looked", None) is False:
            self._local.looked = True

    def one_look(self) -> "_OneLook":
        """Within it, this thread's reads look for other connections' commits once, at the first that
        can (``cached``, ``outside_commits``): the reads of one request, which answer as of that look (a
        commit by another process before the request is seen; one while it runs may be, as before). A
        commit of this process is seen at once, as always. Nested: the outer one's look."""
        return _OneLook(self._local)

    def _exact_now(self) -> bool:
        """Without the writer lock: whether a write's transaction holds the database now, looked at its
        BEGIN and its COMMIT not yet sent (then no other connection can have committed since that look); a
        look for this thread's request (``one_look``) when so."""
        if self._exact and self._writer.in_transaction:
            if getattr(self._local, "looked", None) is False:
                self._local.looked = True
            return True
        return False

    def unseen_commit(self) -> None:
        """A commit hook (``on_commit``) of a write of this process that the copies kept of the database
        did not follow: it counts as another connection's (``outside_commits``)."""
        self._outside += 1

    def outside_commits(self) -> int | None:
        """How many commits of other connections (another process: a CLI command, a restore; and this
        process's own writes that declared themselves unseen: ``unseen_commit``) this store has seen, looked up now (or at this thread's look, ``one_look``); None when that needs a wait (a
        write under way). Whatever this process keeps of the database (the match service's folds) holds
        while the count has not moved since it was read."""
        if self._owner == threading.get_ident() or getattr(self._local, "looked", None):
            return self._outside  # (inside a write: exact since its BEGIN looked)
        if self._exact_now():
            return self._outside
        if not self._write_lock.acquire(blocking=False):
            return None
        try:
            self._outside_check(self._writer)
            return self._outside
        finally:
            self._write_lock.release()

    def cached(self, kind: str, key, load):
        """The committed row ``(kind, key)``: ``load(conn)`` (a tuple, or None for no row, which is not kept)
        read once and kept until it changes. A row is kept only while no write is under way: one is read
        and kept with the writer lock held (taken without waiting), so no write's uncommitted rows are ever
        kept, and every write that changes one forgets it (``forget``) in its transaction, before its
        COMMIT. While another thread writes, the row is read as before (not cached). Inside a write, a kept
        row is one that no part of its transaction changed (that one is read on the writer's connection)."""
        if self._owner == threading.get_ident():
            row = self._rows.get((kind, key))
            return row if row is not None else load(self._writer)
        if getattr(self._local, "looked", None) or self._exact_now():  # (one_look; a write's open transaction)
            row = self._rows.get((kind, key))
            if row is not None:
                return row
        if not self._write_lock.acquire(blocking=False):
            return load(self.conn())
        try:
            self._outside_check(self._writer)
            row = self._rows.get((kind, key))
            if row is None:
                row = load(self._writer)
                if row is not None:
                    self._put(kind, key, row)
            return row
        finally:
            self._write_lock.release()

    def kept(self, kind: str, key):
        """The committed row ``(kind, key)`` if it is kept now, else None, read without a statement or a lock
        (a live stream's look for each event, on the event loop). It is as fresh as the last look at other
        connections' commits (every write's BEGIN, every ``cached`` read that could look): for an event this
        process wrote, what was committed before that event's write began; a row this process changes is
        forgotten by the write that changes it, before its COMMIT."""
        return self._rows.get((kind, key))

    def keep(self, kind: str, key, row) -> None:
        """In a commit hook (``on_commit``: the writer lock held, the row just committed): keep ``row`` as the
        committed row ``(kind, key)`` without reading it again. Should another connection commit meanwhile,
        the next look (``cached``, a write's BEGIN) forgets it with every kept row."""
        if self._write_lock.acquire(blocking=False):  # (held already by the committing thread: re-entrant)
            try:
                self._put(kind, key, row)
            finally:
                self._write_lock.release()

    def _put(self, kind: str, key, row) -> None:
        """(The writer lock held.) ``row`` kept as ``(kind, key)``; a full cache starts afresh."""
        if len(self._rows) >= self.MAX_ROWS:
            self._rows.clear()
            self._session_keys.clear()
        self._rows[(kind, key)] = row
        if kind in self.SESSION_KINDS:
            self._session_keys.add((kind, key))

    def forget_sessions(self) -> None:
        """Inside a write: every kept row of a session, a seat or a confirmation (``SESSION_KINDS``)."""
        for k in self._session_keys:
            self._rows.pop(k, None)
        self._session_keys.clear()

    def forget(self, kind: str, key=None) -> None:
        """Inside the write that changes them: the cached row ``(kind, key)``, or every row of ``kind``."""
        if key is not None:
            self._rows.pop((kind, key), None)
        else:
            for k in [k for k in self._rows if k[0] == kind]:
                del self._rows[k]

    def on_commit(self, committed, rolled_back=None) -> None:
        """Inside a write: ``committed()`` runs right after the COMMIT holding this write's rows (on the
        committing thread, under the writer lock, in commit order), or ``rolled_back()`` if they are rolled
        back (the write, a savepoint of it, or its group's COMMIT failed). Exceptions are logged."""
        if self._owner != threading.get_ident():
            raise RuntimeError("on_commit outside a write")
        self._part_hooks.append((committed, rolled_back))

    def _join_batch(self, c) -> "_Batch":
        batch = self._batch
        if batch is not None and not c.in_transaction:  # SQLite rolled the group back by itself (I/O error)
            self._finish(batch, sqlite3.OperationalError("the transaction was rolled back"))
            batch = None
        if batch is None:
            c.execute("BEGIN IMMEDIATE")
            self._outside_check(c)  # exact here: nobody else may commit while this transaction is open
            batch = self._batch = _Batch()
            self._exact = True
        return batch

    def _end_part(self, c, batch, group: bool) -> None:
        """Under the writer lock, after a write's part: leave the group open to the writers waiting for the
        lock, or commit it now."""
        if batch is None:
            return
        if not c.in_transaction:  # rolled back by SQLite itself: the whole group is lost
            self._finish(batch, sqlite3.OperationalError("the transaction was rolled back"))
            return
        with self._count_lock:
            waiting = self._waiting
        if group and waiting and batch.writes < self.MAX_GROUP:
            if batch.done is None:
                batch.done = threading.Event()
            return
        self._exact = False  # (before the COMMIT: once it is done another connection may commit)
        if batch.writes == 0:
            c.execute("ROLLBACK")
            self._finish(batch, None)
            return
        try:
            c.execute("COMMIT")
        except BaseException as exc:
            if c.in_transaction:
                try:
                    c.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            self._finish(batch, exc)
            raise
        self._finish(batch, None)

    def _finish(self, batch, error) -> None:
        self._exact = False
        self._batch = None
        batch.error = error
        for committed, rolled_back in batch.hooks:
            fn = rolled_back if error is not None else committed
            if fn is not None:
                try:
                    fn()
                except Exception:
                    log.exception("a commit hook failed")
        batch.finished = True
        if batch.done is not None:
            batch.done.set()

    @staticmethod
    def _drop_hooks(hooks) -> None:
        for _committed, rolled_back in reversed(hooks):
            if rolled_back is not None:
                try:
                    rolled_back()
                except Exception:
                    log.exception("a rollback hook failed")

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with self._write_lock:
            if self._batch is not None:  # a group left open to a writer that will not come now: commit it
                try:
                    self._end_part(self._writer, self._batch, group=False)
                except sqlite3.Error:
                    pass
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
        """On a read connection: ``/healthz`` asks it, and must not wait for a write's fsync on the writer's."""
        return self.conn().execute("PRAGMA user_version").fetchone()[0]

    def migrate(self) -> int:
        with self._write_lock:
            current = self._writer.execute("PRAGMA user_version").fetchone()[0]
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
        row = self.cached("setting", key, lambda c: c.execute("SELECT value FROM settings WHERE key=?",
                                                              (key,)).fetchone())
        return json.loads(row[0]) if row else default

    def set_setting(self, key: str, value) -> None:
        with self.write() as c:
            self.forget("setting", key)
            c.execute(
                "INSERT INTO settings(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                (key, json.dumps(value)),
            )

    def delete_setting(self, key: str) -> None:
        with self.write() as c:
            self.forget("setting", key)
            c.execute("DELETE FROM settings WHERE key=?", (key,))

    # -- backup --------------------------------------------------------------
    def backup(self, dest: str | Path) -> Path:
        """A checked copy of this database (see :func:`backup_database`)."""
        return backup_database(self.path, dest, self.clock)["backup"]


def read_setting_readonly(path: str | Path, key: str, default=None):
    """One setting of the database at ``path``, read through a read-only connection (a command run beside
    the server: ``companion backup``); ``default`` when the file, the table or the key is missing."""
    path = Path(path)
    if not path.is_file():
        return default
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    except sqlite3.Error:
        return default
    try:
        row = conn.execute("SELECT value FROM settings WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default
    except (sqlite3.Error, ValueError):
        return default
    finally:
        conn.close()


# -- backups -------------------------------------------------------------------------------------
BACKUP_STATUS = "last-backup.json"  # beside companion.db: the last backup's result, for the home page
# beside companion.db: the image's last offline update (its companion-update writes it, docs/pi.md), for the
# home page and the TV page
UPDATE_STATUS = "last-update.json"


class BackupRefused(Exception):
    """The copy could not be made or failed its checks: it was not kept, and nothing may be rotated."""


def companion_tables(version: int) -> set[str]:
    """The tables the migrations up to ``version`` create."""
    out = set()
    for v, _name, sql in migrations():
        if v <= version:
            out.update(re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", sql, re.I))
    return out


def check_database_file(path: str | Path, field: str = "--data-dir") -> Path:
    """An existing, non-empty regular file (else InputError naming the path)."""
    from companion.base.errors import InputError

    path = Path(path)
    try:
        exists, is_file, size = path.exists(), path.is_file(), path.stat().st_size if path.is_file() else 0
    except OSError as exc:
        raise InputError("cannot use the database {path}: {value}", field, path=path, value=exc.strerror or exc) from None
    if not exists:
        raise InputError("no database at {path}: check --data-dir or $COMPANION_DATA", field, path=path)
    if not is_file:
        raise InputError("{path} is not a file", field, path=path)
    if size == 0:
        raise InputError("{path} is empty (0 bytes): not a companion database (restore a backup, or move it away to "
                         "start afresh)", field, path=path)
    return path


def open_read_only(path: str | Path) -> sqlite3.Connection:
    """The database at ``path``, read-only (it is never created, nor changed)."""
    from urllib.parse import quote

    from companion.base.errors import InputError

    path = check_database_file(path)
    try:
        conn = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro", uri=True, timeout=10,
                               isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=10000")
        conn.execute("PRAGMA schema_version").fetchone()  # reads the header: unreadable or not SQLite?
    except sqlite3.DatabaseError as exc:
        raise InputError("cannot open the database {path}: {exc}", "--data-dir", path=path, exc=exc) from None
    return conn


class ReadOnlyStore:
    """A database opened read-only, with the small surface ``season_store``'s readers use (``conn()``,
    ``clock``): the league view reads restored copies of other boxes with it, never writing."""

    def __init__(self, path: str | Path, clock=None):
        from companion.base.errors import InputError

        self.path = Path(path)
        self._conn = open_read_only(self.path)
        Guarded(self._conn)  # another box's copy: its reads bounded, its schema checked first
        problem = schema_problem(self._conn)
        if problem:
            self._conn.close()
            raise InputError("the database {path} is refused: {problem}", "--box", path=self.path, problem=problem)
        self._conn.row_factory = sqlite3.Row
        self.clock = clock or WallClock()

    def conn(self) -> sqlite3.Connection:
        return self._conn

    def close(self) -> None:
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# Reading a database another box (or anyone) made: a league's replica, a restore's copy. Its schema is
# checked before anything is read from it, and every read is bounded in time and in the size of one value,
# so a crafted file (an ``events`` that is an endless view, a view of huge blobs) cannot hang or exhaust
# the command reading it.
FOREIGN_SECONDS = 300  # the longest a check or a read of such a file may take (a Pi reads ~100 MB in less)
FOREIGN_VALUE_MAX = 16 * 1024 * 1024  # the largest string or blob read from one (a board photo: 2 MiB)


def latest_version() -> int:
    """The schema version this companion's migrations reach."""
    return max(v for v, _name, _sql in migrations())


def schema_problem(conn: sqlite3.Connection) -> str | None:
    """Why a database is not one companion may read safely (None: it may): a known schema version (not
    newer than this companion's), companion's tables as real tables (not views), no views and no
    triggers (companion makes none). Reads only the schema."""
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        rows = conn.execute("SELECT type, name FROM sqlite_master").fetchall()
    except sqlite3.DatabaseError as exc:
        return f"its schema cannot be read ({exc})"
    if version < 1:
        return "it is not a companion database (no schema version)"
    if version > latest_version():
        return (f"its schema version {version} is newer than this companion's ({latest_version()}): "
                f"use a companion at least as new")
    kinds: dict[str, str] = {}
    for kind, name in rows:
        kinds[str(name)] = str(kind)
    views = sorted(n for n, k in kinds.items() if k == "view")
    if views:
        return f"it holds views ({', '.join(views)}), which no companion database has"
    triggers = sorted(n for n, k in kinds.items() if k == "trigger")
    if triggers:
        return f"it holds triggers ({', '.join(triggers)}), which no companion database has"
    missing = sorted(t for t in companion_tables(version) if kinds.get(t) != "table")
    if missing:
        return f"it lacks companion's tables {', '.join(missing)}"
    return None


class Guarded:
    """A connection to a foreign database, its reads bounded: ``seconds`` in all (SQLite's progress
    handler interrupts the statement: ``sqlite3.OperationalError: interrupted``) and ``FOREIGN_VALUE_MAX``
    per string or blob ("string or blob too big")."""

    def __init__(self, conn: sqlite3.Connection, seconds: float = FOREIGN_SECONDS):
        self.conn = conn
        self.deadline = time.monotonic() + seconds
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, FOREIGN_VALUE_MAX)
        conn.set_progress_handler(self._late, 10_000)

    def _late(self) -> int:
        return 1 if time.monotonic() > self.deadline else 0


def _event_counts(conn: sqlite3.Connection) -> tuple[int, int]:
    """(events, the sum of every match's last seq): equal when no seq is missing."""
    count = conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    seqs = conn.execute("SELECT COALESCE(SUM(n), 0) FROM (SELECT MAX(seq) AS n FROM events GROUP BY match_id)"
                        ).fetchone()[0]
    return count, seqs


def check_copy(conn: sqlite3.Connection, source_events: int) -> str | None:
    """Why a copy is not a good backup (None: it is): SQLite's integrity check, companion's tables, and
    as many events as the source had at the instant of the copy, with no seq missing."""
    try:
        problem = schema_problem(conn)  # before anything else is read (an endless view, a trigger)
        if problem:
            return "the copy is refused: " + problem
        problems = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
        if problems != ["ok"]:
            return f"the copy fails SQLite's integrity check ({problems[0]}{' ...' if len(problems) > 1 else ''})"
        count, seqs = _event_counts(conn)
    except sqlite3.DatabaseError as exc:
        return f"the copy cannot be read ({exc})"
    if count != source_events:
        return f"the copy holds {count} events, the database {source_events}"
    if count != seqs:
        return f"the copy's event log has gaps ({count} events, last seqs adding up to {seqs})"
    return None


def check_restored(path: str | Path) -> tuple[str | None, dict]:
    """Why the database file at ``path`` (a restore from a replica) is not a sound companion database
    (None: it is), as :func:`check_copy` checks a backup: SQLite's integrity check, companion's tables,
    an event log with no seq missing; and what it holds (``{"version", "events", "matches"}``)."""
    from companion.base.errors import InputError

    try:
        conn = open_read_only(path)
    except InputError as exc:
        return exc.message, {}
    try:
        Guarded(conn)
        problem = schema_problem(conn)
        if problem:
            return "the copy is refused: " + problem, {}
        try:
            count, _ = _event_counts(conn)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            matches = conn.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            reason = check_copy(conn, -1)
            return reason or f"the copy cannot be read ({exc})", {}
        return check_copy(conn, count), {"version": version, "events": count, "matches": matches}
    finally:
        conn.close()


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def backup_database(source: str | Path, dest: str | Path, clock=None) -> dict:
    """A consistent, checked copy of the database at ``source`` (SQLite online backup API, safe while
    the server runs; the source is opened read-only, and a missing or empty one is refused).

    ``dest``: an existing file is replaced; an existing folder, or one that does not exist yet (it is
    created), gets ``companion-YYYYMMDDTHHMMSSZ.db`` (``-2.db``, ``-3.db``... when a backup of the same
    second has the name). The copy is written to a ``.part`` of its own (a backup running at the same time
    writes another), checked (:func:`check_copy`) and only then renamed; the ``.part`` never stays behind. Raises
    :class:`BackupRefused` (nothing kept) when the source is damaged, the copy fails its checks or the
    destination is full. Returns ``{"backup": path, "events": n}``."""
    clock = clock or WallClock()
    source = Path(source)
    trailing_slash = str(dest).endswith(("/", os.sep))
    dest = Path(dest)
    as_folder = trailing_slash or not dest.exists() or dest.is_dir()
    src = open_read_only(source)  # first: a missing source creates nothing anywhere
    Guarded(src)
    problem = schema_problem(src)  # a file from elsewhere (a league's box): nothing read before its schema
    if problem:
        src.close()
        raise BackupRefused(f"the database {source} is refused: {problem}")
    if as_folder:
        if dest.exists() and not dest.is_dir():
            from companion.base.errors import InputError

            src.close()
            raise InputError("{dest} is a file, not a folder", "DEST", dest=dest)
        try:
            dest.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            from companion.base.errors import InputError

            src.close()
            raise InputError("cannot make the folder {dest}: {value}", "DEST", dest=dest, value=exc.strerror or exc) from None
        dest = dest / f"companion-{clock.now().strftime('%Y%m%dT%H%M%SZ')}.db"
    # this backup's own: another one in the same second (a timer and an organiser's) writes its own
    tmp = dest.with_name(f"{dest.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.part")
    try:
        try:
            src.execute("BEGIN")  # one snapshot: the events counted are the events copied
            source_events = src.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise BackupRefused(f"the database {source} cannot be read ({exc})") from None
        try:
            tmp.unlink(missing_ok=True)
            target = sqlite3.connect(str(tmp), isolation_level=None)
            try:
                src.backup(target)
                target.execute("PRAGMA journal_mode=DELETE")
                reason = check_copy(target, source_events)
            finally:
                target.close()
            if reason:
                raise BackupRefused(reason)
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            if as_folder:
                dest = _claim_name(dest)  # a backup of the same second keeps its copy: this one is -2, -3...
                try:
                    os.replace(tmp, dest)
                except OSError:
                    dest.unlink(missing_ok=True)  # the empty name claimed, not left as a "backup"
                    raise
            else:
                os.replace(tmp, dest)
            _fsync_dir(dest.parent)
        except (sqlite3.DatabaseError, OSError) as exc:
            if is_disk_full(exc):
                raise BackupRefused(f"the destination {dest.parent} is full") from None
            raise BackupRefused(f"the copy failed ({exc})") from None
        finally:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
    finally:
        src.close()
    return {"backup": dest, "events": source_events}


def _claim_name(dest: Path) -> Path:
    """``dest``, or ``<stem>-2.db``, ``-3``... the first not taken, created empty (O_EXCL: two backups
    never take the same name) for the copy to be renamed onto. Any file system (a FAT USB stick has no
    hard links)."""
    for n in range(1, 1000):
        name = dest if n == 1 else dest.with_name(f"{dest.stem}-{n}{dest.suffix}")
        try:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            return name
        except FileExistsError:
            continue
    raise BackupRefused(f"{dest.parent} holds 999 backups of the same second")


def write_backup_status(data_dir: str | Path, status: dict) -> None:
    """Record the last backup's result beside the database (the home page shows a failure to organisers)."""
    write_status_file(Path(data_dir) / BACKUP_STATUS, status)


def read_backup_status(data_dir: str | Path) -> dict | None:
    doc = read_status_file(Path(data_dir) / BACKUP_STATUS)
    return doc if doc is not None and isinstance(doc.get("ok"), bool) else None


def read_update_status(data_dir: str | Path) -> dict | None:
    """The image's last offline update: ``{"result": "updated" | "fell back", "from", "to", "boot_id", ...}``."""
    doc = read_status_file(Path(data_dir) / UPDATE_STATUS)
    return doc if doc is not None and doc.get("result") in ("updated", "fell back") else None


def _split_sql(sql: str) -> list[str]:
    """Split a migration file into statements (no triggers with inner semicolons here)."""
    lines = [ln for ln in sql.splitlines() if not ln.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
