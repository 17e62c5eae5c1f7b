"""Italian and English strings: one flat JSON catalogue per language in ``web/static/i18n/<lang>.json``.

The same catalogue serves the templates (``t()`` in Jinja) and the browser (``Companion.t()``): a page
loads it as a script of its own, ``/static/i18n/<lang>.js?v=<its content's hash>`` (:func:`catalogue_script`,
:func:`catalogue_url`), which a phone keeps for a year and fetches again only when the words change (the
address changes with them), instead of 52 KB written into every page.
The language is the ``lang`` cookie when set (switch with ``?lang=it``), else the best match
of ``Accept-Language``, else English. A key missing from a catalogue falls back to English,
then to the key itself.

Error sentences (``companion/base/errors.py``: a template with named values) have their own catalogues,
``web/i18n/errors.<lang>.json``: the English template is the key, the value the sentence in that
language (same placeholders; ``w:<word>`` entries translate the ``{name:w}`` values). They are not sent
to the pages: the server renders an error body's sentence in the caller's language (:func:`error_text`).

Counted strings have one key per plural form, ``<key>.one`` and ``<key>.other`` (``{n}`` is the count):
:func:`plural` picks the form by the language's rule (``PLURAL_RULES``; ``web/static/js/companion.js``
``Companion.plural`` has the same rules for the pages). In English and Italian "one" is exactly 1.
"""

from __future__ import annotations

import functools
import json
import os

from companion.base.errors import render
from companion.base.resources import web_dir

LANGUAGES = ("en", "it")
# the language of a caller who asks for none (no cookie, no Accept-Language: the TV, a kiosk, scripts): English,
# or the box's own, COMPANION_LANGUAGE (the image's companion.txt sets it in /etc/default/companion)
DEFAULT = os.environ.get("COMPANION_LANGUAGE", "") if os.environ.get("COMPANION_LANGUAGE", "") in LANGUAGES else "en"


@functools.cache
def catalogue(lang: str) -> dict:
    path = web_dir() / "static" / "i18n" / f"{lang}.json"
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


@functools.cache
def catalogue_script(lang: str) -> tuple[bytes, str]:
    """The catalogue of ``lang`` as the script the pages load before their own (``window.CompanionCatalogue``),
    and the hash of its bytes (its address's ``v``, its ETag). Built once per process from the JSON file."""
    import hashlib

    text = json.dumps(catalogue(lang), ensure_ascii=False, separators=(",", ":"))
    # (JSON is JavaScript but for two line separators that JavaScript before ES2019 does not take in a string)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    body = f"window.CompanionCatalogue={text};\n".encode()
    return body, hashlib.sha256(body).hexdigest()[:16]


def catalogue_url(lang: str) -> str:
    """The address of ``lang``'s catalogue script: it changes whenever its content does."""
    return f"/static/i18n/{lang}.js?v={catalogue_script(lang)[1]}"


def from_accept_language(header: str | None) -> str:
    """Pick the best supported language from an Accept-Language header (q-values honoured)."""
    if not header:  # (most scripts' requests: nothing to read)
        return DEFAULT
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


def _one(n) -> bool:
    """Exactly one, of either sign: "-1 point", "-1 punto" (CLDR reads the rule on |n|; 1.5 is "other")."""
    try:
        return abs(n) == 1 and float(n).is_integer()
    except (TypeError, ValueError):
        return False


PLURAL_RULES = {
    "en": lambda n: "one" if _one(n) else "other",
    "it": lambda n: "one" if _one(n) else "other",
}


def decimal_text(lang: str, text: str) -> str:
    """A number already written as text ("-1.5", "0.67") with the language's decimal mark ("-1,5")."""
    return text.replace(".", ",") if lang == "it" else text


def number(lang: str, x, digits: int | None = None) -> str:
    """A number as the language writes it: Italian "-1,5", "2,00"; English "-1.5", "2.00" (no grouping).
    ``digits``: the decimals shown; without it, whole numbers as they are and others with up to 2 decimals
    (trailing zeros dropped). Anything that is not a number is returned as text."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return str(x)
    if digits is None:
        if isinstance(x, int) or float(x).is_integer():
            text = str(int(x))
        else:
            text = f"{x:.2f}".rstrip("0").rstrip(".")
    else:
        text = f"{x:.{digits}f}"
    if text.startswith("-") and not text.strip("-0."):
        text = text[1:]  # "-0,00" is 0
    return text.replace(".", ",") if lang == "it" else text


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
    if not values:
        return text
    return text.format_map(_Safe({k: number(lang, v) if isinstance(v, float) else v for k, v in values.items()}))


@functools.cache
def error_catalogue(lang: str) -> dict:
    """English error template -> the sentence in ``lang`` (``{}`` for English and unknown languages)."""
    path = web_dir() / "i18n" / f"errors.{lang}.json"
    if not path.is_file():
        return {}
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def error_text(lang: str, template: str, params: dict | None = None) -> str:
    """An error's sentence in ``lang``: its template translated (the English one when the catalogue has
    none), its values put in, its plural forms by the language's rule."""
    if lang not in LANGUAGES:
        lang = DEFAULT
    words = error_catalogue(lang)
    text = words.get(template, template) if lang != DEFAULT else template
    if not params:
        return text
    return render(text, params, plural=PLURAL_RULES[lang], word=lambda v, ns: field_words(lang, v, ns),
                  number=lambda x: number(lang, x))


def field_words(lang: str, name, ns: str = "") -> str:
    """A field's name in words (``{what:w}``): ``w:<parent>.<name>``, else ``w:<name>`` of the error
    catalogue (``web/i18n/errors.<lang>.json``; English's holds only words), else the name. With a
    namespace (``{phase:w@phase}``): ``w@<ns>:<value>``, else the value."""
    words, name = error_catalogue(lang), str(name)
    if ns:
        key = f"w@{ns}:{name}"
        return words.get(key) or error_catalogue(DEFAULT).get(key) or name
    last = name.rsplit(".", 1)[-1]
    return words.get(f"w:{name}") or words.get(f"w:{last}") or error_catalogue(DEFAULT).get(f"w:{last}") or \
        last.removesuffix("[]").replace("_", " ")
