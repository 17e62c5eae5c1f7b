"""Who may do what: roles, sessions, bearer tokens, join tokens, the organiser PIN, rate limits.

No Flask here (the ``companion token`` command uses it too). Secrets are random
(``secrets``), only their SHA-256 is stored; the PIN is stored as PBKDF2 with a salt.
Time comes from the store's injectable clock, so tests move it by hand.

Roles, from the least to the most: ``viewer`` (no credentials: read-only, a club
may turn it off), ``player`` (joined through a table's QR code or a bearer
token), ``organiser`` (signed in with the PIN, or a bearer token).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta

from companion.errors import InputError
from companion.timeutil import parse_iso, to_iso

ROLES = ("viewer", "player", "organiser")
RANK = {r: i for i, r in enumerate(ROLES)}

PLAYER_SESSION_HOURS = 14 * 24
ORGANISER_SESSION_HOURS = 12
JOIN_TOKEN_HOURS = 12
PIN_ITERATIONS = 120_000  # PBKDF2-SHA256: a fraction of a second on a Pi Zero 2 W
SETUP_CODE_HOURS = 24  # a one-time setup code from ``companion pin reset`` (run on the box) lasts this long

# Failed sign-ins: at most FAIL_LIMIT per client and FAIL_GLOBAL_LIMIT overall per window.
FAIL_WINDOW_SECONDS = 15 * 60
FAIL_LIMIT = 5
FAIL_GLOBAL_LIMIT = 30


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def role_at_least(role: str, needed: str) -> bool:
    return RANK.get(role, 0) >= RANK[needed]


def check_pin_format(pin) -> str:
    if not isinstance(pin, str) or not pin.isascii() or not pin.isdigit() or not 4 <= len(pin) <= 12:
        raise InputError("the PIN must be 4 to 12 digits", "pin")
    return pin


class Access:
    def __init__(self, store):
        self.store = store
        self.clock = store.clock

    def _now(self):
        return self.clock.now()

    def _later(self, hours: float) -> str:
        return to_iso(self._now() + timedelta(hours=hours))

    def _expired(self, expires_at: str | None) -> bool:
        return expires_at is not None and parse_iso(expires_at) <= self._now()

    # -- sessions ------------------------------------------------------------
    def create_session(self, role: str, data: dict | None = None) -> str:
        if role not in ("player", "organiser"):
            raise InputError("role must be player or organiser", "role")
        sid = secrets.token_urlsafe(32)
        hours = ORGANISER_SESSION_HOURS if role == "organiser" else PLAYER_SESSION_HOURS
        # (sessions that ended long ago are forgotten on the way)
        self.store.insert_session(hash_secret(sid), role, self.clock.now_iso(), self._later(hours), data or {},
                                  purge_before=to_iso(self._now() - timedelta(days=1)))
        return sid

    def session(self, sid: str | None) -> dict | None:
        if not sid or len(sid) > 200:
            return None
        row = self.store.session_row(hash_secret(sid))
        if row is None or self._expired(row["expires_at"]):
            return None
        return row

    def session_data(self, key: str) -> dict | None:
        """The data of a live session by its stored key (for long-lived streams that outlive the request)."""
        row = self.store.session_row(key)
        if row is None or self._expired(row["expires_at"]):
            return None
        return row["data"]

    def set_session_data(self, key: str, data: dict) -> None:
        self.store.set_session_data(key, data)

    def end_session(self, key: str) -> None:
        self.store.delete_session(key)

    # -- bearer tokens -------------------------------------------------------
    def create_api_token(self, role: str, label: str = "", days: float | None = None) -> tuple[str, dict]:
        if role not in ("player", "organiser"):
            raise InputError("role must be player or organiser", "--role")
        if days is not None and not (0 < days <= 3650):
            raise InputError("must be between 0 and 3650 days", "--days")
        token = "cpn_" + secrets.token_urlsafe(32)
        h = hash_secret(token)
        info = {"id": h[:12], "role": role, "label": label, "created_at": self.clock.now_iso(),
                "expires_at": self._later(days * 24) if days else None}
        self.store.insert_api_token(info, h)
        return token, info

    def api_token(self, token: str) -> dict | None:
        if not token or len(token) > 200:
            return None
        row = self.store.api_token_row(hash_secret(token))
        if row is None or row["revoked"] or self._expired(row["expires_at"]):
            return None
        return {"id": row["id"], "role": row["role"]}

    def list_api_tokens(self) -> list[dict]:
        return self.store.api_token_rows()

    def revoke_api_token(self, token_id: str) -> None:
        if not self.store.revoke_api_token(token_id):
            raise InputError(f"no token with id {token_id!r}", "ID")

    # -- join tokens (the table QR codes) ----------------------------------------
    def create_join_token(self, hours: float = JOIN_TOKEN_HOURS, match_id: str | None = None,
                          revoke_others: bool = False) -> tuple[str, dict]:
        token = secrets.token_urlsafe(24)
        info = {"expires_at": self._later(hours), "match_id": match_id}
        self.store.insert_join_token(hash_secret(token), "player", match_id, self.clock.now_iso(),
                                     info["expires_at"], revoke_others)
        return token, info

    def join_token(self, token: str) -> dict | None:
        if not token or len(token) > 200:
            return None
        row = self.store.join_token_row(hash_secret(token))
        if row is None or row["revoked"] or self._expired(row["expires_at"]):
            return None
        return {"role": row["role"], "match_id": row["match_id"], "expires_at": row["expires_at"]}

    def join_token_alive(self, token: str | None) -> bool:
        return bool(token) and self.join_token(token) is not None

    # -- the organiser PIN ---------------------------------------------------------
    def pin_is_set(self) -> bool:
        return self.store.get_setting("web.pin") is not None

    def set_pin(self, pin: str) -> None:
        check_pin_format(pin)
        salt = secrets.token_hex(16)
        digest = hashlib.pbkdf2_hmac("sha256", pin.encode(), bytes.fromhex(salt), PIN_ITERATIONS).hex()
        self.store.set_setting("web.pin", {"salt": salt, "iterations": PIN_ITERATIONS, "hash": digest})
        self.store.set_setting("web.setup_code", None)  # a one-time setup code is used up by any new PIN

    def check_pin(self, pin) -> bool:
        stored = self.store.get_setting("web.pin")
        if stored is None or not isinstance(pin, str) or not pin.isascii() or len(pin) > 64:
            return False
        digest = hashlib.pbkdf2_hmac("sha256", pin.encode(), bytes.fromhex(stored["salt"]),
                                     int(stored["iterations"])).hex()
        return hmac.compare_digest(digest, stored["hash"])

    # -- one-time setup codes: ``companion pin reset``, run on the box (it needs the database file) ----
    def reset_pin(self, hours: float = SETUP_CODE_HOURS) -> dict:
        """Forget the PIN, sign out every organiser, and return a new one-time setup code (only its hash
        is stored) with which /login sets a new PIN. A newer code replaces an older one."""
        was_set = self.pin_is_set()
        code = "".join(secrets.choice("0123456789") for _ in range(8))
        expires_at = self._later(hours)
        self.store.set_setting("web.setup_code", {"hash": hash_secret(code), "expires_at": expires_at})
        if was_set:
            self.store.set_setting("web.pin", None)
            self.store.delete_sessions_of_role("organiser")
        return {"setup_code": code, "expires_at": expires_at, "pin_was_set": was_set}

    def check_setup_code(self, code) -> bool:
        """Whether ``code`` is the live one-time setup code of ``reset_pin``."""
        stored = self.store.get_setting("web.setup_code")
        if not stored or not isinstance(code, str) or len(code) > 64 or self._expired(stored.get("expires_at")):
            return False
        return hmac.compare_digest(hash_secret(code), stored["hash"])

    # -- rate limiting of failed attempts ------------------------------------------
    def _window_start(self) -> str:
        return to_iso(self._now() - timedelta(seconds=FAIL_WINDOW_SECONDS))

    def locked_for(self, scope: str, client: str) -> int:
        """Seconds until this client may try again (0: now)."""
        start = self._window_start()
        mine = self.store.failure_times(scope, start, client)
        every = self.store.failure_times(scope, start)
        waits = []
        if len(mine) >= FAIL_LIMIT:
            waits.append(mine[-FAIL_LIMIT])
        if len(every) >= FAIL_GLOBAL_LIMIT:
            waits.append(every[-FAIL_GLOBAL_LIMIT])
        if not waits:
            return 0
        free_at = max(parse_iso(a) for a in waits) + timedelta(seconds=FAIL_WINDOW_SECONDS)
        return max(1, int((free_at - self._now()).total_seconds() + 0.999))

    def record_failure(self, scope: str, client: str) -> None:
        self.store.add_failure(scope, client, self.clock.now_iso(),
                               purge_before=to_iso(self._now() - timedelta(seconds=2 * FAIL_WINDOW_SECONDS)))

    def clear_failures(self, scope: str, client: str) -> None:
        self.store.clear_failures(scope, client)

    # -- club settings of the web layer ----------------------------------------------
    def settings(self) -> dict:
        return {
            "viewers_allowed": bool(self.store.get_setting("web.viewers_allowed", True)),
            "join_token_hours": float(self.store.get_setting("web.join_token_hours", JOIN_TOKEN_HOURS)),
        }

    def update_settings(self, changes: dict) -> dict:
        for key in ("viewers_allowed", "join_token_hours"):
            if key in changes:
                self.store.set_setting(f"web.{key}", changes[key])
        return self.settings()

