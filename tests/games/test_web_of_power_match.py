"""Web of Power as a match: the reducer, legality warnings, refusals, the two scorings, the fold."""

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.bench_web_of_power import synthetic_board
from companion.base.errors import InputError, RuleError
from companion.games import web_of_power as wop
from companion.core.match import fold
from companion.base.resources import schemas_dir

P4 = ["Anna", "Barbara", "Chris", "Dan"]


def run(events, players=P4, options=None):
    state = wop.initial_state(players, options or {})
    for i, (t, data) in enumerate(events, 1):
        before = copy.deepcopy(state)
        new = wop.apply(state, {"seq": i, "type": t, "data": data, "at": "2026-03-01T20:00:00Z"})
        assert state == before, "apply mutated its input"
        state = new
    return state


def place(player, piece="monastery", **kw):
    return ("place", {"player": player, "piece": piece, **kw})


def messages(state):
    return [w["message"] for w in state["warnings"]]


def test_initial_state_and_deck():
    s = wop.initial_state(P4, {})
    assert s["deck"]["removed_per_colour"] == 1 and s["deck"]["cards"] == 50
    assert wop.initial_state(["A", "B", "C"], {})["deck"]["cards"] == 45
    assert wop.initial_state(["A", "B", "C", "D", "E"], {})["deck"]["cards"] == 55
    assert not wop.is_ended(s)
    for players, field in ([["A", "B"], "players"], [["A", "B", "C", "D", "E", "F"], "players"],
                           [["A", "A", "B"], "players"]):
        with pytest.raises(InputError) as err:
            wop.initial_state(players, {})
        assert err.value.field == field
    with pytest.raises(InputError) as err:
        wop.initial_state(P4, {"variants": {"three_countries": True}})
    assert err.value.field == "options.variants.three_countries"
    with pytest.raises(InputError) as err:
        wop.initial_state(P4, {"variants": {"two_countries_per_turn": "yes"}})
    assert err.value.field == "options.variants.two_countries_per_turn"
    with pytest.raises(InputError) as err:
        wop.initial_state(P4, {"board": {"countries": []}})
    assert err.value.field.startswith("$.options.board")


def test_rule_book_placement_example_is_legal():
    # Anna: first in Franken, one monastery (Chorin). Barbara: a monastery at Obra and a councillor there.
    s = run([place("Anna", site="Chorin"), ("turn.end", {}),
             place("Barbara", site="Obra"), place("Barbara", "councillor", country="Franken"), ("turn.end", {})])
    assert s["warnings"] == []
    summ = wop.summary(s)
    franken = next(c for c in summ["countries"] if c["country"] == "Franken")
    assert franken["monasteries"] == {"Anna": 1, "Barbara": 1}
    assert franken["councillors"] == {"Barbara": 1} and franken["councillor_cap"] == 1
    assert franken["councillor_room"] == 0
    assert summ["supply"]["Barbara"] == {"monasteries": 19, "councillors": 7}
    assert summ["next_player"] == "Chris" and summ["turns"] == 2


def test_illegal_turns_are_warnings_not_refusals():
    s = run([place("Anna", site="Chorin"), place("Anna", country="Franken")])
    assert any("had no monastery" in m for m in messages(s))
    s = run([place("Anna", "monastery", country="Italien"), ("turn.end", {}),
             place("Barbara", country="Italien"), place("Barbara", country="Bayern")])
    assert any("2 countries in one turn" in m for m in messages(s))
    assert not any("Bayern had no monastery" in m for m in messages(s))  # one monastery is fine
    s = run([place("Anna", country="Italien"), ("turn.end", {}),
             place("Barbara", country="Italien", count=2), place("Barbara", "councillor", country="Italien")])
    assert any("3 pieces in one turn" in m for m in messages(s))
    # councillor cap: the most monasteries of one player in the country
    s = run([place("Anna", country="Italien"), ("turn.end", {}),
             place("Barbara", "councillor", country="Italien", count=2)])
    assert any("Italien: 2 councillor(s), more than the 1 allowed" in m for m in messages(s))
    # councillor into an empty country
    s = run([place("Anna", "councillor", country="England")])
    assert any("England had no monastery" in m for m in messages(s))
    assert all(w["seq"] and w["player"] == "Anna" for w in s["warnings"])


def test_variants_switch_the_rules():
    events = [place("Anna", country="Italien", count=2)]
    assert run(events)["warnings"] != []
    assert run(events, options={"variants": {"two_monasteries_in_empty_country": True}})["warnings"] == []
    mixed = [place("Anna", country="Italien"), place("Anna", "councillor", country="Italien")]
    assert run(mixed, options={"variants": {"two_monasteries_in_empty_country": True}})["warnings"] != []
    two = [place("Anna", country="Italien"), ("turn.end", {}), place("Barbara", country="Italien"),
           ("turn.end", {}), place("Chris", country="Bayern"), ("turn.end", {}),
           place("Dan", country="Italien"), place("Dan", country="Bayern")]
    assert run(two)["warnings"] != []
    assert run(two, options={"variants": {"two_countries_per_turn": True}})["warnings"] == []


def kinds(warnings):
    return sorted((w["kind"], tuple(sorted(w["values"].items()))) for w in warnings)


def test_check_place_says_before_the_tap_what_the_event_would_warn():
    s = run([place("Anna", country="Italien"), ("turn.end", {}), place("Barbara", country="Italien")])
    assert wop.check_place(s, {"player": "Barbara", "piece": "councillor", "country": "Italien"}) == []
    (w,) = wop.check_place(s, {"player": "Barbara", "piece": "monastery", "country": "Bayern"})
    assert (w["kind"], w["turn"], w["player"]) == ("countries", 2, "Barbara")
    assert w["values"] == {"player": "Barbara", "n": 2, "limit": 1, "countries": "Italien, Bayern"}
    assert w["message"] == "Barbara placed in 2 countries in one turn (at most 1): Italien, Bayern"
    (w,) = wop.check_place(s, {"player": "Dan", "piece": "monastery", "country": "Italien"})
    assert w["kind"] == "out_of_turn" and w["values"]["expected"] == "Chris"
    # a rule warned of earlier in the turn is said again: a fourth piece breaks "at most 2" too
    s = run([place("Anna", country="Italien", count=2), place("Anna", country="Italien")])
    assert [w["kind"] for w in wop.check_place(s, {"player": "Anna", "piece": "monastery", "country": "Italien"})] \
        == ["pieces", "empty_count"]
    # refused as the event is, and nothing is changed
    before = copy.deepcopy(s)
    for data, error in (({"player": "Zed", "piece": "monastery", "country": "Italien"}, InputError),
                        ({"player": "Anna", "piece": "monastery"}, InputError), ("x", InputError)):
        with pytest.raises(error):
            wop.check_place(s, data)
    assert s == before
    with pytest.raises(RuleError):
        wop.check_place(run([("game.end", {})]), {"player": "Anna", "piece": "monastery", "country": "Italien"})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(P4), st.sampled_from(["monastery", "councillor"]),
                          st.sampled_from(["Italien", "Bayern", "Frankreich", "Franken"]), st.integers(1, 2),
                          st.booleans()), max_size=14))
def test_check_place_agrees_with_the_event(steps):
    """For any placement: refused by check_place exactly when the event is; every warning the event records is
    one check_place said, and check_place says only those and the ones the turn was warned of already."""
    s = wop.initial_state(P4, {})
    for i, (p, piece, country, count, end) in enumerate(steps, 1):
        data = {"player": p, "piece": piece, "country": country, "count": count}
        try:
            said = wop.check_place(s, data)
        except (InputError, RuleError) as exc:
            with pytest.raises(type(exc)):
                wop.apply(s, {"seq": i, "type": "place", "data": data})
            continue
        new = wop.apply(s, {"seq": i, "type": "place", "data": data})
        added = new["warnings"][len(s["warnings"]):]
        assert set(kinds(added)) <= set(kinds(said))
        earlier = {w["kind"] for w in new["warnings"] if w["turn"] == new["turns"] + 1}
        assert {k for k, _ in kinds(said)} <= earlier
        s = new
        turn = wop.summary(s)["turn"]
        if not turn["can_place"]:  # no placement left without a warning: every one in its countries warns
            for c in {pl["country"] for pl in turn["placements"]}:
                for pc in ("monastery", "councillor"):
                    try:
                        assert wop.check_place(s, {"player": p, "piece": pc, "country": c}) != []
                    except (InputError, RuleError):
                        pass
        if end:
            s = wop.apply(s, {"seq": i, "type": "turn.end", "data": {}})


def test_can_place_says_when_the_turn_has_no_placement_left():
    assert wop.summary(run([]))["turn"] is None
    # two pieces: none left
    s = run([place("Anna", country="Italien"), ("turn.end", {}), place("Barbara", country="Italien")])
    assert wop.summary(s)["turn"]["can_place"] is True
    s = wop.apply(s, {"seq": 9, "type": "place", "data": {"player": "Barbara", "piece": "councillor", "country": "Italien"}})
    assert wop.summary(s)["turn"]["can_place"] is False
    # one monastery into a country that had none: nothing more this turn (a second country breaks a rule too)
    assert wop.summary(run([place("Anna", country="Bayern")]))["turn"]["can_place"] is False
    # with the variants: a second monastery there, or a second country
    s = run([place("Anna", country="Bayern")], options={"variants": {"two_monasteries_in_empty_country": True}})
    assert wop.summary(s)["turn"]["can_place"] is True
    s = run([place("Anna", country="Bayern")], options={"variants": {"two_countries_per_turn": True}})
    assert wop.summary(s)["turn"]["can_place"] is True


def test_seat_order_and_passes():
    s = run([place("Barbara", country="Italien")])
    assert any("out of turn" in m for m in messages(s))
    s = run([("turn.end", {}), ("turn.end", {"player": "Barbara"}), place("Chris", country="Italien")])
    assert s["warnings"] == [] and s["turns"] == 2
    # a placement by the next player closes the open turn
    s = run([place("Anna", country="Italien"), place("Barbara", country="Italien")])
    assert s["warnings"] == [] and s["turn"]["player"] == "Barbara"
    s = run([place("Anna", country="Italien")], options={"first_player": "Chris"})
    assert any("out of turn" in m for m in messages(s))


@pytest.mark.parametrize("events, error, field", [
    ([place("Zed", country="Italien")], InputError, "player"),
    ([place("Anna", country="Mars")], InputError, "country"),
    ([place("Anna", site="Nowhere")], InputError, "site"),
    ([place("Anna", site="Chorin", country="Bayern")], InputError, "site"),
    ([place("Anna", "bishop", country="Bayern")], InputError, "piece"),
    ([place("Anna", "councillor", site="Chorin")], InputError, "site"),
    ([place("Anna", country="Bayern", count=3)], InputError, "count"),
    ([place("Anna", country="Bayern", count=True)], InputError, "count"),
    ([place("Anna")], InputError, "country"),
    ([place("Anna", site="Chorin"), place("Barbara", site="Chorin")], RuleError, "site"),
    ([("chains", {"player": "Anna", "lengths": [4]})], InputError, "lengths"),
    ([("chains", {"player": "Anna", "lengths": [3]})], InputError, "lengths[0]"),
    ([("deck.out", {"chains": {"Anna": [4]}})], InputError, "chains"),
    ([("turn.end", {"player": "Zed"})], InputError, "player"),
])
def test_malformed_events_are_refused(events, error, field):
    with pytest.raises(error) as err:
        run(events)
    assert err.value.field == field


def test_supply_and_full_country_are_refused():
    # Frankreich has 8 sites (unnamed on the template): the ninth monastery is refused
    events = []
    for i in range(4):
        events += [place(P4[i], country="Frankreich", count=2), ("turn.end", {})]
    s = run(events)
    with pytest.raises(RuleError) as err:
        wop.apply(s, {"seq": 99, "type": "place", "data": {"player": "Anna", "piece": "monastery",
                                                            "country": "Frankreich"}})
    assert err.value.field == "country"
    # 20 monasteries each, 8 councillors each
    events = [place("Anna", country="Italien", count=2) for _ in range(10)]
    s = run(events)
    with pytest.raises(RuleError):
        wop.apply(s, {"seq": 99, "type": "place", "data": {"player": "Anna", "piece": "monastery",
                                                            "country": "Bayern"}})
    s = run(events + [place("Anna", "councillor", country="Italien", count=2) for _ in range(4)])
    assert wop.summary(s)["supply"]["Anna"] == {"monasteries": 0, "councillors": 0}
    with pytest.raises(RuleError):
        wop.apply(s, {"seq": 99, "type": "place", "data": {"player": "Anna", "piece": "councillor",
                                                            "country": "Italien"}})


def test_two_scorings_add_up_and_the_match_ends():
    events = [place("Anna", site="Chorin"), ("turn.end", {}),
              place("Barbara", site="Obra"), ("turn.end", {}),
              ("deck.out", {})]
    s = run(events)
    inter = s["scorings"]["intermediate"]
    assert [r["total"] for r in inter["players"]] == [2, 2, 0, 0]
    assert wop.summary(s)["next_scoring"] == "final" and not wop.is_ended(s)
    events += [place("Chris", country="Italien"), ("turn.end", {}),
               place("Dan", country="Italien"), place("Dan", "councillor", country="Italien"), ("turn.end", {}),
               place("Anna", country="Bayern"), ("turn.end", {}),
               place("Barbara", country="Bayern"), place("Barbara", "councillor", country="Bayern"),
               ("chains", {"player": "Dan", "lengths": []}),
               ("deck.out", {})]
    s = run(events)
    assert wop.is_ended(s)
    final = s["scorings"]["final"]
    by = {r["player"]: r for r in final["players"]}
    assert by["Anna"]["total"] == 2 + 2 and by["Chris"]["total"] == 2
    # alliance 15 (Italien-Bayern): Dan leads Italien, Barbara Bayern: nobody
    assert not any(e["kind"] == "alliance" for r in final["players"] for e in r["breakdown"])
    summ = wop.summary(s)
    assert summ["phase"] == "ended"
    assert summ["scores"]["totals"] == {"Anna": 6, "Barbara": 6, "Chris": 2, "Dan": 2}
    # tie on 6: Anna has 2 pieces placed, Barbara 3: Anna wins on unplayed pieces
    assert [r["player"] for r in summ["scores"]["ranking"][:2]] == ["Anna", "Barbara"]
    assert summ["scores"]["ranking"][0]["place"] == 1 and summ["scores"]["ranking"][1]["place"] == 2
    with pytest.raises(RuleError):
        wop.apply(s, {"seq": 99, "type": "turn.end", "data": {}})


def test_hand_chains_and_game_end_on_the_template():
    events = [("deck.out", {})] + [
        place(p, country=c, count=2) for p, c in [("Anna", "Italien"), ("Barbara", "Italien"), ("Chris", "Italien")]]
    events += [place("Anna", country="Burgund", count=2), ("chains", {"player": "Anna", "lengths": [4]}),
               ("game.end", {"chains": {"Barbara": []}})]
    s = run(events, options={"variants": {"two_monasteries_in_empty_country": True}})
    assert wop.is_ended(s)
    anna = next(r for r in s["scorings"]["final"]["players"] if r["player"] == "Anna")
    assert {"kind": "chain", "length": 4, "points": 4} in anna["breakdown"]


def test_chains_computed_from_board_roads():
    board = synthetic_board(4, 4, seed=9)
    roads = board["roads"]
    adj = {}
    for a, b in roads:
        adj.setdefault(a, []).append(b)
        adj.setdefault(b, []).append(a)
    path = [roads[0][0]]
    while len(path) < 4:
        path.append(next(n for n in sorted(adj[path[-1]]) if n not in path))
    events = []
    for site in path:
        events += [place("Anna", site=site), ("turn.end", {"player": "Anna"})]
    events += [("deck.out", {}), ("deck.out", {})]
    s = run(events, players=["Anna", "Barbara", "Chris"], options={"board": board})
    anna = s["scorings"]["final"]["players"][0]
    chains = [e for e in anna["breakdown"] if e["kind"] == "chain"]
    assert len(chains) == 1 and chains[0]["points"] == 4 and sorted(chains[0]["sites"]) == sorted(path)
    with pytest.raises(InputError):  # by hand is refused when the roads are known
        run([("chains", {"player": "Anna", "lengths": []})], players=["Anna", "Barbara", "Chris"],
            options={"board": board})


def test_fold_with_undo_and_export_check(fake_game):
    from companion.core.match import check_export

    events = [
        {"seq": 1, "type": "place", "data": {"player": "Anna", "piece": "monastery", "site": "Chorin"}},
        {"seq": 2, "type": "place", "data": {"player": "Anna", "piece": "monastery", "site": "Obra"}},
        {"seq": 3, "type": "undo", "data": {}},
        {"seq": 4, "type": "turn.end", "data": {}},
    ]
    for e in events:
        e["at"] = "2026-03-01T20:00:00Z"
    f = fold("web-of-power", P4, events, {})
    assert f.game_state["sites"] == {"Chorin": "Anna"} and f.game_state["warnings"] == []
    assert f.view()["summary"]["next_player"] == "Barbara"
    doc = {"id": "m1", "game": "web-of-power", "players": P4, "created_at": "2026-03-01T20:00:00Z",
           "events": events + [{"seq": 5, "at": "2026-03-01T20:01:00Z", "type": "place",
                                "data": {"player": "Barbara", "piece": "monastery", "site": "Nowhere"}}]}
    with pytest.raises(InputError) as err:
        check_export(doc)
    assert err.value.field == "$.events[4].data.site"


def _example_events(kind):
    folder = schemas_dir() / "examples" / "web-of-power.events"
    folder = folder / "invalid" if kind == "invalid" else folder
    return sorted(folder.glob("*.json"))


@pytest.mark.parametrize("path", _example_events("valid"), ids=lambda p: p.name)
def test_valid_event_examples_apply(path):
    event = json.loads(path.read_text())
    state = run([("deck.out", {})] if event["type"] in ("deck.out", "game.end") and event["data"] else [])
    if event["type"] == "chains":
        state = run([place("Anna", country="Italien", count=2), ("turn.end", {})]
                    + [place(p, country="Italien", count=2) for p in ("Barbara", "Chris", "Dan")]
                    + [place("Anna", country="Italien", count=2) for _ in range(4)])
    if event["type"] == "place" and event["data"]["player"] == "Barbara":
        state = run([place("Anna", site="Chorin"), ("turn.end", {})])
    if event["type"] == "deck.out" and "chains" in event["data"]:
        state = run([place(p, country="Italien", count=2) for p in P4 for _ in range(4)] + [("deck.out", {})])
    if event["type"] == "scoring.hand":  # the final scoring waits for the template's unknown parts
        state = run([place("Barbara", country="Italien", count=2) for _ in range(5)]
                    + [place("Anna", "councillor", country=c, count=n) for c, n in (("Italien", 2), ("Italien", 1),
                                                                                  ("Bayern", 2))]
                    + [("deck.out", {}), ("deck.out", {})])
        assert wop.summary(state)["phase"] == "scoring"
    wop.apply(state, {"seq": 100, **event})


@pytest.mark.parametrize("path", _example_events("invalid"), ids=lambda p: p.name)
def test_invalid_event_examples_are_refused_by_the_reducer_too(path):
    event = json.loads(path.read_text())
    state = run([("deck.out", {})])
    with pytest.raises((InputError, RuleError)):
        wop.apply(state, {"seq": 100, "data": {}, **event})


@settings(max_examples=80)
@given(st.lists(st.tuples(st.sampled_from(P4), st.sampled_from(["monastery", "councillor"]),
                          st.sampled_from(["England", "Franken", "Italien", "Frankreich", "Schwaben"]),
                          st.integers(1, 2), st.booleans()), max_size=40))
def test_random_play_keeps_the_books(moves):
    """Any sequence of placements: refused ones change nothing; counts, supply and the
    monastery preview stay consistent with an independent tally."""
    state = wop.initial_state(P4, {})
    tally = {}
    seq = 0
    for player, piece, country, count, end in moves:
        seq += 1
        try:
            state = wop.apply(state, {"seq": seq, "type": "place",
                                      "data": {"player": player, "piece": piece, "country": country, "count": count}})
            tally[(player, piece, country)] = tally.get((player, piece, country), 0) + count
        except RuleError:
            pass
        if end:
            seq += 1
            state = wop.apply(state, {"seq": seq, "type": "turn.end", "data": {}})
    summ = wop.summary(state)
    for c in summ["countries"]:
        for p in P4:
            assert c["monasteries"].get(p, 0) == tally.get((p, "monastery", c["country"]), 0)
            assert c["councillors"].get(p, 0) == tally.get((p, "councillor", c["country"]), 0)
        assert c["free_sites"] is None or c["free_sites"] >= 0
    for p in P4:
        used_m = sum(v for (q, piece, _), v in tally.items() if q == p and piece == "monastery")
        assert summ["supply"][p]["monasteries"] == 20 - used_m >= 0
    score = wop.score({"players": P4, "scoring": "intermediate",
                       "monasteries": {p: {c["country"]: c["monasteries"].get(p, 0) for c in summ["countries"]}
                                       for p in P4}})
    assert {r["player"]: r["total"] for r in score["players"]} == \
           {r["player"]: r["points"] for r in summ["scores"]["preview"]["players"]}
