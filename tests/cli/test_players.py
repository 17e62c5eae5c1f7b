"""companion players: list, add, rename, merge, merges, pending, assign; bad input exits 2 with one line."""

import json


def test_players_cli(run_cli):
    assert run_cli("season", "club-create", "Fan Club")[0] == 0
    code, out, err = run_cli("players", "add", "Nicolò Rossi", "--colour", "#AA0000")
    assert code == 0, err
    nico = json.loads(out)
    assert nico["colour"] == "#aa0000"
    code, out, err = run_cli("players", "add", "NICOLO ROSSI")
    assert code == 0 and json.loads(out)["similar"] == [nico["id"]]
    code, out, err = run_cli("players", "list", "--search", "nico")
    assert code == 0 and {p["name"] for p in json.loads(out)["players"]} == {"Nicolò Rossi", "NICOLO ROSSI"}
    code, out, err = run_cli("players", "rename", "Nicolò Rossi", "Nicolò Bianchi")
    assert code == 0 and json.loads(out)["id"] == nico["id"], err
    code, out, err = run_cli("players", "merge", "NICOLO ROSSI", nico["id"])
    assert code == 0, err
    assert json.loads(out)["from"]["name"] == "NICOLO ROSSI" and json.loads(out)["by"] == "organiser (cli)"
    code, out, err = run_cli("players", "merges")
    assert code == 0 and json.loads(out)["merges"][0]["into"]["name"] == "Nicolò Bianchi"
    code, out, err = run_cli("players", "pending")
    assert code == 0 and json.loads(out) == {"pending": []}
    code, out, err = run_cli("players", "assignments")
    assert code == 0 and json.loads(out) == {"assignments": []}


def test_bad_input_exits_2_with_one_line(run_cli):
    code, out, err = run_cli("players", "add", "Ann")  # no database yet
    assert code == 2 and err.count("\n") == 1 and "--data-dir" in err
    assert run_cli("season", "club-create", "Fan Club")[0] == 0
    for args, word in ((("players", "add", "Ann", "--colour", "red"), "colour"),
                       (("players", "add", "   "), "name"),
                       (("players", "rename", "Nobody", "X"), "Nobody"),
                       (("players", "merge", "A", "B"), "'A'"),
                       (("players", "list", "--club", "Nope"), "Nope"),
                       (("players", "assign", "m1", "--club", "Fan Club"), "m1"),
                       (("players", "frobnicate"), "invalid choice")):
        code, out, err = run_cli(*args)
        assert code == 2 and err.count("\n") == 1 and word in err, (args, err)
    assert run_cli("players", "add", "Ann")[0] == 0
    code, out, err = run_cli("players", "add", "Ann")
    assert code == 2 and "already" in err
