"""A tournament day as the pages, the API and the CLI show it: its rows (``companion/storage/tournaments.py``)
with each round's matches folded through the match service (their status and results) and the standings of
``companion/core/tournament.py``. No SQL here, no rule either: it reads and assembles (docs/tournament.md)."""

from __future__ import annotations

from companion.core import season as season_core
from companion.core import tournament as core
from companion.base.errors import NotFoundError
from companion.games import game_module
from companion.storage import tournaments as rows


def club_rules(store) -> season_core.Rules:
    """The fan club's points: the one club's settings when the box has exactly one club, else the defaults."""
    from companion.services import seasons

    clubs = seasons.list_clubs(store)
    return season_core.rules_from(clubs[0]["settings"] if len(clubs) == 1 else None)


def game_points(fold, player: str):
    """What the game itself gave ``player`` at the end (the game's ``final_points``: conquest's cities held,
    Web of Power's both scorings, Richelieu's and Rome's totals), or None when the game gives no number
    yet, or when the organiser entered the places (the board was not followed to its end: no number is
    known)."""
    if fold.entered is not None:
        return None
    points = fold.module.final_points(fold.game_state)
    v = points.get(player) if isinstance(points, dict) else None
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def match_results(service, match_id: str) -> list[dict] | None:
    """The results of an ended match (places, bonuses, game points), or None while it is not over."""
    from companion.services.seasons import results_from_fold

    fold = service.fold(match_id)
    if not fold.ended():
        return None
    results = results_from_fold(fold)
    if results is None:
        return None
    return [{**r, "game_points": game_points(fold, r["player"])} for r in results]


def roster_club(store, player_ids: list) -> str | None:
    """The club whose roster the tournament's registered players come from (the first known id's), or None."""
    from companion.storage import players as roster

    for pid in player_ids:
        if pid:
            try:
                return roster.get_player(store, pid)["club_id"]
            except NotFoundError:
                continue
    return None


def table_roster(t: dict, table: list[str]) -> dict[int, str]:
    """{seat: roster id} of a table's registered players known on the roster (for ``MatchService.create``)."""
    ids = dict(zip(t["players"], t.get("player_ids") or []))
    return {i: ids[p] for i, p in enumerate(table) if ids.get(p)}


def seat_limits(game: str) -> tuple[int, int]:
    """The table sizes a tournament of ``game`` may use: 3..6 within the game's own player counts."""
    mod = game_module(game)
    return (max(core.MIN_SEATS, getattr(mod, "MIN_PLAYERS", core.MIN_SEATS)),
            min(core.MAX_SEATS, getattr(mod, "MAX_PLAYERS", core.MAX_SEATS)))


def active(t: dict) -> list[str]:
    """The registered players still in (not withdrawn), in registration order."""
    out = set(t.get("withdrawn") or ())
    return [p for p in t["players"] if p not in out]


def next_seating(t: dict, rng=None) -> tuple[list[list[str]], list[str]]:
    """The next round's tables and the players sitting it out (docs/tournament.md, "Late arrivals, drop-outs
    and sitting out"): every player still in is seated, unless the numbers don't fit the game's tables;
    then the fewest sit out, those who sat out least first, the lowest in the standings among them."""
    lo, hi = seat_limits(t["game"])
    players = active(t)
    sat: dict[str, int] = {}
    for r in t["round_list"]:
        for p in r.get("sitting_out") or ():
            sat[p] = sat.get(p, 0) + 1
    first = t["next_round"] == 1
    standing = None if first else [r["player"] for r in t["standings"]]
    seated, out = core.sit_out(players, t["table_size"], lo, hi, sat, standing, rng)
    if first:
        return core.seat_round(seated, t["table_size"], rng=rng, lo=lo, hi=hi), out
    met = core.meetings([r["tables"] for r in t["round_list"]])
    order = [p for p in standing if p in seated]
    return core.seat_round(seated, t["table_size"], rng=rng, standing=order, met=met, lo=lo, hi=hi), out


def seated_round(t: dict) -> int | None:
    """The round seated but not started (its seats may still change), or None."""
    return next((r["round"] for r in t["round_list"] if r["status"] == "seated"), None)


def document(store, service, tid: str) -> dict:
    """The tournament: settings, players, rounds (tables, status seated/playing/ended, matches with their
    results), standings, the next round to seat (or None) and whether it is finished."""
    t = rows.get(store, tid)
    finished, rounds_out = [], []
    for r in t.pop("round_list"):
        matches, status = [], "seated"
        if r["match_ids"]:
            ended = 0
            for k, mid in enumerate(r["match_ids"]):
                try:
                    m = store.get_match(mid)
                except NotFoundError:
                    matches.append({"table": k + 1, "match_id": mid, "status": "missing"})
                    continue
                res = match_results(service, mid) if m["status"] == "ended" else None
                if res is not None:
                    ended += 1
                    finished.append({"results": res, "round": r["round"], "table": k + 1})
                matches.append({"table": k + 1, "match_id": mid, "status": m["status"], "results": res})
            status = "ended" if ended == len(r["match_ids"]) else "playing"
        rounds_out.append({"round": r["round"], "tables": r["tables"], "status": status,
                           "started_at": r["started_at"], "matches": matches,
                           "sitting_out": r.get("sitting_out") or []})
    table = core.standings(t["players"], finished, club_rules(store))
    gone = set(t.get("withdrawn") or ())
    for row in table:
        row["withdrawn"] = row["player"] in gone
    t["club_id"] = roster_club(store, t["player_ids"])
    t["rounds_played"] = len(rounds_out)
    t["round_list"] = rounds_out
    t["standings"] = [core.row_json(x) for x in table]
    nxt = len(rounds_out) + 1
    t["next_round"] = nxt if nxt <= t["rounds"] and all(r["status"] == "ended" for r in rounds_out) else None
    t["finished"] = len(rounds_out) == t["rounds"] and all(r["status"] == "ended" for r in rounds_out)
    return t
