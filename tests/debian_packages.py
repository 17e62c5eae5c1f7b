"""systemd/debian-packages.txt read from Python: the one list of the Debian packages the box and its checks need."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

LIST = Path(__file__).resolve().parent.parent / "systemd" / "debian-packages.txt"
WHENS = ("always", "if-available")


@dataclass(frozen=True)
class Entry:
    group: str
    package: str
    commands: tuple[str, ...]
    when: str
    line: int


def entries(path: Path = LIST) -> list[Entry]:
    out = []
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        words = raw.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 4 or words[3] not in WHENS:
            raise ValueError(f"{path.name}:{n}: want GROUP PACKAGE COMMANDS WHEN ({'|'.join(WHENS)}): {raw!r}")
        group, package, commands, when = words
        out.append(Entry(group, package, () if commands == "-" else tuple(commands.split(",")), when, n))
    return out


def packages(*groups: str, path: Path = LIST) -> list[str]:
    """The packages of these groups, in the list's order, each once."""
    seen: dict[str, None] = {}
    for e in entries(path):
        if e.group in groups:
            seen.setdefault(e.package)
    return list(seen)


def package_of(command: str, path: Path = LIST) -> str | None:
    """The package the list names for a command the suite looks for (None: the list has none)."""
    for e in entries(path):
        if command in e.commands:
            return e.package
    return None


def install_hint(command: str) -> str:
    """``no X (apt-get install P)``'s parenthesis: how to get a command the suite skips without."""
    pkg = package_of(command)
    return f"apt-get install {pkg}" if pkg else "not in systemd/debian-packages.txt"


def missing(*commands: str) -> str | None:
    """A skip's reason for the first of these commands that is not on PATH ("no mmdebstrap (apt-get install
    mmdebstrap)"), None when all are there. tests/test_debian_packages.py checks that each is in the list."""
    import shutil

    for command in commands:
        if shutil.which(command) is None:
            return f"no {command} ({install_hint(command)})"
    return None
