"""The bytes on the air: a match page's first load and its reload as a phone's browser makes them, and the
bytes a phone's live stream receives per event, for each game, with and without compression.

- **Pages**: the real ``companion serve`` on loopback (a new data folder, one match of each game, four
  players, nothing recorded), Debian's Chromium at 390 px as a phone that did not sign in (a first visit:
  an empty cache), each request and its bytes on the wire (headers and body, as received) read from the
  DevTools protocol's network events; the live stream is counted as a request, its bytes are not (it stays
  open). "As it is": the same load with ``Accept-Encoding: identity`` (nothing compressed, neither the static
  files made ahead nor the pages). The reload is the same tab's reload (the browser's Reload): the static
  bytes it fetched again must be none (each is named by its content's hash and kept ``immutable``).
- **Streams** (``bench/stream_payload.py``: a whole random legal match of each game through the real
  streams' views): the bytes of each event as a seated phone's stream sends it now, against the same
  events through one gzip stream per phone (level 1, a flush after each event: what a browser can read as
  it comes) and through a gzip of each event alone (the same bytes for every phone of an audience, as the
  plain ones are); the CPU of the per-stream compression per event and the memory its zlib state holds
  per open stream.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
import tracemalloc
import zlib
from pathlib import Path

BUDGET_S = 180.0

GAMES = ["web-of-power", "richelieu", "rome-is-burning", "conquest-italy"]
PLAYERS = ["Anna", "Bruno", "Carla", "Dario"]
FRAME = 1460  # a Wi-Fi frame's TCP payload (an Ethernet MTU of 1,500 less the IP and TCP headers)
FIRST_LOAD_KB = 120.0  # a first visit's bytes on the air
FIRST_LOAD_REQUESTS = 20.0
ROOM_STREAMS = 1000  # the room's guest flood (bench/room.py): what per-stream state is multiplied by
ROOM_RSS_MB = 150.0  # the room's RSS target with 1,000 streams


def _load(browser, base: str, path: str, plain: bool):
    """A first visit of ``path`` in a new context, then its reload: (first, reload), each a dict of the
    requests made and the bytes received."""
    ctx = browser.new_context(base_url=base, viewport={"width": 390, "height": 844}, locale="en-GB")
    try:
        page = ctx.new_page()
        cdp = ctx.new_cdp_session(page)
        cdp.send("Network.enable")
        if plain:
            cdp.send("Network.setExtraHTTPHeaders", {"headers": {"Accept-Encoding": "identity"}})
        seen: dict = {}
        state = {"last": time.monotonic()}

        def sent(ev):
            seen[ev["requestId"]] = {"url": ev["request"]["url"], "type": ev.get("type"), "done": False, "bytes": 0,
                                     "encoding": None, "cached": False}
            state["last"] = time.monotonic()

        def answered(ev):
            r = seen.get(ev["requestId"])
            if r is not None:
                headers = {k.lower(): v for k, v in ev["response"].get("headers", {}).items()}
                r["encoding"] = headers.get("content-encoding")
                r["cached"] = bool(ev["response"].get("fromDiskCache") or ev["response"].get("fromPrefetchCache"))
                r["status"] = ev["response"].get("status")

        def finished(ev):
            r = seen.get(ev["requestId"])
            if r is not None:
                r["done"], r["bytes"] = True, ev.get("encodedDataLength", 0)
                state["last"] = time.monotonic()

        def failed(ev):
            r = seen.get(ev["requestId"])
            if r is not None:
                r["done"] = True
                state["last"] = time.monotonic()

        def cached(ev):
            r = seen.get(ev["requestId"])
            if r is not None:
                r["cached"] = True

        cdp.on("Network.requestWillBeSent", sent)
        cdp.on("Network.responseReceived", answered)
        cdp.on("Network.loadingFinished", finished)
        cdp.on("Network.loadingFailed", failed)
        cdp.on("Network.requestServedFromCache", cached)

        def settle():
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                page.wait_for_timeout(100)
                busy = [r for r in seen.values() if not r["done"] and r["type"] != "EventSource"]
                if not busy and time.monotonic() - state["last"] > 0.6:
                    break
            out = {"requests": len(seen), "bytes": 0, "static_bytes": 0, "streams": 0, "compressed": 0,
                   "network": 0, "page": 0}
            for r in seen.values():
                if r["type"] == "EventSource":
                    out["streams"] += 1
                    continue
                if r["cached"] or not r["bytes"]:
                    continue
                out["network"] += 1
                out["bytes"] += r["bytes"]
                if r["type"] == "Document":
                    out["page"] += r["bytes"]
                if "/static/" in r["url"]:
                    out["static_bytes"] += r["bytes"]
                if r["encoding"]:
                    out["compressed"] += 1
            return out

        page.goto(path, wait_until="load")
        first = settle()
        seen.clear()
        page.reload(wait_until="load")
        again = settle()
        return first, again
    finally:
        ctx.close()


def _page_rows():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.browser.trackers_kit import organiser_api
    from tests.conftest import CHROMIUM, CHROMIUM_ARGS
    from tests.web.serverproc import Server

    if not os.path.exists(CHROMIUM):
        yield {"name": "page bytes: a match page's first visit", "median_ms": None, "verdict": "SKIP",
               "note": f"no Chromium at {CHROMIUM}"}
        return
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="bench-bytes-") as tmp, sync_playwright() as p:
        server = Server(Path(tmp) / "data")
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            api = organiser_api(server)
            mids = {g: api.create(g, PLAYERS) for g in GAMES}
            for game in GAMES:
                path = f"/m/{mids[game]}"
                _load(browser, server.url, path, False)  # (once first: the box's first render of the page)
                first, again = _load(browser, server.url, path, False)
                plain, _ = _load(browser, server.url, path, True)
                yield {"name": f"page bytes: {game} match page, a phone's first visit (compressed)",
                       "median_ms": first["bytes"] / 1024, "target_ms": FIRST_LOAD_KB, "unit": "KB",
                       "note": f"{plain['bytes'] / 1024:.1f} KB as it is (Accept-Encoding: identity); the page "
                               f"itself {first['page'] / 1024:.1f} KB ({plain['page'] / 1024:.1f} KB as it is); "
                               f"{first['compressed']} of {first['network']} answers compressed; headers "
                               "included, the live stream not; Chromium at 390 px, a viewer"}
                yield {"name": f"page requests: {game} match page, a phone's first visit",
                       "median_ms": float(first["requests"]), "target_ms": FIRST_LOAD_REQUESTS, "unit": "requests",
                       "note": f"{first['streams']} of them the live stream; as it is: {plain['requests']}"}
                yield {"name": f"page reload: {game} match page, static bytes fetched again",
                       "median_ms": again["static_bytes"] / 1024, "target_ms": 0.0, "unit": "KB",
                       "note": f"the reload: {again['network']} answers from the box, {again['bytes'] / 1024:.1f} "
                               f"KB in all (the page itself and what its script asks), {again['requests']} "
                               "requests (the rest from the browser's cache)"}
        finally:
            browser.close()
            server.stop()


def _per_stream(blocks: list[bytes]) -> tuple[int, float]:
    """One gzip stream for the whole of a phone's events, flushed after each: its bytes, CPU µs per event."""
    packer = zlib.compressobj(1, zlib.DEFLATED, 31)
    out = len(packer.compress(b""))
    t0 = time.process_time()
    for b in blocks:
        out += len(packer.compress(b)) + len(packer.flush(zlib.Z_SYNC_FLUSH))
    cpu = (time.process_time() - t0) / max(1, len(blocks)) * 1e6
    return out, cpu


def _alone(block: bytes) -> int:
    """An event's deflate blocks from a compressor of its own, flushed (what one gzip stream could be made of,
    the same bytes for every stream of an audience; the stream's 10-byte header once, not counted)."""
    packer = zlib.compressobj(1, zlib.DEFLATED, -15)
    return len(packer.compress(block)) + len(packer.flush(zlib.Z_SYNC_FLUSH))


def _state_kib() -> float:
    """The memory one open stream's zlib state holds (level 1, a 32 KiB window: what a browser's gzip takes)."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    packers = []
    for _ in range(50):
        packer = zlib.compressobj(1, zlib.DEFLATED, 31)
        packer.compress(b"x" * 2000)
        packer.flush(zlib.Z_SYNC_FLUSH)
        packers.append(packer)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return held / 50 / 1024


def _stream_rows():
    from bench.stream_payload import measure

    state = _state_kib()
    cpus = []
    with tempfile.TemporaryDirectory(prefix="bench-bytes-streams-") as tmp:
        for game in GAMES:
            m = measure(game, 0, Path(tmp))
            phones = [aud for aud in m["blocks"] if aud[0] == "player"]
            n = m["events"]
            plain = sum(m["after"][a] for a in phones) / len(phones) / n
            packed, alone, cpu = [], [], []
            for a in phones:
                size, us = _per_stream(m["blocks"][a])
                packed.append(size)
                cpu.append(us)
                alone.append(sum(map(_alone, m["blocks"][a])))
            packed_per = sum(packed) / len(phones) / n
            alone_per = sum(alone) / len(phones) / n
            blocks = [b for a in phones for b in m["blocks"][a]]
            frames_plain = sum((len(b) + FRAME - 1) // FRAME for b in blocks) / len(blocks)
            cpus.append(statistics.median(cpu))
            tv = [a for a in m["blocks"] if a[0] == "viewer"][0]
            tv_packed, _ = _per_stream(m["blocks"][tv])
            yield {"name": f"stream bytes per event: {game}, a seated phone's stream as sent (plain)",
                   "median_ms": plain, "best_ms": float(max(map(len, blocks))), "target_ms": float(FRAME), "unit": "B",
                   "note": f"{n} events of a whole random legal match, {len(phones)} phones; best = the largest "
                           f"event; {frames_plain:.2f} Wi-Fi frames per event; the TV's "
                           f"{m['after'][tv] / n:.0f} B ({tv_packed / n:.0f} B gzip per stream)"}
            yield {"name": f"stream bytes per event: {game}, the same through gzip per stream (a flush per event)",
                   "median_ms": packed_per, "target_ms": float(FRAME), "unit": "B",
                   "note": f"{packed_per / plain:.0%} of plain; each event gzipped alone (shareable by the "
                           f"phones of one audience): {alone_per:.0f} B; CPU {statistics.median(cpu):.1f} µs per "
                           f"stream per event (level 1; ≈ {statistics.median(cpu) * 12 / 1000:.2f} ms of a Pi at "
                           "R = 12)"}
    yield {"name": "stream gzip per stream (not done): the zlib state it would hold for the room's 1,000 streams",
           "median_ms": state * ROOM_STREAMS / 1024, "target_ms": ROOM_RSS_MB, "unit": "MB",
           "note": f"{state:.0f} KiB per open stream (level 1, a 32 KiB window), against the room's whole RSS "
                   f"target; CPU {statistics.median(cpus):.1f} µs per stream per event on top of the shared "
                   "bytes each stream now sends as they are: not done (docs/server.md, \"Compressed answers\")"}


def report():
    yield from _stream_rows()
    yield from _page_rows()


if __name__ == "__main__":
    import json

    for row in report():
        print(json.dumps(row), flush=True)
