"""The screens people watch, measured in the page (tests/browser/tvfit.py: nothing outside the screen, nothing
cut, no box over another, no text under 2vh) at 1920x1080 and 1280x720, in English and Italian, with 3 players
and with the most the game seats (up to 6), all of them with long names:

- every game's TV before its end and on the event that ends it: the ranking and the winner appear live (no
  reload), the clock turns grey and the table's code to sit goes; a TV switched on later shows the same;
- the games without a clock say whose turn on the TV, and follow it;
- the conquest map from across the room: as tall as the screen, no name over another name or city;
- the room screen (/tournament) with 3 and 12 tables: no site header, every name in full;
- the phones of a match that ends: no more "Who are you?" nor "Enter my objective card"; its end undone, the
  phones and the TV show again what a reload shows (also those opened on the ended match);
- the "connection lost" banner says what is true: it goes with the first thing the stream delivers again,
  and the countdown never runs under "the clock is stopped on this screen".

Matches are random legal playthroughs (tests/games/conformance.py) imported up to their last event, which a
phone then sends while the TVs watch. Screenshots: test-artifacts/tvs-*.png."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from datetime import datetime, timedelta, timezone

import pytest
from playwright.sync_api import expect

from companion.base.resources import web_dir
from companion.core.match import Fold
from companion.games import game_module
from tests.browser.trackers_kit import joined_page, open_match, organiser_api
from tests.browser.tvfit import assert_fits
from tests.fakenm import FakeNM
from tests.games import conformance
from tests.web.serverproc import Server

pytestmark = pytest.mark.browser

BIG, SMALL = {"width": 1920, "height": 1080}, {"width": 1280, "height": 720}
LONG = ["Alessandra Castellani", "Maximilian Hohenberg-Stein", "Giovanni Battista Rossi", "Caterina Sforza Riario",
        "Bartolomeo Colleoni", "Francesca da Montefeltro"]
GAMES = ["conquest-italy", "web-of-power", "richelieu", "rome-is-burning"]
CASES = [(g, n) for g in GAMES for n in sorted({3, min(6, game_module(g).MAX_PLAYERS)})]
CAT = {lang: json.loads((web_dir() / "static" / "i18n" / f"{lang}.json").read_text("utf-8")) for lang in ("en", "it")}
EN, IT = CAT["en"], CAT["it"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The box with a stand-in NetworkManager (tests/fakenm.py): its own Wi-Fi can be switched on, and every
    code to sit then comes after the Wi-Fi's code."""
    tmp = tmp_path_factory.mktemp("tvs")
    nm = FakeNM(tmp)
    s = Server(tmp / "data", {"COMPANION_CHECKPOINT_SECONDS": "1", "PATH": nm.path()})
    yield s
    s.stop()


@pytest.fixture(scope="module")
def org(server):
    return organiser_api(server)


def _iso(dt):
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def playthrough(game: str, n: int, seed: int = 1) -> tuple[list[str], dict, list[dict]]:
    """A random legal match of ``game`` played to its end by ``n`` players with long names: (players, options,
    events)."""
    players = LONG[:n]
    p = conformance.Playthrough(game, seed, undo_rate=0, fuzz_rate=0, checks=False)
    p.players = players
    p.fold = Fold(game, players, p.options)
    p.run(600, until_ended=True)
    assert p.fold.ended(), (game, n)
    return players, p.options, p.events


_made = [0]


@pytest.fixture(scope="module")
def wifi_on(org):
    """The box's own Wi-Fi on (the TVs' side column then holds two codes: the Wi-Fi's, the table's)."""
    org.ok("PUT", "/api/wifi", {"hotspot": True})
    deadline = time.monotonic() + 30
    while not org.ok("GET", "/api/wifi").get("enabled"):
        assert time.monotonic() < deadline, org.ok("GET", "/api/wifi")
        time.sleep(0.2)


def import_match(org, game, players, options, events):
    """The events imported as a match of the box, moved in time to end a minute ago."""
    _made[0] += 1
    last = datetime.fromisoformat(events[-1]["at"].replace("Z", "+00:00"))
    shift = datetime.now(timezone.utc) - timedelta(minutes=1) - last
    moved = [{**e, "at": _iso(datetime.fromisoformat(e["at"].replace("Z", "+00:00")) + shift)} for e in events]
    first = datetime.fromisoformat(moved[0]["at"].replace("Z", "+00:00")) - timedelta(seconds=1)
    doc = {"id": f"tvs-{_made[0]}-{game}", "game": game, "players": players, "options": options,
           "created_at": _iso(first), "events": moved}
    return org.ok("POST", "/api/matches/import", doc)["imported"]


def send(org, mid, event):
    seq = org.ok("GET", f"/api/matches/{mid}")["seq"]
    return org.ok("POST", f"/api/matches/{mid}/events", {"type": event["type"], "data": event["data"], "expected_seq": seq})


def watch(page):
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    return page


def tv_ready(tv, game):
    """The game's panel drawn (the conquest map with its names placed)."""
    expect(tv.locator("#tv-game")).to_be_visible()
    if game == "conquest-italy":
        tv.wait_for_selector("#ci-tv-map[data-crowded]", state="attached")
    tv.wait_for_function("() => window.companionMatch && window.companionMatch.view")


def fits(tv, name, artifacts_dir):
    tv.screenshot(path=str(artifacts_dir / f"tvs-{name}.png"))
    assert_fits(tv, name)


# what the map's legend lies on (in the map's units): a city, a name, a line between two cities
LEGEND_FREE = """() => {
  const g = document.getElementById('ci-tv-legend').getBBox(), out = [];
  const r = { x1: g.x, y1: g.y, x2: g.x + g.width, y2: g.y + g.height };
  const hit = (b) => b.x < r.x2 && r.x1 < b.x + b.width && b.y < r.y2 && r.y1 < b.y + b.height;
  for (const e of document.querySelectorAll('#ci-tv-map svg [data-city]')) if (hit(e.getBBox())) out.push(e.getAttribute('data-city'));
  for (const l of document.querySelectorAll('#ci-tv-map svg > line')) {
    const [x1, y1, x2, y2] = ['x1', 'y1', 'x2', 'y2'].map(a => +l.getAttribute(a));
    for (let k = 0; k <= 50; k++) {  // points along the line
      const x = x1 + (x2 - x1) * k / 50, y = y1 + (y2 - y1) * k / 50;
      if (x > r.x1 && x < r.x2 && y > r.y1 && y < r.y2) { out.push(`line ${x1},${y1}-${x2},${y2}`); break; }
    }
  }
  return out;
}"""


MUTED = """() => { const probe = document.createElement('span'); probe.style.color = 'var(--muted)';
  document.body.appendChild(probe); const c = getComputedStyle(probe).color; probe.remove();
  return [getComputedStyle(document.getElementById('clock-remaining')).color, c]; }"""


# -- the room screen (first: the module's server has no other open table yet) --------------------------------

def test_the_room_screen_uses_the_screen_for_3_and_for_12_tables(browser, server, org, artifacts_dir):
    games = ["conquest-italy", "richelieu", "rome-is-burning", "web-of-power"]
    made = []
    for count in (3, 12):
        while len(made) < count:
            g = games[len(made) % 4]
            players = LONG[:min(6, game_module(g).MAX_PLAYERS)]
            made.append((org.ok("POST", "/api/matches", {"game": g, "players": players,
                                                          "label": f"Round 2 · Table {len(made) + 1}"})["id"], players))
            if g == "conquest-italy":
                org.ok("POST", f"/api/matches/{made[-1][0]}/events", {"type": "clock.start", "data": {}, "expected_seq": 0})
        for vp, locale in ((BIG, "en-GB"), (SMALL, "it-IT")):
            ctx = browser.new_context(base_url=server.url, viewport=vp, locale=locale)
            try:
                page = watch(ctx.new_page())
                page.goto("/tournament")
                cards = page.locator("#tables .table-card")
                expect(cards).to_have_count(count)
                expect(page.locator("#top")).to_be_hidden()  # the site's header gives way to the tables
                for mid, players in made:  # every name in full
                    names = page.locator(f'.table-card[data-id="{mid}"] .table-players li')
                    expect(names).to_have_text(players)
                page.screenshot(path=str(artifacts_dir / f"tvs-room-{count}-{vp['width']}.png"))
                assert_fits(page, f"room {count}", scope="body", min_vh=1.8)
                # a conquest table says whose turn by marking the name
                expect(page.locator(f'.table-card[data-id="{made[0][0]}"] li.table-now')).to_have_text(made[0][1][0])
                assert not page.errors, page.errors
            finally:
                ctx.close()
    # the room is the organiser's page too: on a phone the header stays
    ctx = browser.new_context(base_url=server.url, viewport={"width": 390, "height": 844}, locale="en-GB")
    try:
        page = ctx.new_page()
        page.goto("/tournament")
        expect(page.locator("#top")).to_be_visible()
    finally:
        ctx.close()


# -- every game's TV, before and at its end --------------------------------------------------------------------

@pytest.mark.parametrize("game,n", CASES, ids=[f"{g}-{n}" for g, n in CASES])
def test_every_tv_fits_and_shows_the_end_live(browser, server, org, wifi_on, game, n, artifacts_dir):
    players, options, events = playthrough(game, n)
    mid = import_match(org, game, players, options, events[:-1])
    name = f"{game}-{n}"
    # two TVs beside the table: one in English at 1920x1080, one in Italian at 1280x720
    tvs = {}
    contexts = []
    try:
        for lang, vp in (("en", BIG), ("it", SMALL)):
            ctx = browser.new_context(base_url=server.url, viewport=vp, locale={"en": "en-GB", "it": "it-IT"}[lang])
            contexts.append(ctx)
            tv = watch(ctx.new_page())
            tv.goto(f"/m/{mid}/display?reveal=1")
            tv_ready(tv, game)
            tvs[lang] = tv
        for lang, tv in tvs.items():
            cat = CAT[lang]
            # the Pi's own screen: the Wi-Fi's code, then the table's to sit
            expect(tv.locator("#table-qr .qr-wifi svg")).to_be_visible()
            expect(tv.locator("#table-qr .qr-step[data-step='2'] svg")).to_be_visible()
            if game == "conquest-italy":  # the final rolls: the roll owed and the code to sit, both in the screen
                expect(tv.locator("#tv-roll")).to_have_attribute("data-state", "owed")
                assert tv.locator("#ci-tv-map").get_attribute("data-crowded") == "0"
                # its names placed in a Worker (games/conquest-italy.layout.js), not by the page's own thread
                assert tv.evaluate("typeof window.CompanionMapLayout") == "undefined"
                box = tv.locator("#ci-tv-map svg").bounding_box()
                assert box["height"] >= 0.85 * tv.viewport_size["height"], box  # the map as tall as the screen
                # the legend of its signs, in the page's language, on no city, name or line of the map
                legend = tv.locator("#ci-tv-legend")
                expect(legend.locator("rect")).to_have_count(1)
                expect(legend.locator("line[stroke-dasharray]")).to_have_count(1)
                expect(legend.locator("text")).to_have_text([cat["tv.ci_legend_airport"], cat["tv.ci_legend_sea"]])
                assert tv.evaluate(LEGEND_FREE) == [], lang
            if game == "web-of-power":  # the final scoring waits for parts the table counts: every column shown
                scoring = tv.locator("#wop-tv-scoring")
                expect(scoring).to_be_visible()
                for p in players:
                    expect(scoring.locator(f'tr.wop-tv-totals td[data-player="{p}"]')).to_be_visible()
                expect(tv.locator("#wop-tv-status")).to_contain_text(cat["tv.wop_counting"])
            for vp in ((BIG, SMALL) if lang == "en" else (SMALL, BIG)):
                tv.set_viewport_size(vp)
                fits(tv, f"{name}-{lang}-{vp['width']}-before", artifacts_dir)

        send(org, mid, events[-1])  # a phone sends the event that ends the match

        result = org.ok("GET", f"/api/matches/{mid}/result")
        assert result["ended"]
        winners = " · ".join(r["player"] for r in result["results"] if r["place"] == 1)
        for lang, tv in tvs.items():
            cat = CAT[lang]
            ranking = tv.locator("#tv-ranking")
            expect(ranking).to_have_attribute("data-revealed", "1", timeout=15_000)  # live: no reload
            expect(tv.locator(".tv-winner-name")).to_have_text(winners)
            expect(ranking.locator("li.tv-rank")).to_have_count(n)
            order = [int(x) for x in ranking.get_attribute("data-order").split(",")]
            assert order == sorted((r["place"] for r in result["results"]), reverse=True)  # last place first
            expect(tv.locator("#tv-game")).to_be_hidden()
            expect(tv.locator("#table-qr")).to_be_hidden()  # nobody sits down at an ended table
            if game == "conquest-italy":
                clock, muted = tv.evaluate(MUTED)
                assert clock == muted, (clock, muted)  # the clock of an ended match is grey, not red
                expect(tv.locator("body")).not_to_have_class("tv-alert")
            else:
                expect(tv.locator("#clock-turn")).to_have_text(cat["tv.match_over"])
            for vp in ((SMALL, BIG) if lang == "en" else (BIG, SMALL)):
                tv.set_viewport_size(vp)
                fits(tv, f"{name}-{lang}-{vp['width']}-end", artifacts_dir)
            assert not tv.errors, tv.errors
        # a TV switched on after the end shows the same
        tv = tvs["it"]
        tv.reload()
        expect(tv.locator("#tv-ranking")).to_have_attribute("data-revealed", "1", timeout=15_000)
        expect(tv.locator(".tv-winner-name")).to_have_text(winners)
    finally:
        for ctx in contexts:
            ctx.close()


# -- whose turn, without a clock -----------------------------------------------------------------------------

def _whose_turn(game, fold):
    sm = fold.view()["summary"]
    if game == "web-of-power":
        return (sm["turn"] or {}).get("player") or sm["next_player"]
    if game == "richelieu":
        return sm["turn"]["player"]
    return sm["to_move"]


@pytest.mark.parametrize("game", ["web-of-power", "richelieu", "rome-is-burning"])
def test_a_tv_without_a_clock_says_whose_turn(browser, server, org, wifi_on, game, artifacts_dir):
    n = min(6, game_module(game).MAX_PLAYERS)
    players, options, events = playthrough(game, n)
    k = len(events) // 3
    fold = Fold(game, players, options)
    for e in events[:k]:
        fold.apply(e)
    while not _whose_turn(game, fold):  # a moment of play where somebody is to play
        fold.apply(events[k])
        k += 1
    mid = import_match(org, game, players, options, events[:k])
    ctx = browser.new_context(base_url=server.url, viewport=SMALL, locale="it-IT")
    try:
        tv = watch(ctx.new_page())
        tv.goto(f"/m/{mid}/display")
        tv_ready(tv, game)
        who = _whose_turn(game, fold)
        expect(tv.locator("#clock-turn")).to_have_text(IT["clock.turn"].format(player=who))
        expect(tv.locator(f'#tv-game tr.tv-current[data-player="{who}"]')).to_have_count(1)
        fits(tv, f"turn-{game}-it-1280", artifacts_dir)
        tv.set_viewport_size(BIG)
        fits(tv, f"turn-{game}-it-1920", artifacts_dir)
        # the game goes on: the TV follows whose turn it is
        for e in events[k:k + 40]:
            send(org, mid, e)
            fold.apply(e)
            if _whose_turn(game, fold) not in (None, who):
                break
        now = _whose_turn(game, fold)
        assert now and now != who
        expect(tv.locator("#clock-turn")).to_have_text(IT["clock.turn"].format(player=now))
        assert not tv.errors, tv.errors
    finally:
        ctx.close()


# -- the phones of a match that ends ---------------------------------------------------------------------------

def test_the_phones_of_an_ended_match_no_longer_ask(new_context, server, org, artifacts_dir):
    players = LONG[:3]
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": players, "options": {"clock": False}})["id"]
    seated = open_match(joined_page(new_context, server), mid, seat=players[0])
    stranger = open_match(joined_page(new_context, server), mid)
    expect(seated.locator("#ci-obj-form summary")).to_have_text(EN["ci.secret_enter"])
    expect(stranger.locator("#who-card")).to_be_visible()
    org.event(mid, "objective.completed", {"player": players[2]})  # another phone ends the match
    for page in (seated, stranger):
        expect(page.locator("#match-status")).to_have_text(EN["status.ended"])
    expect(seated.locator("#ci-secret")).to_be_hidden()  # no objective to enter any more
    expect(seated.locator("#ci-ranking")).to_be_visible()  # the final standings
    expect(stranger.locator("#who-card")).to_be_hidden()  # nobody sits down any more
    seated.screenshot(path=str(artifacts_dir / "tvs-phone-ended.png"))
    # a phone and a TV opened on the ended match; then the organiser undoes the end: every page shows again what a
    # reload would show, whether it was open before the end or opened after it
    late = open_match(joined_page(new_context, server), mid)
    tv = watch(new_context(viewport=SMALL).new_page())
    tv.goto(f"/m/{mid}/display")
    expect(tv.locator("#tv-ranking")).to_be_visible()  # the end, as the TV shows it
    expect(tv.locator("body")).to_have_class(re.compile(r"\btv-ended\b"))
    for page in (seated, stranger, late):
        expect(page.locator("#match-status")).to_have_text(EN["status.ended"])
    expect(late.locator("#who-card")).to_have_count(0)
    seq = org.ok("GET", f"/api/matches/{mid}")["seq"]
    org.ok("POST", f"/api/matches/{mid}/undo", {"expected_seq": seq})
    for page in (seated, stranger, late):
        expect(page.locator("#match-status")).to_have_text(EN["status.open"])
        expect(page.locator("#table-qr")).to_be_visible()
    expect(seated.locator("#ci-secret")).to_be_visible()  # the objective can be entered again
    expect(seated.locator("#ci-ranking")).to_be_hidden()  # no final standings while the match is in play
    expect(seated.locator("#who-card")).to_be_hidden()  # (it sits: not asked again)
    for page in (stranger, late):  # "Who are you?" again, its free seats tappable
        expect(page.locator("#who-card")).to_be_visible()
        expect(page.locator(f"#who-card .who-btn[data-player='{players[0]}']")).to_be_disabled()
        expect(page.locator(f"#who-card .who-btn[data-player='{players[1]}']")).to_be_enabled()
    expect(tv.locator("body")).not_to_have_class(re.compile(r"\btv-ended\b"))
    expect(tv.locator("#tv-ranking")).to_be_hidden()
    expect(tv.locator("#table-qr")).to_be_visible()  # the code to sit, again
    tv_ready(tv, "conquest-italy")
    late.screenshot(path=str(artifacts_dir / "tvs-phone-end-undone.png"))
    tv.screenshot(path=str(artifacts_dir / "tvs-tv-end-undone.png"))
    # the same code as a reload draws; its place is not compared (in whole-suite runs the reloaded TV laid it
    # out 12 px narrower, the same code, every time; alone, the same place: the cause is not known)
    live = tv.locator("#table-qr").evaluate("n => n.outerHTML")
    tv.reload()
    tv_ready(tv, "conquest-italy")  # (its map laid out, as the live TV's)
    expect(tv.locator("#table-qr")).to_be_in_viewport()
    assert tv.locator("#table-qr").evaluate("n => n.outerHTML") == live
    late.click(f"#who-card .who-btn[data-player='{players[1]}']")  # and the phone sits
    late.wait_for_function("s => window.companionMatch.match.seat === s", arg=players[1])
    expect(late.locator("#who-card")).to_be_hidden()
    pages = (seated, stranger, late, tv)
    assert not any(p.errors for p in pages), [p.errors for p in pages]


# -- the connection banner ---------------------------------------------------------------------------------------

# every stream message checked right after the page handled it (the banner must be gone then), and the countdown
# watched while the note says the clock is stopped on this screen (it must stand still)
RECORD = """(offline) => {
  window.__conn = { wrong: [], banners: 0, notes: 0 };
  const Real = window.EventSource;
  window.EventSource = function (url, opts) {
    const es = new Real(url, opts), add = es.addEventListener.bind(es);
    es.addEventListener = function (type, fn, o) {
      add(type, fn, o);
      if (['tick', 'heartbeat', 'snapshot', 'event'].includes(type)) add(type, () => {
        const b = document.getElementById('offline');
        if (b && !b.hidden) window.__conn.wrong.push('the banner stayed after a ' + type);
      }, o);
    };
    return es;
  };
  window.EventSource.prototype = Real.prototype;
  document.addEventListener('DOMContentLoaded', () => {
    const b = document.getElementById('offline'), note = document.getElementById('clock-note'),
          clock = document.getElementById('clock-remaining');
    let still = null;
    new MutationObserver(() => {
      if (!b.hidden) window.__conn.banners++;
      const stopped = !note.hidden && note.textContent === offline;
      if (stopped) window.__conn.notes++;
      if (!stopped) still = null;
      else if (still === null) still = clock.textContent;
      else if (clock.textContent !== still) window.__conn.wrong.push('the countdown ran under the note: ' + still + ' -> ' + clock.textContent);
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['hidden'] });
  });
}"""


@pytest.fixture
def quick_server(tmp_path):
    """A server of its own whose streams beat every second (the pages' watchdog: 3 s)."""
    s = Server(tmp_path / "data", {"COMPANION_SSE_HEARTBEAT": "1"})
    yield s
    if s.proc.poll() is None:
        os.kill(s.proc.pid, signal.SIGCONT)
        s.stop()


def test_the_connection_banner_says_what_is_true(browser, quick_server, artifacts_dir):
    s = quick_server
    ctx = browser.new_context(base_url=s.url, viewport={"width": 390, "height": 844}, locale="en-GB")
    ctx.set_default_timeout(15_000)
    try:
        page = watch(ctx.new_page())
        page.goto(s.join_url)

        def call(method, path, body=None):
            r = page.request.fetch(s.url + path, method=method, data=body,
                                   headers={"Origin": s.url, "Content-Type": "application/json"})
            assert r.ok, (path, r.status, r.text())
            return r.json()

        m = call("POST", "/api/matches", {"game": "richelieu", "players": LONG[:3], "options": {"clock": True}})
        call("POST", f"/api/matches/{m['id']}/events", {"type": "clock.start", "data": {}, "expected_seq": 0})
        page.add_init_script(script=f"({RECORD})({json.dumps(EN['clock.offline'])})")
        page.goto(f"/m/{m['id']}")
        page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
        banner = page.locator("#offline")
        expect(banner).to_be_hidden()
        page.wait_for_timeout(1500)  # the page's first requests answered (one answered later would clear the banner)

        # 1. a request of the phone finds no network while its stream still delivers: the banner shows, and
        #    goes with the next thing the stream delivers (the clock's ticks): the phone is in touch
        ctx.set_offline(True)
        page.evaluate("Companion.api('GET', '/api/matches').catch(() => 0)")
        page.wait_for_function("() => window.__conn.banners > 0")
        expect(banner).to_be_hidden()
        ctx.set_offline(False)

        # 2. the Pi stops answering (its process stopped): the banner, the countdown standing still under
        #    the note; the Pi back: the banner goes with the stream's first message
        os.kill(s.proc.pid, signal.SIGSTOP)
        try:
            expect(banner).to_be_visible()
            expect(page.locator("#clock-note")).to_have_text(EN["clock.offline"])
            page.wait_for_timeout(2500)  # long enough for a countdown to move, were it running
        finally:
            os.kill(s.proc.pid, signal.SIGCONT)
        expect(banner).to_be_hidden()
        expect(page.locator("#clock-note")).to_be_hidden()
        conn = page.evaluate("window.__conn")
        assert conn["banners"] >= 2 and conn["notes"] >= 1, conn  # both happened
        assert conn["wrong"] == [], conn["wrong"]
        page.screenshot(path=str(artifacts_dir / "tvs-connection-back.png"))
        assert not page.errors, page.errors
    finally:
        ctx.close()
