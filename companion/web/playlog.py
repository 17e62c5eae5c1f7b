"""Every player's play log: a finished match as a BG Stats "push a play" link (docs/playlog.md).

``GET /api/matches/<id>/playlog``: ``{"play", "url", "app_url"}`` (409 while the match is in play);
``GET /api/matches/<id>/playlog.svg``: the QR code of the link (the TV's end screen);
``GET /m/<id>/playlog``: the page behind "Save to my play log" (the match page's end card, the player page).
"""

from __future__ import annotations

from flask import Blueprint, Response, abort, g, jsonify, render_template

from companion.base import lazy
from companion.base.errors import CompanionError, NotFoundError
from companion.web import i18n
from companion.web.apidoc import err as _err, ok as _ok, path_param
from companion.web.core import ctx

plays = lazy.module("companion.services.playlog")

bp = Blueprint("playlog", __name__)


def _play(match_id: str) -> dict:
    c = ctx()
    return plays.match_play(c.service, c.store, match_id)


@bp.get("/api/matches/<match_id>/playlog")
def playlog_json(match_id):
    return jsonify(_play(match_id))


@bp.get("/api/matches/<match_id>/playlog.svg")
def playlog_qr(match_id):
    from companion.web.auth import qr_svg

    return Response(qr_svg(_play(match_id)["url"]), mimetype="image/svg+xml",
                    headers={"Cache-Control": "no-store"})


@bp.get("/m/<match_id>/playlog")
def playlog_page(match_id):
    from companion.web.auth import qr_svg

    c = ctx()
    try:
        match = c.store.get_match(match_id)
    except NotFoundError:
        abort(404)
    try:
        out = _play(match_id)
    except CompanionError as exc:  # still in play: the page says so
        return render_template("playlog.html", page="playlog", match=match, out=None, reason=exc.template), 409
    lang = g.get("lang", i18n.DEFAULT)
    return render_template("playlog.html", page="playlog", match=match, out=out, svg=qr_svg(out["url"]),
                           plural=lambda key, n: i18n.plural(lang, key, n))


_MID = path_param("match_id")
OPENAPI_SCHEMAS = {
    "PlayLog": {"type": "object", "required": ["play", "url", "app_url"],
                "properties": {"play": {"type": "object", "description": "schemas/bgstats.play"},
                               "url": {"type": "string"}, "app_url": {"type": "string"}}},
}
OPENAPI_PATHS = {
    "/api/matches/{match_id}/playlog": {
        "get": {"summary": "The finished match as a BG Stats play and its links (409 while it is in play)",
                "parameters": [_MID], "responses": {"200": _ok("PlayLog"), **_err(401, 404, 409)}}},
    "/api/matches/{match_id}/playlog.svg": {
        "get": {"summary": "The QR code of the finished match's BG Stats link", "parameters": [_MID],
                "responses": {"200": {"description": "SVG", "content": {"image/svg+xml": {"schema": {"type": "string"}}}},
                              **_err(401, 404, 409)}}},
}
