"""The real server (`companion serve` on 127.0.0.1, a subprocess: uvicorn, streams on its event loop):

- start to the first `/healthz` 200 (process start, imports, migrations, listening);
- event POST latency with 12 concurrent clients, each writing to its own match with `expected_seq`
  (paced: 20-100 ms between a client's writes, and saturated: back-to-back);
- fan-out: one POST, the time until each of 12 SSE subscribers of that match has the event;
- resident memory (VmRSS of the server process) after a simulated 3-hour club evening of 6 tables
  (compressed in time: ~3,200 events, 12 live streams that reconnect now and then, page polls, undos),
  and its growth between the end of the first hour and the end of the evening.

- a tournament room (``bench/room.py``): 1,000 open streams of one match (from ten loopback
  addresses, 127.0.0.2-11, 100 each: the per-address caps of ``companion serve`` stay as shipped), 200
  connections sending their request head a byte a second and 200 sending nothing (all from one address,
  127.0.0.99, reopened when the server closes them) while 12 players write (from 127.0.0.1): player POST
  p95, /healthz, fan-out to all 1,000 streams, peak RSS, and how soon the service answers again once the
  flood stops. The streams and the nuisance connections are served by a separate load process, so the
  players' figures are the server's, not this process waiting for its own threads.

Every phase has a deadline and ends in rows with a verdict, whatever happens to it (an error becomes a
FAIL row naming it); ``BUDGET_S`` bounds the whole module (see ``bench/__init__.py``).

The matches and their events are synthetic (Richelieu track corrections, cheap to fold), made up for
timing only. Traffic goes only to 127.0.0.1; every loop is bounded in count and in time.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HOST = "127.0.0.1"
CLIENTS = 12
TABLES = 6
DEADLINE = 120.0  # seconds: no phase of this benchmark may take longer
EVENING_DEADLINE = 110.0  # the simulated evening (its RSS rows are FAIL beyond)
BUDGET_S = 300.0  # the whole module (starts, POSTs, fan-out, the room, the evening)
PI_BUDGET_S = 900.0  # the Pi mode: the same phases on the Pi's budget, then again against the floor


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _token(data_dir: Path) -> str:
    from companion.storage import Store
    from companion.services.access import Access

    store = Store(data_dir / "companion.db")
    try:
        return Access(store).create_api_token("organiser", label="benchmark")[0]
    finally:
        store.close()


class Server:
    """``companion serve`` on a free loopback port; in the Pi mode, alone in ``budget`` (a cgroup)."""

    def __init__(self, data_dir: Path | None, budget=None, cfg=None):
        from bench import pi

        self.port = _free_port()
        env = dict(os.environ)  # the default SSE heartbeat (10 s)
        env.pop("COMPANION_SSE_HEARTBEAT", None)
        env.pop("COMPANION_DEBUG", None)
        env.pop(pi.ENV, None)
        env.setdefault("MALLOC_ARENA_MAX", "2")  # as the systemd unit sets it (systemd/companion.service)
        self.t0 = time.perf_counter()
        self.proc = pi.popen(self.argv(data_dir), budget, cfg, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=env, cwd=self.cwd())
        self.host = f"{HOST}:{self.port}"
        self.ready_ms = self._wait_healthz()
        self.app_ms = self._wait_app()

    def argv(self, data_dir):
        from bench import installed

        # as the unit runs it (systemd/companion.service: --gpio auto; off a Pi, no pins are found)
        return [installed.python(), "-m", "companion", "serve", "--host", HOST, "--port", str(self.port),
                "--gpio", "auto", "--no-qr", "--data-dir", str(data_dir)]

    def cwd(self):  # outside the checkout: the installed case imports its own copy (bench/installed.py)
        return tempfile.gettempdir()

    def cpu_s(self) -> float:
        from bench.room import cpu_seconds

        return cpu_seconds(self.proc.pid)

    def _wait_healthz(self) -> float:
        ms = self._wait_for("/healthz", 2)
        if ms is None:
            raise RuntimeError("no /healthz within 30 s")
        return ms

    def _wait_app(self) -> float | None:
        """From the start to the first answer of the Flask app (``GET /api/games``): the server answers
        ``/healthz`` through the app too: both wait for its build, which starts once it listens)."""
        return self._wait_for("/api/games", 10)

    def _wait_for(self, path: str, timeout: float) -> float | None:
        """Milliseconds from the start to the first 200 of ``GET path`` (None: none within 30 s)."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("the server exited at start")
            try:
                conn = http.client.HTTPConnection(self.host, timeout=timeout)
                conn.request("GET", path)
                r = conn.getresponse()
                r.read()
                conn.close()
                if r.status == 200:
                    return (time.perf_counter() - self.t0) * 1000
            except OSError:
                pass
            time.sleep(0.005)
        return None

    def settle(self, quiet_s: float = 0.5, cap_s: float = 60.0) -> float:
        """Wait until the start's own work is done, and return the seconds waited: the Flask app (built
        after the first answer), then every template compiled in the background ``TEMPLATES_AFTER_S``
        later; done when the server has used under 2% of a core for ``quiet_s``. The write and stream
        phases measure a box that players reach after its start, as at a table; the start has its rows."""
        t0 = time.monotonic()  # (the app was built before the constructor returned: ``_wait_app``)
        time.sleep(self.background_s())
        while time.monotonic() - t0 < cap_s:
            cpu0 = self.cpu_s()
            time.sleep(quiet_s)
            if self.cpu_s() - cpu0 < 0.02 * quiet_s:
                break
        return time.monotonic() - t0

    def background_s(self) -> float:
        from companion.cli.serve import TEMPLATES_AFTER_S

        return 0.0 if TINY else TEMPLATES_AFTER_S + 0.2

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Floor(Server):
    """The floor: a bare ASGI app on the same HTTP stack (``bench/floor.py``)."""

    def argv(self, data_dir):
        from bench import installed

        return [installed.python(), "-m", "bench.floor", HOST, str(self.port)]

    def cwd(self):  # the checkout: bench/ is not installed
        return str(Path(__file__).resolve().parents[1])

    def _wait_app(self):  # (no app beside its one endpoint)
        return None

    def background_s(self) -> float:  # (no work of its own after it listens)
        return 0.0


class Client:
    def __init__(self, host: str, token: str, timeout: float = 10.0):
        self.host, self.timeout = host, timeout
        self.conn = http.client.HTTPConnection(host, timeout=timeout)
        self.h = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def call(self, method, path, body=None):
        payload = json.dumps(body) if body is not None else None
        try:
            self.conn.request(method, path, body=payload, headers=self.h)
            r = self.conn.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # the server closed this keep-alive connection while it was idle (after 5 s): a browser opens
            # a new one and sends again, and so does this client (the request never reached the server)
            self.conn.close()
            self.conn.request(method, path, body=payload, headers=self.h)
            r = self.conn.getresponse()
        except (OSError, http.client.HTTPException):
            self.conn.close()  # a timeout: the next call starts on a new connection
            raise
        data = r.read()
        return r.status, (json.loads(data) if data else None)

    def close(self):
        self.conn.close()


PLAYERS = ["Ada", "Bo", "Cy", "Di"]


def _new_match(c: Client, label: str) -> str:
    status, body = c.call("POST", "/api/matches", {"game": "richelieu", "players": PLAYERS, "label": label})
    if status != 201:
        raise RuntimeError(f"create match: {status} {body}")
    return body["id"]


def _adjust(i: int) -> dict:
    return {"type": "track.adjust", "data": {"player": PLAYERS[i % 4], "track": "money", "delta": 1 + i % 5}}


def _pct(values, p):
    values = sorted(values)
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


# -- phases -----------------------------------------------------------------------------------------
def start_times(runs: int = 5, budget=None, cfg=None, kind=None, app: list | None = None) -> list[float]:
    """``runs`` starts to the first /healthz 200 (ms); ``app`` gets each start's time to the first answer of
    the Flask app."""
    out = []
    with tempfile.TemporaryDirectory(prefix="companion-bench-") as d:
        for _ in range(runs):  # the first run creates the database (migrations); later ones open it
            s = (kind or Server)(Path(d), budget, cfg)
            out.append(s.ready_ms)
            if app is not None and s.app_ms is not None:
                app.append(s.app_ms)
            s.stop()
    return out


APP_NAME = "server: start to the first page's answer (`GET /api/games`: the Flask app built)"


def app_row(app: list[float], note: str) -> dict:
    return {"name": APP_NAME, "key": "start-app", "median_ms": statistics.median(app) if app else None,
            "best_ms": min(app) if app else None, "target_ms": None,
            "note": "the server attaches its GPIO panel and builds its Flask app once it listens (every request, `/healthz` too, waits for it); "
                    + note}


def post_latencies(server: Server, token: str, per_client: int, pace: tuple[float, float] | None) -> list[float]:
    setup = Client(server.host, token)
    matches = [_new_match(setup, f"bench {i}") for i in range(CLIENTS)]
    setup.close()
    samples: list[float] = []
    lock = threading.Lock()
    errors: list = []
    barrier = threading.Barrier(CLIENTS)
    stop_at = time.monotonic() + DEADLINE

    def run(n):
        rng = random.Random(n)
        c = Client(server.host, token)
        seq = 0
        mine = []
        try:
            barrier.wait(timeout=30)
            if pace:  # each client's first write a pause after the start, as every later one: at a club's
                # pace the twelve do not all write in the same instant (that burst is the back-to-back row's)
                time.sleep(rng.uniform(0, pace[1]))
            for i in range(per_client):
                if time.monotonic() > stop_at:
                    break
                body = dict(_adjust(i), expected_seq=seq)
                t0 = time.perf_counter()
                status, resp = c.call("POST", f"/api/matches/{matches[n]}/events", body)
                mine.append((time.perf_counter() - t0) * 1000)
                if status != 201:
                    errors.append((status, resp))
                    return
                seq = resp["event"]["seq"]
                if pace:
                    time.sleep(rng.uniform(*pace))
        finally:
            c.close()
            with lock:
                samples.extend(mine)

    threads = [threading.Thread(target=run, args=(n,), daemon=True) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=DEADLINE + 30)
    if errors:
        raise RuntimeError(f"POST failed: {errors[:2]}")
    return samples


class Subscriber(threading.Thread):
    """A raw SSE reader: records when each event id arrives (perf_counter, same process as the writer)."""

    def __init__(self, host: str, match_id: str):
        super().__init__(daemon=True)
        port = int(host.rsplit(":", 1)[1])
        self.sock = socket.create_connection((HOST, port), timeout=DEADLINE)
        self.sock.sendall(f"GET /api/matches/{match_id}/stream HTTP/1.1\r\nHost: {host}\r\n"
                          "Accept: text/event-stream\r\n\r\n".encode())
        self.arrived: dict[int, float] = {}
        self.ready = threading.Event()
        self.closed = False

    def run(self):
        buf = b""
        try:
            while not self.closed:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return
                now = time.perf_counter()
                buf += chunk
                if b"event: snapshot" in buf:
                    self.ready.set()
                for m in re.finditer(rb"id: (\d+)\nevent: event\n", buf):
                    self.arrived.setdefault(int(m.group(1)), now)
                buf = buf[-200:] if len(buf) > 4096 else buf
        except OSError:
            return

    def close(self):
        self.closed = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def fanout(server: Server, token: str, posts: int = 60) -> list[float]:
    c = Client(server.host, token)
    match_id = _new_match(c, "fan-out")
    subs = [Subscriber(server.host, match_id) for _ in range(CLIENTS)]
    for s in subs:
        s.start()
    for s in subs:
        if not s.ready.wait(timeout=30):
            raise RuntimeError("a subscriber got no snapshot")
    sent: dict[int, float] = {}
    seq = 0
    stop_at = time.monotonic() + DEADLINE
    for i in range(posts):
        if time.monotonic() > stop_at:
            break
        t0 = time.perf_counter()
        status, resp = c.call("POST", f"/api/matches/{match_id}/events", dict(_adjust(i), expected_seq=seq))
        if status != 201:
            raise RuntimeError(f"POST failed: {status} {resp}")
        seq = resp["event"]["seq"]
        sent[seq] = t0
        wait_until = time.monotonic() + 10
        while time.monotonic() < wait_until and not all(seq in s.arrived for s in subs):
            time.sleep(0.001)
        time.sleep(0.02)  # let the streams go quiet before the next write
    c.close()
    for s in subs:
        s.close()
    lat = []
    missing = 0
    for seq, t0 in sent.items():
        for s in subs:
            if seq in s.arrived:
                lat.append((s.arrived[seq] - t0) * 1000)
            else:
                missing += 1
    if missing:
        raise RuntimeError(f"{missing} deliveries never arrived")
    return lat


def evening(server: Server, token: str, events_per_table: int = 540, deadline: float = EVENING_DEADLINE) -> dict:
    """3 hours of 6 tables, compressed: an event per table every ~20 s of evening (540 each), 2 live
    streams per table that reconnect every ~30 minutes of evening (table by table), a page poll every 5
    events, an undo every 40. RSS is read after each simulated half hour. Ends at ``deadline`` seconds
    (``finished`` False, the half hours done so far kept); a request that fails or times out (10 s) is
    counted, the next one goes on a new connection; the slowest request of each kind is noted."""
    # the start's own work done before the evening's first half hour: the Flask app (built after the first
    # answer), then every template compiled in the background (about 1 MB, once): read as growth between
    # hour 1 and hour 3 whenever it fell after the first reading
    server.settle()
    c = Client(server.host, token)
    stop_at = time.monotonic() + deadline
    matches = [_new_match(c, f"Tavolo {i + 1}") for i in range(TABLES)]
    c.close()
    subs = [Subscriber(server.host, m) for m in matches for _ in range(2)]
    for sub in subs:
        sub.start()
    for sub in subs:
        sub.ready.wait(timeout=10)

    def reconnect_table(t):
        for k in (2 * t, 2 * t + 1):
            subs[k].close()
            subs[k] = Subscriber(server.host, matches[t])
            subs[k].start()
            subs[k].ready.wait(timeout=10)

    rss = []
    seqs = {m: 0 for m in matches}
    clients = [Client(server.host, token) for _ in matches]
    slowest: dict[str, float] = {}
    failed: list[str] = []

    def call(cl, method, path, body=None, kind=None):
        t0 = time.perf_counter()
        try:
            status, resp = cl.call(method, path, body)
        except (OSError, http.client.HTTPException) as exc:
            failed.append(f"{method} {kind or path}: {type(exc).__name__}")
            return None, None
        ms = (time.perf_counter() - t0) * 1000
        key = f"{method} {kind or path}"
        slowest[key] = max(slowest.get(key, 0.0), ms)
        return status, resp

    halves = 6
    per_half = events_per_table // halves
    i = 0
    finished = True
    try:
        for half in range(halves):
            for step in range(per_half):
                if time.monotonic() > stop_at:
                    finished = False
                    break
                if step % (per_half // TABLES) == 0 and step // (per_half // TABLES) < TABLES:
                    # phones sleep and wake: each half hour every table's two streams reconnect, one table
                    # at a time
                    reconnect_table(step // (per_half // TABLES))
                for t, m in enumerate(matches):
                    cl = clients[t]
                    if i % 40 == 39:
                        status, resp = call(cl, "POST", f"/api/matches/{m}/undo", {"expected_seq": seqs[m]},
                                            "/api/matches/<id>/undo")
                    else:
                        status, resp = call(cl, "POST", f"/api/matches/{m}/events",
                                            dict(_adjust(i), expected_seq=seqs[m]), "/api/matches/<id>/events")
                    if status == 201:
                        seqs[m] = resp["event"]["seq"]
                    elif status == 409 and resp:
                        seqs[m] = resp.get("last_seq", seqs[m])
                    elif status is not None:
                        failed.append(f"write {status}")
                    if i % 5 == 0:
                        call(cl, "GET", f"/api/matches/{m}", kind="/api/matches/<id>")
                if i % 10 == 0:
                    call(clients[0], "GET", "/api/matches")
                    call(clients[0], "GET", "/api/tournament")
                i += 1
            if not finished:
                break
            rss.append(server.rss_mb())
    finally:
        for sub in subs:
            sub.close()
        for cl in clients:
            cl.close()
    return {"rss": rss, "events": sum(seqs.values()), "finished": finished, "slowest": slowest,
            "failed": failed, "halves": halves}


ROOM = {"streams": 1000, "slow": 200, "idle": 200, "players": CLIENTS, "seconds": 30.0}
# the sizes of the phases: writes per client paced, back-to-back, at a club's pace; fan-out POSTs; starts
SIZES = {"paced": 60, "saturated": 60, "club": 8, "fanout": 60, "starts": 5, "control_s": 10.0}
# COMPANION_BENCH_SMALL=1: a tenth of the room and of the evening, to try the benchmark itself quickly
SMALL = os.environ.get("COMPANION_BENCH_SMALL") == "1"
# COMPANION_BENCH_TINY=1: a few requests of each phase (the smoke test of `make test`: no figure of it
# means anything)
TINY = os.environ.get("COMPANION_BENCH_TINY") == "1"
if SMALL:
    ROOM = {"streams": 100, "slow": 20, "idle": 20, "players": CLIENTS, "seconds": 8.0}
if TINY:
    ROOM = {"streams": 12, "slow": 2, "idle": 2, "players": 3, "seconds": 1.0, "settle": 0.2}
    SIZES = {"paced": 3, "saturated": 3, "club": 1, "fanout": 3, "starts": 1, "control_s": 1.0}
CLUB_PACE = (1.0, 3.0) if not TINY else (0.05, 0.1)  # seconds between a client's writes at a club's pace


def room_figures(server: Server, token: str) -> dict:
    from bench import room

    server.settle()
    # a control first: the same players with no flood, so the figures can be read against the machine's
    # load at the time (the CPU is shared)
    quiet = room.flood(server.host, server.proc.pid, token, streams=1, slow=0, idle=0,
                       players=ROOM["players"], seconds=SIZES["control_s"], settle=ROOM.get("settle", 1.0))
    r = room.flood(server.host, server.proc.pid, token, **ROOM)
    r["control_ms"] = quiet["post_ms"]
    return r


def room_rows(r: dict, floor: dict | None = None, pi_targets: bool = False, r_ratio: float | None = None,
              share: float | None = None):
    """``share``: the part of one core the Pi budget allows (its quota over its period): the note says how
    much of it the server (and the floor) used during the flood, so a room that asks for more than the budget
    can give (every latency then a wait for the CPU) reads as such."""
    from bench import room

    flood = (f"{r['streams_ready']}/{r['streams']} streams open from {r['addresses']} addresses (in "
             f"{r['open_s']:.1f} s), {r['slow']} slow-header + {r['idle']} idle connections from one address "
             f"({r['nuisance_reopened']} closed by the server and reopened), {ROOM['players']} players writing "
             f"for {ROOM['seconds']:.0f} s; load average {r['loadavg']:.1f}")
    post, fan, health = r["post_ms"], r["fan_ms"], r["health_ms"]
    control = r["control_ms"]
    f = floor or {}
    yield _with_floor({
        "name": "room: player POST p95 during the flood", "key": "room-post-p95", "median_ms": room.pct(post, 95),
        "best_ms": min(post) if post else None, "target_ms": 150 if pi_targets else 100,
        "note": f"{len(post)} POSTs ({r['post_fail']} failed, p50 {room.pct(post, 50):.1f} ms); {flood}; "
                f"server CPU {r['server_cpu'] * 100:.0f}% of a core{_of_budget(r, floor, share)}, the load process's "
                f"{r['load_cpu'] * 100:.0f}%. Control, the same players without the flood just before: "
                f"p95 {room.pct(control, 95):.1f} ms (p50 {room.pct(control, 50):.1f} ms)"},
        room.pct(f["post_ms"], 95) if f.get("post_ms") else None)
    yield {"name": "room: /healthz failures during the flood", "key": "room-healthz",
           "median_ms": float(r["health_fail"]), "best_ms": None, "target_ms": 0, "unit": "failed",
           "note": f"{len(health)} answered (2 s timeout), p95 {room.pct(health, 95):.1f} ms, "
                   f"slowest {max(health) if health else float('nan'):.1f} ms"}
    yield _with_floor({
        "name": "room: fan-out to all 1,000 streams p95", "key": "room-fan-p95", "median_ms": room.pct(fan, 95),
        "best_ms": min(fan) if fan else None, "target_ms": 1000 if pi_targets else 500,
        "note": f"{len(fan)} deliveries of {r['fan_events']} events ({r['fan_missing']} never arrived), "
                f"p50 {room.pct(fan, 50):.1f} ms: from sending the POST to the event read on each stream"},
        room.pct(f["fan_ms"], 95) if f.get("fan_ms") else None)
    yield {"name": "room: server peak RSS during the flood", "key": "room-rss", "median_ms": r["rss_peak"],
           "best_ms": None, "target_ms": 150, "unit": "MB", "note": "VmRSS, read ten times a second"}
    yield _with_floor({
        "name": "room: answers again after the flood stops", "key": "room-recover", "median_ms":
        r["recovered_ms"] if r["recovered_ms"] is not None else float("inf"), "best_ms": None, "target_ms": 1000,
        "note": "every flood socket closed at once, then the time to a /healthz 200 and a POST 201"},
        f.get("recovered_ms"))
    if r_ratio:
        per = _stream_cpu(f) if f else None
        yield _with_floor(_stream_cpu_row(r, r_ratio), per * r_ratio * 1e6 if per is not None else None)


def _of_budget(r: dict, floor: dict | None, share: float | None) -> str:
    if not share:
        return ""
    text = f" ({r['server_cpu'] / share * 100:.0f}% of the budget's {share * 100:.1f}%"
    if floor and floor.get("server_cpu") is not None:
        text += f"; the floor's {floor['server_cpu'] / share * 100:.0f}%"
    return text + ")"


def _stream_cpu(r: dict) -> float | None:
    """Seconds of server CPU per stream per event in the room, less the players' writes at the CPU per
    write measured before (an estimate: the writes during the flood may cost more or less)."""
    if not r.get("fan_events") or not r.get("streams_ready") or r.get("cpu_per_write_s") is None:
        return None
    writes = len(r["post_ms"]) + r["post_fail"]
    spent = r["server_cpu"] * r["wall_s"] - writes * r["cpu_per_write_s"]
    return max(0.0, spent) / (r["fan_events"] * r["streams_ready"])


def _stream_cpu_row(r: dict, ratio: float) -> dict:
    per = _stream_cpu(r)
    return {"name": "room: Pi CPU per stream per event (estimate)", "key": "cpu-stream", "unit": "µs",
            "median_ms": per * ratio * 1e6 if per is not None else None, "best_ms": None, "target_ms": None,
            "note": "the server's CPU during the flood, less its players' writes at the CPU per write of the "
                    f"paced phase, over the deliveries and the streams, times R = {ratio:.1f}"}


def _floor_stack() -> str:
    from bench.floor import stack

    return stack()


def _with_floor(row: dict, floor_value) -> dict:
    """The floor's figure of the same row (same run) and the ratio, in the row and its note."""
    if floor_value is None or row.get("median_ms") is None:
        return row
    row["floor"] = floor_value
    unit = row.get("unit", "ms")
    if floor_value > 0:
        row["ratio"] = row["median_ms"] / floor_value
        row["note"] = (f"floor {floor_value:.1f} {unit} (bare uvicorn + {_floor_stack()}, same run), ratio "
                       f"{row['ratio']:.1f}×; " + row.get("note", ""))
    else:
        row["note"] = f"floor {floor_value:.1f} {unit} (bare uvicorn + {_floor_stack()}, same run); " + row.get("note", "")
    return row


def _failed(names: list[str], exc: BaseException, target_ms=None, unit: str = "ms"):
    for name in names:
        yield {"name": name, "median_ms": None, "best_ms": None, "target_ms": target_ms, "unit": unit,
               "verdict": "FAIL", "note": f"not measured: {type(exc).__name__}: {exc}"}


ROOM_ROWS = ["room: player POST p95 during the flood", "room: /healthz failures during the flood",
             "room: fan-out to all 1,000 streams p95", "room: server peak RSS during the flood",
             "room: answers again after the flood stops"]
EVENING_ROWS = ["server RSS after a simulated 3-hour evening of 6 tables",
                "server RSS growth from hour 1 to hour 3 of the evening"]


def phases(server: Server, token: str, saturated: bool = True) -> dict:
    """The POST and fan-out phases against one running server (the real one or the floor): latencies
    and the server's CPU per write."""
    out = {"settled_s": server.settle()}
    # the first writes after the start: a match's first POSTs import and fill what every later one uses
    warm = post_latencies(server, token, per_client=2, pace=None)
    out["first_write_ms"] = max(warm)
    cpu0 = server.cpu_s()
    out["paced"] = post_latencies(server, token, per_client=SIZES["paced"], pace=(0.02, 0.1))
    out["cpu_per_write_s"] = (server.cpu_s() - cpu0) / max(1, len(out["paced"]))
    if saturated:
        out["saturated"] = post_latencies(server, token, per_client=SIZES["saturated"], pace=None)
    out["club"] = post_latencies(server, token, per_client=SIZES["club"], pace=CLUB_PACE)
    out["fan"] = fanout(server, token, posts=SIZES["fanout"])
    return out


def phase_rows(m: dict, floor: dict | None = None, pi_targets: bool = False, r_ratio: float | None = None):
    f = floor or {}
    paced, club, fan = m["paced"], m["club"], m["fan"]
    yield {"name": "event POST latency, 12 clients at once, paced (p50)", "key": "paced-p50",
           "median_ms": _pct(paced, 50), "best_ms": min(paced), "target_ms": None,
           "note": f"{len(paced)} POSTs, 20-100 ms between a client's writes; fsynced before the 201"}
    yield _with_floor({"name": "event POST latency, 12 clients at once, paced (p95)", "key": "paced-p95",
                       "median_ms": _pct(paced, 95), "best_ms": min(paced), "target_ms": 100 if pi_targets else 25,
                       "note": "the median column holds the p95"},
                      _pct(f["paced"], 95) if f else None)
    if "saturated" in m:
        saturated = m["saturated"]
        yield {"name": "event POST latency, 12 clients back-to-back (p50)", "key": "b2b-p50",
               "median_ms": _pct(saturated, 50), "best_ms": min(saturated), "target_ms": None,
               "note": f"{len(saturated)} POSTs, no pause: the worst case, far beyond a club evening"}
        yield {"name": "event POST latency, 12 clients back-to-back (p95)", "key": "b2b-p95",
               "median_ms": _pct(saturated, 95), "best_ms": min(saturated), "target_ms": None,
               "note": "the median column holds the p95"}
    yield _with_floor({"name": "event POST latency at a club's pace (12 clients, one write every 1-3 s each, p95)",
                       "key": "club-p95", "median_ms": _pct(club, 95), "best_ms": min(club),
                       "target_ms": 50 if pi_targets else 25,
                       "note": f"{len(club)} POSTs, p50 {_pct(club, 50):.1f} ms; the median column holds the p95"},
                      _pct(f["club"], 95) if f else None)
    cpu = m["cpu_per_write_s"] * 1000 * (r_ratio or 1)
    yield _with_floor({"name": "Pi CPU per write (the server's CPU over the paced POSTs)" if r_ratio else
                       "server CPU per write (over the paced POSTs)", "key": "cpu-write", "median_ms": cpu,
                       "best_ms": None, "target_ms": 8 if r_ratio else None,
                       "note": (f"this machine's CPU time × R = {r_ratio:.1f}; " if r_ratio else "")
                       + "user + system time of the server process over the paced phase, per POST; "
                       + (f"measured once the start's own work was done ({m['settled_s']:.1f} s after the "
                          f"first answer) and after 24 first writes (the slowest {m['first_write_ms']:.0f} ms)"
                          if "settled_s" in m else "")},
                      f["cpu_per_write_s"] * 1000 * (r_ratio or 1) if f else None)
    yield {"name": "fan-out: POST to all 12 SSE subscribers (p50)", "key": "fan12-p50", "median_ms": _pct(fan, 50),
           "best_ms": min(fan), "target_ms": None,
           "note": f"{len(fan)} deliveries: from sending the POST to the event read by each stream"}
    yield _with_floor({"name": "fan-out: POST to all 12 SSE subscribers (p95)", "key": "fan12-p95",
                       "median_ms": _pct(fan, 95), "best_ms": min(fan), "target_ms": 50,
                       "note": "the median column holds the p95"},
                      _pct(f["fan"], 95) if f else None)


START_NAME = "server: start to first /healthz 200 (`companion serve`)"
FIRST_NAME = "one player's writes in the first 30 s after a restart (one every 150 ms, p95 of the first 60)"


def first_writes(d: Path, token: str, budget=None, cfg=None, seconds: float = 30.0) -> dict:
    """A box started again over the data folder ``d`` (its database and compiled templates there, as after a
    power cut mid-evening): from its first answer of the app, one player writes every 150 ms for ``seconds``
    (after creating the match, the first write). Returns the latencies (ms) and the server's time to it."""
    server = Server(d, budget, cfg)
    try:
        c = Client(server.host, token)
        t0 = time.perf_counter()
        mid = _new_match(c, "first writes")
        out = [(time.perf_counter() - t0) * 1000]
        seq = 0
        while time.perf_counter() - t0 < (3.0 if TINY else seconds):
            time.sleep(0.15)
            started = time.perf_counter()
            status, body = c.call("POST", f"/api/matches/{mid}/events", {**_adjust(seq), "expected_seq": seq})
            if status != 201:
                raise RuntimeError(f"a write after the start: {status} {body}")
            seq += 1
            out.append((time.perf_counter() - started) * 1000)
        c.close()
        return {"ms": out, "app_ms": server.app_ms}
    finally:
        server.stop()


def first_writes_row(r: dict, pi: bool, where: str = "") -> dict:
    ms = r["ms"]
    first = ms[:60]
    later = ms[-60:]
    return {"name": FIRST_NAME, "key": "first-writes", "median_ms": _pct(first, 95), "best_ms": min(first),
            "target_ms": 50 if pi else 25,
            "note": f"{len(ms)} writes from the first answer of the app ({r['app_ms']:.0f} ms after the start); "
                    f"the slowest {max(first):.0f} ms; the last 60: p95 {_pct(later, 95):.1f} ms; the median column "
                    f"holds the p95" + (f"; {where}" if where else "")}


def report():
    from bench import pi

    cfg = pi.current()
    if cfg is not None:
        yield from report_pi(cfg)
        return
    try:
        app: list[float] = []
        starts = start_times(SIZES["starts"], app=app)
        yield {"name": START_NAME, "key": "start", "median_ms": statistics.median(starts), "best_ms": min(starts),
               "target_ms": 2000, "note": f"{len(starts)} starts: process start, imports, migrations, listening; "
                                          "the first start creates the database"}
        yield app_row(app, f"{len(app)} starts")
    except Exception as exc:
        yield from _failed([START_NAME], exc)
    d = Path(tempfile.mkdtemp(prefix="companion-bench-"))
    try:
        token = _token(d)
        server = Server(d)
        try:
            yield from phase_rows(phases(server, token))
        except Exception as exc:
            yield from _failed(["event POST latency / fan-out to 12 subscribers"], exc)
        finally:
            server.stop()
        try:
            yield first_writes_row(first_writes(d, token), pi=False)
        except Exception as exc:
            yield from _failed([FIRST_NAME], exc)
        # a fresh server for the room, so its RSS is the room's alone
        try:
            server = Server(d)
            try:
                yield from room_rows(room_figures(server, token))
            finally:
                server.stop()
        except Exception as exc:
            yield from _failed(ROOM_ROWS, exc)
        if TINY:
            return
        # a fresh server for the evening, so the RSS is the evening's alone
        try:
            server = Server(d)
            try:
                ev = evening(server, token, events_per_table=60 if SMALL else 540)
            finally:
                server.stop()
        except Exception as exc:
            yield from _failed(EVENING_ROWS, exc, 80, "MB")
            return
        yield from evening_rows(ev)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def evening_rows(ev: dict):
    rss = ev["rss"]
    slow = ", ".join(f"{k} {v:.0f} ms" for k, v in sorted(ev["slowest"].items(), key=lambda kv: -kv[1])[:3])
    fails = (f"; {len(ev['failed'])} requests failed ({', '.join(sorted(set(ev['failed'])))[:200]})"
             if ev["failed"] else "; no request failed")
    if not ev["finished"]:
        note = (f"not finished within {EVENING_DEADLINE:.0f} s: {len(rss)} of {ev['halves']} half hours, "
                f"{ev['events']} events{fails}; slowest: {slow}")
        yield {"name": EVENING_ROWS[0], "median_ms": rss[-1] if rss else None, "best_ms": None,
               "target_ms": 80, "unit": "MB", "verdict": "FAIL", "note": note}
        yield {"name": EVENING_ROWS[1], "median_ms": None, "best_ms": None, "target_ms": 1, "unit": "MB",
               "verdict": "SKIP", "note": "the evening did not reach hour 3 (the row above)"}
        return
    yield {"name": EVENING_ROWS[0], "median_ms": rss[-1], "best_ms": None, "target_ms": 80, "unit": "MB",
           "note": f"{ev['events']} events, 12 streams reconnecting each half hour; RSS per half hour: "
                   + ", ".join(f"{v:.1f}" for v in rss) + f"{fails}; slowest: {slow}"}
    growth = rss[-1] - rss[1]  # hour 1 -> hour 3
    per_event_kb = growth * 1024 / max(1, ev["events"] * 4 / 6)
    yield {"name": EVENING_ROWS[1], "median_ms": growth, "best_ms": None, "target_ms": 1, "unit": "MB",
           "note": f"target: flat (under 1 MB of allocator noise); about {per_event_kb:.1f} KB per event "
                   "stored in those two hours (see the notes below)"}


PI_ROWS = [START_NAME, FIRST_NAME, "event POST latency, 12 clients at once, paced (p95)",
           "event POST latency at a club's pace (12 clients, one write every 1-3 s each, p95)",
           "Pi CPU per write (the server's CPU over the paced POSTs)", "fan-out: POST to all 12 SSE subscribers (p95)",
           *ROOM_ROWS]


def report_pi(cfg: dict):
    """The same phases with the server alone in the Pi's budget, then the floor (a bare uvicorn app on the
    server's parser) in the same budget; each server row says the floor's figure and the ratio. No
    back-to-back phase (no target) and no evening (its rows are memory, read in the x86 run)."""
    from bench import pi

    try:
        budget = pi.budget_for(cfg)
    except pi.Unavailable as exc:
        for name in PI_ROWS:
            yield {"name": name, "median_ms": None, "verdict": "SKIP", "note": f"not measured: {exc}"}
        return
    r = cfg.get("r") or 12.0
    where = f"server alone in {budget.describe()}" + (
        f", fsync +{cfg['fsync_ms']:g} ms" if cfg.get("fsync_lib") else "")
    d = Path(tempfile.mkdtemp(prefix="companion-bench-"))
    try:
        try:
            app: list[float] = []
            starts = start_times(SIZES["starts"], budget, cfg, app=app)
            floor_starts = start_times(SIZES["starts"], budget, cfg, kind=Floor)
            yield _with_floor({"name": START_NAME, "key": "start", "median_ms": statistics.median(starts),
                               "best_ms": min(starts), "target_ms": 2000,
                               "note": f"{len(starts)} starts; {where}"}, statistics.median(floor_starts))
            yield app_row(app, f"{len(app)} starts; {where}")
        except Exception as exc:
            yield from _failed([START_NAME], exc)
        token = _token(d)
        measured = {}
        try:
            for kind in (Server, Floor):
                s = kind(d, budget, cfg)
                try:
                    measured[kind] = phases(s, token, saturated=False)
                finally:
                    s.stop()
            yield from phase_rows(measured[Server], measured[Floor], pi_targets=True, r_ratio=r)
        except Exception as exc:
            yield from _failed(["event POST latency / fan-out to 12 subscribers "
                                f"({'the floor' if Server in measured else 'the server'})"], exc)
        try:
            yield first_writes_row(first_writes(d, token, budget, cfg), pi=True, where=where)
        except Exception as exc:
            yield from _failed([FIRST_NAME], exc)
        rooms = {}
        try:
            for kind in (Server, Floor):
                s = kind(d, budget, cfg)
                try:
                    rooms[kind] = room_figures(s, token)
                    rooms[kind]["cpu_per_write_s"] = measured.get(kind, {}).get("cpu_per_write_s")
                finally:
                    s.stop()
            yield from room_rows(rooms[Server], rooms[Floor], pi_targets=True, r_ratio=r,
                                 share=cfg["quota_us"] / cfg["period_us"])
        except Exception as exc:
            yield from _failed([f"{name} ({'the floor' if Server in rooms else 'the server'})" for name in ROOM_ROWS],
                               exc)
    finally:
        budget.close()
        shutil.rmtree(d, ignore_errors=True)
