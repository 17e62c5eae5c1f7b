"""The Web of Power tracker in headless Chromium: short scripted matches through the page, on a board file
with roads (monasteries on sites, chains computed by the engine, the SVG with the pieces) and on the
installed template board (monasteries by country, chain lengths by hand); the intermediate and final
scorings, their breakdown and the totals checked against the engine's fold of the same events; a placement
that breaks a rule said and asked before it is recorded ("Don't place" records nothing, "Place anyway" records
it with its warning), the turn with no placement left offering its end; undo; a stale phone gets the conflict
message and the fresh state; the template board's notice said only at the final scoring's hand entry."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.trackers_kit import Api, joined_page, open_match, seq, wait_seq

pytestmark = pytest.mark.browser

PLAYERS = ["Anna", "Bruno", "Carla"]
COLOURS = {"Anna": "#d62728", "Bruno": "#1f77b4", "Carla": "#2ca02c"}


def act(page, selector):
    n = seq(page)
    page.click(selector)
    wait_seq(page, n + 1)


def create(api, **options):
    return api.ok("POST", "/api/matches", {"game": "web-of-power", "players": PLAYERS, "colours": COLOURS,
                                           "options": options})["id"]


def check(page, org, mid):
    """The totals table and every scoring's per-player points and breakdown lines, as the engine has them."""
    f = org.engine(mid)
    wait_seq(page, f.last_seq)
    expect(page.locator("#seq")).to_have_text(str(f.last_seq))
    sc = f.view()["summary"]["scores"]
    rows = page.eval_on_selector_all("#wop-totals tbody tr", "trs => Object.fromEntries(trs.map(tr => [tr.dataset.player,"
                                     " Object.fromEntries(Array.from(tr.querySelectorAll('td[data-col]')).map(td => [td.dataset.col, td.textContent]))]))")
    for p in PLAYERS:
        inter = {r["player"]: r["total"] for r in (sc["intermediate"] or {"players": []})["players"]}
        fin = {r["player"]: r["total"] for r in (sc["final"] or {"players": []})["players"]}
        assert rows[p]["total"] == str(sc["totals"][p])
        assert rows[p]["intermediate"] == str(inter.get(p, "—"))
        assert rows[p]["final"] == str(fin.get(p, "—"))
        assert sc["totals"][p] == inter.get(p, 0) + fin.get(p, 0)
    for kind in ("intermediate", "final"):
        if not sc[kind]:
            expect(page.locator(f".wop-scoring[data-scoring={kind}]")).to_have_count(0)
            continue
        for r in sc[kind]["players"]:
            d = page.locator(f".wop-scoring[data-scoring={kind}] details[data-player={r['player']}]")
            assert d.locator(".wop-points").text_content() == str(r["total"])
            kinds = d.locator("li").evaluate_all("lis => lis.map(li => li.dataset.kind)")
            assert kinds == [e["kind"] for e in r["breakdown"]]
    return f


def place_site(page, player, site, country):
    page.select_option("#wop-player", player)
    page.click("#wop-piece-monastery")
    page.select_option("#wop-country", country)
    page.select_option("#wop-site", site)
    act(page, "#wop-place")


def test_a_match_on_a_board_with_roads(new_context, server, tokens, artifacts_dir):  # noqa: F811
    from bench.bench_web_of_power import synthetic_board
    from companion.games import wop_board

    board = synthetic_board(6, 4, seed=3)
    norm = wop_board.normalize(board)
    api, org = Api(server, tokens["player"]), Api(server, tokens["organiser"])
    mid = create(api, board=board)
    page = open_match(joined_page(new_context, server), mid, seat="Anna")
    page.on("dialog", lambda d: d.accept())  # the deck-out scorings ask first

    # a row of sites for Anna (a chain along roads for the engine to find), a few for the others
    anna_sites = ["s000", "s001", "s002", "s003", "s004"]
    turns = [("Anna", "s000"), ("Bruno", "s012"), ("Carla", "s018"), ("Anna", "s001"), ("Bruno", "s013"),
             ("Carla", "s019")]
    for player, site in turns:
        place_site(page, player, site, norm["site_country"][site])
        act(page, "#wop-turn-end")
    check(page, org, mid)

    # one monastery into Franken (none there yet): nothing more this turn, the bar offers the end of the turn
    place_site(page, "Anna", "s002", "Franken")
    expect(page.locator("#wop-turn-end")).to_have_text("No placement left: end Anna's turn")
    # a second one there breaks a rule: said before it is recorded, and asked; "Don't place" records nothing
    n = seq(page)
    page.select_option("#wop-site", "s003")
    page.click("#wop-place")
    ask = page.locator("#wop-ask")
    expect(ask).to_be_visible()
    expect(ask.locator("li")).to_have_text(["Franken had no monastery when the turn began: at most 1 monastery there this turn"])
    expect(page.locator("#wop-turn-end")).to_be_hidden()  # one question at a time
    page.click("#wop-ask-no")
    expect(ask).to_be_hidden()
    assert seq(page) == n and org.engine(mid).last_seq == n
    # asked again, "Place anyway": recorded with its warning (the table is the truth)
    page.click("#wop-place")
    expect(ask).to_be_visible()
    act(page, "#wop-ask-yes")
    expect(ask).to_be_hidden()
    expect(page.locator("#wop-warnings")).to_contain_text("Franken had no monastery: at most 1 monastery there this turn")
    # a third piece, in a second country: every rule it breaks is said
    place = page.locator("#wop-place")
    page.select_option("#wop-country", "Bayern")
    page.select_option("#wop-site", "s004")
    place.click()
    expect(ask.locator("li")).to_have_text(["Anna would place in 2 countries in one turn (at most 1): Franken, Bayern",
                                            "Anna would place 3 pieces in one turn (at most 2)"])
    act(page, "#wop-ask-yes")
    expect(page.locator("#wop-warnings")).to_contain_text("Anna placed 3 pieces in one turn")
    assert org.engine(mid).game_state["sites"]["s004"] == "Anna"
    act(page, "#wop-turn-end")
    # a councillor where Bruno leads, then undo and again
    page.select_option("#wop-player", "Bruno")
    page.click("#wop-piece-councillor")
    bruno_country = norm["site_country"]["s012"]
    page.select_option("#wop-country", bruno_country)
    act(page, "#wop-place")
    page.click("#undo")  # undo asks first
    act(page, "#undo-yes")
    f = check(page, org, mid)
    assert f.game_state["councillors"][bruno_country] == {}
    act(page, "#wop-place")
    act(page, "#wop-turn-end")

    # the deck runs out: the intermediate scoring (monasteries only)
    act(page, "#wop-deck-out")
    f = check(page, org, mid)
    assert f.game_state["scorings"]["intermediate"] is not None
    expect(page.locator("#wop-deck-out")).to_have_text("The deck ran out again: final scoring")

    # more turns, then the final scoring: monasteries, alliances, chains; totals add up
    place_site(page, "Carla", "s020", norm["site_country"]["s020"])
    act(page, "#wop-turn-end")
    act(page, "#wop-deck-out")
    f = check(page, org, mid)
    assert f.ended()
    anna = next(r for r in f.game_state["scorings"]["final"]["players"] if r["player"] == "Anna")
    chains = [e for e in anna["breakdown"] if e["kind"] == "chain"]
    expect(page.locator(".wop-scoring[data-scoring=final] details[data-player=Anna] li[data-kind=chain]")).to_have_count(len(chains))
    # the board drawing shows the pieces in their owners' colours
    page.click("#wop-board summary")
    for site, holder in f.game_state["sites"].items():
        expect(page.locator(f"#wop-svg circle[data-site='{site}']")).to_have_attribute("fill", COLOURS[holder])
    winners = [r["player"] for r in f.view()["summary"]["scores"]["ranking"] if r["place"] == 1]
    expect(page.locator("#wop-status")).to_have_text("Game over: " + ", ".join(winners) + " won")
    page.screenshot(path=str(artifacts_dir / "tracker-web-of-power.png"), full_page=True)
    assert page.errors == []


def test_a_match_on_the_template_board_with_chains_by_hand(new_context, server, tokens, artifacts_dir):  # noqa: F811
    api, org = Api(server, tokens["player"]), Api(server, tokens["organiser"])
    mid = create(api)
    page = open_match(joined_page(new_context, server, locale="it-IT"), mid, seat="Bruno")
    page.on("dialog", lambda d: d.accept())  # the deck-out scorings ask first
    expect(page.locator("#wop-board-note")).to_be_hidden()  # said at the final scoring, where it matters
    for player, country, count in (("Anna", "England", 1), ("Bruno", "Bayern", 1), ("Carla", "England", 1),
                                   ("Anna", "England", 2), ("Bruno", "Bayern", 2), ("Carla", "Italien", 1),
                                   ("Anna", "England", 2)):
        page.select_option("#wop-player", player)
        page.click("#wop-piece-monastery")
        page.select_option("#wop-country", country)
        page.select_option("#wop-count", str(count))
        act(page, "#wop-place")
        act(page, "#wop-turn-end")
    act(page, "#wop-deck-out")
    check(page, org, mid)
    # the final scoring: Anna's chain of 5 entered by hand
    page.fill("#wop-chain-inputs input[data-player=Anna]", "5")
    act(page, "#wop-deck-out")
    f = check(page, org, mid)
    anna = next(r for r in f.game_state["scorings"]["final"]["players"] if r["player"] == "Anna")
    assert {"kind": "chain", "length": 5, "points": 5} in anna["breakdown"]
    page.screenshot(path=str(artifacts_dir / "tracker-web-of-power-template.png"), full_page=True)
    assert page.errors == []


def test_a_stale_phone_gets_the_conflict_and_the_fresh_state(new_context, server, tokens):  # noqa: F811
    api, org = Api(server, tokens["player"]), Api(server, tokens["organiser"])
    mid = create(api)
    stale = open_match(joined_page(new_context, server), mid, block_stream=True)
    api.event(mid, "place", {"player": "Anna", "piece": "monastery", "country": "England"})
    stale.select_option("#wop-country", "Franken")
    stale.click("#wop-place")
    expect(stale.locator("#conflict")).to_be_visible()
    wait_seq(stale, 1)
    f = org.engine(mid)
    assert f.last_seq == 1 and f.game_state["monasteries"]["Franken"] == {}
    expect(stale.locator("#wop-status")).to_have_text("Anna's turn: 1 placement so far")
    assert stale.errors == []
