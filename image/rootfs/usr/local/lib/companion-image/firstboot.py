#!/usr/bin/python3
"""The image's first boot (companion-firstboot.service, once, before companion.service; docs/pi.md).

With no network and no screen: grows the root partition and its file system to the card, reads the owner's
companion.txt on the boot partition (the hotspot's name and password, a club Wi-Fi to join instead, the time
zone, the language), enables SSH when the owner put a public key there (authorized_keys), brings up the box's
own Wi-Fi with the same code as `companion wifi hotspot on`, makes the organiser's setup code, and writes what
the owner needs (the setup code, the Wi-Fi's name and password, the two QR codes) to companion-setup.txt on the
boot partition, to the console (an HDMI screen shows it, as does a serial console) and to the login screen.

Standard library only (it runs with the system's Python, beside companion's venv). Every step says what it did;
a step that fails is said and the next runs: the box still starts.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

BOOT = Path(os.environ.get("COMPANION_BOOT_DIR", "/boot/firmware"))
STATE = Path(os.environ.get("COMPANION_IMAGE_STATE", "/var/lib/companion-image"))
DATA = "/var/lib/companion"
VENV = "/opt/companion/venv"
ZONEINFO = Path("/usr/share/zoneinfo")
SETTINGS_FILE = "companion.txt"
SETUP_FILE = "companion-setup.txt"
PORT = 8080
LANGUAGES = ("en", "it")
# the settings of companion.txt, and what each takes
KEYS = {
    "hotspot_name": "the box's own Wi-Fi's name (1 to 32 bytes)",
    "hotspot_password": "its password (8 to 63 printable ASCII characters)",
    "wifi_name": "a club Wi-Fi for the box to join instead of making its own",
    "wifi_password": "that Wi-Fi's password (8 to 63 characters; none for an open network)",
    "timezone": "the box's time zone, e.g. Europe/Rome",
    "language": "the language of the TV and of phones that ask for none: en or it",
}


def _wpa_password(v: str) -> str | None:
    if not (8 <= len(v) <= 63 and all(" " <= ch <= "~" for ch in v)):
        return "must be 8 to 63 printable ASCII characters (WPA2)"
    return None


def _ssid(v: str) -> str | None:
    return None if 1 <= len(v.encode()) <= 32 else "must be 1 to 32 bytes long"


def parse_settings(text: str, zoneinfo: Path = ZONEINFO) -> tuple[dict, list[str]]:
    """companion.txt: one ``key = value`` a line; ``#`` starts a comment line; a value may be quoted. Returns
    the good settings and a sentence for each line refused (the rest still apply)."""
    out, problems = {}, []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip().lstrip("\ufeff")
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            problems.append(f"line {n}: not a setting (key = value): {line[:40]}")
            continue
        key, value = (part.strip() for part in line.split("=", 1))
        key = key.lower()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if key not in KEYS:
            problems.append(f"line {n}: unknown setting {key!r} (known: {', '.join(KEYS)})")
            continue
        error = None
        if key in ("hotspot_name", "wifi_name"):
            error = _ssid(value)
        elif key == "hotspot_password":
            error = _wpa_password(value)
        elif key == "wifi_password":
            error = _wpa_password(value) if value else None
        elif key == "timezone":
            ok = re.fullmatch(r"[A-Za-z0-9_+-]+(/[A-Za-z0-9_+-]+)*", value) is not None and ".." not in value
            if not ok or not (zoneinfo / value).is_file():
                error = "not a time zone this box knows (e.g. Europe/Rome, UTC)"
        elif key == "language":
            value = value.lower()
            if value not in LANGUAGES:
                error = f"must be one of {', '.join(LANGUAGES)}"
        if error:
            problems.append(f"line {n}: {key}: {error}; ignored")
            continue
        out[key] = value
    if "wifi_password" in out and "wifi_name" not in out:
        problems.append("wifi_password without wifi_name: ignored")
        del out["wifi_password"]
    return out, problems


def nm_connection(ssid: str, password: str | None) -> str:
    """A NetworkManager keyfile that joins the club's Wi-Fi whenever it is in reach."""
    lines = ["[connection]", "id=club-wifi", "type=wifi", "autoconnect=true", "", "[wifi]", "mode=infrastructure",
             f"ssid={ssid}", ""]
    if password:
        lines += ["[wifi-security]", "key-mgmt=wpa-psk", f"psk={password}", ""]
    lines += ["[ipv4]", "method=auto", "", "[ipv6]", "method=auto", ""]
    return "\n".join(lines)


def set_env_line(text: str, key: str, value: str) -> str:
    """``text`` (an environment file) with ``KEY=value`` set: an existing line replaced, else appended."""
    lines = [ln for ln in text.splitlines() if not ln.startswith(f"{key}=")]
    return "\n".join(lines + [f"{key}={value}"]) + "\n"


def setup_text(code: str | None, hours: int, wifi: dict, url: str, codes: str, problems: list[str],
               steps: list[str]) -> str:
    """What the owner reads on any computer (companion-setup.txt on the boot partition)."""
    out = ["companion: the box's first start", "", ]
    if code:
        out += [f"Organiser's setup code: {code}",
                f"  Open {url}login on a phone and choose the organiser PIN with it (one use, valid {hours} hours).",
                "  A new code later: put an empty file named new-setup-code on this partition and restart the box.",
                ""]
    else:
        out += ["No setup code was made (see the steps below).", ""]
    if wifi.get("mode") == "hotspot":
        out += [f"The box's own Wi-Fi: {wifi['ssid']}   password: {wifi['password']}", ""]
    elif wifi.get("mode") == "club":
        out += [f"The box joins the Wi-Fi {wifi['ssid']} (from companion.txt); phones on it open {url}", ""]
    else:
        out += [f"The box's own Wi-Fi is off: {wifi.get('reason', 'unknown')}",
                f"  Phones on the box's network open {url}", ""]
    if codes.strip():
        out += ["The codes a table scans, in order (the Wi-Fi's, then the link):", "", codes.rstrip(), ""]
    if problems:
        out += ["companion.txt: lines not applied:"] + [f"  {p}" for p in problems] + [""]
    out += ["What the first start did:"] + [f"  {s}" for s in steps] + [""]
    return "\n".join(out)


# -- the steps (each returns a sentence; they run on the box) ----------------------------------------------

def sh(argv: list[str], timeout: int = 120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def as_service(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return sh(["runuser", "-u", "companion", "--", "env", f"COMPANION_DATA={DATA}", f"{VENV}/bin/companion", *args],
              timeout=timeout, cwd=DATA, umask=0o077)  # as install.sh and the service: the data is the service's


def grow_root() -> str:
    src = sh(["findmnt", "-no", "SOURCE", "/"]).stdout.strip()
    disk = sh(["lsblk", "-no", "PKNAME", src]).stdout.strip()
    m = re.search(r"(\d+)$", src)
    if not src or not disk or not m:
        return f"root partition: not grown (cannot tell its disk: {src!r})"
    part = m.group(1)
    before = sh(["lsblk", "-bno", "SIZE", src]).stdout.strip()
    p = sh(["sfdisk", "--no-reread", "--no-tell-kernel", "-N", part, f"/dev/{disk}"], input=", +\n")
    if p.returncode != 0:
        return f"root partition: not grown (sfdisk: {(p.stderr or p.stdout).strip().splitlines()[-1:]})"
    sh(["partx", "-u", "-n", part, f"/dev/{disk}"])
    r = sh(["resize2fs", src], timeout=600)
    after = sh(["lsblk", "-bno", "SIZE", src]).stdout.strip()
    mb = lambda b: f"{int(b) // 2**20} MB" if b.isdigit() else b  # noqa: E731
    if r.returncode != 0:
        return f"root partition: grown from {mb(before)} to {mb(after)}, its file system not ({r.stderr.strip()[-200:]})"
    return f"root partition and file system grown to the card: {mb(before)} -> {mb(after)}"


def ssh_from_key() -> str:
    keys = BOOT / "authorized_keys"
    if not keys.is_file() or not keys.read_text(errors="replace").strip():
        return "SSH: off (no authorized_keys on the boot partition)"
    ssh = Path("/root/.ssh")
    ssh.mkdir(mode=0o700, exist_ok=True)
    (ssh / "authorized_keys").write_text(keys.read_text(errors="replace"))
    os.chmod(ssh / "authorized_keys", 0o600)
    Path("/etc/ssh/sshd_config.d").mkdir(parents=True, exist_ok=True)
    Path("/etc/ssh/sshd_config.d/companion.conf").write_text(
        "# the image: keys only (the owner's authorized_keys from the boot partition)\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n")
    sh(["ssh-keygen", "-A"])
    p = sh(["systemctl", "enable", "--now", "--no-block", "ssh.service"])
    return "SSH: on, for the key(s) in authorized_keys (root, keys only)" if p.returncode == 0 else \
        f"SSH: could not be enabled ({p.stderr.strip()[-200:]})"


def apply_timezone(tz: str) -> str:
    Path("/etc/localtime").unlink(missing_ok=True)
    os.symlink(f"/usr/share/zoneinfo/{tz}", "/etc/localtime")
    Path("/etc/timezone").write_text(tz + "\n")
    return f"time zone: {tz}"


def apply_language(lang: str) -> str:
    env = Path("/etc/default/companion")
    text = env.read_text() if env.exists() else ""
    env.write_text(set_env_line(text, "COMPANION_LANGUAGE", lang))
    return f"language: {lang}"


def join_club_wifi(ssid: str, password: str | None) -> str:
    d = Path("/etc/NetworkManager/system-connections")
    d.mkdir(parents=True, exist_ok=True)
    f = d / "club-wifi.nmconnection"
    f.write_text(nm_connection(ssid, password))
    os.chmod(f, 0o600)
    sh(["nmcli", "connection", "reload"])
    return f"club Wi-Fi: {ssid} (joined whenever in reach)"


def hotspot(settings: dict) -> tuple[dict, str]:
    """The box's own Wi-Fi, by `companion wifi hotspot on` (waiting up to 30 s for the radio to appear)."""
    for _ in range(30):
        p = sh(["nmcli", "-t", "-f", "TYPE", "device"])
        if p.returncode == 0 and "wifi" in p.stdout.split():
            break
        time.sleep(1)
    args = ["wifi", "hotspot", "on"]
    if "hotspot_name" in settings:
        args += ["--ssid", settings["hotspot_name"]]
    if "hotspot_password" in settings:
        args += ["--password", settings["hotspot_password"]]
    p = as_service(*args)
    if p.returncode == 0:
        doc = json.loads(p.stdout)
        return {"mode": "hotspot", "ssid": doc.get("ssid"), "password": doc.get("password")}, \
            f"the box's own Wi-Fi: on ({doc.get('ssid')})"
    reason = (p.stderr or p.stdout).strip().splitlines()[-1:] or [f"exit {p.returncode}"]
    return {"mode": "off", "reason": reason[0]}, f"the box's own Wi-Fi: not on: {reason[0]}"


def setup_code(hours: int = 24) -> tuple[str | None, str]:
    p = as_service("pin", "status")
    if p.returncode != 0:
        return None, f"setup code: the PIN's state could not be read ({p.stderr.strip()[-200:]})"
    if json.loads(p.stdout).get("pin_set"):
        return None, "setup code: none needed (the organiser PIN is set)"
    p = as_service("pin", "reset", "--hours", str(hours))
    if p.returncode != 0:
        return None, f"setup code: not made ({p.stderr.strip()[-200:]})"
    return p.stdout.strip().splitlines()[-1], f"setup code: made (valid {hours} hours)"


def show(text: str) -> None:
    """To the boot partition, the console (HDMI or serial) and the login screen."""
    (BOOT / SETUP_FILE).write_text(text.replace("\n", "\r\n"))  # \r\n: Windows' Notepad reads it too
    try:
        with open("/dev/console", "w") as con:
            con.write("\n" + text + "\n")
    except OSError:
        pass
    issue = Path("/etc/issue.d")
    issue.mkdir(exist_ok=True)
    (issue / "companion.issue").write_text(text.replace("\\", "\\\\") + "\n")


def main(argv: list[str]) -> int:
    again = "--new-code" in argv  # a later boot, with new-setup-code on the boot partition
    STATE.mkdir(parents=True, exist_ok=True)
    steps: list[str] = []
    text = (BOOT / SETTINGS_FILE).read_text(errors="replace") if (BOOT / SETTINGS_FILE).exists() else ""
    settings, problems = parse_settings(text)
    if not again:
        for step in (grow_root, ssh_from_key):
            try:
                steps.append(step())
            except Exception as e:  # said, and the box goes on
                steps.append(f"{step.__name__}: failed: {e}")
            print(steps[-1], flush=True)
        if "timezone" in settings:
            steps.append(apply_timezone(settings["timezone"]))
        if "language" in settings:
            steps.append(apply_language(settings["language"]))
        if "wifi_name" in settings:
            steps.append(join_club_wifi(settings["wifi_name"], settings.get("wifi_password")))
            wifi = {"mode": "club", "ssid": settings["wifi_name"]}
        else:
            wifi, said = hotspot(settings)
            steps.append(said)
        (STATE / "wifi.json").write_text(json.dumps(wifi))
    else:
        wifi = json.loads((STATE / "wifi.json").read_text()) if (STATE / "wifi.json").exists() else {}
        (BOOT / "new-setup-code").unlink(missing_ok=True)
    code, said = setup_code()
    steps.append(said)
    url = f"http://10.42.0.1:{PORT}/" if wifi.get("mode") == "hotspot" else f"http://companion.local:{PORT}/"
    codes = as_service("wifi", "codes", "--url", url).stdout
    show(setup_text(code, 24, wifi, url, codes, problems, steps))
    for s in steps:
        print(s, flush=True)
    (STATE / "firstboot.done").write_text(time.strftime("%Y-%m-%dT%H:%M:%S%z") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
