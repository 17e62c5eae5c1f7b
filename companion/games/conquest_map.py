"""The map of the conquest game: loading, checking (``companion map check``) and drawing (SVG).

A map document follows ``schemas/conquest-italy.map.schema.json``. The package ships a DEFAULT map
(``companion/games/data/conquest-italy.map.json``): 42 Italian cities in 7 macro-regions from real
geography, each city's value its number of neighbours. It is not the club's printed board (which is
not public): a club replaces it with its own file. Pure code; the only file read is the default map.
"""

from __future__ import annotations

import functools
import math
import os

from companion.base.errors import InputError, join_path
from companion.base.jsonio import loads
from companion.games import xml_escape as escape

SYMBOLS = ("basil", "mozzarella", "tomato")
JOKER_PREFIX = "joker:"
DEFAULT_CITIES = 42
_MAP_FILE = os.path.join(os.path.dirname(os.path.realpath(__file__)), "data", "conquest-italy.map.json")
SET_KINDS = ("three_basil", "three_mozzarella", "three_tomato", "joker_two_alike", "joker_two_different",
             "two_jokers", "three_jokers")


class GameMap:
    """A checked map, indexed for the rules. Built by :func:`compile_map`; treat as read-only."""

    def __init__(self, doc: dict):
        self.doc = doc
        self.name = doc.get("name", "")
        self.regions = []  # [{"name", "bonus", "cities": [names]}]
        self.cities: list[str] = []
        self.city: dict[str, dict] = {}  # name -> {"region", "card", "value", "lon", "lat"}
        land: dict[str, set] = {}
        sea: dict[str, set] = {}
        for r in doc["regions"]:
            names = [c["name"] for c in r["cities"]]
            # int(): a checked document may hold 3.0 (JSON Schema's "integer"); results stay whole numbers
            self.regions.append({"name": r["name"], "bonus": int(r["bonus"]), "cities": names})
            for c in r["cities"]:
                self.cities.append(c["name"])
                self.city[c["name"]] = {"region": r["name"], "card": c["card"], "value": int(c["value"]),
                                        "lon": c.get("lon"), "lat": c.get("lat")}
                land[c["name"]] = set(c["borders"])
                sea[c["name"]] = set(c.get("sea", []))
        self.land = {k: frozenset(v) for k, v in land.items()}
        self.sea = {k: frozenset(v) for k, v in sea.items()}
        self.neighbours = {k: self.land[k] | self.sea[k] for k in self.cities}
        self.values = {k: v["value"] for k, v in self.city.items()}  # name -> value (``value``, for sums)
        self.airports = tuple(doc.get("airports", []))
        self.region = {r["name"]: r for r in self.regions}
        sets = doc.get("sets", {})
        self.sets = {k: None if sets.get(k) is None else int(sets[k]) for k in SET_KINDS}
        self.cards = tuple(self.cities) + tuple(JOKER_PREFIX + a for a in self.airports)

    def value(self, city: str) -> int:
        return self.city[city]["value"]

    def region_of(self, city: str) -> str:
        return self.city[city]["region"]

    def majority_limit(self, region: str) -> int:
        """The most cities of a region one player may be dealt: half, rounded down."""
        return len(self.region[region]["cities"]) // 2

    def can_attack(self, src: str, dst: str) -> str | None:
        """How ``src`` can attack ``dst``: "land", "sea", "air" (airport to airport) or None."""
        if dst in self.land[src]:
            return "land"
        if dst in self.sea[src]:
            return "sea"
        if src != dst and src in self.airports and dst in self.airports:
            return "air"
        return None

    def card_city(self, card: str) -> str:
        return card[len(JOKER_PREFIX):] if card.startswith(JOKER_PREFIX) else card

    def card_symbol(self, card: str) -> str:
        return "pizza" if card.startswith(JOKER_PREFIX) else self.city[card]["card"]


# -- checking ------------------------------------------------------------------------------------

def _problems(doc: dict, cities: int | None) -> tuple[list[tuple[str, str]], list[str]]:
    """(errors as (path, message), warnings) of a schema-valid map document."""
    errors: list[tuple[str, str]] = []
    warnings: list[str] = []
    where: dict[str, str] = {}
    region_names: dict[str, int] = {}
    for ri, r in enumerate(doc["regions"]):
        if r["name"] in region_names:
            errors.append((f"$.regions[{ri}].name", f"region {r['name']!r} is named twice"))
        region_names[r["name"]] = ri
        for ci, c in enumerate(r["cities"]):
            path = f"$.regions[{ri}].cities[{ci}]"
            if c["name"] in where:
                errors.append((path + ".name", f"city {c['name']!r} is listed twice (also at {where[c['name']]})"))
            else:
                where[c["name"]] = path
    by_name = {c["name"]: c for r in doc["regions"] for c in r["cities"]}
    asymmetric = []  # reported after the unknown names, which usually cause them
    for name, path in where.items():
        c = by_name[name]
        for key in ("borders", "sea"):
            for k, other in enumerate(c.get(key, [])):
                p = f"{path}.{key}[{k}]"
                if other == name:
                    errors.append((p, f"{name!r} cannot border itself"))
                elif other not in by_name:
                    errors.append((p, f"unknown city {other!r}"))
                elif name not in by_name[other].get(key, []):
                    kind = "border" if key == "borders" else "sea route"
                    asymmetric.append((p, f"{kind} not symmetric: {other!r} does not list {name!r} in its {key!r}"))
        both = set(c["borders"]) & set(c.get("sea", []))
        if both:
            errors.append((path + ".sea", f"{sorted(both)[0]!r} is both a land border and a sea route"))
        if ("lon" in c) != ("lat" in c):
            errors.append((path, "give both lon and lat, or neither"))
    errors += asymmetric
    for k, a in enumerate(doc.get("airports", [])):
        if a not in by_name:
            errors.append((f"$.airports[{k}]", f"unknown city {a!r}"))
    expected = DEFAULT_CITIES if cities is None else cities
    if len(by_name) != expected:
        errors.append(("$.regions", f"the map has {len(by_name)} cities, {expected} expected "
                                    f"(say --cities N for a different board)"))
    if not errors and by_name:
        # connected over land borders and sea routes
        start = next(iter(by_name))
        seen = {start}
        todo = [start]
        while todo:
            c = by_name[todo.pop()]
            for n in list(c["borders"]) + list(c.get("sea", [])):
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        if len(seen) != len(by_name):
            cut = sorted(set(by_name) - seen)
            errors.append((where[cut[0]], f"the map is not connected: {len(cut)} cities cannot be reached "
                                          f"from {start!r} by land or sea ({', '.join(cut[:5])}"
                                          f"{', ...' if len(cut) > 5 else ''})"))
    if not errors:
        for name, path in where.items():
            c = by_name[name]
            degree = len(set(c["borders"]) | set(c.get("sea", [])))
            if c["value"] != degree:
                warnings.append(f"{path}.value: {name} is worth {c['value']} but has {degree} neighbours "
                                f"(the rule book: a city's value is its number of borders)")
        counts = {s: 0 for s in SYMBOLS}
        for c in by_name.values():
            counts[c["card"]] += 1
        if len(set(counts.values())) > 1:
            warnings.append("the territory cards are not evenly split: " +
                            ", ".join(f"{counts[s]} {s}" for s in SYMBOLS))
        if "airports" not in doc:
            warnings.append("no airports: nothing can be attacked by air, and there are no pizza jokers")
        sets = doc.get("sets", {})
        missing = [k for k in SET_KINDS[:4] if sets.get(k) is None]
        if missing:
            warnings.append("no value for the sets " + ", ".join(missing) +
                            ": only basil + mozzarella + tomato (and the sets given) can be traded")
        if not any(c.get("lon") is not None for c in by_name.values()):
            warnings.append("no lon/lat: the drawing places the cities on a circle")
    return errors, warnings


def validate_map(doc, cities: int | None = None, where: str = "$") -> list[str]:
    """Schema and rule checks; raises InputError (first problem, JSON path prefixed by ``where``);
    returns the warnings."""
    from companion.base.schemas import validate

    try:
        validate("conquest-italy.map", doc)
        errors, warnings = _problems(doc, cities)
    except InputError as exc:
        raise exc.under(where) from None
    if errors:
        path, message = errors[0]
        more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
        raise InputError(message + more, join_path(where, path))
    return warnings


def compile_map(doc, cities: int | None = None, where: str = "$") -> GameMap:
    validate_map(doc, cities=cities, where=where)
    return GameMap(doc)


@functools.cache
def default_map_doc_text() -> str:
    with open(_MAP_FILE, encoding="utf-8") as fh:
        return fh.read()


def default_map_doc() -> dict:
    """A fresh copy of the default map document."""
    return loads(default_map_doc_text())


@functools.cache
def default_map() -> GameMap:
    # The shipped file is checked by the tests; trust it here (no jsonschema import on the fast path).
    return GameMap(default_map_doc())


_CACHE: dict[int, tuple[dict, GameMap]] = {}


def map_of(doc: dict | None) -> GameMap:
    """The compiled map of a (checked) document held in a match state; None = the default map.
    Cached by identity: states share the document object from event to event."""
    if doc is None:
        return default_map()
    hit = _CACHE.get(id(doc))
    if hit is not None and hit[0] is doc:
        return hit[1]
    gm = GameMap(doc)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[id(doc)] = (doc, gm)
    return gm


def check_map(doc, cities: int | None = None) -> dict:
    """``companion map check``: validate the map (InputError naming the JSON path) and report it."""
    if not isinstance(doc, dict):
        raise InputError("a map is a JSON object", "$")
    if cities is not None and (isinstance(cities, bool) or not isinstance(cities, int) or cities < 1):
        raise InputError("must be a whole number of cities >= 1", "--cities")
    warnings = validate_map(doc, cities=cities)
    gm = GameMap(doc)
    land = sum(len(v) for v in gm.land.values()) // 2
    sea = sum(len(v) for v in gm.sea.values()) // 2
    cards = {s: 0 for s in SYMBOLS}
    for c in gm.cities:
        cards[gm.city[c]["card"]] += 1
    return {
        "ok": True,
        "game": "conquest-italy",
        "name": gm.name,
        "cities": len(gm.cities),
        "regions": [{"name": r["name"], "bonus": r["bonus"], "cities": len(r["cities"]),
                     "majority_limit": gm.majority_limit(r["name"]),
                     "value": sum(gm.value(c) for c in r["cities"])} for r in gm.regions],
        "land_borders": land,
        "sea_routes": sea,
        "airports": list(gm.airports),
        "cards": {**cards, "pizza": len(gm.airports)},
        "sets": {"basil_mozzarella_tomato": 10, **{k: v for k, v in gm.sets.items() if v is not None},
                 "per_held_city": 2},
        "total_value": sum(gm.value(c) for c in gm.cities),
        "warnings": warnings,
    }


# -- drawing -------------------------------------------------------------------------------------

PALETTE = ("#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#008080", "#9a6324", "#800000",
           "#808000", "#000075", "#f032e6", "#469990")
CARD_MARK = {"basil": "B", "mozzarella": "M", "tomato": "T"}


def _positions(gm: GameMap, width: float, height: float, margin: float) -> dict[str, tuple[float, float]]:
    placed = {c: (gm.city[c]["lon"], gm.city[c]["lat"]) for c in gm.cities if gm.city[c]["lon"] is not None}
    missing = [c for c in gm.cities if c not in placed]
    if missing:  # no coordinates: a circle, region by region
        n = len(gm.cities)
        raw = {}
        for k, c in enumerate(gm.cities):
            t = 2 * math.pi * k / n
            raw[c] = (math.cos(t), -math.sin(t))
        return _fit(raw, width, height, margin, flip=False)
    lats = [p[1] for p in placed.values()]
    kx = math.cos(math.radians(sum(lats) / len(lats)))  # equirectangular at the mean latitude
    return _fit({c: (p[0] * kx, p[1]) for c, p in placed.items()}, width, height, margin, flip=True)


def _fit(raw, width, height, margin, flip):
    """Scale points into the drawing area, keeping their proportions (north up when ``flip``)."""
    xs = [p[0] for p in raw.values()]
    ys = [p[1] for p in raw.values()]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    sx = (width - 2 * margin) / ((x1 - x0) or 1)
    sy = (height - 2 * margin) / ((y1 - y0) or 1)
    s = min(sx, sy)
    out = {}
    for c, (x, y) in raw.items():
        px = margin + (x - x0) * s
        py = margin + ((y1 - y) if flip else (y - y0)) * s
        out[c] = (round(px, 1), round(py, 1))
    return out


def _count_cities(doc: dict) -> int | None:
    regions = doc.get("regions")
    if not isinstance(regions, list):
        return None
    return sum(len(r["cities"]) for r in regions
               if isinstance(r, dict) and isinstance(r.get("cities"), list)) or None


def map_svg(doc) -> str:
    """A self-contained SVG drawing of the map: cities coloured by macro-region with their value and card
    symbol, land borders (grey), sea routes (dashed blue), airports (square), and a legend."""
    if not isinstance(doc, dict):
        raise InputError("a map is a JSON object", "$")
    validate_map(doc, cities=_count_cities(doc))  # any number of cities can be drawn
    gm = GameMap(doc)
    width, height, margin = 1120.0, 1000.0, 50.0
    pos = _positions(gm, width - 250, height, margin)
    colour = {r["name"]: PALETTE[k % len(PALETTE)] for k, r in enumerate(gm.regions)}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{int(width)}" height="{int(height)}" '
           f'viewBox="0 0 {int(width)} {int(height)}" font-family="sans-serif" font-size="11">',
           f"<title>{escape(gm.name or 'conquest-italy map')}</title>",
           '<rect width="100%" height="100%" fill="#f4f8fb"/>']
    drawn = set()
    for kind, table, style in (("land", gm.land, 'stroke="#888" stroke-width="1.5"'),
                               ("sea", gm.sea, 'stroke="#1f77b4" stroke-width="1.5" stroke-dasharray="6 4"')):
        for a in gm.cities:
            for b in sorted(table[a]):
                key = (kind,) + tuple(sorted((a, b)))
                if key in drawn:
                    continue
                drawn.add(key)
                (x1, y1), (x2, y2) = pos[a], pos[b]
                out.append(f'<line class="{kind}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" {style}/>')
    for c in gm.cities:
        x, y = pos[c]
        info = gm.city[c]
        fill = colour[info["region"]]
        if c in gm.airports:
            out.append(f'<rect class="airport" x="{x - 10}" y="{y - 10}" width="20" height="20" fill="{fill}" '
                       f'stroke="#000" stroke-width="2"/>')
        else:
            out.append(f'<circle class="city" cx="{x}" cy="{y}" r="9" fill="{fill}" stroke="#222"/>')
        out.append(f'<text x="{x}" y="{y + 4}" text-anchor="middle" fill="#fff" font-weight="bold">'
                   f'{info["value"]}</text>')
        out.append(f'<text x="{x + 12}" y="{y - 6}" fill="#111">{escape(c)} '
                   f'<tspan fill="#555">({CARD_MARK[info["card"]]})</tspan></text>')
    lx = width - 240
    out.append(f'<text x="{lx}" y="30" font-size="14" font-weight="bold">{escape(gm.name or "map")}</text>')
    y = 55
    for r in gm.regions:
        out.append(f'<rect x="{lx}" y="{y - 10}" width="12" height="12" fill="{colour[r["name"]]}"/>')
        out.append(f'<text x="{lx + 18}" y="{y}">{escape(r["name"])}: +{r["bonus"]} '
                   f'({len(r["cities"])} cities)</text>')
        y += 18
    y += 10
    for line in ("number = city value", "B/M/T = basil/mozzarella/tomato card", "square = airport (pizza joker)",
                 "grey = land border", "dashed blue = sea route", "sets: B+M+T = 10"):
        out.append(f'<text x="{lx}" y="{y}">{escape(line)}</text>')
        y += 16
    for k in SET_KINDS:
        v = gm.sets.get(k)
        if v is not None:
            out.append(f'<text x="{lx}" y="{y}">{escape(k.replace("_", " "))} = {v}</text>')
            y += 16
    out.append(f'<text x="{lx}" y="{y}">+2 per traded card of a held city</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def __getattr__(name):
    # ``DEFAULT_MAP_PATH`` as a Path, made when asked for: a CLI start reads the file without importing pathlib
    if name == "DEFAULT_MAP_PATH":
        from pathlib import Path

        return Path(_MAP_FILE)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
