"""Roles, join links, the organiser PIN and its rate limit, bearer tokens, CSRF (Origin) and Host checks."""

import pytest

from tests.web.conftest import Api, join

BODY = {"game": "richelieu", "players": ["Anna", "Bruno"]}


def test_viewer_reads_but_cannot_write(fake_game, api):
    assert api.get("/api/matches").status_code == 200
    r = api.post("/api/matches", BODY)
    assert r.status_code == 401 and r.json["field"] == "Authorization"
    assert r.headers["WWW-Authenticate"].startswith("Bearer")
    assert api.get("/api/auth/me").json["role"] == "viewer"


def test_join_link_gives_a_player_session_and_leaves_the_url(app, fake_game):
    c = app.test_client()
    r = join(app, c)
    assert r.headers["Location"] == "/"  # the token is gone from the address
    assert r.headers["Referrer-Policy"] == "no-referrer"
    cookie = r.headers["Set-Cookie"]
    assert "companion_sid=" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    a = Api(c)
    assert a.get("/api/auth/me").json == {"role": "player", "via": "session", "pin_set": False, "seats": {},
                                          "viewers_allowed": True}
    assert a.post("/api/matches", BODY).status_code == 201
    assert a.post("/api/matches/import", {}).status_code == 403  # organisers only


def test_join_link_for_a_match_redirects_there(app, organiser, fake_game):
    mid = organiser.post("/api/matches", BODY).json["id"]
    r = organiser.post("/api/auth/join-tokens", {"match_id": mid, "hours": 2})
    assert r.status_code == 201
    path = r.json["url"].split("localhost", 1)[1]
    c = app.test_client()
    r = c.get(path)
    assert r.status_code == 303 and r.headers["Location"] == f"/m/{mid}"
    assert organiser.post("/api/auth/join-tokens", {"match_id": "nope"}).json["field"] == "$.match_id"


def test_join_links_expire(app, clock):
    from companion.web.auth import current_join

    with app.test_request_context("/"):
        url = current_join("http://localhost")["url"]
    clock.advance(12 * 3600 + 1)
    r = app.test_client().get(url[len("http://localhost"):])
    assert r.status_code == 404 and b"expired" in r.data
    with app.test_request_context("/"):
        fresh = current_join("http://localhost")["url"]  # the screen shows a new one by itself
    assert fresh != url
    assert app.test_client().get(fresh[len("http://localhost"):]).status_code == 303


def test_new_join_link_can_end_the_old_ones(app, organiser):
    first = organiser.post("/api/auth/join-tokens", {}).json["url"].split("localhost", 1)[1]
    second = organiser.post("/api/auth/join-tokens", {"revoke_others": True}).json["url"].split("localhost", 1)[1]
    assert app.test_client().get(first).status_code == 404
    assert app.test_client().get(second).status_code == 303
    assert organiser.get("/api/auth/join").json["url"].endswith(second)


def test_wrong_join_tokens_are_rate_limited(app):
    c = app.test_client()
    for _ in range(5):
        assert c.get("/j/guess").status_code == 404
    r = c.get("/j/guess")
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0


def test_organiser_does_not_become_a_player_by_scanning(app, organiser):
    join(app, organiser.c)
    assert organiser.get("/api/auth/me").json["role"] == "organiser"


def test_join_page_only_for_organisers_or_the_pi_itself(app, organiser, api):
    assert b"<svg" in organiser.get("/join").data
    assert b"<svg" not in api.get("/join", environ_base={"REMOTE_ADDR": "192.168.1.20"}).data
    assert api.get("/api/auth/join", environ_base={"REMOTE_ADDR": "192.168.1.20"}).status_code == 401
    assert api.get("/api/auth/join", environ_base={"REMOTE_ADDR": "127.0.0.1"}).status_code == 200


# -- PIN -------------------------------------------------------------------------------------
def test_first_run_pin_needs_the_setup_code(app, api):
    assert api.post("/api/auth/login", {"pin": "1234"}).status_code == 409  # no PIN yet
    r = api.post("/api/auth/pin", {"pin": "1234"})
    assert r.status_code == 400 and r.json["field"] == "$.setup_code"
    r = api.post("/api/auth/pin", {"pin": "1234", "setup_code": "00000000"})
    assert r.status_code == 401 and r.json["field"] == "$.setup_code"
    r = api.post("/api/auth/pin", {"pin": "12", "setup_code": "13572468"})
    assert r.status_code == 400 and r.json["field"] == "$.pin"
    r = api.post("/api/auth/pin", {"pin": "1234", "setup_code": "13572468"})
    assert r.status_code == 200 and api.get("/api/auth/me").json["role"] == "organiser"
    # once set, the setup code is useless
    other = Api(app.test_client())
    r = other.post("/api/auth/pin", {"pin": "9999", "setup_code": "13572468"})
    assert r.status_code == 401 and r.json["field"] == "Authorization"


def test_login_logout_and_pin_change(app, organiser):
    a = Api(app.test_client())
    r = a.post("/api/auth/login", {"pin": "0000"})
    assert r.status_code == 401 and r.json["field"] == "$.pin"
    r = a.post("/api/auth/login", {"pin": "2468"})
    assert r.status_code == 200 and a.get("/api/auth/me").json["role"] == "organiser"
    r = a.post("/api/auth/pin", {"pin": "5555", "current_pin": "1111"})
    assert r.status_code == 401 and r.json["field"] == "$.current_pin"
    assert a.post("/api/auth/pin", {"pin": "5555", "current_pin": "2468"}).status_code == 200
    assert a.post("/api/auth/logout").status_code == 200
    assert a.get("/api/auth/me").json["role"] == "viewer"
    assert a.post("/api/auth/login", {"pin": "2468"}).status_code == 401
    assert a.post("/api/auth/login", {"pin": "5555"}).status_code == 200


def test_failed_pins_are_rate_limited_per_client_and_then_forgiven(app, organiser, clock):
    a = Api(app.test_client())
    env = {"REMOTE_ADDR": "192.168.1.50"}
    for _ in range(5):
        assert a.post("/api/auth/login", {"pin": "0000"}, environ_base=env).status_code == 401
    r = a.post("/api/auth/login", {"pin": "2468"}, environ_base=env)  # even the right PIN waits
    assert r.status_code == 429 and r.json["field"] == "$.pin"
    assert 0 < int(r.headers["Retry-After"]) <= 15 * 60
    # another phone is not locked out by this one
    assert a.post("/api/auth/login", {"pin": "2468"}, environ_base={"REMOTE_ADDR": "192.168.1.51"}).status_code == 200
    clock.advance(15 * 60 + 1)
    assert a.post("/api/auth/login", {"pin": "2468"}, environ_base=env).status_code == 200


def test_failed_pins_are_rate_limited_overall(app, organiser):
    a = Api(app.test_client())
    for i in range(30):
        env = {"REMOTE_ADDR": f"10.0.{i // 4}.{i}"}  # at most 4 per address: under the per-client limit
        assert a.post("/api/auth/login", {"pin": "0000"}, environ_base=env).status_code == 401
    r = a.post("/api/auth/login", {"pin": "2468"}, environ_base={"REMOTE_ADDR": "10.9.9.9"})
    assert r.status_code == 429


def test_sessions_expire(app, player, clock):
    assert player.get("/api/auth/me").json["role"] == "player"
    clock.advance(14 * 24 * 3600 + 1)
    assert player.get("/api/auth/me").json["role"] == "viewer"


# -- bearer tokens -------------------------------------------------------------------------------
def test_bearer_tokens(app, fake_game, tokens, store, clock):
    from companion.access import Access

    p = Api(app.test_client(), bearer=tokens["player"], origin=None)  # scripts send no Origin
    o = Api(app.test_client(), bearer=tokens["organiser"], origin=None)
    assert p.get("/api/auth/me").json["role"] == "player"
    assert p.post("/api/matches", BODY).status_code == 201
    assert p.post("/api/matches/import", {}).status_code == 403
    assert o.put("/api/auth/settings", {"viewers_allowed": True}).status_code == 200
    for bad in ("Bearer nope", "Basic abc", "Bearer", "token"):
        r = app.test_client().get("/api/matches", headers={"Authorization": bad})
        assert r.status_code == 401 and r.json["field"] == "Authorization"
    acc = Access(store)
    tid = next(t["id"] for t in acc.list_api_tokens() if t["role"] == "player")
    acc.revoke_api_token(tid)
    assert p.get("/api/auth/me").status_code == 401
    token, _ = acc.create_api_token("player", days=1)
    short = Api(app.test_client(), bearer=token)
    assert short.get("/api/auth/me").status_code == 200
    clock.advance(24 * 3600 + 1)
    assert short.get("/api/auth/me").status_code == 401


# -- CSRF ----------------------------------------------------------------------------------------
def test_session_writes_need_this_servers_origin(fake_game, player):
    c = player.c
    r = c.post("/api/matches", json=BODY)  # no Origin, no Referer
    assert r.status_code == 403 and r.json["field"] == "Origin"
    r = c.post("/api/matches", json=BODY, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and r.json["field"] == "Origin"
    r = c.post("/api/matches", json=BODY, headers={"Origin": "null"})
    assert r.status_code == 403
    r = c.post("/api/matches", json=BODY, headers={"Origin": "http://localhost:8080"})  # another port
    assert r.status_code == 403
    r = c.post("/api/matches", json=BODY, headers={"Referer": "http://localhost/new"})
    assert r.status_code == 201
    r = c.post("/api/matches", json=BODY, headers={"Referer": "http://localhost.evil.example/new"})
    assert r.status_code == 403
    assert c.post("/api/matches", json=BODY, headers={"Origin": "http://localhost"}).status_code == 201


def test_even_sign_in_checks_the_origin(organiser):
    r = organiser.c.post("/api/auth/login", json={"pin": "2468"}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403
    r = organiser.c.post("/api/auth/logout", headers={"Origin": "http://evil.example"})
    assert r.status_code == 403


def test_bearer_with_a_foreign_origin_is_refused(fake_game, tokens, app):
    a = Api(app.test_client(), bearer=tokens["player"], origin="http://evil.example")
    assert a.post("/api/matches", BODY).status_code == 403


# -- Host allow-list --------------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["evil.example", "evil.example:8080", "localhost.evil.example", "", "[::2]:80"])
def test_foreign_hosts_are_refused(client, host):
    r = client.get("/api/matches", headers={"Host": host})
    assert r.status_code == 403 and r.json["field"] == "Host"


@pytest.mark.parametrize("host", ["localhost", "localhost:8080", "127.0.0.1:9000", "[::1]:8080"])
def test_local_hosts_are_served(client, host):
    assert client.get("/api/matches", headers={"Host": host}).status_code == 200


def test_configured_and_lan_hosts_are_served(store):
    from companion.web import netinfo
    from companion.web.app import create_app

    app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "ALLOWED_HOSTS": ["club-pi.local"]})
    c = app.test_client()
    assert c.get("/healthz", headers={"Host": "club-pi.local:8080"}).status_code == 200
    for ip in netinfo.local_addresses():
        host = f"[{ip}]" if ":" in ip else ip
        assert c.get("/healthz", headers={"Host": host}).status_code == 200, ip


# -- viewers turned off ----------------------------------------------------------------------------
def test_club_can_turn_viewers_off(app, organiser, player, api):
    assert player.put("/api/auth/settings", {"viewers_allowed": False}).status_code == 403
    r = organiser.put("/api/auth/settings", {"viewers_allowed": False})
    assert r.status_code == 200 and r.json["viewers_allowed"] is False
    assert api.get("/api/matches").status_code == 401
    assert api.get("/").status_code == 401
    assert api.get("/login").status_code == 200
    assert api.get("/healthz").status_code == 200
    assert player.get("/api/matches").status_code == 200
    assert organiser.get("/api/auth/settings").json == {"viewers_allowed": False, "join_token_hours": 12.0}
    assert organiser.put("/api/auth/settings", {}).json["field"] == "$"
