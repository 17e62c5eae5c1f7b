"""The CLI's JSON printer (``companion.base.jsonio.dumps``) writes exactly what
``json.dumps(obj, ensure_ascii=False, indent=2)`` writes, and refuses what it refuses."""

import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from companion.base.jsonio import dumps

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                    st.text())
keys = st.one_of(st.text(), st.integers(), st.floats(allow_nan=True), st.booleans(), st.none())
documents = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                           st.tuples(inner, inner),
                                                           st.dictionaries(keys, inner, max_size=4)),
                         max_leaves=30)


def reference(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2)


@settings(max_examples=300, deadline=None)
@given(documents)
def test_the_same_text_as_json(doc):
    assert dumps(doc) == reference(doc)


def test_the_cli_s_own_shapes():
    doc = {"attacker": 125, "p": 1.7941970872111547e-36, "ok": True, "none": None, "name": "Città \"x\"\n\t\x01",
           "outcomes": [{"a": 1, "b": [], "c": {}}, [1, 2.5, -0.0]], 1: "int key", 2.5: "float key", None: 0,
           False: math.inf, "nan": -math.inf}
    assert dumps(doc) == reference(doc)
    assert dumps([]) == "[]" and dumps({}) == "{}" and dumps("é") == '"é"'


class Thing:
    pass


@pytest.mark.parametrize("bad", [Thing(), {"a": {1, 2}}, [b"bytes"], {(1, 2): 3}, {"a": [Thing()]}])
def test_the_same_refusals(bad):
    with pytest.raises(TypeError) as ours:
        dumps(bad)
    with pytest.raises(TypeError) as theirs:
        reference(bad)
    assert str(ours.value) == str(theirs.value)


def test_a_circular_document_is_refused():
    loop: list = [1]
    loop.append(loop)
    cyclic: dict = {"a": {}}
    cyclic["a"]["b"] = cyclic
    for doc in (loop, cyclic):
        with pytest.raises(ValueError, match="Circular reference detected"):
            dumps(doc)
        with pytest.raises(ValueError, match="Circular reference detected"):
            reference(doc)
    shared = [1]
    assert dumps([shared, shared]) == reference([shared, shared])  # the same list twice is no loop


# -- the write path's encoders: ``compact`` (an answer's body, an event's size) and ``plain`` (an event's data
# as the log stores it), json's C encoder made once -----------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(documents)
def test_compact_and_plain_write_what_json_writes(doc):
    from companion.base.jsonio import compact, plain

    assert compact(doc) == json.dumps(doc, ensure_ascii=True, separators=(",", ":"))
    assert compact(doc, ensure_ascii=False) == json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    assert plain(doc) == json.dumps(doc)


@pytest.mark.parametrize("bad", [Thing(), {"a": {1, 2}}, [b"bytes"], {(1, 2): 3}, {"a": [Thing()]}])
def test_compact_and_plain_refuse_what_json_refuses(bad):
    from companion.base.jsonio import compact, plain

    with pytest.raises(TypeError) as theirs:
        json.dumps(bad)
    for ours in (compact, plain):
        with pytest.raises(TypeError) as refused:
            ours(bad)
        assert str(refused.value) == str(theirs.value)


def test_compact_stops_at_a_circular_document():
    from companion.base.jsonio import compact

    loop: list = [1]
    loop.append(loop)
    with pytest.raises(RecursionError):  # (no document of companion is circular: never a hang)
        compact(loop)
