"""The tables page's "Start the round": the clocked tables waiting to start get their clocks started; the
others (a game without the clock, a clock already running) are skipped and named with the reason, in the
page's language."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_pages import create_match, joined_page

pytestmark = pytest.mark.browser


def _organiser(new_context, server, locale):
    org = new_context(locale=locale, viewport={"width": 390, "height": 844}).new_page()
    org.goto("/login")
    if org.locator("#setup-form").is_visible():
        org.fill("#setup-code", server.setup_code)
        org.fill("#new-pin", "482193")
        org.click("#setup-form button[type=submit]")
    else:
        org.fill("#pin", "482193")
        org.click("#login-form button[type=submit]")
    org.wait_for_url(lambda url: "/login" not in url)
    return org


@pytest.mark.parametrize("locale, started, skipped", [
    ("en-GB", "1 clock started", "Table 2 (Richelieu plays without the clock)"),
    ("it-IT", "1 orologio avviato", "Table 2 (Richelieu si gioca senza orologio)"),
])
def test_start_the_round_starts_the_clocked_tables_and_says_which_were_skipped(new_context, server, artifacts_dir,
                                                                              locale, started, skipped):
    phone = joined_page(new_context, server)
    clocked = create_match(phone, "rome-is-burning", ["Anna", "Bruno"], label="Table 1", clock=True)
    create_match(phone, "richelieu", ["Carla", "Dario"], label="Table 2", clock=False)
    org = _organiser(new_context, server, locale)
    org.goto("/tournament")
    expect(org.locator("#tables")).to_contain_text("Table 2")
    org.click("#start-round")
    toast = org.locator(".toast").last
    expect(toast).to_contain_text(started)
    expect(toast).to_contain_text(skipped)
    org.screenshot(path=str(artifacts_dir / f"tournament-round-{locale}.png"), full_page=True)
    assert org.request.get(f"/api/matches/{clocked}").json()["view"]["clock"]["running"] is True
