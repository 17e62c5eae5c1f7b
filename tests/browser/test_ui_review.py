"""A review of every page of the phone web app as a player, an organiser and a club would see it: each
page in English and in Italian at phone size (390 x 844), the main ones in dark mode too, the display at
TV size. On every page: no JavaScript error and no console error, no catalogue key shown raw
("phase.setup", "rl.col_role"), no text of the other language, nothing wider than the phone, touch
targets of at least 44 px, text contrast of at least 4.5:1 (3:1 for large text). Screenshots go to
test-artifacts/ui-*.png."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from companion.base.resources import web_dir

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
TV = {"width": 1920, "height": 1080}
PIN = "482193"
PLAYERS = ["Anna", "Bruno", "Carla"]
COLOURS = {"Anna": "#d62728", "Bruno": "#1f77b4", "Carla": "#2ca02c"}
LOCALE = {"en": "en-GB", "it": "it-IT"}
GAMES = ["conquest-italy", "richelieu", "rome-is-burning", "web-of-power"]


def _catalogue(lang):
    cat = json.loads((web_dir() / "static" / "i18n" / f"{lang}.json").read_text("utf-8"))
    return cat


EN, IT = _catalogue("en"), _catalogue("it")
_PREFIXES = sorted({k.split(".")[0] for k in EN} | {"phase", "event", "field", "summary", "breakdown"})
RAW_KEY = re.compile(r"(?<![\w/.:@-])(?:%s)\.[a-z0-9_-]+(?:\.[a-z0-9_-]+)*" % "|".join(map(re.escape, _PREFIXES)))


def _phrases(lang):
    """Texts of one language that the other language says differently: whole phrases of 2+ words."""
    mine, other = (EN, IT) if lang == "en" else (IT, EN)
    out = set()
    for k, v in mine.items():
        if other.get(k) == v or "{" in v:
            continue
        if len(v.split()) >= 2 and not any(v in w for w in other.values()):
            out.add(v.rstrip(".:…"))
    return out


FOREIGN = {"it": _phrases("en"), "en": _phrases("it")}  # for an Italian page: the English phrases

CHECKS = r"""() => {
  const W = document.documentElement.clientWidth, out = {overflow: [], small: [], contrast: []};
  const folded = e => { const d = e.closest('details:not([open])'); return d && !e.closest('summary'); };
  const visible = e => { const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none' && !folded(e); };
  const scroller = e => { for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
    const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll' || o === 'hidden') return p; } return null; };
  const name = e => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}${e.className && typeof e.className === 'string' ? '.' + e.className.trim().split(/\s+/).join('.') : ''}`;
  document.querySelectorAll('body *').forEach(e => {
    if (!visible(e) || getComputedStyle(e).position === 'fixed') return;
    if (e.getBoundingClientRect().right > W + 1 && !scroller(e)) out.overflow.push(name(e));
  });
  // touch targets: controls at least 44 px tall (a tick box counts with its label); links inside text are exempt
  document.querySelectorAll('button, select, input, textarea, summary, a.btn, nav a, .lang-switch a').forEach(e => {
    if (!visible(e) || e.disabled) return;
    let r = e.getBoundingClientRect();
    if (e.type === 'checkbox' || e.type === 'radio') { const l = e.closest('label'); if (l) r = l.getBoundingClientRect(); }
    if (e.type === 'hidden') return;
    if (r.height < 43.5 || r.width < 24) out.small.push(`${name(e)} ${Math.round(r.width)}x${Math.round(r.height)}`);
  });
  const parse = c => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null;
    const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const background = e => { const layers = [];
    for (let p = e; p; p = p.parentElement) { const c = parse(getComputedStyle(p).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
    let rgb = [255, 255, 255]; if (layers.length && layers[layers.length - 1][3] >= 1) rgb = layers.pop().slice(0, 3);
    while (layers.length) { const c = layers.pop(); rgb = rgb.map((v, i) => v * (1 - c[3]) + c[i] * c[3]); }
    return rgb; };
  document.querySelectorAll('body *').forEach(e => {
    if (!Array.from(e.childNodes).some(n => n.nodeType === 3 && n.textContent.trim())) return;
    if (!visible(e) || e.closest(':disabled') || e.closest('svg')) return;
    const s = getComputedStyle(e); if (s.textShadow !== 'none') return;  // a halo on a player's own colour
    let opacity = 1; for (let p = e; p; p = p.parentElement) opacity *= parseFloat(getComputedStyle(p).opacity);
    const fg = parse(s.color), bg = background(e); if (!fg) return;
    const a = fg[3] * opacity, mixed = fg.slice(0, 3).map((v, i) => v * a + bg[i] * (1 - a));
    const l1 = lum(mixed), l2 = lum(bg), ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight, 10) >= 700;
    if (ratio < ((size >= 24 || (bold && size >= 18.66)) ? 3 : 4.5))
      out.contrast.push(`${name(e)} '${e.textContent.trim().slice(0, 20)}' ${ratio.toFixed(2)}`);
  });
  return out;
}"""


@pytest.fixture(scope="module")
def site(browser, server):
    """The organiser's PIN, a club with a season and results, one match of each game with its clock started."""
    ctx = browser.new_context(base_url=server.url, viewport=PHONE, locale="en-GB")
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    errors = _watch(page)
    page.goto("/login")
    setup_text = page.inner_text("main")
    page.fill("#setup-code", server.setup_code)
    page.fill("#new-pin", PIN)
    page.fill("#club-name", "Club Pisa")  # the first PIN names the club
    page.click("#setup-form button[type=submit]")
    page.wait_for_url(server.url + "/join")
    organiser = ctx.storage_state()

    def call(method, path, body=None):
        r = page.request.fetch(server.url + path, method=method, data=body,
                               headers={"Origin": server.url, "Content-Type": "application/json"})
        assert r.ok, (path, r.status, r.text())
        return r.json()

    [club] = call("GET", "/api/seasons")["clubs"]
    season = call("POST", "/api/seasons", {"club": "Club Pisa", "game": "conquest-italy", "year": 2026,
                                           "name": "Campionato 2026"})
    for i, places in enumerate([[1, 2, 3, 4], [2, 1, 2, 4], [3, 1, 2, 4]]):
        call("POST", f"/api/seasons/{season['id']}/results", {"date": f"2026-0{i + 1}-15", "results": [
            {"player": p, "place": pl, "objective": pl == 1 and i == 0, "eliminated": pl == 4}
            for p, pl in zip(PLAYERS + ["Dario"], places)]})
    matches = {}
    for game in GAMES:
        m = call("POST", "/api/matches", {"game": game, "players": PLAYERS, "colours": COLOURS,
                                          "label": "Tavolo 1", "options": {"clock": True}})
        if game != "conquest-italy":  # conquest starts its clock after the deal and the placements
            call("POST", f"/api/matches/{m['id']}/events", {"type": "clock.start", "data": {}, "expected_seq": 0})
        matches[game] = m["id"]
    player_ctx = browser.new_context(base_url=server.url)
    player_ctx.new_page().goto(server.join_url)
    player = player_ctx.storage_state()
    player_ctx.close()
    ctx.close()
    assert not errors, errors
    return {"organiser": organiser, "player": player, "viewer": None, "club": club["id"], "season": season["id"],
            "matches": matches, "setup_text": setup_text}


def _watch(page):
    errors = []
    page.on("console", lambda m: errors.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    return errors


class Tabs:
    """One tab per context, reused from page to page as a person's phone is (a new tab costs Chromium a
    renderer process: about a second each, 50 times in this file). Its error list restarts at each page,
    before the navigation: what the page before leaves behind on its way out counts against the next one."""

    def __init__(self):
        self.tabs = {}

    def open(self, ctx, path):
        if ctx not in self.tabs:
            page = ctx.new_page()
            self.tabs[ctx] = (page, _watch(page))
        page, errors = self.tabs[ctx]
        errors.clear()
        return page, errors, page.goto(path)


def _pages(site):
    s, m = site["season"], site["matches"]
    out = [("home", "/", "viewer"), ("new", "/new", "player"), ("tournament", "/tournament", "organiser"),
           ("join", "/join", "organiser"), ("login", "/login", "viewer"), ("login-organiser", "/login", "organiser"),
           ("seasons", "/seasons", "organiser"), ("season", f"/seasons/{s}", "organiser"),
           ("season-viewer", f"/seasons/{s}", "viewer"), ("club", f"/seasons/clubs/{site['club']}", "organiser"),
           ("history", f"/seasons/{s}/players/Anna", "viewer"), ("not-found", "/m/0000", "viewer")]
    out += [(f"match-{g}", f"/m/{mid}", "player") for g, mid in m.items()]
    return out


def review(page, lang, name, artifacts_dir, errors, expect_errors=()):
    """The checks every page passes; returns the page's visible text."""
    page.wait_for_load_state("load")
    if page.locator("#game-tracker").count() and page.locator("body[data-game]").count():
        page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
        page.wait_for_function("() => window.companionMatch && window.companionMatch.view")
        expect(page.locator("#history li").first).not_to_have_text(EN["common.loading"])
        # the folded forms (intrigue, deal by hand, corrections...) are reviewed open
        page.evaluate("document.querySelectorAll('#game-tracker details').forEach(d => { d.open = true; })")
    expect(page.locator("main")).not_to_contain_text(_catalogue(lang)["common.loading"])
    page.wait_for_timeout(150)  # the last redraw of a live page
    page.screenshot(path=str(artifacts_dir / f"ui-{name}.png"), full_page=True)
    text = page.inner_text("body")
    found = page.evaluate(CHECKS)
    unexpected = [e for e in errors if not any(x in e for x in expect_errors)]
    assert not unexpected, f"{name}: {unexpected}"
    assert not RAW_KEY.findall(text), f"{name}: keys shown raw: {RAW_KEY.findall(text)}"
    foreign = sorted(p for p in FOREIGN[lang] if p in text)
    assert not foreign, f"{name}: text of the other language on a {lang} page: {foreign}"
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth"), \
        f"{name}: the page is wider than the screen: {found['overflow'][:5]}"
    assert not found["overflow"], f"{name}: wider than the screen: {found['overflow'][:5]}"
    assert not found["small"], f"{name}: touch targets under 44 px: {found['small'][:8]}"
    assert not found["contrast"], f"{name}: text contrast too low: {found['contrast'][:8]}"
    return text


@pytest.mark.parametrize("lang", ["en", "it"])
def test_every_page_at_phone_size(browser, server, site, lang, artifacts_dir):
    contexts, tabs = {}, Tabs()
    try:
        for name, path, role in _pages(site):
            if role not in contexts:
                contexts[role] = browser.new_context(base_url=server.url, viewport=PHONE, locale=LOCALE[lang],
                                                     storage_state=site[role])
                contexts[role].set_default_timeout(15_000)
            page, errors, response = tabs.open(contexts[role], path)
            expect_errors = ()
            if name == "not-found":
                assert response.status == 404
                expect_errors = ("status of 404",)  # the browser logs the page's own status
            text = review(page, lang, f"{name}-{lang}", artifacts_dir, errors, expect_errors)
            if name == "not-found":
                assert _catalogue(lang)["error.not_found"] in text
            if name.startswith("match-") and name != "match-conquest-italy":
                # the clock's event in the history and its phase under the clock, in words
                assert _catalogue(lang)["event.clock.start"] in page.inner_text("#history")
                assert _catalogue(lang)["phase.regular"] in page.inner_text("#clock-panel")
    finally:
        for c in contexts.values():
            c.close()


@pytest.mark.parametrize("lang", ["en", "it"])
def test_dark_mode_pages_are_readable(browser, server, site, lang, artifacts_dir):
    ctx = browser.new_context(base_url=server.url, viewport=PHONE, color_scheme="dark",
                              locale=LOCALE[lang], storage_state=site["organiser"])
    ctx.set_default_timeout(15_000)
    tabs = Tabs()
    try:
        for name, path in [("home", "/"), ("season", f"/seasons/{site['season']}"), ("join", "/join"),
                           ("match-richelieu", f"/m/{site['matches']['richelieu']}"),
                           ("match-conquest-italy", f"/m/{site['matches']['conquest-italy']}")]:
            page, errors, _ = tabs.open(ctx, path)
            assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(18, 19, 22)"
            review(page, lang, f"{name}-{lang}-dark", artifacts_dir, errors)
    finally:
        ctx.close()


@pytest.mark.parametrize("lang,scheme", [("en", "light"), ("it", "dark")])
def test_display_at_tv_size(browser, server, site, lang, scheme, artifacts_dir):
    ctx = browser.new_context(base_url=server.url, viewport=TV, color_scheme=scheme,
                              locale=LOCALE[lang])
    tabs = Tabs()
    try:
        for game, mid in site["matches"].items():
            page, errors, _ = tabs.open(ctx, f"/m/{mid}/display")
            expect(page.locator("#clock-remaining")).not_to_have_text("--:--")
            expect(page.locator("#tv-game table, #tv-side-extra table").first).to_be_visible()  # the game's own tables
            text = review(page, lang, f"display-{game}-{lang}-{scheme}", artifacts_dir, errors)
            phase = "phase.setup" if game == "conquest-italy" else "phase.regular"
            assert _catalogue(lang)[phase] in text
            # the clock is large (in the column beside the game's own TV panel) without spilling over the screen
            box = page.locator("#clock-remaining").bounding_box()
            assert box["width"] > TV["width"] / 6 and box["height"] > TV["height"] / 12  # h:mm:ss: 2:00:00
            assert box["x"] >= 0 and box["x"] + box["width"] <= TV["width"]
    finally:
        ctx.close()


def test_first_run_setup_page_was_in_words(site):
    """The /login page before any PIN (seen by the fixture) asks for the setup code in words, not keys."""
    assert EN["login.setup_title"] in site["setup_text"]
    assert not RAW_KEY.findall(site["setup_text"])


@pytest.mark.parametrize("lang", ["en", "it"])
def test_season_forms_name_the_wrong_box_in_the_page_language(browser, server, site, lang):
    cat = _catalogue(lang)
    ctx = browser.new_context(base_url=server.url, viewport=PHONE, locale=LOCALE[lang],
                              storage_state=site["organiser"])
    ctx.set_default_timeout(15_000)
    try:
        page = ctx.new_page()
        page.goto(f"/seasons/{site['season']}")
        form = page.locator("#result-form")
        form.locator("[name=player]").nth(0).fill("Anna")
        form.locator("[name=player]").nth(1).fill("Bruno")
        form.locator("[type=submit]").click()
        expect(form.locator(".error-text")).to_have_text(cat["season.need_date"])  # checked before sending
        form.locator("[name=date]").fill("2026-05-10")
        form.locator("[name=place]").nth(1).fill("0")
        form.locator("[type=submit]").click()  # the server refuses it and names $.results[1].place
        expect(form.locator(".error-text")).to_contain_text(
            cat["season.row"].format(n=2) + " · " + cat["season.place"] + ":")
        settings = page.locator("#settings-form")
        settings.locator("[name=threshold]").fill("150")
        settings.locator("[type=submit]").click()
        expect(settings.locator(".error-text")).to_have_text(cat["season.bad_threshold"])
        page.goto("/seasons")
        page.locator("#new-season [type=submit]").click()
        expect(page.locator("#new-season .error-text")).to_have_text(cat["season.need_year"])
    finally:
        ctx.close()


def test_connection_lost_banner_and_recovery(browser, server, site):
    """When the Pi stops answering, the page says so in a red banner and clears it once it is back."""
    ctx = browser.new_context(base_url=server.url, viewport=PHONE, locale="it-IT", storage_state=site["player"])
    ctx.set_default_timeout(15_000)
    try:
        page = ctx.new_page()
        page.goto(f"/m/{site['matches']['richelieu']}")
        page.wait_for_selector("#game-tracker[data-mounted]", state="attached")
        expect(page.locator("#offline")).to_be_hidden()
        # the banner as it shows, in words (it goes again with the next thing the stream delivers: the page
        # is still in touch through it, tests/browser/test_tv_screens.py)
        page.evaluate("""() => { window.__shown = []; const b = document.getElementById('offline');
            new MutationObserver(() => { if (!b.hidden) window.__shown.push(b.textContent); })
              .observe(b, {attributes: true, attributeFilter: ['hidden']}); }""")
        ctx.route("**/api/**", lambda route: route.abort("connectionrefused"))
        page.evaluate("window.companionMatch.load().catch(() => null)")  # any request to the Pi now fails
        page.wait_for_function("() => window.__shown.length > 0")
        assert page.evaluate("window.__shown")[0] == IT["conn.lost"]
        ctx.unroute("**/api/**")
        page.evaluate("window.companionMatch.load()")
        expect(page.locator("#offline")).to_be_hidden()
    finally:
        ctx.close()
