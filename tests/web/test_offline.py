"""A table with no network: the box's own Wi-Fi switched from the organiser's page (a stand-in nmcli on PATH),
the two codes in order on every page that shows a table's code, the phones' connectivity checks answered
whatever the Host, and the box's time taken from an organiser's phone."""

import json
import re
from datetime import timedelta

import pytest

from companion.services import seasons as season_store
from companion.services.hotspot import CONNECTION
from companion.storage import Store
from companion.base.timeutil import MonotonicWallClock, parse_iso
from tests.fakenm import FakeNM
from tests.web.conftest import Api

SETUP = "13572468"


@pytest.fixture
def nm(tmp_path, monkeypatch):
    fake = FakeNM(tmp_path)
    monkeypatch.setenv("PATH", fake.path())
    return fake


@pytest.fixture
def wifi_app(store, nm):
    from companion.web.app import create_app

    app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": SETUP,
                      "PUBLIC_URL": "http://192.168.1.50:8080"})
    app.extensions["companion"].wifi_switch_delay = 0
    return app


def organiser_of(app):
    a = Api(app.test_client())
    assert a.post("/api/auth/pin", {"pin": "246813", "setup_code": SETUP}).status_code == 200
    return a


def switch(app, org, on: bool):
    r = org.put("/api/wifi", {"hotspot": on})
    assert r.status_code == 202, r.json
    app.extensions["companion"].wifi_switch["thread"].join(30)
    return r.json


# -- the switch ----------------------------------------------------------------------------------------

def test_the_organiser_turns_the_box_wifi_on_then_back_to_the_venue(wifi_app, nm):
    org = organiser_of(wifi_app)
    st = org.get("/api/wifi").json
    assert st["available"] and st["mode"] == "venue" and st["network"] == "ClubWiFi" and not st["enabled"]
    nm.clear()
    ans = switch(wifi_app, org, True)
    assert ans["hotspot"] is True and len(ans["password"]) == 12 and ans["address"] == "10.42.0.1"
    calls = [c[1:] for c in nm.calls() if c[0] == "nmcli"]
    # the status the answer is made from, then the switch: the device, our profile, add, up
    assert calls[0] == calls[1] == ["-t", "-f", "DEVICE,TYPE,STATE,CONNECTION", "device", "status"]
    assert calls[3][:2] == ["connection", "add"] and calls[4] == ["connection", "up", CONNECTION]
    st = org.get("/api/wifi").json
    assert st["mode"] == "hotspot" and st["network"] == ans["ssid"] and st["password"] == ans["password"]
    switch(wifi_app, org, False)
    assert ["connection", "up", "ClubWiFi"] in [c[1:] for c in nm.calls()]
    assert org.get("/api/wifi").json["mode"] == "venue"


def test_only_an_organiser_sees_or_switches_the_wifi(wifi_app, nm):
    viewer = Api(wifi_app.test_client())
    assert viewer.get("/api/wifi").status_code == 401
    assert viewer.put("/api/wifi", {"hotspot": True}).status_code == 401
    org = organiser_of(wifi_app)
    r = org.put("/api/wifi", {"hotspot": "yes"})
    assert r.status_code == 400 and r.json["field"] == "$.hotspot"
    assert nm.calls() == []


def test_without_networkmanager_the_switch_says_so_and_changes_nothing(store, tmp_path, monkeypatch):
    from companion.web.app import create_app

    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": SETUP})
    org = organiser_of(app)
    r = org.put("/api/wifi", {"hotspot": True}, headers={"Accept-Language": "it"})
    assert r.status_code == 409 and "NetworkManager" in r.json["error"] and "nessuna modifica" in r.json["error"]
    st = org.get("/api/wifi").json
    assert st["available"] is False and "no nmcli" in st["reason"] and not st["enabled"]


# -- two codes, in order ---------------------------------------------------------------------------------

def _match(org, label="Table 1"):
    r = org.post("/api/matches", {"game": "richelieu", "players": ["Anna", "Bruno"], "label": label})
    assert r.status_code == 201, r.json
    return r.json["id"]


def _order(html: str) -> tuple[int, int]:
    wifi = html.find('data-step="1"')
    table = html.find('data-step="2"')
    return wifi, table


def test_every_page_with_a_table_code_shows_the_wifi_code_first_then_the_link_by_ip(wifi_app, nm):
    org = organiser_of(wifi_app)
    mid = _match(org)
    before = org.get(f"/m/{mid}/card").get_data(as_text=True)
    assert 'data-step="1"' not in before and "http://192.168.1.50:8080/j/" in before  # the venue's Wi-Fi: one code
    ans = switch(wifi_app, org, True)
    for path in (f"/m/{mid}/card", f"/m/{mid}/display", f"/m/{mid}", "/join", "/tournament/cards"):
        html = org.get(path).get_data(as_text=True)
        wifi, table = _order(html)
        assert 0 <= wifi < table, path
        assert ans["ssid"] in html and ans["password"] in html, path
        assert html.count("<svg") >= 2, path
    card = org.get(f"/m/{mid}/card").get_data(as_text=True)
    # the table's link by the box's fixed address on its own Wi-Fi, never a .local name
    assert re.search(r"http://10\.42\.0\.1:8080/j/[A-Za-z0-9_-]+", card) and ".local" not in card, re.findall(r"tc-url.{0,120}", card)
    assert org.get(f"/api/matches/{mid}/join").json["url"].startswith("http://10.42.0.1:8080/j/")
    # the code itself is the standard Wi-Fi text (read back from the QR's SVG is beyond this test: the text
    # given to the QR maker is checked in tests/test_hotspot.py)
    switch(wifi_app, org, False)
    assert 'data-step="1"' not in org.get(f"/m/{mid}/card").get_data(as_text=True)


def test_a_viewer_sees_no_wifi_password_where_it_sees_no_table_code(wifi_app, nm):
    org = organiser_of(wifi_app)
    mid = _match(org)
    ans = switch(wifi_app, org, True)
    other = wifi_app.test_client()
    other.environ_base["REMOTE_ADDR"] = "192.168.1.77"  # a guest's phone (127.0.0.1 is the Pi's own screen)
    viewer = Api(other)
    for path in (f"/m/{mid}", f"/m/{mid}/card", "/join"):
        assert ans["password"] not in viewer.get(path).get_data(as_text=True), path


# -- the phones' connectivity checks -------------------------------------------------------------------------

@pytest.mark.parametrize("host, path, status, body", [
    ("connectivitycheck.gstatic.com", "/generate_204", 204, ""),
    ("clients3.google.com", "/generate_204", 204, ""),
    ("www.google.com", "/gen_204", 204, ""),
    ("captive.apple.com", "/hotspot-detect.html", 200,
     "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"),
    ("www.apple.com", "/library/test/success.html", 200,
     "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"),
    ("www.msftconnecttest.com", "/connecttest.txt", 200, "companion"),
    ("detectportal.firefox.com", "/success.txt", 200, "success\n"),
    ("detectportal.firefox.com", "/canonical.html", 200,
     '<meta http-equiv="refresh" content="0;url=https://support.mozilla.org/kb/captive-portal"/>'),
])
def test_connectivity_checks_are_answered_whatever_the_host(wifi_app, host, path, status, body):
    c = wifi_app.test_client()
    r = c.get(path, headers={"Host": host})
    assert r.status_code == status and r.get_data(as_text=True) == body
    assert "Set-Cookie" not in r.headers and r.headers["Cache-Control"] == "no-store"
    # any other path under that Host is still refused (DNS-rebinding protection)
    assert c.get("/api/matches", headers={"Host": host}).status_code == 403
    assert c.post(path, headers={"Host": host}).status_code in (403, 405)


def test_windows_is_sent_to_the_box_page_in_its_real_browser(wifi_app, nm):
    c = wifi_app.test_client()
    r = c.get("/redirect", headers={"Host": "www.msftconnecttest.com"})
    assert r.status_code == 302 and r.headers["Location"] == "http://192.168.1.50:8080/"
    org = organiser_of(wifi_app)
    switch(wifi_app, org, True)
    r = c.get("/redirect", headers={"Host": "www.msftconnecttest.com"})
    assert r.headers["Location"] == "http://10.42.0.1:8080/"


def test_the_answers_make_pi_check_HW_expects_are_the_ones_the_box_gives(wifi_app, nm):
    """image/pi_wifi.py's PROBES (what a phone on the box's own Wi-Fi is answered, in make pi-check) are
    the box's answers here too, and a wrong answer is told apart."""
    import importlib.util
    from pathlib import Path
    from urllib.parse import urlsplit

    spec = importlib.util.spec_from_file_location(
        "pi_wifi", Path(__file__).resolve().parents[2] / "image" / "pi_wifi.py")
    pi_wifi = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pi_wifi)
    switch(wifi_app, organiser_of(wifi_app), True)
    c = wifi_app.test_client()
    assert {name for name, _, _ in pi_wifi.PROBES} == {"android", "apple", "windows", "windows-redirect", "firefox"}
    for name, url, want in pi_wifi.PROBES:
        u = urlsplit(url)
        r = c.get(u.path, headers={"Host": u.hostname})
        got = {"status": r.status_code, "body": r.get_data(as_text=True),
               "headers": {k.lower(): v for k, v in r.headers.items()}}
        assert pi_wifi.probe_verdict(want, got) is None, (name, got)
        assert pi_wifi.probe_verdict(want, {**got, "status": 500}) is not None
    assert pi_wifi.probe_verdict({"status": 200, "body_not": "Microsoft Connect Test"},
                                 {"status": 200, "body": "Microsoft Connect Test", "headers": {}})
    assert pi_wifi.probe_verdict({"status": 204, "body": ""},
                                 {"status": 204, "body": "", "headers": {"set-cookie": "a=b"}}) == "it sets a cookie"


def test_checks_stay_open_when_the_club_turned_viewers_off(wifi_app):
    org = organiser_of(wifi_app)
    assert org.put("/api/auth/settings", {"viewers_allowed": False}).status_code == 200
    c = wifi_app.test_client()
    assert c.get("/generate_204", headers={"Host": "connectivitycheck.gstatic.com"}).status_code == 204
    assert c.get("/api/matches").status_code == 401


# -- the box's time from an organiser's phone ---------------------------------------------------------------

class Mono:
    def __init__(self):
        self.t = 5000.0

    def __call__(self):
        return self.t


@pytest.fixture
def year_behind(tmp_path):
    """A box whose clock is a year behind (no NTP), a club with a season of conquest in each year."""
    mono = Mono()
    system = {"now": parse_iso("2025-12-01T19:00:00Z")}
    clock = MonotonicWallClock(monotonic=mono, wall=lambda: system["now"])
    store = Store(tmp_path / "companion.db", clock=clock)
    club = season_store.create_club(store, "Circolo")
    s2025 = season_store.create_season(store, club["id"], "conquest-italy", 2025)
    s2026 = season_store.create_season(store, club["id"], "conquest-italy", 2026)
    yield {"store": store, "clock": clock, "mono": mono, "system": system, "seasons": (s2025, s2026),
           "tmp": tmp_path}
    store.close()


def _app(w, boot="boot-1", synced=False):
    from companion.web.app import create_app

    def system_now():  # the system clock goes on as the monotonic one does
        return w["system"]["now"] + timedelta(seconds=w["mono"].t - 5000.0)

    return create_app({"STORE": w["store"], "TESTING": True, "CLOCK_RUNNER": "auto", "SETUP_CODE": SETUP,
                       "CLOCK_SYNCHRONISED": lambda: synced, "BOOT_ID": lambda: boot, "SYSTEM_NOW": system_now})


def test_a_box_a_year_behind_takes_the_phone_s_year_and_the_history_never_goes_back(year_behind):
    w = year_behind
    app = _app(w)
    org = organiser_of(app)
    # a match started on the box's own (wrong) time, its clock running for 10 minutes
    r = org.post("/api/matches", {"game": "conquest-italy", "players": ["Anna", "Bruno", "Carla"],
                                  "options": {"limit_minutes": 120}})
    assert r.status_code == 201, r.json
    running = r.json["id"]
    assert org.post(f"/api/matches/{running}/events", {"type": "clock.start", "data": {},
                                                        "expected_seq": 0}).status_code == 201
    w["mono"].t += 600
    assert org.get("/api/auth/me").json["box_time"] == {"synchronised": False, "adopted": None}

    # the organiser's phone, in the right year, signs in
    phone = "2026-12-01T19:10:30.000Z"
    r = org.post("/api/auth/login", {"pin": "246813", "now": phone})
    assert r.status_code == 200
    t = r.json["time"]
    assert t["from"].startswith("2025-12-01T19:10") and t["to"] == phone and t["shift_s"] > 364 * 86400
    me = org.get("/api/auth/me").json["box_time"]
    assert me["adopted"]["at"] == phone and me["synchronised"] is False

    # the running clock lost no minute and gained no year: 10 minutes, then 1 more
    w["mono"].t += 60
    clock_view = org.get(f"/api/matches/{running}").json["view"]["clock"]
    assert clock_view["elapsed_seconds"] == pytest.approx(660, abs=1)
    events = org.get(f"/api/matches/{running}/events").json["events"]
    assert [e["type"] for e in events[-2:]] == ["clock.pause", "clock.resume"]
    assert events[-2]["data"] == {"reason": "clock-set"}

    # a new match lands in the phone's season
    r = org.post("/api/matches", {"game": "conquest-italy", "players": ["Anna", "Bruno", "Carla"],
                                  "options": {"tracking": "result"}})
    new = r.json
    assert new["options"]["season"] == w["seasons"][1]["id"], new["options"]
    r = org.post(f"/api/matches/{new['id']}/result", {"expected_seq": 0, "places": [
        {"player": "Anna", "place": 1}, {"player": "Bruno", "place": 2}, {"player": "Carla", "place": 3}]})
    assert r.status_code == 201, r.json
    assert len(season_store.season_matches(w["store"], w["seasons"][1]["id"])) == 1
    assert season_store.season_matches(w["store"], w["seasons"][0]["id"]) == []

    # a phone with a wrong, earlier time later changes nothing backwards
    r = org.post("/api/box/time", {"now": "2025-06-01T10:00:00.000Z"})
    assert r.status_code == 200
    ats = []
    for mid in (running, new["id"]):
        ats += [parse_iso(e["at"]) for e in org.get(f"/api/matches/{mid}/events").json["events"]]
    last_before = max(ats)
    org.post(f"/api/matches/{running}/events", {"type": "clock.pause", "data": {},
                                                 "expected_seq": len(events)})
    after = org.get(f"/api/matches/{running}/events").json["events"][-1]
    assert parse_iso(after["at"]) >= last_before
    seq_ats = [parse_iso(e["at"]) for e in org.get(f"/api/matches/{running}/events").json["events"]]
    assert seq_ats == sorted(seq_ats)


def test_a_synchronised_clock_or_a_phone_within_two_minutes_changes_nothing(year_behind):
    w = year_behind
    app = _app(w, synced=True)
    org = organiser_of(app)
    r = org.post("/api/auth/login", {"pin": "246813", "now": "2026-12-01T19:00:00.000Z"})
    assert r.json["time"] is None
    app = _app(w)
    org = organiser_of_existing(app)
    r = org.post("/api/box/time", {"now": "2025-12-01T19:01:30.000Z"})  # 90 s away
    assert r.json["adopted"] is None
    assert org.post("/api/box/time", {"now": "yesterday"}).status_code == 400
    assert Api(app.test_client()).post("/api/box/time", {"now": "2026-12-01T19:00:00.000Z"}).status_code == 401


def organiser_of_existing(app):
    a = Api(app.test_client())
    assert a.post("/api/auth/login", {"pin": "246813"}).status_code == 200
    return a


def test_a_restart_in_the_same_boot_takes_the_adopted_time_again_and_backups_use_it(year_behind):
    from companion.services.boxtime import offset_for_commands

    w = year_behind
    app = _app(w)
    org = organiser_of(app)
    org.post("/api/auth/login", {"pin": "246813", "now": "2026-12-01T19:00:00.000Z"})
    w["mono"].t += 30
    # the server restarts (same boot): a fresh clock reads the wrong system time again, then takes the offset
    w["store"].clock = MonotonicWallClock(monotonic=w["mono"], wall=lambda: w["system"]["now"] + timedelta(seconds=30))
    _app(w)
    assert w["store"].clock.now_iso().startswith("2026-12-01T19:00:3")
    # another boot: the offset is not taken (the system clock may have been set meanwhile)
    w["store"].clock = MonotonicWallClock(monotonic=w["mono"], wall=lambda: w["system"]["now"])
    _app(w, boot="boot-2")
    assert w["store"].clock.now_iso().startswith("2025-12-01")
    assert offset_for_commands(w["store"], synchronised=lambda: False, boot=lambda: "boot-1") > 364 * 86400
    assert offset_for_commands(w["store"], synchronised=lambda: True, boot=lambda: "boot-1") == 0
    assert offset_for_commands(w["store"], synchronised=lambda: False, boot=lambda: "boot-2") == 0


def test_companion_backup_names_its_copy_by_the_adopted_time(run_cli, tmp_path):
    from companion.services.boxtime import SETTING, boot_id

    data = tmp_path / "data"
    store = Store(data / "companion.db")
    store.set_setting(SETTING, {"boot_id": boot_id(), "offset_s": 400 * 86400.0, "adopted_at": "x"})
    store.close()
    rc, out, err = run_cli("backup", tmp_path / "b", env={"COMPANION_CLOCK_UNSYNCHRONISED": "1"})
    assert rc == 0, err
    name = json.loads(out)["backup"]
    from datetime import datetime, timezone

    from datetime import timedelta as td

    year = datetime.now(timezone.utc).year
    assert re.search(r"companion-(\d{4})", name).group(1) == str((datetime.now(timezone.utc) + td(days=400)).year)
    # another boot's offset is not taken
    store = Store(data / "companion.db")
    store.set_setting(SETTING, {"boot_id": "another-boot", "offset_s": 400 * 86400.0, "adopted_at": "x"})
    store.close()
    rc, out, err = run_cli("backup", tmp_path / "c", env={"COMPANION_CLOCK_UNSYNCHRONISED": "1"})
    assert re.search(r"companion-(\d{4})", json.loads(out)["backup"]).group(1) == str(year)
