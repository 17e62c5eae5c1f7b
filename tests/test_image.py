"""The flashable image's own logic, with no image and no qemu (`make image` and `make pi-check` build and boot
it: docs/pi.md): the owner's companion.txt, the first boot's files, the offline update's choice of a bundle and
its fallback (with stand-ins for systemctl, install.sh and the server's /healthz), the partition table."""

import importlib.util
import json
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.debian_packages import missing

REPO = Path(__file__).resolve().parent.parent
LIB = REPO / "image" / "rootfs" / "usr" / "local" / "lib" / "companion-image"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


firstboot = _load("companion_image_firstboot", LIB / "firstboot.py")
update = _load("companion_image_update", LIB / "update.py")
build = _load("companion_image_build", REPO / "image" / "build.py")


@pytest.fixture
def zoneinfo(tmp_path):
    d = tmp_path / "zoneinfo"
    (d / "Europe").mkdir(parents=True)
    (d / "Europe" / "Rome").write_text("TZif")
    (d / "UTC").write_text("TZif")
    return d


# -- companion.txt ------------------------------------------------------------------------------------------

def test_the_shipped_companion_txt_sets_nothing_and_every_key_it_names_is_known(zoneinfo):
    text = (REPO / "image" / "companion.txt").read_text()
    assert firstboot.parse_settings(text, zoneinfo) == ({}, [])
    uncommented = "\n".join(line.lstrip("#") for line in text.splitlines() if re.match(r"#[a-z_]+ = ", line))
    settings, problems = firstboot.parse_settings(uncommented, zoneinfo)
    assert problems == [] and set(settings) == set(firstboot.KEYS)


def test_companion_txt_settings_are_read_with_quotes_comments_and_a_windows_editors_bom(zoneinfo):
    text = ('\ufeff# mine\r\nhotspot_name = "Circolo Dadi"\r\nhotspot_password=tavolo-verde-7\r\n\r\n'
            "TIMEZONE = Europe/Rome\nlanguage = IT\n")
    assert firstboot.parse_settings(text, zoneinfo) == (
        {"hotspot_name": "Circolo Dadi", "hotspot_password": "tavolo-verde-7", "timezone": "Europe/Rome",
         "language": "it"}, [])


@pytest.mark.parametrize("line, says", [
    ("hotspot_password = short", "line 1: hotspot_password: must be 8 to 63 printable ASCII characters"),
    ("hotspot_password = " + "x" * 64, "hotspot_password: must be 8 to 63"),
    ("hotspot_name = " + "è" * 17, "hotspot_name: must be 1 to 32 bytes"),
    ("timezone = Mars/Olympus", "timezone: not a time zone this box knows"),
    ("timezone = ../../etc/passwd", "timezone: not a time zone"),
    ("language = de", "language: must be one of en, it"),
    ("colour = red", "unknown setting 'colour'"),
    ("just words", "not a setting (key = value)"),
    ("wifi_password = its-password", "wifi_password without wifi_name"),
])
def test_a_bad_line_is_said_and_ignored_and_the_rest_applies(zoneinfo, line, says):
    settings, problems = firstboot.parse_settings(f"{line}\nlanguage = en\n", zoneinfo)
    assert settings == {"language": "en"} and len(problems) == 1 and says in problems[0], problems


def test_a_club_wifi_becomes_a_networkmanager_profile_open_or_wpa(zoneinfo):
    settings, problems = firstboot.parse_settings("wifi_name = Club\nwifi_password = \n", zoneinfo)
    assert problems == [] and settings == {"wifi_name": "Club", "wifi_password": ""}
    open_net = firstboot.nm_connection("Club", "")
    assert "ssid=Club" in open_net and "wifi-security" not in open_net and "autoconnect=true" in open_net
    wpa = firstboot.nm_connection("Club", "secret-123")
    assert "[wifi-security]\nkey-mgmt=wpa-psk\npsk=secret-123" in wpa


def test_the_language_line_of_the_settings_file_is_set_once():
    text = "# companion settings\nCOMPANION_BACKUP_KEEP=14\nCOMPANION_LANGUAGE=en\n"
    out = firstboot.set_env_line(text, "COMPANION_LANGUAGE", "it")
    assert out == "# companion settings\nCOMPANION_BACKUP_KEEP=14\nCOMPANION_LANGUAGE=it\n"
    assert firstboot.set_env_line("", "COMPANION_LANGUAGE", "it") == "COMPANION_LANGUAGE=it\n"


def test_the_setup_file_gives_the_code_the_wifi_the_codes_and_what_was_not_applied():
    text = firstboot.setup_text("K7Q2-9XW4", 24, {"mode": "hotspot", "ssid": "companion-ab12", "password": "pw12345678"},
                                "http://10.42.0.1:8080/", "1. Join ...\n##QR##\n", ["line 3: colour: unknown"],
                                ["time zone: Europe/Rome"])
    assert "Organiser's setup code: K7Q2-9XW4" in text and "http://10.42.0.1:8080/login" in text
    assert "companion-ab12   password: pw12345678" in text and "##QR##" in text
    assert "line 3: colour: unknown" in text and "time zone: Europe/Rome" in text
    off = firstboot.setup_text(None, 24, {"mode": "off", "reason": "this box has no Wi-Fi device"},
                               "http://companion.local:8080/", "", [], [])
    assert "No setup code was made" in off and "Wi-Fi is off: this box has no Wi-Fi device" in off


def test_the_language_default_of_the_box_comes_from_its_settings_file():
    import sys

    code = "from companion.web import i18n; print(i18n.DEFAULT, i18n.from_accept_language(None))"
    for env, want in (({"COMPANION_LANGUAGE": "it"}, "it it"), ({"COMPANION_LANGUAGE": "xx"}, "en en"), ({}, "en en")):
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={"PATH": "/usr/bin", **env},
                           cwd=REPO, timeout=60)
        assert p.stdout.split() == want.split(), (env, p.stdout, p.stderr)


# -- the offline update -------------------------------------------------------------------------------------

def make_bundle(d: Path, commit: str | None, machine: str = "aarch64") -> Path:
    (d / "systemd").mkdir(parents=True)
    (d / "systemd" / "install.sh").write_text("#!/bin/sh\n")
    (d / "BUNDLE.txt").write_text(f"companion offline bundle for {machine} (64-bit Raspberry Pi OS), Python 3.11\n")
    with zipfile.ZipFile(d / "companion-0.1.0-py3-none-any.whl", "w") as z:
        z.writestr("companion/__init__.py", "")
        if commit:
            z.writestr("companion/build_info.py", f'COMMIT = "{commit}"\n')
    return d


def test_bundles_are_found_on_the_boot_partition_or_a_stick_and_one_of_another_commit_is_chosen(tmp_path):
    boot, stick = tmp_path / "boot", tmp_path / "stick"
    boot.mkdir()
    (boot / "config.txt").write_text("")
    make_bundle(stick / "companion-bundle", "bbbb")
    make_bundle(boot / "old-bundle", "aaaa")
    make_bundle(tmp_path / "other" / "b", "cccc", machine="armv7l")  # a 32-bit bundle is not this box's
    bundles = update.find_bundles([boot, stick, tmp_path / "other", tmp_path / "none"])
    assert [b["commit"] for b in bundles] == ["aaaa", "bbbb"]
    chosen, why = update.choose(bundles, "aaaa", [])
    assert chosen["commit"] == "bbbb" and why.endswith("aaaa -> bbbb")
    assert update.choose(bundles, "aaaa", ["bbbb"])[0] is None  # failed here before: not tried again
    none, why = update.choose(bundles, "aaaa", ["bbbb"])
    assert "already running (aaaa)" in why and "bbbb failed to start here before" in why
    assert update.choose([], "aaaa", []) == (None, "no bundle found")
    nocommit = update.read_bundle(make_bundle(tmp_path / "plain", None))
    assert update.choose([nocommit], "aaaa", [])[0] is None


class Box:
    """A box's /opt/companion and unit files in a folder; the commands it would run, recorded; the server's
    commit as /healthz would answer it after each start; companion.service as `systemctl show` says it: a
    version that does not start is restarted by systemd (Restart=on-failure) once per look, for ever."""

    def __init__(self, root: Path, starts_ok: bool, install_ok: bool = True):
        self.prefix, self.units, self.state = root / "opt", root / "units", root / "state"
        (self.prefix / "venv").mkdir(parents=True)
        (self.prefix / "venv" / "old").write_text("the previous version")
        self.units.mkdir()
        (self.units / "companion.service").write_text("old unit")
        self.calls, self.running = [], None
        self.starts_ok, self.install_ok = starts_ok, install_ok
        self.new_commit = None
        self.restarts, self.looks = 0, 0

    def run(self, argv):
        if argv[:2] == ["systemctl", "show"]:
            self.looks += 1
            broken = self.running is None and (self.prefix / "venv" / "new").exists() and not self.starts_ok
            self.restarts += broken
            # (as the real systemd answered in one of make pi-check's broken updates: between restarts, Result=success)
            state = "activating\nSubState=auto-restart\nResult=success" if broken else "active\nSubState=running\nResult=success"
            return subprocess.CompletedProcess(argv, 0, f"ActiveState={state}\nNRestarts={self.restarts}\n", "")
        self.calls.append(argv[0] if argv[0] != "systemctl" else " ".join(argv))
        if argv[0].endswith("install.sh"):
            if self.install_ok:
                (self.prefix / "venv").mkdir()
                (self.prefix / "venv" / "new").write_text("")
                (self.units / "companion.service").write_text("new unit")
                (self.units / "companion-kiosk.service").write_text("a unit the old version had not")
            return subprocess.CompletedProcess(argv, 0 if self.install_ok else 1, "", "pip: no matching wheel")
        if argv[:2] == ["systemctl", "start"]:
            self.restarts = 0  # (systemd's count starts again at a start after a stop)
            new = (self.prefix / "venv" / "new").exists()
            self.running = (self.new_commit if self.starts_ok else None) if new else "aaaa"
        if argv[:2] == ["systemctl", "stop"]:
            self.running = None
        return subprocess.CompletedProcess(argv, 0, "", "")

    def updater(self, wait_s: float = 0.2):
        return update.Updater(self.prefix, self.state, self.units, run=self.run, build_of=lambda: self.running,
                              wait_s=wait_s, poll_s=0.01, say=lambda s: None)


def test_an_update_that_starts_replaces_the_previous_version(tmp_path):
    box = Box(tmp_path, starts_ok=True)
    bundle = make_bundle(tmp_path / "b", "bbbb")
    box.new_commit = "bbbb"
    doc = box.updater().apply(update.read_bundle(bundle), "aaaa")
    assert doc["result"] == "updated" and doc["from"] == "aaaa" and doc["to"] == "bbbb", doc
    assert box.calls == ["systemctl stop companion.service", "runuser", f"{bundle}/systemd/install.sh",
                         "systemctl daemon-reload", "systemctl start companion.service"]
    assert (box.prefix / "venv" / "new").exists() and not (box.prefix / "venv.prev").exists()
    assert box.running == "bbbb"
    assert "updated: aaaa -> bbbb" in update.words(doc)


@pytest.mark.parametrize("install_ok", [True, False])
def test_an_update_that_does_not_start_falls_back_to_the_previous_version_and_its_units(tmp_path, install_ok):
    box = Box(tmp_path, starts_ok=False, install_ok=install_ok)
    box.new_commit = "bbbb"
    doc = box.updater().apply(update.read_bundle(make_bundle(tmp_path / "b", "bbbb")), "aaaa")
    assert doc["result"] == "fell back" and doc["previous_running"] is True, doc
    assert ("install.sh failed (exit 1)" if not install_ok else "failed to start 3 times") in doc["reason"]
    assert (box.prefix / "venv" / "old").exists() and not (box.prefix / "venv" / "new").exists()
    assert not (box.prefix / "venv.prev").exists()
    assert (box.units / "companion.service").read_text() == "old unit"
    assert not (box.units / "companion-kiosk.service").exists()
    assert box.running == "aaaa" and box.calls[-2:] == ["systemctl daemon-reload", "systemctl start companion.service"]
    said = update.words(doc)
    assert "update to bbbb failed" in said and "previous version (aaaa) is running again" in said


def test_the_update_waits_on_the_new_versions_unit_not_a_fixed_time(tmp_path):
    """A new version that exits at start is given up at its third failed start (systemd's restart count), not
    after COMPANION_UPDATE_WAIT; a slow one that answers in the end is waited for; one that neither fails nor
    answers (it hangs) is given up at the end of the wait."""
    box = Box(tmp_path / "a", starts_ok=False)
    box.new_commit = "bbbb"
    doc = box.updater(wait_s=3600).apply(update.read_bundle(make_bundle(tmp_path / "b", "bbbb")), "aaaa")
    assert doc["result"] == "fell back" and doc["previous_running"] is True, doc
    assert doc["reason"] == "the new version failed to start 3 times" and doc["waited_s"] < 60, doc
    assert box.looks == 3  # three looks at the broken unit; the previous version answers at once
    assert "update to bbbb failed: the new version failed to start 3 times" in update.words(doc)

    slow = Box(tmp_path / "s", starts_ok=True)
    slow.new_commit = "bbbb"
    answers = iter([None] * 5 + ["bbbb"])  # still starting (no restart), then it answers
    u = slow.updater(wait_s=3600)
    u.build_of = lambda: next(answers, "bbbb") if slow.running else None
    doc = u.apply(update.read_bundle(make_bundle(tmp_path / "b2", "bbbb")), "aaaa")
    assert doc["result"] == "updated" and slow.looks == 5, doc

    hung = Box(tmp_path / "h", starts_ok=True)
    hung.new_commit = "bbbb"
    u = hung.updater(wait_s=0.1)
    u.build_of = lambda: "aaaa" if (hung.prefix / "venv" / "old").exists() else None  # the new one never answers
    doc = u.apply(update.read_bundle(make_bundle(tmp_path / "b3", "bbbb")), "aaaa")
    assert doc["result"] == "fell back" and doc["reason"] == "the new version did not answer /healthz within 0 s", doc


def test_the_installed_commit_and_the_port_are_read_from_the_box(tmp_path):
    f = tmp_path / "venv/lib/python3.11/site-packages/companion/build_info.py"
    f.parent.mkdir(parents=True)
    f.write_text('COMMIT = "0123456789ab"\n')
    assert update.installed_commit(tmp_path) == "0123456789ab"
    assert update.installed_commit(tmp_path / "none") is None
    (tmp_path / "companion").write_text('COMPANION_SERVE_ARGS="--host 0.0.0.0 --port 9000 --gpio auto"\n')
    assert update.port_of(tmp_path) == 9000 and update.port_of(tmp_path / "none") == 8080


def test_the_updates_result_is_left_beside_the_database_for_the_home_and_tv_pages(tmp_path):
    """companion's pages read what update.py leaves (companion/storage/db.py: read_update_status), of this
    boot: the same file name and fields on both sides."""
    from companion.storage.db import read_update_status

    assert read_update_status(tmp_path) is None
    doc = {"result": "fell back", "from": "aaaa", "to": "bbbb", "reason": "install.sh failed (exit 1): no",
           "previous_running": True, "backup": "made", "at": "2026-03-01T20:00:00+0100"}
    update.write_status(tmp_path, doc, "boot-1")
    got = read_update_status(tmp_path)
    assert got == {"result": "fell back", "from": "aaaa", "to": "bbbb", "reason": doc["reason"],
                   "previous_running": True, "at": doc["at"], "boot_id": "boot-1"}
    assert (tmp_path / "last-update.json").stat().st_mode & 0o777 == 0o644  # the service user reads it
    assert not list(tmp_path.glob("*.tmp"))
    update.write_status(tmp_path / "none", doc, "boot-1")  # no data folder: said nowhere, and no failure


# -- the recipe -------------------------------------------------------------------------------------------

def test_the_partition_table_is_a_dos_one_with_the_boot_partition_first(tmp_path):
    script = build.partition_table(256, 1500)
    assert script.splitlines()[0] == "label: dos"
    img = tmp_path / "x.img"
    subprocess.run(["truncate", "-s", f"{4 + 256 + 1500}M", str(img)], check=True)
    if why := missing("sfdisk"):
        pytest.skip(why)
    p = subprocess.run(["sfdisk", "-q", str(img)], input=script, text=True, capture_output=True)
    assert p.returncode == 0, p.stderr
    table = json.loads(subprocess.run(["sfdisk", "-J", str(img)], capture_output=True, text=True, check=True).stdout)
    boot, root = table["partitiontable"]["partitions"]
    assert (boot["start"], boot["size"], boot["type"], boot.get("bootable")) == (8192, 256 * 2048, "c", True)
    assert (root["start"], root["size"], root["type"]) == (8192 + 256 * 2048, 1500 * 2048, "83")


def test_the_root_cache_key_follows_the_package_list():
    assert build.root_key(build.PACKAGES) == build.root_key(list(reversed(build.PACKAGES)))
    assert build.root_key(build.PACKAGES) != build.root_key(build.PACKAGES + ["vim"])
    for pkg in ("linux-image-arm64", "raspi-firmware", "firmware-brcm80211", "network-manager", "python3-venv"):
        assert pkg in build.PACKAGES
    assert "non-free-firmware" in build.COMPONENTS
