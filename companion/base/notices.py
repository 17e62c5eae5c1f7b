"""The one shape of what the match service, the clock runner and the GPIO panel tell their listeners.

Every listener is ``callback(notice)`` with a :class:`Notice`:

============  ==================  ==================================================================
source        ``kind``            ``payload``
============  ==================  ==================================================================
service       ``"event"``         the committed event (``notice.fold``: the match right after it)
service       ``"match"``         ``None``: the match was created or imported
clock runner  ``"tick"``          the clock's view, every second a clock runs
clock runner  ``"alert"``         ``{"alert": "15-minutes" | "5-minutes" | "time-up" | "ended", ...}``
GPIO panel    ``"prompt"``        a question for the phones (``{"kind": "conquered", "player", ...}``)
GPIO panel    ``"refused"``       a button's command the core refused (``{"button", "error", ...}``)
GPIO panel    ``"done"``          a button's command that went through (``{"button", "result"}``)
============  ==================  ==================================================================

:class:`Listeners` is the list each source keeps: a listener that raises is logged and never stops the
source (a stored event is never lost for a broken listener, the clock never stops for a closed stream).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Notice:
    kind: str
    match_id: str | None
    payload: Any = None
    fold: Any = None  # kind "event": the match's fold right after the event (never changed afterwards)

    @property
    def event(self) -> dict | None:
        """The committed event of an ``"event"`` notice (None for the other kinds)."""
        return self.payload if self.kind == "event" else None


Listener = Callable[[Notice], None]


class Listeners:
    """The listeners of one source, safe to change while another thread tells them."""

    def __init__(self, log: logging.Logger, what: str):
        self._log = log
        self._what = what
        self._lock = threading.Lock()
        # (a tuple replaced whole by add and remove: a source tells the listeners of that instant, lock-free)
        self._items: tuple[Listener, ...] = ()

    def add(self, callback: Listener) -> None:
        with self._lock:
            self._items = (*self._items, callback)

    def remove(self, callback: Listener) -> None:
        with self._lock:
            if callback in self._items:
                items = list(self._items)
                items.remove(callback)
                self._items = tuple(items)

    def tell(self, notice: Notice) -> None:
        for cb in self._items:
            try:
                cb(notice)
            except Exception:  # a broken listener never stops the source
                self._log.exception("%s listener failed on %s of match %s", self._what, notice.kind,
                                    notice.match_id)

    def __len__(self) -> int:
        return len(self._items)
