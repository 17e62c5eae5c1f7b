"""The seat rules (docs/rulings.md#seats): one seat per device at a table however many sessions it makes, a
bounded number of sessions per table link, a seat confirmed by an organiser or by the other seated phones,
and a confirmed owner resetting a secret recorded before its phone sat. Phones are test clients with their
own addresses on the club's Wi-Fi (the box's own screen, 127.0.0.1, has no device rule)."""

from companion.games import conquest_italy as ci
from tests.web.conftest import Api

PLAYERS = ["Anna", "Bruno", "Carla"]
CITIES = ci.map_of(None).cities


def table(organiser):
    mid = organiser.post("/api/matches", {"game": "conquest-italy", "players": PLAYERS}).json["id"]
    link = organiser.get(f"/api/matches/{mid}/join").json["url"].split("localhost", 1)[1]
    return mid, link


def phone(app, link, address):
    """A phone scanning the table's code (a fresh browser: no cookie)."""
    c = app.test_client()
    c.environ_base["REMOTE_ADDR"] = address
    r = c.get(link)
    return Api(c), r


def sit(a, mid, player):
    return a.put(f"/api/matches/{mid}/seat", {"player": player})


def events(app, mid):
    return app.extensions["companion"].store.events(mid)


def session_id(organiser, a):
    """The public id of phone ``a``'s session (the organiser's list of phones)."""
    key = a.c.get_cookie("companion_sid").value
    from companion.services.access import hash_secret

    return hash_secret(key)[:12]


def test_a_guest_re_joining_without_a_cookie_takes_one_seat_only(app, organiser):
    """One guest re-joining without a cookie took all three seats."""
    mid, link = table(organiser)
    answers = []
    for player in PLAYERS:
        guest, r = phone(app, link, "10.0.0.66")
        assert r.status_code == 303
        answers.append(sit(guest, mid, player))
    assert answers[0].status_code == 200
    for r in answers[1:]:
        assert r.status_code == 403 and r.json["field"] == "$.player" and "Anna" in r.json["error"], r.json
    seats = organiser.get(f"/api/matches/{mid}/seats").json["seats"]
    assert [s["taken"] for s in seats] == [True, False, False]
    # the other players' phones sit as usual
    for n, player in enumerate(PLAYERS[1:]):
        a, _ = phone(app, link, f"10.0.0.{n + 1}")
        assert sit(a, mid, player).status_code == 200


def test_a_table_link_makes_a_bounded_number_of_sessions(app, organiser):
    mid, link = table(organiser)
    cap = 2 * len(PLAYERS) + 2  # docs/limits.md: twice the players, and two more
    for n in range(cap):
        _, r = phone(app, link, f"10.0.1.{n + 1}")
        assert r.status_code == 303, n
    a, r = phone(app, link, "10.0.1.99")
    assert r.status_code == 403 and a.c.get_cookie("companion_sid") is None
    assert "as many phones as it may" in r.get_data(as_text=True)
    # an organiser scanning it is never refused, and the club's link still works
    assert organiser.c.get(link).status_code == 303


def test_the_owner_of_a_confirmed_seat_resets_a_secret_recorded_before_it_sat(app, organiser, clock):
    """A guest sat as Anna and recorded "Anna's" objective; the organiser moved Anna's phone onto her seat:
    she saw the guest's cities and could not set her own."""
    mid, link = table(organiser)
    guest, _ = phone(app, link, "10.0.0.66")
    assert sit(guest, mid, "Anna").status_code == 200
    fake = [CITIES[0], CITIES[1]]
    r = guest.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": 0,
                                                 "data": {"player": "Anna", "cities": fake}})
    assert r.status_code == 201, r.json
    clock.advance(60)
    anna, _ = phone(app, link, "10.0.0.1")
    assert sit(anna, mid, "Anna").status_code == 409  # the guest holds it
    r = organiser.put(f"/api/matches/{mid}/seats/Anna", {"session": session_id(organiser, anna)})
    assert r.status_code == 200, r.json
    seat = next(s for s in r.json["seats"] if s["player"] == "Anna")
    assert seat["confirmed"] and seat["confirmed_by"] == "organiser"
    mine = anna.get(f"/api/matches/{mid}/conquest/objective").json
    assert mine["objective"] == fake and mine["may_reset"] is True
    assert anna.get(f"/api/matches/{mid}/seats").json["may_reset_secret"] is True
    real = [CITIES[5], CITIES[6], CITIES[7]]
    r = anna.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": 1,
                                                "data": {"player": "Anna", "cities": real, "replace": True}})
    assert r.status_code == 201, r.json
    assert anna.get(f"/api/matches/{mid}/conquest/objective").json["objective"] == real
    clock.advance(60)
    assert guest.get(f"/api/matches/{mid}/conquest/objective").status_code == 403  # no seat any more
    # once: the objective in effect was recorded after her phone sat
    r = anna.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": 2,
                                                "data": {"player": "Anna", "cities": fake, "replace": True}})
    assert r.status_code == 403 and r.json["field"] == "$.data.replace", r.json
    assert anna.get(f"/api/matches/{mid}/conquest/objective").json["may_reset"] is False


def test_the_other_seated_phones_confirm_a_seat(app, organiser, clock):
    mid, link = table(organiser)
    guest, _ = phone(app, link, "10.0.0.66")
    assert sit(guest, mid, "Anna").status_code == 200
    assert guest.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": 0, "data": {
        "player": "Anna", "cities": [CITIES[0]]}}).status_code == 201
    organiser.delete(f"/api/auth/sessions/{session_id(organiser, guest)}")  # the guest is signed out
    clock.advance(60)
    anna, _ = phone(app, link, "10.0.0.1")
    bruno, _ = phone(app, link, "10.0.0.2")
    carla, _ = phone(app, link, "10.0.0.3")
    for a, player in ((anna, "Anna"), (bruno, "Bruno"), (carla, "Carla")):
        assert sit(a, mid, player).status_code == 200
    replace = {"type": "objective.set", "expected_seq": 1,
               "data": {"player": "Anna", "cities": [CITIES[3]], "replace": True}}
    r = anna.post(f"/api/matches/{mid}/events", replace)
    assert r.status_code == 403 and r.json["field"] == "$.data.replace"  # not confirmed yet
    # her page is told it may once her seat is confirmed (it asks again after each event only while so);
    # the others' are told nothing of it
    mine = anna.get(f"/api/matches/{mid}/conquest/objective").json
    assert mine["may_reset"] is False and mine["may_reset_once_confirmed"] is True
    theirs = bruno.get(f"/api/matches/{mid}/conquest/objective").json
    assert theirs["player"] == "Bruno" and not theirs["may_reset"] and not theirs["may_reset_once_confirmed"]
    doc = bruno.get(f"/api/matches/{mid}/seats").json
    entry = next(s for s in doc["seats"] if s["player"] == "Anna")
    assert entry["may_confirm"] and not entry["confirmed"] and entry["needed"] == 1
    assert entry["devices"] and "address" not in str(entry)
    # nobody confirms their own seat, even from a second session of the same device; nor an unseated phone
    assert anna.post(f"/api/matches/{mid}/seats/Anna/confirm").status_code == 403
    again, _ = phone(app, link, "10.0.0.1")
    assert again.post(f"/api/matches/{mid}/seats/Anna/confirm").status_code == 403
    stranger, _ = phone(app, link, "10.0.0.9")
    assert stranger.post(f"/api/matches/{mid}/seats/Anna/confirm").status_code == 403
    r = bruno.post(f"/api/matches/{mid}/seats/Anna/confirm")
    assert r.status_code == 200
    entry = next(s for s in r.json["seats"] if s["player"] == "Anna")
    assert entry["confirmed"] and entry["confirmed_by"] == "players" and entry["confirmed_by_players"] == ["Bruno"]
    mine = anna.get(f"/api/matches/{mid}/conquest/objective").json
    assert mine["may_reset"] is True and mine["may_reset_once_confirmed"] is False
    r = anna.post(f"/api/matches/{mid}/events", replace)
    assert r.status_code == 201, r.json
    mine = anna.get(f"/api/matches/{mid}/conquest/objective").json  # recorded after she sat: hers for good
    assert mine["may_reset"] is False and mine["may_reset_once_confirmed"] is False
    clock.advance(60)
    # Bruno set his own objective after he sat: confirmed or not, he cannot swap it for a better one
    assert bruno.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": 2, "data": {
        "player": "Bruno", "cities": [CITIES[10]]}}).status_code == 201
    clock.advance(60)
    assert anna.post(f"/api/matches/{mid}/seats/Bruno/confirm").status_code == 200
    r = bruno.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": 3, "data": {
        "player": "Bruno", "cities": [CITIES[11]], "replace": True}})
    assert r.status_code == 403, r.json
    # an organiser replaces anyone's
    r = organiser.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": 3, "data": {
        "player": "Bruno", "cities": [CITIES[11]], "replace": True}})
    assert r.status_code == 201, r.json
    # a replace with nothing to replace is the rules' refusal
    r = organiser.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": 4, "data": {
        "player": "Carla", "cities": [CITIES[12]], "replace": True}})
    assert r.status_code == 409 and r.json["field"] == "$.data.replace", r.json
