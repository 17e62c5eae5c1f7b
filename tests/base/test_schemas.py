"""Every schema is a valid JSON Schema, and every example kept beside it validates.

Examples live in schemas/examples/<schema-name>/*.json (valid documents) and
schemas/examples/<schema-name>/invalid/*.json (documents that must be refused).
"""

import json

import pytest

from companion.base.errors import InputError
from companion.base.resources import schemas_dir
from companion.base.schemas import load_schema, schema_names, validate

SCHEMAS = schema_names()


@pytest.mark.parametrize("name", SCHEMAS)
def test_schema_is_valid(name):
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(load_schema(name))


def _examples(kind):
    out = []
    for name in SCHEMAS:
        folder = schemas_dir() / "examples" / name
        folder = folder / "invalid" if kind == "invalid" else folder
        for f in sorted(folder.glob("*.json")):
            out.append(pytest.param(name, f, id=f"{name}/{f.name}"))
    return out


@pytest.mark.parametrize("name, path", _examples("valid"))
def test_example_validates(name, path):
    validate(name, json.loads(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("name, path", _examples("invalid"))
def test_invalid_example_is_refused(name, path):
    with pytest.raises(InputError):
        validate(name, json.loads(path.read_text(encoding="utf-8")))


def test_every_schema_has_an_example():
    missing = [n for n in SCHEMAS if not list((schemas_dir() / "examples" / n).glob("*.json"))]
    assert not missing, f"schemas without an example: {missing}"


def test_format_checker_is_on():
    with pytest.raises(InputError) as err:
        validate("match-export", {"id": "x", "game": "richelieu", "players": ["a"],
                                  "created_at": "not a date", "events": []})
    assert err.value.field == "$.created_at"


@pytest.mark.parametrize("value, ok", [
    ("2026-02-14T20:00:00Z", True), ("2026-02-14T20:00:00.123+01:00", True), ("2026-02-14t20:00:00z", True),
    ("2026-02-30T20:00:00Z", False), ("2026-02-14T20:00:00", False), ("2026-02-14", False), ("yesterday", False),
])
def test_date_time_format(value, ok):
    from companion.base.schemas import is_date_time

    assert is_date_time(value) is ok


@pytest.mark.parametrize("value, ok", [("2026-02-28", True), ("2026-02-29", False), ("2028-02-29", True),
                                       ("2026-2-28", False), ("2026-02-28T00:00:00Z", False)])
def test_date_format(value, ok):
    from companion.base.schemas import is_date

    assert is_date(value) is ok


def test_the_schema_module_does_not_load_heavy_format_packages():
    import subprocess
    import sys

    code = ("import sys, companion.base.schemas as s; s.validate('match-export', {'id': 'a', 'game': 'richelieu', "
            "'players': ['x'], 'created_at': '2026-01-01T00:00:00Z', 'events': []}); "
            "print(','.join(m for m in ('rfc3987_syntax', 'lark', 'webcolors') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


# -- one definition, one owner -------------------------------------------------------------------------
# A definition is written in the schema that owns it; another schema refers to that file
# ("season.settings.schema.json#/$defs/points"), it does not paste a copy (two copies drift apart: a
# season's bonus accepted by one endpoint and refused by the CLI).

_NOTES = {"title", "description", "$comment", "examples", "default"}


def _subschemas(node, where):
    """(canonical JSON without its notes, where) for every object of a schema, at every depth."""
    if isinstance(node, dict):
        yield json.dumps({k: v for k, v in node.items() if k not in _NOTES}, sort_keys=True), where
        for k, v in node.items():
            yield from _subschemas(v, f"{where}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _subschemas(v, f"{where}/{i}")


def copies(schemas: dict, least: int = 120) -> list:
    """The structures (of at least ``least`` characters of JSON, notes left out) written in more than one
    schema: below that size a definition is a line ("a string of 1-40 characters"), not a structure."""
    places: dict[str, list] = {}
    for name, schema in schemas.items():
        for text, where in _subschemas(schema, name + "#"):
            if len(text) >= least:
                places.setdefault(text, []).append(where)
    return [sorted(w) for w in places.values() if len({p.split("#")[0] for p in w}) > 1]


def test_no_schema_copies_a_definition_another_schema_owns():
    found = copies({n: load_schema(n) for n in SCHEMAS})
    # the outermost copy of each is enough to say it (its insides are copies too)
    outer = [w for w in found if not any(set(w) != set(o) and all(any(p.startswith(q + "/") for q in o) for p in w)
                                         for o in found)]
    assert not outer, "copied between schemas (refer to the owner's file instead): " + "; ".join(
        " = ".join(w) for w in outer)


def test_the_copy_test_can_fail():
    owner = {"$defs": {"bonus": {"type": "object", "additionalProperties": False,
                                 "properties": {"objective": {"type": "number"}, "eliminated": {"type": "number"}}}}}
    copy_ = {"properties": {"bonus": {"description": "a copy", **owner["$defs"]["bonus"]}}}
    assert copies({"owner": owner, "copy": copy_}) == [["copy#/properties/bonus", "owner#/$defs/bonus"]]
    assert copies({"owner": owner, "ref": {"properties": {"bonus": {"$ref": "owner.schema.json#/$defs/bonus"}}}}) == []


def test_the_season_settings_are_one_definition():
    """The settings of a club, of a season, of the settings endpoints and of a season document are the very
    objects of season.settings, for the loader, the compiled check, jsonschema and the OpenAPI document."""
    from companion.base.schemas import compiled, resolve, standalone

    settings = load_schema("season.settings")
    for name in ("season.club", "season.create"):
        assert resolve(load_schema(name)["properties"]["settings"]["$ref"], name)[0] is settings
    standings = load_schema("season.standings")["properties"]
    for key in ("points", "threshold", "bonus"):
        assert resolve(standings[key]["$ref"], "season.standings")[0] is settings["$defs"][key]
    results = load_schema("season.standings")["properties"]["matches"]["items"]["properties"]["results"]
    assert resolve(results["$ref"], "season.standings")[0] is load_schema("season.result")["$defs"]["results"]

    bad = {"bonus": {"objective": 1, "unknown": 2}}
    for name, doc in (("season.settings", bad), ("season.club", {"name": "c", "settings": bad}),
                      ("season.create", {"club": "c", "game": "richelieu", "year": 2026, "settings": bad}),
                      ("season.standings", {"season": "s", "matches": [], **bad})):
        assert compiled(load_schema(name))(doc) is False, name
        with pytest.raises(InputError) as err:
            validate(name, doc)
        assert err.value.field.endswith("bonus"), (name, err.value.field)
        good = json.loads(json.dumps(doc).replace(', "unknown": 2', ""))
        validate(name, good)
        assert compiled(load_schema(name))(good) is True

    alone = standalone(settings)
    assert standalone(load_schema("season.club"))["properties"]["settings"] == alone
    assert standalone(load_schema("season.standings"))["properties"]["bonus"] == alone["properties"]["bonus"]
    assert "$ref" not in json.dumps(standalone(load_schema("season.standings")))


def test_a_reference_outside_schemas_is_refused_never_fetched():
    from companion.base.schemas import compiled, standalone

    outside = {"properties": {"a": {"$ref": "https://example.com/x.schema.json"}}}
    assert compiled(outside) is None  # jsonschema judges it, and cannot fetch it either
    with pytest.raises(ValueError):
        standalone(outside)
    with pytest.raises(ValueError):
        standalone({"properties": {"a": {"$ref": "../secrets.schema.json"}}})
    with pytest.raises(ValueError):  # a definition that contains itself cannot be written out
        standalone({"$defs": {"t": {"items": {"$ref": "#/$defs/t"}}}, "$ref": "#/$defs/t"})
