"""``companion players``: the club roster (list, add, rename, merge) and the matches the roster migration
left for the organiser (pending, assign, and the audit of what was placed: assignments)."""

from __future__ import annotations

from companion.cli import data_dir_arg, emit, open_existing_store


def register(sub):
    p = sub.add_parser(
        "players", help="the club roster: list, add, rename, merge; matches waiting for a club",
        description="Each player is on a club's roster once. Matches and season results reference the roster "
                    "entry, so a rename keeps the history; a merge (the same person typed twice) moves every "
                    "result into one entry and records who, when, from and into. A player is named by id or "
                    "by exact name; --club (id or name) is needed when the box has several clubs.")
    psub = p.add_subparsers(dest="players_command", metavar="ACTION", required=True)

    ls = psub.add_parser("list", help="the roster as JSON (with look-alike entries under 'similar')")
    ls.add_argument("--club", default=None, help="only this club (id or name)")
    ls.add_argument("--search", default=None, metavar="TEXT",
                    help="names with a word starting with TEXT (case- and accent-insensitive)")
    data_dir_arg(ls)
    ls.set_defaults(func=run_list)

    a = psub.add_parser("add", help="add a player to a club's roster")
    a.add_argument("name", metavar="NAME")
    a.add_argument("--club", default=None, help="the club (id or name; default: the only club)")
    a.add_argument("--short", default=None, metavar="SHORT", help="a short name (default: the first word)")
    a.add_argument("--colour", default=None, metavar="#RRGGBB", help="preferred colour")
    data_dir_arg(a)
    a.set_defaults(func=run_add)

    r = psub.add_parser("rename", help="rename a player (their matches and results follow)")
    r.add_argument("player", metavar="PLAYER", help="id or exact name")
    r.add_argument("new_name", metavar="NEW_NAME")
    r.add_argument("--club", default=None, help="the club (id or name), when the name is on several rosters")
    data_dir_arg(r)
    r.set_defaults(func=run_rename)

    m = psub.add_parser("merge", help="merge FROM into INTO (the same person typed twice)",
                        description="Every match and season result of FROM moves to INTO; FROM leaves the roster; "
                                    "an audit line records who, when, from and into. Refused when the two "
                                    "played in the same match.")
    m.add_argument("source", metavar="FROM", help="id or exact name of the entry that goes away")
    m.add_argument("into", metavar="INTO", help="id or exact name of the entry that stays")
    m.add_argument("--club", default=None, help="the club (id or name), when a name is on several rosters")
    m.add_argument("--by", default="organiser (cli)", help="who merges, for the audit line")
    data_dir_arg(m)
    m.set_defaults(func=run_merge)

    ms = psub.add_parser("merges", help="the merge audit (who, when, from, into)")
    ms.add_argument("--club", default=None)
    data_dir_arg(ms)
    ms.set_defaults(func=run_merges)

    pe = psub.add_parser("pending", help="matches the roster migration could not put on a club's roster")
    data_dir_arg(pe)
    pe.set_defaults(func=run_pending)

    au = psub.add_parser("assignments", help="the audit of leftover names put on the roster by hand (who, when, "
                                             "the name, the entry)")
    au.add_argument("--club", default=None)
    data_dir_arg(au)
    au.set_defaults(func=run_assignments)

    asg = psub.add_parser("assign", help="put a pending match on a club's roster (its players by exact name; "
                                         "an audit line per name)")
    asg.add_argument("match_id", metavar="MATCH")
    asg.add_argument("--club", required=True, help="the club (id or name)")
    data_dir_arg(asg)
    asg.set_defaults(func=run_assign)


def _club(store, ref, required=False):
    from companion.services import seasons
    from companion.base.errors import InputError

    if ref:
        return seasons.get_club(store, ref, "--club")["id"]
    clubs = seasons.list_clubs(store)
    if required or len(clubs) > 1:
        if len(clubs) == 1:
            return clubs[0]["id"]
        raise InputError("there is no club yet: `companion season create` makes one" if not clubs
                         else "this box has several clubs: give --club", "--club")
    return clubs[0]["id"] if clubs else None


def run_list(args):
    from companion.base.errors import InputError
    from companion.storage import players

    if args.search is not None and len(args.search) > 40:
        raise InputError("at most 40 characters", "--search")
    with open_existing_store(args) as store:
        club = _club(store, args.club) if args.club else None
        emit({"players": players.list_players(store, club, q=args.search)})


def run_add(args):
    from companion.storage import players

    with open_existing_store(args) as store:
        emit(players.create_player(store, _club(store, args.club, required=True), args.name, args.short, args.colour))


def run_rename(args):
    from companion.storage import players

    with open_existing_store(args) as store:
        club = _club(store, args.club) if args.club else None
        p = players.resolve(store, args.player, club, "PLAYER")
        emit(players.update_player(store, p["id"], name=args.new_name))


def run_merge(args):
    from companion.storage import players

    with open_existing_store(args) as store:
        club = _club(store, args.club) if args.club else None
        src = players.resolve(store, args.source, club, "FROM")
        dst = players.resolve(store, args.into, club, "INTO")
        emit(players.merge_players(store, src["id"], dst["id"], by=args.by[:80]))


def run_merges(args):
    from companion.storage import players

    with open_existing_store(args) as store:
        emit({"merges": players.merges(store, _club(store, args.club) if args.club else None)})


def run_pending(args):
    from companion.storage import players

    with open_existing_store(args) as store:
        emit({"pending": players.pending(store)})


def run_assign(args):
    from companion.storage import players

    with open_existing_store(args) as store:
        emit(players.assign_pending(store, args.match_id, _club(store, args.club, required=True)))


def run_assignments(args):
    from companion.storage import players

    with open_existing_store(args) as store:
        emit({"assignments": players.assignments(store, _club(store, args.club) if args.club else None)})
