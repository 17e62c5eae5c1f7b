"""The match clock fold (companion/core/clock.py), driven with a fake clock through every phase.

Rule book: the conquest game's, "DURATA PARTITA" and "FINE DEL GIOCO"; the rulings of
docs/rulings.md#match-clock win where the book is ambiguous.
"""

import copy
import json
from datetime import timedelta

import pytest

from companion.core import clock
from companion.base.errors import InputError, RuleError
from companion.core.match import fold
from companion.services.matches import MatchService
from companion.base.resources import schemas_dir
from companion.base.timeutil import parse_iso, to_iso

T0 = "2026-03-01T20:00:00Z"
VIEW_KEYS = {"phase", "round", "current_player", "awaiting_roll", "final_threshold", "ended", "ended_by", "clock"}
CLOCK_KEYS = {"limit_seconds", "elapsed_seconds", "remaining_seconds", "running"}


class Table:
    """A table with a fake clock: ``wait`` moves time, ``do`` applies one clock event at the current instant."""

    def __init__(self, players=("ada", "bo", "cy"), start=T0):
        self.players = list(players)
        self.now = parse_iso(start)
        self.state = clock.initial_state(self.players, {})

    def wait(self, seconds=0, minutes=0):
        self.now += timedelta(seconds=seconds, minutes=minutes)
        return self

    def event(self, type, **data):
        return {"type": type, "data": data, "at": to_iso(self.now)}

    def do(self, type, **data):
        before = copy.deepcopy(self.state)
        new = clock.apply(self.state, self.event(type, **data))
        assert self.state == before, "apply mutated its input"
        json.dumps(new)  # plain JSON data
        self.state = new
        return self.view()

    def refused(self, error, field, type, **data):
        before = copy.deepcopy(self.state)
        with pytest.raises(error) as exc:
            clock.apply(self.state, self.event(type, **data))
        assert exc.value.field == field, exc.value
        assert self.state == before
        return exc.value

    def view(self, later=0):
        return clock.view(self.state, to_iso(self.now + timedelta(seconds=later)))

    def turns(self, *players, conquered=None):
        v = None
        for p in players:
            data = {"player": p} if conquered is None else {"player": p, "conquered": conquered}
            v = self.do("turn.end", **data)
        return v

    def round_of_turns(self, conquered=None, seconds=0):
        for p in self.players:
            self.wait(seconds)
            self.turns(p, conquered=conquered)
        return self.view()


def started(minutes=120, players=("ada", "bo", "cy")):
    t = Table(players)
    t.do("clock.start", limit_minutes=minutes)
    return t


def to_final_rounds(t):
    """From a running regular phase: let the clock run out in ada's turn, finish the round, play the last lap."""
    t.wait(seconds=t.view()["clock"]["remaining_seconds"] + 1)
    assert t.view()["phase"] == "finishing-round"
    for p in t.players[t.players.index(t.view()["current_player"]):]:
        t.turns(p)
    assert t.view()["phase"] == "last-lap"
    t.round_of_turns()
    assert t.view()["phase"] == "final-rounds"
    return t


# -- set-up and start --------------------------------------------------------

def test_setup_view_has_exactly_the_keys_and_the_default_two_hours():
    v = Table().view()
    assert set(v) == VIEW_KEYS and set(v["clock"]) == CLOCK_KEYS
    assert v == {"phase": "setup", "round": 0, "current_player": None, "awaiting_roll": None,
                 "final_threshold": None, "ended": False, "ended_by": None,
                 "clock": {"limit_seconds": 7200, "elapsed_seconds": 0, "remaining_seconds": 7200, "running": False}}


def test_start_defaults_to_120_minutes_and_the_first_seat_plays_first():
    t = Table()
    v = t.do("clock.start")
    assert v["phase"] == "regular" and v["round"] == 1 and v["current_player"] == "ada"
    assert v["clock"] == {"limit_seconds": 7200, "elapsed_seconds": 0, "remaining_seconds": 7200, "running": True}
    t.wait(minutes=25, seconds=30.25)
    assert t.view()["clock"]["elapsed_seconds"] == 1530.25
    assert t.view()["clock"]["remaining_seconds"] == 7200 - 1530.25


@pytest.mark.parametrize("minutes", [0, -5, 1441, "120", 1.5, True, None])
def test_start_refuses_a_bad_limit(minutes):
    Table().refused(InputError, "limit_minutes", "clock.start", limit_minutes=minutes)


def test_start_accepts_the_limit_boundaries():
    assert started(1).view()["clock"]["limit_seconds"] == 60
    assert started(1440).view()["clock"]["limit_seconds"] == 86400


def test_start_twice_and_play_before_start_are_refused():
    t = Table()
    for type, data in [("turn.end", {"player": "ada"}), ("clock.pause", {}), ("clock.resume", {}),
                       ("final.roll", {"player": "ada", "dice": [1, 1]}), ("objective.completed", {"player": "ada"})]:
        t.refused(RuleError, "type", type, **data)
    t.do("clock.start")
    t.refused(RuleError, "type", "clock.start")


# -- regular phase -------------------------------------------------------------

def test_turns_follow_the_seat_order_and_rounds_count():
    t = started()
    seen = []
    for _ in range(7):
        v = t.view()
        seen.append((v["round"], v["current_player"]))
        t.wait(minutes=3).turns(v["current_player"])
    assert seen == [(1, "ada"), (1, "bo"), (1, "cy"), (2, "ada"), (2, "bo"), (2, "cy"), (3, "ada")]
    assert t.view()["phase"] == "regular" and t.view()["clock"]["elapsed_seconds"] == 21 * 60


def test_conquered_is_optional_outside_the_final_rounds_but_checked():
    t = started()
    t.turns("ada", conquered=5)
    t.refused(InputError, "conquered", "turn.end", player="bo", conquered=-1)
    t.refused(InputError, "conquered", "turn.end", player="bo", conquered="2")
    t.refused(InputError, "conquered", "turn.end", player="bo", conquered=1.0)


# -- the clock reaching zero: finishing round, last lap, final rounds -----------------

def test_the_book_sequence_two_hours_then_the_round_then_the_last_lap_then_final_rounds():
    """"Quando scatteranno le 2 ore si dovrà terminare il turno di gioco (tutti i giocatori, fino
    all'ultimo che ha iniziato la partita) ed il primo giocatore parte con l'ultimo giro" """
    t = started(120, ("ada", "bo", "cy", "dan"))
    for _ in range(5):  # five regular rounds, 20 minutes each
        t.round_of_turns(seconds=300)
    assert t.view()["round"] == 6 and t.view()["clock"]["remaining_seconds"] == 1200
    t.wait(minutes=15).turns("ada")
    t.wait(minutes=4).turns("bo")                     # 1 minute left, cy's turn
    v = t.wait(seconds=59.999).view()
    assert (v["phase"], v["current_player"], v["clock"]["remaining_seconds"]) == ("regular", "cy", 0.001)
    v = t.wait(seconds=0.001).view()                   # the two hours are up during cy's turn
    assert (v["phase"], v["round"], v["current_player"]) == ("finishing-round", 6, "cy")
    assert v["clock"] == {"limit_seconds": 7200, "elapsed_seconds": 7200, "remaining_seconds": 0, "running": True}
    v = t.wait(minutes=10).view()                      # the turn in progress continues
    assert v["phase"] == "finishing-round" and v["clock"]["elapsed_seconds"] == 7800
    v = t.turns("cy")
    assert (v["phase"], v["round"], v["current_player"]) == ("finishing-round", 6, "dan")
    v = t.wait(minutes=5).turns("dan")                 # the round is played out to the last seat
    assert (v["phase"], v["round"], v["current_player"], v["final_threshold"]) == ("last-lap", 7, "ada", None)
    v = t.round_of_turns(seconds=60)                   # one more full round
    assert (v["phase"], v["round"], v["current_player"], v["final_threshold"]) == ("final-rounds", 8, "ada", 4)


def test_zero_is_decided_lazily_by_the_next_event():
    t = started(10)
    t.wait(minutes=9).turns("ada")
    t.wait(minutes=3)                               # expired 1 minute into bo's turn; nobody asked
    assert t.state["phase"] == "regular"            # the stored state can't know yet
    v = t.turns("bo")
    assert v["phase"] == "finishing-round" and v["current_player"] == "cy"
    assert t.state["expired_at"] == "2026-03-01T20:10:00.000000Z"


def test_zero_reached_exactly_at_a_turn_end_belongs_to_that_turn():
    t = started(10)
    t.wait(minutes=4).turns("ada")
    v = t.wait(minutes=6).turns("bo")                # remaining is exactly 0 at bo's turn.end
    assert v["phase"] == "finishing-round" and v["current_player"] == "cy" and v["round"] == 1
    v = t.turns("cy")
    assert v["phase"] == "last-lap" and v["round"] == 2


def test_zero_reached_exactly_at_the_last_seats_turn_end_goes_straight_to_the_last_lap():
    t = started(10)
    t.wait(minutes=2).turns("ada")
    t.wait(minutes=2).turns("bo")
    v = t.wait(minutes=6).turns("cy")
    assert (v["phase"], v["round"], v["current_player"]) == ("last-lap", 2, "ada")


def test_one_millisecond_left_at_the_last_seats_turn_end_is_a_new_regular_round():
    t = started(10)
    t.wait(minutes=2).turns("ada")
    t.wait(minutes=2).turns("bo")
    v = t.wait(seconds=359.999).turns("cy")
    assert (v["phase"], v["round"], v["current_player"]) == ("regular", 2, "ada")
    v = t.wait(seconds=0.001).view()
    assert (v["phase"], v["round"], v["current_player"]) == ("finishing-round", 2, "ada")
    t.turns("ada", "bo")
    v = t.turns("cy")
    assert (v["phase"], v["round"]) == ("last-lap", 3)


def test_zero_during_the_first_seats_turn_finishes_the_whole_round():
    t = started(1, ("ada", "bo"))
    v = t.wait(minutes=5).view()
    assert (v["phase"], v["current_player"], v["clock"]["remaining_seconds"]) == ("finishing-round", "ada", 0)
    assert t.turns("ada")["phase"] == "finishing-round"
    assert t.turns("bo")["phase"] == "last-lap"


def test_a_single_seat_table_walks_every_phase():
    t = started(1, ("solo",))
    t.wait(seconds=61)
    assert t.view()["phase"] == "finishing-round"
    assert t.turns("solo")["phase"] == "last-lap"
    v = t.turns("solo")
    assert (v["phase"], v["final_threshold"], v["current_player"]) == ("final-rounds", 4, "solo")
    assert t.turns("solo", conquered=0)["awaiting_roll"] == "solo"
    v = t.do("final.roll", player="solo", dice=[6, 6])
    assert (v["round"], v["final_threshold"], v["current_player"]) == (4, 5, "solo")


# -- final rounds ------------------------------------------------------------------

def test_fewer_than_two_conquests_owe_a_roll_and_two_are_exempt():
    """"alla fine del proprio turno, ogni giocatore che non ha conquistato almeno 2 Territori nel turno
    stesso è obbligato ad effettuare il Round Finale" """
    t = to_final_rounds(started(30))
    v = t.turns("ada", conquered=2)
    assert v["awaiting_roll"] is None and v["current_player"] == "bo"
    v = t.turns("bo", conquered=1)
    assert v["awaiting_roll"] == "bo" and v["current_player"] == "bo"
    t.refused(RuleError, "type", "turn.end", player="cy", conquered=3)   # bo owes the roll first
    v = t.do("final.roll", player="bo", dice=[3, 2])                   # 5 > 4: the match goes on
    assert v["awaiting_roll"] is None and v["current_player"] == "cy" and not v["ended"]
    v = t.turns("cy", conquered=0)
    assert v["awaiting_roll"] == "cy"


def test_a_sum_equal_to_the_threshold_ends_the_match():
    """"se esce una somma totale di punteggio uguale o minore a 4 la partita è conclusa" """
    t = to_final_rounds(started(30))
    t.turns("ada", conquered=0)
    v = t.wait(seconds=20).do("final.roll", player="ada", dice=[1, 3])
    assert v["ended"] is True and v["phase"] == "ended"
    assert v["ended_by"] == {"reason": "final-roll", "player": "ada"}
    assert v["current_player"] is None and v["awaiting_roll"] is None and v["final_threshold"] == 4
    assert v["clock"]["running"] is False
    frozen = v["clock"]
    assert t.wait(minutes=30).view()["clock"] == frozen
    t.refused(RuleError, "type", "turn.end", player="bo", conquered=0)
    t.refused(RuleError, "type", "clock.resume")


@pytest.mark.parametrize("dice, ends", [([1, 1], True), ([2, 2], True), ([1, 3], True), ([2, 3], False),
                                        ([6, 6], False), ([4, 1], False)])
def test_threshold_four_boundary(dice, ends):
    t = to_final_rounds(started(30))
    t.turns("ada", conquered=1)
    assert t.do("final.roll", player="ada", dice=dice)["ended"] is ends


def test_the_threshold_rises_after_each_turn_of_the_last_seat_up_to_twelve():
    """"Ad Ogni giro l'ultimo giocatore alzerà il punteggio del Round Finale di 1 valore totale... si parte
    da 4 e così via ... 5-6-7-8-9-10-11-12" """
    t = to_final_rounds(started(30))
    seen = []
    for _ in range(12):
        seen.append(t.view()["final_threshold"])
        t.turns("ada", "bo", conquered=2)
        assert t.view()["final_threshold"] == seen[-1]   # only the last seat raises it
        t.turns("cy", conquered=2)
    assert seen == [4, 5, 6, 7, 8, 9, 10, 11, 12, 12, 12, 12]
    assert t.view()["final_threshold"] == 12


def test_the_last_seat_raises_the_threshold_after_its_roll():
    t = to_final_rounds(started(30))
    t.turns("ada", "bo", conquered=3)
    v = t.turns("cy", conquered=0)
    assert v["awaiting_roll"] == "cy" and v["final_threshold"] == 4   # cy rolls against 4, not 5
    t2 = copy.deepcopy(t)
    assert t.do("final.roll", player="cy", dice=[2, 2])["ended"] is True
    v = t2.do("final.roll", player="cy", dice=[3, 2])
    assert (v["final_threshold"], v["current_player"], v["ended"]) == (5, "ada", False)


def test_at_twelve_every_roll_ends_the_match():
    t = to_final_rounds(started(30))
    for _ in range(8):
        t.round_of_turns(conquered=4)
    assert t.view()["final_threshold"] == 12
    t.turns("ada", conquered=0)
    v = t.do("final.roll", player="ada", dice=[6, 6])
    assert v["ended"] and v["ended_by"] == {"reason": "final-roll", "player": "ada"}


def test_conquered_is_required_in_the_final_rounds():
    t = to_final_rounds(started(30))
    t.refused(InputError, "conquered", "turn.end", player="ada")


# -- rolls refused ---------------------------------------------------------------------

def test_roll_nobody_owes_is_refused_in_every_phase():
    t = started(10)
    t.refused(RuleError, "player", "final.roll", player="ada", dice=[1, 1])
    to_final_rounds(t)
    t.refused(RuleError, "player", "final.roll", player="ada", dice=[1, 1])
    t.turns("ada", conquered=3)
    t.refused(RuleError, "player", "final.roll", player="bo", dice=[1, 1])
    t.turns("bo", conquered=0)
    e = t.refused(RuleError, "player", "final.roll", player="ada", dice=[1, 1])   # bo owes it, not ada
    assert "bo owes" in e.message
    t.do("final.roll", player="bo", dice=[6, 5])
    t.refused(RuleError, "player", "final.roll", player="bo", dice=[1, 1])       # not twice


@pytest.mark.parametrize("dice, field", [
    ([0, 3], "dice[0]"), ([3, 7], "dice[1]"), ([-1, 2], "dice[0]"), ([2.0, 3], "dice[0]"), (["3", 3], "dice[0]"),
    ([True, 3], "dice[0]"), ([3], "dice"), ([1, 2, 3], "dice"), ([], "dice"), ("33", "dice"), (None, "dice"),
])
def test_dice_outside_one_to_six_are_malformed(dice, field):
    t = to_final_rounds(started(30))
    t.turns("ada", conquered=0)
    t.refused(InputError, field, "final.roll", player="ada", dice=dice)


def test_unknown_or_missing_players_are_malformed():
    t = started()
    t.refused(InputError, "player", "turn.end", player="zed")
    t.refused(InputError, "player", "turn.end")
    t.refused(InputError, "player", "turn.end", player=3)
    t.refused(InputError, "player", "objective.completed", player="zed")
    t.refused(InputError, "player", "final.roll", player="", dice=[1, 1])


def test_turn_end_by_a_player_whose_turn_it_isnt():
    t = started()
    e = t.refused(RuleError, "player", "turn.end", player="bo")
    assert e.message == "it is ada's turn, not bo's"
    t.turns("ada")
    t.refused(RuleError, "player", "turn.end", player="ada")


# -- pauses ------------------------------------------------------------------------------

def test_only_running_time_counts():
    t = started(10)
    t.wait(minutes=3).do("clock.pause", reason="pizza")
    v = t.wait(minutes=45).view()
    assert v["clock"] == {"limit_seconds": 600, "elapsed_seconds": 180, "remaining_seconds": 420, "running": False}
    assert v["phase"] == "regular"                 # paused time never runs the clock out
    t.do("clock.resume")
    v = t.wait(minutes=6, seconds=59).view()
    assert v["phase"] == "regular" and v["clock"]["remaining_seconds"] == 1
    v = t.wait(seconds=1).view()
    assert v["phase"] == "finishing-round" and v["clock"]["remaining_seconds"] == 0
    assert t.state["phase"] == "regular"
    v = t.do("clock.pause")                        # the pause decides the zero lazily too
    assert t.state["expired_at"] == "2026-03-01T20:55:00.000000Z"
    assert v["phase"] == "finishing-round" and v["clock"]["elapsed_seconds"] == 600


def test_pause_and_resume_refusals_and_play_while_paused():
    t = started()
    t.refused(RuleError, "type", "clock.resume")
    t.do("clock.pause")
    t.refused(RuleError, "type", "clock.pause")
    t.refused(RuleError, "type", "turn.end", player="ada")
    t.do("clock.resume")
    t.turns("ada")
    t.refused(InputError, "reason", "clock.pause", reason=5)


def test_rolls_wait_for_a_resumed_clock():
    t = to_final_rounds(started(30))
    t.turns("ada", conquered=0)
    t.do("clock.pause")
    t.refused(RuleError, "type", "final.roll", player="ada", dice=[1, 1])
    t.do("clock.resume")
    assert t.do("final.roll", player="ada", dice=[1, 1])["ended"]


def test_many_short_pauses_add_up_exactly():
    t = started(1)
    for _ in range(50):
        t.wait(seconds=1.001).do("clock.pause")
        t.wait(minutes=1).do("clock.resume")
    v = t.view()
    assert v["clock"]["elapsed_seconds"] == 50.05 and v["clock"]["remaining_seconds"] == 9.95


# -- objective ------------------------------------------------------------------------------

def _table_in(where):
    t = started(20)
    t.wait(minutes=5)
    if where == "paused":
        t.do("clock.pause")
    elif where == "finishing-round":
        t.wait(minutes=16)
    elif where == "last-lap":
        t.wait(minutes=16).turns("ada", "bo", "cy")
    elif where in ("final-rounds", "owed"):
        to_final_rounds(t)
        if where == "owed":
            t.turns("ada", conquered=0)
    return t


@pytest.mark.parametrize("where", ["regular", "paused", "finishing-round", "last-lap", "final-rounds", "owed"])
def test_an_objective_ends_the_match_at_once(where):
    """"In caso di completamento dell'obiettivo ... la partita è conclusa." """
    t = _table_in(where)
    phase = {"paused": "regular", "owed": "final-rounds"}.get(where, where)
    assert t.view()["phase"] == phase
    assert t.view()["clock"]["running"] is (where != "paused")
    elapsed = t.view()["clock"]["elapsed_seconds"]
    v = t.wait(seconds=2).do("objective.completed", player="bo")
    assert v["ended"] and v["phase"] == "ended" and v["ended_by"] == {"reason": "objective", "player": "bo"}
    assert v["awaiting_roll"] is None and v["current_player"] is None and v["clock"]["running"] is False
    assert v["clock"]["elapsed_seconds"] == elapsed + (0 if where == "paused" else 2)
    assert clock.is_ended(t.state)
    t.refused(RuleError, "type", "objective.completed", player="ada")


# -- time order --------------------------------------------------------------------------------

def test_events_out_of_time_order_are_refused_and_equal_instants_are_not():
    t = started()
    t.wait(minutes=5).turns("ada")
    t.wait(seconds=-0.001)
    e = t.refused(RuleError, "at", "turn.end", player="bo")
    assert "out of time order" in e.message
    t.wait(seconds=0.001)
    t.turns("bo")          # the same instant as the previous event is fine
    t.turns("cy")


def test_timestamps_with_offsets_and_microseconds():
    s = clock.initial_state(["a", "b"], {})
    s = clock.apply(s, {"type": "clock.start", "data": {"limit_minutes": 1}, "at": "2026-03-01T21:00:00.000001+01:00"})
    s = clock.apply(s, {"type": "clock.pause", "data": {}, "at": "2026-03-01T20:00:30.500002Z"})
    assert s["elapsed_us"] == 30_500_001
    assert clock.view(s, None)["clock"]["elapsed_seconds"] == 30.5
    with pytest.raises(InputError) as e:
        clock.apply(s, {"type": "clock.resume", "data": {}, "at": "yesterday"})
    assert e.value.field == "at"


def test_view_before_the_last_event_shows_the_last_event():
    t = started(10)
    t.wait(minutes=4).turns("ada")
    assert clock.view(t.state, T0)["clock"]["elapsed_seconds"] == 240
    assert clock.view(t.state, None)["clock"]["elapsed_seconds"] == 240


def test_initial_state_needs_players():
    with pytest.raises(InputError) as e:
        clock.initial_state([], {})
    assert e.value.field == "players"
    with pytest.raises(InputError):
        clock.apply(clock.initial_state(["a"], {}), {"type": "clock.stop", "data": {}, "at": T0})


# -- the schema and the reducer agree ------------------------------------------------------------

def _schema_examples(kind):
    folder = schemas_dir() / "examples" / "clock.events"
    folder = folder / "invalid" if kind == "invalid" else folder
    return sorted(folder.glob("*.json"))


def _state_for(event_type):
    t = Table(("Nicola", "Susanna", "Tommaso"))
    if event_type in ("clock.start", "clock.arm"):
        return t
    t.do("clock.start", limit_minutes=10)
    if event_type == "clock.resume":
        t.do("clock.pause")
    if event_type == "final.roll":
        to_final_rounds(t)
        t.turns("Nicola", conquered=0)
    return t


@pytest.mark.parametrize("path", _schema_examples("valid"), ids=lambda p: p.name)
def test_every_valid_schema_example_is_accepted_by_the_fold(path):
    doc = json.loads(path.read_text())
    t = _state_for(doc["type"])
    t.do(doc["type"], **doc.get("data", {}))


@pytest.mark.parametrize("path", _schema_examples("invalid"), ids=lambda p: p.name)
def test_every_invalid_schema_example_is_refused_by_the_fold(path):
    doc = json.loads(path.read_text())
    t = _state_for(doc["type"])
    with pytest.raises(InputError):
        clock.apply(t.state, t.event(doc["type"], **doc.get("data", {})))


# -- through the match fold and the service --------------------------------------------------------

def ev(seq, at, type, **data):
    return {"seq": seq, "at": at, "type": type, "data": data}


def test_fold_merges_exactly_the_clock_view(fake_game):
    f = fold(fake_game, ["ada", "bo"], [ev(1, T0, "clock.start", limit_minutes=1),
                                        ev(2, "2026-03-01T20:00:10Z", "point", player="bo")], {"clock": True})
    v = f.view("2026-03-01T20:00:40Z")
    assert set(v) == {"game", "players", "seq", "state", *VIEW_KEYS}
    assert v["clock"] == {"limit_seconds": 60, "elapsed_seconds": 40, "remaining_seconds": 20, "running": True}
    assert fold(fake_game, ["ada", "bo"], []).view().get("phase") is None   # no clock unless asked


def test_undo_takes_back_a_final_roll(fake_game):
    events = [ev(1, T0, "clock.start", limit_minutes=1),
              ev(2, "2026-03-01T20:02:00Z", "turn.end", player="ada"),     # finishing round
              ev(3, "2026-03-01T20:02:10Z", "turn.end", player="bo"),      # last lap
              ev(4, "2026-03-01T20:02:20Z", "turn.end", player="ada"),
              ev(5, "2026-03-01T20:02:30Z", "turn.end", player="bo"),      # final rounds
              ev(6, "2026-03-01T20:02:40Z", "turn.end", player="ada", conquered=1),
              ev(7, "2026-03-01T20:02:50Z", "final.roll", player="ada", dice=[1, 2])]
    f = fold(fake_game, ["ada", "bo"], events, {"clock": True})
    assert f.ended() and f.view()["ended_by"] == {"reason": "final-roll", "player": "ada"}
    f.apply(ev(8, "2026-03-01T20:03:00Z", "undo"))
    v = f.view("2026-03-01T20:03:00Z")
    assert not f.ended() and v["awaiting_roll"] == "ada" and v["clock"]["running"] is True


def test_service_marks_the_match_ended_and_refuses_illegal_events(store, fake_game, clock):
    svc = MatchService(store)
    m = svc.create(fake_game, ["ada", "bo"], {"clock": True})
    svc.append(m["id"], "clock.start", {"limit_minutes": 90})
    clock.advance(60)
    with pytest.raises(RuleError) as e:
        svc.append(m["id"], "turn.end", {"player": "bo"})
    assert e.value.status == 409 and e.value.field == "player"
    with pytest.raises(RuleError):
        svc.append(m["id"], "turn.end", {"player": "ada"}, at="2026-03-01T19:00:00Z")   # out of time order
    assert len(store.events(m["id"])) == 1
    svc.append(m["id"], "objective.completed", {"player": "bo"})
    assert store.get_match(m["id"])["status"] == "ended"
    assert svc.state(m["id"])["clock"]["elapsed_seconds"] == 60


def test_skipped_seats_are_passed_over_and_the_round_ends_at_the_last_seat_still_in():
    """A seat the game puts out (an eliminated conquest player) is skipped from then on; with the last seat
    out, the round wraps after the seat before it (docs/rulings.md, "Conquest: elimination")."""
    t = Table(("ada", "bo", "cy"))
    t.do("clock.start", limit_minutes=1)
    t.state = clock.skip_seats(t.state, ["cy"])
    assert clock.skip_seats(t.state, ["cy"]) is t.state  # nothing changes: the same state
    v = t.turns("ada", "bo")
    assert (v["current_player"], v["round"]) == ("ada", 2)
    t.refused(RuleError, "player", "turn.end", player="cy")
    # out of time: the finishing round ends at bo, the last lap too, then the final rounds begin with ada
    t.wait(seconds=61)
    v = t.turns("ada", "bo")
    assert v["phase"] == "last-lap" and v["current_player"] == "ada"
    v = t.turns("ada", "bo")
    assert v["phase"] == "final-rounds" and v["final_threshold"] == 4
    # the seat whose turn it is goes out (a correction): the next seat still in plays
    t.state = clock.skip_seats(t.state, ["ada", "cy"])
    assert t.view()["current_player"] == "bo"
    # a player back in (the correction undone) plays again in turn
    t.state = clock.skip_seats(t.state, [])
    v = t.turns("bo", conquered=2)
    assert v["current_player"] == "cy"


@pytest.mark.parametrize("data", [[1], "x", 3])
def test_data_that_is_not_an_object_is_refused_naming_it(data):
    """Every refusal names a field (it named none here); see tests/games/test_conformance.py."""
    t = Table()
    with pytest.raises(InputError) as exc:
        clock.apply(t.state, {"type": "clock.start", "data": data, "at": "2026-03-01T20:00:00Z"})
    assert exc.value.field == "data"


def test_an_armed_clock_waits_with_its_minutes_and_a_start_keeps_them():
    """``clock.arm`` (a tournament round started at a table still setting up): the clock waits, its minutes
    set; ``clock.start`` without minutes keeps them (an undone start does not fall back to 120); a second
    arm, or an arm once started, is refused (docs/rulings.md#the-clock-of-a-tournament-round)."""
    t = Table(("Nicola", "Susanna", "Tommaso"))
    t.do("clock.arm", limit_minutes=90)
    v = clock.view(t.state, T0)
    assert v["phase"] == "setup" and v["armed"] is True and v["clock"]["running"] is False
    assert v["clock"]["limit_seconds"] == 90 * 60 and v["current_player"] is None
    with pytest.raises(RuleError):
        t.do("clock.arm", limit_minutes=60)
    with pytest.raises(RuleError):
        t.do("turn.end", player="Nicola")
    t.do("clock.start")
    v = clock.view(t.state, None)
    assert v["phase"] == "regular" and "armed" not in v and v["clock"]["limit_seconds"] == 90 * 60
    with pytest.raises(RuleError):
        t.do("clock.arm", limit_minutes=60)
    plain = Table(("Nicola", "Susanna"))
    plain.do("clock.start")
    assert clock.view(plain.state, None)["clock"]["limit_seconds"] == clock.DEFAULT_LIMIT_MINUTES * 60
