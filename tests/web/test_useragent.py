"""A phone's device in words from its User-Agent (companion/web/useragent.py): system and browser family only."""

import pytest

from companion.web.useragent import device_family


@pytest.mark.parametrize("ua, words", [
    ("Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile "
     "Safari/537.36", "Android · Chrome"),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "Version/17.4 Mobile/15E148 Safari/604.1", "iPhone · Safari"),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
     "CriOS/124.0 Mobile/15E148 Safari/604.1", "iPhone · Chrome"),
    ("Mozilla/5.0 (Linux; Android 13; SM-A536B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 "
     "Chrome/117.0.0.0 Mobile Safari/537.36", "Android · Samsung Internet"),
    ("Mozilla/5.0 (Android 14; Mobile; rv:125.0) Gecko/125.0 Firefox/125.0", "Android · Firefox"),
    ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 "
     "Safari/537.36 Edg/124.0.0.0", "Windows · Edge"),
    ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/124.0 Safari/537.36",
     "Linux · Chrome"),
    ("curl/8.5.0", None), ("", None), (None, None),
])
def test_device_family(ua, words):
    assert device_family(ua) == words
