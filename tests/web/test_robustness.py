"""No request, however malformed, produces a 500: random bodies, paths, headers and query strings."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.games import game_module
from tests.web.conftest import Api

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12)

bodies = st.one_of(
    json_values.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"game": st.sampled_from(["richelieu", "conquest-italy", "rome-is-burning",
                                                    "web-of-power", "x"]),
                           "players": st.lists(st.text(max_size=8), max_size=9)},
                          optional={"options": json_values, "colours": json_values, "label": json_values})
    .map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"type": st.text(max_size=12), "expected_seq": st.integers(-2, 5)},
                          optional={"data": json_values}).map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=64),
)

PATHS = ["/api/matches", "/api/matches/{m}/events", "/api/matches/{m}/undo", "/api/matches/{m}/final-roll",
         "/api/matches/{m}/seat", "/api/matches/import", "/api/tournament/round", "/api/auth/login",
         "/api/auth/pin", "/api/auth/join-tokens", "/api/auth/settings", "/api/auth/logout"]


@settings(max_examples=300, suppress_health_check=list(HealthCheck))
@given(path=st.sampled_from(PATHS), body=bodies, method=st.sampled_from(["POST", "PUT"]))
def test_random_writes_never_500(app, tokens, path, body, method):
    c = app.test_client()
    mid = app.extensions["companion"].store.list_matches(limit=1)
    mid = mid[0]["id"] if mid else "nope"
    for who in (tokens["player"], tokens["organiser"]):
        r = c.open(path.format(m=mid), method=method, data=body,
                   headers={"Authorization": f"Bearer {who}", "Content-Type": "application/json"})
        assert r.status_code < 500, (path, body, r.data)
        if r.status_code >= 400:
            assert "error" in r.get_json()


@settings(max_examples=200, suppress_health_check=list(HealthCheck))
@given(segment=st.text(max_size=30), query=st.text(max_size=30),
       header=st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30))
def test_random_reads_never_500(client, segment, query, header):
    from urllib.parse import quote

    for path in ("/api/matches/" + quote(segment, safe=""), "/api/matches?" + quote(query, safe="=&"),
                 "/m/" + quote(segment, safe=""), "/api/matches/x/events?after=" + quote(query, safe="")):
        r = client.get(path, headers={"Last-Event-ID": header, "Accept-Language": header, "Cookie": "lang=" + header})
        assert r.status_code < 500, (path, r.data)


def test_real_games_with_random_events_never_500(app, tokens):
    """Each real game module, fed odd event data, refuses with a 4xx naming a field."""
    p = Api(app.test_client(), bearer=tokens["player"], origin=None)
    games = p.get("/api/games").json["games"]
    odd = [{}, {"player": 7}, {"player": "Nobody"}, {"player": None, "n": "x"}, {"cities": "Roma"},
           {"dice": [9, -1]}, {"player": "Anna", "cards": [[]]}]
    for g in games:
        if not g["available"]:
            continue
        m = p.post("/api/matches", {"game": g["id"], "players": ["Anna", "Bruno", "Carla"]})
        assert m.status_code == 201, m.json
        for t in g["event_types"]:
            for data in odd:
                r = p.post(f"/api/matches/{m.json['id']}/events",
                           {"type": t, "data": data, "expected_seq": p.get(f"/api/matches/{m.json['id']}").json["seq"]})
                # (403: a phone without that player's seat records no player's secret objective)
                secret = t == "objective.set" and data.get("player") in ("Anna", "Bruno", "Carla")
                # (403: a hand correction of the board is the organiser's, docs/rulings.md#conquest-corrections)
                correction = getattr(game_module(g["id"]), "ORGANISER_EVENTS", {}).get(t, "") is None
                assert r.status_code in ((403,) if secret or correction else (201, 400, 409)), (g["id"], t, data, r.json)
                if r.status_code != 201:
                    assert r.json["error"] and r.json.get("field"), (g["id"], t, data, r.json)


def test_nan_and_infinity_are_not_json(player, fake_game):
    """Python's json reads NaN/Infinity; JSON has no such numbers: the body is refused naming $."""
    m = player.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"]}).json
    for word in ("NaN", "Infinity", "-Infinity"):
        r = player.c.post(f"/api/matches/{m['id']}/events",
                          data='{"type": "point", "data": {"player": "Anna", "n": %s}, "expected_seq": 0}' % word,
                          headers={"Content-Type": "application/json", "Origin": player.origin})
        assert r.status_code == 400 and r.json["field"] == "$" and word.lstrip("-") in r.json["error"], r.json


def test_deep_nesting_and_huge_integers_are_named_in_the_answer(app, tokens):
    """JSON nested 990+ deep or a 5000-digit integer was answered "not valid UTF-8 JSON" (and nesting just
    under Python's recursion limit crashed the schema check with a 500)."""
    c = app.test_client()
    h = {"Authorization": f"Bearer {tokens['organiser']}", "Content-Type": "application/json"}
    for path in ("/api/matches", "/api/matches/import", "/api/auth/login"):
        for n in (150, 975, 990, 20_000):
            r = c.post(path, data='{"players": ' + "[" * n + "]" * n + "}", headers=h)
            assert r.status_code == 400 and "nested too deeply" in r.json["error"], (path, n, r.json)
        r = c.post(path, data='{"players": ' + "9" * 5000 + "}", headers=h)
        assert r.status_code == 400 and "more than 4300 digits" in r.json["error"], (path, r.json)
        assert r.json["field"] == "$"


def test_a_match_refuses_the_line_breaks_the_roster_refuses(player, fake_game):
    """U+0085, U+2028 and U+2029 end a line as CR and LF do: refused in a player's name and the table's label
    of a new match, as in the roster's names (one line on a TV, in a CSV, in the CLI's messages)."""
    for ch in ("\u0085", "\u2028", "\u2029", "\n"):
        r = player.post("/api/matches", {"game": fake_game, "players": ["Anna", f"Bru{ch}no"]})
        assert r.status_code == 400 and r.json["field"] == "$.players[1]", r.json
        r = player.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"], "label": f"Tavolo{ch}3"})
        assert r.status_code == 400 and r.json["field"] == "$.label", r.json
    assert player.post("/api/matches", {"game": fake_game, "players": ["Anna", "Brunò"], "label": "Tavolo 3"}).status_code == 201
