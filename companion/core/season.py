"""The fan club's annual championship ("CLASSIFICA ANNUALE - CAMPIONATO FAN CLUB"): pure, no I/O.

Rulings (``docs/rulings.md#fan-club-championship``; they win over the rule book where it is silent):

- Points per match by number of players and place (club settings, these are the defaults):
  3 players +1, 0, -1 (not in the book); 4 players +2, +1, -1, -2; 5 players +2, +1, 0, -1, -2;
  6 players +3, +2, +1, -1, -2, -3.
- Bonuses: +1 for completing the objective during the match, -0.5 for being eliminated ("ucciso").
- Players sharing a place share the mean of the points of the places they cover: two tied for 2nd
  in a 4-player match cover places 2 and 3 and each get (+1 + -1) / 2 = 0. Places follow the usual
  "1, 2, 2, 4" convention: the place after a tie skips the places the tie covers.
- To be ranked a player must have played at least ``threshold`` (default 30%) of the season's
  matches, exactly: ``played * den >= num * total`` (3 of 10 qualifies, 3 of 11 does not).
  ``needs`` is the least number k of further matches such that a player who plays the season's next
  k matches reaches the threshold: ``(played + k) / (total + k) >= threshold`` (null when no k can,
  i.e. a 100% threshold already missed).
- Ranked players: by points, then by wins (1st places, shared 1st places included); still equal,
  the same rank (1, 2, 2, 4). Unranked players come after them, in the same order, with rank null.

Every sum is exact (``fractions.Fraction``); numbers leave as JSON ints when whole, floats otherwise.
The OpenSkill (Weng-Lin, Plackett-Luce) ratings are an extra shown beside the standings, never
replacing them; they depend on the order of the matches (by date, then id), the standings do not.
"""

from __future__ import annotations

import csv
import functools
import io
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

from companion.base.errors import InputError, join_path
from companion.games import GAMES

DEFAULT_POINTS: dict[int, tuple[Fraction, ...]] = {
    3: (Fraction(1), Fraction(0), Fraction(-1)),
    4: (Fraction(2), Fraction(1), Fraction(-1), Fraction(-2)),
    5: (Fraction(2), Fraction(1), Fraction(0), Fraction(-1), Fraction(-2)),
    6: (Fraction(3), Fraction(2), Fraction(1), Fraction(-1), Fraction(-2), Fraction(-3)),
}
DEFAULT_OBJECTIVE_BONUS = Fraction(1)
DEFAULT_ELIMINATED_BONUS = Fraction(-1, 2)
DEFAULT_THRESHOLD = Fraction(3, 10)

SETTINGS_KEYS = ("points", "threshold", "bonus")


def escape(value: str) -> str:
    """XML text/attribute escaping (what xml.sax.saxutils does, without importing it)."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


# -- numbers ----------------------------------------------------------------------------------

def exact(value) -> Fraction:
    """A JSON number as the decimal it spells: 0.3 -> 3/10 (never the binary float's value)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise TypeError(f"not a finite number: {value!r}")
    return Fraction(value) if isinstance(value, int) else Fraction(repr(value))


def num(value: Fraction):
    """JSON form of an exact number: an int when whole, else the nearest float."""
    if value.denominator == 1:
        return int(value.numerator)
    return float(value)


def text(value: Fraction, places: int = 2) -> str:
    """Display form: the exact decimal when it is short (1.5, -0.25), else rounded (-0.67)."""
    if value.denominator == 1:
        return str(value.numerator)
    d = value.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d == 1:
        s = f"{float(value):.6f}".rstrip("0").rstrip(".")
        if len(s.split(".")[1]) <= places + 1:
            return s
    return f"{float(value):.{places}f}"


# -- rules --------------------------------------------------------------------------------------

@dataclass
class Rules:
    """Points tables by number of players, bonuses and the eligibility threshold."""

    points: dict[int, tuple[Fraction, ...]] = field(default_factory=lambda: dict(DEFAULT_POINTS))
    objective: Fraction = DEFAULT_OBJECTIVE_BONUS
    eliminated: Fraction = DEFAULT_ELIMINATED_BONUS
    threshold: Fraction = DEFAULT_THRESHOLD
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def table(self, n: int) -> tuple[Fraction, ...] | None:
        return self.points.get(n)

    def shared(self, n: int, place: int, tied: int) -> Fraction:
        """Points of each of ``tied`` players sharing ``place`` in an ``n``-player match."""
        key = (n, place, tied)
        v = self._cache.get(key)
        if v is None:
            covered = self.points[n][place - 1: place - 1 + tied]
            v = sum(covered, Fraction(0)) / tied
            self._cache[key] = v
        return v

    def value(self, n: int, place: int, tied: int, objective: bool, eliminated: bool) -> Fraction:
        v = self.shared(n, place, tied)
        if objective:
            v += self.objective
        if eliminated:
            v += self.eliminated
        return v

    def to_json(self) -> dict:
        return {
            "points": {str(n): [num(x) for x in t] for n, t in sorted(self.points.items())},
            "threshold": num(self.threshold),
            "bonus": {"objective": num(self.objective), "eliminated": num(self.eliminated)},
        }

    def with_settings(self, settings: dict | None, where: str = "$") -> "Rules":
        """These rules overridden by a settings object ``{"points"?, "threshold"?, "bonus"?}``
        (already schema-valid); a table given replaces the table of that player count only."""
        if not settings:
            return self
        points = dict(self.points)
        for key, table in (settings.get("points") or {}).items():
            n = _table_size(key, f"{where}.points")
            path = f'{where}.points["{key}"]'
            if not isinstance(table, list) or len(table) != n:
                raise InputError("a table for {n} players needs {n} numbers, one per place", path, n=n)
            try:
                points[n] = tuple(exact(x) for x in table)
            except TypeError:
                raise InputError("must be a list of numbers", path) from None
        bonus = settings.get("bonus") or {}
        objective, eliminated, threshold = self.objective, self.eliminated, self.threshold
        try:
            if "objective" in bonus:
                objective = exact(bonus["objective"])
            if "eliminated" in bonus:
                eliminated = exact(bonus["eliminated"])
        except TypeError:
            raise InputError("bonuses must be numbers", f"{where}.bonus") from None
        if "threshold" in settings and settings["threshold"] is not None:
            try:
                threshold = exact(settings["threshold"])
            except TypeError:
                raise InputError("must be a number from 0 to 1", f"{where}.threshold") from None
            if not 0 <= threshold <= 1:
                raise InputError("must be a number from 0 to 1 (0.3 is 30%)", f"{where}.threshold")
        return Rules(points, objective, eliminated, threshold)


def _table_size(key: str, where: str) -> int:
    if not isinstance(key, str) or not key.isdigit() or not 2 <= int(key) <= 99:
        raise InputError("a points table is keyed by the number of players (2..99), not {key!r}", where, key=key)
    return int(key)


def rules_from(*settings: dict | None, where: str = "$") -> Rules:
    """Defaults overridden by each settings object in turn (club, then season, then document)."""
    rules = Rules()
    for s in settings:
        rules = rules.with_settings(s, where)
    return rules


# -- places -------------------------------------------------------------------------------------

def check_places(places: list[int], where: str = "$.results") -> None:
    """Places of one match: each in 1..n, and a tie of k players at place p leaves p+1..p+k-1 empty
    (1, 2, 2, 4). ``where`` is the path of the results list; errors name the result."""
    if _competition_ranking(tuple(places)):
        return
    n = len(places)
    for j, p in enumerate(places):
        if not 1 <= p <= n:
            raise InputError("place must be between 1 and {n} (the number of players)", f"{where}[{j}].place", n=n)
    for j, p in enumerate(places):
        ahead = sum(1 for q in places if q < p)
        if p != ahead + 1:
            raise InputError(
                "place {p} is impossible: {ahead} {ahead|player placed ahead makes|players placed ahead make} this place {value} (players "
                "sharing a place cover the places after it: 1, 2, 2, 4)", f"{where}[{j}].place", p=p, ahead=ahead, value=ahead + 1)


@functools.lru_cache(maxsize=4096)
def _competition_ranking(places: tuple) -> bool:
    """Is every place 1 + the number of places before it (1, 2, 2, 4)? Cached: matches repeat shapes."""
    ordered = sorted(places)
    return all(p == ordered.index(p) + 1 for p in ordered)


def points_of_places(rules: Rules, places: list[int]) -> list[Fraction]:
    """Club points (without bonuses) of each player of one match, given their places."""
    n = len(places)
    return [rules.shared(n, p, places.count(p)) for p in places]


# -- documents ----------------------------------------------------------------------------------

def _result(r: dict) -> dict:
    place = r["place"]
    return {"player": r["player"], "place": place if type(place) is int else int(place),
            "objective": bool(r.get("objective")), "eliminated": bool(r.get("eliminated"))}


def check_match(m: dict, rules: Rules, where: str) -> dict:
    """Rules a schema can't express for one match; returns the normalized match."""
    results = m["results"]
    n = len(results)
    if len({r["player"] for r in results}) != n:
        seen: dict[str, int] = {}
        for j, r in enumerate(results):
            if r["player"] in seen:
                raise InputError("player {player!r} appears twice in this match (first at results[{seen}])", join_path(where, f"results[{j}].player"), player=r['player'], seen=seen[r['player']])
            seen[r["player"]] = j
    check_places([r["place"] for r in results], join_path(where, "results"))
    if n not in rules.points:
        have = ", ".join(str(k) for k in sorted(rules.points))
        raise InputError("no points table for {n} players (tables: {have}; add one to the club settings)",
                         join_path(where, "results"), n=n, have=have)
    return {"id": m["id"], "date": normalize_date(m["date"], join_path(where, "date")), "game": m.get("game"),
            "results": [_result(r) for r in results]}


def normalize_date(value: str, where: str = "date") -> str:
    """``YYYY-MM-DD`` stays; a date-time becomes UTC ISO (``...T20:00:00.000Z``) so they sort as text."""
    if not isinstance(value, str):
        raise InputError("must be a date (YYYY-MM-DD) or an ISO-8601 date-time", where)
    out = _normal_date(value)
    if out is None:
        if len(value) == 10:
            raise InputError("not a date (YYYY-MM-DD): {value!r}", where, value=value)
        from companion.base.timeutil import parse_iso

        parse_iso(value, where)  # raises, naming the field
        raise InputError("not an ISO-8601 date-time: {value!r}", where, value=value)
    return out


@functools.lru_cache(maxsize=4096)
def _normal_date(value: str) -> str | None:
    if len(value) == 10:
        from datetime import date

        try:
            date.fromisoformat(value)
        except ValueError:
            return None
        return value
    from companion.base.timeutil import parse_iso, to_iso

    try:
        return to_iso(parse_iso(value))
    except InputError:
        return None


_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})")
_MATCH_KEYS = frozenset({"id", "date", "game", "results"})
_RESULT_KEYS = frozenset({"player", "place", "objective", "eliminated"})


def plainly_valid_match(m) -> bool:
    """A quick check that one match certainly satisfies ``season.standings.schema.json`` (a strict
    subset of what the schema accepts). When it says False the full JSON Schema judges (and names the
    path); it never says True of a match the schema refuses (``tests/core/test_season.py`` checks it)."""
    if type(m) is not dict or not m.keys() <= _MATCH_KEYS:
        return False
    mid, date_, results = m.get("id"), m.get("date"), m.get("results")
    if type(mid) is not str or not _ID.fullmatch(mid) or type(date_) is not str:
        return False
    if len(date_) == 10:
        if not _DATE.fullmatch(date_) or _normal_date(date_) is None:
            return False
    elif not _DATE_TIME.fullmatch(date_) or _normal_date(date_) is None:
        return False
    if "game" in m and (type(m["game"]) is not str or m["game"] not in GAMES):
        return False
    if type(results) is not list or not 2 <= len(results) <= 99:
        return False
    for r in results:
        if type(r) is not dict or not r.keys() <= _RESULT_KEYS:
            return False
        player, place = r.get("player"), r.get("place")
        if type(player) is not str or not 1 <= len(player) <= 40 or type(place) is not int or place < 1:
            return False
        if type(r.get("objective", False)) is not bool or type(r.get("eliminated", False)) is not bool:
            return False
    return True


def validate_document(doc) -> None:
    """``season.standings`` schema validation, quick for big seasons: the document without its
    matches goes through the JSON Schema, then each match through ``plainly_valid_match``; any doubt
    and the whole document goes through the JSON Schema, which raises naming the path."""
    from companion.base.schemas import validate

    if type(doc) is not dict or type(doc.get("matches")) is not list:
        validate("season.standings", doc)
        return
    validate("season.standings", {**doc, "matches": []})
    if not all(map(plainly_valid_match, doc["matches"])):
        validate("season.standings", doc)


def load_document(doc, base: Rules | None = None, validate_schema: bool = True) -> tuple[dict, Rules, list[dict]]:
    """Validate a season document (``schemas/season.standings.schema.json``) and return
    ``(doc, rules, matches)`` with matches normalized. Errors name the JSON path."""
    if validate_schema:
        validate_document(doc)
    rules = (base or Rules()).with_settings({k: doc[k] for k in SETTINGS_KEYS if k in doc}, "$")
    game = doc.get("game")
    year = doc.get("year")
    ids: dict[str, int] = {}
    matches = []
    for i, m in enumerate(doc["matches"]):
        where = f"$.matches[{i}]"
        if m["id"] in ids:
            raise InputError("match id {id!r} is used twice (first at $.matches[{ids}])",
                             where + ".id", id=m['id'], ids=ids[m['id']])
        ids[m["id"]] = i
        if game is None:
            game = m.get("game")
        elif m.get("game") is not None and m["game"] != game:
            raise InputError("a season is of one game: this match is {game!r}, the season {game2!r}",
                             where + ".game", game=m['game'], game2=game)
        nm = check_match(m, rules, where)
        if year is not None and int(nm["date"][:4]) != year:
            raise InputError("the date is not in the season's year {year}", where + ".date", year=year)
        matches.append(nm)
    return doc, rules, matches


def chronological(matches: list[dict]) -> list[dict]:
    return sorted(matches, key=lambda m: (m["date"], m["id"]))


# -- standings ----------------------------------------------------------------------------------

def needs_more(played: int, total: int, threshold: Fraction) -> int | None:
    """Least k >= 0 with (played + k) / (total + k) >= threshold; None when there is none."""
    a, b = threshold.numerator, threshold.denominator
    short = a * total - b * played
    if short <= 0:
        return 0
    if a >= b:  # a 100% threshold: playing more never closes the gap
        return None
    return -(-short // (b - a))


def is_eligible(played: int, total: int, threshold: Fraction) -> bool:
    return played * threshold.denominator >= threshold.numerator * total


def tally(matches: list[dict], rules: Rules) -> dict[str, dict]:
    """Per player: exact points, matches played, wins. Independent of the order of the matches.

    Each result is counted under a small integer key (its place pattern and bonuses); the exact
    points are summed once per distinct key at the end, as integers over a common denominator."""
    cells: list[tuple[int, int, int]] = []       # key >> 2 -> (players, place, tied)
    cell_ids: dict[tuple[int, int, int], int] = {}
    shapes: dict[tuple, list[int]] = {}         # places of a match -> key bases of its results
    counts: dict[str, dict[int, int]] = {}
    for m in matches:
        results = m["results"]
        places = tuple([r["place"] for r in results])
        shape = shapes.get(places)
        if shape is None:
            n = len(places)
            shape = []
            for p in places:
                cell = (n, p, places.count(p))
                i = cell_ids.get(cell)
                if i is None:
                    i = cell_ids[cell] = len(cells)
                    cells.append(cell)
                shape.append(i << 2)
            shapes[places] = shape
        for r, base in zip(results, shape):
            key = base | (2 if r["objective"] else 0) | (1 if r["eliminated"] else 0)
            c = counts.get(r["player"])
            if c is None:
                c = counts[r["player"]] = {}
            c[key] = c.get(key, 0) + 1
    values = {}
    for c in counts.values():
        for key in c:
            if key not in values:
                n, p, tied = cells[key >> 2]
                values[key] = rules.value(n, p, tied, bool(key & 2), bool(key & 1))
    denominator = math.lcm(*(v.denominator for v in values.values())) if values else 1
    scaled = {key: v.numerator * (denominator // v.denominator) for key, v in values.items()}
    out = {}
    for player, c in counts.items():
        out[player] = {"points": Fraction(sum(scaled[k] * x for k, x in c.items()), denominator),
                       "matches": sum(c.values()),
                       "wins": sum(x for k, x in c.items() if cells[k >> 2][1] == 1)}
    return out


def _order_key(row):
    return (-row["points"], -row["wins"], row["player"].casefold(), row["player"])


def rank_rows(per_player: dict[str, dict], total: int, threshold: Fraction) -> list[dict]:
    """Rows sorted by rank (shared ranks 1, 2, 2, 4), unranked players last. Points stay exact."""
    rows = []
    for player, t in per_player.items():
        ok = is_eligible(t["matches"], total, threshold)
        rows.append({"rank": None, "player": player, "points": t["points"], "matches": t["matches"],
                     "wins": t["wins"], "eligible": ok, "needs": needs_more(t["matches"], total, threshold)})
    ranked = sorted((r for r in rows if r["eligible"]), key=_order_key)
    unranked = sorted((r for r in rows if not r["eligible"]), key=_order_key)
    for i, r in enumerate(ranked):
        prev = ranked[i - 1] if i else None
        if prev is not None and prev["points"] == r["points"] and prev["wins"] == r["wins"]:
            r["rank"] = prev["rank"]
        else:
            r["rank"] = i + 1
    return ranked + unranked


def standings(matches: list[dict], rules: Rules) -> list[dict]:
    """Exact standings rows of already-validated, normalized matches."""
    return rank_rows(tally(matches, rules), len(matches), rules.threshold)


def row_json(row: dict) -> dict:
    return {**row, "points": num(row["points"])}


def standings_document(doc, base: Rules | None = None, with_ratings: bool = False) -> dict:
    """``companion season standings``: the season document in, the standings out."""
    doc, rules, matches = load_document(doc, base)
    out = {
        "season": doc["season"],
        "total_matches": len(matches),
        "threshold": num(rules.threshold),
        "standings": [row_json(r) for r in standings(matches, rules)],
    }
    if with_ratings:
        out["ratings"] = ratings(matches)
    return out


# -- history ------------------------------------------------------------------------------------

def history(matches: list[dict], rules: Rules, player: str) -> dict:
    """One player's season, match by match in date order: place, bonuses, points, running total."""
    rows = []
    running = Fraction(0)
    for m in chronological(matches):
        places = [r["place"] for r in m["results"]]
        n = len(places)
        for r in m["results"]:
            if r["player"] != player:
                continue
            p = r["place"]
            tied = places.count(p)
            base = rules.shared(n, p, tied)
            pts = rules.value(n, p, tied, r["objective"], r["eliminated"])
            running += pts
            rows.append({"match": m["id"], "date": m["date"], "players": n, "place": p, "shared": tied,
                         "objective": r["objective"], "eliminated": r["eliminated"],
                         "place_points": num(base), "points": num(pts), "cumulative": num(running)})
    if not rows:
        raise InputError("{player!r} played no match of this season", "player", player=player)
    return {"player": player, "matches": len(rows), "wins": sum(1 for r in rows if r["place"] == 1),
            "points": num(running), "history": rows}


def cumulative_series(matches: list[dict], rules: Rules) -> tuple[list[dict], dict[str, list[Fraction]]]:
    """For the chart: the matches in date order and, per player, the running total after each one."""
    ordered = chronological(matches)
    players = sorted({r["player"] for m in ordered for r in m["results"]}, key=lambda p: (p.casefold(), p))
    running = {p: Fraction(0) for p in players}
    series: dict[str, list[Fraction]] = {p: [] for p in players}
    for m in ordered:
        places = [r["place"] for r in m["results"]]
        n = len(places)
        for r in m["results"]:
            running[r["player"]] += rules.value(n, r["place"], places.count(r["place"]),
                                                r["objective"], r["eliminated"])
        for p in players:
            series[p].append(running[p])
    return ordered, series


# -- ratings ------------------------------------------------------------------------------------

def ratings(matches: list[dict]) -> list[dict]:
    """OpenSkill (Weng-Lin, Plackett-Luce) rating per player from the same results, matches in date
    order; shared places are ties. Sorted by ordinal (mu - 3 sigma), the conservative estimate."""
    from openskill.models import PlackettLuce  # lazy: the CLI stays fast without it

    model = PlackettLuce()
    current: dict = {}
    played: dict[str, int] = {}
    for m in chronological(matches):
        results = m["results"]
        teams = []
        for r in results:
            rating = current.get(r["player"])
            if rating is None:
                rating = model.rating(name=r["player"])
            teams.append([rating])
        rated = model.rate(teams, ranks=[r["place"] for r in results])
        for r, team in zip(results, rated):
            current[r["player"]] = team[0]
            played[r["player"]] = played.get(r["player"], 0) + 1
    out = [{"player": p, "mu": round(r.mu, 3), "sigma": round(r.sigma, 3), "ordinal": round(r.ordinal(), 3),
            "matches": played[p]} for p, r in current.items()]
    out.sort(key=lambda x: (-x["ordinal"], x["player"].casefold(), x["player"]))
    return out


# -- exports ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CsvDialect:
    """How a CSV is written for its reader: the separator, the decimal mark and whether it starts with a
    UTF-8 byte order mark (what a spreadsheet needs to read accents right). ``PLAIN`` is for scripts and
    the CLI; ``EXCEL_IT`` is what an Italian spreadsheet expects (";" and "1,5"); ``EXCEL_EN`` ("," and
    "1.5")."""
    sep: str = ","
    decimal: str = "."
    bom: bool = False


PLAIN = CsvDialect()
EXCEL_EN = CsvDialect(",", ".", True)
EXCEL_IT = CsvDialect(";", ",", True)
# by the names the web's ``?dialect=`` and the CLI's ``--dialect`` take
DIALECTS = {"excel-it": EXCEL_IT, "excel-en": EXCEL_EN, "plain": PLAIN}
# a cell a spreadsheet would read as a formula (a name typed as "=HYPERLINK(...)", "+39 333", "@SUM(...)"):
# a leading apostrophe makes it text, as spreadsheet-safe exports do
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class CsvNumber(str):
    """A number already written as text ("-1.5", "0.67"): a CSV writes it with the reader's decimal mark and
    never takes it for a formula."""


def csv_cell(value, dialect: CsvDialect = PLAIN) -> str:
    """One cell: numbers (int, float, Fraction, :class:`CsvNumber`) with the dialect's decimal mark, text
    that a spreadsheet would run as a formula neutralised with a leading ``'``, None empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Fraction):
        value = CsvNumber(text(value))
    elif isinstance(value, (int, float)):
        value = CsvNumber(str(value) if isinstance(value, int) or not float(value).is_integer() else str(int(value)))
    if isinstance(value, CsvNumber):
        return str(value).replace(".", dialect.decimal)
    value = str(value)
    return "'" + value if value.startswith(FORMULA_START) else value


def csv_text(header: list[str], rows, dialect: CsvDialect = PLAIN) -> str:
    """A CSV document of ``rows`` (lists of cells, see :func:`csv_cell`) under ``header``."""
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=dialect.sep, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow([csv_cell(v, dialect) for v in row])
    return ("\ufeff" if dialect.bom else "") + buf.getvalue()


STANDINGS_CSV_COLUMNS = ["rank", "player", "points", "matches", "wins", "eligible", "needs",
                         "rating_ordinal", "rating_mu", "rating_sigma"]
RESULTS_CSV_COLUMNS = ["match", "date", "game", "players", "player", "place", "objective", "eliminated", "points"]


def standings_csv(rows: list[dict], rating_rows: list[dict] | None = None, dialect: CsvDialect = PLAIN) -> str:
    """The standings as CSV (points as exact short decimals or rounded to 2 places)."""
    by_player = {r["player"]: r for r in rating_rows or []}
    out = []
    for r in rows:
        rt = by_player.get(r["player"], {})
        pts = r["points"] if isinstance(r["points"], Fraction) else exact(r["points"])
        out.append([r["rank"], r["player"], pts, r["matches"], r["wins"], "yes" if r["eligible"] else "no",
                    r["needs"], rt.get("ordinal"), rt.get("mu"), rt.get("sigma")])
    return csv_text(STANDINGS_CSV_COLUMNS, out, dialect)


def results_csv(matches: list[dict], rules: Rules, dialect: CsvDialect = PLAIN, labels: dict | None = None,
                extra=None) -> str:
    """Every result of the season, one line per player per match, in date order. ``labels``: the matches'
    table labels by id (a "label" column after "match"); ``extra``: (column, fn(match)) added at the end."""
    header = RESULTS_CSV_COLUMNS[:1] + (["label"] if labels is not None else []) + RESULTS_CSV_COLUMNS[1:]
    if extra:
        header = header + [extra[0]]
    out = []
    for m in chronological(matches):
        places = [r["place"] for r in m["results"]]
        n = len(places)
        for r in m["results"]:
            pts = rules.value(n, r["place"], places.count(r["place"]), r["objective"], r["eliminated"])
            row = [m["id"]] + ([labels.get(m.get("match_id") or m["id"], "")] if labels is not None else []) + \
                [m["date"], m.get("game") or "", n, r["player"], r["place"], "yes" if r["objective"] else "no",
                 "yes" if r["eliminated"] else "no", pts]
            out.append(row + ([extra[1](m)] if extra else []))
    return csv_text(header, out, dialect)


def season_json(meta: dict, rules: Rules, matches: list[dict]) -> dict:
    """A season as one document that ``companion season standings`` reads back."""
    doc = {"season": meta["season"]}
    for k in ("club", "game", "year"):
        if meta.get(k) is not None:
            doc[k] = meta[k]
    doc.update(rules.to_json())
    doc["matches"] = [{"id": m["id"], "date": m["date"], **({"game": m["game"]} if m.get("game") else {}),
                       "results": [dict(r) for r in m["results"]]} for m in chronological(matches)]
    return doc


# -- chart --------------------------------------------------------------------------------------

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#7f7f7f", "#bcbd22", "#393b79", "#ad494a", "#637939", "#8c6d31", "#7b4173", "#3182bd"]
DASHES = ["", "6 3", "2 3", "8 3 2 3"]


def _nice_step(span: float) -> float:
    """A 1-2-5 grid step giving about six lines over ``span``."""
    import math

    raw = span / 6 if span > 0 else 1
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


_COLOUR = re.compile(r"#[0-9a-f]{6}")  # (a colour a page wrote, written into the drawing as it is)


def chart_colours(players: list[str], wanted: dict[str, list[str]] | None = None) -> dict[str, tuple[str, str]]:
    """Each line's (colour, dash), players in the chart's order: a player's colours by preference (``wanted``: their
    own, the table's) where no player before took it, the palette's first free colour otherwise (solid, then
    dashed once the palette is used up)."""
    wanted = wanted or {}
    taken: set[str] = set()
    out: dict[str, tuple[str, str]] = {}
    depth = max((len(v) for v in wanted.values()), default=0)
    for k in range(depth):  # everyone's first choice before anyone's second
        for p in players:
            mine = wanted.get(p) or []
            c = mine[k].lower() if k < len(mine) and isinstance(mine[k], str) else None
            if p not in out and c and _COLOUR.fullmatch(c) and c not in taken:
                out[p] = (c, "")
                taken.add(c)
    free = [c for c in PALETTE if c not in taken]
    rest = [p for p in players if p not in out]
    for j, p in enumerate(rest):
        if j < len(free):
            out[p] = (free[j], "")
        else:  # the palette used up: its colours again, dashed
            k = j - len(free)
            out[p] = (PALETTE[k % len(PALETTE)], DASHES[(1 + k // len(PALETTE)) % len(DASHES)])
    return out


def chart_legend(matches: list[dict], rules: Rules, players: list[str] | None = None,
                 colours: dict[str, list[str]] | None = None) -> list[dict]:
    """The chart's lines in its order: ``{player, colour, dash, points}`` (``points`` exact, at the end), for a
    page that draws the legend itself (in HTML, legible on a phone, where the SVG is scaled down)."""
    ordered, series = _chart_series(matches, rules, players)
    look = chart_colours(list(series), colours)
    return [{"player": player, "colour": look[player][0], "dash": look[player][1], "points": s[-1] if s else Fraction(0)}
            for player, s in series.items()]


def _chart_series(matches, rules, players):
    ordered, series = cumulative_series(matches, rules)
    if players is not None:
        unknown = [p for p in players if p not in series]
        if unknown:
            raise InputError("{unknown!r} played no match of this season", "player", unknown=unknown[0])
        series = {p: series[p] for p in players}
    elif ordered:  # the legend in the order of the points at the end
        series = dict(sorted(series.items(), key=lambda kv: (-kv[1][-1], kv[0].casefold(), kv[0])))
    return ordered, series


def chart_svg(matches: list[dict], rules: Rules, title: str = "", players: list[str] | None = None,
              width: int = 720, height: int = 400, x_label: str = "matches of the season",
              y_label: str = "points", legend: bool = True, decimal=None, colours: dict[str, list[str]] | None = None,
              empty: str = "No match yet") -> str:
    """An SVG line chart of each player's cumulative points through the season (x: the season's
    matches in date order; y: points). Self-contained: no script, no external font or file. ``legend=False``
    leaves the legend to the page (:func:`chart_legend`) and the plot takes the width; ``decimal(text)``
    writes a number's text in the reader's language ("-1,5"); ``colours``: each player's colours by preference
    (:func:`chart_colours`). A season with no match yet: ``empty`` in words, no axes."""
    decimal = decimal or (lambda s: s)
    ordered, series = _chart_series(matches, rules, players)
    n = len(ordered)
    if not n:
        return "\n".join([
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            'role="img" font-family="sans-serif" font-size="14">', f"<title>{escape(title or 'Season points')}</title>",
            f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>',
            f'<text x="{width / 2:.0f}" y="{height / 2:.0f}" text-anchor="middle">{escape(empty)}</text>', "</svg>"]) + "\n"
    look = chart_colours(list(series), colours)
    legend_w = 160 if legend else 0
    left, right, top, bottom = 48, 16 + legend_w, 36, 40
    pw, ph = width - left - right, height - top - bottom
    values = [v for s in series.values() for v in s] + [Fraction(0)]
    lo, hi = float(min(values)), float(max(values))
    step = _nice_step(hi - lo)
    import math

    lo = math.floor(lo / step) * step
    hi = math.ceil(hi / step) * step
    if hi == lo:
        hi = lo + step

    def x(i):  # i = 0 is the start of the season (everyone at 0)
        return left + (pw * i / n if n else 0)

    def y(v):
        return top + ph * (hi - float(v)) / (hi - lo)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif" font-size="11">',
           f"<title>{escape(title or 'Season points')}</title>",
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="#fff"/>']
    if title:
        out.append(f'<text x="{left}" y="20" font-size="14" font-weight="bold">{escape(title)}</text>')
    # grid and y labels
    k = 0
    while lo + k * step <= hi + 1e-9:
        v = lo + k * step
        yy = y(v)
        colour = "#888" if abs(v) < 1e-9 else "#ddd"
        out.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{left + pw}" y2="{yy:.1f}" stroke="{colour}"/>')
        label = decimal(f"{v:g}")
        out.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{label}</text>')
        k += 1
    # x axis: match numbers
    xstep = max(1, math.ceil(n / 12)) if n else 1
    for i in range(0, n + 1, xstep):
        out.append(f'<text x="{x(i):.1f}" y="{top + ph + 16}" text-anchor="middle">{i}</text>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{height - 8}" text-anchor="middle">{escape(x_label)}</text>')
    out.append(f'<text x="12" y="{top + ph / 2:.1f}" text-anchor="middle" '
               f'transform="rotate(-90 12 {top + ph / 2:.1f})">{escape(y_label)}</text>')
    # lines: a step at each match the player played
    for idx, (player, s) in enumerate(series.items()):
        colour, dash = look[player]
        pts = [f"{x(0):.1f},{y(0):.1f}"] + [f"{x(i + 1):.1f},{y(v):.1f}" for i, v in enumerate(s)]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        final = s[-1] if s else Fraction(0)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash_attr} points="{" ".join(pts)}">'
                   f"<title>{escape(player)}: {decimal(text(final))}</title></polyline>")
        ly = top + 4 + idx * 16
        if legend and ly < height - 8:
            out.append(f'<line x1="{width - legend_w + 4}" y1="{ly:.1f}" x2="{width - legend_w + 24}" '
                       f'y2="{ly:.1f}" stroke="{colour}" stroke-width="2"{dash_attr}/>')
            label = player if len(player) <= 16 else player[:15] + "…"
            out.append(f'<text x="{width - legend_w + 30}" y="{ly + 4:.1f}">{escape(label)} ({decimal(text(final))})</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
