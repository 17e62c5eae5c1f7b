#!/usr/bin/env bash
# Restore the companion database from a backup (a file written by `companion backup`).
#
#   sudo /opt/companion/restore.sh /var/lib/companion/backups/companion-20260301T033000Z.db
#
# 1. checks that the file is a sound SQLite database (PRAGMA integrity_check) with companion's tables;
# 2. stops companion.service (nothing may write meanwhile);
# 3. moves the current companion.db and its -wal/-shm files aside into pre-restore-<UTC time>/
#    (a stale -wal next to the restored file would be replayed into it: it must go);
# 4. copies the backup over companion.db (owned by the service user, mode 0600);
# 5. starts companion.service again.
#
# Environment (other layouts, tests): COMPANION_STATE_DIR (/var/lib/companion), COMPANION_USER
# (companion), SYSTEMCTL (systemctl; "true" to leave the service alone), PYTHON (/opt/companion/venv/bin/python
# when present, else python3).
set -euo pipefail

STATE_DIR=${COMPANION_STATE_DIR:-/var/lib/companion}
SERVICE_USER=${COMPANION_USER:-companion}
SYSTEMCTL=${SYSTEMCTL:-systemctl}
if [ -z "${PYTHON:-}" ]; then
    if [ -x /opt/companion/venv/bin/python ]; then PYTHON=/opt/companion/venv/bin/python; else PYTHON=python3; fi
fi

if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
    sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
    [ $# -eq 1 ] && exit 0 || exit 2
fi
backup=$1
if [ ! -f "$backup" ]; then
    echo "restore.sh: BACKUP: no such file: $backup" >&2; exit 2
fi

# 1. a sound companion database?
if ! "$PYTHON" - "$backup" <<'EOF'
import sqlite3, sys
path = sys.argv[1]
try:
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    ok = c.execute("PRAGMA integrity_check").fetchone()[0]
    tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    version = c.execute("PRAGMA user_version").fetchone()[0]
except sqlite3.DatabaseError as exc:
    print(f"restore.sh: BACKUP: not an SQLite database ({exc})", file=sys.stderr)
    sys.exit(1)
if ok != "ok":
    print(f"restore.sh: BACKUP: integrity check failed: {ok}", file=sys.stderr)
    sys.exit(1)
missing = {"matches", "events", "settings"} - tables
if missing:
    print(f"restore.sh: BACKUP: not a companion database (no table {sorted(missing)[0]})", file=sys.stderr)
    sys.exit(1)
print(f"backup checked: schema version {version}, "
      f"{c.execute('SELECT COUNT(*) FROM matches').fetchone()[0]} matches")
EOF
then
    exit 2
fi

# 2. stop the writer
"$SYSTEMCTL" stop companion.service

# 3. the current database goes aside, never deleted
db="$STATE_DIR/companion.db"
aside="$STATE_DIR/pre-restore-$(date -u +%Y%m%dT%H%M%SZ)"
moved=0
for f in "$db" "$db-wal" "$db-shm" "$db-journal"; do
    if [ -e "$f" ]; then
        mkdir -p "$aside"
        mv "$f" "$aside/"
        moved=1
    fi
done
[ "$moved" = 1 ] && echo "the previous database is in $aside"

# 4. the backup becomes the database (copy then rename: never a half-written companion.db)
mkdir -p "$STATE_DIR"
cp "$backup" "$db.restoring"
chmod 0600 "$db.restoring"
if [ "$(id -u)" = 0 ] && id -u "$SERVICE_USER" >/dev/null 2>&1; then
    chown "$SERVICE_USER:$SERVICE_USER" "$db.restoring"
fi
mv "$db.restoring" "$db"
echo "restored $db from $backup"

# 5. back in service
"$SYSTEMCTL" start companion.service
