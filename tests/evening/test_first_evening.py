"""A first evening without reading: a fresh box's home page says how to become the organiser; the organiser
signs in with the setup code (the club named there, its default kept), finds Tournaments in the menu, puts
the first roster players on the club, one after the other on the same list, and makes a tournament from them; a phone that is
not signed in reads how to play or to sign in."""

import pytest
from playwright.sync_api import expect

from tests.evening.kit import EN, IT, PHONE, Evening

pytestmark = pytest.mark.browser


def test_a_fresh_box_says_how_to_become_its_organiser_and_the_first_players_go_on_the_roster(browser, server):
    guest = browser.new_context(base_url=server.url, viewport=PHONE, locale="it-IT")
    try:
        home = guest.new_page()
        home.goto("/")
        expect(home.locator("#first-steps h2")).to_have_text(IT["home.first_title"])
        expect(home.locator("#first-steps")).to_contain_text(IT["home.first_steps"])
        home.click("#first-login")
        home.wait_for_url("**/login")
        expect(home.locator("#setup-form")).to_be_visible()  # the setup code and a new PIN

        ev = Evening(browser, server)  # the organiser's phone: the setup code, then the PIN
        org = ev.org
        org.goto("/")
        expect(org.locator("#first-steps")).to_have_count(0)
        org.click("#menu-toggle")
        org.click("#nav-tournaments")
        org.wait_for_url("**/tournaments")
        expect(org.locator("h1")).to_have_text(EN["tday.title"])
        # the roster of the club the first PIN named (its default name): ten names, one after the other
        org.goto("/players")
        expect(org.locator("#no-club")).to_have_count(0)
        names = [f"Player {i:02d}" for i in range(1, 11)]
        for i, name in enumerate(names):
            org.fill("#add-name", name)
            org.press("#add-name", "Enter")  # the keyboard's Enter: no tap
            expect(org.locator("#roster li")).to_have_count(i + 1)
            expect(org.locator("#add-name")).to_be_focused()
        assert org.url.endswith("/players")  # (before, each add opened the player's page: 30 taps for 10)
        org.reload()  # the list is the stored one: nothing stale
        expect(org.locator("#roster li")).to_have_count(10)
        clubs = org.request.get("/api/seasons").json()["clubs"]
        assert [c["name"] for c in clubs] == [EN["players.first_club"]]

        # a phone that is not signed in, once the box has its organiser: how to play, or to sign in
        home.goto("/?lang=en")
        expect(home.locator("#first-steps")).to_have_count(0)
        expect(home.locator("#viewer-note")).to_contain_text(EN["home.watching"])
        assert ev.errors() == []
    finally:
        guest.close()
