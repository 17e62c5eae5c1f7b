"""Web of Power over the API: a final scoring with missing parts (the installed template board) names no
winner and feeds no season; the missing parts posted as a ``scoring.hand`` event end the match with the
complete result, which the season records; a bad entry is a 4xx naming the field; undo re-opens it
(docs/rulings.md, "Web of Power: incomplete scoring")."""

from companion.services import seasons as ss

PLAYERS = ["Anna", "Bruno", "Carla"]


def post(who, mid, type_, data):
    seq = who.get(f"/api/matches/{mid}").json["seq"]
    return who.post(f"/api/matches/{mid}/events", {"type": type_, "data": data, "expected_seq": seq})


def test_missing_parts_entered_through_the_api_end_the_match_and_feed_the_season(organiser, player, store):
    r = organiser.post("/api/clubs", {"name": "Fan Club"})
    assert r.status_code == 201, r.json
    r = organiser.post("/api/seasons", {"club": "Fan Club", "game": "web-of-power", "year": 2026})
    assert r.status_code == 201, r.json
    season = r.json
    r = player.post("/api/matches", {"game": "web-of-power", "players": PLAYERS})
    assert r.status_code == 201, r.json
    mid = r.json["id"]
    # Anna: 4 monasteries and the most councillors in England and Franken; Bruno 4 monasteries in Bayern
    for data in ({"player": "Anna", "piece": "monastery", "country": "England", "count": 2},
                 {"player": "Anna", "piece": "monastery", "country": "Franken", "count": 2},
                 {"player": "Anna", "piece": "councillor", "country": "England"},
                 {"player": "Anna", "piece": "councillor", "country": "Franken"},
                 {"player": "Bruno", "piece": "monastery", "country": "Bayern", "count": 2},
                 {"player": "Bruno", "piece": "monastery", "country": "Bayern", "count": 2}):
        assert post(player, mid, "place", data).status_code == 201
    assert post(player, mid, "deck.out", {}).status_code == 201
    r = post(player, mid, "deck.out", {})
    assert r.status_code == 201, r.json
    summ = r.json["view"]["summary"]
    assert summ["phase"] == "scoring" and summ["winners"] is None
    assert summ["missing"] == {"alliances": list(range(1, 14)), "chains": ["Anna", "Bruno"]}
    match = player.get(f"/api/matches/{mid}").json
    assert match["status"] == "open"
    assert ss.season_matches(store, season["id"]) == []

    # a bad entry: 400 naming the field inside the event's data; nothing stored
    seq = match["seq"]
    r = post(player, mid, "scoring.hand", {"alliances": [{"number": 1, "countries": ["England", "Atlantis"]}]})
    assert r.status_code == 400 and r.json["field"] == "$.data.alliances[0].countries[1]", r.json
    r = post(player, mid, "scoring.hand", {"alliances": [{"number": 1, "players": ["Carla"], "points": 2}]})
    assert r.status_code == 409 and r.json["field"] == "$.data.alliances[0].players[0]", r.json
    r = post(player, mid, "place", {"player": "Carla", "piece": "monastery", "country": "Italien"})
    assert r.status_code == 409 and r.json["field"] == "$.type", r.json
    assert player.get(f"/api/matches/{mid}").json["seq"] == seq

    # part of it: still no winner
    r = post(player, mid, "scoring.hand", {"alliances": [{"number": 1, "countries": ["England", "Franken"]}]})
    assert r.status_code == 201, r.json
    assert r.json["view"]["summary"]["missing"]["alliances"] == list(range(2, 14))
    assert ss.season_matches(store, season["id"]) == []

    # the rest: the match ends, the season gets the complete result
    r = post(player, mid, "scoring.hand", {"alliances": [{"number": n, "players": []} for n in range(2, 14)],
                                           "chains": {"Anna": [4], "Bruno": []}})
    assert r.status_code == 201, r.json
    summ = r.json["view"]["summary"]
    assert summ["phase"] == "ended" and summ["winners"] == ["Anna"]
    anna = next(p for p in summ["scores"]["final"]["players"] if p["player"] == "Anna")
    assert {"kind": "alliance", "number": 1, "countries": ["England", "Franken"], "points": 2, "hand": True} \
        in anna["breakdown"]
    assert player.get(f"/api/matches/{mid}").json["status"] == "ended"
    recorded = ss.season_matches(store, season["id"])
    assert [m["match_id"] for m in recorded] == [mid]
    st = organiser.get(f"/api/seasons/{season['id']}/standings").json
    assert st["standings"][0]["player"] == "Anna"

    # undo re-opens the scoring step and takes the result out of the season
    r = player.post(f"/api/matches/{mid}/undo", {"expected_seq": player.get(f"/api/matches/{mid}").json["seq"]})
    assert r.status_code == 201, r.json
    assert player.get(f"/api/matches/{mid}").json["view"]["summary"]["phase"] == "scoring"
    assert ss.season_matches(store, season["id"]) == []


def test_the_event_type_is_listed_for_the_game(api):
    games = api.get("/api/games").json
    wop = games["games"] if isinstance(games, dict) and "games" in games else games
    entry = next(g for g in wop if (g.get("id") or g.get("game")) == "web-of-power")
    assert "scoring.hand" in entry["event_types"]
