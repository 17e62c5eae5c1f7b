"""A move the rules refuse, tapped on a phone: the toast says why in the page's language (Italian when the
person chose Italian with the language switch, English otherwise), never a JSON path."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.trackers_kit import Api, joined_page, open_match

pytestmark = pytest.mark.browser

PLAYERS = ["Anna", "Bruno", "Carla"]


def _refused_tap(new_context, server, api, lang):
    """Anna has 1 monastery left of her 20; her phone's quick placement taps "2 monasteries · England"."""
    mid = api.create("web-of-power", PLAYERS)
    for count in [2] * 9 + [1]:
        api.event(mid, "place", {"player": "Anna", "piece": "monastery", "country": "England", "count": count})
    page = joined_page(new_context, server, viewport={"width": 360, "height": 780})
    page.goto(f"/?lang={lang}")  # the language switch: the page's language from now on
    open_match(page, mid, seat="Anna")
    expect(page.locator("html")).to_have_attribute("lang", lang)
    page.click("#wop-quick-countries button[data-country=England]")
    page.click("#wop-quick-where button[data-count='2']")
    toast = page.locator("#toast")
    expect(toast).to_be_visible()
    return page, toast


def test_an_italian_page_shows_the_refusal_in_italian(new_context, server, tokens, artifacts_dir):  # noqa: F811
    api = Api(server, tokens["player"])
    page, toast = _refused_tap(new_context, server, api, "it")
    expect(toast).to_have_text("a Anna resta 1 monastero")  # one: the singular
    page.screenshot(path=str(artifacts_dir / "error-language-it.png"))
    assert page.errors == []


def test_an_english_page_shows_it_in_english(new_context, server, tokens, artifacts_dir):  # noqa: F811
    api = Api(server, tokens["player"])
    page, toast = _refused_tap(new_context, server, api, "en")
    expect(toast).to_contain_text("Anna has 1 monastery left")
    assert "$" not in toast.text_content()
    page.screenshot(path=str(artifacts_dir / "error-language-en.png"))
    assert page.errors == []
