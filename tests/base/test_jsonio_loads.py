"""``companion.base.jsonio.loads`` (json's C scanner without importing json) reads what ``json.loads``
reads, and refuses what it refuses with the same error; ``parse_json`` words the refusals as before."""

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from companion.base.errors import InputError
from companion.base.jsonio import loads, parse_json

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text())
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.dictionaries(st.text(), inner, max_size=4)),
                         max_leaves=30)
whitespace = st.text(alphabet=" \t\n\r\x0b\x0c\u00a0\u2028", max_size=3)


def outcome(fn, text, **kw):
    """(value, None) or (None, (type, message, pos)) of ``fn(text)``."""
    try:
        return fn(text, **kw), None
    except (ValueError, RecursionError) as exc:
        return None, (type(exc), str(exc), getattr(exc, "pos", None))


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


@settings(max_examples=300, deadline=None)
@given(documents, whitespace, whitespace, st.booleans())
def test_a_document_reads_as_json_reads_it(doc, before, after, indent):
    text = before + json.dumps(doc, indent=2 if indent else None, ensure_ascii=indent) + after
    ours, theirs = outcome(loads, text), outcome(json.loads, text)
    assert ours[1] == theirs[1]
    assert ours[0] == theirs[0]


FRAGMENTS = ['{', '}', '[', ']', '"a"', '"\\u00e9"', '"\\x"', ':', ',', '1', '-0', '1e400', '1.5', 'true', 'nul',
             'NaN', '-Infinity', 'Infinity', ' ', '\n', '\ufeff', '"\x01"', '9' * 5000, '\t', '{"a":1}', '[]']


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=8).map("".join) | st.text(max_size=12))
def test_any_text_reads_or_fails_as_json_does(text):
    for constant in (None, lambda name: name.lower()):
        ours, theirs = outcome(loads, text, parse_constant=constant), outcome(json.loads, text, parse_constant=constant)
        assert ours[1] == theirs[1], text
        assert same(ours[0], theirs[0]) or ours[0] == theirs[0], text


def test_deep_nesting_fails_as_json_does():
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(RecursionError):
        json.loads(text)
    with pytest.raises(RecursionError):
        loads(text)


@pytest.mark.parametrize("text, words", [
    ("", "input is not valid JSON: Expecting value at line 1 column 1"),
    ("{} x", "input is not valid JSON: Extra data at line 1 column 4"),
    ("\ufeff{}", "input is not valid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) at line 1 column 1"),
    ('{"a": NaN}', "input is not valid JSON: NaN is not a JSON number"),
    ("[" + "9" * 5000 + "]", "input holds a number with more than 4300 digits at line 1 column 2"),
    ("[" * 200 + "]" * 200, "input is nested too deeply to be a document (more than 100 levels)"),
])
def test_parse_json_words_each_refusal(text, words):
    with pytest.raises(InputError) as exc:
        parse_json(text)
    assert str(exc.value) == words


FRESH = """
import ast, sys
from companion.base.errors import InputError
from companion.base.jsonio import parse_json
out = []
for text in ast.literal_eval(sys.argv[1]):
    try:
        parse_json(text)
    except InputError as exc:
        out.append(str(exc))
print(repr(out))
"""


def test_each_refusal_is_worded_the_same_in_a_fresh_process():
    # json's scanner words its errors with json.decoder's class; in a process that has not imported json
    # yet, the refusal must read as it does here (json reads the text again to raise its own error)
    import ast

    cases = test_parse_json_words_each_refusal.pytestmark[0].args[1]
    texts = ["[1, 2", '{"a" 1}', *[t for t, _ in cases]]
    p = subprocess.run([sys.executable, "-S", "-c", FRESH, repr(texts)], capture_output=True, text=True, timeout=60,
                       cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert p.returncode == 0, p.stderr
    assert ast.literal_eval(p.stdout.strip()) == [
        "input is not valid JSON: Expecting ',' delimiter at line 1 column 6",
        "input is not valid JSON: Expecting ':' delimiter at line 1 column 6", *[w for _, w in cases]]


def test_reading_a_document_imports_no_json_package():
    code = ("import sys; from companion.base.jsonio import parse_json; "
            "assert parse_json(' {\"a\": [1, 2.5, \"é\", null, true]}\\n') == {'a': [1, 2.5, 'é', None, True]}; "
            "print(sorted(m for m in sys.modules if m == 'json' or m.startswith('json.') or m in ('re', 'enum')))")
    p = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60,
                       cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"
