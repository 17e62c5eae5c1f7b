"""The ASGI front of ``companion serve``: live streams on the event loop, everything else to Flask.

``Front(app, limits)`` is an ASGI application:

- ``GET /api/stream`` and ``GET /api/matches/<id>/stream`` are opened without Flask when they are plain
  (``companion/web/hot.py``: the request gate — Host allow-list, roles, viewers turned off, the
  connection's trust — then ``companion/web/streams.py``'s views: the 404, ``Last-Event-ID``, the
  snapshot), else by the Flask views, which call the same views; either way in a small pool of worker
  threads, since they read SQLite. The ``Plan`` they return is then pumped here, natively async: the hub feeds an
  ``AsyncSubscriber`` through ``loop.call_soon_threadsafe`` from the writer threads, so an open stream
  holds no thread and SQLite's fsync never stalls the loop. A player's stream reads the player's seat
  for every event: that read runs in the worker pool too. An error (403, 404, 400) is sent as the gate or
  Flask answered it.
- ``GET /healthz``, ``GET /api/matches/<id>``, ``POST /api/matches/<id>/events`` and its ``/undo`` and
  ``/redo`` (the requests every table makes most) are answered without Flask (``companion/web/hot.py``: the same gate, views and
  answers, in the same pool of threads) when they are plain enough to be read as werkzeug reads them;
- every other request goes to the Flask app in a bounded pool of threads (``--threads``): one trip to
  a thread per request, the environ built by a2wsgi's ``build_environ``, the response collected in the
  thread and sent from the loop; its body was read here first: a body larger than the limit (its ``Content-Length``,
  or what arrived) is refused with 413 before any thread sees it, and a body that does not arrive
  within ``body_timeout`` is answered 408, so a slow sender never holds a thread.
- one address may hold at most ``streams_per_address`` open streams (429 beyond). The caps on
  connections and the header and idle timeouts are the server's (``companion/web/server.py``).

A stream whose client stops reading is dropped: when its queue holds 1,000 items, or when a write
waits longer than ``send_timeout``. Stopping the server (``close_streams``) ends every stream with its
last chunk, so a clean stop leaves no half-written response and logs nothing.
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
import logging
import queue
import re
import threading
from collections import deque
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from itertools import chain
from dataclasses import dataclass
from functools import partial

from companion.web import gate, hot
from companion.web.limits import MAX_BODY, body_limit
from companion.web.hub import heartbeat_event
from companion.web.streams import frame
from companion.web.shares import PROBATION_KEY, SMALL_BODY, TRUST_KEY, Bodies, Ticket, is_loopback

log = logging.getLogger(__name__)

STREAM_PATH = re.compile(r"^/api/(?:stream|matches/[^/]+/stream)$")
# (in a request's scope) the loop time its body is due by, when the httptools protocol waited for it first
# (``Front.lean_head``) and it did not come: the body deadline counts from the request's head either way
BODY_DUE = "companion.body_due"


@dataclass
class Limits:
    """What one address and the whole box may hold; the timeouts (seconds). docs/limits.md has them all."""

    streams_per_address: int = 200
    connections_per_address: int = 250  # well below max_connections: 16 addresses to fill the box
    max_connections: int = 4000
    header_timeout: float = 10.0  # from the connection (or the end of the last response) to a whole request head
    keep_alive: float = 5.0  # an idle keep-alive connection is closed after this
    body_timeout: float = 30.0  # a request body must arrive within this
    send_timeout: float = 30.0  # a stream whose client reads nothing for this long is dropped
    max_body: int = MAX_BODY  # the largest body any endpoint takes (companion/web/limits.py)
    bodies_per_address: int = 4 * 1024 * 1024  # bytes of bodies one address may have in flight
    bodies_in_all: int = 24 * 1024 * 1024  # and the whole box (the box's own screen: one more max_body)
    max_head: int = 16 * 1024  # a request head (request line and headers), however it arrives
    stream_threads: int = 8  # worker threads that open streams (SQLite reads)


class Workers(Executor):
    """A bounded pool of long-lived worker threads that take their jobs from one queue. ``run(job)`` hands a
    job over without a Future (the hot routes' answers come back by the front's own call to the loop);
    ``submit`` makes one, as ``loop.run_in_executor`` needs. A thread is started when none is idle, up to
    ``max_workers``, as ``ThreadPoolExecutor`` does, without its work item, Future and idle semaphore (a
    condition and its lock, taken in Python code) per job on both sides; ``shutdown`` ends the threads once
    the jobs handed over before it are done."""

    def __init__(self, max_workers: int, thread_name_prefix: str = "worker"):
        self._jobs = queue.SimpleQueue()
        self._max = max_workers
        self._prefix = thread_name_prefix
        self._threads: list[threading.Thread] = []
        self._idle = 0  # threads waiting for a job, not yet promised one (under _lock)
        self._lock = threading.Lock()
        self._shut = False

    def run(self, job) -> None:
        """``job()`` in a worker thread; what it raises is logged (a job answers its own errors)."""
        if self._shut:
            raise RuntimeError("cannot schedule new jobs after shutdown")
        self._jobs.put(job)
        with self._lock:
            if self._idle:
                self._idle -= 1
                return
            if len(self._threads) >= self._max:
                return  # (it waits for the first thread done with its job)
            thread = threading.Thread(target=self._work, name=f"{self._prefix}_{len(self._threads)}", daemon=True)
            self._threads.append(thread)
        thread.start()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future = Future()

        def job():
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)

        self.run(job)
        return future

    def _work(self) -> None:
        jobs, lock = self._jobs, self._lock
        while True:
            job = jobs.get()
            if job is None:  # shut down: the next thread stops too
                jobs.put(None)
                return
            try:
                job()
            except BaseException:
                log.exception("a worker thread's job failed")
            job = None
            with lock:
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._shut = True
        self._jobs.put(None)
        if wait:
            for thread in list(self._threads):
                thread.join()


def _json_response(status: int, body: dict, extra=()) -> tuple[dict, dict]:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
               (b"cache-control", b"no-store"), *extra]
    return ({"type": "http.response.start", "status": status, "headers": headers},
            {"type": "http.response.body", "body": data, "more_body": False})


class _TooLarge(Exception):
    pass


class _Busy(Exception):
    pass


# the front's own sentences (translated in web/i18n/errors.it.json)
TOO_LARGE = "the body is too large: at most {kib} KiB here"
BUSY_ADDRESS = "too many uploads from this address at once: try again in a moment"
BUSY_BOX = "the box is receiving too many uploads at once: try again in a moment"
HEAD_TOO_LARGE = "the request head is too large: at most {kib} KiB"
TOO_MANY_STREAMS = "too many live pages from this address (at most {n})"
STOPPING = "the server is stopping"
LATE_BODY = "the body did not arrive in time"
SENTENCES = (TOO_LARGE, BUSY_ADDRESS, BUSY_BOX, HEAD_TOO_LARGE, TOO_MANY_STREAMS, STOPPING, LATE_BODY)


def _chunked(proto) -> bool:
    """Whether ``proto`` (the connection's uvicorn protocol: httptools or h11) frames its current response's
    body as HTTP/1.1 chunks: then a stream may write its chunks to the transport itself (``Front._pump``).
    Any other framing (an HTTP/1.0 client's under h11, a server other than this one's) keeps ASGI ``send``."""
    try:
        cycle = proto.cycle
        if cycle is None or not cycle.response_started or cycle.response_complete:
            return False
        conn = getattr(proto, "conn", None)
        if conn is not None:  # h11
            from h11._writers import ChunkedWriter

            return isinstance(conn._writer, ChunkedWriter)
        return cycle.chunked_encoding is True  # httptools (what its send frames as chunks)
    except (AttributeError, ImportError):
        return False


def _writable(proto) -> bool:
    """The transport takes a write now without waiting: open, its client not gone, its buffer below the
    high-water mark (else ``send`` waits for it to drain, under the ``send_timeout`` sweeper)."""
    cycle = proto.cycle
    return not proto.flow.write_paused and not proto.transport.is_closing() and cycle is not None \
        and not cycle.disconnected and not cycle.response_complete


def head_size(scope) -> int:
    """The size of a request's head as it was sent: its request line and its headers."""
    headers = scope.get("headers", ())
    return (len(scope.get("method", "")) + len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
            + 12 + 4 * len(headers) + sum(map(len, chain.from_iterable(headers))))


class Front:
    def __init__(self, app=None, limits: Limits | None = None, threads: int = 16, connections=None,
                 own_routes: bool = True, context=None, make_app=None):
        self._app = app  # the Flask app; None: built by ``make_app()`` at its first need (see ``app``)
        self._make_app = make_app
        self._app_lock = threading.Lock()
        self._warming = False
        self._answered = False  # an answer given without Flask (the first /healthz): the app is built then
        self._warm_timer = None
        # the process is this server's (``companion serve``): the built app's objects, alive as long as it, are
        # frozen out of the collector's generations (companion/cli/serve.py freezes the start's the same way)
        self.freeze_when_built = False
        self.own_routes = own_routes  # the hot routes answered here (companion/web/hot.py), not by Flask
        self.limits = limits or Limits()
        self.c = context if context is not None else app.extensions["companion"]
        self.pool = Workers(threads, "companion-wsgi")
        self._answers: deque = deque()  # the hot routes' answers done in worker threads, for the loop
        self._waking = False  # the loop has been called to write them (``_answers_due``)
        self.io = ThreadPoolExecutor(max_workers=self.limits.stream_threads, thread_name_prefix="companion-stream")
        self.connections = connections  # shares.Connections: to drop a stuck stream's connection, trust
        self.bodies = Bodies(self.limits)
        self._urls = None  # the app's URL map, bound (what a request's body limit is looked up in)
        self.streams: dict[str, int] = {}
        self.subs: set = set()
        self.stopping = False
        self._writing: dict = {}  # stream task -> loop.time() its current write started
        self._stuck: dict = {}  # stream tasks cancelled by _sweep
        self._sweeper = None

    @property
    def app(self):
        """The Flask app. Given ``make_app`` instead (``companion serve``), it is built at its first need, in
        the worker thread that needs it (never on the loop), once: the hot routes answer without it, so the
        server answers ``/healthz`` before Flask, Werkzeug and Jinja2 are even imported."""
        app = self._app
        if app is None:
            with self._app_lock:
                if self._app is None:
                    self._app = self._make_app()
                app = self._app
        return app

    # The Flask app is built after the first answer given without it (the first /healthz: systemd's
    # watchdog, the benchmark), or this long after the server listens if no such request comes first: built
    # the moment it listened, its imports held the interpreter's lock (and, on a Pi, the CPU) against the loop
    # and the worker answering that first request, 0.2-0.3 s of a Pi's first answer. A page asked for sooner
    # builds it at once (``_built``).
    WARM_AFTER_S = 0.5

    def _warm(self) -> None:
        """Once the server listens (``companion/web/server.py``), and after each answer without Flask: the
        app built in a worker thread (after the first answer, or ``WARM_AFTER_S`` after listening), so the
        first page a phone asks for does not wait for it."""
        if self._app is not None or self._warming:
            return
        if not self._answered:
            if self._warm_timer is None:
                self._warm_timer = asyncio.get_running_loop().call_later(self.WARM_AFTER_S, self._warm_now)
            return
        self._warm_now()

    def _warm_now(self) -> None:
        if self._app is not None or self._warming:
            return
        self._warming = True

        def build():
            # no cyclic collection while Flask, Werkzeug, Jinja2 and the blueprints are imported and wired (as
            # during the start itself: companion/cli/serve.py): it would go again and again over their objects
            collecting = gc.isenabled()
            gc.disable()
            try:
                self.app
            except Exception:  # the request that needs it meets the error again, and answers it
                log.exception("could not build the web app")
            finally:
                if collecting:
                    if self.freeze_when_built:
                        gc.freeze()
                    gc.enable()
                self._warming = False

        asyncio.get_running_loop().run_in_executor(self.pool, build)

    async def _built(self, scope, send) -> bool:
        """The Flask app built (in a worker thread, by the first request that needs it); False when it could
        not be: that request got a 500 with an id in the log, as any bug."""
        if self._app is not None:
            return True
        try:
            await asyncio.get_running_loop().run_in_executor(self.pool, lambda: self.app)
            return True
        except Exception as exc:
            status, body = gate.failure_answer(exc, self.c, None, scope["method"], "(the web app, being built)")
            await self._send_json(send, status, body)
            return False

    # -- ASGI -----------------------------------------------------------------------------------
    async def __call__(self, scope, receive, send):
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    self.close_streams()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        try:
            if head_size(scope) > self.limits.max_head:  # (a head that arrived in one piece is whole)
                await self._refuse(send, scope, 431, HEAD_TOO_LARGE, "headers", kib=self.limits.max_head // 1024)
                return
            if scope["method"] in ("GET", "HEAD") and STREAM_PATH.match(scope["path"]):
                await self._stream(scope, receive, send)
            else:
                await self._request(scope, receive, send)
        except asyncio.CancelledError:
            # the server is stopping and this client did not finish in time: drop it without a traceback
            self._drop(scope)

    def close_streams(self) -> None:
        """Ends every open stream (on the loop): the server is stopping."""
        self.stopping = True
        for sub in list(self.subs):
            sub.deliver(("close", None))

    def _drop(self, scope) -> None:
        proto = self.connections.get(scope.get("client")) if self.connections is not None else None
        if proto is not None:
            proto.transport.abort()

    # -- ordinary requests: the body first, then Flask in a worker thread ------------------------------
    def _endpoint(self, scope) -> str | None:
        """The Flask endpoint the request goes to (its body limit), without a thread: the URL map alone (of
        an app already built)."""
        if self._urls is None:
            self._urls = self.app.url_map.bind("localhost")
        try:
            return self._urls.match(scope["path"], method=scope["method"])[0]
        except Exception:  # 404, 405, a redirect: the default limit
            return None

    async def _refuse(self, send, scope, status: int, template: str, field: str, extra=(), **params) -> None:
        """An answer of the front itself, in the caller's language; the connection is closed after it (what
        the client still sends is not read)."""
        from companion.web.i18n import choose, error_text

        cookie = accept = None
        for name, value in scope["headers"]:
            if name == b"cookie":
                for part in value.decode("latin-1").split(";"):
                    k, _, v = part.strip().partition("=")
                    if k == "lang":
                        cookie = v
            elif name == b"accept-language":
                accept = value.decode("latin-1")
        message = error_text(choose(cookie, accept), template, params)
        await self._send_json(send, status, {"error": message, "field": field},
                              [(b"connection", b"close"), *extra])

    async def _request(self, scope, receive, send):
        client = scope.get("client") or ("", 0)
        addr = client[0]
        length = None
        chunked = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    length = None
            elif name == b"transfer-encoding":
                chunked = True
        found = hot.route(scope) if self.own_routes else None
        if found is None and not await self._built(scope, send):
            return
        limit = min(body_limit(found[0] if found is not None else self._endpoint(scope)), self.limits.max_body)
        if length is not None and length > limit:  # refused before anything is read
            await self._refuse(send, scope, 413, TOO_LARGE, "Content-Length", kib=limit // 1024)
            return
        body = b""
        ticket = Ticket(self.bodies, addr)
        try:
            if (length or 0) > 0 or chunked:
                refused = ticket.grow(length or 0)
                if refused is None:
                    try:
                        due = scope.get(BODY_DUE)
                        if due is None:
                            due = asyncio.get_running_loop().time() + self.limits.body_timeout
                        async with asyncio.timeout_at(due):
                            body = await self._read_body(receive, limit, ticket)
                    except _TooLarge:
                        await self._refuse(send, scope, 413, TOO_LARGE, "body", kib=limit // 1024)
                        return
                    except _Busy as busy:
                        refused = busy.args[0]
                    except TimeoutError:
                        await self._refuse(send, scope, 408, "the body did not arrive in time", "body")
                        return
                if refused is not None:
                    await self._busy(send, scope, refused)
                    return
                if body is None:
                    return  # the client went away
            probation = self.connections.probation_of(client) if self.connections is not None else None
            if found is not None:  # one of the hot routes: the same gate and view, without Flask
                environ = {PROBATION_KEY: probation} if probation else {}
                status, headers, data = await asyncio.get_running_loop().run_in_executor(
                    self.pool, hot.answer, self.c, found, scope, body, environ)
                if not self._earned(client, environ):
                    headers = [*headers, (b"connection", b"close")]
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": data, "more_body": False})
                self._answered = True
                self._warm()
                return
            from a2wsgi.wsgi import build_environ

            environ = build_environ(scope, io.BytesIO(body))
            environ["wsgi.input_terminated"] = True  # the whole body is here (a chunked one too)
            if probation:
                environ[PROBATION_KEY] = probation
            body = None
            status, headers, data = await asyncio.get_running_loop().run_in_executor(self.pool, self._call, environ)
            if not self._earned(client, environ):
                headers = [*headers, (b"connection", b"close")]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": data, "more_body": False})
        finally:
            ticket.close()

    # -- the hot routes without ASGI: what the httptools protocol hands over (companion/web/server.py) -------
    def lean_head(self, proto, cycle):
        """On the loop, a request's head just read by the httptools protocol, in place of uvicorn's ASGI task:
        for a request that ``_request`` would hand straight to ``hot.answer`` (a hot route, plain; its head
        within its limit; a ``Content-Length`` within the route's, its bytes taken on the address's share of
        bodies; no ``Expect``; a client that reads its answers), what ``lean_run`` needs once the body is
        here. None: the ASGI path serves it (``__call__``), every refusal included. The answer is the same
        either way (``hot.answer``, in the same pool), written as one piece by the protocol: no task, no ASGI
        messages, one write of the head and the body (docs/server.md)."""
        if not self.own_routes or cycle.waiting_for_100_continue or proto.flow.write_paused:
            return None
        scope = cycle.scope
        if not getattr(proto, "head_within", False) and head_size(scope) > self.limits.max_head:
            return None
        found = hot.route(scope)
        if found is None:
            return None
        length = 0
        for name, value in scope["headers"]:
            if name == b"content-length":
                length = int(value)  # (digits, once: hot.route)
                break
        if length > self.limits.max_body or length > body_limit(found[0]):
            return None
        client = scope.get("client") or ("", 0)
        ticket = None  # (a body of a few KiB is not counted: Ticket.grow)
        if length > SMALL_BODY:
            ticket = Ticket(self.bodies, client[0])
            if ticket.grow(length) is not None:
                return None
        return found, ticket, client

    def lean_drop(self, lean) -> None:
        """The body did not arrive by its deadline (the request goes the ASGI path, which answers it), or its
        client went away: its share of bodies given back."""
        if lean[1] is not None:
            lean[1].close()

    def lean_run(self, proto, cycle, lean) -> None:
        """On the loop, the body whole: ``hot.answer`` in a worker thread (``_lean_job``), its answer handed back
        to the loop for the protocol to write (``proto.lean_answer``)."""
        found, ticket, client = lean
        probation = getattr(proto, "probation", None)  # (set by Connections.admit: the connection's own)
        environ = {PROBATION_KEY: probation} if probation else {}
        try:
            self.pool.run(partial(self._lean_job, proto, cycle, found, bytes(cycle.body), environ, ticket, client))
        except RuntimeError:  # the pool is shut down: the server is stopping
            self.lean_drop(lean)
            proto.transport.close()

    def _lean_job(self, proto, cycle, found, body, environ, ticket, client) -> None:
        """In a worker thread: the answer, its header lines written here (the loop adds uvicorn's own, the
        date), queued for the loop; answers done together are written in one call of the loop."""
        try:
            status, headers, data = hot.answer(self.c, found, cycle.scope, body, environ)
            out = status, b"".join([b"%s: %s\r\n" % header for header in headers]), data
        except BaseException as exc:  # (hot.answer answers every error itself: a bug of its own)
            out = exc
        self._answers.append((proto, cycle, out, environ, ticket, client))
        if not self._waking:
            self._waking = True
            try:
                proto.loop.call_soon_threadsafe(self._answers_due)
            except RuntimeError:  # the loop is closed: the server has stopped
                pass

    def _answers_due(self) -> None:
        """On the loop: every answer the worker threads have done so far, written by the protocol, with
        ``connection: close`` when the connection's trust says so. (The flag is lowered before the queue is
        read: an answer queued after that calls the loop again.)"""
        self._waking = False
        answers = self._answers
        while answers:
            proto, cycle, out, environ, ticket, client = answers.popleft()
            try:
                if ticket is not None:
                    ticket.close()
                if isinstance(out, BaseException):
                    log.error("Exception in ASGI application", exc_info=out)  # (what uvicorn logs for ASGI)
                    proto.transport.close()
                    continue
                # the trust its credentials earned the connection (Connections.earned), asked only when it
                # can change
                close = (getattr(proto, "probation", None) or environ.get(TRUST_KEY, 0) > getattr(proto, "trust", 0)) \
                    and not self._earned(client, environ)
                proto.lean_answer(cycle, out[0], out[1], out[2], close=close)
            except Exception:
                log.exception("Exception in ASGI application")
        if self._app is None:  # (answered without it: built now, in a worker thread)
            self._answered = True
            self._warm()

    def _earned(self, client, environ) -> bool:
        """The trust this request's credentials earned its connection; False: close it after the answer."""
        if self.connections is None:
            return True
        return self.connections.earned(client, environ.get(TRUST_KEY, 0))

    async def _busy(self, send, scope, refused: str) -> None:
        if refused == "address":
            await self._refuse(send, scope, 429, BUSY_ADDRESS, "address", [(b"retry-after", b"5")])
        else:
            await self._refuse(send, scope, 503, BUSY_BOX, "body", [(b"retry-after", b"5")])

    def _call(self, environ):
        """In a worker thread: the whole WSGI call, its response collected (every response but a stream's
        is finite and small: JSON, pages, static files), so a request costs one trip to a thread and back
        (a2wsgi's middleware makes one per message of the response, which halved the requests served per
        second under load: docs/server.md)."""
        started = []
        chunks = []

        def start_response(status, headers, exc_info=None):
            if exc_info is not None and started:
                raise exc_info[1].with_traceback(exc_info[2])
            started[:] = [status, headers]
            return chunks.append

        it = self.app(environ, start_response)
        try:
            for chunk in it:
                if chunk:
                    chunks.append(chunk)
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()
        status, headers = started
        return (int(status.split(" ", 1)[0]),
                [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers], b"".join(chunks))

    async def _read_body(self, receive, limit: int, ticket) -> bytes | None:
        """The whole body, counted on ``ticket`` as it arrives; at most ``limit`` bytes (a chunked body, or
        one longer than its Content-Length said, stops being read there)."""
        parts, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _TooLarge
            refused = ticket.grow(size)
            if refused is not None:
                raise _Busy(refused)
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)

    async def _send_json(self, send, status: int, body: dict, extra=()) -> None:
        start, payload = _json_response(status, body, extra)
        await send(start)
        await send(payload)

    # -- streams ------------------------------------------------------------------------------------
    def _open(self, environ):
        """In a worker thread: the Flask view, with the whole request gate, as for any request."""
        app = self.app
        with app.request_context(environ):
            try:
                resp = app.full_dispatch_request()
            except Exception as exc:  # what Flask's wsgi_app does with an error its handlers let through
                resp = app.handle_exception(exc)
            plan = getattr(resp, "plan", None)
            headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in resp.headers.items()]
            if plan is not None:
                return plan, resp.status_code, headers, b""
            try:
                return None, resp.status_code, headers, resp.get_data()
            finally:
                resp.close()

    async def _stream(self, scope, receive, send):
        loop = asyncio.get_running_loop()
        client = scope.get("client") or ("", 0)
        addr = client[0]
        if self.streams.get(addr, 0) >= self.limits.streams_per_address and not is_loopback(addr):
            await self._refuse(send, scope, 429, TOO_MANY_STREAMS, "address", [(b"retry-after", b"5")],
                               n=self.limits.streams_per_address)
            return
        if self.stopping:
            await self._refuse(send, scope, 503, STOPPING, "server", [(b"retry-after", b"2")])
            return
        self.streams[addr] = self.streams.get(addr, 0) + 1
        try:
            def subscribe(key):
                return self.c.hub.subscribe_async(key, loop)

            probation = self.connections.probation_of(client) if self.connections is not None else None
            found = hot.route(scope, hot.STREAMS) if self.own_routes else None
            if found is not None:  # the same gate and view as Flask's, without Flask (companion/web/hot.py)
                environ = {PROBATION_KEY: probation} if probation else {}
                plan, status, headers, data = await loop.run_in_executor(
                    self.io, hot.open_stream, self.c, found, scope, environ, subscribe)
            else:
                if not await self._built(scope, send):
                    return
                from a2wsgi.wsgi import build_environ

                environ = build_environ(scope, io.BytesIO(b""))
                environ["companion.subscribe"] = subscribe
                if probation:
                    environ[PROBATION_KEY] = probation
                plan, status, headers, data = await loop.run_in_executor(self.io, self._open, environ)
            if not self._earned(client, environ):
                if plan is not None:
                    plan.close()
                    plan = None
                    status, headers, data = 429, [(b"content-type", b"application/json")], b"{}"
                headers = [*headers, (b"connection", b"close")]
            if plan is None:
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": data, "more_body": False})
                return
            await self._pump(plan, status, headers, scope, receive, send)
        finally:
            n = self.streams.get(addr, 1) - 1
            if n:
                self.streams[addr] = n
            else:
                self.streams.pop(addr, None)

    async def _pump(self, plan, status, headers, scope, receive, send):
        loop = asyncio.get_running_loop()
        sub = plan.sub
        self.subs.add(sub)
        if self.stopping:
            sub.deliver(("close", None))

        async def watch():  # the client went away: end the stream now, not at the next heartbeat
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    sub.deliver(("close", None))
                    return

        watcher = loop.create_task(watch())
        task = asyncio.current_task()
        writing = self._writing

        async def write(message) -> None:
            # no timer per write: the sweeper (_sweep) cancels a write that waited longer than send_timeout
            writing[task] = loop.time()
            self._sweep_soon(loop)
            try:
                await send(message)
            finally:
                writing.pop(task, None)

        def body(data: bytes, more: bool = True) -> dict:
            return {"type": "http.response.body", "body": data, "more_body": more}

        proto = self.connections.get(scope.get("client")) if self.connections is not None else None
        direct = None  # the connection's protocol, once its response is known to be chunked
        render = plan.render
        # a signed-in caller's stream reads who it is for each event: from the rows the store keeps, on the
        # loop (plan.look), else in a worker thread (render alone)
        look = plan.look if plan.blocking else None

        def write_now(items) -> bool:
            """On the loop, in the hub's slices of writes (``AsyncSubscriber.flush``): the items' chunk written
            to the transport (one item: its chunk framed once for every stream of its audience); False when
            it cannot be now (nothing rendered, nothing written)."""
            if not _writable(direct):
                return False
            looked = None
            if plan.blocking:
                looked = look() if look is not None else None
                if looked is None:  # (its task reads it in a worker thread)
                    return False
            if len(items) == 1:
                chunk = render(items[0], True, looked)
            else:
                parts = [data for data in (render(item, False, looked) for item in items) if data]
                chunk = frame(b"".join(parts)) if parts else None
            if chunk:
                direct.transport.write(chunk)
            return True

        try:
            await write({"type": "http.response.start", "status": status, "headers": headers})
            await write(body("".join(plan.head).encode("utf-8")))
            if scope.get("method") == "GET" and _chunked(proto):
                direct = proto
                sub.direct = write_now
            async for batch in sub.batches_until_closed(plan.heartbeat):
                if batch is None:
                    await write(body(heartbeat_event(plan.heartbeat).encode("utf-8")))
                    continue
                looked = look() if look is not None else None
                if direct is not None and len(batch) == 1 and (looked is not None or not plan.blocking) \
                        and _writable(direct):
                    chunk = render(batch[0], True, looked)  # the same bytes for every stream of its audience
                    if chunk:
                        direct.transport.write(chunk)
                    continue
                parts = []
                for item in batch:
                    if plan.blocking and looked is None:
                        text = await loop.run_in_executor(self.io, render, item)
                    else:
                        text = render(item, False, looked)
                    if text:
                        parts.append(text if isinstance(text, bytes) else text.encode("utf-8"))
                if parts:
                    data = parts[0] if len(parts) == 1 else b"".join(parts)
                    if direct is not None and _writable(direct):
                        # the chunk framed here and written to the transport: what h11 would write, without
                        # an ASGI message, uvicorn's send and h11's event for every stream of every event
                        direct.transport.write(frame(data))
                    else:  # a client slow to read (the transport's buffer is full): wait, as before
                        await write(body(data))
            if sub.overflow:  # fell 1,000 items behind: it reconnects and resumes by Last-Event-ID
                self._drop(scope)
            else:
                await write(body(b"", more=False))
        except asyncio.CancelledError:
            if not self._stuck.pop(task, False):
                raise
            self._drop(scope)  # the client read nothing for send_timeout: let its connection go
        finally:
            sub.direct = None
            writing.pop(task, None)
            self.subs.discard(sub)
            plan.close()
            watcher.cancel()

    def _sweep_soon(self, loop) -> None:
        if self._sweeper is None:
            every = max(0.05, min(1.0, self.limits.send_timeout / 4))
            self._sweeper = loop.call_later(every, self._sweep, loop)

    def _sweep(self, loop) -> None:
        """A few times per ``send_timeout`` (at most a second apart) while streams write: cancel the writes
        that have waited longer than ``send_timeout`` (a client that reads nothing); its stream ends and
        its connection is aborted."""
        self._sweeper = None
        now = loop.time()
        for task, since in list(self._writing.items()):
            if now - since > self.limits.send_timeout:
                del self._writing[task]
                if task.cancel():  # delivered when the task next runs: in its write
                    self._stuck[task] = True
        if self._writing:
            self._sweep_soon(loop)
