"""Stress tests. ``make test`` runs them at bounded sizes and skips the ``@pytest.mark.slow`` ones;
``make soak`` (``COMPANION_SOAK=1 pytest -m slow``) runs every test of this folder at soak sizes (the
slow ones included): ``examples(n_normal, n_soak)`` sizes the loops."""

import os
from pathlib import Path

import pytest

SOAK = bool(os.environ.get("COMPANION_SOAK"))
HERE = Path(__file__).resolve().parent


def examples(normal: int, soak: int) -> int:
    return soak if SOAK else normal


@pytest.hookimpl(tryfirst=True)  # before `-m slow` deselects
def pytest_collection_modifyitems(config, items):
    if SOAK:
        for item in items:
            if HERE in Path(str(item.fspath)).resolve().parents:
                item.add_marker(pytest.mark.slow)
        return
    skip = pytest.mark.skip(reason="long run: `make soak` (COMPANION_SOAK=1) runs it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
