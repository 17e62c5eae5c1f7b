"""The Web of Power tracker's routes: the match's board, its chains now, and the check of placements before
they are recorded (nothing stored)."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.base import lazy
from companion.base.errors import InputError, NotFoundError, RuleError
from companion.web.core import ctx
from companion.web.trackers import body, game_match, openapi_post_read, openapi_read

wop = lazy.module("companion.games.web_of_power")  # imported at the first request that needs them
wb = lazy.module("companion.games.wop_board")

bp = Blueprint("trackers_wop", __name__)
GAME = "web-of-power"  # wop.GAME_ID


@bp.get("/api/matches/<match_id>/wop/board")
def wop_board(match_id):
    """The match's board for the page: countries in scoring order, their sites and capacity, whether the
    roads are known, the alliances, and the SVG drawing (``site_order``: the site ids in the order the
    SVG draws their circles, so the page can colour them by holder)."""
    m = game_match(match_id, GAME)
    doc = m["options"].get("board") or wb.default_board_doc()
    board = ctx().service.fold(match_id).game_state["board"]
    site_order = [s if isinstance(s, str) else s["id"] for c in doc["countries"] for s in c["sites"]]
    # a board drawn on the box (/boards): the sites where they are on its photo, the roads, the photo itself
    coords = {s["id"]: [s["x"], s["y"]] for c in doc["countries"] for s in c["sites"]
              if isinstance(s, dict) and "x" in s and "y" in s}
    ref = m["options"].get("board_ref")
    photo = None
    if isinstance(ref, dict) and coords and len(coords) == len(site_order):
        try:
            v = ctx().store.board_version(ref["id"], ref["version"])
            meta = ctx().store.board_photo_meta(v["photo_id"]) if v["photo_id"] else None
        except NotFoundError:  # an imported match whose board is not on this box
            meta = None
        if meta:
            photo = {"url": f"/api/boards/{ref['id']}/photo?version={ref['version']}",
                     "width": meta["width"], "height": meta["height"]}
    return jsonify({"name": board["name"], "status": board["status"], "complete": board["complete"],
                    "countries": board["countries"], "sites": board["sites"], "capacity": board["capacity"],
                    "roads_known": board["roads"] is not None, "alliances": board["alliances"],
                    "site_order": site_order, "svg": wb.map_svg(doc), "board_ref": ref,
                    "coords": coords if len(coords) == len(site_order) and coords else None,
                    "roads": board["roads"] or [], "sea_routes": doc.get("sea_routes") or [], "photo": photo})


@bp.get("/api/matches/<match_id>/wop/chains")
def wop_chains(match_id):
    """Each player's chains now (``web_of_power.current_chains``): the page draws them on the board."""
    game_match(match_id, GAME)
    return jsonify({"chains": wop.current_chains(ctx().service.fold(match_id).game_state)})


MAX_CHECKS = 24  # (the quick picker asks for the few placements one country offers)


@bp.post("/api/matches/<match_id>/wop/check")
def wop_check(match_id):
    """What each placement of ``data.placements`` (each as a ``place`` event's data) would break, before it is
    recorded (``web_of_power.check_place``): ``{"seq", "checks": [{"warnings": [...]}]}`` in their order, as
    of the match at ``seq``; a placement the event would refuse is ``{"warnings": [], "refused": true}`` (its
    write says why). The page asks the table to confirm a placement with warnings. Nothing is stored."""
    game_match(match_id, GAME)
    items = body(write=False)["data"].get("placements")
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_CHECKS:
        raise InputError("must be a list of 1 to {n} placements", "$.data.placements", n=MAX_CHECKS)
    f = ctx().service.fold(match_id)
    checks = []
    for data in items:
        try:
            checks.append({"warnings": wop.check_place(f.game_state, data)})
        except (InputError, RuleError):
            checks.append({"warnings": [], "refused": True})
    return jsonify({"seq": f.last_seq, "checks": checks})


OPENAPI_PATHS = {
    "/api/matches/{match_id}/wop/check": openapi_post_read(
        "The rules each placement would break, before it is recorded (nothing stored)"),
    "/api/matches/{match_id}/wop/board": openapi_read("The Web of Power match's board (countries, sites, SVG)"),
    "/api/matches/{match_id}/wop/chains": openapi_read("Each player's chains of monasteries now (null: no roads)"),
}
