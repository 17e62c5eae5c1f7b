"""The tables' smart dice (companion/services/dice.py) with the real match service: sets bound to a match,
the "roll each die once" check, a combat, a final roll and a Rome move read from MockDice and recorded
with ``rolled_by: "dice"``, the bound time, and the undo rule of a physical roll."""

import pytest

from companion.dice import DiceRadio, MockSource
from companion.services.dice import DiceTables, check_source
from companion.base.errors import ForbiddenError, InputError, NotFoundError, RuleError
from companion.services.matches import MatchService
from companion.services.policy import Caller
from tests.dicekit import MockDice, MockDie, conquest_at_combat

RED = [MockDie(0x101 + i, f"Rosso {i + 1}") for i in range(3)]
BLUE = [MockDie(0x201 + i, f"Blu {i + 1}", colorway=4) for i in range(3)]
SET = [{"die": d.id, "side": "attack"} for d in RED] + [{"die": d.id, "side": "defend"} for d in BLUE]


class Now:
    def __init__(self):
        self.t = 5000.0

    def __call__(self):
        return self.t


@pytest.fixture
def table(store):
    now = Now()
    src = MockSource()
    radio = DiceRadio(src, mode="mock", monotonic=now).start()
    svc = MatchService(store)
    published = []
    tables = DiceTables(svc, store, radio, publish=lambda mid, kind, view: published.append((mid, kind, view)),
                        monotonic=now, timeout_s=30)
    kit = MockDice(src)
    for d in RED + BLUE:
        kit.lie(d, 1)  # the dice are on the table, heard by the box
    return {"svc": svc, "tables": tables, "kit": kit, "now": now, "published": published, "radio": radio,
            "src": src}


def bound(t, mid):
    return t["tables"].save_set({"name": "Tavolo 1", "dice": SET, "match_id": mid})


def test_a_set_binds_dice_to_sides_with_their_names(table, store):
    t = table
    s = t["tables"].save_set({"name": "Tavolo 1", "dice": SET})
    assert [d["label"] for d in s["dice"]] == ["Rosso 1", "Rosso 2", "Rosso 3", "Blu 1", "Blu 2", "Blu 3"]
    assert t["tables"].sets() == [s] and store.get_setting("dice.sets") == [s]  # kept across a restart
    with pytest.raises(InputError) as e:
        t["tables"].save_set({"name": "x", "dice": SET[:1] + SET[:1]})
    assert e.value.field == "$.dice[1].die"
    with pytest.raises(InputError):
        t["tables"].save_set({"name": "x", "dice": [{"die": RED[0].id, "side": "left"}]})
    with pytest.raises(InputError):
        t["tables"].save_set({"name": "x", "dice": [{"die": MockDie(0x300 + i, "y").id, "side": "attack"} for i in range(4)]})
    with pytest.raises(RuleError) as e:  # a die is in one set
        t["tables"].save_set({"name": "Tavolo 2", "dice": SET[:1]})
    assert "Rosso 1" in str(e.value) and "Tavolo 1" in str(e.value)
    with pytest.raises(InputError):
        t["tables"].save_set({"name": " ", "dice": []})
    with pytest.raises(NotFoundError):
        t["tables"].delete_set("nope")
    t["tables"].delete_set(s["id"])
    assert t["tables"].sets() == []


def test_roll_each_die_once(table):
    t = table
    s = t["tables"].save_set({"name": "Tavolo 1", "dice": SET})
    v = t["tables"].start_check(s["id"])
    assert v["checking"] and not v["done"] and all(r["rolled"] is None and r["in_range"] for r in v["dice"])
    for i, d in enumerate(RED + BLUE):
        t["kit"].roll(d, i + 1)
    v = t["tables"].check_view(s["id"])
    assert v["done"] and [r["rolled"] for r in v["dice"]] == [1, 2, 3, 4, 5, 6]


def test_a_combat_read_from_the_dice(table, store):
    t = table
    mid, attack = conquest_at_combat(t["svc"])
    bound(t, mid)
    seq = t["svc"].fold(mid).last_seq
    v = t["tables"].start_roll(mid, "combat", dict(attack), expected_seq=seq)
    assert v["state"] == "waiting" and v["need"] == {"attack": 3, "defend": 3}
    assert t["svc"].fold(mid).last_seq == seq  # nothing recorded yet
    for d, face in zip(RED, (6, 2, 4)):
        t["kit"].roll(d, face)
    t["kit"].roll(BLUE[0], 5)
    t["kit"].start_rolling(BLUE[1])
    t["kit"].start_rolling(BLUE[2])
    t["kit"].land(BLUE[2], 1)
    t["kit"].land(BLUE[1], 3)  # two defender dice settle at once
    events = store.events(mid)
    last = events[-1]
    assert last["type"] == "combat" and last["data"]["rolled_by"] == "dice"
    assert last["data"]["attack_dice"] == [6, 2, 4] and last["data"]["defend_dice"] == [5, 1, 3]
    assert (last["data"]["from"], last["data"]["to"]) == (attack["from"], attack["to"])
    done = t["published"][-1]
    assert done[1] == "dice" and done[2]["state"] == "recorded" and done[2]["event_seq"] == last["seq"]
    assert t["tables"].wait_view(mid)["state"] == "recorded"
    # every change went to the live pages: the rolling dice, each face
    states = [p[2]["state"] for p in t["published"] if p[0] == mid]
    assert states[0] == "bound"  # binding the set told the table's pages
    assert states[1] == "waiting" and states.count("waiting") >= 6
    # a physical roll is undone by an organiser only, like the Pi's
    with pytest.raises(ForbiddenError):
        t["svc"].undo(mid, by=Caller("player"))
    t["svc"].undo(mid)  # the organiser's (the default)
    assert store.events(mid)[-1]["type"] == "undo"


def test_a_roll_that_cannot_be_is_refused_before_it_waits(table):
    t = table
    mid, attack = conquest_at_combat(t["svc"])
    with pytest.raises(RuleError) as e:  # no set bound yet
        t["tables"].start_roll(mid, "combat", dict(attack))
    assert e.value.field == "set"
    bound(t, mid)
    with pytest.raises(RuleError):  # not the attacker's city
        t["tables"].start_roll(mid, "combat", {**attack, "from": attack["to"], "to": attack["from"]})
    with pytest.raises(InputError):
        t["tables"].start_roll(mid, "combat", {**attack, "dice": 4})
    with pytest.raises(RuleError):  # nobody owes a final roll
        t["tables"].start_roll(mid, "final-roll", {})
    other, _ = conquest_at_combat(t["svc"], options={"dice": "pi"})
    with pytest.raises(RuleError):  # the Pi rolls this match's dice
        t["tables"].start_roll(other, "combat", dict(attack))
    with pytest.raises(InputError):
        check_source({"dice": "cup"})


def test_a_phone_starts_only_its_own_seat_s_roll_where_each_phone_plays_its_own(table, store):
    """The table's dice read for a seat's move are that seat's move: in a match set to each phone plays its own
    seat another seat's phone does not make the box wait for them (403, code own_seat: nothing waits), the
    seat's own phone and an organiser do (docs/rulings.md#playing-for-another-seat)."""
    t = table
    mid, attack = conquest_at_combat(t["svc"])
    bound(t, mid)
    t["svc"].set_phones(mid, "own-seat")
    other = next(p for p in ("Anna", "Bruno", "Carla") if p != attack["player"])
    plain = {k: v for k, v in attack.items() if k != "player"}  # (a combat names its attacker by its city)
    for data in (dict(attack), plain):
        with pytest.raises(ForbiddenError) as e:
            t["tables"].start_roll(mid, "combat", data, by=Caller("player", other, phone=True))
        assert e.value.code == "own_seat", e.value
    assert t["tables"].wait_view(mid) is None or t["tables"].wait_view(mid)["state"] != "waiting"
    with pytest.raises(ForbiddenError):  # a phone with no seat
        t["tables"].start_roll(mid, "combat", plain, by=Caller("player", phone=True))
    v = t["tables"].start_roll(mid, "combat", plain, by=Caller("player", attack["player"], phone=True))
    assert v["state"] == "waiting"
    t["tables"].cancel(mid)
    assert t["tables"].start_roll(mid, "combat", plain)["state"] == "waiting"  # the organiser's (the default)


def test_a_die_that_does_not_land_in_time_is_named_and_nothing_is_recorded(table, store):
    t = table
    mid, attack = conquest_at_combat(t["svc"])
    bound(t, mid)
    t["tables"].start_roll(mid, "combat", {**attack, "dice": 2})
    t["kit"].roll(RED[0], 6)
    t["kit"].roll(RED[1], 6)
    t["kit"].roll(BLUE[0], 1)
    t["kit"].roll(BLUE[1], 1)
    t["now"].t += 29
    t["tables"].tick()
    assert t["tables"].wait_view(mid)["state"] == "waiting"
    t["now"].t += 2
    t["tables"].tick()
    v = t["tables"].wait_view(mid)
    assert v["state"] == "timeout" and v["faces"] == {"attack": [6, 6], "defend": [1, 1]}
    assert [m["die"] for m in v["missing"]] == ["Blu 3"]
    assert store.events(mid)[-1]["type"] != "combat"


def test_a_roll_the_match_moved_past_is_refused_in_words(table, store):
    t = table
    mid, attack = conquest_at_combat(t["svc"])
    bound(t, mid)
    t["tables"].start_roll(mid, "combat", {**attack, "dice": 1})
    t["svc"].append(mid, "clock.pause", {})  # someone recorded something meanwhile
    t["kit"].roll(RED[0], 6)
    for d in BLUE:
        t["kit"].roll(d, 2)
    v = t["tables"].wait_view(mid)
    assert v["state"] == "refused" and v["error"]["field"] == "expected_seq"
    assert store.events(mid)[-1]["type"] == "clock.pause"


def test_cancel(table):
    t = table
    mid, attack = conquest_at_combat(t["svc"])
    bound(t, mid)
    t["tables"].start_roll(mid, "combat", dict(attack))
    assert t["tables"].cancel(mid)["state"] == "cancelled"
    assert t["tables"].cancel(mid) is None
    t["kit"].roll(RED[0], 6)
    assert t["tables"].wait_view(mid)["state"] == "cancelled"


def test_a_rome_move_and_a_final_roll(table, store):
    import random

    from companion.games import rome_is_burning as rib

    t = table
    svc = t["svc"]
    m = svc.create("rome-is-burning", ["Anna", "Bruno", "Carla"], {"dice": "smart"})
    mid = m["id"]
    t["tables"].save_set({"name": "Roma", "dice": SET[:2], "match_id": mid})
    svc.append(mid, "turn.setup", rib.deal(svc.fold(mid).game_state, random.Random(2)))
    s = svc.fold(mid).game_state
    who = s["players"][s["current"]]
    v = t["tables"].start_roll(mid, "move", {"player": who, "direction": "cw"})
    assert v["need"] == {"any": 1}
    t["kit"].roll(RED[1], 4)
    last = store.events(mid)[-1]
    assert last["type"] == "move" and last["data"] == {"player": who, "direction": "cw", "die": 4, "rolled_by": "dice"}
    with pytest.raises(ForbiddenError):
        svc.undo(mid, by=Caller("player"))
