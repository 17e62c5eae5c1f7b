import sys

from companion.cli import emit
from companion.base.errors import InputError
from companion.games import game_ids, game_module, map_games
from companion.base.jsonio import load_json


def register(sub):
    p = sub.add_parser("map", help="check a board/map file and draw it as SVG",
                       description="Board and map files (schemas/<game>.map.schema.json).")
    msub = p.add_subparsers(dest="map_command", metavar="ACTION", required=True)
    c = msub.add_parser("check", help="validate a map file and draw it as an SVG",
                        description="Validate a map file; print a JSON report; with --svg write a drawing "
                                    "to compare with the physical board.")
    c.add_argument("file", metavar="FILE", help="map JSON, or - for stdin")
    c.add_argument("--game", choices=game_ids(), default=None,
                   help="which game's map, of the games that have a map file (default: the document's "
                        "\"game\" field)")
    c.add_argument("--svg", metavar="OUT", default=None, help="write the drawing here (- for stdout)")
    c.add_argument("--cities", type=int, default=None,
                   help="conquest-italy: the number of cities expected (default 42)")
    c.set_defaults(func=run_check)


def run_check(args):
    doc = load_json(args.file)
    game = args.game or (doc.get("game") if isinstance(doc, dict) else None)
    if game not in game_ids() or not hasattr(game_module(game), "check_map"):  # imports only the one game
        raise InputError(f"say which game's map this is with --game ({', '.join(map_games())})", "$.game")
    module = game_module(game)
    options = {}
    if args.cities is not None:
        options["cities"] = args.cities
    report = module.check_map(doc, **options)
    if args.svg:
        svg = module.map_svg(doc)
        if args.svg == "-":
            sys.stdout.write(svg)
            return 0
        with open(args.svg, "w", encoding="utf-8") as fh:
            fh.write(svg)
        report = dict(report, svg=args.svg)
    emit(report)
