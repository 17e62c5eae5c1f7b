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
    assert r.headers["Location"] == "/pick"  # the token is gone from the address; the phone picks its table
    assert r.headers["Referrer-Policy"] == "no-referrer"
    cookie = r.headers["Set-Cookie"]
    assert "companion_sid=" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    a = Api(c)
    assert a.get("/api/auth/me").json == {"role": "player", "via": "session", "pin_set": False, "seats": {},
                                          "match_id": None, "viewers_allowed": True}
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


def test_wrong_join_tokens_are_rate_limited_per_address_and_never_block_a_valid_one(app):
    from companion.web.auth import current_join

    c = app.test_client()
    for _ in range(5):
        assert c.get("/j/guess").status_code == 404
    r = c.get("/j/guess")
    assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0
    # another address is not slowed down by this one
    assert c.get("/j/guess", environ_base={"REMOTE_ADDR": "192.168.1.99"}).status_code == 404
    # a valid link still joins from the address that guessed
    with app.test_request_context("/"):
        url = current_join("http://localhost")["url"]
    assert c.get(url[len("http://localhost"):]).status_code == 303


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
    assert api.post("/api/auth/login", {"pin": "123456"}).status_code == 409  # no PIN yet
    r = api.post("/api/auth/pin", {"pin": "123456"})
    assert r.status_code == 400 and r.json["field"] == "$.setup_code"
    r = api.post("/api/auth/pin", {"pin": "123456", "setup_code": "00000000"})
    assert r.status_code == 401 and r.json["field"] == "$.setup_code"
    r = api.post("/api/auth/pin", {"pin": "12", "setup_code": "13572468"})
    assert r.status_code == 400 and r.json["field"] == "$.pin"
    r = api.post("/api/auth/pin", {"pin": "12345", "setup_code": "13572468"})  # at least 6 digits
    assert r.status_code == 400 and r.json["field"] == "$.pin"
    r = api.post("/api/auth/pin", {"pin": "123456", "setup_code": "13572468"})
    assert r.status_code == 200 and api.get("/api/auth/me").json["role"] == "organiser"
    # once set, the setup code is useless
    other = Api(app.test_client())
    r = other.post("/api/auth/pin", {"pin": "999999", "setup_code": "13572468"})
    assert r.status_code == 401 and r.json["field"] == "Authorization"


def test_login_logout_and_pin_change(app, organiser):
    a = Api(app.test_client())
    r = a.post("/api/auth/login", {"pin": "000000"})
    assert r.status_code == 401 and r.json["field"] == "$.pin"
    r = a.post("/api/auth/login", {"pin": "246813"})
    assert r.status_code == 200 and a.get("/api/auth/me").json["role"] == "organiser"
    r = a.post("/api/auth/pin", {"pin": "555555", "current_pin": "111111"})
    assert r.status_code == 401 and r.json["field"] == "$.current_pin"
    r = a.post("/api/auth/pin", {"pin": "5555", "current_pin": "246813"})  # too short now
    assert r.status_code == 400 and r.json["field"] == "$.pin"
    assert a.post("/api/auth/pin", {"pin": "555555", "current_pin": "246813"}).status_code == 200
    assert a.post("/api/auth/logout").status_code == 200
    assert a.get("/api/auth/me").json["role"] == "viewer"
    assert a.post("/api/auth/login", {"pin": "246813"}).status_code == 401
    assert a.post("/api/auth/login", {"pin": "555555"}).status_code == 200


def test_a_short_pin_stored_before_keeps_working_until_changed(app, store):
    """PINs of 4 or 5 digits set before the 6-digit rule still sign in; a new one must have 6."""
    import hashlib

    salt = "00" * 16
    store.set_setting("web.pin", {"salt": salt, "iterations": 1000,
                                  "hash": hashlib.pbkdf2_hmac("sha256", b"2468", bytes.fromhex(salt), 1000).hex()})
    a = Api(app.test_client())
    assert a.post("/api/auth/login", {"pin": "2468"}).status_code == 200
    assert a.post("/api/auth/pin", {"pin": "1357", "current_pin": "2468"}).json["field"] == "$.pin"
    assert a.post("/api/auth/pin", {"pin": "135790", "current_pin": "2468"}).status_code == 200


def test_failed_pins_back_off_per_address_and_are_forgiven(app, organiser, clock):
    a = Api(app.test_client())
    env = {"REMOTE_ADDR": "192.168.1.50"}
    for _ in range(5):
        assert a.post("/api/auth/login", {"pin": "000000"}, environ_base=env).status_code == 401
    r = a.post("/api/auth/login", {"pin": "246813"}, environ_base=env)  # even the right PIN waits
    assert r.status_code == 429 and r.json["field"] == "$.pin"
    assert 0 < int(r.headers["Retry-After"]) <= 60
    # another phone is not locked out by this one
    assert a.post("/api/auth/login", {"pin": "246813"}, environ_base={"REMOTE_ADDR": "192.168.1.51"}).status_code == 200
    clock.advance(61)
    assert a.post("/api/auth/login", {"pin": "000000"}, environ_base=env).status_code == 401
    r = a.post("/api/auth/login", {"pin": "000000"}, environ_base=env)
    assert r.status_code == 429 and 60 < int(r.headers["Retry-After"]) <= 120  # the wait doubles
    clock.advance(121)
    assert a.post("/api/auth/login", {"pin": "246813"}, environ_base=env).status_code == 200
    assert a.post("/api/auth/login", {"pin": "000000"}, environ_base=env).status_code == 401  # forgiven


def test_no_overall_lock_refuses_the_right_pin(app, organiser, monkeypatch):
    monkeypatch.setattr("companion.services.access.PIN_ITERATIONS", 1000)  # (the limit is under test, not PBKDF2)
    a = Api(app.test_client())
    organiser.post("/api/auth/pin", {"pin": "246813", "current_pin": "246813"})  # stored at the low cost
    for i in range(60):
        env = {"REMOTE_ADDR": f"10.0.{i // 4}.{i}"}
        assert a.post("/api/auth/login", {"pin": "000000"}, environ_base=env).status_code == 401
    r = a.post("/api/auth/login", {"pin": "246813"}, environ_base={"REMOTE_ADDR": "10.9.9.9"})
    assert r.status_code == 200


def test_sessions_expire(app, player, clock):
    assert player.get("/api/auth/me").json["role"] == "player"
    clock.advance(14 * 24 * 3600 + 1)
    assert player.get("/api/auth/me").json["role"] == "viewer"


# -- bearer tokens -------------------------------------------------------------------------------
def test_bearer_tokens(app, fake_game, tokens, store, clock):
    from companion.services.access import Access

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
    r = organiser.c.post("/api/auth/login", json={"pin": "246813"}, headers={"Origin": "http://evil.example"})
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


# -- recovery: `companion pin reset` ------------------------------------------------------------------
def test_pin_reset_code_sets_a_new_pin_once_and_ends_organiser_sessions(app, organiser, store, clock):
    from companion.services.access import Access

    a = Api(app.test_client())
    r = a.post("/api/auth/pin", {"pin": "777777", "setup_code": "1234567890"})
    assert r.status_code == 401 and r.json["field"] == "Authorization"  # no reset asked for: nothing to use
    code, _ = Access(store).create_reset_code()  # what `companion pin reset` does on the box
    r = a.post("/api/auth/pin", {"pin": "777777", "setup_code": "0000000000"})
    assert r.status_code == 401 and r.json["field"] == "$.setup_code"
    assert a.post("/api/auth/pin", {"pin": "777777", "setup_code": code}).status_code == 200
    assert a.get("/api/auth/me").json["role"] == "organiser"
    assert organiser.get("/api/auth/me").json["role"] == "viewer"  # the old organiser session ended
    assert Api(app.test_client()).post("/api/auth/login", {"pin": "777777"}).status_code == 200
    assert Api(app.test_client()).post("/api/auth/login", {"pin": "246813"}).status_code == 401
    r = Api(app.test_client()).post("/api/auth/pin", {"pin": "888888", "setup_code": code})  # used up
    assert r.status_code == 401
    # a player's phone may be the one at hand: it becomes the organiser's and its seats come along
    from tests.web.conftest import join

    code, _ = Access(store).create_reset_code()
    p = Api(app.test_client())
    join(app, p.c)
    sess = app.extensions["companion"].access.session(p.c.get_cookie("companion_sid").value)
    assert store.claim_seat("m1", "Anna", sess["key"], store.clock.now_iso()) is None
    assert p.post("/api/auth/pin", {"pin": "999999", "setup_code": code}).status_code == 200
    assert p.get("/api/auth/me").json["role"] == "organiser" and p.get("/api/auth/me").json["seats"] == {"m1": "Anna"}
    assert len([s for s in Access(store).list_sessions() if s["role"] == "player"]) == 0
    code, _ = Access(store).create_reset_code()
    clock.advance(3601)  # valid one hour
    assert Api(app.test_client()).post("/api/auth/pin", {"pin": "888888", "setup_code": code}).status_code == 401


def test_pin_reset_command_prints_a_code_and_refuses_a_missing_database(run_cli, tmp_path):
    from companion.services.access import Access
    from companion.storage import Store

    data = tmp_path / "data"
    Store(data / "companion.db").close()
    rc, out, err = run_cli("pin", "reset", "--data-dir", str(data))
    assert rc == 0, err
    code = out.strip().splitlines()[-1]
    assert code.isdigit() and len(code) == 10
    with Store(data / "companion.db") as store:
        assert Access(store).check_reset_code(code)
    rc, out, err = run_cli("pin", "reset", "--data-dir", str(tmp_path / "typo"))
    assert rc == 2 and "typo" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "typo").exists()


# -- sessions ----------------------------------------------------------------------------------------
def _link(organiser, **body):
    r = organiser.post("/api/auth/join-tokens", body)
    assert r.status_code == 201, r.json
    return r.json["url"].split("localhost", 1)[1]


def test_revoking_a_join_link_ends_the_sessions_made_from_it(app, organiser, clock):
    first = _link(organiser)
    clock.advance(1)
    second = _link(organiser)
    a, b = Api(app.test_client()), Api(app.test_client())
    assert a.c.get(first).status_code == 303 and b.c.get(second).status_code == 303
    assert a.get("/api/auth/me").json["role"] == "player" == b.get("/api/auth/me").json["role"]
    links = organiser.get("/api/auth/join-tokens").json["join_links"]
    made = [x for x in links if x["sessions"] == 1]
    assert len(made) == 2 and all(x["id"] not in first + second for x in links)  # ids are not the tokens
    a_link = min(made, key=lambda x: x["created_at"])["id"]  # the first link made a's session
    assert {s["join_link"] for s in organiser.get("/api/auth/sessions").json["sessions"]} >= {x["id"] for x in made}
    r = organiser.delete(f"/api/auth/join-tokens/{a_link}")
    assert r.status_code == 200 and r.json["sessions_ended"] == 1
    assert a.get("/api/auth/me").json["role"] == "viewer"
    assert b.get("/api/auth/me").json["role"] == "player"
    assert app.test_client().get(first).status_code == 404
    assert organiser.delete(f"/api/auth/join-tokens/{a_link}x").status_code == 404
    # a new link that ends the others ends their sessions too; the organiser stays
    _link(organiser, revoke_others=True)
    assert b.get("/api/auth/me").json["role"] == "viewer"
    assert organiser.get("/api/auth/me").json["role"] == "organiser"


def test_organisers_list_and_end_sessions(app, organiser, player):
    assert player.get("/api/auth/sessions").status_code == 403
    assert player.delete("/api/auth/sessions/abcdefabcdef").status_code == 403
    sessions = organiser.get("/api/auth/sessions").json["sessions"]
    assert sorted(s["role"] for s in sessions) == ["organiser", "player"]
    me = next(s for s in sessions if s["current"])
    assert me["role"] == "organiser" and not me["join_link"]
    theirs = next(s for s in sessions if not s["current"])
    assert theirs["join_link"] and len(theirs["id"]) == 12
    assert organiser.delete(f"/api/auth/sessions/{theirs['id']}").status_code == 200
    assert player.get("/api/auth/me").json["role"] == "viewer"
    assert organiser.delete(f"/api/auth/sessions/{theirs['id']}").status_code == 404
    assert organiser.delete("/api/auth/sessions/short").status_code == 404


def test_a_new_club_code_leaves_every_table_s_link_and_phones_alone(app, organiser, fake_game):
    """"New code" on /join used to revoke every link: the tables' printed cards and the phones seated there."""
    tables = []
    for n in range(3):
        mid = organiser.post("/api/matches", {**BODY, "label": f"T{n}"}).json["id"]
        link = organiser.get(f"/api/matches/{mid}/join").json["url"].split("localhost", 1)[1]
        phone = Api(app.test_client())
        assert phone.c.get(link).status_code == 303
        assert phone.put(f"/api/matches/{mid}/seat", {"player": "Anna"}).status_code == 200
        tables.append((mid, link, phone))
    club_phone = Api(app.test_client())
    old_club = organiser.get("/api/auth/join").json["url"].split("localhost", 1)[1]
    assert club_phone.c.get(old_club).status_code == 303
    r = organiser.post("/api/auth/join-tokens", {"revoke_others": True})  # the /join page's "New code"
    assert r.status_code == 201
    assert app.test_client().get(old_club).status_code == 404
    assert club_phone.get("/api/auth/me").json["role"] == "viewer"  # signed out with its link
    for mid, link, phone in tables:
        me = phone.get("/api/auth/me").json
        assert me["role"] == "player" and me["seats"] == {mid: "Anna"}
        assert app.test_client().get(link).status_code == 303  # the printed card still joins
    assert all(x["revoked"] is False for x in organiser.get("/api/auth/join-tokens").json["join_links"]
               if x["match_id"])


def test_a_table_s_new_code_ends_that_table_s_old_one_only(app, organiser, fake_game):
    mids = [organiser.post("/api/matches", BODY).json["id"] for _ in range(2)]
    links = [organiser.get(f"/api/matches/{m}/join").json["url"].split("localhost", 1)[1] for m in mids]
    phone = Api(app.test_client())
    assert phone.c.get(links[0]).status_code == 303
    r = organiser.post("/api/auth/join-tokens", {"match_id": mids[0], "revoke_others": True})
    assert r.status_code == 201
    new = r.json["url"].split("localhost", 1)[1]
    assert organiser.get(f"/api/matches/{mids[0]}/join").json["url"].endswith(new)  # the table shows it
    assert app.test_client().get(links[0]).status_code == 404
    assert app.test_client().get(new).status_code == 303
    assert app.test_client().get(links[1]).status_code == 303  # the other table's card still joins
    assert phone.get("/api/auth/me").json["match_id"] == mids[0]  # the phones already at the table stay
    page = organiser.c.get(f"/m/{mids[0]}").get_data(as_text=True)
    assert 'id="new-table-code"' in page
    assert 'id="new-table-code"' not in phone.c.get(f"/m/{mids[0]}").get_data(as_text=True)
