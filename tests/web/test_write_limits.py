"""A seated phone cannot fill the box's card: every game's events refuse fields their schema does not name,
an event's data and a player's match options are bounded, and the writes of one phone (and of one address)
are rate-limited, a burst then a steady pace (docs/limits.md). The clock is the store's fake one: no test
waits for real time."""

import pytest

from tests.web.conftest import Api, join

BIG = "x" * 60_000


def phone(app, address="10.0.0.5"):
    """A phone on the club's Wi-Fi (not the box's own screen), joined by the club's link."""
    c = app.test_client()
    c.environ_base["REMOTE_ADDR"] = address
    join(app, c)
    return Api(c)


def new(a, game, players=("Anna", "Bruno", "Carla"), **options):
    r = a.post("/api/matches", {"game": game, "players": list(players), "options": options})
    assert r.status_code == 201, r.json
    return r.json["id"]


def stored(app, mid):
    return app.extensions["companion"].store.events(mid)


CASES = [  # (game, options, event type, valid data): each with a 60 KB field the schema does not name
    ("web-of-power", {}, "place", {"player": "Anna", "piece": "councillor", "country": "England", "count": 1}),
    ("web-of-power", {}, "deck.out", {}),
    ("web-of-power", {}, "game.end", {}),
    ("web-of-power", {"clock": True}, "clock.start", {}),
    ("richelieu", {}, "track.adjust", {"player": "Anna", "track": "money", "delta": 1}),
    ("rome-is-burning", {}, "steal", {"player": "Anna", "from": "Bruno", "card": "x"}),
    ("conquest-italy", {}, "setup.place", {"player": "Anna", "placements": {"Roma": 1}}),
    ("conquest-italy", {}, "clock.pause", {"reason": "phone call"}),
]


@pytest.mark.parametrize("game,options,type_,data", CASES, ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_an_unknown_field_is_refused_and_nothing_is_stored(app, player, game, options, type_, data):
    """Web of Power kept unknown fields (a place, deck.out or game.end with a 60 KB field was stored)."""
    mid = new(player, game, **options)
    r = player.post(f"/api/matches/{mid}/events", {"type": type_, "expected_seq": 0, "data": {**data, "note": BIG}})
    assert r.status_code == 400 and r.json["field"] == "$.data.note", r.json
    assert "note" in r.json["error"] and stored(app, mid) == []


def test_an_event_s_data_is_bounded(app, player):
    from companion.core.match import EVENT_DATA_MAX

    mid = new(player, "web-of-power")
    lengths = list(range(1, 4000))  # a known field, far larger than any real event
    r = player.post(f"/api/matches/{mid}/events", {"type": "chains", "expected_seq": 0,
                                                  "data": {"player": "Anna", "lengths": lengths}})
    assert r.status_code == 400 and r.json["field"] == "$.data", r.json
    assert f"{EVENT_DATA_MAX // 1024} KiB" in r.json["error"] and stored(app, mid) == []


def test_a_player_s_match_options_are_bounded(app, player, organiser):
    """Options from a club-wide phone took 60 KB too."""
    r = player.post("/api/matches", {"game": "richelieu", "players": ["Anna", "Bruno"], "options": {"note": BIG}})
    assert r.status_code == 400 and r.json["field"] == "$.options", r.json
    assert app.extensions["companion"].store.list_matches("open", 10) == []
    r = player.post("/api/matches", {"game": "richelieu", "players": ["Anna", "Bruno"], "options": {"clock": True}})
    assert r.status_code == 201  # what the new-match page sends
    r = organiser.post("/api/matches", {"game": "richelieu", "players": ["Anna", "Bruno"],
                                        "options": {"note": "x" * 8000}})
    assert r.status_code == 201, r.json  # an organiser's (a whole board or map) only by the body's limit


def test_a_phone_writing_as_fast_as_it_can_gets_a_burst_then_a_steady_pace(app, clock):
    from companion.services.access import PHONE_WRITES

    a = phone(app)
    mid = new(a, "richelieu", ("Anna", "Bruno"))
    burst, rate = PHONE_WRITES
    answers = []
    seq = len(stored(app, mid))
    for i in range(burst + 20):  # an event and its undo, over and over, all at one instant
        if i % 2 == 0:
            r = a.post(f"/api/matches/{mid}/events", {"type": "track.adjust", "expected_seq": seq,
                                                     "data": {"player": "Anna", "track": "money", "delta": 1}})
        else:
            r = a.post(f"/api/matches/{mid}/undo", {"expected_seq": seq})
        answers.append(r.status_code)
        if r.status_code == 201:
            seq += 1
    assert answers.count(201) == burst - 1  # (the match's creation was the first write)
    refused = [r for r in answers if r != 201]
    assert set(refused) == {429}
    r = a.post(f"/api/matches/{mid}/undo", {"expected_seq": seq})
    assert r.status_code == 429 and r.json["field"] == "session" and int(r.headers["Retry-After"]) >= 1
    assert len(stored(app, mid)) == seq
    clock.advance(10)
    took = 0
    for _ in range(20):
        r = a.post(f"/api/matches/{mid}/events", {"type": "track.adjust", "expected_seq": seq,
                                                 "data": {"player": "Anna", "track": "money", "delta": 1}})
        if r.status_code == 201:
            seq += 1
            took += 1
    assert took == int(10 * rate)
    # another phone is not slowed down by this one
    b = phone(app, "10.0.0.6")
    assert b.post(f"/api/matches/{mid}/events", {"type": "track.adjust", "expected_seq": seq, "data": {
        "player": "Bruno", "track": "money", "delta": 1}}).status_code == 201


def test_the_bytes_a_phone_sends_are_limited_too(app, clock):
    """Large refused bodies count: a phone cannot make the box parse (or store) megabytes a minute."""
    from companion.services.access import PHONE_BYTES

    a = phone(app)
    mid = new(a, "web-of-power")
    burst, rate = PHONE_BYTES
    answers = [a.post(f"/api/matches/{mid}/events", {"type": "deck.out", "expected_seq": 0, "data": {"note": BIG}})
               .status_code for _ in range(8)]
    taken = burst // 60_000
    assert answers[:taken] == [400] * taken and set(answers[taken + 1:]) == {429}, answers
    clock.advance(60)
    assert a.post(f"/api/matches/{mid}/events", {"type": "deck.out", "expected_seq": 0,
                                                "data": {"note": BIG}}).status_code == 400  # (60 s: 120 KiB back)


def test_an_address_with_many_sessions_is_limited_as_a_whole(app, clock):
    """A guest re-joining without a cookie gets a new session each time: the address is counted too, and
    each new session is itself a write of the address (the sessions' table is not filled either)."""
    from companion.services.access import ADDRESS_WRITES
    from companion.web.auth import current_join

    with app.test_request_context("/"):
        url = current_join("http://localhost")["url"][len("http://localhost"):]
    took, last = 0, None
    for n in range(ADDRESS_WRITES[0] // 10 + 4):
        c = app.test_client()
        c.environ_base["REMOTE_ADDR"] = "10.0.0.9"
        r = c.get(url)
        if r.status_code == 429:  # the address's budget is spent: no new session either
            break
        assert r.status_code == 303, r.data
        took += 1
        last = Api(c)
        for _ in range(10):
            r = last.post("/api/matches", {"game": "richelieu", "players": ["Anna", "Bruno"]})
            took += r.status_code == 201
    assert took == ADDRESS_WRITES[0]
    r = last.post("/api/matches", {"game": "richelieu", "players": ["Anna", "Bruno"]})
    assert r.status_code == 429 and r.json["field"] == "address"


def test_organisers_scripts_and_the_box_s_own_screen_are_not_limited(app, organiser, tokens):
    from companion.services.access import PHONE_WRITES

    script = Api(app.test_client(), bearer=tokens["player"])
    script.c.environ_base["REMOTE_ADDR"] = "10.0.0.7"
    kiosk = phone(app, "127.0.0.1")
    organiser.c.environ_base["REMOTE_ADDR"] = "10.0.0.8"  # an organiser's phone on the Wi-Fi
    for who in (organiser, script, kiosk):
        mid = new(who, "richelieu", ("Anna", "Bruno"))
        for seq in range(PHONE_WRITES[0] + 5):
            r = who.post(f"/api/matches/{mid}/events", {"type": "track.adjust", "expected_seq": seq,
                                                       "data": {"player": "Anna", "track": "money", "delta": 1}})
            assert r.status_code == 201, r.json
