"""JSON Schemas in ``schemas/``: load, validate with a format checker, and name the path of the first error."""

from __future__ import annotations

import functools
import json
import re
from datetime import date, datetime

from companion.base.errors import InputError, join_path
from companion.base.resources import schemas_dir


@functools.cache
def load_schema(name: str) -> dict:
    """``name`` without the ``.schema.json`` suffix, e.g. ``match-export``."""
    path = schemas_dir() / f"{name}.schema.json"
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


_DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def is_date_time(value) -> bool:
    """RFC 3339 date-time (what JSON Schema's "date-time" means), with a real calendar check."""
    if not isinstance(value, str):
        return True  # formats apply to strings only
    if not _DATE_TIME.match(value):
        return False
    try:
        datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00").replace("t", "T"))
    except ValueError:
        return False
    return True


def is_date(value) -> bool:
    if not isinstance(value, str):
        return True
    if not _DATE.match(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


@functools.cache
def format_checker():
    """Only the formats our schemas use. jsonschema's full FORMAT_CHECKER pulls in optional
    packages (an IRI grammar among them) that cost most of a second at start-up on a small board."""
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    checker.checks("date-time")(is_date_time)
    checker.checks("date")(is_date)
    return checker


@functools.cache
def _validator(name: str):
    from jsonschema import Draft202012Validator

    schema = load_schema(name)
    return Draft202012Validator(schema, format_checker=format_checker())


def integral(value):
    """A copy of a schema-checked document with whole floats as ints: JSON Schema counts 2.0 as an
    integer, and without this an engine would refuse a space of 1.0 or print 14.0 points."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [integral(v) for v in value]
    return value


def json_path(parts) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if str(p).isidentifier() else f"[{json.dumps(p, ensure_ascii=False)}]")
    return out


def validate(name: str, doc, where: str = "$") -> None:
    """Raise InputError naming the JSON path of the most relevant error, under ``where`` (the path of
    ``doc`` in a larger document; ``""`` for a bare path such as ``cities[2]``)."""
    from jsonschema.exceptions import best_match

    errors = list(_validator(name).iter_errors(doc))
    if not errors:
        return
    err = best_match(errors)
    # Point to the deepest failing member of combinators (anyOf/oneOf) when that is clearer.
    while err.context:
        err = best_match(err.context)
    raise schema_error(err, join_path(where, json_path(err.absolute_path)))


def _what(parts: list) -> str:
    """The field a schema error is about, for the words' lookup (``w:<parent>.<name>`` then ``w:<name>``
    in the error catalogues): the last property name with the one before it (indexes skipped), or
    ``<name>[]`` for an item of a list."""
    names = [str(p) for p in parts if not isinstance(p, int)]
    if not names:
        return "document"
    if isinstance(parts[-1], int):  # an item of a list: "players[]", a player's name
        return names[-1] + "[]"
    return ".".join(names[-2:])


def schema_error(err, field: str | None) -> InputError:
    """A jsonschema error in words ("the player name is missing"), naming ``field``."""
    parts = list(err.absolute_path)
    v, value = err.validator, err.validator_value
    if v == "required" and isinstance(err.instance, dict):
        missing = [p for p in value if p not in err.instance][:1]
        return InputError("{what:w} is missing", field, what=_what(parts + missing))
    what = _what(parts)
    if v == "additionalProperties" and isinstance(err.instance, dict):
        known = err.schema.get("properties", {})
        extra = [p for p in err.instance if p not in known][:1]
        return InputError("{what:w}: unknown field {name!r}", field, what=what, name=extra[0] if extra else "")
    if v == "type":  # a sentence per type, so that each language says it its own way
        kind = value[0] if isinstance(value, list) else value
        if kind == "string":
            return InputError("{what:w} must be a text", field, what=what)
        if kind == "integer":
            return InputError("{what:w} must be a whole number", field, what=what)
        if kind == "number":
            return InputError("{what:w} must be a number", field, what=what)
        if kind == "boolean":
            return InputError("{what:w} must be true or false", field, what=what)
        if kind == "object":
            return InputError("{what:w} must be an object", field, what=what)
        if kind == "array":
            return InputError("{what:w} must be a list", field, what=what)
    if v in ("enum", "const"):
        choices = value if v == "enum" else [value]
        return InputError("{what:w} must be one of: {choices}", field, what=what,
                          choices=", ".join(json.dumps(c, ensure_ascii=False) for c in choices[:12]))
    if v == "minLength" and value == 1:
        return InputError("{what:w} is empty", field, what=what)
    if v == "minLength":
        return InputError("{what:w} must be at least {limit} {limit|character|characters}", field, what=what, limit=value)
    if v == "maxLength":
        return InputError("{what:w} must be at most {limit} {limit|character|characters}", field, what=what, limit=value)
    if v == "minimum":
        return InputError("{what:w} must be at least {limit}", field, what=what, limit=value)
    if v == "exclusiveMinimum":
        return InputError("{what:w} must be more than {limit}", field, what=what, limit=value)
    if v == "maximum":
        return InputError("{what:w} must be at most {limit}", field, what=what, limit=value)
    if v == "exclusiveMaximum":
        return InputError("{what:w} must be less than {limit}", field, what=what, limit=value)
    if v in ("minItems", "minProperties"):
        return InputError("{what:w} must have at least {limit} {limit|entry|entries}", field, what=what, limit=value)
    if v in ("maxItems", "maxProperties"):
        return InputError("{what:w} must have at most {limit} {limit|entry|entries}", field, what=what, limit=value)
    if v == "uniqueItems":
        return InputError("{what:w} has an entry twice", field, what=what)
    if v == "format" and value == "date":
        return InputError("{what:w} must be a date (YYYY-MM-DD)", field, what=what)
    if v == "format" and value == "date-time":
        return InputError("{what:w} must be a date and time (ISO 8601)", field, what=what)
    if v == "pattern":
        return InputError("{what:w} is not written as expected", field, what=what)
    if v == "not" and isinstance(err.instance, dict) and isinstance(value, dict):
        banned = [p for p in value.get("required", []) if p in err.instance][:1]
        if banned:
            return InputError("{what:w} is not allowed here", field, what=_what(parts + banned))
    return InputError("{what:w} is not valid", field, what=what)


def schema_names() -> list[str]:
    return sorted(p.name[: -len(".schema.json")] for p in schemas_dir().glob("*.schema.json"))
