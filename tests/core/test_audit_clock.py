"""Audit of the match clock against docs/rulings.md#match-clock and the conquest rule book ("DURATA PARTITA",
"FINE DEL GIOCO"). Each test names the rule it checks.

Written apart from tests/test_clock*.py, with its own small driver, so it does not share their helpers.
"""

import json
import random
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.core import clock
from companion.services.clockrunner import ClockRunner
from companion.base.errors import InputError, RuleError
from companion.core.match import check_export, fold
from companion.services.matches import MatchService
from companion.storage import Store
from companion.base.timeutil import FakeClock, to_iso

T0 = datetime(2026, 3, 1, 20, 0, tzinfo=timezone.utc)


class Drive:
    """Applies clock events at explicit instants (seconds after T0)."""

    def __init__(self, players=("A", "B", "C")):
        self.players = list(players)
        self.state = clock.initial_state(self.players, {})
        self.t = 0.0

    def at(self, seconds):
        self.t = seconds
        return self

    def __call__(self, type, **data):
        self.state = clock.apply(self.state, {"type": type, "data": data,
                                              "at": to_iso(T0 + timedelta(seconds=self.t))})
        return self.view()

    def view(self, seconds=None):
        t = self.t if seconds is None else seconds
        return clock.view(self.state, (T0 + timedelta(seconds=t)).isoformat())

    def refuse(self, error, type, **data):
        before = json.dumps(self.state, sort_keys=True)
        with pytest.raises(error) as exc:
            clock.apply(self.state, {"type": type, "data": data, "at": to_iso(T0 + timedelta(seconds=self.t))})
        assert json.dumps(self.state, sort_keys=True) == before
        return exc.value


def final_rounds(players=("A", "B", "C"), limit_minutes=1):
    """A clock brought to the first final round: zero reached in A's turn, round finished, last lap played."""
    d = Drive(players)
    d.at(0)("clock.start", limit_minutes=limit_minutes)
    d.at(limit_minutes * 60 + 1)
    assert d.view()["phase"] == "finishing-round"
    for p in players:
        d("turn.end", player=p)
    assert d.view()["phase"] == "last-lap"
    for p in players:
        d("turn.end", player=p)
    assert d.view()["phase"] == "final-rounds"
    return d


# -- phases -----------------------------------------------------------------------------------

def test_rule_phases_setup_regular_finishing_lastlap_final_ended():
    """Phases: setup -> regular -> (zero during a turn) finishing-round to the last seat -> last-lap (one
    full round) -> final-rounds -> ended."""
    d = Drive()
    assert d.view()["phase"] == "setup" and d.view()["current_player"] is None
    v = d.at(0)("clock.start", limit_minutes=2)
    assert (v["phase"], v["round"], v["current_player"]) == ("regular", 1, "A")
    d.at(50)("turn.end", player="A")
    d.at(100)("turn.end", player="B")
    # the clock reaches zero at 120 s during C's turn: the round in progress is the finishing round
    assert d.view(119.999)["phase"] == "regular"
    assert d.view(120)["phase"] == "finishing-round"
    v = d.at(130)("turn.end", player="C")                    # C is the last seat: the finishing round is over
    assert (v["phase"], v["round"], v["current_player"]) == ("last-lap", 2, "A")
    for p in "AB":
        assert d("turn.end", player=p)["phase"] == "last-lap"
    v = d("turn.end", player="C")
    assert (v["phase"], v["round"], v["final_threshold"]) == ("final-rounds", 3, 4)
    d("turn.end", player="A", conquered=0)
    v = d("final.roll", player="A", dice=[1, 3])
    assert v["phase"] == "ended" and v["ended"] and v["ended_by"] == {"reason": "final-roll", "player": "A"}


def test_rule_zero_in_the_first_seats_turn_still_plays_the_whole_round_out():
    """'si dovrà terminare il turno di gioco (tutti i giocatori, fino all'ultimo)': zero in the first seat's
    turn makes the rest of that round the finishing round, not the last lap."""
    d = Drive()
    d.at(0)("clock.start", limit_minutes=1)
    d.at(61)
    assert d("turn.end", player="A")["phase"] == "finishing-round"
    assert d("turn.end", player="B")["phase"] == "finishing-round"
    assert d("turn.end", player="C")["phase"] == "last-lap"


def test_rule_zero_reached_between_turns_belongs_to_the_next_turn():
    """The last seat ends its turn with time left; zero comes in the next round's first turn: that round
    is the finishing round (no round is skipped, none is added)."""
    d = Drive(("A", "B"))
    d.at(0)("clock.start", limit_minutes=1)
    d.at(10)("turn.end", player="A")
    assert d.at(59)("turn.end", player="B")["phase"] == "regular"
    assert d.view(60)["phase"] == "finishing-round" and d.view(60)["round"] == 2
    d.at(70)("turn.end", player="A")
    assert d("turn.end", player="B")["phase"] == "last-lap"


# -- the final rounds -------------------------------------------------------------------------

def test_rule_two_conquests_exempt_fewer_owe_a_roll():
    """In final-rounds, fewer than 2 territories conquered in the turn owes a final.roll; >= 2 exempts."""
    d = final_rounds()
    v = d("turn.end", player="A", conquered=2)
    assert v["awaiting_roll"] is None and v["current_player"] == "B"
    v = d("turn.end", player="B", conquered=1)
    assert v["awaiting_roll"] == "B"
    d.refuse(RuleError, "turn.end", player="C", conquered=5)       # B owes the roll first
    d("final.roll", player="B", dice=[6, 6])
    v = d("turn.end", player="C", conquered=0)
    assert v["awaiting_roll"] == "C"


def test_rule_conquered_is_required_in_the_final_rounds_only():
    """The count of conquests decides the roll in the final rounds: it is required there, optional before."""
    d = Drive()
    d.at(0)("clock.start", limit_minutes=1)
    d.at(10)("turn.end", player="A")                               # regular: no count needed
    d = final_rounds()
    assert d.refuse(InputError, "turn.end", player="A").field == "conquered"


def test_rule_sum_equal_to_the_threshold_ends_one_more_continues():
    """'somma ... uguale o minore a 4 la partita è conclusa': the boundary sum ends, threshold + 1 does not."""
    d = final_rounds()
    d("turn.end", player="A", conquered=0)
    v = d("final.roll", player="A", dice=[2, 3])                   # 5 > 4
    assert not v["ended"] and v["current_player"] == "B"
    d("turn.end", player="B", conquered=1)
    v = d("final.roll", player="B", dice=[2, 2])                   # 4 <= 4
    assert v["ended"] and v["ended_by"] == {"reason": "final-roll", "player": "B"}


def test_rule_threshold_rises_after_the_last_seats_turn_and_its_roll():
    """The threshold rises by 1 after each turn of the last seat, after its roll: the last seat itself
    rolls against the old value."""
    d = final_rounds()
    for p in "AB":
        d("turn.end", player=p, conquered=3)
    d("turn.end", player="C", conquered=0)
    v = d.view()
    assert v["final_threshold"] == 4 and v["awaiting_roll"] == "C"
    v = d("final.roll", player="C", dice=[3, 2])                   # 5 > 4 (it would end against 5)
    assert not v["ended"] and v["final_threshold"] == 5 and v["current_player"] == "A"


def test_rule_threshold_caps_at_12_and_then_any_roll_ends():
    """4, 5, ... 12 and no higher ('5-6-7-8-9-10-11-12'); at 12 every roll of two dice ends the match."""
    d = final_rounds(("A", "B"))
    seen = []
    for _ in range(12):
        seen.append(d.view()["final_threshold"])
        d("turn.end", player="A", conquered=2)
        d("turn.end", player="B", conquered=4)
    assert seen == [4, 5, 6, 7, 8, 9, 10, 11, 12, 12, 12, 12]
    d("turn.end", player="A", conquered=0)
    assert d("final.roll", player="A", dice=[6, 6])["ended"]


@settings(max_examples=200)
@given(n=st.integers(1, 5),
       turns=st.lists(st.tuples(st.integers(0, 3), st.integers(1, 6), st.integers(1, 6)), min_size=1, max_size=80))
def test_rule_final_rounds_against_a_direct_formulation(n, turns):
    """The whole final-rounds rule, stated directly: the j-th final-round turn is in final round j // n,
    whose threshold is min(12, 4 + j // n); it owes a roll iff conquered < 2; the match ends at the first
    owed roll whose sum <= that threshold."""
    players = [f"p{i}" for i in range(n)]
    d = final_rounds(players)
    expected_end = None
    for j, (conquered, a, b) in enumerate(turns):
        threshold = min(12, 4 + j // n)
        if conquered < 2 and a + b <= threshold:
            expected_end = j
            break
    for j, (conquered, a, b) in enumerate(turns):
        v = d.view()
        assert v["final_threshold"] == min(12, 4 + j // n)
        assert v["current_player"] == players[j % n]
        d("turn.end", player=players[j % n], conquered=conquered)
        if conquered < 2:
            v = d("final.roll", player=players[j % n], dice=[a, b])
        if j == expected_end:
            assert v["ended"] and v["ended_by"] == {"reason": "final-roll", "player": players[j % n]}
            return
        assert not v["ended"]
    assert expected_end is None


# -- the objective, pauses, refusals -------------------------------------------------------------

@pytest.mark.parametrize("where", ["regular", "paused", "awaiting-roll"])
def test_rule_objective_completed_ends_at_once(where):
    """objective.completed ends the match at once, whoever's turn it is, even paused or with a roll owed."""
    d = final_rounds() if where == "awaiting-roll" else Drive()
    if where == "awaiting-roll":
        d("turn.end", player="A", conquered=0)
    else:
        d.at(0)("clock.start")
        d.at(300)
        if where == "paused":
            d("clock.pause")
    v = d("objective.completed", player="C")
    assert v["ended"] and v["phase"] == "ended" and v["ended_by"] == {"reason": "objective", "player": "C"}
    assert v["awaiting_roll"] is None and v["current_player"] is None and not v["clock"]["running"]
    d.t += 60
    d.refuse(RuleError, "clock.resume")


def test_rule_only_running_time_counts():
    """clock.pause / clock.resume: paused time is not counted; remaining = limit - running time."""
    d = Drive()
    d.at(0)("clock.start", limit_minutes=10)
    d.at(100)("clock.pause", reason="pizza")
    d.at(1000)
    assert d.view()["clock"] == {"limit_seconds": 600, "elapsed_seconds": 100.0, "remaining_seconds": 500.0,
                                 "running": False}
    d.refuse(RuleError, "turn.end", player="A")                     # no turns while paused
    d.refuse(RuleError, "clock.pause")
    d("clock.resume")
    assert d.view(1250)["clock"]["elapsed_seconds"] == 350.0
    assert d.view(1499.999)["phase"] == "regular" and d.view(1500)["phase"] == "finishing-round"


@pytest.mark.parametrize("type, data, error, field", [
    ("turn.end", {"player": "B"}, RuleError, "player"),             # not B's turn
    ("final.roll", {"player": "A", "dice": [1, 1]}, RuleError, "player"),   # nobody owes a roll
    ("final.roll", {"player": "A", "dice": [0, 3]}, InputError, "dice[0]"),
    ("final.roll", {"player": "A", "dice": [3, 7]}, InputError, "dice[1]"),
    ("final.roll", {"player": "A", "dice": [3]}, InputError, "dice"),
    ("turn.end", {"player": "Z"}, InputError, "player"),
    ("clock.start", {}, RuleError, "type"),                          # started already
])
def test_rule_refusals_name_the_field(type, data, error, field):
    """turn.end out of turn, a roll nobody owes, dice outside 1-6 are refused, naming the field."""
    d = Drive()
    d.at(0)("clock.start")
    d.at(5)
    assert d.refuse(error, type, **data).field == field


def test_rule_events_out_of_time_order_are_refused():
    """Events out of time order are refused (an event at the same instant is not out of order)."""
    d = Drive()
    d.at(10)("clock.start")
    d.at(9.999)
    assert d.refuse(RuleError, "turn.end", player="A").field == "at"
    d.at(10)("turn.end", player="A")


# -- the match fold: the clock and the game together (bugs found by this audit) ---------------------

def _tally_fold(fake_game, events):
    evs = [{"seq": i + 1, "at": to_iso(T0 + timedelta(seconds=s)), "type": t, "data": data}
           for i, (s, t, data) in enumerate(events)]
    return fold(fake_game, ["A", "B"], evs, {"clock": True})


def test_rule_nothing_but_undo_after_the_clock_ended_the_match(fake_game):
    """'anything after the end' is refused: a game event after the final roll ended the match used to be
    accepted, changing the final ranking the season had recorded."""
    f = _tally_fold(fake_game, [(0, "clock.start", {"limit_minutes": 1}), (61, "objective.completed", {"player": "A"})])
    assert f.ended()
    with pytest.raises(RuleError) as exc:
        f.check({"type": "point", "data": {"player": "B", "n": 3}, "at": to_iso(T0 + timedelta(seconds=70))})
    assert exc.value.field == "type"
    f.apply({"seq": 3, "type": "undo", "data": {}, "at": to_iso(T0 + timedelta(seconds=80))})
    assert not f.ended()


def test_rule_the_clock_stops_when_the_game_ends_by_its_own_rules(fake_game):
    """A match the game ends (here the fake game's 'finish') shows ended, stops its clock there and refuses
    further clock events; it used to show the clock running with turns still accepted."""
    f = _tally_fold(fake_game, [(0, "clock.start", {}), (30, "point", {"player": "A"}), (100, "finish", {})])
    v = f.view(to_iso(T0 + timedelta(seconds=500)))
    assert f.ended() and v["ended"] and v["phase"] == "ended"
    assert v["ended_by"] == {"reason": "game", "player": None}
    assert v["clock"]["running"] is False and v["clock"]["elapsed_seconds"] == 100.0
    with pytest.raises(RuleError):
        f.check({"type": "turn.end", "data": {"player": "A"}, "at": to_iso(T0 + timedelta(seconds=200))})
    # undo re-opens it, clock running again from its start
    f.apply({"seq": 4, "type": "undo", "data": {}, "at": to_iso(T0 + timedelta(seconds=200))})
    v = f.view(to_iso(T0 + timedelta(seconds=200)))
    assert not v["ended"] and v["clock"]["running"] and v["clock"]["elapsed_seconds"] == 200.0


# -- HTTP: 409 for the rules, 400 for malformed --------------------------------------------------

@pytest.fixture
def http_player(store):
    from companion.web.app import create_app
    from tests.web.conftest import Api, join

    app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": "13572468",
                      "SSE_HEARTBEAT": 0.05})
    c = app.test_client()
    join(app, c)
    return Api(c)


def test_rule_http_refusals_409_and_400(http_player, fake_game):
    """Refusals over HTTP: the rules refuse with 409, malformed data is 400; both name the field."""
    r = http_player.post("/api/matches", {"game": fake_game, "players": ["A", "B"], "options": {"clock": True}})
    assert r.status_code == 201, r.json
    url = f"/api/matches/{r.json['id']}/events"
    assert http_player.post(url, {"type": "clock.start", "data": {}, "expected_seq": 0}).status_code == 201
    r = http_player.post(url, {"type": "turn.end", "data": {"player": "B"}, "expected_seq": 1})
    assert r.status_code == 409 and r.json["field"] == "$.data.player"
    r = http_player.post(url, {"type": "final.roll", "data": {"player": "A", "dice": [1, 1]}, "expected_seq": 1})
    assert r.status_code == 409 and r.json["field"] == "$.data.player"
    r = http_player.post(url, {"type": "final.roll", "data": {"player": "A", "dice": [1, 9]}, "expected_seq": 1})
    assert r.status_code == 400 and r.json["field"] == "$.data.dice[1]"
    assert http_player.post(url, {"type": "finish", "expected_seq": 1}).status_code == 201
    r = http_player.post(url, {"type": "turn.end", "data": {"player": "A"}, "expected_seq": 2})
    assert r.status_code == 409 and r.json["field"] == "$.type"


# -- checkpoints and recovery ----------------------------------------------------------------------

@settings(max_examples=15)
@given(seed=st.integers(0, 10_000))
def test_rule_checkpoints_at_most_30s_of_running_time_are_lost(tmp_path_factory, seed):
    """Checkpoints every <= 30 s (never more often); after a crash at any instant the clock comes back paused
    at the last checkpoint (or the last event, if later): it lost at most 30 s of running time, never
    gained any."""
    from companion import games

    rnd = random.Random(seed)
    path = tmp_path_factory.mktemp("cp") / "c.db"
    fake = FakeClock(T0)
    saved = games.GAMES.get("richelieu")
    games.GAMES["richelieu"] = "tests.fakegame"
    try:
        store = Store(path, clock=fake)
        svc = MatchService(store)
        runner = ClockRunner(svc, store, clock=fake, rng=random.Random(1))
        mid = svc.create("richelieu", ["A", "B"], {"clock": True})["id"]
        runner.start_clock(mid, limit_minutes=600)
        written_at = []
        for s in range(rnd.randint(1, 400)):
            fake.advance(1)
            if rnd.random() < 0.02:
                running = svc.state(mid)["clock"]["running"]
                (runner.pause if running else runner.resume)(mid)
            if runner.tick()["checkpoint"]:
                written_at.append(s)
        assert all(b - a >= 30 for a, b in zip(written_at, written_at[1:]))   # never more often
        true_elapsed = svc.state(mid)["clock"]["elapsed_seconds"]
        was_running = svc.state(mid)["clock"]["running"]
        store.close()                                                       # the crash
        fake.advance(rnd.randint(1, 3600))
        store = Store(path, clock=fake)
        svc = MatchService(store)
        runner = ClockRunner(svc, store, clock=fake, rng=random.Random(1))
        runner.recover()
        v = svc.state(mid)
        assert v["clock"]["running"] is False
        if was_running:
            assert 0 <= true_elapsed - v["clock"]["elapsed_seconds"] <= 30
            assert store.events(mid)[-1]["data"] == {"reason": "power-lost"}
        else:
            assert v["clock"]["elapsed_seconds"] == true_elapsed
        store.close()
    finally:
        games.GAMES["richelieu"] = saved


# -- `companion match state --at` as a real process -------------------------------------------------

def _export(events, game="conquest-italy", players=("A", "B", "C"), options=None):
    doc = {"id": "audit-1", "game": game, "players": list(players), "created_at": "2026-03-01T19:55:00.000Z",
           "events": [{"seq": i + 1, "at": at, "type": t, "data": d} for i, (at, t, d) in enumerate(events)]}
    if options:
        doc["options"] = options
    check_export(doc)
    return doc


def test_rule_match_state_at_an_instant(run_cli):
    """`match state FILE --at T` folds the events at or before T and shows the clock at T."""
    doc = _export([("2026-03-01T20:00:00.000Z", "clock.start", {"limit_minutes": 1}),
                   ("2026-03-01T20:00:30.000Z", "turn.end", {"player": "A"}),
                   ("2026-03-01T20:00:40.000Z", "clock.pause", {}),
                   ("2026-03-01T20:10:00.000Z", "clock.resume", {})])
    text = json.dumps(doc)

    def at(t):
        code, out, err = run_cli("match", "state", "-", "--at", t, stdin=text)
        assert code == 0, err
        return json.loads(out)

    v = at("2026-03-01T19:59:59Z")
    assert (v["phase"], v["seq"], v["clock"]["running"]) == ("setup", 0, False)
    v = at("2026-03-01T20:00:35Z")
    assert (v["phase"], v["current_player"], v["clock"]["remaining_seconds"]) == ("regular", "B", 25.0)
    v = at("2026-03-01T20:05:00Z")                                  # paused at 40 s
    assert v["clock"] == {"limit_seconds": 60, "elapsed_seconds": 40.0, "remaining_seconds": 20.0, "running": False}
    v = at("2026-03-01T20:10:20.001Z")                              # 60.001 s of running time
    assert v["phase"] == "finishing-round" and v["clock"]["remaining_seconds"] == 0
    assert set(v) >= {"phase", "round", "current_player", "awaiting_roll", "final_threshold", "ended",
                      "ended_by", "clock"}


def test_rule_match_state_at_keeps_sub_millisecond_instants(run_cli):
    """An event stamped at .0005 s is in the state at exactly that instant (--at used to be cut to ms)."""
    doc = _export([("2026-03-01T20:00:00.000Z", "clock.start", {}),
                   ("2026-03-01T20:00:10.000500Z", "turn.end", {"player": "A"})])
    code, out, err = run_cli("match", "state", "-", "--at", "2026-03-01T20:00:10.000500Z", stdin=json.dumps(doc))
    assert code == 0, err
    assert json.loads(out)["current_player"] == "B"


def test_rule_match_state_now_folds_events_stamped_ahead_of_this_clock(run_cli):
    """Without --at, every event counts even if a Pi without a battery clock stamped it in the future."""
    doc = _export([("2099-01-01T20:00:00.000Z", "clock.start", {}),
                   ("2099-01-01T20:00:10.000Z", "turn.end", {"player": "A"})])
    code, out, err = run_cli("match", "state", "-", stdin=json.dumps(doc))
    assert code == 0, err
    v = json.loads(out)
    assert v["seq"] == 2 and v["current_player"] == "B" and v["clock"]["elapsed_seconds"] == 10.0


@pytest.mark.parametrize("args, stdin_events, field", [
    (["--at", "yesterday"], [], "--at"),
    (["--at", "0001-01-01T00:00:00+05:00"], [], "--at"),
    ([], [("0001-01-01T00:00:00+05:00", "clock.start", {})], "$.events[0].at"),
    ([], [("2026-03-01T20:00:00Z", "clock.start", {}), ("2026-03-01T20:00:05Z", "final.roll",
                                                        {"player": "A", "dice": [0, 1]})], "$.events[1].data.dice[0]"),
    ([], [("2026-03-01T20:00:00Z", "turn.end", {"player": "A"})], "$.events[0].type"),
])
def test_rule_match_state_bad_input_is_exit_2_naming_the_path(run_cli, args, stdin_events, field):
    """Bad input to `match state`: exit 2 and one line naming the field (never exit 1 / a traceback)."""
    doc = {"id": "bad", "game": "conquest-italy", "players": ["A", "B", "C"], "created_at": "2026-03-01T19:00:00Z",
           "events": [{"seq": i + 1, "at": at, "type": t, "data": d} for i, (at, t, d) in enumerate(stdin_events)]}
    code, out, err = run_cli("match", "state", "-", *args, stdin=json.dumps(doc))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and field in err and "Traceback" not in err, err
