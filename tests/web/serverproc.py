"""Start the real server (``python -m companion serve``) on a free loopback port, as a subprocess."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class Server:
    def __init__(self, data_dir, extra_env=None, args=()):
        env = dict(os.environ, COMPANION_DATA=str(data_dir), PYTHONUNBUFFERED="1")
        for name in ("INVOCATION_ID", "NOTIFY_SOCKET"):  # a terminal's output, even when pytest runs under systemd
            env.pop(name, None)
        env.update(extra_env or {})
        self.data_dir = data_dir
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "companion", "serve", "--host", "127.0.0.1", "--port", "0", "--gpio", "off",
             *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(REPO))
        self.lines = []
        self.url = self.join_url = self.setup_code = None
        for line in self.proc.stdout:  # the server prints these once it listens
            self.lines.append(line)
            m = re.search(r"Open on the LAN: (http://\S+?)/?$", line)
            if m:
                self.url = m.group(1)
            m = re.search(r"Join link for players .*: (http://\S+)$", line)
            if m:
                self.join_url = m.group(1)
            m = re.search(r"setup code (\d+)$", line)
            if m:
                self.setup_code = m.group(1)
            if line.startswith("Ctrl-C stops"):
                break
        else:
            err = self.proc.stderr.read()
            raise RuntimeError(f"the server did not start: {''.join(self.lines)} {err}")
        # the lines that come once it serves (the GPIO panel's, attached after it listens) are kept too
        self._drain = threading.Thread(target=lambda: [self.lines.append(line) for line in self.proc.stdout],
                                       daemon=True)
        self._drain.start()
        self.host = self.url.split("//", 1)[1]
        self._until_the_app_answers()

    def _until_the_app_answers(self, within: float = 60.0) -> None:
        """The server builds its Flask app once it listens, in a thread (every request waits for it): wait
        for an answer of the app (any status), so that a test's first request does not spend its own
        timeout on that build."""
        import http.client
        import time

        deadline = time.monotonic() + within
        while time.monotonic() < deadline and self.proc.poll() is None:
            conn = http.client.HTTPConnection(self.host, timeout=within)
            try:
                conn.request("GET", "/api/games")
                conn.getresponse().read()
                return
            except OSError:
                time.sleep(0.05)
            finally:
                conn.close()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        self.proc.stdout.close()
        return err


def serve_in_thread(app, limits=None, http=None, threads: int = 2):
    """``app`` served by companion's own server (``companion/web/server.py``) in a thread of this process,
    on a free loopback port: ``(server, thread, sock, front)``, once it has installed its servers."""
    from companion.web import server as http_server
    from companion.web.asgi import Limits

    sock = http_server.bind("127.0.0.1", 0)
    server, front = http_server.build(app, limits or Limits(), threads=threads, http=http)
    thread = threading.Thread(target=http_server.run, args=(server, front), kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(1000):  # started once it has installed its servers (no sleep-and-hope)
        if server.started:
            break
        thread.join(0.01)
    assert server.started
    return server, thread, sock, front
