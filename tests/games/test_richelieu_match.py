"""Richelieu as a match: the reducer folded through companion.core.match (actions, turns, intrigues, end)."""

import copy
import json

import pytest

from companion.base.errors import InputError, RuleError
from companion.games import richelieu as R
from companion.core.match import check_export, fold
from tests.games.test_richelieu import agent, book_doc

PLAYERS = ["red", "yellow", "blue"]


def ev(type_, **data):
    return {"type": type_, "data": data}


def state_after(events, players=PLAYERS, options=None):
    return fold("richelieu", players, events, options).game_state


def england_event():
    d = book_doc()
    return ev("intrigue.resolve", richelieu_card=d["richelieu_card"], faction_card=d["faction_card"])


def test_initial_state_follows_the_set_up():
    s = R.initial_state(PLAYERS, {})
    assert s["cardinal"] == 7 and s["city_jewels"] == 2
    assert s["players"]["red"] == {"prestige": 0, "income": 1, "military": 0, "money": 0, "jewels": 2,
                                   "cards": {"richelieu": 0, "england": 0, "france": 0, "habsburg": 0,
                                             "protestants": 0}}
    assert s["turn"] == {"player": "red", "allowed": 2, "done": []}  # 0 is behind the Cardinal's 7
    assert s["neutral"] is None
    assert R.initial_state(["a", "b"], {})["neutral"] == "neutral"


@pytest.mark.parametrize("players, options, field", [
    (["a"], {}, "players"),
    (["a", "b", "c", "d", "e"], {}, "players"),
    (["a", "b"], {"start_money": -1}, "start_money"),
    (["a", "b"], {"neutral": "a"}, "neutral"),
    (["a", "b"], {"military_bonuses": {"x": "income"}}, "military_bonuses"),
    (["a", "b"], {"military_bonuses": {"3": "money"}}, "military_bonuses"),
])
def test_bad_options_are_refused(players, options, field):
    with pytest.raises(InputError) as err:
        R.initial_state(players, options)
    assert err.value.field == field


def test_second_placement_pays_two_more():
    s = state_after([ev("action", player="red", action="place_agent", space=0),
                     ev("action", player="red", action="place_agent", space=1)], options={"start_money": 3})
    assert s["players"]["red"]["money"] == 0  # the rule book's example: 0, then 1 + 2


def test_a_turn_of_actions_then_the_next_player():
    s = state_after([ev("action", player="red", action="income"),
                     ev("action", player="red", action="place_agent", space=1),
                     ev("turn.end", player="red")], options={"start_money": 3})
    assert s["players"]["red"]["money"] == 3 + 1 - 1  # income 1, then the first placement of the turn: 1
    assert s["turn"]["player"] == "yellow" and s["turn"]["done"] == []


@pytest.mark.parametrize("events, field, cls", [
    ([ev("action", player="yellow", action="income")], "player", RuleError),
    ([ev("action", player="zed", action="income")], "player", InputError),
    ([ev("action", player="red", action="income"), ev("action", player="red", action="income")], "action",
     RuleError),
    ([ev("action", player="red", action="place_agent")], "space", InputError),
    ([ev("action", player="red", action="place_agent", space=3)], "action", RuleError),  # no money
    ([ev("action", player="red", action="buy_jewel")], "action", RuleError),
    ([ev("turn.end", player="blue")], "player", RuleError),
    ([ev("track.adjust", player="red", track="income", delta=-1)], "delta", RuleError),
    ([ev("track.adjust", player="red", track="money", delta=-1)], "delta", RuleError),
    ([ev("track.adjust", player="red", track="jewels", delta=3)], "delta", RuleError),  # city has 2
    ([ev("action", player="red", action="dance")], "action", InputError),
])
def test_refused_events_name_the_field(events, field, cls):
    f = fold("richelieu", PLAYERS, events[:-1])
    with pytest.raises(cls) as err:
        f.apply(events[-1])
    assert err.value.field == field


def test_actions_are_fixed_when_the_turn_starts():
    # red is ahead of the Cardinal (prestige 8): 1 action
    s = state_after([ev("track.adjust", player="red", track="prestige", delta=8),
                     ev("turn.end"), ev("turn.end"), ev("turn.end")])
    assert s["turn"] == {"player": "red", "allowed": 1, "done": []}
    f = fold("richelieu", PLAYERS, [ev("track.adjust", player="red", track="prestige", delta=8),
                                    ev("turn.end"), ev("turn.end"), ev("turn.end"),
                                    ev("action", player="red", action="income")])
    with pytest.raises(RuleError):
        f.apply(ev("action", player="red", action="place_agent", space=0))


def test_intrigue_resolution_updates_tracks_sheet_and_cardinal():
    s = state_after([ev("track.adjust", player="red", track="prestige", delta=5), england_event()])
    assert s["players"]["red"]["prestige"] == 8 and s["players"]["red"]["income"] == 2
    assert s["players"]["yellow"]["prestige"] == 3 and s["players"]["yellow"]["money"] == 3
    assert s["players"]["red"]["cards"]["england"] == 1
    assert s["cardinal"] == 5
    assert s["resolved"] == 1 and s["resolutions"][0]["winner"] == "england"


def test_apply_never_mutates_its_input():
    s0 = R.initial_state(PLAYERS, {})
    snapshot = copy.deepcopy(s0)
    R.apply(s0, england_event())
    R.apply(s0, ev("action", player="red", action="income"))
    assert s0 == snapshot


def test_undo_takes_back_a_resolution():
    f = fold("richelieu", PLAYERS, [england_event(), {"type": "undo", "data": {}}])
    assert f.game_state == R.initial_state(PLAYERS, {})


def test_unknown_player_on_a_card_is_named_in_an_export():
    bad = england_event()
    bad["data"]["faction_card"]["slots"][2] = agent("green", 2)
    doc = {"id": "r1", "game": "richelieu", "players": PLAYERS, "created_at": "2026-01-01T20:00:00Z",
           "events": [{"seq": 1, "at": "2026-01-01T20:01:00Z", **bad}]}
    with pytest.raises(InputError) as err:
        check_export(doc)
    assert err.value.field == "$.events[0].data.faction_card.slots[2].player"


def test_more_england_sheets_than_the_game_has_are_refused():
    f = fold("richelieu", PLAYERS, [england_event()] * 4)
    with pytest.raises(RuleError) as err:
        f.apply(england_event())
    assert err.value.field == "faction_card.faction"


def resolution(winner_player, faction, richelieu_wins=True):
    win = [agent(winner_player, 3)]
    return ev("intrigue.resolve",
              richelieu_card={"slots": win if richelieu_wins else [None],
                              "rewards": {"first": [{"type": "prestige", "amount": 2}], "second": [],
                                          "cardinal": 1}},
              faction_card={"faction": faction, "slots": [None] if richelieu_wins else win,
                            "rewards": {"first": [{"type": "money", "amount": 1}], "second": [], "cardinal": -1}})


def test_thirteen_resolutions_end_the_match_with_the_final_scoring():
    factions = ["england"] * 4 + ["france"] * 3 + ["habsburg"] * 3 + ["protestants"] * 3
    events = [resolution(PLAYERS[i % 3], fac, richelieu_wins=i % 2 == 0) for i, fac in enumerate(factions)]
    f = fold("richelieu", PLAYERS, events[:12])
    assert not f.ended()
    f.apply(events[12])
    assert f.ended()
    s = f.game_state
    expected = R.score({"players": [{"name": n, **{k: s["players"][n][k] for k in
                                                   ("prestige", "income", "military", "money", "jewels", "cards")}}
                                    for n in PLAYERS]})
    assert s["final"] == expected
    assert sum(s["players"][n]["cards"]["richelieu"] for n in PLAYERS) == 7
    with pytest.raises(RuleError):
        f.apply(ev("turn.end"))
    view = f.view("2026-01-01T21:00:00Z")
    assert view["summary"]["final"] is True and view["summary"]["intrigues_left"] == 0


def test_game_end_stops_early_and_summary_shows_standings():
    f = fold("richelieu", PLAYERS, [ev("track.adjust", player="blue", track="prestige", delta=12)])
    summary = f.view("2026-01-01T21:00:00Z")["summary"]
    assert summary["standings"]["winners"] == ["blue"]
    assert summary["markers"]["blue"] == {"track": 12, "tiles_30": 0, "behind_cardinal": False}
    assert summary["turn"]["next"]["income"] == {"gain": 1}
    f.apply(ev("game.end"))
    assert f.ended()


def test_two_player_match_neutral_places_forfeit():
    e = ev("intrigue.resolve",
           richelieu_card={"slots": [agent("neutral", 2), agent("a", 1)],
                           "rewards": {"first": [{"type": "prestige", "amount": 4}],
                                       "second": [{"type": "money", "amount": 2}], "cardinal": 0}},
           faction_card={"faction": "france", "slots": [None],
                         "rewards": {"first": [], "second": [], "cardinal": 0}})
    s = state_after([e], players=["a", "b"])
    assert s["players"]["a"]["money"] == 2 and s["players"]["a"]["prestige"] == 0
    assert sum(s["players"][p]["cards"]["richelieu"] for p in "ab") == 0  # the neutral's sheet leaves the game


def test_commission_with_board_symbols_from_options():
    s = state_after([ev("track.adjust", player="red", track="money", delta=5),
                     ev("action", player="red", action="commission")],
                    options={"military_bonuses": {"1": "income"}})
    assert s["players"]["red"]["military"] == 1 and s["players"]["red"]["income"] == 2
    assert s["players"]["red"]["money"] == 4


def test_export_round_trip_through_the_cli(run_cli, tmp_path):
    events = [england_event(), ev("action", player="red", action="income"), ev("turn.end", player="red")]
    doc = {"id": "rich-1", "game": "richelieu", "players": PLAYERS, "created_at": "2026-01-01T20:00:00Z",
           "events": [{"seq": i + 1, "at": f"2026-01-01T20:0{i + 1}:00Z", **e} for i, e in enumerate(events)]}
    f = tmp_path / "m.json"
    f.write_text(json.dumps(doc))
    code, out, err = run_cli("match", "state", str(f), "--at", "2026-01-01T21:00:00Z")
    assert code == 0, err
    state = json.loads(out)
    assert state["state"]["players"]["red"]["money"] == 2 and state["summary"]["turn"]["player"] == "yellow"


@pytest.mark.parametrize("event, field", [
    (ev("turn.end", player="red", extra=1), "extra"),
    (ev("action", player="red", action="income", space=2), "space"),
    (ev("game.end", now=True), "now"),
])
def test_an_unexpected_key_in_the_data_is_named(event, field):
    """An error about the data's keys names the key (it named no field, which the conformance test caught)."""
    with pytest.raises(InputError) as err:
        R.apply(R.initial_state(PLAYERS, {}), event)
    assert err.value.field == field
