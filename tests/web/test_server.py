"""The real server (uvicorn) as a subprocess: printed URL and QR, live events reach a client at once
(no buffering), tokens from `companion token create`, Host checks on the wire."""

import http.client
import json
import socket

import pytest

from tests.web.serverproc import Server


@pytest.fixture
def server(tmp_path):
    # heartbeats every 10 minutes: an event can only arrive promptly if the server flushes it
    s = Server(tmp_path / "data", {"COMPANION_SSE_HEARTBEAT": "600"})
    yield s
    s.stop()


def request(server, method, path, body=None, headers=None):
    conn = http.client.HTTPConnection(server.host, timeout=20)
    h = {"Content-Type": "application/json"} if body is not None else {}
    h.update(headers or {})
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r, (json.loads(data) if data and r.getheader("Content-Type", "").startswith("application/json") else data)


def test_serve_prints_url_join_link_qr_and_setup_code(server):
    out = "".join(server.lines)
    assert server.url.startswith("http://127.0.0.1:")
    assert server.join_url.startswith(server.url + "/j/")
    assert "█" in out or "▀" in out  # the QR code, drawn with block characters
    assert server.setup_code and len(server.setup_code) == 8


def open_stream(server, match_id):
    port = int(server.host.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=15)  # a buffered event times out the test
    sock.sendall(f"GET /api/matches/{match_id}/stream HTTP/1.1\r\nHost: {server.host}\r\n"
                 "Accept: text/event-stream\r\n\r\n".encode())
    return sock


def read_until(sock, marker, buf=b""):
    while marker not in buf:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the stream"
        buf += chunk
    return buf


def test_live_event_reaches_a_client_promptly(server, run_cli):
    code, out, err = run_cli("token", "create", "--role", "player", "--data-dir", str(server.data_dir))
    assert code == 0, err
    token = out.strip().splitlines()[-1]
    auth = {"Authorization": f"Bearer {token}"}
    r, m = request(server, "POST", "/api/matches", {"game": "rome-is-burning", "players": ["Anna", "Bruno"],
                                                    "options": {"clock": True}}, auth)
    assert r.status == 201, m
    sock = open_stream(server, m["id"])
    buf = read_until(sock, b"event: snapshot")
    assert buf.startswith(b"HTTP/1.1 200")
    assert b"text/event-stream" in buf.split(b"\r\n\r\n", 1)[0]
    # a write on another connection: the stream must carry it now, not at the next heartbeat (10 min)
    r, body = request(server, "POST", f"/api/matches/{m['id']}/events",
                      {"type": "clock.start", "data": {}, "expected_seq": 0}, auth)
    assert r.status == 201, body
    buf = read_until(sock, b"id: 1\nevent: event", buf)
    # and the clock runner's ticks follow (the clock is running now)
    read_until(sock, b"event: tick", buf)
    sock.close()


def test_foreign_host_is_refused_on_the_wire(server):
    r, body = request(server, "GET", "/api/matches", headers={"Host": "rebind.example:80"})
    assert r.status == 403 and body["field"] == "Host"


def test_join_link_on_the_wire(server):
    path = server.join_url.split(server.host, 1)[1]
    r, _ = request(server, "GET", path)
    assert r.status == 303 and r.getheader("Location") == "/pick"
    cookie = r.getheader("Set-Cookie").split(";", 1)[0]
    r, body = request(server, "GET", "/api/auth/me", headers={"Cookie": cookie})
    assert body["role"] == "player"
    r, body = request(server, "POST", "/api/matches", {"game": "richelieu", "players": ["A", "B"]},
                      {"Cookie": cookie})
    assert r.status == 403 and body["field"] == "Origin"  # a browser session must show its Origin
    r, body = request(server, "POST", "/api/matches", {"game": "richelieu", "players": ["A", "B"]},
                      {"Cookie": cookie, "Origin": server.url})
    assert r.status == 201, body


def test_a_box_without_pins_says_so_after_the_address_not_as_a_warning_before_it(tmp_path):
    """`make run` on a laptop (GPIO auto, no pins): the first thing shown is the address; the GPIO line
    comes once the box listens (the panel is attached then), saying why the box's buttons are off, and
    stderr holds no warning."""
    import time

    from tests.web.serverproc import Server

    s = Server(tmp_path / "data", args=("--gpio", "auto"))
    try:
        deadline = time.monotonic() + 30  # (printed before the app answers; read by another thread)
        while not any(line.startswith("GPIO: ") for line in s.lines) and time.monotonic() < deadline:
            time.sleep(0.05)
        lines = list(s.lines)
    finally:
        err = s.stop()
    at = next(i for i, line in enumerate(lines) if line.startswith("Open on the LAN"))
    gpio = [line for line in lines if line.startswith("GPIO: ")]
    assert gpio and lines.index(gpio[0]) > at
    assert gpio[0].startswith("GPIO: off (no GPIO pins here") or gpio[0].startswith("GPIO: pins")
    assert "WARNING" not in err, err
