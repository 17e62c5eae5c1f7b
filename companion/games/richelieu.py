"""Richelieu (White Goblin Games, 2012): turn helper, intrigue resolution, end-game scoring, match reducer.

Rule book: the Italian Richelieu book; the rulings of ``docs/rulings.md#richelieu`` win over it.

Pure functions (no I/O besides reading the JSON Schemas once):

- ``actions_allowed(prestige, cardinal)``: 2 actions while the prestige marker is behind the Cardinal, else 1.
- ``plan(doc)``: the turn helper (``companion richelieu actions``): checks a planned turn and prices it.
- ``resolve(doc)``: intrigue resolution (``companion richelieu resolve``).
- ``score(doc)``: end-game scoring (``companion score richelieu``).
- ``richelieu_bonus(counts)`` / ``set_points(n)``: the bonus ladder of the Intrigue sheets.

Prestige is always the *total* (30+ tiles included). The marker on the 30-space track stands on
``prestige % 30`` and the player holds ``prestige // 30`` "30+" tiles; the Cardinal (spaces 0-29, start 7)
is compared with the marker, as on the board. Moves of the Cardinal stop at the ends of the track.

Match events (``EVENT_TYPES``; ``data`` shapes are in ``schemas/richelieu.events.schema.json``):

- ``action`` ``{"player", "action", "space"?}``: one action of the player whose turn it is.
  ``action`` is ``income`` (gain the income level; once a turn), ``place_agent`` (pay the space's value
  0-3 given as ``space``, +2 for the second placement of the turn), ``commission`` (once a turn, only while
  behind the Cardinal: military +1, pay the level reached), ``buy_jewel`` (8, from the city) or
  ``sell_jewel`` (5, to the city), one jewel trade a turn. A turn has 1 or 2 actions, fixed when it starts.
- ``turn.end`` ``{"player"?}``: the turn passes to the next player in seat order.
- ``intrigue.resolve`` ``{"richelieu_card", "faction_card"}``: the two cards of a resolved intrigue box, as in
  ``companion richelieu resolve`` (players, Cardinal, neutral colour and military bonuses come from the
  match). Applies ``resolve()``; the first player takes the winning sheet. After the 13th resolution
  (13 Richelieu and 13 opposing sheets exist) the match ends.
- ``track.adjust`` ``{"player", "track", "delta"}``: a correction, or a board bonus the helper doesn't know
  (``track`` one of prestige, income, military, money, jewels; no track goes below 0).
- ``game.end`` ``{}``: end the match now (e.g. a table stopping early); the final scoring is in the state.

Options: ``start_money`` (default 0: the rule book gives none), ``neutral`` (the neutral colour's name in a
2-player game, default ``"neutral"``), ``military_bonuses`` (``{"space": "prestige"|"income"}``: the
symbols printed on the military track; a marker reaching or passing one advances that track by 1).
"""

from __future__ import annotations

from companion.base.errors import InputError, RuleError, join_path
from companion.base.schemas import check_event_data as check_data, integral, json_path, validate

GAME_ID = "richelieu"
NAME = "Richelieu"
USES_CLOCK = False
MIN_PLAYERS, MAX_PLAYERS = 2, 4
EVENT_TYPES = frozenset({"action", "turn.end", "intrigue.resolve", "track.adjust", "game.end"})

FACTIONS = ("england", "france", "habsburg", "protestants")
SHEET_KINDS = ("richelieu",) + FACTIONS
SHEETS_IN_GAME = {"richelieu": 13, "england": 4, "france": 3, "habsburg": 3, "protestants": 3}
RESOLUTIONS_IN_GAME = 13  # each resolution uses one Richelieu and one opposing sheet
AGENT_SUPPLY = {-2: 2, 1: 3, 2: 3, 3: 2}  # per colour
# The 2-player game: "each player receives 7 agents of another colour (1x -2, 3x 1, 3x 2); these are
# considered as a neutral player". A colour has only three 1s, so the two sets are two colours: the
# neutral player has 14 agents (2x -2, 6x 1, 6x 2), and both sets may stand on one intrigue box.
NEUTRAL_SUPPLY = {-2: 2, 1: 6, 2: 6}
PIECE_VALUE = 3  # Grey Eminence and Queen
TRACK_SPACES = 30  # prestige track 0..29; reaching 30 takes a "30+" tile
CARDINAL_START = 7
JEWEL_SELL, JEWEL_BUY, JEWEL_POINTS = 5, 8, 4
SECOND_PLACEMENT_SURCHARGE = 2
RICHELIEU_FIRST, RICHELIEU_SECOND = 8, 4
TRACKS = ("prestige", "income", "military", "money")
NUMERIC_REWARDS = TRACKS
ACTION_REWARDS = ("place_agent", "corruption", "eminence", "queen")
TURN_ACTIONS = ("income", "place_agent", "commission", "buy_jewel", "sell_jewel")  # (not the tracker's ACTIONS)
JEWELS_PER_PLAYER, JEWELS_IN_CITY = 2, 2


# ---------------------------------------------------------------------------------------------------------
# small rules

def track_position(prestige: int) -> int:
    """Where the prestige marker stands on the board (a 30+ tile per 30 points)."""
    return prestige % TRACK_SPACES


def actions_allowed(prestige: int, cardinal: int) -> int:
    """2 actions when the marker is behind the Cardinal, 1 when level or ahead."""
    return 2 if track_position(prestige) < cardinal else 1


def move_cardinal(position: int, steps: int) -> int:
    return max(0, min(TRACK_SPACES - 1, position + steps))


def set_points(n: int) -> int:
    """Opposing-faction sheets of one faction: 1, 4, 9, 16 for 1-4 sheets."""
    return n * n


def richelieu_bonus(counts: list[int]) -> list[int]:
    """Bonus for Richelieu sheets, one per player (same order).

    Most (at least one) 8, second most 4; a tie for most gives each tied player 4 and no second bonus;
    a tie for second gives nothing. Zero sheets never score.
    """
    out = [0] * len(counts)
    levels = sorted({c for c in counts if c > 0}, reverse=True)
    if not levels:
        return out
    top = [i for i, c in enumerate(counts) if c == levels[0]]
    if len(top) > 1:
        for i in top:
            out[i] = RICHELIEU_SECOND
        return out
    out[top[0]] = RICHELIEU_FIRST
    if len(levels) > 1:
        second = [i for i, c in enumerate(counts) if c == levels[1]]
        if len(second) == 1:
            out[second[0]] = RICHELIEU_SECOND
    return out


def military_bonus_steps(before: int, after: int, bonuses: dict | None) -> dict:
    """Track advances earned by the military marker moving from ``before`` to ``after`` (reach or pass)."""
    gains = {"prestige": 0, "income": 0}
    for space, track in (bonuses or {}).items():
        if before < int(space) <= after:
            gains[track] += 1
    return gains


def _add_military(p: dict, amount: int, bonuses: dict | None) -> dict:
    before = p["military"]
    p["military"] = before + amount
    gains = military_bonus_steps(before, p["military"], bonuses)
    p["prestige"] += gains["prestige"]
    p["income"] += gains["income"]
    return {k: v for k, v in gains.items() if v}


# ---------------------------------------------------------------------------------------------------------
# schema checks for event data (the events schema holds one $defs entry per event type)

# (``check_data``: companion/base/schemas.py ``check_event_data``, which Rome Is Burning uses too)


# ---------------------------------------------------------------------------------------------------------
# turn helper

def _step(p: dict, turn: dict, action: dict, cardinal: int, city: int | None, bonuses: dict | None):
    """Apply one action to player tracks ``p`` (mutated) within ``turn``; returns (step, city jewels)."""
    kind = action["type"]
    if len(turn["done"]) >= turn["allowed"]:
        raise RuleError("no action left this turn ({allowed} allowed)", allowed=turn['allowed'])
    step: dict = {"type": kind}
    if kind == "income":
        if "income" in turn["done"]:
            raise RuleError("income is collected once a turn")
        p["money"] += p["income"]
        step["gain"] = p["income"]
    elif kind == "place_agent":
        space = action.get("space")
        if not isinstance(space, int) or isinstance(space, bool) or not 0 <= space <= 3:
            raise InputError("the space's value must be 0, 1, 2 or 3", "space")
        second = turn["done"].count("place_agent") >= 1
        cost = space + (SECOND_PLACEMENT_SURCHARGE if second else 0)
        if cost > p["money"]:
            raise RuleError("placing costs {cost} but only {money} money is left", cost=cost, money=p['money'])
        p["money"] -= cost
        step.update(cost=cost, face="down" if space else "up")
    elif kind == "commission":
        if "commission" in turn["done"]:
            raise RuleError("a commission is bought once a turn")
        if track_position(p["prestige"]) >= cardinal:
            raise RuleError("a commission needs the prestige marker behind the Cardinal")
        cost = p["military"] + 1
        if cost > p["money"]:
            raise RuleError("the commission costs {cost} but only {money} money is left", cost=cost, money=p['money'])
        p["money"] -= cost
        step["cost"] = cost
        gains = _add_military(p, 1, bonuses)
        if gains:
            step["military_bonus"] = gains
    elif kind in ("buy_jewel", "sell_jewel"):
        if "buy_jewel" in turn["done"] or "sell_jewel" in turn["done"]:
            raise RuleError("one jewel is bought or sold a turn")
        if kind == "sell_jewel":
            if p["jewels"] < 1:
                raise RuleError("no jewel to sell")
            p["jewels"] -= 1
            p["money"] += JEWEL_SELL
            step["gain"] = JEWEL_SELL
            city = None if city is None else city + 1
        else:
            if city is not None and city < 1:
                raise RuleError("no jewel left in the city")
            if p["money"] < JEWEL_BUY:
                raise RuleError("a jewel costs {JEWEL_BUY} but only {money} money is left", JEWEL_BUY=JEWEL_BUY, money=p['money'])
            p["money"] -= JEWEL_BUY
            p["jewels"] += 1
            step["cost"] = JEWEL_BUY
            city = None if city is None else city - 1
    else:  # the schemas list the actions; this guards direct calls
        raise InputError("unknown action {kind!r} (one of {names})", "action", kind=kind, names=', '.join(TURN_ACTIONS))
    turn["done"].append(kind)
    return step, city


def _available(p: dict, turn: dict, cardinal: int, city: int | None) -> dict:
    """What each action would cost or give next (``None`` when the rules refuse it now)."""
    left = turn["allowed"] - len(turn["done"])
    out: dict = {}
    if left <= 0:
        return {a: None for a in TURN_ACTIONS}
    out["income"] = None if "income" in turn["done"] else {"gain": p["income"]}
    surcharge = SECOND_PLACEMENT_SURCHARGE if "place_agent" in turn["done"] else 0
    out["place_agent"] = {"costs": {str(v): v + surcharge for v in range(4) if v + surcharge <= p["money"]}}
    if not out["place_agent"]["costs"]:
        out["place_agent"] = None
    ok = ("commission" not in turn["done"] and track_position(p["prestige"]) < cardinal
          and p["military"] + 1 <= p["money"])
    out["commission"] = {"cost": p["military"] + 1} if ok else None
    traded = "buy_jewel" in turn["done"] or "sell_jewel" in turn["done"]
    can_buy = not traded and p["money"] >= JEWEL_BUY and (city is None or city > 0)
    out["buy_jewel"] = {"cost": JEWEL_BUY} if can_buy else None
    out["sell_jewel"] = {"gain": JEWEL_SELL} if not traded and p["jewels"] > 0 else None
    return out


def plan(doc) -> dict:
    """The turn helper: how many actions, what each costs, and the tracks after the planned actions."""
    validate("richelieu.actions", doc)
    doc = integral(doc)
    p = {k: doc[k] for k in ("prestige", "income", "military", "money")}
    p["jewels"] = doc.get("jewels", 0)
    city = doc.get("city_jewels")
    cardinal = doc["cardinal"]
    turn = {"allowed": actions_allowed(p["prestige"], cardinal), "done": []}
    steps = []
    for i, action in enumerate(doc.get("actions", [])):
        try:
            step, city = _step(p, turn, action, cardinal, city, doc.get("military_bonuses"))
        except (InputError, RuleError) as exc:
            if exc.field == "action":
                exc.field = None  # the action itself
            raise exc.under(f"$.actions[{i}]") from None
        step["money_after"] = p["money"]
        steps.append(step)
    result = dict(p)
    if city is not None:
        result["city_jewels"] = city
    return {
        "actions_allowed": turn["allowed"],
        "behind_cardinal": track_position(doc["prestige"]) < cardinal,
        "steps": steps,
        "actions_left": turn["allowed"] - len(steps),
        "next": _available(p, turn, cardinal, city),
        "result": result,
    }


# ---------------------------------------------------------------------------------------------------------
# intrigue resolution

def _check_cards(players: dict, rcard: dict, fcard: dict, neutral: str | None, where: str,
                 need_full: bool = True) -> None:
    """Rules the schema can't express. ``where`` prefixes paths ("$" for the CLI, "" for event data).
    ``need_full=False``: a form being filled in (the preview) may have no full card yet."""
    def path(*parts):
        return join_path(where, json_path(parts))

    used: dict = {}
    pieces: dict = {}
    full = False
    for key, card in (("richelieu_card", rcard), ("faction_card", fcard)):
        if all(s is not None for s in card["slots"]):
            full = True
        for i, slot in enumerate(card["slots"]):
            if slot is None:
                continue
            if "piece" in slot:
                piece = slot["piece"]
                if piece == "eminence" and key == "richelieu_card":
                    raise InputError("the Grey Eminence stands only on the opposing faction's card",
                                     path(key, "slots", i))
                if piece == "queen" and key == "faction_card":
                    raise InputError("the Queen stands only on the Cardinal's card", path(key, "slots", i))
                if piece in pieces:
                    raise InputError("the {piece:w@rl} is on the board once", path(key, "slots", i), piece=piece)
                pieces[piece] = i
                continue
            who, value = slot["player"], slot["value"]
            if who == neutral and neutral is not None:
                supply = NEUTRAL_SUPPLY
            elif who in players:
                supply = AGENT_SUPPLY
            else:
                raise InputError("unknown player {who!r}", path(key, "slots", i, "player"), who=who)
            n = used.get((who, value), 0) + 1
            if n > supply.get(value, 0):
                have = supply.get(value, 0)
                raise InputError("{who} has {have} {have|agent|agents} of value {value}",
                                 path(key, "slots", i, "value"), who=who, have=have, value=value)
            used[(who, value)] = n
    if not full and need_full:
        raise RuleError("an intrigue is resolved when every space of one of its cards is taken",
                        path("richelieu_card", "slots"))


def card_total(card: dict) -> int:
    total = 0
    for slot in card["slots"]:
        if slot is None:
            continue
        total += PIECE_VALUE if "piece" in slot else slot["value"]
    return total


def placings(card: dict) -> list[tuple[str, int]]:
    """Players with a positive contribution on the card, best first (ties: leftmost agent first)."""
    contribution: dict = {}
    leftmost: dict = {}
    for i, slot in enumerate(card["slots"]):
        if slot is None or "piece" in slot:
            continue
        who = slot["player"]
        contribution[who] = contribution.get(who, 0) + slot["value"]
        leftmost.setdefault(who, i)
    ranked = sorted((w for w, c in contribution.items() if c > 0), key=lambda w: (-contribution[w], leftmost[w]))
    return [(w, contribution[w]) for w in ranked]


def resolve_intrigue(players: dict, cardinal: int, rcard: dict, fcard: dict, neutral: str | None = None,
                     military_bonuses: dict | None = None) -> dict:
    """Resolve checked cards; returns the result with updated copies of ``players``' tracks."""
    faction = fcard["faction"]
    totals = {"richelieu": card_total(rcard), faction: card_total(fcard)}
    winner = "richelieu" if totals["richelieu"] >= totals[faction] else faction  # a tie goes to the Cardinal
    card = rcard if winner == "richelieu" else fcard
    ranked = placings(card)
    first = ranked[0][0] if ranked else None
    second = ranked[1][0] if len(ranked) > 1 else None
    from copy import deepcopy  # here: scoring a game (``companion score``) copies nothing

    out_players = deepcopy(players)
    actions, forfeited, applied = [], [], []
    for place, who in (("first", first), ("second", second)):
        rewards = card["rewards"][place]
        if who is None:
            continue
        if neutral is not None and who == neutral:
            forfeited.append({"place": place, "rewards": rewards})
            continue
        p = out_players[who]
        for r in rewards:
            if r["type"] in NUMERIC_REWARDS:
                if r["type"] == "military":
                    gains = _add_military(p, r["amount"], military_bonuses)
                    if gains:
                        applied.append({"player": who, "type": "military_bonus", "gains": gains})
                else:
                    p[r["type"]] += r["amount"]
                applied.append({"player": who, "place": place, "type": r["type"], "amount": r["amount"]})
            else:
                actions.append({"player": who, "place": place, "type": r["type"], "amount": r["amount"]})
    sheet_to = first if first is not None and first != neutral else None
    new_cardinal = move_cardinal(cardinal, card["rewards"]["cardinal"])
    if winner == "richelieu" and sheet_to is not None:
        marker = track_position(out_players[sheet_to]["prestige"])
        if new_cardinal < marker:
            new_cardinal = marker
    return {
        "winner": winner,
        "totals": totals,
        "contributions": [{"player": w, "value": v} for w, v in ranked],
        "first": first,
        "second": second,
        "sheet": {"kind": winner, "to": sheet_to},
        "rewards": applied,
        "reward_actions": actions,
        "forfeited": forfeited,
        "cardinal": new_cardinal,
        "players": out_players,
    }


def resolve(doc) -> dict:
    """``companion richelieu resolve``: validate the document, then resolve the intrigue."""
    validate("richelieu.resolve", doc)
    doc = integral(doc)
    players = doc["players"]
    neutral = doc.get("neutral")
    if neutral is not None:
        if len(players) != 2:
            raise InputError("a neutral colour plays only in the 2-player game", "$.neutral")
        if neutral in players:
            raise InputError("{neutral!r} is a player, not the neutral colour", "$.neutral", neutral=neutral)
    _check_cards(players, doc["richelieu_card"], doc["faction_card"], neutral, "$")
    result = resolve_intrigue({k: dict(v) for k, v in players.items()}, doc["cardinal"], doc["richelieu_card"],
                              doc["faction_card"], neutral, doc.get("military_bonuses"))
    return result


# ---------------------------------------------------------------------------------------------------------
# end-game scoring

def _row(name: str, p: dict, bonus: int) -> dict:
    """A player's row of the end-game scoring, its place not yet known (None)."""
    held = p["cards"]
    sets = {f: set_points(held.get(f, 0)) for f in FACTIONS}
    jewels = JEWEL_POINTS * p["jewels"]
    total = p["prestige"] + p["income"] + p["military"] + bonus + sum(sets.values()) + jewels
    sheets = sum(held.get(k, 0) for k in SHEET_KINDS)
    return {"player": name, "total": total, "place": None, "money": p["money"], "sheets": sheets,
            "breakdown": {"prestige": p["prestige"], "income": p["income"], "military": p["military"],
                          "richelieu_sheets": bonus, "opposing_sets": sets, "jewels": jewels}}


def _places(rows: list[dict]) -> list[int]:
    """Each row's place: ties on total, then money, then sheets share the place (1 + the rows ahead)."""
    keys = [(r["total"], r["money"], r["sheets"]) for r in rows]
    ahead = sorted(keys, reverse=True)
    return [ahead.index(k) + 1 for k in keys]  # (the first of its equals in that order: after every row ahead)


def _ranked(rows: list[dict]) -> dict:
    """The scoring of placed rows (in seat order): by place, then seat."""
    places = [r["place"] for r in rows]
    out = [rows[i] for i in sorted(range(len(rows)), key=places.__getitem__)]  # (stable: then seat)
    return {"players": out, "winners": [r["player"] for r in out if r["place"] == 1]}


def final_scores(players: list[dict]) -> dict:
    """Score checked players: ``[{"name", "prestige", "income", "military", "money", "jewels", "cards"}]``."""
    bonus = richelieu_bonus([p["cards"].get("richelieu", 0) for p in players])
    rows = [_row(p["name"], p, bonus[i]) for i, p in enumerate(players)]
    for r, place in zip(rows, _places(rows)):
        r["place"] = place
    return _ranked(rows)


# What the summaries of a match's states share: a player's state that no event changed is the same object
# from one state to the next (``_copy_for``), and so are its row of the standings and its marker, kept here
# and handed out again (never changed in place: a stream's patch skips them, and nothing is computed again).
# id(a player's state) -> (that state, the player, its Richelieu bonus, its row placed)
_KEPT: dict = {}
# (prestige, the Cardinal) -> a prestige marker (the same for every player and match: it says no more)
_MARKERS: dict = {}
# id(a state's turn) -> (that turn, the current player's state, the Cardinal, the city's jewels, the summary's turn)
_TURNS: dict = {}
_KEPT_MAX = 256  # (a few tables' matches: the others' parts made again when asked)


def _keep(memo: dict, key: int, entry: tuple) -> None:
    if len(memo) >= _KEPT_MAX:
        memo.clear()
    memo[key] = entry


def _standings_and_markers(state: dict) -> tuple[dict, dict]:
    """``final_scores(_final_rows(state))`` and the prestige markers, from the parts of the states before
    that nothing changed."""
    order, players, cardinal = state["order"], state["players"], state["cardinal"]
    ps = [players[n] for n in order]
    bonus = richelieu_bonus([p["cards"].get("richelieu", 0) for p in ps])
    rows, kept, markers = [], [], {}
    for n, p, b in zip(order, ps, bonus):
        k = _KEPT.get(id(p))
        if k is None or k[0] is not p or k[1] != n or k[2] != b:
            k = None
        rows.append(_row(n, p, b) if k is None else k[3])
        kept.append(k)
        mark = _MARKERS.get((p["prestige"], cardinal))
        if mark is None:
            mark = {"track": track_position(p["prestige"]), "tiles_30": p["prestige"] // TRACK_SPACES,
                    "behind_cardinal": track_position(p["prestige"]) < cardinal}
            _keep(_MARKERS, (p["prestige"], cardinal), mark)
        markers[n] = mark
    for i, place in enumerate(_places(rows)):
        r = rows[i]
        if r["place"] != place:
            if r["place"] is None:  # (a row made now, not handed out yet)
                r["place"] = place
            else:
                r = rows[i] = {**r, "place": place}
        k = kept[i]
        if k is None or k[3] is not r:
            _keep(_KEPT, id(ps[i]), (ps[i], order[i], bonus[i], r))
    return _ranked(rows), markers


def score(doc) -> dict:
    """``companion score richelieu``: end-game scoring."""
    validate("richelieu.score", doc)
    doc = integral(doc)
    players = doc["players"]
    seen = {}
    for i, p in enumerate(players):
        if p["name"] in seen:
            raise InputError("{name!r} is listed twice", f"$.players[{i}].name", name=p['name'])
        seen[p["name"]] = i
    jewels_in_play = JEWELS_PER_PLAYER * len(players) + JEWELS_IN_CITY
    held = 0
    for i, p in enumerate(players):
        held += p["jewels"]
        if held > jewels_in_play:
            raise InputError("{held} jewels in all; {n_players} players play with {jewels_in_play} (2 each and 2 in the city)", f"$.players[{i}].jewels", held=held, n_players=len(players), jewels_in_play=jewels_in_play)
    for kind, limit in SHEETS_IN_GAME.items():
        total = 0
        for i, p in enumerate(players):
            total += p["cards"].get(kind, 0)
            if total > limit:
                raise InputError("{total} {kind:w@rl} sheets in all, the game has {limit}", f"$.players[{i}].cards.{kind}", total=total, kind=kind, limit=limit)
    return final_scores(players)


# ---------------------------------------------------------------------------------------------------------
# the match reducer

def _check_options(players: list[str], options: dict) -> dict:
    if not isinstance(players, list) or not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise InputError("Richelieu is played by 2 to 4 players", "players")
    opts = options or {}
    if not isinstance(opts, dict):
        raise InputError("must be an object", "options")
    start = opts.get("start_money", 0)
    if not isinstance(start, int) or isinstance(start, bool) or start < 0:
        raise InputError("must be a whole number >= 0", "start_money")
    neutral = opts.get("neutral", "neutral") if len(players) == 2 else None
    if neutral is not None and (not isinstance(neutral, str) or not neutral or neutral in players):
        raise InputError("must be a name that no player uses", "neutral")
    bonuses = opts.get("military_bonuses") or {}
    if not isinstance(bonuses, dict) or any(
            not (isinstance(k, str) and k.isdigit() and int(k) > 0) or v not in ("prestige", "income")
            for k, v in bonuses.items()):
        raise InputError('must map military spaces ("3") to "prestige" or "income"', "military_bonuses")
    return {"start_money": start, "neutral": neutral, "military_bonuses": bonuses}


def _new_turn(state: dict, index: int) -> dict:
    name = state["order"][index]
    p = state["players"][name]
    return {"player": name, "allowed": actions_allowed(p["prestige"], state["cardinal"]), "done": []}


def initial_state(players, options) -> dict:
    opts = _check_options(players, options or {})
    state = {
        "order": list(players),
        "players": {name: {"prestige": 0, "income": 1, "military": 0, "money": opts["start_money"],
                           "jewels": JEWELS_PER_PLAYER, "cards": {k: 0 for k in SHEET_KINDS}}
                    for name in players},
        "cardinal": CARDINAL_START,
        "city_jewels": JEWELS_IN_CITY,
        "neutral": opts["neutral"],
        "military_bonuses": opts["military_bonuses"],
        "current": 0,
        "turn": None,
        "turns": 1,
        "resolved": 0,
        "resolutions": [],
        "ended": False,
        "final": None,
    }
    state["turn"] = _new_turn(state, 0)
    return state


def _player(state: dict, data: dict, field: str = "player") -> str:
    who = data.get(field)
    if who not in state["players"]:
        raise InputError("unknown player {who!r}", field, who=who)
    return who


def _end(state: dict) -> None:
    state["ended"] = True
    state["final"] = final_scores(_final_rows(state))


def _final_rows(state: dict) -> list[dict]:
    return [{"name": n, **{k: state["players"][n][k] for k in ("prestige", "income", "military", "money",
                                                                "jewels", "cards")}}
            for n in state["order"]]


def _copy_for(kind: str, state: dict, data: dict) -> dict:
    """The state's copy that ``apply`` changes, and no more: always the top level; for a track correction
    or an action (most of a table's events) the players' map and that one player (an action also the turn
    and its list of actions done); for an intrigue every player's tracks, their sheets and the list of
    resolutions; a turn's end and the game's end replace what they change whole. What is not copied is
    shared with ``state`` and never changed in place."""
    s = dict(state)
    if kind in ("track.adjust", "action"):
        who = data.get("player")
        if who in state["players"]:
            s["players"] = dict(state["players"])
            s["players"][who] = dict(state["players"][who])
        if kind == "action":
            s["turn"] = {**state["turn"], "done": list(state["turn"]["done"])}
    elif kind == "intrigue.resolve":
        s["players"] = {n: {**p, "cards": dict(p["cards"])} for n, p in state["players"].items()}
        s["resolutions"] = list(state["resolutions"])
    return s


_DEFS = {"action": "action", "turn.end": "turn_end", "intrigue.resolve": "intrigue_resolve",
         "track.adjust": "track_adjust", "game.end": "game_end"}  # (each event type's $defs in its schema)


def apply(state: dict, event: dict) -> dict:
    kind = event.get("type")
    data = event.get("data") or {}
    if not isinstance(data, dict):
        raise InputError("must be an object", "data")
    if kind not in EVENT_TYPES:
        raise InputError("unknown event type {kind!r}", "type", kind=kind)
    if state["ended"]:
        raise RuleError("the match has ended", "type")
    check_data("richelieu.events", _DEFS[kind], data)
    data = integral(data)
    s = _copy_for(kind, state, data)
    if kind == "action":
        who = _player(s, data)
        if who != s["turn"]["player"]:
            raise RuleError("it is {player}'s turn", "player", player=s['turn']['player'])
        action = {"type": data["action"], **({"space": data["space"]} if "space" in data else {})}
        if data["action"] == "place_agent" and "space" not in data:
            raise InputError("placing an agent needs the space's value", "space")
        try:
            step, s["city_jewels"] = _step(s["players"][who], s["turn"], action, s["cardinal"],
                                           s["city_jewels"], s["military_bonuses"])
        except RuleError as exc:
            raise exc.again(RuleError, exc.field or "action") from None
        s["turn"]["last"] = step
    elif kind == "turn.end":
        if "player" in data:
            who = _player(s, data)
            if who != s["turn"]["player"]:
                raise RuleError("it is {player}'s turn", "player", player=s['turn']['player'])
        s["current"] = (s["current"] + 1) % len(s["order"])
        s["turns"] += 1
        s["turn"] = _new_turn(s, s["current"])
    elif kind == "intrigue.resolve":
        rcard, fcard = data["richelieu_card"], data["faction_card"]
        _check_cards(s["players"], rcard, fcard, s["neutral"], "")
        faction = fcard["faction"]
        if sum(1 for r in s["resolutions"] if r["faction"] == faction) >= SHEETS_IN_GAME[faction]:
            raise RuleError("all {SHEETS_IN_GAME} {faction:w@rl} sheets have been resolved already",
                            "faction_card.faction", SHEETS_IN_GAME=SHEETS_IN_GAME[faction], faction=faction)
        tracks = {n: {k: p[k] for k in TRACKS} for n, p in s["players"].items()}
        result = resolve_intrigue(tracks, s["cardinal"], rcard, fcard, s["neutral"], s["military_bonuses"])
        for n, t in result["players"].items():
            s["players"][n].update(t)
        if result["sheet"]["to"] is not None:
            s["players"][result["sheet"]["to"]]["cards"][result["winner"]] += 1
        s["cardinal"] = result["cardinal"]
        s["resolved"] += 1
        s["resolutions"].append({k: result[k] for k in ("winner", "totals", "first", "second", "sheet",
                                                          "reward_actions", "forfeited", "cardinal")}
                                | {"faction": faction})
        if s["resolved"] >= RESOLUTIONS_IN_GAME:
            _end(s)
    elif kind == "track.adjust":
        who = _player(s, data)
        track, delta = data["track"], data["delta"]
        p = s["players"][who]
        if p[track] + delta < 0:
            raise RuleError("{who}'s {track:w@rl} would go below 0", "delta", who=who, track=track)
        if track == "jewels":
            if s["city_jewels"] - delta < 0:
                raise RuleError("no jewel left in the city", "delta")
            s["city_jewels"] -= delta
        if track == "income" and p[track] + delta < 1:
            raise RuleError("the income track starts at 1", "delta")
        p[track] += delta
    elif kind == "game.end":
        _end(s)
    return s


def is_ended(state: dict) -> bool:
    return bool(state["ended"])


def final_ranking(state: dict) -> list[dict]:
    """The end-game scoring's places (total, then money, then sheets; still equal, shared), in the one
    shape of ``companion.games.contract.Placing``; before the end, as if the game ended now."""
    standings = state["final"] or final_scores(_final_rows(state))
    return [{"player": r["player"], "place": r["place"], "objective": False, "eliminated": False}
            for r in standings["players"]]


def final_points(state: dict) -> dict | None:
    """Each player's end-game total, or None before the end (what a play log receives as the score)."""
    if not is_ended(state) or not state["final"]:
        return None
    return {r["player"]: r["total"] for r in state["final"]["players"]}


def summary(state: dict) -> dict:
    """The standings if the game ended now (or its final scoring), the markers, the turn and what its player
    can do next. The parts nothing changed since the state before are that state's summary's own objects."""
    standings, markers = _standings_and_markers(state)
    if state["final"]:
        standings = state["final"]
    if list(state["players"]) != state["order"]:  # (the markers in the players' map's order: always the seats')
        markers = {n: markers[n] for n in state["players"]}
    out = {
        "turn": _turn(state),
        "cardinal": state["cardinal"],
        "city_jewels": state["city_jewels"],
        "intrigues_resolved": state["resolved"],
        "intrigues_left": RESOLUTIONS_IN_GAME - state["resolved"],
        "markers": markers,
        "standings": standings,
        "final": state["ended"],
    }
    return out


def _turn(state: dict) -> dict:
    """The summary's turn: whose, the actions allowed, done and left, and (before the end) what each costs."""
    turn, ended = state["turn"], state["ended"]
    p = state["players"][turn["player"]] if not ended else None
    k = _TURNS.get(id(turn))
    if k is not None and k[0] is turn and k[1] is p and k[2] == state["cardinal"] and k[3] == state["city_jewels"]:
        return k[4]
    out = {"player": turn["player"], "allowed": turn["allowed"], "done": list(turn["done"]),
           "left": turn["allowed"] - len(turn["done"])}
    if not ended:
        out["next"] = _available(p, turn, state["cardinal"], state["city_jewels"])
    _keep(_TURNS, id(turn), (turn, p, state["cardinal"], state["city_jewels"], out))
    return out


def preview(state, data) -> dict:
    """What resolving an intrigue with these cards (``data`` as in ``intrigue.resolve``) would do, without
    storing anything: the result, each player's changes, the Cardinal before and after, the end
    (``complete: true``); or, while no card is full yet, ``complete: false`` with the agents placed per card."""
    if state.get("ended"):
        raise RuleError("the match has ended", "type")
    # a form being filled in is no error: until one card is full the preview says how far it is
    # (the agents placed so far are checked all the same: a colour's supply, the pieces' cards)
    check_data("richelieu.events", "intrigue_resolve", data)
    data = integral(data)
    rcard, fcard = data["richelieu_card"], data["faction_card"]
    if not any(all(x is not None for x in c["slots"]) for c in (rcard, fcard)):
        _check_cards(state["players"], rcard, fcard, state["neutral"], "", need_full=False)
        return {"complete": False,
                "placed": {k: sum(1 for x in c["slots"] if x is not None) for k, c in
                           (("richelieu_card", rcard), ("faction_card", fcard))},
                "slots": {"richelieu_card": len(rcard["slots"]), "faction_card": len(fcard["slots"])},
                "cardinal": {"before": state["cardinal"], "after": state["cardinal"]}, "ends_match": False}
    after = apply(state, {"type": "intrigue.resolve", "data": data})
    changes = {}
    for name in state["order"]:
        b, a = state["players"][name], after["players"][name]
        delta = {k: a[k] - b[k] for k in ("prestige", "income", "military", "money") if a[k] != b[k]}
        cards = {k: a["cards"][k] - b["cards"][k] for k in a["cards"] if a["cards"][k] != b["cards"][k]}
        if cards:
            delta["sheets"] = cards
        if delta:
            changes[name] = delta
    return {"complete": True, "result": after["resolutions"][-1], "changes": changes,
            "cardinal": {"before": state["cardinal"], "after": after["cardinal"]}, "ends_match": after["ended"]}


# ---------------------------------------------------------------------------------------------------------
# what the table sees (docs/rulings.md#behind-the-screens)
# Book: "Durante la partita, i giocatori conservano i loro Agenti, il denaro e i segnalini Gioiello dietro il
# loro schermo". A player's money and jewels are theirs to see: the other phones and the TV see the tracks on
# the board (prestige, income, military, the sheets won, the city's jewels), never the amounts behind a
# screen, until the game ends. The agents' own values are never recorded before an intrigue is resolved (the
# book turns them face up then); the space an agent is placed on, and what it costs, is on the board.

BEHIND_SCREEN = ("money", "jewels")
# refusals that would tell the amount behind a player's screen: only that player's phone (or an organiser)
# is told the reason (companion/web/seats.py)
SECRET_REFUSAL_EVENT_TYPES = frozenset({"action", "track.adjust"})
SECRET_REFUSAL_TEMPLATES = frozenset({
    "placing costs {cost} but only {money} money is left",
    "the commission costs {cost} but only {money} money is left",
    "a jewel costs {JEWEL_BUY} but only {money} money is left",
    "no jewel to sell",
    "{who}'s {track:w@rl} would go below 0",
})


def public_view(state: dict, viewer: str | None) -> dict:
    """The state as ``viewer``'s phone may see it: the other players' money and jewels are ``None`` (behind
    their screens; ``hidden`` lists those tracks); everything is shown once the game has ended."""
    if state.get("ended"):
        return state
    out = dict(state)
    out["players"] = {n: p if n == viewer else {**p, **{k: None for k in BEHIND_SCREEN}}
                      for n, p in state["players"].items()}
    out["hidden"] = list(BEHIND_SCREEN)
    out["viewer"] = viewer
    return out


def public_summary(summary: dict, state: dict, viewer: str | None) -> dict:
    """The summary as ``viewer`` may see it: the standings "if the game ended now" count what is on the board
    for every player (prestige, income, military, sheets) and the jewels only of the viewer's own; money and the
    total only for the viewer; no places (the others' money and jewels decide them), in seat order. The actions the current player
    can afford are told only to that player's phone: other phones get what the rules allow whatever is
    behind the screen (``next_public: true``)."""
    if state.get("ended"):
        return summary
    out = dict(summary)
    rows = []
    standing = {x["player"]: x for x in summary["standings"]["players"]}
    for n in state["order"]:
        r = standing[n]
        board = r["total"] - r["breakdown"]["jewels"]
        if n == viewer:  # the place is compared with the others' hidden totals: not before the end
            rows.append({**r, "place": None, "board_total": board})
        else:
            rows.append({"player": n, "total": None, "place": None, "money": None, "sheets": r["sheets"],
                         "breakdown": {**r["breakdown"], "jewels": None}, "board_total": board})
    out["standings"] = {"players": rows, "winners": [], "hidden": list(BEHIND_SCREEN)}
    turn = summary.get("turn")
    if turn and "next" in turn and turn["player"] != viewer:
        out["turn"] = {**turn, "next": _public_next(state), "next_public": True}
    return out


_PUBLIC_NEXT: tuple = (None, None)  # the last state asked about and its actions as the other phones see them


def _public_next(state: dict) -> dict:
    """What the current player can do as every other phone is told it: what the rules allow whatever is
    behind the screen. The same for each of them: made once for the last state asked about (every audience
    of an event asks about the same state)."""
    global _PUBLIC_NEXT
    last, nxt = _PUBLIC_NEXT
    if last is state:
        return nxt
    p = dict(state["players"][state["turn"]["player"]])
    p["money"], p["jewels"] = 10**9, 1
    nxt = _available(p, state["turn"], state["cardinal"], state["city_jewels"])
    _PUBLIC_NEXT = (state, nxt)
    return nxt


def public_event(event: dict, viewer: str | None) -> dict | None:
    """An event as ``viewer`` may see it: a correction of another player's money or jewels says which track,
    not by how much (``hidden: ["delta"]``)."""
    data = event.get("data") or {}
    if event["type"] == "track.adjust" and data.get("track") in BEHIND_SCREEN and data.get("player") != viewer:
        return {**event, "data": {k: v for k, v in data.items() if k != "delta"}, "hidden": ["delta"]}
    return event
