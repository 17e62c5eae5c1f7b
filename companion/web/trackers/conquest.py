"""The conquest tracker's routes: the map, the Pi's deal and dice, turn ends, odds, reinforcements, the
phone's own secret objective, the final ranking."""

from __future__ import annotations

import functools
import json

from flask import Blueprint, Response, jsonify, request

from companion.base.errors import ForbiddenError, InputError, RuleError
from companion.base import lazy
from companion.services import policy
from companion.services.policy import Caller
from companion.web.core import caller, ctx, int_arg, require, role, seat_for
from companion.web.trackers import act, game_match, openapi_read, openapi_write

ci = lazy.module("companion.games.conquest_italy")  # the rules are imported at the first request that needs them
cm = lazy.module("companion.games.conquest_map")
co = lazy.module("companion.games.conquest_odds")

bp = Blueprint("trackers_conquest", __name__)
GAME = "conquest-italy"  # ci.GAME_ID


KEPT_A_YEAR = "private, max-age=31536000, immutable"


@functools.lru_cache(maxsize=8)
def _map_answer(doc_text: str) -> tuple[bytes, str]:
    doc = json.loads(doc_text)
    gm = cm.map_of(doc)
    cities = [{"name": c, "region": gm.city[c]["region"], "card": gm.city[c]["card"], "value": gm.city[c]["value"],
               "land": sorted(gm.land[c]), "sea": sorted(gm.sea[c]), "airport": c in gm.airports}
              for c in gm.cities]
    svg = cm.map_svg(doc if doc is not None else cm.default_map_doc())
    # default: the box's own map, whose name the page says in its language (its file names it in Italian)
    body = json.dumps({"name": gm.name, "default": doc is None, "regions": gm.regions, "cities": cities, "airports": list(gm.airports),
                       "cards": list(gm.cards), "sets": {k: v for k, v in gm.sets.items() if v is not None},
                       "mixed_set": ci.MIXED_SET, "svg": svg}, ensure_ascii=False, separators=(",", ":")).encode()
    import hashlib

    return body, hashlib.sha256(body).hexdigest()[:16]


@functools.lru_cache(maxsize=8)
def _gzipped_map(body: bytes) -> bytes:
    import gzip

    return gzip.compress(body, compresslevel=9, mtime=0)


def map_answer(match: dict) -> tuple[bytes, str]:
    """The match's map as the page reads it, and the hash of those bytes. A match's map never changes (its
    options hold it), so it is drawn once per process for all the matches on the same map (the last 8)."""
    return _map_answer(json.dumps(match["options"].get("map"), sort_keys=True, separators=(",", ":")))


def map_url(match: dict) -> str:
    """The address of the match's map with its content's hash: a phone or a TV keeps it (the match and TV
    pages name it: ``data-map-url``) and does not ask again at the next load."""
    return f"/api/matches/{match['id']}/conquest/map?v={map_answer(match)[1]}"


@bp.get("/api/matches/<match_id>/conquest/map")
def conquest_map(match_id):
    """The match's map for the page: cities (region, card symbol, value, neighbours), regions with their
    bonus, airports, set values, and the SVG drawing. Asked for at its address with ``?v=`` its content's
    hash (:func:`map_url`), it is kept a year by the browser; otherwise it is asked again each time."""
    from companion.web.assets import accepts_gzip

    body, digest = map_answer(game_match(match_id, GAME))
    packed = accepts_gzip(request.headers.get("Accept-Encoding"))
    resp = Response(_gzipped_map(body) if packed else body, mimetype="application/json")
    if packed:  # (31 KB as it is, about 9 KB compressed: once per map)
        resp.headers["Content-Encoding"] = "gzip"
    resp.vary.add("Accept-Encoding")
    resp.set_etag(digest + (".gz" if packed else ""))
    resp.headers["Cache-Control"] = KEPT_A_YEAR if request.args.get("v") == digest else "no-cache"
    return resp.make_conditional(request)


@bp.post("/api/matches/<match_id>/conquest/deal")
@require("player")
def conquest_deal(match_id):
    """The Pi deals the territory cards (``setup.deal``); the answer lists the swaps of the majority rule."""
    return act(match_id, GAME, "deal")


@bp.post("/api/matches/<match_id>/conquest/combat")
@require("player")
def conquest_combat(match_id):
    """One roll of a combat: ``data`` = ``{from, to, dice?, move?}`` (the Pi rolls both sides) or with
    ``attack_dice``/``defend_dice`` as rolled at the table. Stores ``combat`` with the dice."""
    return act(match_id, GAME, "combat")


@bp.post("/api/matches/<match_id>/conquest/turn-end")
@require("player")
def conquest_turn_end(match_id):
    """End the turn of ``data.player``; ``conquered`` (needed in the final rounds) is counted from the
    combats recorded since the last turn end unless given."""
    return act(match_id, GAME, "turn-end")


@bp.get("/api/matches/<match_id>/conquest/odds")
def conquest_odds(match_id):
    """The exact odds of going on with the attack from ``from`` to ``to`` with the units on the map (or
    ``attacker``/``defender`` units given), stopping at ``stop_at`` units (default 1)."""
    game_match(match_id, GAME)
    state = ctx().service.fold(match_id).game_state
    src, dst = request.args.get("from"), request.args.get("to")
    a = int_arg("attacker", None, 1, co.MAX_UNITS)
    d = int_arg("defender", None, 1, co.MAX_UNITS)
    if src is not None or dst is not None:
        on_map = ci.battle_units(state, src, dst)
        a = on_map[0] if a is None else a
        d = on_map[1] if d is None else d
    if a is None or d is None:
        raise InputError("give from and to (cities), or attacker and defender (units)", "from")
    stop_at = int_arg("stop_at", 1, 1, co.MAX_UNITS)
    try:
        b = co.battle(a, d, stop_at)
    except co.DiceError as exc:
        raise InputError(exc.template, exc.field, **exc.params) from None
    outcomes = sorted(b["outcomes"], key=lambda o: -o["p"])[:8]
    gm = ci.map_of(state["map"])
    # whether the battle can still be lost or won at all (a probability of 1.0 as a float may hide a loss of
    # 1e-18): the page never says "100%" of a battle that can be lost, nor "0%" of one that can be won
    can_fail = any(o["defender"] > 0 for o in b["outcomes"])
    can_win = any(o["defender"] == 0 for o in b["outcomes"])
    return jsonify({"attacker": a, "defender": d, "stop_at": stop_at, "p_conquer": b["p_conquer"],
                    "can_fail": can_fail, "can_win": can_win,
                    "expected_attacker_remaining": b["expected_attacker_remaining"],
                    "expected_defender_remaining": b["expected_defender_remaining"],
                    "attack_dice": co.max_attack_dice(a), "defend_dice": co.defend_dice_count(d),
                    "likely_outcomes": outcomes,
                    "via": gm.can_attack(src, dst) if src is not None and dst is not None else None})


@bp.get("/api/matches/<match_id>/conquest/reinforcements")
def conquest_reinforcements(match_id):
    """The reinforcement calculator: what ``player`` receives now, with the cards ``trade`` (three
    ``trade`` parameters) if given. Cards the player hasn't recorded are refused."""
    game_match(match_id, GAME)
    state = ctx().service.fold(match_id).game_state
    player = request.args.get("player")
    trade = request.args.getlist("trade") or None
    # a player's cards are theirs (docs/rulings.md#conquest-hidden-information): the hand is told to that
    # player's phone and to an organiser; a refusal of a trade names no card to anyone else (the policy)
    who, ended = Caller(role(), seat_for(match_id)), ctx().service.fold(match_id).ended()
    try:
        out = ci.reinforcements_now(state, player, trade)
    except RuleError as exc:
        policy.check_secret_refusal(ci, who, player if isinstance(player, str) else None, exc, ended)
        raise
    own = policy.sees_secret_of(who, player, ended)
    return jsonify({"player": player, "hand": list(state["hands"][player]) if own else None, **out})


@bp.get("/api/matches/<match_id>/conquest/objective")
def conquest_objective(match_id):
    """The secret objective of the player this phone belongs to (its seat), with its progress, and whether this
    phone may replace it (``may_reset``: recorded before it sat, its seat confirmed) or will once its seat is
    confirmed (``may_reset_once_confirmed``: the page asks again after each event only then). Nobody else's:
    a phone without a seat gets 403."""
    from flask import g

    game_match(match_id, GAME)
    seat = seat_for(match_id)
    if seat is None:
        raise ForbiddenError("this phone belongs to no player of the match: choose your seat first", "seat")
    f = ctx().service.fold(match_id)
    state = f.game_state
    view = ci.public_view(state, seat)
    mine = state["objectives"].get(seat)
    open_, player = mine is not None and not f.ended(), role() == "player"
    now = open_ and player and policy.may_reset(ci, caller(match_id), seat, "objective.set", f.effective)
    later = False
    if open_ and player and not now and g.get("session") is not None:
        # the same rule for this phone as if its seat were confirmed now: when it sat is all it needs
        bound = next((r["bound_at"] for r in ctx().access.seats(match_id)
                      if r["key"] == g.session["key"] and r["player"] == seat), None)
        later = bound is not None and policy.may_reset(ci, Caller("player", seat, bound), seat, "objective.set",
                                                       f.effective)
    return jsonify({"player": seat, "objective": list(mine) if mine is not None else None,
                    "progress": view.get("objective_progress"), "may_reset": now,
                    "may_reset_once_confirmed": later})


@bp.get("/api/matches/<match_id>/conquest/ranking")
def conquest_ranking(match_id):
    """The final ranking (objective points, then other points; shared places) once the match has ended,
    whatever ended it (objective, final roll, eliminations). Before the end only an organiser may see it:
    it would reveal the secret objectives."""
    game_match(match_id, GAME)
    f = ctx().service.fold(match_id)
    policy.check_ranking(ci, Caller(role()), f.ended())
    return jsonify({"ended": f.ended(), **ci.final_score(f.game_state)})


_CITY = {"type": "string"}
_UNITS = {"type": "integer", "minimum": 1, "maximum": 125}
OPENAPI_PATHS = {
    "/api/matches/{match_id}/conquest/map": openapi_read("The conquest match's map (cities, regions, SVG)"),
    "/api/matches/{match_id}/conquest/deal": openapi_write("The Pi deals the territory cards (setup.deal)"),
    "/api/matches/{match_id}/conquest/combat": openapi_write("A combat roll, dice rolled by the Pi when not given"),
    "/api/matches/{match_id}/conquest/turn-end": openapi_write("End a turn; conquests this turn counted by the server"),
    "/api/matches/{match_id}/conquest/odds": openapi_read("Exact odds of going on with an attack",
                                                          [("from", _CITY), ("to", _CITY), ("attacker", _UNITS),
                                                           ("defender", _UNITS), ("stop_at", _UNITS)]),
    "/api/matches/{match_id}/conquest/reinforcements": openapi_read(
        "Reinforcement calculator", [("player", {"type": "string"}),
                                     ("trade", {"type": "array", "items": {"type": "string"}})]),
    "/api/matches/{match_id}/conquest/objective": openapi_read("This phone's own secret objective and progress"),
    "/api/matches/{match_id}/conquest/ranking": openapi_read("Final ranking (after the end)"),
}
