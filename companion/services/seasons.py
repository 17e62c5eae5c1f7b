"""Clubs, seasons and their results, for the CLI and the web: the rules (what settings and results may be,
which season a match feeds); the rows are ``companion/storage/seasons.py``.

A season belongs to a club, a game and a year (one per club, game and year). Its matches come from two
places: a finished match of the app (``record_finished_match``, called by ``derive_from_fold`` in the
match event's own transaction, see ``companion.services.matches``) and results the organiser enters for a match played without the app
(``add_result``). Every write goes through ``Store.write()``; the maths is ``companion.core.season``.

Which season an app match feeds: chosen at creation (``options_for_new_match``: the club's season of
the game and year by default, or another, or ``"none"``) and kept in the match's options, so the
result feeds exactly that season whatever the number of clubs. ``options.season`` (a season id or
``club/game/year``, or ``"none"``: no season) when the match names one; else ``options.club`` (a club id or name), or the only club when the store has exactly one,
and the season of that club for the match's game and the year it ended. A season is never created
implicitly: a match with no such season is not recorded (the organiser creates the season once a year).
"""

from __future__ import annotations

import logging
import re

from companion.base.errors import ConflictError, InputError, NotFoundError, RuleError
from companion.core import season as core
from companion.storage import new_id
from companion.storage import seasons as rows
from companion.storage.seasons import find_season, get_club, get_season, list_clubs, season_match_count, \
    season_matches

__all__ = ["find_season", "get_club", "get_season", "list_clubs", "season_match_count", "season_matches"]

log = logging.getLogger(__name__)


# -- clubs --------------------------------------------------------------------------------------

def _check_settings(settings, where: str, base: core.Rules | None = None) -> dict:
    """Schema + the rules the schema can't say (a table's length); returns the settings."""
    from companion.base.schemas import validate

    settings = {} if settings is None else settings
    try:
        validate("season.settings", settings)
    except InputError as exc:
        raise exc.again(InputError, where + (exc.field or "$")[1:]) from None
    (base or core.Rules()).with_settings(settings, where)
    return settings


_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")  # (as in a player's name: storage/players.py)


def _club_name(name, field: str = "name") -> str:
    """A club's (or a season's) name: a line of text of at most 100 characters, no control characters."""
    if not isinstance(name, str) or not name.strip() or len(name) > 100:
        raise InputError("must be a non-empty name of at most 100 characters", field)
    if _CONTROL.search(name):
        raise InputError("must not contain control characters", field)
    return name.strip()


def create_club(store, name: str, settings: dict | None = None) -> dict:
    name = _club_name(name)
    settings = _check_settings(settings, "settings")
    return rows.insert_club(store, {"id": new_id()[:12], "name": name, "settings": settings,
                                    "created_at": store.clock.now_iso()})


def first_club(store, name: str) -> dict:
    """The box's club for its first roster player: the only club, or a new one named ``name`` when the box
    has none yet (docs/rulings.md#the-first-roster-player). Several clubs: InputError (say which one)."""
    with store.write():
        clubs = list_clubs(store)
        if not clubs:
            return create_club(store, name)
    if len(clubs) > 1:
        raise InputError("this box has several clubs: say which one", "club")
    return clubs[0]


def rename_club(store, ref: str, name: str, settings: dict | None = None) -> dict:
    """A club's new name (its matches and seasons hold its id: they stay its; a season keeps the name it
    was given) and, when given, its new settings (as :func:`set_club_settings`): both checked before either
    is written, in one write (a refused one changes nothing)."""
    club = get_club(store, ref)
    name = _club_name(name)
    if settings is not None:
        settings = _check_settings(settings, "settings")
    with store.write():
        if settings is not None:
            for s in list_seasons(store, club["id"]):  # existing results must stay scorable
                _check_still_scorable(store, s, club_settings=settings)
            rows.update_club_settings(store, club["id"], settings)
        rows.update_club_name(store, club["id"], name)
    return {**club, "name": name, **({"settings": settings} if settings is not None else {})}


def set_club_settings(store, ref: str, settings: dict) -> dict:
    """Replace a club's settings (every season of the club without its own value follows them)."""
    club = get_club(store, ref)
    settings = _check_settings(settings, "settings")
    for s in list_seasons(store, club["id"]):  # existing results must stay scorable
        _check_still_scorable(store, s, club_settings=settings)
    rows.update_club_settings(store, club["id"], settings)
    return {**club, "settings": settings}


# -- seasons ------------------------------------------------------------------------------------

def create_season(store, club: str, game: str, year: int, name: str | None = None,
                  settings: dict | None = None) -> dict:
    from companion.games import GAMES

    if game not in GAMES:
        raise InputError("unknown game {game!r} (known: {names})", "game", game=game, names=', '.join(sorted(GAMES)))
    if isinstance(year, bool) or not isinstance(year, int) or not 1900 <= year <= 9999:
        raise InputError("must be a year (1900..9999)", "year")
    if name is not None:
        _club_name(name)
    c0 = get_club(store, club)
    rules = core.rules_from(c0["settings"])
    settings = _check_settings(settings, "settings", rules)
    season = {"id": new_id()[:12], "club_id": c0["id"], "club": c0["name"], "game": game, "year": year,
              "name": (name or f"{c0['name']} {game} {year}").strip(), "settings": settings,
              "created_at": store.clock.now_iso()}
    with store.write():
        rows.insert_season(store, season)
        season["taken_in"] = take_in_finished(store, season)
    return season


def _fold(store, match: dict):
    """A match's fold, read from its log (the season service's own look at a finished match)."""
    from companion.core.match import Fold

    def history(before_seq, match_id=match["id"]):
        return store.events(match_id, before_seq=before_seq)

    return Fold(match["game"], match["players"], match["options"], history=history)._load(store.events(match["id"]))


def take_in_finished(store, season: dict) -> list[str]:
    """A season just made takes in the finished app matches left to "this year's season" (their options name
    no season) of its club, its game and its year: they were waiting for it (docs/rulings.md#a-season-made-after-its-matches).
    Inside the caller's write; returns the ids taken in. A match the season's rules refuse stays out (logged)."""
    from companion.base.errors import CompanionError

    taken = []
    for m, f, results in _outside(store, season):
        if (m["options"] or {}).get("season"):
            continue
        try:
            with store.write():  # a savepoint: a refusal takes back only this match
                record_finished_match(store, m, results, date=f.last_at, season=season)
        except CompanionError as exc:
            log.warning("season %s could not take in match %s: %s", season["id"], m["id"], exc)
            continue
        taken.append(m["id"])
    return taken


def _outside(store, season: dict):
    """(match, fold, results) of each finished app match of the season's club, game and year that no season holds."""
    for m in rows.ended_matches_in_no_season(store, season["game"]):
        if match_club(store, m) != season["club_id"]:
            continue
        f = _fold(store, m)
        results = results_from_fold(f) if f.ended() else None
        if results is None or not f.last_at or int(f.last_at[:4]) != season["year"]:
            continue
        yield m, f, results


def matches_outside(store, season: dict) -> list[dict]:
    """The finished app matches of the season's club, game and year that no season counts (chosen for no
    season, or taken out): what the organiser may put in it. ``[{"id", "date", "players"}]``, oldest first."""
    return [{"id": m["id"], "date": f.last_at, "players": m["players"]} for m, f, _ in _outside(store, season)]


def list_seasons(store, club: str | None = None) -> list[dict]:
    """Every season, or a club's (by its id or name)."""
    return rows.list_seasons(store, get_club(store, club)["id"] if club is not None else None)


def set_season_settings(store, ref: str, settings: dict) -> dict:
    season = get_season(store, ref)
    club = get_club(store, season["club_id"])
    settings = _check_settings(settings, "settings", core.rules_from(club["settings"]))
    _check_still_scorable(store, season, season_settings=settings)
    rows.update_season_settings(store, season["id"], settings)
    return {**season, "settings": settings}


def season_rules(store, season: dict, club_settings: dict | None = None,
                 season_settings: dict | None = None) -> core.Rules:
    if club_settings is None:
        club_settings = get_club(store, season["club_id"])["settings"]
    return core.rules_from(club_settings, season["settings"] if season_settings is None else season_settings)


def _check_still_scorable(store, season, **settings) -> None:
    rules = season_rules(store, season, **settings)
    for m in season_matches(store, season["id"]):
        if rules.table(len(m["results"])) is None:
            raise RuleError("season {name!r} has a {n_results}-player match ({id}); it needs a points table for "
                            "{n_results} players", "settings.points", name=season['name'], n_results=len(m['results']), id=m['id'])


# -- results ------------------------------------------------------------------------------------

def add_result(store, ref: str, doc) -> dict:
    """The organiser enters a match played without the app (``schemas/season.result.schema.json``).
    Errors name the JSON path of the document."""
    from companion.base.schemas import validate

    season = get_season(store, ref)
    validate("season.result", doc)
    rules = season_rules(store, season)
    m = {"id": doc.get("id") or "m-" + new_id()[:10], "date": doc["date"], "results": doc["results"]}
    nm = core.check_match(m, rules, "$")
    if int(nm["date"][:4]) != season["year"]:
        raise InputError("the date is not in the season's year {year}", "$.date", year=season['year'])
    nm["game"] = season["game"]
    from companion.storage import players as roster

    with store.write() as c:
        if rows.has_match(c, season["id"], nm["id"]):
            raise ConflictError("the season has a match {id!r} already", "$.id", id=nm['id'])
        ids = roster.ensure_players(store, season["club_id"], [r["player"] for r in nm["results"]])
        rows.insert_match(c, season["id"], nm, "manual", None, store.clock.now_iso(), ids)
    return {**nm, "season": season["id"], "source": "manual"}


def remove_result(store, ref: str, match: str) -> None:
    """Take a match out of the season. A match of the app is then chosen to feed no season (its options
    say so), so that no rebuild nor new season puts it back; ``set_match_season`` adds it again."""
    season = get_season(store, ref)
    if rows.season_of_app_match(store, match) == season["id"]:
        set_match_season(store, store.get_match(match), NO_SEASON)
        return
    if not rows.delete_match(store, season["id"], match):
        raise NotFoundError("the season has no match {match!r}", "match", match=match)


def season_for_match(store, match: dict, date: str) -> dict | None:
    """The season an app match feeds (see the module's docstring), or None."""
    options = match.get("options") or {}
    if options.get("season") == NO_SEASON:
        return None
    if options.get("season"):
        try:
            return get_season(store, str(options["season"]))
        except NotFoundError:
            log.warning("match %s names season %r, which does not exist", match.get("id"), options["season"])
            return None
    if options.get("club"):
        try:
            club = get_club(store, str(options["club"]))
        except NotFoundError:
            log.warning("match %s names club %r, which does not exist", match.get("id"), options["club"])
            return None
    else:
        only = rows.only_club_id(store)
        if only is None:
            return None
        club = {"id": only}
    return find_season(store, club["id"], match["game"], int(date[:4]))


NO_SEASON = "none"  # options.season of a match chosen at creation to feed no season


def season_state(store, match: dict) -> dict:
    """What a match's result counts for, as the TV and the match page say it: ``{"state", "season"}`` with
    ``state`` ``"counted"`` (a season holds it: ``season`` is that season), ``"waiting"`` (left to this year's
    season, which does not exist yet, or a season that did not take it: "not in a season yet") or
    ``"none"`` (chosen to feed no season)."""
    held = rows.season_of_app_match(store, match["id"])
    if held is not None:
        return {"state": "counted", "season": get_season(store, held)}
    if (match.get("options") or {}).get("season") == NO_SEASON:
        return {"state": "none", "season": None}
    return {"state": "waiting", "season": None}


def set_match_season(store, match: dict, season=None) -> dict:
    """The organiser's choice of the season a match feeds, after its creation: a season (id or
    club/game/year), ``"none"``, or None for this year's season of its club (the creation's default). An
    ended match is taken out of the season that held it and recorded in the new one at once; a season of
    another game, or of a year other than the one the match ended in, is refused. Returns ``season_state``."""
    target = None
    if season not in (None, "", NO_SEASON):
        target = get_season(store, str(season), "season")
        if target["game"] != match["game"]:
            raise InputError("season {name!r} is of {game}, not {game2}", "season", name=target["name"],
                             game=target["game"], game2=match["game"])
    with store.write():
        # the match as it stands in this write: the options set meanwhile (who records on the phones) kept
        match = store.get_match(match["id"])
        options = dict(match.get("options") or {})
        if target is not None:
            options.update({"club": target["club_id"], "season": target["id"]})
        elif season == NO_SEASON:
            options["season"] = NO_SEASON
        else:
            options.pop("season", None)
        f = _fold(store, match) if match.get("status") == "ended" else None
        results = results_from_fold(f) if f is not None and f.ended() else None
        if target is not None and results is not None and f.last_at and int(f.last_at[:4]) != target["year"]:
            raise InputError("the match ended in {ended}, not in the season's year {year}", "season",
                             ended=int(f.last_at[:4]), year=target["year"])
        new = {**match, "options": options}
        store.set_options(match["id"], options)
        forget_app_match(store, match["id"])
        if results is not None:
            record_finished_match(store, new, results, date=f.last_at, season=target)
    return season_state(store, new)


def match_club(store, match: dict) -> str | None:
    """The club a match belongs to: its options' season's or club's, else the only club (or None)."""
    options = match.get("options") or {}
    try:
        if options.get("season") and options["season"] != NO_SEASON:
            return get_season(store, str(options["season"]))["club_id"]
        if options.get("club"):
            return get_club(store, str(options["club"]))["id"]
    except NotFoundError:
        return None
    return rows.only_club_id(store)


def options_for_new_match(store, game: str, club=None, season=None, year: int | None = None) -> dict:
    """The season a new match feeds, chosen at creation: ``{"club": id, "season": id | "none"}`` to put in
    its options (so an export carries them). ``season``: a season id (or club/game/year), ``"none"``, or
    None for the club's season of that game this year when there is one. ``club``: an id or name; when the
    box has several clubs and neither is named, the match belongs to no club (``{}``, as with no club)."""
    if season not in (None, "", NO_SEASON):
        s = get_season(store, str(season), "season")
        if s["game"] != game:
            raise InputError("season {name!r} is of {game}, not {game2}", "season", name=s['name'], game=s['game'], game2=game)
        if club not in (None, "") and get_club(store, str(club), "club")["id"] != s["club_id"]:
            raise InputError("season {name!r} is not of that club", "season", name=s['name'])
        return {"club": s["club_id"], "season": s["id"]}
    if club not in (None, ""):
        club_id = get_club(store, str(club), "club")["id"]
    else:
        clubs = list_clubs(store)
        if not clubs:
            if season == NO_SEASON:
                return {"season": NO_SEASON}
            return {}
        if len(clubs) > 1:  # the match names no club: it feeds no season (the new-match page always names one)
            return {"season": NO_SEASON} if season == NO_SEASON else {}
        club_id = clubs[0]["id"]
    if season == NO_SEASON:
        return {"club": club_id, "season": NO_SEASON}
    year = year or int(store.clock.now_iso()[:4])
    current = find_season(store, club_id, game, year)
    # No season yet: the match feeds the club's season of the year it ends, if the organiser creates it by then.
    return {"club": club_id, "season": current["id"]} if current else {"club": club_id}


def record_finished_match(store, match: dict, results: list[dict], date: str | None = None,
                          season: dict | None = None) -> dict | None:
    """Record (or re-record: idempotent) a finished app match in its season.

    ``match`` is the store's match (``id``, ``game``, ``players``, ``options``, ``created_at``);
    ``results`` are ``[{"player", "place", "objective"?, "eliminated"?}]``; ``date`` the instant it
    ended (default: now). Returns the season match, or None when the match feeds no season."""
    date = core.normalize_date(date or store.clock.now_iso(), "date")
    season = season or season_for_match(store, match, date)
    if season is None:
        return None
    if season["game"] != match["game"]:
        raise InputError("season {name!r} is of {game}, the match of {game2}", "season", name=season['name'], game=season['game'], game2=match['game'])
    rules = season_rules(store, season)
    if not isinstance(results, list):
        raise InputError("must be a list of results", "results")
    for j, r in enumerate(results):
        if not isinstance(r, dict) or not isinstance(r.get("player"), str) or \
                isinstance(r.get("place"), bool) or not isinstance(r.get("place"), int):
            raise InputError("each result needs a player name and a whole-number place", f"results[{j}]")
    players = set(match.get("players") or [])
    for j, r in enumerate(results):
        if players and r["player"] not in players:
            raise InputError("{player!r} is not a player of match {id}", f"results[{j}].player", player=r['player'], id=match['id'])
    try:
        nm = core.check_match({"id": match["id"], "date": date, "results": results}, rules, "")
    except InputError as exc:
        raise exc.again(InputError, (exc.field or "").lstrip(".")) from None
    nm["game"] = match["game"]
    now = store.clock.now_iso()
    from companion.storage import players as roster

    with store.write() as c:
        rows.delete_app_match(c, match["id"])
        if rows.has_match(c, season["id"], match["id"]):
            raise ConflictError("the season has a match {id!r} entered by hand", "id", id=match['id'])
        # Each result's roster id: the seat's roster player chosen at creation, else the exact name on the
        # season's club roster (added when missing: whoever plays a season match is on the club's roster).
        seats = roster.match_seats(store, match["id"])
        seat_of = {name: i for i, name in enumerate(match.get("players") or [])}
        ids = {r["player"]: seats[seat_of[r["player"]]] for r in nm["results"]
               if seat_of.get(r["player"]) in seats}
        ids.update(roster.ensure_players(store, season["club_id"],
                                         [r["player"] for r in nm["results"] if r["player"] not in ids]))
        rows.insert_match(c, season["id"], nm, "app", match["id"], now, ids)
        roster.link_match(store, match, season["club_id"],
                          {i: ids[name] for name, i in seat_of.items() if name in ids})
    return {**nm, "season": season["id"], "source": "app"}


def forget_app_match(store, match_id: str) -> bool:
    """Take an app match out of its season (an undo re-opened it). True when there was one."""
    with store.write() as c:
        return rows.delete_app_match(c, match_id)


# -- reading a season ---------------------------------------------------------------------------

def season_data(store, ref: str) -> tuple[dict, core.Rules, list[dict]]:
    season = get_season(store, ref)
    matches = season_matches(store, season["id"])
    for m in matches:
        m["game"] = season["game"]
    return season, season_rules(store, season), matches


def season_document(store, ref: str) -> dict:
    """The season as one document (``season.standings`` schema), readable by ``season standings``."""
    season, rules, matches = season_data(store, ref)
    return core.season_json({"season": season["name"], "club": season["club"], "game": season["game"],
                             "year": season["year"]}, rules, matches)


def season_standings(store, ref: str, with_ratings: bool = False) -> dict:
    season, rules, matches = season_data(store, ref)
    out = {
        "season": season["name"],
        "season_id": season["id"],
        "club": season["club"],
        "game": season["game"],
        "year": season["year"],
        "total_matches": len(matches),
        "threshold": core.num(rules.threshold),
        "standings": [core.row_json(r) for r in core.standings(matches, rules)],
    }
    if with_ratings:
        out["ratings"] = core.ratings(matches)
    return out


# -- feeding seasons from app matches -------------------------------------------------------------

def results_from_fold(fold) -> list[dict] | None:
    """Season results of an ended match: the fold's ``final_ranking()`` (the game's ``final_ranking(state)``,
    or the places entered by hand in a result-only match), in the one shape
    ``[{"player", "place", "objective", "eliminated"}]`` every game gives (places 1, 2, 2, 4;
    ``companion.games.contract.Placing``); None while the game has no result (a scoring still missing parts)."""
    ranking = fold.final_ranking()
    if ranking is None:
        return None
    return [{"player": r["player"], "place": r["place"], "objective": r["objective"],
             "eliminated": r["eliminated"]} for r in ranking]


def derive_from_fold(store, match: dict, fold, event: dict) -> None:
    """The season rows derived from a match's log, written by the match service in the event's own
    transaction: an ended match is recorded in its season (idempotent); an undo that re-opened it, or a
    rebuild of a match still in play, takes it out. A season that cannot take the result (its rules
    refuse it) is logged and leaves the match alone."""
    from companion.base.errors import CompanionError
    from companion.storage import players as roster

    if fold.ended():
        results = results_from_fold(fold)
        if results is None:
            return
        try:
            with store.write():  # a savepoint: a refusal takes back only this
                record_finished_match(store, match, results, date=fold.last_at or event.get("at"))
        except CompanionError as exc:
            log.warning("could not record match %s in its season: %s", match["id"], exc)
        roster.set_places(store, match, results)
    elif event.get("type") == "undo" or event.get("rebuild"):
        roster.set_places(store, match, None)
        forget_app_match(store, match["id"])


def chart_colours(store, season: dict, matches: list[dict]) -> dict[str, list[str]]:
    """Each player's colours for the season's chart, by preference: their own (the club's roster), then the
    colours they played with at the table, their last match of the season first (core.chart_colours takes the
    first no other player took)."""
    from companion.storage import players as roster

    out: dict[str, list[str]] = {}
    for p in roster.list_players(store, season["club_id"]):
        if p.get("colour"):
            out[p["name"]] = [p["colour"]]
    for m in sorted(matches, key=lambda m: m.get("date") or "", reverse=True):
        if m.get("match_id"):
            for name, colour in store.meta(m["match_id"])["colours"].items():
                if colour not in out.setdefault(name, []):
                    out[name].append(colour)
    return out
