"""What stays behind a player's screen, on every path (docs/rulings.md#behind-the-screens and
#conquest-hidden-information), tried as tests/stress/test_secrets.py tries the secret objectives: Richelieu's
money and jewels of Anna, and the territory card Anna drew in a conquest match, must not reach Bruno's phone
(seated by the table's QR code), a viewer or the TV page (``?as=viewer``) through the match view, the events
list, the export, the match and club streams, the trackers' endpoints or the error bodies; Anna's own phone
and the organiser see them, and the end of the match turns everything face up."""

from __future__ import annotations

import json
import random

import pytest

from companion.games import conquest_italy as ci
from tests.web.conftest import Api
from tests.web.test_sse import Stream
from tests.web.test_trackers_api import engine, events

LAN = {"REMOTE_ADDR": "192.168.1.50"}
P3 = ["Anna", "Bruno", "Carla"]


@pytest.fixture
def app(store):
    from companion.web.app import create_app

    app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": "13572468",
                      "SSE_HEARTBEAT": 0.05})
    app.config["TRACKER_RNG"] = random.Random(11)
    return app


class Table:
    def post(self, who, type_, data, status=201):
        r = who.post(f"/api/matches/{self.mid}/events", {"type": type_, "data": data,
                                                         "expected_seq": len(events(self.app, self.mid))})
        assert r.status_code == status, r.json
        return r


def seated_table(app, game, options=None) -> Table:
    t = Table()
    t.app = app
    t.org = Api(app.test_client())
    assert t.org.post("/api/auth/pin", {"pin": "246813", "setup_code": "13572468"}).status_code == 200
    r = t.org.post("/api/matches", {"game": game, "players": P3, "options": options or {}})
    assert r.status_code == 201, r.json
    t.mid = r.json["id"]
    url = t.org.get(f"/api/matches/{t.mid}/join").json["url"][len("http://localhost"):]
    t.anna, t.bruno = Api(app.test_client()), Api(app.test_client())
    for n, (phone, name) in enumerate(((t.anna, "Anna"), (t.bruno, "Bruno"))):  # each its own address
        assert phone.c.get(url, environ_base={"REMOTE_ADDR": f"192.168.1.{51 + n}"}).status_code == 303
        assert phone.put(f"/api/matches/{t.mid}/seat", {"player": name}).status_code == 200
    t.viewer = Api(app.test_client())
    return t


# -- Richelieu: money and jewels behind the screens -----------------------------------------------------------

@pytest.fixture
def rl_table(app):
    """Anna has 37 money (a correction) and 3 jewels (she bought one); Bruno's phone and a viewer look on."""
    t = seated_table(app, "richelieu")
    t.post(t.org, "track.adjust", {"player": "Anna", "track": "money", "delta": 45})
    t.post(t.anna, "action", {"player": "Anna", "action": "buy_jewel"})  # -8: 37 money, 3 jewels
    s = engine(app, t.mid).game_state["players"]["Anna"]
    assert (s["money"], s["jewels"]) == (37, 3)
    return t


def rl_hidden(view, me=None):
    """Every other player's money and jewels are hidden in ``view`` (state, standings, the turn's options)."""
    s, sm = view["state"], view["summary"]
    for name, p in s["players"].items():
        if name != me:
            assert p["money"] is None and p["jewels"] is None, (name, p)
    for r in sm["standings"]["players"]:
        if r["player"] != me:
            assert r["money"] is None and r["total"] is None and r["place"] is None and r["breakdown"]["jewels"] is None
    assert sm["standings"]["winners"] == []
    if sm["turn"]["player"] != me:
        assert sm["turn"]["next_public"] is True
    return True


def test_richelieu_match_view(rl_table):
    t = rl_table
    for who, me in ((t.bruno, "Bruno"), (t.viewer, None)):
        assert rl_hidden(who.get(f"/api/matches/{t.mid}").json["view"], me)
    mine = t.anna.get(f"/api/matches/{t.mid}").json["view"]
    assert (mine["state"]["players"]["Anna"]["money"], mine["state"]["players"]["Anna"]["jewels"]) == (37, 3)
    assert mine["state"]["players"]["Bruno"]["money"] is None  # her own only
    anna_row = next(r for r in mine["summary"]["standings"]["players"] if r["player"] == "Anna")
    assert anna_row["breakdown"]["jewels"] == 12 and anna_row["money"] == 37
    full = t.org.get(f"/api/matches/{t.mid}").json["view"]
    assert full["state"]["players"]["Anna"]["money"] == 37 and full["summary"]["standings"]["winners"]
    # what the board shows stays public: prestige, income, military, the city's jewels, the board points
    b = t.bruno.get(f"/api/matches/{t.mid}").json["view"]
    assert b["state"]["players"]["Anna"]["income"] == 1 and b["state"]["city_jewels"] == 1
    assert all(r["board_total"] is not None for r in b["summary"]["standings"]["players"])
    # the list of matches and the room's overview
    for who in (t.bruno, t.viewer):
        txt = json.dumps(who.get("/api/matches").json) + json.dumps(who.get("/api/tournament").json)
        assert '"money"' not in txt and '"standings"' not in txt


def test_richelieu_turn_options_only_on_the_turns_phone(rl_table):
    t = rl_table
    # Anna (37 money) may place on any space; her phone is told what she can afford, Bruno's what the rules allow
    t.post(t.org, "track.adjust", {"player": "Anna", "track": "money", "delta": -36})  # 1 money left
    mine = t.anna.get(f"/api/matches/{t.mid}").json["view"]["summary"]["turn"]
    assert sorted(mine["next"]["place_agent"]["costs"]) == ["0", "1"] and "next_public" not in mine
    other = t.bruno.get(f"/api/matches/{t.mid}").json["view"]["summary"]["turn"]
    assert sorted(other["next"]["place_agent"]["costs"]) == ["0", "1", "2", "3"] and other["next_public"]


def test_richelieu_events_list_and_history(rl_table):
    t = rl_table
    for who, q in ((t.bruno, ""), (t.viewer, ""), (t.org, "?as=viewer"), (t.anna, "?as=viewer")):
        evs = who.get(f"/api/matches/{t.mid}/events{q}").json["events"]
        adj = [e for e in evs if e["type"] == "track.adjust"]
        assert adj and adj[0]["hidden"] == ["delta"] and "delta" not in adj[0]["data"], adj
        assert adj[0]["data"] == {"player": "Anna", "track": "money"}
    evs = t.anna.get(f"/api/matches/{t.mid}/events").json["events"]
    assert [e["data"]["delta"] for e in evs if e["type"] == "track.adjust"] == [45]


def test_richelieu_export(rl_table):
    t = rl_table
    for who in (t.bruno, t.anna, t.viewer):
        r = who.get(f"/api/matches/{t.mid}/export")
        assert r.status_code in (401, 403) and "45" not in r.get_data(as_text=True)
    assert t.org.get(f"/api/matches/{t.mid}/export").status_code == 200


def test_richelieu_streams(rl_table):
    t = rl_table
    for who, q, me in ((t.bruno, "", "Bruno"), (t.org, "&as=viewer", None), (t.anna, "&as=viewer", None)):
        s = Stream(who.c, f"/api/matches/{t.mid}/stream?last_event_id=0{q}")
        try:
            got = s.until(lambda ev, p: any(e[0] == "snapshot" for e in ev))
            assert rl_hidden([e[2] for e in got if e[0] == "snapshot"][0]["view"], me)
            replay = [e[2]["event"] for e in got if e[0] == "event" and e[2]["event"]["type"] == "track.adjust"]
            assert replay and "delta" not in replay[0]["data"]
            # a new correction of Anna's jewels while the stream is open
            t.post(t.org, "track.adjust", {"player": "Anna", "track": "jewels", "delta": -1})
            got = s.until(lambda ev, p: sum(1 for e in ev if e[0] == "event" and "view" in e[2]) >= 1)
            live = [e[2] for e in got if e[0] == "event" and "view" in e[2]][-1]
            assert "delta" not in live["event"]["data"] and rl_hidden(live["view"], me)
        finally:
            s.close()
    c = Stream(t.bruno.c, "/api/stream")
    try:
        c.until(lambda ev, p: any(e[0] == "hello" for e in ev))
        t.post(t.org, "track.adjust", {"player": "Anna", "track": "money", "delta": 3})
        got = c.until(lambda ev, p: any(e[0] == "match" for e in ev))
        assert '"money"' not in json.dumps([e[2] for e in got])
    finally:
        c.close()


def test_richelieu_error_bodies(rl_table):
    t = rl_table
    t.post(t.org, "track.adjust", {"player": "Anna", "track": "money", "delta": -36})  # Anna has 1
    seq = len(events(t.app, t.mid))
    body = {"player": "Anna", "action": "place_agent", "space": 3}
    # Bruno's phone records Anna's placement: refused without the reason, which would tell her money
    r = t.post(t.bruno, "action", body, status=409)
    assert r.json["field"] == "$.data.player" and "money" not in r.json["error"] and "1" not in r.json["error"]
    r = t.bruno.post(f"/api/matches/{t.mid}/events", {"type": "action", "data": body, "expected_seq": seq},
                     headers={"Accept-Language": "it"})
    assert r.status_code == 409 and r.json["error"].startswith("rifiutato per Anna") and "denaro" not in r.json["error"]
    # a correction that would take Anna's jewels below 0 says so to nobody else either
    r = t.post(t.bruno, "track.adjust", {"player": "Anna", "track": "jewels", "delta": -9}, status=409)
    assert "below" not in r.json["error"] and "sotto" not in r.json["error"]
    # Anna's phone and the organiser are told why
    for who in (t.anna, t.org):
        r = t.post(who, "action", body, status=409)
        assert "only 1 money is left" in r.json["error"], r.json
    # a refusal that tells no secret is told to everyone: it is Anna's turn, not Bruno's
    r = t.post(t.bruno, "action", {"player": "Bruno", "action": "income"}, status=409)
    assert "Anna's turn" in r.json["error"]
    assert len(events(t.app, t.mid)) == seq


def test_richelieu_tv_page(rl_table):
    t = rl_table
    # the page carries no state of its own (it loads the viewer's view, tried above): no amount in its HTML
    html = t.org.get(f"/m/{t.mid}/display").get_data(as_text=True)
    assert '"money"' not in html and '"jewels"' not in html and '"players"' not in html


def test_richelieu_the_end_reveals_all(rl_table):
    t = rl_table
    t.post(t.anna, "game.end", {})
    for who in (t.bruno, t.viewer):
        v = who.get(f"/api/matches/{t.mid}").json["view"]
        assert v["state"]["players"]["Anna"]["money"] == 37 and v["state"]["players"]["Anna"]["jewels"] == 3
        assert v["summary"]["standings"]["winners"]
        evs = who.get(f"/api/matches/{t.mid}/events").json["events"]
        assert [e["data"].get("delta") for e in evs if e["type"] == "track.adjust"] == [45]
    assert t.viewer.get(f"/api/matches/{t.mid}/export").status_code == 200


# -- conquest: the territory card Anna drew ---------------------------------------------------------------

@pytest.fixture
def ci_table(app):
    """Anna conquers a city in her first turn and the Pi draws her card at its end; Bruno's turn follows."""
    from tests.web.test_trackers_api import to_play

    t = seated_table(app, "conquest-italy", {"clock": False})
    r = t.org.post(f"/api/matches/{t.mid}/conquest/deal", {"expected_seq": 0, "data": {}})
    assert r.status_code == 201
    to_play(app, t.org, t.mid)
    t.post(t.org, "clock.start", {})
    s = engine(app, t.mid).game_state
    gm = ci.map_of(None)
    src, dst = next((c, n) for c in gm.cities if s["owner"][c] == "Anna" for n in sorted(gm.neighbours[c])
                    if s["owner"][n] != "Anna")
    t.post(t.org, "territory.set", {"city": src, "player": "Anna", "units": 9})
    t.post(t.org, "territory.set", {"city": dst, "player": s["owner"][dst], "units": 1})
    s = engine(app, t.mid).game_state
    due = ci.reinforcements(gm, ci.held(s, "Anna"), ci.units_on_map(s, "Anna"))["placeable"]
    t.post(t.anna, "reinforce", {"player": "Anna", "placements": {src: due}})
    t.post(t.anna, "combat", {"from": src, "to": dst, "attack_dice": [6, 6, 6], "defend_dice": [1]})
    r = t.anna.post(f"/api/matches/{t.mid}/conquest/turn-end",
                    {"expected_seq": len(events(app, t.mid)), "data": {"player": "Anna"}})
    assert r.status_code == 201, r.json
    t.card = events(app, t.mid)[-1]["data"]["card"]
    assert engine(app, t.mid).game_state["hands"]["Anna"] == [t.card]
    # the answer to Anna's own phone names her card
    assert r.json["event"]["data"]["card"] == t.card
    return t


def ci_hidden(t, view, me=None):
    s = view["state"]
    assert "Anna" not in s["hands"] and s["hands_hidden"] is True
    assert t.card not in json.dumps(s["hands"])
    anna = next(p for p in view["summary"]["players"] if p["player"] == "Anna")
    assert anna["cards"] == 1  # how many is public
    return True


def test_conquest_match_view(ci_table):
    t = ci_table
    for who, me in ((t.bruno, "Bruno"), (t.viewer, None)):
        assert ci_hidden(t, who.get(f"/api/matches/{t.mid}").json["view"], me)
    assert t.anna.get(f"/api/matches/{t.mid}").json["view"]["state"]["hands"] == {"Anna": [t.card]}
    assert t.org.get(f"/api/matches/{t.mid}").json["view"]["state"]["hands"]["Anna"] == [t.card]
    for who in (t.org, t.anna):
        assert ci_hidden(t, who.get(f"/api/matches/{t.mid}?as=viewer").json["view"])


def test_conquest_the_card_drawn_during_the_turn(app, ci_table):
    """While Anna's turn is on, the card she drew (card.draw) is named in no other phone's summary."""
    t = ci_table
    # Bruno's turn: he conquers, records his card; Carla's phone (a viewer here) sees a card, not which
    s = engine(app, t.mid).game_state
    gm = ci.map_of(None)
    src, dst = next((c, n) for c in gm.cities if s["owner"][c] == "Bruno" for n in sorted(gm.neighbours[c])
                    if s["owner"][n] != "Bruno")
    t.post(t.org, "territory.set", {"city": src, "player": "Bruno", "units": 9})
    t.post(t.org, "territory.set", {"city": dst, "player": s["owner"][dst], "units": 1})
    s = engine(app, t.mid).game_state
    due = ci.reinforcements(gm, ci.held(s, "Bruno"), ci.units_on_map(s, "Bruno"))["placeable"]
    t.post(t.bruno, "reinforce", {"player": "Bruno", "placements": {src: due}})
    t.post(t.bruno, "combat", {"from": src, "to": dst, "attack_dice": [6, 6, 6], "defend_dice": [1]})
    taken = {c for h in engine(app, t.mid).game_state["hands"].values() for c in h}
    card = next(c for c in gm.cards if c not in taken and c not in s["under"])
    t.post(t.bruno, "card.draw", {"player": "Bruno", "card": card})
    for who in (t.anna, t.viewer):
        v = who.get(f"/api/matches/{t.mid}").json["view"]
        assert v["summary"]["turn"]["card"] is True and v["state"]["turn"]["card"] is True
        last = who.get(f"/api/matches/{t.mid}/events?after={len(events(app, t.mid)) - 1}").json["events"][0]
        assert last["hidden"] == ["card"] and last["data"] == {"player": "Bruno"}
    assert t.bruno.get(f"/api/matches/{t.mid}").json["view"]["summary"]["turn"]["card"] == card


def test_conquest_events_list(ci_table):
    t = ci_table
    for who, q in ((t.bruno, ""), (t.viewer, ""), (t.org, "?as=viewer"), (t.bruno, "?after=3")):
        evs = who.get(f"/api/matches/{t.mid}/events{q}").json["events"]
        ends = [e for e in evs if e["type"] == "turn.end"]
        assert ends and ends[-1]["hidden"] == ["card"] and "card" not in ends[-1]["data"]
        assert ends[-1]["data"]["conquered"] == 1  # the rest of the event is public
    mine = [e for e in t.anna.get(f"/api/matches/{t.mid}/events").json["events"] if e["type"] == "turn.end"]
    assert mine[-1]["data"]["card"] == t.card


def test_conquest_export_and_streams(ci_table):
    t = ci_table
    for who in (t.bruno, t.anna, t.viewer):
        assert who.get(f"/api/matches/{t.mid}/export").status_code in (401, 403)
    for who, q in ((t.bruno, ""), (t.org, "&as=viewer")):
        s = Stream(who.c, f"/api/matches/{t.mid}/stream?last_event_id=0{q}")
        try:
            got = s.until(lambda ev, p: any(e[0] == "snapshot" for e in ev))
            assert ci_hidden(t, [e[2] for e in got if e[0] == "snapshot"][0]["view"])
            ends = [e[2]["event"] for e in got if e[0] == "event" and e[2]["event"]["type"] == "turn.end"]
            assert ends and "card" not in ends[-1]["data"]
            # Bruno reinforces: the live event's view hides Anna's hand too
            s_ = engine(t.app, t.mid).game_state
            due = ci.reinforcements(ci.map_of(None), ci.held(s_, "Bruno"), ci.units_on_map(s_, "Bruno"))["placeable"]
            if s_["turn"]["step"] == "reinforce":
                t.post(t.org, "reinforce", {"player": "Bruno", "placements": {ci.held(s_, "Bruno")[0]: due}})
            else:
                t.post(t.org, "territory.set", {"city": ci.held(s_, "Bruno")[0], "player": "Bruno", "units": 3})
            got = s.until(lambda ev, p: any(e[0] == "event" and "view" in e[2] for e in ev))
            live = [e[2] for e in got if e[0] == "event" and "view" in e[2]][-1]
            assert ci_hidden(t, live["view"])
        finally:
            s.close()


def test_conquest_trackers_and_error_bodies(ci_table):
    t = ci_table
    # the reinforcement calculator tells Anna's hand to Anna's phone only
    assert t.bruno.get(f"/api/matches/{t.mid}/conquest/reinforcements?player=Anna").json["hand"] is None
    assert t.anna.get(f"/api/matches/{t.mid}/conquest/reinforcements?player=Anna").json["hand"] == [t.card]
    # a card in Anna's hand recorded as Bruno's draw: the refusal does not say whose it is
    r = t.post(t.bruno, "card.draw", {"player": "Bruno", "card": t.card}, status=409)
    assert "Anna" not in r.json["error"]
    # the TV page
    html = t.org.get(f"/m/{t.mid}/display").get_data(as_text=True)
    assert '"hands"' not in html


def test_conquest_the_end_reveals_the_cards(ci_table):
    t = ci_table
    t.post(t.org, "objective.completed", {"player": "Bruno"})  # ends the match (no objective recorded)
    assert t.viewer.get(f"/api/matches/{t.mid}").json["view"]["state"]["hands"]["Anna"] == [t.card]
    ends = [e for e in t.bruno.get(f"/api/matches/{t.mid}/events").json["events"] if e["type"] == "turn.end"]
    assert ends[-1]["data"]["card"] == t.card
