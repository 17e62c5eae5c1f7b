"""The territory-conquest game on a map of Italy (``conquest-italy``): set-up, dice combat, moves,
reinforcements, secret objectives, elimination and the final ranking. Pure, no I/O.

Rule book: the conquest game's Italian book; the rulings of ``docs/rulings.md#conquest-of-italy`` win over it:

- Combat: see :mod:`companion.games.conquest_odds` (attacker 1..min(3, A-1) dice, defender min(3, D),
  ties to the defender).
- Reinforcements at the start of a turn: floor(territories / 3) + the bonus of every macro-region held
  whole + a traded set of three territory cards (basil + mozzarella + tomato = 10; the other sets from
  the map file, a club setting) + 2 for every traded card whose city the player holds. Nobody has more
  than 125 units on the map: the excess is not placed.
- Set-up: 3/4/5/6 players start with 35/30/25/20 units; the cities are dealt one card each (from the last
  player in turn order backwards), one unit on each; nobody may hold more than half of a macro-region
  (a deal that breaks it is refused and swaps are proposed, as the book describes); the rest is placed
  5 units at a time in turn order.
- Final ranking: the values of one's objective cities held at the end; ties broken by the values of the
  other cities held; still equal, a shared place (1, 2, 2, 4). Completing the objective during the match
  wins at once (place 1); the others are ranked by the same rule.

Decisions where the book is silent (``docs/rulings.md#conquest-of-italy``): the +2 per held city applies to every
traded set; only the sets the map gives a value can be traded; the units moved into a conquered city are
``move`` (clamped to what can leave) or by default as many as the attacking dice.

The turn (docs/rulings.md, "Conquest: the turn"): once the map is tracked (deal and placements recorded),
``clock.start`` begins the first seat's turn and each ``turn.end`` the next seat still in. A turn is:
``reinforce`` once, at its start, exactly the units due (an optional trade of three cards first); then any
number of ``combat`` from the player's own cities; then at most one ``move``, after which no more attacks;
the turn's card (one, only after a conquest) with ``card.draw`` or in ``turn.end``; then ``turn.end``.
Anything else is refused (RuleError, naming the rule) and changes nothing. ``territory.set`` (a correction)
and ``objective.set`` are taken at any time. A player who loses their last city is out: their seat is
skipped (:func:`out_of_turn`, which the match fold passes to the clock), their cards go to whoever took the
city, they rank after every player still in. The match clock (phases, final rounds and rolls) is
``companion/core/clock.py``; a match the clock ends (a final roll) is ended here too (:func:`end_by_clock`).

Match events (``data`` shapes in ``schemas/conquest-italy.events.schema.json``): ``setup.deal``,
``setup.place``, ``territory.set``, ``reinforce``, ``combat``, ``move``, ``card.draw``,
``objective.set``, ``objective.completed``, and the clock's ``clock.start`` and ``turn.end``, which both
the clock and this reducer apply. The server rolls combat dice by calling :func:`fill_dice` with its RNG
and stores them in the event, and draws a turn's card with :func:`fill_turn_end`, so the fold stays
deterministic.
"""

from __future__ import annotations

from companion.base.errors import InputError, RuleError, join_path
from companion.games import conquest_map
from companion.games.conquest_map import JOKER_PREFIX, GameMap, check_map, map_of, map_svg  # noqa: F401
from companion.games.conquest_odds import DiceError, defend_dice_count, max_attack_dice, resolve

GAME_ID = "conquest-italy"
NAME = "Conquest of Italy"
USES_CLOCK = True  # played against the match clock (the book's "DURATA PARTITA")
EVENT_TYPES = frozenset({
    "setup.deal", "setup.place", "territory.set", "reinforce", "combat", "move", "card.draw",
    "objective.set", "objective.completed", "clock.start", "turn.end",
})
# The secret objectives on the web (docs/developing.md, "Secrets"): only the objective's own phone (its seat)
# or an organiser records ``objective.set`` for a player or takes it back with undo; a refusal of these
# events, which may name the objective's cities, is told to anyone else without its reason.
OWN_SECRET_EVENT_TYPES = frozenset({"objective.set"})
# an objective recorded before its owner's phone sat (a guest on the seat) is replaced by ``replace: true``:
# an organiser's, or the owner's once its seat is confirmed (docs/rulings.md#seats)
SECRET_RESETS = {"objective.set": "replace"}
SECRET_REFUSAL_EVENT_TYPES = frozenset({"objective.set", "objective.completed", "reinforce", "card.draw", "turn.end"})
# of those, the refusals that may tell a secret (the cities of an objective, the cards of a hand); any
# refusal of objective.set and objective.completed is one
SECRET_REFUSAL_TEMPLATES = frozenset({
    "{player} does not hold {names} of their objective",
    "{player} does not have the card {c!r}",
    "{card!r} is in a player's hand, not in the deck",
    "{player} has had this turn's card ({card}): one card a turn",
})
SECRET_REFUSAL_ALWAYS = frozenset({"objective.set", "objective.completed"})
# Hand corrections of the board outside the rules (docs/rulings.md#conquest-corrections): only an organiser
# records them. {event type: the data field that makes the event one (None: the event itself)}; the match
# service refuses them to anyone else (403 naming that field), and the player's page does not offer them.
ORGANISER_EVENTS = {"territory.set": None, "clock.start": "override"}
# the events of one player's turn: refused out of turn (and, by the match fold, while a final roll is owed)
TURN_EVENT_TYPES = frozenset({"reinforce", "combat", "move", "card.draw"})
# the steps of a turn
REINFORCE, ATTACK, MOVED, CARD = "reinforce", "attack", "moved", "card"
STARTING_UNITS = {3: 35, 4: 30, 5: 25, 6: 20}
MIN_PLAYERS, MAX_PLAYERS = 3, 6
# what a result entered by hand may say beside the places (companion/core/match.py, check_result)
RESULT_FLAGS = frozenset({"objective", "eliminated"})
MAX_ON_MAP = 125
PLACE_STEP = 5
MIXED_SET = 10
HELD_CITY_BONUS = 2


# -- small helpers -------------------------------------------------------------------------------

def _key(prefix: str, key: str) -> str:
    """A JSON-path step for an object key: ``owned.Anna`` or ``owned["La Spezia"]``."""
    if isinstance(key, str) and key.isidentifier():  # (what json_path writes for such a key, without importing it for each city)
        return join_path(prefix, "$." + key)
    from companion.base.schemas import json_path

    return join_path(prefix, json_path([key]))


def _int(value, field: str, least: int = 0, most: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError("must be a whole number", field)
    if value < least or (most is not None and value > most):
        if most is not None:
            raise InputError("must be between {least} and {most}", field, least=least, most=most)
        raise InputError("must be at least {least}", field, least=least)
    return value


def _str(value, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise InputError("must be a non-empty string", field)
    return value


def _obj(value, field: str) -> dict:
    if not isinstance(value, dict):
        raise InputError("must be an object", field)
    return value


def _list(value, field: str) -> list:
    if not isinstance(value, list):
        raise InputError("must be a list", field)
    return value


def _city(gm: GameMap, value, field: str) -> str:
    _str(value, field)
    if value not in gm.city:
        raise InputError("unknown city {value!r}", field, value=value)
    return value


def _cities(gm: GameMap, value, field: str, allow_empty: bool = True) -> list[str]:
    _list(value, field)
    if not value and not allow_empty:
        raise InputError("must name at least one city", field)
    seen = set()
    for n, c in enumerate(value):
        _city(gm, c, f"{field}[{n}]")
        if c in seen:
            raise InputError("{c!r} is listed twice", f"{field}[{n}]", c=c)
        seen.add(c)
    return list(value)


# -- set-up --------------------------------------------------------------------------------------

def starting_units(n_players: int) -> int:
    if n_players not in STARTING_UNITS:
        raise InputError("the game is for {MIN_PLAYERS} to {MAX_PLAYERS} players, not {n_players}", "players", MIN_PLAYERS=MIN_PLAYERS, MAX_PLAYERS=MAX_PLAYERS, n_players=n_players)
    return STARTING_UNITS[n_players]


def deal_counts(players: list[str], n_cities: int) -> dict[str, int]:
    """Cities each player is dealt. The cards go one at a time from the last player in turn order
    backwards ("in senso anti-orario partendo dall'ultimo"), so the last players get the extra ones:
    4 players, 42 cities -> 10, 10, 11, 11."""
    k = len(players)
    order = list(reversed(players))
    return {p: n_cities // k + (1 if pos < n_cities % k else 0) for pos, p in enumerate(order)}


def _shuffle(items: list, rng) -> list:
    out = list(items)
    for i in range(len(out) - 1, 0, -1):  # Fisher-Yates with randint only (the RNG contract)
        j = rng.randint(0, i)
        out[i], out[j] = out[j], out[i]
    return out


def region_limit(gm: GameMap, region: str) -> int:
    """The most cities of a region one player may hold after the deal: half, rounded down (at least 1,
    or a one-city region could never be dealt)."""
    return max(1, gm.majority_limit(region))


def deal_violations(owner: dict[str, str], gm: GameMap) -> list[dict]:
    """Every (player, region) where the player holds more than half of the region."""
    out = []
    for r in gm.regions:
        counts: dict[str, int] = {}
        for c in r["cities"]:
            p = owner.get(c)
            if p is not None:
                counts[p] = counts.get(p, 0) + 1
        limit = region_limit(gm, r["name"])
        for p in sorted(counts, key=lambda p: (-counts[p], p)):
            if counts[p] > limit:
                out.append({"player": p, "region": r["name"], "holds": counts[p], "limit": limit,
                            "excess": counts[p] - limit})
    return out


def fix_deal(owner: dict[str, str], gm: GameMap, rng=None) -> tuple[dict[str, str], list[dict]]:
    """Resolve the majority violations of a deal with swaps, the rule book's way: a city that makes
    a player exceed half of its region is chosen at random; the deck is reshuffled and turned from
    that card on until the first *useful* city: one of another player such that, exchanged, neither
    player exceeds half of any region. Without ``rng`` the choice is deterministic (map order), which
    makes a reproducible proposal. Returns the new ownership and the swaps
    ``[{"player", "gives", "other", "gets"}]``; raises RuleError if no swap can help (odd club maps)."""
    owner = dict(owner)
    swaps: list[dict] = []
    count: dict[tuple[str, str], int] = {}
    for c, p in owner.items():
        key = (p, gm.region_of(c))
        count[key] = count.get(key, 0) + 1

    def fits(p, region):
        return count.get((p, region), 0) + 1 <= region_limit(gm, region)

    guard = len(owner) * len(owner)
    while True:
        bad = deal_violations(owner, gm)
        if not bad or guard <= 0:
            break
        guard -= 1
        v = bad[0]
        p, region = v["player"], v["region"]
        mine = [c for c in gm.region[region]["cities"] if owner.get(c) == p]
        if rng is not None:
            mine = _shuffle(mine, rng)
        deck = list(gm.cities) if rng is None else _shuffle(gm.cities, rng)
        done = False
        for x in mine:
            start = deck.index(x)
            for y in deck[start + 1:] + deck[:start]:
                q = owner.get(y)
                ry = gm.region_of(y)
                if q is None or q == p or ry == region:
                    continue
                if fits(q, region) and fits(p, ry):
                    owner[x], owner[y] = q, p
                    for key, d in (((p, region), -1), ((q, region), 1), ((q, ry), -1), ((p, ry), 1)):
                        count[key] = count.get(key, 0) + d
                    swaps.append({"player": p, "gives": x, "other": q, "gets": y})
                    done = True
                    break
            if done:
                break
        if not done:
            raise RuleError("no swap can bring {p} down to {limit} cities of {region}", "owner", p=p, limit=v['limit'], region=region)
    return owner, swaps


def deal(players: list[str], gm: GameMap, rng=None) -> tuple[dict[str, str], list[dict]]:
    """Shuffle the territory cards, deal them (from the last player backwards) and fix the majority
    rule with swaps. Returns (owner {city: player}, swaps)."""
    if rng is None:
        import random

        rng = random.SystemRandom()
    deck = _shuffle(gm.cities, rng)
    order = list(reversed(players))
    owner = {c: order[n % len(order)] for n, c in enumerate(deck)}
    return fix_deal(owner, gm, rng)


def check_dealt(owner, players: list[str], gm: GameMap, field: str = "owner") -> None:
    """Refuse a deal as the cards came out (before the majority rule) that misses a city, names an unknown
    city or player, or gives a player the wrong number of cities."""
    _obj(owner, field)
    for c, p in owner.items():
        if c not in gm.city:
            raise InputError("unknown city {c!r}", _key(field, c), c=c)
        if p not in players:
            raise InputError("unknown player {p!r}", _key(field, c), p=p)
    missing = [c for c in gm.cities if c not in owner]
    if missing:
        raise InputError("every city is dealt: {n_missing} missing ({names}{value})", field, n_missing=len(missing), names=', '.join(missing[:4]), value=', ...' if len(missing) > 4 else '')
    want = deal_counts(players, len(gm.cities))
    for p in players:
        got = sum(1 for c in owner if owner[c] == p)
        if got != want[p]:
            raise RuleError("{p} must be dealt {want} cities, not {got} (one card each, from the last player backwards)", field, p=p, want=want[p], got=got)


def check_deal(owner: dict[str, str], players: list[str], gm: GameMap, field: str = "owner") -> None:
    """Refuse a deal that misses a city, names an unknown player, gives the wrong number of cities
    or breaks the majority rule (proposing the swaps that fix it)."""
    check_dealt(owner, players, gm, field)
    bad = deal_violations(owner, gm)
    if bad:
        v = bad[0]
        try:
            _, swaps = fix_deal(owner, gm)
            swaps = ", ".join(f"{s['gives']} ({s['player']}) ⇄ {s['gets']} ({s['other']})" for s in swaps)
        except RuleError:
            swaps = ""
        values = dict(player=v["player"], holds=v["holds"], n_cities=len(gm.region[v["region"]]["cities"]),
                      region=v["region"], limit=v["limit"])
        if swaps:
            raise RuleError("{player} holds {holds} of the {n_cities} cities of {region} (at most {limit}); swap {swaps}",
                            field, **values, swaps=swaps)
        raise RuleError("{player} holds {holds} of the {n_cities} cities of {region} (at most {limit})", field, **values)


# -- reinforcements ------------------------------------------------------------------------------

def classify_set(cards: list[str], gm: GameMap) -> str:
    """The kind of a set of three cards: "mixed", "three_basil", ..., "joker_two_alike",
    "joker_two_different", "two_jokers", "three_jokers", or "invalid" (two alike + one different)."""
    symbols = [gm.card_symbol(c) for c in cards]
    jokers = symbols.count("pizza")
    rest = [s for s in symbols if s != "pizza"]
    if jokers == 0:
        if len(set(rest)) == 1:
            return "three_" + rest[0]
        if len(set(rest)) == 3:
            return "mixed"
        return "invalid"
    if jokers == 1:
        return "joker_two_alike" if rest[0] == rest[1] else "joker_two_different"
    return "two_jokers" if jokers == 2 else "three_jokers"


def check_cards(gm: GameMap, cards, field: str) -> list[str]:
    _list(cards, field)
    if len(cards) != 3:
        raise InputError("a set is three cards, not {n_cards}", field, n_cards=len(cards))
    for n, c in enumerate(cards):
        _str(c, f"{field}[{n}]")
        if c not in gm.cards:
            if c.startswith(JOKER_PREFIX):
                raise InputError("unknown card {c!r} (jokers are {jokers})", f"{field}[{n}]", c=c,
                                 jokers=", ".join(JOKER_PREFIX + a for a in gm.airports))
            raise InputError("unknown card {c!r}", f"{field}[{n}]", c=c)
        if c in cards[:n]:
            raise InputError("card {c!r} is listed twice", f"{field}[{n}]", c=c)
    return list(cards)


def trade_value(cards: list[str], held: set[str] | frozenset[str], gm: GameMap, field: str = "trade") -> dict:
    """Units for trading three (checked) cards: the set's value plus 2 per card whose city is held."""
    kind = classify_set(cards, gm)
    if kind == "invalid":
        raise RuleError("two alike and one different is not a set (one of each, three alike, or with a "
                        "pizza joker)", field)
    value = MIXED_SET if kind == "mixed" else gm.sets.get(kind)
    if value is None:
        raise RuleError("a {value} set has no value on this map (a club setting in the map's \"sets\")", field, value=kind.replace('_', ' '))
    held_cities = [gm.card_city(c) for c in cards if gm.card_city(c) in held]
    bonus = HELD_CITY_BONUS * len(held_cities)
    return {"cards": list(cards), "kind": kind, "value": value, "held_cities": held_cities,
            "held_bonus": bonus, "total": value + bonus}


def reinforcements(gm: GameMap, territories, units_on_map: int, trade: list[str] | None = None) -> dict:
    """Units a player receives at the start of a turn (all arguments already checked)."""
    held = frozenset(territories)
    base = len(held) // 3
    regions = [{"name": r["name"], "bonus": r["bonus"]} for r in gm.regions if held.issuperset(r["cities"])]
    region_bonus = sum(r["bonus"] for r in regions)
    traded = trade_value(trade, held, gm) if trade else None
    total = base + region_bonus + (traded["total"] if traded else 0)
    room = max(0, MAX_ON_MAP - units_on_map)
    placeable = min(total, room)
    return {"territories": len(held), "base": base, "regions": regions, "region_bonus": region_bonus,
            "trade": traded, "total": total, "units_on_map": units_on_map, "max_on_map": MAX_ON_MAP,
            "placeable": placeable, "not_placed": total - placeable}


def reinforcements_doc(doc) -> dict:
    """``companion reinforcements FILE`` (schemas/conquest-italy.reinforcements.schema.json)."""
    from companion.base.schemas import validate

    validate("conquest-italy.reinforcements", doc)
    gm = _doc_map(doc)
    terr = doc["territories"]
    if isinstance(terr, dict):
        for c, n in terr.items():
            _city(gm, c, _key("$.territories", c))
        cities = list(terr)
        units = sum(int(n) for n in terr.values())  # int(): JSON Schema lets 2.0 pass as an integer
        if units > MAX_ON_MAP:
            raise InputError("the territories hold {units} units: nobody has more than {MAX_ON_MAP} on the map",
                             "$.territories", units=units, MAX_ON_MAP=MAX_ON_MAP)
        if "units_on_map" in doc and doc["units_on_map"] != units:
            raise InputError("the territories hold {units} {units|unit|units}, not {units_on_map}", "$.units_on_map", units=units, units_on_map=doc['units_on_map'])
    else:
        cities = _cities(gm, terr, "$.territories")
        if "units_on_map" not in doc:
            raise InputError("needed when territories is a list (the 125-unit cap counts every unit on the map)",
                             "$.units_on_map")
        units = int(doc["units_on_map"])
        if units < len(cities):
            raise InputError("{n_cities} {n_cities|territory holds|territories hold} at least {n_cities} {n_cities|unit|units}", "$.units_on_map", n_cities=len(cities))
    trade = doc.get("trade") or None
    if trade is not None:
        check_cards(gm, trade, "$.trade")
    try:
        out = reinforcements(gm, cities, units, trade)
    except RuleError as exc:
        raise exc.again(InputError, "$.trade") from None
    return {"player": doc.get("player"), "map": gm.name, **out}


# -- final ranking -------------------------------------------------------------------------------

def rank(players: list[str], gm: GameMap, owned: dict[str, list[str]], objectives: dict[str, list[str]],
         completed_by: str | None = None, eliminated=None) -> dict:
    """The final ranking (arguments already checked): objective points, then other points; a player who
    completed the objective during the match is first; an eliminated player is ranked after every player
    still in (``eliminated`` in the order they went out: the later, the better; without an order, eliminated
    players share a place). Shared places: 1, 2, 2, 4."""
    order = [p for p in (eliminated or ()) if p in players]
    eliminated = set(order) | {p for p in players if not owned.get(p)}
    rows = []
    for p in players:
        held = set(owned.get(p, ()))
        objective = objectives.get(p) or []
        obj_pts = sum(gm.value(c) for c in objective if c in held)
        other = sum(gm.value(c) for c in held if c not in objective)
        rows.append({"player": p, "objective_points": obj_pts, "other_points": other,
                     "objective_cities": len(objective),
                     "objective_cities_held": sum(1 for c in objective if c in held),
                     "cities": len(held), "objective": p == completed_by, "eliminated": p in eliminated})

    def key(r):
        out_at = order.index(r["player"]) if r["player"] in order else -1
        return (0 if r["objective"] else 1, 1 if r["eliminated"] else 0, -out_at,
                -r["objective_points"], -r["other_points"])

    rows.sort(key=lambda r: (key(r), players.index(r["player"])))
    for n, r in enumerate(rows):
        r["place"] = rows[n - 1]["place"] if n and key(rows[n - 1]) == key(r) else n + 1
    ordered = [{"player": r["player"], "place": r["place"], **{k: v for k, v in r.items()
                                                               if k not in ("player", "place")}} for r in rows]
    return {
        "game": GAME_ID,
        "map": gm.name,
        "objective_completed_by": completed_by,
        "players": ordered,
        "ranking": [r["player"] for r in ordered],
        "results": [{"player": r["player"], "place": r["place"], "objective": r["objective"],
                     "eliminated": r["eliminated"]} for r in ordered],
    }


def _doc_map(doc: dict) -> GameMap:
    if doc.get("map") is None:
        return conquest_map.default_map()
    m = doc["map"]
    return conquest_map.compile_map(m, cities=conquest_map._count_cities(m), where="$.map")


def score(doc) -> dict:
    """``companion score conquest-italy FILE`` (schemas/conquest-italy.score.schema.json)."""
    from companion.base.schemas import validate

    validate("conquest-italy.score", doc)
    players = doc["players"]
    for n, p in enumerate(players):
        if p in players[:n]:
            raise InputError("{p!r} is named twice", f"$.players[{n}]", p=p)
    gm = _doc_map(doc)
    owned: dict[str, list[str]] = {}
    holder: dict[str, str] = {}
    for section in ("owned", "objectives"):
        for p in doc[section]:
            if p not in players:
                raise InputError("{p!r} is not one of the players", _key(f"$.{section}", p), p=p)
        for p in players:
            if p not in doc[section]:
                if section == "owned":
                    raise InputError("missing {p!r} (every player has an entry; [] for none)", f"$.{section}", p=p)
                raise InputError("missing the objective of {p!r}", f"$.{section}", p=p)
    for p in players:
        field = _key("$.owned", p)
        owned[p] = _cities(gm, doc["owned"][p], field)
        for n, c in enumerate(owned[p]):
            if c in holder:
                raise InputError("{c!r} is held by {holder} too", f"{field}[{n}]", c=c, holder=holder[c])
            holder[c] = p
    objectives = {p: _cities(gm, doc["objectives"][p], _key("$.objectives", p), allow_empty=False)
                  for p in players}
    completed = doc.get("objective_completed_by")
    if completed is not None:
        if completed not in players:
            raise InputError("{completed!r} is not one of the players", "$.objective_completed_by", completed=completed)
        missing = [c for c in objectives[completed] if c not in owned[completed]]
        if missing:
            raise InputError("{completed} does not hold {names} of their objective",
                             "$.objective_completed_by", completed=completed, names=', '.join(missing))
    return rank(players, gm, owned, objectives, completed)


# -- the match reducer ---------------------------------------------------------------------------

def initial_state(players, options) -> dict:
    if not isinstance(players, list) or not all(isinstance(p, str) and p for p in players):
        raise InputError("must be a list of player names", "players")
    n = len(players)
    start = starting_units(n)
    options = options or {}
    map_doc = options.get("map")
    if map_doc is not None:
        conquest_map.compile_map(map_doc, cities=conquest_map._count_cities(map_doc)
                                 if isinstance(map_doc, dict) else None, where="map")
        gm = map_of(map_doc)
        if len(gm.cities) < n:
            raise InputError("the map has {n_cities} cities, fewer than the players", "map", n_cities=len(gm.cities))
    return {
        "players": list(players),
        "map": map_doc,
        "phase": "deal",
        "starting_units": start,
        "owner": {},
        "units": {},
        "reserve": {p: start for p in players},
        "next_placer": None,
        "hands": {p: [] for p in players},
        "objectives": {},
        "objective_completed": None,
        "eliminated": [],
        "eliminations": [],       # [{"player", "by", "city", "seq"}]: who took each eliminated player's last city
        "conquests": {p: 0 for p in players},
        "last_combat": None,
        "started": False,         # clock.start seen: the turns run
        "override": False,        # the clock was started before the set-up ended, on purpose
        "turn": None,             # {"player", "step", "card"} while the map is tracked and the turns run
        "turn_conquests": 0,      # the current player's conquests in this turn (0 again at turn.end)
        "under": [],              # traded cards, under the deck in the order they went there
        "ended_by": None,         # {"reason", "player"} when the match clock ended the match
    }


def is_ended(state) -> bool:
    if state["objective_completed"] is not None or state.get("ended_by") is not None:
        return True
    return state["phase"] == "play" and len(state["eliminated"]) >= len(state["players"]) - 1


def setup_over(state) -> bool:
    """The set-up is done (the deal and every placement recorded): an armed match clock starts now
    (``docs/rulings.md#the-clock-of-a-tournament-round``). A table that does not record the map stays in
    the deal: its clock is started by hand."""
    return state["phase"] == "play"


def end_by_clock(state, ended_by: dict | None) -> dict:
    """The match clock ended the match (a final roll): the game is over too, so its summary says so and
    carries the ranking. Pure; an ended game is returned as it is."""
    if is_ended(state):
        return state
    return {**state, "ended_by": dict(ended_by or {"reason": "clock", "player": None}), "turn": None}


def conquests_this_turn(state, player: str) -> int:
    """Territories ``player`` has conquered in the turn in progress (0 when it is not their turn)."""
    turn = state.get("turn")
    if turn is None or turn["player"] != player:
        return 0
    return state["turn_conquests"]


def out_of_turn(state) -> list[str]:
    """The players whose seats the turn order skips (eliminated), for the match clock."""
    return list(state["eliminated"])


def current_turn(state) -> dict | None:
    """Whose turn it is and what the turn's step allows: ``{"player", "step", "conquests", "card",
    "card_owed", "actions"}`` (``actions``: the event types the rules take from that player now), or None
    when the turns are not tracked (the clock has not started, the map is not tracked, or the match is over)."""
    turn = state.get("turn")
    if turn is None or is_ended(state):
        return None
    p, step = turn["player"], turn["step"]
    owed = _card_owed(state)
    actions = []
    nothing_due = step == REINFORCE and _due(state, p) == 0
    if step == REINFORCE:
        actions.append("reinforce")
    if step == ATTACK or nothing_due:  # nothing to place: the combats may begin at once
        actions += ["combat", "move"]
    if owed:
        actions.append("card.draw")
    if step != REINFORCE or nothing_due:
        actions.append("turn.end")
    return {"player": p, "step": step, "conquests": state["turn_conquests"], "card": turn["card"],
            "card_owed": owed, "actions": actions}


def _player(state, value, field: str = "player", alive: bool = True) -> str:
    _str(value, field)
    if value not in state["players"]:
        raise InputError("unknown player {value!r}", field, value=value)
    if alive and value in state["eliminated"]:
        raise RuleError("{value} has been eliminated", field, value=value)
    return value


def _phase(state, *phases):
    if state["phase"] not in phases:
        if len(phases) > 1:
            raise RuleError("not now: the match is in its {phase:w@phase} phase (this needs the {want:w@phase} or {want2:w@phase} phase)",
                            "type", phase=state["phase"], want=phases[0], want2=phases[1])
        raise RuleError("not now: the match is in its {phase:w@phase} phase (this needs the {want:w@phase} phase)", "type",
                        phase=state["phase"], want=phases[0])


def _due(state, player: str) -> int:
    return reinforcements(map_of(state["map"]), held(state, player), units_on_map(state, player))["placeable"]


def _deck(state) -> list[str]:
    """The cards in the deck (in nobody's hand), the ones traded under it last, in the order they went."""
    gm = map_of(state["map"])
    taken = {c for hand in state["hands"].values() for c in hand}
    under = [c for c in state["under"] if c not in taken]
    return [c for c in gm.cards if c not in taken and c not in under] + under


def _card_owed(state) -> bool:
    """The current player has conquered this turn and not yet had the turn's card (one a turn)."""
    turn = state.get("turn")
    return bool(turn and turn["card"] is None and state["turn_conquests"] > 0 and _deck(state))


def _turn(state, player: str, field: str = "player") -> dict:
    """The turn in progress, refusing an event of the turn by anyone else or before the turns start."""
    _phase(state, "play")
    turn = state["turn"]
    if turn is None:
        raise RuleError("the turns have not started: the first turn begins when the clock starts", "type")
    if player != turn["player"]:
        raise RuleError("it is {player}'s turn, not {player2}'s (the turn's events are its player's)", field, player=turn['player'], player2=player)
    return turn


def _step_allows(state, what: str) -> None:
    """Refuse ``what`` (reinforce, combat, move) where the turn's step does not allow it, naming the rule."""
    turn = state["turn"]
    p, step = turn["player"], turn["step"]
    if what == "reinforce":
        if step != REINFORCE:
            raise RuleError("{p} has reinforced this turn already: reinforcements come once, at the start of the turn", "type", p=p)
        return
    if step == REINFORCE:
        if _due(state, p) == 0:
            # nothing to place (the 125 cap, or fewer than 3 cities and no region): the combats may begin
            # at once, as after an empty reinforcement (docs/rulings.md#conquest-the-turn)
            return
        raise RuleError("{p} reinforces first: the turn begins with the reinforcements, then the combats",
                        "type", p=p)
    if step == CARD:
        raise RuleError("{p} has drawn the turn's card: the card comes at the end of the turn, only the end of the turn is left", "type", p=p)
    if step == MOVED:
        if what == "move":
            raise RuleError("{p} has moved this turn already: at most one move a turn", "type", p=p)
        raise RuleError("{p} has moved this turn: the move ends the attacks (at most one move, after the combats)", "type", p=p)


def _seat_after(state, player: str) -> str | None:
    """The next player in seat order after ``player`` who is still in."""
    players = state["players"]
    k = len(players)
    i = players.index(player)
    for step in range(1, k + 1):
        q = players[(i + step) % k]
        if q not in state["eliminated"]:
            return q
    return None


def _new_turn(state, player: str | None) -> None:
    state["turn"] = None if player is None else {"player": player, "step": REINFORCE, "card": None}
    state["turn_conquests"] = 0


def _check_draw(state, player: str, card, field: str) -> str:
    """A turn's card: ``card`` (a recorded draw) must be in the deck and not under the other cards."""
    gm = map_of(state["map"])
    _str(card, field)
    if card not in gm.cards:
        raise InputError("unknown card {card!r}", field, card=card)
    turn = state["turn"]
    if state["turn_conquests"] < 1:
        raise RuleError("{player} has conquered nothing this turn: a card comes only with a conquest", field, player=player)
    if turn["card"] is not None:
        raise RuleError("{player} has had this turn's card ({card}): one card a turn", field, player=player, card=turn['card'])
    for q, hand in state["hands"].items():
        if card in hand:  # whose hand is not said: the hands are secret
            raise RuleError("{card!r} is in a player's hand, not in the deck", field, card=card)
    deck = _deck(state)
    under = [c for c in state["under"] if c in deck]
    if card in under and deck[0] != card:
        above = len(deck) - len(under) + under.index(card)
        raise RuleError("{card!r} was traded and went under the deck: {above} {above|card comes|cards come} before it", field, card=card, above=above)
    return card


def _take_card(state, player: str, card: str) -> None:
    state["hands"] = {**state["hands"], player: state["hands"][player] + [card]}
    state["under"] = [c for c in state["under"] if c != card]
    state["turn"] = {**state["turn"], "card": card, "step": CARD}


def draw_card(state, rng=None) -> str | None:
    """The box draws the turn's card: one of the deck's cards above the traded ones, chosen by ``rng``
    (the OS's secure source by default), else the first traded card; None when the deck is empty."""
    deck = _deck(state)
    if not deck:
        return None
    top = [c for c in deck if c not in state["under"]]
    if not top:
        return deck[0]
    if rng is None:
        import random

        rng = random.SystemRandom()
    return top[rng.randint(0, len(top) - 1)]


def fill_turn_end(state, data: dict, rng=None) -> dict:
    """For the server: a ``turn.end`` event's data with ``conquered`` (the conquests the Pi counted in the
    turn) and, when the turn has earned a card and none was recorded, ``card`` drawn by the box."""
    _obj(data, "data")
    out = dict(data)
    player = out.get("player")
    turn = current_turn(state)
    if turn is None or player != turn["player"]:
        if "conquered" not in out and isinstance(player, str):
            out["conquered"] = conquests_this_turn(state, player)
        return out  # the reducer (and the clock) judge it
    out.setdefault("conquered", state["turn_conquests"])
    if "card" not in out and turn["card_owed"]:
        out["card"] = draw_card(state, rng)
    return out


# Every handler checks the shape of ``data`` first (InputError), then what the rules allow now
# (RuleError), so a malformed event is reported as malformed whatever the state of the match.

def _placements(gm, data, field="placements") -> dict[str, int]:
    if field not in data:
        raise InputError("required: {city: units}", field)
    placements = _obj(data[field], field)
    for c, n in placements.items():
        path = _key(field, c)
        _city(gm, c, path)
        _int(n, path, least=1, most=MAX_ON_MAP)
    return placements


def _own_all(state, placements, player, field="placements") -> None:
    for c in placements:
        if state["owner"].get(c) != player:
            raise RuleError("{c} is not {player}'s", _key(field, c), c=c, player=player)


def _dice_shape(data, key) -> None:
    if key not in data:
        raise InputError("the dice are part of the event (the server rolls them)", key)
    dice = _list(data[key], key)
    if not 1 <= len(dice) <= 3:
        raise InputError("1 to 3 dice", key)
    for n, face in enumerate(dice):
        if isinstance(face, bool) or not isinstance(face, int) or not 1 <= face <= 6:
            raise InputError("a die shows 1 to 6, not {face!r}", f"{key}[{n}]", face=face)


def _next_placer(state, after_index: int) -> str | None:
    players = state["players"]
    k = len(players)
    for step in range(1, k + 1):
        p = players[(after_index + step) % k]
        if state["reserve"][p] > 0:
            return p
    return None


def units_on_map(state, player: str) -> int:
    return sum(n for c, n in state["units"].items() if state["owner"].get(c) == player)


def held(state, player: str) -> list[str]:
    return [c for c, p in state["owner"].items() if p == player]


def _eliminations(state) -> list[str]:
    """Players holding nothing once the game is under way are eliminated (in the order it happens);
    a correction that gives one a city again takes it back."""
    if state["phase"] != "play":
        return state["eliminated"]
    holding = set(state["owner"].values())
    out = [p for p in state["eliminated"] if p not in holding]
    out += [p for p in state["players"] if p not in holding and p not in out]
    return out


def apply(state, event) -> dict:
    t = event.get("type")
    data = event.get("data") or {}
    if not isinstance(data, dict):
        raise InputError("must be an object", "data")
    if t not in EVENT_TYPES:
        raise InputError("unknown event type {t!r} for {GAME_ID}", "type", t=t, GAME_ID=GAME_ID)
    if is_ended(state):
        raise RuleError("the match is over", "type")
    gm = map_of(state["map"])
    new = dict(state)
    handler = _HANDLERS[t]
    handler(new, gm, data)
    if new["owner"] is not state["owner"]:
        new["eliminated"] = _eliminations(new)
        if new["eliminated"] != state["eliminated"]:
            gone = [p for p in new["eliminated"] if p not in state["eliminated"]]
            said = [e for e in state.get("eliminations", []) if e["player"] in new["eliminated"]]
            if gone:
                hands = dict(new["hands"])
                for p in gone:
                    # the cards of an eliminated player go to whoever took their last city
                    city = next((c for c, q in state["owner"].items() if q == p and new["owner"].get(c) != p), None)
                    taker = new["owner"][city] if city is not None else None
                    if taker is not None and taker != p:
                        hands[taker] = hands[taker] + hands[p]
                    hands[p] = []
                    # said on the phones, in the history and on the TV (docs/rulings.md#conquest-elimination)
                    said.append({"player": p, "by": taker, "city": city, "seq": event.get("seq")})
                new["hands"] = hands
            new["eliminations"] = said
            turn = new.get("turn")
            if turn is not None and turn["player"] in new["eliminated"]:
                _new_turn(new, _seat_after(new, turn["player"]))  # a correction put the current player out
    return new


def _on_deal(s, gm, data):
    owner = _obj(data.get("owner"), "owner")
    for n, sw in enumerate(_list(data.get("swaps", []), "swaps")):  # what the Pi swapped (history only)
        if not isinstance(sw, dict) or not all(isinstance(sw.get(k), str) for k in ("player", "gives", "other", "gets")):
            raise InputError("a swap is {player, gives, other, gets}", f"swaps[{n}]")
    for c, p in owner.items():
        _city(gm, c, _key("owner", c))
        _player(s, p, _key("owner", c), alive=False)
    _phase(s, "deal")
    if s["started"]:
        raise RuleError("the clock has started without a recorded deal: the deal and the placements come before "
                        "the clock starts", "type")
    check_deal(owner, s["players"], gm, "owner")
    s["owner"] = {c: owner[c] for c in gm.cities}
    s["units"] = {c: 1 for c in gm.cities}
    counts = deal_counts(s["players"], len(gm.cities))
    reserve = {}
    for p in s["players"]:
        if counts[p] > s["starting_units"]:
            raise RuleError("{p} is dealt {counts} cities but starts with {starting_units} units", "owner", p=p, counts=counts[p], starting_units=s['starting_units'])
        reserve[p] = s["starting_units"] - counts[p]
    s["reserve"] = reserve
    s["next_placer"] = _next_placer(s, -1)
    s["phase"] = "place" if s["next_placer"] else "play"


def _on_place(s, gm, data):
    player = _player(s, data.get("player"))
    placements = _placements(gm, data)
    _phase(s, "place")
    if player != s["next_placer"]:
        raise RuleError("it is {next_placer}'s turn to place units", "player", next_placer=s['next_placer'])
    _own_all(s, placements, player)
    due = min(PLACE_STEP, s["reserve"][player])
    total = sum(placements.values())
    if total != due:
        raise RuleError("{player} places {due} {due|unit|units} now ({PLACE_STEP} at a time), not {total}", "placements", player=player, due=due, PLACE_STEP=PLACE_STEP, total=total)
    units = dict(s["units"])
    for c, n in placements.items():
        units[c] += n
    s["units"] = units
    s["reserve"] = {**s["reserve"], player: s["reserve"][player] - due}
    s["next_placer"] = _next_placer(s, s["players"].index(player))
    if s["next_placer"] is None:
        s["phase"] = "play"


def _on_territory_set(s, gm, data):
    city = _city(gm, data.get("city"), "city")
    player = _player(s, data.get("player"), alive=False)
    n = _int(data.get("units"), "units", least=1, most=MAX_ON_MAP)
    _phase(s, "place", "play")
    s["owner"] = {**s["owner"], city: player}
    s["units"] = {**s["units"], city: n}


def _on_reinforce(s, gm, data):
    player = _player(s, data.get("player"))
    placements = _placements(gm, data)
    trade = data.get("trade") or None
    if trade is not None:
        check_cards(gm, trade, "trade")
    _turn(s, player)
    _step_allows(s, "reinforce")
    _own_all(s, placements, player)
    if trade is not None:
        hand = s["hands"][player]
        for n, c in enumerate(trade):
            if c not in hand:
                raise RuleError("{player} does not have the card {c!r}", f"trade[{n}]", player=player, c=c)
    due = reinforcements(gm, held(s, player), units_on_map(s, player), trade)
    total = sum(placements.values())
    if total != due["placeable"]:
        if due["not_placed"]:
            raise RuleError("{player} places {placeable} {placeable|unit|units} now ({lost} over the {MAX_ON_MAP}-unit "
                            "cap {lost|is|are} lost), not {total}", "placements", player=player, placeable=due["placeable"],
                            lost=due["not_placed"], MAX_ON_MAP=MAX_ON_MAP, total=total)
        raise RuleError("{player} places {placeable} {placeable|unit|units} now, not {total}", "placements",
                        player=player, placeable=due["placeable"], total=total)
    units = dict(s["units"])
    for c, n in placements.items():
        units[c] += n
    s["units"] = units
    if trade is not None:
        s["hands"] = {**s["hands"], player: [c for c in s["hands"][player] if c not in trade]}
        s["under"] = [c for c in s["under"] if c not in trade] + list(trade)  # traded cards go under the deck
    s["turn"] = {**s["turn"], "step": ATTACK}


def _attack_target(s, gm, data) -> tuple[str, str, str]:
    src = _city(gm, data.get("from"), "from")
    dst = _city(gm, data.get("to"), "to")
    attacker = s["owner"][src]
    if "player" in data:
        _player(s, data["player"])
        if data["player"] != attacker:
            raise RuleError("{src} is {attacker}'s, not {player}'s", "from", src=src, attacker=attacker, player=data['player'])
    if s["owner"][dst] == attacker:
        raise RuleError("{dst} is already {attacker}'s", "to", dst=dst, attacker=attacker)
    if gm.can_attack(src, dst) is None:
        raise RuleError("{src} cannot attack {dst}: no border, sea route or air link (airport to airport)", "to", src=src, dst=dst)
    if s["units"][src] < 2:
        raise RuleError("{src} has 1 unit: one must stay home, none can attack", "from", src=src)
    _turn(s, attacker, "player" if "player" in data else "from")
    _step_allows(s, "combat")
    return src, dst, attacker


def _dice_error(exc: DiceError):
    """A die's face is malformed input; a number of dice the units don't allow is refused by the rules."""
    if exc.field and "[" in exc.field:
        return InputError(exc.template, exc.field, **exc.params)
    return RuleError(exc.template, exc.field, **exc.params)


def fill_dice(state, data: dict, rng=None) -> dict:
    """For the server: a ``combat`` event's data with the dice rolled by ``rng`` where missing
    (``dice`` = how many attacking dice, default the most allowed). Checks the attack first, so a
    refused attack rolls nothing."""
    _phase(state, "play")
    if is_ended(state):
        raise RuleError("the match is over", "type")
    gm = map_of(state["map"])
    _obj(data, "data")
    src, dst, _ = _attack_target(state, gm, data)
    a, d = state["units"][src], state["units"][dst]
    out = {k: v for k, v in data.items() if k != "dice"}
    try:
        r = resolve(a, d, data.get("attack_dice"), data.get("defend_dice"), dice=data.get("dice"), rng=rng)
    except DiceError as exc:
        raise _dice_error(exc) from None
    out["attack_dice"] = data.get("attack_dice") or r["attacker_dice"]
    out["defend_dice"] = data.get("defend_dice") or r["defender_dice"]
    return out


def _on_combat(s, gm, data):
    _city(gm, data.get("from"), "from")
    _city(gm, data.get("to"), "to")
    if "player" in data:
        _player(s, data["player"])
    for key in ("attack_dice", "defend_dice"):
        _dice_shape(data, key)
    move = data.get("move")
    if move is not None:
        _int(move, "move", least=1)
    _phase(s, "play")
    src, dst, attacker = _attack_target(s, gm, data)
    defender = s["owner"][dst]
    a, d = s["units"][src], s["units"][dst]
    try:
        r = resolve(a, d, data["attack_dice"], data["defend_dice"])
    except DiceError as exc:
        raise _dice_error(exc) from None
    units = dict(s["units"])
    units[src] = r["attacker_left"]
    units[dst] = r["defender_left"]
    result = {"attacker": attacker, "defender": defender, "from": src, "to": dst,
              "via": gm.can_attack(src, dst), **r, "moved": 0}
    if r["conquered"]:
        room = r["attacker_left"] - 1
        moved = min(move, room) if move is not None else min(len(r["attacker_dice"]), room)
        units[src] -= moved
        units[dst] = moved
        s["owner"] = {**s["owner"], dst: attacker}
        s["conquests"] = {**s["conquests"], attacker: s["conquests"][attacker] + 1}
        s["turn_conquests"] += 1
        result["moved"] = moved
    s["units"] = units
    s["last_combat"] = result
    if s["turn"]["step"] == REINFORCE:  # nothing was due: the reinforcement is over (an empty one)
        s["turn"] = {**s["turn"], "step": ATTACK}


def _on_move(s, gm, data):
    src = _city(gm, data.get("from"), "from")
    dst = _city(gm, data.get("to"), "to")
    n = _int(data.get("units"), "units", least=1)
    if "player" in data:
        _player(s, data["player"])
    _phase(s, "play")
    player = s["owner"][src]
    if "player" in data:
        if data["player"] != player:
            raise RuleError("{src} is {player}'s, not {player2}'s", "from", src=src, player=player, player2=data['player'])
    if s["owner"][dst] != player:
        raise RuleError("{dst} is not {player}'s: units move only between one's own cities", "to", dst=dst, player=player)
    if dst not in gm.neighbours[src]:
        raise RuleError("{src} and {dst} do not border (land or sea)", "to", src=src, dst=dst)
    if n > s["units"][src] - 1:
        raise RuleError("{src} can move at most {most} {most|unit|units} (one unit stays)", "units", src=src,
                        most=s["units"][src] - 1)
    _turn(s, player, "player" if "player" in data else "from")
    _step_allows(s, "move")
    s["units"] = {**s["units"], src: s["units"][src] - n, dst: s["units"][dst] + n}
    s["turn"] = {**s["turn"], "step": MOVED}


def _on_card_draw(s, gm, data):
    player = _player(s, data.get("player"))
    card = _str(data.get("card"), "card")
    if card not in gm.cards:
        raise InputError("unknown card {card!r}", "card", card=card)
    _turn(s, player)
    _check_draw(s, player, card, "card")
    _take_card(s, player, card)


def _on_clock_start(s, gm, data):
    override = data.get("override", False)
    if not isinstance(override, bool):
        raise InputError("must be true or false (true: start the clock before the set-up is over, on purpose)",
                         "override")
    if s["started"]:
        raise RuleError("the clock has started already", "type")
    if s["phase"] == "place":
        if not override:
            left = sum(s["reserve"].values())
            raise RuleError("the set-up is not over: {left} {left|unit is|units are} still to place ({next_placer} places next); the "
                            "clock starts when every unit is placed (an organiser's phone can start it before, on purpose)", "type", left=left, next_placer=s['next_placer'])
        s["phase"] = "play"  # what was not placed is not placed
        s["reserve"] = {p: 0 for p in s["players"]}
        s["next_placer"] = None
    s["started"] = True
    s["override"] = bool(override)
    if s["phase"] == "play":
        _new_turn(s, next(p for p in s["players"] if p not in s["eliminated"]))


def _on_turn_end(s, gm, data):
    player = _player(s, data.get("player"))
    conquered = data.get("conquered")
    if conquered is not None:
        _int(conquered, "conquered")
    card = data.get("card")
    if card is not None:
        _str(card, "card")
        if card not in gm.cards:
            raise InputError("unknown card {card!r}", "card", card=card)
    if s["phase"] == "deal":
        return  # the map is not tracked: the clock alone keeps the turns
    turn = _turn(s, player)
    if turn["step"] == REINFORCE and _due(s, player) > 0:
        raise RuleError("{player} has not reinforced: the turn begins with the reinforcements ({due} {due|unit|units})",
                        "type", player=player, due=_due(s, player))
    done = s["turn_conquests"]
    if conquered is not None and conquered != done and (conquered < 2 or done < 2):
        # "2 or more" is all the clock asks of a turn with two conquests or more (the box's long press)
        raise RuleError("{player} conquered {done} {done|territory|territories} this turn, not {conquered}", "conquered", player=player, done=done, conquered=conquered)
    if card is not None:
        _check_draw(s, player, card, "card")
        _take_card(s, player, card)
    elif _card_owed(s):
        raise RuleError("{player} conquered this turn: the turn ends with its card (the box draws it at the end of the turn, or record the card drawn first)", "card", player=player)
    _new_turn(s, _seat_after(s, player))


def _on_objective_set(s, gm, data):
    player = _player(s, data.get("player"))
    cities = _cities(gm, data.get("cities"), "cities", allow_empty=False)
    replace = data.get("replace", False)
    if not isinstance(replace, bool):
        raise InputError("must be true or false", "replace")
    if replace and player not in s["objectives"]:
        raise RuleError("{player} has no objective to replace", "replace", player=player)
    if player in s["objectives"] and not replace:
        raise RuleError("{player} already has an objective (undo to change it)", "player", player=player)
    s["objectives"] = {**s["objectives"], player: cities}


def _on_objective_completed(s, gm, data):
    player = _player(s, data.get("player"))
    if s["phase"] == "deal":
        # The table does not track territories here: the players' word is all the Pi has.
        s["objective_completed"] = player
        return
    _phase(s, "play")
    objective = s["objectives"].get(player)
    if objective is not None:
        missing = [c for c in objective if s["owner"].get(c) != player]
        if missing:
            raise RuleError("{player} does not hold {names} of their objective", "player", player=player, names=', '.join(missing))
    s["objective_completed"] = player


_HANDLERS = {
    "setup.deal": _on_deal,
    "setup.place": _on_place,
    "territory.set": _on_territory_set,
    "reinforce": _on_reinforce,
    "combat": _on_combat,
    "move": _on_move,
    "card.draw": _on_card_draw,
    "objective.set": _on_objective_set,
    "objective.completed": _on_objective_completed,
    "clock.start": _on_clock_start,
    "turn.end": _on_turn_end,
}


# -- views ---------------------------------------------------------------------------------------

def final_score(state) -> dict:
    """The ranking of a (finished) match in the shape :func:`score` gives it."""
    gm = map_of(state["map"])
    owned = {p: held(state, p) for p in state["players"]}
    out = rank(state["players"], gm, owned, state["objectives"], state["objective_completed"],
               state["eliminated"])
    missing = [p for p in state["players"] if p not in state["objectives"]]
    if missing:
        out["note"] = "no objective recorded for " + ", ".join(missing) + ": all their cities count as other points"
    return out


def final_points(state) -> dict | None:
    """Each player's points at the end (the objective's cities and the others, as the ranking counts them),
    or None before the end (what a play log receives as the score)."""
    if not is_ended(state):
        return None
    return {r["player"]: r["objective_points"] + r["other_points"] for r in final_score(state)["players"]}


def final_ranking(state) -> list[dict]:
    """The players of a (finished) match best first, as ``score()["results"]``: ``player``, ``place``
    (shared places 1, 2, 2, 4), ``objective`` (completed during the match), ``eliminated`` (the one
    shape of ``companion.games.contract.Placing``; the points are in ``final_score``). This is what
    the club season reads (``companion/services/seasons.py``)."""
    return final_score(state)["results"]


# (id(a match's players), a player) -> (those players, what the player's summary row is made of, the row)
_ROWS: dict = {}


def summary(state) -> dict:
    """What every phone may see (no secret objective)."""
    gm = map_of(state["map"])
    # each player's cities and units in one pass over the map (``held`` and ``units_on_map``, for all at once)
    owner = state["owner"]
    cities_of: dict = {p: [] for p in state["players"]}
    units_of = dict.fromkeys(state["players"], 0)
    for c, p in owner.items():
        if p in cities_of:
            cities_of[p].append(c)
    for c, n in state["units"].items():
        p = owner.get(c)
        if p in units_of:
            units_of[p] += n
    players = []
    play = state["phase"] == "play"
    for p in state["players"]:
        cities = cities_of[p]
        on_map = units_of[p]
        # a player whose row nothing changed keeps the row of the state before (the same object, never changed
        # in place: a stream's patch skips it, and nothing is computed again)
        facts = (gm, tuple(cities), on_map, play, len(state["hands"][p]),
                 0 if play else state["reserve"][p], state["conquests"][p], p in state["objectives"],
                 p in state["eliminated"])
        kept = _ROWS.get((id(state["players"]), p))
        if kept is not None and kept[0] is state["players"] and kept[1] == facts:
            players.append(kept[2])
            continue
        due = reinforcements(gm, cities, on_map) if play else None
        if not cities:
            regions = []
        elif due is not None:  # (the regions it holds whole: what its reinforcements count)
            regions = [r["name"] for r in due["regions"]]
        else:
            mine = frozenset(cities)
            regions = [r["name"] for r in gm.regions if mine.issuperset(r["cities"])]
        players.append({
            "player": p,
            "territories": len(cities),
            "units": on_map,
            "regions": regions,
            "value": sum(map(gm.values.__getitem__, cities)),
            "cards": len(state["hands"][p]),
            "reserve": state["reserve"][p] if state["phase"] != "play" else 0,
            "reinforcements": due["placeable"] if due else None,
            # (the whole calculation, as GET .../conquest/reinforcements answers without a trade: a phone
            # draws it from the view instead of asking on each turn)
            "reinforcements_now": due,
            "conquests": state["conquests"][p],
            "objective_set": p in state["objectives"],
            "eliminated": p in state["eliminated"],
        })
        if len(_ROWS) >= 256:  # (a few tables' matches at a time: the others' rows made again when asked)
            _ROWS.clear()
        _ROWS[(id(state["players"]), p)] = (state["players"], facts, players[-1])
    ended = is_ended(state)
    return {
        "phase": state["phase"],
        "map": gm.name,
        "next_placer": state["next_placer"] if state["phase"] == "place" else None,
        "placement_due": (min(PLACE_STEP, state["reserve"][state["next_placer"]])
                          if state["phase"] == "place" and state["next_placer"] else None),
        "players": players,
        "last_combat": state["last_combat"],
        "objective_completed": state["objective_completed"],
        "eliminated": list(state["eliminated"]),
        "turn": current_turn(state),
        "clock_override": bool(state.get("override")),
        "ended": ended,
        "ended_by": state.get("ended_by"),
        "ranking": final_score(state) if ended else None,
    }


def public_view(state, viewer: str | None) -> dict:
    """The state as ``viewer``'s phone may see it: every secret objective removed except the
    viewer's own (with its progress), and the territory cards in the other players' hands (their number
    is in the summary; ``hands`` holds the viewer's own only, and the turn's card drawn by another player
    is ``True``: docs/rulings.md#conquest-hidden-information). Once the match is over everything is turned
    face up."""
    out = dict(state)
    mine = state["objectives"].get(viewer) if viewer is not None else None
    if not is_ended(state):
        out["objectives"] = {viewer: list(mine)} if mine is not None else {}
        out["hands"] = {viewer: list(state["hands"][viewer])} if viewer in state["hands"] else {}
        out["hands_hidden"] = True
        turn = state.get("turn")
        if turn is not None and turn.get("card") is not None and turn["player"] != viewer:
            out["turn"] = {**turn, "card": True}
    if mine is not None:  # the viewer's own objective, with its progress (after the end too: its phone shows it)
        gm = map_of(state["map"])
        have = [c for c in mine if state["owner"].get(c) == viewer]
        out["objective_progress"] = {"cities": list(mine), "held": have,
                                     "points": sum(gm.value(c) for c in have),
                                     "complete": len(have) == len(mine)}
    return out


def public_summary(summary: dict, state, viewer: str | None) -> dict:
    """The summary as ``viewer`` may see it: the turn's card drawn by another player is ``True``, not named
    (how many cards each player holds is public: ``players[].cards``)."""
    turn = summary.get("turn")
    if turn and turn.get("card") is not None and turn["player"] != viewer and not summary.get("ended"):
        return {**summary, "turn": {**turn, "card": True}}
    return summary


# the events whose data holds a secret until the match ends: an objective's cities (its owner's), a drawn
# territory card (its drawer's). The other phones see that the event happened, and whose it is.
SECRET_EVENT_TYPES = frozenset({"objective.set"})
HIDDEN_CARD_EVENT_TYPES = frozenset({"card.draw", "turn.end"})


def public_event(event: dict, viewer: str | None) -> dict | None:
    """An event as ``viewer`` may see it before the end: another player's objective (``None``: only its
    owner is kept), the card another player drew (``hidden: ["card"]``)."""
    data = event.get("data") or {}
    owner = data.get("player")
    if event["type"] in SECRET_EVENT_TYPES and (viewer is None or owner != viewer):
        return None
    if event["type"] in HIDDEN_CARD_EVENT_TYPES and "card" in data and (viewer is None or owner != viewer):
        return {**event, "data": {k: v for k, v in data.items() if k != "card"}, "hidden": ["card"]}
    return event


def acting_player(state, type_: str, data) -> tuple[str, str] | None:
    """The seat an event acts for where ``data`` need not name it: a combat or a move without ``player`` is
    the move of the city it leaves (``from``); else None (``data.player``: companion/services/policy.py)."""
    if type_ in ("combat", "move") and isinstance(data, dict) and not isinstance(data.get("player"), str):
        owner = (state.get("owner") or {}).get(data.get("from")) if isinstance(data.get("from"), str) else None
        if owner is not None:
            return owner, "from"
    return None


# -- what the server completes or computes for the tracker ----------------------------------------------
# ``ACTIONS[name] = (event type, fn)``; ``fn(state, players, data, rng, effective) -> (event data, extra)``
# fills the event from the state it will follow (``effective()``: the events in effect, oldest first).

def _deal_action(state, players, data, rng, effective):
    """The deal (docs/rulings.md#set-up-and-the-deal). Without ``owner`` the Pi shuffles the territory cards
    and deals them; with ``owner`` ({city: player}) the table dealt the real cards and typed them. Either
    way the majority rule is then fixed by the book's remedy, with the Pi's random choices: the swaps are
    in the answer, and for a typed deal in the event too (``swaps``, for the history: the table moves those
    units)."""
    if state["phase"] != "deal":
        raise RuleError("the cities have been dealt already (undo the deal to deal again)", "type")
    if state["started"]:
        raise RuleError("the clock has started without a recorded deal: the deal and the placements come before "
                        "the clock starts", "type")
    gm = map_of(state["map"])
    unknown = sorted(set(data) - {"owner"})
    if unknown:
        raise InputError("unknown field {unknown!r} (give owner, or nothing for the Pi's deal)", unknown[0], unknown=unknown[0])
    if "owner" in data:
        check_dealt(data["owner"], players, gm, "owner")
        owner, swaps = fix_deal({c: data["owner"][c] for c in gm.cities}, gm, rng)
    else:
        owner, swaps = deal(players, gm, rng)
    out = {"owner": owner}
    if swaps and "owner" in data:  # the table's real cards: it moves the swapped units (the Pi's own deal is final)
        out["swaps"] = swaps
    return out, {"swaps": swaps}


def dice_needed(state, action: str, data: dict) -> dict:
    """How many dice each side rolls for ``action`` with the table's own dice (the smart dice wait for them):
    a combat ``{"attack": n, "defend": m}`` (``data.dice`` attacking dice, default the most allowed; the
    defender rolls one per unit, three at most). The attack is checked first, as for the Pi's dice."""
    if action != "combat":
        raise InputError("no dice are rolled for {action!r}", "action", action=action)
    _phase(state, "play")
    if is_ended(state):
        raise RuleError("the match is over", "type")
    gm = map_of(state["map"])
    _obj(data, "data")
    src, dst, _ = _attack_target(state, gm, data)
    most = max_attack_dice(state["units"][src])
    n = data.get("dice", most)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= most:
        raise InputError("{src} may attack with 1 to {most} dice", "dice", src=src, most=most)
    return {"attack": n, "defend": defend_dice_count(state["units"][dst])}


def _combat_action(state, players, data, rng, effective):
    return fill_dice(state, data, rng), None


def _turn_end_action(state, players, data, rng, effective):
    """``conquered`` (it decides the final-round roll) is the turn's count unless given; the turn's card is
    drawn by the box when the turn earned one and none was recorded (``fill_turn_end``)."""
    player = data.get("player")
    if not isinstance(player, str) or player not in players:
        raise InputError("unknown player {player!r}", "player", player=player)
    return fill_turn_end(state, data, rng), None


ACTIONS = {
    "deal": ("setup.deal", _deal_action),
    "combat": ("combat", _combat_action),
    "turn-end": ("turn.end", _turn_end_action),
}
# (an action that used the RNG is the Pi's draw: MatchService.act marks its event ``rolled_by: "pi"``, and
# only an organiser undoes it)


def reinforcements_now(state, player: str, trade: list[str] | None = None) -> dict:
    """What ``player`` receives now, trading ``trade`` (three cards of their hand) if given."""
    gm = map_of(state["map"])
    if player not in state["players"]:
        raise InputError("unknown player {player!r}", "player", player=player)
    if trade is not None:
        check_cards(gm, trade, "trade")
        for n, c in enumerate(trade):
            if c not in state["hands"][player]:
                raise RuleError("{player} does not have the card {c!r}", f"trade[{n}]", player=player, c=c)
    return reinforcements(gm, held(state, player), units_on_map(state, player), trade)


def battle_units(state, src: str, dst: str) -> tuple[int, int]:
    """The units on the map of an attack from ``src`` (attacker) to ``dst`` (defender)."""
    gm = map_of(state["map"])
    for name, city in (("from", src), ("to", dst)):
        if city not in gm.city:
            raise InputError("unknown city {city!r}", name, city=city)
        if city not in state["units"]:
            raise RuleError("the cities have not been dealt yet", name)
    return state["units"][src], state["units"][dst]
