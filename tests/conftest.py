import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

from tests.debian_packages import install_hint

# No timing in tests: speed is checked by `make bench`, not by deadlines.
# Reproducible property tests: `make test` draws the same examples on every run (derandomize), so a
# failure fails again; `make soak` (COMPANION_SOAK=1) explores at random and prints the failing example
# as a @reproduce_failure blob (print_blob) to paste onto the test.
# A property without its own max_examples draws 50 examples in `make test` (the same 50 every run) and 300
# under `make soak`, where the random exploration is.
settings.register_profile("companion", deadline=None, derandomize=not os.environ.get("COMPANION_SOAK"),
                          max_examples=300 if os.environ.get("COMPANION_SOAK") else 50, print_blob=True)
settings.load_profile("companion")


def _seed_hypothesis_utf8_table():
    """Schemathesis draws its strings with ``st.characters(codec="utf-8")``, and on a fresh checkout (CI) hypothesis
    works out which characters UTF-8 encodes by trying all 1.1 million code points: about 9 s of CPU in every
    test process that gets there before the table is in .hypothesis/. The answer is known (every code point but
    the surrogates, all of them round-trip), so it is written down first, in hypothesis's own file and format;
    a hypothesis with another file name or format ignores it and works it out itself."""
    import codecs
    import gzip
    import json
    import tempfile

    try:
        from hypothesis.internal.charmap import charmap_file

        path = charmap_file(f"codec-v2-{codecs.lookup('utf-8').name}")
    except Exception:  # another hypothesis: nothing to seed
        return
    if path.exists():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent)
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=1) as f:
            f.write(json.dumps([[[0, 0xD7FF], [0xE000, 0x10FFFF]], []]).encode())
        os.replace(tmp, path)  # (atomic: another worker may be writing the same file)
    except OSError:
        pass


@pytest.hookimpl(trylast=True)  # (after hypothesis's own sessionstart: its storage is not for conftest import time)
def pytest_sessionstart(session):
    _seed_hypothesis_utf8_table()


REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "test-artifacts"

# The files that take longest in `make test`, sent to the workers first (measured with --durations=0 in 5
# workers): files are handed out in collection order one at a time, so a long file collected last ran
# alone at the end while the other workers sat idle. Every other file keeps its order.
SLOW_FIRST = [  # (Chromium files, the evenings first, and others alternate, so that the first ones are not all Chromium)
    "tests/evening/test_rome.py", "tests/test_bundle.py", "tests/evening/test_conquest.py",
    "tests/stress/test_concurrency.py", "tests/evening/test_richelieu.py", "tests/stress/test_openapi_fuzz_negative.py",
    "tests/browser/test_boards_editor.py", "tests/stress/test_cli_fuzz.py", "tests/browser/test_trackers_conquest.py",
    "tests/test_systemd.py", "tests/evening/test_web_of_power.py", "tests/stress/test_openapi_fuzz.py",
    "tests/browser/test_ui_review.py", "tests/stress/test_crash.py", "tests/browser/test_smart_dice.py",
    "tests/evening/test_conquest_elimination.py", "tests/test_gpio.py", "tests/evening/test_mixed.py",
    "tests/browser/test_tv_screens.py", "tests/cli/test_season.py", "tests/browser/test_tv.py",
    "tests/stress/test_replica_e2e.py", "tests/browser/test_table_join.py", "tests/stress/test_security.py",
    "tests/browser/test_viewer_and_undo.py", "tests/stress/test_storage_faults.py", "tests/browser/test_pages.py",
    "tests/games/test_rome_match.py", "tests/browser/test_tournament_day.py", "tests/browser/test_game_night.py",
    "tests/browser/test_trackers_rome.py", "tests/browser/test_wop_scoring_step.py", "tests/evening/test_first_evening.py",
    "tests/browser/test_roster.py", "tests/browser/test_tap_counts.py",
    "tests/browser/test_trackers_richelieu.py", "tests/browser/test_restart.py",
]


def pytest_collection_modifyitems(config, items):
    rank = {f: i for i, f in enumerate(SLOW_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # (a stable sort)
    if os.environ.get("COMPANION_PYTHON_ONLY"):  # `make test-python`: the tiers that need nothing outside Python
        skip = pytest.mark.skip(reason="not run by make test-python: it needs Debian's chromium (make test runs it)")
        for item in items:
            if "browser" in item.keywords:
                item.add_marker(skip)


@pytest.hookimpl(trylast=True)  # the run's last lines, above pytest's count
def pytest_terminal_summary(terminalreporter):
    """What the run did not run, by reason: "browser tier: 134 skipped, REASON" (tests/skips.py)."""
    from tests.skips import lines, reason_of

    skipped = [r for r in terminalreporter.stats.get("skipped", []) if getattr(r, "nodeid", None)]
    if not skipped:
        return
    terminalreporter.write_sep("-", f"not run: {len(skipped)} skipped, by reason")
    for line in lines([(r.nodeid, reason_of(r)) for r in skipped]):
        terminalreporter.write_line(line)


# Debian's old headless shell (package chromium-headless-shell, the same Chromium's engine without the browser's
# own windows, as Playwright itself runs headless) where it is installed: the evening tests take about a quarter
# less CPU with it (the browser process's share most of all); else Debian's chromium, --headless
CHROMIUM_SHELL = "/usr/bin/chromium-headless-shell"
CHROMIUM = CHROMIUM_SHELL if os.path.exists(CHROMIUM_SHELL) else "/usr/bin/chromium"
# --disable-features: a headless window of this Chromium still builds its address bar's drop-down, a page of
# the browser's own (chrome://omnibox-popup), in a renderer of its own for every context: about a third of a
# browser test's renderer time went there, and no test reads the browser's address bar
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup"]


@pytest.fixture(scope="session")
def _chromium():
    """One Chromium per test process (a launch costs about a CPU-second), for tests/browser/ and
    tests/evening/; each module gets it clean (their ``browser`` fixtures)."""
    if not shutil.which(CHROMIUM):
        pytest.skip(f"Debian's chromium is not installed ({install_hint('chromium')}; make test installs it)")
    from playwright.sync_api import expect, sync_playwright

    # a wait ends as soon as what it waits for holds; its limit only says when to give up. Five workers share
    # two cores in `make test` (and CI's are slower still), so a page may take seconds to redraw: give up after
    # 15 s, not Playwright's 5 (a passing test takes no longer for it)
    expect.set_options(timeout=15_000)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def _webkit():
    """WebKit's devices of this test process (tests/engines.py: WebKitGTK through Selenium on one Xvfb display),
    opened on first use; skips, naming the package, where WebKitGTK's driver or Xvfb is missing."""
    from tests.engines import WebKitBrowser, webkit_missing

    why = webkit_missing()
    if why:
        pytest.skip(why)
    b = WebKitBrowser()
    yield b
    b.close()


def engines_of(metafunc):
    """A module's engines (``ENGINES = ("chromium", "webkit")``; Chromium alone where it names none): its tests
    run once in each, each engine with its own module-scoped server (the ``engine`` fixture)."""
    if "engine" in metafunc.fixturenames:
        metafunc.parametrize("engine", getattr(metafunc.module, "ENGINES", ("chromium",)), scope="module")


def engine_browser(request, engine):
    """The process's browser of ``engine``: Chromium (Playwright's) or WebKit's devices (tests/engines.py)."""
    return request.getfixturevalue("_webkit" if engine == "webkit" else "_chromium")


@pytest.fixture
def fake_game(monkeypatch):
    """Register tests/fakegame.py under a real game id, so the export schema accepts it."""
    from companion import games

    monkeypatch.setitem(games.GAMES, "richelieu", "tests.fakegame")
    return "richelieu"


@pytest.fixture
def clock():
    from companion.base.timeutil import FakeClock

    return FakeClock("2026-03-01T20:00:00Z")


@pytest.fixture
def store(tmp_path, clock):
    from companion.storage import Store

    s = Store(tmp_path / "companion.db", clock=clock)
    yield s
    s.close()


@pytest.fixture
def run_cli(tmp_path):
    """Run ``python -m companion`` as a real process: (returncode, stdout, stderr)."""

    def run(*args, stdin=None, env=None):
        full_env = dict(os.environ, COMPANION_DATA=str(tmp_path / "data"))
        full_env.update(env or {})
        p = subprocess.run([sys.executable, "-m", "companion", *map(str, args)], input=stdin,
                           capture_output=True, text=True, env=full_env, cwd=str(tmp_path), timeout=60)
        return p.returncode, p.stdout, p.stderr

    return run


@pytest.fixture(scope="session")
def artifacts_dir():
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
