"""JSON Schemas in ``schemas/``: load, validate with a format checker, and name the path of the first error."""

from __future__ import annotations

import functools
import json

from companion.errors import InputError
from companion.resources import schemas_dir


@functools.cache
def load_schema(name: str) -> dict:
    """``name`` without the ``.schema.json`` suffix, e.g. ``match-export``."""
    path = schemas_dir() / f"{name}.schema.json"
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


@functools.cache
def _validator(name: str):
    from jsonschema import Draft202012Validator

    schema = load_schema(name)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def json_path(parts) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if str(p).isidentifier() else f"[{json.dumps(p)}]")
    return out


def validate(name: str, doc) -> None:
    """Raise InputError naming the JSON path of the most relevant error."""
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
    raise InputError(message, json_path(err.absolute_path))


def schema_names() -> list[str]:
    return sorted(p.name[: -len(".schema.json")] for p in schemas_dir().glob("*.schema.json"))
