"""The organiser's match page as the table sits down (390x844, English and Italian): a new match shows how
the table joins first (its seats and its code at the top, open), the table's link is sent to a phone (the
browser's share sheet, or copied and said so where there is none), "Give to phone" is a labelled field with
words for what each button does (and says so when no phone is picked), the organiser's own seat is asked
in the words the players read ("Who are you?"), and once the match is under way the seats go back to the
bottom. Screenshots: test-artifacts/seats-*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.test_tv_screens import playthrough
from tests.browser.trackers_kit import organiser_api, organiser_page
from tests.evening.kit import CATALOGUES

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
# (a random legal playthrough's names: its first event is the match under way)
PLAYERS = ["Alessandra Castellani", "Maximilian Hohenberg-Stein", "Giovanni Battista Rossi", "Caterina Sforza Riario"]


@pytest.fixture(scope="module")
def org(server):
    return organiser_api(server)


def _top(page, sel):
    return page.locator(sel).first.bounding_box()["y"]


@pytest.mark.parametrize("locale", ["en-GB", "it-IT"])
def test_a_new_match_shows_how_the_table_joins_first(new_context, server, org, locale, artifacts_dir):
    cat = CATALOGUES[locale]
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": PLAYERS, "label": "Tavolo 1"})["id"]
    link = org.ok("GET", f"/api/matches/{mid}/join")["url"]
    # no Web Share in this browser (a desktop, or a phone's browser without it): the link is copied
    page = organiser_page(new_context, server, viewport=PHONE, locale=locale)
    page.context.add_init_script("Object.defineProperty(Navigator.prototype, 'share', { value: undefined, configurable: true })")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    page.goto(f"/m/{mid}")
    page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
    # the seats and the table's code come first, open, the code in the first screen
    assert _top(page, "#seat-card") < _top(page, "#clock-panel, #game-tracker")
    expect(page.locator("#table-qr")).to_have_attribute("open", "")
    expect(page.locator("#seats-admin")).to_have_attribute("open", "")
    qr = page.locator("#table-qr .qr svg").bounding_box()
    assert qr["y"] + qr["height"] <= PHONE["height"], qr
    # the organiser's own seat in the players' words
    expect(page.locator("label:has(#seat)")).to_contain_text(cat["seat.who"])
    # who records on the phones (docs/rulings.md#playing-for-another-seat): the default, helping allowed, chosen;
    # under the table's code, in the page's language
    rule = page.locator("#phones-rule-set")
    expect(rule.locator("legend")).to_have_text(cat["phones.title"])
    expect(rule.locator("label:has(input[value='any-seat'])")).to_have_text(cat["phones.any_seat"])
    expect(rule.locator("label:has(input[value='own-seat'])")).to_have_text(cat["phones.own_seat"])
    expect(rule.locator("input[value='any-seat']")).to_be_checked()
    assert _top(page, "#phones-rule-set") > _top(page, "#table-qr")
    page.screenshot(path=str(artifacts_dir / f"seats-new-match-{locale}.png"), full_page=True)

    # the table's link: copied, and said so
    page.click("#table-share")
    expect(page.locator(".toast").last).to_have_text(cat["seat.link_copied"])
    assert page.evaluate("navigator.clipboard.readText()") == link

    # a seat's "Give to phone": a labelled field, tall enough to tap; a button with no phone picked says so
    row = page.locator("#seat-list li[data-player='Maximilian Hohenberg-Stein']")
    field = row.locator("label.seat-give")
    expect(field).to_contain_text(cat["seat.give"])
    box = field.locator("select.seat-phone").bounding_box()
    assert box["height"] >= 44 and box["width"] >= 0.6 * PHONE["width"], box
    expect(row.locator(".seat-move")).to_have_text(cat["seat.move"])
    row.locator(".seat-share").click()
    expect(page.locator(".toast").last).to_have_text(cat["seat.pick_phone_first"])
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    page.locator("#seats-admin").screenshot(path=str(artifacts_dir / f"seats-give-{locale}.png"))

    # under way: the seats make room for the game, at the bottom
    first = playthrough("conquest-italy", 4)[2][0]
    org.event(mid, first["type"], first["data"])
    page.reload()
    page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
    assert _top(page, "#seat-card") > _top(page, "#game-tracker")
    expect(page.locator("#table-qr")).not_to_have_attribute("open", "")
    assert not page.errors, page.errors
