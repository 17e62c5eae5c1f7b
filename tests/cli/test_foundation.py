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


SEPARATORS = ["\u0085", "\u2028", "\u2029", "\r", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x00"]


def _resolve_with_a_bad_player(name):
    from pathlib import Path

    doc = json.loads((Path(__file__).resolve().parents[2] / "schemas" / "examples" / "richelieu.resolve"
                      / "england-beats-richelieu.json").read_text("utf-8"))
    doc["players"][name] = {"prestige": "x", "income": 1, "military": 0, "money": 2}
    return json.dumps(doc)


@pytest.mark.parametrize("sep", SEPARATORS)
def test_an_error_naming_any_player_stays_one_whole_line(sep, monkeypatch, capsys):
    """A name with a line or paragraph separator (or any control character) is escaped in the error, so
    the one line on stderr is whole: it names the field after the name, not a cut path."""
    import io

    name = f"Ann{sep}a"
    monkeypatch.setattr("sys.stdin", io.StringIO(_resolve_with_a_bad_player(name)))
    assert main(["richelieu", "resolve", "-"]) == 2
    err = capsys.readouterr().err
    assert err.endswith("\n") and len(err[:-1].splitlines()) == 1, repr(err)
    assert not any(c in err[:-1] for c in "\n\r\x85\u2028\u2029\x0b\x0c\x1c\x00")
    assert err.startswith('error: $.players["Ann') and 'a"].prestige: ' in err, repr(err)  # the whole path


def test_the_real_process_writes_one_line_for_u0085(tmp_path):
    import os
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "companion", "richelieu", "resolve", "-"],
                       input=_resolve_with_a_bad_player("Ann\u0085a").encode("utf-8"), capture_output=True,
                       env=dict(os.environ, COMPANION_DATA=str(tmp_path)), timeout=60)
    assert p.returncode == 2
    text = p.stderr.decode("utf-8")
    assert text.count("\n") == 1 and text.endswith("\n") and "\u0085" not in text
    assert text.startswith('error: $.players["Ann\\x85a"]'), text


def test_property_tests_are_reproducible():
    """The fuzz tests (hypothesis) draw the same examples on every `make test` run; a soak run prints the
    blob that reproduces a failure."""
    import os

    from hypothesis import settings

    assert settings().print_blob
    assert settings().derandomize or os.environ.get("COMPANION_SOAK")


def test_one_line_never_breaks_for_any_text():
    from hypothesis import given
    from hypothesis import strategies as st

    from companion.cli import one_line

    @given(st.text())
    def check(text):
        line = one_line(text)
        assert len(line.splitlines()) <= 1 and "\n" not in line
        if text.isprintable():
            assert line == text  # printable text is left as it is

    check()
