"""The club roster in SQLite (migration ``0006_roster.sql``): players, their "this is me" links, merges.

Each person is on a club's roster once. Matches (``match_players``: one row per seat) and season results
(``season_results.player_id``) reference the roster id, so **a rename keeps the history**: pages and
standings show the roster's current name, while a match's event log keeps the names typed at the table.
**Merging** two entries (the same person typed twice) moves every seat and season result of one into the
other, deletes the emptied entry and writes an audit row (who, when, from, into). Names are compared by
``companion.base.names.name_key`` only to *suggest* that two entries are one person; nothing is merged
without someone asking.

Every write goes through ``Store.write()`` (a savepoint inside the match service's transaction when the
service calls it).
"""

from __future__ import annotations

import re
import secrets

from companion.base.errors import ConflictError, InputError, NotFoundError, RuleError
from companion.base.names import matches_query, name_key, short_name as default_short_name

NAME_MAX = 40
SHORT_MAX = 12
COLOUR_RE = re.compile(r"^#[0-9a-fA-F]{6}\Z")  # (\Z: $ would let a final newline through)
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")


# -- checks -----------------------------------------------------------------------------------------

def check_name(name, field: str = "name", limit: int = NAME_MAX) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InputError("must be a non-empty name", field)
    if _CONTROL.search(name):
        raise InputError("must not contain control characters", field)
    name = " ".join(name.split())
    if len(name) > limit:
        raise InputError("must be at most {limit} characters", field, limit=limit)
    return name


def check_colour(colour, field: str = "colour") -> str:
    if colour in (None, ""):
        return ""
    if not isinstance(colour, str) or not COLOUR_RE.match(colour):
        raise InputError("must be a colour #rrggbb", field)
    return colour.lower()


# -- reading ----------------------------------------------------------------------------------------

def _row(row) -> dict:
    return {"id": row["id"], "club_id": row["club_id"], "name": row["name"],
            "short_name": row["short_name"] or default_short_name(row["name"], SHORT_MAX),
            "colour": row["colour"] or None, "created_at": row["created_at"]}


def get_player(store, player_id: str, field: str = "id") -> dict:
    if not isinstance(player_id, str) or not player_id:
        raise InputError("must name a roster player (id)", field)
    row = store.conn().execute("SELECT * FROM players WHERE id=?", (player_id,)).fetchone()
    if row is None:
        raise NotFoundError("no roster player {player_id!r}", field, player_id=player_id)
    return _row(row)


def find_by_name(store, club_id: str, name: str) -> dict | None:
    row = store.conn().execute("SELECT * FROM players WHERE club_id=? AND name=?", (club_id, name)).fetchone()
    return _row(row) if row else None


def list_players(store, club_id: str | None = None, q: str | None = None, limit: int = 500) -> list[dict]:
    """The roster (of one club, or every club's), by name; ``q``: type-ahead (word starts, case- and
    accent-insensitive). Each entry says which other entries of its club look like the same person."""
    if club_id is None:
        rows = store.conn().execute("SELECT * FROM players ORDER BY club_id, name").fetchall()
    else:
        rows = store.conn().execute("SELECT * FROM players WHERE club_id=? ORDER BY name", (club_id,)).fetchall()
    players = [_row(r) for r in rows]
    keys: dict[tuple[str, str], list[str]] = {}
    for p in players:
        keys.setdefault((p["club_id"], name_key(p["name"])), []).append(p["id"])
    for p in players:
        p["similar"] = [i for i in keys[(p["club_id"], name_key(p["name"]))] if i != p["id"]]
    if q:
        players = [p for p in players if matches_query(p["name"], q) or matches_query(p["short_name"], q)]
    players.sort(key=lambda p: (name_key(p["name"]), p["name"]))
    return players[:limit]


def similar_to(store, club_id: str, name: str, exclude: str | None = None) -> list[dict]:
    """Roster entries of the club whose name has the same key as ``name`` (a suggestion, never a merge)."""
    key = name_key(name)
    return [p for p in list_players(store, club_id) if name_key(p["name"]) == key and p["id"] != exclude]


# -- writing ----------------------------------------------------------------------------------------

def _new_id() -> str:
    return secrets.token_hex(6)


def create_player(store, club_id: str, name, short_name=None, colour=None) -> dict:
    """Add a player to a club's roster. The exact same name twice is refused (409); a name that only
    looks the same ("Nicolò" / "nicolo") is added, and the answer's ``similar`` names the look-alikes."""
    name = check_name(name)
    short = "" if short_name in (None, "") else check_name(short_name, "short_name", SHORT_MAX)
    colour = check_colour(colour)
    from companion.storage import seasons as season_rows

    season_rows.get_club(store, club_id)
    player_id = _new_id()
    with store.write() as c:
        if c.execute("SELECT 1 FROM players WHERE club_id=? AND name=?", (club_id, name)).fetchone():
            raise ConflictError("{name!r} is on the roster already", "name", name=name)
        c.execute("INSERT INTO players(id, club_id, name, short_name, colour, created_at) VALUES (?,?,?,?,?,?)",
                  (player_id, club_id, name, short, colour, store.clock.now_iso()))
    out = get_player(store, player_id)
    out["similar"] = [p["id"] for p in similar_to(store, club_id, name, exclude=player_id)]
    return out


def update_player(store, player_id: str, name=None, short_name=None, colour=None) -> dict:
    """Rename a player, or change their short name or colour. Their matches and results follow (they
    reference the id). A name another entry of the club has already is refused (409: merge them instead)."""
    p = get_player(store, player_id)
    changes = {}
    if name is not None:
        changes["name"] = check_name(name)
    if short_name is not None:
        changes["short_name"] = "" if short_name == "" else check_name(short_name, "short_name", SHORT_MAX)
    if colour is not None:
        changes["colour"] = check_colour(colour)
    if not changes:
        return p
    with store.write() as c:
        if "name" in changes and c.execute("SELECT 1 FROM players WHERE club_id=? AND name=? AND id<>?",
                                           (p["club_id"], changes["name"], player_id)).fetchone():
            raise ConflictError("{name!r} is on the roster already (merge the two instead)", "name", name=changes['name'])
        sets = ", ".join(f"{k}=?" for k in changes)
        c.execute(f"UPDATE players SET {sets} WHERE id=?", (*changes.values(), player_id))
    return get_player(store, player_id)


def merge_players(store, from_id: str, into_id: str, by: str) -> dict:
    """``from_id`` and ``into_id`` are one person: every match seat and season result of ``from_id`` moves to
    ``into_id``, its "this is me" links too, ``from_id`` leaves the roster and an audit row is written.
    Refused when the two played in the same match (they are two people then) or belong to two clubs."""
    src = get_player(store, from_id, "from")
    dst = get_player(store, into_id, "into")
    if src["id"] == dst["id"]:
        raise InputError("cannot merge a player into themselves", "into")
    if src["club_id"] != dst["club_id"]:
        raise RuleError("the two players are on different clubs' rosters", "into")
    with store.write() as c:
        both = c.execute("SELECT a.match_id FROM match_players a JOIN match_players b ON a.match_id=b.match_id "
                         "WHERE a.player_id=? AND b.player_id=? LIMIT 1", (from_id, into_id)).fetchone() or \
            c.execute("SELECT a.match FROM season_results a JOIN season_results b "
                      "ON a.season_id=b.season_id AND a.match=b.match "
                      "WHERE a.player_id=? AND b.player_id=? LIMIT 1", (from_id, into_id)).fetchone()
        if both:
            raise RuleError("{name!r} and {name2!r} played in the same match ({both}): they are two people", "from", name=src['name'], name2=dst['name'], both=both[0])
        moved = c.execute("UPDATE match_players SET player_id=? WHERE player_id=?", (into_id, from_id)).rowcount
        moved += c.execute("UPDATE season_results SET player_id=? WHERE player_id=?", (into_id, from_id)).rowcount
        c.execute("UPDATE player_links SET player_id=? WHERE player_id=?", (into_id, from_id))
        c.execute("UPDATE tournament_players SET player_id=? WHERE player_id=?", (into_id, from_id))
        # the phones signed in by the merged-away entry's personal links are the kept entry's now
        c.execute("UPDATE web_sessions SET data=json_set(data, '$.me', ?) "
                  "WHERE json_valid(data) AND json_extract(data, '$.me')=?", (into_id, from_id))
        c.execute("DELETE FROM players WHERE id=?", (from_id,))
        at = store.clock.now_iso()
        c.execute("INSERT INTO player_merges(club_id, from_id, from_name, into_id, into_name, by, at, results) "
                  "VALUES (?,?,?,?,?,?,?,?)", (src["club_id"], from_id, src["name"], into_id, dst["name"], by, at,
                                               moved))
    return {"from": {"id": from_id, "name": src["name"]}, "into": get_player(store, into_id), "by": by, "at": at,
            "results": moved}


def current_id(store, player_id: str) -> str:
    """The roster entry ``player_id`` is now: itself, or (when it was merged away) the entry it was merged
    into, following the merge audit through a chain of merges."""
    seen = {player_id}
    conn = store.conn()
    while True:
        row = conn.execute("SELECT into_id FROM player_merges WHERE from_id=? ORDER BY id DESC LIMIT 1",
                           (player_id,)).fetchone()
        if row is None or row[0] in seen:
            return player_id
        player_id = row[0]
        seen.add(player_id)


def merges(store, club_id: str | None = None) -> list[dict]:
    sql = "SELECT * FROM player_merges" + (" WHERE club_id=?" if club_id else "") + " ORDER BY id"
    rows = store.conn().execute(sql, (club_id,) if club_id else ())
    return [{"club_id": r["club_id"], "from": {"id": r["from_id"], "name": r["from_name"]},
             "into": {"id": r["into_id"], "name": r["into_name"]}, "by": r["by"], "at": r["at"],
             "results": r["results"]} for r in rows]


def ensure_players(store, club_id: str, names: list[str]) -> dict[str, str]:
    """The roster ids of ``names`` in a club (exact names), adding the missing ones. Inside a write."""
    out = {}
    with store.write() as c:
        for name in names:
            row = c.execute("SELECT id FROM players WHERE club_id=? AND name=?", (club_id, name)).fetchone()
            if row is None:
                pid = _new_id()
                c.execute("INSERT INTO players(id, club_id, name, created_at) VALUES (?,?,?,?)",
                          (pid, club_id, name, store.clock.now_iso()))
                out[name] = pid
            else:
                out[name] = row[0]
    return out


# -- matches ------------------------------------------------------------------------------------------

def link_match(store, match: dict, club_id: str | None, seats: dict[int, str] | None = None) -> dict[int, str]:
    """Put a new match's seats on the club's roster: ``seats`` {seat: player id} as chosen at creation,
    the other seats by their exact name on the roster (a name not on it is a guest: no row)."""
    if not club_id:
        return {}
    seats = dict(seats or {})
    with store.write() as c:
        for i, name in enumerate(match["players"]):
            pid = seats.get(i)
            if pid is None:
                row = c.execute("SELECT id FROM players WHERE club_id=? AND name=?", (club_id, name)).fetchone()
                pid = row[0] if row else None
            else:
                row = c.execute("SELECT club_id FROM players WHERE id=?", (pid,)).fetchone()
                if row is None or row[0] != club_id:
                    raise InputError("no roster player {pid!r} in this club", f"roster[{i}]", pid=pid)
            if pid is not None:
                seats[i] = pid
                c.execute("INSERT INTO match_players(match_id, seat, player_id) VALUES (?,?,?) "
                          "ON CONFLICT(match_id, seat) DO UPDATE SET player_id=excluded.player_id",
                          (match["id"], i, pid))
        c.execute("DELETE FROM roster_pending WHERE match_id=?", (match["id"],))
    return seats


def match_seats(store, match_id: str) -> dict[int, str]:
    return {r[0]: r[1] for r in store.conn().execute(
        "SELECT seat, player_id FROM match_players WHERE match_id=?", (match_id,))}


def match_roster(store, match_id: str) -> list[dict]:
    """Each linked seat of a match: seat, roster id and current name."""
    rows = store.conn().execute(
        "SELECT mp.seat, mp.player_id, p.name, mp.place FROM match_players mp JOIN players p ON p.id = mp.player_id "
        "WHERE mp.match_id=? ORDER BY mp.seat", (match_id,))
    return [{"seat": r[0], "id": r[1], "name": r[2], "place": r[3]} for r in rows]


def set_places(store, match: dict, results: list[dict] | None) -> None:
    """Derived from the log in the event's transaction: the place of each linked seat (None: in play)."""
    places = {r["player"]: r["place"] for r in results or []}
    with store.write() as c:
        for i, name in enumerate(match["players"]):
            c.execute("UPDATE match_players SET place=? WHERE match_id=? AND seat=?", (places.get(name), match["id"], i))


# -- leftovers of the migration -------------------------------------------------------------------------

def pending(store) -> list[dict]:
    rows = store.conn().execute(
        "SELECT r.match_id, r.reason, m.game, m.players, m.created_at FROM roster_pending r "
        "JOIN matches m ON m.id = r.match_id ORDER BY m.created_at, r.match_id")
    import json

    return [{"match_id": r[0], "reason": r[1], "game": r[2], "players": json.loads(r[3]), "created_at": r[4]}
            for r in rows]


def assign_pending(store, match_id: str, club_id: str, by: str = "organiser (cli)") -> dict:
    """The organiser confirms a leftover match's club: its players go on that roster (exact names), one
    audit line per seat not placed before."""
    from companion.storage import seasons as season_rows

    club = season_rows.get_club(store, club_id)
    if not store.conn().execute("SELECT 1 FROM roster_pending WHERE match_id=?", (match_id,)).fetchone():
        raise NotFoundError("match {match_id} is not waiting for a club", "match", match_id=match_id)
    match = store.get_match(match_id)
    with store.write() as c:
        placed = match_seats(store, match_id)
        known = {r[0] for r in c.execute("SELECT name FROM players WHERE club_id=?", (club["id"],))}
        ids = ensure_players(store, club["id"], match["players"])
        link_match(store, match, club["id"], {i: ids[n] for i, n in enumerate(match["players"])})
        for i, name in enumerate(match["players"]):
            if i not in placed:
                _audit(c, store, club["id"], name, ids[name], name, name not in known, by, match_id=match_id, seat=i)
    return {"match_id": match_id, "club_id": club["id"], "players": match_roster(store, match_id)}


def _audit(c, store, club_id, name, player_id, player_name, created, by, match_id=None, seat=None, season_id=None,
           season_match=None) -> dict:
    at = store.clock.now_iso()
    c.execute("INSERT INTO roster_assignments(club_id, match_id, seat, season_id, season_match, name, player_id, "
              "player_name, created, by, at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
              (club_id, match_id, seat, season_id, season_match, name, player_id, player_name, int(created), by, at))
    return {"club_id": club_id, "match_id": match_id, "seat": seat, "season_id": season_id,
            "season_match": season_match, "name": name, "player": {"id": player_id, "name": player_name},
            "created": bool(created), "by": by, "at": at}


def assignments(store, club_id: str | None = None) -> list[dict]:
    """The audit of the leftovers placed by hand, oldest first."""
    sql = "SELECT * FROM roster_assignments" + (" WHERE club_id=?" if club_id else "") + " ORDER BY id"
    return [{"club_id": r["club_id"], "match_id": r["match_id"], "seat": r["seat"], "season_id": r["season_id"],
             "season_match": r["season_match"], "name": r["name"],
             "player": {"id": r["player_id"], "name": r["player_name"]}, "created": bool(r["created"]),
             "by": r["by"], "at": r["at"]}
            for r in store.conn().execute(sql, (club_id,) if club_id else ())]


def _suggest(players: list[dict], name: str, club_id: str | None) -> list[dict]:
    """The roster entries that look like ``name`` (the same ``name_key``: case, accents, spacing), of
    ``club_id`` or of any club: a suggestion for the organiser, never applied by itself. The exact name first."""
    key = name_key(name)
    out = [{"id": p["id"], "name": p["name"], "club_id": p["club_id"], "exact": p["name"] == name} for p in players
           if name_key(p["name"]) == key and (club_id is None or p["club_id"] == club_id)]
    out.sort(key=lambda x: (not x["exact"], x["name"], x["club_id"]))
    return out


def leftovers(store) -> list[dict]:
    """What the roster migration could not put on a roster, name by name, for the organiser: the seats of
    the matches waiting for a club (``kind: "match"``; ``club_id`` once one seat is placed: the others go
    to the same club) and season results without a roster entry (``kind: "season"``). Each name lists the
    roster entries that look like the same person (``suggested``)."""
    conn = store.conn()
    everyone = list_players(store)
    out = []
    for m in pending(store):
        placed = match_seats(store, m["match_id"])
        club = None
        if placed:
            row = conn.execute("SELECT club_id FROM players WHERE id=?", (next(iter(placed.values())),)).fetchone()
            club = row[0] if row else None
        names = []
        for i, name in enumerate(m["players"] if isinstance(m["players"], list) else []):
            pid = placed.get(i)
            entry = {"seat": i, "name": name, "player_id": pid}
            if pid is None:
                entry["suggested"] = _suggest(everyone, name, club)
            names.append(entry)
        out.append({"kind": "match", **m, "club_id": club, "names": names})
    rows = conn.execute(
        "SELECT r.season_id, r.match, r.player, s.name AS season, s.club_id, sm.date FROM season_results r "
        "JOIN seasons s ON s.id = r.season_id LEFT JOIN season_matches sm ON sm.season_id = r.season_id "
        "AND sm.id = r.match WHERE r.player_id IS NULL ORDER BY sm.date, r.season_id, r.match, r.player").fetchall()
    groups: dict = {}
    for r in rows:
        g = groups.get((r["season_id"], r["match"]))
        if g is None:
            g = groups[(r["season_id"], r["match"])] = {
                "kind": "season", "season_id": r["season_id"], "season": r["season"], "match": r["match"],
                "date": r["date"], "club_id": r["club_id"], "names": []}
            out.append(g)
        g["names"].append({"name": r["player"], "player_id": None,
                           "suggested": _suggest(everyone, r["player"], r["club_id"])})
    return out


def assign_leftover(store, target: dict, player_id: str | None, new_club: str | None, by: str,
                    places: dict[str, int] | None = None) -> dict:
    """Put one leftover name on the roster: ``target`` ``{"match_id", "seat"}`` (a waiting match's seat) or
    ``{"season_id", "match", "name"}`` (a season result); to the roster entry ``player_id``, or to a new entry
    of that name (in ``new_club``, else the club the leftover belongs to, else the only club). One audit line.
    ``places``: a finished match's place by name (its seat gets its place). A match leaves the waiting list
    once every seat is placed. Nothing else changes: look-alike entries stay apart until someone merges."""
    from companion.storage import seasons as season_rows

    match_id = target.get("match_id")
    with store.write() as c:
        if match_id is not None:
            seat = target.get("seat")
            if not c.execute("SELECT 1 FROM roster_pending WHERE match_id=?", (match_id,)).fetchone():
                raise NotFoundError("match {match_id} is not waiting for the roster", "$.match_id", match_id=match_id)
            match = store.get_match(match_id)
            if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < len(match["players"]):
                raise InputError("match {match_id} has no seat {seat!r}", "$.seat", match_id=match_id, seat=seat)
            placed = match_seats(store, match_id)
            if seat in placed:
                raise ConflictError("seat {seat} of match {match_id} is on the roster already", "$.seat", seat=seat,
                                    match_id=match_id)
            name = match["players"][seat]
            club_id = None
            if placed:
                row = c.execute("SELECT club_id FROM players WHERE id=?", (next(iter(placed.values())),)).fetchone()
                club_id = row[0] if row else None
        else:
            season_id, sm, name = target.get("season_id"), target.get("match"), target.get("name")
            row = c.execute("SELECT s.club_id FROM season_results r JOIN seasons s ON s.id = r.season_id "
                            "WHERE r.season_id=? AND r.match=? AND r.player=? AND r.player_id IS NULL",
                            (season_id, sm, name)).fetchone()
            if row is None:
                raise NotFoundError("no season result of {name!r} waiting for the roster", "$.name", name=name)
            club_id = row[0]
        created = False
        if player_id is not None:
            p = get_player(store, player_id, "$.player_id")
            if club_id is not None and p["club_id"] != club_id:
                if match_id:
                    raise RuleError("{name!r} is on another club's roster than this match's other players",
                                    "$.player_id", name=p["name"])
                raise RuleError("{name!r} is on another club's roster than this season", "$.player_id",
                                name=p["name"])
        else:
            home = new_club or club_id
            if home is None:
                clubs = season_rows.list_clubs(store)
                if len(clubs) != 1:
                    if not clubs:
                        raise InputError("there is no club yet: create one on the seasons page first", "$.club")
                    raise InputError("this box has several clubs: say which one", "$.club")
                home = clubs[0]["id"]
            home = season_rows.get_club(store, home, "$.club")["id"]
            if club_id is not None and home != club_id:
                raise RuleError("the other names of this match are on another club's roster", "$.club")
            if c.execute("SELECT 1 FROM players WHERE club_id=? AND name=?", (home, name)).fetchone():
                raise ConflictError("{name!r} is on the roster already: pick that entry", "$.player_id", name=name)
            pid = _new_id()
            c.execute("INSERT INTO players(id, club_id, name, created_at) VALUES (?,?,?,?)",
                      (pid, home, check_name(name, "$.name"), store.clock.now_iso()))
            p = {"id": pid, "club_id": home, "name": name}
            created = True
        if match_id is not None:
            c.execute("INSERT INTO match_players(match_id, seat, player_id, place) VALUES (?,?,?,?)",
                      (match_id, seat, p["id"], (places or {}).get(name)))
            if c.execute("SELECT COUNT(*) FROM match_players WHERE match_id=?", (match_id,)).fetchone()[0] == \
                    len(match["players"]):
                c.execute("DELETE FROM roster_pending WHERE match_id=?", (match_id,))
            line = _audit(c, store, p["club_id"], name, p["id"], p["name"], created, by, match_id=match_id,
                          seat=seat)
        else:
            c.execute("UPDATE season_results SET player_id=? WHERE season_id=? AND match=? AND player=?",
                      (p["id"], season_id, sm, name))
            line = _audit(c, store, p["club_id"], name, p["id"], p["name"], created, by, season_id=season_id,
                          season_match=sm)
    return line


# -- "this is me" links -------------------------------------------------------------------------------

def create_link(store, player_id: str) -> str:
    """A new personal link token for a roster player (only its SHA-256 is stored). Returns the token."""
    from companion.base.digest import hash_secret

    get_player(store, player_id)
    token = secrets.token_urlsafe(24)
    with store.write() as c:
        c.execute("INSERT INTO player_links(token_hash, player_id, created_at) VALUES (?,?,?)",
                  (hash_secret(token), player_id, store.clock.now_iso()))
    return token


def link_owner(store, token: str) -> dict | None:
    """The roster player of a live personal link, or None (unknown or revoked)."""
    from companion.base.digest import hash_secret

    if not isinstance(token, str) or not token or len(token) > 200:
        return None
    row = store.conn().execute("SELECT player_id, revoked FROM player_links WHERE token_hash=?",
                               (hash_secret(token),)).fetchone()
    if row is None or row["revoked"]:
        return None
    return get_player(store, row["player_id"])


def links(store, player_id: str) -> list[dict]:
    rows = store.conn().execute(
        "SELECT l.token_hash, l.created_at, l.revoked, "
        "(SELECT COUNT(*) FROM web_sessions s WHERE s.join_hash = l.token_hash) AS sessions "
        "FROM player_links l WHERE l.player_id=? ORDER BY l.created_at", (player_id,))
    return [{"id": r[0][:12], "created_at": r[1], "revoked": bool(r[2]), "sessions": r[3]} for r in rows]


def revoke_links(store, player_id: str) -> dict:
    """End every personal link of a player and the phone sessions made from them."""
    get_player(store, player_id)
    with store.write() as c:
        hashes = [r[0] for r in c.execute("SELECT token_hash FROM player_links WHERE player_id=? AND revoked=0",
                                          (player_id,))]
        c.execute("UPDATE player_links SET revoked=1 WHERE player_id=?", (player_id,))
        ended = 0
        for h in hashes:
            ended += c.execute("DELETE FROM web_sessions WHERE join_hash=?", (h,)).rowcount
    return {"links_revoked": len(hashes), "sessions_ended": ended}


# -- the player page ------------------------------------------------------------------------------------

def history(store, player_id: str) -> list[dict]:
    """Every result of a player, oldest first: app matches (ended, with their place) and season results
    entered by hand. ``{"date", "game", "match_id"?, "season_id"?, "season"?, "place", "players"}``."""
    c = store.conn()
    out = []
    seen_matches = set()
    rows = c.execute(
        "SELECT mp.match_id, m.game, mp.place, m.players, "
        "COALESCE(sm.date, (SELECT MAX(e.at) FROM events e WHERE e.match_id = m.id), m.created_at) AS date, "
        "sm.season_id, s.name AS season "
        "FROM match_players mp JOIN matches m ON m.id = mp.match_id "
        "LEFT JOIN season_matches sm ON sm.match_id = m.id LEFT JOIN seasons s ON s.id = sm.season_id "
        "WHERE mp.player_id=? AND m.status='ended'", (player_id,)).fetchall()
    import json

    for r in rows:
        seen_matches.add(r["match_id"])
        out.append({"date": r["date"], "game": r["game"], "match_id": r["match_id"], "place": r["place"],
                    "players": len(json.loads(r["players"])), "season_id": r["season_id"], "season": r["season"]})
    for r in c.execute(
            "SELECT r.season_id, r.match, r.place, sm.date, sm.match_id, s.game, s.name AS season, "
            "(SELECT COUNT(*) FROM season_results x WHERE x.season_id = r.season_id AND x.match = r.match) AS n "
            "FROM season_results r JOIN season_matches sm ON sm.season_id = r.season_id AND sm.id = r.match "
            "JOIN seasons s ON s.id = r.season_id WHERE r.player_id=?", (player_id,)):
        if r["match_id"] in seen_matches:
            continue
        out.append({"date": r["date"], "game": r["game"], "match_id": r["match_id"], "place": r["place"],
                    "players": r["n"], "season_id": r["season_id"], "season": r["season"]})
    out.sort(key=lambda x: (x["date"], x["match_id"] or ""))
    return out


def club_results(store, club_id: str, game: str) -> list[dict]:
    """Every placed result of a club's players in one game, by match, players as roster ids (for ratings):
    the club's season matches and its ended app matches outside seasons."""
    c = store.conn()
    matches: dict[str, dict] = {}
    for r in c.execute(
            "SELECT sm.season_id || '/' || sm.id AS k, sm.date, r.player_id, r.place "
            "FROM season_results r JOIN season_matches sm ON sm.season_id = r.season_id AND sm.id = r.match "
            "JOIN seasons s ON s.id = r.season_id WHERE s.club_id=? AND s.game=? AND r.player_id IS NOT NULL",
            (club_id, game)):
        matches.setdefault(r["k"], {"id": r["k"], "date": r["date"], "results": []})["results"].append(
            {"player": r["player_id"], "place": r["place"]})
    for r in c.execute(
            "SELECT mp.match_id, mp.player_id, mp.place, "
            "COALESCE((SELECT MAX(e.at) FROM events e WHERE e.match_id = m.id), m.created_at) AS date "
            "FROM match_players mp JOIN matches m ON m.id = mp.match_id JOIN players p ON p.id = mp.player_id "
            "WHERE p.club_id=? AND m.game=? AND m.status='ended' AND mp.place IS NOT NULL "
            "AND NOT EXISTS (SELECT 1 FROM season_matches sm WHERE sm.match_id = m.id)", (club_id, game)):
        matches.setdefault(r["match_id"], {"id": r["match_id"], "date": r["date"], "results": []})["results"].append(
            {"player": r["player_id"], "place": r["place"]})
    return [m for m in matches.values() if len(m["results"]) >= 2]


def resolve(store, ref: str, club_id: str | None = None, field: str = "player") -> dict:
    """A roster player by id, or by exact name (within ``club_id`` when given; a name on several clubs'
    rosters needs the club)."""
    if not isinstance(ref, str) or not ref.strip():
        raise InputError("must name a roster player (id or exact name)", field)
    row = store.conn().execute("SELECT * FROM players WHERE id=?", (ref,)).fetchone()
    if row is not None and (club_id is None or row["club_id"] == club_id):
        return _row(row)
    if club_id is None:
        rows = store.conn().execute("SELECT * FROM players WHERE name=?", (ref,)).fetchall()
    else:
        rows = store.conn().execute("SELECT * FROM players WHERE name=? AND club_id=?", (ref, club_id)).fetchall()
    if len(rows) > 1:
        raise InputError("{ref!r} is on several clubs' rosters: say which club", field, ref=ref)
    if not rows:
        raise NotFoundError("no roster player {ref!r}", field, ref=ref)
    return _row(rows[0])
