"""Schemathesis against ``/api/openapi.json``: every operation the document lists (but the two event
streams, which never end by design and are tested in tests/web/test_sse.py and bench_server), with data that
fits the document and data that does not, on the Flask app in-process (WSGI).

Checks on every response: no 5xx; the status code, content type, headers and body conform to the document;
invalid data is refused with a 4xx. Beside schemathesis's checks: every 4xx body is ``{"error", "field"?}``
and no request reaches the app's catch-all handler (which answers 400/503 but logs "unexpected error": a
bug hidden behind a 4xx is still a bug).

Half the match ids of valid requests are replaced by ids of real matches (one per game), so the match operations are
exercised past their 404. Examples per operation are bounded (more under `make soak`). Invalid data: in
test_openapi_fuzz_negative.py, with the same app and checks.
"""

from __future__ import annotations

import logging
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable

from tests.stress.conftest import examples

N = examples(3, 150)
STREAMS = r".*/stream$"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    from companion.storage import Store
    from companion.base.timeutil import FakeClock
    from companion.services.access import Access
    from companion.web.app import create_app

    store = Store(tmp_path_factory.mktemp("openapi") / "companion.db", clock=FakeClock("2026-03-01T20:00:00Z"))
    app = create_app({"STORE": store, "TESTING": True, "SETUP_CODE": "13572468", "SSE_HEARTBEAT": 0.05})
    acc = Access(store)
    tokens = {"organiser": acc.create_api_token("organiser")[0], "player": acc.create_api_token("player")[0]}
    c = app.test_client()
    h = {"Authorization": f"Bearer {tokens['organiser']}"}
    ids = []
    for game, players in (("richelieu", ["Ada", "Bo"]), ("conquest-italy", ["Anna", "Bruno", "Carla"]),
                          ("rome-is-burning", ["Anna", "Bruno", "Carla"]), ("web-of-power", ["A", "B", "C"])):
        r = c.post("/api/matches", json={"game": game, "players": players}, headers=h)
        assert r.status_code == 201, r.json
        ids.append(r.json["id"])
    yield app, tokens, ids
    store.close()


class Unexpected(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def operations(app):
    import schemathesis

    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", app).exclude(path_regex=STREAMS)
    # unknown query parameters are ignored on purpose (cache busters, old links): not "invalid data"
    schema.config.generation.update(allow_extra_parameters=False)
    out = []
    for result in schema.get_all_operations():
        out.append(result.ok())
    return out


def test_openapi_document_lists_every_api_route(env):
    """Every /api route of the app is in the document (so the fuzzing below reaches all of them)."""
    app, _, _ = env
    import schemathesis

    doc = schemathesis.openapi.from_wsgi("/api/openapi.json", app).raw_schema
    documented = {(p, m.upper()) for p, item in doc["paths"].items() for m in item if m in
                  ("get", "post", "put", "patch", "delete")}
    routes = set()
    for rule in app.url_map.iter_rules():
        path = str(rule.rule)
        if not (path.startswith("/api/") or path == "/healthz"):
            continue
        path = path.replace("<", "{").replace(">", "}")
        import re

        path = re.sub(r"\{(?:\w+:)?(\w+)\}", r"{\1}", path)
        for m in rule.methods - {"HEAD", "OPTIONS"}:
            routes.add((path, m))
    missing = sorted(routes - documented)
    assert not missing, f"routes missing from /api/openapi.json: {missing}"


def test_every_operation_conforms_and_never_fails_on_valid_data(env):
    fuzz(env, "positive")


def nothing_to_negate(op) -> bool:
    """No data can break this operation's document: no body, no security, and only optional query parameters
    that take any string (on the wire every query value is a string). Schemathesis proves it the long way:
    hundreds of negative draws, every one filtered out as valid, then Unsatisfiable."""
    if list(op.path_parameters) or list(op.headers) or list(op.cookies) or list(op.body) \
            or op.definition.raw.get("security") or not list(op.query):
        return False
    return all(not p.is_required and p.definition.get("schema") == {"type": "string"}
               and set(p.definition) <= {"name", "in", "schema", "description"} for p in op.query)


def fuzz(env, mode):
    """Every operation with data of this mode (the negative one in test_openapi_fuzz_negative.py: a file of
    its own, so that `make test` runs the two on two workers)."""
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (content_type_conformance, negative_data_rejection,
                                                   response_headers_conformance, response_schema_conformance,
                                                   status_code_conformance)

    app, tokens, ids = env
    generation = GenerationMode.POSITIVE if mode == "positive" else GenerationMode.NEGATIVE
    checks = [not_a_server_error, status_code_conformance, content_type_conformance,
              response_headers_conformance, response_schema_conformance]
    if generation is GenerationMode.NEGATIVE:
        checks.append(negative_data_rejection)
    handler = Unexpected()
    logging.getLogger("companion").addHandler(handler)
    rng = random.Random(7)
    seen = {}
    try:
        for op in operations(app):
            if generation is GenerationMode.NEGATIVE and nothing_to_negate(op):
                seen[op.label] = 0  # what schemathesis would find after 20-30 s of draws (all filtered out)
                continue
            strategy = op.as_strategy(generation_mode=generation)
            calls = [0]

            @settings(max_examples=N, suppress_health_check=list(HealthCheck), database=None, deadline=None)
            @given(case=strategy)
            def run(case):
                if generation is GenerationMode.POSITIVE and case.path_parameters \
                        and "match_id" in case.path_parameters and rng.random() < 0.5:
                    case.path_parameters["match_id"] = rng.choice(ids)
                who = rng.choice(["organiser", "organiser", "player"])
                # schemathesis's WSGI transport asks for gzip (as requests does) but reads the body as sent:
                # the answers are checked as they are; the compressed ones are tests/web/test_compress.py's
                response = case.call_and_validate(headers={"Authorization": f"Bearer {tokens[who]}",
                                                           "Accept-Encoding": "identity"}, checks=checks)
                calls[0] += 1
                if 400 <= response.status_code < 500 and response.headers.get("Content-Type", "").startswith(
                        "application/json"):
                    body = response.json()
                    assert isinstance(body.get("error"), str) and body["error"], body
                    assert set(body) <= {"error", "field", "code"}, body
                unexpected = [r.getMessage() for r in handler.records]
                assert not unexpected, f"{op.label}: {unexpected[:2]} (case {case.path_parameters} {case.body!r})"

            try:
                run()
            except Unsatisfiable:  # nothing in this operation can be made invalid (no body, no parameter)
                assert generation is GenerationMode.NEGATIVE, op.label
            seen[op.label] = calls[0]
    finally:
        logging.getLogger("companion").removeHandler(handler)
    print(mode, sum(seen.values()), "calls", seen)
    assert len(seen) >= 20, seen
    if generation is GenerationMode.POSITIVE:
        assert all(n > 0 for n in seen.values()), seen
    else:
        assert sum(1 for n in seen.values() if n > 0) >= 15, seen
