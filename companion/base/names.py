"""How two typed names of players are compared (pure, no I/O; the roster's rows and the core use it).

``name_key(name)`` is the one normalisation used wherever the app asks "is this the same person?":
the roster's duplicate suggestions, the type-ahead search, the migration that puts old matches on the
roster, and (later) matching players across boxes. Two names with the same key are *suggested* as one
person; they are never merged without someone saying so.

The key: Unicode compatibility decomposition (NFKD), combining marks dropped (accents: "Nicolò" ->
"nicolo"), case folded (``str.casefold``: "STRASSE" and "straße" agree), every run of white space made one
space, leading and trailing space dropped. Punctuation and digits are kept ("Anna B." is not "Anna B").
"""

from __future__ import annotations

import unicodedata

__all__ = ["name_key", "same_person", "matches_query", "short_name"]


def _strip_marks(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


def name_key(name: str) -> str:
    """The comparison key of a player's name: case-, accent- and spacing-insensitive.

    >>> name_key("  Nicolò   ROSSI ") == name_key("nicolo rossi")
    True
    """
    if not isinstance(name, str):
        raise TypeError(f"a name is a string, not {type(name).__name__}")
    # Case folding can produce characters that decompose further (and vice versa), so strip twice.
    folded = _strip_marks(_strip_marks(name).casefold())
    return " ".join(folded.split())


def same_person(a: str, b: str) -> bool:
    """Whether two names would be suggested as the same person (never merged automatically)."""
    return name_key(a) == name_key(b)


def matches_query(name: str, query: str) -> bool:
    """Type-ahead: the query's key is found at the start of the name or of one of its words."""
    q = name_key(query)
    if not q:
        return True
    key = name_key(name)
    return key.startswith(q) or f" {q}" in key


def short_name(name: str, limit: int = 12) -> str:
    """A default short name: the first word, cut to ``limit`` characters (whole characters, no marks lost)."""
    words = name.split()
    first = words[0] if words else name.strip()
    return first[:limit]
