"""The box's own Wi-Fi: a WPA2 access point made with NetworkManager (Raspberry Pi OS Bookworm and later),
for a table where no Wi-Fi exists (docs/offline.md).

Everything goes through ``nmcli``, one command at a time, in a fixed order (the tests put a stand-in
``nmcli`` on PATH and assert the commands):

- ``on``: ``nmcli -t -f DEVICE,TYPE,STATE,CONNECTION device status`` (the Wi-Fi device and the venue's
  connection on it, remembered to fall back to), ``nmcli -t -f NAME connection show`` (an old profile of
  ours is deleted first: its settings are ours to write), ``nmcli connection add type wifi ... 802-11-wireless.mode
  ap ... ipv4.method shared ipv4.addresses 10.42.0.1/24 ... wifi-sec.key-mgmt wpa-psk wifi-sec.proto rsn ...``
  (WPA2 only, CCMP; NetworkManager's shared mode runs dnsmasq: DHCP for the phones and DNS), then ``nmcli
  connection up companion-hotspot``;
- ``off``: ``nmcli connection modify companion-hotspot connection.autoconnect no``, ``nmcli connection down
  companion-hotspot``, then ``nmcli connection up <venue>`` when a venue's connection was on the device before;
- ``status``: the device status and, on the hotspot, how many phones are associated (``iw dev DEV station
  dump``, where ``iw`` exists).

Where ``nmcli`` is missing, NetworkManager is not running or there is no Wi-Fi device, it says so in a
sentence (a :class:`RuleError`) and changes nothing. The password is generated once and kept in the
settings (``wifi.hotspot``); the address is fixed (``ADDRESS``), so the table's link and the DNS name of the
box on the hotspot never change.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess

from companion.base.errors import InputError, RuleError

CONNECTION = "companion-hotspot"
ADDRESS = "10.42.0.1"
PREFIX = 24
SETTING = "wifi.hotspot"
# no 0/O, 1/l/I: the password is read off a card by people as often as it is scanned
PASSWORD_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
PASSWORD_LENGTH = 12


def hotspot_base(base: str) -> str:
    """``base`` (``http://host:port``) with the host replaced by the hotspot's fixed address (phones on the
    box's own Wi-Fi know no other)."""
    from urllib.parse import urlsplit

    port = urlsplit(base).port
    return f"http://{ADDRESS}" + (f":{port}" if port and port != 80 else "")


def is_on(hotspot) -> bool:
    """Whether the box's own Wi-Fi is on (False when NetworkManager cannot say)."""
    try:
        return hotspot is not None and hotspot.is_on()
    except Exception:
        return False


def escape_wifi(text: str) -> str:
    """A value of the Wi-Fi QR code: ``\\ ; , " :`` escaped with a backslash."""
    out = []
    for ch in text:
        if ch in '\\;,":':
            out.append("\\")
        out.append(ch)
    return "".join(out)


def wifi_qr_text(ssid: str, password: str) -> str:
    """The standard Wi-Fi QR code's text. ``T:WPA`` (also for WPA2: ``T:WPA2`` is refused by some Android
    builds)."""
    return f"WIFI:T:WPA;S:{escape_wifi(ssid)};P:{escape_wifi(password)};;"


def new_password(rng=None) -> str:
    pick = (rng.choice if rng is not None else secrets.choice)
    return "".join(pick(PASSWORD_ALPHABET) for _ in range(PASSWORD_LENGTH))


def new_ssid(rng=None) -> str:
    pick = (rng.choice if rng is not None else secrets.choice)
    return "companion-" + "".join(pick("23456789abcdefghjkmnpqrstuvwxyz") for _ in range(4))


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def _terse(line: str) -> list[str]:
    """A line of ``nmcli -t``: fields split on ``:``, ``\\:`` kept as a colon."""
    out, cur, esc = [], [], False
    for ch in line:
        if esc:
            cur.append(ch)
            esc = False
        elif ch == "\\":
            esc = True
        elif ch == ":":
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


class Hotspot:
    """The box's Wi-Fi through nmcli. ``settings`` has ``get(key, default)`` and ``set(key, value)`` (the
    store's settings); ``run`` runs one command (argv) and returns a CompletedProcess; ``which`` finds one."""

    def __init__(self, settings, run=_run, which=shutil.which, rng=None):
        self.settings = settings
        self.run = run
        self.which = which
        self.rng = rng

    # -- the settings --------------------------------------------------------------------------------
    def config(self) -> dict:
        """The hotspot's SSID and password (generated at first use, then kept), whether it is meant on."""
        cur = self.settings.get(SETTING, None) or {}
        if not cur.get("ssid") or not cur.get("password"):
            cur = {"ssid": new_ssid(self.rng), "password": new_password(self.rng), "enabled": False,
                   "venue": None, **{k: v for k, v in cur.items() if v}}
            self.settings.set(SETTING, cur)
        return cur

    def configure(self, ssid: str | None = None, password: str | None = None) -> dict:
        """The owner's own name and password for the box's Wi-Fi (the image's companion.txt gives them at first
        boot): an SSID of 1 to 32 bytes, a WPA2 passphrase of 8 to 63 printable ASCII characters."""
        changes = {}
        if ssid is not None:
            if not 1 <= len(ssid.encode()) <= 32:
                raise InputError("must be 1 to 32 bytes long", "ssid")
            changes["ssid"] = ssid
        if password is not None:
            if not (8 <= len(password) <= 63 and all(" " <= ch <= "~" for ch in password)):
                raise InputError("must be 8 to 63 printable ASCII characters (WPA2)", "password")
            changes["password"] = password
        return self._save(**changes) if changes else self.config()

    def _save(self, **changes) -> dict:
        cur = {**self.config(), **changes}
        self.settings.set(SETTING, cur)
        return cur

    # -- nmcli ---------------------------------------------------------------------------------------
    def _nmcli(self, *args: str) -> subprocess.CompletedProcess:
        try:
            p = self.run(["nmcli", *args])
        except FileNotFoundError:
            raise RuleError("NetworkManager is not installed here (no nmcli): nothing was changed") from None
        if p.returncode != 0:
            said = (p.stderr or p.stdout or "").strip().splitlines()
            said = said[-1] if said else f"exit status {p.returncode}"
            if "NetworkManager is not running" in said:
                raise RuleError("NetworkManager is not running: nothing was changed")
            raise RuleError("nmcli {args} failed: {said}", args=args[0] + " " + (args[1] if len(args) > 1 else ""),
                            said=said)
        return p

    def _devices(self) -> list[dict]:
        if self.which("nmcli") is None:
            raise RuleError("NetworkManager is not installed here (no nmcli): nothing was changed")
        p = self._nmcli("-t", "-f", "DEVICE,TYPE,STATE,CONNECTION", "device", "status")
        out = []
        for line in p.stdout.splitlines():
            f = _terse(line)
            if len(f) >= 4:
                out.append({"device": f[0], "type": f[1], "state": f[2], "connection": f[3] or None})
        return out

    def _wifi_device(self) -> dict:
        wifi = [d for d in self._devices() if d["type"] == "wifi"]
        if not wifi:
            raise RuleError("this box has no Wi-Fi device that NetworkManager manages: nothing was changed")
        # the one carrying the hotspot, else the first
        for d in wifi:
            if d["connection"] == CONNECTION:
                return d
        return wifi[0]

    def _phones(self, device: str) -> int | None:
        if self.which("iw") is None:
            return None
        try:
            p = self.run(["iw", "dev", device, "station", "dump"])
        except (FileNotFoundError, OSError):
            return None
        if p.returncode != 0:
            return None
        return sum(1 for line in p.stdout.splitlines() if line.startswith("Station "))

    # -- the three commands --------------------------------------------------------------------------
    def on(self) -> dict:
        cfg = self.config()
        dev = self._wifi_device()
        venue = dev["connection"] if dev["connection"] not in (None, CONNECTION) and dev["state"].startswith(
            "connected") else cfg.get("venue")
        names = {_terse(line)[0] for line in self._nmcli("-t", "-f", "NAME", "connection", "show").stdout.splitlines()}
        if CONNECTION in names:
            self._nmcli("connection", "delete", CONNECTION)
        self._nmcli("connection", "add", "type", "wifi", "ifname", dev["device"], "con-name", CONNECTION,
                    "autoconnect", "yes", "ssid", cfg["ssid"],
                    "connection.autoconnect-priority", "100",
                    "802-11-wireless.mode", "ap", "802-11-wireless.band", "bg",
                    "ipv4.method", "shared", "ipv4.addresses", f"{ADDRESS}/{PREFIX}",
                    "ipv6.method", "disabled",
                    "wifi-sec.key-mgmt", "wpa-psk", "wifi-sec.proto", "rsn", "wifi-sec.pairwise", "ccmp",
                    "wifi-sec.group", "ccmp", "wifi-sec.psk", cfg["password"])
        self._nmcli("connection", "up", CONNECTION)
        self._save(enabled=True, venue=venue)
        return self.status()

    def off(self) -> dict:
        cfg = self.config()
        dev = self._wifi_device()
        names = {_terse(line)[0] for line in self._nmcli("-t", "-f", "NAME", "connection", "show").stdout.splitlines()}
        if CONNECTION in names:
            self._nmcli("connection", "modify", CONNECTION, "connection.autoconnect", "no")
            if dev["connection"] == CONNECTION:
                self._nmcli("connection", "down", CONNECTION)
        venue = cfg.get("venue")
        if venue and venue in names:
            self._nmcli("connection", "up", venue)
        self._save(enabled=False)
        return self.status()

    def status(self) -> dict:
        """Which network the box is on: ``mode`` ``hotspot`` (its own, with ``phones`` associated when
        ``iw`` can tell), ``venue`` (another Wi-Fi: its name), ``none``; or ``available: false`` and the
        sentence saying why."""
        cfg = self.settings.get(SETTING, None) or {}
        base = {"ssid": cfg.get("ssid"), "enabled": bool(cfg.get("enabled")), "address": ADDRESS}
        try:
            dev = self._wifi_device()
        except RuleError as exc:
            return {**base, "available": False, "mode": "none", "reason": exc.message,
                    "reason_template": exc.template, "reason_params": exc.params}
        out = {**base, "available": True, "device": dev["device"], "reason": None}
        if dev["connection"] == CONNECTION and dev["state"].startswith("connected"):
            return {**out, "mode": "hotspot", "network": cfg.get("ssid"), "phones": self._phones(dev["device"])}
        if dev["connection"] and dev["state"].startswith("connected"):
            return {**out, "mode": "venue", "network": dev["connection"], "phones": None}
        return {**out, "mode": "none", "network": None, "phones": None}

    def is_on(self) -> bool:
        """The hotspot is meant on (the setting: no nmcli is run)."""
        return bool((self.settings.get(SETTING, None) or {}).get("enabled"))

    def qr_text(self) -> str:
        cfg = self.config()
        return wifi_qr_text(cfg["ssid"], cfg["password"])


class StoreSettings:
    """The store's settings as ``get``/``set`` (what :class:`Hotspot` takes)."""

    def __init__(self, store):
        self.store = store

    def get(self, key, default=None):
        return self.store.get_setting(key, default)

    def set(self, key, value):
        self.store.set_setting(key, value)
