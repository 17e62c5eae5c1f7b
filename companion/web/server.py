"""The HTTP server of ``companion serve``: uvicorn (pure Python, with h11) running the ASGI front of
``companion/web/asgi.py`` on one asyncio event loop. See docs/server.md for why, with figures.

What a connection may do, enforced here before any request reaches the app:

- one address holds at most ``connections_per_address`` connections, the box ``max_connections``; a
  new connection to a full box sheds one without credentials first, the box's own screen is never
  refused, an organiser gets in on probation (``companion/web/shares.py``); beyond: a short 429, then
  the connection is closed;
- a connection must send a whole request head within ``header_timeout`` seconds of being opened or
  of its last response (a client that sends nothing, or its headers a byte at a time, is closed); an
  idle keep-alive connection is closed after ``keep_alive`` seconds; a request head is at most 16 KB.

Every accepted connection has ``TCP_NODELAY`` (``nodelay()``): a response goes out in several writes (its
head, then its body or a stream's chunks), and with Nagle's algorithm on, a write made while an earlier
one is still unacknowledged waits for that ACK, which a phone delays up to 40 ms: every response after the
first on a keep-alive connection stalled that long. asyncio sets the option itself only on a socket
created with ``IPPROTO_TCP`` (which ``bind()`` now does); ``nodelay()`` sets it on whatever socket uvicorn
hands over, so it holds for any listener.

``raise_open_files_limit()`` raises the soft limit of open files to the hard one at start-up: every
connection is a file descriptor, and the usual soft limit (1,024) is below a room's worth of phones.
"""

from __future__ import annotations

import asyncio
import logging
import socket

from companion.web.shares import Connections

log = logging.getLogger(__name__)

_REFUSED_BODY = b'{"error": "too many connections from this address", "field": "address"}'
_REFUSED = (b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nConnection: close\r\n"
            b"Retry-After: 5\r\nContent-Length: %d\r\n\r\n%s" % (len(_REFUSED_BODY), _REFUSED_BODY))


def raise_open_files_limit() -> tuple[int, int] | None:
    """Soft RLIMIT_NOFILE := hard (65,536 when the hard one is unlimited); returns (soft, hard) after, or
    None where there is no such limit."""
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = 65536 if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft, hard


def nodelay(transport) -> bool:
    """``TCP_NODELAY`` on the transport's TCP socket; True when set (False for a non-TCP socket)."""
    sock = transport.get_extra_info("socket")
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return False
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        return False
    return True


def protocol_class(limits, connections: Connections, http: str | None = None, front=None):
    """uvicorn's HTTP/1.1 protocol with the per-address caps, the header deadline and the head limit: on
    httptools (a C parser: about half the CPU of h11 per request here) where its wheel is installed
    (x86_64, aarch64), else h11 (pure Python: a 32-bit armv7l Pi has no httptools wheel). ``http``:
    ``"h11"`` or ``"httptools"`` to choose (tests); both keep every limit the same. ``front``: the ASGI
    front (``companion/web/asgi.py``), whose hot routes the httptools protocol hands it without an ASGI
    task (``Front.lean_head``); None: every request through ASGI."""
    if http is None:
        try:
            import httptools  # noqa: F401
        except ImportError:
            http = "h11"
        else:
            http = "httptools"
    if http == "httptools":
        return _httptools_class(limits, connections, front)
    return _h11_class(limits, connections)


class _Limited:
    """What both protocols add to uvicorn's: ``connection_made`` admits or refuses the connection
    (``Connections``), a deadline for a whole request head, ``shed`` and ``is_idle`` for the caps.

    A connection has **one timer** for its deadlines (``_wake``): a whole request head within
    ``header_timeout`` of the connection or of its last response, some data within uvicorn's keep-alive
    timeout of its last response, a late body of a request the front serves itself (``_body_due``). An
    answer moves the deadlines later by storing them; the timer, due at the earliest one, re-arms itself
    for the next when it fires: uvicorn armed a new keep-alive timer at every response and cancelled it
    at the next byte, the header deadline the same, two timers made and cancelled per request (asyncio
    keeps a cancelled one in its heap until it is due)."""

    _admitted = False
    _limits = None  # (not ``limits``/``connections``: uvicorn's own attributes)
    _caps = None
    _timer = None  # the connection's one timer, due at ``_timer_at`` (loop time)
    _timer_at = 0.0
    _head_due = None  # a whole request head by then (loop time), else the connection is closed
    _idle_due = None  # some data by then (after a response: the keep-alive timeout), else closed
    _body_due = None  # the body of the request the front waits for by then (``_body_late``)

    def _admit(self, transport) -> bool:
        self._admitted = self._caps.admit(self.client, self)
        if not self._admitted:
            transport.write(_REFUSED)
            transport.close()
            return False
        self._arm()
        return True

    def shed(self):
        """Closed to make room for another connection (the box is full)."""
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self.transport.abort()

    def _arm(self, keep_alive: bool = False):
        """A whole request head due from now (and, after a response, some data within the keep-alive
        timeout)."""
        now = self.loop.time()
        self._head_due = due = now + self._limits.header_timeout
        if keep_alive:
            self._idle_due = idle = now + self.timeout_keep_alive
            if idle < due:
                due = idle
        self._due(due)

    def _due(self, due: float):
        """The timer fires at ``due`` or before (one due earlier fires, then waits for the rest)."""
        if self._timer is None:
            self._timer = self.loop.call_at(due, self._wake)
            self._timer_at = due
        elif due < self._timer_at:
            self._timer.cancel()
            self._timer = self.loop.call_at(due, self._wake)
            self._timer_at = due

    def _disarm(self):
        """A request head arrived: its body and response have their own limits."""
        self._head_due = None

    def _wake(self):
        self._timer = None
        if self.transport.is_closing():
            return
        now = self.loop.time()
        if self._idle_due is not None and now >= self._idle_due:
            self._idle_due = None
            self.transport.close()  # idle after its last response for the keep-alive timeout (uvicorn's)
            return
        if self._head_due is not None and now >= self._head_due:
            self._head_due = None
            if self.is_idle():
                self.transport.close()  # no whole request head in time: a slow or idle client
                return
        if self._body_due is not None and now >= self._body_due:
            self._body_due = None
            self._body_late()
        dues = [d for d in (self._idle_due, self._head_due, self._body_due) if d is not None]
        if dues:
            self._due(min(dues))

    def _body_late(self):
        pass

    def _release(self):
        self._head_due = self._idle_due = self._body_due = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._admitted:
            self._caps.release(self.client, self)


def _h11_class(limits, connections: Connections):
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class CompanionH11(_Limited, H11Protocol):
        def connection_made(self, transport):
            nodelay(transport)
            super().connection_made(transport)
            self._admit(transport)

        def is_idle(self):
            """No request under way (between requests, or before the first)."""
            return self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete)

        def data_received(self, data):
            if not self._admitted:
                return
            self._idle_due = None  # (uvicorn's keep-alive timeout: ended by any data)
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:
                self._disarm()  # a request head arrived: its body and response have their own limits

        def on_response_complete(self):
            # uvicorn's, with its keep-alive timeout kept by the connection's one timer (``_Limited``)
            self.server_state.total_requests += 1
            if self.transport.is_closing():
                return
            self._idle_due = due = self.loop.time() + self.timeout_keep_alive
            self._due(due)
            self.flow.resume_reading()
            if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
                self.conn.start_next_cycle()
                self.handle_events()  # (a pipelined request)
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm()

        def connection_lost(self, exc):
            self._release()
            super().connection_lost(exc)

    CompanionH11._limits, CompanionH11._caps = limits, connections
    return CompanionH11


_HEAD_BODY = b'{"error": "the request head is too large: at most %d KiB", "field": "headers"}'


def _httptools_class(limits, connections: Connections, front=None):
    import httptools
    from uvicorn.protocols.http.flow_control import HIGH_WATER_LIMIT
    from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

    from companion.web.asgi import BODY_DUE

    too_large = _HEAD_BODY % (limits.max_head // 1024)
    head_refused = (b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n"
                    b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(too_large), too_large))

    class CompanionHttpTools(_Limited, HttpToolsProtocol):
        _in_head = False  # between a request's first byte and the end of its head
        _head_bytes = 0
        _refused = False  # a head refused here: nothing more is read from the connection
        # a hot route's request the front answers without an ASGI task (``Front.lean_head``), its body still
        # being read: (its cycle, the app, what the front keeps of it)
        _lean = None
        # bytes received on the connection before the packet being read, and up to its end; the count before
        # the packet in which the current request began: a bound of its head's size (``on_headers_complete``)
        _fed = _got = _began = 0
        head_within = False  # the current request's head is surely within its limit (``Front.lean_head``)
        _defaults = None  # uvicorn's default headers, and their lines (``lean_answer``)
        _default_lines = b""
        _head_bound = 0

        def connection_made(self, transport):
            nodelay(transport)
            super().connection_made(transport)
            self._admit(transport)

        def is_idle(self):
            """No request under way (between requests, or before the first; a head not yet whole is none)."""
            return self.cycle is None or self.cycle.response_complete

        def data_received(self, data):
            if not self._admitted or self.parser is None or self._refused:
                return
            self._idle_due = None  # (uvicorn's keep-alive timeout: ended by any data)
            n = len(data)
            self._fed = got = self._got
            self._got = got + n
            if self._in_head or self.cycle is None or self.cycle.response_complete:
                self._head_bytes += n
            # uvicorn's data_received (its keep-alive timer is never set: the connection's one timer)
            try:
                self.parser.feed_data(data)
            except httptools.HttpParserError:
                msg = "Invalid HTTP request received."
                self.logger.warning(msg)
                self.send_400_response(msg)
                return
            except httptools.HttpParserUpgrade:
                if self._should_upgrade():
                    self.handle_websocket_upgrade()
                else:
                    self._unsupported_upgrade_warning()
            if self._in_head and self._head_bytes > limits.max_head and not self._refused:
                self._refuse_head()  # a head still incomplete past the limit (h11 refused it at 16 KB: 400)

        def _start_asgi_task(self, cycle, app):
            """(uvicorn's, for a request whose head is whole, or a pipelined one's turn.) A hot route's plain
            request goes to the front without a task once its body is here (at once for a body already
            read; else when its last byte comes, within the body deadline); any other, an ASGI task as
            uvicorn starts it."""
            lean = None
            if front is not None and not self._refused:
                # (the bound is this request's when its scope is the last one begun: not always for a
                # pipelined request's turn)
                self.head_within = cycle.scope is self.scope and self._head_bound <= limits.max_head
                lean = front.lean_head(self, cycle)
            if lean is None:
                super()._start_asgi_task(cycle, app)
                return
            self._lean = (cycle, app, lean)
            if not cycle.more_body:
                self._lean_go()
            else:  # its body comes after its head (on_message_complete), or not in time (_body_late)
                self._body_due = due = self.loop.time() + front.limits.body_timeout
                self._due(due)

        def _lean_go(self):
            cycle, _app, lean = self._lean
            self._lean = None
            self._body_due = None
            front.lean_run(self, cycle, lean)

        def _body_late(self):
            """The body of a request the front waits for did not come by its deadline: the ASGI path answers
            it as it answers a late body (408), its deadline passed."""
            if self._lean is None:
                return
            cycle, app, lean = self._lean
            self._lean = None
            front.lean_drop(lean)
            cycle.scope[BODY_DUE] = self.loop.time()
            super()._start_asgi_task(cycle, app)

        def lean_answer(self, cycle, status: int, lines: bytes, data: bytes, close: bool = False) -> None:
            """On the loop: the answer of a request the front served without ASGI (``lines``: its header lines,
            ``name: value\\r\\n`` each), written in one piece as uvicorn's ``send`` would write its two
            messages (its default headers first, ``connection: close`` when the connection ends with it),
            then the response done as uvicorn's is."""
            if cycle.disconnected or self.transport.is_closing():
                return
            defaults = cycle.default_headers  # (uvicorn's: the date, a new list each second)
            if defaults is not self._defaults:
                self._defaults = defaults
                self._default_lines = b"".join([b"%s: %s\r\n" % header for header in defaults])
            out = [STATUS_LINE[status], self._default_lines, lines]
            if close or not cycle.keep_alive:
                cycle.keep_alive = False
                out.append(b"connection: close\r\n")
            out += (b"\r\n", data)
            cycle.response_started = True
            cycle.waiting_for_100_continue = False
            self.transport.write(b"".join(out))
            cycle.response_complete = True
            cycle.message_event.set()
            if not cycle.keep_alive:
                self.transport.close()
            cycle.on_response()

        def on_message_begin(self):
            self._in_head = True
            self._began = self._fed
            super().on_message_begin()

        def on_headers_complete(self):
            self._in_head = False
            self._head_bytes = 0
            self._head_due = None  # a request head arrived: its body and response have their own limits
            if len(self.url) > limits.max_head:  # (the front refuses a long head in the caller's language;
                self._refuse_head()  # a target this long httptools would not even parse)
                return
            # the head lies in the packets from the one it began in to this one; each header line is at
            # least its name and value and 2 bytes, which ``asgi.head_size`` counts as 4
            self._head_bound = self._got - self._began + 2 * len(self.headers)
            super().on_headers_complete()

        def _refuse_head(self):
            self._refused = True
            self.transport.write(head_refused)
            self.transport.close()

        def on_body(self, body):
            # uvicorn's, for a head not refused here
            cycle = self.cycle
            if self._refused or (self.parser.should_upgrade() and self._should_upgrade()) or cycle.response_complete:
                return
            cycle.body += body
            if len(cycle.body) > HIGH_WATER_LIMIT:
                self.flow.pause_reading()
            cycle.message_event.set()

        def on_message_complete(self):
            # uvicorn's, for a head not refused here; then a lean request whose body is whole goes
            cycle = self.cycle
            if self._refused or (self.parser.should_upgrade() and self._should_upgrade()) or cycle.response_complete:
                return
            cycle.more_body = False
            cycle.message_event.set()
            lean = self._lean
            if lean is not None and lean[0] is cycle:
                self._lean_go()

        def on_response_complete(self):
            # uvicorn's, with its keep-alive timeout kept by the connection's one timer (``_Limited``)
            self.server_state.total_requests += 1
            if self.transport.is_closing():
                return
            self._idle_due = None
            self.flow.resume_reading()
            if self.pipeline:  # a pipelined request's turn
                cycle, app = self.pipeline.pop()
                self._start_asgi_task(cycle, app)
                if not self.transport.is_closing() and self.is_idle():
                    self._arm()
            else:
                self._arm(keep_alive=True)

        def connection_lost(self, exc):
            self._release()
            if self._lean is not None:  # gone while its body was awaited: nothing to answer
                front.lean_drop(self._lean[2])
                self._lean = None
            super().connection_lost(exc)

    CompanionHttpTools._limits, CompanionHttpTools._caps = limits, connections
    return CompanionHttpTools


def bind(host: str, port: int) -> socket.socket:
    """The listening socket: connections wait in its backlog until uvicorn's loop runs."""
    # an ASCII name as bytes, as the "idna" codec would give it: a str goes through that codec, which imports
    # encodings.idna, stringprep and unicodedata at every start (for "0.0.0.0")
    name = host.encode("ascii") if host and host.isascii() else (host or None)
    infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _, _, _, addr = infos[0]
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP (accepted
    # sockets inherit it); nodelay() sets it again per connection in any case
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def build(app, limits=None, threads: int = 16, http: str | None = None, context=None, make_app=None):
    """(uvicorn server, front) for the Flask ``app`` (or, ``app`` None, the app ``make_app()`` builds at its
    first need over ``context``: ``Front``); ``server.run(sockets=[sock])`` serves until a signal
    (SIGINT/SIGTERM) or ``server.should_exit = True``. ``http``: the parser (``protocol_class``)."""
    import uvicorn

    from companion.web.asgi import Front, Limits

    limits = limits or Limits()
    connections = Connections(limits)
    front = Front(app, limits, threads=threads, connections=connections, context=context, make_app=make_app)
    config = uvicorn.Config(
        front, http=protocol_class(limits, connections, http, front), ws="none", lifespan="off", loop="asyncio",
        interface="asgi3", log_config=None, access_log=False, proxy_headers=False, server_header=False,
        timeout_keep_alive=limits.keep_alive, timeout_graceful_shutdown=5, backlog=2048,
        h11_max_incomplete_event_size=16 * 1024)

    class Server(uvicorn.Server):
        async def startup(self, sockets=None):
            await super().startup(sockets=sockets)
            front._warm()  # listening: the Flask app built now, in a worker thread (the hot routes need none)

        async def shutdown(self, sockets=None):
            front.close_streams()  # every stream ends with its last chunk, then the connections close
            await asyncio.sleep(0.05)
            await super().shutdown(sockets)

    logging.getLogger("uvicorn.error").setLevel(logging.ERROR)  # malformed requests are routine noise
    return Server(config), front
