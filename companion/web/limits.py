"""How large a request body may be, per endpoint (bytes).

A body above its endpoint's limit is refused with 413 from its ``Content-Length`` before anything reads
it (``app.py``'s gatekeeper); the server itself (``companion serve``) refuses any body above
``MAX_BODY`` while it arrives, so it never spools more than that to disk.
"""

from __future__ import annotations

KIB = 1024
DEFAULT_BODY = 64 * KIB  # every JSON body of the API: a match, an event, a tracker action, a season result
BODY_LIMITS = {
    "api.import_match": 2 * 1024 * KIB,  # a whole exported match (thousands of events)
    "boards.upload_photo": 2 * 1024 * KIB,  # a board's photo, shrunk by the browser (companion.services.boards.PHOTO_LIMIT)
    "boards.import_board": 3 * 1024 * KIB,  # an exported board with its photo (base64: 4/3 of the photo)
    "boards.save_version": 512 * KIB,  # a board document with every site's place on the photo
    "boards.create_board": 512 * KIB,
    "boards.check_board": 512 * KIB,
}
MAX_BODY = max([DEFAULT_BODY, *BODY_LIMITS.values()])


def body_limit(endpoint: str | None) -> int:
    return BODY_LIMITS.get(endpoint or "", DEFAULT_BODY)
