"""Season standings at scale: a season of 5,000 matches (3-6 players from a pool of 40, ties, bonuses).

The data is synthetic (seeded random), made up for timing only.
"""

from __future__ import annotations

import random

from companion.core import season as core

MATCHES = 5000


def make_document(n_matches: int = MATCHES, seed: int = 6) -> dict:
    rng = random.Random(seed)
    pool = [f"player{i:02d}" for i in range(40)]
    matches = []
    for i in range(n_matches):
        n = rng.randint(3, 6)
        players = rng.sample(pool, n)
        scores = [rng.randint(0, 8) for _ in players]
        results = [{"player": p, "place": 1 + sum(1 for t in scores if t > s),
                    "objective": rng.random() < 0.2, "eliminated": rng.random() < 0.15}
                   for p, s in zip(players, scores)]
        day = 1 + i * 365 // n_matches
        matches.append({"id": f"m{i:05d}", "date": f"2026-{1 + (day - 1) // 31 % 12:02d}-{1 + (day - 1) % 28:02d}",
                        "game": "conquest-italy", "results": results})
    return {"season": "benchmark (synthetic)", "matches": matches}


def _loaded():
    _, rules, matches = core.load_document(make_document())
    return rules, matches


BENCHMARKS = [
    {"name": "season standings, 5,000 matches (core: points, eligibility, ranking)", "target_ms": 200,
     "setup": _loaded, "run": lambda a: core.standings(a[1], a[0]), "repeat": 20,
     "note": "validated matches in, exact standings out"},
    {"name": "season standings, 5,000 matches (checks in code + ranking, no JSON Schema)", "target_ms": 200,
     "setup": make_document, "repeat": 10,
     "run": lambda d: core.standings(*reversed(core.load_document(d, validate_schema=False)[1:])),
     "note": "duplicate players, places, tables, ids, dates"},
    {"name": "season standings document, 5,000 matches (JSON Schema + checks + ranking)", "target_ms": 200,
     "setup": make_document, "repeat": 5, "run": core.standings_document,
     "note": "what `companion season standings FILE` does after parsing"},
    {"name": "season OpenSkill ratings, 5,000 matches", "target_ms": None,
     "setup": _loaded, "run": lambda a: core.ratings(a[1]), "repeat": 3, "note": "beside the standings"},
]
