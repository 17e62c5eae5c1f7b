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


def parse_json(text: str, source: str = "input"):
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{source} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None


def dumps(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2)
