"""The phone of `make pi-check`'s Wi-Fi step, run inside the check's machine in the phone's own network
namespace (``ip netns exec phone python3 pi_wifi_phone.py ...``), with the machine's python3 and nothing else
(image/pi_wifi.py copies it in). Each command prints one JSON document.

- ``dhcp IFACE``: a DHCP client of its own (DISCOVER, OFFER, REQUEST, ACK, as RFC 2131 says, broadcast replies
  asked for: the phone has no address yet), since the image has none that runs outside NetworkManager; the
  address, the router and the DNS server the box gave are then put on IFACE with ``ip`` (and the DNS server in
  /etc/netns/phone/resolv.conf, which ``ip netns exec`` shows the namespace as its /etc/resolv.conf, beside a
  hosts file of the phone's own: the machine's /etc/hosts is the box's);
- ``resolve NAME...``: each name's IPv4 addresses, through the namespace's resolv.conf (the box's DNS);
- ``get URL [JAR]``: one GET as a phone's browser makes it (redirects followed, cookies kept in the file JAR);
- ``probe URL``: one GET as a phone's connectivity check makes it (no redirect followed, no cookie).
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request

MAGIC = b"\x63\x82\x53\x63"
DISCOVER, OFFER, REQUEST, ACK, NAK = 1, 2, 3, 5, 6
# what the phone asks for: subnet mask, router, DNS server, domain name, lease time, server id
PARAMS = bytes([1, 3, 6, 15, 51, 54])


def dhcp_packet(kind: int, xid: int, mac: bytes, requested: str | None = None, server: str | None = None) -> bytes:
    """A client's DHCP message (BOOTREQUEST) of the given type, asking for a broadcast answer."""
    head = struct.pack("!BBBBIHH4s4s4s4s16s64s128s", 1, 1, 6, 0, xid, 0, 0x8000, bytes(4), bytes(4), bytes(4),
                       bytes(4), mac.ljust(16, b"\0"), bytes(64), bytes(128))
    opts = bytes([53, 1, kind]) + bytes([61, 7, 1]) + mac + bytes([55, len(PARAMS)]) + PARAMS
    if requested:
        opts += bytes([50, 4]) + socket.inet_aton(requested)
    if server:
        opts += bytes([54, 4]) + socket.inet_aton(server)
    return head + MAGIC + opts + b"\xff"


def dhcp_parse(data: bytes) -> dict | None:
    """A server's DHCP message: its type, xid, the address offered (yiaddr) and its options by number (raw
    bytes); None when it is not one."""
    if len(data) < 240 or data[0] != 2 or data[236:240] != MAGIC:
        return None
    xid = struct.unpack("!I", data[4:8])[0]
    yiaddr = socket.inet_ntoa(data[16:20])
    opts, i = {}, 240
    while i < len(data):
        code = data[i]
        if code == 255:
            break
        if code == 0:
            i += 1
            continue
        if i + 1 >= len(data):
            break
        n = data[i + 1]
        opts[code] = data[i + 2:i + 2 + n]
        i += 2 + n
    kind = opts.get(53, b"\0")[0]
    return {"type": kind, "xid": xid, "yiaddr": yiaddr, "options": opts}


def lease_of(msg: dict) -> dict:
    """What an ACK gives, readable: the address, its prefix, the router, the DNS servers, the lease's seconds."""
    o = msg["options"]
    mask = o.get(1)
    prefix = bin(int.from_bytes(mask, "big")).count("1") if mask else None

    def addrs(b):
        return [socket.inet_ntoa(b[i:i + 4]) for i in range(0, len(b or b""), 4)]

    return {"address": msg["yiaddr"], "prefix": prefix, "router": (addrs(o.get(3)) or [None])[0],
            "dns": addrs(o.get(6)), "server": (addrs(o.get(54)) or [None])[0],
            "lease_s": struct.unpack("!I", o[51])[0] if len(o.get(51, b"")) == 4 else None,
            "domain": o.get(15, b"").decode(errors="replace").rstrip("\0") or None}


def _exchange(sock, packet: bytes, xid: int, want: int, limit: float) -> dict:
    end = time.monotonic() + limit
    tries = 0
    while time.monotonic() < end:
        sock.sendto(packet, ("255.255.255.255", 67))
        tries += 1
        wait_until = min(end, time.monotonic() + 4)
        while time.monotonic() < wait_until:
            sock.settimeout(max(0.1, wait_until - time.monotonic()))
            try:
                data, _ = sock.recvfrom(4096)
            except socket.timeout:
                break
            msg = dhcp_parse(data)
            if msg and msg["xid"] == xid:
                if msg["type"] == NAK:
                    raise RuntimeError("the server said NAK")
                if msg["type"] == want:
                    msg["tries"] = tries
                    return msg
    raise RuntimeError(f"no DHCP {'OFFER' if want == OFFER else 'ACK'} within {limit:.0f} s ({tries} sent)")


def dhcp(iface: str, limit: float = 60) -> dict:
    t0 = time.monotonic()
    mac = bytes.fromhex(open(f"/sys/class/net/{iface}/address").read().strip().replace(":", ""))
    xid = int.from_bytes(os.urandom(4), "big")
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, iface.encode())
    sock.bind(("0.0.0.0", 68))
    offer = _exchange(sock, dhcp_packet(DISCOVER, xid, mac), xid, OFFER, limit)
    server = lease_of(offer)["server"]
    ack = _exchange(sock, dhcp_packet(REQUEST, xid, mac, offer["yiaddr"], server), xid, ACK,
                    max(5.0, limit - (time.monotonic() - t0)))
    sock.close()
    lease = lease_of(ack)
    lease["offered"] = offer["yiaddr"]
    lease["took_s"] = round(time.monotonic() - t0, 2)
    subprocess.run(["ip", "addr", "add", f"{lease['address']}/{lease['prefix'] or 24}", "brd", "+", "dev", iface],
                   check=True)
    if lease["router"]:
        subprocess.run(["ip", "route", "replace", "default", "via", lease["router"], "dev", iface], check=True)
    os.makedirs("/etc/netns/phone", exist_ok=True)
    with open("/etc/netns/phone/resolv.conf", "w") as f:
        f.write("".join(f"nameserver {a}\n" for a in lease["dns"]))
    with open("/etc/netns/phone/hosts", "w") as f:  # the phone's own: not the box's /etc/hosts
        f.write("127.0.0.1 localhost\n::1 localhost\n")
    return lease


def resolve(names: list[str]) -> dict:
    out = {}
    for name in names:
        try:
            out[name] = sorted({i[4][0] for i in socket.getaddrinfo(name, 80, socket.AF_INET, socket.SOCK_STREAM)})
        except OSError as e:
            out[name] = f"{type(e).__name__}: {e}"
    return out


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **kw):
        return None


def fetch(url: str, jar: str | None = None, follow: bool = True) -> dict:
    handlers = []
    cookies = None
    if jar:
        cookies = http.cookiejar.LWPCookieJar(jar)
        if os.path.exists(jar):
            cookies.load(ignore_discard=True)
        handlers.append(urllib.request.HTTPCookieProcessor(cookies))
    if not follow:
        handlers.append(_NoRedirect())
    opener = urllib.request.build_opener(*handlers)
    req = urllib.request.Request(url, headers={"User-Agent": "pi-check phone", "Accept-Language": "en"})
    t0 = time.monotonic()
    try:
        with opener.open(req, timeout=60) as r:
            status, body, headers, final = r.status, r.read(), r.headers, r.geturl()
    except urllib.error.HTTPError as e:
        status, body, headers, final = e.code, e.read(), e.headers, url
    except OSError as e:  # (URLError too): no answer
        return {"url": url, "status": None, "error": f"{type(e).__name__}: {getattr(e, 'reason', e)}",
                "took_s": round(time.monotonic() - t0, 2), "headers": {}, "body": ""}
    if cookies is not None:
        cookies.save(ignore_discard=True)
    return {"url": url, "final_url": final, "status": status, "took_s": round(time.monotonic() - t0, 2),
            "headers": {k.lower(): v for k, v in headers.items()}, "body": body.decode(errors="replace")[:20000],
            "body_bytes": len(body)}


def main(argv: list[str]) -> int:
    cmd, args = argv[0], argv[1:]
    if cmd == "dhcp":
        out = dhcp(args[0])
    elif cmd == "resolve":
        out = resolve(args)
    elif cmd == "get":
        out = fetch(args[0], args[1] if len(args) > 1 else None)
    elif cmd == "probe":
        out = fetch(args[0], None, follow=False)
    else:
        raise SystemExit(f"unknown command {cmd!r}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
