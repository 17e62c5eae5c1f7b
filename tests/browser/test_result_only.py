"""Final result only in headless Chromium: a conquest match created on the new-match page with "Only the final
result", the places tapped on the match page (a tie, the objective, an elimination), a wrong shape explained
in words, the ranking "entered by hand" on the match page and the TV page (docs/rulings.md, "Final result
only")."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.trackers_kit import Api, joined_page

pytestmark = pytest.mark.browser

PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]


def test_enter_a_final_result_by_taps(new_context, server, tokens, artifacts_dir):  # noqa: F811
    page = joined_page(new_context, server, viewport={"width": 360, "height": 800})
    page.goto("/new")
    page.select_option("#game", "conquest-italy")
    names = page.locator("#players .player-name")
    page.click("#add-player")
    for i, name in enumerate(PLAYERS):
        names.nth(i).fill(name)
    page.check("#opt-result")
    page.click("#create")
    page.wait_for_url("**/m/*")
    mid = page.url.rsplit("/", 1)[-1]
    expect(page.locator("#result-card")).to_be_visible()
    expect(page.locator("#game-tracker")).to_be_hidden()
    expect(page.locator("#clock-panel")).to_be_hidden()
    expect(page.locator("#result-waiting")).to_be_visible()

    def tap(player, place):
        page.click(f'#result-rows [data-player="{player}"][data-place="{place}"]')

    # a shape that cannot be: 1, 2, 2, 3 is told in words, nothing is sent
    tap("Bruno", 1); tap("Anna", 2); tap("Carla", 2); tap("Dario", 3)
    page.click("#result-save")
    expect(page.locator("#result-error")).to_contain_text("Dario cannot be 3")
    assert "$" not in page.locator("#result-error").inner_text()
    tap("Dario", 4)
    page.click('#result-rows [data-player="Bruno"][data-flag="objective"]')
    page.click('#result-rows [data-player="Dario"][data-flag="eliminated"]')
    page.screenshot(path=str(artifacts_dir / "result-only-form.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    page.click("#result-save")
    expect(page.locator("#result-by-hand")).to_have_text("Result entered by hand")
    expect(page.locator("#result-card")).to_be_hidden()
    expect(page.locator("#match-status")).to_have_text("ended")
    rows = page.eval_on_selector_all("#result-ranking tbody tr", "trs => trs.map(tr => [tr.dataset.player, tr.children[0].textContent])")
    assert rows == [["Bruno", "1"], ["Anna", "2"], ["Carla", "2"], ["Dario", "4"]]
    expect(page.locator("#history li").first).to_contain_text("Result entered by hand: 1. Bruno, 2. Anna, 2. Carla, 4. Dario")
    page.screenshot(path=str(artifacts_dir / "result-only-entered.png"), full_page=True)
    # the play log: the end card's link carries the whole ranking to BG Stats (docs/playlog.md)
    from companion.core import playlog

    expect(page.locator("#playlog-card")).to_be_visible()
    play = playlog.parse_link(page.get_attribute("#playlog-app", "href"))
    assert [(p["name"], p["rank"], p["winner"]) for p in play["players"]] == [
        ("Anna", 2, False), ("Bruno", 1, True), ("Carla", 2, False), ("Dario", 4, False)]
    assert play["game"]["name"] == "Conquest of Italy" and play["sourcePlayId"] == mid

    # the engine agrees (the export folded), and the TV page shows the ranking
    org = Api(server, tokens["organiser"])
    ranking = org.engine(mid).final_ranking()
    assert [(r["player"], r["place"], r["objective"], r["eliminated"]) for r in ranking] == [
        ("Bruno", 1, True, False), ("Anna", 2, False, False), ("Carla", 2, False, False), ("Dario", 4, False, True)]
    tv = new_context(viewport={"width": 1280, "height": 720}).new_page()
    tv.goto(f"/m/{mid}/display?reveal=50")
    expect(tv.locator("#result-by-hand")).to_be_visible()
    expect(tv.locator("#result-ranking tbody tr")).to_have_count(4)
    expect(tv.locator("#result-ranking tbody tr").first).to_contain_text("Bruno")
    expect(tv.locator("#tv-playlog")).to_be_visible()  # the play log's QR code where the join code was
    expect(tv.locator("#table-qr")).to_be_hidden()
    tv.screenshot(path=str(artifacts_dir / "result-only-tv.png"))

    # Italian
    page.goto(f"/m/{mid}?lang=it")
    expect(page.locator("#result-by-hand")).to_have_text("Risultato inserito a mano")
