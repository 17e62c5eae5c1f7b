"""A phone's device in words from its browser's User-Agent header: the system and the browser family only
("Android · Chrome", "iPhone · Safari"), so that an organiser can tell the phones of a table apart. No I/O.

Only this short family is kept with a session (never the whole header: it names models and versions that
nobody needs to see). An unknown header gives None, and the page names the phone without it.
"""

from __future__ import annotations

import re

__all__ = ["device_family"]

# (pattern, name), first match wins: the order matters (iPadOS and Android phones name other systems too)
_SYSTEMS = [
    (r"iPad", "iPad"), (r"iPhone|iPod", "iPhone"), (r"Android", "Android"), (r"CrOS", "ChromeOS"),
    (r"Windows", "Windows"), (r"Macintosh|Mac OS X", "Mac"), (r"Linux", "Linux"),
]
# browsers built on Chrome or Safari name those too: the own names come first
_BROWSERS = [
    (r"SamsungBrowser/", "Samsung Internet"), (r"EdgA?/|EdgiOS/", "Edge"), (r"OPR/|Opera|OPiOS/", "Opera"),
    (r"Firefox/|FxiOS/", "Firefox"), (r"CriOS/|Chrome/|Chromium/", "Chrome"), (r"Safari/", "Safari"),
]


def device_family(user_agent: str | None) -> str | None:
    """``"Android · Chrome"``: the system and the browser named by a User-Agent header; None when neither
    is recognised (one alone is given alone)."""
    if not isinstance(user_agent, str) or not user_agent:
        return None
    ua = user_agent[:512]
    system = next((name for pat, name in _SYSTEMS if re.search(pat, ua)), None)
    browser = next((name for pat, name in _BROWSERS if re.search(pat, ua)), None)
    parts = [p for p in (system, browser) if p]
    return " · ".join(parts) or None
