"""Boards drawn on a photo (docs/games.md, "Web of Power boards transcribed on the box"): sea routes are
drawn but are not roads, the photo travels in an export, and the checker warns (never refuses) where a
transcription differs from the rule book."""

import copy

from companion.games import web_of_power as wop
from companion.games import wop_board as wb
from tests.web.boardkit import complete_board


def _messages(report, kind="warnings"):
    return [p["message"] for p in report[kind]]


def test_a_sea_route_is_no_road_for_chains():
    board = complete_board()
    # Anna's four monasteries: England1, England2 by road, Italien1, Italien2 by road; a sea route between them
    board["roads"] = [r for r in board["roads"] if r != ["England2", "Franken1"]]
    mons = {"Anna": ["England1", "England2", "Italien1", "Italien2"], "Bruno": [], "Carla": []}
    doc = {"players": ["Anna", "Bruno", "Carla"], "scoring": "final", "map": board, "monasteries": mons}
    assert [e for r in wop.score(doc)["players"] for e in r["breakdown"] if e["kind"] == "chain"] == []
    with_sea = copy.deepcopy(doc)
    with_sea["map"]["sea_routes"] = [["England2", "Italien1"]]
    assert wb.check(with_sea["map"])["errors"] == []
    assert wop.score(with_sea)["players"] == wop.score(doc)["players"]
    with_road = copy.deepcopy(doc)
    with_road["map"]["roads"].append(["England2", "Italien1"])
    chains = [e for r in wop.score(with_road)["players"] for e in r["breakdown"] if e["kind"] == "chain"]
    assert [len(e["sites"]) for e in chains] == [4]


def test_sea_routes_name_sites_and_are_drawn():
    board = complete_board()
    board["sea_routes"] = [["England1", "Nowhere"], ["Italien1", "Italien1"], ["England1", "England2"]]
    report = wb.check(board)
    assert [p["path"] for p in report["errors"]] == ["$.sea_routes[0][1]", "$.sea_routes[1]"]
    assert any("both a road and a sea route" in m for m in _messages(report))
    board["sea_routes"] = [["England1", "Bayern2"]]
    assert 'stroke-dasharray="6,4"' in wb.map_svg(board)


def test_the_rule_books_facts_contradicted_are_warnings():
    board = complete_board()
    assert wb.check(board)["errors"] == []
    board["alliances"][0]["sea_route"] = False  # alliance 1 crosses water in the book
    board["alliances"][3]["sea_route"] = True  # alliance 4 does not
    board["card_colours"][0]["cards"] = 12
    report = wb.check(board)
    assert report["errors"] == [] and report["complete"]
    msgs = _messages(report)
    assert "the rule book says alliance 1 crosses water (a sea route)" in msgs
    assert "the rule book says alliance 4 is not a sea route" in msgs
    assert any(m.startswith("the rule book's card colours are: Franken-Aragon 13 cards") for m in msgs)


def test_sites_not_yet_on_the_photo_are_named():
    board = complete_board()
    board["countries"][1]["sites"] += [{"id": "Chorin", "name": "Chorin"}, "Obra"]
    assert "2 site(s) not placed on the drawing yet: Chorin, Obra" in _messages(wb.check(board))
    assert not any("not placed" in m for m in _messages(wb.check(wb.default_board_doc())))


def test_an_export_with_its_photo_is_a_valid_board():
    board = complete_board()
    board["photo"] = {"mime": "image/png", "data": "iVBORw0KGgo=", "width": 600, "height": 400}
    assert wb.quick_valid(board)
    assert wb.check(board)["errors"] == []
    board["photo"]["mime"] = "image/gif"
    assert not wb.quick_valid(board)
