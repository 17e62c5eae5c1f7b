"""``companion pin``: the organiser PIN, from the box itself (it opens the database file, so it runs on the
Pi, as the service user: ``sudo -u companion env COMPANION_DATA=/var/lib/companion companion pin reset``)."""

from __future__ import annotations

import sys

from companion.cli import data_dir_arg, emit, open_store


def register(sub):
    p = sub.add_parser("pin", help="the organiser PIN: status, or a one-time setup code to set a new one",
                       description="The organiser PIN, on the box: `pin status` says whether one is set; "
                                   "`pin reset` forgets it, signs every organiser out and prints a one-time "
                                   "setup code with which /login sets a new PIN.")
    psub = p.add_subparsers(dest="pin_command", metavar="ACTION", required=True)
    s = psub.add_parser("status", help="whether a PIN is set (JSON)")
    data_dir_arg(s)
    s.set_defaults(func=run_status)
    r = psub.add_parser("reset", help="forget the PIN; prints a one-time setup code alone on the last line",
                        description="Forget the organiser PIN (if one is set), sign every organiser out, and "
                                    "print a new one-time setup code alone on the last line: open /login and "
                                    "enter it to choose a new PIN. A newer code replaces an older one; the "
                                    "code printed by `companion serve` at first run works too.")
    r.add_argument("--hours", type=float, default=None, help="the code expires after this many hours (default 24)")
    data_dir_arg(r)
    r.set_defaults(func=run_reset)


def run_status(args):
    from companion.access import Access

    with open_store(args) as store:
        access = Access(store)
        emit({"pin_set": access.pin_is_set()})


def run_reset(args):
    from companion.errors import InputError
    from companion.access import SETUP_CODE_HOURS, Access

    hours = SETUP_CODE_HOURS if args.hours is None else args.hours
    if not 0 < hours <= 24 * 30:
        raise InputError("must be more than 0 and at most 720", "--hours")
    with open_store(args) as store:
        info = Access(store).reset_pin(hours)
    done = "forgot the organiser PIN and signed every organiser out; " if info["pin_was_set"] else ""
    sys.stdout.write(f"{done}choose a new PIN at /login with this setup code (one use, valid until "
                     f"{info['expires_at']}):\n")
    sys.stdout.write(info["setup_code"] + "\n")
