"""Group commit (``Database.write(group=True)``, used by every MatchService write): the writers that wait
for the writer lock while a write holds it are committed together, one COMMIT (one fsync) for all of
them, and still each write returns only after the COMMIT holding its rows; a failed part rolls back alone,
a failed COMMIT fails every write of its group; nobody (a reader, a stream) sees a grouped write before
its COMMIT."""

import sqlite3
import threading
import time

import pytest

from companion.services.matches import MatchService
from companion.storage import Store

PLAYERS = ["Ada", "Bo", "Cy"]
N = 6


def _wait_until(pred, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.002)
    return True


class _Tracing:
    """The writer's connection, counting COMMITs."""

    def __init__(self, conn):
        self._conn = conn
        self.commits = 0

    def execute(self, sql, *args):
        if sql.strip().upper() == "COMMIT":
            self.commits += 1
        return self._conn.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._conn, name)


@pytest.fixture
def svc(store, fake_game):
    return MatchService(store)


def _queue_writers(store, work, n=N):
    """``n`` threads run ``work(i)`` while another write holds the writer lock; released once all ``n``
    wait for it. Returns (results, errors, the blocking write's release)."""
    hold, holding = threading.Event(), threading.Event()

    def blocker():
        with store.write() as c:
            c.execute("INSERT INTO settings(key, value) VALUES ('blocker', '1')")
            holding.set()
            hold.wait(10)

    results, errors = {}, {}

    def run(i):
        try:
            results[i] = work(i)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors[i] = exc

    b = threading.Thread(target=blocker)
    b.start()
    assert holding.wait(10)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    queued = _wait_until(lambda: getattr(store, "_waiting", 0) == n)
    hold.set()
    b.join(10)
    for t in threads:
        t.join(20)
    assert queued, "the writers never all waited for the writer lock"
    return results, errors


def test_waiting_writers_share_one_commit_and_each_returns_durable(store, svc, tmp_path):
    matches = [svc.create("richelieu", PLAYERS)["id"] for _ in range(N)]
    tracing = store._writer = _Tracing(store._writer)
    durable_at_return = {}

    def work(i):
        event = svc.append(matches[i], "point", {"player": "Ada", "n": i}, expected_seq=0)
        # what another process (a restart) reads the instant the write returned: it is on disk
        other = sqlite3.connect(str(tmp_path / "companion.db"))
        try:
            durable_at_return[i] = other.execute(
                "SELECT COUNT(*) FROM events WHERE match_id=? AND seq=1", (matches[i],)).fetchone()[0]
        finally:
            other.close()
        return event

    results, errors = _queue_writers(store, work)
    assert not errors
    assert sorted(results) == list(range(N))
    assert durable_at_return == {i: 1 for i in range(N)}
    # the blocking write's COMMIT, then the N waiting writers in groups of at most MAX_GROUP (4)
    assert tracing.commits == 1 + -(-N // store.MAX_GROUP), f"{tracing.commits} COMMITs for {N} waiting writers"
    for i, m in enumerate(matches):
        assert [e["data"] for e in store.events(m)] == [{"player": "Ada", "n": i}]


def test_stale_writes_of_one_match_in_one_group_are_still_refused(store, svc):
    """Lost updates: the writers of one group see each other's rows (one transaction), so of N writers
    that all saw seq 0 exactly one wins."""
    from companion.base.errors import ConflictError

    m = svc.create("richelieu", PLAYERS)["id"]
    results, errors = _queue_writers(store, lambda i: svc.append(m, "point", {"player": "Ada", "n": i}, expected_seq=0))
    assert len(results) == 1
    assert len(errors) == N - 1 and all(isinstance(e, ConflictError) for e in errors.values())
    assert [e["seq"] for e in store.events(m)] == [1]
    assert svc.fold(m).last_seq == 1


def test_a_failed_part_rolls_back_alone(store, svc):
    from companion.base.errors import ConflictError

    matches = [svc.create("richelieu", PLAYERS)["id"] for _ in range(N)]

    def work(i):
        return svc.append(matches[i], "point", {"player": "Ada", "n": i}, expected_seq=7 if i % 2 else 0)  # odd ones are stale

    results, errors = _queue_writers(store, work)
    assert sorted(results) == [0, 2, 4]
    assert sorted(errors) == [1, 3, 5] and all(isinstance(e, ConflictError) for e in errors.values())
    for i, m in enumerate(matches):
        assert len(store.events(m)) == (0 if i % 2 else 1)


def test_a_failed_commit_fails_every_write_of_its_group_and_nobody_hears_of_them(store, svc):
    matches = [svc.create("richelieu", PLAYERS)["id"] for _ in range(N)]
    heard = []
    svc.subscribe(lambda n: heard.append(n.match_id))
    tracing = store._writer = _Tracing(store._writer)

    # the blocking write commits first; the group of N waiting writers then fails on its COMMIT
    orig = tracing.execute
    armed, failures = threading.Event(), []

    def execute(sql, *args):  # the first COMMIT holding an event fails (an I/O error, once)
        if sql.strip().upper() == "COMMIT" and armed.is_set() and not failures:
            failures.append(sql)
            raise sqlite3.OperationalError("disk I/O error")
        if sql.strip().upper().startswith("INSERT INTO EVENTS"):
            armed.set()
        return orig(sql, *args)

    tracing.execute = execute
    results, errors = _queue_writers(
        store, lambda i: svc.append(matches[i], "point", {"player": "Ada", "n": i}, expected_seq=0))
    committed = set(results)
    failed = set(errors)
    assert failed, "no write failed"
    assert all(isinstance(e, sqlite3.OperationalError) for e in errors.values())
    for i, m in enumerate(matches):
        stored = len(store.events(m))
        assert stored == (1 if i in committed else 0)  # a failed write left nothing
        assert svc.fold(m).last_seq == stored  # the cache never kept a rolled-back event
    assert sorted(heard) == sorted(matches[i] for i in committed)  # subscribers heard only committed ones
    # the box goes on: the next write of a failed one works
    i = min(failed)
    assert svc.append(matches[i], "point", {"player": "Ada", "n": i}, expected_seq=0)["seq"] == 1


def test_nobody_sees_a_grouped_write_before_its_commit(store, svc):
    """While a group is open (a write left it to the writers waiting), readers, the fold cache and the
    subscribers still show the match as committed."""
    m = svc.create("richelieu", PLAYERS)["id"]
    other = svc.create("richelieu", PLAYERS)["id"]
    heard = []
    svc.subscribe(lambda n: heard.append(n.event["seq"]))
    seen = {}
    in_group, go_on = threading.Event(), threading.Event()

    def second_writer():  # joins the group left open by the first, and looks around before it ends
        with store.write(group=True) as c:
            seen["events"] = len(svc.store.events(m))  # inside the write: the open transaction
            in_group.set()
            go_on.wait(10)
            c.execute("INSERT INTO settings(key, value) VALUES ('x', '1')")

    a_inside = threading.Event()

    def complete(fold):  # inside the first write: wait until the second waits for the writer lock
        a_inside.set()
        _wait_until(lambda: getattr(store, "_waiting", 0) == 1)
        return {"player": "Ada"}

    first = threading.Thread(target=lambda: svc.append(m, "point", expected_seq=0, complete=complete))
    second = threading.Thread(target=second_writer)
    first.start()
    assert a_inside.wait(10)
    second.start()
    assert in_group.wait(10)
    try:
        assert seen["events"] == 1  # the second write sees the first one's row
        # outside: nothing yet
        out = {}
        t = threading.Thread(target=lambda: out.update(events=len(store.events(m)), seq=svc.fold(m).last_seq,
                                                       state=svc.state(m)["seq"], other=svc.fold(other).last_seq))
        t.start()
        t.join(10)
        assert out == {"events": 0, "seq": 0, "state": 0, "other": 0}
        assert heard == []
    finally:
        go_on.set()
    for t in (first, second):
        t.join(10)
    assert heard == [1]
    assert svc.fold(m).last_seq == 1 and len(store.events(m)) == 1


def test_a_lone_write_commits_at_once(store, svc):
    m = svc.create("richelieu", PLAYERS)["id"]
    tracing = store._writer = _Tracing(store._writer)
    for seq in range(3):
        svc.append(m, "point", {"player": "Ada"}, expected_seq=seq)
    assert tracing.commits == 3
    assert store._batch is None


def test_close_commits_a_group_left_open(tmp_path, clock):
    """A write left its group open to a writer that never comes (the server stops): closing the store
    commits it, and the write returns."""
    path = tmp_path / "c.db"
    s = Store(path, clock=clock)
    s._waiting = 1  # a writer seemed to wait when this one ended: the group stays open to it
    returned = threading.Event()

    def write():
        with s.write(group=True) as c:
            c.execute("INSERT INTO settings(key, value) VALUES ('k', '1')")
        returned.set()

    t = threading.Thread(target=write)
    t.start()
    assert _wait_until(lambda: s._batch is not None and s._owner is None)
    assert not returned.is_set()  # waits for its group's COMMIT
    s._waiting = 0
    s.close()
    t.join(10)
    assert returned.is_set()
    again = Store(path, clock=clock)
    try:
        assert again.get_setting("k") == 1
    finally:
        again.close()


@pytest.mark.parametrize("group", [False, True])
def test_a_nested_write_is_a_savepoint_of_its_part(store, group):
    with store.write(group=group) as c:
        c.execute("INSERT INTO settings(key, value) VALUES ('a', '1')")
        with pytest.raises(RuntimeError):
            with store.write() as c2:
                c2.execute("INSERT INTO settings(key, value) VALUES ('b', '1')")
                raise RuntimeError("no")
    assert store.get_setting("a") == 1 and store.get_setting("b") is None


@pytest.mark.parametrize("group", [False, True])
def test_a_nested_write_without_savepoint_is_its_outer_writes(store, group):
    """``savepoint=False``: no savepoint of its own; its rows and hooks commit or roll back with the outer write."""
    told = []
    with pytest.raises(RuntimeError):
        with store.write(group=group) as c:
            c.execute("INSERT INTO settings(key, value) VALUES ('a', '1')")
            with store.write(savepoint=False) as c2:
                c2.execute("INSERT INTO settings(key, value) VALUES ('b', '1')")
                store.on_commit(lambda: told.append("committed"), lambda: told.append("rolled back"))
            raise RuntimeError("no")
    assert store.get_setting("a") is None and store.get_setting("b") is None
    assert told == ["rolled back"]
    with store.write(group=group) as c:
        with store.write(savepoint=False) as c2:
            c2.execute("INSERT INTO settings(key, value) VALUES ('b', '2')")
            store.on_commit(lambda: told.append("committed"))
    assert store.get_setting("b") == 2 and told == ["rolled back", "committed"]
    with store.write(savepoint=False) as c:  # outermost: an ordinary write
        c.execute("INSERT INTO settings(key, value) VALUES ('c', '3')")
    assert store.get_setting("c") == 3


def test_the_first_part_of_a_transaction_has_no_savepoint_and_rolls_back_whole(store, svc):
    """The first write of a transaction runs without a savepoint of its own (nobody else is in it yet): when
    it fails after writing, its rows are rolled back with the transaction, and the writers that waited for it
    meanwhile commit theirs as usual; a later part of a group still has its savepoint."""
    statements = []

    class Tracing(_Tracing):
        def execute(self, sql, *args):
            statements.append(sql.split()[0].upper())
            return super().execute(sql, *args)

    store._writer = Tracing(store._writer)
    with pytest.raises(RuntimeError):
        with store.write(group=True) as c:
            c.execute("INSERT INTO settings(key, value) VALUES ('lost', '1')")
            raise RuntimeError("no")
    assert "SAVEPOINT" not in statements and "ROLLBACK" in statements
    assert not store._writer.in_transaction and store._batch is None
    matches = [svc.create("richelieu", PLAYERS)["id"] for _ in range(N)]
    hold, holding, waited = threading.Event(), threading.Event(), threading.Event()

    def failing_first():
        with pytest.raises(RuntimeError):
            with store.write(group=True) as c:
                c.execute("INSERT INTO settings(key, value) VALUES ('lost', '2')")
                holding.set()
                hold.wait(10)
                raise RuntimeError("no")
        waited.set()

    first = threading.Thread(target=failing_first)
    first.start()
    assert holding.wait(10)
    writers = [threading.Thread(target=svc.append, args=(m, "point", {"player": "Ada"}), kwargs={"expected_seq": 0})
               for m in matches]
    for t in writers:
        t.start()
    queued = _wait_until(lambda: store._waiting == N)
    hold.set()
    for t in [first, *writers]:
        t.join(20)
    assert queued and waited.is_set()
    assert store.get_setting("lost") is None
    assert all(len(store.events(m)) == 1 for m in matches)
    assert "SAVEPOINT" in statements  # (the groups' later parts)
