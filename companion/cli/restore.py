"""``companion restore --from REPLICA``: a new SD card's database from a Litestream replica (docs/league.md).

The replica's newest state is restored beside the database (``companion.db.restoring``), checked like a
backup (SQLite's integrity check, companion's tables, an event log with no seq missing, and not fewer
events than a database already here unless ``--force``) and only then put in place; a database already
here goes aside into ``pre-restore-<UTC time>/`` (never deleted). A database in use (the server or
Litestream has it open) is refused: stop companion.service and companion-replica.service first.
"""

import os
import sys
from pathlib import Path

from companion.base.resources import resolve_data_dir
from companion.cli import data_dir_arg, emit


def register(sub):
    p = sub.add_parser("restore", help="restore the database from a Litestream replica (a new SD card)",
                       description="Restore the database from a replica written by `companion replicate`: "
                                   "the copy is checked before it replaces anything; the database already "
                                   "here (if any) is moved aside into pre-restore-<time>/. Refuses a "
                                   "database in use (stop the server first). Bad input exits 2.")
    p.add_argument("--from", dest="replica", required=True, metavar="REPLICA",
                   help="the replica: a folder, sftp://user@host/path or s3://bucket/path (credentials "
                        "from the environment, as for `companion replicate`)")
    p.add_argument("--force", action="store_true",
                   help="restore even when the replica holds fewer events than the database here")
    data_dir_arg(p)
    p.set_defaults(func=run)


def run(args):
    from datetime import datetime, timezone

    from companion.services import replication
    from companion.base.errors import InputError
    from companion.storage.db import _fsync_dir, check_database_file, check_restored

    url = replication.replica_url(args.replica, "--from")
    try:
        binary = replication.find_binary()
    except replication.Unavailable as exc:
        raise InputError(str(exc), "litestream") from None
    data_dir = Path(resolve_data_dir(args.data_dir))
    db = data_dir / "companion.db"
    if data_dir.exists() and not data_dir.is_dir():
        raise InputError(f"{data_dir} is not a folder", "--data-dir")
    users = replication.processes_using(db) if db.exists() else []
    if users:
        raise InputError(f"the database {db} is in use (process {', '.join(map(str, users))}): stop "
                         "companion.service and companion-replica.service first", "--data-dir")
    current = None
    if db.exists():
        check_database_file(db)
        reason, current = check_restored(db)
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot make the data folder {data_dir}: {exc.strerror or exc}", "--data-dir") from None
    part = data_dir / "companion.db.restoring"
    try:
        try:
            replication.restore_to(url, part, binary)
        except replication.RestoreFailed as exc:
            raise InputError(str(exc), "--from") from None
        reason, restored = check_restored(part)
        if reason:
            print(f"error: restore refused: {reason}; nothing was replaced", file=sys.stderr)
            return 1
        if current and current.get("events", 0) > restored["events"] and not args.force:
            print(f"error: restore refused: the replica holds {restored['events']} events, the database here "
                  f"{current['events']} (an older replica?); --force restores it anyway, nothing was replaced",
                  file=sys.stderr)
            return 1
        if replication.processes_using(db) if db.exists() else []:
            raise InputError(f"the database {db} came into use during the restore: nothing was replaced",
                             "--data-dir")
        aside = None
        stale = [p for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{db}-journal"),
                             data_dir / f".{db.name}-litestream") if p.exists()]
        if stale:
            aside = data_dir / f"pre-restore-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}"
            aside.mkdir(exist_ok=True)
            for p in stale:
                os.replace(p, aside / p.name)
        for suffix in ("-wal", "-shm"):  # what SQLite left beside the restored file while checking it
            Path(f"{part}{suffix}").unlink(missing_ok=True)
        os.chmod(part, 0o600)
        os.replace(part, db)
        _fsync_dir(data_dir)
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{part}{suffix}").unlink(missing_ok=True)
    emit({"restored": str(db), "from": replication.parse_target(args.replica, "--from")["shown"],
          "events": restored["events"], "matches": restored["matches"], "schema_version": restored["version"],
          "previous": str(aside) if aside else None})
