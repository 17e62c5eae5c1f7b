"""Timestamps: ISO-8601 UTC strings, and the time sources the core takes by injection.

A Pi has no battery clock: the wall clock may be wrong at boot and jump when it
syncs. ``MonotonicWallClock`` anchors the wall time once and then advances it by
the monotonic clock, so event timestamps written while the server runs never jump.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

from companion.base.errors import InputError


def to_iso(dt: datetime) -> str:
    if dt.tzinfo is timezone.utc:  # (the clocks' own: in UTC already)
        return dt.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    dt = dt.astimezone(timezone.utc)
    return dt.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(value: str, field: str = "at") -> datetime:
    if not isinstance(value, str):
        raise InputError("must be an ISO-8601 timestamp", field)
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        raise InputError("not an ISO-8601 timestamp: {value!r}", field, value=value) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        return dt.astimezone(timezone.utc)
    except OverflowError:  # e.g. 0001-01-01T00:00:00+05:00 is before year 1 in UTC
        raise InputError("out of range once in UTC: {value!r}", field, value=value) from None


def iso_before(a: str, b: str) -> bool:
    """``parse_iso(a) < parse_iso(b)``; two instants both written as ``to_iso`` writes them
    (``2026-12-01T20:15:03.250Z``: the same width, digits in the same places) compare as text, without
    reading them."""
    if len(a) == 24 == len(b) and a[23] == "Z" == b[23] and a[10] == "T" == b[10] and a[19] == "." == b[19] \
            and a[4] == "-" == b[4]:
        return a < b
    return parse_iso(a) < parse_iso(b)


class WallClock:
    """Plain wall clock (the CLI's default)."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def now_iso(self) -> str:
        return to_iso(self.now())


class MonotonicWallClock(WallClock):
    """Wall time read once, then advanced by ``time.monotonic`` (the server's clock)."""

    def __init__(self, monotonic=time.monotonic, wall=None):
        self._monotonic = monotonic
        self._anchor_wall = wall() if wall else datetime.now(timezone.utc)
        self._anchor_mono = monotonic()

    def now(self) -> datetime:
        return self._anchor_wall + timedelta(seconds=self._monotonic() - self._anchor_mono)

    def not_before(self, floor: datetime) -> None:
        """Never go behind a timestamp already stored (a clock that booted wrong)."""
        if self.now() < floor:
            self._anchor_wall += floor - self.now()

    def adopt(self, now: datetime) -> float:
        """From this instant, wall time is ``now`` (an organiser's phone's time on a box whose clock has no
        source): the shift in seconds. Durations are unaffected: the clock goes on by the monotonic clock."""
        shift = now - self.now()
        self._anchor_wall += shift
        return shift.total_seconds()


class OffsetClock(WallClock):
    """The system's wall clock moved by ``offset`` seconds (the time a box adopted, for the commands run
    beside the server: ``companion backup``)."""

    def __init__(self, offset: float = 0.0):
        self.offset = timedelta(seconds=offset)

    def now(self) -> datetime:
        return datetime.now(timezone.utc) + self.offset


class SkewedMonotonic:
    """``time.monotonic`` plus the seconds written in a file (tests of the real server: ``companion serve``
    with ``COMPANION_TEST_CLOCK_FILE``). The file is read at each call; a missing, empty or unreadable file
    adds nothing, and the skew never goes back (a monotonic clock)."""

    def __init__(self, path, monotonic=time.monotonic):
        self.path = path
        self._monotonic = monotonic
        self._skew = 0.0

    def __call__(self) -> float:
        try:
            with open(self.path, encoding="ascii") as f:
                skew = float(f.read().strip() or 0)
        except (OSError, ValueError):
            skew = self._skew
        self._skew = max(self._skew, skew)
        return self._monotonic() + self._skew


class FakeClock(WallClock):
    """A clock tests move by hand: no test sleeps for real time."""

    def __init__(self, start: datetime | str = "2026-01-01T18:00:00Z"):
        self._now = parse_iso(start) if isinstance(start, str) else start

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)

    def monotonic(self) -> float:
        return self._now.timestamp()

    def adopt(self, now: datetime) -> float:
        shift = (now - self._now).total_seconds()
        self._now = now
        return shift
