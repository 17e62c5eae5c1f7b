"""What every blueprint shares: the app's context (store, service, hub, runner, GPIO box),
the caller's role, JSON bodies validated against ``schemas/api.*``, and how a match is shown
to a given caller (games with secrets hide them through ``public_view``/``public_event``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import wraps

from flask import current_app, g, request

from companion.base.errors import AuthError, ForbiddenError, InputError
from companion.games import game_module
from companion.base.jsonio import MAX_DEPTH, depth_exceeds
from companion.services.access import ROLES, Access, role_at_least


@dataclass
class Ctx:
    store: object
    service: object
    access: Access
    hub: object
    runner: object = None
    box: object = None
    extra: dict = field(default_factory=dict)


def ctx() -> Ctx:
    return current_app.extensions["companion"]


# -- roles -------------------------------------------------------------------
def role() -> str:
    return getattr(g, "role", "viewer")


def require(needed: str):
    """Decorator: the caller must hold at least ``needed`` (player or organiser)."""
    assert needed in ROLES

    def deco(fn):
        @wraps(fn)
        def wrapper(*a, **kw):
            if not role_at_least(role(), needed):
                if role() == "viewer":
                    raise AuthError("this needs the {needed:w@role} role: join with a table's QR code or sign in", "Authorization", needed=needed)
                raise ForbiddenError("this needs the {needed:w@role} role", "Authorization", needed=needed)
            return fn(*a, **kw)

        return wrapper

    return deco


def seat_for(match_id: str) -> str | None:
    sess = getattr(g, "session", None)
    if not sess or sess.get("match_id") not in (None, match_id):
        return None
    return (sess["data"].get("seats") or {}).get(match_id)


def viewing(match_id: str) -> tuple[str, str | None]:
    """Whom a match is shown to: the caller's role and seat, or, with ``?as=viewer`` (the TV page, which a
    whole room sees), a viewer's whatever the caller may see."""
    if request.args.get("as") == "viewer":
        return "viewer", None
    return role(), seat_for(match_id)


# -- bodies ------------------------------------------------------------------
class _NotJsonNumber(ValueError):
    pass


def _not_a_json_number(name: str):
    raise _NotJsonNumber(name)  # NaN, Infinity, -Infinity: Python's json reads them, JSON has none


def json_body(schema: str | None = None, optional: bool = False):
    """The request body as JSON, validated against ``schemas/<schema>.schema.json``.
    Errors name the JSON path (``$.players[2]``)."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        if optional:
            doc = {}
        else:
            raise InputError("a JSON body is required", "$")
    else:
        try:
            text = raw.decode("utf-8")
            doc = json.loads(text, parse_constant=_not_a_json_number)
            json.dumps(doc, ensure_ascii=False).encode("utf-8")  # lone surrogates
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
        if depth_exceeds(doc):
            raise InputError("the body is nested too deeply to be a document (more than {MAX_DEPTH} levels)", "$", MAX_DEPTH=MAX_DEPTH)
    if schema:
        from companion.base.schemas import validate

        validate(schema, doc)
    return doc


# the largest event seq a query may name (``?after=``, ``Last-Event-ID``): JSON's largest exact whole number
SEQ_MAX = 2**53


def int_arg(name: str, default: int | None, lo: int, hi: int) -> int | None:
    """A whole-number query parameter from ``lo`` to ``hi`` (``default`` when missing or empty). The OpenAPI
    document gives it ``minimum: lo, maximum: hi`` (tests/web/test_openapi_query_numbers.py checks them)."""
    value = request.args.get(name)
    if value is None or value == "":
        return default
    try:
        n = int(value)
    except ValueError:
        raise InputError("must be a whole number", name) from None
    if not lo <= n <= hi:
        raise InputError("must be between {lo} and {hi}", name, lo=lo, hi=hi)
    return n


# -- how a match is shown ---------------------------------------------------------
def present_view(view: dict, who: str, seat: str | None) -> dict:
    """Organisers see everything; others see the game's ``public_view(state, viewer)`` when it has one, and
    its ``public_summary(summary, state, viewer)`` (a summary that would tell a secret) when it has one."""
    if who == "organiser":
        return view
    mod = game_module(view["game"])
    pv = getattr(mod, "public_view", None)
    if pv is None:
        return view
    out = {**view, "state": pv(view["state"], seat)}
    ps = getattr(mod, "public_summary", None)
    if ps is not None and isinstance(view.get("summary"), dict):
        out["summary"] = ps(view["summary"], view["state"], seat)
    return out


# Games with ``public_view`` but no ``public_event``: the data of these event types is secret
# (a game may say otherwise with a module-level ``SECRET_EVENT_TYPES``).
DEFAULT_SECRET_EVENT_TYPES = frozenset({"objective.set"})


def present_event(event: dict, game: str, who: str, seat: str | None, ended: bool = False) -> dict:
    """Organisers see every event; others see the game's ``public_event(event, viewer)`` when it has
    one (``None`` from it hides the event's data). A game with ``public_view`` and no ``public_event``
    hides the data of its ``SECRET_EVENT_TYPES`` from everyone but the event's own player until the
    match ends."""
    if who == "organiser" or ended:
        return event  # the end of the match turns every secret face up
    mod = game_module(game)
    pe = getattr(mod, "public_event", None)
    if pe is not None:
        shown = pe(event, seat)
    elif getattr(mod, "public_view", None) is not None:
        secret = getattr(mod, "SECRET_EVENT_TYPES", DEFAULT_SECRET_EVENT_TYPES)
        data = event.get("data") or {}
        if event["type"] in secret and (seat is None or data.get("player") != seat):
            shown = None
        else:
            shown = event
    else:
        shown = event
    if shown is None:
        data = event.get("data") or {}
        kept = {"player": data["player"]} if isinstance(data.get("player"), str) else {}
        return {"seq": event["seq"], "type": event["type"], "at": event["at"], "data": kept, "hidden": True}
    return shown


# -- CSV downloads ------------------------------------------------------------------------------------
CSV_DIALECTS = ("excel-it", "excel-en", "plain")
# the OpenAPI parameter of every CSV download
CSV_DIALECT_PARAM = {"name": "dialect", "in": "query", "description": "excel-it (\";\", \"1,5\", a UTF-8 BOM), "
                     "excel-en (\",\", \"1.5\", the BOM) or plain (no BOM); default: by the page's language",
                     "schema": {"enum": list(CSV_DIALECTS)}}


def csv_dialect():
    """The CSV a caller gets (``?dialect=``): ``excel-it`` (";", "1,5", a UTF-8 BOM: what an Italian
    spreadsheet opens right), ``excel-en`` (",", "1.5", the BOM) or ``plain`` (no BOM: scripts). Without it,
    the page's language chooses: Italian gets ``excel-it``, others ``excel-en``."""
    from companion.core import season

    asked = request.args.get("dialect")
    if asked is not None and asked not in CSV_DIALECTS:
        raise InputError("must be one of {names}", "dialect", names=", ".join(CSV_DIALECTS))
    if asked is None:
        asked = "excel-it" if g.get("lang") == "it" else "excel-en"
    return season.DIALECTS[asked]


def download(text: str, name: str, ext: str, mimetype: str = "text/csv"):
    """A download named after what it holds (a tournament's or a season's name): an ASCII ``filename`` for
    every browser and the name as it is in ``filename*`` (RFC 6266)."""
    import unicodedata
    from urllib.parse import quote

    from flask import Response

    base = " ".join(str(name).split())[:80] or "export"
    ascii_name = unicodedata.normalize("NFKD", base).encode("ascii", "ignore").decode()
    ascii_name = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in ascii_name).strip("-.") or "export"
    while "--" in ascii_name:
        ascii_name = ascii_name.replace("--", "-")
    full = "".join(ch for ch in base if ch.isprintable() and ch not in '\\/"') or ascii_name
    disposition = f'attachment; filename="{ascii_name}.{ext}"; filename*=UTF-8\'\'{quote(full + "." + ext)}'
    mime = f"{mimetype}; charset=utf-8" if mimetype.startswith("text/") else mimetype
    return Response(text, content_type=mime, headers={"Content-Disposition": disposition})


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
