"""/api/players (companion/web/players.py): the roster over HTTP, roles, errors naming the field, a match's
season chosen at creation, "this is me" links, the player page."""

import pytest

from tests.services.test_seasons import ranked_game  # noqa: F401  (fixture: a game whose "finish" ranks)
from tests.web.conftest import ORIGIN


def patch(a, path, body):
    return a.c.patch(path, json=body, headers={"Origin": ORIGIN})


@pytest.fixture
def club(organiser):
    r = organiser.post("/api/clubs", {"name": "Fan Club"})
    assert r.status_code == 201, r.json
    return r.json


def add(organiser, name, **kw):
    r = organiser.post("/api/players", {"name": name, **kw})
    assert r.status_code == 201, r.json
    return r.json


def test_create_list_search_get(organiser, api, club):
    nico = add(organiser, "Nicolò Rossi", colour="#aa0000", short_name="Nico")
    assert nico["club_id"] == club["id"] and nico["short_name"] == "Nico" and nico["colour"] == "#aa0000"
    look = add(organiser, "nicolo rossi")
    assert look["similar"] == [nico["id"]]
    add(organiser, "Anna")
    r = api.get("/api/players?q=NICO")  # viewers read names: case- and accent-insensitive type-ahead
    assert r.status_code == 200 and {p["name"] for p in r.json["players"]} == {"Nicolò Rossi", "nicolo rossi"}
    assert "links" not in api.get(f"/api/players/{nico['id']}").json
    assert organiser.get(f"/api/players/{nico['id']}").json["links"] == []
    assert api.get("/api/players?q=" + "x" * 41).json["field"] == "q"
    assert api.get("/api/players/nope").status_code == 404


@pytest.mark.parametrize("body, status, field", [
    ({"name": ""}, 400, "$.name"),
    ({"name": "Ann", "colour": "blue"}, 400, "$.colour"),
    ({"name": "Ann", "club": "No Such Club"}, 404, "$.club"),
    ({"name": "Ann", "secret": 1}, 400, "$"),
    ({}, 400, "$"),
])
def test_bad_bodies_name_the_field(organiser, club, body, status, field):
    r = organiser.post("/api/players", body)
    assert r.status_code == status and r.json["field"] == field, r.json


def test_the_same_name_twice_is_a_conflict(organiser, club):
    add(organiser, "Ann")
    r = organiser.post("/api/players", {"name": "Ann"})
    assert r.status_code == 409 and r.json["field"] == "$.name"


def test_the_first_player_makes_the_club_then_several_clubs_need_one_named(organiser):
    """A fresh box has no club: its first roster player makes the box's club
    (docs/rulings.md#the-first-roster-player); once there are several clubs a new player names one."""
    r = organiser.post("/api/players", {"name": "Ann"})
    assert r.status_code == 201, r.json
    clubs = organiser.get("/api/seasons").json["clubs"]
    assert [c["name"] for c in clubs] == ["Our club"] and r.json["club_id"] == clubs[0]["id"]
    assert organiser.post("/api/players", {"name": "Bo"}).json["club_id"] == clubs[0]["id"]  # the same club
    organiser.post("/api/clubs", {"name": "B"})
    r = organiser.post("/api/players", {"name": "Cy"})
    assert r.status_code == 400 and r.json["field"] == "$.club"
    assert organiser.post("/api/players", {"name": "Cy", "club": "B"}).status_code == 201


def test_writes_are_for_organisers(player, api, organiser, club):
    ann = add(organiser, "Ann")
    for who, status in ((api, 401), (player, 403)):
        assert who.post("/api/players", {"name": "Bo"}).status_code == status
        assert patch(who, f"/api/players/{ann['id']}", {"name": "Bo"}).status_code == status
        assert who.post("/api/players/merge", {"from": ann["id"], "into": ann["id"]}).status_code == status
        assert who.post(f"/api/players/{ann['id']}/links").status_code == status
        assert who.delete(f"/api/players/{ann['id']}/links").status_code == status
    assert player.get("/api/players").status_code == 200


def _finish(a, game, players, **extra):
    r = a.post("/api/matches", {"game": game, "players": players, **extra})
    assert r.status_code == 201, r.json
    m = r.json
    r = a.post(f"/api/matches/{m['id']}/events", {"type": "finish", "data": {"ranking": players}, "expected_seq": 0})
    assert r.status_code == 201, r.json
    return m


def test_season_chosen_at_creation_rename_and_merge(organiser, player, club, ranked_game):  # noqa: F811
    s = organiser.post("/api/seasons", {"club": club["id"], "game": ranked_game, "year": 2026}).json
    ann = add(organiser, "Ann")
    m1 = _finish(player, ranked_game, ["Ann", "Bo", "Cy"], club=club["id"], roster=[ann["id"], None, None])
    assert m1["options"] == {"club": club["id"], "season": s["id"]}
    m2 = _finish(player, ranked_game, ["Cy", "ann", "Bo"], club=club["id"], season="none")  # no season
    assert m2["options"]["season"] == "none"
    assert organiser.get(f"/api/seasons/{s['id']}").json["matches"] == 1
    r = patch(organiser, f"/api/players/{ann['id']}", {"name": "Anna Bianchi"})
    assert r.status_code == 200 and r.json["name"] == "Anna Bianchi"
    prof = organiser.get(f"/api/players/{ann['id']}").json
    assert [x["match_id"] for x in prof["last"]] == [m1["id"]]
    assert prof["games"][0]["matches"] == 1 and prof["games"][0]["wins"] == 1
    assert prof["seasons"][0]["points"] == 1 and prof["seasons"][0]["season_id"] == s["id"]
    standings = organiser.get(f"/api/seasons/{s['id']}/standings").json["standings"]
    assert standings[0]["player"] == "Anna Bianchi"
    # "ann" of the second match was not on the roster: add it, then merge it into Anna
    players = organiser.get("/api/players").json["players"]
    assert "ann" not in {p["name"] for p in players}
    lower = add(organiser, "ann")
    r = organiser.post("/api/players/merge", {"from": lower["id"], "into": ann["id"]})
    assert r.status_code == 200 and r.json["from"]["name"] == "ann", r.json
    assert r.json["by"].startswith("organiser (session ")
    audit = organiser.get("/api/players/merges").json["merges"]
    assert [(m["from"]["name"], m["into"]["name"]) for m in audit] == [("ann", "Anna Bianchi")]
    assert "by" not in player.get("/api/players/merges").json["merges"][0]
    r = organiser.post("/api/players/merge", {"from": ann["id"], "into": "nope"})
    assert r.status_code == 404 and r.json["field"] == "$.into"


def test_bad_match_creation_names_the_field(player, organiser, club, ranked_game):  # noqa: F811
    r = player.post("/api/matches", {"game": ranked_game, "players": ["A", "B"], "season": "nope"})
    assert r.status_code == 400 and r.json["field"] == "$.season"
    r = player.post("/api/matches", {"game": ranked_game, "players": ["A", "B"], "club": "nope"})
    assert r.status_code == 400 and r.json["field"] == "$.club"
    r = player.post("/api/matches", {"game": ranked_game, "players": ["A", "B"], "roster": ["nope", None]})
    assert r.status_code == 400 and r.json["field"] == "$.roster[0]", r.json
    r = player.post("/api/matches", {"game": ranked_game, "players": ["A", "B"], "roster": [None, None, None]})
    assert r.status_code == 400 and r.json["field"] == "$.roster"
    other = organiser.post("/api/seasons", {"club": club["id"], "game": "conquest-italy", "year": 2026}).json
    r = player.post("/api/matches", {"game": ranked_game, "players": ["A", "B"], "season": other["id"]})
    assert r.status_code == 400 and r.json["field"] == "$.season"


def test_this_is_me_link(app, organiser, club):
    ann = add(organiser, "Ann")
    r = organiser.post(f"/api/players/{ann['id']}/links")
    assert r.status_code == 201
    url = r.json["url"]
    token = url.rsplit("/", 1)[1]
    assert organiser.get(f"/api/players/{ann['id']}").json["links"][0]["sessions"] == 0
    phone = app.test_client()
    r = phone.get(url[len("http://localhost"):])
    assert r.status_code == 303 and r.headers["Location"].endswith(f"/players/{ann['id']}")
    me = phone.get("/api/players/me").json
    assert me["player"]["id"] == ann["id"]
    assert phone.get("/api/auth/me").json["role"] == "player"
    page = phone.get(f"/players/{ann['id']}")
    assert b'id="this-is-me"' in page.data and token.encode() not in page.data
    assert organiser.get(f"/api/players/{ann['id']}").json["links"][0]["sessions"] == 1
    r = organiser.delete(f"/api/players/{ann['id']}/links")
    assert r.json == {"links_revoked": 1, "sessions_ended": 1}
    assert phone.get("/api/players/me").json["player"] is None
    assert phone.get("/api/auth/me").json["role"] == "viewer"
    assert phone.get(url[len("http://localhost"):]).status_code == 404  # an ended link


def test_player_page_and_roster_page(organiser, api, club, ranked_game):  # noqa: F811
    organiser.post("/api/seasons", {"club": club["id"], "game": ranked_game, "year": 2026})
    ann = add(organiser, "Ann", colour="#123456")
    for i in range(3):
        order = ["Ann", "Bo", "Cy"] if i != 1 else ["Bo", "Ann", "Cy"]
        _finish(organiser, ranked_game, order, club=club["id"])
    page = api.get(f"/players/{ann['id']}").data.decode()
    assert "<svg" in page and "polyline" in page  # the rating trend
    assert page.count('data-match="') == 3 and 'href="/m/' in page
    assert 'id="rename-form"' not in page  # viewers see no write controls
    assert 'id="rename-form"' in organiser.get(f"/players/{ann['id']}").data.decode()
    roster_page = api.get("/players").data.decode()
    assert "Ann" in roster_page and "Bo" in roster_page
    assert api.get("/players/nope").status_code == 404
    season_id = organiser.get("/api/seasons").json["seasons"][0]["id"]
    sp = api.get(f"/seasons/{season_id}/players/Ann").data.decode()
    assert f'href="/players/{ann["id"]}"' in sp


def test_pending_matches(organiser, store):
    from companion.services.matches import MatchService

    m = MatchService(store).create("richelieu", ["A", "B", "C"])  # no club yet: no roster
    with store.write() as c:  # what the migration leaves for matches it cannot place
        c.execute("INSERT INTO roster_pending(match_id, reason) VALUES (?, 'no club yet')", (m["id"],))
    assert [p["match_id"] for p in organiser.get("/api/players/pending").json["pending"]] == [m["id"]]
    organiser.post("/api/clubs", {"name": "Fan Club"})
    r = organiser.post(f"/api/players/pending/{m['id']}", {"club": "Fan Club"})
    assert r.status_code == 200 and [p["name"] for p in r.json["players"]] == ["A", "B", "C"]
    assert organiser.get("/api/players/pending").json["pending"] == []
    assert organiser.post(f"/api/players/pending/{m['id']}", {"club": ""}).json["field"] == "$.club"
    audit = organiser.get("/api/players/assignments").json["assignments"]  # one audit line per name placed
    assert [(a["name"], a["seat"], a["created"], a["by"].split()[0]) for a in audit] == [
        ("A", 0, True, "organiser"), ("B", 1, True, "organiser"), ("C", 2, True, "organiser")]


def test_the_roster_page_lists_the_pending_matches_in_words(organiser, store):
    from companion.services.matches import MatchService

    m = MatchService(store).create("richelieu", ["A", "B", "C"])
    with store.write() as c:
        c.execute("INSERT INTO roster_pending(match_id, reason) VALUES (?, 'several clubs')", (m["id"],))
    page = organiser.get("/players").data.decode()
    assert f'data-match="{m["id"]}"' in page and "the box has several clubs" in page
    assert "ci sono più club" in organiser.get("/players?lang=it").data.decode()


def test_a_personal_link_follows_a_merge(app, organiser, club):
    """A phone signed in by the merged-away entry's personal link is the kept entry's phone afterwards: its
    session, its link (a new scan) and its player page all say "this is you" on the entry that stays."""
    dup = add(organiser, "ANN")
    ann = add(organiser, "Ann")
    url = organiser.post(f"/api/players/{dup['id']}/links").json["url"]
    path = url[len("http://localhost"):]
    phone = app.test_client()
    assert phone.get(path).status_code == 303
    assert phone.get("/api/players/me").json["player"]["id"] == dup["id"]
    assert organiser.post("/api/players/merge", {"from": dup["id"], "into": ann["id"]}).status_code == 200
    assert phone.get("/api/players/me").json["player"]["id"] == ann["id"]
    assert b'id="this-is-me"' in phone.get(f"/players/{ann['id']}").data
    assert organiser.get(f"/api/players/{ann['id']}").json["links"][0]["sessions"] == 1
    again = app.test_client()  # the link itself now signs a phone in as the kept entry
    r = again.get(path)
    assert r.status_code == 303 and r.headers["Location"].endswith(f"/players/{ann['id']}")
    assert again.get("/api/players/me").json["player"]["id"] == ann["id"]
    # ending the kept entry's links ends the phone signed in by the merged-away entry's link
    assert organiser.delete(f"/api/players/{ann['id']}/links").json == {"links_revoked": 1, "sessions_ended": 2}


def test_me_resolves_through_the_merge_audit(app, organiser, club, store):
    """A session that still names a merged-away entry (written before the merge moved sessions along) is
    read through the merge audit, a chain of merges included."""
    import json as _json

    a, b, c = add(organiser, "Bea"), add(organiser, "BEA"), add(organiser, "bea")
    url = organiser.post(f"/api/players/{a['id']}/links").json["url"]
    phone = app.test_client()
    phone.get(url[len("http://localhost"):])
    organiser.post("/api/players/merge", {"from": a["id"], "into": b["id"]})
    organiser.post("/api/players/merge", {"from": b["id"], "into": c["id"]})
    with store.write() as conn:  # as if the session had been left behind naming the first entry
        conn.execute("UPDATE web_sessions SET data=? WHERE json_extract(data, '$.me') IS NOT NULL",
                     (_json.dumps({"me": a["id"]}),))
    assert phone.get("/api/players/me").json["player"]["id"] == c["id"]
    assert b'id="this-is-me"' in phone.get(f"/players/{c['id']}").data


def _waiting(store, players, reason="several clubs", finish=None):
    """A match the roster migration left waiting for the roster (as it leaves one: no seat placed)."""
    from companion.services.matches import MatchService

    m = MatchService(store).create("richelieu" if finish is None else finish[0], players)
    if finish is not None:
        MatchService(store).append(m["id"], "finish", {"ranking": finish[1]}, expected_seq=0)
    with store.write() as c:
        c.execute("DELETE FROM match_players WHERE match_id=?", (m["id"],))
        c.execute("INSERT INTO roster_pending(match_id, reason) VALUES (?, ?)", (m["id"], reason))
    return m["id"]


def test_leftovers_are_listed_with_look_alikes_and_placed_one_name_at_a_time(organiser, player, store, ranked_game):  # noqa: F811
    """The names the migration left: each with the entries that look like the same person (never applied by
    itself); one call per name puts it on an existing entry or a new one, with an audit line; the match
    leaves the list when its last name is placed, its seats with their places; organisers only."""
    fan = organiser.post("/api/clubs", {"name": "Fan Club"}).json
    other = organiser.post("/api/clubs", {"name": "Other Club"}).json
    nico = add(organiser, "Nicolò", club=fan["id"])
    other_bo = add(organiser, "Bo", club=other["id"])
    mid = _waiting(store, ["nicolo", "Bo", "Zoe"], finish=(ranked_game, ["Bo", "nicolo", "Zoe"]))
    with store.write() as c:  # a season result recorded without a roster entry
        c.execute("INSERT INTO seasons(id, club_id, game, year, name, settings, created_at) VALUES "
                  "('s9', ?, 'richelieu', 2026, 'Richelieu 2026', '{}', '2026-01-01T00:00:00Z')", (fan["id"],))
        c.execute("INSERT INTO season_matches(season_id, id, date, source, match_id, created_at) VALUES "
                  "('s9', 'h1', '2026-02-01', 'manual', NULL, '2026-02-02T00:00:00Z')")
        c.execute("INSERT INTO season_results(season_id, match, player, place, objective, eliminated) VALUES "
                  "('s9', 'h1', 'NICOLO', 1, 0, 0)")
    assert player.get("/api/players/leftovers").status_code == 403
    doc = organiser.get("/api/players/leftovers").json
    assert [c["name"] for c in doc["clubs"]] == ["Fan Club", "Other Club"]
    match, season = doc["leftovers"]
    assert match["kind"] == "match" and match["match_id"] == mid and match["club_id"] is None
    assert [(n["name"], [s["name"] for s in n["suggested"]]) for n in match["names"]] == [
        ("nicolo", ["Nicolò"]), ("Bo", ["Bo"]), ("Zoe", [])]
    assert match["names"][1]["suggested"][0]["exact"] is True and match["names"][0]["suggested"][0]["exact"] is False
    assert season["kind"] == "season" and season["names"][0]["suggested"][0]["id"] == nico["id"]

    # "nicolo" is Nicolò: the match's club is Fan Club from now on
    r = organiser.post("/api/players/leftovers", {"match_id": mid, "seat": 0, "player_id": nico["id"]})
    assert r.status_code == 200, r.json
    line = r.json["assigned"]
    assert line["name"] == "nicolo" and line["player"] == {"id": nico["id"], "name": "Nicolò"}
    assert line["created"] is False and line["by"].startswith("organiser") and line["seat"] == 0
    match = r.json["leftovers"][0]
    assert match["club_id"] == fan["id"] and match["names"][0]["player_id"] == nico["id"]
    assert match["names"][1]["suggested"] == []  # Bo of the other club is no longer offered
    # Bo of the other club is refused now; a new Bo of Fan Club is made
    r = organiser.post("/api/players/leftovers", {"match_id": mid, "seat": 1, "player_id": other_bo["id"]})
    assert r.status_code == 409 and r.json["field"] == "$.player_id"
    r = organiser.post("/api/players/leftovers", {"match_id": mid, "seat": 1, "new": True, "club": "Other Club"})
    assert r.status_code == 409 and r.json["field"] == "$.club"
    r = organiser.post("/api/players/leftovers", {"match_id": mid, "seat": 1, "new": True})
    assert r.status_code == 200 and r.json["assigned"]["created"] is True, r.json
    assert organiser.post("/api/players/leftovers", {"match_id": mid, "seat": 1, "new": True}).status_code == 409
    r = organiser.post("/api/players/leftovers", {"match_id": mid, "seat": 2, "new": True})
    assert r.status_code == 200 and [x["kind"] for x in r.json["leftovers"]] == ["season"]  # the match is done
    assert [(h["match_id"], h["place"]) for h in organiser.get(f"/api/players/{nico['id']}").json["last"]] == [
        (mid, 2)]  # the seat's place, from the match's log
    # the season result
    r = organiser.post("/api/players/leftovers", {"season_id": "s9", "match": "h1", "name": "NICOLO",
                                                  "player_id": nico["id"]})
    assert r.status_code == 200 and r.json["leftovers"] == []
    audit = organiser.get("/api/players/assignments").json["assignments"]
    assert [(a["name"], a["player"]["name"], a["created"]) for a in audit] == [
        ("nicolo", "Nicolò", False), ("Bo", "Bo", True), ("Zoe", "Zoe", True), ("NICOLO", "Nicolò", False)]
    assert player.get("/api/players/assignments").status_code == 403
    # nothing was merged: the look-alike entries of the two clubs are all still there
    assert sorted(p["name"] for p in organiser.get("/api/players").json["players"]) == ["Bo", "Bo", "Nicolò", "Zoe"]


@pytest.mark.parametrize("body, status, field", [
    ({"match_id": "nope", "seat": 0, "new": True}, 400, "$.match_id"),
    ({"match_id": "M", "seat": 7, "new": True}, 400, "$.seat"),
    ({"match_id": "M", "seat": 0, "player_id": "nope"}, 404, "$.player_id"),
    ({"match_id": "M", "seat": 0}, 400, "$"),
    ({"season_id": "s1", "match": "h1", "name": "Ann", "new": True}, 404, "$.name"),
    ({"match_id": "M", "seat": 0, "new": True, "club": "Nowhere"}, 404, "$.club"),
])
def test_bad_leftover_assignments_name_the_field(organiser, store, body, status, field):
    organiser.post("/api/clubs", {"name": "Fan Club"})
    mid = _waiting(store, ["A", "B", "C"])
    body = {k: (mid if v == "M" else v) for k, v in body.items()}
    r = organiser.post("/api/players/leftovers", body)
    assert (r.status_code, r.json.get("field")) == (status, field), r.json
