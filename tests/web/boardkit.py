"""A small synthetic Web of Power board and a test photo for the board tests (API and browser)."""

import struct
import zlib

from companion.games import wop_board as wb

COUNTRIES = list(wb.BOOK_SCORING_ORDER)
# the 13 alliances the rule book does not give, invented for the test board (14 and 15 are the book's)
PAIRS = [("England", "Franken"), ("England", "Frankreich"), ("England", "Aragon"), ("Franken", "Bayern"),
         ("Aragon", "Frankreich"), ("Aragon", "Italien"), ("Franken", "Lothringen"), ("Bayern", "Schwaben"),
         ("Frankreich", "Lothringen"), ("Lothringen", "Schwaben"), ("Schwaben", "Burgund"),
         ("Frankreich", "Burgund"), ("Lothringen", "Burgund")]


def png(width: int, height: int, rgb=(230, 220, 190)) -> bytes:
    """A plain PNG made with zlib (no imaging library needed): a light background with a dark grid."""
    rows = []
    for y in range(height):
        row = bytearray([0])
        for x in range(width):
            row += bytes((60, 60, 60)) if (x % 50 == 0 or y % 50 == 0) else bytes(rgb)
        rows.append(bytes(row))
    raw = b"".join(rows)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def site_xy(ci: int, k: int) -> tuple[int, int]:
    """Where site k of country ci sits on the test photo (600 x 400): a 3 x 3 grid of countries."""
    col, row = ci % 3, ci // 3
    return 60 + col * 200 + k * 70, 60 + row * 130


def site_id(ci: int, k: int) -> str:
    return f"{COUNTRIES[ci]}{k + 1}"


# roads: each country's two sites, and a road on from each country's 2nd site to the next one's 1st
ROADS = [[site_id(ci, 0), site_id(ci, 1)] for ci in range(9)] + \
        [[site_id(ci, 1), site_id(ci + 1, 0)] for ci in range(8)]


def complete_board(name="Test board") -> dict:
    countries = [{"id": c, "sites": [{"id": site_id(ci, k), "x": site_xy(ci, k)[0], "y": site_xy(ci, k)[1]}
                                     for k in range(2)]} for ci, c in enumerate(COUNTRIES)]
    alliances = [{"number": n + 1, "countries": list(p)} for n, p in enumerate(PAIRS)]
    alliances += [{"number": 14, "countries": ["Italien", "Burgund"]},
                  {"number": 15, "countries": ["Italien", "Bayern"]}]
    for a in alliances:
        if a["number"] in wb.BOOK_SEA_ROUTES:
            a["sea_route"] = True
    doc = wb.default_board_doc()
    return {"game": "web-of-power", "name": name, "transcription": {"status": "complete"},
            "countries": countries, "roads": [list(r) for r in ROADS], "alliances": alliances,
            "card_colours": doc["card_colours"]}
