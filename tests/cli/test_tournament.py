"""``companion tournament``: list, show and standings (JSON and CSV) of a tournament stored on the box, the
same document the API gives; an unknown id exits 2 with one line."""

import csv
import io
import json

from companion.cli import main
from companion.services.matches import MatchService
from companion.storage import Store
from companion.storage import tournaments as rows


def test_list_show_and_standings(fake_game, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COMPANION_DATA", str(tmp_path))
    store = Store(tmp_path / "companion.db")
    svc = MatchService(store)
    players = ["Anna", "Bruno", "Carla", "Dario", "Elena", "Franco"]
    t = rows.create(store, "Coppa", "2026-12-12", fake_game, 3, 2, None, players)
    tables = [players[:3], players[3:]]
    rows.put_round(store, t["id"], 1, tables)
    ids = []
    for k, table in enumerate(tables):
        m = svc.create(fake_game, table, {}, label=f"Round 1 · Table {k + 1}")
        for n, p in enumerate(table):
            svc.append(m["id"], "point", {"player": p, "n": n})  # the last seated scores most
        svc.append(m["id"], "finish", {})
        ids.append(m["id"])
    rows.start_round(store, t["id"], 1, ids)
    store.close()

    assert main(["tournament", "list"]) == 0
    assert [x["name"] for x in json.loads(capsys.readouterr().out)["tournaments"]] == ["Coppa"]
    assert main(["tournament", "show", t["id"]]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["round_list"][0]["status"] == "ended" and doc["next_round"] == 2
    assert main(["tournament", "standings", t["id"]]) == 0
    st = json.loads(capsys.readouterr().out)["standings"]
    # 3-player tables: +1, 0, -1; Carla and Franco won their tables, equal on points, never met: shared 1st
    assert [(r["rank"], r["player"], r["points"]) for r in st] == [
        (1, "Carla", 1), (1, "Franco", 1), (3, "Bruno", 0), (3, "Elena", 0), (5, "Anna", -1), (5, "Dario", -1)]
    assert main(["tournament", "standings", t["id"], "--csv"]) == 0
    out = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["player"] for r in out] == [r["player"] for r in st] and out[0]["points"] == "1"
    assert main(["tournament", "standings", t["id"], "--csv", "--dialect", "excel-it"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("\ufeffrank;player;points;")
    assert [r["points"] for r in csv.DictReader(io.StringIO(text[1:]), delimiter=";")][-1] == "-1"
    assert main(["tournament", "show", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no tournament nope" in err and len(err.strip().splitlines()) == 1


def test_no_database_exits_2(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COMPANION_DATA", str(tmp_path / "missing"))
    assert main(["tournament", "list"]) == 2
    assert "no database" in capsys.readouterr().err
