"""The box's own Wi-Fi on the web: the organiser's switch (``/api/wifi``), the Wi-Fi QR code shown before the
table's code, and the answers to the phones' connectivity checks (docs/offline.md, "Phones that land by
themselves").

The connectivity checks come with the Host of the phone maker's server (``connectivitycheck.gstatic.com``,
``captive.apple.com``, ``www.msftconnecttest.com``, ``detectportal.firefox.com``: the hotspot's DNS sends those names to the box), so these
paths alone are answered whatever the Host (``PROBE_PATHS``; the gate lets them through), with fixed bodies
that carry nothing of the box: no cookie, no session, no match.
"""

from __future__ import annotations

import threading
import time

from flask import Blueprint, Response, jsonify, redirect, request

from companion.web.core import ctx, json_body, require

bp = Blueprint("wifi", __name__)

APPLE_SUCCESS = "<HTML><HEAD><TITLE>Success</TITLE></HEAD><BODY>Success</BODY></HTML>"
WINDOWS_REDIRECT = "/redirect"
# Firefox's two checks: its captive-portal detection (canonical.html) and its connectivity check (success.txt)
FIREFOX_CANONICAL = '<meta http-equiv="refresh" content="0;url=https://support.mozilla.org/kb/captive-portal"/>'
FIREFOX_SUCCESS = "success\n"
# path -> what it answers; every one a GET (or HEAD) with no state
PROBE_PATHS = {
    "/generate_204": "android", "/gen_204": "android",
    "/hotspot-detect.html": "apple", "/library/test/success.html": "apple",
    "/connecttest.txt": "windows", "/ncsi.txt": "windows", WINDOWS_REDIRECT: "windows-redirect",
    "/canonical.html": "firefox", "/success.txt": "firefox",
}
SWITCH_DELAY_S = 1.0  # the organiser's page gets its answer (the Wi-Fi's code) before the network changes


def hotspot():
    """The box's own Wi-Fi (the runtime's: ``companion/runtime.py``)."""
    return ctx().runtime.hotspot


def hotspot_on() -> bool:
    from companion.services.hotspot import is_on

    return is_on(hotspot())


def wifi_code() -> dict | None:
    """The Wi-Fi QR code (SVG, its text's SSID and password) while the box's own Wi-Fi is on, else None. Shown
    first, before the table's code, wherever a table's code is shown."""
    from companion.web.auth import qr_svg

    if not hotspot_on():
        return None
    h = hotspot()
    cfg = h.config()
    return {"ssid": cfg["ssid"], "password": cfg["password"], "svg": qr_svg(h.qr_text())}


# -- the organiser's switch -----------------------------------------------------------------------------
def _public_status(st: dict) -> dict:
    out = {k: v for k, v in st.items() if k not in ("reason_template", "reason_params")}
    if st.get("reason_template"):
        from flask import g

        from companion.web import i18n

        out["reason"] = i18n.error_text(g.get("lang", i18n.DEFAULT), st["reason_template"], st["reason_params"])
    return out


@bp.get("/api/wifi")
@require("organiser")
def wifi_status():
    h = hotspot()
    out = _public_status(h.status())
    switch = ctx().wifi_switch
    out["switching"] = switch is not None and switch["thread"].is_alive()
    out["last_error"] = (switch or {}).get("error")
    if h.is_on():
        cfg = h.config()
        out.update(ssid=cfg["ssid"], password=cfg["password"])
    return jsonify(out)


@bp.put("/api/wifi")
@require("organiser")
def wifi_switch():
    """``{"hotspot": true|false}``: the answer (with the Wi-Fi's name and password to join) comes first; the
    switch runs a second later, since turning the access point on takes the box off the venue's Wi-Fi (the
    organiser's phone joins the box's own by its code). Where NetworkManager or a Wi-Fi device is missing the
    answer is a 409 saying so, and nothing changes."""
    c = ctx()
    doc = json_body("api.wifi")
    h = hotspot()
    want = doc["hotspot"]
    from companion.base.errors import RuleError

    try:
        h._wifi_device()  # no NetworkManager, or no Wi-Fi device: said, nothing changes
    except RuleError as exc:
        raise exc.under("$.hotspot") from None
    cfg = h.config()

    def run():
        time.sleep(c.wifi_switch_delay)
        try:
            h.on() if want else h.off()
        except Exception as exc:  # said on the organiser's page (GET /api/wifi)
            switch["error"] = getattr(exc, "message", str(exc))

    switch = {"thread": threading.Thread(target=run, name="wifi-switch", daemon=True), "error": None}
    c.wifi_switch = switch
    switch["thread"].start()
    from companion.services.hotspot import ADDRESS

    out = {"hotspot": want, "switching": True, "ssid": cfg["ssid"], "address": ADDRESS}
    if want:
        out["password"] = cfg["password"]
    return jsonify(out), 202


# -- the phones' connectivity checks ---------------------------------------------------------------------
def _plain(body: str, status: int = 200, kind: str = "text/plain") -> Response:
    resp = Response(body, status=status, mimetype=kind)
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.route("/generate_204", methods=["GET", "HEAD"])
@bp.route("/gen_204", methods=["GET", "HEAD"])
def android_probe():
    """Android: 204, "this network works". Not a redirect: Android would take it for a sign-in portal and
    open its sign-in sheet, whose cookies are not the browser's."""
    resp = Response(status=204)
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.route("/hotspot-detect.html", methods=["GET", "HEAD"])
@bp.route("/library/test/success.html", methods=["GET", "HEAD"])
def apple_probe():
    """Apple: the Success page, so that no Captive Network Assistant sheet opens (it keeps no cookies and
    drops the connection when dismissed)."""
    return _plain(APPLE_SUCCESS, kind="text/html")


@bp.route("/connecttest.txt", methods=["GET", "HEAD"])
@bp.route("/ncsi.txt", methods=["GET", "HEAD"])
def windows_probe():
    """Windows: not the expected text, so Windows opens its real browser at /redirect, which sends it to the
    box's page."""
    return _plain("companion")


@bp.route("/canonical.html", methods=["GET", "HEAD"])
@bp.route("/success.txt", methods=["GET", "HEAD"])
def firefox_probe():
    """Firefox (any system): the answers it expects from a network that works, so that it shows no "log in to
    this network" bar."""
    if request.path == "/success.txt":
        return _plain(FIREFOX_SUCCESS)
    return _plain(FIREFOX_CANONICAL, kind="text/html")


@bp.route(WINDOWS_REDIRECT, methods=["GET", "HEAD"])
def windows_redirect():
    from companion.web.auth import public_base

    return redirect(public_base() + "/", code=302)


from companion.web import apidoc as _doc  # noqa: E402

OPENAPI_PATHS = {
    "/api/wifi": {
        "get": {"summary": "The box's own Wi-Fi: which network the box is on, phones on its hotspot (organiser)",
                "security": _doc.SECURITY,
                "responses": {"200": {"description": "OK"}, **_doc.err(401, 403)}},
        "put": {"summary": "Turn the box's own Wi-Fi on or off (organiser); the switch follows the answer",
                "security": _doc.SECURITY,
                "requestBody": _doc.body("api.wifi"),
                "responses": {"202": {"description": "switching: the Wi-Fi's name and password to join"},
                              **_doc.err(400, 401, 403, 409)}},
    },
}
