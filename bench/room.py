"""A tournament room against a running server: many open live streams of one match (spread over
several loopback addresses, as a room's phones come from many), connections from one address that send
their request head a byte a second or nothing at all (reopened when the server closes them), while 12
players write to their own matches (player 0's match is the one every stream shows) and a monitor asks
``/healthz`` ten times a second.

The streams and the nuisance connections are read and written by **another process** (one thread, one
selector): the players' latencies are then the server's, not the time this process's threads waited for
the GIL behind 1,000 socket reads. The load process stamps each event's arrival with the system's
monotonic clock (``time.monotonic``, CLOCK_MONOTONIC on Linux: the same clock in every process), so the
fan-out is measured from the player's POST to the event read on each stream.

``flood(host, pid, token, ...)`` returns the figures: POST latencies, fan-out latencies, /healthz
latencies and failures, the server's peak RSS and CPU, the load process's CPU, how many streams got
their snapshot, and the time for the service to answer again (a /healthz and a POST) after the flood
stops. Every loop is bounded in count and in time; traffic goes to loopback addresses only
(127.0.0.0/8 all reach ``lo`` on Linux). Used by ``bench_server`` (the room-scale rows of ``make
bench``) and ``server_candidates``.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import selectors
import socket
import threading
import time
from pathlib import Path

PLAYERS = ["Ada", "Bo", "Cy", "Di"]
EVENT_ID = re.compile(rb"id: (\d+)\nevent: event\n")
# where the room's connections come from: the streams from STREAM_ADDRESSES (a room of phones), the
# slow-header and idle connections from one guest's address, the players and the monitor from 127.0.0.1
STREAM_ADDRESSES = [f"127.0.0.{i}" for i in range(2, 12)]
NUISANCE_ADDRESS = "127.0.0.99"
# the idle ones from a second address: one address holds at most 250 connections as shipped (docs/limits.md)
IDLE_ADDRESS = "127.0.0.98"


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


# -- the load process ---------------------------------------------------------------------------------
HEAD = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 4000 + b"\r\n\r\n"


def _connect(port: int, source: str, timeout: float = 2.0):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0))
        s.setblocking(False)
        return s
    except OSError:
        return None


def _dead(s) -> bool:
    if s is None:
        return True
    try:
        return s.recv(4096) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True


class _Lines:
    """The load process's end of the pipe to ``flood``: one JSON document a line each way."""

    def __init__(self):
        import sys

        self.inp, self.out = sys.stdin.buffer, sys.stdout
        os.set_blocking(self.inp.fileno(), False)
        self.buf = b""

    def poll(self) -> bool:
        if b"\n" not in self.buf:
            try:
                chunk = os.read(self.inp.fileno(), 4096)
            except BlockingIOError:
                chunk = b""
            self.buf += chunk
        return b"\n" in self.buf

    def recv(self):
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def send(self, doc) -> None:
        self.out.write(json.dumps(doc) + "\n")
        self.out.flush()

    def close(self) -> None:
        self.out.flush()


def _load(conn, host: str, match_id: str, streams: int, addresses: list[str], slow: int, idle: int,
          nuisance_address: str, deadline: float) -> None:
    """In the load process: open ``streams`` streams of ``match_id`` (round-robin over ``addresses``),
    read them on one selector; on "nuisance", open the slow and idle connections (from
    ``nuisance_address``) and keep them going; answer "status"; on "stop", close every socket at once,
    say when ("closed", t), then send the figures. Gives up at ``deadline`` (monotonic)."""
    raise_open_files_limit()
    cpu0 = os.times()
    port = int(host.rsplit(":", 1)[1])
    sel = selectors.DefaultSelector()
    arrived: list[dict[int, float]] = [dict() for _ in range(streams)]
    ready = [False] * streams
    refused = 0
    socks = []
    req = (f"GET /api/matches/{match_id}/stream HTTP/1.1\r\nHost: {host}\r\n"
           "Accept: text/event-stream\r\n\r\n").encode()
    t_open = time.monotonic()
    for i in range(streams):
        s = socket.create_connection(("127.0.0.1", port), timeout=10,
                                     source_address=(addresses[i % len(addresses)], 0))
        s.sendall(req)
        s.setblocking(False)
        socks.append(s)
        sel.register(s, selectors.EVENT_READ, (i, [b""]))
    all_ready_s = None
    slow_socks: list = []
    idle_socks: list = []
    pos: list[int] = []
    reopened = 0
    next_nuisance = None
    while time.monotonic() < deadline:
        events = sel.select(timeout=0.1)
        now = time.monotonic()  # one stamp for the batch: the data was there when select returned
        for key, _ in events:
            i, buf = key.data
            try:
                chunk = key.fileobj.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                chunk = b""
            if not chunk:
                sel.unregister(key.fileobj)
                continue
            data = buf[0] + chunk
            if not ready[i]:
                if data.startswith(b"HTTP/1.1 429"):
                    refused += 1
                if b"event: snapshot" in data:
                    ready[i] = True
                    if all_ready_s is None and all(ready):
                        all_ready_s = now - t_open
            mine = arrived[i]
            for m in EVENT_ID.finditer(data):
                mine.setdefault(int(m.group(1)), now)
            buf[0] = data[-64:]
        if next_nuisance is not None and now >= next_nuisance:
            next_nuisance = now + 1.0
            for k, s in enumerate(slow_socks):
                if _dead(s):
                    if s is not None:
                        s.close()
                        reopened += 1
                    slow_socks[k] = _connect(port, nuisance_address)
                    pos[k] = 0
                    continue
                try:
                    s.send(HEAD[pos[k]:pos[k] + 1])
                    pos[k] = (pos[k] + 1) % len(HEAD)
                except OSError:
                    pass
            for k, s in enumerate(idle_socks):
                if _dead(s):
                    if s is not None:
                        s.close()
                        reopened += 1
                    idle_socks[k] = _connect(port, IDLE_ADDRESS)
        while conn.poll():
            cmd = conn.recv()
            if cmd == "status":
                conn.send({"ready": sum(ready), "refused": refused, "open_s": all_ready_s})
            elif cmd == "nuisance":
                slow_socks = [_connect(port, nuisance_address) for _ in range(slow)]
                idle_socks = [_connect(port, IDLE_ADDRESS) for _ in range(idle)]
                pos = [0] * slow
                next_nuisance = time.monotonic() + 1.0
                conn.send({"nuisance": sum(s is not None for s in slow_socks + idle_socks)})
            elif cmd == "stop":
                deadline = 0
    for s in socks + slow_socks + idle_socks:  # the flood stops at once
        if s is not None:
            s.close()
    closed_at = time.monotonic()
    conn.send(["closed", closed_at])
    cpu1 = os.times()
    conn.send({"arrived": [list(arrived[i].items()) for i in range(streams) if ready[i]], "ready": sum(ready),
               "refused": refused, "open_s": all_ready_s, "reopened": reopened,
               "cpu_s": (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system)})
    conn.close()


class _Parent:
    """``flood``'s end of the pipe to the load process."""

    def __init__(self, proc):
        self.proc = proc
        self.sel = selectors.DefaultSelector()
        self.sel.register(proc.stdout, selectors.EVENT_READ)
        self.buf = b""

    def send(self, cmd) -> None:
        self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
        self.proc.stdin.flush()

    def poll(self, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0 or not self.sel.select(timeout=left):
                return False
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                return False
            self.buf += chunk
        return True

    def recv(self):
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def close(self) -> None:
        self.sel.close()
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass


def flood(host: str, pid: int, token: str, streams: int = 1000, slow: int = 200, idle: int = 200,
          players: int = 12, seconds: float = 20.0, open_timeout: float = 60.0, settle: float = 1.0,
          addresses: list[str] | None = None, nuisance_address: str = NUISANCE_ADDRESS) -> dict:
    raise_open_files_limit()
    addresses = addresses or STREAM_ADDRESSES
    c = Client(host, token, timeout=10)
    matches = [new_match(c, f"Tavolo {i + 1}") for i in range(players)]
    c.close()
    budget = open_timeout + seconds + 60
    import subprocess
    import sys

    args = {"host": host, "match_id": matches[0], "streams": streams, "addresses": addresses, "slow": slow,
            "idle": idle, "nuisance_address": nuisance_address, "deadline": time.monotonic() + budget}
    load = subprocess.Popen([sys.executable, "-m", "bench.room", json.dumps(args)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    load_pid = load.pid
    parent = _Parent(load)

    def ask(cmd, timeout=10.0):
        parent.send(cmd)
        if not parent.poll(timeout):
            raise RuntimeError(f"the load process did not answer {cmd!r}")
        return parent.recv()

    try:
        t0 = time.monotonic()
        status = {"ready": 0}
        while time.monotonic() - t0 < open_timeout:
            status = ask("status")
            if status["ready"] >= streams or load.poll() is not None:
                break
            time.sleep(0.1)
        open_s = time.monotonic() - t0
        ask("nuisance", timeout=30)
        time.sleep(2.0 * settle)  # the nuisance connections are all open and sending
    except BaseException:
        load.kill()
        load.wait()
        raise

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
            t = time.monotonic()
            try:
                status, body = cl.call("POST", f"/api/matches/{matches[n]}/events", adjust(i, seq))
            except (OSError, http.client.HTTPException):
                status, body = None, None
            ms = (time.monotonic() - t) * 1000
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
            t = time.monotonic()
            try:
                status, _ = cl.call("GET", "/healthz")
            except (OSError, http.client.HTTPException):
                status = None
            if status == 200:
                health_ms.append((time.monotonic() - t) * 1000)
            else:
                health_fail[0] += 1
            peak[0] = max(peak[0], rss_mb(pid))
            time.sleep(0.1)
        cl.close()

    load0 = os.getloadavg()[0]
    cpu0, wall0 = cpu_seconds(pid), time.monotonic()
    try:
        load_cpu0 = cpu_seconds(load_pid)
    except OSError:
        load_cpu0 = 0.0
    threads = [threading.Thread(target=player, args=(n,), daemon=True) for n in range(players)]
    threads.append(threading.Thread(target=monitor, daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 30)
    wall = max(1e-9, time.monotonic() - wall0)
    cpu = (cpu_seconds(pid) - cpu0) / wall
    try:
        load_cpu = (cpu_seconds(load_pid) - load_cpu0) / wall
    except OSError:
        load_cpu = float("nan")
    time.sleep(1.0 * settle)  # the last events reach the streams
    peak[0] = max(peak[0], rss_mb(pid))

    # the flood stops at once: how soon does the service answer again?
    parent.send("stop")
    closed = parent.recv() if parent.poll(30) else ["closed", time.monotonic()]
    t = closed[1]
    recovered = None
    seq = max(sent) if sent else 0
    while time.monotonic() - t < 30:
        try:
            cl = Client(host, token, timeout=2)
            ok = cl.call("GET", "/healthz")[0] == 200 and \
                cl.call("POST", f"/api/matches/{matches[0]}/events", adjust(0, seq))[0] == 201
            cl.close()
        except (OSError, http.client.HTTPException):
            ok = False
        if ok:
            recovered = (time.monotonic() - t) * 1000
            break
        time.sleep(0.05)
    result = parent.recv() if parent.poll(60) else {"arrived": [], "ready": 0, "refused": 0, "open_s": None,
                                                   "reopened": 0, "cpu_s": float("nan")}
    try:
        load.wait(timeout=10)
    except subprocess.TimeoutExpired:
        load.kill()
        load.wait()
    parent.close()

    arrived = [dict(pairs) for pairs in result["arrived"]]
    fan = []
    missing = 0
    for seq, t in sent.items():
        for mine in arrived:
            at = mine.get(seq)
            if at is None:
                missing += 1
            else:
                fan.append((at - t) * 1000)
    return {"post_ms": post_ms, "post_fail": post_fail[0], "fan_ms": fan, "fan_missing": missing,
            "fan_events": len(sent), "health_ms": health_ms, "health_fail": health_fail[0],
            "rss_peak": peak[0], "streams": streams, "streams_ready": result["ready"],
            "refused": result["refused"], "open_s": result["open_s"] or open_s, "server_cpu": cpu,
            "load_cpu": load_cpu, "wall_s": wall, "loadavg": load0, "recovered_ms": recovered,
            "nuisance_reopened": result["reopened"], "slow": slow, "idle": idle,
            "addresses": len(addresses)}


def _main(argv) -> int:
    a = json.loads(argv[0])
    _load(_Lines(), a["host"], a["match_id"], a["streams"], a["addresses"], a["slow"], a["idle"],
          a["nuisance_address"], a["deadline"])
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(_main(sys.argv[1:]))
