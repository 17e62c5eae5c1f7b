"""The application service: every match write goes through here (phones, the GPIO panel, the CLI,
the clock runner, imports).

:class:`MatchService` validates a write by folding it (``companion.core.match.Fold``), stamps it by the
server's clock (never before the match's last event), appends it, and writes the rows derived from the
log (the match's status, its season results) **in the event's own transaction**; it tells subscribers
(live pages, the clock runner, the box's LEDs) **after** the commit, outside any lock, in commit order.
``companion db rebuild`` (:meth:`MatchService.rebuild`) recomputes every derived row from the log.

Tracker actions (a deal, a combat roll, a Rome move: events the server completes with its own dice)
come from the game modules' ``ACTIONS``; the final-round roll from the clock's end-game.
"""

from __future__ import annotations

import copy
import logging
import random
import threading
from collections import OrderedDict, deque

from companion.core import clock as clockfold
from companion.base.errors import ConflictError, InputError, RuleError
from companion.base.notices import Listeners, Notice
from companion.services import policy
from companion.services.policy import ORGANISER, Caller
from companion.games import game_module
from companion.core.match import PI_MARK, RESULT, UNDO, Fold, check_export
from companion.base.timeutil import iso_before

log = logging.getLogger(__name__)


# The mark of an event the Pi drew at random (``data.rolled_by == "pi"``): every event the server
# completed with its RNG (dice, a deal, a turn's card: MatchService.act, final_roll); ``"dice"`` marks the
# faces the box read from the table's smart dice (companion/services/dice.py). Who may undo one, and every
# other rule of who may write what: companion/services/policy.py (docs/rulings.md, "The Pi's draws").
PI_ROLL = PI_MARK


def last_in_effect(events: list[dict]) -> dict | None:
    """The event an undo would take back now: the latest of ``events`` still in effect."""
    stack: list[dict] = []
    for e in events:
        if e["type"] == UNDO:
            if stack:
                stack.pop()
        else:
            stack.append(e)
    return stack[-1] if stack else None


def undone_event(events: list[dict]) -> dict | None:
    """The event the last of ``events`` (an undo) took back: undo takes back the latest event in effect."""
    stack: list[dict] = []
    back = None
    for e in events:
        if e["type"] == UNDO:
            back = stack.pop() if stack else None
        else:
            stack.append(e)
            back = None
    return back


def setup_over(fold: Fold) -> bool:
    """Is the game's set-up done (the game's ``setup_over(state)``; a game without one has no set-up)?"""
    fn = getattr(fold.module, "setup_over", None)
    return True if fn is None else bool(fn(fold.game_state))


def clock_after_setup(before: Fold, after: Fold, event: dict) -> dict | None:
    """The ``clock.start`` data due after ``event`` (``{"limit_minutes"}``), or None: the clock was armed
    (``clock.arm``, the start of a tournament round at a table still setting up) and this game event ended
    the set-up (docs/rulings.md#the-clock-of-a-tournament-round). An undo never starts it (an undone start
    stays undone); a redo of the last placement does."""
    if not after.clock_on or event["type"] == UNDO or event["type"] in clockfold.EVENT_TYPES:
        return None
    cs = after.clock_state
    if not cs.get("armed") or cs["phase"] != "setup" or after.ended():
        return None
    if setup_over(before) or not setup_over(after):
        return None
    return {"limit_minutes": cs["limit_us"] // (60 * 1_000_000)}


class _CountingRng:
    """An RNG that counts its calls (did the Pi roll anything for this event?)."""

    def __init__(self, rng):
        self._rng = rng
        self.calls = 0

    def randint(self, a, b):
        self.calls += 1
        return self._rng.randint(a, b)

    def __getattr__(self, name):
        self.calls += 1
        return getattr(self._rng, name)


class InEffect:
    """A fold's events in effect, read from the log only when iterated (the policy needs them for a
    secret's reset alone; a phone's every other write would read the whole log)."""

    __slots__ = ("fold",)

    def __init__(self, fold: Fold):
        self.fold = fold

    def __iter__(self):
        return iter(self.fold.effective)


class MatchService:
    # Folds kept in memory (the least recently used goes first). At least as many as the lists show open
    # matches (the tournament overview: 100), or each list would fold them all again from their logs. A
    # fold keeps no copy of its events: the game's and the clock's state only.
    MAX_FOLDS = 128

    def __init__(self, store, max_folds: int = MAX_FOLDS, rng=None):
        self.store = store
        self.max_folds = max_folds
        self.rng = rng if rng is not None else random.SystemRandom()
        self._folds: OrderedDict[str, Fold] = OrderedDict()  # committed folds only
        # match id -> the store's count of other connections' commits (``outside_commits``) when its fold was
        # known to hold every stored event: while the count is the same, the fold is read with no statement
        self._sure: dict[str, int] = {}
        self._unsure: dict[str, Fold] = {}  # folds of writes whose group commit has not returned yet
        self._lock = threading.RLock()
        self._listeners = Listeners(log, "match service")
        self._pending: deque = deque()
        self._notifying = threading.Lock()

    # -- subscribers -----------------------------------------------------------------------
    def subscribe(self, callback) -> None:
        """``callback(notice)`` (:class:`companion.base.notices.Notice`) after each commit, in commit order:
        ``kind`` ``"event"`` with the event as ``payload`` and the match right after it as ``fold`` (never
        changed afterwards), or ``"match"`` when a match was created or imported."""
        self._listeners.add(callback)

    def unsubscribe(self, callback) -> None:
        self._listeners.remove(callback)

    def _notify(self) -> None:
        """Deliver what was committed, outside the service lock. One thread delivers at a time (so the
        order is the commit order); a thread that finds another delivering leaves its events to it."""
        while self._pending:
            if not self._notifying.acquire(blocking=False):
                return
            try:
                while True:
                    try:
                        match_id, event, fold = self._pending.popleft()
                    except IndexError:
                        break
                    # a broken listener never loses a stored event (Listeners logs it and goes on)
                    self._listeners.tell(Notice("match", match_id) if event is None  # created or imported
                                         else Notice("event", match_id, event, fold))
            finally:
                self._notifying.release()

    # -- reading -----------------------------------------------------------------------------
    def fold(self, match_id: str) -> Fold:
        """The match's fold, up to date with the store (a fold is never changed once handed out:
        each write makes a new one). A cached fold that is up to date is handed out without the service
        lock, so a reader (a POST's own answer, a page, a list) never waits for another match's write and
        its fsync. Inside a write, the match as that write sees it (:meth:`_write_fold`)."""
        if self.store.in_write():
            with self._lock:
                return self._write_fold(match_id)
        f = self._folds.get(match_id)
        outside = self.store.outside_commits()
        if f is not None:
            sure = outside is not None and self._sure.get(match_id) == outside
            # (no other connection committed since the fold held every event: no statement; else ask the log)
            if sure or not self.store.events(match_id, after_seq=f.last_seq):
                if self._lock.acquire(blocking=False):  # keep the LRU order when it costs no wait
                    try:
                        if match_id in self._folds:
                            self._folds.move_to_end(match_id)
                            if not sure and outside is not None:
                                self._sure[match_id] = outside
                    finally:
                        self._lock.release()
                return f
        with self._lock:
            f = self._folds.get(match_id)
            if f is None:
                m = self.store.get_match(match_id)

                def history(before_seq, match_id=match_id):
                    return self.store.events(match_id, before_seq=before_seq)

                f = Fold(m["game"], m["players"], m["options"], history=history)._load(self.store.events(match_id))
            else:
                newer = self.store.events(match_id, after_seq=f.last_seq)
                if newer:  # written by another process (the CLI) since: catch up on a copy
                    f = copy.copy(f)._load(newer)
            self._keep(match_id, f, outside)
            return f

    def _keep(self, match_id: str, f: Fold, outside: int | None) -> None:
        """Under the service lock: ``f`` as the match's committed fold, holding every event stored when the
        store's count of other connections' commits was ``outside`` (None: not known)."""
        self._folds[match_id] = f
        self._folds.move_to_end(match_id)
        if outside is None:
            self._sure.pop(match_id, None)
        else:
            self._sure[match_id] = outside
        while len(self._folds) > self.max_folds:
            gone, _ = self._folds.popitem(last=False)
            self._sure.pop(gone, None)

    def _write_fold(self, match_id: str) -> Fold:
        """Inside a write (the store's writer lock, then the service lock): the match with every event
        of the open transaction, committed or not, so writes grouped in one commit follow each other.
        Such a fold goes to the committed cache only once its COMMIT has returned (``_committed``)."""
        f = self._unsure.get(match_id) or self._folds.get(match_id)
        return f if f is not None else self._reload(match_id)

    def _committed(self, match_id: str, event: dict, fold: Fold, outside: int | None = None) -> None:
        """After the COMMIT of a write (on the committing thread, in commit order): the fold becomes the
        match's cached one, and the event is queued for the subscribers. ``outside``: the store's count of
        other connections' commits in that write (none can commit while its transaction is open)."""
        with self._lock:
            if self._unsure.get(match_id) is fold:
                del self._unsure[match_id]
            cur = self._folds.get(match_id)
            if cur is None or cur.last_seq < fold.last_seq:
                self._keep(match_id, fold, outside)
            self._pending.append((match_id, event, fold))

    def _rolled_back(self, match_id: str, fold: Fold) -> None:
        with self._lock:
            if self._unsure.get(match_id) is fold:
                del self._unsure[match_id]

    def state(self, match_id: str, now: str | None = None) -> dict:
        f = self.fold(match_id)
        # (only the clock's view reads the time: a match without the clock is not stamped)
        return f.view(now or (self.store.clock.now_iso() if f.clock_on else None))

    # -- writing -----------------------------------------------------------------------------
    def create(self, game: str, players: list[str], options: dict | None = None, match_id: str | None = None,
               label: str = "", colours: dict | None = None, roster: dict[int, str] | None = None) -> dict:
        """``roster``: {seat: roster player id} chosen at creation; the other seats are linked to the match's
        club roster by their exact name (``companion.storage.players.link_match``), in the same transaction."""
        game_module(game)
        if not isinstance(players, list) or not players:
            raise InputError("must be a non-empty list of player names", "players")
        if len(set(players)) != len(players):
            raise InputError("a player is named twice", "players")
        Fold(game, players, options)  # the game's initial_state checks player counts and options
        if isinstance(options, dict) and "phones" in options:  # who a player's phone records for
            policy.check_phones(options["phones"])
        with self.store.write():
            match = self.store.create_match(game, players, options, match_id=match_id, label=label, colours=colours)
            self._link_roster(match, roster)
            self.store.on_commit(lambda: self._pending.append((match["id"], None, None)))
        self._notify()
        return match

    def _stamp(self, f: Fold) -> str:
        """Now by the server's clock, never before the match's last event."""
        now = self.store.clock.now_iso()
        if f.last_at is not None and iso_before(now, f.last_at):
            return f.last_at
        return now

    def append(self, match_id: str, type: str, data: dict | None = None,
               expected_seq: int | None = None, at: str | None = None, complete=None,
               by: Caller = ORGANISER, pi_mark: bool = False, writer: Caller | None = None) -> dict:
        """Store one event. ``expected_seq``: the last seq the writer saw (a stale write is refused).
        ``at``: the instant (default: now by the server's clock, never before the last event).
        ``complete(fold) -> data``: fills the event's data from the state the event will follow
        (dice rolled by the server), inside the write, so nothing comes between the look and the write.
        ``by``: who writes (:class:`companion.services.policy.Caller`; the CLI, the box and the clock runner
        write as the organiser, the web passes the caller's role and seat): the policy refuses what the caller
        may not record (a correction outside the rules, another player's secret) and keeps the reason of a
        refusal that could tell another player's secret. ``data`` never carries the Pi's mark (``rolled_by``)
        but in a redo (``pi_mark``): the Pi's draws are completed here, by ``complete``. ``writer``: who the
        event says wrote it when not ``by`` (a write the policy judged already, done here as the organiser's):
        a phone's event keeps its writer and the seat it acts for (``policy.writer_of``,
        docs/rulings.md#playing-for-another-seat)."""
        with self.store.write(group=True, keeps_sessions=True):  # (a match's event: no session nor seat)
            event, before, after = self._append(match_id, type, data, expected_seq, at, complete, by, pi_mark,
                                                writer)
            start = clock_after_setup(before, after, event)
            if start is not None:  # the event ended the set-up of a match whose clock was armed: it starts now
                self._append(match_id, "clock.start", start, after.last_seq, event["at"], None, ORGANISER)
        self._notify()  # committed: the subscribers hear of it (an append inside an outer write: after it)
        return event

    def _append(self, match_id, type, data, expected_seq, at, complete, by: Caller,
                pi_mark=False, writer: Caller | None = None) -> tuple[dict, Fold, Fold]:
        """One event stored (inside the caller's write): the event, the match before and after it."""
        writer = by if writer is None else writer
        if not isinstance(type, str) or not type:
            raise InputError("must be a non-empty string", "type")
        if data is not None and not isinstance(data, dict):
            raise InputError("must be an object", "data")
        if not pi_mark:
            policy.check_sent_data(data)
        if not by.organiser:
            f = self.fold(match_id)
            policy.check_write(f.module, f.players, by, type, data, result_only=f.result_only,
                               effective=InEffect(f))
            self._check_own_seat(match_id, f, by, type, data)
            owner = policy.secret_refused_for(f.module, f.players, by, type, data)
            if owner is not None:
                try:
                    return self._append(match_id, type, data, expected_seq, at, complete, ORGANISER, pi_mark,
                                        writer)
                except RuleError as exc:
                    if not policy.tells_secret(f.module, type, exc):
                        raise
                    raise policy.quiet_refusal(owner) from None
        # the store's write first (append's), then the service lock, released before the write ends: the write
        # waits for its group's COMMIT holding no lock (Database.write, group commit). Always inside append's
        # write, and every failure here ends it: no savepoint of its own, nor for the store's append
        if not self.store.in_write():
            raise RuntimeError("an event is appended inside MatchService.append's write only")
        with self._lock:
            f = self._write_fold(match_id)
            after: list[Fold] = []
            wrote: list = [None]  # what the event keeps of its writer (a phone's): made by check

            def check(event, last_seq):
                nonlocal f
                if last_seq < f.last_seq:  # a fold ahead of the log: never kept, but fold it again
                    f = self._reload(match_id)
                if last_seq != f.last_seq:  # another process wrote; catch up before judging
                    f = copy.copy(f)._load(self.store.events(match_id, after_seq=f.last_seq))
                if at is None and f.last_at is not None and iso_before(event["at"], f.last_at):
                    event["at"] = f.last_at
                if complete is not None:
                    event["data"] = complete(f)
                    if not writer.organiser:  # the seat it acts for may be the service's to fill (the final
                        # roll's player, the one who owes it): a phone's own seat judged on the completed event
                        self._check_own_seat(match_id, f, writer, event["type"], event["data"])
                f.check_new(event["type"], event["data"])  # its size and its fields: nothing unknown is stored
                if writer.phone:
                    wrote[0] = policy.writer_of(writer, self._acts_for(match_id, f, event))
                nf = copy.copy(f)
                nf.apply(event)
                after[:] = [f, nf]
                return lambda: self._derive_event(match_id, nf, event)

            event = self.store.append(match_id, type, data or {}, expected_seq=expected_seq,
                                      at=at or self._stamp(f), check=check, savepoint=False,
                                      folded=True, writer=lambda _event: wrote[0])
            before, nf = after
            self._unsure[match_id] = nf
            outside = self.store.outside_commits()  # (in the write: as its BEGIN saw it, no statement)
            self.store.on_commit(lambda: self._committed(match_id, event, nf, outside),
                                 lambda: self._rolled_back(match_id, nf))
        return event, before, nf

    def _acts_for(self, match_id: str, f: Fold, event: dict) -> str | None:
        """The seat ``event`` acts for, in the match ``f`` (before it): an undo acts for the seat of the event it
        takes back (docs/rulings.md#playing-for-another-seat)."""
        if event["type"] == UNDO:
            back = last_in_effect(self.store.events(match_id))
            if back is None:
                return None
            if "for" in (back.get("by") or {}):
                return back["by"]["for"]
            return policy.acting_seat(f.module, f.players, f.game_state, back["type"], back.get("data"))[0]
        return policy.acting_seat(f.module, f.players, f.game_state, event["type"], event["data"])[0]

    def check_own_seat(self, match_id: str, by: Caller, type_: str, data) -> None:
        """Whether ``by`` may record an event ``type_`` with ``data`` for the seat it acts for, in a match set to
        ``phones: "own-seat"`` (raises ForbiddenError, code ``own_seat``): for a write made on a phone's
        behalf (the table's dice the box reads for it)."""
        self._check_own_seat(match_id, self.fold(match_id), by, type_, data)

    def _check_own_seat(self, match_id: str, f: Fold, by: Caller, type_: str, data) -> None:
        """A match set to ``phones: "own-seat"``: a player's phone records only its own seat's moves (and the
        table's); ``policy.check_own_seat``."""
        if by.organiser:
            return
        options = self.store.get_match(match_id)["options"]
        if policy.phones_rule(options) == policy.PHONES_DEFAULT:
            return
        acts_for, field = policy.acting_seat(f.module, f.players, f.game_state, type_, data)
        policy.check_own_seat(by, options, acts_for, field)

    def set_phones(self, match_id: str, phones: str) -> dict:
        """The organiser's choice of who a player's phone records for (``options.phones``: ``"any-seat"``, the
        default, or ``"own-seat"``), at any time of the match: kept beside the log, like its season (the fold
        never reads it). Returns the match."""
        policy.check_phones(phones)
        with self.store.write():
            match = self.store.get_match(match_id)
            options = {**match["options"], "phones": phones}
            if phones == policy.PHONES_DEFAULT:
                options.pop("phones")
            self.store.set_options(match_id, options)
        return self.store.get_match(match_id)

    def _reload(self, match_id: str) -> Fold:
        m = self.store.get_match(match_id)

        def history(before_seq, match_id=match_id):
            return self.store.events(match_id, before_seq=before_seq)

        return Fold(m["game"], m["players"], m["options"], history=history)._load(self.store.events(match_id))

    def undo(self, match_id: str, expected_seq: int | None = None, by: Caller = ORGANISER) -> dict:
        """Take back the latest event in effect, when ``by`` may (``policy.check_undo``: the Pi's draws and
        another player's secret are not a player's to take back; the GPIO panel's hold-to-undo is the
        organiser's)."""
        def check(f):
            if not by.organiser:  # the log as it stands in this write
                last = last_in_effect(self.store.events(match_id))
                policy.check_undo(f.module, by, last)
                if last is not None:
                    acts_for = ((last.get("by") or {}).get("for")
                                or policy.acting_seat(f.module, f.players, f.game_state, last["type"],
                                                      last.get("data"))[0])
                    policy.check_own_seat(by, self.store.get_match(match_id)["options"], acts_for, undo=True)
            return {}

        return self.append(match_id, UNDO, {}, expected_seq=expected_seq, complete=check, writer=by)

    def undone_by_last(self, match_id: str) -> dict | None:
        """When the match's last event is an undo: the event it took back (else ``None``)."""
        events = self.store.events(match_id, after_seq=max(0, self.fold(match_id).last_seq - 1))
        if not events or events[-1]["type"] != UNDO:
            return None
        return undone_event(self.store.events(match_id))

    def redo(self, match_id: str, expected_seq: int | None = None, by: Caller = ORGANISER) -> dict:
        """Take back the most recent undo: the event it undid is appended again (its type and data, the
        same dice) as a new event. Only while the undo is the match's last event. ``by`` as for
        :meth:`append` (redoing an organiser's correction, or another player's secret, is not a player's)."""
        with self.store.write(group=True), self._lock:
            f = self._write_fold(match_id)
            if expected_seq is not None and expected_seq != f.last_seq:
                raise ConflictError("stale write: the match is at seq {last_seq}, not {expected_seq}",
                                    "expected_seq", last_seq=f.last_seq, expected_seq=expected_seq)
            back = self.undone_by_last(match_id)
            if back is None:
                raise RuleError("nothing to redo: only the most recent undo can be redone, before anything "
                                "else is recorded", "type")
            event = self.append(match_id, back["type"], back.get("data") or {}, expected_seq=f.last_seq,
                                by=by, pi_mark=True)  # the same draw: the Pi's mark kept
        self._notify()
        return event

    def enter_result(self, match_id: str, places: list, expected_seq: int | None = None,
                     by: Caller = ORGANISER) -> dict:
        """The final places entered by hand (``result.entered``): the match ends with them and its season
        (and tournament) takes them. In a match created with ``options.tracking = "result"`` anyone of the
        table enters them; in a match the phones follow it is the organiser's correction (a table whose
        phones died, or that went on on paper: docs/rulings.md#the-organisers-result), marked so in its
        history (the policy refuses it from anyone else)."""
        data = {"places": places}
        if not self.fold(match_id).result_only:
            data["correction"] = True
        return self.append(match_id, RESULT, data, expected_seq=expected_seq, by=by)

    def final_roll(self, match_id: str, player: str | None = None, expected_seq: int | None = None,
                   rng=None, by: Caller = ORGANISER) -> dict:
        """The server rolls the two final-round dice for the player who owes them (matches with the clock)."""
        if not self.fold(match_id).clock_on:
            raise RuleError("this match does not use the clock", "type")
        rng = rng or self.rng
        return self.append(match_id, "final.roll", expected_seq=expected_seq, by=by,
                           complete=lambda f: {**clockfold.final_roll_data(f.clock_state, player, rng),
                                               PI_ROLL: "pi"})

    def act(self, match_id: str, action: str, data: dict | None = None, expected_seq: int | None = None,
            rng=None, by: Caller = ORGANISER, rolled_by: str | None = None,
            writer: Caller | None = None) -> tuple[dict, dict]:
        """A tracker action of the match's game: ``ACTIONS[action] = (event type, fn)`` in the game module,
        ``fn(state, players, data, rng, effective) -> (event data, extra)`` completes the event from the state
        it will follow (the server deals, rolls, counts). Returns the stored event and ``extra`` (what the
        action tells beside it, e.g. the swaps of a deal). ``by`` as for :meth:`append`: the policy judges
        the action's event type with the data the caller sent. ``rolled_by="dice"``: the faces in ``data`` were
        read from the table's smart dice (the event is marked so, and only an organiser undoes it)."""
        f = self.fold(match_id)
        spec = getattr(f.module, "ACTIONS", {}).get(action)
        if spec is None:
            raise InputError("{game} has no action {action!r}", "action", game=f.game, action=action)
        if data is not None and not isinstance(data, dict):
            raise InputError("must be an object", "data")
        policy.check_sent_data(data)
        type_, fn = spec
        if not by.organiser:
            policy.check_write(f.module, f.players, by, type_, data, result_only=f.result_only,
                               effective=InEffect(f))
            self._check_own_seat(match_id, f, by, type_, data)
            owner = policy.secret_refused_for(f.module, f.players, by, type_, data)
            if owner is not None:
                try:
                    return self.act(match_id, action, data, expected_seq, rng, rolled_by=rolled_by,
                                    writer=writer or by)
                except RuleError as exc:
                    if not policy.tells_secret(f.module, type_, exc):
                        raise
                    raise policy.quiet_refusal(owner) from None
        rng = rng or self.rng
        extra: dict = {}

        def complete(fold):
            if fold.ended():
                raise RuleError("the match has ended", "type")
            counted = _CountingRng(rng)
            event_data, more = fn(fold.game_state, fold.players, dict(data or {}), counted, lambda: fold.effective)
            if counted.calls:
                event_data = {**event_data, PI_ROLL: "pi"}  # the Pi drew (some of) it at random
            elif rolled_by == "dice":
                event_data = {**event_data, PI_ROLL: "dice"}  # the table's smart dice, read by the box
            extra.clear()
            extra.update(more or {})
            return event_data

        event = self.append(match_id, type_, expected_seq=expected_seq, complete=complete, writer=writer or by)
        return event, extra

    def end_turn(self, match_id: str, data: dict, expected_seq: int | None = None, rng=None,
                 by: Caller = ORGANISER) -> dict:
        """End the current turn (the box's NEXT): through the game's own ``turn-end`` action where the game
        keeps the turn (it counts the turn's conquests, draws the turn's card), else the clock's ``turn.end``."""
        if "turn-end" in getattr(self.fold(match_id).module, "ACTIONS", {}):
            return self.act(match_id, "turn-end", data, expected_seq=expected_seq, rng=rng, by=by)[0]
        return self.append(match_id, "turn.end", data, expected_seq=expected_seq, by=by)

    # -- derived rows ----------------------------------------------------------------------------
    def _link_roster(self, match: dict, seats: dict[int, str] | None = None) -> None:
        from companion.services import seasons
        from companion.storage import players as roster

        roster.link_match(self.store, match, seasons.match_club(self.store, match), seats)

    def _derive_event(self, match_id: str, fold: Fold, event: dict) -> None:
        """``_derive`` for an event appended: the match read only when the season's rows need it (the match
        ended, or an undo may have opened it again); else only its status is looked at."""
        if not fold.ended() and event["type"] != UNDO:
            if self.store.match_status(match_id) != "open":
                self.store.set_status(match_id, "open")
            return
        self._derive(self.store.get_match(match_id), fold, event)

    def _derive(self, match: dict, fold: Fold, event: dict) -> None:
        """The rows derived from the log, written in the event's transaction: the status, the season."""
        from companion.services import seasons

        status = "ended" if fold.ended() else "open"
        if match["status"] != status:
            self.store.set_status(match["id"], status)
        seasons.derive_from_fold(self.store, match, fold, event)

    def import_match(self, doc) -> tuple[str, Fold]:
        """Store an exported match (checked event by event), with its derived rows, in one transaction."""
        f = check_export(doc)
        status = "ended" if f.ended() else "open"
        match = {"id": doc["id"], "game": doc["game"], "players": doc["players"],
                 "options": doc.get("options", {}), "created_at": doc["created_at"], "status": status}
        last = {"type": doc["events"][-1]["type"]} if doc["events"] else {"type": None}
        def derive():
            self._link_roster(match)
            self._derive(match, f, last)

        match_id = self.store.import_match(doc, status=status, derive=derive)
        self.forget(match_id)
        self._pending.append((match_id, None, None))
        self._notify()
        return match_id, f

    def rebuild(self) -> dict:
        """Recompute every derived row from the event log (``companion db rebuild``)."""
        fixed, count = [], 0
        for match_id in self.store.all_match_ids():
            self.forget(match_id)
            with self.store.write(), self._lock:
                f = self._write_fold(match_id)
                match = self.store.get_match(match_id)
                before = match["status"]
                self._derive(match, f, {"type": None, "rebuild": True})
                if ("ended" if f.ended() else "open") != before:
                    fixed.append(match_id)
            count += 1
        return {"matches": count, "status_fixed": fixed}

    def forget(self, match_id: str) -> None:
        with self._lock:
            self._folds.pop(match_id, None)
            self._sure.pop(match_id, None)
