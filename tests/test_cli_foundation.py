import json

import pytest

from companion.cli import main


def test_help_lists_commands(run_cli):
    code, out, err = run_cli("--help")
    assert code == 0 and "match" in out and "backup" in out


@pytest.mark.parametrize("args, needle", [
    (["nonsense"], "invalid choice"),
    (["match", "state", "/no/such/file.json"], "cannot read"),
    (["score", "chess", "-"], "invalid choice"),
])
def test_bad_usage_exits_2_with_one_line(run_cli, args, needle):
    code, out, err = run_cli(*args)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and needle in err
    assert "Traceback" not in err


@pytest.mark.parametrize("doc, path", [
    ("not json", "not valid JSON"),
    ("[]", "$"),
    ('{"id": "m1", "game": "chess", "players": ["a"], "created_at": "2026-01-01T00:00:00Z", "events": []}',
     "$.game"),
    ('{"id": "m1", "game": "richelieu", "players": ["a", 3], "created_at": "2026-01-01T00:00:00Z", "events": []}',
     "$.players[1]"),
    ('{"id": "m1", "game": "richelieu", "players": ["a"], "created_at": "yesterday", "events": []}',
     "$.created_at"),
    ('{"id": "m1", "game": "richelieu", "players": ["a"], "created_at": "2026-01-01T00:00:00Z", '
     '"events": [{"seq": 1, "at": "2026-01-01T00:00:00Z"}]}', "$.events[0]"),
])
def test_malformed_match_documents_exit_2_naming_the_path(run_cli, doc, path):
    code, out, err = run_cli("match", "import", "-", stdin=doc)
    assert code == 2, err
    assert path in err and len(err.strip().splitlines()) == 1
    assert out == ""


def test_import_export_and_state_through_the_cli(fake_game, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COMPANION_DATA", str(tmp_path / "d"))
    doc = {"id": "m-1", "game": fake_game, "players": ["ada", "bo"], "created_at": "2026-01-01T20:00:00Z",
           "events": [{"seq": 1, "at": "2026-01-01T20:01:00Z", "type": "point", "data": {"player": "bo", "n": 4}},
                      {"seq": 2, "at": "2026-01-01T20:02:00Z", "type": "point", "data": {"player": "ada"}},
                      {"seq": 3, "at": "2026-01-01T20:03:00Z", "type": "undo", "data": {}}]}
    f = tmp_path / "m.json"
    f.write_text(json.dumps(doc))
    assert main(["match", "import", str(f)]) == 0
    assert json.loads(capsys.readouterr().out) == {"imported": "m-1", "events": 3}
    assert main(["match", "import", str(f)]) == 2  # a duplicate is refused
    assert "exists already" in capsys.readouterr().err
    assert main(["match", "export", "m-1"]) == 0
    assert json.loads(capsys.readouterr().out) == doc
    assert main(["match", "state", str(f), "--at", "2026-01-01T20:01:30Z"]) == 0
    assert json.loads(capsys.readouterr().out)["state"]["points"] == {"ada": 0, "bo": 4}
    assert main(["match", "state", str(f)]) == 0
    state = json.loads(capsys.readouterr().out)
    assert state["state"]["points"] == {"ada": 0, "bo": 4} and state["seq"] == 3


def test_import_refuses_an_event_the_rules_refuse(fake_game, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COMPANION_DATA", str(tmp_path / "d"))
    doc = {"id": "m-2", "game": fake_game, "players": ["ada", "bo"], "created_at": "2026-01-01T20:00:00Z",
           "events": [{"seq": 1, "at": "2026-01-01T20:01:00Z", "type": "point", "data": {"player": "cy"}}]}
    f = tmp_path / "m.json"
    f.write_text(json.dumps(doc))
    assert main(["match", "import", str(f)]) == 2
    assert "$.events[0].data.player" in capsys.readouterr().err
    doc["events"][0] = {"seq": 2, "at": "2026-01-01T20:01:00Z", "type": "point", "data": {"player": "bo"}}
    f.write_text(json.dumps(doc))
    assert main(["match", "import", str(f)]) == 2
    assert "$.events[0].seq" in capsys.readouterr().err


def test_backup_command(run_cli, tmp_path):
    from companion.storage import Store

    Store(tmp_path / "data" / "companion.db").close()
    code, out, err = run_cli("backup", str(tmp_path / "copies"))  # a new folder
    assert code == 0, err
    made = json.loads(out)["backup"]
    assert made.startswith(str(tmp_path / "copies") + "/companion-") and made.endswith("Z.db")
    (tmp_path / "copy.db").write_bytes(b"an old copy")  # an existing file is replaced
    code, out, err = run_cli("backup", str(tmp_path / "copy.db"))
    assert code == 0, err
    assert json.loads(out)["backup"].endswith("copy.db")
    assert (tmp_path / "copy.db").read_bytes().startswith(b"SQLite format 3")


@pytest.mark.parametrize("command", [["score", "richelieu"], ["match", "state"], ["season", "standings"],
                                     ["reinforcements"]])
def test_a_huge_integer_in_a_document_exits_2_naming_the_file(run_cli, tmp_path, command):
    """Python refuses ints of more than 4300 digits with a ValueError, which was an "internal error" (exit 1)."""
    f = tmp_path / "doc.json"
    f.write_text('{"players": [\n  ' + "7" * 5000 + "]}")
    code, out, err = run_cli(*command, f)
    assert code == 2 and out == "", err
    assert len(err.strip().splitlines()) == 1 and str(f) in err and "4300 digits at line 2 column 3" in err


def test_a_document_nested_too_deeply_exits_2_saying_so(run_cli, tmp_path):
    for n in (150, 995, 50_000):
        code, out, err = run_cli("score", "richelieu", "-", stdin='{"players": ' + "[" * n + "]" * n + "}")
        assert code == 2 and "nested too deeply" in err and len(err.strip().splitlines()) == 1, (n, err)
