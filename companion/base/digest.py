"""How a secret is kept: its SHA-256, never the secret (tokens are 256-bit random, so a plain hash is enough).
The sessions', join links' and players' links' rows store only this."""

from __future__ import annotations

import hashlib


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()
