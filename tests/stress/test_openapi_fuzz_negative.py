"""Schemathesis against ``/api/openapi.json`` with data that does not fit the document: every operation refuses
it with a 4xx that names the field, never a 5xx, never the catch-all handler (the checks and the app: in
test_openapi_fuzz.py; a file of its own so that the two modes run on two workers of `make test`)."""

from tests.stress.test_openapi_fuzz import env, fuzz  # noqa: F401  (env: the module's app, a fixture)


def test_every_operation_conforms_and_never_fails_on_invalid_data(env):  # noqa: F811
    fuzz(env, "negative")
