"""The rows of clubs, seasons and their results (migration ``0003_seasons.sql``): SQL and nothing else.

What a club's or a season's settings may be, which season a match feeds and what a result must hold are
the season service's (``companion/services/seasons.py``); the maths is ``companion/core/season.py``. Every
write is inside ``Store.write()``: the functions taking ``c`` run in the caller's write (one transaction
with the caller's other rows), the others open their own."""

from __future__ import annotations

import json

from companion.base.errors import ConflictError, InputError, NotFoundError


# -- clubs --------------------------------------------------------------------------------------

def _club_row(row) -> dict:
    return {"id": row["id"], "name": row["name"], "settings": json.loads(row["settings"]),
            "created_at": row["created_at"]}


def insert_club(store, club: dict) -> dict:
    """A new club row (``id``, ``name``, ``settings``, ``created_at``); a name taken already is a 409."""
    with store.write() as c:
        if c.execute("SELECT 1 FROM clubs WHERE name=?", (club["name"],)).fetchone():
            raise ConflictError("a club named {name!r} exists already", "name", name=club["name"])
        c.execute("INSERT INTO clubs(id, name, settings, created_at) VALUES (?,?,?,?)",
                  (club["id"], club["name"], json.dumps(club["settings"]), club["created_at"]))
    return club


def get_club(store, ref: str, field: str = "club") -> dict:
    """A club by id or by name."""
    if not isinstance(ref, str) or not ref:
        raise InputError("must name a club (id or name)", field)
    c = store.conn()
    row = c.execute("SELECT * FROM clubs WHERE id=?", (ref,)).fetchone() or \
        c.execute("SELECT * FROM clubs WHERE name=?", (ref,)).fetchone()
    if row is None:
        raise NotFoundError("no club {ref!r}", field, ref=ref)
    return _club_row(row)


def list_clubs(store) -> list[dict]:
    return [_club_row(r) for r in store.conn().execute("SELECT * FROM clubs ORDER BY name")]


def only_club_id(store) -> str | None:
    """The id of the box's club when it has exactly one, else None."""
    clubs = store.conn().execute("SELECT id FROM clubs LIMIT 2").fetchall()
    return clubs[0]["id"] if len(clubs) == 1 else None


def update_club_name(store, club_id: str, name: str) -> None:
    """A club's new name; one another club has already is a 409 (names are told apart without case)."""
    with store.write() as c:
        if c.execute("SELECT 1 FROM clubs WHERE name=? AND id<>?", (name, club_id)).fetchone():
            raise ConflictError("a club named {name!r} exists already", "name", name=name)
        c.execute("UPDATE clubs SET name=? WHERE id=?", (name, club_id))


def update_club_settings(store, club_id: str, settings: dict) -> None:
    with store.write() as c:
        c.execute("UPDATE clubs SET settings=? WHERE id=?", (json.dumps(settings), club_id))


# -- seasons ------------------------------------------------------------------------------------

def _season_row(row) -> dict:
    return {"id": row["id"], "club_id": row["club_id"], "club": row["club_name"], "game": row["game"],
            "year": row["year"], "name": row["name"], "settings": json.loads(row["settings"]),
            "created_at": row["created_at"]}


_SEASON_SQL = ("SELECT s.*, c.name AS club_name FROM seasons s JOIN clubs c ON c.id = s.club_id ")


def insert_season(store, season: dict) -> dict:
    """A new season row; a second season of the same club, game and year is a 409."""
    with store.write() as c:
        if c.execute("SELECT 1 FROM seasons WHERE club_id=? AND game=? AND year=?",
                     (season["club_id"], season["game"], season["year"])).fetchone():
            raise ConflictError("{name} has a {game} season for {year} already", "year", name=season["club"],
                                game=season["game"], year=season["year"])
        c.execute("INSERT INTO seasons(id, club_id, game, year, name, settings, created_at) VALUES (?,?,?,?,?,?,?)",
                  (season["id"], season["club_id"], season["game"], season["year"], season["name"],
                   json.dumps(season["settings"]), season["created_at"]))
    return season


def get_season(store, ref: str, field: str = "season") -> dict:
    """A season by id, or by ``club/game/year`` (the club by id or name)."""
    if not isinstance(ref, str) or not ref:
        raise InputError("must name a season (id, or club/game/year)", field)
    c = store.conn()
    row = c.execute(_SEASON_SQL + "WHERE s.id=?", (ref,)).fetchone()
    if row is None and ref.count("/") >= 2:
        club, game, year = ref.rsplit("/", 2)
        if year.isdigit():
            row = c.execute(_SEASON_SQL + "WHERE (c.id=? OR c.name=?) AND s.game=? AND s.year=?",
                            (club, club, game, int(year))).fetchone()
    if row is None:
        raise NotFoundError("no season {ref!r} (give its id, or club/game/year)", field, ref=ref)
    return _season_row(row)


def find_season(store, club_id: str, game: str, year: int) -> dict | None:
    row = store.conn().execute(_SEASON_SQL + "WHERE s.club_id=? AND s.game=? AND s.year=?",
                               (club_id, game, year)).fetchone()
    return _season_row(row) if row else None


def list_seasons(store, club_id: str | None = None) -> list[dict]:
    """Every season, or a club's (by its id), newest year first."""
    if club_id is not None:
        rows = store.conn().execute(_SEASON_SQL + "WHERE s.club_id=? ORDER BY s.year DESC, s.game", (club_id,))
    else:
        rows = store.conn().execute(_SEASON_SQL + "ORDER BY c.name, s.year DESC, s.game")
    return [_season_row(r) for r in rows]


def update_season_settings(store, season_id: str, settings: dict) -> None:
    with store.write() as c:
        c.execute("UPDATE seasons SET settings=? WHERE id=?", (json.dumps(settings), season_id))


# -- results ------------------------------------------------------------------------------------

def season_matches(store, season_id: str) -> list[dict]:
    """The season's matches, normalized like ``companion.core.season`` wants them, in date order."""
    c = store.conn()
    matches: dict[str, dict] = {}
    for row in c.execute("SELECT id, date, source, match_id FROM season_matches WHERE season_id=? "
                         "ORDER BY date, id", (season_id,)):
        matches[row["id"]] = {"id": row["id"], "date": row["date"], "source": row["source"],
                              "match_id": row["match_id"], "results": []}
    # The roster's current name of each player (a rename keeps the history), else the name as recorded.
    for row in c.execute("SELECT r.match, COALESCE(p.name, r.player) AS player, r.place, r.objective, r.eliminated "
                         "FROM season_results r LEFT JOIN players p ON p.id = r.player_id "
                         "WHERE r.season_id=? ORDER BY r.match, r.place, player", (season_id,)):
        m = matches.get(row["match"])
        if m is not None:
            m["results"].append({"player": row["player"], "place": row["place"],
                                 "objective": bool(row["objective"]), "eliminated": bool(row["eliminated"])})
    return list(matches.values())


def has_match(c, season_id: str, match: str) -> bool:
    """Whether the season has a match ``match`` (entered by hand or from the app)."""
    return c.execute("SELECT 1 FROM season_matches WHERE season_id=? AND id=?", (season_id, match)).fetchone() \
        is not None


def insert_match(c, season_id: str, m: dict, source: str, match_id: str | None, now: str,
                 ids: dict[str, str] | None = None) -> None:
    """A season match and its results (``m``: ``id``, ``date``, ``results``). ``ids``: the roster id of each
    result's player name (every season result is on the club's roster)."""
    ids = ids or {}
    c.execute("INSERT INTO season_matches(season_id, id, date, source, match_id, created_at) VALUES (?,?,?,?,?,?)",
              (season_id, m["id"], m["date"], source, match_id, now))
    c.executemany("INSERT INTO season_results(season_id, match, player, place, objective, eliminated, player_id) "
                  "VALUES (?,?,?,?,?,?,?)",
                  [(season_id, m["id"], r["player"], r["place"], int(r["objective"]), int(r["eliminated"]),
                    ids.get(r["player"])) for r in m["results"]])


def delete_match(store, season_id: str, match: str) -> bool:
    """Take a match out of a season; False when it had none of that id."""
    with store.write() as c:
        return c.execute("DELETE FROM season_matches WHERE season_id=? AND id=?", (season_id, match)).rowcount > 0


def delete_app_match(c, match_id: str) -> bool:
    """Take an app match out of whichever season holds it. True when one did."""
    return c.execute("DELETE FROM season_matches WHERE match_id=?", (match_id,)).rowcount > 0


def season_match_count(store, season_id: str) -> int:
    return store.conn().execute("SELECT COUNT(*) FROM season_matches WHERE season_id=?", (season_id,)).fetchone()[0]


def season_of_app_match(store, match_id: str) -> str | None:
    """The id of the season holding an app match, or None (no season counts it)."""
    row = store.conn().execute("SELECT season_id FROM season_matches WHERE match_id=? LIMIT 1", (match_id,)).fetchone()
    return row["season_id"] if row else None


def ended_matches_in_no_season(store, game: str) -> list[dict]:
    """The ended app matches of ``game`` that no season holds (``id``, ``game``, ``players``, ``options``,
    ``created_at``), oldest first."""
    rows = store.conn().execute(
        "SELECT id, game, players, options, created_at FROM matches m WHERE m.status='ended' AND m.game=? "
        "AND NOT EXISTS (SELECT 1 FROM season_matches s WHERE s.match_id = m.id) ORDER BY created_at, id", (game,))
    return [{"id": r["id"], "game": r["game"], "players": json.loads(r["players"]),
             "options": json.loads(r["options"] or "{}"), "created_at": r["created_at"], "status": "ended"}
            for r in rows]
