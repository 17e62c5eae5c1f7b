"""The compiled schema check (``companion.base.schemas.compiled``) agrees with jsonschema on validity: on every
shipped example, valid and invalid, and on variations of them (a key dropped or added, a value replaced
by another JSON value, a number turned into a float, a bool or a string), for every schema and for each
event-data definition of the events schemas. ``validate`` trusts the compiled check for a valid
document and asks jsonschema only about the rest, so a compiled check that passed what jsonschema
refuses would let a bad document through: that is what these tests would catch."""

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from companion.base.resources import schemas_dir
from companion.base.schemas import compiled, data_schema, format_checker, load_schema, registry, schema_names, \
    validator_class

SCHEMAS = schema_names()


def _docs(name):
    folder = schemas_dir() / "examples" / name
    return [json.loads(f.read_text(encoding="utf-8")) for f in sorted(folder.glob("*.json"))
            + sorted((folder / "invalid").glob("*.json"))]


def _pair(schema, formats=True):
    # (jsonschema's validator with the patterns read as JSON Schema reads them: $ is the text's end)
    ref = validator_class()(schema, format_checker=format_checker() if formats else None, registry=registry())
    return compiled(schema, formats=formats), ref


@pytest.mark.parametrize("name", SCHEMAS)
def test_every_schema_compiles(name):
    assert compiled(load_schema(name)) is not None


@pytest.mark.parametrize("name", SCHEMAS)
def test_the_examples_get_jsonschema_s_verdict(name):
    check, ref = _pair(load_schema(name))
    for doc in _docs(name):
        assert check(doc) == ref.is_valid(doc), json.dumps(doc)[:300]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 130) | st.floats(-5, 130, allow_nan=False)
    | st.sampled_from(["", "a", "Ada", "2026-11-30", "2026-11-30T20:00:00Z", "2026-02-30", "x" * 70, "money",
                       "red", "web-of-power", "richelieu"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "name", "type", "data"]),
                                                                inner, max_size=3),
    max_leaves=6)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


@st.composite
def variations(draw, docs):
    doc = copy.deepcopy(draw(st.sampled_from(docs)))
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(doc))
        path = draw(st.sampled_from(paths))
        parent, key = None, None
        node = doc
        for p in path:
            parent, key, node = node, p, node[p]
        how = draw(st.sampled_from(["replace", "drop", "add", "numeric", "dup"]))
        if how == "replace" or parent is None:
            value = draw(json_values)
            if parent is None:
                doc = value
                continue
            parent[key] = value
        elif how == "drop":
            if isinstance(parent, dict):
                del parent[key]
            else:
                parent.pop(key)
        elif how == "add" and isinstance(node, dict):
            node[draw(st.sampled_from(["extra", "name", "type", "note", "x"]))] = draw(json_values)
        elif how == "add" and isinstance(node, list):
            node.append(draw(json_values))
        elif how == "numeric" and isinstance(node, (int, float)) and not isinstance(node, bool):
            parent[key] = draw(st.sampled_from([float(node), node + 0.5, -node, True, str(node), node * 100]))
        elif how == "dup" and isinstance(node, list) and node:
            node.append(copy.deepcopy(node[0]))
    return doc


@pytest.mark.parametrize("name", SCHEMAS)
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_variations_of_the_examples_get_jsonschema_s_verdict(name, data):
    docs = _docs(name)
    if not docs:
        return
    check, ref = _pair(load_schema(name))
    doc = data.draw(variations(docs))
    assert check(doc) == ref.is_valid(doc), json.dumps(doc)[:300]


EVENT_SCHEMAS = [n for n in SCHEMAS if n.endswith(".events") and "$defs" in load_schema(n)]


@pytest.mark.parametrize("name", EVENT_SCHEMAS)
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_event_data_definitions_get_jsonschema_s_verdict(name, data):
    """As the games check an event's data: one $defs entry, no format assertion."""
    root = load_schema(name)
    definition = data.draw(st.sampled_from(sorted(root["$defs"])))
    check, ref = _pair(data_schema(name, definition), formats=False)
    assert check is not None
    datas = [e["data"] for doc in _docs(name) for e in (doc if isinstance(doc, list) else doc.get("events", []))
             if isinstance(e, dict) and isinstance(e.get("data"), dict)] or [{}]
    doc = data.draw(variations(datas))
    assert check(doc) == ref.is_valid(doc), (definition, json.dumps(doc)[:300])


def test_json_equality_as_jsonschema_has_it():
    check = compiled({"enum": [1, [True], {"a": 1.0}], "uniqueItems": True})
    assert check(1) and check(1.0) and not check(True)
    assert check([True]) is False or check([True])  # a list is checked against the enum as a value
    assert not compiled({"const": 1})(True) and compiled({"const": 1})(1.0)
    unique = compiled({"uniqueItems": True})
    assert unique([1, True]) and not unique([1, 1.0]) and not unique([{"a": [1]}, {"a": [1.0]}])
    assert compiled({"type": "integer"})(2.0) and not compiled({"type": "integer"})(True)
    assert compiled({"multipleOf": 2}) is None  # a keyword it does not know: jsonschema decides


def test_flat_event_data_told_valid_once_is_valid_again_and_only_valid_data_is_kept():
    """``check_event_data`` keeps the flat data it found valid (by its members and their types): the same
    data again is valid without a check; True is not 1, 2.0 not 2, and a refusal is never kept."""
    from companion.base import schemas
    from companion.base.errors import InputError

    schemas._VALID_FLAT.clear()
    good = {"player": "Ada", "track": "money", "delta": 2}
    for _ in range(2):
        schemas.check_event_data("richelieu.events", "track_adjust", good)
    assert len(schemas._VALID_FLAT) == 1
    for bad in ({**good, "delta": True}, {**good, "track": "gold"}, {**good, "delta": 2.5}):
        for _ in range(2):  # refused each time, with the same words
            with pytest.raises(InputError) as exc:
                schemas.check_event_data("richelieu.events", "track_adjust", bad)
            assert exc.value.field
    schemas.check_event_data("richelieu.events", "track_adjust", {**good, "delta": 2.0})  # (JSON's integer)
    assert len(schemas._VALID_FLAT) == 2  # 2.0 kept apart from 2


def test_a_pattern_is_read_as_json_schema_reads_it():
    """ECMA-262's $ (outside a class) is the text's end: Python's also matched before a final newline."""
    schema = {"pattern": "^#[0-9a-f]{6}$"}
    ref = validator_class()(schema)
    for text, ok in [("#aabbcc", True), ("#aabbcc\n", False), ("#aabbcc\nx", False)]:
        assert compiled(schema)(text) is ok and ref.is_valid(text) is ok, text
    assert compiled({"pattern": "^[^$]+$"})("a\nb") and not compiled({"pattern": "^[^$]+$"})("a$")  # in a class: "$"
    assert compiled({"pattern": r"^a\$$"})("a$") and not compiled({"pattern": r"^a\$$"})("a$\n")
