"""The games. One module per game: pure functions over plain JSON-able data, no I/O.

``GAMES`` below is the one list of games: every other list (the CLI's choices, the API's
``/api/games``, the season's games, the schemas' enums, checked by a test) derives from it.
Each module keeps the contract of :class:`companion.games.contract.Game`: ``GAME_ID``, ``NAME``,
``EVENT_TYPES``, ``USES_CLOCK``, ``MIN_PLAYERS``/``MAX_PLAYERS``, ``initial_state``, ``apply``,
``summary``, ``is_ended``, ``final_ranking`` (one shape), ``score``; optionally ``public_view``/
``public_event`` (secrets) and ``check_map``/``map_svg`` (``companion map check``).

A game that keeps the turn beside the match clock (conquest-italy, web-of-power) may also define ``TURN_EVENT_TYPES``
(refused while the clock waits for a final roll), ``out_of_turn(state) -> [player]`` (seats the clock skips)
and ``end_by_clock(state, ended_by)`` (the clock ended the match: the game ends too). A game played with the
clock by option (web-of-power) may define ``turn_closed(before, after) -> player | None`` (a turn its event
closed without ``turn.end``: the clock's turn moves on) and ``holds_clock(state) -> reason | None`` (a step that
takes no clock event: its time stops, its events are refused), and ``clock_seats(state) -> [player]`` (the
clock's seat order, its first player first). ``companion/core/match.py`` applies them.
A game whose tracker has the server complete events (deal, dice) defines ``ACTIONS``
(``companion/services/matches.py``, ``MatchService.act``); events only an organiser may record (hand corrections
outside the rules) are its ``ORGANISER_EVENTS`` (``MatchService.append`` refuses them from anyone but an organiser: companion/services/policy.py).
"""

from __future__ import annotations

import importlib

from companion.base.errors import InputError

# game id -> module (imported when first used, so a CLI command that needs one game loads one)
GAMES = {
    "web-of-power": "companion.games.web_of_power",
    "conquest-italy": "companion.games.conquest_italy",
    "richelieu": "companion.games.richelieu",
    "rome-is-burning": "companion.games.rome_is_burning",
}


def xml_escape(data: str, entities: dict | None = None) -> str:
    """``xml.sax.saxutils.escape`` (``&``, ``<``, ``>``, then ``entities``) without importing it: that
    module imports ``urllib.request``, and with it ``http.client``, ``email`` and ``ssl`` (a tenth of a
    second of a CLI start on a Pi, for three replacements)."""
    data = data.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")
    for key, value in (entities or {}).items():
        data = data.replace(key, value)
    return data


def game_ids() -> list[str]:
    """The registered game ids, sorted (no module is imported)."""
    return sorted(GAMES)


_LOADED: dict = {}  # module name -> the module, once imported (a write asks for its game's several times)


def game_module(game_id: str, field: str = "game"):
    name = GAMES.get(game_id) if isinstance(game_id, str) else None
    module = _LOADED.get(name)
    if module is not None:
        return module
    if name is None:
        raise InputError("unknown game {game_id!r} (known: {names})", field, game_id=game_id, names=', '.join(sorted(GAMES)))
    module = _LOADED[name] = importlib.import_module(name)
    return module


def registry() -> dict:
    """Every game: ``{game id: module}`` (a :class:`companion.games.contract.Game` each), sorted by id."""
    return {gid: game_module(gid) for gid in game_ids()}


def map_games() -> list[str]:
    """The games with a board/map file (``check_map``/``map_svg``)."""
    return [gid for gid, m in registry().items() if hasattr(m, "check_map")]
