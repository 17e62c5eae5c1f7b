"""POST /api/matches/<id>/result: the final places of a result-only match (docs/rulings.md, "Final result only")."""

import pytest

from companion.services import seasons as ss

PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]


def new(a, game="rome-is-burning", players=PLAYERS, **options):
    r = a.post("/api/matches", {"game": game, "players": players, "options": {"tracking": "result", **options}})
    assert r.status_code == 201, r.json
    return r.json


def test_enter_a_result_with_a_tie(player, store):
    ss.create_season(store, ss.create_club(store, "Club")["id"], "rome-is-burning", 2026)
    m = new(player)
    assert m["view"]["tracking"] == "result" and m["view"]["result"] is None and m["status"] == "open"
    assert "clock" not in m["view"]
    r = player.post(f"/api/matches/{m['id']}/result", {"expected_seq": 0, "places": [
        {"player": "Carla", "place": 1}, {"player": "Anna", "place": 2}, {"player": "Dario", "place": 2},
        {"player": "Bruno", "place": 4}]})
    assert r.status_code == 201, r.json
    body = r.json
    assert body["status"] == "ended" and body["event"]["type"] == "result.entered"
    assert [(x["player"], x["place"]) for x in body["view"]["result"]] == [
        ("Carla", 1), ("Anna", 2), ("Dario", 2), ("Bruno", 4)]
    # the season has it, the match list shows it ended
    [rec] = ss.season_matches(store, ss.list_seasons(store)[0]["id"])
    assert rec["match_id"] == m["id"] and {r["player"]: r["place"] for r in rec["results"]} == {
        "Carla": 1, "Anna": 2, "Dario": 2, "Bruno": 4}
    assert player.get("/api/matches?status=ended").json["matches"][0]["id"] == m["id"]


@pytest.mark.parametrize("places, status, field", [
    ([{"player": "Anna", "place": 1}, {"player": "Bruno", "place": 2}, {"player": "Carla", "place": 3},
      {"player": "Dario", "place": 5}], 400, "$.places[3].place"),                  # out of range (4 players)
    ([{"player": "Anna", "place": 9}], 400, "$.places[0].place"),                    # the schema's own limit
    ([{"player": "Anna", "place": 1}, {"player": "Bruno", "place": 2}, {"player": "Carla", "place": 3},
      {"player": "Zoe", "place": 4}], 400, "$.places[3].player"),                   # unknown player
    ([{"player": "Anna", "place": 1}, {"player": "Bruno", "place": 2}], 400, "$.places"),   # missing players
    ([{"player": "Anna", "place": 1}, {"player": "Bruno", "place": 2}, {"player": "Carla", "place": 2},
      {"player": "Dario", "place": 3}], 400, "$.places[3].place"),                  # 1, 2, 2, 4 is the shape
    ([{"player": "Anna", "place": 1, "eliminated": True}, {"player": "Bruno", "place": 2},
      {"player": "Carla", "place": 3}, {"player": "Dario", "place": 4}], 400, "$.places[0].eliminated"),
])
def test_bad_places_name_the_field(player, places, status, field):
    m = new(player)
    r = player.post(f"/api/matches/{m['id']}/result", {"expected_seq": 0, "places": places})
    assert r.status_code == status, r.json
    assert r.json["field"] == field and r.json["error"]
    assert player.get(f"/api/matches/{m['id']}").json["seq"] == 0


def test_conquest_flags_and_refusals(player):
    m = new(player, "conquest-italy")
    ok = [{"player": "Bruno", "place": 1, "objective": True}, {"player": "Anna", "place": 2},
          {"player": "Carla", "place": 3}, {"player": "Dario", "place": 4, "eliminated": True}]
    r = player.post(f"/api/matches/{m['id']}/result", {"expected_seq": 0, "places": ok})
    assert r.status_code == 201, r.json
    assert r.json["view"]["result"][0] == {"player": "Bruno", "place": 1, "objective": True, "eliminated": False}
    again = player.post(f"/api/matches/{m['id']}/result", {"expected_seq": 1, "places": ok})
    assert again.status_code == 409 and again.json["field"] == "$.type"
    stale = player.post(f"/api/matches/{m['id']}/result", {"expected_seq": 0, "places": ok})
    assert stale.status_code == 409 and stale.json["field"] == "expected_seq"


def test_a_tracked_match_takes_the_result_from_an_organiser_only(player, organiser):
    """In a match the phones follow, the result by hand is the organiser's correction
    (docs/rulings.md#the-organisers-result): a player's is refused; the organiser's ends the match, marked so."""
    tracked = player.post("/api/matches", {"game": "richelieu", "players": PLAYERS[:3]}).json
    places = [{"player": "Anna", "place": 1}, {"player": "Bruno", "place": 2}, {"player": "Carla", "place": 3}]
    r = player.post(f"/api/matches/{tracked['id']}/result", {"expected_seq": 0, "places": places})
    assert r.status_code == 403 and r.json["field"] == "$.type"
    r = player.post(f"/api/matches/{tracked['id']}/events", {"type": "result.entered", "expected_seq": 0,
                                                             "data": {"places": places, "correction": True}})
    assert r.status_code == 403  # not by the events endpoint either
    r = organiser.post(f"/api/matches/{tracked['id']}/result", {"expected_seq": 0, "places": places})
    assert r.status_code == 201, r.json
    assert r.json["status"] == "ended" and r.json["event"]["data"]["correction"] is True
    assert r.json["view"]["corrected"] is True and r.json["view"]["result"][0]["player"] == "Anna"
    m = new(player, "richelieu", PLAYERS[:3])
    r = player.post(f"/api/matches/{m['id']}/events", {"type": "turn.end", "data": {}, "expected_seq": 0})
    assert r.status_code == 409 and r.json["field"] == "$.type"


def test_bad_tracking_option_and_viewer(player, api):
    r = player.post("/api/matches", {"game": "richelieu", "players": PLAYERS[:3], "options": {"tracking": "paper"}})
    assert r.status_code == 400 and r.json["field"] == "$.options.tracking"
    r = player.post("/api/matches", {"game": "conquest-italy", "players": PLAYERS,
                                     "options": {"tracking": "result", "clock": True}})
    assert r.status_code == 400 and r.json["field"] == "$.options.clock"
    m = new(player)
    r = api.post(f"/api/matches/{m['id']}/result", {"expected_seq": 0, "places": []})
    assert r.status_code in (401, 403)


def test_openapi_lists_the_endpoint(api):
    doc = api.get("/api/openapi.json").json
    op = doc["paths"]["/api/matches/{match_id}/result"]["post"]
    assert "api.result" in str(op["requestBody"])
