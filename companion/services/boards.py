"""Web of Power boards a club transcribes on the box (``/boards``): versions, photos, export/import and
the board a new match starts on. No SQL here (``companion.storage.boards``) and no Flask.

- A board is a document of ``schemas/web-of-power.map.schema.json``. Saving never refuses an incomplete
  board: the checker (``wop_board.check``, the same as ``companion map check``) decides its status:
  ``complete`` only with no error and nothing unknown, else ``template`` (nothing beyond the rule book's
  facts) or ``partial``. A board with errors can be saved too, but no match starts on it.
- Every saved change is a new version; a match keeps the version it started with: its options carry
  ``board_ref: {"id", "version"}`` and the version's document as ``board``, so its scoring never changes
  when the board is edited later (docs/games.md, "Web of Power boards").
- A photo is a JPEG or PNG (sniffed from its bytes, not trusted from a header) of at most ``PHOTO_LIMIT``
  bytes; the sites' x, y are its pixels.
"""

from __future__ import annotations

import base64
import binascii
import copy
import struct

from companion.base import lazy
from companion.base.errors import InputError, NotFoundError, RuleError

wb = lazy.module("companion.games.wop_board")  # the board checker: imported at its first use, not at start-up

PHOTO_LIMIT = 2 * 1024 * 1024  # bytes, after the browser shrank it (1600 px on the long side is ~0.3-0.8 MB)
PHOTO_MAX_SIDE = 8000
# decoded pixels: what a phone's browser holds to show it (a 243 KB PNG of 8000 x 8000, a decompression
# bomb, cost a phone 1.3-1.6 GB). The board page sends at most 1600 px on the long side (1600 x 1200: 1.9 MP)
PHOTO_MAX_PIXELS = 4_000_000
GAME = "web-of-power"


# -- photos -----------------------------------------------------------------------------------------

def sniff_image(data: bytes, field: str = "photo") -> dict:
    """``{"mime", "width", "height"}`` of a PNG or JPEG read from its bytes; InputError for anything else."""
    if len(data) > PHOTO_LIMIT:
        raise InputError("the photo is too large: at most {value} MB", field, value=PHOTO_LIMIT // (1024 * 1024))
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24 and data[12:16] == b"IHDR":
        w, h = struct.unpack(">II", data[16:24])
        info = _sized("image/png", w, h, field)
        _upright(_png_orientation(data), field)
        return info
    if data[:3] == b"\xff\xd8\xff":
        orientation = 1
        i = 2
        while i + 4 <= len(data):
            if data[i] != 0xFF:
                break
            marker = data[i + 1]
            if marker == 0xFF:  # fill byte
                i += 1
                continue
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                i += 2
                continue
            (length,) = struct.unpack(">H", data[i + 2:i + 4])
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                if i + 9 > len(data):
                    break
                h, w = struct.unpack(">HH", data[i + 5:i + 9])
                info = _sized("image/jpeg", w, h, field)
                _upright(orientation, field)
                return info
            if marker == 0xE1 and data[i + 4:i + 10] == b"Exif\0\0":  # APP1: the camera's EXIF
                orientation = _exif_orientation(data[i + 10:i + 2 + length])
            if marker == 0xDA or length < 2:
                break
            i += 2 + length
    raise InputError("the photo is not a JPEG or PNG image", field)


def _sized(mime: str, w: int, h: int, field: str) -> dict:
    if not (1 <= w <= PHOTO_MAX_SIDE and 1 <= h <= PHOTO_MAX_SIDE):
        raise InputError("the photo is {w}x{h} pixels: each side must be 1 to {PHOTO_MAX_SIDE}", field, w=w, h=h, PHOTO_MAX_SIDE=PHOTO_MAX_SIDE)
    if w * h > PHOTO_MAX_PIXELS:
        raise InputError("the photo is {w}x{h} pixels: at most {mp} million pixels (the board page shrinks a photo "
                         "to fit)", field, w=w, h=h, mp=PHOTO_MAX_PIXELS // 1_000_000)
    return {"mime": mime, "width": w, "height": h}


def _upright(orientation: int, field: str) -> None:
    """A photo is stored as its pixels lie, so the sites' x, y on it are what every screen shows: one that
    its camera's EXIF says to turn (orientation 2-8) is refused, naming it. The board page turns a photo
    upright as it shrinks it (a canvas drawn from the decoded image), so only an upload by a script or a
    hand-made import meets this."""
    if orientation != 1:
        raise InputError("the photo's EXIF orientation is {value} (turned or mirrored): upload it from the board "
                         "page, which stores it upright, or save it upright first", field, value=orientation)


def _exif_orientation(tiff: bytes) -> int:
    """The Orientation tag (0x0112) of IFD0 of an EXIF block (a TIFF header and its IFDs), 1 when absent
    or unreadable."""
    if tiff[:2] == b"II":
        end = "<"
    elif tiff[:2] == b"MM":
        end = ">"
    else:
        return 1
    try:
        (ifd,) = struct.unpack(end + "I", tiff[4:8])
        (count,) = struct.unpack(end + "H", tiff[ifd:ifd + 2])
        for k in range(min(count, 512)):
            at = ifd + 2 + 12 * k
            tag, kind, _n = struct.unpack(end + "HHI", tiff[at:at + 8])
            if tag == 0x0112 and kind == 3:  # SHORT
                (value,) = struct.unpack(end + "H", tiff[at + 8:at + 10])
                return value if 1 <= value <= 8 else 1
    except struct.error:
        return 1
    return 1


def _png_orientation(data: bytes) -> int:
    """The EXIF orientation of a PNG's eXIf chunk (before its image data; browsers apply it), 1 without."""
    i = 8
    while i + 8 <= len(data):
        (length,) = struct.unpack(">I", data[i:i + 4])
        kind = data[i + 4:i + 8]
        if kind == b"eXIf":
            return _exif_orientation(data[i + 8:i + 8 + length])
        if kind in (b"IDAT", b"IEND"):
            return 1
        i += 12 + length
    return 1


def photo_from_doc(photo: dict, field: str = "$.photo") -> dict:
    """The photo of an imported board document, checked as an upload is."""
    try:
        data = base64.b64decode(photo["data"], validate=True)
    except (binascii.Error, ValueError):
        raise InputError("the photo is not valid base64", join(field, "data")) from None
    info = sniff_image(data, join(field, "data"))
    if info["mime"] != photo["mime"]:
        raise InputError("the photo is a {mime}, not a {mime2}", join(field, "mime"), mime=info['mime'], mime2=photo['mime'])
    return {**info, "data": data}


def join(base: str, key: str) -> str:
    return f"{base}.{key}"


# -- documents --------------------------------------------------------------------------------------

def template_doc(name: str) -> dict:
    """A new board: the rule book's facts (9 countries, their site counts where known, alliances 14 and 15,
    the sea routes, the card colours) and everything else unknown."""
    doc = wb.default_board_doc()
    doc["name"] = name
    doc["transcription"] = {"status": "template",
                            "source": "transcribed on the box from the club's own board",
                            "notes": ["Started from the rule book's facts; the rest is transcribed from the photo."]}
    doc.pop("photo", None)
    return doc


def _is_template(doc: dict) -> bool:
    known_pairs = {a["number"] for a in doc["alliances"] if a["countries"]}
    named = {wb._site_id(s) for c in doc["countries"] for s in c["sites"]}
    return doc["roads"] is None and known_pairs <= set(wb.BOOK_ALLIANCES) and named <= {"Chorin", "Obra"}


def check(doc: dict, base: str = "$") -> dict:
    """The checker's report with the status a saved version gets (see the module's docstring)."""
    if isinstance(doc, dict) and isinstance(doc.get("transcription"), dict):  # the box decides the status
        doc = {**doc, "transcription": {k: v for k, v in doc["transcription"].items() if k != "status"}}
    report = wb.check(doc, base)
    if report["complete"] and not report["errors"]:
        status = "complete"
    else:
        status = "template" if _is_template(doc) else "partial"
    return {**report, "status": status, "ok": not report["errors"]}


def stored_doc(doc: dict, report: dict) -> dict:
    """What a version stores: the document without its photo, its status the checker's."""
    out = copy.deepcopy(doc)
    out.pop("photo", None)
    out["game"] = GAME
    out["transcription"] = {**(out.get("transcription") or {}), "status": report["status"]}
    return out


# -- the store --------------------------------------------------------------------------------------

def club_key(store, club: str | None, field: str = "club") -> str | None:
    """A club's id from its id or name (None: the box's own boards)."""
    if club in (None, ""):
        return None
    from companion.services import seasons

    return seasons.get_club(store, club, field)["id"]


def create(store, name: str, club: str | None = None, doc: dict | None = None, photo: dict | None = None,
           base: str = "$.board") -> dict:
    club_id = club_key(store, club, "$.club")
    doc = template_doc(name) if doc is None else doc
    report = check(doc, base)
    board = store.create_board(name, club_id, stored_doc(doc, report), report["status"], len(report["errors"]),
                               photo)
    return describe(store, board["id"])


def save(store, board_id: str, doc: dict, expected_version: int | None, name: str | None = None) -> dict:
    report = check(doc, "$.board")
    store.add_board_version(board_id, stored_doc(doc, report), report["status"], len(report["errors"]),
                            expected_version, name=name)
    return describe(store, board_id)


def set_photo(store, board_id: str, data: bytes, expected_version: int | None = None) -> dict:
    info = sniff_image(data)
    latest = store.board_version(board_id)
    store.add_board_version(board_id, latest["doc"], latest["status"], latest["errors"], expected_version,
                            photo={**info, "data": data})
    return describe(store, board_id)


def describe(store, board_id: str, version: int | None = None) -> dict:
    """A board and one version (the latest by default): its document, the checker's report, its photo."""
    board = store.get_board(board_id)
    v = store.board_version(board_id, version)
    photo = store.board_photo_meta(v["photo_id"]) if v["photo_id"] else None
    defaults = store.default_boards()
    return {
        "id": board["id"], "name": board["name"], "club_id": board["club_id"], "created_at": board["created_at"],
        "version": v["version"], "latest": board["latest"], "saved_at": v["created_at"],
        "status": v["status"], "board": v["doc"], "check": check(v["doc"]),
        "photo": None if photo is None else {
            "url": f"/api/boards/{board_id}/photo?version={v['version']}",
            "width": photo["width"], "height": photo["height"], "mime": photo["mime"]},
        "default": defaults.get(board["club_id"] or "") == board_id,
        "versions": store.board_versions(board_id),
        "book": wb.book_facts(),
    }


def listing(store) -> list[dict]:
    defaults = store.default_boards()
    return [{**b, "default": defaults.get(b["club_id"] or "") == b["id"]} for b in store.list_boards()]


def photo(store, board_id: str, version: int | None = None) -> dict:
    v = store.board_version(board_id, version)
    if not v["photo_id"]:
        raise NotFoundError("board {board_id!r} version {version} has no photo", "photo", board_id=board_id, version=v['version'])
    return store.board_photo(v["photo_id"])


def export(store, board_id: str, version: int | None = None, with_photo: bool = False) -> dict:
    v = store.board_version(board_id, version)
    doc = copy.deepcopy(v["doc"])
    if with_photo and v["photo_id"]:
        p = store.board_photo(v["photo_id"])
        doc["photo"] = {"mime": p["mime"], "data": base64.b64encode(p["data"]).decode("ascii"),
                        "width": p["width"], "height": p["height"]}
    return doc


def import_board(store, doc: dict, club: str | None = None, name: str | None = None) -> dict:
    """A new board from an exported document (already schema-checked); nothing is stored if its photo is
    not an image."""
    wb.validate_doc(doc)
    photo_data = photo_from_doc(doc["photo"]) if "photo" in doc else None
    name = name or doc.get("name") or "Imported board"
    return create(store, name[:200], club, doc, photo_data, "$")


def set_default(store, board_id: str | None, club: str | None = None) -> None:
    club_id = club_key(store, club)
    if board_id is not None:
        board = store.get_board(board_id)
        if board["club_id"] != club_id:
            raise InputError("the board belongs to another club", "$.board_id")
    store.set_default_board(club_id or "", board_id)


# -- matches ----------------------------------------------------------------------------------------

def match_options(store, game: str, options: dict) -> dict:
    """A new Web of Power match's options with its board: ``board_id`` (+ ``board_version``, default the
    latest) names a box board, ``board_id: null`` the installed template; without either, the club's
    default board (``options.club``), else the box's own default, when there is one. The version's document
    goes into ``board`` and
    ``board_ref`` records which board and version it is. Other games' options are returned as they are."""
    if game != GAME or not isinstance(options, dict):
        return options
    out = dict(options)
    if "board_id" in out and out["board_id"] is None:  # explicitly the installed template
        del out["board_id"]
        return out
    board_id = out.pop("board_id", None)
    version = out.pop("board_version", None)
    if board_id is None and version is not None:
        raise InputError("board_version needs board_id", "board_version")
    if board_id is None:
        if out.get("board") is not None:
            return out
        club = out.get("club")
        try:
            key = club_key(store, club) if isinstance(club, str) else None
        except NotFoundError:
            key = None
        defaults = store.default_boards()
        # the club's own default, else the box's (a club that chose none plays on the box's board)
        board_id = defaults.get(key or "") or defaults.get("")
        if board_id is None:
            return out
    elif out.get("board") is not None:
        raise InputError("give board or board_id, not both", "board_id")
    if not isinstance(board_id, str) or not board_id:
        raise InputError("must be a board id", "board_id")
    if version is not None and (not isinstance(version, int) or isinstance(version, bool) or version < 1):
        raise InputError("must be a version number (1, 2, ...)", "board_version")
    v = store.board_version(board_id, version)
    report = check(v["doc"])
    if report["errors"]:
        first = report["errors"][0]
        raise RuleError("board version {version} has errors ({path}: {message}): correct it on the boards page first", "board_id", version=v['version'], path=first['path'], message=first['message'])
    out["board"] = v["doc"]
    out["board_ref"] = {"id": board_id, "version": v["version"]}
    return out
