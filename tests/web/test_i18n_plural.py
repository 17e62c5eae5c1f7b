"""Counted strings take the plural form of their language's rule (one/other): in English and Italian
"one" is exactly 1, so 0 and 2 read as plurals ("0 monasteries", "0 monasteri")."""

import pytest

from companion.web import i18n


@pytest.mark.parametrize("lang,n,form", [("en", 0, "other"), ("en", 1, "one"), ("en", 2, "other"),
                                         ("it", 0, "other"), ("it", 1, "one"), ("it", 2, "other")])
def test_the_rule_of_each_language(lang, n, form):
    assert i18n.plural_form(lang, n) == form


@pytest.mark.parametrize("lang,expected", [
    ("en", ["0 monasteries", "1 monastery", "2 monasteries"]),
    ("it", ["0 monasteri", "1 monastero", "2 monasteri"]),
])
def test_counted_strings_agree_with_their_count(lang, expected):
    assert [i18n.plural(lang, "wop.n_monasteries", n) for n in (0, 1, 2)] == expected


@pytest.mark.parametrize("lang,expected", [
    ("en", ["room for 0 councillors", "room for 1 councillor", "room for 2 councillors"]),
    ("it", ["posto per 0 consiglieri", "posto per 1 consigliere", "posto per 2 consiglieri"]),
])
def test_other_values_fill_in_too(lang, expected):
    assert [i18n.plural(lang, "wop.room", n) for n in (0, 1, 2)] == expected
    assert i18n.plural(lang, "clock.power_lost", 1).count("1") == 1


def test_every_counted_key_has_both_forms_in_both_languages():
    for lang in i18n.LANGUAGES:
        cat = i18n.catalogue(lang)
        counted = {k.rsplit(".", 1)[0] for k in cat if k.endswith((".one", ".other"))}
        assert counted, lang
        for k in counted:
            assert f"{k}.one" in cat and f"{k}.other" in cat, (lang, k)


@pytest.mark.parametrize("lang", ["en", "it"])
def test_minus_one_is_one_and_a_fraction_is_other(lang):
    """CLDR reads the rule on the size: "-1 point" and "-1 punto", never "-1 pts"; 1.5 and -0.5 are plural."""
    assert [i18n.plural_form(lang, n) for n in (-1, -1.0, 1.0, 1.5, -0.5, -2)] == \
        ["one", "one", "one", "other", "other", "other"]
    assert i18n.plural(lang, "tv.points", -1) == {"en": "-1 pt", "it": "-1 punto"}[lang]


def test_numbers_in_each_language():
    assert [i18n.number("it", x) for x in (-1.5, 2, 2.0, 0.25, 1250, -0.0001)] == ["-1,5", "2", "2", "0,25", "1250", "0"]
    assert [i18n.number("en", x) for x in (-1.5, 2.0)] == ["-1.5", "2"]
    assert i18n.number("it", 2, 2) == "2,00" and i18n.number("en", 2, 2) == "2.00"
    assert i18n.number("it", "x") == "x" and i18n.number("it", True) == "True"
    # a float put into a sentence is written the language's way
    assert "1,5" in i18n.plural("it", "tv.points", 1.5) and "1.5" in i18n.plural("en", "tv.points", 1.5)


def test_error_sentences_write_floats_in_the_language():
    from companion.base.errors import english_plural, render

    assert english_plural(-1) == "one" and english_plural(1.5) == "other"
    assert i18n.error_text("it", "must be between {lo} and {hi}", {"lo": 0.5, "hi": 2}) == "deve essere tra 0,5 e 2"


@pytest.mark.parametrize("lang,expected", [
    ("en", ["0 left", "1 left", "1 point on the board (jewels not counted)"]),
    ("it", ["ne restano 0", "ne resta 1", "1 punto sul tabellone (senza i gioielli)"]),
])
def test_richelieu_s_turn_line_agrees_with_its_count(lang, expected):
    """The line a Richelieu phone shows every turn, and the board's points of a player behind a screen."""
    assert [i18n.plural(lang, "rl.actions_left", 0), i18n.plural(lang, "rl.actions_left", 1),
            i18n.plural(lang, "rl.board_total", 1)] == expected
    assert i18n.plural(lang, "rl.status", 2, player="Anna", left=1, cardinal=3, done=0, of=6).count("1") == 1
