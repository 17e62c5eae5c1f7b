"""The installed case for the start rows (CLI cold starts, `companion serve` to its first `/healthz`).

The development venv installs companion in editable mode: every interpreter start there imports
setuptools' editable finder (with pathlib, importlib.util, fnmatch, re…), which a box installed from the
wheel never does, and the code's bytecode is whatever the last edit left. A Pi starts from a wheel
install, whose files pip compiled at install time. So ``make()`` lays out what the wheel installs
(``setup.py``: the packages, and web/, schemas/*.json and hardware/ as ``companion.web_files``,
``companion.schema_files``, ``companion.hardware_files``) in the site-packages of a fresh venv of the
same interpreter, compiles it as pip does, and reaches the dependencies through a ``.pth`` line to the
development venv's site-packages (a path line: that folder's own ``.pth`` files, the editable finder's
among them, are not run). The runner makes it once per ``make bench`` and hands its interpreter to the
modules (``python()``); the start rows run it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ENV = "COMPANION_BENCH_PYTHON"
REPO = Path(__file__).resolve().parents[1]


def python() -> str:
    """The installed case's interpreter (the runner made it), else this one."""
    return os.environ.get(ENV) or sys.executable


def make(folder: Path) -> str:
    """The venv with companion laid out as its wheel installs it; returns its interpreter."""
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120,
                   capture_output=True)
    exe = venv / "bin" / "python"
    site = Path(subprocess.run([str(exe), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True, timeout=60).stdout.strip())
    (site / "companion-bench-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "companion", site / "companion", ignore=ignore)
    shutil.copytree(REPO / "web", site / "companion" / "web_files", ignore=ignore)
    shutil.copytree(REPO / "hardware", site / "companion" / "hardware_files", ignore=ignore)
    schemas = site / "companion" / "schema_files"
    schemas.mkdir()
    for f in (REPO / "schemas").glob("*.json"):
        shutil.copy2(f, schemas / f.name)
    subprocess.run([str(exe), "-m", "compileall", "-q", str(site / "companion")], check=True, timeout=300,
                   capture_output=True)
    probe = subprocess.run([str(exe), "-c", "import sys, companion; print(companion.__file__); "
                            "print(any('editable' in m for m in sys.modules))"],
                           capture_output=True, text=True, timeout=60, cwd=str(folder))
    out = probe.stdout.split()
    if probe.returncode != 0 or not out or not out[0].startswith(str(site)) or out[1] != "False":
        raise RuntimeError(f"the installed case does not import as installed: {probe.stdout} {probe.stderr[-300:]}")
    return str(exe)
