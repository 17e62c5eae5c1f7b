"""The table's smart dice through the real pages, with MockDice (docs/dice.md): the organiser binds a table's
dice on /dice (a die picked by rolling it, the others from the list), rolls each die once to check, and a
conquest combat is then rolled with them: the phone asks, the dice roll and land (the phone and the TV show
each face as it lands), the box records the combat; a roll the match moved past is refused in words and the
faces read go into the hand entry."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.trackers_kit import Api, joined_page, open_match, organiser_page, wait_seq
from tests.dicekit import MockDice, MockDie, conquest_at_combat
from tests.web.serverproc import Server

pytestmark = pytest.mark.browser

RED = [MockDie(0x101 + i, f"Rosso {i + 1}") for i in range(3)]
BLUE = [MockDie(0x201 + i, f"Blu {i + 1}", colorway=4) for i in range(3)]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dice")
    s = Server(tmp / "data", {"COMPANION_DICE_MOCK": str(tmp / "dice.jsonl")}, args=["--dice", "mock"])
    s.dice = MockDice(tmp / "dice.jsonl")
    yield s
    s.stop()


class Http:
    """The match service's calls conquest_at_combat makes, through the API (organiser token)."""

    def __init__(self, api):
        self.api = api

    def create(self, game, players, options):
        return {"id": self.api.create(game, players, **options)}

    def append(self, mid, type_, data):
        return self.api.event(mid, type_, data)

    def fold(self, mid):
        return self.api.engine(mid)


def test_bind_the_dice_and_roll_a_combat_with_them(new_context, server, tokens, artifacts_dir):  # noqa: F811
    kit = server.dice
    for d in RED + BLUE:
        kit.lie(d, 1)
    api = Api(server, tokens["organiser"])
    mid, attack = conquest_at_combat(Http(api), options={"dice": "smart"})

    # the organiser binds the table's dice: Rosso 1 by rolling it, the others from the list
    org = organiser_page(new_context, server, viewport={"width": 390, "height": 844})
    org.goto("/dice")
    expect(org.locator("#dice-heard tbody tr")).to_have_count(6)
    org.click("#dice-new")
    card = org.locator(".dice-set").first
    expect(card).to_be_visible()
    card.locator("[data-roll-pick='attack0']").click()
    expect(card.locator("[data-roll-pick='attack0']")).to_have_text("Roll it now")
    kit.roll(RED[0], 3)
    expect(card.locator("select[data-slot='attack0']")).to_have_value(RED[0].id)
    for i, d in enumerate(RED[1:], 1):
        card.locator(f"select[data-slot='attack{i}']").select_option(d.id)
    for i, d in enumerate(BLUE):
        card.locator(f"select[data-slot='defend{i}']").select_option(d.id)
    card.locator(".dice-set-match").select_option(mid)
    card.locator("[data-save]").click()
    expect(org.locator(".toast").last).to_have_text("Saved")
    expect(org.locator("#dice-heard tbody tr[data-die='%s'] td" % BLUE[2].id).last).not_to_have_text("")
    # roll each die once: each face shows beside its die
    expect(org.locator("#toast")).to_be_hidden(timeout=15000)  # the "Saved" toast lies over the buttons a moment
    org.locator(".dice-set [data-check-set]").click()
    expect(org.locator(".dice-set [data-check-status]")).to_have_text(
        "Roll each die once: its face shows beside it when it lands.")  # the box listens from now on
    for i, d in enumerate(RED + BLUE):
        kit.roll(d, i + 1)
    expect(org.locator(".dice-set [data-check='defend2']")).to_have_text("✓ 6")
    expect(org.locator(".dice-set [data-check-status]")).to_have_text("Every die was heard landing.")
    org.screenshot(path=str(artifacts_dir / "dice-page.png"), full_page=True)
    assert org.errors == []

    # the attacker's phone: the table's dice are the way to roll; the TV beside the table
    phone = open_match(joined_page(new_context, server, viewport={"width": 390, "height": 844}), mid, seat=attack["player"])
    tv = new_context(viewport={"width": 1280, "height": 720}).new_page()
    held = []  # the TV's stream held back until the roll has begun: its first read of the dice came before it
    tv.route("**/api/matches/*/stream*", lambda route: held.append(route))
    tv.goto(f"/m/{mid}/display")
    tv.wait_for_function("() => window.CompanionDice && window.CompanionDice.info()")
    expect(phone.locator("input[name=ci-dice-mode][value=smart]")).to_be_checked()
    phone.click(f"#ci-targets button[data-from='{attack['from']}'][data-to='{attack['to']}']")
    n = phone.evaluate("window.companionMatch.seq")
    phone.click("#ci-attack")
    expect(phone.locator("#dice-live")).to_be_visible()
    expect(phone.locator("#dice-live .dice-need")).to_have_text("Attacker: 3 dice · Defender: 3 dice")
    assert held, "the TV opened no stream"
    for route in held:
        route.continue_()
    expect(tv.locator("#dice-live")).to_be_visible()
    kit.roll(BLUE[2], 2)  # not this table's turn yet? the defender's die rolls first: it counts for its side
    kit.start_rolling(RED[0])
    expect(tv.locator(f"#dice-live .dice-chip[data-die='{RED[0].id}']")).to_have_class("dice-chip dice-rolling")
    kit.land(RED[0], 6)
    kit.roll(RED[1], 5)
    kit.roll(RED[2], 1)
    expect(tv.locator(f"#dice-live .dice-chip[data-die='{RED[2].id}'] .dice-chip-face")).to_have_text("1")
    tv.screenshot(path=str(artifacts_dir / "dice-tv-rolling.png"))
    kit.roll(BLUE[0], 4)
    kit.roll(BLUE[1], 4)
    wait_seq(phone, n + 1)
    last = api.ok("GET", f"/api/matches/{mid}/events?after={n}")["events"][-1]
    assert last["type"] == "combat" and last["data"]["rolled_by"] == "dice"
    assert last["data"]["attack_dice"] == [6, 5, 1] and last["data"]["defend_dice"] == [2, 4, 4]
    expect(phone.locator("#dice-live .dice-live-title")).to_have_text("Dice read")
    expect(phone.locator("#history li").first).to_contain_text("6 5 1 vs 2 4 4 · read from the table's dice")
    phone.screenshot(path=str(artifacts_dir / "dice-phone-read.png"), full_page=True)
    # the player may not undo a roll the box read: it says so before it is tried
    phone.click("#undo")
    expect(phone.locator("#undo-confirm-text")).to_contain_text("only an organiser")

    # a roll the match moved past: refused in words, the faces read go into the hand entry
    n = phone.evaluate("window.companionMatch.seq")
    phone.click("#ci-attack")
    expect(phone.locator("#dice-live .dice-live-title")).to_have_text("Roll the dice")
    api.event(mid, "clock.pause", {})
    for d, f in zip(RED + BLUE, (6, 6, 6, 1, 1, 1)):
        kit.roll(d, f)
    expect(phone.locator("#dice-live .dice-live-title")).to_have_text("The roll was not recorded")
    expect(phone.locator("input[name=ci-dice-mode][value=table]")).to_be_checked()
    assert phone.eval_on_selector_all("#ci-adice input", "xs => xs.map(x => x.value)") == ["6", "6", "6"]
    assert phone.errors == [] and tv.errors == [] if hasattr(tv, "errors") else phone.errors == []
