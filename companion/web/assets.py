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

from companion.base import precompressed
from companion.base.resources import web_dir

CACHED_FOR_A_YEAR = "public, max-age=31536000, immutable"


@functools.cache
def _file(name: str) -> tuple[str, bytes | None]:
    """The hash of a static file's content and its ``.gz`` made ahead (``companion/base/precompressed.py``) when
    it holds that very content, else None; read once per process and file (the names are the installed files
    the pages and the static route name: a finite set)."""
    root = web_dir() / "static"
    try:
        with open(root / name, "rb") as fh:
            data = fh.read()
    except OSError:  # (a page naming a file that is not there: its address without a hash, never a 500)
        return "", None
    packed = None
    if precompressed.worth(name, len(data)):
        try:
            with open(root / (name + ".gz"), "rb") as fh:
                packed = fh.read()
        except OSError:
            pass
        if packed is not None and not precompressed.holds(packed, data):
            packed = None  # (a file edited after its .gz was made: compressed here instead, below)
    return hashlib.sha256(data).hexdigest()[:16], packed


def _digest(name: str) -> str:
    return _file(name)[0]


def digest(filename: str) -> str:
    """The hash of the static file ``filename`` (relative to ``web/static``); "" when it cannot be read."""
    return _digest(posixpath.normpath(filename))


def url(filename: str) -> str:
    """The address of the static file ``filename`` with its content's hash."""
    return f"/static/{filename}?v={digest(filename)}"


# what is worth compressing (text): a first visit's scripts and styles are 250-350 KB as they are, about a
# quarter of it compressed; images (a board's photo is not a static file) are left as they are
COMPRESSED = precompressed.COMPRESSED


def accepts_gzip(header: str | None) -> bool:
    """Whether an ``Accept-Encoding`` header takes gzip (not refused with ``q=0``)."""
    for part in (header or "").lower().split(","):
        name, _, params = part.strip().partition(";")
        if name.strip() in ("gzip", "*"):
            return params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def compress(data: bytes) -> bytes:
    """``data`` gzip-compressed as every text the box sends compressed is (level 9, the same bytes each time)."""
    return precompressed.compress(data)


@functools.lru_cache(maxsize=128)
def _gzipped(name: str, digest: str) -> bytes:
    with open(web_dir() / "static" / name, "rb") as fh:
        return compress(fh.read())


def gzipped(filename: str) -> tuple[bytes, str] | None:
    """The static file ``filename`` compressed and the hash of its content; None for a file not worth it. The
    ``.gz`` made at the build (the wheel, ``make run``) when there is one that holds the file: no CPU on the
    box; else compressed at its first request and kept (a checkout whose files changed since). Only for a
    file the static route found (its name is safe)."""
    name = posixpath.normpath(filename)
    if not name.endswith(COMPRESSED):
        return None
    d, packed = _file(name)
    if not d:
        return None
    if packed is not None:
        return packed, d
    try:
        size = (web_dir() / "static" / name).stat().st_size
    except OSError:
        return None
    return (_gzipped(name, d), d) if precompressed.worth(name, size) else None


def cache_control(filename: str, v: str | None) -> str | None:
    """What a static file's answer says of caching: kept a year when ``v`` is its content's hash, else None
    (Flask's default: kept a short while, then asked again)."""
    return CACHED_FOR_A_YEAR if v and v == digest(filename) else None
