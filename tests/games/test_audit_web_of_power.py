"""Independent audit of the Web of Power engine against the rule book
("WoP book" below, Italian) and docs/rulings.md#web-of-power ("ruling" below; a ruling wins over the
book). Each test names the rule it checks.

The oracles here are written from the rules, not from the engine: dense-rank monastery points, the
alliance test per country, and the chain score as a subset dynamic programme (a set of monasteries is
one chain iff it has a Hamiltonian path; the best score is the best partition into such sets).
Boards with roads below are FICTIONAL (the real board's roads are unknown), built only to test rules.
"""

import copy
import itertools
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.base.errors import InputError, RuleError
from companion.games import web_of_power as wop
from companion.games import wop_board
from companion.games.wop_chains import SEARCH_BUDGET, SearchTooLong, best_chains

P3 = ["A", "B", "C"]
P4 = ["Anna", "Barbara", "Chris", "Dan"]
P5 = ["A", "B", "C", "D", "E"]


def pts(result, player, kind=None, **match):
    row = next(r for r in result["players"] if r["player"] == player)
    return sum(e["points"] for e in row["breakdown"]
               if (kind is None or e["kind"] == kind) and all(e.get(k) == v for k, v in match.items()))


def board(countries, roads, alliances=()):
    """A FICTIONAL board: ``countries`` {id: [site ids]}, roads as pairs, alliances as pairs (1, 2, ...)."""
    return {"game": "web-of-power", "name": "FICTIONAL audit board",
            "countries": [{"id": c, "sites": list(s)} for c, s in countries.items()],
            "roads": [list(r) for r in roads],
            "alliances": [{"number": i + 1, "countries": list(p)} for i, p in enumerate(alliances)]}


# =============================================================================================
# Monastery majority (WoP book p. 7-8; ruling: dense ranks, the 5th scores the 4th's count)

def oracle_monasteries(counts):
    """Ruling, literally: order the distinct counts (players with none score nothing); rank 1 scores
    the country's total; rank k > 1 scores the count of rank k - 1."""
    present = {p: n for p, n in counts.items() if n > 0}
    distinct = sorted(set(present.values()), reverse=True)
    out = {}
    for p, n in present.items():
        k = distinct.index(n)
        out[p] = sum(present.values()) if k == 0 else distinct[k - 1]
    return out


def test_book_franken_example_7_4_2():
    # WoP book p. 8: "Anna 4, Barbara 2, Dan 1 ... Anna 7 punti, Barbara 4, Dan 2"
    res = wop.score({"players": P4, "scoring": "intermediate",
                     "monasteries": {"Anna": {"Franken": 4}, "Barbara": {"Franken": 2}, "Dan": {"Franken": 1}}})
    assert {p: pts(res, p) for p in P4} == {"Anna": 7, "Barbara": 4, "Chris": 0, "Dan": 2}


def test_book_lothringen_tie_5_5_2():
    # WoP book p. 8: "Barbara e Chris ... 2 monasteri e Dan 1 ... entrambe 5 punti ... Dan 2 punti"
    res = wop.score({"players": P4, "scoring": "intermediate",
                     "monasteries": {"Barbara": {"Lothringen": 2}, "Chris": {"Lothringen": 2},
                                     "Dan": {"Lothringen": 1}}})
    assert {p: pts(res, p) for p in P4} == {"Anna": 0, "Barbara": 5, "Chris": 5, "Dan": 2}


def test_fifth_scores_the_fourths_count_not_the_firsts():
    # ruling: the book's "il quinto ... del giocatore con il maggior numero" is a typo for the fourth
    res = wop.score({"players": P5, "scoring": "intermediate",
                     "monasteries": {"A": {"Burgund": 6}, "B": {"Burgund": 5}, "C": {"Burgund": 3},
                                     "D": {"Burgund": 2}, "E": {"Burgund": 1}}})
    assert pts(res, "E") == 2 and pts(res, "E") != 6
    assert [pts(res, p) for p in P5] == [17, 6, 5, 3, 2]


def test_dense_ranks_two_tied_groups():
    # ruling: "ties share a rank and the next distinct count is the next rank"
    res = wop.score({"players": P5, "scoring": "intermediate",
                     "monasteries": {"A": {"England": 3}, "B": {"England": 3}, "C": {"England": 2},
                                     "D": {"England": 2}, "E": {"England": 1}}})
    assert [pts(res, p) for p in P5] == [11, 11, 3, 3, 2]
    ranks = [e["rank"] for p in P5 for e in next(r for r in res["players"] if r["player"] == p)["breakdown"]]
    assert ranks == [1, 1, 2, 2, 3]


def test_country_where_nobody_built_scores_nothing_and_zero_is_absent():
    # WoP book p. 8: "Se un giocatore non ha monasteri in una nazione, non guadagna punti"
    res = wop.score({"players": P3, "scoring": "final",
                     "monasteries": {"A": {"Italien": 0}, "B": {"Italien": 1}}})
    assert pts(res, "A") == 0 and pts(res, "B") == 1
    assert next(r for r in res["players"] if r["player"] == "A")["breakdown"] == []


@settings(max_examples=300)
@given(st.dictionaries(st.sampled_from(P5), st.integers(0, 20)))
def test_monastery_points_match_the_ruling_literally(counts):
    got = {p: v[0] for p, v in wop.monastery_points(counts).items()}
    assert got == oracle_monasteries(counts)


def test_countries_are_scored_in_the_books_order():
    # WoP book p. 7: England, Franken, Bayern, Italien, Argon, then Frankreich, Lothringen, Schwaben, Burgund
    order = ["England", "Franken", "Bayern", "Italien", "Aragon", "Frankreich", "Lothringen", "Schwaben", "Burgund"]
    res = wop.score({"players": P3, "scoring": "intermediate",
                     "monasteries": {"A": {c: 1 for c in reversed(order)}}})
    assert [e["country"] for e in res["players"][0]["breakdown"]] == order


# =============================================================================================
# Alliances (WoP book p. 9-10; ruling: most councillors, ties included, in EACH country; no second)

def oracle_alliance(cons, a, b, players):
    def leads(p, c):
        here = cons.get(c, {})
        return here.get(p, 0) >= 1 and here.get(p, 0) == max(here.values())
    total = sum(cons.get(a, {}).values()) + sum(cons.get(b, {}).values())
    return {p: total for p in players if leads(p, a) and leads(p, b)}


def test_book_alliances_14_scores_6_and_15_scores_nothing():
    # WoP book p. 10: Italien Dan 2, Barbara 1, Anna 1; Burgund Dan 1, Barbara 1 -> Dan 6;
    # Bayern Barbara 2, Anna 1 -> alliance 15 (Italien-Bayern): nobody
    doc = {"players": P4, "scoring": "final",
           "monasteries": {"Dan": {"Italien": 4, "Burgund": 2, "Bayern": 3}},
           "councillors": {"Italien": {"Dan": 2, "Barbara": 1, "Anna": 1}, "Burgund": {"Dan": 1, "Barbara": 1},
                           "Bayern": {"Barbara": 2, "Anna": 1}}}
    res = wop.score(doc)
    assert pts(res, "Dan", "alliance", number=14) == 6
    assert all(pts(res, p, "alliance", number=15) == 0 for p in P4)
    assert all(pts(res, p, "alliance") == 0 for p in ("Anna", "Barbara", "Chris"))


def test_majority_of_the_sum_is_not_a_majority_in_each():
    # WoP book p. 9: "Un giocatore non deve avere la maggioranza ... sommando ... ma in ognuna"
    b = board({"X": ["x1", "x2", "x3"], "Y": ["y1", "y2", "y3", "y4"]}, [], [("X", "Y")])
    doc = {"players": P3, "scoring": "final", "map": b,
           "monasteries": {"A": ["x1", "x2", "y1", "y2", "y3"], "C": ["x3", "y4"]},
           "councillors": {"X": {"A": 2, "B": 1}, "Y": {"B": 3}}}
    res = wop.score(doc)
    assert all(pts(res, p, "alliance") == 0 for p in P3)  # B has 4 of 6 in all, leads only Y


def test_alliance_ties_in_both_countries_each_score_everything_no_second():
    # WoP book p. 9: "Se c'è parità ... tutti guadagnano lo stesso numero di punti"; "Non esiste un secondo posto"
    b = board({"X": ["x1", "x2"], "Y": ["y1", "y2", "y3"]}, [], [("X", "Y")])
    doc = {"players": P3, "scoring": "final", "map": b,
           "monasteries": {"A": ["x1", "y1"], "B": ["x2", "y2"], "C": ["y3"]},
           "councillors": {"X": {"A": 1, "B": 1}, "Y": {"A": 1, "B": 1, "C": 1}}}
    res = wop.score(doc)
    assert pts(res, "A", "alliance") == 5 and pts(res, "B", "alliance") == 5 and pts(res, "C", "alliance") == 0
    assert any("Y: 3 councillor(s), more than the 1 allowed" in w for w in res["warnings"])


@settings(max_examples=300)
@given(st.dictionaries(st.sampled_from(["X", "Y", "Z"]),
                       st.dictionaries(st.sampled_from(P4), st.integers(0, 3))))
def test_alliance_winners_match_the_rule(cons):
    winners, points = wop.alliance_winners(cons, "X", "Y")
    assert {p: points for p in winners} == oracle_alliance(cons, "X", "Y", P4)


def test_alliances_are_not_scored_at_the_intermediate_scoring():
    # ruling: intermediate counts monasteries only (WoP book p. 7: "solo il numero di monasteri")
    b = board({"X": ["x1", "x2", "x3", "x4"], "Y": ["y1"]}, [["x1", "x2"], ["x2", "x3"], ["x3", "x4"]],
              [("X", "Y")])
    doc = {"players": P3, "scoring": "intermediate", "map": b,
           "monasteries": {"A": ["x1", "x2", "x3", "x4", "y1"]}, "councillors": {"X": {"A": 1}, "Y": {"A": 1}}}
    inter = wop.score(doc)
    assert {e["kind"] for e in inter["players"][0]["breakdown"]} == {"monasteries"}
    assert pts(inter, "A") == 5
    final = wop.score(dict(doc, scoring="final"))
    assert pts(final, "A", "alliance") == 2 and pts(final, "A", "chain") == 4
    assert pts(final, "A") == 5 + 2 + 4


# =============================================================================================
# Chains (WoP book p. 10-11; ruling: simple paths of >= 4, each monastery in one chain, the best
# decomposition computed exactly)

def oracle_chains(vertices, edges, min_len=4):
    """Subset DP, independent of the engine's search: ham[S] = S has a Hamiltonian path (bitmask DP
    over path ends), then best[S] = max over the chain T holding S's lowest vertex (or none)."""
    n = len(vertices)
    idx = {v: i for i, v in enumerate(vertices)}
    adj = [0] * n
    for a, b in edges:
        if a in idx and b in idx and a != b:
            adj[idx[a]] |= 1 << idx[b]
            adj[idx[b]] |= 1 << idx[a]
    ends = [0] * (1 << n)  # ends[S]: bitmask of v such that a path covering S ends at v
    for v in range(n):
        ends[1 << v] = 1 << v
    for s in range(1, 1 << n):
        e = ends[s]
        if not e:
            continue
        for v in range(n):
            if e >> v & 1:
                nxt = adj[v] & ~s
                while nxt:
                    low = nxt & -nxt
                    ends[s | low] |= low
                    nxt ^= low
    chain = [bool(ends[s]) and bin(s).count("1") >= min_len for s in range(1 << n)]
    best = [0] * (1 << n)
    for s in range(1, 1 << n):
        low = s & -s
        val = best[s ^ low]  # the lowest vertex in no chain
        sub = s
        while sub:
            if sub & low and chain[sub]:
                val = max(val, bin(sub).count("1") + best[s ^ sub])
            sub = (sub - 1) & s
        best[s] = val
    return best[(1 << n) - 1]


def check_chains(vertices, edges, total, chains):
    roads = {frozenset(e) for e in edges}
    used = set()
    for c in chains:
        assert len(c) >= 4 and len(set(c)) == len(c)
        assert all(frozenset(p) in roads for p in zip(c, c[1:]))
        assert not used & set(c)
        used |= set(c)
    assert total == sum(map(len, chains))


def test_oracle_is_not_trivial():
    assert oracle_chains("abcd", [("a", "b"), ("b", "c"), ("c", "d")]) == 4
    assert oracle_chains("abcd", [("a", "b"), ("a", "c"), ("a", "d")]) == 0
    assert oracle_chains("abcdefghi", [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("c", "f"),
                                       ("f", "g"), ("g", "h"), ("h", "i")]) == 9


@st.composite
def graphs(draw, max_n=10):
    n = draw(st.integers(0, max_n))
    pairs = list(itertools.combinations(range(n), 2))
    edges = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs))) if pairs else []
    return list(range(n)), edges


@settings(max_examples=250, deadline=None)
@given(graphs())
def test_chain_solver_equals_the_subset_dp(graph):
    vertices, edges = graph
    total, chains = best_chains(vertices, edges)
    assert total == oracle_chains(vertices, edges)
    check_chains(vertices, edges, total, chains)


@st.composite
def near_bipartite(draw):
    """Dense two-sided graphs (the shape that made the old search take minutes), a few extra roads."""
    a = draw(st.integers(2, 4))
    b = draw(st.integers(3, 7))
    left, right = list(range(a)), list(range(a, a + b))
    edges = [e for e in itertools.product(left, right) if draw(st.booleans()) or draw(st.booleans())]
    extra = draw(st.lists(st.sampled_from(list(itertools.combinations(right, 2))), max_size=2, unique=True))
    return left + right, edges + extra


@settings(max_examples=150, deadline=None)
@given(near_bipartite())
def test_chain_solver_equals_the_subset_dp_on_dense_two_sided_graphs(graph):
    vertices, edges = graph
    total, chains = best_chains(vertices, edges)
    assert total == oracle_chains(vertices, edges)
    check_chains(vertices, edges, total, chains)


def test_book_branch_example_through_score():
    # WoP book p. 11: Chris's chain of 5 in Italien and Burgund; the Bayern monastery is a branch:
    # 5 points, and the 4 in Italien with Bayern are not a second chain
    b = board({"Italien": ["i1", "i2", "i3", "i4"], "Burgund": ["u1"], "Bayern": ["y1"]},
              [("u1", "i1"), ("i1", "i2"), ("i2", "i3"), ("i3", "i4"), ("i2", "y1")])
    res = wop.score({"players": P4, "scoring": "final", "map": b,
                     "monasteries": {"Chris": ["u1", "i1", "i2", "i3", "i4", "y1"]}})
    chains = [e for e in res["players"][2]["breakdown"] if e["kind"] == "chain"]
    assert [e["points"] for e in chains] == [5]
    assert set(chains[0]["sites"]) <= {"u1", "i1", "i2", "i3", "i4", "y1"}


def test_chains_cross_borders_and_ignore_other_players_sites():
    # WoP book p. 10: "La catena può ... attraversare i confini"; a chain is one player's monasteries
    b = board({"X": ["x1", "x2"], "Y": ["y1", "y2", "y3"]},
              [("x1", "x2"), ("x2", "y1"), ("y1", "y2"), ("y2", "y3")])
    res = wop.score({"players": P3, "scoring": "final", "map": b,
                     "monasteries": {"A": ["x1", "x2", "y2", "y3"], "B": ["y1"]}})
    assert pts(res, "A", "chain") == 0  # B's monastery at y1 breaks the road
    res = wop.score({"players": P3, "scoring": "final", "map": b,
                     "monasteries": {"A": ["x1", "x2", "y1", "y2"], "B": ["y3"]}})
    assert pts(res, "A", "chain") == 4


def test_dense_two_sided_graph_is_exact_within_the_budget():
    # audit fix: K(5,15) took ~45 s (K(6,14) ~2 min) before the independent-set bound; its best is
    # 12 (each chain alternates sides, so holds at most one more of the 15 than of the 5)
    left, right = list(range(5)), list(range(5, 20))
    edges = list(itertools.product(left, right))
    total, chains = best_chains(left + right, edges, budget=SEARCH_BUDGET)
    assert total == 12
    check_chains(left + right, edges, total, chains)
    left, right = list(range(6)), list(range(6, 20))
    assert best_chains(left + right, list(itertools.product(left, right)), budget=SEARCH_BUDGET)[0] == 15


def test_a_search_past_its_budget_is_refused_naming_the_roads(monkeypatch):
    # never a guessed chain score: past the budget, score() refuses (exit 2) naming $.map.roads
    left, right = [f"l{i}" for i in range(5)], [f"r{i}" for i in range(15)]
    with pytest.raises(SearchTooLong):
        best_chains(left + right, list(itertools.product(left, right)), budget=5)
    b = board({"X": left + right}, list(itertools.product(left, right)))
    doc = {"players": P3, "scoring": "final", "map": b, "monasteries": {"A": left + right}}
    assert pts(wop.score(copy.deepcopy(doc)), "A", "chain") == 12
    monkeypatch.setattr(wop, "SEARCH_BUDGET", 5)
    with pytest.raises(InputError) as err:
        wop.score(doc)
    assert err.value.field == "$.map.roads" and "too dense" in err.value.message


def test_hand_chains_rules():
    # ruling: without roads, lengths by hand, each >= 4, together <= the player's monasteries
    doc = {"players": P3, "scoring": "final", "monasteries": {"A": {"Italien": 5, "Burgund": 3}},
           "chains": {"A": [4, 4]}}
    assert pts(wop.score(doc), "A", "chain") == 8
    with pytest.raises(InputError) as err:
        wop.score(dict(doc, chains={"A": [5, 4]}))
    assert err.value.field == "$.chains.A"
    with pytest.raises(InputError) as err:
        wop.score(dict(doc, chains={"A": [3]}))
    assert err.value.field == "$.chains.A[0]"


def test_match_hand_chains_for_a_player_placed_by_country_on_a_board_with_roads():
    # audit fix: score() accepts hand chains for a player given by country on a board with roads;
    # the reducer refused them, so such a player's chains could never score in a match
    b = board({"X": ["x1", "x2", "x3", "x4", "x5"], "Y": ["y1", "y2", "y3"]},
              [("x1", "x2"), ("x2", "x3"), ("x3", "x4"), ("x4", "x5")])
    s = wop.initial_state(P3, {"board": b})
    seq = 0

    def ap(t, data):
        nonlocal s, seq
        seq += 1
        s = wop.apply(s, {"seq": seq, "type": t, "data": data})

    for _ in range(2):
        ap("place", {"player": "A", "piece": "monastery", "country": "X", "count": 2})
        ap("turn.end", {})
        ap("place", {"player": "B", "piece": "monastery", "country": "Y"})
        ap("turn.end", {})
        ap("turn.end", {})
    with pytest.raises(InputError) as err:
        ap("chains", {"player": "A", "lengths": [5]})  # more than A's 4 monasteries
    assert err.value.field == "lengths"
    ap("chains", {"player": "A", "lengths": [4]})  # A placed by country: hand chains accepted
    with pytest.raises(InputError) as err:  # C placed no monastery by country: roads decide
        ap("chains", {"player": "C", "lengths": [4]})
    assert err.value.field == "lengths"
    ap("deck.out", {})
    ap("deck.out", {})
    assert s["ended"]
    final = s["scorings"]["final"]
    assert pts(final, "A", "chain") == 4 and pts(final, "A", "monasteries") == 4


# =============================================================================================
# Totals, winner and tie-break (WoP book p. 11; ruling: tie -> most unplayed pieces, 20 + 8 each)

def test_tie_on_points_goes_to_most_unplayed_pieces_councillors_count():
    doc = {"players": P3, "scoring": "final",
           "monasteries": {"A": {"Franken": 2}, "B": {"Bayern": 2}},
           "councillors": {"Franken": {"A": 1}, "Bayern": {"B": 2}}}
    res = wop.score(doc)
    assert pts(res, "A") == pts(res, "B") == 2  # alliances of the template are unknown here
    by = {r["player"]: r for r in res["ranking"]}
    assert by["A"]["unplayed"] == 28 - 3 and by["B"]["unplayed"] == 28 - 4
    assert res["winners"] == ["A"] and by["A"]["place"] == 1 and by["B"]["place"] == 2


def test_intermediate_ranking_has_no_tie_break_and_no_winner():
    doc = {"players": P3, "scoring": "intermediate",
           "monasteries": {"A": {"Franken": 2}, "B": {"Bayern": 1, "Italien": 1}}}
    res = wop.score(doc)
    assert [r["place"] for r in res["ranking"]] == [1, 1, 3] and "winners" not in res


def test_match_totals_add_both_scorings_and_rank_by_unplayed():
    s = wop.initial_state(P3, {})
    seq = 0

    def ap(t, data):
        nonlocal s, seq
        seq += 1
        s = wop.apply(s, {"seq": seq, "type": t, "data": data})

    ap("place", {"player": "A", "piece": "monastery", "country": "Franken"})
    ap("place", {"player": "B", "piece": "monastery", "country": "Bayern"})
    ap("deck.out", {})  # intermediate: A 1, B 1
    ap("place", {"player": "C", "piece": "monastery", "country": "Italien"})
    ap("place", {"player": "A", "piece": "councillor", "country": "Franken"})
    ap("deck.out", {})  # final: A 1, B 1, C 1
    summ = wop.summary(s)
    assert summ["scores"]["totals"] == {"A": 2, "B": 2, "C": 1}
    ranking = summ["scores"]["ranking"]
    assert [(r["player"], r["place"]) for r in ranking] == [("B", 1), ("A", 2), ("C", 3)]


# =============================================================================================
# Placement legality, supply, deck (WoP book p. 3, 5-6, 11 "Varianti"; ruling: warnings, never silent)

def play(events, players=P3, options=None):
    s = wop.initial_state(players, options or {})
    for i, (t, d) in enumerate(events, 1):
        s = wop.apply(s, {"seq": i, "type": t, "data": d})
    return s


def mon(p, country, n=1):
    return ("place", {"player": p, "piece": "monastery", "country": country, "count": n})


def con(p, country, n=1):
    return ("place", {"player": p, "piece": "councillor", "country": country, "count": n})


def texts(s):
    return [w["message"] for w in s["warnings"]]


@pytest.mark.parametrize("events, words", [
    ([mon("A", "Franken"), mon("A", "Bayern")], "2 countries in one turn"),
    ([mon("A", "Franken", 2)], "Franken had no monastery: at most 1"),
    ([mon("A", "Franken"), con("A", "Franken")], "only monasteries may be placed"),
    ([mon("A", "Franken"), ("turn.end", {}), mon("B", "Franken", 2), con("B", "Franken")], "3 pieces in one turn"),
    ([mon("A", "Franken"), ("turn.end", {}), con("B", "Franken", 2)], "Franken: 2 councillor(s), more than the 1"),
    ([mon("B", "Franken")], "out of turn"),
])
def test_illegal_placements_are_warned(events, words):
    s = play(events)
    assert any(words in m for m in texts(s)), texts(s)


def test_legal_turns_raise_no_warning():
    # WoP book p. 6: Barbara places a monastery and a councillor in Franken after Anna's monastery
    s = play([mon("A", "Franken"), ("turn.end", {}), mon("B", "Franken"), con("B", "Franken"), ("turn.end", {}),
              ("turn.end", {}), mon("A", "Franken", 2)])
    assert texts(s) == []


def test_variants_allow_two_countries_and_two_monasteries_into_an_empty_one():
    # WoP book p. 11, Varianti 1 and 2 (and "non può piazzare un monastero e un consigliere" there)
    v = {"variants": {"two_countries_per_turn": True, "two_monasteries_in_empty_country": True}}
    assert texts(play([mon("A", "Franken"), mon("A", "Bayern")], options=v)) == []
    assert texts(play([mon("A", "Franken", 2)], options=v)) == []
    assert any("only monasteries" in m for m in texts(play([mon("A", "Franken"), con("A", "Franken")], options=v)))
    assert any("3 countries" in m for m in texts(play([mon("A", "Franken"), mon("A", "Bayern"),
                                                       mon("A", "Italien")], options=v)))


def test_supply_twenty_monasteries_and_eight_councillors_and_one_monastery_per_site():
    # WoP book p. 3: 20 monasteries and 8 councillors per colour; p. 6: "Solo un monastero ... ogni spazio"
    events = [mon("A", "Franken", 2)] * 10
    s = play(events)
    assert s["placed"]["A"]["monasteries"] == 20
    with pytest.raises(RuleError):
        wop.apply(s, {"seq": 99, "type": "place", "data": {"player": "A", "piece": "monastery", "country": "Bayern"}})
    s = play([con("A", "Franken", 2)] * 4)
    with pytest.raises(RuleError):
        wop.apply(s, {"seq": 99, "type": "place", "data": {"player": "A", "piece": "councillor", "country": "Bayern"}})
    s = play([("place", {"player": "A", "piece": "monastery", "site": "Chorin"})])
    with pytest.raises(RuleError) as err:
        wop.apply(s, {"seq": 9, "type": "place", "data": {"player": "B", "piece": "monastery", "site": "Chorin"}})
    assert err.value.field == "site"
    with pytest.raises(InputError) as err:
        wop.score({"players": P3, "scoring": "final", "monasteries": {"A": {"Franken": 15, "Bayern": 6}}})
    assert err.value.field == "$.monasteries.A"
    with pytest.raises(InputError) as err:
        wop.score({"players": P3, "scoring": "final", "councillors": {"Franken": {"A": 9}}})
    assert err.value.field in ("$.councillors.Franken.A",)


@pytest.mark.parametrize("n, cards", [(3, 55 - 2 * 5), (4, 55 - 5), (5, 55)])
def test_cards_removed_per_colour_for_three_and_four_players(n, cards):
    # WoP book p. 3: "Con 4 giocatori, rimuovete una carta per ogni colore ... Con 3 ... due"
    s = wop.initial_state(P5[:n], {})
    assert s["deck"]["cards"] == cards
    assert [c["cards"] for c in s["deck"]["colours"]] == [13 - (5 - n), 12 - (5 - n), 11 - (5 - n),
                                                          10 - (5 - n), 9 - (5 - n)]


def test_place_with_a_non_string_country_names_the_field():
    # audit fix: a list as country was a TypeError (unhashable) in the reducer
    s = wop.initial_state(P3, {})
    for bad in ([], ["Franken"], {"a": 1}):
        with pytest.raises(InputError) as err:
            wop.apply(s, {"seq": 1, "type": "place", "data": {"player": "A", "piece": "monastery", "country": bad}})
        assert err.value.field == "country"


# =============================================================================================
# Board files: non-finite coordinates (audit fix) and whole floats

def test_non_finite_coordinates_are_errors_and_the_svg_stays_finite():
    doc = {"countries": [{"id": "X", "sites": [{"id": "a", "x": math.nan, "y": 1}, {"id": "b", "x": 2, "y": 3}]}],
           "roads": None, "alliances": []}
    report = wop_board.check_map(doc)
    assert not report["ok"] and report["errors"][0]["path"] == "$.countries[0].sites[0].x"
    assert "nan" not in wop_board.map_svg(doc)
    huge = {"countries": [{"id": "X", "sites": [{"id": "a", "x": 1e308, "y": 0}, {"id": "b", "x": -1e308, "y": 5}]}],
            "roads": [["a", "b"]], "alliances": []}
    assert wop_board.check_map(huge)["ok"]
    svg = wop_board.map_svg(huge)
    assert "nan" not in svg and "inf" not in svg


# =============================================================================================
# The CLI as a real process: odd JSON -> exit 0 with sane output, or exit 2 with one line and a path

@pytest.mark.parametrize("doc, path", [
    ({}, "$"),
    ({"players": None, "scoring": "final"}, "$.players"),
    ({"players": ["A", "B", "C"], "scoring": None}, "$.scoring"),
    ({"players": ["A", "B", "C"], "scoring": "final", "monasteries": {"A": {"Franken": True}}},
     "$.monasteries.A.Franken"),
    ({"players": ["A", "B", "C"], "scoring": "final", "monasteries": {"A": {"Franken": 10 ** 40}}},
     "$.monasteries.A.Franken"),
    ({"players": ["A", "B", "C"], "scoring": "final", "monasteries": {"A": {"Franken": 1.5}}},
     "$.monasteries.A.Franken"),
    ({"players": ["A", "B", "C"], "scoring": "final", "councillors": {"Franken": None}}, "$.councillors.Franken"),
    ({"players": ["A", "B", "C"], "scoring": "final", "chains": {"A": [4.5]}}, "$.chains.A[0]"),
    ({"players": ["A", "B", "C"], "scoring": "final", "chains": {"A": [True]}}, "$.chains.A[0]"),
    ({"players": ["A", "B", "C"], "scoring": "final", "map": {}}, "$.map"),
    ({"players": ["A", "B", "C"], "scoring": "final", "map": None}, "$.map"),
    ({"players": ["Ä😀", "B", "C"], "scoring": "final", "monasteries": {"Z😀": {"Franken": 1}}}, "$.monasteries"),
])
def test_cli_refuses_odd_json_in_one_line_with_the_path(run_cli, doc, path):
    code, out, err = run_cli("score", "web-of-power", "-", stdin=json.dumps(doc))
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.count("\n") == 1 and path in err, err


def test_cli_whole_floats_and_unicode_names_score_as_integers(run_cli):
    # audit fix: 2.0 is a JSON Schema integer; the output said 2.0 points
    doc = {"players": ["Ä😀", "Björn", "C"], "scoring": "final",
           "monasteries": {"Ä😀": {"Franken": 2.0}, "Björn": {"Franken": 1}}, "councillors": {"Franken": {"Björn": 1.0}}}
    code, out, err = run_cli("score", "web-of-power", "-", stdin=json.dumps(doc, ensure_ascii=False))
    assert code == 0, err
    res = json.loads(out)
    assert [r["total"] for r in res["players"]] == [3, 2, 0]
    assert all(type(r["total"]) is int for r in res["players"])
    assert '"total": 3,' in out and "3.0" not in out
