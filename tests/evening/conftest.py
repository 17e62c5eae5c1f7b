"""Whole evenings against the real server (tests/evening/kit.py). One server per module (and engine), started
with the test hooks of ``companion serve`` (a seeded random source, a clock the test moves forward); one browser
per test process (tests/conftest.py), every phone a context of it. A module with ``ENGINES = ("chromium",
"webkit")`` runs in both engines (tests/engines.py), else in Chromium alone."""

import pytest

from tests.conftest import engine_browser, engines_of
from tests.evening.kit import EveningServer


def pytest_generate_tests(metafunc):
    engines_of(metafunc)


@pytest.fixture(scope="module")
def server(tmp_path_factory, engine):
    s = EveningServer(tmp_path_factory.mktemp(f"evening-{engine}"))
    yield s
    s.stop()


@pytest.fixture(scope="module")
def browser(request, engine):
    """The process's browser of the module's engine; every context a module opened is closed when it ends."""
    b = engine_browser(request, engine)
    yield b
    for ctx in list(b.contexts):
        ctx.close()
