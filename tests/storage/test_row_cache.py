"""The store keeps rows read on every request (a match's row, its label, a bearer token, a setting) until
they change: a change by this process's writes, or a commit by any other connection (another process, the
CLI), is seen by the next read; a write's uncommitted rows are never kept."""

import sqlite3
import threading

import pytest

from companion.base.errors import NotFoundError
from companion.services.access import Access
from companion.storage import Store


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "companion.db")
    yield s
    s.close()


def statements(store):
    seen = []
    for c in store._all:
        c.set_trace_callback(seen.append)
    return seen


def test_a_known_row_is_read_without_a_select(store):
    m = store.create_match("richelieu", ["Ada", "Bo"])
    store.get_match(m["id"])
    seen = statements(store)
    assert store.get_match(m["id"]) == store.get_match(m["id"])
    assert not [s for s in seen if s.startswith("SELECT")], seen


def test_another_connection_s_commit_is_seen(store, tmp_path):
    m = store.create_match("richelieu", ["Ada", "Bo"])
    store.set_meta(m["id"], "Table 1", {})
    store.set_setting("web.viewers_allowed", True)
    assert store.get_match(m["id"])["status"] == "open" and store.meta(m["id"])["label"] == "Table 1"
    assert store.get_setting("web.viewers_allowed") is True
    other = sqlite3.connect(tmp_path / "companion.db", isolation_level=None)  # as a CLI command would
    other.execute("UPDATE matches SET status='ended' WHERE id=?", (m["id"],))
    other.execute("UPDATE match_meta SET label='Table 9' WHERE match_id=?", (m["id"],))
    other.execute("UPDATE settings SET value='false' WHERE key='web.viewers_allowed'")
    other.close()
    assert store.get_match(m["id"])["status"] == "ended"
    assert store.meta(m["id"])["label"] == "Table 9"
    assert store.get_setting("web.viewers_allowed") is False


def test_a_token_revoked_by_another_process_is_refused_at_once(store, tmp_path):
    access = Access(store)
    token, info = access.create_api_token("organiser", label="t")
    assert access.api_token(token)["role"] == "organiser"
    other = Store(tmp_path / "companion.db")  # the CLI's own store: another connection
    try:
        Access(other).revoke_api_token(info["id"])
    finally:
        other.close()
    assert access.api_token(token) is None


def test_this_process_s_writes_are_seen(store):
    access = Access(store)
    token, info = access.create_api_token("organiser", label="t")
    m = store.create_match("richelieu", ["Ada", "Bo"])
    store.get_match(m["id"])
    store.meta(m["id"])
    access.api_token(token)
    store.set_status(m["id"], "ended")
    store.set_meta(m["id"], "Table 2", {"Ada": "red"})
    access.revoke_api_token(info["id"])
    assert store.get_match(m["id"])["status"] == "ended"
    assert store.meta(m["id"]) == {"label": "Table 2", "colours": {"Ada": "red"}}
    assert access.api_token(token) is None


def test_a_rolled_back_write_leaves_nothing_behind(store):
    m = store.create_match("richelieu", ["Ada", "Bo"])
    store.get_match(m["id"])
    with pytest.raises(RuntimeError):
        with store.write():
            store.set_status(m["id"], "ended")
            assert store.get_match(m["id"])["status"] == "ended"  # the write sees its own row
            raise RuntimeError("rolled back")
    assert store.get_match(m["id"])["status"] == "open"


def test_no_uncommitted_row_is_kept_or_shown_to_other_threads(store):
    m = store.create_match("richelieu", ["Ada", "Bo"])
    inside, release = threading.Event(), threading.Event()

    def writer():
        with store.write():
            store.set_status(m["id"], "ended")
            inside.set()
            release.wait(10)

    t = threading.Thread(target=writer)
    t.start()
    assert inside.wait(10)
    assert store.get_match(m["id"])["status"] == "open"  # read while the write is open: the committed row
    release.set()
    t.join(10)
    assert store.get_match(m["id"])["status"] == "ended"


def test_a_missing_match_is_not_kept(store, tmp_path):
    with pytest.raises(NotFoundError):
        store.get_match("m1")
    store.create_match("richelieu", ["Ada", "Bo"], match_id="m1")
    assert store.get_match("m1")["id"] == "m1"


def test_a_match_s_last_seq_is_known_after_its_append_and_another_process_s_event_counts(store, tmp_path):
    from companion.base.errors import ConflictError

    m = store.create_match("richelieu", ["Ada", "Bo"])
    store.append(m["id"], "turn.end", {}, expected_seq=0)
    seen = statements(store)
    store.append(m["id"], "turn.end", {}, expected_seq=1)  # the last seq known: no MAX(seq)
    assert not [s for s in seen if "MAX(seq)" in s], seen
    other = Store(tmp_path / "companion.db")  # another process appends
    try:
        other.append(m["id"], "turn.end", {}, expected_seq=2)
    finally:
        other.close()
    with pytest.raises(ConflictError):
        store.append(m["id"], "turn.end", {}, expected_seq=2)
    assert store.append(m["id"], "turn.end", {}, expected_seq=3)["seq"] == 4
    # a write rolled back keeps nothing: the seq it would have taken is taken by the next
    with pytest.raises(RuntimeError):
        with store.write():
            store.append(m["id"], "turn.end", {}, expected_seq=4)
            raise RuntimeError("no")
    assert store.append(m["id"], "turn.end", {}, expected_seq=4)["seq"] == 5
    assert [e["seq"] for e in store.events(m["id"])] == [1, 2, 3, 4, 5]


def test_one_look_per_request_and_another_process_s_commit_seen_by_the_next(store, tmp_path):
    """Within ``one_look`` the reads look for other connections' commits once (a request's reads answer as
    of that look); the next request sees a commit made meanwhile."""
    m = store.create_match("richelieu", ["Ada", "Bo"])
    store.set_meta(m["id"], "Table 1", {})
    store.get_match(m["id"]), store.meta(m["id"])
    seen = statements(store)
    with store.one_look():
        assert store.get_match(m["id"])["status"] == "open" and store.meta(m["id"])["label"] == "Table 1"
        assert store.outside_commits() == store.outside_commits()
    assert seen == ["PRAGMA data_version"], seen
    before = store.outside_commits()
    other = sqlite3.connect(tmp_path / "companion.db", isolation_level=None)  # as a CLI command would
    other.execute("UPDATE match_meta SET label='Table 9' WHERE match_id=?", (m["id"],))
    other.close()
    with store.one_look():
        assert store.meta(m["id"])["label"] == "Table 9"
        assert store.outside_commits() == before + 1
    store.append(m["id"], "turn.end", {})  # a write of this process that no kept copy followed counts too
    assert store.outside_commits() == before + 2
    store.append(m["id"], "turn.end", {}, folded=True)
    assert store.outside_commits() == before + 2


def test_a_kept_row_is_read_with_no_statement_while_a_write_s_transaction_is_open(store, tmp_path):
    """While another thread's write holds its transaction (looked at its BEGIN, no COMMIT sent yet), no other
    connection can commit: kept rows are read as they are; once it committed, the next read looks again."""
    m = store.create_match("richelieu", ["Ada", "Bo"])
    store.get_match(m["id"])
    inside, release = threading.Event(), threading.Event()

    def writer():
        with store.write() as c:
            c.execute("INSERT INTO settings(key, value) VALUES ('x', '1')")
            inside.set()
            release.wait(10)

    t = threading.Thread(target=writer)
    t.start()
    inside.wait(10)
    seen = statements(store)
    try:
        assert store.get_match(m["id"])["status"] == "open"
        assert store.outside_commits() is not None
        assert seen == [], seen
    finally:
        release.set()
        t.join()
    other = sqlite3.connect(tmp_path / "companion.db", isolation_level=None)  # as a CLI command would
    other.execute("UPDATE matches SET status='ended' WHERE id=?", (m["id"],))
    other.close()
    assert store.get_match(m["id"])["status"] == "ended"


def test_sessions_seats_and_confirmations_are_kept_until_a_write_that_may_change_them(store, tmp_path):
    from companion.services.matches import MatchService

    now, later, far = "2026-06-01T10:00:00.000Z", "2026-06-01T13:00:00.000Z", "2026-06-01T12:00:00.000Z"
    for key in ("h1", "h2"):
        store.insert_session(key, "player", now, far, {}, purge_before="2000-01-01T00:00:00.000Z")
    svc = MatchService(store)
    m = svc.create("richelieu", ["Ada", "Bo"])
    assert store.claim_seat(m["id"], "Ada", "h1", now) is None and store.claim_seat(m["id"], "Bo", "h2", now) is None
    assert store.confirm_seat(m["id"], "Ada", "h2", "player", now) == 1

    def read(at=now):
        s = store.session_row("h1")
        return (s and s["data"]["seats"], s and s["match_status"], [r["player"] for r in store.seat_rows(m["id"], at)],
                [r["player"] for r in store.seat_confirmation_rows(m["id"], at)])

    assert read() == ({m["id"]: "Ada"}, None, ["Ada", "Bo"], ["Ada"])
    seen = statements(store)
    svc.append(m["id"], "turn.end", {})  # a match's event changes no session nor seat: they stay kept
    assert read() == ({m["id"]: "Ada"}, None, ["Ada", "Bo"], ["Ada"])
    assert not [s for s in seen if s.startswith("SELECT") and ("web_sessions" in s or "seats" in s)], seen
    assert read(later) == ({m["id"]: "Ada"}, None, [], [])  # expired by then: chosen at each call
    store.free_seat(m["id"], "Bo")  # seen at once (Bo's phone, live, still confirms Ada's)
    assert read() == ({m["id"]: "Ada"}, None, ["Ada"], ["Ada"])
    store.leave_seat(m["id"], "h1")
    assert read() == ({}, None, [], [])
    store.delete_session("h1")
    assert store.session_row("h1") is None
    other = sqlite3.connect(tmp_path / "companion.db", isolation_level=None)  # as a CLI command would
    assert store.session_row("h2")["role"] == "player"
    other.execute("DELETE FROM web_sessions WHERE sid_hash='h2'")
    other.close()
    assert store.session_row("h2") is None  # another process's sign-out: refused by the next read


def test_a_table_s_phone_session_shows_its_match_s_status_as_it_changes(store):
    m = store.create_match("richelieu", ["Ada", "Bo"])
    store.insert_session("h3", "player", "2026-06-01T10:00:00.000Z", "2099-01-01T00:00:00.000Z", {},
                         purge_before="2000-01-01T00:00:00.000Z", match_id=m["id"])
    assert store.session_row("h3")["match_status"] == "open"
    store.set_status(m["id"], "ended")
    assert store.session_row("h3")["match_status"] == "ended"
