"""Web of Power played with the match clock (``options.clock``), docs/rulings.md, "Web of Power: the
clock": a turn the game closes without a ``turn.end`` (the deck runs out, the next player places) moves the
clock's turn on too; the scoring step holds the clock (its time stops, its events are refused: no
clock-only final roll can end a match whose scoring waits for its missing parts)."""

from datetime import datetime, timedelta, timezone

import pytest

from companion.base.errors import RuleError
from companion.games import contract
from companion.games import web_of_power as wop
from companion.core.match import Fold
from companion.services.seasons import results_from_fold

P3 = ["Anna", "Bruno", "Carla"]
T0 = datetime(2026, 3, 1, 20, 0, tzinfo=timezone.utc)


class Match:
    """A Web of Power match with the clock on, folded event by event; ``at`` in seconds after T0."""

    def __init__(self, limit_minutes=120):
        self.fold = Fold("web-of-power", P3, {"clock": True})
        self.seq = 0
        self.t = 0
        self("clock.start", limit_minutes=limit_minutes)

    def event(self, t, data, at=None):
        self.t = self.t + 1 if at is None else at
        return {"seq": self.seq + 1, "type": t, "data": data,
                "at": (T0 + timedelta(seconds=self.t)).isoformat().replace("+00:00", "Z")}

    def __call__(self, t, at=None, **data):
        self.fold.apply(self.event(t, data, at))
        self.seq += 1
        return self

    def refused(self, t, at=None, **data):
        game, clock = self.fold.game_state, self.fold.clock_state
        with pytest.raises(RuleError) as err:
            self.fold.apply(self.event(t, data, at))
        assert self.fold.game_state is game and self.fold.clock_state is clock
        return err.value

    def place(self, player, n=1, country="Franken"):
        return self("place", player=player, piece="monastery", country=country, count=n)

    @property
    def view(self):
        return self.fold.view()


def test_the_deck_running_out_during_a_turn_ends_it_on_the_clock_too():
    m = Match().place("Anna")
    assert m.view["current_player"] == "Anna"
    m("deck.out")  # Anna drew the last card: the game closes her turn
    assert m.fold.game_state["turn"] is None and m.fold.game_state["next_player"] == "Bruno"
    assert m.view["current_player"] == "Bruno"
    assert m.refused("turn.end", player="Anna").field == "player"
    m("turn.end", player="Bruno")
    assert m.view["current_player"] == "Carla"
    # between turns the deck running out changes no turn
    m = Match().place("Anna")("turn.end", player="Anna")("deck.out")
    assert m.view["current_player"] == "Bruno" and m.fold.game_state["next_player"] == "Bruno"


def test_the_next_player_placing_ends_the_open_turn_on_the_clock_too():
    m = Match().place("Anna").place("Bruno")  # Bruno's placement closes Anna's turn in the game
    assert m.fold.game_state["turn"]["player"] == "Bruno"
    assert m.view["current_player"] == "Bruno"
    m("turn.end", player="Bruno")
    assert m.view["current_player"] == "Carla" and m.fold.game_state["next_player"] == "Carla"


def test_a_turn_closed_by_the_game_while_the_clock_is_paused_is_refused_like_turn_end():
    m = Match().place("Anna")("clock.pause")
    err = m.refused("deck.out")
    assert err.field == "type" and "paused" in err.message
    m("clock.resume")("deck.out")
    assert m.view["current_player"] == "Bruno"


def _at_the_scoring_step_owing_a_final_roll():
    """Anna has 4 monasteries (the template board has no roads: her chains are missing); the clock runs out
    (1 minute), the rounds are played out, and in the first final round Anna owes a roll when the deck
    runs out the second time."""
    m = Match(limit_minutes=1)
    m.place("Anna", 2).place("Anna", 2, "Lothringen")("turn.end", player="Anna")("deck.out")
    m("turn.end", at=120, player="Bruno")  # the clock reached zero during Bruno's turn
    assert m.view["phase"] == "finishing-round"
    for p in ["Carla", "Anna", "Bruno", "Carla"]:
        m("turn.end", player=p)
    assert m.view["phase"] == "final-rounds"
    m("turn.end", player="Anna", conquered=0)
    assert m.view["awaiting_roll"] == "Anna"
    m("deck.out")
    assert m.fold.game_state["scoring_step"]["missing"] == {"alliances": [], "chains": ["Anna"]}
    return m


def test_the_scoring_step_holds_the_clock_no_final_roll_ends_the_match():
    m = _at_the_scoring_step_owing_a_final_roll()
    held = m.view["clock"]
    assert held["running"] is False
    assert m.fold.view((T0 + timedelta(hours=3)).isoformat())["clock"] == held  # its time stopped
    for t, data in [("final.roll", {"player": "Anna", "dice": [1, 1]}), ("clock.pause", {}),
                    ("clock.resume", {}), ("objective.completed", {"player": "Anna"}),
                    ("turn.end", {"player": "Anna", "conquered": 0})]:
        err = m.refused(t, **data)
        assert err.field == "type" and "missing parts" in err.message, t
    assert not m.fold.ended() and wop.final_ranking(m.fold.game_state) is None
    # the missing part entered: the game ends, and the clock with it (reason "game"), its time as held
    m("scoring.hand", chains={"Anna": [4]})
    assert m.fold.ended() and m.view["ended_by"] == {"reason": "game", "player": None}
    assert m.view["clock"]["elapsed_seconds"] == held["elapsed_seconds"]
    ranking = results_from_fold(m.fold)
    assert contract.check_ranking(ranking, P3) == [] and ranking[0]["player"] == "Anna"
    # undo re-opens the scoring step, the clock held again (not ended)
    m("undo")
    assert not m.fold.ended() and m.fold.game_state["scoring_step"] is not None
    assert m.view["clock"] == held and m.view["ended"] is False
    assert m.refused("final.roll", player="Anna", dice=[1, 1]).field == "type"


def test_a_game_end_at_the_scoring_step_with_a_paused_clock_stays_held():
    m = Match().place("Anna", 2).place("Anna", 2, "Lothringen")("turn.end", player="Anna")("clock.pause")
    m("game.end")
    assert m.fold.game_state["scoring_step"] is not None and m.view["clock"]["running"] is False
    assert m.refused("clock.resume").field == "type"
    m("chains", player="Anna", lengths=[])
    assert m.fold.ended() and m.view["ended_by"]["reason"] == "game"


def test_no_placement_while_a_final_roll_is_owed():
    """docs/rulings.md#web-of-power-the-clock: the roll comes before the next turn."""
    m = Match(limit_minutes=1)
    m.place("Anna", 2)("turn.end", player="Anna")
    m("turn.end", at=120, player="Bruno")
    for p in ["Carla", "Anna", "Bruno", "Carla"]:
        m("turn.end", player=p)
    m("turn.end", player="Anna", conquered=0)
    assert m.view["awaiting_roll"] == "Anna" and m.fold.game_state["next_player"] == "Bruno"
    for who in ("Bruno", "Anna", "Carla"):
        err = m.refused("place", player=who, piece="monastery", country="Franken", count=1)
        assert err.field == "type" and "Anna owes a final roll before the next turn" in err.message
    err = m.refused("place", player="Bruno", piece="councillor", country="Franken", count=1)
    assert err.field == "type"
    assert m.refused("turn.end", player="Bruno").field == "type"
    # chains counted by hand are not a turn: taken meanwhile
    m("chains", player="Carla", lengths=[])
    # the roll (over the threshold: the match goes on), then Bruno places
    m("final.roll", player="Anna", dice=[6, 6])
    assert m.view["awaiting_roll"] is None and m.view["current_player"] == "Bruno"
    m.place("Bruno")
    assert m.fold.game_state["turn"]["player"] == "Bruno"


@pytest.mark.parametrize("first", P3)
def test_the_clocks_turn_is_the_games_from_the_first_player(first):
    """docs/rulings.md#web-of-power-the-clock: the clock starts with options.first_player and follows the
    game's turns, through placements, turn ends and a placement closing the turn before, round after round;
    its rounds end after the seat before the first player."""
    f = Fold("web-of-power", P3, {"clock": True, "first_player": first})
    seq = [0]

    def ev(t, **data):
        seq[0] += 1
        f.apply({"seq": seq[0], "type": t, "data": data,
                 "at": (T0 + timedelta(seconds=seq[0])).isoformat().replace("+00:00", "Z")})

    def games_turn():
        turn = f.game_state["turn"]
        return turn["player"] if turn is not None else f.game_state["next_player"]

    ev("clock.start")
    order = P3[P3.index(first):] + P3[:P3.index(first)]
    seen, rounds = [], []
    for i in range(3 * len(P3)):
        assert f.view()["current_player"] == games_turn(), i
        if f.game_state["turn"] is not None:  # the turn left open before: this placement closes it on both
            who = P3[(P3.index(games_turn()) + 1) % len(P3)]
        else:
            who = games_turn()
        ev("place", player=who, piece="councillor", country=wop.wop_board.default_board()["countries"][i % 3])
        assert f.view()["current_player"] == games_turn() == who, i
        seen.append(who)
        rounds.append(f.view()["round"])
        if i % 3 != 1:
            ev("turn.end", player=who)  # the game's and the clock's turn end together
    assert seen == order * 3
    assert rounds == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert not any(w["kind"] == "out_of_turn" for w in f.game_state["warnings"])


def _owing_a_roll_in_the_final_rounds(anna_monasteries=2):
    m = Match(limit_minutes=1)
    m.place("Anna", 2)
    if anna_monasteries > 2:
        m.place("Anna", anna_monasteries - 2, "Lothringen")
    m("turn.end", player="Anna")("deck.out")  # the intermediate scoring
    m("turn.end", at=120, player="Bruno")
    for p in ["Carla", "Anna", "Bruno", "Carla"]:
        m("turn.end", player=p)
    m("turn.end", player="Anna", conquered=0)
    assert m.view["awaiting_roll"] == "Anna"
    return m


def test_a_final_roll_that_ends_the_match_does_the_final_scoring():
    """docs/rulings.md#web-of-power-the-clock: the match the final roll ends owes its final scoring; done then,
    complete, the match ends with its winner and the season gets the ranking."""
    m = _owing_a_roll_in_the_final_rounds()
    m("final.roll", player="Anna", dice=[1, 1])
    assert m.view["ended_by"] == {"reason": "final-roll", "player": "Anna"}
    s = m.fold.game_state
    assert s["ended"] and s["scorings"]["final"]["complete"] and s["scoring_step"] is None
    assert m.fold.ended()
    ranking = results_from_fold(m.fold)
    assert contract.check_ranking(ranking, P3) == [] and ranking[0]["player"] == "Anna"
    assert m.refused("place", player="Bruno", piece="monastery", country="Franken", count=1).field == "type"
    # undo takes the roll and the scoring back
    m("undo")
    assert not m.fold.ended() and m.fold.game_state["scorings"]["final"] is None
    assert m.view["awaiting_roll"] == "Anna"


def test_a_final_roll_that_ends_the_match_with_parts_missing_waits_for_them():
    """Anna's 4 monasteries on the template board: her chains are missing; the match waits at the scoring
    step (not over, no season result), takes the part, then ends with the clock's reason."""
    m = _owing_a_roll_in_the_final_rounds(anna_monasteries=4)
    m("final.roll", player="Anna", dice=[1, 2])
    s = m.fold.game_state
    assert s["scoring_step"]["missing"] == {"alliances": [], "chains": ["Anna"]}
    assert not m.fold.ended() and results_from_fold(m.fold) is None
    for t, data in [("place", {"player": "Bruno", "piece": "monastery", "country": "Franken", "count": 1}),
                    ("turn.end", {"player": "Bruno", "conquered": 0}), ("final.roll", {"player": "Anna", "dice": [1, 1]})]:
        assert m.refused(t, **data).field == "type", t
    m("scoring.hand", chains={"Anna": [4]})
    assert m.fold.ended() and m.view["ended_by"] == {"reason": "final-roll", "player": "Anna"}
    ranking = results_from_fold(m.fold)
    assert contract.check_ranking(ranking, P3) == [] and ranking[0]["player"] == "Anna"
