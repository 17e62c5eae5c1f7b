"""``companion pin reset``: the way back in when the organiser PIN is forgotten.

It needs the box's database (a shell on the Pi, as the user the service runs as): that is the
physical access the recovery asks for. It prints a one-time setup code; the organiser sets a new PIN
with it at /login. Nothing else changes until the code is used; using it ends every organiser session.
"""

from __future__ import annotations

import sys

from companion.cli import data_dir_arg, open_existing_store


def register(sub):
    p = sub.add_parser("pin", help="the organiser PIN (reset a forgotten one)",
                       description="The organiser PIN. Run on the box itself: it needs the database.")
    psub = p.add_subparsers(dest="pin_command", metavar="ACTION", required=True)
    r = psub.add_parser(
        "reset", help="print a one-time setup code for choosing a new PIN at /login",
        description="Print a one-time setup code (valid 60 minutes; a new one replaces it) with which the "
                    "organiser chooses a new PIN at /login, while the server runs. The old PIN keeps "
                    "working until then; setting the new one ends every organiser session.")
    data_dir_arg(r)
    r.set_defaults(func=run_reset)


def run_reset(args):
    from companion.access import Access

    with open_existing_store(args) as store:
        code, expires = Access(store).create_reset_code()
    sys.stdout.write(f"Setup code (valid until {expires}, once): choose the new organiser PIN at /login with it\n")
    sys.stdout.write(code + "\n")
