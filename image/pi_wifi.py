"""`make pi-check`'s hardware boot: a phone meets the box's own Wi-Fi through the real stacks (docs/pi.md, "The hardware,
simulated").

In the check's hardware boot only, ``mac80211_hwsim`` (Debian's arm64 kernel builds it) makes two radios that
NetworkManager, wpa_supplicant and the kernel's mac80211 use as real ones. The first is the box's Wi-Fi: its
hotspot is turned on by the first boot's own code (image/rootfs/.../firstboot.py's ``hotspot``, which runs
``companion wifi hotspot on`` as the service user: nmcli, NetworkManager's shared mode, its dnsmasq). The second
is moved into a network namespace of its own, ``phone``, and plays a phone there: it scans, joins the hotspot
with wpa_supplicant and the password read from the Wi-Fi QR code the box's /join page shows (decoded on the
host with zbarimg, as a phone's camera reads it), takes an address from the box's DHCP with a client of its
own (image/pi_wifi_phone.py: the image has no DHCP client outside NetworkManager), resolves the box's name
through the box's DNS, loads the join page (the link of the page's second code) and a match page by the box's
name, and makes the connectivity checks of Android, Apple, Windows and Firefox.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import time
from pathlib import Path

KEYS = ("hotspot_phone_joined", "phone_got_address", "join_page_over_wifi", "captive_probes_ok")
HERE = Path(__file__).resolve().parent
GUEST = "/root/pi-check-hw"
PHONE = f"ip netns exec phone python3 {GUEST}/pi_wifi_phone.py"
SUBNET = "10.42.0."  # the hotspot's (companion/services/hotspot.py: ADDRESS/PREFIX)
BOX = "10.42.0.1"

# The connectivity checks, and what docs/offline.md ("Phones that land by themselves") says the box answers:
# (the phone, its URL, the answer). An answer: the status, and the body exactly ("body"), or a body that is
# not the one the OS wants ("body_not": Windows then opens its real browser), or the redirect's target.
APPLE_SUCCESS = "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"
PROBES = (
    ("android", "http://connectivitycheck.gstatic.com/generate_204", {"status": 204, "body": ""}),
    ("apple", "http://captive.apple.com/hotspot-detect.html", {"status": 200, "body": APPLE_SUCCESS}),
    ("windows", "http://www.msftconnecttest.com/connecttest.txt",
     {"status": 200, "body_not": "Microsoft Connect Test"}),
    ("windows-redirect", "http://www.msftconnecttest.com/redirect", {"status": 302, "location": f"http://{BOX}:"}),
    ("firefox", "http://detectportal.firefox.com/success.txt", {"status": 200, "body": "success\n"}),
)


def probe_verdict(want: dict, got: dict) -> str | None:
    """None when GOT (the phone's ``probe`` answer: status, headers, body) is the answer WANT, else what
    differs, in a few words."""
    if got.get("status") != want["status"]:
        return f"status {got.get('status')}, not {want['status']}"
    body = got.get("body", "")
    if "body" in want and body != want["body"]:
        return f"body {body[:80]!r}, not {want['body'][:80]!r}"
    if "body_not" in want and body.strip() == want["body_not"]:
        return f"the body is {want['body_not']!r}"
    if "location" in want and not (got.get("headers") or {}).get("location", "").startswith(want["location"]):
        return f"Location {(got.get('headers') or {}).get('location')!r}, not {want['location']}..."
    if "set-cookie" in (got.get("headers") or {}):
        return "it sets a cookie"
    return None


def parse_wifi_qr(text: str) -> dict:
    """The standard Wi-Fi QR code's text (``WIFI:T:WPA;S:<ssid>;P:<password>;;``, ``\\ ; , " :`` escaped by a
    backslash) as its fields by letter (``T``, ``S``, ``P``, ``H``); a ValueError when it is not one."""
    if not text.startswith("WIFI:"):
        raise ValueError(f"not a Wi-Fi code: {text[:20]!r}")
    fields, key, cur, esc = {}, None, [], False
    body = text[5:]
    for ch in body:
        if esc:
            cur.append(ch)
            esc = False
        elif ch == "\\":
            esc = True
        elif ch == ":" and key is None:
            key, cur = "".join(cur), []
        elif ch == ";":
            if key is None:
                if cur:
                    raise ValueError(f"a field with no letter: {''.join(cur)!r}")
                continue  # the closing ;;
            fields[key] = "".join(cur)
            key, cur = None, []
        else:
            cur.append(ch)
    if key is not None or cur or esc:
        raise ValueError("the code does not end with ;")
    if "S" not in fields:
        raise ValueError("no S: (the network's name)")
    return fields


def qr_svgs(html: str) -> list[str]:
    """The QR codes' SVGs of a page, in the page's order."""
    return re.findall(r"<svg\b.*?</svg>", html, re.S)


def svg_modules(svg: str) -> tuple[int, set[tuple[int, int]]]:
    """The code's size (its viewBox's, in modules) and its dark modules, of the SVG the box draws (qrcode's
    SvgPathImage: one path, a ``Mx,yH..V..H..z`` square a module)."""
    box = re.search(r'viewBox="0 0 (\d+) (\d+)"', svg)
    if not box:
        raise ValueError("no viewBox")
    path = re.search(r'<path[^>]*\bd="([^"]+)"', svg)
    if not path:
        raise ValueError("no path")
    cells = {(int(x), int(y)) for x, y in re.findall(r"M(\d+),(\d+)H", path.group(1))}
    return int(box.group(1)), cells


def svg_to_pgm(svg: str, scale: int = 8) -> bytes:
    """The code as a grey picture (PGM, SCALE pixels a module, white round it), as a camera would see it."""
    size, cells = svg_modules(svg)
    rows = []
    for y in range(size):
        row = b"".join((b"\0" if (x, y) in cells else b"\xff") * scale for x in range(size))
        rows.append(row * scale)
    return f"P5 {size * scale} {size * scale} 255\n".encode() + b"".join(rows)


def read_qr(svg: str, path: Path) -> str:
    """The text of the code, read by zbarimg from its picture (saved as PATH)."""
    path.write_bytes(svg_to_pgm(svg))
    p = subprocess.run(["zbarimg", "--raw", "-q", str(path)], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"zbarimg {path.name}: exit {p.returncode}: {p.stderr.strip()[-200:]}")
    return p.stdout.rstrip("\n")


def wpa_conf(ssid: str, password: str) -> str:
    """The phone's wpa_supplicant configuration for the box's network (WPA2 only, as the box's profile)."""
    def q(s):  # wpa_supplicant's quoted strings have no escapes: a name with a " is given as hex
        return f'"{s}"' if '"' not in s else s.encode().hex()
    if '"' in password:  # (a passphrase is quoted only; printable ASCII with no " is all this check's)
        raise ValueError("a password with a \" is not written here")
    return ("ctrl_interface=/run/wpa_supplicant-phone\nupdate_config=0\n"
            f"network={{\n  ssid={q(ssid)}\n  psk=\"{password}\"\n"
            "  key_mgmt=WPA-PSK\n  proto=RSN\n  pairwise=CCMP\n  scan_ssid=1\n}\n")


def scan_ssids(iw_scan: str) -> list[dict]:
    """The networks of ``iw dev DEV scan``'s answer: each BSS's address, SSID, frequency and whether RSN."""
    out = []
    for block in re.split(r"^BSS ", iw_scan, flags=re.M)[1:]:
        bss = block.split("(", 1)[0].split()[0]
        ssid = re.search(r"^\s*SSID: (.*)$", block, re.M)
        freq = re.search(r"^\s*freq: (\d+)", block, re.M)
        out.append({"bssid": bss, "ssid": ssid.group(1) if ssid else None,
                    "freq": int(freq.group(1)) if freq else None, "rsn": "RSN:" in block})
    return out


# -- inside the machine ------------------------------------------------------------------------------------

RADIOS = """set -e
grep -q '^mac80211_hwsim ' /proc/modules || modprobe mac80211_hwsim radios=2
for i in $(seq 60); do [ "$(ls /sys/class/ieee80211 | wc -l)" -ge 2 ] && break; sleep 0.5; done
udevadm settle
for p in $(ls /sys/class/ieee80211 | sort -V); do echo "$p $(ls /sys/class/ieee80211/$p/device/net 2>/dev/null | head -1)"; done
"""


def phone_over_wifi(m, phone_cls, sign_in, report: dict, log) -> None:
    """The four keys (KEYS): each true when its part worked, else false with what failed (a later part is not
    run when an earlier one it needs failed)."""
    out = report.setdefault("wifi", {})
    out_dir = Path(m.serial).parent
    wlog = out_dir / "wifi.log"

    def note(what: str, text) -> None:
        with open(wlog, "a") as f:
            f.write(f"{time.strftime('%H:%M:%S')} {what}\n{text if isinstance(text, str) else json.dumps(text, indent=1)}\n")

    def ssh(cmd: str, timeout: int = 120, check: bool = True) -> str:
        p = m.ssh(cmd, timeout=timeout, check=False)
        note(f"$ {cmd}", f"{p.stdout}{p.stderr}(exit {p.returncode})")
        if check and p.returncode != 0:
            raise RuntimeError(f"{cmd[:80]!r}: exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}")
        return p.stdout

    def phone(*args: str, timeout: int = 120) -> dict:
        return json.loads(ssh(f"{PHONE} {' '.join(shlex.quote(a) for a in args)}", timeout=timeout))

    for k in KEYS:
        report[k] = False
    fails: dict[str, list[str]] = {k: [] for k in KEYS}

    def fail(key: str, why: str) -> None:
        fails[key].append(why)
        report[key] = False
        report["reasons"][key] = "; ".join(fails[key])

    wlog.unlink(missing_ok=True)
    m.put([HERE / "pi_wifi_phone.py"], GUEST)
    # the two radios: the box's (the first) and the phone's (moved into its own namespace)
    radios = [ln.split() for ln in ssh(RADIOS).splitlines() if ln.strip()]
    out["radios"] = radios
    if len(radios) < 2 or any(len(r) < 2 for r in radios[:2]):
        raise RuntimeError(f"mac80211_hwsim made no two radios with a device each: {radios}")
    (box_phy, box_dev), (phone_phy, phone_dev) = radios[0][:2], radios[1][:2]
    ssh(f"ip netns add phone 2>/dev/null || true; iw phy {phone_phy} set netns name phone; "
        f"ip netns exec phone ip link set lo up; ip netns exec phone ip link set {phone_dev} up")
    out.update(box_device=box_dev, phone_device=phone_dev)
    ssh("nmcli -t -f DEVICE,TYPE,STATE,CONNECTION device status", check=False)

    # the hotspot, as the first boot turns it on (its own function, with the check's companion.txt)
    t = time.monotonic()
    hs = ssh("cd /usr/local/lib/companion-image && python3 -c 'import json, firstboot; "
             "s, _ = firstboot.parse_settings(open(\"/boot/firmware/companion.txt\").read()); "
             "print(json.dumps(firstboot.hotspot(s)))'", timeout=300, check=False)
    try:
        wifi, said = json.loads(hs.strip().splitlines()[-1])
    except (ValueError, IndexError):
        wifi, said = {"mode": "?"}, hs[-300:]
    out["hotspot_on"] = {"said": said, "mode": wifi.get("mode"), "s": round(time.monotonic() - t, 1)}
    ssh("nmcli -t -f DEVICE,TYPE,STATE,CONNECTION device status; nmcli -t connection show companion-hotspot "
        "| grep -E '^(802-11-wireless|802-11-wireless-security|ipv4)\\.(mode|band|channel|key-mgmt|proto|pairwise|"
        "group|method|addresses):'", check=False)
    ssh(f"iw dev {box_dev} info", check=False)
    # (the addresses now: NetworkManager gives a radio a random one while it scans, the access point its own)
    box_mac = ssh(f"cat /sys/class/net/{box_dev}/address").strip()
    phone_mac = ssh(f"ip netns exec phone cat /sys/class/net/{phone_dev}/address").strip()
    out.update(box_mac=box_mac, phone_mac=phone_mac)
    if wifi.get("mode") != "hotspot":
        fail("hotspot_phone_joined", f"the box's hotspot is not on: {said}")
        for k in KEYS[1:]:
            fail(k, "not run: the box's hotspot is not on")
        return

    # the Wi-Fi code and the join link, read off the organiser's /join page as a phone's camera reads them
    org = phone_cls(m)
    sign_in(m, org)
    status, page = _page(m, org, "/join")
    codes = qr_svgs(page) if status == 200 else []
    if len(codes) < 2:
        raise RuntimeError(f"/join: {status}, {len(codes)} QR codes (two wanted: the Wi-Fi's, the link)")
    wifi_text = read_qr(codes[0], out_dir / "wifi-code.pgm")
    link = read_qr(codes[1], out_dir / "join-code.pgm")
    qr = parse_wifi_qr(wifi_text)
    out["wifi_code"] = {"T": qr.get("T"), "S": qr.get("S"), "password_len": len(qr.get("P", ""))}
    out["join_link"] = re.sub(r"/j/[^/?#]+", "/j/<token>", link)
    note("the codes read", {"wifi": out["wifi_code"], "link": out["join_link"]})

    # the phone scans and joins with that password
    t = time.monotonic()
    seen = []
    for _ in range(10):
        seen = scan_ssids(ssh(f"ip netns exec phone iw dev {phone_dev} scan", check=False))
        if any(s["ssid"] == qr["S"] for s in seen):
            break
        time.sleep(2)
    out["scan"] = seen
    mine = [s for s in seen if s["ssid"] == qr["S"]]
    if not mine:
        fail("hotspot_phone_joined", f"the phone's scan does not find {qr['S']!r}: {seen}")
        for k in KEYS[1:]:
            fail(k, "not run: the phone did not find the hotspot")
        return
    conf = out_dir / "wpa-phone.conf"
    conf.write_text(wpa_conf(qr["S"], qr.get("P", "")))
    m.put([conf], GUEST)
    ssh(f"ip netns exec phone wpa_supplicant -B -D nl80211 -i {phone_dev} -c {GUEST}/wpa-phone.conf "
        f"-f {GUEST}/wpa-phone.log -P /run/wpa-phone.pid")
    state = {}
    end = time.monotonic() + 90
    while time.monotonic() < end:
        st = ssh(f"ip netns exec phone wpa_cli -p /run/wpa_supplicant-phone -i {phone_dev} status", check=False)
        state = dict(ln.split("=", 1) for ln in st.splitlines() if "=" in ln)
        if state.get("wpa_state") == "COMPLETED":
            break
        time.sleep(2)
    out["phone_wpa"] = {k: state.get(k) for k in ("wpa_state", "bssid", "ssid", "key_mgmt", "pairwise_cipher",
                                                 "group_cipher", "freq")}
    out["join_s"] = round(time.monotonic() - t, 1)
    stations = ssh(f"iw dev {box_dev} station dump", check=False)
    out["box_sees_the_phone"] = phone_mac.lower() in stations.lower()
    status, api = org.call("GET", "/api/wifi")
    out["api_wifi"] = {k: api.get(k) for k in ("mode", "network", "phones", "device")} if status == 200 else status
    if state.get("wpa_state") != "COMPLETED":
        fail("hotspot_phone_joined", f"the phone's wpa_supplicant: {state.get('wpa_state')}")
    if state.get("bssid", "").lower() != box_mac.lower():
        fail("hotspot_phone_joined", f"joined {state.get('bssid')}, not the box's {box_mac}")
    if state.get("key_mgmt") != "WPA2-PSK":
        fail("hotspot_phone_joined", f"key management {state.get('key_mgmt')}, not WPA2-PSK")
    if not out["box_sees_the_phone"]:
        fail("hotspot_phone_joined", "the box's station list does not have the phone")
    if not isinstance(out["api_wifi"], dict) or out["api_wifi"].get("mode") != "hotspot" \
            or out["api_wifi"].get("phones") != 1:
        fail("hotspot_phone_joined", f"/api/wifi says {out['api_wifi']}, not the hotspot with one phone")
    if fails["hotspot_phone_joined"]:
        for k in KEYS[1:]:
            fail(k, "not run: the phone did not join the hotspot")
        return
    report["hotspot_phone_joined"] = True

    # an address from the box's DHCP
    try:
        lease = phone("dhcp", phone_dev, timeout=120)
    except (RuntimeError, ValueError) as e:
        fail("phone_got_address", f"DHCP: {e}")
        for k in KEYS[2:]:
            fail(k, "not run: the phone has no address")
        return
    out["lease"] = lease
    leases = ssh(f"cat /var/lib/NetworkManager/dnsmasq-{box_dev}.leases", check=False)
    out["box_lease_for_the_phone"] = phone_mac.lower() in leases.lower()
    if not lease["address"].startswith(SUBNET) or lease["address"] == BOX:
        fail("phone_got_address", f"the address {lease['address']} is not on the hotspot's {SUBNET}0/24")
    if lease.get("router") != BOX or BOX not in lease.get("dns", []):
        fail("phone_got_address", f"router {lease.get('router')}, DNS {lease.get('dns')}: not the box ({BOX})")
    if not out["box_lease_for_the_phone"]:
        fail("phone_got_address", "the box's DHCP has no lease for the phone")
    if fails["phone_got_address"]:
        for k in KEYS[2:]:
            fail(k, "not run: the phone has no address from the box")
        return
    report["phone_got_address"] = True

    # the box's name through its DNS; the join page (the code's link) and a match page by the name
    name = ssh("hostname").strip()
    probe_hosts = sorted({re.match(r"http://([^/:]+)", u).group(1) for _, u, _ in PROBES})
    names = phone("resolve", name, *probe_hosts)
    out["resolved"] = names
    if names.get(name) != [BOX]:
        fail("join_page_over_wifi", f"the box's name {name!r} resolves to {names.get(name)}, not {BOX}")
    jar = f"{GUEST}/phone-cookies.txt"
    joined = phone("get", link, jar)
    out["join_page"] = {k: joined.get(k) for k in ("status", "took_s", "body_bytes")}
    out["join_page"]["final_url"] = re.sub(r"/j/[^/?#]+", "/j/<token>", joined.get("final_url", ""))
    if joined.get("status") != 200 or "<html" not in joined.get("body", "").lower():
        fail("join_page_over_wifi", f"the join link's page: {joined.get('status')} {joined.get('error', '')}")
    status, match = org.call("POST", "/api/matches", {"game": "richelieu", "players": ["Ada", "Bo", "Cy"],
                                                      "label": "over Wi-Fi"})
    if status != 201:
        raise RuntimeError(f"creating a match: {status} {match}")
    port = re.match(r"http://[^/:]+:(\d+)", link)
    page = phone("get", f"http://{name}:{port.group(1) if port else 80}/m/{match['id']}", jar)
    out["match_page"] = {k: page.get(k) for k in ("url", "final_url", "status", "took_s", "body_bytes")}
    if page.get("status") != 200 or "over Wi-Fi" not in page.get("body", ""):
        fail("join_page_over_wifi", f"the match page by the box's name: {page.get('status')} "
                                    f"{page.get('error') or page.get('body', '')[:120]!r}")
    if not fails["join_page_over_wifi"]:
        report["join_page_over_wifi"] = True

    # the connectivity checks
    probes = {}
    for os_name, url, want in PROBES:
        host = re.match(r"http://([^/:]+)", url).group(1)
        if names.get(host) != [BOX]:
            probes[os_name] = f"{host} resolves to {names.get(host)}, not {BOX}"
            continue
        got = phone("probe", url)
        probes[os_name] = probe_verdict(want, got) or "ok"
        note(f"probe {os_name}", {k: got.get(k) for k in ("status", "headers", "body")})
    out["probes"] = probes
    for os_name, verdict in probes.items():
        if verdict != "ok":
            fail("captive_probes_ok", f"{os_name}: {verdict}")
    if not fails["captive_probes_ok"]:
        report["captive_probes_ok"] = True
    ssh(f"cat {GUEST}/wpa-phone.log; journalctl -b --no-pager -o short-monotonic -u NetworkManager | tail -n 60",
        check=False)


def _page(m, phone, path: str) -> tuple[int, str]:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(m.url(path), headers={"Cookie": phone.cookie or "", "Accept-Language": "en"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
