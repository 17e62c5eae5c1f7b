"""The box's time from a trusted phone (docs/offline.md, "The box's time").

A Pi has no battery clock: without internet (no NTP) its date is whatever it last saved. When the system
clock is not synchronised and an organiser's phone signs in with a time more than ``DRIFT_S`` away, the box
adopts the phone's time for its own timestamps: the server's clock (``MonotonicWallClock.adopt``) jumps
once and then goes on by the monotonic clock, so match durations are unaffected (a running match clock is
paused at the old time and resumed at the new one, so no minute is counted twice or lost). The new time
is never before the latest instant already stored: the history never goes backwards. No root is needed:
the system clock itself is left alone.

The adopted offset (the phone's time less the system's) is kept in the settings with the boot it was
taken in (``/proc/sys/kernel/random/boot_id``): a restart of the service in the same boot takes it again;
the commands run beside the server (``companion backup``: its file names) read it through
:func:`offset_for_commands`; after a reboot, or once the system clock is synchronised, it is dropped.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from datetime import datetime, timedelta, timezone

from companion.base.timeutil import parse_iso, to_iso

log = logging.getLogger(__name__)

DRIFT_S = 120  # the phone's time is adopted only when it is more than 2 minutes away
SETTING = "box.time"
CLOCK_SET_REASON = "clock-set"  # the reason of the pause/resume around a jump (docs/offline.md)
_STA_UNSYNC = 0x0040
_TIME_ERROR = 5


class _Timex(ctypes.Structure):
    # struct timex (linux/timex.h): the fields up to "tai", then padding; only modes and status are read
    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
                ("constant", ctypes.c_long), ("precision", ctypes.c_long), ("tolerance", ctypes.c_long),
                ("time_sec", ctypes.c_long), ("time_usec", ctypes.c_long), ("tick", ctypes.c_long),
                ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long), ("shift", ctypes.c_int),
                ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long), ("calcnt", ctypes.c_long),
                ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long), ("tai", ctypes.c_int),
                ("_pad", ctypes.c_int * 11)]


def system_clock_synchronised() -> bool | None:
    """Whether the kernel says the system clock is synchronised (NTP: what ``timedatectl`` shows as
    "System clock synchronized"), by ``adjtimex`` read-only (modes 0: no privilege needed). None where it
    cannot be asked (not Linux)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        tx = _Timex()
        tx.modes = 0
        state = libc.adjtimex(ctypes.byref(tx))
    except (OSError, AttributeError):
        return None
    if state < 0:
        return None
    return state != _TIME_ERROR and not (tx.status & _STA_UNSYNC)


def boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            return fh.read().strip() or None
    except OSError:
        return None


def _system_now() -> datetime:
    return datetime.now(timezone.utc)


class BoxTime:
    """The policy: when to adopt a phone's time, and what it does to the running clocks.

    ``store`` (its settings and ``last_event_at``), ``clock`` (the server's: ``now()``, ``adopt(dt)``),
    ``runner`` (optional: ``pause_running(reason)`` and ``resume(match_id)``); ``synchronised``,
    ``boot`` and ``system_now`` are injectable (tests)."""

    def __init__(self, store, clock, runner=None, synchronised=system_clock_synchronised, boot=boot_id,
                 system_now=_system_now):
        self.store = store
        self.clock = clock
        self.runner = runner
        self.synchronised = synchronised
        self.boot = boot
        self.system_now = system_now

    def saved(self) -> dict | None:
        doc = self.store.get_setting(SETTING, None)
        if not isinstance(doc, dict) or doc.get("boot_id") is None or doc.get("boot_id") != self.boot():
            return None
        return doc

    def restore(self) -> float | None:
        """At the server's start: the time adopted earlier in this boot, again (a restart of the service).
        Returns the shift, or None."""
        if self.synchronised():
            return None
        doc = self.saved()
        if doc is None:
            return None
        target = self.system_now() + timedelta(seconds=float(doc["offset_s"]))
        return self._jump(target, pause_clocks=False)

    def offer(self, phone_time: str | None, field: str = "$.now") -> dict | None:
        """An organiser's phone says it is ``phone_time``: adopt it when the system clock has no source and
        the box is more than ``DRIFT_S`` away. Returns what was done (``{"from", "to", "shift_s"}``), or
        None."""
        if phone_time is None:
            return None
        phone = parse_iso(phone_time, field)
        if self.synchronised():
            return None
        before = self.clock.now()
        if abs((phone - before).total_seconds()) <= DRIFT_S:
            return None
        last = self.store.last_event_at()
        target = phone
        if last and parse_iso(last) > target:
            target = parse_iso(last)  # never before what is stored: the history does not go backwards
            if abs((target - before).total_seconds()) <= DRIFT_S:
                return None
        shift = self._jump(target, pause_clocks=True)
        doc = {"boot_id": self.boot(), "offset_s": (target - self.system_now()).total_seconds(),
               "adopted_at": to_iso(target), "phone_at": to_iso(phone), "from": to_iso(before)}
        self.store.set_setting(SETTING, doc)
        log.warning("the box's time was %s; it now takes an organiser's phone's: %s (%+.0f s)",
                    to_iso(before), to_iso(target), shift)
        return {"from": to_iso(before), "to": to_iso(target), "shift_s": shift}

    def _jump(self, target: datetime, pause_clocks: bool) -> float:
        paused = []
        if pause_clocks and self.runner is not None:
            paused = self.runner.pause_running(CLOCK_SET_REASON)  # stamped at the old time
        shift = self.clock.adopt(target)
        for match_id in paused:
            try:
                self.runner.resume(match_id)  # stamped at the new time: the gap is not counted
            except Exception:
                log.exception("could not resume match %s after the box's time was set", match_id)
        return shift

    def notice(self) -> dict:
        """For the organiser's page: whether the system clock is synchronised and the time adopted in this
        boot, if any."""
        synced = self.synchronised()
        doc = self.saved() if not synced else None
        return {"synchronised": synced, "adopted": ({"at": doc["adopted_at"], "from": doc.get("from")}
                                                    if doc else None)}


def offset_for_commands(store, synchronised=system_clock_synchronised, boot=boot_id) -> float:
    """The seconds to add to the system clock for a command run beside the server (``companion backup``'s
    file names): the time an organiser's phone gave in this boot, when the clock has no source; else 0."""
    try:
        if synchronised():
            return 0.0
        doc = store.get_setting(SETTING, None)
    except Exception:
        return 0.0
    if not isinstance(doc, dict) or doc.get("boot_id") is None or doc.get("boot_id") != boot():
        return 0.0
    try:
        return float(doc["offset_s"])
    except (KeyError, TypeError, ValueError):
        return 0.0
