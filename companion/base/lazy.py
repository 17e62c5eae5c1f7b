"""``module(name)``: a module imported on first use, not at start-up.

``companion serve`` registers every blueprint at start; a blueprint that imported its game's rules, the
season's maths or the boards' checker at the top would load (and, in a checkout run without bytecode,
compile) all of them before the first request, though a box may never serve some of them. A blueprint
writes ``ci = lazy.module("companion.games.conquest_italy")`` instead of ``from companion.games import
conquest_italy as ci`` and uses ``ci.name`` as before: the module is imported at the first ``ci.name``.
Thread-safe (``importlib.import_module`` holds the import lock of the module it imports)."""

from __future__ import annotations

import importlib


class LazyModule:
    __slots__ = ("_name", "_module")

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_module", None)

    def __getattr__(self, attr: str):
        mod = self._module
        if mod is None:
            mod = importlib.import_module(self._name)
            object.__setattr__(self, "_module", mod)
        return getattr(mod, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def module(name: str) -> LazyModule:
    return LazyModule(name)
