"""`make pi-check`'s hardware boot: the box's hardware met through the real kernel drivers and stacks in the emulated
machine (docs/pi.md, "The hardware, simulated").

Debian 12's arm64 kernel builds mac80211_hwsim but neither hci_vhci (a virtual Bluetooth controller) nor
gpio-sim (a GPIO chip whose lines a test pulls): this module builds those two from the same kernel version's
source (Debian's linux-source-6.1, three files of it) against its linux-headers, cross-compiled on this machine
with Debian's gcc-aarch64-linux-gnu and the host's own build of the kernel's build tools (linux-kbuild), all
fetched by apt from the archive the image comes from. gpio-sim needs the kernel's interrupt simulator
(kernel/irq/irq_sim.c), which Debian's kernel leaves out too: it is linked into the module. The modules are
put in and loaded only in the check's own boot, never in the image an owner flashes.

The check's hardware boot is given a device tree that is qemu's own for the virt board with two changes that
make it look, to the box, as a Pi's does: the board revision the Pi's firmware puts in /system/linux,revision
(a Zero 2 W's, which gpiozero reads to know the header) and no PL061 GPIO controller (qemu's, which would be
gpiochip0, where the Pi's own pin controller is; the simulated chip takes its place).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pi_wifi  # (the phone over Wi-Fi's step: image/pi_wifi.py)
from pi_bt import dice_read_over_bluez  # (the smart dice's step: image/pi_bt.py)
from pi_wait import until

# the archive the image is built from (image/build.py)
SOURCES = ("deb http://deb.debian.org/debian bookworm main\n"
           "deb http://deb.debian.org/debian-security bookworm-security main\n")
PI_REVISION = "902120"  # a Raspberry Pi Zero 2 W (1 GiB is more than its 512 MiB: the memory is qemu's)
# the simulated chip: as many lines as the Pi's own (BCM2835's 54), numbered as the BCM GPIOs are
SIM_LINES = 54
# what the sources need changed to build outside the kernel's tree: irq_sim.c's one call of a function the
# kernel does not export for modules (irq_to_desc) becomes the exported call that does the same
# (generic_handle_irq runs the handler irq_sim_domain_map set, handle_simple_irq)
IRQ_SIM_PATCH = ("handle_simple_irq(irq_to_desc(irqnum));", "generic_handle_irq(irqnum);")
MODULE_FILES = {  # file in the build folder: file in the kernel's source
    "gpio-sim-main.c": "drivers/gpio/gpio-sim.c", "gpiolib.h": "drivers/gpio/gpiolib.h",
    "irq_sim.c": "kernel/irq/irq_sim.c", "hci_vhci.c": "drivers/bluetooth/hci_vhci.c"}
KBUILD = "obj-m += gpio-sim.o hci_vhci.o\ngpio-sim-y := gpio-sim-main.o irq_sim.o\n"


def _run(cmd, log, cwd=None, timeout=1800, env=None) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env)
    log(f"$ {' '.join(str(c) for c in cmd)[:300]}\n{(p.stdout + p.stderr)[-3000:]}(exit {p.returncode})")
    if p.returncode != 0:
        raise RuntimeError(f"{Path(str(cmd[0])).name} {' '.join(str(c) for c in cmd[1:3])}: exit {p.returncode}: "
                           f"{(p.stderr or p.stdout).strip()[-300:]}")
    return p.stdout


def apt_field(show: str, field: str) -> str | None:
    """The first ``Field: value`` of ``apt-cache show``'s answer."""
    for line in show.splitlines():
        if line.startswith(field + ":"):
            return line.split(":", 1)[1].strip()
    return None


def build_modules(release: str, cache: Path, log) -> dict[str, Path]:
    """gpio-sim.ko and hci_vhci.ko for the kernel RELEASE (``6.1.0-57-arm64``), built once into CACHE."""
    work = cache / f"hw-modules-{release}"
    out = work / "modules"
    done = {name: out / name for name in ("gpio-sim.ko", "hci_vhci.ko")}
    if all(p.exists() for p in done.values()):
        return done
    if work.exists():
        shutil.rmtree(work)
    abi, flavour = release.rsplit("-", 1)
    host_arch = _run(["dpkg", "--print-architecture"], log).strip()
    apt_dir = work / "apt"
    for d in ("lists/partial", "cache/archives/partial"):
        (apt_dir / d).mkdir(parents=True)
    (apt_dir / "sources.list").write_text(SOURCES)
    # apt with its own lists (the kernel's architecture and this machine's): the host's apt is not touched
    apt = ["-o", f"Dir::Etc::SourceList={apt_dir / 'sources.list'}", "-o", "Dir::Etc::SourceParts=/nonexistent",
           "-o", f"Dir::State::Lists={apt_dir / 'lists'}", "-o", f"Dir::Cache={apt_dir / 'cache'}",
           "-o", "APT::Architecture=arm64", "-o", f"APT::Architectures::=arm64",
           "-o", f"APT::Architectures::={host_arch}", "-o", "Debug::NoLocking=1"]
    _run(["apt-get", *apt, "-q", "update"], log, timeout=600)
    headers = f"linux-headers-{release}"
    version = apt_field(_run(["apt-cache", *apt, "show", f"{headers}:arm64"], log), "Version")
    if not version:
        raise RuntimeError(f"no version of {headers} in the archive")
    series = ".".join(abi.split(".")[:2])  # 6.1
    debs = work / "debs"
    debs.mkdir()
    _run(["apt-get", *apt, "download", f"{headers}:arm64={version}", f"linux-headers-{abi}-common={version}",
          f"linux-kbuild-{series}:{host_arch}={version}", f"linux-source-{series}={version}"], log,
         cwd=debs, timeout=1200)
    root = work / "root"
    root.mkdir()
    for deb in sorted(debs.glob("linux-*.deb")):
        if "linux-source" not in deb.name:
            _run(["dpkg-deb", "-x", str(deb), str(root)], log)
    hdir = root / "usr" / "src" / headers
    # the headers' Makefile includes the common part by its absolute path: here, the extracted one's
    mk = hdir / "Makefile"
    mk.write_text(mk.read_text().replace("include /usr/src/", f"include {root}/usr/src/"))
    src = work / "src"
    src.mkdir()
    (source_deb,) = debs.glob("linux-source-*.deb")
    top = f"linux-source-{series}"
    tar = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(source_deb)], stdout=subprocess.PIPE)
    xz = subprocess.Popen(["tar", "-xO", f"./usr/src/{top}.tar.xz"], stdin=tar.stdout, stdout=subprocess.PIPE)
    unxz = subprocess.Popen(["xz", "-dc"], stdin=xz.stdout, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(work), *(f"{top}/{f}" for f in MODULE_FILES.values())],
                   stdin=unxz.stdout, check=True, timeout=600)
    for p in (tar, xz, unxz):
        p.wait(60)
    for mine, theirs in MODULE_FILES.items():
        text = (work / top / theirs).read_text()
        if mine == "irq_sim.c":
            if IRQ_SIM_PATCH[0] not in text:
                raise RuntimeError(f"{theirs} of {version} has no {IRQ_SIM_PATCH[0]!r}: the patch needs a look")
            text = text.replace(*IRQ_SIM_PATCH)
        (src / mine).write_text(text)
    (src / "Kbuild").write_text(KBUILD)
    cross = [] if host_arch == "arm64" else ["CROSS_COMPILE=aarch64-linux-gnu-"]
    _run(["nice", "-n", "10", "make", "-C", str(hdir), f"M={src}", "ARCH=arm64", *cross, "modules"], log,
         timeout=1200)
    out.mkdir()
    for name, path in done.items():
        shutil.copy2(src / name, path)
    (out / "build.json").write_text(json.dumps({"release": release, "version": version, "files": MODULE_FILES,
                                                "patched": {"irq_sim.c": IRQ_SIM_PATCH}}, indent=2) + "\n")
    shutil.rmtree(work / top)
    return done


def pi_dtb(qemu_machine: list[str], path: Path, log) -> Path:
    """qemu's own device tree for these machine options, with the Pi's board revision and without the PL061."""
    raw = path.with_suffix(".virt.dtb")
    raw.unlink(missing_ok=True)
    _run(["qemu-system-aarch64", "-M", f"virt,dumpdtb={raw}", *qemu_machine, "-display", "none", "-nic", "none"],
         log, timeout=120)
    shutil.copy(raw, path)
    _run(["fdtput", "-c", str(path), "/system"], log)
    _run(["fdtput", "-t", "x", str(path), "/system", "linux,revision", PI_REVISION], log)
    nodes = _run(["fdtget", "-l", str(path), "/"], log).split()
    gone = [f"/{n}" for n in nodes if n.startswith("pl061@") or n == "gpio-keys"]  # the keys use the PL061
    if gone:
        _run(["fdtput", "-r", str(path), *gone], log)
    return path


# -- inside the machine ---------------------------------------------------------------------------------

GPIO_SIM_SETUP = f"""set -e
modprobe configfs
grep -q '^gpio_sim ' /proc/modules || insmod /root/pi-check-hw/gpio-sim.ko
cd /sys/kernel/config/gpio-sim
[ -d box ] || {{ mkdir box; mkdir box/bank0; echo {SIM_LINES} > box/bank0/num_lines; echo 1 > box/live; }}
udevadm settle
echo "$(cat box/dev_name) $(cat box/bank0/chip_name)"
"""


def sim_path(dev: str, chip: str, line: int, attr: str) -> str:
    return f"/sys/devices/platform/{dev}/{chip}/sim_gpio{line}/{attr}"


def gpio_button_event(m, phone_cls, sign_in, report: dict, log) -> None:
    """The simulated chip in place of the Pi's: the box's service (restarted, as at a boot with the chip there)
    drives it through gpiozero and lgpio; its LEDs are read on the chip's lines, its buttons pressed by pulling
    their lines low as a button to ground does."""
    out = report.setdefault("gpio", {})
    dev, chip = m.ssh(GPIO_SIM_SETUP, timeout=120).stdout.split()[-2:]
    out["chip"] = f"{dev} {chip}"
    out["chip_device"] = m.ssh(f"stat -c '%U:%G %a' /dev/{chip}", check=False).stdout.strip()
    m.ssh("systemctl restart companion", timeout=180)
    # /healthz answers before the panel is attached (its "gpio" says so, or is null, until then: no "mode")
    end, gpio = time.monotonic() + 180, {}
    while time.monotonic() < end and "mode" not in gpio:
        _, health = m.wait_healthz(limit=time.monotonic() - m.t0 + 60)
        gpio = (health or {}).get("gpio") or {}
        if "mode" not in gpio:
            time.sleep(2)
    out["service_gpio"] = {k: gpio.get(k) for k in ("mode", "reason", "pins_available")}
    if gpio.get("mode") != "pins":
        raise RuntimeError(f"the service does not drive the chip: {gpio.get('reason')}")
    pins = gpio["pins"]

    def line(n: int, attr: str = "value") -> str:
        return m.ssh(f"cat {sim_path(dev, chip, n, attr)}", check=False).stdout.strip()

    def wait(what, test, limit=30.0):
        return until(what, test, limit, 0.5)

    phone = phone_cls(m)
    sign_in(m, phone)
    mid, _ = phone.clocked_match(["Ada", "Bo", "Cy"], "buttons")
    green, red = pins["leds"]["green"], pins["leds"]["red"]
    wait("the green LED lit with the clock running", lambda: line(green) == "1" and line(red) == "0")
    out["led_green_lit_while_running"] = True

    def press(n: int, hold_s: float = 0.3) -> None:
        m.ssh(f"echo pull-down > {sim_path(dev, chip, n, 'pull')}; sleep {hold_s}; "
              f"echo pull-up > {sim_path(dev, chip, n, 'pull')}")

    out["button_line_before"] = line(pins["buttons"]["pause"])  # the pull-up the service asked for: 1
    press(pins["buttons"]["pause"])

    def paused():
        status, doc = phone.call("GET", f"/api/matches/{mid}")
        return doc if status == 200 and doc.get("seq", 0) >= 2 else None

    doc = wait("the PAUSE press's event", paused)
    status, events = phone.call("GET", f"/api/matches/{mid}/events")
    types = [e.get("type") for e in (events.get("events") if isinstance(events, dict) else events or [])]
    out["events"] = types
    clock = (doc.get("view") or {}).get("clock") or {}
    out["clock_running_after_pause"] = clock.get("running")
    wait("the red LED lit with the clock paused", lambda: line(red) == "1" and line(green) == "0")
    out["led_red_lit_when_paused"] = True
    status, health2 = 0, None
    with urllib.request.urlopen(m.url("/healthz"), timeout=30) as r:
        health2 = json.loads(r.read())
    out["healthz_leds"] = ((health2 or {}).get("gpio") or {}).get("leds")
    fails = []
    if "clock.pause" not in types:
        fails.append(f"no clock.pause among the events {types}")
    if clock.get("running") is not False:
        fails.append("the clock still runs")
    if out["healthz_leds"] != {"green": False, "amber": False, "red": True}:
        fails.append(f"the box says its LEDs are {out['healthz_leds']}")
    out["failed"] = fails
    report["gpio_button_event"] = not fails
    if fails:
        report["reasons"]["gpio_button_event"] = "; ".join(fails)


# the hardware boot's steps, in order: (name, its function, the report's keys it sets); each runs on its own
STEPS = (("gpio", gpio_button_event, ("gpio_button_event",)),
         ("dice", dice_read_over_bluez, ("dice_read_over_bluez",)),
         ("wifi", pi_wifi.phone_over_wifi, pi_wifi.KEYS))
