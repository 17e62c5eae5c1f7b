"""The Rome Is Burning tracker in headless Chromium: a whole 7-turn match played through the page (the
first deal picked from the card catalogue, the others dealt by the Pi; moves with the table's die and
with the Pi's; steals; ties decided by the old emperor), the turn scores, totals and turn table checked
against the engine's fold of the same events after every turn; undo; a stale phone gets the conflict
message and the fresh state."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.trackers_kit import Api, joined_page, open_match, seq, wait_seq

pytestmark = pytest.mark.browser

PLAYERS = ["Anna", "Bruno", "Carla"]
RING = 12


def act(page, selector):
    n = seq(page)
    page.click(selector)
    wait_seq(page, n + 1)


def totals_shown(page):
    rows = page.eval_on_selector_all("#rb-totals tbody tr", "trs => trs.map(tr => [tr.dataset.player, tr.querySelector('td.score').textContent])")
    return {p: int(v) for p, v in rows}


def turn_scores_shown(page):
    rows = page.eval_on_selector_all("#rb-turn-table tbody tr", "trs => trs.map(tr => [tr.dataset.player, tr.querySelector('td.score').textContent])")
    return {p: int(v) for p, v in rows}


def check(page, org, mid):
    f = org.engine(mid)
    wait_seq(page, f.last_seq)
    expect(page.locator("#seq")).to_have_text(str(f.last_seq))
    assert totals_shown(page) == f.game_state["totals"]
    hist = f.game_state["history"]
    expect(page.locator("#rb-history-table tbody tr")).to_have_count(len(hist)) if hist else None
    if hist:
        rows = page.eval_on_selector_all("#rb-history-table tbody tr", "trs => trs.map(tr => Array.from(tr.children).map(td => td.textContent))")
        assert rows == [[str(h["turn"])] + [str(h["scores"][p]) for p in PLAYERS] + [f"{h['new_emperor']} +{h['points']}"] for h in hist]
    return f


def best_move(state, mover):
    """The table's choice: a die and direction that lands on cards, if any (else 1 clockwise)."""
    pos = state["positions"][mover]
    for d in range(1, 7):
        for direction, sign in (("cw", 1), ("ccw", -1)):
            if state["spaces"][(pos + sign * d) % RING]:
                return d, direction
    return 1, "cw"


def test_a_whole_rome_match_through_the_page(new_context, server, tokens, artifacts_dir):  # noqa: F811
    api, org = Api(server, tokens["player"]), Api(server, tokens["organiser"])
    mid = api.create("rome-is-burning", PLAYERS)
    page = open_match(joined_page(new_context, server), mid, seat="Anna")
    watcher = open_match(joined_page(new_context, server, locale="it-IT"), mid)

    # turn 1: the cards dealt at the table, picked from the catalogue (a card only once)
    from companion.games.rome_is_burning import CATALOGUE
    names = [n for n, _ in CATALOGUE]
    page.click("#rb-deal-hand summary")
    rows = page.locator("#rb-deal-rows .rb-deal-row")
    expect(rows).to_have_count(4)
    for i in range(4):
        page.select_option(f"#rb-deal-rows .rb-deal-row >> nth={i} >> .rb-card >> nth=0", names[2 * i])
        page.select_option(f"#rb-deal-rows .rb-deal-row >> nth={i} >> .rb-card >> nth=1", names[2 * i + 1])
    # the first card is no longer offered elsewhere
    assert page.locator(f"#rb-deal-rows .rb-deal-row >> nth=1 >> .rb-card >> nth=0 >> option[value='{names[0]}']").is_disabled()
    act(page, "#rb-deal-send")
    f = check(page, org, mid)
    assert f.game_state["spaces"][1] == names[0:2]

    turn, undone, pi_rolls, steals, ties = 1, False, 0, 0, 0
    while not f.game_state["phase"] == "ended":
        s = f.game_state
        if s["phase"] == "setup":
            act(page, "#rb-deal-pi")
        elif s["phase"] == "election":
            ties += 1
            expect(page.locator("#rb-election")).to_be_visible()
            act(page, "#rb-candidates button >> nth=0")
        elif f.view()["summary"].get("steal"):
            steals += 1
            act(page, "#rb-steal-send")
        elif f.view()["summary"].get("to_move") is None:
            # every card taken: the page shows the engine's turn scores, then scores the turn
            expected = {r["player"]: r["score"] for r in f.module.turn_scores(s["emperor"], s["hands"])["players"]}
            page.wait_for_selector(f"#rb-turn-table[data-seq='{f.last_seq}']", state="attached")
            assert turn_scores_shown(page) == expected
            if turn == 2:
                page.screenshot(path=str(artifacts_dir / "tracker-rome-is-burning.png"), full_page=True)
            act(page, "#rb-score")
            turn += 1
        elif pi_rolls < 3 and turn >= 2:
            pi_rolls += 1
            act(page, "#rb-roll-cw")  # the Pi rolls 1d6
        else:
            mover = f.view()["summary"]["to_move"]
            d, direction = best_move(s, mover)
            page.fill("#rb-die", str(d))
            act(page, f"#rb-move-{direction}")
            if not undone:  # take the first table move back and make it again
                undone = True
                page.click("#undo")  # undo asks first
                act(page, "#undo-yes")
                assert org.engine(mid).game_state["positions"][mover] == 0
                page.fill("#rb-die", str(d))
                act(page, f"#rb-move-{direction}")
        f = check(page, org, mid)

    assert turn == 8 and pi_rolls == 3
    winners = f.game_state["winners"]
    expect(page.locator("#rb-status")).to_have_text("Game over: " + ", ".join(winners) + " won")
    for p in winners:
        expect(page.locator(f"#rb-totals tr[data-player='{p}'] .trk-badge")).to_be_visible()
    check(watcher, org, mid)
    expect(watcher.locator("#rb-status")).to_contain_text("Partita finita")
    page.screenshot(path=str(artifacts_dir / "tracker-rome-is-burning-end.png"), full_page=True)
    assert page.errors == [] and watcher.errors == []


def test_a_stale_phone_gets_the_conflict_and_the_fresh_state(new_context, server, tokens):  # noqa: F811
    api, org = Api(server, tokens["player"]), Api(server, tokens["organiser"])
    mid = api.create("rome-is-burning", PLAYERS)
    stale = open_match(joined_page(new_context, server), mid, block_stream=True)
    api.ok("POST", f"/api/matches/{mid}/rome/deal", {"expected_seq": 0, "data": {}})  # another phone deals
    stale.click("#rb-deal-pi")  # this phone still shows turn 1 undealt
    expect(stale.locator("#conflict")).to_be_visible()
    f = org.engine(mid)
    assert f.last_seq == 1  # dealt once, not twice
    wait_seq(stale, 1)
    expect(stale.locator("#rb-status")).to_have_text("Turn 1: Anna moves")
    assert stale.errors == []
