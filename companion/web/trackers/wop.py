"""The Web of Power tracker's routes: the match's board."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.base import lazy
from companion.base.errors import NotFoundError
from companion.web.core import ctx
from companion.web.trackers import game_match, openapi_read

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


OPENAPI_PATHS = {
    "/api/matches/{match_id}/wop/board": openapi_read("The Web of Power match's board (countries, sites, SVG)"),
    "/api/matches/{match_id}/wop/chains": openapi_read("Each player's chains of monasteries now (null: no roads)"),
}
