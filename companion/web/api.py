"""The JSON API under ``/api``: matches, events, undo, export/import, tournament, health.

Every body is validated against ``schemas/api.*.schema.json`` (the OpenAPI document is built
from the same files). Errors are JSON ``{"error", "field"?}`` with a 4xx status.
"""

from __future__ import annotations

import logging

from flask import Blueprint, jsonify, request

from companion import __version__
from companion.errors import CompanionError, ConflictError, ForbiddenError, InputError, NotFoundError, RuleError
from companion.games import game_module, registry
from companion.matches import event_path, uses_clock
from companion.schemas import json_path
from companion.web.core import (ctx, int_arg, json_body, match_card, meta, present_event, present_view,
                                require, role, seat_for, set_meta)

log = logging.getLogger(__name__)
bp = Blueprint("api", __name__)


def _dollar(field: str | None, prefix: str = "$") -> str:
    if not field:
        return prefix
    if field.startswith("$"):
        return field
    return f"{prefix}.{field}" if not field.startswith("[") else f"{prefix}{field}"


def _guard_game(fn, *args, where="$.data", **kw):
    """Run a call into a game module: its own errors pass through, anything else it raises on
    odd data becomes a 400 naming ``where`` (a game module must never turn bad input into a 500)."""
    try:
        return fn(*args, **kw)
    except CompanionError:
        raise
    except Exception as exc:
        log.exception("game module failed")
        raise InputError(f"the game could not handle this input ({type(exc).__name__})", where) from None


def match_doc(match_id: str) -> dict:
    c = ctx()
    match = c.store.get_match(match_id)
    view = _guard_game(c.service.state, match_id, where="$")
    who, seat = role(), seat_for(match_id)
    out = {**match, **meta(c, match_id), "seq": view["seq"], "seat": seat,
           "view": present_view(view, who, seat)}
    if c.runner is not None and hasattr(c.runner, "power_lost") and uses_clock(match["game"], match["options"]):
        out["power_lost"] = c.runner.power_lost(match_id)
    return out


@bp.get("/healthz")
def healthz():
    c = ctx()
    return jsonify({"ok": True, "version": __version__, "schema_version": c.store.schema_version(),
                    "streams": c.hub.count(), "clock_runner": c.runner is not None,
                    "gpio": c.box.status() if c.box is not None else None})


@bp.get("/api/games")
def games():
    out = [{"id": gid, "name": mod.NAME, "available": True, "event_types": sorted(mod.EVENT_TYPES),
            "clock_default": mod.USES_CLOCK, "min_players": mod.MIN_PLAYERS, "max_players": mod.MAX_PLAYERS}
           for gid, mod in registry().items()]
    return jsonify({"games": out})


@bp.get("/api/matches")
def list_matches():
    c = ctx()
    status = request.args.get("status")
    if status not in (None, "open", "ended"):
        raise InputError("must be open or ended", "status")
    limit = int_arg("limit", 50, 1, 500)
    who = role()
    cards = [match_card(c, m, who, seat_for(m["id"]), with_view=m["status"] == "open")
             for m in c.store.list_matches(status, limit)]
    return jsonify({"matches": cards})


@bp.post("/api/matches")
@require("player")
def create_match():
    c = ctx()
    doc = json_body("api.match-create")
    players = doc["players"]
    colours = doc.get("colours", {})
    for name in colours:
        if name not in players:
            raise InputError(f"{name!r} is not one of the players", json_path(["colours", name]))
    try:
        match = _guard_game(c.service.create, doc["game"], players, doc.get("options", {}), where="$.options")
    except CompanionError as exc:
        if exc.field in ("players", "game"):
            raise type(exc)(exc.message, f"$.{exc.field}") from None
        raise type(exc)(exc.message, _dollar(exc.field, "$.options")) from None
    set_meta(c, match["id"], doc.get("label", ""), colours)
    body = match_doc(match["id"])
    c.hub.publish("*", "match", match_card(c, match, "viewer", None))
    return jsonify(body), 201, {"Location": f"/api/matches/{match['id']}"}


@bp.get("/api/matches/<match_id>")
def get_match(match_id):
    return jsonify(match_doc(match_id))


@bp.get("/api/matches/<match_id>/events")
def list_events(match_id):
    c = ctx()
    match = c.store.get_match(match_id)
    after = int_arg("after", 0, 0, 2**53)
    who, seat = role(), seat_for(match_id)
    ended = match["status"] == "ended"
    events = [present_event(e, match["game"], who, seat, ended) for e in c.store.events(match_id, after_seq=after)]
    return jsonify({"match_id": match_id, "events": events})


def _writer(match: dict):
    """Clock matches are written through the clock runner when it runs: it stamps events by the
    server's clock, never before the match's last event."""
    c = ctx()
    if c.runner is not None and hasattr(c.runner, "append") and uses_clock(match["game"], match["options"]):
        return lambda mid, t, d, seq: c.runner.append(mid, t, d, expected_seq=seq)
    return lambda mid, t, d, seq: c.service.append(mid, t, d, expected_seq=seq)


def _append(match_id: str, type_: str, data: dict, expected_seq: int, call=None):
    c = ctx()
    match = c.store.get_match(match_id)
    if call is None:
        write = _writer(match)

        def call():
            return write(match_id, type_, data, expected_seq)
    try:
        event = _guard_game(call)
    except ConflictError:
        raise
    except RuleError as exc:
        raise RuleError(exc.message, event_path("$", exc.field)) from None
    except InputError as exc:
        if exc.field and exc.field.startswith("$"):
            raise
        raise InputError(exc.message, event_path("$", exc.field)) from None
    body = match_doc(match_id)
    body["event"] = present_event(event, body["game"], role(), seat_for(match_id), body["status"] == "ended")
    return jsonify(body), 201


@bp.post("/api/matches/<match_id>/events")
@require("player")
def append_event(match_id):
    doc = json_body("api.event-append")
    if doc["type"] == "undo":
        raise InputError("use POST /api/matches/<id>/undo to undo", "$.type")
    return _append(match_id, doc["type"], doc.get("data", {}), doc["expected_seq"])


@bp.post("/api/matches/<match_id>/undo")
@require("player")
def undo(match_id):
    doc = json_body("api.undo")
    return _append(match_id, "undo", {}, doc["expected_seq"])


@bp.post("/api/matches/<match_id>/final-roll")
@require("player")
def final_roll(match_id):
    """The server rolls the two final-round dice for the player who owes them (clock matches)."""
    c = ctx()
    doc = json_body("api.final-roll")
    match = c.store.get_match(match_id)
    if not uses_clock(match["game"], match["options"]):
        raise RuleError("this match does not use the clock", "$")
    if c.runner is None or not hasattr(c.runner, "roll_final"):
        raise RuleError("the match clock runner is not running on this server", "$")
    return _append(match_id, "final.roll", {}, doc["expected_seq"],
                   call=lambda: c.runner.roll_final(match_id, doc.get("player"), expected_seq=doc["expected_seq"]))


@bp.put("/api/matches/<match_id>/seat")
@require("player")
def claim_seat(match_id):
    """This phone belongs to one player of the match (games with secrets show them only to their owner)."""
    from flask import g

    c = ctx()
    match = c.store.get_match(match_id)
    doc = json_body("api.seat")
    player = doc["player"]
    if player is not None and player not in match["players"]:
        raise InputError(f"{player!r} does not play in this match", "$.player")
    sess = getattr(g, "session", None)
    if sess is None:
        raise InputError("a seat belongs to a browser session (bearer tokens have no seat)", "Authorization")
    data = dict(sess["data"])
    seats = dict(data.get("seats") or {})
    if player is None:
        seats.pop(match_id, None)
    else:
        seats[match_id] = player
    data["seats"] = seats
    c.access.set_session_data(sess["key"], data)
    sess["data"] = data
    return jsonify(match_doc(match_id))


def _has_secrets(game: str) -> bool:
    try:
        mod = game_module(game)
    except Exception:
        return False
    return hasattr(mod, "public_view") or hasattr(mod, "public_event")


@bp.get("/api/matches/<match_id>/export")
def export_match(match_id):
    c = ctx()
    match = c.store.get_match(match_id)
    if _has_secrets(match["game"]) and role() != "organiser" and match["status"] == "open":
        raise ForbiddenError("this game has secrets: only an organiser may export a match in play", "Authorization")
    doc = c.store.export_match(match_id)
    return jsonify(doc), 200, {"Content-Disposition": f'attachment; filename="match-{match_id}.json"'}


@bp.post("/api/matches/import")
@require("organiser")
def import_match():
    from companion.matches import check_export

    c = ctx()
    doc = json_body()
    f = _guard_game(check_export, doc, where="$")
    match_id = c.store.import_match(doc, status="ended" if f.ended() else "open")
    c.service.forget(match_id)
    c.hub.publish("*", "match", match_card(c, c.store.get_match(match_id), "viewer", None))
    return jsonify({"imported": match_id, "events": len(doc["events"])}), 201, \
        {"Location": f"/api/matches/{match_id}"}


# -- tournament / clock -----------------------------------------------------------
@bp.get("/api/tournament")
def tournament():
    c = ctx()
    who = role()
    tables = [match_card(c, m, who, seat_for(m["id"])) for m in c.store.list_matches("open", 100)]
    out = {"tables": tables, "clock_runner": c.runner is not None}
    if c.runner is not None and hasattr(c.runner, "overview"):
        try:
            out["overview"] = c.runner.overview()
        except Exception:
            log.exception("runner overview failed")
    return jsonify(out)


@bp.post("/api/tournament/round")
@require("organiser")
def tournament_round():
    c = ctx()
    doc = json_body("api.tournament-round")
    ids = doc["match_ids"]
    for i, mid in enumerate(ids):
        try:
            m = c.store.get_match(mid)
        except NotFoundError:
            raise NotFoundError(f"no match {mid}", f"$.match_ids[{i}]") from None
        if m["status"] != "open":
            raise RuleError("the match has ended", f"$.match_ids[{i}]")
        if not uses_clock(m["game"], m["options"]):
            raise RuleError("this match does not use the clock", f"$.match_ids[{i}]")
    if c.runner is None or not hasattr(c.runner, "start_tournament_round"):
        raise RuleError("the match clock runner is not running on this server", "$.match_ids")
    try:
        result = c.runner.start_tournament_round(ids)
    except CompanionError as exc:
        raise type(exc)(exc.message, _dollar(exc.field)) from None
    return jsonify({"started": ids, "result": result if isinstance(result, (dict, list)) else None})


@bp.get("/api/hardware")
def hardware():
    c = ctx()
    return jsonify({"gpio": c.box.status() if c.box is not None else None})
