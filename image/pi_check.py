"""`make pi-check`: the image `make image` made, booted in qemu-system-aarch64, checked from the host and from
inside; build/pi-check/report.json and the log of every step beside it (docs/pi.md, "Checking the image").

The machine: qemu's `virt` board with a Cortex-A53 (the Pi 3's and Zero 2 W's core), 2 cores, 1 GiB, under TCG
(KVM runs x86 guests only here), the image's own kernel and initrd taken from its boot partition, its
cmdline.txt with the serial console added. The raspi device trees are for real hardware: qemu's virt board makes
its own, and its disk is virtio (the kernel's initrd has the driver), not the Pi's SD controller. The disk is a
copy of the image file, as an owner flashes it, with two files put on its boot partition as an owner would (an
SSH key, so that the check can look inside; a companion.txt) and 2 GiB more behind it (the card's rest, which the
first boot grows into). The network is qemu's user network with restrict=on: the box reaches nothing (no NTP, no
mirror); the host reaches its port 8080 and 22 through forwarded loopback ports.

Boots, each bounded in time:
1. first boot: image_boots, boot_s (power-on to /healthz answering), healthz, what the first boot did;
2. power cut: the organiser signs in with the setup code the box wrote on its boot partition; two clients write
   over the network; qemu is killed (SIGKILL) in the middle; after the next boot every acknowledged write is
   counted (power_cut_acked_lost: how many are missing);
3. the box's time: no battery clock (qemu's RTC at 2020), no NTP, and the phones 30 days ahead (the box was
   off for a month); the organiser's phone gives the time at sign-in, a running match clock does not jump;
   then a reboot (time_from_phone_holds);
4. updates: a newer bundle on a second disk (the USB stick), then a broken one (update_fallback_ok).
A check that cannot run says why (false, with a reason).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
IMAGE = Path(os.environ.get("COMPANION_IMAGE_BUILD", REPO / "build" / "image")) / "companion-pi.img"
OUT = Path(os.environ.get("COMPANION_PI_CHECK", REPO / "build" / "pi-check"))
BOOT_OFFSET = 8192 * 512  # the boot partition's start (image/build.py's partition table)
BOOT_LIMIT_S = 1200  # power-on to /healthz, at most (TCG: the first boot does the most)
PIN = "482916"
CHECK_SETTINGS = "# the check's own settings (make pi-check)\ntimezone = Europe/Rome\nlanguage = it\n" \
                 "hotspot_name = companion-check\nhotspot_password = check-password-1\n"
REPORT: dict = {}


def log(msg: str) -> None:
    line = f"{time.strftime('%H:%M:%S')} {msg}"
    print(line, flush=True)
    with open(OUT / "steps.log", "a") as f:
        f.write(line + "\n")


def save() -> None:
    (OUT / "report.json").write_text(json.dumps(REPORT, indent=2, default=str) + "\n")


def sh(cmd: list[str], check: bool = True, **kw) -> subprocess.CompletedProcess:
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])}: exit {p.returncode}: {(p.stderr or p.stdout).strip()[-400:]}")
    return p


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def install_tools() -> str | None:
    """The list's pi-check group (systemd/debian-packages.txt; `make pi-check` installs it first): which is
    missing."""
    for raw in (REPO / "systemd" / "debian-packages.txt").read_text().splitlines():
        words = raw.split("#", 1)[0].split()
        if len(words) == 4 and words[0] == "pi-check":
            for tool in words[2].split(","):
                if tool != "-" and shutil.which(tool) is None:
                    return f"no {tool} (apt-get install {words[1]})"
    return None


# -- the machine ----------------------------------------------------------------------------------------------

class Machine:
    def __init__(self, disk: Path, kernel: Path, initrd: Path, cmdline: str, key: Path):
        self.disk, self.kernel, self.initrd, self.cmdline, self.key = disk, kernel, initrd, cmdline, key
        self.proc = None
        self.http = self.ssh_port = None
        self.n = 0

    def start(self, name: str, rtc: str | None = None, usb: Path | None = None) -> float:
        self.n += 1
        self.name = name
        self.http, self.ssh_port = free_port(), free_port()
        self.serial = OUT / f"serial-{self.n}-{name}.log"
        cmd = ["nice", "-n", "10", "qemu-system-aarch64", "-M", "virt", "-cpu", "cortex-a53", "-smp", "2",
               "-m", "1024", "-accel", "tcg,thread=multi", "-kernel", str(self.kernel), "-initrd", str(self.initrd),
               "-append", self.cmdline, "-drive", f"file={self.disk},format=raw,if=virtio,cache=writeback",
               "-netdev", f"user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:{self.http}-:8080,"
                          f"hostfwd=tcp:127.0.0.1:{self.ssh_port}-:22",
               "-device", "virtio-net-pci,netdev=n0,romfile=",  # (no PXE ROM: the kernel is given)
               "-display", "none", "-monitor", "none",
               "-serial", f"file:{self.serial}", "-no-reboot"]
        if rtc:
            cmd += ["-rtc", f"base={rtc}"]
        if usb:
            cmd += ["-drive", f"file={usb},format=raw,if=virtio,readonly=on"]
        (OUT / f"qemu-{self.n}-{name}.cmd").write_text(" ".join(cmd) + "\n")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(OUT / f"qemu-{self.n}-{name}.err", "w"),
                                     start_new_session=True)
        log(f"boot {self.n} ({name}): qemu pid {self.proc.pid}, http 127.0.0.1:{self.http}, ssh {self.ssh_port}")
        return self.t0

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.http}{path}"

    def wait_healthz(self, limit: float = BOOT_LIMIT_S) -> tuple[float | None, dict | None]:
        end = self.t0 + limit
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return None, None
            try:
                with urllib.request.urlopen(self.url("/healthz"), timeout=10) as r:
                    if r.status == 200:
                        return round(time.monotonic() - self.t0, 1), json.loads(r.read())
            except (OSError, ValueError):
                pass
            time.sleep(2)
        return None, None

    def ssh(self, command: str, timeout: int = 300, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run(["ssh", "-i", str(self.key), "-p", str(self.ssh_port), "-o", "StrictHostKeyChecking=no",
                            "-o", "UserKnownHostsFile=/dev/null", "-o", "ConnectTimeout=20", "-o", "LogLevel=ERROR",
                            "-o", "BatchMode=yes", "root@127.0.0.1", command],
                           capture_output=True, text=True, timeout=timeout)
        with open(OUT / f"ssh-{self.n}-{self.name}.log", "a") as f:
            f.write(f"$ {command}\n{p.stdout}{p.stderr}(exit {p.returncode})\n")
        if check and p.returncode != 0:
            raise RuntimeError(f"ssh {command[:60]!r}: exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}")
        return p

    def wait_ssh(self, limit: float = 300) -> bool:
        end = time.monotonic() + limit
        while time.monotonic() < end:
            if self.ssh("true", timeout=60, check=False).returncode == 0:
                return True
            time.sleep(3)
        return False

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def shutdown(self, limit: float = 240) -> bool:
        """A clean power-off from inside (-no-reboot: qemu exits); killed if it takes longer than LIMIT."""
        self.ssh("systemctl poweroff", check=False, timeout=60)
        try:
            self.proc.wait(limit)
            return True
        except subprocess.TimeoutExpired:
            self.kill()
            return False


# -- HTTP as a phone ---------------------------------------------------------------------------------------

class Phone:
    def __init__(self, m: Machine):
        self.m, self.cookie = m, None

    def call(self, method: str, path: str, body: dict | None = None, timeout: float = 60) -> tuple[int, dict]:
        origin = f"http://127.0.0.1:{self.m.http}"
        headers = {"Origin": origin, "Content-Type": "application/json", "Accept": "application/json"}
        if self.cookie:
            headers["Cookie"] = self.cookie
        req = urllib.request.Request(self.m.url(path), method=method, headers=headers,
                                     data=json.dumps(body).encode() if body is not None else None)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, raw, hdrs = r.status, r.read(), r.headers
        except urllib.error.HTTPError as e:
            status, raw, hdrs = e.code, e.read(), e.headers
        for c in hdrs.get_all("Set-Cookie") or []:
            self.cookie = c.split(";", 1)[0]
        try:
            return status, json.loads(raw or b"null")
        except ValueError:
            return status, {"raw": raw[:200].decode(errors="replace")}


def now_iso(dt: datetime | None = None) -> str:
    return (dt or datetime.now(timezone.utc)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# -- the steps -------------------------------------------------------------------------------------------

def prepare() -> tuple[Machine, dict]:
    if not IMAGE.exists():
        raise RuntimeError(f"no image at {IMAGE}: make image")
    disk = OUT / "disk.img"
    disk.unlink(missing_ok=True)
    sh(["cp", "--sparse=always", str(IMAGE), str(disk)])
    key = OUT / "check-key"
    for f in (key, key.with_suffix(".pub")):
        f.unlink(missing_ok=True)
    sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "pi-check", "-f", str(key)])
    fat = f"{disk}@@{BOOT_OFFSET}"
    sh(["mcopy", "-o", "-i", fat, str(key.with_suffix(".pub")), "::authorized_keys"])
    settings = OUT / "companion.txt"
    settings.write_text(CHECK_SETTINGS)
    sh(["mcopy", "-o", "-i", fat, str(settings), "::companion.txt"])
    listing = sh(["mdir", "-b", "-i", fat, "::/"]).stdout.split()
    names = [Path(x).name for x in listing]
    kernels = sorted(n for n in names if n.startswith("vmlinuz-"))
    initrds = sorted(n for n in names if n.startswith("initrd.img-"))
    if not kernels or not initrds:
        raise RuntimeError(f"no kernel or initrd on the boot partition: {names}")
    kernel, initrd = OUT / "vmlinuz", OUT / "initrd.img"
    sh(["mcopy", "-o", "-n", "-i", fat, f"::{kernels[-1]}", str(kernel)])
    sh(["mcopy", "-o", "-n", "-i", fat, f"::{initrds[-1]}", str(initrd)])
    cmdline = sh(["mtype", "-i", fat, "::cmdline.txt"]).stdout.strip()
    config = sh(["mtype", "-i", fat, "::config.txt"]).stdout
    # the Pi's consoles (tty0, the Pi's UART) become the virt board's serial port
    boot_cmdline = " ".join(w for w in cmdline.split() if not w.startswith("console=")) + " console=ttyAMA0"
    image_mb = round(IMAGE.stat().st_size / 2**20)
    sh(["truncate", "-s", f"+2G", str(disk)])
    dtbs = sorted(n for n in names if n.endswith(".dtb"))
    info = {"kernel": kernels[-1], "initrd": initrds[-1], "cmdline_txt": cmdline, "qemu_cmdline": boot_cmdline,
            "dtbs_on_boot_partition": dtbs, "config_txt_kernel": re.findall(r"^kernel=.*$", config, re.M)}
    REPORT["image_mb"] = image_mb
    REPORT["image"] = info
    return Machine(disk, kernel, initrd, boot_cmdline, key), info


def first_boot(m: Machine) -> None:
    m.start("first-boot")
    boot_s, health = m.wait_healthz()
    REPORT["image_boots"] = boot_s is not None
    REPORT["boot_s"] = boot_s
    REPORT["healthz"] = health
    save()
    if boot_s is None:
        raise RuntimeError(f"no /healthz within {BOOT_LIMIT_S} s (serial log: {m.serial.name})")
    log(f"first boot: /healthz after {boot_s} s: {health}")
    fb = {}
    fb["ssh_with_the_key_on_the_boot_partition"] = m.wait_ssh()
    if fb["ssh_with_the_key_on_the_boot_partition"]:
        m.ssh("systemctl is-active companion-firstboot.service || systemctl status companion-firstboot.service",
              check=False)
        setup = m.ssh("cat /boot/firmware/companion-setup.txt", check=False).stdout
        (OUT / "companion-setup.txt").write_text(setup)
        code = re.search(r"Organiser's setup code: (\S+)", setup)
        fb["setup_code_on_the_boot_partition"] = bool(code)
        fb["setup_code_on_the_console"] = bool(code) and code.group(1) in m.serial.read_text(errors="replace")
        fb["setup_file_lines"] = setup.replace("\r", "").splitlines()[:12]
        REPORT["_setup_code"] = code.group(1) if code else None
        df = m.ssh("df -B1M --output=size / | tail -1; lsblk -bno SIZE /dev/vda", check=False).stdout.split()
        fb["root_fs_mb"] = int(df[0]) if df else None
        fb["root_grown"] = bool(df) and int(df[0]) > REPORT["image_mb"]  # the image's root < the whole image
        fb["timezone"] = m.ssh("readlink /etc/localtime; date +%Z", check=False).stdout.split()
        fb["language_in_settings"] = "COMPANION_LANGUAGE=it" in m.ssh("cat /etc/default/companion", check=False).stdout
        fb["hotspot"] = [ln for ln in setup.replace("\r", "").splitlines() if "Wi-Fi" in ln][:2]
        fb["ssh_host_keys_made_at_first_boot"] = m.ssh("ls /etc/ssh/ssh_host_ed25519_key.pub", check=False).returncode == 0
        fb["machine_id"] = m.ssh("cat /etc/machine-id", check=False).stdout.strip()
        fb["failed_units"] = m.ssh("systemctl --failed --no-legend --plain | awk '{print $1}'", check=False).stdout.split()
        # the check's own setting: the update's wait for the new version, shorter than the owner's default
        m.ssh("echo COMPANION_UPDATE_WAIT=240 >/etc/default/companion-update", check=False)
    status, html = Phone(m).call("GET", "/display")
    REPORT["first_boot"] = fb
    save()


def sign_in(m: Machine, phone: Phone, now: str | None = None) -> dict:
    status, body = phone.call("POST", "/api/auth/login", {"pin": PIN, **({"now": now} if now else {})})
    if status != 200:
        raise RuntimeError(f"sign-in: {status} {body}")
    return body


def power_cut(m: Machine) -> None:
    org = Phone(m)
    code = REPORT.get("_setup_code")
    if not code:
        raise RuntimeError("no setup code from the first boot")
    status, body = org.call("POST", "/api/auth/pin", {"setup_code": code, "pin": PIN})
    REPORT["setup_code_sets_the_pin"] = status == 200
    if status != 200:
        raise RuntimeError(f"setting the PIN with the setup code: {status} {body}")
    players = ["Ada", "Bo", "Cy", "Di"]
    matches = []
    for i in range(2):
        status, body = org.call("POST", "/api/matches", {"game": "richelieu", "players": players,
                                                         "label": f"power cut {i}"})
        if status != 201:
            raise RuntimeError(f"creating a match: {status} {body}")
        matches.append(body.get("id") or body.get("match", {}).get("id"))
    acked: dict[str, list[int]] = {mid: [] for mid in matches}
    errors: list[str] = []
    stop = threading.Event()

    def writer(mid: str) -> None:
        phone = Phone(m)
        phone.cookie = org.cookie
        seq = 0
        i = 0
        while not stop.is_set():
            body = {"type": "track.adjust", "data": {"player": players[i % 4], "track": "money", "delta": 1},
                    "expected_seq": seq}
            try:
                status, resp = phone.call("POST", f"/api/matches/{mid}/events", body, timeout=30)
            except OSError as e:  # the machine is gone: not acknowledged
                errors.append(f"{type(e).__name__}")
                return
            if status == 201:
                seq = resp["event"]["seq"]
                acked[mid].append(seq)
                i += 1
            else:
                errors.append(f"{status} {str(resp)[:100]}")
                return

    threads = [threading.Thread(target=writer, args=(mid,), daemon=True) for mid in matches]
    for t in threads:
        t.start()
    t0 = time.monotonic()
    while sum(map(len, acked.values())) < 60 and time.monotonic() - t0 < 180 and any(t.is_alive() for t in threads):
        time.sleep(0.2)
    n_before = sum(map(len, acked.values()))
    m.kill()  # the power cut: qemu's process, SIGKILL, while both clients write
    stop.set()
    for t in threads:
        t.join(60)
    n = sum(map(len, acked.values()))
    log(f"power cut: qemu killed after {n_before} acknowledged writes ({n} with those answered as it died)")
    m.start("after-power-cut")
    boot_s, health = m.wait_healthz()
    if boot_s is None:
        REPORT["power_cut_acked_lost"] = None
        REPORT["power_cut"] = {"reason": "the box did not answer /healthz after the power cut"}
        raise RuntimeError("no /healthz after the power cut")
    phone = Phone(m)
    sign_in(m, phone)
    lost = 0
    kept = {}
    for mid, seqs in acked.items():
        status, doc = phone.call("GET", f"/api/matches/{mid}")
        have = doc.get("seq", 0) if status == 200 else 0
        kept[mid] = have
        lost += sum(1 for s in seqs if s > have)
    REPORT["power_cut_acked_lost"] = lost
    REPORT["power_cut"] = {"acknowledged": n, "stored_after_reboot": kept, "clients_ended_with": errors[:4],
                           "boot_s_after": boot_s}
    REPORT["_matches"] = matches
    save()
    log(f"power cut: {lost} acknowledged writes lost; after the reboot: {kept}")


AHEAD = timedelta(days=30)


def phone_now() -> datetime:
    """The phones' time: 30 days after the host's, as if the box had been off for a month (a Pi has no battery
    clock: it starts at the time it saved last, systemd-timesyncd's, and has no NTP here)."""
    return datetime.now(timezone.utc) + AHEAD


def box_time(m: Machine) -> None:
    """No battery clock (qemu's RTC set to 2020), no NTP, off for a month: the organiser's phone gives the time
    at sign-in; a running match clock does not jump; then a reboot."""
    m.shutdown()
    rtc = "2020-01-01T00:00:00"
    m.start("clock-behind", rtc=rtc)
    boot_s, _ = m.wait_healthz()
    if boot_s is None:
        raise RuntimeError("no /healthz with the clock behind")
    out = {"rtc_base": rtc, "boot_s": boot_s}
    phone = Phone(m)
    synced = m.ssh("timedatectl show -p NTPSynchronized --value; date -u +%FT%TZ", check=False).stdout.split()
    out["box_clock_before"] = synced
    players = ["Ada", "Bo", "Cy", "Di"]
    # a match whose clock runs on the box's wrong time, before the phone gives the right one
    sign_in(m, phone)
    status, clocked = phone.call("POST", "/api/matches", {"game": "richelieu", "players": players, "label": "clock",
                                                          "options": {"clock": True}})
    cid = clocked.get("id")
    phone.call("POST", f"/api/matches/{cid}/events", {"type": "clock.start", "data": {"limit_minutes": 90},
                                                      "expected_seq": 0})
    t_start = time.monotonic()
    body = sign_in(m, phone, now_iso(phone_now()))
    out["adopted_at_sign_in"] = body.get("time")
    status, doc = phone.call("GET", f"/api/matches/{cid}")
    clock = (doc.get("view") or {}).get("clock") or {}
    out["clock_after_adoption"] = clock
    wall = time.monotonic() - t_start
    out["clock_did_not_jump"] = clock.get("elapsed_seconds") is not None and clock["elapsed_seconds"] <= wall + 5
    players = ["Ada", "Bo", "Cy", "Di"]
    status, match = phone.call("POST", "/api/matches", {"game": "richelieu", "players": players, "label": "time"})
    mid = match.get("id")
    status, ev = phone.call("POST", f"/api/matches/{mid}/events",
                            {"type": "track.adjust", "data": {"player": "Ada", "track": "money", "delta": 1},
                             "expected_seq": 0})
    at = ev.get("event", {}).get("at") if status == 201 else None
    out["event_at"] = at
    stamp_ok = at is not None and abs((datetime.fromisoformat(at.replace("Z", "+00:00")) -
                                       phone_now()).total_seconds()) < 300
    out["event_stamped_with_the_phones_time"] = stamp_ok
    m.shutdown()
    m.start("clock-behind-again", rtc=rtc)
    boot_s, _ = m.wait_healthz()
    if boot_s is None:
        raise RuntimeError("no /healthz after the reboot with the clock behind")
    phone = Phone(m)
    sign_in(m, phone)  # no time offered: the box's own (wrong) clock
    status, doc = phone.call("GET", f"/api/matches/{mid}/events") if mid else (0, {})
    status2, ev2 = phone.call("POST", f"/api/matches/{mid}/events",
                              {"type": "track.adjust", "data": {"player": "Bo", "track": "money", "delta": 1},
                               "expected_seq": 1})
    at2 = ev2.get("event", {}).get("at") if status2 == 201 else None
    out["event_after_reboot_at"] = at2
    out["history_not_backwards"] = at2 is not None and at is not None and at2 >= at
    status3, match3 = phone.call("GET", f"/api/matches/{mid}")
    out["first_event_kept"] = status3 == 200 and match3.get("seq") == 2
    body = sign_in(m, Phone(m), now_iso(phone_now()))
    out["adopted_again_after_reboot"] = body.get("time")
    REPORT["time_from_phone_holds"] = bool(out["adopted_at_sign_in"] and stamp_ok and out["history_not_backwards"]
                                           and out["first_event_kept"] and out["adopted_again_after_reboot"]
                                           and out["clock_did_not_jump"])
    REPORT["time_from_phone"] = out
    save()


def make_update_bundles() -> tuple[Path, Path, str]:
    """A newer bundle (this checkout, one commit on) and a broken one (its companion does not start)."""
    work = OUT / "bundles"
    if work.exists():
        shutil.rmtree(work)
    clone = work / "clone"
    sh(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)])
    git = ["git", "-C", str(clone), "-c", "user.name=pi-check", "-c", "user.email=pi-check@example.org"]
    sh([*git, "commit", "-q", "--allow-empty", "-m", "pi-check: a newer version"])
    good = work / "companion-bundle"
    p = sh([sys.executable, "-m", "companion", "bundle", "--for", "aarch64", "--source", str(clone), str(good)],
           timeout=900)
    commit = sh([*git, "rev-parse", "--short=12", "HEAD"]).stdout.strip()
    broken = work / "broken" / "companion-bundle"
    shutil.copytree(good, broken)
    (wheel,) = broken.glob("companion-*.whl")
    tmp = wheel.with_suffix(".tmp")
    sh([*git, "commit", "-q", "--allow-empty", "-m", "pi-check: a broken version"])
    broken_commit = sh([*git, "rev-parse", "--short=12", "HEAD"]).stdout.strip()
    with zipfile.ZipFile(wheel) as zin, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "companion/__main__.py":
                data = b"raise SystemExit('pi-check: a broken version')\n" + data
            if item.filename == "companion/build_info.py":
                data = re.sub(rb'COMMIT = "[^"]+"', f'COMMIT = "{broken_commit}"'.encode(), data)
            if item.filename.endswith(".dist-info/RECORD"):
                data = b"\n".join(ln for ln in data.split(b"\n") if not ln.startswith((b"companion/__main__.py",
                                                                                       b"companion/build_info.py")))
            zout.writestr(item, data)
    tmp.replace(wheel)
    return good, broken, commit


def stick(bundle: Path, name: str) -> Path:
    """A FAT "USB stick" image holding the bundle folder."""
    img = OUT / f"{name}.vfat"
    img.unlink(missing_ok=True)
    mb = int(sum(f.stat().st_size for f in bundle.rglob("*") if f.is_file()) / 2**20) + 64
    sh(["mkfs.vfat", "-n", "STICK", "-C", str(img), str(mb * 1024)])
    sh(["mcopy", "-s", "-i", str(img), str(bundle), "::/"])
    return img


def updates(m: Machine) -> None:
    good, broken, commit = make_update_bundles()
    out = {"new_commit": commit}
    m.shutdown()
    before = REPORT.get("healthz", {}) or {}
    out["old_commit"] = before.get("build")
    for name, bundle, want in (("update", good, "updated"), ("broken-update", broken, "fell back")):
        m.start(name, usb=stick(bundle, name))
        boot_s, _ = m.wait_healthz()
        if boot_s is None or not m.wait_ssh():
            out[name] = {"reason": "no /healthz or SSH"}
            continue
        # the update runs after companion has started: wait for it to end (bounded)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1500:
            state = m.ssh("systemctl show -p ActiveState --value companion-update.service", check=False).stdout.strip()
            if state in ("inactive", "failed"):
                break
            time.sleep(10)
        doc = m.ssh("cat /var/lib/companion-image/update.json", check=False).stdout
        try:
            doc = json.loads(doc)
        except ValueError:
            doc = {"raw": doc[-300:]}
        _, health = m.wait_healthz(limit=time.monotonic() - m.t0 + 300)
        phone = Phone(m)
        sign_in(m, phone)
        status, matches = phone.call("GET", "/api/matches")
        ids = {x.get("id") for x in (matches if isinstance(matches, list) else matches.get("matches", []))}
        data_kept = all(mid in ids for mid in REPORT.get("_matches", []))
        said = m.ssh("cat /boot/firmware/companion-update.txt; journalctl -b -u companion-update --no-pager | tail -n 5",
                     check=False).stdout
        out[name] = {"result": doc.get("result"), "reason": doc.get("reason"), "healthz_build": (health or {}).get("build"),
                     "data_kept": data_kept, "said": said.replace("\r", "").strip().splitlines()[:6],
                     "took_s": round(time.monotonic() - m.t0, 1)}
        ok = doc.get("result") == want and data_kept and (health or {}).get("build") == commit
        out[name]["ok"] = ok
        log(f"{name}: {out[name]}")
        REPORT["update"] = out
        save()
        m.shutdown()
    REPORT["update_fallback_ok"] = bool(out.get("update", {}).get("ok") and out.get("broken-update", {}).get("ok"))
    REPORT["update"] = out


def main(argv: list[str]) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for f in OUT.glob("*.log"):
        f.unlink()
    REPORT.clear()
    REPORT.update({"image_boots": False, "boot_s": None, "image_mb": None, "healthz": None,
                   "power_cut_acked_lost": None, "time_from_phone_holds": False, "update_fallback_ok": False,
                   "machine": "qemu-system-aarch64 -M virt -cpu cortex-a53 -smp 2 -m 1024 (TCG)",
                   "started": now_iso(), "reasons": {}})
    reason = install_tools()
    if reason:
        REPORT["reasons"]["all"] = reason
        save()
        print(f"pi-check: {reason}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    m = None
    steps = [("prepare", None), ("first_boot", "image_boots"), ("power_cut", "power_cut_acked_lost"),
             ("box_time", "time_from_phone_holds"), ("updates", "update_fallback_ok")]
    only = set(argv)
    try:
        m, _ = prepare()
        for name, key in steps[1:]:
            if only and name not in only and name != "first_boot":
                continue
            if m.proc is None or m.proc.poll() is not None:
                if name != "first_boot":
                    m.start("again")
                    if m.wait_healthz()[0] is None:
                        raise RuntimeError("the box did not come back")
                    m.wait_ssh()
            t = time.monotonic()
            try:
                globals()[name](m)
            except Exception as e:
                REPORT["reasons"][key] = f"{type(e).__name__}: {e}"
                (OUT / f"error-{name}.log").write_text(traceback.format_exc())
                log(f"{name}: failed: {e}")
                if name == "first_boot":
                    break
            REPORT.setdefault("step_s", {})[name] = round(time.monotonic() - t, 1)
            save()
    except Exception as e:
        REPORT["reasons"]["prepare"] = f"{type(e).__name__}: {e}"
        (OUT / "error-prepare.log").write_text(traceback.format_exc())
    finally:
        if m is not None:
            m.kill()
        REPORT.pop("_setup_code", None)
        REPORT.pop("_matches", None)
        REPORT["total_s"] = round(time.monotonic() - t0, 1)
        save()
    ok = (REPORT["image_boots"] and REPORT["power_cut_acked_lost"] == 0 and REPORT["time_from_phone_holds"]
          and REPORT["update_fallback_ok"])
    print(json.dumps({k: REPORT[k] for k in ("image_boots", "boot_s", "image_mb", "power_cut_acked_lost",
                                             "time_from_phone_holds", "update_fallback_ok")}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
