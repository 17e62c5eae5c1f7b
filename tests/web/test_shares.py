"""What one guest may hold of the box (companion/web/shares.py): connections per address and in all, the
box's own screen never refused, connections without credentials shed first when the box is full, an
organiser let in on probation over a cap; the bytes of request bodies in flight per address and in all."""

from companion.web.asgi import Limits
from companion.web.shares import ORGANISER, PLAYER, SMALL_BODY, Bodies, Connections, Ticket


class Conn:
    """A connection as the HTTP protocol gives it: idle or busy; ``shed()`` records that it was closed."""

    def __init__(self, idle=True):
        self.idle = idle
        self.closed = False

    def is_idle(self):
        return self.idle

    def shed(self):
        self.closed = True


def test_an_address_over_its_share_is_taken_on_probation_and_only_an_organiser_stays():
    conns = Connections(Limits(connections_per_address=2, max_connections=100))
    a = [Conn() for _ in range(2)]
    assert conns.admit(("10.0.0.1", 1), a[0]) and conns.admit(("10.0.0.1", 2), a[1])
    assert a[0].probation is None and a[1].probation is None
    over = [Conn() for _ in range(4)]
    assert all(conns.admit(("10.0.0.1", 3 + n), c) for n, c in enumerate(over))
    assert all(c.probation == "address" for c in over) and len(conns.probation["10.0.0.1"]) == 4
    # a guest's request on probation: closed after its answer; an organiser's: it stays, counted as others
    over[0].idle = over[1].idle = False  # (their requests arrived)
    assert conns.earned(("10.0.0.1", 3), PLAYER) is False
    assert conns.earned(("10.0.0.1", 4), ORGANISER) is True and over[1].probation is None
    # the places on probation are few: a new one makes room by closing the oldest that sent nothing yet
    assert conns.admit(("10.0.0.1", 8), Conn()) and not over[2].closed  # the organiser's place is free
    assert conns.admit(("10.0.0.1", 9), Conn()) and over[2].closed and not over[0].closed
    busy = [Conn(idle=False) for _ in range(4)]
    conns.probation["10.0.0.1"] = busy  # all of them busy with a request: the next one is refused
    assert not conns.admit(("10.0.0.1", 10), Conn())
    assert conns.admit(("10.0.0.2", 1), Conn()) and conns.per_address["10.0.0.2"] == 1


def test_the_box_s_own_screen_is_never_refused():
    conns = Connections(Limits(connections_per_address=1, max_connections=2))
    assert conns.admit(("10.0.0.1", 1), Conn()) and conns.admit(("10.0.0.2", 1), Conn(idle=False))
    for n in range(10):
        kiosk = Conn()
        assert conns.admit(("127.0.0.1", n), kiosk) and kiosk.probation is None
    assert conns.admit(("::1", 1), Conn())


def test_a_full_box_sheds_connections_without_credentials_first_from_the_address_holding_the_most():
    conns = Connections(Limits(connections_per_address=10, max_connections=7))
    player, organiser = Conn(), Conn()
    conns.admit(("10.0.0.9", 1), player)
    conns.earned(("10.0.0.9", 1), PLAYER)
    conns.admit(("10.0.0.8", 1), organiser)
    conns.earned(("10.0.0.8", 1), ORGANISER)
    guest = [Conn(idle=False), Conn(idle=False), Conn(), Conn(idle=False)]  # streams and an idle one
    for n, c in enumerate(guest):
        conns.admit(("10.0.0.1", n), c)
    phone = Conn()
    conns.admit(("10.0.0.2", 1), phone)
    assert len(conns) == 7
    # full: a new phone's connection sheds the guest's idle one, then its busy ones, oldest first
    newcomers = [Conn() for _ in range(3)]
    for n, c in enumerate(newcomers):
        assert conns.admit((f"10.0.1.{n}", 1), c) and c.probation is None
    assert [c.closed for c in guest] == [True, True, True, False]
    assert not phone.closed and not player.closed and not organiser.closed and len(conns) == 7
    # then the largest addresses without credentials are down to one each: the oldest of them goes
    assert conns.admit(("10.0.1.9", 1), Conn())
    assert guest[3].closed and not phone.closed and conns.shed_count == 4
    # nothing without credentials left: a player's connection goes, never the organiser's
    for n in range(3):
        conns.earned((f"10.0.1.{n}", 1), PLAYER)
    conns.earned(("10.0.1.9", 1), PLAYER)
    conns.earned(("10.0.0.2", 1), PLAYER)
    assert conns.admit(("10.0.2.1", 1), Conn())
    assert player.closed and not organiser.closed


def test_the_organiser_and_the_box_s_own_are_never_shed():
    conns = Connections(Limits(connections_per_address=10, max_connections=2))
    organiser, kiosk = Conn(), Conn()
    conns.admit(("10.0.0.8", 1), organiser)
    conns.earned(("10.0.0.8", 1), ORGANISER)
    conns.admit(("127.0.0.1", 1), kiosk)
    guest = Conn()
    assert conns.admit(("10.0.0.2", 1), guest) and guest.probation == "box"  # nothing to shed: on probation
    assert not organiser.closed and not kiosk.closed and conns.shed_count == 0
    assert conns.earned(("10.0.0.2", 1), PLAYER) is False  # a guest's first request: answered 429, closed


def test_bodies_are_counted_per_address_and_in_all():
    bodies = Bodies(Limits(bodies_per_address=100_000, bodies_in_all=250_000, max_body=90_000))
    small = Ticket(bodies, "10.0.0.1")
    assert small.grow(SMALL_BODY) is None and bodies.in_all == 0  # an ordinary write is not counted
    a = [Ticket(bodies, "10.0.0.1") for _ in range(2)]
    assert a[0].grow(60_000) is None
    assert a[1].grow(60_000) == "address"  # 120,000 > 100,000 for one address
    b = [Ticket(bodies, f"10.0.0.{n}") for n in range(2, 6)]
    assert [t.grow(80_000) for t in b] == [None, None, "box", "box"]  # 60,000 + 160,000 + 80,000 > 250,000
    kiosk = Ticket(bodies, "127.0.0.1")  # the box's own screen: no share per address, one body more in all
    assert kiosk.grow(80_000) is None
    a[0].close()
    kiosk.close()
    assert bodies.by_address.get("10.0.0.1") is None
    assert b[2].grow(80_000) is None
    for t in [*b, kiosk]:
        t.close()
    assert bodies.in_all == 0 and bodies.by_address == {}


def test_a_body_counted_as_it_arrives_grows_its_share():
    bodies = Bodies(Limits(bodies_per_address=50_000, bodies_in_all=1_000_000))
    t = Ticket(bodies, "10.0.0.1")
    for size in range(10_000, 50_001, 10_000):
        assert t.grow(size) is None
    assert bodies.in_all == 50_000 and t.grow(50_001) == "address"
    t.close()
    assert bodies.in_all == 0
