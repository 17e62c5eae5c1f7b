-- The web adapter: sessions, bearer tokens, join tokens, failed sign-in attempts, match labels.
-- Secrets are never stored: only their SHA-256 (tokens are 256-bit random, so a plain hash is enough).

-- Browser sessions (cookie companion_sid). data: JSON, e.g. {"seats": {"<match id>": "Alice"}}.
CREATE TABLE web_sessions (
    sid_hash    TEXT PRIMARY KEY,
    role        TEXT NOT NULL,             -- player | organiser
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    data        TEXT NOT NULL DEFAULT '{}'
);

-- Bearer tokens for scripts (companion token create).
CREATE TABLE api_tokens (
    id          TEXT PRIMARY KEY,          -- short public id (first 12 hex digits of the hash)
    token_hash  TEXT NOT NULL UNIQUE,
    role        TEXT NOT NULL,             -- player | organiser
    label       TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    expires_at  TEXT,                      -- NULL: never
    revoked     INTEGER NOT NULL DEFAULT 0
);

-- Join tokens behind the table QR codes: exchanged for a player session, usable until they expire.
CREATE TABLE join_tokens (
    token_hash  TEXT PRIMARY KEY,
    role        TEXT NOT NULL DEFAULT 'player',
    match_id    TEXT,                      -- where to send the phone after joining (optional)
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    revoked     INTEGER NOT NULL DEFAULT 0
);

-- Failed sign-in attempts (wrong PIN, wrong setup code, unknown join token), for rate limiting.
CREATE TABLE auth_failures (
    id      INTEGER PRIMARY KEY,
    scope   TEXT NOT NULL,                 -- pin | join
    client  TEXT NOT NULL,                 -- the remote address
    at      TEXT NOT NULL
);
CREATE INDEX auth_failures_scope_at ON auth_failures(scope, at);

-- What the pages show beside a match: a table label and the players' colours.
CREATE TABLE match_meta (
    match_id  TEXT PRIMARY KEY REFERENCES matches(id),
    label     TEXT NOT NULL DEFAULT '',
    colours   TEXT NOT NULL DEFAULT '{}'   -- JSON {player: "#rrggbb"}
);
