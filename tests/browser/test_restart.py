"""A restart of the Pi seen from a phone left open on a running clock: while the server is away the page
says so and its countdown stands still; a clean stop (SIGTERM, as ``systemctl stop`` sends) is a pause
with its own reason, said in words, with no jump back; a power cut (SIGKILL here) brings the "power was
lost" banner with the reconnect, without a reload. In Chromium and in WebKit (its EventSource coming back by
the page's own reconnect: tests/engines.py). Screenshots: test-artifacts/restart-*.png."""

from __future__ import annotations

import json
import socket

import pytest

from tests.conftest import engine_browser
from tests.engines import expect
from tests.web.serverproc import Server

pytestmark = pytest.mark.browser
ENGINES = ("chromium", "webkit")  # (tests/browser/conftest.py)

PHONE = {"width": 390, "height": 844}


def _cat(lang):
    from companion.base.resources import web_dir

    return json.loads((web_dir() / "static" / "i18n" / f"{lang}.json").read_text("utf-8"))


EN = _cat("en")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(data, port):
    return Server(data, {"COMPANION_CHECKPOINT_SECONDS": "1", "COMPANION_SSE_HEARTBEAT": "1"},
                  args=("--port", str(port)))


def _kill(server):
    server.proc.kill()
    server.proc.wait()
    server.proc.stdout.close()
    server.proc.stderr.close()


@pytest.fixture
def table(request, engine, tmp_path):
    """A server on a fixed port, a player's phone open on a richelieu match whose clock runs."""
    browser = engine_browser(request, engine)
    port, data = _free_port(), tmp_path / "data"
    state = {"server": _start(data, port), "data": data, "port": port, "engine": engine}
    ctx = browser.new_context(base_url=state["server"].url, viewport=PHONE, locale="en-GB")
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(f"{e} {e.stack}"))
    page.goto(state["server"].join_url)
    url = state["server"].url

    def call(method, path, body=None):
        r = page.request.fetch(url + path, method=method, data=body,
                               headers={"Origin": url, "Content-Type": "application/json"})
        assert r.ok, (path, r.status, r.text())
        return r.json()

    m = call("POST", "/api/matches", {"game": "richelieu", "players": ["Anna", "Bruno"], "options": {"clock": True}})
    call("POST", f"/api/matches/{m['id']}/events", {"type": "clock.start", "data": {}, "expected_seq": 0})
    page.goto(f"/m/{m['id']}")
    page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
    expect(page.locator("#clock-pause")).to_be_visible()
    state.update(page=page, mid=m["id"], call=call)
    yield state
    ctx.close()
    s = state.get("server")
    if s is not None and s.proc.poll() is None:
        s.stop()


def _wait_offline_and_frozen(page):
    expect(page.locator("#offline")).to_be_visible()
    expect(page.locator("#clock-note")).to_have_text(EN["clock.offline"])
    shown = page.inner_text("#clock-remaining")
    page.wait_for_timeout(1500)  # a phone's countdown would have moved on by a second or two
    assert page.inner_text("#clock-remaining") == shown
    return shown


def test_a_clean_stop_is_a_pause_with_its_reason_in_words(table, artifacts_dir):
    page = table["page"]
    table["server"].stop()  # SIGTERM
    _wait_offline_and_frozen(page)
    page.screenshot(path=str(artifacts_dir / f"restart-offline-{table['engine']}.png"))
    table["server"] = _start(table["data"], table["port"])
    # the page reconnects by itself: the pause, its reason in words, no power-lost banner
    expect(page.locator("#offline")).to_be_hidden(timeout=20_000)
    reason = EN["pause.server-stopped"]
    expect(page.locator("#clock-note")).to_have_text(EN["clock.paused_because"].format(reason=reason))
    expect(page.locator("#history li").first).to_have_text(
        __import__("re").compile(rf"^{EN['event.clock.pause']} \({reason}\)"))
    expect(page.locator("#power-lost")).to_be_hidden()
    expect(page.locator("#clock-resume")).to_be_visible()
    events = table["call"]("GET", f"/api/matches/{table['mid']}/events")["events"]
    assert events[-1]["type"] == "clock.pause" and events[-1]["data"] == {"reason": "server-stopped"}
    assert "server-stopped" not in page.inner_text("body")
    page.screenshot(path=str(artifacts_dir / f"restart-clean-stop-{table['engine']}.png"))
    assert not page.errors, page.errors


def test_a_power_cut_brings_the_banner_with_the_reconnect(table, artifacts_dir):
    page = table["page"]
    page.wait_for_timeout(1200)  # a checkpoint of the running clock (every second here)
    _kill(table["server"])  # no clean stop: as a power cut
    table["server"] = None
    _wait_offline_and_frozen(page)
    table["server"] = _start(table["data"], table["port"])
    expect(page.locator("#offline")).to_be_hidden(timeout=20_000)
    expect(page.locator("#power-lost")).to_be_visible()  # no reload
    expect(page.locator("#power-lost")).to_contain_text("Power was lost")
    expect(page.locator("#clock-note")).to_have_text(
        EN["clock.paused_because"].format(reason=EN["pause.power-lost"]))
    page.screenshot(path=str(artifacts_dir / f"restart-power-lost-{table['engine']}.png"))
    assert not page.errors, page.errors
