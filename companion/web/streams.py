"""The live streams' views, without Flask: what a stream sends first and how each hub item is written for
its caller (``Plan``). ``GET /api/matches/<id>/stream`` and ``GET /api/stream`` (what they send:
``companion/web/live.py``).

Flask's views (``live.py``) call these with a ``Call``, in a worker thread of the ASGI front (which pumps the
plan on its event loop: ``companion/web/asgi.py``) or in a plain WSGI server's thread.

Hidden information stays per caller: the text of an item is made once per audience (the caller's role and
seat, read again for every event) and shared, as bytes, by every stream of that audience (``cached``).
"""

from __future__ import annotations

import queue

from companion.base import jsondiff
from companion.base.errors import InputError
from companion.services.access import role_in
from companion.web.calls import Call, present_event, present_view
from companion.web.hub import ALL, heartbeat_event, sse

# the largest event seq a query may name (``?after=``, ``Last-Event-ID``): JSON's largest exact whole number
SEQ_MAX = 2**53

# the TVs' sound (companion/web/tv.py: its routes), kept in the settings table
TV_CLUB_KEY = "tv.sound_off"
TV_MATCHES_KEY = "tv.sound_off_matches"


def muted_matches(store) -> list[str]:
    v = store.get_setting(TV_MATCHES_KEY, [])
    return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []


def sound_state(store, match_id: str | None = None) -> dict:
    """``{"club_off"}``, with ``match_off`` for one match (what a TV's stream starts with)."""
    out = {"club_off": bool(store.get_setting(TV_CLUB_KEY, False))}
    if match_id is not None:
        out["match_off"] = match_id in muted_matches(store)
    return out


def last_event_id(request) -> int | None:
    """``Last-Event-ID`` (what a browser sends when it reconnects), else ``?last_event_id=``."""
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
    """An open stream: ``head`` (the text sent first), the hub subscriber, and ``render(item, looked=None)``:
    the bytes for one hub item (None to skip it; the server frames them).
    ``blocking`` says that ``render`` reads the database (a signed-in caller's session or token, and a
    player's seat, read again for every event), so an event loop runs it in a worker thread, unless
    ``look()`` (no statement: the rows the store keeps) says who the caller is now: then ``render(item,
    looked)`` with that answer runs on the loop. ``look()`` is None when it cannot say."""

    def __init__(self, hub, sub, head: list[str], render, heartbeat: float, blocking: bool = False, look=None):
        self.hub, self.sub, self.head, self.render = hub, sub, head, render
        self.heartbeat, self.blocking, self.look = heartbeat, blocking, look

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
                data = self.render(item)
                if data:
                    yield data
        finally:
            self.close()


# what a stream's response carries (beside the security headers every answer gets: gate.answer_headers)
CONTENT_TYPE = "text/event-stream; charset=utf-8"
HEADERS = {"Cache-Control": "no-cache, no-store", "X-Accel-Buffering": "no"}


def cached(item, key, make) -> bytes:
    """The bytes written for ``item`` to every caller of one audience (``key``: the kind of item, or the
    role and seat): made and encoded once per published item, shared by all its streams."""
    cache = item[2] if len(item) > 2 else None
    if cache is None:
        return make().encode("utf-8")
    data = cache.get(key)
    if data is None:
        data = cache[key] = make().encode("utf-8")
    return data


def seats_taken(c, match_id: str, players: list[str] | None = None) -> list[str]:
    """The players of the match whose seat a player's phone holds, in the match's order: what "Who are you?"
    says of the others (taken or free, never which phone), on the page and live (``event: seats``)."""
    held = {r["player"] for r in c.access.seats(match_id) if r["role"] == "player"}
    return [p for p in (players if players is not None else c.store.get_match(match_id)["players"]) if p in held]


def publish_seats(c, match_id: str) -> None:
    """After a seat was taken, given or freed (or a phone holding one signed out): the match's streams say it
    (``event: seats``, written per audience by ``match_stream``); nothing when none is open."""
    if c.hub.listened(match_id):
        c.hub.publish(match_id, "seats", {"taken": seats_taken(c, match_id)})


def match_stream(call: Call, match_id: str, subscribe) -> Plan:
    """``GET /api/matches/<id>/stream`` for ``call`` (already through the gate); ``subscribe(key)``: the hub
    subscriber of the server that pumps it (an event loop's, or a thread's queue)."""
    c, request = call.c, call.request
    game = c.store.get_match(match_id)["game"]  # 404 before the stream starts
    last = last_event_id(request)
    who, seat = call.viewing(match_id)
    public = request.args.get("as") == "viewer"  # the TV page: what a viewer sees, whoever opened it
    session = call.session
    session_key = session["key"] if session and not public else None
    bearer_hash = _bearer_hash(request) if call.g.get("via") == "bearer" and not public else None
    heartbeat = c.sse_heartbeat
    sub = subscribe(match_id)  # before the snapshot: nothing written meanwhile is missed
    try:
        head = ["retry: 2000\n\n"]
        if last is not None:
            ended = c.store.get_match(match_id)["status"] == "ended"
            for e in c.store.events(match_id, after_seq=last):
                head.append(sse("event", {"event": present_event(e, game, who, seat, ended)}, id=e["seq"]))
        view = c.service.state(match_id)
        status = "ended" if c.service.fold(match_id).ended() else "open"
        head.append(sse("snapshot", {"view": present_view(view, who, seat), "status": status}, id=view["seq"]))
        if who == "player" and seat is None and status == "open":  # "Who are you?": the seats as they are now
            head.append(sse("seats", {"taken": seats_taken(c, match_id), "seat": None}))
        if request.args.get("tv") == "1":  # a TV page: its sound as set from another device (web/tv.py)
            head.append(sse("tv-sound", sound_state(c.store, match_id)))
    except BaseException:
        c.hub.unsubscribe(sub)
        raise
    # the seq of the last event written, the hub item whose view it carried (its cache: see ``render``) and
    # for whom it was presented
    state = {"sent": view["seq"], "basis": None, "aud": None}
    blocking = session_key is not None or bearer_hash is not None  # (else the caller never changes)

    gone = []  # [True] once the session or token ended: it never comes back

    def caller():
        """Who the caller is now, read again for every event: the phone may pick its seat after the stream
        opened, and a session or token that ended (sign-out, revoked, expired, the match of a table's phone
        ended) sees from then on what a viewer sees."""
        if gone:
            return "viewer", None
        if session_key is not None:
            return session_caller(c.access.session_by_key(session_key))
        if bearer_hash is not None:
            return token_caller(c.access.api_token_by_hash(bearer_hash))
        return who, seat

    def look():
        """``caller()`` from the rows the store keeps, without a statement (on the event loop: no trip to a
        worker thread), or None when they cannot say (a row forgotten by a write, another process's commit):
        then ``caller()`` reads them, in a worker thread. The kept rows are as fresh as the event's own write
        (its BEGIN looked at other processes' commits: ``Database.kept``)."""
        if gone:
            return "viewer", None
        if session_key is not None:
            sess = c.access.session_by_key_kept(session_key)
            return None if sess is False else session_caller(sess)
        if bearer_hash is not None:
            info = c.access.api_token_by_hash_kept(bearer_hash)
            return None if info is False else token_caller(info)
        return who, seat

    def session_caller(sess):
        if sess is None:
            gone.append(True)
            return "viewer", None
        scoped = sess.get("match_id") not in (None, match_id)
        return role_in(sess, match_id), None if scoped else (sess["data"].get("seats") or {}).get(match_id)

    def token_caller(info):
        if info is None:
            gone.append(True)
            return "viewer", None
        return info["role"], None

    def render(item, looked=None):
        kind, payload = item[0], item[1]
        if kind == "seats":  # a seat taken or freed: to the phones that sit or may sit, each with its own seat
            aud = looked if looked is not None else caller() if blocking else (who, seat)
            if aud[0] not in ("player", "organiser"):
                return None
            return cached(item, ("seats", *aud), lambda: sse("seats", {**payload, "seat": aud[1]}))
        if kind != "event":
            return cached(item, kind, lambda: sse(kind, payload))
        seq = payload["event"]["seq"]
        if seq <= state["sent"]:
            return None
        aud = looked if looked is not None else caller() if blocking else (who, seat)
        cache = item[2] if len(item) > 2 else None
        basis, last_aud = state["basis"], state["aud"]
        state.update(sent=seq, basis=cache, aud=aud)
        prev = payload.get("prev")
        if prev is not None and basis is not None and prev[1] is basis and last_aud == aud and cache is not None:
            # the page holds the view of the event this one follows, as this caller saw it: only what changed
            return cached(item, ("patch", *aud), lambda: event_text(payload, cache, aud, prev))
        return cached(item, aud, lambda: event_text(payload, cache, aud))

    def event_text(payload, cache, aud, prev=None) -> str:
        """The event for this audience, once per published event: with the whole view, or (``prev``: the
        hub's previous event of the match) with ``base`` (that event's seq) and ``patch``, the operations that
        turn this audience's view of it into this one's (``companion.base.jsondiff``)."""
        now_who, now_seat = aud
        view = payload["view"]
        ended = bool(view.get("ended")) or payload.get("status") == "ended"
        out = {"event": present_event(payload["event"], game, now_who, now_seat, ended)}
        if prev is None:
            out["view"] = presented(view, cache, aud)
        else:
            before = presented(prev[0], prev[1], aud)
            out["base"] = prev[0]["seq"]
            out["patch"] = jsondiff.diff(before, presented(view, cache, aud))
        out["status"] = payload.get("status", "open")
        return sse("event", out, id=payload["event"]["seq"])

    def presented(view, cache, aud):
        """``view`` as ``aud`` sees it, kept in its hub item's cache for the next event's patch."""
        if cache is None:
            return present_view(view, *aud)
        key = ("view", *aud)
        got = cache.get(key)
        if got is None:
            got = cache[key] = present_view(view, *aud)
        return got

    return Plan(c.hub, sub, head, render, heartbeat, blocking=blocking, look=look if blocking else None)


def _bearer_hash(request) -> str | None:
    from companion.services.access import hash_secret

    token = (request.headers.get("Authorization") or "").strip().partition(" ")[2].strip()
    return hash_secret(token) if token else None


def club_stream(call: Call, subscribe) -> Plan:
    """``GET /api/stream``: the club-wide feed (every match's card as it changes, ticks and alerts)."""
    c = call.c
    sub = subscribe(ALL)
    head = ["retry: 2000\n\n", sse("hello", {"streams": c.hub.count()})]

    def render(item, looked=None):
        kind, payload = item[0], item[1]
        return cached(item, kind, lambda: sse(kind, payload))

    return Plan(c.hub, sub, head, render, c.sse_heartbeat)
