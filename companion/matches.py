"""A match is an append-only event log; its state is a fold of the events.

The same fold runs in the server, the CLI (``companion match state``) and the tests.

Events are ``{"seq", "type", "data", "at"}``. Three kinds:

- ``undo``: takes back the latest event that is still in effect (undo is itself an event).
- the clock's events (``companion.clock.EVENT_TYPES``), for matches that use the clock.
- the game's events (``EVENT_TYPES`` of the game module).

An event the rules refuse raises ``RuleError``/``InputError``; the server refuses to store it.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

from companion.errors import InputError, RuleError, join_path
from companion.games import game_module

UNDO = "undo"


def uses_clock(game: str, options: dict | None) -> bool:
    """Does a match run the clock? ``options.clock`` when given, else the game's ``USES_CLOCK``
    (the conquest game is played against the clock; others may opt in)."""
    options = options or {}
    if "clock" in options:
        return bool(options["clock"])
    return bool(getattr(game_module(game), "USES_CLOCK", False))


def _clock():
    from companion import clock

    return clock


class Fold:
    """Folded state of one match, advanced one event at a time."""

    def __init__(self, game: str, players: list[str], options: dict | None = None, history=None):
        """``history``: optional ``callable(before_seq) -> events`` reading the stored log (the server's
        MatchService passes one). With it the fold keeps no copy of the events, only how many are in
        effect, and an undo folds the stored log again: the fold's memory stays flat however long
        the match runs."""
        self.game = game
        self.players = list(players)
        self.options = dict(options or {})
        self.module = game_module(game)
        self.clock_on = uses_clock(game, self.options)
        # without ``history``: the events in effect (undo removes from here), kept as compact JSON text
        # (a tenth of the memory of dicts; only undo, rare, reads them back)
        self._effective: list[str] = []
        self._history = history
        self._count = 0  # events in effect
        self.last_seq = 0
        self.last_at: str | None = None
        self._reset()

    @property
    def effective(self) -> list[dict]:
        """The events still in effect, oldest first."""
        if self._history is not None:
            return Fold(self.game, self.players, self.options)._load(self._history(self.last_seq + 1)).effective
        return [json.loads(e) for e in self._effective]

    def _load(self, events) -> "Fold":
        for e in events:
            self.apply(e)
        return self

    def _reset(self):
        self.game_state = self.module.initial_state(self.players, self.options)
        self.clock_state = _clock().initial_state(self.players, self.options) if self.clock_on else None

    def _game_ended(self, game_state) -> bool:
        ended = getattr(self.module, "is_ended", None)
        return ended is not None and bool(ended(game_state))

    def _step(self, game_state, clock_state, event):
        t = event["type"]
        clock_event = self.clock_on and t in _clock().EVENT_TYPES
        if not clock_event and t not in self.module.EVENT_TYPES:
            raise InputError(f"unknown event type {t!r} for {self.game}", "type")
        # An ended match takes nothing but undo: neither the game's events after the clock ended it
        # (they would change the final ranking the season recorded) nor clock events after the game ended.
        if self._game_ended(game_state) or (clock_state is not None and clock_state.get("ended")):
            raise RuleError("the match has ended", "type")
        if clock_event:
            clock_state = _clock().apply(clock_state, event)
        if t in self.module.EVENT_TYPES:
            game_state = self.module.apply(game_state, event)
            if clock_state is not None and not clock_state.get("ended") and self._game_ended(game_state):
                # the game ended by its own rules: the clock stops and shows it
                clock_state = _clock().end_by_game(clock_state, event.get("at"))
        return game_state, clock_state

    def apply(self, event: dict) -> None:
        """Apply one stored or proposed event; raises without changing anything on refusal."""
        if event["type"] == UNDO:
            if not self._count:
                raise RuleError("nothing to undo", "type")
            if self._history is not None:
                # fold the stored log up to this undo again (keeping the events only meanwhile)
                full = Fold(self.game, self.players, self.options)._load(self._history(event["seq"]))
                full.apply(event)
                self.game_state, self.clock_state, self._count = full.game_state, full.clock_state, full._count
            else:
                remaining = self._effective[:-1]
                g, c = self._replay(json.loads(e) for e in remaining)
                self._effective = remaining
                self._count -= 1
                self.game_state, self.clock_state = g, c
        else:
            g, c = self._step(self.game_state, self.clock_state, event)
            self.game_state, self.clock_state = g, c
            self._count += 1
            if self._history is None:
                self._effective.append(json.dumps(
                    {k: event[k] for k in ("seq", "type", "data", "at") if k in event}, separators=(",", ":")))
        self.last_seq = event.get("seq", self.last_seq + 1)
        self.last_at = event.get("at", self.last_at)

    def _replay(self, events):
        g = self.module.initial_state(self.players, self.options)
        c = _clock().initial_state(self.players, self.options) if self.clock_on else None
        for e in events:
            g, c = self._step(g, c, e)
        return g, c

    def check(self, event: dict) -> None:
        """Would the event be accepted now? Raises if not; changes nothing."""
        if event["type"] == UNDO:
            if not self._count:
                raise RuleError("nothing to undo", "type")
            return
        self._step(self.game_state, self.clock_state, event)

    def ended(self) -> bool:
        ended = getattr(self.module, "is_ended", None)
        if ended is not None and ended(self.game_state):
            return True
        return bool(self.clock_state and self.clock_state.get("ended"))

    def view(self, now: str | None = None) -> dict:
        out = {
            "game": self.game,
            "players": self.players,
            "seq": self.last_seq,
            "state": self.game_state,
        }
        summary = getattr(self.module, "summary", None)
        if summary is not None:
            out["summary"] = summary(self.game_state)
        if self.clock_on:
            # the clock's view: phase, round, current_player, awaiting_roll, final_threshold,
            # ended, ended_by, clock {limit_seconds, elapsed_seconds, remaining_seconds, running}
            out.update(_clock().view(self.clock_state, now or self.last_at))
        return out


def fold(game: str, players: list[str], events: list[dict], options: dict | None = None) -> Fold:
    f = Fold(game, players, options)
    for e in events:
        f.apply(e)
    return f


def fold_export(doc: dict, until: str | None = None) -> Fold:
    """Fold an exported match document (events at or before ``until`` when given)."""
    from companion.timeutil import parse_iso

    events = doc["events"]
    if until is not None:
        limit = parse_iso(until, "--at")
        events = [e for e in events if parse_iso(e["at"]) <= limit]
    return fold(doc["game"], doc["players"], events, doc.get("options"))


def event_path(where: str, field: str | None) -> str:
    """Reducers name fields inside the event's ``data`` (``player``, ``dice[1]``) or ``type``."""
    if not field:
        return where
    if field in ("type", "seq", "at"):
        return join_path(where, field)
    return join_path(f"{where}.data", field)


def check_export(doc) -> Fold:
    """Validate an exported match (schema, seqs, time order, every event legal) and fold it.
    Errors name the JSON path, e.g. ``$.events[3].data.player``."""
    from companion.errors import CompanionError
    from companion.schemas import validate
    from companion.timeutil import parse_iso

    validate("match-export", doc)
    if len(set(doc["players"])) != len(doc["players"]):
        raise InputError("a player is named twice", "$.players")
    try:
        f = Fold(doc["game"], doc["players"], doc.get("options"))
    except CompanionError as exc:
        raise InputError(exc.message, "$.options" if exc.field not in ("players",) else "$.players") from None
    previous = None
    for i, e in enumerate(doc["events"]):
        where = f"$.events[{i}]"
        if e["seq"] != i + 1:
            raise InputError(f"seq must be {i + 1} (seqs count from 1 without gaps)", where + ".seq")
        at = parse_iso(e["at"], where + ".at")
        if previous is not None and at < previous:
            raise InputError("events must be in time order", where + ".at")
        previous = at
        try:
            f.apply({"seq": e["seq"], "type": e["type"], "data": e.get("data", {}), "at": e["at"]})
        except CompanionError as exc:
            raise InputError(exc.message, event_path(where, exc.field)) from None
    return f


class MatchService:
    """The core's one entry point for match writes: validate by folding, then store.

    Keeps the folded state of the most recently used matches in memory (the server is the only
    writer; a match pushed out is folded again from the store when next asked for), and tells
    subscribers (live updates, GPIO LEDs) about every stored event.
    """

    def __init__(self, store, max_folds: int = 24):
        self.store = store
        self.max_folds = max_folds
        self._folds: OrderedDict[str, Fold] = OrderedDict()
        self._lock = threading.RLock()
        self._subscribers: list = []

    def subscribe(self, callback) -> None:
        """``callback(match_id, event, fold)`` after each committed event."""
        self._subscribers.append(callback)

    def unsubscribe(self, callback) -> None:
        if callback in self._subscribers:
            self._subscribers.remove(callback)

    def create(self, game: str, players: list[str], options: dict | None = None, match_id: str | None = None) -> dict:
        game_module(game)
        if not isinstance(players, list) or not players:
            raise InputError("must be a non-empty list of player names", "players")
        if len(set(players)) != len(players):
            raise InputError("a player is named twice", "players")
        Fold(game, players, options)  # the game's initial_state checks player counts and options
        return self.store.create_match(game, players, options, match_id=match_id)

    def fold(self, match_id: str) -> Fold:
        with self._lock:
            f = self._folds.get(match_id)
            if f is None:
                m = self.store.get_match(match_id)
                def history(before_seq, match_id=match_id):
                    return [e for e in self.store.events(match_id) if e["seq"] < before_seq]

                f = Fold(m["game"], m["players"], m["options"], history=history)._load(self.store.events(match_id))
                self._folds[match_id] = f
                while len(self._folds) > self.max_folds:
                    self._folds.popitem(last=False)
            else:
                self._folds.move_to_end(match_id)
                # catch up with anything written by another path (e.g. import)
                for e in self.store.events(match_id, after_seq=f.last_seq):
                    f.apply(e)
            return f

    def state(self, match_id: str, now: str | None = None) -> dict:
        with self._lock:
            f = self.fold(match_id)
            return f.view(now or self.store.clock.now_iso())

    def append(self, match_id: str, type: str, data: dict | None = None,
               expected_seq: int | None = None, at: str | None = None) -> dict:
        if not isinstance(type, str) or not type:
            raise InputError("must be a non-empty string", "type")
        if data is not None and not isinstance(data, dict):
            raise InputError("must be an object", "data")
        with self._lock:
            f = self.fold(match_id)

            def check(event, last_seq):
                if last_seq != f.last_seq:  # another path wrote; re-read before judging
                    for e in self.store.events(match_id, after_seq=f.last_seq):
                        f.apply(e)
                f.check(event)

            event = self.store.append(match_id, type, data or {}, expected_seq=expected_seq, at=at, check=check)
            f.apply(event)
            status = "ended" if f.ended() else "open"
            if self.store.get_match(match_id)["status"] != status:
                self.store.set_status(match_id, status)
            for cb in list(self._subscribers):
                try:
                    cb(match_id, event, f)
                except Exception:  # a broken subscriber never loses a stored event
                    import logging

                    logging.getLogger(__name__).exception("subscriber failed")
            return event

    def undo(self, match_id: str, expected_seq: int | None = None) -> dict:
        return self.append(match_id, UNDO, {}, expected_seq=expected_seq)

    def forget(self, match_id: str) -> None:
        with self._lock:
            self._folds.pop(match_id, None)
