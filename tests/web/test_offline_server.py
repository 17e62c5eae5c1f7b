"""The real server (``companion serve``) on a table with no network: with the box's own Wi-Fi on it prints the
two codes in order (the Wi-Fi's, then the link by the box's fixed address), and on a socket handed over as
systemd's socket activation does (``companion-landing.socket``: port 80 on a Pi, any free port here) it answers
the phones' connectivity checks over HTTP."""

import http.client
import os
import signal
import socket
import subprocess
import sys
import time

from companion.storage import Store

LAUNCH = r"""
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
print(s.getsockname()[1], flush=True)
env = dict(os.environ, LISTEN_PID=str(os.getpid()), LISTEN_FDS="1")
os.execve(sys.executable, [sys.executable, "-m", "companion", *sys.argv[1:]], env)
"""


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _get(port, path, host):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request("GET", path, headers={"Host": host})
        r = c.getresponse()
        return r.status, r.read().decode(), dict(r.getheaders())
    finally:
        c.close()


def test_serve_prints_the_two_codes_and_answers_the_checks_on_the_landing_socket(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    store = Store(data / "companion.db")
    store.set_setting("wifi.hotspot", {"ssid": "companion-abcd", "password": "pass;word,1", "enabled": True,
                                       "venue": None})
    store.close()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("INVOCATION_ID", "NOTIFY_SOCKET")}
    env.update(COMPANION_DATA=str(data), PATH=str(tmp_path / "no-nmcli"))
    p = subprocess.Popen([sys.executable, "-c", LAUNCH, "serve", "--host", "127.0.0.1", "--port", str(port),
                          "--gpio", "off"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                         cwd=str(tmp_path))
    try:
        landing = int(p.stdout.readline())
        lines = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = p.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "stops the server" in line:
                break
        out = "".join(lines)
        assert "stops the server" in out, out + p.stderr.read() if p.poll() is not None else out
        first = out.index("1. Join the box's Wi-Fi: companion-abcd (password pass;word,1)")
        second = out.index(f"2. Join link for players (valid until")
        assert first < second
        assert f"http://10.42.0.1:{port}/j/" in out[second:]
        assert out[first:second].count("\n") > 10  # the Wi-Fi's QR code (block characters) between the two
        assert f"Also listening on port {landing}" in out
        # the connectivity checks, over HTTP, on the landing socket, with the phone makers' Host headers
        status, body, headers = _get(landing, "/generate_204", "connectivitycheck.gstatic.com")
        assert status == 204 and body == ""
        status, body, _ = _get(landing, "/hotspot-detect.html", "captive.apple.com")
        assert status == 200 and "<TITLE>Success</TITLE>" in body
        status, body, headers = _get(landing, "/redirect", "www.msftconnecttest.com")
        assert status == 302 and headers["location"] == f"http://10.42.0.1:{port}/"
        # and the app itself, on the main port as on the landing one
        assert _get(port, "/healthz", "127.0.0.1")[0] == 200
        assert _get(landing, "/healthz", "127.0.0.1")[0] == 200
        assert _get(landing, "/api/matches", "evil.example")[0] == 403
    finally:
        p.send_signal(signal.SIGTERM)
        try:
            p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
