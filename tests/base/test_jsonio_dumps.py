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
