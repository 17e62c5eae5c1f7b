"""``companion league``: one championship over several boxes' replicas (docs/league.md).

``league standings --box NAME=REPLICA ...`` restores each box's newest replica into a cache folder and
prints the combined standings; ``league serve`` does the same on a schedule and serves the standings page,
its CSV and chart. Nothing is written to the boxes.
"""

import sys

from companion.cli import emit


def _common(p):
    p.add_argument("--box", action="append", default=[], metavar="NAME=REPLICA",
                   help="a box and its replica (a folder, sftp://user@host/path, s3://bucket/path) or a "
                        "database file made by `companion backup`; give one --box per box")
    p.add_argument("--season", default=None, metavar="GAME/YEAR",
                   help="the season (GAME/YEAR or CLUB/GAME/YEAR); default: the only one the boxes have")
    p.add_argument("--cache", default=None, metavar="DIR",
                   help="where the boxes' copies are kept (default: ./league-cache)")
    p.add_argument("--same", action="append", default=[], metavar="NAME=PLAYER",
                   help="count NAME as the player PLAYER (the organiser settling an ambiguous name)")
    p.add_argument("--offline", action="store_true",
                   help="do not restore: use the copies already in the cache")


def register(sub):
    p = sub.add_parser("league", help="combined standings over several boxes' replicas",
                       description="Combine the seasons of several boxes into one championship (the same "
                                   "rules as one box over the union of their matches; a match on two boxes "
                                   "counts once; ambiguous player names are listed, never merged).")
    s = p.add_subparsers(dest="league_command", metavar="SUBCOMMAND", required=True)
    st = s.add_parser("standings", help="restore every box once and print the combined standings")
    _common(st)
    st.add_argument("--json", action="store_true", help="print JSON instead of a table")
    st.set_defaults(func=run_standings)
    sv = s.add_parser("serve", help="serve the combined standings page, refreshing the boxes on a schedule")
    _common(sv)
    sv.add_argument("--host", default="0.0.0.0")
    sv.add_argument("--port", type=int, default=8090)
    sv.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                    help="another host name browsers may use to reach this page (repeatable); localhost, this "
                         "machine's addresses and host names, and --host are always allowed")
    sv.add_argument("--every", type=float, default=300, metavar="SECONDS",
                    help="seconds between two restores of every box (default 300)")
    sv.set_defaults(func=run_serve)


def _setup(args):
    import os

    from companion.services import league_boxes

    boxes = league_boxes.parse_boxes(args.box)
    aliases = league_boxes.parse_aliases(args.same)
    league_boxes._season_key(args.season)
    cache = args.cache or os.path.join(os.getcwd(), "league-cache")
    return boxes, aliases, cache


def run_standings(args):
    from companion.core import league
    from companion.services import league_boxes
    from companion.base.timeutil import WallClock

    boxes, aliases, cache = _setup(args)
    if not args.offline:
        league_boxes.refresh_all(boxes, cache, log=lambda m: print(m, file=sys.stderr))
    result, title = league_boxes.combined(boxes, cache, args.season, aliases, WallClock().now_iso())
    if args.json:
        emit(league.standings_json(result, title))
    else:
        sys.stdout.write(league.standings_text(result, title))


def run_serve(args):
    from companion.base.errors import InputError

    boxes, aliases, cache = _setup(args)
    if not 1 <= args.every <= 86400:
        raise InputError("must be between 1 and 86400 seconds", "--every")
    if not 1 <= args.port <= 65535:
        raise InputError("must be a port number (1-65535)", "--port")
    from companion.web.league import serve

    from companion.cli.serve import WILDCARDS

    allowed = list(args.allow_host) + ([args.host] if args.host not in WILDCARDS else [])
    return serve(boxes, cache, args.season, aliases, args.host, args.port, args.every, offline=args.offline,
                 allowed_hosts=allowed)
