"""``companion match state FILE|- [--at]`` folds an exported conquest match and prints the clock at an instant;
bad input exits 2 with one line naming the JSON path."""

import json

import pytest

PLAYERS = ["Anna", "Bruno", "Carla"]


def export(events):
    return {"id": "night-1", "game": "conquest-italy", "players": PLAYERS, "created_at": "2026-03-06T20:00:00Z",
            "events": [{"seq": i + 1, "at": at, "type": t, "data": d} for i, (at, t, d) in enumerate(events)]}


MATCH = export([
    ("2026-03-06T20:05:00Z", "clock.start", {"limit_minutes": 60}),
    ("2026-03-06T20:30:00Z", "turn.end", {"player": "Anna", "conquered": 2}),
    ("2026-03-06T20:40:00Z", "clock.pause", {"reason": "pizza"}),
    ("2026-03-06T21:10:00Z", "clock.resume", {}),
    ("2026-03-06T21:30:00Z", "turn.end", {"player": "Bruno", "conquered": 0}),   # 55 min run
    ("2026-03-06T21:40:00Z", "turn.end", {"player": "Carla", "conquered": 1}),   # zero at 21:35 in Carla's turn
    ("2026-03-06T21:50:00Z", "turn.end", {"player": "Anna", "conquered": 0}),    # round 2: last lap
    ("2026-03-06T21:55:00Z", "turn.end", {"player": "Bruno", "conquered": 0}),
    ("2026-03-06T22:00:00Z", "turn.end", {"player": "Carla", "conquered": 0}),   # round 3: final, threshold 4
    ("2026-03-06T22:05:00Z", "turn.end", {"player": "Anna", "conquered": 1}),
    ("2026-03-06T22:06:00Z", "final.roll", {"player": "Anna", "dice": [2, 3]}),
    ("2026-03-06T22:10:00Z", "turn.end", {"player": "Bruno", "conquered": 3}),
    ("2026-03-06T22:15:00Z", "turn.end", {"player": "Carla", "conquered": 0}),
    ("2026-03-06T22:16:00Z", "final.roll", {"player": "Carla", "dice": [4, 1]}),  # 5 > 4; threshold now 5
    ("2026-03-06T22:20:00Z", "turn.end", {"player": "Anna", "conquered": 0}),
    ("2026-03-06T22:21:00Z", "final.roll", {"player": "Anna", "dice": [1, 4]}),   # 5 <= 5: the end
])


@pytest.fixture
def match_file(tmp_path):
    def write(doc):
        p = tmp_path / "match.json"
        p.write_text(json.dumps(doc))
        return str(p)
    return write


@pytest.mark.parametrize("at, expected", [
    ("2026-03-06T20:00:00Z", {"phase": "setup", "round": 0, "current_player": None, "awaiting_roll": None,
                              "final_threshold": None, "ended": False, "ended_by": None,
                              "clock": {"limit_seconds": 7200, "elapsed_seconds": 0, "remaining_seconds": 7200,
                                        "running": False}}),
    ("2026-03-06T20:50:00Z", {"phase": "regular", "round": 1, "current_player": "Bruno", "awaiting_roll": None,
                              "final_threshold": None, "ended": False, "ended_by": None,
                              "clock": {"limit_seconds": 3600, "elapsed_seconds": 2100, "remaining_seconds": 1500,
                                        "running": False}}),
    ("2026-03-06T21:35:00Z", {"phase": "finishing-round", "round": 1, "current_player": "Carla",
                              "awaiting_roll": None, "final_threshold": None, "ended": False, "ended_by": None,
                              "clock": {"limit_seconds": 3600, "elapsed_seconds": 3600, "remaining_seconds": 0,
                                        "running": True}}),
    ("2026-03-06T22:05:30Z", {"phase": "final-rounds", "round": 3, "current_player": "Anna", "awaiting_roll": "Anna",
                              "final_threshold": 4, "ended": False, "ended_by": None,
                              "clock": {"limit_seconds": 3600, "elapsed_seconds": 5430, "remaining_seconds": 0,
                                        "running": True}}),
    ("2026-03-06T22:17:00Z", {"phase": "final-rounds", "round": 4, "current_player": "Anna", "awaiting_roll": None,
                              "final_threshold": 5, "ended": False, "ended_by": None,
                              "clock": {"limit_seconds": 3600, "elapsed_seconds": 6120, "remaining_seconds": 0,
                                        "running": True}}),
    ("2026-03-07T09:00:00Z", {"phase": "ended", "round": 4, "current_player": None, "awaiting_roll": None,
                              "final_threshold": 5, "ended": True,
                              "ended_by": {"reason": "final-roll", "player": "Anna"},
                              "clock": {"limit_seconds": 3600, "elapsed_seconds": 6360, "remaining_seconds": 0,
                                        "running": False}}),
])
def test_state_at_instants(run_cli, match_file, at, expected):
    code, out, err = run_cli("match", "state", match_file(MATCH), "--at", at)
    assert code == 0, err
    view = json.loads(out)
    assert {k: view[k] for k in expected} == expected


def test_state_from_stdin_defaults_to_now(run_cli):
    code, out, err = run_cli("match", "state", "-", stdin=json.dumps(MATCH))
    assert code == 0, err
    assert json.loads(out)["ended_by"] == {"reason": "final-roll", "player": "Anna"}


def broken(index, **change):
    doc = json.loads(json.dumps(MATCH))
    doc["events"][index].update(change)
    return doc


@pytest.mark.parametrize("doc, path", [
    (broken(10, data={"player": "Anna", "dice": [2, 7]}), "$.events[10].data.dice[1]"),
    (broken(10, data={"player": "Anna", "dice": [2]}), "$.events[10].data.dice"),
    (broken(10, data={"player": "Bruno", "dice": [2, 3]}), "$.events[10].data.player"),    # Anna owes it
    (broken(1, data={"player": "Bruno", "conquered": 2}), "$.events[1].data.player"),     # Anna's turn
    (broken(1, data={"player": "Zeno"}), "$.events[1].data.player"),
    (broken(9, data={"player": "Anna"}), "$.events[9].data.conquered"),                  # required in final rounds
    (broken(0, data={"limit_minutes": 0}), "$.events[0].data.limit_minutes"),
    (broken(3, type="clock.pause"), "$.events[3].type"),                                  # paused already
    (broken(2, at="2026-03-06T20:29:59Z"), "$.events[2].at"),                             # out of time order
])
def test_refused_documents_exit_2_naming_the_path(run_cli, match_file, doc, path):
    code, out, err = run_cli("match", "state", match_file(doc), "--at", "2026-03-06T23:00:00Z")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and path in err and "Traceback" not in err, err


def test_a_bad_instant_is_named(run_cli, match_file):
    code, out, err = run_cli("match", "state", match_file(MATCH), "--at", "teatime")
    assert code == 2 and "--at" in err and len(err.strip().splitlines()) == 1
