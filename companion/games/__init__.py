"""The games. One module per game: pure functions over plain JSON-able data, no I/O.

Every game module defines:

- ``GAME_ID``: the id used by the CLI, the API and the store (``web-of-power``).
- ``EVENT_TYPES``: the match event types its reducer accepts.
- ``initial_state(players, options) -> dict``: the state of a new match.
- ``apply(state, event) -> dict``: the pure reducer. It returns a new state and never
  mutates its input; it raises ``RuleError`` (the rules refuse it now) or ``InputError``
  (the event is malformed, ``field`` naming the path inside ``data``).
- ``score(doc) -> dict``: ``companion score GAME FILE``; raises ``InputError`` with a JSON path.

and may define ``check_map(doc) -> dict`` / ``map_svg(doc) -> str`` for ``companion map check``,
and ``summary(state) -> dict`` for what the pages show. A game that keeps the turn beside the match
clock (conquest-italy) may also define ``TURN_EVENT_TYPES`` (refused while the clock waits for a final
roll), ``out_of_turn(state) -> [player]`` (seats the clock skips) and ``end_by_clock(state, ended_by)``
(the clock ended the match: the game ends too); ``companion/matches.py`` applies them.
"""

from __future__ import annotations

import importlib

from companion.errors import InputError

GAMES = {
    "web-of-power": "companion.games.web_of_power",
    "conquest-italy": "companion.games.conquest_italy",
    "richelieu": "companion.games.richelieu",
    "rome-is-burning": "companion.games.rome_is_burning",
}


def game_module(game_id: str, field: str = "game"):
    name = GAMES.get(game_id)
    if name is None:
        raise InputError(f"unknown game {game_id!r} (known: {', '.join(sorted(GAMES))})", field)
    return importlib.import_module(name)
