"""The five CSV downloads (a season's standings and results, a tournament's standings, a league's standings and
results) open right in a spreadsheet: a UTF-8 byte order mark; in Italian ";" between cells and "-1,5"
(``?dialect=excel-it``, the default of an Italian page), in English "," and "-1.5"; ``?dialect=plain`` for
scripts (no BOM). Each is named after its season, tournament or league, and a name that a spreadsheet would
run as a formula ("=HYPERLINK(…)", "+39…", "-x", "@SUM(…)") comes out as text with a leading apostrophe,
while negative points stay numbers."""

import csv
import io
from urllib.parse import unquote

import pytest

from companion.core import season as core
from tests.web.conftest import Api

EVIL = ["=HYPERLINK(\"http://x\")", "+39 333", "-cmd|' /C calc'!A0", "@SUM(A1)"]


def rows_of(resp, dialect):
    text = resp.get_data(as_text=True)
    if dialect.bom:
        assert text.startswith("\ufeff"), text[:10]
        text = text[1:]
    else:
        assert not text.startswith("\ufeff")
    return list(csv.DictReader(io.StringIO(text), delimiter=dialect.sep))


def names_of(resp) -> str:
    cd = resp.headers["Content-Disposition"]
    assert cd.startswith("attachment; filename=\"")
    return unquote(cd.split("filename*=UTF-8''", 1)[1])


def check_neutralised(rows, column="player"):
    got = {r[column] for r in rows}
    for name in EVIL:
        assert "'" + name in got, (name, got)
        assert name not in got


# -- the cell rule, on its own ------------------------------------------------------------------------------

@pytest.mark.parametrize("value, plain, it", [
    ("=1+1", "'=1+1", "'=1+1"), ("+39", "'+39", "'+39"), ("-x", "'-x", "'-x"), ("@A1", "'@A1", "'@A1"),
    ("\tx", "'\tx", "'\tx"), ("Anna", "Anna", "Anna"), ("a=b", "a=b", "a=b"),
    (-1.5, "-1.5", "-1,5"), (core.Fraction(-3, 2), "-1.5", "-1,5"), (2, "2", "2"), (2.0, "2", "2"),
    (core.CsvNumber("-0.67"), "-0.67", "-0,67"), (None, "", ""),
])
def test_a_cell(value, plain, it):
    assert core.csv_cell(value, core.PLAIN) == plain and core.csv_cell(value, core.EXCEL_IT) == it


# -- a season's two exports ----------------------------------------------------------------------------------

@pytest.fixture
def season(organiser):
    assert organiser.post("/api/clubs", {"name": "Fan Club"}).status_code == 201
    r = organiser.post("/api/seasons", {"club": "Fan Club", "game": "conquest-italy", "year": 2026})
    s = r.json
    players = EVIL
    # the last is eliminated: -2 - 0,5 = -2,5
    r = organiser.post(f"/api/seasons/{s['id']}/results", {"date": "2026-03-14", "results": [
        {"player": p, "place": k + 1, "objective": False, "eliminated": k == 3} for k, p in enumerate(players)]})
    assert r.status_code == 201, r.json
    return s


@pytest.mark.parametrize("table", ["standings", "results"])
def test_a_season_s_csv(organiser, season, table):
    url = f"/api/seasons/{season['id']}/export.csv?table={table}"
    it = organiser.get(url, headers={"Accept-Language": "it"})
    assert it.mimetype == "text/csv" and it.mimetype_params.get("charset") == "utf-8"
    rows = rows_of(it, core.EXCEL_IT)
    check_neutralised(rows)
    assert "-2,5" in {r["points"] for r in rows}  # a negative number stays a number, with the comma
    assert names_of(it) == f"{season['name']} · {'classifica' if table == 'standings' else 'risultati'}.csv"
    en = organiser.get(url + "&dialect=excel-en")
    rows = rows_of(en, core.EXCEL_EN)
    assert "-2.5" in {r["points"] for r in rows}
    check_neutralised(rows)
    plain = rows_of(organiser.get(url + "&dialect=plain"), core.PLAIN)
    check_neutralised(plain)
    assert organiser.get(url + "&dialect=xls").json["field"] == "dialect"


def test_the_cli_s_season_export_is_neutralised_too(organiser, season):
    """``companion season export`` writes core.standings_csv / results_csv as they are (plain)."""
    from companion.services import seasons as ss

    store = organiser.c.application.extensions["companion"].store
    _, rules, matches = ss.season_data(store, season["id"])
    check_neutralised(list(csv.DictReader(io.StringIO(core.standings_csv(core.standings(matches, rules))))))
    check_neutralised(list(csv.DictReader(io.StringIO(core.results_csv(matches, rules)))))


# -- a tournament's standings --------------------------------------------------------------------------------

def test_a_tournament_s_csv(store, fake_game):
    from companion.web.app import create_app

    app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": "13572468"})
    org = Api(app.test_client())
    assert org.post("/api/auth/pin", {"pin": "246813", "setup_code": "13572468"}).status_code == 200
    names = EVIL + ["Anna", "Bruno", "Carla", "Dario"]
    r = org.post("/api/tournaments", {"name": "Coppa d'Autunno", "date": "2026-12-12", "game": fake_game,
                                      "table_size": 4, "rounds": 2, "players": names})
    assert r.status_code == 201, r.json
    tid = r.json["id"]
    it = org.get(f"/api/tournaments/{tid}/standings.csv", headers={"Accept-Language": "it"})
    rows = rows_of(it, core.EXCEL_IT)
    check_neutralised(rows)
    assert names_of(it) == "Coppa d'Autunno · Classifica.csv"
    assert it.headers["Content-Disposition"].startswith('attachment; filename="Coppa-d-Autunno-Classifica.csv"')
    check_neutralised(rows_of(org.get(f"/api/tournaments/{tid}/standings.csv?dialect=plain"), core.PLAIN))
    from companion.core import tournament as T
    cli = list(csv.DictReader(io.StringIO(T.standings_csv(r.json["standings"], as_json=True))))
    check_neutralised(cli)


# -- a league's two exports ----------------------------------------------------------------------------------

@pytest.fixture
def league_client(tmp_path):
    from companion.services import league_boxes
    from companion.services import seasons as season_store
    from companion.storage import Store
    from companion.web.league import League, create_app

    with Store(tmp_path / "a.db") as store:
        season_store.create_club(store, "Fan Club")
        s = season_store.create_season(store, "Fan Club", "conquest-italy", 2026)
        season_store.add_result(store, s["id"], {"id": "a1", "date": "2026-04-01", "results": [
            {"player": p, "place": k + 1, "eliminated": k == 3} for k, p in enumerate(EVIL)]})
    state = League(league_boxes.parse_boxes([f"Roma={tmp_path / 'a.db'}"]), tmp_path / "cache", every=60)
    state.refresh()
    return create_app(state).test_client()


@pytest.mark.parametrize("path", ["/standings.csv", "/results.csv"])
def test_a_league_s_csv(league_client, path):
    it = league_client.get(path + "?lang=it")
    rows = rows_of(it, core.EXCEL_IT)
    check_neutralised(rows)
    assert "-2,5" in {r["points"] for r in rows}
    assert names_of(it).endswith(("classifica.csv", "risultati.csv")) and "Fan Club" in names_of(it)
    check_neutralised(rows_of(league_client.get(path + "?dialect=plain"), core.PLAIN))
