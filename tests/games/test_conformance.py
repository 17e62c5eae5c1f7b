"""One conformance test over every registered game (OpenSpiel's ``random_sim_test`` is the model):
random legal playthroughs from seeded RNGs (tests/games/conformance.py) check at every step that apply
never mutates its input, the state survives a JSON round trip, undo gives back the earlier state, and
every refusal is a project error naming a field; at the end, that ``final_ranking`` has the one shape
and that the fold in this process, in ``companion match state`` (a real process) and in a fresh
process agree. ``COMPANION_SOAK=1`` (``make soak``) plays many more seeds."""

import copy
import json
import os
import subprocess
import sys

import pytest

from companion.base.errors import InputError
from companion.games import contract, game_ids, registry
from companion.core.match import Fold, check_export
from companion.services.seasons import results_from_fold
from companion.services.tournaments import game_points
from tests.games.conformance import Playthrough

SOAK = bool(os.environ.get("COMPANION_SOAK"))
# few seeds and short matches for `make test`: every game still reaches its end (the slower engines, one seed);
# the conquest seeds between them reach every step of the turn, an elimination and a final roll (checked below)
SEEDS = {"web-of-power": [0, 1], "richelieu": [0], "rome-is-burning": [0], "conquest-italy": [0, 4]}
# games whose turn.end the clock shares, played once more with options.clock against their USES_CLOCK (the
# conquest game without its clock keeps the turn itself)
CLOCKED = {"web-of-power": [2], "richelieu": [2], "conquest-italy": [2]}
MAX_EVENTS = 260


def cases(seeds):
    return [(g, s) for g in game_ids() for s in seeds.get(g, [])]


@pytest.fixture(scope="module")
def played():
    """Every game played once per seed (shared by the tests below); seeds of CLOCKED with the clock switched
    the other way."""
    out = {(g, s): Playthrough(g, s).run(MAX_EVENTS) for g, s in cases(SEEDS)}
    out.update({(g, s): Playthrough(g, s, clock=not registry()[g].USES_CLOCK).run(MAX_EVENTS)
                for g, s in cases(CLOCKED)})
    return out


def test_every_registered_game_has_a_playthrough():
    assert sorted({g for g, _ in cases(SEEDS)}) == sorted(registry())


@pytest.mark.parametrize("game, seed", cases(SEEDS) + cases(CLOCKED))
def test_a_random_legal_match_keeps_the_contract_to_its_end(played, game, seed):
    p = played[(game, seed)]
    assert p.fold.ended(), f"{game} did not end in {MAX_EVENTS} events"
    assert p.undone > 0 and p.fuzzed > 0  # the undo and odd-input checks ran
    assert p.fold.clock_on == (p.module.USES_CLOCK != ((game, seed) in cases(CLOCKED)))
    ranking = p.module.final_ranking(p.fold.game_state)
    assert contract.check_ranking(ranking, p.players) == []
    assert results_from_fold(p.fold) == ranking
    # every game gives each player a number at the end (a tournament's game points, a play log's score)
    points = p.module.final_points(p.fold.game_state)
    assert sorted(points) == sorted(p.players)
    assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in points.values())
    assert {name: game_points(p.fold, name) for name in p.players} == points
    # the export is valid, and check_export (schema, seqs, every event legal) folds the same
    again = check_export(copy.deepcopy(p.export()))
    assert again.game_state == p.fold.game_state and again.clock_state == p.fold.clock_state


def test_no_event_changes_an_earlier_state_or_its_summary(played):
    """The reducers copy only what an event changes and share the rest with the state before (which every
    fold, view and page holding it keeps): folded again event by event, every state and summary of the
    match, kept as they were made, still equal their JSON text of then once the match has ended (a later
    event that changed a shared part in place would show here)."""
    for (g, s), p in played.items():
        f = Fold(g, p.players, p.options)
        kept = []
        for e in p.events:
            f.apply(copy.deepcopy(e))
            summary = p.module.summary(f.game_state)
            kept.append((e["seq"], f.game_state, summary, json.dumps(f.game_state), json.dumps(summary)))
        assert f.game_state == p.fold.game_state, f"{g}/{s}"
        for seq, state, summary, state_text, summary_text in kept:
            assert json.dumps(state) == state_text, f"{g}/{s}: the state after seq {seq} changed later"
            assert json.dumps(summary) == summary_text, f"{g}/{s}: the summary after seq {seq} changed later"


def test_the_playthroughs_reach_what_the_rules_ask_of_a_whole_match(played):
    """Not a corner of the game: every Web of Power match reaches the scoring step (docs/rulings.md, "Web of
    Power: incomplete scoring") and ends once the missing parts are entered by hand; the conquest matches
    (docs/rulings.md, "Conquest: the turn") between them trade cards, move, take the turn's card both ways
    (card.draw, and in turn.end), see the organiser's corrections, a player eliminated and a final roll."""
    for (g, s), p in played.items():
        if g == "web-of-power":
            types = {e["type"] for e in p.events}
            assert types & {"scoring.hand", "chains"}, f"{g}/{s}: no part entered by hand"
            assert p.fold.game_state["scorings"]["final"]["complete"]
    conquest = [p for (g, _), p in played.items() if g == "conquest-italy"]
    events = [e for p in conquest for e in p.events]
    reached = {
        "a trade": any(e["type"] == "reinforce" and e["data"].get("trade") for e in events),
        "a move": any(e["type"] == "move" for e in events),
        "card.draw": any(e["type"] == "card.draw" for e in events),
        "a card in turn.end": any(e["type"] == "turn.end" and "card" in e["data"] for e in events),
        "a correction": any(e["type"] == "territory.set" for e in events),
        "an elimination": any(p.fold.game_state["eliminated"] for p in conquest),
        "a final roll": any(e["type"] == "final.roll" for e in events),
    }
    assert [k for k, v in reached.items() if not v] == []


def test_the_conquest_game_without_its_clock_ends_for_every_seed():
    """Without the clock only the objective (or one player holding every city) ends a conquest match: the
    proposer's players declare a completed objective at once, as the rules have it (it wins at once), and
    attack toward it; with no end-game push (``until_ended=False``) every seed ends, in a few hundred events.
    Played without the contract's checks (the seeds above keep them): only whether the match ends."""
    long = []
    for seed in range(51):
        p = Playthrough("conquest-italy", seed, clock=False, undo_rate=0, fuzz_rate=0, checks=False)
        p.run(600, until_ended=False)
        if not p.fold.ended():
            long.append(seed)
        else:
            assert p.fold.game_state["ended_by"] or p.fold.final_ranking()
            assert contract.check_ranking(p.fold.final_ranking(), p.players) == []
    assert long == []


def _views(played):
    return {f"{g}/{s}": json.loads(json.dumps(p.fold.view(p.last_at))) for (g, s), p in played.items()}


def test_the_cli_and_a_fresh_process_fold_the_same(played, tmp_path, run_cli):
    """``companion match state FILE --at T`` (one real process per game, each with its own hash seed) and
    one fresh interpreter folding every export agree with the fold in this process."""
    files = {}
    for (g, s), p in played.items():
        path = tmp_path / f"{g}-{s}.json"
        path.write_text(json.dumps(p.export()))
        files[f"{g}/{s}"] = (str(path), p.last_at)
    expected = _views(played)
    for n, key in enumerate(k for k in files if k.endswith("/0")):
        path, at = files[key]
        code, out, err = run_cli("match", "state", path, "--at", at, env={"PYTHONHASHSEED": str(101 + n)})
        assert code == 0, err
        assert json.loads(out) == expected[key], key
    script = ("import json, sys\n"
              "from companion.core.match import fold_export\n"
              "files = json.load(sys.stdin)\n"
              "out = {}\n"
              "for key, (path, at) in files.items():\n"
              "    doc = json.load(open(path))\n"
              "    out[key] = fold_export(doc).view(at)\n"
              "print(json.dumps(out))\n")
    proc = subprocess.run([sys.executable, "-c", script], input=json.dumps(files), capture_output=True, text=True,
                          env=dict(os.environ, PYTHONHASHSEED="7"), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == expected


# -- the checks can fail: a game that breaks the contract is caught --------------------------------

def _broken(monkeypatch, breakage):
    from companion.games import rome_is_burning as rome

    real = rome.apply

    def apply(state, event):
        return breakage(real, state, event)

    monkeypatch.setattr(rome, "apply", apply)


def test_a_reducer_that_mutates_its_input_is_caught(monkeypatch):
    def mutate(real, state, event):
        new = real(state, event)
        state["totals"] = {p: 1 for p in state["totals"]}
        return new

    _broken(monkeypatch, mutate)
    with pytest.raises(AssertionError, match="mutated"):
        Playthrough("rome-is-burning", 0, fuzz_rate=0).run(5)


def test_a_refusal_naming_no_field_is_caught(monkeypatch):
    def refuse(real, state, event):
        raise InputError("no", None)

    _broken(monkeypatch, refuse)
    with pytest.raises(AssertionError, match="without naming a field"):
        Playthrough("rome-is-burning", 0, fuzz_rate=0).run(5)


def test_a_crash_on_odd_input_is_caught(monkeypatch):
    def crash(real, state, event):
        if set(event["data"]) - {"spaces", "first", "player", "die", "direction", "from", "card", "emperor",
                                 "emperor_choice"}:
            raise KeyError("extra")
        return real(state, event)

    _broken(monkeypatch, crash)
    with pytest.raises(KeyError):
        Playthrough("rome-is-burning", 3, fuzz_rate=1).run(40)


def test_an_undo_that_does_not_give_back_the_state_is_caught(monkeypatch):
    from companion.core import match as matches

    real = matches.Fold.apply

    def apply(self, event):
        real(self, event)
        if event["type"] == "undo":
            self.game_state = {**self.game_state, "turn": self.game_state["turn"] + 1}

    monkeypatch.setattr(matches.Fold, "apply", apply)
    with pytest.raises(AssertionError, match="undo of"):
        Playthrough("rome-is-burning", 0, undo_rate=1, fuzz_rate=0).run(5)


def test_state_that_is_not_plain_json_is_caught(monkeypatch):
    def tuples(real, state, event):
        return {**real(state, event), "players": tuple(state["players"])}

    _broken(monkeypatch, tuples)
    with pytest.raises(AssertionError, match="plain JSON"):
        Playthrough("rome-is-burning", 0, fuzz_rate=0).run(5)


@pytest.mark.slow
@pytest.mark.skipif(not SOAK, reason="long run: `make soak` (COMPANION_SOAK=1) runs it")
@pytest.mark.parametrize("game", game_ids())
def test_soak_many_seeds(game):
    for seed in range(2, 32):
        p = Playthrough(game, seed).run(1000)
        assert p.fold.ended() or len(p.events) >= 1000
        assert contract.check_ranking(p.module.final_ranking(p.fold.game_state), p.players) == []
