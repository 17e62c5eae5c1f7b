"""JSON Schemas in ``schemas/``: load, validate with a format checker, and name the path of the first error."""

from __future__ import annotations

import functools

from companion.base.errors import InputError, join_path, pattern
from companion.base.resources import schema_file, schemas_dir


@functools.cache
def load_schema(name: str) -> dict:
    """``name`` without the ``.schema.json`` suffix, e.g. ``match-export``. The schema as written: a
    ``$ref`` to another file stays a reference (``resolve`` follows it, ``standalone`` writes it in place)."""
    from companion.base.jsonio import loads  # json's own reader without importing json (nor re) at a CLI start

    with open(schema_file(name), encoding="utf-8") as fh:
        return loads(fh.read())


# -- references between the schemas ------------------------------------------------------------------
# A definition is written once, in the schema that owns it, and the others refer to it by file:
# ``{"$ref": "season.settings.schema.json#/$defs/points"}`` (relative to the ``$id`` every schema has,
# ``https://companion.local/schemas/<name>.schema.json``). jsonschema follows such a reference through
# ``registry()``, the compiled check through ``resolve``, the OpenAPI document gets ``standalone`` copies.

SCHEMA_BASE = "https://companion.local/schemas/"
_SUFFIX = ".schema.json"


def schema_uri(name: str) -> str:
    """The ``$id`` of ``schemas/<name>.schema.json``."""
    return SCHEMA_BASE + name + _SUFFIX


def _named(uri: str) -> str:
    """The schema a reference's document part names: ``season.settings.schema.json`` (relative to another
    schema's ``$id``) or its whole ``$id``. Only files of schemas/ (no other folder, no network)."""
    name = uri[len(SCHEMA_BASE):] if uri.startswith(SCHEMA_BASE) else uri
    if not name.endswith(_SUFFIX) or "/" in name or ":" in name or len(name) == len(_SUFFIX):
        raise ValueError(f"a schema may refer only to another file of schemas/, not to {uri!r}")
    return name[: -len(_SUFFIX)]


def _own_name(schema) -> str | None:
    """The name of a schema of schemas/ from its ``$id`` (None: a schema made in code)."""
    sid = schema.get("$id") if isinstance(schema, dict) else None
    return _named(sid) if isinstance(sid, str) and sid.startswith(SCHEMA_BASE) else None


def resolve(ref: str, here: str | None = None, root: dict | None = None) -> tuple[object, str | None]:
    """What ``{"$ref": ref}`` points to, and the name of the schema that holds it (where its own
    references resolve in turn). ``here``: the name of the schema the reference is written in; None for
    ``root``, a schema made in code (its ``#/...`` references are to itself, a file's name to schemas/)."""
    uri, _, fragment = ref.partition("#")
    if uri:
        here = _named(uri)
        node = load_schema(here)
    elif here is not None:
        node = load_schema(here)
    elif root is not None:
        node = root
    else:
        raise ValueError(f"{ref!r}: a reference inside what?")
    if fragment and not fragment.startswith("/"):
        raise ValueError(f"{ref!r}: only JSON pointers (#/...) are supported, not anchors")
    for part in fragment.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node, here


@functools.cache
def registry():
    """The schemas of schemas/ for jsonschema (a ``referencing.Registry``): a reference to another file
    is read from schemas/ when first followed, never fetched."""
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    return Registry(retrieve=lambda uri: DRAFT202012.create_resource(load_schema(_named(uri))))


_LINKS = frozenset({"$defs", "$schema", "$id", "definitions"})
_NOTES = frozenset({"title", "description", "$comment", "examples", "default"})


def standalone(schema: dict, name: str | None = None) -> dict:
    """A copy of ``schema`` with every ``$ref`` (to its own ``$defs`` or to another file of schemas/) written
    in place and no ``$defs``/``$id``/``$schema`` left: a schema that means the same alone, e.g. as one
    component of the OpenAPI document (where ``#`` is the document's root, not the schema's). ``name``: the
    schema's own (by default from its ``$id``). A recursive definition cannot be written out: ValueError."""
    here0 = name if name is not None else _own_name(schema)

    def walk(node, here, seen):
        if isinstance(node, list):
            return [walk(x, here, seen) for x in node]
        if not isinstance(node, dict):
            return node
        rest = {k: walk(v, here, seen) for k, v in node.items() if k not in _LINKS and k != "$ref"}
        ref = node.get("$ref")
        if not isinstance(ref, str):
            return rest
        target, there = resolve(ref, here, schema)
        key = (there, ref.partition("#")[2])
        if key in seen:
            raise ValueError(f"{ref!r} refers to itself: it cannot be written out")
        out = walk(target, there, seen | {key})
        if not isinstance(out, dict):
            return out
        if set(rest) - _NOTES & set(out):  # both constrain the same keyword: each must hold
            return {"allOf": [out, {k: v for k, v in rest.items() if k not in _NOTES}],
                    **{k: v for k, v in rest.items() if k in _NOTES}}
        return {**out, **rest}

    return walk(schema, here0, frozenset())


_DATE_TIME = r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z"
_DATE = r"^\d{4}-\d{2}-\d{2}\Z"


def is_date_time(value) -> bool:
    """RFC 3339 date-time (what JSON Schema's "date-time" means), with a real calendar check."""
    if not isinstance(value, str):
        return True  # formats apply to strings only
    if not pattern(_DATE_TIME).match(value):
        return False
    from datetime import datetime  # here: a CLI start without a date to check does not import datetime

    try:
        datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00").replace("t", "T"))
    except ValueError:
        return False
    return True


def is_date(value) -> bool:
    if not isinstance(value, str):
        return True
    if not pattern(_DATE).match(value):
        return False
    from datetime import date

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


def ecma_regex(text: str):
    """A schema's ``pattern`` compiled for Python's ``re`` as JSON Schema reads it (ECMA-262): a ``$``
    outside a character class is the end of the text (Python's ``$`` also matches before a final newline,
    so ``^#[0-9a-fA-F]{6}$`` let "#aabbcc\\n" through, and a name's pattern a final newline)."""
    return _ecma_regex(text)


@functools.lru_cache(maxsize=256)
def _ecma_regex(text: str):
    import re

    out, i, in_class = [], 0, False
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            out.append(text[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if text[i + 1:i + 2] == "^":
                out.append("[^")
                i += 2
                if text[i:i + 1] == "]":  # (a "]" first in a class is one of its characters)
                    out.append("\\]")
                    i += 1
                continue
        elif ch == "$":
            ch = r"\Z"
        out.append(ch)
        i += 1
    return re.compile("".join(out))


@functools.cache
def validator_class():
    """jsonschema's draft 2020-12 validator with the patterns read as JSON Schema reads them
    (:func:`ecma_regex`), as the compiled check reads them."""
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import ValidationError

    def pattern_(validator, value, instance, schema):
        if validator.is_type(instance, "string") and not ecma_regex(value).search(instance):
            yield ValidationError(f"{instance!r} does not match {value!r}")

    return validators.extend(Draft202012Validator, {"pattern": pattern_})


@functools.cache
def _validator(name: str):
    schema = load_schema(name)
    return validator_class()(schema, format_checker=format_checker(), registry=registry())


_DEEP = (float, dict, list)  # what integral changes, or looks inside


def integral(value):
    """A copy of a schema-checked document with whole floats as ints: JSON Schema counts 2.0 as an
    integer, and without this an engine would refuse a space of 1.0 or print 14.0 points."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: integral(v) if isinstance(v, _DEEP) else v for k, v in value.items()}
    if isinstance(value, list):
        return [integral(v) if isinstance(v, _DEEP) else v for v in value]
    return value


def _quoted(p) -> str:
    """``json.dumps(p, ensure_ascii=False)``; a text without importing json."""
    if isinstance(p, str):
        from companion.base.jsonio import quoted

        return quoted(p)
    import json

    return json.dumps(p, ensure_ascii=False)


def json_path(parts) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if str(p).isidentifier() else f"[{_quoted(p)}]")
    return out


def validate(name: str, doc, where: str = "$") -> None:
    """Raise InputError naming the JSON path of the most relevant error, under ``where`` (the path of
    ``doc`` in a larger document; ``""`` for a bare path such as ``cities[2]``).

    A valid document is told by the schema's compiled check (``compiled``) without importing jsonschema
    (most of a second of a CLI start on a Pi); only a document that check refuses (or a schema it cannot
    compile) goes through jsonschema, which finds the error and words it exactly as before."""
    check = _compiled_named(name)
    if check is not None and check(doc):
        return
    from jsonschema.exceptions import best_match

    errors = list(_validator(name).iter_errors(doc))
    if not errors:
        return
    err = best_match(errors)
    # Point to the deepest failing member of combinators (anyOf/oneOf) when that is clearer.
    while err.context:
        err = best_match(err.context)
    raise schema_error(err, join_path(where, json_path(err.absolute_path)))


# -- the compiled check -----------------------------------------------------------------------------
# A JSON Schema (draft 2020-12, the keywords our schemas use) turned into nested Python closures that
# answer one question: is the document valid? It never words an error (jsonschema does, for the
# documents it refuses), so it only has to agree with jsonschema on validity; a schema with a keyword
# it does not know is not compiled at all (``compiled`` returns None) and goes through jsonschema.
# tests/base/test_schemas_compiled.py holds it to jsonschema's verdict on every shipped example and on
# generated variations of them.

class _Unsupported(Exception):
    pass


_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "title", "description", "default", "examples",
                          "contentEncoding", "contentMediaType", "deprecated", "readOnly", "writeOnly", "$defs",
                          "definitions"})


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


_TYPES = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "boolean": lambda x: isinstance(x, bool),
    "null": lambda x: x is None,
    "number": _is_number,
    "integer": lambda x: (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer()),
}


def _equal(a, b) -> bool:
    """JSON equality as jsonschema has it: 1 == 1.0, but True is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return a == b if isinstance(a, str) and isinstance(b, str) else False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if a is None or b is None:
        return a is None and b is None
    return False


def _unique(items) -> bool:
    for i in range(len(items)):
        for j in range(i + 1, len(items)):
            if _equal(items[i], items[j]):
                return False
    return True


def _all(checks: tuple):
    def check(x):
        for c in checks:
            if not c(x):
                return False
        return True
    return check


def _properties(props: tuple):
    def check(x):
        if isinstance(x, dict):
            for k, f in props:
                if k in x and not f(x[k]):
                    return False
        return True
    return check


def _enum(options: list):
    # a text is one of the texts listed (JSON equality of two texts is theirs); anything else as jsonschema has it
    texts = frozenset(o for o in options if isinstance(o, str))

    def check(x):
        if isinstance(x, str):
            return x in texts
        return any(_equal(x, o) for o in options)
    return check


class _Compiler:
    def __init__(self, root: dict, formats: bool, name: str | None = None):
        self.root, self.formats = root, formats
        self.here = name  # the schema of schemas/ being compiled (None: ``root``, made in code)
        self.refs: dict[tuple, list] = {}  # (schema, pointer) -> [check] (filled once compiled: refs may recurse)

    def ref(self, ref: str):
        try:
            node, there = resolve(ref, self.here, self.root)
        except (ValueError, OSError) as exc:
            raise _Unsupported(ref) from exc
        key = (there, ref.partition("#")[2])
        if key not in self.refs:
            cell: list = [None]
            self.refs[key] = cell
            outer, self.here = self.here, there  # the target's own references resolve in its schema
            try:
                cell[0] = self.node(node)
            finally:
                self.here = outer
        cell = self.refs[key]
        return lambda x: cell[0](x)

    def node(self, schema):  # noqa: C901 - one branch per keyword
        if schema is True:
            return lambda x: True
        if schema is False:
            return lambda x: False
        if not isinstance(schema, dict):
            raise _Unsupported(repr(schema))
        checks = []
        for key, value in schema.items():
            if key in _ANNOTATIONS or key in ("then", "else"):
                continue
            if key == "type":
                kinds = [value] if isinstance(value, str) else list(value)
                fns = [_TYPES[k] for k in kinds]
                checks.append(fns[0] if len(fns) == 1 else (lambda x, fns=fns: any(f(x) for f in fns)))
            elif key == "properties":
                checks.append(_properties(tuple((k, self.node(v)) for k, v in value.items())))
            elif key == "additionalProperties":
                known = frozenset(schema.get("properties", {}))
                if "patternProperties" in schema:
                    raise _Unsupported(key)
                if value is False:
                    checks.append(lambda x, known=known: not isinstance(x, dict) or known.issuperset(x))
                else:
                    f = self.node(value)
                    checks.append(lambda x, known=known, f=f: not isinstance(x, dict)
                                  or all(f(v) for k, v in x.items() if k not in known))
            elif key == "required":
                req = frozenset(value)
                checks.append(lambda x, req=req: not isinstance(x, dict) or req.issubset(x.keys()))
            elif key == "propertyNames":
                f = self.node(value)
                checks.append(lambda x, f=f: not isinstance(x, dict) or all(f(k) for k in x))
            elif key == "minProperties":
                checks.append(lambda x, n=value: not isinstance(x, dict) or len(x) >= n)
            elif key == "maxProperties":
                checks.append(lambda x, n=value: not isinstance(x, dict) or len(x) <= n)
            elif key == "items":
                f = self.node(value)
                checks.append(lambda x, f=f: not isinstance(x, list) or all(f(v) for v in x))
            elif key == "minItems":
                checks.append(lambda x, n=value: not isinstance(x, list) or len(x) >= n)
            elif key == "maxItems":
                checks.append(lambda x, n=value: not isinstance(x, list) or len(x) <= n)
            elif key == "uniqueItems":
                if value:
                    checks.append(lambda x: not isinstance(x, list) or _unique(x))
            elif key == "minLength":
                checks.append(lambda x, n=value: not isinstance(x, str) or len(x) >= n)
            elif key == "maxLength":
                checks.append(lambda x, n=value: not isinstance(x, str) or len(x) <= n)
            elif key == "pattern":
                import re  # here: most schemas (the score documents') have no pattern

                try:
                    rx = ecma_regex(value)
                except re.error as exc:
                    raise _Unsupported(f"pattern {value!r}") from exc
                checks.append(lambda x, rx=rx: not isinstance(x, str) or rx.search(x) is not None)
            elif key == "format":
                if not self.formats:
                    continue
                fn = {"date-time": is_date_time, "date": is_date}.get(value)
                if fn is None:
                    raise _Unsupported(f"format {value}")
                checks.append(fn)
            elif key == "minimum":
                checks.append(lambda x, n=value: not _is_number(x) or x >= n)
            elif key == "maximum":
                checks.append(lambda x, n=value: not _is_number(x) or x <= n)
            elif key == "exclusiveMinimum":
                checks.append(lambda x, n=value: not _is_number(x) or x > n)
            elif key == "exclusiveMaximum":
                checks.append(lambda x, n=value: not _is_number(x) or x < n)
            elif key == "multipleOf":
                raise _Unsupported(key)  # not used by our schemas (and float semantics to match)
            elif key == "const":
                checks.append(lambda x, c=value: x == c if isinstance(x, str) else _equal(x, c))
            elif key == "enum":
                checks.append(_enum(list(value)))
            elif key == "$ref":
                checks.append(self.ref(value))
            elif key == "allOf":
                fns = [self.node(v) for v in value]
                checks.append(lambda x, fns=fns: all(f(x) for f in fns))
            elif key == "anyOf":
                fns = [self.node(v) for v in value]
                checks.append(lambda x, fns=fns: any(f(x) for f in fns))
            elif key == "oneOf":
                fns = [self.node(v) for v in value]
                checks.append(lambda x, fns=fns: sum(1 for f in fns if f(x)) == 1)
            elif key == "not":
                f = self.node(value)
                checks.append(lambda x, f=f: not f(x))
            elif key == "if":
                cond = self.node(value)
                then = self.node(schema["then"]) if "then" in schema else None
                other = self.node(schema["else"]) if "else" in schema else None
                checks.append(lambda x, cond=cond, then=then, other=other:
                              (then is None or then(x)) if cond(x) else (other is None or other(x)))
            else:
                raise _Unsupported(key)
        if not checks:
            return lambda x: True
        if len(checks) == 1:
            return checks[0]
        return _all(tuple(checks))


def compiled(schema: dict, formats: bool = True, name: str | None = None):
    """The schema's check (``check(doc) -> bool``), or None where it uses a keyword the compiler does not
    know. ``formats``: assert "date" and "date-time" (as ``format_checker()`` does). ``name``: the schema's
    own, where its ``#/...`` references resolve (by default from its ``$id``; a schema made in code has
    none: they are to itself); a reference to another file is compiled from that file."""
    try:
        return _Compiler(schema, formats, name if name is not None else _own_name(schema)).node(schema)
    except (_Unsupported, KeyError, IndexError, TypeError, ValueError):
        return None


@functools.cache
def _compiled_named(name: str):
    return compiled(load_schema(name))


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
                          choices=", ".join(_quoted(c) for c in choices[:12]))
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


# -- a game event's data (a games' events schema holds one $defs entry per event type) ----------------

def data_schema(schema: str, definition: str) -> dict:
    """The schema of one ``$defs`` entry of ``schemas/<schema>.schema.json``, as a schema of its own."""
    return {"$ref": f"{schema_uri(schema)}#/$defs/{definition}"}


@functools.cache
def _data_validator(schema: str, definition: str):
    return validator_class()(data_schema(schema, definition), registry=registry())


@functools.cache
def _data_check(schema: str, definition: str):
    return compiled(data_schema(schema, definition), formats=False)


# flat data (an object of texts, numbers, booleans and nulls: most of a table's events) found valid, by its
# members with their types (True is not 1, nor 2.0 an int here): the same data is valid again (a schema is
# fixed), told without running the check. Bounded: a full memo starts afresh.
_VALID_FLAT: set = set()
_VALID_FLAT_MAX = 1024
_FLAT_TEXT_MAX = 64  # longest text of data kept in the memo (1,024 entries of at most 8 such members)


def _flat_key(schema: str, definition: str, data):
    """The memo's key of ``data``, or None when it is not flat (or too large to be worth one)."""
    if type(data) is not dict or len(data) > 8:
        return None
    for value in data.values():  # (a long text is not kept: the memo stays small whatever phones send)
        if type(value) is str and len(value) > _FLAT_TEXT_MAX:
            return None
    key = (schema, definition, tuple(data.items()), tuple(map(type, data.values())))
    try:
        hash(key)
    except TypeError:  # (a list or an object inside: not flat)
        return None
    return key


def check_event_data(schema: str, definition: str, data) -> None:
    """Validate an event's data against the ``$defs`` entry ``definition`` of a game's events schema; the error names the path inside ``data`` (``player``, ``slots[2]``).
    Valid data is told by the compiled check; jsonschema finds and words the error of the rest."""
    key = _flat_key(schema, definition, data)
    if key is not None and key in _VALID_FLAT:
        return
    check = _data_check(schema, definition)
    if check is not None and check(data):
        if key is not None:
            if len(_VALID_FLAT) >= _VALID_FLAT_MAX:
                _VALID_FLAT.clear()
            _VALID_FLAT.add(key)
        return
    from jsonschema.exceptions import best_match

    errors = list(_data_validator(schema, definition).iter_errors(data))
    if not errors:
        return
    err = best_match(errors)
    while err.context:
        err = best_match(err.context)
    parts = list(err.absolute_path)
    if err.validator == "required" and isinstance(err.instance, dict):
        parts += [p for p in err.validator_value if p not in err.instance][:1]
    elif err.validator == "additionalProperties" and isinstance(err.instance, dict):
        known = err.schema.get("properties", {})
        parts += [p for p in err.instance if p not in known][:1]  # name the unexpected key
    elif err.validator == "not" and isinstance(err.instance, dict) and isinstance(err.validator_value, dict):
        parts += [p for p in err.validator_value.get("required", []) if p in err.instance][:1]  # a key not allowed here
    # an error about the data as a whole names it ("data")
    raise schema_error(err, join_path("", json_path(parts)) or "data")
