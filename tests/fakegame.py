"""A tiny game for testing the match machinery (store, fold, undo, export) apart from real rules."""

from companion.base.errors import InputError, RuleError

GAME_ID = "tally"
EVENT_TYPES = frozenset({"point", "finish"})


def initial_state(players, options):
    if len(players) < 2:
        raise InputError("needs at least 2 players", "players")
    return {"points": {p: 0 for p in players}, "finished": False}


def apply(state, event):
    data = event.get("data", {})
    if state["finished"]:
        raise RuleError("the match has ended", "type")
    if event["type"] == "finish":
        return {**state, "finished": True}
    player = data.get("player")
    if player not in state["points"]:
        raise InputError(f"unknown player {player!r}", "player")
    n = data.get("n", 1)
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise InputError("must be a whole number >= 0", "n")
    points = dict(state["points"])
    points[player] += n
    return {**state, "points": points}


def is_ended(state):
    return state["finished"]


def final_ranking(state):
    """Most points first; equal points share a place."""
    pts = state["points"]
    return sorted(({"player": p, "place": 1 + sum(1 for q in pts.values() if q > v), "objective": False,
                    "eliminated": False} for p, v in pts.items()), key=lambda r: r["place"])


def final_points(state):
    """No number of its own: the tally ranks, it does not score (a tournament shows no game points)."""
    return None


def score(doc):
    return {"ok": True}
