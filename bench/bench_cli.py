"""CLI cold start: `companion score ...` and `companion odds 125 125` run as whole processes (interpreter
start, imports, parsing, the computation, printing), the median of N runs. The interpreter's own start
(`python -c pass`) is shown beside them as the floor no CLI change can go below.

The documents are the shipped schema examples (real rule-book examples, see schemas/examples/).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

BUDGET_S = 90.0  # 75 process starts on a loaded machine
PI_BUDGET_S = 240.0  # the Pi mode: 30 starts of 0.2-3 s each in the Pi's budget
RUNS = int(os.environ.get("COMPANION_BENCH_CLI_RUNS", "15"))
PI_RUNS = int(os.environ.get("COMPANION_BENCH_CLI_RUNS", "5"))
if os.environ.get("COMPANION_BENCH_TINY") == "1":
    RUNS = PI_RUNS = 1
TARGET_MS = 300.0
PI_TARGET_MS = 500.0
REPO = Path(__file__).resolve().parents[1]


def _companion() -> list[str]:
    """`companion` as the installed case runs it (``bench/installed.py``: laid out as the wheel installs it;
    run from a folder outside the checkout, so the checkout is not what it imports)."""
    from bench import installed

    return [installed.python(), "-m", "companion"]


def _example(rel: str) -> str:
    from companion.base.resources import schemas_dir

    return str(schemas_dir() / "examples" / rel)


def _time_process(argv: list[str], runs: int = RUNS, budget=None) -> list[float]:
    """Wall times of ``runs`` whole processes (in ``budget``, the Pi's cgroup, when given), started in a
    folder outside the checkout."""
    import tempfile

    from bench import pi

    env = {k: v for k, v in os.environ.items() if k not in ("COMPANION_DEBUG", pi.ENV)}
    times = []
    for _ in range(runs + 1):  # the first run warms the OS file cache and is dropped
        t0 = time.perf_counter()
        p = pi.popen(argv, budget, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                     cwd=tempfile.gettempdir())
        _, err = p.communicate(timeout=120)
        times.append((time.perf_counter() - t0) * 1000)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}: {err.decode()[:200]}")
    return times[1:]


def _row(name: str, times: list[float], target, note: str) -> dict:
    return {"name": name, "median_ms": statistics.median(times), "best_ms": min(times), "target_ms": target,
            "note": note}


CASES = [
    ("CLI cold start: `companion score web-of-power` (rule-book example)",
     ["score", "web-of-power", _example("web-of-power.score/rulebook-franken-lothringen.json")]),
    ("CLI cold start: `companion score richelieu` (rule-book bonus example)",
     ["score", "richelieu", _example("richelieu.score/rule-book-bonus-example.json")]),
    ("CLI cold start: `companion score conquest-italy` (4 players, default map)",
     ["score", "conquest-italy", _example("conquest-italy.score/end-of-match-4-players.json")]),
    ("CLI cold start: `companion odds 125 125`", ["odds", "125", "125"]),
]
KEYS = ["cli-wop", "cli-richelieu", "cli-conquest", "cli-odds"]


def report():
    from bench import pi

    cfg = pi.current()
    budget = None
    runs, target = RUNS, TARGET_MS
    if cfg is not None:
        try:
            budget = pi.budget_for(cfg)
        except pi.Unavailable as exc:
            for name, _ in CASES:
                yield {"name": name, "median_ms": None, "verdict": "SKIP", "note": f"not measured: {exc}"}
            return
        runs, target = PI_RUNS, PI_TARGET_MS
    try:
        where = f"; alone in {budget.describe()}" if budget else ""
        floor = _time_process([_companion()[0], "-c", "pass"], runs, budget)
        yield dict(_row("Python interpreter start (`python -c pass`, the floor)", floor, None,
                        f"median of {runs} processes{where}"), key="py-start")
        cli = _companion()
        for (name, args), key in zip(CASES, KEYS):
            row = _row(name, _time_process(cli + args, runs, budget), target,
                       f"whole process, median of {runs}; JSON Schema validation included{where}"
                       if args[0] == "score" else f"whole process, median of {runs}; exact DP, no simulation{where}")
            row["key"] = key
            row["floor"] = statistics.median(floor)
            row["ratio"] = row["median_ms"] / row["floor"]
            row["note"] = f"floor (`python -c pass`) {row['floor']:.0f} ms, ratio {row['ratio']:.1f}×; " + row["note"]
            yield row
    finally:
        if budget is not None:
            budget.close()
