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

The hub (fan-out to the streams) and the text of an event are ``companion/web/hub.py``'s. A stream is
opened by the Flask view (the request gate, the 404, ``Last-Event-ID``, the snapshot: all
SQLite reads) and becomes a ``Plan``: the text sent first, the hub subscriber, and how each hub item is
written for this caller. Under ``companion serve`` the plan is pumped by the event loop of
``companion/web/asgi.py`` (a stream holds no thread); under a plain WSGI server or Flask's test client
the view's response body pumps it in the request's thread.
"""

from __future__ import annotations

import logging
import queue

from flask import Blueprint, Response, g, request

from companion.base.errors import InputError
from companion.services.access import role_in
from companion.web.core import SEQ_MAX, ctx, present_event, present_view, viewing
from companion.web.hub import (ALL, CLOSE, AsyncSubscriber, Hub, Subscriber, _deliver_all, _Waker,  # noqa: F401
                               heartbeat_event, sse)

log = logging.getLogger(__name__)
bp = Blueprint("live", __name__)


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
