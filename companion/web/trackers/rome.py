"""The Rome Is Burning tracker's routes: the card catalogue, the Pi's deal and move dice, the scores now."""

from __future__ import annotations

import functools

from flask import Blueprint, Response, jsonify, request

from companion.base import lazy
from companion.web.core import ctx, require
from companion.web.trackers import act, game_match, openapi_read, openapi_static, openapi_write

r = lazy.module("companion.games.rome_is_burning")  # imported at the first request that needs it

bp = Blueprint("trackers_rome", __name__)
GAME = "rome-is-burning"  # r.GAME_ID


@functools.cache
def catalogue_answer() -> tuple[bytes, str]:
    """The card catalogue as the page reads it, and the hash of those bytes (made once per process)."""
    import hashlib
    import json

    body = json.dumps({"cards": [{"name": n, "types": t} for n, t in r.CATALOGUE], "type_names": r.TYPE_NAMES,
                       "plebeian": {"extra": r.PLEBEIAN_EXTRA, "squares": list(r.PLEBEIAN_SQUARES)},
                       "emperor": {"extra": r.EMPEROR_EXTRA, "squares": list(r.EMPEROR_SQUARES)},
                       "ring": r.RING, "palace": r.PALACE, "turns": r.TURNS},
                      ensure_ascii=False, separators=(",", ":")).encode()
    return body, hashlib.sha256(body).hexdigest()[:16]


def catalogue_url() -> str:
    """The catalogue's address with its content's hash (the match and TV pages name it: ``data-catalogue-url``),
    which a phone then keeps instead of asking at every load."""
    return f"/api/games/rome-is-burning/catalogue?v={catalogue_answer()[1]}"


@bp.get("/api/games/rome-is-burning/catalogue")
def rome_catalogue():
    """The 40 cards of the rule book with their type letters, and what the letters mean. Asked for with
    ``?v=`` its content's hash (:func:`catalogue_url`), it is kept a year by the browser."""
    body, digest = catalogue_answer()
    resp = Response(body, mimetype="application/json")
    resp.set_etag(digest)
    resp.headers["Cache-Control"] = "public, max-age=31536000, immutable" if request.args.get("v") == digest \
        else "no-cache"
    return resp.make_conditional(request)


@bp.post("/api/matches/<match_id>/rome/deal")
@require("player")
def rome_deal(match_id):
    """The Pi shuffles and deals a turn (``turn.setup``; ``data.first``: who moves first, optional)."""
    return act(match_id, GAME, "deal")


@bp.post("/api/matches/<match_id>/rome/move")
@require("player")
def rome_move(match_id):
    """The Pi rolls 1d6 for ``data.player`` moving ``data.direction`` (cw or ccw); stores ``move``."""
    return act(match_id, GAME, "move")


@bp.get("/api/matches/<match_id>/rome/scores")
def rome_scores(match_id):
    """This turn's scores of the hands as they stand, with their breakdown (cards, A/B extras, squares) and
    who would be elected; during an election, the scoring that is waiting for the old emperor's choice."""
    game_match(match_id, GAME)
    return jsonify(r.scores_now(ctx().service.fold(match_id).game_state))


OPENAPI_PATHS = {
    "/api/games/rome-is-burning/catalogue": openapi_static("Rome Is Burning card catalogue"),
    "/api/matches/{match_id}/rome/deal": openapi_write("The Pi deals a Rome turn (turn.setup)"),
    "/api/matches/{match_id}/rome/move": openapi_write("The Pi rolls 1d6 for a Rome move"),
    "/api/matches/{match_id}/rome/scores": openapi_read("This turn's Rome scores with their breakdown"),
}
