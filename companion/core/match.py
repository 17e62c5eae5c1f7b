"""A match is an append-only event log; its state is a fold of the events.

The same fold runs in the server, the CLI (``companion match state``) and the tests.

Events are ``{"seq", "type", "data", "at"}``. Four kinds:

- ``undo``: takes back the latest event that is still in effect (undo is itself an event).
- the clock's events (``companion.core.clock.EVENT_TYPES``), for matches that use the clock.
- the game's events (``EVENT_TYPES`` of the game module).
- ``result.entered`` (generic, every game): the final places entered by hand, in a match created with
  ``options.tracking = "result"`` (a table that scored on paper); such a match takes no other event but
  undo, runs no clock, and its final ranking is the entered one (docs/rulings.md, "Final result only").
  In a match the phones follow it is the organiser's correction (``correction: true``; the match service
  refuses it from anyone else): it ends the match there with those places, the clock stopped
  (docs/rulings.md#the-organisers-result).

An event the rules refuse raises ``RuleError``/``InputError``; the server refuses to store it.
"""

from __future__ import annotations

import json

from companion.base.errors import InputError, RuleError, join_path
from companion.base.jsonio import compact
from companion.games import game_module

UNDO = "undo"
RESULT = "result.entered"
PI_MARK = "rolled_by"  # data.rolled_by == "pi": the Pi drew it at random (companion/services/matches.py)
MARKS = ("pi", "dice")  # "dice": the box read the faces from the table's smart dice (companion/services/dice.py)
TRACKING = ("turns", "result")


def result_only(options: dict | None) -> bool:
    """Is the match recorded by its final result only (``options.tracking = "result"``)?"""
    return isinstance(options, dict) and options.get("tracking") == "result"


DICE_SOURCES = ("pi", "table", "smart")  # options.dice: where a match's dice come from (docs/dice.md)


def check_dice(options: dict | None) -> None:
    """``options.dice``, when given: ``"pi"`` (the box rolls, the default), ``"table"`` (the table rolls and
    types the faces) or ``"smart"`` (the table rolls smart dice and the box reads them)."""
    if isinstance(options, dict) and "dice" in options and options["dice"] not in DICE_SOURCES:
        raise InputError("must be one of {names}", "dice", names=", ".join(DICE_SOURCES))


def check_tracking(options: dict | None) -> None:
    """``options.tracking``: ``"turns"`` (the default: the tracker follows the match) or ``"result"``
    (only the final places, entered at the end); a result-only match runs no clock."""
    if not isinstance(options, dict) or "tracking" not in options:
        return
    if options["tracking"] not in TRACKING:
        raise InputError('must be "turns" (follow the match) or "result" (only the final places)', "tracking")
    if options["tracking"] == "result" and options.get("clock"):
        raise InputError("a match recorded by its final result only runs no clock", "clock")


def check_result(module, players: list[str], data) -> list[dict]:
    """The ``data`` of a ``result.entered`` event, checked: ``{"places": [{"player", "place",
    "objective"?, "eliminated"?}]}``, every player once, places 1..n in the one shape (1, 2, 2, 4);
    ``objective``/``eliminated`` only for a game that has them (``RESULT_FLAGS``), the objective's
    completer first and alone there, eliminated players after every player still in. Returns the
    ranking best first (``companion.games.contract.Placing``); raises InputError naming the field."""
    if not isinstance(data, dict):
        raise InputError("must be an object", "data")
    unknown = sorted(set(data) - {"places", "correction"})
    if unknown:
        raise InputError("unknown field {unknown!r} (give places)", unknown[0], unknown=unknown[0])
    places = data.get("places")
    if not isinstance(places, list) or not places:
        raise InputError("required: one entry per player, [{player, place}]", "places")
    flags = getattr(module, "RESULT_FLAGS", frozenset())
    n = len(players)
    seen: dict[str, int] = {}
    rows = []
    for i, r in enumerate(places):
        where = f"places[{i}]"
        if not isinstance(r, dict):
            raise InputError("must be an object {player, place}", where)
        extra = sorted(set(r) - {"player", "place", "objective", "eliminated"})
        if extra:
            raise InputError("unknown field {extra!r}", f"{where}.{extra[0]}", extra=extra[0])
        p = r.get("player")
        if not isinstance(p, str) or not p:
            raise InputError("must be a player's name", f"{where}.player")
        if p not in players:
            raise InputError("{p!r} does not play in this match", f"{where}.player", p=p)
        if p in seen:
            raise InputError("{p!r} is listed twice", f"{where}.player", p=p)
        seen[p] = i
        place = r.get("place")
        if isinstance(place, bool) or not isinstance(place, int) or not 1 <= place <= n:
            raise InputError("must be a place from 1 to {n}", f"{where}.place", n=n)
        row = {"player": p, "place": place, "objective": False, "eliminated": False}
        for flag in ("objective", "eliminated"):
            if flag in r:
                if not isinstance(r[flag], bool):
                    raise InputError("must be true or false", f"{where}.{flag}")
                if r[flag] and flag not in flags:
                    raise InputError("{NAME} has no {flag} in its results", f"{where}.{flag}", NAME=module.NAME, flag=flag)
                row[flag] = r[flag]
        rows.append(row)
    missing = [p for p in players if p not in seen]
    if missing:
        raise InputError("every player gets a place: {names} missing", "places", names=', '.join(missing))
    got = sorted(r["place"] for r in rows)
    for i, r in enumerate(rows):
        want = 1 + sum(1 for q in got if q < r["place"])
        if r["place"] != want:
            raise InputError("place {place} does not follow the others (a shared place covers the ones after it: 1, 2, "
                             "2, 4); here it would be {want}", f"places[{i}].place", place=r['place'], want=want)
    done = [i for i, r in enumerate(rows) if r["objective"]]
    if len(done) > 1:
        raise InputError("only one player can complete the objective", f"places[{done[1]}].objective")
    if done and rows[done[0]]["place"] != 1 or done and got.count(1) > 1:
        raise InputError("the player who completed the objective wins alone (place 1)", f"places[{done[0]}].place")
    alive = [r["place"] for r in rows if not r["eliminated"]]
    for i, r in enumerate(rows):
        if r["eliminated"] and alive and r["place"] <= max(alive):
            raise InputError("an eliminated player ranks after every player still in", f"places[{i}].place")
    rows.sort(key=lambda r: (r["place"], players.index(r["player"])))
    return rows


def uses_clock(game: str, options: dict | None) -> bool:
    """Does a match run the clock? ``options.clock`` when given, else the game's ``USES_CLOCK``
    (the conquest game is played against the clock; others may opt in). A match recorded by its
    final result only (``options.tracking = "result"``) runs none."""
    options = options or {}
    if result_only(options):
        return False
    if "clock" in options:
        return bool(options["clock"])
    return bool(getattr(game_module(game), "USES_CLOCK", False))


# An event's data, as a writer sends it (the store adds seq and at): at most this many bytes of JSON, and
# only the fields its events schema names (schemas/<game>.events.schema.json, the clock's for its events).
# Checked on the write path (MatchService), not when a stored log is folded again.
EVENT_DATA_MAX = 16 * 1024


def _data_fields(schema: str) -> dict[str, frozenset | None]:
    """{event type: the fields its data may have} from an events schema (None: the schema leaves it open)."""
    from companion.base.schemas import load_schema, resolve

    root = load_schema(schema)

    def fields(spec):
        if not isinstance(spec, dict):
            return None
        if "$ref" in spec:
            spec = resolve(spec["$ref"], schema)[0]
        if spec.get("type") != "object" and "properties" not in spec and "additionalProperties" not in spec:
            return None
        return frozenset(spec.get("properties", {}))

    out: dict[str, frozenset | None] = {}
    for case in root.get("allOf", []) + root.get("oneOf", []):
        when = case.get("if", case).get("properties", {}).get("type", {})
        then = case.get("then", case).get("properties", {})
        types = [when["const"]] if "const" in when else list(when.get("enum", []))
        for t in types:
            mine = fields(then.get("data"))
            out[t] = mine if t not in out or out[t] is None or mine is None else out[t] | mine
    return out


_FIELDS: dict[str, dict] = {}
_FIELDS_OF: dict[tuple, frozenset | None] = {}  # (game, clock_on, a known type) -> data_fields' answer


def data_fields(game: str, clock_on: bool, type_: str) -> frozenset | None:
    """The fields an event of ``type_`` may carry in a match of ``game`` (with the clock or not): the
    game's and, for the clock's events, the clock's; None where no schema names them."""
    key = (game, clock_on, type_)
    try:
        return _FIELDS_OF[key]
    except KeyError:
        pass
    mine = _data_fields_of(game, clock_on, type_)
    if type_ in (UNDO, RESULT) or type_ in game_module(game).EVENT_TYPES or type_ in _clock().EVENT_TYPES:
        _FIELDS_OF[key] = mine  # (only the types the games know: whatever a writer sends is not kept)
    return mine


def _data_fields_of(game: str, clock_on: bool, type_: str) -> frozenset | None:
    for name in (f"{game}.events", "clock.events"):
        if name not in _FIELDS:
            _FIELDS[name] = _data_fields(name)
    if type_ == UNDO:
        return frozenset()
    if type_ == RESULT:
        return frozenset({"places", "correction"})  # (correction: the organiser's, in a match the phones follow)
    mine = _FIELDS[f"{game}.events"].get(type_) if type_ in game_module(game).EVENT_TYPES else None
    if type_ in _clock().EVENT_TYPES and (clock_on or mine is None):
        theirs = _FIELDS["clock.events"].get(type_)  # (a game's own turn.end without the clock: the same fields)
        if theirs is not None:
            mine = theirs if mine is None else mine | theirs
    return mine


def check_new_data(game: str, clock_on: bool, type_: str, data) -> None:
    """A new event's data (what a writer sends) is refused when it is too large or carries a field its
    events schema does not name: an unknown field would be stored for ever and fill the card."""
    if not data:
        return
    allowed = data_fields(game, clock_on, type_)
    for key in data if allowed is not None else ():
        if key not in allowed and key != PI_MARK:
            raise InputError("unknown field {key!r} for {type} (known: {known})", key, key=key, type=type_,
                             known=", ".join(sorted(allowed)) or "none")
    size = len(compact(data, ensure_ascii=False).encode("utf-8"))
    if size > EVENT_DATA_MAX:
        raise InputError("an event's data is at most {kib} KiB (this one: {size} bytes)", "$.data",
                         kib=EVENT_DATA_MAX // 1024, size=size)


_CLOCK = []  # the clock's module, once imported (imported at first need: a game without the clock never does)


def _clock():
    if not _CLOCK:
        from companion.core import clock

        _CLOCK.append(clock)
    return _CLOCK[0]


def _in_effect(events) -> list[dict]:
    """The events of a stored log still in effect: each undo takes back the last one in effect."""
    out: list[dict] = []
    for e in events:
        if e["type"] == UNDO:
            if out:
                out.pop()
        else:
            out.append(e)
    return out


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
        check_tracking(self.options)
        check_dice(self.options)
        self.result_only = result_only(self.options)
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
            return _in_effect(self._history(self.last_seq + 1))
        return [json.loads(e) for e in self._effective]

    def __copy__(self) -> "Fold":
        new = object.__new__(Fold)
        new.__dict__.update(self.__dict__)
        new._effective = list(self._effective)
        return new

    def _load(self, events) -> "Fold":
        for e in events:
            self.apply(e)
        return self

    def _reset(self):
        self.game_state = self.module.initial_state(self.players, self.options)
        self.clock_state = self._clock_initial(self.game_state)
        self.entered: list[dict] | None = None  # the places entered by hand (result-only matches)

    def _clock_initial(self, game_state):
        """The clock's initial state, its seats in the game's turn order: the game's ``clock_seats(state)``
        when it has one (Web of Power's ``first_player`` plays first), else the match's player order."""
        if not self.clock_on:
            return None
        seats = getattr(self.module, "clock_seats", None)
        return _clock().initial_state(seats(game_state) if seats is not None else self.players, self.options)

    def _enter(self, entered, event) -> list[dict]:
        """A ``result.entered`` event: the checked ranking (the match ends with it). In a match the phones
        follow, it is the organiser's correction and says so (``correction: true``)."""
        data = event.get("data") or {}
        if entered is not None:
            raise RuleError("the result has been entered already (undo it to enter another)", "type")
        if isinstance(data, dict) and data.get("correction", False) is not (not self.result_only):
            raise InputError("true in a match the phones follow (the organiser's correction), absent in a match "
                             "recorded by its result only", "correction")
        return check_result(self.module, self.players, data)

    def _game_ended(self, game_state) -> bool:
        ended = getattr(self.module, "is_ended", None)
        return ended is not None and bool(ended(game_state))

    def _game_owes(self, game_state) -> bool:
        """The game waits at a step of its own (``holds_clock``: Web of Power's scoring step)."""
        holds = getattr(self.module, "holds_clock", None)
        return holds is not None and bool(holds(game_state))

    def _step(self, game_state, clock_state, event, entered=None):
        """One event: the new (game state, clock state, entered result)."""
        t = event["type"]
        data = event.get("data")
        if isinstance(data, dict) and PI_MARK in data:  # the Pi's own mark (a draw), not the game's data
            if data[PI_MARK] not in MARKS:
                raise InputError('must be "pi" (what the Pi drew at random) or "dice" (the table\'s smart dice, '
                                 'read by the box)', PI_MARK)
            event = {**event, "data": {k: v for k, v in data.items() if k != PI_MARK}}
        if t == RESULT:
            if not self.result_only and (self._game_ended(game_state) or (clock_state or {}).get("ended")):
                raise RuleError("the match has ended", "type")
            entered = self._enter(entered, event)
            if clock_state is not None:  # the organiser's result ends the match: its clock stops there
                clock_state = _clock().end_by_game(clock_state, event.get("at"), reason="result")
            return game_state, clock_state, entered
        if entered is not None:
            raise RuleError("the match has ended", "type")
        if self.result_only:
            if entered is not None:
                raise RuleError("the match has ended", "type")
            raise RuleError("this match records only its final result (tracking: result): enter the places",
                            "type")
        clock_event = self.clock_on and t in _clock().EVENT_TYPES
        if not clock_event and t not in self.module.EVENT_TYPES:
            raise InputError("unknown event type {t!r} for {game}", "type", t=t, game=self.game)
        # An ended match takes nothing but undo: neither the game's events after the clock ended it
        # (they would change the final ranking the season recorded) nor clock events after the game ended;
        # but a game the clock ended that still owes a step (Web of Power's scoring step, ``holds_clock``)
        # takes that step's events.
        if self._game_ended(game_state) or (clock_state is not None and clock_state.get("ended")
                                            and (clock_event or not self._game_owes(game_state))):
            raise RuleError("the match has ended", "type")
        if (clock_state is not None and clock_state.get("awaiting_roll") and not clock_event
                and t in getattr(self.module, "TURN_EVENT_TYPES", ())):
            raise RuleError("{awaiting_roll} owes a final roll before the next turn", "type", awaiting_roll=clock_state['awaiting_roll'])
        holds_clock = getattr(self.module, "holds_clock", None) if clock_state is not None else None
        held = holds_clock(game_state) if holds_clock is not None else None
        if clock_event and held:
            # the game waits at a step that takes no clock event (Web of Power's scoring step)
            raise RuleError(held, "type")
        if clock_event:
            clock_state = _clock().apply(clock_state, event)
        if t in self.module.EVENT_TYPES:
            before = game_state
            game_state = self.module.apply(game_state, event)
            turn_closed = getattr(self.module, "turn_closed", None)
            if clock_state is not None and not clock_event and turn_closed is not None:
                # the game closed a turn without a turn.end (the deck ran out): the clock's turn moves on too
                closed = turn_closed(before, game_state)
                if closed is not None:
                    clock_state = _clock().end_turn(clock_state, closed, event.get("at"))
            if clock_state is not None and not clock_state.get("ended") and self._game_ended(game_state):
                # the game ended by its own rules: the clock stops and shows it
                clock_state = _clock().end_by_game(clock_state, event.get("at"))
            if holds_clock is not None and holds_clock(game_state):
                clock_state = _clock().hold(clock_state, event.get("at"))
        if clock_state is not None:
            out_of_turn = getattr(self.module, "out_of_turn", None)
            if out_of_turn is not None and not clock_state.get("ended"):
                # seats the game puts out (eliminated players) are skipped by the clock's turn order
                clock_state = _clock().skip_seats(clock_state, out_of_turn(game_state))
            end_by_clock = getattr(self.module, "end_by_clock", None)
            if end_by_clock is not None and clock_state.get("ended") and not self._game_ended(game_state):
                # the clock ended the match (a final roll): the game's summary says so too
                game_state = end_by_clock(game_state, clock_state.get("ended_by"))
        return game_state, clock_state, entered

    def apply(self, event: dict) -> None:
        """Apply one stored or proposed event; raises without changing anything on refusal."""
        if event["type"] == UNDO:
            if not self._count:
                raise RuleError("nothing to undo", "type")
            if self._history is not None:
                # fold again the events of the stored log still in effect after this undo (keeping them
                # only meanwhile): one pass, however many undos the log holds
                remaining = _in_effect(self._history(event["seq"]))[:-1]
                g, c, r = self._replay(remaining)
                self.game_state, self.clock_state, self.entered, self._count = g, c, r, len(remaining)
            else:
                remaining = self._effective[:-1]
                g, c, r = self._replay(json.loads(e) for e in remaining)
                self._effective = remaining
                self._count -= 1
                self.game_state, self.clock_state, self.entered = g, c, r
        else:
            g, c, r = self._step(self.game_state, self.clock_state, event, self.entered)
            self.game_state, self.clock_state, self.entered = g, c, r
            self._count += 1
            if self._history is None:
                self._effective.append(json.dumps(
                    {k: event[k] for k in ("seq", "type", "data", "at") if k in event}, separators=(",", ":")))
        self.last_seq = event.get("seq", self.last_seq + 1)
        self.last_at = event.get("at", self.last_at)

    def _replay(self, events):
        g = self.module.initial_state(self.players, self.options)
        c = self._clock_initial(g)
        r = None
        for e in events:
            g, c, r = self._step(g, c, e, r)
        return g, c, r

    def check_new(self, type_: str, data) -> None:
        """A new event's data, before it is folded: its size and its fields (``check_new_data``)."""
        check_new_data(self.game, self.clock_on, type_, data)

    def check(self, event: dict) -> None:
        """Would the event be accepted now? Raises if not; changes nothing."""
        if event["type"] == UNDO:
            if not self._count:
                raise RuleError("nothing to undo", "type")
            return
        self._step(self.game_state, self.clock_state, event, self.entered)

    def ended(self) -> bool:
        if self.result_only or self.entered is not None:
            return self.entered is not None
        ended = getattr(self.module, "is_ended", None)
        if ended is not None and ended(self.game_state):
            return True
        # the clock ended it; not over while the game still owes its step (the final scoring's missing parts)
        return bool(self.clock_state and self.clock_state.get("ended")) and not self._game_owes(self.game_state)

    def final_ranking(self) -> list[dict] | None:
        """The match's ranking in the one shape (``companion.games.contract.Placing``): the places entered
        by hand in a result-only match (None until entered), else the game's ``final_ranking``."""
        if self.result_only or self.entered is not None:
            return [dict(r) for r in self.entered] if self.entered is not None else None
        return self.module.final_ranking(self.game_state)

    def view(self, now: str | None = None) -> dict:
        out = {
            "game": self.game,
            "players": self.players,
            "seq": self.last_seq,
            "state": self.game_state,
        }
        if self.result_only:
            # no tracker: the page shows the form for the places, then the ranking "entered by hand"
            out["tracking"] = "result"
            out["result"] = self.final_ranking()
            out["ended"] = self.entered is not None
            return out
        summary = getattr(self.module, "summary", None)
        if summary is not None:
            # the game's summary is a pure function of its state: made once per state (a write's answer,
            # its streams and the pages of the same state share it; like ``state``, never changed by them)
            made = self.__dict__.get("_summary")
            if made is None or made[0] is not self.game_state:
                made = self._summary = (self.game_state, summary(self.game_state))
            out["summary"] = made[1]
        if self.clock_on:
            # the clock's view: phase, round, current_player, awaiting_roll, final_threshold,
            # ended, ended_by, clock {limit_seconds, elapsed_seconds, remaining_seconds, running}
            out.update(_clock().view(self.clock_state, now or self.last_at))
        if self.entered is not None:
            # the organiser's result ended it: the pages show the places entered, as for a result-only match
            out.update(tracking="result", corrected=True, result=self.final_ranking(), ended=True)
        return out


def fold(game: str, players: list[str], events: list[dict], options: dict | None = None) -> Fold:
    f = Fold(game, players, options)
    for e in events:
        f.apply(e)
    return f


def fold_export(doc: dict, until: str | None = None) -> Fold:
    """Fold an exported match document (events at or before ``until`` when given)."""
    from companion.base.timeutil import parse_iso

    events = doc["events"]
    if until is not None:
        limit = parse_iso(until, "--at")
        events = [e for e in events if parse_iso(e["at"]) <= limit]
    return fold(doc["game"], doc["players"], events, doc.get("options"))


def event_path(where: str, field: str | None) -> str:
    """Reducers name fields inside the event's ``data`` (``player``, ``dice[1]``) or ``type``."""
    if not field:
        return where
    if field in ("type", "seq", "at", "expected_seq"):  # the event's own fields, and the writer's
        return join_path(where, field)
    return join_path(f"{where}.data", field)


def check_export(doc) -> Fold:
    """Validate an exported match (schema, seqs, time order, every event legal) and fold it.
    Errors name the JSON path, e.g. ``$.events[3].data.player``."""
    from companion.base.errors import CompanionError
    from companion.base.schemas import validate
    from companion.base.timeutil import parse_iso

    validate("match-export", doc)
    if len(set(doc["players"])) != len(doc["players"]):
        raise InputError("a player is named twice", "$.players")
    try:
        f = Fold(doc["game"], doc["players"], doc.get("options"))
    except CompanionError as exc:
        raise exc.again(InputError, "$.options" if exc.field not in ("players",) else "$.players") from None
    previous = None
    for i, e in enumerate(doc["events"]):
        where = f"$.events[{i}]"
        if e["seq"] != i + 1:
            raise InputError("seq must be {value} (seqs count from 1 without gaps)", where + ".seq", value=i + 1)
        at = parse_iso(e["at"], where + ".at")
        if previous is not None and at < previous:
            raise InputError("events must be in time order", where + ".at")
        previous = at
        try:
            f.apply({"seq": e["seq"], "type": e["type"], "data": e.get("data", {}), "at": e["at"]})
        except CompanionError as exc:
            raise exc.again(InputError, event_path(where, exc.field)) from None
    return f
