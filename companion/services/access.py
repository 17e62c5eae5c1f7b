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

from companion.base.digest import hash_secret
from companion.base.errors import InputError, NotFoundError
from companion.base.timeutil import parse_iso, to_iso

ROLES = ("viewer", "player", "organiser")
RANK = {r: i for i, r in enumerate(ROLES)}

PLAYER_SESSION_HOURS = 14 * 24
TABLE_SESSION_HOURS = 12  # a phone that joined by a table's QR code: player of that match only, this long at most
ORGANISER_SESSION_HOURS = 12
JOIN_TOKEN_HOURS = 12
PIN_ITERATIONS = 120_000  # PBKDF2-SHA256: a fraction of a second on a Pi Zero 2 W

PIN_MIN_DIGITS = 6  # new PINs; a shorter PIN stored before keeps working until it is changed
PIN_MAX_DIGITS = 12
RESET_CODE_MINUTES = 60  # a code from `companion pin reset` is valid this long, once

# Failed attempts (wrong PIN, wrong setup code, unknown join link) are limited per address only: an
# address may fail FAIL_FREE times, then waits BACKOFF_BASE_SECONDS after its next failure, twice as
# long after each further one, at most BACKOFF_MAX_SECONDS. Failures older than FAIL_MEMORY_SECONDS
# are forgotten; a success forgives the address. There is no overall limit: failures from other
# addresses never refuse the organiser's correct PIN, nor a valid join link.
FAIL_FREE = 5
BACKOFF_BASE_SECONDS = 60
BACKOFF_MAX_SECONDS = 60 * 60
FAIL_MEMORY_SECONDS = 24 * 3600


def backoff_seconds(failures: int) -> int:
    """How long an address waits after its last failure, having failed ``failures`` times."""
    if failures < FAIL_FREE:
        return 0
    return min(BACKOFF_BASE_SECONDS * 2 ** min(failures - FAIL_FREE, 30), BACKOFF_MAX_SECONDS)




SHORT_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"  # no 0/o, 1/l/i: read off a card


def session_hours(role: str, match_id: str | None = None) -> float:
    if role == "organiser":
        return ORGANISER_SESSION_HOURS
    return TABLE_SESSION_HOURS if match_id else PLAYER_SESSION_HOURS


def table_link_sessions(players: int) -> int:
    """How many live sessions one table's link makes at most: two phones a seat (a lost cookie, a second
    browser), and two more."""
    return 2 * players + 2


def _same_device(a: dict, b: dict) -> bool:
    return bool(a.get("address")) and a.get("address") == b.get("address")


def _confirmation(r: dict, phones: list[dict], seat_of: dict, rows: list[dict]) -> dict:
    """``seat_confirmations``' entry of the seated player phone ``r`` (``phones``: every player phone seated,
    ``seat_of`` them by key; ``rows``: the match's confirmations that count)."""
    others = {x["player"] for x in phones if x["player"] != r["player"]}
    needed = max(1, (len(others) + 1) // 2)
    mine = [c for c in rows if c["key"] == r["key"] and c["player"] == r["player"]]
    by_org = any(c["by_role"] == "organiser" for c in mine)
    peers = sorted({seat_of[c["by"]]["player"] for c in mine if c["by_role"] == "player"
                    and c["by"] in seat_of and seat_of[c["by"]]["player"] != r["player"]
                    and not _same_device(seat_of[c["by"]], r)})
    by = "organiser" if by_org else "players" if others and len(peers) >= needed else None
    return {"by": by, "players": peers, "needed": needed if others else None}


def role_in(session: dict, match_id: str | None) -> str:
    """The role a session holds for a request about ``match_id`` (None: about no match). A phone that joined
    by a table's QR code is a player of that match only, and only while it is open; anywhere else it is a
    viewer."""
    role = session["role"]
    scope = session.get("match_id")
    if role == "player" and scope is not None and (match_id != scope or session.get("match_status") != "open"):
        return "viewer"
    return role


def role_at_least(role: str, needed: str) -> bool:
    return RANK.get(role, 0) >= RANK[needed]


def check_pin_format(pin) -> str:
    if not isinstance(pin, str) or not pin.isascii() or not pin.isdigit() \
            or not PIN_MIN_DIGITS <= len(pin) <= PIN_MAX_DIGITS:
        raise InputError("the PIN must be {PIN_MIN_DIGITS} to {PIN_MAX_DIGITS} digits", "pin", PIN_MIN_DIGITS=PIN_MIN_DIGITS, PIN_MAX_DIGITS=PIN_MAX_DIGITS)
    return pin


def _pbkdf2(secret: str, salt: str, iterations: int) -> str:
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), bytes.fromhex(salt), iterations).hex()


# Writes (every POST, PUT, PATCH, DELETE) of a phone and of an address, as token buckets: a burst, then a
# steady rate; the bytes of their bodies the same way. So a phone that sends as fast as it can (an event and
# its undo, over and over) stores at most a few MB an hour, and cannot fill the box's card in an evening.
# Organisers, bearer tokens (scripts made on the box) and the box's own screen are not limited.
PHONE_WRITES = (60, 1.0)  # (burst, per second)
PHONE_BYTES = (256 * 1024, 2 * 1024)
ADDRESS_WRITES = (120, 2.0)
ADDRESS_BYTES = (512 * 1024, 4 * 1024)


class _Bucket:
    __slots__ = ("writes", "bytes", "at")

    def __init__(self, writes: float, nbytes: float, at: float):
        self.writes, self.bytes, self.at = writes, nbytes, at


class WriteRates:
    """Token buckets of writes and bytes per phone (its session) and per address (in memory: a restart
    forgets them)."""

    def __init__(self, clock, phone=(PHONE_WRITES, PHONE_BYTES), address=(ADDRESS_WRITES, ADDRESS_BYTES)):
        self.clock = clock
        self.kinds = {"session": phone, "address": address}
        self.buckets: dict[tuple[str, str], _Bucket] = {}

    def _seconds(self) -> float:
        return self.clock.now().timestamp()

    def _bucket(self, kind: str, key: str, now: float) -> _Bucket:
        (w_burst, w_rate), (b_burst, b_rate) = self.kinds[kind]
        b = self.buckets.get((kind, key))
        if b is None:
            if len(self.buckets) > 4096:
                self._forget_full(now)
            b = self.buckets[(kind, key)] = _Bucket(w_burst, b_burst, now)
        elif now > b.at:
            b.writes = min(w_burst, b.writes + (now - b.at) * w_rate)
            b.bytes = min(b_burst, b.bytes + (now - b.at) * b_rate)
            b.at = now
        return b

    def _forget_full(self, now: float) -> None:
        for (kind, key), b in list(self.buckets.items()):
            (w_burst, w_rate), (b_burst, b_rate) = self.kinds[kind]
            if b.writes + (now - b.at) * w_rate >= w_burst and b.bytes + (now - b.at) * b_rate >= b_burst:
                del self.buckets[(kind, key)]

    def charge(self, keys: list[tuple[str, str]], nbytes: int) -> tuple[int, str | None]:
        """One write of ``nbytes`` for each (kind, key) of ``keys`` ("session" or "address"): (0, None) when
        it may go, else (seconds to wait, the kind that is out). Nothing is taken from any bucket on a
        refusal."""
        now = self._seconds()
        wait, which = 0.0, None
        buckets = []
        for kind, key in keys:
            b = self._bucket(kind, key, now)
            (_, w_rate), (b_burst, b_rate) = self.kinds[kind]
            need = min(nbytes, b_burst)
            late = max((1 - b.writes) / w_rate if b.writes < 1 else 0.0,
                       (need - b.bytes) / b_rate if b.bytes < need else 0.0)
            if late > wait:
                wait, which = late, kind
            buckets.append((b, need))
        if which is not None:
            return max(1, int(wait + 0.999)), which
        for b, need in buckets:
            b.writes -= 1
            b.bytes -= need
        return 0, None


class Access:
    def __init__(self, store):
        self.store = store
        self.clock = store.clock
        self.write_rates = WriteRates(store.clock)

    def _now(self):
        return self.clock.now()

    def _later(self, hours: float) -> str:
        return to_iso(self._now() + timedelta(hours=hours))

    def _expired(self, expires_at: str | None) -> bool:
        return expires_at is not None and parse_iso(expires_at) <= self._now()

    # -- sessions ------------------------------------------------------------
    def create_session(self, role: str, data: dict | None = None, join_token: str | None = None,
                       match_id: str | None = None) -> str:
        """A new session; ``join_token``: the join link it was made from (ending the link ends it);
        ``match_id``: a player session limited to that match (a table's QR code), for 12 hours at most."""
        if role not in ("player", "organiser"):
            raise InputError("role must be player or organiser", "role")
        sid = secrets.token_urlsafe(32)
        hours = session_hours(role, match_id)
        # (sessions that ended long ago are forgotten on the way)
        self.store.insert_session(hash_secret(sid), role, self.clock.now_iso(), self._later(hours), data or {},
                                  purge_before=to_iso(self._now() - timedelta(days=1)),
                                  join_hash=hash_secret(join_token) if join_token else None,
                                  match_id=match_id if role == "player" else None)
        return sid

    def list_sessions(self) -> list[dict]:
        return self.store.session_rows(self.clock.now_iso())

    def end_session_by_id(self, session_id: str) -> None:
        if not isinstance(session_id, str) or len(session_id) != 12 or not self.store.delete_session_by_id(session_id):
            raise NotFoundError("no session {session_id}", "id", session_id=session_id)

    def session(self, sid: str | None) -> dict | None:
        if not sid or len(sid) > 200:
            return None
        row = self.store.session_row(hash_secret(sid))
        if row is None or self._expired(row["expires_at"]):
            return None
        return row

    def session_data(self, key: str) -> dict | None:
        """The data of a live session by its stored key (for long-lived streams that outlive the request)."""
        row = self.session_by_key(key)
        return row["data"] if row is not None else None

    def session_by_key(self, key: str) -> dict | None:
        """A live session by its stored key (a stream checks it again for every event)."""
        row = self.store.session_row(key)
        if row is None or self._expired(row["expires_at"]):
            return None
        return row

    def session_by_key_kept(self, key: str) -> dict | None | bool:
        """``session_by_key`` from the rows the store keeps, without a statement (a live stream's look for
        each event, on the event loop), or False when they cannot say (then ask ``session_by_key``)."""
        row = self.store.session_row_kept(key)
        if row is None:
            return False
        return None if self._expired(row["expires_at"]) else row

    def api_token_by_hash_kept(self, token_hash: str) -> dict | None | bool:
        """``api_token_by_hash`` from the rows the store keeps, or False when they cannot say."""
        row = self.store.api_token_row_kept(token_hash)
        if row is None:
            return False
        if row["revoked"] or self._expired(row["expires_at"]):
            return None
        return {"id": row["id"], "role": row["role"]}

    def api_token_by_hash(self, token_hash: str) -> dict | None:
        row = self.store.api_token_row(token_hash)
        if row is None or row["revoked"] or self._expired(row["expires_at"]):
            return None
        return {"id": row["id"], "role": row["role"]}

    # -- seats ---------------------------------------------------------------------
    def seats(self, match_id: str, now: str | None = None) -> list[dict]:
        """The phones seated in a match: ``{player, session, key, role, bound_at, expires_at}`` (live at ``now``,
        default: now)."""
        return self.store.seat_rows(match_id, now or self.clock.now_iso())

    def claim_seat(self, match_id: str, player: str, key: str, address: str | None = None) -> str | None:
        """A phone's own claim (None: it holds the seat now), else ``"taken"``, ``"seated:<player>"`` or
        ``"device:<player>"``: one seat per device (``address``, the phone's address when it joined; None
        for the box's own screen) in a match, however many sessions it made (docs/rulings.md#seats)."""
        return self.store.claim_seat(match_id, player, key, self.clock.now_iso(), address)

    def bind_seat(self, match_id: str, player: str, session_id: str, share: bool = False,
                  by_key: str | None = None) -> int:
        """An organiser gives ``player``'s seat to the phone of session ``session_id`` (its public id); the
        seat is confirmed by the organiser (``by_key``: the organiser's session, when one)."""
        key = self.store.session_key_by_id(session_id, self.clock.now_iso()) \
            if isinstance(session_id, str) and len(session_id) == 12 else None
        if key is None:
            raise NotFoundError("no live session {session_id}", "$.session", session_id=session_id)
        lost = self.store.bind_seat(match_id, player, key, self.clock.now_iso(), share)
        self.store.confirm_seat(match_id, player, by_key or "organiser", "organiser", self.clock.now_iso())
        return lost

    def confirm_seat(self, match_id: str, player: str, by_key: str, by_role: str) -> int:
        """``by_key`` (an organiser, or a phone seated at the table) confirms ``player``'s seat: the phones
        holding it are that player's. How many phones it confirmed."""
        return self.store.confirm_seat(match_id, player, by_key, by_role, self.clock.now_iso())

    def seat_confirmations(self, match_id: str, seats: list[dict] | None = None) -> dict:
        """{seat key: {"by": "organiser" | "players" | None, "players": [the seats that confirmed it],
        "needed": how many other seats must}} for every player phone seated in the match: confirmed by
        an organiser, or by at least half of the other seats held by players' phones (at least one), each
        from another device (docs/rulings.md#seats)."""
        now = self.clock.now_iso()
        seats = self.seats(match_id, now) if seats is None else seats
        phones = [r for r in seats if r["role"] == "player"]
        seat_of = {r["key"]: r for r in phones}
        rows = self.store.seat_confirmation_rows(match_id, now)
        return {r["key"]: _confirmation(r, phones, seat_of, rows) for r in phones}

    def seat_confirmed(self, match_id: str, key: str, player: str) -> dict | None:
        """The seat row of the player phone of session ``key`` holding ``player``'s seat in the match, when
        its seat is confirmed (``seat_confirmations``' ``by`` is not None), else None: what a write of that
        phone asks (its ``bound_at``), the other seats' confirmations left uncounted."""
        now = self.clock.now_iso()
        phones = [r for r in self.seats(match_id, now) if r["role"] == "player"]
        mine = next((r for r in phones if r["key"] == key and r["player"] == player), None)
        if mine is None:
            return None
        rows = self.store.seat_confirmation_rows(match_id, now)
        confirmed = _confirmation(mine, phones, {r["key"]: r for r in phones}, rows)["by"] is not None
        return mine if confirmed else None

    def table_link_full(self, token: str, players: int) -> bool:
        """Whether a table's link has made as many live sessions as it may (docs/rulings.md#seats)."""
        return self.store.sessions_of_join(hash_secret(token), self.clock.now_iso()) >= table_link_sessions(players)

    def sit(self, match_id: str, player: str, key: str) -> None:
        """An organiser's own phone sits as ``player`` (it takes the seat from no phone)."""
        self.store.bind_seat(match_id, player, key, self.clock.now_iso(), share=True)

    def free_seat(self, match_id: str, player: str) -> int:
        return self.store.free_seat(match_id, player)

    def leave_seat(self, match_id: str, key: str) -> None:
        self.store.leave_seat(match_id, key)

    def move_seats(self, old_key: str, new_key: str, match_id: str | None = None) -> None:
        self.store.move_seats(old_key, new_key, match_id)

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
        return self.api_token_by_hash(hash_secret(token))

    def list_api_tokens(self) -> list[dict]:
        return self.store.api_token_rows()

    def revoke_api_token(self, token_id: str) -> None:
        if not self.store.revoke_api_token(token_id):
            raise InputError("no token with id {token_id!r}", "ID", token_id=token_id)

    # -- join tokens (the table QR codes) ----------------------------------------
    def create_join_token(self, hours: float = JOIN_TOKEN_HOURS, match_id: str | None = None,
                          revoke_others: bool = False, short: bool = False) -> tuple[str, dict]:
        """A join link's token; ``short``: 12 letters and digits (about 60 bits, easy to type from a printed
        table card; wrong links are limited per address), else 192 bits. ``revoke_others``: the club's new
        link (``match_id`` None) ends the club's other links and signs out the phones made from them,
        leaving every table's link alone; a table's new link ends that table's other links (the phones
        already at the table stay)."""
        token = "".join(secrets.choice(SHORT_ALPHABET) for _ in range(12)) if short else secrets.token_urlsafe(24)
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

    def list_join_tokens(self) -> list[dict]:
        return self.store.join_token_rows(self.clock.now_iso())

    def revoke_join_token(self, link_id: str) -> int:
        """End one join link and every session made from it; how many sessions ended."""
        ended = self.store.revoke_join_token(link_id) if isinstance(link_id, str) and len(link_id) == 12 else None
        if ended is None:
            raise NotFoundError("no join link {link_id}", "id", link_id=link_id)
        return ended

    def join_token_alive(self, token: str | None) -> bool:
        return bool(token) and self.join_token(token) is not None

    # -- the links the screens show (the club's, each table's): the same after a restart -------------
    SHOWN = "web.join.shown"

    def shown_link(self, match_id: str | None = None) -> dict | None:
        """The join link the box showed last for the club (``match_id`` None) or a table, while it still works:
        a restart shows the same QR code and address as before (the printed one keeps matching), not a new
        link beside an old one that still works."""
        cur = (self.store.get_setting(self.SHOWN) or {}).get(match_id or "")
        if not isinstance(cur, dict) or not self.join_token_alive(cur.get("token")):
            return None
        return {"token": cur["token"], "expires_at": cur["expires_at"], "match_id": match_id}

    def remember_shown_link(self, match_id: str | None, token: str, info: dict) -> None:
        """The link the screens show from now on (the others that no longer work are forgotten)."""
        shown = {k: v for k, v in (self.store.get_setting(self.SHOWN) or {}).items()
                 if isinstance(v, dict) and self.join_token_alive(v.get("token"))}
        shown[match_id or ""] = {"token": token, "expires_at": info["expires_at"]}
        self.store.set_setting(self.SHOWN, shown)

    # -- the organiser PIN ---------------------------------------------------------
    def pin_is_set(self) -> bool:
        return self.store.get_setting("web.pin") is not None

    def set_pin(self, pin: str) -> None:
        check_pin_format(pin)
        salt = secrets.token_hex(16)
        self.store.set_setting("web.pin", {"salt": salt, "iterations": PIN_ITERATIONS,
                                           "hash": _pbkdf2(pin, salt, PIN_ITERATIONS)})

    def check_pin(self, pin) -> bool:
        stored = self.store.get_setting("web.pin")
        if stored is None or not isinstance(pin, str) or not pin.isascii() or len(pin) > 64:
            return False
        digest = _pbkdf2(pin, stored["salt"], int(stored["iterations"]))
        return hmac.compare_digest(digest, stored["hash"])

    # -- recovery: `companion pin reset` on the box itself ------------------------------------
    def create_reset_code(self, minutes: float = RESET_CODE_MINUTES) -> tuple[str, str]:
        """A one-time setup code (10 digits) with which the organiser sets a new PIN at /login; it takes
        access to the box's database to make one. Returns ``(code, expires_at)``; a new code replaces
        an older one."""
        code = "".join(secrets.choice("0123456789") for _ in range(10))
        salt = secrets.token_hex(16)
        expires = self._later(minutes / 60)
        self.store.set_setting("web.pin_reset", {"salt": salt, "iterations": PIN_ITERATIONS,
                                                 "hash": _pbkdf2(code, salt, PIN_ITERATIONS),
                                                 "expires_at": expires})
        return code, expires

    def reset_pending(self) -> bool:
        stored = self.store.get_setting("web.pin_reset")
        return stored is not None and not self._expired(stored["expires_at"])

    def check_reset_code(self, code) -> bool:
        stored = self.store.get_setting("web.pin_reset")
        if stored is None or self._expired(stored["expires_at"]) or not isinstance(code, str) \
                or not code.isascii() or len(code) > 64:
            return False
        return hmac.compare_digest(_pbkdf2(code, stored["salt"], int(stored["iterations"])), stored["hash"])

    def reset_pin(self, code: str, pin: str) -> bool:
        """Set a new PIN with a reset code: the code is used up and every organiser session ends."""
        check_pin_format(pin)
        if not self.check_reset_code(code):
            return False
        self.set_pin(pin)
        self.store.delete_setting("web.pin_reset")
        self.store.end_sessions_of_role("organiser")
        return True

    # -- rate limiting of failed attempts (per address, with backoff) ---------------------
    def locked_for(self, scope: str, client: str) -> int:
        """Seconds until this client (address) may try again (0: now)."""
        mine = self.store.failure_times(scope, to_iso(self._now() - timedelta(seconds=FAIL_MEMORY_SECONDS)), client)
        wait = backoff_seconds(len(mine))
        if not wait:
            return 0
        free_at = parse_iso(mine[-1]) + timedelta(seconds=wait)
        left = (free_at - self._now()).total_seconds()
        return max(1, int(left + 0.999)) if left > 0 else 0

    def record_failure(self, scope: str, client: str) -> None:
        self.store.add_failure(scope, client, self.clock.now_iso(),
                               purge_before=to_iso(self._now() - timedelta(seconds=FAIL_MEMORY_SECONDS)))

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

