"""The club roster's pure helpers: how two typed names are compared. No I/O.

``name_key(name)`` is the one normalisation used wherever the app asks "is this the same person?":
the roster's duplicate suggestions, the type-ahead search, the migration that puts old matches on the
roster, and (later) matching players across boxes. Two names with the same key are *suggested* as one
person; they are never merged without someone saying so.

The key: Unicode compatibility decomposition (NFKD), combining marks dropped (accents: "Nicolò" ->
"nicolo"), case folded (``str.casefold``: "STRASSE" and "straße" agree), every run of white space made one
space, leading and trailing space dropped. Punctuation and digits are kept ("Anna B." is not "Anna B").
"""

from __future__ import annotations

import unicodedata

__all__ = ["name_key", "same_person", "matches_query", "short_name"]


def _strip_marks(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def name_key(name: str) -> str:
    """The comparison key of a player's name: case-, accent- and spacing-insensitive.

    >>> name_key("  Nicolò   ROSSI ") == name_key("nicolo rossi")
    True
    """
    if not isinstance(name, str):
        raise TypeError(f"a name is a string, not {type(name).__name__}")
    # Case folding can produce characters that decompose further (and vice versa), so strip twice.
    folded = _strip_marks(_strip_marks(name).casefold())
    return " ".join(folded.split())


def same_person(a: str, b: str) -> bool:
    """Whether two names would be suggested as the same person (never merged automatically)."""
    return name_key(a) == name_key(b)


def matches_query(name: str, query: str) -> bool:
    """Type-ahead: the query's key is found at the start of the name or of one of its words."""
    q = name_key(query)
    if not q:
        return True
    key = name_key(name)
    return key.startswith(q) or f" {q}" in key


def short_name(name: str, limit: int = 12) -> str:
    """A default short name: the first word, cut to ``limit`` characters (whole characters, no marks lost)."""
    words = name.split()
    first = words[0] if words else name.strip()
    return first[:limit]


# -- the player page's maths -----------------------------------------------------------------------

def rating_trend(matches: list[dict], player) -> list[dict]:
    """OpenSkill (Weng-Lin, Plackett-Luce, as the season's ratings) through ``matches`` (``{"id", "date",
    "results": [{"player", "place"}]}``, players by any key, shared places are ties), in date order: the
    ``player``'s rating after each of their matches, ``[{"match", "date", "mu", "sigma", "ordinal"}]``."""
    from openskill.models import PlackettLuce  # lazy: the CLI stays fast without it

    model = PlackettLuce()
    current: dict = {}
    out = []
    for m in sorted(matches, key=lambda m: (m["date"], m["id"])):
        results = m["results"]
        if len(results) < 2:
            continue
        teams = [[current.get(r["player"]) or model.rating(name=str(r["player"]))] for r in results]
        rated = model.rate(teams, ranks=[r["place"] for r in results])
        for r, team in zip(results, rated):
            current[r["player"]] = team[0]
            if r["player"] == player:
                out.append({"match": m["id"], "date": m["date"], "mu": round(team[0].mu, 3),
                            "sigma": round(team[0].sigma, 3), "ordinal": round(team[0].ordinal(), 3)})
    return out


def sparkline_svg(values: list[float], width: int = 160, height: int = 36, label: str = "") -> str:
    """A small inline SVG line of ``values`` (no script, no library): the last point marked."""
    from html import escape

    pad = 3
    if not values:
        return ""
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    n = len(values)

    def xy(i, v):
        x = pad + (width - 2 * pad) * (i / (n - 1) if n > 1 else 0.5)
        y = pad + (height - 2 * pad) * (1 - (v - lo) / span if hi != lo else 0.5)
        return f"{x:.1f},{y:.1f}"

    pts = " ".join(xy(i, v) for i, v in enumerate(values))
    last = xy(n - 1, values[-1]).split(",")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="sparkline" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
            f"<title>{escape(label)}</title>"
            f'<polyline fill="none" stroke="currentColor" stroke-width="1.5" points="{pts}"/>'
            f'<circle cx="{last[0]}" cy="{last[1]}" r="2.5" fill="currentColor"/></svg>')
