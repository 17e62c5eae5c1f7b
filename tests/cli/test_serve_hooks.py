"""The test hooks of ``companion serve`` (``companion/cli/serve.py`` ``test_hooks``): a seeded random source
and a clock moved forward through a file, for the tests of the real server (tests/evening/). Unset, the
server has neither."""

import random

import pytest

from companion.cli.serve import test_hooks as hooks
from companion.base.errors import InputError
from companion.base.timeutil import SkewedMonotonic


def test_no_hooks_without_the_environment():
    assert hooks({}) == {}


def test_a_seed_gives_the_same_draws_every_time():
    a, b = hooks({"COMPANION_TEST_SEED": "7"})["RNG"], random.Random(7)
    assert [a.randint(1, 6) for _ in range(20)] == [b.randint(1, 6) for _ in range(20)]
    with pytest.raises(InputError) as e:
        hooks({"COMPANION_TEST_SEED": "seven"})
    assert e.value.field == "COMPANION_TEST_SEED"


def test_the_clock_file_moves_the_clock_forward_and_never_back(tmp_path):
    path = tmp_path / "skew"
    ticks = iter(range(100, 200))
    mono = SkewedMonotonic(str(path), monotonic=lambda: next(ticks))
    assert mono() == 100  # no file yet: no skew
    path.write_text("90")
    assert mono() == 101 + 90
    path.write_text("30")  # a smaller skew would go back: kept at 90
    assert mono() == 102 + 90
    path.write_text("garbage")
    assert mono() == 103 + 90
    clock = hooks({"COMPANION_TEST_CLOCK_FILE": str(path)})["CLOCK"]
    before = clock.now()
    path.write_text("3600")
    assert (clock.now() - before).total_seconds() >= 3600 - 90
