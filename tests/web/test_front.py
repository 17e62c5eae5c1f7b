"""The ASGI front (companion/web/asgi.py) hands every request to the Flask app unchanged: the same request sent
through the front and straight to the Flask app (Werkzeug's test client, no front) gets the same status, the
same JSON (the field named, the sentence in the caller's language) and the same headers, for every rule of the
gate (Host, bearer, session, viewers off, Origin, the write limits, the connection's probation) and of the
views (roles, the body's check, the seat's secrets, a 500 with an id in the log), and the streams the front
pumps on its loop open and are refused as the Flask views open and refuse them."""

import asyncio
import json
import logging
import re
import threading

import pytest

from companion.web.asgi import Front, Limits
from companion.web.shares import PROBATION_KEY

ORIGIN = "http://localhost"


def scope_of(path, method="GET", headers=(), query=b"", client=("127.0.0.1", 50000), host=b"localhost"):
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method, "scheme": "http",
            "path": path, "raw_path": path.encode(), "root_path": "", "query_string": query, "client": client,
            "server": ("127.0.0.1", 80),
            "headers": [*([(b"host", host)] if host else []), *[(k.lower().encode(), v.encode()) for k, v in headers]]}


def ask(front, scope, body=b""):
    """One request to ``front``: (status, headers as a dict, the body)."""
    scope = dict(scope, headers=[*scope["headers"], *([(b"content-length", str(len(body)).encode())] if body else [])])
    sent = []
    got = [False]

    async def receive():
        if not got[0]:
            got[0] = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()

    async def send(message):
        sent.append(message)

    # in a thread of its own: a worker that ran a browser test first holds Playwright's event loop in this one
    failed = []

    def run():
        try:
            asyncio.run(front(scope, receive, send))
        except BaseException as exc:  # noqa: BLE001 - raised again below, in the test's thread
            failed.append(exc)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if failed:
        raise failed[0]
    headers = {}
    for k, v in sent[0]["headers"]:
        headers.setdefault(k.decode(), []).append(v.decode())
    return sent[0]["status"], headers, b"".join(m.get("body", b"") for m in sent[1:])


class Direct:
    """The Flask app with no front: each request made by Werkzeug's test client from the same scope (the
    connection's probation, when ``connections`` says so, in its environ as the front puts it)."""

    def __init__(self, app):
        self.app = app
        self.connections = None
        self.streams = {}

    def environ(self, scope, body: bytes) -> dict:
        from werkzeug.test import EnvironBuilder

        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        host = next((v for k, v in headers if k.lower() == "host"), "localhost")
        builder = EnvironBuilder(path=scope["path"], method=scope["method"], base_url=f"http://{host}",
                                 query_string=scope["query_string"].decode("latin-1"), data=body,
                                 headers=[(k, v) for k, v in headers if k.lower() not in ("host", "content-length")],
                                 environ_base={"REMOTE_ADDR": scope["client"][0], "REMOTE_PORT": scope["client"][1]})
        try:
            environ = builder.get_environ()
        finally:
            builder.close()
        if not any(k.lower() == "host" for k, _ in headers):
            environ.pop("HTTP_HOST", None)
        probation = self.connections.probation_of(scope["client"]) if self.connections is not None else None
        if probation:
            environ[PROBATION_KEY] = probation
        return environ

    def ask(self, scope, body=b"", stream=False):
        from werkzeug.test import run_wsgi_app

        it, status, headers = run_wsgi_app(self.app, self.environ(scope, body))
        data = b""
        try:
            for chunk in it:
                data += chunk if isinstance(chunk, bytes) else chunk.encode()
                if stream and (b"event: snapshot" in data or b"event: hello" in data):
                    break
        finally:
            getattr(it, "close", lambda: None)()
        out = {}
        for k, v in headers.items():
            out.setdefault(k.lower(), []).append(v)
        return int(status.split()[0]), out, data


def _answer(f, scope, body=b""):
    return f.ask(scope, body) if isinstance(f, Direct) else ask(f, scope, body)


def same(a, b, scope, body=b""):
    """The answers of the front and of the app alone, compared with what differs between two answers by nature
    (ids, times) masked; returns the status and the JSON. (``connection: close`` is the front's own, after
    a refusal of the connection's trust: not compared.)"""
    answers = [_answer(f, scope, body) for f in (a, b)]

    def masked(answer):
        status, headers, data = answer
        doc = json.loads(data)
        if "id" in doc and status >= 500:
            doc["id"] = "<id>"
        text = re.sub(r'"at":"[^"]*"', '"at":"<t>"', json.dumps(doc))
        headers = {k: v for k, v in headers.items() if k != "connection"}
        cookies = [re.sub(r"Expires=[^;]*", "Expires=<t>", c) for c in headers.pop("set-cookie", [])]
        return status, headers, text, cookies

    assert masked(answers[0]) == masked(answers[1])
    return answers[0][0], json.loads(answers[0][2])


@pytest.fixture
def fronts(app):
    own = Front(app, Limits(), threads=2)
    yield own, Direct(app)
    own.pool.shutdown(wait=True)
    own.io.shutdown(wait=True)


@pytest.fixture
def match(fake_game, organiser):
    return organiser.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"]}).json["id"]


def test_health_and_the_gate_answer_as_flask_does(app, fronts, tokens):
    own, flask = fronts
    assert same(own, flask, scope_of("/healthz"))[0] == 200
    assert same(own, flask, scope_of("/healthz", headers=[("Authorization", "Bearer nope")])) == (
        401, {"error": "unknown, expired or revoked token", "field": "Authorization"})
    assert same(own, flask, scope_of("/healthz", headers=[("Authorization", "Basic x")]))[0] == 401
    assert same(own, flask, scope_of("/healthz", host=b"rebind.example"))[1]["field"] == "Host"
    # the caller's language, from ?lang= (its cookie set) or Accept-Language; a stale session cookie dropped
    status, doc = same(own, flask, scope_of("/healthz", host=b"rebind.example", query=b"lang=it"))
    assert status == 403 and doc["error"] != "this Host is not served here (DNS rebinding protection)"
    assert same(own, flask, scope_of("/healthz", headers=[("Authorization", "Bearer nope"),
                                                        ("Accept-Language", "it-IT,it;q=0.9")]))[0] == 401
    assert same(own, flask, scope_of("/healthz", headers=[("Cookie", "companion_sid=gone; lang=en")]))[0] == 200
    _, headers, _ = ask(own, scope_of("/healthz", headers=[("Cookie", "companion_sid=gone")], query=b"lang=it"))
    assert any(c.startswith("companion_sid=;") for c in headers["set-cookie"])
    assert any(c.startswith("lang=it;") for c in headers["set-cookie"])
    assert headers["content-security-policy"] and headers["x-frame-options"] == ["DENY"]


def test_a_match_is_shown_as_flask_shows_it_to_each_caller(app, fronts, tokens, match, organiser):
    own, flask = fronts
    path = f"/api/matches/{match}"
    for headers in ([], [("Authorization", f"Bearer {tokens['player']}")],
                    [("Authorization", f"Bearer {tokens['organiser']}")]):
        for query in (b"", b"as=viewer"):
            status, doc = same(own, flask, scope_of(path, headers=headers, query=query))
            assert status == 200 and doc["id"] == match
    assert same(own, flask, scope_of("/api/matches/nope")) == (404, {"error": "no match nope", "field": "match_id"})
    assert organiser.put("/api/auth/settings", {"viewers_allowed": False}).status_code == 200
    status, doc = same(own, flask, scope_of(path))
    assert status == 401 and doc["field"] == "Authorization"
    assert same(own, flask, scope_of("/healthz"))[0] == 200  # open to viewers whatever the club chose


def test_a_write_is_refused_as_flask_refuses_it(app, fronts, tokens, match):
    own, flask = fronts
    path = f"/api/matches/{match}/events"
    player = [("Authorization", f"Bearer {tokens['player']}")]

    def post(doc, headers=player, **kw):
        body = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
        return same(own, flask, scope_of(path, "POST", headers=[*headers, ("Content-Type", "application/json")],
                                         **kw), body)

    assert post({"type": "point", "data": {"player": "Anna"}, "expected_seq": 0}, headers=[])[1]["field"] == "Origin"
    assert post({"type": "point", "data": {"player": "Anna"}, "expected_seq": 0},
                headers=[("Origin", ORIGIN)])[1]["field"] == "Authorization"
    assert post(b"{nope") == (400, post(b"{nope")[1]) and post(b"{nope")[1]["field"] == "$"
    status, doc = post({"type": "point", "data": {"player": "Anna"}})
    assert status == 400 and doc["error"] == "the last event seen is missing"
    assert post({"type": "undo", "expected_seq": 0})[1]["field"] == "$.type"
    assert post({"type": "point", "data": {"player": "Zed"}, "expected_seq": 0})[1]["field"].startswith("$.data")
    assert post({"type": "point", "data": {"player": "Anna"}, "expected_seq": 7})[0] == 409
    assert post(b'{"type": "point", "expected_seq": NaN}')[0] == 400
    # a browser's write (a session cookie) from another site
    cookie = [("Cookie", "companion_sid=whatever"), ("Origin", "http://evil.example")]
    assert post({"type": "point", "data": {"player": "Anna"}, "expected_seq": 0}, headers=cookie)[0] == 403
    assert post({"type": "point", "data": {"player": "Anna"}, "expected_seq": 0},
                headers=[*player, ("Origin", "http://evil.example")])[1]["field"] == "Origin"


def test_writes_from_a_guest_address_are_limited_through_the_front_as_without_it(app, fronts, match):
    """A phone on the Wi-Fi (a session cookie, not loopback) spends the same write budget through the
    front as straight to the app: the 429 comes after as many writes, naming the same budget."""
    from tests.web.conftest import join

    runs = []
    for n, front in enumerate(fronts):
        phone = app.test_client()
        join(app, phone)
        headers = [("Cookie", f"companion_sid={phone.get_cookie('companion_sid').value}"), ("Origin", ORIGIN),
                   ("Content-Type", "application/json")]
        body = json.dumps({"type": "point", "data": {"player": "Nobody"}, "expected_seq": 0}).encode()
        for i in range(200):
            status, answer_headers, data = _answer(front, scope_of(
                f"/api/matches/{match}/events", "POST", headers=headers, client=(f"192.168.1.{50 + n}", 4000)), body)
            if status == 429:
                runs.append((i, json.loads(data)["field"], answer_headers["retry-after"]))
                break
    assert len(runs) == 2 and runs[0] == runs[1], runs


class _Probation:
    """Every connection on probation: an organiser's token earns its way out, nobody else's."""

    def probation_of(self, client):
        return "address"

    def earned(self, client, trust):
        return trust >= 2

    def get(self, client):
        return None


def test_a_connection_on_probation_is_refused_but_for_an_organiser(app, fronts, tokens, match):
    own, flask = fronts
    from companion.web import gate

    for f in fronts:
        f.connections = _Probation()
    status, doc = same(own, flask, scope_of(f"/api/matches/{match}"))
    assert status == 429 and doc["field"] == "address"
    _, headers, _ = ask(own, scope_of(f"/api/matches/{match}"))
    assert headers["connection"] == ["close"]  # (the connection ends with the refusal)
    status, headers, _ = ask(own, scope_of(f"/api/matches/{match}",
                                           headers=[("Authorization", f"Bearer {tokens['organiser']}")]))
    assert status == 200 and "connection" not in headers
    assert gate.TooManyConnections("address").status == 429 and PROBATION_KEY


def test_a_bug_is_a_500_with_an_id_in_the_log(app, fronts, tokens, match, monkeypatch, caplog):
    own, flask = fronts
    service = app.extensions["companion"].service

    def broken(*a, **kw):
        raise RuntimeError("boom")

    monkeypatch.setattr(service, "append", broken)
    body = json.dumps({"type": "point", "data": {"player": "Anna"}, "expected_seq": 0}).encode()
    scope = scope_of(f"/api/matches/{match}/events", "POST",
                     headers=[("Authorization", f"Bearer {tokens['organiser']}"), ("Content-Type", "application/json")])
    with caplog.at_level(logging.ERROR, logger="companion.web.app"):
        status, headers, data = ask(own, scope, body)
        doc = json.loads(data)
        assert status == 500 and doc["error"] == "internal error" and doc["id"]
        assert any(doc["id"] in r.getMessage() and "/api/matches/<match_id>/events" in r.getMessage()
                   for r in caplog.records)
    assert same(own, flask, scope, body)[0] == 500


def test_a_write_through_the_front_is_stored_and_answered_as_flask_answers_it(app, fronts, tokens, match):
    own, flask = fronts
    headers = [("Authorization", f"Bearer {tokens['organiser']}"), ("Content-Type", "application/json")]
    answers = []
    for seq, front in enumerate((flask, own)):
        body = json.dumps({"type": "point", "data": {"player": "Anna"}, "expected_seq": seq}).encode()
        status, h, data = _answer(front, scope_of(f"/api/matches/{match}/events", "POST", headers=headers), body)
        assert status == 201, data
        answers.append((h, json.loads(data)))
    (h0, a), (h1, b) = answers
    assert {k: v for k, v in h0.items() if k != "content-length"} == {k: v for k, v in h1.items() if k != "content-length"}
    assert b["event"]["seq"] == 2 and b["view"]["state"]["points"]["Anna"] == 2
    assert set(a) == set(b) and set(a["event"]) == set(b["event"])


def test_undo_and_redo_through_the_front_are_stored_and_refused_as_flask_does(app, fronts, tokens, match):
    own, flask = fronts
    organiser = [("Authorization", f"Bearer {tokens['organiser']}"), ("Content-Type", "application/json")]
    player = [("Authorization", f"Bearer {tokens['player']}"), ("Content-Type", "application/json")]

    def post(front, what, seq, headers=organiser):
        body = json.dumps({"expected_seq": seq}).encode()
        status, h, data = _answer(front, scope_of(f"/api/matches/{match}/{what}", "POST", headers=headers), body)
        return status, {k: v for k, v in h.items() if k != "content-length"}, json.loads(data)

    for seq in range(2):  # two points, each undone by one front
        body = json.dumps({"type": "point", "data": {"player": "Anna"}, "expected_seq": 3 * seq}).encode()
        assert ask(own, scope_of(f"/api/matches/{match}/events", "POST", headers=organiser), body)[0] == 201
        answers = [post(flask if seq == 0 else own, "undo", 3 * seq + 1)]
        assert answers[0][0] == 201, answers
        answers.append(post(flask if seq == 0 else own, "redo", 3 * seq + 2))
        assert answers[1][0] == 201 and answers[1][2]["view"]["state"]["points"]["Anna"] == seq + 1, answers
        if seq == 0:
            first = answers
        else:  # the same answers, but for the seqs and the points
            for (s0, h0, a), (s1, h1, b) in zip(first, answers):
                assert (s0, h0, set(a), a["event"]["type"]) == (s1, h1, set(b), b["event"]["type"])
    # refusals: a stale seq, a viewer, a missing body field, nothing to redo
    scope = scope_of(f"/api/matches/{match}/undo", "POST", headers=organiser)
    assert same(own, flask, scope, json.dumps({"expected_seq": 1}).encode())[0] == 409
    assert same(own, flask, scope, b"{}") == (400, {"error": "the last event seen is missing", "field": "$"})
    status, doc = same(own, flask, scope_of(f"/api/matches/{match}/redo", "POST", headers=player),
                       json.dumps({"expected_seq": 6}).encode())
    assert status == 409 and doc["error"].startswith("nothing to redo")
    assert same(own, flask, scope_of(f"/api/matches/{match}/undo", "POST", headers=[("Origin", ORIGIN)]),
                json.dumps({"expected_seq": 6}).encode())[1]["field"] == "Authorization"


def ask_stream(front, scope):
    """A stream's answer from ``front``: (status, headers as a dict, what it sent before the client left:
    its head, or the whole refusal). The client leaves once the head (a snapshot or a hello) arrived."""
    if isinstance(front, Direct):
        status, headers, data = front.ask(scope, stream=True)
        return status, headers, data.decode()
    sent = []
    state = {"asked": False}

    def run():
        async def go():
            head = asyncio.Event()

            async def receive():
                if not state["asked"]:
                    state["asked"] = True
                    return {"type": "http.request", "body": b"", "more_body": False}
                await head.wait()
                return {"type": "http.disconnect"}

            async def send(message):
                sent.append(message)
                text = b"".join(m.get("body", b"") for m in sent[1:])
                if b"event: snapshot" in text or b"event: hello" in text:
                    head.set()

            await asyncio.wait_for(front(scope, receive, send), 20)

        asyncio.run(go())

    t = threading.Thread(target=run)
    t.start()
    t.join()
    headers = {}
    for k, v in sent[0]["headers"]:
        headers.setdefault(k.decode(), []).append(v.decode())
    return sent[0]["status"], headers, b"".join(m.get("body", b"") for m in sent[1:]).decode()


def same_stream(a, b, scope):
    answers = [ask_stream(f, scope) for f in (a, b)]
    for n, (status, headers, text) in enumerate(answers):
        # (up to the snapshot or hello: the front writes the head in one piece, the app in its parts)
        for marker in ("event: snapshot", "event: hello"):
            if marker in text:
                before, _, after = text.partition(marker)
                text = before + marker + after.split("\n\n", 1)[0] + "\n\n"
                break
        answers[n] = (status, {k: v for k, v in headers.items() if k != "connection"}, text)
    for n in range(2):
        status, headers, text = answers[n]
        answers[n] = (status, headers, re.sub(r'"(at|now|deadline|started_at|id)":"[^"]*"', r'"\1":"<t>"', text))
    assert answers[0] == answers[1]
    return answers[0]


def test_a_stream_through_the_front_opens_and_is_refused_as_flask_s_does(app, fronts, tokens, match, organiser):
    own, flask = fronts
    path = f"/api/matches/{match}/stream"
    body = json.dumps({"type": "point", "data": {"player": "Anna"}, "expected_seq": 0}).encode()
    assert ask(own, scope_of(f"/api/matches/{match}/events", "POST", headers=[
        ("Authorization", f"Bearer {tokens['organiser']}"), ("Content-Type", "application/json")]), body)[0] == 201
    player = [("Authorization", f"Bearer {tokens['player']}")]
    for headers, query in (([], b""), (player, b""), ([("Authorization", f"Bearer {tokens['organiser']}")], b"as=viewer"),
                           ([("Last-Event-ID", "0")], b""), ([], b"last_event_id=0&tv=1")):
        status, h, text = same_stream(own, flask, scope_of(path, headers=headers, query=query))
        assert status == 200 and h["content-type"] == ["text/event-stream; charset=utf-8"], (h, text)
        assert h["cache-control"] == ["no-cache, no-store"] and h["content-security-policy"]
        assert "id: 1\nevent: snapshot" in text
        assert ("id: 1\nevent: event" in text) == (b"0" in query or ("Last-Event-ID", "0") in headers)
    status, _, text = same_stream(own, flask, scope_of("/api/stream", query=b"lang=it"))
    assert status == 200 and "event: hello" in text
    for scope, want, field in ((scope_of("/api/matches/nope/stream"), 404, "match_id"),
                               (scope_of(path, headers=[("Last-Event-ID", "x")]), 400, "Last-Event-ID"),
                               (scope_of(path, query=b"last_event_id=-1"), 400, "last_event_id"),
                               (scope_of("/api/stream", host=b"rebind.example"), 403, "Host"),
                               (scope_of(path, headers=[("Authorization", "Bearer nope")]), 401, "Authorization")):
        status, h, text = same_stream(own, flask, scope)
        assert status == want and json.loads(text)["field"] == field, text
    assert organiser.put("/api/auth/settings", {"viewers_allowed": False}).status_code == 200
    status, _, text = same_stream(own, flask, scope_of("/api/stream"))
    assert status == 401 and json.loads(text)["field"] == "Authorization"
    assert same_stream(own, flask, scope_of(path, headers=player))[0] == 200
    assert app.extensions["companion"].hub.count() == 0 and own.streams == {}


def test_a_stream_on_probation_is_refused_but_for_an_organiser(app, fronts, tokens, match):
    own, flask = fronts

    for f in fronts:
        f.connections = _Probation()
    status, _, text = same_stream(own, flask, scope_of(f"/api/matches/{match}/stream"))
    assert status == 429 and json.loads(text)["field"] == "address"
    status, headers, text = ask_stream(own, scope_of(f"/api/matches/{match}/stream",
                                                     headers=[("Authorization", f"Bearer {tokens['organiser']}")]))
    assert status == 200 and "connection" not in headers and "event: snapshot" in text


def test_the_app_is_built_once_by_the_first_request_that_needs_it(store):
    from companion.runtime import Runtime
    from companion.web.app import create_app
    from companion.web.context import open_context

    c = open_context({}, Runtime.open(store=store, runner=None))
    built = []

    def make():
        built.append(1)
        return create_app({"TESTING": True}, context=c)

    lazy = Front(None, Limits(), threads=2, context=c, make_app=make)
    try:
        assert built == []
        assert ask(lazy, scope_of("/healthz"))[0] == 200 and built == [1]
        assert ask(lazy, scope_of("/api/games"))[0] == 200 and built == [1]
    finally:
        lazy.pool.shutdown(wait=True)


def test_once_the_server_listens_the_app_is_built_at_once_in_a_worker_thread(store):
    from companion.runtime import Runtime
    from companion.web.app import create_app
    from companion.web.context import open_context

    c = open_context({}, Runtime.open(store=store, runner=None))
    built = threading.Event()
    where = []

    def make():
        app = create_app({"TESTING": True}, context=c)
        where.append(threading.current_thread().name)
        built.set()
        return app

    front = Front(None, Limits(), threads=2, context=c, make_app=make)

    async def listening():  # what the server's start-up does once it listens
        front.listening()
        await asyncio.get_running_loop().run_in_executor(None, built.wait, 60)

    try:
        t = threading.Thread(target=asyncio.run, args=(listening(),))
        t.start()
        t.join(90)
        assert built.is_set() and where[0].startswith("companion-wsgi")
        front.pool.shutdown(wait=True)
        assert front._app is not None
    finally:
        front.pool.shutdown(wait=True)


def test_an_app_that_cannot_be_built_is_a_500_with_an_id(store, caplog):
    from companion.runtime import Runtime
    from companion.web.context import open_context

    c = open_context({}, Runtime.open(store=store, runner=None))

    def broken():
        raise RuntimeError("a blueprint failed")

    front = Front(None, Limits(), threads=2, context=c, make_app=broken)
    try:
        with caplog.at_level(logging.ERROR, logger="companion.web.app"):
            status, _, data = ask(front, scope_of("/api/games"))
            doc = json.loads(data)
            assert status == 500 and doc["error"] == "internal error" and doc["id"]
            assert any(doc["id"] in r.getMessage() for r in caplog.records)
        assert ask(front, scope_of("/api/stream"))[0] == 500
        assert ask(front, scope_of("/healthz"))[0] == 500  # (the watchdog restarts a box in that state)
    finally:
        front.pool.shutdown(wait=True)
        front.io.shutdown(wait=True)
