"""The trackers' API (companion/web/trackers.py) through Flask's test client: server-rolled dice and deals
stored as events the engines accept, stale writes refused before anything is rolled, numbers equal to the
engines' (odds, reinforcements, Rome turn scores, Richelieu previews), secrets kept to their owner, every
bad input a 4xx naming the field; and a property test of the conquests counted at a turn end against an
independent count (cities changing hands) over random combats, undos and turn ends. Conquest turns are
played as the rules take them (docs/rulings.md, "Conquest: the turn")."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.games import conquest_italy as ci
from companion.games import conquest_odds as co
from companion.games import richelieu as rl
from companion.games import rome_is_burning as rb
from companion.core.match import fold
from tests.web.conftest import Api, join

P3 = ["Anna", "Bruno", "Carla"]


@pytest.fixture
def seeded(app):
    app.config["TRACKER_RNG"] = random.Random(7)
    return app


def new_match(a, game, players=P3, **options):
    r = a.post("/api/matches", {"game": game, "players": list(players), "options": options})
    assert r.status_code == 201, r.json
    return r.json["id"]


def events(app, mid):
    return app.extensions["companion"].store.events(mid)


def engine(app, mid):
    store = app.extensions["companion"].store
    m = store.get_match(mid)
    return fold(m["game"], m["players"], store.events(mid), m["options"])


def seat(app, player_name):
    c = app.test_client()
    join(app, c)
    return Api(c), player_name


def dealt(seeded, player, game_options=None):
    mid = new_match(player, "conquest-italy", **(game_options or {}))
    r = player.post(f"/api/matches/{mid}/conquest/deal", {"expected_seq": 0, "data": {}})
    assert r.status_code == 201, r.json
    return mid


def to_play(app, player, mid):
    """Finish the set-up placements (5 at a time, all on the first city of each placer)."""
    while True:
        s = engine(app, mid).game_state
        if s["phase"] != "place":
            return s
        p = s["next_placer"]
        city = next(c for c in ci.map_of(None).cities if s["owner"][c] == p)
        seq = len(events(app, mid))
        r = player.post(f"/api/matches/{mid}/events", {"type": "setup.place", "expected_seq": seq,
                                                      "data": {"player": p, "placements": {city: min(5, s["reserve"][p])}}})
        assert r.status_code == 201, r.json


def post_event(app, player, mid, type_, data):
    r = player.post(f"/api/matches/{mid}/events", {"type": type_, "data": data, "expected_seq": len(events(app, mid))})
    assert r.status_code == 201, r.json
    return r.json


def reinforce(app, player, mid):
    """The current player places exactly their reinforcements, all on their first city."""
    s = engine(app, mid).game_state
    p = s["turn"]["player"]
    due = ci.reinforcements(ci.map_of(None), ci.held(s, p), ci.units_on_map(s, p))["placeable"]
    post_event(app, player, mid, "reinforce", {"player": p, "placements": {ci.held(s, p)[0]: due} if due else {}})
    return engine(app, mid).game_state


def to_turn(app, player, mid):
    """Set-up placements, clock.start, then Anna's reinforcements: Anna may attack."""
    to_play(app, player, mid)
    post_event(app, player, mid, "clock.start", {})
    return reinforce(app, player, mid)


def attack(state, player=None):
    gm = ci.map_of(None)
    for c in gm.cities:
        if (player is None or state["owner"][c] == player) and state["units"][c] >= 2:
            for n in sorted(gm.neighbours[c]):
                if state["owner"][n] != state["owner"][c]:
                    return c, n
    return None


# -- conquest ---------------------------------------------------------------------------------------------

def test_conquest_deal_is_stored_as_a_legal_deal(seeded, player):
    mid = dealt(seeded, player)
    (e,) = events(seeded, mid)
    assert e["type"] == "setup.deal"
    gm = ci.map_of(None)
    ci.check_deal(e["data"]["owner"], P3, gm)  # every city, right counts, majority rule kept
    s = engine(seeded, mid).game_state
    assert s["phase"] == "place" and sum(s["units"].values()) == 42
    # dealt again: refused (409) without a second event; a stale writer: 409 on expected_seq
    r = player.post(f"/api/matches/{mid}/conquest/deal", {"expected_seq": 1, "data": {}})
    assert r.status_code == 409 and r.json["field"] == "$.type"
    r = player.post(f"/api/matches/{mid}/conquest/deal", {"expected_seq": 0, "data": {}})
    assert r.status_code == 409 and r.json["field"] == "expected_seq"
    assert len(events(seeded, mid)) == 1


def test_conquest_combat_rolled_by_the_server(seeded, player):
    mid = dealt(seeded, player)
    s = to_turn(seeded, player, mid)
    src, dst = attack(s, "Anna")
    a, d = s["units"][src], s["units"][dst]
    seq = len(events(seeded, mid))
    r = player.post(f"/api/matches/{mid}/conquest/combat", {"expected_seq": seq, "data": {"from": src, "to": dst, "dice": 1}})
    assert r.status_code == 201, r.json
    e = events(seeded, mid)[-1]
    assert e["type"] == "combat" and len(e["data"]["attack_dice"]) == 1
    assert len(e["data"]["defend_dice"]) == min(3, d)
    assert all(1 <= x <= 6 for x in e["data"]["attack_dice"] + e["data"]["defend_dice"])
    lc = r.json["view"]["state"]["last_combat"]
    att_loss, def_loss = co.compare(sorted(e["data"]["attack_dice"], reverse=True), sorted(e["data"]["defend_dice"], reverse=True))
    assert (lc["attacker_losses"], lc["defender_losses"]) == (att_loss, def_loss)
    assert lc["attacker_left"] == a - att_loss


def test_conquest_combat_with_table_dice_and_refusals(seeded, player, api):
    mid = dealt(seeded, player)
    s = to_turn(seeded, player, mid)
    src, dst = attack(s, "Anna")
    one = next(c for c in s["owner"] if s["units"][c] == 1 and s["owner"][c] == "Anna")
    brunos = attack(s, "Bruno")
    seq = len(events(seeded, mid))
    url = f"/api/matches/{mid}/conquest/combat"
    for data, status, field in (
            ({"from": "Atlantis", "to": dst}, 400, "$.data.from"),
            ({"from": one, "to": dst}, 409, "$.data.from"),
            ({"from": src, "to": dst, "dice": 4}, 409, "$.data.dice"),  # more dice than the units allow
            ({"from": src, "to": dst, "attack_dice": [7], "defend_dice": [1]}, 400, "$.data.attack_dice[0]"),
            ({"from": src, "to": src}, 409, "$.data.to"),
            ({"from": brunos[0], "to": brunos[1]}, 409, "$.data.from"),  # Bruno's city in Anna's turn
            ({"from": src, "to": dst, "player": "Bruno"}, 409, "$.data.from")):
        r = player.post(url, {"expected_seq": seq, "data": data})
        assert (r.status_code, r.json.get("field")) == (status, field), (data, r.json)
    assert player.post(url, {"data": {"from": src, "to": dst}}).json["field"] == "$.expected_seq"
    assert player.post(url, {"expected_seq": seq, "data": []}).json["field"] == "$.data"
    assert api.post(url, {"expected_seq": seq, "data": {"from": src, "to": dst}}).status_code == 401
    assert len(events(seeded, mid)) == seq  # nothing stored
    need = min(3, s["units"][dst])
    r = player.post(url, {"expected_seq": seq, "data": {"from": src, "to": dst, "attack_dice": [6], "defend_dice": [1] * need}})
    assert r.status_code == 201
    assert r.json["view"]["state"]["last_combat"]["defender_losses"] == 1


def test_conquest_odds_are_the_engines(seeded, player, api):
    mid = dealt(seeded, player)
    s = to_play(seeded, player, mid)
    src, dst = attack(s)
    r = api.get(f"/api/matches/{mid}/conquest/odds?from={src}&to={dst}")
    assert r.status_code == 200
    b = co.battle(s["units"][src], s["units"][dst])
    assert r.json["p_conquer"] == b["p_conquer"]
    assert r.json["expected_attacker_remaining"] == b["expected_attacker_remaining"]
    assert r.json["attack_dice"] == co.max_attack_dice(s["units"][src])
    r = api.get(f"/api/matches/{mid}/conquest/odds?attacker=10&defender=3&stop_at=2")
    assert r.json["p_conquer"] == co.battle(10, 3, 2)["p_conquer"]
    # whether the battle can be lost or won at all: 125 against 1 rounds to 100% yet can be lost; 1 unit
    # cannot attack, 2 against 125 can still (just) be won
    r = api.get(f"/api/matches/{mid}/conquest/odds?attacker=125&defender=1")
    assert r.json["p_conquer"] > 0.99999 and r.json["can_fail"] is True and r.json["can_win"] is True
    r = api.get(f"/api/matches/{mid}/conquest/odds?attacker=2&defender=125")
    assert r.json["can_win"] is True and r.json["can_fail"] is True
    for q, field in (("from=Atlantis&to=Roma", "from"), ("attacker=0&defender=3", "attacker"),
                     ("attacker=x&defender=3", "attacker"), ("", "from"), ("attacker=5&defender=126", "defender")):
        r = api.get(f"/api/matches/{mid}/conquest/odds?{q}")
        assert (r.status_code, r.json["field"]) == (400, field), q


def test_conquest_reinforcements_are_the_engines(seeded, player, organiser, api):
    mid = dealt(seeded, player)
    s = to_play(seeded, player, mid)
    gm = ci.map_of(None)
    r = api.get(f"/api/matches/{mid}/conquest/reinforcements?player=Bruno")
    assert r.status_code == 200
    want = ci.reinforcements(gm, ci.held(s, "Bruno"), ci.units_on_map(s, "Bruno"))
    assert {k: r.json[k] for k in want} == want
    # a trade needs the cards in the player's hand: Bruno earns three in three turns with a conquest
    cards = [c for c in gm.cities if gm.card_symbol(c) == "basil"][:3]
    q = "".join(f"&trade={c}" for c in cards)
    r = organiser.get(f"/api/matches/{mid}/conquest/reinforcements?player=Bruno{q}")
    assert (r.status_code, r.json["field"]) == (409, "trade[0]")
    # Bruno's cards are his: another phone is told neither his hand nor which card he lacks
    r = api.get(f"/api/matches/{mid}/conquest/reinforcements?player=Bruno{q}")
    assert (r.status_code, r.json["field"]) == (409, "player") and cards[0] not in r.json["error"]
    assert api.get(f"/api/matches/{mid}/conquest/reinforcements?player=Bruno").json["hand"] is None
    post_event(seeded, player, mid, "clock.start", {})
    for c in cards:
        while engine(seeded, mid).game_state["turn"]["player"] != "Bruno":
            pass_turn(seeded, player, mid)
        conquer(seeded, player, mid, organiser)
        r = player.post(f"/api/matches/{mid}/conquest/turn-end",
                        {"expected_seq": len(events(seeded, mid)), "data": {"player": "Bruno", "card": c}})
        assert r.status_code == 201, r.json
    r = api.get(f"/api/matches/{mid}/conquest/reinforcements?player=Bruno{q}")
    s = engine(seeded, mid).game_state
    assert r.json["trade"] == ci.trade_value(cards, frozenset(ci.held(s, "Bruno")), gm)
    assert api.get(f"/api/matches/{mid}/conquest/reinforcements?player=Zed").json["field"] == "player"
    assert api.get(f"/api/matches/{mid}/conquest/reinforcements?player=Bruno&trade=x").json["field"] == "trade"


def test_the_secret_objective_is_its_owners_only(seeded, player, organiser):
    mid = dealt(seeded, player)
    anna, _ = seat(seeded, "Anna")
    bruno, _ = seat(seeded, "Bruno")
    assert anna.get(f"/api/matches/{mid}/conquest/objective").status_code == 403  # no seat yet
    for who, name in ((anna, "Anna"), (bruno, "Bruno")):
        assert who.put(f"/api/matches/{mid}/seat", {"player": name}).status_code == 200
    cities = ["Roma", "Napoli"]
    r = anna.post(f"/api/matches/{mid}/events", {"type": "objective.set", "data": {"player": "Anna", "cities": cities},
                                                "expected_seq": 1})
    assert r.status_code == 201
    mine = anna.get(f"/api/matches/{mid}/conquest/objective").json
    assert mine["objective"] == cities and mine["progress"]["cities"] == cities
    theirs = bruno.get(f"/api/matches/{mid}/conquest/objective").json
    assert theirs == {"player": "Bruno", "objective": None, "progress": None, "may_reset": False,
                      "may_reset_once_confirmed": False}
    assert "Roma" not in str(bruno.get(f"/api/matches/{mid}").json["view"]["state"]["objectives"])
    # the ranking would reveal objective points: after the end only (an organiser may look)
    assert bruno.get(f"/api/matches/{mid}/conquest/ranking").status_code == 409
    assert organiser.get(f"/api/matches/{mid}/conquest/ranking").status_code == 200


def pass_turn(app, player, mid):
    """The current player reinforces and ends the turn without fighting."""
    s = reinforce(app, player, mid)
    post_event(app, player, mid, "turn.end", {"player": s["turn"]["player"]})


def conquer(app, player, mid, organiser):
    """The current player reinforces, then conquers a neighbour (made weak by an organiser's correction) with
    table dice."""
    s = reinforce(app, player, mid)
    me = s["turn"]["player"]
    if attack(s, me) is None:  # no city of theirs with 2 units at a front: a correction makes one
        gm = ci.map_of(None)
        front = next(c for c in gm.cities if s["owner"][c] == me and any(s["owner"][n] != me for n in gm.neighbours[c]))
        post_event(app, organiser, mid, "territory.set", {"city": front, "player": me, "units": 5})
        s = engine(app, mid).game_state
    src, dst = attack(s, me)
    post_event(app, organiser, mid, "territory.set", {"city": dst, "player": s["owner"][dst], "units": 1})
    r = player.post(f"/api/matches/{mid}/conquest/combat", {"expected_seq": len(events(app, mid)), "data": {
        "from": src, "to": dst, "attack_dice": [6], "defend_dice": [1]}})
    assert r.status_code == 201 and r.json["view"]["state"]["last_combat"]["conquered"], r.json
    return src, dst


def test_turn_end_counts_this_turns_conquests_undo_aware(seeded, player, organiser):
    mid = dealt(seeded, player, {"clock": False})
    to_play(seeded, player, mid)
    post_event(seeded, player, mid, "clock.start", {})  # without the clock too, the turns begin here
    s = reinforce(seeded, player, mid)
    src, dst = attack(s, "Anna")
    seq = len(events(seeded, mid))
    # make the target weak, conquer it with table dice, then end the turn: 1 conquest counted
    organiser.post(f"/api/matches/{mid}/events", {"type": "territory.set", "expected_seq": seq,
                                              "data": {"city": dst, "player": s["owner"][dst], "units": 1}})
    r = player.post(f"/api/matches/{mid}/conquest/combat", {"expected_seq": seq + 1,
                                                           "data": {"from": src, "to": dst, "attack_dice": [6], "defend_dice": [1]}})
    assert r.json["view"]["state"]["last_combat"]["conquered"]
    f = engine(seeded, mid)
    assert ci.conquests_this_turn(f.game_state, "Anna") == f.game_state["turn_conquests"] == 1
    assert ci.conquests_this_turn(f.game_state, "Bruno") == 0
    player.post(f"/api/matches/{mid}/undo", {"expected_seq": seq + 2})
    assert ci.conquests_this_turn(engine(seeded, mid).game_state, "Anna") == 0
    # redo the conquest and end the turn through the endpoint: the count is stored, the Pi draws the card
    r = player.post(f"/api/matches/{mid}/conquest/combat", {"expected_seq": seq + 3,
                                                           "data": {"from": src, "to": dst, "attack_dice": [6], "defend_dice": [1]}})
    assert r.status_code == 201, r.json
    r = player.post(f"/api/matches/{mid}/conquest/turn-end", {"expected_seq": seq + 4, "data": {"player": "Anna"}})
    assert r.status_code == 201, r.json
    data = events(seeded, mid)[-1]["data"]
    assert data["conquered"] == 1 and data["card"] in ci.map_of(None).cards
    s = engine(seeded, mid).game_state
    assert s["hands"]["Anna"] == [data["card"]] and s["turn"]["player"] == "Bruno" and s["turn_conquests"] == 0


def test_turn_end_endpoint_with_the_clock(seeded, player):
    mid = dealt(seeded, player)
    to_play(seeded, player, mid)
    seq = len(events(seeded, mid))
    assert player.post(f"/api/matches/{mid}/events", {"type": "clock.start", "data": {}, "expected_seq": seq}).status_code == 201
    r = player.post(f"/api/matches/{mid}/conquest/turn-end", {"expected_seq": seq + 1, "data": {"player": "Anna"}})
    assert (r.status_code, r.json["field"]) == (409, "$.type") and "reinforce" in r.json["error"]
    reinforce(seeded, player, mid)
    seq += 1
    r = player.post(f"/api/matches/{mid}/conquest/turn-end", {"expected_seq": seq + 1, "data": {"player": "Anna"}})
    assert r.status_code == 201, r.json
    assert events(seeded, mid)[-1]["data"] == {"player": "Anna", "conquered": 0}
    assert r.json["view"]["current_player"] == "Bruno"
    r = player.post(f"/api/matches/{mid}/conquest/turn-end", {"expected_seq": seq + 2, "data": {"player": "Anna"}})
    assert (r.status_code, r.json["field"]) == (409, "$.data.player")
    r = player.post(f"/api/matches/{mid}/conquest/turn-end", {"expected_seq": seq + 2, "data": {"player": "Zed"}})
    assert (r.status_code, r.json["field"]) == (400, "$.data.player")


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(st.sampled_from(["win", "lose", "undo", "end"]), min_size=1, max_size=12))
def test_conquests_counted_match_cities_changing_hands(steps):
    """The count the turn end stores equals an independent count: combats in effect since the last turn end
    in effect after which the target city belonged to the current player (and not before)."""
    players = P3
    owner, _ = ci.deal(players, ci.map_of(None), random.Random(3))
    f = fold("conquest-italy", players, [], {"clock": False})
    at = "2026-03-01T20:00:00.000Z"
    rng = random.Random(5)

    def push(e):
        e = {"seq": f.last_seq + 1, "at": at, **e}
        f.apply(e)

    def reinforce_now():
        s = f.game_state
        p = s["turn"]["player"]
        due = ci.reinforcements(ci.map_of(None), ci.held(s, p), ci.units_on_map(s, p))["placeable"]
        push({"type": "reinforce", "data": {"player": p, "placements": {ci.held(s, p)[0]: due} if due else {}}})

    push({"type": "setup.deal", "data": {"owner": owner}})
    while f.game_state["phase"] == "place":
        s = f.game_state
        p = s["next_placer"]
        city = next(c for c in ci.map_of(None).cities if s["owner"][c] == p)
        push({"type": "setup.place", "data": {"player": p, "placements": {city: min(5, s["reserve"][p])}}})
    push({"type": "clock.start", "data": {}})
    reinforce_now()
    for step in steps:
        s = f.game_state
        me = s["turn"]["player"]
        if step == "end":
            push({"type": "turn.end", "data": ci.fill_turn_end(s, {"player": me}, rng)})
            reinforce_now()
            continue
        if step == "undo":
            if f.effective[-1]["type"] == "combat":
                push({"type": "undo", "data": {}})
            continue
        a = attack(s, me)
        if a is None:
            continue
        src, dst = a
        if step == "win":
            push({"type": "territory.set", "data": {"city": dst, "player": s["owner"][dst], "units": 1}})
            push({"type": "combat", "data": {"from": src, "to": dst, "attack_dice": [6], "defend_dice": [1]}})
        else:
            need = min(3, f.game_state["units"][dst])
            push({"type": "combat", "data": {"from": src, "to": dst, "attack_dice": [1], "defend_dice": [6] * need}})
    # independent count over the events in effect after the last turn end
    effective = f.effective
    start = max([i for i, e in enumerate(effective) if e["type"] == "turn.end"], default=-1) + 1
    me = f.game_state["turn"]["player"]
    count = 0
    owners = dict(owner)
    for i, e in enumerate(effective):
        if e["type"] == "territory.set":
            owners[e["data"]["city"]] = e["data"]["player"]
        if e["type"] == "combat":
            before = owners[e["data"]["to"]]
            attacker = owners[e["data"]["from"]]
            dfn = e["data"]["defend_dice"]
            won = e["data"]["attack_dice"] == [6] and dfn == [1]  # the "win" steps: one unit against a 6
            if won:
                owners[e["data"]["to"]] = attacker
            if i >= start and won and before != me and attacker == me:
                count += 1
    assert ci.conquests_this_turn(f.game_state, me) == count
    # the turn.end the endpoint would store carries that count
    assert ci.fill_turn_end(f.game_state, {"player": me}, rng)["conquered"] == count


# -- Rome Is Burning ----------------------------------------------------------------------------------------

def test_rome_catalogue_deal_move_scores(seeded, player, api):
    cat = api.get("/api/games/rome-is-burning/catalogue").json
    assert len(cat["cards"]) == 40 and cat["cards"][0] == {"name": rb.CATALOGUE[0][0], "types": rb.CATALOGUE[0][1]}
    mid = new_match(player, "rome-is-burning")
    r = player.post(f"/api/matches/{mid}/rome/deal", {"expected_seq": 0, "data": {"first": "Bruno"}})
    assert r.status_code == 201, r.json
    spaces = events(seeded, mid)[0]["data"]["spaces"]
    assert len(spaces) == 4 and len({c for cs in spaces.values() for c in cs}) == 8
    assert r.json["view"]["summary"]["to_move"] == "Bruno"
    # a move refused before any roll; then Bruno's roll
    for data, status, field in (({"player": "Anna", "direction": "cw"}, 409, "$.data.player"),
                                ({"player": "Bruno", "direction": "up"}, 400, "$.data.direction"),
                                ({"player": "Zed", "direction": "cw"}, 400, "$.data.player")):
        r = player.post(f"/api/matches/{mid}/rome/move", {"expected_seq": 1, "data": data})
        assert (r.status_code, r.json["field"]) == (status, field), data
    r = player.post(f"/api/matches/{mid}/rome/move", {"expected_seq": 1, "data": {"player": "Bruno", "direction": "ccw"}})
    assert r.status_code == 201
    e = events(seeded, mid)[-1]
    assert e["type"] == "move" and 1 <= e["data"]["die"] <= 6 and e["data"]["direction"] == "ccw"
    assert r.json["view"]["state"]["positions"]["Bruno"] == (-e["data"]["die"]) % 12
    s = engine(seeded, mid).game_state
    got = api.get(f"/api/matches/{mid}/rome/scores").json
    assert got["players"] == rb.turn_scores(s["emperor"], s["hands"])["players"]
    assert player.post(f"/api/matches/{mid}/rome/deal", {"expected_seq": 2, "data": {}}).status_code == 409


# -- Richelieu -------------------------------------------------------------------------------------------------

def test_richelieu_preview_is_the_engines_and_stores_nothing(seeded, player):
    import json
    from pathlib import Path

    mid = new_match(player, "richelieu", players=["blue", "red", "yellow"])
    data = json.loads((Path(__file__).resolve().parents[2] / "schemas/examples/richelieu.events/intrigue-resolve.json")
                      .read_text())["data"]
    r = player.post(f"/api/matches/{mid}/richelieu/preview", {"data": data})
    assert r.status_code == 200, r.json
    s = engine(seeded, mid).game_state
    after = rl.apply(s, {"type": "intrigue.resolve", "data": data})
    assert r.json["result"] == after["resolutions"][-1]
    for name, delta in r.json["changes"].items():
        for k, v in delta.items():
            if k != "sheets":
                assert after["players"][name][k] - s["players"][name][k] == v
    assert r.json["cardinal"] == {"before": s["cardinal"], "after": after["cardinal"]}
    assert events(seeded, mid) == []
    bad = json.loads(json.dumps(data))
    bad["faction_card"]["slots"][0]["value"] = 5
    r = player.post(f"/api/matches/{mid}/richelieu/preview", {"data": bad})
    assert r.status_code == 400 and r.json["field"].startswith("$.data.faction_card.slots[0]")


# -- Web of Power and generic refusals --------------------------------------------------------------------------

def test_wop_board(seeded, player, api):
    from bench.bench_web_of_power import synthetic_board

    board = synthetic_board(4, 3, seed=2)
    mid = new_match(player, "web-of-power", board=board)
    b = api.get(f"/api/matches/{mid}/wop/board").json
    assert b["roads_known"] and len(b["site_order"]) == 12 and b["svg"].startswith("<svg")
    assert b["svg"].count('r="8" fill="#c04030"') == 12  # one mark per site, in site_order
    t = api.get(f"/api/matches/{new_match(player, 'web-of-power')}/wop/board").json
    assert not t["roads_known"] and not t["complete"]


def test_wop_check_says_what_a_placement_would_break_before_it_is_recorded(seeded, player, api):
    """POST .../wop/check: the rules each placement would break (the engine's check_place), nothing stored; a
    placement the event would refuse is marked refused; the list is bounded and named when malformed."""
    mid = new_match(player, "web-of-power")
    for d in ({"player": "Anna", "piece": "monastery", "country": "England"},
              {"player": "Anna", "piece": "councillor", "country": "England"}):
        post_event(seeded, player, mid, "place", d)
    before = len(events(seeded, mid))
    r = player.post(f"/api/matches/{mid}/wop/check", {"data": {"placements": [
        {"player": "Anna", "piece": "monastery", "country": "England"},  # a third piece, in an empty country
        {"player": "Anna", "piece": "monastery", "country": "Franken"},  # a third piece, a second country
        {"player": "Bruno", "piece": "monastery", "country": "Franken"},  # the next player: nothing broken
        {"player": "Carla", "piece": "monastery", "country": "Franken"},  # out of turn
        {"player": "Zed", "piece": "monastery", "country": "Franken"}]}})
    assert r.status_code == 200, r.json
    assert r.json["seq"] == before
    kinds = [[w["kind"] for w in c["warnings"]] for c in r.json["checks"]]
    assert kinds == [["pieces", "empty_councillor"], ["countries", "pieces"], [], ["out_of_turn"], []]
    assert r.json["checks"][1]["warnings"][1]["values"] == {"player": "Anna", "n": 3, "limit": 2}
    assert r.json["checks"][4]["refused"] is True and "refused" not in r.json["checks"][2]
    assert len(events(seeded, mid)) == before  # nothing stored
    # the summary says the turn has no placement left that breaks no rule
    assert engine(seeded, mid).view()["summary"]["turn"]["can_place"] is False
    for bad, field in (({"placements": []}, "$.data.placements"), ({"placements": [{}] * 25}, "$.data.placements"),
                       ({}, "$.data.placements")):
        r = player.post(f"/api/matches/{mid}/wop/check", {"data": bad})
        assert (r.status_code, r.json["field"]) == (400, field)
    other = new_match(player, "rome-is-burning")
    assert player.post(f"/api/matches/{other}/wop/check", {"data": {"placements": [{}]}}).status_code == 404


def test_wrong_game_and_unknown_match(seeded, player, api):
    mid = new_match(player, "rome-is-burning")
    r = api.get(f"/api/matches/{mid}/conquest/odds?attacker=3&defender=1")
    assert (r.status_code, r.json["field"]) == (404, "match_id")
    assert api.get("/api/matches/nope/wop/board").status_code == 404
    r = player.post(f"/api/matches/{mid}/richelieu/preview", {"data": {}})
    assert r.status_code == 404


def test_openapi_lists_the_tracker_paths(api):
    paths = api.get("/api/openapi.json").json["paths"]
    for p in ("/api/matches/{match_id}/conquest/combat", "/api/matches/{match_id}/rome/move",
              "/api/matches/{match_id}/richelieu/preview", "/api/matches/{match_id}/wop/board",
              "/api/matches/{match_id}/wop/check"):
        assert p in paths


def test_conquest_deal_by_the_cards_typed_at_the_table(seeded, player):
    """The table dealt the real cards and typed them: the Pi keeps them, fixing the majority rule with the
    book's random swaps, which the answer and the stored event tell (docs/rulings.md#set-up-and-the-deal)."""
    mid = new_match(player, "conquest-italy")
    gm = ci.map_of(None)
    region = next(r for r in gm.regions if r["name"] == "Sicilia e Calabria")["cities"]
    order = list(reversed(P3))
    owner = {c: order[n % 3] for n, c in enumerate(gm.cities)}
    for c in region:  # Anna got the whole region (5 cities: at most 2)
        if owner[c] != "Anna":
            x = next(x for x in gm.cities if owner[x] == "Anna" and x not in region)
            owner[x], owner[c] = owner[c], "Anna"
    bad = dict(owner, Atlantide="Anna")
    r = player.post(f"/api/matches/{mid}/conquest/deal", {"expected_seq": 0, "data": {"owner": bad}})
    assert r.status_code == 400 and r.json["field"] == "$.data.owner.Atlantide"
    short = {c: p for c, p in owner.items() if c != gm.cities[0]}
    r = player.post(f"/api/matches/{mid}/conquest/deal", {"expected_seq": 0, "data": {"owner": short}})
    assert r.status_code == 400 and r.json["field"] == "$.data.owner" and "missing" in r.json["error"]
    r = player.post(f"/api/matches/{mid}/conquest/deal", {"expected_seq": 0, "data": {"owner": owner}})
    assert r.status_code == 201, r.json
    swaps = r.json["swaps"]
    assert swaps and r.json["event"]["data"]["swaps"] == swaps
    (e,) = events(seeded, mid)
    ci.check_deal(e["data"]["owner"], P3, gm)
    assert {c for c in gm.cities if e["data"]["owner"][c] != owner[c]} <= {c for s in swaps for c in (s["gives"], s["gets"])}
