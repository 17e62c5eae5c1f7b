"""Italian and English strings: one flat JSON catalogue per language in ``web/static/i18n/<lang>.json``.

The same catalogue serves the templates (``t()`` in Jinja) and the browser (``Companion.t()``).
The language is the ``lang`` cookie when set (switch with ``?lang=it``), else the best match
of ``Accept-Language``, else English. A key missing from a catalogue falls back to English,
then to the key itself.

Counted strings have one key per plural form, ``<key>.one`` and ``<key>.other`` (``{n}`` is the count):
:func:`plural` picks the form by the language's rule (``PLURAL_RULES``; ``web/static/js/companion.js``
``Companion.plural`` has the same rules for the pages). In English and Italian "one" is exactly 1.
"""

from __future__ import annotations

import functools
import json

from companion.resources import web_dir

LANGUAGES = ("en", "it")
DEFAULT = "en"


@functools.cache
def catalogue(lang: str) -> dict:
    path = web_dir() / "static" / "i18n" / f"{lang}.json"
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def from_accept_language(header: str | None) -> str:
    """Pick the best supported language from an Accept-Language header (q-values honoured)."""
    best, best_q = DEFAULT, -1.0
    for i, part in enumerate((header or "").split(",")[:20]):
        bits = part.strip().split(";")
        tag = bits[0].strip().lower().split("-")[0]
        q = 1.0
        for b in bits[1:]:
            b = b.strip()
            if b.startswith("q="):
                try:
                    q = float(b[2:])
                except ValueError:
                    q = 0.0
        if tag in LANGUAGES and q > best_q and q > 0:
            best, best_q = tag, q - i * 1e-6  # earlier wins on equal q
    return best


def choose(cookie: str | None, accept_language: str | None) -> str:
    if cookie in LANGUAGES:
        return cookie
    return from_accept_language(accept_language)


PLURAL_RULES = {
    "en": lambda n: "one" if n == 1 else "other",
    "it": lambda n: "one" if n == 1 else "other",
}


def plural_form(lang: str, n: int) -> str:
    return PLURAL_RULES.get(lang, PLURAL_RULES[DEFAULT])(n)


def plural(lang: str, key: str, n: int, **values) -> str:
    """The counted string ``key`` for ``n`` in ``lang``: ``<key>.one`` or ``<key>.other``."""
    form = f"{key}.{plural_form(lang, n)}"
    if form not in catalogue(lang) and form not in catalogue(DEFAULT):
        form = f"{key}.other"
    return translate(lang, form, **{**values, "n": n})


class _Safe(dict):
    def __missing__(self, key):
        return "{" + key + "}"


def translate(lang: str, key: str, **values) -> str:
    text = catalogue(lang).get(key)
    if text is None:
        text = catalogue(DEFAULT).get(key, key)
    return text.format_map(_Safe(values)) if values else text
