"""Hypothesis over every CLI input schema.

Documents are generated from the schemas themselves (schemathesis's JSON Schema engine, reached through its
public API: each schema is the request body of an operation in a throw-away OpenAPI document):

- invalid documents (negative generation, random JSON, random bytes) -> exit 2, exactly one line on stderr,
  naming the JSON path (``error: $.players[2]: ...``), never a traceback;
- valid documents -> exit 0 with JSON on stdout that validates against the command's output schema
  (``tests/stress/cli_contract.py``) and names the input's players, or exit 2 with one line when a rule the
  schema cannot express refuses it (duplicate names, a map that does not add up ...).

Most calls are in-process (``companion.cli.main``); a few are real processes at the end.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from companion.cli import main
from companion.base.schemas import _validator, load_schema, schema_names, standalone
from tests.stress.cli_contract import COMMANDS, NOT_CLI, prepare_data_dir
from tests.stress.conftest import examples

REPO = Path(__file__).resolve().parents[2]
ONE_LINE_ERROR = re.compile(r"^error: \$.*: \S")
# the season settings commands name paths inside the club's/season's settings ("settings.points[...]")
SETTINGS_ERROR = re.compile(r"^error: (\$|settings).*: \S")
N_VALID = examples(10, 300)
N_INVALID = examples(10, 300)
BY_NAME = {c[0]: c for c in COMMANDS}


def _openapi_of_cli_schemas() -> dict:
    comps, paths = {}, {}
    for _, schema, *_ in COMMANDS:
        if schema in comps:
            continue
        comps[schema] = standalone(load_schema(schema))  # its references (to other files too) written in place
        paths["/" + schema] = {"post": {
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": {"$ref": f"#/components/schemas/{schema}"}}}},
            "responses": {"200": {"description": "ok"}}}}
    return {"openapi": "3.1.0", "info": {"title": "companion CLI inputs", "version": "1"},
            "paths": paths, "components": {"schemas": comps}}


_STRATEGIES: dict = {}


def documents(schema: str, valid: bool):
    key = (schema, valid)
    if key not in _STRATEGIES:
        import schemathesis
        from schemathesis import GenerationMode

        api = schemathesis.openapi.from_dict(_openapi_of_cli_schemas())
        op = api["/" + schema]["POST"]
        mode = GenerationMode.POSITIVE if valid else GenerationMode.NEGATIVE
        _STRATEGIES[key] = op.as_strategy(generation_mode=mode).map(lambda case: case.body)
    return _STRATEGIES[key]


def check_doc(command, workdir, doc):
    """Negative generation may give a non-JSON body (bytes): pass those as raw file contents."""
    if isinstance(doc, (bytes, bytearray)):
        return check_call(command, workdir, raw=bytes(doc))
    return check_call(command, workdir, doc)


def run_main(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def is_valid(schema: str, doc) -> bool:
    return not any(True for _ in _validator(schema).iter_errors(doc))


def one_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].strip(), f"expected one line on stderr, got {err!r}"
    return lines[0]


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory(prefix="companion-clifuzz-") as d:
        data = os.path.join(d, "data")
        prepare_data_dir(data, main)
        yield d, data


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch):
    monkeypatch.delenv("COMPANION_DEBUG", raising=False)


def check_call(command, workdir, doc=None, raw: bytes | None = None):
    """Run one command on one document; check the contract; return 'ok', 'refused' or 'invalid'."""
    name, schema, argv, out_schema, players_in, players_out = BY_NAME[command]
    d, data = workdir
    with tempfile.NamedTemporaryFile("wb", suffix=".json", dir=d, delete=False) as fh:
        fh.write(raw if raw is not None else json.dumps(doc).encode("utf-8"))
        path = fh.name
    try:
        code, out, err = run_main(argv(path, data))
    finally:
        os.unlink(path)
    if raw is not None:
        try:
            doc = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            assert code == 2, (command, raw, code, out, err)
            one_line(err)
            return "invalid"
    if not is_valid(schema, doc):
        assert code == 2, (command, doc, code, out, err)
        line = one_line(err)
        pattern = SETTINGS_ERROR if schema == "season.settings" else ONE_LINE_ERROR
        assert pattern.match(line), f"{command}: the error must name a JSON path: {line!r} for {doc!r}"
        return "invalid"
    # a document the schema accepts
    if code == 2:  # a rule checked in code refused it: still one line naming the culprit
        line = one_line(err)
        assert line.startswith("error: "), line
        return "refused"
    assert code == 0, f"{command} exit {code} on a schema-valid document: {err!r} {doc!r}"
    assert err.strip() == "", err
    result = json.loads(out)
    errors = sorted(Draft202012Validator(out_schema).iter_errors(result), key=lambda e: list(e.path))
    assert not errors, f"{command}: output does not match its schema: {errors[0].message} at {list(errors[0].path)}"
    if players_in is not None:
        assert players_in(doc) == players_out(result), (command, doc, result)
    return "ok"


def test_every_cli_input_schema_is_covered():
    """A new input schema must get a row in tests/stress/cli_contract.py (or be declared API-only)."""
    inputs = {n for n in schema_names() if not n.startswith("api.") and not n.endswith(".events")}
    covered = {c[1] for c in COMMANDS} | NOT_CLI
    assert inputs <= covered, inputs - covered


@pytest.mark.parametrize("command", sorted(BY_NAME))
def test_examples_of_the_schema_pass_through_the_command(command, workdir):
    """The shipped examples: valid ones answer or are refused in one line; invalid/ ones exit 2 naming a path."""
    schema = BY_NAME[command][1]
    folder = REPO / "schemas" / "examples" / schema
    outcomes = []
    for f in sorted(folder.glob("*.json")):
        outcomes.append(check_call(command, workdir, json.loads(f.read_text())))
    for f in sorted((folder / "invalid").glob("*.json")):
        doc = json.loads(f.read_text())
        if not is_valid(schema, doc):  # some invalid/ examples are refused by code, not by the schema
            assert check_call(command, workdir, doc) == "invalid"
        else:
            assert check_call(command, workdir, doc) == "refused", f
    assert outcomes


@pytest.mark.parametrize("command", sorted(BY_NAME))
def test_invalid_documents_exit_2_with_one_line_naming_the_path(command, workdir):
    schema = BY_NAME[command][1]

    @settings(max_examples=N_INVALID, suppress_health_check=list(HealthCheck), database=None, deadline=None)
    @given(doc=documents(schema, valid=False))
    def run(doc):
        check_doc(command, workdir, doc)

    run()


@pytest.mark.parametrize("command", sorted(BY_NAME))
def test_valid_documents_answer_with_conforming_output(command, workdir):
    schema = BY_NAME[command][1]
    seen = {"ok": 0, "refused": 0, "invalid": 0}

    @settings(max_examples=N_VALID, suppress_health_check=list(HealthCheck), database=None, deadline=None)
    @given(doc=documents(schema, valid=True))
    def run(doc):
        seen[check_doc(command, workdir, doc)] += 1

    run()
    assert seen["invalid"] == 0, seen  # positive generation only makes schema-valid documents


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=15)


@settings(max_examples=examples(60, 600), suppress_health_check=list(HealthCheck), database=None, deadline=None)
@given(command=st.sampled_from(sorted(BY_NAME)),
       raw=st.one_of(st.binary(max_size=80), json_values.map(lambda v: json.dumps(v).encode()),
                     st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_random_bytes_and_json_never_crash(command, raw, workdir):
    check_call(command, workdir, raw=raw)


# -- a few real processes: what a user at a shell sees ----------------------------------------------
def _proc(args, stdin):
    env = {k: v for k, v in os.environ.items() if k != "COMPANION_DEBUG"}
    p = subprocess.run([sys.executable, "-m", "companion", *args], input=stdin, capture_output=True, text=True,
                       env=env, cwd=str(REPO), timeout=60)
    return p.returncode, p.stdout, p.stderr


@pytest.mark.parametrize("command, stdin, code", [
    ("score web-of-power", '{"players": ["Anna", 7], "scoring": "final"}', 2),
    ("score richelieu", "{not json", 2),
    ("season standings", "[]", 2),
    ("match state", '{"id": "x", "game": "chess", "players": [], "created_at": "2026", "events": []}', 2),
    ("reinforcements", "", 2),
])
def test_real_process_refuses_in_one_line(command, stdin, code):
    argv = BY_NAME[command][2]("-", "unused")
    rc, out, err = _proc(argv, stdin)
    assert rc == code, (rc, out, err)
    assert out == ""
    one_line(err)


def test_real_process_scores_a_valid_document():
    doc = (REPO / "schemas/examples/richelieu.score/rule-book-bonus-example.json").read_text()
    rc, out, err = _proc(["score", "richelieu", "-"], doc)
    assert rc == 0 and err == "", err
    result = json.loads(out)
    assert not list(Draft202012Validator(BY_NAME["score richelieu"][3]).iter_errors(result))
