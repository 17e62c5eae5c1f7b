"""The one list of the Debian packages (systemd/debian-packages.txt): its form, that every command the suite skips
without is in it, that no install command names packages elsewhere, and tests/need-debian-packages.sh (what
`make test` and the check targets install first) run with stand-in dpkg-query, apt-get, apt-cache, sudo and id
on PATH: nothing is really installed."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.debian_packages import LIST, entries, package_of, packages
from tests.skips import lines

REPO = Path(__file__).resolve().parent.parent
NEED = REPO / "tests" / "need-debian-packages.sh"
GROUPS = {"box", "kiosk", "test", "systemd-check", "arm-check", "image", "image-build", "pi-check", "pi-check-hw", "nspawn-root",
          "arm-root"}


# -- the list ------------------------------------------------------------------------------------------------

def test_the_list_has_its_groups_and_no_package_twice_in_one():
    es = entries()
    assert {e.group for e in es} <= GROUPS
    assert {"box", "kiosk", "test", "systemd-check", "arm-check"} <= {e.group for e in es}
    pairs = [(e.group, e.package) for e in es]
    assert len(pairs) == len(set(pairs))
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9+.-]+", e.package) for e in es)
    # the test group: what the browser tier, the announcer's render and the units' check need
    assert {"chromium", "espeak-ng", "systemd", "fonts-dejavu-core", "python3-venv"} <= set(packages("test"))
    assert {"python3-venv", "python3-pip"} <= set(packages("box"))


def test_a_line_of_another_form_is_refused_naming_its_line(tmp_path):
    bad = tmp_path / "list.txt"
    bad.write_text("# a comment\nbox python3-venv - always\nbox python3-pip always\n")
    with pytest.raises(ValueError, match=r"list.txt:3: want GROUP PACKAGE COMMANDS WHEN"):
        entries(bad)


def _suite_files(but=()):
    return sorted(p for d in ("tests", "image") for p in (REPO / d).rglob("*.py")
                  if "__pycache__" not in p.parts and p.name not in but)


# the calls that look for a command, with the argument that names it
LOOKUPS = {"which", "missing", "install_hint", "package_of"}
# a lookup whose argument is not written out: what it can be
NAMED_ELSEWHERE = {("conftest.py", "CHROMIUM"): ["chromium", "chromium-headless-shell"],
                   ("debian_packages.py", "command"): [],
                   # the image's build and check look up the commands of the list's own groups
                   ("build.py", "tool"): [], ("pi_check.py", "tool"): []}


def _looked_up(files=None) -> tuple[dict[str, list[str]], list[str]]:
    """The commands the suite looks for, each with where; and the lookups whose argument is unknown."""
    found: dict[str, list[str]] = {}
    unknown = []
    for path in files or _suite_files(but=("test_debian_packages.py",)):  # (not this file's own lookups)
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
            where = f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}:{node.lineno}"
            if name == "skip" and node.args and isinstance(node.args[0], ast.Constant) and isinstance(
                    node.args[0].value, str) and (bare := re.fullmatch(r"no ([a-z0-9][a-z0-9._+-]*)", node.args[0].value)):
                found.setdefault(bare.group(1), []).append(where)  # a hand-written pytest.skip("no sfdisk")
                continue
            if name not in LOOKUPS or (name == "which" and not (isinstance(f, ast.Attribute)
                                                                and getattr(f.value, "id", "") == "shutil")):
                continue
            for arg in node.args[: None if name == "missing" else 1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.setdefault(arg.value, []).append(where)
                elif isinstance(arg, ast.Name) and (path.name, arg.id) in NAMED_ELSEWHERE:
                    for command in NAMED_ELSEWHERE[(path.name, arg.id)]:
                        found.setdefault(command, []).append(where)
                else:
                    unknown.append(f"{where}: {ast.unparse(arg)}")
    return found, unknown


# looked up but not a package to install: apt-get itself (a machine without it is not Debian's: the image build
# then installs nothing and says which tool is missing)
NOT_LISTED = {"apt-get"}


def test_every_command_the_suite_skips_without_is_in_the_list():
    found, unknown = _looked_up()
    assert not unknown, f"a lookup of a command the list cannot check (write the command out): {unknown}"
    assert {"chromium", "espeak-ng", "systemd-analyze", "systemd-nspawn", "mmdebstrap", "setpriv"} <= set(found)
    missing = {c: w for c, w in found.items() if package_of(c) is None and c not in NOT_LISTED}
    assert not missing, f"commands the suite looks for that systemd/debian-packages.txt does not name: {missing}"


def test_the_lookup_scan_sees_a_command_outside_the_list(tmp_path):
    """The scan above finds a new skip-if-missing tool (so the test above fails for one not in the list)."""
    probe = tmp_path / "probe.py"
    probe.write_text('import shutil\nfrom tests.debian_packages import missing\nHERE = shutil.which("frob-tool")\n'
                     'WHY = missing("ip", "frob-daemon")\nTHERE = shutil.which(HERE)\n'
                     'import pytest\npytest.skip("no frob-cli")\npytest.skip("no package index reachable")\n')
    found, unknown = _looked_up([probe])
    assert set(found) == {"frob-tool", "ip", "frob-daemon", "frob-cli"} and package_of("frob-tool") is None
    assert unknown == [f"{probe}:5: HERE"]


# the installer's own tests, which give stand-in apt commands the packages they expect it to install
INSTALLER_TESTS = {"tests/test_systemd.py", "tests/test_debian_packages.py"}
# the command the box's own log names to its owner (the installed box has no checkout, so no list): the package
# must be the list's, in that group
HINTS = {("companion/announcer.py", "apt-get install espeak-ng"): "box"}
INSTALL_COMMAND = re.compile(r"\b(?:apt-get\s+|apt )install\s+(?:-\S+\s+)*([a-z0-9][a-z0-9+.-]+)"
                             r"|--include=([a-z0-9][a-z0-9+.,-]*)")


def test_no_install_command_names_its_packages_outside_the_list():
    files = [REPO / ".ci" / "run", REPO / "Makefile", *sorted((REPO / "systemd").glob("*.sh")),
             *sorted((REPO / "tests").glob("*.sh")), *sorted((REPO / "companion").rglob("*.py")),
             *sorted((REPO / "bench").rglob("*.py")), *_suite_files()]
    hits = []
    for path in files:
        rel = str(path.relative_to(REPO))
        if rel in INSTALLER_TESTS:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for m in INSTALL_COMMAND.finditer(line):
                if (rel, m.group(0)) in HINTS:
                    assert m.group(1) in packages(HINTS[(rel, m.group(0))])
                    continue
                hits.append(f"{rel}:{n}: {m.group(0)}")
    assert not hits, f"packages named outside systemd/debian-packages.txt (read them from it): {hits}"


def test_the_install_commands_of_the_manuals_name_only_packages_of_the_list():
    """A manual may show the owner a command to type (docs/pi.md's `apt-get install -y git`): what it installs is
    still one of the list's packages, so a package renamed in the list cannot live on in the prose."""
    known = {e.package for e in entries()}
    hits = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            for m in re.finditer(r"\bapt-get\s+install((?:\s+-\S+)*)((?:\s+[a-z0-9][a-z0-9+.-]+)+)", line):
                hits += [f"{path.name}:{n}: {pkg}" for pkg in m.group(2).split() if pkg not in known]
    assert not hits, f"packages a manual installs that systemd/debian-packages.txt does not name: {hits}"


def test_ci_installs_nothing_itself_and_the_bundle_carries_the_list():
    from companion.cli.bundle import INSTALLER_FILES

    ci = (REPO / ".ci" / "run").read_text()
    assert "apt-get" not in ci and "make test" in ci
    assert LIST.name in INSTALLER_FILES  # install.sh reads it beside itself, on the Pi too


# -- what the run did not run ----------------------------------------------------------------------------------

def test_the_skips_are_grouped_by_reason_and_tier():
    chromium = "Debian's chromium is not installed (apt-get install chromium; make test installs it)"
    skips = ([(f"tests/browser/test_{i}.py::t", chromium) for i in range(3)]
             + [("tests/evening/test_rome.py::t", chromium), ("tests/test_systemd.py::a", "running as root"),
                ("tests/stress/test_crash.py::x", "long run"), ("tests/test_arm_chroot.py::y", "long run")])
    assert lines(skips) == ["browser tier: 4 skipped, " + chromium,
                            "2 skipped (stress tier 1, tests/test_arm_chroot.py 1), long run",
                            "tests/test_systemd.py: 1 skipped, running as root"]


def _make_env(base=None, **extra):
    """The environment for a make of its own (not the variables of the `make test` this suite may run under)."""
    env = {**(base or os.environ), **extra}
    return {k: v for k, v in env.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "COMPANION_PYTHON_ONLY")}


def test_make_test_python_skips_the_browser_tier_and_says_so_in_its_last_lines():
    venv = Path(sys.executable).parent.parent
    p = subprocess.run(["make", "-s", "-C", str(REPO), "-o", f"{venv}/.installed-dev", "test-python", f"VENV={venv}",
                        "JOBS=1", "PYTEST_ARGS=tests/browser/test_result_only.py tests/test_rulings.py"],
                       capture_output=True, text=True, timeout=300, env=_make_env())
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr
    tail = p.stdout.strip().splitlines()[-4:]
    assert any(re.fullmatch(r"browser tier: \d+ skipped, not run by make test-python: it needs Debian's chromium "
                            r"\(make test runs it\)", ln) for ln in tail), tail
    assert re.search(r"\d+ passed, \d+ skipped", tail[-1]), tail


# -- tests/need-debian-packages.sh with stand-ins ------------------------------------------------------------

@pytest.fixture
def apt(tmp_path):
    """Stand-in dpkg-query, apt-get, apt-cache, sudo and id on PATH; ``apt.installed`` (a file) is what dpkg
    knows installed, ``apt.available`` what apt has a candidate for, ``apt.calls()`` the apt-get runs."""
    shims = tmp_path / "bin"
    shims.mkdir()
    installed, available, calls = tmp_path / "installed", tmp_path / "available", tmp_path / "calls"
    installed.write_text("\n".join(packages("test")) + "\n")
    available.write_text("\n".join(packages("test", "systemd-check")) + "\n")
    fail_first = tmp_path / "fail-until-update"
    (shims / "dpkg-query").write_text(
        "#!/bin/sh\nshift 2\nrc=0\n"
        f'for p; do if grep -qx "$p" "{installed}"; then echo "$p ii "; else echo "dpkg-query: no packages found '
        f'matching $p" >&2; rc=1; fi; done\nexit $rc\n')
    (shims / "apt-cache").write_text(
        f'#!/bin/sh\nif grep -qx "$2" "{available}"; then echo "  Candidate: 1.0"; else echo "  Candidate: (none)"; fi\n')
    (shims / "apt-get").write_text(
        f'#!/bin/sh\necho "$(id -u) apt-get $*" >> "{calls}"\necho "Reading package lists... (apt chatter)"\n'
        f'case "$1" in\n  update) rm -f "{fail_first}" ;;\n'
        f'  install) [ -e "{fail_first}" ] && {{ echo "E: Failed to fetch (404)"; exit 100; }}\n'
        f'    for a; do case "$a" in -*|install) ;; *) echo "$a" >> "{installed}" ;; esac; done ;;\nesac\n')
    # sudo -n: works when sudo-ok exists, else asks a password (and -n refuses); runs as root (id -u: 0)
    (shims / "sudo").write_text(
        f'#!/bin/sh\n[ "$1" = -n ] && shift\n[ -e "{tmp_path}/sudo-ok" ] || '
        '{ echo "sudo: a password is required" >&2; exit 1; }\n'
        f'FAKE_UID=0 exec "$@"\n')
    (shims / "id").write_text('#!/bin/sh\n[ "$1" = -u ] && { echo "${FAKE_UID:-1000}"; exit 0; }\nexec /usr/bin/id "$@"\n')
    for f in shims.iterdir():
        f.chmod(0o755)

    class Apt:
        pass

    a = Apt()
    a.installed, a.available, a.log = installed, available, tmp_path / "apt.log"
    a.env = dict(os.environ, PATH=f"{shims}:{os.environ['PATH']}")
    a.calls = lambda: calls.read_text().splitlines() if calls.exists() else []
    a.sudo_ok = lambda: (tmp_path / "sudo-ok").write_text("")
    a.stale_lists = lambda: fail_first.write_text("")

    def remove(*pkgs):
        installed.write_text("".join(f"{p}\n" for p in installed.read_text().split() if p not in pkgs))

    a.remove = remove

    def run(*groups, uid=0, extra=()):
        return subprocess.run([str(NEED), "--for", "make test", "--or", "make test-python", "--log", str(a.log),
                               *extra, *groups], capture_output=True, text=True, timeout=60,
                              env={**a.env, "FAKE_UID": str(uid)})

    a.run = run
    return a


def test_nothing_missing_costs_one_dpkg_query_and_says_nothing(apt):
    p = apt.run("test", uid=1000)
    assert p.returncode == 0 and p.stdout == p.stderr == ""
    assert apt.calls() == []  # no apt-get at all: no update


def test_as_root_the_missing_ones_are_installed_in_one_line_apt_chatter_to_the_log(apt):
    apt.remove("chromium", "fonts-dejavu-core")
    p = apt.run("test")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [f"make test: installing Debian packages chromium fonts-dejavu-core "
                                     f"(apt-get; its output: {apt.log})"]
    assert apt.calls() == ["0 apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core"]
    assert "apt chatter" in apt.log.read_text() and "apt chatter" not in p.stdout + p.stderr
    assert apt.run("test").stdout == ""  # installed now: the next run says nothing


def test_stale_lists_are_refreshed_once_when_the_install_fails(apt):
    apt.remove("espeak-ng")
    apt.stale_lists()
    p = apt.run("test")
    assert p.returncode == 0, p.stderr
    assert [c.split(" ", 2)[2].split()[0] for c in apt.calls()] == ["install", "update", "install"]
    assert p.stdout.splitlines()[1] == "make test: apt's lists were stale: refreshed (apt-get update); installing espeak-ng"


def test_without_root_it_goes_through_sudo_n_where_sudo_asks_no_password(apt):
    apt.remove("chromium")
    apt.sudo_ok()
    p = apt.run("test", uid=1000)
    assert p.returncode == 0, p.stderr
    assert "(sudo -n apt-get; its output:" in p.stdout
    assert apt.calls() == ["0 apt-get install -y -q --no-install-recommends chromium"]


def test_where_it_cannot_install_it_stops_naming_the_command_and_make_test_python(apt):
    apt.remove("chromium", "espeak-ng")
    p = apt.run("test", uid=1000)
    assert p.returncode == 1 and p.stdout == ""
    err = p.stderr.splitlines()
    assert "chromium espeak-ng (not root, and sudo asks for a password)" in err[0]
    assert "    sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium espeak-ng" in err
    assert err[-1] == "make test: or run make test-python"
    assert apt.calls() == []


def test_a_check_target_goes_on_where_it_cannot_install(apt):
    apt.installed.write_text("")
    p = apt.run("systemd-check", uid=1000, extra=("--go-on",))
    assert p.returncode == 0 and p.stderr == ""
    assert p.stdout.startswith("make test: not installing systemd-container mmdebstrap util-linux")


def test_an_if_available_package_is_asked_for_only_where_apt_has_it(apt):
    apt.available.write_text("chromium\n")
    apt.remove("chromium-headless-shell")
    p = apt.run("test")
    assert p.returncode == 0 and p.stdout == "" and apt.calls() == []  # alone, it costs nothing
    apt.remove("chromium")
    p = apt.run("test")
    assert apt.calls() == ["0 apt-get install -y -q --no-install-recommends chromium"]
    assert p.stdout.splitlines()[-1] == ("make test: no chromium-headless-shell in this system's apt sources: "
                                         "going on without it")


def test_an_if_available_package_alone_never_stops_the_run(apt):
    apt.remove("chromium-headless-shell")
    p = apt.run("test", uid=1000)
    assert p.returncode == 0 and p.stderr == "" and apt.calls() == []
    assert p.stdout.startswith("make test: not installing chromium-headless-shell (not root, and sudo asks for a "
                               "password): going on without them (install them: sudo apt-get update && ")


def test_an_unknown_group_is_refused():
    p = subprocess.run([str(NEED), "tset"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "no group tset in systemd/debian-packages.txt" in p.stderr


def test_make_test_stops_before_any_test_and_before_the_venv(apt, tmp_path):
    """As a user who is not root and has no password-less sudo, on a machine lacking chromium."""
    apt.remove("chromium")
    venv = tmp_path / "venv"
    p = subprocess.run(["make", "-C", str(REPO), "test", f"VENV={venv}"], capture_output=True, text=True,
                       timeout=120, env=_make_env(apt.env, FAKE_UID="1000"))
    assert p.returncode != 0
    assert "sudo apt-get update && sudo apt-get install -y --no-install-recommends chromium" in p.stderr
    assert "make test: or run make test-python (the tiers that need nothing outside Python)" in p.stderr
    assert not venv.exists() and "pytest" not in p.stdout and "passed" not in p.stdout
