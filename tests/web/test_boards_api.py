"""Web of Power boards through the API: create from the rule book, check, versions, photo, export/import,
the club's default, and matches that keep the board version they started with."""

import base64
import json

from companion.services import seasons
from companion.games import web_of_power as wop
from tests.web.boardkit import PAIRS, complete_board, png, site_id


def create(org, name="Our board", **extra):
    r = org.post("/api/boards", {"name": name, **extra})
    assert r.status_code == 201, r.json
    return r.json


def test_a_new_board_starts_from_the_rule_books_facts_and_is_a_template(organiser):
    b = create(organiser)
    assert b["version"] == 1 and b["status"] == "template" and b["check"]["ok"]
    doc = b["board"]
    assert [c["id"] for c in doc["countries"]] == b["book"]["countries"]
    assert {a["number"]: a["countries"] for a in doc["alliances"]}[14] == ["Italien", "Burgund"]
    assert b["book"]["site_counts"] == {"Frankreich": 8, "Schwaben": 4}
    assert organiser.get("/api/boards").json["boards"][0]["id"] == b["id"]


def test_writes_need_the_organiser(player, api):
    assert player.post("/api/boards", {"name": "x"}).status_code == 403
    assert api.post("/api/boards", {"name": "x"}).status_code in (401, 403)


def test_saving_makes_versions_and_the_checker_decides_the_status(organiser):
    b = create(organiser)
    bid = b["id"]
    partial = b["board"]
    partial["countries"][0]["sites"] = [{"id": "E1", "x": 10, "y": 10}]
    r = organiser.post(f"/api/boards/{bid}/versions", {"board": partial, "expected_version": 1})
    assert r.status_code == 201 and r.json["version"] == 2 and r.json["status"] == "partial"
    full = complete_board()
    # a stale expected_version is refused (someone saved meanwhile) and stores nothing
    r = organiser.post(f"/api/boards/{bid}/versions", {"board": full, "expected_version": 1})
    assert r.status_code == 409 and r.json["field"] == "expected_version"
    r = organiser.post(f"/api/boards/{bid}/versions", {"board": full, "expected_version": 2})
    assert r.status_code == 201 and r.json["status"] == "complete" and r.json["check"]["errors"] == []
    # the book's facts contradicted: a warning, not a refusal
    assert any("Frankreich has 8 sites" in w["message"] for w in r.json["check"]["warnings"])
    assert [v["version"] for v in r.json["versions"]] == [1, 2, 3]
    assert organiser.get(f"/api/boards/{bid}/versions/2").json["status"] == "partial"
    # errors: saved (an incomplete transcription), but never "complete"
    bad = complete_board()
    bad["roads"].append(["England1", "Nowhere"])
    r = organiser.post(f"/api/boards/{bid}/versions", {"board": bad})
    assert r.status_code == 201 and r.json["status"] == "partial"
    assert r.json["check"]["errors"][0]["path"] == "$.roads[17][1]"


def test_check_is_the_map_checkers_report_and_stores_nothing(organiser):
    b = create(organiser)
    doc = complete_board()
    doc["alliances"][13]["countries"] = ["Italien", "Aragon"]
    r = organiser.post("/api/boards/check", {"board": doc})
    assert r.status_code == 200 and r.json["ok"] and r.json["status"] == "complete"
    assert any(w["path"] == "$.board.alliances[13].countries" and "Italien-Burgund" in w["message"]
               for w in r.json["warnings"])
    doc["sea_routes"] = [["England1", "Ghost"]]
    r = organiser.post("/api/boards/check", {"board": doc})
    assert not r.json["ok"] and r.json["errors"][0]["path"] == "$.board.sea_routes[0][1]"
    r = organiser.post("/api/boards/check", {"board": {"countries": []}})
    assert r.status_code == 400 and r.json["field"].startswith("$.board")
    assert organiser.get(f"/api/boards/{b['id']}").json["latest"] == 1


def test_photo_upload_refuses_what_is_not_an_image_or_too_big(organiser, app):
    b = create(organiser)
    bid = b["id"]
    pic = png(60, 40)
    r = organiser.c.put(f"/api/boards/{bid}/photo", data=pic, headers={"Origin": "http://localhost",
                                                                        "Content-Type": "image/png"})
    assert r.status_code == 201 and r.json["photo"]["width"] == 60 and r.json["version"] == 2
    got = organiser.get(r.json["photo"]["url"])
    assert got.status_code == 200 and got.data == pic and got.mimetype == "image/png"
    r = organiser.c.put(f"/api/boards/{bid}/photo", data=b"GIF89a" + b"\0" * 100,
                        headers={"Origin": "http://localhost", "Content-Type": "image/png"})
    assert r.status_code == 415 and "not a JPEG or PNG" in r.json["error"]
    big = b"\xff\xd8\xff" + b"\0" * (2 * 1024 * 1024 + 10)
    r = organiser.c.put(f"/api/boards/{bid}/photo", data=big, headers={"Origin": "http://localhost",
                                                                        "Content-Type": "image/jpeg"})
    assert r.status_code == 413 and r.json["field"] == "Content-Length"
    assert organiser.get(f"/api/boards/{bid}").json["latest"] == 2  # nothing stored by the refusals


def test_jpeg_size_is_read_from_its_frame_header():
    from companion.services.boards import sniff_image

    jpeg = (b"\xff\xd8" + b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
            + b"\xff\xc0\x00\x11\x08\x01\x90\x02\x58\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01" + b"\xff\xd9")
    assert sniff_image(jpeg) == {"mime": "image/jpeg", "width": 600, "height": 400}


def _png_header(width: int, height: int, extra: bytes = b"") -> bytes:
    """A PNG's signature, its IHDR (the size a browser decodes), ``extra`` chunks and a tiny image: what a
    decompression bomb looks like to the box (its pixels compress to almost nothing)."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + extra
            + chunk(b"IDAT", zlib.compress(b"\0" * 1000)) + chunk(b"IEND", b""))


def _exif(orientation: int, big_endian=True) -> bytes:
    """An EXIF block (a TIFF header and IFD0: a Make entry, then Orientation)."""
    import struct

    e = ">" if big_endian else "<"
    return ((b"MM" if big_endian else b"II") + struct.pack(e + "HI", 42, 8) + struct.pack(e + "H", 2)
            + struct.pack(e + "HHI", 0x010F, 2, 4) + b"Pixl"
            + struct.pack(e + "HHIH", 0x0112, 3, 1, orientation) + b"\0\0" + struct.pack(e + "I", 0))


def _jpeg(orientation: int | None, big_endian=True) -> bytes:
    """A JPEG's header (600 x 400) with, when given, an EXIF block (APP1) whose IFD0 holds Orientation."""
    import struct

    app1 = b""
    if orientation is not None:
        body = b"Exif\0\0" + _exif(orientation, big_endian)
        app1 = b"\xff\xe1" + struct.pack(">H", len(body) + 2) + body
    return (b"\xff\xd8" + app1 + b"\xff\xc0\x00\x11\x08\x01\x90\x02\x58\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01"
            + b"\xff\xd9")


def test_a_decompression_bomb_is_refused_by_its_pixel_count(organiser):
    """An 8000 x 8000 PNG of 243 KB was stored, and cost a phone's browser 1.3-1.6 GB to show."""
    from companion.services.boards import sniff_image

    PHOTO_MAX_PIXELS = 4_000_000  # docs/limits.md
    bid = create(organiser)["id"]
    bomb = _png_header(8000, 8000)
    assert len(bomb) < 2000
    r = organiser.c.put(f"/api/boards/{bid}/photo", data=bomb, headers={"Origin": "http://localhost",
                                                                         "Content-Type": "image/png"})
    assert r.status_code == 415 and r.json["field"] == "photo" and "8000x8000" in r.json["error"], r.json
    assert "million pixels" in r.json["error"]
    assert sniff_image(_png_header(1600, 1200))["width"] == 1600  # what the board page sends
    assert sniff_image(_png_header(2000, PHOTO_MAX_PIXELS // 2000))["height"] == PHOTO_MAX_PIXELS // 2000
    r = organiser.post("/api/boards/import", {**complete_board(), "photo": {
        "mime": "image/png", "data": base64.b64encode(bomb).decode()}})
    assert r.status_code == 400 and r.json["field"] == "$.photo.data", r.json
    assert organiser.get(f"/api/boards/{bid}").json["latest"] == 1


def test_a_photo_its_camera_says_to_turn_is_refused_an_upright_one_stored(organiser):
    """A JPEG with EXIF rotation uploaded through the API was stored 200 x 100 but shown 100 x 200 (the
    sites' x, y no longer on their sites). The board page sends photos upright (a canvas)."""
    from companion.services.boards import sniff_image

    bid = create(organiser)["id"]
    for big_endian in (True, False):
        r = organiser.c.put(f"/api/boards/{bid}/photo", data=_jpeg(6, big_endian), headers={
            "Origin": "http://localhost", "Content-Type": "image/jpeg"})
        assert r.status_code == 415 and r.json["field"] == "photo" and "EXIF orientation is 6" in r.json["error"]
    assert "orientation is 3" in organiser.c.put(f"/api/boards/{bid}/photo", data=_png_header(
        60, 40, _chunk(b"eXIf", _exif(3))), headers={"Origin": "http://localhost"}).json["error"]
    assert organiser.get(f"/api/boards/{bid}").json["latest"] == 1
    for upright in (_jpeg(1), _jpeg(None)):
        assert sniff_image(upright) == {"mime": "image/jpeg", "width": 600, "height": 400}
    r = organiser.c.put(f"/api/boards/{bid}/photo", data=_jpeg(1), headers={"Origin": "http://localhost"})
    assert r.status_code == 201 and (r.json["photo"]["width"], r.json["photo"]["height"]) == (600, 400)


def _chunk(kind, data):
    import struct
    import zlib

    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def test_a_new_photo_drops_those_no_version_still_uses(organiser, player, store):
    """Every upload kept a full copy for ever. Kept: the latest version's photo and that of every version
    a match started on; an older version no match plays keeps its document without a photo."""
    bid = create(organiser)["id"]
    organiser.post(f"/api/boards/{bid}/versions", {"board": complete_board()})
    up = lambda w: organiser.c.put(f"/api/boards/{bid}/photo", data=png(w, 20),  # noqa: E731
                                   headers={"Origin": "http://localhost"}).json
    first = up(30)["version"]
    r = player.post("/api/matches", {"game": "web-of-power", "players": ["Anna", "Bruno", "Carla"],
                                     "options": {"board_id": bid, "board_version": first}})
    assert r.status_code == 201, r.json
    mid = r.json["id"]
    for w in (31, 32, 33):
        last = up(w)
    photos = lambda: store.conn().execute("SELECT width FROM board_photos WHERE board_id=? ORDER BY width",  # noqa: E731
                                          (bid,)).fetchall()
    assert [p[0] for p in photos()] == [30, 33]  # the match's version and the latest
    assert last["photo"]["width"] == 33
    assert organiser.get(f"/api/boards/{bid}/versions/{first + 1}").json["photo"] is None
    shown = player.get(f"/api/matches/{mid}/wop/board").json["photo"]
    assert shown is not None and player.get(shown["url"]).data == png(30, 20)
    # a new version of the document keeps the latest photo; the next photo drops 33's
    organiser.post(f"/api/boards/{bid}/versions", {"board": complete_board(), "expected_version": last["version"]})
    up(34)
    assert [p[0] for p in photos()] == [30, 34]


def test_export_and_import_as_another_club_with_the_photo(organiser, store):
    club = seasons.create_club(store, "Circolo di Asti")
    b = create(organiser)
    bid = b["id"]
    organiser.post(f"/api/boards/{bid}/versions", {"board": complete_board()})
    organiser.c.put(f"/api/boards/{bid}/photo", data=png(30, 20), headers={"Origin": "http://localhost"})
    plain = organiser.get(f"/api/boards/{bid}/export").json
    assert "photo" not in plain and plain["transcription"]["status"] == "complete"
    full = organiser.get(f"/api/boards/{bid}/export?photo=1").json
    assert base64.b64decode(full["photo"]["data"]) == png(30, 20)
    r = organiser.post(f"/api/boards/import?club={club['id']}", full)
    assert r.status_code == 201, r.json
    assert r.json["club_id"] == club["id"] and r.json["status"] == "complete" and r.json["photo"]["width"] == 30
    assert r.json["board"]["roads"] == plain["roads"]
    # a board that fails the schema, or whose photo is not an image: 400, nothing stored
    n = len(organiser.get("/api/boards").json["boards"])
    r = organiser.post("/api/boards/import", {"countries": [{"id": "A"}], "roads": None, "alliances": []})
    assert r.status_code == 400 and r.json["field"].startswith("$.countries[0]")
    bad = dict(full, photo={"mime": "image/png", "data": base64.b64encode(b"not a picture").decode()})
    r = organiser.post("/api/boards/import", bad)
    assert r.status_code == 400 and r.json["field"] == "$.photo.data"
    assert len(organiser.get("/api/boards").json["boards"]) == n


def _positions():
    """Everybody's monasteries (by site) and councillors on the test board."""
    mons = {"Anna": [site_id(c, k) for c in (0, 1, 2) for k in (0, 1)],          # a chain of 6
            "Bruno": [site_id(c, k) for c in (3, 4) for k in (0, 1)] + [site_id(5, 0)],  # a chain of 5
            "Carla": [site_id(6, 0), site_id(8, 1)]}
    cons = {"England": {"Anna": 2}, "Franken": {"Anna": 1, "Bruno": 1}, "Italien": {"Bruno": 2},
            "Burgund": {"Bruno": 1, "Carla": 1}, "Bayern": {"Carla": 1}}
    return mons, cons


def _play(player, mid, mons, cons):
    order = ["Anna", "Bruno", "Carla"]
    pieces = {p: [("monastery", s) for s in mons[p]] for p in order}
    for country, by in cons.items():
        for p, n in by.items():
            pieces[p] += [("councillor", country)] * n
    seq = player.get(f"/api/matches/{mid}").json["seq"]
    while any(pieces.values()):
        for p in order:
            if not pieces[p]:
                continue
            piece, where = pieces[p].pop(0)
            data = {"player": p, "piece": piece, **({"site": where} if piece == "monastery" else {"country": where})}
            r = player.post(f"/api/matches/{mid}/events", {"type": "place", "data": data, "expected_seq": seq})
            assert r.status_code == 201, r.json
            seq = r.json["seq"]
            r = player.post(f"/api/matches/{mid}/events", {"type": "turn.end", "data": {"player": p},
                                                           "expected_seq": seq})
            assert r.status_code == 201, r.json
            seq = r.json["seq"]
    for _ in range(2):
        r = player.post(f"/api/matches/{mid}/events", {"type": "deck.out", "data": {}, "expected_seq": seq})
        assert r.status_code == 201, r.json
        seq = r.json["seq"]
    return player.get(f"/api/matches/{mid}").json


def test_a_match_keeps_its_board_version_when_the_board_is_edited(organiser, player):
    b = create(organiser)
    bid = b["id"]
    organiser.post(f"/api/boards/{bid}/versions", {"board": complete_board()})
    r = organiser.put("/api/boards/default", {"board_id": bid})
    assert r.status_code == 200 and [x["default"] for x in r.json["boards"]] == [True]
    r = player.post("/api/matches", {"game": "web-of-power", "players": ["Anna", "Bruno", "Carla"]})
    assert r.status_code == 201, r.json
    mid = r.json["id"]
    assert r.json["options"]["board_ref"] == {"id": bid, "version": 2}
    # the board is edited afterwards: road England2-Franken1 removed, alliance 1 moved
    edited = complete_board()
    edited["roads"] = [rd for rd in edited["roads"] if rd != ["England2", "Franken1"]]
    edited["alliances"][0]["countries"] = ["Italien", "Aragon"]
    assert organiser.post(f"/api/boards/{bid}/versions", {"board": edited}).json["version"] == 3
    mons, cons = _positions()
    view = _play(player, mid, mons, cons)
    final = view["view"]["summary"]["scores"]["final"]
    assert final["complete"] is True
    # the same positions scored by `companion score` on version 2's document
    want = wop.score({"players": ["Anna", "Bruno", "Carla"], "scoring": "final", "map": complete_board(),
                      "monasteries": mons, "councillors": cons})
    assert final["players"] == want["players"]
    chains = {r["player"]: [e for e in r["breakdown"] if e["kind"] == "chain"] for r in final["players"]}
    assert [len(e["sites"]) for e in chains["Anna"]] == [6]
    # the chains the page draws during play are the ones the scoring counts
    live = player.get(f"/api/matches/{mid}/wop/chains").json["chains"]
    assert {p: [sorted(c) for c in cs] for p, cs in live.items()} == \
        {p: [sorted(e["sites"]) for e in chains[p]] for p in chains}
    board = player.get(f"/api/matches/{mid}/wop/board").json
    assert board["board_ref"] == {"id": bid, "version": 2} and board["photo"] is None and len(board["coords"]) == 18
    edited_score = wop.score({"players": ["Anna", "Bruno", "Carla"], "scoring": "final", "map": edited,
                              "monasteries": mons, "councillors": cons})
    assert edited_score["players"] != want["players"]  # the edit would have changed the scoring
    # edited again after the match ended: the match's scoring stays what it was
    again = complete_board()
    again["alliances"] = [dict(al, countries=["England", "Italien"]) if al["number"] == 2 else al
                          for al in again["alliances"]]
    again["roads"] = again["roads"][:5]
    assert organiser.post(f"/api/boards/{bid}/versions", {"board": again}).status_code == 201
    assert player.get(f"/api/matches/{mid}").json["view"]["summary"]["scores"]["final"] == final
    # a new match starts on the latest version
    r = player.post("/api/matches", {"game": "web-of-power", "players": ["A", "B", "C"]})
    assert r.json["options"]["board_ref"] == {"id": bid, "version": 4}
    r = player.post("/api/matches", {"game": "web-of-power", "players": ["A", "B", "C"],
                                     "options": {"board_id": bid, "board_version": 2}})
    assert r.json["options"]["board_ref"] == {"id": bid, "version": 2}
    r = player.post("/api/matches", {"game": "web-of-power", "players": ["A", "B", "C"],
                                     "options": {"board_id": "nope"}})
    assert r.status_code == 404


def test_a_board_with_errors_starts_no_match(organiser, player):
    b = create(organiser)
    bad = complete_board()
    bad["roads"].append(["England1", "Nowhere"])
    organiser.post(f"/api/boards/{b['id']}/versions", {"board": bad})
    r = player.post("/api/matches", {"game": "web-of-power", "players": ["A", "B", "C"],
                                     "options": {"board_id": b["id"]}})
    assert r.status_code == 409 and "has errors" in r.json["error"]


def test_the_openapi_document_lists_the_board_paths(api):
    doc = api.get("/api/openapi.json").json
    for path in ("/api/boards", "/api/boards/{board_id}/photo", "/api/boards/import", "/api/boards/default"):
        assert path in doc["paths"]
    text = json.dumps(doc["components"]["schemas"]["web-of-power.map"])
    assert "$defs" not in text and "$ref" not in text
    assert len(PAIRS) == 13


def test_a_clubs_match_without_a_club_default_plays_on_the_boxs_default(organiser, player):
    """A club that chose no default board plays on the box's default (a tournament's matches carry the
    club of its roster players), not on the installed template."""
    bid = create(organiser)["id"]
    organiser.post(f"/api/boards/{bid}/versions", {"board": complete_board()})
    assert organiser.put("/api/boards/default", {"board_id": bid}).status_code == 200
    club = organiser.post("/api/clubs", {"name": "Boardless club"}).json["id"]
    r = player.post("/api/matches", {"game": "web-of-power", "players": ["Anna", "Bruno", "Carla"],
                                     "options": {"club": club}})
    assert r.status_code == 201, r.json
    assert r.json["options"]["board_ref"] == {"id": bid, "version": 2}
