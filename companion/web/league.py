"""``companion league serve``: the combined championship of several boxes on one page (docs/league.md).

A small read-only Flask app of its own (no database of its own, no sign-in: it shows what the boxes'
season pages show): every ``every`` seconds a background thread restores each box's replica into the
cache folder and recombines; pages read the last combination. The standings table, CSV and chart are the
season pages' own (``companion.core.season`` and the helpers of ``companion.web.seasons``), with each result's
venue, the boxes' state and what the organiser must look at (ambiguous names, conflicting copies of a
match, other rules, wrong clocks).
"""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone

from flask import Flask, Response, g, jsonify, render_template, request

from companion import __version__
from companion.core import league
from companion.services import league_boxes
from companion.core import season as core
from companion.base.errors import CompanionError
from companion.base.resources import web_dir
from companion.base.timeutil import WallClock
from companion.web import assets, i18n


class League:
    """The boxes, their cache and the latest combination (replaced whole, read without a lock)."""

    def __init__(self, boxes, cache, season=None, aliases=None, every=300.0, offline=False, log=None):
        self.boxes, self.cache, self.season, self.aliases = boxes, cache, season, aliases or {}
        self.every, self.offline = every, offline
        self.log = log or (lambda m: None)
        self.latest = {"result": None, "title": "", "error": None, "at": None}
        self._stop = threading.Event()

    def refresh(self) -> dict:
        if not self.offline:
            try:
                league_boxes.refresh_all(self.boxes, self.cache, self.log)
            except CompanionError as exc:
                self.log(str(exc))
        try:
            result, title = league_boxes.combined(self.boxes, self.cache, self.season, self.aliases,
                                                  WallClock().now_iso())
            self.latest = {"result": result, "title": title, "error": None, "at": time.time()}
        except CompanionError as exc:
            self.latest = {"result": None, "title": "", "error": exc.message, "at": time.time()}
        return self.latest

    def loop(self) -> None:
        while not self._stop.wait(self.every):
            self.refresh()

    def start(self) -> threading.Thread:
        t = threading.Thread(target=self.loop, name="league-refresh", daemon=True)
        t.start()
        return t

    def stop(self) -> None:
        self._stop.set()


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if ts else ""


def create_app(state: League, allowed_hosts=None) -> Flask:
    """The league's pages. ``allowed_hosts``: the host names besides localhost and this machine's own
    addresses and names that a browser may use to reach it (a Host allow-list against DNS rebinding, as
    the box's own server has)."""
    from companion.web.gate import SECURITY_HEADERS
    from companion.web.netinfo import HostList

    wd = web_dir()
    app = Flask(__name__, template_folder=str(wd / "templates"), static_folder=str(wd / "static"),
                static_url_path="/static")
    hosts = HostList(allowed_hosts)

    @app.before_request
    def _lang():
        asked = request.args.get("lang")
        g.lang = asked if asked in i18n.LANGUAGES else i18n.choose(request.cookies.get("lang"),
                                                                   request.headers.get("Accept-Language"))
        if not hosts.allowed(request.host) and request.path != "/healthz":
            words = i18n.error_text(g.lang, "this Host is not served here (DNS rebinding protection)")
            return jsonify({"error": words, "field": "Host"}), 403

    @app.after_request
    def _cookie(resp):
        if request.args.get("lang") in i18n.LANGUAGES:
            resp.set_cookie("lang", request.args["lang"], max_age=365 * 86400, samesite="Lax")
        for key, _lower, value in SECURITY_HEADERS:  # the box's own: no frame, no script from elsewhere
            resp.headers.setdefault(key, value)
        return resp

    @app.context_processor
    def _globals():
        lang = g.get("lang", i18n.DEFAULT)
        return {"t": lambda key, **kw: i18n.translate(lang, key, **kw),
                "plural": lambda key, n, **kw: i18n.plural(lang, key, n, **kw), "lang": lang,
                "languages": i18n.LANGUAGES, "version": __version__, "static_url": assets.url}

    def _result():
        latest = state.latest
        return latest["result"], latest

    @app.get("/")
    def page():
        from companion.web.seasons import _chart, _percent, min_matches

        lang = g.get("lang", i18n.DEFAULT)
        result, latest = _result()
        ctx = {"latest": latest, "title": latest["title"], "every": int(state.every), "boxes": [], "rows": [],
               "matches": [], "chart": "", "when": _when(latest["at"])}
        if result is not None:
            rules = result["rules"]
            rows = league.standings(result)
            for r in rows:
                r["points_text"] = i18n.decimal_text(lang, core.text(r["points"]))
            listed = []
            for m in core.chronological(result["matches"])[::-1]:
                places = [r["place"] for r in m["results"]]
                res = [{**r, "points_text": i18n.decimal_text(lang, core.text(rules.value(
                    len(places), r["place"], places.count(r["place"]), r["objective"], r["eliminated"])))}
                       for r in m["results"]]
                listed.append({**m, "results": res})
            boxes = []
            for b in result["boxes"]:
                st = b.get("state") or {}
                boxes.append({**b, "restored": _when(st.get("restored_at")), "error": st.get("error"),
                              "error_since": _when(st.get("error_since")), "went_back": st.get("went_back")})
            total = len(result["matches"])
            ctx.update(rows=rows, matches=listed, boxes=boxes, result=result, total=total,
                       pct=_percent(rules.threshold), min_matches=min_matches(total, rules.threshold),
                       chart=_chart(result["matches"], rules, latest["title"]))
        return render_template("league.html", **ctx)

    def _need():
        result, latest = _result()
        if result is None:
            raise _NotReady(latest["error"] or "the boxes have not been read yet")
        return result, latest

    @app.get("/api/standings")
    def api_standings():
        result, latest = _need()
        return jsonify({**league.standings_json(result, latest["title"]), "refreshed_at": latest["at"]})

    @app.get("/standings.csv")
    def standings_csv():
        from companion.web.core import csv_dialect, download

        result, latest = _need()
        text = core.standings_csv(league.standings(result), core.ratings(result["matches"]), csv_dialect())
        return download(text, f"{latest['title']} · {i18n.translate(g.get('lang', i18n.DEFAULT), 'season.standings_file')}", "csv")

    @app.get("/results.csv")
    def results_csv():
        from companion.web.core import csv_dialect, download

        result, latest = _need()
        return download(league.results_csv(result, csv_dialect()),
                        f"{latest['title']} · {i18n.translate(g.get('lang', i18n.DEFAULT), 'season.results_file')}", "csv")

    @app.get("/chart.svg")
    def chart():
        result, latest = _need()
        return Response(core.chart_svg(result["matches"], result["rules"], title=latest["title"],
                                       players=request.args.getlist("player") or None), mimetype="image/svg+xml")

    @app.get("/healthz")
    def healthz():
        return jsonify({"ok": True})

    @app.errorhandler(_NotReady)
    def _not_ready(exc):
        return jsonify({"error": str(exc), "field": "--box"}), 503

    return app


class _NotReady(Exception):
    pass


def serve(boxes, cache, season, aliases, host: str, port: int, every: float, offline: bool = False,
          allowed_hosts=None) -> int:
    import sys

    import uvicorn
    from a2wsgi import WSGIMiddleware

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    state = League(boxes, cache, season, aliases, every, offline, log)
    state.refresh()
    if state.latest["error"]:
        log(f"league: {state.latest['error']}")
    state.start()
    app = create_app(state, allowed_hosts)
    print(f"League of {len(boxes)} boxes on http://{host}:{port}/ (every box restored every {every:g} s)",
          flush=True)
    config = uvicorn.Config(WSGIMiddleware(app, workers=4), host=host, port=port, log_level="warning",
                            lifespan="off")
    server = uvicorn.Server(config)
    try:
        server.run()
    finally:
        state.stop()
    return 0
