"""Web of Power on a 360 px phone, on a board transcribed with its photo: the country picks keep their words
inside their buttons, the bar at the bottom shows nothing before a placement (a turn without one, a card
swapped, is asked in the turn box), a councillor is two taps (the country, "a councillor") with nothing to
switch back, and a tap near a site on the photo (a dot of about 10 px there) places the monastery on it; a turn
with no placement left offers its end, and a quick pick that would break a rule is marked once its check comes
back and asked in the bar before anything is recorded (the question fits the screen)."""

import http.client
import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.trackers_kit import Api, joined_page, open_match, wait_seq
from tests.web import boardkit as bk

pytestmark = pytest.mark.browser

PHONE = {"width": 360, "height": 780}
PLAYERS = ["Anna Maria", "Bruno", "Carla"]


def photo_board(server, token, scale=2.67):
    """The test board on a photo as large as a phone's (1600 px): its dots are small on a 360 px screen."""
    org = Api(server, token)
    doc = bk.complete_board("Club board")
    for c in doc["countries"]:
        for site in c["sites"]:
            site["x"], site["y"] = int(site["x"] * scale), int(site["y"] * scale)
    b = org.ok("POST", "/api/boards", {"name": "Club board", "board": doc})
    conn = http.client.HTTPConnection(server.host, timeout=30)
    conn.request("PUT", f"/api/boards/{b['id']}/photo", body=bk.png(int(600 * scale), int(400 * scale)),
                 headers={"Authorization": f"Bearer {token}", "Content-Type": "image/png"})
    r = conn.getresponse()
    r.read()
    conn.close()
    assert r.status == 201
    return b["id"]


def test_web_of_power_at_360_px(new_context, server, tokens, artifacts_dir):  # noqa: F811
    org = Api(server, tokens["organiser"])
    bid = photo_board(server, tokens["organiser"])
    mid = org.ok("POST", "/api/matches", {"game": "web-of-power", "players": PLAYERS,
                                          "options": {"board_id": bid}})["id"]
    page = open_match(joined_page(new_context, server, viewport=PHONE), mid, seat="Anna Maria")
    expect(page.locator("#wop-photo")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    # the country picks: each one's words inside its button
    picks = page.locator("#wop-quick-countries .btn")
    expect(picks).to_have_count(9)
    spill = page.eval_on_selector_all("#wop-quick-countries .btn", """bs => bs.filter(b =>
        b.scrollWidth > b.clientWidth + 1 || Array.from(b.children).some(c => c.getBoundingClientRect().right > b.getBoundingClientRect().right + 1)
      ).map(b => b.dataset.country)""")
    assert spill == []
    # before any placement the bar at the bottom is empty: its one button was a pass ("swaps a card")
    expect(page.locator("#wop-thumb")).to_be_hidden()
    expect(page.locator("#wop-swap")).to_be_visible()
    page.screenshot(path=str(artifacts_dir / "wop-360.png"))
    # a tap 15 px beside a site's dot (about 10 px wide on this screen) places there
    dot = page.locator("#wop-photo-svg circle[data-site='England1']")
    dot.scroll_into_view_if_needed()
    box = dot.bounding_box()
    assert box["width"] < 20  # the dot itself is smaller than a finger
    page.mouse.click(box["x"] + box["width"] / 2 + 15, box["y"] + box["height"] / 2)
    wait_seq(page, 1)
    f = org.engine(mid)
    assert f.game_state["sites"]["England1"] == "Anna Maria"
    # a turn with a placement: the bar ends it; England had no monastery, so nothing more is allowed this turn
    expect(page.locator("#wop-thumb")).to_be_visible()
    expect(page.locator("#wop-swap")).to_be_hidden()
    expect(page.locator("#wop-turn-end")).to_have_text("No placement left: end Anna Maria's turn")
    # a second monastery there would break a rule: the picks say so before the tap, the tap asks first
    page.click("#wop-quick-countries .btn[data-country=England]")
    pick = page.locator("#wop-quick-where .btn[data-site=England2]")
    expect(pick).to_have_class(re.compile(r"\bwop-breaks\b"))
    pick.click()
    ask = page.locator("#wop-ask")
    expect(ask).to_be_visible()
    expect(ask.locator("li")).to_have_text(["England had no monastery when the turn began: at most 1 monastery there this turn"])
    box = ask.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 360 and box["y"] + box["height"] <= 780  # in the bar, on screen
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    page.screenshot(path=str(artifacts_dir / "wop-360-ask.png"))
    page.click("#wop-ask-no")
    expect(ask).to_be_hidden()
    assert org.engine(mid).last_seq == 1  # nothing recorded
    page.click("#wop-turn-end")
    wait_seq(page, 2)
    # Bruno's monastery in England, then his councillor there: two taps, no switch of piece and back
    page.click("#wop-quick-countries .btn[data-country=England]")
    page.click("#wop-quick-where .btn[data-site=England2]")
    wait_seq(page, 3)
    page.click("#wop-quick-countries .btn[data-country=England]")
    page.click("#wop-quick-where .btn[data-piece=councillor]")
    wait_seq(page, 4)
    f = org.engine(mid)
    assert f.effective[-1]["data"] == {"player": "Bruno", "piece": "councillor", "country": "England"}
    expect(page.locator("#wop-piece-monastery")).to_have_attribute("aria-pressed", "true")
    page.screenshot(path=str(artifacts_dir / "wop-360-councillor.png"))
    assert page.errors == []
