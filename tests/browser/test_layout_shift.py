"""Pages that do not jump under a finger: each game's match page (on a phone's profile: 412 x 823, touch, 1.75
device pixels a px, as Lighthouse's mobile one, the phone of a seated player), each game's TV (1280 x 720, a
desktop's profile), the tables' page and the home (the phone) read their own ``layout-shift`` entries (a
PerformanceObserver, buffered, from before the page's first script) while they load and while an event arrives
from another device. Their sum (shifts within 0.5 s of a tap or a key excluded by the browser, as Lighthouse's
cumulative layout shift does) stays at most 0.05, the limit the project sets (Lighthouse calls 0.1 "good"). A
shift that fails names the elements that moved (a rect of zeros: moved out of the screen). The figures are
printed (pytest -s); docs/benchmarks-notes.md has them beside Lighthouse's."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.trackers_kit import organiser_api

pytestmark = pytest.mark.browser

LIMIT = 0.05
PHONE = {"viewport": {"width": 412, "height": 823}, "device_scale_factor": 1.75, "is_mobile": True,
         "has_touch": True}
PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]

# every layout shift the page makes, with what moved (its tag, id and classes) and by how much
OBSERVE = """
window.__shifts = [];
(function () {
  function name(n) {
    if (!n || n.nodeType !== 1) return n && n.nodeName || "?";
    var s = n.tagName.toLowerCase() + (n.id ? "#" + n.id : "");
    if (typeof n.className === "string" && n.className.trim()) s += "." + n.className.trim().split(/\\s+/).join(".");
    return s;
  }
  try {
    new PerformanceObserver(function (list) {
      list.getEntries().forEach(function (e) {
        if (e.hadRecentInput) return;
        window.__shifts.push({ value: e.value, at: Math.round(e.startTime), moved: (e.sources || []).map(function (s) {
          return name(s.node) + " " + JSON.stringify(s.previousRect) + " -> " + JSON.stringify(s.currentRect);
        }) });
      });
    }).observe({ type: "layout-shift", buffered: true });
  } catch (e) { window.__shifts = null; }
})();
"""

# once the page has drawn: two animation frames after the last change to the DOM, 400 ms without one
SETTLED = """() => new Promise(function (ok) {
  var last = performance.now();
  var mo = new MutationObserver(function () { last = performance.now(); });
  mo.observe(document.documentElement, { subtree: true, childList: true, attributes: true, characterData: true });
  (function check() {
    if (performance.now() - last > 400) { mo.disconnect(); requestAnimationFrame(function () { requestAnimationFrame(function () { ok(true); }); }); }
    else setTimeout(check, 100);
  })();
})"""


FRAME = "() => new Promise(function (ok) { requestAnimationFrame(function () { requestAnimationFrame(ok); }); })"


@pytest.fixture(scope="module")
def browser(_chromium):
    """Debian's chromium (new headless), its GPU compositing left on (software): with the old headless shell
    the other tests use, or with --disable-gpu, the page reports no layout shift at all."""
    import shutil

    if not shutil.which("chromium"):
        pytest.skip("Debian's chromium is not installed (the headless shell reports no layout shift)")
    from tests.conftest import CHROMIUM_ARGS

    args = [a for a in CHROMIUM_ARGS if a != "--disable-gpu"]
    b = _chromium.browser_type.launch(executable_path=shutil.which("chromium"), args=args)
    yield b
    b.close()


@pytest.fixture(scope="module")
def org(server):
    return organiser_api(server)


def shifts(page):
    got = page.evaluate("window.__shifts")
    assert got is not None, "this browser has no layout-shift entries"
    return got


def total(entries):
    return round(sum(e["value"] for e in entries), 4)


def phone(browser, server, locale="en-GB"):
    ctx = browser.new_context(base_url=server.url, locale=locale, **PHONE)
    ctx.add_init_script(OBSERVE)
    ctx.set_default_timeout(15_000)
    return ctx


def load_late(page, url, rounds=6):
    """Open ``url`` with everything its scripts draw coming after the page's first paint, in steps: the
    scripts, and then each round of what they ask for (the match, the stream, the map), are held until the
    page has painted what it had, then let go together, one round after the other. On a phone's network and
    CPU that is the order they come in; on the test machine they would all come before the first paint,
    and no shift would show."""
    held = []

    def hold(route):
        if route.request.resource_type in ("script", "fetch", "xhr", "eventsource"):
            held.append(route)
        else:
            route.continue_()

    page.route("**/*", hold)
    page.goto(url, wait_until="commit")
    page.wait_for_function("() => performance.getEntriesByType('paint').length > 0")
    page.wait_for_timeout(500)  # (a shift is measured from a frame shown: the first ones come after the paint)
    for _ in range(rounds):
        page.wait_for_timeout(150)  # (the page draws what came, and asks for more)
        page.evaluate(FRAME)  # and shows it
        now = held[:]
        del held[:]
        for r in now:
            r.continue_()
    page.unroute("**/*")
    for r in held:
        r.continue_()


def _why(entries):
    return json.dumps(entries, indent=1)[:4000]


def _deal(org, game):
    """The game's first step, as another phone takes it (an event the page did not make)."""
    def act(mid):
        seq = org.ok("GET", f"/api/matches/{mid}")["seq"]
        if game == "conquest-italy":
            org.ok("POST", f"/api/matches/{mid}/conquest/deal", {"expected_seq": seq, "data": {}})
        elif game == "rome-is-burning":
            org.ok("POST", f"/api/matches/{mid}/rome/deal", {"expected_seq": seq, "data": {}})
        elif game == "richelieu":
            org.ok("POST", f"/api/matches/{mid}/events", {"expected_seq": seq, "type": "action",
                                                          "data": {"player": "Anna", "action": "income"}})
        else:
            org.ok("POST", f"/api/matches/{mid}/events", {"expected_seq": seq, "type": "place",
                                                          "data": {"player": "Anna", "piece": "monastery",
                                                                   "country": "England"}})
        return org.ok("GET", f"/api/matches/{mid}")["seq"]
    return act


GAMES = ["web-of-power", "richelieu", "rome-is-burning", "conquest-italy"]
TV = {"viewport": {"width": 1280, "height": 720}, "device_scale_factor": 1}  # the box's own screen: a desktop


def measure(page, url, ready, act, done):
    """The shifts of ``url`` as it loads (until ``ready`` holds and the page has settled), then as ``act``
    (another device's write) comes to it (until ``done(act())`` holds and the page has settled again); each
    summed, and both printed (pytest -s) for the notes."""
    load_late(page, url)
    page.wait_for_function(ready)
    page.evaluate(SETTLED)
    loading = shifts(page)
    page.wait_for_function(done, arg=act())
    page.evaluate(SETTLED)
    arriving = shifts(page)[len(loading):]
    print(f"\nlayout shift {url}: {total(loading)} as it loads, {total(arriving)} as an event comes")
    return loading, arriving


def within(what, loading, arriving):
    assert total(loading) <= LIMIT, f"{what} shifted {total(loading)} as it loaded:\n{_why(loading)}"
    assert total(arriving) <= LIMIT, f"{what} shifted {total(arriving)} as an event came:\n{_why(arriving)}"


SEQ_AT_LEAST = "n => window.companionMatch && window.companionMatch.seq >= n"


@pytest.mark.parametrize("game", GAMES)
def test_a_match_page_does_not_jump_as_it_loads_nor_as_an_event_arrives(browser, server, org, game):
    """Anna's phone, joined with the club's link and sat at her seat (the one that taps; a phone that did not
    join, Lighthouse's, sees the same page less its controls), as the match opens and as Bruno's phone records
    the game's first step (in Richelieu and Web of Power a move of Anna's: her phone says so over its page,
    docs/rulings.md#playing-for-another-seat)."""
    mid = org.ok("POST", "/api/matches", {"game": game, "players": PLAYERS})["id"]
    ctx = phone(browser, server)
    try:
        assert ctx.request.get(server.join_url).ok
        assert ctx.request.put(f"/api/matches/{mid}/seat", data={"player": "Anna"},
                               headers={"Origin": server.url}).ok
        page = ctx.new_page()
        got = measure(page, f"/m/{mid}", "() => document.querySelector('#game-tracker[data-mounted]')",
                      lambda: _deal(org, game)(mid), SEQ_AT_LEAST)
        assert page.evaluate("window.companionMatch.match.seat") == "Anna"
        if game in ("richelieu", "web-of-power"):  # Anna's move, recorded for her: her phone said so as it came
            assert page.evaluate("document.getElementById('helped-text').textContent").startswith(
                "The organiser recorded for you: "), page.evaluate("document.getElementById('helped').outerHTML")
            assert page.locator("#helped").is_visible()
        within(f"{game}'s page", *got)
    finally:
        ctx.close()


@pytest.mark.parametrize("game", GAMES)
def test_the_tv_does_not_jump_as_it_loads_nor_as_an_event_arrives(browser, server, org, game):
    """The TV beside the board (``/m/<id>/display``, 1280 x 720, a desktop's profile): its clock, scores and
    the game's own panels (the conquest's map) keep their place while they come."""
    mid = org.ok("POST", "/api/matches", {"game": game, "players": PLAYERS})["id"]
    ctx = browser.new_context(base_url=server.url, locale="en-GB", **TV)
    ctx.add_init_script(OBSERVE)
    ctx.set_default_timeout(15_000)
    try:
        page = ctx.new_page()
        got = measure(page, f"/m/{mid}/display", "() => window.companionMatch && window.companionMatch.loaded",
                      lambda: _deal(org, game)(mid), SEQ_AT_LEAST)
        within(f"{game}'s TV", *got)
    finally:
        ctx.close()


def test_the_tables_page_and_the_home_do_not_jump(browser, server, org):
    """The club room's tables (``/tournament``) as they load and as a table's event changes its card (the
    conquest's deal done: its step), and the home's list of matches as it loads and as another phone opens a
    new match; on a phone."""
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": PLAYERS, "label": "Table 1"})["id"]
    ctx = phone(browser, server)
    try:
        page = ctx.new_page()
        card = f"#tables [data-id='{mid}']"

        def deal():  # the table's card as it was; the page has the event once the card says something else
            was = page.inner_text(card)
            _deal(org, "conquest-italy")(mid)
            return [card, was]
        got = measure(page, "/tournament", "() => document.querySelector('#tables[data-count]')", deal,
                      "a => { var e = document.querySelector(a[0]); return e && e.innerText !== a[1]; }")
        within("the tables' page", *got)
        page.close()
        page = ctx.new_page()
        got = measure(page, "/", "() => document.querySelector('#open-matches li[data-id]')",
                      lambda: org.ok("POST", "/api/matches", {"game": "richelieu", "players": PLAYERS})["id"],
                      "id => !!document.querySelector('#open-matches li[data-id=\"' + id + '\"]')")
        within("the home", *got)
    finally:
        ctx.close()
