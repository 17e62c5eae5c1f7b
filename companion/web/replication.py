"""``/api/replication`` (organiser): the state of the box's replication (docs/league.md), and the line the
organiser's home page shows about it. Read from the status file ``companion replicate`` keeps beside the
database: the server never talks to Litestream or the replica, so an unreachable replica costs it nothing."""

from __future__ import annotations

from datetime import datetime, timezone

from flask import Blueprint, jsonify

from companion.base import lazy
from companion.web import apidoc
from companion.web.core import ctx, require, role

replication = lazy.module("companion.services.replication")  # imported at the first request that needs it

bp = Blueprint("replication", __name__)


def current() -> dict:
    c = ctx()
    if str(c.store.path) == ":memory:":
        return replication.public_status(None, None)
    settings = replication.get_settings(c.store)
    return replication.public_status(settings, replication.read_status(c.store.path.parent))


@bp.get("/api/replication")
@require("organiser")
def api_replication():
    return jsonify(current())


LAG_WORTH_SAYING = 30  # seconds: below this the replica counts as up to date on the home page


@bp.app_context_processor
def _home_line():
    def replica_notice() -> dict | None:
        """For organisers, when replication is set: ``{"key", "target", "seconds", "when", "reason"}``."""
        if role() != "organiser":
            return None
        s = current()
        if not s["enabled"]:
            return None
        name = (s["target"] or {}).get("name") or ""
        when = ""
        if s["checked_at"]:
            when = datetime.fromtimestamp(s["checked_at"], timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        out = {"target": name, "seconds": int(round(s["lag_seconds"] or 0)), "when": when, "reason": "",
               "warn": True}
        if not s["running"]:
            out["key"] = "home.replica_stopped" if s["checked_at"] else "home.replica_never"
        elif s["error"]:
            out.update(key="home.replica_error", reason=s["error"][:300])
        elif (s["lag_seconds"] or 0) >= LAG_WORTH_SAYING:
            out["key"] = "home.replica_lag"
        else:
            out.update(key="home.replica_ok", warn=False)
        return out

    return {"replica_notice": replica_notice}


OPENAPI_SCHEMAS = {
    "Replication": {
        "type": "object",
        "required": ["enabled", "target", "running", "replicated_txid", "replicated_at", "local_txid",
                     "lag_seconds", "error", "checked_at"],
        "properties": {
            "enabled": {"type": "boolean", "description": "a replica target is set (companion replicate set)"},
            "target": {"type": ["object", "null"], "description": "the kind of target and its name, never a secret",
                       "properties": {"kind": {"enum": ["folder", "sftp", "s3", "unknown"]},
                                      "name": {"type": ["string", "null"]}}},
            "running": {"type": "boolean", "description": "companion replicate looked less than a minute ago"},
            "replicated_txid": {"type": ["integer", "null"], "description": "the newest transaction on the replica"},
            "replicated_at": {"type": ["number", "null"], "description": "when it got there (Unix time)"},
            "local_txid": {"type": ["integer", "null"], "description": "the newest transaction Litestream read here"},
            "lag_seconds": {"type": ["number", "null"],
                            "description": "how long the oldest transaction not on the replica has waited (0: level)"},
            "error": {"type": ["string", "null"]},
            "checked_at": {"type": ["number", "null"], "description": "the supervisor's last look (Unix time)"},
        },
    },
}
OPENAPI_PATHS = {
    "/api/replication": {"get": {
        "summary": "Replication of the database: enabled, target kind, replicated position, lag (organiser)",
        "security": apidoc.SECURITY, "responses": {"200": apidoc.ok("Replication"), **apidoc.err(401, 403)}}},
}
