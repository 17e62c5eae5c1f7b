"""Independent audit of conquest-italy against its rule book and docs/rulings.md#conquest-of-italy.

The rule book is the conquest game's (Italian); "book:" below quotes it, "ruling:" quotes docs/rulings.md,
whose rulings win over the book. Every expected value here is computed by code written for this file
(dice enumerated roll by roll, battles flowed round by round, the map read as plain JSON), never by calling the
engine's own helpers for the answer. Commands run as real processes through the ``run_cli`` fixture.
"""

from __future__ import annotations

import functools
import itertools
import json
import random
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.base.errors import InputError, RuleError
from companion.games import conquest_italy as ci
from companion.games import conquest_odds as co
from companion.games.conquest_map import DEFAULT_MAP_PATH, default_map

MAP = json.loads(DEFAULT_MAP_PATH.read_text(encoding="utf-8"))  # the shipped default map, read as plain JSON
CITIES = {c["name"]: dict(c, region=r["name"]) for r in MAP["regions"] for c in r["cities"]}
REGIONS = {r["name"]: [c["name"] for c in r["cities"]] for r in MAP["regions"]}
BONUS = {r["name"]: r["bonus"] for r in MAP["regions"]}
GM = default_map()


def exit_2_one_line(code, out, err, *needles):
    """The CLI contract: exit 2, nothing on stdout, one line on stderr naming the field, never a traceback."""
    assert code == 2, (code, out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and "internal error" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]


# ---------------------------------------------------------------------------------------------------------
# combat: ruling "at most min(3, A-1) dice; fewer is allowed. The defender must roll min(3, D) dice ... the
# attacker wins a pair only when strictly higher (ties go to the defender)"

def independent_losses(att, dfn):
    a, d = sorted(att, reverse=True), sorted(dfn, reverse=True)
    att_loss = def_loss = 0
    for n in range(min(len(a), len(d))):
        if a[n] > d[n]:
            def_loss += 1
        else:
            att_loss += 1
    return att_loss, def_loss


@given(st.integers(1, 9), st.integers(0, 6), st.lists(st.integers(1, 6), max_size=4),
       st.lists(st.integers(1, 6), max_size=4))
def test_combat_dice_limits_and_ties_follow_the_ruling(attacker, defender, att, dfn):
    # ruling: attacker 1..min(3, A-1) dice, defender exactly min(3, D); A < 2 or D < 1 is refused
    legal = (attacker >= 2 and defender >= 1 and 1 <= len(att) <= min(3, attacker - 1)
             and len(dfn) == min(3, defender))
    if not legal:
        with pytest.raises(co.DiceError):
            co.resolve(attacker, defender, att, dfn)
        return
    r = co.resolve(attacker, defender, att, dfn)
    al, dl = independent_losses(att, dfn)
    assert (r["attacker_losses"], r["defender_losses"]) == (al, dl)
    assert (r["attacker_left"], r["defender_left"]) == (attacker - al, defender - dl)
    assert r["conquered"] == (defender - dl == 0)
    assert r["attacker_left"] >= 1  # book: "un mattoncino dovrà comunque rimanere nel proprio territorio"


@pytest.mark.parametrize("attacker, most", [(2, 1), (3, 2), (4, 3), (5, 3), (125, 3)])
def test_combat_cli_attacker_dice_boundary(run_cli, attacker, most):
    # book: "se il giocatore ha 5 mattoncini ... max 3 ... Se ... 3 mattoncini ... max 2"; ruling: min(3, A-1)
    ok = run_cli("combat", "--attacker", attacker, "--defender", 3, "--attack-dice", ",".join(["6"] * most),
                 "--defend-dice", "1,1,1")
    assert ok[0] == 0 and json.loads(ok[1])["attacker_dice"] == [6] * most
    code, out, err = run_cli("combat", "--attacker", attacker, "--defender", 3,
                             "--attack-dice", ",".join(["6"] * (most + 1)), "--defend-dice", "1,1,1")
    exit_2_one_line(code, out, err, "--attack-dice", f"1 to {most}")


def test_combat_cli_rule_book_examples_and_defender_dice(run_cli):
    # book: "5-3-1 ... 6-2-1. L'attaccante perderà 2 mattoncini, il Difensore perderà 1"
    code, out, _ = run_cli("combat", "--attacker", 5, "--defender", 3, "--attack-dice", "5,3,1",
                           "--defend-dice", "6,2,1")
    r = json.loads(out)
    assert code == 0 and (r["attacker_losses"], r["defender_losses"]) == (2, 1)
    # book: "6-6-6. Difensore tira 2 dadi ... 6-6. L'Attaccante perderà solo 2 mattoncini, il Difensore ... nessuno"
    code, out, _ = run_cli("combat", "--attacker", 4, "--defender", 2, "--attack-dice", "6,6,6",
                           "--defend-dice", "6,6")
    r = json.loads(out)
    assert code == 0 and (r["attacker_losses"], r["defender_losses"], r["defender_left"]) == (2, 0, 2)
    # ruling: the defender MUST roll min(3, D): 2 dice with 2 units, not 1
    code, out, err = run_cli("combat", "--attacker", 4, "--defender", 2, "--attack-dice", "6,6,6",
                             "--defend-dice", "6")
    exit_2_one_line(code, out, err, "--defend-dice", "must roll 2")


@pytest.mark.parametrize("dice", ["²", "--1", "٣", "6.0", "+6", "6,,1"])
def test_combat_cli_odd_dice_text_exits_2(run_cli, dice):
    # docs/games.md "Combat": "Wrong counts or faces ... exit 2 naming the option" ('²' and '--1' used to exit 1)
    code, out, err = run_cli("combat", "--attacker", 5, "--defender", 3, f"--attack-dice={dice}",
                             "--defend-dice", "1,1,1")
    exit_2_one_line(code, out, err, "--attack-dice")


# ---------------------------------------------------------------------------------------------------------
# battle odds: ruling "repeats maximal rolls until the defender has 0 (conquest) or the attacker is down to K
# units (default 1). Compute the whole distribution of end states exactly"

@functools.cache
def roll_outcomes(i, j):
    """{(attacker_loss, defender_loss): Fraction} of i dice against j, every roll listed."""
    counts = Counter(independent_losses(roll[:i], roll[i:]) for roll in itertools.product(range(1, 7), repeat=i + j))
    return {k: Fraction(v, 6 ** (i + j)) for k, v in counts.items()}


def flow(attacker, defender, stop_at):
    """End states by pushing the probability mass forward one round of rolls at a time."""
    live, ends = {(attacker, defender): Fraction(1)}, Counter()
    while live:
        nxt = Counter()
        for (a, d), p in live.items():
            if d == 0 or a <= stop_at:
                ends[(a, d)] += p
                continue
            for (al, dl), q in roll_outcomes(min(3, a - 1), min(3, d)).items():
                nxt[(a - al, d - dl)] += p * q
        live = nxt
    return ends


@settings(max_examples=60)
@given(st.integers(1, 9), st.integers(1, 6), st.integers(1, 5))
def test_battle_distribution_equals_a_round_by_round_flow(a, d, k):
    ends = flow(a, d, k)
    got = co.battle(a, d, stop_at=k, exact=True)
    assert {(o["attacker"], o["defender"]): o["p"] for o in got["outcomes"]} == dict(ends)
    assert got["p_conquer"] == sum(p for (x, y), p in ends.items() if y == 0)
    # ruling: expected_attacker_remaining = units left in the attacking territory when the battle stops
    assert got["expected_attacker_remaining"] == sum(x * p for (x, _), p in ends.items())
    assert got["expected_defender_remaining"] == sum(y * p for (_, y), p in ends.items())
    # --stop-at K: every end is a conquest or has the attacker at K units or fewer
    assert all(y == 0 or x <= k for (x, y) in ends)


@pytest.mark.parametrize("a, d, p", [(5, 3, 0.43738), (10, 10, 0.14527), (20, 20, 0.08122)])
def test_odds_cli_known_values_from_the_ruling(run_cli, a, d, p):
    # ruling: "P(conquer) 5v3 ≈ 0.43738, 10v10 ≈ 0.14527, 20v20 ≈ 0.08122"
    code, out, _ = run_cli("odds", a, d)
    r = json.loads(out)
    assert code == 0 and r["p_conquer"] == pytest.approx(p, abs=5e-6)
    assert sum(o["p"] for o in r["outcomes"]) == pytest.approx(1, abs=1e-12)


def test_odds_cli_stop_at_equals_the_flow(run_cli):
    code, out, _ = run_cli("odds", 7, 5, "--stop-at", 3)
    r = json.loads(out)
    ends = flow(7, 5, 3)
    assert code == 0 and len(r["outcomes"]) == len(ends)
    for o in r["outcomes"]:
        assert o["p"] == pytest.approx(float(ends[(o["attacker"], o["defender"])]), abs=1e-12)
    assert r["expected_attacker_remaining"] == pytest.approx(float(sum(x * p for (x, _), p in ends.items())))
    assert r["p_conquer"] == pytest.approx(float(sum(p for (_, y), p in ends.items() if y == 0)))


def test_odds_cli_target_is_the_fewest_attackers(run_cli):
    # docs/games.md "Odds": "--target P the fewest attackers (at most A) reaching P against D"
    code, out, _ = run_cli("odds", 40, 4, "--target", 0.8)
    r = json.loads(out)
    exact = {a: sum(p for (_, y), p in flow(a, 4, 1).items() if y == 0) for a in range(1, 15)}
    fewest = min(a for a, p in exact.items() if p >= Fraction(8, 10))
    assert code == 0 and r["attacker"] == fewest
    assert r["p_conquer"] == pytest.approx(float(exact[fewest]))


# ---------------------------------------------------------------------------------------------------------
# reinforcements: ruling "floor(territories held / 3); plus each fully held macro-region's bonus; plus a traded
# set: basil + mozzarella + tomato = 10, plus 2 for each traded card whose city the player holds; other sets
# ... from the map file ... never more than 125 units on the map"

def symbol(card):
    return "pizza" if card.startswith("joker:") else CITIES[card]["card"]


def set_value(cards):
    """None when the cards are not a set the default map values."""
    symbols = [symbol(c) for c in cards]
    jokers = symbols.count("pizza")
    plain = sorted(s for s in symbols if s != "pizza")
    if jokers == 0:
        if len(set(plain)) == 3:
            return 10
        kind = f"three_{plain[0]}" if len(set(plain)) == 1 else None
    elif jokers == 1:
        kind = "joker_two_alike" if plain[0] == plain[1] else "joker_two_different"
    else:
        kind = "two_jokers" if jokers == 2 else "three_jokers"
    return MAP["sets"].get(kind) if kind else None


@settings(max_examples=150)
@given(st.sets(st.sampled_from(sorted(CITIES)), min_size=1, max_size=42), st.integers(0, 125), st.data())
def test_reinforcements_against_the_ruling_formula(held, on_map, data):
    on_map = max(on_map, len(held))
    cards = GM.cards
    trade = data.draw(st.one_of(st.just([]), st.lists(st.sampled_from(cards), min_size=3, max_size=3, unique=True)))
    doc = {"territories": sorted(held), "units_on_map": on_map, "trade": trade}
    base = len(held) // 3
    regions = sum(BONUS[r] for r, cs in REGIONS.items() if set(cs) <= held)
    value = set_value(trade) if trade else 0
    if value is None:
        with pytest.raises(InputError) as err:
            ci.reinforcements_doc(doc)
        assert err.value.field == "$.trade"
        return
    held_bonus = 2 * sum(1 for c in trade if c.removeprefix("joker:") in held)
    total = base + regions + value + held_bonus
    out = ci.reinforcements_doc(doc)
    assert (out["base"], out["region_bonus"], out["total"]) == (base, regions, total)
    assert out["placeable"] == min(total, 125 - on_map) and out["not_placed"] == total - out["placeable"]


def test_reinforcements_cli_rule_book_examples(run_cli):
    # book: "il giocatore occupa 10 territori (10/3=3,33) ricarica di 3 mattoncini"
    ten = ["Aosta", "Torino", "Cuneo", "Milano", "Bari", "Lecce", "Roma", "Pisa", "Trento", "Udine"]
    code, out, _ = run_cli("reinforcements", "-", stdin=json.dumps({"territories": ten, "units_on_map": 10}))
    assert code == 0 and json.loads(out)["total"] == 3
    # book: "occupa l'intera 'Sicilia e Calabria' ... 3 mattoncini in più"; a mixed set of held cities:
    # "10 mattoncini ... ulteriori 2 ... per ogni carta con città occupata (potenzialmente ... 16 mattoncini)"
    sc = REGIONS["Sicilia e Calabria"]
    mixed = sorted(sc, key=symbol)
    trade = [next(c for c in mixed if symbol(c) == s) for s in ("basil", "mozzarella", "tomato")]
    code, out, _ = run_cli("reinforcements", "-", stdin=json.dumps({"territories": {c: 2 for c in sc},
                                                                     "trade": trade}))
    r = json.loads(out)
    assert code == 0 and (r["base"], r["region_bonus"], r["trade"]["total"], r["total"]) == (1, 3, 16, 20)


def test_reinforcements_cap_of_125_on_the_map(run_cli):
    # book: "Mattoncini massimi sulla mappa per ogni giocatore (valore 125)"
    code, out, _ = run_cli("reinforcements", "-", stdin=json.dumps({"territories": {"Roma": 120, "Napoli": 3}}))
    r = json.loads(out)
    assert code == 0 and (r["total"], r["placeable"], r["not_placed"]) == (0, 0, 0)
    sc = REGIONS["Sicilia e Calabria"]
    code, out, _ = run_cli("reinforcements", "-", stdin=json.dumps({"territories": {**{c: 24 for c in sc}, "Roma": 1},
                                                                     "units_on_map": 121}))
    r = json.loads(out)
    assert code == 0 and (r["total"], r["placeable"], r["not_placed"]) == (5, 4, 1)
    # more than 125 on the map cannot happen: refused naming the territories (used to be accepted)
    code, out, err = run_cli("reinforcements", "-", stdin=json.dumps({"territories": {"Roma": 100, "Bari": 100}}))
    exit_2_one_line(code, out, err, "$.territories", "125")


def test_whole_number_floats_stay_whole_numbers(run_cli):
    # JSON Schema's "integer" accepts 2.0; the results must not turn into 2.0, 122.0 ...
    code, out, _ = run_cli("reinforcements", "-", stdin='{"territories": {"Roma": 2.0, "Napoli": 1}}')
    assert code == 0 and '"units_on_map": 3,' in out and ".0" not in out


# ---------------------------------------------------------------------------------------------------------
# set-up: ruling "3 -> 35, 4 -> 30, 5 -> 25, 6 -> 20 ... one card each, one unit on each; no player may hold
# more than half the territories of a macro-region (check a deal, and propose the swaps the rule book
# describes). The rest is placed 5 units at a time."

BOOK_UNITS = {3: 35, 4: 30, 5: 25, 6: 20}


def excess(owner):
    """{(player, region): cities beyond half of the region} for every breach (book: 'più del 50%')."""
    out = {}
    for region, cities in REGIONS.items():
        counts = Counter(owner[c] for c in cities)
        for p, n in counts.items():
            if n > len(cities) // 2:
                out[(p, region)] = n - len(cities) // 2
    return out


@settings(max_examples=60)
@given(st.integers(3, 6), st.integers(0, 2 ** 32))
def test_swaps_replace_exactly_the_cities_beyond_half(n, seed):
    # book: "sostituire casualmente i territori ricevuti che determinano più del 50% ... con la prima carta
    # territorio utile (verificare se ... viene superata la maggioranza in un'altra macro-regione)"
    rng = random.Random(seed)
    players = [f"p{k}" for k in range(n)]
    deck = sorted(CITIES)
    rng.shuffle(deck)
    owner = {c: players[::-1][k % n] for k, c in enumerate(deck)}
    fixed, swaps = ci.fix_deal(owner, GM, random.Random(seed))
    # at most one swap per city beyond half (one swap can cure two breaches: each side gives an excess city)
    assert len(swaps) <= sum(excess(owner).values())
    state = dict(owner)
    for s in swaps:
        before = excess(state)
        assert (s["player"], CITIES[s["gives"]]["region"]) in before  # gives away a city that breaks the rule
        state[s["gives"]], state[s["gets"]] = s["other"], s["player"]
        after = excess(state)
        assert set(after) <= set(before) and sum(after.values()) < sum(before.values())  # no new breach
    assert state == fixed and excess(fixed) == {}
    assert Counter(fixed.values()) == Counter(owner.values())


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_a_whole_set_up_places_the_book_s_starting_units(n):
    players = [f"p{k}" for k in range(n)]
    owner, _ = ci.deal(players, GM, random.Random(n))
    s = ci.apply(ci.initial_state(players, {}), {"type": "setup.deal", "data": {"owner": owner}})
    # book (4 players): "i primi 2 ... 10 mattoncini ... gli ultimi 2 ... 11": the cards go from the last player
    dealt = Counter(owner.values())
    assert sorted(dealt[p] for p in players) == [dealt[p] for p in players]
    reserve = {p: BOOK_UNITS[n] - dealt[p] for p in players}
    expected = []  # book: "Posizionare 5 mattoncini alla volta partendo dal primo giocatore"
    while any(reserve.values()):
        for p in players:
            if reserve[p]:
                expected.append((p, min(5, reserve[p])))
                reserve[p] -= min(5, reserve[p])
    seen = []
    while s["phase"] == "place":
        p = s["next_placer"]
        due = min(5, s["reserve"][p])
        seen.append((p, due))
        with pytest.raises(RuleError):  # not 5 at a time
            ci.apply(s, {"type": "setup.place", "data": {"player": p, "placements": {ci.held(s, p)[0]: due + 1}}})
        s = ci.apply(s, {"type": "setup.place", "data": {"player": p, "placements": {ci.held(s, p)[0]: due}}})
    assert seen == expected
    assert {p: ci.units_on_map(s, p) for p in players} == {p: BOOK_UNITS[n] for p in players}


def test_a_deal_beyond_half_of_a_region_is_refused_with_swaps():
    # book: "'sicilia e calabria' composta da 5 territori, ogni giocatore potrà avere al massimo 2 territori"
    players = ["A", "B", "C", "D"]
    owner, _ = ci.deal(players, GM, random.Random(1))
    sc = REGIONS["Sicilia e Calabria"]
    for c in sc[:3]:  # give A three of the five, trading cities outside the region so the counts stay
        if owner[c] != "A":  # ... and so that no other region is broken
            give = next(x for x, p in owner.items() if p == "A" and x not in sc
                        and not excess({**owner, x: owner[c], c: "A"}).keys() - {("A", "Sicilia e Calabria")})
            owner[give], owner[c] = owner[c], "A"
    assert excess(owner) == {("A", "Sicilia e Calabria"): 1}
    with pytest.raises(RuleError) as err:
        ci.apply(ci.initial_state(players, {}), {"type": "setup.deal", "data": {"owner": owner}})
    assert "Sicilia e Calabria" in err.value.message and "at most 2" in err.value.message
    assert "swap" in err.value.message
    fixed, swaps = ci.fix_deal(owner, GM)
    assert excess(fixed) == {} and len(swaps) == 1 and swaps[0]["player"] == "A" and swaps[0]["gives"] in sc
    ci.apply(ci.initial_state(players, {}), {"type": "setup.deal", "data": {"owner": fixed}})  # accepted


def test_half_of_an_even_region_is_allowed():
    # book: no player may have "più del 50%": exactly half of a 6-city region is fine, 4 is not
    lomb = REGIONS["Lombardia"]
    assert len(lomb) == 6
    owner = {c: "B" for c in CITIES}
    owner.update({c: "A" for c in lomb[:3]})
    assert not any(v["player"] == "A" for v in ci.deal_violations(owner, GM))
    owner[lomb[3]] = "A"
    assert {"player": "A", "region": "Lombardia", "holds": 4, "limit": 3, "excess": 1} in ci.deal_violations(owner, GM)


# ---------------------------------------------------------------------------------------------------------
# final ranking: ruling "the values of the cities of their secret objective that they hold ... ties are
# broken by the values of the other cities they hold; still equal -> shared place. A player who completes
# their objective during the match wins at once (place 1); the others are ranked by the same rule."

def test_score_cli_rule_book_ranking_example(run_cli):
    # book: "(es. 1° 30pt + 12pt fuori obiettivo, 2° 30pt + 8pt fuori obiettivo, 3° 26pt, 4° 12pt)"
    def city(name, value, nxt):
        return {"name": name, "card": "basil", "value": value, "borders": nxt}
    names = ["A1", "A2", "X", "B1", "B2", "B3", "C1", "D1"]
    values = [15, 15, 12, 20, 10, 8, 26, 12]
    cities = [city(n, v, [m for m in (names[k - 1] if k else None, names[k + 1] if k + 1 < len(names) else None) if m])
              for k, (n, v) in enumerate(zip(names, values))]
    board = {"regions": [{"name": "Tutto", "bonus": 0, "cities": cities}]}
    doc = {"players": ["Dario", "Carla", "Bruno", "Anna"], "map": board,
           "owned": {"Anna": ["A1", "A2", "X"], "Bruno": ["B1", "B2", "B3"], "Carla": ["C1"], "Dario": ["D1"]},
           "objectives": {"Anna": ["A1", "A2"], "Bruno": ["B1", "B2"], "Carla": ["C1"], "Dario": ["D1"]}}
    code, out, _ = run_cli("score", "conquest-italy", "-", stdin=json.dumps(doc))
    r = json.loads(out)
    got = [(p["player"], p["place"], p["objective_points"], p["other_points"]) for p in r["players"]]
    assert code == 0 and got == [("Anna", 1, 30, 12), ("Bruno", 2, 30, 8), ("Carla", 3, 26, 0), ("Dario", 4, 12, 0)]


def test_score_cli_objective_completed_then_shared_places(run_cli):
    doc = {"players": ["Zoë", "Ōta", "Anna", "Bruno"],
           "owned": {"Zoë": ["Aosta"], "Ōta": ["Lecce"], "Anna": ["Salerno"], "Bruno": ["Milano", "Parma"]},
           "objectives": {"Zoë": ["Aosta"], "Ōta": ["Lecce"], "Anna": ["Salerno"], "Bruno": ["Milano", "Parma"]},
           "objective_completed_by": "Zoë"}
    assert CITIES["Aosta"]["value"] == CITIES["Lecce"]["value"] == CITIES["Salerno"]["value"] == 2
    code, out, _ = run_cli("score", "conquest-italy", "-", stdin=json.dumps(doc, ensure_ascii=False))
    r = json.loads(out)
    # Zoë completed the objective: first though Bruno has more points; Ōta and Anna tie on 2 + 0 -> shared 3rd
    assert code == 0
    assert [(p["player"], p["place"]) for p in r["players"]] == [("Zoë", 1), ("Bruno", 2), ("Ōta", 3), ("Anna", 3)]
    bruno = CITIES["Milano"]["value"] + CITIES["Parma"]["value"]
    assert r["players"][0]["objective"] is True and r["players"][1]["objective_points"] == bruno > 2


# ---------------------------------------------------------------------------------------------------------
# the default map (docs/rulings.md#the-default-map): "42 Italian cities in 7 macro-regions ... (Milano, Roma and
# Catanzaro the airports; "Sicilia e Calabria" a 5-city region ...; each city's value its number of neighbours)"

def test_default_map_read_as_plain_json():
    assert len(CITIES) == 42 and len(REGIONS) == 7  # book: "suddivisa in 42 città, appartenenti a 7 macro-regioni"
    assert MAP["airports"] == ["Milano", "Roma", "Catanzaro"]  # book: "i tre aeroporti Milano, Roma e Catanzaro"
    assert sorted(REGIONS["Sicilia e Calabria"]) == ["Catania", "Catanzaro", "Cosenza", "Palermo", "Reggio Calabria"]
    assert BONUS["Sicilia e Calabria"] == 3  # book: "avrà diritto a 3 mattoncini in più"
    assert "DEFAULT" in MAP["note"] and "not the club" in MAP["note"] and "predefinita" in MAP["name"]
    for name, c in CITIES.items():
        for key in ("borders", "sea"):
            for other in c.get(key, []):
                assert name in CITIES[other].get(key, []), (name, key, other)  # symmetric
        assert c["value"] == len(set(c["borders"]) | set(c.get("sea", [])))  # value = number of neighbours
    seen, todo = {"Aosta"}, ["Aosta"]
    while todo:
        c = CITIES[todo.pop()]
        for n in c["borders"] + c.get("sea", []):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    assert seen == set(CITIES)  # connected by land and sea
    assert Counter(c["card"] for c in CITIES.values()) == {"basil": 14, "mozzarella": 14, "tomato": 14}


# ---------------------------------------------------------------------------------------------------------
# bad input through the CLI as real processes: exit 2, one line naming the JSON path (README, "CLI")

SCORE = {"players": ["Anna", "Bruno", "Carla"], "owned": {"Anna": ["Roma"], "Bruno": ["Bari"], "Carla": ["Torino"]},
         "objectives": {"Anna": ["Roma"], "Bruno": ["Bari"], "Carla": ["Torino"]}}


@pytest.mark.parametrize("args, doc, path", [
    (["score", "conquest-italy"], {**SCORE, "players": None}, "$.players"),
    (["score", "conquest-italy"], {**SCORE, "players": ["Anna", None, "Carla"]}, "$.players[1]"),
    (["score", "conquest-italy"], {**SCORE, "owned": {**SCORE["owned"], "Anna": [1.5]}}, "$.owned.Anna[0]"),
    (["score", "conquest-italy"], {**SCORE, "objective_completed_by": True}, "$.objective_completed_by"),
    (["score", "conquest-italy"], {**SCORE, "owned": {**SCORE["owned"], "Anna": [10 ** 40]}}, "$.owned.Anna[0]"),
    (["score", "conquest-italy"], {}, "$"),
    (["score", "conquest-italy"], {**SCORE, "owned": {}}, "$.owned"),
    (["score", "conquest-italy"], {**SCORE, "map": {}}, "$.map"),
    (["score", "conquest-italy"], {**SCORE, "objectives": {**SCORE["objectives"], "Anna": ["Atlantide ☃"]}},
     "$.objectives.Anna[0]"),
    (["score", "conquest-italy"], {**SCORE, "owned": {**SCORE["owned"], "Zoë": []}}, "$.owned.Zoë"),
    (["reinforcements"], {"territories": None}, "$.territories"),
    (["reinforcements"], {"territories": {"Roma": 1.5}}, "$.territories.Roma"),
    (["reinforcements"], {"territories": ["Roma"], "units_on_map": True}, "$.units_on_map"),
    (["reinforcements"], {"territories": ["Roma"], "units_on_map": 10 ** 40}, "$.units_on_map"),
    (["reinforcements"], {}, "$"),
    (["reinforcements"], {"territories": ["Roma"], "units_on_map": 3, "trade": [None, "Bari", "Lecce"]}, "$.trade[0]"),
    (["reinforcements"], {"territories": ["Roma"], "units_on_map": 3, "trade": ["Rōma", "Bari", "Lecce"]},
     "$.trade[0]"),
])
def test_cli_bad_documents_exit_2_naming_the_path(run_cli, args, doc, path):
    code, out, err = run_cli(*args, "-", stdin=json.dumps(doc, ensure_ascii=False))
    exit_2_one_line(code, out, err, path + ":")


def test_match_state_with_float_dice_names_the_event_path(run_cli):
    players = ["Anna", "Bruno", "Carla"]
    owner, _ = ci.deal(players, GM, random.Random(2))
    events = [{"type": "setup.deal", "data": {"owner": owner}}]
    s = ci.apply(ci.initial_state(players, {}), events[0])
    while s["phase"] == "place":
        p = s["next_placer"]
        e = {"type": "setup.place", "data": {"player": p, "placements": {ci.held(s, p)[0]: min(5, s["reserve"][p])}}}
        s = ci.apply(s, e)
        events.append(e)
    src = next(c for c in GM.cities if s["units"][c] >= 4 and any(s["owner"][n] != s["owner"][c] for n in GM.land[c]))
    dst = next(n for n in sorted(GM.land[src]) if s["owner"][n] != s["owner"][src])
    dfn = [1] * min(3, s["units"][dst])
    events.append({"type": "combat", "data": {"from": src, "to": dst, "attack_dice": [6.0, 5, 4], "defend_dice": dfn}})
    doc = {"id": "audit-1", "game": "conquest-italy", "players": players, "created_at": "2026-01-01T20:00:00Z",
           "options": {"clock": False},
           "events": [{"seq": k + 1, "at": f"2026-01-01T20:{k // 60:02d}:{k % 60:02d}Z", **e}
                      for k, e in enumerate(events)]}
    code, out, err = run_cli("match", "state", "-", stdin=json.dumps(doc))
    exit_2_one_line(code, out, err, f"$.events[{len(events) - 1}].data.attack_dice[0]")
