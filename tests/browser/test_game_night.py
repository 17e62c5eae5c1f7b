"""What a table sees at the moments that matter, live, without a reload: the match header turning to
"ended"; the TV at the end of a conquest match (the ranking and the winner), while a final roll is owed
(whose roll, the total that ends the match) and after it (the dice); the time running out (said in
words on the phone and the TV, in both languages, the phase turning at 0:00); a game without a clock on
the TV (the scoreboard, not an empty clock). Matches that need time to have passed are imported with
past timestamps (an organiser's export), so nothing waits for the real clock beyond a few seconds.
Screenshots: test-artifacts/night-*.png."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest
from playwright.sync_api import expect

from companion.games.conquest_map import default_map
from tests.browser.trackers_kit import Api
from tests.web.serverproc import Server

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
TV = {"width": 1920, "height": 1080}
PLAYERS = ["Anna", "Bruno", "Carla"]


def _cat(lang):
    from companion.base.resources import web_dir

    return json.loads((web_dir() / "static" / "i18n" / f"{lang}.json").read_text("utf-8"))


EN, IT = _cat("en"), _cat("it")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # the clock runner looks for new clock matches every second (an imported match is noticed at once)
    s = Server(tmp_path_factory.mktemp("night") / "data", {"COMPANION_CHECKPOINT_SECONDS": "1"})
    yield s
    s.stop()


@pytest.fixture(scope="module")
def api(server):
    out = {}
    for role in ("player", "organiser"):
        p = subprocess.run([sys.executable, "-m", "companion", "token", "create", "--role", role,
                            "--data-dir", str(server.data_dir)], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, p.stderr
        out[role] = Api(server, p.stdout.strip().splitlines()[-1])
    return out


def _iso(dt):
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_n = [0]


def import_clock_match(api, events, game="conquest-italy", start=None):
    """An exported match with its clock (events as (seconds after the start, type, data)) imported now."""
    _n[0] += 1
    start = start or datetime.now(timezone.utc) - timedelta(hours=1)
    doc = {"id": f"night-{_n[0]}", "game": game, "players": PLAYERS, "options": {"clock": True},
           "created_at": _iso(start - timedelta(seconds=1)),
           "events": [{"seq": i + 1, "at": _iso(start + timedelta(seconds=s)), "type": ty, "data": d}
                      for i, (s, ty, d) in enumerate(events)]}
    return api["organiser"].ok("POST", "/api/matches/import", doc)["imported"]


def final_rounds_events():
    """A 1-minute clock run out in Anna's turn, the round finished, the last lap played, then Anna's first
    final-round turn with no conquest: she owes the roll, a total of 4 or less ends the match."""
    ev = [(0, "clock.start", {"limit_minutes": 1})]
    t = 120
    for _lap in range(2):
        for p in PLAYERS:
            ev.append((t, "turn.end", {"player": p}))
            t += 60
    ev.append((t, "turn.end", {"player": "Anna", "conquered": 0}))
    return ev


def _watch(page):
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
    return page


def test_the_match_header_says_ended_when_the_match_ends(browser, server, api, artifacts_dir):
    mid = api["player"].create("conquest-italy", PLAYERS, clock=False)
    ctx = browser.new_context(base_url=server.url, viewport=PHONE, locale="en-GB")
    try:
        page = _watch(ctx.new_page())
        page.goto(f"/m/{mid}")
        page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
        expect(page.locator("#match-status")).to_have_text(EN["status.open"])
        api["player"].event(mid, "objective.completed", {"player": "Bruno"})  # another phone ends it
        expect(page.locator("#match-status")).to_have_text(EN["status.ended"])
        expect(page.locator("#ci-ranking .trk-winner")).to_have_text("Winner: Bruno")
        page.screenshot(path=str(artifacts_dir / "night-header-ended.png"))
        assert not page.errors, page.errors
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", ["en", "it"])
def test_tv_at_the_end_of_a_conquest_match_shows_ranking_and_winner(browser, server, api, lang, artifacts_dir):
    cat = EN if lang == "en" else IT
    mid = api["player"].create("conquest-italy", PLAYERS, clock=False)
    ctx = browser.new_context(base_url=server.url, viewport=TV, locale={"en": "en-GB", "it": "it-IT"}[lang])
    try:
        tv = _watch(ctx.new_page())
        tv.goto(f"/m/{mid}/display?reveal=1")
        expect(tv.locator("#ci-tv-players table")).to_be_visible()
        api["player"].event(mid, "objective.completed", {"player": "Carla"})
        # on the event that ends it, without a reload: the ranking from the last place up, then the winner
        ranking = tv.locator("#tv-ranking")
        expect(ranking).to_have_attribute("data-revealed", "1")
        expect(tv.locator(".tv-winner-name")).to_have_text("Carla")
        expect(tv.locator(".tv-winner-label")).to_have_text(cat["tv.winner"])
        expect(ranking.locator("li.tv-rank")).to_have_count(3)
        expect(ranking.locator("li.tv-rank-first")).to_have_attribute("data-player", "Carla")
        expect(ranking.locator("li.tv-rank-first .tv-rank-notes")).to_contain_text(cat["tv.objective"])
        expect(tv.locator("#ci-tv-map")).to_be_hidden()  # the map gave way to the ranking
        tv.screenshot(path=str(artifacts_dir / f"night-tv-ranking-{lang}.png"))
        tv.reload()  # and a TV switched on after the end shows the same
        expect(tv.locator(".tv-winner-name")).to_have_text("Carla")
        assert not tv.errors, tv.errors
    finally:
        ctx.close()


def test_tv_while_a_final_roll_is_owed_then_the_dice(browser, server, api, artifacts_dir):
    mid = import_clock_match(api, final_rounds_events())
    ctx = browser.new_context(base_url=server.url, viewport=TV, locale="en-GB")
    try:
        tv = _watch(ctx.new_page())
        tv.goto(f"/m/{mid}/display?reveal=1")
        owed = EN["clock.awaiting_roll"].format(player="Anna", n=4)
        expect(tv.locator("#clock-turn")).to_have_text(owed)
        expect(tv.locator("#clock-phase")).to_have_text(EN["phase.final-rounds"])
        tv.screenshot(path=str(artifacts_dir / "night-tv-roll-owed.png"))
        api["player"].event(mid, "final.roll", {"player": "Anna", "dice": [6, 5]})  # 11 > 4: play on
        expect(tv.locator("#final-roll-result")).to_have_text(
            EN["clock.final_roll_goes_on"].format(player="Anna", dice="6 + 5", total=11, n=4))
        expect(tv.locator("#clock-turn")).to_have_text(EN["clock.turn"].format(player="Bruno"))
        api["player"].event(mid, "turn.end", {"player": "Bruno", "conquered": 1})
        expect(tv.locator("#clock-turn")).to_have_text(EN["clock.awaiting_roll"].format(player="Bruno", n=4))
        expect(tv.locator("#final-roll-result")).to_be_hidden()
        api["player"].event(mid, "final.roll", {"player": "Bruno", "dice": [1, 2]})  # 3 <= 4: the end
        expect(tv.locator("#final-roll-result")).to_have_text(
            EN["clock.final_roll_ends"].format(player="Bruno", dice="1 + 2", total=3, n=4))
        expect(tv.locator("#clock-turn")).to_have_text(EN["clock.ended_roll"].format(player="Bruno"))
        expect(tv.locator(".tv-winner-name")).to_be_visible()
        tv.screenshot(path=str(artifacts_dir / "night-tv-final-roll.png"))
        tv.reload()
        expect(tv.locator("#final-roll-result")).to_have_text(
            EN["clock.final_roll_ends"].format(player="Bruno", dice="1 + 2", total=3, n=4))
        assert not tv.errors, tv.errors
    finally:
        ctx.close()


def test_time_up_is_said_in_words_on_the_phone_and_the_tv(browser, server, api, artifacts_dir):
    # a 1-minute clock paused with 2 s left: the pages load at leisure, then the table resumes and the
    # clock reaches 0:00 two seconds later with nobody touching anything
    mid = import_clock_match(api, [(0, "clock.start", {"limit_minutes": 1}), (58, "clock.pause", {})],
                             game="richelieu")
    phone_ctx = browser.new_context(base_url=server.url, viewport=PHONE, locale="en-GB")
    tv_ctx = browser.new_context(base_url=server.url, viewport=TV, locale="it-IT")
    try:
        phone = _watch(phone_ctx.new_page())
        tv = _watch(tv_ctx.new_page())
        phone.goto(f"/m/{mid}")
        tv.goto(f"/m/{mid}/display")
        expect(phone.locator("#clock-phase")).to_have_text(EN["phase.regular"])
        expect(tv.locator("#clock-phase")).to_have_text(IT["phase.regular"])
        expect(phone.locator("#clock-remaining")).to_have_text("0:02")
        api["player"].event(mid, "clock.resume", {})
        # 0:00: the phase turns by itself and the table is told what to do, in each page's language
        expect(phone.locator("#clock-remaining")).to_have_text("0:00", timeout=15_000)
        expect(phone.locator("#clock-phase")).to_have_text(EN["phase.finishing-round"])
        expect(tv.locator("#clock-phase")).to_have_text(IT["phase.finishing-round"])
        expect(phone.locator("#clock-note")).to_have_text(EN["clock.time_up"].format(player="Anna"))
        expect(tv.locator("#clock-note")).to_have_text(IT["clock.time_up"].format(player="Anna"))
        # the clock runner's alert, in words (not "Clock alert")
        expect(phone.locator("#toast")).to_have_text(EN["clock.time_up"].format(player="Anna"), timeout=15_000)
        expect(tv.locator("#toast")).to_have_text(IT["clock.time_up"].format(player="Anna"))
        phone.screenshot(path=str(artifacts_dir / "night-time-up-phone-en.png"))
        tv.screenshot(path=str(artifacts_dir / "night-time-up-tv-it.png"))
        assert not phone.errors and not tv.errors, (phone.errors, tv.errors)
    finally:
        phone_ctx.close()
        tv_ctx.close()


@pytest.mark.parametrize("game", ["richelieu", "web-of-power"])
def test_tv_of_a_game_without_a_clock_shows_the_scoreboard(browser, server, api, game, artifacts_dir):
    mid = api["player"].create(game, PLAYERS)
    ctx = browser.new_context(base_url=server.url, viewport=TV, locale="en-GB")
    try:
        tv = _watch(ctx.new_page())
        tv.goto(f"/m/{mid}/display")
        table = tv.locator({"richelieu": "#rl-tv-table", "web-of-power": "#wop-tv-totals"}[game])
        expect(table).to_be_visible()
        expect(tv.locator("#clock-remaining")).to_be_hidden()
        for name in PLAYERS:
            expect(table).to_contain_text(name)
        assert "--:--" not in tv.inner_text("body")
        # whose turn, said in the side column (a game without a clock has no clock to say it)
        expect(tv.locator("#clock-turn")).to_have_text(EN["clock.turn"].format(player="Anna"))
        # a scoreboard readable across the room (waited for in the page: the scoreboard is drawn again when
        # the live view arrives, and measures nothing while it is being replaced)
        tv.wait_for_function("""([sel, w]) => { const t = document.querySelector(sel);
            return !!t && t.getBoundingClientRect().width > w; }""",
                             arg=[{"richelieu": "#rl-tv-table", "web-of-power": "#wop-tv-totals"}[game], TV["width"] / 3])
        tv.screenshot(path=str(artifacts_dir / f"night-tv-no-clock-{game}.png"))
        assert not tv.errors, tv.errors
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", ["en", "it"])
def test_the_pages_count_with_the_plural_rule_of_their_language(browser, server, lang):
    cat = EN if lang == "en" else IT
    ctx = browser.new_context(base_url=server.url, viewport=PHONE, locale={"en": "en-GB", "it": "it-IT"}[lang])
    try:
        page = ctx.new_page()
        page.goto("/")
        got = page.evaluate("[0, 1, 2].map(n => Companion.plural('wop.n_monasteries', n))")
        assert got == [cat["wop.n_monasteries.other"].format(n=0), cat["wop.n_monasteries.one"].format(n=1),
                       cat["wop.n_monasteries.other"].format(n=2)]
        assert got == ({"en": ["0 monasteries", "1 monastery", "2 monasteries"],
                        "it": ["0 monasteri", "1 monastero", "2 monasteri"]}[lang])
    finally:
        ctx.close()


def test_web_of_power_in_italian_warnings_board_and_counts(browser, server, api, artifacts_dir):
    """Italian leaves nothing of Web of Power in English: the engine's warnings, the shipped board's name;
    counts agree with their nouns; game phases are named in words on the tables page."""
    mid = api["player"].create("web-of-power", PLAYERS, label="Tavolo WoP")
    api["player"].event(mid, "place", {"player": "Bruno", "piece": "monastery", "country": "England", "count": 1})
    ctx = browser.new_context(base_url=server.url, viewport=PHONE, locale="it-IT")
    try:
        page = _watch(ctx.new_page())
        page.goto(server.join_url)  # a player: a viewer's page has no tracker controls
        page.goto(f"/m/{mid}")
        page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
        expect(page.locator("#wop-warnings li")).to_have_text(
            IT["wop.warn_turn"].format(turn=1, message=IT["wop.w_out_of_turn"].format(player="Bruno", next="Anna")))
        # (the shipped board's name in Italian is said at the final scoring: test_wop_scoring_step.py)
        expect(page.locator("#wop-board-note")).to_be_hidden()
        expect(page.locator("#wop-status")).to_have_text(IT["wop.status_turn.one"].format(player="Bruno", n=1))
        expect(page.locator("#history li").first).to_contain_text("Bruno: 1 monastero in England")
        page.select_option("#wop-country", "England")
        expect(page.locator("#wop-country-info")).to_contain_text("1 monastero su ? siti · 0 consiglieri")
        expect(page.locator("#wop-supply-line")).to_contain_text("monasteri")
        text = page.inner_text("body")
        for bad in ("played out of turn", "monastery(ies)", "councillor(s)", "1 monasteri ", "1 consiglieri",
                    "1 tolte"):
            assert bad not in text, bad
        page.screenshot(path=str(artifacts_dir / "night-wop-it.png"), full_page=True)
        assert not page.errors, page.errors
        # the tables page names the game's own phase in words, never the raw "play"
        page.goto("/tournament")
        card = page.locator(f".table-card[data-id='{mid}']")
        expect(card).to_contain_text(IT["gphase.web-of-power.play"])
        assert "play" not in card.inner_text().split()
    finally:
        ctx.close()


# -- the phone layout --------------------------------------------------------------------------------

def conquest_in_play(api):
    """A conquest match dealt by the Pi, the set-up placements made, the clock running, the first player's
    reinforcements placed (a turn is reinforced before its combats, its move or its end are offered)."""
    p = api["player"]
    mid = p.create("conquest-italy", PLAYERS)
    p.ok("POST", f"/api/matches/{mid}/conquest/deal", {"expected_seq": 0, "data": {}})
    while True:
        m = p.ok("GET", f"/api/matches/{mid}")
        sm, state = m["view"]["summary"], m["view"]["state"]
        if state["phase"] != "place":
            break
        who = sm["next_placer"]
        city = sorted(c for c, o in state["owner"].items() if o == who)[0]
        p.ok("POST", f"/api/matches/{mid}/events", {"type": "setup.place", "expected_seq": m["seq"],
                                                   "data": {"player": who, "placements": {city: sm["placement_due"]}}})
    p.event(mid, "clock.start", {})
    m = p.ok("GET", f"/api/matches/{mid}")
    who = m["view"]["state"]["turn"]["player"]
    due = next(x["reinforcements"] for x in m["view"]["summary"]["players"] if x["player"] == who)
    owner = m["view"]["state"]["owner"]
    gm = default_map()  # on a city that borders another player's, so that a combat is there to offer
    city = sorted(c for c, o in owner.items() if o == who and any(gm.can_attack(c, d) for d, x in owner.items() if x != who))[0]
    p.event(mid, "reinforce", {"player": who, "placements": {city: due}})
    return mid


TABLES = r"""() => {
  const out = [];
  document.querySelectorAll('.trk-scroll, .table-wrap').forEach(w => {
    const r = w.getBoundingClientRect();
    if (!r.width || w.closest('[hidden]') || w.closest('details:not([open])')) return;
    const table = w.querySelector('table'); if (!table) return;
    const name = table.id || table.className;
    if (r.right > document.documentElement.clientWidth + 1) out.push(`${name}: its box is wider than the screen`);
    w.scrollLeft = w.scrollWidth;  // scrolled to the end: the last column shows, the first stays in view
    const box = w.getBoundingClientRect();
    table.querySelectorAll('tr').forEach(tr => {
      const cells = tr.children; if (!cells.length) return;
      const first = cells[0].getBoundingClientRect(), last = cells[cells.length - 1].getBoundingClientRect();
      if (first.left < box.left - 1) out.push(`${name}: the first column scrolls out of view`);
      if (last.right > box.right + 1) out.push(`${name}: the last column cannot be reached`);
    });
    w.scrollLeft = 0;
  });
  return [...new Set(out)];
}"""


@pytest.mark.parametrize("width", [360, 390])
def test_phone_layout_header_tables_dice_map_and_turn_controls(browser, server, api, width, artifacts_dir):
    """One row of header; tables fit by scrolling sideways in their box with the player's column kept in
    view; each side's dice on one line; the map's names readable; pause and end of turn on the first
    screen, under the clock."""
    view = {"width": width, "height": 844 if width == 390 else 780}
    cq = conquest_in_play(api)
    wop = api["player"].create("web-of-power", PLAYERS + ["Dario", "Elena"], clock=True)
    api["player"].event(wop, "clock.start", {})
    api["player"].event(wop, "place", {"player": "Anna", "piece": "monastery", "country": "England", "count": 1})
    rl = api["player"].create("richelieu", PLAYERS, clock=True)
    api["player"].event(rl, "clock.start", {})
    ctx = browser.new_context(base_url=server.url, viewport=view, locale="it-IT")
    ctx.set_default_timeout(15_000)
    try:
        page = _watch(ctx.new_page())
        page.goto(server.join_url)  # a player's phone
        for name, mid in (("conquest", cq), ("wop", wop), ("richelieu", rl)):
            page.goto(f"/m/{mid}")
            page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
            page.wait_for_function("() => window.companionMatch && window.companionMatch.view")
            page.click("#who-card .who-btn[data-player='Anna']")  # the phone answers "Who are you?" once
            expect(page.locator("#who-card")).to_be_hidden()
            page.screenshot(path=str(artifacts_dir / f"night-phone-{name}-{width}-first-screen.png"))
            header = page.locator("header.top").bounding_box()
            assert header["height"] <= 64, f"{name}: the header takes {header['height']} px"
            # the controls used every turn are on the first screen, under the clock
            pause, end = (("#ci-clock-pause", "#ci-turn-end") if name == "conquest" else ("#clock-pause", "#turn-end"))
            clock = page.locator("#clock-remaining").bounding_box()
            for sel in (pause, end):
                expect(page.locator(sel)).to_be_visible()
                b = page.locator(sel).bounding_box()
                assert clock["y"] < b["y"] and b["y"] + b["height"] <= view["height"], (name, sel, b)
            page.evaluate("document.querySelectorAll('#game-tracker details').forEach(d => { d.open = true; })")
            page.wait_for_timeout(200)
            assert page.evaluate(TABLES) == [], name
            assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth"), name
            page.screenshot(path=str(artifacts_dir / f"night-phone-{name}-{width}.png"), full_page=True)
            if name == "conquest":
                page.check("input[name=ci-dice-mode][value=table]")
                # nothing is chosen for the player: no attack, no defender's dice until one is tapped; the
                # attack tapped is the one with the most dice on both sides (the widest rows of dice)
                expect(page.locator("#ci-ddice input")).to_have_count(0)
                pair = page.evaluate("""() => {
                  const u = window.companionMatch.view.state.units;
                  const n = b => Math.min(3, u[b.dataset.from] - 1) + Math.min(3, u[b.dataset.to]);
                  const all = Array.from(document.querySelectorAll('#ci-targets button'));
                  const b = all.sort((x, y) => n(y) - n(x))[0];
                  return [b.dataset.from, b.dataset.to];
                }""")
                page.click(f"#ci-targets button[data-from='{pair[0]}'][data-to='{pair[1]}']")
                expect(page.locator("#ci-ddice input")).not_to_have_count(0)
                for side in ("#ci-adice", "#ci-ddice"):
                    boxes = [page.locator(f"{side} input").nth(i).bounding_box()
                             for i in range(page.locator(f"{side} input").count())]
                    assert len({round(b["y"]) for b in boxes}) == 1, f"{side}: the dice wrap"
                    assert all(b["x"] + b["width"] <= width for b in boxes), f"{side}: a die is off the screen"
                # the map's city names are drawn at a readable size (not ~3 px)
                page.wait_for_selector("#ci-map svg text")
                h = page.evaluate("Math.min(...Array.from(document.querySelectorAll('#ci-map svg text'))"
                                  ".slice(0, 20).map(t => t.getBoundingClientRect().height))")
                assert h >= 9, f"map labels {h} px high"
                page.locator("#ci-table-dice").scroll_into_view_if_needed()
                page.screenshot(path=str(artifacts_dir / f"night-phone-dice-{width}.png"))
            if name == "richelieu":  # the organiser's result ends it, its clock running: no clock control is left
                seq = api["organiser"].ok("GET", f"/api/matches/{mid}")["seq"]
                api["organiser"].ok("POST", f"/api/matches/{mid}/result", {"expected_seq": seq, "places": [
                    {"player": p, "place": i + 1} for i, p in enumerate(PLAYERS)]})
                expect(page.locator("#match-status")).to_have_text(IT["status.ended"])
                for sel in ("#clock-start", "#clock-pause", "#clock-resume", "#turn-end", "#final-roll"):
                    expect(page.locator(sel)).to_be_hidden()
        # the menu opens the links the header no longer lists
        expect(page.locator("#top-nav")).to_be_hidden()
        page.click("#menu-toggle")
        expect(page.locator("#top-nav a[href='/new']")).to_be_visible()
        page.screenshot(path=str(artifacts_dir / f"night-phone-menu-{width}.png"))
        assert not page.errors, page.errors
    finally:
        ctx.close()


def test_the_home_page_clock_ticks(browser, server, api, artifacts_dir):
    mid = api["player"].create("richelieu", PLAYERS, clock=True, label="Tavolo orologio")
    api["player"].event(mid, "clock.start", {})
    ctx = browser.new_context(base_url=server.url, viewport=PHONE, locale="en-GB")
    try:
        page = _watch(ctx.new_page())
        page.goto("/")
        clock = page.locator(f"li[data-id='{mid}'] .home-clock")
        expect(clock).to_have_text(re.compile(r"^1:59:\d\d$"))
        first = clock.inner_text()
        # the clock runner ticks once a second: the list follows without a reload
        expect(clock).not_to_have_text(first, timeout=5000)
        page.screenshot(path=str(artifacts_dir / "night-home-clock.png"))
        assert not page.errors, page.errors
    finally:
        ctx.close()


def _token(server, role):
    p = subprocess.run([sys.executable, "-m", "companion", "token", "create", "--role", role,
                        "--data-dir", str(server.data_dir)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("lang", ["en", "it"])
def test_a_season_for_a_new_club_is_created_in_one_step(browser, server, api, lang, artifacts_dir):
    from companion.web import i18n

    name = {"en": "Circolo Risiko Torino", "it": "Circolo Risiko Milano"}[lang]
    ctx = browser.new_context(base_url=server.url, viewport=PHONE, locale={"en": "en-GB", "it": "it-IT"}[lang],
                              extra_http_headers={"Authorization": f"Bearer {_token(server, 'organiser')}"})
    try:
        page = _watch(ctx.new_page())
        page.goto("/seasons")
        form = page.locator("#new-season")
        form.locator("[name=club]").fill(name)
        expect(page.locator("#new-club-note")).to_have_text(
            i18n.translate(lang, "season.new_club_note", name=name))
        form.locator("[name=year]").fill("2027")
        page.screenshot(path=str(artifacts_dir / f"night-new-season-{lang}.png"), full_page=True)
        form.locator("[type=submit]").click()
        page.wait_for_url(re.compile(r"/seasons/[0-9a-f]+$"))
        expect(page.locator("main")).to_contain_text(name)
        clubs = api["organiser"].ok("GET", "/api/seasons")
        assert any(s["club"] == name and s["year"] == 2027 for s in clubs["seasons"]), clubs
        assert not page.errors, page.errors
    finally:
        ctx.close()


@pytest.mark.parametrize("lang", ["en", "it"])
def test_every_page_fits_360_px_with_a_one_row_header(browser, server, api, lang, artifacts_dir):
    mid = api["player"].create("rome-is-burning", PLAYERS)
    ctx = browser.new_context(base_url=server.url, viewport={"width": 360, "height": 780},
                              locale={"en": "en-GB", "it": "it-IT"}[lang],
                              extra_http_headers={"Authorization": f"Bearer {_token(server, 'organiser')}"})
    try:
        page = _watch(ctx.new_page())
        for path in ("/", "/new", "/tournament", "/seasons", "/join", "/login", f"/m/{mid}", f"/m/{mid}/display"):
            page.goto(path)
            page.wait_for_load_state("load")
            page.wait_for_timeout(100)
            assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth"), path
            if page.locator("header.top").count():
                assert page.locator("header.top").bounding_box()["height"] <= 64, path
            if path in ("/", f"/m/{mid}/display"):
                page.screenshot(path=str(artifacts_dir / f"night-360-{'home' if path == '/' else 'display'}-{lang}.png"))
        assert not page.errors, page.errors
    finally:
        ctx.close()


def test_tv_draws_the_game_scoreboard_when_its_script_arrives_late(browser, server, api):
    """The game's TV script loads beside the page's: a TV whose first view came before the script still
    draws the game's own panel (its scoreboard) once the script is there, and the phone's scoreboard gives
    way to it."""
    import time

    mid = api["player"].create("richelieu", PLAYERS)
    ctx = browser.new_context(base_url=server.url, viewport=TV, locale="en-GB")
    try:
        def late(route):
            time.sleep(1.5)
            route.continue_()

        ctx.route("**/static/games/richelieu.display.js*", late)
        tv = _watch(ctx.new_page())
        tv.goto(f"/m/{mid}/display")
        expect(tv.locator("#rl-tv-table")).to_be_visible()
        expect(tv.locator("#rl-tv-table tbody tr")).to_have_count(len(PLAYERS))
        expect(tv.locator("#scores")).to_be_hidden()
        assert not tv.errors, tv.errors
    finally:
        ctx.close()
