"""`make image`: the file an owner flashes onto an SD card for a Raspberry Pi 3, 4 or Zero 2 W (docs/pi.md).

Debian 12 arm64 from Debian's archive (mmdebstrap under qemu-user's binfmt_misc, as `make arm-check`), with
Debian's `linux-image-arm64`, `raspi-firmware` (the Pi's boot files, the device trees of the Pi 3, 4 and
Zero 2 W come with the kernel) and the Wi-Fi firmware `firmware-brcm80211` (the `non-free-firmware`
component, added here); companion installed from its own offline bundle (`companion bundle --for aarch64`)
by the bundle's own install.sh, its units enabled; the first-boot and offline-update units of image/rootfs/.

The image is assembled without loop devices: the root file system made by `mkfs.ext4 -d`, the boot partition
by `mkfs.vfat` and `mcopy`, the partition table by `sfdisk` on the file.

Stages, each timed into build/image/build.json:
1. root: the Debian tree with its packages, cached in ~/.cache/companion-image (COMPANION_IMAGE_CACHE) under
   a key of the package list and this recipe's root stage: a rebuild reuses it;
2. bundle: the offline bundle of this checkout (built from a copy: the checkout stays clean);
3. custom: a copy of the cached tree, companion installed in it (no network: its own namespace), the
   settings of an appliance (host name, no SSH, no host keys, a machine id made at first boot);
4. assemble: build/image/companion-pi.img.

Needs root, mmdebstrap, qemu-user-static with binfmt_misc for qemu-aarch64 (flag F), dosfstools, mtools,
fdisk (sfdisk) and e2fsprogs; it says which is missing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
SECURITY = "http://deb.debian.org/debian-security"
COMPONENTS = "main non-free-firmware"
# the packages of the image's tree: systemd/debian-packages.txt's box group (its if-available ones where Debian
# has them: python3-lgpio is Raspberry Pi OS's) and its image group
LIST = REPO / "systemd" / "debian-packages.txt"
NOT_IN_DEBIAN = {"python3-lgpio"}


def list_entries(*groups: str) -> list[tuple[str, str, str]]:
    """(package, commands, when) of these groups of systemd/debian-packages.txt, each package once."""
    out, seen = [], set()
    for raw in LIST.read_text().splitlines():
        words = raw.split("#", 1)[0].split()
        if len(words) == 4 and words[0] in groups and words[1] not in seen:
            seen.add(words[1])
            out.append((words[1], words[2], words[3]))
    return out


PACKAGES = [pkg for pkg, _, when in list_entries("box", "image") if when == "always" or pkg not in NOT_IN_DEBIAN]
# the root stage's own recipe (a change here makes a new cached tree)
ROOT_RECIPE = 1
ROOT_LABEL, BOOT_LABEL = "RASPIROOT", "RASPIFIRM"
BOOT_MB = 256
IMAGE_NAME = "companion-pi.img"
CACHE = Path(os.environ.get("COMPANION_IMAGE_CACHE", Path.home() / ".cache" / "companion-image"))
BUILD = Path(os.environ.get("COMPANION_IMAGE_BUILD", REPO / "build" / "image"))
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def log(msg: str) -> None:
    print(f"image: {msg}", flush=True)


def die(msg: str, code: int = 1) -> None:
    print(f"image: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


def run(cmd: list[str], logfile: Path | None = None, timeout: int = 3600, **kw) -> subprocess.CompletedProcess:
    """Runs CMD; its output goes to LOGFILE (appended) when given. A failure stops the build, naming the step
    and showing the end of its output."""
    if logfile is None:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
        out = p.stdout + p.stderr
    else:
        with open(logfile, "a") as f:
            f.write(f"$ {' '.join(cmd)}\n")
            f.flush()
            p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, text=True, timeout=timeout, **kw)
        out = logfile.read_text(errors="replace")[-3000:]
    if p.returncode != 0:
        die(f"{cmd[0]} failed (exit {p.returncode}):\n{out[-3000:]}")
    return p


# the tools of the build machine: the list's image-build group (command -> package)
HOST_TOOLS = {cmd: pkg for pkg, cmds, _ in list_entries("image-build") for cmd in cmds.split(",") if cmd != "-"}


def install_tools() -> None:
    """Install (apt-get) the build machine's missing tools (as root)."""
    need = sorted({pkg for tool, pkg in HOST_TOOLS.items() if shutil.which(tool) is None})
    if not need or os.geteuid() != 0 or shutil.which("apt-get") is None:
        return
    log(f"installing {' '.join(need)} (apt-get)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    p = subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *need], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *need], env=env,
                       capture_output=True)


def enable_binfmt() -> None:
    """Register qemu-aarch64 with binfmt_misc where it is not (as root). Installing qemu-user-static registers
    it only where binfmt_misc is mounted: on a fresh machine or container it is not, and update-binfmts mounts it."""
    entry = Path("/proc/sys/fs/binfmt_misc/qemu-aarch64")
    if os.geteuid() == 0 and shutil.which("update-binfmts") and not (
            entry.exists() and entry.read_text().startswith("enabled")):
        subprocess.run(["update-binfmts", "--enable", "qemu-aarch64"], capture_output=True)


def missing_tools() -> str | None:
    if os.geteuid() != 0:
        return "needs root (chroot, mounts, file ownership in the root file system)"
    for tool, pkg in HOST_TOOLS.items():
        if shutil.which(tool) is None:
            return f"no {tool} (apt-get install {pkg})"
    entry = Path("/proc/sys/fs/binfmt_misc/qemu-aarch64")
    text = entry.read_text() if entry.exists() else ""
    if not text.startswith("enabled"):
        return (f"binfmt_misc has no enabled qemu-aarch64 (apt-get install {HOST_TOOLS['qemu-aarch64-static']} "
                f"{HOST_TOOLS['update-binfmts']}; update-binfmts --enable qemu-aarch64)")
    flags = re.search(r"^flags: *(\S*)", text, re.M)
    if not flags or "F" not in flags.group(1):
        return f"{entry} lacks flag F (qemu-user-static registers it so)"
    return None


def sources() -> list[str]:
    return [f"deb {MIRROR} {SUITE} {COMPONENTS}", f"deb {MIRROR} {SUITE}-updates {COMPONENTS}",
            f"deb {SECURITY} {SUITE}-security {COMPONENTS}"]


def root_key(packages: list[str]) -> str:
    text = json.dumps({"packages": sorted(packages), "suite": SUITE, "sources": sources(), "recipe": ROOT_RECIPE})
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def stage_root(packages: list[str], logdir: Path) -> Path:
    """The Debian tree with the box's packages, cached: CACHE/root-KEY/{root,firmware}. The boot partition's
    files are what raspi-firmware's and the kernel's hooks write into /boot/firmware (a folder bound there
    while the packages install, as on a Pi where it is the mounted boot partition)."""
    key = root_key(packages)
    done = CACHE / f"root-{key}"
    if (done / "ok").exists():
        log(f"root: cached ({done})")
        return done
    CACHE.mkdir(parents=True, exist_ok=True)
    part = CACHE / f"root-{key}.part"
    if part.exists():
        _umount_under(part)
        shutil.rmtree(part)
    (part / "firmware").mkdir(parents=True)
    log(f"root: mmdebstrap {SUITE} arm64, {len(packages)} packages (log: {logdir / 'mmdebstrap.log'}; "
        "20 to 40 minutes under emulation)")
    fw = part / "firmware"
    run(["nice", "-n", "10", "mmdebstrap", "--arch=arm64", "--variant=apt", "--format=directory",
         f"--components={COMPONENTS.replace(' ', ',')}", f"--include={','.join(packages)}",
         "--aptopt=Acquire::Retries \"3\"",
         # on a Pi /boot/firmware is the boot partition: the hooks write the kernel, initrd, DTBs there
         f'--setup-hook=mkdir -p "$1/boot/firmware" && mount --bind {fw} "$1/boot/firmware"',
         '--customize-hook=umount "$1/boot/firmware"',
         SUITE, str(part / "root"), *sources()], logfile=logdir / "mmdebstrap.log", timeout=5400)
    (part / "ok").write_text(json.dumps({"packages": sorted(packages), "made": time.time()}))
    part.rename(done)
    return done


def _umount_under(d: Path) -> None:
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    for m in sorted((m for m in mounts if m == str(d) or m.startswith(str(d) + "/")), reverse=True):
        subprocess.run(["umount", "-l", m], check=False)



def chroot(root: Path, cmd: str, logfile: Path, env: dict | None = None, timeout: int = 1800):
    """bash -c CMD in ROOT as root, with no network (a namespace of its own: loopback only)."""
    extra = [f"{k}={v}" for k, v in (env or {}).items()]
    return run(["unshare", "--net", "--", "sh", "-c", 'ip link set lo up 2>/dev/null; exec chroot "$0" env -i "$@"',
                str(root), f"PATH={PATH}", "HOME=/root", "LANG=C.UTF-8", *extra, "bash", "-c", cmd],
               logfile=logfile, timeout=timeout)


def stage_bundle(logdir: Path) -> Path:
    """The offline bundle of this checkout for a 64-bit Pi (pip's own cache makes a rebuild quick)."""
    d = BUILD / "bundle"
    if d.exists():
        shutil.rmtree(d)
    p = run([sys.executable, "-m", "companion", "bundle", "--for", "aarch64", "--source", str(REPO), str(d)],
            timeout=900)
    (logdir / "bundle.log").write_text(p.stdout + p.stderr)
    (BUILD / "bundle.json").write_text(p.stdout)
    return d


# the units the image enables (companion's own, as install.sh enables them, and the image's first boot and
# offline update; ssh is enabled at first boot only when the owner put a key on the boot partition)
ENABLE = ["companion.service", "companion-backup.timer", "companion-landing.socket", "companion-firstboot.service",
          "companion-update.service"]

FSTAB = f"""# the image's two partitions, by label (a Pi's SD slot and a USB reader name the card differently)
LABEL={ROOT_LABEL} / ext4 rw,noatime,errors=remount-ro 0 1
LABEL={BOOT_LABEL} /boot/firmware vfat rw,noatime,fmask=0077,dmask=0077 0 2
"""


def stage_custom(cached: Path, bundle: Path, logdir: Path) -> tuple[Path, Path]:
    """A copy of the cached tree made into the box: companion from the bundle, the image's files, the settings
    of an appliance. Returns (root, firmware)."""
    work = CACHE / "work"  # outside the checkout: its /proc is mounted while companion installs
    if work.exists():
        _umount_under(work)
        shutil.rmtree(work)
    work.mkdir(parents=True)
    root, fw = work / "root", work / "firmware"
    run(["cp", "-a", str(cached / "root"), str(root)])
    run(["cp", "-a", str(cached / "firmware"), str(fw)])
    for name, minor in (("null", 3), ("zero", 5), ("full", 7), ("random", 8), ("urandom", 9)):
        dev = root / "dev" / name
        if not dev.exists():
            run(["mknod", "-m", "666", str(dev), "c", "1", str(minor)])
    shutil.copytree(bundle, root / "tmp" / "bundle")
    # the image's own files: first boot, the offline update, their units
    run(["cp", "-a", "--no-preserve=ownership", f"{HERE / 'rootfs'}/.", str(root)])
    custom = logdir / "custom.log"
    run(["mount", "-t", "proc", "proc", str(root / "proc")])
    run(["mount", "--bind", str(fw), str(root / "boot" / "firmware")])
    try:
        log("custom: install.sh from the bundle, in the image's root under qemu-user (a few minutes)")
        # the box's name first: install.sh writes it into the hotspot's DNS (the chroot's hostname is this machine's)
        chroot(root, "echo companion >/etc/hostname && "
                     "/tmp/bundle/systemd/install.sh --wheels /tmp/bundle --no-apt --no-start", custom,
               env={"SYSTEMCTL": "true", "PIP_NO_CACHE_DIR": "1"})
        # the database install.sh made (and its setup code) is this machine's: the box makes its own at first boot
        chroot(root, "rm -rf /var/lib/companion/* /var/lib/companion/.[!.]* && "
                     f"systemctl enable {' '.join(ENABLE)} && "
                     "systemctl disable ssh.service ssh.socket 2>/dev/null; "
                     "rm -f /etc/ssh/ssh_host_*; "
                     "printf '127.0.0.1\\tlocalhost\\n127.0.1.1\\tcompanion\\n::1\\tlocalhost ip6-localhost\\n' >/etc/hosts && "
                     ": >/etc/machine-id && rm -f /var/lib/dbus/machine-id && "
                     f"sed -i 's|^#\\?ROOTPART=.*|ROOTPART=LABEL={ROOT_LABEL}|' /etc/default/raspi-firmware && "
                     "/etc/kernel/postinst.d/z50-raspi-firmware && "
                     "rm -rf /tmp/bundle /var/cache/apt/*.bin /var/lib/apt/lists/* /root/.cache", custom)
        (root / "etc" / "fstab").write_text(FSTAB)
        # the root by its label in cmdline.txt (the hook run in the chroot kept /dev/mmcblk0p2: the SD card is
        # mmcblk1 on a Pi 4 under Debian's kernel, sda in a USB reader)
        cmdline = fw / "cmdline.txt"
        cmdline.write_text(re.sub(r"\broot=\S+", f"root=LABEL={ROOT_LABEL}", cmdline.read_text()))
        for initrd in [*(root / "boot").glob("initrd.img-*"), *fw.glob("initrd.img-*")]:
            append_to_initrd(initrd, root, ["etc/e2fsck.conf"])
    finally:
        run(["umount", str(root / "boot" / "firmware")])
        run(["umount", str(root / "proc")])
    # the owner's settings file, as an example to edit (every line commented: the defaults)
    shutil.copy(HERE / "companion.txt", fw / "companion.txt")
    return root, fw


def append_to_initrd(initrd: Path, root: Path, files: list[str]) -> None:
    """FILES of ROOT added to INITRD as a second cpio archive after the first (the kernel unpacks them in turn):
    the image's /etc/e2fsck.conf for the boot's file system check, without making the initrd again (that takes
    over ten minutes under qemu-user; a kernel update on the box makes it anew, with the file, by the fsck hook)."""
    p = subprocess.run(["cpio", "--quiet", "-o", "-H", "newc", "-R", "0:0"], cwd=root,
                       input=("\n".join(files) + "\n").encode(), capture_output=True, check=True)
    with open(initrd, "ab") as f:
        pad = (-f.tell()) % 4
        f.write(b"\0" * pad + p.stdout)


def du_bytes(d: Path) -> int:
    return int(subprocess.run(["du", "-sb", str(d)], capture_output=True, text=True, check=True).stdout.split()[0])


def partition_table(boot_mb: int, root_mb: int) -> str:
    """sfdisk's script: a DOS table (the Pi's boot ROM reads no GPT on a Pi 3), the FAT boot partition at 4 MiB,
    the root file system after it (grown to the card at first boot)."""
    start = 8192  # sectors of 512 bytes: 4 MiB
    return (f"label: dos\nunit: sectors\n\nstart={start}, size={boot_mb * 2048}, type=c, bootable\n"
            f"start={start + boot_mb * 2048}, size={root_mb * 2048}, type=83\n")


def stage_assemble(root: Path, fw: Path, logdir: Path) -> Path:
    """The image from the two trees, with no loop device: mkfs.ext4 -d, mkfs.vfat + mcopy, sfdisk on a file."""
    asm = logdir / "assemble.log"
    out = BUILD / IMAGE_NAME
    parts = BUILD / "parts"
    parts.mkdir(exist_ok=True)
    used = du_bytes(root)
    root_mb = int(used * 1.2 / 2**20) + 300  # room for the first boot's own files; the card's rest comes then
    boot_img, root_img = parts / "boot.vfat", parts / "root.ext4"
    for f in (boot_img, root_img, out):
        f.unlink(missing_ok=True)
    run(["mkfs.vfat", "-F", "32", "-n", BOOT_LABEL, "-C", str(boot_img), str(BOOT_MB * 1024)], logfile=asm)
    run(["mcopy", "-i", str(boot_img), "-s", "-p", "-m", *[str(p) for p in sorted(fw.iterdir())], "::/"],
        logfile=asm)
    run(["truncate", "-s", f"{root_mb}M", str(root_img)])
    run(["mkfs.ext4", "-q", "-L", ROOT_LABEL, "-d", str(root), "-E", "lazy_itable_init=0,lazy_journal_init=0",
         str(root_img)], logfile=asm)
    run(["truncate", "-s", f"{4 + BOOT_MB + root_mb}M", str(out)])
    subprocess.run(["sfdisk", "-q", str(out)], input=partition_table(BOOT_MB, root_mb), text=True, check=True,
                   capture_output=True)
    run(["dd", f"if={boot_img}", f"of={out}", "bs=1M", "seek=4", "conv=notrunc,sparse", "status=none"])
    run(["dd", f"if={root_img}", f"of={out}", "bs=1M", f"seek={4 + BOOT_MB}", "conv=notrunc,sparse",
         "status=none"])
    boot_img.unlink()
    root_img.unlink()
    return out


def main(argv: list[str]) -> int:
    install_tools()
    enable_binfmt()
    reason = missing_tools()
    if reason:
        die(reason, 2)
    BUILD.mkdir(parents=True, exist_ok=True)
    logdir = BUILD / "logs"
    logdir.mkdir(exist_ok=True)
    times = {}
    t = time.monotonic()
    root = stage_root(PACKAGES, logdir)
    times["root_s"] = round(time.monotonic() - t, 1)
    log(f"root: {root} ({times['root_s']} s)")
    t = time.monotonic()
    bundle = stage_bundle(logdir)
    times["bundle_s"] = round(time.monotonic() - t, 1)
    log(f"bundle: {bundle} ({times['bundle_s']} s)")
    t = time.monotonic()
    tree, fw = stage_custom(root, bundle, logdir)
    times["custom_s"] = round(time.monotonic() - t, 1)
    log(f"custom: {times['custom_s']} s")
    t = time.monotonic()
    image = stage_assemble(tree, fw, logdir)
    times["assemble_s"] = round(time.monotonic() - t, 1)
    size = image.stat().st_size
    doc = {"image": str(image), "image_mb": round(size / 2**20), "root_key": root.name, **times,
           "total_s": round(sum(times.values()), 1), "packages": PACKAGES,
           "bundle": json.loads((BUILD / "bundle.json").read_text())}
    (BUILD / "build.json").write_text(json.dumps(doc, indent=2) + "\n")
    log(f"{image}: {doc['image_mb']} MB, built in {doc['total_s']} s (flash it: docs/pi.md)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
