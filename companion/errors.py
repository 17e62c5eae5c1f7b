"""The errors every layer shares.

Adapters map them: CLI -> exit status 2 and one line on stderr; HTTP -> a 4xx
JSON body ``{"error", "field"?}``.

A check that looks at part of a document names fields relative to that part (``player``, ``dice[1]``,
or ``$.cities[2]`` with the part as ``$``); the caller puts them under where the part sits with
:func:`join_path` or :meth:`CompanionError.under` (``raise exc.under("$.events[3].data") from None``).
"""


class CompanionError(Exception):
    """Base class. ``field`` is a JSON path (``$.players[2]``) or a field name."""

    status = 400

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.message = message
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
        return cls(self.message, field)

    def to_json(self) -> dict:
        body = {"error": self.message}
        if self.field:
            body["field"] = self.field
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
