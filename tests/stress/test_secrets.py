"""Secrets on every path: a conquest match in play where Anna's secret objective is two cities she does not
hold, and Bruno's phone (seated by the table's QR code) tries to read or change it through each way the
server answers: the match view, the events list, the export, the match stream and the club stream, the
objective endpoints (read, set, undo), the error bodies, and the TV page's view. The organiser sees
everything, until their session ends: their open stream then shows what a viewer sees."""

from __future__ import annotations

import json
import random

import pytest

from companion.games import conquest_italy as ci
from tests.web.conftest import Api
from tests.web.test_sse import Stream
from tests.web.test_trackers_api import dealt, engine, events, to_play

P3 = ["Anna", "Bruno", "Carla"]
LAN = {"REMOTE_ADDR": "192.168.1.50"}


@pytest.fixture
def app(store):
    from companion.web.app import create_app

    app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": "13572468",
                      "SSE_HEARTBEAT": 0.05})
    app.config["TRACKER_RNG"] = random.Random(7)
    return app


class Table:
    pass


@pytest.fixture
def table(app):
    """The match in play; Anna's and Bruno's phones seated by the table link; Anna's objective set."""
    t = Table()
    t.app = app
    t.org = Api(app.test_client())
    assert t.org.post("/api/auth/pin", {"pin": "246813", "setup_code": "13572468"}).status_code == 200
    t.mid = dealt(app, t.org, {"clock": False})
    to_play(app, t.org, t.mid)
    url = t.org.get(f"/api/matches/{t.mid}/join").json["url"][len("http://localhost"):]
    t.anna, t.bruno = Api(app.test_client()), Api(app.test_client())
    for n, (phone, name) in enumerate(((t.anna, "Anna"), (t.bruno, "Bruno"))):  # each its own address
        assert phone.c.get(url, environ_base={"REMOTE_ADDR": f"192.168.1.{51 + n}"}).status_code == 303
        assert phone.put(f"/api/matches/{t.mid}/seat", {"player": name}).status_code == 200
    s = engine(app, t.mid).game_state
    t.secret = [next(c for c in ci.map_of(None).cities if s["owner"][c] == p) for p in ("Bruno", "Carla")]
    t.post(t.anna, "objective.set", {"player": "Anna", "cities": t.secret})
    t.viewer = Api(app.test_client())
    return t


def _post(self, who, type_, data):
    r = who.post(f"/api/matches/{self.mid}/events", {"type": type_, "data": data,
                                                     "expected_seq": len(events(self.app, self.mid))})
    assert r.status_code == 201, r.json
    return r.json


Table.post = _post


def no_secret(t, text: str) -> bool:
    return not any(c in text for c in t.secret)


def annas(view) -> bool:
    return "Anna" in view["state"]["objectives"] or \
        (view["state"].get("objective_progress") or {}).get("cities") == view["state"]["objectives"].get("Anna")


def test_match_view(table):
    t = table
    for who in (t.bruno, t.viewer):
        doc = who.get(f"/api/matches/{t.mid}").json
        assert "Anna" not in doc["view"]["state"]["objectives"] and "objective_progress" not in doc["view"]["state"]
    assert t.anna.get(f"/api/matches/{t.mid}").json["view"]["state"]["objectives"] == {"Anna": t.secret}
    assert t.org.get(f"/api/matches/{t.mid}").json["view"]["state"]["objectives"] == {"Anna": t.secret}
    # Bruno's phone cannot become Anna's: its seat is bound, and Anna's is taken
    assert t.bruno.put(f"/api/matches/{t.mid}/seat", {"player": "Anna"}).status_code == 403
    other = Api(t.app.test_client())
    other.c.get(t.org.get(f"/api/matches/{t.mid}/join").json["url"][len("http://localhost"):], environ_base=LAN)
    assert other.put(f"/api/matches/{t.mid}/seat", {"player": "Anna"}).status_code == 409
    assert "Anna" not in other.get(f"/api/matches/{t.mid}").json["view"]["state"]["objectives"]


def test_events_list(table):
    t = table
    for q in ("", "?after=0", "?after=1"):
        for who in (t.bruno, t.viewer):
            r = who.get(f"/api/matches/{t.mid}/events{q}")
            obj = [e for e in r.json["events"] if e["type"] == "objective.set"]
            assert obj and obj[0]["hidden"] and obj[0]["data"] == {"player": "Anna"}
            assert no_secret(t, json.dumps([e for e in r.json["events"] if e["type"] == "objective.set"]))
    mine = [e for e in t.anna.get(f"/api/matches/{t.mid}/events").json["events"] if e["type"] == "objective.set"]
    assert mine[0]["data"]["cities"] == t.secret


def test_export(table):
    t = table
    for who in (t.bruno, t.anna, t.viewer):
        r = who.get(f"/api/matches/{t.mid}/export")
        assert r.status_code in (401, 403) and no_secret(t, r.get_data(as_text=True))
    assert t.org.get(f"/api/matches/{t.mid}/export").status_code == 200


def test_match_stream(table):
    t = table
    s = Stream(t.bruno.c, f"/api/matches/{t.mid}/stream?last_event_id=0")
    try:
        got = s.until(lambda ev, p: any(e[0] == "snapshot" for e in ev))
        replay = [e[2]["event"] for e in got if e[0] == "event" and e[2]["event"]["type"] == "objective.set"]
        assert replay and replay[0]["hidden"]
        snap = [e[2] for e in got if e[0] == "snapshot"][0]
        assert "Anna" not in snap["view"]["state"]["objectives"]
        # a new secret event while the stream is open: Anna undoes hers and sets it again
        seq = len(events(t.app, t.mid))
        assert t.anna.post(f"/api/matches/{t.mid}/undo", {"expected_seq": seq}).status_code == 201
        t.post(t.anna, "objective.set", {"player": "Anna", "cities": t.secret})
        got = s.until(lambda ev, p: sum(1 for e in ev if e[0] == "event" and "view" in e[2]) >= 2)
        live = [e[2] for e in got if e[0] == "event" and "view" in e[2]][-2:]
        assert [d["event"]["type"] for d in live] == ["undo", "objective.set"]
        for d in live:
            assert "Anna" not in d["view"]["state"]["objectives"]
        assert live[-1]["event"]["hidden"]
        assert no_secret(t, json.dumps([d["event"] for d in live] + [d["view"]["state"]["objectives"] for d in live]))
        patches = [d["patch"] for d in live if "patch" in d]  # (as sent: test_sse.parse made their views)
        assert patches and no_secret(t, json.dumps(patches))
    finally:
        s.close()


def test_club_stream(table):
    t = table
    s = Stream(t.bruno.c, "/api/stream")
    try:
        s.until(lambda ev, p: any(e[0] == "hello" for e in ev))
        seq = len(events(t.app, t.mid))
        assert t.anna.post(f"/api/matches/{t.mid}/undo", {"expected_seq": seq}).status_code == 201
        t.post(t.anna, "objective.set", {"player": "Anna", "cities": t.secret})
        got = s.until(lambda ev, p: sum(1 for e in ev if e[0] == "match") >= 2)
        assert no_secret(t, json.dumps([e[2] for e in got]))
    finally:
        s.close()


def test_objective_endpoints(table):
    t = table
    # reading: a phone has its own objective only, whatever it asks
    r = t.bruno.get(f"/api/matches/{t.mid}/conquest/objective?player=Anna")
    assert r.json["player"] == "Bruno" and r.json["objective"] is None and no_secret(t, r.get_data(as_text=True))
    assert t.viewer.get(f"/api/matches/{t.mid}/conquest/objective", environ_base=LAN).status_code == 403
    assert t.anna.get(f"/api/matches/{t.mid}/conquest/objective").json["objective"] == t.secret
    # writing another player's objective: refused, nothing stored
    seq = len(events(t.app, t.mid))
    for who in (t.bruno, Api(t.app.test_client())):
        r = who.post(f"/api/matches/{t.mid}/events", {"type": "objective.set", "expected_seq": seq,
                                                      "data": {"player": "Carla", "cities": [t.secret[0]]}})
        assert r.status_code in (401, 403) and len(events(t.app, t.mid)) == seq
    r = t.bruno.post(f"/api/matches/{t.mid}/events", {"type": "objective.set", "expected_seq": seq,
                                                      "data": {"player": "Carla", "cities": [t.secret[0]]}})
    assert r.status_code == 403 and r.json["field"] == "$.data.player"
    # undoing another player's objective: refused (Anna's objective.set is the last event)
    r = t.bruno.post(f"/api/matches/{t.mid}/undo", {"expected_seq": seq})
    assert r.status_code == 403 and no_secret(t, r.get_data(as_text=True))
    assert engine(t.app, t.mid).game_state["objectives"]["Anna"] == t.secret
    # the owner and the organiser may
    t.post(t.org, "objective.set", {"player": "Carla", "cities": [t.secret[1]]})
    assert t.org.post(f"/api/matches/{t.mid}/undo", {"expected_seq": seq + 1}).status_code == 201
    t.post(t.bruno, "objective.set", {"player": "Bruno", "cities": [t.secret[1]]})
    assert t.bruno.post(f"/api/matches/{t.mid}/undo", {"expected_seq": seq + 3}).status_code == 201


def test_error_bodies(table):
    t = table
    seq = len(events(t.app, t.mid))
    r = t.bruno.post(f"/api/matches/{t.mid}/events", {"type": "objective.completed", "expected_seq": seq,
                                                      "data": {"player": "Anna"}})
    assert r.status_code == 409 and r.json["field"] == "$.data.player" and no_secret(t, r.get_data(as_text=True))
    # Anna's own phone and the organiser are told which cities are missing
    for who in (t.anna, t.org):
        r = who.post(f"/api/matches/{t.mid}/events", {"type": "objective.completed", "expected_seq": seq,
                                                      "data": {"player": "Anna"}})
        assert r.status_code == 409 and all(c in r.json["error"] for c in t.secret), r.json
    # a refused objective.set of Anna's names nothing either (it is refused before the rules)
    r = t.bruno.post(f"/api/matches/{t.mid}/events", {"type": "objective.set", "expected_seq": seq,
                                                      "data": {"player": "Anna", "cities": ["Roma"]}})
    assert r.status_code == 403 and no_secret(t, r.get_data(as_text=True))
    assert len(events(t.app, t.mid)) == seq


def test_error_bodies_in_italian(table):
    """In the page's language too: the refusal about Anna's objective names no city to Bruno, in Italian."""
    t = table
    seq = len(events(t.app, t.mid))
    body = {"type": "objective.completed", "expected_seq": seq, "data": {"player": "Anna"}}
    r = t.bruno.post(f"/api/matches/{t.mid}/events", body, headers={"Accept-Language": "it"})
    assert r.status_code == 409 and no_secret(t, r.get_data(as_text=True))
    assert r.json["error"].startswith("rifiutato per Anna: il motivo riguarda il segreto di Anna"), r.json
    r = t.anna.post(f"/api/matches/{t.mid}/events", body, headers={"Accept-Language": "it"})
    assert r.status_code == 409 and r.json["error"].startswith("Anna non ha ") and \
        all(c in r.json["error"] for c in t.secret), r.json


def test_tv_page(table):
    t = table
    # the TV page asks for a viewer's view (?as=viewer): no objective even when an organiser opened it
    for who in (t.org, t.anna):
        doc = who.get(f"/api/matches/{t.mid}?as=viewer").json
        assert doc["view"]["state"]["objectives"] == {} and "objective_progress" not in doc["view"]["state"]
        evs = who.get(f"/api/matches/{t.mid}/events?as=viewer").json["events"]
        assert no_secret(t, json.dumps([e for e in evs if e["type"] == "objective.set"]))
        s = Stream(who.c, f"/api/matches/{t.mid}/stream?as=viewer&last_event_id=0")
        try:
            got = s.until(lambda ev, p: any(e[0] == "snapshot" for e in ev))
            assert [e[2]["view"]["state"]["objectives"] for e in got if e[0] == "snapshot"] == [{}]
            replay = [e[2]["event"] for e in got if e[0] == "event" and e[2]["event"]["type"] == "objective.set"]
            assert replay and replay[0]["hidden"] and no_secret(t, json.dumps(replay))
        finally:
            s.close()
    html = t.org.get(f"/m/{t.mid}/display").get_data(as_text=True)
    assert no_secret(t, html)


@pytest.mark.parametrize("how", ["logout", "ended by another organiser", "bearer token revoked"])
def test_the_organiser_s_stream_stops_showing_secrets_when_the_session_ends(table, how):
    t = table
    headers = None
    ctx = t.app.extensions["companion"]
    if how == "bearer token revoked":
        token, info = ctx.access.create_api_token("organiser")
        headers = {"Authorization": f"Bearer {token}"}
    s = Stream(t.org.c, f"/api/matches/{t.mid}/stream", headers=headers)
    try:
        got = s.until(lambda ev, p: any(e[0] == "snapshot" for e in ev))
        assert [e[2] for e in got if e[0] == "snapshot"][0]["view"]["state"]["objectives"]["Anna"] == t.secret
        t.post(t.bruno, "objective.set", {"player": "Bruno", "cities": [t.secret[0]]})
        got = s.until(lambda ev, p: any(e[0] == "event" for e in ev))
        assert [e[2] for e in got if e[0] == "event"][0]["view"]["state"]["objectives"]["Anna"] == t.secret
        if how == "logout":
            assert t.org.post("/api/auth/logout").status_code == 200
        elif how == "ended by another organiser":
            other = Api(t.app.test_client())
            assert other.post("/api/auth/login", {"pin": "246813"}).status_code == 200
            mine = [x for x in other.get("/api/auth/sessions").json["sessions"]
                    if x["role"] == "organiser" and not x["current"]][0]["id"]
            assert other.delete(f"/api/auth/sessions/{mine}").status_code == 200
        else:
            ctx.access.revoke_api_token(info["id"])
        seq = len(events(t.app, t.mid))
        assert t.bruno.post(f"/api/matches/{t.mid}/undo", {"expected_seq": seq}).status_code == 201
        got = s.until(lambda ev, p: sum(1 for e in ev if e[0] == "event") >= 2)
        last = [e[2] for e in got if e[0] == "event"][-1]
        assert last["view"]["state"]["objectives"] == {} and "objective_progress" not in last["view"]["state"]
    finally:
        s.close()
