"""The club roster's pure maths: a player's rating trend and its sparkline. No I/O. How two typed names are
compared (``name_key``, ``matches_query``, ``short_name``) is ``companion/base/names.py``, which the roster's
rows use too."""

from __future__ import annotations

from companion.base.names import matches_query, name_key, same_person, short_name

__all__ = ["name_key", "same_person", "matches_query", "short_name", "rating_trend", "sparkline_svg"]


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
