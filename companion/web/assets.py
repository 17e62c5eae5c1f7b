"""The addresses of the static files the pages load: ``/static/<file>?v=<the hash of its content>``.

The address changes whenever the file does, so a browser keeps each file for a year without asking again
(``Cache-Control: immutable``, :data:`CACHED_FOR_A_YEAR`): a phone that comes back to a page makes no request
for the scripts and styles it already has, where a ``?v=<version>`` address kept for five minutes made it ask
for each again (a 304 each, a Wi-Fi round trip and Pi CPU). A file is read and hashed once per process, at
the first page that names it (the installed files do not change under a running box)."""

from __future__ import annotations

import functools
import hashlib
import posixpath

from companion.base.resources import web_dir

CACHED_FOR_A_YEAR = "public, max-age=31536000, immutable"


@functools.cache
def _digest(name: str) -> str:
    try:
        with open(web_dir() / "static" / name, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()[:16]
    except OSError:  # (a page naming a file that is not there: its address without a hash, never a 500)
        return ""


def digest(filename: str) -> str:
    """The hash of the static file ``filename`` (relative to ``web/static``); "" when it cannot be read."""
    return _digest(posixpath.normpath(filename))


def url(filename: str) -> str:
    """The address of the static file ``filename`` with its content's hash."""
    return f"/static/{filename}?v={digest(filename)}"


# what is worth compressing (text): a first visit's scripts and styles are 250-350 KB as they are, about a
# quarter of it compressed; images (a board's photo is not a static file) are left as they are
COMPRESSED = (".js", ".css", ".svg", ".json", ".html", ".txt")


def accepts_gzip(header: str | None) -> bool:
    """Whether an ``Accept-Encoding`` header takes gzip (not refused with ``q=0``)."""
    for part in (header or "").lower().split(","):
        name, _, params = part.strip().partition(";")
        if name.strip() in ("gzip", "*"):
            return params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def compress(data: bytes) -> bytes:
    """``data`` gzip-compressed as every text the box sends compressed is (the same bytes each time)."""
    import gzip

    return gzip.compress(data, compresslevel=9, mtime=0)


@functools.lru_cache(maxsize=128)
def _gzipped(name: str, digest: str) -> bytes:
    with open(web_dir() / "static" / name, "rb") as fh:
        return compress(fh.read())


def gzipped(filename: str) -> tuple[bytes, str] | None:
    """The static file ``filename`` compressed (made once per file and content, kept) and the hash of its
    content; None for a file not worth it. Only for a file the static route found (its name is safe)."""
    name = posixpath.normpath(filename)
    if not name.endswith(COMPRESSED):
        return None
    d = _digest(name)
    return (_gzipped(name, d), d) if d else None


def cache_control(filename: str, v: str | None) -> str | None:
    """What a static file's answer says of caching: kept a year when ``v`` is its content's hash, else None
    (Flask's default: kept a short while, then asked again)."""
    return CACHED_FOR_A_YEAR if v and v == digest(filename) else None
