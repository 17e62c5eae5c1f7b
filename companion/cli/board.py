"""``companion board``: the Web of Power boards transcribed on the box (list, show, export, import, the club's
default), through ``companion.services.boards``, the same core as the boards page (``/boards``) and ``/api/boards``.
Documents are ``schemas/web-of-power.map.schema.json`` (what ``companion map check`` checks)."""

from __future__ import annotations

import argparse
import sys

from companion.cli import data_dir_arg, emit, open_existing_store

MAX_VERSION = 10**9


def _version(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a version number (1, 2, ...), not {text!r}") from None
    if not 1 <= n <= MAX_VERSION:
        raise argparse.ArgumentTypeError(f"must be a version number (1, 2, ...), not {text!r}")
    return n


def _club_arg(p) -> None:
    p.add_argument("--club", default=None, metavar="CLUB",
                   help="the club (id or name) whose board this is (default: the box's own boards)")


def register(sub):
    p = sub.add_parser(
        "board", help="Web of Power boards on the box: list, show, export, import, the default",
        description="The Web of Power boards a club transcribed on the box (the boards page, /boards). A board "
                    "is a document of schemas/web-of-power.map.schema.json; every saved change is a version, "
                    "and a match keeps the version it started with. The checker (the one `companion map check` "
                    "runs) gives each version its status: template, partial or complete.")
    bsub = p.add_subparsers(dest="board_command", metavar="ACTION", required=True)

    ls = bsub.add_parser("list", help="the boards: id, name, club, latest version, status, default",
                         description="Every board of the box (latest version, status, whether it is its club's "
                                     "default), as JSON.")
    data_dir_arg(ls)
    ls.set_defaults(func=run_list)

    sh = bsub.add_parser("show", help="one board: a version's document, the checker's report, its versions",
                         description="One board as JSON: a version (default the latest) with its document, the "
                                     "checker's report, its photo's size and the list of versions.")
    sh.add_argument("id", metavar="ID", help="the board's id (see `companion board list`)")
    sh.add_argument("--version", type=_version, default=None, help="a version number (default: the latest)")
    data_dir_arg(sh)
    sh.set_defaults(func=run_show)

    ex = bsub.add_parser("export", help="a version as a board document (schemas/web-of-power.map.schema.json)",
                         description="A version (default the latest) as a board document, to stdout or --out; "
                                     "`companion board import` (or the boards page of another box) reads it.")
    ex.add_argument("id", metavar="ID", help="the board's id")
    ex.add_argument("--version", type=_version, default=None, help="a version number (default: the latest)")
    ex.add_argument("--photo", action="store_true", help="include the version's photo (base64)")
    ex.add_argument("--out", metavar="FILE", default=None, help="write the document here (default: stdout)")
    data_dir_arg(ex)
    ex.set_defaults(func=run_export)

    im = bsub.add_parser("import", help="a board document as a new board",
                         description="Import a board document (schemas/web-of-power.map.schema.json, e.g. from "
                                     "`companion board export`) as a new board; its photo, if any, is checked "
                                     "too. Prints the new board as `board show` does.")
    im.add_argument("file", metavar="FILE", help="the board document, or - for stdin")
    im.add_argument("--name", default=None, help="the new board's name (default: the document's, else "
                                                  "\"Imported board\"); 1 to 200 characters")
    _club_arg(im)
    data_dir_arg(im)
    im.set_defaults(func=run_import)

    de = bsub.add_parser("default", help="the board new Web of Power matches of a club start on",
                         description="Set the club's default board (new Web of Power matches start on its latest "
                                     "version unless they name another), or `none` to clear it (the installed "
                                     "template). Prints the boards as `board list` does.")
    de.add_argument("id", metavar="ID|none", help="the board's id, or none")
    _club_arg(de)
    data_dir_arg(de)
    de.set_defaults(func=run_default)


def _under_cli(exc, prefix: str = "$"):
    """A core error's field as the CLI names it: the club is --club; a document's paths stay JSON paths."""
    if exc.field in ("club", "$.club"):
        return type(exc)(exc.message, "--club")
    if exc.field in ("$.board_id", "board_id"):
        return type(exc)(exc.message, "ID")
    return exc


def _with_store(args, fn):
    from companion.base.errors import CompanionError

    store = open_existing_store(args)
    try:
        return fn(store)
    except CompanionError as exc:
        raise _under_cli(exc) from None
    finally:
        store.close()


def run_list(args) -> int:
    from companion.services import boards

    emit(_with_store(args, lambda store: {"boards": boards.listing(store)}))
    return 0


def run_show(args) -> int:
    from companion.services import boards

    emit(_with_store(args, lambda store: boards.describe(store, args.id, args.version)))
    return 0


def run_export(args) -> int:
    from companion.services import boards
    from companion.base.jsonio import dumps

    doc = _with_store(args, lambda store: boards.export(store, args.id, args.version, args.photo))
    text = dumps(doc) + "\n"
    if args.out is None:
        sys.stdout.write(text)
        return 0
    from companion.base.errors import InputError

    try:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise InputError(f"cannot write {args.out}: {exc.strerror or exc}", "--out") from None
    emit({"id": args.id, "version": args.version, "out": args.out, "photo": "photo" in doc})
    return 0


def run_import(args) -> int:
    from companion.services import boards
    from companion.base.errors import InputError
    from companion.base.jsonio import load_json
    from companion.base.schemas import validate

    if args.name is not None and not 1 <= len(args.name) <= 200:
        raise InputError("must be 1 to 200 characters", "--name")
    doc = load_json(args.file)
    validate("web-of-power.map", doc)
    emit(_with_store(args, lambda store: boards.import_board(store, doc, args.club, args.name)))
    return 0


def run_default(args) -> int:
    from companion.services import boards

    board_id = None if args.id == "none" else args.id

    def go(store):
        boards.set_default(store, board_id, args.club)
        return {"club": args.club, "default": board_id, "boards": boards.listing(store)}

    emit(_with_store(args, go))
    return 0
