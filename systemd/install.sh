#!/usr/bin/env bash
# Install companion on a Raspberry Pi (Raspberry Pi OS / Debian 12, any 40-pin Pi from the Zero 2 W up)
# as a systemd service. Idempotent: run it again after `git pull` to upgrade; nothing is duplicated and
# the database in /var/lib/companion is never touched. See README.md, "Pi set-up".
#
#   sudo systemd/install.sh [--kiosk] [--port N] [--wheels DIR] [--no-apt] [--no-start]
#   sudo systemd/install.sh --uninstall [--purge]
#
# --kiosk       also show the display page on an HDMI screen (installs cage + chromium, companion-kiosk.service)
# --port N      the port phones use (default 8080); written to /etc/default/companion on first install only
# --wheels DIR  install offline from a folder of wheels (pip download -d DIR . on a machine with internet)
# --no-apt      do not apt-get install anything (python3-venv and python3-lgpio must be there)
# --no-start    install and enable, but do not start or restart now
# --uninstall   stop and remove the units and /opt/companion; keeps the data in /var/lib/companion
# --purge       with --uninstall: also delete the data (every match!) and the users
#
# Environment (for other layouts and for the tests): COMPANION_PREFIX (/opt/companion),
# COMPANION_STATE_DIR (/var/lib/companion), COMPANION_UNIT_DIR (/etc/systemd/system),
# COMPANION_ETC_DIR (/etc/default), COMPANION_USER (companion), SYSTEMCTL (systemctl), PYTHON (python3).
set -euo pipefail

PREFIX=${COMPANION_PREFIX:-/opt/companion}
STATE_DIR=${COMPANION_STATE_DIR:-/var/lib/companion}
UNIT_DIR=${COMPANION_UNIT_DIR:-/etc/systemd/system}
ETC_DIR=${COMPANION_ETC_DIR:-/etc/default}
SERVICE_USER=${COMPANION_USER:-companion}
KIOSK_USER=${SERVICE_USER}-kiosk
SYSTEMCTL=${SYSTEMCTL:-systemctl}
PYTHON=${PYTHON:-python3}
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
UNITS=(companion.service companion-backup.service companion-backup.timer)
KIOSK_UNIT=companion-kiosk.service

kiosk=0 port=8080 wheels="" apt=1 start=1 uninstall=0 purge=0
while [ $# -gt 0 ]; do
    case "$1" in
        --kiosk) kiosk=1 ;;
        --port) shift; port=${1:-}; [[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] \
                    || { echo "install.sh: --port: must be a port number (1-65535)" >&2; exit 2; } ;;
        --wheels) shift; wheels=${1:-}; [ -d "$wheels" ] \
                    || { echo "install.sh: --wheels: not a folder: ${wheels}" >&2; exit 2; } ;;
        --no-apt) apt=0 ;;
        --no-start) start=0 ;;
        --uninstall) uninstall=1 ;;
        --purge) purge=1 ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option: $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done
[ -e "$UNIT_DIR/$KIOSK_UNIT" ] && kiosk=1  # installed once with --kiosk: keep it up to date
if [ "$purge" = 1 ] && [ "$uninstall" = 0 ]; then
    echo "install.sh: --purge goes with --uninstall" >&2; exit 2
fi
if [ "$(id -u)" != 0 ] && [ -z "${COMPANION_ALLOW_NONROOT:-}" ]; then
    echo "install.sh: run it as root (sudo $0 $*)" >&2; exit 1
fi

say() { printf '==> %s\n' "$*"; }

# the unit text for this layout (the files in systemd/ are written for the default paths)
render_unit() {
    sed -e "s#/opt/companion#${PREFIX}#g" \
        -e "s#/etc/default/companion#${ETC_DIR}/companion#g" \
        -e "s#/var/lib/companion-kiosk#${STATE_DIR}-kiosk#g" \
        -e "s#/var/lib/companion#${STATE_DIR}#g" \
        -e "s#^User=companion-kiosk\$#User=${KIOSK_USER}#" -e "s#^Group=companion-kiosk\$#Group=${KIOSK_USER}#" \
        -e "s#^User=companion\$#User=${SERVICE_USER}#" -e "s#^Group=companion\$#Group=${SERVICE_USER}#" \
        -e "s#^StateDirectory=companion-kiosk\$#StateDirectory=$(basename "${STATE_DIR}")-kiosk#" \
        -e "s#^StateDirectory=companion\$#StateDirectory=$(basename "${STATE_DIR}")#" \
        "$SRC/systemd/$1"
}

units_changed=0
install_unit() {  # install_unit NAME: copy when the text differs; remember that systemd must reload
    local name=$1 tmp
    tmp=$(mktemp)
    render_unit "$name" >"$tmp"
    if ! cmp -s "$tmp" "$UNIT_DIR/$name"; then
        install -m 0644 "$tmp" "$UNIT_DIR/$name"
        units_changed=1
        say "installed $UNIT_DIR/$name"
    fi
    rm -f "$tmp"
}

if [ "$uninstall" = 1 ]; then
    for u in "$KIOSK_UNIT" companion-backup.timer companion-backup.service companion.service; do
        if [ -e "$UNIT_DIR/$u" ]; then
            "$SYSTEMCTL" disable --now "$u" || true
            rm -f "$UNIT_DIR/$u"
            say "removed $UNIT_DIR/$u"
        fi
    done
    "$SYSTEMCTL" daemon-reload || true
    rm -rf "$PREFIX"
    say "removed $PREFIX"
    if [ "$purge" = 1 ]; then
        rm -rf "$STATE_DIR" "${STATE_DIR}-kiosk" "$ETC_DIR/companion"
        for u in "$KIOSK_USER" "$SERVICE_USER"; do
            if id -u "$u" >/dev/null 2>&1; then userdel "$u" || true; fi
        done
        say "purged the data, /etc/default/companion and the users"
    else
        say "kept the data in $STATE_DIR (backups in $STATE_DIR/backups) and $ETC_DIR/companion;" \
            "--uninstall --purge deletes them"
    fi
    exit 0
fi

# 1. system packages: a venv, and lgpio (gpiozero's pin library; comes with Raspberry Pi OS)
if [ "$apt" = 1 ] && command -v apt-get >/dev/null 2>&1; then
    pkgs=(python3-venv python3-pip python3-lgpio)
    [ "$kiosk" = 1 ] && pkgs+=(cage chromium)
    missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        say "apt-get install ${missing[*]}"
        apt-get install -y --no-install-recommends "${missing[@]}"
    fi
fi

# 2. the users: companion owns the database and may use the GPIO chips (group gpio)
getent group gpio >/dev/null || { groupadd --system gpio; say "created group gpio"; }
if ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
    useradd --system --user-group --home-dir "$STATE_DIR" --no-create-home --shell /usr/sbin/nologin \
        --comment "companion board-game service" "$SERVICE_USER"
    say "created user $SERVICE_USER"
fi
id -nG "$SERVICE_USER" | tr ' ' '\n' | grep -qx gpio || { usermod -a -G gpio "$SERVICE_USER"; say "added $SERVICE_USER to gpio"; }
if [ "$kiosk" = 1 ] && ! id -u "$KIOSK_USER" >/dev/null 2>&1; then
    useradd --system --user-group --home-dir "${STATE_DIR}-kiosk" --no-create-home --shell /usr/sbin/nologin \
        --groups video,render,input --comment "companion kiosk screen" "$KIOSK_USER"
    say "created user $KIOSK_USER"
fi

# 3. the virtualenv in $PREFIX (system site packages: python3-lgpio comes from apt)
if [ ! -x "$PREFIX/venv/bin/python" ]; then
    mkdir -p "$PREFIX"
    "$PYTHON" -m venv --system-site-packages "$PREFIX/venv"
    say "created $PREFIX/venv"
fi
# install the code only when the source changed since the last run (a stamp of every source file)
stamp=$(cd "$SRC" && find companion web schemas hardware systemd pyproject.toml README.md -type f \
            ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 2>/dev/null | sort -z | xargs -0 sha256sum | sha256sum)
code_changed=0
if [ "$stamp" != "$(cat "$PREFIX/.source-stamp" 2>/dev/null)" ]; then
    pip_args=(--disable-pip-version-check --quiet)
    [ -n "$wheels" ] && pip_args+=(--no-index --find-links "$wheels")
    say "pip install $SRC into $PREFIX/venv"
    "$PREFIX/venv/bin/pip" install "${pip_args[@]}" --upgrade "$SRC"
    install -m 0644 "$SRC/README.md" "$PREFIX/README.md"
    install -m 0755 "$SRC/systemd/restore.sh" "$PREFIX/restore.sh"
    printf '%s\n' "$stamp" >"$PREFIX/.source-stamp"
    code_changed=1
fi

# 4. settings: written once, kept afterwards (edit them, then: systemctl restart companion)
if [ ! -e "$ETC_DIR/companion" ]; then
    mkdir -p "$ETC_DIR"
    cat >"$ETC_DIR/companion" <<EOF
# companion settings, read by companion.service, companion-backup.service, companion-kiosk.service
COMPANION_SERVE_ARGS="--host 0.0.0.0 --port ${port} --gpio auto"
COMPANION_BACKUP_DIR=${STATE_DIR}/backups
COMPANION_BACKUP_KEEP=14
COMPANION_KIOSK_URL=http://localhost:${port}/display
EOF
    say "wrote $ETC_DIR/companion"
else
    port=$(sed -n 's/.*--port[ =]\([0-9]*\).*/\1/p' "$ETC_DIR/companion" | head -n1)
    port=${port:-8080}
fi

# 5. the units
mkdir -p "$UNIT_DIR"
for u in "${UNITS[@]}"; do install_unit "$u"; done
[ "$kiosk" = 1 ] && install_unit "$KIOSK_UNIT"
[ "$units_changed" = 1 ] && "$SYSTEMCTL" daemon-reload
enable=(companion.service companion-backup.timer)
[ "$kiosk" = 1 ] && enable+=("$KIOSK_UNIT")
if [ "$start" = 1 ]; then
    if [ "$code_changed" = 1 ] || [ "$units_changed" = 1 ]; then
        # new code or new units: (re)start so they run
        "$SYSTEMCTL" enable "${enable[@]}"
        "$SYSTEMCTL" restart "${enable[@]}"
    else
        "$SYSTEMCTL" enable --now "${enable[@]}"
    fi
else
    "$SYSTEMCTL" enable "${enable[@]}"
fi

# 6. where the phones go
ip=$(hostname -I 2>/dev/null | awk '{print $1}')
url="http://${ip:-$(hostname).local}:${port}/"
say "companion is installed; phones open ${url}"
"$PREFIX/venv/bin/python" - "$url" <<'EOF' || true
import sys
import qrcode
qr = qrcode.QRCode(border=1)
qr.add_data(sys.argv[1])
qr.print_ascii(invert=True)
EOF
say "status: systemctl status companion   logs: journalctl -u companion -f"
say "box check: sudo -u ${SERVICE_USER} ${PREFIX}/venv/bin/companion hardware check  (stop the service first)"
