"""The boundaries of the code base: which folder may import which (docs/developing.md, "The layers"), no
import circle, SQL only in storage, no adapter in the core, one write path, ``create_app`` only wires.

An import is any ``import``/``from … import`` of the package, at the top or inside a function, and every
``lazy.module("companion.…")``; the imports under ``if TYPE_CHECKING:`` (annotations only) are not."""

import ast
import re
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "companion"
STORAGE = {"storage"}
CORE = ["base", "games", "core", "storage", "services"]
ADAPTER_MODULES = ("flask", "werkzeug", "gpiozero", "bleak", "companion.web", "companion.cli", "companion.gpio",
                   "companion.dice")


# folder -> the folders it may import (itself included); the adapters (web/, cli/, gpio.py, dice.py,
# announcer.py, systemd_notify.py) and runtime.py may import every layer
MAY_IMPORT = {
    "base": {"base"},
    "games": {"base", "games"},
    "core": {"base", "games", "core"},
    "storage": {"base", "storage"},
    "services": {"base", "games", "core", "storage", "services"},
}
TOP_LEVEL = {"__init__", "__main__", "runtime", "announcer", "gpio", "dice", "systemd_notify"}


def _modname(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_modname(p): p for p in PKG.rglob("*.py")}


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return getattr(t, "id", None) == "TYPE_CHECKING" or getattr(t, "attr", None) == "TYPE_CHECKING"


def imports_of(path: Path) -> set[str]:
    """The package's modules ``path`` imports (``from companion.x import y`` is ``companion.x.y`` when that
    is a module, else ``companion.x``)."""
    out: set[str] = set()

    def visit(node):
        if isinstance(node, ast.If) and _type_checking(node):
            for n in node.orelse:
                visit(n)
            return
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                out.add(full if full in MODULES else node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "module" and node.args \
                and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).startswith("companion."):
            out.add(node.args[0].value)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {m for m in out if m == "companion" or m.startswith("companion.")}


def _folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_each_folder_imports_only_the_layers_below_it():
    offenders = []
    for name, path in sorted(MODULES.items()):
        allowed = MAY_IMPORT.get(_folder(name))
        if allowed is None:
            continue
        offenders += [f"{name} -> {m}" for m in sorted(imports_of(path)) if _folder(m) not in allowed]
    assert offenders == []


def test_the_check_sees_an_import_inside_a_function_and_a_lazy_module_but_not_an_annotation():
    src = PKG / "storage" / "players.py"
    assert "companion.storage.seasons" in imports_of(src)  # imported inside a function
    assert "companion.services.players" in imports_of(PKG / "web" / "players.py")  # lazy.module(...)
    assert "companion.gpio" not in imports_of(PKG / "web" / "context.py")  # under TYPE_CHECKING


def test_no_import_circle_in_the_package():
    graph = {name: {m for m in imports_of(path) if m in MODULES and m != name} for name, path in MODULES.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def strong(v):  # Tarjan's strongly connected components, iteratively enough for this package's depth
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    # (a package's __init__ that re-exports its modules is not a circle with them: none does here)
    assert circles == []


def test_create_apps_module_only_wires_flask():
    """``web/app.py`` builds nothing of the box's process: the runtime does (``companion/runtime.py``)."""
    forbidden = ("companion.cli", "companion.gpio", "companion.dice", "companion.announcer",
                 "companion.services.clockrunner", "companion.services.matches", "companion.runtime.")
    used = imports_of(PKG / "web" / "app.py")
    assert [m for m in sorted(used) if m.startswith(forbidden)] == []
    text = (PKG / "web" / "app.py").read_text(encoding="utf-8")
    assert "MatchService(" not in text and "ClockRunner(" not in text and "Store(" not in text


def test_the_package_top_level_holds_the_runtime_and_the_adapters_only():
    assert {p.stem for p in PKG.glob("*.py")} <= TOP_LEVEL
    assert len(TOP_LEVEL) <= 8


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
