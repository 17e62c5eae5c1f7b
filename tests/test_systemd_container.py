"""install.sh under a real systemd: a Debian 12 root made with mmdebstrap, booted with systemd-nspawn (no
docker engine is needed), the offline bundle and a clean clone of this checkout copied in, every command run
inside it with nsenter. `make systemd-check` runs it (.ci/run too, after `make test`); it needs root,
systemd-container and mmdebstrap (.ci/run installs them) and Debian's package mirror (the root is made once
and kept in ~/.cache/companion-rootfs).

What it checks, each against the real systemd: the bundle installs and the service answers /healthz; port 80
comes from companion-landing.socket (socket activation) and answers a phone's connectivity check; the
settings file is 0640 root:companion; stale apt lists are refreshed once (espeak-ng is installed, not said
missing); a half-made venv is rebuilt; --port N moves the service; another user's CLI is told the service
user's command instead of making a second database, and that command works; a checkout run with --wheels
installs the checkout (its commit in --version); --uninstall leaves nothing in `systemctl --failed`; --purge
leaves no data, user or stamp. The radio (the hotspot itself) is not here: no Wi-Fi device.
"""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.debian_packages import missing, packages
from tests.test_bundle import make_bundle, make_clone
from tests.test_systemd import setup_code_of

pytestmark = pytest.mark.skipif(not os.environ.get("COMPANION_SYSTEMD_CONTAINER"),
                                reason="make systemd-check runs it (a Debian 12 root booted with systemd-nspawn)")

PACKAGES = ",".join(packages("nspawn-root"))  # systemd/debian-packages.txt
CACHE = Path(os.environ.get("COMPANION_ROOTFS_CACHE", Path.home() / ".cache" / "companion-rootfs"))


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (systemd-nspawn)"
    return missing("systemd-nspawn", "mmdebstrap", "nsenter")


def _rootfs_tar() -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    tar = CACHE / "bookworm-amd64.tar"
    if not tar.exists():
        tmp = CACHE / "bookworm-amd64.part.tar"  # mmdebstrap writes a tar for a name ending .tar
        p = subprocess.run(["mmdebstrap", "--variant=apt", f"--include={PACKAGES}", "bookworm", str(tmp)],
                           capture_output=True, text=True, timeout=900)
        if p.returncode != 0:
            pytest.skip(f"mmdebstrap could not make a Debian 12 root (no mirror?): {p.stderr.strip()[-300:]}")
        tmp.rename(tar)
    return tar


class Container:
    def __init__(self, root: Path, log: Path):
        self.root = root
        self.proc = subprocess.Popen(["systemd-nspawn", "--register=no", "--keep-unit", "-q", "-D", str(root),
                                      "--boot", "--machine", f"companion-test-{os.getpid()}"],
                                     stdin=subprocess.DEVNULL, stdout=log.open("w"), stderr=subprocess.STDOUT)
        self.leader = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self.leader is None:
            try:
                kids = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
            except OSError:
                kids = []
            comm = ""
            if kids:
                try:
                    comm = Path(f"/proc/{kids[0]}/comm").read_text().strip()
                except OSError:
                    pass
            if comm == "systemd":  # the container's init (nspawn's first child is a passing helper)
                self.leader = int(kids[0])
            elif self.proc.poll() is not None:
                break
            else:
                time.sleep(0.2)
        if self.leader is None:
            raise RuntimeError("the container did not start: " + log.read_text()[-2000:])

    def sh(self, cmd: str, timeout: int = 900) -> subprocess.CompletedProcess:
        # -a: every namespace of the container's init; -r -w: its root and working directory too
        return subprocess.run(["nsenter", "-t", str(self.leader), "-a", "-r", "-w", "env", "-i",
                               "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
                               "LANG=C.UTF-8", "bash", "-c", cmd], capture_output=True, text=True, timeout=timeout)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # nspawn asks the container's systemd to power off
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    reason = _unavailable()
    if reason:
        pytest.skip(reason)
    import platform

    if platform.machine() != "x86_64" or sys.version_info[:2] != (3, 11):
        pytest.skip("the bundle copied in is for x86_64 and Python 3.11 (Debian 12's)")
    tar = _rootfs_tar()
    work = tmp_path_factory.mktemp("nspawn")
    root = work / "root"
    root.mkdir()
    subprocess.run(["tar", "-xf", str(tar), "-C", str(root)], check=True, timeout=300)
    clone = make_clone(tmp_path_factory.mktemp("clone"))
    bundle, doc = make_bundle(tmp_path_factory, "x86_64", clone)
    shutil.copytree(bundle, root / "bundle")
    shutil.copytree(clone, root / "src", symlinks=True)
    (root / "etc/hostname").write_text("companionbox\n")
    c = Container(root, work / "boot.log")
    try:
        deadline = time.monotonic() + 300
        state = ""
        while time.monotonic() < deadline and state not in ("running", "degraded"):
            # "Failed to connect to bus" until the container's systemd listens: asked again
            state = c.sh("systemctl is-system-running --wait", timeout=300).stdout.strip()
            if state not in ("running", "degraded"):
                time.sleep(1)
        assert state in ("running", "degraded"), state + c.sh("systemctl --failed --no-legend").stdout
        c.bundle_doc = doc
        c.clone = clone
        yield c
    finally:
        c.stop()
        # never delete a tree a running container still uses
        if c.proc.poll() is not None and not Path(f"/proc/{c.leader}").exists():
            shutil.rmtree(work, ignore_errors=True)


def _health(c, port: int, path: str = "/healthz", host: str = "127.0.0.1") -> str:
    return c.sh("/opt/companion/venv/bin/python -c \"import http.client as h; c=h.HTTPConnection('127.0.0.1', "
                f"{port}, timeout=60); c.request('GET', '{path}', headers={{'Host': '{host}'}}); "
                "print(c.getresponse().status)\"").stdout.strip()


def _wait_active(c, unit="companion.service", port=8080):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if c.sh(f"systemctl is-active {unit}").stdout.strip() == "active" and _health(c, port) == "200":
            return
        time.sleep(1)
    raise AssertionError(c.sh(f"systemctl status {unit} --no-pager; journalctl -u {unit} --no-pager | tail -30").stdout)


def test_the_installer_under_a_real_systemd(box):
    c = box
    # 1. the bundle, with apt's lists empty as mmdebstrap leaves them: refreshed once, espeak-ng installed
    p = c.sh("/bundle/systemd/install.sh --wheels /bundle")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "apt-get update (a package had no candidate" in p.stdout
    assert "without the voice" not in p.stdout
    assert c.sh("dpkg-query -W -f='${Status}' espeak-ng").stdout == "install ok installed"
    assert "Unpacking" not in p.stdout  # apt's transcript is in its log
    assert "Unpacking" in c.sh("cat /var/log/companion-install-apt.log").stdout
    code = setup_code_of(p.stdout)
    _wait_active(c)
    assert c.sh("systemctl is-enabled companion-backup.timer").stdout.strip() == "enabled"
    assert c.sh("stat -c '%a %U:%G' /etc/default/companion").stdout.strip() == "640 root:companion"
    # port 80 from companion-landing.socket: a phone's connectivity check, answered by the unprivileged service
    assert c.sh("systemctl is-active companion-landing.socket").stdout.strip() == "active"
    assert _health(c, 80, "/generate_204", "connectivitycheck.gstatic.com") == "204"
    assert _health(c, 80, "/healthz") == "200"
    assert code.isdigit()

    # 2. a half-made venv (pip gone, as after a Ctrl-C during python3 -m venv): rebuilt, the service back
    c.sh("rm -f /opt/companion/venv/bin/pip*")
    p = c.sh("/bundle/systemd/install.sh --wheels /bundle --no-apt")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "half-made" in p.stdout
    _wait_active(c)

    # 3. --port on the installed box
    p = c.sh("/bundle/systemd/install.sh --wheels /bundle --no-apt --port 9000")
    assert p.returncode == 0 and "port: 8080 -> 9000" in p.stdout, p.stdout + p.stderr
    _wait_active(c, port=9000)

    # 4. another user's CLI: told the service user's command, no second database; that command works
    p = c.sh("cd /tmp && runuser -u nobody -- /opt/companion/venv/bin/companion token create --role organiser")
    assert p.returncode == 2 and "sudo -u companion env COMPANION_DATA=/var/lib/companion" in p.stderr, p.stderr
    assert c.sh("test -e /tmp/data").returncode != 0
    p = c.sh("cd /var/lib/companion && runuser -u companion -- env COMPANION_DATA=/var/lib/companion "
             "/opt/companion/venv/bin/companion token create --role organiser")
    assert p.returncode == 0 and len(p.stdout.strip().splitlines()[-1]) > 20, p.stderr

    # 5. a checkout with --wheels installs the checkout, built offline with the bundle's build requirements
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=c.clone, capture_output=True, text=True,
                          check=True).stdout.strip()
    p = c.sh("/src/systemd/install.sh --wheels /bundle --no-apt")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "building companion from a copy of /src" in p.stdout
    version = c.sh("/opt/companion/venv/bin/companion --version").stdout
    # this root has no git: the wheel says so (with git, the commit: tests/test_systemd.py builds one)
    has_git = c.sh("command -v git").returncode == 0
    assert (f"(built from commit {head}" if has_git else "(built from commit unknown (not a git checkout))") \
        in version, version
    _wait_active(c, port=9000)

    # 6. --uninstall: nothing left in systemctl --failed (a backup that failed, first)
    c.sh("sed -i 's#^COMPANION_BACKUP_DIR=.*#COMPANION_BACKUP_DIR=/proc/no-backups-here#' /etc/default/companion")
    c.sh("systemctl start companion-backup.service")
    assert "companion-backup.service" in c.sh("systemctl --failed --no-legend").stdout
    p = c.sh("/bundle/systemd/install.sh --uninstall")
    assert p.returncode == 0, p.stdout + p.stderr
    failed = c.sh("systemctl --failed --no-legend").stdout
    assert "companion" not in failed, failed
    assert c.sh("test -e /var/lib/companion/companion.db").returncode == 0
    p = c.sh("/bundle/systemd/install.sh --uninstall --purge")
    assert p.returncode == 0, p.stdout + p.stderr
    assert c.sh("test -e /var/lib/companion").returncode != 0
    assert c.sh("id -u companion").returncode != 0
    assert c.sh("test -e /var/lib/systemd/timers/stamp-companion-backup.timer").returncode != 0
