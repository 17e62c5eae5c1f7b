"""The boundaries of the code base: SQL only in the storage modules, no adapter in the core, one write path."""

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "companion"
STORAGE = {"storage", "services/seasons.py"}
CORE = ["base", "games", "core", "storage", "services"]
ADAPTER_MODULES = ("flask", "werkzeug", "gpiozero", "bleak", "companion.web", "companion.cli", "companion.gpio",
                   "companion.dice")


def _files(*parts):
    for part in parts:
        p = PKG / part
        yield from ([p] if p.suffix == ".py" else sorted(p.rglob("*.py")))


def _is_storage(path: Path) -> bool:
    rel = path.relative_to(PKG)
    return rel.parts[0] in STORAGE or rel.as_posix() in STORAGE


def test_sql_lives_only_in_the_storage_modules():
    offenders = []
    for path in PKG.rglob("*.py"):
        if _is_storage(path):
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"\.execute(many|script)?\(", text) or re.search(r"\b(SELECT|INSERT INTO|UPDATE|DELETE FROM)\b\s",
                                                                       text):
            offenders.append(str(path.relative_to(PKG)))
    assert offenders == []


def test_the_core_imports_no_adapter():
    offenders = []
    for path in _files(*CORE):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.relative_to(PKG)}: {n}" for n in names if n.startswith(ADAPTER_MODULES)]
    assert offenders == []


def test_adapters_write_match_events_only_through_the_service():
    """No adapter appends to the store or builds its own folds to write: ``store.append`` and
    ``store.import_match`` are called by the match service alone."""
    offenders = []
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG)
        if _is_storage(path) or rel.as_posix() == "services/matches.py":
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"store\.(append|import_match|set_status)\(", text):
            offenders.append(str(rel))
    assert offenders == []
