#!/usr/bin/python3
"""The image's offline update (companion-update.service: at every boot, and when a USB stick is plugged in;
docs/pi.md, "Updating without a network").

A bundle (`companion bundle --for aarch64 DIR`) copied to the boot partition or onto a USB stick, as the folder
itself or one folder down, is installed when its companion was built from another commit than the running one
and has not failed here before:

1. companion.service stops (every acknowledged write is in the database already: SQLite, synchronous), a
   backup is made (`companion backup`, into the data's backups/ folder, by the running version);
2. the running version's venv is moved aside (venv.prev) with its unit files copied aside, and the bundle's
   own install.sh installs the new one (`--wheels DIR --no-apt --no-start`: pip --no-index into a fresh venv;
   the data in /var/lib/companion and /etc/default/companion are kept as they are);
3. companion.service starts; the new version must answer GET /healthz with the bundle's commit. The wait ends
   as soon as it does, or as soon as systemd says it will not: the unit failed (a refused start, its start
   limit), or it failed to start RESTARTS_ALLOWED + 1 times (Restart=on-failure restarts it for ever); and at
   the latest after COMPANION_UPDATE_WAIT seconds (default 300: a server that hangs without answering);
4. if it does not (install.sh failed, the server does not start or does not answer), the new venv is removed,
   the previous one and its unit files put back, and the previous version starts again: the update "fell
   back", and that commit is not tried again.

The result is written, in words, to companion-update.txt on the boot partition, to the console and the journal,
as JSON to /var/lib/companion-image/update.json, and beside the database (last-update.json, with this boot's id):
companion's home page (organisers) and its TV page say it until the box restarts. Standard library only: it runs with the system's Python,
never from the venv it replaces.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

PREFIX = Path(os.environ.get("COMPANION_PREFIX", "/opt/companion"))
STATE = Path(os.environ.get("COMPANION_IMAGE_STATE", "/var/lib/companion-image"))
BOOT = Path(os.environ.get("COMPANION_BOOT_DIR", "/boot/firmware"))
UNIT_DIR = Path(os.environ.get("COMPANION_UNIT_DIR", "/etc/systemd/system"))
ETC = Path(os.environ.get("COMPANION_ETC_DIR", "/etc/default"))
MOUNTS = Path(os.environ.get("COMPANION_UPDATE_MOUNTS", "/run/companion-update"))
DATA = os.environ.get("COMPANION_DATA", "/var/lib/companion")
UPDATE_STATUS = "last-update.json"  # companion/storage/db.py reads it (the home page, the TV page)
MACHINE = "aarch64"
UNITS = ("companion.service", "companion-backup.service", "companion-backup.timer", "companion-replica.service",
         "companion-landing.socket", "companion-kiosk.service")
# the new version's failed starts the update lets systemd retry (Restart=on-failure) before it goes back: one
# more is a version that does not start, not a slow one (a slow one is waited for, up to COMPANION_UPDATE_WAIT)
RESTARTS_ALLOWED = 2


def wheel_commit(wheel: Path) -> str | None:
    """The commit a companion wheel was built from (its companion/build_info.py, written by build-wheel.sh)."""
    try:
        with zipfile.ZipFile(wheel) as z:
            text = z.read("companion/build_info.py").decode()
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    m = re.search(r'COMMIT = "([^"]+)"', text)
    return m.group(1) if m else None


def read_bundle(d: Path) -> dict | None:
    """A bundle folder for this box (BUNDLE.txt says aarch64), or None."""
    try:
        first = (d / "BUNDLE.txt").read_text(errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith(f"companion offline bundle for {MACHINE} "):
        return None
    wheels = sorted(d.glob("companion-*.whl"))
    if len(wheels) != 1 or not (d / "systemd" / "install.sh").is_file():
        return None
    return {"dir": str(d), "wheel": wheels[0].name, "commit": wheel_commit(wheels[0])}


def find_bundles(roots: list[Path]) -> list[dict]:
    """The bundles in each root and one folder down, in the roots' order, then by name."""
    out = []
    for r in roots:
        if not r.is_dir():
            continue
        for d in [r] + sorted(p for p in r.iterdir() if p.is_dir()):
            b = read_bundle(d)
            if b is not None:
                out.append(b)
    return out


def choose(bundles: list[dict], installed: str | None, failed: list[str]) -> tuple[dict | None, str]:
    """The bundle to install, and why (or why none): another commit than the running one, not one that failed
    here before, and a wheel that says which commit it is."""
    if not bundles:
        return None, "no bundle found"
    said = []
    for b in bundles:
        if b["commit"] is None:
            said.append(f"{b['dir']}: its wheel says no commit (not made by companion bundle)")
        elif b["commit"] == installed:
            said.append(f"{b['dir']}: already running ({b['commit']})")
        elif b["commit"] in failed:
            said.append(f"{b['dir']}: {b['commit']} failed to start here before; not tried again")
        else:
            return b, f"{b['dir']}: {installed or 'unknown'} -> {b['commit']}"
    return None, "; ".join(said)


def installed_commit(prefix: Path = PREFIX) -> str | None:
    for f in sorted((prefix / "venv" / "lib").glob("python3*/site-packages/companion/build_info.py")):
        m = re.search(r'COMMIT = "([^"]+)"', f.read_text())
        if m:
            return m.group(1)
    return None


def port_of(etc: Path = ETC) -> int:
    try:
        m = re.search(r"--port[ =](\d+)", (etc / "companion").read_text())
    except OSError:
        m = None
    return int(m.group(1)) if m else 8080


def healthz_build(port: int) -> str | None:
    """The commit the server on this box answers /healthz with ("" for a build that says none; None: no answer)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as r:
            return json.loads(r.read()).get("build") or ""
    except (OSError, ValueError):
        return None


class Updater:
    """The update's steps; ``run`` runs one command (argv -> CompletedProcess), ``build_of`` answers the running
    server's commit (None while none answers): the tests put stand-ins for both."""

    def __init__(self, prefix: Path = PREFIX, state: Path = STATE, unit_dir: Path = UNIT_DIR, run=None,
                 build_of=None, wait_s: float = 300, poll_s: float = 3, say=print):
        self.prefix, self.state, self.unit_dir = prefix, state, unit_dir
        self.run = run or (lambda argv: subprocess.run(argv, capture_output=True, text=True, timeout=1800))
        self.build_of = build_of or (lambda: healthz_build(port_of()))
        self.wait_s, self.poll_s, self.say = wait_s, poll_s, say

    def unit_state(self) -> dict:
        """companion.service as systemd sees it: ActiveState, SubState, Result, NRestarts (the restarts since
        the last explicit start: systemd counts from 0 again at a start after a stop)."""
        p = self.run(["systemctl", "show", "-p", "ActiveState", "-p", "SubState", "-p", "Result", "-p", "NRestarts",
                      "companion.service"])
        return dict(line.split("=", 1) for line in (p.stdout or "").splitlines() if "=" in line)

    def _wait_for(self, commit: str | None, restarts: int | None = None) -> tuple[bool, str]:
        """Until the server answers /healthz (with ``commit``, when given): (True, ""); or (False, why) as soon
        as systemd says it will not (the unit failed; more than ``restarts`` restarts, when given), at the
        latest after wait_s."""
        end = time.monotonic() + self.wait_s
        while True:
            got = self.build_of()
            if got is not None and (commit is None or got == commit):
                return True, ""
            unit = self.unit_state()
            n = int(unit["NRestarts"]) if unit.get("NRestarts", "").isdigit() else 0
            if unit.get("ActiveState") == "failed":
                return False, f"failed: its unit gave up ({unit.get('Result') or 'no result said'})"
            if restarts is not None and n > restarts:
                # (between two restarts the real systemd says Result=exit-code or, at some moments,
                # Result=success: the words name the result only when it is a failure's)
                result = unit.get("Result") or "success"
                return False, f"failed to start {n} times" + (f" ({result})" if result != "success" else "")
            if time.monotonic() >= end:
                return False, f"did not answer /healthz within {self.wait_s:.0f} s"
            time.sleep(self.poll_s)

    def _systemctl(self, *args: str) -> None:
        self.run(["systemctl", *args])

    def apply(self, bundle: dict, installed: str | None) -> dict:
        venv, prev = self.prefix / "venv", self.prefix / "venv.prev"
        units_prev = self.state / "units.prev"
        self.say(f"update: {installed or 'unknown'} -> {bundle['commit']} from {bundle['dir']}")
        self._systemctl("stop", "companion.service")
        b = self.run(["runuser", "-u", "companion", "--", "env", f"COMPANION_DATA={DATA}", str(venv / "bin/companion"),
                      "backup", f"{DATA}/backups", "--keep", "14"])
        backup = "made" if b.returncode == 0 else f"not made: {(b.stderr or b.stdout).strip()[-200:]}"
        self.say(f"update: the backup before it: {backup}")
        if prev.exists():
            shutil.rmtree(prev)
        if units_prev.exists():
            shutil.rmtree(units_prev)
        units_prev.mkdir(parents=True)
        for u in UNITS:
            if (self.unit_dir / u).exists():
                shutil.copy2(self.unit_dir / u, units_prev / u)
        os.rename(venv, prev)
        p = self.run([f"{bundle['dir']}/systemd/install.sh", "--wheels", bundle["dir"], "--no-apt", "--no-start"])
        waited_s = None  # (the seconds the new version was waited for: none when install.sh failed)
        if p.returncode != 0:
            reason = f"install.sh failed (exit {p.returncode}): {(p.stderr or p.stdout).strip()[-300:]}"
        else:
            self._systemctl("daemon-reload")
            t = time.monotonic()
            self._systemctl("start", "companion.service")  # (a Type=notify unit: until it is ready, or fails)
            up, why = self._wait_for(bundle["commit"], restarts=RESTARTS_ALLOWED)
            waited_s = round(time.monotonic() - t, 1)
            if up:
                shutil.rmtree(prev)
                shutil.rmtree(units_prev)
                return {"result": "updated", "from": installed, "to": bundle["commit"], "backup": backup,
                        "waited_s": waited_s}
            reason = f"the new version {why}"
        self.say(f"update: {reason}: going back to {installed}")
        self._systemctl("stop", "companion.service")
        if venv.exists():
            shutil.rmtree(venv)
        os.rename(prev, venv)
        for u in UNITS:  # the previous version's units, as they were (those it did not have are removed)
            if (units_prev / u).exists():
                shutil.copy2(units_prev / u, self.unit_dir / u)
            elif (self.unit_dir / u).exists():
                (self.unit_dir / u).unlink()
        shutil.rmtree(units_prev)
        self._systemctl("daemon-reload")
        self._systemctl("start", "companion.service")
        back, _ = self._wait_for(installed)
        return {"result": "fell back", "from": installed, "to": bundle["commit"], "reason": reason,
                "previous_running": back, "backup": backup, "waited_s": waited_s}


def words(doc: dict) -> str:
    if doc["result"] == "updated":
        return f"companion was updated: {doc['from']} -> {doc['to']} (the data kept; backup {doc['backup']})."
    if doc["result"] == "fell back":
        running = "is running again" if doc.get("previous_running") else "was started again but does not answer yet"
        return (f"companion's update to {doc['to']} failed: {doc['reason']}. The previous version ({doc['from']}) "
                f"{running}, with its data. The bundle {doc['to']} will not be tried again.")
    return f"no update: {doc.get('reason', '')}"


def this_boot() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def write_status(data: Path, doc: dict, boot: str | None) -> None:
    """The result beside companion's database, for its home page and TV page (readable by the service user;
    written whole, then renamed: the server never reads half of it)."""
    status = {k: doc.get(k) for k in ("result", "from", "to", "reason", "previous_running", "at")}
    status["boot_id"] = boot
    tmp = data / (UPDATE_STATUS + ".tmp")
    try:
        tmp.write_text(json.dumps(status) + "\n")
        tmp.chmod(0o644)
        os.replace(tmp, data / UPDATE_STATUS)
    except OSError:
        tmp.unlink(missing_ok=True)


def mount_sticks() -> list[Path]:
    """Every partition not mounted yet and not on the root's disk (a USB stick, or the check's second disk),
    mounted read-only under MOUNTS."""
    root_disk = subprocess.run(["lsblk", "-no", "PKNAME", subprocess.run(["findmnt", "-no", "SOURCE", "/"],
                               capture_output=True, text=True).stdout.strip()], capture_output=True, text=True).stdout.strip()
    p = subprocess.run(["lsblk", "-J", "-o", "NAME,TYPE,FSTYPE,MOUNTPOINT,PKNAME"], capture_output=True, text=True)
    try:
        devs = json.loads(p.stdout)["blockdevices"]
    except (ValueError, KeyError):
        return []
    flat = []
    while devs:
        d = devs.pop(0)
        flat.append(d)
        devs.extend(d.get("children") or [])
    out = []
    for d in flat:
        fs = d.get("fstype") or ""
        if d.get("mountpoint") or d.get("pkname") == root_disk or d["name"] == root_disk:
            continue
        if fs not in ("vfat", "exfat", "ext4", "ext3", "ext2"):
            continue
        where = MOUNTS / d["name"]
        where.mkdir(parents=True, exist_ok=True)
        if subprocess.run(["mount", "-o", "ro", f"/dev/{d['name']}", str(where)], capture_output=True).returncode == 0:
            out.append(where)
    return out


def main(argv: list[str]) -> int:
    STATE.mkdir(parents=True, exist_ok=True)
    mounted = mount_sticks()
    failed_file = STATE / "failed.json"
    failed = json.loads(failed_file.read_text()) if failed_file.exists() else []
    installed = installed_commit()
    bundle, why = choose(find_bundles([BOOT] + mounted), installed, failed)
    try:
        if bundle is None:
            print(f"update: {why}", flush=True)
            return 0
        wait = float(os.environ.get("COMPANION_UPDATE_WAIT", "300"))
        doc = Updater(wait_s=wait).apply(bundle, installed)
        doc["at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        if doc["result"] == "fell back":
            failed_file.write_text(json.dumps(failed + [bundle["commit"]]))
        (STATE / "update.json").write_text(json.dumps(doc, indent=1) + "\n")
        write_status(Path(DATA), doc, this_boot())
        text = words(doc)
        print(text, flush=True)
        try:
            (BOOT / "companion-update.txt").write_text(text + "\r\n")
            with open("/dev/console", "w") as con:
                con.write(f"\n{text}\n")
        except OSError:
            pass
        return 0 if doc["result"] == "updated" else 1
    finally:
        for m in mounted:
            subprocess.run(["umount", str(m)], capture_output=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
