"""One scan to a seat: a match's table link, "Who are you?", seats bound to their phone, player sessions
limited to their table's match, the organiser's seat management, the printable table card and /pick."""

import itertools
import re

import pytest

from tests.web.conftest import Api

P3 = ["Anna", "Bruno", "Carla"]
LAN = {"REMOTE_ADDR": "192.168.1.50"}  # not the Pi's own screen (localhost may show join codes)
ADDRESSES = (f"192.168.1.{n}" for n in itertools.count(100))  # each phone its own (one seat per device)


def new_match(a, game="conquest-italy", players=P3, label="", **options):
    r = a.post("/api/matches", {"game": game, "players": list(players), "options": {"clock": False, **options},
                                "label": label})
    assert r.status_code == 201, r.json
    return r.json["id"]


def table_url(org, mid):
    r = org.get(f"/api/matches/{mid}/join")
    assert r.status_code == 200, r.json
    return r.json["url"][len("http://localhost"):]


def phone(app, url):
    """A new phone (its own address on the Wi-Fi) following a table link."""
    c = app.test_client()
    r = c.get(url, environ_base={"REMOTE_ADDR": next(ADDRESSES)})
    return Api(c), r


@pytest.fixture
def organiser(app):
    a = Api(app.test_client())
    assert a.post("/api/auth/pin", {"pin": "246813", "setup_code": "13572468"}).status_code == 200
    return a


def test_a_match_has_a_short_table_link_shown_to_organisers_and_its_players(app, organiser, player):
    mid = new_match(player)
    url = table_url(organiser, mid)
    assert re.fullmatch(r"/j/[2-9a-z]{12}", url), url
    assert table_url(organiser, mid) == url  # the same link until it expires
    assert player.get(f"/api/matches/{mid}/join").json["url"].endswith(url)
    viewer = Api(app.test_client())
    r = viewer.get(f"/api/matches/{mid}/join", environ_base=LAN)
    assert r.status_code == 401 and r.json["field"] == "Authorization"
    assert viewer.get("/api/matches/nope/join").status_code == 404
    # an organiser's new link for the match replaces the one its QR code shows
    r = organiser.post("/api/auth/join-tokens", {"match_id": mid})
    assert r.status_code == 201 and re.search(r"/j/[2-9a-z]{12}$", r.json["url"])
    assert organiser.get(f"/api/matches/{mid}/join").json["url"] == r.json["url"]


def test_one_scan_asks_who_are_you_and_seats_the_phone(app, organiser, player):
    mid = new_match(player)
    other = new_match(player)
    url = table_url(organiser, mid)
    anna, r = phone(app, url)
    assert r.status_code == 303 and r.headers["Location"] == f"/m/{mid}"
    me = anna.get("/api/auth/me").json
    assert me["role"] == "player" and me["match_id"] == mid and me["seats"] == {}
    page = anna.get(f"/m/{mid}", environ_base=LAN).get_data(as_text=True)
    assert 'id="who-card"' in page and all(f'data-player="{p}"' in page for p in P3)
    # a free seat's button waits for the page's script to wire it (a tap before that would be lost)
    assert all(re.search(rf'<button[^>]*data-player="{p}" data-free="1" disabled>', page) for p in P3)
    r = anna.put(f"/api/matches/{mid}/seat", {"player": "Anna"})
    assert r.status_code == 200 and r.json["seat"] == "Anna"
    assert 'id="who-card"' not in anna.get(f"/m/{mid}", environ_base=LAN).get_data(as_text=True)
    # the seat is bound: a second phone sees it taken and cannot take it
    bruno, _ = phone(app, url)
    page = bruno.get(f"/m/{mid}", environ_base=LAN).get_data(as_text=True)
    free = page.index('data-player="Bruno"')
    assert free < page.index('data-player="Anna"') and "Anna · taken" in page  # free seats first
    r = bruno.put(f"/api/matches/{mid}/seat", {"player": "Anna"})
    assert r.status_code == 409 and r.json["field"] == "$.player" and "organiser" in r.json["error"]
    assert bruno.put(f"/api/matches/{mid}/seat", {"player": "Bruno"}).status_code == 200
    # a seated phone does not move by itself
    r = anna.put(f"/api/matches/{mid}/seat", {"player": "Carla"})
    assert r.status_code == 403 and r.json["field"] == "$.player"
    assert anna.put(f"/api/matches/{mid}/seat", {"player": None}).status_code == 403
    assert anna.put(f"/api/matches/{mid}/seat", {"player": "Anna"}).status_code == 200  # the same: fine
    seats = anna.get(f"/api/matches/{mid}/seats").json
    assert [(s["player"], s["taken"], s["mine"]) for s in seats["seats"]] == [
        ("Anna", True, True), ("Bruno", True, False), ("Carla", False, False)]
    assert "phones" not in seats["seats"][0]  # which phone is whose: organisers only
    # the table's phone is a player of its match only
    r = anna.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": 0,
                                                 "data": {"player": "Anna", "cities": ["Roma"]}})
    assert r.status_code == 201, r.json
    assert anna.post(f"/api/matches/{other}/events", {"type": "objective.set", "expected_seq": 0,
                                                      "data": {"player": "Anna", "cities": ["Roma"]}}).status_code == 401
    assert anna.put(f"/api/matches/{other}/seat", {"player": "Anna"}).status_code == 401
    assert anna.post("/api/matches", {"game": "conquest-italy", "players": P3}).status_code == 401


def test_bad_seat_claims_name_the_field(app, organiser, player):
    mid = new_match(player)
    anna, _ = phone(app, table_url(organiser, mid))
    for body, field in (({"player": "Zoe"}, "$.player"), ({}, "$"), ({"player": 3}, "$.player"),
                        ({"player": "Anna", "x": 1}, "$")):
        r = anna.put(f"/api/matches/{mid}/seat", body)
        assert r.status_code == 400 and r.json["field"] == field, (body, r.json)
    assert anna.put("/api/matches/nope/seat", {"player": "Anna"}).status_code in (401, 404)


def test_the_table_session_ends_with_the_match_or_after_12_hours(app, clock, organiser, player):
    mid = new_match(player)
    url = table_url(organiser, mid)
    anna, _ = phone(app, url)
    assert anna.put(f"/api/matches/{mid}/seat", {"player": "Anna"}).status_code == 200
    r = anna.post(f"/api/matches/{mid}/events", {"type": "objective.completed", "expected_seq": 0,
                                                 "data": {"player": "Anna"}})
    assert r.status_code == 201 and r.json["status"] == "ended"
    # the match has ended: the phone may watch the result but writes nothing more, and says so
    assert anna.get(f"/api/matches/{mid}").status_code == 200
    me = anna.get("/api/auth/me").json
    assert me["role"] == "viewer" and me["match_id"] == mid, me  # it said "player"
    r = anna.post(f"/api/matches/{mid}/undo", {"expected_seq": 1})
    assert r.status_code == 401
    # its table link no longer seats anyone
    late, r = phone(app, url)
    assert r.status_code == 303 and late.get("/api/auth/me").json["role"] == "viewer"
    # 12 hours: a table's session is gone even if its match is still open
    mid2 = new_match(player)
    bruno, _ = phone(app, table_url(organiser, mid2))
    assert bruno.put(f"/api/matches/{mid2}/seat", {"player": "Bruno"}).status_code == 200
    assert bruno.get("/api/auth/me").json["role"] == "player"  # while its match is open
    clock.advance(11.9 * 3600)
    assert bruno.get("/api/auth/me").json["match_id"] == mid2
    clock.advance(0.2 * 3600)
    assert bruno.get("/api/auth/me").json["role"] == "viewer"
    assert organiser.get(f"/api/matches/{mid2}/seats").json["seats"][1]["taken"] is False


def test_organisers_list_move_share_and_free_seats(app, organiser, player):
    mid = new_match(player)
    url = table_url(organiser, mid)
    anna, _ = phone(app, url)
    bruno, _ = phone(app, url)
    assert anna.put(f"/api/matches/{mid}/seat", {"player": "Anna"}).status_code == 200
    assert bruno.put(f"/api/matches/{mid}/seat", {"player": "Bruno"}).status_code == 200
    seats = organiser.get(f"/api/matches/{mid}/seats").json["seats"]
    anna_phone = seats[0]["phones"][0]["session"]
    bruno_phone = seats[1]["phones"][0]["session"]
    # a player may not manage seats
    assert anna.delete(f"/api/matches/{mid}/seats/Bruno").status_code == 403
    assert anna.put(f"/api/matches/{mid}/seats/Bruno", {"session": anna_phone}).status_code == 403
    # move Anna's phone to Carla's seat
    r = organiser.put(f"/api/matches/{mid}/seats/Carla", {"session": anna_phone})
    assert r.status_code == 200
    assert [(s["player"], [p["session"] for p in s["phones"]]) for s in r.json["seats"]] == [
        ("Anna", []), ("Bruno", [bruno_phone]), ("Carla", [anna_phone])]
    assert anna.get(f"/api/matches/{mid}").json["seat"] == "Carla"
    # share: Anna's phone sits as Bruno too (its Carla seat is released), Bruno's phone keeps it
    r = organiser.put(f"/api/matches/{mid}/seats/Bruno", {"session": anna_phone, "share": True})
    assert sorted(p["session"] for p in r.json["seats"][1]["phones"]) == sorted([anna_phone, bruno_phone])
    assert r.json["seats"][2]["phones"] == []
    assert anna.get(f"/api/matches/{mid}").json["seat"] == "Bruno"
    assert bruno.get(f"/api/matches/{mid}").json["seat"] == "Bruno"
    # move without share: the phones that held the seat lose it
    r = organiser.put(f"/api/matches/{mid}/seats/Bruno", {"session": bruno_phone})
    assert [p["session"] for p in r.json["seats"][1]["phones"]] == [bruno_phone]
    assert anna.get(f"/api/matches/{mid}").json["seat"] is None
    # free: the phone is asked again, and may take a free seat once more
    r = organiser.delete(f"/api/matches/{mid}/seats/Bruno")
    assert r.status_code == 200 and r.json["seats"][1]["taken"] is False
    assert bruno.get(f"/api/matches/{mid}").json["seat"] is None
    assert anna.put(f"/api/matches/{mid}/seat", {"player": "Anna"}).status_code == 200
    # bad input names the field
    r = organiser.put(f"/api/matches/{mid}/seats/Bruno", {"session": "Anna"})
    assert r.status_code == 400 and r.json["field"] == "$.session"
    r = organiser.put(f"/api/matches/{mid}/seats/Bruno", {"session": "0123456789ab"})
    assert r.status_code == 404 and r.json["field"] == "$.session"
    r = organiser.put(f"/api/matches/{mid}/seats/Bruno", {"session": bruno_phone, "share": "yes"})
    assert r.status_code == 400 and r.json["field"] == "$.share"
    r = organiser.delete(f"/api/matches/{mid}/seats/Zoe")
    assert r.status_code == 400 and r.json["field"] == "player"
    assert organiser.delete("/api/matches/nope/seats/Anna").status_code == 404


def test_an_organiser_s_own_seat_takes_no_seat_from_a_phone(app, organiser, player):
    mid = new_match(player)
    assert organiser.put(f"/api/matches/{mid}/seat", {"player": "Anna"}).json["seat"] == "Anna"
    anna, r = phone(app, table_url(organiser, mid))
    assert anna.put(f"/api/matches/{mid}/seat", {"player": "Anna"}).status_code == 200
    assert organiser.put(f"/api/matches/{mid}/seat", {"player": None}).json["seat"] is None
    # an organiser scanning a table code stays an organiser
    r = organiser.get(table_url(organiser, mid))
    assert r.status_code == 303 and organiser.get("/api/auth/me").json["role"] == "organiser"


def test_a_phone_joined_by_the_club_link_picks_its_table(app, organiser, player, client):
    mid = new_match(player, label="Tavolo 3")
    page = player.get("/pick").get_data(as_text=True)
    assert f'href="/m/{mid}"' in page and "Tavolo 3" in page and "Free seats: Anna, Bruno, Carla" in page
    # the club-wide phone is asked "Who are you?" on the match page too, and seated once
    assert 'id="who-card"' in player.get(f"/m/{mid}").get_data(as_text=True)
    assert player.put(f"/api/matches/{mid}/seat", {"player": "Carla"}).status_code == 200
    assert "Free seats: Anna, Bruno" in player.get("/pick").get_data(as_text=True)
    # scanning a table's code keeps the club-wide session (and its wider rights)
    r = player.get(table_url(organiser, mid))
    assert r.status_code == 303 and player.get("/api/auth/me").json["match_id"] is None


def test_the_table_card_prints_label_game_qr_and_short_url(app, organiser, player):
    mid = new_match(player, label="Tavolo 7")
    url = table_url(organiser, mid)
    for size, page_size in (("a6", "A6"), ("a4", "A4")):
        r = organiser.get(f"/m/{mid}/card?size={size}")
        html = r.get_data(as_text=True)
        assert r.status_code == 200 and "Tavolo 7" in html and "<svg" in html and url in html
        assert f"size: {page_size}" in html
    r = organiser.get(f"/m/{mid}/card?size=letter", headers={"Accept": "application/json"})
    assert r.status_code == 400 and r.json["field"] == "size"
    assert Api(app.test_client()).get(f"/m/{mid}/card", environ_base=LAN).status_code == 403
    assert organiser.get("/m/nope/card").status_code == 404
    # the match page and the TV page show the table QR code to those who may show it
    assert 'id="table-qr"' in organiser.get(f"/m/{mid}").get_data(as_text=True)
    assert 'id="table-qr"' in organiser.get(f"/m/{mid}/display").get_data(as_text=True)
    assert 'id="table-qr"' in Api(app.test_client()).get(f"/m/{mid}/display").get_data(as_text=True)  # the Pi's TV
    assert 'id="table-qr"' not in Api(app.test_client()).get(f"/m/{mid}/display", environ_base=LAN).get_data(
        as_text=True)


ANDROID = ("Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 "
           "Mobile Safari/537.36")


def test_the_organiser_sees_each_phone_in_words(app, organiser, player, clock):
    """Seats and phones names a phone by what a person recognises: when it signed in, its system and browser
    (only that family is kept, never the whole header), and which one is the organiser's own phone."""
    mid = new_match(player)
    url = table_url(organiser, mid)
    joined = clock.now_iso()
    c = app.test_client()
    c.get(url, environ_base=LAN, headers={"User-Agent": ANDROID})
    anna = Api(c)
    assert anna.put(f"/api/matches/{mid}/seat", {"player": "Anna"}).status_code == 200
    assert organiser.put(f"/api/matches/{mid}/seat", {"player": "Bruno"}).status_code == 200
    seats = organiser.get(f"/api/matches/{mid}/seats").json["seats"]
    (phone,) = seats[0]["phones"]
    assert phone["device"] == "Android · Chrome" and phone["joined_at"] == joined
    assert phone["this_phone"] is False
    assert [p["this_phone"] for p in seats[1]["phones"]] == [True]  # the organiser's own phone
    sessions = {s["id"]: s for s in organiser.get("/api/auth/sessions").json["sessions"]}
    assert sessions[phone["session"]]["device"] == "Android · Chrome"
    assert "Pixel" not in app.config["STORE"].conn().execute("SELECT group_concat(data) FROM web_sessions").fetchone()[0]


def test_the_match_stream_says_each_seat_taken_or_freed_to_the_phones_that_sit_or_may_sit(app, organiser, player):
    """``event: seats``: the names whose seat a phone holds (what "Who are you?" shows) and the caller's own
    seat, in the head of an unseated phone's stream and at each seat taken, given or freed; nothing to a
    viewer (the TV page) and never a phone's session, device or token."""
    from tests.web.test_sse import Stream

    mid = new_match(player)
    url = table_url(organiser, mid)
    anna, _ = phone(app, url)
    bruno, _ = phone(app, url)
    assert bruno.put(f"/api/matches/{mid}/seat", {"player": "Bruno"}).status_code == 200
    seats = lambda ev: [e[2] for e in ev if e[0] == "seats"]  # noqa: E731
    a = Stream(anna.c, f"/api/matches/{mid}/stream")
    b = Stream(bruno.c, f"/api/matches/{mid}/stream")
    tv = Stream(anna.c, f"/api/matches/{mid}/stream?as=viewer")
    try:
        # the head: an unseated phone's card as it is now (after the snapshot), not a seated one's
        assert seats(a.until(lambda ev, p: seats(ev))) == [{"taken": ["Bruno"], "seat": None}]
        assert [e[0] for e in b.until(lambda ev, p: any(e[0] == "snapshot" for e in ev))] == ["snapshot"]
        tv.until(lambda ev, p: any(e[0] == "snapshot" for e in ev))
        carla, _ = phone(app, url)
        assert carla.put(f"/api/matches/{mid}/seat", {"player": "Carla"}).status_code == 200
        assert seats(a.until(lambda ev, p: len(seats(ev)) == 2))[1] == {"taken": ["Bruno", "Carla"], "seat": None}
        assert seats(b.until(lambda ev, p: seats(ev))) == [{"taken": ["Bruno", "Carla"], "seat": "Bruno"}]
        # the organiser frees Bruno's seat: every phone hears it, Bruno's own phone that it sits no more
        assert organiser.delete(f"/api/matches/{mid}/seats/Bruno").status_code == 200
        assert seats(a.until(lambda ev, p: len(seats(ev)) == 3))[2] == {"taken": ["Carla"], "seat": None}
        assert seats(b.until(lambda ev, p: len(seats(ev)) == 2))[1] == {"taken": ["Carla"], "seat": None}
        # Carla's phone signs out: her seat is free again
        assert carla.post("/api/auth/logout", {}).status_code == 200
        assert seats(a.until(lambda ev, p: len(seats(ev)) == 4))[3] == {"taken": [], "seat": None}
        # the TV page's stream (what a viewer sees) heard none of it: the next event is what it gets
        r = organiser.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": 0,
                                                          "data": {"player": "Anna", "cities": ["Roma"]}})
        assert r.status_code == 201, r.json
        assert [e[0] for e in tv.until(lambda ev, p: any(e[0] == "event" for e in ev))] == ["snapshot", "event"]
    finally:
        for s in (a, b, tv):
            s.close()
