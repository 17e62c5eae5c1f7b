"""Where the non-Python files are: the repository in a checkout, the wheel's
data packages after a plain ``pip install .``.

The folders are found with ``os.path`` (a CLI start reads a schema without importing pathlib, with
fnmatch, urllib.parse and ipaddress); the ``*_dir()`` functions hand them out as ``Path``."""

from __future__ import annotations

import functools
import os

_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # companion/
_REPO = os.path.dirname(_PACKAGE)


@functools.cache
def _locate(repo_dir: str, package: str) -> str:
    checkout = os.path.join(_REPO, repo_dir)
    if os.path.isdir(checkout) and os.path.isfile(os.path.join(_REPO, "pyproject.toml")):
        return checkout
    # installed from a wheel: the data package companion.<name> sits in the package's folder
    return os.path.join(_PACKAGE, package.rsplit(".", 1)[1])


def schema_file(name: str) -> str:
    """The path of ``schemas/<name>.schema.json`` (a string: no pathlib)."""
    return os.path.join(_locate("schemas", "companion.schema_files"), f"{name}.schema.json")


@functools.cache
def schemas_dir():
    from pathlib import Path

    return Path(_locate("schemas", "companion.schema_files"))


@functools.cache
def web_dir():
    from pathlib import Path

    return Path(_locate("web", "companion.web_files"))


@functools.cache
def hardware_dir():
    from pathlib import Path

    return Path(_locate("hardware", "companion.hardware_files"))


DATABASE_NAME = "companion.db"


def resolve_data_dir(value: str | None = None) -> str:
    """The box's data folder: ``value`` (``--data-dir``), else ``$COMPANION_DATA``, else ``./data``."""
    return value or os.environ.get("COMPANION_DATA") or os.path.join(os.getcwd(), "data")


def database_path(data_dir: str | None = None) -> str:
    """The database file in the data folder (:func:`resolve_data_dir`)."""
    return os.path.join(resolve_data_dir(data_dir), DATABASE_NAME)
