from companion.cli import emit
from companion.games import GAMES, game_module
from companion.base.jsonio import load_json


def register(sub):
    p = sub.add_parser("score", help="score a game from a JSON document",
                       description="Score a game. The document's format is in schemas/<GAME>.score.schema.json.")
    p.add_argument("game", metavar="GAME", choices=sorted(GAMES), help=", ".join(sorted(GAMES)))
    p.add_argument("file", metavar="FILE", help="JSON document, or - for stdin")
    p.set_defaults(func=run)


def quick(words: list[str]) -> dict | None:
    """``GAME FILE`` as the parser above reads it, without one (``companion.cli.QUICK``); None otherwise."""
    if len(words) == 2 and words[0] in GAMES and (words[1] == "-" or not words[1].startswith("-")):
        return {"game": words[0], "file": words[1]}
    return None


def run(args):
    module = game_module(args.game)
    doc = load_json(args.file)
    emit(module.score(doc))
