"""What the game trackers (``web/static/games/<game>.js``) need from the server beyond the generic match
API, one blueprint per game: dice and deals made with the server's RNG, numbers computed by the engines
(battle odds, reinforcements, intrigue previews), and the reference data a page shows (the conquest map,
the Rome card catalogue, the Web of Power board).

The routes only collect and show; every rule and number comes from ``companion/games/``. Writes take
``{"expected_seq", "data"}`` (``schemas/api.tracker-action.schema.json``) and go through the match service's
``act`` (the game module's ``ACTIONS``): a stale write gets 409 with the field ``expected_seq`` before
anything is rolled; the service completes ``data`` (rolls, deals, counts) and stores exactly one event,
so undo, live updates and the clock work as for ``POST /api/matches/<id>/events``.

The RNG is ``app.config["TRACKER_RNG"]`` when set (tests pass a seeded ``random.Random``), else the
server's ``RNG`` (``COMPANION_TEST_SEED``, ``companion/cli/serve.py``), else the OS's secure source.
"""

from __future__ import annotations

from companion.base.errors import CompanionError, ConflictError, InputError, NotFoundError
from companion.core.match import event_path
from companion.web import apidoc
from companion.web.core import caller, ctx, json_body, rng


def game_match(match_id: str, game: str) -> dict:
    m = ctx().store.get_match(match_id)
    if m["game"] != game:
        raise NotFoundError("this is a {game} match, not {game2}", "match_id", game=m['game'], game2=game)
    return m


def body(write: bool = True) -> dict:
    doc = json_body("api.tracker-action")
    if write and "expected_seq" not in doc:
        raise InputError("required: the last seq this phone saw (a stale write is refused)", "$.expected_seq")
    return doc


def act(match_id: str, game: str, action: str):
    """A write of the game's tracker: the service's ``act`` with the request's ``data`` and ``expected_seq``;
    answers 201 with the match document, the event and what the action tells beside it."""
    from companion.web.api import stored

    game_match(match_id, game)
    doc = body()
    extra: dict = {}

    def write():
        event, more = ctx().service.act(match_id, action, doc["data"], expected_seq=doc["expected_seq"], rng=rng(),
                                        by=caller(match_id))
        extra.update(more)
        return event

    resp, status = stored(match_id, write)
    if extra:
        out = resp.get_json()
        out.update(extra)
        from flask import jsonify

        return jsonify(out), status
    return resp, status


def engine(fn, *args, **kw):
    """Call an engine function with event data: its errors name the field inside ``data``."""
    try:
        return fn(*args, **kw)
    except ConflictError:
        raise
    except CompanionError as exc:
        if exc.field and exc.field.startswith("$"):
            raise
        raise exc.again(field=event_path("$", exc.field)) from None


# -- OpenAPI pieces ----------------------------------------------------------------------------------------
MATCH_ID = apidoc.path_param("match_id")
_OK = apidoc.any_json()
_STORED = apidoc.ok("Match", "stored: the match document with the new event")
_BODY = apidoc.body("api.tracker-action")
_SEC = apidoc.SECURITY
_ERRORS = apidoc.err(400, 401, 403, 404, 409)


def openapi_write(summary: str) -> dict:
    return {"post": {"summary": summary, "parameters": [MATCH_ID], "security": _SEC, "requestBody": _BODY,
                     "responses": {"201": _STORED, **_ERRORS}}}


def openapi_read(summary: str, params=()) -> dict:
    q = [{"name": n, "in": "query", "schema": s} for n, s in params]
    return {"get": {"summary": summary, "parameters": [MATCH_ID, *q],
                    "responses": {"200": _OK, **_ERRORS}}}


def openapi_post_read(summary: str) -> dict:
    """A POST that computes and stores nothing (a preview)."""
    return {"post": {"summary": summary, "parameters": [MATCH_ID], "requestBody": _BODY,
                     "responses": {"200": _OK, **_ERRORS}}}


def openapi_static(summary: str) -> dict:
    return {"get": {"summary": summary, "responses": {"200": _OK}}}
