"""Stress tests: long runs are marked ``@pytest.mark.slow`` and only run under ``make soak``
(``COMPANION_SOAK=1``); ``make test`` skips them. ``examples(n_normal, n_soak)`` sizes loops."""

import os

import pytest

SOAK = bool(os.environ.get("COMPANION_SOAK"))


def examples(normal: int, soak: int) -> int:
    return soak if SOAK else normal


def pytest_collection_modifyitems(config, items):
    if SOAK:
        return
    skip = pytest.mark.skip(reason="long run: `make soak` (COMPANION_SOAK=1) runs it")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
