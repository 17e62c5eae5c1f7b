#!/usr/bin/env bash
# The server-level tests once more on the floor of the server's declared range (`.ci/run`; by hand too):
#
#   tests/floor.sh [PYTEST ARGS...]
#
# A venv of its own (.venv/floor) with companion and, for uvicorn, h11, httptools and a2wsgi, the lowest
# version pyproject.toml allows (read from its `>=`, so the two never disagree); then the tests that run the
# real server and its front (tests/web: test_keepalive, test_server, test_asgi, test_front; the guest-proof
# flood). The top of the range is what `make test` installs. The venv is made again when pyproject.toml changes.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
venv=.venv/floor
python=${PYTHON:-python3}
pins=$("$python" - <<'EOF'
import re, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
for dep in deps:
    m = re.match(r"\s*(uvicorn|h11|httptools|a2wsgi)\s*>=\s*([0-9.]+)", dep)
    if m:
        marker = dep.split(";", 1)[1].strip() if ";" in dep else ""
        print(f"{m.group(1)}=={m.group(2)}" + (f"; {marker}" if marker else ""))
EOF
)
if [ "$(printf '%s\n' "$pins" | grep -c .)" != 4 ]; then
    echo "tests/floor.sh: pyproject.toml does not give a floor (>=) for each of uvicorn, h11, httptools, a2wsgi" >&2
    exit 2
fi
stamp=$venv/.pins
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$pins" ] || [ pyproject.toml -nt "$stamp" ]; then
    rm -rf "$venv"
    mkdir -p .venv
    "$python" -m venv "$venv"
    printf '%s\n' "$pins" > "$venv/constraints.txt"
    echo "floor of the server's range: $(printf '%s' "$pins" | sed 's/;.*//' | tr '\n' ' ')(log: $venv/install.log)"
    "$venv/bin/pip" install -q -e . pytest pytest-xdist hypothesis -c "$venv/constraints.txt" > "$venv/install.log" 2>&1 \
        || { tail -20 "$venv/install.log" >&2; exit 1; }
    printf '%s\n' "$pins" > "$stamp"
fi
"$venv/bin/python" -m pip list 2>/dev/null | grep -Ei '^(uvicorn|h11|httptools|a2wsgi) ' | tr -s ' ' | tr '\n' ' '
echo
exec "$venv/bin/python" -m pytest -q -n 2 tests/web/test_keepalive.py tests/web/test_server.py tests/web/test_asgi.py \
    tests/web/test_front.py tests/stress/test_flood.py "$@"
