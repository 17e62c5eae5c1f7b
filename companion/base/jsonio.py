"""Reading JSON documents from a file or ``-`` (stdin), with errors that name the problem."""

from __future__ import annotations

import os
import sys

from companion.base.errors import InputError

# json's own parts in C, taken without importing the json package: json imports re (and re enum), and
# compiles its patterns at import, a tenth of what a CLI start spends above the interpreter's own start
try:
    from _json import encode_basestring as _string, make_scanner as _make_scanner
    from _json import encode_basestring_ascii as _ascii_string, make_encoder as _make_encoder
except ImportError:  # an interpreter without the accelerator: json's Python parts
    from json.encoder import encode_basestring as _string
    _make_scanner = _make_encoder = None

_WHITESPACE = " \t\n\r"  # what json's decoder skips around a document
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Decoder:
    """What json's scanner reads from ``json.JSONDecoder()`` (its defaults), with ``parse_constant``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    def __init__(self, parse_constant):
        self.parse_constant = parse_constant


def loads(text, parse_constant=None):
    """``json.loads(text, parse_constant=parse_constant)``: the same value, and the same error for text that
    is not one JSON document (json itself reads it again to raise it), without importing json for a document. The scanner is
    json's own (``_json.make_scanner``, what ``json.loads`` runs); what this skips is only the package's
    import and its pattern for the whitespace around the document."""
    if _make_scanner is not None and isinstance(text, str):
        scan = _make_scanner(_Decoder(parse_constant or _CONSTANTS.__getitem__))
        try:
            value, end = scan(text, len(text) - len(text.lstrip(_WHITESPACE)))
        except Exception:  # not one JSON value: json reads it again and raises its own error (the scanner
            pass  # words its errors with json.decoder's class; with json not imported yet, some Pythons fail)
        else:
            if end == len(text.rstrip(_WHITESPACE)):  # (a value never ends with whitespace)
                return value
    import json

    return json.loads(text, parse_constant=parse_constant)


def quoted(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)`` for a str."""
    return _string(text)


def load_json(source: str):
    """Parse JSON from a path or ``-``; raise InputError with a one-line reason."""
    try:
        if source == "-":
            text = sys.stdin.read()
        else:
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
    except OSError as exc:
        raise InputError("cannot read {source}: {value}", source=source, value=exc.strerror or exc) from None
    except UnicodeDecodeError:
        raise InputError("{source} is not UTF-8 text", source=source) from None
    return parse_json(text, source)


class _NotJsonNumber(ValueError):
    pass


def _no_constant(name: str):
    # Python's json reads NaN, Infinity and -Infinity; JSON (RFC 8259) has no such numbers
    raise _NotJsonNumber(name)


MAX_DIGITS = 4300  # Python's own limit for turning digits into an int (sys.get_int_max_str_digits())


def where_digits_overflow(text: str) -> str:
    """"line L column C" of the first number longer than MAX_DIGITS digits in ``text`` ("" when none)."""
    import re

    m = re.search(r"\d{%d,}" % (MAX_DIGITS + 1), text)
    if m is None:
        return ""
    line = text.count("\n", 0, m.start()) + 1
    col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    return f" at line {line} column {col}"


MAX_DEPTH = 100  # no document of companion nests a tenth as deep; checks past Python's recursion would crash


def depth_exceeds(doc, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays/objects nest more than ``limit`` levels deep (iterative: no recursion)."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def parse_json(text: str, source: str = "input"):
    """Parse JSON text; any problem is an InputError naming ``source`` (never a ValueError escaping: a number
    with thousands of digits, nesting deeper than Python recurses)."""
    try:
        doc = loads(text, parse_constant=_no_constant)
    except _NotJsonNumber as exc:
        raise InputError("{source} is not valid JSON: {exc} is not a JSON number", source=source, exc=exc) from None
    except ValueError as exc:
        from json import JSONDecodeError  # (json's scanner imported it to raise it)

        if not isinstance(exc, JSONDecodeError):  # Python refuses ints of more than MAX_DIGITS digits
            raise InputError("{source} holds a number with more than {MAX_DIGITS} digits{value}", source=source, MAX_DIGITS=MAX_DIGITS, value=where_digits_overflow(text)) from None
        raise InputError("{source} is not valid JSON: {msg} at line {lineno} column {colno}", source=source, msg=exc.msg, lineno=exc.lineno, colno=exc.colno) from None
    except RecursionError:
        raise InputError("{source} is nested too deeply to be a document", source=source) from None
    if depth_exceeds(doc):
        raise InputError("{source} is nested too deeply to be a document (more than {MAX_DEPTH} levels)", source=source, MAX_DEPTH=MAX_DEPTH)
    return doc


def _not_json(o):
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")  # (json's own words)


if _make_encoder is not None:
    # json's C encoder as ``json.dumps(obj, ensure_ascii=..., separators=(",", ":"))`` runs it, made once (that
    # call makes a JSONEncoder and its C encoder every time), without the circular-reference check's
    # bookkeeping of every object and array (a circular document is never written: Python's recursion
    # limit stops the encoder, RecursionError instead of ValueError)
    _COMPACT = {ascii: _make_encoder(None, _not_json, _ascii_string if ascii else _string, None, ":", ",", False,
                                     False, True) for ascii in (True, False)}
    _PLAIN = _make_encoder(None, _not_json, _ascii_string, None, ": ", ", ", False, False, True)

    def compact(obj, ensure_ascii: bool = True) -> str:
        """``json.dumps(obj, ensure_ascii=ensure_ascii, separators=(",", ":"))``: the same text."""
        return "".join(_COMPACT[ensure_ascii](obj, 0))

    def plain(obj) -> str:
        """``json.dumps(obj)`` (its defaults: ASCII, ``", "`` and ``": "``): the same text."""
        return "".join(_PLAIN(obj, 0))
else:
    def compact(obj, ensure_ascii: bool = True) -> str:
        """``json.dumps(obj, ensure_ascii=ensure_ascii, separators=(",", ":"))``: the same text."""
        import json

        return json.dumps(obj, ensure_ascii=ensure_ascii, separators=(",", ":"))

    def plain(obj) -> str:
        """``json.dumps(obj)`` (its defaults: ASCII, ``", "`` and ``": "``): the same text."""
        import json

        return json.dumps(obj)


def dumps(obj) -> str:
    """``json.dumps(obj, ensure_ascii=False, indent=2)``, the same text, made without json's pure-Python
    indenting encoder (a chain of generators that every piece of text climbs, level by level): about half
    its time, which a CLI command spends on printing its result (the odds table, a season's standings).
    The same errors too: TypeError for what JSON cannot hold, ValueError for a circular reference."""
    out: list = []
    _pretty(obj, out, "\n", {})
    return "".join(out)


def _float(o: float) -> str:
    if o != o:
        return "NaN"
    if o == _INFINITY:
        return "Infinity"
    if o == -_INFINITY:
        return "-Infinity"
    return float.__repr__(o)


_INFINITY = float("inf")


def _key(k) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, float):
        return _float(k)
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, int):
        return int.__repr__(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def _pretty(o, out: list, nl: str, path: dict) -> None:
    """``o`` as json's encoder writes it at the indentation ``nl`` (a newline and the spaces before the
    current level), appended to ``out``; ``path``: the containers being written (circular references)."""
    if isinstance(o, str):
        out.append(_string(o))
    elif o is None:
        out.append("null")
    elif o is True:
        out.append("true")
    elif o is False:
        out.append("false")
    elif isinstance(o, int):
        out.append(int.__repr__(o))
    elif isinstance(o, float):
        out.append(_float(o))
    elif isinstance(o, (list, tuple)):
        if not o:
            out.append("[]")
            return
        if id(o) in path:
            raise ValueError("Circular reference detected")
        path[id(o)] = o
        inner = nl + "  "
        sep = "[" + inner
        for value in o:
            out.append(sep)
            sep = "," + inner
            _pretty(value, out, inner, path)
        out.append(nl + "]")
        del path[id(o)]
    elif isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        if id(o) in path:
            raise ValueError("Circular reference detected")
        path[id(o)] = o
        inner = nl + "  "
        sep = "{" + inner
        for key, value in o.items():
            out.append(sep)
            sep = "," + inner
            out.append(_string(_key(key)))
            out.append(": ")
            _pretty(value, out, inner, path)
        out.append(nl + "}")
        del path[id(o)]
    else:
        raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")



def write_status_file(path, doc: dict) -> None:
    """Write a small JSON status file beside the database atomically (a temporary file renamed over it);
    a failure leaves the old file and no temporary one (a status is advice: it never stops the caller)."""
    from pathlib import Path  # here: reading a document at a CLI start needs no pathlib

    import json

    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


def read_status_file(path) -> dict | None:
    """A status file written by ``write_status_file``: its object, or ``None`` when missing or unreadable."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = loads(fh.read())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None
