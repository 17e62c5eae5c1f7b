"""The tables' smart dice on the web (docs/dice.md).

Organiser: ``GET /api/dice`` (the radio, the dice heard, the sets), ``POST /api/dice/sets``,
``PUT``/``DELETE /api/dice/sets/<id>`` (a table's dice on their sides, the match they serve),
``POST``/``GET /api/dice/sets/<id>/check`` ("roll each die once"), the page ``/dice``.
A match's phones: ``GET /api/matches/<id>/dice`` (where its dice come from, its set, the roll it waits
for), ``POST /api/matches/<id>/dice/roll`` (wait for the table's dice to make a combat, a final roll or a
Rome move), ``POST /api/matches/<id>/dice/cancel``. Every change of a roll goes to the match's live
pages as ``event: dice``.
"""

from __future__ import annotations

from flask import Blueprint, g, jsonify, render_template

from companion.base.errors import ForbiddenError, InputError, NotFoundError
from companion.web import i18n
from companion.web.apidoc import SECURITY, body as _body, err as _err, ok as _ok, path_param
from companion.web.core import caller, ctx, int_arg, json_body, require

SINCE_MAX = 10 ** 13

bp = Blueprint("dice", __name__)


def tables():
    return ctx().dice


def _sentence(view: dict | None) -> dict | None:
    """A finished roll's refusal in the caller's language."""
    if view and view.get("error"):
        e = view["error"]
        view = {**view, "error": {**e, "text": i18n.error_text(g.get("lang", i18n.DEFAULT), e["error"],
                                                                e.get("params") or {})}}
    return view


def _public_set(s: dict | None) -> dict | None:
    """A set as a match's phones see it: the dice's labels and sides."""
    if s is None:
        return None
    return {"id": s["id"], "name": s["name"], "dice": [{"die": d["die"], "side": d["side"], "label": d["label"]}
                                                      for d in s["dice"]]}


@bp.get("/api/dice")
@require("organiser")
def dice_state():
    t = tables()
    radio = t.radio
    return jsonify({"radio": radio.status(), "heard": radio.heard(), "sets": t.sets(), "cursor": t.cursor()})


@bp.post("/api/dice/sets")
@require("organiser")
def create_set():
    doc = json_body("api.dice-set")
    return jsonify(tables().save_set(doc)), 201


@bp.put("/api/dice/sets/<set_id>")
@require("organiser")
def update_set(set_id):
    doc = json_body("api.dice-set")
    return jsonify(tables().save_set(doc, set_id))


@bp.delete("/api/dice/sets/<set_id>")
@require("organiser")
def delete_set(set_id):
    tables().delete_set(set_id)
    return jsonify({"deleted": set_id})


@bp.post("/api/dice/sets/<set_id>/check")
@require("organiser")
def start_check(set_id):
    return jsonify(tables().start_check(set_id))


@bp.get("/api/dice/sets/<set_id>/check")
@require("organiser")
def check_state(set_id):
    return jsonify(tables().check_view(set_id))


@bp.get("/api/dice/rolled")
@require("organiser")
def rolled_lately():
    """The dice that started rolling after the reading ``after`` (``cursor`` of ``GET /api/dice``): "roll a die
    to pick it" on the dice page."""
    from flask import request

    if request.args.get("after", "0") == "":
        raise InputError("must be a whole number", "after")
    after = int_arg("after", 0, 0, SINCE_MAX)
    return jsonify({"dice": tables().rolled_after(after), "cursor": tables().cursor()})


def match_dice_doc(match_id: str) -> dict:
    """The table's dice as the match's pages read them (the match page writes it into itself)."""
    from companion.services.dice import dice_source

    c = ctx()
    match = c.store.get_match(match_id)
    t = tables()
    bound = t.set_for(match_id)
    return {"match_id": match_id, "source": dice_source(match.get("options"), bound is not None),
            "set": _public_set(bound), "wait": _sentence(t.wait_view(match_id)),
            "radio": {k: v for k, v in t.radio.status().items() if k in ("mode", "available", "reason")}}


@bp.get("/api/matches/<match_id>/dice")
def match_dice(match_id):
    return jsonify(match_dice_doc(match_id))


@bp.post("/api/matches/<match_id>/dice/roll")
@require("player")
def start_roll(match_id):
    doc = json_body("api.dice-roll")
    try:
        view = tables().start_roll(match_id, doc["what"], doc.get("data") or {}, doc.get("expected_seq"),
                                   by=caller(match_id))
    except ForbiddenError as exc:  # the seat the roll acts for, named in the body's data
        if exc.field and not exc.field.startswith("$"):
            raise exc.again(field=f"$.data.{exc.field}") from None
        raise
    return jsonify(view), 202


@bp.post("/api/matches/<match_id>/dice/cancel")
@require("player")
def cancel_roll(match_id):
    ctx().store.get_match(match_id)  # 404
    view = tables().cancel(match_id)
    if view is None:
        raise NotFoundError("this table waits for no roll", "match_id")
    return jsonify(view)


@bp.get("/dice")
@require("organiser")
def dice_page():
    return render_template("dice.html", page="dice")


_MID, _SID, _SEC = path_param("match_id"), path_param("set_id"), SECURITY
_OBJ = {"type": "object"}
OPENAPI_SCHEMAS = {"DiceState": _OBJ, "DiceSet": _OBJ, "DiceCheck": _OBJ, "DiceRoll": _OBJ, "MatchDice": _OBJ}
OPENAPI_PATHS = {
    "/api/dice": {"get": {"summary": "The dice radio, the dice heard and the tables' sets (organiser)", "security": _SEC,
                          "responses": {"200": _ok("DiceState"), **_err(401, 403)}}},
    "/api/dice/sets": {"post": {"summary": "A table's dice on their sides (organiser)", "security": _SEC,
                                "requestBody": _body("api.dice-set"),
                                "responses": {"201": _ok("DiceSet"), **_err(400, 401, 403, 404, 409)}}},
    "/api/dice/sets/{set_id}": {
        "put": {"summary": "Change a set (organiser)", "security": _SEC, "parameters": [_SID],
                "requestBody": _body("api.dice-set"), "responses": {"200": _ok("DiceSet"), **_err(400, 401, 403, 404, 409)}},
        "delete": {"summary": "Delete a set (organiser)", "security": _SEC, "parameters": [_SID],
                   "responses": {"200": _ok("DiceSet"), **_err(401, 403, 404)}}},
    "/api/dice/sets/{set_id}/check": {
        "post": {"summary": "Start the check: roll each die once (organiser)", "security": _SEC, "parameters": [_SID],
                 "responses": {"200": _ok("DiceCheck"), **_err(401, 403, 404)}},
        "get": {"summary": "The check's dice and their faces (organiser)", "security": _SEC, "parameters": [_SID],
                "responses": {"200": _ok("DiceCheck"), **_err(401, 403, 404)}}},
    "/api/dice/rolled": {"get": {"summary": "The dice that started rolling lately (organiser)", "security": _SEC,
                                 "parameters": [{"name": "after", "in": "query",
                                                 "schema": {"type": "integer", "minimum": 0, "maximum": SINCE_MAX}}],
                                 "responses": {"200": _ok("DiceState"), **_err(400, 401, 403)}}},
    "/api/matches/{match_id}/dice": {"get": {"summary": "Where the match's dice come from, its set, the roll it waits for",
                                             "parameters": [_MID], "responses": {"200": _ok("MatchDice"), **_err(401, 404)}}},
    "/api/matches/{match_id}/dice/roll": {"post": {
        "summary": "Wait for the table's smart dice to make a roll (combat, final roll, Rome move)", "security": _SEC,
        "parameters": [_MID], "requestBody": _body("api.dice-roll"),
        "responses": {"202": _ok("DiceRoll"), **_err(400, 401, 403, 404, 409)}}},
    "/api/matches/{match_id}/dice/cancel": {"post": {
        "summary": "Stop waiting for the table's dice", "security": _SEC, "parameters": [_MID],
        "responses": {"200": _ok("DiceRoll"), **_err(401, 403, 404)}}},
}
