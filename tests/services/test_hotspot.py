"""The box's own Wi-Fi against a stand-in nmcli on PATH (tests/fakenm.py): the exact commands, in order; the
Wi-Fi QR code's text; what is said where NetworkManager or a Wi-Fi device is missing. No radio is used."""

import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.services import hotspot
from companion.services.hotspot import CONNECTION, Hotspot, escape_wifi, wifi_qr_text
from tests.fakenm import FakeNM


class Settings(dict):
    def get(self, key, default=None):
        return super().get(key, default)

    def set(self, key, value):
        self[key] = value


# -- the Wi-Fi QR code ------------------------------------------------------------------------------

def test_the_wifi_code_is_the_standard_text_with_wpa():
    assert wifi_qr_text("Club", "secretpass") == "WIFI:T:WPA;S:Club;P:secretpass;;"
    assert wifi_qr_text('a;b,c"d:e\\f', "p;w") == 'WIFI:T:WPA;S:a\\;b\\,c\\"d\\:e\\\\f;P:p\\;w;;'
    assert "WPA2" not in wifi_qr_text("x", "y")  # T:WPA2 is refused by some Android builds


def _unescape(text: str) -> str:
    out, esc = [], False
    for ch in text:
        if esc:
            out.append(ch)
            esc = False
        elif ch == "\\":
            esc = True
        else:
            out.append(ch)
    return "".join(out)


def _split_fields(body: str) -> list[str]:
    """The fields of a code's body split at unescaped ';' (an independent reading of the format)."""
    fields, cur, esc = [], [], False
    for ch in body:
        if esc:
            cur.append("\\" + ch)
            esc = False
        elif ch == "\\":
            esc = True
        elif ch == ";":
            fields.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    fields.append("".join(cur))
    return fields


@given(st.text(min_size=1, max_size=32), st.text(min_size=8, max_size=63))
def test_any_ssid_and_password_read_back_from_the_code(ssid, password):
    text = wifi_qr_text(ssid, password)
    assert text.startswith("WIFI:") and text.endswith(";;")
    fields = _split_fields(text[len("WIFI:"):-2])
    assert fields[0] == "T:WPA"
    assert _unescape(fields[1][2:]) == ssid and fields[1].startswith("S:")
    assert _unescape(fields[2][2:]) == password and fields[2].startswith("P:")
    assert len(fields) == 3
    for ch in ';,":':  # every special character escaped
        assert all(escape_wifi(ch) == "\\" + ch for _ in [0])


def test_generated_password_and_ssid_are_kept():
    s = Settings()
    h = Hotspot(s, rng=random.Random(4))
    cfg = h.config()
    assert len(cfg["password"]) == 12 and set(cfg["password"]) <= set(hotspot.PASSWORD_ALPHABET)
    assert cfg["ssid"].startswith("companion-") and cfg["enabled"] is False
    assert Hotspot(s).config() == cfg  # generated once, then kept


# -- nmcli: the commands and their order --------------------------------------------------------------

@pytest.fixture
def nm(tmp_path, monkeypatch):
    fake = FakeNM(tmp_path)
    monkeypatch.setenv("PATH", fake.path())
    return fake


def test_on_makes_a_wpa2_access_point_with_the_fixed_address_then_off_goes_back_to_the_venue(nm):
    s = Settings()
    h = Hotspot(s, rng=random.Random(1))
    cfg = h.config()
    nm.stations(3)
    out = h.on()
    add = ["nmcli", "connection", "add", "type", "wifi", "ifname", "wlan0", "con-name", CONNECTION,
           "autoconnect", "yes", "ssid", cfg["ssid"], "connection.autoconnect-priority", "100",
           "802-11-wireless.mode", "ap", "802-11-wireless.band", "bg",
           "ipv4.method", "shared", "ipv4.addresses", "10.42.0.1/24", "ipv6.method", "disabled",
           "wifi-sec.key-mgmt", "wpa-psk", "wifi-sec.proto", "rsn", "wifi-sec.pairwise", "ccmp",
           "wifi-sec.group", "ccmp", "wifi-sec.psk", cfg["password"]]
    status = ["nmcli", "-t", "-f", "DEVICE,TYPE,STATE,CONNECTION", "device", "status"]
    assert nm.calls() == [
        status,
        ["nmcli", "-t", "-f", "NAME", "connection", "show"],
        add,
        ["nmcli", "connection", "up", CONNECTION],
        status,  # the status it answers with
        ["iw", "dev", "wlan0", "station", "dump"],
    ]
    assert out["mode"] == "hotspot" and out["network"] == cfg["ssid"] and out["phones"] == 3
    assert out["address"] == "10.42.0.1" and s["wifi.hotspot"]["enabled"] is True
    assert s["wifi.hotspot"]["venue"] == "ClubWiFi"  # remembered, to fall back to

    nm.clear()
    out = h.on()  # again: our old profile is replaced, not duplicated
    assert nm.calls()[:4] == [status, ["nmcli", "-t", "-f", "NAME", "connection", "show"],
                              ["nmcli", "connection", "delete", CONNECTION], add]
    assert s["wifi.hotspot"]["venue"] == "ClubWiFi"

    nm.clear()
    out = h.off()
    assert nm.calls() == [
        status,
        ["nmcli", "-t", "-f", "NAME", "connection", "show"],
        ["nmcli", "connection", "modify", CONNECTION, "connection.autoconnect", "no"],
        ["nmcli", "connection", "down", CONNECTION],
        ["nmcli", "connection", "up", "ClubWiFi"],
        status,
    ]
    assert out["mode"] == "venue" and out["network"] == "ClubWiFi" and out["phones"] is None
    assert s["wifi.hotspot"]["enabled"] is False


def test_off_without_a_venue_only_stops_the_access_point(tmp_path, monkeypatch):
    nm = FakeNM(tmp_path, devices=[{"device": "wlan0", "type": "wifi", "state": "disconnected", "connection": None}],
                connections=[])
    monkeypatch.setenv("PATH", nm.path())
    s = Settings()
    h = Hotspot(s)
    h.on()
    assert s["wifi.hotspot"]["venue"] is None
    nm.clear()
    out = h.off()
    calls = nm.calls()
    assert ["nmcli", "connection", "down", CONNECTION] in calls
    assert not any(c[1:3] == ["connection", "up"] for c in calls)
    assert out["mode"] == "none"


def test_without_nmcli_it_says_so_and_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    s = Settings()
    h = Hotspot(s)
    with pytest.raises(hotspot.RuleError, match="NetworkManager is not installed"):
        h.on()
    assert s["wifi.hotspot"]["enabled"] is False
    st_ = h.status()
    assert st_["available"] is False and "no nmcli" in st_["reason"]


def test_networkmanager_not_running_and_no_wifi_device_are_said(tmp_path, monkeypatch):
    nm = FakeNM(tmp_path, devices=[{"device": "eth0", "type": "ethernet", "state": "connected",
                                    "connection": "Wired"}], connections=["Wired"])
    monkeypatch.setenv("PATH", nm.path())
    h = Hotspot(Settings())
    with pytest.raises(hotspot.RuleError, match="no Wi-Fi device"):
        h.on()
    assert [c[1:] for c in nm.calls()] == [["-t", "-f", "DEVICE,TYPE,STATE,CONNECTION", "device", "status"]]
    nm.stop_networkmanager()
    assert "NetworkManager is not running" in h.status()["reason"]


# -- the CLI -------------------------------------------------------------------------------------------

def test_cli_hotspot_on_status_off(run_cli, nm):
    env = {"PATH": nm.path()}
    rc, out, err = run_cli("wifi", "hotspot", "on", env=env)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["mode"] == "hotspot" and len(doc["password"]) == 12 and doc["ssid"].startswith("companion-")
    rc, out, err = run_cli("wifi", "hotspot", "status", env=env)
    assert rc == 0 and json.loads(out)["mode"] == "hotspot" and "password" not in json.loads(out)
    rc, out, err = run_cli("wifi", "codes", "--port", "8080", env=env)
    assert rc == 0, err
    first, second = out.index("1. Join the box's Wi-Fi"), out.index("2. Then open http://10.42.0.1:8080/")
    assert first < second and doc["password"] in out
    rc, out, err = run_cli("wifi", "hotspot", "off", env=env)
    assert rc == 0 and json.loads(out)["mode"] == "venue"


def test_cli_hotspot_on_with_the_owners_name_and_password_keeps_them(run_cli, nm):
    """The image's first boot turns the hotspot on with companion.txt's name and password (docs/pi.md)."""
    env = {"PATH": nm.path()}
    rc, out, err = run_cli("wifi", "hotspot", "on", "--ssid", "Circolo Dadi", "--password", "tavolo-verde-7", env=env)
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["ssid"] == "Circolo Dadi" and doc["password"] == "tavolo-verde-7"
    (add,) = [c for c in nm.calls() if c[1:4] == ["connection", "add", "type"]]
    assert "Circolo Dadi" in add and "tavolo-verde-7" in add, add
    rc, out, err = run_cli("wifi", "hotspot", "off", env=env)
    rc, out, err = run_cli("wifi", "hotspot", "on", env=env)  # kept for next time
    assert rc == 0 and json.loads(out)["ssid"] == "Circolo Dadi" and json.loads(out)["password"] == "tavolo-verde-7"


@pytest.mark.parametrize("args, field", [
    (["--password", "short"], "--password"),
    (["--password", "x" * 64], "--password"),
    (["--password", "città-verde"], "--password"),
    (["--ssid", ""], "--ssid"),
    (["--ssid", "x" * 33], "--ssid"),
])
def test_cli_hotspot_on_refuses_a_bad_name_or_password_in_one_line(run_cli, nm, args, field):
    rc, out, err = run_cli("wifi", "hotspot", "on", *args, env={"PATH": nm.path()})
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and field in err, err


def test_cli_hotspot_name_and_password_only_with_on(run_cli, nm):
    rc, out, err = run_cli("wifi", "hotspot", "status", "--ssid", "x", env={"PATH": nm.path()})
    assert rc == 2 and "--ssid: only with on" in err


def test_cli_without_networkmanager_says_it_in_one_line(run_cli, tmp_path):
    rc, out, err = run_cli("wifi", "hotspot", "on", env={"PATH": str(tmp_path / "nothing")})
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "NetworkManager is not installed here (no nmcli): nothing was changed" in err


@pytest.mark.parametrize("args, says", [
    (["wifi", "hotspot", "maybe"], "invalid choice"),
    (["wifi"], "ACTION"),
    (["wifi", "codes", "--port", "0"], "--port"),
    (["wifi", "codes", "--url", "ftp://x"], "--url"),
])
def test_cli_bad_input_exits_2_in_one_line(run_cli, args, says):
    rc, out, err = run_cli(*args)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and says in err


def test_cli_help_texts(run_cli):
    for args in (["wifi", "--help"], ["wifi", "hotspot", "--help"], ["wifi", "codes", "--help"]):
        rc, out, _ = run_cli(*args)
        assert rc == 0 and "NetworkManager" in out or "QR" in out
