"""``companion board``: list, show, export, import and the default of the Web of Power boards on the box,
through ``companion.services.boards`` (the core ``/api/boards`` uses): what the CLI prints is what the API answers;
an export imports again as an equal board (on another box too); bad input exits 2 with one line on stderr."""

import json

import pytest

from companion.services import boards
from companion.cli import main
from companion.storage import Store


@pytest.fixture
def box(tmp_path, monkeypatch):
    """A box with two boards (the second with a saved change: two versions) and a club."""
    from companion.services import seasons

    monkeypatch.setenv("COMPANION_DATA", str(tmp_path))
    store = Store(tmp_path / "companion.db")
    club = seasons.create_club(store, "Circolo")
    first = boards.create(store, "Tavolo grande")
    second = boards.create(store, "Circolo board", club=club["id"])
    doc = dict(second["board"], name="Circolo board, corrected")
    boards.save(store, second["id"], doc, expected_version=1)
    yield store, first["id"], second["id"], club
    store.close()


def out_of(capsys, argv, code=0):
    assert main(argv) == code
    captured = capsys.readouterr()
    return json.loads(captured.out) if code == 0 else captured.err


def api(store):
    from companion.web.app import create_app

    return create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None}).test_client()


def test_list_show_export_are_what_the_api_answers(box, capsys):
    store, first, second, club = box
    web = api(store)
    listed = out_of(capsys, ["board", "list"])
    assert listed["boards"] == web.get("/api/boards").json["boards"]
    assert {b["id"] for b in listed["boards"]} == {first, second}
    shown = out_of(capsys, ["board", "show", second])
    assert shown == web.get(f"/api/boards/{second}").json
    assert shown["version"] == shown["latest"] == 2 and shown["board"]["name"] == "Circolo board, corrected"
    assert out_of(capsys, ["board", "show", second, "--version", "1"])["version"] == 1
    exported = out_of(capsys, ["board", "export", second, "--version", "1"])
    assert exported == web.get(f"/api/boards/{second}/export?version=1").json
    from companion.base.schemas import validate

    validate("web-of-power.map", exported)


def test_an_export_imports_as_a_new_board_for_a_club(box, capsys, tmp_path):
    store, _, second, club = box
    path = tmp_path / "board.json"
    written = out_of(capsys, ["board", "export", second, "--out", str(path)])
    assert written["out"] == str(path) and written["photo"] is False
    doc = json.loads(path.read_text())
    new = out_of(capsys, ["board", "import", str(path), "--club", "Circolo", "--name", "Copia"])
    assert new["name"] == "Copia" and new["club_id"] == club["id"] and new["version"] == 1
    assert new["board"] == boards.stored_doc(doc, boards.check(doc))
    assert new["status"] == boards.describe(store, second)["status"]
    assert new["id"] in {b["id"] for b in boards.listing(store)}


def test_default_sets_and_clears_the_clubs_board(box, capsys):
    store, first, second, club = box
    out = out_of(capsys, ["board", "default", second, "--club", club["id"]])
    assert out["default"] == second and [b["id"] for b in out["boards"] if b["default"]] == [second]
    assert store.default_boards() == {club["id"]: second}
    # the club's new Web of Power matches start on it (the web's create path reads the same row)
    opts = boards.match_options(store, "web-of-power", {"club": club["id"]})
    assert opts["board_ref"] == {"id": second, "version": 2}
    out = out_of(capsys, ["board", "default", "none", "--club", "Circolo"])
    assert out["default"] is None and not any(b["default"] for b in out["boards"])
    # the box's own board (no club)
    out_of(capsys, ["board", "default", first])
    assert store.default_boards().get("") == first


@pytest.mark.parametrize("argv, field", [
    (["board", "show", "nope"], "ID"),
    (["board", "show", "BOARD", "--version", "0"], "--version"),
    (["board", "show", "BOARD", "--version", "x"], "--version"),
    (["board", "export", "BOARD", "--version", "9"], "version"),
    (["board", "import", "BAD_DOC"], "$"),
    (["board", "import", "MISSING"], "missing.json"),
    (["board", "import", "GOOD_DOC", "--club", "Nobody"], "--club"),
    (["board", "import", "GOOD_DOC", "--name", ""], "--name"),
    (["board", "default", "BOARD", "--club", "Circolo"], "ID"),  # a board of the box, not the club's
    (["board", "default", "BOARD", "--club", "Nobody"], "--club"),
    (["board", "frobnicate"], "board"),
])
def test_bad_input_exits_2_with_one_line(box, tmp_path, run_cli, argv, field):
    store, first, _, _ = box
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "no countries"}))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(boards.export(store, first)))
    swap = {"BOARD": first, "BAD_DOC": str(bad), "GOOD_DOC": str(good), "MISSING": str(tmp_path / "missing.json")}
    rc, out, err = run_cli(*[swap.get(a, a) for a in argv], "--data-dir", str(tmp_path))
    assert rc == 2 and out == "", (out, err)
    assert len(err.strip().splitlines()) == 1 and field in err, err
    assert "Traceback" not in err


def test_help_texts(capsys):
    for argv in (["board", "--help"], ["board", "import", "--help"], ["board", "default", "--help"]):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 0
    text = capsys.readouterr().out
    assert "schemas/web-of-power.map.schema.json" in text and "none" in text and "--club" in text
