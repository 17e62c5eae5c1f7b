"""The routes the ASGI front answers without Flask (companion/web/hot.py) answer exactly as Flask's do: the
same request sent to a front with its own routes and to one that leaves everything to Flask gets the same
status, the same JSON (the field named, the sentence in the caller's language) and the same headers, for
every rule of the gate (Host, bearer, session, viewers off, Origin, the write limits, the connection's
probation) and of the views (roles, the body's check, the seat's secrets, a 500 with an id in the log)."""

import asyncio
import json
import logging
import re
import threading

import pytest

from companion.web import hot
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


def same(a, b, scope, body=b""):
    """The answers of the two fronts, compared with what differs between two answers by nature (ids,
    times) masked; returns the status and the JSON."""
    answers = [ask(f, scope, body) for f in (a, b)]

    def masked(answer):
        status, headers, data = answer
        doc = json.loads(data)
        if "id" in doc and status >= 500:
            doc["id"] = "<id>"
        text = re.sub(r'"at":"[^"]*"', '"at":"<t>"', json.dumps(doc))
        cookies = [re.sub(r"Expires=[^;]*", "Expires=<t>", c) for c in headers.pop("set-cookie", [])]
        return status, headers, text, cookies

    assert masked(answers[0]) == masked(answers[1])
    return answers[0][0], json.loads(answers[0][2])


@pytest.fixture
def fronts(app):
    own, flask = Front(app, Limits(), threads=2), Front(app, Limits(), threads=2, own_routes=False)
    yield own, flask
    for f in (own, flask):
        f.pool.shutdown(wait=True)
        f.io.shutdown(wait=True)


@pytest.fixture
def match(fake_game, organiser):
    return organiser.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"]}).json["id"]


def test_the_hot_routes_are_taken_only_for_plain_requests():
    assert hot.route(scope_of("/healthz"))[0] == "api.healthz"
    assert hot.route(scope_of("/api/matches/m1"))[0] == "api.get_match"
    assert hot.route(scope_of("/api/matches/m1/events", "POST"))[0] == "api.append_event"
    for odd in (scope_of("/healthz", "HEAD"), scope_of("/api/matches/m1/events"), scope_of("/api/matches/a/b"),
                scope_of("/healthz", host=None), scope_of("/healthz", host=b"bad_host!"),
                scope_of("/healthz", host=b"localhost:0"), scope_of("/healthz", query=b"a=%20"),
                scope_of("/healthz", headers=[("Host", "other")]),
                scope_of("/api/matches/m1/events", "POST", headers=[("Transfer-Encoding", "chunked")]),
                scope_of("/api/matches/m1/events", "POST", headers=[("Content-Length", "+5")]),
                scope_of("/healthz", headers=[("Cookie", 'lang="it"')])):
        assert hot.route(odd) is None, odd


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


def test_writes_from_a_guest_address_are_limited_on_both_paths(app, fronts, match):
    """A phone on the Wi-Fi (a session cookie, not loopback) spends the same write budget through the
    front's own route as through Flask's: the 429 comes after as many writes, naming the same budget."""
    from tests.web.conftest import join

    runs = []
    for n, front in enumerate(fronts):
        phone = app.test_client()
        join(app, phone)
        headers = [("Cookie", f"companion_sid={phone.get_cookie('companion_sid').value}"), ("Origin", ORIGIN),
                   ("Content-Type", "application/json")]
        body = json.dumps({"type": "point", "data": {"player": "Nobody"}, "expected_seq": 0}).encode()
        for i in range(200):
            status, answer_headers, data = ask(front, scope_of(f"/api/matches/{match}/events", "POST",
                                                               headers=headers, client=(f"192.168.1.{50 + n}", 4000)),
                                               body)
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
        status, h, data = ask(front, scope_of(f"/api/matches/{match}/events", "POST", headers=headers), body)
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
    assert hot.route(scope_of(f"/api/matches/{match}/undo", "POST"))[0] == "api.undo"
    assert hot.route(scope_of(f"/api/matches/{match}/redo", "POST"))[0] == "api.redo"

    def post(front, what, seq, headers=organiser):
        body = json.dumps({"expected_seq": seq}).encode()
        status, h, data = ask(front, scope_of(f"/api/matches/{match}/{what}", "POST", headers=headers), body)
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
    for n in range(2):
        status, headers, text = answers[n]
        answers[n] = (status, headers, re.sub(r'"(at|now|deadline|started_at|id)":"[^"]*"', r'"\1":"<t>"', text))
    assert answers[0] == answers[1]
    return answers[0]


def test_a_stream_through_the_front_opens_and_is_refused_as_flask_s_does(app, fronts, tokens, match, organiser):
    own, flask = fronts
    path = f"/api/matches/{match}/stream"
    assert hot.route(scope_of(path), hot.STREAMS)[0] == "live.match_stream"
    assert hot.route(scope_of("/api/stream"), hot.STREAMS)[0] == "live.club_stream"
    assert hot.route(scope_of(path, headers=[("Last-Event-ID", "1"), ("Last-Event-ID", "2")]), hot.STREAMS) is None
    assert hot.route(scope_of(path)) is None  # (not an ordinary hot route)
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
    assert app.extensions["companion"].hub.count() == 0 and own.streams == flask.streams == {}


def test_a_stream_on_probation_is_refused_but_for_an_organiser(app, fronts, tokens, match):
    own, flask = fronts

    for f in fronts:
        f.connections = _Probation()
    status, _, text = same_stream(own, flask, scope_of(f"/api/matches/{match}/stream"))
    assert status == 429 and json.loads(text)["field"] == "address"
    status, headers, text = ask_stream(own, scope_of(f"/api/matches/{match}/stream",
                                                     headers=[("Authorization", f"Bearer {tokens['organiser']}")]))
    assert status == 200 and "connection" not in headers and "event: snapshot" in text


LAZY_PROBE = """
import asyncio, json, sys
sys.path.insert(0, sys.argv[2])
from companion.runtime import Runtime
from companion.web.asgi import Front
from companion.web.context import current_join, open_context
from tests.web.test_hot import ask, ask_stream, scope_of
rt = Runtime.open(data_dir=sys.argv[1], runner=None)
c = open_context({}, rt)
current_join(c, "http://localhost")
built = []
front = Front(None, context=c, make_app=lambda: built.append(1) or sys.exit("not here"))
front._warm = lambda: None
status = ask(front, scope_of("/healthz"))[0]
stream = ask_stream(front, scope_of("/api/stream"))
assert stream[0] == 200 and "event: hello" in stream[2], stream
print(json.dumps({"status": status, "built": built,
                  "loaded": sorted({m.split(".")[0] for m in sys.modules} & {"flask", "werkzeug", "jinja2", "click"})}))
"""


def test_healthz_and_the_join_link_need_no_flask(tmp_path):
    """``companion serve`` prints the join link, answers /healthz and opens a stream before Flask, Werkzeug
    and Jinja2 are imported (the front builds the app at its first need: after that first answer)."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, "-c", LAZY_PROBE, str(tmp_path), str(repo)], capture_output=True,
                       text=True, timeout=60, cwd=str(repo))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1]) == {"status": 200, "built": [], "loaded": []}


def test_the_app_is_built_once_after_the_first_answer_or_by_the_first_request_that_needs_it(store):
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
        lazy._warm = lambda: None  # (no warming: the first request that needs Flask builds it)
        assert ask(lazy, scope_of("/healthz"))[0] == 200 and built == []
        assert ask(lazy, scope_of("/api/games"))[0] == 200 and built == [1]
        assert ask(lazy, scope_of("/api/games"))[0] == 200 and built == [1]
        warmed = Front(None, Limits(), threads=2, context=c, make_app=make)
        assert ask(warmed, scope_of("/healthz"))[0] == 200
        warmed.pool.shutdown(wait=True)  # the warm-up ran in its pool
        assert built == [1, 1] and warmed._app is not None
    finally:
        lazy.pool.shutdown(wait=True)


def test_listening_with_no_request_the_app_is_built_a_moment_later_not_at_once(store):
    # (the first /healthz is answered without the build holding the interpreter's lock; companion/web/asgi.py)
    from companion.runtime import Runtime
    from companion.web.app import create_app
    from companion.web.context import open_context

    c = open_context({}, Runtime.open(store=store, runner=None))
    built = threading.Event()

    def make():
        app = create_app({"TESTING": True}, context=c)
        built.set()
        return app

    front = Front(None, Limits(), threads=2, context=c, make_app=make)
    front.WARM_AFTER_S = 0.05
    at_once = []

    async def listening():  # what the server's start-up does once it listens
        front._warm()
        at_once.append(front._warming or front._app is not None)
        await asyncio.get_running_loop().run_in_executor(None, built.wait, 60)

    try:
        t = threading.Thread(target=asyncio.run, args=(listening(),))
        t.start()
        t.join(90)
        assert at_once == [False] and built.is_set()
        front.pool.shutdown(wait=True)
        assert front._app is not None
    finally:
        front.pool.shutdown(wait=True)


def test_an_app_that_cannot_be_built_is_a_500_with_an_id_and_health_still_answers(store, caplog):
    from companion.runtime import Runtime
    from companion.web.context import open_context

    c = open_context({}, Runtime.open(store=store, runner=None))

    def broken():
        raise RuntimeError("a blueprint failed")

    front = Front(None, Limits(), threads=2, context=c, make_app=broken)
    front._warm = lambda: None
    try:
        with caplog.at_level(logging.ERROR, logger="companion.web.app"):
            status, _, data = ask(front, scope_of("/api/games"))
            doc = json.loads(data)
            assert status == 500 and doc["error"] == "internal error" and doc["id"]
            assert any(doc["id"] in r.getMessage() for r in caplog.records)
        assert ask(front, scope_of("/api/stream", query=b"x=%20"))[0] == 500  # (a stream Flask opens)
        assert ask_stream(front, scope_of("/api/stream"))[0] == 200  # (one the front opens itself)
        assert ask(front, scope_of("/healthz"))[0] == 200
    finally:
        front.pool.shutdown(wait=True)
        front.io.shutdown(wait=True)
