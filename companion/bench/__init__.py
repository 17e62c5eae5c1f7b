"""Benchmarks (``make bench``): a report, not a timed test.

Each module ``companion/bench/bench_*.py`` defines ``BENCHMARKS``: a list of dicts

    {"name": str, "target_ms": float, "run": callable, "repeat": int (default 20),
     "setup": optional callable returning the argument passed to run}

``run`` is timed with ``time.perf_counter`` ``repeat`` times; the median and the best are reported
against the target. A module may instead define ``report() -> list[dict]`` with ready rows
(``name``, ``median_ms``, ``best_ms``, ``target_ms``, ``note``) for measurements that are not a single call
(server latencies, memory).
"""

from __future__ import annotations

import importlib
import pkgutil
import platform
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path


def _machine() -> str:
    model = ""
    for path in ("/proc/device-tree/model", "/sys/firmware/devicetree/base/model"):
        try:
            model = Path(path).read_text().strip("\x00\n ")
            break
        except OSError:
            pass
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os

    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    parts = [model or platform.machine(), cpu, f"{os.cpu_count()} cores", mem,
             f"Python {platform.python_version()}"]
    return ", ".join(p for p in parts if p)


def measure(bench: dict) -> dict:
    arg = bench["setup"]() if bench.get("setup") else None
    run = bench["run"]
    times = []
    for _ in range(bench.get("repeat", 20)):
        t0 = time.perf_counter()
        run(arg) if bench.get("setup") else run()
        times.append((time.perf_counter() - t0) * 1000)
    return {"name": bench["name"], "median_ms": statistics.median(times), "best_ms": min(times),
            "target_ms": bench.get("target_ms"), "note": bench.get("note", "")}


def collect(only: str | None = None) -> list[dict]:
    import companion.bench as pkg

    rows = []
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if not info.name.startswith("bench_") or (only and only not in info.name):
            continue
        module = importlib.import_module(f"companion.bench.{info.name}")
        for bench in getattr(module, "BENCHMARKS", []):
            rows.append(measure(bench))
        if hasattr(module, "report"):
            rows.extend(module.report())
    return rows


def render(rows: list[dict]) -> str:
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`python -m companion.bench`). A report, not a test: rows that miss their",
        "target say so. Machine: " + _machine() + f"; run {now}.",
        "",
        "| benchmark | median | best | target | verdict | note |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for r in rows:
        target = r.get("target_ms")
        unit = r.get("unit", "ms")
        verdict = "" if target is None else ("ok" if r["median_ms"] <= target else "MISSES TARGET")
        fmt = (lambda v: f"{v:.2f} {unit}") if unit == "ms" else (lambda v: f"{v:.1f} {unit}")
        lines.append(f"| {r['name']} | {fmt(r['median_ms'])} | "
                     f"{fmt(r['best_ms']) if r.get('best_ms') is not None else ''} | "
                     f"{'' if target is None else fmt(target)} | {verdict} | {r.get('note', '')} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m companion.bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only bench modules whose name contains this")
    parser.add_argument("--out", default="docs/benchmarks.md", help="where to write the report ('-' = nowhere)")
    args = parser.parse_args(argv)
    text = render(collect(args.only))
    print(text)
    extra = Path("docs/benchmarks-notes.md")
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        notes = extra.read_text() if extra.exists() else ""
        Path(args.out).write_text(text + ("\n" + notes if notes else ""))
    return 0
