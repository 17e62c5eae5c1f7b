"""Independent audit of the Richelieu engine against the rule book
("book" below, Italian) and docs/rulings.md#richelieu ("ruling" below; a ruling wins over the book). Each test names the rule it checks; the oracles are
written from the rules, not from the engine.
"""

import copy
import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from companion.base.errors import InputError, RuleError
from companion.games import richelieu as R


def agent(player, value):
    return {"player": player, "value": value}


def tracks(prestige=0, income=1, military=0, money=0):
    return {"prestige": prestige, "income": income, "military": military, "money": money}


def doc(rslots, fslots, players=None, cardinal=7, rfirst=(), rsecond=(), rmove=0, ffirst=(), fsecond=(), fmove=0,
        faction="habsburg", **extra):
    players = players or {"a": tracks(), "b": tracks(), "c": tracks()}
    return {"players": players, "cardinal": cardinal,
            "richelieu_card": {"slots": rslots, "rewards": {"first": list(rfirst), "second": list(rsecond),
                                                            "cardinal": rmove}},
            "faction_card": {"faction": faction, "slots": fslots,
                             "rewards": {"first": list(ffirst), "second": list(fsecond), "cardinal": fmove}},
            **extra}


def prestige(n):
    return {"type": "prestige", "amount": n}


# =============================================================================================
# Turn helper (book p. 1-2 "Svolgimento del gioco", A-D; ruling "Turn helper")

@given(st.integers(0, 200), st.integers(0, 29))
def test_two_actions_only_when_the_marker_is_behind_the_cardinal(p, cardinal):
    # book: "2 azioni se il suo segnalino è dietro il Cardinale ... 1 azione se ... davanti (o alla pari)";
    # the marker is on prestige mod 30 (book: at 30 the marker goes back to 0 with a "30+" tile)
    marker = p - 30 * (p // 30)
    plan = R.plan({"prestige": p, "cardinal": cardinal, "income": 1, "military": 0, "money": 0})
    assert plan["actions_allowed"] == (2 if marker < cardinal else 1)


def test_level_with_the_cardinal_is_one_action_and_no_commission():
    base = {"prestige": 7, "cardinal": 7, "income": 1, "military": 0, "money": 20}
    assert R.plan(base)["actions_allowed"] == 1
    with pytest.raises(RuleError) as err:
        R.plan(dict(base, actions=[{"type": "commission"}]))
    assert err.value.field == "$.actions[0]"
    # 30+ tile: 37 prestige stands on 7, still level
    assert R.plan(dict(base, prestige=37))["actions_allowed"] == 1
    assert R.plan(dict(base, prestige=36))["actions_allowed"] == 2


@pytest.mark.parametrize("first, second, total", [(0, 0, 2), (0, 1, 3), (3, 0, 5), (2, 3, 7)])
def test_placement_costs_the_space_and_two_more_for_the_second(first, second, total):
    # book B: "deve pagare due Luigi d'Argento addizionali" for the second; example 0 then 1 costs 3
    out = R.plan({"prestige": 0, "cardinal": 7, "income": 1, "military": 0, "money": 10,
                  "actions": [{"type": "place_agent", "space": first}, {"type": "place_agent", "space": second}]})
    assert 10 - out["result"]["money"] == total
    assert [s["face"] for s in out["steps"]] == ["down" if first else "up", "down" if second else "up"]


@pytest.mark.parametrize("level", [0, 2, 5])
def test_commission_costs_the_level_reached(level):
    # book C: "avanzare ... di una posizione, quindi paga ... pari al valore raggiunto" (2 -> pays 3)
    out = R.plan({"prestige": 0, "cardinal": 7, "income": 1, "military": level, "money": 10,
                  "actions": [{"type": "commission"}]})
    assert out["result"]["military"] == level + 1 and out["result"]["money"] == 10 - (level + 1)
    with pytest.raises(RuleError):  # once a turn
        R.plan({"prestige": 0, "cardinal": 7, "income": 1, "military": level, "money": 20,
                "actions": [{"type": "commission"}, {"type": "commission"}]})


@pytest.mark.parametrize("actions", [["buy_jewel", "sell_jewel"], ["sell_jewel", "buy_jewel"],
                                     ["sell_jewel", "sell_jewel"], ["income", "income"]])
def test_jewels_and_income_once_a_turn(actions):
    # book A "solo una volta per turno"; D "Un giocatore può solo comprare o vendere un segnalino per turno"
    with pytest.raises(RuleError) as err:
        R.plan({"prestige": 0, "cardinal": 7, "income": 1, "military": 0, "money": 20, "jewels": 2,
                "actions": [{"type": a} for a in actions]})
    assert err.value.field == "$.actions[1]"


def test_jewel_prices_and_income_level():
    # book D: sell for 5, buy for 8; A: income gives the income level (example: level 3 gives 3)
    out = R.plan({"prestige": 0, "cardinal": 7, "income": 3, "military": 0, "money": 0, "jewels": 1,
                  "actions": [{"type": "sell_jewel"}, {"type": "income"}]})
    assert out["result"]["money"] == 8 and out["result"]["jewels"] == 0
    out = R.plan({"prestige": 0, "cardinal": 7, "income": 1, "military": 0, "money": 8, "jewels": 0,
                  "actions": [{"type": "buy_jewel"}]})
    assert out["result"]["money"] == 0 and out["result"]["jewels"] == 1
    with pytest.raises(RuleError):
        R.plan({"prestige": 0, "cardinal": 7, "income": 1, "military": 0, "money": 7, "actions": [{"type": "buy_jewel"}]})


def test_whole_float_space_is_accepted_as_an_integer():
    # audit fix: JSON Schema counts 1.0 as an integer; the helper refused it ("must be 0, 1, 2 or 3")
    out = R.plan({"prestige": 0.0, "cardinal": 7.0, "income": 1, "military": 0, "money": 10.0,
                  "actions": [{"type": "place_agent", "space": 1.0}]})
    assert out["result"]["money"] == 9 and type(out["result"]["money"]) is int


# =============================================================================================
# Intrigue resolution (book p. 2-3 "Risoluzione di un Intrigo"; ruling "Intrigue resolution")

def oracle_places(card, neutral=None):
    """Book b.: highest positive total first, next positive second; ties -> the leftmost agent."""
    total, left = {}, {}
    for i, s in enumerate(card["slots"]):
        if s and "player" in s:
            total[s["player"]] = total.get(s["player"], 0) + s["value"]
            left.setdefault(s["player"], i)
    order = sorted((p for p in total if total[p] > 0), key=lambda p: (-total[p], left[p]))
    return (order + [None, None])[:2]


def test_book_example_england_9_beats_richelieu_3():
    # book p. 3: Richelieu 3 (3-2+2), England 9 (2+3+2+1+1); Red first (+3 prestige, +1 income),
    # Yellow second (+3 prestige, +3 money), the Cardinal goes back 2
    d = doc([agent("blue", 3), agent("red", -2), agent("yellow", 2)],
            [agent("yellow", 2), agent("red", 3), agent("red", 2), agent("blue", 1), agent("yellow", 1)],
            players={"red": tracks(5, 2, 1, 4), "yellow": tracks(8, 1, 0, 2), "blue": tracks(3, 3, 2, 0)},
            rfirst=[prestige(4)], rmove=2, faction="england",
            ffirst=[prestige(3), {"type": "income", "amount": 1}],
            fsecond=[prestige(3), {"type": "money", "amount": 3}], fmove=-2)
    out = R.resolve(d)
    assert out["winner"] == "england" and out["totals"] == {"richelieu": 3, "england": 9}
    assert (out["first"], out["second"]) == ("red", "yellow")
    assert out["players"]["red"] == tracks(8, 3, 1, 4)
    assert out["players"]["yellow"] == tracks(11, 1, 0, 5)
    assert out["players"]["blue"] == tracks(3, 3, 2, 0)
    assert out["cardinal"] == 5 and out["sheet"] == {"kind": "england", "to": "red"}


def test_equal_totals_go_to_the_cardinal_pieces_worth_three():
    # book a.: "In caso di pareggio, vince la Fazione del Cardinale"; Eminence and Queen worth 3
    out = R.resolve(doc([{"piece": "queen"}, agent("a", 1)], [{"piece": "eminence"}, agent("b", 1)]))
    assert out["totals"] == {"richelieu": 4, "habsburg": 4} and out["winner"] == "richelieu"
    assert out["first"] == "a" and out["second"] is None  # the Queen belongs to nobody


def test_three_way_tie_for_first_goes_leftmost_then_next_leftmost():
    # book b.: "In caso di pareggio, il bonus viene attribuito al giocatore ... più a sinistra"
    card = [agent("c", 2), agent("b", 1), agent("a", 2), agent("b", 1)]
    out = R.resolve(doc(card, [None, None]))
    assert (out["first"], out["second"]) == ("c", "b")  # all three 2: c leftmost (0), then b (1)
    assert [out["first"], out["second"]] == oracle_places({"slots": card})


def test_a_players_negative_agent_counts_for_leftmost_and_only_positive_totals_place():
    # book b.: "valore positivo totale"; a player whose -2 is leftmost still stands leftmost
    card = [agent("a", -2), agent("b", 3), agent("a", 3), agent("c", -2), agent("c", 2)]
    out = R.resolve(doc(card, [None]))
    assert out["first"] == "b" and out["second"] == "a"  # b 3 > a 1; c totals 0: no place
    card = [agent("b", 1), agent("a", -2), agent("a", 3)]
    out = R.resolve(doc(card, [None]))
    assert (out["first"], out["second"]) == ("b", "a")  # both 1: b's agent is further left
    out = R.resolve(doc([agent("a", -2), agent("b", -2), {"piece": "queen"}], [agent("c", -2), None]))
    assert out["winner"] == "richelieu" and out["first"] is None and out["sheet"]["to"] is None


AGENTS = st.builds(agent, st.sampled_from("abc"), st.sampled_from([-2, 1, 2, 3]))


@settings(max_examples=300)
@given(st.lists(AGENTS, min_size=1, max_size=5), st.lists(st.one_of(st.none(), AGENTS), min_size=1, max_size=5),
       st.booleans(), st.booleans())
def test_winner_and_places_match_the_book(rslots, fslots, queen, eminence):
    # the Cardinal's card is full (so the box resolves); the Queen/Eminence replace a slot when drawn
    if queen:
        rslots = [{"piece": "queen"}] + rslots[1:]
    if eminence:
        fslots = fslots[:-1] + [{"piece": "eminence"}]
    used = {}
    for s in rslots + fslots:
        if s and "player" in s:
            used[(s["player"], s["value"])] = used.get((s["player"], s["value"]), 0) + 1
    assume(all(n <= R.AGENT_SUPPLY[v] for (_, v), n in used.items()))
    d = doc(rslots, fslots)
    out = R.resolve(d)

    def total(slots):
        return sum(3 if "piece" in s else s["value"] for s in slots if s)

    rt, ft = total(rslots), total(fslots)
    assert out["totals"] == {"richelieu": rt, "habsburg": ft}
    assert out["winner"] == ("richelieu" if rt >= ft else "habsburg")
    won = d["richelieu_card"] if rt >= ft else d["faction_card"]
    assert [out["first"], out["second"]] == oracle_places(won)


def test_losers_get_nothing_and_the_card_goes_to_first():
    # book b.: "I giocatori non ricevono un bonus per contributi alla Fazione perdente"
    out = R.resolve(doc([agent("a", 3)], [agent("b", 2), agent("c", 2)], ffirst=[prestige(4)],
                        fsecond=[{"type": "money", "amount": 3}], rfirst=[prestige(9)]))
    assert out["winner"] == "habsburg" and out["players"]["a"] == tracks()
    assert out["players"]["b"]["prestige"] == 4 and out["players"]["c"]["money"] == 3
    assert out["sheet"] == {"kind": "habsburg", "to": "b"}


# -- the Cardinal -----------------------------------------------------------------------------

@pytest.mark.parametrize("start, move, first_prestige, reward, expected, why", [
    (7, 2, 0, 0, 9, "moves by the winning card's value"),
    (7, 2, 12, 0, 12, "Richelieu won and the Cardinal (9) is behind the first player (12): advances to 12"),
    (7, 2, 8, 3, 11, "rewards first: the first player's 8 + 3 = 11 is ahead of 9"),
    (7, -3, 5, 0, 5, "moves back to 4, then catches up with the first player at 5"),
    (2, -5, 0, 0, 0, "stops at the start of the track"),
    (28, 5, 0, 0, 29, "stops at the end of the track"),
    (7, 0, 33, 0, 7, "the first player's marker is on 3 (30+ tile): the Cardinal is not behind it"),
])
def test_cardinal_moves_then_catches_up_when_richelieu_wins(start, move, first_prestige, reward, expected, why):
    # book: "Muovete il Cardinale su o giù ... Se Richelieu vince l'Intrigo ed è dietro al giocatore che ha
    # totalizzato il valore positivo totale più alto, il Cardinale viene fatto avanzare alla stessa posizione"
    players = {"a": tracks(first_prestige), "b": tracks(25), "c": tracks()}
    out = R.resolve(doc([agent("a", 3), agent("b", 1)], [None], players=players, cardinal=start,
                        rfirst=[prestige(reward)] if reward else [], rmove=move))
    assert out["cardinal"] == expected, why


def test_no_catch_up_when_the_faction_wins():
    players = {"a": tracks(20), "b": tracks(), "c": tracks()}
    out = R.resolve(doc([None, agent("b", 1)], [agent("a", 3)], players=players, fmove=-2))
    assert out["winner"] == "habsburg" and out["cardinal"] == 5


# -- the 2-player game ------------------------------------------------------------------------

TWO = {"a": tracks(), "b": tracks()}


def test_neutral_first_forfeits_the_first_reward_and_the_card_second_still_paid():
    # book "Regole per 2 giocatori": "Se un giocatore neutrale vince un bonus ... nessun giocatore riceve i bonus"
    out = R.resolve(doc([agent("n", 2), agent("n", 1), agent("a", 2)], [None], players=copy.deepcopy(TWO),
                        neutral="n", rfirst=[prestige(5)], rsecond=[{"type": "money", "amount": 2}], rmove=1))
    assert out["first"] == "n" and out["second"] == "a"
    assert out["players"]["a"] == tracks(0, 1, 0, 2) and out["sheet"]["to"] is None
    assert out["forfeited"] == [{"place": "first", "rewards": [prestige(5)]}]
    assert out["cardinal"] == 8


def test_both_players_neutral_sets_may_stand_on_one_box():
    # audit fix: each player has a neutral set of 1x -2, 3x 1, 3x 2 ("Ogni giocatore riceve 7 Agenti"), and
    # a colour has only three 1s, so the neutral player has 2x -2, 6x 1, 6x 2 in all
    out = R.resolve(doc([agent("n", -2), agent("n", 1), agent("n", 1), agent("n", 1), agent("n", 1)],
                        [agent("n", -2), None], players=copy.deepcopy(TWO), neutral="n"))
    assert out["winner"] == "richelieu" and out["totals"]["habsburg"] == -2
    with pytest.raises(InputError) as err:
        R.resolve(doc([agent("n", -2), agent("n", -2), agent("n", -2)], [None], players=copy.deepcopy(TWO),
                      neutral="n"))
    assert err.value.field == "$.richelieu_card.slots[2].value"
    with pytest.raises(InputError):
        R.resolve(doc([agent("n", 3)], [None], players=copy.deepcopy(TWO), neutral="n"))


def test_a_player_has_two_agents_of_three_and_two_of_minus_two():
    # book "Componenti": 2x "-2", 3x "1", 3x "2" and 2x "3" per colour
    R.resolve(doc([agent("a", 3), agent("a", 3)], [agent("a", -2), agent("a", -2), None]))
    with pytest.raises(InputError) as err:
        R.resolve(doc([agent("a", 3), agent("a", 3)], [agent("a", 3), None]))
    assert err.value.field == "$.faction_card.slots[0].value"


# =============================================================================================
# End-game scoring (book p. 3-4 "Fine del gioco"; ruling "End-game")

def oracle_richelieu_bonus(counts):
    """Book b.: most (>= 1) 8, second most 4; tie for most: 4 each and no second; tie for second: 0."""
    out = []
    for c in counts:
        more = sum(1 for o in counts if o > c)
        same = sum(1 for o in counts if o == c) - 1
        if c == 0:
            out.append(0)
        elif more == 0:
            out.append(4 if same else 8)
        elif more == 1 and same == 0 and sum(1 for o in counts if o == max(counts)) == 1:
            out.append(4)
        else:
            out.append(0)
    return out


@settings(max_examples=300)
@given(st.lists(st.integers(0, 6), min_size=2, max_size=4))
def test_richelieu_bonus_ladder(counts):
    assert R.richelieu_bonus(counts) == oracle_richelieu_bonus(counts)


def row(name, prestige=0, income=1, military=0, money=0, jewels=0, **cards):
    return {"name": name, "prestige": prestige, "income": income, "military": military, "money": money,
            "jewels": jewels, "cards": cards}


def test_book_bonus_example_nicola_9_susanna_14_tommaso_5():
    res = R.score({"players": [row("Nicola", richelieu=3, england=1),
                               row("Susanna", richelieu=2, france=3, habsburg=1),
                               row("Tommaso", england=2, protestants=1)]})
    bonus = {r["player"]: r["breakdown"]["richelieu_sheets"] + sum(r["breakdown"]["opposing_sets"].values())
             for r in res["players"]}
    assert bonus == {"Nicola": 9, "Susanna": 14, "Tommaso": 5}


@pytest.mark.parametrize("n, points", [(0, 0), (1, 1), (2, 4), (3, 9), (4, 16)])
def test_opposing_sets(n, points):
    # book: "Una scheda ... 1 punto, due ... 4 punti, 3 schede ... 9 punti e (... Inghilterra) 4 schede ... 16"
    res = R.score({"players": [row("a", england=n), row("b")]})
    a = next(r for r in res["players"] if r["player"] == "a")
    assert a["breakdown"]["opposing_sets"]["england"] == points
    assert a["total"] == 1 + points


def test_total_and_winner_tie_breaks():
    # book: total = prestige + income + military + bonuses + 4 per jewel; ties: money, then intrigue sheets
    res = R.score({"players": [row("a", prestige=10, income=2, military=3, jewels=1, money=5),
                               row("b", prestige=12, income=3, military=0, money=5, france=1),
                               row("c", prestige=19, income=1, military=0, money=4),
                               row("d", prestige=12, income=3, military=0, money=5, habsburg=1)]})
    by = {r["player"]: r for r in res["players"]}
    assert [by[p]["total"] for p in "abcd"] == [19, 16, 20, 16]
    assert by["c"]["place"] == 1 and by["a"]["place"] == 2
    assert by["b"]["place"] == by["d"]["place"] == 3  # same total, money and sheets: shared
    res = R.score({"players": [row("a", prestige=10, money=3), row("b", prestige=10, money=4),
                               row("c", prestige=10, money=4, richelieu=1, income=0)]})
    # c: 10 + 0 + 8 (most Richelieu sheets) = 18; a and b 11: b has more money
    assert [(r["player"], r["place"]) for r in res["players"]] == [("c", 1), ("b", 2), ("a", 3)]
    assert res["winners"] == ["c"]


@pytest.mark.parametrize("players, path", [
    ([row("a", richelieu=7), row("b", richelieu=7)], "$.players[1].cards.richelieu"),
    ([row("a", england=3), row("b", england=2)], "$.players[1].cards.england"),
    ([row("a", france=2), row("b", france=2)], "$.players[1].cards.france"),
    ([row("a", habsburg=4), row("b")], "$.players[0].cards.habsburg"),
    ([row("a", protestants=2), row("b", protestants=1), row("c", protestants=1)], "$.players[2].cards.protestants"),
    ([row("a", jewels=4), row("b", jewels=3)], "$.players[1].jewels"),
    ([row("a", prestige=-1), row("b")], "$.players[0].prestige"),
    ([row("a", money=-5), row("b")], "$.players[0].money"),
    ([row("a"), row("a")], "$.players[1].name"),
])
def test_impossible_end_games_are_refused_naming_the_field(players, path):
    # ruling: more sheets than exist (13 Richelieu, England 4, the others 3) or negative values -> exit 2;
    # audit: more jewels than in play (book setup 6: 2 each and 2 in the city) too
    with pytest.raises(InputError) as err:
        R.score({"players": players})
    assert err.value.field == path


def test_sheet_limits_reached_exactly_are_fine():
    R.score({"players": [row("a", richelieu=7, england=4), row("b", richelieu=6, france=3, habsburg=3,
                                                                 protestants=3, jewels=4)]})


# =============================================================================================
# The match reducer: odd options, whole floats, the jewel limit of the city

def test_match_options_must_be_an_object():
    with pytest.raises(InputError) as err:
        R.initial_state(["a", "b"], "fast")
    assert err.value.field == "options"


def test_match_whole_float_delta_stays_an_integer():
    s = R.initial_state(["a", "b", "c"], {})
    s = R.apply(s, {"seq": 1, "type": "track.adjust", "data": {"player": "a", "track": "money", "delta": 3.0}})
    assert s["players"]["a"]["money"] == 3 and type(s["players"]["a"]["money"]) is int


def test_match_jewel_trades_once_a_turn_and_the_city_stock():
    s = R.initial_state(["a", "b", "c"], {"start_money": 30})
    s = R.apply(s, {"seq": 1, "type": "action", "data": {"player": "a", "action": "buy_jewel"}})
    assert s["city_jewels"] == 1
    with pytest.raises(RuleError):
        R.apply(s, {"seq": 2, "type": "action", "data": {"player": "a", "action": "sell_jewel"}})
    s = R.apply(s, {"seq": 2, "type": "turn.end", "data": {}})
    s = R.apply(s, {"seq": 3, "type": "action", "data": {"player": "b", "action": "buy_jewel"}})
    s = R.apply(s, {"seq": 4, "type": "turn.end", "data": {}})
    with pytest.raises(RuleError):  # the city is empty
        R.apply(s, {"seq": 5, "type": "action", "data": {"player": "c", "action": "buy_jewel"}})


# =============================================================================================
# Real processes: odd JSON -> exit 2 with one line naming the path, or exit 0 with integers

RESOLVE_OK = doc([agent("a", 2)], [None], rfirst=[prestige(2)], rmove=1)


@pytest.mark.parametrize("mutate, path", [
    (lambda d: d.update(cardinal=None), "$.cardinal"),
    (lambda d: d.update(cardinal=True), "$.cardinal"),
    (lambda d: d.update(cardinal=10 ** 40), "$.cardinal"),
    (lambda d: d.update(cardinal=6.5), "$.cardinal"),
    (lambda d: d.update(players={}), "$.players"),
    (lambda d: d["players"].update(a=None), "$.players.a"),
    (lambda d: d["richelieu_card"].update(slots=[{}]), "$.richelieu_card.slots[0]"),
    (lambda d: d["richelieu_card"]["slots"].__setitem__(0, agent("zoë😀", 2)), "$.richelieu_card.slots[0].player"),
    (lambda d: d["richelieu_card"]["slots"].__setitem__(0, agent("a", 0)), "$.richelieu_card.slots[0].value"),
    (lambda d: d["faction_card"].update(faction="spain"), "$.faction_card.faction"),
    (lambda d: d.update(neutral="n"), "$.neutral"),
    (lambda d: d.update(military_bonuses={"x": "income"}), "$.military_bonuses"),
])
def test_cli_resolve_refuses_odd_json_in_one_line(run_cli, mutate, path):
    d = copy.deepcopy(RESOLVE_OK)
    mutate(d)
    code, out, err = run_cli("richelieu", "resolve", "-", stdin=json.dumps(d, ensure_ascii=False))
    assert code == 2 and out == "" and "Traceback" not in err
    assert err.count("\n") == 1 and path in err, err


def test_cli_resolve_and_score_answer_integers_for_whole_floats(run_cli):
    d = copy.deepcopy(RESOLVE_OK)
    d["cardinal"] = 7.0
    d["players"]["a"]["prestige"] = 3.0
    d["richelieu_card"]["slots"][0]["value"] = 2.0
    code, out, err = run_cli("richelieu", "resolve", "-", stdin=json.dumps(d))
    assert code == 0, err
    res = json.loads(out)
    assert res["totals"] == {"richelieu": 2, "habsburg": 0} and res["players"]["a"]["prestige"] == 5
    assert "2.0" not in out and "5.0" not in out and "8.0" not in out
    code, out, err = run_cli("score", "richelieu", "-", stdin=json.dumps(
        {"players": [row("Zoë😀", prestige=1.0, jewels=1.0, richelieu=1.0), row("b")]}, ensure_ascii=False))
    assert code == 0, err
    res = json.loads(out)
    assert res["players"][0]["player"] == "Zoë😀" and res["players"][0]["total"] == 1 + 1 + 8 + 4
    assert ".0" not in out


@pytest.mark.parametrize("args, stdin, path", [
    (("score", "richelieu"), {"players": [row("a", jewels=5), row("b", jewels=2)]}, "$.players[1].jewels"),
    (("score", "richelieu"), {"players": [row("a", richelieu=14), row("b")]}, "$.players[0].cards.richelieu"),
    (("score", "richelieu"), {}, "$"),
    (("richelieu", "actions"), {"prestige": 0, "cardinal": 7, "income": 1, "military": 0, "money": 0,
                                "actions": [{"type": "place_agent", "space": 2}]}, "$.actions[0]"),
    (("richelieu", "actions"), {"prestige": 0, "cardinal": 7, "income": 1, "military": 0, "money": 9,
                                "actions": [{"type": "commission"}, {"type": "commission"}]}, "$.actions[1]"),
])
def test_cli_refusals_name_the_path(run_cli, args, stdin, path):
    code, out, err = run_cli(*args, "-", stdin=json.dumps(stdin))
    assert code == 2 and err.count("\n") == 1 and path in err, err
