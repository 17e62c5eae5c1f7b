"""Rome Is Burning (WarpSpawn; Italian translation by Alessandro Crespi, 2004): turn scoring and the match.

Rule book: the Italian translation; the rulings of ``docs/rulings.md#rome-is-burning`` win over it.

The 40 cards of the book (``CATALOGUE``) each carry three type letters: A (Assassination) or
B (Bread & Circus), then two of P, M, I, C, S, R (the plebeians' types) or of V, U, T, O, G, D (the
emperor's). Names are matched ignoring case, accents, apostrophe style and repeated blanks.

Turn scoring (``turn_scores``, ``score``): every player scores 1 per card; a plebeian adds 1 per A card
and the square of their count of each of P, M, I, C, S, R; the emperor adds 1 per B card and the square
of each of V, U, T, O, G, D. The highest score becomes emperor; a tie is decided by the old emperor (by the
table on the first turn). Only the new emperor adds the turn's score to their total. Highest total after
turn 7 wins (a tie shares the win).

Board: a ring of 12 spaces, space 0 is the Palace. Each turn the cards are dealt face up, 2 to a free
space (not the Palace): 2 for the table, then 2 per player. Every pawn starts the turn at the Palace
(our reading of the book's set-up, which it repeats each turn). In seat order from the first player, each
player rolls 1d6 and moves that many spaces either way; ending on a space with cards takes them; ending
on a space with other pawns lets the mover draw one card from one of them. When every card is taken the
turn is scored; hands are then discarded and shuffled back.

Match events (``EVENT_TYPES``; ``data`` shapes in ``schemas/rome-is-burning.events.schema.json``):

- ``turn.setup`` ``{"spaces": {"3": [card, card], ...}, "first"?}``: the cards dealt this turn (spaces 1-11,
  2 cards each, players + 1 spaces); ``first`` is who moves first (default: the previous first player,
  seat 1 on turn 1). ``deal(state, rng)`` builds this data from a shuffled deck.
- ``move`` ``{"player", "die", "direction"}``: ``die`` 1-6, ``direction`` ``"cw"`` or ``"ccw"``. The
  server rolls with ``roll_die(rng)`` / ``move_data(state, player, direction, rng)`` and stores the result.
- ``steal`` ``{"player", "from", "card"}``: right after their move, the mover draws ``card`` from a player
  on the same space (once; the next move forfeits it).
- ``turn.score`` ``{"emperor_choice"?}``: when every card is taken. A tie without ``emperor_choice`` leaves
  the turn waiting for ``emperor.choose``.
- ``emperor.choose`` ``{"emperor"}``: the old emperor's (or the table's) pick among the tied players.
"""

from __future__ import annotations

import copy
import random
import unicodedata

from companion.base.errors import InputError, RuleError, join_path
from companion.base.schemas import check_event_data, json_path, validate

GAME_ID = "rome-is-burning"
NAME = "Rome Is Burning"
USES_CLOCK = False
EVENT_TYPES = frozenset({"turn.setup", "move", "steal", "turn.score", "emperor.choose"})

TURNS = 7
RING = 12
PALACE = 0
DIE_SIDES = 6
MIN_PLAYERS, MAX_PLAYERS = 2, RING - 2  # players + 1 spaces of 2 cards on the 11 free spaces

PLEBEIAN_EXTRA, PLEBEIAN_SQUARES = "A", ("P", "M", "I", "C", "S", "R")
EMPEROR_EXTRA, EMPEROR_SQUARES = "B", ("V", "U", "T", "O", "G", "D")
TYPE_NAMES = {
    "A": "Assassinio", "B": "Pane & Circo", "P": "Supporto Politico", "M": "Supporto Militare",
    "I": "Intrigo", "C": "Civico", "S": "Soldati", "R": "Reputazione", "V": "Intrattenimenti Privati",
    "U": "Intrattenimenti Pubblici", "T": "Torture", "O": "Orge", "G": "Giochi nell'Arena", "D": "Decreti",
}

# The 40 cards, names as printed in the rule book, with their three type letters.
CATALOGUE = (
    ("Estorsioni e Corruzione", "API"),
    ("Pettegolezzi e Complotti", "API"),
    ("Tradimento", "API"),
    ("Cospirazione", "API"),
    ("Follia dell’Imperatore", "API"),
    ("Rivolta Plebea", "APC"),
    ("La Nuova repubblica", "APC"),
    ("Grandi Orazioni", "APC"),
    ("Il Popolo sceglie", "APC"),
    ("Supporto del Senato", "APC"),
    ("Centurioni", "AMS"),
    ("Guardie Pretoriane", "AMS"),
    ("Marcia su Roma", "AMS"),
    ("Generali", "AMS"),
    ("Legioni", "AMS"),
    ("Conquiste", "AMR"),
    ("Campagne Vittoriose", "AMR"),
    ("Difesa delle Frontiere", "AMR"),
    ("Tributi", "AMR"),
    ("Trionfi", "AMR"),
    ("Corsa di Bighe", "BUG"),
    ("Battaglie Navali", "BUG"),
    ("Gladiatori", "BUG"),
    ("Cristiani", "BUG"),
    ("Leoni e Bestie", "BUG"),
    ("Distribuzione di Pane", "BUD"),
    ("Paga dei Soldati", "BUD"),
    ("Costruzione di Templi", "BUD"),
    ("Lavori Pubblici", "BUD"),
    ("Dichiarare Feste", "BUD"),
    ("Mogli dei Senatori", "BVO"),
    ("Vergini Vestali", "BVO"),
    ("Ragazze Schiave", "BVO"),
    ("Tempio delle Vergini", "BVO"),
    ("Terme", "BVO"),
    ("Crocifissioni", "BVT"),
    ("Impalamenti", "BVT"),
    ("Sacrifici", "BVT"),
    ("Scuoiati Vivi", "BVT"),
    ("Decapitazioni", "BVT"),
)
TYPES = dict(CATALOGUE)
_APOSTROPHES = str.maketrans({c: "'" for c in "’‘`´ʼ′"})


def normalize(name: str) -> str:
    """The matching key of a card name: no accents, lower case, one apostrophe style, single blanks."""
    text = unicodedata.normalize("NFKD", name.translate(_APOSTROPHES))
    text = "".join(c for c in text if not unicodedata.combining(c))
    return " ".join(text.casefold().split())


_BY_KEY = {normalize(name): name for name, _ in CATALOGUE}


def card_name(text, field: str | None = None) -> str:
    """The catalogue's name of a card, or InputError naming ``field``."""
    if not isinstance(text, str):
        raise InputError("a card name must be a string", field)
    name = _BY_KEY.get(normalize(text))
    if name is None:
        raise InputError("unknown card {text!r}", field, text=text)
    return name


# ---------------------------------------------------------------------------------------------------------
# scoring

def hand_score(cards: list[str], emperor: bool) -> dict:
    """Score of one hand of catalogue names: ``{"score", "cards", "extra", "squares"}``."""
    counts: dict = {}
    for c in cards:
        for letter in TYPES[c]:
            counts[letter] = counts.get(letter, 0) + 1
    extra_letter, square_letters = (EMPEROR_EXTRA, EMPEROR_SQUARES) if emperor else (PLEBEIAN_EXTRA,
                                                                                      PLEBEIAN_SQUARES)
    squares = {t: counts[t] ** 2 for t in square_letters if counts.get(t)}
    extra = counts.get(extra_letter, 0)
    return {"score": len(cards) + extra + sum(squares.values()), "cards": len(cards), "extra": extra,
            "squares": squares}


def election(scores: dict, old_emperor: str | None, choice: str | None = None, field="emperor_choice") -> dict:
    """``{"candidates", "new_emperor", "emperor_points", "decision_needed"?}``; ``scores`` {player: score}."""
    best = max(scores.values())
    candidates = [p for p, s in scores.items() if s == best]
    out: dict = {"candidates": candidates}
    if choice is not None and choice not in candidates:
        raise InputError("{choice!r} is not among the highest scorers ({names})", field, choice=choice, names=', '.join(candidates))
    if len(candidates) == 1:
        new = candidates[0]
    else:
        new = choice
    out["new_emperor"] = new
    out["emperor_points"] = best if new is not None else None
    if new is None:
        out["decision_needed"] = {"by": old_emperor if old_emperor is not None else "table",
                                  "candidates": candidates}
    return out


def turn_scores(emperor: str | None, hands: dict, choice: str | None = None, field="emperor_choice") -> dict:
    """Score checked hands (catalogue names) and elect; see ``score`` for the output."""
    players = []
    for p, cards in hands.items():
        s = hand_score(cards, p == emperor)
        players.append({"player": p, "role": "emperor" if p == emperor else "plebeian", "score": s["score"],
                        "breakdown": {k: s[k] for k in ("cards", "extra", "squares")}})
    out = {"players": players}
    out.update(election({r["player"]: r["score"] for r in players}, emperor, choice, field))
    return out


def check_hands(hands: dict, where: str = "$.hands", taken: dict | None = None) -> dict:
    """Catalogue names for every hand; a card in two places is refused naming it. ``taken`` {card: where}."""
    seen = dict(taken or {})
    out = {}
    for player, cards in hands.items():
        names = []
        for i, c in enumerate(cards):
            field = join_path(where, json_path([player, i]))
            name = card_name(c, field)
            if name in seen:
                raise InputError("{name!r} is already in {seen}", field, name=name, seen=seen[name])
            seen[name] = f"{player}'s hand"
            names.append(name)
        out[player] = names
    return out


def score(doc) -> dict:
    """``companion score rome-is-burning``: one turn's scoring and election."""
    validate("rome-is-burning.score", doc)
    hands = check_hands(doc["hands"])
    emperor = doc.get("emperor")
    if emperor is not None and emperor not in hands:
        raise InputError("the emperor {emperor!r} is not a player", "$.emperor", emperor=emperor)
    choice = doc.get("emperor_choice")
    if choice is not None and choice not in hands:
        raise InputError("{choice!r} is not a player", "$.emperor_choice", choice=choice)
    return turn_scores(emperor, hands, choice, "$.emperor_choice")


# ---------------------------------------------------------------------------------------------------------
# randomness (the server calls these with its injected rng and stores the result in the event)

def roll_die(rng=None) -> int:
    rng = rng or random.SystemRandom()
    return rng.randint(1, DIE_SIDES)


def move_data(state: dict, player: str, direction: str, rng=None) -> dict:
    """The data of a ``move`` event with a fresh roll; refuses first (no roll) when the move isn't allowed."""
    if direction not in ("cw", "ccw"):
        raise InputError('must be "cw" or "ccw"', "direction")
    data = {"player": player, "die": 1, "direction": direction}
    apply(state, {"type": "move", "data": data})  # raises when the rules refuse this move now
    data["die"] = roll_die(rng)
    return data


def deal(state: dict, rng=None, first: str | None = None) -> dict:
    """The data of a ``turn.setup`` event: a shuffled deck dealt 2 cards to each of players + 1 free spaces."""
    rng = rng or random.SystemRandom()
    deck = [name for name, _ in CATALOGUE]
    for i in range(len(deck) - 1, 0, -1):  # Fisher-Yates on randint, the one method the rng must have
        j = rng.randint(0, i)
        deck[i], deck[j] = deck[j], deck[i]
    free = [s for s in range(RING) if s != PALACE]
    for i in range(len(free) - 1, 0, -1):
        j = rng.randint(0, i)
        free[i], free[j] = free[j], free[i]
    n = len(state["players"]) + 1
    spaces = {str(s): deck[2 * k:2 * k + 2] for k, s in enumerate(sorted(free[:n]))}
    out = {"spaces": spaces}
    if first is not None:
        out["first"] = first
    return out


# ---------------------------------------------------------------------------------------------------------
# the match reducer

def initial_state(players, options) -> dict:
    if not isinstance(players, list) or not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise InputError("Rome Is Burning is played by {MIN_PLAYERS} to {MAX_PLAYERS} players", "players", MIN_PLAYERS=MIN_PLAYERS, MAX_PLAYERS=MAX_PLAYERS)
    return {
        "players": list(players),
        "turn": 1,
        "phase": "setup",  # setup -> moving -> (election) -> setup ... -> ended
        "emperor": None,
        "totals": {p: 0 for p in players},
        "spaces": [[] for _ in range(RING)],
        "positions": {p: PALACE for p in players},
        "hands": {p: [] for p in players},
        "first": 0,
        "current": 0,
        "steal": None,
        "scoring": None,
        "history": [],
        "winners": [],
    }


def _data_check(definition: str, data) -> None:
    check_event_data("rome-is-burning.events", definition, data)


def _player(s: dict, data: dict, field: str = "player") -> str:
    who = data.get(field)
    if who not in s["totals"]:
        raise InputError("unknown player {who!r}", field, who=who)
    return who


def _cards_left(s: dict) -> int:
    return sum(len(c) for c in s["spaces"])


def _elect(s: dict, result: dict) -> None:
    """The election's result on ``s`` (a copy of the top level only: what it changes is replaced)."""
    new = result["new_emperor"]
    s["totals"] = {**s["totals"], new: s["totals"][new] + result["emperor_points"]}
    s["history"] = s["history"] + [{"turn": s["turn"], "old_emperor": s["emperor"], "new_emperor": new,
                                    "points": result["emperor_points"],
                                    "scores": {r["player"]: r["score"] for r in result["players"]}}]
    s["emperor"] = new
    s["scoring"] = None
    s["hands"] = {p: [] for p in s["players"]}
    s["positions"] = {p: PALACE for p in s["players"]}
    s["steal"] = None
    if s["turn"] >= TURNS:
        s["phase"] = "ended"
        best = max(s["totals"].values())
        s["winners"] = [p for p in s["players"] if s["totals"][p] == best]
    else:
        s["turn"] += 1
        s["phase"] = "setup"


def apply(state: dict, event: dict) -> dict:
    kind = event.get("type")
    data = event.get("data") or {}
    if not isinstance(data, dict):
        raise InputError("must be an object", "data")
    if kind not in EVENT_TYPES:
        raise InputError("unknown event type {kind!r}", "type", kind=kind)
    if state["phase"] == "ended":
        raise RuleError("the match has ended", "type")
    _data_check(kind.replace(".", "_"), data)
    # a copy of the top level: whatever the event changes below it is replaced, never changed in place (the
    # state before is shared, unchanged, by every fold and view that holds it)
    s = dict(state)
    if kind == "turn.setup":
        if s["phase"] != "setup":
            raise RuleError("turn {turn} is already dealt", "type", turn=s['turn'])
        need = len(s["players"]) + 1
        if len(data["spaces"]) != need:
            raise InputError("{need} spaces get cards with {n_players} players (2 for the table, 2 per player)", "spaces", need=need, n_players=len(s['players']))
        spaces = [[] for _ in range(RING)]
        seen: dict = {}
        for key, cards in data["spaces"].items():
            space = int(key)
            for i, c in enumerate(cards):
                field = join_path("spaces", json_path([key, i]))
                name = card_name(c, field)
                if name in seen:
                    raise InputError("{name!r} is dealt twice", field, name=name)
                seen[name] = key
                spaces[space].append(name)
        first = s["first"]
        if "first" in data:
            first = s["players"].index(_player(s, data, "first"))
        s.update(spaces=spaces, first=first, current=first, phase="moving", steal=None,
                 positions={p: PALACE for p in s["players"]}, hands={p: [] for p in s["players"]})
    elif kind == "move":
        die = data["die"]
        if isinstance(die, bool) or not isinstance(die, int):  # JSON Schema lets 2.0 pass as an integer
            raise InputError("a die shows a whole number 1 to {DIE_SIDES}, not {die!r}", "die", DIE_SIDES=DIE_SIDES, die=die)
        if s["phase"] != "moving":
            if s["phase"] == "setup":
                raise RuleError("no move now: deal the turn first", "type")
            raise RuleError("no move now: the election is waiting", "type")
        if _cards_left(s) == 0:
            raise RuleError("every card is taken: score the turn", "type")
        who = _player(s, data)
        mover = s["players"][s["current"]]
        if who != mover:
            raise RuleError("it is {mover}'s move", "player", mover=mover)
        step = die if data["direction"] == "cw" else -die
        space = (s["positions"][who] + step) % RING
        s["positions"] = {**s["positions"], who: space}
        taken = s["spaces"][space]
        s["spaces"] = list(s["spaces"])
        s["spaces"][space] = []
        s["hands"] = {**s["hands"], who: s["hands"][who] + taken}
        others = [p for p in s["players"] if p != who and s["positions"][p] == space and s["hands"][p]]
        s["steal"] = {"player": who, "from": others} if others else None
        s["last_move"] = {"player": who, "space": space, "took": taken}
        s["current"] = (s["current"] + 1) % len(s["players"])
    elif kind == "steal":
        who = _player(s, data)
        victim = _player(s, data, "from")
        if not s["steal"] or s["steal"]["player"] != who:
            raise RuleError("{who} has no card to draw now (only right after landing on another pawn)",
                            "player", who=who)
        if victim not in s["steal"]["from"]:
            raise RuleError("{victim} is not on {who}'s space with cards", "from", victim=victim, who=who)
        name = card_name(data["card"], "card")
        if name not in s["hands"][victim]:
            raise RuleError("{name!r} is not in {victim}'s hand", "card", name=name, victim=victim)
        s["hands"] = {**s["hands"], victim: [c for c in s["hands"][victim] if c != name]}
        s["hands"][who] = s["hands"][who] + [name]
        s["steal"] = None
    elif kind == "turn.score":
        if s["phase"] != "moving":
            raise RuleError("nothing to score now", "type")
        if _cards_left(s):
            raise RuleError("{left} {left|card is|cards are} still on the board", "type", left=_cards_left(s))
        choice = data.get("emperor_choice")
        if choice is not None:
            _player(s, data, "emperor_choice")
        result = turn_scores(s["emperor"], s["hands"], choice)
        if result["new_emperor"] is None:
            s["phase"] = "election"
            s["scoring"] = result
            s["steal"] = None
        else:
            _elect(s, result)
    elif kind == "emperor.choose":
        if s["phase"] != "election":
            raise RuleError("no election is waiting", "type")
        new = _player(s, data, "emperor")
        result = dict(s["scoring"])
        result.update(election({r["player"]: r["score"] for r in result["players"]}, s["emperor"], new,
                               "emperor"))
        _elect(s, result)
    return s


def is_ended(state: dict) -> bool:
    return state["phase"] == "ended"


def final_ranking(state: dict) -> list[dict]:
    """Places by total points (equal totals share a place: the winners share the first), in the one
    shape of ``companion.games.contract.Placing``."""
    from companion.games.contract import competition_places

    return competition_places(state["players"], lambda p: -state["totals"][p])


def final_points(state: dict) -> dict | None:
    """Each player's total points, or None before the end (what a play log receives as the score)."""
    if not is_ended(state):
        return None
    return dict(state["totals"])


def summary(state: dict) -> dict:
    out = {
        "turn": state["turn"],
        "turns": TURNS,
        "phase": state["phase"],
        "emperor": state["emperor"],
        "totals": dict(state["totals"]),
        "cards_on_board": {str(i): list(c) for i, c in enumerate(state["spaces"]) if c},
        "positions": dict(state["positions"]),
        "hand_sizes": {p: len(h) for p, h in state["hands"].items()},
    }
    if state["phase"] in ("moving", "election"):
        # this turn's scores with their breakdown, as GET .../rome/scores answers: every phone draws them
        # from the view it is sent, asking nothing on each event
        now = scores_now(state)  # (made anew while moving; during an election it holds the state's scoring)
        out["turn_scores"] = copy.deepcopy(now) if state["phase"] == "election" else now
    if state["phase"] == "moving":
        out["to_move"] = state["players"][state["current"]] if _cards_left(state) else None
        out["steal"] = state["steal"]
        out["scores_now"] = {r["player"]: r["score"] for r in out["turn_scores"]["players"]}
    if state["phase"] == "election":
        out["decision_needed"] = state["scoring"]["decision_needed"]
    if state["phase"] == "ended":
        out["winners"] = list(state["winners"])
    return out


# -- what the server completes for the tracker ----------------------------------------------------------
# ``ACTIONS[name] = (event type, fn)``; ``fn(state, players, data, rng, effective) -> (event data, extra)``.

def _deal_action(state, players, data, rng, effective):
    """The Pi shuffles the 40 cards and deals 2 to each of players + 1 free spaces (``data.first``: who
    moves first this turn, optional)."""
    first = data.get("first")
    if first is not None and first not in players:
        raise InputError("unknown player {first!r}", "first", first=first)
    if state["phase"] != "setup":
        raise RuleError("turn {turn} is already dealt", "type", turn=state['turn'])
    return deal(state, rng, first), None


def _move_action(state, players, data, rng, effective):
    """The Pi rolls 1d6 for ``data.player`` moving ``data.direction``; refused before anything is rolled
    when the rules refuse the move now."""
    player = data.get("player")
    if not isinstance(player, str) or player not in players:
        raise InputError("unknown player {player!r}", "player", player=player)
    return move_data(state, player, data.get("direction"), rng), None


ACTIONS = {"deal": ("turn.setup", _deal_action), "move": ("move", _move_action)}
# (an action that used the RNG is the Pi's draw: MatchService.act marks its event ``rolled_by: "pi"``, and
# only an organiser undoes it)


class _One:
    def randint(self, a, b):
        return a


def dice_needed(state, action: str, data: dict) -> dict:
    """The dice a move rolls with the table's own die (the smart dice wait for it): one, of any side. The
    move is checked first, as for the Pi's die."""
    if action != "move":
        raise InputError("no dice are rolled for {action!r}", "action", action=action)
    player = data.get("player")
    if not isinstance(player, str) or player not in state["players"]:
        raise InputError("unknown player {player!r}", "player", player=player)
    move_data(state, player, data.get("direction"), _One())
    return {"any": 1}


def scores_now(state) -> dict:
    """This turn's scores of the hands as they stand (with who would be elected); during an election,
    the scoring waiting for the old emperor's choice."""
    if state["phase"] == "election":
        return {"turn": state["turn"], "phase": state["phase"], **state["scoring"]}
    return {"turn": state["turn"], "phase": state["phase"], **turn_scores(state["emperor"], state["hands"])}
