"""Security under systematic and random probing (tests/web/test_auth.py has the single cases):

- every write route of the app (walked from its URL map, so a new route is covered by itself) refuses a
  caller without a session or token (401), a browser session with a foreign, missing or "null" Origin
  (403), and any request for a foreign Host (403);
- PIN guessing is rate limited per address with backoff: random sequences of sign-ins from several
  addresses with the clock moved by hand agree with an independent model of the limits (5 free failures per
  address, then 1, 2, 4 ... minutes, at most an hour; forgotten after a day); setup-code and join-link
  guessing are limited too;
- nobody can lock out the organiser: wrong PINs and bad join links from many addresses never refuse the
  organiser's correct PIN nor a valid join link;
- ending a join link ends the sessions made from it;
- join links expire (injected clock) and ended links are refused;
- no token, PIN, setup code or session id appears in any log record, in-process or in the real server's
  output after its start-up banner (the banner prints the join link and the first-run setup code on
  purpose: the organiser reads them from the terminal).
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import re
import sqlite3
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.stress.conftest import examples
from tests.web.conftest import Api

ORIGIN = "http://localhost"
SETUP = "13572468"
PIN = "246813"
# writes a caller without credentials may make by design: sign-in, first PIN, sign-out, a dry-run preview
# (the two previews store nothing and say only what the match's public state already shows: a viewer may ask)
OPEN_WRITES = {"auth.login", "auth.set_pin", "auth.logout", "trackers_richelieu.richelieu_preview",
               "trackers_wop.wop_check"}
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}


@pytest.fixture
def clock():
    from companion.base.timeutil import FakeClock

    return FakeClock("2026-03-01T20:00:00Z")


@pytest.fixture
def app(tmp_path, clock):
    from companion.storage import Store
    from companion.web.app import create_app

    store = Store(tmp_path / "companion.db", clock=clock)
    app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": SETUP,
                      "SSE_HEARTBEAT": 0.05})
    yield app
    store.close()


def organiser_client(app):
    a = Api(app.test_client())
    if app.extensions["companion"].access.pin_is_set():
        r = a.post("/api/auth/login", {"pin": PIN}, environ_base={"REMOTE_ADDR": "127.0.0.9"})
    else:
        r = a.post("/api/auth/pin", {"pin": PIN, "setup_code": SETUP})
    assert r.status_code == 200, r.json
    return a


@pytest.fixture
def ids(app):
    """Real ids for every kind of path parameter, so the checks run past 404s."""
    org = organiser_client(app)
    m = org.post("/api/matches", {"game": "richelieu", "players": ["Ada", "Bo"]})
    assert m.status_code == 201, m.json
    out = {"match_id": m.json["id"], "match": "x"}
    r = org.post("/api/clubs", {"name": "Club"})
    if r.status_code == 201:
        out["club_id"] = r.json["id"]
        r = org.post("/api/seasons", {"club": "Club", "game": "conquest-italy", "year": 2026})
        if r.status_code == 201:
            out["season_id"] = r.json["id"]
    return out


def write_routes(app, ids):
    out = []
    for rule in app.url_map.iter_rules():
        for method in sorted(set(rule.methods) & WRITE_METHODS):
            path = rule.rule
            for name in rule.arguments:
                # a whole-number argument (<int:n>) takes "1": a route that does not match is a 404, not a write
                m = re.search(r"<(\w+:)?%s>" % name, path)
                fill = ids.get(name, "1" if m and m.group(1) == "int:" else "x")
                path = re.sub(r"<(?:\w+:)?%s>" % name, fill, path)
            out.append((rule.endpoint, method, path))
    assert len(out) >= 20, out
    return sorted(out)


def events_count(app) -> int:
    return app.extensions["companion"].store.conn().execute("SELECT COUNT(*) FROM events").fetchone()[0]


def test_every_write_without_credentials_is_401(app, ids):
    c = app.test_client()
    before = events_count(app)
    checked = 0
    for endpoint, method, path in write_routes(app, ids):
        if endpoint in OPEN_WRITES:
            continue
        for headers in ({"Origin": ORIGIN}, {"Origin": ORIGIN, "Cookie": "companion_sid=forged-or-expired"}):
            r = c.open(path, method=method, json={}, headers=headers)
            assert r.status_code == 401, (endpoint, method, path, r.status_code, r.get_data(as_text=True)[:200])
            assert r.json["field"] == "Authorization" and r.headers["WWW-Authenticate"].startswith("Bearer")
        r = c.open(path, method=method, json={}, headers={"Authorization": "Bearer cpn_not-a-token"})
        assert r.status_code == 401, (endpoint, r.json)
        checked += 1
    assert checked >= 18
    assert events_count(app) == before


def test_open_writes_grant_nothing(app, ids):
    c = Api(app.test_client())
    organiser_client(app)  # the PIN is set: /api/auth/pin now needs the organiser
    assert c.post("/api/auth/pin", {"pin": "111111", "setup_code": SETUP}).status_code == 401
    assert c.post("/api/auth/login", {"pin": "0000"}).status_code == 401
    assert c.post("/api/auth/logout").status_code == 200
    before = events_count(app)
    c.post(f"/api/matches/{ids['match_id']}/richelieu/preview", {})
    c.post(f"/api/matches/{ids['match_id']}/wop/check", {"placements": [{}]})
    assert events_count(app) == before
    assert c.get("/api/auth/me").json["role"] == "viewer"


@pytest.mark.parametrize("bad", [{"Origin": "http://evil.example"}, {"Origin": "null"}, {},
                                 {"Origin": "http://localhost:8080"}, {"Referer": "http://evil.example/x"},
                                 {"Origin": "https://localhost"}])
def test_every_write_from_a_foreign_origin_is_403(app, ids, bad):
    org = organiser_client(app)
    before = events_count(app)
    for endpoint, method, path in write_routes(app, ids):
        r = org.c.open(path, method=method, json={}, headers=bad)  # the session cookie rides along
        assert r.status_code == 403, (endpoint, method, path, bad, r.status_code)
        assert r.json["field"] == "Origin"
    assert events_count(app) == before
    # a bearer token that shows a foreign Origin is refused too (only scripts that send none are trusted)
    from companion.services.access import Access

    token = Access(app.extensions["companion"].store).create_api_token("organiser")[0]
    if "Origin" in bad:
        r = app.test_client().post("/api/matches", json={"game": "richelieu", "players": ["A", "B"]},
                                   headers={"Authorization": f"Bearer {token}", **bad})
        assert r.status_code == 403


@pytest.mark.parametrize("host", ["evil.example", "evil.example:80", "localhost.evil.example", "127.0.0.1.nip.io",
                                  "", "[::2]"])
def test_every_route_for_a_foreign_host_is_403(app, ids, host):
    org = organiser_client(app)
    for endpoint, method, path in write_routes(app, ids) + [("get", "GET", "/api/matches"),
                                                            ("get", "GET", "/healthz"), ("get", "GET", "/")]:
        r = org.c.open(path, method=method, json={}, headers={"Host": host, "Origin": f"http://{host}"})
        assert r.status_code == 403, (endpoint, path, host, r.status_code)


# -- PIN guessing against an independent model of the limits --------------------------------------------
FREE, BASE, CAP, MEMORY = 5, 60, 3600, 24 * 3600


class LimitModel:
    def __init__(self):
        self.failures = []  # (t, address)

    def wait(self, t, address) -> float:
        mine = [ft for ft, a in self.failures if a == address and ft > t - MEMORY]
        if len(mine) < FREE:
            return 0
        return max(0, mine[-1] + min(BASE * 2 ** (len(mine) - FREE), CAP) - t)

    def attempt(self, t, address, right: bool) -> int:
        if self.wait(t, address) > 0:
            return 429
        if not right:
            self.failures.append((t, address))
            return 401
        self.failures = [(ft, a) for ft, a in self.failures if a != address]  # success forgives this address
        return 200


steps = st.lists(st.tuples(st.sampled_from(["192.168.1.10", "192.168.1.11", "192.168.1.12"]) |
                           st.integers(0, 40).map(lambda i: f"10.0.0.{i}"),
                           st.booleans(),
                           st.sampled_from([0, 0, 0, 1, 30, 59, 60, 61, 119, 120, 600, 3599, 3600, 86400])),
                 min_size=1, max_size=60)


@settings(max_examples=examples(25, 300), suppress_health_check=list(HealthCheck), deadline=None, database=None)
@given(plan=steps)
def test_pin_guessing_follows_the_rate_limit_model(tmp_path_factory, plan):
    from companion.storage import Store
    from companion.base.timeutil import FakeClock
    from companion.web.app import create_app

    clock = FakeClock("2026-03-01T20:00:00Z")
    store = Store(tmp_path_factory.mktemp("pin") / "c.db", clock=clock)
    mp = pytest.MonkeyPatch()
    mp.setattr("companion.services.access.PIN_ITERATIONS", 1000)  # the limits are under test, not PBKDF2's cost
    try:
        app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": SETUP})
        organiser_client(app)
        a = Api(app.test_client())
        model = LimitModel()
        t = 0
        for address, right, wait in plan:
            clock.advance(wait)
            t += wait
            r = a.post("/api/auth/login", {"pin": PIN if right else "0000"}, environ_base={"REMOTE_ADDR": address})
            want = model.attempt(t, address, right)
            assert r.status_code == want, (address, right, t, r.json)
            if want == 429:
                assert int(r.headers["Retry-After"]) == math.ceil(model.wait(t, address)), (address, t)
                assert r.json["field"] == "$.pin"
            a.post("/api/auth/logout")
    finally:
        mp.undo()
        store.close()


def test_setup_code_and_join_link_guessing_are_limited(app):
    a = Api(app.test_client())
    env = {"REMOTE_ADDR": "192.168.1.77"}
    for i in range(FREE):
        assert a.post("/api/auth/pin", {"pin": "123456", "setup_code": f"0000000{i}"},
                      environ_base=env).status_code == 401
    r = a.post("/api/auth/pin", {"pin": "123456", "setup_code": SETUP}, environ_base=env)  # even the right one
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0
    c = app.test_client()
    for i in range(FREE):
        assert c.get(f"/j/guess{i}", environ_base=env).status_code == 404
    r = c.get("/j/guess", environ_base=env)
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0
    from companion.web.auth import current_join

    with app.test_request_context("/"):
        url = current_join("http://localhost")["url"]
    # join tokens are unguessable: a real link is never refused, not even from the guessing address
    assert c.get(url[len("http://localhost"):], environ_base=env).status_code == 303
    assert c.get(url[len("http://localhost"):], environ_base={"REMOTE_ADDR": "192.168.1.78"}).status_code == 303


def test_nobody_can_lock_out_the_organiser_or_new_players(app, clock, monkeypatch):
    """Wrong PINs and bad join links from many addresses, kept up for an hour (the old global limit: 30 in
    15 minutes locked everyone out), never refuse the organiser's correct PIN nor a valid join link."""
    from companion.web.auth import current_join

    monkeypatch.setattr("companion.services.access.PIN_ITERATIONS", 1000)  # the limits are under test, not PBKDF2's cost
    organiser_client(app)
    attacker = Api(app.test_client())
    with app.test_request_context("/"):
        url = current_join("http://localhost")["url"][len("http://localhost"):]
    for minute in range(0, 60, 15):
        for i in range(30):
            env = {"REMOTE_ADDR": f"10.66.{minute}.{i}"}
            assert attacker.post("/api/auth/login", {"pin": f"{i:06d}"}, environ_base=env).status_code == 401
            assert attacker.c.get(f"/j/bad{i}", environ_base=env).status_code == 404
        for _ in range(FREE + 3):  # and one address that keeps trying, locked for itself alone
            attacker.post("/api/auth/login", {"pin": "000000"}, environ_base={"REMOTE_ADDR": "10.66.99.99"})
        r = attacker.post("/api/auth/login", {"pin": PIN}, environ_base={"REMOTE_ADDR": "10.66.99.99"})
        assert r.status_code == 429  # the address that keeps guessing waits, even with the right PIN
        org = Api(app.test_client())
        r = org.post("/api/auth/login", {"pin": PIN}, environ_base={"REMOTE_ADDR": "192.168.1.2"})
        assert r.status_code == 200, r.json
        assert org.get("/api/auth/me").json["role"] == "organiser"
        new_player = app.test_client()
        assert new_player.get(url, environ_base={"REMOTE_ADDR": "192.168.1.3"}).status_code == 303
        assert Api(new_player).get("/api/auth/me").json["role"] == "player"
        clock.advance(15 * 60)


def test_ending_a_join_link_ends_its_sessions(app):
    """Sessions made from a revoked join link used to keep the player role for 14 days."""
    org = organiser_client(app)
    path = org.post("/api/auth/join-tokens", {"hours": 12}).json["url"].split("localhost", 1)[1]
    phones = [Api(app.test_client()) for _ in range(3)]
    for p in phones:
        assert p.c.get(path).status_code == 303
    m = phones[0].post("/api/matches", {"game": "richelieu", "players": ["Ada", "Bo"]})
    assert m.status_code == 201
    org.post("/api/auth/join-tokens", {"hours": 12, "revoke_others": True})
    for p in phones:
        assert p.get("/api/auth/me").json["role"] == "viewer"
        r = p.post(f"/api/matches/{m.json['id']}/events",
                   {"type": "track.adjust", "data": {"player": "Ada", "track": "money", "delta": 1}, "expected_seq": 0})
        assert r.status_code == 401
    assert org.get("/api/auth/me").json["role"] == "organiser"


@settings(max_examples=examples(15, 100), suppress_health_check=list(HealthCheck), deadline=None, database=None)
@given(hours=st.integers(1, 48), early=st.integers(1, 3600), late=st.integers(0, 3600))
def test_join_links_expire(tmp_path_factory, hours, early, late):
    from companion.storage import Store
    from companion.base.timeutil import FakeClock
    from companion.web.app import create_app

    clock = FakeClock("2026-03-01T20:00:00Z")
    store = Store(tmp_path_factory.mktemp("join") / "c.db", clock=clock)
    try:
        app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": SETUP})
        org = organiser_client(app)
        r = org.post("/api/auth/join-tokens", {"hours": hours})
        assert r.status_code == 201, r.json
        path = r.json["url"].split("localhost", 1)[1]
        clock.advance(hours * 3600 - early)
        assert app.test_client().get(path, environ_base={"REMOTE_ADDR": "10.1.0.1"}).status_code == 303
        clock.advance(early + late)  # at or past expires_at
        r = app.test_client().get(path, environ_base={"REMOTE_ADDR": "10.1.0.2"})
        assert r.status_code == 404 and "companion_sid" not in r.headers.get("Set-Cookie", "")
    finally:
        store.close()


def test_ended_join_links_are_refused(app, clock):
    org = organiser_client(app)
    old = org.post("/api/auth/join-tokens", {"hours": 12}).json["url"].split("localhost", 1)[1]
    new = org.post("/api/auth/join-tokens", {"hours": 12, "revoke_others": True}).json["url"].split("localhost", 1)[1]
    assert app.test_client().get(old).status_code == 404
    assert app.test_client().get(new).status_code == 303


# -- secrets never reach the logs ----------------------------------------------------------------------
class Everything(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(self.format(record))


def _secrets_session(app, monkeypatch):
    """Sign in, join, use tokens, make errors (some of them unexpected) and return every secret used."""
    from companion.services.access import Access
    from companion.web.auth import current_join

    secrets = {SETUP, PIN}
    org = organiser_client(app)
    secrets.add(org.c.get_cookie("companion_sid").value)
    store = app.extensions["companion"].store
    token = Access(store).create_api_token("organiser")[0]
    secrets.add(token)
    bearer = Api(app.test_client(), bearer=token, origin=None)
    m = bearer.post("/api/matches", {"game": "richelieu", "players": ["Ada", "Bo"]}).json["id"]
    with app.test_request_context("/"):
        join_url = current_join("http://localhost")["url"]
    join_token = join_url.rsplit("/", 1)[1]
    secrets.add(join_token)
    p = app.test_client()
    assert p.get(f"/j/{join_token}").status_code == 303
    secrets.add(p.get_cookie("companion_sid").value)
    a = Api(app.test_client())
    a.post("/api/auth/login", {"pin": "999999"})  # wrong PIN
    a.post("/api/auth/login", {"pin": PIN, "extra": PIN})  # refused body carrying the PIN
    a.post("/api/auth/pin", {"pin": "13579", "current_pin": PIN})  # a viewer tries to change it
    Api(app.test_client(), bearer=token + "x", origin=None).get("/api/matches")
    bearer.post(f"/api/matches/{m}/events", {"type": "track.adjust", "data": {"player": token}, "expected_seq": 0})
    # the storage fails in the middle of a join and of a bearer request: the catch-all handler logs
    # the error, and must not log the token that was in the path or in the header
    monkeypatch.setattr(Access, "join_token", lambda self, t: (_ for _ in ()).throw(
        sqlite3.OperationalError("database is locked")))
    r = app.test_client().get(f"/j/{join_token}")
    assert r.status_code == 503
    monkeypatch.setattr(Access, "api_token", lambda self, t: (_ for _ in ()).throw(
        sqlite3.OperationalError("database is locked")))
    assert Api(app.test_client(), bearer=token, origin=None).get("/api/matches").status_code == 503
    return secrets


def test_no_secret_in_the_apps_logs(app, monkeypatch):
    handler = Everything()
    handler.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        secrets = _secrets_session(app, monkeypatch)
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    assert any("internal error" in line for line in handler.lines), "the forced failures must be logged"
    text = "\n".join(handler.lines)
    for s in secrets:
        assert s not in text, f"a secret ({s[:4]}...) appears in the log"


def test_no_secret_in_the_real_servers_output(tmp_path):
    from tests.stress.harness import Client, make_token
    from tests.web.serverproc import Server

    data = tmp_path / "data"
    token = make_token(data, "organiser")
    server = Server(data, {"COMPANION_SSE_HEARTBEAT": "600"})
    banner = "".join(server.lines)
    tail = []
    try:
        # the drain thread of serverproc swallows stdout: read what comes after the banner ourselves
        setup = server.setup_code
        join_token = server.join_url.rsplit("/", 1)[1]
        secrets = {token, setup, join_token, PIN}
        host = server.host

        def call(method, path, body=None, headers=None):
            conn = http.client.HTTPConnection(host, timeout=20)
            h = {"Content-Type": "application/json", **(headers or {})}
            conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
            r = conn.getresponse()
            r.read()
            conn.close()
            return r

        origin = {"Origin": server.url}
        r = call("POST", "/api/auth/pin", {"pin": PIN, "setup_code": "00000000"}, origin)  # wrong setup code
        assert r.status == 401
        r = call("POST", "/api/auth/pin", {"pin": PIN, "setup_code": setup}, origin)
        assert r.status == 200
        sid = r.getheader("Set-Cookie").split(";", 1)[0].split("=", 1)[1]
        secrets.add(sid)
        assert call("POST", "/api/auth/login", {"pin": "000000"}, origin).status == 401
        assert call("POST", "/api/auth/login", {"pin": PIN}, origin).status == 200
        assert call("GET", f"/j/{join_token}").status == 303
        assert call("GET", "/api/matches", headers={"Authorization": f"Bearer {token}x"}).status == 401
        c = Client(host, token)
        status, body = c.request("POST", "/api/matches", {"game": "richelieu", "players": ["Ada", "Bo"]})
        assert status == 201
        c.request("POST", f"/api/matches/{body['id']}/events",
                  {"type": "track.adjust", "data": {"player": PIN}, "expected_seq": 0})
        c.close()
    finally:
        err = server.stop()
    assert setup in banner and join_token in banner  # printed on purpose, once, at start
    for s in secrets:
        assert s not in err, f"a secret ({s[:4]}...) appears in the server's log (stderr)"
