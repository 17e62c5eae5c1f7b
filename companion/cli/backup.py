import re
from pathlib import Path

from companion.cli import data_dir_arg, emit, open_store

# the names Store.backup gives inside a directory (UTC timestamps: name order is time order)
BACKUP_NAME = re.compile(r"companion-\d{8}T\d{6}Z\.db")


def register(sub):
    p = sub.add_parser("backup", help="write a consistent copy of the live database",
                       description="Write a consistent copy of the live database (SQLite online backup), "
                                   "safe while the server runs. DEST is a file or a directory; in a "
                                   "directory the copy is named companion-YYYYMMDDTHHMMSSZ.db.")
    p.add_argument("dest", metavar="DEST")
    p.add_argument("--keep", type=int, default=None, metavar="N",
                   help="DEST being a directory: then delete all but the newest N "
                        "companion-*.db copies in it (other files are never touched)")
    data_dir_arg(p)
    p.set_defaults(func=run)


def rotate(directory, keep: int) -> list[str]:
    """Delete all but the newest ``keep`` backups named companion-YYYYMMDDTHHMMSSZ.db in ``directory``."""
    names = sorted(p.name for p in Path(directory).iterdir() if p.is_file() and BACKUP_NAME.fullmatch(p.name))
    doomed = names[:-keep] if keep > 0 else names
    for name in doomed:
        (Path(directory) / name).unlink()
    return doomed


def run(args):
    from companion.errors import InputError

    if args.keep is not None:
        if args.keep < 1:
            raise InputError("must be at least 1", "--keep")
        dest = Path(args.dest)
        if dest.exists() and not dest.is_dir():
            raise InputError("--keep needs DEST to be a directory", "DEST")
        dest.mkdir(parents=True, exist_ok=True)
    with open_store(args) as store:
        path = store.backup(args.dest)
    out = {"backup": str(path)}
    if args.keep is not None:
        out["deleted"] = rotate(args.dest, args.keep)
    emit(out)
