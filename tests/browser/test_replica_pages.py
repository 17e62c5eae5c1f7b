"""What an organiser sees of replication on the home page, and the league page, on a 360 px phone."""

import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest
from playwright.sync_api import expect

from companion.services import replication, seasons
from companion.storage import Store
from tests.web.serverproc import REPO

pytestmark = pytest.mark.browser
PHONE = {"width": 360, "height": 740}


def _fits(page):
    assert page.evaluate("document.documentElement.scrollWidth") <= 360


def test_the_organiser_sees_the_replica_s_lag_and_a_viewer_does_not(new_context, server, artifacts_dir):
    with Store(server.data_dir / "companion.db") as store:
        store.set_setting(replication.SETTING, {"target": "/media/usb/companion", "sync_interval": 1})
    now = time.time()
    replication.write_status(server.data_dir, {"checked_at": now + 3600, "replicated_txid": 40, "local_txid": 42,
                                               "pending_since": now - 75, "error": None})
    org = new_context(viewport=PHONE).new_page()
    org.goto("/login")
    org.fill("#setup-code", server.setup_code)
    org.fill("#new-pin", "482193")
    org.click("#setup-form button[type=submit]")
    org.wait_for_url(server.url + "/join")
    org.goto("/?lang=en")
    expect(org.locator("#replica-notice")).to_contain_text("Replica /media/usb/companion:")
    expect(org.locator("#replica-notice")).to_contain_text("s behind")
    _fits(org)
    org.screenshot(path=str(artifacts_dir / "replica-home-lag.png"), full_page=True)
    replication.write_status(server.data_dir, {"checked_at": time.time() + 3600, "replicated_txid": 40,
                                               "local_txid": 42, "pending_since": time.time(),
                                               "error": "the replica folder /media/usb/companion is not there"})
    org.goto("/?lang=it")
    expect(org.locator("#replica-notice")).to_contain_text("irraggiungibile")
    _fits(org)
    org.screenshot(path=str(artifacts_dir / "replica-home-unreachable-it.png"), full_page=True)
    viewer = new_context(viewport=PHONE).new_page()
    viewer.goto("/")
    expect(viewer.locator("#replica-notice")).to_have_count(0)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _box(path, results):
    with Store(path) as store:
        seasons.create_club(store, "Fan Club")
        season = seasons.create_season(store, "Fan Club", "conquest-italy", 2026)
        for mid, day, players in results:
            seasons.add_result(store, season["id"], {
                "id": mid, "date": f"2026-04-{day:02d}",
                "results": [{"player": p, "place": i + 1} for i, p in enumerate(players)]})


def test_the_league_page_on_a_phone(browser, tmp_path, artifacts_dir):
    _box(tmp_path / "roma.db", [("r1", 1, ["Anna", "Bea", "Carlo", "Dario"]), ("s", 2, ["Bea", "Anna", "Carlo"])])
    _box(tmp_path / "milano.db", [("m1", 3, ["Nicolò", "Anna", "Carlo"]), ("s", 2, ["Bea", "Anna", "Carlo"]),
                                  ("m2", 4, ["Nicolo", "Bea", "Anna", "Emma", "Franco"])])
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "companion", "league", "serve", "--host", "127.0.0.1", "--port",
                             str(port), "--cache", str(tmp_path / "cache"), "--box", f"Roma={tmp_path / 'roma.db'}",
                             "--box", f"Milano={tmp_path / 'milano.db'}"], cwd=str(REPO),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        end = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "/healthz", timeout=2) as r:
                    assert json.loads(r.read())["ok"]
                break
            except OSError:
                assert time.monotonic() < end and proc.poll() is None, proc.stderr.read() if proc.poll() else ""
                time.sleep(0.1)
        ctx = browser.new_context(viewport=PHONE, locale="en-GB")
        page = ctx.new_page()
        page.goto(url + "/")
        expect(page.locator("#standings tbody tr[data-player]")).to_have_count(8)
        expect(page.locator("#league-check")).to_contain_text("Nicolo / Nicolò")
        expect(page.locator('#league-matches li[data-match="s"]')).to_contain_text("at Roma + Milano")
        _fits(page)
        page.screenshot(path=str(artifacts_dir / "league-phone.png"), full_page=True)
        page.goto(url + "/?lang=it")
        expect(page.locator("#league-boxes")).to_contain_text("2 partite")
        _fits(page)
        page.screenshot(path=str(artifacts_dir / "league-phone-it.png"), full_page=True)
        ctx.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
