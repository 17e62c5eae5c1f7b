"""The match clock: a pure fold over a match's clock events (no I/O, never reads the real clock).

Rulings (``docs/rulings.md#match-clock``; the rule book, "DURATA PARTITA" and "FINE DEL GIOCO", is ambiguous):

- ``clock.start {limit_minutes}`` (default 120) after set-up starts the countdown; only running time counts
  (``clock.pause`` / ``clock.resume``). The seat order is the match's player order; the first seat plays first.
- ``clock.arm {limit_minutes}`` (the start of a tournament round at a table still setting up) sets the
  minutes and leaves the clock waiting: the match service starts it when the game's set-up is done
  (``docs/rulings.md#the-clock-of-a-tournament-round``); a ``clock.start`` without minutes keeps them.
- Phases: ``setup`` -> ``regular`` -> when the clock reaches zero during a turn, ``finishing-round`` (the turn
  in progress continues and the round is played out to the last seat) -> after the last seat's turn,
  ``last-lap`` (one more full round) -> after the last seat's turn, ``final-rounds`` -> ``ended``.
- In ``final-rounds`` a player who ends a turn (``turn.end {player, conquered}``) having conquered fewer than 2
  territories in it owes a ``final.roll {player, dice: [a, b]}`` before the next turn; a sum <= the threshold
  ends the match. The threshold is 4 in the first final round and rises by 1 after each turn of the last seat
  (after its roll, if any), up to 12.
- ``objective.completed {player}`` ends the match at once.
- Seats the game puts out (conquest-italy: an eliminated player, :func:`skip_seats`) are skipped from then on;
  "after the last seat's turn" is then after the last seat still in.
- A match the game ends by its own rules stops the clock there (``end_by_game``: reason ``game``).
- A turn the game closes without a ``turn.end`` moves the clock on too (``end_turn``); a game step that
  takes no clock event (Web of Power's scoring step) stops its running time (``hold``).
- Refused: ``turn.end`` by a player whose turn it isn't, a roll nobody owes, dice outside 1-6, events out of
  time order, turns or rolls while the clock is paused, anything after the end.

The clock reaching zero is a function of time, so it is decided lazily: when an event arrives (or the view
is asked) at an instant after the running time hit zero, the regular phase became ``finishing-round`` at
that instant. The instant the running time equals the limit belongs to the turn in progress.

Running time is kept in whole microseconds (exact integer arithmetic); the view reports seconds with
millisecond precision. The state is plain JSON data.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from companion.base.errors import InputError, RuleError
from companion.base.timeutil import parse_iso

EVENT_TYPES = frozenset({
    "clock.arm", "clock.start", "clock.pause", "clock.resume", "turn.end", "final.roll", "objective.completed",
})

PHASES = ("setup", "regular", "finishing-round", "last-lap", "final-rounds", "ended")

DEFAULT_LIMIT_MINUTES = 120
MAX_LIMIT_MINUTES = 24 * 60
FIRST_THRESHOLD = 4
MAX_THRESHOLD = 12
EXEMPT_CONQUESTS = 2  # conquering at least this many territories in a final-round turn exempts from the roll
DIE_FACES = (1, 6)

_US = 1_000_000


def _iso(dt: datetime) -> str:
    """Microsecond ISO-8601 UTC (state keeps full precision; the store writes milliseconds)."""
    return dt.astimezone(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _us_between(a: datetime, b: datetime) -> int:
    return (b - a) // timedelta(microseconds=1)


def initial_state(players, options=None) -> dict:
    if not isinstance(players, list) or not players:
        raise InputError("must be a non-empty list of player names", "players")
    return {
        "players": list(players),
        "phase": "setup",
        "round": 0,
        "seat": None,             # index into players of whose turn it is
        "awaiting_roll": None,    # the player who owes a final roll, if any
        "final_threshold": None,
        "limit_us": DEFAULT_LIMIT_MINUTES * 60 * _US,
        "elapsed_us": 0,          # running time up to running_since (or up to the pause)
        "running_since": None,    # ISO instant of the start/resume while the clock runs
        "expired_at": None,       # ISO instant the running time reached the limit
        "last_at": None,          # ISO instant of the last clock event (time order)
        "ended": False,
        "ended_by": None,
        "ended_at": None,
        "skipped": [],            # players whose seats the turn order skips (the game put them out)
        "armed": False,           # clock.arm seen: the clock starts when the game's set-up is done
    }


# -- time ------------------------------------------------------------------

def elapsed_us(state: dict, at: datetime) -> int:
    """Running time at instant ``at`` (not before the last event)."""
    if state["running_since"] is None:
        return state["elapsed_us"]
    return state["elapsed_us"] + max(0, _us_between(parse_iso(state["running_since"]), at))


def _settle(state: dict, at: datetime) -> dict:
    """Decide lazily whether the clock reached zero before ``at``: the regular phase then became
    ``finishing-round`` at the instant it hit zero."""
    if state["phase"] != "regular" or elapsed_us(state, at) < state["limit_us"]:
        return state
    s = dict(state)
    s["phase"] = "finishing-round"
    if state["running_since"] is not None:
        hit = parse_iso(state["running_since"]) + timedelta(
            microseconds=state["limit_us"] - state["elapsed_us"])
    else:  # reached exactly at a pause
        hit = parse_iso(state["last_at"]) if state["last_at"] else at
    s["expired_at"] = _iso(hit)
    return s


# -- validation helpers ----------------------------------------------------

def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _player(state: dict, data: dict) -> str:
    p = data.get("player")
    if not isinstance(p, str) or not p:
        raise InputError("must be a player's name", "player")
    if p not in state["players"]:
        raise InputError("unknown player {p!r} (players: {names})", "player", p=p, names=', '.join(state['players']))
    return p


def _dice(data: dict) -> list[int]:
    dice = data.get("dice")
    if not isinstance(dice, list) or len(dice) != 2:
        raise InputError("must be a list of two dice, e.g. [3, 5]", "dice")
    lo, hi = DIE_FACES
    for i, d in enumerate(dice):
        if not _is_int(d) or not lo <= d <= hi:
            raise InputError("a die shows a whole number from {lo} to {hi}, not {d!r}", f"dice[{i}]", lo=lo, hi=hi, d=d)
    return list(dice)


def _current(state: dict) -> str | None:
    if state["seat"] is None or state["ended"]:
        return None
    return state["players"][state["seat"]]


def _need_started(state: dict) -> None:
    if state["phase"] == "setup":
        raise RuleError("the clock has not started: it starts when the set-up is done", "type")


def _need_running(state: dict, what: str) -> None:
    _need_started(state)
    if state["running_since"] is None:
        raise RuleError("the clock is paused: resume it before {what:w@do}", "type", what=what)


# -- transitions -------------------------------------------------------------

def _stop_running(s: dict, at: datetime) -> None:
    s["elapsed_us"] = elapsed_us(s, at)
    s["running_since"] = None


def _end(s: dict, reason: str, player: str | None, at: datetime) -> None:
    _stop_running(s, at)
    s["phase"] = "ended"
    s["ended"] = True
    s["ended_by"] = {"reason": reason, "player": player}
    s["ended_at"] = _iso(at)
    s["awaiting_roll"] = None


def _next_seat(s: dict) -> None:
    if s["seat"] < len(s["players"]) - 1:
        s["seat"] += 1
        return
    s["seat"] = 0
    s["round"] += 1
    if s["phase"] == "finishing-round":
        s["phase"] = "last-lap"
    elif s["phase"] == "last-lap":
        s["phase"] = "final-rounds"
        s["final_threshold"] = FIRST_THRESHOLD
    elif s["phase"] == "final-rounds":
        s["final_threshold"] = min(MAX_THRESHOLD, s["final_threshold"] + 1)


def _next_turn(s: dict) -> None:
    """The current seat's turn is over (and its roll, if it owed one): the next seat still in plays."""
    skipped = s.get("skipped") or ()
    for _ in range(len(s["players"])):
        _next_seat(s)
        if s["players"][s["seat"]] not in skipped:
            return


def skip_seats(state: dict, players) -> dict:
    """The game says which players are out (conquest-italy: eliminated): their seats are skipped from then
    on; if the seat whose turn it is goes out, the next seat still in plays. Pure; the same state when
    nothing changes."""
    skipped = [p for p in state["players"] if p in set(players)]
    if skipped == list(state.get("skipped") or []):
        return state
    s = dict(state)
    s["skipped"] = skipped
    if (not s["ended"] and s["seat"] is not None and s["awaiting_roll"] is None
            and s["players"][s["seat"]] in skipped and len(skipped) < len(s["players"])):
        _next_turn(s)
    return s


def apply(state: dict, event: dict) -> dict:
    """Pure reducer: returns a new state, never mutates ``state``; raises RuleError/InputError."""
    t = event.get("type")
    if t not in EVENT_TYPES:
        raise InputError("not a clock event: {t!r}", "type", t=t)
    data = event.get("data") or {}
    if not isinstance(data, dict):
        raise InputError("event data must be an object", "data")
    at = parse_iso(event.get("at"), "at")
    if state["last_at"] is not None and at < parse_iso(state["last_at"]):
        raise RuleError("out of time order: stamped {value}, before the previous event ({last_at})", "at", value=event.get('at'), last_at=state['last_at'])
    if state["ended"]:
        raise RuleError("the match has ended", "type")

    s = dict(_settle(state, at))
    if t in ("clock.start", "clock.arm"):
        if s["phase"] != "setup":
            raise RuleError("the clock has started already", "type")
        # no minutes given: those the clock was armed with (a tournament's), else the default
        minutes = data.get("limit_minutes", s["limit_us"] // (60 * _US))
        if not _is_int(minutes) or not 1 <= minutes <= MAX_LIMIT_MINUTES:
            raise InputError("must be a whole number of minutes from 1 to {MAX_LIMIT_MINUTES}", "limit_minutes", MAX_LIMIT_MINUTES=MAX_LIMIT_MINUTES)
        if t == "clock.arm":
            if s.get("armed"):
                raise RuleError("the clock is set already: it starts when the set-up is done", "type")
            s.update(armed=True, limit_us=minutes * 60 * _US)
            return _stamp(s, at)
        s.update(phase="regular", round=1, seat=0, limit_us=minutes * 60 * _US, elapsed_us=0,
                 running_since=_iso(at))
    elif t == "clock.pause":
        _need_started(s)
        reason = data.get("reason")
        if reason is not None and (not isinstance(reason, str) or len(reason) > 200):
            raise InputError("must be a short text", "reason")
        if s["running_since"] is None:
            raise RuleError("the clock is paused already", "type")
        _stop_running(s, at)
    elif t == "clock.resume":
        _need_started(s)
        if s["running_since"] is not None:
            raise RuleError("the clock is running already", "type")
        s["running_since"] = _iso(at)
    elif t == "turn.end":
        player = _player(s, data)
        conquered = data.get("conquered")
        if conquered is not None and (not _is_int(conquered) or conquered < 0):
            raise InputError("must be a whole number >= 0 (territories conquered in this turn)", "conquered")
        _need_running(s, "ending a turn")
        if s["awaiting_roll"] is not None:
            raise RuleError("{awaiting_roll} owes a final roll before the next turn", "type", awaiting_roll=s['awaiting_roll'])
        if player != _current(s):
            raise RuleError("it is {value}'s turn, not {player}'s", "player", value=_current(s), player=player)
        if s["phase"] == "final-rounds":
            if conquered is None:
                raise InputError("required in the final rounds (fewer than 2 conquests owes a roll)",
                                 "conquered")
            if conquered < EXEMPT_CONQUESTS:
                s["awaiting_roll"] = player
                return _stamp(s, at)
        _next_turn(s)
    elif t == "final.roll":
        player = _player(s, data)
        dice = _dice(data)
        _need_running(s, "rolling")
        if s["awaiting_roll"] is None:
            raise RuleError("nobody owes a final roll now", "player")
        if player != s["awaiting_roll"]:
            raise RuleError("{awaiting_roll} owes the final roll, not {player}", "player", awaiting_roll=s['awaiting_roll'], player=player)
        if sum(dice) <= s["final_threshold"]:
            _end(s, "final-roll", player, at)
        else:
            s["awaiting_roll"] = None
            _next_turn(s)
    elif t == "objective.completed":
        player = _player(s, data)
        _need_started(s)
        _end(s, "objective", player, at)
    return _stamp(s, at)


def _stamp(s: dict, at: datetime) -> dict:
    s["last_at"] = _iso(at)
    return s


def end_by_game(state: dict, at_iso: str | None, reason: str = "game") -> dict:
    """The game ended by its own rules (e.g. every other player eliminated, a final scoring), or the
    organiser entered its result (``reason="result"``): the clock stops at that instant and shows the match
    ended (``ended_by: {"reason": "game", "player": null}``).
    Pure; an already ended clock is returned as it is."""
    if state["ended"]:
        return state
    at_iso = at_iso or state["last_at"]
    if at_iso is None:  # the clock never saw an event: nothing ran
        s = dict(state)
        s.update(phase="ended", ended=True, ended_by={"reason": reason, "player": None}, awaiting_roll=None)
        return s
    at = parse_iso(at_iso, "at")
    if state["last_at"] is not None:
        at = max(at, parse_iso(state["last_at"]))
    s = dict(_settle(state, at))
    _end(s, reason, None, at)
    return _stamp(s, at)


def end_turn(state: dict, player: str, at_iso: str | None) -> dict:
    """The game closed ``player``'s turn without a ``turn.end`` (Web of Power: the deck ran out, or the next
    player placed): the clock moves on as for that player's ``turn.end`` counting no conquest, refused as it
    would be (paused, a roll owed). Nothing changes when it is not ``player``'s turn on the clock. Pure."""
    if state["ended"] or state["phase"] == "setup" or _current(state) != player:
        return state
    return apply(state, {"type": "turn.end", "data": {"player": player, "conquered": 0}, "at": at_iso})


def hold(state: dict, at_iso: str | None) -> dict:
    """The game waits at a step that takes no clock event (Web of Power's scoring step): the running time
    stops at ``at_iso`` (the match fold refuses the clock's events meanwhile). Pure; the same state when the
    clock is not running."""
    if state["ended"] or state["running_since"] is None or at_iso is None:
        return state
    at = parse_iso(at_iso, "at")
    if state["last_at"] is not None:
        at = max(at, parse_iso(state["last_at"]))
    s = dict(_settle(state, at))
    _stop_running(s, at)
    return _stamp(s, at)


def is_ended(state: dict) -> bool:
    return bool(state["ended"])


def view(state: dict, now_iso: str | None) -> dict:
    """What the match state shows at instant ``now_iso`` (never before the last event; None: at the
    last event). Exactly the keys the match view merges in."""
    if now_iso is not None:
        now = parse_iso(now_iso, "now")
        if state["last_at"] is not None:
            now = max(now, parse_iso(state["last_at"]))
    elif state["last_at"] is not None:
        now = parse_iso(state["last_at"])
    else:
        now = None
    s = _settle(state, now) if now is not None and not state["ended"] else state
    elapsed_ms = (elapsed_us(s, now) if now is not None else s["elapsed_us"]) // 1000
    limit_ms = s["limit_us"] // 1000
    out = {
        "phase": s["phase"],
        "round": s["round"],
        "current_player": _current(s),
        "awaiting_roll": s["awaiting_roll"],
        "final_threshold": s["final_threshold"],
        "ended": s["ended"],
        "ended_by": dict(s["ended_by"]) if s["ended_by"] else None,
        "clock": {
            "limit_seconds": limit_ms // 1000,
            "elapsed_seconds": elapsed_ms / 1000,
            "remaining_seconds": max(0, limit_ms - elapsed_ms) / 1000,
            "running": s["running_since"] is not None,
        },
    }
    if s.get("armed") and s["phase"] == "setup":
        out["armed"] = True  # the clock starts by itself when the set-up is done
    return out


# -- what the adapters ask of the end-game (the box's NEXT and ROLL buttons, the server's dice) -------------

def conquered_matters(view: dict) -> bool:
    """Whether ending the current turn needs the conquered count: in the final rounds, fewer than
    ``EXEMPT_CONQUESTS`` conquests owe a final roll (none is owed yet)."""
    return view.get("phase") == "final-rounds" and not view.get("awaiting_roll")


def final_roll_data(state: dict, player: str | None, rng) -> dict:
    """The ``final.roll`` event data for the player who owes the roll now, the two dice rolled with
    ``rng``; refused when nobody owes one or ``player`` is not the one who does."""
    owed = state.get("awaiting_roll")
    if owed is None:
        raise RuleError("nobody owes a final roll now", "player")
    if player is not None and player != owed:
        raise RuleError("{owed} owes the final roll, not {player}", "player", owed=owed, player=player)
    return {"player": owed, "dice": [rng.randint(*DIE_FACES), rng.randint(*DIE_FACES)]}
