import json
import sqlite3
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.base.errors import ConflictError, InputError, NotFoundError, RuleError
from companion.core.match import check_export, fold
from companion.services.matches import MatchService
from companion.storage import Store, migrations


def test_a_zero_length_file_is_refused_not_taken_for_a_fresh_install(tmp_path):
    from companion.base.errors import InputError

    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    with pytest.raises(InputError, match="empty"):
        Store(path)
    assert path.stat().st_size == 0


def test_migrations_from_a_new_file(tmp_path):
    path = tmp_path / "new.db"
    s = Store(path)
    latest = migrations()[-1][0]
    assert s.schema_version() == latest
    tables = {r[0] for r in s.conn().execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"matches", "events", "settings"} <= tables
    s.close()
    # opening again applies nothing twice
    s2 = Store(path)
    assert s2.schema_version() == latest
    s2.close()


def test_the_schema_version_is_read_beside_the_writer(store):
    """``/healthz`` asks it: on a read connection, it never queues behind a write's commit (its fsync)
    on the writer's connection."""
    latest = migrations()[-1][0]
    writer = store._writer

    class Busy:
        def execute(self, *a, **kw):
            raise AssertionError("the writer's connection was used")

    store._writer = Busy()
    try:
        assert store.schema_version() == latest
    finally:
        store._writer = writer


def test_every_connection_is_wal_and_synchronous_full(store):
    for conn in (store.conn(), store._writer):
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    seen = []
    t = threading.Thread(target=lambda: seen.append(store.conn().execute("PRAGMA synchronous").fetchone()[0]))
    t.start()
    t.join()
    assert seen == [2]


def test_migration_versions_are_unique_and_ordered():
    versions = [v for v, _, _ in migrations()]
    assert versions == sorted(set(versions))
    assert versions[0] == 1


def test_append_without_expected_seq_counts_from_one(store, fake_game):
    m = store.create_match(fake_game, ["ada", "bo"])
    seqs = [store.append(m["id"], "point", {"player": "ada"})["seq"] for _ in range(5)]
    assert seqs == [1, 2, 3, 4, 5]
    assert [e["seq"] for e in store.events(m["id"])] == [1, 2, 3, 4, 5]
    assert store.events(m["id"], after_seq=3)[0]["seq"] == 4


def test_append_with_expected_seq_refuses_a_stale_write(store, fake_game):
    m = store.create_match(fake_game, ["ada", "bo"])
    assert store.append(m["id"], "point", {"player": "ada"}, expected_seq=0)["seq"] == 1
    assert store.append(m["id"], "point", {"player": "bo"}, expected_seq=1)["seq"] == 2
    with pytest.raises(ConflictError) as err:
        store.append(m["id"], "point", {"player": "bo"}, expected_seq=1)
    assert err.value.field == "expected_seq"
    assert store.last_seq(m["id"]) == 2


def test_append_to_unknown_match(store):
    with pytest.raises(NotFoundError):
        store.append("nope", "point", {})


def test_two_writers_racing_on_the_same_seq_one_wins(store, fake_game):
    m = store.create_match(fake_game, ["ada", "bo"])
    results = []
    barrier = threading.Barrier(8)

    def writer():
        barrier.wait()
        try:
            store.append(m["id"], "point", {"player": "ada"}, expected_seq=0)
            results.append("ok")
        except ConflictError:
            results.append("conflict")

    threads = [threading.Thread(target=writer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count("ok") == 1 and results.count("conflict") == 7


def test_service_folds_refuses_illegal_events_and_undoes(store, fake_game):
    svc = MatchService(store)
    m = svc.create(fake_game, ["ada", "bo"])
    svc.append(m["id"], "point", {"player": "ada", "n": 3})
    svc.append(m["id"], "point", {"player": "bo", "n": 2})
    with pytest.raises(InputError) as err:
        svc.append(m["id"], "point", {"player": "zed"})
    assert err.value.field == "player"
    assert store.last_seq(m["id"]) == 2  # nothing stored for the refused event
    svc.undo(m["id"])
    assert svc.state(m["id"])["state"]["points"] == {"ada": 3, "bo": 0}
    assert store.last_seq(m["id"]) == 3  # undo is itself an event
    svc.undo(m["id"])
    with pytest.raises(RuleError):
        svc.undo(m["id"])
    # a fresh service over the same file folds to the same state
    assert MatchService(store).state(m["id"])["state"] == svc.state(m["id"])["state"]


def test_service_marks_ended_matches_and_undo_reopens(store, fake_game):
    svc = MatchService(store)
    m = svc.create(fake_game, ["ada", "bo"])
    svc.append(m["id"], "finish")
    assert store.get_match(m["id"])["status"] == "ended"
    svc.undo(m["id"])
    assert store.get_match(m["id"])["status"] == "open"


def test_service_refuses_bad_match_creation(store, fake_game):
    svc = MatchService(store)
    with pytest.raises(InputError) as err:
        svc.create("chess", ["a", "b"])
    assert err.value.field == "game"
    with pytest.raises(InputError) as err:
        svc.create(fake_game, ["a", "a"])
    assert err.value.field == "players"
    with pytest.raises(InputError):
        svc.create(fake_game, ["solo"])


def test_subscribers_hear_every_committed_event(store, fake_game):
    svc = MatchService(store)
    heard = []
    svc.subscribe(lambda n: heard.append((n.match_id, n.event["seq"])))
    m = svc.create(fake_game, ["ada", "bo"])
    svc.append(m["id"], "point", {"player": "ada"})
    with pytest.raises(InputError):
        svc.append(m["id"], "point", {"player": "nobody"})
    assert heard == [(m["id"], 1)]


def test_import_refuses_duplicates(store, fake_game):
    m = store.create_match(fake_game, ["ada", "bo"])
    store.append(m["id"], "point", {"player": "ada"})
    doc = store.export_match(m["id"])
    with pytest.raises(ConflictError):
        store.import_match(doc)


names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(players=st.lists(names, min_size=2, max_size=6, unique=True),
       moves=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 9), st.booleans()), max_size=25),
       data=st.data())
def test_export_import_round_trip(tmp_path_factory, fake_game, players, moves, data):
    from companion.base.timeutil import FakeClock

    clock = FakeClock("2026-05-01T10:00:00Z")
    src = Store(tmp_path_factory.mktemp("src") / "a.db", clock=clock)
    svc = MatchService(src)
    m = svc.create(fake_game, players, options={"note": data.draw(names)})
    for who, n, undo in moves:
        clock.advance(7.25)
        if undo and svc.fold(m["id"]).effective:
            svc.undo(m["id"])
        else:
            svc.append(m["id"], "point", {"player": players[who % len(players)], "n": n})
    doc = src.export_match(m["id"])
    doc = json.loads(json.dumps(doc))  # through real JSON text
    check_export(doc)
    dst = Store(tmp_path_factory.mktemp("dst") / "b.db")
    dst.import_match(doc)
    assert dst.export_match(m["id"]) == doc
    assert MatchService(dst).state(m["id"])["state"] == svc.state(m["id"])["state"]
    src.close()
    dst.close()


def test_backup_is_a_consistent_copy(store, fake_game, tmp_path):
    m = store.create_match(fake_game, ["ada", "bo"])
    for _ in range(3):
        store.append(m["id"], "point", {"player": "bo"})
    dest = store.backup(tmp_path / "backups")
    conn = sqlite3.connect(dest)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 3
    conn.close()
    copy = Store(dest)
    assert copy.export_match(m["id"]) == store.export_match(m["id"])
    copy.close()


def test_service_keeps_only_the_most_recent_folds_and_refolds_the_rest(store, fake_game):
    svc = MatchService(store, max_folds=2)
    ids = [svc.create(fake_game, ["ada", "bo"])["id"] for _ in range(3)]
    for n, mid in enumerate(ids):
        svc.append(mid, "point", {"player": "bo", "n": n + 1})
    assert list(svc._folds) == ids[1:]
    # the evicted match folds again from the store, to the same state, and undo still works
    assert svc.state(ids[0])["state"]["points"] == {"ada": 0, "bo": 1}
    svc.undo(ids[0])
    assert svc.state(ids[0])["state"]["points"] == {"ada": 0, "bo": 0}
    assert len(svc._folds) == 2


def test_service_fold_keeps_no_copy_of_the_events(store, fake_game):
    """The server's folds read undo's history from the store: their memory does not grow with the log."""
    svc = MatchService(store)
    m = svc.create(fake_game, ["ada", "bo"])
    for n in range(50):
        svc.append(m["id"], "point", {"player": "ada", "n": n})
    svc.append(m["id"], "point", {"player": "bo", "n": 5})
    f = svc.fold(m["id"])
    assert f._effective == []
    assert [e["data"] for e in f.effective][-2:] == [{"player": "ada", "n": 49}, {"player": "bo", "n": 5}]
    svc.undo(m["id"])
    svc.undo(m["id"])
    f = svc.fold(m["id"])  # each write makes a new fold; a fold handed out never changes
    assert f._effective == []
    assert [e["data"] for e in f.effective][-1] == {"player": "ada", "n": 48}
    # the same state as a fold of the whole exported log
    assert svc.state(m["id"])["state"] == fold(fake_game, ["ada", "bo"], store.events(m["id"])).game_state
    svc.forget(m["id"])
    assert svc.state(m["id"])["state"] == f.game_state


def test_an_undo_folds_the_log_once_however_many_undos_it_holds(store, fake_game, monkeypatch):
    """An undo folds again only the events still in effect, in one pass: a long match with many undos
    (common at a table) used to fold its log again at every earlier undo (quadratic: seconds on a Pi)."""
    from companion.core.match import Fold

    svc = MatchService(store)
    m = svc.create(fake_game, ["ada", "bo"])
    for n in range(60):
        svc.append(m["id"], "point", {"player": "ada" if n % 3 else "bo", "n": n})
        if n % 6 == 5:
            svc.undo(m["id"])
    steps = []
    step = Fold._step
    monkeypatch.setattr(Fold, "_step", lambda self, g, c, e, *rest: steps.append(e["seq"]) or step(self, g, c, e, *rest))
    svc.undo(m["id"])
    replayed = list(steps)
    assert len(replayed) <= 50  # the 49 events still in effect, each once
    assert [e["seq"] for e in svc.fold(m["id"]).effective] == replayed
    assert svc.state(m["id"])["state"] == fold(fake_game, ["ada", "bo"], store.events(m["id"])).game_state


def test_many_threads_share_a_few_read_connections_while_one_writes(store, fake_game):
    m = store.create_match(fake_game, ["ada", "bo"])
    errors, seen = [], []

    def reader():
        try:
            for _ in range(30):
                events = store.events(m["id"])
                assert [e["seq"] for e in events] == list(range(1, len(events) + 1))  # never a torn read
            seen.append(store.conn())
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(24)]
    for t in threads:
        t.start()
    for _ in range(40):
        store.append(m["id"], "point", {"player": "ada"})
    for t in threads:
        t.join()
    assert not errors
    assert len({id(c) for c in seen}) <= Store.READERS
    assert len(store.events(m["id"])) == 40
