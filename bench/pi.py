"""A Raspberry Pi's budget on a faster machine (`make bench PI=1`): the process under test alone in a
cgroup with a CPU quota and a memory limit, the quota calibrated in the same run.

**Calibration.** The fixed workload is the arithmetic loops of the public ``cpu-benchmark`` script
(per iteration: ``3.141592 * 2**x`` for x < 1000, ``float(x) / 3.141592`` and ``float(3.141592) / x`` for
x < 10,000; the loops at module level, as that script ran them). A Raspberry Pi 3B+ (Cortex-A53 at
1.4 GHz, Python 3.11) took a published 245 s for 10,000 iterations; scaled by clock to the Pi Zero 2 W's
1.0 GHz that is 343 s, **34.3 ms per iteration** (``PI_MS_PER_ITERATION``). The calibration times a few
iterations here (CPU time, outside any quota; the least of ``BARE_RUNS`` runs, as this machine's speed moves
between runs), sets the quota to ``1000 µs`` every ``1000 × R µs`` where R = 34.3 ms / this machine's time,
and times the workload again inside the quota (wall time: what a throttled process sees): while that is
more than ``TOLERANCE`` (8%) away from a Pi's 34.3 ms it corrects the period by what it measured and times
it again, at most ``INSIDE_TRIES`` times, keeping the try nearest a Pi's. Another machine re-calibrates
by itself. Published figures of other A53/A72 runs put R in a range of about 8 to 16 for
this machine; rows are read at the calibrated R and their notes say so.

**Only the process under test goes in the cgroup** (the server, a CLI run, the floor server), with a
memory limit (``memory_mb``, default 400); the benchmark's clients and load processes stay outside it.
cgroup v2 (``cpu.max``, ``memory.max``) is used where its controllers can be enabled, else v1
(``cpu.cfs_period_us``/``cpu.cfs_quota_us``, ``memory.limit_in_bytes``); creating a cgroup needs root.
Where neither works, ``Unavailable`` says why and each Pi row is a SKIP with that reason.

**An SD card's fsync** (optional, ``--fsync-ms``): a tiny preload library (``fsync_delay.c``, compiled
here with the system's C compiler into a temporary folder) sleeps that long before every ``fsync`` and
``fdatasync`` of the process under test. Without a compiler the rows say the delay was not applied.

Not modelled: the Pi's other cores (the server's Python runs on one, by the GIL), memory bandwidth and
caches, thermal throttling, Wi-Fi. The figures are a proxy for a Pi, not a Pi.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PI_MS_PER_ITERATION = 245_000 * 1.4 / 1.0 / 10_000  # 34.3 ms: the 3B+'s 245 s at 1.4 GHz, scaled to 1.0 GHz
R_RANGE = (8, 16)
BARE_RUNS = 5  # runs of the workload outside the quota: the least is kept
INSIDE_TRIES = 4  # runs inside the quota, each correcting the period, until one is within TOLERANCE
TOLERANCE = 0.08
QUOTA_US = 1000  # the smallest quota cgroup v1 accepts; the period carries the ratio
ENV = "COMPANION_BENCH_PI"  # set by the runner for the modules: JSON of the calibrated budget
TAG_ENV = "COMPANION_BENCH_TAG"  # optional: a word in the names of the cgroups a run makes (its own, to count)


class Unavailable(Exception):
    """The Pi budget cannot be set up here (the reason is the message)."""


WORKLOAD = """
import time
_t0 = time.process_time() if CPU else time.perf_counter()
for i in range(ITERATIONS):
    for x in range(1, 1000):
        3.141592 * 2 ** x
    for x in range(1, 10000):
        float(x) / 3.141592
    for x in range(1, 10000):
        float(3.141592) / x
_t1 = time.process_time() if CPU else time.perf_counter()
print((_t1 - _t0) * 1000 / ITERATIONS)
"""


def workload_argv(iterations: int, cpu: bool) -> list[str]:
    """A process that runs the workload at module level and prints its time per iteration (ms)."""
    code = f"CPU = {bool(cpu)}\nITERATIONS = {int(iterations)}\n" + WORKLOAD
    return [sys.executable, "-S", "-c", code]


# -- cgroups -------------------------------------------------------------------------------------------
def _own_path(controller: str | None) -> str:
    """This process's cgroup path for a v1 ``controller`` (None: the v2 path)."""
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller is None and names == "":
            return path
        if controller is not None and controller in names.split(","):
            return path
    raise Unavailable(f"this process is in no {controller or 'v2'} cgroup")


def _mounts() -> list[tuple[str, str, str]]:
    out = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
            out.append((parts[1], parts[2], parts[3]))
    return out


class Budget:
    """One cgroup (v1: one per controller) holding the process under test; ``preexec`` moves a child
    into it before it execs; ``close()`` removes it."""

    def __init__(self, period_us: int, quota_us: int = QUOTA_US, memory_mb: int = 400, name: str | None = None):
        if os.geteuid() != 0:
            raise Unavailable("creating a cgroup needs root (run `make bench PI=1` as root)")
        self.period_us, self.quota_us, self.memory_mb = int(period_us), int(quota_us), int(memory_mb)
        tag = os.environ.get(TAG_ENV, "")
        self.name = name or f"companion-bench-{tag + '-' if tag else ''}{os.getpid()}-{time.monotonic_ns() % 10**9}"
        self.dirs: list[Path] = []
        self.procs: list[str] = []
        self.version = None
        errors = []
        for setup in (self._v2, self._v1):
            try:
                setup()
                break
            except (OSError, Unavailable) as exc:
                errors.append(f"{setup.__name__[1:]}: {exc}")
                self.close()
        else:
            raise Unavailable("no usable cgroup (" + "; ".join(errors) + ")")

    def _v2(self):
        mount = next((m for m, kind, _ in _mounts() if kind == "cgroup2"), None)
        if mount is None:
            raise Unavailable("no cgroup2 mount")
        parent = Path(mount) / _own_path(None).lstrip("/")
        controllers = (parent / "cgroup.controllers").read_text().split()
        if "cpu" not in controllers or "memory" not in controllers:
            raise Unavailable(f"the cpu and memory controllers are not available in {parent}")
        if not {"cpu", "memory"} <= set((parent / "cgroup.subtree_control").read_text().split()):
            (parent / "cgroup.subtree_control").write_text("+cpu +memory")
        d = parent / self.name
        d.mkdir()
        self.dirs.append(d)
        (d / "cpu.max").write_text(f"{self.quota_us} {self.period_us}")
        (d / "memory.max").write_text(str(self.memory_mb * 1024 * 1024))
        self.procs = [str(d / "cgroup.procs")]
        self.version = "v2"

    def _v1(self):
        mounts = {}
        for m, kind, opts in _mounts():
            if kind == "cgroup":
                for c in opts.split(","):
                    mounts.setdefault(c, m)
        if "cpu" not in mounts or "memory" not in mounts:
            raise Unavailable("no v1 cpu and memory hierarchies")
        cpu = Path(mounts["cpu"]) / _own_path("cpu").lstrip("/") / self.name
        mem = Path(mounts["memory"]) / _own_path("memory").lstrip("/") / self.name
        for d in (cpu, mem):
            d.mkdir()
            self.dirs.append(d)
        (cpu / "cpu.cfs_period_us").write_text(str(self.period_us))
        (cpu / "cpu.cfs_quota_us").write_text(str(self.quota_us))
        (mem / "memory.limit_in_bytes").write_text(str(self.memory_mb * 1024 * 1024))
        self.procs = [str(cpu / "cgroup.procs"), str(mem / "cgroup.procs")]
        self.version = "v1"

    def describe(self) -> str:
        if self.version == "v2":
            return f"cgroup v2 cpu.max {self.quota_us} {self.period_us}, memory.max {self.memory_mb} MB"
        return (f"cgroup v1 cpu.cfs_quota_us={self.quota_us} cpu.cfs_period_us={self.period_us}, "
                f"memory.limit_in_bytes {self.memory_mb} MB")

    def preexec(self):
        procs = list(self.procs)

        def move():  # in the child, before exec: its imports are already on the Pi's budget
            for path in procs:
                with open(path, "w") as fh:
                    fh.write("0")  # "0": the writing process itself

        return move

    def throttled(self) -> tuple[int, float]:
        """(periods throttled, seconds throttled) so far."""
        for d in self.dirs:
            stat = d / "cpu.stat"
            if stat.exists():
                kv = dict(line.split() for line in stat.read_text().splitlines() if line.strip())
                if "throttled_usec" in kv:
                    return int(kv.get("nr_throttled", 0)), int(kv["throttled_usec"]) / 1e6
                if "throttled_time" in kv:
                    return int(kv.get("nr_throttled", 0)), int(kv["throttled_time"]) / 1e9
        return 0, 0.0

    def close(self):
        for d in reversed(self.dirs):
            for _ in range(50):  # a process just killed leaves its cgroup a moment later
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
        self.dirs = []


def cleanup_stale() -> None:
    """Removes the empty benchmark cgroups a killed module left (best effort)."""
    for m, _, _ in _mounts():
        for d in Path(m).glob("**/companion-bench-*"):
            try:
                d.rmdir()
            except OSError:
                pass


# -- the calibrated budget, handed from the runner to the modules ------------------------------------
def current() -> dict | None:
    """The budget the runner calibrated ({"period_us", "quota_us", "memory_mb", "r", "fsync_ms",
    "unavailable"}), or None outside the Pi mode."""
    raw = os.environ.get(ENV)
    return json.loads(raw) if raw else None


def budget_for(cfg: dict) -> Budget:
    if cfg.get("unavailable"):
        raise Unavailable(cfg["unavailable"])
    return Budget(cfg["period_us"], cfg["quota_us"], cfg.get("memory_mb", 400))


def popen(argv, budget: Budget | None, cfg: dict | None = None, **kw) -> subprocess.Popen:
    """``subprocess.Popen`` with the child in ``budget`` (and the fsync delay of ``cfg``) when given."""
    if budget is not None:
        kw["preexec_fn"] = budget.preexec()
        lib = (cfg or {}).get("fsync_lib")
        if lib:
            env = dict(kw.get("env") or os.environ)
            env["LD_PRELOAD"] = lib
            env["COMPANION_FSYNC_DELAY_MS"] = str(cfg["fsync_ms"])
            kw["env"] = env
    return subprocess.Popen(argv, **kw)


def time_workload(iterations: int, budget: Budget | None, timeout: float = 120) -> float:
    """ms per iteration: CPU time outside any budget, wall time inside ``budget``."""
    p = popen(workload_argv(iterations, cpu=budget is None), budget, stdout=subprocess.PIPE,
              stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"the calibration workload failed: {err.decode()[-200:]}")
    return float(out.decode().strip())


def build_fsync_delay(folder: Path) -> str | None:
    """The preload library's path, or None where no C compiler is found."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    src = Path(__file__).with_name("fsync_delay.c")
    out = folder / "libfsyncdelay.so"
    p = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(out), str(src), "-ldl"], capture_output=True,
                       timeout=60)
    return str(out) if p.returncode == 0 else None


def calibrate(memory_mb: int = 400, fsync_ms: float = 0.0, iterations: int = 60, tiny: bool = False):
    """Yields the calibration's rows; the last one carries the budget under "pi" for the runner."""
    cfg = {"memory_mb": memory_mb, "fsync_ms": fsync_ms, "quota_us": QUOTA_US}
    if tiny:  # the smoke test of the bench: the machinery, not a budget (one core, nothing timed)
        try:
            budget = Budget(QUOTA_US, QUOTA_US, memory_mb)
            cfg.update(period_us=budget.period_us, describe=budget.describe(), r=1.0, tiny=True)
            budget.close()
        except Unavailable as exc:
            cfg["unavailable"] = str(exc)
            yield {"name": "Pi budget: calibration", "median_ms": None, "verdict": "SKIP",
                   "note": f"not measured: {exc}", "pi": cfg}
            return
        yield {"name": "calibration: none (a tiny run: one core, R taken as 1)", "median_ms": None,
               "verdict": "SKIP", "note": "a tiny run tries the bench itself; its figures mean nothing", "pi": cfg}
        return
    try:
        # CPU time of a fixed workload: the least of several runs (this machine's speed moves by up to a
        # third between runs of the same work; the least is the one least disturbed)
        bare = min(time_workload(max(3, iterations // 4), None) for _ in range(BARE_RUNS))
        r = PI_MS_PER_ITERATION / bare
        period = int(QUOTA_US * r)
        tries = []  # (period µs, ms per iteration inside)
        for _ in range(INSIDE_TRIES):  # time in the quota; until within TOLERANCE of a Pi's, correct and again
            budget = Budget(period, QUOTA_US, memory_mb)
            try:
                inside = time_workload(iterations, budget, timeout=600)
                cfg["describe"], cfg["period_us"] = budget.describe(), budget.period_us
            finally:
                budget.close()
            tries.append((period, inside))
            if abs(inside / PI_MS_PER_ITERATION - 1) <= TOLERANCE:
                break
            period = max(QUOTA_US + 1, int(period * PI_MS_PER_ITERATION / inside))
        else:  # every try off: keep the try nearest a Pi's (its period is the budget the rows run in)
            period, inside = min(tries, key=lambda t: abs(t[1] / PI_MS_PER_ITERATION - 1))
            budget = Budget(period, QUOTA_US, memory_mb)
            cfg["describe"], cfg["period_us"] = budget.describe(), budget.period_us
            budget.close()
        cfg.update(r=r, slowdown=inside / bare, bare_ms=bare, inside_ms=inside, tries=tries)
    except Unavailable as exc:
        cfg["unavailable"] = str(exc)
        yield {"name": "Pi budget: calibration", "median_ms": None, "verdict": "SKIP",
               "note": f"not measured: {exc}", "pi": cfg}
        return
    yield {"name": "calibration: the workload on this machine, per iteration (CPU time, no quota)",
           "median_ms": bare, "best_ms": None, "target_ms": None, "key": "calib-bare",
           "note": f"the arithmetic loops of cpu-benchmark; R = {PI_MS_PER_ITERATION:.1f} / {bare:.2f} = "
                   f"{cfg['r']:.1f} (published runs put R at {R_RANGE[0]}-{R_RANGE[1]} here)"}
    if fsync_ms:
        lib = build_fsync_delay(Path(tempfile.mkdtemp(prefix="companion-fsync-")))
        cfg["fsync_lib"] = lib
    yield {"name": "calibration: the same workload inside the quota (wall time)", "median_ms": inside,
           "best_ms": None, "target_ms": None, "key": "calib-inside",
           "note": f"{cfg['describe']}; tries "
                   + ", ".join(f"{ms:.1f} ms with period {p} µs" for p, ms in cfg["tries"])
                   + f" (kept: within {TOLERANCE:.0%} of a Pi's, else the nearest); a Pi Zero 2 W: {PI_MS_PER_ITERATION:.1f} ms (a Pi 3B+'s published 245 s "
                   f"for 10,000 iterations, scaled by clock); slowdown in the quota {cfg['slowdown']:.1f}"
                   + (f"; fsync delay {fsync_ms:g} ms " + ("applied (preload library)" if cfg.get("fsync_lib")
                                                         else "NOT applied: no C compiler") if fsync_ms else ""),
           "pi": cfg}


def report():
    """The calibration as a bench step (``python -m bench --module bench.pi``)."""
    opts = json.loads(os.environ.get(ENV + "_OPTS", "{}"))
    yield from calibrate(memory_mb=opts.get("memory_mb", 400), fsync_ms=opts.get("fsync_ms", 0.0),
                         tiny=bool(opts.get("tiny")))
