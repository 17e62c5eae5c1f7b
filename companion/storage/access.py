"""Sign-in rows (migration 0002): browser sessions, bearer tokens, join tokens, failed attempts.

Secrets are never stored: only their SHA-256 (tokens are 256-bit random, so a plain hash is enough).
The rules (who may do what, expiry, rate limits) are ``companion.access``; this is only where they live.
"""

from __future__ import annotations

import json


class AccessRows:
    # -- sessions ------------------------------------------------------------
    def insert_session(self, sid_hash: str, role: str, created_at: str, expires_at: str, data: dict,
                       purge_before: str, join_hash: str | None = None) -> None:
        with self.write() as c:
            c.execute("INSERT INTO web_sessions(sid_hash, role, created_at, expires_at, data, join_hash) "
                      "VALUES (?,?,?,?,?,?)",
                      (sid_hash, role, created_at, expires_at, json.dumps(data), join_hash))
            c.execute("DELETE FROM web_sessions WHERE expires_at < ?", (purge_before,))

    def session_rows(self, now: str) -> list[dict]:
        """Live sessions, oldest first (public id: the first 12 hex digits of the stored hash)."""
        rows = self.conn().execute(
            "SELECT sid_hash, role, created_at, expires_at, data, join_hash FROM web_sessions "
            "WHERE expires_at > ? ORDER BY created_at, sid_hash", (now,))
        return [{"id": r["sid_hash"][:12], "key": r["sid_hash"], "role": r["role"], "created_at": r["created_at"],
                 "expires_at": r["expires_at"], "seats": json.loads(r["data"]).get("seats") or {},
                 "join_link": r["join_hash"][:12] if r["join_hash"] else None} for r in rows]

    def delete_session_by_id(self, public_id: str) -> bool:
        with self.write() as c:
            return c.execute("DELETE FROM web_sessions WHERE substr(sid_hash, 1, 12)=?",
                             (public_id,)).rowcount > 0

    def end_sessions_of_role(self, role: str) -> int:
        with self.write() as c:
            return c.execute("DELETE FROM web_sessions WHERE role=?", (role,)).rowcount

    def session_row(self, sid_hash: str) -> dict | None:
        row = self.conn().execute(
            "SELECT sid_hash, role, expires_at, data FROM web_sessions WHERE sid_hash=?", (sid_hash,)).fetchone()
        if row is None:
            return None
        return {"key": row["sid_hash"], "role": row["role"], "expires_at": row["expires_at"],
                "data": json.loads(row["data"])}

    def set_session_data(self, key: str, data: dict) -> None:
        with self.write() as c:
            c.execute("UPDATE web_sessions SET data=? WHERE sid_hash=?", (json.dumps(data), key))

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
        row = self.conn().execute(
            "SELECT id, role, expires_at, revoked FROM api_tokens WHERE token_hash=?", (token_hash,)).fetchone()
        return dict(row) if row is not None else None

    def api_token_rows(self) -> list[dict]:
        rows = self.conn().execute(
            "SELECT id, role, label, created_at, expires_at, revoked FROM api_tokens ORDER BY created_at, id")
        return [{"id": r["id"], "role": r["role"], "label": r["label"], "created_at": r["created_at"],
                 "expires_at": r["expires_at"], "revoked": bool(r["revoked"])} for r in rows]

    def revoke_api_token(self, token_id: str) -> bool:
        with self.write() as c:
            return c.execute("UPDATE api_tokens SET revoked=1 WHERE id=?", (token_id,)).rowcount > 0

    # -- join tokens ---------------------------------------------------------
    def insert_join_token(self, token_hash: str, role: str, match_id: str | None, created_at: str,
                          expires_at: str, revoke_others: bool) -> None:
        with self.write() as c:
            if revoke_others:  # the sessions made from the ended links end with them
                c.execute("DELETE FROM web_sessions WHERE join_hash IN (SELECT token_hash FROM join_tokens)")
                c.execute("UPDATE join_tokens SET revoked=1 WHERE revoked=0")
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
