"""Sign-in rows (migrations 0002, 0005, 0007): browser sessions, bearer tokens, join tokens, failed attempts,
the seats phones hold in matches.

Secrets are never stored: only their SHA-256 (tokens are 256-bit random, so a plain hash is enough).
The rules (who may do what, expiry, rate limits) are ``companion.services.access``; this is only where they live.
"""

from __future__ import annotations

import json

from companion.base.errors import NotFoundError


# the phone's device in words ("Android · Chrome", companion/web/useragent.py), kept in the session's data
_DEVICE = "CASE WHEN json_valid(s.data) THEN json_extract(s.data, '$.device') END"


class AccessRows:
    # -- sessions ------------------------------------------------------------
    def insert_session(self, sid_hash: str, role: str, created_at: str, expires_at: str, data: dict,
                       purge_before: str, join_hash: str | None = None, match_id: str | None = None) -> None:
        data = {k: v for k, v in data.items() if k != "seats"}  # seats are rows of their own
        with self.write() as c:
            c.execute("INSERT INTO web_sessions(sid_hash, role, created_at, expires_at, data, join_hash, match_id) "
                      "VALUES (?,?,?,?,?,?,?)",
                      (sid_hash, role, created_at, expires_at, json.dumps(data), join_hash, match_id))
            c.execute("DELETE FROM web_sessions WHERE expires_at < ?", (purge_before,))
            c.execute("DELETE FROM seats WHERE sid_hash NOT IN (SELECT sid_hash FROM web_sessions)")
            c.execute("DELETE FROM seat_confirmations WHERE sid_hash NOT IN (SELECT sid_hash FROM web_sessions) "
                      "OR (by_role='player' AND by_hash NOT IN (SELECT sid_hash FROM web_sessions))")

    def _seats_of(self, sid_hash: str) -> dict:
        return {r[0]: r[1] for r in self.conn().execute(
            "SELECT match_id, player FROM seats WHERE sid_hash=? ORDER BY bound_at", (sid_hash,))}

    def session_rows(self, now: str) -> list[dict]:
        """Live sessions, oldest first (public id: the first 12 hex digits of the stored hash)."""
        rows = self.conn().execute(
            "SELECT s.sid_hash, s.role, s.created_at, s.expires_at, s.join_hash, s.match_id, "
            + _DEVICE + " AS device, p.name AS me_name FROM web_sessions s "
            "LEFT JOIN players p ON json_valid(s.data) AND p.id = json_extract(s.data, '$.me') "
            "WHERE s.expires_at > ? ORDER BY s.created_at, s.sid_hash", (now,)).fetchall()
        return [{"id": r["sid_hash"][:12], "key": r["sid_hash"], "role": r["role"], "created_at": r["created_at"],
                 "expires_at": r["expires_at"], "seats": self._seats_of(r["sid_hash"]),
                 "match_id": r["match_id"], "device": r["device"], "player": r["me_name"],
                 "join_link": r["join_hash"][:12] if r["join_hash"] else None} for r in rows]

    def delete_session_by_id(self, public_id: str) -> bool:
        with self.write() as c:
            return c.execute("DELETE FROM web_sessions WHERE substr(sid_hash, 1, 12)=?",
                             (public_id,)).rowcount > 0

    def end_sessions_of_role(self, role: str) -> int:
        with self.write() as c:
            return c.execute("DELETE FROM web_sessions WHERE role=?", (role,)).rowcount

    def session_row(self, sid_hash: str) -> dict | None:
        """A session with its seats (``data["seats"]``: {match id: player}) and, for a phone that joined by a
        table's QR code, the match it is limited to (``match_id``) and that match's ``match_status``. Kept
        until a write that may change a session or a seat (``Database.SESSION_KINDS``); its expiry is the
        caller's to check, as before; the match's status is the match's kept row."""
        kept = self.cached("session", sid_hash, lambda c: self._session_kept(c, sid_hash))
        if kept is None:
            return None
        status = None
        if kept[4] is not None:
            try:
                status = self._match_kept(kept[4])[5]
            except NotFoundError:  # (a match that is not there: no status, as the join had none)
                status = None
        return self._session_of(kept, status)

    def session_row_kept(self, sid_hash: str) -> dict | None:
        """``session_row`` from the kept rows alone (``Database.kept``: no statement, no lock), or None when
        a row it needs is not kept (then ``session_row`` reads it)."""
        kept = self.kept("session", sid_hash)
        if kept is None:
            return None
        status = None
        if kept[4] is not None:
            match = self.kept("match", kept[4])
            if match is None:
                return None
            status = match[5]
        return self._session_of(kept, status)

    @staticmethod
    def _session_of(kept: tuple, status) -> dict:
        key, role, expires_at, data, match_id, seats = kept
        data = json.loads(data)
        data["seats"] = dict(seats)
        return {"key": key, "role": role, "expires_at": expires_at, "data": data, "match_id": match_id,
                "match_status": status}

    @staticmethod
    def _session_kept(c, sid_hash: str) -> tuple | None:
        row = c.execute("SELECT sid_hash, role, expires_at, data, match_id FROM web_sessions WHERE sid_hash=?",
                        (sid_hash,)).fetchone()
        if row is None:
            return None
        seats = tuple((r[0], r[1]) for r in c.execute(
            "SELECT match_id, player FROM seats WHERE sid_hash=? ORDER BY bound_at", (sid_hash,)))
        return (row["sid_hash"], row["role"], row["expires_at"], row["data"], row["match_id"], seats)

    def set_session_data(self, key: str, data: dict) -> None:
        data = {k: v for k, v in data.items() if k != "seats"}
        with self.write() as c:
            c.execute("UPDATE web_sessions SET data=? WHERE sid_hash=?", (json.dumps(data), key))

    # -- seats ---------------------------------------------------------------
    def seat_rows(self, match_id: str, now: str) -> list[dict]:
        """The phones seated in a match (live sessions only), by seat then oldest first. The match's seats are
        kept until a write that may change a session or a seat; the live ones are chosen at each call."""
        kept = self.cached("seats", match_id, lambda c: (tuple(tuple(r) for r in c.execute(
            "SELECT t.player, t.sid_hash, t.bound_at, s.role, s.expires_at, s.created_at, " + _DEVICE + " AS device, "
            "CASE WHEN json_valid(s.data) THEN json_extract(s.data, '$.address') END AS address "
            "FROM seats t JOIN web_sessions s ON s.sid_hash = t.sid_hash WHERE t.match_id=? "
            "ORDER BY t.player, t.bound_at, t.sid_hash", (match_id,))),))[0]
        return [{"player": player, "session": key[:12], "key": key, "role": role, "bound_at": bound_at,
                 "expires_at": expires_at, "joined_at": created_at, "device": device, "address": address}
                for player, key, bound_at, role, expires_at, created_at, device, address in kept
                if expires_at > now]

    def claim_seat(self, match_id: str, player: str, key: str, now: str, address: str | None = None) -> str | None:
        """A phone's own claim of a seat, checked and written in one transaction: None when it now holds it
        (or held it already), else why not: ``"taken"`` (another live player session holds it),
        ``"seated:<player>"`` (this phone sits as another player of the match) or ``"device:<player>"``
        (another live session of the same device, its ``address``, sits as a player of the match)."""
        with self.write() as c:
            mine = c.execute("SELECT player FROM seats WHERE match_id=? AND sid_hash=?", (match_id, key)).fetchone()
            if mine is not None:
                return None if mine[0] == player else f"seated:{mine[0]}"
            if address is not None:
                same = c.execute(
                    "SELECT t.player FROM seats t JOIN web_sessions s ON s.sid_hash = t.sid_hash WHERE t.match_id=? "
                    "AND t.sid_hash<>? AND s.role='player' AND s.expires_at > ? AND json_valid(s.data) "
                    "AND json_extract(s.data, '$.address')=?", (match_id, key, now, address)).fetchone()
                if same is not None:
                    return f"device:{same[0]}"
            taken = c.execute(
                "SELECT 1 FROM seats t JOIN web_sessions s ON s.sid_hash = t.sid_hash WHERE t.match_id=? "
                "AND t.player=? AND s.role='player' AND s.expires_at > ?", (match_id, player, now)).fetchone()
            if taken is not None:
                return "taken"
            c.execute("INSERT INTO seats(match_id, player, sid_hash, bound_at) VALUES (?,?,?,?)",
                      (match_id, player, key, now))
            return None

    def bind_seat(self, match_id: str, player: str, key: str, now: str, share: bool) -> int:
        """An organiser gives a seat to a phone (its former seat in the match is released); unless ``share``,
        the phones that held the seat lose it: how many did."""
        with self.write() as c:
            c.execute("DELETE FROM seats WHERE match_id=? AND sid_hash=?", (match_id, key))
            lost = 0 if share else c.execute("DELETE FROM seats WHERE match_id=? AND player=?",
                                             (match_id, player)).rowcount
            c.execute("INSERT INTO seats(match_id, player, sid_hash, bound_at) VALUES (?,?,?,?)",
                      (match_id, player, key, now))
            return lost

    def confirm_seat(self, match_id: str, player: str, by_key: str, by_role: str, now: str) -> int:
        """``by_key``'s session confirms that the player phones holding ``player``'s seat are that player's
        (an organiser's confirmation, or another seated phone's): how many phones it confirmed."""
        with self.write() as c:
            return c.execute(
                "INSERT OR IGNORE INTO seat_confirmations(match_id, sid_hash, player, by_hash, by_role, at) "
                "SELECT t.match_id, t.sid_hash, t.player, ?, ?, ? FROM seats t JOIN web_sessions s "
                "ON s.sid_hash = t.sid_hash WHERE t.match_id=? AND t.player=? AND t.sid_hash<>? AND s.role='player' "
                "AND s.expires_at > ?", (by_key, by_role, now, match_id, player, by_key, now)).rowcount

    def seat_confirmation_rows(self, match_id: str, now: str) -> list[dict]:
        """The confirmations that count: of a phone still in the seat confirmed (its session live), by an
        organiser or by a phone whose session is live."""
        kept = self.cached("confirm", match_id, lambda c: (tuple(tuple(r) for r in c.execute(
            "SELECT c.sid_hash, c.player, c.by_hash, c.by_role, c.at, s.expires_at, b.expires_at "
            "FROM seat_confirmations c "
            "JOIN seats t ON t.match_id = c.match_id AND t.sid_hash = c.sid_hash AND t.player = c.player "
            "JOIN web_sessions s ON s.sid_hash = c.sid_hash LEFT JOIN web_sessions b ON b.sid_hash = c.by_hash "
            "WHERE c.match_id=? ORDER BY c.at", (match_id,))),))[0]
        # (kept until a write that may change a session, a seat or a confirmation; the live ones chosen now)
        return [{"key": key, "player": player, "by": by, "by_role": by_role, "at": at}
                for key, player, by, by_role, at, expires, by_expires in kept
                if expires > now and (by_role == "organiser" or (by_expires is not None and by_expires > now))]

    def sessions_of_join(self, join_hash: str, now: str) -> int:
        """How many live sessions a join link made."""
        return self.conn().execute("SELECT COUNT(*) FROM web_sessions WHERE join_hash=? AND expires_at > ?",
                                   (join_hash, now)).fetchone()[0]

    def free_seat(self, match_id: str, player: str) -> int:
        with self.write() as c:
            return c.execute("DELETE FROM seats WHERE match_id=? AND player=?", (match_id, player)).rowcount

    def leave_seat(self, match_id: str, key: str) -> None:
        with self.write() as c:
            c.execute("DELETE FROM seats WHERE match_id=? AND sid_hash=?", (match_id, key))

    def move_seats(self, old_key: str, new_key: str, match_id: str | None = None) -> None:
        """A phone's new session keeps its seats (of ``match_id`` only, when given)."""
        with self.write() as c:
            if match_id is None:
                c.execute("UPDATE OR IGNORE seats SET sid_hash=? WHERE sid_hash=?", (new_key, old_key))
            else:
                c.execute("UPDATE OR IGNORE seats SET sid_hash=? WHERE sid_hash=? AND match_id=?",
                          (new_key, old_key, match_id))

    def session_key_by_id(self, public_id: str, now: str) -> str | None:
        row = self.conn().execute("SELECT sid_hash FROM web_sessions WHERE substr(sid_hash, 1, 12)=? "
                                  "AND expires_at > ?", (public_id, now)).fetchone()
        return row[0] if row is not None else None

    def delete_session(self, key: str) -> None:
        with self.write() as c:
            c.execute("DELETE FROM web_sessions WHERE sid_hash=?", (key,))

    def delete_sessions_of_role(self, role: str) -> None:
        with self.write() as c:
            c.execute("DELETE FROM web_sessions WHERE role=?", (role,))

    # -- bearer tokens -------------------------------------------------------
    def insert_api_token(self, info: dict, token_hash: str) -> None:
        with self.write() as c:
            c.execute("INSERT INTO api_tokens(id, token_hash, role, label, created_at, expires_at) VALUES (?,?,?,?,?,?)",
                      (info["id"], token_hash, info["role"], info["label"], info["created_at"], info["expires_at"]))

    def api_token_row(self, token_hash: str) -> dict | None:
        row = self.cached("token", token_hash, lambda c: c.execute(
            "SELECT id, role, expires_at, revoked FROM api_tokens WHERE token_hash=?", (token_hash,)).fetchone())
        return dict(row) if row is not None else None

    def api_token_row_kept(self, token_hash: str) -> dict | None:
        """``api_token_row`` from the kept rows alone (``Database.kept``), or None when it is not kept."""
        row = self.kept("token", token_hash)
        return dict(row) if row is not None else None

    def api_token_rows(self) -> list[dict]:
        rows = self.conn().execute(
            "SELECT id, role, label, created_at, expires_at, revoked FROM api_tokens ORDER BY created_at, id")
        return [{"id": r["id"], "role": r["role"], "label": r["label"], "created_at": r["created_at"],
                 "expires_at": r["expires_at"], "revoked": bool(r["revoked"])} for r in rows]

    def revoke_api_token(self, token_id: str) -> bool:
        with self.write() as c:
            self.forget("token")  # (kept by their hash: every one)
            return c.execute("UPDATE api_tokens SET revoked=1 WHERE id=?", (token_id,)).rowcount > 0

    # -- join tokens ---------------------------------------------------------
    def insert_join_token(self, token_hash: str, role: str, match_id: str | None, created_at: str,
                          expires_at: str, revoke_others: bool) -> None:
        with self.write() as c:
            if revoke_others and match_id is None:
                # the club's links end (and the sessions made from them); the tables' links stay
                c.execute("DELETE FROM web_sessions WHERE join_hash IN "
                          "(SELECT token_hash FROM join_tokens WHERE match_id IS NULL)")
                c.execute("UPDATE join_tokens SET revoked=1 WHERE revoked=0 AND match_id IS NULL")
            elif revoke_others:  # that table's other links end; the phones already at the table stay
                c.execute("UPDATE join_tokens SET revoked=1 WHERE revoked=0 AND match_id=?", (match_id,))
            c.execute("DELETE FROM join_tokens WHERE expires_at < ?", (created_at,))
            c.execute("INSERT INTO join_tokens(token_hash, role, match_id, created_at, expires_at) VALUES (?,?,?,?,?)",
                      (token_hash, role, match_id, created_at, expires_at))

    def join_token_row(self, token_hash: str) -> dict | None:
        row = self.conn().execute(
            "SELECT role, match_id, expires_at, revoked FROM join_tokens WHERE token_hash=?", (token_hash,)
        ).fetchone()
        return dict(row) if row is not None else None

    def join_token_rows(self, now: str) -> list[dict]:
        """Join links not yet expired, with how many live sessions each made (public id: 12 hex digits)."""
        rows = self.conn().execute(
            "SELECT j.token_hash, j.match_id, j.created_at, j.expires_at, j.revoked, "
            "(SELECT COUNT(*) FROM web_sessions s WHERE s.join_hash=j.token_hash AND s.expires_at > ?) AS sessions "
            "FROM join_tokens j WHERE j.expires_at > ? ORDER BY j.created_at, j.token_hash", (now, now))
        return [{"id": r["token_hash"][:12], "match_id": r["match_id"], "created_at": r["created_at"],
                 "expires_at": r["expires_at"], "revoked": bool(r["revoked"]), "sessions": r["sessions"]}
                for r in rows]

    def revoke_join_token(self, public_id: str) -> int | None:
        """End one join link and the sessions made from it: how many sessions ended (None: no such link)."""
        with self.write() as c:
            row = c.execute("SELECT token_hash FROM join_tokens WHERE substr(token_hash, 1, 12)=?",
                            (public_id,)).fetchone()
            if row is None:
                return None
            c.execute("UPDATE join_tokens SET revoked=1 WHERE token_hash=?", (row[0],))
            return c.execute("DELETE FROM web_sessions WHERE join_hash=?", (row[0],)).rowcount

    # -- failed attempts -----------------------------------------------------
    def failure_times(self, scope: str, since: str, client: str | None = None) -> list[str]:
        """When the failed attempts of ``scope`` (of one ``client`` when given) after ``since`` happened."""
        if client is None:
            rows = self.conn().execute("SELECT at FROM auth_failures WHERE scope=? AND at>? ORDER BY at",
                                       (scope, since))
        else:
            rows = self.conn().execute(
                "SELECT at FROM auth_failures WHERE scope=? AND client=? AND at>? ORDER BY at", (scope, client, since))
        return [r[0] for r in rows]

    def add_failure(self, scope: str, client: str, at: str, purge_before: str) -> None:
        with self.write() as c:
            c.execute("INSERT INTO auth_failures(scope, client, at) VALUES (?,?,?)", (scope, client, at))
            c.execute("DELETE FROM auth_failures WHERE at < ?", (purge_before,))

    def clear_failures(self, scope: str, client: str) -> None:
        with self.write() as c:
            c.execute("DELETE FROM auth_failures WHERE scope=? AND client=?", (scope, client))
