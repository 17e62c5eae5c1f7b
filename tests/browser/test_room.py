"""The club room's screen (/tournament) on a 1920x1080 TV: twelve tables at once, each with its label,
game, clock, phase and whose turn; a table whose time is up or that owes a final roll in the alert colour.
Screenshot: test-artifacts/room-12-tables.png."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_game_night import EN, _watch, final_rounds_events, import_clock_match  # noqa: F401
from tests.browser.test_game_night import api, server  # noqa: F401  (module fixtures)

pytestmark = pytest.mark.browser

TV = {"width": 1920, "height": 1080}
PLAYERS = ["Anna", "Bruno", "Carla"]


def test_twelve_tables_fit_one_screen_with_the_alerts(browser, server, api, artifacts_dir):  # noqa: F811
    org = api["organiser"]
    ids = []
    for k in range(10):
        game = ["conquest-italy", "richelieu", "rome-is-burning", "web-of-power"][k % 4]
        ids.append(org.ok("POST", "/api/matches", {"game": game, "players": PLAYERS, "label": f"Table {k + 1}",
                                                   "options": {"clock": k % 2 == 0}})["id"])
    owed = import_clock_match(api, final_rounds_events())  # owes a final roll
    late = import_clock_match(api, [(0, "clock.start", {"limit_minutes": 1}), (120, "turn.end", {"player": "Anna"})],
                              game="richelieu")  # the time ran out: the round is being finished
    ctx = browser.new_context(base_url=server.url, viewport=TV, locale="en-GB")
    try:
        page = _watch(ctx.new_page())
        page.goto("/tournament")
        cards = page.locator("#tables .table-card")
        expect(cards).to_have_count(12, timeout=10_000)
        # every card is inside the screen: nothing to scroll
        boxes = page.evaluate("""() => Array.from(document.querySelectorAll('#tables .table-card'))
            .map(e => { const r = e.getBoundingClientRect(); return [r.right, r.bottom]; })""")
        assert len(boxes) == 12 and all(r <= TV["width"] and b <= TV["height"] for r, b in boxes), boxes
        roll = page.locator(f'.table-card[data-id="{owed}"]')
        expect(roll).to_have_attribute("data-alert", "roll")
        expect(roll.locator(".table-turn")).to_have_text(EN["clock.awaiting_roll"].format(player="Anna", n=4))
        expect(page.locator(f'.table-card[data-id="{late}"]')).to_have_attribute("data-alert", "time")
        quiet = page.locator(f'.table-card[data-id="{ids[0]}"]')
        assert quiet.get_attribute("data-alert") is None
        expect(quiet.locator(".table-head")).to_have_text("Table 1")
        expect(quiet.locator(".clock-big")).to_have_text("2:00:00")
        assert page.evaluate("document.documentElement.scrollHeight <= document.documentElement.clientHeight + 1")
        page.screenshot(path=str(artifacts_dir / "room-12-tables.png"))
        assert not page.errors, page.errors
    finally:
        ctx.close()
