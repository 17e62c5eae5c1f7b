"""The ASGI front of ``companion serve``: every request routed by the Flask app's URL map and answered by
its views; the live streams pumped on the event loop.

``Front(app, limits)`` is an ASGI application:

- a request's endpoint is looked up on the loop in the app's URL map (``url_map.bind``: the same rules that
  route it in Flask), for its body limit and to know a stream;
- ``GET /api/stream`` and ``GET /api/matches/<id>/stream`` (the endpoints ``live.club_stream`` and
  ``live.match_stream``) are opened by their Flask views (the request gate — Host allow-list, roles,
  viewers turned off, the connection's trust — then ``companion/web/streams.py``'s views: the 404,
  ``Last-Event-ID``, the snapshot) on the loop, as the endpoints of ``ON_LOOP`` are. The
  ``Plan`` they return is then pumped here, natively async, through ASGI ``send``: the hub feeds an
  ``AsyncSubscriber`` through ``loop.call_soon_threadsafe`` from the thread that commits (the loop's own
  for a write of ``ON_LOOP``), so an open stream holds no thread. A player's stream reads the player's seat
  for every event: from the rows the store keeps, else in the worker pool.
- every other request goes to the Flask app, the environ built by a2wsgi's ``build_environ``, the
  response collected and sent from the loop: on the loop itself for the endpoints of ``ON_LOOP`` (a
  match, its events, an event's write, undo, redo, ``/healthz``), else in a bounded pool of threads
  (``--threads``), one trip to a thread per request; its body was read here first: a body larger than the limit (its ``Content-Length``,
  or what arrived) is refused with 413 before any thread sees it, and a body that does not arrive
  within ``body_timeout`` is answered 408, so a slow sender never holds a thread; a body that says it is
  compressed (``Content-Encoding``) is refused with 415 before it is read: the box inflates nothing a
  phone sends. Answers are compressed by the app itself (``companion/web/compress.py``).
- one address may hold at most ``streams_per_address`` open streams (429 beyond). The caps on
  connections, the header deadline and the head limit are the server's (``companion/web/server.py``),
  told here when a request begins and ends on its connection.

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
import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from itertools import chain
from dataclasses import dataclass

from companion.web import gate
from companion.web.limits import MAX_BODY, body_limit
from companion.web.hub import heartbeat_event
from companion.web.shares import PROBATION_KEY, TRUST_KEY, Bodies, Ticket, is_loopback

log = logging.getLogger(__name__)

# the Flask endpoints of the live streams (companion/web/live.py): pumped on the loop
STREAMS = frozenset({"live.match_stream", "live.club_stream"})
# the Flask endpoints called on the loop itself, without a trip to a worker thread: the few that a table
# asks for all evening, whose work is bounded and waits on nothing but SQLite (a read from the rows the
# store keeps, or one event's write and its commit). Through a worker thread each of their SQL statements
# handed the interpreter's lock to the loop and back (sqlite3 lets it go around every statement): a write
# among 12 tables' took 1.4-1.5 ms of this machine's CPU there against 0.8-0.9 ms on the loop. A write here
# holds the loop through its COMMIT's fsync: measured with an 8 ms fsync, that costs less than a write's trip
# to a worker thread does on the Pi budget (docs/server.md)
ON_LOOP = frozenset({"api.healthz", "api.get_match", "api.list_events", "api.append_event", "api.undo",
                     "api.redo"})


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
    job over without a Future; ``submit`` makes one, as ``loop.run_in_executor`` needs. A thread is started when none is idle, up to
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
ENCODED_BODY = "a compressed body is not taken here: send it as it is (no Content-Encoding)"
SENTENCES = (TOO_LARGE, BUSY_ADDRESS, BUSY_BOX, HEAD_TOO_LARGE, TOO_MANY_STREAMS, STOPPING, LATE_BODY, ENCODED_BODY)


def head_size(scope) -> int:
    """The size of a request's head as it was sent: its request line and its headers."""
    headers = scope.get("headers", ())
    return (len(scope.get("method", "")) + len(scope.get("raw_path") or b"") + len(scope.get("query_string") or b"")
            + 12 + 4 * len(headers) + sum(map(len, chain.from_iterable(headers))))


class Front:
    def __init__(self, app=None, limits: Limits | None = None, threads: int = 16, connections=None,
                 context=None, make_app=None):
        self._app = app  # the Flask app; None: built by ``make_app()`` at its first need (see ``app``)
        self._make_app = make_app
        self._app_lock = threading.Lock()
        self._warming = False
        # the process is this server's (``companion serve``): the built app's objects, alive as long as it, are
        # frozen out of the collector's generations (companion/cli/serve.py freezes the start's the same way)
        self.freeze_when_built = False
        self.limits = limits or Limits()
        self.c = context if context is not None else app.extensions["companion"]
        self.pool = Workers(threads, "companion-wsgi")
        self.io = ThreadPoolExecutor(max_workers=self.limits.stream_threads, thread_name_prefix="companion-stream")
        self.connections = connections  # shares.Connections: a request's connection, to drop a stuck stream's, trust
        self.bodies = Bodies(self.limits)
        self._urls = None  # the app's URL map, bound (what a request's endpoint is looked up in)
        self._found: dict = {}  # (method, path) -> its endpoint, as the URL map matched it
        self.streams: dict[str, int] = {}
        self.subs: set = set()
        self.stopping = False
        self._writing: dict = {}  # stream task -> loop.time() its current write started
        self._stuck: dict = {}  # stream tasks cancelled by _sweep
        self._sweeper = None

    @property
    def app(self):
        """The Flask app. Given ``make_app`` instead (``companion serve``), it is built once, in the worker
        thread that needs it first (never on the loop): the one the server starts once it listens
        (``listening``), or a request that came before it was done, which waits for it."""
        app = self._app
        if app is None:
            with self._app_lock:
                if self._app is None:
                    self._app = self._make_app()
                app = self._app
        return app

    def listening(self) -> None:
        """The server listens (``companion/web/server.py``): the app built now in a worker thread, so the first
        request a phone makes waits for as little of it as can be."""
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
        # the connection (``server.Guarded``): a request under way has no header deadline
        conn = self.connections.get(scope.get("client")) if self.connections is not None else None
        begin = getattr(conn, "begin", None)
        if begin is not None:
            begin()
        try:
            if head_size(scope) > self.limits.max_head:  # (a head that arrived in one piece is whole)
                await self._refuse(send, scope, 431, HEAD_TOO_LARGE, "headers", kib=self.limits.max_head // 1024)
                return
            if not await self._built(scope, send):
                return
            endpoint = self._endpoint(scope)
            if endpoint in STREAMS:
                await self._stream(scope, receive, send)
            else:
                await self._request(scope, receive, send, endpoint)
        except asyncio.CancelledError:
            # the server is stopping and this client did not finish in time: drop it without a traceback
            self._drop(scope)
        finally:
            if begin is not None:
                conn.end()

    def close_streams(self) -> None:
        """Ends every open stream (on the loop): the server is stopping."""
        self.stopping = True
        for sub in list(self.subs):
            sub.deliver(("close", None))

    def _drop(self, scope) -> None:
        conn = self.connections.get(scope.get("client")) if self.connections is not None else None
        if conn is not None:
            conn.transport.abort()

    def _endpoint(self, scope) -> str | None:
        """The Flask endpoint the request goes to, without a thread: the app's URL map, as Flask matches it
        (None: a 404, 405 or redirect, which Flask answers)."""
        key = (scope["method"], scope["path"])
        found = self._found.get(key, False)
        if found is not False:
            return found
        urls = self._urls
        if urls is None:
            urls = self._urls = self.app.url_map.bind("localhost")
        try:
            found = urls.match(key[1], method=key[0])[0]
        except Exception:
            found = None
        if len(self._found) >= 512:  # (the last few hundred addresses asked: a match's id is in its path)
            self._found.clear()
        self._found[key] = found
        return found

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

    # -- requests: the body first, then Flask in a worker thread ------------------------------------
    async def _request(self, scope, receive, send, endpoint):
        client = scope.get("client") or ("", 0)
        addr = client[0]
        length = None
        chunked = encoded = False
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    length = int(value)
                except ValueError:
                    length = None
            elif name == b"transfer-encoding":
                chunked = True
            elif name == b"content-encoding" and value.strip().lower() not in (b"", b"identity"):
                encoded = True
        if encoded:  # the box never inflates a body (no zip bomb): refused before anything is read
            await self._refuse(send, scope, 415, ENCODED_BODY, "Content-Encoding")
            return
        limit = min(body_limit(endpoint), self.limits.max_body)
        if length is not None and length > limit:  # refused before anything is read
            await self._refuse(send, scope, 413, TOO_LARGE, "Content-Length", kib=limit // 1024)
            return
        body = b""
        ticket = Ticket(self.bodies, addr)
        loop = asyncio.get_running_loop()
        try:
            if (length or 0) > 0 or chunked:
                refused = ticket.grow(length or 0)
                if refused is None:
                    try:
                        async with asyncio.timeout(self.limits.body_timeout):
                            body = await self._read_body(receive, limit, ticket)
                    except _TooLarge:
                        await self._refuse(send, scope, 413, TOO_LARGE, "body", kib=limit // 1024)
                        return
                    except _Busy as busy:
                        refused = busy.args[0]
                    except TimeoutError:
                        await self._refuse(send, scope, 408, LATE_BODY, "body")
                        return
                if refused is not None:
                    await self._busy(send, scope, refused)
                    return
                if body is None:
                    return  # the client went away
            from a2wsgi.wsgi import build_environ

            environ = build_environ(scope, io.BytesIO(body))
            environ["wsgi.input_terminated"] = True  # the whole body is here (a chunked one too)
            probation = self.connections.probation_of(client) if self.connections is not None else None
            if probation:
                environ[PROBATION_KEY] = probation
            body = None
            if endpoint in ON_LOOP:
                status, headers, data = self._call(environ)
            else:
                status, headers, data = await loop.run_in_executor(self.pool, self._call, environ)
            if not self._earned(client, environ):
                headers = [*headers, (b"connection", b"close")]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": data, "more_body": False})
        finally:
            ticket.close()

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
        """In a worker thread (or on the loop: ``ON_LOOP``): the whole WSGI call, its response collected (every response but a stream's
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

        with self.c.store.one_look():  # one look for other processes' commits per request (the first read's)
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
        """On the loop: the Flask view, with the whole request gate, as for any request (its reads: the rows
        the store keeps, the match's fold, the events a reconnecting page missed)."""
        app = self.app
        with self.c.store.one_look(), app.request_context(environ):
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
            from a2wsgi.wsgi import build_environ

            environ = build_environ(scope, io.BytesIO(b""))
            environ["companion.subscribe"] = lambda key: self.c.hub.subscribe_async(key, loop)
            probation = self.connections.probation_of(client) if self.connections is not None else None
            if probation:
                environ[PROBATION_KEY] = probation
            plan, status, headers, data = self._open(environ)
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
        """The plan's head, then every hub item for this caller, each batch of items one ASGI message (the
        server frames it as an HTTP/1.1 chunk)."""
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

        async def write(data: bytes, more: bool = True) -> None:
            # no timer per write: the sweeper (_sweep) cancels a write that waited longer than send_timeout
            writing[task] = loop.time()
            self._sweep_soon(loop)
            try:
                await send({"type": "http.response.body", "body": data, "more_body": more})
            finally:
                writing.pop(task, None)

        render = plan.render
        # a signed-in caller's stream reads who it is for each event: from the rows the store keeps, on the
        # loop (plan.look), else in a worker thread (render alone)
        look = plan.look if plan.blocking else None
        try:
            writing[task] = loop.time()
            self._sweep_soon(loop)
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await write("".join(plan.head).encode("utf-8"))
            async for batch in sub.batches_until_closed(plan.heartbeat):
                if batch is None:
                    await write(heartbeat_event(plan.heartbeat).encode("utf-8"))
                    continue
                looked = look() if look is not None else None
                parts = []
                for item in batch:
                    if plan.blocking and looked is None:
                        text = await loop.run_in_executor(self.io, render, item)
                    else:
                        text = render(item, looked)  # the same bytes for every stream of its audience
                    if text:
                        parts.append(text if isinstance(text, bytes) else text.encode("utf-8"))
                if parts:
                    await write(parts[0] if len(parts) == 1 else b"".join(parts))
            if sub.overflow:  # fell 1,000 items behind: it reconnects and resumes by Last-Event-ID
                self._drop(scope)
            else:
                await write(b"", more=False)
        except asyncio.CancelledError:
            if not self._stuck.pop(task, False):
                raise
            self._drop(scope)  # the client read nothing for send_timeout: let its connection go
        finally:
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
