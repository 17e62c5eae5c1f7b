-- Web of Power boards a club transcribes in the browser (/boards): every saved change is a new version,
-- a match keeps the version it started with (its options name board id and version and embed the document).
-- club_id: the club the board belongs to (clubs.id), NULL for the box's own board.
CREATE TABLE boards (
    id          TEXT PRIMARY KEY,
    club_id     TEXT,
    name        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

-- A photo of the physical board (JPEG or PNG, shrunk by the browser); versions point to the photo they show.
CREATE TABLE board_photos (
    id          TEXT PRIMARY KEY,
    board_id    TEXT NOT NULL REFERENCES boards(id),
    mime        TEXT NOT NULL,
    width       INTEGER NOT NULL,
    height      INTEGER NOT NULL,
    data        BLOB NOT NULL,
    created_at  TEXT NOT NULL
);

-- doc: the board document (schemas/web-of-power.map.schema.json, without the photo); status and errors
-- are what the checker said when it was saved (complete only with no error and nothing unknown).
CREATE TABLE board_versions (
    board_id    TEXT NOT NULL REFERENCES boards(id),
    version     INTEGER NOT NULL,
    doc         TEXT NOT NULL,
    status      TEXT NOT NULL,
    errors      INTEGER NOT NULL,
    photo_id    TEXT REFERENCES board_photos(id),
    created_at  TEXT NOT NULL,
    PRIMARY KEY (board_id, version)
) WITHOUT ROWID;

-- The board new Web of Power matches start on, per club ('' for matches that name no club).
CREATE TABLE board_defaults (
    club_key    TEXT PRIMARY KEY,
    board_id    TEXT NOT NULL REFERENCES boards(id)
) WITHOUT ROWID;
