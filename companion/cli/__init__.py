"""The ``companion`` command. Each subcommand lives in its own module here with a
``register(subparsers)`` function; a module imports heavy things (Flask, gpiozero)
only inside the function that runs, so commands that don't need them start fast.

Exit status: 0 ok, 2 invalid input (one line on stderr, never a traceback),
1 an unexpected failure (one line; ``COMPANION_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from companion import __version__
from companion.base import resources
from companion.base.errors import CompanionError

# Subcommand modules, in the order ``--help`` lists them.
COMMANDS = [
    "serve",
    "score",
    "combat",
    "odds",
    "reinforcements",
    "richelieu",
    "match",
    "season",
    "players",
    "tournament",
    "token",
    "pin",
    "map",
    "board",
    "hardware",
    "backup",
    "replicate",
    "restore",
    "league",
    "db",
    "bundle",
]


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so errors stay one line."""

    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def data_dir_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--data-dir", default=None,
        help="directory of the database companion.db (default: $COMPANION_DATA or ./data)")


def open_store(args):
    from companion.storage import Store

    return Store(database_path(args))


def database_path(args) -> str:
    return resources.database_path(getattr(args, "data_dir", None))


def open_existing_store(args):
    """The store of an existing database: a missing one is refused (exit 2 naming the path) instead of
    created, so a mistyped ``--data-dir`` never makes an empty database."""
    path = database_path(args)
    if not os.path.isfile(path):
        from companion.base.errors import InputError

        raise InputError(f"no database at {path}: check --data-dir or $COMPANION_DATA", "--data-dir")
    return open_store(args)


def emit(obj) -> None:
    from companion.base.jsonio import dumps

    sys.stdout.write(dumps(obj) + "\n")


def build_parser(command: str | None = None) -> Parser:
    """The whole parser, or (``command``: the command asked for) the parser with that command alone, so a
    start imports one command module instead of all of them."""
    parser = Parser(
        prog="companion",
        description="Companion for board games at the table: scoring, match clock, season standings.",
        epilog="Documents are read from FILE or - (stdin); results are printed as JSON. "
               "Invalid input exits with status 2 and one line on stderr.",
    )
    parser.add_argument("--version", action="version", version=f"companion {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in [command] if command in COMMANDS else COMMANDS:
        importlib.import_module(f"companion.cli.{name}").register(sub)
    if command in COMMANDS and command not in sub.choices:  # a module naming its command otherwise
        return build_parser()
    return parser


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: str) -> str:
    """``text`` as one line whatever it holds: control characters and line or paragraph separators (a
    player's name with U+0085, U+2028, U+2029, CR, LF ...) are written as escapes (``\\n``, ``\\x85``,
    ``\\u2028``), so an error never ends early or spills onto a second line."""
    import unicodedata

    out = []
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
            code = ord(ch)
            out.append(_ESCAPES.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"))
        else:
            out.append(ch)
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        parser = build_parser(argv[0] if argv else None)
        args = parser.parse_args(argv)
        result = args.func(args)
        return int(result or 0)
    except UsageError as exc:
        print(one_line(str(exc)), file=sys.stderr)
        return 2
    except CompanionError as exc:
        print(f"error: {one_line(str(exc)) if str(exc) else type(exc).__name__}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # never a traceback for the user
        if os.environ.get("COMPANION_DEBUG"):
            raise
        print(one_line(f"internal error: {type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
