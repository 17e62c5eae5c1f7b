"""The smart dice's step of `make pi-check`'s hardware boot (image/pi_bt.py), without qemu: the die's advertisement it
sends is one that companion/dice.py reads back, as BlueZ handed it on in the check's own run; with HW=0 the
step's key is false and says why."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from companion import dice

REPO = Path(__file__).resolve().parent.parent


def _load(name: str):
    sys.path.insert(0, str(REPO / "image"))  # pi_check imports pi_hw, which imports pi_bt, by their names
    try:
        spec = importlib.util.spec_from_file_location(name, REPO / "image" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(REPO / "image"))


pi_bt = _load("pi_bt")


@pytest.mark.parametrize("state,face,battery,charging", [("rolled", 1, 87, False), ("rolling", 4, 100, True),
                                                         ("rolled", 6, 5, False), ("crooked", 3, 50, False)])
def test_the_check_s_die_is_read_back_by_the_box_s_reader(state, face, battery, charging):
    adv, rsp = pi_bt.pixels_ad(0x1234ABCD, "Rosso 1", state, face, battery=battery, charging=charging)
    assert len(adv) <= 31 and len(rsp) <= 31  # legacy advertising: what a Pixels die sends
    got = dice.parse_pixels(pi_bt.advertisement(pi_bt.as_bluez_reads("00:AA:01:01:00:01", adv, rsp)))
    assert (got.die, got.name, got.state, got.face, got.battery, got.charging, got.die_type, got.colour) == \
           ("pixels:1234abcd", "Rosso 1", state, face, battery, charging, "d6", "onyxBlack")


def test_what_bluez_made_of_it_in_the_check_s_run():
    """BlueZ 5.66's org.bluez.Device1 properties of the die 0x101 lying on face 5 (busctl get-property in the
    hardware boot): the properties as_bluez_reads models, so the round trip above is BlueZ's, not ours."""
    adv, rsp = pi_bt.pixels_ad(0x101, "Rosso 1", "rolled", 5)
    props = pi_bt.as_bluez_reads("00:AA:01:01:00:01", adv, rsp)
    assert props["ManufacturerData"] == {65535: bytes([6, 33, 1, 4, 87])}
    assert props["ServiceData"] == {"0000180a-0000-1000-8000-00805f9b34fb": bytes([1, 1, 0, 0, 64, 87, 87, 102])}
    assert props["UUIDs"] == ["a6b90001-7a5a-43f2-a962-350c8edc9b5b"] and props["Name"] == "Rosso 1"


def test_a_name_too_long_for_the_scan_response_is_refused():
    with pytest.raises(ValueError):
        pi_bt.pixels_ad(1, "x" * 30, "rolled", 1)


def test_with_hw_0_the_dice_key_is_false_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPANION_PI_CHECK", str(tmp_path))
    monkeypatch.setenv("COMPANION_PI_CHECK_HW", "0")
    pc = _load("pi_check")
    assert "dice_read_over_bluez" in pc.HW_KEYS and not pc.HW
    monkeypatch.setattr(pc, "install_tools", lambda: "no qemu here (the test's)")
    assert pc.main([]) == 2
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["dice_read_over_bluez"] is False
    assert report["reasons"]["dice_read_over_bluez"] == "not run: HW=0 left the hardware boot out"


def _attack_made(state, who):
    """pi_bt.one_die_attack's pair, with its corrections applied through the engine: checked as an attack of
    one die against one."""
    from companion.games import conquest_italy as ci
    from companion.games.conquest_map import default_map

    gm = default_map()
    a, t, fixes = pi_bt.one_die_attack(state, gm, who)
    for fix in fixes:
        state = ci.apply(state, {"type": "territory.set", "data": fix})
    assert state["owner"][a] == who and state["owner"][t] != who and gm.can_attack(a, t) is not None
    assert state["units"][a] >= 2 and state["units"][t] == 1
    return fixes


@pytest.mark.parametrize("n", [3, 4, 6])
def test_the_dice_step_finds_or_makes_an_attack_of_one_die_against_one_in_any_deal(n):
    """The check's combat is one die a side; the deal is random (a run once found none on the map): over many
    deals the step finds one, corrects nothing where one is there, and where none is (every neighbour of the
    player's strong cities holding more than one unit, the player's border cities one) makes one."""
    import random

    from companion.games import conquest_italy as ci
    from companion.games.conquest_map import default_map

    gm, players = default_map(), ["Anna", "Bruno", "Carla", "Dario", "Elena", "Fabio"][:n]
    for seed in range(40):
        owner, _ = ci.deal(players, gm, random.Random(seed))
        s = ci.apply(ci.initial_state(players, {}), {"type": "setup.deal", "data": {"owner": owner}})
        who = players[seed % n]
        assert _attack_made(s, who)  # (after the deal every city holds one unit: no attack at all yet)
        city = ci.held(s, who)[0]
        s2 = ci.apply(s, {"type": "territory.set", "data": {"city": city, "player": who, "units": 5}})
        if any(s2["owner"][t] != who and gm.can_attack(city, t) is not None for t in gm.cities):
            assert _attack_made(s2, who) == []
        # no city of one unit next to the player: every other player's city holds three
        s3 = s
        for c in gm.cities:
            if s["owner"][c] != who:
                s3 = ci.apply(s3, {"type": "territory.set", "data": {"city": c, "player": s["owner"][c], "units": 3}})
        assert len(_attack_made(s3, who)) == 2
