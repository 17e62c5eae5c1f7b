"""The errors every layer shares.

Adapters map them: CLI -> exit status 2 and one line on stderr; HTTP -> a 4xx
JSON body ``{"error", "field"?}``.
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
