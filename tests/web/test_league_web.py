"""`companion league serve`'s pages over two boxes (database files: no Litestream needed): standings as on
one box, each result's venue, the names to check, the CSV and the chart; and a box that cannot be read."""

import csv
import io

import pytest

from companion.services import league_boxes, seasons
from companion.storage import Store


def _box(path, results):
    with Store(path) as store:
        seasons.create_club(store, "Fan Club")
        season = seasons.create_season(store, "Fan Club", "conquest-italy", 2026)
        for mid, day, players in results:
            seasons.add_result(store, season["id"], {
                "id": mid, "date": f"2026-04-{day:02d}",
                "results": [{"player": p, "place": i + 1} for i, p in enumerate(players)]})


@pytest.fixture
def league_app(tmp_path):
    from companion.web.league import League, create_app

    _box(tmp_path / "a.db", [("a1", 1, ["Anna", "Bea", "Carlo"]), ("s", 2, ["Bea", "Anna", "Carlo"])])
    _box(tmp_path / "b.db", [("b1", 3, ["Nicolò", "Anna", "Carlo"]), ("s", 2, ["Bea", "Anna", "Carlo"]),
                             ("b2", 4, ["Nicolo", "Bea", "Anna"])])
    boxes = league_boxes.parse_boxes([f"Roma={tmp_path / 'a.db'}", f"Milano={tmp_path / 'b.db'}"])
    state = League(boxes, tmp_path / "cache", every=60)
    state.refresh()
    return create_app(state), state, tmp_path


def test_the_league_page_shows_the_combined_standings_with_venues_and_what_to_check(league_app):
    app, state, _ = league_app
    page = app.test_client().get("/?lang=en").get_data(as_text=True)
    assert 'id="standings"' in page and "Fan Club conquest-italy 2026" in page
    # the league's standings name the players without links (no box's player pages on this server)
    table = page.split('id="standings"', 1)[1].split("</table>", 1)[0]
    assert '<tr data-player="Anna"' in table and "<a " not in table
    assert 'data-venue="Roma + Milano"' in page and 'data-venue="Milano"' in page and "at Roma" in page
    assert "Nicolo / Nicolò: the same name written differently" in page
    assert "read 20" in page  # each box's last read
    it = app.test_client().get("/?lang=it").get_data(as_text=True)
    assert "contati come giocatori diversi" in it and "a Roma + Milano" in it
    data = app.test_client().get("/api/standings").json
    assert data["total_matches"] == 4
    assert {r["player"]: r["matches"] for r in data["standings"]}["Anna"] == 4


def test_the_csv_and_the_chart_are_the_season_s(league_app):
    app, _, _ = league_app
    c = app.test_client()
    rows = list(csv.DictReader(io.StringIO(c.get("/standings.csv?dialect=plain").get_data(as_text=True))))
    standings = c.get("/api/standings").json["standings"]
    assert [(r["player"], r["matches"]) for r in rows] == [(r["player"], str(r["matches"])) for r in standings]
    assert rows[0]["player"] == "Bea" and set(rows[0]) >= {"rank", "points", "matches", "wins", "eligible"}
    results = list(csv.DictReader(io.StringIO(c.get("/results.csv?dialect=plain").get_data(as_text=True))))
    assert {r["venue"] for r in results} == {"Roma", "Milano", "Roma + Milano"}
    svg = c.get("/chart.svg")
    assert svg.mimetype == "image/svg+xml" and b"<svg" in svg.data


def test_a_box_that_cannot_be_read_keeps_its_last_copy_and_says_since_when(league_app):
    app, state, tmp_path = league_app
    (tmp_path / "b.db").rename(tmp_path / "b.away")
    state.refresh()
    page = app.test_client().get("/?lang=en").get_data(as_text=True)
    assert "unreachable since" in page and "its copy read" in page
    assert app.test_client().get("/api/standings").json["total_matches"] == 4  # the last good copy counts


def test_no_season_yet_answers_503_naming_why(tmp_path):
    from companion.web.league import League, create_app

    with Store(tmp_path / "empty.db"):
        pass
    state = League(league_boxes.parse_boxes([f"A={tmp_path / 'empty.db'}"]), tmp_path / "cache")
    state.refresh()
    app = create_app(state)
    r = app.test_client().get("/api/standings")
    assert r.status_code == 503 and "no box has a season yet" in r.json["error"]
    assert "no box has a season yet" in app.test_client().get("/").get_data(as_text=True)


def test_the_league_page_keeps_the_box_s_headers_and_serves_only_its_hosts(league_app):
    """The league server had no CSP nor frame protection and answered any Host (DNS rebinding: a page of
    another site reading the standings page through the browser of someone at the club)."""
    from companion.web.league import create_app

    app, state, _ = league_app
    c = app.test_client()
    for path in ("/", "/api/standings", "/chart.svg", "/standings.csv?dialect=plain"):
        r = c.get(path)
        assert r.status_code == 200, path
        assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"] and r.headers["X-Frame-Options"] == "DENY"
        assert r.headers["X-Content-Type-Options"] == "nosniff"
    r = c.get("/", headers={"Host": "evil.example"})
    assert r.status_code == 403 and r.json["field"] == "Host", r.data
    assert c.get("/api/standings", headers={"Host": "evil.example:8090"}).status_code == 403
    assert c.get("/healthz", headers={"Host": "evil.example"}).status_code == 200
    assert c.get("/", headers={"Host": "127.0.0.1:8090"}).status_code == 200
    named = create_app(state, ["league.club.example"]).test_client()
    assert named.get("/", headers={"Host": "league.club.example:8090"}).status_code == 200
    assert named.get("/", headers={"Host": "evil.example"}).status_code == 403
