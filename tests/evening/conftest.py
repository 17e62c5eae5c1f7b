"""Whole evenings in headless Chromium against the real server (tests/evening/kit.py). One server per
module, started with the test hooks of ``companion serve`` (a seeded random source, a clock the test
moves forward); one Chromium per test process (tests/conftest.py), every phone a context of it."""

import pytest

from tests.evening.kit import EveningServer


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = EveningServer(tmp_path_factory.mktemp("evening"))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def browser(_chromium):
    """The process's Chromium; every context a module opened is closed when the module ends."""
    yield _chromium
    for ctx in list(_chromium.contexts):
        ctx.close()
