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

Four boots, each bounded in time (each is minutes under TCG: the checks share them):
1. first boot: image_boots, boot_s (power-on to /healthz answering), healthz, what the first boot did; then
   the power cut: the organiser signs in with the setup code the box wrote on its boot partition, two clients
   write over the network, qemu is killed (SIGKILL) in the middle;
2. after the power cut, with no battery clock (qemu's RTC at 2020) and no NTP: every acknowledged write is
   counted (power_cut_acked_lost: how many are missing); the phones are 30 days ahead (the box was off for a
   month): the organiser's phone gives the time at sign-in, a running match clock does not jump;
3. a reboot, the clock behind again, with a newer bundle on a second disk (the USB stick): the update keeps
   the data; the phone's time holds as docs/offline.md promises (the stamps stay, none goes backwards, the
   clock's minutes are kept);
4. a broken bundle on the stick: the previous version keeps running and says so (update_fallback_ok).
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

import pi_hw  # (image/, beside this file)

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
    """The list's pi-check group (systemd/debian-packages.txt; `make pi-check` installs it first), and its
    pi-check-hw group unless HW=0: which is missing."""
    for raw in (REPO / "systemd" / "debian-packages.txt").read_text().splitlines():
        words = raw.split("#", 1)[0].split()
        if len(words) == 4 and (words[0] == "pi-check" or (HW and words[0] == "pi-check-hw")):
            for tool in words[2].split(","):
                if tool != "-" and shutil.which(tool) is None:
                    return f"no {tool} (apt-get install {words[1]})"
    return None


# -- the machine ----------------------------------------------------------------------------------------------

class Machine:
    def __init__(self, disk: Path, kernel: Path, initrd: Path, cmdline: str, key: Path):
        self.disk, self.kernel, self.initrd, self.cmdline, self.key = disk, kernel, initrd, cmdline, key
        self.proc = self.usb = None
        self.http = self.ssh_port = None
        self.n = 0

    def start(self, name: str, rtc: str | None = None, usb: Path | None = None, dtb: Path | None = None) -> float:
        self.n += 1
        self.name, self.usb = name, usb
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
        if dtb:
            cmd += ["-dtb", str(dtb)]
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

    def put(self, files: list[Path], folder: str) -> None:
        """Copies FILES into FOLDER inside the machine (scp over the forwarded SSH port)."""
        self.ssh(f"mkdir -p {folder}")
        p = subprocess.run(["scp", "-q", "-i", str(self.key), "-P", str(self.ssh_port), "-o", "StrictHostKeyChecking=no",
                            "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "BatchMode=yes",
                            *map(str, files), f"root@127.0.0.1:{folder}/"], capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise RuntimeError(f"scp to {folder}: exit {p.returncode}: {p.stderr.strip()[-300:]}")

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

    def clocked_match(self, players: list[str], label: str) -> tuple[str, dict]:
        """A Richelieu match with its clock, made and started (90 minutes): its id and the start's answer."""
        status, match = self.call("POST", "/api/matches", {"game": "richelieu", "players": players, "label": label,
                                                           "options": {"clock": True}})
        if status != 201:
            raise RuntimeError(f"creating the {label} match: {status} {match}")
        status, started = self.call("POST", f"/api/matches/{match['id']}/events",
                                    {"type": "clock.start", "data": {"limit_minutes": 90}, "expected_seq": 0})
        if status != 201:
            raise RuntimeError(f"starting the clock: {status} {started}")
        return match["id"], started


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
    REPORT["first_boot"] = fb
    save()


def sign_in(m: Machine, phone: Phone, now: str | None = None) -> dict:
    status, body = phone.call("POST", "/api/auth/login", {"pin": PIN, **({"now": now} if now else {})})
    if status != 200:
        raise RuntimeError(f"sign-in: {status} {body}")
    return body


def power_cut(m: Machine) -> None:
    """Boot 1 (the first boot, running): the organiser sets the PIN with the setup code the box wrote, two
    clients write, qemu's process is killed in the middle. Boot 2 (the clock behind: no battery clock): every
    acknowledged write is counted."""
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
        matches.append(body["id"])
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
                errors.append(f"{type(e).__name__}: {e}"[:120])
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
    while sum(map(len, acked.values())) < WRITES_BEFORE_CUT and time.monotonic() - t0 < 180 \
            and any(t.is_alive() for t in threads):
        time.sleep(0.2)
    n_before = sum(map(len, acked.values()))
    writes_s = round(time.monotonic() - t0, 1)
    m.kill()  # the power cut: qemu's process, SIGKILL, while both clients write
    stop.set()
    for t in threads:
        t.join(60)
    n = sum(map(len, acked.values()))
    log(f"power cut: qemu killed after {n_before} acknowledged writes in {writes_s} s "
        f"({n} with those answered as it died); the clients ended with {errors[:2]}")
    m.start("after-power-cut", rtc=RTC_BEHIND)
    boot_s, health = m.wait_healthz()
    out = {"acknowledged": n, "writes_s": writes_s, "clients_ended_with": errors[:4], "boot_s_after": boot_s,
           "rtc_base_after": RTC_BEHIND}
    REPORT["power_cut"] = out
    if boot_s is None:
        out["reason"] = "the box did not answer /healthz after the power cut"
        raise RuntimeError("no /healthz after the power cut")
    m.wait_ssh()
    phone = Phone(m)
    sign_in(m, phone)  # no time given: the box's own clock still
    lost = 0
    kept = {}
    for mid, seqs in acked.items():
        status, doc = phone.call("GET", f"/api/matches/{mid}")
        have = doc.get("seq", 0) if status == 200 else 0
        kept[mid] = have
        lost += sum(1 for s in seqs if s > have)
    REPORT["power_cut_acked_lost"] = lost
    out["stored_after_reboot"] = kept
    out["acknowledged_per_match"] = {mid: len(s) for mid, s in acked.items()}
    out["integrity_check"] = m.ssh("python3 -c \"import sqlite3; print(sqlite3.connect('/var/lib/companion/"
                                   "companion.db').execute('PRAGMA integrity_check').fetchone()[0])\"",
                                   check=False).stdout.strip()
    REPORT["_matches"] = kept
    save()
    log(f"power cut: {lost} acknowledged writes lost; after the reboot: {kept}")


AHEAD = timedelta(days=30)
RTC_BEHIND = "2020-01-01T00:00:00"  # qemu's RTC: the battery clock a Pi does not have
WRITES_BEFORE_CUT = 80


def phone_now() -> datetime:
    """The phones' time: 30 days after the host's, as if the box had been off for a month (a Pi has no battery
    clock: it starts at the time it saved last, systemd-timesyncd's, and has no NTP here)."""
    return datetime.now(timezone.utc) + AHEAD


def _at(s: str | None) -> datetime | None:
    return datetime.fromisoformat(s.replace("Z", "+00:00")) if s else None


def stamped_event(phone: Phone, match_id: str, player: str, seq: int) -> str | None:
    """One event recorded (a player's money, +1, as event ``seq`` + 1): the time the box stamped it with, or
    None when it was not recorded."""
    status, ev = phone.call("POST", f"/api/matches/{match_id}/events",
                            {"type": "track.adjust", "data": {"player": player, "track": "money", "delta": 1},
                             "expected_seq": seq})
    return ev.get("event", {}).get("at") if status == 201 else None


def box_time(m: Machine) -> None:
    """Boot 2 (running, after the power cut; the clock behind, no NTP): a match clock started on the box's
    wrong time; the organiser's phone gives the time at sign-in: the clock does not jump, a new event is
    stamped with the phone's time. Then boot 3 (a reboot, the clock behind again, the newer bundle on the
    stick: see updates): once its update has ended, the stamps are kept, a new event is not stamped before
    them, the running clock's minutes are kept, the next sign-in gives the time again."""
    out = {"rtc_base": RTC_BEHIND}
    REPORT["time_from_phone"] = out
    out["box_clock_before"] = dict(zip(("ntp_synchronised", "utc"), m.ssh(
        "timedatectl show -p NTPSynchronized --value; date -u +%FT%TZ", check=False).stdout.split()))
    phone = Phone(m)
    sign_in(m, phone)
    players = ["Ada", "Bo", "Cy", "Di"]
    # a match whose clock runs on the box's wrong time, before the phone gives the right one
    cid, started = phone.clocked_match(players, "clock")
    t_start = time.monotonic()
    out["clock_started_at"] = started["event"]["at"]
    body = sign_in(m, phone, now_iso(phone_now()))
    out["adopted_at_sign_in"] = body.get("time")
    status, doc = phone.call("GET", f"/api/matches/{cid}")
    clock = (doc.get("view") or {}).get("clock") or {}
    wall = time.monotonic() - t_start
    out["clock_after_adoption"] = clock
    out["clock_wall_s"] = round(wall, 1)
    out["clock_did_not_jump"] = clock.get("elapsed_seconds") is not None and 0 <= clock["elapsed_seconds"] <= wall + 5
    status, match = phone.call("POST", "/api/matches", {"game": "richelieu", "players": players, "label": "time"})
    if status != 201:
        raise RuntimeError(f"creating a match after the adoption: {status} {match}")
    mid = match["id"]
    out["match_created_at"] = match.get("created_at")
    at = out["event_at"] = stamped_event(phone, mid, "Ada", 0)
    stamp_ok = at is not None and abs((_at(at) - phone_now()).total_seconds()) < 300
    out["event_stamped_with_the_phones_time"] = stamp_ok
    save()
    # the reboot: a clean one (the clock match is paused as the server stops), the clock behind again, and the
    # stick with the newer bundle (boot 3 is also the update's: see updates)
    m.shutdown()
    elapsed_at_stop = clock.get("elapsed_seconds", 0) + (time.monotonic() - t_start - wall)
    m.start("reboot-and-update", rtc=RTC_BEHIND, usb=REPORT["_sticks"]["update"])
    boot_s, _ = m.wait_healthz()
    if boot_s is None or not m.wait_ssh():
        raise RuntimeError("no /healthz or SSH after the reboot with the clock behind")
    out["boot_s_after_reboot"] = boot_s
    wait_update(m)
    m.wait_healthz(limit=time.monotonic() - m.t0 + 300)
    out["box_clock_after_reboot"] = m.ssh("date -u +%FT%TZ", check=False).stdout.strip()
    phone = Phone(m)
    sign_in(m, phone)  # no time offered: the box's own (wrong) clock
    at2 = out["event_after_reboot_at"] = stamped_event(phone, mid, "Bo", 1)
    out["history_not_backwards"] = at2 is not None and at is not None and _at(at2) >= _at(at)
    status3, match3 = phone.call("GET", f"/api/matches/{mid}")
    out["first_event_kept"] = status3 == 200 and match3.get("seq") == 2
    status4, doc4 = phone.call("GET", f"/api/matches/{cid}")
    clock2 = (doc4.get("view") or {}).get("clock") or {}
    out["clock_after_reboot"] = clock2
    out["clock_kept_its_minutes"] = (clock2.get("elapsed_seconds") is not None and not clock2.get("running")
                                     and abs(clock2["elapsed_seconds"] - elapsed_at_stop) <= 60)
    body = sign_in(m, Phone(m), now_iso(phone_now()))
    out["adopted_again_after_reboot"] = body.get("time")
    at5 = out["event_after_second_adoption_at"] = stamped_event(phone, mid, "Cy", 2)
    stamp2_ok = at5 is not None and abs((_at(at5) - phone_now()).total_seconds()) < 300
    checks = {"adopted at sign-in": bool(out["adopted_at_sign_in"]), "event stamped with the phone's time": stamp_ok,
              "the clock did not jump": out["clock_did_not_jump"],
              "after the reboot: no stamp before the stored ones": out["history_not_backwards"],
              "after the reboot: the events kept": out["first_event_kept"],
              "after the reboot: the clock's minutes kept": out["clock_kept_its_minutes"],
              "after the reboot: the phone's time adopted again": bool(out["adopted_again_after_reboot"]) and stamp2_ok}
    out["failed"] = [k for k, v in checks.items() if not v]
    REPORT["time_from_phone_holds"] = not out["failed"]
    if out["failed"]:
        REPORT["reasons"]["time_from_phone_holds"] = "; ".join(out["failed"])
    save()


def make_update_bundles() -> tuple[Path, Path, str, str]:
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
    return good, broken, commit, broken_commit


def stick(bundle: Path, name: str) -> Path:
    """A FAT "USB stick" image holding the bundle folder."""
    img = OUT / f"{name}.vfat"
    img.unlink(missing_ok=True)
    mb = int(sum(f.stat().st_size for f in bundle.rglob("*") if f.is_file()) / 2**20) + 64
    sh(["mkfs.vfat", "-n", "STICK", "-C", str(img), str(mb * 1024)])
    sh(["mcopy", "-s", "-i", str(img), str(bundle), "::/"])
    return img




def wait_update(m: Machine, limit: float = 1500) -> str:
    """The update runs after companion has started: its unit's end (bounded)."""
    t0 = time.monotonic()
    state = ""
    while time.monotonic() - t0 < limit:
        state = m.ssh("systemctl show -p ActiveState --value companion-update.service; "
                      "systemctl show -p ExecMainStartTimestampMonotonic --value companion-update.service",
                      check=False).stdout.split()
        # started at least once and not running any more
        if len(state) == 2 and state[0] in ("inactive", "failed") and state[1] != "0":
            return state[0]
        time.sleep(10)
    return f"still {state} after {limit:.0f} s"


def update_said(m: Machine, phone: Phone, match_id: str) -> dict:
    """Where the update's result is said: the boot partition's text, the journal, the organiser's home page and
    the match's TV page (the product's own screens)."""
    said = {}
    said["boot_partition"] = m.ssh("cat /boot/firmware/companion-update.txt", check=False).stdout.replace("\r", "").strip()
    said["journal"] = m.ssh("journalctl -b -u companion-update --no-pager -o cat | tail -n 4",
                            check=False).stdout.strip().splitlines()
    for name, path in (("home_page", "/"), ("tv_page", f"/m/{match_id}/display")):
        req = urllib.request.Request(m.url(path), headers={"Cookie": phone.cookie or "", "Accept-Language": "en"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                html = r.read().decode(errors="replace")
        except OSError as e:
            said[name] = f"{type(e).__name__}: {e}"
            continue
        hit = re.search(r'id="update-notice"[^>]*>(.*?)</', html, re.S)
        said[name] = re.sub(r"\s+", " ", hit.group(1)).strip() if hit else None
    return said


def updates(m: Machine) -> None:
    """Boot 3 (running since box_time: the newer bundle's stick): updated, the data kept, said; boot 4 (the
    broken bundle's stick): it fell back, the previous version runs with the data, said."""
    commit, broken_commit = REPORT["_new_commit"], REPORT["_broken_commit"]
    out = {"old_commit": (REPORT.get("healthz") or {}).get("build"), "new_commit": commit,
           "broken_commit": broken_commit}
    REPORT["update"] = out
    for name, want, running in (("update", "updated", commit), ("broken-update", "fell back", commit)):
        if m.usb != REPORT["_sticks"][name]:
            if m.proc is not None and m.proc.poll() is None:
                m.shutdown()
            m.start(name, usb=REPORT["_sticks"][name])
            if m.wait_healthz()[0] is None or not m.wait_ssh():
                out[name] = {"ok": False, "reason": "no /healthz or SSH"}
                continue
        ended = wait_update(m)
        doc = m.ssh("cat /var/lib/companion-image/update.json", check=False).stdout
        try:
            doc = json.loads(doc)
        except ValueError:
            doc = {"raw": doc[-300:]}
        _, health = m.wait_healthz(limit=time.monotonic() - m.t0 + 300)
        phone = Phone(m)
        sign_in(m, phone)
        seqs = {}
        for mid in REPORT.get("_matches", {}):
            status, match = phone.call("GET", f"/api/matches/{mid}")
            seqs[mid] = match.get("seq") if status == 200 else None
        data_kept = bool(seqs) and seqs == REPORT.get("_matches")
        said = update_said(m, phone, next(iter(seqs), ""))
        r = {"unit_ended": ended, "result": doc.get("result"), "from": doc.get("from"), "to": doc.get("to"),
             "reason": doc.get("reason"), "waited_s": doc.get("waited_s"), "backup": doc.get("backup"),
             "healthz_build": (health or {}).get("build"),
             "data_kept": data_kept, "matches_seq": seqs, "said": said, "took_s": round(time.monotonic() - m.t0, 1)}
        fails = []
        if doc.get("result") != want:
            fails.append(f"result {doc.get('result')!r}, not {want!r}")
        if want == "fell back" and "did not answer /healthz within" in str(doc.get("reason")):
            # a server that exits at once is known from systemd as soon as it fails: not after the whole wait
            fails.append(f"the fallback did not end on the new version's failed starts: {doc.get('reason')!r}")
        if not data_kept:
            fails.append("the power cut's matches changed or are missing")
        if (health or {}).get("build") != running:
            fails.append(f"/healthz says {(health or {}).get('build')}, not {running}")
        if not said["boot_partition"] or not said["tv_page"]:
            fails.append("not said on the boot partition and the TV page")
        r["failed"] = fails
        r["ok"] = not fails
        out[name] = r
        log(f"{name}: {r}")
        save()
    REPORT["update_fallback_ok"] = bool(out.get("update", {}).get("ok") and out.get("broken-update", {}).get("ok"))
    if not REPORT["update_fallback_ok"]:
        REPORT["reasons"]["update_fallback_ok"] = "; ".join(
            f"{k}: {', '.join(out.get(k, {}).get('failed') or [out.get(k, {}).get('reason', 'not run')])}"
            for k in ("update", "broken-update") if not out.get(k, {}).get("ok"))


# -- the hardware, simulated (make pi-check's fifth boot, HW=0 leaves it out; image/pi_hw.py) ------------------

HW = os.environ.get("COMPANION_PI_CHECK_HW", "1") != "0"
HW_KEYS = tuple(k for _, _, keys in pi_hw.STEPS for k in keys)  # each step's keys (image/pi_hw.py)
MACHINE_OPTIONS = ["-cpu", "cortex-a53", "-smp", "2", "-m", "1024", "-accel", "tcg,thread=multi"]


def hardware(m: Machine) -> None:
    """Boot 5: the modules built (once, cached beside the image's tree), the Pi's device tree; the simulated
    chip, then each of pi_hw.STEPS, each on its own (one failing stops no other)."""
    def hw_log(text: str) -> None:
        with open(OUT / "hw-build.log", "a") as f:
            f.write(text + "\n")

    release = REPORT["image"]["kernel"].removeprefix("vmlinuz-")
    t = time.monotonic()
    mods = pi_hw.build_modules(release, Path(os.environ.get("COMPANION_IMAGE_CACHE",
                                                            Path.home() / ".cache" / "companion-image")), hw_log)
    REPORT["hw_modules"] = {"built_or_cached_s": round(time.monotonic() - t, 1),
                            **json.loads((mods["gpio-sim.ko"].parent / "build.json").read_text())}
    dtb = pi_hw.pi_dtb(MACHINE_OPTIONS, OUT / "pi.dtb", hw_log)
    if m.proc is not None and m.proc.poll() is None:
        m.shutdown()
    m.start("hardware", dtb=dtb)
    if m.wait_healthz()[0] is None or not m.wait_ssh():
        raise RuntimeError("no /healthz or SSH in the hardware boot")
    m.put(list(mods.values()), "/root/pi-check-hw")
    for name, step, keys in pi_hw.STEPS:
        t = time.monotonic()
        try:
            step(m, Phone, sign_in, REPORT, log)
        except Exception as e:
            for key in keys:
                if REPORT.get(key) is not True:
                    REPORT[key] = False
                    REPORT["reasons"].setdefault(key, f"{type(e).__name__}: {e}")
            (OUT / f"error-{name}.log").write_text(traceback.format_exc())
            log(f"{name}: failed: {e}")
        REPORT.setdefault("step_s", {})[name] = round(time.monotonic() - t, 1)
        log(f"{name}: {({k: REPORT.get(k) for k in keys})}")
        save()


def main(argv: list[str]) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for f in [*OUT.glob("*.log"), *OUT.glob("*.cmd"), *OUT.glob("*.err"), OUT / "report.json"]:
        f.unlink(missing_ok=True)
    REPORT.clear()
    REPORT.update({"image_boots": False, "boot_s": None, "image_mb": None, "healthz": None,
                   "power_cut_acked_lost": None, "time_from_phone_holds": False, "update_fallback_ok": False,
                   "machine": "qemu-system-aarch64 -M virt -cpu cortex-a53 -smp 2 -m 1024 (TCG)",
                   "started": now_iso(), "reasons": {}})
    for key in HW_KEYS:  # the simulated hardware's keys: not run with HW=0 (docs/pi.md)
        REPORT[key] = False
        if not HW:
            REPORT["reasons"][key] = "not run: HW=0 left the hardware boot out"
    reason = install_tools()
    if reason:
        for key in ("image_boots", "power_cut_acked_lost", "time_from_phone_holds", "update_fallback_ok"):
            REPORT["reasons"][key] = reason
        save()
        print(f"pi-check: {reason}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    m = None
    # (step, its key): each needs the ones before it (the boots are shared: see the module's text)
    steps = [("first_boot", "image_boots"), ("power_cut", "power_cut_acked_lost"),
             ("box_time", "time_from_phone_holds"), ("updates", "update_fallback_ok")]
    if HW:
        steps.append(("hardware", HW_KEYS[0]))
    failed = None
    try:
        m, _ = prepare()
        good, broken, REPORT["_new_commit"], REPORT["_broken_commit"] = make_update_bundles()
        REPORT["_sticks"] = {"update": stick(good, "update"), "broken-update": stick(broken, "broken-update")}
        for name, key in steps:
            if failed:
                REPORT["reasons"].setdefault(key, f"not run: the {failed} step failed before it")
                continue
            if name != "first_boot" and (m.proc is None or m.proc.poll() is not None):
                m.start("again")
                if m.wait_healthz()[0] is None or not m.wait_ssh():
                    raise RuntimeError("the box did not come back")
            t = time.monotonic()
            try:
                globals()[name](m)
            except Exception as e:
                for k in (HW_KEYS if name == "hardware" else (key,)):
                    REPORT["reasons"].setdefault(k, f"{type(e).__name__}: {e}")
                (OUT / f"error-{name}.log").write_text(traceback.format_exc())
                log(f"{name}: failed: {e}")
                if name in ("first_boot", "power_cut"):
                    failed = name  # the later steps need its machine and data
            REPORT.setdefault("step_s", {})[name] = round(time.monotonic() - t, 1)
            save()
    except Exception as e:
        REPORT["reasons"]["prepare"] = f"{type(e).__name__}: {e}"
        (OUT / "error-prepare.log").write_text(traceback.format_exc())
        log(f"prepare: failed: {e}")
    finally:
        if m is not None:
            m.kill()
            REPORT["boots"] = m.n
        for k in [k for k in REPORT if k.startswith("_")]:
            REPORT.pop(k)
        REPORT["total_s"] = round(time.monotonic() - t0, 1)
        save()
    ok = (REPORT["image_boots"] and REPORT["power_cut_acked_lost"] == 0 and REPORT["time_from_phone_holds"]
          and REPORT["update_fallback_ok"] and (not HW or all(REPORT[k] is True for k in HW_KEYS)))
    print(json.dumps({**{k: REPORT[k] for k in ("image_boots", "boot_s", "image_mb", "power_cut_acked_lost",
                                             "time_from_phone_holds", "update_fallback_ok", "total_s")},
                      **({k: REPORT[k] for k in HW_KEYS} if HW else {})}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
