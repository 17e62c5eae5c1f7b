"""Every game's TV at the end of its match as a club night meets it: a fresh box (no NetworkManager, so one
code to sit and no Wi-Fi code), a match of the club's season, four players (and six with long names), the TV left on from the play
to the end, at 1280x720 and 1920x1080, in Italian and in English. The conquest match ends by an objective
while its clock still runs (55 minutes left: the clock reads mm:ss) and, another, after its time is up
(the finishing round's note on the screen till the end).

Measured in the page (tests/browser/tvfit.py) and by hand for what the issue of a real evening showed:
the page no taller than the screen (its scrollHeight), the whole clock inside its column and under no
card, and the code to scan (the table's while it plays, the play log's at the end) whole inside the
screen. The organiser's phone on the conquest's match page, open from the play to the end (and opened again after
it), offers no clock control once the match has ended (no Pause, Resume, start or end of a turn); no TV shows one.
Screenshots: test-artifacts/tvend-*.png."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from playwright.sync_api import expect

from tests.browser.test_tv_screens import CAT, _iso, playthrough, send, tv_ready, watch
from tests.browser.trackers_kit import organiser_api, organiser_page
from tests.browser.tvfit import problems
from tests.web.serverproc import Server

pytestmark = pytest.mark.browser

BIG, SMALL = {"width": 1920, "height": 1080}, {"width": 1280, "height": 720}
SHORT = ["Giulia", "Marco", "Luca", "Sara"]
LONG = ["Alessandra Castellani", "Maximilian Hohenberg-Stein", "Giovanni Battista Rossi", "Caterina Sforza Riario",
        "Bartolomeo Colleoni", "Francesca da Montefeltro"]
# (game, players, how the conquest match ends: "running" with 55 minutes left, "time-up" after its time)
CASES = [("conquest-italy", SHORT, "running"), ("conquest-italy", LONG[:4], "time-up"), ("conquest-italy", LONG, "time-up"),
         ("web-of-power", SHORT, None), ("richelieu", SHORT, None), ("rome-is-burning", SHORT, None)]

# the clock's controls of the match page (the page's own and the conquest tracker's): none shown once ended
CLOCK_CONTROLS = ("#clock-start, #clock-pause, #clock-resume, #turn-end, #final-roll, #ci-clock-start, #ci-clock-pause, "
                  "#ci-clock-resume, #ci-turn-end, #ci-final")


def no_clock_controls(page, lang):
    """No clock control shown, and no button saying Pause or Resume (in ``lang``) anywhere on the page."""
    shown = page.evaluate("(sel) => Array.from(document.querySelectorAll(sel)).filter(e => e.getClientRects().length)"
                          ".map(e => e.id)", CLOCK_CONTROLS)
    assert shown == [], (page.url, shown)
    for key in ("clock.pause", "clock.resume", "ci.clock_pause", "ci.clock_resume"):
        word = CAT[lang][key].replace("▶", "").strip()
        expect(page.get_by_role("button", name=word)).to_have_count(0)  # (hidden ones are not counted)


# what the issue measured: the page's height, the clock's text against its column and the cards beside it,
# the code to scan inside the screen
MEASURE = """(qr) => {
  const out = [], H = innerHeight, W = innerWidth, root = document.documentElement;
  if (root.scrollHeight > H + 1) out.push('page ' + root.scrollHeight + ' px tall on a ' + H + ' px screen');
  const clock = document.getElementById('clock-remaining');
  if (clock && clock.getClientRects().length && clock.textContent.trim()) {
    const range = document.createRange(); range.selectNodeContents(clock);
    const t = range.getBoundingClientRect(), side = clock.closest('.tv-side').getBoundingClientRect();
    if (t.right > side.right + 1 || t.left < side.left - 1) out.push('clock "' + clock.textContent + '" out of its column');
    for (const id of ['tv-ranking', 'tv-game']) {
      const c = document.getElementById(id);
      if (!c || !c.getClientRects().length) continue;
      const r = c.getBoundingClientRect();
      if (t.right > r.left + 1 && t.left < r.right - 1 && t.bottom > r.top + 1 && t.top < r.bottom - 1)
        out.push('clock "' + clock.textContent + '" under #' + id);
    }
  }
  const code = document.querySelector(qr);
  if (!code || !code.getClientRects().length) out.push(qr + ' not shown');
  else { const r = code.getBoundingClientRect();
    if (r.top < 0 || r.left < 0 || r.bottom > H + 1 || r.right > W + 1) out.push(qr + ' not whole in the screen: ' + Math.round(r.bottom) + ' > ' + H); }
  return out;
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("tvend") / "data")  # no nmcli on its PATH's stand-in: no Wi-Fi code
    yield s
    s.stop()


@pytest.fixture(scope="module")
def club(server):
    org = organiser_api(server)
    club = org.ok("POST", "/api/clubs", {"name": "Circolo del Giovedì"})["id"]
    seasons = {g: org.ok("POST", "/api/seasons", {"club": club, "game": g, "year": datetime.now(timezone.utc).year,
                                                   "name": "Campionato 2026"})["id"]
               for g in dict.fromkeys(g for g, _, _ in CASES)}
    return org, club, seasons


def _match(org, club, seasons, game, players, ending, n):
    """The match imported up to its last moment of play; the event that ends it (sent while the TVs watch)."""
    _, options, events = playthrough(game, len(players), seed=3)
    names = dict(zip(playthrough(game, len(players), seed=3)[0], players))
    events = [_rename(e, names) for e in events]
    now = datetime.now(timezone.utc)
    if game == "conquest-italy":  # a few turns played, then an objective completed
        k = next(i for i, e in enumerate(events) if e["type"] == "turn.end") + 3
        events = events[:k]
        start = now - timedelta(minutes=65)
        limit = 120 if ending == "running" else 60  # 55 minutes left, or 5 minutes over
        for e in events:
            if e["type"] == "clock.start":
                e["data"] = {**e["data"], "limit_minutes": limit}
        c = next(i for i, e in enumerate(events) if e["type"] == "clock.start")  # the set-up before it, quick
        step = timedelta(minutes=64) / (len(events) - c)
        timed = [{**e, "at": _iso(start + (i - c) * (step if i >= c else timedelta(seconds=1)))}
                 for i, e in enumerate(events)]
        last = {"type": "objective.completed", "data": {"player": players[1]}}
    else:
        last_at = datetime.fromisoformat(events[-2]["at"].replace("Z", "+00:00"))
        shift = now - timedelta(minutes=1) - last_at
        timed = [{**e, "at": _iso(datetime.fromisoformat(e["at"].replace("Z", "+00:00")) + shift)} for e in events[:-1]]
        start = datetime.fromisoformat(timed[0]["at"].replace("Z", "+00:00"))
        last = events[-1]
    doc = {"id": f"tvend-{n}-{game}", "game": game, "players": players,
           "options": {**options, "club": club, "season": seasons[game]},
           "created_at": _iso(start - timedelta(seconds=1)), "events": timed}
    return org.ok("POST", "/api/matches/import", doc)["imported"], last


def _rename(e, names):
    """An event of the playthrough with its players' names replaced (the playthrough names them itself)."""
    import json

    s = json.dumps(e)
    for a, b in names.items():
        s = s.replace(json.dumps(a)[1:-1], json.dumps(b)[1:-1])
    return json.loads(s)


def _check(tv, name, qr, artifacts_dir):
    tv.screenshot(path=str(artifacts_dir / f"tvend-{name}.png"))
    found = tv.evaluate(MEASURE, qr) + problems(tv)
    assert not found, (name, tv.viewport_size, found)


@pytest.mark.parametrize("game,players,ending", CASES, ids=[f"{g}-{len(p)}-{e or 'end'}" for g, p, e in CASES])
def test_the_tv_left_on_fits_the_screen_at_the_end(browser, server, club, game, players, ending, artifacts_dir):
    org, club_id, seasons = club
    mid, last = _match(org, club_id, seasons, game, players, ending, CASES.index((game, players, ending)))
    tvs, contexts = {}, []
    try:
        for lang, vp in (("it", SMALL), ("en", BIG)):
            ctx = browser.new_context(base_url=server.url, viewport=vp, locale={"en": "en-GB", "it": "it-IT"}[lang])
            contexts.append(ctx)
            tv = watch(ctx.new_page())
            tv.goto(f"/m/{mid}/display?reveal=20")
            tv_ready(tv, game)
            tvs[lang] = tv
        for lang, tv in tvs.items():  # the last moment of play
            if game == "conquest-italy":  # the map's table says "Territories", as the phones do
                cat = CAT[lang]
                expect(tv.locator("#ci-tv-players th").nth(1)).to_have_text(cat["ci.col_territories"])
            if ending == "time-up":
                expect(tv.locator("#clock-note")).to_be_visible()
            for vp in (SMALL, BIG):
                tv.set_viewport_size(vp)
                _check(tv, f"{game}-{len(players)}-{ending}-{lang}-{vp['width']}-play", "#table-qr", artifacts_dir)
        phone = None
        # the organiser's phone, open on the match page: the conquest's two endings of four (the other games' matches
        # here run no clock: the page draws none of its controls)
        if game == "conquest-italy" and len(players) == 4:
            phone = organiser_page(lambda **kw: browser.new_context(base_url=server.url, locale="en-GB", **kw), server,
                                   viewport={"width": 390, "height": 844})
            contexts.append(phone.context)
            phone.goto(f"/m/{mid}")
            phone.wait_for_selector("#game-tracker[data-mounted]", state="attached")
        send(org, mid, last)
        if phone is not None:
            expect(phone.locator("#match-status")).to_have_text(CAT["en"]["status.ended"])
            no_clock_controls(phone, "en")
            if ending == "running":  # and opened after the end
                phone.reload()
                phone.wait_for_selector("#game-tracker[data-mounted]", state="attached")
                no_clock_controls(phone, "en")
            assert not phone.errors, phone.errors
        for lang, tv in tvs.items():
            no_clock_controls(tv, lang)
            expect(tv.locator("#tv-ranking")).to_have_attribute("data-revealed", "1", timeout=15_000)
            expect(tv.locator(".tv-winner-season")).to_be_visible()  # the season it counts in
            expect(tv.locator("#tv-playlog")).to_be_visible()
            for vp in (SMALL, BIG):
                tv.set_viewport_size(vp)
                tv.wait_for_timeout(300)  # (the winner's name fitted again after the resize)
                _check(tv, f"{game}-{len(players)}-{ending}-{lang}-{vp['width']}-end", "#tv-playlog", artifacts_dir)
            assert not tv.errors, tv.errors
        tv = tvs["it"]  # switched on again after the end: the same
        tv.reload()
        expect(tv.locator("#tv-ranking")).to_have_attribute("data-revealed", "1", timeout=15_000)
        expect(tv.locator("#tv-playlog")).to_be_visible()
        for vp in (SMALL, BIG):
            tv.set_viewport_size(vp)
            tv.wait_for_timeout(300)
            _check(tv, f"{game}-{len(players)}-{ending}-reload-{vp['width']}-end", "#tv-playlog", artifacts_dir)
    finally:
        for ctx in contexts:
            ctx.close()
