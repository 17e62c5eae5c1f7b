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
