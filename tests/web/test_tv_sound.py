"""The TVs' sound switched from another device (companion/web/tv.py): an organiser silences one table's TV
or every TV; the TV page's stream (``?tv=1``) starts with the setting and carries every change live."""

from tests.web.test_sse import Stream


def _match(organiser, fake_game):
    r = organiser.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"]})
    assert r.status_code == 201, r.json
    return r.json["id"]


def _sound(events):
    return [e[2] for e in events if e[0] == "tv-sound"]


def test_an_organiser_silences_a_table_or_every_tv_and_the_tv_stream_follows(app, organiser, api, fake_game):
    a, b = _match(organiser, fake_game), _match(organiser, fake_game)
    tv_a = Stream(app.test_client(), f"/api/matches/{a}/stream?as=viewer&tv=1")
    tv_b = Stream(app.test_client(), f"/api/matches/{b}/stream?as=viewer&tv=1")
    phone = Stream(app.test_client(), f"/api/matches/{a}/stream")
    first = tv_a.until(lambda ev, p: any(e[0] == "snapshot" for e in ev) and _sound(ev))
    assert _sound(first) == [{"club_off": False, "match_off": False}]  # the head says both
    tv_b.until(lambda ev, p: _sound(ev))
    assert not _sound(phone.until(lambda ev, p: len(ev) >= 1))  # a phone's stream has no such head

    r = organiser.put(f"/api/matches/{a}/tv/sound", {"off": True})
    assert r.status_code == 200 and r.json == {"match_id": a, "off": True, "club_off": False, "match_off": True}
    assert _sound(tv_a.until(lambda ev, p: len(_sound(ev)) >= 2))[-1] == {"match_off": True}
    assert api.get(f"/api/matches/{b}/tv/sound").json["off"] is False  # the other table's TV still sounds
    assert api.get("/api/tv/sound").json == {"off": False, "muted_matches": [a]}

    r = organiser.put("/api/tv/sound", {"off": True})  # every TV
    assert r.status_code == 200 and r.json["off"] is True
    assert _sound(tv_a.until(lambda ev, p: len(_sound(ev)) >= 3))[-1] == {"club_off": True}
    assert _sound(tv_b.until(lambda ev, p: len(_sound(ev)) >= 2))[-1] == {"club_off": True}
    assert api.get(f"/api/matches/{b}/tv/sound").json == {"match_id": b, "off": True, "club_off": True,
                                                          "match_off": False}
    # a TV switched on later starts from the stored setting
    late = Stream(app.test_client(), f"/api/matches/{a}/stream?as=viewer&tv=1")
    assert _sound(late.until(lambda ev, p: _sound(ev))) == [{"club_off": True, "match_off": True}]
    organiser.put("/api/tv/sound", {"off": False})
    organiser.put(f"/api/matches/{a}/tv/sound", {"off": False})
    assert api.get("/api/tv/sound").json == {"off": False, "muted_matches": []}
    for s in (tv_a, tv_b, phone, late):
        s.close()


def test_only_an_organiser_switches_it_and_bad_bodies_name_the_field(app, organiser, player, api, fake_game):
    mid = _match(organiser, fake_game)
    assert api.put("/api/tv/sound", {"off": True}).status_code == 401
    assert player.put(f"/api/matches/{mid}/tv/sound", {"off": True}).status_code == 403
    r = organiser.put("/api/tv/sound", {"off": "yes"})
    assert r.status_code == 400 and r.json["field"] == "$.off"
    r = organiser.put("/api/tv/sound", {})
    assert r.status_code == 400 and r.json["field"].startswith("$")
    assert organiser.put("/api/matches/nope/tv/sound", {"off": True}).status_code == 404
    assert api.get("/api/matches/nope/tv/sound").status_code == 404


def test_openapi_lists_the_tv_sound(organiser):
    doc = organiser.get("/api/openapi.json").json
    assert "put" in doc["paths"]["/api/tv/sound"] and "put" in doc["paths"]["/api/matches/{match_id}/tv/sound"]
    assert "api.tv-sound" in doc["components"]["schemas"]
