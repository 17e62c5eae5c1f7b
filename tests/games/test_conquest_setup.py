"""The conquest set-up "by the cards" (docs/rulings.md#set-up-and-the-deal): the Pi deals, or the table types
the cards it dealt and the Pi fixes the majority rule with the book's random remedy (the ``deal`` action);
then the units go 5 at a time. Properties over random decks and seeds: every city dealt once, nobody over
half of a region, the deal's counts kept, every unit placed."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.base.errors import InputError, RuleError
from companion.games import conquest_italy as ci

GM = ci.map_of(None)
NAMES = ["Anna", "Bruno", "Carla", "Dario", "Elio", "Fede"]


def table_deal(players, seed):
    """The real cards dealt at the table (shuffled, one each from the last player backwards): the majority
    rule is not fixed yet."""
    deck = list(GM.cities)
    random.Random(seed).shuffle(deck)
    order = list(reversed(players))
    return {c: order[n % len(order)] for n, c in enumerate(deck)}


def act_deal(state, players, data, seed):
    return ci.ACTIONS["deal"][1](state, players, data, random.Random(seed), lambda: [])


def counts(owner, players):
    return {p: sum(1 for q in owner.values() if q == p) for p in players}


@given(st.integers(3, 6), st.integers(0, 10**9), st.integers(0, 10**9), st.booleans())
def test_a_deal_by_the_cards_or_by_the_pi_is_legal(n, deck_seed, rng_seed, typed):
    players = NAMES[:n]
    state = ci.initial_state(players, {})
    typed_owner = table_deal(players, deck_seed) if typed else None
    data, extra = act_deal(state, players, {"owner": typed_owner} if typed else {}, rng_seed)
    owner = data["owner"]
    assert sorted(owner) == sorted(GM.cities)  # every city dealt, once
    assert ci.deal_violations(owner, GM) == []  # nobody holds more than half of a region
    assert counts(owner, players) == ci.deal_counts(players, len(GM.cities))
    assert data.get("swaps", []) == (extra["swaps"] if typed else [])
    if typed:
        # only the swapped cards changed hands, each swap an exchange between two players
        changed = {c for c in GM.cities if owner[c] != typed_owner[c]}
        assert changed <= {c for sw in extra["swaps"] for c in (sw["gives"], sw["gets"])}
        if not ci.deal_violations(typed_owner, GM):
            assert owner == typed_owner and extra["swaps"] == []
    # the reducer takes the completed event; then 5 at a time until every unit is on the map
    s = ci.apply(state, {"type": "setup.deal", "data": data})
    rng = random.Random(rng_seed)
    rounds = 0
    while s["phase"] == "place":
        p = s["next_placer"]
        due = min(ci.PLACE_STEP, s["reserve"][p])
        mine = ci.held(s, p)
        placements = {}
        while sum(placements.values()) < due:  # one tap per unit, or the rest on one city
            c = mine[rng.randint(0, len(mine) - 1)]
            placements[c] = placements.get(c, 0) + (1 if rng.randint(0, 1) else due - sum(placements.values()))
        s = ci.apply(s, {"type": "setup.place", "data": {"player": p, "placements": placements}})
        rounds += 1
    start = ci.STARTING_UNITS[n]
    assert all(ci.units_on_map(s, p) == start for p in players)
    assert sum(s["units"].values()) == start * n
    want = ci.deal_counts(players, len(GM.cities))
    assert rounds == sum(-(-(start - want[p]) // ci.PLACE_STEP) for p in players)


def test_the_book_example_of_four_players_places_in_16_rounds():
    players = NAMES[:4]
    data, _ = act_deal(ci.initial_state(players, {}), players, {}, 3)
    s = ci.apply(ci.initial_state(players, {}), {"type": "setup.deal", "data": data})
    assert s["reserve"] == {"Anna": 20, "Bruno": 20, "Carla": 19, "Dario": 19}  # 4 + 4 + 4 + 4 rounds


def test_a_typed_deal_breaking_the_majority_rule_is_fixed_with_swaps():
    players = NAMES[:3]
    region = next(r for r in GM.regions if r["name"] == "Sicilia e Calabria")["cities"]
    # a table whose cards gave Anna the whole of Sicilia e Calabria (5 cities: at most 2)
    owner = table_deal(players, 1)
    for c in region:
        if owner[c] != "Anna":
            swap = next(x for x in GM.cities if owner[x] == "Anna" and x not in region)
            owner[swap], owner[c] = owner[c], "Anna"
    assert ci.deal_violations(owner, GM)
    data, extra = act_deal(ci.initial_state(players, {}), players, {"owner": owner}, 5)
    assert ci.deal_violations(data["owner"], GM) == [] and len(extra["swaps"]) >= 3
    assert sum(1 for c in region if data["owner"][c] == "Anna") == 2
    # the history can tell the swaps: they are in the event, which the reducer takes
    ci.apply(ci.initial_state(players, {}), {"type": "setup.deal", "data": data})


@pytest.mark.parametrize("data, error, field", [
    ({"owner": {"Atlantide": "Anna"}}, InputError, 'owner.Atlantide'),
    ({"owner": "Anna"}, InputError, "owner"),
    ({"owner": {GM.cities[0]: "Zoe"}}, InputError, ci._key("owner", GM.cities[0])),
    ({"owner": {GM.cities[0]: "Anna"}}, InputError, "owner"),   # 41 cities missing
    ({"cards": {}}, InputError, "cards"),
])
def test_typed_deal_refusals_name_the_field(data, error, field):
    players = NAMES[:3]
    with pytest.raises(error) as err:
        act_deal(ci.initial_state(players, {}), players, data, 1)
    assert err.value.field == field


def test_typed_deal_with_wrong_counts_is_refused():
    players = NAMES[:3]
    owner = table_deal(players, 2)
    c = next(x for x in GM.cities if owner[x] == "Bruno")
    owner[c] = "Anna"  # Anna 15, Bruno 13
    with pytest.raises(RuleError) as err:
        act_deal(ci.initial_state(players, {}), players, {"owner": owner}, 1)
    assert err.value.field == "owner" and "must be dealt 14" in err.value.message


def test_bad_swaps_in_an_event_are_malformed():
    players = NAMES[:3]
    data, _ = act_deal(ci.initial_state(players, {}), players, {}, 4)
    with pytest.raises(InputError) as err:
        ci.apply(ci.initial_state(players, {}), {"type": "setup.deal", "data": {**data, "swaps": [{"player": 1}]}})
    assert err.value.field == "swaps[0]"
