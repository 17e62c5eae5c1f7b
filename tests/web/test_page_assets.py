"""What a page costs to load: the words of its scripts are a file of their own (``/static/i18n/<lang>.js``),
never written into the page; every static file is named by its content's hash and kept a year by the
browser; a table's QR code is drawn once, not at every view of its page."""

from __future__ import annotations

import re

import pytest

from companion.web import assets, i18n
from tests.web.conftest import Api

SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S)
STATIC = re.compile(r'(?:src|href)="(/static/[^"?]+)\?v=([^"]*)"')


@pytest.fixture
def pages(organiser):
    """Every kind of page (the match and TV pages of each game), as an organiser sees them."""
    ids = {}
    for game, players in (("conquest-italy", ["Anna", "Bruno", "Carla"]), ("web-of-power", ["Anna", "Bruno", "Carla"]),
                          ("richelieu", ["Anna", "Bruno"]), ("rome-is-burning", ["Anna", "Bruno", "Carla"])):
        r = organiser.post("/api/matches", {"game": game, "players": players})
        assert r.status_code == 201, r.json
        ids[game] = r.json["id"]
    paths = ["/", "/new", "/tournament", "/tournaments", "/seasons", "/players", "/login", "/join", "/boards",
             "/dice"]
    for mid in ids.values():
        paths += [f"/m/{mid}", f"/m/{mid}/display"]
    return paths


def _catalogue_keys_in(text: str, lang: str) -> int:
    """How many of the catalogue's keys the page holds as the keys of a JSON object (plain or HTML-escaped)."""
    return sum(1 for k in i18n.catalogue(lang)
               if f'"{k}":' in text or f"&#34;{k}&#34;:" in text or f'\\"{k}\\":' in text)


@pytest.mark.parametrize("lang", i18n.LANGUAGES)
def test_no_page_writes_the_catalogue_into_itself(organiser, pages, lang):
    for path in pages:
        r = organiser.get(path, headers={"Accept-Language": lang})
        assert r.status_code == 200, (path, r.status_code)
        text = r.get_data(as_text=True)
        assert _catalogue_keys_in(text, lang) < 5, f"{path} holds the catalogue"
        found = SCRIPT.findall(text)
        # no inline script (the Content-Security-Policy allows only the box's own files): the one block of
        # data is the match page's first load, never run ...
        data = [(attrs, body) for attrs, body in found if 'type="application/json"' in attrs]
        assert [re.search(r'id="([^"]+)"', a).group(1) for a, _ in data] == (["first-load"] if "/m/" in path and
                                                                            not path.endswith("/display") else [])
        scripts = [s for s in found if s not in data]
        assert all(not body.strip() and "src=" in attrs for attrs, body in scripts), path
        # ... and the words first, before the page's own scripts (deferred: they run in this order)
        srcs = [re.search(r'src="([^"]+)"', attrs).group(1) for attrs, _ in scripts]
        assert srcs[0] == i18n.catalogue_url(lang), (path, srcs[:2])
        assert srcs[1].startswith("/static/js/companion.js?v="), path
        assert all("defer" in attrs for attrs, _ in scripts), path
        assert "script-src 'self'" in r.headers["Content-Security-Policy"]


def test_the_catalogue_script_holds_the_words_and_is_kept_until_they_change(api):
    import json

    for lang in i18n.LANGUAGES:
        url = i18n.catalogue_url(lang)
        r = api.get(url)
        assert r.status_code == 200 and r.mimetype == "text/javascript"
        assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        text = r.get_data(as_text=True)
        assert text.startswith("window.CompanionCatalogue=") and text.rstrip().endswith(";")
        assert json.loads(text[len("window.CompanionCatalogue="):].rstrip().rstrip(";")) == i18n.catalogue(lang)
        again = api.get(url, headers={"If-None-Match": r.headers["ETag"]})
        assert again.status_code == 304 and not again.data
        # an address of other words (a page of an older version) gets today's, asked again next time
        stale = api.get(f"/static/i18n/{lang}.js?v=0123456789abcdef")
        assert stale.status_code == 200 and stale.data == r.data and stale.headers["Cache-Control"] == "no-cache"
    assert api.get("/static/i18n/xx.js").status_code == 404
    assert api.get("/static/i18n/en.json").status_code == 200  # the catalogue's own file stays where it was


def test_the_catalogue_address_changes_with_its_words(api, monkeypatch):
    before = i18n.catalogue_url("it")
    old = api.get(before).data
    words = dict(i18n.catalogue("it"), **{"app.name": "Compagno"})
    try:
        monkeypatch.setattr(i18n, "catalogue", lambda lang: words)
        i18n.catalogue_script.cache_clear()
        after = i18n.catalogue_url("it")
        assert after != before
        r = api.get(after)
        assert r.headers["Cache-Control"].endswith("immutable") and b'"app.name":"Compagno"' in r.data
        assert r.data != old
        assert api.get(before).headers["Cache-Control"] == "no-cache"  # the old address is not kept a year
    finally:
        monkeypatch.undo()
        i18n.catalogue_script.cache_clear()
    assert i18n.catalogue_url("it") == before


def test_the_catalogue_script_is_served_when_viewers_are_turned_off(app, organiser):
    assert organiser.put("/api/auth/settings", {"viewers_allowed": False}).status_code == 200
    stranger = Api(app.test_client())
    assert stranger.get("/login").status_code == 200
    r = stranger.get(i18n.catalogue_url("en"))
    assert r.status_code == 200 and r.data.startswith(b"window.CompanionCatalogue=")


def test_every_static_address_carries_its_content_hash_and_is_kept_a_year(organiser, pages):
    seen = set()
    for path in pages:
        text = organiser.get(path).get_data(as_text=True)
        found = STATIC.findall(text)
        assert found, path
        bare = re.findall(r'(?:src|href)="/static/[^"?]+"', text)
        assert not bare, (path, bare)  # none without its hash: it would be asked for again every few minutes
        seen.update(found)
    for url, v in sorted(seen):
        r = organiser.get(f"{url}?v={v}")
        assert r.status_code == 200, url
        assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable", url
    js = organiser.get("/static/js/companion.js?v=0.1.0")  # not its content's hash: kept a short while only
    assert js.status_code == 200 and "immutable" not in js.headers["Cache-Control"]


def test_a_static_address_changes_with_the_file(tmp_path, monkeypatch):
    (tmp_path / "static" / "js").mkdir(parents=True)
    f = tmp_path / "static" / "js" / "x.js"
    f.write_text("one")
    monkeypatch.setattr(assets, "web_dir", lambda: tmp_path)
    try:
        assets._file.cache_clear()
        first = assets.url("js/x.js")
        f.write_text("two")
        assets._file.cache_clear()  # (a process hashes each file once: the installed files do not change)
        assert assets.url("js/x.js") != first and assets.url("js/./x.js").endswith(assets.digest("js/x.js"))
        assert assets.url("js/missing.js") == "/static/js/missing.js?v="
    finally:
        monkeypatch.undo()
        assets._file.cache_clear()


def test_a_table_qr_code_is_drawn_once_for_every_view_of_its_page(organiser, monkeypatch):
    import qrcode

    from companion.web import auth

    mid = organiser.post("/api/matches", {"game": "richelieu", "players": ["Anna", "Bruno"]}).json["id"]
    drawn = []
    real = qrcode.make
    monkeypatch.setattr(qrcode, "make", lambda text, **kw: drawn.append(text) or real(text, **kw))
    auth.qr_svg.cache_clear()
    pages = [organiser.get(p).get_data(as_text=True) for p in (f"/m/{mid}", f"/m/{mid}/display", f"/m/{mid}")]
    assert all("<svg" in p for p in pages)
    assert len(drawn) == 1  # the table's link, drawn at the first page only
    organiser.post("/api/auth/join-tokens", {"match_id": mid, "revoke_others": True})
    organiser.get(f"/m/{mid}")
    assert len(drawn) == 2  # a new link: a new code


def test_the_conquest_map_is_named_by_its_content_and_kept(organiser):
    mid = organiser.post("/api/matches", {"game": "conquest-italy", "players": ["Anna", "Bruno", "Carla"]}).json["id"]
    urls = {re.search(r'data-map-url="([^"]+)"', organiser.get(p).get_data(as_text=True)).group(1)
            for p in (f"/m/{mid}", f"/m/{mid}/display")}
    assert len(urls) == 1
    url = urls.pop()
    assert url.startswith(f"/api/matches/{mid}/conquest/map?v=")
    r = organiser.get(url)
    assert r.status_code == 200 and r.json["cities"] and "<svg" in r.json["svg"]
    assert r.headers["Cache-Control"] == "private, max-age=31536000, immutable"
    plain = organiser.get(f"/api/matches/{mid}/conquest/map")
    assert plain.data == r.data and plain.headers["Cache-Control"] == "no-cache"
    assert organiser.get(url, headers={"If-None-Match": r.headers["ETag"]}).status_code == 304
    import gzip

    packed = organiser.get(url, headers={"Accept-Encoding": "gzip"})
    assert packed.headers["Content-Encoding"] == "gzip" and gzip.decompress(packed.data) == r.data
    assert len(packed.data) < len(r.data) / 2 and packed.headers["Cache-Control"].endswith("immutable")
    other = organiser.post("/api/matches", {"game": "conquest-italy", "players": ["Dora", "Ezio", "Fabio"]}).json["id"]
    assert re.search(r'data-map-url="[^"]+\?v=([^"]+)"', organiser.get(f"/m/{other}").get_data(as_text=True)).group(1) \
        == url.split("?v=")[1]  # the same map: the same content, drawn once
    wop = organiser.post("/api/matches", {"game": "web-of-power", "players": ["Anna", "Bruno", "Carla"]}).json["id"]
    assert "data-map-url" not in organiser.get(f"/m/{wop}").get_data(as_text=True)


def test_rome_s_card_catalogue_is_named_by_its_content_and_kept(organiser):
    mid = organiser.post("/api/matches", {"game": "rome-is-burning", "players": ["Anna", "Bruno", "Carla"]}).json["id"]
    url = re.search(r'data-catalogue-url="([^"]+)"', organiser.get(f"/m/{mid}").get_data(as_text=True)).group(1)
    r = organiser.get(url)
    assert r.status_code == 200 and len(r.json["cards"]) == 40
    assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    plain = organiser.get("/api/games/rome-is-burning/catalogue")
    assert plain.data == r.data and plain.headers["Cache-Control"] == "no-cache"


def test_the_match_page_holds_its_first_load_as_the_api_answers_it(app, organiser, player):
    import json

    mid = organiser.post("/api/matches", {"game": "conquest-italy", "players": ["Anna", "Bruno", "Carla"]}).json["id"]
    seq = organiser.get(f"/api/matches/{mid}").json["seq"]
    organiser.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": seq,
                                                  "data": {"player": "Anna", "cities": ["Roma", "Napoli"]}})
    assert player.put(f"/api/matches/{mid}/seat", {"player": "Bruno"}).status_code == 200

    def first(who):
        r = who.get(f"/m/{mid}")
        assert r.headers["Cache-Control"] == "no-store"  # (a phone's own secret may be in it)
        return json.loads(re.search(r'<script type="application/json" id="first-load">(.*?)</script>',
                                    r.get_data(as_text=True), re.S).group(1))

    for who in (organiser, player, Api(app.test_client())):
        doc = first(who)
        assert doc["match"] == who.get(f"/api/matches/{mid}").json
        assert doc["events"] == who.get(f"/api/matches/{mid}/events").json["events"]
        assert doc["dice"] == who.get(f"/api/matches/{mid}/dice").json
    # Bruno's phone: nobody else's objective, in the view or in the history
    doc = first(player)
    assert doc["match"]["seat"] == "Bruno" and "Anna" not in doc["match"]["view"]["state"]["objectives"]
    assert "Roma" not in json.dumps(doc)


def test_text_files_are_sent_compressed_to_a_browser_that_takes_it(api):
    import gzip

    for url in (assets.url("js/pages.js"), assets.url("css/app.css"), i18n.catalogue_url("it")):
        plain = api.get(url, headers={"Accept-Encoding": "identity"})
        packed = api.get(url, headers={"Accept-Encoding": "gzip, deflate"})
        assert "Content-Encoding" not in plain.headers and packed.headers["Content-Encoding"] == "gzip", url
        assert gzip.decompress(packed.data) == plain.data and len(packed.data) < len(plain.data) / 2, url
        assert "Accept-Encoding" in plain.headers["Vary"] and "Accept-Encoding" in packed.headers["Vary"]
        assert packed.headers["ETag"] != plain.headers["ETag"]  # two forms of one file: two tags
        assert packed.headers["Cache-Control"].endswith("immutable")
        again = api.get(url, headers={"Accept-Encoding": "gzip", "If-None-Match": packed.headers["ETag"]})
        assert again.status_code == 304
        assert "Content-Encoding" not in api.get(url, headers={"Accept-Encoding": "gzip;q=0"}).headers
    # a range of a file is sent as it is, uncompressed
    r = api.get(assets.url("js/pages.js"), headers={"Accept-Encoding": "gzip", "Range": "bytes=0-9"})
    assert r.status_code == 206 and "Content-Encoding" not in r.headers and len(r.data) == 10


def test_a_static_file_is_sent_as_the_gz_made_ahead_and_never_stale(tmp_path, monkeypatch):
    """The ``.gz`` made at the build (the wheel, `make run`) is what goes on the air, byte for byte: the box
    compresses nothing; a file edited after its ``.gz`` was made is compressed again, never sent stale; a
    tiny file is not compressed; a ``.gz`` whose file is gone is removed by the next build."""
    import gzip

    from companion.base import precompressed

    static = tmp_path / "static" / "js"
    static.mkdir(parents=True)
    big = static / "big.js"
    big.write_text("var x = 1;\n" * 400)
    (static / "tiny.js").write_text("var y;")
    (static / "gone.js.gz").write_bytes(gzip.compress(b"old"))
    assert precompressed.build(str(tmp_path / "static")) == (1, 0, 1)
    assert not (static / "tiny.js.gz").exists() and not (static / "gone.js.gz").exists()
    assert gzip.decompress((static / "big.js.gz").read_bytes()) == big.read_bytes()
    assert precompressed.build(str(tmp_path / "static")) == (0, 1, 0)  # (already right: nothing written)
    # a .gz of the same text at another level: the box sends that very file, not one it made itself
    ahead = gzip.compress(big.read_bytes(), compresslevel=1, mtime=0)
    assert ahead != precompressed.compress(big.read_bytes())
    (static / "big.js.gz").write_bytes(ahead)
    monkeypatch.setattr(assets, "web_dir", lambda: tmp_path)
    try:
        assets._file.cache_clear()
        assert assets.gzipped("js/big.js") == (ahead, assets.digest("js/big.js"))
        assert assets.gzipped("js/tiny.js") is None  # (18 bytes of gzip around 6: sent as it is)
        big.write_text("var x = 2;\n" * 400)  # edited after its .gz was made (a checkout)
        assets._file.cache_clear()
        packed, _ = assets.gzipped("js/big.js")
        assert gzip.decompress(packed) == big.read_bytes()
    finally:
        monkeypatch.undo()
        assets._file.cache_clear()


def test_no_script_listens_to_unload():
    """A page with an ``unload`` listener is never kept in a browser's back/forward cache (a phone's Back then
    loads it anew); the live pages close and reopen their streams on pagehide/pageshow instead
    (``web/static/js/companion.js``)."""
    from companion.base.resources import web_dir

    pattern = re.compile(r"""addEventListener\(\s*["']unload["']|\bonunload\s*=""")
    scripts = [p for p in (web_dir() / "static").rglob("*.js")]
    assert len(scripts) > 10
    for path in scripts:
        assert not pattern.search(path.read_text(encoding="utf-8")), path
    js = (web_dir() / "static" / "js" / "companion.js").read_text(encoding="utf-8")
    assert '"pageshow"' in js and '"visibilitychange"' in js
