"""A 390 px phone (English and Italian): the conquest scores table wider than the screen shows that it scrolls
sideways (a shadow at its right edge, drawn while columns are hidden there, gone at the last one).
Screenshots: test-artifacts/cues-*.png."""

from __future__ import annotations

import pytest

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


@pytest.mark.parametrize("locale", ["en-GB", "it-IT"])
def test_the_conquest_scores_say_they_scroll(new_context, server, locale, artifacts_dir):
    org = organiser_api(server)
    mid = org.ok("POST", "/api/matches", {"game": "conquest-italy", "players": PLAYERS})["id"]
    page = open_match(joined_page(new_context, server, viewport=PHONE, locale=locale), mid)
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
    assert not page.errors, page.errors
