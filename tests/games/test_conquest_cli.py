"""conquest-italy commands as real processes: combat, odds, reinforcements, score, map check."""

import csv
import io
import json
import xml.etree.ElementTree as ET

import pytest

from companion.base.resources import schemas_dir

EXAMPLES = schemas_dir() / "examples"


def one_line_error(code, err, *needles):
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], lines[0]


# -- combat ----------------------------------------------------------------------------------------

def test_combat_rule_book_examples(run_cli):
    code, out, _ = run_cli("combat", "--attacker", 6, "--defender", 3, "--attack-dice", "1,5,3",
                           "--defend-dice", "6,2,1")
    assert code == 0
    r = json.loads(out)
    assert r == {"attacker_dice": [5, 3, 1], "defender_dice": [6, 2, 1], "attacker_losses": 2,
                 "defender_losses": 1, "attacker_left": 4, "defender_left": 2, "conquered": False}
    code, out, _ = run_cli("combat", "--attacker", 4, "--defender", 2, "--attack-dice", "6,6,6",
                           "--defend-dice", "6,6")
    r = json.loads(out)
    assert (r["attacker_losses"], r["defender_losses"], r["conquered"]) == (2, 0, False)


def test_combat_conquers(run_cli):
    code, out, _ = run_cli("combat", "--attacker", 3, "--defender", 1, "--attack-dice", "2,2",
                           "--defend-dice", "1")
    assert code == 0 and json.loads(out)["conquered"] is True


def test_combat_rolls_what_is_missing(run_cli):
    code, out, _ = run_cli("combat", "--attacker", 9, "--defender", 5, "--dice", 2, "--defend-dice", "6,6,6")
    assert code == 0
    r = json.loads(out)
    assert len(r["attacker_dice"]) == 2 and r["defender_dice"] == [6, 6, 6]
    assert r["attacker_losses"] == 2  # nothing beats a 6
    code, out, _ = run_cli("combat", "--attacker", 9, "--defender", 5, "--seed", 11)
    code2, out2, _ = run_cli("combat", "--attacker", 9, "--defender", 5, "--seed", 11)
    assert code == code2 == 0 and out == out2
    r = json.loads(out)
    assert len(r["attacker_dice"]) == 3 and len(r["defender_dice"]) == 3


@pytest.mark.parametrize("args, needles", [
    (["--attacker", 1, "--defender", 3], ["--attacker", "at least 2"]),
    (["--attacker", 4, "--defender", 0], ["--defender", "at least 1"]),
    (["--attacker", 3, "--defender", 2, "--attack-dice", "6,6,6", "--defend-dice", "6,6"], ["--attack-dice", "1 to 2"]),
    (["--attacker", 9, "--defender", 2, "--attack-dice", "6", "--defend-dice", "6"], ["--defend-dice", "must roll 2"]),
    (["--attacker", 9, "--defender", 2, "--attack-dice", "6,7", "--defend-dice", "6,1"], ["--attack-dice[1]"]),
    (["--attacker", 9, "--defender", 2, "--attack-dice", "6,x"], ["--attack-dice", "'x'"]),
    (["--attacker", 9, "--defender", 2, "--dice", 4], ["--dice"]),
    (["--attacker", "many", "--defender", 2], ["--attacker"]),
])
def test_combat_refusals(run_cli, args, needles):
    code, out, err = run_cli("combat", *args)
    one_line_error(code, err, *needles)
    assert out == ""


# -- odds ------------------------------------------------------------------------------------------

def test_odds_known_value(run_cli):
    code, out, _ = run_cli("odds", 5, 3)
    assert code == 0
    r = json.loads(out)
    assert r["p_conquer"] == pytest.approx(0.43738, abs=5e-6)
    assert sum(o["p"] for o in r["outcomes"]) == pytest.approx(1.0)
    assert set(r) >= {"p_conquer", "expected_attacker_remaining", "expected_defender_remaining", "outcomes"}


def test_odds_full_size(run_cli):
    code, out, _ = run_cli("odds", 125, 125)
    assert code == 0
    r = json.loads(out)
    assert 0 < r["p_conquer"] < 1 and len(r["outcomes"]) > 200


def test_odds_stop_at(run_cli):
    code, out, _ = run_cli("odds", 10, 10, "--stop-at", 5)
    r = json.loads(out)
    assert r["stop_at"] == 5 and all(o["attacker"] <= 5 or o["defender"] == 0 for o in r["outcomes"])


def test_odds_table_csv(run_cli):
    code, out, _ = run_cli("odds", 20, 20, "--table")
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    assert len(rows) == 21 and rows[0][1:] == [str(d) for d in range(1, 21)]
    assert rows[1][1:] == ["0.000000"] * 20  # one unit cannot attack
    assert rows[5][3] == "0.437383"  # 5 v 3: 0.43738325...
    assert float(rows[20][20]) == pytest.approx(0.08122, abs=1e-5)


def test_odds_target(run_cli):
    code, out, _ = run_cli("odds", 125, 10, "--target", 0.5)
    r = json.loads(out)
    code2, out2, _ = run_cli("odds", r["attacker"] - 1, 10)
    code3, out3, _ = run_cli("odds", r["attacker"], 10)
    assert json.loads(out2)["p_conquer"] < 0.5 <= json.loads(out3)["p_conquer"]
    code, out, _ = run_cli("odds", 3, 10, "--target", 0.5)
    assert code == 0 and json.loads(out)["attacker"] is None


@pytest.mark.parametrize("args, needles", [
    ([126, 3], ["A:", "125"]),
    ([5, 0], ["D:"]),
    ([5, 3, "--stop-at", 0], ["--stop-at"]),
    ([5, 3, "--target", 1.5], ["--target"]),
    ([5, 3, "--target", 0.5, "--table"], ["not allowed"]),
    ([5], ["required"]),
])
def test_odds_refusals(run_cli, args, needles):
    code, out, err = run_cli("odds", *args)
    one_line_error(code, err, *needles)


# -- documents --------------------------------------------------------------------------------------

def test_reinforcements_command(run_cli):
    code, out, _ = run_cli("reinforcements", EXAMPLES / "conquest-italy.reinforcements" / "mixed-set.json")
    assert code == 0
    r = json.loads(out)
    assert (r["base"], r["region_bonus"], r["trade"]["total"], r["total"]) == (3, 3, 14, 20)


def test_reinforcements_from_stdin_and_errors(run_cli):
    code, out, err = run_cli("reinforcements", "-", stdin=json.dumps({"territories": ["Roma", "Gotham"],
                                                                      "units_on_map": 3}))
    one_line_error(code, err, "$.territories[1]", "Gotham")
    code, out, err = run_cli("reinforcements", "-", stdin="{not json")
    one_line_error(code, err, "not valid JSON")


def test_score_command(run_cli):
    code, out, _ = run_cli("score", "conquest-italy", EXAMPLES / "conquest-italy.score" / "objective-completed.json")
    assert code == 0
    r = json.loads(out)
    assert r["ranking"][0] == "Carla" and r["results"][0]["objective"] is True
    assert {"objective_points", "other_points", "place"} <= set(r["players"][0])


def test_score_command_errors_name_the_path(run_cli):
    doc = json.loads((EXAMPLES / "conquest-italy.score" / "end-of-match-4-players.json").read_text())
    doc["owned"]["Bruno"].append(doc["owned"]["Anna"][0])
    code, out, err = run_cli("score", "conquest-italy", "-", stdin=json.dumps(doc))
    one_line_error(code, err, "$.owned.Bruno[", "held by Anna")


def test_map_check_and_svg(run_cli, tmp_path):
    from companion.games.conquest_map import DEFAULT_MAP_PATH

    svg = tmp_path / "italy.svg"
    code, out, _ = run_cli("map", "check", DEFAULT_MAP_PATH, "--svg", svg)
    assert code == 0
    r = json.loads(out)
    assert r["cities"] == 42 and r["svg"] == str(svg)
    ET.fromstring(svg.read_text())


def test_map_check_refuses_a_broken_map(run_cli):
    from companion.games.conquest_map import default_map_doc

    doc = default_map_doc()
    doc["regions"][0]["cities"][0]["borders"].append("Bari")
    code, out, err = run_cli("map", "check", "-", "--game", "conquest-italy", stdin=json.dumps(doc))
    one_line_error(code, err, "$.regions[0].cities[0].borders[2]", "not symmetric")
    code, out, err = run_cli("map", "check", "-", "--game", "conquest-italy", "--cities", 40,
                             stdin=json.dumps(default_map_doc()))
    one_line_error(code, err, "42 cities, 40 expected")


@pytest.mark.parametrize("command", ["combat", "odds", "reinforcements"])
def test_help_texts(run_cli, command):
    code, out, _ = run_cli(command, "--help")
    assert code == 0 and "conquest-italy" in out
