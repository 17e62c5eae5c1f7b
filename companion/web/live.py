"""Live updates: Server-Sent Events.

``GET /api/matches/<id>/stream``: every new event of the match (``event: event``, ``id: <seq>``),
clock ticks and alerts (``event: tick`` / ``event: alert``, no id), a ``snapshot`` of the whole view
on connect, and ``event: heartbeat`` (data ``{"every": seconds}``) when nothing else was sent for that
long (``SSE_HEARTBEAT``, 10 s by default): a named event, so the page's watchdog sees it (an SSE comment
fires no browser event) and a dead socket is found by the write. A client that reconnects sends
``Last-Event-ID`` (browsers do it by themselves; ``?last_event_id=N`` works too) and first gets
every event it missed, then a fresh snapshot.

``GET /api/stream``: the club-wide feed for the home page and the tournament overview
(``event: match`` when a match is created or changes, ticks and alerts of every match).
"""

from __future__ import annotations

import json
import logging
import queue
import threading

from flask import Blueprint, Response, g, request

from companion.errors import InputError
from companion.web.core import brief, ctx, match_card, present_event, present_view, role, seat_for

log = logging.getLogger(__name__)
bp = Blueprint("live", __name__)

ALL = "*"


class Subscriber:
    def __init__(self, key: str, maxsize: int = 1000):
        self.key = key
        self.q: queue.Queue = queue.Queue(maxsize=maxsize)
        self.overflow = False

    def put(self, item) -> None:
        try:
            self.q.put_nowait(item)
        except queue.Full:  # a stuck client: end its stream, it reconnects and resumes by Last-Event-ID
            self.overflow = True


class Hub:
    """Fan-out of events to the open streams (one queue per stream)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._subs: dict[str, set[Subscriber]] = {}

    def subscribe(self, key: str) -> Subscriber:
        sub = Subscriber(key)
        with self._lock:
            self._subs.setdefault(key, set()).add(sub)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        with self._lock:
            subs = self._subs.get(sub.key)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._subs[sub.key]

    def publish(self, key: str, kind: str, payload) -> None:
        with self._lock:
            subs = list(self._subs.get(key, ()))
        for s in subs:
            s.put((kind, payload))

    def count(self) -> int:
        with self._lock:
            return sum(len(s) for s in self._subs.values())

    def close_all(self) -> None:
        with self._lock:
            subs = [s for group in self._subs.values() for s in group]
        for s in subs:
            s.put(("close", None))

    # -- sources -------------------------------------------------------------
    def on_event(self, c, match_id: str, event: dict, fold) -> None:
        """MatchService subscriber: runs in the writer's thread after each committed event."""
        view = fold.view(c.store.clock.now_iso())
        self.publish(match_id, "event", {"event": event, "view": view,
                                         "status": "ended" if fold.ended() else "open"})
        card = match_card(c, c.store.get_match(match_id), with_view=False)
        card["seq"] = view["seq"]
        card["brief"] = brief(present_view(view, "viewer", None))
        self.publish(ALL, "match", card)

    def on_match(self, c, match_id: str) -> None:
        """MatchService subscriber: a match was created or imported; the club-wide stream shows its card."""
        self.publish(ALL, "match", match_card(c, c.store.get_match(match_id), "viewer", None))

    def on_clock(self, match_id: str, kind: str, payload) -> None:
        """ClockRunner subscriber: ``kind`` is ``tick`` or ``alert``."""
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
    if n < 0 or n > 2**53:
        raise InputError("must be a seq >= 0", field)
    return n


def heartbeat_event(every: float) -> str:
    """The heartbeat: a named event (``event: heartbeat``), never an SSE comment, which fires no event in
    the browser and so could not feed the page's watchdog."""
    return sse("heartbeat", {"every": every})


def _pump(sub, heartbeat: float):
    """What a subscriber's stream sends next: ``(kind, payload)`` from the hub, or ``(None, heartbeat)`` when
    nothing came for ``heartbeat`` seconds (the write that reveals a phone that went away). Ends when the
    hub closes the stream or the subscriber fell too far behind."""
    while not sub.overflow:
        try:
            kind, payload = sub.q.get(timeout=heartbeat)
        except queue.Empty:
            yield None, heartbeat_event(heartbeat)
            continue
        if kind == "close":
            return
        yield kind, payload


def _headers() -> dict:
    return {"Cache-Control": "no-cache, no-store", "X-Accel-Buffering": "no"}


@bp.get("/api/matches/<match_id>/stream")
def match_stream(match_id):
    c = ctx()
    c.store.get_match(match_id)  # 404 before the stream starts
    last = _last_event_id()
    who, seat = role(), seat_for(match_id)
    session_key = g.session["key"] if getattr(g, "session", None) else None
    game = c.store.get_match(match_id)["game"]

    def current_seat():
        # the phone may pick its seat after the stream opened: read it again for every event
        if session_key is None:
            return seat
        data = c.access.session_data(session_key)
        return ((data or {}).get("seats") or {}).get(match_id)

    heartbeat = float(c.extra.get("sse_heartbeat", 10))
    sub = c.hub.subscribe(match_id)

    def gen():
        nonlocal seat
        try:
            yield "retry: 2000\n\n"
            sent = 0
            if last is not None:
                ended = c.store.get_match(match_id)["status"] == "ended"
                for e in c.store.events(match_id, after_seq=last):
                    yield sse("event", {"event": present_event(e, game, who, seat, ended)}, id=e["seq"])
            view = c.service.state(match_id)
            sent = view["seq"]
            yield sse("snapshot", {"view": present_view(view, who, seat)}, id=sent)
            for kind, payload in _pump(sub, heartbeat):
                if kind is None:
                    yield payload  # heartbeat
                elif kind == "event":
                    seq = payload["event"]["seq"]
                    if seq <= sent:
                        continue
                    sent = seq
                    seat = current_seat()
                    ended = bool(payload["view"].get("ended")) or payload.get("status") == "ended"
                    yield sse("event", {"event": present_event(payload["event"], game, who, seat, ended),
                                        "view": present_view(payload["view"], who, seat)}, id=seq)
                else:
                    yield sse(kind, payload)
        finally:
            c.hub.unsubscribe(sub)

    return Response(gen(), mimetype="text/event-stream", headers=_headers())


@bp.get("/api/stream")
def club_stream():
    c = ctx()
    heartbeat = float(c.extra.get("sse_heartbeat", 10))
    sub = c.hub.subscribe(ALL)

    def gen():
        try:
            yield "retry: 2000\n\n"
            yield sse("hello", {"streams": c.hub.count()})
            for kind, payload in _pump(sub, heartbeat):
                yield payload if kind is None else sse(kind, payload)
        finally:
            c.hub.unsubscribe(sub)

    return Response(gen(), mimetype="text/event-stream", headers=_headers())
