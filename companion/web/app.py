"""The Flask app factory: ``create_app(config, runtime=None)``.

It takes the box's runtime (``companion/runtime.py``: the store, the services, the clock runner, the
announcer, the GPIO box; opened from ``config`` when not given), builds the live-update hub, registers the
blueprints of ``BLUEPRINTS``, and installs what every request goes through:

1. the Host allow-list (localhost, this machine's LAN addresses and host names, ``ALLOWED_HOSTS``),
2. who is calling: ``Authorization: Bearer`` token, else the session cookie, else a viewer,
3. on every write (POST/PUT/PATCH/DELETE): the Origin check (or Referer when a browser sends no
   Origin; scripts with a bearer token may send neither),
4. viewers refused everywhere but the sign-in pages when the club turned viewers off,

and turns every error into JSON ``{"error", "field"?}`` (HTML for pages): bad input is a 4xx naming the
field; a bug is a 500 ``{"error": "internal error", "id"}`` with the traceback logged under that id.

Config keys of the web (all optional): ``ALLOWED_HOSTS``; ``SSE_HEARTBEAT`` (seconds); ``BLUEPRINTS``;
``TESTING``. Without a runtime, the keys of ``Runtime.from_config`` too: ``STORE`` (an open Store) or
``DATA_DIR``/``DB_PATH``; ``CLOCK``; ``RNG``; ``CLOCK_RUNNER`` ("auto", None or a runner); ``GPIO`` (None,
or auto|mock|off); ``DICE`` (the smart dice radio: auto|mock|off, default off); ``BOX_TIME``; ``SETUP_CODE`` (first-run code for setting the PIN; random when missing); ``PUBLIC_URL``
(the base of join links). This module starts nothing and imports neither the CLI nor the GPIO box, the
clock runner or the announcer (``tests/test_layers.py``).
"""

from __future__ import annotations

import importlib
import logging
import sqlite3
import uuid
from typing import TYPE_CHECKING

from flask import Flask, g, jsonify, render_template, request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Rule as WerkzeugRule

from companion import __version__
from companion.base.errors import AuthError, CompanionError, ForbiddenError
from companion.services.access import role_in
from companion.web import i18n, shares
from companion.web.core import Ctx
from companion.web.netinfo import HostList
from companion.web.limits import MAX_BODY, body_limit

if TYPE_CHECKING:
    from companion.runtime import Runtime

log = logging.getLogger(__name__)

BLUEPRINTS = [
    "companion.web.api",
    "companion.web.auth",
    "companion.web.boards",
    "companion.web.dice",
    "companion.web.live",
    "companion.web.openapi",
    "companion.web.pages",
    "companion.web.players",
    "companion.web.playlog",
    "companion.web.replication",
    "companion.web.seasons",
    "companion.web.tournaments",
    "companion.web.seats",
    "companion.web.trackers.conquest",
    "companion.web.trackers.richelieu",
    "companion.web.trackers.rome",
    "companion.web.trackers.wop",
    "companion.web.tv",
    "companion.web.wifi",
]

SESSION_COOKIE = "companion_sid"
LANG_COOKIE = "lang"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# What a viewer may still reach when the club turned viewers off.
OPEN_ENDPOINTS = {"static", "api.healthz", "openapi.openapi", "auth.login", "auth.logout", "auth.set_pin",
                  "auth.me", "auth.join_link", "auth.join_landing", "pages.login", "pages.join_page",
                  "players.me_landing", "wifi.android_probe", "wifi.apple_probe", "wifi.windows_probe",
                  "wifi.windows_redirect"}
# the phones' connectivity checks (companion/web/wifi.py): answered whatever the Host, since they come with
# the phone maker's host name (the box's own Wi-Fi sends it to the box); fixed bodies, no state
PROBE_PATHS = frozenset({"/generate_204", "/gen_204", "/hotspot-detect.html", "/library/test/success.html",
                         "/connecttest.txt", "/ncsi.txt", "/redirect"})


class _Rule(WerkzeugRule):
    """A URL rule whose URL builders (what ``url_for`` runs) are compiled at its first ``url_for``, not when
    the rule is registered: werkzeug compiles two Python functions per rule, a fifth of the server's start
    for ~125 rules, and most rules are never built into a URL (matching requests needs none of it)."""

    def _compile_builder(self, append_unknown: bool = True):
        built: list = []

        def build(rule, *args, **kwargs):
            if not built:
                built.append(WerkzeugRule._compile_builder(rule, append_unknown).__get__(rule, None))
            return built[0](*args, **kwargs)

        return build


class _Flask(Flask):
    url_rule_class = _Rule


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


def create_app(config: dict | None = None, runtime: Runtime | None = None) -> Flask:
    """The Flask app over ``runtime`` (``companion/runtime.py``: the store, the services, the clock runner,
    the GPIO box), or over a runtime opened from ``config`` when none is given (the tests' way: nothing is
    started, and nothing stops it but the caller). Wires Flask, the blueprints and the live-update hub;
    starts nothing."""
    from companion.base.resources import web_dir
    from companion.web.live import Hub

    config = dict(config or {})
    if runtime is None:
        from companion.runtime import Runtime

        runtime = Runtime.from_config(config)
    wd = web_dir()
    app = _Flask("companion.web", template_folder=str(wd / "templates"), static_folder=str(wd / "static"),
                 static_url_path="/static")
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_BODY,
        JSON_SORT_KEYS=False,
        SEND_FILE_MAX_AGE_DEFAULT=300,
        TEMPLATES_AUTO_RELOAD=False,
    )
    app.json.sort_keys = False
    app.config.update({k: v for k, v in config.items() if k.isupper()})
    app.config["SETUP_CODE"] = runtime.setup_code

    hub = Hub()
    c = Ctx(runtime=runtime, hub=hub, hosts=HostList(config.get("ALLOWED_HOSTS")),
            sse_heartbeat=float(config.get("SSE_HEARTBEAT", 10)))
    app.extensions["companion"] = c
    runtime.subscribe(lambda notice: hub.on_notice(c, notice))  # events, matches, clock, smart dice

    for modname in config.get("BLUEPRINTS", BLUEPRINTS):
        app.register_blueprint(importlib.import_module(modname).bp)

    _install_hooks(app, c)
    return app


def _wants_json() -> bool:
    p = request.path
    return p.startswith("/api/") or p == "/healthz" or p == "/api" or \
        request.accept_mimetypes.best == "application/json"


# what every response carries unless its view set its own
_SECURITY_HEADERS = tuple((k, k.lower(), v) for k, v in (
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
    ("X-Frame-Options", "DENY"),
    ("Content-Security-Policy",
     "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; "
     "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
))


def _install_hooks(app: Flask, c: Ctx) -> None:
    @app.before_request
    def gatekeeper():
        g.role, g.via, g.session = "viewer", None, None
        lang_arg = request.args.get("lang")
        g.set_lang = lang_arg if lang_arg in i18n.LANGUAGES else None
        g.lang = i18n.choose(g.set_lang or request.cookies.get(LANG_COOKIE),
                             request.headers.get("Accept-Language"))
        if not c.hosts.allowed(request.host) and not (
                request.path in PROBE_PATHS and request.method in ("GET", "HEAD")):
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
            _check_origin()
        if g.role == "viewer" and g.session is None and request.endpoint not in OPEN_ENDPOINTS \
                and not c.access.settings()["viewers_allowed"]:
            raise AuthError("this club shows matches to players only: join with a table's QR code", "Authorization")

    def _check_origin():
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

    @app.after_request
    def headers(resp):
        if g.get("set_lang"):
            resp.set_cookie(LANG_COOKIE, g.set_lang, max_age=365 * 24 * 3600, samesite="Lax", path="/")
        if g.get("drop_cookie") and not g.get("session_set"):
            resp.delete_cookie(SESSION_COOKIE, path="/")
        have = {k.lower() for k in resp.headers.keys()}  # one pass (each setdefault scanned them all again)
        for key, lower, value in _SECURITY_HEADERS:
            if lower not in have:
                resp.headers.add(key, value)
        if "cache-control" not in have and request.path.startswith("/api/"):
            resp.headers.add("Cache-Control", "no-store")
        return resp

    def _words(template: str, params: dict | None = None) -> str:
        """An error's sentence in the caller's language (the ``lang`` cookie or Accept-Language)."""
        return i18n.error_text(g.get("lang", i18n.DEFAULT), template, params)

    def _page_error(status: int, message: str, field: str | None = None, headline: str | None = None):
        try:
            return render_template("error.html", status=status, message=message, field=field,
                                   headline=headline), status
        except Exception:  # the error page itself must not fail
            return f"{status}: {message}", status, {"Content-Type": "text/plain; charset=utf-8"}

    @app.errorhandler(CompanionError)
    def companion_error(exc: CompanionError):
        headers = {}
        if exc.status == 401:
            headers["WWW-Authenticate"] = 'Bearer realm="companion"'
        if getattr(exc, "retry_after", None):
            headers["Retry-After"] = str(exc.retry_after)
        status = getattr(exc, "http_status", None) or exc.status
        message = _words(exc.template, exc.params)  # the sentence in the caller's language
        if _wants_json():
            return jsonify({**exc.to_json(), "error": message}), status, headers
        body, st = _page_error(status, message, exc.field)
        return body, st, headers

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        status = exc.code or 400
        if status >= 500:
            status = 400
        headers = [(k, v) for k, v in exc.get_headers() if k.lower() != "content-type"]
        message = _words(HTTP_SENTENCES.get(status, (exc.description or exc.name or "bad request").split("\n")[0]))
        body = {"error": message}
        if status == 405:
            body["field"] = "method"
        if _wants_json():
            return jsonify(body), status, headers
        page, st = _page_error(status, message)
        return page, st, headers

    @app.errorhandler(Exception)
    def unexpected(exc: Exception):
        """A bug is never dressed as the caller's mistake: 500 with an id that names the traceback in the
        log (503 when the box's storage is full or failed)."""
        from companion.storage import is_disk_full

        error_id = uuid.uuid4().hex[:12]
        # the route's pattern, not the path: a path may carry a secret (the join token of /j/<token>)
        rule = request.url_rule.rule if request.url_rule is not None else "(no route)"
        log.error("internal error %s on %s %s", error_id, request.method, rule, exc_info=exc)
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
        message = SERVER_SENTENCES[code]
        message = _words(message)
        if _wants_json():  # phones show the words of error.<code> in their language
            body = {"error": message, "id": error_id}
            if code:
                body["code"] = code
            return jsonify(body), status
        return _page_error(status, f"{message} ({error_id})", headline=f"error.{code}" if code else None)

    def _wifi_code():
        from companion.web.wifi import wifi_code

        return wifi_code()

    @app.context_processor
    def template_globals():
        lang = g.get("lang", i18n.DEFAULT)
        box_status = None
        if c.box is not None:
            try:
                box_status = c.box.status()
            except Exception:
                box_status = None
        return {
            "t": lambda key, **kw: i18n.translate(lang, key, **kw),
            # a counted string and a number in the page's language ("1 turno", "-1,5"): every page has them
            "plural": lambda key, n, **kw: i18n.plural(lang, key, n, **kw),
            "num": lambda x, digits=None: i18n.number(lang, x, digits),
            "lang": lang,
            "languages": i18n.LANGUAGES,
            "catalogue": i18n.catalogue(lang),
            "role": g.get("role", "viewer"),
            "version": __version__,
            "gpio_status": box_status,
            "pin_set": c.access.pin_is_set(),
            "heartbeat": c.sse_heartbeat,  # the live pages' watchdog waits 3 heartbeats
            "wifi_code": _wifi_code,  # the box's own Wi-Fi's QR code (first of the two), while it is on
        }
