"""The league: one championship over the seasons of several boxes (docs/league.md). Pure, no I/O.

Each box brings its season (its rules and its matches, read from a restored copy of its database);
the league is the union of their matches, scored by the same code as one box (``companion.core.season``):

- a match is known by its id: the same match on two boxes (exported from one, imported on the other)
  counts once, its venue naming both; two copies whose results differ are a *conflict*: neither counts
  until the organiser mends one box, and the conflict is listed;
- players are matched across boxes by their name as written; names that are equal once accents, case
  and compatibility forms are set aside but are written differently ("Nicolò" on one box, "Nicolo" on
  another) are *ambiguous*: they stay separate players and are listed for the organiser, never merged
  silently (``aliases`` merges them when the organiser says they are one person);
- the rules (points tables, bonuses, threshold) are the first box's; a box whose season has other
  rules is listed;
- a match dated more than a day after ``now`` is listed (a box whose clock is wrong).
"""

from __future__ import annotations

from companion.core import season as core
from companion.core.roster import name_key



def _results_key(m: dict) -> tuple:
    return tuple(sorted((r["player"], r["place"], bool(r["objective"]), bool(r["eliminated"]))
                        for r in m["results"]))


def combine(boxes: list[dict], aliases: dict[str, str] | None = None, now: str | None = None) -> dict:
    """``boxes``: ``[{"name", "season": {...} or None, "rules": Rules or None, "matches": [...]}]`` in the
    organiser's order (the first box with the season gives the rules). Returns ``{"rules", "matches",
    "ambiguous", "conflicts", "duplicates", "rule_differences", "clock_warnings", "boxes"}``; every match
    has ``venue`` (the box, or boxes joined by " + ")."""
    aliases = dict(aliases or {})
    rules = None
    rule_source = None
    rule_differences = []
    copies: dict[str, list[tuple[str, dict]]] = {}
    order: list[str] = []
    per_box = []
    for box in boxes:
        if box.get("season") is None:
            per_box.append({"box": box["name"], "matches": 0, "season": None})
            continue
        per_box.append({"box": box["name"], "matches": len(box["matches"]), "season": box["season"].get("name")})
        if rules is None:
            rules, rule_source = box["rules"], box["name"]
        elif box["rules"].to_json() != rules.to_json():
            rule_differences.append({"box": box["name"], "rules": box["rules"].to_json(), "used": rule_source})
        for m in box["matches"]:
            if aliases:
                m = {**m, "results": [{**r, "player": aliases.get(r["player"], r["player"])} for r in m["results"]]}
            if m["id"] not in copies:
                copies[m["id"]] = []
                order.append(m["id"])
            copies[m["id"]].append((box["name"], m))
    matches, conflicts, duplicates = [], [], []
    for mid in order:
        these = copies[mid]
        first_box, first = these[0]
        if len(these) == 1:
            matches.append({**first, "venue": first_box})
            continue
        keys = {_results_key(m) for _, m in these}
        venues = [b for b, _ in these]
        if len(keys) == 1:
            matches.append({**first, "venue": " + ".join(dict.fromkeys(venues))})
            duplicates.append({"match": mid, "boxes": venues})
        else:
            conflicts.append({"match": mid, "copies": [{"box": b, "date": m["date"], "results": m["results"]}
                                                       for b, m in these]})
    seen: dict[str, set] = {}  # name as written -> the boxes where it is
    for m in matches:
        venues = m["venue"].split(" + ")
        for r in m["results"]:
            where = seen.get(r["player"])
            if where is None:
                where = seen[r["player"]] = set()
            where.update(venues)
    spellings: dict[str, dict[str, set]] = {}
    for name, where in seen.items():  # one key per distinct name
        spellings.setdefault(name_key(name), {})[name] = where
    ambiguous = [{"key": k, "names": [{"name": n, "boxes": sorted(b)} for n, b in sorted(v.items())]}
                 for k, v in sorted(spellings.items()) if len(v) > 1]
    clock_warnings = []
    if now:
        limit = _next_day(now[:10])
        clock_warnings = [{"match": m["id"], "venue": m["venue"], "date": m["date"]}
                          for m in matches if m["date"][:10] > limit]
    return {"rules": rules or core.Rules(), "rules_from": rule_source, "matches": matches,
            "ambiguous": ambiguous, "conflicts": conflicts, "duplicates": duplicates,
            "rule_differences": rule_differences, "clock_warnings": clock_warnings, "boxes": per_box}


def _next_day(day: str) -> str:
    from datetime import date, timedelta

    return (date.fromisoformat(day) + timedelta(days=1)).isoformat()


def standings(league: dict) -> list[dict]:
    """The exact standings rows of the combined matches (``companion.core.season.standings``)."""
    return core.standings(league["matches"], league["rules"])


def standings_json(league: dict, title: str = "") -> dict:
    rows = standings(league)
    return {
        "league": title, "total_matches": len(league["matches"]), "threshold": core.num(league["rules"].threshold),
        "rules_from": league["rules_from"], "boxes": league["boxes"],
        "standings": [core.row_json(r) for r in rows],
        "ambiguous": league["ambiguous"], "conflicts": league["conflicts"], "duplicates": league["duplicates"],
        "rule_differences": league["rule_differences"], "clock_warnings": league["clock_warnings"],
    }


RESULTS_CSV_COLUMNS = core.RESULTS_CSV_COLUMNS + ["venue"]


def results_csv(league: dict, dialect: "core.CsvDialect" = core.PLAIN) -> str:
    """Every result of the league, one line per player per match in date order, with its venue."""
    return core.results_csv(league["matches"], league["rules"], dialect, extra=("venue", lambda m: m["venue"]))


def standings_text(league: dict, title: str = "") -> str:
    """The standings as a plain table for a terminal."""
    rows = standings(league)
    lines = [title] if title else []
    lines.append(f"{'rank':>4}  {'player':<24} {'points':>7} {'matches':>7} {'wins':>4}")
    for r in rows:
        rank = "-" if r["rank"] is None else str(r["rank"])
        lines.append(f"{rank:>4}  {r['player']:<24} {core.text(r['points']):>7} {r['matches']:>7} {r['wins']:>4}")
    lines.append(f"{len(league['matches'])} matches; threshold {core.text(league['rules'].threshold * 100, 0)}%")
    for a in league["ambiguous"]:
        lines.append("ambiguous (not merged): " + ", ".join(
            f"{n['name']} ({', '.join(n['boxes'])})" for n in a["names"]))
    for c in league["conflicts"]:
        lines.append(f"conflict (not counted): match {c['match']} differs between "
                     + ", ".join(x["box"] for x in c["copies"]))
    for d in league["rule_differences"]:
        lines.append(f"box {d['box']} has other season rules: the rules of {d['used']} are used")
    for w in league["clock_warnings"]:
        lines.append(f"match {w['match']} at {w['venue']} is dated {w['date']}, in the future: check that box's clock")
    return "\n".join(lines) + "\n"
