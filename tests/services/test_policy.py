"""Who may write and see what in a match (companion/services/policy.py): the rules as pure functions of the
game, the caller and the event or view, and the match service asking them itself on every write path
(append, act, undo, redo), whoever calls it."""

from types import SimpleNamespace

import pytest

from companion.base.errors import ForbiddenError, RuleError
from companion.services import policy
from companion.services.policy import ORGANISER, Caller

PLAYERS = ["Anna", "Bruno"]
ANNA, BRUNO, VIEWER = Caller("player", "Anna"), Caller("player", "Bruno"), Caller("viewer")
SECRETS = SimpleNamespace(OWN_SECRET_EVENT_TYPES=frozenset({"objective.set"}),
                          SECRET_REFUSAL_EVENT_TYPES=frozenset({"objective.completed"}),
                          ORGANISER_EVENTS={"territory.set": None, "clock.start": "override"})
PLAIN = SimpleNamespace()


@pytest.mark.parametrize("caller", [ORGANISER, ANNA, BRUNO, VIEWER])
def test_nobody_sends_the_pis_mark(caller):
    with pytest.raises(ForbiddenError) as exc:
        policy.check_sent_data({"dice": [6, 6], "rolled_by": "pi"})
    assert exc.value.field == "rolled_by"
    policy.check_sent_data({"dice": [6, 6]})
    policy.check_sent_data(None)


def test_corrections_outside_the_rules_are_the_organisers():
    with pytest.raises(ForbiddenError) as exc:
        policy.check_write(SECRETS, PLAYERS, ANNA, "territory.set", {"city": "Roma"})
    assert exc.value.field == "type"
    with pytest.raises(ForbiddenError) as exc:
        policy.check_write(SECRETS, PLAYERS, ANNA, "clock.start", {"override": True})
    assert exc.value.field == "override"
    policy.check_write(SECRETS, PLAYERS, ANNA, "clock.start", {"override": False})  # only a truthy value is
    policy.check_write(SECRETS, PLAYERS, ORGANISER, "territory.set", {"city": "Roma"})
    assert policy.organiser_field(PLAIN, "territory.set", {}) is None  # a game without corrections


def test_the_result_of_a_match_the_phones_follow_is_the_organisers_correction():
    places = {"places": [{"player": "Anna", "place": 1}, {"player": "Bruno", "place": 2}]}
    for caller in (ANNA, VIEWER):
        with pytest.raises(ForbiddenError) as exc:
            policy.check_write(PLAIN, PLAYERS, caller, "result.entered", places)
        assert exc.value.field == "type"
        policy.check_write(PLAIN, PLAYERS, caller, "result.entered", places, result_only=True)  # the table's
    policy.check_write(PLAIN, PLAYERS, ORGANISER, "result.entered", places)


def test_a_players_own_secret_is_recorded_by_that_phone_or_an_organiser():
    policy.check_write(SECRETS, PLAYERS, ANNA, "objective.set", {"player": "Anna"})
    policy.check_write(SECRETS, PLAYERS, ORGANISER, "objective.set", {"player": "Anna"})
    for other in (BRUNO, VIEWER, Caller("player")):  # another seat, a viewer, a phone not seated
        with pytest.raises(ForbiddenError) as exc:
            policy.check_write(SECRETS, PLAYERS, other, "objective.set", {"player": "Anna"})
        assert exc.value.field == "player" and "Anna" in exc.value.message
    # a name not in the match is the rules' to refuse (naming the field), not the policy's
    policy.check_write(SECRETS, PLAYERS, BRUNO, "objective.set", {"player": "Zoe"})


def test_a_refusal_about_another_players_secret_keeps_its_reason():
    assert policy.secret_refused_for(SECRETS, PLAYERS, BRUNO, "objective.completed", {"player": "Anna"}) == "Anna"
    assert policy.secret_refused_for(SECRETS, PLAYERS, ANNA, "objective.completed", {"player": "Anna"}) is None
    assert policy.secret_refused_for(SECRETS, PLAYERS, ORGANISER, "objective.completed", {"player": "Anna"}) is None
    assert policy.secret_refused_for(SECRETS, PLAYERS, BRUNO, "turn.end", {"player": "Anna"}) is None
    assert policy.secret_refused_for(PLAIN, PLAYERS, BRUNO, "objective.completed", {"player": "Anna"}) is None
    quiet = policy.quiet_refusal("Anna")
    assert isinstance(quiet, RuleError) and quiet.field == "player" and "Anna" in quiet.message


def test_the_pis_draws_and_anothers_secret_are_undone_by_whom_they_may():
    roll = {"type": "final.roll", "data": {"dice": [1, 2], "rolled_by": "pi"}}
    secret = {"type": "objective.set", "data": {"player": "Anna", "objective": 3}}
    for last in (roll, secret, None):
        policy.check_undo(SECRETS, ORGANISER, last)
    with pytest.raises(ForbiddenError) as exc:
        policy.check_undo(SECRETS, ANNA, roll)
    assert exc.value.field == "type"
    policy.check_undo(SECRETS, ANNA, secret)  # the owner's own
    with pytest.raises(ForbiddenError) as exc:
        policy.check_undo(SECRETS, BRUNO, secret)
    assert exc.value.field == "expected_seq"
    policy.check_undo(SECRETS, BRUNO, {"type": "point", "data": {"player": "Anna"}})


def test_what_a_phone_sees_of_a_game_with_secrets():
    game = SimpleNamespace(public_view=lambda state, viewer: {"mine": state["secrets"].get(viewer)},
                           public_summary=lambda summary, state, viewer: {"shown": True})
    view = {"game": "g", "state": {"secrets": {"Anna": 1, "Bruno": 2}}, "summary": {"money": 9}}
    assert policy.view_for(game, view, ORGANISER) is view
    seen = policy.view_for(game, view, ANNA)
    assert seen["state"] == {"mine": 1} and seen["summary"] == {"shown": True}
    assert policy.view_for(game, view, VIEWER)["state"] == {"mine": None}
    assert policy.view_for(PLAIN, view, VIEWER) is view


def test_the_events_a_phone_sees():
    event = {"seq": 3, "type": "objective.set", "at": "2026-03-01T20:00:00Z", "data": {"player": "Anna", "n": 4}}
    no_event_hook = SimpleNamespace(public_view=lambda s, v: s)  # default secret types: objective.set
    assert policy.event_for(no_event_hook, event, ANNA) is event
    hidden = policy.event_for(no_event_hook, event, BRUNO)
    assert hidden == {"seq": 3, "type": "objective.set", "at": event["at"], "data": {"player": "Anna"},
                      "hidden": True}
    assert policy.event_for(no_event_hook, event, BRUNO, ended=True) is event  # the end shows every secret
    assert policy.event_for(no_event_hook, event, ORGANISER) is event
    with_hook = SimpleNamespace(public_view=lambda s, v: s, public_event=lambda e, viewer: None)
    assert policy.event_for(with_hook, event, ANNA)["hidden"] is True
    assert policy.event_for(PLAIN, event, VIEWER) is event


def test_exports_of_a_game_with_secrets_are_the_organisers_while_it_is_open():
    game = SimpleNamespace(public_view=lambda s, v: s)
    assert not policy.may_export(game, ANNA, ended=False)
    assert policy.may_export(game, ANNA, ended=True) and policy.may_export(game, ORGANISER, ended=False)
    assert policy.may_export(PLAIN, VIEWER, ended=False)


# -- the service asks the policy itself ----------------------------------------------------------------
@pytest.fixture
def conquest(store):
    import random

    from companion.services.matches import MatchService

    svc = MatchService(store, rng=random.Random(3))
    return svc, svc.create("conquest-italy", ["Anna", "Bruno", "Carla"])["id"]


def test_every_write_path_of_the_service_asks_the_policy(conquest, store):
    svc, mid = conquest
    with pytest.raises(ForbiddenError):
        svc.append(mid, "territory.set", {"city": "Roma", "player": "Anna", "units": 3}, by=BRUNO)
    with pytest.raises(ForbiddenError):
        svc.append(mid, "objective.set", {"player": "Anna", "objective": 1}, by=BRUNO)
    with pytest.raises(ForbiddenError):  # a tracker action too: nobody sends the Pi's mark
        svc.act(mid, "deal", {"rolled_by": "pi"}, expected_seq=0, by=BRUNO)
    assert store.events(mid) == []
    event, _ = svc.act(mid, "deal", {}, expected_seq=0, by=BRUNO)  # the Pi deals: its draw
    assert event["data"]["rolled_by"] == "pi"
    with pytest.raises(ForbiddenError):  # a player may not draw again
        svc.undo(mid, expected_seq=1, by=ANNA)
    svc.undo(mid, expected_seq=1)  # the CLI, the box: the organiser's
    again = svc.redo(mid, expected_seq=2, by=BRUNO)  # a redo is the same draw again, not a new one
    assert again["data"] == event["data"] and again["type"] == "setup.deal"


def test_a_players_secret_asked_about_is_told_to_that_seat_and_the_organisers():
    assert policy.sees_secret_of(ANNA, "Anna") and policy.sees_secret_of(ORGANISER, "Anna")
    assert not policy.sees_secret_of(BRUNO, "Anna") and not policy.sees_secret_of(VIEWER, "Anna")
    assert policy.sees_secret_of(BRUNO, "Anna", ended=True)  # the end turns every secret face up
    game = SimpleNamespace(SECRET_REFUSAL_TEMPLATES=frozenset({"{player} holds no {card}"}))
    naming = RuleError("{player} holds no {card}", "trade", player="Anna", card="Roma")
    plain = RuleError("must be three cards", "trade")
    with pytest.raises(RuleError) as exc:
        policy.check_secret_refusal(game, BRUNO, "Anna", naming)
    assert "Roma" not in exc.value.message and exc.value.field == "player"
    for who, exc_ in ((ANNA, naming), (ORGANISER, naming), (BRUNO, plain)):
        assert policy.check_secret_refusal(game, who, "Anna", exc_) is None  # told as it is


def test_a_ranking_that_counts_secret_objectives_waits_for_the_end_but_for_organisers():
    game = SimpleNamespace(public_view=lambda state, seat: state)
    with pytest.raises(RuleError):
        policy.check_ranking(game, ANNA, ended=False)
    policy.check_ranking(game, ANNA, ended=True)
    policy.check_ranking(game, ORGANISER, ended=False)
    policy.check_ranking(PLAIN, VIEWER, ended=False)  # a game without secrets


def test_a_secret_is_reset_by_an_organiser_or_by_its_confirmed_owner_for_one_recorded_before_it_sat():
    game = SimpleNamespace(OWN_SECRET_EVENT_TYPES=frozenset({"objective.set"}),
                           SECRET_RESETS={"objective.set": "replace"})
    before = [{"seq": 1, "type": "objective.set", "at": "2026-01-01T10:00:00Z", "data": {"player": "Anna"}}]
    reset = {"player": "Anna", "replace": True}
    confirmed = Caller("player", "Anna", sat_at="2026-01-01T11:00:00Z")
    policy.check_write(game, PLAYERS, confirmed, "objective.set", reset, effective=before)
    policy.check_write(game, PLAYERS, ORGANISER, "objective.set", reset, effective=before)
    assert policy.may_reset(game, confirmed, "Anna", None, before)
    early = Caller("player", "Anna", sat_at="2026-01-01T09:00:00Z")  # it recorded the secret itself, seated
    for who, effective in ((ANNA, before), (early, before), (confirmed, []), (BRUNO, before)):
        with pytest.raises(ForbiddenError) as exc:  # not confirmed / recorded after it sat / none yet / not its own
            policy.check_write(game, PLAYERS, who, "objective.set", reset, effective=effective)
        assert exc.value.field == "replace" and "Anna" in exc.value.message
    policy.check_write(game, PLAYERS, ANNA, "objective.set", {"player": "Anna"}, effective=before)  # no reset


# -- playing for another seat (docs/rulings.md#playing-for-another-seat) ---------------------------------
def _placing(svc, mid):
    """After the Pi's deal: whose placement is due and one of that player's cities."""
    st = svc.fold(mid).game_state
    p = st["next_placer"]
    return p, next(c for c, o in st["owner"].items() if o == p)


def test_a_move_for_another_seat_keeps_whose_phone_wrote_it_and_its_seat_undoes_it(conquest, store):
    svc, mid = conquest
    box = svc.act(mid, "deal", {}, expected_seq=0)[0]
    assert "by" not in box  # the box's own write: no phone
    p, city = _placing(svc, mid)
    helper = next(x for x in ["Anna", "Bruno", "Carla"] if x != p)
    e = svc.append(mid, "setup.place", {"player": p, "placements": {city: 5}}, expected_seq=1,
                   by=Caller("player", helper, phone=True))
    assert e["by"] == {"role": "player", "seat": helper, "for": p}
    assert store.events(mid)[-1]["by"] == e["by"]  # kept with the event
    doc = store.export_match(mid)
    assert doc["events"][-1]["by"] == e["by"] and "by" not in doc["events"][0]
    u = svc.undo(mid, expected_seq=2, by=Caller("player", p, phone=True))  # the helped seat takes it back
    assert u["by"] == {"role": "player", "seat": p}
    own = svc.append(mid, "setup.place", {"player": p, "placements": {city: 5}}, expected_seq=3,
                     by=Caller("player", p, phone=True))
    assert own["by"] == {"role": "player", "seat": p}  # its own move: no "for"


def test_each_phone_plays_its_own_seat_when_the_organiser_says_so(conquest, store):
    from companion.base.errors import InputError

    svc, mid = conquest
    with pytest.raises(InputError) as exc:
        svc.set_phones(mid, "everyone")
    assert exc.value.field == "phones"
    svc.set_phones(mid, "own-seat")
    svc.act(mid, "deal", {}, expected_seq=0, by=Caller("player", phone=True))  # the table's event: anyone's
    p, city = _placing(svc, mid)
    helper = next(x for x in ["Anna", "Bruno", "Carla"] if x != p)
    move = {"player": p, "placements": {city: 5}}
    with pytest.raises(ForbiddenError) as exc:
        svc.append(mid, "setup.place", move, expected_seq=1, by=Caller("player", helper, phone=True))
    assert exc.value.field == "player" and helper in exc.value.message and p in exc.value.message
    with pytest.raises(ForbiddenError) as exc:  # a phone with no seat
        svc.append(mid, "setup.place", move, expected_seq=1, by=Caller("player", phone=True))
    assert exc.value.field == "player"
    assert len(store.events(mid)) == 1
    e = svc.append(mid, "setup.place", move, expected_seq=1, by=Caller("organiser", phone=True))
    assert e["by"] == {"role": "organiser", "for": p}  # the organiser's phone records for anyone, shown
    with pytest.raises(ForbiddenError) as exc:  # nor may another seat's phone undo it
        svc.undo(mid, expected_seq=2, by=Caller("player", helper, phone=True))
    assert exc.value.field == "expected_seq"
    svc.undo(mid, expected_seq=2, by=Caller("player", p, phone=True))
    svc.append(mid, "setup.place", move, expected_seq=3, by=Caller("player", p, phone=True))
    svc.set_phones(mid, "any-seat")  # back to the default: the option goes
    assert "phones" not in store.get_match(mid)["options"]


def test_a_conquest_combat_acts_for_the_owner_of_the_city_it_leaves():
    from companion.games import conquest_italy as ci

    state = {"owner": {"Roma": "Anna", "Napoli": "Bruno"}}
    assert policy.acting_seat(ci, PLAYERS, state, "combat", {"from": "Roma", "to": "Napoli"}) == ("Anna", "from")
    assert policy.acting_seat(ci, PLAYERS, state, "reinforce", {"player": "Bruno"}) == ("Bruno", "player")
    assert policy.acting_seat(ci, PLAYERS, state, "setup.deal", {"owner": {}}) == (None, "player")


@pytest.mark.parametrize("game", ["conquest-italy", "richelieu", "rome-is-burning", "web-of-power"])
def test_every_game_s_move_for_another_seat_says_so_and_the_helped_seat_undoes_it(store, game):
    """Each game's first move of a seat in a legal match (its playthrough), recorded from another seat's phone:
    the event says for whom (by.for); set to each phone plays its own seat, the writer's phone is refused
    (code own_seat) and may not undo it, the helped seat's phone may (docs/rulings.md#playing-for-another-seat)."""
    import random

    from companion.services.matches import MatchService
    from tests.browser.test_tv_screens import playthrough

    players, options, events = playthrough(game, 3)
    svc = MatchService(store, rng=random.Random(3))
    mid = svc.create(game, players, options)["id"]
    module = svc.fold(mid).module
    for e in events:
        f = svc.fold(mid)
        helped = policy.acting_seat(module, players, f.game_state, e["type"], e["data"])[0]
        if helped is not None and not policy.is_pi_roll(e):
            break
        svc.append(mid, e["type"], e["data"], expected_seq=f.last_seq)
    else:
        pytest.fail(f"{game}: no move of a seat in its playthrough")
    n = svc.fold(mid).last_seq
    helper = next(p for p in players if p != helped)
    phone = Caller("player", helper, phone=True)
    made = svc.append(mid, e["type"], e["data"], expected_seq=n, by=phone)
    assert made["by"] == {"role": "player", "seat": helper, "for": helped}, (game, e)
    svc.set_phones(mid, "own-seat")
    with pytest.raises(ForbiddenError) as exc:
        svc.undo(mid, expected_seq=n + 1, by=phone)
    assert exc.value.code == "own_seat" and exc.value.field == "expected_seq"
    u = svc.undo(mid, expected_seq=n + 1, by=Caller("player", helped, phone=True))
    assert u["by"] == {"role": "player", "seat": helped}
    with pytest.raises(ForbiddenError) as exc:
        svc.append(mid, e["type"], e["data"], expected_seq=n + 2, by=phone)
    assert exc.value.code == "own_seat" and exc.value.to_json()["code"] == "own_seat"
    assert helper in exc.value.message and helped in exc.value.message
    own = svc.append(mid, e["type"], e["data"], expected_seq=n + 2, by=Caller("player", helped, phone=True))
    assert "for" not in own["by"]
