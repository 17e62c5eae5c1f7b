"""The contract every game module keeps (``companion.games.registry()`` lists them).

A game is a module of pure functions over plain JSON-able data (no I/O); :class:`Game` types it.
``check_game(module)`` lists what a module lacks or has of the wrong type (``tests/games/test_contract.py``
runs it over every registered game); ``check_ranking`` checks the one shape of ``final_ranking``.
"""

from __future__ import annotations

from typing import Any, Protocol, TypedDict, runtime_checkable


class Placing(TypedDict):
    """One player's result: ``place`` counts from 1 and players sharing a place cover the places
    after it (1, 2, 2, 4); ``objective``: completed the objective during the match (games without
    objectives: always False); ``eliminated``: out of the match before its end."""

    player: str
    place: int
    objective: bool
    eliminated: bool


@runtime_checkable
class Game(Protocol):
    """What every game module defines."""

    GAME_ID: str
    """The id used by the CLI, the API, the store and the schemas (``web-of-power``)."""
    NAME: str
    """The display name (``Web of Power``)."""
    EVENT_TYPES: frozenset[str]
    """The match event types its reducer accepts (``undo`` is generic; the clock's own events go to
    ``companion.core.clock`` for matches that use the clock)."""
    USES_CLOCK: bool
    """Whether a new match of this game runs the match clock; a match's ``options.clock`` overrides it."""
    MIN_PLAYERS: int
    MAX_PLAYERS: int

    def initial_state(self, players: list[str], options: dict) -> dict:
        """The state of a new match; raises ``InputError`` naming ``players`` or the option."""

    def apply(self, state: dict, event: dict) -> dict:
        """The pure reducer: a new state, never a mutation of ``state``. Raises ``RuleError`` (the rules
        refuse it now) or ``InputError`` (malformed), ``field`` naming the path inside ``data`` or ``type``."""

    def summary(self, state: dict) -> dict:
        """What every phone may see (never a secret); ``scores``/``breakdown`` feed the generic table."""

    def is_ended(self, state: dict) -> bool:
        """Has the match ended by the game's own rules?"""

    def final_ranking(self, state: dict) -> list[Placing] | None:
        """Every player once, best first (:class:`Placing`). Meant for an ended match (the club season
        reads it); before the end it is the ranking if the match ended now, or None where the game cannot
        know it yet (a Web of Power scoring with unknown parts)."""

    def score(self, doc: Any) -> dict:
        """``companion score GAME FILE``; raises ``InputError`` with a JSON path."""


@runtime_checkable
class SecretGame(Protocol):
    """Optional: a game with secrets shows each phone its own view of the state and of events."""

    def public_view(self, state: dict, viewer: str | None) -> dict: ...

    # also optional: ``public_summary(summary, state, viewer) -> summary`` (a summary that would tell a
    # secret: Richelieu's standings count the money and jewels behind the screens) and
    # ``public_event(event, viewer) -> event | None`` (None hides the event's data; a copy with ``hidden: [field,
    # ...]`` hides those fields). Both apply only before the end: the end turns every secret face up.


@runtime_checkable
class MapGame(Protocol):
    """Optional: a game with a board/map file (``companion map check``)."""

    def check_map(self, doc: Any, **options) -> dict: ...

    def map_svg(self, doc: Any) -> str: ...


# optional: ``RESULT_FLAGS`` (a frozenset of "objective"/"eliminated"): the flags a result entered by hand
# (``result.entered``, companion/core/match.py) may carry beside the places; without it, none
REQUIRED_ATTRIBUTES = {"GAME_ID": str, "NAME": str, "EVENT_TYPES": frozenset, "USES_CLOCK": bool,
                       "MIN_PLAYERS": int, "MAX_PLAYERS": int}
REQUIRED_FUNCTIONS = ("initial_state", "apply", "summary", "is_ended", "final_ranking", "score")
OPTIONAL_FUNCTIONS = ("public_view", "public_summary", "public_event", "check_map", "map_svg",
                      # the match clock's hooks (companion/core/match.py applies them)
                      "out_of_turn", "end_by_clock", "turn_closed", "holds_clock", "clock_seats",
                      # each player's points at the end, {player: number} or None (companion/core/playlog.py)
                      "final_points")


def check_game(module, game_id: str | None = None) -> list[str]:
    """What ``module`` lacks to be a :class:`Game` (empty when it is one)."""
    problems = []
    for name, kind in REQUIRED_ATTRIBUTES.items():
        if not hasattr(module, name):
            problems.append(f"{name} is missing")
            continue
        value = getattr(module, name)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            article = "an" if kind.__name__[0] in "aeiou" else "a"
            problems.append(f"{name} must be {article} {kind.__name__}, not {type(value).__name__}")
    for name in REQUIRED_FUNCTIONS:
        if not callable(getattr(module, name, None)):
            problems.append(f"{name}() is missing")
    for name in OPTIONAL_FUNCTIONS:
        if hasattr(module, name) and not callable(getattr(module, name)):
            problems.append(f"{name} must be a function")
    flags = getattr(module, "RESULT_FLAGS", frozenset())
    if not isinstance(flags, frozenset) or not flags <= {"objective", "eliminated"}:
        problems.append('RESULT_FLAGS must be a frozenset of "objective" and "eliminated"')
    if hasattr(module, "check_map") != hasattr(module, "map_svg"):
        problems.append("check_map() and map_svg() go together")
    if not problems:
        if game_id is not None and module.GAME_ID != game_id:
            problems.append(f"GAME_ID is {module.GAME_ID!r}, registered as {game_id!r}")
        if not all(isinstance(t, str) and t for t in module.EVENT_TYPES):
            problems.append("EVENT_TYPES must hold non-empty strings")
        if "undo" in module.EVENT_TYPES:
            problems.append("undo is generic (companion.core.match), not a game event")
        if not 1 <= module.MIN_PLAYERS <= module.MAX_PLAYERS:
            problems.append("MIN_PLAYERS must be 1 or more and at most MAX_PLAYERS")
        if not isinstance(module, Game):
            problems.append("not a companion.games.contract.Game")
    return problems


def check_ranking(ranking, players: list[str]) -> list[str]:
    """What is wrong with ``ranking`` as a ``final_ranking`` of a match of ``players`` (empty when
    nothing): the one shape, every player once, best first, places 1, 2, 2, 4."""
    if not isinstance(ranking, list):
        return [f"must be a list, not {type(ranking).__name__}"]
    problems = []
    for i, r in enumerate(ranking):
        if not isinstance(r, dict) or set(r) != set(Placing.__annotations__):
            problems.append(f"[{i}] must have exactly the keys player, place, objective, eliminated: {r!r}")
            continue
        if not isinstance(r["player"], str):
            problems.append(f"[{i}].player must be a string")
        if type(r["place"]) is not int:
            problems.append(f"[{i}].place must be an int")
        for flag in ("objective", "eliminated"):
            if type(r[flag]) is not bool:
                problems.append(f"[{i}].{flag} must be true or false")
    if problems:
        return problems
    names = [r["player"] for r in ranking]
    if sorted(names) != sorted(players):
        problems.append(f"must name every player once: {names} for {players}")
    places = [r["place"] for r in ranking]
    if places != sorted(places):
        problems.append(f"must be best first: places {places}")
    if any(p != 1 + sum(1 for q in places if q < p) for p in places):
        problems.append(f"places must follow 1, 2, 2, 4 (a shared place covers the ones after it): {places}")
    return problems


def competition_places(players: list[str], key) -> list[Placing]:
    """``players`` ranked by ``key(player)`` (smaller is better; equal keys share a place: 1, 2, 2, 4),
    seat order among equals, with no objective and nobody eliminated."""
    order = sorted(players, key=lambda p: (key(p), players.index(p)))
    out: list[Placing] = []
    for i, p in enumerate(order):
        place = out[-1]["place"] if out and key(order[i - 1]) == key(p) else i + 1
        out.append({"player": p, "place": place, "objective": False, "eliminated": False})
    return out
