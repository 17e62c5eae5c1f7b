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
