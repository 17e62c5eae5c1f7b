"""``companion hardware``: check the box's wiring (LEDs, buzzer, buttons) and show the pin map."""

from __future__ import annotations

import argparse
import sys
import threading
import warnings

from companion.cli import emit

DESCRIPTION = """\
Walk a builder through the box: every LED lights in turn (answer y/n), the buzzer beeps (y/n),
then each button is to be pressed when asked. Prompts go to stderr; the result is printed as JSON
on stdout. Exit status: 0 every part works, 1 a part failed or there are no GPIO pins here,
2 invalid input (a bad pin map).

With --mock the check runs against gpiozero's MockFactory without questions: the LEDs and the
buzzer are read back from the mock pins and the buttons are pressed by the program (a rehearsal,
and what the tests run)."""


def register(sub):
    p = sub.add_parser("hardware", help="check the box's wiring: LEDs, buzzer and buttons",
                       description="The GPIO panel: buttons, LEDs and buzzer (see hardware/).")
    hw = p.add_subparsers(dest="hardware_command", metavar="SUBCOMMAND")
    hw.required = True

    c = hw.add_parser("check", help="walk through every LED, the buzzer and each button",
                      description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("--mock", action="store_true",
                   help="use gpiozero's MockFactory and answer every question by reading the mock pins")
    c.add_argument("--pins", metavar="FILE", default=None,
                   help="pin map TOML file (default: $COMPANION_PINS, else hardware/pins.toml)")
    c.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                   help="how long to wait for each button press (default 30)")
    c.set_defaults(func=run_check)

    m = hw.add_parser("pins", help="print the pin map (BCM and physical pins) as JSON",
                      description="Print the pin map in use (BCM and physical header pins) as JSON.")
    m.add_argument("--pins", metavar="FILE", default=None,
                   help="pin map TOML file (default: $COMPANION_PINS, else hardware/pins.toml)")
    m.set_defaults(func=run_pins)


def run_pins(args):
    from companion.gpio import PHYSICAL_PIN, load_pin_map

    pm = load_pin_map(args.pins)
    doc = pm.to_json()
    doc["physical"] = {
        **{f"buttons.{k}": PHYSICAL_PIN[v] for k, v in pm.buttons.items()},
        **{f"leds.{k}": PHYSICAL_PIN[v] for k, v in pm.leds.items()},
        "buzzer": PHYSICAL_PIN[pm.buzzer],
    }
    emit(doc)


class Prompter:
    """Questions on stderr, answers from stdin (interactive) or from the mock pins (--mock)."""

    def __init__(self, stream_in=None, stream_err=None):
        self.inp = stream_in or sys.stdin
        self.err = stream_err or sys.stderr

    def say(self, text: str) -> None:
        print(text, file=self.err, flush=True)

    def ask_yes(self, question: str) -> bool:
        while True:
            self.err.write(f"{question} [y/n] ")
            self.err.flush()
            line = self.inp.readline()
            if not line:  # end of input: counted as "no"
                self.err.write("\n")
                return False
            answer = line.strip().lower()
            if answer in ("y", "yes", "s", "si", "sì"):
                return True
            if answer in ("n", "no"):
                return False


def check_box(pin_map, factory, mock: bool, prompter: Prompter, timeout: float = 30.0) -> dict:
    """Run every check on the pins of ``factory``; returns ``{"ok", "checks": [...]}``."""
    from gpiozero import LED, Button, Buzzer

    from companion.gpio import BUTTONS, LEDS, PHYSICAL_PIN

    checks = []
    devices = []

    def record(part, bcm, ok, note=""):
        checks.append({"part": part, "bcm": bcm, "physical": PHYSICAL_PIN.get(bcm), "ok": ok,
                       **({"note": note} if note else {})})
        prompter.say(f"  {'ok  ' if ok else 'FAIL'} {part}{': ' + note if note else ''}")

    try:
        leds = {n: LED(pin_map.leds[n], initial_value=False, pin_factory=factory) for n in LEDS}
        devices += leds.values()
        buzzer = Buzzer(pin_map.buzzer, initial_value=False, pin_factory=factory)
        devices.append(buzzer)
        buttons = {n: Button(pin_map.buttons[n], pull_up=True, bounce_time=pin_map.bounce_s or None,
                             pin_factory=factory) for n in BUTTONS}
        devices += buttons.values()

        prompter.say("LEDs: each one lights alone.")
        for name, led in leds.items():
            bcm = pin_map.leds[name]
            led.on()
            if mock:
                others_off = all(not o.pin.state for n, o in leds.items() if n != name)
                ok = bool(led.pin.state) and others_off
            else:
                ok = prompter.ask_yes(f"Is the {name.upper()} LED (GPIO{bcm}, pin {PHYSICAL_PIN[bcm]}) lit, "
                                      f"and only it?")
            led.off()
            if mock:
                ok = ok and not led.pin.state
            record(f"led.{name}", bcm, ok, "" if ok else "not lit: check polarity (long leg to the resistor)")

        prompter.say("Buzzer: one beep.")
        if mock:
            before = len(buzzer.pin.states)
            buzzer.on()
            buzzer.off()
            went = [s.state for s in buzzer.pin.states[before:]]
            ok = went == [True, False]
        else:
            buzzer.beep(on_time=0.4, off_time=0.1, n=1, background=False)
            ok = prompter.ask_yes(f"Did the buzzer (GPIO{pin_map.buzzer}, pin {PHYSICAL_PIN[pin_map.buzzer]}) beep?")
        record("buzzer", pin_map.buzzer, ok, "" if ok else "silent: an ACTIVE buzzer? transistor wiring?")

        prompter.say("Buttons: press each one when asked.")
        for name, button in buttons.items():
            bcm = pin_map.buttons[name]
            got = []
            pressed = threading.Event()
            released = threading.Event()

            def on_press(which):
                got.append(which)
                pressed.set()

            for n, b in buttons.items():
                b.when_pressed = (lambda which=n: on_press(which))
            button.when_released = released.set
            prompter.say(f"  press and release {name.upper()} (GPIO{bcm}, pin {PHYSICAL_PIN[bcm]})")
            if mock:
                button.pin.drive_low()
                button.pin.drive_high()
            ok = pressed.wait(timeout) and released.wait(timeout)
            note = ""
            if not got:
                ok, note = False, f"no press within {timeout:g} s"
            elif got[0] != name:
                ok, note = False, f"{got[0].upper()} answered instead: two wires swapped?"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # gpiozero warns on callbacks set to None
                for b in buttons.values():
                    b.when_pressed = None
                    b.when_released = None
            record(f"button.{name}", bcm, ok, note)
    finally:
        for d in devices:
            try:
                d.close()
            except Exception:
                pass
    return {"ok": all(c["ok"] for c in checks), "checks": checks}


def _writable_cwd() -> None:
    """lgpio (gpiozero's pin library on a Pi) creates its notification pipes in the current
    directory; from a folder the user cannot write (e.g. ``sudo -u companion`` in someone's home)
    it fails, so the check moves to the temporary folder first (it reads no relative path)."""
    import os
    import tempfile

    if not os.access(".", os.W_OK):
        os.chdir(tempfile.gettempdir())


def run_check(args):
    from companion.gpio import load_pin_map, make_factory

    pm = load_pin_map(args.pins)
    if args.timeout <= 0:
        from companion.base.errors import InputError

        raise InputError("must be more than 0 seconds", "--timeout")
    if not args.mock:
        _writable_cwd()
    factory, mock, reason = make_factory("mock" if args.mock else "auto")
    if factory is None:
        print(f"error: {reason}; rehearse with --mock", file=sys.stderr)
        return 1
    prompter = Prompter()
    prompter.say(f"companion hardware check ({reason}); pin map {pm.source}")
    try:
        result = check_box(pm, factory, mock, prompter, args.timeout)
    finally:
        factory.close()
    result["mock"] = mock
    emit(result)
    return 0 if result["ok"] else 1
