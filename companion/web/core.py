"""What every blueprint shares: the app's context (``ctx()``: ``companion/web/context.py``'s ``Ctx``),
the caller's role, JSON bodies validated against ``schemas/api.*``, and how a match is shown
to a given caller (games with secrets hide them through ``public_view``/``public_event``)."""

from __future__ import annotations

import random
from functools import wraps

from flask import current_app, g, request

from companion.base.errors import InputError
from companion.services.access import ROLES
from companion.services.policy import Caller
from companion.web.calls import Call, caller_of, check_role, parse_json_body, seat_of
from companion.web.calls import brief, match_card, present_event, present_view  # noqa: F401 (the views' names)
from companion.web.context import Ctx


def ctx() -> Ctx:
    return current_app.extensions["companion"]


# -- roles -------------------------------------------------------------------
def role() -> str:
    return getattr(g, "role", "viewer")


def here() -> Call:
    """This Flask request as the shared views see it (``companion/web/calls.py``): the request and ``g``
    themselves, not Flask's proxies (each read through one looks the context up again)."""
    return Call(ctx(), request._get_current_object(), g._get_current_object())


def require(needed: str):
    """Decorator: the caller must hold at least ``needed`` (player or organiser)."""
    assert needed in ROLES

    def deco(fn):
        @wraps(fn)
        def wrapper(*a, **kw):
            check_role(role(), needed)
            return fn(*a, **kw)

        return wrapper

    return deco


def seat_for(match_id: str) -> str | None:
    return seat_of(getattr(g, "session", None), match_id)


def viewing(match_id: str) -> tuple[str, str | None]:
    """Whom a match is shown to: the caller's role and seat, or, with ``?as=viewer`` (the TV page, which a
    whole room sees), a viewer's whatever the caller may see (``Call.viewing``)."""
    return here().viewing(match_id)


def json_body(schema: str | None = None, optional: bool = False):
    """The request body as JSON, validated against ``schemas/<schema>.schema.json``.
    Errors name the JSON path (``$.players[2]``): ``calls.parse_json_body``."""
    return parse_json_body(request.get_data(cache=True), schema, optional)


from companion.web.streams import SEQ_MAX  # noqa: E402,F401 (the largest seq a query may name)


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


# -- who calls (the rules: companion/services/policy.py) ----------------
def caller(match_id: str) -> Caller:
    """The caller of this request as the match service's policy knows callers (``calls.caller_of``)."""
    return caller_of(ctx(), role(), getattr(g, "session", None), match_id)


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
