"""The pure parts of make pi-check's Wi-Fi step (image/pi_wifi.py, image/pi_wifi_phone.py): the Wi-Fi QR
code read back, the phone's DHCP messages, the scan's networks, the report's keys (the probes' answers:
tests/web/test_offline.py). Nothing here boots a machine."""

import importlib.util
import socket
import struct
import sys
from pathlib import Path

import pytest

from companion.services.hotspot import wifi_qr_text
from companion.web.auth import qr_svg

IMAGE = Path(__file__).resolve().parent.parent / "image"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, IMAGE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


pi_wifi = _load("pi_wifi")
phone = _load("pi_wifi_phone")


@pytest.mark.parametrize("ssid, password", [("companion-check", "check-password-1"),
                                            ('a;b:c,"d\\e', "p;w:d,\\x\"y"), ("Tavolo 3 è", "12345678")])
def test_the_wifi_code_the_box_makes_reads_back_as_its_network_and_password(ssid, password):
    fields = pi_wifi.parse_wifi_qr(wifi_qr_text(ssid, password))
    assert fields == {"T": "WPA", "S": ssid, "P": password}


@pytest.mark.parametrize("text", ["http://10.42.0.1:8080/", "WIFI:T:WPA;S:x;P:y", "WIFI:T:WPA;P:y;;", "WIFI:x;;"])
def test_what_is_not_a_wifi_code_is_refused(text):
    with pytest.raises(ValueError):
        pi_wifi.parse_wifi_qr(text)


def test_the_picture_of_the_code_has_the_modules_of_the_box_svg():
    import qrcode

    text = wifi_qr_text("companion-check", "check-password-1")
    size, cells = pi_wifi.svg_modules(qr_svg(text))
    qr = qrcode.QRCode(border=2)
    qr.add_data(text)
    matrix = qr.get_matrix()
    assert size == len(matrix)
    assert cells == {(x, y) for y, row in enumerate(matrix) for x, dark in enumerate(row) if dark}
    pgm = pi_wifi.svg_to_pgm(qr_svg(text), scale=4)
    head, _, pixels = pgm.partition(b"\n")
    assert head == f"P5 {size * 4} {size * 4} 255".encode() and len(pixels) == (size * 4) ** 2
    x, y = next(iter(cells))
    assert pixels[(y * 4) * size * 4 + x * 4] == 0


def test_two_codes_of_the_join_page_in_order():
    html = f"<p>1</p>{qr_svg('WIFI:T:WPA;S:a;P:b;;')}<p>2</p>{qr_svg('http://10.42.0.1:8080/j/x')}"
    first, second = pi_wifi.qr_svgs(html)
    assert pi_wifi.svg_modules(first) != pi_wifi.svg_modules(second)


def test_the_phones_dhcp_request_and_the_servers_ack_are_read():
    mac = bytes.fromhex("ea9c73930cb7")
    req = phone.dhcp_packet(phone.REQUEST, 0x1234, mac, "10.42.0.192", "10.42.0.1")
    assert req[0] == 1 and struct.unpack("!I", req[4:8])[0] == 0x1234 and req[28:34] == mac
    assert struct.unpack("!H", req[10:12])[0] == 0x8000  # a broadcast answer: the phone has no address yet
    assert bytes([53, 1, 3]) in req and bytes([50, 4]) + socket.inet_aton("10.42.0.192") in req
    # the server's ACK (as dnsmasq answers): the address, mask, router, DNS, lease
    ack = bytearray(req)
    ack[0] = 2
    ack[16:20] = socket.inet_aton("10.42.0.192")
    opts = (bytes([53, 1, 5, 54, 4]) + socket.inet_aton("10.42.0.1") + bytes([51, 4]) + struct.pack("!I", 3600)
            + bytes([1, 4]) + socket.inet_aton("255.255.255.0") + bytes([3, 4]) + socket.inet_aton("10.42.0.1")
            + bytes([6, 4]) + socket.inet_aton("10.42.0.1") + b"\0\xff")
    msg = phone.dhcp_parse(bytes(ack[:240]) + opts)
    assert msg["type"] == phone.ACK and msg["xid"] == 0x1234
    assert phone.lease_of(msg) == {"address": "10.42.0.192", "prefix": 24, "router": "10.42.0.1",
                                   "dns": ["10.42.0.1"], "server": "10.42.0.1", "lease_s": 3600, "domain": None}
    assert phone.dhcp_parse(req) is None  # a client's message is no answer


SCAN = """BSS 02:00:00:00:00:00(on wlan1)
\tlast seen: 255.304s [boottime]
\tfreq: 2462
\tSSID: companion-check
\tRSN:\t * Version: 1
BSS 02:00:00:00:02:00(on wlan1)
\tfreq: 2412
\tSSID: open-one
"""


def test_the_scan_lists_each_network():
    assert pi_wifi.scan_ssids(SCAN) == [
        {"bssid": "02:00:00:00:00:00", "ssid": "companion-check", "freq": 2462, "rsn": True},
        {"bssid": "02:00:00:00:02:00", "ssid": "open-one", "freq": 2412, "rsn": False}]


def test_the_phones_supplicant_joins_by_wpa2_only():
    name = 'say "hi"'
    conf = pi_wifi.wpa_conf(name, "check-password-1")
    assert f"ssid={name.encode().hex()}" in conf and 'psk="check-password-1"' in conf
    assert "proto=RSN" in conf and "key_mgmt=WPA-PSK" in conf


def test_the_wifi_keys_are_the_hardware_boots_and_gated_as_the_gpio_one(monkeypatch):
    """... and run by default: only HW=0 (COMPANION_PI_CHECK_HW=0) leaves the hardware boot out."""
    monkeypatch.syspath_prepend(str(IMAGE))
    for env, hw in ((None, True), ("1", True), ("0", False)):
        if env is None:
            monkeypatch.delenv("COMPANION_PI_CHECK_HW", raising=False)
        else:
            monkeypatch.setenv("COMPANION_PI_CHECK_HW", env)
        for name in ("pi_check", "pi_hw", "pi_wifi"):
            monkeypatch.delitem(sys.modules, name, raising=False)
        import pi_check

        assert pi_check.HW_KEYS[:2] == ("gpio_button_event", "dice_read_over_bluez")
        assert set(pi_wifi.KEYS) <= set(pi_check.HW_KEYS)
        assert pi_check.HW is hw, env
