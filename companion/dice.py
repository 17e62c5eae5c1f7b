"""Smart dice over Bluetooth LE: the box hears the table's dice and reads their faces (docs/dice.md).

An adapter like the GPIO panel (``companion/gpio.py``): it turns what the radio hears into :class:`Reading`
(a die, its roll state, the face up, the battery) and tells its subscribers; the dice service
(``companion/services/dice.py``) decides what a reading means for a match. No game rule lives here.
``bleak`` (the optional extra ``companion[dice]``) is imported only in this module, and only when a real
radio is asked for: the base install runs without it.

Two kinds of dice, by their published protocols:

- **Pixels** (GameWithPixels) advertise their state without pairing, so the box reads many dice at once.
  The advertisement's manufacturer data is ``ledCount, designAndColor, rollState, currentFaceIndex,
  battery`` (one byte each; the battery's top bit is "charging") and its service data ``pixelId`` and the
  firmware's build time (32-bit little-endian each); dice from before July 2022 sent ``pixelId, rollState,
  face, battery`` in a 7-byte manufacturer data whose company id holds the LED count and design. The
  Pixels service is ``a6b90001-7a5a-43f2-a962-350c8edc9b5b`` (``6e400001-b5a3-f393-e0a9-e50e24dcca9e`` on
  older firmware). Roll states: 0 unknown, 1 rolled, 2 handling, 3 rolling, 4 crooked, 5 on a face without
  a roll.
- **GoDice** (Particula) are read over a connection: the box connects to the GoDice bound to a table and
  listens on the Nordic UART notify characteristic (``6e400003-…``): ``R`` (rolling), ``S``+x,y,z (stable:
  the face is the axis the acceleration points along), ``TS``/``FS``/``MS``+x,y,z (tilted, fake or moved
  stable: not a roll), ``Bat``+level, ``Col``+colour.

Modes (:func:`attach`): ``auto`` uses bleak where it is installed and the box has a Bluetooth adapter,
and otherwise says why in one sentence (``status()["reason"]``); ``mock`` replays advertisements from a
file the tests write (:class:`MockSource`); ``off`` hears nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import struct
import threading
import time
from dataclasses import asdict, dataclass, field

log = logging.getLogger("companion.dice")

MODES = ("auto", "mock", "off")
MOCK_ENV = "COMPANION_DICE_MOCK"  # the file a mock radio replays (the tests' MockDice write it)

PIXELS_SERVICE = "a6b90001-7a5a-43f2-a962-350c8edc9b5b"
PIXELS_LEGACY_SERVICE = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
GODICE_NOTIFY = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
GODICE_WRITE = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
GODICE_PREFIX = "GoDice"
# the RSSI a controller reports when it has none (HCI's LE Advertising Report: 127, "not available"); BlueZ
# passes it on as a device's RSSI, which is no signal strength
RSSI_UNKNOWN = 127

# the Pixels' published enumerations (pixels-js: PixelRollState, PixelDieType, PixelColorway)
ROLL_STATES = {0: "unknown", 1: "rolled", 2: "handling", 3: "rolling", 4: "crooked", 5: "still"}
DIE_TYPES = {0: "unknown", 1: "d4", 2: "d6", 3: "d8", 4: "d10", 5: "d00", 6: "d12", 7: "d20", 8: "d6pipped",
             9: "d6fudge"}
COLORWAYS = {0: "unknown", 1: "onyxBlack", 2: "hematiteGrey", 3: "midnightGalaxy", 4: "auroraSky", 5: "clear",
             6: "whiteAurora", 255: "custom"}
LED_DIE_TYPES = {4: "d4", 6: "d6", 8: "d8", 10: "d10", 12: "d12", 20: "d20", 21: "d6pipped"}
GODICE_COLOURS = {0: "black", 1: "red", 2: "green", 3: "blue", 4: "yellow", 5: "orange"}
# firmware built up to 2023-11-17 reports some d4/d6 faces under other indices (pixels-js DiceUtils)
BAD_NORMALS_UNTIL = 1704150000  # seconds
_BAD_D6 = {4: 2, 3: 3, 2: 4, 1: 5}
_BAD_D4 = {3: 2, 2: 3, 5: 4}
SIX_SIDED = ("d6", "d6pipped")
# GoDice D6: the face up is the one whose axis the acceleration points along (GoDice's published vectors)
_GODICE_D6 = {1: (-64, 0, 0), 2: (0, 0, 64), 3: (0, 64, 0), 4: (0, -64, 0), 5: (0, 0, -64), 6: (64, 0, 0)}


# -- what the radio hears --------------------------------------------------------------------------

@dataclass(frozen=True)
class Advertisement:
    """One advertisement as a BLE scan reports it (bleak's ``AdvertisementData``): the manufacturer data by
    company id without those two bytes, the service data by full service UUID."""
    address: str
    name: str | None = None
    rssi: int | None = None
    manufacturer_data: dict = field(default_factory=dict)
    service_data: dict = field(default_factory=dict)
    service_uuids: tuple = ()

    def to_json(self) -> dict:
        return {"address": self.address, "name": self.name, "rssi": self.rssi,
                "manufacturer_data": {str(k): v.hex() for k, v in self.manufacturer_data.items()},
                "service_data": {k: v.hex() for k, v in self.service_data.items()},
                "service_uuids": list(self.service_uuids)}

    @classmethod
    def from_json(cls, doc: dict) -> "Advertisement":
        return cls(address=str(doc["address"]), name=doc.get("name"), rssi=doc.get("rssi"),
                   manufacturer_data={int(k): bytes.fromhex(v) for k, v in (doc.get("manufacturer_data") or {}).items()},
                   service_data={str(k).lower(): bytes.fromhex(v) for k, v in (doc.get("service_data") or {}).items()},
                   service_uuids=tuple(str(u).lower() for u in doc.get("service_uuids") or ()))


@dataclass(frozen=True)
class Reading:
    """A die as last heard: ``die`` is its stable id (``pixels:<pixel id>``, ``godice:<address>``)."""
    die: str
    kind: str  # "pixels" | "godice"
    name: str
    state: str  # rolling | handling | rolled | crooked | still | unknown
    face: int | None = None
    battery: int | None = None
    charging: bool = False
    rssi: int | None = None
    colour: str | None = None
    die_type: str = "unknown"
    address: str | None = None

    @property
    def six_sided(self) -> bool:
        return self.die_type in SIX_SIDED

    def to_json(self) -> dict:
        return asdict(self)


def face_from_index(index: int, die_type: str, firmware_s: int | None) -> int:
    """The number on the face up of a Pixels die from its face index (pixels-js ``faceFromIndex``)."""
    if firmware_s is not None and firmware_s <= BAD_NORMALS_UNTIL:
        if die_type == "d4":
            return _BAD_D4.get(index, 1)
        if die_type == "d6":
            return _BAD_D6.get(index, index + 1)
    if die_type == "d10":
        return index
    if die_type == "d00":
        return index * 10
    if die_type == "unknown":
        return index
    return index + 1


LEGACY_FIRMWARE_S = 1656633600  # 2022-07-01: what a die of the first advertisement format is taken for


def parse_pixels(adv: Advertisement) -> Reading | None:
    """A Pixels die's reading from its advertisement, or None when it is not a Pixels die (or the data is
    not the published layout)."""
    uuids = {u.lower() for u in adv.service_uuids}
    if PIXELS_SERVICE not in uuids and PIXELS_LEGACY_SERVICE not in uuids:
        return None
    if not adv.manufacturer_data:
        return None
    company, manuf = next(iter(adv.manufacturer_data.items()))
    service = next((v for v in adv.service_data.values() if len(v) >= 8), None)
    if service is not None and len(manuf) >= 5:
        pixel_id, firmware = struct.unpack_from("<II", service, 0)
        leds, design, roll, index, battery = manuf[:5]
        colour = COLORWAYS.get(design & 0x0F, "unknown")
        die_type = DIE_TYPES.get((design >> 4) & 0x0F, "unknown")
        if die_type == "unknown":
            die_type = LED_DIE_TYPES.get(leds, "unknown")
        level, charging = battery & 0x7F, bool(battery & 0x80)
    elif service is None and len(manuf) == 7:  # before July 2022
        pixel_id, roll, index, raw = struct.unpack_from("<IBBB", manuf, 0)
        leds = (company >> 8) & 0xFF
        colour, die_type = "unknown", LED_DIE_TYPES.get(leds, "unknown")
        level, charging, firmware = round(raw / 255 * 100), False, LEGACY_FIRMWARE_S
    else:
        return None
    if not pixel_id:
        return None
    state = ROLL_STATES.get(roll, "unknown")
    return Reading(die=f"pixels:{pixel_id:08x}", kind="pixels", name=adv.name or f"Pixel {pixel_id:08x}",
                   state=state, face=face_from_index(index, die_type, firmware), battery=level, charging=charging,
                   rssi=adv.rssi, colour=colour, die_type=die_type, address=adv.address)


def is_godice(adv: Advertisement) -> bool:
    return bool(adv.name) and adv.name.startswith(GODICE_PREFIX)


def godice_face(xyz) -> int:
    """The face up of a GoDice D6 from its acceleration (x, y, z): the face whose vector it is nearest to."""
    x, y, z = xyz
    return min(_GODICE_D6, key=lambda f: sum((a - b) ** 2 for a, b in zip((x, y, z), _GODICE_D6[f])))


def parse_godice(data: bytes) -> dict:
    """One GoDice notification: ``{"state", "face"?, "battery"?, "colour"?}`` (an empty dict when it is not
    a message the box reads)."""
    if not data:
        return {}
    if data[:3] == b"Bat" and len(data) >= 4:
        return {"battery": data[3]}
    if data[:3] == b"Col" and len(data) >= 4:
        return {"colour": GODICE_COLOURS.get(data[3], "unknown")}
    if data[:1] == b"R":
        return {"state": "rolling"}
    if data[:1] == b"S" and len(data) >= 4:
        return {"state": "rolled", "face": godice_face(struct.unpack(">bbb", data[1:4]))}
    if len(data) >= 5 and data[1:2] == b"S" and data[:1] in (b"T", b"F", b"M"):
        face = godice_face(struct.unpack(">bbb", data[2:5]))
        return {"state": "crooked" if data[:1] == b"T" else "still", "face": face}
    return {}


# -- the radio -------------------------------------------------------------------------------------

class DiceRadio:
    """The box's ears: what each die said last, and a callback per reading. Built by :func:`attach`.

    ``source`` runs the radio (``start(radio)``/``stop()``/``connect(addresses)``): it calls
    :meth:`advertised` and :meth:`notified` from its own thread."""

    # a die not heard for this long is out of range (Pixels advertise several times a second)
    GONE_S = 10.0

    def __init__(self, source=None, *, mode: str = "off", requested: str | None = None, reason: str = "",
                 monotonic=time.monotonic, logger=None, retry_s: float | None = None):
        self.source = source
        self.mode = mode
        self.requested = requested or mode
        self.reason = reason
        self._ready_reason = reason
        # a radio that is not there yet (the Pi's Bluetooth adapter comes up after the service, bluetoothd
        # not yet on D-Bus) is tried again every retry_s seconds, "waiting" meanwhile; None: off at once
        self.retry_s = retry_s
        self._closed = threading.Event()
        self.monotonic = monotonic
        self.log = logger or log
        self._lock = threading.Lock()
        self._last: dict[str, tuple[Reading, float]] = {}
        self._godice: dict[str, dict] = {}  # address -> what its notifications said (name, battery, colour)
        self._subscribers: list = []
        self._started = False

    # -- life ------------------------------------------------------------------------------------
    def start(self) -> "DiceRadio":
        if self.source is not None and not self._started:
            self._started = True
            try:
                self.source.start(self)
            except Exception as exc:  # no adapter, D-Bus refused: the box runs without dice
                if self.retry_s and not isinstance(exc, ImportError):
                    self.mode, self.reason = "waiting", self._waiting_reason(exc)
                    self.log.warning("smart dice: %s", self.reason)
                    threading.Thread(target=self._try_again, name="companion-dice-wait", daemon=True).start()
                else:
                    self.log.warning("smart dice off: %s", exc)
                    self.mode, self.reason, self.source = "off", missing_reason(exc), None
        return self

    def _waiting_reason(self, exc: BaseException) -> str:
        return f"{missing_reason(exc)}; the box tries again every {self.retry_s:g} s"

    def _try_again(self) -> None:
        while not self._closed.wait(self.retry_s):
            try:
                self.source.start(self)
            except Exception as exc:
                self.reason = self._waiting_reason(exc)
                self.log.debug("smart dice: still %s", self.reason)
                continue
            if self._closed.is_set():  # closed while it started
                self.source.stop()
                return
            self.mode, self.reason = "radio", self._ready_reason
            self.log.warning("smart dice: the Bluetooth radio is there now (%s)", self.reason)
            return

    def close(self) -> None:
        self._closed.set()
        if self.source is not None and self.mode != "waiting":
            try:
                self.source.stop()
            except Exception:
                self.log.debug("dice radio stop failed", exc_info=True)

    def status(self) -> dict:
        return {"mode": self.mode, "requested": self.requested,
                "available": self.source is not None and self.mode != "waiting",
                "reason": self.reason, "heard": len(self._last)}

    # -- who listens ------------------------------------------------------------------------------
    def subscribe(self, callback) -> None:
        """``callback(reading, now)`` for every reading (from the radio's thread)."""
        self._subscribers.append(callback)

    def unsubscribe(self, callback) -> None:
        if callback in self._subscribers:
            self._subscribers.remove(callback)

    def connect(self, addresses) -> None:
        """Keep these GoDice connected (the dice bound to tables); others are let go."""
        if self.source is not None and hasattr(self.source, "connect"):
            self.source.connect(sorted(set(addresses)))

    # -- what the source calls ---------------------------------------------------------------------
    def advertised(self, adv: Advertisement) -> Reading | None:
        reading = parse_pixels(adv)
        if reading is None and is_godice(adv):
            known = self._godice.get(adv.address, {})
            prev = self._last.get(f"godice:{adv.address}")
            reading = Reading(die=f"godice:{adv.address}", kind="godice", name=adv.name or adv.address,
                              state=prev[0].state if prev else "unknown", face=prev[0].face if prev else None,
                              battery=known.get("battery"), rssi=adv.rssi, colour=known.get("colour"),
                              die_type="d6", address=adv.address)
        if reading is not None:
            self._heard(reading)
        return reading

    def notified(self, address: str, data: bytes, name: str | None = None) -> Reading | None:
        """A GoDice notification (its connection's)."""
        msg = parse_godice(bytes(data))
        if not msg:
            return None
        known = self._godice.setdefault(address, {})
        if name:
            known["name"] = name
        for k in ("battery", "colour"):
            if k in msg:
                known[k] = msg[k]
        prev = self._last.get(f"godice:{address}")
        reading = Reading(die=f"godice:{address}", kind="godice", name=known.get("name") or (prev[0].name if prev else address),
                          state=msg.get("state", prev[0].state if prev else "unknown"),
                          face=msg.get("face", prev[0].face if prev else None), battery=known.get("battery"),
                          rssi=prev[0].rssi if prev else None, colour=known.get("colour"), die_type="d6",
                          address=address)
        self._heard(reading)
        return reading

    def _heard(self, reading: Reading) -> None:
        now = self.monotonic()
        with self._lock:
            self._last[reading.die] = (reading, now)
        for cb in list(self._subscribers):
            try:
                cb(reading, now)
            except Exception:
                self.log.exception("dice subscriber failed")

    # -- what was heard ---------------------------------------------------------------------------
    def last(self, die: str) -> tuple[Reading, float] | None:
        with self._lock:
            return self._last.get(die)

    def heard(self) -> list[dict]:
        """Every die heard so far, the most recently heard first, with how long ago (seconds) and whether it
        is still in range."""
        now = self.monotonic()
        with self._lock:
            items = list(self._last.values())
        out = []
        for r, at in sorted(items, key=lambda x: -x[1]):
            ago = max(0.0, now - at)
            out.append({**r.to_json(), "ago_s": round(ago, 1), "in_range": ago <= self.GONE_S,
                        "six_sided": r.six_sided})
        return out


# -- sources ---------------------------------------------------------------------------------------

class MockSource:
    """A radio that replays advertisements (and GoDice notifications): fed in the process
    (:meth:`feed`, :meth:`notify`) or from a file of JSON lines that another process appends to
    (``{"adv": Advertisement.to_json()}`` or ``{"godice": address, "data": hex}``): the server started
    with ``--dice mock`` and ``$COMPANION_DICE_MOCK`` reads the lines the tests' MockDice write."""

    POLL_S = 0.05

    def __init__(self, path: str | None = None):
        self.path = path
        self.radio: DiceRadio | None = None
        self.connected: list[str] = []
        self._pos = 0
        self._stop = threading.Event()
        self._thread = None

    def start(self, radio: DiceRadio, thread: bool = True) -> None:
        self.radio = radio
        if self.path and thread:
            self._thread = threading.Thread(target=self._tail, name="companion-dice-mock", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def connect(self, addresses) -> None:
        self.connected = list(addresses)

    def feed(self, adv: Advertisement) -> Reading | None:
        return self.radio.advertised(adv) if self.radio is not None else None

    def notify(self, address: str, data: bytes) -> Reading | None:
        return self.radio.notified(address, data) if self.radio is not None else None

    def line(self, doc: dict) -> None:
        if "adv" in doc:
            self.feed(Advertisement.from_json(doc["adv"]))
        elif "godice" in doc:
            self.notify(str(doc["godice"]), bytes.fromhex(doc.get("data", "")))

    def read_new(self) -> int:
        """The lines appended to the file since the last call, replayed (how many)."""
        n = 0
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self._pos)
                for raw in fh:
                    if not raw.endswith(b"\n"):  # a line still being written
                        break
                    self._pos += len(raw)
                    n += 1
                    try:
                        self.line(json.loads(raw))
                    except (ValueError, KeyError, TypeError):
                        log.warning("mock dice: a line that is not an advertisement was skipped")
        except FileNotFoundError:
            pass
        return n

    def _tail(self) -> None:
        while not self._stop.is_set():
            self.read_new()
            self._stop.wait(self.POLL_S)


class BleakSource:
    """The real radio: bleak's scanner on an asyncio loop of its own thread (Pixels advertisements and the
    GoDice' names), and a connection to each GoDice bound to a table. ``scanner_factory`` and
    ``client_factory`` are bleak's ``BleakScanner``/``BleakClient`` unless injected (tests)."""

    RECONNECT_S = 5.0
    START_S = 15.0  # the longest a scan's start may take (bleak, bluetoothd, D-Bus) before it counts as failed

    def __init__(self, scanner_factory=None, client_factory=None):
        if scanner_factory is None or client_factory is None:
            import bleak  # the optional extra: ImportError when it is not installed (attach says so)

            scanner_factory = scanner_factory or bleak.BleakScanner
            client_factory = client_factory or bleak.BleakClient
        self.scanner_factory = scanner_factory
        self.client_factory = client_factory
        self.radio: DiceRadio | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread = None
        self._scanner = None
        self._links: dict[str, asyncio.Task] = {}

    def start(self, radio: DiceRadio) -> None:
        """Scans from a thread of its own; raises what stopped the scan from starting (again on a next call),
        and TimeoutError when it did not start within START_S (that thread then stops what it started late)."""
        self.radio = radio
        started, abandoned, error = threading.Event(), threading.Event(), []
        self._thread = threading.Thread(target=self._run, args=(started, abandoned, error), name="companion-dice",
                                        daemon=True)
        self._thread.start()
        if not started.wait(timeout=self.START_S):
            abandoned.set()
            raise TimeoutError(f"Bluetooth did not answer within {self.START_S:g} s")
        if error:
            raise error[0]

    def _run(self, started: threading.Event, abandoned: threading.Event, error: list) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            scanner = loop.run_until_complete(self._scan_start())
        except BaseException as exc:  # no adapter, BlueZ not running, D-Bus refused
            error.append(exc)
            started.set()
            loop.close()
            return
        if abandoned.is_set():  # start() gave up waiting: this late scan is stopped, not kept
            try:
                loop.run_until_complete(scanner.stop())
            except Exception:
                pass
            loop.close()
            return
        self.loop, self._scanner = loop, scanner
        started.set()
        loop.run_forever()

    async def _scan_start(self):
        scanner = self.scanner_factory(detection_callback=self._detected)
        await scanner.start()
        return scanner

    def _detected(self, device, data) -> None:
        """bleak's detection callback (``BLEDevice``, ``AdvertisementData``); rssi is on the data since
        bleak 0.19, on the device before."""
        rssi = getattr(data, "rssi", None)
        if rssi is None:
            rssi = getattr(device, "rssi", None)
        if rssi == RSSI_UNKNOWN:
            rssi = None
        adv = Advertisement(address=str(getattr(device, "address", "")),
                            name=getattr(data, "local_name", None) or getattr(device, "name", None), rssi=rssi,
                            manufacturer_data=dict(getattr(data, "manufacturer_data", {}) or {}),
                            service_data={str(k).lower(): bytes(v) for k, v in (getattr(data, "service_data", {}) or {}).items()},
                            service_uuids=tuple(str(u).lower() for u in getattr(data, "service_uuids", ()) or ()))
        try:
            self.radio.advertised(adv)
        except Exception:
            log.exception("a dice advertisement could not be read")

    def connect(self, addresses) -> None:
        if self.loop is None:
            return
        self.loop.call_soon_threadsafe(self._hold, list(addresses))

    def _hold(self, addresses) -> None:
        for addr in list(self._links):
            if addr not in addresses:
                self._links.pop(addr).cancel()
        for addr in addresses:
            if addr not in self._links:
                self._links[addr] = self.loop.create_task(self._link(addr))

    async def _link(self, address: str) -> None:
        """One GoDice: connect, listen, ask its battery and colour; again after a loss."""
        while True:
            client = None
            try:
                client = self.client_factory(address)
                await client.connect()

                def on_data(_char, data, address=address):
                    self.radio.notified(address, bytes(data))

                await client.start_notify(GODICE_NOTIFY, on_data)
                await client.write_gatt_char(GODICE_WRITE, bytearray([3]))   # battery level
                await client.write_gatt_char(GODICE_WRITE, bytearray([23]))  # colour
                while getattr(client, "is_connected", True):
                    await asyncio.sleep(1)
            except asyncio.CancelledError:
                try:
                    if client is not None:
                        await client.disconnect()
                except Exception:
                    pass
                raise
            except Exception as exc:
                log.info("GoDice %s: %s (trying again)", address, exc)
            await asyncio.sleep(self.RECONNECT_S)

    def stop(self) -> None:
        if self.loop is None:
            return

        async def halt():
            for t in self._links.values():
                t.cancel()
            if self._scanner is not None:
                try:
                    await self._scanner.stop()
                except Exception:
                    pass
            self.loop.stop()

        try:
            asyncio.run_coroutine_threadsafe(halt(), self.loop)
        except RuntimeError:
            return
        if self._thread is not None:
            self._thread.join(timeout=5)


def missing_reason(exc: BaseException) -> str:
    """The one sentence a person reads when the radio is not there."""
    if isinstance(exc, ImportError):
        return "smart dice need the optional extra: pip install 'companion[dice]' (bleak is not installed)"
    # bleak's own errors carry a second argument (BleakBluetoothNotAvailableError: the message, a reason code):
    # the message is the sentence
    args = getattr(exc, "args", ())
    text = (args[0] if args and isinstance(args[0], str) else str(exc)) or type(exc).__name__
    return f"no Bluetooth LE radio here ({text}): check that the Pi's Bluetooth is on (bluetoothctl show)"


def attach(mode: str = "auto", *, source=None, monotonic=time.monotonic, logger=None, start: bool = True,
           retry_s: float | None = None) -> DiceRadio:
    """The box's dice radio. Always returns a DiceRadio: in the ``off`` state (``status()["reason"]`` says
    why in one sentence) when bleak or a Bluetooth adapter is missing; with ``retry_s`` (the server's), a
    radio whose adapter or bluetoothd is not there yet is ``waiting`` and tried again every so many seconds."""
    from companion.base.errors import InputError

    lg = logger or log
    if mode not in MODES:
        raise InputError("must be one of {names}", "dice", names=", ".join(MODES))
    if source is not None:
        radio = DiceRadio(source, mode="mock" if isinstance(source, MockSource) else "radio", requested=mode,
                          reason=f"injected {type(source).__name__}", monotonic=monotonic, logger=lg,
                          retry_s=retry_s)
    elif mode == "off":
        radio = DiceRadio(None, mode="off", reason="smart dice are off (--dice off)", monotonic=monotonic, logger=lg)
    elif mode == "mock":
        radio = DiceRadio(MockSource(os.environ.get(MOCK_ENV)), mode="mock", requested=mode,
                          reason="mock dice: advertisements replayed from a file, no radio", monotonic=monotonic,
                          logger=lg)
    else:
        try:
            src = BleakSource()
        except ImportError as exc:
            lg.info("smart dice off: %s", missing_reason(exc))
            return DiceRadio(None, mode="off", requested=mode, reason=missing_reason(exc), monotonic=monotonic,
                             logger=lg)
        radio = DiceRadio(src, mode="radio", requested=mode, reason="Bluetooth LE via bleak", monotonic=monotonic,
                          logger=lg, retry_s=retry_s)
    if start:
        radio.start()
    return radio
