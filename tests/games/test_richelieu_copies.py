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


# -- the summary of shared parts: a player's row of the standings, its marker and the turn kept from the
# state before when nothing they are made of changed ------------------------------------------------------
def summary_afresh(state: dict) -> dict:
    """The summary as it was made before it kept parts (every part made again for each state)."""
    standings = state["final"] or R.final_scores(R._final_rows(state))
    out = {
        "turn": {"player": state["turn"]["player"], "allowed": state["turn"]["allowed"],
                 "done": list(state["turn"]["done"]), "left": state["turn"]["allowed"] - len(state["turn"]["done"])},
        "cardinal": state["cardinal"],
        "city_jewels": state["city_jewels"],
        "intrigues_resolved": state["resolved"],
        "intrigues_left": R.RESOLUTIONS_IN_GAME - state["resolved"],
        "markers": {n: {"track": R.track_position(p["prestige"]), "tiles_30": p["prestige"] // R.TRACK_SPACES,
                        "behind_cardinal": R.track_position(p["prestige"]) < state["cardinal"]}
                    for n, p in state["players"].items()},
        "standings": standings,
        "final": state["ended"],
    }
    if not state["ended"]:
        p = state["players"][state["turn"]["player"]]
        out["turn"]["next"] = R._available(p, state["turn"], state["cardinal"], state["city_jewels"])
    return out


def _same_text(a, b) -> bool:
    import json

    return json.dumps(a) == json.dumps(b)  # (the key order too: the answers' bytes)


@settings(max_examples=60, deadline=None)
@given(st.lists(events, min_size=1, max_size=25))
def test_the_summary_of_shared_parts_is_the_summary_made_afresh(seq):
    state = R.initial_state(PLAYERS, {})
    for event in seq:
        try:
            state = R.apply(state, event)
        except (InputError, RuleError):
            pass
        assert _same_text(R.summary(state), summary_afresh(state))


def test_the_same_over_random_legal_matches_with_undos_and_their_ends():
    """Folded event by event as the server folds them (undos fold the log again: new objects for every
    player), every state's summary, then every state's again in another order (the parts kept are of other
    states then), is the summary made afresh."""
    import json

    from companion.core.match import Fold
    from tests.games.conformance import Playthrough

    states = []
    for seed in range(3):
        p = Playthrough("richelieu", seed, undo_rate=0.15, fuzz_rate=0, checks=False).run(300)
        assert p.fold.ended()
        f = Fold("richelieu", p.players, p.options)
        for e in p.events:
            f.apply(e)
            states.append(f.game_state)
            assert _same_text(R.summary(f.game_state), summary_afresh(f.game_state))
    texts = [json.dumps(R.summary(s)) for s in states]  # (made once more: each from the kept parts)
    for s, text in zip(reversed(states), reversed(texts)):
        assert json.dumps(R.summary(s)) == text == json.dumps(summary_afresh(s))


def test_a_money_correction_keeps_the_other_players_rows_and_markers():
    state = R.initial_state(PLAYERS, {})
    before = R.summary(state)
    new = R.apply(state, {"type": "track.adjust", "data": {"player": "Cy", "track": "money", "delta": 1}})
    after = R.summary(new)
    rows = {r["player"]: r for r in after["standings"]["players"]}
    old = {r["player"]: r for r in before["standings"]["players"]}
    assert rows["Cy"]["money"] == old["Cy"]["money"] + 1
    assert rows["Bo"] is old["Bo"] or rows["Bo"]["place"] != old["Bo"]["place"]  # (its place may move)
    assert all(after["markers"][n] is before["markers"][n] for n in PLAYERS)  # no prestige changed
    assert after["turn"] is before["turn"]  # Ada's turn: Cy's money changes none of her costs
    assert _same_text(after, summary_afresh(new)) and _same_text(before, summary_afresh(state))
