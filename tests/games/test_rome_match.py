"""Rome Is Burning as a match: dealing, movement on the ring, steals, scoring, election, 7 turns."""

import copy
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.base.errors import InputError, RuleError
from companion.games import rome_is_burning as G
from companion.core.match import Fold, check_export, fold

PLAYERS = ["Anna", "Bruno", "Carla"]


def ev(type_, **data):
    return {"type": type_, "data": data}


def move(player, die, direction="cw"):
    return ev("move", player=player, die=die, direction=direction)


# 3 players: 4 spaces of 2 cards
SETUP = ev("turn.setup", spaces={"2": ["Tradimento", "Cospirazione"], "3": ["Terme", "Sacrifici"],
                                 "9": ["Legioni", "Tributi"], "11": ["Gladiatori", "Cristiani"]})


def test_initial_state():
    s = G.initial_state(PLAYERS, {})
    assert s["phase"] == "setup" and s["turn"] == 1 and s["emperor"] is None
    assert s["positions"] == {p: 0 for p in PLAYERS} and s["totals"] == {p: 0 for p in PLAYERS}


@pytest.mark.parametrize("players", [["solo"], [f"p{i}" for i in range(11)]])
def test_player_count(players):
    with pytest.raises(InputError) as err:
        G.initial_state(players, {})
    assert err.value.field == "players"


def test_moves_take_cards_and_wrap_around_the_ring():
    f = fold(G.GAME_ID, PLAYERS, [SETUP, move("Anna", 2), move("Bruno", 3, "ccw"), move("Carla", 3)])
    s = f.game_state
    assert s["positions"] == {"Anna": 2, "Bruno": 9, "Carla": 3}  # 0 - 3 = 9 on a ring of 12
    assert s["hands"] == {"Anna": ["Tradimento", "Cospirazione"], "Bruno": ["Legioni", "Tributi"],
                          "Carla": ["Terme", "Sacrifici"]}
    assert s["spaces"][2] == [] and s["spaces"][11] == ["Gladiatori", "Cristiani"]
    assert f.view()["summary"]["to_move"] == "Anna"


def test_landing_on_a_pawn_allows_one_draw_then_the_next_move_forfeits_it():
    base = [SETUP, move("Anna", 2), move("Bruno", 2)]  # Bruno lands on Anna (cards already taken)
    f = fold(G.GAME_ID, PLAYERS, base)
    assert f.game_state["steal"] == {"player": "Bruno", "from": ["Anna"]}
    f.apply(ev("steal", player="Bruno", **{"from": "Anna"}, card="cospirazione"))
    assert f.game_state["hands"]["Bruno"] == ["Cospirazione"] and f.game_state["hands"]["Anna"] == ["Tradimento"]
    with pytest.raises(RuleError):  # once
        f.apply(ev("steal", player="Bruno", **{"from": "Anna"}, card="Tradimento"))
    g = fold(G.GAME_ID, PLAYERS, base + [move("Carla", 1)])
    with pytest.raises(RuleError) as err:
        g.apply(ev("steal", player="Bruno", **{"from": "Anna"}, card="Tradimento"))
    assert err.value.field == "player"


@pytest.mark.parametrize("events, field, cls", [
    ([move("Anna", 1)], "type", RuleError),  # not dealt yet
    ([SETUP, move("Bruno", 1)], "player", RuleError),
    ([SETUP, move("Nero", 1)], "player", InputError),
    ([SETUP, ev("move", player="Anna", die=0, direction="cw")], "die", InputError),
    ([SETUP, ev("move", player="Anna", die=3, direction="up")], "direction", InputError),
    ([SETUP, ev("turn.score")], "type", RuleError),  # cards left
    ([SETUP, SETUP], "type", RuleError),
    ([ev("turn.setup", spaces={"2": ["Terme", "Tributi"]})], "spaces", InputError),  # 4 spaces with 3 players
    ([ev("turn.setup", spaces={"1": ["Terme", "Tributi"], "2": ["Legioni", "terme"], "3": ["Cristiani", "Sacrifici"],
                               "4": ["Trionfi", "Generali"]})], 'spaces["2"][1]', InputError),
    ([ev("turn.setup", spaces={"1": ["Terme", "Tributi"], "2": ["Legioni", "Bagni"], "3": ["Cristiani", "Sacrifici"],
                               "4": ["Trionfi", "Generali"]})], 'spaces["2"][1]', InputError),
    ([ev("turn.setup", spaces={"0": ["Terme", "Tributi"]})], "spaces", InputError),  # the Palace
    ([SETUP, move("Anna", 2), move("Bruno", 2), ev("steal", player="Bruno", **{"from": "Anna"}, card="Terme")],
     "card", RuleError),
    ([SETUP, move("Anna", 2), move("Bruno", 2), ev("steal", player="Bruno", **{"from": "Carla"}, card="Terme")],
     "from", RuleError),
    ([ev("emperor.choose", emperor="Anna")], "type", RuleError),
])
def test_refused_events_name_the_field(events, field, cls):
    f = fold(G.GAME_ID, PLAYERS, events[:-1])
    with pytest.raises(cls) as err:
        f.apply(events[-1])
    assert err.value.field == field


def take_everything(setup=SETUP):
    """Anna 2, Bruno 3, Carla 9 (ccw 3), Anna 2 -> 11 (ccw 3: Gladiatori, Cristiani)."""
    return [setup, move("Anna", 2), move("Bruno", 3), move("Carla", 3, "ccw"), move("Anna", 3, "ccw")]


def test_a_turn_is_scored_and_only_the_new_emperor_adds_points():
    f = fold(G.GAME_ID, PLAYERS, take_everything())
    s = f.game_state
    assert sum(len(c) for c in s["spaces"]) == 0
    with pytest.raises(RuleError):
        f.apply(move("Bruno", 1))  # everything is taken: score the turn
    # Anna: Tradimento API, Cospirazione API, Gladiatori BUG, Cristiani BUG -> plebeian 4 + 2 + P 4 + I 4 = 14
    # Bruno: Terme BVO, Sacrifici BVT -> 2; Carla: Legioni AMS, Tributi AMR -> 2 + 2 + M 4 + S 1 + R 1 = 10
    f.apply(ev("turn.score"))
    s = f.game_state
    assert s["history"][0]["scores"] == {"Anna": 14, "Bruno": 2, "Carla": 10}
    assert s["emperor"] == "Anna" and s["totals"] == {"Anna": 14, "Bruno": 0, "Carla": 0}
    assert s["turn"] == 2 and s["phase"] == "setup"
    assert s["hands"] == {p: [] for p in PLAYERS} and s["positions"] == {p: 0 for p in PLAYERS}


def test_a_tie_waits_for_the_old_emperor():
    f = fold(G.GAME_ID, PLAYERS, take_everything() + [ev("turn.score")])  # Anna becomes emperor with 14
    setup2 = ev("turn.setup", spaces={"1": ["Centurioni", "Legioni"], "2": ["Conquiste", "Trionfi"],
                                      "3": ["Sacrifici", "Tradimento"], "4": ["Cospirazione", "Cristiani"]})
    for e in [setup2, move("Anna", 3), move("Bruno", 1), move("Carla", 2), move("Anna", 1), ev("turn.score")]:
        f.apply(e)
    # Anna (emperor): Sacrifici BVT, Tradimento API, Cospirazione API, Cristiani BUG -> 4 + B2 + V1 + T1 + U1 + G1
    # Bruno: Centurioni AMS, Legioni AMS -> 2 + A2 + M4 + S4 = 12; Carla: Conquiste AMR, Trionfi AMR -> 12
    s = f.game_state
    assert s["phase"] == "election" and s["scoring"]["players"][0]["score"] == 10
    assert f.view()["summary"]["decision_needed"] == {"by": "Anna", "candidates": ["Bruno", "Carla"]}
    assert not f.ended()
    f.apply(ev("emperor.choose", emperor="Carla"))
    s = f.game_state
    assert s["emperor"] == "Carla" and s["totals"] == {"Anna": 14, "Bruno": 0, "Carla": 12}
    assert s["history"][-1]["old_emperor"] == "Anna" and s["turn"] == 3


def test_a_card_dealt_twice_is_refused():
    setup = ev("turn.setup", spaces={"1": ["Tradimento", "Terme"], "2": ["Centurioni", "Sacrifici"],
                                     "3": ["Cristiani", "Gladiatori"], "4": ["terme", "Tributi"]})
    with pytest.raises(InputError) as err:
        fold(G.GAME_ID, PLAYERS, [setup])
    assert err.value.field == 'spaces["4"][0]'


def test_tie_without_a_choice_waits_for_emperor_choose():
    setup = ev("turn.setup", spaces={"1": ["Tradimento", "Terme"], "2": ["Centurioni", "Sacrifici"],
                                     "5": ["Crocifissioni", "Impalamenti"], "6": ["Cristiani", "Gladiatori"]})
    # no emperor yet: Anna takes Tradimento API + Terme BVO -> 2 + 1 + 1 + 1 = 5; Bruno takes Centurioni AMS +
    # Sacrifici BVT -> 5; Carla takes Crocifissioni, Impalamenti (2) then Cristiani, Gladiatori (4 in all)
    events = [setup, move("Anna", 1), move("Bruno", 2), move("Carla", 5), move("Anna", 1, "ccw"),
              move("Bruno", 6), move("Carla", 1)]
    f = fold(G.GAME_ID, PLAYERS, events)
    assert sum(len(c) for c in f.game_state["spaces"]) == 0
    f.apply(ev("turn.score"))
    s = f.game_state
    assert s["phase"] == "election"
    assert f.view()["summary"]["decision_needed"] == {"by": "table", "candidates": ["Anna", "Bruno"]}
    with pytest.raises(RuleError):
        f.apply(SETUP)
    with pytest.raises(InputError) as err:
        f.apply(ev("emperor.choose", emperor="Carla"))
    assert err.value.field == "emperor"
    f.apply(ev("emperor.choose", emperor="Bruno"))
    assert f.game_state["emperor"] == "Bruno" and f.game_state["totals"] == {"Anna": 0, "Bruno": 5, "Carla": 0}
    # the same tie settled at once
    g = fold(G.GAME_ID, PLAYERS, events + [ev("turn.score", emperor_choice="Anna")])
    assert g.game_state["totals"] == {"Anna": 5, "Bruno": 0, "Carla": 0}


def play_turn(f, rng):
    """Deal with ``deal`` and move with ``move_data`` until every card is taken, then score."""
    f.apply({"type": "turn.setup", "data": G.deal(f.game_state, rng)})
    while sum(len(c) for c in f.game_state["spaces"]):
        s = f.game_state
        mover = s["players"][s["current"]]
        f.apply({"type": "move", "data": G.move_data(s, mover, rng.choice(["cw", "ccw"]), rng)})
        s = f.game_state
        if s["steal"] and rng.random() < 0.5:
            victim = s["steal"]["from"][0]
            card = rng.choice(s["hands"][victim])
            f.apply(ev("steal", player=s["steal"]["player"], card=card, **{"from": victim}))
    f.apply(ev("turn.score"))
    if f.game_state["phase"] == "election":
        f.apply(ev("emperor.choose", emperor=f.game_state["scoring"]["candidates"][0]))


@given(st.integers(0, 2 ** 32), st.integers(2, 8))
def test_seven_turns_with_dealt_cards_and_rolled_dice(seed, n):
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(n)]
    f = Fold(G.GAME_ID, players)
    totals = dict.fromkeys(players, 0)
    for turn in range(1, 8):
        before = copy.deepcopy(f.game_state)
        assert before["turn"] == turn and before["phase"] == "setup"
        play_turn(f, rng)
        s = f.game_state
        h = s["history"][-1]
        assert h["turn"] == turn
        # only the new emperor's total changes, by their score this turn, which is the highest
        assert h["points"] == max(h["scores"].values()) == h["scores"][h["new_emperor"]]
        totals[h["new_emperor"]] += h["points"]
        assert s["totals"] == totals
        assert s["emperor"] == h["new_emperor"]
    assert f.ended() and f.game_state["phase"] == "ended"
    best = max(totals.values())
    assert f.game_state["winners"] == [p for p in players if totals[p] == best]
    assert f.view()["summary"]["winners"] == f.game_state["winners"]
    with pytest.raises(RuleError):
        f.apply({"type": "turn.setup", "data": G.deal(f.game_state, rng)})


@given(st.integers(0, 2 ** 32), st.integers(2, 10))
def test_deal_gives_players_plus_one_spaces_of_two_distinct_cards(seed, n):
    s = G.initial_state([f"p{i}" for i in range(n)], {})
    data = G.deal(s, random.Random(seed))
    assert len(data["spaces"]) == n + 1 and "0" not in data["spaces"]
    cards = [c for v in data["spaces"].values() for c in v]
    assert len(cards) == 2 * (n + 1) == len(set(cards)) and all(c in G.TYPES for c in cards)
    G.apply(s, {"type": "turn.setup", "data": data})  # accepted


@given(st.integers(0, 2 ** 32))
def test_cards_are_conserved_while_moving(seed):
    rng = random.Random(seed)
    f = Fold(G.GAME_ID, PLAYERS)
    f.apply({"type": "turn.setup", "data": G.deal(f.game_state, rng)})
    dealt = sorted(c for cs in f.game_state["spaces"] for c in cs)
    for _ in range(rng.randint(0, 12)):
        s = f.game_state
        if not sum(len(c) for c in s["spaces"]):
            break
        f.apply({"type": "move", "data": G.move_data(s, s["players"][s["current"]], "cw", rng)})
        s = f.game_state
        if s["steal"]:
            victim = s["steal"]["from"][-1]
            f.apply(ev("steal", player=s["steal"]["player"], card=s["hands"][victim][0], **{"from": victim}))
        s = f.game_state
        held = [c for h in s["hands"].values() for c in h] + [c for cs in s["spaces"] for c in cs]
        assert sorted(held) == dealt


def test_roll_die_uses_the_injected_rng():
    rolls = [G.roll_die(random.Random(7)) for _ in range(3)]
    assert rolls == [random.Random(7).randint(1, 6)] * 3
    assert all(1 <= G.roll_die() <= 6 for _ in range(50))
    s = fold(G.GAME_ID, PLAYERS, [SETUP]).game_state
    assert G.move_data(s, "Anna", "ccw", random.Random(1)) == {"player": "Anna", "die": random.Random(1).randint(1, 6),
                                                               "direction": "ccw"}
    with pytest.raises(RuleError):  # not Bruno's move: no roll
        G.move_data(s, "Bruno", "cw", random.Random(1))
    with pytest.raises(InputError):
        G.move_data(s, "Anna", "left", random.Random(1))


def test_first_player_rotates_from_the_setup():
    setup = copy.deepcopy(SETUP)
    setup["data"]["first"] = "Carla"
    f = fold(G.GAME_ID, PLAYERS, [setup])
    with pytest.raises(RuleError):
        f.apply(move("Anna", 1))
    f.apply(move("Carla", 1))
    f.apply(move("Anna", 1))


def test_export_names_the_card_path():
    doc = {"id": "rome-1", "game": "rome-is-burning", "players": PLAYERS, "created_at": "2026-01-01T20:00:00Z",
           "events": [{"seq": 1, "at": "2026-01-01T20:01:00Z", "type": "turn.setup",
                       "data": {"spaces": {"2": ["Terme", "Tributi"], "4": ["Legioni", "Bagni"],
                                           "6": ["Cristiani", "Sacrifici"], "8": ["Trionfi", "Generali"]}}}]}
    with pytest.raises(InputError) as err:
        check_export(doc)
    assert err.value.field == '$.events[0].data.spaces["4"][1]' and "Bagni" in err.value.message


def test_apply_never_mutates_its_input():
    s = fold(G.GAME_ID, PLAYERS, [SETUP]).game_state
    snap = copy.deepcopy(s)
    G.apply(s, move("Anna", 2))
    assert s == snap
