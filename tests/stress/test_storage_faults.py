"""The box's storage going wrong, each a finding that used to hurt:

- ``companion backup`` of a damaged database exited 0 and ``--keep`` rotated the good copies away; now the
  copy is checked and nothing is rotated unless it is good (exit 1, one line, every copy kept);
- a mistyped ``--data-dir`` made an empty backup and an empty database there; a destination folder that
  didn't exist was written as a file; a full destination left a ``.part`` behind;
- a zero-length, unreadable or non-SQLite database (or data folder) started as a fresh install, or exited 1
  without naming the path: now exit 2 naming it (systemd does not restart on 2);
- a full disk answered writes with a 4xx blaming the player; now 503 "the box's storage is full" with a
  code the phones translate;
- a body of any size was read (spooled to disk) before being refused; now each endpoint has a limit checked
  on ``Content-Length`` before reading, and the server stops reading past the largest one.

The full-disk cases mount a small tmpfs (root only); elsewhere they are skipped, saying why.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.debian_packages import install_hint
from tests.web.conftest import Api

GOOD = ["companion-20260101T030000Z.db", "companion-20260102T030000Z.db", "companion-20260103T030000Z.db"]


def make_database(path: Path, events: int = 300) -> str:
    from companion.services.matches import MatchService
    from companion.storage import Store

    store = Store(path)
    try:
        service = MatchService(store)
        mid = service.create("richelieu", ["Ada", "Bo"])["id"]
        for i in range(events):
            service.append(mid, "track.adjust", {"player": ["Ada", "Bo"][i % 2], "track": "money", "delta": 1})
        return mid
    finally:
        store.close()


def corrupt(path: Path) -> None:
    """Scribble over the middle of the file (pages of the event log), as a failing SD card does."""
    size = path.stat().st_size
    assert size > 16 * 4096, size
    with open(path, "r+b") as fh:
        fh.seek((size // 4096 // 2) * 4096)
        fh.write(os.urandom(4 * 4096))


@pytest.fixture
def data(tmp_path):
    d = tmp_path / "data"
    make_database(d / "companion.db")
    return d


def good_copies(dest: Path, source: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for name in GOOD:
        conn = sqlite3.connect(source)
        out = sqlite3.connect(dest / name)
        conn.backup(out)
        out.close()
        conn.close()


def test_backup_of_a_damaged_database_keeps_every_good_copy(run_cli, data, tmp_path):
    dest = tmp_path / "backups"
    good_copies(dest, data / "companion.db")
    before = {n: (dest / n).read_bytes() for n in GOOD}
    corrupt(data / "companion.db")
    for _night in range(3):  # three nights with the timer's --keep
        rc, out, err = run_cli("backup", dest, "--keep", "3", "--data-dir", data)
        assert rc == 1, (out, err)
        assert len(err.strip().splitlines()) == 1 and "backup refused" in err and "kept" in err, err
        assert out == ""
        assert sorted(p.name for p in dest.iterdir()) == GOOD  # no new copy, no .part, none rotated away
        assert {n: (dest / n).read_bytes() for n in GOOD} == before
    status = json.loads((data / "last-backup.json").read_text())
    assert status["ok"] is False and status["error"]


def test_a_good_backup_is_checked_kept_and_rotated(run_cli, data, tmp_path):
    dest = tmp_path / "backups"
    good_copies(dest, data / "companion.db")
    rc, out, err = run_cli("backup", dest, "--keep", "3", "--data-dir", data)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["events"] == 300 and doc["deleted"] == GOOD[:1]
    with sqlite3.connect(doc["backup"]) as conn:
        assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 300
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    status = json.loads((data / "last-backup.json").read_text())
    assert status["ok"] is True and status["events"] == 300


def test_backups_in_the_same_second_each_keep_their_copy(data, tmp_path):
    """Two backups in the same second (the timer's and an organiser's) failed with a misleading "disk I/O
    error": both wrote the same .part. Now each writes its own and the later is named -2, -3...; at the
    same time or one after the other, every one is kept, checked, and rotated newest last."""
    import threading
    from datetime import datetime, timezone

    from companion.cli.backup import rotate
    from companion.storage.db import backup_database

    class Second:  # every backup here in the same second
        def now(self):
            return datetime(2026, 12, 1, 21, 0, 0, tzinfo=timezone.utc)

    dest = tmp_path / "backups"
    made, failed = [], []

    def one():
        try:
            made.append(backup_database(data / "companion.db", dest, clock=Second())["backup"])
        except Exception as exc:  # noqa: BLE001 - the failure is the finding
            failed.append(repr(exc))

    threads = [threading.Thread(target=one) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    one()  # and one more afterwards
    assert not failed, failed
    names = sorted(p.name for p in dest.iterdir())
    assert names == ["companion-20261201T210000Z-2.db", "companion-20261201T210000Z-3.db",
                     "companion-20261201T210000Z-4.db", "companion-20261201T210000Z.db"], names
    assert sorted(p.name for p in made) == names
    for p in made:
        with sqlite3.connect(p) as conn:
            assert conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 300
    assert rotate(dest, 2) == ["companion-20261201T210000Z.db", "companion-20261201T210000Z-2.db"]


def test_backup_with_a_mistyped_data_dir_creates_nothing(run_cli, tmp_path):
    typo = tmp_path / "dta"
    rc, out, err = run_cli("backup", tmp_path / "backups", "--keep", "3", "--data-dir", typo)
    assert rc == 2 and str(typo) in err and len(err.strip().splitlines()) == 1
    assert not typo.exists() and not (tmp_path / "backups").exists()


def test_backup_refuses_an_empty_database_file(run_cli, tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    (d / "companion.db").write_bytes(b"")
    rc, out, err = run_cli("backup", tmp_path / "backups", "--data-dir", d)
    assert rc == 2 and str(d / "companion.db") in err and "empty" in err
    assert (d / "companion.db").stat().st_size == 0  # left as it was


def test_backup_opens_the_source_read_only(run_cli, data, tmp_path):
    before = sorted(p.name for p in data.iterdir())
    db = data / "companion.db"
    mtime = db.stat().st_mtime_ns
    rc, out, err = run_cli("backup", tmp_path / "b", "--data-dir", data)
    assert rc == 0, err
    assert db.stat().st_mtime_ns == mtime
    assert sorted(p.name for p in data.iterdir() if not p.name.endswith(("-wal", "-shm"))) == \
        sorted(set(before) | {"last-backup.json"})


@pytest.mark.parametrize("suffix", ["/", ""])
def test_a_destination_that_does_not_exist_becomes_a_folder(run_cli, data, tmp_path, suffix):
    dest = tmp_path / "usb" / "backups"
    rc, out, err = run_cli("backup", str(dest) + suffix, "--data-dir", data)
    assert rc == 0, err
    assert dest.is_dir()
    made = Path(json.loads(out)["backup"])
    assert made.parent == dest and made.name.startswith("companion-") and made.is_file()


# -- full disks (a small tmpfs) -------------------------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path):
    """Mount points of small tmpfs file systems: ``small_disk(kib)``; skipped where the test cannot mount."""
    mounted = []

    def mount(kib: int) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a small tmpfs needs root (the full-disk cases run in CI as root)")
        where = tmp_path / f"disk{len(mounted)}"
        where.mkdir()
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(where)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip() or p.returncode}")
        mounted.append(where)
        return where

    yield mount
    for where in reversed(mounted):
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill(disk: Path) -> None:
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


def test_backup_to_a_full_destination_leaves_no_part_and_keeps_the_copies(run_cli, data, small_disk):
    dest = small_disk(64)  # smaller than the database
    (dest / GOOD[0]).write_bytes(b"an older copy")
    rc, out, err = run_cli("backup", dest, "--keep", "1", "--data-dir", data)
    assert rc == 1 and "full" in err and len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in dest.iterdir()) == [GOOD[0]]


def test_a_full_disk_is_503_storage_full_never_a_4xx(small_disk):
    from companion.storage import Store
    from companion.base.timeutil import FakeClock
    from companion.web.app import create_app

    disk = small_disk(1024)
    store = Store(disk / "companion.db", clock=FakeClock("2026-03-01T20:00:00Z"))
    try:
        app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": "13572468"})
        org = Api(app.test_client())
        assert org.post("/api/auth/pin", {"pin": "246813", "setup_code": "13572468"}).status_code == 200
        mid = org.post("/api/matches", {"game": "richelieu", "players": ["Ada", "Bo"]}).json["id"]
        fill(disk)
        seq, r = 0, None
        for i in range(400):  # the WAL has some room left: write until the disk refuses
            r = org.post(f"/api/matches/{mid}/events", {"type": "track.adjust", "expected_seq": seq,
                                                       "data": {"player": "Ada", "track": "money", "delta": 1 + i}})
            if r.status_code != 201:
                break
            seq = r.json["seq"]
        assert r.status_code == 503, (r.status_code, r.json)
        assert r.json["error"] == "the box's storage is full" and r.json["code"] == "storage_full"
        # a phone joining sees it in its language
        from companion.web.auth import current_join

        (disk / "filler").unlink()
        with app.test_request_context("/"):
            url = current_join("http://localhost")["url"][len("http://localhost"):]
        fill(disk)
        for _ in range(50):  # (the WAL may take a few sessions before it needs a new page)
            page = app.test_client().get(url, headers={"Accept-Language": "it"})
            if page.status_code != 303:
                break
        assert page.status_code == 503
        assert "La memoria della scatola è piena" in page.get_data(as_text=True)
    finally:
        store.close()


# -- databases and data folders that cannot be used: exit 2 naming the path ------------------------------
@pytest.mark.parametrize("case", ["empty", "not-sqlite", "db-is-a-folder", "data-dir-is-a-file"])
def test_an_unusable_database_exits_2_naming_the_path(run_cli, tmp_path, case):
    d = tmp_path / "data"
    d.mkdir()
    culprit = d / "companion.db"
    if case == "empty":
        culprit.write_bytes(b"")
    elif case == "not-sqlite":
        culprit.write_bytes(b"this is not a database " * 100)
    elif case == "db-is-a-folder":
        culprit.mkdir()
    else:
        d.rmdir()
        d.write_text("a file where the data folder should be")
        culprit = d
    for args in (["serve", "--port", "0", "--gpio", "off", "--no-qr"], ["match", "list"], ["token", "list"]):
        rc, out, err = run_cli(*args, "--data-dir", d)
        assert rc == 2, (args, rc, err)
        assert len(err.strip().splitlines()) == 1 and str(culprit) in err, (args, err)
    if case == "empty":
        assert culprit.stat().st_size == 0  # never turned into a fresh install


@pytest.mark.parametrize("where", ["data-dir", "database", "parent"])
def test_an_unreadable_data_dir_or_database_exits_2_naming_it(request_cleanup, where):
    """Root reads every file, so as root the command runs as the user nobody (setpriv)."""
    import shutil
    import sys

    import tempfile

    base = Path(tempfile.mkdtemp(prefix="companion-unreadable-"))  # (pytest's tmp_path is root's alone)
    request_cleanup.append(base)
    base.chmod(0o755)
    data = base / "data"
    make_database(data / "companion.db", events=3)
    culprit = {"data-dir": data, "database": data / "companion.db", "parent": data / "sub"}[where]
    if where == "data-dir":
        data.chmod(0)  # no reading the folder's entries, nor opening a file in it
    elif where == "database":
        data.chmod(0o777)
        for f in data.iterdir():
            f.chmod(0)
    else:
        data.chmod(0o555)  # the data folder cannot be created inside it
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip(f"root reads every file and setpriv (to run as nobody) is missing ({install_hint('setpriv')})")
    prefix, env = as_nobody(base)
    try:
        p = subprocess.run([*prefix, "-m", "companion", "match", "list", "--data-dir", str(culprit if where != "database" else data)],
                           capture_output=True, text=True, timeout=60, cwd="/", env=env)
    finally:
        data.chmod(0o755)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert len(p.stderr.strip().splitlines()) == 1 and str(culprit) in p.stderr, p.stderr


def test_a_damaged_page_stops_serve_with_exit_2_naming_the_file_and_what_to_do(run_cli, data):
    """`companion serve` exited 1 "internal error: DatabaseError: database disk image is malformed" (systemd
    restarts it for ever) while `match list` still read the file. Here the page is one the server reads as
    it starts (the matches' table, for the clocks to recover)."""
    db = data / "companion.db"
    conn = sqlite3.connect(db)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name='matches'").fetchone()[0]
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(db, "r+b") as fh:  # a failing SD card: the page's header scribbled over
        fh.seek((root - 1) * page)
        fh.write(b"\xff" * 64)
    rc, out, err = run_cli("serve", "--port", "0", "--gpio", "off", "--no-qr", "--data-dir", data)
    assert rc == 2, (rc, err)
    line = err.strip()
    assert len(line.splitlines()) == 1 and str(data / "companion.db") in line, err
    assert "damaged" in line and "restore" in line and "backup" in line and "internal error" not in line, err
    rc, out, err = run_cli("match", "list", "--data-dir", data)  # any command reading the damaged page
    assert rc == 2 and "damaged" in err and "internal error" not in err, err


def test_an_unwritable_database_exits_2_naming_the_file(request_cleanup):
    """As root every file is writable, so the server runs as the user nobody (setpriv)."""
    import shutil
    import sys
    import tempfile

    if os.geteuid() == 0 and not shutil.which("setpriv"):
        pytest.skip(f"root writes every file and setpriv (to run as nobody) is missing ({install_hint('setpriv')})")
    base = Path(tempfile.mkdtemp(prefix="companion-readonly-"))
    request_cleanup.append(base)
    base.chmod(0o755)
    data = base / "data"
    make_database(data / "companion.db", events=3)
    data.chmod(0o777)  # the folder open to all (its -wal and -shm may be made), the file writable by root alone
    for f in data.iterdir():
        f.chmod(0o644)
    if os.geteuid() != 0:
        for f in data.iterdir():
            f.chmod(0o444)
    prefix, env = as_nobody(base)
    try:
        p = subprocess.run([*prefix, "-m", "companion", "serve", "--port", "0", "--gpio", "off",
                            "--no-qr", "--data-dir", str(data)], capture_output=True, text=True, timeout=60,
                           cwd="/", env=env)
    finally:
        data.chmod(0o755)
    assert p.returncode == 2, (p.returncode, p.stderr)
    line = p.stderr.strip()
    assert len(line.splitlines()) == 1 and str(data / "companion.db") in line and "internal error" not in line, line


def as_nobody(base: Path) -> tuple[list[str], dict]:
    """The command (up to its arguments) and the environment that run this Python as the user nobody when the
    tests run as root (as themselves otherwise). Nobody may not reach a clone inside a 0700 folder (root's
    home; "No module named companion"), so it runs readable copies, under ``base``, of the package and of
    the installed distributions it imports; the interpreter is the system's, under the venv's name."""
    import shutil
    import sys

    from tests.web.serverproc import REPO

    if os.geteuid() != 0:
        return [sys.executable], dict(os.environ, PYTHONPATH=str(REPO))
    src = base / "src"
    shutil.copytree(REPO / "companion", src / "companion", ignore=shutil.ignore_patterns("__pycache__"))
    # what the server and the CLI import from the venv (its site-packages out of nobody's reach too): the
    # top-level packages and modules that the server's modules bring in, asked of this interpreter
    probe = ("import importlib, sys, sysconfig\n"
             "for m in ('companion.cli', 'companion.web.app', 'companion.web.asgi', 'companion.web.server', 'a2wsgi',\n"
             "          'uvicorn.protocols.http.h11_impl', 'uvicorn.protocols.http.httptools_impl', 'uvicorn.loops.asyncio'):\n"
             "    try: importlib.import_module(m)\n"
             "    except ImportError: pass\n"
             "site = {sysconfig.get_paths()[k] for k in ('purelib', 'platlib')}\n"
             "for name, m in list(sys.modules.items()):\n"
             "    f = getattr(m, '__file__', None) or ''\n"
             "    if '.' not in name and any(f.startswith(d + '/') for d in site): print(f)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True,
                         cwd=str(REPO)).stdout
    for f in map(Path, sorted(set(out.split()))):
        if f.name == "__init__.py":
            shutil.copytree(f.parent, src / f.parent.name, ignore=shutil.ignore_patterns("__pycache__"))
        elif f.parent.name != "companion":
            shutil.copy2(f, src / f.name)
    for d in [base, src, *src.rglob("*")]:
        d.chmod(0o755 if d.is_dir() else 0o644)
    # the venv's interpreter, resolved: as nobody the venv's python cannot read its pyvenv.cfg either
    return (["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", os.path.realpath(sys.executable)],
            dict(os.environ, PYTHONPATH=str(src), PYTHONNOUSERSITE="1"))


@pytest.fixture
def request_cleanup():
    import shutil

    paths = []
    yield paths
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)


# -- request bodies ---------------------------------------------------------------------------------------
class Unread:
    """A request body that must not be read."""

    def __init__(self):
        self.reads = 0

    def read(self, *a):
        self.reads += 1
        return b"{}"

    def readline(self, *a):
        return self.read()


def test_bodies_above_an_endpoints_limit_are_refused_before_reading(tmp_path):
    from companion.storage import Store
    from companion.web.app import create_app
    from companion.web.limits import DEFAULT_BODY, body_limit

    store = Store(tmp_path / "c.db")
    try:
        app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None})
        c = app.test_client()
        for path, limit in (("/api/matches/x/events", DEFAULT_BODY), ("/api/auth/login", DEFAULT_BODY),
                            ("/api/matches/import", body_limit("api.import_match"))):
            body = Unread()
            r = c.post(path, headers={"Origin": "http://localhost", "Content-Type": "application/json"},
                       environ_overrides={"wsgi.input": body, "CONTENT_LENGTH": str(limit + 1)})
            assert r.status_code == 413 and r.json["field"] == "Content-Length", (path, r.json)
            assert body.reads == 0, path
        r = c.post("/api/auth/login", data=b'{"pin": "123456"}', headers={"Origin": "http://localhost",
                                                                          "Content-Type": "application/json"})
        assert r.status_code == 409  # a body under the limit goes through (no PIN yet)
    finally:
        store.close()


def test_the_server_stops_reading_a_body_past_the_largest_limit(tmp_path):
    """One request with Content-Length 1 GB used to be spooled to a temp file before any refusal."""
    from tests.web.serverproc import Server

    server = Server(tmp_path / "data")
    try:
        host, port = server.host.rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=10)
        s.sendall(b"POST /api/matches/import HTTP/1.1\r\nHost: " + server.host.encode() +
                  b"\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n")
        sent = 0
        try:
            while sent < 8 * 1024 * 1024:  # the server answers and closes long before 1 GB
                s.sendall(b" " * 65536)
                sent += 65536
        except OSError:
            pass
        reply = b""
        try:
            while b"\r\n\r\n" not in reply:
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
        except OSError:
            pass
        s.close()
        assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    finally:
        server.stop()


def test_organisers_see_a_failed_backup_on_the_home_page(app_and_store):
    """The nightly timer's failure was visible nowhere but the journal."""
    from companion.storage.db import write_backup_status

    app, store, clock = app_and_store
    org = Api(app.test_client())
    assert org.post("/api/auth/pin", {"pin": "246813", "setup_code": "13572468"}).status_code == 200
    viewer = app.test_client()
    assert b"backup-notice" not in org.get("/").data  # no backup recorded yet: nothing to say
    write_backup_status(store.path.parent, {"ok": False, "at": "2026-03-01T03:30:00Z",
                                            "error": "the copy fails SQLite's integrity check"})
    page = org.get("/", headers={"Accept-Language": "en"}).get_data(as_text=True)
    assert 'id="backup-notice"' in page and "integrity check" in page and "2026-03-01 03:30" in page
    assert b"backup-notice" not in viewer.get("/").data  # organisers only
    write_backup_status(store.path.parent, {"ok": True, "at": "2026-03-01T03:30:00Z"})
    assert b"backup-notice" not in org.get("/").data
    clock.advance(49 * 3600)  # two nights without a good copy
    assert org.post("/api/auth/login", {"pin": "246813"}).status_code == 200  # (sessions last 12 h)
    assert "Nessun backup dal 2026-03-01 03:30" in org.get("/?lang=it").get_data(as_text=True)


def test_the_boxs_offline_update_is_said_on_the_home_page_and_the_tv_until_the_box_restarts(app_and_store,
                                                                                            monkeypatch):
    """The image's update (image/rootfs/.../update.py) leaves its result beside the database with the boot's
    id: organisers' home page and every TV page say it in that boot, not after a restart."""
    app, store, clock = app_and_store
    monkeypatch.setattr("companion.services.boxtime.boot_id", lambda: "boot-1")
    org = Api(app.test_client())
    assert org.post("/api/auth/pin", {"pin": "246813", "setup_code": "13572468"}).status_code == 200
    mid = org.post("/api/matches", {"game": "richelieu", "players": ["Ada", "Bo"]}).get_json()["id"]
    tv = app.test_client()
    assert b"update-notice" not in org.get("/").data and b"update-notice" not in tv.get(f"/m/{mid}/display").data
    status = store.path.parent / "last-update.json"
    status.write_text(json.dumps({"result": "fell back", "from": "aaaa11112222", "to": "bbbb33334444",
                                  "boot_id": "boot-1"}))
    page = org.get("/", headers={"Accept-Language": "en"}).get_data(as_text=True)
    assert 'id="update-notice"' in page and "previous version (aaaa11112222) is running again" in page
    tv_page = tv.get(f"/m/{mid}/display?lang=it").get_data(as_text=True)
    assert "aggiornamento a bbbb33334444 non si è avviato" in tv_page  # (L&#39;...)
    assert b"update-notice" not in tv.get("/").data  # the home page says it to organisers only
    status.write_text(json.dumps({"result": "updated", "from": "aaaa11112222", "to": "bbbb33334444",
                                  "boot_id": "boot-1"}))
    assert "companion was updated (aaaa11112222 → bbbb33334444)" in \
        tv.get(f"/m/{mid}/display?lang=en").get_data(as_text=True)  # (?lang= is kept: the TV asked for it)
    monkeypatch.setattr("companion.services.boxtime.boot_id", lambda: "boot-2")  # the box restarted
    assert b"update-notice" not in org.get("/").data and b"update-notice" not in tv.get(f"/m/{mid}/display").data


@pytest.fixture
def app_and_store(tmp_path):
    from companion.storage import Store
    from companion.base.timeutil import FakeClock
    from companion.web.app import create_app

    clock = FakeClock("2026-03-01T20:00:00Z")
    store = Store(tmp_path / "data" / "companion.db", clock=clock)
    app = create_app({"STORE": store, "TESTING": True, "CLOCK_RUNNER": None, "SETUP_CODE": "13572468"})
    yield app, store, clock
    store.close()


def test_backup_of_a_file_that_is_not_sqlite_exits_2_naming_it(run_cli, tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    (d / "companion.db").write_bytes(b"not a database at all " * 200)
    rc, out, err = run_cli("backup", tmp_path / "b", "--data-dir", d)
    assert rc == 2 and str(d / "companion.db") in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "b").exists()
