"""Live updates: Server-Sent Events.

``GET /api/matches/<id>/stream``: every new event of the match (``event: event``, ``id: <seq>``),
clock ticks and alerts (``event: tick`` / ``event: alert``, no id), a ``snapshot`` of the whole view
on connect (each with the match's ``status``, ``open`` or ``ended``: a game without the clock has no
``ended`` in its view), and ``event: heartbeat`` (data ``{"every": seconds}``) when nothing else was sent for that
long (``SSE_HEARTBEAT``, 10 s by default): a named event, so the page's watchdog sees it (an SSE comment
fires no browser event) and a dead socket is found by the write. A client that reconnects sends
``Last-Event-ID`` (browsers do it by themselves; ``?last_event_id=N`` works too) and first gets
every event it missed, then a fresh snapshot.

``GET /api/stream``: the club-wide feed for the home page and the tournament overview
(``event: match`` when a match is created or changes, ticks and alerts of every match).

``event: tv-sound``: the TVs' sound switched from another device (``companion/web/tv.py``), whenever it
changes, and in the head of a TV page's match stream (``?tv=1``).

A stream is opened by the Flask view (the request gate, the 404, ``Last-Event-ID``, the snapshot: all
SQLite reads) and becomes a ``Plan``: the text sent first, the hub subscriber, and how each hub item is
written for this caller. Under ``companion serve`` the plan is pumped by the event loop of
``companion/web/asgi.py`` (a stream holds no thread); under a plain WSGI server or Flask's test client
the view's response body pumps it in the request's thread.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import queue
import threading
import weakref

from flask import Blueprint, Response, g, request

from companion.base.errors import InputError
from companion.services.access import role_in
from companion.web.core import SEQ_MAX, brief, ctx, match_card, present_event, present_view, viewing

log = logging.getLogger(__name__)
bp = Blueprint("live", __name__)

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
    """Wakes an event loop's waiting streams a slice at a time. A new event of a match shown on 1,000
    screens wakes 1,000 stream tasks; woken all at once they would run back to back before the loop
    polled its sockets again, so a player's request (and its answer, and ``/healthz``) would wait for the
    whole fan-out. A slice at a time, the loop reads and answers requests between slices."""

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
        else:
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
        if not (match_listened or club_listened):
            return
        view = fold.view(c.store.clock.now_iso())
        if match_listened:
            self.publish(match_id, "event", {"event": event, "view": view,
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




def _last_event_id() -> int | None:
    raw = request.headers.get("Last-Event-ID")
    field = "Last-Event-ID"
    if raw is None:
        raw = request.args.get("last_event_id")
        field = "last_event_id"
    if raw is None or raw.strip() == "":
        return None
    try:
        n = int(raw.strip())
    except ValueError:
        raise InputError("must be the seq of the last event received (a whole number)", field) from None
    if n < 0 or n > SEQ_MAX:
        raise InputError("must be a seq from 0 to {most}", field, most=SEQ_MAX)
    return n


def heartbeat_event(every: float) -> str:
    """The heartbeat: a named event (``event: heartbeat``), never an SSE comment, which fires no event in
    the browser and so could not feed the page's watchdog."""
    return sse("heartbeat", {"every": every})


def _pump(sub, heartbeat: float):
    """What a thread-read subscriber's stream sends next: a hub item, or None when nothing came for
    ``heartbeat`` seconds (the write that reveals a phone that went away). Ends when the hub closes the
    stream or the subscriber fell too far behind."""
    while not sub.overflow:
        try:
            item = sub.q.get(timeout=heartbeat)
        except queue.Empty:
            yield None
            continue
        if item[0] == "close":
            return
        yield item


class Plan:
    """An open stream: ``head`` (the text sent first), the hub subscriber, and ``render(item)``: the
    text for one hub item (None to skip it). ``blocking`` says that ``render`` reads the database (a
    player's seat, read again for every event), so an event loop runs it in a worker thread."""

    def __init__(self, hub, sub, head: list[str], render, heartbeat: float, blocking: bool = False):
        self.hub, self.sub, self.head, self.render = hub, sub, head, render
        self.heartbeat, self.blocking = heartbeat, blocking

    def close(self) -> None:
        self.hub.unsubscribe(self.sub)

    def body(self):
        """The whole stream, pumped by the calling thread (WSGI)."""
        try:
            yield from self.head
            for item in _pump(self.sub, self.heartbeat):
                if item is None:
                    yield heartbeat_event(self.heartbeat)
                    continue
                text = self.render(item)
                if text:
                    yield text
        finally:
            self.close()


def _headers() -> dict:
    return {"Cache-Control": "no-cache, no-store", "X-Accel-Buffering": "no"}


def _subscribe(c, key: str):
    """A subscriber for this request: an event loop's when the ASGI front serves it, else a queue."""
    factory = request.environ.get("companion.subscribe")
    return factory(key) if factory is not None else c.hub.subscribe(key)


def _response(plan: Plan) -> Response:
    resp = Response(plan.body(), mimetype="text/event-stream", headers=_headers())
    resp.plan = plan  # the ASGI front pumps it on its event loop instead of iterating the body
    resp.call_on_close(plan.close)  # a body never iterated still unsubscribes
    return resp


def _cached(item, key, make) -> bytes:
    """The bytes written for ``item`` to every caller of one kind (``key``: the kind of item, or the
    role and seat): made and encoded once per published item, shared by all its streams."""
    cache = item[2] if len(item) > 2 else None
    if cache is None:
        return make().encode("utf-8")
    data = cache.get(key)
    if data is None:
        data = cache[key] = make().encode("utf-8")
    return data


@bp.get("/api/matches/<match_id>/stream")
def match_stream(match_id):
    c = ctx()
    game = c.store.get_match(match_id)["game"]  # 404 before the stream starts
    last = _last_event_id()
    who, seat = viewing(match_id)
    public = request.args.get("as") == "viewer"  # the TV page: what a viewer sees, whoever opened it
    session_key = g.session["key"] if getattr(g, "session", None) and not public else None
    bearer_hash = _bearer_hash() if g.get("via") == "bearer" and not public else None
    heartbeat = c.sse_heartbeat
    sub = _subscribe(c, match_id)  # before the snapshot: nothing written meanwhile is missed
    try:
        head = ["retry: 2000\n\n"]
        if last is not None:
            ended = c.store.get_match(match_id)["status"] == "ended"
            for e in c.store.events(match_id, after_seq=last):
                head.append(sse("event", {"event": present_event(e, game, who, seat, ended)}, id=e["seq"]))
        view = c.service.state(match_id)
        status = "ended" if c.service.fold(match_id).ended() else "open"
        head.append(sse("snapshot", {"view": present_view(view, who, seat), "status": status}, id=view["seq"]))
        if request.args.get("tv") == "1":  # a TV page: its sound as set from another device (web/tv.py)
            from companion.web.tv import sound_state

            head.append(sse("tv-sound", sound_state(c.store, match_id)))
    except BaseException:
        c.hub.unsubscribe(sub)
        raise
    state = {"sent": view["seq"]}

    def caller():
        """Who the caller is now, read again for every event: the phone may pick its seat after the stream
        opened, and a session or token that ended (sign-out, revoked, expired, the match of a table's phone
        ended) sees from then on what a viewer sees."""
        if session_key is not None:
            sess = c.access.session_by_key(session_key)
            if sess is None:
                return "viewer", None
            scoped = sess.get("match_id") not in (None, match_id)
            return role_in(sess, match_id), None if scoped else (sess["data"].get("seats") or {}).get(match_id)
        if bearer_hash is not None:
            info = c.access.api_token_by_hash(bearer_hash)
            return (info["role"] if info is not None else "viewer"), None
        return who, seat

    def render(item):
        kind, payload = item[0], item[1]
        if kind != "event":
            return _cached(item, kind, lambda: sse(kind, payload))
        seq = payload["event"]["seq"]
        if seq <= state["sent"]:
            return None
        state["sent"] = seq
        now_who, now_seat = caller()
        ended = bool(payload["view"].get("ended")) or payload.get("status") == "ended"
        return _cached(item, (now_who, now_seat), lambda: sse(
            "event", {"event": present_event(payload["event"], game, now_who, now_seat, ended),
                      "view": present_view(payload["view"], now_who, now_seat),
                      "status": payload.get("status", "open")}, id=seq))

    blocking = session_key is not None or bearer_hash is not None
    return _response(Plan(c.hub, sub, head, render, heartbeat, blocking=blocking))


def _bearer_hash() -> str | None:
    from companion.services.access import hash_secret

    token = (request.headers.get("Authorization") or "").strip().partition(" ")[2].strip()
    return hash_secret(token) if token else None


@bp.get("/api/stream")
def club_stream():
    c = ctx()
    heartbeat = c.sse_heartbeat
    sub = _subscribe(c, ALL)
    head = ["retry: 2000\n\n", sse("hello", {"streams": c.hub.count()})]

    def render(item):
        kind, payload = item[0], item[1]
        return _cached(item, kind, lambda: sse(kind, payload))

    return _response(Plan(c.hub, sub, head, render, heartbeat))
