"""Browser tests: Playwright driving Debian's headless Chromium against the real server (a subprocess
on a free loopback port). Screenshots go to test-artifacts/."""

import pytest

from tests.web.serverproc import Server


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
