"""Web of Power boards: the installed template, `companion map check`, the SVG, the schema pre-check."""

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.bench_web_of_power import synthetic_board
from companion.base.errors import InputError
from companion.games import web_of_power as wop
from companion.games import wop_board


def test_template_is_labelled_and_holds_only_what_the_book_says():
    doc = wop_board.default_board_doc()
    assert "TEMPLATE" in doc["name"] and doc["transcription"]["status"] == "template"
    assert [c["id"] for c in doc["countries"]] == wop_board.BOOK_SCORING_ORDER
    counts = {c["id"]: c["site_count"] for c in doc["countries"]}
    assert counts["Frankreich"] == 8 and counts["Schwaben"] == 4
    assert all(v is None for k, v in counts.items() if k not in ("Frankreich", "Schwaben"))
    assert doc["roads"] is None
    known = {a["number"]: a["countries"] for a in doc["alliances"] if a["countries"]}
    assert known == {14: ["Italien", "Burgund"], 15: ["Italien", "Bayern"]}
    assert sorted(a["number"] for a in doc["alliances"]) == list(range(1, 16))
    assert {a["number"] for a in doc["alliances"] if a.get("sea_route")} == {1, 2, 3, 5, 6, 15}
    assert sorted(cc["cards"] for cc in doc["card_colours"]) == [9, 10, 11, 12, 13]
    report = wop.check_map(doc)
    assert report["ok"] and not report["complete"] and report["status"] == "template"
    assert report["counts"] == {"countries": 9, "sites": 2, "sites_expected": None, "roads": None,
                                "alliances": 15, "alliances_known": 2}
    text = " ".join(w["message"] for w in report["warnings"])
    assert "roads unknown" in text and "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13" in text


def test_complete_synthetic_board_checks_clean():
    report = wop.check_map(synthetic_board(6, 6, seed=1))
    assert report["ok"] and report["complete"]
    # the synthetic board isn't the real one: only the book's facts it doesn't match are warned about
    assert all("rule book" in w["message"] or "site" in w["message"] or "road" in w["message"]
               for w in report["warnings"])


def broken(mutate):
    doc = synthetic_board(4, 4, seed=2)
    mutate(doc)
    return wop.check_map(doc)


@pytest.mark.parametrize("mutate, path, words", [
    (lambda d: d["countries"][1]["sites"].append(d["countries"][0]["sites"][0]["id"]),
     "$.countries[1].sites[", "listed twice"),
    (lambda d: d["roads"].append(["s000", "nowhere"]), "$.roads[", "unknown site"),
    (lambda d: d["roads"].append(["s000", "s000"]), "$.roads[", "to itself"),
    (lambda d: d["alliances"].append({"number": 3, "countries": ["England", "Franken"]}),
     "$.alliances[15].number", "listed twice"),
    (lambda d: d["alliances"].__setitem__(0, {"number": 1, "countries": ["England", "Mars"]}),
     "$.alliances[0].countries[1]", "unknown country"),
    (lambda d: d["alliances"].__setitem__(0, {"number": 1, "countries": ["England", "England"]}),
     "$.alliances[0].countries", "two different"),
    (lambda d: d["countries"][0].__setitem__("site_count", 0), "$.countries[0].site_count", "listed"),
    (lambda d: d["countries"].append(copy.deepcopy(d["countries"][0])), "$.countries[9].id", "twice"),
])
def test_check_errors_name_the_path(mutate, path, words):
    report = broken(mutate)
    assert not report["ok"]
    assert any(e["path"].startswith(path) and words in e["message"] for e in report["errors"]), report["errors"]
    doc = synthetic_board(4, 4, seed=2)
    mutate(doc)
    with pytest.raises(InputError) as err:  # scoring refuses a board with errors, naming the first
        wop_board.normalize(doc)
    assert err.value.field == report["errors"][0]["path"]


def test_book_facts_are_warnings():
    doc = synthetic_board(6, 6, seed=3)
    doc["alliances"][13]["countries"] = ["England", "Burgund"]
    order = doc["countries"][::-1]
    doc["countries"] = order
    text = " ".join(w["message"] for w in wop.check_map(doc)["warnings"])
    assert "alliance 14 is Italien-Burgund" in text
    assert "scoring order" in text


def test_svg_template_and_coordinates():
    svg = wop.map_svg(wop_board.default_board_doc())
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
    assert "Chorin" in svg and "Obra" in svg and svg.count(">?</text>") == 12  # 8 + 4 unnamed sites
    assert "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")  # self-contained
    doc = synthetic_board(4, 4, seed=2)
    svg = wop.map_svg(doc)
    assert svg.count('stroke="#7a5a30"') == len(doc["roads"])
    doc["name"] = "<b>&"
    assert "&lt;b&gt;&amp;" in wop.map_svg(doc)


def test_map_check_cli(run_cli, tmp_path):
    from companion.games.wop_board import BOARD_FILE

    out_svg = tmp_path / "board.svg"
    code, out, err = run_cli("map", "check", BOARD_FILE, "--game", "web-of-power", "--svg", out_svg)
    assert code == 0, err
    report = json.loads(out)
    assert report["ok"] and report["svg"] == str(out_svg) and out_svg.read_text().startswith("<svg")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"countries": [{"id": "A", "sites": 3}], "roads": None, "alliances": []}))
    code, out, err = run_cli("map", "check", bad, "--game", "web-of-power")
    assert code == 2 and "$.countries[0].sites" in err and err.count("\n") == 1


def test_scoring_with_an_inconsistent_board_is_refused_with_the_path():
    doc = synthetic_board(4, 4, seed=2)
    doc["roads"].append(["s000", "nowhere"])
    with pytest.raises(InputError) as err:
        wop.score({"players": ["A", "B", "C"], "scoring": "final", "map": doc})
    assert err.value.field.startswith("$.map.roads[")


# the fast pre-check must never accept what the schema refuses
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-2, 70), st.floats(allow_nan=False, width=16),
                      st.text(max_size=3))
json_value = st.recursive(json_leaf, lambda c: st.one_of(st.lists(c, max_size=3),
                                                          st.dictionaries(st.text(max_size=3), c, max_size=3)),
                          max_leaves=8)


def _variants():
    base = synthetic_board(3, 3, seed=4)
    keys = st.sampled_from(["countries", "roads", "alliances", "card_colours", "transcription", "name", "game",
                            "extra"])
    return st.tuples(st.just(base), keys, json_value, st.integers(0, 3))


@settings(max_examples=300)
@given(_variants())
def test_quick_map_check_is_sound(case):
    from companion.base.schemas import _validator

    base, key, value, depth = case
    doc = copy.deepcopy(base)
    if depth == 0 or key not in doc:
        doc[key] = value
    elif key == "countries":
        doc["countries"][0][["id", "sites", "site_count", "x"][depth]] = value
    elif key == "alliances":
        doc["alliances"][0][["number", "countries", "sea_route", "number"][depth]] = value
    elif key == "roads":
        doc["roads"][0] = value
    else:
        doc[key] = value
    if wop_board.quick_valid(doc):
        assert not list(_validator("web-of-power.map").iter_errors(doc))


@settings(max_examples=300)
@given(st.sampled_from(["players", "scoring", "monasteries", "councillors", "chains", "map", "extra"]),
       json_value)
def test_quick_score_check_is_sound(key, value):
    from companion.base.schemas import _validator

    doc = {"players": ["A", "B", "C"], "scoring": "final", "monasteries": {"A": ["x"]}}
    doc[key] = value
    if wop.quick_valid_score(doc):
        assert not list(_validator("web-of-power.score").iter_errors(doc))
