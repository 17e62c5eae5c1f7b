from companion.cli import data_dir_arg, emit, open_store


def register(sub):
    p = sub.add_parser("backup", help="write a consistent copy of the live database",
                       description="Write a consistent copy of the live database (SQLite online backup), "
                                   "safe while the server runs. DEST is a file or a directory.")
    p.add_argument("dest", metavar="DEST")
    data_dir_arg(p)
    p.set_defaults(func=run)


def run(args):
    store = open_store(args)
    try:
        path = store.backup(args.dest)
    finally:
        store.close()
    emit({"backup": str(path)})
