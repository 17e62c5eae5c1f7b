"""What every request goes through: the Flask app's hooks (``companion/web/app.py``) call these functions
(the ASGI front hands every request to that app: ``companion/web/asgi.py``).

- ``admit(c, request, g)``: the gate. ``request`` is anything with the attributes of a werkzeug request that
  the gate reads (``method``, ``path``, ``host``, ``scheme``, ``remote_addr``, ``content_length``,
  ``endpoint``, ``view_args``, ``environ`` and ``args``/``cookies``/``headers`` with ``get``); ``g`` takes
  what it decides (``role``, ``via``, ``session``, ``lang``, ``set_lang``, ``drop_cookie``). In order: the
  caller's language, the Host allow-list, the body's size from its ``Content-Length`` (before anything reads
  it), who is calling (``Authorization: Bearer``, else the session cookie, else a viewer), the connection's
  trust, the write limits of a phone and of an address, the Origin of a write, viewers turned off.
- ``error_answer``: a ``CompanionError`` as JSON in the caller's language, its status and headers;
  ``failure_answer``: a bug as 500 (503 for storage that is full, failing or damaged) with an id, the
  traceback logged under that id.
- ``answer_headers`` and ``answer_cookies``: what every answer carries unless its view set its own (CSP and
  the other security headers, ``Cache-Control: no-store`` under ``/api/``), and the cookies the gate decided
  (the language chosen by ``?lang=``, a stale session cookie dropped).

It imports neither Flask nor Werkzeug: the ASGI front answers ``/healthz`` with it before Flask is loaded.
"""

from __future__ import annotations

import logging
import sqlite3
import uuid

from companion.base.errors import AuthError, CompanionError, ForbiddenError
from companion.services.access import role_in
from companion.web import i18n, shares
from companion.web.limits import body_limit

log = logging.getLogger("companion.web.app")  # (the log's name of these lines since they were Flask's hooks)

SESSION_COOKIE = "companion_sid"
LANG_COOKIE = "lang"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# What a viewer may still reach when the club turned viewers off.
OPEN_ENDPOINTS = {"static", "pages.catalogue_script", "api.healthz", "openapi.openapi", "auth.login", "auth.logout", "auth.set_pin",
                  "auth.me", "auth.join_link", "auth.join_landing", "pages.login", "pages.join_page",
                  "players.me_landing", "wifi.android_probe", "wifi.apple_probe", "wifi.windows_probe",
                  "wifi.windows_redirect", "wifi.firefox_probe"}
# the phones' connectivity checks (companion/web/wifi.py): answered whatever the Host, since they come with
# the phone maker's host name (the box's own Wi-Fi sends it to the box); fixed bodies, no state
PROBE_PATHS = frozenset({"/generate_204", "/gen_204", "/hotspot-detect.html", "/library/test/success.html",
                         "/connecttest.txt", "/ncsi.txt", "/redirect", "/canonical.html", "/success.txt"})

# what every response carries unless its view set its own: (name, its lower case, value)
SECURITY_HEADERS = tuple((k, k.lower(), v) for k, v in (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
    ("X-Frame-Options", "DENY"),
    ("Content-Security-Policy",
     "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; "
     "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
))

# sentences of errors that are not raised as a CompanionError (translated in web/i18n/errors.<lang>.json)
HTTP_SENTENCES = {404: "not found", 405: "method not allowed", 413: "the body is too large"}
SERVER_SENTENCES = {"storage_full": "the box's storage is full", "storage_failed": "the box's storage failed: try again",
                    "storage_damaged": "the box's database is damaged: the organiser restores it from a backup",
                    None: "internal error"}


class TooManyConnections(CompanionError):
    """A connection over the caps, taken on probation (companion/web/shares.py), whose request is not an
    organiser's."""

    status = 429
    retry_after = 5

    def __init__(self, over: str):
        if over == "address":
            super().__init__("too many connections from this address: close some pages and try again", "address")
        else:
            super().__init__("the box is serving as many connections as it can: try again in a moment", "address")


class TooManyWrites(CompanionError):
    """A phone (or an address) wrote faster than the box lets one phone write (services/access.py,
    WriteRates: docs/limits.md)."""

    status = 429

    def __init__(self, seconds: int, which: str):
        if which == "session":
            super().__init__("this phone is writing too fast: try again in {seconds} s", "session", seconds=seconds)
        else:
            super().__init__("too many writes from this address: try again in {seconds} s", "address",
                             seconds=seconds)
        self.retry_after = seconds


class BodyTooLarge(CompanionError):
    status = 413

    def __init__(self, limit: int):
        super().__init__("the body is too large: at most {kib} KiB here", "Content-Length", kib=limit // 1024)


def admit(c, request, g) -> None:
    """The gate of every request (see the module's docstring); raises the CompanionError that answers it."""
    g.role, g.via, g.session = "viewer", None, None
    lang_arg = request.args.get("lang")
    g.set_lang = lang_arg if lang_arg in i18n.LANGUAGES else None
    g.lang = i18n.choose(g.set_lang or request.cookies.get(LANG_COOKIE), request.headers.get("Accept-Language"))
    if not c.hosts.allowed(request.host) and not (request.path in PROBE_PATHS and request.method in ("GET", "HEAD")):
        raise ForbiddenError("this Host is not served here (DNS rebinding protection)", "Host")
    length = request.content_length  # refused before anything reads the body
    if length is not None and length > body_limit(request.endpoint):
        raise BodyTooLarge(body_limit(request.endpoint))
    auth = request.headers.get("Authorization")
    if auth is not None:
        scheme, _, token = auth.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthError("use Authorization: Bearer <token>", "Authorization")
        info = c.access.api_token(token.strip())
        if info is None:
            raise AuthError("unknown, expired or revoked token", "Authorization")
        g.role, g.via = info["role"], "bearer"
    else:
        sid = request.cookies.get(SESSION_COOKIE)
        sess = c.access.session(sid) if sid else None
        if sess is not None:  # a table's phone is a player of its match only (access.role_in)
            g.role, g.via, g.session = role_in(sess, (request.view_args or {}).get("match_id")), "session", sess
        elif sid:
            g.drop_cookie = True
    trust = shares.ORGANISER if g.role == "organiser" or (g.session is not None and g.session["role"] == "organiser") \
        else shares.PLAYER if g.via is not None else shares.UNKNOWN
    request.environ[shares.TRUST_KEY] = trust  # the server sheds connections without credentials first
    over = request.environ.get(shares.PROBATION_KEY)
    if over and trust < shares.ORGANISER:
        raise TooManyConnections(over)
    if request.method not in SAFE_METHODS:
        if trust < shares.ORGANISER and g.via != "bearer" and not shares.is_loopback(request.remote_addr or ""):
            keys = [("address", request.remote_addr or "?")]
            if g.session is not None:
                keys.insert(0, ("session", g.session["key"]))
            wait, which = c.access.write_rates.charge(keys, request.content_length or 0)
            if wait:
                raise TooManyWrites(wait, which)
        _check_origin(request, g)
    if g.role == "viewer" and g.session is None and request.endpoint not in OPEN_ENDPOINTS \
            and not c.access.settings()["viewers_allowed"]:
        raise AuthError("this club shows matches to players only: join with a table's QR code", "Authorization")


def _check_origin(request, g) -> None:
    own = f"{request.scheme}://{request.host}".lower()
    origin = request.headers.get("Origin")
    if origin is not None:
        if origin.strip().lower() != own:
            raise ForbiddenError("cross-site write refused: Origin does not match this server", "Origin")
        return
    if g.via == "bearer":
        return
    referer = (request.headers.get("Referer") or "").lower()
    if referer == own or referer.startswith(own + "/"):
        return
    raise ForbiddenError("a write from a browser must carry this server's Origin", "Origin")


def words(g, template: str, params: dict | None = None) -> str:
    """An error's sentence in the caller's language (the ``lang`` cookie or Accept-Language)."""
    return i18n.error_text(getattr(g, "lang", None) or i18n.DEFAULT, template, params)


def error_answer(exc: CompanionError, g) -> tuple[int, dict, dict]:
    """A CompanionError as its answer: the status, the JSON body (its sentence in the caller's language,
    the field it names) and the headers (``WWW-Authenticate`` for a 401, ``Retry-After`` when it has one)."""
    headers = {}
    if exc.status == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="companion"'
    if getattr(exc, "retry_after", None):
        headers["Retry-After"] = str(exc.retry_after)
    status = getattr(exc, "http_status", None) or exc.status
    return status, {**exc.to_json(), "error": words(g, exc.template, exc.params)}, headers


def failure_answer(exc: BaseException, c, g, method: str, rule: str | None) -> tuple[int, dict]:
    """A bug is never dressed as the caller's mistake: 500 with an id that names the traceback in the log
    (503 when the box's storage is full, failed or is damaged: ``code`` says which). ``rule``: the route's
    pattern, never the path (a path may carry a secret: the join token of /j/<token>)."""
    from companion.storage import is_disk_full

    error_id = uuid.uuid4().hex[:12]
    log.error("internal error %s on %s %s", error_id, method, rule or "(no route)", exc_info=exc)
    code = None
    if is_disk_full(exc):
        status, code = 503, "storage_full"
    elif isinstance(exc, sqlite3.DatabaseError) and any(w in str(exc).lower() for w in (
            "malformed", "not a database", "corrupt")):
        status, code = 503, "storage_damaged"  # a damaged page: the organiser restores from a backup
        log.error("the database %s is damaged: restore it from a backup or a replica (companion restore)",
                  c.store.path)
    elif isinstance(exc, (sqlite3.OperationalError, OSError)) and not isinstance(exc, UnicodeError):
        status, code = 503, "storage_failed"
    else:
        status = 500
    body = {"error": words(g, SERVER_SENTENCES[code]), "id": error_id}
    if code:
        body["code"] = code
    return status, body


def answer_headers(path: str, have: set[str]) -> list[tuple[str, str]]:
    """The headers an answer gets unless it has them (``have``: the names it has, in lower case)."""
    out = [(key, value) for key, lower, value in SECURITY_HEADERS if lower not in have]
    if "cache-control" not in have and path.startswith("/api/"):
        out.append(("Cache-Control", "no-store"))
    return out


def answer_cookies(g) -> list[dict]:
    """The cookies the gate decided, as keyword arguments of werkzeug's ``set_cookie``/``dump_cookie``: the
    language a ``?lang=`` chose, and a session cookie that names no session any more, dropped (unless this
    very answer set a new session)."""
    out = []
    if getattr(g, "set_lang", None):
        out.append({"key": LANG_COOKIE, "value": g.set_lang, "max_age": 365 * 24 * 3600, "samesite": "Lax",
                    "path": "/"})
    if getattr(g, "drop_cookie", False) and not getattr(g, "session_set", False):
        out.append({"key": SESSION_COOKIE, "value": "", "expires": 0, "max_age": 0, "path": "/"})
    return out
