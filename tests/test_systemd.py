"""systemd units, sd_notify, backups with rotation and restore, the install script.

``systemd-analyze`` runs where it exists (Debian has it): ``verify`` on copies of the units whose
binaries are rewritten to ones that exist here, and the offline security score of companion.service.
install.sh runs against a temporary root with stand-in commands (systemctl, useradd, ...) on PATH.
"""

import os
import re
import shutil
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion import systemd_notify as sd
from companion.cli import build_parser
from companion.cli.backup import BACKUP_NAME, rotate
from companion.storage import Store

REPO = Path(__file__).resolve().parent.parent
UNITS = REPO / "systemd"
ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def unit(name: str) -> dict[str, dict[str, list[str]]]:
    """Parse a unit file: section -> key -> every value (keys may repeat)."""
    out: dict[str, dict[str, list[str]]] = {}
    section = None
    for line in (UNITS / name).read_text().splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = out.setdefault(line.strip("[]"), {})
            continue
        key, _, value = line.partition("=")
        section.setdefault(key, []).append(value)
    return out


def one(u, section, key):
    values = u[section][key]
    assert len(values) == 1, f"{key} set {len(values)} times"
    return values[0]


# -- the units --------------------------------------------------------------------------------------

def test_companion_service_is_a_watched_notify_service_of_a_dedicated_user():
    u = unit("companion.service")
    s = u["Service"]
    assert one(u, "Service", "Type") == "notify"
    assert int(one(u, "Service", "WatchdogSec")) >= 10
    assert one(u, "Service", "Restart") == "on-failure"
    # exit 2 (a configuration mistake: bad option, empty or unreadable database) is not restarted in a loop
    assert one(u, "Service", "RestartPreventExitStatus").split() == ["2"]
    assert one(u, "Service", "User") == "companion" and one(u, "Service", "Group") == "companion"
    assert one(u, "Service", "SupplementaryGroups") == "gpio"
    assert one(u, "Service", "StateDirectory") == "companion"
    assert "COMPANION_DATA=/var/lib/companion" in s["Environment"]
    assert one(u, "Service", "DevicePolicy") == "closed"
    assert s["DeviceAllow"] == ["char-gpiochip rw"]  # the GPIO chips and nothing else
    assert "PrivateDevices" not in s  # it would hide /dev/gpiochip*
    assert "ProcSubset" not in s  # gpiozero reads /proc/device-tree and /proc/cpuinfo
    assert one(u, "Service", "NoNewPrivileges") == "yes"
    assert one(u, "Install", "WantedBy") == "multi-user.target"


def serve_args_of_unit() -> list[str]:
    u = unit("companion.service")
    env = [v for v in u["Service"]["Environment"] if v.startswith('"COMPANION_SERVE_ARGS=')]
    assert len(env) == 1
    return env[0].strip('"').split("=", 1)[1].split()


def test_the_units_command_lines_are_accepted_by_the_cli():
    parser = build_parser()
    exec_start = one(unit("companion.service"), "Service", "ExecStart").split()
    assert exec_start == ["/opt/companion/venv/bin/python", "-m", "companion.systemd_notify", "serve",
                          "$COMPANION_SERVE_ARGS"]
    args = parser.parse_args(["serve", *serve_args_of_unit()])
    assert args.gpio == "auto" and args.host == "0.0.0.0"
    backup = one(unit("companion-backup.service"), "Service", "ExecStart").split()
    assert backup[1] == "backup"
    env = " ".join(unit("companion-backup.service")["Service"]["Environment"])
    values = dict(kv.split("=", 1) for kv in env.split() if "=" in kv)
    line = [a.replace("${COMPANION_BACKUP_DIR}", values["COMPANION_BACKUP_DIR"])
             .replace("${COMPANION_BACKUP_KEEP}", values["COMPANION_BACKUP_KEEP"]) for a in backup[1:]]
    args = parser.parse_args(line)
    assert args.dest == "/var/lib/companion/backups" and args.keep == 14


def test_backup_timer_is_nightly_and_persistent():
    u = unit("companion-backup.timer")
    assert re.fullmatch(r"\*-\*-\* \d\d:\d\d:\d\d", one(u, "Timer", "OnCalendar"))
    assert one(u, "Timer", "Persistent") == "true"
    assert one(u, "Timer", "Unit") == "companion-backup.service"
    assert one(u, "Install", "WantedBy") == "timers.target"


def verifiable_copies(tmp_path) -> Path:
    """The units with their binaries rewritten to /usr/bin/true (verify wants them to exist)."""
    out = tmp_path / "units"
    out.mkdir()
    true = shutil.which("true")
    for f in UNITS.iterdir():
        if f.suffix in (".service", ".timer"):
            text = f.read_text()
            text = re.sub(r"/opt/companion/venv/bin/(companion|python)|/usr/bin/cage|/usr/bin/chromium", true, text)
            (out / f.name).write_text(text)
    return out


@needs_analyze
def test_systemd_analyze_verify_accepts_every_unit(tmp_path):
    d = verifiable_copies(tmp_path)
    names = sorted(p.name for p in d.iterdir())
    assert names == ["companion-backup.service", "companion-backup.timer", "companion-kiosk.service",
                     "companion.service"]
    p = subprocess.run([ANALYZE, "verify", *[str(d / n) for n in names]], capture_output=True, text=True,
                       timeout=120, cwd=d)
    problems = [ln for ln in p.stderr.splitlines() if str(d) in ln or "companion" in ln]
    assert p.returncode == 0 and not problems, p.stderr


def exposure(path: Path) -> float:
    p = subprocess.run([ANALYZE, "security", "--offline=yes", str(path)], capture_output=True, text=True,
                       timeout=120)
    m = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", p.stdout)
    assert m, p.stdout + p.stderr
    return float(m.group(1))


@needs_analyze
def test_security_exposure_of_companion_service_is_at_most_2():
    score = exposure(UNITS / "companion.service")
    assert score <= 2.0
    comment = re.search(r"rates it (\d+\.\d+)", (UNITS / "companion.service").read_text())
    assert comment and float(comment.group(1)) == score  # the unit's own comment stays true


@needs_analyze
def test_security_exposure_of_the_backup_service_is_lower_still():
    assert exposure(UNITS / "companion-backup.service") <= 1.0


@needs_analyze
def test_the_score_is_not_a_constant(tmp_path):
    """The assertion above can fail: an unhardened copy rates far worse."""
    lines = [ln for ln in (UNITS / "companion.service").read_text().splitlines()
             if not re.match(r"(Protect|Private|Restrict|SystemCall|Capability|NoNew|Device|Lock|Memory)", ln)]
    weak = tmp_path / "weak.service"
    weak.write_text("\n".join(lines) + "\n")
    assert exposure(weak) > 5.0


# -- sd_notify --------------------------------------------------------------------------------------

@pytest.fixture
def notify_socket(tmp_path):
    path = tmp_path / "notify.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(path))
    s.settimeout(10)
    yield s, {"NOTIFY_SOCKET": str(path)}
    s.close()


def test_notify_ready_status_and_watchdog(notify_socket):
    s, env = notify_socket
    assert sd.notify_ready("serving on http://10.0.0.2:8080/", env=env)
    msg = s.recv(4096).decode()
    assert msg.splitlines() == ["READY=1", f"MAINPID={os.getpid()}", "STATUS=serving on http://10.0.0.2:8080/"]
    assert sd.watchdog_ping(env=env) and s.recv(4096) == b"WATCHDOG=1"
    assert sd.notify_status("two\nlines", env=env) and s.recv(4096) == b"STATUS=two lines"
    assert sd.notify_stopping(env=env) and s.recv(4096) == b"STOPPING=1"


def test_notify_on_an_abstract_socket():
    name = f"companion-test-{os.getpid()}"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind("\0" + name)
    s.settimeout(10)
    try:
        assert sd.watchdog_ping(env={"NOTIFY_SOCKET": "@" + name})
        assert s.recv(100) == b"WATCHDOG=1"
    finally:
        s.close()


def test_notify_outside_systemd_is_a_quiet_no(tmp_path):
    assert sd.notify_ready(env={}) is False
    assert sd.watchdog_ping(env={"NOTIFY_SOCKET": str(tmp_path / "nobody-listens")}) is False
    assert sd.notify("READY=1", env={"NOTIFY_SOCKET": "vsock:2:1234"}) is False
    assert sd.start_watchdog(env={}) is None
    assert sd.start_watchdog(env={"WATCHDOG_USEC": "30000000"}) is None  # no socket to ping


@pytest.mark.parametrize("env, expected", [
    ({}, None),
    ({"WATCHDOG_USEC": "30000000"}, 30.0),
    ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}, 30.0),
    ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}, None),
    ({"WATCHDOG_USEC": "0"}, None),
    ({"WATCHDOG_USEC": "soon"}, None),
])
def test_watchdog_interval(env, expected):
    assert sd.watchdog_interval(env) == expected


def test_watchdog_pings_only_while_healthy(notify_socket):
    s, env = notify_socket
    healthy = [True, False, True]

    def health():
        if not healthy:
            raise RuntimeError("database gone")
        return healthy.pop(0)

    beats = []
    w = sd.Watchdog(30.0, health=health, env=env, wait=lambda secs: beats.append(secs) or len(beats) >= 4)
    w.run()  # four beats, the injected wait ends it: no real time passes
    assert beats == [15.0] * 4
    assert (w.pings, w.skipped) == (2, 2)  # healthy, unhealthy, healthy, raising
    assert [s.recv(100), s.recv(100)] == [b"WATCHDOG=1", b"WATCHDOG=1"]


def test_start_watchdog_runs_a_thread_that_pings(notify_socket):
    s, env = notify_socket
    w = sd.start_watchdog(health=lambda: True, env={**env, "WATCHDOG_USEC": "60000000"})
    try:
        assert w is not None and w.interval == 60.0
        assert s.recv(100) == b"WATCHDOG=1"  # the first beat comes at once
    finally:
        w.stop()


def test_the_launcher_announces_a_real_server_to_systemd(tmp_path):
    """What systemd runs: READY=1 once the port listens, watchdog pings while /healthz answers,
    STOPPING=1 on SIGTERM, exit 0."""
    import signal

    path = tmp_path / "n.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(str(path))
    s.settimeout(60)
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    env = dict(os.environ, NOTIFY_SOCKET=str(path), WATCHDOG_USEC="2000000", COMPANION_DATA=str(tmp_path / "data"))
    p = subprocess.Popen([sys.executable, "-m", "companion.systemd_notify", "serve", "--host", "127.0.0.1",
                          "--port", str(port), "--gpio", "mock", "--no-qr"], env=env, cwd=str(tmp_path),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ready = s.recv(4096).decode().splitlines()
        assert ready[0] == "READY=1" and ready[1] == f"MAINPID={p.pid}"
        assert sd.http_ok("127.0.0.1", port)
        pings = 0
        while pings < 2:  # companion serve may announce READY=1 itself too: harmless
            msg = s.recv(4096)
            assert msg == b"WATCHDOG=1" or msg.startswith(b"READY=1\n"), msg
            pings += msg == b"WATCHDOG=1"
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        while (msg := s.recv(4096)) == b"WATCHDOG=1" or msg.startswith(b"READY=1\n"):
            pass
        assert msg == b"STOPPING=1"
        assert f"127.0.0.1:{port}" in out.decode()
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        s.close()


def test_the_launcher_without_serve_is_a_usage_error(run_cli):
    p = subprocess.run([sys.executable, "-m", "companion.systemd_notify", "score"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and "usage" in p.stderr


def test_http_ok_is_false_when_nothing_listens():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    assert sd.http_ok("127.0.0.1", port, timeout=2) is False


# -- backups: rotation --------------------------------------------------------------------------------

stamps = st.builds(lambda y, mo, d, h, mi, s: f"companion-{y:04d}{mo:02d}{d:02d}T{h:02d}{mi:02d}{s:02d}Z.db",
                   st.integers(2020, 2040), st.integers(1, 12), st.integers(1, 28), st.integers(0, 23),
                   st.integers(0, 59), st.integers(0, 59))
others = st.sampled_from(["notes.txt", "companion.db", "companion-latest.db", "companion-2026.db",
                          "companion-20260301T033000Z.db.part", "pre-restore.db"])


@given(st.sets(stamps, max_size=12), st.sets(others, max_size=4), st.integers(1, 15))
def test_rotation_keeps_the_newest_n_and_nothing_else_is_touched(tmp_path_factory, backups, extra, keep):
    d = tmp_path_factory.mktemp("b")
    for name in backups | extra:
        (d / name).write_text(name)
    deleted = rotate(d, keep)
    # independent formulation: by the time in the name, parsed
    from datetime import datetime

    by_time = sorted(backups, key=lambda n: datetime.strptime(n[10:26], "%Y%m%dT%H%M%SZ"))
    expected_kept = set(by_time[-keep:]) if backups else set()
    assert {p.name for p in d.iterdir()} == expected_kept | extra
    assert set(deleted) == backups - expected_kept
    assert all(not BACKUP_NAME.fullmatch(n) for n in extra)


def test_backup_cli_rotates(run_cli, tmp_path):
    Store(tmp_path / "data" / "companion.db").close()  # the database run_cli's COMPANION_DATA names
    dest = tmp_path / "backups"
    dest.mkdir()
    old = ["companion-20200101T000000Z.db", "companion-20200102T000000Z.db", "companion-20200103T000000Z.db"]
    for n in old + ["keep-me.txt"]:
        (dest / n).write_text("x")
    rc, out, err = run_cli("backup", dest, "--keep", "2")
    assert rc == 0, err
    import json

    doc = json.loads(out)
    made = Path(doc["backup"]).name
    assert BACKUP_NAME.fullmatch(made)
    assert sorted(p.name for p in dest.iterdir()) == sorted([old[2], made, "keep-me.txt"])
    assert sorted(doc["deleted"]) == old[:2]


@pytest.mark.parametrize("args, field", [(["--keep", "0"], "--keep"), (["--keep", "-3"], "--keep")])
def test_backup_keep_must_be_positive(run_cli, tmp_path, args, field):
    rc, out, err = run_cli("backup", tmp_path / "b", *args)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and field in err


def test_backup_keep_needs_a_directory(run_cli, tmp_path):
    f = tmp_path / "file.db"
    f.write_text("")
    rc, _, err = run_cli("backup", f, "--keep", "3")
    assert rc == 2 and "DEST" in err and len(err.strip().splitlines()) == 1


# -- backups: restore ----------------------------------------------------------------------------------

def make_shims(tmp_path, names, log):
    """Stand-in commands that log their arguments (one line per call) and succeed."""
    d = tmp_path / "shims"
    d.mkdir(exist_ok=True)
    for n in names:
        p = d / n
        p.write_text(f'#!/bin/sh\necho "{n} $*" >> "{log}"\n')
        p.chmod(0o755)
    return d


def test_restore_a_backup_made_by_store_backup(tmp_path, clock, fake_game):
    from companion.service import MatchService

    state = tmp_path / "state"
    db = state / "companion.db"
    store = Store(db, clock=clock)
    service = MatchService(store)
    mid = service.create("richelieu", ["ada", "bo"])["id"]
    service.append(mid, "point", {"player": "ada", "n": 3})
    backup = store.backup(tmp_path / "backups")
    # after the backup: more play, which the restore takes back
    service.append(mid, "point", {"player": "bo", "n": 5})
    other = service.create("richelieu", ["cy", "di"])["id"]
    store.close()

    log = tmp_path / "calls.log"
    shims = make_shims(tmp_path, ["systemctl"], log)
    env = dict(os.environ, COMPANION_STATE_DIR=str(state), SYSTEMCTL=str(shims / "systemctl"),
               PYTHON=sys.executable)
    p = subprocess.run([str(UNITS / "restore.sh"), str(backup)], capture_output=True, text=True, env=env,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert log.read_text().splitlines() == ["systemctl stop companion.service", "systemctl start companion.service"]
    assert "1 matches" in p.stdout

    restored = Store(db, clock=clock)
    try:
        assert [m["id"] for m in restored.list_matches()] == [mid]
        assert [(e["type"], e["data"]) for e in restored.events(mid)] == [("point", {"player": "ada", "n": 3})]
        assert MatchService(restored).state(mid)["state"]["points"] == {"ada": 3, "bo": 0}
    finally:
        restored.close()
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    # the database replaced is kept aside, with its WAL, never deleted
    aside = [d for d in state.iterdir() if d.name.startswith("pre-restore-")]
    assert len(aside) == 1
    old = Store(aside[0] / "companion.db")
    try:
        assert {m["id"] for m in old.list_matches()} == {mid, other}
    finally:
        old.close()


@pytest.mark.parametrize("content", [b"", b"not a database at all, just some bytes" * 100])
def test_restore_refuses_a_bad_file_and_leaves_the_service_alone(tmp_path, content):
    bad = tmp_path / "bad.db"
    bad.write_bytes(content)
    log = tmp_path / "calls.log"
    shims = make_shims(tmp_path, ["systemctl"], log)
    state = tmp_path / "state"
    state.mkdir()
    (state / "companion.db").write_bytes(b"live")
    env = dict(os.environ, COMPANION_STATE_DIR=str(state), SYSTEMCTL=str(shims / "systemctl"),
               PYTHON=sys.executable)
    p = subprocess.run([str(UNITS / "restore.sh"), str(bad)], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "BACKUP" in p.stderr
    assert not log.exists() and (state / "companion.db").read_bytes() == b"live"


def test_restore_refuses_a_database_that_is_not_companions(tmp_path):
    import sqlite3

    other = tmp_path / "other.db"
    c = sqlite3.connect(other)
    c.execute("CREATE TABLE t(x)")
    c.commit()
    c.close()
    env = dict(os.environ, COMPANION_STATE_DIR=str(tmp_path / "s"), SYSTEMCTL="false", PYTHON=sys.executable)
    p = subprocess.run([str(UNITS / "restore.sh"), str(other)], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 2 and "not a companion database" in p.stderr


def test_restore_without_a_file_argument(tmp_path):
    p = subprocess.run([str(UNITS / "restore.sh"), str(tmp_path / "missing.db")], capture_output=True, text=True,
                       env=dict(os.environ, SYSTEMCTL="false"), timeout=60)
    assert p.returncode == 2 and "no such file" in p.stderr


# -- install.sh -------------------------------------------------------------------------------------

@pytest.fixture
def fake_root(tmp_path):
    """Directories and stand-in commands for running install.sh without touching the machine."""
    root = tmp_path / "root"
    log = tmp_path / "calls.log"
    users = tmp_path / "users"
    users.write_text("")
    shims = make_shims(tmp_path, ["systemctl", "groupadd", "userdel", "apt-get"], log)
    (shims / "useradd").write_text(f'#!/bin/sh\necho "useradd $*" >> "{log}"\n'
                                   f'for last; do :; done; echo "$last" >> "{users}"\n')
    (shims / "usermod").write_text(f'#!/bin/sh\necho "usermod $*" >> "{log}"\n'
                                   f'for last; do :; done; echo "$last:gpio" >> "{users}"\n')
    (shims / "id").write_text(
        '#!/bin/sh\n'
        'if [ "$1" = -u ] && [ -z "$2" ]; then exec /usr/bin/id -u; fi\n'
        f'if [ "$1" = -u ]; then grep -qx "$2" "{users}"; exit $?; fi\n'
        f'if [ "$1" = -nG ]; then echo "$2"; grep -q "^$2:gpio$" "{users}" && echo gpio; exit 0; fi\n'
        'exec /usr/bin/id "$@"\n')
    (shims / "getent").write_text('#!/bin/sh\n[ "$1" = group ] && [ "$2" = gpio ]\n')
    (shims / "hostname").write_text('#!/bin/sh\n[ "$1" = -I ] && echo "192.168.1.50 fd00::5" || echo box\n')
    # a stand-in python3 that makes a venv whose pip logs and whose python is the test's python
    (shims / "fakepython").write_text(
        '#!/bin/sh\n'
        f'echo "python3 $*" >> "{log}"\n'
        'for last; do :; done\n'
        'mkdir -p "$last/bin"\n'
        f'printf \'#!/bin/sh\\nexec "{sys.executable}" "$@"\\n\' > "$last/bin/python"\n'
        'chmod +x "$last/bin/python"\n'
        f'printf \'#!/bin/sh\\necho "pip $*" >> "{log}"\\n\' > "$last/bin/pip"\n'
        'chmod +x "$last/bin/pip"\n')
    for p in shims.iterdir():
        p.chmod(0o755)
    env = dict(os.environ, PATH=f"{shims}:{os.environ['PATH']}", COMPANION_ALLOW_NONROOT="1",
               COMPANION_PREFIX=str(root / "opt/companion"), COMPANION_STATE_DIR=str(root / "var/lib/companion"),
               COMPANION_UNIT_DIR=str(root / "etc/systemd/system"), COMPANION_ETC_DIR=str(root / "etc/default"),
               PYTHON=str(shims / "fakepython"))

    def run(*args):
        if log.exists():
            log.unlink()
        p = subprocess.run(["bash", str(UNITS / "install.sh"), *args], capture_output=True, text=True, env=env,
                           timeout=120)
        calls = log.read_text().splitlines() if log.exists() else []
        return p, calls

    return root, run


def test_install_is_idempotent_and_uninstall_keeps_the_data(fake_root):
    root, run = fake_root
    units = root / "etc/systemd/system"

    p, calls = run("--no-apt")
    assert p.returncode == 0, p.stderr
    assert "useradd --system --user-group" in "\n".join(calls)
    assert any(c.startswith("usermod -a -G gpio companion") for c in calls)
    assert any(c.startswith("python3 -m venv --system-site-packages") for c in calls)
    assert any(c.startswith("pip install") and c.endswith(str(REPO)) for c in calls)
    assert "systemctl daemon-reload" in calls
    assert "systemctl enable companion.service companion-backup.timer" in calls
    assert "systemctl restart companion.service companion-backup.timer" in calls
    assert not any(c.startswith("apt-get") for c in calls)
    assert sorted(p.name for p in units.iterdir()) == ["companion-backup.service", "companion-backup.timer",
                                                       "companion.service"]
    installed = (units / "companion.service").read_text()
    assert f"ExecStart={root}/opt/companion/venv/bin/python -m companion.systemd_notify serve" in installed
    assert f"COMPANION_DATA={root}/var/lib/companion" in installed
    assert f"EnvironmentFile=-{root}/etc/default/companion" in installed
    settings = (root / "etc/default/companion").read_text()
    assert 'COMPANION_SERVE_ARGS="--host 0.0.0.0 --port 8080 --gpio auto"' in settings
    assert "http://192.168.1.50:8080/" in p.stdout
    assert "█" in p.stdout or "▀" in p.stdout or "▄" in p.stdout  # the QR code
    assert (root / "opt/companion/restore.sh").exists()

    mtimes = {p.name: p.stat().st_mtime_ns for p in units.iterdir()}
    (root / "etc/default/companion").write_text(settings.replace("8080", "9000"))  # an edit to keep
    p, calls = run("--no-apt")
    assert p.returncode == 0, p.stderr
    # nothing to do the second time: no user, venv, pip, unit or reload; the units are only enabled
    assert calls == ["systemctl enable --now companion.service companion-backup.timer"]
    assert {p.name: p.stat().st_mtime_ns for p in units.iterdir()} == mtimes
    assert "9000" in (root / "etc/default/companion").read_text() and "http://192.168.1.50:9000/" in p.stdout

    data = root / "var/lib/companion"
    data.mkdir(parents=True)
    (data / "companion.db").write_text("matches")
    p, calls = run("--uninstall")
    assert p.returncode == 0, p.stderr
    assert "systemctl disable --now companion.service" in calls
    assert list(units.iterdir()) == [] and not (root / "opt/companion").exists()
    assert (data / "companion.db").read_text() == "matches"  # the data stays
    p, calls = run("--uninstall", "--purge")
    assert p.returncode == 0 and not data.exists()


def test_install_kiosk_adds_its_unit_and_user(fake_root):
    root, run = fake_root
    p, calls = run("--no-apt", "--kiosk", "--port", "8123", "--no-start")
    assert p.returncode == 0, p.stderr
    kiosk = (root / "etc/systemd/system/companion-kiosk.service").read_text()
    assert "User=companion-kiosk" in kiosk
    assert any(c.startswith("useradd") and c.endswith("companion-kiosk") for c in calls)
    assert "systemctl enable companion.service companion-backup.timer companion-kiosk.service" in calls
    assert not any("--now" in c or "restart" in c for c in calls)
    settings = (root / "etc/default/companion").read_text()
    assert "--port 8123" in settings and "COMPANION_KIOSK_URL=http://localhost:8123/display" in settings


@pytest.mark.parametrize("args, says", [
    (["--port", "http"], "--port"),
    (["--port", "70000"], "--port"),
    (["--wheels", "/no/such/folder"], "--wheels"),
    (["--purge"], "--purge"),
    (["--frobnicate"], "unknown option"),
])
def test_install_refuses_bad_options_in_one_line(fake_root, args, says):
    _, run = fake_root
    p, calls = run(*args)
    assert p.returncode == 2 and says in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert calls == []


def test_install_needs_root():
    if os.geteuid() == 0:
        pytest.skip("running as root")
    p = subprocess.run(["bash", str(UNITS / "install.sh"), "--no-apt"], capture_output=True, text=True,
                       env={k: v for k, v in os.environ.items() if k != "COMPANION_ALLOW_NONROOT"}, timeout=60)
    assert p.returncode == 1 and "root" in p.stderr


def test_shell_scripts_parse():
    for script in ("install.sh", "restore.sh"):
        assert subprocess.run(["bash", "-n", str(UNITS / script)]).returncode == 0
        assert os.access(UNITS / script, os.X_OK)
