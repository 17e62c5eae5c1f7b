"""``companion odds``: exact battle odds of conquest-italy (dynamic programme, no simulation)."""

import sys

from companion.cli import emit
from companion.base.errors import InputError


def register(sub):
    p = sub.add_parser(
        "odds", help="conquest-italy: exact odds of a battle",
        description="Exact odds of a conquest-italy battle: from A units in the attacking territory against D, "
                    "maximal rolls (min(3, a-1) dice against min(3, d)) are repeated until the defender has 0 "
                    "(conquest) or the attacker is down to K units or fewer (a roll can overshoot below K). "
                    "Prints JSON: p_conquer, expected_attacker_remaining (units left in the attacking territory "
                    "when the battle stops), expected_defender_remaining, outcomes [{attacker, defender, p}]. "
                    "A and D are 1 to 125 (nobody has more units on the map).")
    p.add_argument("attacker", type=int, metavar="A", help="units in the attacking territory")
    p.add_argument("defender", type=int, metavar="D", help="units in the defending territory")
    p.add_argument("--stop-at", type=int, default=1, metavar="K",
                   help="stop attacking at K units or fewer (default 1: nothing left to attack with)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--table", action="store_true",
                   help="print P(conquer) for every attacker 1..A and defender 1..D as CSV (6 decimals)")
    g.add_argument("--target", type=float, default=None, metavar="P",
                   help="print the smallest attacker (at most A units) whose P(conquer) against D reaches P")
    p.set_defaults(func=run)


def quick(words: list[str]) -> dict | None:
    """``A D`` (plain decimal numbers) as the parser above reads them, without one (``companion.cli.QUICK``);
    None otherwise."""
    if len(words) == 2 and all(w.isascii() and w.isdigit() for w in words):
        return {"attacker": int(words[0]), "defender": int(words[1]), "stop_at": 1, "table": False, "target": None}
    return None


def run(args):
    from companion.games.conquest_odds import DiceError, MAX_UNITS, battle, conquer_table, smallest_attacker

    names = {"attacker": "A", "defender": "D", "stop_at": "--stop-at"}
    if args.target is not None and not 0 < args.target <= 1:
        raise InputError("a probability above 0 and at most 1", "--target")
    try:
        if args.table:
            if args.attacker > MAX_UNITS or args.defender > MAX_UNITS or args.attacker < 1 or args.defender < 1:
                battle(args.attacker, args.defender, args.stop_at)  # raises the range error
            rows = conquer_table(args.attacker, args.defender, args.stop_at)
            out = ["attacker\\defender," + ",".join(str(d) for d in range(1, args.defender + 1))]
            for a in range(1, args.attacker + 1):
                out.append(f"{a}," + ",".join(f"{p:.6f}" for p in rows[a][1:]))
            sys.stdout.write("\n".join(out) + "\n")
            return 0
        if args.target is not None:
            battle(min(args.attacker, MAX_UNITS + 1), args.defender, args.stop_at)  # range checks
            hit = smallest_attacker(args.defender, args.target, args.stop_at, limit=args.attacker)
            emit({"defender": args.defender, "target": args.target, "stop_at": args.stop_at,
                  "limit": args.attacker, "attacker": hit[0] if hit else None,
                  "p_conquer": hit[1] if hit else None})
            return 0
        emit(battle(args.attacker, args.defender, args.stop_at))
    except DiceError as exc:
        raise InputError(exc.message, names.get(exc.field, exc.field)) from None
    return 0
