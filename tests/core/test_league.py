"""The league: the union of several boxes' seasons scored by the season code, a match on two boxes once,
ambiguous names listed and never merged, conflicts and clocks reported."""

import csv
import io
import json

from companion.core import league
from companion.core import season as core


def _m(mid, date, *players):
    return {"id": mid, "date": date, "game": "conquest-italy",
            "results": [{"player": p, "place": i + 1, "objective": False, "eliminated": False}
                        for i, p in enumerate(players)]}


def _box(name, *matches, rules=None):
    return {"name": name, "season": {"name": f"{name} 2026"}, "rules": rules or core.Rules(), "matches": list(matches)}


def test_the_union_is_scored_like_one_box_and_a_shared_match_counts_once():
    a = _box("A", _m("m1", "2026-03-01", "Anna", "Bea", "Carlo"), _m("m2", "2026-03-02", "Bea", "Anna", "Carlo"))
    b = _box("B", _m("m3", "2026-03-03", "Carlo", "Anna", "Bea"), _m("m1", "2026-03-01", "Anna", "Bea", "Carlo"))
    out = league.combine([a, b])
    assert [m["id"] for m in out["matches"]] == ["m1", "m2", "m3"]
    assert {m["id"]: m["venue"] for m in out["matches"]} == {"m1": "A + B", "m2": "A", "m3": "B"}
    assert out["duplicates"] == [{"match": "m1", "boxes": ["A", "B"]}]
    one_box = core.standings([_m("m1", "2026-03-01", "Anna", "Bea", "Carlo"), _m("m2", "2026-03-02", "Bea", "Anna", "Carlo"),
                              _m("m3", "2026-03-03", "Carlo", "Anna", "Bea")], core.Rules())
    assert league.standings(out) == one_box


def test_two_spellings_of_one_key_are_listed_and_stay_apart_until_the_organiser_says():
    a = _box("A", _m("m1", "2026-03-01", "Nicolò", "Bea", "Carlo"))
    b = _box("B", _m("m2", "2026-03-02", "Nicolo", "BEA", "Carlo"))
    out = league.combine([a, b])
    players = {r["player"] for r in league.standings(out)}
    assert {"Nicolò", "Nicolo", "Bea", "BEA", "Carlo"} == players  # nothing merged silently
    assert [[n["name"] for n in x["names"]] for x in out["ambiguous"]] == [["BEA", "Bea"], ["Nicolo", "Nicolò"]]
    assert out["ambiguous"][1]["names"] == [{"name": "Nicolo", "boxes": ["B"]}, {"name": "Nicolò", "boxes": ["A"]}]
    settled = league.combine([a, b], aliases={"Nicolo": "Nicolò", "BEA": "Bea"})
    assert settled["ambiguous"] == []
    rows = {r["player"]: r for r in league.standings(settled)}
    assert rows["Nicolò"]["matches"] == 2 and rows["Bea"]["matches"] == 2 and "Nicolo" not in rows


def test_the_league_matches_names_by_the_rosters_key():
    assert league.name_key("Nicolò") == league.name_key("NICOLO") == "nicolo"
    assert league.name_key("Straße") == league.name_key("STRASSE")
    assert league.name_key("Anna") != league.name_key("Ana")


def test_a_match_whose_copies_differ_is_a_conflict_and_counts_nowhere():
    a = _box("A", _m("m1", "2026-03-01", "Anna", "Bea", "Carlo"))
    b = _box("B", _m("m1", "2026-03-01", "Bea", "Anna", "Carlo"), _m("m2", "2026-03-02", "Anna", "Bea", "Carlo"))
    out = league.combine([a, b])
    assert [m["id"] for m in out["matches"]] == ["m2"]
    assert out["conflicts"][0]["match"] == "m1" and [c["box"] for c in out["conflicts"][0]["copies"]] == ["A", "B"]
    assert "conflict (not counted): match m1" in league.standings_text(out)


def test_rules_come_from_the_first_box_and_other_rules_are_listed():
    other = core.Rules().with_settings({"threshold": 0.5})
    out = league.combine([_box("A", _m("m1", "2026-03-01", "A1", "B1", "C1")),
                          _box("B", _m("m2", "2026-03-01", "A1", "B1", "C1"), rules=other),
                          {"name": "C", "season": None, "rules": None, "matches": []}])
    assert out["rules_from"] == "A" and [d["box"] for d in out["rule_differences"]] == ["B"]
    assert out["boxes"][2] == {"box": "C", "matches": 0, "season": None}


def test_a_match_dated_in_the_future_is_flagged_for_a_wrong_clock():
    out = league.combine([_box("A", _m("m1", "2026-03-01", "A1", "B1", "C1"), _m("m2", "2027-01-09", "A1", "B1", "C1"))],
                         now="2026-03-05T10:00:00Z")
    assert out["clock_warnings"] == [{"match": "m2", "venue": "A", "date": "2027-01-09"}]
    assert len(out["matches"]) == 2  # still counted: the organiser decides


def test_the_results_csv_names_each_result_s_venue():
    out = league.combine([_box("A", _m("m1", "2026-03-01", "Anna", "Bea", "Carlo")),
                          _box("B", _m("m2", "2026-03-02", "Bea", "Anna", "Carlo"))])
    rows = list(csv.DictReader(io.StringIO(league.results_csv(out))))
    assert [(r["match"], r["player"], r["venue"]) for r in rows][:2] == [("m1", "Anna", "A"), ("m1", "Bea", "A")]
    assert {r["venue"] for r in rows if r["match"] == "m2"} == {"B"}


def test_league_standings_over_two_box_databases_equal_the_season_code_over_their_exports(run_cli, tmp_path):
    """Two boxes as database files (copies made by `companion backup`): no Litestream needed."""
    def box(name, results):
        env = {"COMPANION_DATA": str(tmp_path / name)}
        assert run_cli("season", "club-create", "Fan Club", env=env)[0] == 0
        assert run_cli("season", "create", "--club", "Fan Club", "--game", "conquest-italy", "--year", "2026",
                       env=env)[0] == 0
        for doc in results:
            (tmp_path / "r.json").write_text(json.dumps(doc))
            code, out, err = run_cli("season", "add-result", "Fan Club/conquest-italy/2026", tmp_path / "r.json", env=env)
            assert code == 0, err
        code, out, err = run_cli("season", "export", "--season", "Fan Club/conquest-italy/2026", "--format", "json",
                                 env=env)
        assert code == 0, err
        return json.loads(out)

    def r(mid, day, *players):
        return {"id": mid, "date": f"2026-03-{day:02d}", "results": [{"player": p, "place": i + 1}
                                                                      for i, p in enumerate(players)]}

    a = box("a", [r("x1", 1, "Anna", "Bea", "Carlo", "Dario"), r("shared", 2, "Bea", "Anna", "Carlo")])
    b = box("b", [r("y1", 3, "Carlo", "Anna", "Emma"), r("shared", 2, "Bea", "Anna", "Carlo"),
                  r("y2", 4, "Nicolò", "Emma", "Anna")])
    code, out, err = run_cli("league", "standings", "--json", "--cache", tmp_path / "cache",
                             "--box", f"A={tmp_path / 'a' / 'companion.db'}", "--box", f"B={tmp_path / 'b' / 'companion.db'}")
    assert code == 0, err
    got = json.loads(out)
    merged = dict(a)
    merged["matches"] = a["matches"] + [m for m in b["matches"] if m["id"] != "shared"]
    (tmp_path / "merged.json").write_text(json.dumps(merged))
    code, out, err = run_cli("season", "standings", tmp_path / "merged.json")
    assert code == 0, err
    assert got["standings"] == json.loads(out)["standings"]
    assert got["total_matches"] == 4 and got["duplicates"] == [{"match": "shared", "boxes": ["A", "B"]}]
