"""Server-Sent Events: snapshot on connect, every new event with id = seq, resume from Last-Event-ID,
clock ticks and alerts, the club-wide feed. (The real server's prompt delivery: test_server.py.)"""

import json

import pytest

from companion.base.notices import Notice


def parse(chunks):
    """SSE text -> list of (event, id, data) and the count of heartbeats (named ``heartbeat`` events). A match
    stream's event that carries a patch (``base``, ``patch``) gets its ``view`` too, as a page makes it: the
    patch applied to the view the stream gave before (``companion.base.jsondiff``)."""
    from companion.base import jsondiff

    out, pings, held = [], 0, None
    for block in "".join(chunks).split("\n\n"):
        if not block.strip():
            continue
        if block.startswith(":"):
            pings += 1
            continue
        fields = {}
        for line in block.split("\n"):
            k, _, v = line.partition(": ")
            fields[k] = v
        if fields.get("event") == "heartbeat":
            pings += 1
        elif "event" in fields:
            data = json.loads(fields["data"])
            if fields["event"] in ("snapshot", "event") and isinstance(data, dict):
                if "patch" in data:
                    assert held is not None and held["seq"] == data["base"], "a patch of a view the stream never gave"
                    data["view"] = jsondiff.apply(held, data["patch"])
                if "view" in data:
                    held = data["view"]
            out.append((fields["event"], fields.get("id"), data))
    return out, pings


class Stream:
    def __init__(self, client, url, headers=None):
        self.r = client.get(url, headers=headers or {}, buffered=False)
        self.it = iter(self.r.response)
        self.chunks = []

    def until(self, pred, limit=200):
        for _ in range(limit):
            chunk = next(self.it)
            self.chunks.append(chunk.decode() if isinstance(chunk, bytes) else chunk)
            events, pings = parse(self.chunks)
            if pred(events, pings):
                return events
        raise AssertionError(f"not seen: {self.chunks[-5:]}")

    def close(self):
        self.r.close()


def kinds(events):
    return [(e[0], e[1]) for e in events]


@pytest.fixture
def match(fake_game, player):
    r = player.post("/api/matches", {"game": fake_game, "players": ["Anna", "Bruno"]})
    return r.json["id"]


def point(player, mid, seq, who="Anna"):
    r = player.post(f"/api/matches/{mid}/events", {"type": "point", "data": {"player": who}, "expected_seq": seq})
    assert r.status_code == 201, r.json


def test_snapshot_then_live_events(app, player, match):
    s = Stream(app.test_client(), f"/api/matches/{match}/stream")
    assert s.r.status_code == 200 and s.r.mimetype == "text/event-stream"
    events = s.until(lambda ev, p: len(ev) >= 1)
    assert kinds(events) == [("snapshot", "0")]
    point(player, match, 0)
    events = s.until(lambda ev, p: len(ev) >= 2)
    assert kinds(events)[1] == ("event", "1")
    assert events[1][2]["event"]["type"] == "point"
    assert events[1][2]["view"]["state"]["points"]["Anna"] == 1
    player.post(f"/api/matches/{match}/undo", {"expected_seq": 1})
    events = s.until(lambda ev, p: len(ev) >= 3)
    assert kinds(events)[2] == ("event", "2") and events[2][2]["view"]["state"]["points"]["Anna"] == 0
    s.until(lambda ev, p: p >= 1)  # heartbeats while idle
    s.close()
    # a named event with its period, not an SSE comment (which fires no event in the browser)
    beat = [b for b in "".join(s.chunks).split("\n\n") if "heartbeat" in b][0]
    assert beat.startswith("event: heartbeat\n") and json.loads(beat.split("data: ", 1)[1]) == {"every": 0.05}
    assert not any(b.startswith(":") for b in "".join(s.chunks).split("\n\n"))
    assert app.extensions["companion"].hub.count() == 0  # closing the stream unsubscribes


@pytest.mark.parametrize("how", ["header", "query"])
def test_resume_from_last_event_id(app, player, match, how):
    for seq in range(4):
        point(player, match, seq)
    url = f"/api/matches/{match}/stream"
    if how == "header":
        s = Stream(app.test_client(), url, {"Last-Event-ID": "2"})
    else:
        s = Stream(app.test_client(), url + "?last_event_id=2")
    events = s.until(lambda ev, p: any(e[0] == "snapshot" for e in ev))
    assert kinds(events) == [("event", "3"), ("event", "4"), ("snapshot", "4")]
    assert [e[2]["event"]["seq"] for e in events[:2]] == [3, 4]
    point(player, match, 4)
    events = s.until(lambda ev, p: len(ev) >= 4)
    assert kinds(events)[3] == ("event", "5")
    s.close()


def test_resume_when_up_to_date_sends_only_the_snapshot(app, player, match):
    point(player, match, 0)
    s = Stream(app.test_client(), f"/api/matches/{match}/stream", {"Last-Event-ID": "1"})
    assert kinds(s.until(lambda ev, p: len(ev) >= 1)) == [("snapshot", "1")]
    s.close()


@pytest.mark.parametrize("value", ["abc", "-1", "1.5"])
def test_bad_last_event_id(client, match, value):
    r = client.get(f"/api/matches/{match}/stream", headers={"Last-Event-ID": value})
    assert r.status_code == 400 and r.json["field"] == "Last-Event-ID"


def test_clock_ticks_and_alerts_reach_the_match_and_the_club(app, match):
    hub = app.extensions["companion"].hub
    s = Stream(app.test_client(), f"/api/matches/{match}/stream")
    club = Stream(app.test_client(), "/api/stream")
    s.until(lambda ev, p: len(ev) >= 1)
    club.until(lambda ev, p: len(ev) >= 1)
    c = app.extensions["companion"]
    hub.on_notice(c, Notice("tick", match, {"clock": {"remaining_seconds": 61.0, "running": True}}))
    hub.on_notice(c, Notice("alert", match, {"alert": "5-minutes"}))
    events = s.until(lambda ev, p: len(ev) >= 3)
    assert [e[0] for e in events[1:]] == ["tick", "alert"]
    assert events[1][1] is None  # ticks carry no id: Last-Event-ID stays the last event's seq
    assert events[1][2] == {"match_id": match, "clock": {"remaining_seconds": 61.0, "running": True}}
    events = club.until(lambda ev, p: len(ev) >= 3)
    assert [e[0] for e in events] == ["hello", "tick", "alert"]
    s.close()
    club.close()


def test_club_feed_announces_new_and_changed_matches(app, fake_game, player):
    club = Stream(app.test_client(), "/api/stream")
    club.until(lambda ev, p: len(ev) >= 1)
    mid = player.post("/api/matches", {"game": fake_game, "players": ["A", "B"], "label": "T9"}).json["id"]
    events = club.until(lambda ev, p: len(ev) >= 2)
    assert events[1][0] == "match" and events[1][2]["id"] == mid and events[1][2]["label"] == "T9"
    player.post(f"/api/matches/{mid}/events", {"type": "finish", "expected_seq": 0})
    events = club.until(lambda ev, p: len(ev) >= 3)
    assert events[2][2]["id"] == mid and events[2][2]["seq"] == 1
    club.close()


def test_a_stuck_client_is_dropped_not_the_server(app, player, match):
    from companion.web.live import Subscriber

    sub = Subscriber("x", maxsize=2)
    for i in range(5):
        sub.put(("event", i))
    assert sub.overflow and sub.q.qsize() == 2


def test_a_seat_picked_after_the_stream_opened_shows_that_player_s_secret(app, player):
    """The stream reads the phone's seat for every event, not once when it connected."""
    r = player.post("/api/matches", {"game": "conquest-italy", "players": ["Anna", "Bruno", "Carla"]})
    mid = r.json["id"]
    s = Stream(player.c, f"/api/matches/{mid}/stream")
    try:
        s.until(lambda ev, p: any(e[0] == "snapshot" for e in ev))
        assert player.put(f"/api/matches/{mid}/seat", {"player": "Anna"}).status_code == 200
        r = player.post(f"/api/matches/{mid}/events", {"type": "objective.set",
                                                      "data": {"player": "Anna", "cities": ["Roma"]},
                                                      "expected_seq": 0})
        assert r.status_code == 201, r.json
        events = s.until(lambda ev, p: any(e[0] == "event" for e in ev))
        event = [e for e in events if e[0] == "event"][0][2]
        assert event["event"]["data"].get("cities") == ["Roma"]
        assert event["view"]["state"]["objectives"].get("Anna") == ["Roma"]
    finally:
        s.close()
