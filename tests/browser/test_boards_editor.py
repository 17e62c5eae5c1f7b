"""The board editor (/boards) in headless Chromium: an organiser transcribes a small synthetic Web of Power
board by taps and drags on a test photo, the live check lists and highlights problems, the board is saved,
exported, imported again as another club, a match starts on it from the new-match page, monasteries are
placed by tapping the drawn board, and the final scoring equals `companion score web-of-power` on the same
positions; the breakdown shows each chain on the board. At a 360 px phone the editor fits its screen."""

import json
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from tests.browser.test_trackers_conquest import tokens  # noqa: F401  (module fixture)
from tests.browser.trackers_kit import Api, seq, wait_seq
from tests.web import boardkit
from tests.web.boardkit import COUNTRIES, PAIRS, png, site_xy

pytestmark = pytest.mark.browser

PIN = "482193"
# Franken's two sites are the ones the rule book names (the editor lists them to be placed on the photo)
BOOK_NAMED = {"Franken1": "Chorin", "Franken2": "Obra"}


def site_id(ci, k):
    sid = boardkit.site_id(ci, k)
    return BOOK_NAMED.get(sid, sid)


ROADS = [[BOOK_NAMED.get(a, a), BOOK_NAMED.get(b, b)] for a, b in boardkit.ROADS]
PLAYERS = ["Anna", "Bruno", "Carla"]
# monasteries by site (Anna: a chain of 6 over England-Franken-Bayern; Bruno: 5 over Italien-Aragon-Frankreich)
MONASTERIES = {"Anna": [site_id(c, k) for c in (0, 1, 2) for k in (0, 1)],
               "Bruno": [site_id(c, k) for c in (3, 4) for k in (0, 1)] + [site_id(5, 0)],
               "Carla": [site_id(6, 0), site_id(8, 1)]}
COUNCILLORS = [("Anna", "England"), ("Anna", "England"), ("Anna", "Franken"), ("Bruno", "Franken"),
               ("Bruno", "Italien"), ("Bruno", "Italien"), ("Bruno", "Burgund"), ("Carla", "Burgund"),
               ("Carla", "Bayern")]


def place_anyway_if_asked(page, n):
    """A placement that breaks a rule is asked before it is recorded (the check before a placement): the
    positions here are the table's, so it is placed anyway; one that breaks none is recorded at once."""
    page.wait_for_function("n => window.companionMatch.seq > n || !document.getElementById('wop-ask').hidden", arg=n)
    if page.locator("#wop-ask").is_visible():
        page.click("#wop-ask-yes")
        expect(page.locator("#wop-ask")).to_be_hidden()


def organiser_page(new_context, server, **kw):
    page = new_context(**kw).new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto("/login")
    if page.locator("#login-form").count() == 0:  # the first sign-in on this box: the PIN is chosen
        page.fill("#setup-code", server.setup_code)
        page.fill("#new-pin", PIN)
        page.click("#setup-form button[type=submit]")
    else:
        page.fill("#pin", PIN)
        page.click("#login-form button[type=submit]")
    page.wait_for_url(lambda url: not url.endswith("/login"))
    expect(page.locator("#role-badge.role-organiser")).to_be_visible()
    return page


def screen(page, x, y):
    """Where the photo's pixel (x, y) is on the screen (the photo scrolled into view)."""
    return page.evaluate("""([x, y]) => { const svg = document.getElementById('bd-svg');
        svg.scrollIntoView({block: 'nearest'});
        const p = svg.createSVGPoint(); p.x = x; p.y = y; const q = p.matrixTransform(svg.getScreenCTM());
        return [q.x, q.y]; }""", [x, y])


def tap(page, x, y):
    sx, sy = screen(page, x, y)
    page.mouse.click(sx, sy)


def drag(page, a, b):
    ax, ay = screen(page, *a)
    bx, by = screen(page, *b)
    page.mouse.move(ax, ay)
    page.mouse.down()
    page.mouse.move((ax + bx) / 2, (ay + by) / 2, steps=3)
    page.mouse.move(bx, by, steps=3)
    page.mouse.up()


def xy(sid):
    sid = {v: k for k, v in BOOK_NAMED.items()}.get(sid, sid)
    ci = next(i for i, c in enumerate(COUNTRIES) if sid.startswith(c) and sid[len(c):].isdigit())
    return site_xy(ci, int(sid[len(COUNTRIES[ci]):]) - 1)


def state(page):
    return page.evaluate("JSON.parse(JSON.stringify(window.CompanionBoards.state.doc))")


def test_transcribe_save_export_import_and_play_on_it(new_context, server, tokens,  # noqa: F811
                                                     artifacts_dir, tmp_path):
    org = organiser_page(new_context, server, viewport={"width": 1000, "height": 1400})
    dialogs = []
    org.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    org.goto("/boards")
    expect(org.locator("#nav-boards")).to_be_visible()
    # the new board's name is asked on the page, ready with a name to keep or change
    org.click("#bd-new")
    expect(org.locator("#bd-new-name")).to_be_focused()
    expect(org.locator("#bd-new-name")).to_have_value("Our board")
    org.click("#bd-new-create")
    expect(org.locator("#bd-editor")).to_be_visible()
    expect(org.locator("#bd-new-form")).to_be_hidden()
    assert dialogs == []  # no browser prompt
    expect(org.locator("#bd-status")).to_have_attribute("data-status", "template")
    # the rule book's facts are there and shown as such
    expect(org.locator("#bd-alliances li[data-number='14'] .bd-book-badge")).to_have_text("from the rule book")
    expect(org.locator("#bd-book-list")).to_contain_text("Frankreich has 8 sites")

    # the photo: a PNG made here, shrunk and sent as JPEG by the page
    org.set_input_files("#bd-photo", files=[{"name": "board.png", "mimeType": "image/png", "buffer": png(600, 400)}])
    expect(org.locator("#bd-svg image")).to_have_count(1)
    expect(org.locator("#bd-version")).to_contain_text("Version 2")
    assert org.evaluate("window.CompanionBoards.state.photo.width") == 600

    # sites: pick the country, tap where its monasteries are
    expect(org.locator("#bd-unplaced-list [data-place]")).to_have_count(2)
    for ci, country in enumerate(COUNTRIES):
        org.click(f"#bd-countries [data-country='{country}']")
        for k in range(2):
            if country == "Franken":
                org.click(f"#bd-unplaced-list [data-place='{site_id(ci, k)}']")
            tap(org, *site_xy(ci, k))
    expect(org.locator("#bd-unplaced")).to_be_hidden()
    expect(org.locator("#bd-svg circle.bd-site")).to_have_count(18)
    # two sites close together ("Frankreich1" and a new one 30 px away): no name covers another one
    org.click("#bd-countries [data-country='Frankreich']")
    fx, fy = xy("Frankreich1")
    tap(org, fx + 30, fy)
    expect(org.locator("#bd-svg circle.bd-site")).to_have_count(19)
    overlaps = org.evaluate("""() => { const b = Array.from(document.querySelectorAll('#bd-svg text.bd-label')).map(t => t.getBBox());
        const out = []; for (let i = 0; i < b.length; i++) for (let j = i + 1; j < b.length; j++) {
          const p = b[i], q = b[j]; if (p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height && q.y < p.y + p.height) out.push([i, j]); }
        return out; }""")
    assert overlaps == []
    org.keyboard.press("Delete")
    expect(org.locator("#bd-svg circle.bd-site")).to_have_count(18)
    # a site in the wrong place: Delete removes it, Ctrl+Z brings it back, Ctrl+Y removes it again
    org.click("#bd-countries [data-country='England']")
    tap(org, 300, 370)
    expect(org.locator("#bd-svg circle.bd-site")).to_have_count(19)
    org.keyboard.press("Delete")
    expect(org.locator("#bd-svg circle.bd-site")).to_have_count(18)
    org.keyboard.press("Control+z")
    expect(org.locator("#bd-svg circle.bd-site")).to_have_count(19)
    org.keyboard.press("Control+y")
    expect(org.locator("#bd-svg circle.bd-site")).to_have_count(18)

    # roads by dragging from site to site; a sea route apart from them
    org.click(".bd-tools [data-mode='road']")
    for a, b in ROADS:
        drag(org, xy(a), xy(b))
    expect(org.locator("#bd-svg line.bd-road")).to_have_count(len(ROADS))
    drag(org, xy("England1"), xy("Italien1"))  # a road drawn by mistake: a long press deletes it
    expect(org.locator("#bd-svg line.bd-road")).to_have_count(len(ROADS) + 1)
    extra = org.locator("#bd-svg line.bd-road[data-a='England1'][data-b='Italien1']")
    box = extra.bounding_box()
    ex, ey = screen(org, *[(p + q) / 2 for p, q in zip(xy("England1"), xy("Italien1"))])
    assert box and box["x"] <= ex <= box["x"] + box["width"]
    org.mouse.move(ex, ey)
    org.mouse.down()
    expect(org.locator("#bd-svg line.bd-road")).to_have_count(len(ROADS))  # the press is held until it goes
    org.mouse.up()
    org.click(".bd-tools [data-mode='sea']")
    drag(org, xy("Italien2"), xy("Bayern2"))
    expect(org.locator("#bd-svg line.bd-sea")).to_have_count(1)

    # the live check: alliances 1-13 unknown are listed
    expect(org.locator("#bd-warnings")).to_contain_text("Alliances 1, 2, 3, 4, 5")
    # alliances: two coats of arms, then the number
    for n, (a, b) in enumerate(PAIRS, start=1):
        org.click(f"#bd-arms [data-arm='{a}']")
        org.click(f"#bd-arms [data-arm='{b}']")
        org.select_option("#bd-alliance-number", str(n))
        org.click("#bd-alliance-set")
    expect(org.locator("#bd-alliances li[data-number='13'] .bd-pair")).to_have_text("Lothringen – Burgund")
    # the checker's verdict: complete, with the rule book's site counts contradicted as warnings only
    expect(org.locator("#bd-status")).to_have_attribute("data-status", "complete")
    expect(org.locator("#bd-errors li")).to_have_count(0)
    expect(org.locator("#bd-warnings")).to_contain_text("The rule book says Frankreich has 8 sites; this board has 2.")
    org.screenshot(path=str(artifacts_dir / "boards-editor-complete.png"), full_page=True)

    org.click("#bd-save")
    expect(org.locator("#bd-version")).to_contain_text("Version 3 (latest 3)")
    org.click("#bd-make-default")
    expect(org.locator("#bd-default-note")).to_contain_text("new matches")
    board_id = org.evaluate("window.CompanionBoards.state.board.id")

    # errors are listed and highlighted on the photo (a site twice, a road to a site that is not there)
    org.evaluate("""() => { const B = window.CompanionBoards, d = B.state.doc;
        d.roads.push(['England1', 'Atlantis']); d.countries[0].sites.push({id: 'England1', x: 20, y: 20});
        B.render(); B.check(); }""")
    expect(org.locator("#bd-errors li")).to_have_count(2)
    expect(org.locator("#bd-svg circle.bd-problem")).to_have_count(1)
    expect(org.locator("#bd-status")).to_have_attribute("data-status", "partial")
    org.screenshot(path=str(artifacts_dir / "boards-editor-errors.png"), full_page=True)
    org.evaluate("window.CompanionBoards.open(window.CompanionBoards.state.board.id)")  # the saved version again
    expect(org.locator("#bd-errors li")).to_have_count(0)
    expect(org.locator("#bd-status")).to_have_attribute("data-status", "complete")


    # export (with the photo), then import it as another club
    exported = org.request.get(f"/api/boards/{board_id}/export?photo=1").json()
    assert exported["transcription"]["status"] == "complete" and exported["photo"]["width"] == 600
    ids = {(s["id"], abs(s["x"] - xy(s["id"])[0]) <= 2, abs(s["y"] - xy(s["id"])[1]) <= 2)
           for c in exported["countries"] for s in c["sites"]}
    assert ids == {(site_id(ci, k), True, True) for ci in range(9) for k in range(2)}
    assert {frozenset(r) for r in exported["roads"]} == {frozenset(r) for r in ROADS}
    assert exported["sea_routes"] == [["Italien2", "Bayern2"]]
    assert {a["number"]: tuple(a["countries"]) for a in exported["alliances"]} == \
        {**{n: p for n, p in enumerate(PAIRS, start=1)}, 14: ("Italien", "Burgund"), 15: ("Italien", "Bayern")}
    api = Api(server, tokens["organiser"])
    club = api.ok("POST", "/api/clubs", {"name": "Circolo di Asti"})
    org.reload()
    org.select_option("#bd-import-club", club["id"])
    path = tmp_path / "board.json"
    path.write_text(json.dumps(exported))
    org.set_input_files("#bd-import", str(path))
    expect(org.locator(".toast").last).to_contain_text("Imported: Our board")
    imported = next(b for b in api.ok("GET", "/api/boards")["boards"] if b["club_id"] == club["id"])
    assert imported["status"] == "complete" and imported["photo"]
    assert org.errors == []

    # a match on the imported board, from the new-match page (a player's phone)
    phone = new_context(viewport={"width": 390, "height": 844}).new_page()
    phone.errors = []
    phone.on("pageerror", lambda exc: phone.errors.append(str(exc)))
    phone.goto(server.join_url)
    phone.goto("/new")
    phone.select_option("#game", "web-of-power")
    expect(phone.locator("#board-field")).to_be_visible()
    expect(phone.locator("#board")).to_have_value(board_id)  # the club's default, offered first
    phone.select_option("#board", imported["id"])
    for i, name in enumerate(PLAYERS):
        phone.locator(".player-name").nth(i).fill(name)
    phone.click("#create")
    phone.wait_for_url("**/m/*")
    phone.wait_for_selector("#game-tracker[data-mounted]", state="attached")
    mid = phone.url.rsplit("/", 1)[1]
    match = api.ok("GET", f"/api/matches/{mid}")
    assert match["options"]["board_ref"] == {"id": imported["id"], "version": 1}
    expect(phone.locator("#wop-photo")).to_be_visible()
    expect(phone.locator("#wop-photo-svg circle[data-site]")).to_have_count(18)
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390

    # monasteries by tapping the drawn board (a turn each), councillors with the form (Anna's first) and by
    # a script (the others)
    n = seq(phone)
    phone.click("#wop-piece-councillor")
    phone.select_option("#wop-country", "England")
    phone.click("#wop-place")
    # a councillor where no monastery stood when the turn began breaks a rule: the page asks before it records
    # (the check before a placement); the table places it anyway, as the scripted ones below are recorded
    expect(phone.locator("#wop-ask")).to_be_visible()
    expect(phone.locator("#wop-ask-list li").first).to_contain_text("England had no monastery")
    phone.click("#wop-ask-yes")
    expect(phone.locator("#wop-ask")).to_be_hidden()
    phone.click("#wop-piece-monastery")
    wait_seq(phone, n + 1)
    phone.click("#wop-turn-end")
    wait_seq(phone, n + 2)
    player_api = Api(server, tokens["player"])
    for p, country in COUNCILLORS[1:]:
        player_api.event(mid, "place", {"player": p, "piece": "councillor", "country": country})
        player_api.event(mid, "turn.end", {"player": p})
    wait_seq(phone, n + 2 + 2 * (len(COUNCILLORS) - 1))
    pieces = {p: [("m", s) for s in MONASTERIES[p]] for p in PLAYERS}
    while any(pieces.values()):
        for p in PLAYERS:
            if not pieces[p]:
                continue
            kind, where = pieces[p].pop(0)
            n = seq(phone)
            phone.select_option("#wop-player", p)
            if kind == "m":
                phone.locator(f"#wop-photo-svg circle[data-site='{where}']").click()
            else:
                phone.click("#wop-piece-councillor")
                phone.select_option("#wop-country", where)
                phone.click("#wop-place")
                phone.click("#wop-piece-monastery")
            place_anyway_if_asked(phone, n)
            wait_seq(phone, n + 1)
            phone.click("#wop-turn-end")
            wait_seq(phone, n + 2)
    # the chains each player has now are drawn on the photo in their colour
    expect(phone.locator("#wop-photo-svg polyline.wop-chain-live[data-player='Anna']")).to_have_count(1)
    expect(phone.locator("#wop-photo-svg polyline.wop-chain-live[data-player='Bruno']")).to_have_count(1)
    held = phone.evaluate("window.companionMatch.view.state.sites")
    assert held == {s: p for p, ss in MONASTERIES.items() for s in ss}
    phone.locator("#wop-photo").screenshot(path=str(artifacts_dir / "boards-match-photo-390.png"))
    for _ in range(2):
        n = seq(phone)
        phone.once("dialog", lambda d: d.accept())  # a scoring asks first
        phone.click("#wop-deck-out")
        wait_seq(phone, n + 1)
    expect(phone.locator("#wop-status")).to_contain_text("Game over")
    final = phone.evaluate("window.companionMatch.view.summary.scores.final")
    assert final["complete"] is True

    # the same positions through `companion score web-of-power` on the exported board
    councillors = {}
    for p, country in COUNCILLORS:
        councillors.setdefault(country, {}).setdefault(p, 0)
        councillors[country][p] += 1
    doc = {"players": PLAYERS, "scoring": "final", "map": {k: v for k, v in exported.items() if k != "photo"},
           "monasteries": MONASTERIES, "councillors": councillors}
    (tmp_path / "score.json").write_text(json.dumps(doc))
    out = subprocess.run([sys.executable, "-m", "companion", "score", "web-of-power", str(tmp_path / "score.json")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    want = json.loads(out.stdout)
    assert final["players"] == want["players"]
    kinds = {r["player"]: sorted(e["kind"] for e in r["breakdown"]) for r in final["players"]}
    assert "chain" in kinds["Anna"] and "chain" in kinds["Bruno"] and "alliance" in kinds["Anna"]

    # the breakdown shows each chain on the board
    phone.locator(".wop-scoring[data-scoring=final] details[data-player='Anna'] summary").click()
    chain = phone.locator(".wop-scoring[data-scoring=final] details[data-player='Anna'] li[data-kind=chain]")
    expect(chain).to_have_count(1)
    anna_chain = next(e for e in final["players"][0]["breakdown"] if e["kind"] == "chain")["sites"]
    chain.locator(".wop-chain-btn").click()
    expect(phone.locator("#wop-photo-svg polyline.wop-chain-hl")).to_have_attribute("data-chain", ",".join(anna_chain))
    phone.locator("#wop-photo").screenshot(path=str(artifacts_dir / "boards-match-chain-390.png"))
    assert phone.errors == []


def test_the_editor_fits_a_phone_and_speaks_italian(new_context, server, artifacts_dir):
    page = organiser_page(new_context, server, viewport={"width": 360, "height": 780}, locale="it-IT", has_touch=True)
    page.goto("/boards")
    page.click("#bd-new")
    expect(page.locator("#bd-new-name")).to_have_value("La nostra mappa")
    page.fill("#bd-new-name", "Mappa di prova")
    page.press("#bd-new-name", "Enter")
    expect(page.locator("#bd-name")).to_have_value("Mappa di prova")
    expect(page.locator("h1")).to_have_text("Mappe di Web of Power")
    expect(page.locator(".bd-tools [data-mode='sea']")).to_contain_text("Rotta marina")
    expect(page.locator("#bd-status")).to_have_text("Modello: solo i dati del regolamento")
    expect(page.locator("#bd-warnings")).to_contain_text(
        "Alleanze 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13: le loro nazioni non sono ancora indicate.")
    before = page.get_attribute("#bd-svg", "viewBox")
    page.click("#bd-zoom-in")
    assert page.get_attribute("#bd-svg", "viewBox") != before
    # a drag on the photo pans it, and adds nothing
    sites = page.locator("#bd-svg circle.bd-site").count()
    zoomed = page.get_attribute("#bd-svg", "viewBox")
    page.locator("#bd-svg").scroll_into_view_if_needed()
    box = page.locator("#bd-svg").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] * 0.9)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.7, steps=4)
    page.mouse.up()
    assert page.get_attribute("#bd-svg", "viewBox") != zoomed
    assert page.locator("#bd-svg circle.bd-site").count() == sites
    # two fingers spread apart zoom in (the photo shows less of itself)
    cdp = page.context.new_cdp_session(page)
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    def fingers(kind, d):
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": [] if kind == "touchEnd" else [
            {"x": cx - d, "y": cy, "id": 1}, {"x": cx + d, "y": cy, "id": 2}]})

    before_w = float(page.get_attribute("#bd-svg", "viewBox").split()[2])
    fingers("touchStart", 20)
    for d in (35, 50, 65, 80):
        fingers("touchMove", d)
    fingers("touchEnd", 80)
    assert float(page.get_attribute("#bd-svg", "viewBox").split()[2]) < before_w / 2
    assert page.locator("#bd-svg circle.bd-site").count() == sites
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    page.screenshot(path=str(artifacts_dir / "boards-editor-360-it.png"), full_page=True)
    assert page.errors == []


def _bomb_png(side: int) -> bytes:
    """A real PNG of side x side pixels, 1-bit grey, all black: a few KB that a browser decodes to 4 bytes a pixel."""
    import struct
    import zlib

    raw = (b"\0" * (1 + (side + 7) // 8)) * side

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def _headers(w: int, h: int) -> dict:
    """The first bytes of a JPEG, a GIF and the three kinds of WebP of w x h pixels (what the page reads)."""
    import struct

    jpeg = (b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0"
            + b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, h, w, 3) + b"\x01\x22\0\x02\x11\x01\x03\x11\x01" + b"\0" * 64)
    gif = b"GIF89a" + struct.pack("<HHBBB", w, h, 0, 0, 0) + b"\0" * 64

    def riff(kind, body):
        data = kind + struct.pack("<I", len(body)) + body
        return b"RIFF" + struct.pack("<I", 4 + len(data)) + b"WEBP" + data

    vp8x = riff(b"VP8X", b"\0\0\0\0" + (w - 1).to_bytes(3, "little") + (h - 1).to_bytes(3, "little"))
    vp8l = riff(b"VP8L", b"\x2f" + struct.pack("<I", (w - 1) | (h - 1) << 14) + b"\0" * 32)
    vp8 = riff(b"VP8 ", b"\0\0\0" + b"\x9d\x01\x2a" + struct.pack("<HH", w, h) + b"\0" * 32)
    return {"image/jpeg": jpeg, "image/gif": gif, "image/webp": vp8x, "image/webp;vp8l": vp8l, "image/webp;vp8": vp8}


def test_a_photo_of_too_many_pixels_is_refused_before_the_page_decodes_it(new_context, server):
    """A small file of huge pixels (a decompression bomb) picked in the editor was decoded in full to be shrunk
    (934-979 MB in Chromium's renderer for one; a Pi's kiosk has 512 MB): its size is read from its header
    (PNG, JPEG, WebP, GIF) and the page says so, sending nothing and decoding nothing."""
    page = organiser_page(new_context, server, viewport={"width": 412, "height": 860})
    puts = []
    page.on("request", lambda r: puts.append(r.url) if r.method == "PUT" and "/photo" in r.url else None)
    page.goto("/boards")
    page.click("#bd-new")
    page.fill("#bd-new-name", "Bomb board")
    page.click("#bd-new-create")
    expect(page.locator("#bd-editor")).to_be_visible()
    # a real PNG: 8000 x 8000 decodes to 256 MB (its file is 12 KB)
    files = {"image/png": _bomb_png(8000), **_headers(12000, 9000)}
    for mime, data in files.items():
        page.set_input_files("#bd-photo", files=[{"name": "board", "mimeType": mime.split(";")[0], "buffer": data}])
        w, h = (8000, 8000) if mime == "image/png" else (12000, 9000)
        expect(page.locator("#toast")).to_contain_text(f"{w} × {h} pixels", timeout=5000)
        expect(page.locator("#toast")).to_contain_text("at most 52 million")
        page.evaluate("document.getElementById('toast').textContent = ''")
    assert puts == [], puts
    assert page.evaluate("window.CompanionBoards.state.photo") is None
    # a photo within the limit still goes (its header read the same way)
    page.set_input_files("#bd-photo", files=[{"name": "board.png", "mimeType": "image/png", "buffer": png(300, 200)}])
    expect(page.locator("#bd-svg image")).to_have_count(1)
    assert page.evaluate("window.CompanionBoards.state.photo.width") == 300
    assert not page.errors, page.errors
