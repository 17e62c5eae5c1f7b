"""A tournament room against a running server, from one address (127.0.0.1): many open live streams of
one match, connections that send their request head a byte a second (reopened when the server closes
them), connections that send nothing (idem), while 12 players write to their own matches (player 0's
match is the one every stream shows) and a monitor asks ``/healthz`` ten times a second.

``flood(host, pid, token, ...)`` returns the figures: POST latencies, fan-out latencies (from sending
a POST to the event read on each stream), /healthz latencies and failures, the server's peak RSS,
how many streams got their snapshot, and the time for the service to answer again (a /healthz and a
POST) after the flood stops. Every loop is bounded in count and in time; traffic goes to 127.0.0.1
only. Used by ``bench_server`` (the room-scale rows of ``make bench``) and ``server_candidates``.
"""

from __future__ import annotations

import http.client
import json
import random
import re
import selectors
import socket
import threading
import time
from pathlib import Path

PLAYERS = ["Ada", "Bo", "Cy", "Di"]
EVENT_ID = re.compile(rb"id: (\d+)\nevent: event\n")


def raise_open_files_limit() -> None:
    try:
        import resource
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 65536
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    k = (len(values) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


class Client:
    def __init__(self, host: str, token: str | None, timeout: float = 5.0):
        self.host, self.timeout = host, timeout
        self.conn = http.client.HTTPConnection(host, timeout=timeout)
        self.h = {"Content-Type": "application/json"}
        if token:
            self.h["Authorization"] = f"Bearer {token}"

    def call(self, method, path, body=None):
        try:
            self.conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=self.h)
            r = self.conn.getresponse()
            data = r.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = http.client.HTTPConnection(self.host, timeout=self.timeout)
            raise
        return r.status, (json.loads(data) if data and data[:1] in b"{[" else None)

    def close(self):
        self.conn.close()


def new_match(c: Client, label: str) -> str:
    status, body = c.call("POST", "/api/matches", {"game": "richelieu", "players": PLAYERS, "label": label})
    if status != 201:
        raise RuntimeError(f"create match: {status} {body}")
    return body["id"]


def adjust(i: int, seq: int) -> dict:
    return {"type": "track.adjust", "data": {"player": PLAYERS[i % 4], "track": "money", "delta": 1 + i % 5},
            "expected_seq": seq}


class Streams(threading.Thread):
    """``n`` raw SSE readers of one match on one selector thread: when each event id arrives."""

    def __init__(self, host: str, match_id: str, n: int, deadline: float):
        super().__init__(daemon=True)
        self.host, self.match_id, self.n, self.deadline = host, match_id, n, deadline
        self.port = int(host.rsplit(":", 1)[1])
        self.sel = selectors.DefaultSelector()
        self.arrived: list[dict[int, float]] = [dict() for _ in range(n)]
        self.ready = [False] * n
        self.closed = [False] * n
        self.socks: list[socket.socket] = []
        self.stop = threading.Event()
        self.refused = 0

    def open(self) -> None:
        req = (f"GET /api/matches/{self.match_id}/stream HTTP/1.1\r\nHost: {self.host}\r\n"
               "Accept: text/event-stream\r\n\r\n").encode()
        for i in range(self.n):
            s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
            s.sendall(req)
            s.setblocking(False)
            self.socks.append(s)
            self.sel.register(s, selectors.EVENT_READ, (i, [b""]))

    def run(self) -> None:
        while not self.stop.is_set() and time.monotonic() < self.deadline:
            for key, _ in self.sel.select(timeout=0.2):
                i, buf = key.data
                try:
                    chunk = key.fileobj.recv(65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    chunk = b""
                now = time.perf_counter()
                if not chunk:
                    self.closed[i] = True
                    self.sel.unregister(key.fileobj)
                    continue
                data = buf[0] + chunk
                if not self.ready[i]:
                    if data.startswith(b"HTTP/1.1 429"):
                        self.refused += 1
                    if b"event: snapshot" in data:
                        self.ready[i] = True
                for m in EVENT_ID.finditer(data):
                    self.arrived[i].setdefault(int(m.group(1)), now)
                buf[0] = data[-64:]

    def count_ready(self) -> int:
        return sum(self.ready)

    def close(self) -> None:
        self.stop.set()
        self.join(timeout=5)
        for s in self.socks:
            try:
                s.close()
            except OSError:
                pass
        self.sel.close()


class Nuisance(threading.Thread):
    """``slow`` connections that send a request head one byte a second and ``idle`` ones that send
    nothing; a connection the server closes is opened again (the flood never lets up)."""

    HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 4000 + b"\r\n\r\n"

    def __init__(self, port: int, slow: int, idle: int, deadline: float):
        super().__init__(daemon=True)
        self.port, self.deadline = port, deadline
        self.slow = [None] * slow
        self.idle = [None] * idle
        self.pos = [0] * slow
        self.stop = threading.Event()
        self.reopened = 0

    def _connect(self):
        try:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=2)
            s.setblocking(False)
            return s
        except OSError:
            return None

    @staticmethod
    def _dead(s) -> bool:
        if s is None:
            return True
        try:
            return s.recv(4096) == b""
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True

    def run(self) -> None:
        for group in (self.slow, self.idle):
            for k in range(len(group)):
                group[k] = self._connect()
        while not self.stop.is_set() and time.monotonic() < self.deadline:
            for group, sends in ((self.slow, True), (self.idle, False)):
                for k, s in enumerate(group):
                    if self._dead(s):
                        if s is not None:
                            s.close()
                            self.reopened += 1
                        group[k] = s = self._connect()
                        if sends:
                            self.pos[k] = 0
                        continue
                    if sends:
                        try:
                            s.send(self.HEAD[self.pos[k]:self.pos[k] + 1])
                            self.pos[k] = (self.pos[k] + 1) % len(self.HEAD)
                        except OSError:
                            pass
            self.stop.wait(1.0)

    def close(self) -> None:
        self.stop.set()
        self.join(timeout=5)
        for s in self.slow + self.idle:
            if s is not None:
                s.close()


def flood(host: str, pid: int, token: str, streams: int = 1000, slow: int = 200, idle: int = 200,
          players: int = 12, seconds: float = 20.0, open_timeout: float = 60.0) -> dict:
    raise_open_files_limit()
    port = int(host.rsplit(":", 1)[1])
    c = Client(host, token, timeout=10)
    matches = [new_match(c, f"Tavolo {i + 1}") for i in range(players)]
    c.close()
    deadline = time.monotonic() + open_timeout + seconds + 60
    readers = Streams(host, matches[0], streams, deadline)
    t0 = time.monotonic()
    readers.open()
    readers.start()
    while readers.count_ready() < streams and time.monotonic() - t0 < open_timeout:
        time.sleep(0.05)
    open_s = time.monotonic() - t0
    nuisance = Nuisance(port, slow, idle, deadline)
    nuisance.start()
    time.sleep(2.0)  # the nuisance connections are all open

    post_ms: list[float] = []
    post_fail = [0]
    sent: dict[int, float] = {}
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def player(n: int) -> None:
        rng = random.Random(n)
        cl = Client(host, token, timeout=5)
        seq = 0
        i = 0
        while time.monotonic() < stop_at:
            t = time.perf_counter()
            try:
                status, body = cl.call("POST", f"/api/matches/{matches[n]}/events", adjust(i, seq))
            except (OSError, http.client.HTTPException):
                status, body = None, None
            ms = (time.perf_counter() - t) * 1000
            with lock:
                if status == 201:
                    post_ms.append(ms)
                    if n == 0:
                        sent[body["event"]["seq"]] = t
                else:
                    post_fail[0] += 1
            if status == 201:
                seq = body["event"]["seq"]
            elif status == 409 and body:
                seq = body.get("last_seq", seq)
            i += 1
            # a busy room: player 0 (the match on every screen) writes every 0.2-0.4 s, the others 0.1-0.5 s
            time.sleep(rng.uniform(0.2, 0.4) if n == 0 else rng.uniform(0.1, 0.5))
        cl.close()

    health_ms: list[float] = []
    health_fail = [0]
    peak = [rss_mb(pid)]

    def monitor() -> None:
        cl = Client(host, None, timeout=2)
        while time.monotonic() < stop_at:
            t = time.perf_counter()
            try:
                status, _ = cl.call("GET", "/healthz")
            except (OSError, http.client.HTTPException):
                status = None
            if status == 200:
                health_ms.append((time.perf_counter() - t) * 1000)
            else:
                health_fail[0] += 1
            peak[0] = max(peak[0], rss_mb(pid))
            time.sleep(0.1)
        cl.close()

    cpu0, wall0 = cpu_seconds(pid), time.monotonic()
    threads = [threading.Thread(target=player, args=(n,), daemon=True) for n in range(players)]
    threads.append(threading.Thread(target=monitor, daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 30)
    cpu = (cpu_seconds(pid) - cpu0) / max(1e-9, time.monotonic() - wall0)
    time.sleep(1.0)  # the last events reach the streams
    peak[0] = max(peak[0], rss_mb(pid))

    fan = []
    missing = 0
    ready = [i for i in range(streams) if readers.ready[i]]
    for seq, t in sent.items():
        for i in ready:
            at = readers.arrived[i].get(seq)
            if at is None:
                missing += 1
            else:
                fan.append((at - t) * 1000)
    streams_ready = readers.count_ready()
    refused = readers.refused
    slow_reopened = nuisance.reopened

    # the flood stops at once: how soon does the service answer again?
    readers.close()
    nuisance.close()
    t = time.perf_counter()
    recovered = None
    seq = max(sent) if sent else 0
    while time.perf_counter() - t < 30:
        try:
            cl = Client(host, token, timeout=2)
            ok = cl.call("GET", "/healthz")[0] == 200 and \
                cl.call("POST", f"/api/matches/{matches[0]}/events", adjust(0, seq))[0] == 201
            cl.close()
        except (OSError, http.client.HTTPException):
            ok = False
        if ok:
            recovered = (time.perf_counter() - t) * 1000
            break
        time.sleep(0.05)
    return {"post_ms": post_ms, "post_fail": post_fail[0], "fan_ms": fan, "fan_missing": missing,
            "fan_events": len(sent), "health_ms": health_ms, "health_fail": health_fail[0],
            "rss_peak": peak[0], "streams": streams, "streams_ready": streams_ready, "refused": refused,
            "open_s": open_s, "server_cpu": cpu, "recovered_ms": recovered, "nuisance_reopened": slow_reopened,
            "slow": slow, "idle": idle}
