"""The run's last lines: its skips grouped by reason and tier, so that "148 skipped" is never the only word
(tests/conftest.py's terminal summary prints them)."""

from __future__ import annotations

from collections import Counter

# the tiers, by the folder under tests/ (the browser tier is the pages through Chromium: tests/browser and the
# evenings of tests/evening)
TIERS = {"browser": "browser tier", "evening": "browser tier", "stress": "stress tier"}


def tier_of(nodeid: str) -> str:
    """The tier of a test, else its file."""
    path = nodeid.split("::", 1)[0]
    parts = path.split("/")
    if len(parts) > 2 and parts[0] == "tests" and parts[1] in TIERS:
        return TIERS[parts[1]]
    return path


def reason_of(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


def lines(skips: list[tuple[str, str]]) -> list[str]:
    """(nodeid, reason) of every skipped test -> one line per reason: "browser tier: 134 skipped, REASON"; a reason
    met in several places names each place's count (most first), the reasons ordered by their counts."""
    by_reason: dict[str, Counter] = {}
    for nodeid, reason in skips:
        by_reason.setdefault(reason, Counter())[tier_of(nodeid)] += 1
    out = []
    for reason, where in sorted(by_reason.items(), key=lambda kv: (-sum(kv[1].values()), kv[0])):
        places = ", ".join(f"{tier} {n}" for tier, n in sorted(where.items(), key=lambda kv: (-kv[1], kv[0])))
        n = sum(where.values())
        if len(where) == 1:
            out.append(f"{next(iter(where))}: {n} skipped, {reason}")
        else:
            out.append(f"{n} skipped ({places}), {reason}")
    return out
