"""The GPIO panel, driven through gpiozero's MockFactory: buttons -> core commands, clock -> LEDs/buzzer.

No test sleeps for real time: press lengths come from an injected monotonic clock, match time from
the FakeClock, buzzer patterns play inline with a no-op sleep. One test lets gpiozero's own hold
thread fire with a very short hold time (waiting on an event, never asserting a duration).
"""

import json
import logging
import re
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion import gpio
from companion.base.notices import Notice
from companion.services.clockrunner import ClockRunner
from companion.base.errors import InputError
from companion.gpio import LEDS, PATTERNS, PHYSICAL_PIN, attach, check_pin_map, led_for, load_pin_map
from companion.services.matches import MatchService

PLAYERS = ["Ada", "Bo", "Cy"]
DEFAULT = {"buttons": {"next": 17, "pause": 27, "roll": 22}, "leds": {"green": 5, "amber": 6, "red": 13},
           "buzzer": {"pin": 26}}


class Dice:
    """An RNG whose ``randint`` returns the given faces in order (for the final-round roll)."""

    def __init__(self, *faces):
        self.faces = list(faces)

    def randint(self, a, b):
        v = self.faces.pop(0)
        assert a <= v <= b
        return v


class Ticker:
    """Injected monotonic clock for press lengths."""

    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


class Table:
    """A store, the match service, the clock runner and a mock box around them."""

    def __init__(self, store, clock, dice=None, pin_map=None, mode="mock", runner=True):
        self.store, self.clock = store, clock
        self.service = MatchService(store)
        self.runner = ClockRunner(self.service, store, clock=clock, rng=dice or Dice()) if runner else None
        self.ticker = Ticker()
        self.told = []
        self.panel = attach(self.service, self.runner, mode, pin_map=pin_map, monotonic=self.ticker,
                          sleep=lambda s: None, sync_sound=True)
        self.panel.subscribe(lambda n: self.told.append((n.kind, n.payload)))

    def new_match(self, options=None, players=PLAYERS):
        return self.service.create("richelieu", players, {"clock": True, **(options or {})})["id"]

    def start(self, minutes=120, options=None):
        mid = self.new_match(options)
        self.runner.start_clock(mid, minutes)
        return mid

    def pin(self, bcm):
        return self.panel.factory.pin(bcm)

    def press(self, button, seconds=0.1):
        pin = self.pin(self.panel.pin_map.buttons[button])
        pin.drive_low()
        self.ticker.t += seconds
        pin.drive_high()

    def lit(self):
        """Which LEDs are on, read from the mock pins themselves."""
        return {name for name in LEDS if self.pin(self.panel.pin_map.leds[name]).state}

    def buzzer_beeps(self):
        return sum(1 for s in self.pin(self.panel.pin_map.buzzer).states[1:] if s.state)

    def view(self, mid):
        return self.service.state(mid)

    def types(self, mid):
        return [e["type"] for e in self.store.events(mid)]

    def advance(self, seconds):
        self.clock.advance(seconds)
        return self.runner.tick()


@pytest.fixture
def table(store, clock, fake_game):
    t = Table(store, clock)
    yield t
    t.panel.close()


# -- pin map ---------------------------------------------------------------------------------------

def test_default_pin_map_loads_and_its_comments_name_the_right_physical_pins():
    pm = load_pin_map()
    assert pm.buttons == DEFAULT["buttons"] and pm.leds == DEFAULT["leds"] and pm.buzzer == 26
    assert (pm.bounce_s, pm.long_press_s, pm.undo_hold_s) == (0.05, 0.8, 2.0)
    text = gpio.default_pins_path().read_text()
    seen = 0
    for key, bcm, phys in re.findall(r"^(\w+)\s*=\s*(\d+)\s*#\s*physical pin (\d+)", text, re.M):
        assert PHYSICAL_PIN[int(bcm)] == int(phys), key
        seen += 1
    assert seen == 7


def test_physical_pin_table_is_a_bijection_onto_header_pins():
    assert len(set(PHYSICAL_PIN.values())) == len(PHYSICAL_PIN)
    assert set(PHYSICAL_PIN) == set(range(2, 28))
    assert not set(PHYSICAL_PIN.values()) & set(gpio.GROUND_PINS)
    assert all(1 <= p <= 40 for p in PHYSICAL_PIN.values())


@pytest.mark.parametrize("change, field", [
    (lambda d: d["buttons"].update(next=5), "leds.green"),  # green reuses 5 after next took it
    (lambda d: d["leds"].update(red=1), "leds.red"),
    (lambda d: d["leds"].update(red=28), "leds.red"),
    (lambda d: d["leds"].update(red=True), "leds.red"),
    (lambda d: d["leds"].update(red="13"), "leds.red"),
    (lambda d: d["buttons"].pop("roll"), "buttons.roll"),
    (lambda d: d["buttons"].update(extra=4), "buttons.extra"),
    (lambda d: d.pop("buzzer"), "buzzer"),
    (lambda d: d["buzzer"].update(volume=3), "buzzer.volume"),
    (lambda d: d.update(timing={"long_press_s": 2.5}), "timing.long_press_s"),
    (lambda d: d.update(timing={"undo_hold_s": -1}), "timing.undo_hold_s"),
    (lambda d: d.update(timing={"bounce": 0.1}), "timing.bounce"),
    (lambda d: d.update(extra={}), "extra"),
    (lambda d: d.update(leds=[5, 6, 13]), "leds"),
])
def test_bad_pin_maps_name_the_key(change, field):
    doc = json.loads(json.dumps(DEFAULT))
    change(doc)
    with pytest.raises(InputError) as err:
        check_pin_map(doc, "pins.toml")
    assert err.value.field == f"pins.toml: {field}"


def test_pin_map_file_errors_name_the_file(tmp_path):
    with pytest.raises(InputError) as err:
        load_pin_map(tmp_path / "none.toml")
    assert err.value.field.endswith("none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[buttons\nnext = 1")
    with pytest.raises(InputError) as err:
        load_pin_map(bad)
    assert "TOML" in err.value.message and err.value.field == str(bad)


@given(st.lists(st.integers(min_value=-3, max_value=40), min_size=7, max_size=7))
def test_a_pin_map_is_accepted_iff_seven_distinct_usable_pins(pins):
    doc = {"buttons": dict(zip(["next", "pause", "roll"], pins[:3])),
           "leds": dict(zip(["green", "amber", "red"], pins[3:6])), "buzzer": {"pin": pins[6]}}
    expected_ok = len(set(pins)) == 7 and all(2 <= p <= 27 for p in pins)
    try:
        pm = check_pin_map(doc)
        ok = True
        assert sorted([*pm.buttons.values(), *pm.leds.values(), pm.buzzer]) == sorted(pins)
    except InputError:
        ok = False
    assert ok == expected_ok


# -- what the LEDs show (pure) ---------------------------------------------------------------------

@pytest.mark.parametrize("phase, running, ended, expected", [
    ("setup", False, False, None),
    ("regular", True, False, "green"),
    ("regular", False, False, "red"),
    ("finishing-round", True, False, "amber"),
    ("finishing-round", False, False, "red"),
    ("last-lap", True, False, "amber"),
    ("final-rounds", True, False, "amber"),
    ("final-rounds", False, False, "red"),
    ("ended", False, True, "red"),
])
def test_led_for_each_clock_phase(phase, running, ended, expected):
    view = {"phase": phase, "ended": ended, "clock": {"running": running, "elapsed_seconds": 10}}
    assert led_for(view) == expected


def test_led_for_a_match_without_a_clock_or_none():
    assert led_for(None) is None
    assert led_for({"game": "richelieu", "state": {}}) is None


# -- modes -----------------------------------------------------------------------------------------

def test_mock_mode_status_shows_the_banner_flag(table):
    s = table.panel.status()
    assert s["mode"] == "mock" and s["requested"] == "mock" and s["mock"] is True
    assert s["pins_available"] is True and s["match_id"] is None
    assert s["leds"] == {"green": False, "amber": False, "red": False}
    assert s["pins"]["buttons"] == DEFAULT["buttons"]
    json.dumps(s)  # the web layer serves it as is


def test_auto_mode_off_a_pi_runs_without_pins_and_says_so(store, fake_game, caplog):
    service = MatchService(store)
    with caplog.at_level(logging.INFO, logger="companion.gpio"):
        box = attach(service, None, "auto")
    try:
        s = box.status()
        assert s["mode"] == "off" and s["requested"] == "auto" and s["pins_available"] is False
        assert s["mock"] is False and "no GPIO pins" in s["reason"]
        # said in the log, not as a warning: a laptop has no pins (`serve` prints it after the address)
        assert any("GPIO panel off" in r.getMessage() and r.levelno == logging.INFO for r in caplog.records)
        assert not any(r.levelno >= logging.WARNING for r in caplog.records)
        # the phones still work: an event goes through, the box just shows nothing
        mid = service.create("richelieu", PLAYERS, {"clock": True})["id"]
        service.append(mid, "clock.start", {})
        assert box.status()["match_id"] == mid and box.status()["leds"]["green"] is True  # what it would show
    finally:
        box.close()


def test_off_mode_opens_no_pins(store, fake_game):
    box = attach(MatchService(store), None, "off")
    assert box.status()["pins_available"] is False and box.buttons == {} and box.leds == {}
    box.close()


def test_a_panel_asked_for_later_is_attached_once_and_never_after_the_stop(store):
    """``companion serve`` attaches the panel once it listens (``Runtime.open(panel_later=True)``, then
    ``attach_panel``): none before, the same one when asked again, and none once the runtime is stopped (a
    late attach racing the stop must not hold the pins)."""
    from companion.runtime import Runtime

    rt = Runtime.open(store=store, runner=None, gpio="mock", panel_later=True, box_time=False)
    assert rt.panel is None
    panel = rt.attach_panel()
    assert panel is rt.panel and panel.status()["mode"] == "mock" and rt.attach_panel() is panel
    rt.stop()
    late = Runtime.open(store=store, runner=None, gpio="mock", panel_later=True, box_time=False)
    late.stop()
    assert late.attach_panel() is None and late.panel is None
    off = Runtime.open(store=store, runner=None, gpio="off", panel_later=True, box_time=False)
    assert off.attach_panel() is None
    off.stop()


def test_a_panel_being_attached_says_starting_not_none(store, monkeypatch):
    """While ``companion serve`` attaches the panel (the first ``/healthz`` of a boot can come first),
    ``panel_status`` says it is starting, not null as with ``--gpio off``; once attached, the panel's
    status; after a failed attach, null (never "starting" for ever)."""
    from companion import gpio as pins
    from companion.runtime import Runtime

    rt = Runtime.open(store=store, runner=None, gpio="mock", panel_later=True, box_time=False)
    assert rt.panel_status() == {"state": "starting", "requested": "mock"}
    rt.attach_panel()
    status = rt.panel_status()
    assert status["mode"] == "mock" and status["requested"] == "mock" and "state" not in status
    rt.stop()
    off = Runtime.open(store=store, runner=None, gpio="off", panel_later=True, box_time=False)
    assert off.panel_status() is None
    off.stop()

    def broken(*args, **kwargs):
        raise OSError("no pins")

    monkeypatch.setattr(pins, "attach", broken)
    failed = Runtime.open(store=store, runner=None, gpio="auto", panel_later=True, box_time=False)
    assert failed.panel_status() == {"state": "starting", "requested": "auto"}
    with pytest.raises(OSError):
        failed.attach_panel()
    assert failed.panel_status() is None and failed.panel is None
    failed.stop()


def test_unknown_mode_is_an_input_error_naming_gpio(store):
    with pytest.raises(InputError) as err:
        attach(MatchService(store), None, "maybe")
    assert err.value.field == "gpio"


def test_an_injected_factory_is_used(store, fake_game):
    from gpiozero.pins.mock import MockFactory

    f = MockFactory()
    box = attach(MatchService(store), None, "auto", factory=f, sync_sound=True, sleep=lambda s: None)
    try:
        assert box.factory is f and box.status()["mock"] is True
        assert f.pin(17).function == "input" and f.pin(5).function == "output"
    finally:
        box.close()


def test_close_releases_every_pin(store, fake_game):
    t = Table(store, store.clock)
    mid = t.start()
    assert t.lit() == {"green"}
    factory = t.panel.factory
    t.panel.close()
    # the pins are free again: a second box on the same factory can claim them
    from gpiozero import LED

    led = LED(5, pin_factory=factory)
    led.close()
    t.service.append(mid, "clock.pause", {})  # no subscriber left to fail
    t.panel.close()  # twice is harmless


# -- buttons go through the core -------------------------------------------------------------------

def test_next_ends_the_current_players_turn(table):
    mid = table.start()
    assert table.view(mid)["current_player"] == "Ada"
    table.press("next")
    assert table.view(mid)["current_player"] == "Bo"
    ev = table.store.events(mid)[-1]
    assert ev["type"] == "turn.end" and ev["data"] == {"player": "Ada"}
    assert table.told[-1][0] == "done" and table.told[-1][1]["button"] == "next"


def test_pause_pauses_and_resumes(table):
    mid = table.start()
    assert table.lit() == {"green"}
    table.press("pause")
    assert table.types(mid)[-1] == "clock.pause" and table.lit() == {"red"}
    assert table.view(mid)["clock"]["running"] is False
    table.press("pause")
    assert table.types(mid)[-1] == "clock.resume" and table.lit() == {"green"}


def test_phone_events_move_the_leds_too(table):
    mid = table.start()
    table.runner.pause(mid)  # what the web layer calls for a phone
    assert table.lit() == {"red"} and table.panel.status()["leds"]["red"] is True


def test_holding_next_undoes_the_last_event(table):
    mid = table.start()
    table.press("next")
    assert table.view(mid)["current_player"] == "Bo"
    before = table.buzzer_beeps()
    table.press("next", seconds=2.5)  # past undo_hold_s: the release acts as the hold
    assert table.types(mid)[-1] == "undo"
    assert table.view(mid)["current_player"] == "Ada"
    assert table.panel.sounder.played[-1] == "ack" and table.buzzer_beeps() == before + 1


def test_a_hold_acts_once_even_when_the_release_follows(table):
    mid = table.start()
    table.press("next")
    pin = table.pin(17)
    pin.drive_low()
    table.ticker.t += 2.2
    table.panel._next_held()  # gpiozero's hold thread fires at undo_hold_s
    table.panel._next_held()  # (hold_repeat is off; a second call must not undo again)
    pin.drive_high()  # the release after a hold does nothing more
    assert table.types(mid) == ["clock.start", "turn.end", "undo"]


def test_gpiozero_hold_thread_fires_the_undo(store, clock, fake_game):
    pm = check_pin_map({**DEFAULT, "timing": {"long_press_s": 0.0, "undo_hold_s": 0.02}})
    t = Table(store, clock, pin_map=pm)
    try:
        mid = t.start()
        t.press("next", seconds=0.01)  # by the injected clock, shorter than the hold
        undone = threading.Event()
        t.panel.subscribe(lambda n: undone.set() if n.kind == "done" and n.payload["button"] == "undo" else None)
        pin = t.pin(17)
        pin.drive_low()
        assert undone.wait(10), "the hold thread never fired"
        pin.drive_high()  # the injected clock did not move: only the hold thread could undo
        assert t.types(mid) == ["clock.start", "turn.end", "undo"]
    finally:
        t.panel.close()


def test_refusals_beep_and_tell_the_phones(table):
    mid = table.start()
    table.press("roll")  # nobody owes a roll
    assert table.types(mid) == ["clock.start"]
    kind, payload = table.told[-1]
    assert kind == "refused" and payload["button"] == "roll" and "owes" in payload["error"]
    assert table.panel.sounder.played[-1] == "error"
    assert table.buzzer_beeps() == len(PATTERNS["error"])


def test_without_a_match_the_buttons_only_beep(table):
    table.press("next")
    table.press("pause")
    assert table.told[-1][0] == "refused" and table.told[-1][1]["error"] == "no match to drive"
    assert table.panel.sounder.played == ["error", "error"]


def test_before_the_clock_starts_leds_are_off_and_pause_is_refused(table):
    mid = table.new_match()
    assert table.panel.status()["match_id"] == mid and table.lit() == set()
    table.press("pause")
    assert table.types(mid) == [] and table.told[-1][0] == "refused"


# -- the clock's phases: LEDs and buzzer -----------------------------------------------------------

def to_final_rounds(t, mid):
    """1-minute clock: time runs out during Ada's turn, then the finishing round and the last lap."""
    t.advance(61)
    assert t.view(mid)["phase"] == "finishing-round" and t.lit() == {"amber"}
    for _ in PLAYERS:
        t.press("next")
    assert t.view(mid)["phase"] == "last-lap" and t.lit() == {"amber"}
    for _ in PLAYERS:
        t.press("next")
    v = t.view(mid)
    assert v["phase"] == "final-rounds" and v["final_threshold"] == 4 and t.lit() == {"amber"}


def test_leds_through_every_phase_to_the_end(store, clock, fake_game):
    t = Table(store, clock, dice=Dice(1, 2))
    try:
        mid = t.start(minutes=1)
        assert t.lit() == {"green"}
        t.advance(30)
        assert t.lit() == {"green"}
        to_final_rounds(t, mid)
        t.press("pause")
        assert t.lit() == {"red"}
        t.press("pause")
        assert t.lit() == {"amber"}
        t.service.append(mid, "turn.end", {"player": "Ada", "conquered": 0}, at=clock.now_iso())  # a phone
        assert t.view(mid)["awaiting_roll"] == "Ada"
        t.press("roll")  # 1 + 2 <= 4: the match ends
        ev = t.store.events(mid)[-1]
        assert ev["type"] == "final.roll" and ev["data"] == {"player": "Ada", "dice": [1, 2], "rolled_by": "pi"}
        assert t.view(mid)["ended"] is True and t.lit() == {"red"}
        assert t.panel.sounder.played.count("ended") == 1
        # the ended match stays shown (red) although it is no longer open
        t.panel.refresh()
        assert t.panel.status()["match_id"] == mid and t.lit() == {"red"}
    finally:
        t.panel.close()


def test_undoing_the_end_rearms_the_end_beep(store, clock, fake_game):
    t = Table(store, clock, dice=Dice(1, 1, 1, 2))
    try:
        mid = t.start(minutes=1)
        to_final_rounds(t, mid)
        t.runner.append(mid, "turn.end", {"player": "Ada", "conquered": 1})
        t.press("roll")
        assert t.view(mid)["ended"] and t.panel.sounder.played.count("ended") == 1
        t.press("next", seconds=3)  # undo the roll
        assert not t.view(mid)["ended"] and t.lit() == {"amber"}
        t.press("roll")
        assert t.view(mid)["ended"] and t.panel.sounder.played.count("ended") == 2
    finally:
        t.panel.close()


def test_the_boxs_hold_to_undo_counts_as_an_organiser_for_the_pis_roll(store, clock, fake_game):
    from companion.base.errors import ForbiddenError
    from companion.services.policy import Caller

    t = Table(store, clock, dice=Dice(6, 5))
    try:
        mid = t.start(minutes=1)
        to_final_rounds(t, mid)
        t.runner.append(mid, "turn.end", {"player": "Ada", "conquered": 0})
        t.press("roll")
        assert t.types(mid)[-1] == "final.roll"
        with pytest.raises(ForbiddenError):  # a player's undo of the Pi's roll is refused ...
            t.service.undo(mid, by=Caller("player"))
        assert t.types(mid)[-1] == "final.roll"
        t.press("next", seconds=3)  # ... the box's hold-to-undo is the organiser's
        assert t.types(mid)[-1] == "undo" and t.view(mid)["awaiting_roll"] == "Ada"
    finally:
        t.panel.close()


def test_a_high_final_roll_passes_the_turn(store, clock, fake_game):
    t = Table(store, clock, dice=Dice(6, 5))
    try:
        mid = t.start(minutes=1)
        to_final_rounds(t, mid)
        t.runner.append(mid, "turn.end", {"player": "Ada", "conquered": 0})
        t.press("roll")
        v = t.view(mid)
        assert not v["ended"] and v["current_player"] == "Bo" and t.lit() == {"amber"}
        assert "ended" not in t.panel.sounder.played
    finally:
        t.panel.close()


def test_final_rounds_short_press_asks_the_phones_long_press_means_two_or_more(store, clock, fake_game):
    t = Table(store, clock)
    try:
        mid = t.start(minutes=1)
        to_final_rounds(t, mid)
        n = len(t.store.events(mid))
        t.press("next", seconds=0.2)  # short: ask
        assert len(t.store.events(mid)) == n
        kind, payload = t.told[-1]
        assert kind == "prompt" and payload["kind"] == "conquered" and payload["player"] == "Ada"
        assert payload["match_id"] == mid
        t.press("next", seconds=1.0)  # long (0.8 s .. 2 s): "2 or more", no roll owed
        ev = t.store.events(mid)[-1]
        assert ev["type"] == "turn.end" and ev["data"] == {"player": "Ada", "conquered": 2}
        v = t.view(mid)
        assert v["current_player"] == "Bo" and v["awaiting_roll"] is None
        # while a roll is owed, NEXT is refused by the clock (the box has no rule of its own)
        t.runner.append(mid, "turn.end", {"player": "Bo", "conquered": 0})
        t.press("next", seconds=1.0)
        assert t.told[-1][0] == "refused" and "owes a final roll" in t.told[-1][1]["error"]
    finally:
        t.panel.close()


def test_outside_the_final_rounds_a_long_press_is_a_plain_turn_end(table):
    mid = table.start()
    table.press("next", seconds=1.5)
    assert table.store.events(mid)[-1]["data"] == {"player": "Ada"}


def test_buzzer_beeps_at_15_5_and_0_minutes_and_at_the_end(store, clock, fake_game):
    t = Table(store, clock, dice=Dice(1, 1))
    try:
        mid = t.start(minutes=20)
        t.advance(1)
        assert t.panel.sounder.played == []
        t.advance(300)  # 899 s left
        assert t.panel.sounder.played == ["15-minutes"] and t.buzzer_beeps() == 1
        t.advance(600)  # 299 s left
        assert t.panel.sounder.played == ["15-minutes", "5-minutes"] and t.buzzer_beeps() == 3
        assert t.lit() == {"green"}
        t.advance(300)  # time up
        assert t.panel.sounder.played[-1] == "time-up" and t.buzzer_beeps() == 6
        assert t.lit() == {"amber"}
        t.advance(5)
        assert t.panel.sounder.played.count("time-up") == 1  # each alert once
        for _ in range(6):
            t.press("next")
        t.runner.append(mid, "turn.end", {"player": "Ada", "conquered": 0})
        t.press("roll")
        assert t.panel.sounder.played[-1] == "ended" and t.buzzer_beeps() == 7
        assert t.panel.sounder.played.count("ended") == 1
        # the buzzer pin went on and off for every beep and ends off
        states = [s.state for s in t.pin(26).states]
        assert states[-1] is False
        assert all(a != b for a, b in zip(states, states[1:]))
    finally:
        t.panel.close()


def test_alerts_of_other_matches_are_ignored(store, clock, fake_game):
    t = Table(store, clock)
    try:
        t.start(minutes=20)
        t.panel._on_clock(Notice("alert", "someone-else", {"alert": "5-minutes"}))
        assert t.panel.sounder.played == []
    finally:
        t.panel.close()


# -- which match the panel drives --------------------------------------------------------------------

def test_the_most_recently_started_clock_match_is_driven(table):
    a = table.start()
    table.clock.advance(1)
    b = table.new_match()
    assert table.panel.status()["match_id"] == a  # b has not started
    table.clock.advance(1)
    table.runner.start_clock(b)
    assert table.panel.status()["match_id"] == b
    table.service.create("richelieu", PLAYERS, {"clock": False})  # no clock: never driven
    table.panel.refresh()
    assert table.panel.match_id == b
    table.press("next")
    assert table.types(b)[-1] == "turn.end" and table.types(a) == ["clock.start"]


def test_the_box_match_id_setting_wins(table):
    a = table.start()
    table.clock.advance(1)
    b = table.start()
    table.store.set_setting("box.match_id", a)
    table.panel.refresh()
    assert table.panel.match_id == a
    table.press("pause")
    assert table.types(a)[-1] == "clock.pause" and table.types(b) == ["clock.start"]
    table.store.set_setting("box.match_id", "no-such-match")
    table.panel.refresh()
    assert table.panel.match_id == b


def test_an_ended_match_gives_way_to_the_next_started_one(store, clock, fake_game):
    t = Table(store, clock)
    try:
        a = t.start()
        t.runner.append(a, "objective.completed", {"player": "Bo"})
        assert t.panel.match_id == a and t.lit() == {"red"}
        clock.advance(1)
        b = t.start()
        assert t.panel.match_id == b and t.lit() == {"green"}
        # a fresh box (a restart) does not pick up the old ended match
        t.panel.close()
        t.panel = attach(t.service, t.runner, "mock", sleep=lambda s: None, sync_sound=True)
        assert t.panel.match_id == b
    finally:
        t.panel.close()


# -- without a runner: the core directly -----------------------------------------------------------

def test_without_a_runner_the_box_rolls_with_its_own_rng(store, clock, fake_game):
    service = MatchService(store)
    box = attach(service, None, "mock", sleep=lambda s: None, sync_sound=True, rng=Dice(2, 1))
    try:
        mid = service.create("richelieu", PLAYERS, {"clock": True})["id"]
        service.append(mid, "clock.start", {"limit_minutes": 1})
        assert box.roll() is False  # nobody owes a roll
        clock.advance(61)
        for _ in range(6):
            assert box.next_turn()
        assert box.next_turn(long=False)  # a prompt, not an event
        service.append(mid, "turn.end", {"player": "Ada", "conquered": 0})
        assert box.roll()
        assert store.events(mid)[-1]["data"] == {"player": "Ada", "dice": [2, 1], "rolled_by": "pi"}
        assert service.state(mid)["ended"] and box.status()["leds"]["red"]
    finally:
        box.close()


# -- the buzzer's player ---------------------------------------------------------------------------

def test_sounder_plays_patterns_in_order_on_its_thread():
    from gpiozero import Buzzer
    from gpiozero.pins.mock import MockFactory

    f = MockFactory()
    bz = Buzzer(26, pin_factory=f)
    slept = []
    s = gpio.Sounder(bz, sleep=slept.append)
    for name in ("5-minutes", "error", "ended"):
        s.play(name)
    s.close()  # drains the queue, then stops
    states = [x.state for x in f.pin(26).states[1:]]
    n = sum(len(PATTERNS[p]) for p in ("5-minutes", "error", "ended"))
    assert states == [True, False] * n
    assert slept == [d for p in ("5-minutes", "error", "ended") for on, off in PATTERNS[p]
                     for d in ((on, off) if off else (on,))]
    s.play("ended")  # after close: ignored
    assert s.played == ["5-minutes", "error", "ended"]
    bz.close()


def test_companion_pins_environment_names_the_pin_map(tmp_path, monkeypatch):
    f = tmp_path / "pins.toml"
    f.write_text(gpio.default_pins_path().read_text().replace("next  = 17", "next  = 23"))
    monkeypatch.setenv("COMPANION_PINS", str(f))
    pm = load_pin_map()
    assert pm.buttons["next"] == 23 and pm.source == str(f)


# -- companion hardware check / pins ----------------------------------------------------------------

def test_hardware_check_mock_passes_every_part(run_cli):
    rc, out, err = run_cli("hardware", "check", "--mock")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["ok"] is True and doc["mock"] is True
    assert [c["part"] for c in doc["checks"]] == ["led.green", "led.amber", "led.red", "buzzer",
                                                  "button.next", "button.pause", "button.roll"]
    assert {c["part"]: c["physical"] for c in doc["checks"]}["button.next"] == 11
    assert "press and release NEXT" in err


def test_hardware_check_without_pins_says_so_in_one_line(run_cli):
    rc, out, err = run_cli("hardware", "check")  # this machine is no Pi
    assert rc == 1 and out == ""
    assert len(err.strip().splitlines()) == 1 and "no GPIO pins here" in err and "--mock" in err


def test_hardware_check_bad_pin_map_exits_2_naming_the_key(run_cli, tmp_path):
    f = tmp_path / "pins.toml"
    f.write_text(gpio.default_pins_path().read_text().replace("red   = 13", "red   = 17"))
    rc, out, err = run_cli("hardware", "check", "--mock", "--pins", f)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"{f}: leds.red" in err and "used twice" in err
    rc, _, err = run_cli("hardware", "check", "--mock", "--timeout", "0")
    assert rc == 2 and "--timeout" in err


def test_hardware_pins_prints_bcm_and_physical(run_cli):
    rc, out, err = run_cli("hardware", "pins")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["buttons"] == DEFAULT["buttons"] and doc["physical"]["buzzer"] == 37


class Answers:
    """A builder at the keyboard: answers in order; presses pins when asked to press a button."""

    def __init__(self, answers, factory=None, presses=None):
        import io

        self.inp = io.StringIO("".join(a + "\n" for a in answers))
        self.err = io.StringIO()
        self.factory, self.presses = factory, presses or {}

    def say(self, text):
        self.err.write(text + "\n")
        m = re.search(r"press and release (\w+)", text)
        if m and self.factory is not None and m.group(1) in self.presses:
            pin = self.factory.pin(self.presses[m.group(1)])
            pin.drive_low()
            pin.drive_high()

    def ask_yes(self, question):
        from companion.cli.hardware import Prompter

        return Prompter(self.inp, self.err).ask_yes(question)


def test_interactive_check_reports_a_dark_led_a_swapped_pair_and_a_dead_button(monkeypatch):
    from gpiozero import Buzzer
    from gpiozero.pins.mock import MockFactory

    from companion.cli.hardware import check_box

    monkeypatch.setattr(Buzzer, "beep", lambda self, **kw: None)  # the real beep sleeps for real time
    f = MockFactory()
    # NEXT's and PAUSE's wires are swapped; nobody presses ROLL
    who = Answers(["y", "maybe", "n", "y", "yes"], factory=f, presses={"NEXT": 27, "PAUSE": 17})
    result = check_box(load_pin_map(), f, False, who, timeout=0.01)
    f.close()
    by = {c["part"]: c for c in result["checks"]}
    assert result["ok"] is False
    assert by["led.green"]["ok"] and not by["led.amber"]["ok"] and by["led.red"]["ok"] and by["buzzer"]["ok"]
    assert not by["button.next"]["ok"] and "PAUSE answered instead" in by["button.next"]["note"]
    assert not by["button.pause"]["ok"] and "NEXT answered instead" in by["button.pause"]["note"]
    assert not by["button.roll"]["ok"] and "no press" in by["button.roll"]["note"]


def test_interactive_check_all_good_and_end_of_input_counts_as_no(monkeypatch):
    from gpiozero import Buzzer
    from gpiozero.pins.mock import MockFactory

    from companion.cli.hardware import check_box

    monkeypatch.setattr(Buzzer, "beep", lambda self, **kw: None)
    f = MockFactory()
    who = Answers(["y", "y", "y", "y"], factory=f, presses={"NEXT": 17, "PAUSE": 27, "ROLL": 22})
    assert check_box(load_pin_map(), f, False, who, timeout=5)["ok"] is True
    f.close()
    f = MockFactory()
    who = Answers(["y"], factory=f, presses={"NEXT": 17, "PAUSE": 27, "ROLL": 22})  # then EOF
    result = check_box(load_pin_map(), f, False, who, timeout=5)
    f.close()
    assert [c["ok"] for c in result["checks"]] == [True, False, False, False, True, True, True]


# -- property: any sequence of presses keeps the box and the core in step ----------------------------

press_kinds = st.sampled_from(["next", "next-long", "next-hold", "pause", "roll", "phone-turn-0", "wait-20",
                               "wait-70"])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # fake_game: same value every example
@given(st.lists(press_kinds, max_size=30), st.lists(st.integers(1, 6), min_size=80, max_size=80))
def test_any_press_sequence_keeps_the_leds_equal_to_the_core(tmp_path_factory, fake_game, presses, faces):
    """Against an independent formulation: the LEDs read from the pins always equal the light the
    clock's own state calls for (computed here from the raw clock state, not through led_for); each
    press writes at most one event; every stored event folds."""
    from companion.core import clock as clockfold
    from companion.core.match import fold
    from companion.storage import Store
    from companion.base.timeutil import FakeClock

    def expected_light(clock_state, now):
        if clock_state["phase"] == "setup":
            return set()
        if clock_state["ended"] or clock_state["running_since"] is None:
            return {"red"}
        settled = clockfold.view(clock_state, now)["phase"]  # time may have run out since the last event
        return {"green"} if settled == "regular" else {"amber"}

    clk = FakeClock("2026-03-01T20:00:00Z")
    store = Store(tmp_path_factory.mktemp("p") / "c.db", clock=clk)
    t = Table(store, clk, dice=Dice(*faces))
    try:
        mid = t.start(minutes=1)
        for p in presses:
            n = len(store.events(mid))
            if p == "next":
                t.press("next")
            elif p == "next-long":
                t.press("next", seconds=1.2)
            elif p == "next-hold":
                t.press("next", seconds=2.4)
            elif p in ("pause", "roll"):
                t.press(p)
            elif p == "phone-turn-0":
                v = t.view(mid)
                try:
                    t.runner.append(mid, "turn.end", {"player": v["current_player"], "conquered": 0})
                except Exception:
                    pass
            else:
                t.advance(int(p.split("-")[1]))
            assert len(store.events(mid)) - n <= 1
            f = t.service.fold(mid)
            assert t.lit() == expected_light(f.clock_state, clk.now_iso())
            assert len(t.lit()) <= 1
        refold = fold("richelieu", PLAYERS, store.events(mid), {"clock": True})
        assert refold.clock_state == t.service.fold(mid).clock_state
    finally:
        t.panel.close()
        store.close()


def test_next_ends_a_conquest_turn_with_the_card_the_box_draws(store, clock):
    """NEXT on a conquest match whose map is tracked: the game completes the turn end (the turn's conquests,
    and the card the box draws after a conquest; docs/rulings.md, "Conquest: the turn's card")."""
    import random

    from companion.games import conquest_italy as ci

    t = Table(store, clock)
    try:
        players = ["Ada", "Bo", "Cy"]
        svc = t.service
        mid = svc.create("conquest-italy", players)["id"]
        gm = ci.map_of(None)
        owner, _ = ci.deal(players, gm, random.Random(2))
        svc.append(mid, "setup.deal", {"owner": owner})
        s = svc.fold(mid).game_state
        while s["phase"] == "place":
            p = s["next_placer"]
            svc.append(mid, "setup.place", {"player": p, "placements": {ci.held(s, p)[0]: min(5, s["reserve"][p])}})
            s = svc.fold(mid).game_state
        t.runner.start_clock(mid, 120)
        assert t.panel.match_id == mid  # the panel drives the match whose clock started last
        t.press("next")  # Ada has not reinforced: refused, nothing stored
        assert t.types(mid)[-1] == "clock.start" and t.told[-1][0] == "refused"
        s = svc.fold(mid).game_state
        due = ci.reinforcements(gm, ci.held(s, "Ada"), ci.units_on_map(s, "Ada"))["placeable"]
        src = next(c for c in ci.held(s, "Ada") if any(s["owner"][n] != "Ada" for n in gm.neighbours[c]))
        dst = next(n for n in sorted(gm.neighbours[src]) if s["owner"][n] != "Ada")
        svc.append(mid, "reinforce", {"player": "Ada", "placements": {src: due}})
        svc.append(mid, "territory.set", {"city": src, "player": "Ada", "units": 5})
        svc.append(mid, "territory.set", {"city": dst, "player": s["owner"][dst], "units": 1})
        svc.append(mid, "combat", {"from": src, "to": dst, "attack_dice": [6], "defend_dice": [1]})
        t.press("next")
        e = store.events(mid)[-1]
        assert e["type"] == "turn.end" and e["data"]["conquered"] == 1 and e["data"]["card"] in gm.cards
        assert t.view(mid)["current_player"] == "Bo"
        assert svc.fold(mid).game_state["hands"]["Ada"] == [e["data"]["card"]]
    finally:
        t.panel.close()


def test_the_default_pin_factory_is_chosen_through_gpiozeros_public_classes(monkeypatch):
    from gpiozero.pins.mock import MockFactory

    from companion import gpio

    assert "._default_pin_factory()" not in Path(gpio.__file__).read_text(encoding="utf-8")  # (private)
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    factory, mock, _ = gpio.make_factory("auto")
    assert isinstance(factory, MockFactory) and mock
    factory.close()
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "nosuch")
    factory, mock, reason = gpio.make_factory("auto")
    assert factory is None and "no GPIO pins here" in reason and "nosuch" in reason


def test_an_event_of_another_match_leaves_the_panel_as_it_is_unless_its_clock_starts(table):
    """The other tables write without the panel looking again for the match it drives (a query over every
    open match's events, for each of their writes), unless a clock starts."""
    a = table.start()
    other = table.service.create("richelieu", PLAYERS)["id"]  # no clock
    asked = []
    starts = table.store.clock_starts
    table.store.clock_starts = lambda *args, **kw: (asked.append(1), starts(*args, **kw))[1]
    table.service.append(other, "point", {"player": "Ada"}, expected_seq=0)
    assert asked == [] and table.panel.match_id == a
    clocked = table.new_match()
    table.service.append(clocked, "point", {"player": "Ada"}, expected_seq=0)  # not its clock's start either
    assert asked == [] and table.panel.match_id == a
    table.clock.advance(1)
    table.runner.start_clock(clocked, 120)  # its clock started: it takes the panel
    assert asked and table.panel.match_id == clocked
