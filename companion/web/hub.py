"""The live-update hub: fan-out of committed events, clock ticks and alerts to the open streams (one queue
per stream; the streams of an event loop woken a slice at a time), and the text of a Server-Sent Event.

Without Flask: the ASGI front and the runtime's listeners use it before the Flask app is built
(``companion/web/live.py`` has the streams' views).
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import queue
import threading
import weakref

from companion.web.calls import brief, match_card, present_view

log = logging.getLogger(__name__)

ALL = "*"
CLOSE = ("close", None)


class Subscriber:
    """A stream read by a thread (WSGI): a bounded queue."""

    def __init__(self, key: str, maxsize: int = 1000):
        self.key = key
        self.q: queue.Queue = queue.Queue(maxsize=maxsize)
        self.overflow = False

    def put(self, item) -> None:
        try:
            self.q.put_nowait(item)
        except queue.Full:  # a stuck client: end its stream, it reconnects and resumes by Last-Event-ID
            self.overflow = True


class _Waker:
    """Wakes an event loop's waiting streams a slice at a time.
    A new event of a match shown on 1,000 screens reaches 1,000 streams; done all at once, the loop would
    run them back to back before it polled its sockets again, so a player's request (and its answer, and
    ``/healthz``) would wait for the whole fan-out. A slice at a time, the loop reads and answers requests
    between slices."""

    SLICE = 50

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.pending: collections.deque = collections.deque()
        self.scheduled = False

    def wake(self, waiter: asyncio.Future) -> None:
        """On the loop."""
        self.pending.append(waiter)
        if not self.scheduled:
            self.scheduled = True
            self.loop.call_soon(self._run)

    def _run(self) -> None:
        pending = self.pending
        for _ in range(min(self.SLICE, len(pending))):
            waiter = pending.popleft()
            if not waiter.done():
                waiter.set_result(None)
        if pending:  # the woken tasks run first, then the loop polls its sockets, then the next slice
            self.loop.call_soon(self._run)
        else:
            self.scheduled = False


_wakers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Waker]" = weakref.WeakKeyDictionary()
_wakers_lock = threading.Lock()


def _waker(loop: asyncio.AbstractEventLoop) -> _Waker:
    with _wakers_lock:
        w = _wakers.get(loop)
        if w is None:
            w = _wakers[loop] = _Waker(loop)
        return w


class AsyncSubscriber:
    """A stream read by an event loop: items arrive through ``loop.call_soon_threadsafe`` (one call per
    published item for all the loop's subscribers, see ``Hub.publish``); bounded like ``Subscriber``.
    The reading task is woken through the loop's ``_Waker`` (a slice of streams at a time) and takes
    every item waiting at once; the heartbeat is one timer per stream, set again only when it fires
    (not one timer per item), so an event costs each stream little more than its write."""

    def __init__(self, key: str, loop: asyncio.AbstractEventLoop, maxsize: int = 1000):
        self.key = key
        self.loop = loop
        self.maxsize = maxsize
        self.items: collections.deque = collections.deque()
        self.overflow = False
        self._waker = _waker(loop)
        self._waiter: asyncio.Future | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._last = 0.0

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            self._waker.wake(waiter)

    def deliver(self, item) -> None:
        """On the loop."""
        if len(self.items) >= self.maxsize:
            self.overflow = True
            self._wake()
            return
        self.items.append(item)
        self._wake()

    def put(self, item) -> None:
        """From any thread."""
        try:
            self.loop.call_soon_threadsafe(self.deliver, item)
        except RuntimeError:  # the loop is closed: the server is stopping
            pass

    def _beat(self) -> None:
        self._timer = None
        self._wake()

    async def batches_until_closed(self, heartbeat: float):
        """Lists of ``(kind, payload, cache)`` items (all that were waiting), or None when nothing came
        for ``heartbeat`` seconds. Ends on ``close`` or when the subscriber fell too far behind."""
        loop = self.loop
        self._last = loop.time()
        try:
            while not self.overflow:
                if not self.items:
                    if loop.time() - self._last >= heartbeat:
                        self._last = loop.time()
                        yield None
                        continue
                    if self._timer is None:
                        self._timer = loop.call_at(self._last + heartbeat, self._beat)
                    self._waiter = loop.create_future()
                    await self._waiter
                    continue
                batch = []
                while self.items:
                    item = self.items.popleft()
                    if item[0] == "close":
                        if batch:
                            yield batch
                        return
                    batch.append(item)
                self._last = loop.time()
                yield batch
        finally:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None

    async def items_until_closed(self, heartbeat: float):
        """One item at a time (or None for a heartbeat): ``batches_until_closed`` flattened."""
        async for batch in self.batches_until_closed(heartbeat):
            if batch is None:
                yield None
            else:
                for item in batch:
                    yield item


def _deliver_all(subs, item) -> None:
    for s in subs:
        s.deliver(item)


class Hub:
    """Fan-out of events to the open streams (one queue per stream)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._subs: dict[str, set] = {}
        # per match listened to: the view and the cache of its last published event (the next event's
        # ``prev``: a stream that wrote that event sends the next one as a patch of it, companion/web/streams.py)
        self._last: dict[str, tuple] = {}

    def _add(self, sub):
        with self._lock:
            self._subs.setdefault(sub.key, set()).add(sub)
        return sub

    def subscribe(self, key: str) -> Subscriber:
        return self._add(Subscriber(key))

    def subscribe_async(self, key: str, loop: asyncio.AbstractEventLoop) -> AsyncSubscriber:
        return self._add(AsyncSubscriber(key, loop))

    def unsubscribe(self, sub) -> None:
        with self._lock:
            subs = self._subs.get(sub.key)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._subs[sub.key]
                    self._last.pop(sub.key, None)

    def _send(self, subs, item) -> None:
        by_loop: dict = {}
        for s in subs:
            loop = getattr(s, "loop", None)
            if loop is None:
                s.put(item)
            else:
                by_loop.setdefault(loop, []).append(s)
        for loop, group in by_loop.items():  # one wake-up of the loop for all its streams
            try:
                loop.call_soon_threadsafe(_deliver_all, group, item)
            except RuntimeError:
                pass

    def publish(self, key: str, kind: str, payload) -> None:
        with self._lock:
            subs = list(self._subs.get(key, ()))
        # the third element caches the text written for each kind of caller: 1,000 viewers of one
        # match cost one rendering, not 1,000
        self._send(subs, (kind, payload, {}))

    def publish_event(self, match_id: str, payload: dict) -> None:
        """A match's committed event (``{"event", "view", "status"}``) to its streams, linked to the one
        published before it: ``payload["prev"]`` is that one's ``(view, cache)``, or None (the first since a
        stream opened, or since nobody listened). The link is made and the item sent under one lock, so the
        streams receive the events in the order they were linked."""
        cache: dict = {}
        with self._lock:
            subs = list(self._subs.get(match_id, ()))
            payload["prev"] = self._last.get(match_id)
            if subs:
                self._last[match_id] = (payload["view"], cache)
            else:
                self._last.pop(match_id, None)
            self._send(subs, ("event", payload, cache))

    def publish_every(self, kind: str, payload) -> None:
        """To every open stream (a club-wide setting every TV follows: ``companion/web/tv.py``)."""
        with self._lock:
            subs = [s for group in self._subs.values() for s in group]
        self._send(subs, (kind, payload, {}))

    def count(self) -> int:
        with self._lock:
            return sum(len(s) for s in self._subs.values())

    def listened(self, key: str) -> bool:
        """Whether a stream of ``key`` is open now. A stream subscribes before it reads its snapshot, so
        an item not published because nobody listened is in the snapshot of whoever opens one next."""
        with self._lock:
            return bool(self._subs.get(key))

    def close_all(self) -> None:
        with self._lock:
            subs = [s for group in self._subs.values() for s in group]
        self._send(subs, CLOSE)

    # -- sources -------------------------------------------------------------
    def on_notice(self, c, notice) -> None:
        """The listener of the match service, the clock runner and the dice tables (``Runtime.subscribe``): a
        committed event (in the writer's thread, after the commit), a match created or imported, a clock's
        tick or alert, a roll's smart dice."""
        if notice.kind == "event":
            self._on_event(c, notice.match_id, notice.event, notice.fold)
        elif notice.kind == "match":  # the club-wide stream shows its card
            self.publish(ALL, "match", match_card(c, c.store.get_match(notice.match_id), "viewer", None))
        elif notice.kind in ("tick", "alert"):
            self._on_clock(notice.match_id, notice.kind, notice.payload)
        elif notice.kind == "dice":  # a roll's smart dice as they land: the match's pages
            self.publish(notice.match_id, "dice", notice.payload)

    def _on_event(self, c, match_id: str, event: dict, fold) -> None:
        """The view and the match card are made only for the streams open now (none: no work at all)."""
        match_listened, club_listened = self.listened(match_id), self.listened(ALL)
        if not match_listened:
            with self._lock:
                self._last.pop(match_id, None)  # (the next event is not linked to one nobody heard)
        if not (match_listened or club_listened):
            return
        view = fold.view(c.store.clock.now_iso())
        if match_listened:
            self.publish_event(match_id, {"event": event, "view": view,
                                          "status": "ended" if fold.ended() else "open"})
        if not club_listened:
            return
        card = match_card(c, c.store.get_match(match_id), with_view=False)
        card["seq"] = view["seq"]
        card["brief"] = brief(present_view(view, "viewer", None))
        self.publish(ALL, "match", card)

    def _on_clock(self, match_id: str, kind: str, payload) -> None:
        body = {"match_id": match_id, **payload} if isinstance(payload, dict) else {"match_id": match_id,
                                                                                   "value": payload}
        self.publish(match_id, kind, body)
        self.publish(ALL, kind, body)


def sse(kind: str, data, id: int | None = None) -> str:
    out = ""
    if id is not None:
        out += f"id: {id}\n"
    out += f"event: {kind}\n"
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    out += f"data: {text}\n\n"
    return out


def heartbeat_event(every: float) -> str:
    """The heartbeat: a named event (``event: heartbeat``), never an SSE comment, which fires no event in
    the browser and so could not feed the page's watchdog."""
    return sse("heartbeat", {"every": every})
