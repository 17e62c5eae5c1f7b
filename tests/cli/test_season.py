"""``companion season ...`` as a real process: outputs, exit status 2 with one line naming the JSON path."""

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "schemas/examples/season.standings/fan-club-example.json"


def R(player, place, objective=False, eliminated=False):
    return {"player": player, "place": place, "objective": objective, "eliminated": eliminated}


def test_standings_from_a_file_and_from_stdin(run_cli):
    code, out, err = run_cli("season", "standings", EXAMPLE)
    assert code == 0, err
    got = json.loads(out)
    assert set(got) == {"season", "total_matches", "threshold", "standings"}
    assert got["standings"][0] == {"rank": 1, "player": "Anna", "points": 7.5, "matches": 4, "wins": 2,
                                   "eligible": True, "needs": 0}
    assert got["standings"][-1]["rank"] is None
    code, out2, err = run_cli("season", "standings", "-", stdin=EXAMPLE.read_text())
    assert code == 0 and json.loads(out2) == got


def test_standings_with_ratings(run_cli):
    code, out, err = run_cli("season", "standings", EXAMPLE, "--ratings")
    assert code == 0, err
    got = json.loads(out)
    assert len(got["ratings"]) == len(got["standings"]) and {"mu", "sigma", "ordinal"} <= set(got["ratings"][0])


def _doc(*matches, **extra):
    return json.dumps({"season": "s", "matches": list(matches), **extra})


@pytest.mark.parametrize("stdin, needle", [
    (_doc({"id": "m", "date": "2026-01-01", "results": [R("a", 1), R("a", 2), R("c", 3)]}),
     "$.matches[0].results[1].player"),
    (_doc({"id": "m", "date": "2026-01-01", "results": [R("a", 1), R("b", 2), R("c", 4)]}),
     "$.matches[0].results[2].place"),
    (_doc({"id": "m", "date": "2026-01-01", "results": [R("a", 1), R("b", 2), R("c", 0)]}),
     "$.matches[0].results[2].place"),
    (_doc({"id": "m", "date": "2026-01-01", "results": [R("a", 1), R("b", 2)]}), "$.matches[0].results"),
    (_doc({"id": "m", "date": "2026-01-01", "results": [R(f"p{i}", i) for i in range(1, 8)]}),
     "$.matches[0].results"),
    (_doc(threshold=3), "$.threshold"),
    (_doc(points={"4": [1, 2, 3]}), '$.points["4"]'),
    ('{"season": "s"}', "$"),
    ("[1, 2", "not valid JSON"),
])
def test_malformed_input_exits_2_with_one_line_naming_the_path(run_cli, stdin, needle):
    code, out, err = run_cli("season", "standings", "-", stdin=stdin)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err


def test_usage_errors_are_one_line(run_cli):
    for args in (["season", "standings"], ["season", "standings", EXAMPLE, "--season", "x"],
                 ["season", "create", "--club", "c", "--game", "conquest-italy", "--year", "26"]):
        code, out, err = run_cli(*args)
        assert code == 2 and len(err.strip().splitlines()) == 1, (args, err)


def test_export_csv_and_json(run_cli, tmp_path):
    code, out, err = run_cli("season", "export", EXAMPLE)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows[0]["player"] == "Anna" and rows[0]["points"] == "7.5" and rows[0]["rating_mu"]
    code, out, err = run_cli("season", "export", EXAMPLE, "--table", "results")
    assert code == 0 and len(list(csv.DictReader(io.StringIO(out)))) == 18
    code, out, err = run_cli("season", "export", EXAMPLE, "--format", "json")
    assert code == 0, err
    exported = tmp_path / "season.json"
    exported.write_text(out)
    a = json.loads(run_cli("season", "standings", exported)[1])
    b = json.loads(run_cli("season", "standings", EXAMPLE)[1])
    assert a == b
    code, out, err = run_cli("season", "export", EXAMPLE, "-o", tmp_path / "s.csv")
    assert code == 0 and (tmp_path / "s.csv").read_text().startswith("rank,player,points")
    # for an Italian spreadsheet: the byte order mark, ";" and the decimal comma
    code, out, err = run_cli("season", "export", EXAMPLE, "--dialect", "excel-it", "-o", tmp_path / "it.csv")
    text = (tmp_path / "it.csv").read_text(encoding="utf-8")
    assert code == 0 and text.startswith("\ufeffrank;player;points")
    assert list(csv.DictReader(io.StringIO(text[1:]), delimiter=";"))[0]["points"] == "7,5"
    code, out, err = run_cli("season", "export", EXAMPLE, "--dialect", "xls")
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_chart_and_history(run_cli, tmp_path):
    code, out, err = run_cli("season", "chart", EXAMPLE)
    assert code == 0, err
    assert ET.fromstring(out).tag == "{http://www.w3.org/2000/svg}svg"
    code, out, err = run_cli("season", "chart", EXAMPLE, "--player", "Anna", "-o", tmp_path / "c.svg")
    assert code == 0 and (tmp_path / "c.svg").read_text().count("<polyline") == 1
    code, out, err = run_cli("season", "history", "Carla", EXAMPLE)
    assert code == 0, err
    h = json.loads(out)
    assert h["player"] == "Carla" and h["points"] == 2.5 and [x["place"] for x in h["history"]] == [3, 2, 1, 2]
    code, out, err = run_cli("season", "history", "Zed", EXAMPLE)
    assert code == 2 and "player" in err and len(err.strip().splitlines()) == 1


def test_stored_season_flow(run_cli, tmp_path):
    d = ["--data-dir", tmp_path / "db"]
    assert run_cli("season", "club-create", "Our club", *d)[0] == 0
    code, out, err = run_cli("season", "club-rename", "our club", "Fan club", *d)
    assert code == 0 and json.loads(out)["name"] == "Fan club", err
    code, out, err = run_cli("season", "club-rename", "Fan club", "", *d)
    assert code == 2 and "name" in err and len(err.strip().splitlines()) == 1
    code, out, err = run_cli("season", "create", "--club", "fan club", "--game", "conquest-italy",
                             "--year", "2026", *d)
    assert code == 0, err
    sid = json.loads(out)["id"]
    ref = "Fan club/conquest-italy/2026"
    result = json.dumps({"id": "t1", "date": "2026-03-14",
                         "results": [R("Anna", 1, True), R("Bruno", 2), R("Carla", 2), R("Dario", 4, False, True)]})
    code, out, err = run_cli("season", "add-result", ref, "-", *d, stdin=result)
    assert code == 0, err
    code, out, err = run_cli("season", "add-result", ref, "-", *d, stdin=result)
    assert code == 2 and "$.id" in err
    bad = json.dumps({"date": "2026-03-15", "results": [R("Anna", 1), R("Bruno", 3), R("Carla", 3)]})
    code, out, err = run_cli("season", "add-result", sid, "-", *d, stdin=bad)
    assert code == 2 and "$.results[1].place" in err
    code, out, err = run_cli("season", "standings", "--season", ref, *d)
    assert code == 0, err
    got = json.loads(out)
    assert [(r["rank"], r["player"], r["points"]) for r in got["standings"]] == \
        [(1, "Anna", 3), (2, "Bruno", 0), (2, "Carla", 0), (4, "Dario", -2.5)]
    code, out, err = run_cli("season", "club-settings", "Fan club", "-", *d,
                             stdin=json.dumps({"points": {"4": [4, 2, -2, -4]}}))
    assert code == 0, err
    assert json.loads(out)["effective"]["points"]["4"] == [4, 2, -2, -4]
    got = json.loads(run_cli("season", "standings", "--season", sid, *d)[1])
    assert [r["points"] for r in got["standings"]] == [5, 0, 0, -4.5]
    code, out, err = run_cli("season", "settings", sid, "-", *d, stdin='{"threshold": 1.2}')
    assert code == 2 and "threshold" in err
    code, out, err = run_cli("season", "list", *d)
    assert code == 0 and json.loads(out)["seasons"][0]["matches"] == 1
    code, out, err = run_cli("season", "export", "--season", ref, "--format", "json", *d)
    assert code == 0 and json.loads(out)["points"]["4"] == [4, 2, -2, -4]
    assert run_cli("season", "remove-result", ref, "t1", *d)[0] == 0
    code, out, err = run_cli("season", "remove-result", ref, "t1", *d)
    assert code == 2 and "t1" in err
    code, out, err = run_cli("season", "standings", "--season", "Nope/conquest-italy/2026", *d)
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_help_texts(run_cli):
    code, out, err = run_cli("season", "standings", "--help")
    assert code == 0 and "--season" in out and "--ratings" in out
    code, out, err = run_cli("season", "--help")
    assert code == 0 and "30%" in out and "add-result" in out
