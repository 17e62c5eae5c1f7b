"""``companion tournament``: the tournament days stored on the box (list, show, standings as JSON or CSV).
Organisers run the day on the web pages (/tournaments); this reads the same rows (docs/tournament.md)."""

from companion.cli import data_dir_arg, emit, open_existing_store


def register(sub):
    p = sub.add_parser(
        "tournament", help="tournament days: list, show one, its standings (JSON or CSV)",
        description="The tournament days stored in the database (run them at /tournaments). Standings: club "
                    "points (the fan club's table by table size, shared places, bonuses), then game points "
                    "(conquest: the values of the cities held at the end), then head-to-head among the tied "
                    "players; still equal, a shared place.")
    tsub = p.add_subparsers(dest="tournament_command", metavar="ACTION", required=True)
    ls = tsub.add_parser("list", help="the stored tournaments (id, name, date, game)")
    data_dir_arg(ls)
    ls.set_defaults(func=run_list)
    sh = tsub.add_parser("show", help="one tournament: players, rounds with their tables and matches, standings")
    sh.add_argument("id", metavar="ID")
    data_dir_arg(sh)
    sh.set_defaults(func=run_show)
    st = tsub.add_parser("standings", help="one tournament's standings")
    st.add_argument("id", metavar="ID")
    st.add_argument("--csv", action="store_true", help="CSV (rank, player, points, game_points, head_to_head, "
                                                     "matches, wins) instead of JSON")
    st.add_argument("--dialect", choices=["plain", "excel-it", "excel-en"], default="plain",
                    help="with --csv: plain (default: \",\", \"1.5\"), excel-it (\";\", \"1,5\", a UTF-8 BOM: an "
                         "Italian spreadsheet) or excel-en (\",\", \"1.5\", the BOM)")
    data_dir_arg(st)
    st.set_defaults(func=run_standings)


def _document(args) -> dict:
    from companion.services import tournaments as tournament_days
    from companion.services.matches import MatchService

    store = open_existing_store(args)
    try:
        return tournament_days.document(store, MatchService(store), args.id)
    finally:
        store.close()


def run_list(args) -> int:
    from companion.storage import tournaments

    store = open_existing_store(args)
    try:
        emit({"tournaments": tournaments.list_all(store)})
    finally:
        store.close()
    return 0


def run_show(args) -> int:
    emit(_document(args))
    return 0


def run_standings(args) -> int:
    import sys

    from companion.core import tournament
    from companion.core.season import DIALECTS

    doc = _document(args)
    if args.csv:  # names that a spreadsheet would run as formulas come out as text
        sys.stdout.write(tournament.standings_csv(doc["standings"], DIALECTS[args.dialect], as_json=True))
    else:
        emit({"id": doc["id"], "name": doc["name"], "rounds_played": doc["rounds_played"],
              "finished": doc["finished"], "standings": doc["standings"]})
    return 0
