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


def path_param(name: str, max_length: int = 64) -> dict:
    """A required string parameter of the path (``match_id``, ``player``)."""
    return {"name": name, "in": "path", "required": True,
            "schema": {"type": "string", "minLength": 1, "maxLength": max_length}}


SECURITY = [{"bearer": []}, {"session": []}]  # a write: a bearer token or the session cookie


def err(*codes: int) -> dict:
    """The error responses (``{"error", "field"?}``) of these status codes."""
    return {str(c): {"description": "error", "content": {"application/json": {"schema": ref("Error")}}}
            for c in codes}


def body(name: str) -> dict:
    """A required JSON request body of the component schema ``name``."""
    return {"required": True, "content": {"application/json": {"schema": ref(name)}}}
