"""A wheel built from the repository carries web/, schemas/, hardware/ and the migrations, and uses them
after a plain (non-editable) install, away from the checkout."""

import subprocess
import sys
import zipfile

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """(the wheel, what the build printed)."""
    out = tmp_path_factory.mktemp("wheel")
    # the build step of the installer and `make wheel`: in a copy, so the checkout gets no build/ or egg-info
    p = subprocess.run([str(REPO / "systemd" / "build-wheel.sh"), str(REPO), str(out), f"{sys.executable} -m pip"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    wheels = list(out.glob("companion-*.whl"))
    assert len(wheels) == 1
    return wheels[0], p.stdout + p.stderr


@pytest.fixture(scope="module")
def wheel(build):
    return build[0]


def test_the_build_says_nothing_about_ignored_packages(build):
    """Every data folder is a package of its own (setup.py walks them): no setuptools warning per folder
    (some 300 lines that `make run` printed before the address on a fresh clone)."""
    out = build[1]
    assert "would be ignored" not in out and "absent from the `packages` configuration" not in out, out[-3000:]


def test_wheel_contains_the_data_packages(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "companion/schema_files/match-export.schema.json" in names
    assert "companion/storage/migrations/0001_core.sql" in names
    assert any(n.startswith("companion/web_files/") for n in names)
    assert any(n.startswith("companion/hardware_files/") for n in names)
    repo_schemas = {p.name for p in (REPO / "schemas").glob("*.schema.json")}
    shipped = {n.split("/")[-1] for n in names if n.startswith("companion/schema_files/") and n.endswith(".schema.json")}
    assert repo_schemas == shipped
    repo_web = {str(p.relative_to(REPO / "web")) for p in (REPO / "web").rglob("*") if p.is_file()}
    shipped_web = {n.removeprefix("companion/web_files/") for n in names if n.startswith("companion/web_files/")}
    assert repo_web <= shipped_web, repo_web - shipped_web
    repo_hw = {p.name for p in (REPO / "hardware").iterdir() if p.is_file()}
    assert repo_hw <= {n.split("/")[-1] for n in names if n.startswith("companion/hardware_files/")}
    assert "companion/games/data/web-of-power.board.json" in names


def test_wheel_carries_every_static_text_file_compressed_ahead(wheel):
    """Each script, style, SVG and JSON file of web/static has its ``.gz`` in the wheel (setup.py), holding
    exactly that file: a box installed from it (the bundle, the image) compresses nothing to send them."""
    import gzip

    from companion.base import precompressed

    z = zipfile.ZipFile(wheel)
    names = set(z.namelist())
    prefix = "companion/web_files/static/"
    texts = [n for n in names if n.startswith(prefix) and precompressed.worth(n, z.getinfo(n).file_size)]
    assert len(texts) > 20 and any(n.endswith(".js") for n in texts) and any(n.endswith(".css") for n in texts)
    for n in texts:
        assert n + ".gz" in names, n
        assert gzip.decompress(z.read(n + ".gz")) == z.read(n), n
    assert not [n for n in names if n.endswith(".gz") and n[:-3] not in texts]


def test_installed_wheel_finds_its_files_away_from_the_checkout(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import companion.base.resources as r, companion.base.schemas as s, companion.storage as st, sys\n"
        "assert str(r.schemas_dir()).startswith(sys.argv[1]), r.schemas_dir()\n"
        "assert str(r.web_dir()).startswith(sys.argv[1]), r.web_dir()\n"
        "assert s.schema_names(), 'no schemas'\n"
        "s.validate('match-export', {'id': 'a', 'game': 'richelieu', 'players': ['x'],"
        " 'created_at': '2026-01-01T00:00:00Z', 'events': []})\n"
        # a reference to another file (season.settings) resolves inside the package, checked and refused
        "s.validate('season.club', {'name': 'c', 'settings': {'threshold': 0.3}})\n"
        "try:\n    s.validate('season.club', {'name': 'c', 'settings': {'threshold': 2}})\n"
        "except s.InputError as e:\n    assert e.field == '$.settings.threshold', e.field\n"
        "else:\n    raise SystemExit('a threshold of 2 was accepted')\n"
        "db = st.Store(sys.argv[2]); print(db.schema_version())\n"
    )
    p = subprocess.run([sys.executable, "-c", code, str(site), str(tmp_path / "x.db")], capture_output=True,
                       text=True, cwd=str(tmp_path), env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"},
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert int(p.stdout.strip()) >= 1
