"""What the crash and concurrency tests share: a real server on 127.0.0.1 (tests/web/serverproc.py),
keep-alive HTTP clients, tokens, uniquely identifiable events, and the checks on the stored log.

Every event a test writes is a Richelieu ``track.adjust`` whose (player, track, delta) is unique in the test,
so each stored event names the one request that wrote it.
"""

from __future__ import annotations

import http.client
import itertools
import json
import socket
import sqlite3
import threading
from pathlib import Path

PLAYERS = ["Ada", "Bo", "Cy", "Di"]
TRACKS = ["money", "prestige", "military", "income"]  # positive deltas are always legal on these


def make_token(data_dir: Path, role: str = "player") -> str:
    from companion.storage import Store
    from companion.services.access import Access

    store = Store(Path(data_dir) / "companion.db")
    try:
        return Access(store).create_api_token(role, label="stress test")[0]
    finally:
        store.close()


class Payloads:
    """A thread-safe supply of unique track.adjust data (4 players x 4 tracks x 999 deltas)."""

    def __init__(self):
        self._it = ({"player": p, "track": t, "delta": d}
                    for d in range(1, 1000) for t in TRACKS for p in PLAYERS)
        self._lock = threading.Lock()

    def next(self) -> dict:
        with self._lock:
            return next(self._it)


def key(data: dict) -> tuple:
    return (data["player"], data["track"], data["delta"])


class Client:
    """One keep-alive connection with a bearer token (scripts send no Origin)."""

    def __init__(self, host: str, token: str, timeout: float = 30):
        self.host = host
        self.token = token
        self.timeout = timeout
        self.conn = None

    def request(self, method: str, path: str, body=None, headers=None):
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, timeout=self.timeout)
        h = {"Authorization": f"Bearer {self.token}"}
        if body is not None:
            h["Content-Type"] = "application/json"
        h.update(headers or {})
        try:
            self.conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
            r = self.conn.getresponse()
            raw = r.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        if r.getheader("Connection", "").lower() == "close":
            self.close()
        ctype = r.getheader("Content-Type", "")
        return r.status, (json.loads(raw) if raw and ctype.startswith("application/json") else raw)

    def close(self):
        if self.conn is not None:
            try:
                self.conn.close()
            except OSError:
                pass
            self.conn = None


def create_match(client: Client, players=PLAYERS) -> str:
    status, body = client.request("POST", "/api/matches", {"game": "richelieu", "players": list(players),
                                                           "label": "stress"})
    assert status == 201, body
    return body["id"]


def stored_events(db: Path, match_id: str) -> list[dict]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        rows = conn.execute("SELECT seq, type, data FROM events WHERE match_id=? ORDER BY seq", (match_id,))
        return [{"seq": s, "type": t, "data": json.loads(d)} for s, t, d in rows]
    finally:
        conn.close()


def integrity(db: Path) -> str:
    conn = sqlite3.connect(str(db), timeout=30)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
