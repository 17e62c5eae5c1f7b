"""A request as the views see it, without Flask: ``Call(c, request, g)``, the caller's role and seat, the
body as JSON validated against ``schemas/api.*``, and a match shown to that caller (games with secrets hide
them through ``policy.view_for``/``policy.event_for``).

The Flask views reach these through ``companion/web/core.py`` (``request`` and ``g`` being Flask's), and the
live streams' views (``companion/web/streams.py``) through the same ``Call``.
"""

from __future__ import annotations

import json

from companion.base.errors import AuthError, ForbiddenError, InputError
from companion.base.jsonio import MAX_DEPTH, depth_exceeds
from companion.games import game_module
from companion.services import policy
from companion.services.access import ROLES, role_at_least
from companion.services.policy import Caller


class Call:
    """One request: the app's context ``c`` (``core.Ctx``), the request (werkzeug's, or the ASGI front's
    with the same attributes) and ``g``, where the gate (``gate.admit``) put the caller's role, how it
    came (``via``) and its session."""

    __slots__ = ("c", "request", "g")

    def __init__(self, c, request, g):
        self.c, self.request, self.g = c, request, g

    @property
    def role(self) -> str:
        return getattr(self.g, "role", "viewer")

    @property
    def session(self) -> dict | None:
        return getattr(self.g, "session", None)

    def require(self, needed: str) -> None:
        check_role(self.role, needed)

    def seat(self, match_id: str) -> str | None:
        return seat_of(self.session, match_id)

    def viewing(self, match_id: str) -> tuple[str, str | None]:
        """Whom a match is shown to: the caller's role and seat, or, with ``?as=viewer`` (the TV page, which a
        whole room sees), a viewer's whatever the caller may see."""
        if self.request.args.get("as") == "viewer":
            return "viewer", None
        return self.role, self.seat(match_id)

    def caller(self, match_id: str) -> Caller:
        return caller_of(self.c, self.role, self.session, match_id)

    def json_body(self, schema: str | None = None, optional: bool = False):
        return parse_json_body(self.request.get_data(cache=True), schema, optional)


def check_role(who: str, needed: str) -> None:
    """The caller (``who``) must hold at least ``needed`` (player or organiser)."""
    assert needed in ROLES
    if not role_at_least(who, needed):
        if who == "viewer":
            raise AuthError("this needs the {needed:w@role} role: join with a table's QR code or sign in", "Authorization", needed=needed)
        raise ForbiddenError("this needs the {needed:w@role} role", "Authorization", needed=needed)


def seat_of(session: dict | None, match_id: str) -> str | None:
    """The seat a session holds at a match (None: none, or a table's phone of another match)."""
    if not session or session.get("match_id") not in (None, match_id):
        return None
    return (session["data"].get("seats") or {}).get(match_id)


def caller_of(c, who: str, session: dict | None, match_id: str) -> Caller:
    """The caller as the match service's policy knows callers: its role, its seat and, when an organiser or
    the other seated phones confirmed the seat, when it sat (docs/rulings.md#seats); a phone's (its events
    keep who wrote them: docs/rulings.md#playing-for-another-seat)."""
    seat = seat_of(session, match_id)
    if who != "player" or seat is None:
        return Caller(who, seat, phone=True)
    mine = c.access.seat_confirmed(match_id, session["key"], seat)
    return Caller(who, seat, phone=True) if mine is None else Caller(who, seat, mine["bound_at"], phone=True)


# -- bodies ------------------------------------------------------------------
class _NotJsonNumber(ValueError):
    pass


def _not_a_json_number(name: str):
    raise _NotJsonNumber(name)  # NaN, Infinity, -Infinity: Python's json reads them, JSON has none


# what json.loads(text, parse_constant=...) makes for each call, made once (it keeps nothing between calls)
_DECODER = json.JSONDecoder(parse_constant=_not_a_json_number)
_SPACE = " \t\n\r"


def _decode(text: str):
    """``_DECODER.decode(text)``: a body without whitespace around it that is one JSON value is read by the
    scanner alone; anything else (and every error) by ``decode`` itself."""
    if text and text[0] not in _SPACE and text[-1] not in _SPACE:
        try:
            doc, end = _DECODER.scan_once(text, 0)
        except StopIteration:
            pass
        else:
            if end == len(text):
                return doc
    return _DECODER.decode(text)


def parse_json_body(raw: bytes, schema: str | None = None, optional: bool = False):
    """A request's body as JSON, validated against ``schemas/<schema>.schema.json``. Errors name the JSON
    path (``$.players[2]``)."""
    if not raw.strip():
        if optional:
            doc = {}
        else:
            raise InputError("a JSON body is required", "$")
    else:
        try:
            text = raw.decode("utf-8")
            if text.startswith("\ufeff"):  # (json.loads' own refusal, before it decodes)
                raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
            doc = _decode(text)
            if "\\u" in text:  # lone surrogates (only an escape makes one: the text itself is UTF-8)
                json.dumps(doc, ensure_ascii=False).encode("utf-8")
        except _NotJsonNumber as exc:
            raise InputError("the body is not valid JSON: {exc} is not a JSON number", "$", exc=exc) from None
        except RecursionError:
            raise InputError("the body is nested too deeply to be a document (more than {MAX_DEPTH} levels)",
                             "$", MAX_DEPTH=MAX_DEPTH) from None
        except (UnicodeError, ValueError) as exc:
            msg = getattr(exc, "msg", None)
            if msg is None and not isinstance(exc, UnicodeError):  # Python refuses ints of over 4300 digits
                from companion.base.jsonio import MAX_DIGITS, where_digits_overflow

                raise InputError("the body holds a number with more than {MAX_DIGITS} digits{value}", "$", MAX_DIGITS=MAX_DIGITS, value=where_digits_overflow(text)) from None
            raise InputError("the body is not valid JSON: {value}", "$", value=msg or 'not valid UTF-8 JSON') from None
        # (deeper than MAX_DEPTH takes more brackets than that: most bodies are not walked)
        if text.count("[") + text.count("{") > MAX_DEPTH and depth_exceeds(doc):
            raise InputError("the body is nested too deeply to be a document (more than {MAX_DEPTH} levels)", "$", MAX_DEPTH=MAX_DEPTH)
    if schema:
        from companion.base.schemas import validate

        validate(schema, doc)
    return doc


# -- how a match is shown to a caller (the rules: companion/services/policy.py) ----------------
def present_view(view: dict, who: str, seat: str | None) -> dict:
    """The view as ``who`` (seated as ``seat``) may see it (``policy.view_for``)."""
    return view if who == "organiser" else policy.view_for(game_module(view["game"]), view, Caller(who, seat))


def present_event(event: dict, game: str, who: str, seat: str | None, ended: bool = False) -> dict:
    """The event as ``who`` (seated as ``seat``) may see it (``policy.event_for``)."""
    if who == "organiser" or ended:
        return event
    return policy.event_for(game_module(game), event, Caller(who, seat), ended)


# -- how lists show a match ------------------------------------------------------------------------
def brief(view: dict) -> dict:
    """The few things a list or a tournament overview shows of a match's view."""
    out = {"seq": view.get("seq", 0)}
    for k in ("phase", "round", "current_player", "ended", "ended_by", "clock", "awaiting_roll", "final_threshold",
              "tracking", "result", "armed"):
        if k in view:
            out[k] = view[k]
    summary = view.get("summary")
    if isinstance(summary, dict) and "phase" in summary and "phase" in out:
        out["game_phase"] = summary["phase"]  # the game's own step beside the clock's (conquest: the deal)
    if isinstance(summary, dict):
        for k in ("scores", "ranking", "winner", "phase", "current_player", "round"):
            if k in summary and k not in out:
                out[k] = summary[k]
    return out


def match_card(c: Ctx, match: dict, who: str = "viewer", seat: str | None = None,
               with_view: bool = True) -> dict:
    """A match as the lists show it: the stored match, its label and colours, its last seq and,
    for open matches, a brief of its state (scores, phase, turn, clock)."""
    card = {**match, **c.store.meta(match["id"])}
    if with_view:
        view = c.service.state(match["id"])
        card["seq"] = view["seq"]
        card["brief"] = brief(present_view(view, who, seat))
    else:
        card["seq"] = c.store.last_seq(match["id"])
    return card
