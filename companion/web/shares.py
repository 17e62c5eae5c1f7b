"""What one guest's phone may hold of the box, whatever HTTP stack serves it: connections, and the memory
of request bodies in flight (docs/limits.md has the figures a club can rely on).

- **Connections** (:class:`Connections`): one address holds at most ``connections_per_address``, the box
  ``max_connections``. The box's own screen (loopback: 127.0.0.1, ::1) is never refused. When the box is
  full, a new connection sheds an open one: the one with no credentials yet (never carried a valid session
  or token), from the address holding the most, idle before busy; then a player's; never an organiser's
  nor the box's own. A connection over a cap that sheds nothing is taken **on probation** (a few per
  address and in all): its first request is answered only for an organiser (``companion.probation`` in
  the WSGI environ, refused by the request gate with 429 otherwise), so an organiser behind a crowded
  address still gets in.
- **Bodies** (:class:`Bodies`): a body is refused by its endpoint's limit from its ``Content-Length``
  before anything is read (a chunked one when it passes the limit); what is read is counted while its
  request runs, at most ``bodies_per_address`` per address and ``bodies_in_all`` for the box (a body of a
  few KiB, every phone's ordinary write, is not counted: the connection caps bound those), so the box's
  memory stays within its budget whatever guests send.

Both live on the event loop's thread only (no locks).
"""

from __future__ import annotations

LOOPBACK = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})

# the trust a connection earned by the requests it carried (set by the request gate in the environ)
UNKNOWN, PLAYER, ORGANISER = 0, 1, 2
TRUST_KEY = "companion.trust"
PROBATION_KEY = "companion.probation"

SMALL_BODY = 4 * 1024  # bodies up to this are not counted (an ordinary write is a few hundred bytes)
PROBATION_PER_ADDRESS = 4
PROBATION_IN_ALL = 64


def is_loopback(addr: str) -> bool:
    return addr in LOOPBACK


class Connections:
    """The open connections, by address and by (address, port).

    A connection object (the HTTP protocol's) may have ``trust`` (0, 1, 2), ``probation`` (None, "address"
    or "box"), ``is_idle()`` (no request under way) and ``shed()`` (close it now); :meth:`admit` sets
    the first two."""

    def __init__(self, limits):
        self.limits = limits
        self.by_client: dict = {}
        self.by_address: dict[str, dict] = {}  # address -> {client: proto}, oldest first
        self.probation: dict[str, list] = {}  # address -> its connections on probation, oldest first
        self._client_of: dict[int, tuple] = {}
        self.shed_count = 0

    @property
    def per_address(self) -> dict[str, int]:
        return {a: len(c) for a, c in self.by_address.items()}

    def admit(self, client, proto) -> bool:
        """Whether ``proto`` may stay (False: refuse it, 429 and close). Sets ``proto.trust`` and
        ``proto.probation``."""
        addr = client[0] if client else ""
        _set(proto, "trust", UNKNOWN)
        _set(proto, "probation", None)
        if not is_loopback(addr):
            over = None
            if len(self.by_address.get(addr, ())) >= self.limits.connections_per_address:
                over = "address"
            elif len(self.by_client) >= self.limits.max_connections and not self._shed_one():
                over = "box"
            if over is not None:
                waiting = self.probation.setdefault(addr, [])
                if len(waiting) >= PROBATION_PER_ADDRESS:
                    # the oldest that has not sent its request yet makes room (a guest cannot keep an
                    # organiser out by holding every place on probation)
                    stale = next((p for p in waiting if _idle(p)), None)
                    if stale is None:
                        return False
                    self._forget(stale)
                    shed = getattr(stale, "shed", None)
                    if shed is not None:
                        shed()
                elif sum(len(w) for w in self.probation.values()) >= PROBATION_IN_ALL:
                    return False
                self.probation.setdefault(addr, []).append(proto)
                _set(proto, "probation", over)
        self.by_client[client] = proto
        self.by_address.setdefault(addr, {})[client] = proto
        self._client_of[id(proto)] = client
        return True

    def _shed_one(self) -> bool:
        """Close one open connection to make room: from the address holding the most, one with no
        credentials (an idle one before a busy one); then, the same way, a player's. Never the box's own
        nor an organiser's."""
        order = [conns for addr, conns in sorted(self.by_address.items(), key=lambda kv: -len(kv[1]))
                 if not is_loopback(addr)]
        for trust in (UNKNOWN, PLAYER):
            for conns in order:
                pick = None
                for proto in conns.values():
                    if getattr(proto, "trust", UNKNOWN) == trust and not getattr(proto, "probation", None):
                        if _idle(proto):
                            pick = proto
                            break
                        pick = pick or proto
                if pick is not None:
                    self.shed_count += 1
                    self._forget(pick)
                    shed = getattr(pick, "shed", None)
                    if shed is not None:
                        shed()
                    return True
        return False

    def _forget(self, proto) -> None:
        client = self._client_of.get(id(proto))
        if client is not None:
            self.release(client, proto)

    def release(self, client, proto) -> None:
        if self.by_client.get(client) is not proto:
            return
        del self.by_client[client]
        self._client_of.pop(id(proto), None)
        addr = client[0] if client else ""
        conns = self.by_address.get(addr)
        if conns is not None:
            conns.pop(client, None)
            if not conns:
                del self.by_address[addr]
        if getattr(proto, "probation", None):
            self._end_probation(addr, proto)

    def _end_probation(self, addr: str, proto) -> None:
        _set(proto, "probation", None)
        waiting = self.probation.get(addr, [])
        if proto in waiting:
            waiting.remove(proto)
        if not waiting:
            self.probation.pop(addr, None)

    def get(self, client):
        return self.by_client.get(client) if client else None

    def probation_of(self, client) -> str | None:
        proto = self.get(client)
        return getattr(proto, "probation", None) if proto is not None else None

    def earned(self, client, trust: int) -> bool:
        """After a request on ``client``'s connection: the trust its credentials earned. Returns whether
        the connection may stay open (a connection on probation stays only for an organiser)."""
        proto = self.get(client)
        if proto is None:
            return True
        if trust > getattr(proto, "trust", UNKNOWN):
            _set(proto, "trust", trust)
        if getattr(proto, "probation", None):
            if trust >= ORGANISER:
                self._end_probation(client[0], proto)
                return True
            return False
        return True

    def __len__(self) -> int:
        return len(self.by_client)


def _set(proto, name, value) -> None:
    try:
        setattr(proto, name, value)
    except AttributeError:  # (a plain object() in a test)
        pass


def _idle(proto) -> bool:
    fn = getattr(proto, "is_idle", None)
    return bool(fn()) if fn is not None else True


class Bodies:
    """The bytes of request bodies being read or handled, per address and in all."""

    def __init__(self, limits):
        self.limits = limits
        self.in_all = 0
        self.by_address: dict[str, int] = {}
        self.refused = 0

    def take(self, addr: str, n: int) -> str | None:
        """Count ``n`` more bytes for ``addr``; None when they fit, else what is full ("address" or "box")."""
        if n <= 0:
            return None
        mine = self.by_address.get(addr, 0)
        own = is_loopback(addr)  # the box's own screen: no share per address, one more body in all
        if not own and mine + n > self.limits.bodies_per_address:
            self.refused += 1
            return "address"
        if self.in_all + n > self.limits.bodies_in_all + (self.limits.max_body if own else 0):
            self.refused += 1
            return "box"
        self.by_address[addr] = mine + n
        self.in_all += n
        return None

    def give_back(self, addr: str, n: int) -> None:
        if n <= 0:
            return
        left = self.by_address.get(addr, 0) - n
        if left > 0:
            self.by_address[addr] = left
        else:
            self.by_address.pop(addr, None)
        self.in_all = max(0, self.in_all - n)


class Ticket:
    """One request's share of :class:`Bodies`: ``grow(size)`` as the body arrives (the size so far),
    ``close()`` once its response is sent."""

    def __init__(self, bodies: Bodies, addr: str):
        self.bodies = bodies
        self.addr = addr
        self.held = 0

    def grow(self, size: int) -> str | None:
        if size <= SMALL_BODY or size <= self.held:
            return None
        refused = self.bodies.take(self.addr, size - self.held)
        if refused is None:
            self.held = size
        return refused

    def close(self) -> None:
        self.bodies.give_back(self.addr, self.held)
        self.held = 0
