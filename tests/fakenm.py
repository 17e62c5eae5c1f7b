"""A stand-in ``nmcli`` (and ``iw``) on PATH for the hotspot's tests: every call is logged (one line of
arguments, JSON) and answered from a small state folder, as NetworkManager would for the commands
companion uses. Nothing here touches a radio."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

SCRIPT = r'''#!{python}
import json, os, sys
from pathlib import Path
state = Path({state!r})
with open(state / "calls.jsonl", "a") as fh:
    fh.write(json.dumps([os.path.basename(sys.argv[0])] + sys.argv[1:]) + "\n")
args = sys.argv[1:]
if os.path.basename(sys.argv[0]) == "iw":
    n = int((state / "stations").read_text() or 0) if (state / "stations").exists() else 0
    for i in range(n):
        print(f"Station 02:00:00:00:00:{{i:02x}} (on wlan0)\n\tinactive time:\t10 ms")
    sys.exit(0)
if (state / "down").exists():
    print("Error: NetworkManager is not running.", file=sys.stderr)
    sys.exit(8)
devices = json.loads((state / "devices.json").read_text())
conns = json.loads((state / "connections.json").read_text())
def save():
    (state / "devices.json").write_text(json.dumps(devices))
    (state / "connections.json").write_text(json.dumps(conns))
def esc(v):
    return v.replace("\\", "\\\\").replace(":", "\\:")
if args[:4] == ["-t", "-f", "DEVICE,TYPE,STATE,CONNECTION", "device"]:
    for d in devices:
        print(":".join(esc(x) for x in (d["device"], d["type"], d["state"], d["connection"] or "")))
elif args[:4] == ["-t", "-f", "NAME", "connection"]:
    for c in conns:
        print(esc(c))
elif args[:2] == ["connection", "add"]:
    name = args[args.index("con-name") + 1]
    if name in conns:
        print(f"Error: a connection {{name}} exists", file=sys.stderr); sys.exit(1)
    conns.append(name); save()
    print(f"Connection '{{name}}' successfully added.")
elif args[:2] == ["connection", "delete"]:
    conns.remove(args[2]); save()
elif args[:2] == ["connection", "modify"]:
    pass
elif args[:2] == ["connection", "up"]:
    if args[2] not in conns:
        print(f"Error: unknown connection '{{args[2]}}'.", file=sys.stderr); sys.exit(10)
    wifi = [d for d in devices if d["type"] == "wifi"][0]
    wifi.update(state="connected", connection=args[2]); save()
elif args[:2] == ["connection", "down"]:
    for d in devices:
        if d["connection"] == args[2]:
            d.update(state="disconnected", connection=None)
    save()
else:
    print("Error: the stand-in does not know " + " ".join(args), file=sys.stderr); sys.exit(2)
'''


class FakeNM:
    def __init__(self, root: Path, devices=None, connections=None):
        self.root = root
        self.state = root / "nm-state"
        self.bin = root / "nm-bin"
        self.state.mkdir(parents=True, exist_ok=True)
        self.bin.mkdir(parents=True, exist_ok=True)
        if devices is None:
            # as NetworkManager lists a radio (make pi-check's, mac80211_hwsim's): with the P2P device
            # wpa_supplicant makes beside it, of type wifi-p2p, which is not the Wi-Fi to put the hotspot on
            devices = [{"device": "wlan0", "type": "wifi", "state": "connected", "connection": "ClubWiFi"},
                       {"device": "p2p-dev-wlan0", "type": "wifi-p2p", "state": "disconnected", "connection": None},
                       {"device": "lo", "type": "loopback", "state": "connected (externally)", "connection": "lo"}]
        if connections is None:
            connections = ["ClubWiFi", "lo"]
        (self.state / "devices.json").write_text(json.dumps(devices))
        (self.state / "connections.json").write_text(json.dumps(connections))
        text = SCRIPT.format(python=sys.executable, state=str(self.state))
        for name in ("nmcli", "iw"):
            p = self.bin / name
            p.write_text(text)
            p.chmod(p.stat().st_mode | stat.S_IEXEC)

    def path(self, without_iw: bool = False) -> str:
        return f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}"

    def calls(self) -> list[list[str]]:
        f = self.state / "calls.jsonl"
        return [json.loads(line) for line in f.read_text().splitlines()] if f.exists() else []

    def clear(self) -> None:
        (self.state / "calls.jsonl").unlink(missing_ok=True)

    def stations(self, n: int) -> None:
        (self.state / "stations").write_text(str(n))

    def stop_networkmanager(self) -> None:
        (self.state / "down").write_text("")

    def devices(self) -> list[dict]:
        return json.loads((self.state / "devices.json").read_text())
