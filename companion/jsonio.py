"""Reading JSON documents from a file or ``-`` (stdin), with errors that name the problem."""

from __future__ import annotations

import json
import sys

from companion.errors import InputError


def load_json(source: str):
    """Parse JSON from a path or ``-``; raise InputError with a one-line reason."""
    try:
        if source == "-":
            text = sys.stdin.read()
        else:
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read {source}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"{source} is not UTF-8 text") from None
    return parse_json(text, source)


class _NotJsonNumber(ValueError):
    pass


def _no_constant(name: str):
    # Python's json reads NaN, Infinity and -Infinity; JSON (RFC 8259) has no such numbers
    raise _NotJsonNumber(name)


def parse_json(text: str, source: str = "input"):
    try:
        return json.loads(text, parse_constant=_no_constant)
    except _NotJsonNumber as exc:
        raise InputError(f"{source} is not valid JSON: {exc} is not a JSON number") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{source} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InputError(f"{source} is nested too deeply to be a document") from None


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2)
