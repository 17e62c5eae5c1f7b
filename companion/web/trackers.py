"""What the game trackers (``web/static/games/<game>.js``) need from the server beyond the generic
match API: dice and deals made with the server's secure RNG, numbers computed by the engines
(battle odds, reinforcements, intrigue previews, chains), and the reference data a page shows
(the conquest map, the Rome card catalogue, the Web of Power board).

The pages only collect and show; every number here comes from ``companion/games/``. Writes take
``{"expected_seq", "data"}`` (``schemas/api.tracker-action.schema.json``): the server checks that the
phone saw the latest event (a stale write gets 409 with the field ``expected_seq`` and is never
applied), completes ``data`` (rolls, deals, counts), and stores exactly one event through the same
write path as ``POST /api/matches/<id>/events``, so undo, live updates and the clock work as usual.

The RNG is ``app.config["TRACKER_RNG"]`` when set (tests pass a seeded ``random.Random``), else the
OS's secure source.
"""

from __future__ import annotations

import random

from flask import Blueprint, current_app, jsonify, request

from companion.errors import ConflictError, ForbiddenError, InputError, NotFoundError, RuleError
from companion.matches import event_path
from companion.web.core import ctx, json_body, require, role, seat_for

bp = Blueprint("trackers", __name__)

_SYSTEM_RNG = random.SystemRandom()


def _rng():
    return current_app.config.get("TRACKER_RNG") or _SYSTEM_RNG


# -- shared helpers ------------------------------------------------------------------------------

def _match(match_id: str, game: str) -> dict:
    m = ctx().store.get_match(match_id)
    if m["game"] != game:
        raise NotFoundError(f"this is a {m['game']} match, not {game}", "match_id")
    return m


def _body(write: bool = True) -> dict:
    doc = json_body("api.tracker-action")
    if write and "expected_seq" not in doc:
        raise InputError("required: the last seq this phone saw (a stale write is refused)", "$.expected_seq")
    return doc


def _fresh_fold(match_id: str, expected_seq: int | None):
    """The match's fold, refusing a stale writer before anything is computed or rolled."""
    f = ctx().service.fold(match_id)
    if expected_seq is not None and expected_seq != f.last_seq:
        raise ConflictError(f"stale write: the match is at seq {f.last_seq}, the write expected {expected_seq}",
                            "expected_seq")
    if f.ended():
        raise RuleError("the match has ended", "$")
    return f


def _engine(fn, *args, **kw):
    """Call an engine function with event data: its errors name the field inside ``data``."""
    from companion.errors import CompanionError

    try:
        return fn(*args, **kw)
    except ConflictError:
        raise
    except CompanionError as exc:
        field = exc.field
        if field and field.startswith("$"):
            raise
        raise type(exc)(exc.message, event_path("$", field)) from None


def _store(match_id: str, type_: str, data: dict, expected_seq: int, extra: dict | None = None):
    """Store one event through the API's write path (clock stamping, error paths, the match document)."""
    from companion.web.api import _append

    resp, status = _append(match_id, type_, data, expected_seq)
    if extra:
        body = resp.get_json()
        body.update(extra)
        return jsonify(body), status
    return resp, status


def _int_query(name: str, lo: int, hi: int, default=None) -> int | None:
    raw = request.args.get(name)
    if raw is None or raw == "":
        if default is None:
            return None
        return default
    try:
        n = int(raw)
    except ValueError:
        raise InputError("must be a whole number", name) from None
    if not lo <= n <= hi:
        raise InputError(f"must be between {lo} and {hi}", name)
    return n


# -- conquest-italy --------------------------------------------------------------------------------

CONQUEST = "conquest-italy"


def _conquest():
    from companion.games import conquest_italy

    return conquest_italy


@bp.get("/api/matches/<match_id>/conquest/map")
def conquest_map(match_id):
    """The match's map for the page: cities (region, card symbol, value, neighbours), regions with their
    bonus, airports, set values, and the SVG drawing."""
    from companion.games import conquest_map as cm

    m = _match(match_id, CONQUEST)
    doc = m["options"].get("map")
    gm = cm.map_of(doc)
    cities = [{"name": c, "region": gm.city[c]["region"], "card": gm.city[c]["card"], "value": gm.city[c]["value"],
               "land": sorted(gm.land[c]), "sea": sorted(gm.sea[c]), "airport": c in gm.airports}
              for c in gm.cities]
    svg = cm.map_svg(doc if doc is not None else cm.default_map_doc())
    return jsonify({"name": gm.name, "regions": gm.regions, "cities": cities, "airports": list(gm.airports),
                    "cards": list(gm.cards), "sets": {k: v for k, v in gm.sets.items() if v is not None},
                    "mixed_set": _conquest().MIXED_SET, "svg": svg})


@bp.post("/api/matches/<match_id>/conquest/deal")
@require("player")
def conquest_deal(match_id):
    """The Pi shuffles the territory cards, deals them (last player first) and fixes the majority rule
    with swaps, as the rule book describes; stores ``setup.deal``."""
    ci = _conquest()
    m = _match(match_id, CONQUEST)
    doc = _body()
    f = _fresh_fold(match_id, doc["expected_seq"])
    state = f.game_state
    if state["phase"] != "deal":
        raise RuleError("the cities have been dealt already (undo the deal to deal again)", "$")
    owner, swaps = _engine(ci.deal, m["players"], ci.map_of(state["map"]), _rng())
    return _store(match_id, "setup.deal", {"owner": owner}, doc["expected_seq"], {"swaps": swaps})


@bp.post("/api/matches/<match_id>/conquest/combat")
@require("player")
def conquest_combat(match_id):
    """One roll of a combat: ``data`` = ``{from, to, dice?, move?}`` (the Pi rolls both sides) or with
    ``attack_dice``/``defend_dice`` as rolled at the table. Stores ``combat`` with the dice."""
    ci = _conquest()
    _match(match_id, CONQUEST)
    doc = _body()
    f = _fresh_fold(match_id, doc["expected_seq"])
    data = _engine(ci.fill_dice, f.game_state, doc["data"], _rng())
    return _store(match_id, "combat", data, doc["expected_seq"])


@bp.get("/api/matches/<match_id>/conquest/odds")
def conquest_odds(match_id):
    """The exact odds of going on with the attack from ``from`` to ``to`` with the units on the map (or
    ``attacker``/``defender`` units given), stopping at ``stop_at`` units (default 1)."""
    from companion.games import conquest_odds as co

    ci = _conquest()
    _match(match_id, CONQUEST)
    state = ctx().service.fold(match_id).game_state
    gm = ci.map_of(state["map"])
    src, dst = request.args.get("from"), request.args.get("to")
    a = _int_query("attacker", 1, co.MAX_UNITS)
    d = _int_query("defender", 1, co.MAX_UNITS)
    if src is not None or dst is not None:
        for name, city in (("from", src), ("to", dst)):
            if city not in gm.city:
                raise InputError(f"unknown city {city!r}", name)
            if city not in state["units"]:
                raise RuleError("the cities have not been dealt yet", name)
        a = state["units"][src] if a is None else a
        d = state["units"][dst] if d is None else d
    if a is None or d is None:
        raise InputError("give from and to (cities), or attacker and defender (units)", "from")
    stop_at = _int_query("stop_at", 1, co.MAX_UNITS, 1)
    try:
        b = co.battle(a, d, stop_at)
    except co.DiceError as exc:
        raise InputError(exc.message, exc.field) from None
    outcomes = sorted(b["outcomes"], key=lambda o: -o["p"])[:8]
    return jsonify({"attacker": a, "defender": d, "stop_at": stop_at, "p_conquer": b["p_conquer"],
                    "expected_attacker_remaining": b["expected_attacker_remaining"],
                    "expected_defender_remaining": b["expected_defender_remaining"],
                    "attack_dice": co.max_attack_dice(a), "defend_dice": co.defend_dice_count(d),
                    "likely_outcomes": outcomes,
                    "via": gm.can_attack(src, dst) if src is not None and dst is not None else None})


@bp.get("/api/matches/<match_id>/conquest/reinforcements")
def conquest_reinforcements(match_id):
    """The reinforcement calculator: what ``player`` receives now, with the cards ``trade`` (three
    ``trade`` parameters) if given. Cards the player hasn't recorded are refused."""
    ci = _conquest()
    m = _match(match_id, CONQUEST)
    state = ctx().service.fold(match_id).game_state
    gm = ci.map_of(state["map"])
    player = request.args.get("player")
    if player not in m["players"]:
        raise InputError(f"unknown player {player!r}", "player")
    trade = request.args.getlist("trade") or None
    if trade is not None:
        ci.check_cards(gm, trade, "trade")
        for n, c in enumerate(trade):
            if c not in state["hands"][player]:
                raise RuleError(f"{player} does not have the card {c!r}", f"trade[{n}]")
    out = ci.reinforcements(gm, ci.held(state, player), ci.units_on_map(state, player), trade)
    return jsonify({"player": player, "hand": list(state["hands"][player]), **out})


def _conquests_this_turn(f, player: str) -> int:
    """Territories ``player`` conquered in the turn in progress (the game keeps the count)."""
    return _conquest().conquests_this_turn(f.game_state, player)


@bp.post("/api/matches/<match_id>/conquest/turn-end")
@require("player")
def conquest_turn_end(match_id):
    """End the turn of ``data.player``; ``conquered`` (needed in the final rounds) is the game's count of
    the turn's conquests unless given, and the turn's card (one after a conquest) is drawn by the Pi
    unless ``data.card`` records the card drawn at the table."""
    _match(match_id, CONQUEST)
    doc = _body()
    f = _fresh_fold(match_id, doc["expected_seq"])
    player = doc["data"].get("player")
    if not isinstance(player, str) or player not in f.players:
        raise InputError(f"unknown player {player!r}", "$.data.player")
    data = _engine(_conquest().fill_turn_end, f.game_state, doc["data"], _rng())
    return _store(match_id, "turn.end", data, doc["expected_seq"])


@bp.get("/api/matches/<match_id>/conquest/objective")
def conquest_objective(match_id):
    """The secret objective of the player this phone belongs to (its seat), with its progress. Nobody
    else's: a phone without a seat gets 403."""
    ci = _conquest()
    _match(match_id, CONQUEST)
    seat = seat_for(match_id)
    if seat is None:
        raise ForbiddenError("this phone belongs to no player of the match: choose your seat first", "seat")
    state = ctx().service.fold(match_id).game_state
    view = ci.public_view(state, seat)
    mine = state["objectives"].get(seat)
    return jsonify({"player": seat, "objective": list(mine) if mine is not None else None,
                    "progress": view.get("objective_progress")})


@bp.get("/api/matches/<match_id>/conquest/ranking")
def conquest_ranking(match_id):
    """The final ranking (objective points, then other points; shared places) once the match has ended,
    whatever ended it (objective, final roll, eliminations). Before the end only an organiser may see it:
    it would reveal the secret objectives."""
    ci = _conquest()
    _match(match_id, CONQUEST)
    f = ctx().service.fold(match_id)
    if not f.ended() and role() != "organiser":
        raise RuleError("the ranking is shown when the match ends (it would reveal the secret objectives)", "$")
    return jsonify({"ended": f.ended(), **ci.final_score(f.game_state)})


# -- rome-is-burning ----------------------------------------------------------------------------------

ROME = "rome-is-burning"


def _rome():
    from companion.games import rome_is_burning

    return rome_is_burning


@bp.get("/api/games/rome-is-burning/catalogue")
def rome_catalogue():
    """The 40 cards of the rule book with their type letters, and what the letters mean."""
    r = _rome()
    return jsonify({"cards": [{"name": n, "types": t} for n, t in r.CATALOGUE], "type_names": r.TYPE_NAMES,
                    "plebeian": {"extra": r.PLEBEIAN_EXTRA, "squares": list(r.PLEBEIAN_SQUARES)},
                    "emperor": {"extra": r.EMPEROR_EXTRA, "squares": list(r.EMPEROR_SQUARES)},
                    "ring": r.RING, "palace": r.PALACE, "turns": r.TURNS})


@bp.post("/api/matches/<match_id>/rome/deal")
@require("player")
def rome_deal(match_id):
    """The Pi shuffles the 40 cards and deals 2 to each of players + 1 free spaces; stores ``turn.setup``
    (``data.first``: who moves first this turn, optional)."""
    r = _rome()
    _match(match_id, ROME)
    doc = _body()
    f = _fresh_fold(match_id, doc["expected_seq"])
    first = doc["data"].get("first")
    if first is not None and first not in f.players:
        raise InputError(f"unknown player {first!r}", "$.data.first")
    if f.game_state["phase"] != "setup":
        raise RuleError(f"turn {f.game_state['turn']} is already dealt", "$")
    data = r.deal(f.game_state, _rng(), first)
    return _store(match_id, "turn.setup", data, doc["expected_seq"])


@bp.post("/api/matches/<match_id>/rome/move")
@require("player")
def rome_move(match_id):
    """The Pi rolls 1d6 for ``data.player`` moving ``data.direction`` (cw or ccw); stores ``move``. A move the
    rules refuse now is refused before anything is rolled."""
    r = _rome()
    _match(match_id, ROME)
    doc = _body()
    f = _fresh_fold(match_id, doc["expected_seq"])
    data = doc["data"]
    player = data.get("player")
    if not isinstance(player, str) or player not in f.players:
        raise InputError(f"unknown player {player!r}", "$.data.player")
    move = _engine(r.move_data, f.game_state, player, data.get("direction"), _rng())
    return _store(match_id, "move", move, doc["expected_seq"])


@bp.get("/api/matches/<match_id>/rome/scores")
def rome_scores(match_id):
    """This turn's scores of the hands as they stand, with their breakdown (cards, A/B extras, squares) and
    who would be elected; during an election, the scoring that is waiting for the old emperor's choice."""
    r = _rome()
    _match(match_id, ROME)
    state = ctx().service.fold(match_id).game_state
    if state["phase"] == "election":
        return jsonify({"turn": state["turn"], "phase": state["phase"], **state["scoring"]})
    result = r.turn_scores(state["emperor"], state["hands"])
    return jsonify({"turn": state["turn"], "phase": state["phase"], **result})


# -- richelieu ------------------------------------------------------------------------------------------

RICHELIEU = "richelieu"


@bp.post("/api/matches/<match_id>/richelieu/preview")
def richelieu_preview(match_id):
    """What resolving an intrigue with these two cards would do (``data`` as in ``intrigue.resolve``), with
    the match's players, Cardinal and neutral colour. Nothing is stored."""
    from companion.games import richelieu as rl

    _match(match_id, RICHELIEU)
    doc = _body(write=False)
    f = ctx().service.fold(match_id)
    if f.ended():
        raise RuleError("the match has ended", "$")
    before = f.game_state
    after = _engine(rl.apply, before, {"type": "intrigue.resolve", "data": doc["data"]})
    changes = {}
    for name in before["order"]:
        b, a = before["players"][name], after["players"][name]
        delta = {k: a[k] - b[k] for k in ("prestige", "income", "military", "money") if a[k] != b[k]}
        cards = {k: a["cards"][k] - b["cards"][k] for k in a["cards"] if a["cards"][k] != b["cards"][k]}
        if cards:
            delta["sheets"] = cards
        if delta:
            changes[name] = delta
    return jsonify({"result": after["resolutions"][-1], "changes": changes,
                    "cardinal": {"before": before["cardinal"], "after": after["cardinal"]},
                    "ends_match": after["ended"]})


# -- web-of-power -----------------------------------------------------------------------------------------

WOP = "web-of-power"


@bp.get("/api/matches/<match_id>/wop/board")
def wop_board(match_id):
    """The match's board for the page: countries in scoring order, their sites and capacity, whether the
    roads are known, the alliances, and the SVG drawing (``site_order``: the site ids in the order the
    SVG draws their circles, so the page can colour them by holder)."""
    from companion.games import wop_board as wb

    m = _match(match_id, WOP)
    doc = m["options"].get("board") or wb.default_board_doc()
    board = ctx().service.fold(match_id).game_state["board"]
    site_order = [s if isinstance(s, str) else s["id"] for c in doc["countries"] for s in c["sites"]]
    return jsonify({"name": board["name"], "status": board["status"], "complete": board["complete"],
                    "countries": board["countries"], "sites": board["sites"], "capacity": board["capacity"],
                    "roads_known": board["roads"] is not None, "alliances": board["alliances"],
                    "site_order": site_order, "svg": wb.map_svg(doc)})


# -- OpenAPI ---------------------------------------------------------------------------------------------

def _openapi() -> dict:
    mid = {"name": "match_id", "in": "path", "required": True, "schema": {"type": "string", "minLength": 1,
                                                                          "maxLength": 64}}
    ok = {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}}
    stored = {"description": "stored: the match document with the new event",
              "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Match"}}}}
    err = {"description": "error {error, field}", "content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/Error"}}}}
    body = {"required": True, "content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/api.tracker-action"}}}}
    sec = [{"bearer": []}, {"session": []}]

    def write(summary):
        return {"post": {"summary": summary, "parameters": [mid], "security": sec, "requestBody": body,
                         "responses": {"201": stored, **{c: err for c in ("400", "401", "403", "404", "409")}}}}

    def read(summary, params=()):
        q = [{"name": n, "in": "query", "schema": s} for n, s in params]
        return {"get": {"summary": summary, "parameters": [mid, *q],
                        "responses": {"200": ok, **{c: err for c in ("400", "401", "403", "404", "409")}}}}

    city = {"type": "string"}
    units = {"type": "integer", "minimum": 1, "maximum": 125}
    return {
        "/api/matches/{match_id}/conquest/map": read("The conquest match's map (cities, regions, SVG)"),
        "/api/matches/{match_id}/conquest/deal": write("The Pi deals the territory cards (setup.deal)"),
        "/api/matches/{match_id}/conquest/combat": write("A combat roll, dice rolled by the Pi when not given"),
        "/api/matches/{match_id}/conquest/turn-end": write("End a turn; its conquests counted and its card drawn by the server"),
        "/api/matches/{match_id}/conquest/odds": read("Exact odds of going on with an attack",
                                                      [("from", city), ("to", city), ("attacker", units),
                                                       ("defender", units), ("stop_at", units)]),
        "/api/matches/{match_id}/conquest/reinforcements": read(
            "Reinforcement calculator", [("player", {"type": "string"}),
                                         ("trade", {"type": "array", "items": {"type": "string"}})]),
        "/api/matches/{match_id}/conquest/objective": read("This phone's own secret objective and progress"),
        "/api/matches/{match_id}/conquest/ranking": read("Final ranking (after the end)"),
        "/api/games/rome-is-burning/catalogue": {"get": {"summary": "Rome Is Burning card catalogue",
                                                         "responses": {"200": ok}}},
        "/api/matches/{match_id}/rome/deal": write("The Pi deals a Rome turn (turn.setup)"),
        "/api/matches/{match_id}/rome/move": write("The Pi rolls 1d6 for a Rome move"),
        "/api/matches/{match_id}/rome/scores": read("This turn's Rome scores with their breakdown"),
        "/api/matches/{match_id}/wop/board": read("The Web of Power match's board (countries, sites, SVG)"),
        "/api/matches/{match_id}/richelieu/preview": {"post": {
            "summary": "Preview an intrigue resolution (nothing stored)", "parameters": [mid], "requestBody": body,
            "responses": {"200": ok, **{c: err for c in ("400", "401", "403", "404", "409")}}}},
    }


OPENAPI_PATHS = _openapi()
