"""conquest-italy rules: reinforcements and card sets, set-up (deal counts, the majority rule and its
swaps), the final ranking and `score()`."""

import itertools
import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.base.errors import InputError, RuleError
from companion.games import conquest_italy as ci
from companion.games.conquest_map import GameMap, default_map, default_map_doc

GM = default_map()
SC = ["Cosenza", "Catanzaro", "Reggio Calabria", "Palermo", "Catania"]  # Sicilia e Calabria


def line_map(cities, sets=None):
    """A club-style map: cities [(name, value, region)] joined in a line (values need not be degrees)."""
    regions = {}
    names = [c[0] for c in cities]
    for k, (name, value, region) in enumerate(cities):
        borders = [n for n in (names[k - 1] if k else None, names[k + 1] if k + 1 < len(names) else None) if n]
        regions.setdefault(region, []).append({"name": name, "card": ("basil", "mozzarella", "tomato")[k % 3],
                                               "value": value, "borders": borders})
    doc = {"name": "test board", "regions": [{"name": r, "bonus": 2, "cities": cs} for r, cs in regions.items()]}
    if sets is not None:
        doc["sets"] = sets
    return doc


# -- reinforcements ------------------------------------------------------------------------------

def test_rule_book_normal_reinforcement():
    # "il giocatore occupa 10 territori (10/3=3,33) ricarica di 3 mattoncini"
    ten = ["Aosta", "Torino", "Cuneo", "Milano", "Bari", "Lecce", "Roma", "Pisa", "Trento", "Udine"]
    r = ci.reinforcements(GM, ten, 30)
    assert r["base"] == 3 and r["total"] == 3 and r["regions"] == []


def test_rule_book_macro_region_bonus():
    # "il giocatore occupa l'intera Sicilia e Calabria ... 3 mattoncini in più oltre la ricarica normale"
    r = ci.reinforcements(GM, SC + ["Napoli"], 30)
    assert r["base"] == 2
    assert r["regions"] == [{"name": "Sicilia e Calabria", "bonus": 3}]
    assert r["total"] == 5


def test_rule_book_mixed_set_worth_up_to_sixteen():
    # one basil + one mozzarella + one tomato = 10, +2 per card whose city is held: "potrebbe valere 16"
    held = ["Aosta", "Torino", "Cuneo"]
    symbols = [GM.city[c]["card"] for c in held]
    assert sorted(symbols) == ["basil", "mozzarella", "tomato"]
    assert ci.trade_value(held, set(), GM)["total"] == 10
    assert ci.trade_value(held, {"Aosta"}, GM)["total"] == 12
    full = ci.trade_value(held, set(held), GM)
    assert full == {"cards": held, "kind": "mixed", "value": 10, "held_cities": held, "held_bonus": 6, "total": 16}


def test_sets_from_the_map():
    basil = [c for c in GM.cities if GM.city[c]["card"] == "basil"][:3]
    tomato = [c for c in GM.cities if GM.city[c]["card"] == "tomato"][:3]
    assert ci.trade_value(basil, set(), GM)["value"] == GM.sets["three_basil"] == 8
    assert ci.trade_value(tomato, set(), GM)["value"] == 4
    joker = ["joker:Roma"] + basil[:2]
    t = ci.trade_value(joker, {"Roma"}, GM)
    assert t["kind"] == "joker_two_alike" and t["value"] == 12 and t["held_cities"] == ["Roma"] and t["total"] == 14


def test_sets_the_map_does_not_value_are_refused():
    joker_mixed = ["joker:Milano", "Aosta", "Torino"]
    with pytest.raises(RuleError) as err:
        ci.trade_value(joker_mixed, set(), GM)
    assert "joker two different" in err.value.message
    with pytest.raises(RuleError):
        ci.trade_value(["joker:Milano", "joker:Roma", "Aosta"], set(), GM)


def test_two_alike_and_one_different_is_not_a_set():
    b = [c for c in GM.cities if GM.city[c]["card"] == "basil"][:2]
    t = [c for c in GM.cities if GM.city[c]["card"] == "tomato"][:1]
    with pytest.raises(RuleError) as err:
        ci.trade_value(b + t, set(), GM)
    assert err.value.field == "trade"


def test_classify_every_combination():
    by_symbol = {s: [c for c in GM.cities if GM.city[c]["card"] == s][:3] for s in ("basil", "mozzarella", "tomato")}
    by_symbol["pizza"] = ["joker:Milano", "joker:Roma", "joker:Catanzaro"]
    for combo in itertools.combinations_with_replacement(("basil", "mozzarella", "tomato", "pizza"), 3):
        used = {s: 0 for s in by_symbol}
        cards = []
        for s in combo:
            cards.append(by_symbol[s][used[s]])
            used[s] += 1
        jokers = combo.count("pizza")
        rest = [s for s in combo if s != "pizza"]
        if jokers == 0:
            expected = ("three_" + rest[0] if len(set(rest)) == 1 else
                        "mixed" if len(set(rest)) == 3 else "invalid")
        elif jokers == 1:
            expected = "joker_two_alike" if rest[0] == rest[1] else "joker_two_different"
        else:
            expected = {2: "two_jokers", 3: "three_jokers"}[jokers]
        assert ci.classify_set(cards, GM) == expected, combo


def test_card_checks_name_the_card():
    with pytest.raises(InputError) as err:
        ci.check_cards(GM, ["Aosta", "Torino"], "trade")
    assert err.value.field == "trade"
    with pytest.raises(InputError) as err:
        ci.check_cards(GM, ["Aosta", "joker:Torino", "Cuneo"], "trade")
    assert err.value.field == "trade[1]" and "joker:Roma" in err.value.message
    with pytest.raises(InputError) as err:
        ci.check_cards(GM, ["Aosta", "Cuneo", "Aosta"], "trade")
    assert err.value.field == "trade[2]"


def test_the_125_unit_cap():
    r = ci.reinforcements(GM, SC + ["Napoli"], 122)
    assert (r["total"], r["placeable"], r["not_placed"]) == (5, 3, 2)
    r = ci.reinforcements(GM, SC + ["Napoli"], 125)
    assert (r["placeable"], r["not_placed"]) == (0, 5)
    r = ci.reinforcements(GM, SC + ["Napoli"], 120)
    assert (r["placeable"], r["not_placed"]) == (5, 0)


@given(st.sets(st.sampled_from(GM.cities), min_size=1), st.integers(0, 125))
def test_reinforcements_against_a_direct_formula(cities, on_map):
    on_map = max(on_map, len(cities))
    r = ci.reinforcements(GM, sorted(cities), min(on_map, 125))
    whole = [reg for reg in GM.regions if set(reg["cities"]) <= cities]
    total = len(cities) // 3 + sum(reg["bonus"] for reg in whole)
    assert r["total"] == total
    assert r["placeable"] == max(0, min(total, 125 - min(on_map, 125)))
    assert r["placeable"] + r["not_placed"] == total


def test_reinforcements_document():
    doc = {"player": "Anna", "territories": {c: 2 for c in SC}, "trade": ["Cosenza", "Catanzaro", "Reggio Calabria"]}
    assert sorted(GM.city[c]["card"] for c in doc["trade"]) == ["basil", "mozzarella", "tomato"]
    out = ci.reinforcements_doc(doc)
    assert out["units_on_map"] == 10 and out["base"] == 1 and out["region_bonus"] == 3
    assert out["trade"]["kind"] == "mixed" and out["trade"]["held_bonus"] == 6
    assert out["total"] == 1 + 3 + 16 and out["placeable"] == 20


@pytest.mark.parametrize("doc, field", [
    ({"territories": ["Roma", "Atlantide"], "units_on_map": 3}, "$.territories[1]"),
    ({"territories": ["Roma"]}, "$.units_on_map"),
    ({"territories": ["Roma", "Bari"], "units_on_map": 1}, "$.units_on_map"),
    ({"territories": {"Roma": 3}, "units_on_map": 4}, "$.units_on_map"),
    ({"territories": {"La Spezia": 3, "Narnia": 1}}, '$.territories.Narnia'),
    ({"territories": {"Roma": 0}}, '$.territories.Roma'),
    ({"territories": ["Roma"], "units_on_map": 2, "trade": ["Roma", "Bari"]}, "$.trade"),
    ({"territories": ["Roma"], "units_on_map": 2, "trade": ["Aosta", "Torino", "Roma"]}, "$.trade"),
    ({"territories": ["Roma"], "units_on_map": 2, "extra": 1}, "$"),
])
def test_reinforcements_document_errors(doc, field):
    with pytest.raises(InputError) as err:
        ci.reinforcements_doc(doc)
    assert err.value.field == field


# -- set-up --------------------------------------------------------------------------------------

def test_starting_units_by_player_count():
    assert [ci.starting_units(n) for n in (3, 4, 5, 6)] == [35, 30, 25, 20]
    for n in (1, 2, 7):
        with pytest.raises(InputError) as err:
            ci.starting_units(n)
        assert err.value.field == "players"


def test_rule_book_deal_of_four_players():
    # "i primi 2 giocatori avranno già posizionato 10 mattoncini ... gli ultimi 2 ... 11"
    counts = ci.deal_counts(["A", "B", "C", "D"], 42)
    assert counts == {"A": 10, "B": 10, "C": 11, "D": 11}
    assert {p: 30 - n for p, n in counts.items()} == {"A": 20, "B": 20, "C": 19, "D": 19}


@pytest.mark.parametrize("n, expected", [(3, [14, 14, 14]), (5, [8, 8, 8, 9, 9]), (6, [7] * 6)])
def test_deal_counts(n, expected):
    players = [f"p{k}" for k in range(n)]  # in turn order: the last ones are dealt first
    counts = ci.deal_counts(players, 42)
    assert [counts[p] for p in players] == expected


def test_majority_limit_example_from_the_book():
    owner = {c: "A" for c in SC[:3]}
    owner.update({c: "B" for c in SC[3:]})
    bad = ci.deal_violations(owner, GM)
    assert bad == [{"player": "A", "region": "Sicilia e Calabria", "holds": 3, "limit": 2, "excess": 1}]


def random_deal(players, seed):
    rng = random.Random(seed)
    deck = list(GM.cities)
    rng.shuffle(deck)
    order = list(reversed(players))
    return {c: order[n % len(order)] for n, c in enumerate(deck)}


@given(st.integers(3, 6), st.integers(0, 10**9), st.booleans())
def test_fix_deal_resolves_every_violation(n, seed, with_rng):
    players = [f"p{k}" for k in range(n)]
    owner = random_deal(players, seed)
    fixed, swaps = ci.fix_deal(owner, GM, random.Random(seed) if with_rng else None)
    assert ci.deal_violations(fixed, GM) == []
    for p in players:  # every player keeps their number of cities
        assert sum(1 for v in fixed.values() if v == p) == sum(1 for v in owner.values() if v == p)
    replay = dict(owner)
    for s in swaps:  # the swaps, applied in order, turn the deal into the result
        assert replay[s["gives"]] == s["player"] and replay[s["gets"]] == s["other"]
        assert GM.region_of(s["gives"]) != GM.region_of(s["gets"])
        replay[s["gives"]], replay[s["gets"]] = s["other"], s["player"]
    assert replay == fixed
    if not ci.deal_violations(owner, GM):
        assert swaps == [] and fixed == owner


@given(st.integers(3, 6), st.integers(0, 10**9))
def test_deal_is_valid(n, seed):
    players = [f"p{k}" for k in range(n)]
    owner, _ = ci.deal(players, GM, random.Random(seed))
    ci.check_deal(owner, players, GM)  # raises if not


def test_check_deal_refusals():
    players = ["A", "B", "C", "D"]
    owner, _ = ci.deal(players, GM, random.Random(5))
    missing = dict(owner)
    del missing["Roma"]
    with pytest.raises(InputError) as err:
        ci.check_deal(missing, players, GM)
    assert "Roma" in err.value.message
    wrong = dict(owner)
    a_city = next(c for c, p in owner.items() if p == "A")
    wrong[a_city] = "D"
    with pytest.raises(RuleError) as err:
        ci.check_deal(wrong, players, GM)
    assert "must be dealt" in err.value.message
    unknown = dict(owner, Roma="Zed")
    with pytest.raises(InputError) as err:
        ci.check_deal(unknown, players, GM)
    assert err.value.field == "owner.Roma"


def test_check_deal_proposes_swaps():
    players = ["A", "B", "C", "D"]
    owner, _ = ci.deal(players, GM, random.Random(9))
    # give A three cities of Sicilia e Calabria by trading with their holders
    a_others = [c for c, p in owner.items() if p == "A" and c not in SC]
    for c in SC[:3]:
        if owner[c] != "A":
            give = a_others.pop()
            owner[give], owner[c] = owner[c], "A"
    assert any(v["player"] == "A" for v in ci.deal_violations(owner, GM))
    with pytest.raises(RuleError) as err:
        ci.check_deal(owner, players, GM)
    assert "Sicilia e Calabria" in err.value.message and "swap" in err.value.message


# -- final ranking -------------------------------------------------------------------------------

BOOK = line_map([("A1", 10, "N"), ("A2", 10, "N"), ("A3", 10, "N"), ("A4", 12, "N"), ("B1", 15, "S"),
                 ("B2", 15, "S"), ("B3", 8, "S"), ("C1", 26, "S"), ("D1", 12, "S"), ("X", 5, "S")])


def test_rule_book_ranking_example():
    # "1° 30pt + 12pt fuori obiettivo, 2° 30pt + 8pt fuori obiettivo, 3° 26pt, 4° 12pt"
    doc = {"players": ["Dario", "Carla", "Bruno", "Anna"], "map": BOOK,
           "owned": {"Anna": ["A1", "A2", "A3", "A4"], "Bruno": ["B1", "B2", "B3"], "Carla": ["C1"],
                     "Dario": ["D1", "X"]},
           "objectives": {"Anna": ["A1", "A2", "A3"], "Bruno": ["B1", "B2", "X"], "Carla": ["C1", "A4"],
                          "Dario": ["D1", "C1"]}}
    out = ci.score(doc)
    rows = {r["player"]: r for r in out["players"]}
    assert (rows["Anna"]["objective_points"], rows["Anna"]["other_points"], rows["Anna"]["place"]) == (30, 12, 1)
    assert (rows["Bruno"]["objective_points"], rows["Bruno"]["other_points"], rows["Bruno"]["place"]) == (30, 8, 2)
    assert (rows["Carla"]["objective_points"], rows["Carla"]["place"]) == (26, 3)
    assert (rows["Dario"]["objective_points"], rows["Dario"]["other_points"], rows["Dario"]["place"]) == (12, 5, 4)
    assert out["ranking"] == ["Anna", "Bruno", "Carla", "Dario"]
    assert out["results"][0] == {"player": "Anna", "place": 1, "objective": False, "eliminated": False}


def test_shared_place_when_still_equal():
    doc = {"players": ["A", "B", "C"], "map": BOOK,
           "owned": {"A": ["A1"], "B": ["A2"], "C": ["B1"]},
           "objectives": {"A": ["A1"], "B": ["A2"], "C": ["D1"]}}
    out = ci.score(doc)
    assert [(r["player"], r["place"]) for r in out["players"]] == [("A", 1), ("B", 1), ("C", 3)]


def test_completing_the_objective_wins_at_once():
    doc = {"players": ["A", "B", "C"], "map": BOOK,
           "owned": {"A": ["X"], "B": ["C1", "B1", "B2"], "C": ["A1"]},
           "objectives": {"A": ["X"], "B": ["C1", "B1"], "C": ["A1"]}, "objective_completed_by": "A"}
    out = ci.score(doc)
    assert out["ranking"] == ["A", "B", "C"]
    assert out["players"][0]["objective"] and out["players"][0]["objective_points"] == 5
    assert [r["place"] for r in out["players"]] == [1, 2, 3]


def test_completed_by_must_hold_the_objective():
    doc = {"players": ["A", "B", "C"], "map": BOOK,
           "owned": {"A": ["X"], "B": ["C1"], "C": ["A1"]},
           "objectives": {"A": ["X", "A1"], "B": ["C1"], "C": ["A1"]}, "objective_completed_by": "A"}
    with pytest.raises(InputError) as err:
        ci.score(doc)
    assert err.value.field == "$.objective_completed_by" and "A1" in err.value.message


def test_eliminated_players_hold_nothing():
    doc = {"players": ["A", "B", "C"], "map": BOOK,
           "owned": {"A": ["X"], "B": ["C1"], "C": []},
           "objectives": {"A": ["X"], "B": ["C1"], "C": ["A1"]}}
    out = ci.score(doc)
    last = out["players"][-1]
    assert last["player"] == "C" and last["eliminated"] and last["objective_points"] == last["other_points"] == 0


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["owned"].update(Zed=["Roma"]), "$.owned.Zed"),
    (lambda d: d["owned"].pop("Carla"), "$.owned"),
    (lambda d: d["objectives"].pop("Carla"), "$.objectives"),
    (lambda d: d["owned"]["Anna"].append("Atlantide"), "$.owned.Anna[2]"),
    (lambda d: d["owned"]["Bruno"].append("Roma"), "$.owned.Bruno[1]"),
    (lambda d: d["objectives"]["Carla"].append("Nowhere"), "$.objectives.Carla[1]"),
    (lambda d: d.update(players=["Anna", "Bruno", "Anna"]), "$.players[2]"),
    (lambda d: d.update(objective_completed_by="Zed"), "$.objective_completed_by"),
    (lambda d: d.update(map={"regions": []}), "$.map.regions"),
    (lambda d: d["owned"].update({"La Spezia": []}), '$.owned["La Spezia"]'),
])
def test_score_errors_name_the_path(mutate, field):
    doc = {"players": ["Anna", "Bruno", "Carla"],
           "owned": {"Anna": ["Roma", "Milano"], "Bruno": ["Bari"], "Carla": ["Torino"]},
           "objectives": {"Anna": ["Roma"], "Bruno": ["Bari"], "Carla": ["Torino"]}}
    mutate(doc)
    with pytest.raises(InputError) as err:
        ci.score(doc)
    assert err.value.field == field


def test_score_of_the_shipped_examples():
    from companion.base.resources import schemas_dir

    folder = schemas_dir() / "examples" / "conquest-italy.score"
    end = ci.score(json.loads((folder / "end-of-match-4-players.json").read_text()))
    assert [r["place"] for r in end["players"]] == [1, 2, 3, 4]
    # Dario and Anna both have 17 objective points: the other cities decide
    assert end["players"][0]["objective_points"] == end["players"][1]["objective_points"]
    assert end["players"][0]["other_points"] > end["players"][1]["other_points"]
    done = ci.score(json.loads((folder / "objective-completed.json").read_text()))
    assert done["ranking"][0] == "Carla" and done["players"][0]["objective"]


@given(st.integers(3, 6), st.integers(0, 10**9), st.booleans())
def test_ranking_against_counting_who_is_better(n, seed, someone_completed):
    rng = random.Random(seed)
    players = [f"p{k}" for k in range(n)]
    owner = {c: rng.choice(players + [None]) for c in GM.cities}
    owned = {p: [c for c in GM.cities if owner[c] == p] for p in players}
    objectives = {p: rng.sample(GM.cities, rng.randint(1, 8)) for p in players}
    completed = None
    if someone_completed:
        completed = rng.choice(players)
        for c in objectives[completed]:
            for q in players:
                if c in owned[q]:
                    owned[q].remove(c)
            owned[completed].append(c)
    out = ci.rank(players, GM, owned, objectives, completed)

    def pts(p):
        obj = sum(GM.value(c) for c in objectives[p] if c in owned[p])
        other = sum(GM.value(c) for c in owned[p] if c not in objectives[p])
        return (p == completed, obj, other)

    for r in out["players"]:
        better = sum(1 for q in players if pts(q) > pts(r["player"]))
        assert r["place"] == 1 + better
        assert (r["objective"], r["objective_points"], r["other_points"]) == pts(r["player"])
        assert r["eliminated"] == (not owned[r["player"]])
    places = [r["place"] for r in out["players"]]
    assert places == sorted(places) and places[0] == 1
    if completed:
        assert out["players"][0]["player"] == completed and places.count(1) == 1


def test_line_map_helper_is_a_valid_club_map():
    from companion.games.conquest_map import check_map

    assert check_map(BOOK, cities=10)["cities"] == 10
    assert isinstance(GameMap(BOOK), GameMap)
    assert default_map_doc()["regions"]
