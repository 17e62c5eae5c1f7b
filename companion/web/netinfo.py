"""The Pi's addresses on the LAN (for the printed URL and the Host allow-list). Standard library only."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time

LOCAL_NAMES = {"localhost", "127.0.0.1", "::1"}


def primary_ip() -> str | None:
    """The address other machines on the LAN reach us at (no packet is sent)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("10.255.255.255", 1))
        ip = s.getsockname()[0]
        return None if ip.startswith("127.") or ip == "0.0.0.0" else ip
    except OSError:
        return None
    finally:
        s.close()


def _proc_local_ipv4() -> set[str]:
    """Linux: every local IPv4 address from /proc/net/fib_trie."""
    out = set()
    try:
        with open("/proc/net/fib_trie", encoding="ascii") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return out
    for i, line in enumerate(lines):
        if "/32 host LOCAL" in line and i > 0:
            ip = lines[i - 1].split()[-1]
            try:
                ipaddress.IPv4Address(ip)
            except ValueError:
                continue
            out.add(ip)
    return out


def _proc_local_ipv6() -> set[str]:
    out = set()
    try:
        with open("/proc/net/if_inet6", encoding="ascii") as fh:
            for line in fh:
                raw = line.split()[0]
                if len(raw) == 32:
                    out.add(str(ipaddress.IPv6Address(bytes.fromhex(raw))))
    except (OSError, ValueError):
        pass
    return out


def local_addresses() -> set[str]:
    """Every address of this machine, plus its host names (``name`` and ``name.local``)."""
    out = set(LOCAL_NAMES)
    out |= _proc_local_ipv4() | _proc_local_ipv6()
    ip = primary_ip()
    if ip:
        out.add(ip)
    try:
        name = socket.gethostname()
    except OSError:
        name = ""
    if name:
        out.add(name.lower())
        out.add(name.lower().split(".")[0] + ".local")
        try:
            for info in socket.getaddrinfo(name, None):
                out.add(info[4][0])
        except OSError:
            pass
    return out


def host_name_of(host_header: str) -> str:
    """``pi.local:8080`` -> ``pi.local``; ``[::1]:8080`` -> ``::1``; lower case."""
    h = (host_header or "").strip().lower()
    if h.startswith("["):
        end = h.find("]")
        return h[1:end] if end > 0 else h
    if h.count(":") == 1:
        return h.split(":", 1)[0]
    return h


class HostList:
    """localhost, this machine's addresses (re-read when an unknown host shows up: DHCP may
    give the Pi its address after start-up) and the configured names."""

    def __init__(self, extra):
        self.extra = {host_name_of(h) for h in extra or () if h}
        self._known = LOCAL_NAMES | self.extra
        self._read_at = 0.0
        self._lock = threading.Lock()

    def allowed(self, host_header: str) -> bool:
        name = host_name_of(host_header)
        if not name:
            return False
        if name in self._known:
            return True
        with self._lock:
            if time.monotonic() - self._read_at > 5:
                self._known = LOCAL_NAMES | self.extra | local_addresses()
                self._read_at = time.monotonic()
            return name in self._known
