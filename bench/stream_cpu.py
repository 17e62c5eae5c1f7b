"""The event loop's CPU per stream per event: the ASGI front's match streams (``companion/web/asgi.py``, opened
by the Flask views, pumped by the front through ASGI ``send``) against raw asyncio writes of the same chunk to
the same kind of sockets, in one process on this machine (docs/benchmarks.md, "The streams near the floor").

    python -m bench.stream_cpu [--streams 1000] [--events 30] [--signed-in]

Each stream is a TCP loopback connection whose far end reads nothing during the run (its receive buffer
holds every event), its ``send`` framing each body as an HTTP/1.1 chunk and writing it to the transport (what
uvicorn's does, without its checks: a bound below the real server's cost). Each event is a Richelieu track correction
appended by the match service in a worker thread, as a POST's is; the loop thread's CPU time
(``time.thread_time``) is counted from the append to the loop idle again, less the same with no stream
open. The raw case writes the last event's chunk, as the streams got it, to as many asyncio transports, the
loop thread's CPU counted the same way, less an idle loop's. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import tempfile
import time
from types import SimpleNamespace


def _pairs(n: int):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(n + 16)
    out = []
    for _ in range(n):
        far = socket.create_connection(listener.getsockname())
        far.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        near, _ = listener.accept()
        near.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        out.append((near, far))
    listener.close()
    return out


class _Connections:
    """What the front asks of ``companion/web/shares.Connections``."""

    def __init__(self):
        self.by_client = {}

    def get(self, client):
        return self.by_client.get(client)

    def probation_of(self, client):
        return None

    def earned(self, client, trust):
        return True


def frame(data: bytes) -> bytes:
    """``data`` as one HTTP/1.1 chunk (what uvicorn's protocols write for one ``http.response.body``)."""
    return b"%x\r\n%b\r\n" % (len(data), data)


async def _settle(spins: int = 200) -> None:
    for _ in range(spins):
        await asyncio.sleep(0)


async def streams(c, match_id: str, n: int, events: int, bearer: str | None = None) -> tuple[float, bytes]:
    """(the loop thread's CPU seconds over ``events`` appends with ``n`` streams open, what one stream got).
    ``bearer``: each stream signed in with that token, and the whole process's CPU counted (such a stream
    asks who its caller is for each event, which may run in a worker thread)."""
    cpu = time.thread_time if bearer is None else time.process_time
    auth = [(b"authorization", f"Bearer {bearer}".encode())] if bearer else []
    from companion.web.app import create_app
    from companion.web.asgi import Front, Limits

    loop = asyncio.get_running_loop()
    front = Front(create_app({}, context=c), Limits(streams_per_address=10**6), threads=2, context=c)
    front.connections = _Connections()
    tasks, fars = [], []
    for i, (near, far) in enumerate(_pairs(n)):
        transport, _ = await loop.connect_accepted_socket(asyncio.Protocol, near)
        client = (f"127.0.0.{2 + i % 10}", 1024 + i)
        front.connections.by_client[client] = SimpleNamespace(transport=transport)
        left = asyncio.Event()
        asked = [False]

        async def receive(asked=asked, left=left):
            if not asked[0]:
                asked[0] = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await left.wait()
            return {"type": "http.disconnect"}

        async def send(message, transport=transport):  # (the head: what uvicorn would frame)
            if message["type"] == "http.response.body" and message.get("body"):
                transport.write(frame(message["body"]))

        scope = {"type": "http", "http_version": "1.1", "method": "GET", "scheme": "http",
                 "path": f"/api/matches/{match_id}/stream", "raw_path": b"", "root_path": "", "query_string": b"",
                 "client": client, "server": ("127.0.0.1", 80), "headers": [(b"host", b"localhost"), *auth]}
        tasks.append(loop.create_task(front(scope, receive, send)))
        fars.append((far, left))
    while c.hub.count() < n:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)
    spent = 0.0
    seq = c.store.last_seq(match_id)
    for _ in range(events):
        t0 = cpu()
        await loop.run_in_executor(None, lambda: c.service.append(
            match_id, "track.adjust", {"player": "Ada", "track": "money", "delta": 1}, expected_seq=seq))
        seq += 1
        await _settle()
        spent += cpu() - t0
        await asyncio.sleep(0.02)
    for _, left in fars:
        left.set()
    await asyncio.gather(*tasks)
    front.pool.shutdown()
    front.io.shutdown()
    got = fars[0][0].recv(1 << 22) if fars else b""
    for far, _ in fars:
        far.close()
    return spent, got


async def raw(n: int, events: int, chunk: bytes | None) -> float:
    """The loop thread's CPU seconds over ``events`` writes of ``chunk`` to ``n`` transports (None: an idle
    loop, the same spins)."""
    loop = asyncio.get_running_loop()
    pairs = _pairs(n) if chunk is not None else []
    transports = [(await loop.connect_accepted_socket(asyncio.Protocol, near))[0] for near, _ in pairs]
    await asyncio.sleep(0.2)
    spent = 0.0
    for _ in range(events):
        t0 = time.thread_time()
        for transport in transports:
            transport.write(chunk)
        await _settle()
        spent += time.thread_time() - t0
        await asyncio.sleep(0.02)
    for transport in transports:
        transport.close()
    for _, far in pairs:
        far.close()
    return spent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.stream_cpu", description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", type=int, default=1000)
    ap.add_argument("--events", type=int, default=30)
    ap.add_argument("--signed-in", action="store_true",
                    help="every stream signed in (a player's bearer token); the whole process's CPU counted")
    args = ap.parse_args(argv)
    from companion.runtime import Runtime
    from companion.web.context import open_context

    rt = Runtime.open(data_dir=tempfile.mkdtemp(prefix="companion-stream-cpu-"), runner=None)
    c = open_context({}, rt)
    match_id = c.service.create("richelieu", ["Ada", "Bo", "Cy", "Di"])["id"]
    n, events = args.streams, args.events
    bearer = None
    if args.signed_in:
        from companion.services.access import Access

        bearer = Access(c.store).create_api_token("player")[0]
    zero, _ = asyncio.run(streams(c, match_id, 0, events, bearer))
    spent, got = asyncio.run(streams(c, match_id, n, events, bearer))
    text = got.decode("latin-1")
    chunks = [part for part in text.split("\r\n") if part.startswith("id: ") and "event: event" in part]
    if len(chunks) != events:
        raise SystemExit(f"a stream got {len(chunks)} of {events} events")
    chunk = frame(chunks[-1].encode("latin-1"))
    idle = asyncio.run(raw(0, events, None))
    bare = asyncio.run(raw(n, events, chunk))
    ours, floor = (spent - zero) / (n * events), (bare - idle) / (n * events)
    print(json.dumps({"streams": n, "events": events, "signed_in": bool(bearer), "chunk_bytes": len(chunk),
                      "front_us": round(ours * 1e6, 2),
                      "raw_asyncio_us": round(floor * 1e6, 2), "ratio": round(ours / floor, 2)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
