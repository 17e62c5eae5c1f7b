"""Seats: one scan to a seat, and the secrets a seat guards.

Every match has its own **table link** (a short join link bound to the match) shown as a QR code on the
match page, the TV page and a printable table card (``/m/<id>/card``). A new phone that follows it gets a
session that is a player of that match only (``access.role_in``), for 12 hours at most and no longer than
the match is open; the match page then asks one question, "Who are you?", and the answer seats the phone
(``PUT /api/matches/<id>/seat``). A seat is **bound** to the phone that took it: another phone cannot
take it, and a phone cannot change its own seat; an organiser moves, shares or frees seats
(``/api/matches/<id>/seats``). A phone that joined by the club-wide link picks its table at ``/pick``.

Secrets (a game's ``OWN_SECRET_EVENT_TYPES``/``SECRET_REFUSAL_EVENT_TYPES``): only the owner's seat or an
organiser records or undoes the owner's secret event, and a refusal of such an event is told to anyone
else without its reason (the reason may name the secret; a game's ``SECRET_REFUSAL_TEMPLATES`` narrows it
to the sentences that do, such as Richelieu's "placing costs 3 but only 2 money is left").
"""

from __future__ import annotations

from flask import Blueprint, abort, jsonify, render_template, request

from companion.base.errors import (AuthError, ConflictError, ForbiddenError, InputError, NotFoundError, RuleError)
from companion.web import apidoc
from companion.web.core import ctx, json_body, require, role
from companion.web.streams import publish_seats, seats_taken

bp = Blueprint("seats", __name__)


# -- the table link of a match ---------------------------------------------------------------
def table_link(match_id: str, base: str | None = None) -> dict:
    """The table link the match shows now (a short join link bound to the match; made when missing or
    expired, valid as long as the club's join links)."""
    from companion.web.auth import public_base

    c = ctx()
    with c.join_lock:
        links = c.table_links
        cur = links.get(match_id)
        if cur is None or not c.access.join_token_alive(cur["token"]):
            cur = c.access.shown_link(match_id)  # the table's link before a restart (its printed card), while it works
            if cur is None:
                token, info = c.access.create_join_token(c.access.settings()["join_token_hours"], match_id=match_id,
                                                         short=True)
                cur = {"token": token, **info}
                c.access.remember_shown_link(match_id, token, info)
            links[match_id] = cur
    return {"url": f"{base or public_base()}/j/{cur['token']}", "expires_at": cur["expires_at"],
            "match_id": match_id}


def may_show_table(match_id: str) -> bool:
    """Who may show a match's table QR code: organisers, the Pi's own screen, and the match's players
    (a seated phone shows it to a neighbour who has none)."""
    from companion.web.auth import may_show_join

    return may_show_join() or role() == "player"


def _match(match_id: str) -> dict:
    c = ctx()
    return {**c.store.get_match(match_id), **c.store.meta(match_id)}


# -- seats ----------------------------------------------------------------------------------
def seats_doc(match_id: str) -> dict:
    """Each player of the match with whether a phone holds the seat; organisers also see which phones."""
    from flask import g

    from companion.web.core import seat_for

    c = ctx()
    match = c.store.get_match(match_id)
    rows = c.access.seats(match_id)
    sess = g.get("session")
    mine = sess["key"] if sess is not None else None
    organiser = role() == "organiser"
    seat = seat_for(match_id)
    confirmed = c.access.seat_confirmations(match_id, rows)
    seated = organiser or (seat is not None and role() == "player")  # who sees the seats' phones in words
    out = []
    for p in match["players"]:
        held = [r for r in rows if r["player"] == p]
        phones = [r for r in held if r["role"] == "player"]
        entry = {"player": p, "taken": bool(phones), "mine": any(r["key"] == mine for r in held),
                 "confirmed": bool(phones) and all(confirmed[r["key"]]["by"] for r in phones)}
        if phones:
            by = [confirmed[r["key"]] for r in phones]
            entry["confirmed_by"] = "organiser" if all(b["by"] == "organiser" for b in by) else \
                ("players" if entry["confirmed"] else None)
            entry["confirmed_by_players"] = sorted({q for b in by for q in b["players"]})
            entry["needed"] = by[0]["needed"]
        if seated and not organiser:  # a seated phone: the others' phones in words, to know whose they are
            entry["devices"] = [{"device": r["device"], "joined_at": r["joined_at"]} for r in phones]
            entry["may_confirm"] = bool(phones) and p != seat and match["status"] == "open" and \
                seat not in entry["confirmed_by_players"]
        if organiser:  # each phone in words: when it signed in, its device, whether it is the asking phone
            entry["phones"] = [{**{k: r[k] for k in ("session", "role", "bound_at", "expires_at", "joined_at",
                                                     "device")}, "this_phone": r["key"] == mine,
                                "confirmed": confirmed.get(r["key"], {}).get("by")} for r in held]
            entry["may_confirm"] = bool(phones) and match["status"] == "open" and entry["confirmed_by"] != "organiser"
        out.append(entry)
    doc = {"match_id": match_id, "status": match["status"], "seat": seat, "seats": out}
    if seat is not None and role() == "player":
        from companion.games import game_module
        from companion.services import policy
        from companion.web.core import caller

        doc["may_reset_secret"] = match["status"] == "open" and policy.may_reset(
            game_module(match["game"]), caller(match_id), seat, None, c.service.fold(match_id).effective)
    return doc


def _player_of(match_id: str, player: str, field: str) -> dict:
    match = ctx().store.get_match(match_id)
    if player not in match["players"]:
        raise InputError("{player!r} does not play in this match", field, player=player)
    return match


@bp.get("/api/matches/<match_id>/join")
def get_table_link(match_id):
    """The match's table link (its QR code's address): organisers, the Pi's own screen, its players."""
    ctx().store.get_match(match_id)
    if not may_show_table(match_id):
        if role() == "viewer":
            raise AuthError("only an organiser or a player of the match may show its table code", "Authorization")
        raise ForbiddenError("only an organiser or a player of the match may show its table code", "Authorization")
    return jsonify(table_link(match_id))


@bp.get("/api/matches/<match_id>/seats")
def get_seats(match_id):
    return jsonify(seats_doc(match_id))


@bp.put("/api/matches/<match_id>/seat")
@require("player")
def claim_seat(match_id):
    """This phone sits as one player of the match. A player's phone takes a free seat once (the answer to
    "Who are you?"); a taken seat, or another seat later, is the organiser's to give. An organiser's own
    phone may sit anywhere (it never takes a seat from a phone) or nowhere (null)."""
    from flask import g

    from companion.web.api import match_doc

    c = ctx()
    doc = json_body("api.seat")
    player = doc["player"]
    match = c.store.get_match(match_id)
    if player is not None and player not in match["players"]:
        raise InputError("{player!r} does not play in this match", "$.player", player=player)
    sess = getattr(g, "session", None)
    if sess is None:
        raise InputError("a seat belongs to a browser session (bearer tokens have no seat)", "Authorization")
    if role() == "organiser":
        if player is None:
            c.access.leave_seat(match_id, sess["key"])
        else:
            c.access.sit(match_id, player, sess["key"])
    else:
        if player is None:
            raise ForbiddenError("a seat is left or moved by an organiser", "$.player")
        if match["status"] != "open":
            raise RuleError("the match has ended", "$.player")
        refused = c.access.claim_seat(match_id, player, sess["key"], sess["data"].get("address"))
        if refused == "taken":
            raise ConflictError("{player}'s seat is taken by another phone: an organiser can move or share it",
                                "$.player", player=player)
        if refused is not None and refused.startswith("device:"):
            raise ForbiddenError("this device sits as {value} at this table already (one seat per phone): an "
                                 "organiser can move it", "$.player", value=refused.split(':', 1)[1])
        if refused is not None:
            raise ForbiddenError("this phone sits as {value}: an organiser can move it",
                                 "$.player", value=refused.split(':', 1)[1])
    publish_seats(c, match_id)  # every phone still asked "Who are you?" sees the seat taken
    g.session = c.access.session_by_key(sess["key"]) or sess
    return jsonify(match_doc(match_id))


@bp.put("/api/matches/<match_id>/seats/<player>")
@require("organiser")
def bind_seat(match_id, player):
    """An organiser gives ``player``'s seat to a phone (its session's public id): the phones that held it
    lose it unless ``share``; the phone's former seat in the match is freed."""
    from flask import g

    _player_of(match_id, player, "player")
    doc = json_body("api.seat-bind")
    sess = g.get("session")
    ctx().access.bind_seat(match_id, player, doc["session"], share=doc.get("share", False),
                           by_key=sess["key"] if sess is not None else None)
    publish_seats(ctx(), match_id)
    return jsonify(seats_doc(match_id))


@bp.post("/api/matches/<match_id>/seats/<player>/confirm")
@require("player")
def confirm_seat(match_id, player):
    """"Yes, that phone is Anna's": an organiser, or a phone seated at the table as another player (from
    another device), confirms the phones holding ``player``'s seat. A seat confirmed by an organiser or by
    half of the other seated phones lets its owner reset a secret recorded before it sat."""
    from flask import g

    from companion.web.core import seat_for

    c = ctx()
    match = _player_of(match_id, player, "player")
    if match["status"] != "open":
        raise RuleError("the match has ended", "player")
    sess = g.get("session")
    organiser = role() == "organiser"
    if not organiser:
        seat = seat_for(match_id)
        if sess is None or seat is None:
            raise ForbiddenError("only an organiser or a phone seated at this table confirms a seat", "player")
        if seat == player:
            raise ForbiddenError("a phone does not confirm its own seat: the others at the table or an organiser "
                                 "do", "player")
        mine = sess["data"].get("address")
        if mine and any(r["address"] == mine for r in c.access.seats(match_id) if r["player"] == player):
            raise ForbiddenError("a phone does not confirm its own seat: the others at the table or an organiser "
                                 "do", "player")
    by = sess["key"] if sess is not None else "organiser"
    if not c.access.confirm_seat(match_id, player, by, "organiser" if organiser else "player"):
        raise RuleError("no phone sits as {player} to confirm", "player", player=player)
    return jsonify(seats_doc(match_id))


@bp.delete("/api/matches/<match_id>/seats/<player>")
@require("organiser")
def free_seat(match_id, player):
    """An organiser frees ``player``'s seat: the phones that held it are asked "Who are you?" again."""
    _player_of(match_id, player, "player")
    ctx().access.free_seat(match_id, player)
    publish_seats(ctx(), match_id)
    return jsonify(seats_doc(match_id))


# -- pages --------------------------------------------------------------------------------
def _page_match(match_id: str) -> dict:
    try:
        return _match(match_id)
    except NotFoundError:
        abort(404)


@bp.get("/m/<match_id>/card")
def table_card(match_id):
    """The printable table card: the match's label and game, its QR code and its short address."""
    from companion.web.auth import qr_svg

    match = _page_match(match_id)
    size = request.args.get("size", "a6")
    if size not in ("a6", "a4"):
        raise InputError("must be a6 or a4", "size")
    if not may_show_table(match_id):
        return render_template("table_card.html", page="card", match=match, allowed=False, size=size), 403
    link = table_link(match_id)
    return render_template("table_card.html", page="card", match=match, allowed=True, size=size, link=link,
                           svg=qr_svg(link["url"]))


def cards_page(matches: list[dict], title: str, back: str, empty: str):
    """Every table's card of ``matches`` (the open ones) on A4 sheets, 2 or 4 to a page (``?per_page=``):
    the organiser's (or the Pi's own screen's), as the single card; each QR code drawn on the box."""
    from flask import g

    from companion.web import i18n
    from companion.web.auth import may_show_join, qr_svg

    per_page = request.args.get("per_page", "2")
    if per_page not in ("2", "4"):
        raise InputError("must be 2 or 4", "per_page")
    allowed = may_show_join()
    cards = []
    if allowed:
        for m in matches:
            if m["status"] == "open":
                link = table_link(m["id"])
                cards.append({"match": m, "link": link, "svg": qr_svg(link["url"])})
    lang = g.get("lang", i18n.DEFAULT)
    return render_template("table_cards.html", page="card", title=title, back=back, empty=empty, cards=cards,
                           allowed=allowed, per_page=int(per_page),
                           plural=lambda key, n: i18n.plural(lang, key, n)), 200 if allowed else 403


@bp.get("/tournament/cards")
def club_night_cards():
    """Every open match's table card, by label: the club night's tables, printed at once."""
    from flask import g

    from companion.web import i18n

    c = ctx()
    matches = [{**m, **c.store.meta(m["id"])} for m in c.store.list_matches("open", 200)]
    matches.sort(key=lambda m: (m.get("label") or "", m["created_at"]))
    return cards_page(matches, i18n.translate(g.get("lang", i18n.DEFAULT), "cards.club_night"), "/tournament",
                      "cards.none_open")


@bp.get("/pick")
def pick_table():
    """Pick your table: a phone that joined by the club-wide link lands here."""
    c = ctx()
    tables = []
    for m in c.store.list_matches("open", 100):
        meta = c.store.meta(m["id"])
        taken = {r["player"] for r in c.access.seats(m["id"]) if r["role"] == "player"}
        tables.append({**m, **meta, "free": [p for p in m["players"] if p not in taken]})
    tables.sort(key=lambda m: (m.get("label") or "", m["created_at"]))
    return render_template("pick.html", page="pick", tables=tables)


def table_qr(match: dict) -> dict | None:
    """The table QR code a page shows (an open match, to those who may show it), else None."""
    from companion.web.auth import qr_svg

    if match["status"] != "open" or not may_show_table(match["id"]):
        return None
    link = table_link(match["id"])
    return {**link, "svg": qr_svg(link["url"])}


def who_question(match: dict) -> dict | None:
    """For the match page: "Who are you?" when this phone is a player of the match without a seat yet
    (free seats first, taken ones said so)."""
    from flask import g

    from companion.web.core import seat_for

    if match["status"] != "open" or role() != "player" or g.get("session") is None or seat_for(match["id"]):
        return None
    taken = seats_taken(ctx(), match["id"], match["players"])
    return {"free": [p for p in match["players"] if p not in taken], "taken": taken}


_ID = apidoc.path_param("match_id")
_PLAYER = apidoc.path_param("player", 40)
_json = apidoc.ok


def _errors(*codes):
    return apidoc.err(*codes, words={409: "the seat is taken, or the match has ended"})


_SEC = apidoc.SECURITY
OPENAPI_SCHEMAS = {
    "Seats": {"type": "object", "required": ["match_id", "status", "seat", "seats"], "properties": {
        "match_id": {"type": "string"}, "status": {"enum": ["open", "ended"]},
        "seat": {"type": ["string", "null"], "description": "the player this phone sits as"},
        "may_reset_secret": {"type": "boolean", "description": "a player's phone: it may reset its seat's secret "
                                                              "recorded before it sat"},
        "seats": {"type": "array", "items": {"type": "object", "required": ["player", "taken", "mine"], "properties": {
            "player": {"type": "string"}, "taken": {"type": "boolean", "description": "a player's phone holds it"},
            "mine": {"type": "boolean"},
            "confirmed": {"type": "boolean", "description": "an organiser or the other seated phones said the "
                                                            "phone holding it is that player's"},
            "confirmed_by": {"enum": ["organiser", "players", None]},
            "confirmed_by_players": {"type": "array", "items": {"type": "string"}},
            "needed": {"type": ["integer", "null"], "description": "how many other seats must confirm it"},
            "may_confirm": {"type": "boolean", "description": "this phone (seated as another player, or an "
                                                              "organiser) may confirm it"},
            "devices": {"type": "array", "description": "seated phones only: the phones there in words",
                        "items": {"type": "object"}},
            "phones": {"type": "array", "description": "organisers only: the phones seated there", "items": {
                "type": "object", "required": ["session", "role", "bound_at", "expires_at"],
                "properties": {"session": {"type": "string"}, "role": {"type": "string"},
                               "bound_at": {"type": "string"}, "expires_at": {"type": "string"},
                               "joined_at": {"type": "string", "description": "when the phone signed in"},
                               "device": {"type": ["string", "null"],
                                          "description": "its system and browser, e.g. \"Android · Chrome\""},
                               "this_phone": {"type": "boolean", "description": "the phone asking"}}}}}}}}},
}
OPENAPI_PATHS = {
    "/api/matches/{match_id}/join": {"get": {
        "summary": "The match's table link, behind its QR code (organiser, the Pi's own screen, its players); "
                   "a new one: POST /api/auth/join-tokens with match_id",
        "parameters": [_ID], "responses": {"200": _json("JoinLink"), **_errors(400, 401, 403, 404)}}},
    "/api/matches/{match_id}/seats": {"get": {
        "summary": "Each player's seat: taken or free, mine (organisers also see the phones)",
        "parameters": [_ID], "responses": {"200": _json("Seats"), **_errors(400, 401, 404)}}},
    "/api/matches/{match_id}/seat": {"put": {
        "summary": "This phone sits as a player: a player's phone takes a free seat once (\"Who are you?\"); "
                   "an organiser's own phone sits anywhere or nowhere (null)",
        "parameters": [_ID], "security": _SEC,
        "requestBody": apidoc.body("api.seat"),
        "responses": {"200": _json("Match"), **_errors(400, 401, 403, 404, 409)}}},
    "/api/matches/{match_id}/seats/{player}/confirm": {"post": {
        "summary": "Confirm that the phone holding a seat is that player's: an organiser, or a phone seated at the "
                   "table as another player (another device); a confirmed owner may reset a secret recorded "
                   "before it sat",
        "parameters": [_ID, _PLAYER], "security": _SEC,
        "responses": {"200": _json("Seats"), **_errors(400, 401, 403, 404, 409)}}},
    "/api/matches/{match_id}/seats/{player}": {
        "put": {"summary": "Give a seat to a phone (session id), moving it from its former seat; share keeps "
                           "the phones already there (organiser)",
                "parameters": [_ID, _PLAYER], "security": _SEC,
                "requestBody": apidoc.body("api.seat-bind"),
                "responses": {"200": _json("Seats"), **_errors(400, 401, 403, 404)}},
        "delete": {"summary": "Free a seat (organiser)", "parameters": [_ID, _PLAYER], "security": _SEC,
                   "responses": {"200": _json("Seats"), **_errors(400, 401, 403, 404)}}},
}
