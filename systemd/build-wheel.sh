#!/usr/bin/env bash
# Build a wheel of companion from a copy of the source tree, so the checkout is left exactly as it was
# (setuptools writes build/ and companion.egg-info/ into the tree it builds; as root they would be
# root-owned and break the owner's own `make run`/`pip install .`). Used by install.sh and `companion bundle`.
#
#   systemd/build-wheel.sh SRC OUTDIR PIP [pip options...]
#
# PIP is the pip command (a path, or e.g. "python3 -m pip"); the options go to `pip wheel`
# (e.g. --no-index --find-links DIR to take setuptools and wheel from a folder). Prints the wheel's path.
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: build-wheel.sh SRC OUTDIR PIP [pip options...]" >&2; exit 2
fi
src=$1 out=$2
read -ra pip <<<"$3"
shift 3
[ -f "$src/pyproject.toml" ] || { echo "build-wheel.sh: no pyproject.toml in $src" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/out" "$out"
# what the wheel is made of (pyproject.toml and setup.py): nothing else is read, nothing is written
(cd "$src" && cp -R companion web schemas hardware pyproject.toml setup.py README.md "$tmp/src/")
find "$tmp/src" \( -name __pycache__ -o -name '*.egg-info' -o -name '*.pyc' \) -prune -exec rm -rf {} +
# the commit it is built from, for `companion --version` (safe.directory: root building a user's checkout)
commit=$(git -c safe.directory="$src" -C "$src" rev-parse --short=12 HEAD 2>/dev/null || true)
if [ -n "$commit" ] && [ -n "$(git -c safe.directory="$src" -C "$src" status --porcelain --untracked-files=no \
        -- companion web schemas pyproject.toml setup.py 2>/dev/null)" ]; then
    commit="$commit+changes"
fi
printf '"""Written by systemd/build-wheel.sh into the copy it builds."""\nCOMMIT = %s\n' \
    "\"${commit:-unknown (not a git checkout)}\"" >"$tmp/src/companion/build_info.py"
# setuptools is chatty: its output is shown only when the build fails
"${pip[@]}" wheel --disable-pip-version-check --quiet --no-deps "$@" -w "$tmp/out" "$tmp/src" >"$tmp/log" 2>&1 \
    || { cat "$tmp/log" >&2; echo "build-wheel.sh: pip wheel failed" >&2; exit 1; }
whl=$(find "$tmp/out" -maxdepth 1 -name 'companion-*.whl' | head -n1)
[ -n "$whl" ] || { echo "build-wheel.sh: pip made no companion wheel" >&2; exit 1; }
cp "$whl" "$out/"
echo "$out/$(basename "$whl")"
