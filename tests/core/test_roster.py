"""companion.core.roster: the one name normalisation ("same person?"), pure."""

import pytest
from hypothesis import given, strategies as st

from companion.core.roster import matches_query, name_key, same_person, short_name


@pytest.mark.parametrize("a, b", [
    ("Nicolò", "NICOLO"),
    ("  Anna   Maria ", "anna maria"),
    ("Straße", "STRASSE"),
    ("Zoë", "zoe"),
    ("Ｆｕｌｌ", "full"),            # full-width letters (compatibility decomposition)
    ("Ångström", "angstrom"),
    ("E\u0301lise", "Élise"),       # combining accent vs precomposed
])
def test_same_person_ignores_case_accents_and_spacing(a, b):
    assert name_key(a) == name_key(b)
    assert same_person(a, b)


@pytest.mark.parametrize("a, b", [("Anna B.", "Anna B"), ("Luca", "Luka"), ("Bob 2", "Bob"), ("Ann", "Anna")])
def test_different_names_stay_different(a, b):
    assert not same_person(a, b)


@given(st.text(max_size=20))
def test_key_is_idempotent_and_stripped(name):
    key = name_key(name)
    assert name_key(key) == key
    assert key == key.strip()
    assert "  " not in key


def test_key_refuses_a_non_string():
    with pytest.raises(TypeError):
        name_key(None)


def test_type_ahead_matches_word_starts():
    assert matches_query("Nicolò Rossi", "nic")
    assert matches_query("Nicolò Rossi", "ROS")
    assert matches_query("Nicolò Rossi", "colo rossi") is False
    assert matches_query("Nicolò Rossi", "nicolo r")
    assert not matches_query("Nicolò Rossi", "ssi")
    assert matches_query("Anyone", "  ")


def test_short_name_is_the_first_word():
    assert short_name("Nicolò Rossi") == "Nicolò"
    assert short_name("Bartholomew-Maximilian", 8) == "Bartholo"
