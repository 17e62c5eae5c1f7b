"""``companion backup``: a checked copy of the live database, and the rotation of old copies.

A copy is kept only when it passes its checks (SQLite's integrity check, companion's tables, every event
of the database); old copies are deleted (``--keep``) only after a good one was made, so a damaged
database never pushes the good copies out. The result is recorded beside the database
(``last-backup.json``) for the organiser's home page.
"""

import re
import sys
from pathlib import Path

from companion.cli import data_dir_arg, database_path, emit

# the names Store.backup gives inside a directory (UTC timestamps: name order is time order)
BACKUP_NAME = re.compile(r"companion-(\d{8}T\d{6}Z)(?:-(\d+))?\.db")  # -2, -3: more of the same second


def register(sub):
    p = sub.add_parser("backup", help="write a checked copy of the live database",
                       description="Write a consistent copy of the live database (SQLite online backup), "
                                   "safe while the server runs; the database is opened read-only and a "
                                   "missing or empty one is refused (exit 2). DEST is a file or a folder "
                                   "(created when it does not exist); in a folder the copy is named "
                                   "companion-YYYYMMDDTHHMMSSZ.db. The copy is checked (integrity, "
                                   "companion's tables, every event); a copy that fails is not kept, no "
                                   "old copy is deleted and the command exits 1 saying why in one line.")
    p.add_argument("dest", metavar="DEST")
    p.add_argument("--keep", type=int, default=None, metavar="N",
                   help="DEST being a folder: after a good copy, delete all but the newest N "
                        "companion-*.db copies in it (other files are never touched)")
    data_dir_arg(p)
    p.set_defaults(func=run)


def rotate(directory, keep: int) -> list[str]:
    """Delete all but the newest ``keep`` backups named companion-YYYYMMDDTHHMMSSZ.db in ``directory``."""
    def age(name):
        m = BACKUP_NAME.fullmatch(name)
        return m.group(1), int(m.group(2) or 1)

    names = sorted((p.name for p in Path(directory).iterdir() if p.is_file() and BACKUP_NAME.fullmatch(p.name)),
                   key=age)
    doomed = names[:-keep] if keep > 0 else names
    for name in doomed:
        (Path(directory) / name).unlink()
    return doomed


def run(args):
    from companion.base.errors import InputError
    from companion.storage.db import BackupRefused, backup_database, write_backup_status
    from companion.base.timeutil import WallClock

    dest = Path(args.dest)
    if args.keep is not None:
        if args.keep < 1:
            raise InputError("must be at least 1", "--keep")
        if dest.exists() and not dest.is_dir():
            raise InputError("--keep needs DEST to be a directory", "DEST")
    source = Path(database_path(args))
    clock = WallClock()
    from companion.services.boxtime import offset_for_commands
    from companion.storage.db import read_setting_readonly

    class _Settings:  # the time an organiser's phone gave the box in this boot, for the backup's name
        def get_setting(self, key, default=None):
            return read_setting_readonly(source, key, default)

    offset = offset_for_commands(_Settings())
    if offset:
        from companion.base.timeutil import OffsetClock

        clock = OffsetClock(offset)

    def record(ok: bool, **more):
        if source.is_file():  # never leave a trace in a mistyped --data-dir
            write_backup_status(source.parent, {"ok": ok, "at": clock.now_iso(), "dest": str(dest), **more})

    try:
        made = backup_database(source, args.dest if args.keep is None else str(args.dest) + "/", clock)
    except BackupRefused as exc:
        record(False, error=str(exc))
        print(f"error: backup refused: {exc}; every existing copy is kept", file=sys.stderr)
        return 1
    except InputError as exc:
        record(False, error=exc.message)
        raise
    out = {"backup": str(made["backup"]), "events": made["events"]}
    if args.keep is not None:
        out["deleted"] = rotate(made["backup"].parent, args.keep)
    record(True, backup=out["backup"], events=made["events"], deleted=len(out.get("deleted", [])))
    emit(out)
