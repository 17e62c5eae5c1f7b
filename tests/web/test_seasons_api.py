"""The seasons blueprint (companion/web/seasons.py): JSON API, pages, roles, errors naming the field."""

import csv
import io
import xml.etree.ElementTree as ET

import pytest

from companion.services import seasons as ss


def R(player, place, objective=False, eliminated=False):
    return {"player": player, "place": place, "objective": objective, "eliminated": eliminated}


@pytest.fixture
def season(organiser):
    r = organiser.post("/api/clubs", {"name": "Fan Club"})
    assert r.status_code == 201, r.json
    r = organiser.post("/api/seasons", {"club": "Fan Club", "game": "conquest-italy", "year": 2026})
    assert r.status_code == 201, r.json
    return r.json


def add(organiser, season, results, date="2026-03-14", **extra):
    return organiser.post(f"/api/seasons/{season['id']}/results", {"date": date, "results": results, **extra})


def test_create_club_and_season(organiser, season):
    assert season["club"] == "Fan Club" and season["year"] == 2026
    assert season["effective"]["points"]["4"] == [2, 1, -1, -2] and season["effective"]["threshold"] == 0.3
    listing = organiser.get("/api/seasons").json
    assert [c["name"] for c in listing["clubs"]] == ["Fan Club"]
    assert listing["seasons"][0]["id"] == season["id"] and listing["seasons"][0]["matches"] == 0
    got = organiser.get(f"/api/seasons/{season['id']}").json
    assert got["name"] == season["name"] and got["matches"] == 0


@pytest.mark.parametrize("path, body, status, field", [
    ("/api/clubs", {"name": ""}, 400, "$.name"),
    ("/api/clubs", {"name": "x", "settings": {"threshold": 3}}, 400, "$.settings.threshold"),
    ("/api/clubs", {"name": "x", "settings": {"points": {"4": [1, 2]}}}, 400, '$.settings.points["4"]'),
    ("/api/clubs", {"name": "fan club"}, 409, "$.name"),
    ("/api/seasons", {"club": "Fan Club", "game": "chess", "year": 2026}, 400, "$.game"),
    ("/api/seasons", {"club": "Fan Club", "game": "conquest-italy", "year": 2026}, 409, "$.year"),
    ("/api/seasons", {"club": "Nobody", "game": "conquest-italy", "year": 2026}, 404, "$.club"),
    ("/api/seasons", {"club": "Fan Club", "game": "conquest-italy"}, 400, "$"),
    ("/api/seasons", {"club": "Fan Club", "game": "conquest-italy", "year": "2026"}, 400, "$.year"),
])
def test_bad_bodies_name_the_field(organiser, season, path, body, status, field):
    r = organiser.post(path, body)
    assert r.status_code == status, r.json
    assert r.json["field"] == field and r.json["error"]


def test_a_club_is_renamed_and_keeps_its_seasons(organiser, player, season):
    """The name asked at the first PIN changes later (PUT /api/clubs/<id>): the club keeps its id, its seasons."""
    club = season["club_id"]
    assert player.put(f"/api/clubs/{club}", {"name": "Circolo"}).status_code == 403
    assert organiser.post("/api/clubs", {"name": "Other club"}).status_code == 201
    for body, status, field in [({"name": ""}, 400, "$.name"), ({"name": "   "}, 400, "$.name"),
                                ({"name": "other CLUB"}, 409, "$.name"), ({}, 400, "$")]:
        r = organiser.put(f"/api/clubs/{club}", body)
        assert r.status_code == status and r.json["field"] == field, (body, r.json)
    assert organiser.put("/api/clubs/nope", {"name": "Circolo"}).status_code == 404
    r = organiser.put(f"/api/clubs/{club}", {"name": " Circolo del Dado "})
    assert r.status_code == 200 and r.json["name"] == "Circolo del Dado", r.json
    assert organiser.put(f"/api/clubs/{club}", {"name": "circolo del dado"}).status_code == 200  # its own name
    listing = organiser.get("/api/seasons").json
    assert sorted(c["name"] for c in listing["clubs"]) == ["Other club", "circolo del dado"]
    assert organiser.get(f"/api/seasons/{season['id']}").json["club_id"] == club
    r = organiser.put(f"/api/clubs/{club}", {"name": "Circolo", "settings": {"threshold": 0.5}})
    assert r.status_code == 200 and r.json["settings"] == {"threshold": 0.5}, r.json
    # a refused PUT stores nothing (its settings refused, the club keeps its name too) and names the body's field
    for body, field in [({"name": "Renamed", "settings": {"points": {"4": [1, 2]}}}, '$.settings.points["4"]'),
                        ({"name": "Renamed\nline", "settings": {}}, "$.name"), ({"name": "Null\u0000"}, "$.name"),
                        ({"name": "Sep\u2028"}, "$.name")]:
        r = organiser.put(f"/api/clubs/{club}", body)
        assert r.status_code == 400 and r.json["field"] == field, (body, r.json)
    got = organiser.get(f"/api/clubs/{club}").json
    assert got["name"] == "Circolo" and got["settings"] == {"threshold": 0.5}, got
    for path, body in [("/api/clubs", {"name": "Tab\tclub"}),
                       ("/api/seasons", {"club": "Circolo", "game": "richelieu", "year": 2026, "name": "Line\nbreak"})]:
        r = organiser.post(path, body)  # control characters in no club's or season's name (as in a player's)
        assert r.status_code == 400 and r.json["field"] == "$.name", (body, r.json)


def test_results_and_standings(organiser, season):
    assert add(organiser, season, [R("Anna", 1, True), R("Bruno", 2), R("Carla", 2), R("Dario", 4, False, True)],
               id="t1").status_code == 201
    assert add(organiser, season, [R("Anna", 2), R("Bruno", 1), R("Carla", 3)], date="2026-03-21").status_code == 201
    st = organiser.get(f"/api/seasons/{season['id']}/standings").json
    assert st["total_matches"] == 2 and st["threshold"] == 0.3 and st["min_matches"] == 1
    assert [(r["rank"], r["player"], r["points"], r["matches"], r["wins"]) for r in st["standings"]] == \
        [(1, "Anna", 3, 2, 1), (2, "Bruno", 1, 2, 1), (3, "Carla", -1, 2, 0), (4, "Dario", -2.5, 1, 0)]
    assert {x["player"] for x in st["ratings"]} == {"Anna", "Bruno", "Carla", "Dario"}
    ms = organiser.get(f"/api/seasons/{season['id']}/matches").json["matches"]
    assert [m["id"] for m in ms][0] == "t1" and ms[0]["source"] == "manual"
    assert {r["player"]: r["points"] for r in ms[0]["results"]} == {"Anna": 3, "Bruno": 0, "Carla": 0, "Dario": -2.5}
    # the season page's standings: a row per player, each name a link to the player's season history
    page = organiser.get(f"/seasons/{season['id']}").get_data(as_text=True)
    for name in ("Anna", "Bruno", "Carla", "Dario"):
        assert f'<a href="/seasons/{season["id"]}/players/{name}">{name}</a>' in page


@pytest.mark.parametrize("results, extra, status, field", [
    ([R("a", 1), R("b", 2), R("b", 3)], {}, 400, "$.results[2].player"),
    ([R("a", 1), R("b", 2), R("c", 4)], {}, 400, "$.results[2].place"),
    ([R("a", 1), R("b", 2)], {}, 400, "$.results"),
    ([R("a", 1), R("b", 2), {"player": "c", "place": 3, "objective": "yes"}], {}, 400, "$.results[2].objective"),
    ([R("a", 1), R("b", 2), R("c", 3)], {"date": "2025-05-01"}, 400, "$.date"),
    ([R("a", 1), R("b", 2), R("c", 3)], {"date": "yesterday"}, 400, "$.date"),
    ([R("a", 1), R("b", 2), R("c", 3)], {"id": "t1"}, 409, "$.id"),
])
def test_bad_results_name_the_field(organiser, season, results, extra, status, field):
    assert add(organiser, season, [R("x", 1), R("y", 2), R("z", 3)], id="t1").status_code == 201
    body = {"date": "2026-04-01", "results": results, **extra}
    r = organiser.post(f"/api/seasons/{season['id']}/results", body)
    assert r.status_code == status, r.json
    assert r.json["field"] == field
    assert organiser.get(f"/api/seasons/{season['id']}").json["matches"] == 1


def test_remove_a_result(organiser, season):
    add(organiser, season, [R("a", 1), R("b", 2), R("c", 3)], id="t1")
    r = organiser.c.delete(f"/api/seasons/{season['id']}/results/t1", headers={"Origin": "http://localhost"})
    assert r.status_code == 200 and r.json == {"removed": "t1"}
    r = organiser.c.delete(f"/api/seasons/{season['id']}/results/t1", headers={"Origin": "http://localhost"})
    assert r.status_code == 404


def test_settings_of_club_and_season(organiser, season):
    for i in range(10):
        players = ["a", "b", "x"] if i < 3 else ["a", "b", "c"]
        add(organiser, season, [R(p, j + 1) for j, p in enumerate(players)], id=f"t{i}")
    st = organiser.get(f"/api/seasons/{season['id']}/standings").json
    x = next(r for r in st["standings"] if r["player"] == "x")
    assert x["eligible"] and st["min_matches"] == 3                         # 3 of 10 qualifies
    r = organiser.put(f"/api/clubs/{season['club_id']}/settings", {"threshold": 0.35, "points": {"3": [3, 1, 0]}})
    assert r.status_code == 200, r.json
    assert r.json["effective"]["points"]["3"] == [3, 1, 0] and r.json["effective"]["points"]["4"] == [2, 1, -1, -2]
    st = organiser.get(f"/api/seasons/{season['id']}/standings").json
    x = next(r for r in st["standings"] if r["player"] == "x")
    assert not x["eligible"] and x["needs"] == 1 and x["rank"] is None and st["standings"][-1]["player"] == "x"
    assert st["standings"][0]["points"] == 30
    r = organiser.put(f"/api/seasons/{season['id']}/settings", {"threshold": 0.3})
    assert r.status_code == 200 and r.json["effective"]["threshold"] == 0.3 and r.json["settings"] == {"threshold": 0.3}
    r = organiser.put(f"/api/seasons/{season['id']}/settings", {"points": {"5": [1, 0]}})
    assert r.status_code == 400 and r.json["field"] == '$.points["5"]'
    r = organiser.put(f"/api/seasons/{season['id']}/settings", {"treshold": 0.3})
    assert r.status_code == 400 and r.json["field"] == "$"
    r = organiser.put("/api/seasons/nope/settings", {"threshold": 0.3})
    assert r.status_code == 404


def test_settings_that_orphan_results_are_refused(organiser, season):
    r = organiser.put(f"/api/clubs/{season['club_id']}/settings", {"points": {"2": [1, -1]}})
    assert r.status_code == 200
    assert add(organiser, season, [R("a", 1), R("b", 2)]).status_code == 201
    r = organiser.put(f"/api/clubs/{season['club_id']}/settings", {})
    assert r.status_code == 409 and r.json["field"] == "$.points"


def test_history_exports_and_chart(organiser, season):
    add(organiser, season, [R("Anna", 1, True), R("Bruno", 2), R("Carla", 3)], id="t1", date="2026-01-05")
    add(organiser, season, [R("Bruno", 1), R("Anna", 2), R("Carla", 2)], id="t2", date="2026-01-12")
    h = organiser.get(f"/api/seasons/{season['id']}/players/Anna").json
    assert [(x["match"], x["points"], x["cumulative"]) for x in h["history"]] == [("t1", 2, 2), ("t2", -0.5, 1.5)]
    r = organiser.get(f"/api/seasons/{season['id']}/players/Zed")
    assert r.status_code == 400 and r.json["field"] == "player"
    r = organiser.get(f"/api/seasons/{season['id']}/export.csv?dialect=plain")  # a script's CSV: no BOM
    assert r.status_code == 200 and r.mimetype == "text/csv" and "attachment" in r.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(r.get_data(as_text=True))))
    assert [(x["rank"], x["player"], x["points"]) for x in rows] == \
        [("1", "Anna", "1.5"), ("2", "Bruno", "1"), ("3", "Carla", "-1.5")]
    r = organiser.get(f"/api/seasons/{season['id']}/export.csv?table=results&dialect=plain")
    assert len(list(csv.DictReader(io.StringIO(r.get_data(as_text=True))))) == 6
    assert organiser.get(f"/api/seasons/{season['id']}/export.csv?table=x").json["field"] == "table"
    doc = organiser.get(f"/api/seasons/{season['id']}/export.json").json
    from companion.core import season as core
    assert core.standings_document(doc)["standings"] == \
        organiser.get(f"/api/seasons/{season['id']}/standings").json["standings"]
    r = organiser.get(f"/api/seasons/{season['id']}/chart.svg")
    assert r.status_code == 200 and r.mimetype == "image/svg+xml"
    assert len(ET.fromstring(r.data).findall("{http://www.w3.org/2000/svg}polyline")) == 3
    r = organiser.get(f"/api/seasons/{season['id']}/chart.svg?player=Anna")
    assert len(ET.fromstring(r.data).findall("{http://www.w3.org/2000/svg}polyline")) == 1


def test_unknown_season_is_404(api):
    for path in ("/api/seasons/nope", "/api/seasons/nope/standings", "/api/seasons/nope/chart.svg",
                 "/api/seasons/nope/export.csv", "/api/seasons/nope/players/a"):
        r = api.get(path)
        assert r.status_code == 404 and r.json["field"] == "season", path


def test_roles(api, player, organiser, season):
    body = {"date": "2026-03-14", "results": [R("a", 1), R("b", 2), R("c", 3)]}
    assert api.post(f"/api/seasons/{season['id']}/results", body).status_code == 401
    assert player.post(f"/api/seasons/{season['id']}/results", body).status_code == 403
    assert player.post("/api/clubs", {"name": "Mine"}).status_code == 403
    assert player.put(f"/api/clubs/{season['club_id']}/settings", {}).status_code == 403
    assert api.get(f"/api/seasons/{season['id']}/standings").status_code == 200  # reading is open
    assert player.get("/api/seasons").status_code == 200
    r = organiser.post(f"/api/seasons/{season['id']}/results", body, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403


def test_bearer_token_organiser(client, tokens, season):
    from tests.web.conftest import Api

    bot = Api(client, bearer=tokens["organiser"], origin=None)
    r = bot.post(f"/api/seasons/{season['id']}/results",
                 {"date": "2026-03-14", "results": [R("a", 1), R("b", 2), R("c", 3)]})
    assert r.status_code == 201, r.json


def test_a_finished_app_match_feeds_the_season_through_the_app(app, organiser, season, store, monkeypatch):
    """The app subscribes season_feeder: ending a match over the API records it (the test game from
    tests/services/test_seasons.py stands in for a game with final_ranking)."""
    from companion import games

    monkeypatch.setitem(games.GAMES, "conquest-italy", "tests.services.test_seasons")
    r = organiser.post("/api/matches", {"game": "conquest-italy", "players": ["ada", "bo", "cy"]})
    assert r.status_code == 201, r.json
    mid = r.json["id"]
    r = organiser.post(f"/api/matches/{mid}/events",
                       {"type": "finish", "data": {"ranking": ["bo", "ada", "cy"]}, "expected_seq": 0})
    assert r.status_code == 201, r.json
    st = organiser.get(f"/api/seasons/{season['id']}/standings").json
    assert [(r["player"], r["points"]) for r in st["standings"]] == [("bo", 1), ("ada", 0), ("cy", -1)]
    assert ss.season_matches(store, season["id"])[0]["match_id"] == mid


def test_a_season_made_after_its_match_ends_takes_it_in(app, organiser, monkeypatch):
    """A match left to "this year's season" ends before the season is made: the result says "waiting" (no
    season's points promised); the season, once made, has it in its matches and standings."""
    from companion import games

    monkeypatch.setitem(games.GAMES, "conquest-italy", "tests.services.test_seasons")
    assert organiser.post("/api/clubs", {"name": "Fan Club"}).status_code == 201
    mid = organiser.post("/api/matches", {"game": "conquest-italy", "players": ["ada", "bo", "cy"]}).json["id"]
    none = organiser.post("/api/matches", {"game": "conquest-italy", "players": ["ada", "bo", "cy"],
                                           "season": "none"}).json["id"]
    for m in (mid, none):
        r = organiser.post(f"/api/matches/{m}/events",
                           {"type": "finish", "data": {"ranking": ["bo", "ada", "cy"]}, "expected_seq": 0})
        assert r.status_code == 201, r.json
    res = organiser.get(f"/api/matches/{mid}/result").json
    assert res["season"] is None and res["season_state"] == "waiting"
    assert organiser.get(f"/api/matches/{none}/result").json["season_state"] == "none"
    r = organiser.post("/api/seasons", {"club": "Fan Club", "game": "conquest-italy", "year": 2026})
    assert r.status_code == 201, r.json
    season = r.json
    assert season["taken_in"] == [mid]
    st = organiser.get(f"/api/seasons/{season['id']}/standings").json
    assert st["total_matches"] == 1
    assert [(x["player"], x["points"]) for x in st["standings"]] == [("bo", 1), ("ada", 0), ("cy", -1)]
    res = organiser.get(f"/api/matches/{mid}/result").json
    assert res["season"] == season["name"] and res["season_state"] == "counted"
    # the organiser takes it out, and puts the other one in
    r = organiser.put(f"/api/matches/{mid}/season", {"season": "none"})
    assert r.status_code == 200 and r.json["season_state"] == "none", r.json
    r = organiser.put(f"/api/matches/{none}/season", {"season": season["id"]})
    assert r.status_code == 200 and r.json["season_id"] == season["id"], r.json
    assert organiser.get(f"/api/seasons/{season['id']}/standings").json["total_matches"] == 1
    r = organiser.put(f"/api/matches/{none}/season", {"season": 3})
    assert r.status_code == 400 and r.json["field"] == "$.season", r.json
    # the season page offers the organiser the finished match it does not count, with a button to add it
    html = organiser.get(f"/seasons/{season['id']}").get_data(as_text=True)
    assert f'data-add="{mid}"' in html and f'data-add="{none}"' not in html


# -- pages ---------------------------------------------------------------------------------------------

def test_pages(organiser, api, season):
    for i in range(4):
        add(organiser, season, [R("Anna", 1, True), R("Bruno", 2), R("Carla", 2), R("Dario", 4)], id=f"t{i}")
    add(organiser, season, [R("Anna", 1), R("Bruno", 2), R("Zoe <b>", 3, False, True)], id="t9")
    r = api.get("/seasons")
    assert r.status_code == 200 and season["name"] in r.get_data(as_text=True)
    html = api.get(f"/seasons/{season['id']}").get_data(as_text=True)
    assert 'id="eligibility"' in html and "30%" in html and "(5 matches so far; 2 or more)" in html
    assert "Zoe &lt;b&gt;" in html and "Zoe <b>" not in html  # escaped in the table and in the chart
    assert "Not ranked yet" in html and "1 more" in html
    assert "<svg" in html and "export.csv" in html
    assert 'id="result-form"' not in html  # viewers get no organiser forms
    assert 'id="result-form"' in organiser.get(f"/seasons/{season['id']}").get_data(as_text=True)
    h = api.get(f"/seasons/{season['id']}/players/Anna").get_data(as_text=True)
    assert "Anna" in h and 'id="player-history"' in h
    assert api.get(f"/seasons/{season['id']}/players/Nobody").status_code == 404
    assert api.get("/seasons/nope").status_code == 404
    club = api.get(f"/seasons/clubs/{season['club_id']}").get_data(as_text=True)
    assert "2, 1, -1, -2" in club


def test_pages_in_italian(api, organiser, season):
    add(organiser, season, [R("Anna", 1), R("Bruno", 2), R("Carla", 3)], id="t1")
    html = api.get(f"/seasons/{season['id']}?lang=it").get_data(as_text=True)
    assert "Classifica" in html and "In classifica: chi ha giocato almeno il 30%" in html


def test_openapi_lists_the_season_paths(api):
    doc = api.get("/api/openapi.json").json
    assert "/api/seasons/{season_id}/standings" in doc["paths"]
    assert "season.result" in doc["components"]["schemas"]
    import json
    assert "#/$defs/" not in json.dumps(doc["components"]["schemas"]["season.result"])


def test_pages_in_italian_write_numbers_and_counts_as_italian_does(api, organiser, season):
    """-2,5 with the decimal comma, "dell'unica partita" for one match, matches listed by their label."""
    add(organiser, season, [R("Anna", 1), R("Bruno", 2), R("Carla", 3), R("Dario", 4, False, True)], id="t1")
    html = api.get(f"/seasons/{season['id']}?lang=it").get_data(as_text=True)
    assert "-2,5" in html and "-2.5" not in html
    assert "(1 partita finora;" in html and "1 partite" not in html
    en = api.get(f"/seasons/{season['id']}?lang=en").get_data(as_text=True)
    assert "-2.5" in en and "(1 match so far;" in en and "1 matches" not in en
    h = api.get(f"/seasons/{season['id']}/players/Dario?lang=it").get_data(as_text=True)
    assert "-2,5" in h and "-2.5" not in h


def test_the_season_page_lists_app_matches_by_their_label(app, organiser, season, monkeypatch):
    from companion import games

    monkeypatch.setitem(games.GAMES, "conquest-italy", "tests.services.test_seasons")
    r = organiser.post("/api/matches", {"game": "conquest-italy", "players": ["ada", "bo", "cy"],
                                        "label": "Turno 2 · Tavolo 1"})
    mid = r.json["id"]
    r = organiser.post(f"/api/matches/{mid}/events",
                       {"type": "finish", "data": {"ranking": ["bo", "ada", "cy"]}, "expected_seq": 0})
    assert r.status_code == 201, r.json
    html = organiser.get(f"/seasons/{season['id']}").get_data(as_text=True)
    item = html[html.index('id="season-matches"'):]
    item = item[:item.index("</ul>")]
    assert f'<a href="/m/{mid}">Turno 2 · Tavolo 1</a>' in item
    rid = organiser.get(f"/api/seasons/{season['id']}/matches").json["matches"][0]["id"]
    assert rid not in item.replace(f"data-match=\"{rid}\"", "").replace(f"data-remove=\"{rid}\"", "").replace(f"/m/{mid}", "")


def _lines(html):
    """The season page's chart: {player: stroke} of its lines (their titles name the player) and of its legend."""
    import re

    chart = html[html.index('id="chart"'):]
    chart = chart[:chart.index("</section>")]
    lines = {t: c for c, t in re.findall(r'<polyline fill="none" stroke="(#[0-9a-f]{6})"[^>]*><title>([^:<]+):', chart)}
    legend = dict(re.findall(r'<li data-player="([^"]+)"><svg[^>]*><line [^>]*stroke="(#[0-9a-f]{6})"', chart))
    return chart, lines, legend


@pytest.mark.parametrize("lang", ["en", "it"])
def test_the_season_chart_in_the_players_colours_and_words(app, organiser, season, monkeypatch, lang):
    """The chart draws each player in their own colour (the roster's), else the one they played with at the table,
    two players never in one colour; a season with no match says so in words (no axes drawn "0 1 0"); the
    ratings say in words what they are, the model named in a footnote."""
    from companion import games
    from companion.core.season import PALETTE
    from html import unescape

    from tests.web.test_i18n_complete import catalogues

    cat = catalogues()[lang]
    html = unescape(organiser.get(f"/seasons/{season['id']}?lang={lang}").get_data(as_text=True))
    chart = html[html.index('id="chart"'):html.index('id="chart"') + 400]
    assert cat["season.chart_empty"] in chart and "<svg" not in chart
    svg = unescape(organiser.get(f"/api/seasons/{season['id']}/chart.svg?lang={lang}").get_data(as_text=True))
    assert cat["season.chart_empty"] in svg and "<line" not in svg and "<polyline" not in svg
    assert organiser.post("/api/players", {"club": season["club_id"], "name": "Anna", "colour": "#123456"}).status_code == 201
    monkeypatch.setitem(games.GAMES, "conquest-italy", "tests.services.test_seasons")
    mid = organiser.post("/api/matches", {"game": "conquest-italy", "players": ["Anna", "bo", "cy"],
                                          "colours": {"Anna": "#ff0000", "bo": "#00aa00", "cy": PALETTE[0]}}).json["id"]
    r = organiser.post(f"/api/matches/{mid}/events",
                       {"type": "finish", "data": {"ranking": ["bo", "Anna", "cy"]}, "expected_seq": 0})
    assert r.status_code == 201, r.json
    add(organiser, season, [R("Anna", 1), R("Dario", 2), R("Elsa", 3)], id="t1", date="2026-01-05")
    html = unescape(organiser.get(f"/seasons/{season['id']}?lang={lang}").get_data(as_text=True))
    chart, lines, legend = _lines(html)
    assert lines == legend, (lines, legend)
    assert lines["Anna"] == "#123456" and lines["bo"] == "#00aa00" and lines["cy"] == PALETTE[0]
    assert len(set(lines.values())) == 5 and lines["Dario"] in PALETTE and lines["Elsa"] in PALETTE
    assert cat["season.chart_empty"] not in chart
    # the ratings in words, their model named under them
    card = html[html.index('id="ratings"'):]
    head = card[:card.index("</thead>")]
    assert cat["season.rating_mu"] in head and cat["season.rating_sigma"] in head and "μ" not in head and "σ" not in head
    assert cat["season.ratings"] in html and "OpenSkill" not in cat["season.ratings"]
    note = card[card.index('id="ratings-note"'):]
    assert cat["season.ratings_note"].split(":")[0] in note and "OpenSkill" in note[:note.index("</p>")]
    # the player's own page: their colour
    h = organiser.get(f"/seasons/{season['id']}/players/Anna?lang={lang}").get_data(as_text=True)
    assert 'stroke="#123456"' in h
