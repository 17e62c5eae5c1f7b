"""The hub makes a write's view and match card only for the streams open now: with nobody listening a
write costs no second view; a match stream gets its event, the club stream its card, each only when open."""

from companion.base.notices import Notice
from companion.web.live import ALL, Hub


class Fold:
    def __init__(self):
        self.views = 0

    def view(self, now=None):
        self.views += 1
        return {"seq": 3, "game": "g", "players": ["A", "B"], "state": {}}

    def ended(self):
        return False


class Clock:
    def now_iso(self):
        return "2026-12-01T10:00:00Z"


class Store:
    clock = Clock()

    def __init__(self):
        self.reads = 0

    def get_match(self, match_id):
        self.reads += 1
        raise AssertionError("no card is made without a club stream")


class C:
    def __init__(self):
        self.store = Store()


def test_nobody_listening_costs_no_view_and_no_card():
    hub, c, fold = Hub(), C(), Fold()
    hub.on_notice(c, Notice("event", "m1", {"seq": 3}, fold))
    assert fold.views == 0 and c.store.reads == 0


def test_a_match_stream_gets_the_event_and_no_card_is_made_without_a_club_stream():
    hub, c, fold = Hub(), C(), Fold()
    sub = hub.subscribe("m1")
    other = hub.subscribe("m2")
    hub.on_notice(c, Notice("event", "m1", {"seq": 3}, fold))
    kind, payload, _ = sub.q.get_nowait()
    assert kind == "event" and payload["event"] == {"seq": 3} and payload["view"]["seq"] == 3
    assert fold.views == 1 and c.store.reads == 0 and other.q.empty()
    hub.unsubscribe(sub)
    assert not hub.listened("m1") and hub.listened("m2")


def test_the_club_stream_still_gets_the_card(monkeypatch):
    import companion.web.hub as live  # (where the hub looks them up)

    monkeypatch.setattr(live, "match_card", lambda c, match, with_view=True: {"id": match["id"]})
    monkeypatch.setattr(live, "brief", lambda view: "brief")
    monkeypatch.setattr(live, "present_view", lambda view, who, seat: view)
    hub, c, fold = Hub(), C(), Fold()
    c.store.get_match = lambda match_id: {"id": match_id}
    club = hub.subscribe(ALL)
    hub.on_notice(c, Notice("event", "m1", {"seq": 3}, fold))
    kind, card, _ = club.q.get_nowait()
    assert kind == "match" and card == {"id": "m1", "seq": 3, "brief": "brief"} and fold.views == 1
