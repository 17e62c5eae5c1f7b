"""The server benchmark at a tiny size, in its Pi mode (``make bench PI=1``): its phases run against the
real server and the floor, each row has a verdict or says why not, and the server rows carry the floor's
figure. A smoke test of the benchmark itself: no figure is checked against a time (none means anything
at this size), only that the rows are there and say what they should. As root the server runs in a real
cgroup (one core in a tiny run); otherwise every Pi row must be a SKIP saying that it needs root (or, as root
in a container with a read-only cgroup tree, that it needs a cgroup: then the test is skipped saying so)."""

import os
import re
import subprocess
import sys

import pytest

import bench
from bench import bench_server, pi

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _rows(text):
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] not in ("benchmark", "---"):
            rows[cells[0]] = {"median": cells[1], "target": cells[3], "verdict": cells[4], "note": cells[5]}
    return rows


def test_the_pi_mode_at_a_tiny_size_gives_every_server_row_with_its_floor():
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPANION_BENCH")}
    tag = env[pi.TAG_ENV] = f"smoke{os.getpid()}"  # in the names of this run's cgroups (another bench has its own)
    p = subprocess.run([sys.executable, "-m", "bench", "--pi", "--tiny", "--only", "bench_server",
                        "--out", "-"], capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    rows = _rows(p.stdout)
    assert "finished" not in " ".join(rows), p.stdout  # the module ran to its end within its budget
    if os.geteuid() != 0:
        for name in bench_server.PI_ROWS:
            assert rows[name]["verdict"] == "SKIP" and "root" in rows[name]["note"]
        return
    no_cgroup = _no_usable_cgroup()
    if no_cgroup:  # root in a container whose cgroup tree is read-only (systemd-nspawn's): the rows say so
        for name in bench_server.PI_ROWS:
            assert rows[name]["verdict"] == "SKIP" and "cgroup" in rows[name]["note"], (name, rows[name])
        pytest.skip(f"the Pi budget's rows need a cgroup this machine does not give ({no_cgroup})")
    for name in bench_server.PI_ROWS:
        assert rows[name]["verdict"] in ("PASS", "FAIL"), (name, rows[name])
        assert rows[name]["median"], name
    for name in ("event POST latency, 12 clients at once, paced (p95)",
                 "fan-out: POST to all 12 SSE subscribers (p95)", START_NAME,
                 "room: fan-out to all 1,000 streams p95"):
        assert re.search(r"\(bare uvicorn \+ (httptools|h11), same run\), ratio", rows[name]["note"]), rows[name]
    assert "cgroup" in rows[START_NAME]["note"]
    assert not any(name.startswith("the installed case") for name in rows), rows  # it was made and used
    assert not [d for d in _stale_cgroups() if os.path.basename(d).startswith(f"companion-bench-{tag}-")]  # removed


START_NAME = bench_server.START_NAME


def _no_usable_cgroup() -> str | None:
    try:
        pi.Budget(100_000).close()
    except pi.Unavailable as exc:
        return str(exc)
    return None


def _stale_cgroups():
    for mount, _, _ in pi._mounts():
        for root, dirs, _ in os.walk(mount):
            for d in dirs:
                if d.startswith(f"companion-bench-"):
                    yield os.path.join(root, d)
            if root.count(os.sep) - mount.count(os.sep) > 3:
                dirs[:] = []


def test_side_by_side_shows_both_modes_the_floor_and_the_ratio():
    x86 = {"machine": "m", "when": "w", "load": 0.5, "rows": [
        {"name": "start", "key": "start", "median_ms": 300.0, "target_ms": 2000},
        {"name": "only here", "key": "x", "median_ms": 1.0, "target_ms": None}]}
    pib = {"machine": "m", "when": "w", "load": 3.0, "rows": [
        {"name": "start", "key": "start", "median_ms": 4000.0, "target_ms": 2000, "floor": 1000.0, "ratio": 4.0},
        {"name": "no key", "median_ms": 1.0}]}
    text = bench.render([], runs={"x86": x86, "pi": pib})
    assert ("| start | 300.00 ms | 2000.00 ms | PASS | 4000.00 ms | 2000.00 ms | FAIL | 1000.00 ms | 4.0× |"
            in text)
    assert "| only here | 1.00 ms |  |  |  |  |  |  |  |" in text
    assert "load average 3.0" in text and "## Pi budget" in text and "## This machine" in text


def test_without_root_or_cgroups_the_budget_says_why(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    try:
        pi.Budget(12000)
    except pi.Unavailable as exc:
        assert "root" in str(exc)
    else:
        raise AssertionError("a budget without root")
    rows = list(pi.calibrate(tiny=True))
    assert rows[-1]["verdict"] == "SKIP" and rows[-1]["pi"]["unavailable"]


def test_the_installed_case_imports_its_own_copy_without_the_editable_finder(tmp_path):
    """The start rows run companion as its wheel lays it out: its own copy, compiled, the data packages
    beside it, no setuptools editable finder at interpreter start."""
    from bench import installed

    exe = installed.make(tmp_path)
    code = ("import sys, companion; from companion.base import resources; "
            "print(companion.__file__); print(resources.web_dir()); "
            "print(any('editable' in m for m in sys.modules))")
    p = subprocess.run([exe, "-c", code], capture_output=True, text=True, timeout=60, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    where, web, editable = p.stdout.split()
    assert where.startswith(str(tmp_path)) and web.endswith("companion/web_files") and editable == "False"
    assert list((tmp_path / "venv").rglob("companion/base/__pycache__/*.pyc"))  # compiled, as pip does


def test_the_report_ends_with_its_notes_as_the_notes_file_holds_them():
    # make bench writes docs/benchmarks.md again (its tables, then docs/benchmarks-notes.md): a note written
    # straight into the report would be lost at the next run
    report = open(os.path.join(REPO, "docs", "benchmarks.md"), encoding="utf-8").read()
    notes = open(os.path.join(REPO, "docs", "benchmarks-notes.md"), encoding="utf-8").read()
    assert report.endswith("\n" + notes), "edit the notes in docs/benchmarks-notes.md, not in docs/benchmarks.md"
