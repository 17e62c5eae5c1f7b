"""What a person sees of sign-in recovery and sessions: the organiser sees the phones signed in on /join and
signs one out; a forgotten PIN is replaced with the code of `companion pin reset`; at 360 px wide."""

import re
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from tests.web.serverproc import REPO

pytestmark = pytest.mark.browser
NARROW = {"width": 360, "height": 740}


def fits(page):
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 360


def test_organiser_sees_and_ends_sessions_then_resets_a_forgotten_pin(new_context, server, artifacts_dir):
    org = new_context(viewport=NARROW).new_page()
    org.goto("/login")
    org.fill("#setup-code", server.setup_code)
    org.fill("#new-pin", "482193")
    org.click("#setup-form button[type=submit]")
    org.wait_for_url(server.url + "/join")
    expect(org.locator("#sessions")).to_contain_text("Organiser (this phone)")
    link = org.locator("#join-url").inner_text()
    phone = new_context().new_page()
    phone.goto(link)
    expect(phone.locator("#role-badge")).to_have_text("player")
    org.reload()
    row = org.locator("#sessions li", has_text="Player")
    expect(row).to_have_count(1)
    fits(org)
    org.screenshot(path=str(artifacts_dir / "web-join-sessions.png"), full_page=True)
    row.locator("button").click()
    expect(org.locator("#sessions li", has_text="Player")).to_have_count(0)
    phone.reload()
    expect(phone.locator("#role-badge")).not_to_have_text("player")

    # the PIN is forgotten: `companion pin reset` on the box prints a code for /login
    p = subprocess.run([sys.executable, "-m", "companion", "pin", "reset", "--data-dir", str(server.data_dir)],
                       capture_output=True, text=True, cwd=str(REPO), timeout=60)
    assert p.returncode == 0, p.stderr
    code = p.stdout.strip().splitlines()[-1]
    someone = new_context(viewport=NARROW, locale="it-IT").new_page()
    someone.goto("/login")
    someone.click("#pin-forgot summary")
    expect(someone.locator("#pin-forgot")).to_contain_text("companion pin reset")
    fits(someone)
    someone.screenshot(path=str(artifacts_dir / "web-login-forgot-it.png"), full_page=True)
    someone.fill("#setup-code", code)
    someone.fill("#new-pin", "135792")
    someone.click("#setup-form button[type=submit]")
    someone.wait_for_url(server.url + "/join")
    expect(someone.locator("#role-badge")).to_have_class(re.compile("role-organiser"))
    org.reload()  # the old organiser session ended with the reset
    expect(org.locator("#role-badge")).not_to_have_text("organiser")
