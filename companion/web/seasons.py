"""The fan club's championship on the web: a JSON API under ``/api/seasons`` and ``/api/clubs``, and
pages under ``/seasons`` (standings with the eligibility line, the points chart, player history, CSV
export; organiser forms to enter results played without the app and to edit the settings).

Reading is open to every role the club lets in; writes need the organiser. Bodies are validated
against ``schemas/season.*.schema.json``; errors are ``{"error", "field"}`` naming the JSON path.
The maths is ``companion.core.season``, the storage ``companion.services.seasons``.
"""

from __future__ import annotations

from contextlib import contextmanager

from flask import Blueprint, Response, abort, g, jsonify, render_template, request

from companion.base import lazy
from companion.base.errors import CompanionError, InputError, NotFoundError, join_path
from companion.games import GAMES
from companion.web import i18n
from companion.web.core import CSV_DIALECT_PARAM, ctx, json_body, require
from companion.web.apidoc import SECURITY, body as _body, err as _err, ok as _ok, path_param

core = lazy.module("companion.core.season")  # imported at the first request that needs them
ss = lazy.module("companion.services.seasons")

bp = Blueprint("seasons", __name__)

def ts(key: str, **values) -> str:
    """A string of the page's language (the season strings live in the app's catalogues)."""
    return i18n.translate(g.get("lang", i18n.DEFAULT), key, **values)


# -- helpers --------------------------------------------------------------------------------------

@contextmanager
def body_errors(strip: str | None = None):
    """Errors about body fields (``name``, ``settings.points["4"]``) name their JSON path (``$.name``);
    with ``strip``, a leading ``strip`` is the body itself (``settings.threshold`` -> ``$.threshold``)."""
    try:
        yield
    except CompanionError as exc:
        f = exc.field
        if f and not f.startswith("$"):
            if strip and (f == strip or f.startswith(strip + ".") or f.startswith(strip + "[")):
                f = f[len(strip):]
            exc.field = join_path("$", f)
        raise


def _season(season_id: str) -> dict:
    return ss.get_season(ctx().store, season_id)


def _club(club_id: str) -> dict:
    return ss.get_club(ctx().store, club_id)


def _count(season_id: str) -> int:
    return ss.season_match_count(ctx().store, season_id)


def min_matches(total: int, threshold) -> int:
    """The least number of matches that reaches the threshold now (exact)."""
    return -(-threshold.numerator * total // threshold.denominator)


def _percent(threshold) -> str:
    """The threshold as the page's language writes it ("33,33%" in Italian)."""
    return i18n.decimal_text(g.get("lang", i18n.DEFAULT), _pct_number(threshold)) + "%"


def _pct_number(threshold) -> str:
    """0.3 -> "30"; 1/3 -> "33.33" (exact when it is short)."""
    return core.text(core.exact(threshold) * 100, 2)


def _form_values(own: dict, rules: core.Rules) -> dict:
    return {"own_pct": _pct_number(own["threshold"]) if own.get("threshold") is not None else "",
            "effective_pct": _pct_number(rules.threshold), "table_sizes": _table_sizes(rules)}


def _settings_out(season_or_club: dict, rules: core.Rules) -> dict:
    return {**season_or_club, "effective": rules.to_json()}


def standings_out(season: dict, rules: core.Rules, matches: list[dict]) -> dict:
    total = len(matches)
    return {
        "season": season["name"], "season_id": season["id"], "club": season["club"], "game": season["game"],
        "year": season["year"], "total_matches": total, "threshold": core.num(rules.threshold),
        "min_matches": min_matches(total, rules.threshold),
        "standings": [core.row_json(r) for r in core.standings(matches, rules)],
        "ratings": core.ratings(matches),
    }


def _matches_out(rules: core.Rules, matches: list[dict]) -> list[dict]:
    labels = ctx().store.labels()  # a match is listed by its table label ("Turno 2 · Tavolo 1"), never its id
    out = []
    for m in core.chronological(matches):
        places = [r["place"] for r in m["results"]]
        n = len(places)
        results = [{**r, "points": core.num(rules.value(n, r["place"], places.count(r["place"]),
                                                         r["objective"], r["eliminated"]))} for r in m["results"]]
        out.append({"id": m["id"], "date": m["date"], "source": m.get("source"), "match_id": m.get("match_id"),
                    "label": labels.get(m.get("match_id") or "", "") or m.get("label") or "", "results": results})
    return out


# -- JSON API --------------------------------------------------------------------------------------

@bp.get("/api/seasons")
def api_list():
    store = ctx().store
    seasons = ss.list_seasons(store)
    for s in seasons:
        s["matches"] = _count(s["id"])
    return jsonify({"clubs": ss.list_clubs(store), "seasons": seasons})


@bp.post("/api/clubs")
@require("organiser")
def api_club_create():
    doc = json_body("season.club")
    with body_errors():
        club = ss.create_club(ctx().store, doc["name"], doc.get("settings"))
    return jsonify(_settings_out(club, core.rules_from(club["settings"]))), 201, \
        {"Location": f"/api/clubs/{club['id']}"}


@bp.get("/api/clubs/<club_id>")
def api_club(club_id):
    club = _club(club_id)
    return jsonify(_settings_out(club, core.rules_from(club["settings"])))


@bp.put("/api/clubs/<club_id>")
@require("organiser")
def api_club_update(club_id):
    """A club's new name (the name asked at the first PIN can be changed here), and its settings when given."""
    club = _club(club_id)
    doc = json_body("season.club")
    with body_errors():
        club = ss.rename_club(ctx().store, club["id"], doc["name"], doc.get("settings"))
    return jsonify(_settings_out(club, core.rules_from(club["settings"])))


@bp.put("/api/clubs/<club_id>/settings")
@require("organiser")
def api_club_settings(club_id):
    club = _club(club_id)
    doc = json_body("season.settings")
    with body_errors(strip="settings"):
        club = ss.set_club_settings(ctx().store, club["id"], doc)
    return jsonify(_settings_out(club, core.rules_from(club["settings"])))


@bp.post("/api/seasons")
@require("organiser")
def api_season_create():
    doc = json_body("season.create")
    with body_errors():
        s = ss.create_season(ctx().store, doc["club"], doc["game"], doc["year"], doc.get("name"),
                             doc.get("settings"))
    return jsonify(_settings_out(s, ss.season_rules(ctx().store, s))), 201, {"Location": f"/api/seasons/{s['id']}"}


@bp.get("/api/seasons/<season_id>")
def api_season(season_id):
    s = _season(season_id)
    return jsonify({**_settings_out(s, ss.season_rules(ctx().store, s)), "matches": _count(s["id"])})


@bp.put("/api/seasons/<season_id>/settings")
@require("organiser")
def api_season_settings(season_id):
    s = _season(season_id)
    doc = json_body("season.settings")
    with body_errors(strip="settings"):
        s = ss.set_season_settings(ctx().store, s["id"], doc)
    return jsonify(_settings_out(s, ss.season_rules(ctx().store, s)))


@bp.get("/api/seasons/<season_id>/standings")
def api_standings(season_id):
    season, rules, matches = ss.season_data(ctx().store, season_id)
    return jsonify(standings_out(season, rules, matches))


@bp.get("/api/seasons/<season_id>/matches")
def api_matches(season_id):
    season, rules, matches = ss.season_data(ctx().store, season_id)
    return jsonify({"season_id": season["id"], "matches": _matches_out(rules, matches)})


@bp.post("/api/seasons/<season_id>/results")
@require("organiser")
def api_add_result(season_id):
    season = _season(season_id)
    doc = json_body("season.result")
    rec = ss.add_result(ctx().store, season["id"], doc)
    return jsonify(rec), 201


@bp.delete("/api/seasons/<season_id>/results/<match>")
@require("organiser")
def api_remove_result(season_id, match):
    ss.remove_result(ctx().store, season_id, match)
    return jsonify({"removed": match})


def match_season_out(match: dict, state: dict) -> dict:
    s = state["season"]
    return {"match_id": match["id"], "season_state": state["state"], "season": s["name"] if s else None,
            "season_id": s["id"] if s else None}


@bp.put("/api/matches/<match_id>/season")
@require("organiser")
def api_match_season(match_id):
    """The organiser puts a match in a season, or takes it out (``schemas/api.match-season``)."""
    store = ctx().store
    match = store.get_match(match_id)
    doc = json_body("api.match-season")
    with body_errors():
        state = ss.set_match_season(store, match, doc["season"])
    return jsonify(match_season_out(match, state))


@bp.get("/api/seasons/<season_id>/players/<player>")
def api_history(season_id, player):
    season, rules, matches = ss.season_data(ctx().store, season_id)
    return jsonify({"season": season["name"], "season_id": season["id"], **core.history(matches, rules, player)})


def _filename(season: dict, ext: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in season["name"]).strip("-") or "season"
    return f"{safe[:60]}.{ext}"


@bp.get("/api/seasons/<season_id>/export.csv")
def api_export_csv(season_id):
    table = request.args.get("table", "standings")
    if table not in ("standings", "results"):
        raise InputError("must be standings or results", "table")
    from companion.web.core import csv_dialect, download

    dialect = csv_dialect()
    season, rules, matches = ss.season_data(ctx().store, season_id)
    if table == "results":
        text = core.results_csv(matches, rules, dialect, labels=ctx().store.labels())
        name = f"{season['name']} · {ts('season.results_file')}"
    else:
        text = core.standings_csv(core.standings(matches, rules), core.ratings(matches), dialect)
        name = f"{season['name']} · {ts('season.standings_file')}"
    return download(text, name, "csv")


@bp.get("/api/seasons/<season_id>/export.json")
def api_export_json(season_id):
    doc = ss.season_document(ctx().store, season_id)
    season = _season(season_id)
    resp = jsonify(doc)
    resp.headers["Content-Disposition"] = f'attachment; filename="{_filename(season, "json")}"'
    return resp


@bp.get("/api/seasons/<season_id>/chart.svg")
def api_chart(season_id):
    season, rules, matches = ss.season_data(ctx().store, season_id)
    players = request.args.getlist("player") or None
    svg = core.chart_svg(matches, rules, title=season["name"], players=players, empty=ts("season.chart_empty"),
                         colours=ss.chart_colours(ctx().store, season, matches))
    return Response(svg, mimetype="image/svg+xml")


# -- pages ------------------------------------------------------------------------------------------

def _page_season(season_id: str):
    try:
        return ss.season_data(ctx().store, season_id)
    except NotFoundError:
        abort(404)


@bp.get("/seasons")
def page_list():
    store = ctx().store
    seasons = ss.list_seasons(store)
    for s in seasons:
        s["matches"] = _count(s["id"])
    return render_template("seasons.html", page="seasons", seasons=seasons, clubs=ss.list_clubs(store),
                           games=sorted(GAMES))


def _text(value) -> str:
    """Points as the page's language writes them ("-1,5" in Italian)."""
    return i18n.decimal_text(g.get("lang", i18n.DEFAULT), core.text(value))


@bp.get("/seasons/<season_id>")
def page_season(season_id):
    season, rules, matches = _page_season(season_id)
    rows = core.standings(matches, rules)
    for r in rows:
        r["points_text"] = _text(r["points"])
    total = len(matches)
    listed = _matches_out(rules, matches)
    for m in listed:
        for r in m["results"]:
            r["points_text"] = _text(core.exact(r["points"]))
    club = ss.get_club(ctx().store, season["club_id"])
    return render_template(
        "season.html", page="season", season=season, rows=rows, ratings=core.ratings(matches),
        total=total, pct=_percent(rules.threshold), min_matches=min_matches(total, rules.threshold),
        chart=_chart(matches, rules, season["name"], colours=ss.chart_colours(ctx().store, season, matches)),
        matches=listed[::-1],
        effective=rules.to_json(), own=season["settings"], club=club,
        outside=ss.matches_outside(ctx().store, season) if g.get("role") == "organiser" else [],
        **_form_values(season["settings"], rules))


def _chart(matches, rules, title, players=None, colours=None) -> str:
    """The page's chart: narrower than the export and without its legend, which the page writes below it in
    HTML (each line's colour, name and points, at the page's own size: legible on a phone, where the drawing
    is scaled down), numbers in the page's language; each player's line in their own colour, else their
    table's (``colours``, services.seasons.chart_colours). No match yet: said in words, no empty axes."""
    from markupsafe import Markup, escape

    if not matches:
        return Markup(f'<p class="muted" id="chart-empty">{escape(ts("season.chart_empty"))}</p>')
    lang = g.get("lang", i18n.DEFAULT)
    svg = core.chart_svg(matches, rules, title=title, players=players, width=420, height=300, legend=False,
                         x_label=ts("season.chart_x"), y_label=ts("season.points"),
                         decimal=lambda s: i18n.decimal_text(lang, s), colours=colours)
    items = []
    for x in core.chart_legend(matches, rules, players, colours):
        dash = f' stroke-dasharray="{x["dash"]}"' if x["dash"] else ""
        items.append(f'<li data-player="{escape(x["player"])}"><svg width="28" height="10" aria-hidden="true">'
                     f'<line x1="0" y1="5" x2="28" y2="5" stroke="{x["colour"]}" stroke-width="3"{dash}/></svg> '
                     f'<span class="name">{escape(x["player"])}</span> '
                     f'<span class="num">{escape(i18n.decimal_text(lang, core.text(x["points"])))}</span></li>')
    legend = f'<ul class="chart-legend" id="chart-legend">{"".join(items)}</ul>' if items else ""
    return Markup(svg) + Markup(legend)


def _table_sizes(rules: core.Rules) -> list[int]:
    return sorted(set(rules.points) | {3, 4, 5, 6})


@bp.get("/seasons/<season_id>/players/<player>")
def page_history(season_id, player):
    season, rules, matches = _page_season(season_id)
    try:
        h = core.history(matches, rules, player)
    except InputError:
        abort(404)
    for x in h["history"]:
        x["points_text"] = _text(core.exact(x["points"]))
        x["cumulative_text"] = _text(core.exact(x["cumulative"]))
    from companion.storage import players as roster

    on_roster = roster.find_by_name(ctx().store, season["club_id"], player)  # the player page: every game, season
    return render_template("season_player.html", page="season-player", season=season, h=h, on_roster=on_roster,
                           total_text=_text(core.exact(h["points"])),
                           chart=_chart(matches, rules, f"{season['name']}: {player}", [player],
                                        ss.chart_colours(ctx().store, season, matches)))


@bp.get("/seasons/clubs/<club_id>")
def page_club(club_id):
    try:
        club = _club(club_id)
    except NotFoundError:
        abort(404)
    rules = core.rules_from(club["settings"])
    return render_template("season_club.html", page="season-club", club=club, effective=rules.to_json(),
                           own=club["settings"], seasons=ss.list_seasons(ctx().store, club["id"]),
                           **_form_values(club["settings"], rules))


# -- OpenAPI ------------------------------------------------------------------------------------------

def _openapi_schemas() -> dict:
    from companion.base.schemas import load_schema, standalone

    # standalone: references (to the schema's own $defs or to season.settings) written in place
    out = {name: standalone(load_schema(name)) for name in
           ("season.club", "season.create", "season.settings", "season.result")}
    num = {"type": "number"}
    row = {"type": "object", "required": ["rank", "player", "points", "matches", "wins", "eligible", "needs"],
           "properties": {"rank": {"type": ["integer", "null"]}, "player": {"type": "string"}, "points": num,
                          "matches": {"type": "integer"}, "wins": {"type": "integer"},
                          "eligible": {"type": "boolean"}, "needs": {"type": ["integer", "null"]}}}
    rating = {"type": "object", "required": ["player", "mu", "sigma", "ordinal", "matches"],
              "properties": {"player": {"type": "string"}, "mu": num, "sigma": num, "ordinal": num,
                             "matches": {"type": "integer"}}}
    season = {"type": "object", "required": ["id", "club_id", "club", "game", "year", "name", "settings"],
              "properties": {"id": {"type": "string"}, "club_id": {"type": "string"}, "club": {"type": "string"},
                             "game": {"type": "string"}, "year": {"type": "integer"}, "name": {"type": "string"},
                             "settings": {"type": "object"}, "created_at": {"type": "string"},
                             "effective": {"type": "object"}, "matches": {"type": "integer"},
                             "taken_in": {"type": "array", "items": {"type": "string"}}}}
    club = {"type": "object", "required": ["id", "name", "settings"],
            "properties": {"id": {"type": "string"}, "name": {"type": "string"}, "settings": {"type": "object"},
                           "created_at": {"type": "string"}, "effective": {"type": "object"}}}
    out.update({
        "Season": season, "Club": club,
        "SeasonList": {"type": "object", "required": ["clubs", "seasons"],
                       "properties": {"clubs": {"type": "array", "items": club},
                                      "seasons": {"type": "array", "items": season}}},
        "Standings": {"type": "object",
                      "required": ["season", "season_id", "total_matches", "threshold", "min_matches", "standings",
                                   "ratings"],
                      "properties": {"season": {"type": "string"}, "season_id": {"type": "string"},
                                     "club": {"type": "string"}, "game": {"type": "string"},
                                     "year": {"type": "integer"}, "total_matches": {"type": "integer"},
                                     "threshold": num, "min_matches": {"type": "integer"},
                                     "standings": {"type": "array", "items": row},
                                     "ratings": {"type": "array", "items": rating}}},
        "SeasonMatches": {"type": "object", "required": ["season_id", "matches"],
                          "properties": {"season_id": {"type": "string"}, "matches": {"type": "array"}}},
        "SeasonMatch": {"type": "object", "required": ["id", "date", "results"],
                        "properties": {"id": {"type": "string"}, "date": {"type": "string"},
                                       "results": {"type": "array"}, "season": {"type": "string"},
                                       "source": {"type": "string"}}},
        "History": {"type": "object", "required": ["player", "matches", "wins", "points", "history"],
                    "properties": {"player": {"type": "string"}, "matches": {"type": "integer"},
                                   "wins": {"type": "integer"}, "points": num, "history": {"type": "array"}}},
        "Removed": {"type": "object", "required": ["removed"], "properties": {"removed": {"type": "string"}}},
        "MatchSeason": {"type": "object", "required": ["match_id", "season_state", "season", "season_id"],
                        "properties": {"match_id": {"type": "string"},
                                       "season_state": {"enum": ["counted", "waiting", "none"]},
                                       "season": {"type": ["string", "null"]},
                                       "season_id": {"type": ["string", "null"]}}},
    })
    return out




_SEASON, _CLUB, _SEC = path_param("season_id"), path_param("club_id"), SECURITY

OPENAPI_SCHEMAS = _openapi_schemas()
OPENAPI_PATHS = {
    "/api/seasons": {
        "get": {"summary": "Clubs and seasons", "responses": {"200": _ok("SeasonList"), **_err(400, 401)}},
        "post": {"summary": "Create a season of a club, a game and a year (organiser)", "security": _SEC,
                 "requestBody": _body("season.create"),
                 "responses": {"201": _ok("Season", "created"), **_err(400, 401, 403, 404, 409)}},
    },
    "/api/clubs": {"post": {"summary": "Create a club (organiser)", "security": _SEC,
                            "requestBody": _body("season.club"),
                            "responses": {"201": _ok("Club", "created"), **_err(400, 401, 403, 409)}}},
    "/api/clubs/{club_id}": {"get": {"summary": "A club and its settings in force", "parameters": [_CLUB],
                                     "responses": {"200": _ok("Club"), **_err(400, 401, 404)}},
                             "put": {"summary": "Rename a club, and replace its settings when given (organiser)",
                                     "security": _SEC, "parameters": [_CLUB], "requestBody": _body("season.club"),
                                     "responses": {"200": _ok("Club"), **_err(400, 401, 403, 404, 409)}}},
    "/api/clubs/{club_id}/settings": {"put": {
        "summary": "Replace a club's settings: points tables, threshold, bonuses (organiser)", "security": _SEC,
        "parameters": [_CLUB], "requestBody": _body("season.settings"),
        "responses": {"200": _ok("Club"), **_err(400, 401, 403, 404, 409)}}},
    "/api/seasons/{season_id}": {"get": {"summary": "A season and its settings in force", "parameters": [_SEASON],
                                         "responses": {"200": _ok("Season"), **_err(400, 401, 404)}}},
    "/api/seasons/{season_id}/settings": {"put": {
        "summary": "Replace a season's own settings (organiser)", "security": _SEC, "parameters": [_SEASON],
        "requestBody": _body("season.settings"), "responses": {"200": _ok("Season"), **_err(400, 401, 403, 404, 409)}}},
    "/api/seasons/{season_id}/standings": {"get": {
        "summary": "Standings (ranked, then unranked with how many more matches they need) and OpenSkill ratings",
        "parameters": [_SEASON], "responses": {"200": _ok("Standings"), **_err(400, 401, 404)}}},
    "/api/seasons/{season_id}/matches": {"get": {
        "summary": "The season's matches with each result's points", "parameters": [_SEASON],
        "responses": {"200": _ok("SeasonMatches"), **_err(400, 401, 404)}}},
    "/api/seasons/{season_id}/results": {"post": {
        "summary": "Enter the result of a match played without the app (organiser)", "security": _SEC,
        "parameters": [_SEASON], "requestBody": _body("season.result"),
        "responses": {"201": _ok("SeasonMatch", "stored"), **_err(400, 401, 403, 404, 409)}}},
    "/api/seasons/{season_id}/results/{match}": {"delete": {
        "summary": "Remove a match from the season (organiser)", "security": _SEC,
        "parameters": [_SEASON, path_param("match")],
        "responses": {"200": _ok("Removed"), **_err(400, 401, 403, 404)}}},
    "/api/matches/{match_id}/season": {"put": {
        "summary": "Put a match in a season, or take it out (organiser); a finished match moves at once",
        "security": _SEC, "parameters": [path_param("match_id")], "requestBody": _body("api.match-season"),
        "responses": {"200": _ok("MatchSeason"), **_err(400, 401, 403, 404, 409)}}},
    "/api/seasons/{season_id}/players/{player}": {"get": {
        "summary": "One player's season: matches, places, points, running total",
        "parameters": [_SEASON, path_param("player")],
        "responses": {"200": _ok("History"), **_err(400, 401, 404)}}},
    "/api/seasons/{season_id}/export.csv": {"get": {
        "summary": "The standings (with ratings) or every result as CSV",
        "parameters": [_SEASON, {"name": "table", "in": "query", "schema": {"enum": ["standings", "results"]}},
                       CSV_DIALECT_PARAM],
        "responses": {"200": {"description": "CSV", "content": {"text/csv": {"schema": {"type": "string"}}}},
                      **_err(400, 401, 404)}}},
    "/api/seasons/{season_id}/export.json": {"get": {
        "summary": "The season as one document (schemas/season.standings)", "parameters": [_SEASON],
        "responses": {"200": {"description": "the season document",
                              "content": {"application/json": {"schema": {"type": "object"}}}},
                      **_err(400, 401, 404)}}},
    "/api/seasons/{season_id}/chart.svg": {"get": {
        "summary": "SVG chart of each player's cumulative points",
        "parameters": [_SEASON, {"name": "player", "in": "query", "schema": {"type": "string"}}],
        "responses": {"200": {"description": "SVG", "content": {"image/svg+xml": {"schema": {"type": "string"}}}},
                      **_err(400, 401, 404)}}},
}

