"""conquest-italy: the exact battle odds (in-process and as a whole ``companion odds`` process) and the
fold of a long match."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time


def _table():
    from companion.games.conquest_odds import conquer_table

    conquer_table(125, 125)


def _battle():
    from companion.games.conquest_odds import battle

    battle(125, 125)


def _match_events(n_events: int = 400, seed: int = 3):
    """A long match (set-up, then combats with seeded dice, moves and reinforcements), as stored events."""
    import random

    from companion.games import conquest_italy as ci
    from companion.games.conquest_map import default_map

    gm = default_map()
    rng = random.Random(seed)
    players = ["Anna", "Bruno", "Carla", "Dario"]
    state = ci.initial_state(players, {})
    owner, _ = ci.deal(players, gm, rng)
    events = [{"type": "setup.deal", "data": {"owner": owner}}]
    state = ci.apply(state, events[0])
    while state["phase"] == "place":
        p = state["next_placer"]
        placements = {ci.held(state, p)[0]: min(5, state["reserve"][p])}
        e = {"type": "setup.place", "data": {"player": p, "placements": placements}}
        state = ci.apply(state, e)
        events.append(e)
    e = {"type": "clock.start", "data": {}}
    state = ci.apply(state, e)
    events.append(e)
    while len(events) < n_events and not ci.is_ended(state):  # legal turns: reinforce, a combat, the end
        p = state["turn"]["player"]
        mine = ci.held(state, p)
        due = ci.reinforcements(gm, mine, ci.units_on_map(state, p))["placeable"]
        e = {"type": "reinforce", "data": {"player": p, "placements": {mine[0]: due} if due else {}}}
        state = ci.apply(state, e)
        events.append(e)
        for src in mine:
            targets = [c for c in sorted(gm.neighbours[src]) if state["owner"][c] != p]
            if state["units"][src] >= 2 and targets:
                data = ci.fill_dice(state, {"from": src, "to": rng.choice(targets)}, rng)
                e = {"type": "combat", "data": data}
                state = ci.apply(state, e)
                events.append(e)
                break
        if ci.is_ended(state):
            break
        e = {"type": "turn.end", "data": ci.fill_turn_end(state, {"player": p}, rng)}
        state = ci.apply(state, e)
        events.append(e)
    return players, events


def _fold(arg):
    from companion.core.match import fold

    players, events = arg
    fold("conquest-italy", players, events, {"clock": False})


BENCHMARKS = [
    {"name": "conquest: P(conquer) table 125 x 125 (in-process)", "target_ms": 20, "run": _table, "repeat": 30},
    {"name": "conquest: battle distribution 125 v 125 (in-process)", "target_ms": 20, "run": _battle, "repeat": 30},
    {"name": "conquest: fold a 400-event match", "target_ms": 250, "run": _fold, "setup": _match_events,
     "repeat": 5, "note": "set-up, reinforcements and combats with seeded dice on the default map"},
]


def report() -> list[dict]:
    """``companion odds 125 125`` as a whole process (Python start, imports, the answer as JSON)."""
    env = dict(os.environ)
    times = []
    for _ in range(11):
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "companion", "odds", "125", "125"], capture_output=True, env=env)
        times.append((time.perf_counter() - t0) * 1000)
        if p.returncode != 0:
            return [{"name": "conquest: `companion odds 125 125` process", "median_ms": float("nan"),
                     "best_ms": None, "target_ms": 300, "note": "FAILED: " + p.stderr.decode()[:80]}]
    return [{"name": "conquest: `companion odds 125 125` whole process", "median_ms": statistics.median(times),
             "best_ms": min(times), "target_ms": 300, "note": "python -m companion, 11 runs"}]
