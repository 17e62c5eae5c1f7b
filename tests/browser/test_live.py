"""The live connection of a page left alone: the server's heartbeat reaches the page's watchdog, so a
quiet page keeps its one stream and never shows the "connection lost" banner. The server here beats
every second (``COMPANION_SSE_HEARTBEAT``) and the page's watchdog waits three heartbeats (3 s), so a
few seconds of quiet stand for the minutes of a real evening."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.serverproc import Server

pytestmark = pytest.mark.browser

HEARTBEAT = 1.0
PHONE = {"width": 390, "height": 844}

# counts the streams the page opens and whether the red banner ever showed
WATCH = """(() => {
  window.__streams = [];
  const Real = window.EventSource;
  window.EventSource = function (url, opts) { window.__streams.push(String(url)); return new Real(url, opts); };
  window.EventSource.prototype = Real.prototype;
  window.__bannerShown = 0;
  document.addEventListener('DOMContentLoaded', () => {
    const b = document.getElementById('offline');
    if (b) new MutationObserver(() => { if (!b.hidden) window.__bannerShown++; })
      .observe(b, {attributes: true, attributeFilter: ['hidden']});
  });
})()"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("live") / "data", {"COMPANION_SSE_HEARTBEAT": str(HEARTBEAT)})
    yield s
    s.stop()


@pytest.fixture(scope="module")
def match_id(server):
    import http.client
    import json

    conn = http.client.HTTPConnection(server.host, timeout=10)
    # a player's session from the join link, then a match created with it
    conn.request("GET", server.join_url.split(server.host, 1)[1])
    r = conn.getresponse()
    r.read()
    cookie = r.getheader("Set-Cookie").split(";", 1)[0]
    conn.request("POST", "/api/matches", body=json.dumps({"game": "richelieu", "players": ["Anna", "Bruno"]}),
                 headers={"Content-Type": "application/json", "Origin": server.url, "Cookie": cookie})
    r = conn.getresponse()
    doc = json.loads(r.read())
    assert r.status == 201, doc
    conn.close()
    return doc["id"]


def test_quiet_pages_keep_their_stream_and_show_no_banner(browser, server, match_id, artifacts_dir):
    """A match page and the home page left open with nothing happening, for three watchdog periods."""
    ctx = browser.new_context(base_url=server.url, viewport=PHONE, locale="en-GB")
    ctx.set_default_timeout(10_000)
    try:
        ctx.add_init_script(WATCH)
        pages = {}
        for name, path in (("match", f"/m/{match_id}"), ("home", "/")):
            page = ctx.new_page()
            page.goto(path)
            page.wait_for_function("() => window.__streams.length >= 1")
            # the watchdog follows the server's heartbeat (three periods), not a fixed 45 s
            assert page.evaluate("Companion.watchdogMs()") == int(HEARTBEAT * 3000)
            pages[name] = page
        pages["home"].wait_for_timeout(HEARTBEAT * 3000 * 3)  # three watchdog periods with nothing happening
        for name, page in pages.items():
            assert page.evaluate("window.__bannerShown") == 0, name
            expect(page.locator("#offline")).to_be_hidden()
            assert page.evaluate("window.__streams.length") == 1, (name, page.evaluate("window.__streams"))
            page.screenshot(path=str(artifacts_dir / f"live-quiet-{name}.png"))
    finally:
        ctx.close()
