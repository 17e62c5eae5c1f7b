"""Web of Power scoring: the rule book's examples, the rulings, properties, and bad input."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.bench_web_of_power import clustered_position, synthetic_board
from companion.base.errors import InputError
from companion.games import web_of_power as wop

P4 = ["Anna", "Barbara", "Chris", "Dan"]


def points(result, player, kind=None, **match):
    entry = next(r for r in result["players"] if r["player"] == player)
    return sum(e["points"] for e in entry["breakdown"]
               if (kind is None or e["kind"] == kind) and all(e.get(k) == v for k, v in match.items()))


# -- monasteries -------------------------------------------------------------------------------

def test_rule_book_franken_7_4_2():
    res = wop.score({"players": P4, "scoring": "intermediate",
                     "monasteries": {"Anna": {"Franken": 4}, "Barbara": {"Franken": 2}, "Dan": {"Franken": 1}}})
    assert [points(res, p) for p in P4] == [7, 4, 0, 2]
    assert res["warnings"] == []
    # each row says why its place is worth its points: the first the country's total, the others the count above
    why = {r["player"]: {k: r["breakdown"][0][k] for k in ("rank", "country_total", "above", "points")}
           for r in res["players"] if r["breakdown"]}
    assert why == {"Anna": {"rank": 1, "country_total": 7, "above": None, "points": 7},
                   "Barbara": {"rank": 2, "country_total": 7, "above": 4, "points": 4},
                   "Dan": {"rank": 3, "country_total": 7, "above": 2, "points": 2}}


def test_rule_book_lothringen_tie_5_5_2():
    res = wop.score({"players": P4, "scoring": "intermediate",
                     "monasteries": {"Barbara": {"Lothringen": 2}, "Chris": {"Lothringen": 2},
                                     "Dan": {"Lothringen": 1}}})
    assert [points(res, p) for p in P4] == [0, 5, 5, 2]


def test_fifth_scores_the_fourths_count_not_the_firsts():
    five = ["A", "B", "C", "D", "E"]
    res = wop.score({"players": five, "scoring": "intermediate",
                     "monasteries": {"A": {"Italien": 5}, "B": {"Italien": 4}, "C": {"Italien": 3},
                                     "D": {"Italien": 2}, "E": {"Italien": 1}}})
    assert [points(res, p) for p in five] == [15, 5, 4, 3, 2]


def test_dense_ranks_after_a_tie_and_zero_scores_nothing():
    res = wop.score({"players": P4, "scoring": "intermediate",
                     "monasteries": {"Anna": {"Bayern": 3}, "Barbara": {"Bayern": 3}, "Chris": {"Bayern": 1},
                                     "Dan": {"Bayern": 0}}})
    # the group below the tied leaders is the second rank and scores their count (3)
    assert [points(res, p) for p in P4] == [7, 7, 3, 0]
    dan = next(r for r in res["players"] if r["player"] == "Dan")
    assert dan["breakdown"] == [] and dan["total"] == 0


def test_single_player_in_a_country_scores_own_count():
    res = wop.score({"players": P4, "scoring": "intermediate", "monasteries": {"Chris": {"Aragon": 3}}})
    assert points(res, "Chris") == 3


def monastery_points_independent(counts):
    """Independent formulation: the top count scores the total; otherwise the smallest count
    strictly greater than one's own (the group directly above)."""
    total = sum(counts.values())
    top = max(counts.values(), default=0)
    out = {}
    for p, n in counts.items():
        if n <= 0:
            continue
        out[p] = total if n == top else min(m for m in counts.values() if m > n)
    return out


@given(st.dictionaries(st.sampled_from(["A", "B", "C", "D", "E"]), st.integers(0, 8)))
def test_monastery_points_property(counts):
    got = {p: v[0] for p, v in wop.monastery_points(counts).items()}
    assert got == monastery_points_independent(counts)


# -- alliances ---------------------------------------------------------------------------------

ITALIEN_BURGUND = {
    "players": P4, "scoring": "final",
    "monasteries": {"Barbara": {"Italien": 2, "Bayern": 3, "Burgund": 1}, "Chris": {"Italien": 4},
                    "Dan": {"Italien": 2, "Burgund": 2}, "Anna": {"Bayern": 1}},
    "councillors": {"Italien": {"Dan": 2, "Barbara": 1, "Anna": 1}, "Burgund": {"Dan": 1, "Barbara": 1},
                    "Bayern": {"Barbara": 2, "Anna": 1}},
}


def test_rule_book_alliances_14_and_15():
    res = wop.score(ITALIEN_BURGUND)
    assert points(res, "Dan", "alliance", number=14) == 6
    assert points(res, "Barbara", "alliance") == 0 and points(res, "Anna", "alliance") == 0
    # alliance 15 (Italien-Bayern): Dan leads Italien, Barbara Bayern: nobody scores
    assert all(points(res, p, "alliance", number=15) == 0 for p in P4)
    assert not any("councillor(s), more than" in w for w in res["warnings"])
    # the template's 13 unknown alliances are reported, not guessed
    assert any("not scored: their countries are unknown" in w for w in res["warnings"])


def test_alliance_ties_all_score_and_intermediate_ignores_councillors():
    doc = {"players": P4, "scoring": "final",
           "monasteries": {"Anna": {"Italien": 2, "Bayern": 2}, "Barbara": {"Italien": 2, "Bayern": 2}},
           "councillors": {"Italien": {"Anna": 1, "Barbara": 1}, "Bayern": {"Anna": 1, "Barbara": 1}}}
    res = wop.score(doc)
    assert points(res, "Anna", "alliance", number=15) == 4
    assert points(res, "Barbara", "alliance", number=15) == 4
    inter = wop.score(dict(doc, scoring="intermediate"))
    assert points(inter, "Anna", "alliance") == 0


def alliance_independent(cons, a, b, players):
    out = {}
    for p in players:
        ok = all(cons.get(c, {}).get(p, 0) >= 1 and all(cons.get(c, {}).get(p, 0) >= n for n in cons.get(c, {}).values())
                 for c in (a, b))
        if ok:
            out[p] = sum(cons.get(a, {}).values()) + sum(cons.get(b, {}).values())
    return out


@given(st.dictionaries(st.sampled_from(["X", "Y"]),
                       st.dictionaries(st.sampled_from(["A", "B", "C"]), st.integers(0, 4))))
def test_alliance_property(cons):
    winners, pts = wop.alliance_winners(cons, "X", "Y")
    assert {p: pts for p in winners} == alliance_independent(cons, "X", "Y", ["A", "B", "C"])


# -- chains, ranking, totals -----------------------------------------------------------------------

def small_board():
    """A fictional 9-country board (documented as such) with roads for chain tests."""
    return synthetic_board(6, 6, seed=11)


def test_chains_from_sites_and_by_hand():
    board = small_board()
    roads = board["roads"]
    adj = {}
    for a, b in roads:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    # walk a simple path of 6 sites along roads
    path = [roads[0][0]]
    while len(path) < 6:
        nxt = next(n for n in sorted(adj[path[-1]]) if n not in path)
        path.append(nxt)
    res = wop.score({"players": ["A", "B", "C"], "scoring": "final", "map": board,
                     "monasteries": {"A": path}})
    chains = [e for e in next(r for r in res["players"] if r["player"] == "A")["breakdown"] if e["kind"] == "chain"]
    assert sum(e["points"] for e in chains) == 6 and all("sites" in e for e in chains)
    # by hand is refused when the roads are known...
    with pytest.raises(InputError) as err:
        wop.score({"players": ["A", "B", "C"], "scoring": "final", "map": board,
                   "monasteries": {"A": path}, "chains": {"A": [6]}})
    assert err.value.field == "$.chains.A"
    # ...and accepted on the template (no roads), up to the player's monasteries
    res = wop.score({"players": ["A", "B", "C"], "scoring": "final",
                     "monasteries": {"A": {"Italien": 5, "Burgund": 4}}, "chains": {"A": [5, 4]}})
    assert points(res, "A", "chain") == 9
    with pytest.raises(InputError) as err:
        wop.score({"players": ["A", "B", "C"], "scoring": "final",
                   "monasteries": {"A": {"Italien": 5}}, "chains": {"A": [4, 4]}})
    assert err.value.field == "$.chains.A"


def test_intermediate_ignores_chains_with_a_warning():
    res = wop.score({"players": ["A", "B", "C"], "scoring": "intermediate",
                     "monasteries": {"A": {"Italien": 5}}, "chains": {"A": [5]}})
    assert points(res, "A") == 5 and any("chains" in w for w in res["warnings"])


def test_tie_goes_to_most_unplayed_pieces():
    doc = {"players": ["A", "B", "C"], "scoring": "final",
           "monasteries": {"A": {"Italien": 2, "Bayern": 1}, "B": {"Italien": 2, "Bayern": 1}},
           "councillors": {"Italien": {"A": 1}}}
    res = wop.score(doc)
    # A scores no alliance (needs Bayern too); A and B tie on points, B has one more piece left
    assert [r["total"] for r in res["players"][:2]] == [6, 6]
    assert [(r["place"], r["player"]) for r in res["ranking"]] == [(1, "B"), (2, "A"), (3, "C")]
    assert res["winners"] == ["B"]
    full_tie = wop.score(dict(doc, councillors={}))
    assert full_tie["winners"] == ["A", "B"]
    assert [r["place"] for r in full_tie["ranking"]] == [1, 1, 3]


def test_empty_position_scores_zero():
    res = wop.score({"players": ["A", "B", "C"], "scoring": "final"})
    assert [r["total"] for r in res["players"]] == [0, 0, 0] and res["winners"] == ["A", "B", "C"]


def test_output_shape_in_input_order():
    res = wop.score(ITALIEN_BURGUND)
    assert res["game"] == "web-of-power" and res["scoring"] == "final"
    assert [r["player"] for r in res["players"]] == P4
    for r in res["players"]:
        assert r["total"] == sum(e["points"] for e in r["breakdown"])
        kinds = [e["kind"] for e in r["breakdown"]]
        # monasteries first (in scoring order), then alliances, then chains
        assert kinds == sorted(kinds, key=["monasteries", "alliance", "chain"].index)
    countries = [e["country"] for e in res["players"][1]["breakdown"] if e["kind"] == "monasteries"]
    assert countries == ["Bayern", "Italien", "Burgund"]  # the board's scoring order


def test_full_synthetic_final_is_consistent():
    doc = clustered_position(synthetic_board(10, 6, seed=3), ["A", "B", "C", "D", "E"], 12, seed=4)
    res = wop.score(doc)
    assert res["warnings"] == []
    # every country's monastery points: the independent formulation
    for c in doc["map"]["countries"]:
        ids = {s["id"] for s in c["sites"]}
        counts = {p: sum(1 for s in doc["monasteries"][p] if s in ids) for p in doc["players"]}
        expected = monastery_points_independent(counts)
        for p in doc["players"]:
            assert points(res, p, "monasteries", country=c["id"]) == expected.get(p, 0)


# -- bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("doc, field", [
    ({"players": ["A", "B", "C"], "scoring": "final", "monasteries": {"Z": ["Chorin"]}}, "$.monasteries.Z"),
    ({"players": ["A", "B", "C"], "scoring": "final", "monasteries": {"A": ["Nowhere"]}}, "$.monasteries.A[0]"),
    ({"players": ["A", "B", "C"], "scoring": "final", "monasteries": {"A": ["Chorin"], "B": ["Obra", "Chorin"]}},
     "$.monasteries.B[1]"),
    ({"players": ["A", "B", "C"], "scoring": "final", "monasteries": {"A": {"Atlantis": 1}}}, "$.monasteries.A.Atlantis"),
    ({"players": ["A", "B", "C"], "scoring": "final", "monasteries": {"A": {"Franken": -1}}}, "$.monasteries.A.Franken"),
    ({"players": ["A", "B", "C"], "scoring": "final", "monasteries": {"A": {"Franken": 2.5}}}, "$.monasteries.A.Franken"),
    ({"players": ["A", "B", "C"], "scoring": "final", "monasteries": {"A": {"Franken": 15, "Bayern": 6}}},
     "$.monasteries.A"),
    ({"players": ["A", "B", "C"], "scoring": "final", "monasteries": {"A": {"Frankreich": 5}, "B": {"Frankreich": 4}}},
     "$.monasteries"),
    ({"players": ["A", "B", "C"], "scoring": "final", "councillors": {"Franken": {"Q": 1}}}, "$.councillors.Franken.Q"),
    ({"players": ["A", "B", "C"], "scoring": "final", "councillors": {"Mars": {"A": 1}}}, "$.councillors.Mars"),
    ({"players": ["A", "B", "C"], "scoring": "final", "councillors": {"Franken": {"A": 5}, "Bayern": {"A": 4}}},
     "$.councillors.Bayern.A"),
    ({"players": ["A", "B", "A"], "scoring": "final"}, "$.players[2]"),
    ({"players": ["A", "B", "C"], "scoring": "final", "chains": {"A": [3]}}, "$.chains.A[0]"),
    ({"players": ["A", "B", "C"], "scoring": "final", "chains": {"Q": [4]}}, "$.chains.Q"),
    ({"players": ["A", "B", "C"], "scoring": "later"}, "$.scoring"),
    ({"players": ["A", "B", "C"], "scoring": "final", "map": {"countries": []}}, "$.map"),
    ({"players": ["A", "B", "C"], "scoring": "final",
      "map": {"countries": [{"id": "X", "sites": ["a"]}], "roads": [["a", "b"]], "alliances": []}},
     "$.map.roads[0][1]"),
    ([1, 2], "$"),
])
def test_malformed_input_names_the_path(doc, field):
    with pytest.raises(InputError) as err:
        wop.score(doc)
    assert err.value.field == field


def test_rule_breaking_board_still_scores_with_warnings():
    res = wop.score({"players": ["A", "B"], "scoring": "final",
                     "monasteries": {"A": {"Franken": 1}}, "councillors": {"Franken": {"A": 2, "B": 1},
                                                                          "Bayern": {"B": 1}}})
    text = " ".join(res["warnings"])
    assert "3-5 players" in text and "Franken: 3 councillor(s)" in text and "Bayern: 1 councillor(s)" in text
    assert points(res, "A") == 1


def test_cli_scores_and_refuses(run_cli, tmp_path):
    f = tmp_path / "doc.json"
    f.write_text(json.dumps(ITALIEN_BURGUND))
    code, out, err = run_cli("score", "web-of-power", f)
    assert code == 0, err
    assert json.loads(out)["players"][3]["player"] == "Dan"
    code, out, err = run_cli("score", "web-of-power", "-",
                             stdin=json.dumps({"players": ["A", "B", "C"], "scoring": "final",
                                               "monasteries": {"A": ["Chorin", "Chorin"]}}))
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "$.monasteries.A[1]" in err and "Traceback" not in err


@settings(max_examples=60)
@given(st.dictionaries(st.sampled_from(["A", "B", "C"]),
                       st.dictionaries(st.sampled_from(["England", "Franken", "Italien", "Frankreich"]),
                                       st.integers(0, 2))),
       st.dictionaries(st.sampled_from(["England", "Franken", "Italien", "Bayern", "Burgund"]),
                       st.dictionaries(st.sampled_from(["A", "B", "C"]), st.integers(0, 1))))
def test_totals_are_sums_and_never_crash(monasteries, councillors):
    doc = {"players": ["A", "B", "C"], "scoring": "final", "monasteries": monasteries, "councillors": councillors}
    res = wop.score(doc)
    for r in res["players"]:
        assert r["total"] == sum(e["points"] for e in r["breakdown"]) >= 0
    for country in ("England", "Franken", "Italien", "Frankreich"):
        here = {p: m.get(country, 0) for p, m in monasteries.items()}
        got = {r["player"]: points(res, r["player"], "monasteries", country=country) for r in res["players"]}
        # each player with monasteries there scores between their own count and the total
        for p in ["A", "B", "C"]:
            n = here.get(p, 0)
            assert (got[p] == 0) if n == 0 else (n <= got[p] <= sum(here.values()))
