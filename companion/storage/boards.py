"""Web of Power boards transcribed by a club (migration 0008): boards, their versions, photos and the
club's default board. The rules (checking a board, what a version's status is) are ``companion.services.boards``."""

from __future__ import annotations

import json

from companion.base.errors import ConflictError, NotFoundError
from companion.storage.db import new_id


def _version_row(row) -> dict:
    return {"board_id": row["board_id"], "version": row["version"], "doc": json.loads(row["doc"]),
            "status": row["status"], "errors": row["errors"], "photo_id": row["photo_id"],
            "created_at": row["created_at"]}


class BoardRows:
    def create_board(self, name: str, club_id: str | None, doc: dict, status: str, errors: int,
                     photo: dict | None = None) -> dict:
        """A new board with its version 1 (and its photo, when given)."""
        board_id = new_id()[:12]
        now = self.clock.now_iso()
        with self.write() as c:
            c.execute("INSERT INTO boards(id, club_id, name, created_at) VALUES (?,?,?,?)",
                      (board_id, club_id, name, now))
            photo_id = self._insert_photo(c, board_id, photo, now) if photo else None
            c.execute("INSERT INTO board_versions(board_id, version, doc, status, errors, photo_id, created_at) "
                      "VALUES (?,?,?,?,?,?,?)", (board_id, 1, json.dumps(doc), status, errors, photo_id, now))
        return self.get_board(board_id)

    @staticmethod
    def _insert_photo(c, board_id: str, photo: dict, now: str) -> str:
        photo_id = new_id()[:16]
        c.execute("INSERT INTO board_photos(id, board_id, mime, width, height, data, created_at) "
                  "VALUES (?,?,?,?,?,?,?)",
                  (photo_id, board_id, photo["mime"], photo["width"], photo["height"], photo["data"], now))
        return photo_id

    def get_board(self, board_id: str) -> dict:
        row = self.conn().execute(
            "SELECT b.*, (SELECT MAX(version) FROM board_versions v WHERE v.board_id=b.id) AS latest "
            "FROM boards b WHERE b.id=?", (board_id,)).fetchone()
        if row is None:
            raise NotFoundError("no board {board_id!r}", "board_id", board_id=board_id)
        return {"id": row["id"], "club_id": row["club_id"], "name": row["name"], "created_at": row["created_at"],
                "latest": row["latest"]}

    def list_boards(self, club_id: str | None = None, every_club: bool = True) -> list[dict]:
        sql = ("SELECT b.*, v.version AS latest, v.status, v.errors, v.photo_id, v.created_at AS saved_at "
               "FROM boards b JOIN board_versions v ON v.board_id=b.id AND v.version="
               "(SELECT MAX(version) FROM board_versions w WHERE w.board_id=b.id)")
        args: tuple = ()
        if not every_club:
            sql += " WHERE b.club_id IS ?"
            args = (club_id,)
        sql += " ORDER BY b.created_at, b.id"
        return [{"id": r["id"], "club_id": r["club_id"], "name": r["name"], "created_at": r["created_at"],
                 "latest": r["latest"], "status": r["status"], "errors": r["errors"],
                 "photo": r["photo_id"] is not None, "saved_at": r["saved_at"]}
                for r in self.conn().execute(sql, args)]

    def board_version(self, board_id: str, version: int | None = None) -> dict:
        self.get_board(board_id)
        if version is None:
            row = self.conn().execute("SELECT * FROM board_versions WHERE board_id=? ORDER BY version DESC LIMIT 1",
                                      (board_id,)).fetchone()
        else:
            row = self.conn().execute("SELECT * FROM board_versions WHERE board_id=? AND version=?",
                                      (board_id, version)).fetchone()
        if row is None:
            raise NotFoundError("board {board_id!r} has no version {version}", "version", board_id=board_id, version=version)
        return _version_row(row)

    def board_versions(self, board_id: str) -> list[dict]:
        rows = self.conn().execute("SELECT version, status, errors, photo_id, created_at FROM board_versions "
                                   "WHERE board_id=? ORDER BY version", (board_id,))
        return [{"version": r["version"], "status": r["status"], "errors": r["errors"],
                 "photo": r["photo_id"] is not None, "created_at": r["created_at"]} for r in rows]

    def add_board_version(self, board_id: str, doc: dict, status: str, errors: int, expected_version: int | None,
                          photo: dict | None = None, keep_photo: bool = True, name: str | None = None) -> dict:
        """A new version (the latest + 1). ``expected_version``: the version the writer edited (a stale one
        is refused: someone else saved in between). The photo: a new one, else the latest version's when
        ``keep_photo``."""
        now = self.clock.now_iso()
        with self.write() as c:
            if c.execute("SELECT 1 FROM boards WHERE id=?", (board_id,)).fetchone() is None:
                raise NotFoundError("no board {board_id!r}", "board_id", board_id=board_id)
            last = c.execute("SELECT version, photo_id FROM board_versions WHERE board_id=? "
                             "ORDER BY version DESC LIMIT 1", (board_id,)).fetchone()
            if expected_version is not None and expected_version != last["version"]:
                raise ConflictError("the board was saved meanwhile (version {version}, you edited version {expected_version})", "expected_version", version=last['version'], expected_version=expected_version)
            photo_id = self._insert_photo(c, board_id, photo, now) if photo else \
                (last["photo_id"] if keep_photo else None)
            version = last["version"] + 1
            c.execute("INSERT INTO board_versions(board_id, version, doc, status, errors, photo_id, created_at) "
                      "VALUES (?,?,?,?,?,?,?)", (board_id, version, json.dumps(doc), status, errors, photo_id, now))
            if photo:
                self._drop_unused_photos(c, board_id)
            if name is not None:
                c.execute("UPDATE boards SET name=? WHERE id=?", (name, board_id))
        return self.board_version(board_id, version)

    @staticmethod
    def _drop_unused_photos(c, board_id: str) -> int:
        """A new photo replaced the board's: the photos no version still uses are deleted (a 2 MiB copy each).
        Still used: the latest version's, and that of every version a match started on (its page shows
        that version's photo); an older version no match plays keeps its document, without a photo. How
        many photos were deleted."""
        used = ("SELECT photo_id FROM board_versions WHERE board_id=:b AND photo_id IS NOT NULL AND ("
                "version = (SELECT MAX(version) FROM board_versions WHERE board_id=:b) OR version IN ("
                "SELECT json_extract(options, '$.board_ref.version') FROM matches WHERE json_valid(options) "
                "AND json_extract(options, '$.board_ref.id') = :b))")
        c.execute(f"UPDATE board_versions SET photo_id=NULL WHERE board_id=:b AND photo_id IS NOT NULL "
                  f"AND photo_id NOT IN ({used})", {"b": board_id})
        return c.execute(f"DELETE FROM board_photos WHERE board_id=:b AND id NOT IN ({used}) "
                         f"AND id NOT IN (SELECT photo_id FROM board_versions WHERE photo_id IS NOT NULL)",
                         {"b": board_id}).rowcount

    def board_photo(self, photo_id: str) -> dict:
        row = self.conn().execute("SELECT id, mime, width, height, data FROM board_photos WHERE id=?",
                                  (photo_id,)).fetchone()
        if row is None:
            raise NotFoundError("no such photo", "photo")
        return {"id": row["id"], "mime": row["mime"], "width": row["width"], "height": row["height"],
                "data": bytes(row["data"])}

    def board_photo_meta(self, photo_id: str) -> dict | None:
        row = self.conn().execute("SELECT id, mime, width, height FROM board_photos WHERE id=?",
                                  (photo_id,)).fetchone()
        return None if row is None else dict(row)

    def set_default_board(self, club_key: str, board_id: str | None) -> None:
        with self.write() as c:
            if board_id is None:
                c.execute("DELETE FROM board_defaults WHERE club_key=?", (club_key,))
            else:
                c.execute("INSERT INTO board_defaults(club_key, board_id) VALUES (?,?) "
                          "ON CONFLICT(club_key) DO UPDATE SET board_id=excluded.board_id", (club_key, board_id))

    def default_boards(self) -> dict:
        """{club_key: board_id} ('' for matches that name no club)."""
        return {r["club_key"]: r["board_id"]
                for r in self.conn().execute("SELECT club_key, board_id FROM board_defaults")}
