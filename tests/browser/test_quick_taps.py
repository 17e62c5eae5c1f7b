"""One write at a time on a phone whose writes are answered late (a busy box): the live stream shows the
placement before its answer arrives. A tap made on that newer state (the end of the turn) is not lost: it
goes once the placement is answered. A double tap made before anything new was shown is refused with
"wait", so nothing is placed twice."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.trackers_kit import Api, joined_page

pytestmark = pytest.mark.browser

# every POST of a match event is answered 0.8 s late (the stream is not delayed)
SLOW_ANSWERS = """(() => { const f = window.fetch; window.fetch = function (u, o) {
    const p = f.apply(this, arguments);
    if (o && o.method === 'POST' && String(u).indexOf('/events') >= 0)
        return p.then(r => new Promise(ok => setTimeout(() => ok(r), 800)));
    return p; }; })();"""


def phone(new_context, server, mid):
    page = joined_page(new_context, server, viewport={"width": 390, "height": 844})
    page.add_init_script(SLOW_ANSWERS)
    page.goto(f"/m/{mid}")
    page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
    page.wait_for_function("() => window.companionMatch && window.companionMatch.view")
    return page


def test_a_tap_on_the_state_the_stream_showed_goes_after_the_pending_write(new_context, server, tokens):  # noqa: F811
    api = Api(server, tokens["organiser"])
    mid = api.create("web-of-power", ["Anna", "Bruno", "Carla"])
    page = phone(new_context, server, mid)
    page.click("#wop-quick-countries button:not([disabled]) >> nth=0")
    page.click("#wop-quick-where button >> nth=0")
    # the stream shows the placement while its answer is still on its way
    page.wait_for_function("() => window.companionMatch.seq >= 1 && window.companionMatch.busy")
    expect(page.locator("#wop-turn-end")).to_be_visible()
    page.click("#wop-turn-end")
    page.wait_for_function("() => window.companionMatch.seq >= 2 && !window.companionMatch.busy", timeout=15000)
    assert [e["type"] for e in api.engine(mid).effective] == ["place", "turn.end"]
    assert page.errors == []


def test_a_double_tap_before_anything_new_is_shown_is_refused(new_context, server, tokens):  # noqa: F811
    api = Api(server, tokens["organiser"])
    mid = api.create("web-of-power", ["Anna", "Bruno", "Carla"])
    page = phone(new_context, server, mid)
    page.route("**/stream*", lambda route: route.abort())  # nothing new is shown until the answer
    page.reload()
    page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
    page.click("#wop-quick-countries button:not([disabled]) >> nth=0")
    page.evaluate("""() => { const b = document.querySelector('#wop-quick-where button');
        b.click(); b.click(); }""")
    expect(page.locator(".toast").last).to_contain_text("Please wait")
    page.wait_for_function("() => window.companionMatch.seq >= 1 && !window.companionMatch.busy", timeout=15000)
    assert [e["type"] for e in api.engine(mid).effective] == ["place"]
