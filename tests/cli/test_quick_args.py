"""The commands that read their common arguments without argparse (``companion.cli.QUICK``) read them as
argparse does: whatever ``quick`` accepts, the parser reads to the same arguments; what it leaves, the parser
reads (or refuses) as before. And such a start imports no argparse."""

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings, strategies as st

from companion.cli import QUICK, UsageError, build_parser, quick_args
from companion.games import GAMES

REPO = Path(__file__).resolve().parents[2]
WORDS = [*QUICK, *GAMES, "rome", "-", "--", "-h", "--help", "--table", "--stop-at", "--stop-at=2", "--target", "0.5",
         "1", "3", "007", "125", "126", "0", "-5", "+5", " 5", "1_0", "٣", "²", "1.5", "x", "", "file.json",
         "-file.json", "a b", "--data-dir", "serve"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5))
def test_what_quick_reads_argparse_reads_the_same(argv):
    args = quick_args(argv)
    if args is None:
        return
    parsed = build_parser(argv[0]).parse_args(argv)  # never a UsageError for what quick takes
    assert vars(args) == vars(parsed)


SERVE_WORDS = ["--host", "--port", "--data-dir", "--gpio", "--dice", "--allow-host", "--threads",
               "--max-streams-per-address", "--max-connections-per-address", "--max-connections",
               "--header-timeout", "--no-qr", "--help", "--po", "--port=8080", "--hos", "--", "0.0.0.0", "127.0.0.1",
               "", "8080", "0", "08", "-1", "1.5", "10.", ".5", "1e3", "inf", " 5", "٣", "auto", "mock", "off",
               "radio", "data", "-", "x y", "box.local"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(SERVE_WORDS), max_size=8), st.sampled_from([None, "mock", "bogus"]))
def test_what_quick_reads_of_serve_argparse_reads_the_same(words, dice_env):
    import os

    old = os.environ.pop("COMPANION_DICE", None)
    try:
        if dice_env is not None:
            os.environ["COMPANION_DICE"] = dice_env  # the default of --dice, read when the parser is built
        argv = ["serve", *words]
        args = quick_args(argv)
        if args is None:
            return
        assert vars(args) == vars(build_parser("serve").parse_args(argv))
    finally:
        os.environ.pop("COMPANION_DICE", None)
        if old is not None:
            os.environ["COMPANION_DICE"] = old


def test_the_unit_s_serve_is_read_quickly():
    for argv in (["serve", "--host", "0.0.0.0", "--port", "8080", "--gpio", "auto"],
                 ["serve", "--host", "127.0.0.1", "--port", "0", "--gpio", "off", "--no-qr", "--data-dir", "/x",
                  "--allow-host", "a", "--allow-host", "b", "--header-timeout", "2.5", "--threads", "8"], ["serve"]):
        assert quick_args(argv) is not None
        assert vars(quick_args(argv)) == vars(build_parser("serve").parse_args(argv))


def test_the_plain_forms_are_read_quickly():
    assert vars(quick_args(["odds", "125", "125"])) == vars(build_parser("odds").parse_args(["odds", "125", "125"]))
    for game in GAMES:
        for file in ("doc.json", "-"):
            argv = ["score", game, file]
            assert vars(quick_args(argv)) == vars(build_parser("score").parse_args(argv))


def test_anything_else_goes_to_argparse():
    for argv in (["score", "chess", "x.json"], ["score", "richelieu"], ["score", "richelieu", "--help"],
                 ["odds", "-5", "3"], ["odds", "3", "3", "--table"], ["odds", "٣", "3"], ["match", "list"], []):
        assert quick_args(argv) is None
    try:
        build_parser("odds").parse_args(["odds", "٣", "3"])
    except UsageError:
        pass  # argparse's int() reads some non-ASCII digits; quick leaves them all to it


def test_a_quick_start_imports_no_argparse():
    code = ("import io, json, sys; from contextlib import redirect_stdout; from companion.cli import main\n"
            "with redirect_stdout(io.StringIO()): code = main(sys.argv[1:])\n"
            "print(json.dumps([code, sorted(m for m in ('argparse', 'gettext') if m in sys.modules)]))")
    for argv in (["odds", "12", "7"],
                 ["score", "richelieu", str(REPO / "schemas/examples/richelieu.score/rule-book-bonus-example.json")]):
        p = subprocess.run([sys.executable, "-S", "-c", code, *argv], capture_output=True, text=True, timeout=60,
                           cwd=str(REPO))
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout.strip().splitlines()[-1]) == [0, []]
