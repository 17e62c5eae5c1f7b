"""The wheel's packages (the project's metadata is in pyproject.toml).

The Python packages, and the data folders at the top of the repository shipped inside the wheel as
packages of data: web/ as companion.web_files, schemas/ as companion.schema_files (the schemas
themselves; their examples are test material and stay in the repository), hardware/ as
companion.hardware_files; a plain ``pip install .`` serves the UI and validates. Every subfolder of
web/ and hardware/ is listed as a package of its own, found by walking the folders: setuptools copies
its files without one "Package would be ignored" warning per folder (some 300 lines that `make run`
printed before its address), and a new folder needs no edit here."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
CODE = ["companion", "companion.base", "companion.core", "companion.games", "companion.games.data",
        "companion.storage", "companion.storage.migrations", "companion.services", "companion.cli",
        "companion.web", "companion.web.trackers"]  # bench/ stays in the repository: `make bench`
DATA = {"companion.web_files": "web", "companion.schema_files": "schemas", "companion.hardware_files": "hardware"}
WALKED = ("web", "hardware")  # schemas/: the schemas at its top only


def data_packages() -> list[str]:
    out = []
    for package, folder in DATA.items():
        out.append(package)
        if folder not in WALKED:
            continue
        root = HERE / folder
        for d in sorted(p for p in root.rglob("*") if p.is_dir()):
            parts = d.relative_to(root).parts
            if any(part.startswith((".", "__")) for part in parts):
                continue
            out.append(".".join((package, *parts)))
    return out


class BuildPy(build_py):
    """The packages as setuptools copies them, then ``<file>.gz`` beside each static text file of the copy
    (``companion/base/precompressed.py``, loaded by its path: this runs in the build's own environment): a box
    sends them compressed without compressing anything. Not in an editable install (the checkout's files
    are served where they are: `make run` makes their ``.gz``)."""

    def run(self):
        super().run()
        static = Path(self.build_lib) / "companion" / "web_files" / "static"
        if getattr(self, "editable_mode", False) or not static.is_dir():
            return
        import importlib.util

        spec = importlib.util.spec_from_file_location("_precompressed", HERE / "companion" / "base" / "precompressed.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.build(str(static))


setup(
    cmdclass={"build_py": BuildPy},
    packages=CODE + data_packages(),
    # the files are the package_data below, not whatever an older build's SOURCES.txt listed
    include_package_data=False,
    package_dir=dict(DATA),
    package_data={**{p: ["*"] for p in data_packages() if not p.startswith("companion.schema_files")},
                  "companion.schema_files": ["*.json"],
                  "companion.storage.migrations": ["*.sql"], "companion.games.data": ["*.json"]},
)
