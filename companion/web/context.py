"""The web's context of the box's process: ``Ctx`` (the runtime's store, services, clock runner and GPIO panel,
and what only the web keeps: the live-update hub, the Host allow-list, the SSE heartbeat, the join links
shown now), ``open_context`` that builds it, and the club's join link shown now.

Without Flask: ``companion serve`` builds the context, answers ``/healthz`` and prints the join link before
the Flask app exists (``companion/web/asgi.py`` builds it on first need).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from companion.services.access import Access
from companion.web.netinfo import HostList

if TYPE_CHECKING:
    from companion.gpio import Panel
    from companion.runtime import Runtime
    from companion.services.boxtime import BoxTime
    from companion.services.clockrunner import ClockRunner
    from companion.services.dice import DiceTables
    from companion.services.matches import MatchService
    from companion.storage import Store
    from companion.web.hub import Hub


@dataclass(eq=False)
class Ctx:
    """The web app's context (``ctx()``): the box's runtime (store, services, clock runner, GPIO panel:
    ``companion/runtime.py``) and what only the web keeps: the live-update hub, the Host allow-list, the
    SSE heartbeat and the join links the screens show now."""

    runtime: Runtime
    hub: Hub
    hosts: HostList
    sse_heartbeat: float = 10.0
    join_lock: threading.Lock = field(default_factory=threading.Lock)  # guards join and table_links
    join: dict | None = None  # the club-wide join link shown now ({"token", "expires_at", ...})
    table_links: dict[str, dict] = field(default_factory=dict)  # match id -> its table link shown now
    wifi_switch: dict | None = None  # the organiser's last switch of it: {"thread", "error"}
    wifi_switch_delay: float = 1.0  # seconds between the switch's answer and the switch (web/wifi.py SWITCH_DELAY_S; tests: 0)

    @property
    def store(self) -> Store:
        return self.runtime.store

    @property
    def service(self) -> MatchService:
        return self.runtime.service

    @property
    def access(self) -> Access:
        return self.runtime.access

    @property
    def runner(self) -> ClockRunner | None:
        return self.runtime.runner

    @property
    def panel(self) -> Panel | None:
        return self.runtime.panel

    @property
    def dice(self) -> DiceTables | None:
        return self.runtime.dice

    @property
    def box_time(self) -> BoxTime | None:
        return self.runtime.box_time


def open_context(config: dict, runtime: Runtime) -> Ctx:
    """The context over ``runtime`` with the web's keys of ``config`` (``ALLOWED_HOSTS``, ``SSE_HEARTBEAT``):
    its hub hears the runtime's notices (events, matches, clock, smart dice)."""
    from companion.web.hub import Hub

    hub = Hub()
    c = Ctx(runtime=runtime, hub=hub, hosts=HostList(config.get("ALLOWED_HOSTS")),
            sse_heartbeat=float(config.get("SSE_HEARTBEAT", 10)))
    runtime.subscribe(lambda notice: hub.on_notice(c, notice))
    return c


def current_join(c: Ctx, base: str) -> dict:
    """The join link the server shows now (created when missing or expired), under ``base``."""
    with c.join_lock:
        cur = c.join
        if cur is None or not c.access.join_token_alive(cur["token"]):
            cur = c.access.shown_link(None)  # the link shown before a restart, while it works
            if cur is None:
                token, info = c.access.create_join_token(c.access.settings()["join_token_hours"])
                cur = {"token": token, **info}
                c.access.remember_shown_link(None, token, info)
            c.join = cur
    return {"url": f"{base}/j/{cur['token']}", "expires_at": cur["expires_at"]}
