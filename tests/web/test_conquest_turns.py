"""Whole conquest matches through the API, each ruling of docs/rulings.md ("Conquest: the turn",
"Conquest: the turn's card", "Conquest: elimination", "Conquest: corrections", "Conquest: the clock and
the set-up", "Conquest: the end by a final roll") checked at the step where it applies: an out-of-turn event
of each kind, a second reinforcement, an attack before the reinforcements and after the move, a second move,
a card without a conquest, an elimination with its seat skipped and its cards passed, the end when one
player holds every city, the season's eliminated flags, and the end by a final roll with a ranked summary.
Every refusal is a 409 naming the field and stores nothing."""

import random

import pytest

from companion.games import conquest_italy as ci
from tests.web.test_trackers_api import P3, dealt, engine, events, post_event, reinforce, to_play

GM = ci.map_of(None)


@pytest.fixture
def seeded(app):
    app.config["TRACKER_RNG"] = random.Random(11)
    return app


def refused(app, player, mid, type_, data, field, *words):
    """A 409 naming ``field`` (and the rule, by ``words``), with nothing stored."""
    n = len(events(app, mid))
    r = player.post(f"/api/matches/{mid}/events", {"type": type_, "data": data, "expected_seq": n})
    path = "$.type" if field == "type" else f"$.data.{field}"
    assert (r.status_code, r.json["field"]) == (409, path), (type_, data, r.json)
    for w in words:
        assert w in r.json["error"], r.json
    assert len(events(app, mid)) == n
    return r.json["error"]


def turn(app, mid):
    return engine(app, mid).view()["summary"]["turn"]


def front(s, me, units_at_least=2):
    """One of ``me``'s cities with ``units_at_least`` units bordering (by land or sea) one of ``me``'s cities
    and another player's city: (city, own neighbour, enemy neighbour)."""
    for c in GM.cities:
        if s["owner"][c] != me or s["units"][c] < units_at_least:
            continue
        own = [n for n in sorted(GM.neighbours[c]) if s["owner"][n] == me]
        enemy = [n for n in sorted(GM.neighbours[c]) if s["owner"][n] != me]
        if own and enemy:
            return c, own[0], enemy[0]
    return None


def combat(app, player, mid, src, dst, win=True):
    r = player.post(f"/api/matches/{mid}/conquest/combat", {"expected_seq": len(events(app, mid)), "data": {
        "from": src, "to": dst, "attack_dice": [6] if win else [1],
        "defend_dice": [1] if win else [6] * min(3, engine(app, mid).game_state["units"][dst])}})
    assert r.status_code == 201, r.json
    return r.json["view"]


def end_turn(app, player, mid, who, **data):
    r = player.post(f"/api/matches/{mid}/conquest/turn-end",
                    {"expected_seq": len(events(app, mid)), "data": {"player": who, **data}})
    assert r.status_code == 201, r.json
    return r.json["view"]


def fix(app, organiser, mid, city, who, units):
    """A hand correction of the map: the organiser's (docs/rulings.md#conquest-corrections)."""
    post_event(app, organiser, mid, "territory.set", {"city": city, "player": who, "units": units})


def conquest_now(app, player, mid, organiser):
    """The current player (reinforced) conquers a neighbour: corrections make a front city strong and the
    target weak, then table dice 6 against 1."""
    s = engine(app, mid).game_state
    me = s["turn"]["player"]
    src, _, dst = front(s, me, units_at_least=1) or (None, None, None)
    if src is None:
        src = next(c for c in GM.cities if s["owner"][c] == me and any(s["owner"][n] != me for n in GM.neighbours[c]))
        dst = next(n for n in sorted(GM.neighbours[src]) if s["owner"][n] != me)
    if s["units"][src] < 2:
        fix(app, organiser, mid, src, me, 5)
    fix(app, organiser, mid, dst, s["owner"][dst], 1)
    return combat(app, player, mid, src, dst)


def started_match(app, player, **options):
    mid = dealt(app, player, options or None)
    to_play(app, player, mid)
    post_event(app, player, mid, "clock.start", {})
    return mid


# -- the turn's steps ------------------------------------------------------------------------------------

def test_a_turn_is_reinforce_combats_one_move_then_the_end(seeded, player, organiser):
    mid = started_match(seeded, player)
    s = engine(seeded, mid).game_state
    t = turn(seeded, mid)
    assert t["player"] == "Anna" and t["step"] == "reinforce" and t["actions"] == ["reinforce"]
    src, own, enemy = front(s, "Anna", units_at_least=1)
    fix(seeded, organiser, mid, src, "Anna", 8)  # a correction before the turn's first event: taken
    s = engine(seeded, mid).game_state
    due = ci.reinforcements(GM, ci.held(s, "Anna"), ci.units_on_map(s, "Anna"))["placeable"]
    bruno_city = ci.held(s, "Bruno")[0]
    # before the reinforcements: no attack, no move, no end of the turn
    refused(seeded, player, mid, "combat", {"from": src, "to": enemy, "attack_dice": [6], "defend_dice": [1]},
            "type", "reinforces first")
    refused(seeded, player, mid, "move", {"from": src, "to": own, "units": 1}, "type", "reinforces first")
    refused(seeded, player, mid, "turn.end", {"player": "Anna"}, "type", "not reinforced")
    # Bruno reinforces during Anna's turn: refused, and he is owed his own on his turn
    refused(seeded, player, mid, "reinforce", {"player": "Bruno", "placements": {bruno_city: 4}}, "player",
            "Anna's turn")
    post_event(seeded, player, mid, "reinforce", {"player": "Anna", "placements": {src: due}})
    # a second reinforcement in the same turn
    refused(seeded, player, mid, "reinforce", {"player": "Anna", "placements": {src: due}}, "type", "once")
    assert turn(seeded, mid)["actions"] == ["combat", "move", "turn.end"]
    # a lost combat from her own city: allowed; from Bruno's city (Anna's turn): refused
    combat(seeded, player, mid, src, enemy, win=False)
    b_src, _, b_enemy = front(engine(seeded, mid).game_state, "Bruno", units_at_least=1)
    fix(seeded, organiser, mid, b_src, "Bruno", 4)  # a correction, in Anna's turn: taken
    refused(seeded, player, mid, "combat", {"from": b_src, "to": b_enemy, "attack_dice": [6], "defend_dice": [1]},
            "from", "Anna's turn")
    r = player.post(f"/api/matches/{mid}/conquest/combat", {"expected_seq": len(events(seeded, mid)),
                                                           "data": {"from": b_src, "to": b_enemy}})
    assert (r.status_code, r.json["field"]) == (409, "$.data.from")  # nothing rolled for an out-of-turn attack
    # one move, then neither a second move nor an attack
    s = engine(seeded, mid).game_state
    post_event(seeded, player, mid, "move", {"from": src, "to": own, "units": 1})
    assert turn(seeded, mid)["step"] == "moved" and turn(seeded, mid)["actions"] == ["turn.end"]
    refused(seeded, player, mid, "move", {"from": src, "to": own, "units": 1}, "type", "at most one move")
    refused(seeded, player, mid, "combat", {"from": src, "to": enemy, "attack_dice": [6], "defend_dice": [1]},
            "type", "the move ends the attacks")
    # no conquest this turn: no card, neither alone nor with the turn's end
    card = next(c for c in GM.cards if not any(c in h for h in s["hands"].values()))
    refused(seeded, player, mid, "card.draw", {"player": "Anna", "card": card}, "card", "only with a conquest")
    refused(seeded, player, mid, "turn.end", {"player": "Anna", "card": card}, "card", "only with a conquest")
    refused(seeded, player, mid, "turn.end", {"player": "Anna", "conquered": 1}, "conquered", "conquered 0")
    view = end_turn(seeded, player, mid, "Anna")
    assert events(seeded, mid)[-1]["data"] == {"player": "Anna", "conquered": 0}  # no card without a conquest
    assert view["current_player"] == "Bruno" and view["summary"]["turn"]["player"] == "Bruno"
    # after Anna's turn.end, Anna attacks during Bruno's turn: refused (the Aosta -> Novara)
    s = engine(seeded, mid).game_state
    a_src, a_own, a_enemy = front(s, "Anna", units_at_least=1)
    refused(seeded, player, mid, "combat", {"from": a_src, "to": a_enemy, "attack_dice": [6], "defend_dice": [1]},
            "from", "Bruno's turn")
    refused(seeded, player, mid, "move", {"from": a_src, "to": a_own, "units": 1}, "from", "Bruno's turn")
    refused(seeded, player, mid, "reinforce", {"player": "Anna", "placements": {a_src: 1}}, "player", "Bruno's turn")
    refused(seeded, player, mid, "turn.end", {"player": "Anna"}, "player", "Bruno's turn")
    # Bruno's turn as it should be: his reinforcements are due in full
    due_b = ci.reinforcements(GM, ci.held(s, "Bruno"), ci.units_on_map(s, "Bruno"))["placeable"]
    post_event(seeded, player, mid, "reinforce", {"player": "Bruno", "placements": {ci.held(s, "Bruno")[0]: due_b}})


def test_the_turns_card_one_after_a_conquest(seeded, player, organiser):
    mid = started_match(seeded, player)
    reinforce(seeded, player, mid)
    view = conquest_now(seeded, player, mid, organiser)
    assert view["summary"]["turn"]["conquests"] == 1 and view["summary"]["turn"]["card_owed"]
    assert "card.draw" in view["summary"]["turn"]["actions"]
    # the end of a turn with a conquest needs its card: without one (the events API) it is refused
    refused(seeded, player, mid, "turn.end", {"player": "Anna"}, "card", "its card")
    taken = {c for h in engine(seeded, mid).game_state["hands"].values() for c in h}
    card, other = [c for c in GM.cards if c not in taken][:2]
    refused(seeded, player, mid, "card.draw", {"player": "Bruno", "card": card}, "player", "Anna's turn")
    post_event(seeded, player, mid, "card.draw", {"player": "Anna", "card": card})  # recorded at the table
    # the refusal names Anna's card: told to an organiser (or Anna's phone), not to another player's
    refused(seeded, organiser, mid, "card.draw", {"player": "Anna", "card": other}, "card", "one card a turn")
    refused(seeded, organiser, mid, "turn.end", {"player": "Anna", "card": other}, "card", "one card a turn")
    quiet = refused(seeded, player, mid, "turn.end", {"player": "Anna", "card": other}, "player", "Anna's secret")
    assert card not in quiet
    view = end_turn(seeded, player, mid, "Anna")
    assert "card" not in events(seeded, mid)[-1]["data"] and view["state"]["hands"] == {}  # Anna's, not this phone's
    assert engine(seeded, mid).game_state["hands"]["Anna"] == [card]
    # Bruno conquers twice: the Pi draws one card at the end of his turn, never two
    reinforce(seeded, player, mid)
    for _ in range(2):
        conquest_now(seeded, player, mid, organiser)
    view = end_turn(seeded, organiser, mid, "Bruno")
    e = events(seeded, mid)[-1]["data"]
    assert e["conquered"] == 2 and e["card"] in GM.cards and e["card"] != card
    assert view["state"]["hands"]["Bruno"] == [e["card"]]


def test_traded_cards_go_under_the_deck(seeded, player, organiser):
    mid = started_match(seeded, player)
    gm = GM
    # Anna earns three cards in three turns (recorded at the table)
    mixed = [next(c for c in gm.cities if gm.card_symbol(c) == sym) for sym in ("basil", "mozzarella", "tomato")]
    for c in mixed:
        while turn(seeded, mid)["player"] != "Anna":
            s = reinforce(seeded, player, mid)
            end_turn(seeded, player, mid, s["turn"]["player"])
        reinforce(seeded, player, mid)
        conquest_now(seeded, player, mid, organiser)
        end_turn(seeded, player, mid, "Anna", card=c)
    while turn(seeded, mid)["player"] != "Anna":
        s = reinforce(seeded, player, mid)
        end_turn(seeded, player, mid, s["turn"]["player"])
    s = engine(seeded, mid).game_state
    due = ci.reinforcements(gm, ci.held(s, "Anna"), ci.units_on_map(s, "Anna"), mixed)["placeable"]
    post_event(seeded, player, mid, "reinforce", {"player": "Anna", "placements": {ci.held(s, "Anna")[0]: due},
                                                  "trade": mixed})
    s = engine(seeded, mid).game_state
    assert s["hands"]["Anna"] == [] and s["under"] == mixed
    # a traded card comes up only after every card above it
    conquest_now(seeded, player, mid, organiser)
    refused(seeded, player, mid, "card.draw", {"player": "Anna", "card": mixed[0]}, "card", "under the deck")


# -- elimination and the end -------------------------------------------------------------------------------

def test_elimination_skips_the_seat_passes_the_cards_and_the_season_records_it(seeded, player, organiser):
    organiser.post("/api/clubs", {"name": "Club"})
    season = organiser.post("/api/seasons", {"club": "Club", "game": "conquest-italy", "year": 2026}).json
    mid = started_match(seeded, player)
    # Anna and Bruno pass; Carla conquers and records a card
    for who in ("Anna", "Bruno"):
        reinforce(seeded, player, mid)
        end_turn(seeded, player, mid, who)
    reinforce(seeded, player, mid)
    conquest_now(seeded, player, mid, organiser)
    end_turn(seeded, player, mid, "Carla", card="joker:Roma")
    # Anna's turn: corrections leave Carla one city (1 unit) next to an Anna city of 10
    s = engine(seeded, mid).game_state
    last = ci.held(s, "Carla")[0]
    for c in ci.held(s, "Carla")[1:]:
        fix(seeded, organiser, mid, c, "Bruno", 1)
    near = sorted(GM.land[last])[0]
    fix(seeded, organiser, mid, near, "Anna", 10)
    fix(seeded, organiser, mid, last, "Carla", 1)
    reinforce(seeded, player, mid)
    view = combat(seeded, player, mid, near, last)
    assert view["summary"]["eliminated"] == ["Carla"]
    hands = engine(seeded, mid).game_state["hands"]
    assert hands["Carla"] == [] and "joker:Roma" in hands["Anna"]
    assert [p["cards"] for p in view["summary"]["players"] if p["player"] == "Anna"] == [len(hands["Anna"])]
    refused(seeded, player, mid, "reinforce", {"player": "Carla", "placements": {}}, "player", "eliminated")
    # Carla's seat is skipped from now on, by the game and by the clock
    end_turn(seeded, player, mid, "Anna")
    reinforce(seeded, player, mid)
    view = end_turn(seeded, player, mid, "Bruno")
    assert view["current_player"] == "Anna" and view["summary"]["turn"]["player"] == "Anna"
    assert view["round"] == 3
    # one player holds every city: the match ends; eliminated players rank after every player still in
    s = engine(seeded, mid).game_state
    bruno = ci.held(s, "Bruno")
    b_last = next(c for c in bruno if any(s["owner"][n] == "Anna" for n in GM.land[c]))
    for c in bruno:
        if c != b_last:
            fix(seeded, organiser, mid, c, "Anna", 1)
    a_near = next(n for n in sorted(GM.land[b_last]) if engine(seeded, mid).game_state["owner"][n] == "Anna")
    fix(seeded, organiser, mid, a_near, "Anna", 10)
    fix(seeded, organiser, mid, b_last, "Bruno", 1)
    reinforce(seeded, player, mid)
    view = combat(seeded, player, mid, a_near, b_last)
    assert view["ended"] and view["ended_by"] == {"reason": "game", "player": None}
    sm = view["summary"]
    assert sm["ended"] and sm["turn"] is None
    assert [(r["player"], r["place"], r["eliminated"]) for r in sm["ranking"]["players"]] == [
        ("Anna", 1, False), ("Bruno", 2, True), ("Carla", 3, True)]
    refused(seeded, organiser, mid, "territory.set", {"city": b_last, "player": "Bruno", "units": 1}, "type", "ended")
    # the season records both eliminations (the championship's -0.5)
    matches = organiser.get(f"/api/seasons/{season['id']}/matches").json
    rows = matches["matches"] if isinstance(matches, dict) else matches
    (rec,) = [m for m in rows if m.get("match_id") == mid]
    flags = {r["player"]: r["eliminated"] for r in rec["results"]}
    assert flags == {"Anna": False, "Bruno": True, "Carla": True}


# -- the clock, the set-up and the end by a final roll ----------------------------------------------------

def test_the_clock_waits_for_the_set_up_unless_overridden(seeded, player, organiser):
    mid = dealt(seeded, player)
    err = refused(seeded, player, mid, "clock.start", {}, "type", "set-up is not over", "on purpose")
    assert "units are still to place" in err
    mid2 = dealt(seeded, player)
    r = organiser.post(f"/api/matches/{mid2}/events", {"type": "clock.start", "data": {"override": True},
                                                      "expected_seq": 1})
    assert r.status_code == 201, r.json
    assert events(seeded, mid2)[-1]["data"] == {"override": True}  # the history shows it
    view = r.json["view"]
    assert view["summary"]["clock_override"] and view["summary"]["phase"] == "play"
    assert view["current_player"] == "Anna" and view["summary"]["turn"]["player"] == "Anna"
    # a match placed in full starts without any override
    mid3 = dealt(seeded, player)
    to_play(seeded, player, mid3)
    view = post_event(seeded, player, mid3, "clock.start", {})["view"]
    assert not view["summary"]["clock_override"] and view["summary"]["turn"]["step"] == "reinforce"


def test_the_end_by_a_final_roll_ranks_the_summary(seeded, player, organiser, clock):
    mid = dealt(seeded, player)
    to_play(seeded, player, mid)
    post_event(seeded, player, mid, "clock.start", {"limit_minutes": 1})
    clock.advance(61)  # the time is up during Anna's turn: the round is played out, then one more
    for _ in range(2 * len(P3)):
        s = reinforce(seeded, player, mid)
        view = end_turn(seeded, player, mid, s["turn"]["player"])
    assert view["phase"] == "final-rounds" and view["current_player"] == "Anna"
    s = reinforce(seeded, player, mid)
    view = end_turn(seeded, player, mid, "Anna")
    assert view["awaiting_roll"] == "Anna" and view["summary"]["turn"]["player"] == "Bruno"
    # while Anna owes the roll, Bruno's turn waits; a correction does not
    refused(seeded, player, mid, "reinforce", {"player": "Bruno", "placements": {}}, "type", "owes a final roll")
    city = ci.held(engine(seeded, mid).game_state, "Bruno")[0]
    fix(seeded, organiser, mid, city, "Bruno", 3)
    view = post_event(seeded, player, mid, "final.roll", {"player": "Anna", "dice": [1, 2]})["view"]
    assert view["ended"] and view["ended_by"] == {"reason": "final-roll", "player": "Anna"}
    sm = view["summary"]
    assert sm["ended"] and sm["ranking"] is not None
    ranking = player.get(f"/api/matches/{mid}/conquest/ranking").json
    assert ranking["ended"] and sm["ranking"]["players"] == ranking["players"]
    refused(seeded, organiser, mid, "territory.set", {"city": city, "player": "Anna", "units": 1}, "type", "ended")
    # undo re-opens it: the summary is open again
    r = player.post(f"/api/matches/{mid}/undo", {"expected_seq": len(events(seeded, mid))})
    assert r.status_code == 201 and not r.json["view"]["summary"]["ended"] and r.json["view"]["awaiting_roll"] == "Anna"


# -- the organiser's corrections (docs/rulings.md#conquest-corrections) ----------------------------------

def forbidden(app, who, mid, type_, data, path):
    """A 403 naming ``path``, with nothing stored."""
    n = len(events(app, mid))
    r = who.post(f"/api/matches/{mid}/events", {"type": type_, "data": data, "expected_seq": n})
    assert (r.status_code, r.json["field"]) == (403, path), (type_, data, r.json)
    assert "organiser" in r.json["error"], r.json
    assert len(events(app, mid)) == n
    return r.json["error"]


def test_only_an_organiser_corrects_the_map_or_overrides_the_set_up(seeded, player, organiser):
    mid = dealt(seeded, player)
    s = engine(seeded, mid).game_state
    city = GM.cities[0]
    # during the set-up: a player may not start the clock on purpose, nor correct a city
    forbidden(seeded, player, mid, "clock.start", {"override": True}, "$.data.override")
    forbidden(seeded, player, mid, "territory.set", {"city": city, "player": s["owner"][city], "units": 9},
              "$.type")
    # a player's plain clock.start is the rules' business (409: the set-up is not over), not a permission
    refused(seeded, player, mid, "clock.start", {}, "type", "set-up is not over")
    refused(seeded, player, mid, "clock.start", {"override": False}, "type", "set-up is not over")
    # the organiser may do both
    fix(seeded, organiser, mid, city, s["owner"][city], 9)
    assert engine(seeded, mid).game_state["units"][city] == 9
    post_event(seeded, organiser, mid, "clock.start", {"override": True})
    # in play, at a player's turn: still the organiser's only
    s = engine(seeded, mid).game_state
    me = s["turn"]["player"]
    mine = ci.held(s, me)[0]
    forbidden(seeded, player, mid, "territory.set", {"city": mine, "player": me, "units": 50}, "$.type")
    # an organiser's correction undone by a player may not be redone by the player
    fix(seeded, organiser, mid, mine, me, 7)
    r = player.post(f"/api/matches/{mid}/undo", {"expected_seq": len(events(seeded, mid))})
    assert r.status_code == 201, r.json
    r = player.post(f"/api/matches/{mid}/redo", {"expected_seq": len(events(seeded, mid))})
    assert (r.status_code, r.json["field"]) == (403, "$.type"), r.json
    r = organiser.post(f"/api/matches/{mid}/redo", {"expected_seq": len(events(seeded, mid))})
    assert r.status_code == 201 and engine(seeded, mid).game_state["units"][mine] == 7, r.json


def test_the_service_refuses_a_correction_from_a_non_organiser(store):
    from companion.base.errors import ForbiddenError
    from companion.services.matches import MatchService
    from companion.services.policy import Caller

    svc = MatchService(store, rng=random.Random(3))
    mid = svc.create("conquest-italy", list(P3))["id"]
    with pytest.raises(ForbiddenError) as err:
        svc.append(mid, "territory.set", {"city": GM.cities[0], "player": "Anna", "units": 3}, by=Caller("player"))
    assert err.value.field == "type"
    with pytest.raises(ForbiddenError) as err:
        svc.append(mid, "clock.start", {"override": True}, by=Caller("player"))
    assert err.value.field == "override"
    assert store.events(mid) == []
    # the CLI, the box and the clock runner write as the organiser (the default)
    svc.append(mid, "clock.start", {"override": True})
    assert [e["type"] for e in store.events(mid)] == ["clock.start"]
