"""conquest-italy as a match: the reducer through companion.core.match (set-up, reinforcements, combat with
server-rolled dice, moves, cards, secret objectives, elimination, end), its views and the season feed.
Every turn is played as the rules take it (docs/rulings.md, "Conquest: the turn"): clock.start, then the
seat's reinforcements, combats, at most one move, the card after a conquest, turn.end."""

import copy
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.base.errors import InputError, RuleError
from companion.games import conquest_italy as ci
from companion.games.conquest_map import default_map
from companion.core.match import fold

GM = default_map()
PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]
NOCLOCK = {"clock": False}


def ev(type_, **data):
    return {"type": type_, "data": data}


def apply_all(state, events):
    for e in events:
        state = ci.apply(state, e)
    return state


def dealt(players=PLAYERS, seed=1):
    owner, _ = ci.deal(players, GM, random.Random(seed))
    return ci.apply(ci.initial_state(players, {}), ev("setup.deal", owner=owner))


def placement_events(state):
    """The set-up placements: each player in turn puts 5 (or the rest) on their first city."""
    events = []
    while state["phase"] == "place":
        p = state["next_placer"]
        city = ci.held(state, p)[0]
        e = ev("setup.place", player=p, placements={city: min(5, state["reserve"][p])})
        events.append(e)
        state = ci.apply(state, e)
    return events, state


def started(players=PLAYERS, seed=1):
    return placement_events(dealt(players, seed))[1]


def with_cities(state, assignments):
    """Corrections: {city: (player, units)}."""
    for city, (player, units) in assignments.items():
        state = ci.apply(state, ev("territory.set", city=city, player=player, units=units))
    return state


def playing(state):
    """The clock starts: the first seat's turn."""
    return ci.apply(state, ev("clock.start"))


def reinforce(state, city=None):
    """The current player places exactly their reinforcements (on ``city``, default their first city)."""
    p = state["turn"]["player"]
    due = ci.reinforcements(GM, ci.held(state, p), ci.units_on_map(state, p))["placeable"]
    city = city or ci.held(state, p)[0]
    return ci.apply(state, ev("reinforce", player=p, placements={city: due} if due else {}))


def pass_turn(state):
    """The current player reinforces (if not yet) and ends the turn without fighting."""
    if state["turn"]["step"] == "reinforce":
        state = reinforce(state)
    return ci.apply(state, ev("turn.end", player=state["turn"]["player"]))


def turn_of(state, player):
    """Pass turns until it is ``player``'s."""
    while state["turn"]["player"] != player:
        state = pass_turn(state)
    return state


def with_hand(state, player, cards):
    """A test's starting hand (the cards a player earned in earlier turns)."""
    return {**state, "hands": {**state["hands"], player: list(cards)}}


# -- set-up --------------------------------------------------------------------------------------

@pytest.mark.parametrize("players", [["a", "b"], ["a"] * 0, [f"p{k}" for k in range(7)]])
def test_player_count(players):
    with pytest.raises(InputError) as err:
        ci.initial_state(players, {})
    assert err.value.field == "players"


def test_bad_map_option_names_the_path():
    with pytest.raises(InputError) as err:
        ci.initial_state(PLAYERS, {"map": {"regions": [{"name": "x", "bonus": 1, "cities": []}]}})
    assert err.value.field == "map.regions[0].cities"


def test_deal_puts_one_unit_everywhere_and_sets_the_reserves():
    s = dealt()
    assert s["phase"] == "place"
    assert set(s["owner"]) == set(GM.cities) and set(s["units"].values()) == {1}
    # the rule book's 4-player example: 20, 20, 19, 19 still to place
    assert s["reserve"] == {"Anna": 20, "Bruno": 20, "Carla": 19, "Dario": 19}
    assert s["next_placer"] == "Anna"


def test_placement_goes_five_at_a_time_in_turn_order():
    events, s = placement_events(dealt())
    order = [e["data"]["player"] for e in events]
    assert order[:8] == PLAYERS * 2
    assert [sum(e["data"]["placements"].values()) for e in events if e["data"]["player"] == "Carla"] == [5, 5, 5, 4]
    assert len(events) == 4 + 4 + 4 + 4  # 20 = 4 x 5; 19 = 3 x 5 + 4
    assert s["phase"] == "play"
    assert all(ci.units_on_map(s, p) == 30 for p in PLAYERS)


def test_placement_refusals():
    s = dealt()
    anna_city = ci.held(s, "Anna")[0]
    bruno_city = ci.held(s, "Bruno")[0]
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("setup.place", player="Bruno", placements={bruno_city: 5}))
    assert err.value.field == "player" and "Anna" in err.value.message
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("setup.place", player="Anna", placements={anna_city: 4}))
    assert err.value.field == "placements"
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("setup.place", player="Anna", placements={bruno_city: 5}))
    assert err.value.field.startswith("placements")
    with pytest.raises(InputError) as err:
        ci.apply(s, ev("setup.place", player="Anna", placements={anna_city: 0}))
    assert err.value.field.startswith("placements")
    # five may be split over several cities
    two = ci.held(s, "Anna")[:2]
    s2 = ci.apply(s, ev("setup.place", player="Anna", placements={two[0]: 2, two[1]: 3}))
    assert s2["units"][two[0]] == 3 and s2["units"][two[1]] == 4


def test_deal_refusals():
    s = ci.initial_state(PLAYERS, {})
    owner, _ = ci.deal(PLAYERS, GM, random.Random(3))
    with pytest.raises(RuleError):
        ci.apply(s, ev("setup.place", player="Anna", placements={}))
    bad = dict(owner)
    bad[next(c for c in bad if bad[c] == "Anna")] = "Dario"
    with pytest.raises(RuleError):
        ci.apply(s, ev("setup.deal", owner=bad))
    s2 = ci.apply(s, ev("setup.deal", owner=owner))
    with pytest.raises(RuleError) as err:
        ci.apply(s2, ev("setup.deal", owner=owner))
    assert err.value.field == "type"


def test_game_events_before_play_are_refused():
    s = dealt()
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("combat", **{"from": "Roma", "to": "Napoli", "attack_dice": [6], "defend_dice": [1]}))
    assert err.value.field == "type"


# -- reinforcements ------------------------------------------------------------------------------

def test_reinforce_places_exactly_what_is_due():
    s = turn_of(playing(started()), "Bruno")
    due = ci.reinforcements(GM, ci.held(s, "Bruno"), ci.units_on_map(s, "Bruno"))["placeable"]
    city = ci.held(s, "Bruno")[0]
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("reinforce", player="Bruno", placements={city: due + 1}))
    assert err.value.field == "placements" and str(due) in err.value.message
    s2 = ci.apply(s, ev("reinforce", player="Bruno", placements={city: due}))
    assert s2["units"][city] == s["units"][city] + due


def test_reinforce_with_a_traded_set_uses_the_hand():
    cards = ["Aosta", "Torino", "Cuneo"]  # basil, mozzarella, tomato
    s = with_hand(playing(started()), "Anna", cards + ["Bari"])
    held = ci.held(s, "Anna")
    value = ci.trade_value(cards, set(held), GM)["total"]
    due = len(held) // 3 + sum(r["bonus"] for r in GM.regions if set(r["cities"]) <= set(held)) + value
    with pytest.raises(RuleError) as err:  # only cards in the hand
        ci.apply(s, ev("reinforce", player="Anna", placements={held[0]: due}, trade=["Lecce", "Torino", "Cuneo"]))
    assert err.value.field == "trade[0]"
    s2 = ci.apply(s, ev("reinforce", player="Anna", placements={held[0]: due}, trade=cards))
    assert s2["hands"]["Anna"] == ["Bari"]
    assert s2["under"] == cards  # traded cards go back under the deck
    assert ci.units_on_map(s2, "Anna") == 30 + due
    with pytest.raises(RuleError) as err:  # the reinforcements come once a turn
        ci.apply(s2, ev("reinforce", player="Anna", placements={held[0]: due}, trade=cards))
    assert err.value.field == "type" and "once" in err.value.message


def test_a_card_is_drawn_once():
    s = reinforce(attack_setup())
    with pytest.raises(RuleError) as err:  # no conquest yet: no card
        ci.apply(s, ev("card.draw", player="Anna", card="joker:Roma"))
    assert err.value.field == "card" and "conquest" in err.value.message
    s = ci.apply(s, ev("combat", **{"from": "Roma", "to": "Pescara", "attack_dice": [6, 6, 6], "defend_dice": [1]}))
    s = ci.apply(s, ev("card.draw", player="Anna", card="joker:Roma"))
    assert s["hands"]["Anna"] == ["joker:Roma"]
    with pytest.raises(RuleError) as err:  # one card a turn
        ci.apply(s, ev("card.draw", player="Anna", card="Bari"))
    assert err.value.field == "card" and "one card a turn" in err.value.message
    with pytest.raises(RuleError) as err:  # not Bruno's turn
        ci.apply(s, ev("card.draw", player="Bruno", card="Bari"))
    assert err.value.field == "player"
    with pytest.raises(InputError):
        ci.apply(s, ev("card.draw", player="Bruno", card="joker:Bari"))
    # the card is drawn at the end of the turn: no more attacks or moves after it
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("move", **{"from": "Roma", "to": "Perugia", "units": 1}))
    assert err.value.field == "type" and "card" in err.value.message
    s = ci.apply(s, ev("turn.end", player="Anna", conquered=1))
    # Bruno conquers in his turn: a card in Anna's hand is not in the deck
    s = reinforce(s)
    src = next(c for c in ci.held(s, "Bruno") if s["units"][c] >= 2 and any(
        s["owner"][n] != "Bruno" for n in GM.neighbours[c]))
    dst = next(n for n in sorted(GM.neighbours[src]) if s["owner"][n] != "Bruno")
    s = with_cities(s, {dst: (s["owner"][dst], 1)})
    s = ci.apply(s, ev("combat", **{"from": src, "to": dst, "attack_dice": [6], "defend_dice": [1]}))
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("card.draw", player="Bruno", card="joker:Roma"))
    assert "in a player's hand" in err.value.message and "Anna" not in err.value.message  # whose is not said


def test_reinforcements_stop_at_125_units():
    s = turn_of(playing(started()), "Carla")
    city = ci.held(s, "Carla")[0]
    s = with_cities(s, {city: ("Carla", s["units"][city] + 123 - 30)})  # Carla now has 123 units on the map
    assert ci.units_on_map(s, "Carla") == 123
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("reinforce", player="Carla", placements={city: 3}))
    assert "125" in err.value.message
    s2 = ci.apply(s, ev("reinforce", player="Carla", placements={city: 2}))
    assert ci.units_on_map(s2, "Carla") == 125


# -- combat --------------------------------------------------------------------------------------

NAMED = {"Roma", "Napoli", "Pescara", "Milano", "Catanzaro", "Perugia", "Siena", "Bari"}


def attack_setup():
    """Anna's turn, before her reinforcements (``reinforce`` puts them away from the named cities)."""
    s = playing(started())
    return with_cities(s, {"Roma": ("Anna", 6), "Napoli": ("Bruno", 3), "Pescara": ("Bruno", 1),
                           "Milano": ("Anna", 4), "Catanzaro": ("Carla", 2), "Perugia": ("Anna", 1)})


def fighting():
    """Anna's turn after her reinforcements: the combats may begin."""
    s = attack_setup()
    return reinforce(s, next(c for c in ci.held(s, "Anna") if c not in NAMED))


def test_rule_book_combat_as_an_event():
    s = fighting()
    s2 = ci.apply(s, ev("combat", **{"from": "Roma", "to": "Napoli", "attack_dice": [5, 3, 1],
                                     "defend_dice": [6, 2, 1]}))
    assert s2["units"]["Roma"] == 4 and s2["units"]["Napoli"] == 2
    assert s2["owner"]["Napoli"] == "Bruno"
    assert s2["last_combat"]["attacker_losses"] == 2 and s2["last_combat"]["via"] == "land"
    assert s["units"]["Roma"] == 6  # the input state is untouched


def test_conquest_moves_units_in():
    s = fighting()
    s2 = ci.apply(s, ev("combat", **{"from": "Roma", "to": "Pescara", "attack_dice": [6, 1, 1],
                                     "defend_dice": [5]}))
    assert s2["owner"]["Pescara"] == "Anna"
    assert s2["units"]["Pescara"] == 3 and s2["units"]["Roma"] == 3  # default: as many as the dice
    assert s2["conquests"]["Anna"] == 1 and s2["last_combat"]["moved"] == 3
    s3 = ci.apply(s, ev("combat", **{"from": "Roma", "to": "Pescara", "attack_dice": [6], "defend_dice": [5],
                                     "move": 5}))
    assert s3["units"]["Pescara"] == 5 and s3["units"]["Roma"] == 1
    s4 = ci.apply(s, ev("combat", **{"from": "Roma", "to": "Pescara", "attack_dice": [6], "defend_dice": [5],
                                     "move": 99}))
    assert s4["units"]["Pescara"] == 5 and s4["units"]["Roma"] == 1  # clamped: one unit stays


def test_air_attack_between_airports():
    s = fighting()
    s2 = ci.apply(s, ev("combat", **{"from": "Milano", "to": "Catanzaro", "attack_dice": [6, 6, 6],
                                     "defend_dice": [1, 1]}))
    assert s2["owner"]["Catanzaro"] == "Anna" and s2["last_combat"]["via"] == "air"


@pytest.mark.parametrize("data, error, field", [
    ({"from": "Roma", "to": "Bari", "attack_dice": [6], "defend_dice": [1]}, RuleError, "to"),  # no border
    ({"from": "Roma", "to": "Perugia", "attack_dice": [6], "defend_dice": [1]}, RuleError, "to"),  # own city
    ({"from": "Perugia", "to": "Siena", "attack_dice": [6], "defend_dice": [1]}, RuleError, "from"),  # 1 unit
    ({"from": "Roma", "to": "Napoli", "attack_dice": [6, 5, 4], "defend_dice": [1, 1]}, RuleError, "defend_dice"),
    ({"from": "Milano", "to": "Catanzaro", "attack_dice": [6, 5, 4], "defend_dice": [1]}, RuleError, "defend_dice"),
    ({"from": "Catanzaro", "to": "Milano", "attack_dice": [6, 5], "defend_dice": [1, 1, 1]}, RuleError,
     "from"),  # Carla's city in Anna's turn
    ({"from": "Milano", "to": "Catanzaro", "attack_dice": [6, 5, 4, 1], "defend_dice": [1, 1]}, InputError,
     "attack_dice"),
    ({"from": "Roma", "to": "Napoli", "attack_dice": "6", "defend_dice": [1, 1, 1]}, InputError, "attack_dice"),
    ({"from": "Roma", "to": "Napoli", "attack_dice": [6, 5, 4, 3], "defend_dice": [1, 1, 1]}, InputError,
     "attack_dice"),
    ({"from": "Roma", "to": "Napoli", "attack_dice": [6, 9], "defend_dice": [1, 1, 1]}, InputError,
     "attack_dice[1]"),
    ({"from": "Roma", "to": "Napoli", "defend_dice": [1, 1, 1]}, InputError, "attack_dice"),
    ({"from": "Roma", "to": "Atlantide", "attack_dice": [6], "defend_dice": [1]}, InputError, "to"),
    ({"from": "Roma", "to": "Napoli", "attack_dice": [6], "defend_dice": [1, 1, 1], "move": 0}, InputError, "move"),
    ({"from": "Roma", "to": "Napoli", "player": "Bruno", "attack_dice": [6], "defend_dice": [1, 1, 1]}, RuleError,
     "from"),
])
def test_combat_refusals_name_the_field(data, error, field):
    s = fighting()
    with pytest.raises(error) as err:
        ci.apply(s, ev("combat", **data))
    assert err.value.field == field


def test_server_rolls_the_dice_into_the_event():
    s = fighting()
    data = ci.fill_dice(s, {"from": "Roma", "to": "Napoli"}, random.Random(7))
    assert len(data["attack_dice"]) == 3 and len(data["defend_dice"]) == 3
    assert data == ci.fill_dice(s, {"from": "Roma", "to": "Napoli"}, random.Random(7))
    s2 = ci.apply(s, ev("combat", **data))
    assert s2["units"]["Roma"] + s2["units"]["Napoli"] == 9 - 3
    two = ci.fill_dice(s, {"from": "Roma", "to": "Napoli", "dice": 2}, random.Random(1))
    assert len(two["attack_dice"]) == 2 and "dice" not in two
    with pytest.raises(RuleError):  # a refused attack rolls nothing
        ci.fill_dice(s, {"from": "Roma", "to": "Bari"}, random.Random(1))
    with pytest.raises(RuleError) as err:  # Roma's 6 units roll 3 dice at most
        ci.fill_dice(s, {"from": "Roma", "to": "Napoli", "dice": 4}, random.Random(1))
    assert err.value.field == "dice"
    with pytest.raises(RuleError) as err:  # Catanzaro is Carla's, and it is Anna's turn: nothing is rolled
        ci.fill_dice(s, {"from": "Catanzaro", "to": "Milano"}, random.Random(1))
    assert err.value.field == "from" and "Anna's turn" in err.value.message
    with pytest.raises(InputError) as err:
        ci.fill_dice(s, {"from": "Roma", "to": "Napoli", "attack_dice": [0]}, random.Random(1))
    assert err.value.field == "attack_dice[0]"


def test_move_between_own_bordering_cities():
    s = fighting()
    s2 = ci.apply(s, ev("move", **{"from": "Roma", "to": "Perugia", "units": 5}))
    assert s2["units"]["Roma"] == 1 and s2["units"]["Perugia"] == 6
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("move", **{"from": "Roma", "to": "Perugia", "units": 6}))
    assert err.value.field == "units"
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("move", **{"from": "Roma", "to": "Napoli", "units": 1}))
    assert err.value.field == "to"
    with pytest.raises(RuleError) as err:  # airports are for attacks only
        ci.apply(s, ev("move", **{"from": "Milano", "to": "Roma", "units": 1}))
    assert err.value.field == "to"


# -- elimination and the end ----------------------------------------------------------------------

def eliminate_dario(s):
    """In Anna's turn: give Dario's cities to Carla except one, then Anna conquers it from a neighbour."""
    dario = ci.held(s, "Dario")
    last = dario[0]
    s = with_cities(s, {c: ("Carla", 1) for c in dario[1:]})
    src = sorted(GM.land[last])[0]
    s = with_cities(s, {src: ("Anna", 10), last: ("Dario", 1)})
    s = reinforce(with_hand(s, "Dario", ["joker:Milano"]), src)
    return ci.apply(s, ev("combat", **{"from": src, "to": last, "attack_dice": [6, 6, 6], "defend_dice": [1]}))


def test_losing_the_last_city_eliminates():
    s = eliminate_dario(playing(started()))
    assert s["eliminated"] == ["Dario"]
    assert s["hands"]["Dario"] == [] and s["hands"]["Anna"] == ["joker:Milano"]  # the cards go to the conqueror
    assert not ci.is_ended(s)
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("card.draw", player="Dario", card="Bari"))
    assert "eliminated" in err.value.message
    # the turn order skips Dario's seat from now on
    s = ci.apply(s, ev("turn.end", player="Anna", card="Bari"))
    s = pass_turn(pass_turn(s))
    assert s["turn"]["player"] == "Anna" and ci.out_of_turn(s) == ["Dario"]
    ranking = ci.final_ranking(s)
    assert ranking[-1]["player"] == "Dario" and ranking[-1]["eliminated"]
    assert all(not r["eliminated"] for r in ranking[:-1])


def test_last_player_standing_ends_the_match():
    s = started()
    for p in ("Bruno", "Carla", "Dario"):
        s = with_cities(s, {c: ("Anna", 1) for c in ci.held(s, p)})
    assert s["eliminated"] == ["Bruno", "Carla", "Dario"]
    assert ci.is_ended(s)
    with pytest.raises(RuleError):
        ci.apply(s, ev("card.draw", player="Anna", card="Bari"))


def test_objective_completed_checks_the_cities_and_ends():
    s = started()
    s = ci.apply(s, ev("objective.set", player="Bruno", cities=["Bari", "Lecce"]))
    s = with_cities(s, {"Bari": ("Bruno", 2), "Lecce": ("Carla", 2)})
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("objective.completed", player="Bruno"))
    assert "Lecce" in err.value.message
    s = with_cities(s, {"Lecce": ("Bruno", 2)})
    s = ci.apply(s, ev("objective.completed", player="Bruno"))
    assert ci.is_ended(s)
    ranking = ci.final_ranking(s)
    assert ranking[0]["player"] == "Bruno" and ranking[0]["place"] == 1 and ranking[0]["objective"]
    assert all(r["place"] > 1 for r in ranking[1:])
    with pytest.raises(RuleError):
        ci.apply(s, ev("move", **{"from": "Bari", "to": "Lecce", "units": 1}))


def test_objective_is_set_once():
    s = started()
    s = ci.apply(s, ev("objective.set", player="Anna", cities=["Roma"]))
    with pytest.raises(RuleError):
        ci.apply(s, ev("objective.set", player="Anna", cities=["Bari"]))
    with pytest.raises(InputError) as err:
        ci.apply(s, ev("objective.set", player="Bruno", cities=["Roma", "Roma"]))
    assert err.value.field == "cities[1]"


# -- views ---------------------------------------------------------------------------------------

def test_public_view_hides_the_other_objectives():
    s = started()
    s = ci.apply(s, ev("objective.set", player="Anna", cities=["Roma", "Bari"]))
    s = ci.apply(s, ev("objective.set", player="Bruno", cities=["Milano"]))
    s = with_cities(s, {"Roma": ("Anna", 2), "Bari": ("Carla", 2)})
    anna = ci.public_view(s, "Anna")
    assert anna["objectives"] == {"Anna": ["Roma", "Bari"]}
    assert anna["objective_progress"] == {"cities": ["Roma", "Bari"], "held": ["Roma"],
                                          "points": GM.value("Roma"), "complete": False}
    assert ci.public_view(s, "Carla")["objectives"] == {}
    assert ci.public_view(s, None)["objectives"] == {}
    assert "Milano" not in repr(ci.public_view(s, "Anna")["objectives"])
    assert s["objectives"]["Bruno"] == ["Milano"]  # the state itself is untouched
    summary = ci.summary(s)
    assert "objectives" not in summary and "Bari" not in repr([p for p in summary["players"]])


def test_objectives_are_turned_face_up_at_the_end():
    s = started()
    s = ci.apply(s, ev("objective.set", player="Anna", cities=["Roma"]))
    s = ci.apply(s, ev("objective.set", player="Bruno", cities=["Milano"]))
    s = with_cities(s, {"Roma": ("Anna", 2)})
    s = ci.apply(s, ev("objective.completed", player="Anna"))
    assert ci.public_view(s, "Carla")["objectives"] == {"Anna": ["Roma"], "Bruno": ["Milano"]}
    assert ci.summary(s)["ranking"]["ranking"][0] == "Anna"
    # each phone keeps its own objective's progress after the end (its page shows it)
    assert ci.public_view(s, "Anna")["objective_progress"]["complete"] is True
    assert ci.public_view(s, "Bruno")["objective_progress"]["cities"] == ["Milano"]
    assert "objective_progress" not in ci.public_view(s, "Carla")


def test_summary_during_set_up_and_play():
    s = dealt()
    sm = ci.summary(s)
    assert sm["phase"] == "place" and sm["next_placer"] == "Anna" and sm["placement_due"] == 5
    s = started()
    sm = ci.summary(s)
    assert sm["phase"] == "play" and sm["next_placer"] is None and not sm["ended"]
    row = sm["players"][0]
    assert row["territories"] == 10 and row["units"] == 30 and row["reinforcements"] == 3 + sum(
        GM.region[r]["bonus"] for r in row["regions"])


# -- through the match machinery -------------------------------------------------------------------

def test_fold_with_undo():
    owner, _ = ci.deal(PLAYERS, GM, random.Random(2))
    events = [ev("setup.deal", owner=owner)]
    f = fold("conquest-italy", PLAYERS, events, NOCLOCK)
    p = f.game_state["next_placer"]
    f.apply(ev("setup.place", player=p, placements={ci.held(f.game_state, p)[0]: 5}))
    assert f.game_state["reserve"][p] == 15
    f.apply({"type": "undo", "data": {}})
    assert f.game_state["reserve"][p] == 20
    view = f.view()
    assert view["summary"]["phase"] == "place"


def test_a_finished_match_feeds_the_season(store):
    from companion.services.matches import MatchService
    from companion.services.seasons import results_from_fold

    svc = MatchService(store)
    m = svc.create("conquest-italy", PLAYERS)
    owner, _ = ci.deal(PLAYERS, GM, random.Random(4))
    svc.append(m["id"], "setup.deal", {"owner": owner})
    s = svc.fold(m["id"]).game_state
    for e in placement_events(s)[0]:
        svc.append(m["id"], e["type"], e["data"])
    svc.append(m["id"], "clock.start", {})
    state = svc.fold(m["id"]).game_state
    city = ci.held(state, "Carla")[0]
    svc.append(m["id"], "objective.set", {"player": "Carla", "cities": [city]})
    svc.append(m["id"], "objective.set", {"player": "Anna", "cities": [city]})
    with pytest.raises(RuleError):  # the game refuses a false claim, so the clock never ends the match
        svc.append(m["id"], "objective.completed", {"player": "Anna"})
    assert not svc.fold(m["id"]).ended()
    svc.append(m["id"], "objective.completed", {"player": "Carla"})
    f = svc.fold(m["id"])
    assert f.ended()
    results = results_from_fold(f)
    assert results[0] == {"player": "Carla", "place": 1, "objective": True, "eliminated": False}
    assert sorted(r["player"] for r in results) == sorted(PLAYERS)


# -- purity and invariants -------------------------------------------------------------------------

def random_event(state, rng):
    """A plausible event, legal or not (mostly by the player whose turn it is)."""
    cities = GM.cities
    kind = rng.choice(["combat", "combat", "combat", "move", "reinforce", "card.draw", "territory.set", "turn.end"])
    p = state["turn"]["player"] if rng.random() < 0.8 else rng.choice(state["players"])
    if kind == "turn.end":
        return ev("turn.end", **ci.fill_turn_end(state, {"player": p}, rng))
    if kind == "combat":
        legal = [(a, b) for a in cities for b in sorted(GM.neighbours[a]) + list(GM.airports)
                 if _legal_attack(state, a, b)]
        if legal and rng.random() < 0.85:
            src, dst = rng.choice(legal)
            data = {"from": src, "to": dst}
            if rng.random() < 0.3:
                data["move"] = rng.randint(1, 6)
            try:
                return ev("combat", **ci.fill_dice(state, data, rng))
            except RuleError:  # not this player's turn, or not at this step: refused before any roll
                return ev("combat", **{**data, "attack_dice": [6], "defend_dice": [1]})
        src = rng.choice(cities)
        return ev("combat", **{"from": src, "to": rng.choice(sorted(GM.neighbours[src])), "attack_dice": [6],
                               "defend_dice": [1]})
    if kind == "move":
        legal = [(a, b) for a in cities for b in sorted(GM.neighbours[a])
                 if state["owner"][a] == state["owner"][b] and state["units"][a] >= 2]
        if legal and rng.random() < 0.8:
            src, dst = rng.choice(legal)
            return ev("move", **{"from": src, "to": dst, "units": rng.randint(1, state["units"][src] - 1)})
        src = rng.choice(cities)
        return ev("move", **{"from": src, "to": rng.choice(sorted(GM.neighbours[src])), "units": rng.randint(1, 4)})
    if kind == "reinforce":
        mine = ci.held(state, p)
        due = ci.reinforcements(GM, mine, ci.units_on_map(state, p))["placeable"] if mine else 0
        return ev("reinforce", player=p, placements={mine[0]: due} if mine and due else {})
    if kind == "card.draw":
        return ev("card.draw", player=p, card=rng.choice(GM.cards))
    return ev("territory.set", city=rng.choice(cities), player=p, units=rng.randint(1, 5))


def _legal_attack(state, src, dst):
    return (state["owner"][src] != state["owner"][dst] and GM.can_attack(src, dst) is not None
            and state["units"][src] >= 2)


@settings(max_examples=40)
@given(st.integers(0, 10**9))
def test_random_matches_keep_the_invariants_and_never_mutate(seed):
    rng = random.Random(seed)
    s = playing(started(seed=seed % 97))
    for _ in range(80):
        if ci.is_ended(s):
            break
        e = random_event(s, rng)
        before = copy.deepcopy(s)
        try:
            s2 = ci.apply(s, e)
        except (RuleError, InputError):
            assert s == before
            continue
        assert s == before  # apply never mutates its input
        assert set(s2["owner"]) == set(GM.cities)
        assert all(n >= 1 for n in s2["units"].values())
        if e["type"] == "combat" and s2["last_combat"] is not s["last_combat"]:
            lc = s2["last_combat"]
            lost = lc["attacker_losses"] + lc["defender_losses"]
            assert sum(s2["units"].values()) == sum(s["units"].values()) - lost
        if e["type"] == "move":
            assert sum(s2["units"].values()) == sum(s["units"].values())
        for p in s2["players"]:
            assert (p in s2["eliminated"]) == (not ci.held(s2, p))
        cards = [c for h in s2["hands"].values() for c in h]
        assert len(cards) == len(set(cards))
        if e["type"] in ci.TURN_EVENT_TYPES:  # a turn's event is its player's
            assert e["data"].get("player", s["owner"].get(e["data"].get("from"))) == s["turn"]["player"]
        if e["type"] == "turn.end":
            assert s2["turn_conquests"] == 0 and s2["turn"]["player"] not in s2["eliminated"]
        s = s2


# -- the events schema and the reducer agree ----------------------------------------------------------

def _event_examples(kind):
    from companion.base.resources import schemas_dir

    folder = schemas_dir() / "examples" / "conquest-italy.events"
    return sorted((folder / "invalid" if kind == "invalid" else folder).glob("*.json"))


@pytest.mark.parametrize("path", _event_examples("valid"), ids=lambda p: p.name)
def test_valid_event_examples_are_well_formed_for_the_reducer(path):
    import json

    e = json.loads(path.read_text())
    try:
        ci.apply(fighting(), e)
    except RuleError:
        pass  # the rules may refuse it in this match; the shape is fine


@pytest.mark.parametrize("path", _event_examples("invalid"), ids=lambda p: p.name)
def test_invalid_event_examples_are_malformed_for_the_reducer(path):
    import json

    e = json.loads(path.read_text())
    for state in (dealt(), attack_setup()):
        with pytest.raises(InputError):
            ci.apply(state, e)


def test_objective_completed_without_territory_tracking_is_taken_on_the_table_s_word():
    s = ci.initial_state(PLAYERS, {})
    assert s["phase"] == "deal"
    s = ci.apply(s, ev("objective.completed", player=PLAYERS[1]))
    assert ci.is_ended(s) and s["objective_completed"] == PLAYERS[1]
    with pytest.raises(InputError):
        ci.apply(ci.initial_state(PLAYERS, {}), ev("objective.completed", player="nobody"))


# -- the turn (docs/rulings.md, "Conquest: the turn") -----------------------------------------------------

def test_the_turn_s_steps_and_what_each_allows():
    s = started()
    with pytest.raises(RuleError) as err:  # before clock.start nobody's turn has begun
        ci.apply(s, ev("reinforce", player="Anna", placements={}))
    assert err.value.field == "type" and "when the clock starts" in err.value.message
    assert ci.current_turn(s) is None
    s = playing(s)
    assert ci.current_turn(s) == {"player": "Anna", "step": "reinforce", "conquests": 0, "card": None,
                                  "card_owed": False, "actions": ["reinforce"]}
    s = fighting()
    assert ci.current_turn(s)["actions"] == ["combat", "move", "turn.end"]
    s = ci.apply(s, ev("combat", **{"from": "Roma", "to": "Pescara", "attack_dice": [6], "defend_dice": [1]}))
    s = ci.apply(s, ev("combat", **{"from": "Milano", "to": "Catanzaro", "attack_dice": [6, 6, 6],
                                     "defend_dice": [1, 1]}))
    assert ci.conquests_this_turn(s, "Anna") == 2 and ci.conquests_this_turn(s, "Bruno") == 0
    assert ci.current_turn(s)["actions"] == ["combat", "move", "card.draw", "turn.end"]
    s = ci.apply(s, ev("move", **{"from": "Roma", "to": "Perugia", "units": 1}))
    assert ci.current_turn(s)["actions"] == ["card.draw", "turn.end"]
    # conquered must agree with the count; "2 or more" agrees with any count of 2 or more
    for claim in (0, 1):
        with pytest.raises(RuleError) as err:
            ci.apply(s, ev("turn.end", player="Anna", conquered=claim, card="Bari"))
        assert err.value.field == "conquered" and "conquered 2" in err.value.message
    s2 = ci.apply(s, ev("turn.end", player="Anna", conquered=3, card="Bari"))
    assert s2["turn"] == {"player": "Bruno", "step": "reinforce", "card": None} and s2["turn_conquests"] == 0
    assert s2["hands"]["Anna"] == ["Bari"] and s2["conquests"]["Anna"] == 2


def test_the_box_fills_the_turn_end():
    s = fighting()
    assert ci.fill_turn_end(s, {"player": "Anna"}, random.Random(1)) == {"player": "Anna", "conquered": 0}
    s = ci.apply(s, ev("combat", **{"from": "Roma", "to": "Pescara", "attack_dice": [6], "defend_dice": [1]}))
    data = ci.fill_turn_end(s, {"player": "Anna"}, random.Random(1))
    assert data["conquered"] == 1 and data["card"] in GM.cards
    assert data == ci.fill_turn_end(s, {"player": "Anna"}, random.Random(1))  # the rng decides
    assert ci.fill_turn_end(s, {"player": "Anna", "card": "Bari"})["card"] == "Bari"  # recorded at the table
    assert ci.apply(s, ev("turn.end", **data))["hands"]["Anna"] == [data["card"]]


def test_a_correction_that_puts_the_current_player_out_passes_the_turn():
    s = fighting()
    s = with_cities(s, {c: ("Bruno", 1) for c in ci.held(s, "Anna")})
    assert s["eliminated"] == ["Anna"] and s["turn"]["player"] == "Bruno"
    assert s["turn"]["step"] == "reinforce" and ci.out_of_turn(s) == ["Anna"]


def test_the_clock_ending_the_match_ends_the_game():
    s = fighting()
    s2 = ci.end_by_clock(s, {"reason": "final-roll", "player": "Bruno"})
    assert ci.is_ended(s2) and not ci.is_ended(s)
    sm = ci.summary(s2)
    assert sm["ended"] and sm["ended_by"] == {"reason": "final-roll", "player": "Bruno"} and sm["turn"] is None
    # the summary's ranking is final_score (points and cities too); final_ranking is its one-shape results
    assert sm["ranking"] == ci.final_score(s2)
    assert sm["ranking"]["results"] == ci.final_ranking(s2)
    assert [{k: r[k] for k in ("player", "place", "objective", "eliminated")}
            for r in sm["ranking"]["players"]] == ci.final_ranking(s2)
    assert ci.end_by_clock(s2, {"reason": "x", "player": None}) is s2


def test_clock_start_waits_for_the_set_up_unless_overridden():
    s = dealt()
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("clock.start"))
    assert err.value.field == "type" and "on purpose" in err.value.message
    with pytest.raises(InputError) as err:
        ci.apply(s, ev("clock.start", override="yes"))
    assert err.value.field == "override"
    s2 = ci.apply(s, ev("clock.start", override=True))
    assert s2["phase"] == "play" and s2["override"] and s2["turn"]["player"] == "Anna"
    with pytest.raises(RuleError):
        ci.apply(s2, ev("clock.start"))
    # a table that records no deal keeps only the clock: it starts freely, and a deal after it is refused
    s3 = ci.apply(ci.initial_state(PLAYERS, {}), ev("clock.start"))
    assert s3["started"] and s3["turn"] is None
    assert ci.apply(s3, ev("turn.end", player="Dario")) == s3  # not tracked: the clock keeps the turns
    owner, _ = ci.deal(PLAYERS, GM, random.Random(1))
    with pytest.raises(RuleError) as err:
        ci.apply(s3, ev("setup.deal", owner=owner))
    assert "before the clock starts" in err.value.message


# -- a turn with nothing to place (docs/rulings.md#conquest-the-turn) -------------------------------------

def _anna_holds_two():
    """Anna's turn before her reinforcements, holding only Roma (6) and Milano (4): 2 cities and no region,
    so nothing is due."""
    s = attack_setup()
    for c in ci.held(s, "Anna"):
        if c not in ("Roma", "Milano"):
            s = with_cities(s, {c: ("Bruno", 1)})
    assert sorted(ci.held(s, "Anna")) == ["Milano", "Roma"] and s["turn"]["step"] == "reinforce"
    return s


def test_with_nothing_to_place_the_turn_goes_straight_to_the_combats():
    s = _anna_holds_two()
    turn = ci.current_turn(s)
    assert {"combat", "move", "turn.end"} <= set(turn["actions"])
    s2 = ci.apply(s, ev("combat", **{"from": "Roma", "to": "Napoli", "attack_dice": [6, 6, 6],
                                     "defend_dice": [1, 1, 1]}))
    assert s2["turn"]["step"] == "attack" and s2["owner"]["Napoli"] == "Anna"
    assert s["turn"]["step"] == "reinforce"  # the input state is untouched
    with pytest.raises(RuleError):  # the reinforcement is over: no second one
        ci.apply(s2, ev("reinforce", player="Anna", placements={}))
    # the server's dice are filled in without the empty reinforcement too
    filled = ci.fill_dice(s, {"from": "Roma", "to": "Napoli"}, random.Random(1))
    assert len(filled["attack_dice"]) == 3 and s["turn"]["step"] == "reinforce"


def test_at_the_125_cap_the_turn_goes_straight_to_the_combats():
    s = fighting()
    s = turn_of(ci.apply(s, ev("turn.end", player="Anna")), "Anna")
    city = next(c for c in ci.held(s, "Anna") if c not in NAMED)
    s = with_cities(s, {city: ("Anna", s["units"][city] + 125 - ci.units_on_map(s, "Anna"))})
    assert ci.units_on_map(s, "Anna") == 125 and s["turn"]["step"] == "reinforce"
    assert "combat" in ci.current_turn(s)["actions"]
    src, dst = next((c, n) for c in ci.held(s, "Anna") if s["units"][c] >= 2
                    for n in sorted(GM.neighbours[c]) if s["owner"][n] != "Anna")
    ci.apply(s, ev("combat", **{"from": src, "to": dst, "attack_dice": [6], "defend_dice": [1]}))


def test_with_units_due_a_combat_still_waits_for_the_reinforcement():
    s = attack_setup()
    assert "combat" not in ci.current_turn(s)["actions"]
    with pytest.raises(RuleError) as err:
        ci.apply(s, ev("combat", **{"from": "Roma", "to": "Napoli", "attack_dice": [6], "defend_dice": [1]}))
    assert "reinforces first" in err.value.message
