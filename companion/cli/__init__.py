"""The ``companion`` command. Each subcommand lives in its own module here with a
``register(subparsers)`` function; a module imports heavy things (Flask, gpiozero)
only inside the function that runs, so commands that don't need them start fast.

Exit status: 0 ok, 2 invalid input (one line on stderr, never a traceback),
1 an unexpected failure (one line; ``COMPANION_DEBUG=1`` shows the traceback).
"""

from __future__ import annotations

import os
import sys

from companion import __version__
from companion.base.errors import CompanionError
from companion.base.resources import DATABASE_NAME, resolve_data_dir
from companion.cli.usage import UsageError, terminal_columns  # noqa: F401 (the commands' UsageError)

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
    "dice",
    "backup",
    "replicate",
    "restore",
    "league",
    "db",
    "bundle",
    "wifi",
]


def __getattr__(name: str):
    if name == "Parser":  # (companion/cli/parsing.py: argparse is imported when a parser is built)
        from companion.cli.parsing import Parser

        return Parser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def data_dir_arg(parser) -> None:
    parser.add_argument(
        "--data-dir", default=None,
        help="directory of the database companion.db (default: $COMPANION_DATA or ./data)")


# where systemd/install.sh keeps the service's database (its state folder, owned by the service user)
SERVICE_DATA = "/var/lib/companion"
SERVICE_USER = "companion"


def service_data_dir() -> str:
    return os.environ.get("COMPANION_SERVICE_DATA", SERVICE_DATA)


def _installed_box_default(args) -> str | None:
    """On a box installed by systemd/install.sh, a command given neither ``--data-dir`` nor
    ``$COMPANION_DATA``, where ``./data`` holds no database, means the service's database: the service
    user gets it; anyone else (root included: its files would lock the service out) is refused with the
    command to run, never given a second, empty database."""
    from companion.base.errors import InputError

    if getattr(args, "data_dir", None) or os.environ.get("COMPANION_DATA"):
        return None
    if os.path.exists(os.path.join(os.getcwd(), "data", "companion.db")):
        return None
    service = service_data_dir()
    try:
        owner = os.stat(service).st_uid
    except OSError:
        return None  # not an installed box
    if owner == os.getuid() and owner != 0:
        return service
    command = " ".join([str(getattr(args, "command", "") or "")] + _subcommand_words(args)).strip()
    raise InputError("this box's database is the service's, in {dir}: run it as the service user: sudo -u {user} "
                     "env COMPANION_DATA={dir} /opt/companion/venv/bin/companion {command} (nothing was created "
                     "here)", "--data-dir", dir=service, user=SERVICE_USER, command=command or "COMMAND")


def _subcommand_words(args) -> list[str]:
    return [str(v) for k, v in vars(args).items() if k.endswith("_command") and isinstance(v, str)]


def _data_dir(args) -> str:
    return _installed_box_default(args) or resolve_data_dir(getattr(args, "data_dir", None))


def open_store(args):
    from companion.storage import Store

    return Store(os.path.join(_data_dir(args), DATABASE_NAME))


def database_path(args) -> str:
    return os.path.join(_data_dir(args), DATABASE_NAME)


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


def version_words() -> str:
    """``companion 0.1.0`` and, for a build made by systemd/build-wheel.sh, the commit it was built from."""
    try:
        from companion import build_info  # written into the wheel's copy of the tree by build-wheel.sh
    except ImportError:
        return f"companion {__version__}"
    return f"companion {__version__} (built from commit {build_info.COMMIT})"


def build_parser(command: str | None = None):
    """The whole parser, or (``command``: the command asked for) the parser with that command alone, so a
    start imports one command module instead of all of them."""
    import importlib

    from companion.cli.parsing import Parser

    parser = Parser(
        prog="companion",
        description="Companion for board games at the table: scoring, match clock, season standings.",
        epilog="Documents are read from FILE or - (stdin); results are printed as JSON. "
               "Invalid input exits with status 2 and one line on stderr.",
    )
    parser.add_argument("--version", action="version", version=version_words())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in [command] if command in COMMANDS else COMMANDS:
        importlib.import_module(f"companion.cli.{name}").register(sub)
    if command in COMMANDS and command not in sub.choices:  # a module naming its command otherwise
        return build_parser()
    return parser


# Commands whose module reads its common arguments itself (``quick(words)``), so that a start of ``companion
# score GAME FILE``, ``companion odds A D`` or the unit's ``companion serve`` builds no parser and imports no
# argparse (with it gettext, re and enum: about a third of what such a CLI start imports above the
# interpreter). ``quick`` takes only the
# plainest form of the words, which argparse reads the same way (tests/cli/test_quick_args.py holds them
# to argparse's result); anything else (an option, --help, a mistake) goes to argparse as before.
QUICK = ("score", "odds", "serve")


class Args:
    """The arguments ``quick`` read: what ``parse_args`` returns (``argparse.Namespace``'s attributes)."""

    def __init__(self, **values):
        self.__dict__.update(values)

    def __repr__(self) -> str:
        return f"Args({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"


def quick_args(argv: list[str]) -> Args | None:
    """``argv`` read without argparse when its command can (``QUICK``), else None."""
    if not argv or argv[0] not in QUICK:
        return None
    module = __import__(f"companion.cli.{argv[0]}", fromlist=["quick"])
    values = module.quick(argv[1:])
    if values is None:
        return None
    return Args(command=argv[0], **values, func=module.run)


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


DAMAGED = ("malformed", "not a database", "corrupt", "encrypted")
READ_ONLY = ("readonly", "read-only", "unable to open")


def database_trouble(exc: Exception, args) -> str | None:
    """The sentence for a database that cannot be used past its opening (None: another error): a damaged
    page (SQLite's "database disk image is malformed") or a file the command may not write. Named with
    its path and what to do, never "internal error" (systemd would restart the server for ever)."""
    import sqlite3

    if not isinstance(exc, sqlite3.DatabaseError):
        return None
    text = str(exc).lower()
    try:
        path = database_path(args) if args is not None else "companion.db"
    except Exception:  # (a data folder that cannot even be resolved)
        path = "companion.db"
    if any(w in text for w in DAMAGED):
        return (f"the database {path} is damaged ({exc}): restore it from a backup or a replica (stop the server, "
                f"then `companion restore --from REPLICA`, or put a checked backup from `companion backup` in its "
                f"place); the damaged file is kept for inspection")
    if any(w in text for w in READ_ONLY):
        return (f"the database {path} cannot be written ({exc}): the file, its folder and its -wal and -shm "
                f"files must be writable by the user running companion")
    return None


def main(argv: list[str] | None = None) -> int:
    import gc

    whole_process = argv is None  # the command line's own run (``companion ...``, ``python -m companion``)
    argv = sys.argv[1:] if argv is None else argv
    collecting = gc.isenabled()
    args = None
    gc.disable()  # no cyclic collection while the parser and the command's module are built (a start's own
    try:  # objects, nothing to collect yet); the command runs with it as it was
        args = quick_args(argv)
        if args is None:
            args = build_parser(argv[0] if argv else None).parse_args(argv)
        if collecting:
            if whole_process:
                # the start's own objects (modules, classes, the parser) live as long as the process: frozen,
                # the first collection does not go over them all (a tenth of a `companion score`); a call
                # from Python (the tests) leaves the collector's generations as they were
                gc.freeze()
            gc.enable()
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
        trouble = database_trouble(exc, args)
        if trouble is not None:
            print(one_line(f"error: {trouble}"), file=sys.stderr)
            return 2
        print(one_line(f"internal error: {type(exc).__name__}: {exc}"), file=sys.stderr)
        return 1
    finally:
        if collecting:
            gc.enable()
