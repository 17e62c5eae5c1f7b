"""A 390 px phone (English and Italian), a conquest match of four long names: the scores table wider than the
screen shows that it scrolls sideways (a shadow at its right edge, drawn while columns are hidden there, gone at
the last one); the set-up's last line names the button that starts the clock, there above it; the combat form
cuts nothing (each list's choice, each field's hint, the attack's button: measured in the page at 390 and 360
px, the Pi's dice and the table's); a phone never tapped offers once to tap to hear the clock's alerts. Screenshots: test-artifacts/cues-*.png."""

from __future__ import annotations

import re

import pytest

from playwright.sync_api import expect

from tests.browser.test_tv_screens import CAT
from tests.browser.trackers_kit import joined_page, open_match, organiser_api

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
PLAYERS = ["Alessandra Castellani", "Maximilian Hohenberg-Stein", "Giovanni Battista Rossi", "Caterina Sforza Riario"]

def _grey(png: bytes):
    """A PNG screenshot (8-bit RGB or RGBA, not interlaced) as rows of grey levels: (width, height, rows)."""
    import struct
    import zlib

    pos, data, w = 8, b"", 0
    while pos < len(png):
        n, kind = struct.unpack(">I4s", png[pos:pos + 8])
        chunk = png[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            data += chunk
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(data), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([sum(line[x * bpp:x * bpp + 3]) / 3 for x in range(w)])
        prev = line
    return w, h, rows


# whether the scores' box scrolls sideways, and what it draws behind its table
EDGE = """async (sel) => {
  const box = document.querySelector(sel);
  return { wide: box.scrollWidth > box.clientWidth + 1, bg: getComputedStyle(box).backgroundImage };
}"""


# what a phone's screen cuts in the boxes ``sel`` names: a box out of the screen's sides, a box that clips its
# text at the right, a list's choice or a field's text (its value, else its hint) wider than the room inside it
CUT = """(sel) => {
  const W = innerWidth, out = [], ctx = document.createElement('canvas').getContext('2d');
  const shown = (e) => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden';
  const name = (e) => e.id ? '#' + e.id : e.tagName.toLowerCase();
  for (const root of document.querySelectorAll(sel)) for (const e of [root, ...root.querySelectorAll('*')]) {
    if (!shown(e)) continue;
    const r = e.getBoundingClientRect(), s = getComputedStyle(e);
    if (r.left < -1 || r.right > W + 1) { out.push(`outside the screen: ${name(e)} ${Math.round(r.left)}-${Math.round(r.right)}`); continue; }
    const field = e.tagName === 'SELECT' || (e.tagName === 'INPUT' && !['radio', 'checkbox'].includes(e.type));
    if (field) {
      const text = e.tagName === 'SELECT' ? (e.selectedOptions[0] ? e.selectedOptions[0].textContent : '') : (e.value || e.placeholder);
      ctx.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
      // (a list's arrow and a number's spin buttons take about 20 px of the room)
      const room = e.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight) - (e.tagName === 'SELECT' || e.type === 'number' ? 20 : 0);
      const need = ctx.measureText(text).width;
      if (need > room + 0.5) out.push(`cut: ${name(e)} "${text}" ${Math.round(need)} px in ${Math.round(room)}`);
    } else if ((s.overflowX !== 'visible' || s.textOverflow === 'ellipsis') && e.scrollWidth > e.clientWidth + 1)
      out.push(`cut at the right: ${name(e)} ${e.scrollWidth} > ${e.clientWidth} "${e.textContent.slice(0, 40)}"`);
  }
  return out;
}"""


# the page's controls (a button, a field, a list, a link) shown under or over the box ``sel`` names
COVERS = """(sel) => {
  const o = document.querySelector(sel).getBoundingClientRect(), out = [];
  for (const e of document.querySelectorAll('button, input, select, textarea, a[href], [role=button]')) {
    if (e.closest(sel) || !e.getClientRects().length || getComputedStyle(e).visibility === 'hidden') continue;
    const r = e.getBoundingClientRect();
    if (r.width && r.height && r.left < o.right && o.left < r.right && r.top < o.bottom && o.top < r.bottom)
      out.push(`${e.id ? '#' + e.id : e.tagName.toLowerCase()} "${e.textContent.trim().slice(0, 30)}"`);
  }
  return out;
}"""


def _set_up(org, mid):
    """The deal and the set-up's placements through the API, 5 at a time on each player's first city."""
    org.ok("POST", f"/api/matches/{mid}/conquest/deal", {"expected_seq": 0, "data": {}})
    while True:
        v = org.ok("GET", f"/api/matches/{mid}")["view"]
        if v["summary"]["phase"] != "place":
            return
        p = v["summary"]["next_placer"]
        city = sorted(c for c, o in v["state"]["owner"].items() if o == p)[0]
        org.event(mid, "setup.place", {"player": p, "placements": {city: v["summary"]["placement_due"]}})


@pytest.mark.parametrize("locale", ["en-GB", "it-IT"])
def test_the_conquest_on_a_phone_cuts_nothing_and_says_what_scrolls(new_context, server, locale, artifacts_dir):
    org = organiser_api(server)
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": PLAYERS})["id"]
    _set_up(org, mid)
    page = open_match(joined_page(new_context, server, viewport=PHONE, locale=locale, has_touch=True), mid)
    # never tapped, the phone could play no alert of the clock: it offers to tap, and the first tap unlocks the sound
    offer = page.locator("#sound-offer")
    expect(offer).to_have_text(CAT[locale[:2]]["sound.offer"])
    assert page.evaluate("CompanionSound.unlocked()") is False
    page.screenshot(path=str(artifacts_dir / f"cues-sound-offer-{locale}.png"))
    # the set-up done: its line names the button there is to tap, and that button is above it, in the clock's box
    start = page.locator("#clock-panel #ci-clock-start")
    expect(start).to_be_visible()
    label = start.inner_text().strip()
    expect(page.locator("#ci-status")).to_contain_text(f"“{label}”")
    assert start.bounding_box()["y"] + start.bounding_box()["height"] <= page.locator("#ci-status").bounding_box()["y"]
    # the offer covers none of the page's controls (nor is it under one) at 360 and 390 px
    for width in (360, 390):
        page.set_viewport_size({"width": width, "height": PHONE["height"]})
        box = offer.bounding_box()
        assert box and box["width"] > 0 and box["height"] > 0, (width, box)
        assert page.evaluate(COVERS, "#sound-offer") == [], width
    # so the organiser's one tap on the first screen, where a finger taps (not through Playwright's checks), starts
    # the clock and unlocks the sound: no tap is spent on the offer
    sb = start.bounding_box()
    assert sb["y"] + sb["height"] <= PHONE["height"], sb
    line = offer.bounding_box()
    # (a finger's tap: its pointerdown alone may not start audio, its pointerup and touchend may)
    page.touchscreen.tap(sb["x"] + sb["width"] / 2, sb["y"] + sb["height"] / 2)
    expect(page.locator("#clock-panel #ci-clock-pause")).to_be_visible()
    assert org.ok("GET", f"/api/matches/{mid}")["view"]["clock"]["running"] is True
    page.wait_for_function("CompanionSound.unlocked()")  # (once the context ran: then it rests until a tone)
    assert page.evaluate("[CompanionSound.unlocked(), CompanionSound.log.map(x => x.kind)]") == [True, []]
    expect(offer).to_have_text(CAT[locale[:2]]["sound.on"])
    assert offer.bounding_box()["height"] == line["height"]  # (the words fit its line: nothing under it moves)
    offer.click()  # a tap on the line itself: a short tone says the sound works
    assert page.evaluate("CompanionSound.log.map(x => x.kind)") == ["ready"]
    # the first turn's reinforcements placed: its combats
    v = org.ok("GET", f"/api/matches/{mid}")["view"]
    cur = v["current_player"]
    due = next(r for r in v["summary"]["players"] if r["player"] == cur)["reinforcements"]
    city = sorted(c for c, o in v["state"]["owner"].items() if o == cur)[0]
    org.event(mid, "reinforce", {"player": cur, "placements": {city: due}})
    page.click(f"#who-card .who-btn[data-player='{cur}']")
    page.wait_for_function("s => window.companionMatch.match && window.companionMatch.match.seat === s", arg=cur)
    expect(page.locator("#sound-offer")).to_have_text(CAT[locale[:2]]["sound.on"])  # (not offered again as events come)
    sel = "#scores .trk-scroll"
    page.wait_for_selector(sel)
    got = page.evaluate(EDGE, sel)
    assert got["wide"], got  # (the columns do not fit 390 px: it scrolls)
    box = page.locator(sel).bounding_box()
    page.locator(sel).scroll_into_view_if_needed()
    shot = page.locator(sel).screenshot(path=str(artifacts_dir / f"cues-scores-{locale}.png"))
    # the right edge darker than the middle of the same rows while it can scroll; not at its end
    def edge_vs_middle(png):
        w, h, px = _grey(png)
        col = lambda x: sum(px[y][x] for y in range(h)) / h  # noqa: E731
        return col(w - 3), max(col(x) for x in range(w // 2, w - 40))
    edge, middle = edge_vs_middle(shot)
    assert edge < middle - 8, (edge, middle, box)
    page.locator(sel).evaluate("b => b.scrollLeft = b.scrollWidth")
    page.wait_for_timeout(100)
    edge2, _ = edge_vs_middle(page.locator(sel).screenshot())
    assert edge2 > edge + 8, (edge, edge2)
    # the combat form: the attack with the longest names chosen (its cities, the defender's name)
    picks = page.locator("#ci-targets button")
    expect(picks.first).to_be_visible()
    longest = max(range(picks.count()), key=lambda i: len(picks.nth(i).inner_text()))
    picks.nth(longest).click()
    expect(page.locator("#ci-attack")).to_be_enabled()
    expect(page.locator("#ci-odds")).to_have_attribute("data-p", re.compile(r"\d"))  # (the figures came)
    owner = v["state"]["owner"][page.input_value("#ci-to")]
    expect(page.locator("#ci-to-owner")).to_contain_text(owner)  # whose city, in words that wrap
    form = "#ci-combat, #ci-thumb"
    page.locator("#ci-combat").screenshot(path=str(artifacts_dir / f"cues-combat-{locale}.png"))
    for width in (390, 360):
        page.set_viewport_size({"width": width, "height": 800})
        page.check("input[name=ci-dice-mode][value=pi]")
        assert page.evaluate(CUT, form) == [], (width, "the Pi's dice")
        page.check("input[name=ci-dice-mode][value=table]")
        expect(page.locator("#ci-table-dice")).to_be_visible()
        assert page.evaluate(CUT, form) == [], (width, "the table's dice")
    assert not page.errors, page.errors


@pytest.mark.parametrize("width", [360, 390])
def test_an_attack_tapped_its_odds_come_and_nothing_under_them_moves(new_context, server, width):
    """The odds of an attack come from the box a moment after the tap (a round trip; on a busy Pi, seconds):
    the line is there at once, its figures dashed, at the height the figures take, so the dice and the Attack
    button under it stay where the finger is. The box's answer is held back here until the page is measured."""
    org = organiser_api(server)
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": PLAYERS})["id"]
    _set_up(org, mid)
    org.event(mid, "clock.start", {})
    v = org.ok("GET", f"/api/matches/{mid}")["view"]
    cur = v["current_player"]
    due = next(r for r in v["summary"]["players"] if r["player"] == cur)["reinforcements"]
    city = sorted(c for c, o in v["state"]["owner"].items() if o == cur)[0]
    org.event(mid, "reinforce", {"player": cur, "placements": {city: due}})
    page = open_match(joined_page(new_context, server, viewport={"width": width, "height": 800}, locale="en-GB"), mid)
    page.click(f"#who-card .who-btn[data-player='{cur}']")
    page.check("input[name=ci-dice-mode][value=table]")
    held = []
    page.route("**/conquest/odds*", lambda route: held.append(route))
    pick = page.locator("#ci-targets button").first
    expect(pick).to_be_visible()
    pick.click()
    expect(page.locator("#ci-attack")).to_be_enabled()
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the page asked the box for no odds"
    where = "() => ['#ci-adice input', '#ci-attack'].map(s => Math.round(document.querySelector(s).getBoundingClientRect().top))"
    before = page.evaluate(where)
    for route in held:
        route.continue_()
    expect(page.locator("#ci-odds")).to_have_attribute("data-p", re.compile(r"\d"))
    assert page.evaluate(where) == before, "the dice or the Attack button moved when the odds came"
    assert not page.errors, page.errors
