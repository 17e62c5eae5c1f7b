"""Replication's pieces without Litestream running: targets (no secret ever stored), the configuration,
the status the API answers, the binary's absence explained, and the CLI's bad input (exit 2)."""

import json
import subprocess
import sys
import time

import pytest

from companion.services import replication
from companion.base.errors import InputError


@pytest.mark.parametrize("text, kind, shown", [
    ("/media/usb/companion", "folder", "/media/usb/companion"),
    ("file:///mnt/nas/club/", "folder", "/mnt/nas/club"),
    ("sftp://club@nas.local/backups/box1", "sftp", "sftp://club@nas.local:22/backups/box1"),
    ("s3://club-bucket/box1?endpoint=https://minio.lan:9000&region=eu", "s3", "s3://club-bucket/box1 at minio.lan:9000"),
])
def test_targets_of_every_kind(text, kind, shown):
    t = replication.parse_target(text)
    assert (t["kind"], t["shown"]) == (kind, shown)


@pytest.mark.parametrize("text, words", [
    ("sftp://club:hunter2@nas/x", "password"),
    ("s3://bucket/p?secret-access-key=abc", "secret"),
    ("s3://AKIA:xyz@bucket/p", "password"),
    ("relative/folder", "absolute"),
    ("ftp://host/x", "unknown kind"),
    ("sftp://nas/x", "sftp://user@host"),
    ("", "must name a replica"),
])
def test_bad_targets_are_refused_naming_why(text, words):
    with pytest.raises(InputError) as e:
        replication.parse_target(text)
    assert words in e.value.message
    if "hunter2" in text:
        assert "hunter2" not in e.value.message


def test_the_configuration_holds_references_to_secrets_never_secrets(tmp_path):
    sftp = json.loads(replication.config_text(tmp_path / "companion.db", {"target": "sftp://club@nas:2222/b"}))
    r = sftp["dbs"][0]["replica"]
    assert r["type"] == "sftp" and r["host"] == "nas:2222" and r["user"] == "club" and r["path"] == "/b"
    assert r["password"] == "${COMPANION_REPLICA_SFTP_PASSWORD}"
    s3 = json.loads(replication.config_text(tmp_path / "companion.db",
                                            {"target": "s3://b/p?endpoint=http://minio:9000", "sync_interval": 5}))
    r = s3["dbs"][0]["replica"]
    assert r == {"sync-interval": "5s", "type": "s3", "bucket": "b", "path": "p",
                 "endpoint": "http://minio:9000", "force-path-style": True}
    folder = json.loads(replication.config_text(tmp_path / "companion.db", {"target": "/media/usb"}))
    assert folder["dbs"][0] == {"path": str((tmp_path / "companion.db").resolve()),
                                "replica": {"sync-interval": "1s", "type": "file", "path": "/media/usb"}}


def test_the_status_names_the_kind_and_the_lag_but_no_secret():
    now = time.time()
    settings = {"target": "s3://bucket/box?endpoint=http://minio:9000"}
    off = replication.public_status(None, None, now)
    assert off["enabled"] is False and off["lag_seconds"] is None
    level = replication.public_status(settings, {"checked_at": now - 1, "replicated_txid": 7, "local_txid": 7,
                                                 "pending_since": None, "replicated_at": now - 5}, now)
    assert level["running"] and level["lag_seconds"] == 0 and level["target"]["kind"] == "s3"
    behind = replication.public_status(settings, {"checked_at": now - 1, "replicated_txid": 7, "local_txid": 9,
                                                  "pending_since": now - 12.5}, now)
    assert behind["lag_seconds"] == 12.5
    stopped = replication.public_status(settings, {"checked_at": now - 600, "pending_since": None}, now)
    assert not stopped["running"] and stopped["lag_seconds"] == 600


def test_without_the_binary_a_32_bit_pi_is_told_it_needs_the_64_bit_os(tmp_path):
    assert "64-bit Raspberry Pi OS" in replication.unavailable_reason("armv7l")
    assert "companion[replica]" in replication.unavailable_reason("aarch64")
    with pytest.raises(replication.Unavailable, match="not an executable"):
        replication.find_binary({"COMPANION_LITESTREAM": str(tmp_path / "nothing")})


def test_the_supervisor_measures_the_lag_from_the_first_unreplicated_transaction(tmp_path):
    """Positions are the LTX files' names: Litestream's local log beside the database, the replica's folder."""
    db = tmp_path / "companion.db"
    local = tmp_path / ".companion.db-litestream" / "ltx" / "0"
    remote = tmp_path / "replica" / "ltx" / "0"
    local.mkdir(parents=True)
    remote.mkdir(parents=True)
    now = [1000.0]
    sup = replication.Supervisor(db, {"target": str(tmp_path / "replica")}, "/bin/false", clock=lambda: now[0])
    (local / "0000000000000001-0000000000000001.ltx").write_bytes(b"x")
    (remote / "0000000000000001-0000000000000001.ltx").write_bytes(b"x")
    assert sup.look()["pending_since"] is None
    (local / "0000000000000002-0000000000000003.ltx").write_bytes(b"x")
    now[0] = 1002.0
    assert sup.look()["pending_since"] == 1002.0
    now[0] = 1010.0
    s = sup.look()
    assert s["pending_since"] == 1002.0 and s["local_txid"] == 3 and s["replicated_txid"] == 1
    assert replication.public_status({"target": "/x"}, s, 1010.0)["lag_seconds"] == 8.0
    (remote / "0000000000000002-0000000000000003.ltx").write_bytes(b"x")
    now[0] = 1011.0
    assert sup.look()["pending_since"] is None
    assert json.loads((tmp_path / "replication.json").read_text())["replicated_txid"] == 3


def test_cli_bad_input_exits_2_with_one_line(run_cli, tmp_path):
    assert run_cli("season", "club-create", "Club")[0] == 0
    code, out, err = run_cli("replicate", "set", "sftp://u:secret@h/x")
    assert code == 2 and err.count("\n") == 1 and "secret" not in err
    code, out, err = run_cli("replicate", "status")
    assert code == 0 and json.loads(out)["enabled"] is False
    code, out, err = run_cli("replicate", "config")
    assert code == 2 and "replicate set" in err
    code, out, err = run_cli("restore", "--from", "not/absolute", "--data-dir", str(tmp_path / "new"))
    assert code == 2 and err.count("\n") == 1 and "absolute" in err
    assert not (tmp_path / "new").exists()
    code, out, err = run_cli("league", "standings", "--box", "no-equals-sign")
    assert code == 2 and "NAME=REPLICA" in err
    code, out, err = run_cli("league", "standings", "--box", "A=/x", "--box", "A=/y", "--offline")
    assert code == 2 and "twice" in err


def test_restore_refuses_a_database_in_use(run_cli, tmp_path):
    """The server (or anything) holding companion.db open: nothing is replaced."""
    assert run_cli("season", "club-create", "Club")[0] == 0
    db = tmp_path / "data" / "companion.db"
    before = db.read_bytes()
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import sqlite3,sys; c=sqlite3.connect({str(db)!r}); c.execute('select 1'); "
                               "print('open', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        code, out, err = run_cli("restore", "--from", str(tmp_path / "replica"),
                                 env={"COMPANION_LITESTREAM": "/bin/true"})
        assert code == 2 and "in use" in err and str(holder.pid) in err
    finally:
        holder.stdin.close()
        holder.wait()
    assert db.read_bytes() == before


def _fake_litestream(tmp_path, source):
    """A stand-in `litestream restore -o OUT URL` that copies ``source`` to OUT (the real one is tested
    end to end in tests/stress/test_replica_e2e.py)."""
    script = tmp_path / "fake-litestream"
    script.write_text(f"#!/bin/sh\n[ \"$1\" = restore ] && [ \"$2\" = -o ] || exit 9\ncp {source} \"$3\"\n")
    script.chmod(0o755)
    return {"COMPANION_LITESTREAM": str(script)}


def _db_with_events(path, n, fake_game):
    from companion.services.matches import MatchService
    from companion.storage import Store

    with Store(path) as store:
        svc = MatchService(store)
        m = svc.create(fake_game, ["ada", "bo"])
        for i in range(n):
            svc.append(m["id"], "point", {"player": "ada"})
    return path


def test_restore_refuses_a_replica_older_than_the_database_here_unless_forced(run_cli, tmp_path, fake_game):
    here = _db_with_events(tmp_path / "data" / "companion.db", 5, fake_game)
    older = _db_with_events(tmp_path / "older.db", 2, fake_game)
    env = _fake_litestream(tmp_path, older)
    before = here.read_bytes()
    code, out, err = run_cli("restore", "--from", str(tmp_path / "replica"), env=env)
    assert code == 1 and "holds 2 events, the database here 5" in err and "nothing was replaced" in err
    assert here.read_bytes() == before and not list((tmp_path / "data").glob("pre-restore-*"))
    code, out, err = run_cli("restore", "--from", str(tmp_path / "replica"), "--force", env=env)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["events"] == 2 and doc["previous"]
    from pathlib import Path

    assert (Path(doc["previous"]) / "companion.db").read_bytes() == before  # kept aside, never deleted


def test_restore_refuses_a_copy_that_fails_its_checks(run_cli, tmp_path, fake_game):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200)
    code, out, err = run_cli("restore", "--from", str(tmp_path / "replica"), "--data-dir", str(tmp_path / "new"),
                             env=_fake_litestream(tmp_path, bad))
    assert code == 1 and "restore refused" in err and err.count("\n") == 1
    assert not (tmp_path / "new" / "companion.db").exists()
    assert not list((tmp_path / "new").glob("companion.db.restoring*"))


def test_the_status_file_is_rewritten_only_on_a_change_or_every_20_seconds(tmp_path):
    """The SD card is not written every 2 s for nothing."""
    now = [1000.0]
    (tmp_path / "replica").mkdir()
    sup = replication.Supervisor(tmp_path / "companion.db", {"target": str(tmp_path / "replica")}, "/bin/false",
                                 clock=lambda: now[0])
    status = tmp_path / "replication.json"
    sup.look()
    assert json.loads(status.read_text())["checked_at"] == 1000.0
    now[0] = 1010.0
    sup.look()
    assert json.loads(status.read_text())["checked_at"] == 1000.0  # nothing changed: not rewritten
    now[0] = 1021.0
    sup.look()
    assert json.loads(status.read_text())["checked_at"] == 1021.0  # the heartbeat
    (tmp_path / ".companion.db-litestream" / "ltx" / "0").mkdir(parents=True)
    (tmp_path / ".companion.db-litestream" / "ltx" / "0" / "0000000000000001-0000000000000004.ltx").write_bytes(b"")
    now[0] = 1022.0
    sup.look()
    assert json.loads(status.read_text())["local_txid"] == 4  # a change: written at once


def test_the_league_notices_a_box_that_went_back_in_time_and_keeps_the_previous_copy(tmp_path, fake_game):
    """A box restored from an old replica holds fewer events than the league's copy of it."""
    from companion.services import league_boxes

    box_db = _db_with_events(tmp_path / "box.db", 5, fake_game)
    box = league_boxes.parse_box(f"Roma={box_db}")
    first = league_boxes.refresh(box, tmp_path / "cache", clock=lambda: 1000.0)
    assert first["events"] == 5 and first["went_back"] is None and first["error"] is None
    box_db.unlink()
    _db_with_events(box_db, 2, fake_game)
    second = league_boxes.refresh(box, tmp_path / "cache", clock=lambda: 2000.0)
    assert second["went_back"] == {"before": 5, "now": 2, "at": 2000.0} and second["events"] == 2
    from companion.storage.db import check_restored

    assert check_restored(tmp_path / "cache" / "Roma" / "previous.db")[1]["events"] == 5
    box_db.unlink()  # then the box cannot be read at all: the last copy stays, the error says since when
    third = league_boxes.refresh(box, tmp_path / "cache", clock=lambda: 3000.0)
    assert third["error"] and third["error_since"] == 3000.0 and third["events"] == 2
    assert (tmp_path / "cache" / "Roma" / "companion.db").exists()
