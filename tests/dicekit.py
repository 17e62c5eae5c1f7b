"""MockDice: smart dice for the tests, their advertisements built from the published layouts.

This is an independent writer of the formats ``companion/dice.py`` reads (GameWithPixels' communications
protocol: manufacturer data ``ledCount, designAndColor, rollState, faceIndex, battery|charging``, service
data ``pixelId, buildTimestamp`` little-endian; the first format's 7-byte manufacturer data; GoDice's
``R``/``S``+xyz/``Bat``/``Col`` notifications), so a test that passes shows the reader agrees with the
layout, not with itself. A MockDice writes to a ``companion.dice.MockSource`` in the process, or appends
JSON lines to the file a server started with ``--dice mock`` replays (``$COMPANION_DICE_MOCK``).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from companion.dice import Advertisement

PIXELS_UUID = "a6b90001-7a5a-43f2-a962-350c8edc9b5b"       # the Pixels die service (current firmware)
LEGACY_UUID = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"       # the first firmware's (Nordic UART)
INFO_UUID = "0000180a-0000-1000-8000-00805f9b34fb"         # Device Information: the service data's key
STATE = {"unknown": 0, "rolled": 1, "handling": 2, "rolling": 3, "crooked": 4, "still": 5}
D6, D6_PIPPED, D20 = 2, 8, 7
FIRMWARE_2024 = 1717000000   # 2024-05-29: after the firmware that reported some faces under other indices
FIRMWARE_2023 = 1690000000   # 2023-07-22: one of those


class MockDie:
    def __init__(self, pixel_id: int, name: str, *, colorway: int = 1, die_type: int = D6, leds: int = 6,
                 firmware: int = FIRMWARE_2024, battery: int = 87, charging: bool = False,
                 address: str | None = None, company: int = 0xFFFF, legacy: bool = False):
        self.pixel_id, self.name, self.colorway, self.die_type, self.leds = pixel_id, name, colorway, die_type, leds
        self.firmware, self.battery, self.charging, self.company, self.legacy = firmware, battery, charging, company, legacy
        self.address = address or "C0:FF:EE:%02X:%02X:%02X" % ((pixel_id >> 16) & 255, (pixel_id >> 8) & 255, pixel_id & 255)
        self.face = 1
        if legacy:  # a die of the first format is taken for a July 2022 firmware (its d6 faces by the old indices)
            self.firmware = 1656633600

    @property
    def id(self) -> str:
        return f"pixels:{self.pixel_id:08x}"

    def index(self, face: int) -> int:
        if self.die_type == D6 and self.firmware <= 1704150000:  # the old firmware's d6 face indices
            return {1: 0, 2: 4, 3: 3, 4: 2, 5: 1, 6: 5}[face]
        return face - 1

    def advertisement(self, state: str, face: int | None = None, rssi: int = -60) -> Advertisement:
        face = self.face if face is None else face
        if self.legacy:
            battery = round(self.battery / 100 * 255)
            manuf = struct.pack("<IBBB", self.pixel_id, STATE[state], self.index(face), battery)
            company = (self.leds << 8) | 0
            return Advertisement(address=self.address, name=self.name, rssi=rssi, manufacturer_data={company: manuf},
                                 service_data={}, service_uuids=(LEGACY_UUID,))
        manuf = bytes([self.leds, (self.die_type << 4) | self.colorway, STATE[state], self.index(face),
                       (self.battery & 0x7F) | (0x80 if self.charging else 0)])
        service = struct.pack("<II", self.pixel_id, self.firmware)
        return Advertisement(address=self.address, name=self.name, rssi=rssi, manufacturer_data={self.company: manuf},
                             service_data={INFO_UUID: service}, service_uuids=(INFO_UUID, PIXELS_UUID))


class MockDice:
    """Advertisements to a sink: a ``MockSource`` (``.feed``) or a file (one JSON line each)."""

    def __init__(self, sink):
        self.sink = sink
        self.sent = 0

    def send(self, adv: Advertisement) -> None:
        self.sent += 1
        if isinstance(self.sink, (str, Path)):
            with open(self.sink, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"adv": adv.to_json()}) + "\n")
        else:
            self.sink.feed(adv)

    def godice(self, address: str, data: bytes) -> None:
        if isinstance(self.sink, (str, Path)):
            with open(self.sink, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"godice": address, "data": data.hex()}) + "\n")
        else:
            self.sink.notify(address, data)

    def lie(self, die: MockDie, face: int | None = None, state: str = "rolled") -> None:
        """The die as it lies (its advertisement repeated while nothing moves)."""
        if face is not None:
            die.face = face
        self.send(die.advertisement(state))

    def roll(self, die: MockDie, face: int, steps: int = 3) -> None:
        """Picked up, rolling for a moment, then on ``face``: what the radio hears of one throw."""
        self.send(die.advertisement("handling"))
        for _ in range(steps):
            self.send(die.advertisement("rolling", face=(die.face % 6) + 1))
        die.face = face
        self.send(die.advertisement("rolled"))

    def start_rolling(self, die: MockDie) -> None:
        self.send(die.advertisement("rolling"))

    def land(self, die: MockDie, face: int, state: str = "rolled") -> None:
        die.face = face
        self.send(die.advertisement(state))


# GoDice: (x, y, z) the die reports with each face up (its published D6 vectors, with a little noise)
GODICE_XYZ = {1: (-62, 3, -2), 2: (1, -4, 63), 3: (2, 61, 5), 4: (-3, -63, 1), 5: (4, 2, -62), 6: (63, -1, 3)}


def godice_stable(face: int) -> bytes:
    return b"S" + struct.pack(">bbb", *GODICE_XYZ[face])


def godice_tilted(face: int) -> bytes:
    return b"TS" + struct.pack(">bbb", *GODICE_XYZ[face])


def conquest_at_combat(svc, players=("Anna", "Bruno", "Carla"), options=None, seed=4, at=None):
    """A conquest match of ``svc`` (a MatchService) dealt, placed, started, objectives set and the first
    player reinforced: at the combat step. Returns ``(match_id, attack)`` with ``attack`` = ``{"player",
    "from", "to"}`` of a possible attack (the attacker's city with the most units)."""
    import random

    from companion.games import conquest_italy as ci

    players = list(players)
    m = svc.create("conquest-italy", players, {"dice": "smart", **(options or {})})
    mid = m["id"]
    gm = ci.conquest_map.default_map()
    owner, _ = ci.deal(players, gm, random.Random(seed))
    svc.append(mid, "setup.deal", {"owner": owner})
    s = svc.fold(mid).game_state
    while s["phase"] == "place":
        p = s["next_placer"]
        mine = ci.held(s, p)
        svc.append(mid, "setup.place", {"player": p, "placements": {mine[0]: min(5, s["reserve"][p])}})
        s = svc.fold(mid).game_state
    svc.append(mid, "clock.start", {})
    for p in players:
        svc.append(mid, "objective.set", {"player": p, "cities": [ci.held(s, p)[0]]})
    s = svc.fold(mid).game_state
    who = ci.current_turn(s)["player"]
    due = ci.reinforcements(gm, ci.held(s, who), ci.units_on_map(s, who))["placeable"]
    best = max(ci.held(s, who), key=lambda c: (s["units"][c], c))
    if due:
        svc.append(mid, "reinforce", {"player": who, "placements": {best: due}})
    s = svc.fold(mid).game_state
    targets = sorted((a, d) for a in ci.held(s, who) if s["units"][a] >= 4
                     for d in gm.cities if s["owner"][d] != who and gm.can_attack(a, d) is not None)
    a, d = max(targets, key=lambda t: (s["units"][t[0]], s["units"][t[1]]))
    return mid, {"player": who, "from": a, "to": d}
