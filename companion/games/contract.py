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

    def final_points(self, state: dict) -> dict | None:
        """Each player's points at the end by the game's own count, ``{player: number}``, or None before the
        end (a Web of Power scoring with unknown parts): a tournament's game points and a play log's score."""

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


REQUIRED_ATTRIBUTES = {"GAME_ID": str, "NAME": str, "EVENT_TYPES": frozenset, "USES_CLOCK": bool,
                       "MIN_PLAYERS": int, "MAX_PLAYERS": int}
REQUIRED_FUNCTIONS = ("initial_state", "apply", "summary", "is_ended", "final_ranking", "final_points", "score")

# Every optional hook, named once: what shared code may read of a game module and nothing else
# (``tests/test_layers.py`` finds every ``getattr(module, "NAME")`` of the package here). A mistyped name
# is a problem ``check_game`` names, not a hook that silently does nothing.
OPTIONAL_FUNCTIONS = {
    # secrets (companion/services/policy.py)
    "public_view": "public_view(state, viewer) -> state: what the phone seated as viewer (None: a TV) may see",
    "public_summary": "public_summary(summary, state, viewer) -> summary: a summary that would tell a secret",
    "public_event": "public_event(event, viewer) -> event | None: None hides the event's data",
    # the board or map file (companion map check)
    "check_map": "check_map(doc, **options) -> report", "map_svg": "map_svg(doc) -> SVG text",
    # the match clock (companion/core/match.py applies them)
    "out_of_turn": "out_of_turn(state) -> [player]: the seats the clock skips (eliminated)",
    "end_by_clock": "end_by_clock(state, ended_by) -> state: the game's end when the clock ends the match",
    "turn_closed": "turn_closed(before, after) -> player | None: the game event ended that player's turn",
    "holds_clock": "holds_clock(state) -> reason | None: a step that takes no clock event stops its time",
    "clock_seats": "clock_seats(state) -> [player]: the clock's seat order, its first player first",
    # set-up and the server's draws (companion/services/matches.py)
    "setup_over": "setup_over(state) -> bool: the set-up is done (an armed clock starts); without it, none",
    "dice_needed": "dice_needed(state, action, data) -> {...}: the dice an action of ACTIONS would roll",
    # who an event acts for (companion/services/policy.py, acting_seat): else data.player
    "acting_player": "acting_player(state, type, data) -> (player, field) | None: the seat an event acts for",
}
OPTIONAL_ATTRIBUTES = {
    # who may write what (companion/services/policy.py)
    "ORGANISER_EVENTS": (dict, "{type: None | field}: corrections outside the rules, the organiser's"),
    "OWN_SECRET_EVENT_TYPES": (frozenset, "event types that record a player's own secret"),
    "SECRET_EVENT_TYPES": (frozenset, "event types whose data is hidden (a game with public_view only)"),
    "SECRET_REFUSAL_EVENT_TYPES": (frozenset, "event types whose refusal may concern another's secret"),
    "SECRET_REFUSAL_ALWAYS": (frozenset, "of those, the ones every refusal of which is quiet"),
    "SECRET_REFUSAL_TEMPLATES": (frozenset, "the refusal sentences that would name a secret"),
    "SECRET_RESETS": (dict, "{type: field}: a truthy data[field] resets a secret recorded before"),
    # what the server completes (companion/services/matches.py, MatchService.act)
    "ACTIONS": (dict, "{action: (event type, fn(state, players, data, rng, effective) -> (data, extra))}"),
    # the clock's turn (companion/core/match.py)
    "TURN_EVENT_TYPES": (frozenset, "the game events of a turn in progress (the clock must be running)"),
    # a result entered by hand (result.entered, companion/core/match.py): the flags it may carry; else none
    "RESULT_FLAGS": (frozenset, 'a frozenset of "objective" and "eliminated"'),
}
HOOKS = frozenset(REQUIRED_ATTRIBUTES) | frozenset(REQUIRED_FUNCTIONS) | frozenset(OPTIONAL_FUNCTIONS) \
    | frozenset(OPTIONAL_ATTRIBUTES)


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
    for name, (kind, _meaning) in OPTIONAL_ATTRIBUTES.items():
        if hasattr(module, name) and not isinstance(getattr(module, name), kind):
            problems.append(f"{name} must be a {kind.__name__}")
    for name in sorted(vars(module)):
        near = _near_hook(name)
        if near:
            problems.append(f"{name} is no hook of the contract: {near} is meant?")
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


def _near_hook(name: str) -> str | None:
    """The hook a module's own name almost spells (``public_veiw``, ``SECRET_RESET``), or None: a name the
    shared code would never read."""
    import difflib

    if name.startswith("_") or name in HOOKS:
        return None
    near = difflib.get_close_matches(name, sorted(HOOKS), n=1, cutoff=0.85)
    if not near or name.endswith(near[0]):  # (FACTIONS is its own word, not ACTIONS mistyped)
        return None
    return near[0]


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
