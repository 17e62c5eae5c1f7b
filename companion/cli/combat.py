"""``companion combat``: resolve (or roll) one roll of a conquest-italy combat."""

import re

from companion.cli import emit
from companion.base.errors import InputError


def register(sub):
    p = sub.add_parser(
        "combat", help="conquest-italy: resolve or roll one combat roll",
        description="One roll of a conquest-italy combat. The attacker rolls 1 to min(3, A-1) dice (one unit "
                    "stays home), the defender must roll min(3, D); both sorted high to low and compared in "
                    "pairs, ties to the defender, each lost pair costs one unit. Dice given are checked and "
                    "resolved; dice omitted are rolled (the OS's secure random source). Prints JSON: "
                    "attacker_dice, defender_dice (sorted), attacker_losses, defender_losses, attacker_left, "
                    "defender_left, conquered.")
    p.add_argument("--attacker", type=int, required=True, metavar="A",
                   help="units in the attacking territory (at least 2)")
    p.add_argument("--defender", type=int, required=True, metavar="D", help="units in the defending territory")
    p.add_argument("--attack-dice", metavar="6,3,1", default=None, help="the attacker's dice (1 to min(3, A-1))")
    p.add_argument("--defend-dice", metavar="6,2,1", default=None, help="the defender's dice (exactly min(3, D))")
    p.add_argument("--dice", type=int, metavar="K", default=None,
                   help="how many dice the attacker rolls (default: the most allowed)")
    p.add_argument("--seed", type=int, default=None,
                   help="roll with a seeded pseudo-random generator instead (reproducible demos)")
    p.set_defaults(func=run)


def parse_dice(text: str, option: str) -> list[int]:
    out = []
    for n, part in enumerate(text.split(",")):
        part = part.strip()
        # ASCII digits only: str.isdigit() also accepts "²" or "--1", which int() then refuses
        if not re.fullmatch(r"-?[0-9]+", part):
            raise InputError(f"dice are numbers separated by commas, like 6,3,1 (item {n + 1} is {part!r})", option)
        out.append(int(part))
    return out


def run(args):
    from companion.games.conquest_odds import DiceError, resolve

    attack = parse_dice(args.attack_dice, "--attack-dice") if args.attack_dice is not None else None
    defend = parse_dice(args.defend_dice, "--defend-dice") if args.defend_dice is not None else None
    rng = None
    if args.seed is not None:
        import random

        rng = random.Random(args.seed)
    fields = {"attacker": "--attacker", "defender": "--defender", "attack_dice": "--attack-dice",
              "defend_dice": "--defend-dice", "dice": "--dice"}
    try:
        result = resolve(args.attacker, args.defender, attack, defend, dice=args.dice, rng=rng, fields=fields)
    except DiceError as exc:
        raise InputError(exc.message, exc.field) from None
    emit(result)
