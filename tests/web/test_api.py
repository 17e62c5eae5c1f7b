"""Every endpoint of the matches API, through Flask's test client (tests/fakegame.py as richelieu)."""

import json

import pytest

from companion.base.schemas import validate


def new_match(a, game, players=("Anna", "Bruno"), **extra):
    r = a.post("/api/matches", {"game": game, "players": list(players), **extra})
    assert r.status_code == 201, r.json
    return r.json


def test_healthz(api):
    r = api.get("/healthz")
    assert r.status_code == 200
    assert r.json["ok"] is True and r.json["schema_version"] >= 2


def test_games_lists_every_game(api):
    games = api.get("/api/games").json["games"]
    assert [g["id"] for g in games] == sorted(["web-of-power", "conquest-italy", "richelieu", "rome-is-burning"])
    by_id = {g["id"]: g for g in games}
    assert by_id["conquest-italy"]["name"] == "Conquest of Italy" and by_id["conquest-italy"]["clock_default"]
    assert by_id["richelieu"] == {"id": "richelieu", "name": "Richelieu", "available": True, "clock_default": False,
                                  "min_players": 2, "max_players": 4,
                                  "event_types": ["action", "game.end", "intrigue.resolve", "track.adjust", "turn.end"]}


def test_create_match(fake_game, player):
    r = player.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno", "Carla"], "label": "Tavolo 2",
                                     "colours": {"Anna": "#d62728"}, "options": {}})
    assert r.status_code == 201
    m = r.json
    assert r.headers["Location"] == f"/api/matches/{m['id']}"
    assert m["players"] == ["Anna", "Bruno", "Carla"]  # seat order kept
    assert m["label"] == "Tavolo 2" and m["colours"] == {"Anna": "#d62728"}
    assert m["seq"] == 0 and m["status"] == "open"
    assert m["view"]["state"]["points"] == {"Anna": 0, "Bruno": 0, "Carla": 0}


@pytest.mark.parametrize("body, field", [
    ({"game": "chess", "players": ["A", "B"]}, "$.game"),
    ({"game": "richelieu"}, "$"),
    ({"game": "richelieu", "players": []}, "$.players"),
    ({"game": "richelieu", "players": ["A", "A"]}, "$.players"),
    ({"game": "richelieu", "players": ["A", ""]}, "$.players[1]"),
    ({"game": "richelieu", "players": ["A", 7]}, "$.players[1]"),
    ({"game": "richelieu", "players": ["A", "B"], "colours": {"A": "red"}}, "$.colours.A"),
    ({"game": "richelieu", "players": ["A", "B"], "colours": {"Zed": "#000000"}}, "$.colours.Zed"),
    ({"game": "richelieu", "players": ["A", "B"], "options": []}, "$.options"),
    ({"game": "richelieu", "players": ["A", "B"], "turbo": True}, "$"),
    ({"game": "richelieu", "players": ["Solo"]}, "$.players"),  # the game wants 2 or more
    # control characters in no name, label nor colour (a pattern's $ is the text's end, as JSON Schema reads it:
    # Python's own $ let a final newline through, and a name's one non-space character could be a control one)
    ({"game": "richelieu", "players": ["A", "Bo\x1b[2J"]}, "$.players[1]"),
    ({"game": "richelieu", "players": ["A", "Bo\x00"]}, "$.players[1]"),
    ({"game": "richelieu", "players": ["A", "Bo\n"]}, "$.players[1]"),
    ({"game": "richelieu", "players": ["A", "\x01"]}, "$.players[1]"),
    ({"game": "richelieu", "players": ["A", "B"], "label": "Table 1\n"}, "$.label"),
    ({"game": "richelieu", "players": ["A", "B"], "colours": {"A": "#aabbcc\n"}}, "$.colours.A"),
    ([1, 2], "$"),
])
def test_create_match_bad_body_names_the_field(fake_game, player, body, field):
    r = player.post("/api/matches", body)
    assert r.status_code == 400, r.json
    assert r.json["field"] == field
    assert r.json["error"]


@pytest.mark.parametrize("raw", [b"{", b"not json", b"\xff\xfe", b'{"game": "\\ud800"}', b"", b"[" * 5000])
def test_malformed_json_is_400(player, raw):
    r = player.c.post("/api/matches", data=raw, headers={"Origin": "http://localhost",
                                                         "Content-Type": "application/json"})
    assert r.status_code == 400
    assert r.json["field"] == "$"


def test_list_and_get(fake_game, player, api):
    a = new_match(player, fake_game, label="A")
    b = new_match(player, fake_game, label="B")
    player.post(f"/api/matches/{b['id']}/events", {"type": "finish", "expected_seq": 0})
    everything = api.get("/api/matches").json["matches"]
    assert {m["id"] for m in everything} == {a["id"], b["id"]}
    open_ = api.get("/api/matches?status=open").json["matches"]
    assert [m["id"] for m in open_] == [a["id"]]
    assert open_[0]["brief"]["seq"] == 0
    ended = api.get("/api/matches?status=ended").json["matches"]
    assert [m["id"] for m in ended] == [b["id"]] and ended[0]["seq"] == 1
    assert len(api.get("/api/matches?limit=1").json["matches"]) == 1
    r = api.get(f"/api/matches/{a['id']}")
    assert r.status_code == 200 and r.json["label"] == "A" and r.json["view"]["seq"] == 0


@pytest.mark.parametrize("query, field", [("status=closed", "status"), ("limit=0", "limit"), ("limit=x", "limit"),
                                          ("limit=501", "limit")])
def test_list_bad_query(api, query, field):
    r = api.get(f"/api/matches?{query}")
    assert r.status_code == 400 and r.json["field"] == field


def test_unknown_match_is_404(api, player):
    for r in (api.get("/api/matches/nope"), api.get("/api/matches/nope/events"),
              api.get("/api/matches/nope/export"), api.get("/api/matches/nope/stream"),
              player.post("/api/matches/nope/events", {"type": "point", "expected_seq": 0}),
              player.post("/api/matches/nope/undo", {"expected_seq": 0})):
        assert r.status_code == 404, r.json
        assert r.json["field"] == "match_id"


def test_events_append_conflict_and_undo(fake_game, player, api):
    m = new_match(player, fake_game)
    url = f"/api/matches/{m['id']}"
    r = player.post(url + "/events", {"type": "point", "data": {"player": "Anna", "n": 3}, "expected_seq": 0})
    assert r.status_code == 201
    assert r.json["seq"] == 1 and r.json["event"]["type"] == "point"
    assert r.json["view"]["state"]["points"]["Anna"] == 3
    # a second phone still at seq 0: refused, nothing overwritten
    r = player.post(url + "/events", {"type": "point", "data": {"player": "Bruno", "n": 5}, "expected_seq": 0})
    assert r.status_code == 409 and r.json["field"] == "expected_seq"
    assert api.get(url).json["view"]["state"]["points"] == {"Anna": 3, "Bruno": 0}
    # a stale undo is refused too
    assert player.post(url + "/undo", {"expected_seq": 0}).status_code == 409
    r = player.post(url + "/undo", {"expected_seq": 1})
    assert r.status_code == 201 and r.json["seq"] == 2 and r.json["event"]["type"] == "undo"
    assert r.json["view"]["state"]["points"]["Anna"] == 0
    r = player.post(url + "/undo", {"expected_seq": 2})
    assert r.status_code == 409 and r.json["field"] == "$.type"  # nothing left to undo
    events = api.get(url + "/events").json["events"]
    assert [(e["seq"], e["type"]) for e in events] == [(1, "point"), (2, "undo")]
    assert [e["seq"] for e in api.get(url + "/events?after=1").json["events"]] == [2]


@pytest.mark.parametrize("body, status, field", [
    ({"type": "point", "data": {"player": "Zoe"}, "expected_seq": 0}, 400, "$.data.player"),
    ({"type": "point", "data": {"player": "Anna", "n": -1}, "expected_seq": 0}, 400, "$.data.n"),
    ({"type": "teleport", "expected_seq": 0}, 400, "$.type"),
    ({"type": "undo", "expected_seq": 0}, 400, "$.type"),
    ({"type": "point", "data": {"player": "Anna"}}, 400, "$"),
    ({"type": "point", "data": {"player": "Anna"}, "expected_seq": "0"}, 400, "$.expected_seq"),
    ({"type": "point", "data": "Anna", "expected_seq": 0}, 400, "$.data"),
])
def test_bad_events_name_the_field(fake_game, player, body, status, field):
    m = new_match(player, fake_game)
    r = player.post(f"/api/matches/{m['id']}/events", body)
    assert r.status_code == status, r.json
    assert r.json["field"] == field


def test_rule_refusal_is_409(fake_game, player):
    m = new_match(player, fake_game)
    url = f"/api/matches/{m['id']}/events"
    assert player.post(url, {"type": "finish", "expected_seq": 0}).status_code == 201
    r = player.post(url, {"type": "point", "data": {"player": "Anna"}, "expected_seq": 1})
    assert r.status_code == 409 and r.json["field"] == "$.type"
    assert player.get(f"/api/matches/{m['id']}").json["status"] == "ended"


def test_a_bug_is_a_500_with_an_id_in_the_log_never_a_4xx(fake_game, player, monkeypatch, caplog):
    """A game module that crashes is a bug, not the player's mistake: 500 {"error": "internal error", "id"},
    the traceback logged under that id, nothing stored."""
    import logging

    import tests.fakegame as fg

    m = new_match(player, fake_game)

    def boom(state, event):
        raise KeyError("oops")

    original = fg.apply
    monkeypatch.setattr(fg, "apply", boom)
    with caplog.at_level(logging.ERROR, logger="companion.web.app"):
        r = player.post(f"/api/matches/{m['id']}/events", {"type": "point", "expected_seq": 0})
    assert r.status_code == 500 and r.json["error"] == "internal error" and "field" not in r.json
    error_id = r.json["id"]
    logged = [rec for rec in caplog.records if error_id in rec.getMessage()]
    assert logged and logged[0].exc_info is not None and logged[0].exc_info[0] is KeyError
    monkeypatch.setattr(fg, "apply", original)  # (undo() would unregister the fake game too)
    assert player.get(f"/api/matches/{m['id']}").json["seq"] == 0


def test_export_and_import_round_trip(fake_game, player, organiser, api):
    m = new_match(player, fake_game, options={"x": 1})
    url = f"/api/matches/{m['id']}"
    player.post(url + "/events", {"type": "point", "data": {"player": "Bruno", "n": 2}, "expected_seq": 0})
    player.post(url + "/undo", {"expected_seq": 1})
    r = api.get(url + "/export")
    assert r.status_code == 200 and "attachment" in r.headers["Content-Disposition"]
    doc = r.json
    validate("match-export", doc)
    assert [e["type"] for e in doc["events"]] == ["point", "undo"]
    # importing it again under the same id: duplicate
    r = organiser.post("/api/matches/import", doc)
    assert r.status_code == 409 and r.json["field"] == "$.id"
    doc["id"] = "copy-1"
    assert player.post("/api/matches/import", doc).status_code == 403  # players can't import
    r = organiser.post("/api/matches/import", doc)
    assert r.status_code == 201 and r.json == {"imported": "copy-1", "events": 2}
    assert api.get("/api/matches/copy-1").json["view"]["state"]["points"]["Bruno"] == 0


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.pop("players"), "$"),
    (lambda d: d["events"][0].update(seq=5), "$.events[0].seq"),
    (lambda d: d["events"][0]["data"].update(player="Zed"), "$.events[0].data.player"),
    (lambda d: d["events"][1].update(at="yesterday"), "$.events[1].at"),
])
def test_import_refuses_bad_documents_naming_the_path(fake_game, player, organiser, api, mutate, field):
    m = new_match(player, fake_game)
    player.post(f"/api/matches/{m['id']}/events", {"type": "point", "data": {"player": "Anna"}, "expected_seq": 0})
    player.post(f"/api/matches/{m['id']}/events", {"type": "point", "data": {"player": "Anna"}, "expected_seq": 1})
    doc = api.get(f"/api/matches/{m['id']}/export").json
    doc["id"] = "imported"
    mutate(doc)
    r = organiser.post("/api/matches/import", doc)
    assert r.status_code == 400 and r.json["field"] == field, r.json


def test_seat(fake_game, player, api, tokens):
    from tests.web.conftest import Api

    m = new_match(player, fake_game)
    url = f"/api/matches/{m['id']}/seat"
    r = player.put(url, {"player": "Bruno"})
    assert r.status_code == 200 and r.json["seat"] == "Bruno"
    assert player.get("/api/auth/me").json["seats"] == {m["id"]: "Bruno"}
    assert player.put(url, {"player": "Zoe"}).json["field"] == "$.player"
    # the seat is bound: only an organiser frees or moves it (tests/web/test_seats.py)
    r = player.put(url, {"player": None})
    assert r.status_code == 403 and r.json["field"] == "$.player"
    assert player.put(url, {"player": "Anna"}).status_code == 403
    assert api.put(url, {"player": "Anna"}).status_code == 401
    bearer = Api(player.c.application.test_client(), bearer=tokens["player"])
    assert bearer.put(url, {"player": "Anna"}).json["field"] == "Authorization"


def test_tournament_without_runner(fake_game, player, organiser, api):
    a = new_match(player, fake_game, label="T1")
    r = api.get("/api/tournament")
    assert r.status_code == 200 and [t["id"] for t in r.json["tables"]] == [a["id"]]
    assert r.json["clock_runner"] is False
    assert player.post("/api/tournament/round", {"match_ids": [a["id"]]}).status_code == 403
    r = organiser.post("/api/tournament/round", {"match_ids": [a["id"]]})
    assert r.status_code == 409 and r.json["field"] == "$.match_ids[0]"  # no clock in this match
    r = organiser.post("/api/tournament/round", {"match_ids": ["nope"]})
    assert r.status_code == 404 and r.json["field"] == "$.match_ids[0]"
    assert organiser.post("/api/tournament/round", {"match_ids": []}).json["field"] == "$.match_ids"


def test_final_roll_needs_a_clock_match(fake_game, player):
    m = new_match(player, fake_game)
    r = player.post(f"/api/matches/{m['id']}/final-roll", {"expected_seq": 0})
    assert r.status_code == 409 and r.json["field"] == "$"


def test_the_final_roll_of_another_seat_is_refused_where_each_phone_plays_its_own(app, fake_game, organiser, clock):
    """POST /final-roll: the seat that owes the roll is the one the Pi rolls for; in a match set to each phone
    plays its own seat another seat's phone is refused (403, code own_seat), naming the body's player."""
    from tests.web.conftest import Api, join

    m = organiser.post("/api/matches", {"game": fake_game, "players": ["ada", "bo"], "options": {"clock": True}}).json
    url = f"/api/matches/{m['id']}"

    def post(who, path, body):
        return who.post(url + path, {**body, "expected_seq": organiser.get(url).json["seq"]})

    assert post(organiser, "/events", {"type": "clock.start", "data": {"limit_minutes": 1}}).status_code == 201
    clock.advance(61)
    for p in ["ada", "bo", "ada", "bo"]:
        assert post(organiser, "/events", {"type": "turn.end", "data": {"player": p}}).status_code == 201
    assert post(organiser, "/events", {"type": "turn.end", "data": {"player": "ada", "conquered": 1}}).status_code == 201
    assert organiser.put(url + "/phones", {"phones": "own-seat"}).status_code == 200
    bo = Api(app.test_client())
    join(app, bo.c)
    r = bo.c.put(url + "/seat", json={"player": "bo"}, headers={"Origin": "http://localhost"})
    assert r.status_code == 200, r.json
    for body in ({}, {"player": "ada"}):
        r = post(bo, "/final-roll", body)
        assert r.status_code == 403 and r.json["code"] == "own_seat" and r.json["field"] == "$.player", r.json
    r = post(bo, "/final-roll", {"player": "bo"})  # (not the one who owes it: the rules' refusal, same field)
    assert r.status_code == 409 and r.json["field"] == "$.player", r.json


def test_hardware(api):
    assert api.get("/api/hardware").json == {"gpio": None}


def test_a_panel_being_attached_is_said_starting(tmp_path):
    """``companion serve`` answers before its panel is attached: ``/healthz`` and ``/api/hardware`` say
    "starting" then (not null, which is ``--gpio off``), and the panel's status once attached."""
    from companion.runtime import Runtime
    from companion.web.app import create_app

    rt = Runtime.open(db_path=str(tmp_path / "c.db"), runner=None, gpio="mock", panel_later=True, box_time=False)
    try:
        client = create_app(runtime=rt).test_client()
        starting = {"state": "starting", "requested": "mock"}
        assert client.get("/healthz").json["gpio"] == starting
        assert client.get("/api/hardware").json == {"gpio": starting}
        rt.attach_panel()
        assert client.get("/healthz").json["gpio"]["mode"] == "mock"
        assert client.get("/api/hardware").json["gpio"]["mode"] == "mock"
    finally:
        rt.stop()


def test_method_not_allowed_is_json(api):
    r = api.c.delete("/api/matches", headers={"Origin": "http://localhost"})
    assert r.status_code == 405 and r.json["field"] == "method"


def test_body_too_large(player):
    r = player.c.post("/api/matches", data=b"{" + b" " * (3 * 1024 * 1024) + b"}",
                      headers={"Origin": "http://localhost", "Content-Type": "application/json"})
    assert r.status_code == 413 and r.json["error"]


def test_security_headers(api):
    r = api.get("/")
    assert "script-src 'self'" in r.headers["Content-Security-Policy"]
    assert r.headers["X-Frame-Options"] == "DENY"
    assert api.get("/api/matches").headers["Cache-Control"] == "no-store"


def test_lists_of_many_open_matches_do_not_fold_them_again_each_time(app, fake_game, player, api, monkeypatch):
    """The home page and the tournament overview show every open match's state: with more open matches
    than the service kept folded (abandoned ones pile up over a season), each list folded all of them
    again from their logs, seconds per call on a Pi. The service keeps enough folds for the lists."""
    c = app.extensions["companion"]
    ids = [player.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"]}).json["id"]
           for _ in range(40)]
    for mid in ids:
        assert player.post(f"/api/matches/{mid}/events", {"type": "point", "data": {"player": "Anna"},
                                                          "expected_seq": 0}).status_code == 201
    assert api.get("/api/tournament").status_code == 200
    full_loads = []
    events = c.store.events

    def counting(match_id, *a, **kw):
        if not a and not kw:  # a whole log: a fold made from scratch
            full_loads.append(match_id)
        return events(match_id, *a, **kw)

    monkeypatch.setattr(c.store, "events", counting)
    for path in ("/api/tournament", "/api/matches", "/api/tournament"):
        r = api.get(path)
        assert r.status_code == 200
    assert len(r.json["tables"]) == 40 and full_loads == []


def test_a_move_for_another_seat_says_whose_phone_and_own_seat_only_refuses_it(fake_game, player, organiser):
    # docs/rulings.md#playing-for-another-seat
    m = new_match(player, fake_game)
    player.put(f"/api/matches/{m['id']}/seat", {"player": "Bruno"})
    r = player.post(f"/api/matches/{m['id']}/events", {"type": "point", "data": {"player": "Anna"}, "expected_seq": 0})
    assert r.status_code == 201 and r.json["event"]["by"] == {"role": "player", "seat": "Bruno", "for": "Anna"}
    assert player.get(f"/api/matches/{m['id']}/events").json["events"][0]["by"]["for"] == "Anna"
    url = f"/api/matches/{m['id']}/phones"
    assert player.put(url, {"phones": "own-seat"}).status_code == 403  # the organiser's choice
    assert organiser.put(url, {"phones": "anyone"}).json["field"] == "$.phones"
    r = organiser.put(url, {"phones": "own-seat"})
    assert r.status_code == 200 and r.json["options"]["phones"] == "own-seat"
    r = player.post(f"/api/matches/{m['id']}/events", {"type": "point", "data": {"player": "Anna"}, "expected_seq": 1})
    assert r.status_code == 403 and r.json["field"] == "$.data.player" and r.json["code"] == "own_seat"
    assert "Bruno's phone cannot record Anna's move" in r.json["error"]
    r = player.post(f"/api/matches/{m['id']}/events", {"type": "point", "data": {"player": "Bruno"}, "expected_seq": 1})
    assert r.status_code == 201 and "for" not in r.json["event"]["by"]
