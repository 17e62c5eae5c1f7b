"""A tournament day: table sizes, the seating of each round and the standings across rounds. Pure, no I/O.

The method (``docs/tournament.md`` says it for the club):

- **Table sizes.** ``n`` players at tables of ``lo``..``hi`` seats (3..6, narrowed to the game's own
  limits) with the organiser's preferred size ``k``: the number of tables is the one nearest ``n / k``
  whose tables, as equal as possible (sizes differ by at most one), all fit ``lo``..``hi``. Larger tables
  come first.
- **Round 1** is drawn at random (the injectable ``rng``): the players shuffled, then dealt to the tables.
- **Later rounds** minimise, in this order: (1) *repeat meetings*, the sum over every pair of players put
  at the same table of the number of times they have met before; (2) *standing spread*, the sum over every
  such pair of the distance between their places in the standings (so tables group players of similar
  standing, the top table holding the leaders). Up to ``EXACT_LIMIT`` possible seatings every one is
  tried (the true optimum); beyond, the players are dealt in standing order, each to the table where they
  add the fewest repeats, and then any swap of two players at different tables that lowers the cost is
  made until none does (a local optimum). Tables are numbered from the best standing down; the seat order
  at a table (who plays first) is drawn with ``rng``.
- **Standings.** Each match gives the fan club's points (``companion.core.season.Rules``: the places->points
  table of its table size, shared places sharing the mean, the objective and elimination bonuses). Players
  are ordered by points; then by *game points* (conquest: the values of the cities held at the end; other
  games: their final score; summed over the matches where known); then *head-to-head*: among the players
  still equal, how many times each finished ahead of another of them at the same table, minus how many
  times behind; still equal, they share the place (1, 2, 2, 4).
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

from companion.base.errors import InputError, RuleError
from companion.core.season import Rules, num

MIN_SEATS, MAX_SEATS = 3, 6
EXACT_LIMIT = 20_000  # seatings tried one by one up to this many; a local search beyond


# -- table sizes ---------------------------------------------------------------------------------------

def table_sizes(n: int, preferred: int, lo: int = MIN_SEATS, hi: int = MAX_SEATS) -> list[int]:
    """The sizes of the tables for ``n`` players (see the module's docstring), largest first."""
    lo, hi = max(lo, MIN_SEATS), min(hi, MAX_SEATS)
    if lo > hi:
        raise RuleError("no table size from {MIN_SEATS} to {MAX_SEATS} fits this game", "table_size", MIN_SEATS=MIN_SEATS, MAX_SEATS=MAX_SEATS)
    if not lo <= preferred <= hi:
        raise InputError("the table size must be from {lo} to {hi}", "table_size", lo=lo, hi=hi)
    fits = [t for t in range(1, n + 1) if n // t >= lo and -(-n // t) <= hi]
    if not fits:
        raise RuleError("{n} {n|player cannot|players cannot} sit at tables of {lo} to {hi}", "players", n=n, lo=lo, hi=hi)
    t = min(fits, key=lambda t: (abs(t - n / preferred), t))
    base, extra = divmod(n, t)
    return [base + 1] * extra + [base] * (t - extra)


# -- seatings ------------------------------------------------------------------------------------------

def pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def meetings(rounds: list[list[list[str]]]) -> dict[tuple[str, str], int]:
    """How many times each pair of players sat at the same table: ``rounds`` = [[table players, ...], ...]."""
    met: dict[tuple[str, str], int] = {}
    for tables in rounds:
        for table in tables:
            for a, b in itertools.combinations(table, 2):
                met[pair(a, b)] = met.get(pair(a, b), 0) + 1
    return met


def cost(tables: list[list[str]], met: dict, rank: dict[str, int]) -> tuple[int, int]:
    """(repeat meetings, standing spread) of a seating."""
    repeats = spread = 0
    for table in tables:
        for a, b in itertools.combinations(table, 2):
            repeats += met.get(pair(a, b), 0)
            spread += abs(rank[a] - rank[b])
    return repeats, spread


def seatings_count(sizes: list[int]) -> int:
    """How many ways there are to split sum(sizes) players into unnumbered tables of these sizes."""
    n = sum(sizes)
    out = math.factorial(n)
    for s in sizes:
        out //= math.factorial(s)
    for s in set(sizes):
        out //= math.factorial(sizes.count(s))
    return out


def all_seatings(players: list[str], sizes: list[int]):
    """Every split of ``players`` into unnumbered tables of ``sizes`` (each once)."""
    if not players:
        yield []
        return
    first, rest = players[0], players[1:]
    for s in sorted(set(sizes), reverse=True):
        left = list(sizes)
        left.remove(s)
        for mates in itertools.combinations(rest, s - 1):
            chosen = set(mates)
            others = [p for p in rest if p not in chosen]
            for tail in all_seatings(others, left):
                yield [[first, *mates], *tail]


def _exact(order: list[str], sizes: list[int], met: dict, rank: dict) -> list[list[str]]:
    best, best_cost = None, None
    for tables in all_seatings(order, sizes):
        c = cost(tables, met, rank)
        if best_cost is None or c < best_cost:
            best, best_cost = tables, c
    return best


def _local(order: list[str], sizes: list[int], met: dict, rank: dict) -> list[list[str]]:
    tables: list[list[str]] = [[] for _ in sizes]
    for p in order:  # dealt in standing order, each to the table where they add the fewest repeats
        open_ = [i for i, s in enumerate(sizes) if len(tables[i]) < s]
        i = min(open_, key=lambda i: (sum(met.get(pair(p, q), 0) for q in tables[i]), i))
        tables[i].append(p)
    current = cost(tables, met, rank)
    improved = True
    while improved:
        improved = False
        for i, j in itertools.combinations(range(len(tables)), 2):
            for x in range(len(tables[i])):
                for y in range(len(tables[j])):
                    tables[i][x], tables[j][y] = tables[j][y], tables[i][x]
                    c = cost(tables, met, rank)
                    if c < current:
                        current, improved = c, True
                    else:
                        tables[i][x], tables[j][y] = tables[j][y], tables[i][x]
    return tables


def sit_out(players: list[str], preferred: int, lo: int = MIN_SEATS, hi: int = MAX_SEATS,
            sat_out: dict[str, int] | None = None, standing: list[str] | None = None,
            rng=None) -> tuple[list[str], list[str]]:
    """When the numbers don't fit (no split of ``players`` into tables of ``lo``..``hi``): the fewest players
    sit this round out (docs/tournament.md, "Late arrivals, drop-outs and sitting out"). Those who sat out
    fewest times (``sat_out``) go first; among them the lowest in ``standing`` (round 1: at random with
    ``rng``). Returns (the players seated, the players sitting out), ``players``' order kept."""
    sat_out = sat_out or {}
    for k in range(len(players) + 1):
        if len(players) - k < MIN_SEATS:
            break
        try:
            table_sizes(len(players) - k, preferred, lo, hi)
        except RuleError:
            continue
        if k == 0:
            return list(players), []
        if standing is None:
            order = list(players)
            (rng or random.SystemRandom()).shuffle(order)
            rank = {p: -i for i, p in enumerate(order)}
        else:
            pos = {p: i for i, p in enumerate(standing)}
            rank = {p: pos.get(p, len(pos)) for p in players}
        out = sorted(players, key=lambda p: (sat_out.get(p, 0), -rank[p]))[:k]
        return [p for p in players if p not in out], [p for p in players if p in out]
    raise RuleError("{n} {n|player cannot|players cannot} sit at tables of {lo} to {hi}", "players", n=len(players), lo=lo, hi=hi)


def seat_round(players: list[str], preferred: int, rng=None, standing: list[str] | None = None,
               met: dict | None = None, lo: int = MIN_SEATS, hi: int = MAX_SEATS) -> list[list[str]]:
    """The tables of one round, table 1 first, each in seat order. Round 1 (``standing`` None): at random.
    Later rounds: ``standing`` is every player best first, ``met`` the pairs' previous meetings."""
    if len(set(players)) != len(players):
        raise InputError("a player is registered twice", "players")
    rng = rng or random.SystemRandom()
    sizes = table_sizes(len(players), preferred, lo, hi)
    if standing is None:
        order = list(players)
        rng.shuffle(order)
        tables, k = [], 0
        for s in sizes:
            tables.append(order[k:k + s])
            k += s
        return tables
    if sorted(standing) != sorted(players):
        raise InputError("the standing must list every player once", "standing")
    rank = {p: i for i, p in enumerate(standing)}
    met = met or {}
    if seatings_count(sizes) <= EXACT_LIMIT:
        tables = _exact(list(standing), sizes, met, rank)
    else:
        tables = _local(list(standing), sizes, met, rank)
    tables = sorted((sorted(t, key=rank.__getitem__) for t in tables), key=lambda t: (rank[t[0]], -len(t)))
    # larger tables first when several are possible is already in sizes; keep the size order stable
    out = []
    for t in tables:
        seat = list(t)
        rng.shuffle(seat)
        out.append(seat)
    return out


# -- standings -----------------------------------------------------------------------------------------

def match_points(rules: Rules, results: list[dict]) -> dict[str, Fraction]:
    """The club points of each player of one match (``results``: player, place, objective?, eliminated?)."""
    n = len(results)
    if rules.table(n) is None:
        raise RuleError("no points table for {n} players", "results", n=n)
    places = [r["place"] for r in results]
    return {r["player"]: rules.value(n, r["place"], places.count(r["place"]), bool(r.get("objective")),
                                     bool(r.get("eliminated"))) for r in results}


def standings(players: list[str], matches: list[dict], rules: Rules | None = None) -> list[dict]:
    """The standings after ``matches`` = [{"results": [{player, place, objective?, eliminated?,
    game_points?}]}] (ended matches only). Rows best first: rank (shared 1, 2, 2, 4), player, points,
    game_points (None when no match of theirs gave them), matches, wins, head_to_head (among the players
    equal on points and game points; 0 otherwise)."""
    rules = rules or Rules()
    rows = {p: {"player": p, "points": Fraction(0), "game_points": None, "matches": 0, "wins": 0} for p in players}
    for m in matches:
        pts = match_points(rules, m["results"])
        for r in m["results"]:
            row = rows.setdefault(r["player"], {"player": r["player"], "points": Fraction(0), "game_points": None,
                                                "matches": 0, "wins": 0})
            row["points"] += pts[r["player"]]
            row["matches"] += 1
            row["wins"] += 1 if r["place"] == 1 else 0
            gp = r.get("game_points")
            if gp is not None:
                row["game_points"] = (row["game_points"] or Fraction(0)) + Fraction(gp)

    def first_key(row):
        return (-row["points"], -(row["game_points"] if row["game_points"] is not None else Fraction(0)))

    ordered = sorted(rows.values(), key=lambda r: (first_key(r), r["player"]))
    for group in _groups(ordered, first_key):
        names = {r["player"] for r in group}
        for r in group:
            r["head_to_head"] = 0
        if len(group) > 1:
            for m in matches:
                inside = [r for r in m["results"] if r["player"] in names]
                for a, b in itertools.permutations(inside, 2):
                    if a["place"] < b["place"]:
                        rows[a["player"]]["head_to_head"] += 1
                        rows[b["player"]]["head_to_head"] -= 1

    def key(row):
        return first_key(row) + (-row["head_to_head"],)

    ordered = sorted(rows.values(), key=lambda r: (key(r), r["player"]))
    for i, r in enumerate(ordered):
        r["rank"] = ordered[i - 1]["rank"] if i and key(ordered[i - 1]) == key(r) else i + 1
    return [{"rank": r["rank"], "player": r["player"], "points": r["points"], "game_points": r["game_points"],
             "matches": r["matches"], "wins": r["wins"], "head_to_head": r["head_to_head"]} for r in ordered]


def _groups(rows, key):
    for _k, g in itertools.groupby(rows, key=key):
        yield list(g)


def row_json(row: dict) -> dict:
    return {**row, "points": num(row["points"]),
            "game_points": None if row["game_points"] is None else num(row["game_points"])}


STANDINGS_CSV_COLUMNS = ["rank", "player", "points", "game_points", "head_to_head", "matches", "wins"]


def standings_csv(rows: list[dict], dialect=None, as_json: bool = False) -> str:
    """The standings as CSV (``companion.core.season.csv_text``: names that would be formulas neutralised;
    ``dialect`` the reader's separator and decimal mark; points as the season's CSV writes them: "1.5",
    "2.33"). ``as_json``: the rows are ``row_json``'s (a float is read back as the exact number it was)."""
    from companion.core.season import PLAIN, csv_text

    def cell(row, c):
        v = row[c]
        return Fraction(v).limit_denominator(10**6) if isinstance(v, float) else v

    return csv_text(STANDINGS_CSV_COLUMNS, [[cell(r, c) for c in STANDINGS_CSV_COLUMNS] for r in rows],
                    dialect or PLAIN)
