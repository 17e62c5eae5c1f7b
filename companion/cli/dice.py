"""``companion dice scan``: the smart dice in range of the box's Bluetooth radio (docs/dice.md)."""

from __future__ import annotations

import argparse
import time

from companion.cli import emit

DESCRIPTION = """\
Listen for N seconds (default 8) and list every smart die heard: Pixels dice by their advertisements
(name, roll state, face up, battery, signal), GoDice by their names (their faces are read once a table's
set binds them). Shake a die to wake it up. JSON on stdout, the most recently heard first.

Needs the optional extra (pip install 'companion[dice]': bleak) and a Bluetooth LE adapter; without
either it says which in one line on stderr and exits 2. --mock FILE replays advertisements written by
the tests' MockDice instead of the radio."""


def register(sub):
    p = sub.add_parser("dice", help="smart dice over Bluetooth LE: list the dice in range",
                       description="Smart dice over Bluetooth LE (docs/dice.md).")
    d = p.add_subparsers(dest="dice_command", metavar="SUBCOMMAND")
    d.required = True
    s = d.add_parser("scan", help="list the smart dice in range", description=DESCRIPTION,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("--seconds", type=float, default=8.0, metavar="N", help="how long to listen (default 8)")
    s.add_argument("--mock", metavar="FILE", default=None, help="replay MockDice advertisements from FILE")
    s.set_defaults(func=run_scan)


def run_scan(args):
    from companion import dice
    from companion.base.errors import InputError

    if not 0.5 <= args.seconds <= 600:
        raise InputError("must be from 0.5 to 600 seconds", "--seconds")
    if args.mock:
        src = dice.MockSource(args.mock)
        radio = dice.DiceRadio(src, mode="mock")
        src.start(radio, thread=False)
        src.read_new()
    else:
        radio = dice.attach("auto")
        if radio.source is None:
            raise InputError("{reason}", "bluetooth", reason=radio.status()["reason"])
        try:
            time.sleep(args.seconds)
        finally:
            radio.close()
    emit({"dice": radio.heard(), "radio": radio.status()})
