"""The club roster on the web: ``/api/players`` (list and type-ahead search, create, get, rename, merge,
"this is me" links, the matches the roster migration left for the organiser), the player page
``/players/<id>`` and the roster page ``/players``, and ``/me/<token>`` (a phone's personal link).

Everyone the club lets in reads names; writes, links and the merge audit's "who" need the organiser.
A personal link is a random token (only its SHA-256 stored) exchanged for a player session that remembers
the roster player; ending a player's links ends the sessions made from them. Storage:
``companion.storage.players``.
"""

from __future__ import annotations

from flask import Blueprint, abort, g, jsonify, redirect, render_template, request

from companion.base import lazy
from companion.base.errors import CompanionError, InputError, NotFoundError
from companion.core.roster import short_name as default_short_name, sparkline_svg
from companion.storage import players as roster
from companion.web.core import ctx, int_arg, json_body, require, role
from companion.web.apidoc import SECURITY, body as _body, err as _err, ok as _ok, path_param

ss = lazy.module("companion.services.seasons")  # imported at the first request that needs it
profiles = lazy.module("companion.services.players")  # (the player page's maths: OpenSkill, season points)

bp = Blueprint("players", __name__)


def _under(exc: CompanionError) -> CompanionError:
    return exc.under("$") if exc.field and not exc.field.startswith("$") else exc


def _club_id(ref, field: str = "club") -> str:
    """A club by id or name, or the only club when ``ref`` is empty."""
    store = ctx().store
    if ref not in (None, ""):
        return ss.get_club(store, str(ref), field)["id"]
    clubs = ss.list_clubs(store)
    if len(clubs) == 1:
        return clubs[0]["id"]
    if not clubs:
        raise InputError("there is no club yet: create one on the seasons page first", field)
    raise InputError("this box has several clubs: say which one", field)


def who() -> str:
    """Who did it, for the merge audit line."""
    if g.get("via") == "bearer":
        return f"{role()} (script token)"
    sess = g.get("session")
    return f"{role()} (session {sess['key'][:8]})" if sess else role()


def _public(p: dict) -> dict:
    return {k: p[k] for k in ("id", "club_id", "name", "short_name", "colour", "created_at", "similar") if k in p}


# -- JSON API ---------------------------------------------------------------------------------------

@bp.get("/api/players")
def api_list():
    club = request.args.get("club")
    q = request.args.get("q")
    if q is not None and len(q) > 40:
        raise InputError("must be at most 40 characters", "q")
    limit = int_arg("limit", 500, 1, 500)
    club_id = _club_id(club) if club or len(ss.list_clubs(ctx().store)) == 1 else None
    players = roster.list_players(ctx().store, club_id, q=q, limit=limit)
    return jsonify({"club_id": club_id, "players": [_public(p) for p in players]})


@bp.post("/api/players")
@require("organiser")
def api_create():
    doc = json_body("api.player-create")
    try:
        if doc.get("club") in (None, ""):  # a box with no club yet: its first player makes the club
            from companion.web import i18n

            club_id = ss.first_club(ctx().store, i18n.translate(g.get("lang", i18n.DEFAULT), "players.first_club"))["id"]
        else:
            club_id = _club_id(doc.get("club"))
        p = roster.create_player(ctx().store, club_id, doc["name"], doc.get("short_name"), doc.get("colour"))
    except CompanionError as exc:
        raise _under(exc) from None
    return jsonify(_public(p)), 201, {"Location": f"/api/players/{p['id']}"}


@bp.get("/api/players/<player_id>")
def api_get(player_id):
    out = profiles.profile(ctx().store, player_id)
    if role() == "organiser":
        out["links"] = roster.links(ctx().store, player_id)
    return jsonify(out)


@bp.patch("/api/players/<player_id>")
@require("organiser")
def api_update(player_id):
    doc = json_body("api.player-update")
    try:
        p = roster.update_player(ctx().store, player_id, doc.get("name"), doc.get("short_name"), doc.get("colour"))
    except NotFoundError:
        raise
    except CompanionError as exc:
        raise _under(exc) from None
    return jsonify(_public(p))


@bp.post("/api/players/merge")
@require("organiser")
def api_merge():
    doc = json_body("api.player-merge")
    try:
        out = roster.merge_players(ctx().store, doc["from"], doc["into"], by=who())
    except CompanionError as exc:
        raise _under(exc) from None
    return jsonify(out)


@bp.get("/api/players/merges")
def api_merges():
    club = request.args.get("club")
    items = roster.merges(ctx().store, _club_id(club) if club else None)
    if role() != "organiser":
        for m in items:
            m.pop("by")
    return jsonify({"merges": items})


def my_player_id() -> str | None:
    """The roster player this phone was signed in as by a personal link, followed through merges."""
    sess = g.get("session")
    me = (sess["data"].get("me") if sess else None) or None
    return roster.current_id(ctx().store, me) if isinstance(me, str) else None


@bp.get("/api/players/me")
def api_me():
    """The roster player this phone belongs to (through a "this is me" link), or null."""
    me = my_player_id()
    player = None
    if me:
        try:
            player = _public(roster.get_player(ctx().store, me))
        except NotFoundError:
            player = None
    return jsonify({"player": player})


@bp.post("/api/players/<player_id>/links")
@require("organiser")
def api_new_link(player_id):
    from companion.web.auth import public_base

    token = roster.create_link(ctx().store, player_id)
    return jsonify({"url": f"{public_base()}/me/{token}", "player_id": player_id}), 201


@bp.delete("/api/players/<player_id>/links")
@require("organiser")
def api_revoke_links(player_id):
    return jsonify(roster.revoke_links(ctx().store, player_id))


@bp.get("/api/players/pending")
@require("organiser")
def api_pending():
    return jsonify({"pending": roster.pending(ctx().store)})


@bp.post("/api/players/pending/<match_id>")
@require("organiser")
def api_assign(match_id):
    doc = json_body("api.roster-assign")
    try:
        club_id = _club_id(doc["club"])
    except CompanionError as exc:
        raise _under(exc) from None
    return jsonify(roster.assign_pending(ctx().store, match_id, club_id, by=who()))


@bp.get("/api/players/leftovers")
@require("organiser")
def api_leftovers():
    """The names the roster migration left unplaced, each with the entries that look like the same person."""
    return jsonify({"leftovers": roster.leftovers(ctx().store),
                    "clubs": [{"id": x["id"], "name": x["name"]} for x in ss.list_clubs(ctx().store)]})


@bp.post("/api/players/leftovers")
@require("organiser")
def api_assign_leftover():
    """One leftover name onto the roster: an existing entry or a new one; an audit line, never a merge."""
    doc = json_body("api.roster-leftover")
    c = ctx()
    places = None
    if "match_id" in doc:
        try:
            fold = c.service.fold(doc["match_id"])
        except NotFoundError as exc:
            raise exc.under("$", InputError) from None
        ranking = fold.final_ranking() if fold.ended() else None
        places = {r["player"]: r["place"] for r in ranking or []}
        target = {"match_id": doc["match_id"], "seat": doc["seat"]}
    else:
        target = {"season_id": doc["season_id"], "match": doc["match"], "name": doc["name"]}
    club = None
    if doc.get("club"):
        try:
            club = _club_id(doc["club"], "$.club")
        except CompanionError as exc:
            raise _under(exc) from None
    line = roster.assign_leftover(c.store, target, doc.get("player_id"), club, by=who(), places=places)
    return jsonify({"assigned": line, "leftovers": roster.leftovers(c.store)})


@bp.get("/api/players/assignments")
@require("organiser")
def api_assignments():
    club = request.args.get("club")
    return jsonify({"assignments": roster.assignments(ctx().store, _club_id(club) if club else None)})


# -- the personal link ------------------------------------------------------------------------------

@bp.get("/me/<token>")
def me_landing(token):
    """A phone's "this is me" link: a player session remembered as that roster player, then a redirect to
    the player's page (the token leaves the address bar). Wrong links are limited per address, like join
    links; an organiser who opens one stays an organiser."""
    from companion.services.access import PLAYER_SESSION_HOURS
    from companion.web.auth import COOKIE, _join_error, client_address, device_data

    c = ctx()
    player = roster.link_owner(c.store, token)
    if player is None:
        wait = c.access.locked_for("join", client_address())
        if wait:
            return _join_error(429, "join.locked", wait)
        c.access.record_failure("join", client_address())
        return _join_error(404, "join.expired", 0)
    resp = redirect(f"/players/{player['id']}", code=303)
    resp.headers["Referrer-Policy"] = "no-referrer"
    resp.headers["Cache-Control"] = "no-store"
    if role() == "organiser":
        return resp
    old = g.get("session")
    data = dict(old["data"]) if old is not None else {}
    if old is not None:
        c.access.end_session(old["key"])
    data["me"] = player["id"]
    sid = c.access.create_session("player", device_data(data), join_token=token)
    resp.set_cookie(COOKIE, sid, max_age=int(PLAYER_SESSION_HOURS * 3600), httponly=True, samesite="Lax", path="/")
    g.session_set = True
    return resp


# -- pages ------------------------------------------------------------------------------------------

@bp.get("/players")
def page_roster():
    store = ctx().store
    clubs = ss.list_clubs(store)
    club = request.args.get("club") or (clubs[0]["id"] if clubs else None)
    try:
        club_id = ss.get_club(store, club)["id"] if club else None
    except (InputError, NotFoundError):
        abort(404)
    players = roster.list_players(store, club_id) if club_id else []
    organiser = role() == "organiser"
    leftovers = roster.leftovers(store) if organiser else []
    placed = {n["player_id"] for m in leftovers for n in m["names"] if n["player_id"]}
    return render_template("players.html", page="players", clubs=clubs, club_id=club_id, players=players,
                           pending=roster.pending(store) if organiser else [], leftovers=leftovers,
                           placed_names={p: roster.get_player(store, p)["name"] for p in placed},
                           assigned=roster.assignments(store)[-20:] if organiser else [])


@bp.get("/players/<player_id>")
def page_player(player_id):
    store = ctx().store
    try:
        p = profiles.profile(store, player_id)
    except NotFoundError:
        abort(404)
    for game in p["games"]:
        game["spark"] = sparkline_svg(game["trend"], width=140, height=28, label=game["game"]) if len(game["trend"]) > 1 else ""
    mine = my_player_id() == player_id
    links = roster.links(store, player_id) if role() == "organiser" else []
    similar = [roster.get_player(store, i) for i in p["similar"]]
    from companion.web import i18n

    lang = g.get("lang", i18n.DEFAULT)
    own_short = "" if p["short_name"] == default_short_name(p["name"], roster.SHORT_MAX) else p["short_name"]
    return render_template("player.html", page="player", p=p, mine=mine, similar=similar, own_short=own_short,
                           plural=lambda key, n: i18n.plural(lang, key, n),
                           live_links=sum(1 for x in links if not x["revoked"]))


def _page_player_by_name(season_id: str, name: str):
    """The roster player of a season page's name (for the link from the season pages)."""
    store = ctx().store
    try:
        season = ss.get_season(store, season_id)
    except NotFoundError:
        return None
    return roster.find_by_name(store, season["club_id"], name)


# -- OpenAPI ----------------------------------------------------------------------------------------



_S = {"type": "string"}
_PLAYER_ID = path_param("player_id")
_SEC = SECURITY
_PLAYER = {"type": "object", "required": ["id", "club_id", "name", "short_name"],
           "properties": {"id": _S, "club_id": _S, "name": _S, "short_name": _S,
                          "colour": {"type": ["string", "null"]}, "created_at": _S,
                          "similar": {"type": "array", "items": _S,
                                      "description": "other entries of the club that look like the same person"}}}
_NAMED = {"type": "object", "required": ["id", "name"], "properties": {"id": _S, "name": _S}}
_MERGE = {"type": "object", "required": ["from", "into", "at", "results"],
          "properties": {"from": _NAMED, "into": {"type": "object"}, "by": _S, "at": _S,
                         "results": {"type": "integer"}, "club_id": _S}}

_NULLABLE = {"type": ["string", "null"]}
_SUGGESTED = {"type": "object", "required": ["id", "name", "club_id", "exact"],
              "properties": {"id": _S, "name": _S, "club_id": _S, "exact": {"type": "boolean"}}}
_LEFTOVER = {"type": "object", "required": ["kind", "club_id", "names"], "properties": {
    "kind": {"enum": ["match", "season"], "description": "a match waiting for the roster, or a season result"},
    "match_id": _S, "game": _S, "created_at": _S, "reason": _S, "season_id": _S, "season": _S, "match": _S,
    "date": _NULLABLE, "club_id": {**_NULLABLE, "description": "the club its names go to (null: any)"},
    "names": {"type": "array", "items": {"type": "object", "required": ["name", "player_id"], "properties": {
        "seat": {"type": "integer"}, "name": _S, "player_id": {**_NULLABLE, "description": "placed: the entry"},
        "suggested": {"type": "array", "items": _SUGGESTED,
                      "description": "entries that look like the same person (case, accents): never applied"}}}}}}
_ASSIGNMENT = {"type": "object", "required": ["club_id", "name", "player", "created", "by", "at"], "properties": {
    "club_id": _S, "match_id": _NULLABLE, "seat": {"type": ["integer", "null"]}, "season_id": _NULLABLE,
    "season_match": _NULLABLE, "name": _S, "player": _NAMED, "created": {"type": "boolean"}, "by": _S, "at": _S}}

OPENAPI_SCHEMAS = {
    "RosterPlayer": _PLAYER,
    "Roster": {"type": "object", "required": ["players"],
               "properties": {"club_id": {"type": ["string", "null"]}, "players": {"type": "array", "items": _PLAYER}}},
    "PlayerProfile": {"type": "object", "required": ["id", "name", "club", "matches", "games", "seasons", "last"],
                      "properties": {**_PLAYER["properties"], "club": _S, "matches": {"type": "integer"},
                                     "games": {"type": "array"}, "seasons": {"type": "array"},
                                     "last": {"type": "array"}, "links": {"type": "array"}}},
    "Merge": _MERGE,
    "Merges": {"type": "object", "required": ["merges"], "properties": {"merges": {"type": "array", "items": _MERGE}}},
    "MePlayer": {"type": "object", "required": ["player"], "properties": {"player": {"type": ["object", "null"]}}},
    "PlayerLink": {"type": "object", "required": ["url", "player_id"], "properties": {"url": _S, "player_id": _S}},
    "LinksRevoked": {"type": "object", "required": ["links_revoked", "sessions_ended"],
                     "properties": {"links_revoked": {"type": "integer"}, "sessions_ended": {"type": "integer"}}},
    "RosterPending": {"type": "object", "required": ["pending"], "properties": {"pending": {"type": "array"}}},
    "RosterAssigned": {"type": "object", "required": ["match_id", "club_id", "players"],
                       "properties": {"match_id": _S, "club_id": _S, "players": {"type": "array"}}},
    "RosterLeftovers": {"type": "object", "required": ["leftovers", "clubs"], "properties": {
        "leftovers": {"type": "array", "items": _LEFTOVER}, "clubs": {"type": "array", "items": _NAMED}}},
    "RosterAssignment": _ASSIGNMENT,
    "RosterLeftoverAssigned": {"type": "object", "required": ["assigned", "leftovers"], "properties": {
        "assigned": _ASSIGNMENT, "leftovers": {"type": "array", "items": _LEFTOVER}}},
    "RosterAssignments": {"type": "object", "required": ["assignments"],
                          "properties": {"assignments": {"type": "array", "items": _ASSIGNMENT}}},
}
OPENAPI_PATHS = {
    "/api/players": {
        "get": {"summary": "The club's roster; ?q= type-ahead (word starts, case- and accent-insensitive)",
                "parameters": [{"name": "club", "in": "query", "schema": _S},
                               {"name": "q", "in": "query", "schema": {"type": "string", "maxLength": 40}},
                               {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1,
                                                                          "maximum": 500}}],
                "responses": {"200": _ok("Roster"), **_err(400, 401, 404)}},
        "post": {"summary": "Add a player to a club's roster (organiser)", "security": _SEC,
                 "requestBody": _body("api.player-create"),
                 "responses": {"201": _ok("RosterPlayer", "created"), **_err(400, 401, 403, 404, 409)}},
    },
    "/api/players/{player_id}": {
        "get": {"summary": "A player: matches per game, wins, average place, season points, rating and trend, "
                           "last results (organisers also see the personal links)", "parameters": [_PLAYER_ID],
                "responses": {"200": _ok("PlayerProfile"), **_err(400, 401, 404)}},
        "patch": {"summary": "Rename a player or change the short name or colour; the history follows (organiser)",
                  "security": _SEC, "parameters": [_PLAYER_ID], "requestBody": _body("api.player-update"),
                  "responses": {"200": _ok("RosterPlayer"), **_err(400, 401, 403, 404, 409)}},
    },
    "/api/players/merge": {"post": {
        "summary": "Merge two entries of one person: every result moves, an audit line is kept (organiser)",
        "security": _SEC, "requestBody": _body("api.player-merge"),
        "responses": {"200": _ok("Merge"), **_err(400, 401, 403, 404, 409)}}},
    "/api/players/merges": {"get": {
        "summary": "The merge audit (who: organisers only)", "parameters": [{"name": "club", "in": "query", "schema": _S}],
        "responses": {"200": _ok("Merges"), **_err(400, 401, 404)}}},
    "/api/players/me": {"get": {"summary": "The roster player this phone belongs to (a personal link), or null",
                                "responses": {"200": _ok("MePlayer"), **_err(401)}}},
    "/api/players/{player_id}/links": {
        "post": {"summary": "A new personal \"this is me\" link for a player's phone (organiser)", "security": _SEC,
                 "parameters": [_PLAYER_ID], "responses": {"201": _ok("PlayerLink", "created"),
                                                           **_err(401, 403, 404)}},
        "delete": {"summary": "End a player's personal links and the sessions made from them (organiser)",
                   "security": _SEC, "parameters": [_PLAYER_ID],
                   "responses": {"200": _ok("LinksRevoked"), **_err(401, 403, 404)}},
    },
    "/api/players/pending": {"get": {
        "summary": "Matches the roster migration could not put on a club's roster (organiser)", "security": _SEC,
        "responses": {"200": _ok("RosterPending"), **_err(401, 403)}}},
    "/api/players/leftovers": {
        "get": {"summary": "The names the roster migration left unplaced, with look-alike entries (organiser)",
                "security": _SEC, "responses": {"200": _ok("RosterLeftovers"), **_err(401, 403)}},
        "post": {"summary": "Put one leftover name on the roster: an existing entry or a new one, with an audit "
                            "line (organiser)", "security": _SEC, "requestBody": _body("api.roster-leftover"),
                 "responses": {"200": _ok("RosterLeftoverAssigned"), **_err(400, 401, 403, 404, 409)}}},
    "/api/players/assignments": {"get": {
        "summary": "The audit of the leftovers placed by hand: who, when, the name, the entry (organiser)",
        "security": _SEC, "parameters": [{"name": "club", "in": "query", "schema": _S}],
        "responses": {"200": _ok("RosterAssignments"), **_err(400, 401, 403, 404)}}},
    "/api/players/pending/{match_id}": {"post": {
        "summary": "Put a left-over match on a club's roster (organiser)", "security": _SEC,
        "parameters": [path_param("match_id")],
        "requestBody": _body("api.roster-assign"),
        "responses": {"200": _ok("RosterAssigned"), **_err(400, 401, 403, 404)}}},
}
