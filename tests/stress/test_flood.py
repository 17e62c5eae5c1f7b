"""A room full of live pages, and guests' connections that send nothing or a byte at a time, against the
real server (`companion serve` on 127.0.0.1): the service still answers players and /healthz; the
per-address caps, the header deadline and the body limit hold; a stop with streams open is clean.

Bounded: every socket has a timeout, the sizes are small (120 streams + 60 slow + 60 idle)."""

import http.client
import json
import socket

import pytest

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


def call(server, method, path, body=None, token=None, timeout=5):
    conn = http.client.HTTPConnection(server.host, timeout=timeout)
    h = {"Content-Type": "application/json"} if body is not None else {}
    if token:
        h["Authorization"] = f"Bearer {token}"
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r.status, (json.loads(data) if data else None)


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
        extra = connect(server, source="127.0.0.4")
        socks.append(extra)
        buf = read_until(extra, b"}")
        assert buf.startswith(b"HTTP/1.1 429") and closed_by_server(extra)
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
