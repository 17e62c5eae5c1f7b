"""Undo and redo through the API: everything the Pi draws at random (dice, deals, the turn's card) is
undone only by an organiser (a player who dislikes a draw may not draw again: docs/rulings.md, "The Pi's
draws"), nobody sends the Pi's mark, redo re-appends the most recent undo's event (the same draw) while
nothing came after it."""

from tests.web.test_trackers_api import P3, attack, dealt, events, new_match, to_turn  # noqa: F401
from tests.web.test_trackers_api import seeded  # noqa: F401  (fixture)


def pi_combat(app, player, mid):
    s = to_turn(app, player, mid)
    src, dst = attack(s, "Anna")
    seq = len(events(app, mid))
    r = player.post(f"/api/matches/{mid}/conquest/combat", {"expected_seq": seq, "data": {"from": src, "to": dst}})
    assert r.status_code == 201, r.json
    return r.json["event"]


def test_the_pis_combat_roll_is_marked_and_only_an_organiser_undoes_it(seeded, player, organiser):
    mid = dealt(seeded, player)
    e = pi_combat(seeded, player, mid)
    assert e["data"]["rolled_by"] == "pi"
    n = len(events(seeded, mid))
    r = player.post(f"/api/matches/{mid}/undo", {"expected_seq": n})
    assert r.status_code == 403, r.json
    assert "organiser" in r.json["error"] and "Pi drew" in r.json["error"]
    assert len(events(seeded, mid)) == n  # nothing stored
    r = organiser.post(f"/api/matches/{mid}/undo", {"expected_seq": n})
    assert r.status_code == 201, r.json
    assert events(seeded, mid)[-1]["type"] == "undo"


def test_dice_rolled_at_the_table_are_undone_by_a_player(seeded, player):
    mid = dealt(seeded, player)
    s = to_turn(seeded, player, mid)
    src, dst = attack(s, "Anna")
    n = len(events(seeded, mid))
    r = player.post(f"/api/matches/{mid}/conquest/combat", {"expected_seq": n, "data": {
        "from": src, "to": dst, "attack_dice": [3], "defend_dice": [4]}})
    assert r.status_code == 201, r.json
    assert "rolled_by" not in r.json["event"]["data"]
    r = player.post(f"/api/matches/{mid}/undo", {"expected_seq": n + 1})
    assert r.status_code == 201, r.json


def test_rome_move_rolled_by_the_pi_needs_an_organiser_to_undo(seeded, player, organiser):
    mid = new_match(player, "rome-is-burning")
    assert player.post(f"/api/matches/{mid}/rome/deal", {"expected_seq": 0, "data": {"first": "Bruno"}}).status_code == 201
    r = player.post(f"/api/matches/{mid}/rome/move", {"expected_seq": 1, "data": {"player": "Bruno", "direction": "cw"}})
    assert r.status_code == 201 and r.json["event"]["data"]["rolled_by"] == "pi"
    assert player.post(f"/api/matches/{mid}/undo", {"expected_seq": 2}).status_code == 403
    assert organiser.post(f"/api/matches/{mid}/undo", {"expected_seq": 2}).status_code == 201


def test_redo_appends_the_undone_event_again(seeded, player, organiser, api):
    mid = dealt(seeded, player)
    e = pi_combat(seeded, player, mid)
    n = len(events(seeded, mid))
    before = organiser.get(f"/api/matches/{mid}").json["view"]["state"]
    assert organiser.post(f"/api/matches/{mid}/undo", {"expected_seq": n}).status_code == 201
    assert api.post(f"/api/matches/{mid}/redo", {"expected_seq": n + 1}).status_code == 401  # a viewer
    r = player.post(f"/api/matches/{mid}/redo", {"expected_seq": n + 1})  # a player may redo the Pi's roll
    assert r.status_code == 201, r.json
    again = events(seeded, mid)[-1]
    assert again["seq"] == n + 2 and again["type"] == "combat" and again["data"] == e["data"]  # the same dice
    assert r.json["view"]["state"]["units"] == before["units"]
    # only the most recent undo, once: now the last event is not an undo
    r = player.post(f"/api/matches/{mid}/redo", {"expected_seq": n + 2})
    assert r.status_code == 409 and r.json["field"] == "$.type" and "nothing to redo" in r.json["error"]


def test_redo_is_refused_when_something_was_recorded_after_the_undo(seeded, player, organiser):
    mid = new_match(player, "rome-is-burning")
    assert player.post(f"/api/matches/{mid}/rome/deal", {"expected_seq": 0, "data": {"first": "Bruno"}}).status_code == 201
    assert organiser.post(f"/api/matches/{mid}/undo", {"expected_seq": 1}).status_code == 201  # the Pi's deal
    # a stale phone (it saw seq 1): a conflict, nothing stored
    r = player.post(f"/api/matches/{mid}/redo", {"expected_seq": 1})
    assert r.status_code == 409 and r.json["field"] == "expected_seq"
    assert player.post(f"/api/matches/{mid}/rome/deal", {"expected_seq": 2, "data": {"first": "Anna"}}).status_code == 201
    r = player.post(f"/api/matches/{mid}/redo", {"expected_seq": 3})
    assert r.status_code == 409 and "nothing to redo" in r.json["error"]
    assert [e["type"] for e in events(seeded, mid)] == ["turn.setup", "undo", "turn.setup"]


def test_two_undos_redo_the_second(seeded, player, organiser):
    from tests.web.test_trackers_api import engine, post_event
    from companion.games import conquest_italy as ci

    mid = dealt(seeded, player)
    s = engine(seeded, mid).game_state
    p = s["next_placer"]
    city = next(c for c in ci.map_of(None).cities if s["owner"][c] == p)
    post_event(seeded, player, mid, "setup.place", {"player": p, "placements": {city: min(5, s["reserve"][p])}})
    assert player.post(f"/api/matches/{mid}/undo", {"expected_seq": 2}).status_code == 201  # the placement
    assert player.post(f"/api/matches/{mid}/undo", {"expected_seq": 3}).status_code == 403  # the Pi's deal
    assert organiser.post(f"/api/matches/{mid}/undo", {"expected_seq": 3}).status_code == 201
    r = player.post(f"/api/matches/{mid}/redo", {"expected_seq": 4})
    assert r.status_code == 201, r.json
    assert events(seeded, mid)[-1]["type"] == "setup.deal"  # the second undo's event, not the first's
    assert events(seeded, mid)[-1]["data"] == events(seeded, mid)[0]["data"]


def test_every_draw_of_the_pi_is_the_pi_s_a_player_cannot_draw_again(seeded, player, organiser):
    """Undo then a new draw gave 8 different turn cards in 8 tries, 10 conquest deals in 10 and 6 Rome deals
    in 6: a player's undo of any of them is refused now, and a redo after an organiser's undo records the
    same draw."""
    from tests.web.test_conquest_turns import conquest_now, end_turn, reinforce, started_match

    deals = {}
    for game, path, data in (("conquest-italy", "conquest/deal", {}), ("rome-is-burning", "rome/deal", {"first": "Anna"})):
        mid = new_match(player, game)
        r = player.post(f"/api/matches/{mid}/{path}", {"expected_seq": 0, "data": data})
        assert r.status_code == 201 and r.json["event"]["data"]["rolled_by"] == "pi", (game, r.json)
        deals[game] = r.json["event"]["data"]
        r = player.post(f"/api/matches/{mid}/undo", {"expected_seq": 1})
        assert r.status_code == 403 and r.json["field"] == "$.type" and "Pi drew" in r.json["error"], (game, r.json)
        assert len(events(seeded, mid)) == 1
        for n in range(3):  # an organiser's undo, a player's redo: the same deal every time
            assert organiser.post(f"/api/matches/{mid}/undo", {"expected_seq": 1 + 2 * n}).status_code == 201
            r = player.post(f"/api/matches/{mid}/redo", {"expected_seq": 2 + 2 * n})
            assert r.status_code == 201 and r.json["event"]["data"] == deals[game], game
    # the turn's card the Pi draws as a turn with a conquest ends
    mid = started_match(seeded, player)
    reinforce(seeded, player, mid)
    conquest_now(seeded, player, mid, organiser)
    end_turn(seeded, player, mid, "Anna")
    e = events(seeded, mid)[-1]
    assert e["type"] == "turn.end" and e["data"]["rolled_by"] == "pi" and e["data"]["card"]
    n = e["seq"]
    cards = set()
    for i in range(8):
        assert player.post(f"/api/matches/{mid}/undo", {"expected_seq": n + 2 * i}).status_code == 403
        assert organiser.post(f"/api/matches/{mid}/undo", {"expected_seq": n + 2 * i}).status_code == 201
        r = player.post(f"/api/matches/{mid}/redo", {"expected_seq": n + 2 * i + 1})
        assert r.status_code == 201, r.json
        cards.add(events(seeded, mid)[-1]["data"]["card"])  # (a hand's card is hidden from other phones)
    assert cards == {e["data"]["card"]}


def test_nobody_sends_the_pi_s_mark(seeded, player, organiser):
    mid = dealt(seeded, player)
    s = to_turn(seeded, player, mid)
    src, dst = attack(s, "Anna")
    n = len(events(seeded, mid))
    forged = {"from": src, "to": dst, "attack_dice": [6], "defend_dice": [1], "rolled_by": "pi"}
    for who in (player, organiser):
        r = who.post(f"/api/matches/{mid}/events", {"type": "combat", "expected_seq": n, "data": forged})
        assert r.status_code == 403 and r.json["field"] == "$.data.rolled_by", r.json
        r = who.post(f"/api/matches/{mid}/conquest/combat", {"expected_seq": n, "data": forged})
        assert r.status_code == 403 and r.json["field"] == "$.data.rolled_by", r.json
    assert len(events(seeded, mid)) == n
