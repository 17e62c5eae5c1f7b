"""Random legal playthroughs of every game, for the conformance test (OpenSpiel's ``random_sim_test``
is the model) and for any test that needs an ended match of a real game.

Each game has a small *proposer*: from the folded match it proposes the next event, legal as far as
it can tell, using the game's own helpers where it has them (conquest's ``deal``/``fill_dice``/
``reinforcements``, Rome's ``deal``/``move_data``). :class:`Playthrough` applies each proposal through
``companion.core.match.Fold`` and checks, at every step, the contract every game keeps:

- ``apply`` never mutates its input (deep copies compared before and after, refused events too);
- the state survives a JSON round trip, and the event applied to the round-tripped earlier state
  gives the same state;
- a refusal is a ``CompanionError`` naming a field, and leaves the fold as it was;
- ``undo`` (sometimes, at random) returns the earlier state, game and clock; the event is then sent again;
- the view (``summary``, the clock) and ``public_view`` are plain JSON at every step;
- odd variants of a proposal (a value replaced, a key dropped) are refused with a project error or
  accepted, never a crash (checked with ``Fold.check``, which changes nothing).
"""

from __future__ import annotations

import copy
import json
import random
from datetime import datetime, timedelta, timezone

from companion.core import clock as match_clock
from companion.base.errors import CompanionError
from companion.games import game_module
from companion.core.match import Fold

START = datetime(2026, 3, 1, 20, 0, tzinfo=timezone.utc)
STEP = timedelta(seconds=30)
ODD_VALUES = [None, -1, 0, 1.5, 10**9, "", "Nobody", [], {}, True, [1, 2], {"x": 1}, "x" * 300]

# seats and options per game: a short match (the conquest clock runs 20 minutes, events 30 s apart)
SETUPS = {
    "web-of-power": (["Anna", "Bruno", "Carla"], {}),
    "richelieu": (["Anna", "Bruno", "Carla"], {"start_money": 5}),
    "rome-is-burning": (["Anna", "Bruno", "Carla"], {}),
    "conquest-italy": (["Anna", "Bruno", "Carla", "Dario"], {}),
}


class Stuck(AssertionError):
    pass


class Playthrough:
    def __init__(self, game: str, seed: int, undo_rate: float = 0.1, fuzz_rate: float = 0.3, clock: bool | None = None,
                 checks: bool = True):
        """``clock``: override the game's ``USES_CLOCK`` (``options.clock``); a game whose proposer does not
        drive the clock gets ``clock.start`` first and then plays as usual (``turn.end`` goes to both).
        ``checks=False``: only play (no contract check at each step; for tests of the proposals themselves,
        over many seeds)."""
        self.checks = checks
        self.game = game
        self.module = game_module(game)
        self.players, self.options = SETUPS[game]
        if clock is not None:
            self.options = {**self.options, "clock": clock}
        self.rng = random.Random(seed)
        self.undo_rate, self.fuzz_rate = undo_rate, fuzz_rate
        self.fold = Fold(game, self.players, self.options)
        self.events: list[dict] = []  # the log as stored: undos included
        self.refused = 0
        self.undone = 0
        self.fuzzed = 0
        self.memo: dict = {}  # the proposer's notes (conquest: conquests in the turn)

    # -- the log --------------------------------------------------------------------------------
    def _event(self, type_: str, data: dict) -> dict:
        n = len(self.events)
        return {"seq": n + 1, "type": type_, "data": data, "at": (START + STEP * (n + 1)).isoformat()
                .replace("+00:00", "Z")}

    def export(self) -> dict:
        return {"id": f"conformance-{self.game}", "game": self.game, "players": list(self.players),
                "options": self.options, "created_at": START.isoformat().replace("+00:00", "Z"),
                "events": [dict(e) for e in self.events]}

    @property
    def last_at(self) -> str | None:
        return self.events[-1]["at"] if self.events else None

    # -- one step -------------------------------------------------------------------------------
    def send(self, type_: str, data: dict) -> bool:
        """Apply one event through the fold, checking the contract; False when the rules refuse it."""
        if not self.checks:
            event = self._event(type_, data)
            try:
                self.fold.apply(event)
            except CompanionError:
                self.refused += 1
                return False
            self.events.append(event)
            return True
        if self.rng.random() < self.fuzz_rate:
            self._fuzz(type_, data)
        event = self._event(type_, data)
        game0, clock0 = self.fold.game_state, self.fold.clock_state
        game_copy, clock_copy = copy.deepcopy(game0), copy.deepcopy(clock0)
        self._check_fields(type_, data)
        try:
            self.fold.apply(copy.deepcopy(event))
        except CompanionError as exc:
            self._check_refusal(exc, event)
            assert self.fold.game_state is game0 and self.fold.clock_state is clock0, "a refusal changed the fold"
            assert game0 == game_copy and clock0 == clock_copy, f"{event['type']}: a refused event mutated the state"
            self.refused += 1
            return False
        assert game0 == game_copy, f"{event['type']}: apply mutated its input state"
        assert clock0 == clock_copy, f"{event['type']}: the clock mutated its input state"
        self.events.append(event)
        state = self.fold.game_state
        assert json.loads(json.dumps(state)) == state, f"{event['type']}: the state is not plain JSON"
        if type_ in self.module.EVENT_TYPES:
            again = self.module.apply(json.loads(json.dumps(game_copy)), copy.deepcopy(event))
            assert again == state, f"{event['type']}: the JSON round-tripped state folds differently"
        json.dumps(self.fold.view(event["at"]))  # the view (summary, clock) is plain JSON at every step
        if hasattr(self.module, "public_view"):
            json.dumps(self.module.public_view(state, self.rng.choice(self.players + [None])))
        if self.rng.random() < self.undo_rate:
            self._undo_and_redo(type_, data, game_copy, clock_copy)
        return True

    def _undo_and_redo(self, type_, data, game_before, clock_before):
        undo = self._event("undo", {})
        self.fold.apply(undo)
        self.events.append(undo)
        self.undone += 1
        assert self.fold.game_state == game_before, f"undo of {type_} did not give back the game state"
        assert self.fold.clock_state == clock_before, f"undo of {type_} did not give back the clock"
        event = self._event(type_, data)
        self.fold.apply(copy.deepcopy(event))  # the same event, a little later: accepted again
        self.events.append(event)

    def _check_fields(self, type_: str, data: dict) -> None:
        """A writer's event names only the fields its schema does: the proposal passes the write path's check
        (``Fold.check_new``), the same with an unknown field does not."""
        try:
            self.fold.check_new(type_, data)
        except CompanionError as exc:
            raise AssertionError(f"{type_} {data!r}: a proposal the rules may take is refused by its fields "
                                 f"({exc.message})") from None
        try:
            self.fold.check_new(type_, {**data, "note": "x"})
        except CompanionError as exc:
            assert exc.field == "note", (type_, exc.field)
        else:
            raise AssertionError(f"{type_}: an unknown field would be stored")

    def _check_refusal(self, exc: CompanionError, event: dict) -> None:
        assert isinstance(exc.field, str) and exc.field, \
            f"{event['type']} {event['data']!r}: refused without naming a field ({type(exc).__name__}: {exc.message})"
        assert isinstance(exc.message, str) and exc.message

    def _fuzz(self, type_: str, data: dict) -> None:
        """An odd variant of the proposal: a project error naming a field, or accepted; never a crash."""
        odd = copy.deepcopy(data)
        keys = list(odd)
        roll = self.rng.random()
        if keys and roll < 0.4:
            odd[self.rng.choice(keys)] = copy.deepcopy(self.rng.choice(ODD_VALUES))
        elif keys and roll < 0.6:
            del odd[self.rng.choice(keys)]
        elif roll < 0.8:
            odd[self.rng.choice(["player", "from", "to", "cities", "extra"])] = copy.deepcopy(self.rng.choice(ODD_VALUES))
        else:
            type_ = self.rng.choice(sorted(self.module.EVENT_TYPES | match_clock.EVENT_TYPES))
        event = self._event(type_, odd)
        game0, clock0 = copy.deepcopy(self.fold.game_state), copy.deepcopy(self.fold.clock_state)
        self.fuzzed += 1
        try:
            self.fold.check(event)
        except CompanionError as exc:
            self._check_refusal(exc, event)
        assert self.fold.game_state == game0 and self.fold.clock_state == clock0, f"checking {type_} changed the fold"

    # -- a whole match --------------------------------------------------------------------------
    def run(self, max_events: int, until_ended: bool = True) -> "Playthrough":
        propose = PROPOSERS[self.game]
        misses = 0
        while len(self.events) < max_events and not self.fold.ended():
            if self.fold.clock_on and self.fold.clock_state["phase"] == "setup" and not self.module.USES_CLOCK:
                type_, data = "clock.start", {"limit_minutes": 1440}
            else:
                type_, data = propose(self, finishing=until_ended and len(self.events) > max_events // 2)
            if self.send(type_, data):
                misses = 0
            else:
                misses += 1
                if misses > 60:
                    raise Stuck(f"{self.game}: 60 proposals in a row refused, last {type_} {data}")
        return self


def play(game: str, seed: int = 0, until_ended: bool = True, max_events: int = 400, **kw) -> Fold:
    """The fold of a random legal match of ``game`` (ended, when ``until_ended`` and it ends in time)."""
    return Playthrough(game, seed, **kw).run(max_events, until_ended).fold


# -- proposers --------------------------------------------------------------------------------------

def _web_of_power(p: Playthrough, finishing: bool):
    s, rng = p.fold.game_state, p.rng
    if s["scoring_step"] is not None:
        return _web_of_power_by_hand(p)
    turn = s["turn"]
    # the deck runs out at the end of a turn, before or after its turn.end (the game closes an open turn,
    # and with the clock on the clock's turn moves on with it); the second time, or the game ends early
    if (turn is None or turn["placements"]) and rng.random() < (0.15 if finishing else 0.01):
        return ("game.end" if s["deck_outs"] and rng.random() < 0.2 else "deck.out"), {}
    player = turn["player"] if turn else s["next_player"]
    if turn and len(turn["placements"]) >= 2 or rng.random() < 0.15:
        return "turn.end", {"player": player}
    placed = s["placed"][player]
    countries = s["board"]["countries"]
    if placed["monasteries"] >= 20 and placed["councillors"] >= 8:
        return "turn.end", {"player": player}
    if placed["monasteries"] < 20 and (placed["councillors"] >= 8 or rng.random() < 0.7):
        return "place", {"player": player, "piece": "monastery", "country": rng.choice(countries)}
    return "place", {"player": player, "piece": "councillor", "country": rng.choice(countries)}


def _web_of_power_by_hand(p: Playthrough):
    """At the scoring step: some or all of the missing parts, as the table counted them (docs/rulings.md,
    "Web of Power: incomplete scoring"): an alliance by its two countries, or by the players who score it
    and its points, or nobody; a player's chains (none, or lengths of 4 or more within their monasteries)."""
    from companion.games import web_of_power as wop

    s, rng = p.fold.game_state, p.rng
    missing = s["scoring_step"]["missing"]

    def some(items):
        return list(items) if rng.random() < 0.5 else rng.sample(items, rng.randint(1, len(items)))

    def lengths(player):
        out, left = [], s["placed"][player]["monasteries"]
        while left >= 4 and rng.random() < 0.6:
            out.append(rng.randint(4, min(left, 8)))
            left -= out[-1]
        return out

    if missing["chains"] and not missing["alliances"] and rng.random() < 0.2:
        who = rng.choice(missing["chains"])
        return "chains", {"player": who, "lengths": lengths(who)}
    data: dict = {}
    if missing["alliances"]:
        leaders = wop.leaders_in_two(s["councillors"], s["players"])
        totals = sorted((sum(c.values()) for c in s["councillors"].values()), reverse=True)
        most = sum(totals[:2])
        entries = []
        for n in some(missing["alliances"]):
            roll = rng.random()
            if roll < 0.5:
                entries.append({"number": n, "countries": rng.sample(s["board"]["countries"], 2)})
            elif roll < 0.8 and leaders and most >= 2:
                entries.append({"number": n, "players": rng.sample(leaders, rng.randint(1, len(leaders))),
                                "points": rng.randint(2, most)})
            else:
                entries.append({"number": n, "players": []})
        data["alliances"] = entries
    if missing["chains"] and (not data or rng.random() < 0.7):
        data["chains"] = {who: lengths(who) for who in some(missing["chains"])}
    return "scoring.hand", data


def _richelieu(p: Playthrough, finishing: bool):
    from companion.games import richelieu as R

    s, rng = p.fold.game_state, p.rng
    if rng.random() < (0.4 if finishing else 0.08):
        used = {f: sum(q["cards"][f] for q in s["players"].values()) for f in R.FACTIONS}
        factions = [f for f in R.FACTIONS if used[f] < R.SHEETS_IN_GAME[f]] or list(R.FACTIONS)
        winner = rng.choice(s["order"])
        richelieu_wins = rng.random() < 0.5
        win = [{"player": winner, "value": rng.choice([1, 2, 3])}]
        return "intrigue.resolve", {
            "richelieu_card": {"slots": win if richelieu_wins else [None],
                               "rewards": {"first": [{"type": "prestige", "amount": rng.randint(1, 4)}],
                                           "second": [], "cardinal": rng.randint(-2, 2)}},
            "faction_card": {"faction": rng.choice(factions), "slots": [None] if richelieu_wins else win,
                             "rewards": {"first": [{"type": "money", "amount": rng.randint(1, 3)}],
                                         "second": [], "cardinal": rng.randint(-2, 2)}}}
    if rng.random() < 0.05:
        return "track.adjust", {"player": rng.choice(s["order"]), "track": rng.choice(["prestige", "money"]),
                                "delta": rng.choice([-1, 1, 2])}
    turn = s["turn"]
    if len(turn["done"]) >= turn["allowed"] or rng.random() < 0.2:
        return "turn.end", {"player": turn["player"]}
    action = rng.choice(["income", "income", "place_agent", "commission", "sell_jewel", "buy_jewel"])
    data = {"player": turn["player"], "action": action}
    if action == "place_agent":
        data["space"] = rng.randint(0, 3)
    return "action", data


def _rome(p: Playthrough, finishing: bool):
    from companion.games import rome_is_burning as rome

    s, rng = p.fold.game_state, p.rng
    if s["phase"] == "setup":
        return "turn.setup", rome.deal(s, rng)
    if s["phase"] == "election":
        return "emperor.choose", {"emperor": rng.choice(s["scoring"]["decision_needed"]["candidates"])}
    if s["steal"] and rng.random() < 0.5:
        victim = rng.choice(s["steal"]["from"])
        return "steal", {"player": s["steal"]["player"], "from": victim, "card": rng.choice(s["hands"][victim])}
    if not any(s["spaces"]):
        return "turn.score", {}
    mover = s["players"][s["current"]]
    directions = ["cw", "ccw"]
    rng.shuffle(directions)
    for d in directions:
        try:
            return "move", rome.move_data(s, mover, d, rng)
        except CompanionError:
            continue
    return "move", {"player": mover, "die": 1, "direction": "cw"}


def _conquest(p: Playthrough, finishing: bool):
    """The conquest game's turn as the game keeps it (docs/rulings.md, "Conquest: the turn"): reinforce
    exactly the units due first (a trade of three cards now and then), combats from the player's own
    cities, at most one move, the turn's card (drawn, or given in turn.end), then turn.end. Now and then the
    organiser corrects a city (``territory.set``), more often in the end game, taking cities from the
    weakest player: players are eliminated, their seats skipped."""
    from companion.games import conquest_italy as ci

    s, c, rng = p.fold.game_state, p.fold.clock_state, p.rng
    gm = ci.map_of(s["map"])
    if s["phase"] == "deal":
        return "setup.deal", {"owner": ci.deal(s["players"], gm, rng)[0]}
    if s["phase"] == "place":
        who = s["next_placer"]
        return "setup.place", {"player": who, "placements": {rng.choice(ci.held(s, who)): min(5, s["reserve"][who])}}
    if not s["started"]:  # with options.clock false the game alone takes clock.start: the turns begin
        return "clock.start", {"limit_minutes": 20}
    clockless = c is None
    for who in s["players"]:
        if who not in s["objectives"] and ci.held(s, who):
            cities = rng.sample(ci.held(s, who), 1)
            others = [x for x in gm.cities if s["owner"].get(x) not in (None, who)]
            if clockless and others:  # without the clock the objective ends the match: one city to take
                cities.append(rng.choice(others))
            return "objective.set", {"player": who, "cities": sorted(cities)}
    turn = ci.current_turn(s)
    who = turn["player"]
    objective = s["objectives"].get(who)
    if clockless and objective and all(s["owner"][x] == who for x in objective):
        # without the clock nothing else ends the match but one player holding every city: a player who
        # completes the objective declares it at once (it wins at once, docs/rulings.md#final-ranking)
        return "objective.completed", {"player": who}
    endgame = finishing
    if c is not None:
        view = match_clock.view(c, p.last_at)
        if view["awaiting_roll"]:
            return "final.roll", {"player": view["awaiting_roll"], "dice": [rng.randint(1, 6), rng.randint(1, 6)]}
        endgame = finishing or view["phase"] != "regular"  # the clock has run out: the end game
        assert view["current_player"] == who, f"the game's turn {turn} is not the clock's ({view['current_player']})"
    if turn["step"] == ci.REINFORCE or p.memo.get("who") != who:  # a new turn: its plan
        p.memo.update(who=who, attacks=rng.randint(0, 8 if endgame else 5), move=rng.random() < 0.4,
                      draw=rng.random() < 0.5)
    mine = ci.held(s, who)
    rivals = sorted((q for q in s["players"] if q != who and q not in s["eliminated"]),
                    key=lambda q: (len(ci.held(s, q)), q))
    if rivals and rng.random() < (0.2 if endgame else 0.02):
        city = rng.choice(ci.held(s, rivals[0]))  # a correction: the weakest rival's city was the player's
        return "territory.set", {"city": city, "player": who, "units": rng.randint(1, 3)}
    objective = s["objectives"].get(who)
    if finishing and objective and all(s["owner"][x] == who for x in objective) and rng.random() < 0.1:
        return "objective.completed", {"player": who}
    actions = turn["actions"]
    if "reinforce" in actions:
        trade = _conquest_trade(s, gm, who, rng) if rng.random() < 0.9 else None
        due = ci.reinforcements(gm, mine, ci.units_on_map(s, who), trade)["placeable"]
        if due or trade or "turn.end" not in actions or rng.random() < 0.5:
            # mostly on the cities that border the weakest rival
            front = [a for a in mine if rivals and any(s["owner"].get(d) == rivals[0] for d in gm.neighbours[a])]
            return "reinforce", {"player": who, "placements": _spread(due, front if front and rng.random() < 0.7
                                                                      else mine, rng),
                                 **({"trade": trade} if trade else {})}
        return "turn.end", {"player": who, "conquered": 0}
    if "combat" in actions and p.memo["attacks"] > 0:
        p.memo["attacks"] -= 1
        targets = [(a, d) for a in mine if s["units"][a] >= 2
                   for d in gm.cities if s["owner"][d] != who and gm.can_attack(a, d) is not None]
        weak = [(a, d) for a, d in targets if rivals and s["owner"][d] == rivals[0]]
        if clockless and objective:  # without the clock: the objective's cities first (it ends the match)
            weak = [(a, d) for a, d in targets if d in objective] or weak
        if targets:
            a, d = rng.choice(weak if weak and (endgame or rng.random() < 0.8) else targets)
            data = {"from": a, "to": d, **({"player": who} if rng.random() < 0.7 else {})}
            if rng.random() < 0.3:
                data["move"] = rng.randint(1, 4)
            return "combat", ci.fill_dice(s, data, rng)
    if "move" in actions and p.memo["move"]:
        p.memo["move"] = False
        pairs = [(a, b) for a in mine if s["units"][a] >= 2 for b in sorted(gm.neighbours[a]) if s["owner"][b] == who]
        if pairs:
            a, b = rng.choice(pairs)
            return "move", {"player": who, "from": a, "to": b, "units": rng.randint(1, s["units"][a] - 1)}
    done = s["turn_conquests"]
    # two or more: all the clock asks (the box's long press says 2)
    data = {"player": who, "conquered": 2 if done > 2 and rng.random() < 0.3 else done}
    if turn["card_owed"]:
        card = ci.draw_card(s, rng)
        if p.memo["draw"]:
            return "card.draw", {"player": who, "card": card}
        data["card"] = card
    return "turn.end", data


def _conquest_trade(s, gm, who, rng) -> list | None:
    """Three of ``who``'s cards the map gives a value (docs/rulings.md#reinforcements), or None."""
    from itertools import combinations

    from companion.games import conquest_italy as ci

    sets = []
    for cards in combinations(s["hands"][who], 3):
        try:
            ci.trade_value(list(cards), frozenset(), gm)
        except CompanionError:
            continue
        sets.append(list(cards))
    return rng.choice(sets) if sets else None


def _spread(units: int, cities: list, rng) -> dict:
    """``units`` (exactly) over one to three of ``cities``."""
    out: dict = {}
    chosen = rng.sample(cities, min(len(cities), rng.randint(1, 3)))
    for i in range(units):
        city = chosen[i % len(chosen)] if i < len(chosen) else rng.choice(chosen)
        out[city] = out.get(city, 0) + 1
    return out


PROPOSERS = {
    "web-of-power": _web_of_power,
    "richelieu": _richelieu,
    "rome-is-burning": _rome,
    "conquest-italy": _conquest,
}
