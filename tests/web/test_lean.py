"""The hot routes over the real server: on httptools the protocol hands a plain request of a hot route to the
front without an ASGI task (``Front.lean_head``/``lean_run``, ``lean_answer`` in companion/web/server.py; on
h11 every request goes through ASGI). The bytes a client reads are the same as through ASGI (the same server
with that hand-over turned off): status, headers in their order, body, for answers and refusals, a body that
arrives after its head (or never: the same 408 at its deadline), two requests sent at once on one
connection, and a client that says ``Connection: close``."""

import json
import re
import socket
import threading

import pytest

from companion.web import server as http_server
from companion.web.asgi import Limits
from tests.web.serverproc import serve_in_thread

HTTPTOOLS = __import__("importlib.util").util.find_spec("httptools") is not None
pytestmark = pytest.mark.skipif(not HTTPTOOLS, reason="no httptools wheel here")


def _pair(app, limits=None):
    """Two servers of ``app`` on httptools, one with the hand-over turned off (``"asgi"``): (their ports, the
    paths the other answered without ASGI, a semaphore released at every request head read, the fronts)."""
    running = {kind: serve_in_thread(app, limits, http="httptools") for kind in ("asgi", "lean")}
    running["asgi"][3].lean_head = lambda proto, cycle: None  # every request through ASGI, as before
    lean, heads = [], threading.Semaphore(0)
    for kind, r in running.items():
        front = r[3]
        head, run = front.lean_head, front.lean_run

        def head_read(proto, cycle, head=head):
            try:
                return head(proto, cycle)
            finally:
                heads.release()  # (a request's head read: its body may be sent now, after it)

        front.lean_head = head_read
        if kind == "lean":
            front.lean_run = lambda *a, run=run: (lean.append(a[1].scope["path"]), run(*a))[1]
    yield ({http: r[2].getsockname()[1] for http, r in running.items()}, lean, heads,
           {http: r[3] for http, r in running.items()})
    for server, thread, sock, _front in running.values():
        server.should_exit = True
        thread.join(15)
        sock.close()


@pytest.fixture
def servers(app):
    yield from _pair(app)


@pytest.fixture
def late(app):
    """The pair with a body deadline of 0.3 s."""
    yield from _pair(app, Limits(body_timeout=0.3))


def _read_answers(sock, n):
    """``n`` HTTP/1.1 answers read off ``sock``: (status line, [(name, value)...] without ``date``, body)."""
    data = b""
    out = []
    while len(out) < n:
        while b"\r\n\r\n" not in data:
            more = sock.recv(65536)
            if not more:
                return out
            data += more
        head, _, data = data.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        headers = [tuple(line.split(b": ", 1)) for line in lines[1:]]
        length = int(dict(headers).get(b"content-length", b"0"))
        while len(data) < length:
            more = sock.recv(65536)
            if not more:
                break
            data += more
        body, data = data[:length], data[length:]
        out.append((lines[0], [h for h in headers if h[0] != b"date"], body))
    return out


def _exchange(port, pieces, answers):
    """Sends ``pieces`` (bytes, each its own send) on one connection and reads ``answers`` answers."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        got = []
        for piece in pieces:
            if piece is None:  # read what is due so far before sending more
                got += _read_answers(s, 1)
            elif callable(piece):
                piece()
            else:
                s.sendall(piece)
        return got + _read_answers(s, answers - len(got))


def _request(method, path, body=None, headers=()):
    lines = [f"{method} {path} HTTP/1.1", "Host: localhost", *headers]
    data = b""
    if body is not None:
        data = json.dumps(body).encode() if not isinstance(body, bytes) else body
        lines.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def _masked(answers):
    out = []
    for status, headers, body in answers:
        text = re.sub(rb'"(at|id)":"[^"]*"', rb'"\1":"<x>"', body)
        text = re.sub(rb'"id":"[0-9a-f]{12}"', b'"id":"<x>"', text)
        headers = [(k, b"<n>" if k == b"content-length" else v) for k, v in headers]
        out.append((status, headers, text))
    return out


def test_the_hot_routes_answer_the_same_bytes_without_asgi(servers, tokens, fake_game, organiser):
    ports, lean, heads, _fronts = servers
    bearer = f"Authorization: Bearer {tokens['organiser']}"
    ids = {http: organiser.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"]}).json["id"]
           for http in ports}
    got = {}
    for http, port in ports.items():
        m = ids[http]
        event = _request("POST", f"/api/matches/{m}/events", {"type": "point", "data": {"player": "Anna"},
                                                              "expected_seq": 0}, [bearer])
        split = _request("POST", f"/api/matches/{m}/events", {"type": "point", "data": {"player": "Bruno"},
                                                              "expected_seq": 1}, [bearer])
        cut = split.index(b"\r\n\r\n") + 4  # a body sent once its head was read

        def heads_read():
            while heads.acquire(blocking=False):
                pass
        got[http] = [
            *_exchange(port, [_request("GET", "/healthz")], 1),
            *_exchange(port, [event, None, heads_read, split[:cut], lambda: heads.acquire(timeout=30), split[cut:]], 2),
            # two at once on one connection (pipelined): a stale write refused, then the match
            *_exchange(port, [_request("POST", f"/api/matches/{m}/events",
                                       {"type": "point", "data": {"player": "Anna"}, "expected_seq": 0}, [bearer])
                              + _request("GET", f"/api/matches/{m}", headers=[bearer])], 2),
            *_exchange(port, [_request("POST", f"/api/matches/{m}/events", b"{nope", [bearer])], 1),
            # a viewer's write, without Origin
            *_exchange(port, [_request("POST", f"/api/matches/{m}/events", {"type": "point", "expected_seq": 2})], 1),
            *_exchange(port, [_request("GET", "/api/matches/nope", headers=[bearer, "Connection: close"])], 1),
        ]
    assert [a[0] for a in got["asgi"]] == [b"HTTP/1.1 200 OK", b"HTTP/1.1 201 Created", b"HTTP/1.1 201 Created",
                                          b"HTTP/1.1 409 Conflict", b"HTTP/1.1 200 OK", b"HTTP/1.1 400 Bad Request",
                                          b"HTTP/1.1 403 Forbidden", b"HTTP/1.1 404 Not Found"]
    assert _masked(got["lean"]) == _masked(got["asgi"])
    assert (b"connection", b"close") in got["lean"][-1][1]
    # every request was answered without ASGI, the one whose body came after its head too
    m = ids["lean"]
    assert lean == ["/healthz", f"/api/matches/{m}/events", f"/api/matches/{m}/events", f"/api/matches/{m}/events",
                    f"/api/matches/{m}", f"/api/matches/{m}/events", f"/api/matches/{m}/events", "/api/matches/nope"]


def _until(check):
    for _ in range(3000):
        if check():
            return True
        threading.Event().wait(0.01)
    return False


def test_a_body_that_does_not_come_in_time_gets_the_same_408_and_its_share_is_given_back(late, tokens, fake_game,
                                                                                        organiser):
    ports, lean, heads, fronts = late
    bearer = f"Authorization: Bearer {tokens['organiser']}"
    got = {}
    for http, port in ports.items():
        m = organiser.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"]}).json["id"]
        # over 4 KiB: counted on the address's share of bodies while it is awaited
        full = _request("POST", f"/api/matches/{m}/events",
                        {"type": "point", "data": {"player": "Anna", "note": "x" * 6000}, "expected_seq": 0}, [bearer])
        part = full[:full.index(b"\r\n\r\n") + 104]  # the head and 100 bytes of the body, then nothing
        got[http] = _exchange(port, [part], 1)
        assert _until(lambda: fronts[http].bodies.in_all == 0)
        with socket.create_connection(("127.0.0.1", port), timeout=20) as s:  # gone with its body half sent
            while heads.acquire(blocking=False):
                pass
            s.sendall(part)
            assert heads.acquire(timeout=30)
            if http == "lean":
                assert fronts[http].bodies.in_all > 0
        assert _until(lambda: fronts[http].bodies.in_all == 0)
    assert got["asgi"][0][0] == b"HTTP/1.1 408 Request Timeout"
    assert _masked(got["lean"]) == _masked(got["asgi"])
    assert (b"connection", b"close") in got["lean"][0][1]
    assert lean == []  # (both went the ASGI way at their deadline; the second's client had gone)
