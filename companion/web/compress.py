"""The box's own answers (pages, JSON) compressed for a phone that takes gzip, and a page's revalidation.

Static files are compressed once, at the build (``companion/web/assets.py``): nothing here touches them.
What the views make at each request is compressed as it leaves (``after_request``, the last hook: the
answer as the gate finished it), with ``Vary: Accept-Encoding``, when:

- the caller's ``Accept-Encoding`` takes gzip (``assets.accepts_gzip``) and the answer is text (HTML, JSON,
  JavaScript, CSS, SVG, CSV, plain text) not already encoded, whole (no stream, no file sent as it is from
  the disk, no range) and a 200-class answer with a body;
- it is at least :data:`MIN_BYTES` long: below a Wi-Fi frame's payload an answer goes in one frame either
  way, so compressing it would spend the Pi's CPU and save no frame (docs/server.md, "Compressed
  answers": the bytes and the CPU per answer at each size, measured);
- it is at most :data:`MAX_BYTES` long: nothing a guest can ask for is that large, and a body larger than
  that (an organiser's export) goes as it is rather than cost a Pi ~tens of ms per request.

Compression is zlib's level 1 (deflate's fast path): a match page of 35-77 KB becomes 11-17 KB for
0.12-0.25 ms of this machine's CPU (about 1.5-3 ms of a Pi's, a tenth of the page's own rendering), where
level 6 saves another 1-3 KB for four times the CPU. A write's answer (the match and its new event, 1-33 KB)
is compressed by the same rule: above one frame, what it saves on the air outweighs what it costs the Pi.

Pages (HTML) revalidate: one with no ``Cache-Control`` of its own gets ``no-cache`` and a weak ETag of its
content, so a reload of a page that did not change costs a ``304`` and no body (the phone's cache keeps the
page; the box still renders it to know). A page that holds a secret says ``no-store`` itself and gets
neither. A request whose body says it is compressed (``Content-Encoding``) is refused by the front before
any of it is read (``companion/web/asgi.py``): the box never inflates what a phone sends, so no body can
be a zip bomb.
"""

from __future__ import annotations

import zlib

from companion.web.assets import accepts_gzip

# a Wi-Fi frame carries ~1,460 bytes of a TCP segment: an answer shorter than that is one frame either way
MIN_BYTES = 1400
# above this an answer goes as it is (no guest-reachable answer is that large; an organiser's export may be)
MAX_BYTES = 1024 * 1024
LEVEL = 1
TEXT = ("text/", "application/json", "application/javascript", "image/svg+xml", "application/schema+json",
        "application/problem+json", "application/x-ndjson")


def gzip_bytes(data: bytes, level: int = LEVEL) -> bytes:
    """``data`` as one gzip member (no file name, no time: the same bytes for the same input)."""
    packer = zlib.compressobj(level, zlib.DEFLATED, 31)
    return packer.compress(data) + packer.flush()


def _compressible(resp) -> bool:
    mimetype = resp.mimetype or ""
    return mimetype.startswith(TEXT) and mimetype != "text/event-stream"


def finish(request, resp):
    """The answer as it leaves: a page's validator, then the body compressed when it is worth it."""
    if resp.direct_passthrough or resp.is_streamed or getattr(resp, "plan", None) is not None:
        return resp  # a file sent from the disk (the static route compresses its own), or a stream
    if 200 <= resp.status_code < 300 and resp.status_code not in (204, 206) and request.method in ("GET", "HEAD") \
            and resp.mimetype == "text/html":
        cache = resp.headers.get("Cache-Control")
        if cache is None:
            resp.headers["Cache-Control"] = "no-cache"
            cache = "no-cache"
        if "no-store" not in cache and "ETag" not in resp.headers:
            resp.add_etag(weak=True)  # (of the text, compressed or not: one page, two encodings)
            resp.vary.add("Accept-Encoding")
            resp = resp.make_conditional(request)
            if resp.status_code == 304:
                return resp
    if "Content-Encoding" in resp.headers or resp.status_code < 200 or resp.status_code in (204, 206, 304) \
            or not _compressible(resp):
        return resp
    size = resp.calculate_content_length()
    if size is None or size < MIN_BYTES or size > MAX_BYTES:
        return resp
    resp.vary.add("Accept-Encoding")
    if not accepts_gzip(request.headers.get("Accept-Encoding")) or request.range is not None:
        return resp
    resp.set_data(gzip_bytes(resp.get_data()))
    resp.headers["Content-Encoding"] = "gzip"
    etag = resp.headers.get("ETag")
    if etag and not etag.startswith("W/"):  # a strong tag names one form of the bytes: this is another
        resp.headers["ETag"] = etag[:-1] + '.gz"'
    return resp
