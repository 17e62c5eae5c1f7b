"""A phone in WebKit (the engine of every iPhone's browser): Debian's WebKitGTK through its WebDriver
(``WebKitWebDriver``, package webkit2gtk-driver) driven by Selenium, on a virtual X display (Xvfb). The
player joins with the club's link, opens a match, takes a seat with one tap, taps a tracker button, and sees
another device's event arrive live over the stream. Skips, saying why, where the driver, Xvfb or Selenium is
missing. (The evening's kit in two engines is not done yet: this is WebKit's first seat and tap.)"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.browser.trackers_kit import organiser_api
from tests.debian_packages import install_hint

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def webkit():
    if not shutil.which("WebKitWebDriver"):
        pytest.skip(f"WebKitGTK's WebDriver is missing ({install_hint('WebKitWebDriver')})")
    if not shutil.which("Xvfb"):
        pytest.skip(f"Xvfb is missing, WebKitGTK needs a display ({install_hint('Xvfb')})")
    try:
        from selenium import webdriver
    except ImportError:
        pytest.skip("Selenium is missing (pip install -e '.[dev]')")
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1280x900x24"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        display = ":" + xvfb.stdout.readline().strip()
        service = webdriver.WebKitGTKService(executable_path=shutil.which("WebKitWebDriver"), env={"DISPLAY": display})
        d = webdriver.WebKitGTK(options=webdriver.WebKitGTKOptions(), service=service)
        try:
            yield d
        finally:
            d.quit()
    finally:
        xvfb.terminate()
        xvfb.wait(timeout=10)


def until(d, script, timeout=15):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(d, timeout).until(lambda d: d.execute_script("return " + script))


def test_a_phone_in_webkit_sits_taps_and_follows_another_device(webkit, server, artifacts_dir):
    from selenium.webdriver.common.by import By

    org = organiser_api(server)
    mid = org.ok("POST", "/api/matches", {"game": "richelieu", "players": ["Anna", "Bruno", "Carla"]})["id"]
    d = webkit
    d.get(server.join_url)
    d.get(f"{server.url}/m/{mid}")
    until(d, "!!document.querySelector('#scores table') && !!document.querySelector('#game-tracker[data-mounted]')")
    assert "AppleWebKit" in d.execute_script("return navigator.userAgent")
    d.find_element(By.CSS_SELECTOR, "#who-card .who-btn[data-player='Anna']").click()  # one tap: Anna's seat
    until(d, "window.companionMatch.match && window.companionMatch.match.seat === 'Anna'")
    until(d, "!!document.querySelector('#game-tracker button:not([disabled])')")
    seq = d.execute_script("return window.companionMatch.seq")
    income = [b for b in d.find_elements(By.CSS_SELECTOR, "#game-tracker button") if b.text.startswith("Income")]
    assert income, "no income button on Anna's tracker"
    income[0].click()
    until(d, f"window.companionMatch.seq > {seq} && !window.companionMatch.busy")
    events = org.ok("GET", f"/api/matches/{mid}/events")["events"]
    assert events[-1]["type"] == "action" and events[-1]["data"]["player"] == "Anna", events[-1]
    # another device's write arrives live over the stream
    seq = d.execute_script("return window.companionMatch.seq")
    org.ok("POST", f"/api/matches/{mid}/events", {"expected_seq": seq, "type": "track.adjust",
                                                   "data": {"player": "Bruno", "track": "money", "delta": 1}})
    until(d, f"window.companionMatch.seq > {seq}")
    d.save_screenshot(str(artifacts_dir / "webkit-richelieu-seat.png"))
