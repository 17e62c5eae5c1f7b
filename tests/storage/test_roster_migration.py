"""Migration 0006 (the roster) on a database written by the code before it (migrations 0001-0005 and their
rows): nothing is lost, matches and season results land on their club's roster by exact name, the matches
it cannot place are listed for the organiser, and a match still exports and imports the same."""

import json
import sqlite3

import pytest

from companion.services import seasons as ss
from companion.services.matches import MatchService
from companion.storage import Store, migrations, players as roster
from companion.storage.db import _split_sql

OLD_TABLES = ["matches", "events", "settings", "web_sessions", "api_tokens", "join_tokens", "auth_failures",
              "match_meta", "clubs", "seasons", "season_matches", "season_results", "clock_checkpoints"]


def _old_database(path, clubs=1):
    """A database as the code before the roster left it: schema version 5 and rows in every table."""
    c = sqlite3.connect(path, isolation_level=None)
    for version, _name, sql in migrations():
        if version > 5:
            break
        for statement in _split_sql(sql):
            c.execute(statement)
        c.execute(f"PRAGMA user_version={version}")
    ins = c.execute
    ins("INSERT INTO clubs VALUES ('c1', 'Fan Club', '{}', '2026-01-01T00:00:00.000Z')")
    if clubs == 2:
        ins("INSERT INTO clubs VALUES ('c2', 'Other Club', '{}', '2026-01-01T00:00:00.000Z')")
    ins("INSERT INTO seasons VALUES ('s1', 'c1', 'rome-is-burning', 2026, 'Rome 2026', '{}', '2026-01-01T00:00:00.000Z')")
    events = [("m1", 1, "e1", "kill", '{"player": "Cy"}', "2026-03-01T20:00:00.000Z"),
              ("m1", 2, "e2", "finish", '{"ranking": ["Nicolò", "Bo", "Cy"]}', "2026-03-01T21:00:00.000Z"),
              ("m2", 1, "e3", "clock.start", '{}', "2026-03-02T20:00:00.000Z")]
    ins("INSERT INTO matches VALUES ('m1', 'rome-is-burning', ?, '{}', '2026-03-01T19:00:00.000Z', 'ended')",
        (json.dumps(["Nicolò", "Bo", "Cy"]),))
    ins("INSERT INTO matches VALUES ('m2', 'richelieu', ?, '{\"clock\": true}', '2026-03-02T19:00:00.000Z', 'open')",
        (json.dumps(["nicolo", "Bo", "Dee"]),))
    ins("INSERT INTO matches VALUES ('m3', 'richelieu', ?, '{\"club\": \"Other Club\"}', "
        "'2026-03-03T19:00:00.000Z', 'open')", (json.dumps(["Eve", "Bo"]),))
    c.executemany("INSERT INTO events VALUES (?,?,?,?,?,?)", events)
    ins("INSERT INTO match_meta VALUES ('m1', 'Table 1', '{\"Bo\": \"#112233\"}')")
    ins("INSERT INTO season_matches VALUES ('s1', 'm1', '2026-03-01T21:00:00.000Z', 'app', 'm1', '2026-03-01T21:00:00.000Z')")
    ins("INSERT INTO season_matches VALUES ('s1', 'h1', '2026-02-01', 'manual', NULL, '2026-02-02T10:00:00.000Z')")
    for row in [("s1", "m1", "Nicolò", 1, 0, 0), ("s1", "m1", "Bo", 2, 0, 0), ("s1", "m1", "Cy", 3, 0, 1),
                ("s1", "h1", "Bo", 1, 1, 0), ("s1", "h1", "Zoe", 2, 0, 0), ("s1", "h1", "Cy", 3, 0, 0)]:
        ins("INSERT INTO season_results VALUES (?,?,?,?,?,?)", row)
    ins("INSERT INTO settings VALUES ('access.pin', '\"x\"')")
    ins("INSERT INTO web_sessions VALUES ('h', 'player', 't', 'u', '{}', NULL)")
    ins("INSERT INTO api_tokens VALUES ('i', 'th', 'organiser', '', 't', NULL, 0)")
    ins("INSERT INTO join_tokens VALUES ('jh', 'player', NULL, 't', 'u', 0)")
    ins("INSERT INTO auth_failures VALUES (1, 'pin', '1.2.3.4', 't')")
    ins("INSERT INTO clock_checkpoints VALUES ('m2', 't', 1, 10.0, 20.0, NULL)")
    c.close()


def _old_columns(path):
    """Every old table's columns before the upgrade (later migrations may add columns: those are new)."""
    c = sqlite3.connect(path)
    try:
        return {t: [r[1] for r in c.execute(f"PRAGMA table_info({t})")] for t in OLD_TABLES}
    finally:
        c.close()


OLD_COLUMNS: dict = {}


def _dump(path):
    """The old tables' rows, in their old columns (taken from the database before its first upgrade)."""
    if str(path) not in OLD_COLUMNS:
        OLD_COLUMNS[str(path)] = _old_columns(path)
    c = sqlite3.connect(path)
    out = {}
    for t, cols in OLD_COLUMNS[str(path)].items():
        out[t] = sorted(c.execute(f"SELECT {', '.join(cols)} FROM {t}").fetchall(), key=repr)
    c.close()
    return out


@pytest.fixture
def ranked(ranked_game):
    return ranked_game


from tests.services.test_seasons import ranked_game  # noqa: E402,F401  (fixture: a game whose "finish" ranks)


def test_nothing_is_lost_and_the_players_land_on_the_roster(tmp_path, clock, ranked):
    path = tmp_path / "companion.db"
    _old_database(path)
    before = _dump(path)
    exports_before = None
    store = Store(path, clock=clock)
    try:
        assert store.schema_version() >= 6
        assert _dump(path) == before  # every old row, unchanged
        exports_before = {m: store.export_match(m) for m in ("m1", "m2", "m3")}
        names = {p["name"] for p in roster.list_players(store, "c1")}
        # exact names within the club: "Nicolò" and "nicolo" are two entries, suggested as one person
        assert names == {"Nicolò", "nicolo", "Bo", "Cy", "Dee", "Zoe"}
        nico = roster.find_by_name(store, "c1", "Nicolò")
        assert [p["name"] for p in roster.similar_to(store, "c1", "Nicolò", exclude=nico["id"])] == ["nicolo"]
        assert [s["name"] for s in roster.match_roster(store, "m1")] == ["Nicolò", "Bo", "Cy"]
        assert [s["place"] for s in roster.match_roster(store, "m1")] == [1, 2, 3]
        unlinked = store.conn().execute("SELECT COUNT(*) FROM season_results WHERE player_id IS NULL").fetchone()[0]
        assert unlinked == 0
        # m3 names a club that does not exist: listed for the organiser, not guessed
        assert [(p["match_id"], p["reason"]) for p in roster.pending(store)] == \
            [("m3", "its club or season does not exist")]
        bo = roster.find_by_name(store, "c1", "Bo")
        hist = roster.history(store, bo["id"])
        assert [(h["match_id"], h["place"]) for h in hist] == [(None, 1), ("m1", 2)]
        # the standings read the same as before
        table = {r["player"]: r["points"] for r in ss.season_standings(store, "s1")["standings"]}
        assert table == {"Bo": 0 + 1 + 1, "Nicolò": 1, "Cy": -1 - 0.5 - 1, "Zoe": 0}
        # the organiser confirms m3's club
        other = ss.create_club(store, "Other Club")
        assigned = roster.assign_pending(store, "m3", other["id"])
        assert [p["name"] for p in assigned["players"]] == ["Eve", "Bo"] and roster.pending(store) == []
        assert [(a["name"], a["by"], a["seat"]) for a in roster.assignments(store)] == [
            ("Eve", "organiser (cli)", 0), ("Bo", "organiser (cli)", 1)]  # the CLI's audit lines
    finally:
        store.close()
    # export -> import on a fresh box gives the same documents
    fresh = Store(tmp_path / "fresh.db", clock=clock)
    try:
        for doc in exports_before.values():
            MatchService(fresh).import_match(doc)
            assert fresh.export_match(doc["id"]) == doc
    finally:
        fresh.close()


def test_several_clubs_leave_the_unplaced_matches_pending(tmp_path, clock):
    path = tmp_path / "companion.db"
    _old_database(path, clubs=2)
    before = _dump(path)
    store = Store(path, clock=clock)
    try:
        assert _dump(path) == before
        # m1 is in a season of c1: placed. m2 names no club and there are two: pending.
        # m3 names "Other Club" (c2): placed there.
        assert [(p["match_id"], p["reason"]) for p in roster.pending(store)] == [("m2", "several clubs")]
        assert {p["name"] for p in roster.list_players(store, "c2")} == {"Eve", "Bo"}
        assert {p["name"] for p in roster.list_players(store, "c1")} == {"Nicolò", "Bo", "Cy", "Zoe"}
    finally:
        store.close()


def test_no_club_yet(tmp_path, clock):
    path = tmp_path / "companion.db"
    c = sqlite3.connect(path, isolation_level=None)
    for version, _name, sql in migrations():
        if version > 5:
            break
        for statement in _split_sql(sql):
            c.execute(statement)
        c.execute(f"PRAGMA user_version={version}")
    c.execute("INSERT INTO matches VALUES ('m1', 'richelieu', '[\"A\", \"B\"]', '{}', 't', 'open')")
    c.close()
    store = Store(path, clock=clock)
    try:
        assert [(p["match_id"], p["reason"]) for p in roster.pending(store)] == [("m1", "no club yet")]
        assert roster.list_players(store) == []
    finally:
        store.close()


def test_db_rebuild_fills_the_places_of_old_matches_outside_seasons(tmp_path, clock, ranked):
    path = tmp_path / "companion.db"
    _old_database(path)
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("INSERT INTO matches VALUES ('m4', 'rome-is-burning', '[\"Bo\", \"Cy\", \"Eve\"]', "
              "'{\"season\": \"none\"}', '2026-03-05T19:00:00.000Z', 'ended')")
    c.execute("INSERT INTO events VALUES ('m4', 1, 'e9', 'finish', '{\"ranking\": [\"Eve\", \"Cy\", \"Bo\"]}', "
              "'2026-03-05T20:00:00.000Z')")
    c.close()
    store = Store(path, clock=clock)
    try:
        # "season": "none" names no club: the match waits for the organiser
        assert "m4" in [p["match_id"] for p in roster.pending(store)]
        roster.assign_pending(store, "m4", "c1")
        assert [s["place"] for s in roster.match_roster(store, "m4")] == [None, None, None]
        MatchService(store).rebuild()
        assert [(s["name"], s["place"]) for s in roster.match_roster(store, "m4")] == [("Bo", 3), ("Cy", 2), ("Eve", 1)]
        assert ss.season_match_count(store, "s1") == 2  # a "none" match stays out of the season
    finally:
        store.close()
