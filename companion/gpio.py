"""The button panel: three buttons, three LEDs and an active buzzer on the Pi's GPIO pins.

An adapter like the CLI and the web app: the buttons go through the same core commands as the
phones (``MatchService.append`` / ``undo`` / ``final_roll``), the LEDs and the buzzer
only *show* what the core says. No game rule lives here. gpiozero is imported only in this module.

- **NEXT** ends the current player's turn (``turn.end``). When the turn's conquered count matters
  (the clock's final rounds) a short press asks the phones for it (a ``prompt`` published to the
  panel's subscribers, which the web layer forwards) and a long press (``long_press_s`` up to
  ``undo_hold_s``) means "2 or more". Holding NEXT ``undo_hold_s`` (2 s) undoes the last event.
- **PAUSE** pauses or resumes the clock (``clock.pause`` / ``clock.resume``).
- **ROLL** rolls the dice owed now (the final-round 2d6) through the match service.
- LEDs: green while the clock runs, amber while it runs in the finishing round / last lap / final
  rounds, red when paused or when the match has ended; all off when no match is driven or its clock
  has not started.
- The active buzzer beeps on the clock runner's alerts (``15-minutes``, ``5-minutes``, ``time-up``)
  and once when the match ends; a quick triple when the core refuses a button's command.

Which match the panel drives: the setting ``box.match_id`` when it names a match, or else the most
recently started open match that uses the clock (else the newest open clock match, not started yet).

Modes (``attach(..., mode=...)``): ``auto`` uses gpiozero's default pin factory on a Pi and, where
there are no pins, says so in the log and returns a panel in the ``off`` state (``status()`` tells
the UI); ``mock`` uses gpiozero's ``MockFactory`` (demos and tests: the UI shows a "mock pins"
banner); ``off`` drives nothing.
"""

from __future__ import annotations

import logging
import os
import queue
import random
import threading
import time
import tomllib
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from companion.base.notices import Listeners, Notice
from companion.core import clock as clockfold
from companion.base.errors import CompanionError, InputError

MODES = ("auto", "mock", "off")
BUTTONS = ("next", "pause", "roll")
LEDS = ("green", "amber", "red")

# BCM numbers usable on the 40-pin header (GPIO0/1 are the HAT ID EEPROM bus: not offered).
USABLE_BCM = range(2, 28)

# BCM number -> physical pin of the 40-pin header (every Pi since the B+, the Zero 2 W included).
PHYSICAL_PIN = {
    2: 3, 3: 5, 4: 7, 17: 11, 27: 13, 22: 15, 10: 19, 9: 21, 11: 23, 5: 29, 6: 31, 13: 33, 19: 35,
    26: 37, 14: 8, 15: 10, 18: 12, 23: 16, 24: 18, 25: 22, 8: 24, 7: 26, 12: 32, 16: 36, 20: 38, 21: 40,
}
GROUND_PINS = (6, 9, 14, 20, 25, 30, 34, 39)

DEFAULT_TIMING = {"bounce_s": 0.05, "long_press_s": 0.8, "undo_hold_s": 2.0}

# Buzzer patterns: (on seconds, off seconds) pairs. An active buzzer has one tone, so the
# patterns differ by rhythm.
# The alert names are those of companion/services/clockrunner.py (ALERTS, ENDED_ALERT).
PATTERNS = {
    "15-minutes": [(0.25, 0.0)],
    "5-minutes": [(0.25, 0.2), (0.25, 0.0)],
    "time-up": [(0.25, 0.2), (0.25, 0.2), (0.25, 0.0)],
    "ended": [(1.2, 0.0)],
    "ack": [(0.05, 0.0)],
    "error": [(0.06, 0.06), (0.06, 0.06), (0.06, 0.0)],
    "test": [(0.3, 0.0)],
}

# Clock phases in which the amber LED replaces the green one (the clock's late phases).
LATE_PHASES = ("finishing-round", "last-lap", "final-rounds")  # companion/core/clock.py PHASES


# -- pin map -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PinMap:
    buttons: dict  # name -> BCM
    leds: dict  # name -> BCM
    buzzer: int
    bounce_s: float = DEFAULT_TIMING["bounce_s"]
    long_press_s: float = DEFAULT_TIMING["long_press_s"]
    undo_hold_s: float = DEFAULT_TIMING["undo_hold_s"]
    source: str = field(default="", compare=False)

    def to_json(self) -> dict:
        return {"buttons": dict(self.buttons), "leds": dict(self.leds), "buzzer": self.buzzer,
                "timing": {"bounce_s": self.bounce_s, "long_press_s": self.long_press_s,
                           "undo_hold_s": self.undo_hold_s},
                "source": self.source}


def default_pins_path() -> Path:
    from companion.base.resources import hardware_dir

    return hardware_dir() / "pins.toml"


def load_pin_map(path: str | Path | None = None) -> PinMap:
    """Read a pin map TOML file (default: ``$COMPANION_PINS``, else ``hardware/pins.toml``).
    Errors name the file and key."""
    import os

    if path is None and os.environ.get("COMPANION_PINS"):
        path = os.environ["COMPANION_PINS"]
    p = Path(path) if path is not None else default_pins_path()
    where = p.name if path is None else str(p)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError("cannot read the pin map: {value}", where, value=exc.strerror or exc) from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError("not valid TOML: {exc}", where, exc=exc) from None
    return check_pin_map(doc, where)


def check_pin_map(doc, where: str = "pins") -> PinMap:
    """Validate a pin map document (the parsed TOML) and return a PinMap.
    Raises InputError naming the key, e.g. ``pins.toml: buttons.next``."""

    def err(key, msg):
        raise InputError(msg, f"{where}: {key}" if where else key)

    if not isinstance(doc, dict):
        err("$", "must be a table")
    unknown = sorted(set(doc) - {"buttons", "leds", "buzzer", "timing"})
    if unknown:
        err(unknown[0], "unknown section (expected buttons, leds, buzzer, timing)")

    def bcm(key, value):
        if isinstance(value, bool) or not isinstance(value, int):
            err(key, "must be a BCM pin number (an integer)")
        if value not in USABLE_BCM:
            err(key, f"BCM pin {value} is not a usable GPIO (2 to 27)")
        return value

    def table(name, names):
        t = doc.get(name)
        if not isinstance(t, dict):
            err(name, "missing table" if t is None else "must be a table")
        extra = sorted(set(t) - set(names))
        if extra:
            err(f"{name}.{extra[0]}", f"unknown {name[:-1]} (expected {', '.join(names)})")
        out = {}
        for n in names:
            if n not in t:
                err(f"{name}.{n}", "missing")
            out[n] = bcm(f"{name}.{n}", t[n])
        return out

    buttons = table("buttons", BUTTONS)
    leds = table("leds", LEDS)
    bz = doc.get("buzzer")
    if not isinstance(bz, dict):
        err("buzzer", "missing table" if bz is None else "must be a table")
    extra = sorted(set(bz) - {"pin"})
    if extra:
        err(f"buzzer.{extra[0]}", "unknown key (expected pin)")
    if "pin" not in bz:
        err("buzzer.pin", "missing")
    buzzer = bcm("buzzer.pin", bz["pin"])

    seen: dict[int, str] = {}
    for key, pin in [*((f"buttons.{k}", v) for k, v in buttons.items()),
                     *((f"leds.{k}", v) for k, v in leds.items()), ("buzzer.pin", buzzer)]:
        if pin in seen:
            err(key, f"BCM pin {pin} is used twice ({seen[pin]} and {key})")
        seen[pin] = key

    timing = dict(DEFAULT_TIMING)
    t = doc.get("timing", {})
    if not isinstance(t, dict):
        err("timing", "must be a table")
    for k, v in t.items():
        if k not in DEFAULT_TIMING:
            err(f"timing.{k}", f"unknown key (expected {', '.join(DEFAULT_TIMING)})")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or v > 10:
            err(f"timing.{k}", "must be a number of seconds from 0 to 10")
        timing[k] = float(v)
    if timing["long_press_s"] >= timing["undo_hold_s"]:
        err("timing.long_press_s", "must be shorter than timing.undo_hold_s")
    if timing["undo_hold_s"] <= 0:
        err("timing.undo_hold_s", "must be more than 0")
    return PinMap(buttons, leds, buzzer, source=where, **timing)


# -- what the LEDs show --------------------------------------------------------------------------

def led_for(view: dict | None) -> str | None:
    """The one LED lit for a match view (``MatchService.state``): green / amber / red / None."""
    if not view or not isinstance(view.get("clock"), dict):
        return None
    if view.get("ended"):
        return "red"
    if view["clock"].get("running"):
        return "amber" if view.get("phase") in LATE_PHASES else "green"
    if view.get("phase") in (None, "setup"):
        return None  # the clock has not started
    return "red"  # paused


# -- the buzzer ----------------------------------------------------------------------------------

class Sounder:
    """Plays buzzer patterns one after another on a worker thread (``sync=True``: inline).

    ``sleep`` is injected: tests pass a no-op and read the pin's recorded states."""

    def __init__(self, device, sleep=time.sleep, sync: bool = False, logger=None):
        self.device = device
        self.sleep = sleep
        self.sync = sync
        self.log = logger or logging.getLogger(__name__)
        self.played: list[str] = []
        self._q: queue.Queue = queue.Queue()
        self._thread = None
        self._closed = False
        if not sync:
            self._thread = threading.Thread(target=self._work, name="companion-buzzer", daemon=True)
            self._thread.start()

    def play(self, name: str) -> None:
        if self._closed:
            return
        self.played.append(name)
        if self.sync:
            self._sound(PATTERNS[name])
        else:
            self._q.put(PATTERNS[name])

    def _sound(self, pattern) -> None:
        for on_s, off_s in pattern:
            self.device.on()
            self.sleep(on_s)
            self.device.off()
            if off_s:
                self.sleep(off_s)

    def _work(self) -> None:
        while True:
            pattern = self._q.get()
            if pattern is None:
                return
            try:
                self._sound(pattern)
            except Exception:  # a closed device at shutdown
                self.log.debug("buzzer pattern interrupted", exc_info=True)
                return

    def close(self) -> None:
        self._closed = True
        if self._thread is not None:
            self._q.put(None)
            self._thread.join(timeout=5)


# -- pin factories -------------------------------------------------------------------------------

def make_factory(mode: str):
    """``(factory, mock, reason)`` for a mode. ``factory`` is None when there are no pins."""
    if mode not in MODES:
        raise InputError("must be one of {names}", "gpio", names=', '.join(MODES))
    if mode == "off":
        return None, False, "GPIO is off (--gpio off)"
    from gpiozero.pins.mock import MockFactory

    if mode == "mock":
        return MockFactory(), True, "mock pins (gpiozero MockFactory): nothing is wired"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            factory = default_factory()
    except Exception as exc:  # no pin library loads here (off a Pi), or an unknown $GPIOZERO_PIN_FACTORY
        return None, False, f"no GPIO pins here ({exc})"
    return factory, isinstance(factory, MockFactory), f"GPIO pins via {type(factory).__name__}"


# gpiozero's own pin factories in its preferred order (lgpio drives every Pi, PWM included), each built
# through its public class: gpiozero's choice of a default (``Device._default_pin_factory``) is private
PIN_FACTORIES = (("lgpio", "gpiozero.pins.lgpio", "LGPIOFactory"),
                 ("rpigpio", "gpiozero.pins.rpigpio", "RPiGPIOFactory"),
                 ("pigpio", "gpiozero.pins.pigpio", "PiGPIOFactory"),
                 ("native", "gpiozero.pins.native", "NativeFactory"))


def default_factory():
    """The first of gpiozero's pin factories that works here, or the one $GPIOZERO_PIN_FACTORY names
    (``lgpio``, ``rpigpio``, ``pigpio``, ``native`` or ``mock``). Raises RuntimeError saying why each failed."""
    import importlib

    name = (os.environ.get("GPIOZERO_PIN_FACTORY") or "").strip().lower()
    if name == "mock":
        from gpiozero.pins.mock import MockFactory

        return MockFactory()
    order = [f for f in PIN_FACTORIES if not name or f[0] == name]
    if not order:
        raise RuntimeError(f"unknown GPIOZERO_PIN_FACTORY {name!r}")
    failures = []
    for label, module, cls in order:
        try:
            return getattr(importlib.import_module(module), cls)()
        except Exception as exc:
            failures.append(f"{label}: {exc}")
    raise RuntimeError("; ".join(failures))


# -- the panel ----------------------------------------------------------------------------------

class Panel:
    """Buttons, LEDs and buzzer bound to one match at a time. Create it with :func:`attach`."""

    def __init__(self, service, runner=None, *, mode: str = "off", requested: str | None = None,
                 pin_map: PinMap | None = None, factory=None, mock: bool = False, reason: str = "",
                 logger=None, monotonic=time.monotonic, sleep=time.sleep, rng=None,
                 sync_sound: bool = False):
        self.service = service
        self.runner = runner
        self.mode = mode
        self.requested = requested or mode
        self.pin_map = pin_map or load_pin_map()
        self.factory = factory
        self.mock = mock
        self.reason = reason
        self.log = logger or logging.getLogger("companion.gpio")
        self.monotonic = monotonic
        self.rng = rng or random.SystemRandom()
        self.match_id: str | None = None
        self._sticky: str | None = None  # the match driven so far (kept when it ends: red LED)
        self._lock = threading.RLock()
        self._listeners = Listeners(self.log, "GPIO panel")
        self._lit: str | None = None
        self._ended_seen: set[str] = set()
        self._press_lock = threading.Lock()
        self._pressed_at: float | None = None
        self._held = False
        self.buttons: dict = {}
        self.leds: dict = {}
        self.buzzer = None
        self.sounder = None
        self._closed = False
        if factory is not None:
            self._open_devices(sleep, sync_sound)
        service.subscribe(self._on_event)
        if runner is not None and hasattr(runner, "subscribe"):
            runner.subscribe(self._on_clock)
        self.refresh()

    # -- devices -------------------------------------------------------------------------------
    def _open_devices(self, sleep, sync_sound) -> None:
        from gpiozero import LED, Button, Buzzer

        pm, f = self.pin_map, self.factory
        try:
            for name in LEDS:
                self.leds[name] = LED(pm.leds[name], initial_value=False, pin_factory=f)
            self.buzzer = Buzzer(pm.buzzer, initial_value=False, pin_factory=f)
            for name in BUTTONS:
                b = Button(pm.buttons[name], pull_up=True, bounce_time=pm.bounce_s or None,
                           hold_time=pm.undo_hold_s if name == "next" else 1.0, hold_repeat=False,
                           pin_factory=f)
                self.buttons[name] = b
        except Exception:
            self._close_devices()
            raise
        self.buttons["next"].when_pressed = self._next_pressed
        self.buttons["next"].when_released = self._next_released
        self.buttons["next"].when_held = self._next_held
        self.buttons["pause"].when_pressed = self._pause_pressed
        self.buttons["roll"].when_pressed = self._roll_pressed
        self.sounder = Sounder(self.buzzer, sleep=sleep, sync=sync_sound, logger=self.log)

    def _close_devices(self) -> None:
        for d in [*self.buttons.values(), *self.leds.values(), self.buzzer]:
            if d is not None:
                try:
                    d.close()
                except Exception:
                    pass
        self.buttons, self.leds, self.buzzer = {}, {}, None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.service.unsubscribe(self._on_event)
        if self.runner is not None and hasattr(self.runner, "unsubscribe"):
            try:
                self.runner.unsubscribe(self._on_clock)
            except Exception:
                pass
        if self.sounder is not None:
            self.sounder.close()
        with self._lock:
            for led in self.leds.values():
                led.off()
            self._close_devices()
        if self.factory is not None:
            try:
                self.factory.close()
            except Exception:
                pass

    # -- who listens to the panel --------------------------------------------------------------
    def subscribe(self, callback) -> None:
        """``callback(notice)`` (:class:`companion.base.notices.Notice`): ``kind`` ``"prompt"`` (ask the
        phones something), ``"refused"`` (the core refused a button's command) or ``"done"`` (a button's
        command went through), with the box's ``payload``."""
        self._listeners.add(callback)

    def unsubscribe(self, callback) -> None:
        self._listeners.remove(callback)

    def _publish(self, kind: str, payload: dict) -> None:
        self._listeners.tell(Notice(kind, payload.get("match_id"), payload))

    # -- status --------------------------------------------------------------------------------
    def status(self) -> dict:
        """What the UI shows about the panel (JSON). Re-reads which match is driven first."""
        try:
            self.refresh()
        except Exception:
            self.log.exception("panel refresh failed")
        with self._lock:
            return {
                "mode": self.mode,
                "requested": self.requested,
                "mock": self.mock,
                "pins_available": self.factory is not None,
                "reason": self.reason,
                "match_id": self.match_id,
                "leds": {name: (self._lit == name) for name in LEDS},
                "pins": self.pin_map.to_json() if self.factory is not None else None,
            }

    # -- which match ---------------------------------------------------------------------------
    def resolve_match(self) -> str | None:
        """The match the panel drives now (see the module's docstring)."""
        from companion.base.errors import NotFoundError
        from companion.core.match import uses_clock

        store = self.service.store
        chosen = store.get_setting("box.match_id")
        if chosen:
            try:
                store.get_match(chosen)
                return chosen
            except NotFoundError:
                self.log.warning("box.match_id names no match (%s): using the latest clock match", chosen)
        started, waiting = [], []
        for r in store.clock_starts(include=self._sticky):
            if not uses_clock(r["game"], r["options"]):
                continue
            if r["started"]:
                started.append((r["started"], r["created_at"], r["id"]))
            elif r["status"] == "open":
                waiting.append((r["created_at"], r["id"]))
        if started:
            return max(started)[2]
        if waiting:
            return max(waiting)[1]
        return None

    def view(self) -> dict | None:
        mid = self.match_id
        if mid is None:
            return None
        try:
            return self.service.state(mid)
        except CompanionError:
            return None

    # -- LEDs ----------------------------------------------------------------------------------
    def refresh(self, view: dict | None = None) -> None:
        """Re-read which match is driven and set the LEDs from its clock view."""
        if self._closed:
            return
        mid = self.resolve_match()
        if mid != self.match_id:
            self.log.info("the panel drives match %s", mid)
        self.match_id = mid
        self._sticky = mid
        if view is None:
            view = self.view()
        self._show(view)
        self._note_end(mid, view)

    def _note_end(self, mid, view) -> None:
        """The end of the match beeps once (the runner's "ended" alert or a view that ended,
        whichever comes first); an undo of the end re-arms it."""
        if mid is None or not view:
            return
        if view.get("ended"):
            if mid not in self._ended_seen:
                self._ended_seen.add(mid)
                self._beep("ended")
        else:
            self._ended_seen.discard(mid)

    def _show(self, view) -> None:
        lit = led_for(view)
        with self._lock:
            self._lit = lit
            for name, led in self.leds.items():
                if name == lit:
                    led.on()
                else:
                    led.off()

    def _beep(self, pattern: str) -> None:
        if self.sounder is not None:
            self.sounder.play(pattern)

    # -- core and clock events -----------------------------------------------------------------
    def _on_event(self, notice) -> None:
        """MatchService listener: an event was stored (from a phone, the panel or an import)."""
        if notice.kind != "event":
            return
        match_id, event, fold = notice.match_id, notice.event, notice.fold
        try:
            if match_id == self.match_id:
                # this match's state now; another match may take over on clock.start
                if event["type"] == "clock.start":
                    self.refresh()
                else:
                    self.refresh(view=fold.view(event.get("at")))
            elif getattr(fold, "clock_on", True) and (self.match_id is None or event["type"] == "clock.start"):
                # another match takes the panel only by starting its clock (or when it drives none): a match
                # without the clock never does (``resolve_match`` looks at clock matches only), and looking
                # again is a query over every open match's events, too dear for every write of every table
                # (a button looks again before it acts, ``_no_match``)
                self.refresh()
        except Exception:
            self.log.exception("panel refresh failed")

    def _on_clock(self, notice) -> None:
        """ClockRunner listener: ``tick`` (the clock view each second: phases move with time) and
        ``alert`` (``15-minutes``, ``5-minutes``, ``time-up``, ``ended``)."""
        match_id, kind, payload = notice.match_id, notice.kind, notice.payload
        if match_id != self.match_id or not isinstance(payload, dict):
            return
        try:
            if kind == "tick":
                self._show(payload)
            elif kind == "alert":
                name = payload.get("alert")
                if name == "ended":
                    self._note_end(match_id, {"ended": True})
                elif name in PATTERNS:
                    self._beep(name)
                self.refresh()
        except Exception:
            self.log.exception("panel clock update failed")

    # -- buttons -------------------------------------------------------------------------------
    def _command(self, what: str, fn) -> bool:
        """Run one core command for a button; a refusal beeps and is told to the phones."""
        try:
            result = fn()
        except CompanionError as exc:
            self.log.info("panel %s refused: %s", what, exc)
            self._beep("error")
            self._publish("refused", {"match_id": self.match_id, "button": what, "error": exc.message,
                                      "field": exc.field})
            return False
        except Exception:
            self.log.exception("panel %s failed", what)
            self._beep("error")
            return False
        self._publish("done", {"match_id": self.match_id, "button": what, "result": result})
        return True

    def _no_match(self, what: str) -> bool:
        self.refresh()
        if self.match_id is None:
            self._beep("error")
            self._publish("refused", {"match_id": None, "button": what, "error": "no match to drive",
                                      "field": None})
            return True
        return False

    def _next_pressed(self) -> None:
        with self._press_lock:
            self._pressed_at = self.monotonic()
            self._held = False

    def _next_held(self) -> None:
        """NEXT held ``undo_hold_s`` (gpiozero's hold thread): undo the last event while it is
        still held. A press acts once: the hold or the release, whichever comes first."""
        with self._press_lock:
            if self._pressed_at is None or self._held:
                return
            self._held = True
        self.undo()

    def _next_released(self) -> None:
        with self._press_lock:
            started, held = self._pressed_at, self._held
            self._pressed_at, self._held = None, False
        if held or started is None:
            return
        held_for = self.monotonic() - started
        if held_for >= self.pin_map.undo_hold_s:  # the hold thread did not fire (yet): same meaning
            self.undo()
        else:
            self.next_turn(long=held_for >= self.pin_map.long_press_s)

    def undo(self) -> bool:
        if self._no_match("undo"):
            return False
        mid = self.match_id
        ok = self._command("undo", lambda: self.service.undo(mid))  # the panel is the organiser's
        if ok:
            self._beep("ack")
        return ok

    def next_turn(self, long: bool = False) -> bool:
        """NEXT: end the current player's turn. Where the conquered count decides something (the
        view's ``awaiting_conquered``/final rounds), a short press asks the phones and a long
        press means "2 or more"."""
        if self._no_match("next"):
            return False
        mid = self.match_id
        view = self.view() or {}
        player = view.get("current_player")
        if clockfold.conquered_matters(view):
            if not long:
                self._publish("prompt", {"match_id": mid, "kind": "conquered", "player": player,
                                         "question": f"How many territories did {player} conquer this turn?",
                                         "choices": [0, 1, 2]})
                return True
            data = {"player": player, "conquered": 2}
        else:
            data = {"player": player}
        return self._command("next", lambda: self.service.end_turn(mid, data, rng=self.rng))

    def _pause_pressed(self) -> None:
        self.pause_or_resume()

    def pause_or_resume(self) -> bool:
        if self._no_match("pause"):
            return False
        mid = self.match_id
        view = self.view() or {}
        running = bool((view.get("clock") or {}).get("running"))
        return self._command("pause", lambda: self.service.append(mid, "clock.pause" if running else "clock.resume"))

    def _roll_pressed(self) -> None:
        self.roll()

    def roll(self) -> bool:
        """ROLL: the dice owed now (final-round 2d6), rolled by the core with its RNG."""
        if self._no_match("roll"):
            return False
        mid = self.match_id
        rng = self.runner.rng if self.runner is not None else self.rng
        return self._command("roll", lambda: self.service.final_roll(mid, rng=rng))


def attach(service, runner, mode: str = "auto", pin_map: PinMap | None = None, logger=None, **kw) -> Panel:
    """Bind the panel to the core. Always returns a Panel: in ``off`` state when there are no pins
    (``status()["pins_available"]`` is False and ``status()["reason"]`` says why, for the UI).
    ``kw`` passes ``factory=`` (inject a pin factory), ``monotonic=``, ``sleep=``, ``rng=``,
    ``sync_sound=`` to :class:`Panel`."""
    log = logger or logging.getLogger("companion.gpio")
    if mode not in MODES:
        raise InputError("must be one of {names}", "gpio", names=', '.join(MODES))
    pm = pin_map or load_pin_map()
    factory = kw.pop("factory", None)
    if factory is not None:
        from gpiozero.pins.mock import MockFactory

        mock, reason = isinstance(factory, MockFactory), f"injected {type(factory).__name__}"
    else:
        factory, mock, reason = make_factory(mode)
    effective = "off" if factory is None else ("mock" if mock else "pins")
    if factory is None:  # (a machine without pins, in auto mode: no warning; `serve` says it after the address)
        log.info("GPIO panel off: %s", reason)
    else:
        log.info("GPIO panel on: %s", reason)
    try:
        return Panel(service, runner, mode=effective, requested=mode, pin_map=pm, factory=factory, mock=mock,
                   reason=reason, logger=log, **kw)
    except CompanionError:
        raise
    except Exception as exc:  # pins busy or not accessible: run without the panel
        if factory is not None:
            try:
                factory.close()
            except Exception:
                pass
        if mode == "mock":
            raise
        log.warning("GPIO panel off: cannot open the pins (%s)", exc)
        return Panel(service, runner, mode="off", requested=mode, pin_map=pm, factory=None, mock=False,
                   reason=f"cannot open the pins: {exc}", logger=log,
                   **{k: v for k, v in kw.items() if k in ("monotonic", "rng")})
