"""The errors every layer shares.

Adapters map them: CLI -> exit status 2 and one line on stderr; HTTP -> a 4xx
JSON body ``{"error", "field"?}``.

An error's sentence is a template with named values, gettext style: the English template is the key
of its translations (``web/i18n/errors.<lang>.json``) and stays the English sentence of the CLI and the
API. ``RuleError("it is not {player}'s turn", "player", player=p)``: ``{name}`` is a value (``{name!r}``
its repr, ``{name:spec}`` formatted), ``{n|army|armies}`` the plural form for the number ``n`` (one|other),
``{name:w}`` a field's name in words (``w:<name>``), ``{name:w@ns}`` a word of the catalogue
(``w@ns:<value>``: a phase, a track; the value itself in English). The web renders the sentence in the caller's
language (``companion.web.i18n.error_text``); docs/developing.md, "Errors in the person's language".

A check that looks at part of a document names fields relative to that part (``player``, ``dice[1]``,
or ``$.cities[2]`` with the part as ``$``); the caller puts them under where the part sits with
:func:`join_path` or :meth:`CompanionError.under` (``raise exc.under("$.events[3].data") from None``).
"""

_PATTERNS: dict = {}


def pattern(text: str):
    """``re.compile(text)``, compiled at its first use and kept: an import compiles nothing (compiling is
    pure Python, a few milliseconds of a CLI start on a Pi per pattern)."""
    rx = _PATTERNS.get(text)
    if rx is None:
        import re  # here: a CLI start that renders no sentence needs no re (nor enum, which re imports)

        rx = _PATTERNS[text] = re.compile(text)
    return rx


_PLACEHOLDER = r"\{(\w+)(?:(!r)|:([^{}|]*)|((?:\|[^{}|]*)+))?\}"


def english_plural(n) -> str:
    """"one" for exactly 1 of either sign ("-1 point"), else "other" (0, 2, 1.5)."""
    try:
        return "one" if abs(n) == 1 and float(n).is_integer() else "other"
    except (TypeError, ValueError):
        return "other"


def render(template: str, params: dict, plural=english_plural, word=None, number=None) -> str:
    """``template`` with its ``{name}`` values, ``{name!r}`` reprs, ``{name:spec}`` formats, ``{n|one|other}``
    plural forms (``plural(n)`` -> "one"/"other") and ``{name:w}``/``{name:w@ns}`` words (``word(value, ns)``); a name with no
    value stays as written. ``number(x)`` writes a plain ``{name}`` that is a float (the language's decimal mark)."""
    def one(m):
        name, rep, spec, forms = m.groups()
        if name not in params:
            return m.group(0)
        value = params[name]
        if forms is not None:
            choices = forms[1:].split("|")
            form = plural(value)
            return choices[0] if form == "one" or len(choices) == 1 else choices[-1]
        if rep:
            return repr(value)
        if spec and (spec == "w" or spec.startswith("w@")):
            return word(value, spec[2:]) if word else str(value)
        if spec:
            return format(value, spec)
        if number is not None and isinstance(value, float):
            return number(value)  # the language's decimal mark ("1,5" in Italian)
        return str(value)
    return pattern(_PLACEHOLDER).sub(one, template)


class CompanionError(Exception):
    """Base class. ``field`` is a JSON path (``$.players[2]``) or a field name. ``message`` is the English
    sentence; ``template`` and ``params`` what it was made from (see the module's docstring)."""

    status = 400

    def __init__(self, message: str, field: str | None = None, /, **params):
        self.template = message
        self.params = params
        self.message = render(message, params) if params else message
        super().__init__(self.message)
        self.field = field

    def __str__(self) -> str:  # one line, naming the field when there is one
        if self.field:
            return f"{self.field}: {self.message}"
        return self.message

    def under(self, prefix: str, as_type: type | None = None) -> "CompanionError":
        """The same error (same class, or ``as_type``) with ``field`` put under ``prefix``
        (see :func:`join_path`): ``raise exc.under("$.options") from None``."""
        cls = as_type or type(self)
        field = join_path(prefix, self.field)
        if cls is type(self):
            out = cls.__new__(cls)  # keeps a subclass's own attributes (e.g. retry_after)
            out.__dict__.update(self.__dict__)
            out.args = self.args
            out.field = field
            return out
        return cls(self.template, field, **self.params)

    def again(self, as_type: type | None = None, field: str | None = None) -> "CompanionError":
        """The same sentence (template and values) as ``as_type`` (default: the same class) with
        ``field``: ``raise exc.again(InputError, "$.trade") from None``."""
        cls = as_type or type(self)
        if cls is type(self):
            out = cls.__new__(cls)
            out.__dict__.update(self.__dict__)
            out.args = self.args
            out.field = field
            return out
        return cls(self.template, field, **self.params)

    code: str | None = None  # what kind of refusal, for a page that words it its own way (e.g. "own_seat")

    def to_json(self) -> dict:
        body = {"error": self.message}
        if self.field:
            body["field"] = self.field
        if self.code:
            body["code"] = self.code
        return body


class InputError(CompanionError):
    """Malformed input: wrong shape, unknown names, out-of-range values."""

    status = 400


class RuleError(CompanionError):
    """Well-formed input that the rules refuse now (not your turn, no roll owed)."""

    status = 409


class ConflictError(CompanionError):
    """A write based on a stale view (``expected_seq`` mismatch), or a duplicate."""

    status = 409


class NotFoundError(CompanionError):
    status = 404


class AuthError(CompanionError):
    status = 401


class ForbiddenError(CompanionError):
    status = 403


def join_path(prefix: str | None, field: str | None) -> str | None:
    """``field`` put under ``prefix``.

    ``field`` is a path relative to a part of a document: a JSON path with the part as root (``$``,
    ``$.cities[2]``, ``$[0]``) or a bare one (``player``, ``dice[1]``, ``[0]``, ``a.b``); empty or None
    for the part itself. ``prefix`` is where the part sits: a JSON path (``$.events[3].data``) or a bare
    path (``options.board``); ``""`` or None keeps the result bare (``"$.cities[2]"`` -> ``cities[2]``).

    >>> join_path("$.options", "map.cities[1]"), join_path("$.map", "$.cities"), join_path("$", "[2]")
    ('$.options.map.cities[1]', '$.map.cities', '$[2]')
    >>> join_path("", "$.cities[2]"), join_path("options", None), join_path(None, "$")
    ('cities[2]', 'options', None)
    """
    rest = field or ""
    if rest.startswith("$"):
        rest = rest[1:]
    if rest and not rest.startswith((".", "[")):
        rest = "." + rest
    if prefix:
        return prefix + rest
    return rest.lstrip(".") or None
