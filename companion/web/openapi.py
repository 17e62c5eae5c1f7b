"""``GET /api/openapi.json``: the OpenAPI 3.1 document of the API, built from ``schemas/``.

Request bodies are the very schemas the endpoints validate with (``schemas/api.*.schema.json``
and ``match-export``); responses are described here. Blueprints added later may contribute
paths through ``EXTRA_PATHS`` (a module-level dict ``OPENAPI_PATHS`` in the blueprint's module).
"""

from __future__ import annotations

import copy
import functools
import sys

from flask import Blueprint, current_app, jsonify

from companion import __version__
from companion.base.schemas import load_schema, schema_names, standalone
from companion.web import apidoc
from companion.web.core import SEQ_MAX

bp = Blueprint("openapi", __name__)

ERROR = {
    "type": "object", "required": ["error"],
    "properties": {"error": {"type": "string"}, "field": {"type": "string",
                                                          "description": "JSON path or name of the culprit"},
                   "code": {"type": "string", "description": "what kind of refusal, where a page words it its "
                            "own way (own_seat: the match is set to each phone plays its own seat)"}},
}
VIEW = {
    "type": "object", "required": ["game", "players", "seq", "state"],
    "description": "The fold of the match's events: the game's state, its summary (scores, breakdown) "
                   "and, for matches with a clock, phase/round/current_player/clock.",
    "properties": {"game": {"type": "string"}, "players": {"type": "array", "items": {"type": "string"}},
                   "seq": {"type": "integer"}, "state": {}, "summary": {}},
}
MATCH_CARD = {
    "type": "object", "required": ["id", "game", "players", "options", "created_at", "status", "label",
                                   "colours", "seq"],
    "properties": {
        "id": {"type": "string"}, "game": {"type": "string"},
        "players": {"type": "array", "items": {"type": "string"}}, "options": {"type": "object"},
        "created_at": {"type": "string"}, "status": {"enum": ["open", "ended"]}, "label": {"type": "string"},
        "colours": {"type": "object", "additionalProperties": {"type": "string"}}, "seq": {"type": "integer"},
        "brief": {"type": "object"}, "error": {"type": "string"},
    },
}
MATCH = copy.deepcopy(MATCH_CARD)
MATCH["required"] = MATCH["required"] + ["view"]
MATCH["properties"].update({"view": apidoc.ref("View"),
                            "seat": {"type": ["string", "null"]},
                            "power_lost": {"type": ["object", "null"]},
                            "event": apidoc.ref("Event")})
EVENT = {
    "type": "object", "required": ["seq", "type", "data", "at"],
    "properties": {"seq": {"type": "integer"}, "id": {"type": "string"}, "type": {"type": "string"},
                   "data": {"type": "object"}, "at": {"type": "string"}, "hidden": {"type": "boolean"},
                   "by": {"type": "object", "description": "who wrote it from a phone (absent: the box itself, or "
                          "an older log): role, the seat its phone held, and the seat it acts for when that is "
                          "another one (for)", "required": ["role"],
                          "properties": {"role": {"type": "string"}, "seat": {"type": "string"},
                                         "for": {"type": "string"}}}},
}
RESPONSES = {
    "Error": ERROR,
    "View": VIEW,
    "MatchCard": MATCH_CARD,
    "Match": MATCH,
    "Event": EVENT,
    "MatchList": {"type": "object", "required": ["matches"],
                  "properties": {"matches": {"type": "array", "items": apidoc.ref("MatchCard")}}},
    "EventList": {"type": "object", "required": ["match_id", "events"],
                  "properties": {"match_id": {"type": "string"},
                                 "events": {"type": "array", "items": apidoc.ref("Event")}}},
    "Imported": {"type": "object", "required": ["imported", "events"],
                 "properties": {"imported": {"type": "string"}, "events": {"type": "integer"}}},
    "Health": {"type": "object", "required": ["ok", "version"],
               "properties": {"ok": {"type": "boolean"}, "version": {"type": "string"}, "build": {"type": ["string", "null"]},
                              "schema_version": {"type": "integer"}, "streams": {"type": "integer"},
                              "clock_runner": {"type": "boolean"}, "gpio": apidoc.ref("GpioStatus")}},
    "Games": {"type": "object", "required": ["games"],
              "properties": {"games": {"type": "array", "items": {
                  "type": "object", "required": ["id", "name", "available", "event_types"],
                  "properties": {"id": {"type": "string"}, "name": {"type": "string"},
                                 "available": {"type": "boolean"},
                                 "event_types": {"type": "array", "items": {"type": "string"}},
                                 "clock_default": {"type": "boolean"},
                                 "min_players": {"type": "integer"}, "max_players": {"type": "integer"}}}}}},
    "Me": {"type": "object", "required": ["role", "pin_set"],
           "properties": {"role": {"enum": ["viewer", "player", "organiser"]},
                          "via": {"enum": ["session", "bearer", None]},
                          "pin_set": {"type": "boolean"}, "seats": {"type": "object"},
                          "match_id": {"type": ["string", "null"],
                                       "description": "a table's phone: the match it is a player of"},
                          "viewers_allowed": {"type": "boolean"}}},
    "Role": {"type": "object", "required": ["role"], "properties": {"role": {"type": "string"},
                                                                    "pin_set": {"type": "boolean"}}},
    "JoinLink": {"type": "object", "required": ["url", "expires_at"],
                 "properties": {"url": {"type": "string"}, "expires_at": {"type": "string"},
                                "match_id": {"type": ["string", "null"]}}},
    "JoinLinks": {"type": "object", "required": ["join_links"], "properties": {"join_links": {
        "type": "array", "items": {"type": "object", "required": ["id", "expires_at", "revoked", "sessions"],
                                   "properties": {"id": {"type": "string"}, "match_id": {"type": ["string", "null"]},
                                                  "created_at": {"type": "string"},
                                                  "expires_at": {"type": "string"}, "revoked": {"type": "boolean"},
                                                  "sessions": {"type": "integer"}}}}}},
    "LinkRevoked": {"type": "object", "required": ["revoked", "sessions_ended"],
                    "properties": {"revoked": {"type": "string"}, "sessions_ended": {"type": "integer"}}},
    "Sessions": {"type": "object", "required": ["sessions"], "properties": {"sessions": {
        "type": "array", "items": {"type": "object", "required": ["id", "role", "created_at", "expires_at"],
                                   "properties": {"id": {"type": "string"}, "role": {"type": "string"},
                                                  "created_at": {"type": "string"}, "expires_at": {"type": "string"},
                                                  "seats": {"type": "object"},
                                                  "join_link": {"type": ["string", "null"]},
                                                  "match_id": {"type": ["string", "null"]},
                                                  "device": {"type": ["string", "null"]},
                                                  "player": {"type": ["string", "null"]},
                                                  "current": {"type": "boolean"}}}}}},
    "SessionEnded": {"type": "object", "required": ["ended"], "properties": {"ended": {"type": "string"}}},
    "AccessSettings": {"type": "object", "required": ["viewers_allowed", "join_token_hours"],
                       "properties": {"viewers_allowed": {"type": "boolean"},
                                      "join_token_hours": {"type": "number"}}},
    "Tournament": {"type": "object", "required": ["tables", "clock_runner"],
                   "properties": {"tables": {"type": "array", "items": apidoc.ref("MatchCard")},
                                  "clock_runner": {"type": "boolean"}, "overview": {}}},
    "RoundStarted": {"type": "object", "required": ["started"],
                     "properties": {"started": {"type": "array", "items": {"type": "string"}}, "result": {}}},
    "Hardware": {"type": "object", "required": ["gpio"], "properties": {"gpio": apidoc.ref("GpioStatus")}},
    "GpioStatus": {"description": "The GPIO button panel: its status once attached (mode, requested, mock, pins_available, "
                                  "reason, match_id, leds, pins); {\"state\": \"starting\", \"requested\": mode} while "
                                  "the server, already answering, is still attaching it; null with --gpio off, or when "
                                  "the attach failed (said in the log)",
                   "type": ["object", "null"]},
}


_ref, _json, _body = apidoc.ref, apidoc.ok, apidoc.body
MATCH_ID = apidoc.path_param("match_id")
WRITE = ORG = apidoc.SECURITY  # a write: a bearer token or the session cookie (the role is the route's)
_STALE = {409: "stale expected_seq, or the rules refuse it now"}
_FAILED = {429: "too many failed attempts"}


def _errors(*codes):
    return apidoc.err(*codes, words={**_STALE, **_FAILED})


def _paths() -> dict:
    sse = {"description": "text/event-stream",
           "content": {"text/event-stream": {"schema": {"type": "string"}}}}
    too_many = _json("Error", "too many open live pages from this address (companion serve --max-streams-per-address)")
    return {
        "/healthz": {"get": {"summary": "Health", "responses": {"200": _json("Health")}}},
        "/api/openapi.json": {"get": {"summary": "This document", "responses": {"200": {
            "description": "OpenAPI 3.1", "content": {"application/json": {"schema": {"type": "object"}}}}}}},
        "/api/games": {"get": {"summary": "Known games", "responses": {"200": _json("Games")}}},
        "/api/matches": {
            "get": {"summary": "Recent matches (newest first)", "parameters": [
                {"name": "status", "in": "query", "schema": {"enum": ["open", "ended"]}},
                {"name": "limit", "in": "query", "allowEmptyValue": True,
                 "schema": {"type": "integer", "minimum": 1, "maximum": 500}}],
                "responses": {"200": _json("MatchList"), **_errors(400, 401)}},
            "post": {"summary": "Create a match (player)", "security": WRITE,
                     "requestBody": _body("api.match-create"),
                     "responses": {"201": _json("Match", "created"), **_errors(400, 401, 403, 409)}},
        },
        "/api/matches/import": {"post": {
            "summary": "Import an exported match (organiser)", "security": ORG,
            "requestBody": _body("match-export"),
            "responses": {"201": _json("Imported", "imported"), **_errors(400, 401, 403, 409)}}},
        "/api/matches/{match_id}": {"get": {
            "summary": "A match: its derived state and last seq", "parameters": [MATCH_ID],
            "responses": {"200": _json("Match"), **_errors(400, 401, 404)}}},
        "/api/matches/{match_id}/events": {
            "get": {"summary": "The match's events (after a seq)", "parameters": [
                MATCH_ID, {"name": "after", "in": "query", "schema": {"type": "integer", "minimum": 0,
                                                                       "maximum": SEQ_MAX}}],
                "responses": {"200": _json("EventList"), **_errors(400, 401, 404)}},
            "post": {"summary": "Record an event (player)", "parameters": [MATCH_ID], "security": WRITE,
                     "requestBody": _body("api.event-append"),
                     "responses": {"201": _json("Match", "stored: seq is the new event's"),
                                   **_errors(400, 401, 403, 404, 409)}},
        },
        "/api/matches/{match_id}/undo": {"post": {
            "summary": "Undo the latest event still in effect (player; dice the Pi rolled: organiser)", "parameters": [MATCH_ID],
            "security": WRITE, "requestBody": _body("api.undo"),
            "responses": {"201": _json("Match", "stored"), **_errors(400, 401, 403, 404, 409)}}},
        "/api/matches/{match_id}/redo": {"post": {
            "summary": "Redo the most recent undo while nothing was recorded after it (player)",
            "parameters": [MATCH_ID], "security": WRITE, "requestBody": _body("api.undo"),
            "responses": {"201": _json("Match", "stored"), **_errors(400, 401, 403, 404, 409)}}},
        "/api/matches/{match_id}/result": {"post": {
            "summary": "The final places entered by hand: of a result-only match (player), or of any open match "
                       "as the organiser's correction (organiser)",
            "parameters": [MATCH_ID], "security": WRITE, "requestBody": _body("api.result"),
            "responses": {"201": _json("Match", "stored"), **_errors(400, 401, 403, 404, 409)}}},
        "/api/matches/{match_id}/final-roll": {"post": {
            "summary": "The server rolls the final-round dice for the player who owes them (player)",
            "parameters": [MATCH_ID], "security": WRITE, "requestBody": _body("api.final-roll"),
            "responses": {"201": _json("Match", "stored"), **_errors(400, 401, 403, 404, 409)}}},
        "/api/matches/{match_id}/phones": {"put": {
            "summary": "Who a player's phone records for: any seat (the default, shown in the history) or its own "
                       "seat only (organiser)", "parameters": [MATCH_ID],
            "security": WRITE, "requestBody": _body("api.match-phones"),
            "responses": {"200": _json("Match"), **_errors(400, 401, 403, 404)}}},
        "/api/matches/{match_id}/seat": {"put": {
            "summary": "This browser belongs to a player of the match (player)", "parameters": [MATCH_ID],
            "security": WRITE, "requestBody": _body("api.seat"),
            "responses": {"200": _json("Match"), **_errors(400, 401, 403, 404)}}},
        "/api/matches/{match_id}/export": {"get": {
            "summary": "The match as one JSON document (schemas/match-export)", "parameters": [MATCH_ID],
            "responses": {"200": {"description": "the export", "content": {
                "application/json": {"schema": _ref("match-export")}}}, **_errors(400, 401, 403, 404)}}},
        "/api/matches/{match_id}/stream": {"get": {
            "summary": "Server-Sent Events: snapshot, every new event (id = seq) with the view whole or as a patch "
                       "of the previous event's (base, patch), clock ticks and alerts",
            "parameters": [MATCH_ID,
                           {"name": "Last-Event-ID", "in": "header",
                            "schema": {"type": "integer", "minimum": 0, "maximum": SEQ_MAX}},
                           {"name": "last_event_id", "in": "query",
                            "schema": {"type": "integer", "minimum": 0, "maximum": SEQ_MAX}}],
            "responses": {"200": sse, **_errors(400, 401, 404), "429": too_many}}},
        "/api/stream": {"get": {"summary": "Server-Sent Events for the whole club (matches, ticks, alerts)",
                                "responses": {"200": sse, **_errors(400, 401), "429": too_many}}},
        "/api/tournament": {"get": {"summary": "Open tables with their clocks",
                                    "responses": {"200": _json("Tournament"), **_errors(400, 401)}}},
        "/api/tournament/round": {"post": {
            "summary": "Start the clocks of several tables (organiser)", "security": ORG,
            "requestBody": _body("api.tournament-round"),
            "responses": {"200": _json("RoundStarted"), **_errors(400, 401, 403, 404, 409)}}},
        "/api/hardware": {"get": {"summary": "GPIO panel status", "responses": {"200": _json("Hardware"),
                                                                               **_errors(400, 401)}}},
        "/api/auth/me": {"get": {"summary": "Who am I", "responses": {"200": _json("Me")}}},
        "/api/auth/login": {"post": {
            "summary": "Organiser sign-in with the PIN (sets the session cookie)",
            "requestBody": _body("api.login"),
            "responses": {"200": _json("Role"), **_errors(400, 401, 403, 409, 429)}}},
        "/api/auth/pin": {"post": {
            "summary": "Set the PIN (first run, with the setup code) or change it (organiser)",
            "requestBody": _body("api.pin-set"),
            "responses": {"200": _json("Role"), **_errors(400, 401, 403, 429)}}},
        "/api/auth/logout": {"post": {"summary": "Sign out", "responses": {"200": _json("Role"),
                                                                             **_errors(400, 403)}}},
        "/api/auth/join": {"get": {"summary": "The current join link (organiser, or the Pi's own screen)",
                                   "responses": {"200": _json("JoinLink"), **_errors(400, 401)}}},
        "/api/auth/join-tokens": {
            "post": {"summary": "A new join link (organiser); revoke_others: the club's link ends the club's "
                                "other links and the sessions made from them (the tables' links stay), a "
                                "table's link ends that table's other links", "security": ORG,
                     "requestBody": _body("api.join-token-create", required=False),
                     "responses": {"201": _json("JoinLink", "created"), **_errors(400, 401, 403, 404)}},
            "get": {"summary": "Join links not yet expired, with their live sessions (organiser)", "security": ORG,
                    "responses": {"200": _json("JoinLinks"), **_errors(400, 401, 403)}}},
        "/api/auth/join-tokens/{link_id}": {"delete": {
            "summary": "End a join link and every session made from it (organiser)", "security": ORG,
            "parameters": [apidoc.path_param("link_id", schema={"type": "string"})],
            "responses": {"200": _json("LinkRevoked"), **_errors(400, 401, 403, 404)}}},
        "/api/auth/sessions": {"get": {
            "summary": "Live sessions of players and organisers (organiser)", "security": ORG,
            "responses": {"200": _json("Sessions"), **_errors(400, 401, 403)}}},
        "/api/auth/sessions/{session_id}": {"delete": {
            "summary": "End a session (organiser)", "security": ORG,
            "parameters": [apidoc.path_param("session_id", schema={"type": "string"})],
            "responses": {"200": _json("SessionEnded"), **_errors(400, 401, 403, 404)}}},
        "/api/auth/settings": {
            "get": {"summary": "Access settings (organiser)", "security": ORG,
                    "responses": {"200": _json("AccessSettings"), **_errors(400, 401, 403)}},
            "put": {"summary": "Change access settings (organiser)", "security": ORG,
                    "requestBody": _body("api.access-settings"),
                    "responses": {"200": _json("AccessSettings"), **_errors(400, 401, 403)}},
        },
    }


@functools.cache
def _request_schemas() -> dict:
    # standalone: a component's "#" is this document, so a schema's references are written in place
    return {n: standalone(load_schema(n)) for n in schema_names() if n.startswith("api.") or n == "match-export"}


def build(app=None) -> dict:
    paths = _paths()
    components = dict(_request_schemas())
    components.update(RESPONSES)
    # blueprints registered later (seasons ...) may describe themselves
    for name in list((app or current_app).blueprints):
        mod = sys.modules.get((app or current_app).blueprints[name].import_name)
        extra = getattr(mod, "OPENAPI_PATHS", None)
        if isinstance(extra, dict):
            for path, ops in extra.items():  # a path two modules serve (GET here, POST there) keeps both
                paths[path] = {**paths.get(path, {}), **ops}
        extra_schemas = getattr(mod, "OPENAPI_SCHEMAS", None)
        if isinstance(extra_schemas, dict):
            components.update(extra_schemas)
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {"title": "companion", "version": __version__,
                 "description": "Board-game companion on a Raspberry Pi: matches as event logs, live updates, "
                                "roles (viewer, player, organiser). Every 4xx body is {error, field?}. Writes from "
                                "a browser need the session cookie and this server's Origin; scripts use "
                                "Authorization: Bearer <token> from `companion token create`."},
        "servers": [{"url": "/"}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "session": {"type": "apiKey", "in": "cookie", "name": "companion_sid"},
            },
        },
    }


@bp.get("/api/openapi.json")
def openapi():
    return jsonify(build())
