"""companion/base/errors.py: the one way to put a field's path under the path of the part it is in."""

import pytest

from companion.base.errors import InputError, RuleError, join_path


@pytest.mark.parametrize("prefix, field, expected", [
    ("$.options", "map.cities[1]", "$.options.map.cities[1]"),
    ("$.map", "$.cities", "$.map.cities"),
    ("$.map", "$", "$.map"),
    ("$", "$.a", "$.a"),
    ("$", "[2]", "$[2]"),
    ("$.events[3].data", "dice[1]", "$.events[3].data.dice[1]"),
    ("$.events[3].data", "[0]", "$.events[3].data[0]"),
    ("options.board", "$.sites[0]", "options.board.sites[0]"),
    ("", "$.cities[2]", "cities[2]"),
    ("", "$", None),
    (None, "player", "player"),
    ("options", None, "options"),
    ("$.hands", '$["Anna Maria"][1]', '$.hands["Anna Maria"][1]'),
])
def test_join_path(prefix, field, expected):
    assert join_path(prefix, field) == expected


def test_under_keeps_the_class_and_message_and_can_change_the_class():
    exc = RuleError("not your turn", "player")
    moved = exc.under("$.events[2].data")
    assert type(moved) is RuleError and moved.message == "not your turn"
    assert moved.field == "$.events[2].data.player" and str(moved) == "$.events[2].data.player: not your turn"
    assert exc.field == "player"  # the original is untouched
    as_input = exc.under("$.events[2].data", InputError)
    assert type(as_input) is InputError and as_input.to_json() == {"error": "not your turn",
                                                                   "field": "$.events[2].data.player"}


def test_under_keeps_a_subclass_s_own_attributes():
    from companion.web.auth import TooManyAttempts

    exc = TooManyAttempts(60, "pin")
    moved = exc.under("$")
    assert type(moved) is TooManyAttempts and moved.retry_after == 60 and moved.field == "$.pin"


def test_a_sentence_is_a_template_with_named_values():
    from companion.base.errors import render

    exc = RuleError("{player} has {left} {left|monastery|monasteries} left", "count", player="Anna", left=1)
    assert exc.message == str(exc)[len("count: "):] == "Anna has 1 monastery left"
    assert exc.template == "{player} has {left} {left|monastery|monasteries} left"
    assert exc.params == {"player": "Anna", "left": 1}
    assert render("{n} {n|army|armies}", {"n": 0}) == "0 armies"
    assert render("unknown city {c!r}: {x:.1f} {missing}", {"c": "Roma", "x": 2}) == "unknown city 'Roma': 2.0 {missing}"
    assert render("the {piece:w@rl} is on the board once", {"piece": "queen"}) == "the queen is on the board once"
    assert InputError("must be an object {player: [lengths]}").message == "must be an object {player: [lengths]}"


def test_again_and_under_keep_the_template_and_its_values():
    exc = RuleError("it is {player}'s turn", "player", player="Bruno")
    for moved in (exc.again(InputError, "$.trade"), exc.under("$.data", InputError), exc.again(field="x")):
        assert (moved.template, moved.params, moved.message) == (exc.template, exc.params, "it is Bruno's turn")
    assert type(exc.again(InputError, "$.trade")) is InputError and exc.again(field="x").field == "x"
