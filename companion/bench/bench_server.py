"""The real server (`companion serve` on 127.0.0.1, a subprocess: uvicorn, streams on its event loop):

- start to the first `/healthz` 200 (process start, imports, migrations, listening);
- event POST latency with 12 concurrent clients, each writing to its own match with `expected_seq`
  (paced: 20-100 ms between a client's writes, and saturated: back-to-back);
- fan-out: one POST, the time until each of 12 SSE subscribers of that match has the event;
- resident memory (VmRSS of the server process) after a simulated 3-hour club evening of 6 tables
  (compressed in time: ~3,200 events, 12 live streams that reconnect now and then, page polls, undos),
  and its growth between the end of the first hour and the end of the evening.

- a tournament room (``companion/bench/room.py``): 1,000 open streams of one match, 200 connections
  sending their request head a byte a second and 200 sending nothing (all from 127.0.0.1, reopened when
  the server closes them) while 12 players write: player POST p95, /healthz, fan-out to all 1,000
  streams, peak RSS, and how soon the service answers again once the flood stops.

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _token(data_dir: Path) -> str:
    from companion.storage import Store
    from companion.access import Access

    store = Store(data_dir / "companion.db")
    try:
        return Access(store).create_api_token("organiser", label="benchmark")[0]
    finally:
        store.close()


class Server:
    def __init__(self, data_dir: Path):
        self.port = _free_port()
        env = dict(os.environ)  # the default SSE heartbeat (10 s)
        env.pop("COMPANION_SSE_HEARTBEAT", None)
        env.pop("COMPANION_DEBUG", None)
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "companion", "serve", "--host", HOST, "--port", str(self.port), "--gpio", "off",
             "--no-qr", "--data-dir", str(data_dir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        self.host = f"{HOST}:{self.port}"
        self.ready_ms = self._wait_healthz()

    def _wait_healthz(self) -> float:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("the server exited at start")
            try:
                conn = http.client.HTTPConnection(self.host, timeout=2)
                conn.request("GET", "/healthz")
                r = conn.getresponse()
                r.read()
                conn.close()
                if r.status == 200:
                    return (time.perf_counter() - self.t0) * 1000
            except OSError:
                pass
            time.sleep(0.005)
        raise RuntimeError("no /healthz within 30 s")

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


class Client:
    def __init__(self, host: str, token: str):
        self.conn = http.client.HTTPConnection(host, timeout=30)
        self.h = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def call(self, method, path, body=None):
        try:
            self.conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=self.h)
            r = self.conn.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # the server closed this keep-alive connection while it was idle (after 5 s): a browser opens
            # a new one and sends again, and so does this client (the request never reached the server)
            self.conn.close()
            self.conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=self.h)
            r = self.conn.getresponse()
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
def start_times(runs: int = 5) -> list[float]:
    out = []
    with tempfile.TemporaryDirectory(prefix="companion-bench-") as d:
        for _ in range(runs):  # the first run creates the database (migrations); later ones open it
            s = Server(Path(d))
            out.append(s.ready_ms)
            s.stop()
    return out


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


def evening(server: Server, token: str, events_per_table: int = 540) -> dict:
    """3 hours of 6 tables, compressed: an event per table every ~20 s of evening (540 each), 2 live
    streams per table that reconnect every ~30 minutes of evening (table by table), a page poll every 5
    events, an undo every 40. RSS is read after each simulated half hour."""
    c = Client(server.host, token)
    matches = [_new_match(c, f"Tavolo {i + 1}") for i in range(TABLES)]
    c.close()
    subs = []

    def connect_streams():
        nonlocal subs
        for s in subs:
            s.close()
        subs = [Subscriber(server.host, m) for m in matches for _ in range(2)]
        for s in subs:
            s.start()
        for s in subs:
            s.ready.wait(timeout=30)

    def reconnect_table(t):
        for k in (2 * t, 2 * t + 1):
            subs[k].close()
            subs[k] = Subscriber(server.host, matches[t])
            subs[k].start()
            subs[k].ready.wait(timeout=30)

    connect_streams()
    rss = []
    seqs = {m: 0 for m in matches}
    clients = [Client(server.host, token) for _ in matches]
    halves = 6
    per_half = events_per_table // halves
    stop_at = time.monotonic() + DEADLINE * 3
    i = 0
    for half in range(halves):
        for step in range(per_half):
            if step % (per_half // TABLES) == 0 and step // (per_half // TABLES) < TABLES:
                # phones sleep and wake: each half hour every table's two streams reconnect, one table
                # at a time (a dead stream holds its server thread until its next event or heartbeat)
                reconnect_table(step // (per_half // TABLES))
            if time.monotonic() > stop_at:
                raise RuntimeError("the simulated evening took too long")
            for t, m in enumerate(matches):
                cl = clients[t]
                if i % 40 == 39:
                    status, resp = cl.call("POST", f"/api/matches/{m}/undo", {"expected_seq": seqs[m]})
                else:
                    status, resp = cl.call("POST", f"/api/matches/{m}/events", dict(_adjust(i), expected_seq=seqs[m]))
                if status != 201:
                    raise RuntimeError(f"evening write failed: {status} {resp}")
                seqs[m] = resp["event"]["seq"]
                if i % 5 == 0:
                    cl.call("GET", f"/api/matches/{m}")
            if i % 10 == 0:
                clients[0].call("GET", "/api/matches")
                clients[0].call("GET", "/api/tournament")
            i += 1
        rss.append(server.rss_mb())
    for s in subs:
        s.close()
    for cl in clients:
        cl.close()
    return {"rss": rss, "events": sum(seqs.values())}


ROOM = {"streams": 1000, "slow": 200, "idle": 200, "players": CLIENTS, "seconds": 30.0}


def room_rows(server: Server, token: str) -> list[dict]:
    from companion.bench import room

    # a control first: the same players with no flood, so the figures below can be read against the
    # machine's load at the time (the CPU is shared)
    quiet = room.flood(server.host, server.proc.pid, token, streams=1, slow=0, idle=0,
                       players=ROOM["players"], seconds=10.0)
    r = room.flood(server.host, server.proc.pid, token, **ROOM)
    flood = (f"{r['streams_ready']}/{r['streams']} streams open (in {r['open_s']:.1f} s), {r['slow']} slow-header + "
             f"{r['idle']} idle connections ({r['nuisance_reopened']} closed by the server and reopened), "
             f"{ROOM['players']} players writing for {ROOM['seconds']:.0f} s")
    post, fan, health = r["post_ms"], r["fan_ms"], r["health_ms"]
    return [
        {"name": "room: player POST p95 during the flood", "median_ms": room.pct(post, 95),
         "best_ms": min(post) if post else None, "target_ms": 100,
         "note": f"{len(post)} POSTs ({r['post_fail']} failed, p50 {room.pct(post, 50):.1f} ms); {flood}; "
                 f"server CPU {r['server_cpu'] * 100:.0f}% of a core. Control, the same players without the "
                 f"flood just before: p95 {room.pct(quiet['post_ms'], 95):.1f} ms"},
        {"name": "room: /healthz failures during the flood", "median_ms": float(r["health_fail"]),
         "best_ms": None, "target_ms": 0, "unit": "failed",
         "note": f"{len(health)} answered (2 s timeout), p95 {room.pct(health, 95):.1f} ms, "
                 f"slowest {max(health) if health else float('nan'):.1f} ms"},
        {"name": "room: fan-out to all 1,000 streams p95", "median_ms": room.pct(fan, 95),
         "best_ms": min(fan) if fan else None, "target_ms": 500,
         "note": f"{len(fan)} deliveries of {r['fan_events']} events ({r['fan_missing']} never arrived), "
                 f"p50 {room.pct(fan, 50):.1f} ms: from sending the POST to the event read on each stream"},
        {"name": "room: server peak RSS during the flood", "median_ms": r["rss_peak"], "best_ms": None,
         "target_ms": 150, "unit": "MB", "note": "VmRSS, read ten times a second"},
        {"name": "room: answers again after the flood stops", "median_ms":
            r["recovered_ms"] if r["recovered_ms"] is not None else float("inf"),
         "best_ms": None, "target_ms": 1000,
         "note": "every flood socket closed at once, then the time to a /healthz 200 and a POST 201"},
    ]


def report() -> list[dict]:
    rows = []
    starts = start_times()
    rows.append({"name": "server: start to first /healthz 200 (`companion serve`, 5 starts)",
                 "median_ms": statistics.median(starts), "best_ms": min(starts), "target_ms": 2000,
                 "note": "process start, imports, migrations, listening; the first start creates the database"})
    d = Path(tempfile.mkdtemp(prefix="companion-bench-"))
    try:
        token = _token(d)
        server = Server(d)
        try:
            paced = post_latencies(server, token, per_client=60, pace=(0.02, 0.1))
            saturated = post_latencies(server, token, per_client=60, pace=None)
            fan = fanout(server, token)
            rows += [
                {"name": "event POST latency, 12 clients at once, paced (p50)", "median_ms": _pct(paced, 50),
                 "best_ms": min(paced), "target_ms": None,
                 "note": f"{len(paced)} POSTs, 20-100 ms between a client's writes; fsynced before the 201"},
                {"name": "event POST latency, 12 clients at once, paced (p95)", "median_ms": _pct(paced, 95),
                 "best_ms": min(paced), "target_ms": 25, "note": "the median column holds the p95"},
                {"name": "event POST latency, 12 clients back-to-back (p50)", "median_ms": _pct(saturated, 50),
                 "best_ms": min(saturated), "target_ms": None,
                 "note": f"{len(saturated)} POSTs, no pause: the worst case, far beyond a club evening"},
                {"name": "event POST latency, 12 clients back-to-back (p95)", "median_ms": _pct(saturated, 95),
                 "best_ms": min(saturated), "target_ms": None, "note": "the median column holds the p95"},
                {"name": "fan-out: POST to all 12 SSE subscribers (p50)", "median_ms": _pct(fan, 50),
                 "best_ms": min(fan), "target_ms": None,
                 "note": f"{len(fan)} deliveries: from sending the POST to the event read by each stream"},
                {"name": "fan-out: POST to all 12 SSE subscribers (p95)", "median_ms": _pct(fan, 95),
                 "best_ms": min(fan), "target_ms": 50, "note": "the median column holds the p95"},
            ]
        finally:
            server.stop()
        # a fresh server for the room, so its RSS is the room's alone
        server = Server(d)
        try:
            rows += room_rows(server, token)
        finally:
            server.stop()
        # a fresh server for the evening, so the RSS is the evening's alone
        server = Server(d)
        try:
            ev = evening(server, token)
        except RuntimeError as exc:  # a report, not a test: say it, keep the other rows
            rows.append({"name": "server RSS after a simulated 3-hour evening of 6 tables",
                         "median_ms": float("inf"), "best_ms": None, "target_ms": 80, "unit": "MB",
                         "note": f"not measured: {exc} (the machine's load at the time)"})
            return rows
        finally:
            server.stop()
        rss = ev["rss"]
        rows.append({"name": "server RSS after a simulated 3-hour evening of 6 tables", "median_ms": rss[-1],
                     "best_ms": None, "target_ms": 80, "unit": "MB",
                     "note": f"{ev['events']} events, 12 streams reconnecting each half hour; RSS per half hour: "
                             + ", ".join(f"{v:.1f}" for v in rss)})
        growth = rss[-1] - rss[1]
        per_event_kb = growth * 1024 / max(1, ev["events"] * 4 / 6)
        rows.append({"name": "server RSS growth from hour 1 to hour 3 of the evening", "median_ms": growth,
                     "best_ms": None, "target_ms": 1, "unit": "MB",
                     "note": f"target: flat (under 1 MB of allocator noise); about {per_event_kb:.1f} KB per event "
                             "stored in those two hours (see the notes below)"})
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return rows
