"""The application service: one write path, derived rows in the event's transaction, notifications after
the commit (outside the lock, in commit order), ``db rebuild``, and a crash between event and notification."""

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from companion.services import seasons as ss
from companion.base.errors import RuleError
from companion.services.matches import MatchService

REPO = Path(__file__).resolve().parents[2]
RANKING4 = [{"player": p, "place": i + 1} for i, p in enumerate(["ada", "bo", "cy", "di"])]


@pytest.fixture
def ranked_game(monkeypatch):
    from companion import games

    monkeypatch.setitem(games.GAMES, "rome-is-burning", "tests.services.test_seasons")
    return "rome-is-burning"


def test_status_and_season_are_written_with_the_event(store, ranked_game):
    club = ss.create_club(store, "Club")
    season = ss.create_season(store, club["id"], ranked_game, 2026)
    svc = MatchService(store)
    m = svc.create(ranked_game, ["ada", "bo", "cy", "di"])
    seen = []

    def sub(notice):  # by the time anyone hears of the event, its derived rows are there
        seen.append((store.get_match(notice.match_id)["status"], len(ss.season_matches(store, season["id"]))))

    svc.subscribe(sub)
    svc.append(m["id"], "finish", {"ranking": RANKING4})
    assert seen == [("ended", 1)]
    svc.undo(m["id"])
    assert seen[-1] == ("open", 0)


def test_a_failing_derived_write_takes_the_event_back(store, ranked_game, monkeypatch):
    svc = MatchService(store)
    m = svc.create(ranked_game, ["ada", "bo", "cy", "di"])

    def broken(*a, **kw):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(ss, "derive_from_fold", broken)
    with pytest.raises(RuntimeError):
        svc.append(m["id"], "finish", {"ranking": RANKING4})
    assert store.events(m["id"]) == [] and store.get_match(m["id"])["status"] == "open"
    assert svc.fold(m["id"]).last_seq == 0  # the cached fold did not move either


def test_subscribers_run_outside_the_service_lock(store, fake_game):
    """A subscriber may read or write the service from another thread without a deadlock."""
    svc = MatchService(store)
    m = svc.create(fake_game, ["ada", "bo"])
    results = []

    def sub(notice):
        if notice.event["seq"] != 1:
            return
        t = threading.Thread(target=lambda: results.append(svc.append(notice.match_id, "point", {"player": "bo"})))
        t.start()
        t.join(timeout=10)
        results.append(t.is_alive())

    svc.subscribe(sub)
    svc.append(m["id"], "point", {"player": "ada"})
    assert results[-1] is False and results[0]["seq"] == 2


def test_notifications_come_in_commit_order_with_writers_in_threads(store, fake_game):
    svc = MatchService(store)
    m = svc.create(fake_game, ["ada", "bo"])
    heard = []
    svc.subscribe(lambda n: heard.append((n.event["seq"], n.fold.last_seq)))

    def writer():
        for _ in range(25):
            svc.append(m["id"], "point", {"player": "ada"})

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [s for s, _ in heard] == list(range(1, 101))
    assert all(s == last for s, last in heard)  # each subscriber's fold is the match right after its event


def test_an_up_to_date_fold_is_read_while_another_write_holds_the_lock(store, fake_game):
    """A POST's own answer, a page or a list reads the fold without waiting for another writer's commit
    (its fsync); a write made meanwhile by another process is still seen."""
    svc = MatchService(store)
    m = svc.create(fake_game, ["ada", "bo"])
    svc.append(m["id"], "point", {"player": "ada"})
    held, release = threading.Event(), threading.Event()

    def writer_in_progress():
        with svc._lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=writer_in_progress)
    holder.start()
    held.wait(10)
    got = []
    reader = threading.Thread(target=lambda: got.append(svc.state(m["id"])["seq"]))
    reader.start()
    reader.join(timeout=5)
    blocked = reader.is_alive()
    release.set()
    holder.join()
    reader.join()
    assert not blocked and got == [1]
    store.append(m["id"], "point", {"player": "bo"})  # another process (the CLI) writes
    assert svc.state(m["id"])["seq"] == 2


def test_final_roll_and_actions_go_through_the_one_write_path(store):
    import random

    svc = MatchService(store, rng=random.Random(4))
    m = svc.create("rome-is-burning", ["ada", "bo", "cy"])
    heard = []
    svc.subscribe(lambda n: heard.append(n.event["type"]))
    event, extra = svc.act(m["id"], "deal", {"first": "bo"}, expected_seq=0)
    assert event["type"] == "turn.setup" and event["data"]["first"] == "bo" and extra == {}
    with pytest.raises(RuleError) as err:
        svc.act(m["id"], "deal", {}, expected_seq=1)
    assert err.value.field == "type"
    with pytest.raises(RuleError):
        svc.final_roll(m["id"])  # no clock in this match
    assert heard == ["turn.setup"] and store.last_seq(m["id"]) == 1


def test_events_are_never_stamped_before_the_last_one(store, fake_game, clock):
    from companion.base.timeutil import parse_iso

    svc = MatchService(store)
    m = svc.create(fake_game, ["ada", "bo"])
    first = svc.append(m["id"], "point", {"player": "ada"})
    clock.advance(-300)  # the wall clock jumps back (a Pi without a battery clock)
    second = svc.append(m["id"], "point", {"player": "bo"})
    assert parse_iso(second["at"]) == parse_iso(first["at"])
    # a last event stamped otherwise (an import: an offset, microseconds) is compared as an instant
    imported = svc.append(m["id"], "point", {"player": "ada"}, at="2099-01-01T01:00:00.000001+01:00")
    third = svc.append(m["id"], "point", {"player": "bo"})
    assert third["at"] == imported["at"]


def test_iso_before_is_parse_iso_s_order():
    import random
    from datetime import datetime, timedelta, timezone

    from companion.base.timeutil import iso_before, parse_iso, to_iso

    rng = random.Random(7)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    stamps = [to_iso(start + timedelta(milliseconds=rng.randint(0, 10**11))) for _ in range(60)]
    stamps += [stamps[0], "2026-01-01T00:00:00Z", "2026-01-01T01:00:00.000+01:00", "2026-01-01T00:00:00.000001Z",
               "2025-12-31T23:59:59.999Z"]
    for a in stamps:
        for b in stamps:
            assert iso_before(a, b) == (parse_iso(a) < parse_iso(b)), (a, b)


def test_db_rebuild_repairs_stale_derived_rows(store, ranked_game, tmp_path):
    club = ss.create_club(store, "Club")
    season = ss.create_season(store, club["id"], ranked_game, 2026)
    svc = MatchService(store)
    ended = svc.create(ranked_game, ["ada", "bo", "cy", "di"])
    svc.append(ended["id"], "finish", {"ranking": RANKING4})
    open_ = svc.create(ranked_game, ["ada", "bo", "cy", "di"])
    # make the derived rows stale, as an older version or a hand edit could leave them
    store.set_status(ended["id"], "open")
    store.set_status(open_["id"], "ended")
    ss.forget_app_match(store, ended["id"])
    out = MatchService(store).rebuild()
    assert out["matches"] == 2 and sorted(out["status_fixed"]) == sorted([ended["id"], open_["id"]])
    assert store.get_match(ended["id"])["status"] == "ended" and store.get_match(open_["id"])["status"] == "open"
    assert [x["match_id"] for x in ss.season_matches(store, season["id"])] == [ended["id"]]
    assert MatchService(store).rebuild()["status_fixed"] == []  # idempotent


def test_db_rebuild_cli_as_a_real_process(run_cli, tmp_path):
    code, out, err = run_cli("db", "rebuild")
    assert code == 0 and json.loads(out) == {"matches": 0, "status_fixed": []}, err


CRASH = r"""
import os, sys
sys.path.insert(0, sys.argv[2])
from companion import games
games.GAMES["rome-is-burning"] = "tests.services.test_seasons"
from companion.services import seasons as ss
from companion.services.matches import MatchService
from companion.storage import Store

store = Store(sys.argv[1])
club = ss.create_club(store, "Club")
ss.create_season(store, club["id"], "rome-is-burning", int(store.clock.now_iso()[:4]))
svc = MatchService(store)
m = svc.create("rome-is-burning", ["ada", "bo", "cy", "di"])
svc.subscribe(lambda *a: os._exit(9))  # dies at the first notification: after the commit, before anyone hears
print(m["id"], flush=True)
svc.append(m["id"], "finish", {"ranking": [{"player": p, "place": i + 1} for i, p in enumerate("ada bo cy di".split())]})
print("not reached", flush=True)
"""


def test_a_crash_between_the_event_and_its_notification_leaves_nothing_stale(tmp_path, monkeypatch):
    from companion import games
    from companion.storage import Store

    db = tmp_path / "companion.db"
    p = subprocess.run([sys.executable, "-c", CRASH, str(db), str(REPO)], capture_output=True, text=True,
                       timeout=60, cwd=str(REPO))
    assert p.returncode == 9, p.stderr
    match_id = p.stdout.split()[0]
    assert "not reached" not in p.stdout
    monkeypatch.setitem(games.GAMES, "rome-is-burning", "tests.services.test_seasons")
    with Store(db) as store:
        assert [e["type"] for e in store.events(match_id)] == ["finish"]
        assert store.get_match(match_id)["status"] == "ended"
        season = ss.list_seasons(store)[0]
        assert [x["match_id"] for x in ss.season_matches(store, season["id"])] == [match_id]


# -- undo and redo -------------------------------------------------------------------------------------

def test_what_undo_takes_back_and_what_redo_records_agree_with_the_fold(store, fake_game):
    """A walk of points and undos: the service's ``last_in_effect`` is the fold's last event in effect, and
    a redo right after an undo records that undo's event again (the state before the undo comes back)."""
    import random

    from companion.services.matches import last_in_effect

    rng = random.Random(5)
    svc = MatchService(store)
    m = svc.create(fake_game, ["ada", "bo"])
    for step in range(60):
        f = svc.fold(m["id"])
        eff = f.effective
        last = last_in_effect(store.events(m["id"]))
        assert (last and {k: last[k] for k in ("seq", "type", "data")}) == \
            ({k: eff[-1][k] for k in ("seq", "type", "data")} if eff else None)
        if eff and rng.random() < 0.4:
            before = f.game_state
            svc.undo(m["id"], expected_seq=f.last_seq)
            if rng.random() < 0.5:
                e = svc.redo(m["id"], expected_seq=f.last_seq + 1)
                assert (e["type"], e["data"]) == (eff[-1]["type"], eff[-1]["data"])
                assert svc.fold(m["id"]).game_state == before
        else:
            svc.append(m["id"], "point", {"player": rng.choice(["ada", "bo"]), "n": step})
    with pytest.raises(RuleError):  # the last event is no undo: nothing to redo
        svc.redo(m["id"])


def test_an_up_to_date_fold_is_read_with_no_statement_until_another_process_writes(store, fake_game, tmp_path):
    from companion.storage import Store

    svc = MatchService(store)
    m = svc.create(fake_game, ["ada", "bo"])
    svc.append(m["id"], "point", {"player": "ada"})
    seen = []
    for c in store._all:
        c.set_trace_callback(seen.append)
    assert svc.state(m["id"])["seq"] == 1
    assert not [s for s in seen if s.startswith("SELECT")], seen
    other = Store(store.path)  # another process (the CLI) writes
    try:
        other.append(m["id"], "point", {"player": "bo"}, expected_seq=1)
    finally:
        other.close()
    assert svc.state(m["id"])["seq"] == 2
    with store.one_look():
        assert svc.append(m["id"], "point", {"player": "ada"}, expected_seq=2)["seq"] == 3
        assert svc.state(m["id"])["seq"] == 3


def test_a_phone_s_write_reads_the_log_only_for_a_secret_s_reset(store, fake_game):
    """The policy needs the events in effect only to judge a reset of a secret: a seated phone's ordinary
    write reads no event of the log (it would read the whole log at every write)."""
    from companion.services.policy import Caller

    svc = MatchService(store)
    m = svc.create(fake_game, ["ada", "bo"])
    for i in range(5):
        svc.append(m["id"], "point", {"player": "ada"})
    svc.state(m["id"])
    seen = []
    for c in store._all:
        c.set_trace_callback(seen.append)
    svc.append(m["id"], "point", {"player": "ada"}, by=Caller("player", "ada"))
    assert not [s for s in seen if "FROM events" in s], seen
