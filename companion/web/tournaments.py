"""Tournament days: ``/api/tournaments…`` (create, register players, seat a round, swap seats by hand,
start a round, standings as JSON and CSV), the pages ``/tournaments``, ``/tournaments/<id>`` and the printable
``/tournaments/<id>/print``, and ``GET /api/matches/<id>/result`` (a finished match's ranking with the club
points each place earns, for the TV). The seating and the standings are ``companion/core/tournament.py``; the rows
``companion/storage/tournaments.py``; every match is created and started through the match service and the
clock runner, as the tables page does."""

from __future__ import annotations

from flask import Blueprint, jsonify, render_template, request

from companion.base import lazy
from companion.base.errors import ConflictError, InputError, NotFoundError, RuleError
from companion.core.match import uses_clock
from companion.storage import tournaments as rows
from companion.web.core import CSV_DIALECT_PARAM, ctx, json_body, require
from companion.web.apidoc import SECURITY, body as _body, err as _err, ok as _ok, path_param

season_core = lazy.module("companion.core.season")  # imported at the first request that needs them
core = lazy.module("companion.core.tournament")
days = lazy.module("companion.services.tournaments")

bp = Blueprint("tournaments", __name__)


# -- reading (companion/services/tournaments.py) --------------------------------------------------------------

def _rules():
    return days.club_rules(ctx().store)


def match_results(match_id: str) -> list[dict] | None:
    return days.match_results(ctx().service, match_id)


def _doc(tid: str) -> dict:
    c = ctx()
    return days.document(c.store, c.service, tid)


def _limits(game: str) -> tuple[int, int]:
    return days.seat_limits(game)


# -- API -----------------------------------------------------------------------------------------------

@bp.get("/api/tournaments")
def list_tournaments():
    return jsonify({"tournaments": rows.list_all(ctx().store)})


@bp.post("/api/tournaments")
@require("organiser")
def create_tournament():
    doc = json_body("api.tournament-create")
    lo, hi = _limits(doc["game"])
    if not lo <= doc["table_size"] <= hi:
        raise InputError("{game} is played at tables of {lo} to {hi}", "$.table_size", game=doc['game'], lo=lo, hi=hi)
    entries = [p if isinstance(p, dict) else {"name": p} for p in doc.get("players", [])]
    players = [p["name"].strip() for p in entries]
    if any(not p for p in players) or len(set(players)) != len(players):
        raise InputError("every player once, by a name that is not blank", "$.players")
    player_ids = _roster_ids([p.get("player_id") for p in entries])
    season_core.normalize_date(doc["date"], "$.date")
    t = rows.create(ctx().store, doc["name"].strip(), doc["date"], doc["game"], doc["table_size"], doc["rounds"],
                    doc.get("clock_minutes"), players, player_ids)
    return jsonify(_doc(t["id"])), 201, {"Location": f"/api/tournaments/{t['id']}"}


def _roster_ids(ids: list) -> list:
    """The roster ids of a new tournament's players (None: a guest): each on the roster, once, of one club."""
    from companion.storage import players as roster

    clubs = set()
    for i, pid in enumerate(ids):
        if pid is None:
            continue
        field = f"$.players[{i}].player_id"
        try:
            clubs.add(roster.get_player(ctx().store, pid, field)["club_id"])
        except NotFoundError as exc:
            raise exc.under("$", InputError) from None
        if ids.index(pid) != i:
            raise InputError("that roster player is registered twice (under two names)", field)
        if len(clubs) > 1:
            raise InputError("the roster players must come from one club's roster", field)
    return ids


@bp.get("/api/tournaments/<tid>")
def get_tournament(tid):
    return jsonify(_doc(tid))


def _players_change(tid: str) -> dict:
    """Before the players change: refused once every round is played; a round seated but not started is
    seated again afterwards (its seating is dropped). Returns the tournament document as it was."""
    t = _doc(tid)
    if t["finished"]:
        raise RuleError("all {rounds} rounds have been played", "$", rounds=t["rounds"])
    n = days.seated_round(t)
    if n is not None:
        rows.drop_round(ctx().store, tid, n)
    return t


@bp.post("/api/tournaments/<tid>/players")
@require("organiser")
def add_player(tid):
    """Register a player: before round 1, or between rounds (a late arrival, seated from the next round);
    a player who withdrew is back under the same name."""
    doc = json_body("api.tournament-player")
    c = ctx()
    name = doc["player"].strip()
    if not name:
        raise InputError("a player needs a name", "$.player")
    t = rows.get(c.store, tid)
    if name in t["withdrawn"]:
        _players_change(tid)
        rows.withdraw_player(c.store, tid, name, back=True)
        return jsonify(_doc(tid)), 201
    pid = doc.get("player_id")
    if pid:
        from companion.storage import players as roster

        try:
            club = roster.get_player(c.store, pid, "player_id")["club_id"]
        except NotFoundError as exc:
            raise exc.under("$", InputError) from None
        mine = days.roster_club(c.store, rows.get(c.store, tid)["player_ids"])
        if mine is not None and club != mine:
            raise InputError("that roster player is of another club than the tournament's players", "$.player_id")
    if name in t["players"]:  # (before anything changes)
        raise ConflictError("{player!r} is registered already", "$.player", player=name)
    _players_change(tid)
    rows.add_player(c.store, tid, name, pid)
    return jsonify(_doc(tid)), 201


@bp.delete("/api/tournaments/<tid>/players/<path:player>")
@require("organiser")
def remove_player(tid, player):
    """Before round 1 is seated: unregister. Afterwards: the player withdraws (a drop-out): never seated
    again, their results kept in the standings."""
    c = ctx()
    t = rows.get(c.store, tid)
    if player not in t["players"]:
        raise NotFoundError("{player!r} is not registered", "player", player=player)
    _players_change(tid)
    if t["round_list"]:
        rows.withdraw_player(c.store, tid, player)
    else:
        rows.remove_player(c.store, tid, player)
    return jsonify(_doc(tid))


@bp.post("/api/tournaments/<tid>/rounds")
@require("organiser")
def seat_next_round(tid):
    """Seat the next round: round 1 at random, later ones by the standings keeping those who met apart."""
    json_body(optional=True)
    c = ctx()
    t = _doc(tid)
    if t["next_round"] is None:
        if t["finished"]:
            raise RuleError("all {rounds} rounds have been played", "$", rounds=t['rounds'])
        raise RuleError("the round in play has not ended: every table's match must end first", "$")
    rng = c.runner.rng if c.runner is not None else None
    tables, out = days.next_seating(t, rng)
    rows.put_round(c.store, tid, t["next_round"], tables, out)
    return jsonify(_doc(tid)), 201


@bp.put("/api/tournaments/<tid>/rounds/<int:number>")
@require("organiser")
def set_seats(tid, number):
    """The organiser's own seats for a round not started (swaps by hand): the same players, tables of the
    sizes the game allows."""
    doc = json_body("api.tournament-seats")
    c = ctx()
    t = _doc(tid)
    r = next((x for x in t["round_list"] if x["round"] == number), None)
    if r is None:
        raise NotFoundError("round {number} is not seated", "round", number=number)
    if r["status"] != "seated":
        raise ConflictError("round {number} has started: its seats are fixed", "$.tables", number=number)
    tables = [[p.strip() for p in table] for table in doc["tables"]]
    seen = [p for table in tables for p in table]
    want = [p for table in r["tables"] for p in table]  # the round's seated players (not those sitting out)
    if sorted(seen) != sorted(want):
        missing = sorted(set(want) - set(seen))
        extra = sorted(set(seen) - set(want))
        dup = sorted({p for p in seen if seen.count(p) > 1})
        what = "; ".join(x for x in (f"missing: {', '.join(missing)}" if missing else "",
                                      f"not registered: {', '.join(extra)}" if extra else "",
                                      f"twice: {', '.join(dup)}" if dup else "") if x)
        raise InputError("every registered player exactly once ({what})", "$.tables", what=what)
    lo, hi = _limits(t["game"])
    for k, table in enumerate(tables):
        if not lo <= len(table) <= hi:
            raise InputError("a table of {game} seats {lo} to {hi} players", f"$.tables[{k}]", game=t['game'], lo=lo, hi=hi)
    rows.put_round(c.store, tid, number, tables)
    return jsonify(_doc(tid))


@bp.post("/api/tournaments/<tid>/rounds/<int:number>/start")
@require("organiser")
def start_round(tid, number):
    """Create the round's matches (labelled "Round N · Table K" in the organiser's language) and start every clock together, or, at a table
    still setting up, arm it to start when its set-up is done (``armed``); a game played without the clock
    is listed as skipped, as the tables page's start of the round does."""
    json_body(optional=True)
    c = ctx()
    t = _doc(tid)
    r = next((x for x in t["round_list"] if x["round"] == number), None)
    if r is None:
        raise NotFoundError("round {number} is not seated", "round", number=number)
    if r["status"] != "seated":
        raise ConflictError("round {number} has started already", "$", number=number)
    options = {}
    if t["clock_minutes"] is not None:
        options["clock"] = True
    clocked = uses_clock(t["game"], options)
    if t["club_id"]:  # the registered roster players' club: their seats land on its roster
        options["club"] = t["club_id"]
    from companion.services.boards import match_options  # Web of Power: the board the box's new matches start on

    options = match_options(c.store, t["game"], options)
    ids = []
    from flask import g

    from companion.web import i18n

    lang = g.get("lang", i18n.DEFAULT)  # the label is stored: in the organiser's language ("Turno 2 · Tavolo 1")
    for k, table in enumerate(r["tables"]):
        label = i18n.translate(lang, "tday.match_label", round=number, table=k + 1)
        m = c.service.create(t["game"], table, options, label=label, roster=days.table_roster(t, table))
        ids.append(m["id"])
    rows.start_round(c.store, tid, number, ids)
    skipped, started, armed = [], [], []
    if not clocked:
        skipped = [{"match_id": mid, "reason": "no-clock"} for mid in ids]
    elif c.runner is None:
        skipped = [{"match_id": mid, "reason": "no-clock-runner"} for mid in ids]
    else:
        # a table still setting up (conquest: the deal and the placements) has its clock armed: it starts
        # when that table's set-up is done (docs/rulings.md#the-clock-of-a-tournament-round)
        for row in c.runner.start_tournament_round(ids, limit_minutes=t["clock_minutes"]):
            (armed if row["armed"] else started).append(row["match_id"])
    return jsonify({**_doc(tid), "started": started, "armed": armed, "skipped": skipped}), 201


@bp.get("/api/tournaments/<tid>/standings.csv")
def standings_csv(tid):
    """The standings as CSV for a spreadsheet (``?dialect=``: see ``core.csv_dialect``), named after the
    tournament."""
    from flask import g

    from companion.web import i18n
    from companion.web.core import csv_dialect, download

    dialect = csv_dialect()
    t = _doc(tid)
    lang = g.get("lang", i18n.DEFAULT)
    return download(core.standings_csv(t["standings"], dialect, as_json=True),
                    f"{t['name']} · {i18n.translate(lang, 'tday.standings')}", "csv")


@bp.get("/api/matches/<match_id>/result")
def match_result(match_id):
    """A finished match's ranking with the club points each player earned (the season's rules when the
    match feeds a season, else the club's, else the defaults); ``ended: false`` while it is in play."""
    from companion.services import seasons

    c = ctx()
    match = c.store.get_match(match_id)
    results = match_results(match_id) if match["status"] == "ended" else None
    if results is None:
        return jsonify({"match_id": match_id, "ended": False, "results": []})
    # the season that counts it, if one does (a match left to a season not made yet promises none)
    counts = seasons.season_state(c.store, match)
    season = counts["season"]
    rules = seasons.season_rules(c.store, season) if season else _rules()
    try:
        pts = core.match_points(rules, results)
    except RuleError:
        pts = {}
    out = [{**r, "points": season_core.num(pts[r["player"]]) if r["player"] in pts else None} for r in results]
    return jsonify({"match_id": match_id, "ended": True, "season": season["name"] if season else None,
                    "season_id": season["id"] if season else None, "season_state": counts["state"],
                    "results": out})


# -- pages ---------------------------------------------------------------------------------------------

@bp.get("/tournaments")
def tournaments_page():
    from companion.games import GAMES

    return render_template("tournaments.html", page="tournaments", games=sorted(GAMES))


@bp.get("/tournaments/<tid>")
def tournament_day_page(tid):
    try:
        t = rows.get(ctx().store, tid)
    except NotFoundError:
        from flask import abort
        abort(404)
    return render_template("tournament_day.html", page="tournament-day", tournament=t)


@bp.get("/tournaments/<tid>/print")
def tournament_print(tid):
    """A printable A4 page: one round's seating (``?round=N``, with each table's QR code once the round
    started) or the standings."""
    try:
        t = _doc(tid)
    except NotFoundError:
        from flask import abort
        abort(404)
    number = request.args.get("round")
    rnd = None
    if number is not None:
        rnd = next((r for r in t["round_list"] if str(r["round"]) == number), None)
        if rnd is None:
            raise NotFoundError("round {number} is not seated", "round", number=number)
    return render_template("tournament_print.html", page="tournament-print", td=t, rnd=rnd,
                           qrs=_round_qrs(rnd) if rnd else [])


@bp.get("/tournaments/<tid>/rounds/<int:number>/cards")
def round_cards(tid, number):
    """Every table's card of a round (its matches still open), on A4 sheets to cut (companion/web/seats.py)."""
    from flask import abort, g

    from companion.web import i18n
    from companion.web.seats import cards_page

    c = ctx()
    try:
        t = _doc(tid)
    except NotFoundError:
        abort(404)
    rnd = next((r for r in t["round_list"] if r["round"] == number), None)
    if rnd is None:
        abort(404)
    matches = []
    for m in rnd["matches"]:
        try:
            matches.append({**c.store.get_match(m["match_id"]), **c.store.meta(m["match_id"])})
        except NotFoundError:
            continue
    lang = g.get("lang", i18n.DEFAULT)
    title = f"{t['name']} · {i18n.translate(lang, 'tday.round_n', n=number)}"
    return cards_page(matches, title, f"/tournaments/{tid}",
                      "cards.round_not_started" if not rnd["matches"] else "cards.none_open")


def _round_qrs(rnd: dict) -> list[dict | None]:
    """Each table's QR code and short address (``companion.web.seats.table_qr``) once the round started:
    None for a table whose match has ended or is missing, or unless an organiser (or the Pi's own screen)
    asks."""
    from companion.web.auth import may_show_join
    from companion.web.seats import table_qr

    if not may_show_join():  # the round's sheet is the organiser's (a player's phone shows its own table only)
        return [None] * len(rnd["matches"])
    out = []
    for m in rnd["matches"]:
        try:
            out.append(table_qr(ctx().store.get_match(m["match_id"])))
        except NotFoundError:
            out.append(None)
    return out


# -- OpenAPI -------------------------------------------------------------------------------------------



_TID = path_param("tid")
_ROUND = path_param("number", schema={"type": "integer", "minimum": 1})
_SEC = SECURITY
_NUM = {"type": ["number", "null"]}
OPENAPI_SCHEMAS = {
    "TournamentDay": {"type": "object", "required": ["id", "name", "date", "game", "table_size", "rounds", "players",
                                                   "round_list", "standings"],
                   "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "date": {"type": "string"},
                                  "game": {"type": "string"}, "table_size": {"type": "integer"},
                                  "rounds": {"type": "integer"}, "clock_minutes": {"type": ["integer", "null"]},
                                  "players": {"type": "array", "items": {"type": "string"}},
                                  "player_ids": {"type": "array", "items": {"type": ["string", "null"]},
                                                 "description": "each registered player's club roster id"},
                                  "club_id": {"type": ["string", "null"],
                                              "description": "the club of the registered roster players"},
                                  "round_list": {"type": "array"}, "standings": {"type": "array"},
                                  "next_round": {"type": ["integer", "null"]}, "finished": {"type": "boolean"}}},
    "TournamentDayList": {"type": "object", "required": ["tournaments"],
                       "properties": {"tournaments": {"type": "array"}}},
    "MatchResult": {"type": "object", "required": ["match_id", "ended", "results"],
                    "properties": {"match_id": {"type": "string"}, "ended": {"type": "boolean"},
                                   "season": {"type": ["string", "null"]}, "season_id": {"type": ["string", "null"]},
                                   "season_state": {"enum": ["counted", "waiting", "none"]},
                                   "results": {"type": "array"}}},
}
OPENAPI_PATHS = {
    "/api/tournaments": {
        "get": {"summary": "Tournaments", "responses": {"200": _ok("TournamentDayList"), **_err(400, 401)}},
        "post": {"summary": "Create a tournament (organiser)", "security": _SEC,
                 "requestBody": _body("api.tournament-create"),
                 "responses": {"201": _ok("TournamentDay", "created"), **_err(400, 401, 403, 409)}}},
    "/api/tournaments/{tid}": {"get": {"summary": "A tournament: players, rounds, matches, standings",
                                       "parameters": [_TID],
                                       "responses": {"200": _ok("TournamentDay"), **_err(400, 401, 404)}}},
    "/api/tournaments/{tid}/players": {"post": {
        "summary": "Register a player (by name, with their club roster id when picked from the roster) before "
                   "round 1 is seated (organiser)", "security": _SEC,
        "parameters": [_TID], "requestBody": _body("api.tournament-player"),
        "responses": {"201": _ok("TournamentDay"), **_err(400, 401, 403, 404, 409)}}},
    "/api/tournaments/{tid}/players/{player}": {"delete": {
        "summary": "Unregister a player before round 1 is seated (organiser)", "security": _SEC,
        "parameters": [_TID, path_param("player")],
        "responses": {"200": _ok("TournamentDay"), **_err(400, 401, 403, 404, 409)}}},
    "/api/tournaments/{tid}/rounds": {"post": {
        "summary": "Seat the next round (organiser): round 1 at random, then by standing keeping pairs apart",
        "security": _SEC, "parameters": [_TID],
        "responses": {"201": _ok("TournamentDay"), **_err(400, 401, 403, 404, 409)}}},
    "/api/tournaments/{tid}/rounds/{number}": {"put": {
        "summary": "Replace the seats of a round not started (organiser)", "security": _SEC,
        "parameters": [_TID, _ROUND], "requestBody": _body("api.tournament-seats"),
        "responses": {"200": _ok("TournamentDay"), **_err(400, 401, 403, 404, 409)}}},
    "/api/tournaments/{tid}/rounds/{number}/start": {"post": {
        "summary": "Create the round's matches and start every clock together (organiser)", "security": _SEC,
        "parameters": [_TID, _ROUND],
        "responses": {"201": _ok("TournamentDay"), **_err(400, 401, 403, 404, 409)}}},
    "/api/tournaments/{tid}/standings.csv": {"get": {
        "summary": "The standings as CSV, named after the tournament", "parameters": [_TID, CSV_DIALECT_PARAM],
        "responses": {"200": {"description": "CSV", "content": {"text/csv": {"schema": {"type": "string"}}}},
                      **_err(400, 401, 404)}}},
    "/api/matches/{match_id}/result": {"get": {
        "summary": "A finished match's ranking with the club points each player earned",
        "parameters": [path_param("match_id")],
        "responses": {"200": _ok("MatchResult"), **_err(400, 401, 404)}}},
}
