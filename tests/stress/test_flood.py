"""A room full of live pages, and guests' connections that send nothing or a byte at a time, against the
real server (`companion serve` on 127.0.0.1): the service still answers players and /healthz; the
per-address caps, the header deadline and the body limit hold; a stop with streams open is clean.

Bounded: every socket has a timeout, the sizes are small (120 streams + 60 slow + 60 idle)."""

import http.client
import json
import socket
import threading

import pytest

from tests.stress.conftest import SOAK, examples
from tests.stress.harness import make_token
from tests.web.serverproc import Server

STREAMS, SLOW, IDLE = 120, 60, 60


@pytest.fixture
def token(tmp_path):
    from companion.services.access import Access
    from companion.storage import Store

    store = Store(tmp_path / "data" / "companion.db")
    try:
        return Access(store).create_api_token("player", label="flood")[0]
    finally:
        store.close()


def start(tmp_path, *args):
    return Server(tmp_path / "data", {"COMPANION_SSE_HEARTBEAT": "600"}, args=args)


def port_of(server):
    return int(server.host.rsplit(":", 1)[1])


def connect(server, source="127.0.0.1", timeout=10):
    return socket.create_connection(("127.0.0.1", port_of(server)), timeout=timeout, source_address=(source, 0))


def call(server, method, path, body=None, token=None, timeout=5, source=None):
    conn = http.client.HTTPConnection(server.host, timeout=timeout,
                                      source_address=(source, 0) if source else None)
    h = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        h["Authorization"] = f"Bearer {token}"
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, (json.loads(data) if data else None)


def call_raw(server, method, path, source="127.0.0.1") -> bytes:
    """A request on a new connection; everything the server sent before closing it (or 10 s)."""
    s = connect(server, source)
    try:
        s.sendall(f"{method} {path} HTTP/1.1\r\nHost: {server.host}\r\n\r\n".encode())
        buf = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        except (socket.timeout, ConnectionResetError):
            pass
        return buf
    finally:
        s.close()


def closed_by_server_now(sock) -> bool:
    """Whether the server has closed this connection (a read that would not wait)."""
    sock.setblocking(False)
    try:
        return sock.recv(65536) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        sock.setblocking(True)


def open_stream(server, path, source="127.0.0.1"):
    sock = connect(server, source)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {server.host}\r\nAccept: text/event-stream\r\n\r\n".encode())
    return sock


def read_until(sock, marker, buf=b""):
    while marker not in buf:
        chunk = sock.recv(65536)
        assert chunk, f"the server closed the connection: {buf[-300:]!r}"
        buf += chunk
    return buf


def closed_by_server(sock) -> bool:
    """Reads until the server closes the connection (True) or the socket's timeout (False)."""
    try:
        while sock.recv(65536):
            pass
        return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def test_a_flood_of_streams_and_slow_connections_leaves_the_service_answering(tmp_path, token):
    server = start(tmp_path)
    socks = []
    try:
        status, m = call(server, "POST", "/api/matches", {"game": "richelieu", "players": ["Ada", "Bo"]}, token)
        assert status == 201, m
        mid = m["id"]
        streams = [open_stream(server, f"/api/matches/{mid}/stream" if i % 3 else "/api/stream")
                   for i in range(STREAMS)]
        socks += streams
        for i in range(SLOW):  # request heads that never end
            s = connect(server)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHo")
            socks.append(s)
        socks += [connect(server) for _ in range(IDLE)]  # connections that send nothing
        heads = [read_until(s, b"event: hello" if i % 3 == 0 else b"event: snapshot") for i, s in enumerate(streams)]
        # a player's write and the health check answer while all of them are open
        status, body = call(server, "POST", f"/api/matches/{mid}/events",
                            {"type": "track.adjust", "data": {"player": "Ada", "track": "money", "delta": 1},
                             "expected_seq": 0}, token)
        assert status == 201, body
        assert call(server, "GET", "/healthz")[0] == 200
        # and every stream got the event
        for i, s in enumerate(streams):
            if i % 3:
                read_until(s, b"id: 1\nevent: event", heads[i])
            else:
                read_until(s, b"event: match", heads[i])
        assert call(server, "GET", "/healthz")[1]["streams"] == STREAMS
    finally:
        for s in socks:
            s.close()
        err = server.stop()
    assert "Traceback" not in err, err


def test_per_address_caps(tmp_path):
    server = start(tmp_path, "--max-streams-per-address", "3", "--max-connections-per-address", "8")
    socks = []
    try:
        for _ in range(3):
            s = open_stream(server, "/api/stream", source="127.0.0.2")
            read_until(s, b"event: hello")
            socks.append(s)
        s = open_stream(server, "/api/stream", source="127.0.0.2")
        socks.append(s)
        buf = read_until(s, b"}")
        assert buf.startswith(b"HTTP/1.1 429") and b'"field": "address"' in buf
        other = open_stream(server, "/api/stream", source="127.0.0.3")  # another address is not refused
        socks.append(other)
        read_until(other, b"event: hello")
        idle = [connect(server, source="127.0.0.4") for _ in range(8)]
        socks += idle
        buf = call_raw(server, "GET", "/healthz", source="127.0.0.4")  # one more: answered 429 and closed
        assert buf.startswith(b"HTTP/1.1 429") and b'"field":"address"' in buf
        assert call(server, "GET", "/healthz")[0] == 200
    finally:
        for s in socks:
            s.close()
        err = server.stop()
    assert "Traceback" not in err, err


def test_a_request_head_sent_a_byte_at_a_time_is_cut_off(tmp_path):
    server = start(tmp_path, "--header-timeout", "0.5")
    try:
        slow = connect(server, timeout=0.2)
        idle = connect(server, timeout=10)
        head = b"GET /healthz HTTP/1.1\r\nHost: " + server.host.encode() + b"\r\n" + b"X-Pad: " + b"a" * 200
        closed = False
        for byte in head:  # one byte every 0.2 s at most: the head is never finished in time
            try:
                slow.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            try:
                if slow.recv(1024) == b"":
                    closed = True
                    break
            except socket.timeout:
                continue
            except ConnectionResetError:
                closed = True
                break
        assert closed, "the slow client kept its connection"
        assert closed_by_server(idle)
        slow.close()
        idle.close()
    finally:
        server.stop()


def test_a_body_over_the_limit_is_refused_before_it_is_read(tmp_path, token):
    server = start(tmp_path)
    try:
        s = connect(server)
        s.sendall(f"POST /api/matches HTTP/1.1\r\nHost: {server.host}\r\nAuthorization: Bearer {token}\r\n"
                  f"Content-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n{{".encode())
        buf = read_until(s, b"}")
        assert buf.startswith(b"HTTP/1.1 413") and b'"field": "Content-Length"' in buf
        s.close()
    finally:
        server.stop()


def test_a_stop_with_streams_open_ends_them_cleanly(tmp_path):
    server = start(tmp_path)
    streams = []
    try:
        for _ in range(20):
            s = open_stream(server, "/api/stream")
            read_until(s, b"event: hello")
            streams.append(s)
    finally:
        err = server.stop()
    assert server.proc.returncode == 0
    assert "Traceback" not in err and "Error" not in err, err
    for s in streams:  # each stream got its last chunk, then the connection closed
        buf = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        assert buf.endswith(b"0\r\n\r\n")
        s.close()


# -- guests on the club's Wi-Fi: bodies, connections, heads -------------------------------------------------
def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


class PeakRss:
    """The server's peak RSS (MB) while the block runs, read from /proc every 20 ms."""

    def __init__(self, pid):
        self.pid, self.peak, self._stop = pid, rss_mb(pid), threading.Event()

    def __enter__(self):
        self.idle = self.peak
        self._t = threading.Thread(target=self._watch, daemon=True)
        self._t.start()
        return self

    def _watch(self):
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, rss_mb(self.pid))

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join(5)
        self.peak = max(self.peak, rss_mb(self.pid))


def send_body(server, source, path, size, chunked, answers):
    """One guest's connection sending a ``size`` body to ``path``; its answer's status (or the reset)."""
    try:
        s = connect(server, source=source, timeout=30)
    except OSError as exc:
        answers.append(type(exc).__name__)
        return
    try:
        head = f"POST {path} HTTP/1.1\r\nHost: {server.host}\r\nContent-Type: application/json\r\n"
        piece = b" " * 65536
        if chunked:
            s.sendall((head + "Transfer-Encoding: chunked\r\n\r\n").encode())
            for _ in range(size // len(piece)):
                s.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            s.sendall(b"0\r\n\r\n")
        else:
            s.sendall((head + f"Content-Length: {size}\r\n\r\n").encode())
            for _ in range(size // len(piece)):
                s.sendall(piece)
    except OSError:
        pass  # the server stopped reading (and closed): its answer is still in our buffer, or it reset
    try:
        buf = b""
        while b"\r\n" not in buf:
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
        answers.append(buf.split(b" ", 2)[1].decode() if buf.startswith(b"HTTP/1.1 ") else "closed")
    except OSError as exc:
        answers.append(type(exc).__name__)
    finally:
        s.close()


BODIES = examples(40, 200)


def test_many_guests_sending_3_mib_bodies_leave_the_box_s_memory_bounded(tmp_path, token):
    """BODIES connections, each a 3 MiB body: to the sign-in (64 KiB: refused by its Content-Length, a
    chunked one stops being read at its limit), and to the board import (3 MiB, read: bounded in flight per
    address and in all). The server's RSS stays under 150 MB, and a player's write answers meanwhile."""
    server = start(tmp_path)
    try:
        status, m = call(server, "POST", "/api/matches", {"game": "richelieu", "players": ["Ada", "Bo"]}, token)
        assert status == 201, m
        answers: list = []
        size = 3 * 1024 * 1024
        kinds = [("/api/auth/login", False), ("/api/auth/login", True), ("/api/boards/import", False)]
        threads = [threading.Thread(target=send_body, args=(
            server, f"127.0.3.{1 + (i % 3 == 2) * (i % 20)}", *kinds[i % 3][:1], size, kinds[i % 3][1], answers))
            for i in range(BODIES)]
        with PeakRss(server.proc.pid) as rss:
            for t in threads:
                t.start()
            status, body = call(server, "POST", f"/api/matches/{m['id']}/events",
                                {"type": "track.adjust", "data": {"player": "Ada", "track": "money", "delta": 1},
                                 "expected_seq": 0}, token, timeout=30)
            for t in threads:
                t.join(120)
        print(f"{BODIES} bodies of 3 MiB: RSS {rss.idle:.0f} MB idle, {rss.peak:.0f} MB at the peak; answers "
              f"{sorted((a, answers.count(a)) for a in set(answers))}")
        assert status == 201, body
        assert len(answers) == BODIES and not [a for a in answers if a.startswith("5") and a != "503"], answers
        assert rss.peak < 150, f"RSS {rss.idle:.0f} MB idle, {rss.peak:.0f} MB at the peak"
        assert rss.peak - rss.idle < 60, f"RSS {rss.idle:.0f} MB idle, {rss.peak:.0f} MB at the peak"
        assert call(server, "GET", "/healthz")[0] == 200
    finally:
        err = server.stop()
    assert "Traceback" not in err, err


def hold(server, source, streams, idle):
    """One guest's address holding as many connections as it can: ``streams`` live pages, then ``idle``
    connections that send nothing; returns the sockets and how many streams the server opened."""
    socks, pending = [], []
    for _ in range(streams):
        try:
            pending.append(open_stream(server, "/api/stream", source=source))
        except OSError:
            break
    opened = 0
    for s in pending:
        socks.append(s)
        try:
            buf = b""
            while b"\r\n" not in buf:
                chunk = s.recv(4096)
                if not chunk:
                    break
                buf += chunk
            opened += buf.startswith(b"HTTP/1.1 200")
        except OSError:
            pass
    for _ in range(idle):
        try:
            socks.append(connect(server, source=source))
        except OSError:
            break
    return socks, opened


ATTACK = examples((60, 40), (1000, 500))  # streams and idle connections each attacking address tries


def test_four_attacking_addresses_leave_room_for_a_fifth_phone_and_the_organiser(tmp_path, token):
    """4 addresses each open as many live pages and idle connections as they can: a fifth phone's write,
    /healthz, the box's own screen and the organiser (from one of the crowded addresses) still answer. At
    `make test` size the box is made small (200 connections); `make soak` runs the defaults (4,000)."""
    organiser = make_token(tmp_path / "data", "organiser")
    server = start(tmp_path, *(() if SOAK else ("--max-connections", "200")))
    socks = []
    try:
        status, m = call(server, "POST", "/api/matches", {"game": "richelieu", "players": ["Ada", "Bo"]}, token)
        assert status == 201, m
        held = []
        for n in range(1, 5):
            s, opened = hold(server, f"127.0.4.{n}", *ATTACK)
            socks += s
            held.append(opened)
        phone = "127.0.4.5"
        print(f"4 addresses trying {ATTACK[0]} streams and {ATTACK[1]} idle connections each: streams opened {held}, "
              f"the server's /healthz: {call(server, 'GET', '/healthz')[1]}")
        status, body = call(server, "POST", f"/api/matches/{m['id']}/events",
                            {"type": "track.adjust", "data": {"player": "Ada", "track": "money", "delta": 1},
                             "expected_seq": 0}, token, source=phone)
        assert status == 201, (status, body, held)
        assert call(server, "GET", "/healthz", source=phone)[0] == 200
        assert call(server, "GET", "/healthz")[0] == 200  # the box's own screen
        assert call(server, "GET", "/api/auth/sessions", token=organiser, source="127.0.4.1")[0] == 200
        guest = call_raw(server, "GET", "/healthz", source="127.0.4.1")
        assert guest.startswith(b"HTTP/1.1 429"), guest[:200]
        assert sum(held) < 4 * ATTACK[0]  # each address was held to its share
    finally:
        for s in socks:
            s.close()
        err = server.stop()
    assert "Traceback" not in err, err


def test_a_full_box_sheds_guests_without_credentials_and_keeps_a_player_s_page(tmp_path, token):
    server = start(tmp_path, "--max-connections", "60", "--max-connections-per-address", "30")
    socks = []
    try:
        status, m = call(server, "POST", "/api/matches", {"game": "richelieu", "players": ["Ada", "Bo"]}, token)
        assert status == 201, m
        page = connect(server, source="127.0.5.1")  # a seated phone's live page (its credentials: a token)
        page.sendall(f"GET /api/matches/{m['id']}/stream HTTP/1.1\r\nHost: {server.host}\r\n"
                     f"Authorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n".encode())
        head = read_until(page, b"event: snapshot")
        for n in range(2, 5):  # 3 guests × 30 connections: more than the box's 60
            socks += [connect(server, source=f"127.0.5.{n}") for _ in range(30)]
        assert call(server, "GET", "/healthz", source="127.0.5.9")[0] == 200  # a new phone gets in
        status, body = call(server, "POST", f"/api/matches/{m['id']}/events",
                            {"type": "track.adjust", "data": {"player": "Ada", "track": "money", "delta": 1},
                             "expected_seq": 0}, token, source="127.0.5.9")
        assert status == 201, body
        read_until(page, b"id: 1\nevent: event", head)  # the player's page was kept
        shed = sum(closed_by_server_now(s) for s in socks)
        assert shed >= 90 - 60, shed
    finally:
        page.close()
        for s in socks:
            s.close()
        err = server.stop()
    assert "Traceback" not in err, err


def test_a_request_head_over_16_kib_in_one_piece_is_refused(tmp_path):
    server = start(tmp_path)
    try:
        s = connect(server, source="127.0.6.1")
        s.sendall(f"GET /healthz?x={'a' * 64 * 1024} HTTP/1.1\r\nHost: {server.host}\r\n\r\n".encode())
        buf = read_until(s, b"}")
        assert buf.startswith(b"HTTP/1.1 431") and b'"field": "headers"' in buf
        s.close()
    finally:
        server.stop()


CARD_WRITES = examples(200, 2000)


def db_bytes(data_dir) -> int:
    return sum(p.stat().st_size for p in data_dir.glob("companion.db*"))


def test_a_seated_phone_cannot_fill_the_box_s_card(tmp_path):
    """A phone seated by the club's link alternates a Web of Power event carrying a 60 KB field and its
    undo, as fast as it can (that wrote 77-144 MB a minute): the field is refused, the phone is slowed to a
    steady pace, and the database grows by kilobytes. Bounded: CARD_WRITES requests."""
    server = start(tmp_path)
    try:
        join = server.join_url.split(server.host, 1)[1]
        conn = http.client.HTTPConnection(server.host, timeout=10, source_address=("127.0.7.1", 0))
        conn.request("GET", join)
        r = conn.getresponse()
        r.read()
        cookie = r.getheader("Set-Cookie").split(";", 1)[0]
        head = {"Cookie": cookie, "Origin": f"http://{server.host}", "Content-Type": "application/json"}

        def post(path, body):
            conn.request("POST", path, body=json.dumps(body), headers=head)
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read() or b"null")

        status, m = post("/api/matches", {"game": "web-of-power", "players": ["Ada", "Bo", "Cy"]})
        assert status == 201, m
        mid, seq = m["id"], 0
        before = db_bytes(tmp_path / "data")
        answers = []
        for i in range(CARD_WRITES):
            if i % 2 == 0:
                data = {"player": "Ada", "piece": "councillor", "country": "England", "count": 1}
                if i % 4 == 0:
                    data["note"] = "x" * 60_000
                status, body = post(f"/api/matches/{mid}/events", {"type": "place", "expected_seq": seq, "data": data})
            else:
                status, body = post(f"/api/matches/{mid}/undo", {"expected_seq": seq})
            answers.append(status)
            if status == 201:
                seq += 1
        grown = db_bytes(tmp_path / "data") - before
        print(f"{CARD_WRITES} writes of a seated phone: {sorted((a, answers.count(a)) for a in set(answers))}; "
              f"the database grew by {grown / 1024:.0f} KiB")
        assert 400 in answers and 429 in answers and 201 in answers
        assert grown < 2 * 1024 * 1024, grown
        assert call(server, "GET", "/healthz")[0] == 200
        conn.close()
    finally:
        err = server.stop()
    assert "Traceback" not in err, err
