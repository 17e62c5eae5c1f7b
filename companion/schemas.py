"""JSON Schemas in ``schemas/``: load, validate with a format checker, and name the path of the first error."""

from __future__ import annotations

import functools
import json
import re
from datetime import date, datetime

from companion.errors import InputError, join_path
from companion.resources import schemas_dir


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
    message = err.message
    if len(message) > 200:
        message = message[:197] + "..."
    raise InputError(message, join_path(where, json_path(err.absolute_path)))


def schema_names() -> list[str]:
    return sorted(p.name[: -len(".schema.json")] for p in schemas_dir().glob("*.schema.json"))
