"""Web of Power scoring benchmarks.

The real board's roads are unknown (see the board template), so these run on SYNTHETIC boards:
sites on a jittered grid, roads between grid neighbours (some missing, some diagonals), countries as
blocks of the grid. They are fictional and only measure speed.

Note on the issue's target "5 players x 20 monasteries on a 60-site board": 100 monasteries don't
fit on 60 sites (one monastery per site), so it is measured two ways: a full 60-site board (5 x 12
monasteries) and a 100-site board with 5 x 20 monasteries, each player's monasteries in connected
clusters so that the chain search has real work. A third row is one player's 20 monasteries as one
connected cluster, one of the slowest such cases for the chain solver among 300 generated.
"""

from __future__ import annotations

import random

from companion.games import web_of_power as wop

COUNTRIES = ["England", "Franken", "Bayern", "Italien", "Aragon", "Frankreich", "Lothringen", "Schwaben", "Burgund"]


def synthetic_board(width: int, height: int, seed: int = 1, p_road: float = 0.8, p_diag: float = 0.2) -> dict:
    """A fictional board document (valid against web-of-power.map): ``width x height`` sites."""
    rng = random.Random(seed)
    n = width * height
    cols = 3
    rows = 3
    countries = []
    site = {}
    for i in range(n):
        x, y = i % width, i // width
        c = COUNTRIES[min(rows - 1, y * rows // height) * cols + min(cols - 1, x * cols // width)]
        site[i] = (f"s{i:03d}", c, x, y)
    for c in COUNTRIES:
        sites = [{"id": sid, "x": x + rng.uniform(-0.2, 0.2), "y": y + rng.uniform(-0.2, 0.2)}
                 for sid, cc, x, y in site.values() if cc == c]
        countries.append({"id": c, "sites": sites})
    roads = []
    for i in range(n):
        x, y = i % width, i // width
        if x + 1 < width and rng.random() < p_road:
            roads.append([site[i][0], site[i + 1][0]])
        if y + 1 < height and rng.random() < p_road:
            roads.append([site[i][0], site[i + width][0]])
        if x + 1 < width and y + 1 < height and rng.random() < p_diag:
            roads.append([site[i][0], site[i + width + 1][0]])
    pairs = [("England", "Franken"), ("Franken", "Bayern"), ("England", "Frankreich"), ("Franken", "Lothringen"),
             ("Bayern", "Schwaben"), ("Italien", "Frankreich"), ("Frankreich", "Lothringen"),
             ("Lothringen", "Schwaben"), ("Aragon", "Lothringen"), ("Burgund", "Schwaben"),
             ("Italien", "Aragon"), ("Aragon", "Burgund"), ("England", "Italien"), ("Italien", "Burgund"),
             ("Italien", "Bayern")]
    return {
        "game": "web-of-power",
        "name": f"SYNTHETIC benchmark board {width}x{height} (fictional, not the real board)",
        "transcription": {"status": "complete", "notes": ["fictional: generated for benchmarks and tests"]},
        "countries": countries,
        "roads": roads,
        "alliances": [{"number": k + 1, "countries": list(p)} for k, p in enumerate(pairs)],
        "card_colours": [{"countries": ["Franken", "Aragon"], "cards": 13},
                         {"countries": ["Bayern", "Burgund"], "cards": 12},
                         {"countries": ["Lothringen", "Italien"], "cards": 11},
                         {"countries": ["England", "Schwaben"], "cards": 10},
                         {"countries": ["Frankreich"], "cards": 9}],
    }


def clustered_position(board: dict, players: list, per_player: int, seed: int = 2) -> dict:
    """Give each player ``per_player`` sites grown as connected clusters (fictional position),
    councillors within the rules, and return a final-scoring document."""
    rng = random.Random(seed)
    adj: dict = {}
    for a, b in board["roads"]:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    country_of = {s["id"]: c["id"] for c in board["countries"] for s in c["sites"]}
    free = set(country_of)
    held = {p: [] for p in players}
    for _ in range(per_player):
        for p in players:
            frontier = sorted({n for s in held[p] for n in adj.get(s, ()) if n in free})
            pick = rng.choice(frontier) if frontier else rng.choice(sorted(free))
            free.discard(pick)
            held[p].append(pick)
    counts: dict = {}
    for p, sites in held.items():
        for s in sites:
            counts.setdefault(country_of[s], {}).setdefault(p, 0)
            counts[country_of[s]][p] += 1
    councillors: dict = {}
    left = {p: 8 for p in players}
    for c in sorted(counts):
        room = max(counts[c].values())
        for p in players:
            if room and left[p]:
                councillors.setdefault(c, {})[p] = 1
                left[p] -= 1
                room -= 1
    return {"players": players, "scoring": "final", "map": board, "monasteries": held, "councillors": councillors}


PLAYERS = ["Anna", "Barbara", "Chris", "Dan", "Eva"]


def _full_60():
    return clustered_position(synthetic_board(10, 6, seed=3), PLAYERS, 12, seed=4)


def _five_by_twenty():
    return clustered_position(synthetic_board(10, 10, seed=5), PLAYERS, 20, seed=6)


def hard_cluster(seed: int = 101) -> tuple[dict, list]:
    """One player's 20 monasteries grown as one cluster on a fictional 80-site board. Seed 101 was
    the slowest for the chain solver of 300 seeds tried (best of 3 timings each)."""
    board = synthetic_board(10, 8, seed=seed, p_road=0.8, p_diag=0.3)
    adj: dict = {}
    for a, b in board["roads"]:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    rng = random.Random(seed)
    all_sites = sorted(s["id"] for c in board["countries"] for s in c["sites"])
    held = [rng.choice(all_sites)]
    while len(held) < 20:
        frontier = sorted({n for s in held for n in adj.get(s, ()) if n not in held})
        held.append(rng.choice(frontier) if frontier else rng.choice([x for x in all_sites if x not in held]))
    return board, held


def _hard_cluster():
    board, held = hard_cluster()
    return {"players": ["Anna", "Barbara", "Chris"], "scoring": "final", "map": board,
            "monasteries": {"Anna": held}}


BENCHMARKS = [
    {"name": "web-of-power final scoring, 60-site board full (5 x 12 monasteries, chains)",
     "target_ms": 20, "setup": _full_60, "run": wop.score, "repeat": 30,
     "note": "synthetic board; includes schema and board checks"},
    {"name": "web-of-power final scoring, 5 x 20 monasteries on a 100-site board (chains)",
     "target_ms": 20, "setup": _five_by_twenty, "run": wop.score, "repeat": 30,
     "note": "synthetic board; 100 monasteries can't fit on 60 sites"},
    {"name": "web-of-power final scoring, one player's 20 monasteries in one cluster (hard case)",
     "target_ms": 20, "setup": _hard_cluster, "run": wop.score, "repeat": 30,
     "note": "synthetic 80-site board; the slowest chain search of 300 seeds tried"},
]
