"""What a viewer sees (no control that writes, one line on how to join) against a player's page, for every
game at 390x844; undo that asks first and says what it takes back, and redo of the last undo."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_phone_cues import _set_up
from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.trackers_kit import Api, joined_page, open_match, wait_seq

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
PLAYERS = ["Anna", "Bruno", "Carla"]
GAMES = ["conquest-italy", "richelieu", "rome-is-burning", "web-of-power"]
# every control a person could write with, shown on the page (the header's menu, theme and language are
# the page's own, not the match's)
WRITES = "main button, main input, main select, main textarea"


def visible_writes(page):
    return page.eval_on_selector_all(
        WRITES, "els => els.filter(e => e.offsetParent !== null && getComputedStyle(e).visibility !== 'hidden')"
        ".map(e => e.id || e.className || e.tagName)")


@pytest.mark.parametrize("game", GAMES + ["result-only"])
def test_a_viewer_sees_no_write_controls_a_player_does(new_context, server, tokens, artifacts_dir, game):  # noqa: F811
    api = Api(server, tokens["organiser"])
    # "result-only": a match recorded by its final result alone (its page has a card of place buttons)
    mid = api.create("richelieu", PLAYERS, tracking="result") if game == "result-only" else api.create(game, PLAYERS)
    viewer = new_context(viewport=PHONE).new_page()
    viewer.goto(f"/m/{mid}")
    if game == "result-only":
        viewer.wait_for_selector("#result-card", state="attached")
    else:
        viewer.wait_for_selector("#game-tracker[data-mounted]", state="attached")
    wait_seq(viewer, 0)
    expect(viewer.locator("#role-badge.role-viewer")).to_be_visible()
    expect(viewer.locator("#viewer-note")).to_have_text("You are watching. To play, scan this table's QR code.")
    expect(viewer.locator("#scores")).not_to_be_empty()
    assert visible_writes(viewer) == []
    viewer.screenshot(path=str(artifacts_dir / f"viewer-{game}.png"), full_page=True)

    player = open_match(joined_page(new_context, server, viewport=PHONE), mid)
    expect(player.locator("#viewer-note")).to_have_count(0)
    shown = visible_writes(player)
    assert "undo" in shown  # (and "Who are you?": a phone joined by the club-wide link picks its seat)
    controls = "#result-card button" if game == "result-only" else "#game-tracker button"
    assert len(player.eval_on_selector_all(controls, "bs => bs.filter(b => b.offsetParent !== null)")) > 0
    player.screenshot(path=str(artifacts_dir / f"player-{game}.png"), full_page=True)
    if game == "conquest-italy":
        # the set-up done, the clock not started: the viewer has no "Start the clock" to tap, and is not told to
        _set_up(api, mid)
        expect(viewer.locator("#ci-status")).to_have_text("Set-up done: the clock starts when the table taps “Start the clock”.")
        expect(viewer.locator("#ci-clock-start")).to_be_hidden()


def test_the_home_page_of_a_viewer_offers_no_new_match(new_context, server):
    viewer = new_context(viewport=PHONE, locale="it-IT").new_page()
    viewer.goto("/?lang=it")
    # no organiser PIN chosen on this box yet: the home page says how to become its organiser
    expect(viewer.locator("#first-steps h2")).to_have_text("Un box nuovo: diventane l'organizzatore")
    expect(viewer.locator("#first-login")).to_have_attribute("href", "/login")
    expect(viewer.locator("#new-match")).to_be_hidden()
    expect(viewer.locator("#top-nav a[href='/new']")).to_be_hidden()
    player = joined_page(new_context, server, viewport=PHONE)
    player.goto("/")
    expect(player.locator("#new-match")).to_be_visible()
    expect(player.locator("#viewer-note")).to_have_count(0)


def test_undo_asks_first_and_redo_takes_the_undo_back(new_context, server, tokens, artifacts_dir):  # noqa: F811
    api = Api(server, tokens["player"])
    mid = api.create("rome-is-burning", PLAYERS, clock=True)
    page = open_match(joined_page(new_context, server, viewport=PHONE), mid)
    expect(page.locator("#redo")).to_be_hidden()
    page.click("#clock-start")
    wait_seq(page, 1)
    page.click("#undo")
    expect(page.locator("#undo-confirm-text")).to_have_text("Undo: Clock started?")
    page.screenshot(path=str(artifacts_dir / "undo-confirm.png"), full_page=True)
    page.click("#undo-no")  # kept: nothing stored
    expect(page.locator("#undo-confirm")).to_be_hidden()
    assert page.evaluate("window.companionMatch.seq") == 1
    page.click("#undo")
    page.click("#undo-yes")
    wait_seq(page, 2)
    expect(page.locator("#clock-start")).to_be_visible()
    redo = page.locator("#redo")
    expect(redo).to_be_visible()
    expect(redo).to_have_attribute("aria-label", "Redo: Clock started")
    page.screenshot(path=str(artifacts_dir / "redo.png"), full_page=True)
    redo.click()
    wait_seq(page, 3)
    expect(page.locator("#history li[data-seq='3']")).to_have_attribute("data-type", "clock.start")
    expect(page.locator("#clock-pause")).to_be_visible()
    expect(redo).to_be_hidden()  # only the most recent undo, once


def test_errors_are_sentences_never_json_paths(new_context, server):
    page = new_context(viewport=PHONE).new_page()
    page.goto("/login")
    expect(page.locator("#setup-form")).to_be_visible()  # first run: no PIN yet
    page.fill("#setup-code", "00000000")
    page.fill("#new-pin", "246813")
    page.click("#setup-form button[type=submit]")
    expect(page.locator("#form-error")).to_have_text("That setup code is wrong")
    expect(page.locator("#setup-code")).to_have_class("input-bad")  # the field marks the input, not the text
    # what a tracker's toast says of an error the API names by a JSON path
    said = page.evaluate("""() => [
      Companion.errorText(new Companion.ApiError(400, {error: "chains of 9 monasteries, but Anna has 3", field: "$.data.chains.Anna"})),
      Companion.errorText(new Companion.ApiError(409, {error: "must be between 1 and 3", field: "$.data.dice"})),
      Companion.errorText(new Companion.ApiError(409, {error: "the match has ended", field: "$.type"})),
      Companion.errorText(new Companion.ApiError(401, {error: "this needs the player role", field: "Authorization"}))]""")
    assert said == ["Chains · Anna: chains of 9 monasteries, but Anna has 3", "Dice: must be between 1 and 3",
                    "the match has ended", "You are only watching: scan the table's QR code to play"]
    assert not any("$" in s for s in said)
