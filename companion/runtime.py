"""The box's process: one object builds, starts and stops everything that runs beside the web app.

``companion serve`` (``companion/cli/serve.py``) is, in order::

    runtime = Runtime.open(data_dir=..., gpio="auto")  # the store, the services, the clock runner, the
                                                       # announcer, the GPIO panel, the smart dice, the
                                                       # box's time and its own Wi-Fi, built, not running
    app = create_app(runtime=runtime)                  # Flask, its blueprints and the live-update hub only
    runtime.public_url = "http://192.168.1.20:8080"    # once the port is bound: the base of join links
    runtime.start()                                    # the clock runner's thread (recovery first), the
                                                       # dice tables' when the dice radio is on
    ...serve...
    runtime.stop(clean=True)                           # running clocks paused as server-stopped, the
                                                       # box's pins and the dice radio released, the
                                                       # store closed

What the match service, the clock runner and the GPIO panel tell their listeners has one shape,
``callback(notice)`` (:mod:`companion.base.notices`); :meth:`Runtime.subscribe` hands a listener the
service's, the runner's and the dice tables' notices (the web's live-update hub is one).

The modules of the clock runner, the announcer, the GPIO panel (gpiozero) and the dice radio (bleak) are
imported by :meth:`Runtime.open` when it builds them, never by the web app's module.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from companion.base.resources import database_path
from companion.services.access import Access
from companion.services.matches import MatchService

if TYPE_CHECKING:  # (imported when built: see the module's docstring)
    from companion.announcer import Announcer
    from companion.gpio import Panel
    from companion.services.boxtime import BoxTime
    from companion.services.clockrunner import ClockRunner
    from companion.services.dice import DiceTables
    from companion.services.hotspot import Hotspot
    from companion.storage import Store

log = logging.getLogger(__name__)

AUTO = "auto"


def new_setup_code() -> str:
    """The first-run code for choosing the organiser PIN (printed by ``companion serve``)."""
    return "".join(secrets.choice("0123456789") for _ in range(8))


DICE_RETRY_S = 10.0  # how often a dice radio that is not there yet is tried again (docs/dice.md)


class OffRadio:
    """The dice radio while the smart dice are off (``--dice off``, the default): companion/dice.py's radio in
    its ``off`` state, made at the first question asked of it (the dice page's status, a set bound to a
    table); until then it only keeps who subscribed. A start with the dice off imports none of that module
    (its Bluetooth decoders and their dataclasses)."""

    def __init__(self):
        self._radio = None
        self._subscribers: list = []
        self._lock = threading.Lock()

    def _real(self):
        with self._lock:
            if self._radio is None:
                from companion import dice

                radio = dice.attach("off")
                for callback in self._subscribers:
                    radio.subscribe(callback)
                self._subscribers = []
                self._radio = radio
            return self._radio

    def subscribe(self, callback) -> None:
        with self._lock:
            if self._radio is None:
                self._subscribers.append(callback)
                return
        self._radio.subscribe(callback)

    def unsubscribe(self, callback) -> None:
        with self._lock:
            if self._radio is None:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)
                return
        self._radio.unsubscribe(callback)

    def close(self) -> None:
        if self._radio is not None:
            self._radio.close()

    def __getattr__(self, name: str):  # everything else is the real radio's (status, heard, last, GONE_S ...)
        if name.startswith("__") or name in ("_radio", "_subscribers", "_lock"):
            raise AttributeError(name)
        return getattr(self._real(), name)


@dataclass(eq=False)
class Runtime:
    """The parts of one running box. ``owns_store``: :meth:`stop` closes the store (it was opened here)."""

    store: Store
    service: MatchService
    access: Access
    announcer: Announcer
    runner: ClockRunner | None = None
    panel: Panel | None = None
    dice: DiceTables | None = None  # the tables' smart dice (docs/dice.md); its radio is off unless asked for
    box_time: BoxTime | None = None  # the box's time from an organiser's phone (no battery clock, no NTP)
    hotspot: Hotspot | None = None  # the box's own Wi-Fi through NetworkManager (nmcli)
    dice_mode: str = "off"  # the dice radio asked for (auto, mock, off)
    setup_code: str = ""
    public_url: str | None = None  # the base of join links (``http://<address>:<port>``), once known
    owns_store: bool = False
    started: bool = False
    gpio_mode: str = "off"  # the button panel asked for (auto, mock, off); ``panel`` once attached
    panel_pending: bool = False  # an attach asked for later (``panel_later``) has neither succeeded nor failed yet
    stopped: bool = False

    @classmethod
    def open(cls, *, store: Store | None = None, db_path: str | None = None, data_dir: str | None = None,
             clock: Any = None, rng: Any = None, service: MatchService | None = None,
             runner: Any = AUTO, announcer: Announcer | None = None, gpio: str | None = None,
             dice: str | None = None, box_time: bool = True, box_time_options: dict | None = None,
             setup_code: str | None = None, public_url: str | None = None,
             panel_later: bool = False) -> Runtime:
        """Build the box's parts; nothing runs yet (:meth:`start`).

        ``store`` (an open Store, kept open by :meth:`stop`), else the database at ``db_path``, else
        ``companion.db`` in ``data_dir`` ($COMPANION_DATA, else ./data), with ``clock`` (default: the
        server's monotonic wall clock, never before the last stored event). ``rng``: the random source of
        the Pi's dice and deals (default: the OS's). ``runner``: ``"auto"`` (the clock runner), None (no
        live clock: tests of the API) or a runner. ``announcer``: default from $COMPANION_ANNOUNCER
        (off unless ``it`` or ``en``). ``gpio``: None or ``off`` (no button panel), ``auto`` or ``mock``. ``dice``: the
        smart dice radio, ``auto``, ``mock`` or None/``off`` (the default). ``box_time``: adopt an organiser's
        phone's time when the system clock has no source (the server's clock must be able to: ``adopt``);
        ``box_time_options``: ``synchronised``, ``boot``, ``system_now`` (tests). ``panel_later``: the
        panel is not attached here but by :meth:`attach_panel` (``companion serve`` attaches it once it
        listens: gpiozero's import and its pins are about a second of a Pi's start)."""
        owns = store is None
        if store is None:
            store = _open_store(db_path or database_path(data_dir), clock)
        try:
            service = service or MatchService(store, rng=rng)
            if runner == AUTO:
                from companion.services.clockrunner import ClockRunner

                runner = ClockRunner(service, store, store.clock, rng=rng)
            rt = cls(store=store, service=service, access=Access(store), announcer=_announcer(announcer),
                     runner=runner, setup_code=setup_code or new_setup_code(), public_url=public_url,
                     owns_store=owns)
            if rt.announcer.enabled():
                rt.subscribe_clock_and_events(rt.announcer.on_event, rt.announcer.on_clock)
            if box_time and hasattr(store.clock, "adopt"):
                from companion.services.boxtime import BoxTime

                rt.box_time = BoxTime(store, store.clock, runner, **(box_time_options or {}))
                try:
                    rt.box_time.restore()  # the time adopted earlier in this boot (a restart of the service)
                except Exception:
                    log.exception("could not take the box's adopted time again")
            rt.gpio_mode = gpio or "off"
            rt.panel_pending = panel_later and rt.gpio_mode != "off"
            if not panel_later:
                rt.attach_panel()
            from companion.services.dice import DiceTables

            rt.dice_mode = dice or "off"
            if rt.dice_mode == "off":
                radio = OffRadio()
            else:
                from companion import dice as radios

                # a Pi's Bluetooth adapter (and bluetoothd) may come up after the service: tried again
                radio = radios.attach(rt.dice_mode, retry_s=DICE_RETRY_S)
            rt.dice = DiceTables(service, store, radio)
            from companion.services.hotspot import Hotspot, StoreSettings

            rt.hotspot = Hotspot(StoreSettings(store))  # (runs nmcli only when asked)
        except BaseException:
            if owns:
                store.close()
            raise
        return rt

    @classmethod
    def from_config(cls, config: dict) -> Runtime:
        """A runtime from ``create_app``'s configuration keys (``STORE`` or ``DB_PATH``/``DATA_DIR``,
        ``CLOCK``, ``RNG``, ``SERVICE``, ``CLOCK_RUNNER``, ``ANNOUNCER``, ``GPIO``, ``DICE``, ``BOX_TIME`` and
        ``CLOCK_SYNCHRONISED``/``BOOT_ID``/``SYSTEM_NOW``, ``SETUP_CODE``, ``PUBLIC_URL``), so that ``create_app(config)`` alone still gives a working app (the tests')."""
        options = {k: config[v] for k, v in (("synchronised", "CLOCK_SYNCHRONISED"), ("boot", "BOOT_ID"),
                                             ("system_now", "SYSTEM_NOW")) if v in config}
        return cls.open(store=config.get("STORE"), db_path=config.get("DB_PATH"), data_dir=config.get("DATA_DIR"),
                        clock=config.get("CLOCK"), rng=config.get("RNG"), service=config.get("SERVICE"),
                        runner=config.get("CLOCK_RUNNER", AUTO), announcer=config.get("ANNOUNCER"),
                        gpio=config.get("GPIO"), dice=config.get("DICE"), box_time=config.get("BOX_TIME", True),
                        box_time_options=options, setup_code=config.get("SETUP_CODE"),
                        public_url=config.get("PUBLIC_URL"))

    # -- listeners ------------------------------------------------------------------------------
    def subscribe(self, callback) -> None:
        """``callback(notice)`` for every notice of the match service (events, new matches), of the clock
        runner (ticks, alerts) and of the dice tables (a roll's dice as they land)."""
        self.subscribe_clock_and_events(callback, callback)
        if self.dice is not None:
            self.dice.subscribe(callback)

    def subscribe_clock_and_events(self, on_event, on_clock) -> None:
        self.service.subscribe(on_event)
        if self.runner is not None:
            self.runner.subscribe(on_clock)

    def attach_panel(self) -> Panel | None:
        """Attach the GPIO button panel asked for (``gpio_mode``) unless it is attached or off; the panel
        (None when off). None is attached once the runtime is stopped. Pending no more once it returns or
        raises (:meth:`panel_status`)."""
        with _PANEL_LOCK:
            try:
                if self.panel is None and self.gpio_mode != "off" and not self.stopped:
                    from companion import gpio as pins

                    self.panel = pins.attach(self.service, self.runner, self.gpio_mode)
                return self.panel
            finally:
                self.panel_pending = False

    def panel_status(self) -> dict | None:
        """What ``/healthz`` and ``/api/hardware`` say of the GPIO panel: its status once attached,
        ``{"state": "starting", "requested": mode}`` while an attach asked for later is pending, None when
        off, stopped or after a failed attach. Never waits for the attach (which holds the panel's lock)."""
        pending = self.panel_pending  # read before the panel: an attach sets the panel, then clears this
        panel = self.panel
        if panel is not None:
            return panel.status()
        if pending:
            return {"state": "starting", "requested": self.gpio_mode}
        return None

    # -- running --------------------------------------------------------------------------------
    def start(self) -> None:
        """Start what runs in the background: the clock runner (which first recovers the clocks a power
        cut left running) and, when the dice radio is on, the dice tables' ticks."""
        if self.started:
            return
        if self.runner is not None:
            self.runner.start()
        if self.dice is not None and self.dice_mode != "off":
            self.dice.start()
        self.started = True

    def stop(self, clean: bool = False) -> None:
        """Stop the clock runner, release the box's pins and the dice radio, close the store (when opened
        here). ``clean``:
        a stop asked for (SIGTERM from ``systemctl stop``, Ctrl-C): the running clocks are paused now as
        ``server-stopped`` (not found running at the next start and taken for a power cut). Each part is
        stopped even when another fails (logged)."""
        if self.runner is not None:
            from companion.services.clockrunner import SERVER_STOPPED_REASON

            try:
                self.runner.stop(pause_reason=SERVER_STOPPED_REASON if clean else None)
            except Exception:
                log.exception("the clock runner did not stop cleanly")
        with _PANEL_LOCK:
            self.stopped, panel, self.panel_pending = True, self.panel, False
        for part, what in ((panel, "the GPIO panel"), (self.dice, "the dice tables"),
                           (self.dice.radio if self.dice is not None else None, "the dice radio")):
            if part is not None:
                try:
                    part.close()
                except Exception:
                    log.exception("%s did not close cleanly", what)
        self.started = False
        if self.owns_store:
            self.store.close()


_PANEL_LOCK = threading.Lock()  # (attached by one thread while another may stop the runtime)


def _open_store(path: str, clock) -> Store:
    from companion.base.timeutil import MonotonicWallClock, parse_iso
    from companion.storage import Store

    clock = clock or MonotonicWallClock()
    store = Store(path, clock=clock)
    if hasattr(clock, "not_before"):  # the server's clock never runs before the last stored event
        last = store.last_event_at()
        if last:
            clock.not_before(parse_iso(last))
    return store


def _announcer(given: Announcer | None) -> Announcer:
    """The spoken announcer on the box (espeak-ng): off unless $COMPANION_ANNOUNCER is ``it`` or ``en``."""
    from companion.announcer import ENV, Announcer, lang_from

    if given is not None:
        return given
    try:
        return Announcer(lang_from(os.environ.get(ENV)))
    except ValueError as exc:
        log.warning("%s; the announcer is off", exc)
        return Announcer(None)
