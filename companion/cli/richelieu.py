"""``companion richelieu``: Richelieu's intrigue resolution and turn helper."""

from companion.cli import emit
from companion.base.jsonio import load_json


def register(sub):
    p = sub.add_parser(
        "richelieu", help="Richelieu: resolve an intrigue, plan a turn",
        description="Richelieu helpers. End-game scoring is `companion score richelieu FILE`.")
    rsub = p.add_subparsers(dest="richelieu_command", metavar="ACTION", required=True)

    r = rsub.add_parser(
        "resolve", help="resolve an intrigue box (both cards)",
        description="Resolve an intrigue: totals of both cards (Grey Eminence and Queen worth 3; a tie goes "
                    "to the Cardinal), first and second place on the winning card (ties: the leftmost agent), "
                    "rewards, the sheet to the first player, the Cardinal's move. Input format: "
                    "schemas/richelieu.resolve.schema.json.")
    r.add_argument("file", metavar="FILE", help="JSON document, or - for stdin")
    r.set_defaults(func=run_resolve)

    a = rsub.add_parser(
        "actions", help="the turn helper: actions allowed and what they cost",
        description="How many actions a player has (2 when the prestige marker is behind the Cardinal, else 1), "
                    "what each costs, and the tracks after the planned actions (refused: exit 2 naming the "
                    "action). Input format: schemas/richelieu.actions.schema.json.")
    a.add_argument("file", metavar="FILE", help="JSON document, or - for stdin")
    a.set_defaults(func=run_actions)


def run_resolve(args):
    from companion.games.richelieu import resolve

    emit(resolve(load_json(args.file)))


def run_actions(args):
    from companion.games.richelieu import plan

    emit(plan(load_json(args.file)))
