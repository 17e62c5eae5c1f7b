"""Every numeric query (and header) parameter of every operation in ``/api/openapi.json`` against what the
code accepts: the document gives each its ``minimum`` and ``maximum``; a value outside them, a fraction or
a word is refused with 400 naming the parameter; the bounds themselves are taken (whatever else the request
may then say, it is not about that parameter). The path parameters are filled with real ids (a match of
each game, a board), so each operation gets past its 404 to read the parameter."""

import pytest

from tests.web.conftest import Api

NUMERIC = ("integer", "number")


@pytest.fixture
def env(app, tokens):
    org = Api(app.test_client(), bearer=tokens["organiser"])
    matches = {}
    for game, players in (("conquest-italy", ["Anna", "Bruno", "Carla"]), ("web-of-power", ["A", "B", "C"]),
                          ("richelieu", ["Ada", "Bo"]), ("rome-is-burning", ["Anna", "Bruno", "Carla"])):
        r = org.post("/api/matches", {"game": game, "players": players})
        assert r.status_code == 201, r.json
        matches[game] = r.json["id"]
    r = org.post("/api/boards", {"name": "Club board"})
    assert r.status_code == 201, r.json
    return org, matches, r.json["id"]


def numeric_parameters(doc):
    """(method, path, parameter) for every query/header parameter whose schema is a number."""
    out = []
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            for p in op.get("parameters", []):
                if p["in"] in ("query", "header") and (p.get("schema") or {}).get("type") in NUMERIC:
                    out.append((method, path, p))
    return out


def url_of(path, matches, board):
    game = "conquest-italy"
    if "/conquest/" in path:
        game = "conquest-italy"
    return (path.replace("{match_id}", matches[game]).replace("{board_id}", board)
            .replace("{version}", "1"))


def call(org, method, url, param, value, others):
    """One request with ``param`` set to ``value`` (the operation's other numeric parameters at their
    minimum, so that the request asks something answerable)."""
    query = dict(others)
    headers = {}
    if param["in"] == "header":
        headers[param["name"]] = value
    else:
        query[param["name"]] = value
    qs = "&".join(f"{k}={v}" for k, v in query.items())
    target = f"{url}?{qs}" if qs else url
    if method == "get":
        r = org.c.get(target, headers={**org._headers("GET", None), **headers}, buffered=False)
    else:  # a write: its body is refused or taken, after the query has been read
        r = getattr(org.c, method)(target, headers={**org._headers(method.upper(), None), **headers},
                                   data=b"", buffered=False)
    status = r.status_code
    body = r.get_json(silent=True) if status != 200 or not r.mimetype.startswith("text/event-stream") else None
    r.close()
    return status, body


def test_every_numeric_query_parameter_is_documented_and_checked_as_the_code_reads_it(app, env):
    org, matches, board = env
    doc = org.get("/api/openapi.json").json
    params = numeric_parameters(doc)
    names = {(m, p, q["name"]) for m, p, q in params}
    # the walk reaches the ones known today (a new one is walked too)
    assert {("get", "/api/matches", "limit"), ("get", "/api/players", "limit"),
            ("get", "/api/matches/{match_id}/events", "after"),
            ("get", "/api/matches/{match_id}/stream", "last_event_id"),
            ("get", "/api/matches/{match_id}/stream", "Last-Event-ID"),
            ("get", "/api/boards/{board_id}/photo", "version"), ("put", "/api/boards/{board_id}/photo",
                                                                  "expected_version"),
            ("get", "/api/boards/{board_id}/export", "version"),
            ("get", "/api/matches/{match_id}/conquest/odds", "stop_at")} <= names
    problems = []
    for method, path, param in params:
        where = f"{method.upper()} {path} {param['name']}"
        schema = param["schema"]
        if "minimum" not in schema or "maximum" not in schema:
            problems.append(f"{where}: the document gives no minimum or maximum")
            continue
        lo, hi = schema["minimum"], schema["maximum"]
        op = doc["paths"][path][method]
        others = {q["name"]: q["schema"]["minimum"] for q in op.get("parameters", [])
                  if q is not param and q["in"] == "query" and q.get("schema", {}).get("type") in NUMERIC}
        if "/conquest/odds" in path:
            others = {k: (125 if k in ("attacker", "defender") else v) for k, v in others.items()}
            others.setdefault("attacker", 125)
            others.setdefault("defender", 125)
        url = url_of(path, matches, board)
        for bad in ("x", "1.5", str(lo - 1), str(hi + 1)):
            status, body = call(org, method, url, param, bad, others)
            if status != 400 or (body or {}).get("field") != param["name"]:
                problems.append(f"{where}={bad}: {status} {body} (want 400 naming {param['name']})")
        for good in (lo, hi):
            status, body = call(org, method, url, param, str(good), others)
            if status == 400 and (body or {}).get("field") == param["name"]:
                problems.append(f"{where}={good}: refused although documented ({body})")
        if "400" not in op["responses"]:
            problems.append(f"{where}: the operation does not document its 400")
    assert problems == []
