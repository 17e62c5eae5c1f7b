"""The live side of the match clock (no Flask): ticking, alerts, checkpoints, power-cut recovery,
tournament start, overview, server-rolled final dice.

The clock itself is the pure fold in ``companion/core/clock.py``; this module only watches the open clock
matches of a running server and writes the few things the server has to write:

- ``tick()`` (a thread calls it every second, ``start()``/``stop()``): tells subscribers
  ``cb(match_id, "tick", clock_view)`` for each running clock, at most once per second, and
  ``cb(match_id, "alert", payload)`` when the time left crosses 15 min, 5 min and 0, and when a match ends.
- checkpoints: every 30 s of server time (one write transaction for all running clocks, never more
  often) the running time of each running clock is stored in ``clock_checkpoints`` (a row, not events).
- ``recover()`` at start-up: a match whose clock was running when the process died gets a
  ``clock.pause {reason: "power-lost"}`` stamped at its last checkpoint (or its last event, if later) and a
  ``power_lost`` flag the UI shows ("power was lost; N minutes left; resume?") until ``clock.resume``.
- events written here are stamped by the server's MonotonicWallClock and never before the match's
  last event (``append`` is the stamping write path for the web layer too).
"""

from __future__ import annotations

import logging
import math
import os
import random
import threading
import time

from companion.core import clock as clockfold
from companion.base.notices import Listeners, Notice
from companion.base.errors import ConflictError, InputError, NotFoundError, RuleError
from companion.core.match import uses_clock
from companion.base.timeutil import MonotonicWallClock, parse_iso, to_iso

log = logging.getLogger(__name__)

# (remaining seconds, alert name): an alert fires when the time left crosses the mark.
ALERTS = ((15 * 60, "15-minutes"), (5 * 60, "5-minutes"), (0, "time-up"))
ENDED_ALERT = "ended"
POWER_LOST_REASON = "power-lost"
SERVER_STOPPED_REASON = "server-stopped"  # a clean stop (SIGTERM, Ctrl-C): a pause, not a power cut
PAUSE_REASONS = (POWER_LOST_REASON, SERVER_STOPPED_REASON)  # the pages say them in words (pause.<reason>)
CHECKPOINT_SECONDS = 30
TICK_SECONDS = 1
_MAX_MATCHES = 100_000


def _env_checkpoint_seconds() -> int:
    """``$COMPANION_CHECKPOINT_SECONDS`` (whole seconds, 1..30; tests of the real server shorten it),
    else 30."""
    raw = os.environ.get("COMPANION_CHECKPOINT_SECONDS")
    if not raw:
        return CHECKPOINT_SECONDS
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= CHECKPOINT_SECONDS:
        raise InputError("must be whole seconds from 1 to {CHECKPOINT_SECONDS}", "COMPANION_CHECKPOINT_SECONDS", CHECKPOINT_SECONDS=CHECKPOINT_SECONDS)
    return value


def _minutes_text(seconds: float) -> str:
    if seconds <= 0:
        return "no time left (the finishing round is on)"
    if seconds < 60:
        return "less than a minute left"
    m = int(seconds // 60)
    return f"{m} minute{'s' if m != 1 else ''} left"


class ClockRunner:
    def __init__(self, service, store, clock=None, rng=None,
                 checkpoint_seconds: int | None = None, tick_seconds: float = TICK_SECONDS):
        self.service = service
        self.store = store
        if clock is None:
            clock = store.clock if isinstance(store.clock, MonotonicWallClock) else MonotonicWallClock()
        self.clock = clock
        self.rng = rng if rng is not None else random.SystemRandom()
        if checkpoint_seconds is None:
            checkpoint_seconds = _env_checkpoint_seconds()
        if not isinstance(checkpoint_seconds, int) or isinstance(checkpoint_seconds, bool) or checkpoint_seconds < 1:
            raise InputError("must be a whole number of seconds >= 1", "checkpoint_seconds")
        self.checkpoint_seconds = checkpoint_seconds
        self.tick_seconds = tick_seconds
        self._lock = threading.RLock()
        self._listeners = Listeners(log, "clock runner")
        # match_id -> {"prev_remaining": float | None, "tick_second": int | None, "ended": bool}
        self._tracks: dict[str, dict] = {}
        self._power_lost: dict[str, dict] = {}
        self._last_checkpoint_second: int | None = None
        self._last_scan_second: int | None = None
        self._recovered = False
        self._live: set[str] = set()  # matches written while this process runs: not crashed ones
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.checkpoints_written = 0  # write transactions, for tests and the benchmark
        service.subscribe(self._on_event)

    # -- subscribers ---------------------------------------------------------
    def subscribe(self, callback) -> None:
        """``callback(notice)`` (:class:`companion.base.notices.Notice`): ``kind`` ``"tick"`` (the clock's view
        each second) or ``"alert"``, the clock's ``payload``."""
        self._listeners.add(callback)

    def unsubscribe(self, callback) -> None:
        self._listeners.remove(callback)

    def _emit(self, match_id: str, kind: str, payload: dict) -> None:
        # a broken listener (a closed SSE stream) never stops the clock: Listeners logs it and goes on
        self._listeners.tell(Notice(kind, match_id, payload))

    # -- helpers ---------------------------------------------------------------
    def _clock_matches(self) -> list[dict]:
        return [m for m in self.store.list_matches(status="open", limit=_MAX_MATCHES)
                if uses_clock(m["game"], m["options"])]

    def _clock_fold(self, match_id: str):
        f = self.service.fold(match_id)
        if not f.clock_on:
            raise InputError("match {match_id} does not use the clock", "match_id", match_id=match_id)
        return f

    def _stamp(self, fold) -> str:
        """Now by the server's clock, never before the match's last event."""
        at = to_iso(self.clock.now())
        if fold.last_at is not None and parse_iso(at) < parse_iso(fold.last_at):
            return fold.last_at
        return at

    def clock_view(self, match_id: str, now: str | None = None) -> dict:
        f = self._clock_fold(match_id)
        return clockfold.view(f.clock_state, now or to_iso(self.clock.now()))

    # -- writes ----------------------------------------------------------------
    def append(self, match_id: str, type: str, data: dict | None = None,
               expected_seq: int | None = None) -> dict:
        """Append an event through the match service (it stamps it by the server's clock, never before the
        match's last event)."""
        return self.service.append(match_id, type, data, expected_seq=expected_seq)

    def start_clock(self, match_id: str, limit_minutes: int | None = None, expected_seq: int | None = None) -> dict:
        data = {} if limit_minutes is None else {"limit_minutes": limit_minutes}
        self._clock_fold(match_id)
        return self.append(match_id, "clock.start", data, expected_seq)

    def pause(self, match_id: str, expected_seq: int | None = None, reason: str | None = None) -> dict:
        self._clock_fold(match_id)
        return self.append(match_id, "clock.pause", {"reason": reason} if reason else {}, expected_seq)

    def resume(self, match_id: str, expected_seq: int | None = None) -> dict:
        self._clock_fold(match_id)
        return self.append(match_id, "clock.resume", {}, expected_seq)

    def roll_final(self, match_id: str, player: str | None = None, expected_seq: int | None = None) -> dict:
        """Roll the two final-round dice with the runner's RNG (secure by default) for the player who
        owes the roll, and append ``final.roll``."""
        self._clock_fold(match_id)
        return self.service.final_roll(match_id, player, expected_seq=expected_seq, rng=self.rng)

    def start_tournament_round(self, match_ids, limit_minutes: int | None = None) -> list[dict]:
        """Start the clocks of several tables with one action, all at the same instant. Every match is
        checked first; if one can't start, none is started (the error names ``match_ids[i]``). A table whose
        game is still setting up (conquest: the deal and the placements) has its clock armed instead
        (``clock.arm``): it starts by itself when that table's set-up is done
        (docs/rulings.md#the-clock-of-a-tournament-round). Each row says ``armed`` or not."""
        from companion.services.matches import setup_over

        if not isinstance(match_ids, list) or not match_ids:
            raise InputError("must be a non-empty list of match ids", "match_ids")
        if len(set(map(str, match_ids))) != len(match_ids):
            raise InputError("a match is listed twice", "match_ids")
        data = {} if limit_minutes is None else {"limit_minutes": limit_minutes}
        folds = []
        for i, mid in enumerate(match_ids):
            where = f"match_ids[{i}]"
            if not isinstance(mid, str) or not mid:
                raise InputError("must be a match id", where)
            try:
                f = self._clock_fold(mid)
            except NotFoundError:
                raise NotFoundError("no match {mid}", where, mid=mid) from None
            except InputError as exc:
                raise exc.again(InputError, where) from None
            if f.ended():
                raise RuleError("match {mid} has ended", where, mid=mid)
            if f.clock_state["phase"] != "setup":
                raise RuleError("the clock of match {mid} has started already", where, mid=mid)
            kind = "clock.start" if setup_over(f) else "clock.arm"
            try:
                f.check({"type": kind, "data": data, "at": self._stamp(f)})
            except InputError as exc:
                field = "limit_minutes" if exc.field == "limit_minutes" else where
                raise exc.again(InputError, field) from None
            except RuleError as exc:
                raise exc.again(RuleError, where) from None
            folds.append((f, kind))
        at = max((self._stamp(f) for f, _ in folds), key=parse_iso)
        out = []
        for mid, (f, kind) in zip(match_ids, folds):
            event = self.service.append(mid, kind, data, expected_seq=f.last_seq, at=at)
            out.append({"match_id": mid, "seq": event["seq"], "at": event["at"], "armed": kind == "clock.arm"})
        return out

    # -- overview ----------------------------------------------------------------
    def overview(self) -> list[dict]:
        """Each open clock match: table, match, players, clock, phase, whose turn, the power-lost flag."""
        now = to_iso(self.clock.now())
        labels = self._labels()
        rows = []
        for m in self._clock_matches():
            f = self.service.fold(m["id"])
            v = clockfold.view(f.clock_state, now)
            rows.append({
                "match_id": m["id"],
                "table": labels.get(m["id"]) or m["options"].get("table"),
                "game": m["game"],
                "players": m["players"],
                "created_at": m["created_at"],
                "seq": f.last_seq,
                **v,
                "power_lost": self.power_lost(m["id"]),
            })
        rows.sort(key=lambda r: (str(r["table"] or ""), r["created_at"], r["match_id"]))
        return rows

    def _labels(self) -> dict[str, str]:
        return self.store.labels()

    # -- power-lost flag -------------------------------------------------------------
    def power_lost(self, match_id: str) -> dict | None:
        with self._lock:
            flag = self._power_lost.get(match_id)
            return dict(flag) if flag else None

    def dismiss_power_lost(self, match_id: str) -> None:
        with self._lock:
            had = self._power_lost.pop(match_id, None)
        if had:
            self.store.clear_power_lost(match_id)

    # -- events from the match service ------------------------------------------------
    def _on_event(self, notice) -> None:
        if notice.kind != "event" or not notice.fold.clock_on:
            return
        match_id, event, fold = notice.match_id, notice.event, notice.fold
        self._live.add(match_id)
        v = clockfold.view(fold.clock_state, event["at"])
        remaining = v["clock"]["remaining_seconds"]
        with self._lock:
            tr = self._tracks.setdefault(match_id, {"prev_remaining": None, "tick_second": None,
                                                    "ended": False})
            was_ended = tr["ended"]
            tr["ended"] = v["ended"]
            # time only goes back by undo or a restart: re-arm the alerts from there
            if tr["prev_remaining"] is None or remaining > tr["prev_remaining"]:
                tr["prev_remaining"] = remaining
        if v["ended"] and not was_ended:
            self._emit(match_id, "alert", {"alert": ENDED_ALERT, "ended_by": v["ended_by"], "phase": v["phase"],
                                           "round": v["round"], "clock": v["clock"], "at": event["at"]})
        if event["type"] == "clock.resume" or v["ended"]:
            self.dismiss_power_lost(match_id)

    def _scan(self) -> None:
        """Track every open clock match (catches matches written by other paths, e.g. import)."""
        ids = {m["id"] for m in self._clock_matches()}
        with self._lock:
            for mid in ids:
                self._tracks.setdefault(mid, {"prev_remaining": None, "tick_second": None, "ended": False})
            for mid in list(self._tracks):
                if mid not in ids:
                    del self._tracks[mid]

    # -- ticking -------------------------------------------------------------------
    def tick(self) -> dict:
        """One beat: ticks, alerts, and a checkpoint when one is due. Returns what it did."""
        now = self.clock.now()
        now_iso = to_iso(now)
        second = math.floor(now.timestamp())
        if self._last_scan_second is None or second - self._last_scan_second >= self.checkpoint_seconds:
            self._scan()
            self._last_scan_second = second
        with self._lock:
            ids = list(self._tracks)
        ticks, alerts, running = [], [], []
        for mid in ids:
            try:
                f = self.service.fold(mid)
            except NotFoundError:
                with self._lock:
                    self._tracks.pop(mid, None)
                continue
            if not f.clock_on:
                continue
            v = clockfold.view(f.clock_state, now_iso)
            remaining = v["clock"]["remaining_seconds"]
            with self._lock:
                tr = self._tracks.get(mid)
                if tr is None:
                    continue
                prev = tr["prev_remaining"]
                fired = [name for mark, name in ALERTS if prev is not None and prev > mark >= remaining]
                tr["prev_remaining"] = remaining
                emit_tick = v["clock"]["running"] and tr["tick_second"] != second
                if emit_tick:
                    tr["tick_second"] = second
                if v["ended"]:
                    del self._tracks[mid]
            for name in fired:
                alerts.append((mid, name))
                self._emit(mid, "alert", {"alert": name, "phase": v["phase"], "round": v["round"],
                                          "current_player": v["current_player"], "clock": v["clock"],
                                          "at": now_iso})
            if emit_tick:
                ticks.append(mid)
                self._emit(mid, "tick", v)
            if v["clock"]["running"]:
                running.append((mid, f.last_seq, v))
        wrote = False
        if running and (self._last_checkpoint_second is None
                        or second - self._last_checkpoint_second >= self.checkpoint_seconds):
            self._write_checkpoints(now_iso, running)
            self._last_checkpoint_second = second
            wrote = True
        return {"ticks": ticks, "alerts": alerts, "checkpoint": wrote}

    def checkpoint(self) -> int:
        """Write a checkpoint of every running clock now (clean shutdown). Returns how many."""
        now_iso = to_iso(self.clock.now())
        running = []
        for m in self._clock_matches():
            f = self.service.fold(m["id"])
            v = clockfold.view(f.clock_state, now_iso)
            if v["clock"]["running"]:
                running.append((m["id"], f.last_seq, v))
        if running:
            self._write_checkpoints(now_iso, running)
            self._last_checkpoint_second = math.floor(parse_iso(now_iso).timestamp())
        return len(running)

    def _write_checkpoints(self, now_iso: str, running: list) -> None:
        rows = [(mid, now_iso, seq, v["clock"]["elapsed_seconds"], v["clock"]["remaining_seconds"])
                for mid, seq, v in running]
        self.store.write_checkpoints(rows)
        self.checkpoints_written += 1

    def checkpoints(self) -> dict[str, dict]:
        return self.store.checkpoints()

    # -- start-up recovery -------------------------------------------------------------
    def recover(self) -> list[dict]:
        """After a crash or a power cut: pause each clock that was left running by a previous process, at
        its last checkpoint (or its last event, if later), and flag it for the table. Clocks this process has
        written to are live, not left over. Returns the flags set now."""
        matches = self._clock_matches()
        cps = self.checkpoints()
        folds = {m["id"]: self.service.fold(m["id"]) for m in matches}
        # the wall clock may have booted wrong: never stamp before anything already stored
        stamps = [f.last_at for f in folds.values() if f.last_at]
        stamps += [cp["at"] for mid, cp in cps.items() if mid in folds]
        if stamps:
            floor = max(parse_iso(s) for s in stamps)
            for c in {id(self.clock): self.clock, id(self.store.clock): self.store.clock}.values():
                not_before = getattr(c, "not_before", None)
                if not_before is not None:
                    not_before(floor)
        with self._lock:
            self._power_lost = {mid: cp["power_lost"] for mid, cp in cps.items()
                                if cp["power_lost"] and mid in folds}
        flags = []
        for mid, f in folds.items():
            state = f.clock_state
            if state["running_since"] is None or state["ended"] or mid in self._live:
                continue
            cp = cps.get(mid)
            candidates = [f.last_at] + ([cp["at"]] if cp else [])
            pause_at = max(candidates, key=parse_iso)
            try:
                self.service.append(mid, "clock.pause", {"reason": POWER_LOST_REASON},
                                    expected_seq=f.last_seq, at=pause_at)
            except (RuleError, InputError, ConflictError) as exc:
                log.error("could not pause match %s after a restart: %s", mid, exc)
                continue
            f = self.service.fold(mid)
            v = clockfold.view(f.clock_state, pause_at)
            remaining = v["clock"]["remaining_seconds"]
            flag = {
                "paused_at": pause_at,
                "detected_at": to_iso(self.clock.now()),
                "remaining_seconds": remaining,
                "elapsed_seconds": v["clock"]["elapsed_seconds"],
                "phase": v["phase"],
                "message": f"Power was lost; {_minutes_text(remaining)}; resume?",
            }
            self.store.set_power_lost(mid, pause_at, f.last_seq, v["clock"]["elapsed_seconds"], remaining, flag)
            with self._lock:
                self._power_lost[mid] = flag
            flags.append({"match_id": mid, **flag})
        self._recovered = True
        self._scan()
        return flags

    # -- the ticking thread ----------------------------------------------------------------
    def start(self) -> None:
        """Recover (once), then tick every second in a daemon thread."""
        if self._thread is not None:
            return
        if not self._recovered:
            self.recover()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="clock-runner", daemon=True)
        self._thread.start()

    def stop(self, pause_reason: str | None = None) -> None:
        """Stop ticking and write a last checkpoint (a clean shutdown loses no running time). With
        ``pause_reason`` (``companion serve`` on SIGTERM or Ctrl-C: ``server-stopped``) every running clock
        is paused now with that reason first: a clean stop is a pause the table sees as such, not a power
        cut found at the next start."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        thread.join(timeout=10)
        if pause_reason is not None:
            self.pause_running(pause_reason)
        try:
            self.checkpoint()
        except Exception:
            log.exception("last checkpoint failed")

    def pause_running(self, reason: str) -> list[str]:
        """Pause every running clock now, stamped by the server's clock, with ``reason``. Returns the
        matches paused; a match that can't be paused (a concurrent writer) is logged and left running
        (the next start's recovery pauses it at its last checkpoint)."""
        paused = []
        for m in self._clock_matches():
            try:
                f = self.service.fold(m["id"])
                if f.clock_state["running_since"] is None or f.clock_state["ended"]:
                    continue
                self.append(m["id"], "clock.pause", {"reason": reason})
                paused.append(m["id"])
            except Exception:
                log.exception("could not pause match %s at the stop", m["id"])
        return paused

    def _run(self) -> None:
        # beat in the middle of each second of the server clock, so a late beat stays in its second
        frac = self.clock.now().timestamp() % 1.0
        next_beat = time.monotonic() + ((0.5 - frac) % 1.0)
        while not self._stop.wait(max(0.0, next_beat - time.monotonic())):
            try:
                self.tick()
            except Exception:
                log.exception("clock tick failed")
            next_beat += self.tick_seconds
            if next_beat < time.monotonic():  # fell behind (suspended): don't burst
                next_beat = time.monotonic() + self.tick_seconds
