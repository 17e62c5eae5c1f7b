"""conquest-italy dice: per-roll outcome tables by full enumeration, the rule book's examples, and the
battle odds against an independent exact computation with fractions."""

import functools
import itertools
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games import conquest_odds as co


# -- independent formulations (no code shared with the module) ---------------------------------

def enumerate_counts(i, j):
    """Counts, out of 6 ** (i + j), of the defender losing k = 0..min(i, j) units: every roll listed."""
    m = min(i, j)
    counts = [0] * (m + 1)
    for roll in itertools.product(range(1, 7), repeat=i + j):
        a = sorted(roll[:i], reverse=True)
        d = sorted(roll[i:], reverse=True)
        k = 0
        for n in range(m):
            if a[n] > d[n]:
                k += 1
        counts[k] += 1
    return counts


@functools.cache
def enumerated_fractions(i, j):
    total = 6 ** (i + j)
    return [Fraction(c, total) for c in enumerate_counts(i, j)]


@functools.cache
def end_states(a, d, stop_at):
    """{(attacker, defender): probability} of a battle, by recursion on the first roll (fractions)."""
    if d == 0 or a <= stop_at:
        return {(a, d): Fraction(1)}
    i, j = min(3, a - 1), min(3, d)
    m = min(i, j)
    out = {}
    for k, p in enumerate(enumerated_fractions(i, j)):
        if not p:
            continue
        for state, q in end_states(a - (m - k), d - k, stop_at).items():
            out[state] = out.get(state, 0) + p * q
    return out


# -- one roll ------------------------------------------------------------------------------------

@pytest.mark.parametrize("i, j", [(i, j) for i in (1, 2, 3) for j in (1, 2, 3)])
def test_roll_table_matches_full_enumeration(i, j):
    counts = enumerate_counts(i, j)
    assert tuple(counts) == co.ROLL_COUNTS[i][j]
    assert sum(counts) == 6 ** (i + j)


def test_roll_tables_known_values():
    # one die each: the attacker wins only strictly higher, 15 of 36
    assert co.ROLL_COUNTS[1][1] == (21, 15)
    # 3 against 3: the attacker wins all three pairs in 6420 of 46656 rolls
    assert co.ROLL_COUNTS[3][3][3] == 6420
    exact = co.roll_probabilities(exact=True)
    assert exact[(3, 3)][3] == Fraction(6420, 46656)
    for (i, j), probs in exact.items():
        assert sum(probs) == 1
        assert len(probs) == min(i, j) + 1


def test_rule_book_example_three_against_three():
    # "Attaccante tira 3 dadi e fa 5-3-1. Difensore tira 3 dadi e fa 6-2-1."
    r = co.resolve(5, 3, [5, 3, 1], [6, 2, 1])
    assert (r["attacker_losses"], r["defender_losses"]) == (2, 1)
    assert r["attacker_left"] == 3 and r["defender_left"] == 2 and not r["conquered"]


def test_rule_book_example_ties_go_to_the_defender():
    # "Attaccante tira 3 dadi e fa 6-6-6. Difensore tira 2 dadi ... e fa 6-6."
    r = co.resolve(4, 2, [6, 6, 6], [6, 6])
    assert (r["attacker_losses"], r["defender_losses"]) == (2, 0)
    assert r["defender_left"] == 2


def test_dice_are_sorted_before_comparing():
    r = co.resolve(4, 3, [1, 5, 3], [2, 1, 6])
    assert r["attacker_dice"] == [5, 3, 1] and r["defender_dice"] == [6, 2, 1]
    assert (r["attacker_losses"], r["defender_losses"]) == (2, 1)


def test_conquest_when_the_last_defender_falls():
    r = co.resolve(2, 1, [4], [3])
    assert r["conquered"] and r["defender_left"] == 0 and r["attacker_left"] == 2


def test_fewer_attacking_dice_compare_fewer_pairs():
    r = co.resolve(10, 3, [6], [5, 5, 5])
    assert (r["attacker_losses"], r["defender_losses"]) == (0, 1)


@pytest.mark.parametrize("attacker, defender, att, dfn, field", [
    (1, 1, [6], [1], "attacker"),              # nothing can attack
    (2, 0, [6], [], "defender"),               # nobody to attack
    (2, 1, [6, 5], [1], "attack_dice"),        # one unit stays home: 1 die with 2 units
    (3, 1, [6, 5, 4], [1], "attack_dice"),     # 2 dice with 3 units
    (9, 1, [6, 5, 4, 3], [1], "attack_dice"),  # never more than 3
    (9, 1, [], [1], "attack_dice"),            # at least one
    (9, 3, [6], [1, 1], "defend_dice"),        # the defender must roll min(3, D)
    (9, 1, [6], [1, 1], "defend_dice"),
    (9, 5, [6], [1, 1, 1, 1], "defend_dice"),
    (9, 1, [7], [1], "attack_dice[0]"),        # faces 1-6
    (9, 1, [6, 0], [1], "attack_dice[1]"),
    (9, 1, [6], [True], "defend_dice[0]"),
    (9, 1, [6], ["6"], "defend_dice[0]"),
])
def test_illegal_rolls_name_the_field(attacker, defender, att, dfn, field):
    with pytest.raises(co.DiceError) as err:
        co.resolve(attacker, defender, att, dfn)
    assert err.value.field == field


def test_dice_count_must_match_the_dice_given():
    with pytest.raises(co.DiceError) as err:
        co.resolve(9, 3, [6, 5], [1, 1, 1], dice=3)
    assert err.value.field == "attack_dice"
    with pytest.raises(co.DiceError) as err:
        co.resolve(3, 3, None, None, dice=3, rng=random.Random(1))
    assert err.value.field == "dice"


@given(st.integers(2, 40), st.integers(1, 40), st.integers(0, 2**32), st.data())
def test_rolled_dice_are_legal_and_consistent(attacker, defender, seed, data):
    most = min(3, attacker - 1)
    dice = data.draw(st.one_of(st.none(), st.integers(1, most)))
    r = co.resolve(attacker, defender, dice=dice, rng=random.Random(seed))
    assert len(r["attacker_dice"]) == (most if dice is None else dice)
    assert len(r["defender_dice"]) == min(3, defender)
    assert all(1 <= f <= 6 for f in r["attacker_dice"] + r["defender_dice"])
    assert r["attacker_dice"] == sorted(r["attacker_dice"], reverse=True)
    pairs = min(len(r["attacker_dice"]), len(r["defender_dice"]))
    assert r["attacker_losses"] + r["defender_losses"] == pairs
    wins = sum(1 for x, y in zip(r["attacker_dice"], r["defender_dice"]) if x > y)
    assert r["defender_losses"] == wins
    assert r["conquered"] == (r["defender_left"] == 0)


def test_rolls_are_reproducible_with_a_seeded_rng():
    a = co.resolve(7, 7, rng=random.Random(42))
    b = co.resolve(7, 7, rng=random.Random(42))
    assert a == b


# -- battles ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("a, d, p", [(5, 3, 0.43738), (10, 10, 0.14527), (20, 20, 0.08122)])
def test_known_values_from_the_issue(a, d, p):
    assert co.battle(a, d)["p_conquer"] == pytest.approx(p, abs=5e-6)
    assert co.p_conquer(a, d) == pytest.approx(p, abs=5e-6)


def test_smallest_battle_by_hand():
    # 2 v 1: one die each, the attacker wins 15/36 = 5/12; otherwise stuck at 1 unit
    b = co.battle(2, 1, exact=True)
    assert b["p_conquer"] == Fraction(5, 12)
    assert b["outcomes"] == [{"attacker": 2, "defender": 0, "p": Fraction(5, 12)},
                             {"attacker": 1, "defender": 1, "p": Fraction(7, 12)}]
    assert b["expected_attacker_remaining"] == Fraction(2 * 5 + 7, 12)
    assert b["expected_defender_remaining"] == Fraction(7, 12)


def test_no_battle_when_the_attacker_cannot_attack():
    b = co.battle(1, 4)
    assert b["p_conquer"] == 0.0
    assert b["outcomes"] == [{"attacker": 1, "defender": 4, "p": 1.0}]
    b = co.battle(3, 2, stop_at=3)
    assert b["outcomes"] == [{"attacker": 3, "defender": 2, "p": 1.0}]


@pytest.mark.parametrize("a, d, k", [(a, d, k) for a in range(1, 9) for d in range(1, 7) for k in (1, 2, 4)])
def test_battle_equals_independent_fraction_recursion(a, d, k):
    expected = end_states(a, d, k)
    got = co.battle(a, d, stop_at=k, exact=True)
    assert {(o["attacker"], o["defender"]): o["p"] for o in got["outcomes"]} == expected
    assert got["p_conquer"] == sum(p for (x, y), p in expected.items() if y == 0)
    assert got["expected_attacker_remaining"] == sum(x * p for (x, y), p in expected.items())
    assert got["expected_defender_remaining"] == sum(y * p for (x, y), p in expected.items())
    floats = co.battle(a, d, stop_at=k)
    assert floats["p_conquer"] == pytest.approx(float(got["p_conquer"]), abs=1e-12)


def state_by_state_mass(attacker, defender, stop_at, probs):
    """The battle's programme one state at a time (how the module computed it before it did the bulk of a
    row at once): the same floats, bit for bit, are expected of the module."""
    mass = [[0.0] * (defender + 1) for _ in range(attacker + 1)]
    mass[attacker][defender] = 1.0
    for a in range(attacker, stop_at, -1):
        for d in range(defender, 0, -1):
            m = mass[a][d]
            if not m:
                continue
            i, j = min(3, a - 1), min(3, d)
            pairs = min(i, j)
            for k, p in enumerate(probs[(i, j)]):
                mass[a - pairs + k][d - k] += m * p
    return mass


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 125), st.integers(1, 125), st.integers(1, 8))
def test_the_row_at_once_programme_gives_the_same_floats_as_state_by_state(a, d, k):
    probs = co.roll_probabilities()
    expected = state_by_state_mass(a, d, k, probs)
    assert co._mass(a, d, k, probs, 0.0, 1.0) == expected
    got = co.battle(a, d, stop_at=k)
    assert {(o["attacker"], o["defender"]): o["p"] for o in got["outcomes"]} == {
        (x, y): expected[x][y] for x in range(a + 1) for y in range(d + 1)
        if expected[x][y] and (y == 0 or x <= min(k, a))}


def test_the_full_battle_gives_the_same_floats_as_state_by_state():
    probs = co.roll_probabilities()
    for k in (1, 2, 3):
        assert co._mass(125, 125, k, probs, 0.0, 1.0) == state_by_state_mass(125, 125, k, probs)


@given(st.integers(1, 14), st.integers(1, 12), st.integers(1, 5))
def test_float_battle_matches_fractions(a, d, k):
    expected = end_states(a, d, k)
    got = co.battle(a, d, stop_at=k)
    assert sum(o["p"] for o in got["outcomes"]) == pytest.approx(1.0, abs=1e-12)
    for o in got["outcomes"]:
        assert o["p"] == pytest.approx(float(expected[(o["attacker"], o["defender"])]), abs=1e-12)
    assert len(got["outcomes"]) == len(expected)


def test_stop_at_can_overshoot_below_k():
    # 4 units roll 3 dice against 3 defenders and can lose all three pairs: the end is 1 unit, below k = 3
    b = co.battle(4, 3, stop_at=3, exact=True)
    ends = {(o["attacker"], o["defender"]): o["p"] for o in b["outcomes"]}
    assert ends[(1, 3)] == Fraction(17871, 46656)


def test_outcomes_order_conquests_then_stops():
    b = co.battle(12, 9)
    conquests = [o for o in b["outcomes"] if o["defender"] == 0]
    stops = [o for o in b["outcomes"] if o["defender"] > 0]
    assert b["outcomes"] == conquests + stops
    assert [o["attacker"] for o in conquests] == sorted((o["attacker"] for o in conquests), reverse=True)
    assert [o["defender"] for o in stops] == sorted(o["defender"] for o in stops)
    assert all(o["attacker"] == 1 for o in stops)
    assert all(o["p"] > 0 for o in b["outcomes"])


def test_table_agrees_with_the_battle_distribution():
    t = co.conquer_table(30, 25)
    for a in range(1, 31):
        for d in range(1, 26):
            assert t[a][d] == pytest.approx(co.battle(a, d)["p_conquer"], abs=1e-12), (a, d)
    assert t[1][5] == 0.0 and t[7][0] == 1.0


@pytest.mark.parametrize("k", [2, 3, 5])
def test_table_with_stop_at(k):
    t = co.conquer_table(15, 10, stop_at=k)
    for a in range(1, 16):
        for d in range(1, 11):
            assert t[a][d] == pytest.approx(float(sum(p for (x, y), p in end_states(a, d, k).items() if y == 0)),
                                            abs=1e-12)


def test_full_table_size_and_monotonicity():
    t = co.conquer_table(125, 125)
    assert len(t) == 126 and all(len(row) == 126 for row in t)
    for d in range(1, 126):
        col = [t[a][d] for a in range(1, 126)]
        assert all(x <= y + 1e-15 for x, y in zip(col, col[1:])), d  # more attackers never hurt
    for a in range(2, 126):
        row = t[a][1:]
        assert all(x + 1e-15 >= y for x, y in zip(row, row[1:])), a  # more defenders never help
    assert 0.0 < t[125][125] < 1.0


@given(st.integers(1, 40), st.floats(0.01, 0.999))
def test_smallest_attacker_by_linear_scan(d, target):
    limit = 80
    got = co.smallest_attacker(d, target, limit=limit)
    brute = next((a for a in range(1, limit + 1) if co.battle(a, d)["p_conquer"] >= target), None)
    if brute is None:
        assert got is None
    else:
        assert got[0] == brute
        assert got[1] >= target


def test_battle_range_checks():
    with pytest.raises(co.DiceError) as err:
        co.battle(126, 3)
    assert err.value.field == "attacker"
    with pytest.raises(co.DiceError) as err:
        co.battle(5, 0)
    assert err.value.field == "defender"
    with pytest.raises(co.DiceError) as err:
        co.battle(5, 3, stop_at=0)
    assert err.value.field == "stop_at"
