"""The match clock: folding a long match, the per-second view, a runner tick over a tournament of tables,
and a checkpoint write (one fsynced transaction).

The matches are synthetic (seeded random), made up for timing only.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from companion.core import clock

TABLES = 8


def long_match(n_events: int = 3000, seed: int = 5):
    """A 6-seat match deep into the final rounds: turns, pauses and rolls (about n_events events)."""
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(6)]
    state = clock.initial_state(players, {})
    t = datetime(2026, 3, 1, 20, tzinfo=timezone.utc)
    events = []

    def add(type, data):
        nonlocal state
        e = {"type": type, "data": data, "at": t.isoformat().replace("+00:00", "Z")}
        state = clock.apply(state, e)
        events.append(e)

    add("clock.start", {"limit_minutes": 120})
    while len(events) < n_events:
        t += timedelta(seconds=rng.randint(5, 40))
        if state["awaiting_roll"]:
            # keep the match going: a roll over every threshold but 12
            dice = [6, 6] if state["final_threshold"] < 12 else [rng.randint(1, 6), rng.randint(1, 6)]
            if sum(dice) <= state["final_threshold"]:
                break
            add("final.roll", {"player": state["awaiting_roll"], "dice": dice})
        elif rng.random() < 0.03:
            add("clock.pause", {})
            t += timedelta(minutes=2)
            add("clock.resume", {})
        else:
            seat = state["players"][state["seat"]]
            # at threshold 12 every roll ends the match: keep it going with exempt turns
            conquered = 2 if state["final_threshold"] == 12 else rng.choice([0, 1, 2, 2, 3])
            add("turn.end", {"player": seat, "conquered": conquered})
    return players, events


def _fold(arg):
    players, events = arg
    s = clock.initial_state(players, {})
    for e in events:
        s = clock.apply(s, e)
    return s


def _folded():
    return _fold(long_match()), "2026-03-02T02:00:00Z"


class _Tournament:
    """A store in a temporary directory with TABLES running clock matches and a runner on a fake clock."""

    def __init__(self):
        from companion.services.clockrunner import ClockRunner
        from companion.services.matches import MatchService
        from companion.storage import Store
        from companion.base.timeutil import FakeClock

        self.dir = tempfile.mkdtemp(prefix="companion-bench-")
        self.clock = FakeClock("2026-03-01T20:00:00Z")
        self.store = Store(Path(self.dir) / "bench.db", clock=self.clock)
        self.service = MatchService(self.store)
        self.runner = ClockRunner(self.service, self.store, clock=self.clock, checkpoint_seconds=30)
        ids = [self.service.create("conquest-italy", ["Anna", "Bruno", "Carla", "Dario"], {"table": f"T{i}"})["id"]
               for i in range(TABLES)]
        self.runner.start_tournament_round(ids)
        self.runner.subscribe(lambda *a: None)
        self.runner.tick()

    def tick(self):
        self.clock.advance(1)
        return self.runner.tick()

    def checkpoint(self):
        self.clock.advance(1)
        return self.runner.checkpoint()

    def close(self):
        self.store.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def report() -> list[dict]:
    import statistics
    import time

    rows = []

    def timed(name, target, fn, arg, repeat, note):
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn(arg)
            times.append((time.perf_counter() - t0) * 1000)
        rows.append({"name": name, "median_ms": statistics.median(times), "best_ms": min(times),
                     "target_ms": target, "note": note})

    match = long_match()
    timed(f"clock fold of a {len(match[1])}-event match (6 seats, final rounds)", 300, _fold, match, 10,
          "replay on start-up or undo")
    folded = _folded()
    timed("clock view at an instant", 1, lambda a: clock.view(*a), folded, 200, "the per-second tick of one table")
    try:
        tour = _Tournament()
    except Exception as exc:  # the conquest game or a migration being written
        import sys

        print(f"bench_clock: runner rows skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
        return rows
    try:
        # ticks that write no checkpoint (29 of every 30)
        tour.runner._last_checkpoint_second = 10**12
        timed(f"runner tick, {TABLES} running tables (views, alerts, SSE callbacks)", 50,
              lambda a: a.tick(), tour, 100, "once a second on the Pi")
        timed(f"checkpoint of {TABLES} running clocks (one fsynced transaction)", 100,
              lambda a: a.checkpoint(), tour, 20, "every 30 s while clocks run")
    finally:
        tour.close()
    return rows
