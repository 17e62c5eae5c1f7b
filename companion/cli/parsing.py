"""The CLI's argparse parser class (imported when a parser is built: ``companion.cli.build_parser``)."""

from __future__ import annotations

import argparse

from companion.cli.usage import UsageError, terminal_columns


def _english_argparse() -> None:
    """argparse's own words (``usage:``, ``options``, ``show this help message and exit``, its errors) in
    English, as the rest of the CLI speaks, without asking gettext for each: every such word searched
    the locale folders again for a ``messages`` catalogue (six searches, and the locale module imported,
    at each start: about a twentieth of a ``companion score`` on a Pi), which Python does not ship."""
    import gettext

    if getattr(argparse, "_", None) is gettext.gettext:
        argparse._ = lambda message: message
    if getattr(argparse, "ngettext", None) is gettext.ngettext:
        argparse.ngettext = lambda singular, plural, n: singular if n == 1 else plural


_english_argparse()


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so errors stay one line."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")

    def _get_formatter(self):
        # argparse's formatter asks shutil for the width; the same width, told here (terminal_columns)
        return self.formatter_class(prog=self.prog, width=terminal_columns() - 2)
