"""Where the non-Python files are: the repository in a checkout, the wheel's
data packages after a plain ``pip install .``."""

from __future__ import annotations

import functools
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # companion/
_REPO = _PACKAGE.parent


def _locate(repo_dir: str, package: str) -> Path:
    checkout = _REPO / repo_dir
    if checkout.is_dir() and (_REPO / "pyproject.toml").is_file():
        return checkout
    # installed from a wheel: the data package companion.<name> sits in the package's folder
    return _PACKAGE / package.rsplit(".", 1)[1]


@functools.cache
def schemas_dir() -> Path:
    return _locate("schemas", "companion.schema_files")


@functools.cache
def web_dir() -> Path:
    return _locate("web", "companion.web_files")


@functools.cache
def hardware_dir() -> Path:
    return _locate("hardware", "companion.hardware_files")


DATABASE_NAME = "companion.db"


def resolve_data_dir(value: str | None = None) -> str:
    """The box's data folder: ``value`` (``--data-dir``), else ``$COMPANION_DATA``, else ``./data``."""
    import os

    return value or os.environ.get("COMPANION_DATA") or os.path.join(os.getcwd(), "data")


def database_path(data_dir: str | None = None) -> str:
    """The database file in the data folder (:func:`resolve_data_dir`)."""
    import os

    return os.path.join(resolve_data_dir(data_dir), DATABASE_NAME)
