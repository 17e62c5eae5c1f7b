"""Property tests of the clock fold against an independent formulation.

The fold (companion/core/clock.py) is an incremental state machine. The model here works the other way:
it keeps the list of accepted events and derives everything by counting over it, in whole milliseconds:
running time = sum of the run intervals; the zero instant E = where that sum reaches the limit; turn k
(0-based) is seat k % n of round k // n + 1; the expiry round R = the round of the turn in progress at E
(turns ended strictly before E); then rounds <= R are the finishing round, R+1 the last lap, and rounds
>= R+2 final rounds with threshold min(12, 4 + r - (R+2)).
"""

import os
import copy
import json
from datetime import datetime, timedelta, timezone

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from companion.core import clock
from companion.base.errors import InputError, RuleError
from companion.core.match import fold
from companion.base.timeutil import to_iso

BASE = datetime(2026, 3, 1, 20, 0, tzinfo=timezone.utc)


def iso(ms: int) -> str:
    return to_iso(BASE + timedelta(milliseconds=ms))


class Model:
    def __init__(self, players):
        self.players = players
        self.n = len(players)
        self.limit_ms = None
        self.runs = []            # [start_ms, end_ms | None]
        self.turn_ends = []       # (t, player, conquered, owed_roll)
        self.owed = None          # the player who owes a roll (also kept when the match ended during it)
        self.ended = None         # (t, reason, player)
        self.last_t = None

    # -- derived by counting ------------------------------------------------
    @property
    def started(self):
        return self.limit_ms is not None

    @property
    def running(self):
        return bool(self.runs) and self.runs[-1][1] is None and not self.ended

    def elapsed(self, t):
        total = 0
        for s, e in self.runs:
            end = t if e is None else min(e, t)
            if self.ended:
                end = min(end, self.ended[0])
            total += max(0, end - s)
        return total

    def expiry(self):
        acc = 0
        for s, e in self.runs:
            if e is None or acc + (e - s) >= self.limit_ms:
                return s + (self.limit_ms - acc)
            acc += e - s
        return None

    def completed_turns(self):
        return len(self.turn_ends) - (1 if self.owed else 0)

    def expiry_round(self, t):
        E = self.expiry()
        if E is None or E > t:
            return None
        # turns ended strictly before E; a turn.end at E itself belongs to the expiring turn
        done_before = sum(1 for te in self.turn_ends if te[0] < E)
        return done_before // self.n + 1

    def phase_of(self, rnd, t):
        R = self.expiry_round(t)
        if R is None:
            return "regular"
        if rnd <= R:
            return "finishing-round"
        if rnd == R + 1:
            return "last-lap"
        return "final-rounds"

    def threshold_of(self, rnd, t):
        R = self.expiry_round(t)
        return min(12, 4 + rnd - (R + 2))

    def round(self):
        return self.completed_turns() // self.n + 1 if self.started else 0

    def current(self):
        if not self.started or self.ended:
            return None
        return self.players[self.completed_turns() % self.n]

    def view(self, t):
        if not self.started:
            return {"phase": "setup", "round": 0, "current_player": None, "awaiting_roll": None,
                    "final_threshold": None, "ended": False, "ended_by": None,
                    "clock": {"limit_seconds": 7200, "elapsed_seconds": 0, "remaining_seconds": 7200,
                              "running": False}}
        at = self.ended[0] if self.ended else t
        rnd = self.round()
        phase = self.phase_of(rnd, at)
        el = self.elapsed(t)
        return {
            "phase": "ended" if self.ended else phase,
            "round": rnd,
            "current_player": self.current(),
            "awaiting_roll": None if self.ended else self.owed,
            "final_threshold": self.threshold_of(rnd, at) if phase == "final-rounds" else None,
            "ended": bool(self.ended),
            "ended_by": {"reason": self.ended[1], "player": self.ended[2]} if self.ended else None,
            "clock": {"limit_seconds": self.limit_ms // 1000, "elapsed_seconds": el / 1000,
                      "remaining_seconds": max(0, self.limit_ms - el) / 1000, "running": self.running},
        }

    # -- acceptance + effect ------------------------------------------------
    def accepts(self, type, data, t):
        """None if the model accepts the event, else the error class it expects."""
        if self.last_t is not None and t < self.last_t:
            return RuleError
        if self.ended:
            return RuleError
        player = data.get("player")
        if type in ("turn.end", "final.roll", "objective.completed") and player not in self.players:
            return InputError
        if type == "final.roll" and not (isinstance(data.get("dice"), list) and len(data["dice"]) == 2
                                         and all(type_ok(d) for d in data["dice"])):
            return InputError
        if type == "clock.start":
            return RuleError if self.started else None
        if not self.started:
            return RuleError
        if type == "clock.pause":
            return None if self.running else RuleError
        if type == "clock.resume":
            return RuleError if self.running else None
        if type == "objective.completed":
            return None
        if not self.running:
            return RuleError
        if type == "turn.end":
            if self.owed or player != self.current():
                return RuleError
            if self.phase_of(self.round(), t) == "final-rounds" and "conquered" not in data:
                return InputError
            return None
        if type == "final.roll":
            return None if self.owed == player else RuleError
        raise AssertionError(type)

    def do(self, type, data, t):
        self.last_t = t
        if type == "clock.start":
            self.limit_ms = data["limit_minutes"] * 60_000
            self.runs.append([t, None])
        elif type == "clock.pause":
            self.runs[-1][1] = t
        elif type == "clock.resume":
            self.runs.append([t, None])
        elif type == "objective.completed":
            self.ended = (t, "objective", data["player"])
        elif type == "turn.end":
            rnd = self.round()
            owes = self.phase_of(rnd, t) == "final-rounds" and data["conquered"] < 2
            self.turn_ends.append((t, data["player"], data.get("conquered"), owes))
            if owes:
                self.owed = data["player"]
        elif type == "final.roll":
            if sum(data["dice"]) <= self.threshold_of(self.round(), t):
                self.ended = (t, "final-roll", data["player"])
            else:
                self.owed = None


def type_ok(d):
    return isinstance(d, int) and not isinstance(d, bool) and 1 <= d <= 6


class ClockMachine(RuleBasedStateMachine):
    @initialize(n=st.integers(1, 4), start=st.one_of(st.none(), st.integers(1, 2), st.just(1)))
    def setup(self, n, start):
        self.players = [f"p{i}" for i in range(n)]
        self.state = clock.initial_state(self.players, {})
        self.model = Model(self.players)
        self.t = 0
        self.prev_remaining = None
        self.prev_elapsed = 0
        self.accepted = 0
        if start is not None:  # most runs start at once, so they get to the later phases
            self.attempt("clock.start", {"limit_minutes": start})

    def attempt(self, type, data, t=None):
        t = self.t if t is None else t
        expected = self.model.accepts(type, data, t)
        before = copy.deepcopy(self.state)
        try:
            new = clock.apply(self.state, {"type": type, "data": data, "at": iso(t)})
        except (RuleError, InputError) as exc:
            assert self.state == before, "a refused event changed the state"
            assert type_of(exc) is expected, (type, data, exc, expected)
            return
        assert self.state == before, "apply mutated its input"
        assert expected is None, (type, data, "accepted, the model refuses with", expected)
        json.dumps(new)
        self.state = new
        self.model.do(type, data, t)
        self.accepted += 1

    @rule(ms=st.one_of(st.integers(0, 5_000), st.integers(0, 90_000), st.integers(0, 400_000)))
    def wait(self, ms):
        self.t += ms

    @rule(minutes=st.one_of(st.just(1), st.integers(1, 4)))
    def start(self, minutes):
        self.attempt("clock.start", {"limit_minutes": minutes})

    @rule()
    def pause(self):
        self.attempt("clock.pause", {})

    @rule()
    def resume(self):
        self.attempt("clock.resume", {})

    @rule(who=st.integers(0, 4), conquered=st.one_of(st.none(), st.integers(0, 3), st.integers(0, 3)),
          right=st.integers(0, 5))
    def turn_end(self, who, conquered, right):
        # mostly the right player (to go deep into the final rounds), sometimes anybody
        player = (self.model.current() if right and self.model.current() else f"p{who}")
        data = {"player": player}
        if conquered is not None:
            data["conquered"] = conquered
        self.attempt("turn.end", data)

    @rule(who=st.integers(0, 4), dice=st.tuples(st.integers(1, 6), st.integers(1, 6)), right=st.integers(0, 5))
    def roll(self, who, dice, right):
        player = self.model.owed if right and self.model.owed else f"p{who}"
        self.attempt("final.roll", {"player": player, "dice": list(dice)})

    @rule(ms=st.integers(0, 40_000), conquered=st.integers(0, 3),
          dice=st.tuples(st.integers(1, 6), st.integers(1, 6)))
    def play(self, ms, conquered, dice):
        """What a table mostly does: time passes, the player whose turn it is ends it (or rolls)."""
        self.t += ms
        if self.model.owed:
            self.attempt("final.roll", {"player": self.model.owed, "dice": list(dice)})
        elif self.model.current():
            self.attempt("turn.end", {"player": self.model.current(), "conquered": conquered})

    @rule(dice=st.tuples(st.integers(-1, 8), st.integers(-1, 8)).filter(lambda d: not all(map(type_ok, d))))
    def bad_dice(self, dice):
        self.attempt("final.roll", {"player": self.model.owed or "p0", "dice": list(dice)})

    @precondition(lambda self: self.accepted > 3)
    @rule(who=st.integers(0, 4), go=st.integers(0, 7))
    def objective(self, who, go):
        if go:  # rare: an objective ends the match and the rest of the run would test nothing new
            return
        self.attempt("objective.completed", {"player": f"p{who}"})

    @precondition(lambda self: self.model.last_t is not None and self.model.last_t > 0)
    @rule(back=st.integers(1, 10_000))
    def backdated(self, back):
        self.attempt("clock.pause", {}, t=max(0, self.model.last_t - back))

    @invariant()
    def matches_the_model(self):
        if not hasattr(self, "model"):
            return
        v = clock.view(self.state, iso(self.t))
        assert v == self.model.view(self.t)
        event(f"reached {v['phase']}" + (" owing a roll" if v["awaiting_roll"] else "")
              + (f" by {v['ended_by']['reason']}" if v["ended_by"] else ""))

    @invariant()
    def clock_invariants(self):
        if not hasattr(self, "model"):
            return
        v = clock.view(self.state, iso(self.t))
        c = v["clock"]
        # remaining never increases (running or not: there is no undo here), elapsed never decreases
        if self.prev_remaining is not None:
            assert c["remaining_seconds"] <= self.prev_remaining
        assert c["elapsed_seconds"] >= self.prev_elapsed
        self.prev_remaining, self.prev_elapsed = c["remaining_seconds"], c["elapsed_seconds"]
        if c["remaining_seconds"] > 0:
            assert round(c["elapsed_seconds"] * 1000) + round(c["remaining_seconds"] * 1000) == \
                c["limit_seconds"] * 1000
        # the threshold lives in 4..12, only in (or after) the final rounds
        if v["final_threshold"] is not None:
            assert 4 <= v["final_threshold"] <= 12
            assert v["phase"] in ("final-rounds", "ended")
        # at most one owed roll: it is the current player's, in the final rounds, and blocks every turn.end
        if v["awaiting_roll"] is not None:
            assert v["phase"] == "final-rounds" and v["awaiting_roll"] == v["current_player"]
            for p in self.players:
                try:
                    clock.apply(self.state, {"type": "turn.end", "data": {"player": p, "conquered": 3},
                                             "at": iso(self.t)})
                except RuleError:
                    continue
                raise AssertionError("a turn ended while a roll was owed")
        assert v["phase"] in clock.PHASES
        assert (v["phase"] == "ended") is v["ended"]


# 60 machines of 80 steps in `make test`; `make soak` (COMPANION_SOAK=1) runs 1,000 of 100
SOAK = bool(os.environ.get("COMPANION_SOAK"))
ClockMachine.TestCase.settings = settings(max_examples=1000 if SOAK else 60, stateful_step_count=100 if SOAK else 80,
                                          suppress_health_check=[HealthCheck.filter_too_much,
                                                                 HealthCheck.too_slow])
TestClockMachine = ClockMachine.TestCase


def type_of(exc):
    return RuleError if isinstance(exc, RuleError) else InputError


# -- undo is a replay of the shorter log ------------------------------------------------------------

@st.composite
def legal_logs(draw):
    """A legal event log built by the model itself (so it goes deep into the final rounds)."""
    n = draw(st.integers(2, 4))  # the test game needs two players
    players = [f"p{i}" for i in range(n)]
    m = Model(players)
    t = 0
    events = []

    def add(type, data):
        nonlocal t
        assert m.accepts(type, data, t) is None
        m.do(type, data, t)
        events.append({"seq": len(events) + 1, "type": type, "data": data, "at": iso(t)})

    add("clock.start", {"limit_minutes": draw(st.integers(1, 3))})
    for _ in range(draw(st.integers(0, 40))):
        t += draw(st.integers(0, 60_000))
        if m.ended:
            break
        choice = draw(st.integers(0, 9))
        if choice == 0:
            add("clock.pause" if m.running else "clock.resume", {})
        elif not m.running:
            add("clock.resume", {})
        elif m.owed:
            add("final.roll", {"player": m.owed, "dice": [draw(st.integers(1, 6)), draw(st.integers(1, 6))]})
        else:
            add("turn.end", {"player": m.current(), "conquered": draw(st.integers(0, 2))})
    return players, events, t


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(legal_logs())
def test_undo_equals_folding_the_shorter_log(fake_game, log):
    players, events, t = log
    now = iso(t + 1000)
    full = fold(fake_game, players, events, {"clock": True})
    event(f"undo in {full.view(now)['phase']}, after {events[-1]['type']}")
    undo = {"seq": len(events) + 1, "type": "undo", "data": {}, "at": iso(t)}
    full.apply(undo)
    shorter = fold(fake_game, players, events[:-1], {"clock": True})
    assert {k: v for k, v in full.view(now).items() if k != "seq"} == \
        {k: v for k, v in shorter.view(now).items() if k != "seq"}
