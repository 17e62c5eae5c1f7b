"""The ASGI front (companion/web/asgi.py), driven in-process: the streams served on the event loop keep
what the WSGI streams do (snapshot, ids, resume, secrets per seat, the request gate's answers), a stuck
stream is dropped, a stop ends every stream, bodies over the limit are refused before they are read."""

import asyncio
import json

import pytest

from companion.web.asgi import Front, Limits


class Call:
    """One request to the front: ``send`` collects what it writes; ``disconnect()`` is the client leaving."""

    def __init__(self, front, path, headers=(), method="GET", body=b"", client=("127.0.0.1", 50000),
                 query=b"", stuck=False):
        self.front = front
        self.scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
                      "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "",
                      "query_string": query, "client": client, "server": ("127.0.0.1", 80),
                      "headers": [(b"host", b"localhost"), *[(k.lower().encode(), v.encode()) for k, v in headers]]}
        self.body = body
        self.sent_body = False
        self.left = asyncio.Event()
        self.messages = []
        self.text = ""
        self.arrived = asyncio.Event()
        self.stuck = stuck
        self.task = None

    async def receive(self):
        if not self.sent_body:
            self.sent_body = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message):
        if self.stuck and message["type"] == "http.response.body":
            await asyncio.Event().wait()  # a client that reads nothing: the write never completes
        self.messages.append(message)
        if message["type"] == "http.response.body":
            self.text += message.get("body", b"").decode()
        self.arrived.set()

    def start(self):
        self.task = asyncio.get_running_loop().create_task(self.front(self.scope, self.receive, self.send))
        return self

    async def until(self, marker, timeout=10):
        async with asyncio.timeout(timeout):
            while marker not in self.text:
                self.arrived.clear()
                await self.arrived.wait()
        return self.text

    @property
    def status(self):
        return self.messages[0]["status"]

    @property
    def complete(self):
        return any(m["type"] == "http.response.body" and not m.get("more_body") for m in self.messages)

    async def leave(self):
        self.left.set()
        await asyncio.wait_for(self.task, 10)


def run(coro):
    return asyncio.run(coro)


def post(app, client, path, body):
    return client.post(path, json=body, headers={"Origin": "http://localhost"})


@pytest.fixture
def front(app):
    f = Front(app, Limits(streams_per_address=4, send_timeout=0.5), threads=4)
    yield f
    f.io.shutdown(wait=True)
    f.pool.shutdown(wait=True)


@pytest.fixture
def match(fake_game, player):
    return player.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"]}).json["id"]


def test_snapshot_events_and_resume_on_the_loop(app, front, player, match):
    hub = app.extensions["companion"].hub

    async def go():
        loop = asyncio.get_running_loop()
        s = Call(front, f"/api/matches/{match}/stream").start()
        await s.until("event: snapshot")
        assert s.status == 200 and (b"content-type", b"text/event-stream; charset=utf-8") in s.messages[0]["headers"]
        assert "id: 0\nevent: snapshot" in s.text
        r = await loop.run_in_executor(None, lambda: player.post(
            f"/api/matches/{match}/events", {"type": "point", "data": {"player": "Anna"}, "expected_seq": 0}))
        assert r.status_code == 201
        await s.until("id: 1\nevent: event")
        block = s.text.split("id: 1\nevent: event\ndata: ", 1)[1].split("\n\n", 1)[0]
        assert json.loads(block)["view"]["state"]["points"]["Anna"] == 1
        await s.until("event: heartbeat")  # heartbeats while idle: a named event the page sees
        # a client that reconnects gets what it missed, then the snapshot
        again = Call(front, f"/api/matches/{match}/stream", headers=[("Last-Event-ID", "0")]).start()
        await again.until("event: snapshot")
        assert again.text.index("id: 1\nevent: event") < again.text.index("id: 1\nevent: snapshot")
        query = Call(front, f"/api/matches/{match}/stream", query=b"last_event_id=0").start()
        await query.until("event: snapshot")
        assert "id: 1\nevent: event" in query.text
        assert hub.count() == 3
        for c in (s, again, query):
            await c.leave()
        assert hub.count() == 0 and front.streams == {}

    run(go())


def test_the_request_gate_answers_as_flask_does(app, front, match):
    async def go():
        cases = [
            (Call(front, "/api/matches/nope/stream"), 404, "match_id"),
            (Call(front, f"/api/matches/{match}/stream", headers=[("Last-Event-ID", "abc")]), 400, "Last-Event-ID"),
        ]
        foreign = Call(front, "/api/stream")
        foreign.scope["headers"] = [(b"host", b"rebind.example")]
        cases.append((foreign, 403, "Host"))
        for call, status, field in cases:
            call.start()
            await asyncio.wait_for(call.task, 10)
            assert call.status == status
            body = json.loads(call.text)
            assert body.get("field") == field and body["error"]
        assert app.extensions["companion"].hub.count() == 0

    run(go())


def test_viewers_turned_off_are_refused_a_stream(app, front, organiser):
    r = organiser.put("/api/auth/settings", {"viewers_allowed": False})
    assert r.status_code == 200, r.json

    async def go():
        call = Call(front, "/api/stream").start()
        await asyncio.wait_for(call.task, 10)
        assert call.status == 401 and json.loads(call.text)["field"] == "Authorization"

    run(go())


def test_a_seat_picked_after_the_stream_opened_shows_that_player_s_secret(app, front, player):
    """The player's seat is read again for every event (in a worker thread, not on the loop)."""
    mid = player.post("/api/matches", {"game": "conquest-italy", "players": ["Anna", "Bruno", "Carla"]}).json["id"]
    cookie = player.c.get_cookie("companion_sid").value

    async def go():
        loop = asyncio.get_running_loop()
        s = Call(front, f"/api/matches/{mid}/stream", headers=[("Cookie", f"companion_sid={cookie}")]).start()
        viewer = Call(front, f"/api/matches/{mid}/stream", client=("127.0.0.9", 1)).start()
        await s.until("event: snapshot")
        await viewer.until("event: snapshot")
        assert (await loop.run_in_executor(None, lambda: player.put(
            f"/api/matches/{mid}/seat", {"player": "Anna"}))).status_code == 200
        r = await loop.run_in_executor(None, lambda: player.post(
            f"/api/matches/{mid}/events", {"type": "objective.set", "data": {"player": "Anna", "cities": ["Roma"]},
                                           "expected_seq": 0}))
        assert r.status_code == 201, r.json
        await s.until("id: 1\nevent: event")
        await viewer.until("id: 1\nevent: event")
        mine = json.loads(s.text.split("id: 1\nevent: event\ndata: ", 1)[1].split("\n\n", 1)[0])
        theirs = json.loads(viewer.text.split("id: 1\nevent: event\ndata: ", 1)[1].split("\n\n", 1)[0])
        assert mine["event"]["data"].get("cities") == ["Roma"]
        assert "cities" not in theirs["event"]["data"] and theirs["event"].get("hidden")
        assert "Roma" not in json.dumps(theirs)
        await s.leave()
        await viewer.leave()

    run(go())


def test_streams_per_address_are_capped(app, front):
    async def go():
        calls = [Call(front, "/api/stream", client=("127.0.0.5", n)).start() for n in range(4)]
        for c in calls:
            await c.until("event: hello")
        over = Call(front, "/api/stream", client=("127.0.0.5", 99)).start()
        await asyncio.wait_for(over.task, 10)
        assert over.status == 429 and json.loads(over.text)["field"] == "address"
        other = Call(front, "/api/stream", client=("127.0.0.6", 1)).start()
        await other.until("event: hello")
        for c in [*calls, other]:
            await c.leave()
        assert front.streams == {}

    run(go())


def test_a_client_that_reads_nothing_is_dropped_and_unsubscribed(app, front):
    hub = app.extensions["companion"].hub

    async def go():
        stuck = Call(front, "/api/stream", stuck=True).start()
        await asyncio.wait_for(stuck.task, 10)  # the write waits send_timeout (0.5 s), then the stream ends
        assert hub.count() == 0 and front.streams == {}

    run(go())


def test_a_subscriber_too_far_behind_ends_its_stream(app, front):
    from companion.web.live import AsyncSubscriber

    async def go():
        sub = AsyncSubscriber("x", asyncio.get_running_loop(), maxsize=2)
        for i in range(5):
            sub.deliver(("event", i, {}))
        got = [item async for item in sub.items_until_closed(5)]
        assert sub.overflow and got == []

    run(go())


def test_stopping_ends_every_stream_with_its_last_chunk(app, front, match):
    async def go():
        calls = [Call(front, "/api/stream", client=("127.0.0.7", n)).start() for n in range(3)]
        calls.append(Call(front, f"/api/matches/{match}/stream").start())
        for c in calls:
            await c.until("retry:")
        await asyncio.sleep(0)
        front.close_streams()
        for c in calls:
            await asyncio.wait_for(c.task, 10)
            assert c.complete
        late = Call(front, "/api/stream").start()
        await asyncio.wait_for(late.task, 10)
        assert late.status == 503

    run(go())


def test_bodies_over_the_limit_are_refused_before_flask(app, front, tokens):
    front.limits.max_body = 100

    async def go():
        head = [("Authorization", f"Bearer {tokens['player']}"), ("Content-Type", "application/json")]
        big = Call(front, "/api/matches", method="POST", headers=[*head, ("Content-Length", "101")],
                   body=b"x" * 101).start()
        await asyncio.wait_for(big.task, 10)
        assert big.status == 413 and json.loads(big.text)["field"] == "Content-Length"
        chunked = Call(front, "/api/matches", method="POST", headers=[*head, ("Transfer-Encoding", "chunked")],
                       body=b"x" * 101).start()
        await asyncio.wait_for(chunked.task, 10)
        assert chunked.status == 413 and json.loads(chunked.text)["field"] == "body"
        body = json.dumps({"game": "richelieu", "players": ["A", "B"]}).encode()
        ok = Call(front, "/api/matches", method="POST", headers=[*head, ("Content-Length", str(len(body)))],
                  body=body).start()
        await asyncio.wait_for(ok.task, 10)
        assert ok.status == 201, ok.text

    run(go())


def test_a_compressed_body_is_refused_before_it_is_read(app, front, tokens):
    """A zip bomb (10 MiB of zeros in 10 KB of gzip) is never inflated: any Content-Encoding of a request's
    body is a 415 naming it, answered before a byte of the body is taken in."""
    import gzip

    bomb = gzip.compress(b"\0" * (10 << 20))
    assert len(bomb) < 20_000

    async def go():
        head = [("Authorization", f"Bearer {tokens['player']}"), ("Content-Type", "application/json"),
                ("Content-Length", str(len(bomb)))]
        for encoding in ("gzip", "deflate", "br", "GZIP, identity"):
            call = Chunks(front, "/api/matches", method="POST", headers=[*head, ("Content-Encoding", encoding)],
                          pieces=1, size=len(bomb)).start()
            await asyncio.wait_for(call.task, 10)
            body = json.loads(call.text)
            assert call.status == 415 and body["field"] == "Content-Encoding", (encoding, body)
            assert call.read == 0 and front.bodies.in_all == 0
        plain = json.dumps({"game": "richelieu", "players": ["A", "B"]}).encode()
        ok = Call(front, "/api/matches", method="POST", headers=[*head[:2], ("Content-Length", str(len(plain))),
                                                                 ("Content-Encoding", "identity")], body=plain).start()
        await asyncio.wait_for(ok.task, 10)
        assert ok.status == 201, ok.text

    run(go())


def test_the_open_files_soft_limit_is_raised_to_the_hard_one():
    import subprocess
    import sys

    code = ("import resource; soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE); "
            "resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard)); "
            "from companion.web.server import raise_open_files_limit; raise_open_files_limit(); "
            "want = hard if hard != resource.RLIM_INFINITY else 65536; "
            "print(resource.getrlimit(resource.RLIMIT_NOFILE) == (want, hard))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "True"


def test_an_organiser_s_stream_shows_no_secret_once_signed_out(app, front, player):
    """On the event loop too, the stream asks again for every event who its caller is (a worker thread)."""
    org = app.test_client()
    assert org.post("/api/auth/pin", json={"pin": "246813", "setup_code": "13572468"},
                    headers={"Origin": "http://localhost"}).status_code == 200
    mid = player.post("/api/matches", {"game": "conquest-italy", "players": ["Anna", "Bruno", "Carla"]}).json["id"]
    assert player.put(f"/api/matches/{mid}/seat", {"player": "Anna"}).status_code == 200
    cookie = org.get_cookie("companion_sid").value

    def write(seq, cities):
        r = player.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": seq,
                                                      "data": {"player": "Anna", "cities": cities}})
        assert r.status_code == 201, r.json

    async def go():
        loop = asyncio.get_running_loop()
        s = Call(front, f"/api/matches/{mid}/stream", headers=[("Cookie", f"companion_sid={cookie}")]).start()
        await s.until("event: snapshot")
        await loop.run_in_executor(None, write, 0, ["Roma"])
        await s.until("id: 1\nevent: event")
        first = json.loads(s.text.split("id: 1\nevent: event\ndata: ", 1)[1].split("\n\n", 1)[0])
        assert first["view"]["state"]["objectives"] == {"Anna": ["Roma"]}
        assert (await loop.run_in_executor(None, lambda: org.post(
            "/api/auth/logout", headers={"Origin": "http://localhost"}))).status_code == 200
        r = await loop.run_in_executor(None, lambda: player.post(f"/api/matches/{mid}/conquest/deal",
                                                                 {"expected_seq": 1, "data": {}}))
        assert r.status_code == 201, r.json
        await s.until("id: 2\nevent: event")
        second = json.loads(s.text.split("id: 2\nevent: event\ndata: ", 1)[1].split("\n\n", 1)[0])
        assert second["view"]["state"]["objectives"] == {}
        await s.leave()

    run(go())
def test_a_new_event_wakes_the_streams_a_slice_at_a_time():
    """A request's callback queued just after an event for many streams runs before every stream has
    been woken: the loop answers requests between slices of the fan-out."""
    from companion.web.live import AsyncSubscriber, _Waker, _deliver_all

    n = 3 * _Waker.SLICE

    async def go():
        loop = asyncio.get_running_loop()
        subs = [AsyncSubscriber("m", loop) for _ in range(n)]
        taken = []

        async def reader(sub):
            async for batch in sub.batches_until_closed(600):
                taken.extend(batch)

        tasks = [loop.create_task(reader(s)) for s in subs]
        await asyncio.sleep(0)  # every reader waits
        seen = []
        _deliver_all(subs, ("event", 1, {}))
        loop.call_soon(lambda: seen.append(len(taken)))  # e.g. a POST's answer, ready now
        while len(taken) < n:
            await asyncio.sleep(0)
        assert seen and seen[0] <= _Waker.SLICE  # it ran after one slice, not after all n streams
        _deliver_all(subs, ("close", None))
        await asyncio.gather(*tasks)

    run(go())


def test_items_waiting_for_a_stream_are_taken_in_one_batch_and_the_heartbeat_still_comes():
    from companion.web.live import AsyncSubscriber

    async def go():
        sub = AsyncSubscriber("x", asyncio.get_running_loop())
        for i in range(3):
            sub.deliver(("event", i, {}))
        got = []
        async for batch in sub.batches_until_closed(0.05):
            got.append(batch)
            if batch is None:
                sub.deliver(("close", None))
        assert [[item[1] for item in got[0]], got[1]] == [[0, 1, 2], None]

    run(go())


def test_an_event_is_encoded_once_for_all_the_streams_of_one_kind_of_caller(app, front, player, match):
    """1,000 viewers of a match share one rendering, as bytes, of each event."""
    hub = app.extensions["companion"].hub
    items = []
    send = hub._send

    def spy(subs, item):
        items.append(item)
        send(subs, item)

    hub._send = spy

    async def go():
        loop = asyncio.get_running_loop()
        calls = [Call(front, f"/api/matches/{match}/stream", client=(f"127.0.0.{n + 2}", 1)).start()
                 for n in range(3)]
        for c in calls:
            await c.until("event: snapshot")
        r = await loop.run_in_executor(None, lambda: player.post(
            f"/api/matches/{match}/events", {"type": "point", "data": {"player": "Anna"}, "expected_seq": 0}))
        assert r.status_code == 201
        for c in calls:
            await c.until("id: 1\nevent: event")
        for c in calls:
            await c.leave()
        return calls

    calls = run(go())
    event = [item for item in items if item[0] == "event"]
    assert len(event) == 1
    cache = event[0][2]
    texts = [k for k, v in cache.items() if isinstance(v, bytes)]
    assert texts == [("viewer", None)]  # (beside it, the view as a viewer sees it: the next event's patch)
    for c in calls:
        assert cache[("viewer", None)].decode() in c.text


def test_an_event_reaches_every_stream_through_send_and_only_the_seated_phone_s_has_its_secret(app, front,
                                                                                            player):
    """Viewers' streams get the event without the seat's secret; the seated phone's stream gets its own, with
    it; every byte goes through ASGI ``send`` (no write behind the server); the heartbeat still comes."""
    mid = player.post("/api/matches", {"game": "conquest-italy", "players": ["Anna", "Bruno", "Carla"]}).json["id"]
    assert player.put(f"/api/matches/{mid}/seat", {"player": "Anna"}).status_code == 200
    cookie = player.c.get_cookie("companion_sid").value

    async def go():
        loop = asyncio.get_running_loop()
        calls = []
        for n in range(4):
            headers = [("Cookie", f"companion_sid={cookie}")] if n == 3 else []
            calls.append(Call(front, f"/api/matches/{mid}/stream", client=(f"127.0.0.{n + 2}", 1),
                              headers=headers).start())
        for c in calls:
            await c.until("event: snapshot")
        r = await loop.run_in_executor(None, lambda: player.post(
            f"/api/matches/{mid}/events", {"type": "objective.set", "data": {"player": "Anna", "cities": ["Roma"]},
                                           "expected_seq": 0}))
        assert r.status_code == 201, r.json
        for c in calls:
            await c.until("id: 1\nevent: event")
        assert "Roma" in calls[3].text.split("id: 1\nevent: event", 1)[1]
        assert all("Roma" not in c.text.split("id: 1\nevent: event", 1)[1] for c in calls[:3])
        await calls[0].until("event: heartbeat")  # the heartbeat still comes when nothing else does
        for c in calls:
            await c.leave()

    run(go())
    assert app.extensions["companion"].hub.count() == 0


def test_a_seated_phone_s_stream_asks_who_it_is_on_the_loop_and_an_end_by_another_process_is_seen(app, front, player):
    """A seated phone's stream asks who its caller is for every event from the rows the store keeps, on the
    loop (no worker thread, no statement); a session
    ended by another process (another connection's commit) is seen at the next event, whose write looked
    at other connections' commits first: that event is a viewer's, whole, without the seat's secret."""
    import sqlite3

    from companion.services.access import hash_secret

    c = app.extensions["companion"]
    mid = player.post("/api/matches", {"game": "conquest-italy", "players": ["Anna", "Bruno", "Carla"]}).json["id"]
    assert player.put(f"/api/matches/{mid}/seat", {"player": "Anna"}).status_code == 200
    cookie = player.c.get_cookie("companion_sid").value
    client = ("127.0.0.5", 1)
    reads = []
    by_key = c.access.session_by_key
    c.access.session_by_key = lambda key: reads.append(key) or by_key(key)

    def write(seq, cities):
        r = player.post(f"/api/matches/{mid}/events", {"type": "objective.set", "expected_seq": seq,
                                                      "data": {"player": "Anna", "cities": cities}})
        assert r.status_code == 201, r.json

    def events():
        text = call.text
        return [json.loads(block.split("data: ", 1)[1]) for block in text.split("\n\n") if "event: event" in block]

    call = None

    async def go():
        nonlocal call
        loop = asyncio.get_running_loop()
        call = Call(front, f"/api/matches/{mid}/stream", client=client,
                    headers=[("Cookie", f"companion_sid={cookie}")]).start()
        await call.until("event: snapshot")
        await loop.run_in_executor(None, write, 0, ["Roma"])
        async with asyncio.timeout(10):
            while len(events()) < 1:
                await asyncio.sleep(0.01)
        r = await loop.run_in_executor(None, lambda: player.post(f"/api/matches/{mid}/conquest/deal",
                                                                 {"expected_seq": 1, "data": {}}))
        assert r.status_code == 201, r.json
        async with asyncio.timeout(10):
            while len(events()) < 2:
                await asyncio.sleep(0.01)
        first, second = events()
        assert first["view"]["state"]["objectives"] == {"Anna": ["Roma"]}
        assert second["patch"] and "view" not in second  # (the page holds the view before: a patch)
        assert reads == []  # no worker thread's read
        other = sqlite3.connect(c.store.path)  # another process ends the phone's session
        with other:
            other.execute("DELETE FROM web_sessions WHERE sid_hash=?", (hash_secret(cookie),))
        other.close()
        r = await loop.run_in_executor(None, lambda: app.test_client().post(  # (the deal undone)
            f"/api/matches/{mid}/undo", json={"expected_seq": 2},
            headers={"Origin": "http://localhost", "Authorization": f"Bearer {organiser_token}"}))
        assert r.status_code == 201, r.json
        async with asyncio.timeout(10):
            while len(events()) < 3:
                await asyncio.sleep(0.01)
        third = events()[2]
        assert "patch" not in third and third["view"]["state"]["objectives"] == {}  # a viewer's, whole
        assert "Roma" not in json.dumps(third) and reads  # (read again: the rows kept were forgotten)
        await call.leave()

    from companion.services.access import Access

    organiser_token = Access(c.store).create_api_token("organiser")[0]
    run(go())
    assert c.hub.count() == 0


class Chunks(Call):
    """A request whose body arrives in pieces (``pieces`` of ``size`` bytes); counts what was read."""

    def __init__(self, *args, pieces=1, size=0, **kw):
        super().__init__(*args, **kw)
        self.pieces, self.size, self.read = pieces, size, 0

    async def receive(self):
        if self.read < self.pieces:
            self.read += 1
            return {"type": "http.request", "body": b" " * self.size, "more_body": self.read < self.pieces}
        await self.left.wait()
        return {"type": "http.disconnect"}


def test_a_body_over_its_endpoint_s_limit_is_refused_before_it_is_read(app, front):
    """The sign-in takes 64 KiB: a 3 MiB body is refused by its Content-Length, nothing of it read; a chunked
    one stops being read at 64 KiB, not at the largest limit of any endpoint."""
    async def go():
        head = [("Content-Type", "application/json"), ("Origin", "http://localhost")]
        big = Chunks(front, "/api/auth/login", method="POST", headers=[*head, ("Content-Length", str(3 << 20))],
                     pieces=48, size=65536).start()
        await asyncio.wait_for(big.task, 10)
        body = json.loads(big.text)
        assert big.status == 413 and body["field"] == "Content-Length" and "64 KiB" in body["error"]
        assert big.read == 0 and (b"connection", b"close") in big.messages[0]["headers"]
        chunked = Chunks(front, "/api/auth/login", method="POST", headers=[*head, ("Transfer-Encoding", "chunked")],
                         pieces=48, size=16384).start()
        await asyncio.wait_for(chunked.task, 10)
        assert chunked.status == 413 and json.loads(chunked.text)["field"] == "body"
        assert chunked.read == 5  # 5 × 16 KiB > 64 KiB: the rest is never read
        assert front.bodies.in_all == 0

    run(go())


def test_bodies_in_flight_are_bounded_per_address(app, front):
    front.limits.bodies_per_address = 100_000

    async def go():
        head = [("Content-Type", "application/json"), ("Content-Length", "60000")]
        first = Chunks(front, "/api/matches/import", method="POST", headers=head, pieces=10, size=6000,
                       client=("127.0.0.5", 1))
        first.receive_gate = asyncio.Event()
        slow = first.receive

        async def waits():  # the first body arrives only once the second was answered
            if first.read == 5:
                await first.receive_gate.wait()
            return await slow()

        first.receive = waits
        first.start()
        while first.read < 5:
            await asyncio.sleep(0.01)
        second = Chunks(front, "/api/matches/import", method="POST", headers=head, pieces=10, size=6000,
                        client=("127.0.0.5", 2)).start()
        await asyncio.wait_for(second.task, 10)
        assert second.status == 429 and json.loads(second.text)["field"] == "address" and second.read == 0
        other = Chunks(front, "/api/matches/import", method="POST", headers=head, pieces=10, size=6000,
                       client=("127.0.0.6", 1)).start()  # another address has its own share
        await asyncio.wait_for(other.task, 10)
        assert other.status != 429 and other.read == 10
        first.receive_gate.set()
        await asyncio.wait_for(first.task, 10)
        assert front.bodies.in_all == 0

    run(go())


def test_a_request_head_over_16_kib_is_refused_even_in_one_piece(app, front):
    async def go():
        long = Call(front, "/healthz", query=b"x=" + b"a" * 64 * 1024).start()
        await asyncio.wait_for(long.task, 10)
        assert long.status == 431 and json.loads(long.text)["field"] == "headers"
        stream = Call(front, "/api/stream", headers=[("X-Pad", "a" * 20000)]).start()
        await asyncio.wait_for(stream.task, 10)
        assert stream.status == 431
        ok = Call(front, "/healthz", query=b"x=" + b"a" * 8000).start()
        await asyncio.wait_for(ok.task, 10)
        assert ok.status == 200

    run(go())
