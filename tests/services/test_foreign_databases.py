"""Databases companion reads but did not make, a league's box replica and a restore's copy: their schema is
checked before anything is read (companion's tables as tables, no views, no triggers, a known schema
version), and reading one is bounded in time and in the size of a value. A crafted replica whose
``events`` was an endless view made `league standings` and `restore --from` never return; a view of blobs
drove a restore to 1.9 GB. Every command here runs with a timeout: a hang fails the test, bounded."""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys

import pytest

MEMORY = 1 << 30  # each command's address space: a read of the crafted file that is not bounded fails here


def bounded_cli(tmp_path):
    """``run_cli`` with the command's memory bounded too (before these checks, a restore of the blob view
    took 1.9 GB): (returncode, stdout, stderr), killed after 60 s."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))

    def run(*args, env=None):
        full = dict(os.environ, COMPANION_DATA=str(tmp_path / "data"), **(env or {}))
        p = subprocess.run([sys.executable, "-m", "companion", *map(str, args)], capture_output=True, text=True,
                           env=full, cwd=str(tmp_path), timeout=60, preexec_fn=limit)
        return p.returncode, p.stdout, p.stderr

    return run

ENDLESS = ("CREATE VIEW events(match_id, seq, id, type, data, at) AS WITH RECURSIVE r(n) AS "
           "(SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT 'm', n, n, 'point', '{}', '' FROM r")
BLOBS = ("CREATE VIEW matches(id, game, players, options, created_at, status) AS WITH RECURSIVE r(n) AS "
         "(SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 100) SELECT n, zeroblob(50000000), '[]', '{}', '', 'open' FROM r")


def crafted(path, kind: str):
    from companion.services.matches import MatchService
    from companion.storage import Store

    with Store(path) as store:
        svc = MatchService(store)
        m = svc.create("richelieu", ["Ada", "Bo"])
        svc.append(m["id"], "track.adjust", {"player": "Ada", "track": "money", "delta": 1})
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    if kind == "endless-view":
        conn.execute("DROP TABLE events")
        conn.execute(ENDLESS)
    elif kind == "blob-view":
        conn.execute("PRAGMA foreign_keys=OFF")
        conn.execute("ALTER TABLE matches RENAME TO matches_old")
        conn.execute(BLOBS)
    elif kind == "trigger":
        conn.execute("CREATE TRIGGER wipe AFTER INSERT ON events BEGIN DELETE FROM matches; END")
    elif kind == "newer":
        conn.execute("PRAGMA user_version = 999")
    conn.commit()
    conn.close()
    return path


KINDS = {"endless-view": "views (events)", "blob-view": "views (matches)", "trigger": "triggers (wipe)",
         "newer": "schema version 999 is newer"}


def _fake_litestream(tmp_path, source):
    script = tmp_path / "fake-litestream"
    script.write_text(f"#!/bin/sh\n[ \"$1\" = restore ] && [ \"$2\" = -o ] || exit 9\ncp {source} \"$3\"\n")
    script.chmod(0o755)
    return {"COMPANION_LITESTREAM": str(script)}


# In a child process, bounded in time and memory: the crafted files that hung `league standings` and
# `restore --from` (the endless view) or drove a restore to 1.9 GB (the view of blobs).
@pytest.mark.parametrize("command, kind", [("league", "endless-view"), ("restore", "endless-view"),
                                           ("restore", "blob-view")])
def test_a_crafted_replica_is_refused_and_the_command_returns(tmp_path, command, kind):
    run_cli = bounded_cli(tmp_path)
    replica = crafted(tmp_path / "replica.db", kind)
    if command == "league":
        code, out, err = run_cli("league", "standings", "--box", f"north={replica}",
                                 "--cache", str(tmp_path / "cache"))
        assert code != 0 and KINDS[kind] in err, (code, out, err)
    else:
        code, out, err = run_cli("restore", "--from", str(tmp_path / "replica"), "--data-dir",
                                 str(tmp_path / "new"), env=_fake_litestream(tmp_path, replica))
        assert code == 1 and "restore refused" in err and KINDS[kind] in err, err
        assert not (tmp_path / "new" / "companion.db").exists()


# In this process, every kind: what the league (a box's replica) and a restore (check_restored) say of it.
@pytest.mark.parametrize("kind", ["trigger", "newer"])
def test_a_league_box_and_a_restore_refuse_foreign_triggers_and_unknown_schema_versions(tmp_path, kind):
    from companion.base.errors import InputError
    from companion.storage.db import ReadOnlyStore, check_restored

    replica = crafted(tmp_path / "replica.db", kind)
    with pytest.raises(InputError) as exc:
        ReadOnlyStore(replica)
    assert KINDS[kind] in exc.value.message and str(replica) in exc.value.message, exc.value.message
    reason, _ = check_restored(replica)
    assert reason is not None and KINDS[kind] in reason, reason


def test_a_foreign_read_is_bounded_in_time_and_in_the_size_of_a_value(tmp_path):
    from companion.storage.db import FOREIGN_VALUE_MAX, Guarded

    conn = sqlite3.connect(":memory:")
    Guarded(conn, seconds=0.2)
    with pytest.raises(sqlite3.OperationalError, match="interrupted"):
        conn.execute("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT COUNT(*) FROM r")
    conn = sqlite3.connect(":memory:")
    Guarded(conn)
    with pytest.raises(sqlite3.DataError if hasattr(sqlite3, "DataError") else sqlite3.DatabaseError):
        conn.execute(f"SELECT zeroblob({FOREIGN_VALUE_MAX + 1})").fetchone()
    assert len(conn.execute("SELECT zeroblob(1000)").fetchone()[0]) == 1000


def test_this_companion_s_own_database_passes_the_schema_check(tmp_path):
    from companion.storage import Store
    from companion.storage.db import open_read_only, schema_problem

    with Store(tmp_path / "companion.db"):
        pass
    conn = open_read_only(tmp_path / "companion.db")
    assert schema_problem(conn) is None
    conn.close()
