"""The floor of the server rows: a bare ASGI app on the same HTTP stack as ``companion serve`` (uvicorn
on an asyncio loop with the same parser: httptools where its wheel is installed, else h11, as
``companion.web.server.protocol_class`` chooses; ``TCP_NODELAY`` on its connections), answering the same requests the
benchmark sends, with no framework, no storage, no validation and no rule behind them:

- ``GET /healthz`` → 200 ``{"ok": true}``;
- ``POST /api/matches`` → 201 ``{"id": ...}``;
- ``POST /api/matches/<id>/events`` → the body parsed as JSON, the event appended in memory, 201
  ``{"event": {...}}`` (a wrong ``expected_seq`` → 409 with ``last_seq``, as the server);
- ``GET /api/matches/<id>/stream`` → an SSE stream: ``event: snapshot`` first, then each event of the
  match as ``id: N`` / ``event: event`` / ``data: <the event as JSON>``, written to every stream through
  ASGI ``send``, as the server's streams are.

What a row of the real server costs beyond this is the application's (routing, auth, validation, the
fold, SQLite, the views), not the HTTP stack's. Run as ``python -m bench.floor HOST PORT``;
it prints ``ready`` once it listens. Only for ``make bench``; it listens on loopback only.
"""

from __future__ import annotations

import asyncio
import json
import sys


class Floor:
    def __init__(self):
        self.events: dict[str, list[dict]] = {}
        self.streams: dict[str, set[asyncio.Queue]] = {}
        self.next_id = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        method, path = scope["method"], scope["path"]
        if method == "GET" and path == "/healthz":
            return await self._json(send, 200, {"ok": True})
        parts = path.strip("/").split("/")
        if method == "POST" and path == "/api/matches":
            await self._body(receive)
            self.next_id += 1
            mid = f"m{self.next_id}"
            self.events[mid] = []
            self.streams[mid] = set()
            return await self._json(send, 201, {"id": mid})
        if len(parts) == 4 and parts[:2] == ["api", "matches"] and parts[2] in self.events:
            mid = parts[2]
            if method == "POST" and parts[3] in ("events", "undo"):
                doc = json.loads(await self._body(receive) or b"{}")
                log = self.events[mid]
                if doc.get("expected_seq") is not None and doc["expected_seq"] != len(log):
                    return await self._json(send, 409, {"error": "stale", "last_seq": len(log)})
                event = {"seq": len(log) + 1, "type": doc.get("type", "undo"), "data": doc.get("data")}
                log.append(event)
                chunk = (f"id: {event['seq']}\nevent: event\ndata: " + json.dumps(event) + "\n\n").encode()
                for q in self.streams[mid]:
                    q.put_nowait(chunk)
                return await self._json(send, 201, {"event": event})
            if method == "GET" and parts[3] == "stream":
                return await self._stream(mid, receive, send)
        return await self._json(send, 404, {"error": "not found"})

    @staticmethod
    async def _body(receive) -> bytes:
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                return body

    @staticmethod
    async def _json(send, status, doc):
        body = json.dumps(doc).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def _stream(self, mid, receive, send):
        q: asyncio.Queue = asyncio.Queue()
        self.streams[mid].add(q)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "more_body": True,
                    "body": b"event: snapshot\ndata: " + json.dumps({"seq": len(self.events[mid])}).encode() + b"\n\n"})
        async def gone():
            while (await receive())["type"] != "http.disconnect":
                pass

        left = asyncio.ensure_future(gone())  # the client went away
        try:
            while True:
                get = asyncio.ensure_future(q.get())
                done, _ = await asyncio.wait({get, left}, return_when=asyncio.FIRST_COMPLETED)
                if left in done:
                    get.cancel()
                    return
                await send({"type": "http.response.body", "body": get.result(), "more_body": True})
        finally:
            self.streams[mid].discard(q)
            left.cancel()


def stack() -> str:
    """The HTTP parser of the floor, the one ``companion serve`` uses here: httptools where it is
    installed, else h11."""
    try:
        import httptools  # noqa: F401
    except ImportError:
        return "h11"
    return "httptools"


def main(argv) -> int:
    import socket

    import uvicorn

    from companion.web.server import nodelay

    if stack() == "httptools":
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
    else:
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base

    class Protocol(Base):
        def connection_made(self, transport):
            nodelay(transport)
            super().connection_made(transport)

    host, port = argv[0], int(argv[1])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    config = uvicorn.Config(Floor(), http=Protocol, ws="none", lifespan="off", loop="asyncio", interface="asgi3",
                            log_config=None, access_log=False, server_header=False, timeout_keep_alive=5,
                            backlog=2048)
    print("ready", flush=True)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
