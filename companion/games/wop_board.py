"""Web of Power boards: load, check (``companion map check``) and draw as SVG.

A board document follows ``schemas/web-of-power.map.schema.json``. The installed board
(``companion/games/data/web-of-power.board.json``) is a clearly labelled transcription TEMPLATE:
the real board's sites, roads and alliance pairs are not in the rule book, so they are marked
unknown (null) rather than invented.

``normalize(doc)`` turns a checked document into the compact form the engine uses::

    {"name", "status", "countries": [ids in scoring order],
     "sites": {country: [site ids]}, "capacity": {country: int | None},
     "site_country": {site: country}, "roads": [[a, b]] | None,
     "alliances": [{"number", "countries": [a, b] | None}], "card_colours": [...],
     "complete": bool}
"""

from __future__ import annotations

import functools
import math
import os

from companion.base.errors import InputError, join_path
from companion.base.jsonio import dumps, loads
from companion.games import xml_escape as escape
from companion.base.schemas import integral

_QUOTE = {'"': "&quot;"}  # escape() for an attribute value

_BOARD_FILE = os.path.join(os.path.dirname(os.path.realpath(__file__)), "data", "web-of-power.board.json")

# What the rule book says about the real board (checked as warnings on any board).
BOOK_SCORING_ORDER = ["England", "Franken", "Bayern", "Italien", "Aragon",
                      "Frankreich", "Lothringen", "Schwaben", "Burgund"]
BOOK_SITE_COUNTS = {"Frankreich": 8, "Schwaben": 4}
BOOK_ALLIANCES = {14: ("Italien", "Burgund"), 15: ("Italien", "Bayern")}
BOOK_ALLIANCE_COUNT = 15
BOOK_SEA_ROUTES = frozenset({1, 2, 3, 5, 6, 15})  # the alliances across water ("Preparazione")
BOOK_CARD_COLOURS = [(("Franken", "Aragon"), 13), (("Bayern", "Burgund"), 12), (("Lothringen", "Italien"), 11),
                     (("England", "Schwaben"), 10), (("Frankreich",), 9)]
PHOTO_MIMES = ("image/jpeg", "image/png")


def book_facts() -> dict:
    """What the rule book states about the board (the editor shows these as "from the rule book")."""
    return {"countries": list(BOOK_SCORING_ORDER), "site_counts": dict(BOOK_SITE_COUNTS),
            "alliances": {str(n): list(p) for n, p in BOOK_ALLIANCES.items()},
            "alliance_count": BOOK_ALLIANCE_COUNT, "sea_routes": sorted(BOOK_SEA_ROUTES),
            "card_colours": [{"countries": list(c), "cards": n} for c, n in BOOK_CARD_COLOURS]}


@functools.cache
def _default_text() -> str:
    with open(_BOARD_FILE, encoding="utf-8") as fh:
        return fh.read()


def default_board_doc() -> dict:
    """A fresh copy of the installed board document (the transcription template)."""
    return loads(_default_text())


@functools.cache
def _default_normalized_json() -> str:
    return dumps(normalize(default_board_doc()))  # (a copy by text: the same value as json's round trip)


def default_board() -> dict:
    return loads(_default_normalized_json())


def _finite(v) -> bool:
    return not isinstance(v, float) or math.isfinite(v)


def _site_id(site) -> str:
    return site if isinstance(site, str) else site["id"]


def _name(v) -> bool:
    return isinstance(v, str) and 1 <= len(v) <= 60


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _int_in(v, lo, hi) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def quick_valid(doc) -> bool:
    """A fast, conservative version of the map schema: True only if the document is valid.
    (jsonschema is slow on a Pi; it runs only when this says no, to name the error's path.)"""
    if not isinstance(doc, dict) or not {"countries", "roads", "alliances"} <= doc.keys():
        return False
    if not doc.keys() <= {"game", "name", "transcription", "countries", "roads", "sea_routes", "alliances",
                          "card_colours", "photo"}:
        return False
    if "game" in doc and doc["game"] != "web-of-power":
        return False
    if "name" in doc and not (isinstance(doc["name"], str) and len(doc["name"]) <= 200):
        return False
    if "transcription" in doc:
        t = doc["transcription"]
        if not isinstance(t, dict) or not t.keys() <= {"status", "source", "notes"}:
            return False
        if "status" in t and t["status"] not in ("template", "partial", "complete"):
            return False
        if "source" in t and not (isinstance(t["source"], str) and len(t["source"]) <= 500):
            return False
        if "notes" in t and not (isinstance(t["notes"], list)
                                 and all(isinstance(x, str) and len(x) <= 1000 for x in t["notes"])):
            return False
    countries = doc["countries"]
    if not isinstance(countries, list) or not 1 <= len(countries) <= 20:
        return False
    for c in countries:
        if not isinstance(c, dict) or not {"id", "sites"} <= c.keys() \
                or not c.keys() <= {"id", "name", "sites", "site_count", "x", "y"}:
            return False
        if not _name(c["id"]) or ("name" in c and not (isinstance(c["name"], str) and len(c["name"]) <= 80)):
            return False
        if ("x" in c and not _num(c["x"])) or ("y" in c and not _num(c["y"])):
            return False
        if "site_count" in c and c["site_count"] is not None and not _int_in(c["site_count"], 0, 60):
            return False
        sites = c["sites"]
        if not isinstance(sites, list) or len(sites) > 60:
            return False
        for st in sites:
            if isinstance(st, str):
                if not _name(st):
                    return False
            elif isinstance(st, dict):
                if "id" not in st or not st.keys() <= {"id", "name", "x", "y"} or not _name(st["id"]):
                    return False
                if "name" in st and not (isinstance(st["name"], str) and len(st["name"]) <= 80):
                    return False
                if ("x" in st and not _num(st["x"])) or ("y" in st and not _num(st["y"])):
                    return False
            else:
                return False
    roads = doc["roads"]
    if roads is not None:
        if not isinstance(roads, list) or len(roads) > 1000:
            return False
        for r in roads:
            if not isinstance(r, list) or len(r) != 2 or not _name(r[0]) or not _name(r[1]):
                return False
    if "sea_routes" in doc:
        sea = doc["sea_routes"]
        if not isinstance(sea, list) or len(sea) > 200:
            return False
        for r in sea:
            if not isinstance(r, list) or len(r) != 2 or not _name(r[0]) or not _name(r[1]):
                return False
    if "photo" in doc:
        ph = doc["photo"]
        if not isinstance(ph, dict) or not {"mime", "data"} <= ph.keys() \
                or not ph.keys() <= {"mime", "data", "width", "height"} or ph["mime"] not in PHOTO_MIMES \
                or not isinstance(ph["data"], str) or len(ph["data"]) > 2900000:
            return False
        if any(k in ph and not _int_in(ph[k], 1, 20000) for k in ("width", "height")):
            return False
    alliances = doc["alliances"]
    if not isinstance(alliances, list) or len(alliances) > 40:
        return False
    for a in alliances:
        if not isinstance(a, dict) or not {"number", "countries"} <= a.keys() \
                or not a.keys() <= {"number", "countries", "sea_route"}:
            return False
        if not _int_in(a["number"], 1, 99) or ("sea_route" in a and not isinstance(a["sea_route"], bool)):
            return False
        pair = a["countries"]
        if pair is not None and not (isinstance(pair, list) and len(pair) == 2 and all(map(_name, pair))):
            return False
    if "card_colours" in doc:
        cc = doc["card_colours"]
        if not isinstance(cc, list) or len(cc) > 10:
            return False
        for k in cc:
            if not isinstance(k, dict) or k.keys() != {"countries", "cards"} or not _int_in(k["cards"], 0, 100):
                return False
            if not (isinstance(k["countries"], list) and 1 <= len(k["countries"]) <= 2
                    and all(map(_name, k["countries"]))):
                return False
    return True


def validate_doc(doc, base: str = "$") -> None:
    """Schema check; raises InputError with the JSON path below ``base``."""
    from companion.base.schemas import validate

    if quick_valid(doc):
        return
    try:
        validate("web-of-power.map", doc)
    except InputError as exc:
        raise exc.under(base) from None


def check(doc, base: str = "$") -> dict:
    """Schema check (raises on a malformed document), then the board's consistency.

    Returns ``{"errors": [...], "warnings": [...], "counts": {...}, "complete": bool}``; each
    problem is ``{"path", "message"}``. Errors make the board unusable for scoring; warnings say
    what is unknown or differs from what the rule book states."""
    validate_doc(doc, base)
    doc = integral(doc)
    errors: list[dict] = []
    warnings: list[dict] = []

    def err(path, msg):
        errors.append({"path": join_path(base, path), "message": msg})

    for i, c in enumerate(doc["countries"]):  # NaN/Infinity: Python's JSON reader accepts them
        for key in ("x", "y"):
            if not _finite(c.get(key)):
                err(f"$.countries[{i}].{key}", "must be a finite number")
        for j, st in enumerate(c["sites"]):
            for key in ("x", "y"):
                if isinstance(st, dict) and not _finite(st.get(key)):
                    err(f"$.countries[{i}].sites[{j}].{key}", "must be a finite number")

    def warn(path, msg):
        warnings.append({"path": join_path(base, path), "message": msg})

    countries = doc["countries"]
    ids = [c["id"] for c in countries]
    seen_country: dict[str, int] = {}
    site_country: dict[str, str] = {}
    n_sites = 0
    unknown_counts = []
    for i, c in enumerate(countries):
        if c["id"] in seen_country:
            err(f"$.countries[{i}].id", f"country {c['id']!r} is listed twice")
        seen_country.setdefault(c["id"], i)
        for j, s in enumerate(c["sites"]):
            sid = _site_id(s)
            n_sites += 1
            if sid in site_country:
                err(f"$.countries[{i}].sites[{j}]", f"site {sid!r} is listed twice")
            else:
                site_country[sid] = c["id"]
        count = c.get("site_count", len(c["sites"]))
        if count is None:
            unknown_counts.append(c["id"])
        elif count < len(c["sites"]):
            err(f"$.countries[{i}].site_count", f"{count} sites, but {len(c['sites'])} are listed")
        elif count > len(c["sites"]):
            warn(f"$.countries[{i}].sites",
                 f"{c['id']}: {count - len(c['sites'])} of {count} sites are not named yet")
        expected = BOOK_SITE_COUNTS.get(c["id"])
        if expected is not None and count is not None and count != expected:
            warn(f"$.countries[{i}].site_count", f"the rule book says {c['id']} has {expected} sites, not {count}")
        if not c["sites"] and count == 0:
            warn(f"$.countries[{i}].sites", f"{c['id']} has no sites")
    if unknown_counts:
        warn("$.countries", "site count unknown for " + ", ".join(unknown_counts))
    drawn = [isinstance(st, dict) and "x" in st and "y" in st for c in countries for st in c["sites"]]
    if any(drawn) and not all(drawn):
        unplaced = [_site_id(st) for c in countries for st in c["sites"]
                    if not (isinstance(st, dict) and "x" in st and "y" in st)]
        warn("$.countries", f"{len(unplaced)} site(s) not placed on the drawing yet: " + ", ".join(unplaced[:10])
             + (" ..." if len(unplaced) > 10 else ""))
    if len(countries) != 9:
        warn("$.countries", f"the board has 9 countries; this lists {len(countries)}")
    if sorted(ids) == sorted(BOOK_SCORING_ORDER) and ids != BOOK_SCORING_ORDER:
        warn("$.countries", "not in the rule book's scoring order: " + ", ".join(BOOK_SCORING_ORDER))
    elif set(ids) != set(BOOK_SCORING_ORDER) and len(countries) == 9:
        warn("$.countries", "country names differ from the rule book's: " + ", ".join(BOOK_SCORING_ORDER))

    roads = doc["roads"]
    n_roads = None
    if roads is None:
        warn("$.roads", "roads unknown: chains are entered by hand")
    else:
        pairs = set()
        degree: dict[str, int] = {}
        for k, (a, b) in enumerate(roads):
            bad = False
            for end, sid in enumerate((a, b)):
                if sid not in site_country:
                    err(f"$.roads[{k}][{end}]", f"unknown site {sid!r}")
                    bad = True
            if a == b:
                err(f"$.roads[{k}]", f"a road from {a!r} to itself")
                bad = True
            if bad:
                continue
            key = frozenset((a, b))
            if key in pairs:
                warn(f"$.roads[{k}]", f"road {a!r}-{b!r} is listed twice")
            pairs.add(key)
            degree[a] = degree.get(a, 0) + 1
            degree[b] = degree.get(b, 0) + 1
        n_roads = len(pairs)
        lonely = [s for s in site_country if s not in degree]
        if lonely:
            warn("$.roads", f"{len(lonely)} site(s) on no road: " + ", ".join(lonely[:10])
                 + (" ..." if len(lonely) > 10 else ""))
        comps = _components(site_country, pairs)
        if len(comps) > 1 and not lonely:
            warn("$.roads", f"the road network falls into {len(comps)} separate parts")

    for k, (a, b) in enumerate(doc.get("sea_routes") or []):
        for end, sid in enumerate((a, b)):
            if sid not in site_country:
                err(f"$.sea_routes[{k}][{end}]", f"unknown site {sid!r}")
        if a == b:
            err(f"$.sea_routes[{k}]", f"a sea route from {a!r} to itself")
        elif roads is not None and [a, b] in roads or roads is not None and [b, a] in roads:
            warn(f"$.sea_routes[{k}]", f"{a!r}-{b!r} is both a road and a sea route (a sea route is not a road)")

    numbers_seen: dict[int, int] = {}
    pairs_seen: dict[frozenset, int] = {}
    known_alliances = 0
    for k, a in enumerate(doc["alliances"]):
        num = a["number"]
        if num in numbers_seen:
            err(f"$.alliances[{k}].number", f"alliance {num} is listed twice")
        numbers_seen.setdefault(num, k)
        pair = a["countries"]
        if pair is None:
            continue
        ok = True
        for end, cid in enumerate(pair):
            if cid not in seen_country:
                err(f"$.alliances[{k}].countries[{end}]", f"unknown country {cid!r}")
                ok = False
        if pair[0] == pair[1]:
            err(f"$.alliances[{k}].countries", "an alliance joins two different countries")
            ok = False
        if not ok:
            continue
        known_alliances += 1
        key = frozenset(pair)
        if key in pairs_seen:
            warn(f"$.alliances[{k}]", f"alliance {num} joins the same countries as alliance {pairs_seen[key]}")
        pairs_seen.setdefault(key, num)
        book = BOOK_ALLIANCES.get(num)
        if book is not None and frozenset(book) != key and set(book) <= set(ids):
            warn(f"$.alliances[{k}].countries", f"the rule book says alliance {num} is {book[0]}-{book[1]}")
    for k, a in enumerate(doc["alliances"]):
        book_sea = a["number"] in BOOK_SEA_ROUTES
        if "sea_route" in a and a["sea_route"] != book_sea and set(ids) == set(BOOK_SCORING_ORDER):
            warn(f"$.alliances[{k}].sea_route", f"the rule book says alliance {a['number']} "
                 + ("crosses water (a sea route)" if book_sea else "is not a sea route"))
    unknown_alliances = [a["number"] for a in doc["alliances"] if a["countries"] is None]
    if unknown_alliances:
        warn("$.alliances", "countries unknown for alliance(s) " + ", ".join(map(str, unknown_alliances))
             + ": they score nothing until transcribed")
    numbers = sorted(numbers_seen)
    if numbers != list(range(1, BOOK_ALLIANCE_COUNT + 1)):
        warn("$.alliances", f"the board has alliances numbered 1-{BOOK_ALLIANCE_COUNT}; this lists "
             + (", ".join(map(str, numbers)) or "none"))
    if [a["number"] for a in doc["alliances"]] != sorted(a["number"] for a in doc["alliances"]):
        warn("$.alliances", "not in numeric order (they are scored in numeric order anyway)")

    for k, cc in enumerate(doc.get("card_colours") or []):
        for end, cid in enumerate(cc["countries"]):
            if cid not in seen_country:
                err(f"$.card_colours[{k}].countries[{end}]", f"unknown country {cid!r}")
    if "card_colours" in doc and set(ids) == set(BOOK_SCORING_ORDER):
        given = sorted((tuple(sorted(cc["countries"])), cc["cards"]) for cc in doc["card_colours"])
        if given != sorted((tuple(sorted(c)), n) for c, n in BOOK_CARD_COLOURS):
            warn("$.card_colours", "the rule book's card colours are: " + "; ".join(
                f"{'-'.join(c)} {n} cards" for c, n in BOOK_CARD_COLOURS))

    status = (doc.get("transcription") or {}).get("status")
    complete = (not unknown_counts and roads is not None and not unknown_alliances
                and all(c.get("site_count", len(c["sites"])) == len(c["sites"]) for c in countries))
    if status == "complete" and not complete:
        warn("$.transcription.status", "says complete, but some data is unknown")
    counts = {
        "countries": len(countries),
        "sites": n_sites,
        "sites_expected": None if unknown_counts else sum(c.get("site_count", len(c["sites"])) for c in countries),
        "roads": n_roads,
        "alliances": len(doc["alliances"]),
        "alliances_known": known_alliances,
    }
    return {"errors": errors, "warnings": warnings, "counts": counts, "complete": complete,
            "status": status or ("complete" if complete else "partial")}


def _components(sites, pairs) -> list[set]:
    adj: dict[str, set] = {s: set() for s in sites}
    for p in pairs:
        a, b = tuple(p)
        adj[a].add(b)
        adj[b].add(a)
    seen: set = set()
    out = []
    for s in adj:
        if s in seen:
            continue
        comp = {s}
        stack = [s]
        while stack:
            for n in adj[stack.pop()]:
                if n not in comp:
                    comp.add(n)
                    stack.append(n)
        seen |= comp
        out.append(comp)
    return out


def check_map(doc, **_opts) -> dict:
    """``companion map check FILE --game web-of-power``: the JSON report."""
    report = check(doc)
    return {"game": "web-of-power", "ok": not report["errors"], **report}


def normalize(doc, base: str = "$") -> dict:
    """Check a board document and return the engine's compact form; a board with errors
    raises InputError naming the first one."""
    report = check(doc, base)
    if report["errors"]:
        first = report["errors"][0]
        raise InputError(first["message"], first["path"])
    doc = integral(doc)
    countries = [c["id"] for c in doc["countries"]]
    sites = {c["id"]: [_site_id(s) for s in c["sites"]] for c in doc["countries"]}
    capacity = {c["id"]: c.get("site_count", len(c["sites"])) for c in doc["countries"]}
    site_country = {s: c for c, ss in sites.items() for s in ss}
    roads = None
    if doc["roads"] is not None:
        seen = set()
        roads = []
        for a, b in doc["roads"]:
            key = frozenset((a, b))
            if key not in seen:
                seen.add(key)
                roads.append([a, b])
    alliances = sorted(({"number": a["number"], "countries": list(a["countries"]) if a["countries"] else None}
                        for a in doc["alliances"]), key=lambda a: a["number"])
    return {
        "name": doc.get("name", ""),
        "status": report["status"],
        "complete": report["complete"],
        "countries": countries,
        "sites": sites,
        "capacity": capacity,
        "site_country": site_country,
        "roads": roads,
        "alliances": alliances,
        "card_colours": [dict(cc) for cc in doc.get("card_colours") or []],
    }


# ---------------------------------------------------------------------------------------------
# SVG


def map_svg(doc) -> str:
    """A self-contained SVG of the board. Sites with coordinates are drawn where they are;
    otherwise each country is a box in a grid (scoring order) with its sites on a circle.
    Roads are lines, alliances dashed lines between the countries' coats of arms (numbered),
    sites not named yet are hollow circles marked "?"."""
    validate_doc(doc)
    doc = integral(doc)
    countries = doc["countries"]
    n = len(countries)
    cols = 3 if n <= 9 else math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    box_w, box_h, pad, top = 300, 260, 20, 60
    width = cols * box_w + (cols + 1) * pad
    height = top + rows * box_h + (rows + 1) * pad + 30

    # positions: sites with x, y are used as given when every site has them, else laid out
    all_sites = [s for c in countries for s in c["sites"]]
    use_coords = bool(all_sites) and all(isinstance(s, dict) and "x" in s and "y" in s
                                         and _finite(s["x"]) and _finite(s["y"]) for s in all_sites) \
        and all(_finite(c.get("x")) and _finite(c.get("y")) for c in countries)
    pos: dict[str, tuple[float, float]] = {}
    centre: dict[str, tuple[float, float]] = {}
    placeholders: list[tuple[float, float]] = []
    boxes = []
    if use_coords:
        xs = [s["x"] for s in all_sites] + [c["x"] for c in countries if "x" in c]
        ys = [s["y"] for s in all_sites] + [c["y"] for c in countries if "y" in c]
        minx, maxx, miny, maxy = min(xs), max(xs), min(ys), max(ys)
        # halves: the span of coordinates near +-1e308 would overflow to infinity
        span = max(maxx / 2 - minx / 2, maxy / 2 - miny / 2) or 1.0
        scale = (min(width, height - top) - 2 * pad - 40) / span

        def tr(x, y):
            return pad + 20 + (x / 2 - minx / 2) * scale, top + pad + (y / 2 - miny / 2) * scale

        for c in countries:
            pts = []
            for s in c["sites"]:
                pos[s["id"]] = tr(s["x"], s["y"])
                pts.append(pos[s["id"]])
            if "x" in c and "y" in c:
                centre[c["id"]] = tr(c["x"], c["y"])
            elif pts:
                centre[c["id"]] = (sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts))
            else:
                centre[c["id"]] = (pad, top)
    else:
        for i, c in enumerate(countries):
            col, row = i % cols, i // cols
            x0 = pad + col * (box_w + pad)
            y0 = top + pad + row * (box_h + pad)
            boxes.append((c, x0, y0))
            cx, cy = x0 + box_w / 2, y0 + box_h / 2 + 10
            centre[c["id"]] = (cx, cy)
            count = c.get("site_count", len(c["sites"]))
            total = max(len(c["sites"]), count or 0)
            r = min(box_w, box_h) / 2 - 45
            for k in range(total):
                ang = -math.pi / 2 + 2 * math.pi * k / max(total, 1)
                p = (cx + r * math.cos(ang), cy + r * math.sin(ang))
                if k < len(c["sites"]):
                    pos[_site_id(c["sites"][k])] = p
                else:
                    placeholders.append(p)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="#fbf8f0"/>']
    title = doc.get("name") or "Web of Power board"
    status = (doc.get("transcription") or {}).get("status", "")
    out.append(f'<text x="{pad}" y="28" font-size="18" font-weight="bold">{escape(title)}</text>')
    if status and status != "complete":
        out.append(f'<text x="{pad}" y="48" fill="#a03000">transcription {escape(status)}: '
                   'hollow "?" circles are sites not named yet; missing lines are unknown roads/alliances</text>')
    for c, x0, y0 in boxes:
        out.append(f'<rect x="{x0}" y="{y0}" width="{box_w}" height="{box_h}" rx="10" fill="#fff" '
                   f'stroke="#888"/>')
        count = c.get("site_count", len(c["sites"]))
        label = f"{c.get('name', c['id'])} ({'?' if count is None else count} sites)"
        out.append(f'<text x="{x0 + 10}" y="{y0 + 20}" font-weight="bold">{escape(label)}</text>')
    # alliances
    for a in sorted(doc["alliances"], key=lambda a: a["number"]):
        if not a["countries"] or any(cid not in centre for cid in a["countries"]):
            continue
        (x1, y1), (x2, y2) = centre[a["countries"][0]], centre[a["countries"][1]]
        dash = "2,4" if a.get("sea_route") else "8,5"
        out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#3060c0" '
                   f'stroke-width="2" stroke-dasharray="{dash}" opacity="0.6"/>')
        mx, my = (x1 + x2) / 2, (y1 + y2) / 2
        out.append(f'<rect x="{mx - 11:.1f}" y="{my - 10:.1f}" width="22" height="18" fill="#3060c0"/>')
        out.append(f'<text x="{mx:.1f}" y="{my + 4:.1f}" text-anchor="middle" fill="#fff">{a["number"]}</text>')
    # roads
    for a, b in doc["roads"] or []:
        if a in pos and b in pos and a != b:
            (x1, y1), (x2, y2) = pos[a], pos[b]
            out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#7a5a30" '
                       f'stroke-width="3"/>')
    for a, b in doc.get("sea_routes") or []:
        if a in pos and b in pos and a != b:
            (x1, y1), (x2, y2) = pos[a], pos[b]
            out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#2070c0" '
                       f'stroke-width="2" stroke-dasharray="6,4"/>')
    # coats of arms (councillors), labelled with the shortest unambiguous prefix
    def short(cid):
        for k in range(3, len(cid) + 1):
            if not any(o != cid and o.startswith(cid[:k]) for o in centre):
                return cid[:k]
        return cid

    for cid, (x, y) in centre.items():
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="13" fill="#e8d48a" stroke="#806000"/>')
        out.append(f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" font-size="9">{escape(short(cid))}</text>')
    # sites
    for c in countries:
        for s in c["sites"]:
            sid = _site_id(s)
            x, y = pos[sid]
            name = s.get("name", sid) if isinstance(s, dict) else sid
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="8" fill="#c04030" stroke="#400" '
                       f'data-site="{escape(sid, _QUOTE)}"/>')
            out.append(f'<text x="{x:.1f}" y="{y - 12:.1f}" text-anchor="middle">{escape(name)}</text>')
    for x, y in placeholders:
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="8" fill="none" stroke="#999" stroke-dasharray="2,2"/>')
        out.append(f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" fill="#999">?</text>')
    roads_note = "roads unknown" if doc["roads"] is None else f"{len(doc['roads'])} roads"
    known = sum(1 for a in doc["alliances"] if a["countries"])
    out.append(f'<text x="{pad}" y="{height - 12}" fill="#555">{len(all_sites)} sites named, {roads_note}, '
               f'{known} of {len(doc["alliances"])} alliances known; dotted alliance lines are sea routes</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def __getattr__(name):
    # ``BOARD_FILE`` as a Path, made when asked for: a CLI start reads the file without importing pathlib
    if name == "BOARD_FILE":
        from pathlib import Path

        return Path(_BOARD_FILE)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
