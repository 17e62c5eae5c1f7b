"""Tap counts of each game's common action on a phone (390x844), driving the real match pages.

What is counted: one tap = one click on a control of the page (a button, a choice button). Scrolling is not
a tap; nothing is typed; a native <select> would count 2 (open, pick) but none is used on these paths. The
count starts on the match page as loaded and ends when the server has stored the action's event. Every
control tapped is at least 48 px high; the controls used every turn (place, attack, end of turn, the Pi's
roll) sit in the thumb bar at the bottom of the screen, inside the viewport without any scrolling.

- Web of Power: a monastery placement (a country, then its site or how many) <= 2, + 1 for the end of turn.
- Conquest of Italy: one attack with the Pi's dice (the attack, then "Attack") <= 2, + 1 for the end of turn.
- Richelieu: one agent placement (a space, then "Place") <= 2, + 1 for the end of turn.
- Rome Is Burning: one player's turn, the move with the Pi's die <= 2 (it is 1; drawing a card from another
  pawn is optional and not counted); the round's scoring once every card is taken, a separate action, + 1
  (and the next round's deal by the Pi, 1).
"""

import pytest
from playwright.sync_api import expect

from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.test_trackers_rome import best_move
from tests.browser.trackers_kit import Api, joined_page, wait_seq

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
COUNTS = {}


class Taps:
    def __init__(self, page):
        self.page, self.n = page, 0

    def tap(self, selector, thumb=False):
        loc = self.page.locator(selector)
        expect(loc).to_be_visible()
        if thumb:  # in reach as the page stands: no scrolling, at the bottom half of the screen
            box = loc.bounding_box()
            assert box["y"] >= PHONE["height"] / 2 and box["y"] + box["height"] <= PHONE["height"], (selector, box)
        loc.scroll_into_view_if_needed()
        box = loc.bounding_box()
        assert box["height"] >= 48, (selector, box)
        loc.click()
        self.n += 1


def phone(new_context, server, mid):
    page = joined_page(new_context, server, viewport=PHONE)
    page.goto(f"/m/{mid}")
    page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
    page.wait_for_function("window.companionMatch && window.companionMatch.view")
    return page


def seq(page):
    return page.evaluate("window.companionMatch.seq")


def test_web_of_power_placement_and_end_of_turn(new_context, server, tokens, artifacts_dir):  # noqa: F811
    api = Api(server, tokens["player"])
    mid = api.create("web-of-power", ["Anna", "Bruno", "Carla"])
    page = phone(new_context, server, mid)
    taps, n = Taps(page), seq(page)
    taps.tap("#wop-quick-countries button:not([disabled]) >> nth=0")
    taps.tap("#wop-quick-where button >> nth=0")
    wait_seq(page, n + 1)
    placement = taps.n
    page.screenshot(path=str(artifacts_dir / "taps-wop.png"))
    taps.tap("#wop-turn-end", thumb=True)
    wait_seq(page, n + 2)
    f = Api(server, tokens["organiser"]).engine(mid)
    assert [e["type"] for e in f.effective] == ["place", "turn.end"]
    COUNTS["web-of-power"] = (placement, taps.n - placement)
    assert placement <= 2 and taps.n - placement == 1


def conquest_in_play(server, tokens):
    """A 3-player conquest match dealt, placed, started and reinforced by script: Anna may attack."""
    api, org = Api(server, tokens["player"]), Api(server, tokens["organiser"])
    mid = api.create("conquest-italy", ["Anna", "Bruno", "Carla"])
    api.ok("POST", f"/api/matches/{mid}/conquest/deal", {"expected_seq": 1 - 1, "data": {}})
    f = org.engine(mid)
    gm = f.module.map_of(None)
    while f.game_state["phase"] == "place":
        p = f.game_state["next_placer"]
        # units on a border city, so that attacks are possible
        front = next(c for c in gm.cities if f.game_state["owner"][c] == p
                     and any(f.game_state["owner"][x] != p for x in gm.neighbours[c]))
        api.event(mid, "setup.place", {"player": p, "placements": {front: min(5, f.game_state["reserve"][p])}})
        f = org.engine(mid)
    api.event(mid, "clock.start", {})
    f = org.engine(mid)
    due = f.view()["summary"]["players"][0]["reinforcements"]
    front = next(c for c in gm.cities if f.game_state["owner"][c] == "Anna"
                 and any(f.game_state["owner"][x] != "Anna" for x in gm.neighbours[c]))
    api.event(mid, "reinforce", {"player": "Anna", "placements": {front: due}})
    return mid


def test_conquest_attack_with_the_pis_dice(new_context, server, tokens, artifacts_dir):  # noqa: F811
    mid = conquest_in_play(server, tokens)
    page = phone(new_context, server, mid)
    taps, n = Taps(page), seq(page)
    taps.tap("#ci-targets button >> nth=0")
    taps.tap("#ci-attack", thumb=True)
    wait_seq(page, n + 1)
    attack = taps.n
    page.screenshot(path=str(artifacts_dir / "taps-conquest.png"))
    taps.tap("#ci-turn-end", thumb=True)
    wait_seq(page, n + 2)
    f = Api(server, tokens["organiser"]).engine(mid)
    assert [e["type"] for e in f.effective][-2:] == ["combat", "turn.end"]
    COUNTS["conquest-italy"] = (attack, taps.n - attack)
    assert attack <= 2 and taps.n - attack == 1


def test_richelieu_agent_placement(new_context, server, tokens, artifacts_dir):  # noqa: F811
    api = Api(server, tokens["player"])
    mid = api.create("richelieu", ["Anna", "Bruno", "Carla"], start_money=4)
    page = phone(new_context, server, mid)
    taps, n = Taps(page), seq(page)
    taps.tap("#rl-spaces button >> nth=0")
    taps.tap("#rl-place", thumb=True)
    wait_seq(page, n + 1)
    placement = taps.n
    page.screenshot(path=str(artifacts_dir / "taps-richelieu.png"))
    taps.tap("#rl-turn-end", thumb=True)
    wait_seq(page, n + 2)
    f = Api(server, tokens["organiser"]).engine(mid)
    assert [(e["type"], e["data"].get("action")) for e in f.effective] == [("action", "place_agent"), ("turn.end", None)]
    COUNTS["richelieu"] = (placement, taps.n - placement)
    assert placement <= 2 and taps.n - placement == 1


def test_rome_is_burning_turn(new_context, server, tokens, artifacts_dir):  # noqa: F811
    players = ["Anna", "Bruno", "Carla"]
    api = Api(server, tokens["player"])
    mid = api.create("rome-is-burning", players)
    page = phone(new_context, server, mid)
    taps, n = Taps(page), seq(page)
    taps.tap("#rb-deal-pi")  # the round's cards, dealt by the Pi
    n += 1
    wait_seq(page, n)
    moves = []
    for _ in players:  # each player's turn: the Pi rolls their move
        before = taps.n
        taps.tap("#rb-roll-cw", thumb=True)
        n += 1
        wait_seq(page, n)
        moves.append(taps.n - before)
    page.screenshot(path=str(artifacts_dir / "taps-rome.png"))
    # the rest of the round by script (moves onto the cards left), then the round's scoring on the page
    org = Api(server, tokens["organiser"])
    f = org.engine(mid)
    while f.view()["summary"].get("to_move"):
        mover = f.view()["summary"]["to_move"]
        d, direction = best_move(f.game_state, mover)
        api.event(mid, "move", {"player": mover, "die": d, "direction": direction})
        f = org.engine(mid)
    wait_seq(page, f.last_seq)
    before = taps.n
    taps.tap("#rb-score", thumb=True)
    wait_seq(page, f.last_seq + 1)
    f = org.engine(mid)
    assert [e["type"] for e in f.effective][:4] == ["turn.setup", "move", "move", "move"]
    assert f.effective[-1]["type"] == "turn.score"
    COUNTS["rome-is-burning"] = (max(moves), taps.n - before)
    assert max(moves) <= 2 and taps.n - before == 1


def test_report_the_counts(capsys):
    """Prints the counts measured above (pytest -s shows them)."""
    with capsys.disabled():
        for game, (action, end) in sorted(COUNTS.items()):
            print(f"\n{game}: common action {action} tap(s) + end of turn {end}")


def test_a_message_shows_above_the_thumb_bar(new_context, server, tokens):  # noqa: F811
    """The toast telling what happened to a tap (saved, or refused) is not hidden under the thumb bar."""
    api = Api(server, tokens["player"])
    mid = api.create("richelieu", ["Anna", "Bruno", "Carla"], start_money=4)
    page = phone(new_context, server, mid)
    page.click("#rl-turn-end")
    toast = page.locator("#toast")
    expect(toast).to_be_visible()
    t, bar = toast.bounding_box(), page.locator("#rl-thumb").bounding_box()
    assert t["y"] + t["height"] <= bar["y"], (t, bar)
