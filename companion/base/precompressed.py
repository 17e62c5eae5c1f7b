"""The static text files compressed ahead of time: ``<file>.gz`` beside each script, style, SVG and JSON file
of ``web/static``, written when the wheel is built (``setup.py``), by ``make run`` in a checkout (``python -m
companion.base.precompressed web/static``), so a box sends them compressed without compressing anything
(``companion/web/assets.py``).

A ``.gz`` is used only when it holds that very file: its gzip trailer (the CRC-32 and the length of what it
holds) is checked against the file's bytes (read once per process anyway, for its hash), so a file edited
after its ``.gz`` was made is never sent stale. Standard library only, and nothing of the package: setup.py
loads this file by its path in the build's own environment."""

from __future__ import annotations

import gzip
import os
import struct
import sys
import zlib

# what is worth compressing (text); images and fonts are compressed already
COMPRESSED = (".js", ".css", ".svg", ".json", ".html", ".txt", ".map")
# below this a file is not worth it (a gzip header and trailer are 18 bytes; one Wi-Fi frame holds ~1,400)
MIN_BYTES = 512


def compress(data: bytes) -> bytes:
    """``data`` gzip-compressed at level 9, with no time in its header (the same bytes at every build)."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def holds(packed: bytes, data: bytes) -> bool:
    """Whether ``packed`` (a gzip file's bytes) ends with the trailer of ``data`` (its CRC-32 and length)."""
    if len(packed) < 18 or packed[:2] != b"\x1f\x8b":
        return False
    crc, size = struct.unpack("<II", packed[-8:])
    return crc == zlib.crc32(data) and size == len(data) & 0xFFFFFFFF


def worth(name: str, size: int) -> bool:
    return name.endswith(COMPRESSED) and size >= MIN_BYTES


def build(root: str) -> tuple[int, int, int]:
    """``<file>.gz`` for every file of ``root`` worth it, made again where it does not hold its file; a
    ``.gz`` whose file is gone (or no longer worth it) removed. Returns (written, already right, removed)."""
    written = kept = removed = 0
    for folder, _dirs, files in os.walk(root):
        names = set(files)
        for name in sorted(names):
            path = os.path.join(folder, name)
            if name.endswith(".gz"):
                source = name[:-3]
                if source not in names or not worth(source, os.path.getsize(os.path.join(folder, source))):
                    os.unlink(path)
                    removed += 1
                continue
            with open(path, "rb") as fh:
                data = fh.read()
            if not worth(name, len(data)):
                continue
            target = path + ".gz"
            try:
                with open(target, "rb") as fh:
                    if holds(fh.read(), data):
                        kept += 1
                        continue
            except OSError:
                pass
            packed = compress(data)
            tmp = target + ".tmp"
            with open(tmp, "wb") as fh:
                fh.write(packed)
            os.replace(tmp, target)
            written += 1
    return written, kept, removed


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        sys.stderr.write("usage: python -m companion.base.precompressed FOLDER\n")
        return 2
    written, kept, removed = build(argv[0])
    if written or removed:
        sys.stdout.write(f"{argv[0]}: {written} files compressed, {kept} already, {removed} removed\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
