"""The conquest set-up by taps in headless Chromium at 390x844 (docs/rulings.md#set-up-and-the-deal): the
table types the real cards it dealt (a player, then their cities; the last player gets the rest), the Pi
fixes the majority rule and tells its swaps; then the units go 5 at a time, one tap per unit or "the rest
here", each round sent by its last tap. The numbers come from the engine's fold of the exported events."""

import pytest
from playwright.sync_api import expect

from companion.games import conquest_italy as ci
from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.trackers_kit import Api, joined_page, open_match, wait_seq

pytestmark = pytest.mark.browser

PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]
PHONE = {"width": 390, "height": 844}


def test_deal_by_the_cards_then_placement_by_taps(new_context, server, tokens, artifacts_dir):  # noqa: F811
    api, org = Api(server, tokens["player"]), Api(server, tokens["organiser"])
    mid = api.create("conquest-italy", PLAYERS)
    page = open_match(joined_page(new_context, server, viewport=PHONE), mid)
    gm = ci.map_of(None)
    want = ci.deal_counts(PLAYERS, len(gm.cities))
    # the cards as they came out at the table: Anna got the whole of Sicilia e Calabria (at most 2 of 5)
    region = next(r for r in gm.regions if r["name"] == "Sicilia e Calabria")["cities"]
    rest = [c for c in gm.cities if c not in region]
    cards = {"Anna": region + rest[:want["Anna"] - len(region)]}
    rest = rest[want["Anna"] - len(region):]
    for p in PLAYERS[1:3]:
        cards[p], rest = rest[:want[p]], rest[want[p]:]
    page.click("#ci-deal-hand summary")
    taps = 0
    for p in PLAYERS[:3]:
        expect(page.locator(f'#ci-deal-players [data-player="{p}"]')).to_have_attribute("aria-pressed", "true")
        for c in cards[p]:
            page.click(f'#ci-deal-grid [data-city="{c}"]')
            taps += 1
    # Dario's cards are the rest: no tap for them
    expect(page.locator("#ci-deal-send")).to_have_text(f"Record the deal (the last {want['Dario']} cities to Dario)")
    page.screenshot(path=str(artifacts_dir / "conquest-deal-by-cards.png"), full_page=False)
    page.click("#ci-deal-send")
    wait_seq(page, 1)
    f = org.engine(mid)
    owner = f.game_state["owner"]
    assert ci.deal_violations(owner, gm) == []
    assert {p: sum(1 for c in owner if owner[c] == p) for p in PLAYERS} == want
    assert taps == len(gm.cities) - want["Dario"]
    expect(page.locator("#ci-swaps")).to_contain_text("The Pi swapped for the majority rule")
    expect(page.locator("#history")).to_contain_text("Move those units on the board")

    # the placements: the first round one tap per unit (5 taps, the last one sends), then "the rest here"
    placer = f.game_state["next_placer"]
    assert placer == "Anna"
    rows = page.locator("#ci-place-list .ci-place-row")
    first, second = rows.nth(0).get_attribute("data-city"), rows.nth(1).get_attribute("data-city")
    for i, c in enumerate([first, first, second, first]):
        page.click(f'#ci-place-list [data-city="{c}"] .ci-unit')
    expect(page.locator("#ci-place-draft")).to_contain_text("1 unit left")
    page.screenshot(path=str(artifacts_dir / "conquest-place-taps.png"), full_page=False)
    page.click(f'#ci-place-list [data-city="{second}"] .ci-unit')
    wait_seq(page, 2)
    f = org.engine(mid)
    assert f.game_state["units"][first] == 1 + 3 and f.game_state["units"][second] == 1 + 2
    rounds = 1
    while f.game_state["phase"] == "place":
        n = f.last_seq
        page.locator("#ci-place-list .ci-place-row").last.locator(".ci-rest").click()  # one tap a round
        wait_seq(page, n + 1)
        f = org.engine(mid)
        rounds += 1
    assert rounds == 16  # 4 players, 30 units each, 10 or 11 cities dealt: 4 rounds each, one tap each at best
    assert all(ci.units_on_map(f.game_state, p) == 30 for p in PLAYERS)
    expect(page.locator("#ci-place")).to_be_hidden()
