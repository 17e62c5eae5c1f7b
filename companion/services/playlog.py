"""A finished match's play for the players' play loggers: what ``companion.core.playlog`` needs, read from the
match service and the club's rows (no SQL here, no rule: it reads and assembles). docs/playlog.md."""

from __future__ import annotations

from companion.core import playlog
from companion.base.errors import NotFoundError, RuleError


def first_player(fold) -> str | None:
    """Who played first: the clock's first seat where the match ran the clock (Web of Power's first
    player), else the first seat of the match."""
    seats = getattr(fold.module, "clock_seats", None)
    if seats is not None:
        try:
            order = seats(fold.game_state)
            if order:
                return order[0]
        except Exception:  # a game whose seats are not known yet: the match's seat order
            pass
    return fold.players[0] if fold.players else None


def match_play(service, store, match_id: str) -> dict:
    """``{"play", "url", "app_url"}`` of an ended match; a match still in play is refused (409): a play is
    sent only with the whole ranking."""
    from companion.services import seasons
    from companion.games import game_module
    from companion.storage import players as roster
    from companion.services.tournaments import match_results

    match = store.get_match(match_id)
    results = match_results(service, match_id) if match["status"] == "ended" else None
    if results is None:
        raise RuleError("the play log link is made when the match ends (with its whole ranking)", "match_id")
    fold = service.fold(match_id)
    events = store.events(match_id)
    started = events[0]["at"] if events else None
    ended = fold.last_at
    club_id = seasons.match_club(store, match)
    location = None
    if club_id:
        try:
            location = seasons.get_club(store, club_id)["name"]
        except NotFoundError:
            location = None
    seats = roster.match_seats(store, match_id)
    ids = {match["players"][i]: pid for i, pid in seats.items() if 0 <= i < len(match["players"]) and pid}
    module = game_module(match["game"])
    points = getattr(module, "final_points", None)
    points = points(fold.game_state) if points is not None and not fold.result_only else None
    if points:
        results = [{**r, "game_points": points.get(r["player"])} for r in results]
    play = playlog.build_play(
        match_id=match_id, game=match["game"], game_name=module.NAME, players=list(match["players"]),
        results=results, started_at=started, ended_at=ended, first_player=first_player(fold),
        location=location, player_ids=ids, bgg_id=playlog.BGG_IDS.get(match["game"]))
    return {"play": play, "url": playlog.link(play), "app_url": playlog.link(play, app=True)}
