"""Live updates: Server-Sent Events.

``GET /api/matches/<id>/stream``: every new event of the match (``event: event``, ``id: <seq>``),
clock ticks and alerts (``event: tick`` / ``event: alert``, no id), a ``snapshot`` of the whole view
on connect (each with the match's ``status``, ``open`` or ``ended``: a game without the clock has no
``ended`` in its view), and ``event: heartbeat`` (data ``{"every": seconds}``) when nothing else was sent for that
long (``SSE_HEARTBEAT``, 10 s by default): a named event, so the page's watchdog sees it (an SSE comment
fires no browser event) and a dead socket is found by the write. A client that reconnects sends
``Last-Event-ID`` (browsers do it by themselves; ``?last_event_id=N`` works too) and first gets
every event it missed (``{"event"}`` alone), then a fresh snapshot.

A live event is ``{"event", "view", "status"}`` (the view whole) when it is the first this stream sends
since its snapshot, or when the caller it is shown to changed (a seat picked, a session ended), or when
the stream did not send the event before it; else ``{"event", "base", "patch", "status"}``: ``base`` the seq
of the event before (whose view the page holds as this stream sent it) and ``patch`` the operations that
turn that view into this one (``companion/base/jsondiff.py``: ``[path, value]`` sets, ``[path]`` removes a
key), made once per audience per event. The page applies it (``Companion.applyPatch``); one whose base it
does not hold starts the stream again from the last event it had, with a fresh snapshot.

``GET /api/stream``: the club-wide feed for the home page and the tournament overview
(``event: match`` when a match is created or changes, ticks and alerts of every match).

``event: seats`` (``{"taken": [names], "seat"}``): a seat taken, given or freed, or a seated phone signed out
(``companion/web/seats.py``, ``auth.py``), to the streams of the phones that sit or may sit (a player's or an
organiser's: ``seat`` is the caller's own, read again, so it is written per audience; a viewer's stream, the
TV page's, gets none), and in the head of an unseated player's stream after its snapshot: "Who are you?"
follows the table (``js/pages.js``). ``taken`` names only whose seats a player's phone holds, as the card shows.

``event: tv-sound``: the TVs' sound switched from another device (``companion/web/tv.py``), whenever it
changes, and in the head of a TV page's match stream (``?tv=1``).

The hub (fan-out to the streams) and the text of an event are ``companion/web/hub.py``'s; the views
(the 404, ``Last-Event-ID``, the snapshot: all SQLite reads) are ``companion/web/streams.py``'s, without
Flask: a stream becomes a ``Plan`` (the text sent first, the hub subscriber, and how each hub item is
written for this caller). Under ``companion serve`` the ASGI front finds these routes in the app's URL map,
opens the stream through them in a worker thread and pumps the plan on its event loop (a stream holds no
thread; ``companion/web/asgi.py``); under a plain WSGI server or Flask's test client the response body pumps
the plan in the request's thread.
"""

from __future__ import annotations

import logging

from flask import Blueprint, Response, request

from companion.web.core import here
from companion.web.hub import (ALL, CLOSE, AsyncSubscriber, Hub, Subscriber, _deliver_all, _Waker,  # noqa: F401
                               heartbeat_event, sse)
from companion.web.streams import Plan, club_stream as _club, match_stream as _match  # noqa: F401
from companion.web.streams import CONTENT_TYPE, HEADERS

log = logging.getLogger(__name__)
bp = Blueprint("live", __name__)


def _subscribe(c):
    """The subscriber factory of this request: an event loop's when the ASGI front pumps it, else a queue."""
    factory = request.environ.get("companion.subscribe")
    return factory if factory is not None else c.hub.subscribe


def _response(plan: Plan) -> Response:
    resp = Response(plan.body(), content_type=CONTENT_TYPE, headers=HEADERS)
    resp.plan = plan  # the ASGI front pumps it on its event loop instead of iterating the body
    resp.call_on_close(plan.close)  # a body never iterated still unsubscribes
    return resp


@bp.get("/api/matches/<match_id>/stream")
def match_stream(match_id):
    call = here()
    return _response(_match(call, match_id, _subscribe(call.c)))


@bp.get("/api/stream")
def club_stream():
    call = here()
    return _response(_club(call, _subscribe(call.c)))
