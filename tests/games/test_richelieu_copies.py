"""Richelieu's ``apply`` copies only what an event changes (a track correction: the top level, the players'
map and that one player; a turn's end: the top level and a new turn): the state it was given is never
changed, and no later event reaches back into an earlier state through a part they share (the server
keeps earlier folds, an undo folds again from them)."""

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.base.errors import InputError, RuleError
from companion.games import richelieu as R

PLAYERS = ["Ada", "Bo", "Cy"]
TRACKS = ["prestige", "income", "military", "money", "jewels"]

events = st.one_of(
    st.builds(lambda who, track, delta: {"type": "track.adjust", "data": {"player": who, "track": track,
                                                                         "delta": delta}},
              st.sampled_from(PLAYERS), st.sampled_from(TRACKS), st.integers(-3, 4)),
    st.builds(lambda who: {"type": "turn.end", "data": {"player": who}}, st.sampled_from(PLAYERS)),
    st.just({"type": "turn.end", "data": {}}),
    st.builds(lambda who: {"type": "action", "data": {"player": who, "action": "take_income"}},
              st.sampled_from(PLAYERS)),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(events, min_size=1, max_size=25))
def test_no_state_is_changed_by_a_later_event(seq):
    state = R.initial_state(PLAYERS, {})
    kept = [(state, copy.deepcopy(state))]
    for event in seq:
        before = copy.deepcopy(state)
        try:
            new = R.apply(state, event)
        except (InputError, RuleError):
            assert state == before  # a refused event leaves the state as it was
            continue
        assert state == before
        # the same result as a fold of a private copy (what a deep copy of the whole state gave)
        assert new == R.apply(copy.deepcopy(before), copy.deepcopy(event))
        # and the new state may be changed by whoever holds it without touching the one it came from
        kept.append((new, copy.deepcopy(new)))
        state = new
    for s, snapshot in kept:
        assert s == snapshot


def test_a_track_correction_copies_one_player_only():
    state = R.initial_state(PLAYERS, {})
    new = R.apply(state, {"type": "track.adjust", "data": {"player": "Bo", "track": "money", "delta": 2}})
    assert new["players"]["Bo"]["money"] == state["players"]["Bo"]["money"] + 2
    assert new["players"]["Bo"] is not state["players"]["Bo"] and new["players"] is not state["players"]
    assert new["players"]["Ada"] is state["players"]["Ada"]  # shared: nothing of Ada's changed
    assert new["resolutions"] is state["resolutions"]
