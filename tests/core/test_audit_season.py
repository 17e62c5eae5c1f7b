"""Audit of the fan-club season against docs/rulings.md#fan-club-championship and the conquest rule book's
last section ("CLASSIFICA ANNUALE - CAMPIONATO FAN CLUB"). Each test names its rule.

The standings are checked against a brute-force formulation written here from the rulings alone:
places sorted, positions 1..n handed out in that order, each group of equal places sharing the mean of its
positions' points; rank = 1 + the eligible players strictly better by (points, wins); eligibility and
`needs` by counting in integers.
"""

import json
import random
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.core import season
from companion.base.errors import InputError

BOOK = {3: [1, 0, -1], 4: [2, 1, -1, -2], 5: [2, 1, 0, -1, -2], 6: [3, 2, 1, -1, -2, -3]}


def match(mid, *rows, date="2026-02-01"):
    """rows: (player, place) or (player, place, "o"/"e"/"oe")"""
    out = []
    for row in rows:
        r = {"player": row[0], "place": row[1]}
        flags = row[2] if len(row) > 2 else ""
        if "o" in flags:
            r["objective"] = True
        if "e" in flags:
            r["eliminated"] = True
        out.append(r)
    return {"id": mid, "date": date, "results": out}


def points_of(doc):
    out = season.standings_document(doc)
    return {r["player"]: r["points"] for r in out["standings"]}, out


# -- brute force -----------------------------------------------------------------------------------

def brute(doc, tables=BOOK, objective=Fraction(1), eliminated=Fraction(-1, 2), threshold=Fraction(3, 10)):
    pts, played, wins = {}, {}, {}
    for m in doc["matches"]:
        res = sorted(m["results"], key=lambda r: r["place"])
        n = len(res)
        positions = {}
        for pos, r in enumerate(res, start=1):
            positions.setdefault(r["place"], []).append(pos)
        for r in res:
            group = positions[r["place"]]
            v = Fraction(sum(tables[n][p - 1] for p in group), len(group))
            v += objective if r.get("objective") else 0
            v += eliminated if r.get("eliminated") else 0
            p = r["player"]
            pts[p] = pts.get(p, 0) + v
            played[p] = played.get(p, 0) + 1
            wins[p] = wins.get(p, 0) + (r["place"] == 1)
    total = len(doc["matches"])
    rows = {}
    for p in pts:
        eligible = played[p] / Fraction(total) >= threshold
        k = 0
        while (played[p] + k) < threshold * (total + k) and k < 10_000:
            k += 1
        rows[p] = {"points": pts[p], "matches": played[p], "wins": wins[p], "eligible": eligible,
                   "needs": None if k == 10_000 else k}
    for p, r in rows.items():
        better = sum(1 for q, s in rows.items() if s["eligible"] and (s["points"], s["wins"]) > (r["points"], r["wins"]))
        r["rank"] = 1 + better if r["eligible"] else None
    return rows


# -- points tables -----------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_rule_points_tables_of_the_book_and_the_3_player_default(n):
    """4 players +2 +1 -1 -2; 5 players +2 +1 0 -1 -2; 6 players +3 +2 +1 -1 -2 -3; 3 players (not in the
    book) the default +1 0 -1."""
    doc = {"season": "s", "threshold": 0, "matches": [match("m", *[(f"p{i}", i) for i in range(1, n + 1)])]}
    got, _ = points_of(doc)
    assert [got[f"p{i}"] for i in range(1, n + 1)] == BOOK[n]


def test_rule_tables_are_club_settings_and_override_one_count_only():
    """Every table is a club setting: a document's '3' table replaces the 3-player default only."""
    doc = {"season": "s", "threshold": 0, "points": {"3": [5, 1, -4]},
           "matches": [match("a", ("x", 1), ("y", 2), ("z", 3)),
                       match("b", ("x", 4), ("y", 3), ("z", 2), ("w", 1))]}
    got, _ = points_of(doc)
    assert got == {"x": 5 - 2, "y": 1 - 1, "z": -4 + 1, "w": 2}


@pytest.mark.parametrize("n", [2, 7])
def test_rule_a_player_count_without_a_table_is_refused(n):
    """A match of a player count with no points table is malformed input naming the match's results."""
    doc = {"season": "s", "matches": [match("m", *[(f"p{i}", i) for i in range(1, n + 1)])]}
    with pytest.raises(InputError) as exc:
        season.standings_document(doc)
    assert exc.value.field == "$.matches[0].results"


# -- bonuses and shared places -------------------------------------------------------------------------

def test_rule_bonuses_objective_plus_1_eliminated_minus_half():
    """'Raggiungimento Obiettivo durante la partita (+1)', 'Ucciso durante la partita (-0,5)'; both add up."""
    doc = {"season": "s", "threshold": 0,
           "matches": [match("m", ("a", 1, "o"), ("b", 2), ("c", 3, "e"), ("d", 4, "oe"))]}
    got, _ = points_of(doc)
    assert got == {"a": 3, "b": 1, "c": -1.5, "d": -1.5}


@pytest.mark.parametrize("places, expected", [
    ((1, 2, 2, 4), [2, 0, 0, -2]),                 # the example: (+1 + -1) / 2 = 0
    ((1, 1, 3, 4), [1.5, 1.5, -1, -2]),
    ((1, 1, 1, 1), [0, 0, 0, 0]),
    ((1, 2, 3, 3), [2, 1, -1.5, -1.5]),
])
def test_rule_shared_places_share_the_mean_4_players(places, expected):
    """Players sharing a place share the mean of the points of the places they cover."""
    doc = {"season": "s", "threshold": 0, "matches": [match("m", *[(f"p{i}", p) for i, p in enumerate(places)])]}
    got, _ = points_of(doc)
    assert [got[f"p{i}"] for i in range(4)] == expected


def test_rule_shared_places_in_6_players_exact_thirds():
    """Three tied for 4th of 6 share (-1 -2 -3) / 3 = -2; two tied for 1st share (3 + 2) / 2 = 2.5; three
    tied for 2nd share (2 + 1 - 1) / 3 = 2/3 (exact, printed as the nearest float)."""
    doc = {"season": "s", "threshold": 0, "matches": [
        match("a", ("p1", 1), ("p2", 1), ("p3", 3), ("p4", 4), ("p5", 4), ("p6", 4)),
        match("b", ("q1", 1), ("q2", 2), ("q3", 2), ("q4", 2), ("q5", 5), ("q6", 6))]}
    got, _ = points_of(doc)
    assert (got["p1"], got["p3"], got["p4"]) == (2.5, 1, -2)
    assert got["q2"] == float(Fraction(2, 3))
    # three of them over three matches: exactly 2, not 1.9999999999999998
    doc["matches"] += [dict(match("c", ("q2", 1), ("x", 2), ("y", 2), ("z", 2), ("v", 5), ("w", 6)), id=f"c{i}")
                       for i in range(2)]
    got, _ = points_of(doc)
    assert got["x"] == float(Fraction(4, 3)) and got["q2"] == float(Fraction(2, 3) + 6)


@pytest.mark.parametrize("places, index", [((1, 2, 2, 3), 3), ((1, 1, 2, 4), 2), ((0, 1, 2, 3), 0), ((1, 2, 3, 5), 3)])
def test_rule_impossible_places_are_refused_naming_the_result(places, index):
    """A place outside 1..n, or after a tie a place the tie covers, is malformed (1, 2, 2, 4 is the rule)."""
    doc = {"season": "s", "matches": [match("m", *[(f"p{i}", p) for i, p in enumerate(places)])]}
    with pytest.raises(InputError) as exc:
        season.standings_document(doc)
    assert exc.value.field == f"$.matches[0].results[{index}].place"


# -- eligibility and ranks -----------------------------------------------------------------------------

def season_with(played_by_x, total):
    ms = []
    for i in range(total):
        rows = [("a", 1), ("b", 2), ("c", 3)]
        if i < played_by_x:
            rows = [("a", 1), ("b", 2), ("x", 3)]
        ms.append(match(f"m{i}", *rows))
    return {"season": "s", "matches": ms}


@pytest.mark.parametrize("played, total, eligible, needs", [
    (3, 10, True, 0), (3, 11, False, 1), (2, 10, False, 2), (6, 20, True, 0), (0, 1, None, None), (1, 4, False, 1),
])
def test_rule_30_percent_exact_and_needs(played, total, eligible, needs):
    """At least 30% of the season's matches, exactly: 3 of 10 yes, 3 of 11 no; the unranked are listed with
    how many more matches (played in a row from now) they need."""
    _, out = points_of(season_with(played, total))
    rows = {r["player"]: r for r in out["standings"]}
    if eligible is None:
        assert "x" not in rows
        return
    x = rows["x"]
    assert (x["eligible"], x["needs"], x["matches"]) == (eligible, needs, played)
    assert (x["rank"] is None) == (not eligible)
    assert out["standings"][-1]["player"] == "x" or eligible      # unranked last
    if needs:   # playing `needs` more matches (all the next ones) does reach it, one fewer does not
        assert Fraction(played + needs, total + needs) >= Fraction(3, 10) > Fraction(played + needs - 1, total + needs - 1)


def test_rule_ranks_by_points_then_wins_ties_share_1_2_2_4():
    """Ranked by points, then wins (1st places); still equal -> the same rank (1, 2, 2, 4)."""
    doc = {"season": "s", "threshold": 0, "matches": [
        match("m1", ("a", 1), ("b", 2), ("c", 3), ("d", 4)),      # a 2, b 1, c -1, d -2
        match("m2", ("c", 1), ("d", 2), ("a", 3), ("b", 4)),      # c 2, d 1, a -1, b -2
        match("m3", ("b", 1), ("c", 2), ("d", 3), ("a", 4)),      # b 2, c 1, d -1, a -2
        match("m4", ("d", 1), ("a", 1), ("b", 3), ("c", 4)),      # d 1.5, a 1.5, b -1, c -2
    ]}
    _, out = points_of(doc)
    rows = [(r["rank"], r["player"], r["points"], r["wins"]) for r in out["standings"]]
    # a: 2-1-2+1.5 = 0.5 (2 wins); b: 1-2+2-1 = 0 (1 win); c: -1+2+1-2 = 0 (1 win); d: -2+1-1+1.5 = -0.5
    assert rows == [(1, "a", 0.5, 2), (2, "b", 0, 1), (2, "c", 0, 1), (4, "d", -0.5, 1)]


def test_rule_wins_break_a_points_tie():
    """Equal points, more wins ranks higher."""
    doc = {"season": "s", "threshold": 0, "matches": [
        match("m1", ("a", 1), ("b", 2), ("c", 3)),   # a +1, b 0, c -1
        match("m2", ("b", 2), ("a", 3), ("c", 1)),   # b 0, a -1, c +1
        match("m3", ("b", 1), ("a", 2), ("c", 3)),   # b +1, a 0, c -1
    ]}
    _, out = points_of(doc)
    assert [(r["rank"], r["player"], r["points"], r["wins"]) for r in out["standings"]] == \
        [(1, "b", 1, 1), (2, "a", 0, 1), (3, "c", -1, 1)]
    # the same points: a and c at 0 then; wins decide
    doc["matches"].append(match("m4", ("c", 1), ("b", 3), ("a", 2)))  # c +1 (2 wins), a 0, b -1
    _, out = points_of(doc)
    rows = {r["player"]: r for r in out["standings"]}
    assert rows["a"]["points"] == rows["b"]["points"] == rows["c"]["points"] == 0
    assert (rows["c"]["rank"], rows["a"]["rank"], rows["b"]["rank"]) == (1, 2, 2)


# -- against the brute force -----------------------------------------------------------------------------

NAMES = ["Anna", "Bruno", "Carla", "Dario", "Elena", "Fabio", "Gina", "Ugo"]


@st.composite
def seasons(draw):
    n_matches = draw(st.integers(0, 14))
    ms = []
    for i in range(n_matches):
        n = draw(st.integers(3, 6))
        players = draw(st.permutations(NAMES))[:n]
        # competition ranking from random "scores" (ties included)
        scores = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        rows = []
        for p, s in zip(players, scores):
            place = 1 + sum(1 for t in scores if t > s)
            flags = draw(st.sampled_from(["", "o", "e", "oe"]))
            rows.append((p, place, flags))
        ms.append(match(f"m{i}", *rows, date=f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"))
    return {"season": "s", "matches": ms}


@settings(max_examples=300)
@given(doc=seasons())
def test_rule_standings_equal_the_brute_force(doc):
    """Every ruling at once (tables, bonuses, shared places, 30%, needs, ranks) against the brute force."""
    out = season.standings_document(json.loads(json.dumps(doc)))
    want = brute(doc)
    assert out["total_matches"] == len(doc["matches"])
    assert {r["player"] for r in out["standings"]} == set(want)
    for r in out["standings"]:
        w = want[r["player"]]
        wp = w["points"]
        assert r["points"] == (int(wp) if wp.denominator == 1 else float(wp))
        assert type(r["points"]) is (int if wp.denominator == 1 else float)
        assert (r["matches"], r["wins"], r["eligible"], r["needs"], r["rank"]) == \
            (w["matches"], w["wins"], w["eligible"], w["needs"], w["rank"])
    ranks = [r["rank"] for r in out["standings"]]
    ranked = [x for x in ranks if x is not None]
    assert ranked == sorted(ranked) and ranks[:len(ranked)] == ranked      # sorted by rank, unranked last


@settings(max_examples=100)
@given(doc=seasons(), seed=st.integers(0, 1000))
def test_rule_standings_do_not_depend_on_the_order_of_matches_or_results(doc, seed):
    """The standings are a function of the set of results, not of their order."""
    rnd = random.Random(seed)
    shuffled = json.loads(json.dumps(doc))
    rnd.shuffle(shuffled["matches"])
    for m in shuffled["matches"]:
        rnd.shuffle(m["results"])
    assert season.standings_document(shuffled) == season.standings_document(json.loads(json.dumps(doc)))


# -- the CLI as a real process --------------------------------------------------------------------------

def test_rule_cli_standings_rulebook_example(run_cli):
    """`companion season standings -` on a small season: the book's 4-, 5- and 6-player tables, bonuses."""
    doc = {"season": "Fan Club 2026", "matches": [
        match("g1", ("Anna", 1, "o"), ("Bruno", 2), ("Carla", 3), ("Dario", 4, "e")),
        match("g2", ("Anna", 2), ("Bruno", 1), ("Carla", 3), ("Dario", 4), ("Elena", 5), date="2026-03-01"),
        match("g3", ("Anna", 1), ("Bruno", 2), ("Carla", 3), ("Dario", 4), ("Elena", 5), ("Fabio", 6),
              date="2026-04-01")]}
    code, out, err = run_cli("season", "standings", "-", stdin=json.dumps(doc))
    assert code == 0, err
    got = json.loads(out)
    assert (got["season"], got["total_matches"], got["threshold"]) == ("Fan Club 2026", 3, 0.3)
    rows = {r["player"]: r for r in got["standings"]}
    assert rows["Anna"]["points"] == 3 + 1 + 3 and rows["Anna"]["rank"] == 1
    assert rows["Dario"]["points"] == -2.5 - 1 - 1
    assert (rows["Fabio"]["matches"], rows["Fabio"]["eligible"], rows["Fabio"]["needs"]) == (1, True, 0)  # 1 of 3
    assert set(rows["Anna"]) == {"rank", "player", "points", "matches", "wins", "eligible", "needs"}


@pytest.mark.parametrize("text, field", [
    ('{"season": "s", "threshold": NaN, "matches": []}', None),
    ('{"season": "s", "bonus": {"objective": Infinity}, "matches": []}', None),
    ('{"season": "s", "matches": [{"id": "m", "date": "2026-01-01", "results": '
     '[{"player": "a", "place": 1}, {"player": "a", "place": 2}, {"player": "b", "place": 3}]}]}',
     "$.matches[0].results[1].player"),
    ('{"season": "s", "matches": [{"id": "m", "date": "2026-01-01", "results": '
     '[{"player": "a", "place": 1}, {"player": "b", "place": 4}, {"player": "c", "place": 3}]}]}',
     "$.matches[0].results[1].place"),
    ('{"season": "s", "matches": [{"id": "m", "date": "2026-01-01", "results": '
     '[{"player": "a", "place": 1}, {"player": "b", "place": 2}]}]}', "$.matches[0].results"),
    ('{"season": "s", "points": {"3": [1, 0]}, "matches": []}', '$.points["3"]'),
    ('{"season": "s", "matches": ' + "[" * 3000 + "]" * 3000 + "}", None),
    ('{"season": "s", "matches": [{"id": "m", "date": "2026-01-01", "results": [1, 2]}]}',
     "$.matches[0].results["),
])
def test_rule_cli_bad_season_documents_exit_2_with_one_line(run_cli, text, field):
    """Malformed season documents: exit 2, one line on stderr naming the JSON path (never exit 1): a player
    twice, a place outside 1..n, no points table; NaN/Infinity (not JSON) and absurd nesting crashed."""
    code, out, err = run_cli("season", "standings", "-", stdin=text)
    assert code == 2 and out == "", err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    if field:
        assert field in err, err


def test_rule_non_finite_settings_are_refused_in_the_core():
    """The core refuses a non-finite number (the web parses JSON itself, NaN included) naming the field."""
    for settings_doc, field in [({"threshold": float("nan")}, "$.threshold"),
                                ({"bonus": {"eliminated": float("-inf")}}, "$.bonus"),
                                ({"points": {"4": [1, float("inf"), 0, 0]}}, '$.points["4"]')]:
        with pytest.raises(InputError) as exc:
            season.Rules().with_settings(settings_doc)
        assert exc.value.field == field
