"""The live connection of a page left alone: the server's heartbeat reaches the page's watchdog, so a
quiet page keeps its one stream and never shows the "connection lost" banner; a page asks for each thing
once at its first load (the home page's and the room screen's list once their stream is open), then hears
the changes live, and asks again when its stream opens again. The server here beats
every second (``COMPANION_SSE_HEARTBEAT``) and the page's watchdog waits three heartbeats (3 s), so a
few seconds of quiet stand for the minutes of a real evening."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.trackers_kit import organiser_api
from tests.web.serverproc import Server

pytestmark = pytest.mark.browser

HEARTBEAT = 1.0
PHONE = {"width": 390, "height": 844}

# counts the streams the page opens and whether the red banner ever showed
WATCH = """(() => {
  window.__streams = [];
  const Real = window.EventSource;
  window.__sources = [];
  window.EventSource = function (url, opts) {
    window.__streams.push(String(url));
    const es = new Real(url, opts);
    window.__sources.push(es);
    return es;
  };
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


def _asked(page) -> list[str]:
    """What the page asked the box for (its own requests, not the static files)."""
    return [r for r in page.asked if not r.startswith("GET /static/")]


def test_quiet_pages_keep_their_stream_and_show_no_banner(browser, server, match_id, artifacts_dir):
    """A match page, its TV, the home page, the room screen and a tournament day left open with nothing
    happening, for three watchdog periods: each asked for each thing once; then a new match reaches both
    lists live, and a stream that opens again reads its list (the day) again."""
    ctx = browser.new_context(base_url=server.url, viewport=PHONE, locale="en-GB")
    ctx.set_default_timeout(10_000)
    try:
        ctx.add_init_script(WATCH)
        pages = {}
        day = organiser_api(server).ok("POST", "/api/tournaments", {
            "name": "Day", "date": "2026-12-02", "game": "richelieu", "table_size": 3, "rounds": 2,
            "players": ["Anna", "Bruno", "Carla"]})["id"]
        for name, path in (("match", f"/m/{match_id}"), ("tv", f"/m/{match_id}/display"), ("home", "/"),
                           ("room", "/tournament"), ("day", f"/tournaments/{day}")):
            page = ctx.new_page()
            page.asked = []
            page.on("request", lambda r, page=page: page.asked.append(f"{r.method} {r.url.replace(server.url, '')}"))
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
            asked = _asked(page)
            assert len(asked) == len(set(asked)), (name, asked)  # nothing asked twice at the first load
            page.screenshot(path=str(artifacts_dir / f"live-quiet-{name}.png"))
        home, room = pages["home"], pages["room"]
        assert _asked(home).count("GET /api/matches?limit=60") == 1, _asked(home)
        assert _asked(room).count("GET /api/tournament") == 1, _asked(room)
        # a new table: both lists hear of it from their stream, without asking again (the day reads itself again
        # at a match's change, once)
        day_url = server.url + f"/api/tournaments/{day}"
        with pages["day"].expect_request(lambda r: r.url == day_url):
            r, doc = _call(server, "POST", "/api/matches", {"game": "richelieu", "players": ["Carla", "Dario"],
                                                            "label": "Table 9"}, _player_cookie(server))
        assert r.status == 201, doc
        expect(home.locator(f"#open-matches li[data-id='{doc['id']}']")).to_contain_text("Table 9")
        expect(room.locator(f".table-card[data-id='{doc['id']}']")).to_contain_text("Table 9")
        assert _asked(home).count("GET /api/matches?limit=60") == 1 and _asked(room).count("GET /api/tournament") == 1
        assert _asked(pages["day"]).count(f"GET /api/tournaments/{day}") == 2, _asked(pages["day"])
        # the browser gives up a stream (the Wi-Fi gone a while): the page opens it again and reads its list again
        for page, path in ((home, "/api/matches?limit=60"), (room, "/api/tournament"),
                           (pages["day"], f"/api/tournaments/{day}")):
            before = _asked(page).count("GET " + path)
            with page.expect_request(lambda r, path=path: r.url == server.url + path):
                page.evaluate("() => { const es = window.__sources[0]; es.close(); es.onerror(new Event('error')); }")
            assert page.evaluate("window.__streams.length") == 2
            assert _asked(page).count("GET " + path) == before + 1, _asked(page)
    finally:
        ctx.close()


def _player_cookie(server) -> str:
    """A player's session cookie, from the club's join link."""
    import http.client

    conn = http.client.HTTPConnection(server.host, timeout=10)
    conn.request("GET", server.join_url.split(server.host, 1)[1])
    r = conn.getresponse()
    r.read()
    conn.close()
    return r.getheader("Set-Cookie").split(";", 1)[0]


def _random_doc(rng, depth=0):
    roll = rng.random()
    if depth > 2 or roll < 0.35:
        return rng.choice([None, True, False, 0, 1, 2, -1.5, "", "a", "b"])
    if roll < 0.6:
        return [_random_doc(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {k: _random_doc(rng, depth + 1) for k in rng.sample(["a", "b", "c", "1", "__proto__"], rng.randint(0, 4))}


def _call(server, method, path, body=None, cookie=None):
    import http.client
    import json

    conn = http.client.HTTPConnection(server.host, timeout=10)
    headers = {"Content-Type": "application/json", "Origin": server.url, **({"Cookie": cookie} if cookie else {})}
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    r = conn.getresponse()
    data = r.read()
    conn.close()
    return r, (json.loads(data) if data and "json" in (r.getheader("Content-Type") or "") else None)


def test_the_page_applies_a_patch_as_the_server_makes_it(browser, server, match_id):
    """``Companion.applyPatch`` gives what ``companion.base.jsondiff.apply`` gives (nulls, removed keys, grown
    and shrunk arrays, a ``__proto__`` key), and leaves the document it patched as it was; then a page
    following a match holds exactly the view the server has after events sent as patches, even when it
    changed the view it was given (Richelieu without the clock: its view does not depend on when it was
    made); and a page seen again after its streams died unseen (sleep, another app, the back/forward cache)
    shows the event it missed within a second."""
    import json
    import random

    from companion.base import jsondiff

    rng = random.Random(7)
    pairs = [(_random_doc(rng), _random_doc(rng)) for _ in range(300)]
    cases = [[old, json.loads(json.dumps(jsondiff.diff(old, new)))] for old, new in pairs]
    ctx = browser.new_context(base_url=server.url, viewport=PHONE, locale="en-GB")
    ctx.set_default_timeout(10_000)
    ctx.add_init_script(DEAD)
    try:
        page = ctx.new_page()
        page.goto(f"/m/{match_id}")
        got = page.evaluate("""(text) => JSON.parse(text).map(([doc, ops]) => {
            const before = JSON.stringify(doc), out = Companion.applyPatch(doc, ops);
            return [JSON.stringify(out === undefined ? null : out), JSON.stringify(doc) === before];
        })""", json.dumps(cases))  # (as a stream's text: JSON.parse makes "__proto__" a key)
        for (old, new), (text, untouched) in zip(pairs, got):
            assert json.loads(text) == json.loads(json.dumps(new)) and untouched, (old, new, text)
        assert page.evaluate("Companion.applyPatch({a: [1]}, [[['a', 5], 1]])") is None  # does not fit

        r, _ = _call(server, "GET", server.join_url.split(server.host, 1)[1])
        cookie = r.getheader("Set-Cookie").split(";", 1)[0]
        r, doc = _call(server, "POST", "/api/matches", {"game": "richelieu", "players": ["Ada", "Bo", "Cy"]}, cookie)
        assert r.status == 201, doc
        mid = doc["id"]
        page.evaluate("""(id) => { window.__heard = []; window.__c = new Companion.MatchClient(id);
            window.__c.follow({ event: (d) => window.__heard.push(d) }); }""", mid)
        page.wait_for_function("() => window.__c.view !== null")
        seq = 0
        for i in range(6):
            body = {"type": "track.adjust", "data": {"player": ["Ada", "Bo", "Cy"][i % 3], "track": "money",
                                                     "delta": 1 + i}, "expected_seq": seq}
            r, doc = _call(server, "POST", f"/api/matches/{mid}/events", body, cookie)
            assert r.status == 201, doc
            seq = doc["seq"]
            if i == 2:  # a page that changes the view it draws from changes nothing the next patches apply to
                page.wait_for_function(f"() => window.__c.seq === {seq}")
                page.evaluate("() => { const s = window.__c.view.state; Object.keys(s).forEach((k) => delete s[k]); }")
            if i == 3:
                r, doc = _call(server, "POST", f"/api/matches/{mid}/undo", {"expected_seq": seq}, cookie)
                assert r.status == 201, doc
                seq = doc["seq"]
        page.wait_for_function(f"() => window.__c.seq === {seq}")
        held = json.loads(page.evaluate("JSON.stringify(window.__c.view)"))
        r, doc = _call(server, "GET", f"/api/matches/{mid}")  # (no session: a viewer, as the page)
        assert held == doc["view"]
        assert sum(1 for d in page.evaluate("window.__heard") if "patch" in d) >= 5

        # back from another app, from sleep, from the back/forward cache: the streams died without a word
        # while the page was away (what they still receive is lost) and an event was recorded meanwhile; the
        # page shows it within a second of being seen again (the watchdog alone: 3 s here, 30 s on a box)
        for back in ("visible", "pageshow"):
            page.evaluate("""(back) => { window.__sources.forEach((es) => { es.__dead = true; });
                window.__vis = 'hidden'; document.dispatchEvent(new Event('visibilitychange'));
                if (back === 'pageshow') window.dispatchEvent(new PageTransitionEvent('pagehide', {persisted: true})); }""",
                          back)
            lost = page.evaluate("window.__lost || 0")
            body = {"type": "track.adjust", "data": {"player": "Ada", "track": "money", "delta": 1}, "expected_seq": seq}
            r, doc = _call(server, "POST", f"/api/matches/{mid}/events", body, cookie)
            assert r.status == 201, doc
            seq = doc["seq"]
            if back == "visible":  # (into the back/forward cache the streams were closed: nothing comes)
                page.wait_for_function(f"() => (window.__lost || 0) > {lost}")  # the box sent it: the page lost it
            assert page.evaluate("window.__c.seq") < seq
            page.evaluate("""(back) => { window.__vis = 'visible';
                if (back === 'visible') document.dispatchEvent(new Event('visibilitychange'));
                else window.dispatchEvent(new PageTransitionEvent('pageshow', {persisted: true})); }""", back)
            page.wait_for_function(f"() => window.__c.seq === {seq}", timeout=1000)
        held = json.loads(page.evaluate("JSON.stringify(window.__c.view)"))
        assert held == _call(server, "GET", f"/api/matches/{mid}")[1]["view"]
    finally:
        ctx.close()


# streams that can die without a word (``es.__dead``: what they receive is lost, as on a phone whose radio
# slept; ``window.__lost`` counts the events lost), and a page whose visibility the test sets (``window.__vis``)
DEAD = """(() => {
  const Real = window.EventSource;
  window.__sources = [];
  window.EventSource = function (url, opts) {
    const es = new Real(url, opts), add = es.addEventListener.bind(es);
    es.addEventListener = (kind, fn, o) => add(kind, (ev) => {
      if (!es.__dead) fn(ev); else if (kind === 'event') window.__lost = (window.__lost || 0) + 1;
    }, o);
    window.__sources.push(es);
    return es;
  };
  window.EventSource.prototype = Real.prototype;
  Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => window.__vis || 'visible'});
  Object.defineProperty(document, 'hidden', {configurable: true, get: () => window.__vis === 'hidden'});
})()"""
