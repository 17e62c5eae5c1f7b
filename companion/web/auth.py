"""Signing in: the organiser PIN (set at first run with the setup code the server prints), join
links behind the table QR codes (exchanged for a player session, then a redirect so the token
leaves the address bar), sign-out, and the club's access settings."""

from __future__ import annotations

import functools
import hmac
import io

from flask import Blueprint, g, jsonify, make_response, redirect, render_template, request

from companion.base.errors import AuthError, CompanionError, InputError, NotFoundError, RuleError
from companion.services.access import hash_secret, role_in, session_hours
from companion.web.core import ctx, json_body, require, role
from companion.web.shares import is_loopback
from companion.web.streams import publish_seats

bp = Blueprint("auth", __name__)
COOKIE = "companion_sid"


class TooManyAttempts(CompanionError):
    status = 429

    def __init__(self, seconds: int, field: str):
        super().__init__("too many failed attempts: try again in {seconds} s", field, seconds=seconds)
        self.retry_after = seconds


def client_address() -> str:
    return request.remote_addr or "?"


def _set_session(resp, new_role: str, join_token: str | None = None, match_id: str | None = None):
    c = ctx()
    old = g.get("session")
    data = device_data(old["data"] if old is not None else {})
    sid = c.access.create_session(new_role, data, join_token=join_token, match_id=match_id)
    if old is not None:  # the phone keeps its seats (of the table it joins, when it joins one)
        c.access.move_seats(old["key"], hash_secret(sid), match_id)
        c.access.end_session(old["key"])
    hours = session_hours(new_role, match_id)
    resp.set_cookie(COOKIE, sid, max_age=int(hours * 3600), httponly=True, samesite="Lax", path="/")
    g.session_set = True
    return resp


def device_data(data: dict) -> dict:
    """A new session's data with this phone's device in words ("Android · Chrome"; never the whole header)."""
    from companion.web.useragent import device_family

    device = device_family(request.headers.get("User-Agent"))
    out = {k: v for k, v in data.items() if k not in ("device", "address")}
    if device:
        out["device"] = device
    address = client_address()
    if address != "?" and not is_loopback(address):  # one seat per device at a table (docs/rulings.md#seats)
        out["address"] = address
    return out


def _check_lock(scope: str, field: str):
    wait = ctx().access.locked_for(scope, client_address())
    if wait:
        raise TooManyAttempts(wait, field)


@bp.get("/api/auth/me")
def me():
    c = ctx()
    sess = g.get("session")
    out = {}
    if role() == "organiser" and c.box_time is not None:
        out["box_time"] = c.box_time.notice()
    # a table's phone: a player of its match while that match is open, a viewer once it ended (access.role_in)
    held = role_in(sess, sess.get("match_id")) if sess else role()
    return jsonify({**out, "role": held, "via": g.get("via"), "pin_set": c.access.pin_is_set(),
                    "seats": (sess["data"].get("seats") or {}) if sess else {},
                    "match_id": sess.get("match_id") if sess else None,
                    "viewers_allowed": c.access.settings()["viewers_allowed"]})


@bp.post("/api/auth/login")
def login():
    c = ctx()
    doc = json_body("api.login")
    _check_lock("pin", "$.pin")
    if not c.access.pin_is_set():
        raise RuleError("no organiser PIN yet: set one first (the server printed the setup code)", "$.pin")
    if not c.access.check_pin(doc["pin"]):
        c.access.record_failure("pin", client_address())
        raise AuthError("wrong PIN", "$.pin")
    c.access.clear_failures("pin", client_address())
    return _set_session(make_response(jsonify({"role": "organiser", "time": offer_time(doc.get("now"))})),
                        "organiser")


def offer_time(phone_time) -> dict | None:
    """An organiser's phone's time, adopted by the box when its own clock has no source (companion/boxtime.py)."""
    box_time = ctx().box_time
    if box_time is None or phone_time is None:
        return None
    return box_time.offer(phone_time)


@bp.post("/api/box/time")
@require("organiser")
def box_time():
    """``{"now"}``: an organiser's phone's time (its pages send it when the box says its clock has no
    source); the box adopts it when it is more than 2 minutes away. Answers what the box did."""
    doc = json_body("api.box-time")
    adopted = offer_time(doc["now"])
    bt = ctx().box_time
    return jsonify({"adopted": adopted, **(bt.notice() if bt is not None else {"synchronised": None})})


@bp.post("/api/auth/pin")
def set_pin():
    """First run: set the PIN with the setup code. Later: an organiser changes it with the current PIN, or
    anyone with a one-time code from `companion pin reset` (run on the box itself) sets a new one."""
    c = ctx()
    doc = json_body("api.pin-set")
    code = doc.get("setup_code")
    resetting = code is not None and c.access.reset_pending()
    _check_lock("pin", "$.setup_code" if not c.access.pin_is_set() or resetting else "$.current_pin")
    if resetting:
        if not c.access.reset_pin(code, doc["pin"]):
            if c.access.pin_is_set() or not hmac.compare_digest(str(code).encode(), c.runtime.setup_code.encode()):
                c.access.record_failure("pin", client_address())
                raise AuthError("wrong setup code", "$.setup_code")
            c.access.set_pin(doc["pin"])  # first run: the code the server printed
    elif not c.access.pin_is_set():
        if code is None:
            raise InputError("the setup code printed by `companion serve` (or `companion pin reset`) is required "
                             "at first run", "$.setup_code")
        if not hmac.compare_digest(str(code).encode(), c.runtime.setup_code.encode()):
            c.access.record_failure("pin", client_address())
            raise AuthError("wrong setup code", "$.setup_code")
    else:
        if role() != "organiser":
            raise AuthError("only an organiser may change the PIN", "Authorization")
        if not c.access.check_pin(doc.get("current_pin")):
            c.access.record_failure("pin", client_address())
            raise AuthError("wrong current PIN", "$.current_pin")
    if not resetting:
        c.access.set_pin(doc["pin"])
    c.access.clear_failures("pin", client_address())
    resp = make_response(jsonify({"role": "organiser", "pin_set": True}))
    if g.get("via") == "bearer":
        return resp
    if resetting and g.get("session") is not None and g.session["role"] == "organiser":
        g.session = None  # ended with every organiser session
    return _set_session(resp, "organiser")


@bp.post("/api/auth/logout")
def logout():
    c = ctx()
    sess = g.get("session")
    if sess is not None:
        c.access.end_session(sess["key"])
        for match_id in sess["data"].get("seats") or {}:  # its seats are free again: the tables' phones see it
            publish_seats(c, match_id)
    resp = make_response(jsonify({"role": "viewer"}))
    resp.delete_cookie(COOKIE, path="/")
    return resp


# -- join links -------------------------------------------------------------------
def public_base() -> str:
    """The base URL phones use: the configured LAN URL, else the address this request came to."""
    base = ctx().runtime.public_url
    base = base.rstrip("/") if base else request.host_url.rstrip("/")
    from companion.services.hotspot import hotspot_base, is_on

    if is_on(ctx().runtime.hotspot):  # on the box's own Wi-Fi: its fixed address (phones there know no other)
        return hotspot_base(base)
    return base


def current_join(base: str | None = None) -> dict:
    """The join link the server shows now (created when missing or expired): ``context.current_join``."""
    from companion.web.context import current_join as shown

    return shown(ctx(), base or public_base())


@functools.lru_cache(maxsize=64)
def qr_svg(text: str) -> str:
    """The QR code of ``text`` as SVG. Drawn once per text and kept (the last 64): a table's code is on every
    page view of its match (each seated phone's, the TV's), and drawing it cost about 80% of such a view's
    CPU (8 ms here, a tenth of a second on a Pi). A new link is a new text, drawn at its first page."""
    import qrcode
    import qrcode.image.svg

    img = qrcode.make(text, image_factory=qrcode.image.svg.SvgPathImage, border=2)
    buf = io.BytesIO()
    img.save(buf)
    svg = buf.getvalue().decode("utf-8")
    return svg[svg.index("<svg"):] if "<svg" in svg else svg


def may_show_join() -> bool:
    """Organisers, or the Pi's own screen (a kiosk browser on localhost)."""
    return role() == "organiser" or client_address() in ("127.0.0.1", "::1")


@bp.get("/api/auth/join")
def join_link():
    if not may_show_join():
        raise AuthError("only an organiser may show the join code", "Authorization")
    return jsonify(current_join())


@bp.post("/api/auth/join-tokens")
@require("organiser")
def new_join_token():
    c = ctx()
    doc = json_body("api.join-token-create", optional=True)
    match_id = doc.get("match_id")
    if match_id is not None:
        try:
            c.store.get_match(match_id)
        except NotFoundError:
            raise NotFoundError("no match {match_id}", "$.match_id", match_id=match_id) from None
    hours = doc.get("hours", c.access.settings()["join_token_hours"])
    token, info = c.access.create_join_token(hours, match_id=match_id, revoke_others=doc.get("revoke_others", False),
                                             short=match_id is not None)
    if match_id is None:
        with c.join_lock:
            c.join = {"token": token, **info}
            c.access.remember_shown_link(None, token, info)
    else:  # the match's table QR code shows the new link
        with c.join_lock:
            c.table_links[match_id] = {"token": token, **info}
            c.access.remember_shown_link(match_id, token, info)
    return jsonify({"url": f"{public_base()}/j/{token}", "expires_at": info["expires_at"],
                    "match_id": match_id}), 201


@bp.get("/j/<token>")
def join_landing(token):
    """Exchange a join token for a player session, then redirect (the token leaves the URL).

    Join tokens are 192-bit random, so guessing is hopeless: wrong links are limited per address only to
    spare the box, and a valid link is never refused, whatever the address did before."""
    c = ctx()
    info = c.access.join_token(token)
    if info is None:
        wait = c.access.locked_for("join", client_address())
        if wait:
            return _join_error(429, "join.locked", wait)
        c.access.record_failure("join", client_address())
        return _join_error(404, "join.expired", 0)
    match_id = info.get("match_id")
    # a table's link: that match, where the page asks "Who are you?"; the club's link: pick a table
    resp = redirect(f"/m/{match_id}" if match_id else "/pick", code=303)
    resp.headers["Referrer-Policy"] = "no-referrer"
    resp.headers["Cache-Control"] = "no-store"
    sess = g.get("session")
    if role() == "organiser" or (sess is not None and sess["role"] == "organiser"):
        return resp  # never downgrade an organiser who scans a table code
    if match_id is None:
        wait = _new_session_wait()
        if wait:
            return _join_error(429, "join.busy", wait)
        return _set_session(resp, "player", join_token=token)
    try:
        if c.store.get_match(match_id)["status"] != "open":
            return resp  # the match is over: its page shows the result, no seat to take
    except NotFoundError:
        return _join_error(404, "join.expired", 0)
    if sess is not None and sess["role"] == "player" and sess.get("match_id") in (None, match_id):
        return resp  # already a player here (this table's phone, or a club-wide one): it keeps its session
    if c.access.table_link_full(token, len(c.store.get_match(match_id)["players"])):
        return _join_error(403, "join.full", 0)  # a guest re-joining without a cookie, over and over
    wait = _new_session_wait()
    if wait:
        return _join_error(429, "join.busy", wait)
    return _set_session(resp, "player", join_token=token, match_id=match_id)


def _new_session_wait() -> int:
    """A new session is a write of the address (a guest scanning the club's code over and over, with no
    cookie, would fill the sessions' table): seconds to wait, 0 to go on."""
    address = client_address()
    if is_loopback(address):
        return 0
    wait, _ = ctx().access.write_rates.charge([("address", address)], 0)
    return wait


@bp.get("/api/auth/join-tokens")
@require("organiser")
def list_join_tokens():
    return jsonify({"join_links": ctx().access.list_join_tokens()})


@bp.delete("/api/auth/join-tokens/<link_id>")
@require("organiser")
def revoke_join_token(link_id):
    """End a join link and every session made from it."""
    c = ctx()
    ended = c.access.revoke_join_token(link_id)
    with c.join_lock:
        cur = c.join
        if cur is not None and not c.access.join_token_alive(cur["token"]):
            c.join = None  # the screens show a new link
    return jsonify({"revoked": link_id, "sessions_ended": ended})


# -- sessions ---------------------------------------------------------------------------
@bp.get("/api/auth/sessions")
@require("organiser")
def list_sessions():
    """The live sessions (players and organisers; bearer tokens are `companion token list`)."""
    mine = g.get("session")
    out = []
    for s in ctx().access.list_sessions():
        key = s.pop("key")
        s["current"] = mine is not None and mine["key"] == key
        out.append(s)
    return jsonify({"sessions": out})


@bp.delete("/api/auth/sessions/<session_id>")
@require("organiser")
def end_session(session_id):
    c = ctx()
    held = [m for s in c.access.list_sessions() if s["id"] == session_id for m in s["seats"]]
    c.access.end_session_by_id(session_id)
    for match_id in held:  # its seats are free again: the tables' phones see it
        publish_seats(c, match_id)
    return jsonify({"ended": session_id})


def _join_error(status: int, key: str, wait: int):
    resp = make_response(render_template("join_error.html", key=key, wait=wait), status)
    resp.headers["Referrer-Policy"] = "no-referrer"
    resp.headers["Cache-Control"] = "no-store"
    if wait:
        resp.headers["Retry-After"] = str(wait)
    return resp


# -- access settings ------------------------------------------------------------------
@bp.get("/api/auth/settings")
@require("organiser")
def get_settings():
    return jsonify(ctx().access.settings())


@bp.put("/api/auth/settings")
@require("organiser")
def put_settings():
    doc = json_body("api.access-settings")
    return jsonify(ctx().access.update_settings(doc))


from companion.web import apidoc as _doc  # noqa: E402

OPENAPI_PATHS = {
    "/api/box/time": {"post": {
        "summary": "An organiser's phone's time: adopted when the box's clock has no source and is more than 2 "
                   "minutes away (docs/offline.md)",
        "security": _doc.SECURITY,
        "requestBody": _doc.body("api.box-time"),
        "responses": {"200": {"description": "what the box did: adopted (from, to, shift_s) or null, "
                                             "synchronised"}, **_doc.err(400, 401, 403)}}},
}
