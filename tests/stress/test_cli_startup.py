"""What a CLI start loads: `companion score` and `companion odds` must not pull in the server, the GPIO
library or slow optional parsers (their speed is measured by `make bench`: bench_cli; this test only pins
the cause of a slow start that once cost ~0.8 s: jsonschema's format-nongpl extra, whose rfc3987-syntax
builds a Lark grammar at import)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HEAVY = ("flask", "werkzeug", "waitress", "uvicorn", "a2wsgi", "h11", "gpiozero", "qrcode", "openskill", "lark", "rfc3987_syntax",
         "hypothesis", "schemathesis",
         # a valid document is told by the compiled check (companion/base/schemas.py): jsonschema and its
         # dependencies only for a document it refuses; no xml.sax.saxutils (urllib.request, email, ssl)
         "jsonschema", "referencing", "rpds", "attrs", "jsonschema_specifications", "email", "ssl")

PROBE = """
import io, json, sys
from contextlib import redirect_stdout
from companion.cli import main
with redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(m for m in sys.modules if m.split(".")[0] in %r)}))
""" % (HEAVY,)


@pytest.mark.parametrize("argv", [
    ["score", "richelieu", str(REPO / "schemas/examples/richelieu.score/rule-book-bonus-example.json")],
    ["score", "web-of-power", str(REPO / "schemas/examples/web-of-power.score/sites.json")],
    ["score", "web-of-power", str(REPO / "schemas/examples/web-of-power.score/rulebook-franken-lothringen.json")],
    ["score", "conquest-italy", str(REPO / "schemas/examples/conquest-italy.score/end-of-match-4-players.json")],
    ["odds", "125", "125"],
])
def test_cli_start_loads_nothing_heavy(argv):
    p = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60,
                       cwd=str(REPO))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["code"] == 0
    assert out["modules"] == [], f"a CLI start imported {out['modules']}"


# stdlib modules a CLI start does without (about a quarter of its imports' time): argparse asks shutil for the
# terminal's width (shutil brings bz2, lzma, zlib and fnmatch), pathlib brings urllib.parse and ipaddress
LIGHT = ("shutil", "pathlib", "datetime", "bz2", "lzma", "fnmatch", "urllib", "ipaddress")
BARE = """
import io, json, sys
sys.path.insert(0, %r)
from contextlib import redirect_stdout
from companion.cli import main
with redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(m for m in sys.modules if m.split(".")[0] in %r)}))
""" % (str(REPO), LIGHT)


@pytest.mark.parametrize("argv", [
    ["score", "richelieu", str(REPO / "schemas/examples/richelieu.score/rule-book-bonus-example.json")],
    ["score", "web-of-power", str(REPO / "schemas/examples/web-of-power.score/rulebook-franken-lothringen.json")],
    ["score", "conquest-italy", str(REPO / "schemas/examples/conquest-italy.score/end-of-match-4-players.json")],
    ["odds", "125", "125"],
])
def test_cli_start_needs_no_shutil_pathlib_or_datetime(argv):
    # -S: without site (the development venv's editable finder imports pathlib itself; a wheel install does not)
    p = subprocess.run([sys.executable, "-S", "-c", BARE, *argv], capture_output=True, text=True, timeout=60,
                       cwd=str(REPO))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["code"] == 0
    assert out["modules"] == [], f"a CLI start imported {out['modules']}"


def test_help_is_as_wide_as_the_terminal_says():
    # the width argparse would take from shutil.get_terminal_size(): $COLUMNS here
    import os

    env = {**os.environ, "COLUMNS": "60"}
    p = subprocess.run([sys.executable, "-m", "companion", "score", "--help"], capture_output=True, text=True,
                       timeout=60, cwd=str(REPO), env=env)
    assert p.returncode == 0, p.stderr
    assert max(len(line) for line in p.stdout.splitlines()) <= 58
    env["COLUMNS"] = "200"
    wide = subprocess.run([sys.executable, "-m", "companion", "score", "--help"], capture_output=True, text=True,
                          timeout=60, cwd=str(REPO), env=env).stdout
    assert max(len(line) for line in wide.splitlines()) > 58


def test_date_time_format_is_still_checked():
    """Dropping the format-nongpl extra must keep date-time checking (companion/base/schemas.py checks it)."""
    from companion.base.errors import InputError
    from companion.base.schemas import validate

    with pytest.raises(InputError) as exc:
        validate("match-export", {"id": "x", "game": "richelieu", "players": ["A", "B"],
                                  "created_at": "yesterday", "events": []})
    assert exc.value.field == "$.created_at"


SERVE_PROBE = """
import json, sys
from companion.cli import build_parser
from companion.web.app import create_app
build_parser("serve").parse_args(["serve", "--no-qr"])
app = create_app({"DATA_DIR": sys.argv[1], "GPIO": "off"})
print(json.dumps(sorted(m for m in sys.modules if m.startswith("companion."))))
"""

# imported on first use, not by `companion serve` before its first request (companion/base/lazy.py): the games'
# rules, the season's and the tournament's maths, the board checker, replication, the other CLI commands
NOT_AT_SERVE_START = ("companion.games.", "companion.core.season", "companion.core.tournament",
                      "companion.core.league", "companion.services.seasons", "companion.services.tournaments",
                      "companion.services.league_boxes", "companion.services.replication", "companion.cli.")


def test_serve_start_imports_only_what_it_serves_with(tmp_path):
    p = subprocess.run([sys.executable, "-c", SERVE_PROBE, str(tmp_path)], capture_output=True, text=True, timeout=60,
                       cwd=str(REPO))
    assert p.returncode == 0, p.stderr
    modules = json.loads(p.stdout.strip().splitlines()[-1])
    assert "companion.web.trackers.conquest" in modules and "companion.cli.serve" in modules
    early = [m for m in modules if m.startswith(NOT_AT_SERVE_START)
             and m not in ("companion.cli.serve", "companion.cli.parsing", "companion.cli.usage")]
    assert early == [], f"companion serve imported at start {early}"
    # the smart dice are off: their radio (companion/dice.py) is made at the first question asked of it
    assert "companion.dice" not in modules and "companion.services.dice" in modules


def test_with_the_unit_s_malloc_arena_max_no_ctypes_is_imported():
    """The systemd unit sets MALLOC_ARENA_MAX=2; `companion serve` then leaves malloc alone without
    importing ctypes (a fifth of a second of a Pi's start); without it, it caps the arenas itself."""
    import os

    code = ("import sys; from companion.cli.serve import limit_malloc_arenas; "
            "print(limit_malloc_arenas(), 'ctypes' in sys.modules)")
    env = dict(os.environ, MALLOC_ARENA_MAX="2")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert p.stdout.split() == ["False", "False"], p.stderr
    env.pop("MALLOC_ARENA_MAX")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert p.stdout.split() == (["True", "True"] if sys.platform.startswith("linux") else ["False", "False"])
    unit = (REPO / "systemd" / "companion.service").read_text()
    assert "Environment=MALLOC_ARENA_MAX=2" in unit
