"""Dice combat of the conquest game and the exact odds of a battle. Pure, no I/O, light imports
(the ``companion odds`` command must start and answer a 125 x 125 table well under 300 ms).

Rulings (docs/rulings.md#combat-roll and #battle-odds):

- The attacker rolls one die per attacking unit, at most 3, and leaves 1 unit at home: with ``A`` units
  at most ``min(3, A - 1)`` dice (fewer is allowed). The defender must roll ``min(3, D)`` dice.
- Both sides are sorted descending and compared pairwise, as many pairs as the smaller number of dice;
  the attacker wins a pair only when strictly higher (ties go to the defender); each lost pair costs
  the loser one unit.
- A *battle* repeats maximal rolls (``min(3, a - 1)`` against ``min(3, d)``) until the defender has 0
  units (conquest) or the attacker is down to ``stop_at`` units or fewer (default 1: nothing left to
  attack with). A roll may take the attacker below ``stop_at`` (e.g. 4 units rolling 3 dice with
  ``stop_at`` 3 may end at 1): the distribution reports where the battle really ends.

The odds are an exact dynamic programme over (attacker, defender) states: every roll removes at least
one unit, so the states can be visited in an order where every successor is already known (no Monte
Carlo, no matrix inversion). ``exact=True`` runs the same programme on ``fractions.Fraction``.
"""

from __future__ import annotations

FACES = 6
MAX_DICE = 3
MAX_UNITS = 125  # a player never has more than 125 units on the map

# Outcomes of one roll of i attacking dice against j defending dice, as counts out of 6 ** (i + j).
# ROLL_COUNTS[i][j][k] = number of outcomes in which the defender loses k units (and the attacker
# min(i, j) - k). Derived by enumerating all 6 ** (i + j) rolls; tests/games/test_conquest_odds.py
# enumerates them again independently.
ROLL_COUNTS = {
    1: {1: (21, 15), 2: (161, 55), 3: (1071, 225)},
    2: {1: (91, 125), 2: (581, 420, 295), 3: (4816, 1981, 979)},
    3: {1: (441, 855), 2: (2275, 2611, 2890), 3: (17871, 12348, 10017, 6420)},
}


from companion.base.errors import render  # noqa: E402


class DiceError(ValueError):
    """Illegal dice or unit counts. ``field`` names the offending argument (``attack_dice[1]``)."""

    def __init__(self, message: str, field: str | None = None, /, **params):
        self.template, self.params = message, params  # a sentence template (companion/base/errors.py)
        self.message = render(message, params) if params else message
        super().__init__(self.message)
        self.field = field


def max_attack_dice(attacker: int) -> int:
    """The most dice an attacker with ``attacker`` units in the territory may roll."""
    return max(0, min(MAX_DICE, attacker - 1))


def defend_dice_count(defender: int) -> int:
    """The number of dice the defender must roll."""
    return max(0, min(MAX_DICE, defender))


def roll_probabilities(exact: bool = False) -> dict:
    """{(i, j): (p_0, ..., p_m)} with p_k the probability that the defender loses k units."""
    if exact:
        from fractions import Fraction

        return {(i, j): tuple(Fraction(c, FACES ** (i + j)) for c in counts)
                for i, row in ROLL_COUNTS.items() for j, counts in row.items()}
    return {(i, j): tuple(c / FACES ** (i + j) for c in counts)
            for i, row in ROLL_COUNTS.items() for j, counts in row.items()}


_FLOAT = roll_probabilities()


# -- one roll ------------------------------------------------------------------------------------

def _check_faces(dice, field: str) -> list[int]:
    if not isinstance(dice, (list, tuple)):
        raise DiceError("must be a list of die faces", field)
    for n, face in enumerate(dice):
        if isinstance(face, bool) or not isinstance(face, int) or not 1 <= face <= FACES:
            raise DiceError("a die shows 1 to {FACES}, not {face!r}", f"{field}[{n}]", FACES=FACES, face=face)
    return sorted(dice, reverse=True)


def compare(attack_dice, defend_dice) -> tuple[int, int]:
    """(attacker_losses, defender_losses) of sorted-or-not dice, pairs compared highest first."""
    a = sorted(attack_dice, reverse=True)
    d = sorted(defend_dice, reverse=True)
    defender_losses = sum(1 for x, y in zip(a, d) if x > y)
    return min(len(a), len(d)) - defender_losses, defender_losses


def roll(n: int, rng) -> list[int]:
    """``n`` dice from ``rng`` (anything with ``randint(a, b)``)."""
    return [rng.randint(1, FACES) for _ in range(n)]


def _check_units(value, field: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise DiceError("must be a whole number", field)
    if value < least:
        raise DiceError("must be at least {least}", field, least=least)
    return value


def resolve(attacker: int, defender: int, attack_dice=None, defend_dice=None, dice: int | None = None,
            rng=None, fields: dict | None = None) -> dict:
    """One roll of a combat between ``attacker`` units (in the attacking territory) and ``defender``.

    Dice given are checked (count and faces) and resolved; dice omitted are rolled with ``rng``
    (default: the OS's secure source). ``dice`` is the number of attacking dice when they are rolled
    (default the maximum). ``fields`` renames the arguments in error messages (``{"attack_dice": ...}``).
    """
    f = {"attacker": "attacker", "defender": "defender", "attack_dice": "attack_dice",
         "defend_dice": "defend_dice", "dice": "dice", **(fields or {})}
    _check_units(attacker, f["attacker"], 2)
    _check_units(defender, f["defender"], 1)
    most = max_attack_dice(attacker)
    if dice is not None:
        if isinstance(dice, bool) or not isinstance(dice, int) or not 1 <= dice <= most:
            raise DiceError("the attacker may roll 1 to {most} {most|die|dice} with {attacker} {attacker|unit|units}", f["dice"], most=most, attacker=attacker)
    if attack_dice is not None:
        a = _check_faces(attack_dice, f["attack_dice"])
        if not 1 <= len(a) <= most:
            raise DiceError("the attacker rolls 1 to {most} {most|die|dice} with {attacker} {attacker|unit|units} (one unit stays home), not {n_a}", f["attack_dice"], most=most, attacker=attacker, n_a=len(a))
        if dice is not None and len(a) != dice:
            raise DiceError("{n_a} attacking {n_a|die|dice} given but {dice} announced", f["attack_dice"], n_a=len(a), dice=dice)
    need = defend_dice_count(defender)
    if defend_dice is not None:
        d = _check_faces(defend_dice, f["defend_dice"])
        if len(d) != need:
            raise DiceError("the defender must roll {need} {need|die|dice} with {defender} {defender|unit|units}, not {n_d}",
                            f["defend_dice"], need=need, defender=defender, n_d=len(d))
    if attack_dice is None or defend_dice is None:
        if rng is None:
            import random

            rng = random.SystemRandom()
        if attack_dice is None:
            a = sorted(roll(most if dice is None else dice, rng), reverse=True)
        if defend_dice is None:
            d = sorted(roll(need, rng), reverse=True)
    att_loss, def_loss = compare(a, d)
    return {
        "attacker_dice": a,
        "defender_dice": d,
        "attacker_losses": att_loss,
        "defender_losses": def_loss,
        "attacker_left": attacker - att_loss,
        "defender_left": defender - def_loss,
        "conquered": defender - def_loss == 0,
    }


# -- battles -------------------------------------------------------------------------------------

def _check_battle(attacker, defender, stop_at, limit=MAX_UNITS):
    _check_units(attacker, "attacker", 1)
    _check_units(defender, "defender", 1)
    _check_units(stop_at, "stop_at", 1)
    if attacker > limit:
        raise DiceError("at most {limit} units (a player never has more on the map)", "attacker", limit=limit)
    if defender > limit:
        raise DiceError("at most {limit} units (a player never has more on the map)", "defender", limit=limit)


def _mass(attacker: int, defender: int, stop_at: int, probs: dict, zero, one) -> list:
    """``mass[a][d]``: the probability of passing through state (a, d) from (attacker, defender).

    The states are visited a descending, then d descending, so every successor (a - x, d - y), x + y >= 1, is
    visited later, and each state's mass is added to its successors' in that order (the order matters to the
    floats' last bits: every sum is made in it). A roll of 3 dice against 3 (a > 3, d >= 3: the bulk) costs
    3 units in all, so from (attacker, defender) the states of the bulk with mass lie on every third
    diagonal a + d: in each row, one class of d modulo 3. A row of the bulk is done at once: first its
    own states down that class (the defender losing 3 keeps the row: (a, d) gives to (a, d - 3), visited
    later in the row), then its shares of the three rows below, as slices (each state there gets one
    share of this row's bulk, so their order is free); the states below 3 defenders (fewer dice, fewer
    pairs), and the rows of fewer than 3 attacking dice, one by one as before, after the bulk of their row.
    """
    mass = [[zero] * (defender + 1) for _ in range(attacker + 1)]
    mass[attacker][defender] = one
    q0, q1, q2, q3 = probs[(3, 3)]
    total = attacker + defender
    for a in range(attacker, stop_at, -1):
        row = mass[a]
        i = min(MAX_DICE, a - 1)
        rest = defender  # the states done one by one: d = rest .. 1
        if i == MAX_DICE and defender >= MAX_DICE:
            rest = MAX_DICE - 1
            low = 3 + (total - a) % 3  # the row's lowest bulk state with mass: d = low, low + 3, ...
            if low <= defender:
                top = defender - (defender - low) % 3
                for d in range(top, low - 1, -3):  # defender loses 3
                    row[d - 3] += row[d] * q3
                src = row[low:top + 1:3]
                n = 3 * len(src)
                for k, (q, target) in enumerate(((q0, mass[a - 3]), (q1, mass[a - 2]), (q2, mass[a - 1]))):
                    at = slice(low - k, low - k + n, 3)  # defender loses k, attacker 3 - k
                    target[at] = [x + m * q for x, m in zip(target[at], src)]
        for d in range(rest, 0, -1):
            m = row[d]
            if not m:
                continue
            j = min(MAX_DICE, d)
            p = probs[(i, j)]
            pairs = min(i, j)
            for k in range(pairs + 1):  # defender loses k, attacker pairs - k
                mass[a - pairs + k][d - k] += m * p[k]
    return mass


def battle(attacker: int, defender: int, stop_at: int = 1, exact: bool = False) -> dict:
    """The exact distribution of the end states of a battle.

    Returns ``p_conquer``, ``expected_attacker_remaining`` (units left in the attacking territory when
    the battle stops, before any move into a conquered territory), ``expected_defender_remaining`` and
    ``outcomes``: every end state ``{attacker, defender, p}`` with p > 0, conquests (defender 0) first
    by attacker units descending, then stops by defender units ascending.
    """
    _check_battle(attacker, defender, stop_at)
    probs = roll_probabilities(exact=True) if exact else _FLOAT
    zero = probs[(1, 1)][0] * 0
    one = zero + 1
    mass = _mass(attacker, defender, stop_at, probs, zero, one)
    outcomes = []
    p_conquer = zero
    e_att = zero
    e_def = zero
    for a in range(attacker, 0, -1):  # conquests: defender 0 (reachable only from a live attacker)
        m = mass[a][0]
        if m:
            outcomes.append((a, 0, m))
            p_conquer += m
            e_att += a * m
    for d in range(1, defender + 1):  # stops: attacker at or below stop_at
        for a in range(min(stop_at, attacker), 0, -1):
            m = mass[a][d]
            if m:
                outcomes.append((a, d, m))
                e_att += a * m
                e_def += d * m

    def out(v):
        return v if exact else float(v)

    return {
        "attacker": attacker,
        "defender": defender,
        "stop_at": stop_at,
        "p_conquer": out(p_conquer),
        "expected_attacker_remaining": out(e_att),
        "expected_defender_remaining": out(e_def),
        "outcomes": [{"attacker": a, "defender": d, "p": out(m)} for a, d, m in outcomes],
    }


def conquer_table(attacker: int, defender: int, stop_at: int = 1) -> list[list[float]]:
    """``t[a][d]`` = P(conquer) of a battle from ``a`` units against ``d`` (0 <= a <= attacker,
    0 <= d <= defender; ``t[a][0] = 1``, and 0 wherever the attacker cannot attack).

    One pass, rows by attacker units ascending: P(a, d) depends on rows a-3..a and, within row a,
    on column d-3 only, so the bulk (3 dice against 3) is a four-term recurrence.
    """
    _check_battle(max(attacker, 1), max(defender, 1), stop_at)
    P = _FLOAT
    width = defender + 1
    rows = [[1.0] + [0.0] * defender for _ in range(attacker + 1)]
    q0, q1, q2, q3 = P[(3, 3)]
    for a in range(stop_at + 1, attacker + 1):
        row = rows[a]
        i = min(MAX_DICE, a - 1)
        r1 = rows[a - 1]
        # the first columns (defender rolls 1 or 2 dice), and everything when i < 3
        head = width if i < 3 else min(width, 3)
        for d in range(1, head):
            j = min(MAX_DICE, d)
            p = P[(i, j)]
            pairs = min(i, j)
            s = 0.0
            for k in range(pairs + 1):
                s += p[k] * rows[a - pairs + k][d - k]
            row[d] = s
        if i == 3 and width > 3:
            r2 = rows[a - 2]
            r3 = rows[a - 3]
            # the terms from earlier rows, all at once; then the in-row recurrence on d - 3
            part = [q0 * x + q1 * y + q2 * z for x, y, z in zip(r3[3:], r2[2:], r1[1:])]
            for n, v in enumerate(part):
                row[n + 3] = v + q3 * row[n]
    return rows


def p_conquer(attacker: int, defender: int, stop_at: int = 1) -> float:
    return conquer_table(attacker, defender, stop_at)[attacker][defender]


def smallest_attacker(defender: int, target: float, stop_at: int = 1, limit: int = MAX_UNITS):
    """The fewest units (in the attacking territory, at most ``limit``) whose P(conquer) against
    ``defender`` reaches ``target``: ``(units, p)``, or ``None`` when even ``limit`` units do not.
    P(conquer) grows with the attacker's units, so the first row that reaches it is the answer."""
    rows = conquer_table(limit, defender, stop_at)
    for a in range(1, limit + 1):
        if rows[a][defender] >= target:
            return a, rows[a][defender]
    return None
