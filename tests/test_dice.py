"""The smart dice adapter (companion/dice.py) and one roll's faces (companion/core/dice_roll.py), fed by MockDice:
advertisements built from the published layouts (tests/dicekit.py). No radio, no bleak, no sleep: the time
is a number the test moves."""

import asyncio
import json
import subprocess
import sys
import time

import pytest
from hypothesis import given, strategies as st

from companion import dice
from companion.dice import Advertisement, DiceRadio, MockSource, parse_godice, parse_pixels
from companion.core.dice_roll import RollWait
from tests.dicekit import (D6_PIPPED, D20, FIRMWARE_2023, MockDice, MockDie, godice_stable, godice_tilted,
                           GODICE_XYZ)


class Now:
    def __init__(self, t=1000.0):
        self.t = t

    def __call__(self):
        return self.t


def radio(now=None):
    src = MockSource()
    r = DiceRadio(src, mode="mock", monotonic=now or Now()).start()
    return r, src


# -- the layouts -------------------------------------------------------------------------------------

@given(st.integers(1, 6), st.sampled_from(["rolled", "rolling", "handling", "crooked", "still"]),
       st.integers(0, 100), st.booleans(), st.integers(1, 2 ** 32 - 1), st.sampled_from([0xFFFF, 0x0D39]))
def test_a_pixels_advertisement_reads_back(face, state, battery, charging, pixel_id, company):
    die = MockDie(pixel_id, "Rosso", battery=battery, charging=charging, colorway=3, company=company)
    r = parse_pixels(die.advertisement(state, face, rssi=-71))
    assert (r.die, r.kind, r.name, r.state, r.face) == (f"pixels:{pixel_id:08x}", "pixels", "Rosso", state, face)
    assert (r.battery, r.charging, r.rssi, r.colour, r.die_type) == (battery, charging, -71, "midnightGalaxy", "d6")
    assert r.six_sided


@pytest.mark.parametrize("face", range(1, 7))
def test_old_firmware_faces_and_the_first_format(face):
    old = MockDie(7, "Vecchio", firmware=FIRMWARE_2023)
    assert parse_pixels(old.advertisement("rolled", face)).face == face
    first = MockDie(8, "Primo", legacy=True, battery=60)
    r = parse_pixels(first.advertisement("rolled", face))
    assert (r.face, r.die_type, r.battery, r.state) == (face, "d6", 60, "rolled")


def test_other_dice_and_other_devices():
    assert parse_pixels(MockDie(9, "Pips", die_type=D6_PIPPED, leds=21).advertisement("rolled", 4)).six_sided
    d20 = parse_pixels(MockDie(10, "Venti", die_type=D20, leds=20).advertisement("rolled", 17))
    assert d20.die_type == "d20" and d20.face == 17 and not d20.six_sided
    # a phone, a speaker, a die whose data is not the published layout
    assert parse_pixels(Advertisement("AA", "Phone", -40, {76: b"\x02\x15"}, {}, ("0000fe9f-0000-1000-8000-00805f9b34fb",))) is None
    good = MockDie(11, "X").advertisement("rolled", 3)
    assert parse_pixels(Advertisement(good.address, "X", -50, {}, good.service_data, good.service_uuids)) is None
    assert parse_pixels(Advertisement(good.address, "X", -50, {0xFFFF: b"\x06\x21"}, good.service_data,
                                      good.service_uuids)) is None
    zero = MockDie(0, "Zero").advertisement("rolled", 3)
    assert parse_pixels(zero) is None  # pixel id 0 is no die


def test_an_advertisement_round_trips_through_json():
    adv = MockDie(0xDEADBEEF, "Blu 1").advertisement("rolling", 2)
    assert Advertisement.from_json(json.loads(json.dumps(adv.to_json()))) == adv


@pytest.mark.parametrize("face", range(1, 7))
def test_godice_notifications(face):
    assert parse_godice(godice_stable(face)) == {"state": "rolled", "face": face}
    assert parse_godice(godice_tilted(face)) == {"state": "crooked", "face": face}
    assert parse_godice(b"FS" + bytes(3)) ["state"] == "still"
    assert parse_godice(b"R") == {"state": "rolling"}
    assert parse_godice(b"Bat\x4b") == {"battery": 75}
    assert parse_godice(b"Col\x01") == {"colour": "red"}
    assert parse_godice(b"") == {} and parse_godice(b"?") == {}
    assert dice.godice_face(GODICE_XYZ[face]) == face


# -- the radio ----------------------------------------------------------------------------------------

def test_the_radio_remembers_each_die_and_tells_who_is_out_of_range():
    now = Now()
    r, src = radio(now)
    seen = []
    r.subscribe(lambda reading, at: seen.append((reading.die, reading.state, at)))
    kit = MockDice(src)
    a, b = MockDie(1, "Rosso 1"), MockDie(2, "Blu 1")
    kit.roll(a, 5)
    now.t += 12
    kit.lie(b, 2)
    heard = {d["die"]: d for d in r.heard()}
    assert heard[a.id]["face"] == 5 and heard[a.id]["in_range"] is False and heard[a.id]["ago_s"] == 12
    assert heard[b.id]["in_range"] is True and [d["die"] for d in r.heard()] == [b.id, a.id]
    assert seen[-1] == (b.id, "rolled", now.t) and len(seen) == 6
    # a GoDice: its name in a scan, then what its connection says
    src.feed(Advertisement("D1:CE", "GoDice_R_01", -55, {}, {}, ()))
    src.notify("D1:CE", b"Bat\x40")
    src.notify("D1:CE", b"R")
    got = src.notify("D1:CE", godice_stable(6))
    assert (got.die, got.name, got.state, got.face, got.battery) == ("godice:D1:CE", "GoDice_R_01", "rolled", 6, 64)


def test_the_mock_source_replays_a_file_another_process_appends_to(tmp_path):
    path = tmp_path / "dice.jsonl"
    src = MockSource(str(path))
    r = DiceRadio(src, mode="mock")
    src.start(r, thread=False)
    assert src.read_new() == 0  # no file yet
    kit = MockDice(path)
    die = MockDie(3, "Verde")
    kit.roll(die, 4)
    kit.godice("E1:E2", godice_stable(2))
    with open(path, "a") as fh:
        fh.write("not json\n")
        fh.write('{"adv": {"address"')  # a line still being written: read next time
    assert src.read_new() == 7
    assert r.last(die.id)[0].face == 4 and r.last("godice:E1:E2")[0].face == 2
    with open(path, "a") as fh:
        fh.write(': "x"}}\n')
    assert src.read_new() == 1


class FakeScanner:
    """bleak's BleakScanner as the adapter uses it (a detection callback, start, stop)."""
    instances = []

    def __init__(self, detection_callback=None, fail=None, slow_s=0.0):
        self.cb, self.fail, self.slow_s, self.stopped = detection_callback, fail, slow_s, False
        FakeScanner.instances.append(self)

    async def start(self):
        if self.slow_s:
            await asyncio.sleep(self.slow_s)
        if self.fail:
            raise self.fail

    async def stop(self):
        self.stopped = True


class Device:
    def __init__(self, address, name, rssi=None):
        self.address, self.name, self.rssi = address, name, rssi


class AdvData:
    def __init__(self, adv):
        self.local_name, self.manufacturer_data = adv.name, adv.manufacturer_data
        self.service_data, self.service_uuids = adv.service_data, list(adv.service_uuids)


def test_bleak_s_callbacks_become_readings():
    FakeScanner.instances.clear()
    src = dice.BleakSource(scanner_factory=FakeScanner, client_factory=object)
    r = dice.attach("auto", source=src)
    try:
        assert r.status()["available"] and r.mode == "radio"
        adv = MockDie(0x1234, "Rosso 2").advertisement("rolled", 6)
        FakeScanner.instances[0].cb(Device(adv.address, "ignored", rssi=-66), AdvData(adv))  # rssi on the device (bleak < 0.19)
        got = r.last("pixels:00001234")[0]
        assert (got.face, got.rssi, got.name) == (6, -66, "Rosso 2")
    finally:
        r.close()


class NotAvailable(Exception):
    """bleak's BleakBluetoothNotAvailableError as bleak 3.1 raised it on BlueZ with no adapter (the check's
    hardware boot, make pi-check): its message and a reason code, two arguments."""


NO_ADAPTER = NotAvailable("No Bluetooth adapters found.", 1)


def test_no_bluetooth_adapter_leaves_the_box_without_dice_in_one_sentence():
    def failing(detection_callback=None):
        return FakeScanner(detection_callback, fail=NO_ADAPTER)

    r = dice.attach("auto", source=dice.BleakSource(scanner_factory=failing, client_factory=object))
    st = r.status()
    assert st["mode"] == "off" and not st["available"]
    assert st["reason"].startswith("no Bluetooth LE radio here (No Bluetooth adapters found.):") and "\n" not in st["reason"]


def test_the_server_s_radio_waits_for_an_adapter_that_comes_up_after_it():
    """A Pi's adapter (and bluetoothd) may come up after the service: the server's radio says it waits, tries
    again, and hears the dice once the adapter is there (the check's boot found a radio off for good)."""
    fails = [NO_ADAPTER, NO_ADAPTER]

    def later(detection_callback=None):
        return FakeScanner(detection_callback, fail=fails.pop() if fails else None)

    FakeScanner.instances.clear()
    r = dice.attach("auto", source=dice.BleakSource(scanner_factory=later, client_factory=object), retry_s=0.02)
    try:
        st = r.status()
        assert st["mode"] == "waiting" and not st["available"] and "tries again every 0.02 s" in st["reason"]
        end = time.monotonic() + 10
        while r.status()["mode"] != "radio" and time.monotonic() < end:
            time.sleep(0.01)
        assert r.status()["available"] and len(FakeScanner.instances) == 3
        adv = MockDie(0x77, "Blu 1").advertisement("rolled", 2)
        FakeScanner.instances[-1].cb(Device(adv.address, None), AdvData(adv))
        assert r.last("pixels:00000077")[0].face == 2
    finally:
        r.close()


def test_a_scan_that_does_not_start_in_time_is_tried_again_and_the_late_one_stopped():
    """The check's boot: bluetoothd started by D-Bus at the service's first call, the start took longer than the
    adapter waited, and the radio said it was on with no scan running. A start past START_S is a failure now."""
    slow = [0.5]

    def scanner(detection_callback=None):
        return FakeScanner(detection_callback, slow_s=slow.pop() if slow else 0.0)

    FakeScanner.instances.clear()
    src = dice.BleakSource(scanner_factory=scanner, client_factory=object)
    src.START_S = 0.1
    r = dice.attach("auto", source=src, retry_s=0.05)
    try:
        st = r.status()
        assert st["mode"] == "waiting" and "did not answer within 0.1 s" in st["reason"]
        end = time.monotonic() + 10
        while not (r.status()["mode"] == "radio" and FakeScanner.instances[0].stopped) and time.monotonic() < end:
            time.sleep(0.01)
        assert r.status()["available"] and FakeScanner.instances[0].stopped  # the late scan was not kept
        assert src._scanner is FakeScanner.instances[-1] and not src._scanner.stopped
    finally:
        r.close()


def test_an_rssi_of_127_is_none():
    """127 is HCI's "RSSI not available": BlueZ passes it on (the check's virtual controllers report it)."""
    FakeScanner.instances.clear()
    r = dice.attach("auto", source=dice.BleakSource(scanner_factory=FakeScanner, client_factory=object))
    try:
        adv = MockDie(0x78, "Blu 2").advertisement("rolled", 3)
        data = AdvData(adv)
        data.rssi = 127
        FakeScanner.instances[0].cb(Device(adv.address, None), data)
        assert r.last("pixels:00000078")[0].rssi is None
    finally:
        r.close()


def test_without_bleak_the_radio_is_off_and_says_how_to_install_it():
    pytest.importorskip("companion")
    try:
        import bleak  # noqa: F401
        pytest.skip("bleak is installed here")
    except ImportError:
        pass
    r = dice.attach("auto")
    assert r.mode == "off" and "companion[dice]" in r.status()["reason"]
    # the base install needs no bleak: importing the adapter did not import it
    out = subprocess.run([sys.executable, "-c", "import sys, companion.dice, companion.services.dice; "
                          "print('bleak' in sys.modules)"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- one roll -----------------------------------------------------------------------------------------

RED = [MockDie(0x101 + i, f"Rosso {i + 1}") for i in range(3)]
BLUE = [MockDie(0x201 + i, f"Blu {i + 1}", colorway=4) for i in range(3)]
SET = [{"die": d.id, "side": "attack", "label": d.name} for d in RED] + \
      [{"die": d.id, "side": "defend", "label": d.name} for d in BLUE]


class Feed:
    """A RollWait fed by MockDice through a real radio (the readings the service would get)."""

    def __init__(self, need, timeout_s=30.0):
        self.now = Now()
        self.radio, src = radio(self.now)
        self.kit = MockDice(src)
        self.wait = RollWait(need, SET, self.now(), timeout_s=timeout_s)
        self.radio.subscribe(lambda reading, at: self.wait.feed(reading, at))

    def ago(self, die):
        last = self.radio.last(die)
        return None if last is None else self.now() - last[1]


def test_rolling_then_settled_counts_and_dice_lying_from_before_do_not():
    f = Feed({"attack": 3, "defend": 2})
    for d in RED + BLUE:
        f.kit.lie(d, 6)  # the last roll's sixes, still on the table
    assert f.wait.faces == {"attack": [], "defend": []} and f.wait.state == "waiting"
    f.kit.roll(RED[0], 5)
    f.kit.roll(RED[1], 3)
    f.kit.start_rolling(RED[2])
    assert f.wait.faces["attack"] == [5, 3] and f.wait.view(f.now())["dice"][2]["status"] == "rolling"
    f.kit.land(RED[2], 1)
    f.kit.roll(BLUE[0], 4)
    assert f.wait.state == "waiting"
    f.kit.roll(BLUE[1], 2)
    assert f.wait.state == "complete" and f.wait.faces == {"attack": [5, 3, 1], "defend": [4, 2]}


def test_two_dice_settling_at_once():
    f = Feed({"attack": 2, "defend": 1})
    for d in (RED[0], RED[1], BLUE[0]):
        f.kit.start_rolling(d)
    f.kit.land(RED[1], 6)
    f.kit.land(RED[0], 2)
    f.kit.land(BLUE[0], 6)
    assert f.wait.state == "complete" and f.wait.faces == {"attack": [6, 2], "defend": [6]}


def test_a_die_whose_rolling_went_unheard_counts_by_its_new_face():
    f = Feed({"any": 1})
    f.kit.lie(RED[0], 2)
    f.kit.land(RED[0], 5)  # from 2 to 5 without a "rolling" heard in between
    assert f.wait.faces == {"any": [5]} and f.wait.state == "complete"


def test_a_die_of_another_table_is_ignored_and_a_die_of_the_wrong_side_is_said():
    f = Feed({"attack": 1, "defend": 1})
    other = MockDie(0x999, "Giallo")
    f.kit.roll(other, 6)
    assert f.wait.ignored > 0 and f.wait.faces == {"attack": [], "defend": []}
    f.kit.roll(RED[0], 3)
    f.kit.roll(RED[1], 4)  # the attacker rolls one die only
    notes = f.wait.view(f.now())["notes"]
    assert notes[-1] == {"key": "side_full", "die": "Rosso 2", "side": "attack", "n": 1}
    f2 = Feed({"any": 2})
    f2.kit.roll(RED[0], 1)
    f2.kit.roll(BLUE[0], 2)
    f2.kit.roll(BLUE[1], 3)  # a third die for a two-dice roll is not counted
    assert f2.wait.faces == {"any": [1, 2]} and f2.wait.state == "complete"
    f3 = Feed({"attack": 1})  # a final roll of the attacker's dice only: a defender's die is said
    f3.kit.roll(BLUE[2], 4)
    assert f3.wait.notes[-1] == {"key": "wrong_side", "die": "Blu 3", "side": "defend"}


def test_a_crooked_die_is_rolled_again_and_a_die_moved_after_it_counted_keeps_its_face():
    f = Feed({"attack": 1, "defend": 1})
    f.kit.start_rolling(RED[0])
    f.kit.land(RED[0], 3, state="crooked")
    assert f.wait.notes[-1] == {"key": "crooked", "die": "Rosso 1"} and f.wait.faces["attack"] == []
    f.kit.roll(RED[0], 4)
    assert f.wait.faces["attack"] == [4]
    f.kit.roll(RED[0], 6)
    assert f.wait.faces["attack"] == [4] and f.wait.notes[-1] == {"key": "moved_after", "die": "Rosso 1", "face": 4}


def test_past_the_bound_time_the_missing_dice_are_named_out_of_range_or_not_rolled():
    f = Feed({"attack": 3, "defend": 2}, timeout_s=20)
    f.kit.lie(BLUE[1], 1)  # in range, not rolled
    f.now.t -= 30          # Blu 1 and Rosso 3 were heard long ago, Rosso 2 never
    f.kit.lie(BLUE[0], 1)
    f.kit.lie(RED[2], 1)
    f.now.t += 30
    f.kit.roll(RED[0], 6)
    assert not f.wait.tick(f.now() + 19, f.ago)
    assert f.wait.tick(f.now() + 21, f.ago) and f.wait.state == "timeout"
    missing = {m["die"]: m["why"] for m in f.wait.missing}
    assert missing == {"Rosso 2": "out_of_range", "Rosso 3": "out_of_range", "Blu 1": "out_of_range",
                       "Blu 2": "not_rolled", "Blu 3": "out_of_range"}
    assert f.wait.faces["attack"] == [6]
    f.kit.roll(RED[1], 2)  # too late: the table enters the faces by hand
    assert f.wait.faces["attack"] == [6]


# -- companion dice scan -------------------------------------------------------------------------------

def test_dice_scan_lists_the_dice_heard(run_cli, tmp_path):
    path = tmp_path / "dice.jsonl"
    kit = MockDice(path)
    kit.roll(MockDie(0xA1, "Rosso 1", battery=55), 4)
    kit.lie(MockDie(0xB2, "Blu 1"), 2, state="still")
    kit.send(Advertisement("AA:BB", "GoDice_B_7", -70, {}, {}, ()))
    rc, out, err = run_cli("dice", "scan", "--mock", path)
    assert rc == 0, err
    doc = json.loads(out)
    rows = {d["name"]: d for d in doc["dice"]}
    assert set(rows) == {"Rosso 1", "Blu 1", "GoDice_B_7"}
    assert (rows["Rosso 1"]["face"], rows["Rosso 1"]["state"], rows["Rosso 1"]["battery"]) == (4, "rolled", 55)
    assert rows["Blu 1"]["state"] == "still" and rows["GoDice_B_7"]["kind"] == "godice"


def test_dice_scan_without_bleak_or_bluetooth_says_so_in_one_line(run_cli):
    try:
        import bleak  # noqa: F401
        pytest.skip("bleak is installed here: the radio would be tried")
    except ImportError:
        pass
    rc, out, err = run_cli("dice", "scan", "--seconds", "1")
    assert rc == 2 and out == ""
    assert err.strip().count("\n") == 0 and "companion[dice]" in err
    rc, out, err = run_cli("dice", "scan", "--seconds", "0")
    assert rc == 2 and "--seconds" in err
