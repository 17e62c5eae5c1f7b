"""Benchmarks (``make bench``): a report, not a timed test.

**Adding rows.** A module ``bench/bench_<area>.py`` is found by its name (nothing to
register) and defines either or both of:

- ``BENCHMARKS``: a list of dicts ``{"name": str, "target_ms": float, "run": callable, "repeat": int
  (default 20), "setup": optional callable returning the argument passed to run}``; ``run`` is timed with
  ``time.perf_counter`` ``repeat`` times, the median and the best are reported against the target;
- ``report()``: returns or yields ready rows ``{"name", "median_ms", "best_ms", "target_ms", "note"}``
  (optional ``"unit"``, default ``"ms"``) for measurements that are not a single call (server latencies,
  memory). A row with ``"verdict": "SKIP"`` (and the reason in its note) was not measured; a row whose
  ``median_ms`` is None is a SKIP too. Yield each row as soon as it is measured: if the module runs out
  of time, the rows already yielded are kept.

and may set ``BUDGET_S`` (seconds, default 60): each module runs in its own process (its own process
group), which is stopped when its budget is spent; the report then says so in a FAIL row. The verdict
of a row is PASS (its figure is within its target), FAIL, or SKIP with the reason; rows without a target
have none. The whole run stops starting modules after ``TOTAL_BUDGET_S``.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import platform
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent  # `python -m bench` runs from the repository


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


TOTAL_BUDGET_S = 330.0  # the whole report: about 5 minutes
DEFAULT_BUDGET_S = 60.0


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


def modules(only: str | None = None) -> list[str]:
    import bench as pkg

    return [info.name for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name)
            if info.name.startswith("bench_") and (not only or only in info.name)]


def rows_of(name: str):
    """In the module's own process: its rows, one at a time."""
    module = importlib.import_module(name if "." in name else f"bench.{name}")
    for bench in getattr(module, "BENCHMARKS", []):
        yield measure(bench)
    if hasattr(module, "report"):
        yield from module.report()


def budget_of(name: str) -> float:
    """The module's BUDGET_S, read from its source (the module itself is imported only in its process)."""
    import re

    path = Path(__file__).with_name(f"{name}.py")
    m = re.search(r"^BUDGET_S\s*=\s*([0-9.]+)", path.read_text(encoding="utf-8"), re.M)
    return float(m.group(1)) if m else DEFAULT_BUDGET_S


def run_module(name: str, budget: float) -> list[dict]:
    """Runs ``name`` in a child process (a new process group: what it starts, servers and load processes,
    is stopped with it) for at most ``budget`` seconds; the rows it printed, plus a FAIL row if it did not
    finish or failed."""
    import json
    import os
    import selectors
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "bench", "--module", name], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    rows: list[dict] = []
    buf = b""
    err = b""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "out")
    sel.register(proc.stderr, selectors.EVENT_READ, "err")
    t0 = time.monotonic()
    open_streams = 2
    timed_out = False
    while open_streams:
        left = budget - (time.monotonic() - t0)
        if left <= 0:
            timed_out = True
            break
        for key, _ in sel.select(timeout=min(left, 1.0)):
            chunk = os.read(key.fileobj.fileno(), 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                open_streams -= 1
            elif key.data == "err":
                err = (err + chunk)[-4000:]
            else:
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    try:
                        row = json.loads(line)
                    except ValueError:  # something the module printed: not a row
                        continue
                    if isinstance(row, dict) and "name" in row:
                        rows.append(row)
    sel.close()
    if timed_out:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the module's process group: it and what it started
        except ProcessLookupError:
            pass
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()
    elapsed = time.monotonic() - t0
    if timed_out:
        rows.append({"name": f"{name}: finished within its budget", "median_ms": None, "verdict": "FAIL",
                     "note": f"stopped after {budget:.0f} s; the rows above it were measured, the rest were not"})
    elif proc.returncode != 0:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        rows.append({"name": f"{name}: finished", "median_ms": None, "verdict": "FAIL",
                     "note": f"failed after {elapsed:.0f} s: {last[0]}"})
    return rows


def collect(only: str | None = None, total_budget: float = TOTAL_BUDGET_S) -> list[dict]:
    rows = []
    t0 = time.monotonic()
    for name in modules(only):
        spent = time.monotonic() - t0
        if spent >= total_budget:
            rows.append({"name": f"{name}", "median_ms": None, "verdict": "SKIP",
                         "note": f"not run: the report's {total_budget:.0f} s were spent"})
            continue
        budget = min(budget_of(name), max(10.0, total_budget - spent))
        started = time.monotonic()
        rows.extend(run_module(name, budget))
        print(f"{name}: {time.monotonic() - started:.0f} s", flush=True, file=__import__("sys").stderr)
    return rows


def verdict(r: dict) -> str:
    if r.get("verdict"):
        return r["verdict"]
    value, target = r.get("median_ms"), r.get("target_ms")
    if value is None:
        return "SKIP"
    if target is None:
        return ""
    return "PASS" if value <= target else "FAIL"


def render(rows: list[dict]) -> str:
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`python -m bench`). A report, not a test: each row with a target",
        "says PASS or FAIL, a row not measured says SKIP and why. Machine: " + _machine() + f"; run {now}"
        + (f", load average {os.getloadavg()[0]:.1f} at the start." if hasattr(os, "getloadavg") else "."),
        "",
        "| benchmark | median | best | target | verdict | note |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for r in rows:
        target = r.get("target_ms")
        unit = r.get("unit", "ms")
        fmt = (lambda v: f"{v:.2f} {unit}") if unit == "ms" else (lambda v: f"{v:.1f} {unit}")
        value = r.get("median_ms")
        lines.append(f"| {r['name']} | {'' if value is None else fmt(value)} | "
                     f"{fmt(r['best_ms']) if r.get('best_ms') is not None else ''} | "
                     f"{'' if target is None else fmt(target)} | {verdict(r)} | {r.get('note', '')} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only bench modules whose name contains this")
    parser.add_argument("--out", default="docs/benchmarks.md", help="where to write the report ('-' = nowhere)")
    parser.add_argument("--module", help=argparse.SUPPRESS)  # in a module's own process: its rows as JSON lines
    args = parser.parse_args(argv)
    if args.module:
        for row in rows_of(args.module):
            print(json.dumps(row), flush=True)
        return 0
    t0 = time.monotonic()
    rows = collect(args.only)
    text = render(rows)
    print(text)
    counts = {v: sum(verdict(r) == v for r in rows) for v in ("PASS", "FAIL", "SKIP")}
    print(f"{len(rows)} rows: {counts['PASS']} PASS, {counts['FAIL']} FAIL, {counts['SKIP']} SKIP, "
          f"in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    extra = Path("docs/benchmarks-notes.md")
    if args.out != "-":
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        notes = extra.read_text() if extra.exists() else ""
        Path(args.out).write_text(text + ("\n" + notes if notes else ""))
    return 0
