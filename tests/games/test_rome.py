"""Rome Is Burning: the card catalogue, turn scoring and the election (pure functions + CLI)."""

import json
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.base.errors import InputError
from companion.games import rome_is_burning as G

NAMES = [n for n, _ in G.CATALOGUE]


# ---------------------------------------------------------------------------------------------------------
# catalogue

def test_the_catalogue_is_the_rule_books_40_cards():
    assert len(G.CATALOGUE) == 40 and len(set(NAMES)) == 40
    assert len({G.normalize(n) for n in NAMES}) == 40  # matching keys don't collide
    letters = Counter(t for _, types in G.CATALOGUE for t in types)
    # 20 Assassination + 20 Bread & Circus; each card one of P/M or U/V, then one more
    assert letters["A"] == 20 and letters["B"] == 20
    assert letters["P"] == letters["M"] == letters["U"] == letters["V"] == 10
    assert all(letters[t] == 5 for t in "ICSRGDOT")
    assert all(len(types) == 3 and set(types) <= set(G.TYPE_NAMES) for _, types in G.CATALOGUE)
    assert G.TYPES["Follia dell’Imperatore"] == "API" and G.TYPES["Decapitazioni"] == "BVT"


@pytest.mark.parametrize("typed, name", [
    ("terme", "Terme"),
    ("  LEONI   e bestie ", "Leoni e Bestie"),
    ("Follia dell'Imperatore", "Follia dell’Imperatore"),
    ("follia dell`imperatore", "Follia dell’Imperatore"),
    ("Tèrme", "Terme"),
    ("la nuova Repubblica", "La Nuova repubblica"),
])
def test_names_match_ignoring_case_accents_and_apostrophes(typed, name):
    assert G.card_name(typed) == name


def test_an_unknown_card_is_named():
    with pytest.raises(InputError) as err:
        G.card_name("Terme di Caracalla", "$.hands.a[0]")
    assert "Terme di Caracalla" in err.value.message and err.value.field == "$.hands.a[0]"


# ---------------------------------------------------------------------------------------------------------
# turn scoring

def test_a_plebeian_hand():
    # Tradimento API, Cospirazione API, Rivolta Plebea APC, Centurioni AMS:
    # 4 cards + 4 A + P 3² + I 2² + C 1² + M 1² + S 1² = 4 + 4 + 9 + 4 + 1 + 1 + 1
    out = G.hand_score(["Tradimento", "Cospirazione", "Rivolta Plebea", "Centurioni"], emperor=False)
    assert out["score"] == 24 and out["squares"] == {"P": 9, "M": 1, "I": 4, "C": 1, "S": 1}


def test_the_same_hand_scores_differently_for_the_emperor():
    hand = ["Tradimento", "Cospirazione", "Rivolta Plebea", "Centurioni"]
    assert G.hand_score(hand, emperor=True)["score"] == 4  # only 1 per card: no B, V, U, T, O, G, D
    hand = ["Terme", "Vergini Vestali", "Crocifissioni", "Corsa di Bighe"]  # BVO BVO BVT BUG
    assert G.hand_score(hand, emperor=True)["score"] == 4 + 4 + 9 + 4 + 1 + 1 + 1
    assert G.hand_score(hand, emperor=False)["score"] == 4


def test_empty_hands_score_zero():
    out = G.score({"emperor": None, "hands": {"a": [], "b": []}})
    assert [p["score"] for p in out["players"]] == [0, 0]
    assert out["new_emperor"] is None and out["decision_needed"] == {"by": "table", "candidates": ["a", "b"]}


def test_score_document_with_a_clear_winner():
    out = G.score({"emperor": "Anna", "hands": {
        "Anna": ["Terme", "vergini vestali", "Crocifissioni", "Corsa di Bighe"],
        "Bruno": ["Tradimento", "Cospirazione", "Follia dell'Imperatore", "Centurioni"],
        "Carla": ["Legioni"]}})
    assert [(p["player"], p["role"], p["score"]) for p in out["players"]] == [
        ("Anna", "emperor", 24), ("Bruno", "plebeian", 4 + 4 + 9 + 9 + 1 + 1), ("Carla", "plebeian", 4)]
    assert out["new_emperor"] == "Bruno" and out["emperor_points"] == 28
    assert "decision_needed" not in out


def test_a_tie_asks_the_old_emperor():
    doc = {"emperor": "Carla", "hands": {"Anna": ["Tradimento"], "Bruno": ["Centurioni"], "Carla": ["Tributi"]}}
    out = G.score(doc)
    assert out["new_emperor"] is None and out["emperor_points"] is None
    assert out["decision_needed"] == {"by": "Carla", "candidates": ["Anna", "Bruno"]}
    out = G.score({**doc, "emperor_choice": "Bruno"})
    assert out["new_emperor"] == "Bruno" and out["emperor_points"] == 4


@pytest.mark.parametrize("doc, path, needle", [
    ({"emperor": None, "hands": {"a": ["Terme", "Bagni"], "b": []}}, "$.hands.a[1]", "Bagni"),
    ({"emperor": None, "hands": {"a": ["Terme"], "b": ["terme"]}}, "$.hands.b[0]", "Terme"),
    ({"emperor": None, "hands": {"a": ["Terme", "Terme"], "b": []}}, "$.hands.a[1]", "Terme"),
    ({"emperor": "Nero", "hands": {"a": [], "b": []}}, "$.emperor", "Nero"),
    ({"emperor": None, "hands": {"a": ["Terme"], "b": ["Tributi"]}, "emperor_choice": "a"}, "$.emperor_choice",
     "not among"),
    ({"emperor": None, "hands": {"a": [], "b": []}, "emperor_choice": "z"}, "$.emperor_choice", "z"),
    ({"emperor": None, "hands": {"a": [], "b": [3]}}, "$.hands.b[0]", ""),
    ({"emperor": None, "hands": {"the emperor": [], "b": ["Xyz"]}}, "$.hands.b[0]", "Xyz"),
    ({"emperor": None, "hands": {"Anna Maria": ["Xyz"], "b": []}}, '$.hands["Anna Maria"][0]', "Xyz"),
    ({"hands": {"a": [], "b": []}}, "$", "emperor"),
])
def test_bad_documents_name_the_field(doc, path, needle):
    with pytest.raises(InputError) as err:
        G.score(doc)
    assert err.value.field == path and needle in err.value.message


# property tests against an independent formulation

PLEB = {"A": 1, "P": 2, "M": 2, "I": 2, "C": 2, "S": 2, "R": 2}
EMP = {"B": 1, "V": 2, "U": 2, "T": 2, "O": 2, "G": 2, "D": 2}


def independent_score(hand, emperor):
    """1 a card; an 'extra' letter adds 1 a card; a 'square' letter adds, per card carrying it, the number of
    cards in the hand carrying it (summing n over n cards is n²)."""
    table = EMP if emperor else PLEB
    total = 0
    for card in hand:
        total += 1
        for letter in G.TYPES[card]:
            kind = table.get(letter)
            if kind == 1:
                total += 1
            elif kind == 2:
                total += sum(1 for other in hand if letter in G.TYPES[other])
    return total


@st.composite
def tables(draw):
    n = draw(st.integers(2, 6))
    order = draw(st.permutations(NAMES))
    cut = sorted(draw(st.lists(st.integers(0, 40), min_size=n - 1, max_size=n - 1)))
    bounds = [0] + cut + [draw(st.integers(cut[-1], 40))]
    hands = {f"p{i}": order[bounds[i]:bounds[i + 1]] for i in range(n)}
    emperor = draw(st.one_of(st.none(), st.sampled_from(sorted(hands))))
    return emperor, hands


@given(tables())
def test_turn_scores_match_an_independent_formulation(table):
    emperor, hands = table
    out = G.score({"emperor": emperor, "hands": hands})
    expected = {p: independent_score(h, p == emperor) for p, h in hands.items()}
    assert {r["player"]: r["score"] for r in out["players"]} == expected
    best = max(expected.values())
    winners = [p for p, s in expected.items() if s == best]
    if len(winners) == 1:
        assert out["new_emperor"] == winners[0] and out["emperor_points"] == best
    else:
        assert out["new_emperor"] is None
        assert out["decision_needed"] == {"by": emperor or "table", "candidates": winners}
        chosen = G.score({"emperor": emperor, "hands": hands, "emperor_choice": winners[-1]})
        assert chosen["new_emperor"] == winners[-1] and chosen["emperor_points"] == best


@given(tables(), st.data())
def test_spelling_variants_score_the_same(table, data):
    emperor, hands = table

    def mangle(name):
        style = data.draw(st.sampled_from(["upper", "lower", "apostrophe", "spaces"]))
        return {"upper": name.upper(), "lower": name.lower(), "apostrophe": name.replace("’", "'"),
                "spaces": "  " + name.replace(" ", "   ") + " "}[style]

    mangled = {p: [mangle(c) for c in h] for p, h in hands.items()}
    assert G.score({"emperor": emperor, "hands": mangled}) == G.score({"emperor": emperor, "hands": hands})


# ---------------------------------------------------------------------------------------------------------
# CLI

def test_cli_score(run_cli):
    doc = {"emperor": None, "hands": {"Anna": ["Tradimento"], "Bruno": ["Centurioni"]}}
    code, out, err = run_cli("score", "rome-is-burning", "-", stdin=json.dumps(doc))
    assert code == 0, err
    assert json.loads(out)["decision_needed"] == {"by": "table", "candidates": ["Anna", "Bruno"]}


@pytest.mark.parametrize("doc, needle", [
    ({"emperor": None, "hands": {"Anna": ["Tradimento", "Panem"], "Bruno": []}}, "$.hands.Anna[1]"),
    ({"emperor": None, "hands": {"Anna": ["Tradimento"], "Bruno": ["tradimento"]}}, "Tradimento"),
    ({"emperor": "Nero", "hands": {"Anna": [], "Bruno": []}}, "Nero"),
])
def test_cli_bad_input_exits_2_with_one_line(run_cli, doc, needle):
    code, out, err = run_cli("score", "rome-is-burning", "-", stdin=json.dumps(doc))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err
