"""Browser tests: Playwright driving Debian's headless Chromium against the real server (a subprocess
on a free loopback port). Screenshots go to test-artifacts/."""

import shutil

import pytest

from tests.web.serverproc import Server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Server(tmp_path_factory.mktemp("browser") / "data")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def _chromium():
    """One Chromium per test process (a launch costs about a CPU-second); each module gets it clean."""
    if not shutil.which(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


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
        ctx.set_default_timeout(10_000)
        contexts.append(ctx)
        return ctx

    yield make
    for c in contexts:
        c.close()
