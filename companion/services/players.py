"""A roster player's page: matches per game (played, wins, average place, OpenSkill rating and its trend)
and season points, from the roster's rows (``companion/storage/players.py``) and the seasons'."""

from __future__ import annotations

from companion.core import season as core
from companion.core.roster import rating_trend
from companion.services import seasons as season_store
from companion.storage.players import club_results, get_player, history, similar_to


def profile(store, player_id: str, last: int = 10) -> dict:
    """What the player page shows: matches per game (played, wins, average place, OpenSkill rating and
    its trend), season points, the last ``last`` results (newest first)."""
    p = get_player(store, player_id)
    club = season_store.get_club(store, p["club_id"])
    hist = history(store, player_id)
    games: dict[str, dict] = {}
    for h in hist:
        g = games.setdefault(h["game"], {"game": h["game"], "matches": 0, "wins": 0, "places": []})
        g["matches"] += 1
        if h["place"] is not None:
            g["places"].append(h["place"])
            g["wins"] += h["place"] == 1
    per_game = []
    for game, g in sorted(games.items()):
        trend = rating_trend(club_results(store, p["club_id"], game), player_id)
        places = g.pop("places")
        per_game.append({**g, "average_place": round(sum(places) / len(places), 2) if places else None,
                         "rating": trend[-1] if trend else None, "trend": [t["ordinal"] for t in trend]})
    seasons = []
    for sid in sorted({h["season_id"] for h in hist if h["season_id"]}):
        s = season_store.get_season(store, sid)
        _season, rules, matches = season_store.season_data(store, sid)
        row = next((r for r in core.standings(matches, rules) if r["player"] == p["name"]), None)
        if row is not None:
            seasons.append({"season_id": sid, "season": s["name"], "game": s["game"], "year": s["year"],
                            "points": core.num(row["points"]), "rank": row["rank"], "matches": row["matches"],
                            "eligible": row["eligible"]})
    seasons.sort(key=lambda s: (-s["year"], s["game"]))
    return {**p, "club": club["name"], "matches": len(hist), "games": per_game, "seasons": seasons,
            "last": hist[::-1][:last], "similar": [x["id"] for x in similar_to(store, p["club_id"], p["name"],
                                                                               exclude=player_id)]}
