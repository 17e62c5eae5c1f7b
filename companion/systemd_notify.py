"""sd_notify in pure Python: tell systemd the service is ready and ping its watchdog.

``systemd/companion.service`` is ``Type=notify`` with ``WatchdogSec=``: systemd waits for
``READY=1`` before it counts the service as started, and restarts it when no ``WATCHDOG=1`` comes
within the watchdog interval. Outside systemd (no ``$NOTIFY_SOCKET``) every call is a no-op that
returns False, so ``companion serve`` (``companion/cli/serve.py``) calls them unconditionally once its
port listens::

    notify_ready(f"serving on {url}")
    watchdog = start_watchdog(health=lambda: http_ok("127.0.0.1", port))  # GET /healthz answers 200
    ...
    notify_stopping()

The unit runs ``python -m companion serve`` (an upgrade runs ``systemd/install.sh`` again, which installs
the unit anew). This module imports nothing of the package.

The protocol (sd_notify(3)): one datagram of ``KEY=VALUE`` lines to the AF_UNIX socket named in
``$NOTIFY_SOCKET`` (a path, or an abstract name written with a leading ``@``).
"""

from __future__ import annotations

import logging
import os
import socket
import threading

log = logging.getLogger("companion.systemd")


def _address(env=None) -> str | None:
    env = os.environ if env is None else env
    addr = env.get("NOTIFY_SOCKET")
    if not addr:
        return None
    if addr[0] == "@":
        return "\0" + addr[1:]
    if addr[0] != "/":
        return None  # vsock:... and other transports are not used on a Pi
    return addr


def notify(state: str, env=None) -> bool:
    """Send one state string (``"READY=1"``, ``"WATCHDOG=1\\nSTATUS=..."``). False when not under
    systemd or when the socket refuses; never raises."""
    addr = _address(env)
    if addr is None:
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.connect(addr)
            s.sendall(state.encode("utf-8"))
        return True
    except OSError as exc:
        log.debug("sd_notify failed: %s", exc)
        return False


def _status_line(status: str | None) -> str:
    return "" if not status else "\nSTATUS=" + status.replace("\n", " ")


def notify_ready(status: str | None = None, env=None) -> bool:
    """``READY=1`` (with ``MAINPID``): the server listens and the database is open."""
    return notify(f"READY=1\nMAINPID={os.getpid()}{_status_line(status)}", env)


def notify_status(status: str, env=None) -> bool:
    return notify(_status_line(status).lstrip("\n"), env)


def notify_stopping(env=None) -> bool:
    return notify("STOPPING=1", env)


def watchdog_ping(env=None) -> bool:
    """``WATCHDOG=1``: the service is alive."""
    return notify("WATCHDOG=1", env)


def watchdog_interval(env=None) -> float | None:
    """The watchdog timeout in seconds when systemd asked this process for pings, else None."""
    env = os.environ if env is None else env
    usec = env.get("WATCHDOG_USEC")
    if not usec:
        return None
    pid = env.get("WATCHDOG_PID")
    if pid and pid.strip() != str(os.getpid()):
        return None  # the watchdog is meant for another process (e.g. our parent)
    try:
        value = int(usec)
    except ValueError:
        return None
    return value / 1e6 if value > 0 else None


class Watchdog:
    """Pings the watchdog every half interval while ``health()`` holds.

    When ``health()`` fails (or raises) the ping is skipped, so a wedged server (a stuck database,
    a dead writer) is restarted by systemd. ``wait`` is injected so tests need no real time:
    it is called with the seconds to wait and returns True to stop."""

    def __init__(self, interval: float, health=None, env=None, wait=None):
        self.interval = interval
        self.health = health
        self.env = env
        self._stop = threading.Event()
        self._wait = wait or self._stop.wait
        self.pings = 0
        self.skipped = 0
        self._thread: threading.Thread | None = None

    def beat(self) -> bool:
        """One check and ping (what the thread does every half interval)."""
        try:
            ok = self.health is None or bool(self.health())
        except Exception:
            log.exception("health check failed")
            ok = False
        if not ok:
            self.skipped += 1
            log.warning("health check failed: no watchdog ping")
            return False
        if watchdog_ping(self.env):
            self.pings += 1
            return True
        return False

    def run(self) -> None:
        while True:
            self.beat()
            if self._wait(self.interval / 2):
                return

    def start(self) -> "Watchdog":
        self._thread = threading.Thread(target=self.run, name="companion-watchdog", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


def start_watchdog(health=None, env=None) -> Watchdog | None:
    """Start pinging when systemd set ``WATCHDOG_USEC`` for this process; None otherwise."""
    interval = watchdog_interval(env)
    if interval is None or _address(env) is None:
        return None
    return Watchdog(interval, health=health, env=env).start()


def http_ok(host: str, port: int, path: str = "/healthz", timeout: float = 5.0) -> bool:
    """Whether the server answers ``GET path`` with 200."""
    import http.client

    try:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
        try:
            conn.request("GET", path, headers={"Host": f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"})
            return conn.getresponse().status == 200
        finally:
            conn.close()
    except (OSError, http.client.HTTPException):
        return False

