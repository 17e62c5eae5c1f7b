"""The pieces of OpenAPI a blueprint describes its routes with (its module's ``OPENAPI_PATHS`` and
``OPENAPI_SCHEMAS``, gathered by ``companion.web.openapi``)."""

from __future__ import annotations


def ref(name: str) -> dict:
    """A reference to a component schema."""
    return {"$ref": f"#/components/schemas/{name}"}


def ok(name: str, description: str = "OK") -> dict:
    """A JSON response of the component schema ``name``."""
    return {"description": description, "content": {"application/json": {"schema": ref(name)}}}


def any_json(description: str = "OK") -> dict:
    """A JSON object response without a component schema of its own."""
    return {"description": description, "content": {"application/json": {"schema": {"type": "object"}}}}


def path_param(name: str, max_length: int = 64, schema: dict | None = None) -> dict:
    """A required parameter of the path (``match_id``, ``player``): a string of 1 to ``max_length``
    characters unless ``schema`` says otherwise."""
    return {"name": name, "in": "path", "required": True,
            "schema": schema if schema is not None else {"type": "string", "minLength": 1, "maxLength": max_length}}


SECURITY = [{"bearer": []}, {"session": []}]  # a write: a bearer token or the session cookie


# what an error status means, said once for every route (a route may say its own: ``err(..., words=)``)
ERROR_WORDS = {
    400: "invalid input (the field is named)",
    401: "no or bad credentials",
    403: "not allowed",
    404: "not found",
    409: "refused as things stand now (a stale expected_seq, a taken name or seat, the rules)",
    413: "body too large",
    415: "not a type this accepts",
    429: "too many requests from this address",
}


def err(*codes: int, words: dict | None = None) -> dict:
    """The error responses (``{"error", "field"?}``) of these status codes, each described in words
    (``ERROR_WORDS``; ``words``: this route's own, by status code)."""
    said = {**ERROR_WORDS, **(words or {})}
    return {str(c): ok("Error", said.get(c, "error")) for c in codes}


def body(name: str, required: bool = True) -> dict:
    """A JSON request body of the component schema ``name`` (required unless ``required`` is False)."""
    return {"required": required, "content": {"application/json": {"schema": ref(name)}}}
