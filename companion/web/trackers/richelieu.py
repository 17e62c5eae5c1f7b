"""The Richelieu tracker's routes: the preview of an intrigue resolution (nothing stored)."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.base.errors import RuleError
from companion.base import lazy
from companion.web.core import ctx
from companion.web.trackers import body, engine, game_match, openapi_post_read

rl = lazy.module("companion.games.richelieu")  # imported at the first request that needs it

bp = Blueprint("trackers_richelieu", __name__)
GAME = "richelieu"  # rl.GAME_ID


@bp.post("/api/matches/<match_id>/richelieu/preview")
def richelieu_preview(match_id):
    """What resolving an intrigue with these two cards would do (``data`` as in ``intrigue.resolve``), with
    the match's players, Cardinal and neutral colour. Nothing is stored."""
    game_match(match_id, GAME)
    doc = body(write=False)
    f = ctx().service.fold(match_id)
    if f.ended():
        raise RuleError("the match has ended", "$")
    return jsonify(engine(rl.preview, f.game_state, doc["data"]))


OPENAPI_PATHS = {
    "/api/matches/{match_id}/richelieu/preview": openapi_post_read("Preview an intrigue resolution (nothing stored)"),
}
