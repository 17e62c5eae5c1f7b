"""docs/rulings.md: the rulings the engines follow, cited by code, tests and docs by section (rulings.md + "#" + anchor).

The repository speaks of itself alone: no issue numbers, no paths to files outside it."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RULINGS = ROOT / "docs" / "rulings.md"
SCANNED = ["companion", "tests", "docs", "web", "schemas", "hardware", "systemd", "README.md"]
SUFFIXES = {".py", ".md", ".json", ".js", ".html", ".css", ".toml", ".txt", ".service", ".timer", ".sh", ".svg"}
# built in pieces so that this file does not match itself
OUTSIDE = re.compile("|".join([r"issue [0-9]+", "shared" + "/seeds", r"\.\./" + "shared"]))
CITATION = re.compile(r"rulings\.md#([a-z0-9-]+)")


def _files():
    for name in SCANNED:
        path = ROOT / name
        if path.is_file():
            yield path
            continue
        for p in sorted(path.rglob("*")):
            if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts:
                yield p


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors() -> list[str]:
    return [slug(m.group(2)) for m in re.finditer(r"^(#{1,4}) (.+)$", RULINGS.read_text(encoding="utf-8"), re.M)]


def test_the_repository_cites_no_issue_numbers_and_no_outside_paths():
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
             for p in _files() for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
             if OUTSIDE.search(line)]
    assert found == []


def test_every_heading_of_the_rulings_has_its_own_anchor():
    names = anchors()
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    for game in ("web-of-power", "richelieu", "rome-is-burning", "conquest-of-italy", "match-clock",
                 "fan-club-championship"):
        assert game in names


def test_every_citation_of_the_rulings_names_a_section():
    known = set(anchors())
    cited = {(m.group(1), str(p.relative_to(ROOT))) for p in _files()
             for m in CITATION.finditer(p.read_text(encoding="utf-8", errors="replace"))}
    assert cited, "nothing cites docs/rulings.md"
    assert sorted(c for c in cited if c[0] not in known) == []


@pytest.mark.parametrize("heading, anchor", [("Two players: the neutral colour", "two-players-the-neutral-colour"),
                                             ("Prestige over 30 and the Cardinal", "prestige-over-30-and-the-cardinal")])
def test_slug(heading, anchor):
    assert slug(heading) == anchor
