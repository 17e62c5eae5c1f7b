"""Final result only: a match created with ``options.tracking = "result"`` takes one ``result.entered`` event
(the places entered by hand), ends with it, and its season takes the ranking (docs/rulings.md, "Final result
only")."""

import json

import pytest

from companion.services import seasons as ss
from companion.base.errors import InputError, RuleError
from companion.games import game_ids
from companion.games.contract import check_ranking
from companion.core.match import RESULT, Fold, check_export, fold
from companion.services.matches import MatchService

PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]
RESULT_ONLY = {"tracking": "result"}


def places(*pairs):
    return {"places": [{"player": p, "place": n} for p, n in pairs]}


@pytest.mark.parametrize("game", game_ids())
def test_every_game_takes_a_result_with_ties(game):
    f = Fold(game, PLAYERS[:3], RESULT_ONLY)
    assert not f.ended() and f.final_ranking() is None and not f.clock_on
    f.apply({"seq": 1, "type": RESULT, "data": places(("Carla", 2), ("Anna", 1), ("Bruno", 2)), "at": "2026-03-01T20:00:00Z"})
    assert f.ended()
    ranking = f.final_ranking()
    assert [(r["player"], r["place"]) for r in ranking] == [("Anna", 1), ("Bruno", 2), ("Carla", 2)]
    assert check_ranking(ranking, PLAYERS[:3]) == []
    v = f.view()
    assert v["tracking"] == "result" and v["ended"] is True and v["result"] == ranking


@pytest.mark.parametrize("data, field", [
    (places(("Anna", 1), ("Bruno", 2), ("Carla", 4)), "places[2].place"),          # out of range (3 players)
    (places(("Anna", 0), ("Bruno", 1), ("Carla", 2)), "places[0].place"),
    (places(("Anna", 1), ("Bruno", 2), ("Zoe", 3)), "places[2].player"),           # unknown player
    (places(("Anna", 1), ("Bruno", 2), ("Anna", 3)), "places[2].player"),          # twice
    (places(("Anna", 1), ("Bruno", 2)), "places"),                                 # Carla missing
    (places(("Anna", 1), ("Bruno", 2), ("Carla", 2.0)), "places[2].place"),
    (places(("Anna", 1), ("Bruno", 1), ("Carla", 2)), "places[2].place"),          # 1, 1, 3 is the shape
    (places(("Anna", 1), ("Bruno", 3), ("Carla", 3)), "places[1].place"),          # 1, 2, 2 is the shape
    ({"places": []}, "places"),
    ({"places": [{"player": "Anna", "place": 1, "points": 3}]}, "places[0].points"),
    ({"ranking": ["Anna"]}, "ranking"),
    ({"places": [{"player": "Anna", "place": 1, "objective": True}, {"player": "Bruno", "place": 2},
                 {"player": "Carla", "place": 3}]}, "places[0].objective"),          # richelieu has no objective
])
def test_bad_results_name_the_field(data, field):
    f = Fold("richelieu", PLAYERS[:3], RESULT_ONLY)
    with pytest.raises(InputError) as err:
        f.apply({"seq": 1, "type": RESULT, "data": data, "at": "2026-03-01T20:00:00Z"})
    assert err.value.field == field
    assert not f.ended()


def test_conquest_objective_and_eliminated():
    f = Fold("conquest-italy", PLAYERS, RESULT_ONLY)
    assert not f.clock_on  # a result-only match runs no clock, even for the conquest game
    data = {"places": [{"player": "Bruno", "place": 1, "objective": True}, {"player": "Anna", "place": 2},
                       {"player": "Carla", "place": 2}, {"player": "Dario", "place": 4, "eliminated": True}]}
    f.apply({"seq": 1, "type": RESULT, "data": data, "at": "2026-03-01T20:00:00Z"})
    assert f.final_ranking() == [
        {"player": "Bruno", "place": 1, "objective": True, "eliminated": False},
        {"player": "Anna", "place": 2, "objective": False, "eliminated": False},
        {"player": "Carla", "place": 2, "objective": False, "eliminated": False},
        {"player": "Dario", "place": 4, "objective": False, "eliminated": True}]


@pytest.mark.parametrize("rows, field", [
    ([("Anna", 2, True, False), ("Bruno", 1, False, False), ("Carla", 3, False, False), ("Dario", 4, False, False)],
     "places[0].place"),                                   # the objective wins: place 1
    ([("Anna", 1, True, False), ("Bruno", 1, False, False), ("Carla", 3, False, False), ("Dario", 4, False, False)],
     "places[0].place"),                                   # ... alone
    ([("Anna", 1, True, False), ("Bruno", 2, True, False), ("Carla", 3, False, False), ("Dario", 4, False, False)],
     "places[1].objective"),
    ([("Anna", 1, False, False), ("Bruno", 2, False, True), ("Carla", 3, False, False), ("Dario", 4, False, False)],
     "places[1].place"),                                   # eliminated after everyone still in
    ([("Anna", 1, False, False), ("Bruno", 2, False, False), ("Carla", 3, False, False), ("Dario", 4, False, "yes")],
     "places[3].eliminated"),
])
def test_conquest_flags_are_checked(rows, field):
    f = Fold("conquest-italy", PLAYERS, RESULT_ONLY)
    data = {"places": [{"player": p, "place": n, "objective": o, "eliminated": e} for p, n, o, e in rows]}
    with pytest.raises(InputError) as err:
        f.apply({"seq": 1, "type": RESULT, "data": data, "at": "2026-03-01T20:00:00Z"})
    assert err.value.field == field


def test_a_result_only_match_takes_nothing_else_and_undo_reopens_it():
    f = Fold("rome-is-burning", PLAYERS, RESULT_ONLY)
    with pytest.raises(RuleError) as err:
        f.apply({"seq": 1, "type": "turn.end", "data": {}, "at": "2026-03-01T20:00:00Z"})
    assert err.value.field == "type" and "final result" in err.value.message
    res = {"seq": 1, "type": RESULT, "data": places(("Anna", 1), ("Bruno", 2), ("Carla", 3), ("Dario", 4)),
           "at": "2026-03-01T20:00:00Z"}
    f.apply(res)
    with pytest.raises(RuleError):
        f.apply({**res, "seq": 2})  # entered once
    f.apply({"seq": 2, "type": "undo", "data": {}, "at": "2026-03-01T20:01:00Z"})
    assert not f.ended() and f.final_ranking() is None
    f.apply({**res, "seq": 3, "data": places(("Dario", 1), ("Carla", 2), ("Bruno", 3), ("Anna", 4))})
    assert [r["player"] for r in f.final_ranking()] == ["Dario", "Carla", "Bruno", "Anna"]


def test_a_tracked_match_takes_a_result_by_hand_only_as_a_correction():
    """In a match the phones follow, the places entered by hand are the organiser's correction
    (``correction: true``): they end the match with that ranking; nothing is taken after it."""
    f = Fold("richelieu", PLAYERS[:3], {})
    data = places(("Anna", 2), ("Bruno", 1), ("Carla", 3))
    with pytest.raises(InputError) as err:
        f.apply({"seq": 1, "type": RESULT, "data": data, "at": "2026-03-01T20:00:00Z"})
    assert err.value.field == "correction"
    f.apply({"seq": 1, "type": RESULT, "data": {**data, "correction": True}, "at": "2026-03-01T20:00:00Z"})
    assert f.ended() and [r["player"] for r in f.final_ranking()] == ["Bruno", "Anna", "Carla"]
    assert f.view()["corrected"] is True and f.view()["ended"] is True
    with pytest.raises(RuleError) as err:
        f.apply({"seq": 2, "type": "turn.end", "data": {"player": "Bruno"}, "at": "2026-03-01T20:01:00Z"})
    assert err.value.field == "type"
    result_only = Fold("richelieu", PLAYERS[:3], {"tracking": "result"})
    with pytest.raises(InputError):  # a result-only match is not corrected: it has nothing else
        result_only.apply({"seq": 1, "type": RESULT, "data": {**data, "correction": True}, "at": "2026-03-01T20:00:00Z"})


def test_the_organisers_result_stops_a_running_clock():
    f = Fold("conquest-italy", PLAYERS[:3], {})
    f.apply({"seq": 1, "type": "clock.start", "data": {"limit_minutes": 60}, "at": "2026-03-01T20:00:00Z"})
    f.apply({"seq": 2, "type": RESULT, "at": "2026-03-01T20:10:00Z", "data": {"correction": True, "places": [
        {"player": "Anna", "place": 1, "objective": True}, {"player": "Bruno", "place": 2},
        {"player": "Carla", "place": 3, "eliminated": True}]}})
    v = f.view("2026-03-01T20:30:00Z")
    assert v["ended"] and v["ended_by"] == {"reason": "result", "player": None}
    assert v["clock"]["running"] is False and v["clock"]["elapsed_seconds"] == 600
    assert f.final_ranking()[0] == {"player": "Anna", "place": 1, "objective": True, "eliminated": False}


@pytest.mark.parametrize("options, field", [({"tracking": "paper"}, "tracking"),
                                            ({"tracking": "result", "clock": True}, "clock")])
def test_bad_tracking_options(options, field):
    with pytest.raises(InputError) as err:
        Fold("richelieu", PLAYERS[:3], options)
    assert err.value.field == field


def test_export_round_trip_and_history_fold(store):
    service = MatchService(store)
    m = service.create("web-of-power", PLAYERS[:3], RESULT_ONLY)
    service.enter_result(m["id"], places(("Anna", 1), ("Bruno", 1), ("Carla", 3))["places"], expected_seq=0)
    doc = store.export_match(m["id"])
    assert check_export(doc).final_ranking() == service.fold(m["id"]).final_ranking()
    assert fold("web-of-power", PLAYERS[:3], doc["events"], doc["options"]).ended()
    service.undo(m["id"])  # the service's fold reads the stored log on undo
    assert not service.fold(m["id"]).ended() and store.get_match(m["id"])["status"] == "open"


def test_the_season_takes_the_result(store):
    club = ss.create_club(store, "Fan Club")
    season = ss.create_season(store, club["id"], "conquest-italy", 2026)
    service = MatchService(store)
    m = service.create("conquest-italy", PLAYERS, RESULT_ONLY)
    assert ss.season_matches(store, season["id"]) == []
    service.enter_result(m["id"], [{"player": "Bruno", "place": 1, "objective": True},
                                   {"player": "Anna", "place": 2}, {"player": "Carla", "place": 2},
                                   {"player": "Dario", "place": 4, "eliminated": True}], expected_seq=0)
    assert store.get_match(m["id"])["status"] == "ended"
    [rec] = ss.season_matches(store, season["id"])
    assert rec["source"] == "app" and rec["match_id"] == m["id"]
    assert {r["player"]: (r["place"], r["objective"], r["eliminated"]) for r in rec["results"]} == {
        "Bruno": (1, True, False), "Anna": (2, False, False), "Carla": (2, False, False), "Dario": (4, False, True)}
    service.undo(m["id"])
    assert ss.season_matches(store, season["id"]) == []


# -- the CLI ---------------------------------------------------------------------------------------

def test_cli_records_a_result(run_cli, tmp_path):
    code, out, err = run_cli("match", "result", "--game", "conquest-italy", "Anna=2", "Bruno=1:objective",
                             "Carla=2", "Dario=4:eliminated", "--label", "Tavolo 3", "--data-dir", str(tmp_path))
    assert code == 0, err
    doc = json.loads(out)
    assert [(r["player"], r["place"], r["objective"], r["eliminated"]) for r in doc["ranking"]] == [
        ("Bruno", 1, True, False), ("Anna", 2, False, False), ("Carla", 2, False, False), ("Dario", 4, False, True)]
    code, out, err = run_cli("match", "list", "--status", "ended", "--data-dir", str(tmp_path))
    assert code == 0 and doc["match"] in out


@pytest.mark.parametrize("argv, needle", [
    (["--game", "richelieu", "Anna=1", "Bruno=3"], "'Bruno=3'"),            # out of range for 2 players
    (["--game", "richelieu", "Anna=1", "Bruno"], "PLAYER=PLACE"),
    (["--game", "richelieu", "Anna=1", "Bruno=2:winner"], ":objective or :eliminated"),
    (["--game", "richelieu", "Anna=1", "Bruno=2:objective"], "no objective"),
    (["--game", "chess", "Anna=1"], "invalid choice"),
])
def test_cli_bad_input_exits_2_with_one_line(run_cli, tmp_path, argv, needle):
    code, out, err = run_cli("match", "result", *argv, "--data-dir", str(tmp_path))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err, err
    code, out, _ = run_cli("match", "list", "--data-dir", str(tmp_path))
    assert code != 0 or json.loads(out)["matches"] == []  # a refused result leaves no match behind


def test_cli_enters_the_places_of_an_existing_match(store, run_cli, tmp_path):
    from companion.storage import Store

    db = tmp_path / "companion.db"
    s = Store(str(db))
    m = MatchService(s).create("rome-is-burning", ["Anna", "Bruno", "Carla"], RESULT_ONLY)
    s.close()
    code, out, err = run_cli("match", "result", "--match", m["id"], "Carla=1", "Anna=2", "Bruno=3",
                             "--data-dir", str(tmp_path))
    assert code == 0, err
    code, out, err = run_cli("match", "result", "--match", m["id"], "Carla=1", "Anna=2", "Bruno=3",
                             "--data-dir", str(tmp_path))
    assert code == 2 and "entered already" in err
