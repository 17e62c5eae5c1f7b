#!/usr/bin/env bash
# The Debian packages of the named groups of systemd/debian-packages.txt that this machine lacks, installed
# before a run (`make test`, the check targets):
#
#   tests/need-debian-packages.sh [--for WHAT] [--or ALTERNATIVE] [--go-on] [--log FILE] GROUP...
#
# Nothing missing (one dpkg-query): it says nothing and costs nothing, no apt-get update. Something missing:
# as root it runs apt-get install (apt-get update first only when that install fails: stale or empty lists),
# else through `sudo -n` where sudo asks no password; one line says what it installs, apt's own output goes to
# FILE. Where it cannot (no apt, not root, sudo asks a password) it stops, exit 1, naming the one command that
# installs them and ALTERNATIVE (`make test-python`); with --go-on it says so in one line and goes on (the
# check's tests skip, saying why). A package marked if-available that this system's apt lacks is gone without.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
list=$here/systemd/debian-packages.txt
what="this run" alternative="" go_on=0 log=/dev/null
groups=()
while [ $# -gt 0 ]; do
    case "$1" in
        --for) shift; what=$1 ;;
        --or) shift; alternative=$1 ;;
        --go-on) go_on=1 ;;
        --log) shift; log=$1 ;;
        -*) echo "need-debian-packages.sh: unknown option: $1" >&2; exit 2 ;;
        *) groups+=("$1") ;;
    esac
    shift
done
[ "${#groups[@]}" -gt 0 ] || { echo "need-debian-packages.sh: name a group of $list" >&2; exit 2; }

# "PACKAGE WHEN COMMANDS" of the groups, each package once
entries=$(awk -v groups="${groups[*]}" '
    BEGIN { n = split(groups, g, " "); for (i = 1; i <= n; i++) want[g[i]] = 1 }
    { sub(/#.*/, "") }
    NF && ($1 in want) { seen[$1] = 1; if (!done[$2]++) print $2, $4, $3 }
    END { for (i = 1; i <= n; i++) if (!(g[i] in seen)) {
              print "need-debian-packages.sh: no group " g[i] " in systemd/debian-packages.txt" > "/dev/stderr"
              exit 2 } }' "$list")

say() { printf '%s: %s\n' "$what" "$*"; }
stop() {  # stop REASON COMMAND: cannot install; say what to run (or go on, with --go-on or when all are if-available)
    if [ "$go_on" = 1 ] || [ "${#need[@]}" -eq 0 ]; then
        say "not installing $1: going on without them (install them: $2)"
        exit 0
    fi
    say "this machine lacks Debian packages it needs (the ${groups[*]} group of systemd/debian-packages.txt): $1" >&2
    say "install them, then run $what again:" >&2
    printf '    %s\n' "$2" >&2
    [ -z "$alternative" ] || say "or run $alternative" >&2
    exit 1
}

need=()
if ! command -v dpkg-query >/dev/null 2>&1; then
    need=(-)  # (stop: these are needed)
    # not Debian: the commands the list names tell whether the packages' equivalents are there
    missing=()
    while read -r pkg when commands; do
        [ "$when" = always ] && [ "$commands" != - ] || continue
        for c in ${commands//,/ }; do command -v "$c" >/dev/null 2>&1 || missing+=("$c (Debian: $pkg)"); done
    done <<<"$entries"
    [ "${#missing[@]}" -eq 0 ] && exit 0
    stop "${missing[*]}, and this system has no dpkg" "your system's package manager, for these commands"
fi

installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $(awk '{print $1}' <<<"$entries") 2>/dev/null \
            | awk '$2 ~ /^.i/ {print $1}' || true)
need=() maybe=()
while read -r pkg when _; do
    grep -qxF -- "$pkg" <<<"$installed" && continue
    if [ "$when" = always ]; then need+=("$pkg"); else maybe+=("$pkg"); fi
done <<<"$entries"
[ "${#need[@]}" -eq 0 ] && [ "${#maybe[@]}" -eq 0 ] && exit 0

# an if-available package is asked for only where this system's apt has it (no apt-get update for it alone)
has_candidate() { apt-cache policy "$1" 2>/dev/null | grep '^ *Candidate: [^(]' >/dev/null; }
pick_maybe() {
    extra=() without=()
    for p in "${maybe[@]}"; do
        if command -v apt-cache >/dev/null 2>&1 && has_candidate "$p"; then extra+=("$p"); else without+=("$p"); fi
    done
}
pick_maybe
[ "${#need[@]}" -eq 0 ] && [ "${#extra[@]}" -eq 0 ] && exit 0

pkgs=("${need[@]}" "${extra[@]}")
command="sudo apt-get update && sudo apt-get install -y --no-install-recommends ${pkgs[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
    stop "${pkgs[*]} (this system has no apt-get)" "$command"
fi
if [ "$(id -u)" = 0 ]; then
    apt=(env DEBIAN_FRONTEND=noninteractive apt-get) how=apt-get
elif ! command -v sudo >/dev/null 2>&1; then
    stop "${pkgs[*]} (not root, and no sudo)" "$command"
elif sudo -n true >/dev/null 2>&1; then
    apt=(sudo -n env DEBIAN_FRONTEND=noninteractive apt-get) how="sudo -n apt-get"
else
    stop "${pkgs[*]} (not root, and sudo asks for a password)" "$command"
fi

mkdir -p "$(dirname "$log")"
say "installing Debian packages ${pkgs[*]} ($how; its output: $log)"
install() { "${apt[@]}" install -y -q --no-install-recommends "$@" >>"$log" 2>&1; }
if ! install "${pkgs[@]}"; then
    # stale or empty lists (a fresh machine's): refreshed once, then the packages looked up again
    "${apt[@]}" update -q >>"$log" 2>&1 || true
    pick_maybe
    pkgs=("${need[@]}" "${extra[@]}")
    say "apt's lists were stale: refreshed (apt-get update); installing ${pkgs[*]}"
    if [ "${#pkgs[@]}" -gt 0 ] && ! install "${pkgs[@]}"; then
        tail -n 5 "$log" >&2 || true
        say "apt-get install ${pkgs[*]} failed (its whole output: $log)" >&2
        [ -z "$alternative" ] || say "or run $alternative" >&2
        exit 1
    fi
fi
for p in "${without[@]}"; do
    say "no $p in this system's apt sources: going on without it"
done
