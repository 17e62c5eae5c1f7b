"""The Richelieu tracker in headless Chromium: a short scripted match through the page (actions priced by
the engine, turn ends, an intrigue copied into the form, previewed, applied, undone and applied again, a
track correction, the game ended), the tracks and the end-game scoring with its breakdown checked against
the engine's fold of the same events; a stale phone gets the conflict message and the fresh state."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.trackers_kit import Api, joined_page, open_match, seq, wait_seq

pytestmark = pytest.mark.browser

PLAYERS = ["Anna", "Bruno", "Carla"]
TRACKS = ("prestige", "income", "military", "money", "jewels")


def act(page, selector):
    n = seq(page)
    page.click(selector)
    wait_seq(page, n + 1)


def tracks_shown(page):
    rows = page.eval_on_selector_all(
        "#rl-tracks-table tbody tr",
        "trs => trs.map(tr => [tr.dataset.player, Array.from(tr.querySelectorAll('td[data-track]')).map(td => [td.dataset.track, td.textContent])])")
    return {p: {k: v.split()[0] for k, v in cells} for p, cells in rows}


def standings_shown(page, table):
    return page.eval_on_selector_all(
        f"#{table} tbody tr",
        "trs => trs.map(tr => [tr.dataset.player, tr.querySelector('.trk-place').textContent,"
        " ...Array.from(tr.querySelectorAll('td.num')).map(td => td.textContent)])")


def expected_standings(final, me=None, ended=True):
    """The scoring as ``me``'s phone shows it: before the end, the others' jewels, total and money are "—"
    (behind their screens, docs/rulings.md#behind-the-screens), nobody has a place, and the rows are in
    seat order."""
    out = []
    rows = final["players"] if ended else sorted(final["players"], key=lambda r: PLAYERS.index(r["player"]))
    for r in rows:
        b = r["breakdown"]
        hidden = not ended and r["player"] != me
        out.append([r["player"], str(r["place"]) if ended else "", str(b["prestige"]), str(b["income"]),
                    str(b["military"]), str(b["richelieu_sheets"]), str(sum(b["opposing_sets"].values())),
                    "—" if hidden else str(b["jewels"]), "—" if hidden else str(r["total"]),
                    "—" if hidden else str(r["money"])])
    return out


def check(page, org, mid, me="Anna"):
    f = org.engine(mid)
    wait_seq(page, f.last_seq)
    expect(page.locator("#seq")).to_have_text(str(f.last_seq))
    ended = f.ended()
    assert tracks_shown(page) == {p: {k: "—" if k in ("money", "jewels") and p != me and not ended else
                                      str(f.game_state["players"][p][k]) for k in TRACKS} for p in PLAYERS}
    standings = f.view()["summary"]["standings"]
    assert standings_shown(page, "rl-standings") == expected_standings(standings, me, ended)
    return f


def fill_intrigue(page):
    """The intrigue copied by taps: each space selected, then a colour and a value (or the piece); the
    faction; the rewards (first or second place, one tap per point); the Cardinal's move."""
    r, f = "#rl-card-r", "#rl-card-f"
    for card, slots in ((r, [("Anna", 3), ("Bruno", 2), "queen", None]),
                        (f, [("Carla", 2), ("Bruno", 1), "eminence", ("Anna", 1)])):
        for i, v in enumerate(slots):
            if v is None:
                continue
            page.click(f"{card} .rl-slot[data-i='{i}']")
            if isinstance(v, tuple):
                page.click(f"{card} .rl-colour[data-player='{v[0]}']")
                page.click(f"{card} .rl-value[data-value='{v[1]}']")
            else:
                page.click(f"{card} .rl-piece[data-piece='{v}']")
    page.click("#rl-factions .rl-faction-btn[data-faction=england]")
    for card, rewards, cardinal in ((r, [("first", "prestige", 4), ("second", "money", 2)], 2),
                                    (f, [("first", "prestige", 3), ("first", "income", 1), ("second", "prestige", 3)], -2)):
        for place, kind, n in rewards:
            page.click(f"{card} .rl-place-pick[data-place={place}]")
            for _ in range(n):
                page.click(f"{card} .rl-reward-btn[data-reward={kind}]")
            expect(page.locator(f"{card} .rl-chip[data-place={place}][data-reward={kind}]")).to_contain_text(f"×{n}")
        for _ in range(abs(cardinal)):
            page.click(f"{card} .rl-cardinal-{'plus' if cardinal > 0 else 'minus'}")
        expect(page.locator(f"{card} .rl-cardinal")).to_have_text(f"{cardinal:+d}")


def test_a_scripted_richelieu_match_through_the_page(new_context, server, tokens, artifacts_dir):  # noqa: F811
    api, org = Api(server, tokens["player"]), Api(server, tokens["organiser"])
    mid = api.create("richelieu", PLAYERS, start_money=4)
    page = open_match(joined_page(new_context, server), mid, seat="Anna")
    page.on("dialog", lambda d: d.accept())

    # Anna is behind the Cardinal: 2 actions, priced by the engine
    expect(page.locator("#rl-turn-title")).to_have_text("Anna: 2 actions this turn")
    expect(page.locator("#rl-income")).to_have_text("Income +1")
    act(page, "#rl-income")
    f = check(page, org, mid)
    expect(page.locator("#rl-income")).to_be_disabled()  # once a turn
    page.select_option("#rl-space", "2")
    act(page, "#rl-place")
    f = check(page, org, mid)
    assert f.game_state["players"]["Anna"]["money"] == 4 + 1 - 2
    expect(page.locator("#rl-place")).to_be_disabled()  # no action left
    # the history says where the agent went, face down, not a value (the agent's own is not recorded)
    expect(page.locator("#history li[data-type=action]").first).to_have_text(
        "Anna: an agent face down on a space of 2" + page.locator("#history li[data-type=action] .when").first.inner_text())
    # Bruno's phone and the TV: Anna's money and jewels are behind her screen (docs/rulings.md#behind-the-screens)
    bruno = open_match(joined_page(new_context, server), mid, seat="Bruno")
    wait_seq(bruno, f.last_seq)
    assert tracks_shown(bruno)["Anna"]["money"] == "—" and tracks_shown(bruno)["Anna"]["jewels"] == "—"
    assert tracks_shown(bruno)["Bruno"]["money"] == "4" and tracks_shown(bruno)["Anna"]["income"] == "1"
    assert standings_shown(bruno, "rl-standings") == expected_standings(f.view()["summary"]["standings"], "Bruno", False)
    expect(bruno.locator("#scores .rl-behind-note")).to_be_visible()
    tv = new_context().new_page()
    tv.goto(f"{server.url}/m/{mid}/display")
    expect(tv.locator("#rl-tv-tracks tr[data-player=Anna] td[data-track=money]")).to_have_text("—")
    expect(tv.locator("#rl-tv-tracks tr[data-player=Anna] td[data-track=jewels]")).to_have_text("—")
    expect(tv.locator("#rl-tv-tracks tr[data-player=Anna] td[data-track=income]")).to_have_text("1")
    tv.close()
    bruno.close()
    act(page, "#rl-turn-end")
    expect(page.locator("#rl-turn-title")).to_have_text("Bruno: 2 actions this turn")
    expect(page.locator("#rl-commission")).to_have_text("Commission (−1)")
    act(page, "#rl-commission")
    f = check(page, org, mid)
    assert f.game_state["players"]["Bruno"]["military"] == 1
    act(page, "#rl-turn-end")

    # an intrigue: the form by taps, the engine's preview as it fills, then applied
    page.click("#rl-intrigue summary")
    # the empty form previews as "nothing placed yet", never an error
    page.click("#rl-preview")
    expect(page.locator("#rl-preview-box")).to_have_text("Nothing placed yet: tap the spaces of the cards.")
    expect(page.locator("#rl-preview-box .trk-bad")).to_have_count(0)
    # one agent placed: 2 taps (the colour, the value); the first space was selected by itself
    page.click("#rl-card-r .rl-colour[data-player='Anna']")
    page.click("#rl-card-r .rl-value[data-value='3']")
    expect(page.locator("#rl-card-r .rl-slot[data-i='0']")).to_contain_text("Anna 3")
    expect(page.locator("#rl-card-r .rl-slot[data-i='1']")).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#rl-preview-box")).to_contain_text("Cardinal's card 1 of 4, faction's card 0 of 4")
    expect(page.locator("#rl-preview-box .trk-bad")).to_have_count(0)
    page.set_viewport_size({"width": 360, "height": 800})
    page.locator("#rl-intrigue").screenshot(path=str(artifacts_dir / "tracker-richelieu-intrigue-taps-360.png"))
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    small = page.eval_on_selector_all("#rl-intrigue .rl-tap", "bs => bs.filter(b => b.offsetParent)"
                                      ".map(b => b.getBoundingClientRect()).filter(r => r.height < 48 || r.width < 48).length")
    assert small == 0
    page.set_viewport_size({"width": 412, "height": 860})
    fill_intrigue(page)
    expect(page.locator("#rl-preview-box")).to_contain_text("Richelieu wins.")
    expect(page.locator("#rl-preview-box")).to_contain_text("Richelieu wins.")
    expect(page.locator("#rl-preview-box")).to_contain_text("First: Anna · second: Bruno · the sheet goes to Anna")
    expect(page.locator("#rl-preview-changes li[data-player=Anna]")).to_contain_text("Prestige +4")
    expect(page.locator("#rl-preview-box")).to_contain_text("Cardinal 7 → 9")
    page.screenshot(path=str(artifacts_dir / "tracker-richelieu-intrigue.png"), full_page=True)
    before = org.engine(mid).game_state
    act(page, "#rl-resolve")
    f = check(page, org, mid)
    assert f.game_state["players"]["Anna"]["cards"]["richelieu"] == 1
    assert f.game_state["players"]["Anna"]["prestige"] == before["players"]["Anna"]["prestige"] + 4
    assert f.game_state["cardinal"] == 9
    expect(page.locator("#rl-resolved")).to_contain_text("Richelieu wins, the sheet goes to Anna")
    # the history says who won the intrigue, not only the faction's card
    expect(page.locator("#history li[data-type='intrigue.resolve']")).to_contain_text(
        "Intrigue of Richelieu against England: Richelieu wins, the sheet goes to Anna")

    # undo takes the resolution back; applied again from the same form
    page.click("#undo")  # undo asks first
    act(page, "#undo-yes")
    f = check(page, org, mid)
    expect(page.locator("#history li[data-type=undo]")).to_contain_text("Taken back: Intrigue of Richelieu against England")
    assert f.game_state["players"] == before["players"] and f.game_state["cardinal"] == 7
    fill_intrigue(page)
    act(page, "#rl-resolve")
    f = check(page, org, mid)

    # a board bonus entered as a correction
    page.click("#rl-adjust summary")
    page.select_option("#rl-adj-player", "Carla")
    page.select_option("#rl-adj-track", "prestige")
    page.fill("#rl-adj-delta", "5")
    act(page, "#rl-adj-send")
    f = check(page, org, mid)
    assert f.game_state["players"]["Carla"]["prestige"] == 5
    # a correction of Carla's money: Anna's phone says which track, not by how much
    page.select_option("#rl-adj-track", "money")
    page.fill("#rl-adj-delta", "3")
    act(page, "#rl-adj-send")
    f = check(page, org, mid)
    expect(page.locator(f"#history li[data-seq='{f.last_seq}']")).to_contain_text("Carla: Money corrected (behind the screen)")
    page.screenshot(path=str(artifacts_dir / "tracker-richelieu.png"), full_page=True)

    # the game ends: the end-game scoring with its breakdown is the engine's
    act(page, "#rl-game-end")
    f = check(page, org, mid)
    assert f.ended()
    final = f.game_state["final"]
    assert final == f.module.final_scores(f.module._final_rows(f.game_state))
    assert standings_shown(page, "rl-final-table") == expected_standings(final)
    expect(page.locator("#rl-status")).to_have_text("Game over: " + ", ".join(final["winners"]) + " won")
    page.screenshot(path=str(artifacts_dir / "tracker-richelieu-final.png"), full_page=True)
    assert page.errors == []


def test_a_stale_phone_gets_the_conflict_and_the_fresh_state(new_context, server, tokens):  # noqa: F811
    api, org = Api(server, tokens["player"]), Api(server, tokens["organiser"])
    mid = api.create("richelieu", PLAYERS)
    stale = open_match(joined_page(new_context, server), mid, block_stream=True)
    api.event(mid, "action", {"player": "Anna", "action": "income"})  # another phone takes Anna's income
    expect(stale.locator("#rl-income")).to_be_enabled()  # this phone has not seen it
    stale.click("#rl-income")
    expect(stale.locator("#conflict")).to_be_visible()
    wait_seq(stale, 1)
    expect(stale.locator("#rl-income")).to_be_disabled()  # the fresh state: income taken once
    f = org.engine(mid)
    assert f.last_seq == 1 and f.game_state["players"]["Anna"]["money"] == 1
    assert stale.errors == []
