"""``companion pin``: the organiser PIN from the box itself. ``pin status`` says whether one is set; ``pin
reset`` is the way back in when it is forgotten.

Both need the box's database (a shell on the Pi, as the user the service runs as:
``sudo -u companion env COMPANION_DATA=/var/lib/companion companion pin reset``): that is the physical
access the recovery asks for. ``pin reset`` prints a one-time setup code; the organiser sets a new PIN with
it at /login (at first run too). Nothing else changes until the code is used; using it ends every organiser
session.
"""

from __future__ import annotations

import sys

from companion.cli import data_dir_arg, emit, open_existing_store, open_store


def register(sub):
    p = sub.add_parser("pin", help="the organiser PIN: whether one is set; reset a forgotten one",
                       description="The organiser PIN. Run on the box itself: it needs the database.")
    psub = p.add_subparsers(dest="pin_command", metavar="ACTION", required=True)
    s = psub.add_parser("status", help="whether a PIN is set (JSON)",
                        description="Whether an organiser PIN is set (JSON). At first run it makes the empty "
                                    "database, as the server would.")
    data_dir_arg(s)
    s.set_defaults(func=run_status)
    r = psub.add_parser(
        "reset", help="print a one-time setup code for choosing a new PIN at /login",
        description="Print a one-time setup code (valid 60 minutes unless --hours says otherwise; a new one "
                    "replaces it), alone on the last line, with which the organiser chooses a new PIN at /login "
                    "while the server runs. The old PIN keeps working until then; setting the new one ends "
                    "every organiser session.")
    r.add_argument("--hours", type=float, default=None,
                   help="how long the code is valid, in hours (default 1; at most 720)")
    data_dir_arg(r)
    r.set_defaults(func=run_reset)


def run_status(args):
    from companion.services.access import Access

    with open_store(args) as store:
        emit({"pin_set": Access(store).pin_is_set()})


def run_reset(args):
    from companion.services.access import RESET_CODE_MINUTES, Access
    from companion.base.errors import InputError

    minutes = RESET_CODE_MINUTES if args.hours is None else args.hours * 60
    if not 0 < minutes <= 720 * 60:
        raise InputError("must be more than 0 and at most 720", "--hours")
    with open_existing_store(args) as store:
        code, expires = Access(store).create_reset_code(minutes)
    sys.stdout.write(f"Setup code (valid until {expires}, once): choose the new organiser PIN at /login with it\n")
    sys.stdout.write(code + "\n")
