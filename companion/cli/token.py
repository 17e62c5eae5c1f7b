"""``companion token``: bearer tokens for scripts (``Authorization: Bearer <token>``)."""

from __future__ import annotations

import sys

from companion.cli import data_dir_arg, emit, open_store


def register(sub):
    p = sub.add_parser("token", help="bearer tokens for scripts (create, list, revoke)",
                       description="Bearer tokens let scripts call the API: Authorization: Bearer <token>. "
                                   "Only a hash is stored: a token is shown once, when it is created.")
    tsub = p.add_subparsers(dest="token_command", metavar="ACTION", required=True)
    c = tsub.add_parser("create", help="create a token; prints it alone on the last line",
                        description="Create a token for the role; the new token is printed alone on the last line.")
    c.add_argument("--role", choices=["player", "organiser"], required=True)
    c.add_argument("--label", default="", help="what the token is for (shown by `token list`)")
    c.add_argument("--days", type=float, default=None, help="expires after this many days (default: never)")
    data_dir_arg(c)
    c.set_defaults(func=run_create)
    ls = tsub.add_parser("list", help="list tokens (ids, roles, labels; never the tokens)")
    data_dir_arg(ls)
    ls.set_defaults(func=run_list)
    r = tsub.add_parser("revoke", help="revoke a token by its id (from `token list`)")
    r.add_argument("token_id", metavar="ID")
    data_dir_arg(r)
    r.set_defaults(func=run_revoke)


def run_create(args):
    from companion.base.errors import InputError
    from companion.services.access import Access

    if len(args.label) > 80:
        raise InputError("at most 80 characters", "--label")
    with open_store(args) as store:
        token, info = Access(store).create_api_token(args.role, args.label, args.days)
    expires = info["expires_at"] or "never"
    sys.stdout.write(f"created a {info['role']} token, id {info['id']}, expires {expires}; it is shown only once:\n")
    sys.stdout.write(token + "\n")


def run_list(args):
    from companion.services.access import Access

    with open_store(args) as store:
        emit({"tokens": Access(store).list_api_tokens()})


def run_revoke(args):
    from companion.services.access import Access

    with open_store(args) as store:
        Access(store).revoke_api_token(args.token_id)
    emit({"revoked": args.token_id})
