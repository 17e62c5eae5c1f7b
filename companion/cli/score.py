from companion.cli import emit
from companion.games import GAMES, game_module
from companion.base.jsonio import load_json


def register(sub):
    p = sub.add_parser("score", help="score a game from a JSON document",
                       description="Score a game. The document's format is in schemas/<GAME>.score.schema.json.")
    p.add_argument("game", metavar="GAME", choices=sorted(GAMES), help=", ".join(sorted(GAMES)))
    p.add_argument("file", metavar="FILE", help="JSON document, or - for stdin")
    p.set_defaults(func=run)


def run(args):
    module = game_module(args.game)
    doc = load_json(args.file)
    emit(module.score(doc))
