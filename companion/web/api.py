"""The JSON API under ``/api``: matches, events, undo, export/import, tournament, health.

Every body is validated against ``schemas/api.*.schema.json`` (the OpenAPI document is built
from the same files). Errors are JSON ``{"error", "field"?}`` with a 4xx status.
"""

from __future__ import annotations

import logging

from flask import Blueprint, jsonify, request

from companion import __version__
from companion.base.errors import (CompanionError, ConflictError, ForbiddenError, InputError, NotFoundError,
                                   RuleError, join_path)
from companion.games import game_module, registry
from companion.core.match import event_path, uses_clock
from companion.base.schemas import json_path
from companion.services import policy
from companion.web.calls import present_view
from companion.web.core import (SEQ_MAX, caller, ctx, here, int_arg, json_body, match_card, present_event, require,
                                rng, role, seat_for, viewing)

log = logging.getLogger(__name__)
bp = Blueprint("api", __name__)


def match_doc(match_id: str) -> dict:
    """A match as this request's caller may see it: the stored match, its label and colours, its last seq, the
    caller's seat and the view."""
    call = here()
    c = call.c
    match = c.store.get_match(match_id)
    fold = c.service.fold(match_id)
    # (only the clock's view reads the time: a match without the clock is not stamped)
    view = fold.view(c.store.clock.now_iso() if fold.clock_on else None)
    who, seat = call.viewing(match_id)
    out = {**match, **c.store.meta(match_id), "seq": view["seq"], "seat": seat,
           "view": present_view(view, who, seat)}
    if c.runner is not None and fold.clock_on:  # (the match's options.clock, else its game's USES_CLOCK)
        out["power_lost"] = c.runner.power_lost(match_id)
    return out


_BUILD: list = []


def _build() -> str | None:
    """The commit a wheel made by systemd/build-wheel.sh was built from (None for a checkout): the image's
    offline update tells the new version's start from the old's by it. Looked up once per process: in a
    checkout the failed import searched every folder of ``sys.path`` again at every ``/healthz`` (a third of
    its CPU)."""
    if not _BUILD:
        try:
            from companion import build_info
        except ImportError:
            _BUILD.append(None)
        else:
            _BUILD.append(build_info.COMMIT)
    return _BUILD[0]


@bp.get("/healthz")
def healthz():
    c = ctx()
    return jsonify({"ok": True, "version": __version__, "build": _build(), "schema_version": c.store.schema_version(),
                    "streams": c.hub.count(), "clock_runner": c.runner is not None,
                    "gpio": c.runtime.panel_status()})


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


def season_and_roster(store, doc: dict) -> tuple[dict, dict]:
    """The match's club and season chosen at creation (kept in its options) and its seats' roster ids."""
    from companion.services import seasons

    options = dict(doc.get("options", {}))
    roster = doc.get("roster") or []
    if len(roster) > len(doc["players"]):
        raise InputError("has more entries than there are players", "$.roster")
    try:
        options.update(seasons.options_for_new_match(store, doc["game"], club=doc.get("club", options.get("club")),
                                                          season=doc.get("season", options.get("season"))))
    except NotFoundError as exc:  # a club or season the body names that does not exist: a bad body
        raise exc.under("$", InputError) from None
    except CompanionError as exc:
        raise exc.under("$") from None
    return options, {i: pid for i, pid in enumerate(roster) if pid}


@bp.post("/api/matches")
@require("player")
def create_match():
    c = ctx()
    doc = json_body("api.match-create")
    players = doc["players"]
    colours = doc.get("colours", {})
    for name in colours:
        if name not in players:
            raise InputError("{name!r} is not one of the players", json_path(["colours", name]), name=name)
    policy.check_options_size(doc.get("options"), organiser=role() == "organiser")
    options, roster = season_and_roster(c.store, doc)
    try:
        from companion.services.boards import match_options  # Web of Power: the board (and version) it starts on

        options = match_options(c.store, doc["game"], options)
        match = c.service.create(doc["game"], players, options, label=doc.get("label", ""),
                                 colours=colours, roster=roster)
    except CompanionError as exc:
        if exc.field in ("players", "game") or (exc.field or "").startswith("roster["):
            raise exc.under("$") from None
        if exc.field and exc.field.startswith("$"):
            raise
        raise exc.under("$.options") from None
    body = match_doc(match["id"])
    return jsonify(body), 201, {"Location": f"/api/matches/{match['id']}"}


@bp.get("/api/matches/<match_id>")
def get_match(match_id):
    return jsonify(match_doc(match_id))


def events_doc(match_id: str, after: int = 0) -> dict:
    """The match's events after ``after`` as this request's caller may see them (the match page writes the
    same document into itself)."""
    c = ctx()
    match = c.store.get_match(match_id)
    who, seat = viewing(match_id)
    ended = match["status"] == "ended"
    events = [present_event(e, match["game"], who, seat, ended) for e in c.store.events(match_id, after_seq=after)]
    return {"match_id": match_id, "events": events}


@bp.get("/api/matches/<match_id>/events")
def list_events(match_id):
    return jsonify(events_doc(match_id, int_arg("after", 0, 0, SEQ_MAX)))


def stored(match_id: str, write, extra: dict | None = None):
    """Run one write of the match service (``write() -> event``) and answer 201 with the match document and
    the stored event. The service names fields inside the event's ``data``; here they become JSON paths of
    the request (``$.data.player``, ``$.type``)."""
    call = here()
    try:
        event = write()
    except (ConflictError, NotFoundError):
        raise
    except (RuleError, InputError, ForbiddenError) as exc:
        if exc.field and exc.field.startswith("$"):
            raise
        raise exc.again(field=event_path("$", exc.field)) from None
    body = match_doc(match_id)
    body["event"] = present_event(event, body["game"], call.role, call.seat(match_id), body["status"] == "ended")
    if extra:
        body.update(extra)
    return jsonify(body), 201


@bp.post("/api/matches/<match_id>/events")
def append_event(match_id):
    """A player or the organiser records an event (201)."""
    call = here()
    call.require("player")
    doc = call.json_body("api.event-append")
    if doc["type"] == "undo":
        raise InputError("use POST /api/matches/<id>/undo to undo", "$.type")
    return stored(match_id, lambda: call.c.service.append(
        match_id, doc["type"], doc.get("data", {}), expected_seq=doc["expected_seq"], by=call.caller(match_id)))


@bp.post("/api/matches/<match_id>/undo")
def undo(match_id):
    """Take back the match's last event in effect (201)."""
    call = here()
    call.require("player")
    doc = call.json_body("api.undo")
    return stored(match_id, lambda: call.c.service.undo(match_id, expected_seq=doc["expected_seq"],
                                                        by=call.caller(match_id)))


@bp.post("/api/matches/<match_id>/redo")
def redo(match_id):
    """Take back the most recent undo (while it is the match's last event): its event again, same data (201).
    Re-recording another player's secret event is judged like recording it (companion/services/policy.py)."""
    call = here()
    call.require("player")
    doc = call.json_body("api.undo")
    return stored(match_id, lambda: call.c.service.redo(match_id, expected_seq=doc["expected_seq"],
                                                        by=call.caller(match_id)))


@bp.put("/api/matches/<match_id>/phones")
@require("organiser")
def set_phones(match_id):
    """The organiser sets who a player's phone records for (``schemas/api.match-phones``: ``any-seat``, the
    default, or ``own-seat``); the match's open pages hear it (``event: phones``)."""
    c = ctx()
    doc = json_body("api.match-phones")
    try:
        c.service.set_phones(match_id, doc["phones"])
    except InputError as exc:
        raise exc.again(field=join_path("$", exc.field)) from None
    if c.hub.listened(match_id):
        c.hub.publish(match_id, "phones", {"phones": policy.phones_rule(c.store.get_match(match_id)["options"])})
    return jsonify(match_doc(match_id))


@bp.post("/api/matches/<match_id>/result")
@require("player")
def enter_result(match_id):
    """The final places entered by hand: of a result-only match (``options.tracking = "result"``, anyone of
    the table), or of any open match as the organiser's correction (docs/rulings.md#the-organisers-result)."""
    doc = json_body("api.result")

    def write():
        try:
            return ctx().service.enter_result(match_id, doc["places"], expected_seq=doc["expected_seq"],
                                              by=caller(match_id))
        except (RuleError, InputError) as exc:  # the event's fields are the body's here ($.places[2].place)
            if exc.field and not exc.field.startswith("$") and exc.field != "expected_seq":
                raise exc.again(field=join_path("$", exc.field)) from None
            raise

    return stored(match_id, write)


@bp.post("/api/matches/<match_id>/final-roll")
@require("player")
def final_roll(match_id):
    """The server rolls the two final-round dice for the player who owes them (clock matches)."""
    c = ctx()
    doc = json_body("api.final-roll")
    match = c.store.get_match(match_id)
    if not uses_clock(match["game"], match["options"]):
        raise RuleError("this match does not use the clock", "$")
    dice = c.runner.rng if c.runner is not None else rng()

    def write():
        try:
            return c.service.final_roll(match_id, doc.get("player"), expected_seq=doc["expected_seq"], rng=dice,
                                        by=caller(match_id))
        except CompanionError as exc:  # the roll's player is the body's (its data is the service's)
            if exc.field == "player":
                raise exc.again(field="$.player") from None
            raise

    return stored(match_id, write)


@bp.get("/api/matches/<match_id>/export")
def export_match(match_id):
    c = ctx()
    match = c.store.get_match(match_id)
    if not policy.may_export(game_module(match["game"]), caller(match_id), match["status"] == "ended"):
        raise ForbiddenError("this game has secrets: only an organiser may export a match in play", "Authorization")
    doc = c.store.export_match(match_id)
    return jsonify(doc), 200, {"Content-Disposition": f'attachment; filename="match-{match_id}.json"'}


@bp.post("/api/matches/import")
@require("organiser")
def import_match():
    c = ctx()
    doc = json_body()
    match_id, _fold = c.service.import_match(doc)
    return jsonify({"imported": match_id, "events": len(doc["events"])}), 201, \
        {"Location": f"/api/matches/{match_id}"}


# -- tournament / clock -----------------------------------------------------------
@bp.get("/api/tournament")
def tournament():
    c = ctx()
    who = role()
    tables = [match_card(c, m, who, seat_for(m["id"])) for m in c.store.list_matches("open", 100)]
    out = {"tables": tables, "clock_runner": c.runner is not None}
    if c.runner is not None:
        out["overview"] = c.runner.overview()
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
            raise NotFoundError("no match {mid}", f"$.match_ids[{i}]", mid=mid) from None
        if m["status"] != "open":
            raise RuleError("the match has ended", f"$.match_ids[{i}]")
        if not uses_clock(m["game"], m["options"]):
            raise RuleError("this match does not use the clock", f"$.match_ids[{i}]")
    if c.runner is None:
        raise RuleError("the match clock runner is not running on this server", "$.match_ids")
    try:
        result = c.runner.start_tournament_round(ids)
    except CompanionError as exc:
        if exc.field and exc.field.startswith("$"):
            raise
        raise exc.under("$") from None
    return jsonify({"started": ids, "result": result if isinstance(result, (dict, list)) else None})


@bp.get("/api/hardware")
def hardware():
    c = ctx()
    return jsonify({"gpio": c.runtime.panel_status()})
