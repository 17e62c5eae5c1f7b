from companion.cli import data_dir_arg, emit, open_existing_store, open_store
from companion.games import game_ids
from companion.base.jsonio import load_json


def register(sub):
    p = sub.add_parser("match", help="fold, export and import matches",
                       description="Matches are append-only event logs; their state is a fold of the events.")
    msub = p.add_subparsers(dest="match_command", metavar="ACTION", required=True)

    s = msub.add_parser("state", help="fold an exported match and print its state",
                        description="Fold an exported match document (FILE or -) and print its state at an "
                                    "instant (default: now).")
    s.add_argument("file", metavar="FILE")
    s.add_argument("--at", metavar="ISO-8601", default=None,
                   help="the instant: events stamped later are left out (default: now, with every event, "
                        "and never before the last one)")
    s.set_defaults(func=run_state)

    e = msub.add_parser("export", help="print a stored match as one JSON document")
    e.add_argument("match_id", metavar="MATCH_ID")
    data_dir_arg(e)
    e.set_defaults(func=run_export)

    i = msub.add_parser("import", help="store a match from an exported JSON document")
    i.add_argument("file", metavar="FILE")
    data_dir_arg(i)
    i.set_defaults(func=run_import)

    r = msub.add_parser(
        "result", help="record a match by its final result only (a table that scored on paper)",
        description="Store a match of GAME played without tracking: the players in seat order with their final "
                    "places (ties share a place: 1, 2, 2, 4), or enter the places of an existing result-only match "
                    "(--match). The match ends with them and its season takes the result (docs/rulings.md, "
                    "\"Final result only\").",
        epilog="Example: companion match result --game richelieu Anna=1 Bruno=2 Carla=2. Conquest only: "
               "Bruno=1:objective (completed the objective), Dario=4:eliminated.")
    which = r.add_mutually_exclusive_group(required=True)
    which.add_argument("--game", choices=game_ids(), help="a new match of this game (players in the order given)")
    which.add_argument("--match", metavar="MATCH_ID", dest="match_id",
                       help="an existing match created with tracking \"result\"")
    r.add_argument("places", nargs="+", metavar="PLAYER=PLACE[:objective|:eliminated]")
    r.add_argument("--label", default="", help="the table's label (a new match)")
    data_dir_arg(r)
    r.set_defaults(func=run_result)

    ls = msub.add_parser("list", help="list stored matches")
    ls.add_argument("--status", choices=["open", "ended"], default=None)
    data_dir_arg(ls)
    ls.set_defaults(func=run_list)


def run_state(args):
    from companion.core.match import check_export, fold_export
    from companion.base.timeutil import WallClock, parse_iso

    doc = load_json(args.file)
    if args.at:
        parse_iso(args.at, "--at")  # refuse a bad instant before reading further
    check_export(doc)  # schema, seqs, time order, every event legal; errors name $.events[i]...
    if args.at:
        # the instant as given (full precision: an event at .0005 s is in at --at ...00.0005Z)
        f = fold_export(doc, until=args.at)
        emit(f.view(args.at))
    else:
        # now: every event is in, even one stamped ahead of this computer's clock (a Pi without a
        # battery clock may have stamped the export ahead); the view is never before the last event
        f = fold_export(doc)
        emit(f.view(WallClock().now_iso()))


def run_export(args):
    with open_store(args) as store:
        emit(store.export_match(args.match_id))


def run_import(args):
    from companion.services.matches import MatchService

    doc = load_json(args.file)
    with open_store(args) as store:
        match_id, _fold = MatchService(store).import_match(doc)
    emit({"imported": match_id, "events": len(doc["events"])})


def run_list(args):
    with open_store(args) as store:
        emit({"matches": store.list_matches(args.status)})


def parse_places(args: list[str]) -> list[dict]:
    """``PLAYER=PLACE[:objective|:eliminated]`` arguments as the ``places`` of ``result.entered``."""
    from companion.base.errors import InputError

    out = []
    for arg in args:
        name, eq, rest = arg.rpartition("=")
        parts = rest.split(":")
        if not eq or not name or not parts[0].isdigit():
            raise InputError(f"{arg!r}: give PLAYER=PLACE (a whole number), e.g. Anna=1", "PLAYER=PLACE")
        row: dict = {"player": name, "place": int(parts[0])}
        for flag in parts[1:]:
            if flag not in ("objective", "eliminated"):
                raise InputError(f"{arg!r}: after the place, :objective or :eliminated, not {flag!r}", "PLAYER=PLACE")
            row[flag] = True
        out.append(row)
    return out


def run_result(args):
    import re

    from companion.base.errors import CompanionError, InputError
    from companion.services.matches import MatchService

    places = parse_places(args.places)
    with (open_store(args) if args.game else open_existing_store(args)) as store:
        service = MatchService(store)
        try:
            if args.game:
                from companion.core.match import RESULT, Fold

                players = [p["player"] for p in places]
                if len(set(players)) != len(players):
                    raise InputError("a player is named twice", "PLAYER=PLACE")
                # checked before the match is stored: a refused result leaves no match behind
                Fold(args.game, players, {"tracking": "result"}).check({"type": RESULT, "data": {"places": places}})
                match = service.create(args.game, players, {"tracking": "result"}, label=args.label)
            else:
                match = store.get_match(args.match_id)
            event = service.enter_result(match["id"], places)
        except CompanionError as exc:
            m = re.match(r"places\[(\d+)\]", exc.field or "")
            if m and int(m.group(1)) < len(args.places):
                raise InputError(f"{args.places[int(m.group(1))]!r}: {exc.message}", "PLAYER=PLACE") from None
            raise
        emit({"match": match["id"], "seq": event["seq"], "ranking": service.fold(match["id"]).final_ranking()})
