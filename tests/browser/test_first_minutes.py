"""The organiser's first minutes on a fresh box (390x844, English and Italian): after the first PIN the club's
join page says the next step (add the players, then a match) with its links; its "New club code" is a short
button with its consequences in a note under it; a box without NetworkManager says so in words for the club
(no "nmcli"); the menu names the room screen apart from the tournaments. Screenshots:
test-artifacts/first-minutes-*.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.trackers_kit import organiser_page
from tests.evening.kit import CATALOGUES

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}


def test_the_first_pin_names_the_club_and_its_page_renames_it(new_context, server, artifacts_dir):
    """First (the box is fresh): the first-run form asks the club's name beside the PIN, filled in with the
    default; the roster then carries that name, and the club's page renames it."""
    cat = CATALOGUES["it-IT"]
    page = new_context(viewport=PHONE, locale="it-IT").new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto("/login")
    name = page.locator("#club-name")
    expect(name).to_have_value(cat["players.first_club"])
    expect(page.locator("#setup-form")).to_contain_text(cat["login.club_name"])
    assert page.locator("#setup-form").bounding_box()["width"] <= PHONE["width"]
    page.fill("#setup-code", server.setup_code)
    page.fill("#new-pin", "482193")
    name.fill("Circolo del Dado")
    page.screenshot(path=str(artifacts_dir / "first-minutes-club-name.png"), full_page=True)
    page.click("#setup-form button[type=submit]")
    page.wait_for_url("**/join")
    page.goto("/players")
    expect(page.locator("#no-club")).to_have_count(0)  # the club is there before its first player
    page.fill("#add-name", "Anna")
    page.click("#add-player-btn")
    expect(page.locator("#roster li")).to_have_count(1)
    clubs = page.evaluate("Companion.api('GET', '/api/seasons')")["clubs"]
    assert [c["name"] for c in clubs] == ["Circolo del Dado"]
    page.goto(f"/seasons/clubs/{clubs[0]['id']}")
    page.fill("#club-name", "Circolo del Dado Torino")
    page.click("#club-rename")
    expect(page.locator("h1")).to_have_text("Circolo del Dado Torino")
    page.goto("/login")  # signed in: no first-run form, no club name
    expect(page.locator("#club-name")).to_have_count(0)
    assert not page.errors, page.errors


@pytest.mark.parametrize("locale", ["en-GB", "it-IT"])
def test_the_join_page_after_the_first_pin_says_what_comes_next(new_context, server, locale, artifacts_dir):
    cat = CATALOGUES[locale]
    page = organiser_page(new_context, server, viewport=PHONE, locale=locale)
    page.goto("/join")
    nxt = page.locator("#join-next")
    expect(nxt).to_contain_text(cat["join.next"])
    expect(nxt.locator("a[href='/players']")).to_have_text(cat["join.next_players"])
    expect(nxt.locator("a[href='/new']")).to_have_text(cat["join.next_match"])
    box = nxt.bounding_box()
    assert box["y"] + box["height"] <= PHONE["height"], box  # in the first screen
    button = page.locator("#new-join")
    expect(button).to_have_text(cat["join.new"])
    assert button.bounding_box()["height"] <= 60  # one line
    expect(page.locator("#new-join-note")).to_have_text(cat["join.new_note"])
    status = page.locator("#wifi-status")  # (the test server's PATH has no nmcli)
    expect(status).to_contain_text(cat["wifi.unavailable_plain"])
    assert "nmcli" not in status.inner_text() and "NetworkManager" not in status.inner_text()
    page.screenshot(path=str(artifacts_dir / f"first-minutes-join-{locale}.png"), full_page=True)
    # the menu: the room screen and the tournaments, two different words
    room = page.locator("a[href='/tournament']").first.text_content().strip()
    tours = page.locator("a[href='/tournaments']").first.text_content().strip()
    assert room == cat["nav.tournament"] and tours == cat["nav.tournaments"]
    assert not set(room.lower().split()) & set(tours.lower().split()), (room, tours)
    assert not page.errors, page.errors
