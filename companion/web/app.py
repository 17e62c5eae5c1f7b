"""The Flask app factory: ``create_app(config)``.

It opens (or takes) the store, builds the MatchService, the live-update hub, the clock runner
and the GPIO box (when asked for), registers the blueprints of ``BLUEPRINTS``, and installs what
every request goes through:

1. the Host allow-list (localhost, this machine's LAN addresses and host names, ``ALLOWED_HOSTS``),
2. who is calling: ``Authorization: Bearer`` token, else the session cookie, else a viewer,
3. on every write (POST/PUT/PATCH/DELETE): the Origin check (or Referer when a browser sends no
   Origin; scripts with a bearer token may send neither),
4. viewers refused everywhere but the sign-in pages when the club turned viewers off,

and turns every error into JSON ``{"error", "field"?}`` (HTML for pages): bad input is a 4xx naming the
field; a bug is a 500 ``{"error": "internal error", "id"}`` with the traceback logged under that id.

Config keys (all optional): ``STORE`` (an open Store) or ``DATA_DIR``/``DB_PATH``; ``CLOCK`` (when the
factory opens the store; default MonotonicWallClock); ``ALLOWED_HOSTS``; ``PUBLIC_URL`` (the base
of join links); ``SSE_HEARTBEAT`` (seconds); ``CLOCK_RUNNER`` ("auto", None or an object);
``START_BACKGROUND`` (start the clock runner's thread); ``GPIO`` (None, or auto|mock|off);
``DICE`` (the smart dice radio: auto|mock|off, default off);
``SETUP_CODE`` (first-run code for setting the PIN; random when missing); ``RNG`` (the random source of
the match service, the clock runner and the trackers; default the OS's secure source); ``TESTING``.
"""

from __future__ import annotations

import importlib
import logging
import os
import secrets
import sqlite3
import threading
import time
import uuid

from flask import Flask, g, jsonify, render_template, request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Rule as WerkzeugRule

from companion import __version__
from companion.base.errors import AuthError, CompanionError, ForbiddenError
from companion.web import i18n, netinfo, shares
from companion.services.access import Access, role_in
from companion.web.core import Ctx
from companion.web.limits import MAX_BODY, body_limit

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


def _open_store(config):
    from companion.storage import Store
    from companion.base.timeutil import MonotonicWallClock, parse_iso

    if config.get("STORE") is not None:
        return config["STORE"], False
    clock = config.get("CLOCK") or MonotonicWallClock()
    path = config.get("DB_PATH")
    if path is None:
        from companion.cli import resolve_data_dir

        path = os.path.join(resolve_data_dir(config.get("DATA_DIR")), "companion.db")
    store = Store(path, clock=clock)
    if hasattr(clock, "not_before"):
        last = store.last_event_at()
        if last:
            clock.not_before(parse_iso(last))
    return store, True


class HostList:
    """localhost, this machine's addresses (re-read when an unknown host shows up: DHCP may
    give the Pi its address after start-up) and the configured names."""

    def __init__(self, extra):
        self.extra = {netinfo.host_name_of(h) for h in extra or () if h}
        self._known = netinfo.LOCAL_NAMES | self.extra
        self._read_at = 0.0
        self._lock = threading.Lock()

    def allowed(self, host_header: str) -> bool:
        name = netinfo.host_name_of(host_header)
        if not name:
            return False
        if name in self._known:
            return True
        with self._lock:
            if time.monotonic() - self._read_at > 5:
                self._known = netinfo.LOCAL_NAMES | self.extra | netinfo.local_addresses()
                self._read_at = time.monotonic()
            return name in self._known


def create_app(config: dict | None = None) -> Flask:
    from companion.services.clockrunner import ClockRunner
    from companion.base.resources import web_dir
    from companion.services.matches import MatchService
    from companion.web.live import Hub

    config = dict(config or {})
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

    store, owned = _open_store(config)
    service = config.get("SERVICE") or MatchService(store, rng=config.get("RNG"))
    access = Access(store)
    hub = Hub()
    c = Ctx(store=store, service=service, access=access, hub=hub)
    c.extra["owns_store"] = owned
    c.extra["sse_heartbeat"] = float(config.get("SSE_HEARTBEAT", 10))
    c.extra["public_url"] = config.get("PUBLIC_URL")
    c.extra["hosts"] = HostList(config.get("ALLOWED_HOSTS"))
    c.extra["setup_code"] = config.get("SETUP_CODE") or "".join(secrets.choice("0123456789") for _ in range(8))
    c.extra["join_lock"] = threading.Lock()
    app.config["SETUP_CODE"] = c.extra["setup_code"]
    app.extensions["companion"] = c

    service.subscribe(lambda match_id, event, fold: hub.on_event(c, match_id, event, fold))
    service.subscribe_matches(lambda match_id: hub.on_match(c, match_id))

    # the match clock runner (ticks, alerts, checkpoints, recovery after a power cut)
    runner = config.get("CLOCK_RUNNER", "auto")
    if runner == "auto":
        runner = ClockRunner(service, store, store.clock, rng=config.get("RNG"))
    if runner is not None:
        runner.subscribe(hub.on_clock)
        if config.get("START_BACKGROUND"):
            runner.start()
    c.runner = runner

    # the box's time from an organiser's phone when the system clock has no source (companion/boxtime.py)
    if hasattr(store.clock, "adopt") and config.get("BOX_TIME", True):
        from companion.services.boxtime import BoxTime

        kw = {k: config[v] for k, v in (("synchronised", "CLOCK_SYNCHRONISED"), ("boot", "BOOT_ID"),
                                          ("system_now", "SYSTEM_NOW")) if v in config}
        box_time = BoxTime(store, store.clock, runner, **kw)
        try:
            box_time.restore()
        except Exception:
            log.exception("could not take the box's adopted time again")
        c.extra["box_time"] = box_time

    # the spoken announcer on the box (espeak-ng), off unless COMPANION_ANNOUNCER=it|en (companion/announcer.py)
    from companion.announcer import ENV as ANNOUNCER_ENV, Announcer, lang_from

    announcer = config.get("ANNOUNCER")
    if announcer is None:
        try:
            announcer = Announcer(lang_from(os.environ.get(ANNOUNCER_ENV)))
        except ValueError as exc:
            log.warning("%s; the announcer is off", exc)
            announcer = Announcer(None)
    if announcer.enabled():
        service.subscribe(announcer.on_event)
        if runner is not None:
            runner.subscribe(announcer.on_clock)
    c.extra["announcer"] = announcer

    # GPIO buttons and LEDs, when asked for
    mode = config.get("GPIO")
    if mode and mode != "off":
        from companion import gpio

        c.box = gpio.attach(service, runner, mode)

    # the tables' smart dice (docs/dice.md): off unless asked for (companion serve --dice auto|mock)
    from companion import dice as dice_radio
    from companion.services.dice import DiceTables

    dice_mode = config.get("DICE") or "off"
    tables = DiceTables(service, store, dice_radio.attach(dice_mode), publish=hub.publish)
    if config.get("START_BACKGROUND") and dice_mode != "off":
        tables.start()
    c.extra["dice"] = tables

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
        if not c.extra["hosts"].allowed(request.host) and not (
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
            "heartbeat": c.extra["sse_heartbeat"],
            "wifi_code": _wifi_code,  # the box's own Wi-Fi's QR code (first of the two), while it is on  # the live pages' watchdog waits 3 heartbeats
        }
