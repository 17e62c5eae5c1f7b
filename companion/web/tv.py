"""The TVs' sound, switched from another device: ``PUT /api/tv/sound`` (every TV of the club) and
``PUT /api/matches/<id>/tv/sound`` (the TV of one table), organiser only; ``GET`` of either reads it.

A TV page (``/m/<id>/display``) follows it live over its match stream: ``event: tv-sound`` with
``{"club_off"?, "match_off"?}`` when either changes, and both in the stream's head (so a TV that reconnects
or switches on later knows them). The TV mutes when either is off and sounds again when both are on; its own
♪ button keeps working in between (the last word wins). Kept in the settings table: ``tv.sound_off`` (the
club's, a boolean) and ``tv.sound_off_matches`` (the ids of the open matches whose TV is silenced)."""

from __future__ import annotations

from flask import Blueprint, jsonify

from companion.web.core import ctx, json_body, require
from companion.web.apidoc import SECURITY, body, err as _err, ok as _ok, path_param
from companion.web.streams import TV_CLUB_KEY, TV_MATCHES_KEY, muted_matches, sound_state  # noqa: F401

bp = Blueprint("tv", __name__)

# (kept without Flask: a stream's head tells a TV its sound, companion/web/streams.py)
CLUB_KEY, MATCHES_KEY = TV_CLUB_KEY, TV_MATCHES_KEY
_muted_matches = muted_matches


@bp.get("/api/tv/sound")
def get_club_sound():
    store = ctx().store
    return jsonify({"off": sound_state(store)["club_off"], "muted_matches": _muted_matches(store)})


@bp.put("/api/tv/sound")
@require("organiser")
def set_club_sound():
    doc = json_body("api.tv-sound")
    c = ctx()
    c.store.set_setting(CLUB_KEY, doc["off"])
    c.hub.publish_every("tv-sound", {"club_off": doc["off"]})
    return jsonify({"off": doc["off"], "muted_matches": _muted_matches(c.store)})


@bp.get("/api/matches/<match_id>/tv/sound")
def get_match_sound(match_id):
    store = ctx().store
    store.get_match(match_id)  # 404
    s = sound_state(store, match_id)
    return jsonify({"match_id": match_id, "off": s["club_off"] or s["match_off"], **s})


@bp.put("/api/matches/<match_id>/tv/sound")
@require("organiser")
def set_match_sound(match_id):
    doc = json_body("api.tv-sound")
    c = ctx()
    c.store.get_match(match_id)  # 404
    with c.store.write():
        ids = [m for m in _muted_matches(c.store) if m != match_id and _open(c.store, m)]
        if doc["off"]:
            ids.append(match_id)
        c.store.set_setting(MATCHES_KEY, ids)
    c.hub.publish(match_id, "tv-sound", {"match_off": doc["off"]})
    s = sound_state(c.store, match_id)
    return jsonify({"match_id": match_id, "off": s["club_off"] or s["match_off"], **s})


def _open(store, match_id: str) -> bool:
    """Still worth remembering: the match exists and has not ended (the list does not grow for ever)."""
    from companion.base.errors import NotFoundError

    try:
        return store.get_match(match_id)["status"] != "ended"
    except NotFoundError:
        return False


_BODY, _SEC, _MID = body("api.tv-sound"), SECURITY, path_param("match_id")
OPENAPI_SCHEMAS = {
    "TvSoundClub": {"type": "object", "required": ["off", "muted_matches"],
                    "properties": {"off": {"type": "boolean"},
                                   "muted_matches": {"type": "array", "items": {"type": "string"}}}},
    "TvSoundMatch": {"type": "object", "required": ["match_id", "off", "club_off", "match_off"],
                     "properties": {"match_id": {"type": "string"}, "off": {"type": "boolean"},
                                    "club_off": {"type": "boolean"}, "match_off": {"type": "boolean"}}},
}
OPENAPI_PATHS = {
    "/api/tv/sound": {
        "get": {"summary": "Whether every TV's sound is off (club-wide) and which tables' TVs are silenced",
                "responses": {"200": _ok("TvSoundClub"), **_err(401)}},
        "put": {"summary": "Switch every TV's sound off or on from any device (organiser); the TVs follow live",
                "security": _SEC, "requestBody": _BODY,
                "responses": {"200": _ok("TvSoundClub"), **_err(400, 401, 403)}}},
    "/api/matches/{match_id}/tv/sound": {
        "get": {"summary": "Whether this table's TV is silenced (its own or club-wide)", "parameters": [_MID],
                "responses": {"200": _ok("TvSoundMatch"), **_err(401, 404)}},
        "put": {"summary": "Switch one table's TV sound off or on from any device (organiser)", "security": _SEC,
                "parameters": [_MID], "requestBody": _BODY,
                "responses": {"200": _ok("TvSoundMatch"), **_err(400, 401, 403, 404)}}},
}
