"""Error sentences a phone shows are in words: no event type ("clock.start", "card.draw"), no option or
field name a page has no control for ("override"), in English or in Italian. An error that only a script
can meet (an API path to use instead) may name the API."""

import json
import re

from companion.games import registry
from companion.base.resources import web_dir

API_ONLY = {"use POST /api/matches/<id>/undo to undo"}
CLOCK_EVENTS = {"clock.start", "clock.pause", "clock.resume", "clock.arm", "turn.end", "final.roll",
                "objective.completed"}


def _internal_words():
    types = set(CLOCK_EVENTS)
    for mod in registry().values():
        types |= {t for t in mod.EVENT_TYPES if "." in t}
    return re.compile("|".join(re.escape(t) for t in sorted(types)) + r"|\boverride\b")


def test_no_error_sentence_names_an_event_type_or_an_option():
    words = _internal_words()
    cat = json.loads((web_dir() / "i18n" / "errors.it.json").read_text(encoding="utf-8"))
    bad = [(en, it) for en, it in cat.items() if not en.startswith("w") and en not in API_ONLY
           and (words.search(en) or words.search(it))]
    assert bad == []


def test_a_locked_sign_in_says_it_once():
    """The 429 of the sign-in is its own sentence: the page does not put "Too many failed attempts:" before it."""
    js = (web_dir() / "static" / "js" / "pages.js").read_text(encoding="utf-8")
    assert 't("login.locked"' not in js


def test_counted_error_sentences_agree_with_one():
    """Sentences with a count say "1 player", "1 unit is lost" in both languages (the plural forms of the
    sentence, docs/developing.md "Errors in the person's language")."""
    from companion.web.i18n import error_text

    t = "{n} {n|player cannot|players cannot} sit at tables of {lo} to {hi}"
    assert error_text("en", t, {"n": 1, "lo": 3, "hi": 6}).startswith("1 player cannot sit")
    assert error_text("it", t, {"n": 1, "lo": 3, "hi": 6}).startswith("1 giocatore non può")
    assert error_text("it", t, {"n": 2, "lo": 3, "hi": 6}).startswith("2 giocatori non possono")
    t = ("{player} places {placeable} {placeable|unit|units} now ({lost} over the {MAX_ON_MAP}-unit cap "
         "{lost|is|are} lost), not {total}")
    v = {"player": "Anna", "placeable": 1, "lost": 1, "MAX_ON_MAP": 125, "total": 3}
    assert "(1 over the 125-unit cap is lost)" in error_text("en", t, v)
    assert "1 oltre il limite di 125 armate va persa" in error_text("it", t, v)
