"""`make pi-check`'s hardware boot, the smart dice: a Pixels die's advertisements sent on one virtual Bluetooth controller,
read by the box's own scanner (companion serve --dice auto: bleak, through BlueZ's bluetoothd over D-Bus) on
another, and a combat of a conquest match that takes those faces (docs/pi.md, "The hardware, simulated").

The controllers: hci_vhci (built by image/pi_hw.py) gives user space a controller whose other end is a process;
BlueZ's own emulator, btvirt (Debian's bluez-test-tools, of the image's bluez version: put in the check's boot
only, never in the image), is that process for three LE controllers and carries what each advertises to the
others that scan, as the air would. bluetoothd takes all three as adapters; the box scans on the one bleak
picks (BlueZ says which: its Discovering is true) and each die advertises from one of the others, through the
kernel's own advertising (btmgmt add-adv: the advertisement and scan response as raw AD structures, built
here in the Pixels layout that companion/dice.py reads).
"""

from __future__ import annotations

import json
import struct
import time
import uuid
from pathlib import Path

from companion.dice import Advertisement
from companion.games import conquest_italy as ci
from pi_wait import until

PIXELS_SERVICE = "a6b90001-7a5a-43f2-a962-350c8edc9b5b"
INFO_UUID16 = 0x180A  # Device Information: the 16-bit service data key of the die's id and firmware
BASE_UUID = "0000{:04x}-0000-1000-8000-00805f9b34fb"
ROLL = {"rolled": 1, "handling": 2, "rolling": 3, "crooked": 4, "still": 5}
D6, ONYX = 2, 1  # pixels-js PixelDieType.d6, PixelColorway.onyxBlack
FIRMWARE = 1717000000  # a 2024 firmware: a d6 face is its index + 1
COMPANY = 0xFFFF
# AD types (Bluetooth Core Supplement, part A)
AD_FLAGS, AD_UUID128, AD_NAME, AD_SERVICE16, AD_MANUFACTURER = 0x01, 0x07, 0x09, 0x16, 0xFF
SOURCES = ("deb http://deb.debian.org/debian bookworm main\n"
           "deb http://deb.debian.org/debian-security bookworm-security main\n"
           "deb http://deb.debian.org/debian bookworm-updates main\n")
CONTROLLERS = 3  # the box's and two dice
DICE = ((0x101, "Rosso 1", "attack", 6), (0x201, "Blu 1", "defend", 2))  # pixel id, name, side, face rolled


# -- the die's advertisement (pure: tests/test_pi_bt.py) ---------------------------------------------------

def ad(kind: int, payload: bytes) -> bytes:
    return bytes([len(payload) + 1, kind]) + payload


def pixels_ad(pixel_id: int, name: str, state: str, face: int, battery: int = 87, charging: bool = False,
              die_type: int = D6, colorway: int = ONYX, leds: int = 6, firmware: int = FIRMWARE) -> tuple[bytes, bytes]:
    """A Pixels d6's advertisement and scan response (legacy advertising: 31 bytes each at most): flags, the
    Pixels service and the manufacturer data ``ledCount, designAndColor, rollState, faceIndex, battery``
    advertised; the service data ``pixelId, buildTimestamp`` and the name in the scan response."""
    manuf = bytes([leds, (die_type << 4) | colorway, ROLL[state], face - 1, (battery & 0x7F) | (0x80 if charging else 0)])
    adv = (ad(AD_FLAGS, b"\x06") + ad(AD_UUID128, uuid.UUID(PIXELS_SERVICE).bytes[::-1])
           + ad(AD_MANUFACTURER, struct.pack("<H", COMPANY) + manuf))
    rsp = ad(AD_SERVICE16, struct.pack("<HII", INFO_UUID16, pixel_id, firmware)) + ad(AD_NAME, name.encode())
    if len(adv) > 31 or len(rsp) > 31:
        raise ValueError(f"an advertisement of {len(adv)} and a scan response of {len(rsp)} bytes: 31 at most")
    return adv, rsp


def ad_structures(data: bytes) -> list[tuple[int, bytes]]:
    out, i = [], 0
    while i < len(data) and data[i]:
        n = data[i]
        out.append((data[i + 1], bytes(data[i + 2:i + 1 + n])))
        i += n + 1
    return out


def as_bluez_reads(address: str, *packets: bytes) -> dict:
    """The device properties BlueZ makes of these AD structures (org.bluez.Device1's ManufacturerData by
    company id, ServiceData by full UUID, UUIDs, Name), as the check's own run read them with busctl."""
    props = {"Address": address, "ManufacturerData": {}, "ServiceData": {}, "UUIDs": [], "Name": None}
    for pkt in packets:
        for kind, payload in ad_structures(pkt):
            if kind == AD_MANUFACTURER:
                props["ManufacturerData"][struct.unpack_from("<H", payload)[0]] = payload[2:]
            elif kind == AD_SERVICE16:
                props["ServiceData"][BASE_UUID.format(struct.unpack_from("<H", payload)[0])] = payload[2:]
            elif kind == AD_UUID128:
                for k in range(0, len(payload), 16):
                    props["UUIDs"].append(str(uuid.UUID(bytes=payload[k:k + 16][::-1])))
            elif kind == AD_NAME:
                props["Name"] = payload.decode()
    return props


def advertisement(props: dict) -> Advertisement:
    """What companion/dice.py's BleakSource makes of bleak's view of those properties."""
    return Advertisement(address=props["Address"], name=props["Name"], manufacturer_data=dict(props["ManufacturerData"]),
                         service_data=dict(props["ServiceData"]), service_uuids=tuple(props["UUIDs"]))


# -- the check's own tools -----------------------------------------------------------------------------------

def _run(cmd, log, cwd=None, timeout=600):
    import subprocess

    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    log(f"$ {' '.join(map(str, cmd))[:300]}\n{(p.stdout + p.stderr)[-2000:]}(exit {p.returncode})")
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} {cmd[1] if len(cmd) > 1 else ''}: exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}")
    return p.stdout


def test_tools(version: str, cache: Path, log) -> Path:
    """bluez-test-tools (btvirt) for arm64 of this bluez VERSION, from the archive the image comes from,
    downloaded once into CACHE with apt lists of its own (the host's apt is not touched)."""
    work = cache / "hw-bluez-test-tools"
    name = f"bluez-test-tools_{version.split(':')[-1]}_arm64.deb"
    if (work / name).exists():
        return work / name
    d = work / "apt"
    for sub in ("lists/partial", "cache/archives/partial"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    (d / "sources.list").write_text(SOURCES)
    apt = ["-o", f"Dir::Etc::SourceList={d / 'sources.list'}", "-o", "Dir::Etc::SourceParts=/nonexistent",
           "-o", f"Dir::State::Lists={d / 'lists'}", "-o", f"Dir::Cache={d / 'cache'}",
           "-o", "APT::Architecture=arm64", "-o", "APT::Architectures::=arm64", "-o", "Debug::NoLocking=1"]
    _run(["apt-get", *apt, "-q", "update"], log)
    _run(["apt-get", *apt, "download", f"bluez-test-tools:arm64={version}"], log, cwd=work)
    if not (work / name).exists():
        raise RuntimeError(f"apt-get download left no {name} in {work}")
    return work / name


# -- inside the machine ---------------------------------------------------------------------------------------

CONTROLLERS_UP = f"""set -e
modprobe bluetooth
grep -q '^hci_vhci ' /proc/modules || insmod /root/pi-check-hw/hci_vhci.ko
systemctl is-active -q pi-check-btvirt || systemd-run --unit pi-check-btvirt /usr/bin/btvirt -L -l{CONTROLLERS}
for i in $(seq 60); do [ "$(ls /sys/class/bluetooth | wc -l)" -ge {CONTROLLERS} ] && break; sleep 1; done
udevadm settle
ls /sys/class/bluetooth
"""


def one_die_attack(s: dict, gm, who: str) -> tuple[str, str, list[dict]]:
    """An attack of ``who``'s rolling one die against one (from a city of two units or more to a neighbour of
    one unit) in the conquest state ``s``: (from, to, the organiser's territory.set corrections that make it).
    The deal is random: where none is on the map, the corrections leave two units on the player's city and one
    on its neighbour, their owners kept; none where one is there already."""
    pairs = [(a, t) for a in ci.held(s, who) for t in gm.cities
             if s["owner"][t] != who and gm.can_attack(a, t) is not None]
    a, t = min(pairs, key=lambda x: (s["units"][x[0]] < 2, s["units"][x[1]] != 1, x))
    fixes = []
    if s["units"][a] < 2:
        fixes.append({"city": a, "player": who, "units": 2})
    if s["units"][t] != 1:
        fixes.append({"city": t, "player": s["owner"][t], "units": 1})
    return a, t, fixes


def dice_read_over_bluez(m, phone_cls, sign_in, report: dict, log) -> None:
    """The dice step of the hardware boot: REPORT's ``dice_read_over_bluez`` and ``dice`` (what was found on
    the way); its log (the tools fetched, what was found) in hw-bt.log beside the report, its commands in the
    boot's ssh log."""
    import os

    out = report.setdefault("dice", {})
    cache = Path(os.environ.get("COMPANION_IMAGE_CACHE", Path.home() / ".cache" / "companion-image"))
    folder = Path(m.serial).parent  # the report's folder

    def bt_log(text: str) -> None:
        with open(folder / "hw-bt.log", "a") as f:
            f.write(text + "\n")

    version = m.ssh("dpkg-query -W -f='${Version}' bluez", check=False)
    if version.returncode != 0 or not version.stdout.strip():
        raise RuntimeError("the image has no bluez (BlueZ's bluetoothd): the box cannot hear the dice")
    out["bluez"] = version.stdout.strip()
    out["bleak"] = m.ssh("/opt/companion/venv/bin/python -c 'import bleak, importlib.metadata as md; "
                         "print(md.version(\"bleak\"), md.version(\"dbus-fast\"))'", check=False).stdout.strip() or None
    if not out["bleak"]:
        raise RuntimeError("the image's companion has no bleak (the dice extra)")
    deb = test_tools(out["bluez"], cache, bt_log)
    m.put([deb], "/root/pi-check-hw")
    m.ssh(f"dpkg -i /root/pi-check-hw/{deb.name}", timeout=300)
    # the owner's switch (docs/dice.md): the dice on, the service restarted, no Bluetooth controller yet (a
    # Pi's comes up by itself, maybe after the service)
    m.ssh("grep -q '^COMPANION_DICE=' /etc/default/companion && sed -i 's/^COMPANION_DICE=.*/COMPANION_DICE=auto/' "
          "/etc/default/companion || echo COMPANION_DICE=auto >> /etc/default/companion; systemctl restart companion",
          timeout=180)
    if m.wait_healthz(limit=time.monotonic() - m.t0 + 180)[0] is None:
        raise RuntimeError("no /healthz after the restart with the dice on")
    org = phone_cls(m)
    sign_in(m, org)

    def radio():
        status, doc = org.call("GET", "/api/dice")
        if status != 200:
            raise RuntimeError(f"GET /api/dice: {status} {doc}")
        return doc

    out["radio_before_controllers"] = radio()["radio"]

    def wait(what, test, limit=60.0):
        return until(what, test, limit, 1)

    def adapters():  # the controllers bluetoothd took as adapters
        got = m.ssh("busctl --list tree org.bluez 2>/dev/null", check=False).stdout.split()
        names = sorted({p.rsplit("/", 1)[1] for p in got if p.startswith("/org/bluez/hci")})
        return names if len(names) >= CONTROLLERS else None

    # under emulation a controller may miss the kernel's first command's time limit (its HCI Reset, 2 s, while
    # btvirt opens the next one) and stay out of BlueZ: then btvirt is made to start again, its controllers anew
    t = time.monotonic()
    out["controller_tries"] = []
    for _ in range(3):
        made = m.ssh(CONTROLLERS_UP, timeout=180).stdout.split()
        try:
            out["controllers"] = wait(f"{CONTROLLERS} adapters of bluetoothd", adapters, 60)
            out["controller_tries"].append({"made": made, "adapters": out["controllers"]})
            break
        except RuntimeError:
            out["controller_tries"].append({"made": made, "adapters": (m.ssh(
                "busctl --list tree org.bluez", check=False).stdout.split()),
                "kernel": m.ssh("dmesg | grep -i 'bluetooth: hci' | tail -5", check=False).stdout.splitlines()})
            m.ssh("systemctl stop pi-check-btvirt; systemctl reset-failed pi-check-btvirt 2>/dev/null; true")
    else:
        raise RuntimeError(f"btvirt's controllers did not all become adapters of bluetoothd: {out['controller_tries']}")
    if len(out["controller_tries"]) > 1:
        # the box's radio may have found a controller of a try that went away: the box restarted with these
        # (its radio keeps no watch on an adapter that goes away; the report says so)
        out["service_restarted_for_new_controllers"] = True
        m.ssh("systemctl restart companion", timeout=180)
        if m.wait_healthz(limit=time.monotonic() - m.t0 + 180)[0] is None:
            raise RuntimeError("no /healthz after the restart with the new controllers")

    def discovering():
        got = m.ssh("for h in /sys/class/bluetooth/hci*; do h=${h##*/}; echo $h $(busctl get-property org.bluez "
                    "/org/bluez/$h org.bluez.Adapter1 Discovering 2>/dev/null); done", check=False).stdout
        rows = [ln.split() for ln in got.splitlines()]
        return [r[0] for r in rows if r[-1:] == ["true"]]

    box = wait("the box's scanner on a controller (an adapter of BlueZ with Discovering true)", discovering, 120)
    out["box_adapter"] = box
    out["radio_found_controller_s"] = round(time.monotonic() - t, 1)
    out["radio"] = radio()["radio"]
    others = [h for h in out["controllers"] if h not in box]  # (bluetoothd's adapters only)
    if len(others) < len(DICE):
        raise RuntimeError(f"controllers {out['controllers']}: the box scans on {box}, none is left for the dice")
    dice = [{"pixel": p, "name": n, "side": s, "face": f, "hci": h, "id": f"pixels:{p:08x}"}
            for (p, n, s, f), h in zip(DICE, others)]
    out["dice_on"] = {d["name"]: d["hci"] for d in dice}

    def advertise(*steps) -> None:
        """Each (die, state, face) advertised in turn, half a second apart, in one SSH call: each its own
        advertising report, given time to reach the box as a D-Bus change of its own (two changes of a device
        close together could reach bleak as one, the last: not tried, kept clear of)."""
        cmds = []
        for d, state, face in steps:
            adv, rsp = pixels_ad(d["pixel"], d["name"], state, face)
            cmds.append(f"btmgmt --index {d['hci'].removeprefix('hci')} add-adv -c -d {adv.hex()} -s {rsp.hex()} 1")
        m.ssh("set -e; " + "; sleep 0.5; ".join(cmds), timeout=120)

    # each die lying on the table, face 1 up (after a first throw: the box hears a change)
    advertise(*[(d, "rolling", 3) for d in dice], *[(d, "rolled", 1) for d in dice])

    def heard():
        h = {x["die"]: x for x in radio()["heard"]}
        return h if all(d["id"] in h for d in dice) else None

    got = wait("both dice heard by the box", heard, 60)
    out["heard"] = [{k: got[d["id"]].get(k) for k in ("die", "name", "state", "face", "battery", "rssi", "address")}
                    for d in dice]

    # a conquest match whose dice are the table's smart dice, at a combat: its moves made through the API
    from companion.core.match import fold

    players = ["Ada", "Bo", "Cy"]
    status, match = org.call("POST", "/api/matches", {"game": "conquest-italy", "players": players,
                                                      "label": "dice", "options": {"dice": "smart"}})
    if status != 201:
        raise RuntimeError(f"creating the conquest match: {status} {match}")
    mid = match["id"]
    out["match"] = mid

    def events():
        status, doc = org.call("GET", f"/api/matches/{mid}/events")
        return doc.get("events") if isinstance(doc, dict) else doc

    def state():
        evs = events()
        return fold("conquest-italy", players, evs, match.get("options")).game_state, evs[-1]["seq"] if evs else 0

    def post(kind, data):
        _, seq = state()
        status, doc = org.call("POST", f"/api/matches/{mid}/events", {"type": kind, "data": data, "expected_seq": seq})
        if status != 201:
            raise RuntimeError(f"{kind}: {status} {doc}")

    status, doc = org.call("POST", f"/api/matches/{mid}/conquest/deal", {"data": {}, "expected_seq": 0})
    if status not in (200, 201):
        raise RuntimeError(f"the deal: {status} {doc}")
    s, _ = state()
    while s["phase"] == "place":
        p = s["next_placer"]
        post("setup.place", {"player": p, "placements": {ci.held(s, p)[0]: min(5, s["reserve"][p])}})
        s, _ = state()
    post("clock.start", {})
    for p in players:
        post("objective.set", {"player": p, "cities": [ci.held(s, p)[0]]})
    s, _ = state()
    gm = ci.conquest_map.default_map()
    who = ci.current_turn(s)["player"]
    due = ci.reinforcements(gm, ci.held(s, who), ci.units_on_map(s, who))["placeable"]
    best = max(ci.held(s, who), key=lambda c: (s["units"][c], c))
    if due:
        post("reinforce", {"player": who, "placements": {best: due}})
    s, seq = state()
    a, t, fixes = one_die_attack(s, gm, who)
    for fix in fixes:
        post("territory.set", fix)
    s, seq = state()
    attack = {"player": who, "from": a, "to": t, "dice": 1}
    status, doc = org.call("POST", "/api/dice/sets", {"name": "Tavolo 1", "match_id": mid,
                                                      "dice": [{"die": d["id"], "side": d["side"]} for d in dice]})
    if status != 201:
        raise RuntimeError(f"binding the dice: {status} {doc}")
    status, doc = org.call("POST", f"/api/matches/{mid}/dice/roll", {"what": "combat", "data": attack,
                                                                     "expected_seq": seq})
    out["roll_asked"] = {"status": status, "need": doc.get("need") if isinstance(doc, dict) else doc}
    if status != 202:
        raise RuntimeError(f"asking the box to read the dice: {status} {doc}")
    t = time.monotonic()
    # each die thrown: picked up, rolling for a moment, then on its face
    advertise(*[(d, "handling", 1) for d in dice], *[(d, "rolling", 4) for d in dice],
              *[(d, "rolled", d["face"]) for d in dice])

    def combat():
        evs = events()
        return evs[-1] if evs and evs[-1]["type"] == "combat" else None

    last = wait("the combat read from the dice", combat, 60)
    out["combat_after_s"] = round(time.monotonic() - t, 1)
    data = last.get("data") or {}
    out["combat"] = {k: data.get(k) for k in ("from", "to", "attack_dice", "defend_dice", "rolled_by")}
    want = {d["side"]: [d["face"]] for d in dice}
    fails = []
    if data.get("rolled_by") != "dice":
        fails.append(f"the combat's rolled_by is {data.get('rolled_by')!r}")
    if data.get("attack_dice") != want["attack"] or data.get("defend_dice") != want["defend"]:
        fails.append(f"the combat took {data.get('attack_dice')} against {data.get('defend_dice')}, the dice "
                     f"rolled {want['attack']} against {want['defend']}")
    out["failed"] = fails
    report["dice_read_over_bluez"] = not fails
    if fails:
        report["reasons"]["dice_read_over_bluez"] = "; ".join(fails)
    bt_log(json.dumps(out, indent=1, default=str))
