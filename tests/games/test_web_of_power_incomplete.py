"""Web of Power: a final scoring with parts the board cannot tell (docs/rulings.md, "Web of Power:
incomplete scoring"). No winner until every part is known; the table enters the missing alliances and
chains by hand at the scoring step (``scoring.hand``, or ``chains``), then the match ends; the season
gets the complete result. Also: warnings carry their turn; the "monasteries now" preview is points."""

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.bench_web_of_power import synthetic_board
from companion.base.errors import InputError, RuleError
from companion.games import web_of_power as wop
from companion.core.match import fold
from companion.services.seasons import results_from_fold

P4 = ["Anna", "Barbara", "Chris", "Dan"]
P3 = ["A", "B", "C"]
AT = "2026-03-01T20:00:00Z"

# The rule book's alliance example (also in test_web_of_power_scoring.py): Dan leads Italien and
# Burgund (alliance 14 scores him 6), Barbara leads Bayern and ties Burgund.
BOOK_MONASTERIES = {"Barbara": {"Italien": 2, "Bayern": 3, "Burgund": 1}, "Chris": {"Italien": 4},
                    "Dan": {"Italien": 2, "Burgund": 2}, "Anna": {"Bayern": 1}}
BOOK_COUNCILLORS = {"Italien": {"Dan": 2, "Barbara": 1, "Anna": 1}, "Burgund": {"Dan": 1, "Barbara": 1},
                    "Bayern": {"Barbara": 2, "Anna": 1}}


def position(monasteries, councillors):
    """Place events (by country, two at a time) for a position, each player's pieces in one turn."""
    out = []
    for p, by_country in monasteries.items():
        for country, n in by_country.items():
            while n:
                k = min(n, 2)
                out.append(("place", {"player": p, "piece": "monastery", "country": country, "count": k}))
                n -= k
        out.append(("turn.end", {"player": p}))
    for country, by_player in councillors.items():
        for p, n in by_player.items():
            while n:
                k = min(n, 2)
                out.append(("place", {"player": p, "piece": "councillor", "country": country, "count": k}))
                n -= k
            out.append(("turn.end", {"player": p}))
    return out


class Match:
    """A match folded event by event (apply never mutates its input)."""

    def __init__(self, players=P4, options=None):
        self.state = wop.initial_state(players, options or {})
        self.seq = 0

    def __call__(self, t, data=None):
        self.seq += 1
        before = copy.deepcopy(self.state)
        new = wop.apply(self.state, {"seq": self.seq, "type": t, "data": data or {}, "at": AT})
        assert self.state == before, "apply mutated its input"
        self.state = new
        return new

    def run(self, events):
        for t, data in events:
            self(t, data)
        return self

    def refused(self, t, data, error, field=None):
        with pytest.raises(error) as err:
            wop.apply(self.state, {"seq": self.seq + 1, "type": t, "data": data, "at": AT})
        if field is not None:
            assert err.value.field == field
        return err.value

    @property
    def summary(self):
        return wop.summary(self.state)


def book_match():
    m = Match().run(position(BOOK_MONASTERIES, BOOK_COUNCILLORS))
    m("deck.out")
    m("deck.out")
    return m


def final_entry(state, player):
    return next(r for r in state["scorings"]["final"]["players"] if r["player"] == player)


# -- no winner from an incomplete scoring ---------------------------------------------------------

def test_book_example_on_the_template_names_no_winner_and_says_what_is_missing():
    m = book_match()
    s, summ = m.state, m.summary
    assert not wop.is_ended(s) and wop.final_ranking(s) is None
    assert summ["phase"] == "scoring" and summ["winners"] is None and summ["next_scoring"] is None
    assert summ["missing"] == {"alliances": list(range(1, 14)), "chains": ["Barbara", "Chris", "Dan"]}
    final = s["scorings"]["final"]
    assert final["complete"] is False and final["missing"] == summ["missing"]
    assert summ["scores"]["complete"] is False
    # what is known is scored already: alliance 14 (Italien + Burgund) for Dan
    assert {"kind": "alliance", "number": 14, "countries": ["Italien", "Burgund"], "points": 6} \
        in final_entry(s, "Dan")["breakdown"]
    # the game goes no further until the parts are entered (or the scoring is undone)
    for t, data in (("place", {"player": "Anna", "piece": "monastery", "country": "England"}),
                    ("turn.end", {}), ("deck.out", {}), ("game.end", {})):
        m.refused(t, data, RuleError, "type")


def test_hand_entries_complete_the_scoring_exactly_and_the_match_ends():
    m = book_match()
    m("scoring.hand", {"alliances": [
        {"number": 1, "countries": ["Bayern", "Burgund"]},  # Barbara leads both: 3 + 2 councillors
        {"number": 2, "players": ["Dan"], "points": 6},      # counted at the table
        *({"number": n, "players": []} for n in range(3, 14))]})
    assert m.summary["missing"] == {"alliances": [], "chains": ["Barbara", "Chris", "Dan"]}
    assert not wop.is_ended(m.state)
    m("scoring.hand", {"chains": {"Barbara": [6], "Chris": [4], "Dan": []}})
    s, summ = m.state, m.summary
    assert wop.is_ended(s) and summ["phase"] == "ended" and summ["missing"] is None
    assert s["scorings"]["final"]["complete"] is True and s["scorings"]["final"]["warnings"] == []
    barbara, dan = final_entry(s, "Barbara")["breakdown"], final_entry(s, "Dan")["breakdown"]
    assert {"kind": "alliance", "number": 1, "countries": ["Bayern", "Burgund"], "points": 5, "hand": True} in barbara
    assert {"kind": "alliance", "number": 2, "countries": None, "points": 6, "hand": True} in dan
    assert {"kind": "chain", "length": 6, "points": 6} in barbara
    assert not any(e["kind"] == "chain" for e in dan)
    # the final scoring keeps the seq of the deck running out
    assert s["scorings"]["final"]["seq"] == m.seq - 2
    totals = summ["scores"]["totals"]
    best = max(totals.values())
    assert summ["winners"] == [p for p in P4 if totals[p] == best]
    assert wop.final_ranking(s)[0] == {"player": summ["winners"][0], "place": 1, "objective": False,
                                       "eliminated": False}


def test_later_entries_replace_earlier_ones_and_chains_events_count_too():
    m = book_match()
    m("scoring.hand", {"alliances": [{"number": 1, "players": ["Barbara"], "points": 4}]})
    m("scoring.hand", {"alliances": [{"number": 1, "players": []}]})
    assert "1" not in [str(n) for n in m.summary["missing"]["alliances"]]
    assert not any(e["kind"] == "alliance" and e["number"] == 1
                   for r in m.state["scorings"]["final"]["players"] for e in r["breakdown"])
    m("scoring.hand", {"alliances": [{"number": n, "players": []} for n in range(2, 14)]})
    m("chains", {"player": "Barbara", "lengths": [4]})
    m("chains", {"player": "Chris", "lengths": [4]})
    assert m.summary["missing"]["chains"] == ["Dan"] and not wop.is_ended(m.state)
    m("chains", {"player": "Dan", "lengths": [4]})  # the last part: the match ends
    assert wop.is_ended(m.state)
    m.refused("scoring.hand", {"chains": {"Dan": []}}, RuleError, "type")


def test_nothing_missing_ends_at_once():
    # councillors lead in one country each and nobody has 4 monasteries: the unknown alliances and
    # the unknown roads cannot change a thing
    m = Match(P3).run(position({"A": {"Franken": 2}, "B": {"Bayern": 3}},
                               {"Franken": {"A": 1}, "Bayern": {"B": 2}}))
    m("deck.out")
    m("deck.out")
    assert wop.is_ended(m.state) and m.summary["winners"] == ["B"]
    assert m.state["scorings"]["final"]["missing"] == {"alliances": [], "chains": []}
    m.refused("scoring.hand", {"chains": {"A": []}}, RuleError, "type")


def test_everything_missing():
    m = Match(P3).run(position({"A": {"Franken": 4}, "B": {"Bayern": 4}, "C": {"Italien": 4}},
                               {"Franken": {"A": 1}, "Bayern": {"A": 1}, "Italien": {"C": 1}}))
    m("game.end")
    summ = m.summary
    assert summ["missing"] == {"alliances": list(range(1, 14)), "chains": ["A", "B", "C"]}
    assert summ["winners"] is None and wop.final_ranking(m.state) is None
    m("scoring.hand", {"alliances": [{"number": n, "countries": ["Franken", "Bayern"]} for n in range(1, 14)],
                       "chains": {"A": [4], "B": [4], "C": []}})
    assert wop.is_ended(m.state)
    # 13 alliances Franken + Bayern for A (2 councillors each) on top of 4 + 4 monasteries and a chain
    assert final_entry(m.state, "A")["total"] == 4 + 13 * 2 + 4


def test_a_tie_after_the_hand_entry_goes_to_unplayed_pieces_then_is_shared():
    # A and B: 4 monasteries each in their own country, 1 councillor each in two countries (tied)
    m = Match(P3).run(position({"A": {"Franken": 2, "England": 2}, "B": {"Bayern": 2, "Aragon": 2}},
                               {"Franken": {"A": 1}, "England": {"A": 1}, "Bayern": {"B": 1}, "Aragon": {"B": 1}}))
    m("deck.out")
    m("deck.out")
    assert m.summary["winners"] is None
    m("scoring.hand", {"alliances": [{"number": n, "players": []} for n in range(1, 14)],
                       "chains": {"A": [4], "B": [4]}})
    summ = m.summary
    assert summ["scores"]["totals"]["A"] == summ["scores"]["totals"]["B"]
    assert summ["winners"] == ["A", "B"]  # same points, same unplayed pieces: both win
    assert [r["place"] for r in wop.final_ranking(m.state)] == [1, 1, 3]


def test_roads_known_but_monasteries_by_country_are_missing_chains():
    board = synthetic_board(4, 4, seed=9)
    country = board["countries"][0]["id"]
    m = Match(P3, {"board": board})
    for _ in range(2):
        m("place", {"player": "A", "piece": "monastery", "country": country, "count": 2})
        m("turn.end")
    m("deck.out")
    m("deck.out")
    assert m.summary["missing"] == {"alliances": [], "chains": ["A"]}
    m.refused("scoring.hand", {"chains": {"B": [4]}}, InputError, "chains.B")  # B's chains come from the roads
    m("scoring.hand", {"chains": {"A": [4]}})
    assert wop.is_ended(m.state) and m.summary["winners"] == ["A"]


@pytest.mark.parametrize("data, error, field", [
    ({"alliances": [{"number": 14, "countries": ["Italien", "Burgund"]}]}, InputError, "alliances[0].number"),
    ({"alliances": [{"number": 16, "players": []}]}, InputError, "alliances[0].number"),
    ({"alliances": [{"number": 1, "players": []}, {"number": 1, "players": []}]}, InputError, "alliances[1].number"),
    ({"alliances": [{"number": 1}]}, InputError, "alliances[0]"),
    ({"alliances": [{"number": 1, "countries": ["Bayern", "Burgund"], "players": []}]}, InputError, "alliances[0]"),
    ({"alliances": [{"number": 1, "countries": ["Bayern", "Atlantis"]}]}, InputError, "alliances[0].countries[1]"),
    ({"alliances": [{"number": 1, "countries": ["Bayern", "Bayern"]}]}, InputError, "alliances[0].countries[1]"),
    ({"alliances": [{"number": 1, "countries": ["Bayern"]}]}, InputError, "alliances[0].countries"),
    ({"alliances": [{"number": 1, "countries": ["Bayern", "Burgund"], "points": 3}]}, InputError, "alliances[0].points"),
    ({"alliances": [{"number": 1, "players": ["Chris"], "points": 4}]}, RuleError, "alliances[0].players[0]"),
    ({"alliances": [{"number": 1, "players": ["Zed"], "points": 4}]}, InputError, "alliances[0].players[0]"),
    ({"alliances": [{"number": 1, "players": ["Dan", "Dan"], "points": 4}]}, InputError, "alliances[0].players[1]"),
    ({"alliances": [{"number": 1, "players": ["Dan"], "points": 1}]}, RuleError, "alliances[0].points"),
    ({"alliances": [{"number": 1, "players": ["Dan"], "points": 8}]}, RuleError, "alliances[0].points"),
    ({"alliances": [{"number": 1, "players": ["Dan"], "points": "6"}]}, InputError, "alliances[0].points"),
    ({"alliances": [{"number": 1, "players": [], "points": 3}]}, InputError, "alliances[0].points"),
    ({"alliances": [{"number": 1, "players": [], "colour": "red"}]}, InputError, "alliances[0].colour"),
    ({"alliances": {"1": {"players": []}}}, InputError, "alliances"),
    ({"chains": {"Chris": [5]}}, InputError, "chains.Chris"),  # Chris has 4 monasteries
    ({"chains": {"Chris": [3]}}, InputError, "chains.Chris[0]"),
    ({"cards": 3}, InputError, "cards"),
    ({}, InputError, "alliances"),
])
def test_bad_hand_entries_are_refused_and_change_nothing(data, error, field):
    m = book_match()
    before = copy.deepcopy(m.state)
    m.refused("scoring.hand", data, error, field)
    assert m.state == before


def test_hand_entries_only_at_the_scoring_step():
    m = Match().run(position(BOOK_MONASTERIES, BOOK_COUNCILLORS))
    m.refused("scoring.hand", {"alliances": [{"number": 1, "players": []}]}, RuleError, "type")
    m("deck.out")  # the intermediate scoring counts monasteries only: always complete
    assert m.state["scorings"]["intermediate"]["complete"] is True
    m.refused("scoring.hand", {"alliances": [{"number": 1, "players": []}]}, RuleError, "type")


def test_the_season_gets_only_the_complete_result_and_undo_reopens():
    events = [{"seq": i, "type": t, "data": d, "at": AT}
              for i, (t, d) in enumerate(position(BOOK_MONASTERIES, BOOK_COUNCILLORS)
                                         + [("deck.out", {}), ("deck.out", {})], 1)]
    f = fold("web-of-power", P4, events)
    assert not f.ended() and results_from_fold(f) is None
    n = len(events)
    f.apply({"seq": n + 1, "type": "scoring.hand", "at": AT,
             "data": {"alliances": [{"number": k, "players": []} for k in range(1, 14)],
                      "chains": {"Barbara": [5], "Chris": [4], "Dan": [4]}}})
    assert f.ended()
    results = results_from_fold(f)
    totals = f.view()["summary"]["scores"]["totals"]
    assert [r["player"] for r in results] == sorted(P4, key=lambda p: -totals[p])
    assert results[0]["place"] == 1 and all(r["objective"] is False for r in results)
    f.apply({"seq": n + 2, "type": "undo", "data": {}, "at": AT})
    assert not f.ended() and f.view()["summary"]["phase"] == "scoring"


# -- companion score web-of-power: no winner from an incomplete final scoring ------------------------

def test_score_names_no_winner_from_an_incomplete_final_scoring():
    doc = {"players": P4, "scoring": "final", "monasteries": BOOK_MONASTERIES, "councillors": BOOK_COUNCILLORS}
    res = wop.score(doc)
    assert res["complete"] is False and "winners" not in res
    assert res["missing"] == {"alliances": list(range(1, 14)), "chains": ["Barbara", "Chris", "Dan"]}
    doc["chains"] = {"Barbara": [6], "Chris": [4], "Dan": []}
    doc["councillors"] = {"Italien": {"Dan": 2, "Barbara": 1}}  # nobody leads two countries now
    res = wop.score(doc)
    assert res["complete"] is True and res["missing"] == {"alliances": [], "chains": []} and res["winners"]


# -- warnings carry their turn; the current ones apart ----------------------------------------------

def test_warnings_carry_their_turn_and_only_the_latest_turn_is_current():
    m = Match()
    m("place", {"player": "Anna", "piece": "monastery", "country": "England", "count": 2})  # 2 in an empty country
    m("turn.end")
    m("place", {"player": "Chris", "piece": "monastery", "country": "Franken"})  # out of turn (Barbara's)
    summ = m.summary
    assert [(w["turn"], w["player"], w["current"]) for w in summ["warnings"]] == [(1, "Anna", False), (2, "Chris", True)]
    assert summ["current_turn"] == 2
    m("turn.end")
    assert [w["current"] for w in m.summary["warnings"]] == [False, True]  # the turn just played
    m("place", {"player": "Dan", "piece": "monastery", "country": "Bayern"})
    assert [w["current"] for w in m.summary["warnings"]] == [False, False]


def test_the_monasteries_now_preview_is_points_with_the_pieces_beside():
    m = Match().run(position({"Anna": {"Franken": 1}}, {}))
    prev = m.summary["scores"]["preview"]
    assert prev["unit"] == "points"
    anna = next(r for r in prev["players"] if r["player"] == "Anna")
    assert anna == {"player": "Anna", "points": 1, "monasteries": 1}


def test_score_takes_hand_entered_alliances_like_the_match():
    from companion.base.resources import schemas_dir

    doc = json.loads((schemas_dir() / "examples" / "web-of-power.score" / "template-complete-by-hand.json").read_text())
    res = wop.score(doc)
    assert res["complete"] is True and res["winners"] == ["Barbara"]
    assert {p["player"]: p["total"] for p in res["players"]} == {"Anna": 5, "Barbara": 22, "Chris": 19, "Dan": 20}
    # the same position and entries through a match give the same final scoring
    m = Match().run(position(doc["monasteries"], doc["councillors"]))
    m("deck.out")
    m("deck.out")
    m("scoring.hand", {"alliances": doc["alliances"], "chains": doc["chains"]})
    assert [r["breakdown"] for r in m.state["scorings"]["final"]["players"]] == [r["breakdown"] for r in res["players"]]
    # the match's checks, as input errors naming the path
    bad = {**doc, "alliances": [{"number": 1, "players": ["Chris"], "points": 4}]}
    with pytest.raises(InputError) as err:
        wop.score(bad)
    assert err.value.field == "$.alliances[0].players[0]"
    with pytest.raises(InputError) as err:
        wop.score({**doc, "alliances": [{"number": 14, "countries": ["Italien", "Bayern"]}]})
    assert err.value.field == "$.alliances[0].number"


COUNTRIES = ["England", "Franken", "Bayern", "Italien", "Aragon", "Frankreich", "Lothringen", "Schwaben", "Burgund"]


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(COUNTRIES), st.dictionaries(st.sampled_from(P3), st.integers(0, 2)), max_size=5),
       st.lists(st.lists(st.sampled_from(COUNTRIES), min_size=2, max_size=2, unique=True), min_size=13, max_size=13))
def test_alliances_entered_by_countries_score_as_on_a_board_that_has_them(councillors, pairs):
    """Independent of the hand-entry code: the same alliances written into the board itself."""
    from companion.games import wop_board

    board = wop_board.default_board_doc()
    for a, pair in zip(board["alliances"], pairs):
        a["countries"] = pair
    base = {"players": P3, "scoring": "final", "councillors": councillors}
    on_board = wop.score({**base, "map": board})
    by_hand = wop.score({**base, "alliances": [{"number": n, "countries": p} for n, p in enumerate(pairs, 1)]})
    strip = [[{k: v for k, v in e.items() if k != "hand"} for e in r["breakdown"]] for r in by_hand["players"]]
    assert strip == [r["breakdown"] for r in on_board["players"]]
    assert by_hand["complete"] and on_board["complete"] and by_hand["winners"] == on_board["winners"]
