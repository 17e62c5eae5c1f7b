"""The smart dice on the web: the organiser's sets and check, a match's roll through the API with MockDice,
who may do what (docs/dice.md)."""

import pytest

from companion.dice import DiceRadio, MockSource
from tests.dicekit import MockDice, MockDie, conquest_at_combat

RED = [MockDie(0x101 + i, f"Rosso {i + 1}") for i in range(3)]
BLUE = [MockDie(0x201 + i, f"Blu {i + 1}") for i in range(3)]


@pytest.fixture
def kit(app):
    t = app.extensions["companion"].dice
    src = MockSource()
    t.radio = DiceRadio(src, mode="mock", monotonic=t.monotonic).start()
    t.radio.subscribe(t.on_reading)
    k = MockDice(src)
    for d in RED + BLUE:
        k.lie(d, 1)
    return k


def test_only_an_organiser_binds_dice(api, player, organiser, kit):
    for a in (api, player):
        assert a.get("/api/dice").status_code in (401, 403)
        assert a.post("/api/dice/sets", {"name": "x", "dice": []}).status_code in (401, 403)
    state = organiser.get("/api/dice").json
    assert state["radio"]["mode"] == "mock" and {d["die"] for d in state["heard"]} == {d.id for d in RED + BLUE}
    r = organiser.post("/api/dice/sets", {"name": "Tavolo 1", "dice": [{"die": RED[0].id, "side": "attack", "label": "R1"}]})
    assert r.status_code == 201 and r.json["dice"][0]["label"] == "R1"
    bad = organiser.post("/api/dice/sets", {"name": "Tavolo 2", "dice": [{"die": RED[0].id, "side": "side"}]})
    assert bad.status_code == 400 and bad.json["field"] == "$.dice[0].side"
    sid = r.json["id"]
    assert organiser.post(f"/api/dice/sets/{sid}/check").json["checking"] is True
    kit.roll(RED[0], 5)
    assert organiser.get(f"/api/dice/sets/{sid}/check").json["dice"][0]["rolled"] == 5
    after = organiser.get("/api/dice").json["cursor"]
    kit.roll(RED[1], 2)
    assert organiser.get(f"/api/dice/rolled?after={after}").json["dice"] == [RED[1].id]
    assert organiser.delete(f"/api/dice/sets/{sid}").status_code == 200
    assert organiser.delete(f"/api/dice/sets/{sid}").status_code == 404
    assert organiser.get("/dice").status_code == 200


def test_a_combat_through_the_api(app, player, organiser, api, kit, store):
    svc = app.extensions["companion"].service
    mid, attack = conquest_at_combat(svc)
    organiser.post("/api/dice/sets", {"name": "Tavolo 1", "match_id": mid,
                                       "dice": [{"die": d.id, "side": "attack"} for d in RED] +
                                               [{"die": d.id, "side": "defend"} for d in BLUE]})
    info = api.get(f"/api/matches/{mid}/dice").json
    assert info["source"] == "smart" and [d["label"] for d in info["set"]["dice"]][:2] == ["Rosso 1", "Rosso 2"]
    assert info["wait"] is None
    assert api.post(f"/api/matches/{mid}/dice/roll", {"what": "combat", "data": attack}).status_code in (401, 403)
    seq = svc.fold(mid).last_seq
    # each phone playing its own seat, this phone (no seat) does not make the box read the attacker's dice
    assert organiser.put(f"/api/matches/{mid}/phones", {"phones": "own-seat"}).status_code == 200
    r = player.post(f"/api/matches/{mid}/dice/roll", {"what": "combat", "data": attack, "expected_seq": seq})
    assert r.status_code == 403 and r.json["code"] == "own_seat" and r.json["field"] == "$.data.player", r.json
    assert api.get(f"/api/matches/{mid}/dice").json["wait"] is None
    assert organiser.put(f"/api/matches/{mid}/phones", {"phones": "any-seat"}).status_code == 200
    r = player.post(f"/api/matches/{mid}/dice/roll", {"what": "combat", "data": {**attack, "dice": 2}, "expected_seq": seq})
    assert r.status_code == 202 and r.json["need"] == {"attack": 2, "defend": 3}
    stale = player.post(f"/api/matches/{mid}/dice/roll", {"what": "combat", "data": attack, "expected_seq": seq - 1})
    assert stale.status_code == 409
    player.post(f"/api/matches/{mid}/dice/roll", {"what": "combat", "data": {**attack, "dice": 2}, "expected_seq": seq})
    kit.roll(RED[0], 6)
    kit.roll(RED[2], 5)
    for d, f in zip(BLUE, (4, 4, 1)):
        kit.roll(d, f)
    last = store.events(mid)[-1]
    assert last["type"] == "combat" and last["data"]["rolled_by"] == "dice"
    assert last["data"]["attack_dice"] == [6, 5] and last["data"]["defend_dice"] == [4, 4, 1]
    assert api.get(f"/api/matches/{mid}/dice").json["wait"]["state"] == "recorded"
    # a player's undo of it is refused, in words; the organiser's goes through
    r = player.post(f"/api/matches/{mid}/undo", {"expected_seq": last["seq"]})
    assert r.status_code == 403
    assert organiser.post(f"/api/matches/{mid}/undo", {"expected_seq": last["seq"]}).status_code == 201
    assert player.post(f"/api/matches/{mid}/dice/cancel").status_code == 404


def test_a_refused_roll_is_said_in_the_caller_s_language(app, player, organiser, api, kit):
    svc = app.extensions["companion"].service
    mid, attack = conquest_at_combat(svc)
    organiser.post("/api/dice/sets", {"name": "T", "match_id": mid,
                                       "dice": [{"die": RED[0].id, "side": "attack"}, {"die": BLUE[0].id, "side": "defend"}]})
    r = player.post(f"/api/matches/{mid}/dice/roll", {"what": "combat", "data": attack})
    assert r.status_code == 409 and r.json["field"] == "set"  # 3 against 3 needs 6 dice, the set has 2
    r = player.post(f"/api/matches/{mid}/dice/roll?lang=it", {"what": "combat", "data": {**attack, "dice": 1}},
                    headers={"Accept-Language": "it"})
    assert r.status_code == 409 and "inserisci i valori a mano" in r.json["error"]


def test_options_dice_is_checked_when_the_match_is_made(player):
    r = player.post("/api/matches", {"game": "conquest-italy", "players": ["A", "B", "C"], "options": {"dice": "cup"}})
    assert r.status_code == 400 and "dice" in r.json["field"]


def test_nobody_sends_the_dice_mark_themselves(app, player, organiser):
    """rolled_by: "dice" is the box's own mark, like the Pi's: a phone (or a script) that sends it is refused."""
    svc = app.extensions["companion"].service
    mid, attack = conquest_at_combat(svc)
    seq = svc.fold(mid).last_seq
    body = {"type": "combat", "data": {**attack, "attack_dice": [6, 6, 6], "defend_dice": [1, 1, 1], "rolled_by": "dice"},
            "expected_seq": seq}
    for a in (player, organiser):
        r = a.post(f"/api/matches/{mid}/events", body)
        assert r.status_code == 403 and r.json["field"] == "$.data.rolled_by"
    assert svc.fold(mid).last_seq == seq


def test_with_the_dice_off_the_radio_says_so(app, organiser):
    # (the runtime makes the off radio at the first question asked of it: companion/runtime.py OffRadio)
    from companion.dice import attach

    heard = []
    app.extensions["companion"].dice.radio.subscribe(heard.append)  # kept, then given to the radio when made
    state = organiser.get("/api/dice").json
    assert state["radio"] == attach("off", start=False).status() and state["heard"] == []
    assert state["radio"]["mode"] == "off" and state["radio"]["reason"] == "smart dice are off (--dice off)"
    radio = app.extensions["companion"].dice.radio
    assert heard.append in radio._real()._subscribers
    radio.unsubscribe(heard.append)
    assert heard.append not in radio._real()._subscribers
