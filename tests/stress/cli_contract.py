"""What every CLI command that reads a JSON document promises, as data the fuzz tests walk through.

For each command: the input schema (``schemas/<name>.schema.json``), how to call it on a file, and an
output schema: the JSON the command prints on success must validate against it. The output schemas are
written here from the commands' documented results (README, ``--help``); ``match export`` output is the
project's own ``schemas/match-export``. ``players_in``/``players_out`` cross-check that the output speaks
of exactly the players of the input.
"""

from __future__ import annotations

NAME = {"type": "string", "minLength": 1}
NUM = {"type": "number"}
INT = {"type": "integer"}


def obj(required: dict, **more) -> dict:
    return {"type": "object", "required": sorted(required), "properties": dict(required), **more}


SCORE_WOP = obj({
    "game": {"const": "web-of-power"},
    "players": {"type": "array", "items": obj({"player": NAME, "total": NUM, "breakdown": {"type": "array"}})},
    "ranking": {"type": "array", "items": obj({"place": {"type": "integer", "minimum": 1}, "player": NAME,
                                               "total": NUM})},
})
SCORE_CONQUEST = obj({
    "game": {"const": "conquest-italy"},
    "players": {"type": "array", "items": obj({"player": NAME, "place": {"type": "integer", "minimum": 1}})},
    "ranking": {"type": "array"},
})
SCORE_RICHELIEU = obj({
    "players": {"type": "array", "items": obj({"player": NAME, "total": NUM,
                                               "place": {"type": "integer", "minimum": 1},
                                               "breakdown": {"type": "object"}})},
    "winners": {"type": "array", "items": NAME},
})
SCORE_ROME = obj({
    "players": {"type": "array", "items": obj({"player": NAME, "score": NUM})},
})
RESOLVE = obj({"winner": {"type": "string"}, "totals": {"type": "object"}, "players": {"type": "object"},
               "cardinal": INT})
ACTIONS = obj({"actions_allowed": {"enum": [1, 2]}, "steps": {"type": "array"}, "actions_left": INT,
               "result": {"type": "object"}})
REINFORCEMENTS = obj({"player": {"type": ["string", "null"]}, "base": {"type": "integer", "minimum": 0}, "total": INT,
                      "placeable": {"type": "integer", "minimum": 0}, "not_placed": {"type": "integer", "minimum": 0}})
MAP_CHECK_WOP = obj({"game": {"const": "web-of-power"}, "ok": {"type": "boolean"}, "errors": {"type": "array"},
                     "warnings": {"type": "array"}})
MAP_CHECK_CONQUEST = obj({"game": {"const": "conquest-italy"}, "ok": {"const": True},
                          "cities": {"type": "integer", "minimum": 1}, "regions": {"type": "array"}})
VIEW = obj({"game": NAME, "players": {"type": "array", "items": NAME}, "seq": {"type": "integer", "minimum": 0},
            "state": {}})
IMPORTED = obj({"imported": NAME, "events": {"type": "integer", "minimum": 0}})
STANDINGS = obj({"season": {"type": "string"}, "total_matches": {"type": "integer", "minimum": 0},
                 "standings": {"type": "array", "items": obj({"rank": {"type": ["integer", "null"], "minimum": 1},
                                                              "player": NAME, "points": NUM,
                                                              "matches": {"type": "integer", "minimum": 1},
                                                              "eligible": {"type": "boolean"}})}})
SEASON_RESULT = obj({"id": NAME, "results": {"type": "array", "items": obj({"player": NAME})}, "season": NAME})
CLUB = obj({"id": NAME, "name": NAME, "settings": {"type": "object"}})
SEASON = obj({"id": NAME, "club": NAME, "game": NAME, "year": INT, "settings": {"type": "object"}})


def _names(items, key="player"):
    return sorted(i[key] for i in items)


# name, input schema, argv (FILE -> arguments after `companion`), output schema,
# players in the input (doc -> sorted names or None), players in the output (out -> sorted names)
COMMANDS = [
    ("score web-of-power", "web-of-power.score", lambda f, d: ["score", "web-of-power", f], SCORE_WOP,
     lambda doc: sorted(doc["players"]), lambda out: _names(out["players"])),
    ("score conquest-italy", "conquest-italy.score", lambda f, d: ["score", "conquest-italy", f], SCORE_CONQUEST,
     lambda doc: sorted(doc["players"]), lambda out: _names(out["players"])),
    ("score richelieu", "richelieu.score", lambda f, d: ["score", "richelieu", f], SCORE_RICHELIEU,
     lambda doc: _names(doc["players"], "name"), lambda out: _names(out["players"])),
    ("score rome-is-burning", "rome-is-burning.score", lambda f, d: ["score", "rome-is-burning", f], SCORE_ROME,
     None, None),
    ("richelieu resolve", "richelieu.resolve", lambda f, d: ["richelieu", "resolve", f], RESOLVE,
     lambda doc: sorted(doc["players"]), lambda out: sorted(out["players"])),
    ("richelieu actions", "richelieu.actions", lambda f, d: ["richelieu", "actions", f], ACTIONS, None, None),
    ("reinforcements", "conquest-italy.reinforcements", lambda f, d: ["reinforcements", f], REINFORCEMENTS,
     lambda doc: [doc.get("player")], lambda out: [out["player"]]),
    ("map check conquest-italy", "conquest-italy.map",
     lambda f, d: ["map", "check", "--game", "conquest-italy", f], MAP_CHECK_CONQUEST, None, None),
    ("map check web-of-power", "web-of-power.map", lambda f, d: ["map", "check", "--game", "web-of-power", f],
     MAP_CHECK_WOP, None, None),
    ("match state", "match-export", lambda f, d: ["match", "state", f, "--at", "2100-01-01T00:00:00Z"], VIEW,
     lambda doc: list(doc["players"]), lambda out: list(out["players"])),
    ("match import", "match-export", lambda f, d: ["match", "import", f, "--data-dir", d], IMPORTED, None, None),
    ("season standings", "season.standings", lambda f, d: ["season", "standings", f], STANDINGS, None, None),
    ("season add-result", "season.result",
     lambda f, d: ["season", "add-result", "Fuzz club/conquest-italy/2026", f, "--data-dir", d], SEASON_RESULT,
     lambda doc: _names(doc["results"]), lambda out: _names(out["results"])),
    ("season club-settings", "season.settings",
     lambda f, d: ["season", "club-settings", "Fuzz club", f, "--data-dir", d], CLUB, None, None),
    ("season settings", "season.settings",
     lambda f, d: ["season", "settings", "Fuzz club/conquest-italy/2026", f, "--data-dir", d], SEASON, None, None),
]

# Input schemas that no CLI command reads: API bodies (fuzzed through /api/openapi.json by schemathesis)
# and events (checked inside match-export documents by `match state` / `match import`).
# bgstats.play is what the box sends (a play pushed to BG Stats, docs/playlog.md), read by nobody here.
NOT_CLI = {"season.club", "season.create", "bgstats.play"}


def prepare_data_dir(data_dir: str, main) -> None:
    """The club and season that `season add-result` and `season settings` write to."""
    assert main(["season", "club-create", "Fuzz club", "--data-dir", data_dir]) == 0
    assert main(["season", "create", "--club", "Fuzz club", "--game", "conquest-italy", "--year", "2026",
                 "--data-dir", data_dir]) == 0
