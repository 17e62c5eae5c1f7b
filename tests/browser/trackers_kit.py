"""Helpers of the tracker browser tests (tests/browser/test_trackers_*.py): phones that joined with the
table's QR link, a bearer-token API client for concurrent writes and exports, and the engine's own
fold of a match (the expected numbers come from companion/games/, never from the page)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys

from playwright.sync_api import expect


def joined_page(new_context, server, **kw):
    """A phone that scanned the club's join QR code (a player session; it lands on "Pick your table")."""
    ctx = new_context(**kw)
    page = ctx.new_page()
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.errors = []
    page.goto(server.join_url)
    expect(page.locator("#role-badge.role-player")).to_be_visible()
    return page


def organiser_page(new_context, server, pin="482193", **kw):
    """An organiser's phone: signed in with the PIN (chosen with the server's setup code on the first sign-in
    of this box)."""
    page = new_context(**kw).new_page()
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.errors = []
    page.goto("/login")
    r = page.request.post("/api/auth/pin", data={"pin": pin, "setup_code": server.setup_code},
                          headers={"Origin": server.url})
    if r.status != 200:  # the PIN was chosen before
        r = page.request.post("/api/auth/login", data={"pin": pin}, headers={"Origin": server.url})
    assert r.status == 200, r.text()
    return page


def open_match(page, mid, seat=None, block_stream=False):
    """The match page with the game's tracker mounted; ``seat``: whose phone this is."""
    if block_stream:  # a phone whose live updates are late: its next write is stale
        page.route("**/stream*", lambda route: route.abort())
    page.goto(f"/m/{mid}")
    page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
    if seat is not None:  # the page asks "Who are you?" once: the answer seats the phone
        page.click(f"#who-card .who-btn[data-player='{seat}']")
        page.wait_for_function("s => window.companionMatch.match && window.companionMatch.match.seat === s", arg=seat)
    return page


def wait_seq(page, n):
    """Until the page shows event ``n`` and its own write is answered: the live stream can bring the event
    before the write's answer, and a tap in between is refused as "wait" (one write at a time)."""
    page.wait_for_function("n => window.companionMatch && window.companionMatch.seq >= n && !window.companionMatch.busy",
                           arg=n)


def seq(page) -> int:
    return page.evaluate("window.companionMatch.seq")


class Api:
    """A script with a bearer token (no Origin needed)."""

    def __init__(self, server, token):
        self.server = server
        self.token = token

    def call(self, method, path, body=None):
        conn = http.client.HTTPConnection(self.server.host, timeout=30)
        h = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if body is not None:
            h["Content-Type"] = "application/json"
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
        r = conn.getresponse()
        data = r.read()
        conn.close()
        return r.status, (json.loads(data) if data else None)

    def ok(self, method, path, body=None):
        status, doc = self.call(method, path, body)
        assert status < 300, (status, doc)
        return doc

    def create(self, game, players, **options):
        return self.ok("POST", "/api/matches", {"game": game, "players": players, "options": options})["id"]

    def event(self, mid, type_, data):
        seq = self.ok("GET", f"/api/matches/{mid}")["seq"]
        return self.ok("POST", f"/api/matches/{mid}/events", {"type": type_, "data": data, "expected_seq": seq})

    def engine(self, mid):
        """The match folded by the engine from its exported events (organiser token)."""
        from companion.core.match import check_export

        return check_export(self.ok("GET", f"/api/matches/{mid}/export"))


def organiser_api(server, role: str = "organiser") -> Api:
    """A bearer-token client of ``role``, its token made by the CLI on the server's data folder."""
    p = subprocess.run([sys.executable, "-m", "companion", "token", "create", "--role", role,
                        "--data-dir", str(server.data_dir)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return Api(server, p.stdout.strip().splitlines()[-1])
