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


def protocol_class(limits, connections: Connections, http: str | None = None):
    """A factory of connections for uvicorn (``Config(http=...)``): uvicorn's own HTTP/1.1 protocol, unchanged,
    inside a ``Guarded`` connection that keeps the per-address caps, the header deadline and the head limit.
    The protocol is the one uvicorn's ``--http`` option names: ``"auto"`` (None), httptools (a C parser: about
    half the CPU of h11 per request here) where its wheel is installed (x86_64, aarch64), else h11 (pure
    Python: a 32-bit armv7l Pi has no httptools wheel); ``"h11"`` or ``"httptools"`` to choose (tests)."""
    from uvicorn.config import HTTP_PROTOCOLS
    from uvicorn.importer import import_from_string

    inner_class = import_from_string(HTTP_PROTOCOLS[http or "auto"])

    def make(**kwargs):  # (what uvicorn passes a protocol class: its config, the server's state, the loop)
        return Guarded(inner_class(**kwargs), limits, connections)

    return make


def _peer(transport) -> tuple | None:
    """The client's (address, port), as uvicorn puts it in a request's scope."""
    info = transport.get_extra_info("peername")
    if isinstance(info, (list, tuple)) and len(info) >= 2:
        return str(info[0]), int(info[1])
    return None


class Guarded(asyncio.Protocol):
    """One connection: uvicorn's protocol (``inner``), which parses and answers every request, behind what a
    box full of guests needs first. Only asyncio's protocol methods are defined here, each handing on to
    uvicorn's after its own part, so nothing of uvicorn's inside is assumed:

    - ``connection_made``: ``TCP_NODELAY``, then admitted or refused (``Connections``: a short 429 and
      closed; uvicorn never sees it); an admitted connection must send a whole request head within
      ``header_timeout``;
    - ``data_received``: the bytes received while no request is under way are counted: past ``max_head``
      without the blank line that ends a head within it, a 431 and the connection closed (nothing more of
      it reaches uvicorn's protocol);
    - ``connection_lost``: its place given back.

    The ASGI front says when a request begins and ends on the connection (``begin``, ``end``: it finds the
    connection by the scope's client in ``Connections``). A connection has **one timer** (``_wake``), due at
    its head deadline; a request's end moves the deadline later by storing it, and the timer, when it fires
    early, waits again for the deadline then stored (no timer made and cancelled per request). The
    keep-alive timeout of an idle connection is uvicorn's own (``timeout_keep_alive``)."""

    trust = 0  # (``Connections.admit`` sets both)
    probation = None

    def __init__(self, inner, limits, connections: Connections):
        self.inner = inner
        self._limits = limits
        self._caps = connections
        self.transport = None
        self.client = None
        self.loop = None
        self._admitted = False
        self._busy = 0  # requests under way (begun by the front, not yet ended)
        self._head = 0  # bytes received since the last request ended (or the connection opened)
        self._tail = b""  # the last bytes counted (a head's end may come across two reads)
        self._due = 0.0  # a whole request head by then (loop time), unless a request is under way
        self._timer = None  # the connection's one timer

    # -- asyncio's protocol ----------------------------------------------------------------------
    def connection_made(self, transport):
        nodelay(transport)
        self.transport = transport
        self.client = _peer(transport)
        self.loop = asyncio.get_running_loop()
        self._admitted = self._caps.admit(self.client, self)
        if not self._admitted:
            transport.write(_REFUSED)
            transport.close()
            return
        self.inner.connection_made(transport)
        self._arm()

    def data_received(self, data):
        if not self._admitted or self.transport.is_closing():
            return
        if not self._busy:
            self._head += len(data)
            if self._head > self._limits.max_head:
                # every byte counted since the connection was idle is this request's head until its blank line
                seen = self._tail + data
                end = seen.find(b"\r\n\r\n")
                if end < 0 or self._head - len(seen) + end + 4 > self._limits.max_head:
                    self._refuse_head()  # over the limit, whole or not
                    return
            self._tail = data[-3:]
        self.inner.data_received(data)

    def eof_received(self):
        if self._admitted:
            return self.inner.eof_received()
        return None

    def pause_writing(self):
        if self._admitted:
            self.inner.pause_writing()

    def resume_writing(self):
        if self._admitted:
            self.inner.resume_writing()

    def connection_lost(self, exc):
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._admitted:
            self._caps.release(self.client, self)
            self.inner.connection_lost(exc)

    # -- what the front and the caps ask ---------------------------------------------------------
    def begin(self):
        """A request's head is whole and the front has it (its body and answer have their own limits)."""
        self._busy += 1

    def end(self):
        """A request's answer is done: the next head is due within ``header_timeout``."""
        self._busy -= 1
        if not self._busy:
            self._head = 0
            self._tail = b""
            self._arm()

    def is_idle(self) -> bool:
        """No request under way, and no byte of one received yet."""
        return not self._busy and not self._head

    def shed(self):
        """Closed to make room for another connection (the box is full)."""
        self.transport.abort()

    # -- the deadline and the head limit -----------------------------------------------------------
    def _arm(self):
        self._due = due = self.loop.time() + self._limits.header_timeout
        if self._timer is None:
            self._timer = self.loop.call_at(due, self._wake)

    def _wake(self):
        self._timer = None
        if self.transport.is_closing() or self._busy:
            return  # (under way: its end arms the deadline again)
        if self.loop.time() >= self._due:
            self.transport.close()  # no whole request head in time: a slow or idle client
        else:
            self._timer = self.loop.call_at(self._due, self._wake)

    def _refuse_head(self):
        """A head still not whole past the limit: a 431, written here since no response is under way on the
        connection (nothing of it reaches uvicorn's protocol any more), and the connection ends."""
        if not self.transport.is_closing():
            self.transport.write(_head_refused(self._limits.max_head))
            self.transport.close()


_HEAD_BODY = b'{"error": "the request head is too large: at most %d KiB", "field": "headers"}'


def _head_refused(max_head: int) -> bytes:
    body = _HEAD_BODY % (max_head // 1024)
    return (b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n"
            b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))


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
    first need over ``context``: ``Front``); ``run(server, front, sockets=[sock])`` serves until a signal
    (SIGINT/SIGTERM) or ``server.should_exit = True``. ``http``: the parser (``protocol_class``). The server
    is uvicorn's own ``Server``, unchanged: ``serve`` drives it."""
    import uvicorn

    from companion.web.asgi import Front, Limits

    limits = limits or Limits()
    connections = Connections(limits)
    front = Front(app, limits, threads=threads, connections=connections, context=context, make_app=make_app)
    config = uvicorn.Config(
        front, http=protocol_class(limits, connections, http), ws="none", lifespan="off", loop="asyncio",
        interface="asgi3", log_config=None, access_log=False, proxy_headers=False, server_header=False,
        timeout_keep_alive=limits.keep_alive, timeout_graceful_shutdown=5, backlog=2048,
        h11_max_incomplete_event_size=limits.max_head)
    logging.getLogger("uvicorn.error").setLevel(logging.ERROR)  # malformed requests are routine noise
    return uvicorn.Server(config), front


async def serve(server, front, sockets=None) -> None:
    """Serves until a signal (SIGINT/SIGTERM: uvicorn's own handlers, raised again once stopped) or
    ``server.should_exit``, through uvicorn's public steps alone (``capture_signals``, ``startup``,
    ``main_loop``, ``shutdown``; what ``uvicorn.Server.serve`` does, with the front's two steps between):
    once it listens, the Flask app is built in a worker thread (``front.listening``); at a stop, every
    stream ends with its last chunk (``front.close_streams``) before uvicorn closes the connections (its
    ``shutdown`` waits for every response under way to end, so an open stream would hold it until
    ``timeout_graceful_shutdown`` and then be cut: the ASGI lifespan's shutdown comes only after that).
    docs/server.md says why this and not a subclass of uvicorn's ``Server``."""
    config = server.config
    if not config.loaded:
        config.load()
    server.lifespan = config.lifespan_class(config)  # (lifespan="off": a no-op that ``startup`` awaits)
    with server.capture_signals():
        await server.startup(sockets=sockets)
        if not server.should_exit:
            front.listening()  # the Flask app built now, in a worker thread
            await server.main_loop()
        if server.started:
            front.close_streams()  # every stream ends with its last chunk, then the connections close
            await asyncio.sleep(0.05)
            await server.shutdown(sockets=sockets)


def run(server, front, sockets=None) -> None:
    """``serve`` on a new event loop (the standard asyncio loop: ``Config(loop="asyncio")``)."""
    asyncio.run(serve(server, front, sockets))
