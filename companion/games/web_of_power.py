"""Web of Power (3-5 players): scoring engine, board checks and the match reducer.

Scoring (the rulings of ``docs/rulings.md#web-of-power`` win over the rule book's wording):

- **Monasteries**, per country in the board's scoring order: players are grouped by their number of
  monasteries there (players with none score nothing). The group with the most scores the country's
  total number of monasteries (all colours); every lower group scores the count of the group
  directly above it (dense ranks: ties share a rank). Rule book: Franken 4/2/1 -> 7/4/2, Lothringen
  2/2/1 -> 5/5/2. (The translation's "fifth scores the first's count" is a typo: the fourth's.)
- **Alliances** (final scoring only), in numeric order: a player with the most councillors (ties
  included, at least one) in *each* of the two countries scores the total number of councillors of
  all colours in both. No second place. Alliances whose countries are unknown (the template board)
  are missing parts of the final scoring until entered by hand.
- **Chains** (final scoring only): the largest total number of monasteries over sets of disjoint
  simple paths of >= 4 of the player's monasteries along roads (``wop_chains``). Without roads on the
  board, chain lengths are entered by hand (each >= 4, together at most the player's monasteries).
- Intermediate scoring (the deck runs out the first time) counts monasteries only; final scoring
  counts monasteries, alliances, chains. Totals add up across both. Winner: most points; a tie goes
  to the most unplayed pieces (20 monasteries + 8 councillors each, minus those placed).

``companion score web-of-power FILE``: ``score(doc)``, input ``schemas/web-of-power.score.schema.json``.

Match events (``EVENT_TYPES``; their ``data`` is in ``schemas/web-of-power.events.schema.json``):

- ``place`` ``{"player", "piece": "monastery"|"councillor", "country"?, "site"?, "count"?}``: one
  placement of the current turn. A monastery goes on a ``site`` (the country follows from it) or, on a
  board whose sites are not known, into a ``country`` by ``count`` (1 or 2). A councillor goes into a
  ``country`` (``count`` 1 or 2). Refused (InputError): unknown player, country or site, a site in
  another country, malformed fields. Refused (RuleError): the site is taken, no free site is left in
  the country, the player's supply (20 monasteries, 8 councillors) is exhausted, the match has ended.
  A placement by a player other than the one whose turn is open ends that turn first.
- ``turn.end`` ``{"player"?}``: ends the open turn; with no open turn it records a turn without
  placements (a card swapped) by ``player`` (default: the player whose turn is next).
- ``deck.out`` ``{"chains"?: {player: [lengths]}}``: the draw deck ran out. The first time: the
  intermediate scoring (monasteries). The second time: the final scoring (monasteries, alliances,
  chains) and the match ends (when the scoring is complete; see below). The rule book lets everyone
  finish the round after the deck runs out the second time (up to the player right of the first
  player): record those turns, then send it.
- ``game.end`` ``{"chains"?}``: the game ends early because no piece can be placed any more (all
  sites taken and councillors capped, or all pieces used): the final scoring now.
- ``chains`` ``{"player", "lengths": [int >= 4, ...]}``: a player's chain lengths counted by hand
  (only when the board has no roads, or the player placed by country, not by site); replaces
  earlier ones; used by the final scoring.
- ``scoring.hand`` ``{"alliances"?: [{"number", "countries": [a, b]} | {"number", "players": [...],
  "points"}], "chains"?: {player: [lengths]}}``: the parts of the final scoring the board cannot tell,
  entered by hand at the scoring step (docs/rulings.md, "Web of Power: incomplete scoring").

**Incomplete scoring.** A final scoring is complete when every part is known: each alliance's two
countries (from the board or entered by hand; not needed when no player leads in two countries) and
each player's chains (computed from the roads, or entered by hand; not needed under 4 monasteries).
An incomplete final scoring names no winner: the state waits at the scoring step
(``scoring_step``; summary ``phase: "scoring"`` and ``missing: {"alliances", "chains"}``), takes only
``scoring.hand``/``chains`` (and undo), and the match ends (``is_ended``, ``final_ranking`` for the
season) when the last missing part is entered.

Legality problems are recorded as warnings in the state (``warnings``: ``{"seq", "turn", "player",
"message", "kind", "values"}``: ``kind`` and ``values`` let a page word it in its language; the summary
marks those of the latest turn ``current``), never silently and never refused: more than one country
in a turn (two with the ``two_countries_per_turn`` variant), more than two pieces in a turn, anything
but one monastery into a country that had none at the start of the turn (two monasteries with
``two_monasteries_in_empty_country``), more councillors in a country than the most monasteries of one
player there, turns out of seat order.

``initial_state(players, options)``: 3-5 players in seat order; ``options``: ``{"board"?: board
document (default: the installed board), "variants"?: {"two_countries_per_turn": bool,
"two_monasteries_in_empty_country": bool}, "first_player"?: name (default the first listed)}``.
With 4 players one card of each colour is removed from the deck, with 3 players two.
"""

from __future__ import annotations

from companion.base.errors import InputError, RuleError, join_path
from companion.games import wop_board
from companion.games.wop_chains import MIN_CHAIN, SEARCH_BUDGET, SearchTooLong, best_chains

GAME_ID = "web-of-power"
NAME = "Web of Power"
USES_CLOCK = False
EVENT_TYPES = frozenset({"place", "turn.end", "deck.out", "game.end", "chains", "scoring.hand"})

MONASTERIES = 20
COUNCILLORS = 8
MIN_PLAYERS, MAX_PLAYERS = 3, 5
VARIANTS = ("two_countries_per_turn", "two_monasteries_in_empty_country")
PIECES = ("monastery", "councillor")
# With the match clock (``options.clock``): the events of a player's turn, refused while a final roll is owed
# (the roll comes before the next turn: docs/rulings.md#web-of-power-the-clock). The deck running out and the
# chains counted by hand are not turns: they are taken meanwhile.
TURN_EVENT_TYPES = frozenset({"place"})


def check_map(doc, **opts) -> dict:
    return wop_board.check_map(doc, **opts)


def map_svg(doc) -> str:
    return wop_board.map_svg(doc)


def _path(*parts) -> str:
    from companion.base.schemas import json_path

    return json_path(parts)


def _is_count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


# =============================================================================================
# Scoring


def monastery_points(counts: dict) -> dict:
    """``{player: monasteries}`` in one country -> ``{player: (points, rank)}`` for players with >= 1.

    Dense ranks: the top group scores the country's total, each lower group the count of the
    group directly above it."""
    present = {p: n for p, n in counts.items() if n > 0}
    if not present:
        return {}
    total = sum(present.values())
    levels = sorted(set(present.values()), reverse=True)
    worth = {levels[0]: total}
    rank = {levels[0]: 1}
    for i in range(1, len(levels)):
        worth[levels[i]] = levels[i - 1]
        rank[levels[i]] = i + 1
    return {p: (worth[n], rank[n]) for p, n in present.items()}


def monastery_reason(counts: dict, player: str) -> dict:
    """Why ``player``'s place in one country (``counts``: ``{player: monasteries}`` there) is worth its
    points: ``{"country_total": all monasteries there, "above": the count of the group directly above
    (None for the first place)}`` (docs/rulings.md#monastery-majorities)."""
    present = sorted({n for n in counts.values() if n > 0}, reverse=True)
    mine = counts.get(player, 0)
    i = present.index(mine)
    return {"country_total": sum(n for n in counts.values() if n > 0), "above": present[i - 1] if i else None}


def alliance_winners(councillors: dict, a: str, b: str) -> tuple[list, int]:
    """Players with the most councillors (>= 1, ties included) in both ``a`` and ``b``, and the
    points each scores (all councillors in both countries)."""

    def leaders(country):
        cs = {p: n for p, n in (councillors.get(country) or {}).items() if n > 0}
        if not cs:
            return set()
        top = max(cs.values())
        return {p for p, n in cs.items() if n == top}

    both = leaders(a) & leaders(b)
    points = sum((councillors.get(a) or {}).values()) + sum((councillors.get(b) or {}).values())
    return sorted(both), points


def leaders_in_two(councillors: dict, players: list) -> list:
    """Players who have the most councillors (ties included, at least one) in two countries or
    more: only they can score an alliance, whichever two countries it joins."""
    lead = {p: 0 for p in players}
    for cs in councillors.values():
        cs = {p: n for p, n in (cs or {}).items() if n > 0}
        if cs:
            top = max(cs.values())
            for p, n in cs.items():
                if n == top and p in lead:
                    lead[p] += 1
    return [p for p in players if lead[p] >= 2]


def missing_parts(board: dict, players: list, counts: dict, councillors: dict, hand_chains: dict,
                  hand_alliances: dict, counted_by_country: set | frozenset = frozenset()) -> dict:
    """What the final scoring cannot know from the board and the pieces (docs/rulings.md, "Web of
    Power: incomplete scoring"): ``{"alliances": [numbers], "chains": [players]}``.

    An alliance is missing when the board does not say which two countries it joins, nobody entered
    it by hand, and some player leads in two countries (otherwise nobody can score it, whatever its
    countries). A player's chains are missing when the player has 4 monasteries or more, nobody
    entered their lengths, and the roads cannot tell (no roads on the board, or monasteries placed
    by country instead of on sites)."""
    alliances = []
    if leaders_in_two(councillors, players):
        alliances = [a["number"] for a in board["alliances"]
                     if a["countries"] is None and str(a["number"]) not in hand_alliances]
    chains = [p for p in players if p not in hand_chains
              and sum((counts.get(c) or {}).get(p, 0) for c in counts) >= MIN_CHAIN
              and (board["roads"] is None or p in counted_by_country)]
    return {"alliances": alliances, "chains": chains}


def evaluate(board: dict, players: list, counts: dict, player_sites: dict, councillors: dict,
             hand_chains: dict, kind: str, counted_by_country: set | frozenset = frozenset(),
             hand_alliances: dict | None = None) -> dict:
    """Score a position.

    ``counts``: ``{country: {player: monasteries}}`` (all monasteries, with or without site);
    ``player_sites``: ``{player: [site ids]}`` (for chains); ``councillors``: ``{country: {player: n}}``;
    ``hand_chains``: ``{player: [lengths]}``; ``kind``: intermediate | final;
    ``counted_by_country``: players with monasteries not on a known site (their chains can't be
    computed from roads); ``hand_alliances``: ``{"number": {"countries": [a, b]} | {"players": [..],
    "points": n}}`` entered by hand for alliances the board does not know.
    Returns ``{"scoring", "players": [{"player", "total", "breakdown"}], "warnings": [str],
    "complete": bool, "missing": {"alliances": [numbers], "chains": [players]}}``: a final scoring
    with missing parts is not complete and names no winner."""
    breakdown = {p: [] for p in players}
    warnings: list[str] = []
    final = kind == "final"
    hand_alliances = hand_alliances or {}
    missing = {"alliances": [], "chains": []}

    for country in board["countries"]:
        pts = monastery_points(counts.get(country) or {})
        for p in players:
            if p in pts:
                # (with why the place is worth it: the country's total for the first, the count above else)
                breakdown[p].append({"kind": "monasteries", "country": country, "points": pts[p][0],
                                     "monasteries": counts[country][p], "rank": pts[p][1],
                                     **monastery_reason(counts[country], p)})
        cap = max((counts.get(country) or {}).values(), default=0)
        cons = sum((councillors.get(country) or {}).values())
        if cons > cap:
            warnings.append(f"{country}: {cons} councillor(s), more than the {cap} allowed "
                            f"(the most monasteries of one player there)")

    if final:
        missing = missing_parts(board, players, counts, councillors, hand_chains, hand_alliances,
                                counted_by_country)
        for a in board["alliances"]:
            entry = hand_alliances.get(str(a["number"])) if a["countries"] is None else None
            if entry is not None and "players" in entry:
                for p in entry["players"]:
                    breakdown[p].append({"kind": "alliance", "number": a["number"], "countries": None,
                                         "points": entry["points"], "hand": True})
                continue
            pair = a["countries"] or (entry or {}).get("countries")
            if pair is None:
                continue
            winners, points = alliance_winners(councillors, *pair)
            for p in winners:
                breakdown[p].append({"kind": "alliance", "number": a["number"], "countries": list(pair),
                                     "points": points, **({"hand": True} if entry else {})})
        if missing["alliances"]:
            warnings.append("alliance(s) " + ", ".join(map(str, missing["alliances"]))
                            + " not scored: their countries are unknown on this board")

        roads = board["roads"]
        for p in players:
            if p in hand_chains:
                for n in hand_chains[p]:
                    breakdown[p].append({"kind": "chain", "length": n, "points": n})
                continue
            if roads is None:
                continue
            if p in counted_by_country:
                if p in missing["chains"]:
                    warnings.append(f"{p}: chains not computed (monasteries given by country, not by site)")
                continue
            sites = player_sites.get(p) or []
            if len(sites) >= MIN_CHAIN:
                mine = set(sites)
                edges = [r for r in roads if r[0] in mine and r[1] in mine]
                try:
                    _, chains = best_chains(sites, edges, budget=SEARCH_BUDGET)
                except SearchTooLong as exc:
                    # never a guessed number: a dense, non-map-like road graph is refused
                    raise InputError("{p}'s chains: the roads between their {n_sites} monasteries are too dense for the exact "
                                     "search ({exc}); a real board's roads are not: check the board", "$.map.roads", p=p, n_sites=len(sites), exc=exc) from None
                for chain in chains:
                    breakdown[p].append({"kind": "chain", "sites": chain, "points": len(chain)})
        if roads is None and missing["chains"]:
            warnings.append("the board's roads are unknown: chains count only when entered by hand "
                            "(none entered for " + ", ".join(missing["chains"]) + ")")

    results = [{"player": p, "total": sum(e["points"] for e in breakdown[p]), "breakdown": breakdown[p]}
               for p in players]
    complete = not (missing["alliances"] or missing["chains"])
    return {"scoring": kind, "players": results, "warnings": warnings, "complete": complete, "missing": missing}


def current_chains(state) -> dict | None:
    """Each player's chains on the board now (the best disjoint chains along the roads, as the final scoring
    would count them), for the page to draw during play: ``{player: [[site, ...], ...]}``; None when the
    board has no roads. A player whose roads are too dense for the exact search, or with monasteries
    placed by country, gets None."""
    board = state["board"]
    if board["roads"] is None:
        return None
    out: dict = {}
    for p in state["players"]:
        sites = state["player_sites"].get(p) or []
        if p in state["by_country"]:
            out[p] = None
            continue
        if len(sites) < MIN_CHAIN:
            out[p] = []
            continue
        mine = set(sites)
        edges = [r for r in board["roads"] if r[0] in mine and r[1] in mine]
        try:
            out[p] = best_chains(sites, edges, budget=SEARCH_BUDGET)[1]
        except SearchTooLong:
            out[p] = None
    return out


def ranking(players: list, totals: dict, unplayed: dict, tie_break: bool) -> list:
    """Most points first; with ``tie_break`` (final) ties go to the most unplayed pieces.
    Players still level share the place (1, 1, 3)."""
    def key(p):
        return (-totals[p], -unplayed[p]) if tie_break else (-totals[p],)

    order = sorted(players, key=lambda p: (key(p), players.index(p)))
    out = []
    for i, p in enumerate(order):
        place = out[-1]["place"] if out and key(order[i - 1]) == key(p) else i + 1
        out.append({"place": place, "player": p, "total": totals[p], "unplayed": unplayed[p]})
    return out


# =============================================================================================
# companion score web-of-power FILE


def quick_valid_score(doc) -> bool:
    """A fast, conservative version of the score schema (the map is checked on its own):
    True only if the document is valid; jsonschema runs otherwise, to name the error's path."""
    def name(v):
        return isinstance(v, str) and 1 <= len(v) <= 60

    def count(v):
        return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 100

    if not isinstance(doc, dict) or not {"players", "scoring"} <= doc.keys():
        return False
    if not doc.keys() <= {"players", "scoring", "map", "monasteries", "councillors", "chains"}:
        return False  # ("alliances" entered by hand: rare, left to the schema)
    ps = doc["players"]
    if not isinstance(ps, list) or not 1 <= len(ps) <= 5 or not all(map(name, ps)):
        return False
    if doc["scoring"] not in ("intermediate", "final") or ("map" in doc and not isinstance(doc["map"], dict)):
        return False
    mons = doc.get("monasteries", {})
    if not isinstance(mons, dict):
        return False
    for v in mons.values():
        if isinstance(v, list):
            if len(v) > 20 or not all(map(name, v)):
                return False
        elif not (isinstance(v, dict) and all(map(count, v.values()))):
            return False
    cons = doc.get("councillors", {})
    if not isinstance(cons, dict) or not all(isinstance(v, dict) and all(map(count, v.values()))
                                             for v in cons.values()):
        return False
    chains = doc.get("chains", {})
    if not isinstance(chains, dict) or not all(
            isinstance(v, list) and len(v) <= 5
            and all(isinstance(n, int) and not isinstance(n, bool) and 4 <= n <= 20 for n in v)
            for v in chains.values()):
        return False
    return True


def score(doc) -> dict:
    from companion.base.schemas import validate

    if not quick_valid_score(doc):
        validate("web-of-power.score", doc)
        doc = wop_board.integral(doc)  # 2.0 is a schema integer: score it as 2
    players = doc["players"]
    if len(set(players)) != len(players):
        dup = next(i for i, p in enumerate(players) if players.index(p) != i)
        raise InputError("player {players!r} is named twice", _path("players", dup), players=players[dup])
    board = wop_board.normalize(doc["map"], "$.map") if "map" in doc else wop_board.default_board()
    kind = doc["scoring"]
    warnings: list[str] = []
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        warnings.append(f"Web of Power is for {MIN_PLAYERS}-{MAX_PLAYERS} players, not {len(players)}")

    counts: dict = {c: {} for c in board["countries"]}
    player_sites: dict = {p: [] for p in players}
    by_country: set = set()
    holder: dict = {}
    placed_m = {p: 0 for p in players}
    for p, held in doc.get("monasteries", {}).items():
        if p not in players:
            raise InputError("unknown player {p!r}", _path("monasteries", p), p=p)
        if isinstance(held, list):
            for i, site in enumerate(held):
                country = board["site_country"].get(site)
                if country is None:
                    raise InputError("unknown site {site!r}", _path("monasteries", p, i), site=site)
                if site in holder:
                    who = holder[site]
                    if who == p:
                        raise InputError("site {site!r} is held twice", _path("monasteries", p, i), site=site)
                    raise InputError("site {site!r} is held twice (also by {who})", _path("monasteries", p, i),
                                     site=site, who=who)
                holder[site] = p
                counts[country][p] = counts[country].get(p, 0) + 1
                player_sites[p].append(site)
            placed_m[p] += len(held)
        else:
            for country, n in held.items():
                if country not in counts:
                    raise InputError("unknown country {country!r}", _path("monasteries", p, country), country=country)
                if n:
                    counts[country][p] = counts[country].get(p, 0) + n
                    by_country.add(p)
                placed_m[p] += n
        if placed_m[p] > MONASTERIES:
            raise InputError("{p} has placed {placed_m} {placed_m|monastery|monasteries}; the supply is {MONASTERIES}",
                             _path("monasteries", p), p=p, placed_m=placed_m[p], MONASTERIES=MONASTERIES)
    for country in board["countries"]:
        cap = board["capacity"][country]
        total = sum(counts[country].values())
        if cap is not None and total > cap:
            raise InputError("{country} has {cap} {cap|site|sites} but {total} {total|monastery is|monasteries are} given", "$.monasteries", country=country, cap=cap, total=total)

    councillors: dict = {c: {} for c in board["countries"]}
    placed_c = {p: 0 for p in players}
    for country, by_player in doc.get("councillors", {}).items():
        if country not in councillors:
            raise InputError("unknown country {country!r}", _path("councillors", country), country=country)
        for p, n in by_player.items():
            if p not in players:
                raise InputError("unknown player {p!r}", _path("councillors", country, p), p=p)
            if n:
                councillors[country][p] = n
            placed_c[p] += n
            if placed_c[p] > COUNCILLORS:
                raise InputError("{p} has placed {placed_c} {placed_c|councillor|councillors}; the supply is {COUNCILLORS}",
                                 _path("councillors", country, p), p=p, placed_c=placed_c[p], COUNCILLORS=COUNCILLORS)

    hand: dict = {}
    for p, lengths in (doc.get("chains") or {}).items():
        if p not in players:
            raise InputError("unknown player {p!r}", _path("chains", p), p=p)
        if board["roads"] is not None and p not in by_country:
            raise InputError("this board's roads are known: chains are computed from the sites",
                             _path("chains", p))
        if sum(lengths) > placed_m[p]:
            raise InputError("chains of {lengths} monasteries, but {p} has {placed_m}", _path("chains", p), lengths=sum(lengths), p=p, placed_m=placed_m[p])
        hand[p] = list(lengths)
    if hand and kind != "final":
        warnings.append("chains are scored only at the final scoring: ignored")
    hand_alliances = {}
    if "alliances" in doc:
        position = {"board": board, "councillors": councillors, "players": players}
        try:
            hand_alliances = _hand_alliances(position, doc["alliances"], "$.alliances")
        except RuleError as exc:  # the same checks as at a match's scoring step; here the input is wrong
            raise exc.again(InputError, exc.field) from None
        if kind != "final":
            warnings.append("alliances are scored only at the final scoring: ignored")
            hand_alliances = {}

    result = evaluate(board, players, counts, player_sites, councillors, hand, kind, by_country, hand_alliances)
    totals = {r["player"]: r["total"] for r in result["players"]}
    unplayed = {p: MONASTERIES + COUNCILLORS - placed_m[p] - placed_c[p] for p in players}
    rank = ranking(players, totals, unplayed, tie_break=kind == "final")
    out = {"game": GAME_ID, "scoring": kind, "board": board["name"], "players": result["players"],
           "ranking": rank, "warnings": warnings + result["warnings"]}
    if kind == "final":
        # a winner only from a complete scoring (docs/rulings.md, "Web of Power: incomplete scoring")
        out["complete"] = result["complete"]
        out["missing"] = result["missing"]
        if result["complete"]:
            out["winners"] = [r["player"] for r in rank if r["place"] == 1]
    return out


# =============================================================================================
# Match reducer


def initial_state(players, options) -> dict:
    if not isinstance(players, list) or not all(isinstance(p, str) and p for p in players):
        raise InputError("must be a list of player names", "players")
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise InputError("Web of Power is for {MIN_PLAYERS}-{MAX_PLAYERS} players", "players", MIN_PLAYERS=MIN_PLAYERS, MAX_PLAYERS=MAX_PLAYERS)
    if len(set(players)) != len(players):
        raise InputError("a player is named twice", "players")
    options = options or {}
    if not isinstance(options, dict):
        raise InputError("must be an object", "options")
    if options.get("board") is not None:
        board = wop_board.normalize(options["board"], "$.options.board")
    else:
        board = wop_board.default_board()
    variants_in = options.get("variants") or {}
    if not isinstance(variants_in, dict):
        raise InputError("must be an object", "options.variants")
    variants = {}
    for k in VARIANTS:
        v = variants_in.get(k, False)
        if not isinstance(v, bool):
            raise InputError("must be true or false", f"options.variants.{k}")
        variants[k] = v
    for k in variants_in:
        if k not in VARIANTS:
            raise InputError("unknown variant {k!r} (known: {names})", f"options.variants.{k}", k=k, names=', '.join(VARIANTS))
    first = options.get("first_player", players[0])
    if first not in players:
        raise InputError("unknown player {first!r}", "options.first_player", first=first)
    removed = {5: 0, 4: 1, 3: 2}[len(players)]
    deck = [{"countries": cc["countries"], "cards": max(0, cc["cards"] - removed)} for cc in board["card_colours"]]
    return {
        "game": GAME_ID,
        "players": list(players),
        "first_player": first,
        "variants": variants,
        "board": board,
        "deck": {"removed_per_colour": removed, "colours": deck, "cards": sum(c["cards"] for c in deck)},
        "monasteries": {c: {} for c in board["countries"]},
        "councillors": {c: {} for c in board["countries"]},
        "sites": {},
        "player_sites": {p: [] for p in players},
        "by_country": [],
        "placed": {p: {"monasteries": 0, "councillors": 0} for p in players},
        "turn": None,
        "next_player": first,
        "turns": 0,
        "deck_outs": 0,
        "scorings": {"intermediate": None, "final": None},
        "hand_chains": {},
        "hand_alliances": {},
        "scoring_step": None,
        "warnings": [],
        "ended": False,
    }


def _seat_after(state, player):
    ps = state["players"]
    return ps[(ps.index(player) + 1) % len(ps)]


def _warn(state, seq, player, message, kind, **values):
    # warnings come while a turn is open: its number is the turns closed so far + 1. ``kind`` and
    # ``values`` let a page say it in its own language (``message`` is the English text).
    state["warnings"] = state["warnings"] + [{"seq": seq, "turn": state["turns"] + 1, "player": player,
                                              "message": message, "kind": kind,
                                              "values": {"player": player, **values}}]


def _close_turn(state):
    turn = state["turn"]
    if turn is not None:
        state["turn"] = None
        state["turns"] += 1
        state["next_player"] = _seat_after(state, turn["player"])


def _open_turn(state, player, seq):
    if player != state["next_player"]:
        _warn(state, seq, player, f"{player} played out of turn: it was {state['next_player']}'s turn",
              "out_of_turn", expected=state["next_player"])
    state["turn"] = {"player": player, "placements": [], "before": {}, "warned": []}


def _player(state, data, field="player"):
    p = data.get(field)
    if not isinstance(p, str) or p not in state["players"]:
        raise InputError("unknown player {p!r}", field, p=p)
    return p


def _chains_data(state, chains, field):
    if not isinstance(chains, dict):
        raise InputError("must be an object {player: [lengths]}", field)
    out = {}
    for p, lengths in chains.items():
        out[p] = _chain_lengths(state, p, lengths, join_path(field, _path(p)))
    return out


def _chain_lengths(state, p, lengths, field):
    if p not in state["players"]:
        raise InputError("unknown player {p!r}", field, p=p)
    if state["board"]["roads"] is not None and p not in state["by_country"]:
        # as in score(): hand-counted chains only for a player whose monasteries have no sites
        raise InputError("this board's roads are known: chains are computed from the sites", field)
    if not isinstance(lengths, list):
        raise InputError("must be a list of chain lengths", field)
    for i, n in enumerate(lengths):
        if not _is_count(n) or n < MIN_CHAIN:
            raise InputError("a chain has at least {MIN_CHAIN} monasteries", f"{field}[{i}]", MIN_CHAIN=MIN_CHAIN)
    have = state["placed"][p]["monasteries"]
    if sum(lengths) > have:
        raise InputError("chains of {lengths} monasteries, but {p} has {have}", field, lengths=sum(lengths), p=p, have=have)
    return list(lengths)


def _score_now(state, kind, seq):
    players = state["players"]
    final = kind == "final"
    try:
        result = evaluate(state["board"], players, state["monasteries"], state["player_sites"],
                          state["councillors"], state["hand_chains"] if final else {}, kind,
                          set(state["by_country"]), state["hand_alliances"] if final else {})
    except InputError as exc:  # the match's board has a road graph too dense for the chain search
        raise exc.again(RuleError, "options.board.roads") from None
    result["seq"] = seq
    scorings = dict(state["scorings"])
    scorings[kind] = result
    state["scorings"] = scorings
    if final:
        # the match ends only when every part of the final scoring is known; until then the table
        # enters the missing parts at the scoring step (docs/rulings.md, "Web of Power: incomplete scoring")
        state["ended"] = result["complete"]
        state["scoring_step"] = None if result["complete"] else {"seq": seq, "missing": result["missing"]}


def _hand_alliances(state, entries, field):
    """``scoring.hand`` alliances: ``[{"number", "countries": [a, b]} | {"number", "players": [..],
    "points": n}]`` for alliances whose countries the board does not know."""
    board = state["board"]
    if not isinstance(entries, list):
        raise InputError("must be a list of alliances", field)
    by_number = {a["number"]: a for a in board["alliances"]}
    cons = state["councillors"]
    leaders = set(leaders_in_two(cons, state["players"]))
    totals = sorted((sum(c.values()) for c in cons.values()), reverse=True)
    most = sum(totals[:2])
    out, seen = {}, set()
    for i, e in enumerate(entries):
        at = f"{field}[{i}]"
        if not isinstance(e, dict):
            raise InputError("must be an object", at)
        extra = set(e) - {"number", "countries", "players", "points"}
        if extra:
            raise InputError("unknown field {value!r}", f"{at}.{sorted(extra)[0]}", value=sorted(extra)[0])
        n = e.get("number")
        if not _is_count(n) or n not in by_number:
            raise InputError("no alliance {n!r} on this board", f"{at}.number", n=n)
        if n in seen:
            raise InputError("alliance {n} is given twice", f"{at}.number", n=n)
        seen.add(n)
        if by_number[n]["countries"] is not None:
            a, b = by_number[n]["countries"]
            raise InputError("the board says alliance {n} joins {a} and {b}: it is scored from the board",
                             f"{at}.number", n=n, a=a, b=b)
        if ("countries" in e) == ("players" in e):
            raise InputError("give either the two countries it joins or the players who score it", at)
        if "countries" in e:
            pair = e["countries"]
            if "points" in e:
                raise InputError("the points follow from the countries", f"{at}.points")
            if not isinstance(pair, list) or len(pair) != 2:
                raise InputError("must be the two countries the alliance joins", f"{at}.countries")
            for j, c in enumerate(pair):
                if not isinstance(c, str) or c not in board["capacity"]:
                    raise InputError("unknown country {c!r}", f"{at}.countries[{j}]", c=c)
            if pair[0] == pair[1]:
                raise InputError("an alliance joins two different countries", f"{at}.countries[1]")
            out[str(n)] = {"countries": list(pair)}
            continue
        who, points = e["players"], e.get("points", 0)
        if not isinstance(who, list):
            raise InputError("must be a list of players", f"{at}.players")
        for j, p in enumerate(who):
            if not isinstance(p, str) or p not in state["players"]:
                raise InputError("unknown player {p!r}", f"{at}.players[{j}]", p=p)
            if p in who[:j]:
                raise InputError("{p} is named twice", f"{at}.players[{j}]", p=p)
            if p not in leaders:
                raise RuleError("{p} does not have the most councillors in two countries: no alliance can score for them", f"{at}.players[{j}]", p=p)
        if not _is_count(points):
            raise InputError("must be a whole number of points", f"{at}.points")
        if not who and points:
            raise InputError("nobody scores it: 0 points", f"{at}.points")
        if who and not 2 <= points <= most:
            raise RuleError("an alliance is worth the councillors in its two countries: between 2 and {most} here", f"{at}.points", most=most)
        out[str(n)] = {"players": [p for p in state["players"] if p in who], "points": points}
    return out


def _refused_now(state, t):
    if state["ended"]:
        raise RuleError("the match has ended (final scoring done)", "type")
    if state.get("scoring_step") is not None and t not in ("chains", "scoring.hand"):
        raise RuleError("the final scoring is waiting for its missing parts: enter them (or undo)", "type")


def check_place(state, data) -> list:
    """The rules a ``place`` with ``data`` would break, before it is recorded: the warnings its event would
    add (``{"turn", "player", "message", "kind", "values"}``, as in the state's ``warnings``), those the
    turn was warned of already included (a fourth piece breaks "at most 2" again). Refused as the event
    would be (InputError, RuleError). The page asks the table to confirm a placement with warnings: the
    table is the truth, confirmed it is recorded with them (docs/rulings.md#placement-legality). Pure."""
    if not isinstance(data, dict):
        raise InputError("must be an object", "data")
    _refused_now(state, "place")
    new = dict(state)
    new["warnings"] = []
    _place(new, data, None, again=True)
    return [{k: w[k] for k in ("turn", "player", "message", "kind", "values")} for w in new["warnings"]]


def can_place(state) -> bool | None:
    """Whether the open turn has a placement left that breaks no rule (a piece, a country, a free site, the
    supply): when none is left the page offers to end the turn. None without an open turn."""
    turn = state["turn"]
    if turn is None:
        return None
    if sum(pl["count"] for pl in turn["placements"]) >= 2:
        return False
    player, board = turn["player"], state["board"]
    countries = list(dict.fromkeys(pl["country"] for pl in turn["placements"]))
    if len(countries) < (2 if state["variants"]["two_countries_per_turn"] else 1):
        countries = board["countries"]
    for country in countries:
        listed = board["sites"].get(country) or []  # a monastery on a free site, or by country where none is known
        free = [x for x in listed if x not in state["sites"]]
        tries = [{"player": player, "piece": "councillor", "country": country}]
        if free or not listed:
            tries.insert(0, {"player": player, "piece": "monastery", **({"site": free[0]} if free else {"country": country})})
        for data in tries:
            try:
                if not check_place(state, data):
                    return True
            except (InputError, RuleError):
                continue
    return False


def apply(state, event) -> dict:
    t = event.get("type")
    data = event.get("data") or {}
    seq = event.get("seq")
    if t not in EVENT_TYPES:
        raise InputError("unknown event type {t!r}", "type", t=t)
    if not isinstance(data, dict):
        raise InputError("must be an object", "data")
    _refused_now(state, t)
    step = state.get("scoring_step")
    new = dict(state)
    if t == "place":
        _place(new, data, seq)
    elif t == "turn.end":
        who = data.get("player")
        if who is not None:
            who = _player(new, data)
        turn = new["turn"]
        if turn is not None and (who is None or who == turn["player"]):
            _close_turn(new)
        else:
            _close_turn(new)
            who = who or new["next_player"]
            _open_turn(new, who, seq)
            _close_turn(new)
    elif t == "chains":
        p = _player(new, data)
        lengths = _chain_lengths(new, p, data.get("lengths"), "lengths")
        new["hand_chains"] = {**new["hand_chains"], p: lengths}
        if step is not None:
            _score_now(new, "final", step["seq"])
    elif t == "scoring.hand":
        if step is None:
            raise RuleError("parts of the scoring are entered by hand at the final scoring, when they are "
                            "missing", "type")
        extra = set(data) - {"alliances", "chains"}
        if extra:
            raise InputError("unknown field {value!r}", sorted(extra)[0], value=sorted(extra)[0])
        if not data:
            raise InputError("say the alliances or the chains", "alliances")
        if "alliances" in data:
            new["hand_alliances"] = {**new["hand_alliances"], **_hand_alliances(new, data["alliances"], "alliances")}
        if "chains" in data:
            new["hand_chains"] = {**new["hand_chains"], **_chains_data(new, data["chains"], "chains")}
        _score_now(new, "final", step["seq"])
    elif t in ("deck.out", "game.end"):
        if "chains" in data:
            if t == "deck.out" and new["deck_outs"] == 0:
                raise InputError("chains are scored at the final scoring (the second time the deck runs out)",
                                 "chains")
            new["hand_chains"] = {**new["hand_chains"], **_chains_data(new, data["chains"], "chains")}
        _close_turn(new)
        if t == "deck.out":
            new["deck_outs"] += 1
            kind = "intermediate" if new["deck_outs"] == 1 else "final"
        else:
            kind = "final"
        _score_now(new, kind, seq)
    return new


def _place(new, data, seq, again=False):
    """One placement into ``new`` (a copy of the state's top level). ``again``: every rule the turn breaks with
    it is warned, also those warned earlier in the turn (``check_place``); else each once a turn."""
    board = new["board"]
    player = _player(new, data)
    piece = data.get("piece")
    if piece not in PIECES:
        raise InputError("must be \"monastery\" or \"councillor\"", "piece")
    site = data.get("site")
    country = data.get("country")
    count = data.get("count", 1)
    if not _is_count(count) or not 1 <= count <= 2:
        raise InputError("must be 1 or 2", "count")
    if country is not None and (not isinstance(country, str) or country not in board["capacity"]):
        raise InputError("unknown country {country!r}", "country", country=country)
    if site is not None:
        if piece == "councillor":
            raise InputError("councillors go on the country's coat of arms, not on a site", "site")
        if not isinstance(site, str) or site not in board["site_country"]:
            raise InputError("unknown site {site!r}", "site", site=site)
        if count != 1:
            raise InputError("one site holds one monastery", "count")
        in_country = board["site_country"][site]
        if country is not None and country != in_country:
            raise InputError("{site} is in {in_country}, not {country}", "site", site=site, in_country=in_country, country=country)
        country = in_country
    if country is None:
        raise InputError("say the country (or the site)", "country")

    placed = new["placed"][player]
    kind_key = "monasteries" if piece == "monastery" else "councillors"
    supply = MONASTERIES if piece == "monastery" else COUNCILLORS
    if placed[kind_key] + count > supply:
        left = supply - placed[kind_key]
        if piece == "monastery":
            raise RuleError("{player} has {left} {left|monastery|monasteries} left", "count" if left else "piece",
                            player=player, left=left)
        raise RuleError("{player} has {left} {left|councillor|councillors} left", "count" if left else "piece",
                        player=player, left=left)
    mons = new["monasteries"][country]
    if piece == "monastery":
        if site is not None and site in new["sites"]:
            raise RuleError("{site} is taken (by {sites})", "site", site=site, sites=new['sites'][site])
        cap = board["capacity"][country]
        if cap is not None and sum(mons.values()) + count > cap:
            raise RuleError("no free site left in {country}", "country", country=country)

    # the turn
    if new["turn"] is not None and new["turn"]["player"] != player:
        _close_turn(new)
    if new["turn"] is None:
        _open_turn(new, player, seq)
    turn = dict(new["turn"])
    before = dict(turn["before"])
    if country not in before:  # monasteries in the country when this turn first touched it
        before[country] = sum(mons.values())
    turn["before"] = before
    turn["placements"] = turn["placements"] + [
        {"piece": piece, "country": country, **({"site": site} if site else {}), "count": count}]
    turn["warned"] = list(turn["warned"])
    new["turn"] = turn

    def warn_once(code, message, **values):
        if again or code not in turn["warned"]:
            turn["warned"].append(code)
            _warn(new, seq, player, message, code.split(":")[0].replace("-", "_"), **values)

    variants = new["variants"]
    countries = list(dict.fromkeys(pl["country"] for pl in turn["placements"]))
    limit = 2 if variants["two_countries_per_turn"] else 1
    if len(countries) > limit:
        warn_once("countries", f"{player} placed in {len(countries)} countries in one turn "
                               f"(at most {limit}): {', '.join(countries)}",
                  n=len(countries), limit=limit, countries=", ".join(countries))
    pieces = sum(pl["count"] for pl in turn["placements"])
    if pieces > 2:
        warn_once("pieces", f"{player} placed {pieces} pieces in one turn (at most 2)", n=pieces, limit=2)
    if before[country] == 0:
        here = [pl for pl in turn["placements"] if pl["country"] == country]
        n_here = sum(pl["count"] for pl in here)
        allowed = 2 if variants["two_monasteries_in_empty_country"] else 1
        if any(pl["piece"] == "councillor" for pl in here):
            warn_once(f"empty-councillor:{country}",
                      f"{country} had no monastery: only monasteries may be placed there this turn",
                      country=country)
        elif n_here > allowed:
            warn_once(f"empty-count:{country}",
                      f"{country} had no monastery: at most {allowed} "
                      f"{'monastery' if allowed == 1 else 'monasteries'} there this turn",
                      country=country, limit=allowed)

    # the pieces
    placed = dict(placed)
    placed[kind_key] += count
    new["placed"] = {**new["placed"], player: placed}
    if piece == "monastery":
        mons = dict(mons)
        mons[player] = mons.get(player, 0) + count
        new["monasteries"] = {**new["monasteries"], country: mons}
        if site is not None:
            new["sites"] = {**new["sites"], site: player}
            new["player_sites"] = {**new["player_sites"], player: new["player_sites"][player] + [site]}
        elif player not in new["by_country"]:
            new["by_country"] = new["by_country"] + [player]
    else:
        cons = dict(new["councillors"][country])
        cons[player] = cons.get(player, 0) + count
        new["councillors"] = {**new["councillors"], country: cons}
        cap = max(mons.values(), default=0)
        total = sum(cons.values())
        if total > cap:
            warn_once(f"cap:{country}", f"{country}: {total} councillor(s), more than the {cap} allowed "
                                        f"(the most monasteries of one player there)",
                      country=country, n=total, limit=cap)


def clock_seats(state) -> list[str]:
    """For a match with the clock: the seats in turn order from the first player (``options.first_player``),
    so that the clock's turn is the game's (docs/rulings.md#web-of-power-the-clock)."""
    ps = state["players"]
    i = ps.index(state["first_player"])
    return ps[i:] + ps[:i]


def turn_closed(before, after) -> str | None:
    """For a match with the clock (``options.clock``): the player whose open turn a game event other than
    ``turn.end`` closed (``deck.out``, ``game.end``, a placement by another player), so that the clock's
    turn moves on with the game's (docs/rulings.md, "Web of Power: the clock"); None when none was."""
    turn = before.get("turn")
    if turn is not None and after["turns"] > before["turns"]:
        return turn["player"]
    return None


def holds_clock(state) -> str | None:
    """For a match with the clock: at the scoring step the clock waits with the game (its time stops, its
    events are refused: no final roll can end a match whose final scoring misses parts); the reason, else
    None (docs/rulings.md, "Web of Power: the clock")."""
    if state.get("scoring_step") is None:
        return None
    return "the final scoring is waiting for its missing parts: the clock waits too (enter them, or undo)"


def end_by_clock(state, ended_by: dict | None) -> dict:
    """The match clock ended the match (a final roll): the game owes its final scoring, done now as for
    ``game.end`` (docs/rulings.md#web-of-power-the-clock). Complete, the match ends with its winner; with
    missing parts it waits at the scoring step (the fold takes the parts then, the clock being over). Pure;
    the same state once the final scoring is done or waiting."""
    if state["ended"] or state["scorings"]["final"] is not None:
        return state
    new = dict(state)
    _close_turn(new)
    _score_now(new, "final", None)
    return new


def is_ended(state) -> bool:
    """Ended: the final scoring is done and complete (a final scoring with missing parts waits for
    them at the scoring step)."""
    return bool(state.get("ended"))


def _totals(state) -> dict:
    totals = {p: 0 for p in state["players"]}
    for kind in ("intermediate", "final"):
        res = state["scorings"][kind]
        if res:
            for r in res["players"]:
                totals[r["player"]] += r["total"]
    return totals


def _unplayed(state) -> dict:
    return {p: MONASTERIES + COUNCILLORS - state["placed"][p]["monasteries"] - state["placed"][p]["councillors"]
            for p in state["players"]}


def final_ranking(state) -> list | None:
    """The season's result in the one shape (``companion.games.contract.Placing``) once the match has ended
    with a complete final scoring (ties on points go to the most unplayed pieces; players still level share
    the place); None before (docs/rulings.md, "Web of Power: incomplete scoring")."""
    if not is_ended(state):
        return None
    return [{"player": r["player"], "place": r["place"], "objective": False, "eliminated": False}
            for r in ranking(state["players"], _totals(state), _unplayed(state), tie_break=True)]


def final_points(state) -> dict | None:
    """Each player's points at the end (both scorings added), or None before a complete final scoring:
    what a play log receives as the score (companion/core/playlog.py)."""
    if not is_ended(state):
        return None
    return _totals(state)


def summary(state) -> dict:
    board = state["board"]
    players = state["players"]
    countries = []
    for c in board["countries"]:
        mons = state["monasteries"][c]
        cons = state["councillors"][c]
        cap = board["capacity"][c]
        # a country no event changed (its pieces' maps are the same objects) keeps its entry of the state before
        kept = _COUNTRIES.get((id(mons), id(cons)))
        if kept is not None and kept[0] is mons and kept[1] is cons and kept[2] is players and kept[3] == (c, cap):
            countries.append(kept[4])
            continue
        total = sum(mons.values())
        ccap = max(mons.values(), default=0)
        countries.append({
            "country": c,
            "monasteries": {p: mons[p] for p in players if mons.get(p)},
            "monasteries_total": total,
            "sites": cap,
            "free_sites": None if cap is None else cap - total,
            "councillors": {p: cons[p] for p in players if cons.get(p)},
            "councillors_total": sum(cons.values()),
            "councillor_cap": ccap,
            "councillor_room": max(0, ccap - sum(cons.values())),
        })
        if len(_COUNTRIES) >= 512:  # (a few tables' matches at a time: the others made again when asked)
            _COUNTRIES.clear()
        _COUNTRIES[(id(mons), id(cons))] = (mons, cons, players, (c, cap), countries[-1])
    supply = {p: {"monasteries": MONASTERIES - state["placed"][p]["monasteries"],
                  "councillors": COUNCILLORS - state["placed"][p]["councillors"]} for p in players}
    unplayed = _unplayed(state)
    totals = _totals(state)
    ended = bool(state["ended"])
    step = state.get("scoring_step")
    rank = ranking(players, totals, unplayed, tie_break=ended)
    # the turn warnings belong to: the open one, or the last one played
    current_turn = state["turns"] + (1 if state["turn"] is not None else 0)
    # what each player's monasteries would score now (an intermediate scoring's monasteries: ``evaluate``'s
    # totals, without the breakdown and the warnings it also makes)
    preview = dict.fromkeys(players, 0)
    for c in board["countries"]:
        for p, (points, _) in monastery_points(state["monasteries"].get(c) or {}).items():
            if p in preview:
                preview[p] += points
    turn = state["turn"]
    return {
        "phase": "ended" if ended else ("scoring" if step else "play"),
        "deck_outs": state["deck_outs"],
        "next_scoring": None if ended or step else ("intermediate" if state["deck_outs"] == 0 else "final"),
        # the parts the final scoring waits for, at the scoring step (else None)
        "missing": state["scorings"]["final"]["missing"] if step else None,
        # named only from a complete final scoring
        "winners": [r["player"] for r in rank if r["place"] == 1] if ended else None,
        # can_place: a placement is left in the open turn that breaks no rule (none: the page offers its end)
        "turn": None if turn is None else {"player": turn["player"], "placements": turn["placements"],
                                           "can_place": can_place(state)},
        "next_player": state["next_player"],
        "turns": state["turns"],
        "variants": state["variants"],
        "deck": state["deck"],
        "board": {"name": board["name"], "status": board["status"], "complete": board["complete"],
                  "roads_known": board["roads"] is not None},
        "countries": countries,
        "supply": supply,
        "hand_chains": state["hand_chains"],
        "hand_alliances": state.get("hand_alliances", {}),
        "scores": {
            "intermediate": state["scorings"]["intermediate"],
            "final": state["scorings"]["final"],
            "totals": totals,
            "complete": ended,
            "ranking": rank,
            # points (not pieces) each player's monasteries would score if the deck ran out now
            "preview": {"scoring": "monasteries now", "unit": "points",
                        "players": [{"player": p, "points": preview[p],
                                     "monasteries": sum(state["monasteries"][c].get(p, 0)
                                                        for c in board["countries"])}
                                    for p in players]},
        },
        "current_turn": current_turn,
        "warnings": _marked_warnings(state["warnings"], current_turn, ended),
    }


# what summaries made of parts that states share (never changed in place), for the next state's summary: the
# entries of countries no event changed, and the warnings' marks
_COUNTRIES: dict = {}  # (id(a country's monasteries), id(its councillors)) -> (those, the players, (country, sites), entry)
_MARKED: dict = {}  # id(a match's first warning) -> (the last warnings marked, the summary's list of them)


def _marked_warnings(warnings: list, current_turn: int, ended: bool) -> list:
    """The state's warnings as the summary lists them, each marked ``current`` when it belongs to the turn
    being played. A state's warnings are those of the state before and maybe one more (the same objects), so a
    warning whose mark did not change keeps the summary's entry of the state before (shared by their
    summaries, never changed in place): a summary makes only what changed, and a stream's patch
    (``companion.base.jsondiff``) skips what is shared."""
    if not warnings:
        return []
    kept = _MARKED.get(id(warnings[0]))
    before, marked = kept if kept is not None and kept[0] and kept[0][0] is warnings[0] else ((), ())
    if before is warnings:
        same = [m["current"] for m in marked] == [not ended and w.get("turn") == current_turn for w in warnings]
        if same:
            return marked
    out = []
    for i, w in enumerate(warnings):
        current = not ended and w.get("turn") == current_turn
        if i < len(before) and before[i] is w and marked[i]["current"] == current:
            out.append(marked[i])
        else:
            out.append({**w, "current": current})
    if len(_MARKED) >= 64 and id(warnings[0]) not in _MARKED:  # (a few tables at a time: the others made again)
        _MARKED.clear()
    _MARKED[id(warnings[0])] = (warnings, out)
    return out
