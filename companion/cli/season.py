"""``companion season``: the fan club's championship (standings, exports, chart, history, stored seasons)."""

from companion.cli import UsageError, data_dir_arg, emit, open_store
from companion.games import game_ids
from companion.base.jsonio import load_json

SOURCE_HELP = ("a season document (FILE or -, schemas/season.standings.schema.json); "
               "or leave it out and give --season")


def register(sub):
    p = sub.add_parser(
        "season", help="fan-club championship: standings, exports, chart, history, stored seasons",
        description="The fan club's annual championship. Points per match by number of players and place "
                    "(defaults: 3 players +1 0 -1; 4: +2 +1 -1 -2; 5: +2 +1 0 -1 -2; 6: +3 +2 +1 -1 -2 -3), "
                    "+1 for completing the objective, -0.5 for being eliminated; players sharing a place share "
                    "the mean of the places they cover. Ranked: players with at least 30% of the season's "
                    "matches, by points then wins. Commands read a season document (FILE or -) or a stored "
                    "season (--season ID or CLUB/GAME/YEAR, with --data-dir).")
    ssub = p.add_subparsers(dest="season_command", metavar="ACTION", required=True)

    s = ssub.add_parser(
        "standings", help="compute the standings of a season",
        description="Print {season, total_matches, threshold, standings: [{rank, player, points, matches, wins, "
                    "eligible, needs}]} sorted by rank, unranked players last (rank null; needs = how many more "
                    "matches, if they play the next ones, reach the threshold).")
    _source_args(s)
    s.add_argument("--ratings", action="store_true",
                   help="also print OpenSkill (Weng-Lin) ratings beside the standings (never replacing them)")
    s.set_defaults(func=run_standings)

    e = ssub.add_parser("export", help="export a season as CSV or JSON",
                        description="CSV: the standings (with ratings) or every result; JSON: the season document "
                                    "(settings and matches) that `season standings` reads back.")
    _source_args(e)
    e.add_argument("--format", choices=["csv", "json"], default="csv", help="csv (default) or json")
    e.add_argument("--table", choices=["standings", "results"], default="standings",
                   help="for csv: the standings (default) or one line per result")
    e.add_argument("--dialect", choices=["plain", "excel-it", "excel-en"], default="plain",
                   help="for csv: plain (default: \",\", \"1.5\"), excel-it (\";\", \"1,5\", a UTF-8 BOM: an Italian "
                        "spreadsheet) or excel-en (\",\", \"1.5\", the BOM)")
    e.add_argument("-o", "--output", metavar="PATH", default=None, help="write here instead of stdout")
    e.set_defaults(func=run_export)

    c = ssub.add_parser("chart", help="SVG chart of each player's points through the season",
                        description="An SVG line chart of each player's cumulative points, match by match "
                                    "in date order.")
    _source_args(c)
    c.add_argument("--player", action="append", default=None, metavar="NAME",
                   help="chart only this player (repeatable; default: everyone)")
    c.add_argument("--title", default=None, help="title (default: the season's name)")
    c.add_argument("-o", "--output", metavar="PATH", default=None, help="write here instead of stdout")
    c.set_defaults(func=run_chart)

    h = ssub.add_parser("history", help="one player's matches, places and points through the season")
    h.add_argument("player", metavar="PLAYER")
    _source_args(h)
    h.set_defaults(func=run_history)

    ls = ssub.add_parser("list", help="list stored clubs and seasons")
    ls.add_argument("--club", default=None, help="only this club's seasons (id or name)")
    data_dir_arg(ls)
    ls.set_defaults(func=run_list)

    cc = ssub.add_parser("club-create", help="create a club (its settings are its seasons' defaults)")
    cc.add_argument("name", metavar="NAME")
    cc.add_argument("--settings", metavar="FILE", default=None,
                    help="settings document (schemas/season.settings.schema.json), FILE or -")
    data_dir_arg(cc)
    cc.set_defaults(func=run_club_create)

    cn = ssub.add_parser("club-rename", help="give a club a new name (its seasons and matches stay its own)")
    cn.add_argument("club", metavar="CLUB", help="club id or name")
    cn.add_argument("name", metavar="NAME", help="the new name")
    data_dir_arg(cn)
    cn.set_defaults(func=run_club_rename)

    cs = ssub.add_parser("club-settings", help="show, or replace, a club's settings (points tables, threshold, bonuses)")
    cs.add_argument("club", metavar="CLUB", help="club id or name")
    cs.add_argument("file", metavar="FILE", nargs="?", default=None,
                    help="new settings (schemas/season.settings.schema.json), FILE or -; leave out to show them")
    data_dir_arg(cs)
    cs.set_defaults(func=run_club_settings)

    cr = ssub.add_parser("create", help="create a season of a club, a game and a year")
    cr.add_argument("--club", required=True, help="club id or name")
    cr.add_argument("--game", required=True, choices=game_ids())
    cr.add_argument("--year", required=True, type=_year)
    cr.add_argument("--name", default=None, help="default: '<club> <game> <year>'")
    cr.add_argument("--settings", metavar="FILE", default=None,
                    help="the season's own settings over the club's (schemas/season.settings.schema.json)")
    data_dir_arg(cr)
    cr.set_defaults(func=run_create)

    ss = ssub.add_parser("settings", help="show, or replace, a season's own settings (over the club's)")
    ss.add_argument("season_ref", metavar="SEASON", help="season id or CLUB/GAME/YEAR")
    ss.add_argument("file", metavar="FILE", nargs="?", default=None,
                    help="new settings, FILE or -; leave out to show the season's and the effective ones")
    data_dir_arg(ss)
    ss.set_defaults(func=run_season_settings)

    a = ssub.add_parser("add-result", help="enter the result of a match played without the app",
                        description="Store one match's result in a season. The document "
                                    "(schemas/season.result.schema.json): {id?, date, results: [{player, place, "
                                    "objective?, eliminated?}]}.")
    a.add_argument("season_ref", metavar="SEASON", help="season id or CLUB/GAME/YEAR")
    a.add_argument("file", metavar="FILE", help="result document, FILE or -")
    data_dir_arg(a)
    a.set_defaults(func=run_add_result)

    r = ssub.add_parser("remove-result", help="remove a match from a season")
    r.add_argument("season_ref", metavar="SEASON", help="season id or CLUB/GAME/YEAR")
    r.add_argument("match", metavar="MATCH", help="the match's id in the season")
    data_dir_arg(r)
    r.set_defaults(func=run_remove_result)


def _year(value):
    import argparse

    if not value.isdigit() or not 1900 <= int(value) <= 9999:
        raise argparse.ArgumentTypeError(f"not a year: {value!r}")
    return int(value)


def _source_args(p):
    p.add_argument("file", metavar="FILE", nargs="?", default=None, help=SOURCE_HELP)
    p.add_argument("--season", metavar="SEASON", default=None,
                   help="a stored season (id or CLUB/GAME/YEAR) instead of FILE")
    data_dir_arg(p)


def _which(args):
    if args.file is not None and args.season is not None:
        raise UsageError(f"companion season {args.season_command}: give FILE or --season, not both")
    if args.file is None and args.season is None:
        raise UsageError(f"companion season {args.season_command}: give a season document FILE (or -) or --season")


def _load(args):
    """(meta {season, club?, game?, year?}, rules, matches) from FILE or the store."""
    from companion.core import season as core

    _which(args)
    if args.file is not None:
        doc, rules, matches = core.load_document(load_json(args.file))
        meta = {k: doc.get(k) for k in ("season", "club", "game", "year")}
        return meta, rules, matches
    from companion.services import seasons as season_store

    with open_store(args) as store:
        season, rules, matches = season_store.season_data(store, args.season)
    return {"season": season["name"], "club": season["club"], "game": season["game"],
            "year": season["year"]}, rules, matches


def _write(args, text: str) -> None:
    import sys

    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        except OSError as exc:
            from companion.base.errors import InputError

            raise InputError(f"cannot write {args.output}: {exc.strerror or exc}", "--output") from None
        emit({"written": args.output})
    else:
        sys.stdout.write(text)


def run_standings(args):
    from companion.core import season as core

    _which(args)
    if args.file is not None:
        emit(core.standings_document(load_json(args.file), with_ratings=args.ratings))
        return
    from companion.services import seasons as season_store

    with open_store(args) as store:
        emit(season_store.season_standings(store, args.season, with_ratings=args.ratings))


def run_export(args):
    from companion.core import season as core
    from companion.base.jsonio import dumps

    meta, rules, matches = _load(args)
    if args.format == "json":
        _write(args, dumps(core.season_json(meta, rules, matches)) + "\n")
    elif args.table == "results":
        _write(args, core.results_csv(matches, rules, core.DIALECTS[args.dialect]))
    else:
        _write(args, core.standings_csv(core.standings(matches, rules), core.ratings(matches),
                                        core.DIALECTS[args.dialect]))


def run_chart(args):
    from companion.core import season as core

    meta, rules, matches = _load(args)
    _write(args, core.chart_svg(matches, rules, title=args.title or meta["season"], players=args.player))


def run_history(args):
    from companion.core import season as core

    meta, rules, matches = _load(args)
    emit({"season": meta["season"], **core.history(matches, rules, args.player)})


def run_list(args):
    from companion.services import seasons as season_store

    with open_store(args) as store:
        clubs = season_store.list_clubs(store)
        seasons = season_store.list_seasons(store, args.club)
        for s in seasons:
            s["matches"] = season_store.season_match_count(store, s["id"])
        emit({"clubs": clubs, "seasons": seasons})


def _settings_file(path):
    if path is None:
        return None
    doc = load_json(path)
    if doc is None:  # a file holding `null` is not "no file": it would silently show instead of set
        from companion.base.errors import InputError

        raise InputError("must be an object (the settings document)", "$")
    return doc


def run_club_create(args):
    from companion.services import seasons as season_store

    settings = _settings_file(args.settings)
    with open_store(args) as store:
        emit(season_store.create_club(store, args.name, settings))


def run_club_rename(args):
    from companion.services import seasons as season_store

    with open_store(args) as store:
        emit(season_store.rename_club(store, args.club, args.name))


def run_club_settings(args):
    from companion.core import season as core
    from companion.services import seasons as season_store

    settings = _settings_file(args.file)
    with open_store(args) as store:
        if settings is None:
            club = season_store.get_club(store, args.club)
        else:
            club = season_store.set_club_settings(store, args.club, settings)
        emit({**club, "effective": core.rules_from(club["settings"]).to_json()})


def run_create(args):
    from companion.services import seasons as season_store

    settings = _settings_file(args.settings)
    with open_store(args) as store:
        emit(season_store.create_season(store, args.club, args.game, args.year, args.name, settings))


def run_season_settings(args):
    from companion.services import seasons as season_store

    settings = _settings_file(args.file)
    with open_store(args) as store:
        if settings is None:
            season = season_store.get_season(store, args.season_ref)
        else:
            season = season_store.set_season_settings(store, args.season_ref, settings)
        emit({**season, "effective": season_store.season_rules(store, season).to_json()})


def run_add_result(args):
    from companion.services import seasons as season_store

    doc = load_json(args.file)
    with open_store(args) as store:
        emit(season_store.add_result(store, args.season_ref, doc))


def run_remove_result(args):
    from companion.services import seasons as season_store

    with open_store(args) as store:
        season_store.remove_result(store, args.season_ref, args.match)
        emit({"removed": args.match})
