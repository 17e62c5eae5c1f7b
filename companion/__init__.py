"""companion: a Raspberry Pi service beside a physical board game.

The layers (docs/developing.md, "The layers"): ``base/`` (the foundation), ``games/`` and ``core/`` (pure
rules and folds), ``storage/`` (the rows: the only SQL), ``services/`` (the write path and its rules), and
the adapters ``web/``, ``cli/``, ``gpio.py`` and ``announcer.py``.
"""

__version__ = "0.1.0"
