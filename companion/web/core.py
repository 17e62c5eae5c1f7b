"""What every blueprint shares: the app's context (the runtime's store, service, runner, GPIO box; the hub),
the caller's role, JSON bodies validated against ``schemas/api.*``, and how a match is shown
to a given caller (games with secrets hide them through ``public_view``/``public_event``)."""

from __future__ import annotations

import json
import random
import threading
from dataclasses import dataclass, field
from functools import wraps
from typing import TYPE_CHECKING

from flask import current_app, g, request

from companion.base.errors import AuthError, ForbiddenError, InputError
from companion.games import game_module
from companion.base.jsonio import MAX_DEPTH, depth_exceeds
from companion.services import policy
from companion.services.access import ROLES, Access, role_at_least
from companion.services.policy import Caller

if TYPE_CHECKING:
    from companion.gpio import Box
    from companion.runtime import Runtime
    from companion.services.boxtime import BoxTime
    from companion.services.clockrunner import ClockRunner
    from companion.services.dice import DiceTables
    from companion.services.matches import MatchService
    from companion.storage import Store
    from companion.web.live import Hub
    from companion.web.netinfo import HostList


@dataclass(eq=False)
class Ctx:
    """The web app's context (``ctx()``): the box's runtime (store, services, clock runner, GPIO box:
    ``companion/runtime.py``) and what only the web keeps: the live-update hub, the Host allow-list, the
    SSE heartbeat and the join links the screens show now."""

    runtime: Runtime
    hub: Hub
    hosts: HostList
    sse_heartbeat: float = 10.0
    join_lock: threading.Lock = field(default_factory=threading.Lock)  # guards join and table_links
    join: dict | None = None  # the club-wide join link shown now ({"token", "expires_at", ...})
    table_links: dict[str, dict] = field(default_factory=dict)  # match id -> its table link shown now
    wifi_switch: dict | None = None  # the organiser's last switch of it: {"thread", "error"}
    wifi_switch_delay: float = 1.0  # seconds between the switch's answer and the switch (web/wifi.py SWITCH_DELAY_S; tests: 0)

    @property
    def store(self) -> Store:
        return self.runtime.store

    @property
    def service(self) -> MatchService:
        return self.runtime.service

    @property
    def access(self) -> Access:
        return self.runtime.access

    @property
    def runner(self) -> ClockRunner | None:
        return self.runtime.runner

    @property
    def box(self) -> Box | None:
        return self.runtime.box

    @property
    def dice(self) -> DiceTables | None:
        return self.runtime.dice

    @property
    def box_time(self) -> BoxTime | None:
        return self.runtime.box_time


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


# -- the random source of the requests: ``app.config["TRACKER_RNG"]`` (tests), else ``RNG``, else the OS's ----
_SYSTEM_RNG = random.SystemRandom()


def rng():
    return current_app.config.get("TRACKER_RNG") or current_app.config.get("RNG") or _SYSTEM_RNG


# -- who calls, and how a match is shown to them (the rules: companion/services/policy.py) ----------------
def caller(match_id: str) -> Caller:
    """The caller of this request as the match service's policy knows callers: its role, its seat and, when
    an organiser or the other seated phones confirmed the seat, when it sat (docs/rulings.md#seats)."""
    who, seat = role(), seat_for(match_id)
    if who != "player" or seat is None:
        return Caller(who, seat)
    c = ctx()
    seats = c.access.seats(match_id)
    mine = next((r for r in seats if r["key"] == g.session["key"] and r["player"] == seat), None)
    if mine is None or mine["role"] != "player" or \
            (c.access.seat_confirmations(match_id, seats).get(mine["key"]) or {}).get("by") is None:
        return Caller(who, seat)
    return Caller(who, seat, mine["bound_at"])


def present_view(view: dict, who: str, seat: str | None) -> dict:
    """The view as ``who`` (seated as ``seat``) may see it (``policy.view_for``)."""
    return view if who == "organiser" else policy.view_for(game_module(view["game"]), view, Caller(who, seat))


def present_event(event: dict, game: str, who: str, seat: str | None, ended: bool = False) -> dict:
    """The event as ``who`` (seated as ``seat``) may see it (``policy.event_for``)."""
    if who == "organiser" or ended:
        return event
    return policy.event_for(game_module(game), event, Caller(who, seat), ended)


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
