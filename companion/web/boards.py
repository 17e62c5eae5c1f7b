"""Web of Power boards on the web: the editor page ``/boards`` (organiser) and the API under
``/api/boards`` (list, create, check, versions, photo upload and download, export, import, the club's
default). The rules are ``companion.services.boards``; the checker is the one ``companion map check`` runs."""

from __future__ import annotations

import json

from flask import Blueprint, Response, jsonify, render_template, request

from companion.services import boards as core
from companion.base.errors import InputError
from companion.web.core import ctx, int_arg, json_body, require, role
from companion.web.apidoc import SECURITY, body as _body, err as _err, ok as _ok, path_param, ref as _ref

bp = Blueprint("boards", __name__)
MAX_VERSION = 10**9  # the largest board version a request may name (query or path)


class NotAnImage(InputError):
    http_status = 415


class PhotoTooLarge(InputError):
    http_status = 413


@bp.get("/boards")
def boards_page():
    return render_template("boards.html", page="boards", organiser=role() == "organiser",
                           photo_mb=core.PHOTO_LIMIT // (1024 * 1024))


@bp.get("/api/boards")
def list_boards():
    return jsonify({"boards": core.listing(ctx().store), "book": core.wb.book_facts(),
                    "photo_limit": core.PHOTO_LIMIT})


@bp.post("/api/boards")
@require("organiser")
def create_board():
    doc = json_body("api.board-create")
    out = core.create(ctx().store, doc["name"], doc.get("club"), doc.get("board"))
    return jsonify(out), 201, {"Location": f"/api/boards/{out['id']}"}


@bp.post("/api/boards/check")
@require("organiser")
def check_board():
    doc = json_body("api.board-check")
    return jsonify(core.check(doc["board"], "$.board"))


@bp.get("/api/boards/<board_id>")
def get_board(board_id):
    return jsonify(core.describe(ctx().store, board_id))


@bp.get("/api/boards/<board_id>/versions/<int:version>")
def get_version(board_id, version):
    return jsonify(core.describe(ctx().store, board_id, version))


@bp.post("/api/boards/<board_id>/versions")
@require("organiser")
def save_version(board_id):
    doc = json_body("api.board-save")
    out = core.save(ctx().store, board_id, doc["board"], doc.get("expected_version"), doc.get("name"))
    return jsonify(out), 201, {"Location": f"/api/boards/{board_id}/versions/{out['version']}"}


@bp.put("/api/boards/<board_id>/photo")
@require("organiser")
def upload_photo(board_id):
    c = ctx()
    c.store.get_board(board_id)  # 404 before reading a body for nothing
    expected = int_arg("expected_version", None, 1, MAX_VERSION)  # (400 before reading it too)
    data = request.get_data(cache=False)
    if len(data) > core.PHOTO_LIMIT:  # a body sent without Content-Length
        raise PhotoTooLarge("the photo is too large: at most {value} MB",
                            "Content-Length", value=core.PHOTO_LIMIT // (1024 * 1024))
    try:
        core.sniff_image(data)
    except InputError as exc:
        raise exc.again(NotAnImage, "photo") from None
    out = core.set_photo(c.store, board_id, data, expected)
    return jsonify(out), 201


@bp.get("/api/boards/<board_id>/photo")
def get_photo(board_id):
    p = core.photo(ctx().store, board_id, int_arg("version", None, 1, MAX_VERSION))
    return Response(p["data"], mimetype=p["mime"],
                    headers={"Cache-Control": "private, max-age=86400", "X-Content-Type-Options": "nosniff"})


@bp.get("/api/boards/<board_id>/export")
def export_board(board_id):
    c = ctx()
    version = int_arg("version", None, 1, MAX_VERSION)
    with_photo = request.args.get("photo") in ("1", "true", "yes")
    doc = core.export(c.store, board_id, version, with_photo)
    name = f"board-{board_id}-v{version or c.store.get_board(board_id)['latest']}.json"
    return Response(json.dumps(doc, ensure_ascii=False, indent=1), mimetype="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


@bp.post("/api/boards/import")
@require("organiser")
def import_board():
    doc = json_body("web-of-power.map")
    name = request.args.get("name")
    if name is not None and not 1 <= len(name) <= 200:
        raise InputError("must be 1 to 200 characters", "name")
    out = core.import_board(ctx().store, doc, request.args.get("club"), name)
    return jsonify(out), 201, {"Location": f"/api/boards/{out['id']}"}


@bp.put("/api/boards/default")
@require("organiser")
def set_default():
    doc = json_body("api.board-default")
    store = ctx().store
    core.set_default(store, doc["board_id"], doc.get("club"))
    return jsonify({"boards": core.listing(store)})


# -- OpenAPI --------------------------------------------------------------------------------------



_ID = path_param("board_id", schema={"type": "string", "maxLength": 64})
_VERSION_Q = {"name": "version", "in": "query", "schema": {"type": "integer", "minimum": 1, "maximum": MAX_VERSION},
              "description": "a version (default: the latest)"}
_SEC = SECURITY
_PROBLEM = {"type": "object", "required": ["path", "message"],
            "properties": {"path": {"type": "string"}, "message": {"type": "string"}}}
_CHECK = {"type": "object", "required": ["ok", "errors", "warnings", "status", "complete"],
          "properties": {"ok": {"type": "boolean"}, "complete": {"type": "boolean"},
                         "status": {"enum": ["template", "partial", "complete"]},
                         "errors": {"type": "array", "items": _PROBLEM},
                         "warnings": {"type": "array", "items": _PROBLEM}, "counts": {"type": "object"}}}
def _map_schema() -> dict:
    from companion.base.schemas import load_schema, standalone

    return standalone(load_schema("web-of-power.map"))  # one component, no inner $ref


OPENAPI_SCHEMAS = {
    "web-of-power.map": _map_schema(),
    "BoardCheck": _CHECK,
    "Board": {"type": "object",
              "required": ["id", "name", "version", "latest", "status", "board", "check", "photo", "default",
                           "versions"],
              "properties": {"id": {"type": "string"}, "name": {"type": "string"},
                             "club_id": {"type": ["string", "null"]}, "version": {"type": "integer"},
                             "latest": {"type": "integer"}, "status": {"enum": ["template", "partial", "complete"]},
                             "board": _ref("web-of-power.map"), "check": _ref("BoardCheck"),
                             "photo": {"type": ["object", "null"]}, "default": {"type": "boolean"},
                             "versions": {"type": "array"}, "book": {"type": "object"}}},
    "BoardList": {"type": "object", "required": ["boards"],
                  "properties": {"boards": {"type": "array", "items": {"type": "object"}},
                                 "book": {"type": "object"}, "photo_limit": {"type": "integer"}}},
}
OPENAPI_PATHS = {
    "/api/boards": {
        "get": {"summary": "The Web of Power boards of the box (latest version, status, default)",
                "responses": {"200": _ok("BoardList"), **_err(401)}},
        "post": {"summary": "A new board from the rule book's facts, or from a given document (organiser)",
                 "security": _SEC, "requestBody": _body("api.board-create"),
                 "responses": {"201": _ok("Board", "created"), **_err(400, 401, 403, 404)}}},
    "/api/boards/check": {"post": {
        "summary": "Check a board document with `companion map check`'s checker; stores nothing (organiser)",
        "security": _SEC, "requestBody": _body("api.board-check"),
        "responses": {"200": _ok("BoardCheck"), **_err(400, 401, 403)}}},
    "/api/boards/import": {"post": {
        "summary": "Import an exported board as a new board (organiser); its photo, if any, is checked too",
        "security": _SEC, "requestBody": _body("web-of-power.map"),
        "parameters": [{"name": "club", "in": "query", "schema": {"type": "string"}},
                       {"name": "name", "in": "query", "schema": {"type": "string"}}],
        "responses": {"201": _ok("Board", "imported"), **_err(400, 401, 403, 404, 413)}}},
    "/api/boards/default": {"put": {
        "summary": "Set (or clear) the club's default board for new Web of Power matches (organiser)",
        "security": _SEC, "requestBody": _body("api.board-default"),
        "responses": {"200": _ok("BoardList"), **_err(400, 401, 403, 404)}}},
    "/api/boards/{board_id}": {"get": {"summary": "A board's latest version with the checker's report",
                                       "parameters": [_ID], "responses": {"200": _ok("Board"), **_err(404)}}},
    "/api/boards/{board_id}/versions": {"post": {
        "summary": "Save a new version (organiser); 409 when expected_version is not the latest",
        "security": _SEC, "parameters": [_ID], "requestBody": _body("api.board-save"),
        "responses": {"201": _ok("Board", "saved"), **_err(400, 401, 403, 404, 409)}}},
    "/api/boards/{board_id}/versions/{version}": {"get": {
        "summary": "One version of a board",
        "parameters": [_ID, path_param("version", schema={
            "type": "integer", "minimum": 1, "maximum": MAX_VERSION})],
        "responses": {"200": _ok("Board"), **_err(404)}}},
    "/api/boards/{board_id}/photo": {
        "get": {"summary": "The photo of a version", "parameters": [_ID, _VERSION_Q],
                "responses": {"200": {"description": "the image",
                                      "content": {"image/jpeg": {}, "image/png": {}}}, **_err(400, 404)}},
        "put": {"summary": f"Upload the board's photo (JPEG or PNG, at most {core.PHOTO_LIMIT // 1048576} MB): "
                           "a new version showing it (organiser)",
                "security": _SEC, "parameters": [_ID, {"name": "expected_version", "in": "query", "schema": {
                    "type": "integer", "minimum": 1, "maximum": MAX_VERSION}}],
                "requestBody": {"required": True, "content": {
                    "image/jpeg": {"schema": {"type": "string", "format": "binary"}},
                    "image/png": {"schema": {"type": "string", "format": "binary"}}}},
                "responses": {"201": _ok("Board", "stored"), **_err(400, 401, 403, 404, 409, 413, 415)}}},
    "/api/boards/{board_id}/export": {"get": {
        "summary": "A version as a board document (schemas/web-of-power.map); photo=1 includes the photo",
        "parameters": [_ID, _VERSION_Q, {"name": "photo", "in": "query", "schema": {"enum": ["0", "1"]}}],
        "responses": {"200": {"description": "the board document", "content": {
            "application/json": {"schema": _ref("web-of-power.map")}}}, **_err(400, 404)}}},
}
