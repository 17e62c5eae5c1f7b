"""The Flask app factory: ``create_app(config, runtime=None)``.

It takes the box's runtime (``companion/runtime.py``: the store, the services, the clock runner, the
announcer, the GPIO panel; opened from ``config`` when not given), builds the live-update hub, registers the
blueprints of ``BLUEPRINTS``, and installs what every request goes through (``companion/web/gate.py``, the
same functions as the ASGI front's own routes):

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
(the base of join links). This module starts nothing and imports neither the CLI nor the GPIO panel, the
clock runner or the announcer (``tests/test_layers.py``).
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING

from flask import Flask, g, jsonify, render_template, request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Rule as WerkzeugRule

from companion import __version__
from companion.base.errors import CompanionError
from companion.web import assets, compress, gate, i18n
from companion.web.core import Ctx
from companion.web.limits import MAX_BODY

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

# (the gate's names, kept here for the modules that import them from the app)
SESSION_COOKIE, LANG_COOKIE, SAFE_METHODS = gate.SESSION_COOKIE, gate.LANG_COOKIE, gate.SAFE_METHODS
OPEN_ENDPOINTS, PROBE_PATHS = gate.OPEN_ENDPOINTS, gate.PROBE_PATHS
HTTP_SENTENCES, SERVER_SENTENCES = gate.HTTP_SENTENCES, gate.SERVER_SENTENCES
TooManyConnections, TooManyWrites, BodyTooLarge = gate.TooManyConnections, gate.TooManyWrites, gate.BodyTooLarge
_SECURITY_HEADERS = gate.SECURITY_HEADERS


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

    def send_static_file(self, filename: str):
        """A static file; kept a year by the browser when asked at its content's address (``web/assets.py``)."""
        from flask import request

        from companion.web import assets

        resp = super().send_static_file(filename)  # (a file that is not there raised 404: the names are finite)
        kept = assets.cache_control(filename, request.args.get("v"))
        packed = assets.gzipped(filename)
        if packed is not None:
            resp.vary.add("Accept-Encoding")
            if assets.accepts_gzip(request.headers.get("Accept-Encoding")) and request.range is None:
                # the text compressed once and kept: a quarter of the bytes over the Wi-Fi, no CPU per request
                from flask import Response

                body, digest = packed
                cache = resp.headers.get("Cache-Control")
                resp.close()
                resp = Response(body, mimetype=resp.mimetype)
                resp.headers["Content-Encoding"] = "gzip"
                resp.vary.add("Accept-Encoding")
                resp.set_etag(digest + ".gz")
                if cache:
                    resp.headers["Cache-Control"] = cache
                resp = resp.make_conditional(request)
        if kept:
            resp.headers["Cache-Control"] = kept
        return resp


def create_app(config: dict | None = None, runtime: Runtime | None = None, context: Ctx | None = None) -> Flask:
    """The Flask app over ``runtime`` (``companion/runtime.py``: the store, the services, the clock runner,
    the GPIO panel), or over a runtime opened from ``config`` when none is given (the tests' way: nothing is
    started, and nothing stops it but the caller). Wires Flask, the blueprints and the live-update hub
    (``context``: the web's context already built over that runtime, ``companion serve``'s); starts nothing."""
    from companion.base.resources import web_dir
    from companion.web.context import open_context

    config = dict(config or {})
    if context is not None:
        runtime = context.runtime
    elif runtime is None:
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
    if config.get("TEMPLATE_CACHE"):
        _keep_compiled_templates(app, config["TEMPLATE_CACHE"])
    app.config.update({k: v for k, v in config.items() if k.isupper()})
    app.config["SETUP_CODE"] = runtime.setup_code

    c = context if context is not None else open_context(config, runtime)  # (its hub hears the runtime)
    app.extensions["companion"] = c

    for modname in config.get("BLUEPRINTS", BLUEPRINTS):
        app.register_blueprint(importlib.import_module(modname).bp)

    _install_hooks(app, c)
    return app


def _keep_compiled_templates(app: Flask, folder: str) -> None:
    """The templates' compiled code kept in ``folder`` between starts (Jinja's bytecode cache, keyed by each
    template's source: an upgrade compiles anew): a Pi compiles a page's templates once, not at its first
    render after every start (0.3-0.8 s). A file that cannot be read back is compiled again; one that cannot be
    written (a full card) is not kept, and its page is served all the same."""
    import os

    from jinja2 import FileSystemBytecodeCache

    class Cache(FileSystemBytecodeCache):
        def load_bytecode(self, bucket):
            try:
                super().load_bytecode(bucket)
            except Exception:  # (a file cut short, say: Jinja reads its checksum unguarded)
                log.warning("compiled template %s unreadable: compiling it again", bucket.key)
                bucket.reset()

        def dump_bytecode(self, bucket):
            try:
                super().dump_bytecode(bucket)
            except OSError as exc:  # a full card, say: the page is served all the same, compiled in memory
                log.warning("compiled template %s not kept: %s", bucket.key, exc)

    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError as exc:
        log.warning("no cache of compiled templates in %s: %s", folder, exc)
        return
    app.jinja_options = {**app.jinja_options, "bytecode_cache": Cache(folder)}


def compile_templates(app: Flask) -> int:
    """Every template compiled now (``companion serve``: in the background, once the app is built), so that
    no page waits for its own; returns how many. One that fails is left to its page (which reports it)."""
    env = app.jinja_env
    done = 0
    for name in env.list_templates(extensions=["html"]):
        try:
            env.get_template(name)
            done += 1
        except Exception:
            log.exception("template %s did not compile", name)
    return done


def _wants_json() -> bool:
    p = request.path
    return p.startswith("/api/") or p == "/healthz" or p == "/api" or \
        request.accept_mimetypes.best == "application/json"


def _install_hooks(app: Flask, c: Ctx) -> None:
    # the gate and the answer's headers are given the request and ``g`` themselves, not Flask's proxies: the
    # gate reads them some thirty times per request, and each read through a proxy looks the context up again
    @app.before_request
    def gatekeeper():
        gate.admit(c, request._get_current_object(), g._get_current_object())  # (companion/web/gate.py)

    @app.after_request
    def compressed(resp):  # (registered first: Flask calls it last, on the answer as finished below)
        return compress.finish(request, resp)  # (companion/web/compress.py)

    @app.after_request
    def headers(resp):
        here_g = g._get_current_object()
        for cookie in gate.answer_cookies(here_g):
            resp.set_cookie(**cookie)
        have = {k.lower() for k, _ in resp.headers.items()}
        for key, value in gate.answer_headers(request.path, have):
            resp.headers.add(key, value)
        return resp

    def _words(template: str, params: dict | None = None) -> str:
        """An error's sentence in the caller's language (the ``lang`` cookie or Accept-Language)."""
        return gate.words(g, template, params)

    def _page_error(status: int, message: str, field: str | None = None, headline: str | None = None):
        try:
            return render_template("error.html", status=status, message=message, field=field,
                                   headline=headline), status
        except Exception:  # the error page itself must not fail
            return f"{status}: {message}", status, {"Content-Type": "text/plain; charset=utf-8"}

    @app.errorhandler(CompanionError)
    def companion_error(exc: CompanionError):
        status, body, headers = gate.error_answer(exc, g)
        if _wants_json():
            return jsonify(body), status, headers
        page, st = _page_error(status, body["error"], exc.field)
        return page, st, headers

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
        """A bug is never dressed as the caller's mistake (``gate.failure_answer``): 500 with an id that
        names the traceback in the log (503 when the box's storage is full or failed)."""
        rule = request.url_rule.rule if request.url_rule is not None else None
        status, body = gate.failure_answer(exc, c, g, request.method, rule)
        if _wants_json():  # phones show the words of error.<code> in their language
            return jsonify(body), status
        code = body.get("code")
        return _page_error(status, f"{body['error']} ({body['id']})", headline=f"error.{code}" if code else None)

    def _wifi_code():
        from companion.web.wifi import wifi_code

        return wifi_code()

    @app.context_processor
    def template_globals():
        lang = g.get("lang", i18n.DEFAULT)
        box_status = None
        if c.panel is not None:
            try:
                box_status = c.panel.status()
            except Exception:
                box_status = None
        return {
            "t": lambda key, **kw: i18n.translate(lang, key, **kw),
            # a counted string and a number in the page's language ("1 turno", "-1,5"): every page has them
            "plural": lambda key, n, **kw: i18n.plural(lang, key, n, **kw),
            "num": lambda x, digits=None: i18n.number(lang, x, digits),
            "lang": lang,
            "languages": i18n.LANGUAGES,
            "catalogue_url": i18n.catalogue_url(lang),  # the page's words, a script cached until they change
            "role": g.get("role", "viewer"),
            "version": __version__,
            "static_url": assets.url,  # a static file's address with its content's hash (kept a year by browsers)
            "gpio_status": box_status,
            "pin_set": c.access.pin_is_set(),
            "heartbeat": c.sse_heartbeat,  # the live pages' watchdog waits 3 heartbeats
            "wifi_code": _wifi_code,  # the box's own Wi-Fi's QR code (first of the two), while it is on
        }
