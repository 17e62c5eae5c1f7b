"""The hardware boot's one wait (image/pi_hw.py, image/pi_bt.py): a check asked again until it holds."""

from __future__ import annotations

import time


def until(what: str, test, limit: float, every: float):
    """``test()``'s first true answer, asked every EVERY seconds for at most LIMIT; a RuntimeError naming WHAT
    when it never holds."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        v = test()
        if v:
            return v
        time.sleep(every)
    raise RuntimeError(f"{what}: not within {limit:.0f} s")
