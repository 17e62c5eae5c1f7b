"""``companion.base.jsondiff``: applying ``diff(old, new)`` to ``old`` gives exactly ``new`` (nulls, removed
keys, grown and shrunk arrays, a number that becomes ``true``), and changes neither document."""

import copy
import json

import pytest
from hypothesis import given, settings, strategies as st

from companion.base import jsondiff

scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.5, -1.5]) | st.sampled_from(["", "a", "b"])
docs = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(["a", "b", "c", "1", "__proto__"]), inner, max_size=4),
                    max_leaves=12)


def same(a, b):
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@settings(max_examples=300)
@given(docs, docs)
def test_the_patch_gives_exactly_the_new_document(old, new):
    old0, new0 = copy.deepcopy(old), copy.deepcopy(new)
    patch = json.loads(json.dumps(jsondiff.diff(old, new)))  # as a page receives it
    assert same(jsondiff.apply(json.loads(json.dumps(old)), patch), new)
    assert same(old, old0) and same(new, new0)


@settings(max_examples=200)
@given(docs, docs)
def test_the_same_document_needs_no_patch(doc, _):
    assert jsondiff.diff(doc, copy.deepcopy(doc)) == []


def test_null_removed_and_types():
    assert jsondiff.diff({"a": 1, "b": 2}, {"a": None}) == [[["a"], None], [["b"]]]
    assert jsondiff.diff({"a": 1}, {"a": True}) == [[["a"], True]]
    assert jsondiff.diff({"a": [1, 2]}, {"a": [1, 2, 3]}) == [[["a", 2], 3]]
    assert jsondiff.diff({"a": [1, 2]}, {"a": [1]}) == [[["a"], [1]]]
    assert jsondiff.diff([1], {"x": 1}) == [[[], {"x": 1}]]
    doc = {"a": {"b": [1, {"c": 2}]}, "d": 1}
    out = jsondiff.apply(doc, [[["a", "b", 1, "c"], 3]])
    assert out == {"a": {"b": [1, {"c": 3}]}, "d": 1} and doc["a"]["b"][1]["c"] == 2
    assert out["a"] is not doc["a"]


@pytest.mark.parametrize("ops", [[[["x", "y"], 1]], [[["a", 5], 1]], [[["a", "0"], 1]], [[["b"]]], [[[]]]])
def test_a_patch_that_does_not_fit(ops):
    with pytest.raises(jsondiff.PatchError):
        jsondiff.apply({"a": [0]}, ops)
