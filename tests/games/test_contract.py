"""The game contract (companion/games/contract.py) and the one list of games (companion.games.GAMES)."""

import json
import types

import pytest

from companion.base.errors import InputError
from companion.games import GAMES, contract, game_ids, game_module, map_games, registry
from companion.core.match import uses_clock
from companion.base.resources import schemas_dir


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_game_module_keeps_the_contract(game):
    module = game_module(game)
    assert contract.check_game(module, game) == []
    assert isinstance(module, contract.Game)


def test_the_registry_is_every_game_by_its_id():
    reg = registry()
    assert list(reg) == game_ids() == sorted(GAMES)
    assert {gid: m.GAME_ID for gid, m in reg.items()} == {gid: gid for gid in GAMES}
    assert len({m.NAME for m in reg.values()}) == len(reg)  # display names tell the games apart


def test_check_game_names_what_is_missing_or_wrong():
    fake = types.ModuleType("fake")
    problems = contract.check_game(fake)
    assert "NAME is missing" in problems and "final_ranking() is missing" in problems
    fake = game_module("rome-is-burning")
    half = types.SimpleNamespace(**{k: getattr(fake, k) for k in dir(fake) if not k.startswith("__")})
    half.USES_CLOCK, half.MIN_PLAYERS, half.map_svg = "no", True, len
    problems = contract.check_game(half, "rome-is-burning")
    assert "USES_CLOCK must be a bool, not str" in problems and "MIN_PLAYERS must be an int, not bool" in problems
    assert "check_map() and map_svg() go together" in problems
    assert contract.check_game(game_module("richelieu"), "web-of-power") == \
        ["GAME_ID is 'richelieu', registered as 'web-of-power'"]


def test_a_mistyped_or_mistaken_hook_is_named():
    rome = game_module("rome-is-burning")
    fake = types.SimpleNamespace(**{k: getattr(rome, k) for k in dir(rome) if not k.startswith("__")})
    fake.public_veiw, fake.SECRET_RESET, fake.ACTIONS = (lambda state, viewer: state), {}, ("deal",)
    problems = contract.check_game(fake, "rome-is-burning")
    assert "public_veiw is no hook of the contract: public_view is meant?" in problems
    assert "SECRET_RESET is no hook of the contract: SECRET_RESETS is meant?" in problems
    assert "ACTIONS must be a dict" in problems


def test_shared_code_reads_only_the_hooks_the_contract_declares():
    """Every ``getattr(module, "NAME")``/``hasattr`` of a game module in the package is declared in
    companion/games/contract.py (a name read nowhere declared would silently do nothing when misspelt)."""
    import re
    from pathlib import Path

    pkg = Path(contract.__file__).resolve().parent.parent
    read = set()
    for path in pkg.rglob("*.py"):
        read |= set(re.findall(r'(?:getattr|hasattr)\((?:\w+\.)*(?:module|mod)\s*,\s*"(\w+)"',
                               path.read_text(encoding="utf-8")))
    read -= {"OPENAPI_PATHS", "OPENAPI_SCHEMAS"}  # (a blueprint's, read by web/openapi.py)
    assert {"public_view", "ORGANISER_EVENTS", "setup_over", "final_points"} <= read  # the scan finds them
    assert sorted(read - contract.HOOKS) == []


@pytest.mark.parametrize("ranking, problem", [
    ([{"player": "a", "place": 1, "objective": False, "eliminated": False}], "every player once"),
    ([{"player": "a", "place": 1}, {"player": "b", "place": 2}], "exactly the keys"),
    ([{"player": "a", "rank": 1, "objective": False, "eliminated": False},
      {"player": "b", "place": 2, "objective": False, "eliminated": False}], "exactly the keys"),
    (["a", "b"], "exactly the keys"),
    ([{"player": "a", "place": 1, "objective": 0, "eliminated": False},
      {"player": "b", "place": 2, "objective": False, "eliminated": False}], "objective must be true or false"),
    ([{"player": "a", "place": 2, "objective": False, "eliminated": False},
      {"player": "b", "place": 1, "objective": False, "eliminated": False}], "best first"),
    ([{"player": "a", "place": 1, "objective": False, "eliminated": False},
      {"player": "b", "place": 1, "objective": False, "eliminated": False},
      {"player": "c", "place": 2, "objective": False, "eliminated": False}], "1, 2, 2, 4"),
])
def test_check_ranking_refuses_every_other_shape(ranking, problem):
    problems = contract.check_ranking(ranking, ["a", "b"] if len(ranking) < 3 else ["a", "b", "c"])
    assert any(problem in p for p in problems), problems


def test_shared_places_follow_1_2_2_4():
    ranking = contract.competition_places(["a", "b", "c", "d"], {"a": 3, "b": 1, "c": 3, "d": 0}.get)
    assert [(r["player"], r["place"]) for r in ranking] == [("d", 1), ("b", 2), ("a", 3), ("c", 3)]
    assert contract.check_ranking(ranking, ["a", "b", "c", "d"]) == []


def test_uses_clock_reads_the_game_and_options_clock_overrides(monkeypatch):
    assert [g for g in GAMES if uses_clock(g, {})] == ["conquest-italy"]
    assert uses_clock("richelieu", {"clock": True}) and not uses_clock("conquest-italy", {"clock": False})
    monkeypatch.setattr(game_module("richelieu"), "USES_CLOCK", True)
    assert uses_clock("richelieu", {}) and uses_clock("richelieu", None)


def test_the_map_games_are_those_with_map_hooks():
    assert map_games() == [g for g in game_ids() if isinstance(game_module(g), contract.MapGame)]
    assert map_games() == ["conquest-italy", "web-of-power"]


def _game_enums(node, where="$"):
    """Every enum in a schema that lists a registered game id (or a const naming one)."""
    if isinstance(node, dict):
        enum = node.get("enum")
        if isinstance(enum, list) and any(e in GAMES for e in enum):
            yield where, enum
        for k, v in node.items():
            yield from _game_enums(v, f"{where}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _game_enums(v, f"{where}[{i}]")


def test_every_list_of_games_in_the_schemas_is_the_registry():
    found = {}
    for path in sorted(schemas_dir().glob("*.schema.json")):
        for where, enum in _game_enums(json.loads(path.read_text())):
            found[f"{path.name}{where[1:]}"] = enum
    assert any(k.startswith("match-export") for k in found) and any(k.startswith("season.create") for k in found)
    for where, enum in found.items():
        assert sorted(enum) == game_ids(), where


def test_the_cli_lists_derive_from_the_registry():
    from companion.cli import build_parser

    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices
    season_create = sub["season"]._subparsers._group_actions[0].choices["create"]
    [game_opt] = [a for a in season_create._actions if "--game" in a.option_strings]
    assert sorted(game_opt.choices) == game_ids()
    score = sub["score"]
    [game_arg] = [a for a in score._actions if a.dest == "game"]
    assert sorted(game_arg.choices) == game_ids()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_min_and_max_players_are_what_initial_state_accepts(game):
    module = game_module(game)
    names = [f"P{i}" for i in range(module.MAX_PLAYERS + 1)]
    for n in (module.MIN_PLAYERS, module.MAX_PLAYERS):
        state = module.initial_state(names[:n], {})
        assert json.loads(json.dumps(state)) == state
    for n in (module.MIN_PLAYERS - 1, module.MAX_PLAYERS + 1):
        with pytest.raises(InputError) as err:
            module.initial_state(names[:n], {})
        assert err.value.field == "players", (n, err.value)


def test_map_check_of_a_game_without_a_map_names_the_games_with_one(run_cli, tmp_path):
    doc = tmp_path / "board.json"
    doc.write_text('{"game": "rome-is-burning"}')
    code, out, err = run_cli("map", "check", doc)
    assert code == 2 and out == ""
    assert err.strip() == "error: $.game: say which game's map this is with --game (conquest-italy, web-of-power)"
    code, _, err = run_cli("map", "check", doc, "--game", "richelieu")
    assert code == 2 and "(conquest-italy, web-of-power)" in err
