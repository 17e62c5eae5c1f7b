"""Richelieu: intrigue resolution, end-game scoring and the turn helper (pure functions)."""

import copy
import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.base.errors import InputError, RuleError
from companion.games import richelieu as R
from companion.base.schemas import load_schema

# The rule book's resolution example (page 3): "Richelieu ha 3 punti Influenza (3-2+2). L'Inghilterra ha 9 punti
# Influenza (2+3+2+1+1) e vince. Il giocatore Rosso ha contribuito più di tutti: riceve 3 punti Prestigio e
# avanza di una posizione sul Contatore Introiti. Il giocatore Giallo termina in seconda posizione: riceve 3
# punti Prestigio e 3 Luigi d'Argento. Il Cardinale arretra di due caselle."
# The text doesn't say whose agent is whose (that is in the picture): the owners below are our
# reconstruction, chosen so that the totals and the places are the book's.
BOOK_TRACKS = {"red": {"prestige": 5, "income": 2, "military": 1, "money": 4},
               "yellow": {"prestige": 8, "income": 1, "military": 0, "money": 2},
               "blue": {"prestige": 3, "income": 3, "military": 2, "money": 0}}


def agent(player, value):
    return {"player": player, "value": value}


def book_doc():
    return {
        "players": copy.deepcopy(BOOK_TRACKS),
        "cardinal": 7,
        "richelieu_card": {"slots": [agent("blue", 3), agent("red", -2), agent("yellow", 2)],
                           "rewards": {"first": [{"type": "prestige", "amount": 4}],
                                       "second": [{"type": "money", "amount": 2}], "cardinal": 2}},
        "faction_card": {"faction": "england",
                         "slots": [agent("yellow", 2), agent("red", 3), agent("red", 2), agent("blue", 1),
                                   agent("yellow", 1)],
                         "rewards": {"first": [{"type": "prestige", "amount": 3}, {"type": "income", "amount": 1}],
                                     "second": [{"type": "prestige", "amount": 3}, {"type": "money", "amount": 3}],
                                     "cardinal": -2}},
    }


def card(slots, first=(), second=(), cardinal=0, faction=None):
    out = {"slots": slots, "rewards": {"first": list(first), "second": list(second), "cardinal": cardinal}}
    if faction:
        out["faction"] = faction
    return out


def doc_with(rslots, fslots, players=None, cardinal=7, rrewards=None, frewards=None, **extra):
    players = players or {"a": {"prestige": 0, "income": 1, "military": 0, "money": 0},
                          "b": {"prestige": 0, "income": 1, "military": 0, "money": 0},
                          "c": {"prestige": 0, "income": 1, "military": 0, "money": 0}}
    rr = rrewards or {"first": [{"type": "prestige", "amount": 5}], "second": [{"type": "money", "amount": 2}],
                      "cardinal": 1}
    fr = frewards or {"first": [{"type": "prestige", "amount": 4}], "second": [{"type": "money", "amount": 3}],
                      "cardinal": -1}
    return {"players": players, "cardinal": cardinal, "richelieu_card": {"slots": rslots, "rewards": rr},
            "faction_card": {"faction": "france", "slots": fslots, "rewards": fr}, **extra}


# ---------------------------------------------------------------------------------------------------------
# resolution

def test_rule_book_example_england_9_beats_richelieu_3():
    out = R.resolve(book_doc())
    assert out["winner"] == "england"
    assert out["totals"] == {"richelieu": 3, "england": 9}
    assert (out["first"], out["second"]) == ("red", "yellow")
    assert out["players"]["red"] == {**BOOK_TRACKS["red"], "prestige": 5 + 3, "income": 2 + 1}
    assert out["players"]["yellow"] == {**BOOK_TRACKS["yellow"], "prestige": 8 + 3, "money": 2 + 3}
    assert out["players"]["blue"] == BOOK_TRACKS["blue"]  # third place gets nothing
    assert out["cardinal"] == 7 - 2
    assert out["sheet"] == {"kind": "england", "to": "red"}


def test_resolve_does_not_change_its_input():
    doc = book_doc()
    before = copy.deepcopy(doc)
    R.resolve(doc)
    assert doc == before


def test_a_tie_goes_to_the_cardinal():
    out = R.resolve(doc_with([agent("a", 2), agent("b", 1)], [agent("c", 3), None]))
    assert out["totals"] == {"richelieu": 3, "france": 3}
    assert out["winner"] == "richelieu"
    assert (out["first"], out["second"]) == ("a", "b")


def test_pieces_count_three_and_belong_to_nobody():
    out = R.resolve(doc_with([{"piece": "queen"}, agent("a", 1)], [{"piece": "eminence"}, agent("b", 3), None]))
    assert out["totals"] == {"richelieu": 4, "france": 6}
    assert out["winner"] == "france" and out["first"] == "b" and out["second"] is None


def test_equal_contributions_go_to_the_leftmost_agent():
    # b's leftmost agent (slot 0) is left of a's (slot 1): b is first although a is listed first in players
    out = R.resolve(doc_with([agent("b", 1), agent("a", 3), agent("b", 2), agent("c", -2)], [None, None]))
    assert [c["value"] for c in out["contributions"]] == [3, 3]
    assert (out["first"], out["second"]) == ("b", "a")


def test_negative_total_loses_to_an_empty_card():
    out = R.resolve(doc_with([agent("a", 3), agent("b", -2), agent("a", -2), agent("c", 2), agent("c", -2)],
                             [None]))
    assert out["totals"] == {"richelieu": -1, "france": 0}
    assert out["winner"] == "france"
    assert out["first"] is None and out["second"] is None and out["sheet"]["to"] is None
    assert out["cardinal"] == 6  # the winning card's move still happens


def test_placings_skip_zero_and_negative_contributions():
    slots = [agent("a", 3), agent("b", -2), agent("a", -2), agent("c", 2), agent("c", -2)]
    assert R.placings({"slots": slots}) == [("a", 1)]


def test_losing_card_contributors_get_nothing():
    out = R.resolve(doc_with([agent("a", 3), agent("a", 3)], [agent("b", 2), agent("c", 1)]))
    assert out["winner"] == "richelieu"
    assert out["players"]["b"]["prestige"] == 0 and out["players"]["c"]["money"] == 0
    assert out["second"] is None  # only a contributed to the winning card


def test_rewards_then_cardinal_moves_then_advances_to_the_first_player():
    players = {"a": {"prestige": 6, "income": 1, "military": 0, "money": 0},
               "b": {"prestige": 2, "income": 1, "military": 0, "money": 0}}
    # Richelieu wins; a gets 5 prestige (6 -> 11); the Cardinal moves 7 + 1 = 8, behind 11: advances to 11
    out = R.resolve(doc_with([agent("a", 3), agent("b", 1)], [None], players=players))
    assert out["players"]["a"]["prestige"] == 11
    assert out["cardinal"] == 11


def test_no_advance_when_the_faction_wins():
    players = {"a": {"prestige": 20, "income": 1, "military": 0, "money": 0},
               "b": {"prestige": 2, "income": 1, "military": 0, "money": 0}}
    out = R.resolve(doc_with([None], [agent("a", 3)], players=players))
    assert out["winner"] == "france" and out["cardinal"] == 6


def test_the_cardinal_compares_with_the_marker_past_30():
    players = {"a": {"prestige": 29, "income": 1, "military": 0, "money": 0},
               "b": {"prestige": 2, "income": 1, "military": 0, "money": 0}}
    # a reaches 34 = a 30+ tile and the marker on 4: the Cardinal (7 + 1 = 8) is not behind it
    out = R.resolve(doc_with([agent("a", 3)], [None], players=players))
    assert out["players"]["a"]["prestige"] == 34 and out["cardinal"] == 8


@pytest.mark.parametrize("start, move, end", [(1, -3, 0), (28, 4, 29), (0, 0, 0), (29, -10, 19)])
def test_the_cardinal_stops_at_the_ends_of_the_track(start, move, end):
    rr = {"first": [], "second": [], "cardinal": move}
    out = R.resolve(doc_with([agent("a", -2)], [agent("b", 1)], cardinal=start,
                             frewards={**rr}, rrewards=rr))
    assert out["cardinal"] == end


def test_action_rewards_are_listed_for_the_table():
    rr = {"first": [{"type": "place_agent", "amount": 1}, {"type": "queen", "amount": 1}],
          "second": [{"type": "corruption", "amount": 1}], "cardinal": 0}
    out = R.resolve(doc_with([agent("a", 3), agent("b", 2)], [None], rrewards=rr))
    assert out["reward_actions"] == [
        {"player": "a", "place": "first", "type": "place_agent", "amount": 1},
        {"player": "a", "place": "first", "type": "queen", "amount": 1},
        {"player": "b", "place": "second", "type": "corruption", "amount": 1}]
    assert out["players"]["a"] == doc_with([], [])["players"]["a"]


def test_military_reward_passes_board_bonus_symbols():
    rr = {"first": [{"type": "military", "amount": 3}], "second": [], "cardinal": 0}
    out = R.resolve(doc_with([agent("a", 3)], [None], rrewards=rr, military_bonuses={"2": "income", "3": "prestige",
                                                                                     "4": "income"}))
    assert out["players"]["a"]["military"] == 3
    assert out["players"]["a"]["income"] == 1 + 1
    assert out["players"]["a"]["prestige"] == 1  # the symbol on 3; the one on 4 is not reached
    # without the symbols nothing extra
    out = R.resolve(doc_with([agent("a", 3)], [None], rrewards=rr))
    assert out["players"]["a"]["income"] == 1 and out["players"]["a"]["prestige"] == 0


TWO = {"a": {"prestige": 0, "income": 1, "military": 0, "money": 0},
       "b": {"prestige": 0, "income": 1, "military": 0, "money": 0}}


def test_two_players_neutral_first_forfeits_the_first_reward_and_the_sheet():
    out = R.resolve(doc_with([agent("grey", 2), agent("grey", 1), agent("a", 2)], [None], players=copy.deepcopy(TWO),
                             neutral="grey"))
    assert out["first"] == "grey" and out["second"] == "a"
    assert out["players"]["a"]["money"] == 2  # second place is paid
    assert out["players"]["a"]["prestige"] == 0
    assert out["sheet"] == {"kind": "richelieu", "to": None}
    assert out["forfeited"] == [{"place": "first", "rewards": [{"type": "prestige", "amount": 5}]}]
    assert out["cardinal"] == 8  # no advance to a neutral


def test_two_players_neutral_second_forfeits_only_the_second_reward():
    out = R.resolve(doc_with([agent("a", 3), agent("grey", 2)], [None], players=copy.deepcopy(TWO), neutral="grey"))
    assert out["players"]["a"]["prestige"] == 5 and out["players"]["b"]["money"] == 0
    assert [f["place"] for f in out["forfeited"]] == ["second"]


@pytest.mark.parametrize("mutate, path, cls", [
    (lambda d: d["faction_card"]["slots"].__setitem__(1, agent("zed", 1)), "$.faction_card.slots[1].player",
     InputError),
    (lambda d: d["richelieu_card"]["slots"].__setitem__(0, {"piece": "eminence"}), "$.richelieu_card.slots[0]",
     InputError),
    (lambda d: d["faction_card"]["slots"].__setitem__(0, {"piece": "queen"}), "$.faction_card.slots[0]",
     InputError),
    # each colour has two 3s: with two more on the Richelieu card, red's 3 on England is a third one
    (lambda d: d["richelieu_card"]["slots"].extend([agent("red", 3), agent("red", 3)]),
     "$.faction_card.slots[1].value", InputError),
    (lambda d: (d["richelieu_card"]["slots"].append(None), d["faction_card"]["slots"].append(None)),
     "$.richelieu_card.slots", RuleError),
    (lambda d: d["faction_card"].__setitem__("faction", "spain"), "$.faction_card.faction", InputError),
    (lambda d: d["players"]["red"].__setitem__("money", -1), "$.players.red.money", InputError),
    (lambda d: d.__setitem__("cardinal", 30), "$.cardinal", InputError),
    (lambda d: d["faction_card"]["slots"].__setitem__(2, agent("red", 0)), "$.faction_card.slots[2].value",
     InputError),
    (lambda d: d.__setitem__("neutral", "grey"), "$.neutral", InputError),  # 3 players: no neutral
    (lambda d: d["players"].pop("blue") and d["players"].pop("yellow"), "$.players", InputError),
])
def test_bad_resolution_input_names_the_field(mutate, path, cls):
    doc = book_doc()
    mutate(doc)
    with pytest.raises(cls) as err:
        R.resolve(doc)
    assert err.value.field == path


def test_neutral_agents_have_no_three_and_two_minus_two():
    # each player's neutral set is 1x -2, 3x 1, 3x 2: two sets, so at most two -2 (audit fix)
    with pytest.raises(InputError) as err:
        R.resolve(doc_with([agent("grey", 3)], [None], players=copy.deepcopy(TWO), neutral="grey"))
    assert err.value.field == "$.richelieu_card.slots[0].value"
    with pytest.raises(InputError):
        R.resolve(doc_with([agent("grey", -2), agent("grey", -2)], [agent("grey", -2)],
                           players=copy.deepcopy(TWO), neutral="grey"))
    with pytest.raises(InputError) as err:
        R.resolve(doc_with([agent("a", 1)], [None], players=copy.deepcopy(TWO), neutral="a"))
    assert err.value.field == "$.neutral"


# property test: resolution against an independent formulation

PLAYERS = ["a", "b", "c"]
slot_st = st.one_of(st.none(), st.builds(agent, st.sampled_from(PLAYERS), st.sampled_from([-2, 1, 2, 3])))


def _ok_supply(slots):
    counts = {}
    for s in slots:
        if s and "player" in s:
            counts[(s["player"], s["value"])] = counts.get((s["player"], s["value"]), 0) + 1
    return all(n <= R.AGENT_SUPPLY[v] for (_, v), n in counts.items())


def brute_first_second(slots):
    """Independent: a player beats another on more value, or equal value and an agent further left."""
    who = {s["player"] for s in slots if s and "player" in s}
    value = {p: sum(s["value"] for s in slots if s and s.get("player") == p) for p in who}
    left = {p: min(i for i, s in enumerate(slots) if s and s.get("player") == p) for p in who}
    pos = [p for p in who if value[p] > 0]

    def beats(p, q):
        return value[p] > value[q] or (value[p] == value[q] and left[p] < left[q])

    first = [p for p in pos if all(beats(p, q) for q in pos if q != p)]
    rest = [p for p in pos if p not in first]
    second = [p for p in rest if all(beats(p, q) for q in rest if q != p)]
    return (first[0] if first else None), (second[0] if second else None)


@given(rslots=st.lists(slot_st, min_size=1, max_size=6), fslots=st.lists(slot_st, min_size=1, max_size=6),
       queen=st.booleans(), eminence=st.booleans(), cardinal=st.integers(0, 29),
       prestige=st.lists(st.integers(0, 70), min_size=3, max_size=3),
       rmove=st.integers(-4, 4), fmove=st.integers(-4, 4))
def test_resolution_matches_an_independent_formulation(rslots, fslots, queen, eminence, cardinal, prestige,
                                                      rmove, fmove):
    rslots = [None if s is None else dict(s) for s in rslots]
    fslots = [None if s is None else dict(s) for s in fslots]
    if queen:
        rslots[0] = {"piece": "queen"}
    if eminence:
        fslots[-1] = {"piece": "eminence"}
    if not _ok_supply(rslots + fslots):
        return
    rslots[-1] = rslots[-1] or agent("a", 1)  # make the Richelieu card full
    rslots = [s if s is not None else agent("b", 1) for s in rslots]
    if not _ok_supply(rslots + fslots):
        return
    players = {p: {"prestige": prestige[i], "income": 1, "military": 0, "money": 0} for i, p in enumerate(PLAYERS)}
    rr = {"first": [{"type": "prestige", "amount": 2}], "second": [{"type": "money", "amount": 1}], "cardinal": rmove}
    fr = {"first": [{"type": "money", "amount": 4}], "second": [{"type": "prestige", "amount": 3}], "cardinal": fmove}
    doc = doc_with(rslots, fslots, players=players, cardinal=cardinal, rrewards=rr, frewards=fr)
    out = R.resolve(doc)

    def total(slots):
        return sum(3 if s and "piece" in s else (s["value"] if s else 0) for s in slots)

    r_wins = not total(rslots) < total(fslots)
    assert out["winner"] == ("richelieu" if r_wins else "france")
    win_slots, rewards = (rslots, rr) if r_wins else (fslots, fr)
    first, second = brute_first_second(win_slots)
    assert (out["first"], out["second"]) == (first, second)
    expected = copy.deepcopy(players)
    for who, place in ((first, "first"), (second, "second")):
        if who:
            for r in rewards[place]:
                expected[who][r["type"]] += r["amount"]
    assert out["players"] == expected
    cardinal_after = min(29, max(0, cardinal + rewards["cardinal"]))
    if r_wins and first and expected[first]["prestige"] % 30 > cardinal_after:
        cardinal_after = expected[first]["prestige"] % 30
    assert out["cardinal"] == cardinal_after


def test_an_intrigue_event_s_cards_are_the_resolve_schema_s():
    """An intrigue.resolve event and ``companion richelieu resolve`` take the same cards: the events schema
    refers to the resolve schema's definitions rather than keep copies of them."""
    from companion.base.schemas import resolve

    ev, res = load_schema("richelieu.events")["$defs"], load_schema("richelieu.resolve")["$defs"]
    for name in ("richelieu_card", "faction_card"):
        assert name not in ev
        ref = ev["intrigue_resolve"]["properties"][name]["$ref"]
        assert resolve(ref, "richelieu.events")[0] is res[name]


# ---------------------------------------------------------------------------------------------------------
# end-game scoring

def player(name, richelieu=0, england=0, france=0, habsburg=0, protestants=0, prestige=10, income=2,
           military=1, money=3, jewels=0):
    return {"name": name, "prestige": prestige, "income": income, "military": military, "money": money,
            "jewels": jewels, "cards": {"richelieu": richelieu, "england": england, "france": france,
                                        "habsburg": habsburg, "protestants": protestants}}


def bonus_of(row):
    b = row["breakdown"]
    return b["richelieu_sheets"] + sum(b["opposing_sets"].values())


def test_rule_book_bonus_example_nicola_9_susanna_14_tommaso_5():
    out = R.score({"players": [player("Nicola", richelieu=3, england=1),
                               player("Susanna", richelieu=2, france=3, habsburg=1),
                               player("Tommaso", england=2, protestants=1)]})
    bonus = {r["player"]: bonus_of(r) for r in out["players"]}
    assert bonus == {"Nicola": 9, "Susanna": 14, "Tommaso": 5}
    by = {r["player"]: r["breakdown"] for r in out["players"]}
    assert by["Nicola"]["richelieu_sheets"] == 8 and by["Susanna"]["richelieu_sheets"] == 4
    assert by["Susanna"]["opposing_sets"] == {"england": 0, "france": 9, "habsburg": 1, "protestants": 0}


def test_total_adds_tracks_bonuses_and_four_per_jewel():
    out = R.score({"players": [player("x", richelieu=1, england=4, prestige=31, income=5, military=7, jewels=3),
                               player("y")]})
    x = next(r for r in out["players"] if r["player"] == "x")
    assert x["total"] == 31 + 5 + 7 + 8 + 16 + 12
    assert x["breakdown"]["jewels"] == 12


@pytest.mark.parametrize("counts, bonus", [
    ([3, 2, 0], [8, 4, 0]),
    ([2, 2, 1], [4, 4, 0]),  # tie for most: 4 each, no second
    ([3, 1, 1], [8, 0, 0]),  # tie for second: nothing
    ([0, 0, 0], [0, 0, 0]),
    ([1, 0, 0], [8, 0, 0]),  # zero sheets never come second
    ([4, 4, 4, 1], [4, 4, 4, 0]),
    ([0, 5], [0, 8]),
])
def test_richelieu_bonus_ladder(counts, bonus):
    assert R.richelieu_bonus(counts) == bonus


def brute_bonus(counts):
    out = []
    for c in counts:
        more = sum(1 for o in counts if o > c)
        same = sum(1 for o in counts if o == c)
        if c == 0:
            out.append(0)
        elif more == 0:
            out.append(8 if same == 1 else 4)
        elif more == 1 and same == 1:
            out.append(4)
        else:
            out.append(0)
    return out


@given(st.lists(st.integers(0, 13), min_size=2, max_size=4))
def test_richelieu_bonus_matches_a_count_of_better_players(counts):
    assert R.richelieu_bonus(counts) == brute_bonus(counts)


@given(st.lists(st.integers(0, 4), min_size=1, max_size=1))
def test_set_points_are_squares(n):
    assert R.set_points(n[0]) == [0, 1, 4, 9, 16][n[0]]


def test_ties_break_on_money_then_sheets_then_share_the_place():
    out = R.score({"players": [player("a", money=5), player("b", money=7), player("c", money=7, england=0),
                               player("d", money=5)]})
    assert [(r["player"], r["place"]) for r in out["players"]] == [("b", 1), ("c", 1), ("a", 3), ("d", 3)]
    assert out["winners"] == ["b", "c"]
    # same total and money: the one with more intrigue sheets wins. Give a one Protestant sheet (1 point)
    # and take a point of prestige so the totals stay equal.
    out = R.score({"players": [player("a", protestants=1, prestige=9), player("b")]})
    assert [(r["player"], r["place"], r["total"]) for r in out["players"]] == [("a", 1, 13), ("b", 2, 13)]


@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 20), st.integers(0, 3)), min_size=2, max_size=4))
def test_places_count_players_strictly_ahead(rows):
    players = [player(f"p{i}", prestige=t, money=m, protestants=0, france=0, habsburg=s)
               for i, (t, m, s) in enumerate(rows)]
    if sum(s for _, _, s in rows) > 3:
        return
    out = R.score({"players": players})
    key = {r["player"]: (r["total"], r["money"], r["sheets"]) for r in out["players"]}
    for r in out["players"]:
        assert r["place"] == 1 + sum(1 for k in key.values() if k > key[r["player"]])
    assert [r["place"] for r in out["players"]] == sorted(r["place"] for r in out["players"])


@pytest.mark.parametrize("players, path", [
    ([player("a", england=3), player("b", england=2)], "$.players[1].cards.england"),
    ([player("a", richelieu=7), player("b", richelieu=7)], "$.players[1].cards.richelieu"),
    ([player("a", france=2), player("b"), player("c", france=2)], "$.players[2].cards.france"),
    ([player("a"), player("a")], "$.players[1].name"),
    ([player("a", jewels=-1), player("b")], "$.players[0].jewels"),
    ([player("a", prestige=-3), player("b")], "$.players[0].prestige"),
    ([player("a")], "$.players"),
])
def test_impossible_end_game_input_names_the_field(players, path):
    with pytest.raises(InputError) as err:
        R.score({"players": players})
    assert err.value.field == path


# ---------------------------------------------------------------------------------------------------------
# turn helper

@pytest.mark.parametrize("prestige, cardinal, n", [(0, 7, 2), (6, 7, 2), (7, 7, 1), (12, 7, 1), (31, 7, 2),
                                                   (37, 7, 1), (0, 0, 1)])
def test_actions_allowed(prestige, cardinal, n):
    assert R.actions_allowed(prestige, cardinal) == n


def turn(actions, **tracks):
    doc = {"prestige": 0, "cardinal": 7, "income": 1, "military": 0, "money": 10, "jewels": 2, **tracks}
    if actions is not None:
        doc["actions"] = actions
    return R.plan(doc)


def test_rule_book_placement_example_0_then_1_costs_3():
    out = turn([{"type": "place_agent", "space": 0}, {"type": "place_agent", "space": 1}], money=3)
    assert [s["cost"] for s in out["steps"]] == [0, 3]
    assert [s["face"] for s in out["steps"]] == ["up", "down"]
    assert out["result"]["money"] == 0


def test_rule_book_income_example_level_3_gives_3():
    out = turn([{"type": "income"}], income=3, money=0)
    assert out["steps"][0]["gain"] == 3 and out["result"]["money"] == 3


def test_rule_book_commission_example_from_2_pays_3():
    out = turn([{"type": "commission"}], military=2, money=5)
    assert out["steps"][0]["cost"] == 3
    assert out["result"]["military"] == 3 and out["result"]["money"] == 2


def test_commission_passing_a_board_symbol():
    out = turn([{"type": "commission"}], military=2, money=5, military_bonuses={"3": "prestige"})
    assert out["result"]["prestige"] == 1 and out["steps"][0]["military_bonus"] == {"prestige": 1}


def test_jewels_sell_5_buy_8():
    assert turn([{"type": "sell_jewel"}], money=0)["result"] == {
        "prestige": 0, "income": 1, "military": 0, "money": 5, "jewels": 1}
    out = turn([{"type": "buy_jewel"}], money=8, city_jewels=1)
    assert out["result"]["money"] == 0 and out["result"]["jewels"] == 3 and out["result"]["city_jewels"] == 0


@pytest.mark.parametrize("actions, tracks, index, needle", [
    ([{"type": "income"}, {"type": "income"}], {}, 1, "once a turn"),
    ([{"type": "buy_jewel"}, {"type": "sell_jewel"}], {"money": 20}, 1, "one jewel"),
    ([{"type": "commission"}], {"prestige": 7}, 0, "behind the Cardinal"),
    ([{"type": "commission"}, {"type": "commission"}], {"money": 20}, 1, "once a turn"),
    ([{"type": "income"}, {"type": "place_agent", "space": 0}], {"prestige": 9}, 1, "no action left"),
    ([{"type": "place_agent", "space": 2}, {"type": "place_agent", "space": 1}], {"money": 4}, 1, "costs 3"),
    ([{"type": "buy_jewel"}], {"money": 7}, 0, "costs 8"),
    ([{"type": "buy_jewel"}], {"city_jewels": 0}, 0, "city"),
    ([{"type": "sell_jewel"}], {"jewels": 0}, 0, "no jewel"),
    ([{"type": "commission"}], {"military": 4, "money": 4}, 0, "costs 5"),
    ([{"type": "income"}, {"type": "income"}, {"type": "income"}], {}, 1, "once"),
])
def test_refused_actions_name_the_action(actions, tracks, index, needle):
    with pytest.raises(RuleError) as err:
        turn(actions, **tracks)
    assert err.value.field == f"$.actions[{index}]"
    assert needle in err.value.message


def test_next_actions_price_what_is_left():
    out = turn([{"type": "place_agent", "space": 0}], money=3)
    assert out["actions_left"] == 1
    assert out["next"]["place_agent"] == {"costs": {"0": 2, "1": 3}}  # +2 for the second placement
    assert out["next"]["buy_jewel"] is None and out["next"]["sell_jewel"] == {"gain": 5}
    assert out["next"]["commission"] == {"cost": 1}
    out = turn(None, prestige=9)
    assert out["actions_allowed"] == 1 and out["next"]["commission"] is None


def test_plan_schema_refuses_a_placement_without_its_space():
    with pytest.raises(InputError) as err:
        turn([{"type": "place_agent"}])
    assert err.value.field.startswith("$.actions[0]")


# ---------------------------------------------------------------------------------------------------------
# CLI (real processes)

def test_cli_resolve_book_example(run_cli):
    code, out, err = run_cli("richelieu", "resolve", "-", stdin=json.dumps(book_doc()))
    assert code == 0, err
    body = json.loads(out)
    assert body["winner"] == "england" and body["cardinal"] == 5 and body["first"] == "red"


def test_cli_actions_and_score(run_cli, tmp_path):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"prestige": 2, "cardinal": 7, "income": 3, "military": 0, "money": 0,
                             "actions": [{"type": "income"}, {"type": "commission"}]}))
    code, out, err = run_cli("richelieu", "actions", str(f))
    assert code == 0, err
    assert json.loads(out)["result"]["money"] == 2
    doc = {"players": [player("Nicola", richelieu=3, england=1), player("Susanna", richelieu=2, france=3,
                                                                          habsburg=1)]}
    code, out, err = run_cli("score", "richelieu", "-", stdin=json.dumps(doc))
    assert code == 0, err
    assert [r["player"] for r in json.loads(out)["players"]] == ["Susanna", "Nicola"]


@pytest.mark.parametrize("args, doc, needle", [
    (["score", "richelieu", "-"], {"players": [player("a", england=3), player("b", england=2)]},
     "$.players[1].cards.england"),
    (["score", "richelieu", "-"], {"players": [player("a", money=-1), player("b")]}, "$.players[0].money"),
    (["richelieu", "resolve", "-"], {**book_doc(), "cardinal": "seven"}, "$.cardinal"),
    (["richelieu", "actions", "-"], {"prestige": 9, "cardinal": 7, "income": 1, "military": 0, "money": 0,
                                     "actions": [{"type": "commission"}]}, "$.actions[0]"),
])
def test_cli_bad_input_exits_2_with_one_line(run_cli, args, doc, needle):
    code, out, err = run_cli(*args, stdin=json.dumps(doc))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err


def test_cli_help_names_the_actions(run_cli):
    code, out, err = run_cli("richelieu", "--help")
    assert code == 0 and "resolve" in out and "actions" in out


def test_brute_first_second_helper_is_not_trivial():
    # the independent formulation itself, on the book's England card
    slots = book_doc()["faction_card"]["slots"]
    assert brute_first_second(slots) == ("red", "yellow")
    assert list(itertools.islice(R.placings({"slots": slots}), 2)) == [("red", 5), ("yellow", 3)]
