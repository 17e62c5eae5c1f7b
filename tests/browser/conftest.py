"""Browser tests: Playwright driving Debian's headless Chromium against the real server (a subprocess
on a free loopback port). Screenshots go to test-artifacts/. A module with ``ENGINES = ("chromium", "webkit")``
runs its tests that take a ``device`` in both engines (tests/engines.py: one kit, the engine a parameter), the
others in Chromium alone."""

import pytest

from tests.conftest import engine_browser, engines_of
from tests.web.serverproc import Server


def pytest_generate_tests(metafunc):
    engines_of(metafunc)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("browser") / "data")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def browser(_chromium):
    """The process's Chromium; every context a module opened is closed when the module ends (its pages
    would otherwise keep reconnecting to the module's stopped server)."""
    yield _chromium
    for ctx in list(_chromium.contexts):
        ctx.close()


@pytest.fixture
def new_context(browser, server):
    contexts = []

    def make(locale="en-GB", **kw):
        kw.setdefault("viewport", {"width": 412, "height": 860})
        ctx = browser.new_context(base_url=server.url, locale=locale, **kw)
        ctx.set_default_timeout(15_000)  # as expect's (tests/conftest.py)
        contexts.append(ctx)
        return ctx

    yield make
    for c in contexts:
        c.close()


@pytest.fixture
def device(request, engine, server):
    """A new device in the test's engine (``device(locale=, viewport=)``: a context, its own cookies), each closed
    when the test ends; its checks through tests/engines.py's ``expect``."""
    b = engine_browser(request, engine)
    made = []

    def make(locale="en-GB", viewport=None):
        ctx = b.new_context(base_url=server.url, locale=locale, viewport=viewport or {"width": 412, "height": 860})
        ctx.set_default_timeout(15_000)
        made.append(ctx)
        return ctx

    yield make
    for c in made:
        c.close()
