"""The routes every table calls most, answered by the ASGI front itself (``companion/web/asgi.py``) without
Flask and Werkzeug: ``GET /healthz``, ``GET /api/matches/<id>``, ``POST /api/matches/<id>/events`` and the
match's ``/undo`` and ``/redo``.

The views here are the only ones of these routes: the Flask blueprint (``companion/web/api.py``) calls the
same functions with its own request, so a rule is never written twice. A request through the front goes
through the same gate (``gate.admit``: Host, body size, bearer or session, the connection's trust, the
write limits, Origin, viewers turned off), the same views and services, and is answered the same way
(``gate.error_answer`` naming the field in the caller's language, ``gate.failure_answer``'s 500 with an id
in the log, the security and cache headers, the cookies the gate decided), in one worker thread.

``route(scope)`` says whether a request is one of them *and* plain enough to be read here exactly as
werkzeug reads it: a single Host header of host name (or address) and port, no ``Transfer-Encoding``, a
``Content-Length`` of digits, a query of plain characters, cookies without quotes. Anything else (and every
other route) goes to Flask, which reads it its way.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl

from companion import __version__
from companion.base.errors import CompanionError, ConflictError, ForbiddenError, InputError, NotFoundError, RuleError
from companion.base.jsonio import compact
from companion.core.match import event_path
from companion.web import gate, streams
from companion.web.calls import Call, present_event, present_view


# -- the views (Flask's routes of api.py call them too) -----------------------------------------------
def _build() -> str | None:
    """The commit a wheel made by systemd/build-wheel.sh was built from (None for a checkout): the image's
    offline update tells the new version's start from the old's by it."""
    try:
        from companion import build_info
    except ImportError:
        return None
    return build_info.COMMIT


def healthz(c) -> dict:
    return {"ok": True, "version": __version__, "build": _build(), "schema_version": c.store.schema_version(),
            "streams": c.hub.count(), "clock_runner": c.runner is not None,
            "gpio": c.panel.status() if c.panel is not None else None}


def match_doc(call: Call, match_id: str) -> dict:
    """A match as its caller may see it: the stored match, its label and colours, its last seq, the caller's
    seat and the view."""
    c = call.c
    match = c.store.get_match(match_id)
    fold = c.service.fold(match_id)
    # (only the clock's view reads the time: a match without the clock is not stamped)
    view = fold.view(c.store.clock.now_iso() if fold.clock_on else None)
    who, seat = call.viewing(match_id)
    out = {**match, **c.store.meta(match_id), "seq": view["seq"], "seat": seat,
           "view": present_view(view, who, seat)}
    if c.runner is not None and fold.clock_on:  # (the match's options.clock, else its game's USES_CLOCK)
        out["power_lost"] = c.runner.power_lost(match_id)
    return out


def stored(call: Call, match_id: str, write, extra: dict | None = None) -> dict:
    """Run one write of the match service (``write() -> event``): the body of its 201, the match document
    and the stored event. The service names fields inside the event's ``data``; here they become JSON paths
    of the request (``$.data.player``, ``$.type``)."""
    try:
        event = write()
    except (ConflictError, NotFoundError):
        raise
    except (RuleError, InputError, ForbiddenError) as exc:
        if exc.field and exc.field.startswith("$"):
            raise
        raise exc.again(field=event_path("$", exc.field)) from None
    body = match_doc(call, match_id)
    body["event"] = present_event(event, body["game"], call.role, call.seat(match_id), body["status"] == "ended")
    if extra:
        body.update(extra)
    return body


def append_event(call: Call, match_id: str) -> dict:
    """``POST /api/matches/<id>/events``: a player or the organiser records an event (201)."""
    call.require("player")
    doc = call.json_body("api.event-append")
    if doc["type"] == "undo":
        raise InputError("use POST /api/matches/<id>/undo to undo", "$.type")
    return stored(call, match_id, lambda: call.c.service.append(
        match_id, doc["type"], doc.get("data", {}), expected_seq=doc["expected_seq"], by=call.caller(match_id)))


def undo(call: Call, match_id: str) -> dict:
    """``POST /api/matches/<id>/undo``: take back the match's last event in effect (201)."""
    call.require("player")
    doc = call.json_body("api.undo")
    return stored(call, match_id, lambda: call.c.service.undo(match_id, expected_seq=doc["expected_seq"],
                                                              by=call.caller(match_id)))


def redo(call: Call, match_id: str) -> dict:
    """``POST /api/matches/<id>/redo``: take back the most recent undo (while it is the match's last event): its
    event again, same data (201). Re-recording another player's secret event is judged like recording it
    (companion/services/policy.py)."""
    call.require("player")
    doc = call.json_body("api.undo")
    return stored(call, match_id, lambda: call.c.service.redo(match_id, expected_seq=doc["expected_seq"],
                                                              by=call.caller(match_id)))


# -- the front's side: which requests, read how ---------------------------------------------------------
# (method, path, the Flask endpoint and rule it stands for, the view: Call, view args -> (body, status))
ROUTES = (
    ("GET", re.compile(r"/healthz"), "api.healthz", "/healthz", lambda call: (healthz(call.c), 200)),
    ("GET", re.compile(r"/api/matches/(?P<match_id>[^/]+)"), "api.get_match", "/api/matches/<match_id>",
     lambda call, match_id: (match_doc(call, match_id), 200)),
    ("POST", re.compile(r"/api/matches/(?P<match_id>[^/]+)/events"), "api.append_event",
     "/api/matches/<match_id>/events", lambda call, match_id: (append_event(call, match_id), 201)),
    ("POST", re.compile(r"/api/matches/(?P<match_id>[^/]+)/undo"), "api.undo", "/api/matches/<match_id>/undo",
     lambda call, match_id: (undo(call, match_id), 201)),
    ("POST", re.compile(r"/api/matches/(?P<match_id>[^/]+)/redo"), "api.redo", "/api/matches/<match_id>/redo",
     lambda call, match_id: (redo(call, match_id), 201)),
)
# the live streams the front opens itself (``open_stream``; ``companion/web/streams.py``): the view, given the
# Call, its view args and the subscriber factory, returns the stream's Plan
STREAMS = (
    ("GET", re.compile(r"/api/matches/(?P<match_id>[^/]+)/stream"), "live.match_stream",
     "/api/matches/<match_id>/stream",
     lambda call, subscribe, match_id: streams.match_stream(call, match_id, subscribe)),
    ("GET", re.compile(r"/api/stream"), "live.club_stream", "/api/stream",
     lambda call, subscribe: streams.club_stream(call, subscribe)),
)
# a Host werkzeug takes as it is (its ``_host_re``: a name or IPv4 address, or [IPv6], and a port)
_HOST = re.compile(r"(?:[a-z0-9.-]+|\[[a-f0-9]*:[a-f0-9.:]+])(?::([1-9][0-9]{,4}))?", re.ASCII | re.IGNORECASE)
_QUERY = re.compile(r"[A-Za-z0-9_.=&-]*")
_ONCE = frozenset({b"host", b"cookie", b"content-length", b"authorization", b"origin", b"referer", b"last-event-id"})


def route(scope, routes=None) -> tuple | None:
    """``(endpoint, rule, view, view args)`` when the front answers this request itself, else None (Flask does).
    ``routes``: ``ROUTES``, or ``STREAMS`` (what ``open_stream`` opens)."""
    method, path = scope["method"], scope["path"]
    for m, pattern, endpoint, rule, view in (ROUTES if routes is None else routes):
        if m == method:
            found = pattern.fullmatch(path)
            if found is not None:
                break
    else:
        return None
    if scope.get("root_path") or not _QUERY.fullmatch(scope.get("query_string", b"").decode("latin-1")):
        return None
    seen = set()
    for name, value in scope["headers"]:
        if name in _ONCE:
            if name in seen:
                return None  # twice: werkzeug joins them its way
            seen.add(name)
            if name == b"host":
                host = _HOST.fullmatch(value.decode("latin-1"))
                if host is None or (host.group(1) and not 1 <= int(host.group(1)) <= 65535):
                    return None
            elif name == b"content-length" and not value.isdigit():
                return None
            elif name == b"cookie" and (b'"' in value or b"\\" in value):
                return None
        elif name == b"transfer-encoding":
            return None
    if b"host" not in seen:
        return None
    return endpoint, rule, view, found.groupdict()


class _Headers(dict):
    """A request's headers by their lower-case names (werkzeug's ``headers.get`` is case-blind too)."""

    def get(self, name, default=None):
        return dict.get(self, name.lower(), default)


class Request:
    """An ASGI request with what the gate and the views read of a werkzeug request."""

    def __init__(self, scope, body: bytes, endpoint: str, view_args: dict, environ: dict):
        self.method = scope["method"]
        self.path = scope["path"]
        self.scheme = scope.get("scheme") or "http"
        client = scope.get("client")
        self.remote_addr = client[0] if client else None
        self.headers = _Headers({k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]})
        host = self.headers["host"]
        if self.scheme in ("http", "ws"):
            host = host.removesuffix(":80")
        elif self.scheme in ("https", "wss"):
            host = host.removesuffix(":443")
        self.host = host
        length = dict.get(self.headers, "content-length")
        self.content_length = int(length) if length is not None else None
        self.args = {}
        query = scope.get("query_string")
        for k, v in parse_qsl(query.decode("latin-1"), keep_blank_values=True) if query else ():
            self.args.setdefault(k, v)
        self.cookies = {}
        cookie = dict.get(self.headers, "cookie")
        for part in cookie.split(";") if cookie else ():
            k, eq, v = part.strip().partition("=")
            if eq:
                self.cookies.setdefault(k.strip(), v.strip())
        self.endpoint, self.view_args, self.environ = endpoint, view_args, environ
        self._body = body

    def get_data(self, cache: bool = True) -> bytes:
        return self._body


class _G:
    """What the gate decides about a request (Flask's ``g`` for a Flask request)."""

    def get(self, name, default=None):
        return getattr(self, name, default)


def _json(body: dict) -> bytes:
    # what Flask's jsonify writes: compact, ASCII, the keys in their order, a newline
    return (compact(body) + "\n").encode("ascii")


_PLAIN: dict = {}  # (own header names, under /api/) -> the headers every such answer adds, as bytes


def _headers(request, g, headers: dict, own: list) -> list:
    """The answer's headers: its own (``own``, already bytes; ``headers``, the error's), the cookies the gate
    decided, and the security and cache headers it does not have (Flask's ``after_request``)."""
    cookies = gate.answer_cookies(g)
    if not headers and not cookies:  # (most answers: the same added headers, encoded once)
        key = (tuple(k for k, _ in own), request.path.startswith("/api/"))
        added = _PLAIN.get(key)
        if added is None:
            have = {k.decode("latin-1") for k in key[0]}
            added = _PLAIN[key] = [(k.lower().encode("latin-1"), v.encode("latin-1"))
                                   for k, v in gate.answer_headers("/api/" if key[1] else "/", have)]
        return [*own, *added]
    listed = [*own, *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items())]
    if cookies:
        from werkzeug.http import dump_cookie  # (what Flask's set_cookie writes: rare here)

        listed += [(b"set-cookie", dump_cookie(**cookie).encode("latin-1")) for cookie in cookies]
    have = {k.decode("latin-1") for k, _ in own} | {k.lower() for k in headers}
    listed += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in gate.answer_headers(request.path, have)]
    return listed


def answer(c, found: tuple, scope, body: bytes, environ: dict) -> tuple[int, list, bytes]:
    """In a worker thread: the whole answer of one request of ``route`` (status, headers, body)."""
    endpoint, rule, view, view_args = found
    request = Request(scope, body, endpoint, view_args, environ)
    g = _G()
    try:
        with c.store.one_look():  # one look for other processes' commits per request (the first read's)
            gate.admit(c, request, g)
            out, status = view(Call(c, request, g), **view_args)
    except Exception as exc:
        return _refused(exc, c, request, g, rule)
    return _answer(request, g, {}, status, out)


_STREAM_HEADERS = [(b"content-type", streams.CONTENT_TYPE.encode()),
                   *((k.lower().encode(), v.encode()) for k, v in streams.HEADERS.items())]


def open_stream(c, found: tuple, scope, environ: dict, subscribe):
    """In a worker thread: a stream of ``route(scope, STREAMS)`` opened through the gate, as Flask's view
    opens it: ``(plan, status, headers, b"")``, or ``(None, status, headers, body)`` when it is refused (the
    gate's or the view's error, a 500 with an id)."""
    endpoint, rule, view, view_args = found
    request = Request(scope, b"", endpoint, view_args, environ)
    g = _G()
    try:
        with c.store.one_look():  # (as ``answer``: one look for other processes' commits for the opening)
            gate.admit(c, request, g)
            plan = view(Call(c, request, g), subscribe, **view_args)
        return plan, 200, _headers(request, g, {}, list(_STREAM_HEADERS)), b""
    except Exception as exc:
        return (None, *_refused(exc, c, request, g, rule))


def _refused(exc: Exception, c, request, g, rule) -> tuple:
    """The answer to a request that raised: the gate's or the view's error (a CompanionError), else a bug's
    500 with an id in the log."""
    if isinstance(exc, CompanionError):
        status, out, headers = gate.error_answer(exc, g)
    else:
        status, out = gate.failure_answer(exc, c, g, request.method, rule)
        headers = {}
    return _answer(request, g, headers, status, out)


def _answer(request, g, headers: dict, status: int, out) -> tuple:
    """``(status, headers, body)`` of a JSON answer."""
    data = _json(out)
    own = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    return status, _headers(request, g, headers, own), data
