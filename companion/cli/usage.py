"""What the CLI's start needs of its parser's words without importing argparse (companion/cli/parsing.py)."""

from __future__ import annotations

import os
import sys


class UsageError(Exception):
    pass


def terminal_columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size()`` tells it ($COLUMNS, else the terminal of
    stdout, else 80), without importing shutil (and with it bz2, lzma, zlib and fnmatch) at every start."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns
