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

**The Pi mode** (``make bench PI=1``, ``--pi``; ``bench/pi.py``): the calibration runs first
as a step of its own (its rows open the Pi table), then only the modules that set ``PI_BUDGET_S`` (their
budget in that mode), with the calibrated budget in the environment (``pi.current()``): they run what
they time (the server, a CLI process, the floor server) alone in a cgroup on the Pi's budget and say the
floor's figure and the ratio in each server row. A row may carry a ``key``: the rows of both modes with
the same key are shown side by side at the top of ``docs/benchmarks.md``. Each mode keeps its rows in
``docs/benchmarks-<mode>.json``, so either run writes the whole report again with the other's last rows.
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


TOTAL_BUDGET_S = 400.0  # the whole report: about 6 minutes, and the bytes on the air (bench_bytes: ~30 s)
PI_TOTAL_BUDGET_S = 1300.0  # the Pi mode: the calibration, the CLI and the server twice (itself and the floor)
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


def modules(only: str | None = None, pi: bool = False) -> list[str]:
    import bench as pkg

    return [info.name for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name)
            if info.name.startswith("bench_") and (not only or only in info.name)
            and (not pi or _setting(info.name, "PI_BUDGET_S") is not None)]


def _setting(name: str, key: str) -> float | None:
    import re

    path = Path(__file__).with_name(f"{name}.py")
    m = re.search(rf"^{key}\s*=\s*([0-9.]+)", path.read_text(encoding="utf-8"), re.M) if path.exists() else None
    return float(m.group(1)) if m else None


def rows_of(name: str):
    """In the module's own process: its rows, one at a time."""
    module = importlib.import_module(name if "." in name else f"bench.{name}")
    for bench in getattr(module, "BENCHMARKS", []):
        yield measure(bench)
    if hasattr(module, "report"):
        yield from module.report()


def budget_of(name: str, pi: bool = False) -> float:
    """The module's BUDGET_S (PI_BUDGET_S in the Pi mode), read from its source (the module itself is
    imported only in its process)."""
    value = _setting(name, "PI_BUDGET_S") if pi else None
    if value is None:
        value = _setting(name, "BUDGET_S")
    return value if value is not None else DEFAULT_BUDGET_S


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


def collect(only: str | None = None, total_budget: float = TOTAL_BUDGET_S, pi: dict | None = None) -> list[dict]:
    """The rows of every module (``only``: those whose name contains it). ``pi``: the Pi mode's options
    ({"memory_mb", "fsync_ms", "tiny"}): the calibration first, then the modules with a Pi budget."""
    import json
    import subprocess
    import sys

    from bench import pi as pimode

    import shutil
    import tempfile

    from bench import installed

    rows = []
    t0 = time.monotonic()
    folder = Path(tempfile.mkdtemp(prefix="companion-installed-"))
    try:  # the start rows run companion as its wheel installs it (bench/installed.py)
        os.environ[installed.ENV] = installed.make(folder)
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        rows.append({"name": "the installed case (companion laid out as its wheel installs it)", "median_ms": None,
                     "verdict": "SKIP", "note": f"not made ({exc}): the start rows ran the development install"})
    if pi is not None:
        os.environ[pimode.ENV + "_OPTS"] = json.dumps(pi)
        calibration = run_module("bench.pi", budget_of("pi"))
        rows.extend(calibration)
        cfg = next((r["pi"] for r in calibration if "pi" in r), None) or {"unavailable": "the calibration failed"}
        os.environ[pimode.ENV] = json.dumps(cfg)
    try:
        for name in modules(only, pi=pi is not None):
            spent = time.monotonic() - t0
            if spent >= total_budget:
                rows.append({"name": f"{name}", "median_ms": None, "verdict": "SKIP",
                             "note": f"not run: the report's {total_budget:.0f} s were spent"})
                continue
            budget = min(budget_of(name, pi is not None), max(10.0, total_budget - spent))
            started = time.monotonic()
            rows.extend(run_module(name, budget))
            if pi is not None:
                pimode.cleanup_stale()  # a module stopped at its budget leaves its empty cgroup
            print(f"{name}: {time.monotonic() - started:.0f} s", flush=True, file=sys.stderr)
    finally:
        os.environ.pop(pimode.ENV, None)
        os.environ.pop(pimode.ENV + "_OPTS", None)
        os.environ.pop(installed.ENV, None)
        shutil.rmtree(folder, ignore_errors=True)
    for r in rows:
        r.pop("pi", None)
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


def _fmt(value, unit: str = "ms") -> str:
    if value is None:
        return ""
    if value == float("inf"):
        return "never"
    return f"{value:.2f} {unit}" if unit == "ms" else f"{value:.1f} {unit}"


def table(rows: list[dict]) -> list[str]:
    lines = ["| benchmark | median | best | target | verdict | note |",
             "| --- | ---: | ---: | ---: | --- | --- |"]
    for r in rows:
        unit = r.get("unit", "ms")
        lines.append(f"| {r['name']} | {_fmt(r.get('median_ms'), unit)} | {_fmt(r.get('best_ms'), unit)} | "
                     f"{_fmt(r.get('target_ms'), unit)} | {verdict(r)} | {r.get('note', '')} |")
    return lines


def side_by_side(x86: dict | None, pi: dict | None) -> list[str]:
    """The rows with a key in either mode's last run: this machine's figure and the Pi budget's, with the
    floor of the Pi run and the ratio."""
    xr = {r["key"]: r for r in (x86 or {}).get("rows", []) if r.get("key")}
    pr = {r["key"]: r for r in (pi or {}).get("rows", []) if r.get("key")}
    keys = list(pr) + [k for k in xr if k not in pr]
    lines = ["| row | x86 | x86 target | verdict | Pi budget | Pi target | verdict | Pi floor (same run) | ratio |",
             "| --- | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: |"]
    for k in keys:
        a, b = xr.get(k, {}), pr.get(k, {})
        unit = (b or a).get("unit", "ms")
        name = (a or b)["name"]
        ratio = f"{b['ratio']:.1f}×" if b.get("ratio") else ""
        lines.append(f"| {name} | {_fmt(a.get('median_ms'), unit)} | {_fmt(a.get('target_ms'), unit)} | "
                     f"{verdict(a) if a else ''} | {_fmt(b.get('median_ms'), unit)} | "
                     f"{_fmt(b.get('target_ms'), unit)} | {verdict(b) if b else ''} | "
                     f"{_fmt(b.get('floor'), unit)} | {ratio} |")
    return lines


def header(run: dict | None, what: str) -> str:
    if not run:
        return f"{what}: not run yet."
    end = f", {run['load_end']:.1f} at the end" if run.get("load_end") is not None else ""
    return f"{what}: {run['machine']}; run {run['when']}, load average {run['load']:.1f} at the start{end}."


def render(rows: list[dict], pi_rows: list[dict] | None = None, runs: dict | None = None) -> str:
    """The report. ``rows``: this run's (the x86 mode); ``runs``: {"x86": ..., "pi": ...} the last run of
    each mode (``docs/benchmarks-<mode>.json``), shown side by side when there is more than this run."""
    runs = runs or {}
    now = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`python -m bench`) and `make bench PI=1` (the Pi budget: the server",
        "or the CLI alone in a cgroup with a calibrated CPU quota and a memory limit, `bench/pi.py`).",
        "A report, not a test: each row with a target says PASS or FAIL, a row not measured says SKIP and why.",
    ]
    if not runs:
        lines += ["Machine: " + _machine() + f"; run {now}"
                  + (f", load average {os.getloadavg()[0]:.1f} at the start." if hasattr(os, "getloadavg") else "."),
                  "", *table(rows)]
        return "\n".join(lines) + "\n"
    lines += ["", "## This machine and the Pi budget, side by side", "",
              "- " + header(runs.get("x86"), "This machine (x86)"),
              "- " + header(runs.get("pi"), "Pi budget"),
              "- The Pi figures are a proxy for a Raspberry Pi Zero 2 W, not a Pi: see the calibration rows and "
              "`bench/pi.py` for what is and is not modelled. The floor is a bare ASGI app on the same "
              "HTTP stack (uvicorn with the server's parser: httptools where its wheel exists, else h11) in "
              "the same budget (`bench/floor.py`); ratio = row / floor.",
              "", *side_by_side(runs.get("x86"), runs.get("pi"))]
    if runs.get("pi"):
        lines += ["", "## Pi budget (`make bench PI=1`)", "", header(runs["pi"], "Run"), "", *table(runs["pi"]["rows"])]
    if runs.get("x86"):
        lines += ["", "## This machine (`make bench`)", "", header(runs["x86"], "Run"), "", *table(runs["x86"]["rows"])]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run only bench modules whose name contains this")
    parser.add_argument("--out", default="docs/benchmarks.md", help="where to write the report ('-' = nowhere)")
    parser.add_argument("--pi", action="store_true", help="the Pi budget mode (bench/pi.py)")
    parser.add_argument("--fsync-ms", type=float, default=0.0, help="Pi mode: add this delay to every fsync")
    parser.add_argument("--memory-mb", type=int, default=400, help="Pi mode: the memory limit")
    parser.add_argument("--tiny", action="store_true", help="a few requests per phase: tries the bench itself")
    parser.add_argument("--module", help=argparse.SUPPRESS)  # in a module's own process: its rows as JSON lines
    args = parser.parse_args(argv)
    if args.module:
        for row in rows_of(args.module):
            print(json.dumps(row), flush=True)
        return 0
    if args.tiny:
        os.environ["COMPANION_BENCH_TINY"] = "1"
    t0 = time.monotonic()
    mode = "pi" if args.pi else "x86"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    rows = collect(args.only, PI_TOTAL_BUDGET_S if args.pi else TOTAL_BUDGET_S,
                   pi={"memory_mb": args.memory_mb, "fsync_ms": args.fsync_ms, "tiny": args.tiny} if args.pi else None)
    run = {"machine": _machine(), "when": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "load": load, "load_end": os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0, "rows": rows}
    counts = {v: sum(verdict(r) == v for r in rows) for v in ("PASS", "FAIL", "SKIP")}
    summary = (f"{len(rows)} rows: {counts['PASS']} PASS, {counts['FAIL']} FAIL, {counts['SKIP']} SKIP, "
               f"in {time.monotonic() - t0:.0f} s")
    if args.out == "-":
        print(render(rows, runs={mode: run} if args.pi else None))
        print(summary, file=sys.stderr)
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    runs = {}
    for m in ("x86", "pi"):
        saved = out.with_name(f"{out.stem}-{m}.json")
        if m == mode and not args.only and not args.tiny:  # a partial or tiny run replaces no saved run
            saved.write_text(json.dumps(run, indent=1) + "\n")
        if m == mode and (args.only or args.tiny):
            runs[m] = run
        elif saved.exists():
            runs[m] = json.loads(saved.read_text())
    text = render(rows, runs=runs)
    print(text)
    print(summary, file=sys.stderr)
    extra = out.with_name("benchmarks-notes.md")
    notes = extra.read_text() if extra.exists() else ""
    out.write_text(text + ("\n" + notes if notes else ""))
    return 0
