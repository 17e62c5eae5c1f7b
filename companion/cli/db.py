"""``companion db rebuild``: recompute the rows derived from the match logs."""

from __future__ import annotations

from companion.cli import data_dir_arg, emit, open_store


def register(sub):
    p = sub.add_parser("db", help="maintain the database",
                       description="Maintain the database of the box.")
    dsub = p.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    r = dsub.add_parser(
        "rebuild", help="recompute every match's status and the seasons' app results from the event logs",
        description="Recompute the rows derived from the match event logs: each match's status (open or "
                    "ended) and the season results of matches played with the app. The event logs are the "
                    "record; nothing in them changes. Safe to run while the server runs.")
    data_dir_arg(r)
    r.set_defaults(func=run_rebuild)


def run_rebuild(args):
    from companion.services.matches import MatchService

    with open_store(args) as store:
        emit(MatchService(store).rebuild())
