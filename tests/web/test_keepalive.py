"""Keep-alive connections of the real HTTP server (uvicorn as ``companion serve`` builds it, run in this
process on a loopback port): every accepted socket has ``TCP_NODELAY``.

Without it a response written in two parts (its head, then its body) waits, from the second request on a
connection, for the client's delayed ACK of the first part: ~40 ms for every keep-alive request of a
phone. The test does not time that (timed tests are not allowed here): it asserts the cause, the socket
option on the server's side of the connection, after two requests were answered on that one connection.
"""

import http.client
import re
import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.web import server as http_server
from companion.web.asgi import Limits
from companion.web.shares import Connections
from tests.web.serverproc import serve_in_thread


PARSERS = ["h11", pytest.param("httptools", marks=pytest.mark.skipif(
    __import__("importlib.util").util.find_spec("httptools") is None, reason="no httptools wheel here"))]


@pytest.fixture(params=PARSERS)
def running(app, request):
    server, thread, sock, front = serve_in_thread(app, getattr(request, "limits", None), http=request.param)
    yield sock.getsockname()[1], front
    server.should_exit = True
    thread.join(15)
    sock.close()


def _server_side_sockets(front):
    return [proto.transport.get_extra_info("socket") for proto in list(front.connections.by_client.values())]


def test_the_listening_socket_says_tcp_so_asyncio_sets_nodelay_too():
    sock = http_server.bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_a_second_keep_alive_request_is_answered_on_a_socket_with_nodelay(running):
    port, front = running
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        for _ in range(2):  # the second request on the same connection is the one that stalled
            conn.request("GET", "/healthz")
            r = conn.getresponse()
            r.read()
            assert r.status == 200
            assert not r.will_close  # still the same keep-alive connection
        mine = conn.sock.getsockname()
        socks = _server_side_sockets(front)
        assert [s.getpeername() for s in socks] == [mine]  # one connection, accepted once
        assert socks[0].getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        conn.close()


def test_pipelined_requests_are_each_answered_in_their_turn(running):
    """Three requests sent in one packet (a write's body among them, which the gate refuses without an
    Origin): three answers, in order, on the one connection (uvicorn's own pipelining, on either parser)."""
    port, _ = running
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    try:
        body = b'{"type": "point", "expected_seq": 0}'
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
                     b"POST /api/matches/nope/events HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                     + b"GET /api/games HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        got = _read_all(sock)
    finally:
        sock.close()
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", got)
    assert statuses == [b"200", b"403", b"200"], got[:600]
    assert b'"games"' in got.rsplit(b"HTTP/1.1 ", 1)[1]


def test_nodelay_is_set_on_whatever_tcp_socket_the_listener_hands_over():
    class Transport:
        def __init__(self, sock):
            self.sock = sock

        def get_extra_info(self, name):
            return self.sock if name == "socket" else None

    plain = socket.socket(socket.AF_INET, socket.SOCK_STREAM)  # proto 0: asyncio would leave Nagle on
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        assert plain.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
        assert http_server.nodelay(Transport(plain))
        assert plain.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        assert not http_server.nodelay(Transport(unix))  # not TCP: nothing to set, no error
        assert not http_server.nodelay(Transport(None))
    finally:
        plain.close()
        unix.close()


def _dechunk(raw: bytes) -> tuple[bytes, bool]:
    """The body of a chunked response, read strictly (every size line, every CRLF); True once the last
    chunk (size 0) was read."""
    head, _, rest = raw.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower(), head
    body = b""
    while rest:
        size_line, sep, rest = rest.partition(b"\r\n")
        if not sep:
            break
        size = int(size_line, 16)
        if size == 0:
            return body, True
        if len(rest) < size + 2:
            break
        assert rest[size:size + 2] == b"\r\n"
        body += rest[:size]
        rest = rest[size + 2:]
    return body, False


def test_a_stream_s_events_arrive_as_a_strictly_valid_chunked_body_and_a_stop_ends_it(running, player, fake_game):
    """The events of a live stream, sent through ASGI ``send``, are framed by the server as HTTP/1.1 chunks:
    on the wire, a strictly valid chunked body with every event once, and a stop ends it with the last
    chunk."""
    port, front = running
    match = player.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"]}).json["id"]
    sock = socket.create_connection(("127.0.0.1", port), timeout=20)
    try:
        sock.sendall(f"GET /api/matches/{match}/stream HTTP/1.1\r\nHost: localhost\r\n"
                     "Accept: text/event-stream\r\n\r\n".encode())
        raw = b""
        while b"event: snapshot" not in raw:
            raw += sock.recv(65536)
        for seq in range(3):
            r = player.post(f"/api/matches/{match}/events", {"type": "point", "data": {"player": "Anna"},
                                                             "expected_seq": seq})
            assert r.status_code == 201, r.json
        waited = 0
        while b"id: 3\nevent: event" not in _dechunk(raw)[0]:
            chunk = sock.recv(65536)
            assert chunk, "the server closed the stream"
            raw += chunk
            # (heartbeats keep coming every 0.05 s: without a bound a lost event would be waited for forever)
            waited += chunk.count(b"event: heartbeat")
            assert waited < 600, raw[-2000:]
        body, _ = _dechunk(raw)
        assert [body.count(f"id: {n}\nevent: event\n".encode()) for n in (1, 2, 3)] == [1, 1, 1]
        # a stop: the stream ends with its last chunk. ``close_streams`` runs on the server's loop, as the server
        # calls it
        next(iter(front.subs)).loop.call_soon_threadsafe(front.close_streams)
        waited = 0
        while not _dechunk(raw)[1]:
            chunk = sock.recv(65536)
            if not chunk:
                break
            raw += chunk
            waited += chunk.count(b"event: heartbeat")
            assert waited < 600, raw[-2000:]  # (a stream that never ends fails instead of hanging)
        assert _dechunk(raw)[1]
    finally:
        sock.close()


def _port_of(app, limits: Limits, http: str):
    """A server in a thread with ``limits``: its port, then it stops."""
    server, thread, sock, front = serve_in_thread(app, limits, http=http)
    yield sock.getsockname()[1]
    server.should_exit = True
    thread.join(15)
    sock.close()


@pytest.fixture(params=PARSERS)
def strict(app, request):
    """A server whose header deadline is short: 0.3 s."""
    yield from _port_of(app, Limits(header_timeout=0.3), request.param)


def _read_all(sock) -> bytes:
    out = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, socket.timeout):
            return out
        if not chunk:
            return out
        out += chunk


def test_either_parser_refuses_a_head_over_16_kib_and_closes(strict):
    for tail in (b"", b"\r\n\r\n"):  # still arriving, or whole (then the front's own 431)
        sock = socket.create_connection(("127.0.0.1", strict), timeout=20)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + b"a" * 20000 + tail)
        got = _read_all(sock)
        sock.close()
        assert got.startswith((b"HTTP/1.1 431", b"HTTP/1.1 400")), got[:200]
    sock = socket.create_connection(("127.0.0.1", strict), timeout=20)
    sock.sendall(b"GET /healthz?x=" + b"a" * 70000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n")
    got = _read_all(sock)
    sock.close()
    assert got.startswith(b"HTTP/1.1 431") and b'"field": "headers"' in got, got[:200]


def test_either_parser_closes_a_connection_whose_head_is_not_whole_in_time(strict):
    sock = socket.create_connection(("127.0.0.1", strict), timeout=20)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: loc")  # and nothing more
    assert _read_all(sock) == b""  # closed by the server at its deadline, with no answer
    sock.close()
    ok = socket.create_connection(("127.0.0.1", strict), timeout=20)  # a whole head is answered
    ok.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    assert _read_all(ok).startswith(b"HTTP/1.1 200")
    ok.close()


@pytest.fixture(params=PARSERS)
def idle_cut(app, request):
    """A server whose keep-alive timeout is short: 0.3 s (its header deadline the usual 10 s)."""
    yield from _port_of(app, Limits(keep_alive=0.3), request.param)


def test_either_parser_closes_a_keep_alive_connection_idle_after_its_answer(idle_cut):
    sock = socket.create_connection(("127.0.0.1", idle_cut), timeout=20)
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
    got = b""
    while True:  # the answer, then the end of the connection (the server closed it, idle); a timeout fails
        chunk = sock.recv(65536)
        if not chunk:
            break
        got += chunk
    sock.close()
    assert got.startswith(b"HTTP/1.1 200") and got.count(b"HTTP/1.1") == 1


class _Handle:
    def __init__(self, loop, when, fn):
        self.when, self.fn, self.cancelled = when, fn, False
        loop.made.append(self)

    def cancel(self):
        self.cancelled = True


class _Loop:
    def __init__(self):
        self.now, self.made = 0.0, []

    def time(self):
        return self.now

    def call_at(self, when, fn):
        return _Handle(self, when, fn)

    def run_until(self, t):
        """The handles due by ``t`` run in their order, the clock at each one's time."""
        while True:
            due = sorted((h for h in self.made if not h.cancelled and not getattr(h, "ran", False) and h.when <= t),
                         key=lambda h: h.when)
            if not due:
                break
            h = due[0]
            h.ran = True
            self.now = h.when
            h.fn()
        self.now = t


class _Transport:
    closed = False

    def is_closing(self):
        return self.closed

    def close(self):
        self.closed = True


class _Inner:
    """uvicorn's protocol, as the connection sees it: what it is handed."""

    def __init__(self):
        self.got = []

    def data_received(self, data):
        self.got.append(data)


def _guarded():
    """The deadline of a connection alone, on a loop whose clock the test moves."""
    conn = http_server.Guarded(_Inner(), Limits(header_timeout=10.0), Connections(Limits()))
    conn.loop, conn.transport, conn._admitted = _Loop(), _Transport(), True
    conn._arm()  # (opened: a whole head within 10 s)
    return conn


def test_a_busy_connection_keeps_one_timer_and_an_idle_one_is_closed_at_its_deadline():
    conn = _guarded()
    t = 0.0
    for _ in range(400):  # a request every 50 ms for 20 s, each answered 20 ms after its head
        t += 0.05
        conn.loop.run_until(t)
        conn.data_received(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        conn.begin()  # (the front has its head)
        conn.loop.run_until(t + 0.02)
        conn.end()  # (its answer)
    assert not conn.transport.closed
    assert len(conn.inner.got) == 400  # every byte handed on to uvicorn's protocol
    assert len(conn.loop.made) <= 4  # one timer at a time, due every 10 s or so: not one per request
    last = t + 0.02
    conn.loop.run_until(last + 9.9)
    assert not conn.transport.closed
    conn.loop.run_until(last + 10.0)  # no new head within the header deadline after its last answer
    assert conn.transport.closed

    slow = _guarded()  # a head begun but never whole
    slow.data_received(b"GET /healthz HT")
    assert not slow.is_idle()
    slow.loop.run_until(9.9)
    assert not slow.transport.closed
    slow.loop.run_until(10.0)
    assert slow.transport.closed

    stream = _guarded()  # a request under way (a stream) has no header deadline
    stream.data_received(b"GET /api/stream HTTP/1.1\r\nHost: localhost\r\n\r\n")
    stream.begin()
    stream.loop.run_until(600.0)
    assert not stream.transport.closed and len(stream.loop.made) <= 2
    stream.end()
    stream.loop.run_until(609.9)
    assert not stream.transport.closed
    stream.loop.run_until(610.0)
    assert stream.transport.closed


class _Written(_Transport):
    def __init__(self):
        self.out = []

    def write(self, data):
        self.out.append(data)


class _Parser:
    """uvicorn's protocol as the head limit meets it: a request begins (the front's ``begin``) once its head is
    whole, before the next read (uvicorn's ASGI task runs before the loop reads again)."""

    def __init__(self):
        self.got = b""
        self.conn = None

    def data_received(self, data):
        self.got += data
        if b"\r\n\r\n" in self.got and not self.conn._busy:
            self.conn.begin()


@settings(max_examples=200, deadline=None)
@given(pad=st.integers(0, 3 * 1024), body=st.integers(0, 2048), cuts=st.lists(st.integers(1, 4096), max_size=12))
def test_the_head_limit_refuses_a_head_exactly_when_it_is_over_the_limit_however_it_arrives(pad, body, cuts):
    """A head of any size, followed by a body, arriving in reads of any sizes: refused (a 431, nothing more
    handed on) exactly when the head, blank line included, is over ``max_head`` (here 2 KiB); else every
    byte reaches uvicorn's protocol."""
    limit = 2048
    head = b"POST /api/matches/m/events HTTP/1.1\r\nHost: localhost\r\nX-Pad: " + b"a" * pad + b"\r\n\r\n"
    wire = head + b"b" * body
    inner = _Parser()
    conn = http_server.Guarded(inner, Limits(max_head=limit), Connections(Limits()))
    inner.conn = conn
    conn.loop, conn.transport, conn._admitted = _Loop(), _Written(), True
    conn._arm()
    at = 0
    for cut in [*cuts, len(wire)]:
        if at >= len(wire) or conn.transport.closed:
            break
        conn.data_received(wire[at:at + cut])
        at += cut
    refused = bool(conn.transport.out) and conn.transport.out[0].startswith(b"HTTP/1.1 431")
    assert refused == (len(head) > limit), (len(head), cuts)
    if not refused:
        assert inner.got == wire
    else:
        assert b"\r\n\r\n" not in inner.got  # (the head's end never reached uvicorn's protocol)
