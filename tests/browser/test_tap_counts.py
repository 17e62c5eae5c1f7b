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

The first evening (test_the_first_evening_in_taps, on a fresh box): here names and codes are typed, and a
tap is also the tap that puts the keyboard in a field (none when the page put it there already); what is
typed is not counted. Becoming the organiser and adding 4 players to the roster; making a 4-player conquest
match from there; a second phone taking its seat from the table's QR code (a scan, then taps). The figures
are in docs/web.md ("Taps of the first evening").
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
    MIN = 48  # px: the controls of a turn

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
        assert box["height"] >= self.MIN, (selector, box)
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


class TypingTaps(Taps):
    """Taps of a page where names are typed: a field costs a tap unless it has the focus already."""

    MIN = 40  # px: the forms of the evening's start (a tap at the table, not in a hurry)

    def type(self, selector, text):
        loc = self.page.locator(selector)
        if not loc.evaluate("e => e === document.activeElement"):
            self.tap(selector)
        loc.fill(text)

    def select(self, selector, value):  # a native <select>: open it, pick (nothing when it shows that already)
        loc = self.page.locator(selector)
        expect(loc).to_be_visible()
        if loc.input_value() != value:
            loc.select_option(value)
            self.n += 2


FIRST_EVENING = {}


def test_the_first_evening_in_taps(new_context, server, artifacts_dir):
    """Becoming the organiser of a fresh box and adding 4 players; a conquest match for them; a second phone
    taking its seat. The counts are printed by test_report_the_counts and kept in docs/web.md."""
    names = ["Anna", "Bruno", "Carla", "Dario"]
    page = new_context(viewport=PHONE).new_page()
    page.goto("/")
    taps = TypingTaps(page)
    taps.tap("#first-login")
    page.wait_for_url("**/login")
    taps.type("#setup-code", server.setup_code)
    taps.type("#new-pin", "482193")
    taps.tap("#setup-form button[type=submit]")
    page.wait_for_url("**/join")
    taps.tap("#join-next a[href='/players']")
    page.wait_for_url("**/players")
    for i, name in enumerate(names):
        taps.type("#add-name", name)
        taps.tap("#add-player-btn")
        expect(page.locator("#roster li")).to_have_count(i + 1)
    FIRST_EVENING["organiser + 4 players"] = taps.n
    # the conquest match, from the roster page: "A match with these players" fills the rows with them
    taps = TypingTaps(page)
    taps.tap("#roster-new-match")
    page.wait_for_url("**/new?roster=*")
    page.wait_for_selector("#season")  # the club's choice is drawn
    taps.select("#game", "conquest-italy")
    rows = page.locator("#players > li .player-name")
    expect(rows).to_have_count(4)
    for i, name in enumerate(sorted(names)):
        expect(rows.nth(i)).to_have_value(name)
    # the season choice fits the phone, its meaning said under it
    expect(page.locator("#season-note")).to_be_visible()
    fits = page.evaluate("""() => { const s = document.getElementById('season'), c = document.createElement('canvas').getContext('2d');
      c.font = getComputedStyle(s).font; return [c.measureText(s.selectedOptions[0].text).width, s.clientWidth]; }""")
    assert fits[0] <= fits[1] - 40, fits  # (its arrow and paddings)
    page.screenshot(path=str(artifacts_dir / "taps-first-new.png"), full_page=True)
    taps.tap("#create")
    page.wait_for_url("**/m/*")
    FIRST_EVENING["conquest match"] = taps.n
    m = page.evaluate("mid => Companion.api('GET', '/api/matches/' + mid)", page.url.rsplit("/", 1)[1])
    assert m["game"] == "conquest-italy" and m["players"] == sorted(names), m
    mid = page.url.rsplit("/", 1)[1]
    link = page.evaluate("mid => Companion.api('GET', '/api/matches/' + mid + '/join')", mid)["url"]
    # the second phone scans the table's QR code (no tap) and answers "Who are you?"
    other = new_context(viewport=PHONE).new_page()
    other.goto(link)
    taps = TypingTaps(other)
    taps.tap("#who-card .who-btn[data-player='Bruno']")
    other.wait_for_function("() => window.companionMatch.match && window.companionMatch.match.seat === 'Bruno'")
    FIRST_EVENING["second phone seated"] = taps.n
    # the next match of the game starts with the last table's count (a 5-player one made since)
    assert page.evaluate("""() => Companion.api('POST', '/api/matches', {game: 'conquest-italy',
      players: ['Anna', 'Bruno', 'Carla', 'Dario', 'Elena']}).then(m => m.id)""")
    page.goto("/new")
    page.select_option("#game", "conquest-italy")
    expect(page.locator("#players > li")).to_have_count(5)
    page.select_option("#game", "web-of-power")  # no match of it yet: its usual 4
    expect(page.locator("#players > li")).to_have_count(4)
    page.select_option("#game", "conquest-italy")
    expect(page.locator("#players > li")).to_have_count(5)
    page.select_option("#game", "richelieu")  # 2 to 4 players: the empty fifth row goes
    expect(page.locator("#players > li")).to_have_count(4)
    COUNTS.update({k: (v,) for k, v in FIRST_EVENING.items()})


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
        for game, counts in sorted(COUNTS.items()):
            if len(counts) == 1:
                print(f"\n{game}: {counts[0]} tap(s)")
            else:
                print(f"\n{game}: common action {counts[0]} tap(s) + end of turn {counts[1]}")


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
