"""``companion reinforcements``: the units a conquest-italy player receives at the start of a turn."""

from companion.cli import emit
from companion.base.jsonio import load_json


def register(sub):
    p = sub.add_parser(
        "reinforcements", help="conquest-italy: units received at the start of a turn",
        description="Units a conquest-italy player receives at the start of a turn: territories // 3, plus the "
                    "bonus of every macro-region held whole, plus a traded set of three territory cards "
                    "(basil + mozzarella + tomato = 10, other sets from the map; +2 per traded card whose city "
                    "the player holds); at most 125 units on the map, the rest is not placed. Input: "
                    "schemas/conquest-italy.reinforcements.schema.json (the default map unless \"map\" is given).")
    p.add_argument("file", metavar="FILE", help="JSON document, or - for stdin")
    p.set_defaults(func=run)


def run(args):
    from companion.games.conquest_italy import reinforcements_doc

    emit(reinforcements_doc(load_json(args.file)))
