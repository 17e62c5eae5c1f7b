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
from tests.debian_packages import install_hint, packages

REPO = Path(__file__).resolve().parent.parent
UNITS = REPO / "systemd"
ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None,
                                   reason=f"systemd-analyze is not installed ({install_hint('systemd-analyze')})")


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
    assert one(u, "Service", "SupplementaryGroups") == "gpio audio"  # audio: the announcer's sound cards
    assert one(u, "Service", "StateDirectory") == "companion"
    assert "COMPANION_DATA=/var/lib/companion" in s["Environment"]
    assert one(u, "Service", "DevicePolicy") == "closed"
    assert s["DeviceAllow"] == ["char-gpiochip rw", "char-alsa rw"]  # the GPIO chips, the sound cards, nothing else
    assert "PrivateDevices" not in s  # it would hide /dev/gpiochip*
    assert "ProcSubset" not in s  # gpiozero reads /proc/device-tree and /proc/cpuinfo
    assert one(u, "Service", "NoNewPrivileges") == "yes"
    # iw's station list (the phones on the box's own Wi-Fi) is asked over netlink: without it iw says "Failed to
    # connect to generic netlink" under the sandbox and the count is unknown (make pi-check found it)
    assert "AF_NETLINK" in one(u, "Service", "RestrictAddressFamilies").split()
    assert one(u, "Install", "WantedBy") == "multi-user.target"


def serve_args_of_unit() -> list[str]:
    u = unit("companion.service")
    env = [v for v in u["Service"]["Environment"] if v.startswith('"COMPANION_SERVE_ARGS=')]
    assert len(env) == 1
    return env[0].strip('"').split("=", 1)[1].split()


def test_the_units_command_lines_are_accepted_by_the_cli():
    parser = build_parser()
    exec_start = one(unit("companion.service"), "Service", "ExecStart").split()
    assert exec_start == ["/opt/companion/venv/bin/python", "-m", "companion", "serve", "$COMPANION_SERVE_ARGS"]
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
        if f.suffix in (".service", ".timer", ".socket"):
            text = f.read_text()
            text = re.sub(r"/opt/companion/venv/bin/(companion|python)|/usr/bin/cage|/usr/bin/chromium", true, text)
            (out / f.name).write_text(text)
    return out


@needs_analyze
def test_systemd_analyze_verify_accepts_every_unit(tmp_path):
    d = verifiable_copies(tmp_path)
    names = sorted(p.name for p in d.iterdir())
    assert names == ["companion-backup.service", "companion-backup.timer", "companion-kiosk.service",
                     "companion-landing.socket", "companion-replica.service", "companion.service"]
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


def test_the_replica_unit_runs_companion_replicate_as_the_service_user_and_stops_on_a_configuration_mistake():
    u = unit("companion-replica.service")
    exec_start = one(u, "Service", "ExecStart").split()
    assert exec_start[0] == "/opt/companion/venv/bin/companion"
    args = build_parser().parse_args(exec_start[1:])
    assert args.func.__name__ == "run_run"
    assert one(u, "Service", "User") == "companion" and one(u, "Service", "RestartPreventExitStatus") == "2"
    assert one(u, "Service", "EnvironmentFile") == "-/etc/default/companion"  # the secrets, from the environment
    assert "COMPANION_DATA=/var/lib/companion" in u["Service"]["Environment"]


@needs_analyze
def test_security_exposure_of_the_replica_service_is_at_most_2():
    assert exposure(UNITS / "companion-replica.service") <= 2.0


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


def test_serve_announces_itself_to_systemd(tmp_path):
    """What systemd runs (``companion serve``): READY=1 once the port listens, watchdog pings while
    /healthz answers, STOPPING=1 on SIGTERM, exit 0."""
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
    p = subprocess.Popen([sys.executable, "-m", "companion", "serve", "--host", "127.0.0.1",
                          "--port", str(port), "--gpio", "mock", "--no-qr"], env=env, cwd=str(tmp_path),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ready = s.recv(4096).decode().splitlines()
        assert ready[0] == "READY=1" and ready[1] == f"MAINPID={p.pid}"
        assert sd.http_ok("127.0.0.1", port)
        for _ in range(2):  # one READY=1, then the pings
            assert s.recv(4096) == b"WATCHDOG=1"
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        while (msg := s.recv(4096)) == b"WATCHDOG=1":
            pass
        assert msg == b"STOPPING=1"
        text = out.decode()
        assert f"127.0.0.1:{port}" in text
        # the journal: no "Ctrl-C" (nobody has a terminal) and no join token (it lets anyone in as a player)
        assert "Ctrl-C" not in text and "/j/" not in text and f"127.0.0.1:{port}/join" in text
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
        s.close()


@pytest.mark.parametrize("env, expected", [
    ({}, False),
    ({"INVOCATION_ID": "0f3c"}, True),  # any service, Type=notify or not
    ({"NOTIFY_SOCKET": "/run/systemd/notify"}, True),
    ({"INVOCATION_ID": ""}, False),
])
def test_serve_knows_when_systemd_runs_it(env, expected):
    from companion.cli.serve import under_systemd

    assert under_systemd(env) is expected


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
    from companion.services.matches import MatchService

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

def clone_snapshot(path: Path) -> tuple[str, list[str]]:
    """What a checkout looks like to its owner: git's view of it, and every build/ or *.egg-info in it."""
    status = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=path, capture_output=True, text=True,
                            check=True).stdout
    leftovers = sorted(str(p.relative_to(path)) for p in path.rglob("*")
                       if (p.name == "build" or p.name.endswith(".egg-info")) and ".venv" not in p.parts)
    return status, leftovers


@pytest.fixture
def fake_root(tmp_path):
    """Directories and stand-in commands for running install.sh without touching the machine."""
    root = tmp_path / "root"
    log = tmp_path / "calls.log"
    users = tmp_path / "users"
    users.write_text("")
    groups = tmp_path / "groups"  # the groups this fake system has: no gpio, no render
    groups.write_text("video\ninput\n")
    dpkg = tmp_path / "dpkg"  # installed packages
    dpkg.write_text("python3-venv\n")
    available = tmp_path / "apt-available"  # what apt could install
    available.write_text("python3-venv\npython3-pip\ncage\nchromium\n")
    shims = make_shims(tmp_path, ["systemctl", "userdel", "chown"], log)
    (shims / "groupadd").write_text(f'#!/bin/sh\necho "groupadd $*" >> "{log}"\n'
                                    f'for last; do :; done; echo "$last" >> "{groups}"\n')
    (shims / "groupdel").write_text(f'#!/bin/sh\necho "groupdel $*" >> "{log}"\n'
                                    f'grep -vx "$1" "{groups}" > "{groups}.new"; mv "{groups}.new" "{groups}"\n')
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
    (shims / "getent").write_text(f'#!/bin/sh\n[ "$1" = group ] && grep -qx "$2" "{groups}"\n')
    (shims / "hostname").write_text('#!/bin/sh\n[ "$1" = -I ] && echo "192.168.1.50 fd00::5" || echo box\n')
    # runuser -u USER -- CMD...: runs CMD (as this user: the test is not root)
    (shims / "runuser").write_text('#!/bin/sh\nwhile [ "$1" != -- ]; do shift; done; shift; exec "$@"\n')
    # apt: installing chromium brings a dependency along; dpkg-query answers from the fake package list
    (shims / "apt-get").write_text(
        f'#!/bin/sh\necho "apt-get $*" >> "{log}"\n'
        'cmd=$1; shift\n'
        'case "$cmd" in\n'
        f'  install) for a; do case "$a" in -*) ;; *) echo "$a" >> "{dpkg}";'
        f' [ "$a" = chromium ] && echo chromium-common >> "{dpkg}";; esac; done ;;\n'
        f'  purge) for a; do grep -vx -- "$a" "{dpkg}" > "{dpkg}.new"; mv "{dpkg}.new" "{dpkg}"; done ;;\n'
        'esac\nexit 0\n')
    (shims / "dpkg-query").write_text(
        '#!/bin/sh\n'
        f'case "$2" in *Status-Abbrev*) sed "s/^/ii /" "{dpkg}"; exit 0 ;; esac\n'
        f'grep -qx "$3" "{dpkg}" && printf "install ok installed" && exit 0\nexit 1\n')
    # apt-cache policy: the candidate, then a long version table as the real one prints (a reader that stops
    # at the first match makes it die of SIGPIPE)
    (shims / "apt-cache").write_text(
        f'#!/bin/sh\nif grep -qx "$2" "{available}"; then echo "  Candidate: 1.0"; else echo "  Candidate: (none)"; fi\n'
        'i=0; while [ $i -lt 3000 ]; do echo "     1.0 500 http://deb.debian.org/debian bookworm/main amd64 Packages"; '
        'i=$((i+1)); done\n')
    # a stand-in python3 that makes a venv whose python is the test's python, whose pip logs (and, asked
    # for a wheel, leaves an empty one where -w says) and whose companion is the real CLI
    (shims / "fakepython").write_text(
        '#!/bin/sh\n'
        f'echo "python3 $*" >> "{log}"\n'
        'for last; do :; done\n'
        'mkdir -p "$last/bin"\n'
        f'printf \'#!/bin/sh\\nexec "{sys.executable}" "$@"\\n\' > "$last/bin/python"\n'
        f'printf \'#!/bin/sh\\nexec "{sys.executable}" -m companion "$@"\\n\' > "$last/bin/companion"\n'
        'chmod +x "$last/bin/python" "$last/bin/companion"\n'
        'cat > "$last/bin/pip" <<\'EOF\'\n'
        '#!/bin/sh\n'
        f'echo "pip $*" >> "{log}"\n'
        'if [ "$1" = wheel ] && [ -n "$FAKE_PIP_WHEEL_FAILS" ]; then echo "ERROR: no setuptools" >&2; exit 1; fi\n'
        'if [ "$1" = wheel ]; then while [ $# -gt 0 ]; do [ "$1" = -w ] && : > "$2/companion-0.1.0-py3-none-any.whl";'
        ' shift; done; fi\n'
        'EOF\n'
        'chmod +x "$last/bin/pip"\n')
    for p in shims.iterdir():
        p.chmod(0o755)
    env = dict(os.environ, PATH=f"{shims}:{os.environ['PATH']}", COMPANION_ALLOW_NONROOT="1",
               COMPANION_PREFIX=str(root / "opt/companion"), COMPANION_STATE_DIR=str(root / "var/lib/companion"),
               COMPANION_UNIT_DIR=str(root / "etc/systemd/system"), COMPANION_ETC_DIR=str(root / "etc/default"),
               COMPANION_TIMER_STAMPS=str(root / "var/lib/systemd/timers"), COMPANION_TTY=str(root / "dev/tty1"),
               COMPANION_DRM=str(root / "sys/class/drm"), COMPANION_KIOSK_SETTLE="0", PYTHON=str(shims / "fakepython"),
               COMPANION_APT_LOG=str(root / "var/log/companion-install-apt.log"),
               COMPANION_POLKIT_DIR=str(root / "etc/polkit-1/rules.d"),
               COMPANION_NM_DNSMASQ_DIR=str(root / "etc/NetworkManager/dnsmasq-shared.d"),
               COMPANION_HOSTNAME_FILE=str(root / "etc/hostname"),
               COMPANION_UDEV_DIR=str(root / "etc/udev/rules.d"))
    for name in ("INVOCATION_ID", "NOTIFY_SOCKET"):
        env.pop(name, None)

    def run(*args, script=UNITS / "install.sh", extra_env=None):
        if log.exists():
            log.unlink()
        p = subprocess.run(["bash"] + (["-x"] if os.environ.get("INSTALL_TRACE") else []) + [str(script), *args], capture_output=True, text=True,
                           env={**env, **(extra_env or {})}, timeout=600)  # a venv and pip on a loaded machine: minutes
        calls = log.read_text().splitlines() if log.exists() else []
        return p, calls

    run.groups = groups
    run.dpkg = dpkg
    run.available = available
    run.env = env
    return root, run


def SECOND_RUN_CALLS(root):
    """What a run that changes nothing does: the settings' owner made sure of, the units enabled."""
    # (the stand-in systemctl says no unit is active: the socket is started, its service stopped first)
    return [f"chown root:companion {root}/etc/default/companion",
            "systemctl enable companion-landing.socket",
            "systemctl is-active companion-landing.socket",
            "systemctl stop companion.service",
            "systemctl start companion-landing.socket",
            "systemctl enable --now companion.service companion-backup.timer"]


def setup_code_of(out: str) -> str:
    m = re.search(r"with the setup code (\d{10}) ", out)
    assert m, out
    return m.group(1)


def test_install_is_idempotent_and_uninstall_keeps_the_data(fake_root):
    root, run = fake_root
    units = root / "etc/systemd/system"
    clone_before = clone_snapshot(REPO)

    p, calls = run("--no-apt")
    assert p.returncode == 0, p.stderr
    assert "useradd --system --user-group" in "\n".join(calls)
    assert "groupadd --system gpio" in calls and "created group gpio" in p.stdout
    assert any(c.startswith("usermod -a -G gpio companion") for c in calls)
    assert any(c.startswith("python3 -m venv --system-site-packages") for c in calls)
    # companion is built from a copy of the checkout (never the checkout itself), then installed as a wheel
    wheel_calls = [c for c in calls if c.startswith("pip wheel")]
    assert len(wheel_calls) == 1 and not wheel_calls[0].endswith(str(REPO))
    assert any(c.startswith("pip install") and c.endswith("/companion-0.1.0-py3-none-any.whl") for c in calls)
    # the bytecode compiled at install (the unit's PYTHONDONTWRITEBYTECODE=1 writes none at start)
    assert all("--compile" in c.split() for c in calls if c.startswith("pip install"))
    assert not any(c.endswith(str(REPO)) for c in calls)
    assert clone_snapshot(REPO) == clone_before
    assert "systemctl daemon-reload" in calls
    assert "systemctl enable companion.service companion-backup.timer" in calls
    assert "systemctl restart companion.service companion-backup.timer" in calls
    assert not any(c.startswith("apt-get") for c in calls)
    assert sorted(p.name for p in units.iterdir()) == ["companion-backup.service", "companion-backup.timer",
                                                       "companion-landing.socket", "companion-replica.service",
                                                       "companion.service"]
    assert not any("companion-replica" in c for c in calls if c.startswith("systemctl"))  # off by default
    assert "replication: companion-replica.service is installed, not enabled" in p.stdout
    installed = (units / "companion.service").read_text()
    assert f"ExecStart={root}/opt/companion/venv/bin/python -m companion serve" in installed
    assert f"COMPANION_DATA={root}/var/lib/companion" in installed
    assert f"EnvironmentFile=-{root}/etc/default/companion" in installed
    settings = (root / "etc/default/companion").read_text()
    assert 'COMPANION_SERVE_ARGS="--host 0.0.0.0 --port 8080 --gpio auto"' in settings
    assert "http://192.168.1.50:8080/" in p.stdout
    assert "█" in p.stdout or "▀" in p.stdout or "▄" in p.stdout  # the QR code
    assert (root / "opt/companion/restore.sh").exists()
    # the first-run setup code, made in the service's database: it sets the PIN at /login
    assert "choose the organiser PIN at http://192.168.1.50:8080/login" in p.stdout
    code = setup_code_of(p.stdout)
    db = root / "var/lib/companion/companion.db"
    from companion.services.access import Access

    store = Store(db)
    try:
        assert Access(store).check_reset_code(code)
    finally:
        store.close()
    assert stat.S_IMODE(db.stat().st_mode) == 0o600  # made with the service's umask
    assert "GPIO: no lgpio" in p.stdout and "kiosk: not installed" in p.stdout

    mtimes = {p.name: p.stat().st_mtime_ns for p in units.iterdir()}
    (root / "etc/default/companion").write_text(settings.replace("8080", "9000"))  # an edit to keep
    p, calls = run("--no-apt")
    assert p.returncode == 0, p.stderr
    # nothing to do the second time: no user, venv, pip, unit or reload; the units are only enabled
    assert calls == SECOND_RUN_CALLS(root)
    assert {p.name: p.stat().st_mtime_ns for p in units.iterdir()} == mtimes
    assert "9000" in (root / "etc/default/companion").read_text() and "http://192.168.1.50:9000/" in p.stdout

    store = Store(db)
    try:
        Access(store).set_pin("246813")
    finally:
        store.close()
    p, _ = run("--no-apt")
    assert "the organiser PIN is set" in p.stdout and "companion pin reset" in p.stdout
    assert "setup code" not in p.stdout

    data = root / "var/lib/companion"
    p, calls = run("--uninstall")
    assert p.returncode == 0, p.stderr
    assert "systemctl disable --now companion.service" in calls
    assert list(units.iterdir()) == [] and not (root / "opt/companion").exists()
    assert db.exists()  # the data stays
    stamp = root / "var/lib/systemd/timers/stamp-companion-backup.timer"
    stamp.parent.mkdir(parents=True)
    stamp.write_text("")
    p, calls = run("--uninstall", "--purge")
    assert p.returncode == 0 and not data.exists()
    assert "groupdel gpio" in calls and "gpio" not in run.groups.read_text().split()  # it made gpio
    assert not stamp.exists()
    assert "kept:" in p.stdout and str(REPO) in p.stdout
    assert not (root / "var/lib/companion.install").exists()


def test_purge_leaves_a_gpio_group_it_did_not_create(fake_root):
    root, run = fake_root
    run.groups.write_text("video\ninput\ngpio\n")
    p, calls = run("--no-apt", "--no-start")
    assert p.returncode == 0 and not any(c.startswith("groupadd") for c in calls)
    p, calls = run("--uninstall", "--purge")
    assert p.returncode == 0 and not any(c.startswith("groupdel") for c in calls)
    assert "gpio" in run.groups.read_text().split()


def test_install_goes_on_without_lgpio_and_purge_removes_the_packages_it_added(fake_root):
    root, run = fake_root
    (root / "dev").mkdir(parents=True)
    (root / "dev/tty1").write_text("")
    p, calls = run("--kiosk", "--no-start")
    assert p.returncode == 0, p.stderr
    assert "no python3-lgpio in this system's apt sources: going on without it" in p.stdout
    assert "apt-get install -y --no-install-recommends python3-pip bluez cage chromium" in calls
    state = (root / "var/lib/companion.install").read_text()
    # what apt installed, its dependency (chromium-common) included
    assert set(re.search(r"^apt=(.*)$", state, re.M).group(1).split()) == {"python3-pip", "bluez", "cage",
                                                                           "chromium", "chromium-common"}
    assert re.search(r"^apt_before=python3-venv$", state, re.M)
    # a tty but no screen connected: the kiosk's state, and why it will stop trying
    assert "systemctl is-active companion-kiosk.service" in calls
    assert "kiosk: companion-kiosk.service is not started (--no-start)" in p.stdout

    run.dpkg.write_text(run.dpkg.read_text() + "vim\n")  # installed by the owner meanwhile
    p, calls = run("--uninstall", "--purge")
    assert p.returncode == 0, p.stderr
    purge = [c for c in calls if c.startswith("apt-get purge")]
    assert len(purge) == 1 and set(purge[0].split()[3:]) == {"python3-pip", "bluez", "cage", "chromium",
                                                             "chromium-common"}
    assert sorted(run.dpkg.read_text().split()) == ["python3-venv", "vim"]
    assert "python3-venv: they were installed before companion" in p.stdout


def test_an_offline_build_without_the_build_requirements_points_to_the_bundle(fake_root, tmp_path):
    root, run = fake_root
    wheels = tmp_path / "wheels"  # what `pip download -d DIR .` made: no setuptools, no companion wheel
    wheels.mkdir()
    (wheels / "flask-3.1.3-py3-none-any.whl").write_text("")
    p, calls = run("--no-apt", "--wheels", str(wheels), extra_env={"FAKE_PIP_WHEEL_FAILS": "1"})
    assert p.returncode == 1 and "companion bundle --for" in p.stderr.strip().splitlines()[-1]
    assert any(c.startswith("pip wheel") and f"--no-index --find-links {wheels}" in c for c in calls)


# -- the installer never strands the owner ----------------------------------------------------------------

def test_a_half_made_venv_is_detected_and_rebuilt(fake_root):
    """A failed `python3 -m venv`, a power cut or Ctrl-C leaves a python without pip: every later run
    failed with `/opt/companion/venv/bin/pip: No such file or directory`."""
    root, run = fake_root
    p, _ = run("--no-apt", "--no-start")
    assert p.returncode == 0, p.stderr
    venv = root / "opt/companion/venv"
    (venv / "bin/pip").unlink()  # what an interrupted venv looks like: python there, pip not
    p, calls = run("--no-apt", "--no-start")
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"{venv} is half-made (no working pip): rebuilding it" in p.stdout
    assert any(c.startswith("python3 -m venv --system-site-packages") for c in calls)
    assert any(c.startswith("pip install") for c in calls)  # the code installed again into the new venv
    assert (venv / "bin/pip").exists()


def test_a_failed_venv_says_how_to_check_it_and_leaves_nothing_half_made(fake_root):
    root, run = fake_root
    shims = Path(run.env["PATH"].split(":")[0])
    (shims / "badpython").write_text('#!/bin/sh\nfor last; do :; done\nmkdir -p "$last/bin"\n'
                                     'echo "Error: ensurepip is not available" >&2\nexit 1\n')
    (shims / "badpython").chmod(0o755)
    p, _ = run("--no-apt", "--no-start", extra_env={"PYTHON": str(shims / "badpython")})
    assert p.returncode == 1 and "-m venv /tmp/v" in p.stderr.strip().splitlines()[-1]
    assert not (root / "opt/companion/venv").exists()


def test_stale_apt_lists_are_refreshed_once_before_a_package_is_said_missing(fake_root):
    """Stale lists silently turned the voice and the GPIO backend off: apt-get update runs once, then the
    packages are looked up again."""
    root, run = fake_root
    fresh = run.available.parent / "apt-available-after-update"
    fresh.write_text(run.available.read_text() + "python3-lgpio\nespeak-ng\n")
    shims = Path(run.env["PATH"].split(":")[0])
    text = (shims / "apt-get").read_text()
    (shims / "apt-get").write_text(text.replace("case \"$cmd\" in\n",
                                                f"case \"$cmd\" in\n  update) cp \"{fresh}\" \"{run.available}\" ;;\n"))
    p, calls = run("--no-start")
    assert p.returncode == 0, p.stderr
    apt = [c for c in calls if c.startswith("apt-get")]
    assert apt[0] == "apt-get update" and apt.count("apt-get update") == 1
    assert apt[1] == "apt-get install -y --no-install-recommends python3-pip python3-lgpio espeak-ng bluez"
    assert "no python3-lgpio" not in p.stdout and "no espeak-ng" not in p.stdout


def test_apt_output_goes_to_its_log_not_to_the_screen(fake_root):
    root, run = fake_root
    shims = Path(run.env["PATH"].split(":")[0])
    text = (shims / "apt-get").read_text()
    (shims / "apt-get").write_text(text.replace("cmd=$1; shift\n", "cmd=$1; shift\n"
                                                "i=0; while [ $i -lt 300 ]; do echo \"Unpacking thing-$i ...\"; "
                                                "i=$((i+1)); done\n"))
    p, calls = run("--no-start", "--kiosk")
    assert p.returncode == 0, p.stderr
    assert "Unpacking" not in p.stdout + p.stderr
    log = root / "var/log/companion-install-apt.log"
    assert "Unpacking thing-299" in log.read_text() and str(log) in p.stdout
    assert len(p.stdout.splitlines()) < 80


def test_wheels_from_a_checkout_install_the_checkout_not_the_bundle_s_older_wheel(fake_root, tmp_path):
    root, run = fake_root
    wheels = tmp_path / "bundle"
    wheels.mkdir()
    (wheels / "companion-0.0.9-py3-none-any.whl").write_text("")  # the bundle's own, older wheel
    (wheels / "setuptools-80.0.0-py3-none-any.whl").write_text("")
    p, calls = run("--no-apt", "--no-start", "--wheels", str(wheels))
    assert p.returncode == 0, p.stderr
    # built from a copy of the checkout, offline, with the bundle's build requirements
    assert any(c.startswith("pip wheel") and f"--no-index --find-links {wheels}" in c for c in calls)
    installs = [c for c in calls if c.startswith("pip install")]
    assert installs and all("companion-0.0.9" not in c for c in installs)
    assert any(c.endswith("/companion-0.1.0-py3-none-any.whl[replica,gpio,dice]") for c in installs)
    assert "building companion from a copy of" in p.stdout


def test_the_settings_holding_the_replica_secrets_are_0640_root_companion(fake_root):
    root, run = fake_root
    p, calls = run("--no-apt", "--no-start")
    assert p.returncode == 0, p.stderr
    settings = root / "etc/default/companion"
    assert stat.S_IMODE(settings.stat().st_mode) == 0o640
    assert f"chown root:companion {settings}" in calls
    settings.chmod(0o644)  # an older install's file, or an owner's edit: put right on the next run
    # (and its kiosk address /display, which is no page: the room screen instead)
    settings.write_text(settings.read_text().replace("/tournament", "/display"))
    p, calls = run("--no-apt", "--no-start")
    assert stat.S_IMODE(settings.stat().st_mode) == 0o640
    assert "COMPANION_KIOSK_URL=http://localhost:8080/tournament\n" in settings.read_text()
    assert "kiosk: its page /display -> /tournament" in p.stdout


def test_port_on_an_installed_box_changes_the_port(fake_root):
    root, run = fake_root
    (root / "dev").mkdir(parents=True)
    p, _ = run("--no-apt", "--kiosk")
    assert p.returncode == 0, p.stderr
    p, calls = run("--no-apt", "--port", "9000")
    assert p.returncode == 0, p.stderr
    settings = (root / "etc/default/companion").read_text()
    assert "--port 9000" in settings and "--port 8080" not in settings
    assert "COMPANION_KIOSK_URL=http://localhost:9000/tournament" in settings
    assert "port: 8080 -> 9000" in p.stdout and "http://192.168.1.50:9000/" in p.stdout
    assert any(c.startswith("systemctl restart companion.service") for c in calls)
    # a settings file whose serve arguments name no port: said, with how to change it
    (root / "etc/default/companion").write_text('COMPANION_SERVE_ARGS="--host 0.0.0.0 --gpio auto"\n')
    p, calls = run("--no-apt", "--port", "9100")
    assert "--port 9100 ignored" in p.stdout and "systemctl restart companion" in p.stdout


def test_the_kiosk_without_a_screen_is_reported_failing(fake_root):
    """systemd says "active" between two restarts of a kiosk that cannot start: that is not running."""
    root, run = fake_root
    (root / "dev").mkdir(parents=True)
    (root / "dev/tty1").write_text("")
    shims = Path(run.env["PATH"].split(":")[0])
    (shims / "systemctl").write_text('#!/bin/sh\ncase "$1" in is-active) echo active ;; show) echo 1 ;; esac\n')
    p, calls = run("--no-apt", "--kiosk")
    assert p.returncode == 0, p.stderr
    assert "kiosk: companion-kiosk.service is failing: no screen" in p.stdout
    assert "active" not in [ln for ln in p.stdout.splitlines() if ln.startswith("==> kiosk:")][0]


def test_uninstall_leaves_nothing_in_systemctl_failed(fake_root):
    root, run = fake_root
    (root / "dev").mkdir(parents=True)
    p, _ = run("--no-apt", "--kiosk", "--no-start")
    p, calls = run("--uninstall")
    assert p.returncode == 0, p.stderr
    reload_at = calls.index("systemctl daemon-reload")
    resets = [c for c in calls[reload_at:] if c.startswith("systemctl reset-failed")]
    assert {c.split()[-1] for c in resets} == {"companion-kiosk.service", "companion.service",
                                               "companion-backup.service", "companion-backup.timer",
                                               "companion-replica.service", "companion-landing.socket"}


def test_the_hotspot_files_go_where_networkmanager_is_and_uninstall_takes_them(fake_root):
    root, run = fake_root
    (root / "etc/NetworkManager").mkdir(parents=True)
    (root / "etc/polkit-1").mkdir(parents=True)
    # the name the box boots with (/etc/hostname), not hostname's (the stand-in's "box"): in the image's build
    # they differ (the image's DNS once answered the building machine's name, found by make pi-check)
    (root / "etc/hostname").write_text("tablebox\n")
    p, _ = run("--no-apt", "--no-start")
    assert p.returncode == 0, p.stderr
    dns = (root / "etc/NetworkManager/dnsmasq-shared.d/companion.conf").read_text()
    assert "address=/tablebox/10.42.0.1" in dns and "/box/" not in dns
    assert "address=/captive.apple.com/10.42.0.1" in dns and "address=/detectportal.firefox.com/10.42.0.1" in dns
    rules = (root / "etc/polkit-1/rules.d/50-companion.rules").read_text()
    assert 'subject.user == "companion"' in rules and "NetworkManager.settings.modify.system" in rules
    assert "the box's own Wi-Fi (for a table with no network): available" in p.stdout
    p, _ = run("--uninstall")
    assert not (root / "etc/NetworkManager/dnsmasq-shared.d/companion.conf").exists()
    assert not (root / "etc/polkit-1/rules.d/50-companion.rules").exists()


def test_the_gpio_chips_go_to_group_gpio_where_udev_is_and_uninstall_takes_the_rule(fake_root):
    """Debian's GPIO chips are root's alone (0600; seen in make pi-check's emulated machine with a simulated
    chip): the installer's udev rule gives them to group gpio, which the service user is in."""
    root, run = fake_root
    (root / "etc/udev").mkdir(parents=True)
    p, _ = run("--no-apt", "--no-start")
    assert p.returncode == 0, p.stderr
    rule = (root / "etc/udev/rules.d/60-companion-gpio.rules").read_text()
    assert 'SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"' in rule
    p, _ = run("--uninstall")
    assert not (root / "etc/udev/rules.d/60-companion-gpio.rules").exists()


def test_without_networkmanager_the_install_says_the_hotspot_is_not_available(fake_root):
    root, run = fake_root
    p, _ = run("--no-apt", "--no-start")
    assert "the box's own Wi-Fi (for a table with no network): not available: no NetworkManager" in p.stdout
    assert not (root / "etc/NetworkManager").exists()


def test_the_install_prints_the_wifi_code_first_when_the_hotspot_is_on(fake_root):
    root, run = fake_root
    p, _ = run("--no-apt", "--no-start")
    store = Store(root / "var/lib/companion/companion.db")
    store.set_setting("wifi.hotspot", {"ssid": "companion-xyz2", "password": "abcdefgh2345", "enabled": True})
    store.close()
    p, _ = run("--no-apt", "--no-start")
    assert p.returncode == 0, p.stderr
    first = p.stdout.index("1. Join the box's Wi-Fi: companion-xyz2")
    second = p.stdout.index("2. Then open http://10.42.0.1:8080/")
    assert first < second


def test_the_cli_on_an_installed_box_never_makes_a_second_database(run_cli, tmp_path, monkeypatch):
    service = tmp_path / "var-lib-companion"
    service.mkdir()
    os.chown(service, 12345, 12345)  # the service user's folder (the tests run as root or as a user)
    env = {"COMPANION_SERVICE_DATA": str(service)}
    full = dict(os.environ, **env)
    full.pop("COMPANION_DATA", None)
    p = subprocess.run([sys.executable, "-m", "companion", "token", "create", "--role", "organiser"],
                       capture_output=True, text=True, env=full, cwd=str(tmp_path), timeout=60)
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert (f"sudo -u companion env COMPANION_DATA={service} /opt/companion/venv/bin/companion token create"
            in p.stderr)
    assert not (tmp_path / "data").exists()
    # the service user itself is given the service's database
    from argparse import Namespace

    from companion import cli

    monkeypatch.delenv("COMPANION_DATA", raising=False)
    monkeypatch.setenv("COMPANION_SERVICE_DATA", str(service))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "getuid", lambda: 12345)
    assert cli.database_path(Namespace(command="pin", data_dir=None)) == str(service / "companion.db")
    # --data-dir or $COMPANION_DATA: as asked, whatever the box
    assert cli.database_path(Namespace(command="pin", data_dir="/x")) == "/x/companion.db"


def test_install_stops_with_a_hint_when_apt_fails(fake_root):
    root, run = fake_root
    run.available.write_text("python3-venv\npython3-pip\npython3-lgpio\n")
    shims = Path(run.env["PATH"].split(":")[0])
    (shims / "apt-get").write_text('#!/bin/sh\necho "E: Unable to locate package" >&2\nexit 100\n')
    p, calls = run()
    assert p.returncode == 1 and "--no-apt" in p.stderr.strip().splitlines()[-1]


def test_install_kiosk_adds_its_unit_and_user(fake_root):
    root, run = fake_root
    p, calls = run("--no-apt", "--kiosk", "--port", "8123", "--no-start")
    assert p.returncode == 0, p.stderr
    kiosk = (root / "etc/systemd/system/companion-kiosk.service").read_text()
    assert "User=companion-kiosk" in kiosk
    # the system has no group render: skipped, said, and left out of the user and of the unit
    assert "kiosk: group render does not exist on this system: skipped" in p.stdout
    assert any(c.startswith("useradd") and "--groups video,input" in c and c.endswith("companion-kiosk")
               for c in calls)
    assert re.search(r"^SupplementaryGroups=video input$", kiosk, re.M)
    assert "systemctl enable companion.service companion-backup.timer companion-kiosk.service" in calls
    assert not any("--now" in c or "restart" in c for c in calls)
    settings = (root / "etc/default/companion").read_text()
    assert "--port 8123" in settings and "COMPANION_KIOSK_URL=http://localhost:8123/tournament" in settings
    assert "kiosk: not running: this machine has no" in p.stdout  # no tty1 here


def test_the_kiosk_state_is_reported_with_its_restarts(fake_root):
    root, run = fake_root
    (root / "dev").mkdir(parents=True)
    (root / "dev/tty1").write_text("")
    hdmi = root / "sys/class/drm/card1-HDMI-A-1"
    hdmi.mkdir(parents=True)
    (hdmi / "status").write_text("connected\n")
    shims = Path(run.env["PATH"].split(":")[0])
    (shims / "systemctl").write_text(
        '#!/bin/sh\ncase "$1" in is-active) echo activating ;; show) echo 2 ;; esac\n')
    p, calls = run("--no-apt", "--kiosk")
    assert p.returncode == 0, p.stderr
    assert "kiosk: companion-kiosk.service is failing: it restarted 2 times (journalctl -u companion-kiosk" in p.stdout
    assert "no screen" not in p.stdout


def test_kiosk_restarts_are_bounded():
    u = unit("companion-kiosk.service")
    assert one(u, "Service", "Restart") == "always"
    interval, burst = int(one(u, "Unit", "StartLimitIntervalSec")), int(one(u, "Unit", "StartLimitBurst"))
    restart_sec = int(one(u, "Service", "RestartSec"))
    # a kiosk that fails at once reaches the limit inside the interval: systemd stops trying
    assert burst * restart_sec < interval and burst <= 10


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
    for script in ("install.sh", "restore.sh", "build-wheel.sh"):
        assert subprocess.run(["bash", "-n", str(UNITS / script)]).returncode == 0
        assert os.access(UNITS / script, os.X_OK)




# -- the README's Pi section says what the installer does ------------------------------------------------------

def pi_section() -> str:
    """The Pi set-up manual: the README's section, or docs/pi.md where the manuals live."""
    for path in (REPO / "docs" / "pi.md", REPO / "README.md"):
        if path.exists():
            text = path.read_text()
            m = re.search(r"^#+ Pi set-up\n(.*?)(?=^## (?!#)|\Z)", text, re.M | re.S)
            if m:
                return m.group(1)
    raise AssertionError("no Pi set-up section in README.md or docs/pi.md")


def test_the_pi_section_matches_the_installer():
    text = pi_section()
    first_block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    lines = [ln.split("#")[0].strip() for ln in first_block.splitlines()]
    assert lines.index("sudo apt-get update") < [i for i, ln in enumerate(lines) if "install.sh" in ln][0]
    assert any(ln.startswith("git clone \"$REPO\"") for ln in lines)  # the address, named in the words above
    assert any("python3 -m venv" in ln and "pip --version" in ln for ln in lines)  # how to check the venv
    for pkg in packages("box", "kiosk"):  # what the installer installs (systemd/debian-packages.txt)
        assert f"`{pkg}`" in text, pkg
    assert len(re.findall(r"forgotten organiser PIN", text, re.I)) == 1  # one paragraph, not two
    when = one(unit("companion-backup.timer"), "Timer", "OnCalendar").split()[1][:5]
    assert f"every night at {when}" in text
    assert "/media/usb" in text and "/etc/fstab" in text and "replicate set /media/usb" in text
    keeps = re.search(r"`--uninstall` removes.*?\*\*keeps\*\*(.*?)`--uninstall --purge`", text, re.S).group(1)
    for kept in ("/var/lib/companion", "/etc/default/companion", "backups"):
        assert kept in keeps, kept
    assert "sudo -u companion env COMPANION_DATA=/var/lib/companion /opt/companion/venv/bin/companion token create" in text
    assert "0640 root:companion" in text


# building companion without touching the checkout, the offline bundle: tests/test_bundle.py
