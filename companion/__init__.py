"""companion: a Raspberry Pi service beside a physical board game.

The pure core (games/, clock, season, matches) imports no adapter; the adapters
(cli, web, gpio) call the core.
"""

__version__ = "0.1.0"
