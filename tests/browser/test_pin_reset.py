"""A forgotten organiser PIN: `companion pin reset` on the box, then the new PIN at /login (360 px wide)."""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.browser


def test_a_pin_reset_code_sets_a_new_pin_in_the_browser(new_context, server, artifacts_dir):
    from playwright.sync_api import expect

    org = new_context(viewport={"width": 360, "height": 740}).new_page()
    org.goto("/login")
    org.fill("#setup-code", server.setup_code)
    org.fill("#new-pin", "482193")
    org.click("#setup-form button[type=submit]")
    org.wait_for_url(server.url + "/join")

    # the PIN is forgotten: on the box, with the database at hand
    p = subprocess.run([sys.executable, "-m", "companion", "pin", "reset", "--data-dir", str(server.data_dir)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "forgot the organiser PIN" in p.stdout
    code = p.stdout.strip().splitlines()[-1]

    org.goto("/login")  # signed out, and the PIN form gave way to the setup form
    expect(org.locator("#setup-form")).to_be_visible()
    expect(org.locator("body")).to_contain_text("companion pin reset")
    org.screenshot(path=str(artifacts_dir / "web-login-after-pin-reset.png"), full_page=True)
    assert org.evaluate("document.documentElement.scrollWidth") <= 360
    org.fill("#setup-code", code)
    org.fill("#new-pin", "111111")
    org.click("#setup-form button[type=submit]")
    org.wait_for_url(server.url + "/join")
    expect(org.locator("#role-badge")).to_have_text("organiser")

    other = new_context(viewport={"width": 360, "height": 740}).new_page()
    other.goto("/login")  # the new PIN signs in
    other.fill("#pin", "111111")
    other.click("#login-form button[type=submit]")
    expect(other.locator("#role-badge")).to_have_text("organiser")
