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
RUNS = int(os.environ.get("COMPANION_BENCH_CLI_RUNS", "15"))
TARGET_MS = 300.0
REPO = Path(__file__).resolve().parents[1]


def _companion() -> list[str]:
    """The `companion` console script of this interpreter's environment (what a user types), else -m."""
    script = Path(sys.executable).with_name("companion")
    if script.exists():
        return [str(script)]
    found = shutil.which("companion")
    return [found] if found else [sys.executable, "-m", "companion"]


def _example(rel: str) -> str:
    from companion.base.resources import schemas_dir

    return str(schemas_dir() / "examples" / rel)


def _time_process(argv: list[str], runs: int = RUNS) -> list[float]:
    env = {k: v for k, v in os.environ.items() if k != "COMPANION_DEBUG"}
    times = []
    for _ in range(runs + 1):  # the first run warms the OS file cache and is dropped
        t0 = time.perf_counter()
        p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, timeout=60)
        times.append((time.perf_counter() - t0) * 1000)
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.decode()[:200]}")
    return times[1:]


def _row(name: str, times: list[float], target, note: str) -> dict:
    return {"name": name, "median_ms": statistics.median(times), "best_ms": min(times), "target_ms": target,
            "note": note}


def report() -> list[dict]:
    cli = _companion()
    rows = [_row("Python interpreter start (`python -c pass`, the floor)",
                 _time_process([sys.executable, "-c", "pass"]), None, f"median of {RUNS} processes")]
    cases = [
        ("CLI cold start: `companion score web-of-power` (rule-book example)",
         ["score", "web-of-power", _example("web-of-power.score/rulebook-franken-lothringen.json")]),
        ("CLI cold start: `companion score richelieu` (rule-book bonus example)",
         ["score", "richelieu", _example("richelieu.score/rule-book-bonus-example.json")]),
        ("CLI cold start: `companion score conquest-italy` (4 players, default map)",
         ["score", "conquest-italy", _example("conquest-italy.score/end-of-match-4-players.json")]),
        ("CLI cold start: `companion odds 125 125`", ["odds", "125", "125"]),
    ]
    for name, args in cases:
        rows.append(_row(name, _time_process(cli + args), TARGET_MS,
                         f"whole process, median of {RUNS}; JSON Schema validation included"
                         if args[0] == "score" else f"whole process, median of {RUNS}; exact DP, no simulation"))
    return rows
