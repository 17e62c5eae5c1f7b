"""Audit of the foundation's match commands (`companion match state|export|import|list`, companion/core/match.py,
companion/store.py) against the README's "How it is built": an append-only event log folded by the game's reducer, writes with
expected_seq, export/import of one JSON document (schema-checked, duplicates refused), and bad input ->
exit 2 with one line naming the JSON path. Each test names its rule. CLI tests run real processes."""

import json
from datetime import datetime, timedelta, timezone

import pytest

from companion.base.errors import ConflictError, RuleError
from companion.services.matches import MatchService
from companion.storage import Store
from companion.base.timeutil import FakeClock, to_iso

T0 = datetime(2026, 3, 1, 20, 0, tzinfo=timezone.utc)


@pytest.fixture
def data_dir(tmp_path):
    return tmp_path / "data"       # the run_cli fixture's COMPANION_DATA


def seeded_match(data_dir, game="conquest-italy", players=("Anna", "Bruno", "Carla")):
    """A stored conquest match with clock events written through MatchService (the server's write path)."""
    clock = FakeClock(T0)
    with Store(data_dir / "companion.db", clock=clock) as store:
        svc = MatchService(store)
        mid = svc.create(game, list(players))["id"]
        svc.append(mid, "clock.start", {"limit_minutes": 1}, expected_seq=0)
        clock.advance(20)
        svc.append(mid, "turn.end", {"player": "Anna"}, expected_seq=1)
        clock.advance(5)
        svc.append(mid, "clock.pause", {"reason": "pizza"}, expected_seq=2)
        clock.advance(300)
        svc.append(mid, "clock.resume", {}, expected_seq=3)
        clock.advance(7)
        svc.append(mid, "undo", {}, expected_seq=4)                  # takes back the resume
        want = svc.state(mid, to_iso(T0 + timedelta(seconds=900)))
    return mid, want


def test_rule_export_import_round_trip_through_real_processes(run_cli, data_dir, tmp_path):
    """`match export ID` writes one document {id, game, players, created_at, events [{seq, at, type, data}]};
    `match import` stores it elsewhere; `match state` of it folds to the same state as the server's fold."""
    mid, want = seeded_match(data_dir)
    code, out, err = run_cli("match", "export", mid)
    assert code == 0, err
    doc = json.loads(out)
    assert set(doc) == {"id", "game", "players", "created_at", "events"}
    assert [e["seq"] for e in doc["events"]] == [1, 2, 3, 4, 5]
    assert [e["type"] for e in doc["events"]][-1] == "undo"
    assert all(set(e) == {"seq", "at", "type", "data"} and e["at"].endswith("Z") for e in doc["events"])

    code, out, err = run_cli("match", "state", "-", "--at", to_iso(T0 + timedelta(seconds=900)), stdin=json.dumps(doc))
    assert code == 0, err
    assert json.loads(out) == json.loads(json.dumps(want))
    assert want["clock"]["elapsed_seconds"] == 25.0 and want["clock"]["running"] is False

    other = tmp_path / "other"
    code, out, err = run_cli("match", "import", "-", "--data-dir", str(other), stdin=json.dumps(doc))
    assert code == 0, err
    assert json.loads(out) == {"imported": mid, "events": 5}
    code, out, err = run_cli("match", "export", mid, "--data-dir", str(other))
    assert code == 0 and json.loads(out) == doc                        # nothing lost or changed
    code, out, err = run_cli("match", "list", "--data-dir", str(other))
    assert [(m["id"], m["status"]) for m in json.loads(out)["matches"]] == [(mid, "open")]


def test_rule_import_refuses_duplicates_and_stores_nothing_when_refused(run_cli, data_dir):
    """Import checks the document and refuses duplicates (exit 2, `$.id`); a refused import stores nothing."""
    mid, _ = seeded_match(data_dir)
    code, out, _ = run_cli("match", "export", mid)
    doc = json.loads(out)
    code, out, err = run_cli("match", "import", "-", stdin=json.dumps(doc))
    assert code == 2 and "$.id" in err and len(err.strip().splitlines()) == 1
    bad = dict(doc, id="copy-2", events=doc["events"] + [
        {"seq": 6, "at": doc["events"][-1]["at"], "type": "final.roll", "data": {"player": "Carla", "dice": [1, 7]}}])
    code, out, err = run_cli("match", "import", "-", stdin=json.dumps(bad))
    assert code == 2 and "$.events[5].data.dice[1]" in err, err       # a die shows 1..6
    code, out, _ = run_cli("match", "list")
    assert [m["id"] for m in json.loads(out)["matches"]] == [mid]


@pytest.mark.parametrize("mutate, path", [
    (lambda d: d["events"][1].update(seq=3), "$.events[1].seq"),
    (lambda d: d["events"][2].update(at="2026-03-01T19:00:00Z"), "$.events[2].at"),
    (lambda d: d["events"][2].update(at="2026-03-01 20:00"), "$.events[2].at"),
    (lambda d: d["events"][0].update(data=[1]), "$.events[0].data"),
    (lambda d: d.update(players=["Anna", "Anna", "Carla"]), "$.players"),
    (lambda d: d.update(game="chess"), "$.game"),
    (lambda d: d.pop("created_at"), "$"),
    (lambda d: d["events"][0]["data"].update(limit_minutes=True), "$.events[0].data.limit_minutes"),
    (lambda d: d["events"][0].update(at="0001-01-01T00:00:00+05:00"), "$.events[0].at"),
])
@pytest.mark.parametrize("command", ["state", "import"])
def test_rule_malformed_exports_exit_2_naming_the_path(run_cli, data_dir, mutate, path, command):
    """Malformed match documents: exit 2 with one line naming the JSON path, for `state` and `import`."""
    mid, _ = seeded_match(data_dir)
    code, out, _ = run_cli("match", "export", mid)
    doc = json.loads(out)
    doc["id"] = "imported-copy"
    mutate(doc)
    code, out, err = run_cli("match", command, "-", stdin=json.dumps(doc))
    assert code == 2 and out == "", (out, err)
    line = err.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in err
    assert line.startswith(f"error: {path}"), line


def test_rule_export_of_an_unknown_match_is_exit_2(run_cli):
    """`match export ID` of a match that doesn't exist: exit 2, one line naming it."""
    code, out, err = run_cli("match", "export", "nope")
    assert code == 2 and out == "" and "nope" in err and len(err.strip().splitlines()) == 1


def test_rule_import_of_an_ended_match_is_listed_ended(run_cli, tmp_path):
    """A match whose events end it is stored as ended (`match list --status ended`)."""
    ev = [("clock.start", {"limit_minutes": 1}, 0), ("objective.completed", {"player": "Bruno"}, 30)]
    doc = {"id": "done-1", "game": "rome-is-burning", "players": ["Anna", "Bruno", "Carla"],
           "options": {"clock": True}, "created_at": to_iso(T0),
           "events": [{"seq": i + 1, "at": to_iso(T0 + timedelta(seconds=s)), "type": t, "data": d}
                      for i, (t, d, s) in enumerate(ev)]}
    code, out, err = run_cli("match", "import", "-", stdin=json.dumps(doc))
    assert code == 0, err
    code, out, _ = run_cli("match", "list", "--status", "ended")
    assert [m["id"] for m in json.loads(out)["matches"]] == ["done-1"]
    code, out, _ = run_cli("match", "list", "--status", "open")
    assert json.loads(out)["matches"] == []


def test_rule_expected_seq_refuses_a_stale_write_and_seqs_have_no_gaps(store, fake_game):
    """Writes with expected_seq are refused on a mismatch; a refused event (rules or stale) takes no seq."""
    svc = MatchService(store)
    mid = svc.create(fake_game, ["Anna", "Bruno"])["id"]
    svc.append(mid, "point", {"player": "Anna"}, expected_seq=0)
    with pytest.raises(ConflictError):
        svc.append(mid, "point", {"player": "Bruno"}, expected_seq=0)
    svc.append(mid, "finish", {}, expected_seq=1)
    with pytest.raises(RuleError):
        svc.append(mid, "point", {"player": "Bruno"}, expected_seq=2)
    svc.append(mid, "undo", {}, expected_seq=2)
    assert [(e["seq"], e["type"]) for e in store.events(mid)] == [(1, "point"), (2, "finish"), (3, "undo")]
    assert store.get_match(mid)["status"] == "open"


def test_rule_a_finished_match_feeds_its_season_and_nothing_after_the_end_changes_it(store, fake_game, monkeypatch):
    """A finished app match feeds its season; once the clock ended it, later game events are refused, so
    the recorded places can't change behind the season's back (they could before this audit)."""
    import tests.fakegame as fg
    from companion.services import seasons

    def final_ranking(state):  # the objective bonus: a game that has objectives says who completed one
        pts = state["points"]
        return sorted(({"player": p, "place": 1 + sum(1 for q in pts.values() if q > v),
                        "objective": p == "Carla", "eliminated": False} for p, v in pts.items()),
                      key=lambda r: r["place"])

    monkeypatch.setattr(fg, "final_ranking", final_ranking, raising=False)
    svc = MatchService(store)
    seasons.create_club(store, "Club")
    seasons.create_season(store, "Club", fake_game, 2026)
    mid = svc.create(fake_game, ["Anna", "Bruno", "Carla"], {"clock": True})["id"]
    svc.append(mid, "clock.start", {"limit_minutes": 30})
    svc.append(mid, "point", {"player": "Bruno", "n": 5})
    svc.append(mid, "point", {"player": "Anna", "n": 2})
    svc.append(mid, "objective.completed", {"player": "Carla"})      # the clock ends the match
    ref = f"Club/{fake_game}/2026"
    before = seasons.season_standings(store, ref)
    rows = {r["player"]: r for r in before["standings"]}
    # 3 players, default +1 0 -1; Carla's objective +1
    assert (rows["Bruno"]["points"], rows["Anna"]["points"], rows["Carla"]["points"]) == (1, 0, 0)
    with pytest.raises(RuleError):
        svc.append(mid, "point", {"player": "Carla", "n": 9})
    assert seasons.season_standings(store, ref) == before
    svc.undo(mid)                                                      # re-opened: out of the season
    assert seasons.season_standings(store, ref)["total_matches"] == 0
