from companion.cli import data_dir_arg, emit, open_store
from companion.jsonio import load_json


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

    ls = msub.add_parser("list", help="list stored matches")
    ls.add_argument("--status", choices=["open", "ended"], default=None)
    data_dir_arg(ls)
    ls.set_defaults(func=run_list)


def run_state(args):
    from companion.matches import check_export, fold_export
    from companion.timeutil import WallClock, parse_iso

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
    from companion.service import MatchService

    doc = load_json(args.file)
    with open_store(args) as store:
        match_id, _fold = MatchService(store).import_match(doc)
    emit({"imported": match_id, "events": len(doc["events"])})


def run_list(args):
    with open_store(args) as store:
        emit({"matches": store.list_matches(args.status)})
