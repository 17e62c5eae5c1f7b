"""The HTML pages. They are thin: the shared script (``web/static/js/companion.js``) fetches
the API and follows the live stream. A game's own tracker plugs in by files alone:
``web/templates/games/<game>.html`` (included in the match page) and
``web/static/games/<game>.js`` / ``.css`` (loaded after the shared script); see docs/developing.md."""

from __future__ import annotations

import functools

from flask import Blueprint, abort, render_template

from companion.base.errors import NotFoundError
from companion.games import GAMES
from companion.base.resources import web_dir
from companion.web.core import ctx, role, seat_for

bp = Blueprint("pages", __name__)


def game_files(game: str) -> dict:
    wd = web_dir()
    return {
        "game_partial": f"games/{game}.html" if (wd / "templates" / "games" / f"{game}.html").is_file() else None,
        "game_script": f"games/{game}.js" if (wd / "static" / "games" / f"{game}.js").is_file() else None,
        "game_style": f"games/{game}.css" if (wd / "static" / "games" / f"{game}.css").is_file() else None,
        # what the game's tracker and its TV panel share (loaded first on both pages)
        "game_shared": f"games/{game}.shared.js"
        if (wd / "static" / "games" / f"{game}.shared.js").is_file() else None,
        # the TV's own panel of the game (the display page, web/static/js/display.js)
        "display_script": f"games/{game}.display.js"
        if (wd / "static" / "games" / f"{game}.display.js").is_file() else None,
    }


BACKUP_STALE_HOURS = 48  # the timer runs nightly: two nights without a good copy is worth saying


def backup_notice() -> dict | None:
    """For organisers: the last backup failed, or none succeeded for two days (``companion backup`` records
    its result beside the database)."""
    from datetime import timedelta

    from companion.storage.db import read_backup_status
    from companion.base.timeutil import parse_iso

    c = ctx()
    if role() != "organiser" or str(c.store.path) == ":memory:":
        return None
    status = read_backup_status(c.store.path.parent)
    if status is None:
        return None
    try:
        at = parse_iso(status["at"])
    except (KeyError, TypeError, ValueError):
        return None
    when = at.strftime("%Y-%m-%d %H:%M UTC")
    if not status["ok"]:
        return {"key": "home.backup_failed", "at": when, "reason": str(status.get("error", ""))[:300]}
    if c.store.clock.now() - at > timedelta(hours=BACKUP_STALE_HOURS):
        return {"key": "home.backup_old", "at": when, "reason": ""}
    return None


def update_notice() -> dict | None:
    """The box's offline update (the image's companion-update, docs/pi.md "Updating without a network"): what it
    did, on the organisers' home page and the TV page, until the box restarts (the update runs at the box's
    start: the notice is of the boot it ran in, by its boot id, whatever the box's clock says)."""
    from companion.services.boxtime import boot_id
    from companion.storage.db import read_update_status

    c = ctx()
    if str(c.store.path) == ":memory:":
        return None
    doc = read_update_status(c.store.path.parent)
    if doc is None or not doc.get("boot_id") or doc.get("boot_id") != boot_id():
        return None
    ok = doc["result"] == "updated"
    return {"key": "update.updated" if ok else "update.fell_back", "ok": ok,
            "old": str(doc.get("from") or "?")[:40], "new": str(doc.get("to") or "?")[:40]}


@bp.get("/favicon.ico")
def favicon():
    """The box's icon where a browser looks for it by itself (a download, a print page, an SVG opened in a
    tab): the same drawing as every page's ``<link rel="icon">``, never a 404."""
    from flask import send_file

    resp = send_file(web_dir() / "static" / "icon.svg", mimetype="image/svg+xml", max_age=7 * 24 * 3600)
    return resp


@functools.cache
def _gzipped_words(lang: str) -> bytes:
    """The words' script compressed, once per process (64-68 KB as they are, 15-17 KB compressed)."""
    from companion.web import i18n
    from companion.web.assets import compress

    return compress(i18n.catalogue_script(lang)[0])


@bp.get("/static/i18n/<lang>.js")
def catalogue_script(lang):
    """The page's words (``companion/web/i18n.py``: ``catalogue_script``), loaded before the page's scripts.
    Its address carries the hash of its content (``?v=``), so a phone keeps it for a year and asks again only
    for new words; any other ``v`` (a page of an older version) gets today's words, to be revalidated."""
    from flask import Response, request

    from companion.web import i18n
    from companion.web.assets import CACHED_FOR_A_YEAR, accepts_gzip

    if lang not in i18n.LANGUAGES:
        abort(404)
    body, digest = i18n.catalogue_script(lang)
    packed = accepts_gzip(request.headers.get("Accept-Encoding"))
    resp = Response(_gzipped_words(lang) if packed else body, mimetype="text/javascript")
    if packed:
        resp.headers["Content-Encoding"] = "gzip"
    resp.vary.add("Accept-Encoding")
    resp.set_etag(digest + (".gz" if packed else ""))
    resp.headers["Cache-Control"] = CACHED_FOR_A_YEAR if request.args.get("v") == digest else "no-cache"
    return resp.make_conditional(request)


@bp.get("/")
def home():
    # a fresh box says how to become its organiser (no PIN chosen yet): the first thing a new organiser needs
    # how many matches each list will show once the page's script has them (js/pages.js, initHome: the 60 last,
    # the open ones, then 20 ended): their space kept from the first paint, so the lists do not push each other
    listed = [m["status"] for m in ctx().store.list_matches(None, 60)]
    shown = {"open": listed.count("open") or 1, "recent": min(20, len(listed) - listed.count("open")) or 1}
    return render_template("home.html", page="home", backup=backup_notice(), fresh=not ctx().access.pin_is_set(),
                           update=update_notice() if role() == "organiser" else None, shown=shown)


@bp.get("/new")
def new_match():
    from companion.games import game_module

    return render_template("new.html", page="new", games=sorted(GAMES), rows=starting_rows(),
                           max_players={g: game_module(g).MAX_PLAYERS for g in GAMES})


def starting_rows() -> dict:
    """How many player rows /new starts with, per game: as many as the last table of that game on this box
    had, else 4 (within the game's range): an empty row is ignored, a missing one costs a tap."""
    from companion.games import game_module

    rows = {g: min(max(4, game_module(g).MIN_PLAYERS), game_module(g).MAX_PLAYERS) for g in GAMES}
    seen = set()
    for m in ctx().store.list_matches(limit=100):  # the newest first
        if m["game"] in rows and m["game"] not in seen:
            seen.add(m["game"])
            rows[m["game"]] = len(m["players"])
    return rows


def _match(match_id: str) -> dict:
    c = ctx()
    try:
        match = c.store.get_match(match_id)
    except NotFoundError:
        abort(404)
    return {**match, **c.store.meta(match_id)}


def tracker_data(match: dict) -> dict:
    """What a game's page script reads from the page (``data-<name>`` of the body) instead of asking for it:
    the address of the conquest match's map, of Rome Is Burning's card catalogue, with their content's hash,
    which the browser then keeps."""
    if match["game"] == "conquest-italy":
        from companion.web.trackers.conquest import map_url

        return {"map-url": map_url(match)}
    if match["game"] == "rome-is-burning":
        from companion.web.trackers.rome import catalogue_url

        return {"catalogue-url": catalogue_url()}
    return {}


def first_load(match_id: str) -> dict:
    """What the match page's script would ask for as soon as it runs, written into the page instead (three
    requests and their round trips fewer at every load): the match as this phone sees it (``GET
    /api/matches/<id>``), its history (``…/events``) and the table's dice (``…/dice``)."""
    from companion.web.api import events_doc, match_doc
    from companion.web.dice import match_dice_doc

    return {"match": match_doc(match_id), "events": events_doc(match_id)["events"],
            "dice": match_dice_doc(match_id)}


@bp.get("/m/<match_id>")
def match_page(match_id):
    from flask import make_response

    from companion.web.seats import table_qr, who_question

    match = _match(match_id)
    resp = make_response(render_template(
        "match.html", page="match", match=match, seat=seat_for(match_id), who=who_question(match),
        table=table_qr(match), data=tracker_data(match), first=first_load(match_id), **game_files(match["game"])))
    # (it holds what this phone alone may see, its seat's secret: kept by no cache, as the API's answers)
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.get("/m/<match_id>/display")
def display_page(match_id):
    from companion.web.seats import table_qr

    from companion.core.match import result_only, uses_clock

    match = _match(match_id)
    files = game_files(match["game"])
    # the layout the TV's scripts would give it, from the first paint (what they draw then keeps its place):
    # the game's panel beside a side column (a map for the conquest), or the scores large where no clock is
    panel = bool(files["display_script"]) and not result_only(match["options"])
    layout = ["display"] + (["tv-has-panel"] if panel else []) + (
        ["tv-map"] if panel and match["game"] == "conquest-italy" else []) + (
        [] if uses_clock(match["game"], match["options"]) else ["no-clock"]) + (
        ["tv-ended"] if match["status"] == "ended" else [])
    return render_template("display.html", page="display", match=match, table=table_qr(match), panel=panel,
                           layout=" ".join(layout), data=tracker_data(match), update=update_notice(), **files)


@bp.get("/tournament")
def tournament_page():
    return render_template("tournament.html", page="tournament")


@bp.get("/join")
def join_page():
    from companion.web.auth import current_join, may_show_join, qr_svg

    if not may_show_join():
        return render_template("join.html", page="join", allowed=False, svg=None, link=None), 200
    link = current_join()
    return render_template("join.html", page="join", allowed=True, svg=qr_svg(link["url"]), link=link,
                           settings=ctx().access.settings())


@bp.get("/login")
def login():
    from companion.services.seasons import list_clubs

    pin_set = ctx().access.pin_is_set()
    # the first PIN also names the club (none yet): the roster, the seasons and the TV carry that name
    return render_template("login.html", page="login", pin_set=pin_set, current=role(),
                           name_club=not pin_set and not list_clubs(ctx().store))
